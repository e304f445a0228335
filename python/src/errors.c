/* kcall statuses <-> Python exceptions. */
#include "kcpy.h"
#include "pyexc.h"

#include <string.h>

/* ---- the classes ------------------------------------------------------------ */

static PyObject* error_base;
static PyObject* error_classes[KC_UNAUTHENTICATED + 1];

/* Each code's class: its name and the built-in exceptions it also derives
 * from, so that `except ValueError` catches a bad argument from C code. */
typedef struct error_spec {
  kc_status_code code;
  const char* name;
  PyObject** bases[2];
} error_spec;

static const error_spec error_specs[] = {
    {KC_CANCELLED, "CancelledError", {NULL, NULL}},
    {KC_UNKNOWN, "UnknownError", {&PyExc_RuntimeError, NULL}},
    {KC_INVALID_ARGUMENT, "InvalidArgumentError",
     {&PyExc_ValueError, &PyExc_TypeError}},
    {KC_DEADLINE_EXCEEDED, "DeadlineExceededError", {&PyExc_TimeoutError, NULL}},
    {KC_NOT_FOUND, "NotFoundError", {&PyExc_LookupError, NULL}},
    {KC_ALREADY_EXISTS, "AlreadyExistsError", {&PyExc_ValueError, NULL}},
    {KC_PERMISSION_DENIED, "PermissionDeniedError",
     {&PyExc_PermissionError, NULL}},
    {KC_RESOURCE_EXHAUSTED, "ResourceExhaustedError",
     {&PyExc_MemoryError, NULL}},
    {KC_FAILED_PRECONDITION, "FailedPreconditionError",
     {&PyExc_RuntimeError, NULL}},
    {KC_ABORTED, "AbortedError", {&PyExc_RuntimeError, NULL}},
    {KC_OUT_OF_RANGE, "OutOfRangeError", {&PyExc_IndexError, NULL}},
    {KC_UNIMPLEMENTED, "UnimplementedError", {&PyExc_NotImplementedError, NULL}},
    {KC_INTERNAL, "InternalError", {&PyExc_RuntimeError, NULL}},
    {KC_UNAVAILABLE, "UnavailableError", {&PyExc_RuntimeError, NULL}},
    {KC_DATA_LOSS, "DataLossError", {&PyExc_RuntimeError, NULL}},
    {KC_UNAUTHENTICATED, "UnauthenticatedError", {&PyExc_RuntimeError, NULL}},
};

static const char error_doc[] =
    "Base of every error kcall raises.\n\n"
    "Attributes: code (the status code's name, e.g. 'INVALID_ARGUMENT'),\n"
    "message (the innermost message) and context (the context strings added\n"
    "while the error travelled outwards, outermost first). str() gives the\n"
    "whole chain.";

int kcpy_errors_init(PyObject* module) {
  error_base = PyErr_NewExceptionWithDoc("kcall.Error", error_doc,
                                         PyExc_Exception, NULL);
  if (!error_base || PyModule_AddObjectRef(module, "Error", error_base) < 0) {
    return -1;
  }
  size_t n = sizeof error_specs / sizeof error_specs[0];
  for (size_t i = 0; i < n; ++i) {
    const error_spec* s = &error_specs[i];
    PyObject* bases = PyTuple_New(1 + (s->bases[0] != NULL) +
                                  (s->bases[1] != NULL));
    if (!bases) return -1;
    Py_ssize_t k = 0;
    PyTuple_SET_ITEM(bases, k++, Py_NewRef(error_base));
    for (int j = 0; j < 2; ++j) {
      if (s->bases[j]) PyTuple_SET_ITEM(bases, k++, Py_NewRef(*s->bases[j]));
    }
    char qualname[64];
    snprintf(qualname, sizeof qualname, "kcall.%s", s->name);
    PyObject* cls = PyErr_NewException(qualname, bases, NULL);
    Py_DECREF(bases);
    if (!cls) return -1;
    PyObject* code = PyUnicode_FromString(kc_status_code_name(s->code));
    int bad = !code || PyObject_SetAttrString(cls, "code", code) < 0;
    Py_XDECREF(code);
    if (bad || PyModule_AddObjectRef(module, s->name, cls) < 0) {
      Py_DECREF(cls);
      return -1;
    }
    error_classes[s->code] = cls; /* the module holds it too */
    Py_DECREF(cls);
  }
  return 0;
}

