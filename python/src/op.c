/*
 * Ops from Python: descriptions (for kcall.ops.<name>'s help) and eager
 * calls. The Python side (kcall/ops.py) makes each op a function with a
 * signature and docs; this file does the work.
 */
#include "kcpy.h"

static const char op_capsule_name[] = "kcall.op";

static const kc_op* op_from_capsule(PyObject* capsule) {
  const kc_op* op = PyCapsule_GetPointer(capsule, op_capsule_name);
  return op;
}

/* The capsule holds a reference to its op: an op can be overridden, or
 * its plugin unloaded, while Python still has the handle. */
static void op_capsule_release(PyObject* capsule) {
  kc_op* op = PyCapsule_GetPointer(capsule, op_capsule_name);
  kc_object_release(KC_OBJECT(op));
}

static PyObject* op_lookup(PyObject* module, PyObject* name) {
  (void)module;
  kc_string_view v;
  if (kcpy_str_view(name, &v, "op name") < 0) return NULL;
  const kc_op* op = NULL;
  kc_status* st = kc_op_registry_lookup_retained(v, &op);
  if (st) return kcpy_raise(st);
  PyObject* capsule = PyCapsule_New((void*)(uintptr_t)op, op_capsule_name,
                                    op_capsule_release);
  if (!capsule) kc_object_release(KC_OBJECT((kc_op*)(uintptr_t)op));
  return capsule;
}

static PyObject* spec_list(const kc_op* op, int32_t n,
                           const char* (*get)(const kc_op*, int32_t)) {
  PyObject* list = PyList_New(n);
  for (int32_t i = 0; list && i < n; ++i) {
    PyObject* s = PyUnicode_FromString(get(op, i));
    if (!s) Py_CLEAR(list);
    else PyList_SET_ITEM(list, i, s);
  }
  return list;
}

static PyObject* kernels_of(kc_string_view name) {
  kc_array* kernels = NULL;
  kc_status* st = kc_kernel_registry_list(NULL, name, &kernels);
  if (st) return kcpy_raise(st);
  size_t n = kc_array_get_size(kernels);
  PyObject* list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; ++i) {
    PyObject* s = kcpy_py_from_arg(kc_array_get_item(kernels, i), NULL);
    if (!s) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, s);
  }
  kc_object_release(KC_OBJECT(kernels));
  return list;
}

PyObject* kcpy_gradient_dict(const kc_op_gradient* gp) {
  kc_op_gradient g = *gp;
  static const char* const sources[] = {"", "input", "output", "cotangent",
                                       "tangent"};
  PyObject* args = PyList_New(g.num_args);
  PyObject* results = PyList_New(g.num_results);
  for (int32_t i = 0; args && i < g.num_args; ++i) {
    PyObject* item = Py_BuildValue("(si)", sources[g.args[i].source],
                                   (int)g.args[i].index);
    if (!item) Py_CLEAR(args);
    else PyList_SET_ITEM(args, i, item);
  }
  for (int32_t i = 0; results && i < g.num_results; ++i) {
    PyObject* item = PyLong_FromLong(g.results[i]);
    if (!item) Py_CLEAR(results);
    else PyList_SET_ITEM(results, i, item);
  }
  if (!args || !results) {
    Py_XDECREF(args);
    Py_XDECREF(results);
    return NULL;
  }
  return Py_BuildValue("{s:s,s:s,s:N,s:N}", "op", g.op_name, "spec", g.spec,
                       "args", args, "results", results);
}

/* The op's gradient declaration or (`jvp`) forward-mode rule
 * (kcpy_gradient_dict), or None. */
static PyObject* rule_of(const kc_op* op, bool jvp) {
  kc_op_gradient g = {.struct_size = sizeof g};
  if (!(jvp ? kc_op_get_jvp : kc_op_get_gradient)(op, &g)) Py_RETURN_NONE;
  return kcpy_gradient_dict(&g);
}

