/* Loading plugins: dlopen, version negotiation, staged registration; and
 * unloading them (the check itself is in unload.c). */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal/reclaim.h"
#include "internal/registry.h"
#include "internal/txn.h"
#include "kcall/plugin.h"
#include "plugin/dlopen_file.h"
#include "plugin/plugin_internal.h"
#include "xcall/xcall_internal.h"

/* Every plugin record ever made (see plugin_internal.h); loads and
 * unloads serialise on the mutex. */
pthread_mutex_t kc__plugins_mu = PTHREAD_MUTEX_INITIALIZER;
static kc_plugin* kc__plugins;

static char* kc__dup(const char* s) {
  size_t n = strlen(s);
  char* d = kc__malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

/* Frees what a load filled in, leaving the record reusable. */
static void kc__plugin_clear(kc_plugin* p) {
  for (size_t i = 0; i < p->reg_count; ++i) kc__free(p->regs[i].name);
  kc__free(p->regs);
  kc__free(p->name);
  kc__free(p->version);
  p->regs = NULL;
  p->reg_count = 0;
  p->name = p->version = NULL;
  p->fini = NULL;
  p->fini_ran = false;
  p->loads = 0;
  p->handle = NULL;
}

/* Reads the info the entry point returned, field by field inside its
 * struct_size, and negotiates the API version. */
static kc_status* kc__check_info(kc_plugin* p, const kc_plugin_info* info) {
  if (!info) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_plugin_entry returned NULL instead of its "
                            "kc_plugin_info");
  }
  const size_t needed = offsetof(kc_plugin_info, init) + sizeof(info->init);
  if (info->struct_size < needed) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_plugin_info.struct_size: expected at least "
                            "%zu bytes, got %zu",
                            needed, info->struct_size);
  }
  p->built_major = info->api_major;
  p->built_minor = info->api_minor;
  if (info->api_major != KC_API_VERSION_MAJOR) {
    return kc_status_create(
        KC_FAILED_PRECONDITION,
        "built for kcall plugin API %u.%u, but this host offers %d.%d "
        "(a different major version cannot be loaded; rebuild the plugin)",
        info->api_major, info->api_minor, KC_API_VERSION_MAJOR,
        KC_API_VERSION_MINOR);
  }
  p->api_major = KC_API_VERSION_MAJOR;
  /* A newer minor is capped to what this host offers. */
  p->api_minor = info->api_minor > KC_API_VERSION_MINOR
                     ? (uint32_t)KC_API_VERSION_MINOR
                     : info->api_minor;
  if (!info->name || !info->name[0]) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_plugin_info.name: expected a non-empty name");
  }
  if (!info->init) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_plugin_info.init: expected a function, got "
                            "NULL");
  }
  p->fini = KC_STRUCT_HAS(info, kc_plugin_info, fini) ? info->fini : NULL;
  p->name = kc__dup(info->name);
  p->version = kc__dup(info->version ? info->version : "");
  if (!p->name || !p->version) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  const kc_host_api* host = kc_plugin_get_host_api();
  for (const char* const* req = info->required_features; req && *req; ++req) {
    const char* const* have = host->features;
    while (*have && strcmp(*have, *req) != 0) ++have;
    if (!*have) {
      return kc_status_create(KC_FAILED_PRECONDITION,
                              "requires host feature %s, which this host "
                              "(plugin API %d.%d) does not offer",
                              KC__QS(*req), KC_API_VERSION_MAJOR,
                              KC_API_VERSION_MINOR);
    }
  }
  return NULL;
}

kc_status* kc__plugin_record_txn(kc_plugin* p, const kc__txn* txn) {
  if (txn->count == 0) return NULL;
  p->regs = kc__calloc(txn->count, sizeof *p->regs);
  if (!p->regs) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < txn->count; ++i) {
    const kc__reg_entry* e = txn->items[i].entry;
    p->regs[i].kind = txn->items[i].reg->kind;
    p->regs[i].name = kc__dup(e->name);
    p->regs[i].name_size = e->name_size;
    if (!p->regs[i].name) {
      return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    }
    p->reg_count++;
  }
  return NULL;
}

