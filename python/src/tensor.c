/*
 * kcall.Tensor: a kcall tensor object in Python, or a view of a tensor a
 * C caller lent to a Python callback for the duration of the call.
 *
 * It speaks every array protocol: __dlpack__ / __dlpack_device__ (DLPack
 * 1.x, and the legacy capsule for consumers that do not ask for a version),
 * __array_interface__ and the buffer protocol, so np.asarray(t),
 * np.from_dlpack(t), torch.from_dlpack(t) and memoryview(t) share its
 * memory. Whatever they make keeps the tensor alive. A view lent to a
 * callback exports a copy instead (see "the copy a lent view's exports
 * share" below).
 */
#include "kcpy.h"

#include <string.h>

static PyObject* expired_error(void) {
  PyErr_SetString(PyExc_ValueError,
                  "kcall.Tensor: this tensor was lent to a Python callback "
                  "for the duration of one call, which has returned; copy "
                  "it (numpy.array(t)) during the call to keep its data");
  return NULL;
}

/* The DLTensor, or NULL with an exception for an expired view. */
static DLTensor* live(kcpy_tensor* self) {
  if (self->expired || !self->dl) {
    expired_error();
    return NULL;
  }
  return self->dl;
}

/* Why a call must not write `dl` (the tensor's shape and strides never
 * change, so this is worked out once). */
static int nowrite_of(const DLTensor* dl, int writable) {
  if (!writable) return KCPY_NOWRITE_READONLY;
  return dl->strides && kcpy_dl_overlaps(dl) ? KCPY_NOWRITE_OVERLAP
                                             : KCPY_NOWRITE_NONE;
}

PyObject* kcpy_tensor_wrap(kc_tensor* tensor) {
  kcpy_tensor* self = PyObject_New(kcpy_tensor, &kcpy_tensor_type);
  if (!self) {
    kc_object_release(KC_OBJECT(tensor));
    return NULL;
  }
  self->tensor = tensor;
  self->dl = (DLTensor*)(uintptr_t)kc_tensor_get_dltensor(tensor);
  self->expired = 0;
  self->writable =
      !(kc_tensor_get_flags(tensor) & DLPACK_FLAG_BITMASK_READ_ONLY);
  self->nowrite = nowrite_of(self->dl, self->writable);
  self->lent = NULL;
  self->copy = NULL;
  self->copy_hash = 0;
  return (PyObject*)self;
}

PyObject* kcpy_tensor_borrow(DLTensor* dl, int writable) {
  kcpy_tensor* self = PyObject_New(kcpy_tensor, &kcpy_tensor_type);
  if (!self) return NULL;
  self->tensor = NULL;
  self->dl = dl;
  self->expired = 0;
  self->writable = writable;
  self->nowrite = nowrite_of(dl, writable);
  self->lent = dl;
  self->copy = NULL;
  self->copy_hash = 0;
  return (PyObject*)self;
}

/* ---- the copy a lent view's exports share ------------------------------------ */
/*
 * A view lent to a callback points at the caller's memory, which is gone
 * once the call returns, while NumPy arrays, memoryviews and DLPack
 * capsules made from it can live on, and cannot be revoked. So they are
 * made from a copy the view owns: made on the first export, standing in
 * for the caller's memory from then on (also when the view is passed to a
 * kcall function during the call), and written back when the call
 * returns if the view is writable and the copy changed. Memory the
 * callback only read is never written.
 */

/* Element strides, row-major ones when the tensor has none. */
static void strides_of(const DLTensor* dl, int64_t* out) {
  int64_t running = 1;
  for (int32_t i = dl->ndim - 1; i >= 0; --i) {
    out[i] = dl->strides ? dl->strides[i] : running;
    running *= dl->shape[i];
  }
}

/* Copies the elements of `from` into `to`, of the same shape and dtype,
 * both in host memory, strides honoured. */
