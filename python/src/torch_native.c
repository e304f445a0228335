/*
 * kcall ops as native PyTorch dispatcher kernels (kcall.torch), through
 * PyTorch's stable C ABI: the C shim functions libtorch_cpu exports
 * (aoti_torch_* and torch_*), looked up with dlsym in the libtorch that
 * `import torch` loaded (torch_shim.c). Nothing here needs torch's headers
 * or links torch: the declarations are written from the public C ABI, and
 * a torch without one of the symbols leaves kcall.torch on its Python
 * path.
 *
 * The dispatcher calls a boxed kernel as fn(stack, num_args, num_returns)
 * with no user data, so each registration takes one slot of a fixed
 * table, and the slot's own trampoline (one per slot, below) names it.
 * Two kinds of slot:
 *
 *   kernel  the op on CPU tensors: the inputs' memory read where it lies
 *           (a non-compact input copied to a compact one first), the
 *           outputs' shapes from kc_op_infer, the outputs allocated by
 *           torch (aoti_torch_empty_strided) and written by
 *           kc_op_call_into. Registered at the CPU key of the op and of
 *           its two companions (below).
 *   router  the op's Autograd kernel: with forward-mode AD off and
 *           grad mode off, or no input requiring grad, it calls the
 *           companion NAME_kcall_nograd,
 *           which has no autograd kernel (torch's C++ fallback passes it
 *           through), so no Python runs; otherwise the companion
 *           NAME_kcall_autograd, whose autograd rule is the Python one
 *           kcall/torch.py registers from the op's gradient declaration.
 *           Reading requires_grad and forward_ad's level takes the GIL
 *           for a moment (the stable
 *           ABI has no C getter for it; torch_tensor_to_pyobject gives
 *           the tensor's Python object, whose attribute is read in C).
 *
 * A kernel that fails raises through the dispatcher (aoti_torch_check,
 * which throws a C++ exception through these frames: the file is built
 * with -fexceptions, and everything is released before it is called), so
 * Python sees a RuntimeError with kcall's message.
 *
 * Everything that registers runs with the GIL held; the kernels run
 * without it (torch releases it around a dispatcher call) and read only
 * what registration wrote before the kernel was published to torch.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "torch_shim.h"

/* Set once torch_native_init succeeded. */
static bool shim_ready;
static PyObject* requires_grad_str;
/* torch.autograd.forward_ad's globals and "_current_level": the module is
 * never unloaded. */
static PyObject* forward_ad_globals;
static PyObject* current_level_str;

/* ---- slots --------------------------------------------------------------- */

enum arg_kind {
  ARG_TENSOR,
  ARG_INT,
  ARG_FLOAT,
  ARG_BOOL,
  ARG_OPT_INT,
  ARG_OPT_FLOAT,
  ARG_OPT_BOOL,
  ARG_INT_LIST, /* int[]: a list handle the kernel owns */
  ARG_STRING,   /* str: a string handle the kernel owns */
  ARG_OTHER,    /* passed through by a router; never in a kernel */
};

/* A native kernel takes at most NATIVE_MAX_TENSORS inputs and outputs and
 * NATIVE_MAX_ATTRS attributes, so that a call's state fits on the stack
 * (kcall.torch leaves larger ops to the Python kernel). */
#define NATIVE_MAX_TENSORS 16
#define NATIVE_MAX_ATTRS 16
#define MAX_ARGS (NATIVE_MAX_TENSORS + NATIVE_MAX_ATTRS)
#define NAME_CAP 256

typedef struct native_slot {
  bool is_router;
  int32_t num_args;
  int32_t num_outputs;
  uint8_t kinds[MAX_ARGS];
  /* kernel */
  const kc_op* op; /* retained */
  char quoted[KC_QUOTED_CAP];
  char* attr_names[MAX_ARGS]; /* PyMem, NULL for tensors */
  /* router */
  char nograd[NAME_CAP];
  char autograd[NAME_CAP];
} native_slot;

#define NUM_SLOTS 256
static native_slot* slots[NUM_SLOTS];
static int num_slots;
/* torch::Library objects: alive for the process, as the registrations. */
static void* libraries[NUM_SLOTS];

static void run_slot(int index, stable_ivalue* stack, uint64_t num_args,
                     uint64_t num_outputs);

/* One trampoline per slot: fn_0x00 .. fn_0xff. */
#define TRAMP(h, l)                                                     \
  static void tramp_##h##l(stable_ivalue* s, uint64_t a, uint64_t o) {  \
    run_slot(0x##h##l, s, a, o);                                        \
  }
