/*
 * kcall.Program from Python: parsed from HLO text or built (builder.c),
 * inspected, and compiled into a kcall.Executable (executable.c) with the
 * GIL released. Also the shape helpers the program files share.
 */
#include "kcpy.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* ---- shapes ------------------------------------------------------------------ */

static size_t format_shape(const void* shape, char* buf, size_t cap) {
  return kc_shape_format(shape, buf, cap);
}

PyObject* kcpy_shape_str(const kc_shape* shape) {
  return kcpy_format_str(format_shape, shape);
}

kc_shape* kcpy_shape_parse(PyObject* text, const char* what) {
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

PyObject* kcpy_program_wrap(kc_program* p) {
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

/* The parameter shapes a caller gives parse and load: None, a sequence
 * (one per parameter, None to leave one as its type says) or a dict by
 * parameter name (or number), of shapes as HLO writes them ("f32[5,8]").
 * Owns the shapes; the names are borrowed from `given`. */
typedef struct given_shapes {
  kc_shape** shapes;
  const char** names; /* NULL for a sequence */
  size_t count;
  /* dims={"b": 32}: a serialized export's dimension variables (names
   * borrowed from the dict's keys). */
  const char** dim_names;
  int64_t* dim_values;
  kc_parse_options options;
} given_shapes;

static void given_shapes_free(given_shapes* g) {
  for (size_t i = 0; i < g->count; ++i) kc_shape_destroy(g->shapes[i]);
  PyMem_Free(g->shapes);
  PyMem_Free(g->names);
  PyMem_Free(g->dim_names);
  PyMem_Free(g->dim_values);
}

/* Adds dims (None, or a dict of str to int) to g's options. 0, or -1
 * with an exception set (g left to given_shapes_free). */
static int given_dims_read(PyObject* dims, given_shapes* g) {
  if (!dims || dims == Py_None) return 0;
  if (!PyDict_Check(dims)) {
    PyErr_Format(PyExc_TypeError, "dims: expected a dict of dimension variables to sizes "
                 "({'b': 32}), got %s", Py_TYPE(dims)->tp_name);
    return -1;
  }
  Py_ssize_t n = PyDict_Size(dims), pos = 0, i = 0;
  g->dim_names = PyMem_Calloc((size_t)n + 1, sizeof *g->dim_names);
  g->dim_values = PyMem_Calloc((size_t)n + 1, sizeof *g->dim_values);
  if (!g->dim_names || !g->dim_values) {
    PyErr_NoMemory();
    return -1;
  }
  PyObject *key, *value;
  while (PyDict_Next(dims, &pos, &key, &value)) {
    const char* name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!name) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "dims: expected str keys");
      return -1;
    }
    long long v = PyLong_Check(value) ? PyLong_AsLongLong(value) : -1;
    if (v < 0) {
      if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "dims[%R]: expected a size (an int >= 0), got %R", key,
                     value);
      }
      return -1;
    }
    g->dim_names[i] = name;
    g->dim_values[i++] = v;
  }
  g->options.dim_names = g->dim_names;
  g->options.dim_values = g->dim_values;
  g->options.num_dims = (size_t)i;
  return 0;
}

/* 0, or -1 with an exception set. */
static int given_shapes_read(PyObject* given, given_shapes* g) {
  memset(g, 0, sizeof *g);
  g->options.struct_size = sizeof g->options;
  if (!given || given == Py_None) return 0;
  bool by_name = PyDict_Check(given);
  PyObject* items = by_name ? PyDict_Items(given) : PySequence_Fast(given, "");
  if (!items) {
    PyErr_Format(PyExc_TypeError, "shapes: expected a list of shapes or a dict of them by "
                 "parameter name, got %s", Py_TYPE(given)->tp_name);
    return -1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
  g->shapes = PyMem_Calloc((size_t)n + 1, sizeof *g->shapes);
  g->names = by_name ? PyMem_Calloc((size_t)n + 1, sizeof *g->names) : NULL;
  int rc = g->shapes && (!by_name || g->names) ? 0 : -1;
  if (rc) PyErr_NoMemory();
  for (Py_ssize_t i = 0; !rc && i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(items, i);
    PyObject* shape = item;
    if (by_name) {
      PyObject* key = PyTuple_GET_ITEM(item, 0);
      shape = PyTuple_GET_ITEM(item, 1);
      g->names[i] = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
      if (!g->names[i]) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "shapes: expected str keys");
        rc = -1;
        break;
      }
    }
    g->count = (size_t)i + 1;
    if (shape == Py_None) continue;
    kc_string_view text;
    if (kcpy_str_view(shape, &text, "a shape") < 0) {
      rc = -1;
      break;
    }
    kc_status* st = kc_shape_parse(text, &g->shapes[i]);
    if (st) {
      kcpy_raise(kc_status_add_context(st, "shapes[%zd]", i));
      rc = -1;
    }
  }
  if (!rc && n && by_name) {
    /* A dict with a None leaves that name out. */
    size_t k = 0;
    for (size_t i = 0; i < g->count; ++i) {
      if (!g->shapes[i]) continue;
      g->shapes[k] = g->shapes[i];
      g->names[k++] = g->names[i];
    }
    g->count = k;
  }
  g->options.parameter_shapes = (const kc_shape* const*)g->shapes;
  g->options.num_parameter_shapes = g->count;
  g->options.parameter_names = (const char* const*)g->names;
  Py_DECREF(items);
  if (rc) given_shapes_free(g);
  return rc;
}

