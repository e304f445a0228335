/*
 * Python arrays as DLTensors.
 *
 * Three ways in, fastest first:
 *   - NumPy arrays are read directly from the array object, whose layout is
 *     part of NumPy's stable C ABI (data, nd, dimensions, strides, base,
 *     descr, flags; the descr's type_num). The layout is checked once
 *     against what NumPy reports through Python before it is trusted; if
 *     the check fails, arrays take the buffer protocol instead.
 *   - Other objects with the buffer protocol (array.array, memoryview,
 *     bytearray, ...).
 *   - Objects with __dlpack__ (PyTorch, JAX, CuPy, ...), DLPack 1.x
 *     (versioned) first, the legacy capsule otherwise.
 * Call arguments borrow (kcpy_array_view); kcall tensors made from arrays
 * (kcpy_array_to_tensor) keep the owner alive through a DLPack deleter.
 */
#include "kcpy.h"

#include <string.h>

/* ---- DLPack capsules ----------------------------------------------------------- */

static const char capsule_versioned[] = "dltensor_versioned";
static const char capsule_legacy[] = "dltensor";
static const char capsule_used_versioned[] = "used_dltensor_versioned";
static const char capsule_used_legacy[] = "used_dltensor";

/* ---- dtypes ---------------------------------------------------------------------- */

static DLDataType make_dtype(uint8_t code, uint8_t bits) {
  return kc_dtype_make(code, bits, 1);
}

PyObject* kcpy_dtype_name(DLDataType t) {
  static const struct {
    uint8_t code, bits;
    const char* name;
  } names[] = {
      {kDLBool, 8, "bool"},         {kDLInt, 8, "int8"},
      {kDLInt, 16, "int16"},        {kDLInt, 32, "int32"},
      {kDLInt, 64, "int64"},        {kDLUInt, 8, "uint8"},
      {kDLUInt, 16, "uint16"},      {kDLUInt, 32, "uint32"},
      {kDLUInt, 64, "uint64"},      {kDLFloat, 16, "float16"},
      {kDLFloat, 32, "float32"},    {kDLFloat, 64, "float64"},
      {kDLBfloat, 16, "bfloat16"},  {kDLComplex, 64, "complex64"},
      {kDLComplex, 128, "complex128"},
  };
  if (t.lanes == 1) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
      if (names[i].code == t.code && names[i].bits == t.bits) {
        return PyUnicode_FromString(names[i].name);
      }
    }
  }
  char buf[64];
  kc_dtype_format(t, buf, sizeof buf);
  return PyUnicode_FromString(buf);
}

/* ---- NumPy, read directly ---------------------------------------------------------- */

/* The leading fields of NumPy's array object and dtype object, as NumPy's
 * C API declares them (unchanged from NumPy 1.7 to 2.x for these
 * fields). */
typedef struct np_array {
  PyObject_HEAD
  char* data;
  int nd;
  Py_ssize_t* dimensions;
  Py_ssize_t* strides;
  PyObject* base;
  PyObject* descr;
  int flags;
} np_array;

typedef struct np_descr {
  PyObject_HEAD
  PyTypeObject* typeobj;
  char kind;
  char type;
  char byteorder;
  char unused_flags;
  int type_num;
} np_descr;

#define NP_C_CONTIGUOUS 0x0001
#define NP_WRITEABLE 0x0400

_Static_assert(sizeof(Py_ssize_t) == sizeof(int64_t),
               "NumPy dims are read as int64_t");

/* dtype of a NumPy type number; bits 0 for one kcall does not take. */
static DLDataType np_dtype(int type_num) {
  switch (type_num) {
    case 0: return make_dtype(kDLBool, 8);
    case 1: return make_dtype(kDLInt, 8);
    case 2: return make_dtype(kDLUInt, 8);
    case 3: return make_dtype(kDLInt, 16);
    case 4: return make_dtype(kDLUInt, 16);
    case 5: return make_dtype(kDLInt, 32);
    case 6: return make_dtype(kDLUInt, 32);
    case 7: return make_dtype(kDLInt, (uint8_t)(8 * sizeof(long)));
    case 8: return make_dtype(kDLUInt, (uint8_t)(8 * sizeof(long)));
    case 9: return make_dtype(kDLInt, 64);
    case 10: return make_dtype(kDLUInt, 64);
    case 11: return make_dtype(kDLFloat, 32);
    case 12: return make_dtype(kDLFloat, 64);
    case 14: return make_dtype(kDLComplex, 64);
    case 15: return make_dtype(kDLComplex, 128);
    case 23: return make_dtype(kDLFloat, 16);
    default: return make_dtype(0, 0);
  }
}

