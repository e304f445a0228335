/*
 * kcall.ProgramBuilder: builds a kcall.Program instruction by instruction
 * (parameters, constants, tuples, elementwise ops, broadcasts and custom
 * calls, whose typed attributes attrs.c converts).
 */
#include "kcpy.h"

#include <string.h>

typedef struct py_builder {
  PyObject_HEAD
  kc_program_builder* b;
  int64_t next_parameter;
} py_builder;

static PyTypeObject builder_type;

static void builder_dealloc(py_builder* self) {
  kc_program_builder_destroy(self->b);
  PyObject_Free(self);
}

static PyObject* builder_new(PyTypeObject* type, PyObject* args,
                             PyObject* kwargs) {
  static char* names[] = {"name", NULL};
  PyObject* name = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|U:ProgramBuilder", names,
                                   &name)) {
    return NULL;
  }
  kc_string_view v = {"main", 4};
  if (name && kcpy_str_view(name, &v, "name") < 0) return NULL;
  kc_program_builder* b = NULL;
  kc_status* st = kc_program_builder_create(v, &b);
  if (st) return kcpy_raise(st);
  py_builder* self = (py_builder*)type->tp_alloc(type, 0);
  if (!self) {
    kc_program_builder_destroy(b);
    return NULL;
  }
  self->b = b;
  self->next_parameter = 0;
  return (PyObject*)self;
}

static int builder_live(py_builder* self) {
  if (self->b) return 0;
  PyErr_SetString(PyExc_ValueError,
                  "kcall.ProgramBuilder: finish() was called already");
  return -1;
}

static PyObject* id_or_raise(kc_status* st, int32_t id) {
  return st ? kcpy_raise(st) : PyLong_FromLong(id);
}

static int name_arg(PyObject* name, kc_string_view* out) {
  out->data = "";
  out->size = 0;
  return name ? kcpy_str_view(name, out, "name") : 0;
}

static PyObject* builder_parameter(py_builder* self, PyObject* args,
                                   PyObject* kwargs) {
  static char* names[] = {"shape", "name", "number", NULL};
  PyObject *shape_text, *name = NULL;
  long long number = -1;
  if (builder_live(self) < 0 ||
      !PyArg_ParseTupleAndKeywords(args, kwargs, "U|UL:parameter", names,
                                   &shape_text, &name, &number)) {
    return NULL;
  }
  kc_string_view nv;
  if (name_arg(name, &nv) < 0) return NULL;
  kc_shape* shape = kcpy_shape_parse(shape_text, "parameter shape");
  if (!shape) return NULL;
  if (number < 0) number = self->next_parameter;
  int32_t id = -1;
  kc_status* st =
      kc_program_builder_add_parameter(self->b, number, shape, nv, &id);
  kc_shape_destroy(shape);
  if (!st && number >= self->next_parameter) self->next_parameter = number + 1;
  return id_or_raise(st, id);
}

static PyObject* builder_constant(py_builder* self, PyObject* args,
                                  PyObject* kwargs) {
  static char* names[] = {"array", "name", NULL};
  PyObject *array, *name = NULL;
  if (builder_live(self) < 0 ||
      !PyArg_ParseTupleAndKeywords(args, kwargs, "O|U:constant", names, &array,
                                   &name)) {
    return NULL;
  }
  kc_string_view nv;
  if (name_arg(name, &nv) < 0) return NULL;
  kcpy_slot slot;
  memset(&slot, 0, sizeof slot);
  int rc = kcpy_array_view(array, &slot, kcpy_what_text("constant"));
  PyObject* out = NULL;
  if (rc == 0) {
    PyErr_Format(PyExc_TypeError, "constant: expected an array, got %.100s",
                 Py_TYPE(array)->tp_name);
  } else if (rc > 0 && !kc_dltensor_is_compact(&slot.dl)) {
    PyErr_SetString(PyExc_ValueError,
                    "constant: the array is strided; pass a C-contiguous "
                    "copy");
  } else if (rc > 0) {
    kc_shape* shape = NULL;
    kc_status* st = kc_shape_create_array(slot.dl.dtype, slot.dl.shape,
                                          slot.dl.ndim, &shape);
    int32_t id = -1;
    if (!st) {
      st = kc_program_builder_add_constant(
          self->b, shape, (char*)slot.dl.data + slot.dl.byte_offset,
          kc_shape_get_byte_size(shape), nv, &id);
    }
    kc_shape_destroy(shape);
    out = id_or_raise(st, id);
  }
  kcpy_slot_clean(&slot);
  return out;
}