#define TRAMP_ROW(h)                                                     \
  TRAMP(h, 0) TRAMP(h, 1) TRAMP(h, 2) TRAMP(h, 3) TRAMP(h, 4) TRAMP(h, 5) \
  TRAMP(h, 6) TRAMP(h, 7) TRAMP(h, 8) TRAMP(h, 9) TRAMP(h, a) TRAMP(h, b) \
  TRAMP(h, c) TRAMP(h, d) TRAMP(h, e) TRAMP(h, f)
#define TRAMP_ALL(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(a) X(b) X(c) X(d) X(e) X(f)
TRAMP_ALL(TRAMP_ROW)
#define TENTRY(h, l) tramp_##h##l,
#define TENTRY_ROW(h)                                                  \
  TENTRY(h, 0) TENTRY(h, 1) TENTRY(h, 2) TENTRY(h, 3) TENTRY(h, 4)     \
  TENTRY(h, 5) TENTRY(h, 6) TENTRY(h, 7) TENTRY(h, 8) TENTRY(h, 9)     \
  TENTRY(h, a) TENTRY(h, b) TENTRY(h, c) TENTRY(h, d) TENTRY(h, e)     \
  TENTRY(h, f)
static const boxed_fn trampolines[NUM_SLOTS] = {TRAMP_ALL(TENTRY_ROW)};

/* ---- raising through the dispatcher ----------------------------------- */

/* Throws (a c10::Error: Python's RuntimeError) with `msg`; never returns.
 * The caller has released everything it held. */
static void raise_torch(const char* func, const char* msg) {
  shim.check(false, func, __FILE__, (uint32_t)__LINE__, msg);
}

/* kcall's message of `st` (its context, then the message, without the
 * code, as kcall's Python exceptions word it) in buf; frees `st`. */
static void status_message(kc_status* st, char* buf, size_t cap) {
  kc_status_format(st, buf, cap);
  const char* code = kc_status_code_name(kc_status_get_code(st));
  size_t code_len = strlen(code);
  if (strncmp(buf, code, code_len) == 0 && buf[code_len] == ':') {
    size_t skip = code_len + 1;
    while (buf[skip] == ' ') ++skip;
    memmove(buf, buf + skip, strlen(buf + skip) + 1);
  }
  kc_status_destroy(st);
}

/* An error a kernel hands to the router above it rather than throwing:
 * an exception caught by aoti_torch_call_dispatcher costs its symbolized
 * backtrace (milliseconds), one thrown by the router itself does not.
 * The router points tls_deferred at its own, and the first kernel that
 * sees it takes it: on failure that kernel fills it, returns empty
 * placeholder outputs, and the router discards them and raises. */
typedef struct deferred_error {
  bool set;
  char msg[1024];
} deferred_error;

static _Thread_local deferred_error* tls_deferred;

/* ---- the kernel --------------------------------------------------------- */

/* What one kernel call holds, released together. */
typedef struct kernel_call {
  aten_tensor inputs[NATIVE_MAX_TENSORS];  /* owned (the stack's) */
  aten_tensor compact[NATIVE_MAX_TENSORS]; /* owned copies, or NULL */
  int32_t num_inputs;
  DLTensor in[NATIVE_MAX_TENSORS];
  const DLTensor* in_ptrs[NATIVE_MAX_TENSORS];
  kc_op_attr attrs[NATIVE_MAX_ATTRS];
  int32_t num_attrs;
  kc_array* lists[NATIVE_MAX_ATTRS]; /* the int[] attrs' values, owned */
  int32_t num_lists;
  void* strings[NATIVE_MAX_ATTRS]; /* the str attrs' torch handles, owned */
  int32_t num_strings;
  kc_op_output_info infos[NATIVE_MAX_TENSORS];
  int32_t num_outputs;
  aten_tensor outputs[NATIVE_MAX_TENSORS]; /* owned until returned */
  int64_t out_strides[NATIVE_MAX_TENSORS][KC_TENSOR_MAX_NDIM];
  DLTensor out[NATIVE_MAX_TENSORS];
  DLTensor* out_ptrs[NATIVE_MAX_TENSORS];
  char msg[1024];
} kernel_call;

static void kernel_call_release(kernel_call* c, bool outputs_too) {
  for (int32_t i = 0; i < c->num_lists; ++i) kc_object_release(KC_OBJECT(c->lists[i]));
  c->num_lists = 0;
  for (int32_t i = 0; i < c->num_strings; ++i) shim.delete_string(c->strings[i]);
  c->num_strings = 0;
  for (int32_t i = 0; i < c->num_inputs; ++i) {
    if (c->compact[i]) shim.delete_tensor_object(c->compact[i]);
    shim.delete_tensor_object(c->inputs[i]);
  }
  c->num_inputs = 0;
  if (outputs_too) {
    for (int32_t i = 0; i < c->num_outputs; ++i) {
      if (c->outputs[i]) shim.delete_tensor_object(c->outputs[i]);
    }
  }
}

