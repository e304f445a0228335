/*
 * Programs from Python: kcall.Program (parsed from HLO text or built),
 * kcall.ProgramBuilder, and kcall.Executable (compiled, callable with
 * arrays). Compilation and execution release the GIL.
 */
#include "kcpy.h"

#include <string.h>

/* ---- shapes ------------------------------------------------------------------ */

static PyObject* shape_str(const kc_shape* shape) {
  char buf[512];
  size_t need = kc_shape_format(shape, buf, sizeof buf);
  if (need < sizeof buf) return PyUnicode_FromString(buf);
  char* big = PyMem_Malloc(need + 1);
  if (!big) return PyErr_NoMemory();
  kc_shape_format(shape, big, need + 1);
  PyObject* s = PyUnicode_FromString(big);
  PyMem_Free(big);
  return s;
}

static kc_shape* shape_parse(PyObject* text, const char* what) {
  kc_string_view v;
  if (kcpy_str_view(text, &v, what) < 0) return NULL;
  kc_shape* shape = NULL;
  kc_status* st = kc_shape_parse(v, &shape);
  if (st) {
    kcpy_raise(kc_status_add_context(st, "%s", what));
    return NULL;
  }
  return shape;
}

/* ---- Program ------------------------------------------------------------------ */

typedef struct py_program {
  PyObject_HEAD
  kc_program* program;
} py_program;

static PyTypeObject program_type;

static PyObject* program_wrap(kc_program* p) {
  py_program* self = PyObject_New(py_program, &program_type);
  if (!self) {
    kc_program_destroy(p);
    return NULL;
  }
  self->program = p;
  return (PyObject*)self;
}

static void program_dealloc(py_program* self) {
  kc_program_destroy(self->program);
  PyObject_Free(self);
}

static PyObject* program_parse(PyObject* cls, PyObject* args,
                               PyObject* kwargs) {
  (void)cls;
  static char* names[] = {"text", "source", NULL};
  PyObject* text;
  const char* source = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|z:parse", names, &text,
                                   &source)) {
    return NULL;
  }
  kc_string_view v;
  if (kcpy_str_view(text, &v, "text") < 0) return NULL;
  kc_program* p = NULL;
  kc_status* st = kc_program_parse(v, &p);
  if (st) {
    if (source) st = kc_status_add_context(st, "in %s", KCPY_QS(source));
    return kcpy_raise(st);
  }
  return program_wrap(p);
}

static PyObject* program_load(PyObject* cls, PyObject* arg) {
  (void)cls;
  PyObject* path = NULL;
  if (!PyUnicode_FSConverter(arg, &path)) return NULL;
  const char* p = PyBytes_AS_STRING(path);
  FILE* f = fopen(p, "rb");
  PyObject* out = NULL;
  if (!f) {
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, p);
  } else {
    PyObject* chunks = PyBytes_FromStringAndSize(NULL, 0);
    char buf[65536];
    size_t got;
    while (chunks && (got = fread(buf, 1, sizeof buf, f)) > 0) {
      PyObject* more = PyBytes_FromStringAndSize(buf, (Py_ssize_t)got);
      if (!more) Py_CLEAR(chunks);
      else PyBytes_ConcatAndDel(&chunks, more);
    }
    int failed = ferror(f);
    fclose(f);
    if (chunks && failed) {
      PyErr_SetFromErrnoWithFilename(PyExc_OSError, p);
    } else if (chunks) {
      kc_string_view text = {PyBytes_AS_STRING(chunks),
                             (size_t)PyBytes_GET_SIZE(chunks)};
      kc_program* program = NULL;
      kc_status* st = kc_program_parse(text, &program);
      out = st ? kcpy_raise(kc_status_add_context(st, "in %s", KCPY_QS(p)))
               : program_wrap(program);
    }
    Py_XDECREF(chunks);
  }
  Py_DECREF(path);
  return out;
}

static PyObject* program_get_name(py_program* self, void* unused) {
  (void)unused;
  return PyUnicode_FromString(kc_program_get_name(self->program));
}