static PyTypeObject* np_type;    /* numpy.ndarray, once verified */
static PyTypeObject* np_generic; /* numpy.generic, the scalars' base */
static int np_state;             /* 0 unseen, 1 verified, -1 refused */

/* Checks the layout above against one array NumPy describes itself. */
static int np_verify(PyObject* numpy) {
  PyObject* a = PyObject_CallMethod(numpy, "zeros", "((ii)s)", 2, 3, "float32");
  PyObject* b = Py_XNewRef(a);
  PyObject* iface =
      b ? PyObject_GetAttrString(b, "__array_interface__") : NULL;
  PyObject* data = iface ? PyDict_GetItemString(iface, "data") : NULL;
  int ok = 0;
  if (b && Py_TYPE(b) == np_type && data && PyTuple_Check(data)) {
    void* ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    const np_array* arr = (const np_array*)b;
    const np_descr* d = (const np_descr*)arr->descr;
    ok = ptr == arr->data && arr->nd == 2 && arr->dimensions[0] == 2 &&
         arr->dimensions[1] == 3 && arr->strides[0] == 12 &&
         arr->strides[1] == 4 && (arr->flags & NP_C_CONTIGUOUS) &&
         (arr->flags & NP_WRITEABLE) && d && d->type_num == 11 &&
         d->kind == 'f';
  }
  Py_XDECREF(a);
  Py_XDECREF(b);
  Py_XDECREF(iface);
  PyErr_Clear();
  return ok;
}

/* The first time a NumPy object is met: finds NumPy's types and checks
 * the layout. */
static void np_discover(void) {
  np_state = -1;
  PyObject* numpy = PyImport_ImportModule("numpy");
  PyObject* nd = numpy ? PyObject_GetAttrString(numpy, "ndarray") : NULL;
  PyObject* gen = numpy ? PyObject_GetAttrString(numpy, "generic") : NULL;
  if (nd && gen && PyType_Check(nd) && PyType_Check(gen)) {
    np_type = (PyTypeObject*)Py_NewRef(nd);
    np_generic = (PyTypeObject*)Py_NewRef(gen);
    if (np_verify(numpy)) np_state = 1;
  }
  Py_XDECREF(numpy);
  Py_XDECREF(nd);
  Py_XDECREF(gen);
  PyErr_Clear();
}

static int np_seen(PyObject* obj) {
  if (np_state == 0 && strncmp(Py_TYPE(obj)->tp_name, "numpy.", 6) == 0) {
    np_discover();
  }
  return np_state == 1;
}

PyTypeObject* kcpy_numpy_type(void) { return np_state == 1 ? np_type : NULL; }

/* True when `obj` is a NumPy array whose layout we can read. */
static int is_numpy(PyObject* obj) {
  if (!np_seen(obj)) return 0;
  PyTypeObject* t = Py_TYPE(obj);
  return t == np_type || PyType_IsSubtype(t, np_type);
}

int kcpy_numpy_scalar(PyObject* obj, kc_any* out) {
  if (!np_seen(obj) || !PyObject_TypeCheck(obj, np_generic)) return 0;
  const char* name = Py_TYPE(obj)->tp_name;
  if (strcmp(name, "numpy.bool") == 0 || strcmp(name, "numpy.bool_") == 0) {
    int truth = PyObject_IsTrue(obj);
    if (truth < 0) return -1;
    *out = kc_any_bool(truth);
    return 1;
  }
  if (PyIndex_Check(obj)) {
    PyObject* index = PyNumber_Index(obj);
    if (!index) return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (overflow) {
      PyErr_Format(PyExc_OverflowError, "%R does not fit in a 64-bit int",
                   obj);
      return -1;
    }
    *out = kc_any_int(v);
    return 1;
  }
  if (PyComplex_Check(obj) || strncmp(name, "numpy.complex", 13) == 0) {
    return 0; /* no complex scalar in kc_any: a 0-d array */
  }
  double d = PyFloat_AsDouble(obj);
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  *out = kc_any_float(d);
  return 1;
}

