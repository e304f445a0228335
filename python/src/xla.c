/*
 * Custom-call targets seen from other runtimes: what a target is, and the
 * XLA FFI handler that runs a kcall typed target inside XLA (kcall.jax).
 */
#include "kcpy.h"

/* (name, platform) from a call's two arguments; -1 with an exception set
 * otherwise, `usage` in the TypeError for a wrong count. */
static int name_platform_args(PyObject* const* args, Py_ssize_t nargs,
                              const char* usage, kc_string_view* name,
                              kc_platform* platform) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, usage);
    return -1;
  }
  if (kcpy_str_view(args[0], name, "name") < 0) return -1;
  return kcpy_platform_from_py(args[1], platform);
}

/* target_info(name, platform) -> {"name", "platform", "api", "signature",
 * "no_instantiate", "gradient", "batching"} ("signature" is None for the
 * legacy conventions; "gradient" is kcpy_gradient_dict's, or None;
 * "batching" the rule its signature flags declare). */
static PyObject* target_info(PyObject* module, PyObject* const* args,
                             Py_ssize_t nargs) {
  (void)module;
  kc_string_view name;
  kc_platform platform;
  if (name_platform_args(args, nargs, "target_info(name, platform)", &name,
                         &platform) < 0) {
    return NULL;
  }
  kc_xcall_target_desc d = {.struct_size = sizeof d};
  kc_status* st = kc_xcall_lookup(name, platform, &d);
  if (st) return kcpy_raise(st);
  PyObject* signature = Py_NewRef(Py_None);
  if (d.signature) {
    char buf[1024];
    size_t need = kc_xcall_signature_format(d.signature, buf, sizeof buf);
    Py_SETREF(signature, need < sizeof buf ? PyUnicode_FromString(buf)
                                           : PyUnicode_FromString("(long)"));
    if (!signature) return NULL;
  }
  int no_instantiate = d.signature && KC_STRUCT_HAS(d.signature, kc_xcall_signature, flags) &&
                       (d.signature->flags & KC_XCALL_SIG_NO_INSTANTIATE);
  uint32_t sig_flags = d.signature && KC_STRUCT_HAS(d.signature, kc_xcall_signature, flags)
                           ? d.signature->flags
                           : 0;
  const char* batching = (sig_flags & KC_XCALL_SIG_BATCH_NONE)          ? "none"
                         : (sig_flags & KC_XCALL_SIG_BATCH_ELEMENTWISE) ? "elementwise"
                                                                        : "sequential";
  kc_op_gradient g = {.struct_size = sizeof g};
  bool declared = false;
  st = kc_xcall_get_gradient(name, platform, &g, &declared);
  if (st) {
    Py_DECREF(signature);
    return kcpy_raise(st);
  }
  PyObject* gradient = declared ? kcpy_gradient_dict(&g) : Py_NewRef(Py_None);
  if (!gradient) {
    Py_DECREF(signature);
    return NULL;
  }
  return Py_BuildValue("{s:O,s:s,s:s,s:N,s:O,s:N,s:s}", "name", args[0],
                       "platform", kc_platform_name(d.platform), "api",
                       kc_xcall_api_name(d.api), "signature", signature,
                       "no_instantiate", no_instantiate ? Py_True : Py_False,
                       "gradient", gradient, "batching", batching);
}

/* xla_ffi_adapter(name, platform) -> a PyCapsule (unnamed, as
 * jax.ffi.pycapsule makes them) holding the XLA FFI handler that runs the
 * typed target. */
static PyObject* xla_ffi_adapter(PyObject* module, PyObject* const* args,
                                 Py_ssize_t nargs) {
  (void)module;
  kc_string_view name;
  kc_platform platform;
  if (name_platform_args(args, nargs, "xla_ffi_adapter(name, platform)", &name,
                         &platform) < 0) {
    return NULL;
  }
  void* handler = NULL;
  kc_status* st = kc_xla_ffi_adapter_create(name, platform,
                                            (kc_xla_ffi_handler_fn*)&handler);
  if (st) return kcpy_raise(st);
  return PyCapsule_New(handler, NULL, NULL);
}

/* xla_ffi_op_adapter(op_name) -> a PyCapsule holding the XLA FFI handler
 * that runs the kcall op on the host. */
static PyObject* xla_ffi_op_adapter(PyObject* module, PyObject* name) {
  (void)module;
  kc_string_view view;
  if (kcpy_str_view(name, &view, "op name") < 0) return NULL;
  void* handler = NULL;
  kc_status* st = kc_xla_ffi_adapter_create_for_op(view, (kc_xla_ffi_handler_fn*)&handler);
  if (st) return kcpy_raise(st);
  return PyCapsule_New(handler, NULL, NULL);
}

/* The function pointer in a PyCapsule (any name, as jax.ffi.pycapsule
 * makes them) or an int address (a ctypes function's). */