/* {attr name: default value} for the attrs that have one. */
static PyObject* defaults_of(const kc_op* op) {
  PyObject* out = PyDict_New();
  for (int32_t i = 0; out && i < kc_op_get_attr_count(op); ++i) {
    const kc_any* value = kc_op_get_attr_default(op, i);
    if (!value) continue;
    kc_any copy = *value;
    kc_any_retain(&copy);
    PyObject* py = kcpy_py_from_owned(&copy);
    const char* spec = kc_op_get_attr_spec(op, i);
    PyObject* name = PyUnicode_FromStringAndSize(spec, (Py_ssize_t)strcspn(spec, ":"));
    if (!py || !name || PyDict_SetItem(out, name, py) < 0) Py_CLEAR(out);
    Py_XDECREF(py);
    Py_XDECREF(name);
  }
  return out;
}

static size_t format_signature(const void* op, char* buf, size_t cap) {
  return kc_op_format_signature(op, buf, cap);
}

/* op_describe(capsule) -> dict: name, signature, inputs, outputs, attrs
 * (spec strings), flags (names), doc, kernels (descriptions), gradient
 * and jvp (rule_of), defaults (defaults_of) and batching (its rule's
 * name). */
static PyObject* op_describe(PyObject* module, PyObject* capsule) {
  (void)module;
  const kc_op* op = op_from_capsule(capsule);
  if (!op) return NULL;
  PyObject* signature = kcpy_format_str(format_signature, op);
  uint32_t flags = kc_op_get_flags(op);
  kc_string_view name = kc_op_get_name(op);
  PyObject* flag_names = PyList_New(0);
  static const struct {
    uint32_t bit;
    const char* name;
  } names[] = {{KC_OP_COMMUTATIVE, "commutative"},
               {KC_OP_AGGREGATE, "aggregate"},
               {KC_OP_STATEFUL, "stateful"},
               {KC_OP_SYMBOLIC_SHAPES, "symbolic_shapes"}};
  for (size_t i = 0; flag_names && i < sizeof names / sizeof names[0]; ++i) {
    if (!(flags & names[i].bit)) continue;
    PyObject* s = PyUnicode_FromString(names[i].name);
    if (!s || PyList_Append(flag_names, s) < 0) Py_CLEAR(flag_names);
    Py_XDECREF(s);
  }
  return Py_BuildValue(
      "{s:s#,s:N,s:N,s:N,s:N,s:N,s:s,s:N,s:N,s:N,s:N,s:s}", "name", name.data,
      (Py_ssize_t)name.size, "signature", signature, "inputs",
      spec_list(op, kc_op_get_input_count(op), kc_op_get_input_spec),
      "outputs",
      spec_list(op, kc_op_get_output_count(op), kc_op_get_output_spec),
      "attrs", spec_list(op, kc_op_get_attr_count(op), kc_op_get_attr_spec),
      "flags", flag_names, "doc", kc_op_get_doc(op), "kernels",
      kernels_of(name), "gradient", rule_of(op, false), "jvp", rule_of(op, true), "defaults",
      defaults_of(op), "batching", kc_op_batching_name(kc_op_get_batching(op)));
}

static PyObject* list_ops(PyObject* module, PyObject* const* args,
                          Py_ssize_t nargs) {
  (void)module;
  kc_string_view prefix = {"", 0};
  if (nargs > 1) {
    PyErr_SetString(PyExc_TypeError, "list_ops(prefix='')");
    return NULL;
  }
  if (nargs == 1 && kcpy_str_view(args[0], &prefix, "prefix") < 0) return NULL;
  kc_array* names = NULL;
  kc_status* st = kc_op_registry_list(NULL, prefix, &names);
  if (st) return kcpy_raise(st);
  PyObject* list = kcpy_py_from_owned(&(kc_any){
      .type_index = KC_TYPE_ARRAY, .u.v_obj = KC_OBJECT(names)});
  return list;
}

static PyObject* builtin_ops_register(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  kc_status* st = kc_builtin_ops_register();
  if (st) return kcpy_raise(st);
  Py_RETURN_NONE;
}

/* Converted inputs and attributes of one call, and their cleanup. */
typedef struct op_call_args {
  const DLTensor* inputs[KC_OP_MAX_TENSORS];
  kcpy_slot slots[KC_OP_MAX_TENSORS];
  Py_ssize_t num_slots;
  kc_op_attr attrs[KC_OP_MAX_ATTRS];
  Py_ssize_t num_attrs;
} op_call_args;

