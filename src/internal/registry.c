/* The lock-free name map behind every registry; see registry.h. */
#include "internal/registry.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/txn.h"
#include "kcall/value.h"

const char kc__kind_function[] = "function";
const char kc__kind_op[] = "op";
const char kc__kind_kernel[] = "kernel";
const char kc__kind_custom_call[] = "custom-call target";

/* Bit 0 of a slot: the entry is hidden (see registry.h). A removed slot
 * is a hidden NULL; neither is ever dereferenced by a reader. */
#define KC__HIDDEN ((uintptr_t)1)
#define KC__TOMB ((kc__reg_entry*)KC__HIDDEN)

static bool kc__is_hidden(const kc__reg_entry* e) {
  return ((uintptr_t)e & KC__HIDDEN) != 0;
}
static kc__reg_entry* kc__untag(kc__reg_entry* e) {
  return (kc__reg_entry*)((uintptr_t)e & ~KC__HIDDEN);
}

/* Sequentially consistent on both sides: a reader's slot loads follow its
 * read-section entry, a writer's retire follows its slot store (see
 * reclaim.h). On x86 the loads are plain loads. */
static kc__reg_entry* kc__slot_load(kc__reg_entry* const* slot) {
  return __atomic_load_n(slot, __ATOMIC_SEQ_CST);
}
static void kc__slot_store(kc__reg_entry** slot, kc__reg_entry* e) {
  __atomic_store_n(slot, e, __ATOMIC_SEQ_CST);
}

uint64_t kc__hash_name(kc_string_view name) {
  /* FNV-1a: short names, no adversary; cheap and good enough here. */
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < name.size; ++i) {
    h ^= (unsigned char)name.data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static bool kc__name_byte_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
         c == '-';
}

kc_status* kc__check_name(const kc__registry* reg, kc_string_view name) {
  if (name.size == 0 || !name.data) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "invalid %s name: expected 1 to %d bytes, got an "
                            "empty name",
                            reg->kind, KC__NAME_MAX);
  }
  if (name.size > KC__NAME_MAX) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "invalid %s name %s: expected at most %d "
                            "bytes, got %zu",
                            reg->kind, KC__Q(name), KC__NAME_MAX, name.size);
  }
  const char* extra = reg->extra_name_bytes ? reg->extra_name_bytes : "";
  for (size_t i = 0; i < name.size; ++i) {
    if (!kc__name_byte_ok(name.data[i]) &&
        (name.data[i] == '\0' || !strchr(extra, name.data[i]))) {
      return kc_status_create(
          KC_INVALID_ARGUMENT,
          "invalid %s name %s: byte %zu (0x%02x) is not one of "
          "[A-Za-z0-9_.:-%s]",
          reg->kind, KC__Q(name), i,
          (unsigned)(unsigned char)name.data[i], extra);
    }
  }
  return NULL;
}

static bool kc__entry_matches(const kc__reg_entry* e, uint64_t hash,
                              kc_string_view name) {
  return e->hash == hash && e->name_size == name.size &&
         memcmp(e->name, name.data, name.size) == 0;
}

/* Inside a read section: the slot value (tagged when hidden) of the entry
 * named `name`, or NULL. */
static inline __attribute__((always_inline)) kc__reg_entry* kc__probe(
    const kc__registry* reg, kc_string_view name) {
  const kc__reg_table* t = __atomic_load_n(&reg->table, __ATOMIC_SEQ_CST);
  if (!t) return NULL;
  uint64_t h = kc__hash_name(name);
  for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
    kc__reg_entry* e = kc__slot_load(&t->slots[i]);
    if (!e) return NULL;
    if (e == KC__TOMB) continue;
    /* A hidden entry's name is still compared (it is not freed while a
     * section is open), so that find_ex can report it. */
    kc__reg_entry* u = kc__untag(e);
    if (kc__entry_matches(u, h, name)) return e;
  }
}

/* A hidden entry: an unload is deciding whether to remove it or show it
 * again, within microseconds. A lookup outside any other read section
 * waits for the answer (out of its section, so that the unload can go
 * on) rather than report a name missing that may stay. A nested lookup
 * cannot wait (the unload waits for its section) and reports it missing. */
static bool kc__wait_for_unload(kc__section r, kc__reg_entry* e) {
  if (!e || !kc__is_hidden(e) || !r.outer) return false;
  kc__read_unlock(r);
  sched_yield();
  return true;
}