/* Row-major strides of `dims`; whether `strides` are those (dims of size
 * 1 and empty tensors match whatever their strides). */
static bool is_compact(int64_t ndim, const int64_t* dims,
                       const int64_t* strides) {
  int64_t expected = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    if (dims[d] == 0) return true;
    if (dims[d] != 1 && strides[d] != expected) {
      for (int64_t e = 0; e < d; ++e) {
        if (dims[e] == 0) return true;
      }
      return false;
    }
    expected *= dims[d];
  }
  return true;
}

static void compact_strides(int32_t ndim, const int64_t* dims,
                            int64_t* out_strides) {
  int64_t s = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    out_strides[d] = s;
    s *= dims[d] > 0 ? dims[d] : 1;
  }
}

/* Input `i` (its handle in c->inputs[i]) as a DLTensor; 0, or -1 with
 * c->msg set. */
static int kernel_input(const native_slot* s, kernel_call* c, int32_t i) {
  aten_tensor t = c->inputs[i];
  int32_t device_type = 0, code = 0;
  int64_t ndim = 0;
  int64_t *sizes = NULL, *strides = NULL;
  if (shim.get_device_type(t, &device_type) || shim.get_dtype(t, &code) ||
      shim.get_dim(t, &ndim) || shim.get_sizes(t, &sizes) ||
      shim.get_strides(t, &strides)) {
    snprintf(c->msg, sizeof c->msg,
             "kcall op %s: input %d: torch could not describe the tensor",
             s->quoted, (int)i);
    return -1;
  }
  DLTensor* dl = &c->in[i];
  if (device_type != cpu_device_type) {
    snprintf(c->msg, sizeof c->msg,
             "kcall op %s: expected all tensors to be on the same device, "
             "but input %d is not on the CPU",
             s->quoted, (int)i);
    return -1;
  }
  const char* torch_name = NULL;
  if (!dtype_from_torch(code, &dl->dtype, &torch_name)) {
    if (torch_name) {
      snprintf(c->msg, sizeof c->msg,
               "kcall op %s: input %d: torch.%s has no kcall dtype", s->quoted,
               (int)i, torch_name);
    } else {
      snprintf(c->msg, sizeof c->msg,
               "kcall op %s: input %d: its torch dtype (code %d) has no kcall "
               "dtype",
               s->quoted, (int)i, (int)code);
    }
    return -1;
  }
  if (ndim > KC_TENSOR_MAX_NDIM) {
    snprintf(c->msg, sizeof c->msg,
             "kcall op %s: input %d: rank %lld; kcall takes at most %d",
             s->quoted, (int)i, (long long)ndim, KC_TENSOR_MAX_NDIM);
    return -1;
  }
  aten_tensor src = t;
  if (!is_compact(ndim, sizes, strides)) {
    int64_t compact[KC_TENSOR_MAX_NDIM];
    compact_strides((int32_t)ndim, sizes, compact);
    if (shim.empty_strided(ndim, sizes, compact, code, device_type, 0,
                           &c->compact[i]) ||
        shim.copy_(c->compact[i], t, 0)) {
      snprintf(c->msg, sizeof c->msg,
               "kcall op %s: input %d: torch could not make it compact",
               s->quoted, (int)i);
      return -1;
    }
    src = c->compact[i];
    if (shim.get_sizes(src, &sizes)) return -1;
  }
  void* data = NULL;
  if (shim.get_data_ptr(src, &data)) {
    snprintf(c->msg, sizeof c->msg,
             "kcall op %s: input %d has no memory kcall can read", s->quoted,
             (int)i);
    return -1;
  }
  dl->data = data;
  dl->device = kc_device_cpu();
  dl->ndim = (int32_t)ndim;
  dl->shape = sizes;
  dl->strides = NULL;
  dl->byte_offset = 0;
  c->in_ptrs[i] = dl;
  return 0;
}

/* An int[] attribute: the list handle's items as a kc_array (the call
 * keeps it until kernel_call_release); the handle is freed either way. 0,
 * or -1 with c->msg set. */
