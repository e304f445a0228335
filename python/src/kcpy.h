/*
 * The CPython extension kcall._core: shared declarations. Never installed.
 *
 * Files:
 *   module.c     module init, registry functions, plugins
 *   errors.c     kcall statuses <-> Python exceptions
 *   convert.c    kc_any <-> Python objects, call argument slots
 *   arrays.c     Python arrays (NumPy, buffers, __dlpack__) -> DLTensor
 *   tensor.c     the kcall.Tensor type and its DLPack export
 *   function.c   the kcall.Function type and Python callbacks
 *   op.c         eager op calls and op descriptions
 *   program.c    kcall.Program (parse, load, compile), shapes as text
 *   builder.c    kcall.ProgramBuilder
 *   attrs.c      typed custom-call attributes <-> Python values
 *   executable.c kcall.Executable (execute, profile, stats)
 *   target.c     custom-call targets written in Python
 *   device.c     streams, and copies between the host and a device
 *   xla.c        what a target is, and XLA FFI handlers (kcall.jax)
 *   torch_native.c  kcall ops as native PyTorch kernels (kcall.torch)
 *   torch_shim.c    libtorch's C shim for them, found at run time
 *   testing.c    C functions for the tests and benchmarks
 *
 * Everything here runs with the GIL held unless a comment says otherwise;
 * the GIL is released around every call into kcall that can run user code.
 */
#ifndef KCALL_PYTHON_KCPY_H_
#define KCALL_PYTHON_KCPY_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "kcall/kcall.h"

#if PY_VERSION_HEX >= 0x030D0000
#define kcpy_finalizing() Py_IsFinalizing()
#else
#define kcpy_finalizing() _Py_IsFinalizing()
#endif

/* ---- errors (errors.c) ---------------------------------------------------- */

/* Creates the exception classes and adds them to `module`. */
int kcpy_errors_init(PyObject* module);

/* Raises the Python exception for `status` and frees it; returns NULL so
 * that callers can `return kcpy_raise(st);`. A status that a Python
 * callback produced re-raises that callback's exception, with kcall's
 * context added as a note. */
PyObject* kcpy_raise(kc_status* status);

/* The status for the Python exception now set (which is cleared): its code
 * chosen by type, its message "Type: message" followed by the traceback.
 * The exception is remembered so that a Python caller further out gets it
 * back (kcpy_raise). Never NULL. */
kc_status* kcpy_status_from_exception(void);

/* The exception class for a status code (borrowed). */
PyObject* kcpy_error_class(kc_status_code code);

/* Formats a status into a new str (code omitted: the exception class tells
 * it). */
PyObject* kcpy_status_text(const kc_status* status);

/* ---- naming values in messages (convert.c) ---------------------------------- */

/* Names a value in messages: "argument 2", "op 'Add': input 0", "the
 * callback's result". Formatted only when a message is built, so that a
 * successful conversion does no formatting. */
typedef struct kcpy_what {
  const char* text;
  Py_ssize_t index; /* appended when >= 0 */
  const char* op;   /* "op <op>: " prepended when non-NULL; <op> is the
                     * op's name as kc_sv_format_quoted writes it */
} kcpy_what;

static inline kcpy_what kcpy_what_text(const char* text) {
  kcpy_what w = {.text = text, .index = -1, .op = NULL};
  return w;
}
static inline kcpy_what kcpy_what_index(const char* text, Py_ssize_t index) {
  kcpy_what w = {.text = text, .index = index, .op = NULL};
  return w;
}

/* Writes the name into buf and returns buf. */
const char* kcpy_what_format(kcpy_what what, char* buf, size_t cap);
#define KCPY_WHAT(w) kcpy_what_format((w), (char[256]){0}, 256)

/* User text quoted for a message, as the library quotes it
 * (kc_sv_format_quoted), in a buffer living to the end of the block. */
static inline const char* kcpy_quote(char* buf, kc_string_view text) {
  kc_sv_format_quoted(text, buf, KC_QUOTED_CAP);
  return buf;
}
#define KCPY_Q(text) kcpy_quote((char[KC_QUOTED_CAP]){0}, (text))
#define KCPY_QS(cstr) KCPY_Q(kc_sv(cstr))

/* ---- arrays (arrays.c) ------------------------------------------------------ */