static void copy_elements(const DLTensor* to, const DLTensor* from) {
  size_t item = kc_dtype_get_size(from->dtype);
  int64_t n = kc_dltensor_get_numel(from);
  char* d = (char*)to->data + to->byte_offset;
  const char* src = (const char*)from->data + from->byte_offset;
  if (n <= 0) return;
  if (kc_dltensor_is_compact(to) && kc_dltensor_is_compact(from)) {
    memcpy(d, src, (size_t)n * item);
    return;
  }
  int64_t ts[KC_TENSOR_MAX_NDIM], fs[KC_TENSOR_MAX_NDIM];
  int64_t idx[KC_TENSOR_MAX_NDIM] = {0};
  strides_of(to, ts);
  strides_of(from, fs);
  int64_t to_at = 0, from_at = 0;
  for (int64_t k = 0; k < n; ++k) {
    memcpy(d + to_at * (int64_t)item, src + from_at * (int64_t)item, item);
    for (int32_t i = from->ndim - 1; i >= 0; --i) {
      if (++idx[i] < from->shape[i]) {
        to_at += ts[i];
        from_at += fs[i];
        break;
      }
      to_at -= ts[i] * (from->shape[i] - 1);
      from_at -= fs[i] * (from->shape[i] - 1);
      idx[i] = 0;
    }
  }
}

/* A 64-bit hash of n bytes, four words at a time: it only has to tell
 * whether a callback changed the copy. */
static uint64_t bytes_hash(const void* p, size_t n) {
  const unsigned char* b = p;
  const uint64_t k = 0x9E3779B97F4A7C15ull;
  uint64_t h[4] = {k, k ^ 1, k ^ 2, k ^ 3};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      memcpy(&w, b + i + 8 * (size_t)l, 8);
      h[l] = (h[l] ^ w) * k;
      h[l] ^= h[l] >> 29;
    }
  }
  uint64_t out = (uint64_t)n * k;
  for (; i < n; ++i) out = (out ^ b[i]) * 0x100000001B3ull;
  for (int l = 0; l < 4; ++l) out = ((out ^ h[l]) * k) ^ (out >> 31);
  return out;
}

static size_t dl_nbytes(const DLTensor* dl) {
  return (size_t)kc_dltensor_get_numel(dl) * kc_dtype_get_size(dl->dtype);
}

/* What a lent view's exports come from: its copy, made now if need be.
 * `self` itself for a Tensor that owns its memory. NULL with an exception
 * for an expired view, or one whose memory cannot be copied here. */
static kcpy_tensor* exporter(kcpy_tensor* self) {
  if (self->tensor) return self;
  if (self->expired || !self->dl) {
    expired_error();
    return NULL;
  }
  if (self->copy) return (kcpy_tensor*)self->copy;
  const DLTensor* lent = self->lent;
  if (lent->device.device_type != kDLCPU &&
      lent->device.device_type != kDLCUDAHost) {
    PyObject* device = kcpy_device_name(lent->device);
    if (!device) return NULL;
    PyErr_Format(PyExc_BufferError,
                 "kcall.Tensor: this tensor on %U is lent to a Python "
                 "callback for the duration of one call and cannot be "
                 "exported (NumPy, memoryview, DLPack), since what is made "
                 "from it could outlive the caller's memory; pass it to "
                 "kcall functions, or copy it with kcall.to_device(t, "
                 "\"cpu\")",
                 device);
    Py_DECREF(device);
    return NULL;
  }
  if ((lent->dtype.bits * lent->dtype.lanes) % 8 != 0) {
    PyObject* name = kcpy_dtype_name(lent->dtype);
    PyErr_Format(PyExc_BufferError,
                 "kcall.Tensor: a lent tensor of dtype %S cannot be "
                 "exported (elements of whole bytes only)",
                 name ? name : Py_None);
    Py_XDECREF(name);
    return NULL;
  }
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_create(NULL, lent->shape, lent->ndim,
                                   lent->dtype, kc_device_cpu(), &t);
  if (st) {
    kcpy_raise(kc_status_add_context(
        st, "copying a tensor lent to a Python callback"));
    return NULL;
  }
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  copy_elements(dl, lent);
  kcpy_tensor* copy = (kcpy_tensor*)kcpy_tensor_wrap(t);
  if (!copy) return NULL;
  copy->writable = self->writable;
  copy->nowrite = nowrite_of(copy->dl, copy->writable);
  self->copy = (PyObject*)copy;
  self->copy_hash = self->writable ? bytes_hash(dl->data, dl_nbytes(dl)) : 0;
  self->dl = copy->dl;
  self->nowrite = copy->nowrite;
  return copy;
}

