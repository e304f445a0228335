/*
 * python_plugin.c — the plugin kcall_python: runs the Python modules named
 * in KCALL_PYTHON_MODULES in the plugin's init, so that what they register
 * (kcall.register_func, kcall.register_target) can be called by any kcall
 * host: `kcall call`, `kcall run`, a C program.
 *
 *   KCALL_PYTHON_MODULES=mylib.funcs,./extra.py \
 *       kcall call --plugin $(python -m kcall.config --python-plugin) NAME ...
 *
 * Each comma-separated entry is a module name, imported, or a path (ending
 * in .py or holding a '/'), run as runpy.run_path runs it. Registrations
 * made in init are staged by kcall, so they are published together once
 * every module ran, and none remains when one raises: init then fails with
 * the exception's type, message and traceback.
 *
 * The interpreter is the host's when the host already runs Python (a
 * Python program calling kcall.load_plugin). Otherwise the plugin starts
 * one, configured as the `python` of the environment the kcall package is
 * installed in, and never finalizes it: the functions registered hold
 * Python objects, and plugins are never unloaded. Either way init returns
 * with the GIL released; the functions take it when they are called, from
 * any thread.
 *
 * Like every plugin it sees only <kcall/abi.h>; unlike the others it links
 * libpython (the extension kcall._core, which the modules import, links
 * libkcall and leaves Python's symbols to the process).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h> /* first, as Python asks; it defines _GNU_SOURCE */

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kcall/abi.h>

#include "../src/pyexc.h"

#ifndef KC_PYTHON_PLUGIN_VERSION
#define KC_PYTHON_PLUGIN_VERSION "0"
#endif

#define MODULES_ENV "KCALL_PYTHON_MODULES"

/* ---- paths ---------------------------------------------------------------- */

