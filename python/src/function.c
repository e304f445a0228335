/*
 * kcall.Function: a packed function called from Python, and Python
 * callables made into packed functions that C calls.
 *
 * A call converts its arguments into kc_any values on the stack (arrays
 * are borrowed, not copied), releases the GIL unless the handle says not
 * to, calls the function inline (kc_func_call) and converts the result.
 * A callback from C takes the GIL on whatever thread it runs (one Python
 * never saw included), lends array arguments to Python as kcall.Tensor
 * views for the duration of the call (tensor.c: their exports share a
 * copy), refuses a result over lent memory, and turns an exception into
 * a status that carries its type, message and traceback.
 *
 * Read-only and self-overlapping arrays are refused for the arguments the
 * function may write (kc_func_get_writes), unless the handle has
 * allow_readonly; the conversion flags them (kcpy_slot.nowrite) from what
 * it reads anyway, so a call without such arrays pays one test a slot.
 */
#include "kcpy.h"

#include <string.h>

/* Arguments converted on the stack; more go to the heap. */
#define INLINE_ARGS 6

static int int_arg(PyObject* obj, kc_any* out, Py_ssize_t index) {
  /* Small ints read straight from the object (one machine digit). */
#if PY_VERSION_HEX >= 0x030C0000
  if (_PyLong_IsCompact((PyLongObject*)obj)) {
    *out = kc_any_int((int64_t)_PyLong_CompactValue((PyLongObject*)obj));
    return 0;
  }
#else
  Py_ssize_t size = Py_SIZE(obj);
  if (size >= -1 && size <= 1) {
    *out = kc_any_int((int64_t)size * (int64_t)((PyLongObject*)obj)->ob_digit[0]);
    return 0;
  }
#endif
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow) {
    PyErr_Format(PyExc_OverflowError,
                 "argument %zd: %R does not fit in a 64-bit int", index, obj);
    return -1;
  }
  *out = kc_any_int(v);
  return 0;
}

/* The error for argument `index`, which must not be written, when the
 * function may write it (its declaration is read once a call, and only
 * for such an argument); 0 when it may not. */
__attribute__((noinline, cold)) static int check_nowrite(
    const kcpy_func* f, kcpy_slot* slot, Py_ssize_t index) {
  uint64_t writes = kc_func_get_writes(f->func);
  if (!(writes & KC_FUNC_WRITES_ARG((uint64_t)index))) return 0;
  PyObject* name = f->name ? PyObject_Repr(f->name) : NULL;
  const char* callee = name ? PyUnicode_AsUTF8(name) : NULL;
  PyErr_Clear();
  kcpy_nowrite_error(slot->nowrite, kcpy_what_index("argument", index),
                     callee ? callee : "the function", NULL);
  Py_XDECREF(name);
  kcpy_slot_clean(slot);
  return -1;
}

