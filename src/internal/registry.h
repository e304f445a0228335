/*
 * A name -> object map with lock-free lookups, shared by every registry
 * (functions, ops, kernels, custom-call targets).
 *
 * Readers take no lock and never write shared memory but their own thread
 * record: inside a read section (reclaim.h) they load the current table
 * and probe it. Writers serialise on `mu`, publish new slots and new
 * tables with sequentially consistent stores, and never free what a
 * reader might hold: a replaced table, a removed entry and an overridden
 * entry are retired (reclaim.h) and freed once every read section that
 * could have loaded them has closed, normally by the very call that
 * retired them. Retired memory is therefore bounded by what concurrent
 * readers can hold (a few entries), not by the number of overrides.
 *
 * The reclamation is epoch-based (reclaim.h has the details): a lookup
 * announces itself with one store to its own thread's record (writers
 * make it visible with membarrier; an atomic exchange where that is
 * refused), and a writer frees what it retired once every lookup that
 * could have seen it has finished. Hazard pointers would cost a lookup a
 * published pointer, a fence and a re-check for the table and again for
 * the entry; with epochs a lookup costs the same whatever it reads, and
 * the price, a stalled reader holding frees back, cannot be paid here:
 * read sections are a few loads and compares and never run user code.
 *
 * An entry holds one reference to its object, dropped when the entry is
 * freed. So an object found by kc__registry_find is borrowed: it stays
 * valid only while the caller's read section is open, unless the caller
 * retains it inside that section (kc__registry_get does both), or knows
 * that nobody removes or overrides the name meanwhile.
 *
 * Slots hold an entry pointer, NULL (never used) or a tombstone (removed).
 * Bit 0 of a slot marks an entry hidden: writers still see it, readers do
 * not use it. Unloading a plugin hides its entries, waits for readers, and
 * then either removes them or, when something still holds the plugin,
 * shows them again; no writer can run in between, since unload holds
 * every registry's mutex. A lookup that meets a hidden entry waits (out of
 * its read section) for that answer, a few microseconds, instead of
 * reporting the name missing; a lookup nested in another read section
 * cannot wait, and reports it missing.
 *
 * A missing name's NOT_FOUND status (kc__registry_not_found) is cheap: the
 * "did you mean" search runs only when its message is first read, and is
 * bounded (nearest.c).
 *
 * Registration made while a plugin transaction is open on the calling
 * thread is staged in the transaction instead (see txn.h).
 */
#ifndef KCALL_INTERNAL_REGISTRY_H_
#define KCALL_INTERNAL_REGISTRY_H_

#include <pthread.h>
#include <string.h>

#include "internal/common.h"
#include "internal/reclaim.h"
#include "kcall/plugin.h" /* the registration kinds */

/* Longest registrable name, in bytes. */
#define KC__NAME_MAX 255

typedef struct kc__reg_entry {
  /* What a lookup reads, with a short name, in one cache line. */
  uint64_t hash;
  kc_object* obj;
  uint32_t name_size;
  /* For the "did you mean" search (nearest.c): the low bits of the hash
   * of the name's last component (after the last '.' or ':'; the whole
   * name when it has none), and how often its bytes and its pairs of
   * adjacent bytes occur, each hashed into 16 buckets of 4-bit counts
   * (kc__count_add). */
  uint32_t tail_hash;
  uint64_t byte_counts;
  uint64_t pair_counts;
  char name[]; /* NUL-terminated; then the entry's kc__retired node */
} kc__reg_entry;

typedef struct kc__reg_table {
  kc__retired retired;
  size_t mask;  /* capacity - 1; capacity is a power of two */
  size_t used;  /* live entries + tombstones */
  size_t live;
  kc__reg_entry* slots[]; /* accessed atomically; see above */
} kc__reg_table;

typedef struct kc__registry {
  const char* kind; /* "function", printed in messages */
  int order;        /* lock order when a transaction commits several */
  pthread_mutex_t mu;
  kc__reg_table* table; /* accessed atomically; NULL until first insert */
  /* Bytes allowed in names beyond [A-Za-z0-9_.:-]; NULL for none. */
  const char* extra_name_bytes;
  /* Bumped (atomically, under mu) by every publish, remove, hide and
   * reset, so that a cache built from the registry can tell when to look
   * again. */
  uint64_t generation;
} kc__registry;

/* kc_registration.kind of each registry's entries (registry.c): internal,
 * so that no data object is exported. */
extern const char kc__kind_function[];
extern const char kc__kind_op[];
extern const char kc__kind_kernel[];
extern const char kc__kind_custom_call[];

#define KC__REGISTRY_INIT(kind_text, order_value)                           \
  KC__REGISTRY_INIT_NAMES(kind_text, order_value, NULL)
#define KC__REGISTRY_INIT_NAMES(kind_text, order_value, extra)              \
  {(kind_text), (order_value), PTHREAD_MUTEX_INITIALIZER, NULL, (extra), 0}

uint64_t kc__hash_name(kc_string_view name);

/* Counts `key` in 16 buckets of 4 bits (a count stops at 15). */
static inline uint64_t kc__count_add(uint64_t counts, uint64_t key) {
  unsigned shift = (unsigned)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 60) * 4;
  return ((counts >> shift) & 15) == 15 ? counts : counts + (UINT64_C(1) << shift);
}