void kcpy_tensor_expire(PyObject* view) {
  kcpy_tensor* self = (kcpy_tensor*)view;
  if (self->copy && self->writable && !self->expired) {
    const DLTensor* dl = ((kcpy_tensor*)self->copy)->dl;
    if (bytes_hash(dl->data, dl_nbytes(dl)) != self->copy_hash) {
      copy_elements(self->lent, dl);
    }
  }
  self->expired = 1;
  self->dl = NULL;
  self->lent = NULL;
}

static void tensor_dealloc(kcpy_tensor* self) {
  kc_object_release(KC_OBJECT(self->tensor));
  Py_XDECREF(self->copy);
  PyObject_Free(self);
}

static PyObject* tensor_new(PyTypeObject* type, PyObject* args,
                            PyObject* kwargs) {
  (void)type;
  PyObject* obj;
  static char* names[] = {"array", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Tensor", names, &obj)) {
    return NULL;
  }
  if (kcpy_tensor_check(obj) && ((kcpy_tensor*)obj)->tensor) {
    return Py_NewRef(obj);
  }
  if (kcpy_tensor_check(obj)) {
    if (!live((kcpy_tensor*)obj)) return NULL;
    PyErr_SetString(PyExc_ValueError,
                    "kcall.Tensor: this tensor is lent to a Python callback "
                    "for one call and its memory belongs to the caller; a "
                    "Tensor made from it would outlive that memory (copy it: "
                    "kcall.Tensor(numpy.array(t)))");
    return NULL;
  }
  kc_tensor* t = kcpy_array_to_tensor(obj, kcpy_what_text("kcall.Tensor"));
  return t ? kcpy_tensor_wrap(t) : NULL;
}

/* ---- properties ------------------------------------------------------------ */