/* Operand ids from a sequence of ints. *out is PyMem-allocated. */
static int ids_from(PyObject* seq, int32_t** out, size_t* n) {
  PyObject* fast = PySequence_Fast(seq, "operands must be a sequence of ids");
  if (!fast) return -1;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
  *out = PyMem_Malloc(sizeof(int32_t) * (size_t)(count ? count : 1));
  if (!*out) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      PyMem_Free(*out);
      return -1;
    }
    (*out)[i] = (int32_t)v;
  }
  *n = (size_t)count;
  Py_DECREF(fast);
  return 0;
}

static PyObject* builder_tuple(py_builder* self, PyObject* args,
                               PyObject* kwargs) {
  static char* names[] = {"operands", "name", NULL};
  PyObject *ops, *name = NULL;
  if (builder_live(self) < 0 ||
      !PyArg_ParseTupleAndKeywords(args, kwargs, "O|U:tuple", names, &ops,
                                   &name)) {
    return NULL;
  }
  kc_string_view nv;
  int32_t* ids;
  size_t n;
  if (name_arg(name, &nv) < 0 || ids_from(ops, &ids, &n) < 0) return NULL;
  int32_t id = -1;
  kc_status* st = kc_program_builder_add_tuple(self->b, ids, n, nv, &id);
  PyMem_Free(ids);
  return id_or_raise(st, id);
}

static PyObject* builder_gte(py_builder* self, PyObject* args,
                             PyObject* kwargs) {
  static char* names[] = {"operand", "index", "name", NULL};
  int operand;
  long long index;
  PyObject* name = NULL;
  if (builder_live(self) < 0 ||
      !PyArg_ParseTupleAndKeywords(args, kwargs, "iL|U:get_tuple_element",
                                   names, &operand, &index, &name)) {
    return NULL;
  }
  kc_string_view nv;
  if (name_arg(name, &nv) < 0) return NULL;
  int32_t id = -1;
  kc_status* st = kc_program_builder_add_get_tuple_element(self->b, operand,
                                                           index, nv, &id);
  return id_or_raise(st, id);
}

static const struct {
  const char* name;
  kc_opcode op;
} opcodes[] = {
    {"add", KC_OP_ADD},           {"subtract", KC_OP_SUBTRACT},
    {"multiply", KC_OP_MULTIPLY}, {"divide", KC_OP_DIVIDE},
    {"maximum", KC_OP_MAXIMUM},   {"minimum", KC_OP_MINIMUM},
    {"negate", KC_OP_NEGATE},     {"exponential", KC_OP_EXPONENTIAL},
    {"log", KC_OP_LOG},           {"convert", KC_OP_CONVERT},
    {"reshape", KC_OP_RESHAPE},
};

static PyObject* builder_op(py_builder* self, PyObject* args,
                            PyObject* kwargs) {
  static char* names[] = {"opcode", "shape", "operands", "name", NULL};
  const char* opname;
  PyObject *shape_text, *ops, *name = NULL;
  if (builder_live(self) < 0 ||
      !PyArg_ParseTupleAndKeywords(args, kwargs, "sUO|U:op", names, &opname,
                                   &shape_text, &ops, &name)) {
    return NULL;
  }
  int found = -1;
  for (size_t i = 0; i < sizeof opcodes / sizeof opcodes[0]; ++i) {
    if (strcmp(opcodes[i].name, opname) == 0) found = (int)i;
  }
  if (found < 0) {
    PyErr_Format(PyExc_ValueError,
                 "op: unknown opcode %s (expected add, subtract, multiply, "
                 "divide, maximum, minimum, negate, exponential, log, "
                 "convert or reshape)",
                 KCPY_QS(opname));
    return NULL;
  }
  kc_string_view nv;
  int32_t* ids;
  size_t n;
  if (name_arg(name, &nv) < 0 || ids_from(ops, &ids, &n) < 0) return NULL;
  kc_shape* shape = kcpy_shape_parse(shape_text, "op shape");
  int32_t id = -1;
  kc_status* st = NULL;
  if (shape) {
    st = kc_program_builder_add_op(self->b, opcodes[found].op, shape, ids, n,
                                   nv, &id);
  }
  kc_shape_destroy(shape);
  PyMem_Free(ids);
  return shape ? id_or_raise(st, id) : NULL;
}