static PyObject* program_parse(PyObject* cls, PyObject* args,
                               PyObject* kwargs) {
  (void)cls;
  static char* names[] = {"text", "source", "shapes", "dims", NULL};
  PyObject* text;
  const char* source = NULL;
  PyObject* shapes = NULL;
  PyObject* dims = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|z$OO:parse", names, &text,
                                   &source, &shapes, &dims)) {
    return NULL;
  }
  /* Text (str), or the bytes of a portable artifact or a serialized
   * jax.export (any object with the buffer protocol). */
  kc_string_view v;
  Py_buffer view = {0};
  bool buffer = !PyUnicode_Check(text) && PyObject_CheckBuffer(text);
  if (buffer) {
    if (PyObject_GetBuffer(text, &view, PyBUF_SIMPLE) < 0) return NULL;
    v = (kc_string_view){(const char*)view.buf, (size_t)view.len};
  } else if (!PyUnicode_Check(text)) {
    return PyErr_Format(PyExc_TypeError, "parse: text: expected str or bytes, got %s",
                        Py_TYPE(text)->tp_name);
  } else if (kcpy_str_view(text, &v, "text") < 0) {
    return NULL;
  }
  given_shapes g;
  if (given_shapes_read(shapes, &g) < 0) {
    if (buffer) PyBuffer_Release(&view);
    return NULL;
  }
  if (given_dims_read(dims, &g) < 0) {
    given_shapes_free(&g);
    if (buffer) PyBuffer_Release(&view);
    return NULL;
  }
  kc_program* p = NULL;
  kc_status* st = kc_program_parse_with(v, &g.options, &p);
  given_shapes_free(&g);
  if (buffer) PyBuffer_Release(&view);
  if (st) {
    if (source) st = kc_status_add_context(st, "in %s", KCPY_QS(source));
    return kcpy_raise(st);
  }
  return kcpy_program_wrap(p);
}

/* Why `path` cannot be read, as the status kcall.load_plugin and `kcall
 * run` answer for the same problem: NOT_FOUND for a missing file,
 * PERMISSION_DENIED, INVALID_ARGUMENT for a directory or another error. */
static kc_status* unreadable(const char* path, int err) {
  if (err == ENOENT || err == ENOTDIR) {
    return kc_status_create(KC_NOT_FOUND, "loading program %s: no such file",
                            KCPY_QS(path));
  }
  if (err == EISDIR) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "loading program %s: it is a directory, expected "
                            "an HLO or StableHLO text file", KCPY_QS(path));
  }
  return kc_status_create(err == EACCES ? KC_PERMISSION_DENIED
                                        : KC_INVALID_ARGUMENT,
                          "loading program %s: cannot read it: %s",
                          KCPY_QS(path), strerror(err));
}

/* The whole file as bytes, or NULL with a status in *out_status (or a
 * Python exception set, when out of memory). */
static PyObject* read_file(const char* path, kc_status** out_status) {
  *out_status = NULL;
  FILE* f = fopen(path, "rb");
  if (!f) {
    *out_status = unreadable(path, errno);
    return NULL;
  }
  /* fopen opens a directory; its first read would fail with EISDIR. */
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fclose(f);
    *out_status = unreadable(path, EISDIR);
    return NULL;
  }
  PyObject* chunks = PyBytes_FromStringAndSize(NULL, 0);
  char buf[65536];
  size_t got;
  while (chunks && (got = fread(buf, 1, sizeof buf, f)) > 0) {
    PyObject* more = PyBytes_FromStringAndSize(buf, (Py_ssize_t)got);
    if (!more) Py_CLEAR(chunks);
    else PyBytes_ConcatAndDel(&chunks, more);
  }
  if (chunks && ferror(f)) {
    *out_status = unreadable(path, errno);
    Py_CLEAR(chunks);
  }
  fclose(f);
  return chunks;
}