PyObject* kcpy_error_class(kc_status_code code) {
  if (code > KC_OK && code <= KC_UNAUTHENTICATED && error_classes[code]) {
    return error_classes[code];
  }
  return error_classes[KC_UNKNOWN];
}

/* ---- exceptions that passed through C --------------------------------------- */
/*
 * A Python callback's exception becomes a status on its way through C; if
 * that status comes back to Python, the caller should see the original
 * exception, traceback and all. The exceptions are remembered here, with
 * the status they became, in a ring (guarded by the GIL). C code may
 * destroy a status without telling anyone, so the ring cannot know which
 * entries are dead: it keeps the last STASH_SIZE, and a status that comes
 * back after more than that many newer failures becomes a kcall.Error
 * whose message still names the exception and holds its traceback. A
 * status matches only if its address, its message's address and its
 * message text are the ones recorded, so a recycled address cannot
 * match.
 */
#define STASH_SIZE 64

typedef struct stash_entry {
  const kc_status* status;
  const char* message;
  char* text;
  PyObject* exception;
} stash_entry;

static stash_entry stash[STASH_SIZE];
static unsigned stash_next;

static void stash_clear(stash_entry* e) {
  PyMem_Free(e->text);
  Py_CLEAR(e->exception);
  e->status = NULL;
  e->message = NULL;
  e->text = NULL;
}

static void stash_put(const kc_status* status, PyObject* exception) {
  if (!kc_status_get_code(status)) return;
  const char* message = kc_status_get_message(status);
  size_t n = strlen(message) + 1;
  char* text = PyMem_Malloc(n);
  if (!text) return; /* the exception is simply not re-raised */
  memcpy(text, message, n);
  stash_entry* e = &stash[stash_next++ % STASH_SIZE];
  stash_clear(e);
  e->status = status;
  e->message = message;
  e->text = text;
  e->exception = Py_NewRef(exception);
}

/* The remembered exception for `status` (a new reference, removed from the
 * ring), or NULL. */
static PyObject* stash_take(const kc_status* status) {
  const char* message = kc_status_get_message(status);
  for (int i = 0; i < STASH_SIZE; ++i) {
    stash_entry* e = &stash[i];
    if (e->status == status && e->message == message &&
        strcmp(e->text, message) == 0) {
      PyObject* exc = e->exception;
      e->exception = NULL;
      stash_clear(e);
      return exc;
    }
  }
  return NULL;
}

/* ---- status -> exception ------------------------------------------------------ */

PyObject* kcpy_status_text(const kc_status* status) {
  /* kc_status_format prints "CODE: ..."; the class names the code. */
  char small[512];
  size_t need = kc_status_format(status, small, sizeof small);
  char* buf = small;
  if (need >= sizeof small) {
    buf = PyMem_Malloc(need + 1);
    if (!buf) return PyErr_NoMemory();
    kc_status_format(status, buf, need + 1);
  }
  const char* text = buf;
  const char* code = kc_status_code_name(kc_status_get_code(status));
  size_t code_len = strlen(code);
  if (strncmp(text, code, code_len) == 0 && text[code_len] == ':') {
    text += code_len + 1;
    while (*text == ' ') ++text;
  }
  PyObject* out = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text),
                                       "backslashreplace");
  if (buf != small) PyMem_Free(buf);
  return out;
}

static PyObject* status_context(const kc_status* status) {
  size_t n = kc_status_get_context_count(status);
  PyObject* ctx = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; ctx && i < n; ++i) {
    const char* c = kc_status_get_context(status, i);
    PyObject* s = PyUnicode_DecodeUTF8(c, (Py_ssize_t)strlen(c),
                                       "backslashreplace");
    if (!s) Py_CLEAR(ctx);
    else PyTuple_SET_ITEM(ctx, (Py_ssize_t)i, s);
  }
  return ctx;
}

/* Re-raises a callback's exception, noting where it went through kcall. */
static PyObject* reraise(PyObject* exc, const kc_status* status) {
  size_t n = kc_status_get_context_count(status);
  if (n > 0) {
    PyObject* note = PyUnicode_FromString("raised through kcall");
    for (size_t i = n; note && i-- > 0;) {
      PyObject* more = PyUnicode_FromFormat(
          "%U\n  %s", note, kc_status_get_context(status, i));
      Py_SETREF(note, more);
    }
    PyObject* r = note ? PyObject_CallMethod(exc, "add_note", "O", note)
                       : NULL;
    Py_XDECREF(note);
    if (!r) PyErr_Clear(); /* the note is a courtesy */
    Py_XDECREF(r);
  }
  PyObject* tb = PyException_GetTraceback(exc);
  PyErr_Restore(Py_NewRef((PyObject*)Py_TYPE(exc)), exc, tb);
  return NULL;
}

