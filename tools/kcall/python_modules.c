/*
 * python_modules.c — `--python MODULE`: Python modules whose registered
 * functions and targets a command calls, run by the plugin kcall_python
 * (python/plugin/python_plugin.c). The pip-installed package carries that
 * plugin beside libkcall, so the tool looks for it next to the libkcall it
 * runs with; the modules reach it through KCALL_PYTHON_MODULES, since a
 * plugin's init takes no arguments.
 */
#define _GNU_SOURCE /* dladdr */

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define PLUGIN_NAME "libkcall_python.so"
#define MODULES_ENV "KCALL_PYTHON_MODULES"

int cli_python_add(cli_python* py, const cli_command* command,
                   const char* module) {
  if (!module[0]) return cli_usage_error(command, "--python needs a module");
  size_t old = py->modules ? strlen(py->modules) : 0;
  size_t add = strlen(module);
  char* joined = realloc(py->modules, old + add + 2);
  if (!joined) {
    return cli_report_status(
        kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
  }
  if (old) joined[old++] = ',';
  memcpy(joined + old, module, add + 1);
  py->modules = joined;
  return -1;
}

/* The plugin's path beside the libkcall this process runs with, malloc'ed
 * into *out_path. NOT_FOUND, saying where it looked, when it is not there. */
static kc_status* plugin_path(char** out_path) {
  kc_status* (*anchor)(const char*, kc_plugin**) = kc_plugin_load;
  void* addr;
  memcpy(&addr, &anchor, sizeof addr); /* function to data pointer (POSIX) */
  Dl_info info;
  char* lib = dladdr(addr, &info) && info.dli_fname
                  ? realpath(info.dli_fname, NULL)
                  : NULL;
  if (!lib) return kc_status_create(KC_INTERNAL, "cannot tell where libkcall is");
  const char* slash = strrchr(lib, '/');
  size_t dir = slash ? (size_t)(slash - lib) + 1 : 0;
  char* path = malloc(dir + sizeof PLUGIN_NAME);
  if (path) {
    memcpy(path, lib, dir);
    memcpy(path + dir, PLUGIN_NAME, sizeof PLUGIN_NAME);
  }
  free(lib);
  if (!path) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  struct stat sb;
  if (stat(path, &sb) != 0) {
    kc_status* st = kc_status_create(
        KC_NOT_FOUND,
        "--python: no Python plugin at %s (it comes with the pip-installed "
        "package: run its tool, `python -m kcall`, or name the plugin with "
        "--plugin and the modules in " MODULES_ENV ")",
        CLI_QS(path));
    free(path);
    return st;
  }
  *out_path = path;
  return NULL;
}

kc_status* cli_python_load(cli_python* py) {
  if (!py->modules) return NULL;
  char* path = NULL;
  kc_status* st = plugin_path(&path);
  if (!st && setenv(MODULES_ENV, py->modules, 1) != 0) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "setting " MODULES_ENV);
  }
  kc_plugin* plugin = NULL;
  if (!st) st = kc_plugin_load(path, &plugin);
  if (!st) py->plugin = plugin;
  free(path);
  return st;
}

void cli_python_deinit(cli_python* py) {
  free(py->modules);
  py->modules = NULL;
}