static int kernel_int_list(const native_slot* s, kernel_call* c, kc_op_attr* a,
                           stable_ivalue v) {
  void* list = (void*)(uintptr_t)v;
  size_t n = 0;
  int rc = shim.list_size(list, &n) ? -1 : 0;
  kc_any items[KC_TENSOR_MAX_NDIM * 2];
  if (!rc && n > sizeof items / sizeof items[0]) {
    snprintf(c->msg, sizeof c->msg,
             "kcall op %s: attr '%.*s': %zu items; the native kernel takes at most %zu",
             s->quoted, (int)a->name.size, a->name.data, n, sizeof items / sizeof items[0]);
    rc = -1;
  }
  for (size_t i = 0; !rc && i < n; ++i) {
    stable_ivalue item = 0;
    if (shim.list_get_item(list, i, &item)) {
      rc = -1;
      break;
    }
    int64_t value;
    memcpy(&value, &item, sizeof value);
    items[i] = kc_any_int(value);
  }
  shim.delete_list(list);
  kc_array* array = NULL;
  kc_status* st = rc ? NULL : kc_array_create(NULL, items, n, &array);
  if (st) status_message(st, c->msg, sizeof c->msg);
  if (rc || st) {
    if (!c->msg[0]) {
      snprintf(c->msg, sizeof c->msg, "kcall op %s: attr '%.*s': torch's list could not be read",
               s->quoted, (int)a->name.size, a->name.data);
    }
    return -1;
  }
  c->lists[c->num_lists++] = array;
  a->value = kc_any_object(KC_OBJECT(array));
  return 0;
}

/* The attribute at stack position `pos`; a left-out optional one adds
 * nothing. 0, or -1 with c->msg set. */
static int kernel_attr(const native_slot* s, kernel_call* c, int32_t pos,
                       stable_ivalue v) {
  uint8_t kind = s->kinds[pos];
  if (kind >= ARG_OPT_INT && kind <= ARG_OPT_BOOL) {
    stable_ivalue* boxed = (stable_ivalue*)(uintptr_t)v;
    if (!boxed) return 0;
    v = *boxed;
    shim.delete_stable_ivalue(boxed);
    kind = (uint8_t)(kind - (ARG_OPT_INT - ARG_INT));
  }
  kc_op_attr* a = &c->attrs[c->num_attrs++];
  a->name = kc_sv(s->attr_names[pos]);
  memset(&a->value, 0, sizeof a->value);
  if (kind == ARG_INT_LIST) return kernel_int_list(s, c, a, v);
  if (kind == ARG_STRING) {
    /* The handle's text stays valid until kernel_call_release frees it. */
    void* handle = (void*)(uintptr_t)v;
    const char* text = NULL;
    c->strings[c->num_strings++] = handle;
    if (shim.string_c_str(handle, &text) || !text) {
      snprintf(c->msg, sizeof c->msg, "kcall op %s: attr '%.*s': torch's string could not be read",
               s->quoted, (int)a->name.size, a->name.data);
      return -1;
    }
    a->value = kc_any_cstr(text);
    return 0;
  }
  if (kind == ARG_INT) {
    a->value.type_index = KC_TYPE_INT;
    memcpy(&a->value.u.v_int64, &v, sizeof v);
  } else if (kind == ARG_FLOAT) {
    a->value.type_index = KC_TYPE_FLOAT;
    memcpy(&a->value.u.v_float64, &v, sizeof v);
  } else {
    a->value.type_index = KC_TYPE_BOOL;
    a->value.u.v_int64 = (v & 0xff) != 0;
  }
  return 0;
}

/* Frees what the stack holds at `pos` for an attribute that is not read
 * (an earlier one failed). */
static void kernel_attr_discard(const native_slot* s, int32_t pos, stable_ivalue v) {
  uint8_t kind = s->kinds[pos];
  if (kind == ARG_INT_LIST) {
    shim.delete_list((void*)(uintptr_t)v);
  } else if (kind == ARG_STRING) {
    shim.delete_string((void*)(uintptr_t)v);
  } else if (kind >= ARG_OPT_INT && kind <= ARG_OPT_BOOL && v) {
    shim.delete_stable_ivalue((stable_ivalue*)(uintptr_t)v);
  }
}

/* The outputs, allocated by torch from what shape inference says; 0, or
 * -1 with c->msg set. */