static PyObject* int64_tuple(const int64_t* v, int32_t n) {
  PyObject* t = PyTuple_New(n);
  for (int32_t i = 0; t && i < n; ++i) {
    PyObject* x = PyLong_FromLongLong(v[i]);
    if (!x) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

static PyObject* get_shape(kcpy_tensor* self, void* unused) {
  (void)unused;
  DLTensor* dl = live(self);
  return dl ? int64_tuple(dl->shape, dl->ndim) : NULL;
}

static PyObject* get_strides(kcpy_tensor* self, void* unused) {
  (void)unused;
  DLTensor* dl = live(self);
  if (!dl) return NULL;
  int64_t s[KC_TENSOR_MAX_NDIM];
  strides_of(dl, s);
  return int64_tuple(s, dl->ndim);
}

static PyObject* get_dtype(kcpy_tensor* self, void* unused) {
  (void)unused;
  DLTensor* dl = live(self);
  return dl ? kcpy_dtype_name(dl->dtype) : NULL;
}

static PyObject* get_ndim(kcpy_tensor* self, void* unused) {
  (void)unused;
  DLTensor* dl = live(self);
  return dl ? PyLong_FromLong(dl->ndim) : NULL;
}

static PyObject* get_size(kcpy_tensor* self, void* unused) {
  (void)unused;
  DLTensor* dl = live(self);
  return dl ? PyLong_FromLongLong(kc_dltensor_get_numel(dl)) : NULL;
}

static PyObject* get_nbytes(kcpy_tensor* self, void* unused) {
  (void)unused;
  DLTensor* dl = live(self);
  if (!dl) return NULL;
  return PyLong_FromLongLong(kc_dltensor_get_numel(dl) *
                             (int64_t)kc_dtype_get_size(dl->dtype));
}

static PyObject* get_device(kcpy_tensor* self, void* unused) {
  (void)unused;
  DLTensor* dl = live(self);
  return dl ? kcpy_device_name(dl->device) : NULL;
}

static PyObject* get_data_ptr(kcpy_tensor* self, void* unused) {
  (void)unused;
  DLTensor* dl = live(self);
  if (!dl) return NULL;
  return PyLong_FromVoidPtr((char*)dl->data + dl->byte_offset);
}

static PyObject* get_readonly(kcpy_tensor* self, void* unused) {
  (void)unused;
  return PyBool_FromLong(!self->writable);
}

/* NumPy's typestr for a dtype ("<f4"), or NULL with an exception. */
static const char* typestr(DLDataType t, char* buf) {
  char kind = 0;
  switch (t.code) {
    case kDLBool: kind = 'b'; break;
    case kDLInt: kind = 'i'; break;
    case kDLUInt: kind = 'u'; break;
    case kDLFloat: kind = 'f'; break;
    case kDLComplex: kind = 'c'; break;
    default: break;
  }
  if (!kind || t.lanes != 1 || t.bits % 8 != 0) {
    PyObject* name = kcpy_dtype_name(t);
    PyErr_Format(PyExc_TypeError,
                 "kcall.Tensor: dtype %S has no NumPy equivalent", name);
    Py_XDECREF(name);
    return NULL;
  }
  snprintf(buf, 8, "%c%c%d", t.bits == 8 ? '|' : '<', kind, t.bits / 8);
  return buf;
}

static int require_cpu(const DLTensor* dl, const char* what) {
  if (dl->device.device_type == kDLCPU ||
      dl->device.device_type == kDLCUDAHost) {
    return 0;
  }
  PyObject* device = kcpy_device_name(dl->device);
  if (!device) return -1;
  PyErr_Format(PyExc_BufferError,
               "kcall.Tensor: %s needs host memory, the tensor is on %U "
               "(copy it with kcall.to_device(t, \"cpu\"), or share it with "
               "__dlpack__)",
               what, device);
  Py_DECREF(device);
  return -1;
}

static PyObject* get_array_interface(kcpy_tensor* self, void* unused) {
  (void)unused;
  kcpy_tensor* from = exporter(self);
  if (!from) return NULL;
  if (from != self) return get_array_interface(from, NULL);
  DLTensor* dl = live(self);
  if (!dl || require_cpu(dl, "__array_interface__") < 0) return NULL;
  char ts[8];
  if (!typestr(dl->dtype, ts)) return NULL;
  PyObject* shape = int64_tuple(dl->shape, dl->ndim);
  PyObject* strides = NULL;
  if (dl->strides && !kc_dltensor_is_compact(dl)) {
    int64_t s[KC_TENSOR_MAX_NDIM];
    int64_t item = (int64_t)kc_dtype_get_size(dl->dtype);
    for (int32_t i = 0; i < dl->ndim; ++i) s[i] = dl->strides[i] * item;
    strides = int64_tuple(s, dl->ndim);
  } else {
    strides = Py_NewRef(Py_None);
  }
  PyObject* out = NULL;
  if (shape && strides) {
    out = Py_BuildValue("{s:N,s:s,s:(NO),s:N,s:i}", "shape", shape, "typestr",
                        ts, "data",
                        PyLong_FromVoidPtr((char*)dl->data + dl->byte_offset),
                        self->writable ? Py_False : Py_True, "strides",
                        strides, "version", 3);
    return out;
  }
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  return NULL;
}

/* ---- DLPack export ------------------------------------------------------------ */

/* A legacy capsule's tensor: wraps a versioned one. */
typedef struct legacy_export {
  DLManagedTensor legacy;
  DLManagedTensorVersioned* versioned;
} legacy_export;

static void legacy_delete(DLManagedTensor* self) {
  legacy_export* e = (legacy_export*)self;
  e->versioned->deleter(e->versioned);
  PyMem_RawFree(e);
}

static void capsule_versioned_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned* m =
        PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (m->deleter) m->deleter(m);
  }
}