static void op_call_args_clean(op_call_args* a) {
  for (Py_ssize_t i = 0; i < a->num_slots; ++i) kcpy_slot_clean(&a->slots[i]);
  for (Py_ssize_t i = 0; i < a->num_attrs; ++i) kc_any_release(&a->attrs[i].value);
}

/* The attributes of a call from the dict `dict`: owned values in
 * attrs[0 .. *count), which the caller releases, also on failure. Messages
 * name the op when `op_name` (quoted) is given. */
static int op_attrs_from(PyObject* dict, kc_op_attr* attrs, Py_ssize_t* count,
                         const char* op_name) {
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    kc_op_attr* attr = &attrs[*count];
    if (kcpy_str_view(key, &attr->name, "attribute name") < 0) return -1;
    kcpy_what what = {.text = PyUnicode_AsUTF8(key), .index = -1,
                      .op = op_name};
    if (kcpy_owned_from_py(value, &attr->value, what) < 0) return -1;
    (*count)++;
  }
  return 0;
}

/* A tensor argument: a kcall.Tensor as it is, any other array borrowed. */
static int op_input(PyObject* obj, op_call_args* a, Py_ssize_t i,
                    const char* op_name) {
  kcpy_what what = {.text = "input", .index = i, .op = op_name};
  a->inputs[i] = kcpy_array_arg(obj, what, a->slots, &a->num_slots);
  return a->inputs[i] ? 0 : -1;
}

/* op_call(capsule, inputs: tuple, attrs: dict, stream=None) -> list of
 * Tensors. On a device the kernel runs on `stream` (None: kcall's, waited
 * for), and DLPack inputs are made ready on it. */
static PyObject* op_call(PyObject* module, PyObject* const* args,
                         Py_ssize_t nargs) {
  (void)module;
  if ((nargs != 3 && nargs != 4) || !PyTuple_Check(args[1]) ||
      !PyDict_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError,
                    "op_call(op, inputs: tuple, attrs: dict, stream=None)");
    return NULL;
  }
  kc_op_call_options options = {.struct_size = sizeof options};
  int has_stream = nargs == 4 && args[3] != Py_None;
  if (has_stream && kcpy_stream_parse(args[3], &options.stream) < 0) {
    return NULL;
  }
  const kc_op* op = op_from_capsule(args[0]);
  if (!op) return NULL;
  kc_string_view name_view = kc_op_get_name(op);
  char op_name[KC_QUOTED_CAP];
  kc_sv_format_quoted(name_view, op_name, sizeof op_name);
  Py_ssize_t n = PyTuple_GET_SIZE(args[1]);
  Py_ssize_t na = PyDict_GET_SIZE(args[2]);
  if (n > KC_OP_MAX_TENSORS || na > KC_OP_MAX_ATTRS) {
    PyErr_Format(PyExc_ValueError,
                 "op %s: %zd inputs and %zd attributes; at most %d and %d",
                 op_name, n, na, KC_OP_MAX_TENSORS, KC_OP_MAX_ATTRS);
    return NULL;
  }
  op_call_args* a = PyMem_Malloc(sizeof *a);
  if (!a) return PyErr_NoMemory();
  a->num_slots = 0;
  a->num_attrs = 0;
  /* Inputs (DLPack ones made ready on the call's stream), then
   * attributes. */
  int ok = 1;
  kcpy_consumer_stream_set(has_stream, options.stream);
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    ok = op_input(PyTuple_GET_ITEM(args[1], i), a, i, op_name) == 0;
  }
  kcpy_consumer_stream_set(0, NULL);
  if (ok) ok = op_attrs_from(args[2], a->attrs, &a->num_attrs, op_name) == 0;
  /* The call, without the GIL; then its outputs as Tensors. */
  kc_tensor* outs[KC_OP_MAX_TENSORS];
  int32_t num_outs = 0;
  kc_status* st = NULL;
  if (ok) {
    Py_BEGIN_ALLOW_THREADS
    st = kc_op_call(op, a->inputs, (int32_t)n, a->attrs,
                    (int32_t)a->num_attrs, &options, outs, KC_OP_MAX_TENSORS,
                    &num_outs);
    Py_END_ALLOW_THREADS
  }
  op_call_args_clean(a);
  PyMem_Free(a);
  if (!ok) return NULL;
  if (st) return kcpy_raise(st);
  PyObject* list = PyList_New(num_outs);
  for (int32_t i = 0; i < num_outs; ++i) {
    PyObject* t = list ? kcpy_tensor_wrap(outs[i])
                       : (kc_object_release(KC_OBJECT(outs[i])), NULL);
    if (list && !t) Py_CLEAR(list);
    if (list) PyList_SET_ITEM(list, i, t);
  }
  return list;
}