static int kernel_outputs(const native_slot* s, kernel_call* c) {
  kc_status* st = kc_op_infer(s->op, c->in_ptrs, c->num_inputs, c->attrs,
                              c->num_attrs, c->infos, NATIVE_MAX_TENSORS,
                              &c->num_outputs);
  if (st) {
    status_message(st, c->msg, sizeof c->msg);
    c->num_outputs = 0;
    return -1;
  }
  for (int32_t i = 0; i < c->num_outputs; ++i) c->outputs[i] = NULL;
  for (int32_t i = 0; i < c->num_outputs; ++i) {
    kc_op_output_info* info = &c->infos[i];
    int32_t code = 0;
    bool known = info->rank >= 0;
    for (int32_t d = 0; known && d < info->rank; ++d) known = info->dims[d] >= 0;
    if (!known) {
      snprintf(c->msg, sizeof c->msg,
               "kcall op %s: output %d: its shape function leaves its shape "
               "unknown, which the native kernel needs",
               s->quoted, (int)i);
      return -1;
    }
    if (!dtype_to_torch(info->dtype, &code)) {
      snprintf(c->msg, sizeof c->msg,
               "kcall op %s: output %d: its dtype has no torch dtype",
               s->quoted, (int)i);
      return -1;
    }
    compact_strides(info->rank, info->dims, c->out_strides[i]);
    if (shim.empty_strided(info->rank, info->dims, c->out_strides[i], code,
                           cpu_device_type, 0, &c->outputs[i])) {
      snprintf(c->msg, sizeof c->msg,
               "kcall op %s: output %d: torch could not allocate it",
               s->quoted, (int)i);
      return -1;
    }
    void* data = NULL;
    shim.get_data_ptr(c->outputs[i], &data);
    c->out[i] = (DLTensor){.data = data,
                           .device = kc_device_cpu(),
                           .ndim = info->rank,
                           .dtype = info->dtype,
                           .shape = info->dims};
    c->out_ptrs[i] = &c->out[i];
  }
  return 0;
}

/* Hands c->msg to `d` with placeholder outputs (0-element tensors). */
static void kernel_defer(const native_slot* s, kernel_call* c,
                         deferred_error* d, stable_ivalue* stack) {
  memcpy(d->msg, c->msg, sizeof d->msg);
  d->set = true;
  int64_t zero = 0, one = 1;
  for (int32_t i = 0; i < s->num_outputs; ++i) {
    aten_tensor t = NULL;
    shim.empty_strided(1, &zero, &one, torch_dtype_float32(), cpu_device_type, 0, &t);
    stack[i] = (stable_ivalue)(uintptr_t)t;
  }
}

static void run_kernel(const native_slot* s, stable_ivalue* stack) {
  deferred_error* deferred = tls_deferred;
  tls_deferred = NULL;
  kernel_call call;
  kernel_call* c = &call;
  c->num_inputs = 0;
  c->num_attrs = 0;
  c->num_lists = 0;
  c->num_strings = 0;
  c->num_outputs = 0;
  c->msg[0] = '\0';
  int ok = 1;
  for (int32_t p = 0; p < s->num_args; ++p) {
    if (s->kinds[p] == ARG_TENSOR) {
      int32_t i = c->num_inputs++;
      c->inputs[i] = (aten_tensor)(uintptr_t)stack[p];
      c->compact[i] = NULL;
    } else if (ok) {
      ok = kernel_attr(s, c, p, stack[p]) == 0;
    } else {
      kernel_attr_discard(s, p, stack[p]);
    }
  }
  for (int32_t i = 0; ok && i < c->num_inputs; ++i) {
    ok = kernel_input(s, c, i) == 0;
  }
  if (ok) ok = kernel_outputs(s, c) == 0;
  if (ok) {
    kc_op_call_options opts = {sizeof opts, NULL, torch_thread_pool(), NULL};
    kc_status* st = kc_op_call_into(s->op, c->in_ptrs, c->num_inputs, c->attrs,
                                    c->num_attrs, &opts, c->out_ptrs,
                                    c->num_outputs);
    if (st) {
      status_message(st, c->msg, sizeof c->msg);
      ok = 0;
    }
  }
  if (ok && c->num_outputs != s->num_outputs) {
    snprintf(c->msg, sizeof c->msg,
             "kcall op %s: %d outputs, but its torch schema returns %d",
             s->quoted, (int)c->num_outputs, (int)s->num_outputs);
    ok = 0;
  }
  kernel_call_release(c, !ok);
  if (!ok && deferred) {
    kernel_defer(s, c, deferred, stack);
    return;
  }
  if (!ok) raise_torch(__func__, c->msg);
  for (int32_t i = 0; i < c->num_outputs; ++i) {
    stack[i] = (stable_ivalue)(uintptr_t)c->outputs[i];
  }
}

/* ---- the router --------------------------------------------------------- */

/* Whether forward-mode AD is on (torch.autograd.forward_ad's level, which
 * torch.func.jvp sets too): then an input may carry a tangent, which only
 * the Python autograd rule can see. Unknown counts as on. With the GIL. */
static bool forward_ad_active(void) {
  PyObject* level = forward_ad_globals
                        ? PyDict_GetItemWithError(forward_ad_globals, current_level_str)
                        : NULL;
  long v = level ? PyLong_AsLong(level) : -1;
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return true;
  }
  return !level || v >= 0;
}

/* Whether the call needs the autograd rule: forward-mode AD is on, or
 * grad mode is and a tensor input requires grad (its Python object's
 * attribute), read with the GIL. A tensor torch cannot give as a Python
 * object is taken to require grad (the Python path decides then). */
