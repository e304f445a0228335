/*
 * A name -> object map with lock-free lookups, shared by every registry
 * (functions now; ops and custom-call targets later).
 *
 * Readers load the current table with acquire ordering and probe it; they
 * never lock and never write. Writers serialise on `mu`, publish new slots
 * and new tables with release stores, and never free anything a reader
 * might hold: replaced tables, removed entries and overridden entries go to
 * a retired list that only kc__registry_reset frees (when no reader may be
 * running). An entry holds one reference to its object.
 *
 * Registration made while a plugin transaction is open on the calling
 * thread is staged in the transaction instead (see txn.h).
 */
#ifndef KCALL_INTERNAL_REGISTRY_H_
#define KCALL_INTERNAL_REGISTRY_H_

#include <pthread.h>
#include <string.h>

#include "internal/common.h"
#include "kcall/plugin.h" /* the registration kinds */

/* Longest registrable name, in bytes. */
#define KC__NAME_MAX 255

typedef struct kc__reg_entry {
  struct kc__reg_entry* retired_next;
  kc_object* obj;
  uint64_t hash;
  size_t name_size;
  char name[]; /* NUL-terminated */
} kc__reg_entry;

typedef struct kc__reg_table {
  struct kc__reg_table* retired_next;
  size_t mask;  /* capacity - 1; capacity is a power of two */
  size_t used;  /* live entries + tombstones */
  size_t live;
  kc__reg_entry* slots[]; /* accessed atomically */
} kc__reg_table;

typedef struct kc__registry {
  const char* kind; /* "function", printed in messages */
  int order;        /* lock order when a transaction commits several */
  pthread_mutex_t mu;
  kc__reg_table* table; /* accessed atomically; NULL until first insert */
  kc__reg_entry* retired_entries;
  kc__reg_table* retired_tables;
  /* Bytes allowed in names beyond [A-Za-z0-9_.:-]; NULL for none. */
  const char* extra_name_bytes;
  /* Bumped (atomically, under mu) by every publish, remove and reset, so
   * that a cache built from the registry can tell when to look again. */
  uint64_t generation;
} kc__registry;

/* kc_registration.kind of each registry's entries (plugin.c): internal,
 * so that no data object is exported. */
extern const char kc__kind_function[];
extern const char kc__kind_op[];
extern const char kc__kind_kernel[];
extern const char kc__kind_custom_call[];

#define KC__REGISTRY_INIT(kind_text, order_value)                           \
  KC__REGISTRY_INIT_NAMES(kind_text, order_value, NULL)
#define KC__REGISTRY_INIT_NAMES(kind_text, order_value, extra)              \
  {(kind_text), (order_value), PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL, \
   (extra), 0}

uint64_t kc__hash_name(kc_string_view name);

/* "a" or "an", whichever goes before the registry's kind in messages. */
static inline const char* kc__kind_article(const kc__registry* reg) {
  return strchr("aeiou", reg->kind[0]) ? "an" : "a";
}

/* INVALID_ARGUMENT unless name is 1..KC__NAME_MAX bytes of
 * [A-Za-z0-9_.:-] or the registry's extra_name_bytes. */
kc_status* kc__check_name(const kc__registry* reg, kc_string_view name);

/* Lock-free lookup; the borrowed object or NULL. */
kc_object* kc__registry_find(const kc__registry* reg, kc_string_view name);

/* Registers obj (taking a reference) or stages it in the calling thread's
 * transaction. */
kc_status* kc__registry_insert(kc__registry* reg, kc_string_view name,
                               kc_object* obj, uint32_t flags);

kc_status* kc__registry_remove(kc__registry* reg, kc_string_view name);

/* NOT_FOUND status for `name`, listing the nearest registered names. */
kc_status* kc__registry_not_found(const kc__registry* reg,
                                  kc_string_view name);

/* An array (of strings, from `alloc`) of the names starting with `prefix`,
 * sorted. */
kc_status* kc__registry_list(kc__registry* reg, const kc_allocator* alloc,
                             kc_string_view prefix, kc_array** out_names);

/* The registry's generation (see above). */
static inline uint64_t kc__registry_generation(const kc__registry* reg) {
  return __atomic_load_n(&reg->generation, __ATOMIC_ACQUIRE);
}

/* Calls fn for every live entry, under the writer lock. */
void kc__registry_visit(kc__registry* reg,
                        void (*fn)(void* ctx, const kc__reg_entry* e),
                        void* ctx);

/* Frees everything. No concurrent use allowed. */
void kc__registry_reset(kc__registry* reg);

/* As kc__registry_reset, but first calls `retire` with the object of
 * every entry, live or retired, once the registry no longer lists it and
 * before the entry's reference is dropped (outside the lock, so `retire`
 * may call into registries): for objects that others may still hold and
 * that must let go of what they own now. */
void kc__registry_reset_with(kc__registry* reg, void (*retire)(kc_object* obj));

/* ---- used by transactions (txn.c) ---------------------------------------- */

/* Creates a detached entry holding a new reference to obj. */
kc__reg_entry* kc__entry_create(kc_string_view name, kc_object* obj);
void kc__entry_destroy(kc__reg_entry* e);

/* With reg->mu held: the live entry named `name`, or NULL. */
kc__reg_entry* kc__registry_find_locked(kc__registry* reg,
                                        kc_string_view name);

/* With reg->mu held: makes room for `extra` more entries, publishing a
 * larger table when the load (live plus tombstones) would pass one half,
 * so that that many publishes cannot fail. False when out of memory. */
bool kc__registry_reserve_locked(kc__registry* reg, size_t extra);

/* With reg->mu held: publishes `e` (replacing and retiring a live entry of
 * the same name). False when out of memory (nothing changed). */
bool kc__registry_publish_locked(kc__registry* reg, kc__reg_entry* e);

#endif /* KCALL_INTERNAL_REGISTRY_H_ */