static void capsule_legacy_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* m = PyCapsule_GetPointer(capsule, "dltensor");
    if (m->deleter) m->deleter(m);
  }
}

/* A managed tensor for `self`: the kcall tensor's own export, or for a view
 * a wrapper that keeps the view object alive. */
static DLManagedTensorVersioned* export_managed(kcpy_tensor* self) {
  DLManagedTensorVersioned* m = NULL;
  self = exporter(self);
  if (!self) return NULL;
  if (self->writable || (kc_tensor_get_flags(self->tensor) &
                         DLPACK_FLAG_BITMASK_READ_ONLY)) {
    kc_status* st = kc_tensor_export_dlpack(self->tensor, &m);
    if (st) {
      kcpy_raise(st);
      return NULL;
    }
    return m;
  }
  return kcpy_managed_wrap(self->dl, (PyObject*)self,
                           (uint64_t)(self->writable
                                         ? 0
                                         : DLPACK_FLAG_BITMASK_READ_ONLY));
}

static PyObject* tensor_dlpack(kcpy_tensor* self, PyObject* args,
                               PyObject* kwargs) {
  static char* names[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None,
           *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", names,
                                   &stream, &max_version, &dl_device, &copy)) {
    return NULL;
  }
  /* What the consumer asks for, checked against what the tensor is. */
  DLTensor* dl = live(self);
  if (!dl) return NULL;
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError,
                    "kcall.Tensor.__dlpack__: copy=True is not supported; "
                    "kcall exports share memory");
    return NULL;
  }
  if (dl_device != Py_None) {
    int type, id;
    if (!PyArg_ParseTuple(dl_device, "ii:dl_device", &type, &id)) return NULL;
    if (type != (int)dl->device.device_type || id != dl->device.device_id) {
      PyErr_Format(PyExc_BufferError,
                   "kcall.Tensor.__dlpack__: dl_device (%d, %d) is not the "
                   "tensor's device (%d, %d), and kcall does not copy",
                   type, id, (int)dl->device.device_type,
                   dl->device.device_id);
      return NULL;
    }
  }
  if (stream != Py_None && dl->device.device_type == kDLCPU) {
    PyErr_SetString(PyExc_ValueError,
                    "kcall.Tensor.__dlpack__: stream must be None for a CPU "
                    "tensor");
    return NULL;
  }
  int versioned = 0;
  if (max_version != Py_None) {
    int major, minor;
    if (!PyArg_ParseTuple(max_version, "ii:max_version", &major, &minor)) {
      return NULL;
    }
    versioned = major >= 1;
  }
  /* A versioned capsule, or a legacy one wrapping it. */
  DLManagedTensorVersioned* m = export_managed(self);
  if (!m) return NULL;
  if (versioned) {
    PyObject* cap = PyCapsule_New(m, "dltensor_versioned",
                                  capsule_versioned_destructor);
    if (!cap) m->deleter(m);
    return cap;
  }
  legacy_export* e = PyMem_RawMalloc(sizeof *e);
  if (!e) {
    m->deleter(m);
    return PyErr_NoMemory();
  }
  e->legacy.dl_tensor = m->dl_tensor;
  e->legacy.manager_ctx = e;
  e->legacy.deleter = legacy_delete;
  e->versioned = m;
  PyObject* cap = PyCapsule_New(&e->legacy, "dltensor",
                                capsule_legacy_destructor);
  if (!cap) legacy_delete(&e->legacy);
  return cap;
}

static PyObject* tensor_dlpack_device(kcpy_tensor* self, PyObject* unused) {
  (void)unused;
  DLTensor* dl = live(self);
  if (!dl) return NULL;
  return Py_BuildValue("(ii)", (int)dl->device.device_type,
                       (int)dl->device.device_id);
}

