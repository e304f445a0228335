/*
 * Native packed functions for kcall's tests and benchmarks, registered
 * under "kcall.testing." when kcall.testing is imported. They are written
 * as any plugin's functions are, against the packed convention only.
 */
#include "kcpy.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static kc_status* t_nop(void* self, const kc_any* args, int32_t nargs,
                        kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  (void)ret;
  return NULL;
}

/* echo(x) -> x; a borrowed string comes back as an owned one. */
static kc_status* t_echo(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  (void)self;
  KC_RETURN_IF_ERROR(kc_args_check_count("echo", nargs, 1, 1), "testing");
  kc_string_view s;
  if (args[0].type_index == KC_TYPE_RAW_STR && kc_any_get_string(&args[0], &s)) {
    return kc_any_from_string(NULL, s, ret);
  }
  if (args[0].type_index == KC_TYPE_DLTENSOR_PTR) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "echo: argument 0 is a borrowed tensor, which "
                            "cannot be returned");
  }
  *ret = args[0];
  kc_any_retain(ret);
  return NULL;
}

/* apply(f, *args) -> f(*args). */
static kc_status* t_apply(void* self, const kc_any* args, int32_t nargs,
                          kc_any* ret) {
  (void)self;
  kc_func* f;
  kc_status* st = kc_args_check_count("apply", nargs, 1, -1);
  if (!st) st = kc_args_get_func("apply", args, nargs, 0, &f);
  if (st) return st;
  return kc_func_call(f, args + 1, nargs - 1, ret);
}

/* catch(f, *args) -> None when f(*args) succeeds, else [code name, the
 * status as kc_status_format prints it]: what a C caller sees. */
static kc_status* t_catch(void* self, const kc_any* args, int32_t nargs,
                          kc_any* ret) {
  (void)self;
  kc_func* f;
  kc_status* st = kc_args_check_count("catch", nargs, 1, -1);
  if (!st) st = kc_args_get_func("catch", args, nargs, 0, &f);
  if (st) return st;
  kc_any r;
  kc_status* failure = kc_func_call(f, args + 1, nargs - 1, &r);
  kc_any_release(&r);
  if (!failure) return NULL;
  size_t need = kc_status_format(failure, NULL, 0);
  char* text = malloc(need + 1);
  if (!text) {
    kc_status_destroy(failure);
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "catch: out of memory");
  }
  kc_status_format(failure, text, need + 1);
  kc_any items[2] = {kc_any_none(), kc_any_none()};
  st = kc_any_from_string(
      NULL, kc_sv(kc_status_code_name(kc_status_get_code(failure))), &items[0]);
  if (!st) st = kc_any_from_string(NULL, kc_sv(text), &items[1]);
  free(text);
  kc_status_destroy(failure);
  kc_array* a = NULL;
  if (!st) st = kc_array_create(NULL, items, 2, &a);
  kc_any_release(&items[0]);
  kc_any_release(&items[1]);
  if (st) return st;
  *ret = kc_any_object(KC_OBJECT(a));
  return NULL;
}

/* types(*args) -> the type name of each argument. */
static kc_status* t_types(void* self, const kc_any* args, int32_t nargs,
                          kc_any* ret) {
  (void)self;
  kc_any names[64] = {{0}};
  if (nargs > 64) {
    return kc_status_create(KC_INVALID_ARGUMENT, "types: at most 64 arguments");
  }
  kc_status* st = NULL;
  int32_t made = 0;
  for (; !st && made < nargs; ++made) {
    int32_t t = args[made].type_index;
    const char* n = t == KC_TYPE_DLTENSOR_PTR ? "dltensor"
                    : t == KC_TYPE_RAW_STR    ? "raw_str"
                    : t == KC_TYPE_SMALL_STR  ? "small_str"
                                              : kc_type_name(t);
    st = kc_any_from_string(NULL, kc_sv(n), &names[made]);
  }
  if (st) made--;
  kc_array* a = NULL;
  if (!st) st = kc_array_create(NULL, names, (size_t)nargs, &a);
  for (int32_t i = 0; i < made; ++i) kc_any_release(&names[i]);
  if (st) return st;
  *ret = kc_any_object(KC_OBJECT(a));
  return NULL;
}