static int set_strides(kcpy_slot* slot, int32_t ndim) {
  if (ndim <= KCPY_SLOT_NDIM) {
    slot->dl.strides = slot->strides;
    return 0;
  }
  slot->heap_strides = PyMem_Malloc(sizeof(int64_t) * (size_t)ndim);
  if (!slot->heap_strides) {
    PyErr_NoMemory();
    return -1;
  }
  slot->dl.strides = slot->heap_strides;
  return 0;
}

/* Byte strides -> element strides; every stride must be a whole number of
 * elements. */
static int element_strides(kcpy_slot* slot, const Py_ssize_t* bytes,
                           int32_t ndim, Py_ssize_t itemsize,
                           kcpy_what what) {
  if (set_strides(slot, ndim) < 0) return -1;
  for (int32_t i = 0; i < ndim; ++i) {
    if (bytes[i] % itemsize != 0) {
      PyErr_Format(PyExc_ValueError,
                   "%s: stride %d is %zd bytes, not a multiple of the "
                   "element size (%zd bytes); kcall strides count elements",
                   KCPY_WHAT(what), (int)i, bytes[i], itemsize);
      return -1;
    }
    slot->dl.strides[i] = bytes[i] / itemsize;
  }
  return 0;
}

static int check_ndim(int nd, kcpy_what what) {
  if (nd > KC_TENSOR_MAX_NDIM) {
    PyErr_Format(PyExc_ValueError,
                 "%s: an array of %d dimensions; kcall takes at most %d", KCPY_WHAT(what),
                 nd, KC_TENSOR_MAX_NDIM);
    return -1;
  }
  return 0;
}

static int numpy_view(PyObject* obj, kcpy_slot* slot, kcpy_what what) {
  const np_array* arr = (const np_array*)obj;
  const np_descr* d = (const np_descr*)arr->descr;
  DLDataType dtype = np_dtype(d->type_num);
  if (dtype.bits == 0) {
    PyObject* name = PyObject_Str(arr->descr);
    /* ml_dtypes' narrow types, one byte an element: what a program's
     * parameter of StableHLO's i4 or f8 type takes is those bytes. */
    static const char* const narrow[] = {"int4", "uint4", "int2", "uint2", "float8_", "float6_",
                                         "float4_"};
    const char* hint = "";
    for (size_t i = 0; name && i < sizeof narrow / sizeof narrow[0] && !*hint; ++i) {
      PyObject* prefix = PyUnicode_FromString(narrow[i]);
      if (prefix && PyUnicode_Tailmatch(name, prefix, 0, PY_SSIZE_T_MAX, -1) == 1) {
        hint = narrow[i][0] == 'f' ? "; a program's parameter of that StableHLO type takes its "
                                     "bits: x.view(np.uint8)"
                                   : "; a program's parameter of that StableHLO type takes its "
                                     "bytes: x.view(np.int8) or x.view(np.uint8)";
      }
      Py_XDECREF(prefix);
    }
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%s: an array of dtype %S, which kcall does not take "
                 "(bool, ints, floats and complex numbers only)%s",
                 KCPY_WHAT(what), name ? name : Py_None, hint);
    Py_XDECREF(name);
    return -1;
  }
  if (d->byteorder == '>') {
    PyErr_Format(PyExc_ValueError,
                 "%s: a big-endian array; kcall takes native byte order only "
                 "(convert it with .astype(dtype.newbyteorder('=')))",
                 KCPY_WHAT(what));
    return -1;
  }
  if (check_ndim(arr->nd, what) < 0) return -1;
  slot->dl.data = arr->data;
  slot->dl.device = kc_device_cpu();
  slot->dl.ndim = arr->nd;
  slot->dl.dtype = dtype;
  slot->dl.shape = (int64_t*)arr->dimensions;
  slot->dl.byte_offset = 0;
  slot->dl.strides = NULL;
  if (!(arr->flags & NP_WRITEABLE)) slot->nowrite = KCPY_NOWRITE_READONLY;
  if (!(arr->flags & NP_C_CONTIGUOUS)) {
    Py_ssize_t itemsize = (Py_ssize_t)kc_dtype_get_size(dtype);
    if (element_strides(slot, arr->strides, arr->nd, itemsize, what) < 0) {
      return -1;
    }
    if (!slot->nowrite && kcpy_dl_overlaps(&slot->dl)) {
      slot->nowrite = KCPY_NOWRITE_OVERLAP;
    }
  }
  return 1;
}

/* ---- the buffer protocol ----------------------------------------------------------- */

