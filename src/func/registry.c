/* The global function registry. */
#include <stdlib.h>

#include "internal/nearest.h"
#include "internal/object.h"
#include "internal/reclaim.h"
#include "internal/registry.h"

/* The registry of packed functions. Statically initialised: nothing runs at
 * load time. See registry.h for how it locks. */
static kc__registry kc__func_registry = KC__REGISTRY_INIT(kc__kind_function, 0);

kc__registry* kc__registry_of_functions(void) { return &kc__func_registry; }

kc_status* kc_func_registry_register(kc_string_view name, kc_func* func,
                                     uint32_t flags) {
  if (!func) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "registering function %s: func is NULL",
                            KC__Q(name));
  }
  kc_status* st = kc__registry_insert(&kc__func_registry, name,
                                      KC_OBJECT(func),
                                      flags & ~KC_REGISTER_WRITES_NONE);
  /* Declared only once registered, so that a refused registration
   * changes nothing; a lookup that runs in between sees the default,
   * which is the cautious answer. */
  if (!st && (flags & KC_REGISTER_WRITES_NONE)) kc_func_set_writes(func, 0);
  return st;
}

kc_status* kc_func_registry_lookup(kc_string_view name, kc_func** out_func) {
  if (KC__UNLIKELY(!out_func)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_func_registry_lookup: out_func is NULL");
  }
  kc_object* obj = kc__registry_find(&kc__func_registry, name);
  *out_func = (kc_func*)(void*)obj;
  if (KC__LIKELY(obj != NULL)) return NULL;
  return kc__registry_not_found(&kc__func_registry, name);
}

kc_status* kc_func_registry_lookup_retained(kc_string_view name,
                                           kc_func** out_func) {
  if (KC__UNLIKELY(!out_func)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_func_registry_lookup_retained: out_func is "
                            "NULL");
  }
  kc_object* obj = kc__registry_get(&kc__func_registry, name);
  *out_func = (kc_func*)(void*)obj;
  if (KC__LIKELY(obj != NULL)) return NULL;
  return kc__registry_not_found(&kc__func_registry, name);
}

kc_status* kc_func_registry_remove(kc_string_view name) {
  return kc__registry_remove(&kc__func_registry, name);
}

kc_status* kc_func_registry_list(const kc_allocator* alloc,
                                 kc_string_view prefix, kc_array** out_names) {
  if (!out_names) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_func_registry_list: out_names is NULL");
  }
  return kc__registry_list(&kc__func_registry, alloc, prefix, out_names);
}

void kc_func_registry_reset(void) { kc__registry_reset(&kc__func_registry); }

void kc_registry_query_stats(kc_registry_stats* out) {
  if (!out) return;
  kc__reclaim_counts r;
  kc__reclaim_counts_get(&r);
  kc__nearest_counts n;
  kc__nearest_counts_get(&n);
  kc_registry_stats s;
  s.struct_size = out->struct_size;
  s.retired_objects = r.retired;
  s.retired_bytes = r.retired_bytes;
  s.reclaimed_objects = r.freed;
  s.reader_threads = r.readers;
  s.suggestion_searches = n.searches;
  s.suggestion_names_scanned = n.names_scanned;
  s.suggestion_distances = n.distances;
  s.suggestion_distance_cells = n.cells;
  s.lookups_use_membarrier = r.membarrier;
  memcpy(out, &s, out->struct_size < sizeof s ? out->struct_size : sizeof s);
}
