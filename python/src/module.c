/* kcall._core: the registry, plugins, and the module's assembly. */
#include "kcpy.h"

#include <string.h>

static PyObject* get_func(PyObject* module, PyObject* name) {
  (void)module;
  kc_string_view v;
  if (kcpy_str_view(name, &v, "get_func: name") < 0) return NULL;
  kc_func* f = NULL;
  /* Retained by the lookup itself: another thread may override or remove
   * the name (or unload its plugin) at any time. */
  kc_status* st = kc_func_registry_lookup_retained(v, &f);
  if (st) return kcpy_raise(st);
  return kcpy_func_wrap(f, name);
}

/* A list of str from an array of strings (which is released). */
static PyObject* names_list(kc_array* names) {
  size_t n = kc_array_get_size(names);
  PyObject* list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; ++i) {
    PyObject* s = kcpy_py_from_arg(kc_array_get_item(names, i), NULL);
    if (!s) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, s);
  }
  kc_object_release(KC_OBJECT(names));
  return list;
}

static PyObject* list_funcs(PyObject* module, PyObject* const* args,
                            Py_ssize_t nargs) {
  (void)module;
  kc_string_view prefix = {"", 0};
  if (nargs > 1) {
    PyErr_SetString(PyExc_TypeError, "list_funcs(prefix='')");
    return NULL;
  }
  if (nargs == 1 && kcpy_str_view(args[0], &prefix, "prefix") < 0) return NULL;
  kc_array* names = NULL;
  kc_status* st = kc_func_registry_list(NULL, prefix, &names);
  return st ? kcpy_raise(st) : names_list(names);
}

static PyObject* register_func(PyObject* module, PyObject* args,
                               PyObject* kwargs) {
  (void)module;
  static char* names[] = {"name", "func", "override", NULL};
  PyObject *name, *callable;
  int override = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UO|p:register_func", names,
                                   &name, &callable, &override)) {
    return NULL;
  }
  kc_string_view v;
  if (kcpy_str_view(name, &v, "register_func: name") < 0) return NULL;
  kc_func* f;
  if (kcpy_func_check(callable)) {
    f = ((kcpy_func*)callable)->func;
    kc_object_retain(KC_OBJECT(f));
  } else if (PyCallable_Check(callable)) {
    f = kcpy_func_from_callable(callable);
    if (!f) return NULL;
  } else {
    PyErr_Format(PyExc_TypeError,
                 "register_func: expected a callable, got %.100s",
                 Py_TYPE(callable)->tp_name);
    return NULL;
  }
  kc_status* st = kc_func_registry_register(
      v, f, override ? KC_REGISTER_OVERRIDE : 0);
  kc_object_release(KC_OBJECT(f)); /* the registry holds its own */
  if (st) return kcpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject* remove_func(PyObject* module, PyObject* name) {
  (void)module;
  kc_string_view v;
  if (kcpy_str_view(name, &v, "remove_func: name") < 0) return NULL;
  kc_status* st = kc_func_registry_remove(v);
  if (st) return kcpy_raise(st);
  Py_RETURN_NONE;
}

/* ---- plugins ------------------------------------------------------------------ */

static PyObject* plugin_registrations(const kc_plugin* plugin, size_t count) {
  PyObject* list = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; list && i < count; ++i) {
    kc_registration r = {.struct_size = sizeof r};
    kc_status* st = kc_plugin_get_registration(plugin, i, &r);
    if (st) {
      Py_CLEAR(list);
      return kcpy_raise(st);
    }
    PyObject* item = Py_BuildValue("(ss#)", r.kind, r.name.data,
                                   (Py_ssize_t)r.name.size);
    if (!item) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

/* load_plugin(path, prefix=None) -> dict describing it; kcall.Plugin wraps
 * the dict. With a prefix, the file must be a tvm-ffi module. */
static PyObject* load_plugin(PyObject* module, PyObject* const* args,
                             Py_ssize_t nargs) {
  (void)module;
  if (nargs < 1 || nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "load_plugin(path, prefix=None)");
    return NULL;
  }
  const char* prefix = NULL;
  if (nargs == 2 && args[1] != Py_None) {
    prefix = PyUnicode_AsUTF8(args[1]);
    if (!prefix) return NULL;
  }
  PyObject* path = NULL;
  if (!PyUnicode_FSConverter(args[0], &path)) return NULL;
  const char* p = PyBytes_AS_STRING(path);
  kc_plugin* plugin = NULL;
  kc_status* st;
  Py_BEGIN_ALLOW_THREADS
  st = prefix ? kc_tvm_ffi_load_module(p, prefix, &plugin)
              : kc_plugin_load(p, &plugin);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st) return kcpy_raise(st);
  kc_plugin_desc d = {.struct_size = sizeof d};
  st = kc_plugin_get_desc(plugin, &d);
  if (st) return kcpy_raise(st);
  PyObject* regs = plugin_registrations(plugin, d.registration_count);
  if (!regs) return NULL;
  PyObject* handle = PyCapsule_New(plugin, "kcall.plugin", NULL);
  if (!handle) {
    Py_DECREF(regs);
    return NULL;
  }
  return Py_BuildValue("{s:N,s:s,s:s,s:s,s:(II),s:(II),s:N}", "handle", handle,
                       "path", d.path,
                       "name", d.name, "version", d.version ? d.version : "",
                       "api_version", d.api_major, d.api_minor,
                       "built_api_version", d.built_api_major,
                       d.built_api_minor, "registrations", regs);
}