/* Calls the entry point and init with registration staged; publishes on
 * success, discards on any failure. With kc__plugins_mu held. */
static kc_status* kc__run_plugin(kc_plugin* p, const char* tvm_prefix,
                                 bool tvm_only) {
  kc_plugin_entry_fn entry;
  /* POSIX guarantees a data pointer from dlsym converts to a function
   * pointer; the memcpy keeps pedantic compilers quiet about it. */
  void* sym = dlsym(p->handle, KC_PLUGIN_ENTRY_SYMBOL);
  if (!sym || tvm_only) {
    bool oom = false;
    char* names = kc__tvm_module_names(p->path, &oom);
    if (oom) {
      return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory reading its symbols");
    }
    if (names) {
      kc_status* st = sym ? kc_status_create(KC_INVALID_ARGUMENT,
                                             "it is a kcall plugin (it exports "
                                             "%s), not a tvm-ffi module: load "
                                             "it with kc_plugin_load",
                                             KC_PLUGIN_ENTRY_SYMBOL)
                          : kc__tvm_module_run(p, names, tvm_prefix);
      kc__free(names);
      return st;
    }
    if (tvm_only) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "not a tvm-ffi module: it exports no __tvm_ffi_ "
                              "function (what TVM_FFI_DLL_EXPORT_TYPED_FUNC "
                              "defines)");
    }
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "no entry symbol %s (declare it with "
                            "KC_PLUGIN_ENTRY from <kcall/abi.h>), and no "
                            "tvm-ffi function (__tvm_ffi_NAME) either",
                            KC__QS(KC_PLUGIN_ENTRY_SYMBOL));
  }
  memcpy(&entry, &sym, sizeof entry);
  /* From here on, objects whose code is in the file are the plugin's. */
  if (!kc__owner_publish(&p->owner, (uintptr_t)sym)) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory recording the plugin's segments");
  }
  const kc_host_api* host = kc_plugin_get_host_api();
  /* Staging begins before the entry point runs: whatever it registers is
   * published with init's registrations, or discarded with them when the
   * plugin is refused. What is made meanwhile on this thread is the
   * plugin's, whatever its code. */
  kc__txn txn = {0};
  txn.owner = &p->owner;
  kc__txn_begin(&txn);
  const kc_plugin_info* info = entry(host);
  kc_status* st = kc__check_info(p, info);
  if (st) {
    kc__txn_end();
    kc__txn_discard(&txn);
    return kc_status_add_context(st, "reading the plugin's info");
  }
  st = info->init(host);
  kc__txn_end();
  if (st) {
    kc__txn_discard(&txn);
    return kc_status_add_context(st, "in init of plugin %s", KC__QS(p->name));
  }
  st = kc__plugin_record_txn(p, &txn);
  if (st) {
    kc__txn_discard(&txn);
    return st;
  }
  return kc_status_add_context(kc__txn_commit(&txn),
                               "publishing what plugin %s registered",
                               KC__QS(p->name));
}


/* What a plugin that calls libkcall's functions itself, without linking
 * libkcall, is told: it was compiled against the host's declarations. */
#define KC__DIRECT_CALL_ADVICE                                                \
  "build it in plugin mode, including only <kcall/abi.h> and "               \
  "<kcall/plugin_api.h> (no host header such as <kcall/kcall.h> before "     \
  "it, no KC_PLUGIN_API_HOST; older kcall headers need -DKC_BUILDING_PLUGIN " \
  "for plugin mode), or link it with libkcall"

/* Refuses a plugin that calls libkcall's functions directly without
 * linking libkcall. Such a file loads only where the host process made
 * libkcall's symbols global (the kcall tool, a C host) and fails where it
 * did not (Python loads libkcall privately); it is refused in both.
 * `st` and `*handle` are kc__dlopen_file's outcome for `path`: a failure
 * naming an undefined kc_* symbol is replaced by the refusal; a success
 * is refused (and the file closed) when a kc_* function the file uses
 * undefined is not found among the plugin's own dependencies. */