static PyObject* program_load(PyObject* cls, PyObject* args, PyObject* kwargs) {
  (void)cls;
  static char* names[] = {"path", "shapes", "dims", NULL};
  PyObject* arg = NULL;
  PyObject* shapes = NULL;
  PyObject* dims = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OO:load", names, &arg, &shapes, &dims)) {
    return NULL;
  }
  given_shapes g;
  if (given_shapes_read(shapes, &g) < 0) return NULL;
  if (given_dims_read(dims, &g) < 0) {
    given_shapes_free(&g);
    return NULL;
  }
  PyObject* path = NULL;
  if (!PyUnicode_FSConverter(arg, &path)) {
    given_shapes_free(&g);
    return NULL;
  }
  const char* p = PyBytes_AS_STRING(path);
  kc_status* st = NULL;
  PyObject* chunks = read_file(p, &st);
  PyObject* out = NULL;
  if (st) {
    out = kcpy_raise(st);
  } else if (chunks) {
    kc_string_view text = {PyBytes_AS_STRING(chunks),
                           (size_t)PyBytes_GET_SIZE(chunks)};
    kc_program* program = NULL;
    st = kc_program_parse_with(text, &g.options, &program);
    out = st ? kcpy_raise(kc_status_add_context(st, "in %s", KCPY_QS(p)))
             : kcpy_program_wrap(program);
  }
  given_shapes_free(&g);
  Py_XDECREF(chunks);
  Py_DECREF(path);
  return out;
}

/* A program from the StableHLO text kcall._programs.HELPER(*args,
 * **kwargs) makes with JAX; `what` names it in errors. */
static PyObject* program_from_helper(const char* helper, const char* what,
                                     PyObject* args, PyObject* kwargs) {
  PyObject* mod = PyImport_ImportModule("kcall._programs");
  PyObject* fn = mod ? PyObject_GetAttrString(mod, helper) : NULL;
  Py_XDECREF(mod);
  PyObject* text = fn ? PyObject_Call(fn, args, kwargs) : NULL;
  Py_XDECREF(fn);
  if (!text) return NULL;
  /* A shape-polymorphic module comes back as a kcall.ShapePolymorphicProgram;
   * an export as the bytes of its serialized form. */
  if (!PyUnicode_Check(text) && !PyBytes_Check(text)) return text;
  kc_string_view v;
  PyObject* out = NULL;
  int got = 0;
  if (PyBytes_Check(text)) {
    v = (kc_string_view){PyBytes_AS_STRING(text), (size_t)PyBytes_GET_SIZE(text)};
  } else {
    got = kcpy_str_view(text, &v, "text");
  }
  if (got == 0) {
    kc_program* p = NULL;
    kc_status* st = kc_program_parse(v, &p);
    out = st ? kcpy_raise(kc_status_add_context(st, "in %s", what))
             : kcpy_program_wrap(p);
  }
  Py_DECREF(text);
  return out;
}

static PyObject* program_from_jax(PyObject* cls, PyObject* args,
                                  PyObject* kwargs) {
  (void)cls;
  return program_from_helper("jax_text", "the StableHLO JAX lowered", args,
                             kwargs);
}

static PyObject* program_from_exported(PyObject* cls, PyObject* args,
                                       PyObject* kwargs) {
  (void)cls;
  return program_from_helper("exported_text", "the serialized export", args, kwargs);
}

static PyObject* program_get_name(py_program* self, void* unused) {
  (void)unused;
  return PyUnicode_FromString(kc_program_get_name(self->program));
}

static PyObject* program_get_format(py_program* self, void* unused) {
  (void)unused;
  return PyUnicode_FromString(kc_program_get_format(self->program));
}