/* unload_plugin(handle): kc_plugin_unload of what load_plugin returned. */
static PyObject* unload_plugin(PyObject* module, PyObject* handle) {
  (void)module;
  kc_plugin* plugin = PyCapsule_GetPointer(handle, "kcall.plugin");
  if (!plugin) return NULL;
  kc_status* st;
  Py_BEGIN_ALLOW_THREADS
  st = kc_plugin_unload(plugin);
  Py_END_ALLOW_THREADS
  if (st) return kcpy_raise(st);
  Py_RETURN_NONE;
}

/* ---- tvm-ffi ------------------------------------------------------------------- */

static PyObject* tvm_ffi_export(PyObject* module, PyObject* args,
                                PyObject* kwargs) {
  (void)module;
  static char* names[] = {"name", "override", NULL};
  const char* name;
  int override = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|p:export", names, &name,
                                   &override)) {
    return NULL;
  }
  size_t count = 0;
  kc_status* st = kc_tvm_ffi_export(name, override != 0, &count);
  if (st) return kcpy_raise(st);
  return PyLong_FromSize_t(count);
}

static PyObject* tvm_ffi_register_target(PyObject* module, PyObject* args,
                                         PyObject* kwargs) {
  (void)module;
  static char* names[] = {"target", "func", "platform", "override", NULL};
  const char *target, *func, *platform = "host";
  int override = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ss|sp:register_target",
                                   names, &target, &func, &platform,
                                   &override)) {
    return NULL;
  }
  kc_platform pl;
  kc_status* st = kc_platform_parse(kc_sv(platform), &pl);
  if (!st) {
    st = kc_tvm_ffi_register_target(kc_sv(target), pl, kc_sv(func),
                                    override ? KC_REGISTER_OVERRIDE : 0);
  }
  if (st) return kcpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject* tvm_ffi_library(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  const char* path = NULL;
  kc_status* st = kc_tvm_ffi_library(&path);
  if (st) return kcpy_raise(st);
  return PyUnicode_DecodeFSDefault(path);
}

static PyObject* list_targets(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  kc_array* names = NULL;
  kc_status* st = kc_xcall_registry_list(NULL, &names);
  return st ? kcpy_raise(st) : names_list(names);
}

static PyMethodDef module_methods[] = {
    {"get_func", (PyCFunction)get_func, METH_O,
     "get_func(name)\n--\n\nThe registered function `name` (NotFoundError, "
     "listing the nearest names, when there is none)."},
    {"list_funcs", (PyCFunction)(void (*)(void))list_funcs, METH_FASTCALL,
     "list_funcs(prefix='')\n--\n\nThe registered function names starting "
     "with prefix, sorted."},
    {"register_func", (PyCFunction)(void (*)(void))register_func,
     METH_VARARGS | METH_KEYWORDS,
     "register_func(name, func, override=False)\n--\n\nRegisters a Python "
     "callable (or a kcall.Function) under name."},
    {"remove_func", (PyCFunction)remove_func, METH_O,
     "remove_func(name)\n--\n\nRemoves a registered function."},
    {"load_plugin", (PyCFunction)(void (*)(void))load_plugin, METH_FASTCALL,
     "load_plugin(path, prefix=None)\n--\n\nLoads a plugin (with a prefix: "
     "a tvm-ffi module); returns a dict describing it."},
    {"unload_plugin", (PyCFunction)unload_plugin, METH_O,
     "unload_plugin(handle)\n--\n\nUnloads a plugin (kc_plugin_unload)."},
    {"tvm_ffi_export", (PyCFunction)(void (*)(void))tvm_ffi_export,
     METH_VARARGS | METH_KEYWORDS,
     "tvm_ffi_export(name, override=False)\n--\n\nRegisters kcall "
     "functions in tvm-ffi's global registry; returns how many."},
    {"tvm_ffi_register_target",
     (PyCFunction)(void (*)(void))tvm_ffi_register_target,
     METH_VARARGS | METH_KEYWORDS,
     "tvm_ffi_register_target(target, func, platform='host', "
     "override=False)\n--\n\nA kcall function as a typed custom-call "
     "target called with operands, results and attributes."},
    {"tvm_ffi_library", (PyCFunction)tvm_ffi_library, METH_NOARGS,
     "tvm_ffi_library()\n--\n\nThe path of the libtvm_ffi kcall uses."},
    {"list_targets", (PyCFunction)list_targets, METH_NOARGS,
     "list_targets()\n--\n\nThe registered custom-call targets as "
     "'name@Platform'."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "kcall._core",
    .m_doc = "The native part of the kcall package.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__core(void);

PyMODINIT_FUNC PyInit__core(void) {
  PyObject* m = PyModule_Create(&module_def);
  if (!m) return NULL;
  uint32_t major, minor;
  kc_version_query_api(&major, &minor);
  PyMethodDef* tables[] = {kcpy_op_methods, kcpy_target_methods,
                           kcpy_testing_methods, kcpy_xla_methods,
                           kcpy_device_methods, kcpy_torch_methods};
  int bad = kcpy_errors_init(m) < 0 || kcpy_tensor_init_type(m) < 0 ||
            kcpy_func_init_type(m) < 0 || kcpy_program_init_type(m) < 0 ||
            kcpy_executable_init_type(m) < 0 ||
            kcpy_builder_init_type(m) < 0 ||
            PyModule_AddStringConstant(m, "__version__",
                                       kc_version_string()) < 0;
  PyObject* api = bad ? NULL : Py_BuildValue("(II)", major, minor);
  bad = bad || !api || PyModule_AddObjectRef(m, "api_version", api) < 0;
  Py_XDECREF(api);
  for (size_t i = 0; !bad && i < sizeof tables / sizeof tables[0]; ++i) {
    bad = PyModule_AddFunctions(m, tables[i]) < 0;
  }
  if (bad) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