/* Shapes, dtypes and attributes for a shape inference, freed together. */
typedef struct infer_args {
  DLTensor tensors[KC_OP_MAX_TENSORS];
  const DLTensor* inputs[KC_OP_MAX_TENSORS];
  int64_t dims[KC_OP_MAX_TENSORS][KC_TENSOR_MAX_NDIM];
  kc_op_attr attrs[KC_OP_MAX_ATTRS];
  kc_op_output_info outs[KC_OP_MAX_TENSORS];
} infer_args;

/* Releases the first num_attrs attribute values and frees `a`. */
static void infer_args_free(infer_args* a, Py_ssize_t num_attrs) {
  for (Py_ssize_t i = 0; i < num_attrs; ++i) kc_any_release(&a->attrs[i].value);
  PyMem_Free(a);
}

/* Input `i` completed once its dims are in a->dims[i] (`ok` says whether
 * reading them went well): its dtype, parsed from `dtype`, and the
 * shapeless CPU tensor a->inputs[i] points to. 0, or -1 with an exception
 * set. */
static int infer_input_finish(infer_args* a, Py_ssize_t i, PyObject* dtype,
                              Py_ssize_t rank, int ok) {
  kc_string_view dv;
  kc_status* st = NULL;
  if (ok) ok = kcpy_str_view(dtype, &dv, "dtype") == 0;
  if (ok) st = kc_dtype_parse(dv, &a->tensors[i].dtype);
  if (st) {
    kcpy_raise(st);
    ok = 0;
  }
  a->tensors[i].device = kc_device_cpu();
  a->tensors[i].ndim = (int32_t)rank;
  a->tensors[i].shape = a->dims[i];
  a->inputs[i] = &a->tensors[i];
  return ok ? 0 : -1;
}

/* Input `i` from its (shape, dtype) pair: a shapeless CPU tensor in
 * a->tensors[i], which a->inputs[i] points to. */
static int infer_input_from(PyObject* item, infer_args* a, Py_ssize_t i) {
  PyObject *shape, *dtype;
  int ok = PyArg_ParseTuple(item, "OU", &shape, &dtype);
  PyObject* dims = ok ? PySequence_Fast(shape, "shape") : NULL;
  ok = dims != NULL;
  Py_ssize_t rank = ok ? PySequence_Fast_GET_SIZE(dims) : 0;
  if (ok && rank > KC_TENSOR_MAX_NDIM) {
    PyErr_SetString(PyExc_ValueError, "op_infer: rank above 32");
    ok = 0;
  }
  for (Py_ssize_t d = 0; ok && d < rank; ++d) {
    a->dims[i][d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(dims, d));
    ok = !(a->dims[i][d] == -1 && PyErr_Occurred());
  }
  Py_XDECREF(dims);
  return infer_input_finish(a, i, dtype, rank, ok);
}

/* [(shape or None, dtype)] for the inferred outputs; a dim left unknown
 * is None. */
static PyObject* infer_outputs_to_py(const kc_op_output_info* outs,
                                     int32_t num_outs) {
  PyObject* list = PyList_New(num_outs);
  for (int32_t i = 0; list && i < num_outs; ++i) {
    const kc_op_output_info* o = &outs[i];
    PyObject* shape = o->rank < 0 ? Py_NewRef(Py_None) : PyTuple_New(o->rank);
    for (int32_t d = 0; shape && shape != Py_None && d < o->rank; ++d) {
      PyObject* dim = o->dims[d] < 0 ? Py_NewRef(Py_None)
                                     : PyLong_FromLongLong(o->dims[d]);
      if (!dim) Py_CLEAR(shape);
      else PyTuple_SET_ITEM(shape, d, dim);
    }
    PyObject* item = shape ? Py_BuildValue("(NN)", shape,
                                           kcpy_dtype_name(o->dtype))
                           : NULL;
    if (!item) Py_CLEAR(list);
    else PyList_SET_ITEM(list, i, item);
  }
  return list;
}

