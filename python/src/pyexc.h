/*
 * A Python exception as the text kcall puts in a status, shared by the
 * extension (errors.c) and the kcall_python plugin, which links no part of
 * the extension: CPython's API only, no kcall header.
 *
 *   "module.Type: message\nPython traceback (most recent call last):\n..."
 *
 * Builtin exceptions are named without "builtins."; the traceback is
 * traceback.format_list's, less the frames of frozen modules (importlib's
 * and runpy's, which say nothing about the code that failed), with no
 * newline at the end.
 */
#ifndef KCALL_PYTHON_PYEXC_H_
#define KCALL_PYTHON_PYEXC_H_

#include <Python.h>
#include <string.h>

/* The traceback's frames as one string; NULL, with no error set, when
 * none is left or anything fails. */
static inline PyObject* kcpy_format_traceback(PyObject* tb) {
  PyObject* traceback = PyImport_ImportModule("traceback");
  PyObject* frames =
      traceback ? PyObject_CallMethod(traceback, "extract_tb", "O", tb) : NULL;
  PyObject* kept = frames ? PyList_New(0) : NULL;
  Py_ssize_t n = kept ? PyList_Size(frames) : 0;
  for (Py_ssize_t i = 0; kept && i < n; ++i) {
    PyObject* frame = PyList_GetItem(frames, i); /* borrowed */
    PyObject* file = frame ? PyObject_GetAttrString(frame, "filename") : NULL;
    const char* name = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : "";
    if (!name || (strncmp(name, "<frozen ", 8) != 0 &&
                  PyList_Append(kept, frame) < 0)) {
      Py_CLEAR(kept);
    }
    Py_XDECREF(file);
  }
  PyObject* lines = kept && PyList_Size(kept) > 0
                        ? PyObject_CallMethod(traceback, "format_list", "O", kept)
                        : NULL;
  PyObject* empty = lines ? PyUnicode_FromString("") : NULL;
  PyObject* joined = empty ? PyUnicode_Join(empty, lines) : NULL;
  PyObject* text =
      joined ? PyObject_CallMethod(joined, "rstrip", "s", "\n") : NULL;
  Py_XDECREF(joined);
  Py_XDECREF(empty);
  Py_XDECREF(lines);
  Py_XDECREF(kept);
  Py_XDECREF(frames);
  Py_XDECREF(traceback);
  PyErr_Clear();
  return text;
}

/* The text for exception `exc` (a new reference; NULL only when even the
 * first line cannot be made). Leaves no error set on success. */
static inline PyObject* kcpy_describe_exception(PyObject* exc) {
  PyObject* type = (PyObject*)Py_TYPE(exc);
  PyObject* module = PyObject_GetAttrString(type, "__module__");
  PyObject* qualname = PyObject_GetAttrString(type, "__qualname__");
  PyObject* str = PyObject_Str(exc);
  PyObject* head = NULL;
  if (module && qualname && str) {
    int builtin = PyUnicode_Check(module) &&
                  PyUnicode_CompareWithASCIIString(module, "builtins") == 0;
    head = builtin ? PyUnicode_FromFormat("%U: %U", qualname, str)
                   : PyUnicode_FromFormat("%S.%U: %U", module, qualname, str);
  }
  Py_XDECREF(module);
  Py_XDECREF(qualname);
  Py_XDECREF(str);
  if (!head) return NULL;
  PyObject* tb = PyException_GetTraceback(exc);
  PyObject* body = tb ? kcpy_format_traceback(tb) : NULL;
  PyObject* text =
      body ? PyUnicode_FromFormat(
                 "%U\nPython traceback (most recent call last):\n%U", head, body)
           : NULL;
  Py_XDECREF(body);
  Py_XDECREF(tb);
  if (!text) {
    PyErr_Clear();
    return head;
  }
  Py_DECREF(head);
  return text;
}

#endif /* KCALL_PYTHON_PYEXC_H_ */
