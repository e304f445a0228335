/*
 * python_plugin_loader.c — libkcall_python.so, the file kcall loads as the
 * plugin kcall_python. The plugin itself (python_plugin.c, built as
 * libkcall_python_impl.so beside this file) uses Python's C API without
 * linking libpython, as extension modules do: the package then depends on
 * no particular libpython (a manylinux wheel may not), and a Python host's
 * own interpreter is the one it finds. Its Python symbols come from the
 * process's global scope: a Python host has them there; in any other host
 * (the kcall tool, a C program) this loader first opens libpython there,
 * then the plugin, and hands kcall the plugin's info.
 *
 * Like every plugin it sees only <kcall/abi.h>. When libpython or the
 * plugin cannot be opened, the info it returns has an init that fails
 * saying which and why.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <kcall/abi.h>

/* The libpython the package was built against, by path and by soname. */
#ifndef KC_PYTHON_LIBRARY
#error "KC_PYTHON_LIBRARY must name the libpython the plugin was built against"
#endif
#ifndef KC_PYTHON_SONAME
#error "KC_PYTHON_SONAME must be that libpython's soname"
#endif
#define IMPL_FILE "libkcall_python_impl.so"

/* Why the plugin could not be opened; written once, by the entry point,
 * which kcall calls with its loader lock held. */
static char why[PATH_MAX + 512];

static kc_status* fail_init(const kc_host_api* host) {
  return host->status_create(KC_FAILED_PRECONDITION, "%s", why);
}

static const kc_plugin_info failed = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "python",
    .init = fail_init,
};

/* Opens libpython into the global scope unless the process has Python
 * already; false, with `why` written, when it cannot. The handle is never
 * closed: the interpreter the plugin starts lives as long as the process. */
static bool python_in_global_scope(void) {
  if (dlsym(RTLD_DEFAULT, "Py_IsInitialized")) return true;
  if (dlopen(KC_PYTHON_LIBRARY, RTLD_NOW | RTLD_GLOBAL)) return true;
  const char* first = dlerror();
  char by_path[512];
  snprintf(by_path, sizeof by_path, "%s", first ? first : "dlopen failed");
  if (dlopen(KC_PYTHON_SONAME, RTLD_NOW | RTLD_GLOBAL)) return true;
  const char* second = dlerror();
  snprintf(why, sizeof why,
           "the plugin kcall_python needs libpython to run Python in this "
           "process, and found none: %s; %s",
           by_path, second ? second : "dlopen failed");
  return false;
}

KC_PLUGIN_ENTRY(host) {
  if (!python_in_global_scope()) return &failed;
  Dl_info self;
  void* entry_addr;
  kc_plugin_entry_fn self_entry = kc_plugin_entry;
  memcpy(&entry_addr, &self_entry, sizeof entry_addr);
  const char* slash = dladdr(entry_addr, &self) && self.dli_fname
                          ? strrchr(self.dli_fname, '/')
                          : NULL;
  char impl_path[PATH_MAX];
  int n = slash ? snprintf(impl_path, sizeof impl_path, "%.*s/%s",
                           (int)(slash - self.dli_fname), self.dli_fname,
                           IMPL_FILE)
                : snprintf(impl_path, sizeof impl_path, "%s", IMPL_FILE);
  if (n < 0 || n >= (int)sizeof impl_path) {
    snprintf(why, sizeof why, "the path of %s beside %s is too long",
             IMPL_FILE, self.dli_fname);
    return &failed;
  }
  /* Never closed, like libpython: kcall may close this loader after a
   * failed init, while objects the plugin made can still be alive. */
  void* impl = dlopen(impl_path, RTLD_NOW | RTLD_LOCAL);
  void* sym = impl ? dlsym(impl, KC_PLUGIN_ENTRY_SYMBOL) : NULL;
  if (!sym) {
    const char* e = dlerror();
    snprintf(why, sizeof why, "cannot open the plugin kcall_python (%s): %s",
             impl_path, e ? e : "no entry point");
    return &failed;
  }
  kc_plugin_entry_fn entry;
  memcpy(&entry, &sym, sizeof entry);
  return entry(host);
}
