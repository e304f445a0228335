/* Packed function objects. */
#include "internal/object.h"

_Static_assert(offsetof(struct kc_func, fn) == offsetof(kc_func_prefix, fn),
               "kc_func starts with kc_func_prefix");
_Static_assert(offsetof(struct kc_func, self) ==
                   offsetof(kc_func_prefix, self),
               "kc_func starts with kc_func_prefix");

static void kc__func_delete(kc_object* obj) {
  kc_func* f = (kc_func*)(void*)obj;
  if (f->self_deleter) f->self_deleter(f->self);
  kc__owned_detach(&f->owned); /* after the plugin's code has run */
  kc_allocator_free(f->alloc, f, sizeof *f, 0);
}

kc_status* kc_func_create(const kc_allocator* alloc, kc_packed_fn fn,
                          void* self, kc_deleter_fn self_deleter,
                          kc_func** out_func) {
  kc_status* st = NULL;
  if (!fn || !out_func) {
    st = kc_status_create(KC_INVALID_ARGUMENT, "kc_func_create: %s is NULL",
                          fn ? "out_func" : "fn");
  } else {
    *out_func = NULL;
    if (!alloc) alloc = kc_allocator_system();
    kc_func* f = kc_allocator_alloc(alloc, sizeof *f, 0);
    if (!f) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory creating a function");
    } else {
      kc__object_init(&f->header, KC_TYPE_FUNC, kc__func_delete);
      f->fn = fn;
      f->self = self;
      f->self_deleter = self_deleter;
      f->alloc = alloc;
      f->writes = KC_FUNC_WRITES_ALL;
      const uintptr_t code[] = {KC__CODE(fn), KC__CODE(self_deleter)};
      kc__owned_attach(&f->owned, &f->header, code, 2);
      *out_func = f;
    }
  }
  /* `self` is ours from the call on: free it when we cannot keep it. */
  if (st && self_deleter) self_deleter(self);
  return st;
}

void kc_func_set_writes(kc_func* func, uint64_t arg_mask) {
  if (func) __atomic_store_n(&func->writes, arg_mask, __ATOMIC_RELAXED);
}

uint64_t kc_func_get_writes(const kc_func* func) {
  return func ? __atomic_load_n(&func->writes, __ATOMIC_RELAXED)
              : KC_FUNC_WRITES_ALL;
}

/* A refused call: out of line and cold, so that the accepted path of
 * kc_func_call_noinline needs no stack frame and ends in a jump. */
__attribute__((noinline, cold)) static kc_status* kc__call_refused(
    const kc_func* func, int32_t nargs, kc_any* out_ret) {
  if (out_ret) *out_ret = kc_any_none();
  return kc_status_create(KC_INVALID_ARGUMENT, "kc_func_call: %s",
                          !func      ? "func is NULL"
                          : !out_ret ? "out_ret is NULL"
                          : nargs < 0 ? "nargs is negative"
                                      : "args is NULL with nargs > 0");
}

_Static_assert(KC_TYPE_NONE == 0, "an all-zero kc_any is none");

/* Unlike the inline kc_func_call, this does not release *out_ret when the
 * callee fails: the convention (kc_packed_fn in abi.h) has the callee leave
 * it none, and trusting it makes the call a tail call, which costs what
 * tvm-ffi's TVMFFIFunctionCall costs (bench/python/bench_ffi_call.c).
 * func.h states the difference. The accepted path (four test-and-branch
 * pairs, one 16-byte store, two loads, the jump) fits in one 64-byte block,
 * and the alignment keeps it there: across a block boundary it measured a
 * cycle slower. One `if` and one return per check is what keeps gcc from
 * merging the checks into longer set-and-or sequences. */
__attribute__((aligned(64))) kc_status* kc_func_call_noinline(
    const kc_func* func, const kc_any* args, int32_t nargs, kc_any* out_ret) {
  if (KC__UNLIKELY(!func)) return kc__call_refused(func, nargs, out_ret);
  if (KC__UNLIKELY(!out_ret)) return kc__call_refused(func, nargs, out_ret);
  if (KC__UNLIKELY(nargs < 0)) return kc__call_refused(func, nargs, out_ret);
  if (KC__UNLIKELY(!args && nargs != 0)) {
    return kc__call_refused(func, nargs, out_ret);
  }
  const kc_func_prefix* f = (const kc_func_prefix*)(const void*)func;
  memset(out_ret, 0, sizeof *out_ret); /* none: one store, not two */
  return f->fn(f->self, args, nargs, out_ret);
}
