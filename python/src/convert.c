/*
 * kc_any <-> Python objects.
 *
 *   Python                         kc_any (argument)        kc_any (owned)
 *   None, bool, int, float         NONE, BOOL, INT, FLOAT   the same
 *   str                            SMALL_STR or RAW_STR     SMALL_STR or STR
 *   bytes                          BYTES                    BYTES
 *   kcall.Tensor                   TENSOR (a view: DLTENSOR_PTR)
 *   NumPy, buffers, __dlpack__     DLTENSOR_PTR (borrowed)  TENSOR (keeps
 *                                                           the owner alive)
 *   kcall.Function                 FUNC                     FUNC
 *   any other callable             FUNC (calls back)        FUNC
 *   list, tuple                    ARRAY                    ARRAY
 *
 * Back to Python: strings become str, bytes bytes, arrays lists, tensors
 * kcall.Tensor, functions kcall.Function (or the Python callable they
 * wrap), dtypes and devices their names, opaque pointers ints.
 */
#include "kcpy.h"

#include <string.h>

int kcpy_str_view(PyObject* obj, kc_string_view* out, const char* what) {
  Py_ssize_t n;
  const char* s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8AndSize(obj, &n)
                                       : NULL;
  if (!s) {
    if (!PyErr_Occurred()) {
      PyErr_Format(PyExc_TypeError, "%s: expected str, got %.100s", what,
                   Py_TYPE(obj)->tp_name);
    }
    return -1;
  }
  out->data = s;
  out->size = (size_t)n;
  return 0;
}

int kcpy_platform_from_py(PyObject* text, kc_platform* out) {
  kc_string_view v;
  if (kcpy_str_view(text, &v, "platform") < 0) return -1;
  kc_status* st = kc_platform_parse(v, out);
  if (st) {
    kcpy_raise(st);
    return -1;
  }
  return 0;
}

const char* kcpy_what_format(kcpy_what w, char* buf, size_t cap) {
  int n = 0;
  if (w.op) n = snprintf(buf, cap, "op %s: ", w.op); /* quoted already */
  if (n < 0 || (size_t)n >= cap) return buf;
  if (w.index >= 0) {
    snprintf(buf + n, cap - (size_t)n, "%s %zd", w.text, w.index);
  } else {
    snprintf(buf + n, cap - (size_t)n, "%s", w.text);
  }
  return buf;
}

