/*
 * kcall.Executable: a compiled program (Program.compile in program.c),
 * called with arrays on its device, on the caller's stream when one is
 * given and into the caller's arrays with out=; also profiled and
 * described. Execution releases the GIL.
 */
#include "kcpy.h"

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
    inputs[i] = kcpy_array_arg(args[i], kcpy_what_index("input", i), slots,
                               num_slots);
    if (!inputs[i]) return -1;
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
    kcpy_what what = kcpy_what_index("out", (Py_ssize_t)i);
    Py_ssize_t before = *num_slots;
    outputs[i] = kcpy_array_arg(obj, what, slots, num_slots);
    if (!outputs[i]) {
      rc = -1;
      break;
    }
    /* Every result is written: never into read-only or overlapping
     * memory. */
    int nowrite = *num_slots > before ? slots[before].nowrite
                                      : ((kcpy_tensor*)obj)->nowrite;
    if (nowrite) {
      rc = kcpy_nowrite_error(nowrite, what, "the executable",
                              "pass writable arrays that do not overlap "
                              "themselves");
    }
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
  /* The arrays as DLTensors (DLPack ones made ready on the stream). */
  kcpy_consumer_stream_set(has_stream, stream);
  int gathered = inputs && outputs && slots && outs &&
                 gather_inputs(args, n, inputs, slots, &num_slots) == 0 &&
                 (!out || gather_outputs(self, out, outputs, slots,
                                         &num_slots) == 0);
  kcpy_consumer_stream_set(0, NULL);
  if (!inputs || !outputs || !slots || !outs) {
    PyErr_NoMemory();
  } else if (gathered) {
    /* The run, without the GIL; then the results. */
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

static size_t format_plan(const void* exe, char* buf, size_t cap) {
  return kc_executable_format_plan(exe, buf, cap);
}

static PyObject* executable_get_stats(py_executable* self, void* unused) {
  (void)unused;
  kc_executable_info info = {.struct_size = sizeof info};
  kc_executable_query(self->exe, &info);
  PyObject* plan = kcpy_format_str(format_plan, self->exe);
  if (!plan) return NULL;
  return Py_BuildValue(
      "{s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:N}", "num_instructions",
      (Py_ssize_t)info.num_instructions, "num_live_instructions",
      (Py_ssize_t)info.num_live_instructions, "num_inputs",
      (Py_ssize_t)info.num_inputs, "num_outputs",
      (Py_ssize_t)info.num_outputs, "num_buffers",
      (Py_ssize_t)info.num_buffers, "temp_bytes", (Py_ssize_t)info.temp_bytes,
      "temp_bytes_unshared", (Py_ssize_t)info.temp_bytes_unshared,
      "output_bytes", (Py_ssize_t)info.output_bytes, "peak_bytes",
      (Py_ssize_t)info.peak_bytes, "plan", plan);
}

static PyObject* shapes_list(py_executable* self, size_t n,
                             const kc_shape* (*get)(const kc_executable*,
                                                    size_t)) {
  PyObject* list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; ++i) {
    PyObject* s = kcpy_shape_str(get(self->exe, i));
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

PyObject* kcpy_executable_wrap(kc_executable* exe, int tuple_result,
                               DLDevice device) {
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
  out->tuple_result = tuple_result;
  out->device = device;
  return (PyObject*)out;
}

int kcpy_executable_init_type(PyObject* module) {
  if (PyType_Ready(&executable_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Executable",
                               (PyObject*)&executable_type);
}