/* How one argument slot must be cleaned after a call. */
enum {
  KCPY_CLEAN_NONE = 0,
  KCPY_CLEAN_OBJECT,  /* kc_object_release(p) */
  KCPY_CLEAN_PYOBJ,   /* Py_DECREF(p): a DLPack capsule, a temporary */
  KCPY_CLEAN_BUFFER,  /* PyBuffer_Release(p) and free it */
};

/* Rank up to which an argument's element strides fit in its slot. */
#define KCPY_SLOT_NDIM 8

/* Storage for one converted argument: the DLTensor a borrowed tensor
 * argument points to, and what to release after the call. */
typedef struct kcpy_slot {
  DLTensor dl;
  int64_t strides[KCPY_SLOT_NDIM];
  int64_t* heap_strides; /* when the rank exceeds KCPY_SLOT_NDIM */
  int clean;
  int nowrite; /* KCPY_NOWRITE_*: why the callee must not write it */
  void* p;
} kcpy_slot;

/* Why an array argument must not be written (kcpy_slot.nowrite). */
enum {
  KCPY_NOWRITE_NONE = 0,
  KCPY_NOWRITE_READONLY, /* its owner says so */
  KCPY_NOWRITE_OVERLAP,  /* two of its elements share memory */
};

/* True when two elements of `dl` (shape and element strides) may share
 * memory: a stride of 0 over an extent > 1, or strides that, sorted,
 * do not clear the extent of the dims inside them (this also counts some
 * interleaved layouts, which never overlap, as overlapping). */
int kcpy_dl_overlaps(const DLTensor* dl);

/* Raises the ValueError for an argument `callee` may write and must not:
 * "<what>: read-only memory (...), and <callee> may write it ...", saying
 * how to declare or opt in, or, with `fix`, "..., which <callee> writes;
 * <fix>". Returns -1. */
int kcpy_nowrite_error(int nowrite, kcpy_what what, const char* callee,
                       const char* fix);

/* Releases what a slot holds. */
void kcpy_slot_clean(kcpy_slot* slot);

/* Fills slot->dl with a borrowed view of `obj` if it is an array: a NumPy
 * array (read directly, without __dlpack__), an object with the buffer
 * protocol, or an object with __dlpack__. Returns 1 when it did, 0 when
 * `obj` is no array (nothing raised), -1 with an exception raised when it
 * is an array kcall cannot take (the message names `what`). */
int kcpy_array_view(PyObject* obj, kcpy_slot* slot, kcpy_what what);

/* An array argument of a call, as the DLTensor to pass: a live
 * kcall.Tensor's own, else a view of `obj` in slots[*num_slots], which is
 * counted (also on failure) for the caller to clean. NULL with an
 * exception raised when `obj` is no array kcall can take ("<what>:
 * expected an array, got <type>" when it is none). */
const DLTensor* kcpy_array_arg(PyObject* obj, kcpy_what what,
                               kcpy_slot* slots, Py_ssize_t* num_slots);

/* An owned kcall tensor sharing the memory of the array `obj` and keeping
 * `obj` (or its DLPack producer) alive; NULL with an exception raised
 * otherwise. */
kc_tensor* kcpy_array_to_tensor(PyObject* obj, kcpy_what what);

/* A DLPack 1.x managed tensor describing `dl` (shape and strides copied)
 * whose deleter drops a reference to `owner` (taken here; may be NULL).
 * NULL with an exception raised when memory runs out. */
DLManagedTensorVersioned* kcpy_managed_wrap(const DLTensor* dl,
                                            PyObject* owner, uint64_t flags);

/* The legacy (unversioned) managed tensor, from the DLPack specification,
 * which producers return to consumers that ask for no version. */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

/* A NumPy scalar (numpy.int64(3), numpy.float32(1.5), numpy.bool_) as the
 * plain value it holds: 1 when `obj` is one, 0 when not (complex scalars
 * are left to the array path), -1 with an exception. */
int kcpy_numpy_scalar(PyObject* obj, kc_any* out);

/* numpy.ndarray's type when NumPy has been seen and its layout verified,
 * else NULL. */
PyTypeObject* kcpy_numpy_type(void);

/* "float32", "int64", "bfloat16", ...: the NumPy name of a dtype when it
 * has one, else kcall's name. Returns a new str. */
PyObject* kcpy_dtype_name(DLDataType dtype);