static PyObject* call_packed(const kcpy_func* f, PyObject* const* args,
                             Py_ssize_t nargs, int release_gil) {
  const kc_func* func = f->func;
  if (nargs > INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "kcall: too many arguments");
    return NULL;
  }
  kc_any values_inline[INLINE_ARGS];
  kcpy_slot slots_inline[INLINE_ARGS];
  kc_any* values = values_inline;
  kcpy_slot* slots = slots_inline;
  if (nargs > INLINE_ARGS) {
    values = PyMem_Malloc(sizeof(kc_any) * (size_t)nargs);
    slots = PyMem_Malloc(sizeof(kcpy_slot) * (size_t)nargs);
    if (!values || !slots) {
      PyMem_Free(values);
      PyMem_Free(slots);
      return PyErr_NoMemory();
    }
  }
  /* Only arguments that hold something to release are cleaned after the
   * call: scalars never touch their slot. */
  Py_ssize_t dirty = 0;
  int failed = 0;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    PyObject* a = args[i];
    int rc;
    /* The commonest kinds inline; the rest in convert.c. */
    if (PyLong_CheckExact(a)) {
      rc = int_arg(a, &values[i], i);
    } else if (PyFloat_CheckExact(a)) {
      values[i] = kc_any_float(PyFloat_AS_DOUBLE(a));
      rc = 0;
    } else {
      kcpy_slot* slot = &slots[dirty];
      rc = kcpy_arg_from_py(a, &values[i], slot, i);
      /* Memory the callee must not write, lent where it may write. */
      if (rc == 0 && slot->nowrite && !f->allow_readonly) {
        rc = check_nowrite(f, slot, i);
      }
      /* A slot is kept when it holds something to release, or the
       * DLTensor a borrowed tensor argument points to. */
      if (rc == 0 && (slot->clean || slot->heap_strides ||
                      values[i].type_index == KC_TYPE_DLTENSOR_PTR)) {
        ++dirty;
      }
    }
    if (rc < 0) {
      failed = 1;
      break;
    }
  }
  kc_status* st = NULL;
  kc_any ret = kc_any_none();
  if (!failed) {
    if (release_gil) {
      Py_BEGIN_ALLOW_THREADS
      st = kc_func_call(func, values, (int32_t)nargs, &ret);
      Py_END_ALLOW_THREADS
    } else {
      st = kc_func_call(func, values, (int32_t)nargs, &ret);
    }
  }
  for (Py_ssize_t i = 0; i < dirty; ++i) {
    if (slots[i].clean || slots[i].heap_strides) kcpy_slot_clean(&slots[i]);
  }
  if (values != values_inline) {
    PyMem_Free(values);
    PyMem_Free(slots);
  }
  if (failed) return NULL;
  if (st) return kcpy_raise(st);
  /* The commonest results inline; the rest in convert.c. */
  switch (ret.type_index) {
    case KC_TYPE_NONE: Py_RETURN_NONE;
    case KC_TYPE_INT: return PyLong_FromLongLong(ret.u.v_int64);
    case KC_TYPE_FLOAT: return PyFloat_FromDouble(ret.u.v_float64);
    case KC_TYPE_BOOL: return PyBool_FromLong(ret.u.v_int64 != 0);
    default: return kcpy_py_from_owned(&ret);
  }
}

/* ---- the Function type --------------------------------------------------------- */

static PyObject* func_vectorcall(PyObject* self, PyObject* const* args,
                                 size_t nargsf, PyObject* kwnames) {
  kcpy_func* f = (kcpy_func*)self;
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    PyErr_Format(PyExc_TypeError,
                 "%R: kcall functions take positional arguments only", self);
    return NULL;
  }
  return call_packed(f, args, PyVectorcall_NARGS(nargsf), f->release_gil);
}

PyObject* kcpy_func_wrap(kc_func* func, PyObject* name) {
  kcpy_func* self = PyObject_New(kcpy_func, &kcpy_func_type);
  if (!self) {
    kc_object_release(KC_OBJECT(func));
    return NULL;
  }
  self->vectorcall = func_vectorcall;
  self->func = func;
  self->name = Py_XNewRef(name);
  self->release_gil = 1;
  self->allow_readonly = 0;
  memset(&self->fast_def, 0, sizeof self->fast_def);
  return (PyObject*)self;
}

static void func_dealloc(kcpy_func* self) {
  kc_object_release(KC_OBJECT(self->func));
  Py_XDECREF(self->name);
  PyObject_Free(self);
}

static PyObject* func_new(PyTypeObject* type, PyObject* args,
                          PyObject* kwargs) {
  (void)type;
  PyObject* callable;
  static char* names[] = {"callable", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Function", names,
                                   &callable)) {
    return NULL;
  }
  if (kcpy_func_check(callable)) return Py_NewRef(callable);
  if (!PyCallable_Check(callable)) {
    PyErr_Format(PyExc_TypeError,
                 "kcall.Function: expected a callable, got %.100s",
                 Py_TYPE(callable)->tp_name);
    return NULL;
  }
  kc_func* f = kcpy_func_from_callable(callable);
  return f ? kcpy_func_wrap(f, NULL) : NULL;
}

static PyObject* func_repr(kcpy_func* self) {
  if (self->name) return PyUnicode_FromFormat("<kcall.Function %R>", self->name);
  PyObject* callable = kcpy_func_get_callable(self->func);
  if (callable) return PyUnicode_FromFormat("<kcall.Function wrapping %R>", callable);
  return PyUnicode_FromFormat("<kcall.Function at %p>", (void*)self->func);
}