static PyObject* program_get_parameters(py_program* self, void* unused) {
  (void)unused;
  size_t n = kc_program_get_parameter_count(self->program);
  PyObject* list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; ++i) {
    PyObject* item = Py_BuildValue(
        "(sN)", kc_program_get_parameter_name(self->program, i),
        shape_str(kc_program_get_parameter_shape(self->program, i)));
    if (!item) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject* program_get_result_shape(py_program* self, void* unused) {
  (void)unused;
  return shape_str(kc_program_get_result_shape(self->program));
}

static PyObject* program_get_count(py_program* self, void* unused) {
  (void)unused;
  return PyLong_FromSize_t(kc_program_get_instruction_count(self->program));
}

/* ---- Executable ----------------------------------------------------------------- */

typedef struct py_executable {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  kc_executable* exe;
  size_t num_inputs;
  size_t num_outputs;
  int tuple_result;
  DLDevice device; /* where it runs: cpu, or cuda:N */
} py_executable;

static PyTypeObject executable_type;

static void executable_dealloc(py_executable* self) {
  kc_executable* exe = self->exe;
  Py_BEGIN_ALLOW_THREADS
  kc_executable_destroy(exe); /* runs handler state deleters */
  Py_END_ALLOW_THREADS
  PyObject_Free(self);
}

/* Inputs as DLTensors: kcall tensors as they are, other arrays borrowed
 * into slots[0 .. *num_slots). */
static int gather_inputs(PyObject* const* args, Py_ssize_t n,
                         const DLTensor** inputs, kcpy_slot* slots,
                         Py_ssize_t* num_slots) {
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* obj = args[i];
    if (kcpy_tensor_check(obj) && ((kcpy_tensor*)obj)->dl) {
      inputs[i] = ((kcpy_tensor*)obj)->dl;
      continue;
    }
    kcpy_slot* slot = &slots[(*num_slots)++];
    memset(slot, 0, sizeof *slot);
    int rc = kcpy_array_view(obj, slot, kcpy_what_index("input", i));
    if (rc == 0) {
      PyErr_Format(PyExc_TypeError, "input %zd: expected an array, got %.100s",
                   i, Py_TYPE(obj)->tp_name);
    }
    if (rc <= 0) return -1;
    inputs[i] = &slot->dl;
  }
  return 0;
}

/* The caller's output arrays (execute_into): a sequence of num_outputs
 * arrays, viewed into slots after the inputs'. */
static int gather_outputs(py_executable* self, PyObject* out,
                          const DLTensor** outputs, kcpy_slot* slots,
                          Py_ssize_t* num_slots) {
  PyObject* seq = PySequence_Fast(out, "out: expected a sequence of arrays");
  if (!seq) return -1;
  int rc = 0;
  if ((size_t)PySequence_Fast_GET_SIZE(seq) != self->num_outputs) {
    PyErr_Format(PyExc_TypeError, "out: expected %zu arrays, got %zd",
                 self->num_outputs, PySequence_Fast_GET_SIZE(seq));
    rc = -1;
  }
  for (size_t i = 0; rc == 0 && i < self->num_outputs; ++i) {
    PyObject* obj = PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i);
    if (kcpy_tensor_check(obj) && ((kcpy_tensor*)obj)->dl &&
        !((kcpy_tensor*)obj)->expired) {
      outputs[i] = ((kcpy_tensor*)obj)->dl;
      continue;
    }
    kcpy_slot* slot = &slots[(*num_slots)++];
    memset(slot, 0, sizeof *slot);
    int got = kcpy_array_view(obj, slot, kcpy_what_index("out", (Py_ssize_t)i));
    if (got == 0) {
      PyErr_Format(PyExc_TypeError, "out %zu: expected an array, got %.100s",
                   i, Py_TYPE(obj)->tp_name);
    }
    if (got <= 0) rc = -1;
    else outputs[i] = &slot->dl;
  }
  Py_DECREF(seq);
  return rc;
}