/* {"op", "spec", "args": [(source, index)], "results": [index]} of a
 * gradient declaration, an op's or a typed target's (source "input",
 * "output" or "cotangent"). New reference; NULL with an exception set. */
PyObject* kcpy_gradient_dict(const kc_op_gradient* gradient);

/* ---- tensors (tensor.c) ------------------------------------------------------ */

typedef struct kcpy_tensor {
  PyObject_HEAD
  kc_tensor* tensor; /* owned reference; NULL for a borrowed view */
  DLTensor* dl;      /* the tensor's, the borrowed one, or its copy's */
  int expired;       /* a borrowed view whose call has returned */
  int writable;
  int nowrite;       /* KCPY_NOWRITE_*, for calls (from writable and dl) */
  /* A borrowed view only: the caller's DLTensor while the call runs, and
   * the copy every export of the view shares (a Tensor, made on the first
   * export, kept until the view dies), with a hash of its contents when
   * made, to tell whether the callback changed it. */
  DLTensor* lent;
  PyObject* copy;
  uint64_t copy_hash;
} kcpy_tensor;

extern PyTypeObject kcpy_tensor_type;

int kcpy_tensor_init_type(PyObject* module);
/* A Tensor owning `tensor` (the reference is stolen, also on failure). */
PyObject* kcpy_tensor_wrap(kc_tensor* tensor);
/* A Tensor borrowing `dl` for the duration of a call; kcpy_tensor_expire
 * ends it. What is exported from it (the buffer protocol,
 * __array_interface__, __dlpack__: np.asarray, memoryview, np.from_dlpack)
 * shares a copy, made on the first export, that the view then stands for
 * in calls too; kcpy_tensor_expire writes the copy back into `dl` when the
 * view is writable and the copy was changed. So nothing made from the
 * view can reach the caller's memory after the call. */
PyObject* kcpy_tensor_borrow(DLTensor* dl, int writable);
void kcpy_tensor_expire(PyObject* view);

static inline int kcpy_tensor_check(PyObject* obj) {
  return PyObject_TypeCheck(obj, &kcpy_tensor_type);
}

/* ---- functions (function.c) ----------------------------------------------------- */

typedef struct kcpy_func {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  kc_func* func;   /* owned reference */
  PyObject* name;  /* str, or NULL for an anonymous function */
  int release_gil;
  int allow_readonly; /* lend read-only and overlapping memory anyway */
  PyMethodDef fast_def; /* for fast(): named after the function */
} kcpy_func;

extern PyTypeObject kcpy_func_type;

int kcpy_func_init_type(PyObject* module);
/* A Function owning `func` (stolen). `name` may be NULL. */
PyObject* kcpy_func_wrap(kc_func* func, PyObject* name);
/* A new kc_func that calls the Python callable `callable`. NULL with an
 * exception raised on failure. */
kc_func* kcpy_func_from_callable(PyObject* callable);
/* The same for a callable passed as a call argument: the function made
 * for the last such callable is kept (with the callable), so passing one
 * callback in a loop allocates once. A new reference. */
kc_func* kcpy_func_for_argument(PyObject* callable);
/* The Python callable behind `func` (borrowed) when `func` is one that
 * kcpy_func_from_callable made, else NULL. */
PyObject* kcpy_func_get_callable(const kc_func* func);

static inline int kcpy_func_check(PyObject* obj) {
  return PyObject_TypeCheck(obj, &kcpy_func_type);
}

/* ---- conversions (convert.c) --------------------------------------------------- */

/* Converts a call argument. Borrowed forms are used where the ABI allows
 * (a str as RAW_STR, an array as DLTENSOR_PTR into slot->dl); whatever must
 * be released afterwards is recorded in `slot` (slot->clean is set, also on
 * failure). `index` names the argument in messages. 0, or -1 with an
 * exception raised. */
int kcpy_arg_from_py(PyObject* obj, kc_any* out, kcpy_slot* slot,
                     Py_ssize_t index);

/* Converts to an owned value (a return value, an array item): strings and
 * arrays become objects, arrays become tensors that keep their owner
 * alive. `what` names the value in messages. 0, or -1 with an exception. */
int kcpy_owned_from_py(PyObject* obj, kc_any* out, kcpy_what what);

/* Converts a value to Python. kcpy_py_from_owned steals the reference the
 * value holds (also on failure); kcpy_py_from_arg borrows it (a borrowed
 * tensor becomes a view that must be expired after the call: it is added
 * to the list *views, created when first needed). */