static kc_status* kc__refuse_direct_calls(const char* path, kc_status* st,
                                          void** handle) {
  static const char undefined[] = "undefined symbol: ";
  char* names = NULL;
  const char* direct = NULL;
  int len = 0;
  if (st) {
    const char* at = strstr(kc_status_get_message(st), undefined);
    if (!at || strncmp(at + sizeof undefined - 1, "kc_", 3) != 0) return st;
    direct = at + sizeof undefined - 1;
    len = (int)strspn(direct, "abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
  } else {
    bool oom = false;
    names = kc__elf_undefined_kc_names(path, &oom);
    if (oom) {
      dlclose(*handle);
      *handle = NULL;
      return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory reading the symbols of %s",
                              KC__QS(path));
    }
    for (const char* n = names; n && *n && !direct; n += strlen(n) + 1) {
      if (!dlsym(*handle, n)) direct = n;
    }
    if (!direct) {
      kc__free(names);
      return NULL;
    }
    len = (int)strlen(direct);
    dlclose(*handle);
    *handle = NULL;
  }
  kc_status* refused = kc_status_create(
      KC_INVALID_ARGUMENT,
      "it calls libkcall's %.*s directly without linking libkcall (such a "
      "plugin loads only where the host makes libkcall's symbols global, "
      "and Python does not): " KC__DIRECT_CALL_ADVICE,
      len, direct);
  kc_status_destroy(st);
  kc__free(names);
  return refused;
}

/* With the mutex held: the record of the loaded plugin with dlopen handle
 * `handle`, or NULL. */
static kc_plugin* kc__plugin_by_handle(void* handle) {
  for (kc_plugin* q = kc__plugins; q; q = q->next) {
    if (q->handle == handle &&
        (q->state == KC__PLUGIN_LOADED || q->state == KC__PLUGIN_DEFUNCT)) {
      return q;
    }
  }
  return NULL;
}

/* realpath(path) in kcall's memory (kc__free) into *out, NULL when the
 * path has none; false when out of memory. */
static bool kc__real_path(const char* path, char** out) {
  char* libc = realpath(path, NULL); /* the C library's: free(), not kc__free */
  *out = libc ? kc__strdup(libc) : NULL;
  free(libc);
  return !libc || *out;
}

/* With the mutex held: an unloaded record of the same file to reuse (so
 * that reloading a file costs no new record), or a new one in the list. */
static kc_plugin* kc__plugin_record(const char* path) {
  char* real = NULL;
  if (!kc__real_path(path, &real)) return NULL;
  for (kc_plugin* q = kc__plugins; real && q; q = q->next) {
    if (q->state == KC__PLUGIN_UNLOADED && q->real_path &&
        strcmp(q->real_path, real) == 0) {
      kc__free(real);
      char* given = strcmp(q->path, path) ? kc__dup(path) : NULL;
      if (given) { /* as given this time (kc_plugin_desc.path) */
        kc__free(q->path);
        q->path = given;
      }
      return q;
    }
  }
  kc_plugin* p = kc__calloc(1, sizeof *p);
  if (p) p->path = kc__dup(path);
  if (!p || !p->path) {
    if (p) kc__free(p->path);
    kc__free(p);
    kc__free(real);
    return NULL;
  }
  p->real_path = real;
  kc__owner_init(&p->owner);
  p->state = KC__PLUGIN_UNLOADED;
  p->next = kc__plugins;
  kc__plugins = p;
  return p;
}

/* With the mutex held, after a failed load of `p` (whose handle is open):
 * closes the file unless objects the plugin made survived the discarded
 * registrations, in which case the file must stay for them. */
static void kc__plugin_abandon(kc_plugin* p) {
  kc__reclaim_synchronize();
  kc__reclaim_collect();
  pthread_mutex_lock(&p->owner.mu);
  int64_t live = p->owner.live;
  pthread_mutex_unlock(&p->owner.mu);
  if (live > 0) {
    p->state = KC__PLUGIN_ORPHANED; /* never closed, never reused */
    return;
  }
  kc__owner_withdraw(&p->owner);
  if (!p->keep_mapped) dlclose(p->handle);
  kc__plugin_clear(p);
  p->state = KC__PLUGIN_UNLOADED;
}

