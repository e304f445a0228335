/*
 * Typed custom-call attributes (kc_attr) <-> Python values: the dict
 * ProgramBuilder.custom_call takes, and the keyword arguments a target
 * written in Python (target.c) is called with.
 */
#include "kcpy.h"

#include <string.h>

/* ---- from Python ------------------------------------------------------------ */

static void* arena_alloc(kcpy_attr_arena* a, size_t size) {
  if (a->count == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 8;
    void** blocks = PyMem_Realloc(a->blocks, cap * sizeof *blocks);
    if (!blocks) return NULL;
    a->blocks = blocks;
    a->cap = cap;
  }
  void* p = PyMem_Calloc(1, size ? size : 1);
  if (p) a->blocks[a->count++] = p;
  return p;
}

void kcpy_attr_arena_free(kcpy_attr_arena* a) {
  for (size_t i = 0; i < a->count; ++i) PyMem_Free(a->blocks[i]);
  PyMem_Free(a->blocks);
}

static int attr_dict_from(PyObject* dict, kc_attr_dict* out,
                          kcpy_attr_arena* a, int depth);

static int attr_array_from(PyObject* seq, kc_attr* attr,
                           kcpy_attr_arena* a) {
  PyObject* fast = PySequence_Fast(seq, "attribute array");
  if (!fast) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  int all_int = 1;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* x = PySequence_Fast_GET_ITEM(fast, i);
    if (PyBool_Check(x) || (!PyLong_Check(x) && !PyFloat_Check(x))) {
      Py_DECREF(fast);
      PyErr_Format(PyExc_TypeError,
                   "attribute %s: array item %zd is %.100s; arrays hold "
                   "ints or floats",
                   KCPY_Q(attr->name), i,
                   Py_TYPE(x)->tp_name);
      return -1;
    }
    if (!PyLong_Check(x)) all_int = 0;
  }
  attr->type = KC_ATTR_ARRAY;
  attr->elem_type = all_int ? KC_ATTR_I64 : KC_ATTR_F64;
  void* data = arena_alloc(a, 8 * (size_t)n);
  if (!data) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* x = PySequence_Fast_GET_ITEM(fast, i);
    if (all_int) {
      ((int64_t*)data)[i] = PyLong_AsLongLong(x);
    } else {
      ((double*)data)[i] = PyFloat_AsDouble(x);
    }
  }
  Py_DECREF(fast);
  if (PyErr_Occurred()) return -1;
  attr->v.array.data = data;
  attr->v.array.count = (size_t)n;
  return 0;
}

/* The attribute type of a buffer's items (struct-module format), or 0. */
static int32_t buffer_attr_type(const Py_buffer* view) {
  const char* f = view->format ? view->format : "B";
  if (*f == '@' || *f == '=' || *f == '<') ++f;
  if (!f[0] || f[1]) return 0;
  Py_ssize_t n = view->itemsize;
  switch (f[0]) {
    case '?': return n == 1 ? KC_ATTR_BOOL : 0;
    case 'b': return KC_ATTR_I8;
    case 'h': return KC_ATTR_I16;
    case 'B': return KC_ATTR_U8;
    case 'H': return KC_ATTR_U16;
    case 'i': case 'l': case 'q':
      return n == 4 ? KC_ATTR_I32 : n == 8 ? KC_ATTR_I64 : 0;
    case 'I': case 'L': case 'Q':
      return n == 4 ? KC_ATTR_U32 : n == 8 ? KC_ATTR_U64 : 0;
    case 'f': return n == 4 ? KC_ATTR_F32 : 0;
    case 'd': return n == 8 ? KC_ATTR_F64 : 0;
    default: return 0;
  }
}

/* A typed scalar (numpy.float32(2.0)) or a 1-d array of numbers (a NumPy
 * array, array.array) keeps its width: 1 when `value` was one, 0 when it
 * has no buffer, -1 with an exception. */
