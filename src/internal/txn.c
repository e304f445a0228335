/* Staged registration for plugin loads; see txn.h. */
#include "internal/grow.h"
#include "internal/txn.h"

#include <stdlib.h>

#include "kcall/value.h"

/* Only the plugin loader opens transactions, and only on its own thread,
 * so a thread-local pointer is all the state there is. */
static _Thread_local kc__txn* kc__current_txn;

kc__txn* kc__txn_current(void) { return kc__current_txn; }

void kc__txn_begin(kc__txn* txn) { kc__current_txn = txn; }

void kc__txn_end(void) { kc__current_txn = NULL; }

static kc__txn_item* kc__txn_find(kc__txn* txn, const kc__registry* reg,
                                  kc_string_view name) {
  for (size_t i = 0; i < txn->count; ++i) {
    kc__reg_entry* e = txn->items[i].entry;
    if (txn->items[i].reg == reg && e->name_size == name.size &&
        memcmp(e->name, name.data, name.size) == 0) {
      return &txn->items[i];
    }
  }
  return NULL;
}

kc_status* kc__txn_stage(kc__txn* txn, kc__registry* reg, kc_string_view name,
                         kc_object* obj, uint32_t flags) {
  bool override = (flags & KC_REGISTER_OVERRIDE) != 0;
  kc__txn_item* staged = kc__txn_find(txn, reg, name);
  if (!override &&
      (staged || kc__registry_find(reg, name) != NULL)) {
    return kc_status_create(KC_ALREADY_EXISTS,
                            "%s %s named %s is already registered",
                            kc__kind_article(reg), reg->kind, KC__Q(name));
  }
  kc__reg_entry* e = kc__entry_create(name, obj);
  if (!e) goto oom;
  if (staged) {
    kc__entry_destroy(staged->entry);
    staged->entry = e;
    staged->flags = flags;
    return NULL;
  }
  if (!KC__GROW(txn->items, txn->cap, txn->count + 1)) {
    kc__entry_destroy(e);
    goto oom;
  }
  txn->items[txn->count].reg = reg;
  txn->items[txn->count].entry = e;
  txn->items[txn->count].flags = flags;
  txn->count++;
  return NULL;
oom:
  return kc_status_create(KC_RESOURCE_EXHAUSTED,
                          "out of memory registering %s %s", reg->kind,
                          KC__Q(name));
}

/* The distinct registries of a transaction, in lock order. */
static size_t kc__txn_registries(const kc__txn* txn, kc__registry** regs,
                                 size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < txn->count; ++i) {
    kc__registry* r = txn->items[i].reg;
    size_t j = 0;
    while (j < n && regs[j] != r) ++j;
    if (j < n) continue;
    if (n == cap) break;
    /* insertion sort by order */
    j = n++;
    while (j > 0 && regs[j - 1]->order > r->order) {
      regs[j] = regs[j - 1];
      --j;
    }
    regs[j] = r;
  }
  return n;
}

/* Room for every registry kcall will have: functions, ops, kernels,
 * custom-call targets, and some to spare. */
#define KC__MAX_REGISTRIES 16

/* When a commit makes a registry's entries visible: lookups take no lock,
 * so another thread may see part of a commit, and what the others lead to
 * goes first. An op found has its kernels; a custom-call target or a
 * function found finds the ops it calls by name. */
static int kc__publish_rank(const kc__registry* reg) {
  if (reg->kind == kc__kind_kernel) return 0;
  if (reg->kind == kc__kind_op) return 1;
  if (reg->kind == kc__kind_custom_call) return 2;
  return 3;
}

kc_status* kc__txn_commit(kc__txn* txn) {
  kc__registry* regs[KC__MAX_REGISTRIES];
  size_t nregs = kc__txn_registries(txn, regs, KC__MAX_REGISTRIES);
  for (size_t i = 0; i < nregs; ++i) pthread_mutex_lock(&regs[i]->mu);
  kc_status* st = NULL;
  /* Names may have been taken by other threads since they were staged. */
  for (size_t i = 0; i < txn->count && !st; ++i) {
    kc__txn_item* it = &txn->items[i];
    kc_string_view name = {it->entry->name, it->entry->name_size};
    if (!(it->flags & KC_REGISTER_OVERRIDE) &&
        kc__registry_find_locked(it->reg, name)) {
      st = kc_status_create(KC_ALREADY_EXISTS,
                            "%s %s named %s was registered by another "
                            "thread during the load",
                            kc__kind_article(it->reg), it->reg->kind,
                            KC__Q(name));
    }
  }
  /* Publishing allocates only when a table grows; grow every table first
   * so that no publish can fail part way. */
  for (size_t r = 0; r < nregs && !st; ++r) {
    size_t extra = 0;
    for (size_t i = 0; i < txn->count; ++i) extra += txn->items[i].reg == regs[r];
    if (!kc__registry_reserve_locked(regs[r], extra)) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory publishing the registrations");
    }
  }
  for (int rank = 0; rank < 4 && !st; ++rank) {
    for (size_t i = 0; i < txn->count; ++i) {
      kc__txn_item* it = &txn->items[i];
      if (!it->entry || kc__publish_rank(it->reg) != rank) continue;
      bool ok = kc__registry_publish_locked(it->reg, it->entry);
      (void)ok; /* cannot fail after the reservation */
      it->entry = NULL;
    }
  }
  for (size_t i = nregs; i > 0; --i) pthread_mutex_unlock(&regs[i - 1]->mu);
  kc__txn_discard(txn);
  if (!st) kc__reclaim_collect(); /* what the overrides replaced */
  return st;
}

void kc__txn_discard(kc__txn* txn) {
  for (size_t i = 0; i < txn->count; ++i) kc__entry_destroy(txn->items[i].entry);
  kc__free(txn->items);
  txn->items = NULL;
  txn->count = txn->cap = 0;
}
