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

#endif /* KCALL_PLUGIN_PLUGIN_INTERNAL_H_ */