kc_object* kc__registry_find(const kc__registry* reg, kc_string_view name) {
  for (;;) {
    kc__section r = kc__read_lock();
    kc__reg_entry* e = kc__probe(reg, name);
    if (KC__UNLIKELY(kc__wait_for_unload(r, e))) continue;
    kc_object* obj = e && !kc__is_hidden(e) ? e->obj : NULL;
    kc__read_unlock(r);
    return obj;
  }
}

kc_object* kc__registry_find_ex(const kc__registry* reg, kc_string_view name,
                                bool* out_hidden) {
  kc__section r = kc__read_lock();
  kc__reg_entry* e = kc__probe(reg, name);
  *out_hidden = e && kc__is_hidden(e);
  kc_object* obj = e && !kc__is_hidden(e) ? e->obj : NULL;
  kc__read_unlock(r);
  return obj;
}

kc_object* kc__registry_get(const kc__registry* reg, kc_string_view name) {
  for (;;) {
    kc__section r = kc__read_lock();
    kc__reg_entry* e = kc__probe(reg, name);
    if (KC__UNLIKELY(kc__wait_for_unload(r, e))) continue;
    kc_object* obj = e && !kc__is_hidden(e) ? e->obj : NULL;
    /* Inside the section: the entry, and so its reference, cannot be freed
     * before this one is taken. */
    if (obj) kc_object_retain(obj);
    kc__read_unlock(r);
    return obj;
  }
}

/* Where an entry's kc__retired node lies: after its name, aligned. */
static size_t kc__entry_node_offset(size_t name_size) {
  size_t a = _Alignof(kc__retired);
  return (sizeof(kc__reg_entry) + name_size + 1 + a - 1) / a * a;
}

/* The bits and the tail hash the "did you mean" search filters with. */
static void kc__entry_digest(kc__reg_entry* e) {
  size_t tail = 0;
  for (size_t i = 0; i < e->name_size; ++i) {
    if (e->name[i] == '.' || e->name[i] == ':') tail = i + 1;
  }
  kc__name_counts((kc_string_view){e->name, e->name_size}, &e->byte_counts,
                  &e->pair_counts);
  kc_string_view t = {e->name + tail, e->name_size - tail};
  e->tail_hash = (uint32_t)kc__hash_name(t);
}

kc__reg_entry* kc__entry_create(kc_string_view name, kc_object* obj) {
  if (name.size > KC__NAME_MAX) return NULL;
  kc__reg_entry* e =
      kc__malloc(kc__entry_node_offset(name.size) + sizeof(kc__retired));
  if (!e) return NULL;
  e->obj = obj;
  e->hash = kc__hash_name(name);
  e->name_size = (uint32_t)name.size;
  memcpy(e->name, name.data, name.size);
  e->name[name.size] = '\0';
  kc__entry_digest(e);
  kc_object_retain(obj);
  return e;
}

void kc__entry_destroy(kc__reg_entry* e) {
  if (!e) return;
  kc_object_release(e->obj);
  kc__free(e);
}

static void kc__entry_free_retired(kc__retired* r) { kc__entry_destroy(r->base); }

static void kc__table_free_retired(kc__retired* r) { kc__free(r->base); }

static void kc__retire_entry(kc__reg_entry* e) {
  size_t at = kc__entry_node_offset(e->name_size);
  kc__retired* node = (kc__retired*)(void*)((char*)e + at);
  kc__retire(node, e, at + sizeof *node, kc__entry_free_retired);
}

static void kc__retire_table(kc__reg_table* t) {
  kc__retire(&t->retired, t,
             sizeof *t + (t->mask + 1) * sizeof(kc__reg_entry*),
             kc__table_free_retired);
}

/* The slot holding `name` (hidden or not), or NULL. With mu held. */
static kc__reg_entry** kc__find_slot_locked(kc__reg_table* t, uint64_t h,
                                            kc_string_view name) {
  if (!t) return NULL;
  for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
    kc__reg_entry* e = t->slots[i];
    if (!e) return NULL;
    if (e != KC__TOMB && kc__entry_matches(kc__untag(e), h, name)) {
      return &t->slots[i];
    }
  }
}