/* Runs the executable; `instruction_ns` may be NULL. On the executable's
 * device, on `stream` (NULL: kcall's own, waited for). With `out` (a
 * sequence, or NULL) the results go into the caller's arrays and the
 * result is `out`'s items; otherwise a list of new Tensors. */
static PyObject* execute(py_executable* self, PyObject* const* args,
                         Py_ssize_t n, uint64_t* instruction_ns,
                         PyObject* stream_obj, PyObject* out) {
  if ((size_t)n != self->num_inputs) {
    PyErr_Format(PyExc_TypeError,
                 "kcall.Executable: expected %zu inputs, got %zd",
                 self->num_inputs, n);
    return NULL;
  }
  void* stream = NULL;
  int has_stream = stream_obj && stream_obj != Py_None;
  if (has_stream && kcpy_stream_parse(stream_obj, &stream) < 0) return NULL;
  size_t count = (size_t)(n ? n : 1);
  size_t num_out = self->num_outputs ? self->num_outputs : 1;
  const DLTensor** inputs = PyMem_Malloc(sizeof *inputs * count);
  const DLTensor** outputs = PyMem_Malloc(sizeof *outputs * num_out);
  kcpy_slot* slots = PyMem_Malloc(sizeof *slots * (count + num_out));
  kc_tensor** outs = PyMem_Calloc(num_out, sizeof *outs);
  Py_ssize_t num_slots = 0;
  PyObject* result = NULL;
  kcpy_consumer_stream_set(has_stream, stream);
  int gathered = inputs && outputs && slots && outs &&
                 gather_inputs(args, n, inputs, slots, &num_slots) == 0 &&
                 (!out || gather_outputs(self, out, outputs, slots,
                                         &num_slots) == 0);
  kcpy_consumer_stream_set(0, NULL);
  if (!inputs || !outputs || !slots || !outs) {
    PyErr_NoMemory();
  } else if (gathered) {
    kc_execute_options options = {.struct_size = sizeof options,
                                  .instruction_ns = instruction_ns,
                                  .stream = stream};
    kc_status* st;
    Py_BEGIN_ALLOW_THREADS
    if (out) {
      st = kc_executable_execute_into(self->exe, inputs, (size_t)n, &options,
                                      outputs, self->num_outputs);
    } else {
      st = kc_executable_execute(self->exe, inputs, (size_t)n, &options, outs);
    }
    Py_END_ALLOW_THREADS
    if (st) {
      kcpy_raise(st);
    } else if (out) {
      PyObject* seq = PySequence_Fast(out, "out");
      result = seq ? PySequence_List(seq) : NULL;
      Py_XDECREF(seq);
    } else {
      result = PyList_New((Py_ssize_t)self->num_outputs);
      for (size_t i = 0; i < self->num_outputs; ++i) {
        PyObject* t = kcpy_tensor_wrap(outs[i]);
        if (!t || !result) {
          Py_XDECREF(t);
          Py_CLEAR(result);
        } else {
          PyList_SET_ITEM(result, (Py_ssize_t)i, t);
        }
      }
    }
  }
  for (Py_ssize_t i = 0; i < num_slots; ++i) kcpy_slot_clean(&slots[i]);
  PyMem_Free(inputs);
  PyMem_Free(outputs);
  PyMem_Free(slots);
  PyMem_Free(outs);
  return result;
}

static PyObject* executable_vectorcall(PyObject* self, PyObject* const* args,
                                       size_t nargsf, PyObject* kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* stream = NULL;
  PyObject* out = NULL;
  for (Py_ssize_t i = 0; kwnames && i < PyTuple_GET_SIZE(kwnames); ++i) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, i);
    if (PyUnicode_CompareWithASCIIString(key, "stream") == 0) {
      stream = args[nargs + i];
    } else if (PyUnicode_CompareWithASCIIString(key, "out") == 0) {
      out = args[nargs + i] == Py_None ? NULL : args[nargs + i];
    } else {
      PyErr_Format(PyExc_TypeError,
                   "kcall.Executable takes its inputs positionally, and the "
                   "keywords stream= and out=; got %R",
                   key);
      return NULL;
    }
  }
  py_executable* exe = (py_executable*)self;
  PyObject* list = execute(exe, args, nargs, NULL, stream, out);
  if (!list || exe->tuple_result) {
    PyObject* t = list ? PyList_AsTuple(list) : NULL;
    Py_XDECREF(list);
    return t;
  }
  PyObject* single = Py_NewRef(PyList_GET_ITEM(list, 0));
  Py_DECREF(list);
  return single;
}