kc_status* kc_plugin_load(const char* path, kc_plugin** out_plugin) {
  return kc__plugin_load(path, NULL, false, out_plugin);
}

/* dlopen's refusal of a file that uses libtvm_ffi where none is found says
 * so, with what to install: `missing` (kc__tvm_module_prepare's status),
 * which is consumed. */
static kc_status* kc__explain_missing_tvm(kc_status* st, kc_status* missing) {
  if (st && missing) {
    kc_status_destroy(st);
    return kc_status_add_context(missing, "it is a tvm-ffi module");
  }
  kc_status_destroy(missing);
  return st;
}

kc_status* kc__plugin_load(const char* path, const char* tvm_prefix,
                           bool tvm_only, kc_plugin** out_plugin) {
  if (!path || !out_plugin) {
    return kc_status_create(KC_INVALID_ARGUMENT, "%s: %s is NULL",
                            tvm_only ? "kc_tvm_ffi_load_module" : "kc_plugin_load",
                            path ? "out_plugin" : "path");
  }
  *out_plugin = NULL;
  if (kc__txn_current()) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "loading plugin %s: a plugin cannot be loaded "
                            "from inside another plugin's init",
                            KC__QS(path));
  }
  pthread_mutex_lock(&kc__plugins_mu);
  void* handle = NULL;
  kc_status* missing_tvm = kc__tvm_module_prepare(path);
  kc_status* st = kc__explain_missing_tvm(
      kc__refuse_direct_calls(path, kc__dlopen_file(path, &handle), &handle),
      missing_tvm);
  if (!st) {
    kc_plugin* q = kc__plugin_by_handle(handle);
    if (q) {
      dlclose(handle); /* drop the extra reference dlopen took */
      if (q->state == KC__PLUGIN_LOADED) {
        q->loads++;
        *out_plugin = q;
      } else {
        st = kc_status_create(KC_FAILED_PRECONDITION,
                              "plugin '%s' was partly unloaded: objects it "
                              "made are still alive; release them and unload "
                              "it again before loading it anew",
                              q->name);
      }
      pthread_mutex_unlock(&kc__plugins_mu);
      return kc_status_add_context(st, "loading plugin '%s'", path);
    }
  }
  kc_plugin* p = NULL;
  if (!st) {
    p = kc__plugin_record(path);
    if (!p) {
      dlclose(handle);
      st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  if (!st) {
    p->handle = handle;
    st = kc__run_plugin(p, tvm_prefix, tvm_only);
    if (st) {
      kc__plugin_abandon(p);
    } else {
      p->state = KC__PLUGIN_LOADED;
      p->loads = 1;
      *out_plugin = p;
    }
  }
  pthread_mutex_unlock(&kc__plugins_mu);
  return kc_status_add_context(st, "loading %s %s",
                               tvm_only ? "tvm-ffi module" : "plugin",
                               KC__QS(path));
}

/* With the mutex held: INVALID_ARGUMENT unless `plugin` is a record this
 * library made, FAILED_PRECONDITION unless it is loaded. `fn` names the
 * caller in the message. */
static kc_status* kc__plugin_check(const kc_plugin* plugin, const char* fn) {
  const kc_plugin* q = kc__plugins;
  while (q && q != plugin) q = q->next;
  if (!q || q->state == KC__PLUGIN_ORPHANED) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: not a plugin handle from kc_plugin_load", fn);
  }
  if (q->state == KC__PLUGIN_UNLOADED) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "%s: plugin '%s' is not loaded (it was unloaded)",
                            fn, q->path);
  }
  return NULL;
}