static PyObject* tensor_numpy(kcpy_tensor* self, PyObject* unused) {
  (void)unused;
  if (!live(self)) return NULL;
  PyObject* numpy = PyImport_ImportModule("numpy");
  if (!numpy) return NULL;
  PyObject* out = PyObject_CallMethod(numpy, "asarray", "O", (PyObject*)self);
  Py_DECREF(numpy);
  return out;
}

static PyObject* tensor_repr(kcpy_tensor* self) {
  if (self->expired || !self->dl) {
    return PyUnicode_FromString("kcall.Tensor(<expired view>)");
  }
  PyObject* shape = get_shape(self, NULL);
  PyObject* dtype = get_dtype(self, NULL);
  PyObject* device = get_device(self, NULL);
  PyObject* out = NULL;
  if (shape && dtype && device) {
    out = PyUnicode_FromFormat("kcall.Tensor(shape=%S, dtype=%U, device=%U%s)",
                               shape, dtype, device,
                               self->tensor ? "" : ", borrowed");
  }
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  Py_XDECREF(device);
  return out;
}

/* ---- the buffer protocol ---------------------------------------------------------- */

static const char* buffer_format(DLDataType t) {
  if (t.lanes != 1) return NULL;
  switch (t.code) {
    case kDLBool: return t.bits == 8 ? "?" : NULL;
    case kDLInt:
      return t.bits == 8 ? "b" : t.bits == 16 ? "h" : t.bits == 32 ? "i"
             : t.bits == 64 ? "q" : NULL;
    case kDLUInt:
      return t.bits == 8 ? "B" : t.bits == 16 ? "H" : t.bits == 32 ? "I"
             : t.bits == 64 ? "Q" : NULL;
    case kDLFloat:
      return t.bits == 16 ? "e" : t.bits == 32 ? "f" : t.bits == 64 ? "d"
             : NULL;
    case kDLComplex:
      return t.bits == 64 ? "Zf" : t.bits == 128 ? "Zd" : NULL;
    default: return NULL;
  }
}

/* True when the dims with extent > 1 are laid out column-major. */
static int is_fortran(const DLTensor* dl) {
  if (!dl->strides) return dl->ndim <= 1 || kc_dltensor_get_numel(dl) <= 1;
  int64_t expected = 1;
  for (int32_t i = 0; i < dl->ndim; ++i) {
    if (dl->shape[i] != 1 && dl->strides[i] != expected) return 0;
    expected *= dl->shape[i];
  }
  return 1;
}

/* The layout a buffer request asks for, checked against the tensor's. */
static int check_buffer_layout(const DLTensor* dl, int flags) {
  int c = kc_dltensor_is_compact(dl);
  const char* refused = NULL;
  if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c) {
    refused = "C-contiguous";
  } else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS &&
             !is_fortran(dl)) {
    refused = "Fortran-contiguous";
  } else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c &&
             !is_fortran(dl)) {
    refused = "contiguous";
  } else if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c) {
    refused = "strides-free (C-contiguous)";
  }
  if (!refused) return 0;
  PyErr_Format(PyExc_BufferError,
               "kcall.Tensor: the consumer asked for %s memory and the tensor "
               "is strided otherwise",
               refused);
  return -1;
}

