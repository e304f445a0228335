/*
 * Custom-call targets written in Python, for prototyping: a typed target
 * (kcall's TYPED convention) whose handler calls a Python function with
 * the call's buffers as arrays (operands, then results to write into) and
 * its attributes as keyword arguments.
 */
#include "kcpy.h"

#include <string.h>

typedef struct py_target {
  PyObject* fn;
  PyObject* attr_names; /* tuple of str, in the signature's order */
} py_target;

static void py_target_delete(void* user) {
  py_target* t = user;
  if (Py_IsInitialized() && !kcpy_finalizing()) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF(t->fn);
    Py_XDECREF(t->attr_names);
    PyGILState_Release(g);
  }
  PyMem_RawFree(t);
}

/* The buffers as NumPy arrays when NumPy is there, else as Tensor views;
 * the views go into `views` to be expired after the call. */
static PyObject* buffer_arg(DLTensor* dl, int writable, PyObject* numpy,
                            PyObject** views) {
  PyObject* view = kcpy_tensor_borrow(dl, writable);
  if (!view) return NULL;
  if (!*views && !(*views = PyList_New(0))) {
    Py_DECREF(view);
    return NULL;
  }
  if (PyList_Append(*views, view) < 0) {
    Py_DECREF(view);
    return NULL;
  }
  if (!numpy) return view;
  PyObject* arr = PyObject_CallMethod(numpy, "asarray", "O", view);
  Py_DECREF(view);
  return arr;
}

static kc_status* py_target_call(kc_xcall_frame* frame) {
  if (frame->stage != KC_XCALL_STAGE_EXECUTE) return NULL;
  py_target* t = frame->user;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject* numpy = PyImport_ImportModule("numpy");
  if (!numpy) PyErr_Clear();
  Py_ssize_t n = frame->num_args + frame->num_results;
  PyObject* args = PyTuple_New(n);
  PyObject* kwargs = PyDict_New();
  PyObject* views = NULL;
  PyObject* result = NULL;
  int ok = args && kwargs;
  /* Buffers positionally (operands, then results), attributes by name. */
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    int is_result = i >= frame->num_args;
    DLTensor* dl = is_result ? &frame->results[i - frame->num_args]
                             : &frame->args[i];
    PyObject* a = buffer_arg(dl, is_result, numpy, &views);
    ok = a != NULL;
    if (ok) PyTuple_SET_ITEM(args, i, a);
  }
  for (int32_t i = 0; ok && i < frame->num_attrs; ++i) {
    PyObject* v = kcpy_attr_to_py(&frame->attrs[i]);
    ok = v && PyDict_SetItem(kwargs, PyTuple_GET_ITEM(t->attr_names, i), v) == 0;
    Py_XDECREF(v);
  }
  if (ok) result = PyObject_Call(t->fn, args, kwargs);
  if (result && result != Py_None) {
    PyErr_Format(PyExc_TypeError,
                 "a custom-call target written in Python returns None (it "
                 "writes its results into the result arrays), not %.100s",
                 Py_TYPE(result)->tp_name);
    Py_CLEAR(result);
  }
  kcpy_views_expire(views);
  kc_status* st = result ? NULL : kcpy_status_from_exception();
  Py_XDECREF(result);
  Py_XDECREF(args);
  Py_XDECREF(kwargs);
  Py_XDECREF(numpy);
  PyGILState_Release(g);
  return st;
}

/* ---- registration ---------------------------------------------------------------- */

/* An attribute type from its name as kc_attr_type_name writes it ("bool",
 * "i8" .. "u64", "f32", "f64", "str", "array", "dict"); None is 0. */
static int attr_type_from(PyObject* text, int32_t* out, const char* what) {
  if (text == Py_None) {
    *out = 0;
    return 0;
  }
  const char* s = PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : NULL;
  for (int32_t type = KC_ATTR_BOOL; s && type <= KC_ATTR_DICT; ++type) {
    if (strcmp(s, kc_attr_type_name(type)) == 0) {
      *out = type;
      return 0;
    }
  }
  if (!PyErr_Occurred()) {
    PyErr_Format(PyExc_ValueError,
                 "%s: unknown attribute type %R (expected bool, i8..i64, "
                 "u8..u64, f32, f64, str, array or dict)",
                 what, text);
  }
  return -1;
}

