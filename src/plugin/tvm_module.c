/* tvm-ffi modules as plugins: a shared object exporting __tvm_ffi_NAME
 * functions, loaded by kc_plugin_load or kc_tvm_ffi_load_module
 * (kcall/tvm_ffi.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "internal/txn.h"
#include "kcall/tvm_ffi.h"
#include "plugin/dlopen_file.h"
#include "plugin/plugin_internal.h"
#include "tvmffi/tvmffi_internal.h"

#define KC__TVM_SYMBOL_PREFIX "__tvm_ffi_"

char* kc__tvm_module_names(const char* path, bool* oom) {
  char* all = kc__elf_symbol_names(path, KC__TVM_SYMBOL_PREFIX, true, oom);
  if (!all) return NULL;
  /* Keep NAME of each __tvm_ffi_NAME, dropping tvm-ffi's own
   * __tvm_ffi__... symbols. */
  size_t out = 0;
  for (const char* n = all; *n;) {
    size_t len = strlen(n);
    const char* name = n + strlen(KC__TVM_SYMBOL_PREFIX);
    n += len + 1;
    if (!*name || *name == '_') continue;
    size_t name_len = strlen(name) + 1;
    memmove(all + out, name, name_len);
    out += name_len;
  }
  if (out == 0) {
    kc__free(all);
    return NULL;
  }
  all[out] = '\0';
  return all;
}

kc_status* kc__tvm_module_prepare(const char* path) {
  bool oom = false;
  char* uses = kc__elf_symbol_names(path, "TVMFFI", false, &oom);
  if (oom) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory reading the symbols of %s",
                            KC__QS(path));
  }
  if (!uses) return NULL;
  kc__free(uses);
  kc_status* st = NULL;
  (void)kc__tvm_api_get(&st);
  return st;
}

static void kc__tvm_module_fini(const kc_host_api* host) { KC__UNUSED(host); }

/* A prefix given by the caller: 1 to 200 bytes of [A-Za-z0-9_.]. */
static kc_status* kc__check_prefix(const char* prefix) {
  size_t n = strlen(prefix);
  size_t ok = strspn(prefix, "abcdefghijklmnopqrstuvwxyz"
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
  if (n == 0 || n > 200 || ok != n) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "prefix %s: expected 1 to 200 characters of "
                            "[A-Za-z0-9_.]%s",
                            KC__QS(prefix),
                            n == 0 || n > 200 ? "" : ", found a character "
                                                     "outside them");
  }
  return NULL;
}

/* The default prefix: the file name without its directory, a leading
 * "lib" and what follows the first '.'; characters a prefix may not have
 * become '_'. */
static char* kc__default_prefix(const char* path) {
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strncmp(base, "lib", 3) == 0 && base[3] && base[3] != '.') base += 3;
  size_t n = strcspn(base, ".");
  if (n == 0 || n > 200) n = n ? 200 : 0;
  char* prefix = kc__malloc(n + 1 + (n == 0 ? 6 : 0));
  if (!prefix) return NULL;
  if (n == 0) {
    memcpy(prefix, "tvmffi", 7);
    return prefix;
  }
  for (size_t i = 0; i < n; ++i) {
    char c = base[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_';
    prefix[i] = ok ? c : '_';
  }
  prefix[n] = '\0';
  return prefix;
}

kc_status* kc__tvm_module_run(kc_plugin* p, const char* names,
                              const char* prefix) {
  p->keep_mapped = true; /* whatever happens: its code may have run */
  char* own_prefix = prefix ? NULL : kc__default_prefix(p->path);
  if (!prefix && !own_prefix) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  kc_status* st = kc__check_prefix(prefix ? prefix : own_prefix);
  if (!st) {
    p->name = kc__strdup(prefix ? prefix : own_prefix);
    p->version = kc__strdup("tvm-ffi");
    if (!p->name || !p->version) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  kc__free(own_prefix);
  if (st) return st;
  p->built_major = p->api_major = KC_API_VERSION_MAJOR;
  p->built_minor = p->api_minor = KC_API_VERSION_MINOR;
  p->fini = kc__tvm_module_fini;
  char first[256];
  snprintf(first, sizeof first, KC__TVM_SYMBOL_PREFIX "%s", names);
  void* sym = dlsym(p->handle, first);
  if (!sym || !kc__owner_publish(&p->owner, (uintptr_t)sym)) {
    return kc_status_create(sym ? KC_RESOURCE_EXHAUSTED : KC_INVALID_ARGUMENT,
                            sym ? "out of memory recording the module's "
                                  "segments"
                                : "dlsym cannot find %s",
                            first);
  }
  kc__txn txn = {0};
  txn.owner = &p->owner;
  kc__txn_begin(&txn);
  st = kc__tvm_register_module(p->handle, names, p->name);
  kc__txn_end();
  if (!st) st = kc__plugin_record_txn(p, &txn);
  if (st) {
    kc__txn_discard(&txn);
    return kc_status_add_context(st, "in tvm-ffi module %s", KC__QS(p->name));
  }
  return kc_status_add_context(kc__txn_commit(&txn),
                               "publishing the functions of tvm-ffi module %s",
                               KC__QS(p->name));
}

kc_status* kc_tvm_ffi_load_module(const char* path, const char* prefix,
                                  kc_plugin** out_plugin) {
  if (out_plugin) *out_plugin = NULL;
  if (prefix) {
    KC_RETURN_IF_ERROR(kc__check_prefix(prefix), "loading tvm-ffi module %s",
                       KC__QS(path ? path : "(null)"));
  }
  return kc__plugin_load(path, prefix, true, out_plugin);
}
