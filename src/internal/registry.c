/* The lock-free name map behind every registry; see registry.h. */
#include "internal/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/txn.h"
#include "kcall/value.h"

/* Marks a removed slot; never dereferenced. */
#define KC__TOMB ((kc__reg_entry*)(uintptr_t)1)

static kc__reg_entry* kc__slot_load(kc__reg_entry* const* slot) {
  return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}
static void kc__slot_store(kc__reg_entry** slot, kc__reg_entry* e) {
  __atomic_store_n(slot, e, __ATOMIC_RELEASE);
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

kc_object* kc__registry_find(const kc__registry* reg, kc_string_view name) {
  const kc__reg_table* t = __atomic_load_n(&reg->table, __ATOMIC_ACQUIRE);
  if (!t) return NULL;
  uint64_t h = kc__hash_name(name);
  for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
    kc__reg_entry* e = kc__slot_load(&t->slots[i]);
    if (!e) return NULL;
    if (e != KC__TOMB && kc__entry_matches(e, h, name)) return e->obj;
  }
}

kc__reg_entry* kc__entry_create(kc_string_view name, kc_object* obj) {
  kc__reg_entry* e = malloc(sizeof *e + name.size + 1);
  if (!e) return NULL;
  e->retired_next = NULL;
  e->obj = obj;
  e->hash = kc__hash_name(name);
  e->name_size = name.size;
  memcpy(e->name, name.data, name.size);
  e->name[name.size] = '\0';
  kc_object_retain(obj);
  return e;
}

void kc__entry_destroy(kc__reg_entry* e) {
  if (!e) return;
  kc_object_release(e->obj);
  free(e);
}

/* The slot holding `name`, or NULL. With mu held. */
static kc__reg_entry** kc__find_slot_locked(kc__reg_table* t, uint64_t h,
                                            kc_string_view name) {
  if (!t) return NULL;
  for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
    kc__reg_entry* e = t->slots[i];
    if (!e) return NULL;
    if (e != KC__TOMB && kc__entry_matches(e, h, name)) return &t->slots[i];
  }
}

kc__reg_entry* kc__registry_find_locked(kc__registry* reg,
                                        kc_string_view name) {
  kc__reg_entry** slot =
      kc__find_slot_locked(reg->table, kc__hash_name(name), name);
  return slot ? *slot : NULL;
}

/* Places e in the first free or tombstone slot of its chain (plain stores:
 * the table is not yet published, or the caller stores atomically). */
static kc__reg_entry** kc__free_slot(kc__reg_table* t, uint64_t h) {
  for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
    if (!t->slots[i] || t->slots[i] == KC__TOMB) return &t->slots[i];
  }
}

bool kc__registry_reserve_locked(kc__registry* reg, size_t extra) {
  kc__reg_table* old = reg->table;
  if (old && (old->used + extra) * 2 <= old->mask + 1) return true;
  size_t live = old ? old->live : 0;
  size_t cap = 16;
  while (cap < (live + extra) * 4) cap *= 2;
  kc__reg_table* t = calloc(1, sizeof *t + cap * sizeof(kc__reg_entry*));
  if (!t) return false;
  t->mask = cap - 1;
  if (old) {
    for (size_t i = 0; i <= old->mask; ++i) {
      kc__reg_entry* e = old->slots[i];
      if (e && e != KC__TOMB) *kc__free_slot(t, e->hash) = e;
    }
    old->retired_next = reg->retired_tables;
    reg->retired_tables = old;
  }
  t->used = t->live = live;
  __atomic_store_n(&reg->table, t, __ATOMIC_RELEASE);
  return true;
}

static void kc__retire_entry(kc__registry* reg, kc__reg_entry* e) {
  e->retired_next = reg->retired_entries;
  reg->retired_entries = e;
}

static void kc__bump_generation(kc__registry* reg) {
  __atomic_add_fetch(&reg->generation, 1, __ATOMIC_RELEASE);
}

bool kc__registry_publish_locked(kc__registry* reg, kc__reg_entry* e) {
  kc_string_view name = {e->name, e->name_size};
  kc__reg_entry** slot = kc__find_slot_locked(reg->table, e->hash, name);
  if (slot) {
    kc__reg_entry* old = *slot;
    kc__slot_store(slot, e);
    kc__retire_entry(reg, old);
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
  if (st) kc__entry_destroy(e);
  return st;
}

kc_status* kc__registry_remove(kc__registry* reg, kc_string_view name) {
  pthread_mutex_lock(&reg->mu);
  kc__reg_entry** slot =
      kc__find_slot_locked(reg->table, kc__hash_name(name), name);
  if (slot) {
    kc__retire_entry(reg, *slot);
    kc__slot_store(slot, KC__TOMB);
    reg->table->live--;
    kc__bump_generation(reg);
  }
  pthread_mutex_unlock(&reg->mu);
  if (!slot) return kc__registry_not_found(reg, name);
  return NULL;
}

void kc__registry_visit(kc__registry* reg,
                        void (*fn)(void* ctx, const kc__reg_entry* e),
                        void* ctx) {
  pthread_mutex_lock(&reg->mu);
  kc__reg_table* t = reg->table;
  for (size_t i = 0; t && i <= t->mask; ++i) {
    kc__reg_entry* e = t->slots[i];
    if (e && e != KC__TOMB) fn(ctx, e);
  }
  pthread_mutex_unlock(&reg->mu);
}

void kc__registry_reset(kc__registry* reg) { kc__registry_reset_with(reg, NULL); }

void kc__registry_reset_with(kc__registry* reg, void (*retire)(kc_object* obj)) {
  /* Detach everything under the lock, free outside it: a deleter may call
   * back into the registry. */
  pthread_mutex_lock(&reg->mu);
  kc__reg_table* t = reg->table;
  kc__reg_entry* entries = reg->retired_entries;
  kc__reg_table* tables = reg->retired_tables;
  __atomic_store_n(&reg->table, NULL, __ATOMIC_RELEASE);
  reg->retired_entries = NULL;
  reg->retired_tables = NULL;
  kc__bump_generation(reg);
  pthread_mutex_unlock(&reg->mu);
  if (retire) {
    for (size_t i = 0; t && i <= t->mask; ++i) {
      if (t->slots[i] && t->slots[i] != KC__TOMB) retire(t->slots[i]->obj);
    }
    for (kc__reg_entry* e = entries; e; e = e->retired_next) retire(e->obj);
  }
  for (size_t i = 0; t && i <= t->mask; ++i) {
    if (t->slots[i] && t->slots[i] != KC__TOMB) kc__entry_destroy(t->slots[i]);
  }
  free(t);
  while (entries) {
    kc__reg_entry* next = entries->retired_next;
    kc__entry_destroy(entries);
    entries = next;
  }
  while (tables) {
    kc__reg_table* next = tables->retired_next;
    free(tables);
    tables = next;
  }
}