kc__reg_entry* kc__registry_find_locked(kc__registry* reg,
                                        kc_string_view name) {
  kc__reg_entry** slot =
      kc__find_slot_locked(reg->table, kc__hash_name(name), name);
  return slot ? kc__untag(*slot) : NULL;
}

/* The first free or tombstone slot of h's chain (plain stores: the table
 * is not yet published, or the caller stores atomically). */
static kc__reg_entry** kc__free_slot(kc__reg_table* t, uint64_t h) {
  for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
    if (!t->slots[i] || t->slots[i] == KC__TOMB) return &t->slots[i];
  }
}

bool kc__registry_reserve_locked(kc__registry* reg, size_t extra) {
  kc__reg_table* old = reg->table;
  if (old && (old->used + extra) * 2 <= old->mask + 1) return true;
  size_t live = old ? old->live : 0;
  /* A quarter full at most after growing: short probes for hits, which
   * matter more than the "did you mean" search crossing empty slots. */
  size_t cap = 16;
  while (cap < (live + extra) * 4) cap *= 2;
  kc__reg_table* t = kc__calloc(1, sizeof *t + cap * sizeof(kc__reg_entry*));
  if (!t) return false;
  t->mask = cap - 1;
  if (old) {
    for (size_t i = 0; i <= old->mask; ++i) {
      kc__reg_entry* e = old->slots[i];
      if (e && e != KC__TOMB) *kc__free_slot(t, kc__untag(e)->hash) = e;
    }
  }
  t->used = t->live = live;
  __atomic_store_n(&reg->table, t, __ATOMIC_SEQ_CST);
  if (old) kc__retire_table(old);
  return true;
}

static void kc__bump_generation(kc__registry* reg) {
  __atomic_add_fetch(&reg->generation, 1, __ATOMIC_RELEASE);
}

bool kc__registry_publish_locked(kc__registry* reg, kc__reg_entry* e) {
  kc_string_view name = {e->name, e->name_size};
  kc__reg_entry** slot = kc__find_slot_locked(reg->table, e->hash, name);
  if (slot) {
    kc__reg_entry* old = kc__untag(*slot);
    kc__slot_store(slot, e);
    kc__retire_entry(old);
    kc__bump_generation(reg); /* after the store: see registry.h */
    return true;
  }
  if (!kc__registry_reserve_locked(reg, 1)) return false;
  kc__reg_table* t = reg->table;
  slot = kc__free_slot(t, e->hash);
  if (!*slot) t->used++;
  t->live++;
  kc__slot_store(slot, e);
  kc__bump_generation(reg);
  return true;
}

static kc_status* kc__already_exists(const kc__registry* reg,
                                     kc_string_view name) {
  return kc_status_create(KC_ALREADY_EXISTS,
                          "%s %s named %s is already registered "
                          "(register with KC_REGISTER_OVERRIDE to replace it)",
                          kc__kind_article(reg), reg->kind, KC__Q(name));
}

kc_status* kc__registry_insert(kc__registry* reg, kc_string_view name,
                               kc_object* obj, uint32_t flags) {
  KC_RETURN_IF_ERROR(kc__check_name(reg, name), "registering a %s",
                     reg->kind);
  kc__txn* txn = kc__txn_current();
  if (txn) return kc__txn_stage(txn, reg, name, obj, flags);
  kc__reg_entry* e = kc__entry_create(name, obj);
  if (!e) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory registering %s %s", reg->kind,
                            KC__Q(name));
  }
  kc_status* st = NULL;
  pthread_mutex_lock(&reg->mu);
  if (!(flags & KC_REGISTER_OVERRIDE) && kc__registry_find_locked(reg, name)) {
    st = kc__already_exists(reg, name);
  } else if (!kc__registry_publish_locked(reg, e)) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED,
                          "out of memory registering %s %s", reg->kind,
                          KC__Q(name));
  }
  pthread_mutex_unlock(&reg->mu);
  if (st) {
    kc__entry_destroy(e);
  } else {
    kc__reclaim_collect(); /* what the publish replaced */
  }
  return st;
}

/* With mu held: tombstones `slot` of the current table and retires its
 * entry. */
static void kc__drop_slot_locked(kc__registry* reg, kc__reg_entry** slot) {
  kc__reg_entry* old = kc__untag(*slot);
  kc__slot_store(slot, KC__TOMB);
  reg->table->live--;
  kc__retire_entry(old);
  kc__bump_generation(reg);
}