static int tensor_getbuffer(kcpy_tensor* self, Py_buffer* view, int flags) {
  kcpy_tensor* from = exporter(self);
  if (!from) return -1;
  if (from != self) return tensor_getbuffer(from, view, flags);
  DLTensor* dl = live(self);
  if (!dl || require_cpu(dl, "the buffer protocol") < 0) return -1;
  if ((flags & PyBUF_WRITABLE) && !self->writable) {
    PyErr_SetString(PyExc_BufferError, "kcall.Tensor is read-only");
    return -1;
  }
  const char* format = buffer_format(dl->dtype);
  if (!format) {
    typestr(dl->dtype, (char[8]){0});
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_BufferError, "kcall.Tensor: no buffer format");
    }
    return -1;
  }
  if (check_buffer_layout(dl, flags) < 0) return -1;
  Py_ssize_t item = (Py_ssize_t)kc_dtype_get_size(dl->dtype);
  Py_ssize_t* dims =
      PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(dl->ndim + 1));
  if (!dims) {
    PyErr_NoMemory();
    return -1;
  }
  int64_t s[KC_TENSOR_MAX_NDIM];
  strides_of(dl, s);
  for (int32_t i = 0; i < dl->ndim; ++i) {
    dims[i] = (Py_ssize_t)dl->shape[i];
    dims[dl->ndim + i] = (Py_ssize_t)(s[i] * item);
  }
  int want_nd = (flags & PyBUF_ND) == PyBUF_ND;
  int want_strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES;
  view->buf = (char*)dl->data + dl->byte_offset;
  view->obj = Py_NewRef((PyObject*)self);
  view->len = (Py_ssize_t)kc_dltensor_get_numel(dl) * item;
  view->readonly = !self->writable;
  view->itemsize = item;
  view->format = (flags & PyBUF_FORMAT) ? (char*)format : NULL;
  /* Without ND the consumer sees the memory as one run of bytes. */
  view->ndim = want_nd ? dl->ndim : 1;
  view->shape = want_nd ? dims : NULL;
  view->strides = want_strides ? dims + dl->ndim : NULL;
  view->suboffsets = NULL;
  view->internal = dims;
  return 0;
}

static void tensor_releasebuffer(kcpy_tensor* self, Py_buffer* view) {
  (void)self;
  PyMem_Free(view->internal);
}

static PyBufferProcs tensor_as_buffer = {
    .bf_getbuffer = (getbufferproc)tensor_getbuffer,
    .bf_releasebuffer = (releasebufferproc)tensor_releasebuffer,
};

static PyGetSetDef tensor_getset[] = {
    {"shape", (getter)get_shape, NULL, "The dimensions, a tuple of ints.", NULL},
    {"strides", (getter)get_strides, NULL,
     "The strides in elements (not bytes), a tuple of ints.", NULL},
    {"dtype", (getter)get_dtype, NULL,
     "The element type's name, as NumPy spells it ('float32').", NULL},
    {"ndim", (getter)get_ndim, NULL, "The number of dimensions.", NULL},
    {"size", (getter)get_size, NULL, "The number of elements.", NULL},
    {"nbytes", (getter)get_nbytes, NULL, "size times the element size.", NULL},
    {"device", (getter)get_device, NULL, "The device ('cpu:0').", NULL},
    {"data_ptr", (getter)get_data_ptr, NULL,
     "The address of the first element.", NULL},
    {"readonly", (getter)get_readonly, NULL,
     "True when the memory must not be written.", NULL},
    {"__array_interface__", (getter)get_array_interface, NULL,
     "NumPy's array interface (host memory only).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack,
     METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, "
     "copy=None)\n--\n\nA DLPack capsule sharing this tensor's memory "
     "(DLPack 1.x when max_version asks for it)."},
    {"__dlpack_device__", (PyCFunction)tensor_dlpack_device, METH_NOARGS,
     "(device_type, device_id) as DLPack numbers them."},
    {"numpy", (PyCFunction)tensor_numpy, METH_NOARGS,
     "A NumPy array sharing this tensor's memory."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject kcpy_tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kcall.Tensor",
    .tp_basicsize = sizeof(kcpy_tensor),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_repr = (reprfunc)tensor_repr,
    .tp_as_buffer = &tensor_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Tensor(array)\n--\n\n"
              "A kcall tensor. Tensor(array) shares the memory of any array "
              "(NumPy,\nthe buffer protocol, __dlpack__) and keeps it alive; "
              "functions, ops and\nprograms return Tensors. NumPy, PyTorch, "
              "JAX and CuPy take a Tensor\nwithout copying "
              "(np.asarray(t), np.from_dlpack(t)), except a view lent\nto "
              "a Python callback, whose exports share a copy that is "
              "written\nback when the callback returns.",
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
    .tp_new = tensor_new,
};

int kcpy_tensor_init_type(PyObject* module) {
  if (PyType_Ready(&kcpy_tensor_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Tensor", (PyObject*)&kcpy_tensor_type);
}