/* The byte and byte-pair counts of a name (see kc__reg_entry). */
static inline void kc__name_counts(kc_string_view name, uint64_t* bytes,
                                   uint64_t* pairs) {
  uint64_t b = 0, p = 0;
  for (size_t i = 0; i < name.size; ++i) {
    unsigned char c = (unsigned char)name.data[i];
    b = kc__count_add(b, c);
    if (i > 0) p = kc__count_add(p, (uint64_t)(unsigned char)name.data[i - 1] << 8 | c);
  }
  *bytes = b;
  *pairs = p;
}

/* "a" or "an", whichever goes before the registry's kind in messages. */
static inline const char* kc__kind_article(const kc__registry* reg) {
  return strchr("aeiou", reg->kind[0]) ? "an" : "a";
}

/* INVALID_ARGUMENT unless name is 1..KC__NAME_MAX bytes of
 * [A-Za-z0-9_.:-] or the registry's extra_name_bytes. */
kc_status* kc__check_name(const kc__registry* reg, kc_string_view name);

/* Lock-free lookup: the borrowed object, or NULL (no status, nothing
 * allocated: the cheap answer to "is it registered?"). See above for how
 * long the object stays valid, and for hidden entries. */
kc_object* kc__registry_find(const kc__registry* reg, kc_string_view name);

/* As kc__registry_find, but never waits: *out_hidden tells whether a
 * missing name is hidden (a plugin being unloaded) rather than absent. */
kc_object* kc__registry_find_ex(const kc__registry* reg, kc_string_view name,
                                bool* out_hidden);

/* Lock-free lookup that retains what it finds, inside the read section:
 * a new reference, or NULL. */
kc_object* kc__registry_get(const kc__registry* reg, kc_string_view name);

/* Registers obj (taking a reference) or stages it in the calling thread's
 * transaction. */
kc_status* kc__registry_insert(kc__registry* reg, kc_string_view name,
                               kc_object* obj, uint32_t flags);

kc_status* kc__registry_remove(kc__registry* reg, kc_string_view name);

/* NOT_FOUND status for `name`. Costs one allocation: the message, with
 * the nearest registered names, is written when it is first read
 * (nearest.c), from the names registered then. */
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

/* Calls fn for every visible entry, under the writer lock. */
void kc__registry_visit(kc__registry* reg,
                        void (*fn)(void* ctx, const kc__reg_entry* e),
                        void* ctx);

/* Frees everything (waiting for open read sections first). No concurrent
 * use of this registry allowed. */
void kc__registry_reset(kc__registry* reg);

/* As kc__registry_reset, but first calls `retire` with the object of
 * every live entry (retired ones were reclaimed already), once the
 * registry no longer lists it and
 * before the entry's reference is dropped (outside the lock, so `retire`
 * may call into registries): for objects that others may still hold and
 * that must let go of what they own now. */
void kc__registry_reset_with(kc__registry* reg, void (*retire)(kc_object* obj));

/* ---- used by transactions (txn.c) and plugin unload (plugin.c) ----------- */

/* Creates a detached entry holding a new reference to obj. */
kc__reg_entry* kc__entry_create(kc_string_view name, kc_object* obj);
void kc__entry_destroy(kc__reg_entry* e);

/* With reg->mu held: the live entry named `name` (hidden or not), or
 * NULL. */
kc__reg_entry* kc__registry_find_locked(kc__registry* reg,
                                        kc_string_view name);

/* With reg->mu held: makes room for `extra` more entries, publishing a
 * larger table when the load (live plus tombstones) would pass one half,
 * so that that many publishes cannot fail. False when out of memory. */
bool kc__registry_reserve_locked(kc__registry* reg, size_t extra);

/* With reg->mu held: publishes `e` (replacing and retiring a live entry of
 * the same name, hidden or not). False when out of memory (nothing
 * changed). The caller runs kc__reclaim_collect once it holds no lock. */
bool kc__registry_publish_locked(kc__registry* reg, kc__reg_entry* e);

/* With reg->mu held: calls fn with the slot index of every live entry,
 * hidden ones included. */
void kc__registry_each_locked(kc__registry* reg,
                              void (*fn)(void* ctx, size_t slot,
                                         kc__reg_entry* e, bool hidden),
                              void* ctx);

/* With reg->mu held: hides or shows the entry in `slot` (an index from
 * kc__registry_each_locked; the table must not have been replaced since). */
void kc__registry_hide_locked(kc__registry* reg, size_t slot, bool hide);

/* With reg->mu held: removes the entry in `slot` and retires it. */
void kc__registry_drop_locked(kc__registry* reg, size_t slot);

/* With reg->mu held: as kc__registry_find_locked, and *out_hidden says
 * whether the entry found is hidden. */
kc__reg_entry* kc__registry_find_state_locked(kc__registry* reg,
                                              kc_string_view name,
                                              bool* out_hidden);

/* With reg->mu held: removes the entry named `name` (hidden or not) and
 * retires it; false when there is none. */
bool kc__registry_drop_named_locked(kc__registry* reg, kc_string_view name);

/* The four registries, in lock order, for plugin unload. */
kc__registry* kc__registry_of_functions(void);
kc__registry* kc__registry_of_ops(void);
kc__registry* kc__registry_of_kernels(void);
kc__registry* kc__registry_of_targets(void);

#endif /* KCALL_INTERNAL_REGISTRY_H_ */