static bool is_file(const char* path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The file holding `fn` (this plugin, or libpython), resolved, in
 * out[PATH_MAX]; false when the loader cannot say. */
static bool file_of(void (*fn)(void), char* out) {
  void* addr;
  memcpy(&addr, &fn, sizeof addr); /* function to data pointer, as POSIX allows */
  Dl_info info;
  return dladdr(addr, &info) && info.dli_fname && realpath(info.dli_fname, out);
}

/* Cuts the last component off `path` in place ("/a/b" -> "/a"). */
static void parent(char* path) {
  char* slash = strrchr(path, '/');
  if (slash) *(slash == path ? slash + 1 : slash) = '\0';
}

/* The directory holding the kcall package this plugin belongs to (the
 * plugin is <dir>/kcall/lib/libkcall_python.so, installed or built), in
 * out[PATH_MAX]; false when the plugin lies elsewhere. */
static bool kcall_site_dir(char* out) {
  if (!file_of((void (*)(void))kc_plugin_entry, out)) return false;
  parent(out); /* .../kcall/lib */
  parent(out); /* .../kcall */
  char probe[PATH_MAX];
  if (snprintf(probe, sizeof probe, "%s/__init__.py", out) >= (int)sizeof probe ||
      !is_file(probe)) {
    return false;
  }
  parent(out);
  return true;
}

/* The `python` whose environment an interpreter started here should be, in
 * out[PATH_MAX]: the virtual environment's when the package lies in one
 * (<venv>/lib/pythonX.Y/site-packages), else the one installed beside
 * libpython. Python reads its prefix, pyvenv.cfg and so its site-packages
 * from this path; false leaves Python to search PATH for one. */
static bool python_executable(const char* site_dir, const char* libpython,
                              char* out) {
  char dir[PATH_MAX];
  int n;
  if (site_dir) {
    snprintf(dir, sizeof dir, "%s", site_dir);
    parent(dir); /* lib/pythonX.Y */
    parent(dir); /* lib */
    parent(dir); /* the environment */
    char cfg[PATH_MAX];
    n = snprintf(cfg, sizeof cfg, "%s/pyvenv.cfg", dir);
    if (n > 0 && n < (int)sizeof cfg && is_file(cfg)) {
      n = snprintf(out, PATH_MAX, "%s/bin/python3", dir);
      if (n > 0 && n < PATH_MAX && is_file(out)) return true;
    }
  }
  if (libpython) {
    snprintf(dir, sizeof dir, "%s", libpython);
    parent(dir); /* <prefix>/lib */
    parent(dir); /* <prefix> */
    n = snprintf(out, PATH_MAX, "%s/bin/python%d.%d", dir, PY_MAJOR_VERSION,
                 PY_MINOR_VERSION);
    if (n > 0 && n < PATH_MAX && is_file(out)) return true;
  }
  return false;
}

/* ---- Python exceptions as statuses ---------------------------------------- */

/* Takes the exception now set (normalized, its traceback attached), or
 * NULL when none is. */
static PyObject* take_exception(void) {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value && tb) PyException_SetTraceback(value, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  return value;
#endif
}

/* The code for `exc`: a kcall.Error's own, NOT_FOUND for a module or file
 * that is not there, UNKNOWN for the rest. */
static kc_status_code code_of(PyObject* exc) {
  static const struct {
    const char* name;
    kc_status_code code;
  } kCodes[] = {
#define KC__CODE_NAME(name, value) {#name, KC_##name},
      KC_STATUS_CODES(KC__CODE_NAME)
#undef KC__CODE_NAME
  };
  if (PyErr_GivenExceptionMatches(exc, PyExc_ModuleNotFoundError) ||
      PyErr_GivenExceptionMatches(exc, PyExc_FileNotFoundError)) {
    return KC_NOT_FOUND;
  }
  /* kcall._core is there if the module got as far as registering. */
  kc_status_code found = KC_UNKNOWN;
  PyObject* core_name = PyUnicode_FromString("kcall._core");
  PyObject* core = core_name ? PyImport_GetModule(core_name) : NULL;
  PyObject* error = core ? PyObject_GetAttrString(core, "Error") : NULL;
  PyObject* code = error && PyObject_IsInstance(exc, error) == 1
                       ? PyObject_GetAttrString(exc, "code")
                       : NULL;
  const char* name = code && PyUnicode_Check(code) ? PyUnicode_AsUTF8(code) : NULL;
  for (size_t i = 0; name && i < sizeof kCodes / sizeof kCodes[0]; ++i) {
    if (strcmp(name, kCodes[i].name) == 0 && kCodes[i].code != KC_OK) {
      found = kCodes[i].code;
    }
  }
  Py_XDECREF(code);
  Py_XDECREF(error);
  Py_XDECREF(core);
  Py_XDECREF(core_name);
  PyErr_Clear();
  return found;
}

/* The status for the exception now set, which is cleared. */
static kc_status* status_from_exception(const kc_host_api* host) {
  PyObject* exc = take_exception();
  if (!exc) return host->status_create(KC_UNKNOWN, "failed without an exception");
  kc_status_code code = code_of(exc);
  PyObject* text = kcpy_describe_exception(exc);
  Py_ssize_t size = 0;
  const char* utf8 = text ? PyUnicode_AsUTF8AndSize(text, &size) : NULL;
  while (utf8 && size > 0 && utf8[size - 1] == '\n') --size;
  kc_status* st = utf8 ? host->status_create(code, "%.*s", (int)size, utf8)
                       : host->status_create(code, "raised %s",
                                             Py_TYPE(exc)->tp_name);
  PyErr_Clear();
  Py_XDECREF(text);
  Py_DECREF(exc);
  return st;
}

/* ---- the interpreter ------------------------------------------------------ */

/* FAILED_PRECONDITION unless the Python in this process is the one the
 * plugin was compiled for: another version's interpreter, already running
 * in a host, shares no ABI with it. */
static kc_status* check_version(const kc_host_api* host) {
  char want[16];
  snprintf(want, sizeof want, "%d.%d.", PY_MAJOR_VERSION, PY_MINOR_VERSION);
  const char* have = Py_GetVersion();
  if (strncmp(have, want, strlen(want)) == 0) return NULL;
  return host->status_create(KC_FAILED_PRECONDITION,
                             "built for Python %d.%d, but this process runs "
                             "Python %.*s",
                             PY_MAJOR_VERSION, PY_MINOR_VERSION,
                             (int)strcspn(have, " "), have);
}

/* Starts an interpreter, holding the GIL on success. */
static kc_status* start_python(const kc_host_api* host, const char* site_dir) {
  /* Extension modules (kcall._core, the standard library's) do not link
   * libpython and find its symbols in the process's global scope, where
   * a plugin's own dependencies, opened RTLD_LOCAL, are not: promote it.
   * The handle is never closed, which also keeps libpython mapped should
   * kcall close this plugin after a failed init. */
  char libpython[PATH_MAX];
  bool have_lib = file_of((void (*)(void))Py_InitializeEx, libpython);
  if (have_lib && !dlopen(libpython, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL)) {
    const char* why = dlerror();
    return host->status_create(KC_INTERNAL, "making %s global: %s", libpython,
                               why ? why : "dlopen failed");
  }

  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0; /* the host's signals stay its own */
  config.parse_argv = 0;
  /* Unbuffered, so that what a function prints comes out when it prints
   * it, before the host's own output: the interpreter is never
   * finalized, so buffers left at exit would never be written. */
  config.buffered_stdio = 0;
  PyStatus ps = PyStatus_Ok();
  char exe[PATH_MAX];
  if (python_executable(site_dir, have_lib ? libpython : NULL, exe)) {
    ps = PyConfig_SetBytesString(&config, &config.program_name, exe);
  }
  if (!PyStatus_Exception(ps)) ps = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(ps)) {
    return host->status_create(KC_INTERNAL, "starting Python: %s%s%s",
                               ps.func ? ps.func : "", ps.func ? ": " : "",
                               ps.err_msg ? ps.err_msg : "failed");
  }
  return NULL;
}