PyObject* kcpy_py_from_owned(kc_any* value);
PyObject* kcpy_py_from_arg(const kc_any* value, PyObject** views);

/* Expires every view in the list `views` and drops it. NULL is a no-op. */
void kcpy_views_expire(PyObject* views);

/* A borrowed string view of a Python str (UTF-8, cached by Python in the
 * object). -1 with an exception when `obj` is no str. */
int kcpy_str_view(PyObject* obj, kc_string_view* out, const char* what);

/* The platform a str names ('host', 'cuda'); -1 with an exception when
 * `text` is no str or names none. */
int kcpy_platform_from_py(PyObject* text, kc_platform* out);

/* A device's name ("cpu:0", "cuda:1") as a new str. */
PyObject* kcpy_device_name(DLDevice device);

/* A formatter of the library's, snprintf-style: writes at most `cap`
 * bytes of `obj`'s text into buf and returns the length the whole text
 * needs. kcpy_format_str gives the whole text as a new str. */
typedef size_t (*kcpy_formatter)(const void* obj, char* buf, size_t cap);
PyObject* kcpy_format_str(kcpy_formatter format, const void* obj);

/* ---- programs (program.c, builder.c, executable.c) ------------------------------ */

int kcpy_program_init_type(PyObject* module);
int kcpy_builder_init_type(PyObject* module);
int kcpy_executable_init_type(PyObject* module);
/* A Program owning `program` (stolen, also on failure). */
PyObject* kcpy_program_wrap(kc_program* program);
/* An Executable owning `exe` (stolen, also on failure), running on
 * `device`; `tuple_result` when the program's result is a tuple (a call
 * returns a tuple of Tensors rather than one). */
PyObject* kcpy_executable_wrap(kc_executable* exe, int tuple_result,
                               DLDevice device);
/* A shape as HLO writes it ("f32[2,3]"), as a new str. */
PyObject* kcpy_shape_str(const kc_shape* shape);
/* A new shape parsed from the str `text`; NULL with an exception, whose
 * context is `what`. */
kc_shape* kcpy_shape_parse(PyObject* text, const char* what);

/* ---- typed attributes (attrs.c) -------------------------------------------------- */

/* Attribute storage for one custom call: every kc_attr, array payload and
 * string it needs, freed together. Strings point into the Python objects,
 * which the caller's dict keeps alive for the call. Zero-initialised
 * before use. */
typedef struct kcpy_attr_arena {
  void** blocks;
  size_t count, cap;
} kcpy_attr_arena;

/* Converts a dict of attributes (str keys; bool, int, float, str, NumPy
 * scalars and 1-d arrays, lists of numbers, dicts) into *out, allocated in
 * `arena`. 0, or -1 with an exception raised. */
int kcpy_attr_dict_from_py(PyObject* dict, kc_attr_dict* out,
                           kcpy_attr_arena* arena);
/* Frees everything allocated in `arena`. */
void kcpy_attr_arena_free(kcpy_attr_arena* arena);
/* An attribute's value as Python sees it: bool, int, float, str, a list
 * of numbers or a dict. NULL with an exception. */
PyObject* kcpy_attr_to_py(const kc_attr* attr);

/* ---- the rest ---------------------------------------------------------------- */

/* Devices (device.c). A stream argument: None (NULL), an int handle, or
 * an object with __cuda_stream__, cuda_stream (torch) or ptr (CuPy);
 * -1 with TypeError otherwise. */
int kcpy_stream_parse(PyObject* obj, void** out_stream);
/* Sets (set 1) or clears the stream that DLPack producers of device arrays
 * are asked to make them ready on, for imports on this thread. */
void kcpy_consumer_stream_set(int set, void* stream);
/* The `stream` argument of __dlpack__ for an array on `device` (new
 * reference), or NULL with an exception. */
PyObject* kcpy_consumer_stream_arg(DLDevice device);
extern PyMethodDef kcpy_device_methods[];

/* Method tables each file contributes to the module. */
extern PyMethodDef kcpy_op_methods[];
extern PyMethodDef kcpy_torch_methods[];
extern PyMethodDef kcpy_target_methods[];
extern PyMethodDef kcpy_testing_methods[];
extern PyMethodDef kcpy_xla_methods[];

#endif /* KCALL_PYTHON_KCPY_H_ */
