/*
 * Which plugin an object belongs to, so that a plugin can be unloaded only
 * when nothing it made is still in use.
 *
 * Functions, ops, kernels and custom-call targets embed a kc__owned. At
 * creation it is attributed to a plugin (its kc__owner) when
 *   - the object is made while that plugin's init (or entry point) runs on
 *     the calling thread (an op with no code of its own, the "op.NAME"
 *     function of an op), or
 *   - one of its code addresses (the packed function, a deleter, a
 *     kernel's create/compute/delete, a target's handler) lies in one of
 *     the plugin file's loaded segments (a closure the plugin returns from
 *     a call, a kernel it registers later).
 * The owner keeps a list of its live objects, so that unload can count the
 * references they hold and name the ones still in use. Objects of no
 * plugin cost one lookup at creation and nothing after.
 *
 * Only code in the plugin's own file is recognised: a code address in a
 * library the plugin depends on does not make an object the plugin's.
 */
#ifndef KCALL_INTERNAL_OWNER_H_
#define KCALL_INTERNAL_OWNER_H_

#include <pthread.h>
#include <stdint.h>

#include "internal/common.h"
#include "kcall/value.h"

/* Most loaded segments recorded per plugin file. */
#define KC__OWNER_RANGES 8

typedef struct kc__owned kc__owned;

typedef struct kc__owner {
  pthread_mutex_t mu; /* guards the list */
  kc__owned* head;
  int64_t live;       /* objects in the list; under mu */
  /* The plugin file's loaded segments, [lo, hi). */
  uintptr_t lo[KC__OWNER_RANGES], hi[KC__OWNER_RANGES];
  size_t num_ranges;
} kc__owner;

struct kc__owned {
  kc__owner* owner; /* NULL: no plugin's */
  kc__owned* prev;
  kc__owned* next;
  kc_object* obj;
  /* A reference the object holds on the library's behalf to another of
   * the plugin's objects (an op's "op.NAME" function holds the op), so
   * that unload does not count it as a use. */
  kc_object* holds;
};

/* A code address, for kc__owned_attach. */
#define KC__CODE(fn) ((uintptr_t)(fn))

/* Attributes `o` (embedded in `obj`) as described above, given the
 * object's `n` code addresses (0 for none). Thread-safe. */
void kc__owned_attach(kc__owned* o, kc_object* obj, const uintptr_t* code,
                      size_t n);

/* Attributes `o` to `owner` (which may be NULL), as the owner of another
 * object it belongs with. `o` must not be attributed yet. */
void kc__owned_attach_to(kc__owned* o, kc_object* obj, kc__owner* owner);

/* Removes `o` from its owner's list; call it last in the deleter, after
 * any of the plugin's code (deleters) has run. A no-op when `o` has no
 * owner. */
void kc__owned_detach(kc__owned* o);

/* The owner whose segments hold `code`, or NULL. Lock-free. */
kc__owner* kc__owner_of_code(uintptr_t code);

/* Initialises `w` (no ranges, no objects). */
void kc__owner_init(kc__owner* w);

/* Records the segments of the loaded object holding address `inside` in
 * `w`, and publishes them so that kc__owner_of_code finds `w`. False when
 * no loaded object holds the address or memory runs out. */
bool kc__owner_publish(kc__owner* w, uintptr_t inside);

/* Stops kc__owner_of_code from finding `w` (before its file is closed).
 * Never fails: out of memory for a new table, the entries are cleared in
 * place. */
void kc__owner_withdraw(kc__owner* w);

#endif /* KCALL_INTERNAL_OWNER_H_ */