/* Puts `site_dir` (holding the kcall package) first on sys.path, with its
 * .pth files, unless it is there already (as it is when the package lies
 * in the environment python_executable found). */
static kc_status* add_site_dir(const kc_host_api* host, const char* site_dir) {
  PyObject* path = PySys_GetObject("path"); /* borrowed */
  PyObject* dir = PyUnicode_DecodeFSDefault(site_dir);
  int present = path && dir ? PySequence_Contains(path, dir) : -1;
  PyObject* site = NULL;
  PyObject* done = NULL;
  if (present == 0 && PyList_Insert(path, 0, dir) == 0) {
    site = PyImport_ImportModule("site");
    done = site ? PyObject_CallMethod(site, "addsitedir", "O", dir) : NULL;
  }
  kc_status* st = NULL;
  if (present < 0 || (present == 0 && !done)) {
    st = host->status_add_context(status_from_exception(host),
                                  "adding '%s' to sys.path", site_dir);
  }
  Py_XDECREF(done);
  Py_XDECREF(site);
  Py_XDECREF(dir);
  return st;
}

/* Imports the module `name`, or runs the file `name` when it is a path. */
static kc_status* run_module(const kc_host_api* host, const char* name) {
  size_t n = strlen(name);
  bool is_path = strchr(name, '/') || (n > 3 && strcmp(name + n - 3, ".py") == 0);
  PyObject* result = NULL;
  if (is_path) {
    PyObject* runpy = PyImport_ImportModule("runpy");
    PyObject* path = runpy ? PyUnicode_DecodeFSDefault(name) : NULL;
    result = path ? PyObject_CallMethod(runpy, "run_path", "O", path) : NULL;
    Py_XDECREF(path);
    Py_XDECREF(runpy);
  } else {
    result = PyImport_ImportModule(name);
  }
  if (result) {
    Py_DECREF(result);
    return NULL;
  }
  return host->status_add_context(status_from_exception(host), "%s '%s'",
                                  is_path ? "running Python file"
                                          : "importing Python module",
                                  name);
}

/* Runs each entry of the comma-separated `list`, spaces around it trimmed,
 * until one fails. */
static kc_status* run_modules(const kc_host_api* host, const char* list) {
  kc_status* st = NULL;
  while (list && *list && !st) {
    size_t len = strcspn(list, ",");
    const char* begin = list;
    const char* end = list + len;
    list = *end ? end + 1 : end;
    while (begin < end && (*begin == ' ' || *begin == '\t')) ++begin;
    while (end > begin && (end[-1] == ' ' || end[-1] == '\t')) --end;
    if (begin == end) continue;
    char* name = malloc((size_t)(end - begin) + 1);
    if (!name) return host->status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    memcpy(name, begin, (size_t)(end - begin));
    name[end - begin] = '\0';
    st = run_module(host, name);
    free(name);
  }
  return st;
}

/* ---- the plugin ----------------------------------------------------------- */

static kc_status* python_init(const kc_host_api* host) {
  kc_status* st = check_version(host);
  if (st) return st;
  char site_dir[PATH_MAX];
  bool have_site = kcall_site_dir(site_dir);

  bool started = !Py_IsInitialized();
  PyGILState_STATE gil = PyGILState_UNLOCKED;
  if (started) {
    st = start_python(host, have_site ? site_dir : NULL);
    if (st) return st;
  } else {
    gil = PyGILState_Ensure();
  }
  /* A host's interpreter, and its sys.path, are the host's own. */
  if (started && have_site) st = add_site_dir(host, site_dir);
  if (!st) st = run_modules(host, getenv(MODULES_ENV));
  if (started) {
    /* The thread state stays with this thread, for good: the GIL is free
     * for the functions, which take it on whatever thread calls them. */
    (void)PyEval_SaveThread();
  } else {
    PyGILState_Release(gil);
  }
  return st;
}

static const kc_plugin_info info = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "python",
    .version = KC_PYTHON_PLUGIN_VERSION " (Python " PY_VERSION ")",
    .init = python_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &info;
}