static int int_value(PyObject* obj, int64_t* out, kcpy_what what) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow) {
    PyErr_Format(PyExc_OverflowError, "%s: %R does not fit in a 64-bit int",
                 KCPY_WHAT(what), obj);
    return -1;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

static kc_any object_any(void* obj) { return kc_any_object(KC_OBJECT(obj)); }

/* Makes a status into a Python exception with `what` as its context. */
static int raise_status(kc_status* st, kcpy_what what) {
  kcpy_raise(kc_status_add_context(st, "%s", KCPY_WHAT(what)));
  return -1;
}

/* ---- owned values ---------------------------------------------------------- */

static int owned_list(PyObject* seq, kc_any* out, kcpy_what what) {
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  kc_any* values = PyMem_Calloc((size_t)(n ? n : 1), sizeof(kc_any));
  if (!values) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t done = 0;
  int rc = 0;
  for (; done < n; ++done) {
    char item_what[300];
    snprintf(item_what, sizeof item_what, "%s[%zd]", KCPY_WHAT(what), done);
    if (kcpy_owned_from_py(items[done], &values[done],
                           kcpy_what_text(item_what)) < 0) {
      rc = -1;
      break;
    }
  }
  if (rc == 0) {
    kc_array* array = NULL;
    kc_status* st = kc_array_create(NULL, values, (size_t)n, &array);
    if (st) rc = raise_status(st, what);
    else *out = object_any(array);
  }
  for (Py_ssize_t i = 0; i < done; ++i) kc_any_release(&values[i]);
  PyMem_Free(values);
  return rc;
}

int kcpy_owned_from_py(PyObject* obj, kc_any* out, kcpy_what what) {
  *out = kc_any_none();
  if (obj == Py_None) return 0;
  if (PyBool_Check(obj)) {
    *out = kc_any_bool(obj == Py_True);
    return 0;
  }
  if (PyLong_Check(obj)) {
    int64_t v;
    if (int_value(obj, &v, what) < 0) return -1;
    *out = kc_any_int(v);
    return 0;
  }
  if (PyFloat_Check(obj)) {
    *out = kc_any_float(PyFloat_AS_DOUBLE(obj));
    return 0;
  }
  if (PyUnicode_Check(obj)) {
    kc_string_view v;
    if (kcpy_str_view(obj, &v, "string") < 0) return -1;
    kc_status* st = kc_any_from_string(NULL, v, out);
    return st ? raise_status(st, what) : 0;
  }
  if (PyBytes_Check(obj)) {
    kc_bytes* b = NULL;
    kc_status* st = kc_bytes_create(NULL, PyBytes_AS_STRING(obj),
                                    (size_t)PyBytes_GET_SIZE(obj), &b);
    if (st) return raise_status(st, what);
    *out = object_any(b);
    return 0;
  }
  if (kcpy_tensor_check(obj)) {
    kcpy_tensor* t = (kcpy_tensor*)obj;
    if (!t->tensor) {
      PyErr_Format(PyExc_ValueError,
                   "%s: a tensor lent to this callback cannot be kept or "
                   "returned (its memory belongs to the caller); return a "
                   "copy",
                   KCPY_WHAT(what));
      return -1;
    }
    kc_object_retain(KC_OBJECT(t->tensor));
    *out = object_any(t->tensor);
    return 0;
  }
  if (kcpy_func_check(obj)) {
    kc_func* f = ((kcpy_func*)obj)->func;
    kc_object_retain(KC_OBJECT(f));
    *out = object_any(f);
    return 0;
  }
  int scalar = kcpy_numpy_scalar(obj, out);
  if (scalar != 0) return scalar < 0 ? -1 : 0;
  if (PyList_Check(obj) || PyTuple_Check(obj)) {
    PyObject* seq = PySequence_Fast(obj, "a list");
    if (!seq) return -1;
    int rc = owned_list(seq, out, what);
    Py_DECREF(seq);
    return rc;
  }
  kcpy_slot probe;
  memset(&probe, 0, sizeof probe);
  int is_array = kcpy_array_view(obj, &probe, what);
  kcpy_slot_clean(&probe);
  if (is_array < 0) return -1;
  if (is_array > 0) {
    kc_tensor* t = kcpy_array_to_tensor(obj, what);
    if (!t) return -1;
    *out = object_any(t);
    return 0;
  }
  if (PyIndex_Check(obj)) {
    PyObject* index = PyNumber_Index(obj);
    if (!index) return -1;
    int64_t v;
    int rc = int_value(index, &v, what);
    Py_DECREF(index);
    if (rc == 0) *out = kc_any_int(v);
    return rc;
  }
  if (PyCallable_Check(obj)) {
    kc_func* f = kcpy_func_from_callable(obj);
    if (!f) return -1;
    *out = object_any(f);
    return 0;
  }
  PyErr_Format(PyExc_TypeError,
               "%s: kcall cannot hold a %.100s (it takes None, bool, int, "
               "float, str, bytes, arrays, functions, callables, lists and "
               "tuples)",
               KCPY_WHAT(what), Py_TYPE(obj)->tp_name);
  return -1;
}

/* ---- call arguments ----------------------------------------------------------- */

int kcpy_arg_from_py(PyObject* obj, kc_any* out, kcpy_slot* slot,
                     Py_ssize_t index) {
  slot->clean = KCPY_CLEAN_NONE;
  slot->heap_strides = NULL;
  slot->nowrite = KCPY_NOWRITE_NONE;
  PyTypeObject* type = Py_TYPE(obj);
  if (type == &PyUnicode_Type) {
    Py_ssize_t n;
    const char* s = PyUnicode_AsUTF8AndSize(obj, &n);
    if (!s) return -1;
    if (n <= KC_SMALL_STR_MAX) {
      kc_any v = kc_any_none();
      v.type_index = KC_TYPE_SMALL_STR;
      v.small_len = (uint32_t)n;
      memcpy(v.u.v_small, s, (size_t)n);
      v.u.v_small[n] = '\0';
      *out = v;
      return 0;
    }
    if (strlen(s) == (size_t)n) {
      *out = kc_any_cstr(s); /* the str lives through the call */
      return 0;
    }
    /* An embedded NUL: a string object carries its length. */
  }
  if (type == &kcpy_tensor_type) {
    kcpy_tensor* t = (kcpy_tensor*)obj;
    if (!t->tensor && (t->expired || !t->dl)) {
      PyErr_Format(PyExc_ValueError,
                   "argument %zd: a tensor lent to a callback that has "
                   "returned",
                   index);
      return -1;
    }
    slot->nowrite = t->nowrite;
    *out = t->tensor ? object_any(t->tensor) : kc_any_dltensor(t->dl);
    return 0;
  }
  if (type == &kcpy_func_type) {
    *out = object_any(((kcpy_func*)obj)->func);
    return 0;
  }
  if (PyFunction_Check(obj) || PyMethod_Check(obj) || PyCFunction_Check(obj)) {
    kc_func* f = kcpy_func_for_argument(obj);
    if (!f) return -1;
    *out = object_any(f);
    slot->clean = KCPY_CLEAN_OBJECT;
    slot->p = f;
    return 0;
  }
  if (!PyLong_Check(obj) && !PyFloat_Check(obj) && !PyUnicode_Check(obj) &&
      !PyBool_Check(obj) && obj != Py_None && !PyList_Check(obj) &&
      !PyTuple_Check(obj) && !PyBytes_Check(obj)) {
    int scalar = kcpy_numpy_scalar(obj, out);
    if (scalar != 0) return scalar < 0 ? -1 : 0;
    int is_array = kcpy_array_view(obj, slot, kcpy_what_index("argument", index));
    if (is_array > 0) {
      *out = kc_any_dltensor(&slot->dl);
      return 0;
    }
    if (is_array < 0) {
      kcpy_slot_clean(slot);
      return -1;
    }
  }
  /* Everything else is what an owned value would be; objects made for
   * the call are released after it. */
  if (kcpy_owned_from_py(obj, out, kcpy_what_index("argument", index)) < 0) {
    return -1;
  }
  if (kc_any_is_object(out)) {
    slot->clean = KCPY_CLEAN_OBJECT;
    slot->p = out->u.v_obj;
  }
  return 0;
}

/* ---- back to Python ------------------------------------------------------------ */

static PyObject* str_from_view(kc_string_view v) {
  return PyUnicode_DecodeUTF8(v.data ? v.data : "", (Py_ssize_t)v.size,
                              "surrogateescape");
}

PyObject* kcpy_device_name(DLDevice d) {
  char buf[64];
  kc_device_format(d, buf, sizeof buf);
  return PyUnicode_FromString(buf);
}

PyObject* kcpy_format_str(kcpy_formatter format, const void* obj) {
  char buf[512];
  size_t need = format(obj, buf, sizeof buf);
  if (need < sizeof buf) return PyUnicode_FromString(buf);
  char* big = PyMem_Malloc(need + 1);
  if (!big) return PyErr_NoMemory();
  format(obj, big, need + 1);
  PyObject* s = PyUnicode_FromString(big);
  PyMem_Free(big);
  return s;
}

/* Plain values and borrowed objects; `*handled` says whether it was one. */
static PyObject* plain_to_py(const kc_any* v, int* handled) {
  *handled = 1;
  switch (v->type_index) {
    case KC_TYPE_NONE: Py_RETURN_NONE;
    case KC_TYPE_BOOL: return PyBool_FromLong(v->u.v_int64 != 0);
    case KC_TYPE_INT: return PyLong_FromLongLong(v->u.v_int64);
    case KC_TYPE_FLOAT: return PyFloat_FromDouble(v->u.v_float64);
    case KC_TYPE_OPAQUE_PTR:
      if (!v->u.v_ptr) Py_RETURN_NONE;
      return PyLong_FromVoidPtr(v->u.v_ptr);
    case KC_TYPE_DTYPE: return kcpy_dtype_name(v->u.v_dtype);
    case KC_TYPE_DEVICE: return kcpy_device_name(v->u.v_device);
    case KC_TYPE_RAW_STR:
      return str_from_view(kc_sv(v->u.v_c_str));
    case KC_TYPE_SMALL_STR: {
      kc_string_view s = {v->u.v_small, v->small_len};
      return str_from_view(s);
    }
    case KC_TYPE_STR: {
      kc_string_view s;
      kc_any_get_string(v, &s);
      return str_from_view(s);
    }
    case KC_TYPE_BYTES: {
      kc_string_view b = kc_bytes_get_view((const kc_bytes*)(void*)v->u.v_obj);
      return PyBytes_FromStringAndSize(b.data, (Py_ssize_t)b.size);
    }
    case KC_TYPE_ARRAY: {
      const kc_array* a = (const kc_array*)(void*)v->u.v_obj;
      size_t n = kc_array_get_size(a);
      PyObject* list = PyList_New((Py_ssize_t)n);
      for (size_t i = 0; list && i < n; ++i) {
        PyObject* item = kcpy_py_from_arg(kc_array_get_item(a, i), NULL);
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
      }
      return list;
    }
    default:
      *handled = 0;
      return NULL;
  }
}

static PyObject* unknown_type(const kc_any* v) {
  PyErr_Format(PyExc_TypeError, "kcall: no Python form for a value of type %s",
               kc_type_name(v->type_index));
  return NULL;
}

PyObject* kcpy_py_from_owned(kc_any* value) {
  kc_any v = *value;
  *value = kc_any_none();
  if (v.type_index == KC_TYPE_TENSOR) {
    return kcpy_tensor_wrap((kc_tensor*)(void*)v.u.v_obj);
  }
  if (v.type_index == KC_TYPE_FUNC) {
    kc_func* f = (kc_func*)(void*)v.u.v_obj;
    PyObject* callable = kcpy_func_get_callable(f);
    if (callable) {
      Py_INCREF(callable);
      kc_object_release(KC_OBJECT(f));
      return callable;
    }
    return kcpy_func_wrap(f, NULL);
  }
  int handled;
  PyObject* out = plain_to_py(&v, &handled);
  if (!handled) out = unknown_type(&v);
  if (kc_any_is_object(&v)) kc_any_release(&v);
  return out;
}

PyObject* kcpy_py_from_arg(const kc_any* value, PyObject** views) {
  if (value->type_index == KC_TYPE_DLTENSOR_PTR) {
    if (!value->u.v_dltensor || !views) {
      PyErr_SetString(PyExc_TypeError,
                      "kcall: a borrowed tensor where none may be");
      return NULL;
    }
    if (!*views && !(*views = PyList_New(0))) return NULL;
    PyObject* view = kcpy_tensor_borrow(value->u.v_dltensor, 1);
    if (view && PyList_Append(*views, view) < 0) Py_CLEAR(view);
    return view;
  }
  if (value->type_index == KC_TYPE_TENSOR ||
      value->type_index == KC_TYPE_FUNC) {
    kc_any copy = *value;
    kc_any_retain(&copy);
    return kcpy_py_from_owned(&copy);
  }
  int handled;
  PyObject* out = plain_to_py(value, &handled);
  return handled ? out : unknown_type(value);
}

void kcpy_views_expire(PyObject* views) {
  if (!views) return;
  Py_ssize_t n = PyList_GET_SIZE(views);
  for (Py_ssize_t i = 0; i < n; ++i) {
    kcpy_tensor_expire(PyList_GET_ITEM(views, i));
  }
  Py_DECREF(views);
}