static int sym_input_from(PyObject* item, infer_args* a, Py_ssize_t i,
                          PyObject* names);

/* Reads a shape inference's arguments (op, inputs: [(shape, dtype)],
 * attrs: dict) into a new infer_args (PyMem_Free through infer_args_free):
 * dims as numbers, or, with `names` (symbol name -> number), numbers or
 * symbols' names. NULL with an exception set. `what` names the call. */
static infer_args* infer_args_read(PyObject* const* args, Py_ssize_t nargs, const char* what,
                                   PyObject* names, const kc_op** out_op, Py_ssize_t* out_n,
                                   Py_ssize_t* out_num_attrs) {
  if (nargs != 3 || !PyList_Check(args[1]) || !PyDict_Check(args[2])) {
    PyErr_Format(PyExc_TypeError, "%s(op, inputs: list of (%s, dtype), attrs: dict)", what,
                 names ? "dims" : "shape");
    return NULL;
  }
  const kc_op* op = op_from_capsule(args[0]);
  if (!op) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(args[1]);
  if (n > KC_OP_MAX_TENSORS || PyDict_GET_SIZE(args[2]) > KC_OP_MAX_ATTRS) {
    PyErr_Format(PyExc_ValueError, "%s: too many inputs or attrs", what);
    return NULL;
  }
  infer_args* a = PyMem_Calloc(1, sizeof *a);
  if (!a) return (infer_args*)PyErr_NoMemory();
  Py_ssize_t num_attrs = 0;
  int ok = 1;
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(args[1], i);
    ok = (names ? sym_input_from(item, a, i, names) : infer_input_from(item, a, i)) == 0;
  }
  if (ok) ok = op_attrs_from(args[2], a->attrs, &num_attrs, NULL) == 0;
  if (!ok) {
    infer_args_free(a, num_attrs);
    return NULL;
  }
  *out_op = op;
  *out_n = n;
  *out_num_attrs = num_attrs;
  return a;
}

/* op_infer(handle, inputs: [(shape, dtype)], attrs: dict) ->
 * [(shape or None, dtype)]: shape inference alone (kc_op_infer); a dim
 * the shape function leaves unknown is None. */
static PyObject* op_infer(PyObject* module, PyObject* const* args,
                          Py_ssize_t nargs) {
  (void)module;
  const kc_op* op;
  Py_ssize_t n, num_attrs;
  infer_args* a = infer_args_read(args, nargs, "op_infer", NULL, &op, &n, &num_attrs);
  if (!a) return NULL;
  int32_t num_outs = 0;
  kc_status* st = kc_op_infer(op, a->inputs, (int32_t)n, a->attrs, (int32_t)num_attrs,
                              a->outs, KC_OP_MAX_TENSORS, &num_outs);
  PyObject* list = st ? kcpy_raise(st) : infer_outputs_to_py(a->outs, num_outs);
  infer_args_free(a, num_attrs);
  return list;
}

/* One dim of a symbolic result as Python: an int, None (unknown), or an
 * expression tuple ("input", i, j), ("add"|"sub"|"mul"|"floordiv", x,
 * y). */
static PyObject* sym_dim_to_py(const kc_symbolic_shapes* s, int64_t dim,
                               int depth) {
  static const char* const kinds[] = {"", "input", "add", "sub", "mul",
                                      "floordiv"};
  if (dim >= 0) return PyLong_FromLongLong(dim);
  if (dim == KC_DIM_UNKNOWN) Py_RETURN_NONE;
  if (depth > 200) {
    PyErr_SetString(PyExc_RecursionError, "op_infer_symbolic: expression "
                    "too deep");
    return NULL;
  }
  int32_t kind = 0;
  int64_t a = 0, b = 0;
  kc_status* st = kc_symbolic_shapes_get_expr(s, dim, &kind, &a, &b);
  if (st) return kcpy_raise(st);
  if (kind < KC_DIM_EXPR_INPUT || kind > KC_DIM_EXPR_DIVIDE) {
    PyErr_Format(PyExc_RuntimeError, "op_infer_symbolic: expression kind %d",
                 (int)kind);
    return NULL;
  }
  if (kind == KC_DIM_EXPR_INPUT) {
    return Py_BuildValue("(sLL)", kinds[kind], (long long)a, (long long)b);
  }
  PyObject* x = sym_dim_to_py(s, a, depth + 1);
  PyObject* y = x ? sym_dim_to_py(s, b, depth + 1) : NULL;
  if (!y) {
    Py_XDECREF(x);
    return NULL;
  }
  return Py_BuildValue("(sNN)", kinds[kind], x, y);
}