static PyObject* executable_profile(py_executable* self, PyObject* args) {
  kc_executable_info info = {.struct_size = sizeof info};
  kc_executable_query(self->exe, &info);
  size_t n = info.num_live_instructions;
  uint64_t* ns = PyMem_Calloc(n ? n : 1, sizeof *ns);
  if (!ns) return PyErr_NoMemory();
  PyObject* outs = execute(self, &PyTuple_GET_ITEM(args, 0),
                           PyTuple_GET_SIZE(args), ns, NULL, NULL);
  PyObject* times = outs ? PyList_New((Py_ssize_t)n) : NULL;
  for (size_t i = 0; times && i < n; ++i) {
    PyObject* item = Py_BuildValue(
        "(sK)", kc_executable_get_instruction_name(self->exe, i),
        (unsigned long long)ns[i]);
    if (!item) Py_CLEAR(times);
    else PyList_SET_ITEM(times, (Py_ssize_t)i, item);
  }
  PyMem_Free(ns);
  Py_XDECREF(outs);
  return times;
}

static PyObject* executable_get_stats(py_executable* self, void* unused) {
  (void)unused;
  kc_executable_info info = {.struct_size = sizeof info};
  kc_executable_query(self->exe, &info);
  size_t need = kc_executable_format_plan(self->exe, NULL, 0);
  char* plan = PyMem_Malloc(need + 1);
  if (!plan) return PyErr_NoMemory();
  kc_executable_format_plan(self->exe, plan, need + 1);
  PyObject* d = Py_BuildValue(
      "{s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:s}", "num_instructions",
      (Py_ssize_t)info.num_instructions, "num_live_instructions",
      (Py_ssize_t)info.num_live_instructions, "num_inputs",
      (Py_ssize_t)info.num_inputs, "num_outputs",
      (Py_ssize_t)info.num_outputs, "num_buffers",
      (Py_ssize_t)info.num_buffers, "temp_bytes", (Py_ssize_t)info.temp_bytes,
      "temp_bytes_unshared", (Py_ssize_t)info.temp_bytes_unshared,
      "output_bytes", (Py_ssize_t)info.output_bytes, "peak_bytes",
      (Py_ssize_t)info.peak_bytes, "plan", plan);
  PyMem_Free(plan);
  return d;
}

static PyObject* shapes_list(py_executable* self, size_t n,
                             const kc_shape* (*get)(const kc_executable*,
                                                    size_t)) {
  PyObject* list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; ++i) {
    PyObject* s = shape_str(get(self->exe, i));
    if (!s) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, s);
  }
  return list;
}

static PyObject* executable_get_inputs(py_executable* self, void* unused) {
  (void)unused;
  return shapes_list(self, self->num_inputs, kc_executable_get_input_shape);
}

static PyObject* executable_get_outputs(py_executable* self, void* unused) {
  (void)unused;
  return shapes_list(self, self->num_outputs, kc_executable_get_output_shape);
}