static PyObject* func_richcompare(PyObject* a, PyObject* b, int op) {
  if (!kcpy_func_check(b) || (op != Py_EQ && op != Py_NE)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  int same = ((kcpy_func*)a)->func == ((kcpy_func*)b)->func;
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static Py_hash_t func_hash(kcpy_func* self) {
  return _Py_HashPointer(self->func);
}

/* ---- fast(): a built-in function ------------------------------------------------ */
/*
 * CPython calls its own built-in functions through a specialised path that
 * other callables do not get (about 6 ns less per call), so fast() hands
 * out one: a builtin_function_or_method whose self is this Function. It
 * never releases the GIL.
 */

static PyObject* fast_call(PyObject* self, PyObject* const* args,
                           Py_ssize_t nargs) {
  return call_packed((const kcpy_func*)self, args, nargs, 0);
}

static PyObject* func_fast(kcpy_func* self, PyObject* unused) {
  (void)unused;
  if (!self->fast_def.ml_meth) {
    const char* name = self->name ? PyUnicode_AsUTF8(self->name) : NULL;
    if (self->name && !name) return NULL;
    self->fast_def.ml_name = name ? name : "kcall_function";
    self->fast_def.ml_meth = (PyCFunction)(void (*)(void))fast_call;
    self->fast_def.ml_flags = METH_FASTCALL;
    self->fast_def.ml_doc =
        "A kcall function called without releasing the GIL (see "
        "kcall.Function.fast).";
  }
  /* The built-in holds a reference to self, and so keeps fast_def. */
  return PyCFunction_NewEx(&self->fast_def, (PyObject*)self, NULL);
}

static PyMethodDef func_methods[] = {
    {"fast", (PyCFunction)func_fast, METH_NOARGS,
     "fast()\n--\n\nA plain built-in function that calls this one without "
     "releasing the GIL.\nCPython calls built-ins through its quickest path, "
     "so this is the\ncheapest way to call a short function in a hot loop. "
     "Never use it for\na function that waits for another thread which "
     "calls back into\nPython: that thread would wait for the GIL forever."},
    {NULL, NULL, 0, NULL},
};

static PyObject* get_name(kcpy_func* self, void* unused) {
  (void)unused;
  return Py_NewRef(self->name ? self->name : Py_None);
}

static PyObject* get_release_gil(kcpy_func* self, void* unused) {
  (void)unused;
  return PyBool_FromLong(self->release_gil);
}

static int set_release_gil(kcpy_func* self, PyObject* value, void* unused) {
  (void)unused;
  int truth = value ? PyObject_IsTrue(value) : -1;
  if (truth < 0) {
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_AttributeError, "release_gil cannot be deleted");
    }
    return -1;
  }
  self->release_gil = truth;
  return 0;
}

static PyObject* get_allow_readonly(kcpy_func* self, void* unused) {
  (void)unused;
  return PyBool_FromLong(self->allow_readonly);
}

static int set_allow_readonly(kcpy_func* self, PyObject* value,
                              void* unused) {
  (void)unused;
  int truth = value ? PyObject_IsTrue(value) : -1;
  if (truth < 0) {
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_AttributeError,
                      "allow_readonly cannot be deleted");
    }
    return -1;
  }
  self->allow_readonly = truth;
  return 0;
}

static PyObject* get_writes(kcpy_func* self, void* unused) {
  (void)unused;
  return PyLong_FromUnsignedLongLong(kc_func_get_writes(self->func));
}

static PyObject* get_callable(kcpy_func* self, void* unused) {
  (void)unused;
  PyObject* c = kcpy_func_get_callable(self->func);
  return Py_NewRef(c ? c : Py_None);
}