/* {"outputs": [(shape or None, dtype)], "assumptions": [(kind, x, y)]}
 * of a symbolic result; kind is "eq", "ge" or "divisible". */
static PyObject* sym_result_to_py(const kc_symbolic_shapes* s) {
  static const char* const relations[] = {"", "eq", "ge", "divisible"};
  int32_t n = kc_symbolic_shapes_get_output_count(s);
  PyObject* outs = PyList_New(n);
  for (int32_t i = 0; outs && i < n; ++i) {
    DLDataType dtype;
    int32_t rank = 0;
    const int64_t* dims = NULL;
    kc_status* st = kc_symbolic_shapes_get_output(s, i, &dtype, &rank, &dims);
    if (st) {
      kcpy_raise(st);
      Py_CLEAR(outs);
      break;
    }
    PyObject* shape = rank < 0 ? Py_NewRef(Py_None) : PyTuple_New(rank);
    for (int32_t d = 0; shape && shape != Py_None && d < rank; ++d) {
      PyObject* dim = sym_dim_to_py(s, dims[d], 0);
      if (!dim) Py_CLEAR(shape);
      else PyTuple_SET_ITEM(shape, d, dim);
    }
    PyObject* item = shape ? Py_BuildValue("(NN)", shape,
                                           kcpy_dtype_name(dtype))
                           : NULL;
    if (!item) Py_CLEAR(outs);
    else PyList_SET_ITEM(outs, i, item);
  }
  int32_t na = kc_symbolic_shapes_get_assumption_count(s);
  PyObject* assumed = outs ? PyList_New(na) : NULL;
  for (int32_t i = 0; assumed && i < na; ++i) {
    int32_t kind = 0;
    int64_t l = 0, r = 0;
    kc_status* st = kc_symbolic_shapes_get_assumption(s, i, &kind, &l, &r);
    PyObject* item = NULL;
    if (st) {
      kcpy_raise(st);
    } else if (kind < KC_DIM_ASSUME_EQUAL || kind > KC_DIM_ASSUME_DIVISIBLE) {
      PyErr_Format(PyExc_RuntimeError, "op_infer_symbolic: assumption kind "
                   "%d", (int)kind);
    } else {
      PyObject* x = sym_dim_to_py(s, l, 0);
      PyObject* y = x ? sym_dim_to_py(s, r, 0) : NULL;
      if (!y) Py_XDECREF(x);
      else item = Py_BuildValue("(sNN)", relations[kind], x, y);
    }
    if (!item) Py_CLEAR(assumed);
    else PyList_SET_ITEM(assumed, i, item);
  }
  if (!assumed) {
    Py_XDECREF(outs);
    return NULL;
  }
  return Py_BuildValue("{s:N,s:N}", "outputs", outs, "assumptions", assumed);
}

/* Input `i` of a symbolic inference from its (dims, dtype) pair, a dim an
 * int >= 0 or a str naming a symbol (`names` maps each name to its
 * number). */
