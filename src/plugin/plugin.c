/* Loading plugins: dlopen, version negotiation, staged registration. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal/registry.h"
#include "plugin/dlopen_file.h"
#include "internal/txn.h"
#include "kcall/plugin.h"

const char kc__kind_function[] = "function";
const char kc__kind_op[] = "op";
const char kc__kind_kernel[] = "kernel";
const char kc__kind_custom_call[] = "custom-call target";

typedef struct kc__plugin_reg {
  const char* kind;
  char* name;
  size_t name_size;
} kc__plugin_reg;

struct kc_plugin {
  kc_plugin* next;
  void* handle;
  char* path;
  char* name;
  char* version;
  uint32_t built_major, built_minor;
  uint32_t api_major, api_minor;
  kc__plugin_reg* regs;
  size_t reg_count;
};

/* Loaded plugins, never freed (plugins stay mapped); loads serialise on
 * the mutex. */
static pthread_mutex_t kc__plugins_mu = PTHREAD_MUTEX_INITIALIZER;
static kc_plugin* kc__plugins;

static char* kc__dup(const char* s) {
  size_t n = strlen(s);
  char* d = malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

static void kc__plugin_free(kc_plugin* p) {
  if (!p) return;
  for (size_t i = 0; i < p->reg_count; ++i) free(p->regs[i].name);
  free(p->regs);
  free(p->path);
  free(p->name);
  free(p->version);
  free(p);
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

/* Copies the names a transaction staged into the plugin's record. */
static kc_status* kc__record(kc_plugin* p, const kc__txn* txn) {
  if (txn->count == 0) return NULL;
  p->regs = calloc(txn->count, sizeof *p->regs);
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
static kc_status* kc__run_plugin(kc_plugin* p) {
  kc_plugin_entry_fn entry;
  /* POSIX guarantees a data pointer from dlsym converts to a function
   * pointer; the memcpy keeps pedantic compilers quiet about it. */
  void* sym = dlsym(p->handle, KC_PLUGIN_ENTRY_SYMBOL);
  if (!sym) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "no entry symbol %s (declare it with "
                            "KC_PLUGIN_ENTRY from <kcall/abi.h>)",
                            KC__QS(KC_PLUGIN_ENTRY_SYMBOL));
  }
  memcpy(&entry, &sym, sizeof entry);
  const kc_host_api* host = kc_plugin_get_host_api();
  /* Staging begins before the entry point runs: whatever it registers is
   * published with init's registrations, or discarded with them when the
   * plugin is refused. */
  kc__txn txn = {0};
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
  st = kc__record(p, &txn);
  if (st) {
    kc__txn_discard(&txn);
    return st;
  }
  return kc_status_add_context(kc__txn_commit(&txn),
                               "publishing what plugin %s registered",
                               KC__QS(p->name));
}


kc_status* kc_plugin_load(const char* path, kc_plugin** out_plugin) {
  if (!path || !out_plugin) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_plugin_load: %s is NULL",
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
  kc_status* st = kc__dlopen_file(path, &handle);
  kc_plugin* p = NULL;
  if (!st) {
    for (kc_plugin* q = kc__plugins; q; q = q->next) {
      if (q->handle == handle) p = q;
    }
    if (p) {
      dlclose(handle); /* drop the extra reference dlopen took */
      *out_plugin = p;
      pthread_mutex_unlock(&kc__plugins_mu);
      return NULL;
    }
    p = calloc(1, sizeof *p);
    if (p) p->path = kc__dup(path);
    if (!p || !p->path) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      p->handle = handle;
      st = kc__run_plugin(p);
    }
  }
  if (st) {
    kc__plugin_free(p);
    if (handle) dlclose(handle);
  } else {
    p->next = kc__plugins;
    kc__plugins = p;
    *out_plugin = p;
  }
  pthread_mutex_unlock(&kc__plugins_mu);
  return kc_status_add_context(st, "loading plugin %s", KC__QS(path));
}

kc_status* kc_plugin_get_desc(const kc_plugin* plugin, kc_plugin_desc* out) {
  if (!plugin || !out) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_plugin_get_desc: %s is NULL",
                            plugin ? "out" : "plugin");
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
  return NULL;
}

kc_status* kc_plugin_get_registration(const kc_plugin* plugin, size_t index,
                                      kc_registration* out) {
  if (!plugin || !out) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_plugin_get_registration: %s is NULL",
                            plugin ? "out" : "plugin");
  }
  if (index >= plugin->reg_count) {
    return kc_status_create(KC_OUT_OF_RANGE,
                            "plugin %s: registration %zu: expected an index "
                            "below %zu",
                            KC__QS(plugin->name), index, plugin->reg_count);
  }
  kc_registration r;
  r.struct_size = out->struct_size;
  r.kind = plugin->regs[index].kind;
  r.name.data = plugin->regs[index].name;
  r.name.size = plugin->regs[index].name_size;
  memcpy(out, &r, out->struct_size < sizeof r ? out->struct_size : sizeof r);
  return NULL;
}
