/*
 * The floor of the Python call benchmark (run_bench.py), and the C functions
 * it calls through ctypes, in one shared object.
 *
 * As a CPython extension module (bench_native) it has the cheapest calls
 * an extension can offer: METH_FASTCALL functions that do nothing (nop),
 * that release and retake the GIL around an empty body (nop_release_gil,
 * what a binding that releases the GIL pays at least), and that call their
 * first argument with the rest (apply, apply_release_gil).
 *
 * As a plain library it exports, for ctypes, C functions of the same
 * shapes: nop0, nop1, nop3, nop_ptr3, and apply3, which calls a C callback
 * with three pointers.
 *
 * Built by run_bench.py with the system C compiler; nothing else needed.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#define KB_EXPORT __attribute__((visibility("default")))

/* ---- for ctypes ---------------------------------------------------------- */

typedef void (*kb_ptr3_fn)(void* a, void* b, void* c);

KB_EXPORT void nop0(void);
KB_EXPORT void nop1(int64_t a);
KB_EXPORT void nop3(int64_t a, int64_t b, int64_t c);
KB_EXPORT void nop_ptr3(void* a, void* b, void* c);
KB_EXPORT void apply3(kb_ptr3_fn fn, void* a, void* b, void* c);

void nop0(void) {}

void nop1(int64_t a) { (void)a; }

void nop3(int64_t a, int64_t b, int64_t c) {
  (void)a;
  (void)b;
  (void)c;
}

void nop_ptr3(void* a, void* b, void* c) {
  (void)a;
  (void)b;
  (void)c;
}

void apply3(kb_ptr3_fn fn, void* a, void* b, void* c) { fn(a, b, c); }

/* ---- the extension module ------------------------------------------------ */

static PyObject* kb_nop(PyObject* self, PyObject* const* args,
                        Py_ssize_t nargs) {
  (void)self;
  (void)args;
  (void)nargs;
  Py_RETURN_NONE;
}

static PyObject* kb_nop_release_gil(PyObject* self, PyObject* const* args,
                                    Py_ssize_t nargs) {
  (void)self;
  (void)args;
  (void)nargs;
  Py_BEGIN_ALLOW_THREADS
  /* the C body a binding would run without the GIL */
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

static int kb_check_apply(Py_ssize_t nargs) {
  if (nargs >= 1) return 0;
  PyErr_SetString(PyExc_TypeError, "apply(f, *args): f is missing");
  return -1;
}

static PyObject* kb_apply(PyObject* self, PyObject* const* args,
                          Py_ssize_t nargs) {
  (void)self;
  if (kb_check_apply(nargs)) return NULL;
  return PyObject_Vectorcall(args[0], args + 1, (size_t)(nargs - 1), NULL);
}

/* As a binding that releases the GIL around C code calling back into
 * Python: the callback retakes the GIL, calls, and lets it go again. */
static PyObject* kb_apply_release_gil(PyObject* self, PyObject* const* args,
                                      Py_ssize_t nargs) {
  (void)self;
  if (kb_check_apply(nargs)) return NULL;
  PyObject* result;
  Py_BEGIN_ALLOW_THREADS
  PyGILState_STATE gil = PyGILState_Ensure();
  result = PyObject_Vectorcall(args[0], args + 1, (size_t)(nargs - 1), NULL);
  PyGILState_Release(gil);
  Py_END_ALLOW_THREADS
  return result;
}

#define KB_FASTCALL(fn) (PyCFunction)(void (*)(void))(fn), METH_FASTCALL

static PyMethodDef kb_methods[] = {
    {"nop", KB_FASTCALL(kb_nop), "nop(*args): does nothing"},
    {"nop_release_gil", KB_FASTCALL(kb_nop_release_gil),
     "nop_release_gil(*args): releases and retakes the GIL"},
    {"apply", KB_FASTCALL(kb_apply), "apply(f, *args): f(*args)"},
    {"apply_release_gil", KB_FASTCALL(kb_apply_release_gil),
     "apply_release_gil(f, *args): f(*args), called with the GIL retaken "
     "inside a region that released it"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef kb_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "bench_native",
    .m_doc = "The floor of kcall's Python call benchmark.",
    .m_size = 0,
    .m_methods = kb_methods,
};

PyMODINIT_FUNC PyInit_bench_native(void);

PyMODINIT_FUNC PyInit_bench_native(void) { return PyModule_Create(&kb_module); }