static int sym_input_from(PyObject* item, infer_args* a, Py_ssize_t i,
                          PyObject* names) {
  PyObject *shape, *dtype;
  if (!PyArg_ParseTuple(item, "OU", &shape, &dtype)) return -1;
  PyObject* dims = PySequence_Fast(shape, "shape");
  if (!dims) return -1;
  Py_ssize_t rank = PySequence_Fast_GET_SIZE(dims);
  int ok = 1;
  if (rank > KC_TENSOR_MAX_NDIM) {
    PyErr_Format(PyExc_ValueError, "op_infer_symbolic: input %zd: rank %zd "
                 "above %d", i, rank, KC_TENSOR_MAX_NDIM);
    ok = 0;
  }
  for (Py_ssize_t d = 0; ok && d < rank; ++d) {
    PyObject* v = PySequence_Fast_GET_ITEM(dims, d);
    if (PyUnicode_Check(v)) {
      PyObject* k = PyDict_GetItemWithError(names, v);
      if (!k && !PyErr_Occurred()) {
        if (PyDict_GET_SIZE(names) >= KC_DIM_SYMBOL_COUNT) {
          PyErr_SetString(PyExc_ValueError, "op_infer_symbolic: too many "
                          "symbols");
          ok = 0;
          break;
        }
        k = PyLong_FromSsize_t(PyDict_GET_SIZE(names));
        ok = k && PyDict_SetItem(names, v, k) == 0;
        Py_XDECREF(k); /* the dict holds it */
      }
      ok = ok && k;
      if (ok) a->dims[i][d] = KC_DIM_SYMBOL(PyLong_AsLongLong(k));
    } else {
      a->dims[i][d] = PyLong_AsLongLong(v);
      ok = !(a->dims[i][d] == -1 && PyErr_Occurred());
      if (ok && a->dims[i][d] < 0) {
        PyErr_Format(PyExc_ValueError, "op_infer_symbolic: input %zd: dim %zd "
                     "is %lld: expected a size (>= 0) or a symbol's name",
                     i, d, (long long)a->dims[i][d]);
        ok = 0;
      }
    }
  }
  Py_DECREF(dims);
  return infer_input_finish(a, i, dtype, rank, ok);
}

/* op_infer_symbolic(handle, inputs: [(dims, dtype)], attrs: dict) ->
 * sym_result_to_py's dict: kc_op_infer_symbolic, with a dim given as an
 * int or the name (str) of a symbol; equal names, equal sizes. */
static PyObject* op_infer_symbolic(PyObject* module, PyObject* const* args,
                                   Py_ssize_t nargs) {
  (void)module;
  PyObject* names = PyDict_New();
  if (!names) return NULL;
  const kc_op* op;
  Py_ssize_t n, num_attrs;
  infer_args* a = infer_args_read(args, nargs, "op_infer_symbolic", names, &op, &n,
                                  &num_attrs);
  Py_DECREF(names);
  if (!a) return NULL;
  kc_symbolic_shapes* shapes = NULL;
  kc_status* st = kc_op_infer_symbolic(op, a->inputs, (int32_t)n, a->attrs,
                                       (int32_t)num_attrs, &shapes);
  infer_args_free(a, num_attrs);
  PyObject* result = st ? kcpy_raise(st) : sym_result_to_py(shapes);
  kc_symbolic_shapes_destroy(shapes);
  return result;
}

PyMethodDef kcpy_op_methods[] = {
    {"op_infer", (PyCFunction)(void (*)(void))op_infer, METH_FASTCALL,
     "op_infer(handle, inputs, attrs)\n--\n\nThe outputs' (shape, dtype) "
     "from shape inference alone; inputs are (shape, dtype) pairs."},
    {"op_infer_symbolic", (PyCFunction)(void (*)(void))op_infer_symbolic,
     METH_FASTCALL,
     "op_infer_symbolic(handle, inputs, attrs)\n--\n\nShape inference on "
     "symbolic dims: inputs are (dims, dtype) pairs, a dim an int or a "
     "symbol's name; returns {'outputs': [(shape, dtype)], 'assumptions': "
     "[(kind, x, y)]}, dims as ints, None or expression tuples."},
    {"op_lookup", (PyCFunction)op_lookup, METH_O,
     "op_lookup(name)\n--\n\nA handle to the registered op `name`."},
    {"op_describe", (PyCFunction)op_describe, METH_O,
     "op_describe(handle)\n--\n\nThe op's definition as a dict."},
    {"op_call", (PyCFunction)(void (*)(void))op_call, METH_FASTCALL,
     "op_call(handle, inputs, attrs, stream=None)\n--\n\nCalls the op "
     "eagerly (on `stream` for device inputs); returns the list of "
     "outputs."},
    {"list_ops", (PyCFunction)(void (*)(void))list_ops, METH_FASTCALL,
     "list_ops(prefix='')\n--\n\nThe registered op names, sorted."},
    {"builtin_ops_register", builtin_ops_register, METH_NOARGS,
     "builtin_ops_register()\n--\n\nRegisters kcall's built-in ops (kc.*), "
     "once; kcall does so on import."},
    {NULL, NULL, 0, NULL},
};