static PyGetSetDef func_getset[] = {
    {"name", (getter)get_name, NULL,
     "The registry name it was looked up by, or None.", NULL},
    {"release_gil", (getter)get_release_gil, (setter)set_release_gil,
     "Whether calls release the GIL while the function runs (default True).\n"
     "Set it to False on a handle to a function that is short and never\n"
     "waits for another thread that calls back into Python: it saves about\n"
     "40 ns a call, and such a callback would deadlock.",
     NULL},
    {"allow_readonly", (getter)get_allow_readonly,
     (setter)set_allow_readonly,
     "Whether calls lend read-only memory (NumPy writeable=False, buffers\n"
     "over bytes, read-only Tensors) and self-overlapping memory (stride\n"
     "0, as np.broadcast_to makes) to arguments the function may write\n"
     "(default False: such a call raises ValueError). Set it on a handle to\n"
     "a function known to only read them; see also `writes`.",
     NULL},
    {"writes", (getter)get_writes, NULL,
     "The function's declaration of the tensor arguments it may write, as\n"
     "a mask: bit i for argument i, bit 63 for 63 and later\n"
     "(kc_func_set_writes; 2**64 - 1, any argument, unless it declared\n"
     "less).",
     NULL},
    {"callable", (getter)get_callable, NULL,
     "The Python callable this function calls, or None for a native one.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject kcpy_func_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kcall.Function",
    .tp_basicsize = sizeof(kcpy_func),
    .tp_dealloc = (destructor)func_dealloc,
    .tp_vectorcall_offset = offsetof(kcpy_func, vectorcall),
    .tp_repr = (reprfunc)func_repr,
    .tp_hash = (hashfunc)func_hash,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Function(callable)\n--\n\n"
              "A kcall packed function. kcall.get_func(name) finds a "
              "registered one;\nFunction(callable) makes a Python callable "
              "into one that C code can\ncall. Calls take positional "
              "arguments: None, bool, int, float, str,\nbytes, arrays, "
              "functions, callables, lists and tuples.",
    .tp_richcompare = func_richcompare,
    .tp_methods = func_methods,
    .tp_getset = func_getset,
    .tp_new = func_new,
};

int kcpy_func_init_type(PyObject* module) {
  if (PyType_Ready(&kcpy_func_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Function", (PyObject*)&kcpy_func_type);
}

/* ---- Python callables as packed functions ------------------------------------------ */

/* A callback's argument: borrowed tensors become views (recorded in
 * `views` to be expired after the call), the rest as convert.c makes
 * them. */
static PyObject* callback_arg(const kc_any* a, PyObject** views,
                              int32_t* num_views) {
  if (a->type_index == KC_TYPE_DLTENSOR_PTR && a->u.v_dltensor) {
    PyObject* view = kcpy_tensor_borrow(a->u.v_dltensor, 1);
    if (view) views[(*num_views)++] = view;
    return Py_XNewRef(view);
  }
  return kcpy_py_from_arg(a, NULL);
}

/* The bytes [lo, hi) a tensor's elements lie in (hi == lo when empty). */
static void byte_range(const DLTensor* dl, uintptr_t* lo, uintptr_t* hi) {
  uintptr_t base = (uintptr_t)dl->data + (uintptr_t)dl->byte_offset;
  int64_t item = (int64_t)kc_dtype_get_size(dl->dtype);
  int64_t low = 0, high = item, running = 1;
  for (int32_t i = dl->ndim - 1; i >= 0; --i) {
    int64_t n = dl->shape[i];
    int64_t stride = dl->strides ? dl->strides[i] : running;
    running *= n;
    if (n == 0) {
      *lo = *hi = base;
      return;
    }
    int64_t span = stride * (n - 1) * item;
    if (span < 0) low += span;
    else high += span;
  }
  *lo = base + (uintptr_t)low;
  *hi = base + (uintptr_t)high;
}

/* True when the tensor `v` holds shares memory with a tensor lent in
 * `args` (on the same device): a result made over the caller's memory
 * (through data_ptr, say) that would outlive it. */
static int over_lent(const kc_any* v, const kc_any* args, int32_t nargs) {
  if (v->type_index != KC_TYPE_TENSOR) return 0;
  const DLTensor* r = kc_tensor_get_dltensor((const kc_tensor*)(void*)v->u.v_obj);
  uintptr_t rlo, rhi;
  byte_range(r, &rlo, &rhi);
  for (int32_t i = 0; i < nargs; ++i) {
    const DLTensor* a = args[i].u.v_dltensor;
    if (args[i].type_index != KC_TYPE_DLTENSOR_PTR || !a ||
        a->device.device_type != r->device.device_type ||
        a->device.device_id != r->device.device_id) {
      continue;
    }
    uintptr_t alo, ahi;
    byte_range(a, &alo, &ahi);
    if (rlo < ahi && alo < rhi) return 1;
  }
  return 0;
}

/* Refuses a result (or an item of a list result) over lent memory. */
static int check_result(kc_any* ret, const kc_any* args, int32_t nargs) {
  int bad = over_lent(ret, args, nargs);
  if (!bad && ret->type_index == KC_TYPE_ARRAY) {
    const kc_array* a = (const kc_array*)(void*)ret->u.v_obj;
    for (size_t i = 0; !bad && i < kc_array_get_size(a); ++i) {
      bad = over_lent(kc_array_get_item(a, i), args, nargs);
    }
  }
  if (!bad) return 0;
  kc_any_release(ret);
  *ret = kc_any_none();
  PyErr_SetString(PyExc_ValueError,
                  "the callback's result shares memory with a tensor lent "
                  "to the callback, which belongs to the caller and is "
                  "lent for the duration of the call only; return a copy "
                  "(numpy.array(x))");
  return -1;
}

static kc_status* py_trampoline(void* self, const kc_any* args, int32_t nargs,
                                kc_any* ret) {
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject* stack_inline[2 * INLINE_ARGS];
  PyObject** stack = stack_inline;
  if (nargs > INLINE_ARGS) {
    stack = PyMem_Malloc(2 * sizeof(PyObject*) * (size_t)nargs);
    if (!stack) PyErr_NoMemory();
  }
  PyObject* result = NULL;
  if (stack) {
    PyObject** views = stack + (nargs > INLINE_ARGS ? nargs : INLINE_ARGS);
    int32_t done = 0, num_views = 0;
    for (; done < nargs; ++done) {
      stack[done] = callback_arg(&args[done], views, &num_views);
      if (!stack[done]) break;
    }
    if (done == nargs) {
      result = PyObject_Vectorcall((PyObject*)self, stack, (size_t)nargs,
                                   NULL);
    }
    for (int32_t i = 0; i < done; ++i) Py_DECREF(stack[i]);
    /* A view the callback kept stops working: its memory is the
     * caller's. */
    for (int32_t i = 0; i < num_views; ++i) {
      kcpy_tensor_expire(views[i]);
      Py_DECREF(views[i]);
    }
    if (stack != stack_inline) PyMem_Free(stack);
  }
  kc_status* st = NULL;
  if (!result) {
    st = kcpy_status_from_exception();
  } else {
    if (result != Py_None &&
        (kcpy_owned_from_py(result, ret,
                            kcpy_what_text("the callback's result")) < 0 ||
         check_result(ret, args, nargs) < 0)) {
      st = kcpy_status_from_exception();
    }
    Py_DECREF(result);
  }
  PyGILState_Release(g);
  return st;
}

static void py_release(void* self) {
  /* The last reference may go on any thread; during interpreter shutdown
   * the object is left alone rather than touched without a runtime. */
  if (!Py_IsInitialized() || kcpy_finalizing()) return;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject*)self);
  PyGILState_Release(g);
}

kc_func* kcpy_func_from_callable(PyObject* callable) {
  kc_func* f = NULL;
  Py_INCREF(callable);
  kc_status* st =
      kc_func_create(NULL, py_trampoline, callable, py_release, &f);
  if (st) {
    kcpy_raise(st);
    return NULL;
  }
  return f;
}

/* The function last made for a callable passed as an argument, and that
 * callable (both held; guarded by the GIL): a loop passing the same
 * callback each time reuses one function instead of making one a call. */
static PyObject* last_callable;
static kc_func* last_func;

kc_func* kcpy_func_for_argument(PyObject* callable) {
  if (callable == last_callable) {
    kc_object_retain(KC_OBJECT(last_func));
    return last_func;
  }
  kc_func* f = kcpy_func_from_callable(callable);
  if (!f) return NULL;
  kc_func* old = last_func;
  last_func = f;
  last_callable = callable; /* f holds the reference */
  kc_object_retain(KC_OBJECT(f));
  kc_object_release(KC_OBJECT(old));
  return f;
}

PyObject* kcpy_func_get_callable(const kc_func* func) {
  const kc_func_prefix* p = (const kc_func_prefix*)(const void*)func;
  return p && p->fn == py_trampoline ? (PyObject*)p->self : NULL;
}