static PyObject* program_compile(py_program* self, PyObject* args,
                                 PyObject* kwargs) {
  static char* names[] = {"platform", "device", "graphs", NULL};
  PyObject* platform_name = NULL;
  int device = 0, graphs = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|U$ip:compile", names,
                                   &platform_name, &device, &graphs)) {
    return NULL;
  }
  kc_compile_options options = {.struct_size = sizeof options,
                                .platform = KC_PLATFORM_HOST};
  if (platform_name) {
    kc_string_view v;
    if (kcpy_str_view(platform_name, &v, "platform") < 0) return NULL;
    kc_status* st = kc_platform_parse(v, &options.platform);
    if (st) return kcpy_raise(st);
  }
  DLDevice where = kc_device_cpu();
  if (options.platform == KC_PLATFORM_CUDA) {
    where.device_type = kDLCUDA;
    where.device_id = device;
    options.device_id = device;
    if (!graphs) options.flags |= KC_COMPILE_NO_CUDA_GRAPH;
  } else if (device != 0) {
    PyErr_Format(PyExc_ValueError,
                 "compile: device=%d names a CUDA ordinal; the host has "
                 "device 0 only",
                 device);
    return NULL;
  }
  kc_executable* exe = NULL;
  kc_status* st;
  kc_program* program = self->program;
  Py_BEGIN_ALLOW_THREADS
  st = kc_program_compile(program, &options, &exe);
  Py_END_ALLOW_THREADS
  if (st) return kcpy_raise(st);
  py_executable* out = PyObject_New(py_executable, &executable_type);
  if (!out) {
    kc_executable_destroy(exe);
    return NULL;
  }
  kc_executable_info info = {.struct_size = sizeof info};
  kc_executable_query(exe, &info);
  out->vectorcall = executable_vectorcall;
  out->exe = exe;
  out->num_inputs = info.num_inputs;
  out->num_outputs = info.num_outputs;
  out->tuple_result = kc_shape_is_tuple(kc_program_get_result_shape(program));
  out->device = where;
  return (PyObject*)out;
}

static PyObject* program_repr(py_program* self) {
  PyObject* result = program_get_result_shape(self, NULL);
  PyObject* out = result ? PyUnicode_FromFormat(
                               "<kcall.Program '%s': %zu instructions, "
                               "%zu parameters -> %U>",
                               kc_program_get_name(self->program),
                               kc_program_get_instruction_count(self->program),
                               kc_program_get_parameter_count(self->program),
                               result)
                         : NULL;
  Py_XDECREF(result);
  return out;
}