kc_status* kc__registry_remove(kc__registry* reg, kc_string_view name) {
  pthread_mutex_lock(&reg->mu);
  kc__reg_entry** slot =
      kc__find_slot_locked(reg->table, kc__hash_name(name), name);
  /* A hidden entry belongs to a plugin being unloaded: not removable. */
  if (slot && kc__is_hidden(*slot)) slot = NULL;
  if (slot) kc__drop_slot_locked(reg, slot);
  pthread_mutex_unlock(&reg->mu);
  if (!slot) return kc__registry_not_found(reg, name);
  kc__reclaim_collect();
  return NULL;
}

void kc__registry_visit(kc__registry* reg,
                        void (*fn)(void* ctx, const kc__reg_entry* e),
                        void* ctx) {
  pthread_mutex_lock(&reg->mu);
  kc__reg_table* t = reg->table;
  for (size_t i = 0; t && i <= t->mask; ++i) {
    kc__reg_entry* e = t->slots[i];
    if (e && !kc__is_hidden(e)) fn(ctx, e);
  }
  pthread_mutex_unlock(&reg->mu);
}

void kc__registry_each_locked(kc__registry* reg,
                              void (*fn)(void* ctx, size_t slot,
                                         kc__reg_entry* e, bool hidden),
                              void* ctx) {
  kc__reg_table* t = reg->table;
  for (size_t i = 0; t && i <= t->mask; ++i) {
    kc__reg_entry* e = t->slots[i];
    if (e && e != KC__TOMB) fn(ctx, i, kc__untag(e), kc__is_hidden(e));
  }
}

void kc__registry_hide_locked(kc__registry* reg, size_t slot, bool hide) {
  /* No generation bump: caches keep what they hold (a reference), and
   * nothing new can be selected from a hidden entry. */
  kc__reg_entry** s = &reg->table->slots[slot];
  kc__reg_entry* e = kc__untag(*s);
  kc__slot_store(s, hide ? (kc__reg_entry*)((uintptr_t)e | KC__HIDDEN) : e);
}

void kc__registry_drop_locked(kc__registry* reg, size_t slot) {
  kc__drop_slot_locked(reg, &reg->table->slots[slot]);
}

kc__reg_entry* kc__registry_find_state_locked(kc__registry* reg,
                                              kc_string_view name,
                                              bool* out_hidden) {
  kc__reg_entry** slot =
      kc__find_slot_locked(reg->table, kc__hash_name(name), name);
  *out_hidden = slot && kc__is_hidden(*slot);
  return slot ? kc__untag(*slot) : NULL;
}

bool kc__registry_drop_named_locked(kc__registry* reg, kc_string_view name) {
  kc__reg_entry** slot =
      kc__find_slot_locked(reg->table, kc__hash_name(name), name);
  if (slot) kc__drop_slot_locked(reg, slot);
  return slot != NULL;
}

void kc__registry_reset(kc__registry* reg) { kc__registry_reset_with(reg, NULL); }

void kc__registry_reset_with(kc__registry* reg, void (*retire)(kc_object* obj)) {
  /* Detach everything under the lock, free outside it: a deleter may call
   * back into the registry. */
  pthread_mutex_lock(&reg->mu);
  kc__reg_table* t = reg->table;
  __atomic_store_n(&reg->table, NULL, __ATOMIC_SEQ_CST);
  kc__bump_generation(reg);
  pthread_mutex_unlock(&reg->mu);
  /* Readers of other registries may be in a section; what they can hold
   * is not this table, but entries this registry retired earlier are
   * freed with theirs once the sections close. (Entries retired by an
   * override or a removal are reclaimed as soon as no reader can hold
   * them, so only the live ones remain for `retire`.) */
  kc__reclaim_synchronize();
  if (retire) {
    for (size_t i = 0; t && i <= t->mask; ++i) {
      if (t->slots[i] && t->slots[i] != KC__TOMB) retire(kc__untag(t->slots[i])->obj);
    }
  }
  for (size_t i = 0; t && i <= t->mask; ++i) {
    if (t->slots[i] && t->slots[i] != KC__TOMB) {
      kc__entry_destroy(kc__untag(t->slots[i]));
    }
  }
  kc__free(t);
  kc__reclaim_collect();
}