/* fail(code, message) -> the status. */
static kc_status* t_fail(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  (void)self;
  (void)ret;
  int64_t code;
  kc_string_view msg;
  kc_status* st = kc_args_check_count("fail", nargs, 2, 2);
  if (!st) st = kc_args_get_int("fail", args, nargs, 0, &code);
  if (!st) st = kc_args_get_string("fail", args, nargs, 1, &msg);
  if (st) return st;
  st = kc_status_create((kc_status_code)code, "%.*s", (int)msg.size, msg.data);
  return st ? st : kc_status_create(KC_INVALID_ARGUMENT, "fail: code 0");
}

/* ---- tensors ------------------------------------------------------------------ */

/* Element `i` (row-major order) of a strided tensor, as a double. */
static double element(const DLTensor* t, int64_t i, int64_t* offset_out) {
  int64_t offset = 0, rest = i, running = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    int64_t idx = rest % t->shape[d];
    rest /= t->shape[d];
    offset += idx * (t->strides ? t->strides[d] : running);
    running *= t->shape[d];
  }
  *offset_out = offset;
  const char* base = (const char*)t->data + t->byte_offset;
  switch (t->dtype.code * 1000 + t->dtype.bits) {
    case kDLFloat * 1000 + 32: return ((const float*)(const void*)base)[offset];
    case kDLFloat * 1000 + 64: return ((const double*)(const void*)base)[offset];
    case kDLInt * 1000 + 32: return ((const int32_t*)(const void*)base)[offset];
    case kDLInt * 1000 + 64:
      return (double)((const int64_t*)(const void*)base)[offset];
    default: return 0.0;
  }
}

static kc_status* check_numeric(const DLTensor* t, const char* fn) {
  int ok = t->dtype.lanes == 1 &&
           ((t->dtype.code == kDLFloat && (t->dtype.bits == 32 || t->dtype.bits == 64)) ||
            (t->dtype.code == kDLInt && (t->dtype.bits == 32 || t->dtype.bits == 64)));
  if (ok && t->device.device_type == kDLCPU) return NULL;
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "%s: expected a CPU tensor of f32, f64, i32 or i64",
                          fn);
}

/* sum(t) -> the sum of its elements, strides honoured. */
static kc_status* t_sum(void* self, const kc_any* args, int32_t nargs,
                        kc_any* ret) {
  (void)self;
  DLTensor* t;
  kc_status* st = kc_args_check_count("sum", nargs, 1, 1);
  if (!st) st = kc_args_get_dltensor("sum", args, nargs, 0, &t);
  if (!st) st = check_numeric(t, "sum");
  if (st) return st;
  double total = 0;
  int64_t n = kc_dltensor_get_numel(t), offset;
  for (int64_t i = 0; i < n; ++i) total += element(t, i, &offset);
  *ret = kc_any_float(total);
  return NULL;
}

/* fill(t, value): writes value into every element, strides honoured. */
static kc_status* t_fill(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  (void)self;
  (void)ret;
  DLTensor* t;
  double v;
  kc_status* st = kc_args_check_count("fill", nargs, 2, 2);
  if (!st) st = kc_args_get_dltensor("fill", args, nargs, 0, &t);
  if (!st) st = kc_args_get_float("fill", args, nargs, 1, &v);
  if (!st) st = check_numeric(t, "fill");
  if (st) return st;
  int64_t n = kc_dltensor_get_numel(t), offset;
  char* base = (char*)t->data + t->byte_offset;
  for (int64_t i = 0; i < n; ++i) {
    element(t, i, &offset);
    switch (t->dtype.code * 1000 + t->dtype.bits) {
      case kDLFloat * 1000 + 32: ((float*)(void*)base)[offset] = (float)v; break;
      case kDLFloat * 1000 + 64: ((double*)(void*)base)[offset] = v; break;
      case kDLInt * 1000 + 32: ((int32_t*)(void*)base)[offset] = (int32_t)v; break;
      default: ((int64_t*)(void*)base)[offset] = (int64_t)v; break;
    }
  }
  return NULL;
}

static kc_status* int_array(const int64_t* v, int32_t n, kc_any* out) {
  kc_any items[KC_TENSOR_MAX_NDIM];
  for (int32_t i = 0; i < n; ++i) items[i] = kc_any_int(v[i]);
  kc_array* a = NULL;
  kc_status* st = kc_array_create(NULL, items, (size_t)n, &a);
  if (!st) *out = kc_any_object(KC_OBJECT(a));
  return st;
}