PyObject* kcpy_raise(kc_status* status) {
  if (!status) {
    PyErr_SetString(PyExc_SystemError, "kcall: raise without a status");
    return NULL;
  }
  PyObject* original = stash_take(status);
  if (original) {
    reraise(original, status);
    kc_status_destroy(status);
    return NULL;
  }
  PyObject* cls = kcpy_error_class(kc_status_get_code(status));
  PyObject* text = kcpy_status_text(status);
  PyObject* exc = text ? PyObject_CallOneArg(cls, text) : NULL;
  if (exc) {
    const char* msg = kc_status_get_message(status);
    PyObject* code =
        PyUnicode_FromString(kc_status_code_name(kc_status_get_code(status)));
    PyObject* message =
        PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "backslashreplace");
    PyObject* context = status_context(status);
    if (!code || !message || !context ||
        PyObject_SetAttrString(exc, "code", code) < 0 ||
        PyObject_SetAttrString(exc, "message", message) < 0 ||
        PyObject_SetAttrString(exc, "context", context) < 0) {
      Py_CLEAR(exc);
    }
    Py_XDECREF(code);
    Py_XDECREF(message);
    Py_XDECREF(context);
  }
  Py_XDECREF(text);
  kc_status_destroy(status);
  if (exc) {
    PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

/* ---- exception -> status -------------------------------------------------------- */

/* The code a Python exception stands for. */
static kc_status_code code_of(PyObject* exc) {
  if (PyObject_IsInstance(exc, error_base) == 1) {
    PyObject* code = PyObject_GetAttrString(exc, "code");
    kc_status_code found = KC_UNKNOWN;
    if (code && PyUnicode_Check(code)) {
      const char* name = PyUnicode_AsUTF8(code);
      for (int c = KC_CANCELLED; name && c <= KC_UNAUTHENTICATED; ++c) {
        if (strcmp(name, kc_status_code_name((kc_status_code)c)) == 0) {
          found = (kc_status_code)c;
        }
      }
    }
    Py_XDECREF(code);
    PyErr_Clear();
    return found;
  }
  static const struct {
    PyObject** type;
    kc_status_code code;
  } map[] = {
      {&PyExc_TypeError, KC_INVALID_ARGUMENT},
      {&PyExc_ValueError, KC_INVALID_ARGUMENT},
      {&PyExc_IndexError, KC_OUT_OF_RANGE},
      {&PyExc_FileNotFoundError, KC_NOT_FOUND},
      {&PyExc_LookupError, KC_NOT_FOUND},
      {&PyExc_NotImplementedError, KC_UNIMPLEMENTED},
      {&PyExc_MemoryError, KC_RESOURCE_EXHAUSTED},
      {&PyExc_TimeoutError, KC_DEADLINE_EXCEEDED},
      {&PyExc_PermissionError, KC_PERMISSION_DENIED},
      {&PyExc_KeyboardInterrupt, KC_CANCELLED},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; ++i) {
    if (PyObject_IsInstance(exc, *map[i].type) == 1) return map[i].code;
  }
  PyErr_Clear();
  return KC_UNKNOWN;
}

kc_status* kcpy_status_from_exception(void) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (!type) {
    return kc_status_create(KC_UNKNOWN,
                            "a Python callback failed without an exception");
  }
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  kc_status* st = NULL;
  if (value) {
    kc_status_code code = code_of(value);
    PyObject* text = kcpy_describe_exception(value);
    const char* utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
    if (utf8) {
      st = kc_status_create(code, "%s", utf8);
    } else {
      PyErr_Clear();
      st = kc_status_create(code, "a Python callback raised %s",
                            ((PyTypeObject*)type)->tp_name);
    }
    Py_XDECREF(text);
    stash_put(st, value);
  } else {
    st = kc_status_create(KC_UNKNOWN, "a Python callback raised %s",
                          ((PyTypeObject*)type)->tp_name);
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return st;
}