kc_status* kc_plugin_unload(kc_plugin* plugin) {
  static const char fn[] = "kc_plugin_unload";
  if (!plugin) {
    return kc_status_create(KC_INVALID_ARGUMENT, "%s: plugin is NULL", fn);
  }
  if (kc__txn_current() || kc__read_locked()) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "%s: a plugin cannot be unloaded from inside a "
                            "plugin's init",
                            fn);
  }
  pthread_mutex_lock(&kc__plugins_mu);
  kc_status* st = kc__plugin_check(plugin, fn);
  kc_plugin* p = plugin;
  if (!st && !p->fini) {
    st = kc_status_create(KC_FAILED_PRECONDITION,
                          "plugin '%s' cannot be unloaded: its kc_plugin_info "
                          "has no fini (a plugin opts in to unloading by "
                          "giving one)",
                          p->name);
  }
  if (!st && p->loads > 1) {
    p->loads--; /* loaded again since: the last unload unloads */
    pthread_mutex_unlock(&kc__plugins_mu);
    return NULL;
  }
  /* Again when defunct: what was registered since is removed too. */
  if (!st) {
    st = kc__plugin_unregister(p);
    if (!st) p->state = KC__PLUGIN_DEFUNCT;
  }
  if (!st) st = kc__plugin_wait_freed(p);
  if (!st) kc__owner_withdraw(&p->owner);
  if (!st) {
    if (!p->fini_ran) p->fini(kc_plugin_get_host_api());
    p->fini_ran = true;
    pthread_mutex_lock(&p->owner.mu);
    int64_t made = p->owner.live;
    pthread_mutex_unlock(&p->owner.mu);
    if (made) {
      /* fini registered or made something: its code must stay. */
      st = kc_status_create(KC_FAILED_PRECONDITION,
                            "plugin '%s': its fini made %lld object%s (fini "
                            "must not register or make objects), so its "
                            "file stays loaded",
                            p->name, (long long)made, made == 1 ? "" : "s");
    }
  }
  if (!st) {
    kc__xla_types_forget_code(&p->owner);
    if (!p->keep_mapped) dlclose(p->handle);
    kc__plugin_clear(p);
    p->state = KC__PLUGIN_UNLOADED;
  }
  pthread_mutex_unlock(&kc__plugins_mu);
  return st;
}

kc_status* kc_plugin_get_desc(const kc_plugin* plugin, kc_plugin_desc* out) {
  if (!plugin || !out) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_plugin_get_desc: %s is NULL",
                            plugin ? "out" : "plugin");
  }
  pthread_mutex_lock(&kc__plugins_mu);
  kc_status* st = kc__plugin_check(plugin, "kc_plugin_get_desc");
  if (st) {
    pthread_mutex_unlock(&kc__plugins_mu);
    return st;
  }
  kc_plugin_desc d;
  d.struct_size = out->struct_size;
  d.path = plugin->path;
  d.name = plugin->name;
  d.version = plugin->version;
  d.built_api_major = plugin->built_major;
  d.built_api_minor = plugin->built_minor;
  d.api_major = plugin->api_major;
  d.api_minor = plugin->api_minor;
  d.registration_count = plugin->reg_count;
  memcpy(out, &d, out->struct_size < sizeof d ? out->struct_size : sizeof d);
  pthread_mutex_unlock(&kc__plugins_mu);
  return NULL;
}

kc_status* kc_plugin_get_registration(const kc_plugin* plugin, size_t index,
                                      kc_registration* out) {
  if (!plugin || !out) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_plugin_get_registration: %s is NULL",
                            plugin ? "out" : "plugin");
  }
  pthread_mutex_lock(&kc__plugins_mu);
  kc_status* st = kc__plugin_check(plugin, "kc_plugin_get_registration");
  if (!st && index >= plugin->reg_count) {
    st = kc_status_create(KC_OUT_OF_RANGE,
                          "plugin %s: registration %zu: expected an index "
                          "below %zu",
                          KC__QS(plugin->name), index, plugin->reg_count);
  }
  if (st) {
    pthread_mutex_unlock(&kc__plugins_mu);
    return st;
  }
  kc_registration r;
  r.struct_size = out->struct_size;
  r.kind = plugin->regs[index].kind;
  r.name.data = plugin->regs[index].name;
  r.name.size = plugin->regs[index].name_size;
  memcpy(out, &r, out->struct_size < sizeof r ? out->struct_size : sizeof r);
  pthread_mutex_unlock(&kc__plugins_mu);
  return NULL;
}