/* dtype of a struct-module format holding one item; bits 0 otherwise. */
static DLDataType format_dtype(const char* f, Py_ssize_t itemsize) {
  int standard = 0; /* '<', '=': standard sizes ('l' is 4 bytes) */
  if (!f) f = "B";
  if (*f == '@') {
    ++f;
  } else if (*f == '=' || *f == '<') {
    standard = 1;
    ++f;
  } else if (*f == '>' || *f == '!') {
    return make_dtype(0, 0); /* big-endian */
  }
  DLDataType t = make_dtype(0, 0);
  if (f[0] == 'Z' && f[1] && !f[2]) {
    if (f[1] == 'f') t = make_dtype(kDLComplex, 64);
    if (f[1] == 'd') t = make_dtype(kDLComplex, 128);
  } else if (f[0] && !f[1]) {
    switch (f[0]) {
      case '?': t = make_dtype(kDLBool, 8); break;
      case 'b': t = make_dtype(kDLInt, 8); break;
      case 'B': t = make_dtype(kDLUInt, 8); break;
      case 'h': t = make_dtype(kDLInt, 16); break;
      case 'H': t = make_dtype(kDLUInt, 16); break;
      case 'i': t = make_dtype(kDLInt, 32); break;
      case 'I': t = make_dtype(kDLUInt, 32); break;
      case 'l': t = make_dtype(kDLInt, standard ? 32 : 8 * sizeof(long)); break;
      case 'L': t = make_dtype(kDLUInt, standard ? 32 : 8 * sizeof(long)); break;
      case 'q': t = make_dtype(kDLInt, 64); break;
      case 'Q': t = make_dtype(kDLUInt, 64); break;
      case 'n': t = make_dtype(kDLInt, 8 * sizeof(Py_ssize_t)); break;
      case 'N': t = make_dtype(kDLUInt, 8 * sizeof(size_t)); break;
      case 'e': t = make_dtype(kDLFloat, 16); break;
      case 'f': t = make_dtype(kDLFloat, 32); break;
      case 'd': t = make_dtype(kDLFloat, 64); break;
      default: break;
    }
  }
  if (t.bits && (Py_ssize_t)kc_dtype_get_size(t) != itemsize) {
    return make_dtype(0, 0);
  }
  return t;
}

static int buffer_view(PyObject* obj, kcpy_slot* slot, kcpy_what what) {
  Py_buffer* view = PyMem_Malloc(sizeof *view);
  if (!view) {
    PyErr_NoMemory();
    return -1;
  }
  if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO) < 0) {
    PyMem_Free(view);
    return -1;
  }
  slot->clean = KCPY_CLEAN_BUFFER;
  slot->p = view;
  if (view->readonly) slot->nowrite = KCPY_NOWRITE_READONLY;
  DLDataType dtype = format_dtype(view->format, view->itemsize);
  if (dtype.bits == 0) {
    PyErr_Format(PyExc_TypeError,
                 "%s: a buffer of format '%s' (item size %zd), which kcall "
                 "does not take (native bool, ints, floats and complex "
                 "numbers only)",
                 KCPY_WHAT(what), view->format ? view->format : "B", view->itemsize);
    return -1;
  }
  if (check_ndim(view->ndim, what) < 0) return -1;
  slot->dl.data = view->buf;
  slot->dl.device = kc_device_cpu();
  slot->dl.ndim = view->ndim;
  slot->dl.dtype = dtype;
  slot->dl.byte_offset = 0;
  slot->dl.strides = NULL;
  if (view->ndim == 0) {
    slot->dl.shape = NULL;
    return 1;
  }
  slot->dl.shape = (int64_t*)view->shape;
  if (view->strides &&
      !PyBuffer_IsContiguous(view, 'C')) {
    if (element_strides(slot, view->strides, view->ndim, view->itemsize,
                        what) < 0) {
      return -1;
    }
    if (!slot->nowrite && kcpy_dl_overlaps(&slot->dl)) {
      slot->nowrite = KCPY_NOWRITE_OVERLAP;
    }
  }
  return 1;
}

/* ---- __dlpack__ ------------------------------------------------------------------------ */

/* obj.__dlpack_device__() into *out: 1, 0 when obj has none, -1 with an
 * exception. */
static int dlpack_device(PyObject* obj, DLDevice* out) {
  if (!PyObject_HasAttrString(obj, "__dlpack_device__")) return 0;
  PyObject* pair = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
  if (!pair) return -1;
  int type = 0, id = 0;
  int ok = PyArg_ParseTuple(pair, "ii:__dlpack_device__", &type, &id);
  Py_DECREF(pair);
  if (!ok) return -1;
  out->device_type = (DLDeviceType)type;
  out->device_id = id;
  return 1;
}

