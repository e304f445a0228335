/*
 * Staged registration. While a plugin's init runs, the loading thread has
 * a current transaction: every registry insert made on that thread is
 * staged there instead of being published. Commit publishes all staged
 * entries at once (locking every registry involved, in a fixed order, and
 * re-checking names), or publishes nothing; discard releases them.
 * Lookups take no lock, so another thread may see part of a commit: it
 * publishes kernels first, then ops, custom-call targets and functions,
 * so that an op found has its kernels.
 * Other threads never see staged entries.
 */
#ifndef KCALL_INTERNAL_TXN_H_
#define KCALL_INTERNAL_TXN_H_

#include "internal/registry.h"

typedef struct kc__txn_item {
  kc__registry* reg;
  kc__reg_entry* entry;
  uint32_t flags;
} kc__txn_item;

typedef struct kc__owner kc__owner;

typedef struct kc__txn {
  kc__txn_item* items;
  size_t count;
  size_t cap;
  /* The plugin being loaded: objects made on this thread meanwhile are
   * its (owner.h). */
  kc__owner* owner;
} kc__txn;

/* The calling thread's open transaction, or NULL. */
kc__txn* kc__txn_current(void);

/* Opens `txn` (zeroed by the caller) on the calling thread. */
void kc__txn_begin(kc__txn* txn);

/* Closes the calling thread's transaction without committing or
 * discarding it. */
void kc__txn_end(void);

kc_status* kc__txn_stage(kc__txn* txn, kc__registry* reg, kc_string_view name,
                         kc_object* obj, uint32_t flags);

/* Publishes every staged entry, or none (ALREADY_EXISTS naming the first
 * taken name, or RESOURCE_EXHAUSTED). Either way the transaction is
 * emptied: on failure its entries are released. */
kc_status* kc__txn_commit(kc__txn* txn);

/* Releases every staged entry and frees the transaction's storage. */
void kc__txn_discard(kc__txn* txn);

#endif /* KCALL_INTERNAL_TXN_H_ */