static PyMethodDef program_methods[] = {
    {"parse", (PyCFunction)(void (*)(void))program_parse,
     METH_VARARGS | METH_KEYWORDS | METH_STATIC,
     "parse(text, source=None)\n--\n\nParses HLO text (as XLA and JAX print "
     "it). `source` names it in error messages."},
    {"load", (PyCFunction)program_load, METH_O | METH_STATIC,
     "load(path)\n--\n\nReads and parses an HLO text file."},
    {"compile", (PyCFunction)(void (*)(void))program_compile,
     METH_VARARGS | METH_KEYWORDS,
     "compile(platform='host', *, device=0, graphs=True)\n--\n\nChecks and "
     "plans the program for 'host' or 'cuda' (on CUDA device `device`; "
     "graphs=False never captures CUDA graphs); returns "
     "a kcall.Executable."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef program_getset[] = {
    {"name", (getter)program_get_name, NULL, "The module's name.", NULL},
    {"parameters", (getter)program_get_parameters, NULL,
     "[(name, shape)] in parameter order.", NULL},
    {"result_shape", (getter)program_get_result_shape, NULL,
     "The result's shape, as HLO writes it.", NULL},
    {"instruction_count", (getter)program_get_count, NULL,
     "The number of instructions.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject program_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kcall.Program",
    .tp_basicsize = sizeof(py_program),
    .tp_dealloc = (destructor)program_dealloc,
    .tp_repr = (reprfunc)program_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An XLA-style program: Program.parse(hlo_text), "
              "Program.load(path), or\nProgramBuilder(name)...finish(). "
              ".compile() makes it runnable.",
    .tp_methods = program_methods,
    .tp_getset = program_getset,
};

static PyMethodDef executable_methods[] = {
    {"profile", (PyCFunction)executable_profile, METH_VARARGS,
     "profile(*inputs)\n--\n\nRuns once and returns [(instruction, ns)] in "
     "plan order."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef executable_getset[] = {
    {"stats", (getter)executable_get_stats, NULL,
     "The plan's figures (instructions, buffers, bytes) and the plan as text.",
     NULL},
    {"input_shapes", (getter)executable_get_inputs, NULL,
     "Shapes of the inputs (parameter leaves), in order.", NULL},
    {"output_shapes", (getter)executable_get_outputs, NULL,
     "Shapes of the outputs (result leaves), in order.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject executable_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kcall.Executable",
    .tp_basicsize = sizeof(py_executable),
    .tp_dealloc = (destructor)executable_dealloc,
    .tp_vectorcall_offset = offsetof(py_executable, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A compiled program. exe(*arrays) runs it (any number of "
              "threads at once)\nand returns a kcall.Tensor, or a tuple of "
              "them (the leaves, in order)\nwhen the result is a tuple. "
              "On CUDA, stream= (an int cudaStream_t, or a torch\nor CuPy "
              "stream) queues the run there and returns without waiting; "
              "out=\n(a sequence of arrays, one per output) writes the "
              "results into them.",
    .tp_methods = executable_methods,
    .tp_getset = executable_getset,
};

/* ---- ProgramBuilder --------------------------------------------------------------- */

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
  kc_shape* shape = shape_parse(shape_text, "parameter shape");
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
  kc_shape* shape = shape_parse(shape_text, "op shape");
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
  kc_shape* shape = shape_parse(shape_text, "broadcast shape");
  if (!shape) return NULL;
  int32_t id = -1;
  kc_status* st = kc_program_builder_add_broadcast(self->b, shape, operand,
                                                   dims, n, nv, &id);
  kc_shape_destroy(shape);
  return id_or_raise(st, id);
}

/* ---- typed attributes for custom calls ---------------------------------------------- */

/* Attribute storage for one custom call: every kc_attr, array payload and
 * string it needs, freed together. Strings point into the Python objects,
 * which the caller's dict keeps alive for the call. */
typedef struct attr_arena {
  void** blocks;
  size_t count, cap;
} attr_arena;

static void* arena_alloc(attr_arena* a, size_t size) {
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

static void arena_free(attr_arena* a) {
  for (size_t i = 0; i < a->count; ++i) PyMem_Free(a->blocks[i]);
  PyMem_Free(a->blocks);
}

static int attr_dict_from(PyObject* dict, kc_attr_dict* out, attr_arena* a,
                          int depth);

static int attr_array_from(PyObject* seq, kc_attr* attr, attr_arena* a) {
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
static int attr_from_buffer(PyObject* value, kc_attr* attr, attr_arena* a) {
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

static int attr_from(PyObject* value, kc_attr* attr, attr_arena* a,
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

static int attr_dict_from(PyObject* dict, kc_attr_dict* out, attr_arena* a,
                          int depth) {
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
  attr_arena arena = {0};
  kc_attr_dict dict = {0};
  kc_shape* shape = NULL;
  PyObject* out = NULL;
  if (name_arg(name, &nv) == 0 &&
      kcpy_str_view(target, &desc.target, "target") == 0 &&
      ids_from(ops, &ids, &n) == 0 &&
      (!attrs || attr_dict_from(attrs, &dict, &arena, 0) == 0) &&
      (shape = shape_parse(shape_text, "custom-call shape")) != NULL) {
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
  arena_free(&arena);
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
  return st ? kcpy_raise(st) : program_wrap(p);
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

int kcpy_program_init(PyObject* module) {
  if (PyType_Ready(&program_type) < 0 || PyType_Ready(&executable_type) < 0 ||
      PyType_Ready(&builder_type) < 0) {
    return -1;
  }
  if (PyModule_AddObjectRef(module, "Program", (PyObject*)&program_type) < 0 ||
      PyModule_AddObjectRef(module, "Executable",
                            (PyObject*)&executable_type) < 0 ||
      PyModule_AddObjectRef(module, "ProgramBuilder",
                            (PyObject*)&builder_type) < 0) {
    return -1;
  }
  return 0;
}