static PyObject* program_get_parameters(py_program* self, void* unused) {
  (void)unused;
  size_t n = kc_program_get_parameter_count(self->program);
  PyObject* list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; ++i) {
    PyObject* item = Py_BuildValue(
        "(sN)", kc_program_get_parameter_name(self->program, i),
        kcpy_shape_str(kc_program_get_parameter_shape(self->program, i)));
    if (!item) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject* program_get_result_shape(py_program* self, void* unused) {
  (void)unused;
  return kcpy_shape_str(kc_program_get_result_shape(self->program));
}

static PyObject* program_get_output_names(py_program* self, void* unused) {
  (void)unused;
  const kc_shape* r = kc_program_get_result_shape(self->program);
  size_t n = kc_shape_is_tuple(r) ? kc_shape_get_tuple_size(r) : 1;
  PyObject* list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; ++i) {
    const char* name = kc_program_get_output_name(self->program, i);
    PyObject* item = name ? PyUnicode_FromString(name) : Py_NewRef(Py_None);
    if (!item) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject* program_get_count(py_program* self, void* unused) {
  (void)unused;
  return PyLong_FromSize_t(kc_program_get_instruction_count(self->program));
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
  if (platform_name &&
      kcpy_platform_from_py(platform_name, &options.platform) < 0) {
    return NULL;
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
  return kcpy_executable_wrap(
      exe, kc_shape_is_tuple(kc_program_get_result_shape(program)), where);
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
    {"from_text", (PyCFunction)(void (*)(void))program_parse,
     METH_VARARGS | METH_KEYWORDS | METH_STATIC,
     "from_text(text, source=None, *, shapes=None, dims=None)\n--\n\nparse under "
     "the name the other constructors (from_jax,\nfrom_exported) go by: HLO or "
     "StableHLO text, or the bytes of an\nartifact or a serialized jax.export."},
    {"parse", (PyCFunction)(void (*)(void))program_parse,
     METH_VARARGS | METH_KEYWORDS | METH_STATIC,
     "parse(text, source=None, *, shapes=None, dims=None)\n--\n\nParses HLO or StableHLO "
     "text (as XLA and JAX print them; the text\nsays which), or the bytes of a "
     "StableHLO portable artifact or a\nserialized jax.export. `source` names it "
     "in error messages. `shapes` gives the\nparameters' shapes, which a "
     "shape-polymorphic module (jax.export with\nsymbolic shapes) is compiled "
     "for: a list, one per parameter (None: as\nwritten), or a dict by "
     "parameter name, of shapes as HLO writes them\n(\"f32[5,8]\"). `dims` "
     "gives a serialized export's dimension\nvariables instead ({\"b\": 32}): "
     "the shapes follow from its input avals."},
    {"from_jax", (PyCFunction)(void (*)(void))program_from_jax,
     METH_VARARGS | METH_KEYWORDS | METH_STATIC,
     "from_jax(fn, *example_args, **example_kwargs)\n--\n\nThe program JAX "
     "makes of fn for arguments like these: jax.jit(fn) (or fn, when it\n"
     "is jitted already) lowered to StableHLO and parsed. With a symbolic\n"
     "dimension among the arguments (jax.ShapeDtypeStruct of\n"
     "jax.export.symbolic_shape), fn is exported and a\n"
     "kcall.ShapePolymorphicProgram returned. Needs jax."},
    {"from_exported", (PyCFunction)(void (*)(void))program_from_exported,
     METH_VARARGS | METH_KEYWORDS | METH_STATIC,
     "from_exported(exported)\n--\n\nThe program of a jax.export.Exported "
     "(its mlir_module()), exported for\nthe CPU alone, with no ordered "
     "effects; a kcall.ShapePolymorphicProgram\nwhen its shapes are "
     "symbolic."},
    {"load", (PyCFunction)(void (*)(void))program_load,
     METH_VARARGS | METH_KEYWORDS | METH_STATIC,
     "load(path, *, shapes=None, dims=None)\n--\n\nReads and parses an HLO or "
     "StableHLO text file, a portable\nartifact or a serialized jax.export (shapes "
     "and dims: as parse's). "
     "Errors name the "
     "path, as kcall.load_plugin's do: NotFoundError for a missing file,\n"
     "PermissionDeniedError for one that may not be read, "
     "InvalidArgumentError\nfor a directory or text that does not parse."},
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
    {"format", (getter)program_get_format, NULL,
     "What the program was read from: \"HLO text\", \"StableHLO text\",\n"
     "\"StableHLO portable artifact (StableHLO_v1.x.y)\", \"serialized\n"
     "jax.export (calling convention N, StableHLO_v1.x.y)\", or \"built\".", NULL},
    {"parameters", (getter)program_get_parameters, NULL,
     "[(name, shape)] in parameter order.", NULL},
    {"result_shape", (getter)program_get_result_shape, NULL,
     "The result's shape, as HLO writes it.", NULL},
    {"output_names", (getter)program_get_output_names, NULL,
     "The names the producer gave the outputs (JAX's jax.result_info, "
     "'result[0]'), one per output, None where it gave none.", NULL},
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

int kcpy_program_init_type(PyObject* module) {
  if (PyType_Ready(&program_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Program", (PyObject*)&program_type);
}