/* Calls obj.__dlpack__, asking for DLPack 1.x and falling back to the
 * legacy form for producers that do not know max_version. Returns the
 * capsule (new reference), NULL with an exception, or NULL without one when
 * `obj` has no __dlpack__. */
static PyObject* dlpack_capsule(PyObject* obj) {
  /* A look at the type first: most objects have no __dlpack__, and a
   * failed attribute lookup would build an exception. */
  static PyObject* name;
  if (!name && !(name = PyUnicode_InternFromString("__dlpack__"))) {
    return NULL;
  }
  if (!_PyType_Lookup(Py_TYPE(obj), name)) return NULL;
  /* A CUDA array is made ready on the stream kcall will use (the
   * protocol's `stream`, the consumer's): the call's, or kcall's own. */
  PyObject* stream = NULL;
  DLDevice device;
  int on_device = dlpack_device(obj, &device);
  if (on_device < 0) return NULL;
  if (on_device && (device.device_type == kDLCUDA ||
                    device.device_type == kDLCUDAManaged)) {
    stream = kcpy_consumer_stream_arg(device);
    if (!stream) return NULL;
  }
  PyObject* method = PyObject_GetAttr(obj, name);
  if (!method) {
    Py_XDECREF(stream);
    return NULL;
  }
  PyObject* kwargs = Py_BuildValue("{s:(ii)}", "max_version",
                                   DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  if (kwargs && stream && PyDict_SetItemString(kwargs, "stream", stream) < 0) {
    Py_CLEAR(kwargs);
  }
  PyObject* empty = PyTuple_New(0);
  PyObject* capsule =
      kwargs && empty ? PyObject_Call(method, empty, kwargs) : NULL;
  if (!capsule && kwargs && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    PyDict_DelItemString(kwargs, "max_version");
    capsule = PyObject_Call(method, empty, kwargs);
  }
  Py_XDECREF(stream);
  Py_XDECREF(kwargs);
  Py_XDECREF(empty);
  Py_DECREF(method);
  return capsule;
}

/* The DLTensor inside a capsule, which stays owned by the capsule. */
static DLTensor* capsule_dltensor(PyObject* capsule, kcpy_what what) {
  if (PyCapsule_IsValid(capsule, capsule_versioned)) {
    DLManagedTensorVersioned* m =
        PyCapsule_GetPointer(capsule, capsule_versioned);
    if (m->version.major != 1) {
      PyErr_Format(PyExc_ValueError,
                   "%s: __dlpack__ gave DLPack %u.%u; kcall reads major "
                   "version 1",
                   KCPY_WHAT(what), m->version.major, m->version.minor);
      return NULL;
    }
    return &m->dl_tensor;
  }
  if (PyCapsule_IsValid(capsule, capsule_legacy)) {
    DLManagedTensor* m = PyCapsule_GetPointer(capsule, capsule_legacy);
    return &m->dl_tensor;
  }
  const char* name = PyCapsule_CheckExact(capsule)
                         ? PyCapsule_GetName(capsule)
                         : NULL;
  if (name && strncmp(name, "used_", 5) == 0) {
    PyErr_Format(PyExc_ValueError,
                 "%s: a DLPack capsule that was already consumed (a capsule "
                 "can be used once)",
                 KCPY_WHAT(what));
  } else {
    PyErr_Format(PyExc_TypeError,
                 "%s: expected a DLPack capsule ('dltensor_versioned' or "
                 "'dltensor'), got %.100s%s%s%s",
                 KCPY_WHAT(what), Py_TYPE(capsule)->tp_name,
                 name ? " named '" : "", name ? name : "", name ? "'" : "");
  }
  return NULL;
}

static int dlpack_view(PyObject* obj, kcpy_slot* slot, kcpy_what what) {
  PyObject* capsule = dlpack_capsule(obj);
  if (!capsule) return PyErr_Occurred() ? -1 : 0;
  /* Unconsumed, the capsule's destructor frees the tensor when we drop it
   * after the call, as the DLPack protocol says. */
  slot->clean = KCPY_CLEAN_PYOBJ;
  slot->p = capsule;
  DLTensor* dl = capsule_dltensor(capsule, what);
  if (!dl) return -1;
  if (check_ndim(dl->ndim, what) < 0) return -1;
  slot->dl = *dl;
  if (PyCapsule_IsValid(capsule, capsule_versioned) &&
      (((DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule,
                                                        capsule_versioned))
           ->flags &
       DLPACK_FLAG_BITMASK_READ_ONLY)) {
    slot->nowrite = KCPY_NOWRITE_READONLY;
  } else if (dl->strides && kcpy_dl_overlaps(dl)) {
    slot->nowrite = KCPY_NOWRITE_OVERLAP;
  }
  return 1;
}

/* ---- memory that must not be written ------------------------------------------------- */

int kcpy_dl_overlaps(const DLTensor* dl) {
  if (!dl->strides) return 0;
  /* The dims of extent > 1 by |stride|, smallest first (insertion sort:
   * ranks are small); each must step past everything the smaller ones
   * reach. */
  int64_t stride[KC_TENSOR_MAX_NDIM], extent[KC_TENSOR_MAX_NDIM];
  int32_t n = 0;
  for (int32_t i = 0; i < dl->ndim && i < KC_TENSOR_MAX_NDIM; ++i) {
    if (dl->shape[i] <= 1) {
      if (dl->shape[i] == 0) return 0; /* no elements at all */
      continue;
    }
    int64_t s = dl->strides[i] < 0 ? -dl->strides[i] : dl->strides[i];
    if (s == 0) return 1;
    int32_t j = n++;
    for (; j > 0 && stride[j - 1] > s; --j) {
      stride[j] = stride[j - 1];
      extent[j] = extent[j - 1];
    }
    stride[j] = s;
    extent[j] = dl->shape[i];
  }
  int64_t reach = 0; /* the largest offset the smaller dims reach */
  for (int32_t i = 0; i < n; ++i) {
    if (stride[i] <= reach) return 1;
    int64_t span;
    if (__builtin_mul_overflow(stride[i], extent[i] - 1, &span) ||
        __builtin_add_overflow(reach, span, &reach)) {
      return 1;
    }
  }
  return 0;
}

int kcpy_nowrite_error(int nowrite, kcpy_what what, const char* callee,
                       const char* fix) {
  const char* why =
      nowrite == KCPY_NOWRITE_OVERLAP
          ? "self-overlapping memory (a stride of 0, as np.broadcast_to "
            "makes, or strides that reach one element twice), which "
            "cannot be written element by element"
          : "read-only memory (a NumPy array with writeable=False, a "
            "buffer over bytes, or a read-only kcall.Tensor)";
  if (fix) {
    PyErr_Format(PyExc_ValueError, "%s: %s, which %s writes; %s",
                 KCPY_WHAT(what), why, callee, fix);
    return -1;
  }
  PyErr_Format(PyExc_ValueError,
               "%s: %s, and %s may write it (it has not declared that it "
               "leaves this argument unwritten: kc_func_set_writes); pass a "
               "writable copy (numpy.array(x)), or set allow_readonly = "
               "True on the kcall.Function if it only reads it",
               KCPY_WHAT(what), why, callee);
  return -1;
}

/* ---- the entry points ----------------------------------------------------------------- */

void kcpy_slot_clean(kcpy_slot* slot) {
  switch (slot->clean) {
    case KCPY_CLEAN_OBJECT:
      kc_object_release(slot->p);
      break;
    case KCPY_CLEAN_PYOBJ:
      Py_DECREF((PyObject*)slot->p);
      break;
    case KCPY_CLEAN_BUFFER:
      PyBuffer_Release(slot->p);
      PyMem_Free(slot->p);
      break;
    default:
      break;
  }
  slot->clean = KCPY_CLEAN_NONE;
  if (slot->heap_strides) {
    PyMem_Free(slot->heap_strides);
    slot->heap_strides = NULL;
  }
}

/* 1 for objects whose buffer protocol can serve kcall, 0 for those that
 * DLPack carries instead, -1 with an exception. Not bytes; not a
 * kcall.Tensor in device memory; and not an object whose
 * __dlpack_device__ names device memory: JAX and CuPy arrays have the
 * buffer protocol but refuse it for GPU memory. */
static int host_buffer(PyObject* obj) {
  if (!PyObject_CheckBuffer(obj) || PyBytes_Check(obj)) return 0;
  if (PyMemoryView_Check(obj) || PyByteArray_Check(obj)) return 1;
  if (kcpy_tensor_check(obj)) {
    const kcpy_tensor* t = (const kcpy_tensor*)obj;
    return !(t->dl && !t->expired && t->dl->device.device_type != kDLCPU &&
             t->dl->device.device_type != kDLCUDAHost);
  }
  DLDevice device;
  int rc = dlpack_device(obj, &device);
  if (rc <= 0) return rc < 0 ? -1 : 1;
  return device.device_type == kDLCPU || device.device_type == kDLCUDAHost;
}

/* `rc` (a view's result) unless the view's data is not aligned to its
 * elements (NumPy and DLPack both allow that, as `x[1:].view(np.int32)`
 * over bytes makes): then -1 with ValueError and the slot cleaned, since
 * kernels load whole elements. */
static int aligned(int rc, kcpy_slot* slot, kcpy_what what) {
  if (rc <= 0) return rc;
  const DLTensor* dl = &slot->dl;
  uint64_t bytes = (uint64_t)dl->dtype.bits / 8;
  if (dl->dtype.code == kDLComplex) bytes /= 2; /* two parts, each aligned */
  if (bytes > 8) bytes = 8;
  uintptr_t at = (uintptr_t)dl->data + (uintptr_t)dl->byte_offset;
  if (bytes <= 1 || at % bytes == 0) return rc;
  kcpy_slot_clean(slot);
  PyErr_Format(PyExc_ValueError,
               "%s: its data (at %p) is not aligned to its %u-byte elements, "
               "which kcall's kernels read whole: pass an aligned copy (for "
               "NumPy, x.copy())",
               KCPY_WHAT(what), (void*)at, (unsigned)bytes);
  return -1;
}

int kcpy_array_view(PyObject* obj, kcpy_slot* slot, kcpy_what what) {
  if (is_numpy(obj)) return aligned(numpy_view(obj, slot, what), slot, what);
  int host = host_buffer(obj);
  if (host < 0) return -1;
  if (host) return aligned(buffer_view(obj, slot, what), slot, what);
  return aligned(dlpack_view(obj, slot, what), slot, what);
}

const DLTensor* kcpy_array_arg(PyObject* obj, kcpy_what what,
                               kcpy_slot* slots, Py_ssize_t* num_slots) {
  if (kcpy_tensor_check(obj) && ((kcpy_tensor*)obj)->dl &&
      !((kcpy_tensor*)obj)->expired) {
    return ((kcpy_tensor*)obj)->dl;
  }
  kcpy_slot* slot = &slots[(*num_slots)++];
  memset(slot, 0, sizeof *slot);
  int rc = kcpy_array_view(obj, slot, what);
  if (rc == 0) {
    PyErr_Format(PyExc_TypeError, "%s: expected an array, got %.100s",
                 KCPY_WHAT(what), Py_TYPE(obj)->tp_name);
  }
  return rc > 0 ? &slot->dl : NULL;
}

/* ---- owned tensors over Python arrays ------------------------------------------------- */

/* A DLPack 1.x managed tensor that keeps a Python object alive: the owner
 * of the memory, or a consumed legacy capsule's tensor. */
typedef struct py_managed {
  DLManagedTensorVersioned managed;
  PyObject* owner;
  DLManagedTensor* legacy; /* deleted with the wrapper, when set */
  int64_t dims[];          /* shape[ndim] then strides[ndim] */
} py_managed;

static void py_managed_delete(DLManagedTensorVersioned* self) {
  py_managed* m = (py_managed*)self;
  if (m->legacy && m->legacy->deleter) m->legacy->deleter(m->legacy);
  if (m->owner) {
    /* The last reference may go on any thread, even during shutdown. */
    if (Py_IsInitialized() && !kcpy_finalizing()) {
      PyGILState_STATE g = PyGILState_Ensure();
      Py_DECREF(m->owner);
      PyGILState_Release(g);
    }
  }
  PyMem_RawFree(m);
}

/* Copies `dl` (shape and strides included) into a managed wrapper that
 * holds `owner` (a new reference is taken). */
static py_managed* py_managed_create(const DLTensor* dl, PyObject* owner,
                                     uint64_t flags) {
  size_t n = (size_t)dl->ndim;
  py_managed* m = PyMem_RawCalloc(1, sizeof *m + 2 * n * sizeof(int64_t));
  if (!m) {
    PyErr_NoMemory();
    return NULL;
  }
  m->managed.version.major = 1;
  m->managed.version.minor = 1;
  m->managed.manager_ctx = m;
  m->managed.deleter = py_managed_delete;
  m->managed.flags = flags;
  m->managed.dl_tensor = *dl;
  int64_t* shape = m->dims;
  int64_t* strides = m->dims + n;
  for (size_t i = 0; i < n; ++i) shape[i] = dl->shape[i];
  m->managed.dl_tensor.shape = n ? shape : NULL;
  if (dl->strides) {
    for (size_t i = 0; i < n; ++i) strides[i] = dl->strides[i];
    m->managed.dl_tensor.strides = n ? strides : NULL;
  }
  m->owner = Py_XNewRef(owner);
  return m;
}

DLManagedTensorVersioned* kcpy_managed_wrap(const DLTensor* dl,
                                            PyObject* owner, uint64_t flags) {
  py_managed* m = py_managed_create(dl, owner, flags);
  return m ? &m->managed : NULL;
}

static kc_tensor* import_managed(DLManagedTensorVersioned* managed,
                                 kcpy_what what) {
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_import_dlpack(NULL, managed, &t);
  if (st) {
    managed->deleter(managed);
    kc_status_add_context(st, "%s", KCPY_WHAT(what));
    kcpy_raise(st);
    return NULL;
  }
  return t;
}

/* Takes the tensor out of a capsule (which becomes "used"). */
static kc_tensor* tensor_from_capsule(PyObject* capsule, kcpy_what what) {
  if (!capsule_dltensor(capsule, what)) return NULL;
  if (PyCapsule_IsValid(capsule, capsule_versioned)) {
    DLManagedTensorVersioned* m =
        PyCapsule_GetPointer(capsule, capsule_versioned);
    if (PyCapsule_SetName(capsule, capsule_used_versioned) < 0) return NULL;
    return import_managed(m, what);
  }
  DLManagedTensor* legacy = PyCapsule_GetPointer(capsule, capsule_legacy);
  if (PyCapsule_SetName(capsule, capsule_used_legacy) < 0) return NULL;
  py_managed* m = py_managed_create(&legacy->dl_tensor, NULL, 0);
  if (!m) {
    if (legacy->deleter) legacy->deleter(legacy);
    return NULL;
  }
  m->legacy = legacy;
  return import_managed(&m->managed, what);
}

kc_tensor* kcpy_array_to_tensor(PyObject* obj, kcpy_what what) {
  if (PyCapsule_CheckExact(obj)) return tensor_from_capsule(obj, what);
  kcpy_slot slot;
  memset(&slot, 0, sizeof slot);
  int is_array = 0;
  uint64_t flags = 0;
  if (is_numpy(obj)) {
    is_array = numpy_view(obj, &slot, what);
    if (!(((const np_array*)obj)->flags & NP_WRITEABLE)) {
      flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    }
  } else if ((is_array = host_buffer(obj)) < 0) {
    return NULL;
  } else if (is_array) {
    /* A memoryview holds the exporter's buffer for as long as it lives, so
     * that a bytearray or array.array cannot be resized under the tensor:
     * the memoryview is the owner. */
    PyObject* mv = PyMemoryView_FromObject(obj);
    if (!mv) return NULL;
    is_array = buffer_view(mv, &slot, what);
    if (is_array > 0 && ((Py_buffer*)slot.p)->readonly) {
      flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    }
    kc_tensor* t = NULL;
    if (is_array > 0) {
      py_managed* m = py_managed_create(&slot.dl, mv, flags);
      if (m) t = import_managed(&m->managed, what);
    }
    kcpy_slot_clean(&slot);
    Py_DECREF(mv);
    return t;
  } else {
    PyObject* capsule = dlpack_capsule(obj);
    if (!capsule) {
      if (!PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError,
                     "%s: expected an array (NumPy, the buffer protocol or "
                     "__dlpack__), got %.100s",
                     KCPY_WHAT(what), Py_TYPE(obj)->tp_name);
      }
      return NULL;
    }
    kc_tensor* t = tensor_from_capsule(capsule, what);
    Py_DECREF(capsule);
    return t;
  }
  kc_tensor* t = NULL;
  if (is_array > 0) {
    py_managed* m = py_managed_create(&slot.dl, obj, flags);
    if (m) t = import_managed(&m->managed, what);
  } else if (is_array == 0) {
    PyErr_Format(PyExc_TypeError, "%s: expected an array, got %.100s", KCPY_WHAT(what),
                 Py_TYPE(obj)->tp_name);
  }
  kcpy_slot_clean(&slot);
  return t;
}