static bool needs_autograd(const native_slot* s, const stable_ivalue* stack) {
  if (!Py_IsInitialized() || kcpy_finalizing()) return true;
  bool grad_mode = shim.grad_mode_is_enabled();
  PyGILState_STATE gil = PyGILState_Ensure();
  bool any = forward_ad_active();
  for (int32_t p = 0; grad_mode && !any && p < s->num_args; ++p) {
    if (s->kinds[p] != ARG_TENSOR) continue;
    void* obj = NULL;
    if (shim.tensor_to_pyobject((aten_tensor)(uintptr_t)stack[p], NULL, &obj) ||
        !obj) {
      any = true;
      break;
    }
    PyObject* flag = PyObject_GetAttr((PyObject*)obj, requires_grad_str);
    any = flag != Py_False;
    if (!flag) PyErr_Clear();
    Py_XDECREF(flag);
    Py_DECREF((PyObject*)obj);
  }
  PyGILState_Release(gil);
  return any;
}

static void run_router(const native_slot* s, stable_ivalue* stack,
                       uint64_t num_outputs) {
  const char* target = needs_autograd(s, stack) ? s->autograd : s->nograd;
  deferred_error deferred = {.set = false};
  deferred_error* outer = tls_deferred;
  tls_deferred = &deferred;
  torch_err err = shim.call_dispatcher(target, "", stack);
  tls_deferred = outer;
  if (err == 0 && !deferred.set) return;
  char msg[sizeof deferred.msg];
  if (deferred.set) {
    memcpy(msg, deferred.msg, sizeof msg);
    for (uint64_t i = 0; err == 0 && i < num_outputs; ++i) {
      if (stack[i]) shim.delete_tensor_object((aten_tensor)(uintptr_t)stack[i]);
    }
  } else {
    /* The callee's exception was caught by the shim: raise its message. */
    const char* what = shim.exception_what ? shim.exception_what() : NULL;
    snprintf(msg, sizeof msg, "%s",
             what && *what ? what
                           : "kcall: the op failed (torch gives no message)");
  }
  raise_torch(__func__, msg);
}

static void run_slot(int index, stable_ivalue* stack, uint64_t num_args,
                     uint64_t num_outputs) {
  (void)num_args;
  const native_slot* s = slots[index];
  if (s->is_router) {
    run_router(s, stack, num_outputs);
  } else {
    run_kernel(s, stack);
  }
}

/* ---- Python entry points -------------------------------------------------- */

/* torch_native_init(libtorch_path, hidden=()) -> None: looks the shim up
 * in the libtorch already loaded; RuntimeError naming the first symbol it
 * lacks (each name in `hidden` is taken as missing, for the tests). Once
 * it succeeded, later calls do nothing. */
static PyObject* torch_native_init(PyObject* module, PyObject* args) {
  (void)module;
  const char* path;
  PyObject* hidden = NULL;
  if (!PyArg_ParseTuple(args, "s|O", &path, &hidden)) return NULL;
  if (shim_ready) Py_RETURN_NONE;
  void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  if (!lib) {
    PyErr_Format(PyExc_RuntimeError,
                 "kcall.torch: %s is not loaded (import torch first)", path);
    return NULL;
  }
  if (torch_shim_load(lib, hidden) < 0) return NULL;
  requires_grad_str = PyUnicode_InternFromString("requires_grad");
  current_level_str = PyUnicode_InternFromString("_current_level");
  PyObject* forward_ad = PyImport_ImportModule("torch.autograd.forward_ad");
  if (!requires_grad_str || !current_level_str || !forward_ad) return NULL;
  forward_ad_globals = PyModule_GetDict(forward_ad); /* the module is kept */
  /* The library stays open: torch is never unloaded. */
  shim_ready = true;
  Py_RETURN_NONE;
}

/* {"optional": bool, "message": bool, "threads": bool (loops on torch's
 * threads), "slots_left": int, "max_tensors": int, "max_attrs": int}. */
static PyObject* torch_native_info(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  if (!shim_ready) Py_RETURN_NONE;
  bool lists = shim.list_size && shim.list_get_item && shim.delete_list;
  bool strings = shim.string_c_str && shim.delete_string;
  return Py_BuildValue("{s:O,s:O,s:O,s:O,s:O,s:i,s:i,s:i}", "optional",
                       shim.delete_stable_ivalue ? Py_True : Py_False,
                       "lists", lists ? Py_True : Py_False,
                       "strings", strings ? Py_True : Py_False,
                       "message", shim.exception_what ? Py_True : Py_False,
                       "threads",
                       shim.parallel_for && shim.get_num_threads ? Py_True
                                                                 : Py_False,
                       "slots_left", NUM_SLOTS - num_slots, "max_tensors",
                       NATIVE_MAX_TENSORS, "max_attrs", NATIVE_MAX_ATTRS);
}