/* [(dtype or None, rank)] -> buffer specs (PyMem). */
static int buffer_specs(PyObject* seq, kc_xcall_buffer_spec** out,
                        int32_t* n, const char* what) {
  PyObject* fast = PySequence_Fast(seq, what);
  if (!fast) return -1;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
  *out = PyMem_Calloc((size_t)(count ? count : 1), sizeof **out);
  if (!*out) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *dtype, *rank;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "OO", &dtype,
                          &rank)) {
      Py_DECREF(fast);
      return -1;
    }
    (*out)[i].rank = rank == Py_None ? -1 : (int32_t)PyLong_AsLong(rank);
    if (dtype != Py_None) {
      kc_string_view v;
      kc_status* st = kcpy_str_view(dtype, &v, what) < 0
                          ? NULL
                          : kc_dtype_parse(v, &(*out)[i].dtype);
      if (st) kcpy_raise(kc_status_add_context(st, "%s %zd", what, i));
    }
    if (PyErr_Occurred()) {
      Py_DECREF(fast);
      return -1;
    }
  }
  *n = (int32_t)count;
  Py_DECREF(fast);
  return 0;
}

/* register_target(name, fn, args, results, attrs, platform, override[,
 * sig_flags]): args/results are [(dtype or None, rank or None)], attrs
 * [(name, type, elem_type or None)]; sig_flags are KC_XCALL_SIG_* bits. */
static PyObject* register_target(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *name, *fn, *arg_specs, *result_specs, *attr_specs, *platform;
  int override;
  unsigned int sig_flags = 0;
  if (!PyArg_ParseTuple(args, "UOOOOUp|I:register_target", &name, &fn,
                        &arg_specs, &result_specs, &attr_specs, &platform,
                        &override, &sig_flags)) {
    return NULL;
  }
  kc_string_view name_v;
  kc_platform plat;
  if (kcpy_str_view(name, &name_v, "name") < 0 ||
      kcpy_platform_from_py(platform, &plat) < 0) {
    return NULL;
  }
  if (!PyCallable_Check(fn)) {
    PyErr_Format(PyExc_TypeError, "register_target: %R is not callable", fn);
    return NULL;
  }
  /* The signature: buffer specs, then each attribute's name and types
   * (the names, kept in `t`, become the callback's keywords). */
  kc_xcall_signature sig = {.struct_size = sizeof sig, .flags = sig_flags};
  kc_xcall_buffer_spec *ins = NULL, *outs = NULL;
  kc_xcall_attr_spec* attrs = NULL;
  py_target* t = NULL;
  PyObject* fast = NULL;
  PyObject* result = NULL;
  if (buffer_specs(arg_specs, &ins, &sig.num_args, "argument") < 0 ||
      buffer_specs(result_specs, &outs, &sig.num_results, "result") < 0 ||
      !(fast = PySequence_Fast(attr_specs, "attrs"))) {
    goto done;
  }
  Py_ssize_t na = PySequence_Fast_GET_SIZE(fast);
  attrs = PyMem_Calloc((size_t)(na ? na : 1), sizeof *attrs);
  t = PyMem_RawCalloc(1, sizeof *t);
  if (!attrs || !t) {
    PyErr_NoMemory();
    goto done;
  }
  t->attr_names = PyTuple_New(na);
  if (!t->attr_names) goto done;
  for (Py_ssize_t i = 0; i < na; ++i) {
    PyObject *attr_name, *type, *elem;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "UOO",
                          &attr_name, &type, &elem)) {
      goto done;
    }
    PyTuple_SET_ITEM(t->attr_names, i, Py_NewRef(attr_name));
    attrs[i].name = PyUnicode_AsUTF8(attr_name);
    if (!attrs[i].name || attr_type_from(type, &attrs[i].type, "attrs") < 0 ||
        attr_type_from(elem, &attrs[i].elem_type, "attrs") < 0) {
      goto done;
    }
  }
  sig.args = ins;
  sig.results = outs;
  sig.num_attrs = (int32_t)na;
  sig.attrs = attrs;
  t->fn = Py_NewRef(fn);
  kc_status* st = kc_xcall_register_typed(name_v, plat, &sig, py_target_call, t,
                               py_target_delete,
                               override ? KC_REGISTER_OVERRIDE : 0);
  t = NULL; /* the target owns it now, or has freed it */
  if (st) {
    kcpy_raise(st);
  } else {
    result = Py_NewRef(Py_None);
  }
done:
  if (t) {
    Py_XDECREF(t->attr_names);
    Py_XDECREF(t->fn);
    PyMem_RawFree(t);
  }
  Py_XDECREF(fast);
  PyMem_Free(ins);
  PyMem_Free(outs);
  PyMem_Free(attrs);
  return result;
}

PyMethodDef kcpy_target_methods[] = {
    {"register_target", (PyCFunction)register_target, METH_VARARGS,
     "register_target(name, fn, args, results, attrs, platform, "
     "override)\n--\n\nRegisters a typed custom-call target that calls fn."},
    {NULL, NULL, 0, NULL},
};