static PyObject* builder_broadcast(py_builder* self, PyObject* args,
                                   PyObject* kwargs) {
  static char* names[] = {"operand", "shape", "dimensions", "name", NULL};
  int operand;
  PyObject *shape_text, *dims_seq, *name = NULL;
  if (builder_live(self) < 0 ||
      !PyArg_ParseTupleAndKeywords(args, kwargs, "iUO|U:broadcast", names,
                                   &operand, &shape_text, &dims_seq, &name)) {
    return NULL;
  }
  kc_string_view nv;
  int32_t* dims32;
  size_t n;
  if (name_arg(name, &nv) < 0 || ids_from(dims_seq, &dims32, &n) < 0) {
    return NULL;
  }
  int64_t dims[KC_TENSOR_MAX_NDIM];
  for (size_t i = 0; i < n && i < KC_TENSOR_MAX_NDIM; ++i) dims[i] = dims32[i];
  PyMem_Free(dims32);
  if (n > KC_TENSOR_MAX_NDIM) {
    PyErr_SetString(PyExc_ValueError, "broadcast: too many dimensions");
    return NULL;
  }
  kc_shape* shape = kcpy_shape_parse(shape_text, "broadcast shape");
  if (!shape) return NULL;
  int32_t id = -1;
  kc_status* st = kc_program_builder_add_broadcast(self->b, shape, operand,
                                                   dims, n, nv, &id);
  kc_shape_destroy(shape);
  return id_or_raise(st, id);
}

static PyObject* builder_custom_call(py_builder* self, PyObject* args,
                                     PyObject* kwargs) {
  static char* names[] = {"target",      "operands", "shape",
                          "api_version", "opaque",   "attrs",
                          "has_side_effect", "name", NULL};
  PyObject *target, *ops, *shape_text, *attrs = NULL, *name = NULL;
  int api = KC_XCALL_API_ORIGINAL, side_effect = 0;
  Py_buffer opaque = {0};
  if (builder_live(self) < 0 ||
      !PyArg_ParseTupleAndKeywords(args, kwargs, "UOU|$iy*O!pU:custom_call",
                                   names, &target, &ops, &shape_text, &api,
                                   &opaque, &PyDict_Type, &attrs,
                                   &side_effect, &name)) {
    return NULL;
  }
  kc_custom_call_desc desc = {.struct_size = sizeof desc};
  kc_string_view nv;
  int32_t* ids = NULL;
  size_t n = 0;
  kcpy_attr_arena arena = {0};
  kc_attr_dict dict = {0};
  kc_shape* shape = NULL;
  PyObject* out = NULL;
  if (name_arg(name, &nv) == 0 &&
      kcpy_str_view(target, &desc.target, "target") == 0 &&
      ids_from(ops, &ids, &n) == 0 &&
      (!attrs || kcpy_attr_dict_from_py(attrs, &dict, &arena) == 0) &&
      (shape = kcpy_shape_parse(shape_text, "custom-call shape")) != NULL) {
    desc.operands = ids;
    desc.num_operands = n;
    desc.result_shape = shape;
    desc.opaque = opaque.buf;
    desc.opaque_size = opaque.buf ? (size_t)opaque.len : 0;
    desc.has_side_effect = side_effect;
    desc.api_version = api;
    desc.attrs = attrs ? &dict : NULL;
    int32_t id = -1;
    kc_status* st = kc_program_builder_add_custom_call(self->b, &desc, nv, &id);
    out = id_or_raise(st, id);
  }
  kc_shape_destroy(shape);
  PyMem_Free(ids);
  kcpy_attr_arena_free(&arena);
  if (opaque.obj) PyBuffer_Release(&opaque);
  return out;
}