static int kind_from_name(PyObject* name, uint8_t* out) {
  static const char* const names[] = {"Tensor", "int",   "float", "bool", "int?",  "float?",
                                      "bool?",  "int[]", "str",   "other"};
  const char* text = PyUnicode_AsUTF8(name);
  if (!text) return -1;
  for (uint8_t k = 0; k <= ARG_OTHER; ++k) {
    if (strcmp(text, names[k]) == 0) {
      *out = k;
      return 0;
    }
  }
  PyErr_Format(PyExc_ValueError, "torch_native: unknown argument kind '%s'",
               text);
  return -1;
}

static void slot_free(native_slot* s) {
  if (!s) return;
  for (int32_t p = 0; p < MAX_ARGS; ++p) PyMem_Free(s->attr_names[p]);
  if (s->op) kc_object_release(KC_OBJECT((kc_op*)(uintptr_t)s->op));
  PyMem_Free(s);
}

/* Registers slot `s` as NS::NAME's kernel at `key` for each name in
 * `names`; on success the slot is taken (even when a later name fails,
 * as torch keeps what it registered). */
static PyObject* register_slot(native_slot* s, const char* ns, const char* key,
                               PyObject* names) {
  if (num_slots >= NUM_SLOTS) {
    slot_free(s);
    PyErr_Format(PyExc_RuntimeError,
                 "kcall.torch: all %d native kernel slots are taken",
                 NUM_SLOTS);
    return NULL;
  }
  int index = num_slots;
  void* lib = NULL;
  if (shim.library_init_impl(ns, key, __FILE__, (uint32_t)__LINE__, &lib)) {
    slot_free(s);
    PyErr_Format(PyExc_RuntimeError,
                 "kcall.torch: torch refused a library for '%s' at key '%s'",
                 ns, key);
    return NULL;
  }
  slots[index] = s;
  libraries[index] = lib;
  num_slots++;
  Py_ssize_t n = PySequence_Size(names);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_GetItem(names, i);
    const char* name = item ? PyUnicode_AsUTF8(item) : NULL;
    if (!name) {
      Py_XDECREF(item);
      return NULL;
    }
    torch_err err = shim.library_impl(lib, name, trampolines[index]);
    if (err) {
      PyErr_Format(PyExc_RuntimeError,
                   "kcall.torch: torch refused the native kernel of '%s::%s' "
                   "at key '%s'",
                   ns, name, key);
      Py_DECREF(item);
      return NULL;
    }
    Py_DECREF(item);
  }
  Py_RETURN_NONE;
}

static native_slot* slot_from_kinds(PyObject* kinds, int32_t num_outputs) {
  Py_ssize_t n = PySequence_Size(kinds);
  if (n < 0) return NULL;
  if (n > MAX_ARGS) {
    PyErr_Format(PyExc_ValueError, "torch_native: %zd arguments; at most %d",
                 n, MAX_ARGS);
    return NULL;
  }
  native_slot* s = PyMem_Calloc(1, sizeof *s);
  if (!s) return (native_slot*)PyErr_NoMemory();
  s->num_args = (int32_t)n;
  s->num_outputs = num_outputs;
  for (Py_ssize_t p = 0; p < n; ++p) {
    PyObject* item = PySequence_GetItem(kinds, p);
    int rc = item ? kind_from_name(item, &s->kinds[p]) : -1;
    Py_XDECREF(item);
    if (rc < 0) {
      slot_free(s);
      return NULL;
    }
  }
  return s;
}

/* torch_native_kernel(op_handle, ns, names, kinds, attr_names,
 * num_outputs): the op's native kernel at the CPU key of NS::NAME for
 * each name. kinds: one per schema argument ("Tensor", "int", "float",
 * "bool", "int?", "float?", "bool?"); attr_names: the kcall attribute
 * name of each (None for tensors). */