static int attr_from_buffer(PyObject* value, kc_attr* attr,
                            kcpy_attr_arena* a) {
  if (!PyObject_CheckBuffer(value) || PyBytes_Check(value) ||
      PyByteArray_Check(value)) {
    return 0;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(value, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
    return -1;
  }
  int32_t type = buffer_attr_type(&view);
  int rc = 1;
  if (!type || view.ndim > 1) {
    PyErr_Format(PyExc_TypeError,
                 "attribute %s: a buffer of format %s and %d "
                 "dimensions; attributes take numbers, or 1-d arrays of them",
                 KCPY_Q(attr->name), KCPY_QS(view.format ? view.format : "B"),
                 view.ndim);
    rc = -1;
  } else if (view.ndim == 0) {
    attr->type = type;
    switch (type) {
      case KC_ATTR_BOOL: attr->v.b = *(const bool*)view.buf; break;
      case KC_ATTR_I8: attr->v.i64 = *(const int8_t*)view.buf; break;
      case KC_ATTR_I16: attr->v.i64 = *(const int16_t*)view.buf; break;
      case KC_ATTR_I32: attr->v.i64 = *(const int32_t*)view.buf; break;
      case KC_ATTR_I64: attr->v.i64 = *(const int64_t*)view.buf; break;
      case KC_ATTR_U8: attr->v.u64 = *(const uint8_t*)view.buf; break;
      case KC_ATTR_U16: attr->v.u64 = *(const uint16_t*)view.buf; break;
      case KC_ATTR_U32: attr->v.u64 = *(const uint32_t*)view.buf; break;
      case KC_ATTR_U64: attr->v.u64 = *(const uint64_t*)view.buf; break;
      case KC_ATTR_F32: attr->v.f32 = *(const float*)view.buf; break;
      default: attr->v.f64 = *(const double*)view.buf; break;
    }
  } else {
    void* data = arena_alloc(a, (size_t)view.len);
    if (!data) {
      PyErr_NoMemory();
      rc = -1;
    } else {
      memcpy(data, view.buf, (size_t)view.len);
      attr->type = KC_ATTR_ARRAY;
      attr->elem_type = type;
      attr->v.array.data = data;
      attr->v.array.count = (size_t)(view.len / view.itemsize);
    }
  }
  PyBuffer_Release(&view);
  return rc;
}

static int attr_from(PyObject* value, kc_attr* attr, kcpy_attr_arena* a,
                     int depth) {
  int typed = attr_from_buffer(value, attr, a);
  if (typed != 0) return typed < 0 ? -1 : 0;
  if (PyBool_Check(value)) {
    attr->type = KC_ATTR_BOOL;
    attr->v.b = value == Py_True;
  } else if (PyLong_Check(value)) {
    attr->type = KC_ATTR_I64;
    attr->v.i64 = PyLong_AsLongLong(value);
    if (attr->v.i64 == -1 && PyErr_Occurred()) return -1;
  } else if (PyFloat_Check(value)) {
    attr->type = KC_ATTR_F64;
    attr->v.f64 = PyFloat_AS_DOUBLE(value);
  } else if (PyUnicode_Check(value)) {
    attr->type = KC_ATTR_STRING;
    return kcpy_str_view(value, &attr->v.str, "attribute");
  } else if (PyDict_Check(value)) {
    attr->type = KC_ATTR_DICT;
    return attr_dict_from(value, &attr->v.dict, a, depth + 1);
  } else if (PyList_Check(value) || PyTuple_Check(value)) {
    return attr_array_from(value, attr, a);
  } else {
    PyErr_Format(PyExc_TypeError,
                 "attribute %s: a %.100s; attributes are bool, int "
                 "(i64), float (f64), str, NumPy scalars and 1-d arrays "
                 "(their own type), lists of numbers or dicts of these",
                 KCPY_Q(attr->name),
                 Py_TYPE(value)->tp_name);
    return -1;
  }
  return 0;
}

static int attr_dict_from(PyObject* dict, kc_attr_dict* out,
                          kcpy_attr_arena* a, int depth) {
  if (depth > 16) {
    PyErr_SetString(PyExc_ValueError, "attributes nested too deeply");
    return -1;
  }
  Py_ssize_t n = PyDict_GET_SIZE(dict);
  kc_attr* entries = arena_alloc(a, sizeof(kc_attr) * (size_t)n);
  if (!entries) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t pos = 0, i = 0;
  PyObject *key, *value;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    if (kcpy_str_view(key, &entries[i].name, "attribute name") < 0 ||
        attr_from(value, &entries[i], a, depth) < 0) {
      return -1;
    }
    ++i;
  }
  out->count = (size_t)n;
  out->entries = entries;
  return 0;
}