static PyObject* builder_set_root(py_builder* self, PyObject* arg) {
  if (builder_live(self) < 0) return NULL;
  long id = PyLong_AsLong(arg);
  if (id == -1 && PyErr_Occurred()) return NULL;
  kc_status* st = kc_program_builder_set_root(self->b, (int32_t)id);
  if (st) return kcpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject* builder_finish(py_builder* self, PyObject* unused) {
  (void)unused;
  if (builder_live(self) < 0) return NULL;
  kc_program* p = NULL;
  kc_status* st = kc_program_builder_finish(self->b, &p);
  self->b = NULL; /* consumed either way */
  return st ? kcpy_raise(st) : kcpy_program_wrap(p);
}

static PyMethodDef builder_methods[] = {
    {"parameter", (PyCFunction)(void (*)(void))builder_parameter,
     METH_VARARGS | METH_KEYWORDS,
     "parameter(shape, name='', number=None)\n--\n\nAdds a parameter "
     "(numbered in order unless given); returns its id."},
    {"constant", (PyCFunction)(void (*)(void))builder_constant,
     METH_VARARGS | METH_KEYWORDS,
     "constant(array, name='')\n--\n\nAdds a constant holding a copy of the "
     "array."},
    {"tuple", (PyCFunction)(void (*)(void))builder_tuple,
     METH_VARARGS | METH_KEYWORDS, "tuple(operands, name='')\n--\n\n"},
    {"get_tuple_element", (PyCFunction)(void (*)(void))builder_gte,
     METH_VARARGS | METH_KEYWORDS,
     "get_tuple_element(operand, index, name='')\n--\n\n"},
    {"op", (PyCFunction)(void (*)(void))builder_op,
     METH_VARARGS | METH_KEYWORDS,
     "op(opcode, shape, operands, name='')\n--\n\nAn elementwise op, "
     "convert or reshape: opcode is 'add', 'subtract', 'multiply', "
     "'divide',\n'maximum', 'minimum', 'negate', 'exponential', 'log', "
     "'convert' or 'reshape'."},
    {"broadcast", (PyCFunction)(void (*)(void))builder_broadcast,
     METH_VARARGS | METH_KEYWORDS,
     "broadcast(operand, shape, dimensions, name='')\n--\n\nOperand dim i "
     "becomes result dim dimensions[i]."},
    {"custom_call", (PyCFunction)(void (*)(void))builder_custom_call,
     METH_VARARGS | METH_KEYWORDS,
     "custom_call(target, operands, shape, *, api_version=1, opaque=b'', "
     "attrs=None, has_side_effect=False, name='')\n--\n\nA custom call; "
     "api_version 1 to 4 as XLA numbers them (4: kcall's typed handlers, "
     "which get `attrs`).\nAttribute types: bool; int is i64 and float "
     "f64; a NumPy scalar or 1-d array\nkeeps its own type "
     "(numpy.float32(2.0) is f32); str; lists of numbers; dicts."},
    {"set_root", (PyCFunction)builder_set_root, METH_O,
     "set_root(id)\n--\n\nMakes `id` the result (default: the last)."},
    {"finish", (PyCFunction)builder_finish, METH_NOARGS,
     "finish()\n--\n\nThe kcall.Program; the builder is used up."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject builder_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kcall.ProgramBuilder",
    .tp_basicsize = sizeof(py_builder),
    .tp_dealloc = (destructor)builder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "ProgramBuilder(name='main')\n--\n\nBuilds a program "
              "instruction by instruction; each method returns the\nnew "
              "instruction's id, which later instructions use as an operand.",
    .tp_methods = builder_methods,
    .tp_new = builder_new,
};

int kcpy_builder_init_type(PyObject* module) {
  if (PyType_Ready(&builder_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "ProgramBuilder",
                               (PyObject*)&builder_type);
}