/* describe(t) -> [dtype, shape, strides or None, data address]. */
static kc_status* t_describe(void* self, const kc_any* args, int32_t nargs,
                             kc_any* ret) {
  (void)self;
  DLTensor* t;
  kc_status* st = kc_args_check_count("describe", nargs, 1, 1);
  if (!st) st = kc_args_get_dltensor("describe", args, nargs, 0, &t);
  if (st) return st;
  kc_any items[4] = {kc_any_dtype(t->dtype), kc_any_none(), kc_any_none(),
                     kc_any_int((int64_t)(uintptr_t)t->data +
                                (int64_t)t->byte_offset)};
  st = int_array(t->shape, t->ndim, &items[1]);
  if (!st && t->strides) st = int_array(t->strides, t->ndim, &items[2]);
  kc_array* a = NULL;
  if (!st) st = kc_array_create(NULL, items, 4, &a);
  kc_any_release(&items[1]);
  kc_any_release(&items[2]);
  if (st) return st;
  *ret = kc_any_object(KC_OBJECT(a));
  return NULL;
}

/* arange(dtype, n) -> a new 1-d tensor holding 0 .. n-1. */
static kc_status* t_arange(void* self, const kc_any* args, int32_t nargs,
                           kc_any* ret) {
  (void)self;
  kc_string_view name;
  int64_t n;
  DLDataType dtype;
  kc_status* st = kc_args_check_count("arange", nargs, 2, 2);
  if (!st) st = kc_args_get_string("arange", args, nargs, 0, &name);
  if (!st) st = kc_args_get_int("arange", args, nargs, 1, &n);
  if (!st) st = kc_dtype_parse(name, &dtype);
  kc_tensor* t = NULL;
  if (!st) st = kc_tensor_create(NULL, &n, 1, dtype, kc_device_cpu(), &t);
  if (!st) {
    const DLTensor* dl = kc_tensor_get_dltensor(t);
    st = check_numeric(dl, "arange");
    int64_t offset;
    for (int64_t i = 0; !st && i < n; ++i) {
      element(dl, i, &offset);
      switch (dtype.code * 1000 + dtype.bits) {
        case kDLFloat * 1000 + 32: ((float*)dl->data)[i] = (float)i; break;
        case kDLFloat * 1000 + 64: ((double*)dl->data)[i] = (double)i; break;
        case kDLInt * 1000 + 32: ((int32_t*)dl->data)[i] = (int32_t)i; break;
        default: ((int64_t*)dl->data)[i] = i; break;
      }
    }
  }
  if (st) {
    kc_object_release(KC_OBJECT(t));
    return st;
  }
  *ret = kc_any_object(KC_OBJECT(t));
  return NULL;
}

/* ---- keeping values, and calls from other threads -------------------------------- */

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static kc_any kept;

/* keep(x): holds x (an owned value) until the next keep; keep() drops it.
 * kept() returns it. */
static kc_status* t_keep(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  (void)self;
  (void)ret;
  KC_RETURN_IF_ERROR(kc_args_check_count("keep", nargs, 0, 1), "testing");
  kc_any value = nargs ? args[0] : kc_any_none();
  if (value.type_index == KC_TYPE_DLTENSOR_PTR ||
      value.type_index == KC_TYPE_RAW_STR) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "keep: argument 0 is borrowed (pass an owned "
                            "value, e.g. a kcall.Tensor)");
  }
  kc_any_retain(&value);
  pthread_mutex_lock(&kept_lock);
  kc_any old = kept;
  kept = value;
  pthread_mutex_unlock(&kept_lock);
  kc_any_release(&old);
  return NULL;
}

static kc_status* t_kept(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  (void)self;
  (void)args;
  KC_RETURN_IF_ERROR(kc_args_check_count("kept", nargs, 0, 0), "testing");
  pthread_mutex_lock(&kept_lock);
  *ret = kept;
  kc_any_retain(ret);
  pthread_mutex_unlock(&kept_lock);
  return NULL;
}

typedef struct thread_call {
  kc_func* f;
  const kc_any* args;
  int32_t nargs;
  kc_any ret;
  kc_status* st;
} thread_call;

static void* thread_main(void* p) {
  thread_call* c = p;
  c->st = kc_func_call(c->f, c->args, c->nargs, &c->ret);
  return NULL;
}