int kcpy_attr_dict_from_py(PyObject* dict, kc_attr_dict* out,
                           kcpy_attr_arena* arena) {
  return attr_dict_from(dict, out, arena, 0);
}

/* ---- back to Python ------------------------------------------------------------ */

static PyObject* attr_array_to_py(const kc_attr* a) {
  size_t n = a->v.array.count;
  PyObject* list = PyList_New((Py_ssize_t)n);
  const void* d = a->v.array.data;
  for (size_t i = 0; list && i < n; ++i) {
    PyObject* x = NULL;
    switch (a->elem_type) {
      case KC_ATTR_BOOL: x = PyBool_FromLong(((const bool*)d)[i]); break;
      case KC_ATTR_I8: x = PyLong_FromLong(((const int8_t*)d)[i]); break;
      case KC_ATTR_I16: x = PyLong_FromLong(((const int16_t*)d)[i]); break;
      case KC_ATTR_I32: x = PyLong_FromLong(((const int32_t*)d)[i]); break;
      case KC_ATTR_I64: x = PyLong_FromLongLong(((const int64_t*)d)[i]); break;
      case KC_ATTR_U8: x = PyLong_FromUnsignedLong(((const uint8_t*)d)[i]); break;
      case KC_ATTR_U16: x = PyLong_FromUnsignedLong(((const uint16_t*)d)[i]); break;
      case KC_ATTR_U32: x = PyLong_FromUnsignedLong(((const uint32_t*)d)[i]); break;
      case KC_ATTR_U64:
        x = PyLong_FromUnsignedLongLong(((const uint64_t*)d)[i]);
        break;
      case KC_ATTR_F32: x = PyFloat_FromDouble(((const float*)d)[i]); break;
      case KC_ATTR_F64: x = PyFloat_FromDouble(((const double*)d)[i]); break;
      default:
        PyErr_Format(PyExc_TypeError, "attribute array of %s",
                     kc_attr_type_name(a->elem_type));
        break;
    }
    if (!x) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  return list;
}

PyObject* kcpy_attr_to_py(const kc_attr* a) {
  switch (a->type) {
    case KC_ATTR_BOOL: return PyBool_FromLong(a->v.b);
    case KC_ATTR_I8: case KC_ATTR_I16: case KC_ATTR_I32: case KC_ATTR_I64:
      return PyLong_FromLongLong(a->v.i64);
    case KC_ATTR_U8: case KC_ATTR_U16: case KC_ATTR_U32: case KC_ATTR_U64:
      return PyLong_FromUnsignedLongLong(a->v.u64);
    case KC_ATTR_F32: return PyFloat_FromDouble(a->v.f32);
    case KC_ATTR_F64: return PyFloat_FromDouble(a->v.f64);
    case KC_ATTR_STRING:
      return PyUnicode_DecodeUTF8(a->v.str.data, (Py_ssize_t)a->v.str.size,
                                  "surrogateescape");
    case KC_ATTR_ARRAY: return attr_array_to_py(a);
    case KC_ATTR_DICT: {
      PyObject* d = PyDict_New();
      for (size_t i = 0; d && i < a->v.dict.count; ++i) {
        const kc_attr* e = &a->v.dict.entries[i];
        PyObject* k = PyUnicode_FromStringAndSize(e->name.data,
                                                  (Py_ssize_t)e->name.size);
        PyObject* v = k ? kcpy_attr_to_py(e) : NULL;
        if (!v || PyDict_SetItem(d, k, v) < 0) Py_CLEAR(d);
        Py_XDECREF(k);
        Py_XDECREF(v);
      }
      return d;
    }
    default:
      PyErr_Format(PyExc_TypeError, "attribute of unknown type %d", a->type);
      return NULL;
  }
}
