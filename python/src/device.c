/*
 * Devices from Python: streams given as ints or stream objects, the stream
 * a DLPack producer is asked to make its device arrays ready on, and
 * copies between the host and a device.
 */
#include "kcpy.h"

#include "kcall/device.h"

/* The consumer stream of the call being prepared on this thread (set
 * around a call that names one); unset: kcall's default stream of the
 * array's device. */
static _Thread_local int consumer_set;
static _Thread_local void* consumer_stream;

void kcpy_consumer_stream_set(int set, void* stream) {
  consumer_set = set;
  consumer_stream = stream;
}

int kcpy_stream_parse(PyObject* obj, void** out_stream) {
  *out_stream = NULL;
  if (obj == Py_None) return 0;
  PyObject* handle = NULL;
  if (PyLong_Check(obj)) {
    handle = Py_NewRef(obj);
  } else if (PyObject_HasAttrString(obj, "__cuda_stream__")) {
    /* The CUDA stream protocol: (version, handle). */
    PyObject* pair = PyObject_CallMethod(obj, "__cuda_stream__", NULL);
    if (!pair) return -1;
    if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2) {
      handle = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
    }
    Py_DECREF(pair);
  } else if (PyObject_HasAttrString(obj, "cuda_stream")) { /* torch */
    handle = PyObject_GetAttrString(obj, "cuda_stream");
  } else if (PyObject_HasAttrString(obj, "ptr")) { /* cupy */
    handle = PyObject_GetAttrString(obj, "ptr");
  }
  if (!handle && PyErr_Occurred()) return -1;
  if (!handle || !PyLong_Check(handle)) {
    Py_XDECREF(handle);
    PyErr_Format(PyExc_TypeError,
                 "stream: expected None, an int (a cudaStream_t) or a "
                 "stream object with __cuda_stream__, cuda_stream or ptr, "
                 "got %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  void* p = PyLong_AsVoidPtr(handle);
  Py_DECREF(handle);
  if (!p && PyErr_Occurred()) return -1;
  *out_stream = p;
  return 0;
}

PyObject* kcpy_consumer_stream_arg(DLDevice device) {
  void* stream = consumer_stream;
  if (!consumer_set) {
    /* Managed memory is used from the streams of its CUDA device. */
    if (device.device_type == kDLCUDAManaged) device.device_type = kDLCUDA;
    kc_status* st = kc_device_get_default_stream(device, &stream);
    if (st) return kcpy_raise(st);
  }
  /* DLPack: 1 is CUDA's legacy default stream; 0 is not allowed. */
  if (!stream) return PyLong_FromLong(1);
  return PyLong_FromVoidPtr(stream);
}

/* to_device(array, device: str, stream=None) -> Tensor: a copy on
 * `device`, queued on `stream` (None: kcall's default stream, waited
 * for). */
static PyObject* to_device(PyObject* module, PyObject* args, PyObject* kw) {
  (void)module;
  static char* names[] = {"array", "device", "stream", NULL};
  PyObject *array, *stream_obj = Py_None;
  const char* device_name;
  Py_ssize_t device_len;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "Os#|O:to_device", names, &array,
                                   &device_name, &device_len, &stream_obj)) {
    return NULL;
  }
  DLDevice device;
  void* stream = NULL;
  kc_status* st =
      kc_device_parse((kc_string_view){device_name, (size_t)device_len}, &device);
  if (st) return kcpy_raise(st);
  if (kcpy_stream_parse(stream_obj, &stream) < 0) return NULL;
  kcpy_consumer_stream_set(stream_obj != Py_None, stream);
  kc_tensor* from = kcpy_array_to_tensor(array, kcpy_what_text("to_device"));
  kcpy_consumer_stream_set(0, NULL);
  if (!from) return NULL;
  const DLTensor* f = kc_tensor_get_dltensor(from);
  kc_tensor* to = NULL;
  st = kc_tensor_create(NULL, f->shape, f->ndim, f->dtype, device, &to);
  if (!st) {
    Py_BEGIN_ALLOW_THREADS
    st = kc_dltensor_copy(f, kc_tensor_get_dltensor(to), stream);
    Py_END_ALLOW_THREADS
  }
  /* With a stream the copy may still read `from`: keep it until then. */
  if (!st && stream) {
    Py_BEGIN_ALLOW_THREADS
    st = kc_device_stream_synchronize(device, stream);
    Py_END_ALLOW_THREADS
  }
  kc_object_release(KC_OBJECT(from));
  if (st) {
    kc_object_release(KC_OBJECT(to));
    return kcpy_raise(kc_status_add_context(st, "to_device"));
  }
  return kcpy_tensor_wrap(to);
}

/* default_stream(device: str) -> int: kcall's own stream of `device`. */
static PyObject* default_stream(PyObject* module, PyObject* arg) {
  (void)module;
  kc_string_view name;
  if (kcpy_str_view(arg, &name, "device") < 0) return NULL;
  DLDevice device;
  kc_status* st = kc_device_parse(name, &device);
  void* stream = NULL;
  if (!st) st = kc_device_get_default_stream(device, &stream);
  if (st) return kcpy_raise(st);
  return PyLong_FromVoidPtr(stream);
}

PyMethodDef kcpy_device_methods[] = {
    {"default_stream", (PyCFunction)default_stream, METH_O,
     "default_stream(device)\n--\n\nThe handle (an int cudaStream_t) of "
     "kcall's own stream of `device`, the one kcall uses when a call names "
     "none; 0 on the CPU."},
    {"to_device", (PyCFunction)(void (*)(void))to_device,
     METH_VARARGS | METH_KEYWORDS,
     "to_device(array, device, stream=None)\n--\n\nA copy of `array` (any "
     "array kcall reads) as a kcall.Tensor on `device` ('cpu', "
     "'cuda:0')."},
    {NULL, NULL, 0, NULL},
};