static PyObject* torch_native_kernel(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *capsule, *names, *kinds, *attr_names;
  const char* ns;
  int num_outputs;
  if (!PyArg_ParseTuple(args, "OsOOOi", &capsule, &ns, &names, &kinds,
                        &attr_names, &num_outputs)) {
    return NULL;
  }
  if (!shim_ready) {
    PyErr_SetString(PyExc_RuntimeError, "torch_native_init first");
    return NULL;
  }
  const kc_op* op = PyCapsule_GetPointer(capsule, "kcall.op");
  if (!op) return NULL;
  native_slot* s = slot_from_kinds(kinds, num_outputs);
  if (!s) return NULL;
  for (int32_t p = 0; p < s->num_args; ++p) {
    if (s->kinds[p] == ARG_OTHER ||
        (s->kinds[p] >= ARG_OPT_INT && s->kinds[p] <= ARG_OPT_BOOL &&
         !shim.delete_stable_ivalue) ||
        (s->kinds[p] == ARG_INT_LIST && !shim.delete_list) ||
        (s->kinds[p] == ARG_STRING && !shim.delete_string)) {
      slot_free(s);
      PyErr_SetString(PyExc_ValueError,
                      "torch_native_kernel: an argument kind it cannot read");
      return NULL;
    }
    if (s->kinds[p] == ARG_TENSOR) continue;
    PyObject* item = PySequence_GetItem(attr_names, p);
    const char* text = item ? PyUnicode_AsUTF8(item) : NULL;
    size_t len = text ? strlen(text) : 0;
    s->attr_names[p] = text ? PyMem_Malloc(len + 1) : NULL;
    if (s->attr_names[p]) memcpy(s->attr_names[p], text, len + 1);
    Py_XDECREF(item);
    if (!s->attr_names[p]) {
      slot_free(s);
      return text ? PyErr_NoMemory() : NULL;
    }
  }
  kc_string_view name = kc_op_get_name(op);
  kc_sv_format_quoted(name, s->quoted, sizeof s->quoted);
  kc_object_retain(KC_OBJECT((kc_op*)(uintptr_t)op));
  s->op = op;
  return register_slot(s, ns, "CPU", names);
}

/* torch_native_router(ns, name, kinds, nograd, autograd): the router at
 * NS::NAME's Autograd key; nograd and autograd are the companions'
 * qualified names ("ns::name"). */
static PyObject* torch_native_router(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *name, *kinds;
  const char *ns, *nograd, *autograd;
  if (!PyArg_ParseTuple(args, "sUOss", &ns, &name, &kinds, &nograd,
                        &autograd)) {
    return NULL;
  }
  if (!shim_ready) {
    PyErr_SetString(PyExc_RuntimeError, "torch_native_init first");
    return NULL;
  }
  if (strlen(nograd) >= NAME_CAP || strlen(autograd) >= NAME_CAP) {
    PyErr_SetString(PyExc_ValueError, "torch_native_router: name too long");
    return NULL;
  }
  native_slot* s = slot_from_kinds(kinds, 0);
  if (!s) return NULL;
  s->is_router = true;
  memcpy(s->nograd, nograd, strlen(nograd) + 1);
  memcpy(s->autograd, autograd, strlen(autograd) + 1);
  PyObject* names = PyTuple_Pack(1, name);
  if (!names) {
    slot_free(s);
    return NULL;
  }
  PyObject* result = register_slot(s, ns, "Autograd", names);
  Py_DECREF(names);
  return result;
}

/* torch_native_defer(message) -> bool: hands the error of a Python kernel
 * or fake below a router to that router, as run_kernel hands its own (the
 * exception the Python kernel then raises through the dispatcher reaches
 * the router without its text). False when no router waits for one. */
static PyObject* torch_native_defer(PyObject* module, PyObject* arg) {
  (void)module;
  deferred_error* d = tls_deferred;
  if (!d || d->set) Py_RETURN_FALSE;
  const char* text = PyUnicode_AsUTF8(arg);
  if (!text) return NULL;
  snprintf(d->msg, sizeof d->msg, "%s", text);
  d->set = true;
  Py_RETURN_TRUE;
}

PyMethodDef kcpy_torch_methods[] = {
    {"torch_native_defer", torch_native_defer, METH_O,
     "torch_native_defer(message)\n--\n\nHands a Python kernel's error to "
     "the native router above it; False when there is none."},
    {"torch_native_init", torch_native_init, METH_VARARGS,
     "torch_native_init(libtorch_path, hidden=())\n--\n\nLooks up PyTorch's "
     "stable C shim in the loaded libtorch; RuntimeError naming a missing "
     "symbol."},
    {"torch_native_info", torch_native_info, METH_NOARGS,
     "torch_native_info()\n--\n\nWhat the shim found, or None before "
     "torch_native_init."},
    {"torch_native_kernel", torch_native_kernel, METH_VARARGS,
     "torch_native_kernel(op, ns, names, kinds, attr_names, num_outputs)\n"
     "--\n\nRegisters the op's native CPU kernel for torch ops NS::NAME."},
    {"torch_native_router", torch_native_router, METH_VARARGS,
     "torch_native_router(ns, name, kinds, nograd, autograd)\n--\n\n"
     "Registers the native Autograd kernel of NS::NAME."},
    {NULL, NULL, 0, NULL},
};
