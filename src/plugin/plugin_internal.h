/* What loading (plugin.c) and unloading (unload.c) share. Never
 * installed. */
#ifndef KCALL_PLUGIN_PLUGIN_INTERNAL_H_
#define KCALL_PLUGIN_PLUGIN_INTERNAL_H_

#include <pthread.h>

#include "internal/owner.h"
#include "kcall/plugin.h"

typedef struct kc__plugin_reg {
  const char* kind;
  char* name;
  size_t name_size;
} kc__plugin_reg;

typedef enum kc__plugin_state {
  KC__PLUGIN_LOADED = 1,
  /* Its registrations are removed but objects it made are still alive, so
   * its file stays open; kc_plugin_unload tries again. */
  KC__PLUGIN_DEFUNCT,
  /* Unloaded; the record stays, so that its handle answers with a status
   * and a load of the same file reuses it. */
  KC__PLUGIN_UNLOADED,
  /* A load that failed but left objects of the plugin alive: its file
   * stays open for them, and the record is no handle. */
  KC__PLUGIN_ORPHANED
} kc__plugin_state;

/* Records are never freed: a handle stays safe to pass after unload. */
struct kc_plugin {
  kc_plugin* next;
  kc__plugin_state state; /* under kc__plugins_mu */
  int64_t loads;          /* kc_plugin_load calls not yet unloaded */
  void* handle;           /* dlopen's; NULL once closed */
  char* path;
  char* real_path; /* realpath(path), to reuse the record; may be NULL */
  char* name;
  char* version;
  uint32_t built_major, built_minor;
  uint32_t api_major, api_minor;
  kc__plugin_reg* regs;
  size_t reg_count;
  void (*fini)(const kc_host_api* host);
  bool fini_ran; /* by an unload that could not finish */
  kc__owner owner; /* the objects it made (internal/owner.h) */
  /* A tvm-ffi module: its file is never closed (tvm-ffi objects it made
   * may live anywhere in the process; kcall/tvm_ffi.h). */
  bool keep_mapped;
};

/* Loads and unloads serialise on this mutex. */
extern pthread_mutex_t kc__plugins_mu;

/* With kc__plugins_mu held and p loaded: hides p's registrations, waits
 * for readers, and either removes them (NULL) or, when something outside
 * the plugin still holds one of its objects, shows them again and returns
 * FAILED_PRECONDITION naming what is held (RESOURCE_EXHAUSTED when memory
 * runs out; also nothing changed). */
kc_status* kc__plugin_unregister(kc_plugin* p);

/* With kc__plugins_mu held, after kc__plugin_unregister: waits (briefly)
 * for the plugin's objects to be freed; FAILED_PRECONDITION naming those
 * still alive when some are. */
kc_status* kc__plugin_wait_freed(kc_plugin* p);

struct kc__txn;

/* Copies the names a transaction staged into the plugin's record. */
kc_status* kc__plugin_record_txn(kc_plugin* p, const struct kc__txn* txn);

/* kc_plugin_load, and kc_tvm_ffi_load_module when `tvm_only`: then the
 * file must be a tvm-ffi module, registered under `tvm_prefix` (NULL: the
 * default prefix, as for a tvm-ffi module kc_plugin_load loads). */
kc_status* kc__plugin_load(const char* path, const char* tvm_prefix,
                           bool tvm_only, kc_plugin** out_plugin);

/* The names NAME of the functions __tvm_ffi_NAME the file at `path`
 * defines (tvm-ffi's own __tvm_ffi__... left out), NUL-separated and ended
 * by an empty name, kc__malloc'd; NULL when there are none, or (*oom
 * set) when memory ran out. */
char* kc__tvm_module_names(const char* path, bool* oom);

/* Before dlopen of `path`: when the file uses libtvm_ffi's functions, loads
 * libtvm_ffi first (kcall/tvm_ffi.h says from where), so that the file's
 * dependency on it resolves to that one. The status of a failure (the file
 * may still find the library itself), else NULL. */
kc_status* kc__tvm_module_prepare(const char* path);

/* With kc__plugins_mu held and p->handle open on a tvm-ffi module whose
 * function names are `names`: registers them, staged, under `prefix`
 * (NULL: the default) and fills in the record. */
kc_status* kc__tvm_module_run(kc_plugin* p, const char* names,
                              const char* prefix);

#endif /* KCALL_PLUGIN_PLUGIN_INTERNAL_H_ */