static int handler_arg(PyObject* obj, kc_xla_ffi_handler_fn* out) {
  void* p = NULL;
  if (PyCapsule_CheckExact(obj)) {
    p = PyCapsule_GetPointer(obj, PyCapsule_GetName(obj));
  } else if (PyLong_Check(obj)) {
    p = PyLong_AsVoidPtr(obj);
  } else {
    PyErr_Format(PyExc_TypeError,
                 "handler: expected a PyCapsule or an int address, got %s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (!p) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "handler: NULL");
    return -1;
  }
  *out = (kc_xla_ffi_handler_fn)p;
  return 0;
}

/* register_xla_ffi(name, platform, execute, instantiate or None, flags):
 * XLA FFI handlers as a kcall target. */
static PyObject* register_xla_ffi(PyObject* module, PyObject* const* args,
                                  Py_ssize_t nargs) {
  (void)module;
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError,
                    "register_xla_ffi(name, platform, execute, instantiate, "
                    "flags)");
    return NULL;
  }
  kc_string_view name;
  kc_platform platform;
  kc_xla_ffi_handlers h = {.struct_size = sizeof h};
  unsigned long flags = PyLong_AsUnsignedLong(args[4]);
  if (flags == (unsigned long)-1 && PyErr_Occurred()) return NULL;
  if (kcpy_str_view(args[0], &name, "name") < 0 ||
      kcpy_platform_from_py(args[1], &platform) < 0 ||
      handler_arg(args[2], &h.execute) < 0 ||
      (args[3] != Py_None && handler_arg(args[3], &h.instantiate) < 0)) {
    return NULL;
  }
  kc_status* st = kc_xcall_register_xla_ffi(name, platform, &h, (uint32_t)flags);
  if (st) return kcpy_raise(st);
  Py_RETURN_NONE;
}

/* xla_ffi_type_register(name, type_id address, type_info address or 0). */
static PyObject* xla_ffi_type_register(PyObject* module, PyObject* const* args,
                                       Py_ssize_t nargs) {
  (void)module;
  kc_string_view name;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError,
                    "xla_ffi_type_register(name, type_id, type_info)");
    return NULL;
  }
  if (kcpy_str_view(args[0], &name, "name") < 0) return NULL;
  void* id = PyLong_AsVoidPtr(args[1]);
  void* info = id || !PyErr_Occurred() ? PyLong_AsVoidPtr(args[2]) : NULL;
  if (PyErr_Occurred()) return NULL;
  kc_status* st = kc_xla_ffi_type_register(name, id, info);
  if (st) return kcpy_raise(st);
  Py_RETURN_NONE;
}

/* xla_ffi_set_api_version(major, minor): kc_xla_ffi_adapter_set_api_version. */
static PyObject* xla_ffi_set_api_version(PyObject* module, PyObject* const* args,
                                         Py_ssize_t nargs) {
  (void)module;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "xla_ffi_set_api_version(major, minor)");
    return NULL;
  }
  long major = PyLong_AsLong(args[0]), minor = PyLong_AsLong(args[1]);
  if ((major == -1 || minor == -1) && PyErr_Occurred()) return NULL;
  if (major < INT32_MIN || major > INT32_MAX || minor < INT32_MIN || minor > INT32_MAX) {
    PyErr_SetString(PyExc_OverflowError, "xla_ffi_set_api_version: version out of range");
    return NULL;
  }
  kc_status* st = kc_xla_ffi_adapter_set_api_version((int32_t)major, (int32_t)minor);
  if (st) return kcpy_raise(st);
  Py_RETURN_NONE;
}

PyMethodDef kcpy_xla_methods[] = {
    {"xla_ffi_set_api_version", (PyCFunction)(void (*)(void))xla_ffi_set_api_version,
     METH_FASTCALL,
     "xla_ffi_set_api_version(major, minor)\n--\n\nThe XLA FFI API version "
     "adapters report to an XLA whose metadata query carries no API table."},
    {"register_xla_ffi", (PyCFunction)(void (*)(void))register_xla_ffi,
     METH_FASTCALL,
     "register_xla_ffi(name, platform, execute, instantiate, flags)\n--\n\n"
     "Registers XLA FFI handlers as a kcall target."},
    {"xla_ffi_type_register", (PyCFunction)(void (*)(void))xla_ffi_type_register,
     METH_FASTCALL,
     "xla_ffi_type_register(name, type_id, type_info)\n--\n\nRegisters a "
     "handler library's state type with kcall's XLA FFI host."},
    {"xla_ffi_op_adapter", (PyCFunction)xla_ffi_op_adapter, METH_O,
     "xla_ffi_op_adapter(op_name)\n--\n\nA PyCapsule holding an XLA FFI "
     "handler that runs the kcall op."},
    {"target_info", (PyCFunction)(void (*)(void))target_info, METH_FASTCALL,
     "target_info(name, platform)\n--\n\nWhat is registered under (name, "
     "platform): api and signature."},
    {"xla_ffi_adapter", (PyCFunction)(void (*)(void))xla_ffi_adapter,
     METH_FASTCALL,
     "xla_ffi_adapter(name, platform)\n--\n\nA PyCapsule holding an XLA FFI "
     "handler that runs the kcall typed target."},
    {NULL, NULL, 0, NULL},
};