/* call_in_thread(f, *args) -> f(*args), called on a new thread. */
static kc_status* t_call_in_thread(void* self, const kc_any* args,
                                   int32_t nargs, kc_any* ret) {
  (void)self;
  thread_call c = {0};
  kc_status* st = kc_args_check_count("call_in_thread", nargs, 1, -1);
  if (!st) st = kc_args_get_func("call_in_thread", args, nargs, 0, &c.f);
  if (st) return st;
  c.args = args + 1;
  c.nargs = nargs - 1;
  pthread_t thread;
  if (pthread_create(&thread, NULL, thread_main, &c) != 0) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "call_in_thread: cannot start a thread");
  }
  pthread_join(thread, NULL);
  if (c.st) return c.st;
  *ret = c.ret;
  return NULL;
}

typedef struct parallel_call {
  kc_func* f;
  pthread_mutex_t lock;
  kc_status* first;
  int64_t calls;
} parallel_call;

static void parallel_body(void* p, int64_t begin, int64_t end) {
  parallel_call* c = p;
  for (int64_t i = begin; i < end; ++i) {
    kc_any arg = kc_any_int(i), r;
    kc_status* st = kc_func_call(c->f, &arg, 1, &r);
    kc_any_release(&r);
    pthread_mutex_lock(&c->lock);
    c->calls++;
    if (st && !c->first) c->first = st;
    else kc_status_destroy(st);
    pthread_mutex_unlock(&c->lock);
  }
}

/* call_parallel(f, n) -> n, after f(i) for i in [0, n) on the thread
 * pool. */
static kc_status* t_call_parallel(void* self, const kc_any* args,
                                  int32_t nargs, kc_any* ret) {
  (void)self;
  parallel_call c = {.lock = PTHREAD_MUTEX_INITIALIZER};
  int64_t n;
  kc_status* st = kc_args_check_count("call_parallel", nargs, 2, 2);
  if (!st) st = kc_args_get_func("call_parallel", args, nargs, 0, &c.f);
  if (!st) st = kc_args_get_int("call_parallel", args, nargs, 1, &n);
  if (st) return st;
  kc_thread_pool_parallel_for(kc_thread_pool_get_default(), n, 1000000,
                              parallel_body, &c);
  pthread_mutex_destroy(&c.lock);
  if (c.first) return c.first;
  *ret = kc_any_int(c.calls);
  return NULL;
}

/* Each function with the arguments it may write (kc_func_set_writes):
 * those that pass their arguments on to a callback may write them all. */
static const struct {
  const char* name;
  kc_packed_fn fn;
  uint64_t writes;
} testing_functions[] = {
    {"kcall.testing.nop", t_nop, 0},
    {"kcall.testing.echo", t_echo, 0},
    {"kcall.testing.apply", t_apply, KC_FUNC_WRITES_ALL},
    {"kcall.testing.catch", t_catch, KC_FUNC_WRITES_ALL},
    {"kcall.testing.types", t_types, 0},
    {"kcall.testing.fail", t_fail, 0},
    {"kcall.testing.sum", t_sum, 0},
    {"kcall.testing.fill", t_fill, KC_FUNC_WRITES_ARG(0)},
    {"kcall.testing.describe", t_describe, 0},
    {"kcall.testing.arange", t_arange, 0},
    {"kcall.testing.keep", t_keep, 0},
    {"kcall.testing.kept", t_kept, 0},
    {"kcall.testing.call_in_thread", t_call_in_thread, KC_FUNC_WRITES_ALL},
    {"kcall.testing.call_parallel", t_call_parallel, KC_FUNC_WRITES_ALL},
};

static PyObject* register_testing(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  size_t n = sizeof testing_functions / sizeof testing_functions[0];
  for (size_t i = 0; i < n; ++i) {
    kc_func* f = NULL;
    kc_status* st = kc_func_create(NULL, testing_functions[i].fn, NULL, NULL, &f);
    if (!st) {
      kc_func_set_writes(f, testing_functions[i].writes);
      st = kc_func_registry_register(kc_sv(testing_functions[i].name), f,
                                     KC_REGISTER_OVERRIDE);
    }
    kc_object_release(KC_OBJECT(f));
    if (st) return kcpy_raise(st);
  }
  Py_RETURN_NONE;
}

PyMethodDef kcpy_testing_methods[] = {
    {"_register_testing", (PyCFunction)register_testing, METH_NOARGS,
     "Registers the kcall.testing.* functions."},
    {NULL, NULL, 0, NULL},
};
