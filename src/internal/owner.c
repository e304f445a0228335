/* Which plugin an object belongs to; see owner.h. */
#include "internal/owner.h"

#include <link.h>
#include <sched.h>
#include <stdlib.h>

#include "internal/reclaim.h"
#include "internal/txn.h"

/* Every published segment, as one immutable array: replaced (and the old
 * one retired) when a plugin is loaded or unloaded, read lock-free. */
typedef struct kc__range_table {
  kc__retired retired;
  size_t count;
  struct {
    uintptr_t lo, hi;
    kc__owner* owner;
  } ranges[];
} kc__range_table;

static pthread_mutex_t kc__ranges_mu = PTHREAD_MUTEX_INITIALIZER;
static kc__range_table* kc__ranges; /* atomic */

kc__owner* kc__owner_of_code(uintptr_t code) {
  /* No plugin was ever loaded: nothing to look at. */
  if (!__atomic_load_n(&kc__ranges, __ATOMIC_ACQUIRE)) return NULL;
  kc__owner* found = NULL;
  kc__section r = kc__read_lock();
  const kc__range_table* t = __atomic_load_n(&kc__ranges, __ATOMIC_SEQ_CST);
  for (size_t i = 0; t && i < t->count && !found; ++i) {
    if (code >= t->ranges[i].lo && code < t->ranges[i].hi) {
      /* NULL: a range withdrawn in place (kc__owner_withdraw). */
      found = __atomic_load_n(&t->ranges[i].owner, __ATOMIC_ACQUIRE);
    }
  }
  kc__read_unlock(r);
  return found;
}

static void kc__link(kc__owned* o, kc_object* obj, kc__owner* owner) {
  o->obj = obj;
  o->holds = NULL;
  o->prev = NULL;
  o->owner = owner;
  if (!owner) {
    o->next = NULL;
    return;
  }
  pthread_mutex_lock(&owner->mu);
  o->next = owner->head;
  if (owner->head) owner->head->prev = o;
  owner->head = o;
  owner->live++;
  pthread_mutex_unlock(&owner->mu);
}

void kc__owned_attach(kc__owned* o, kc_object* obj, const uintptr_t* code,
                      size_t n) {
  kc__txn* txn = kc__txn_current();
  kc__owner* owner = txn ? txn->owner : NULL;
  for (size_t i = 0; !owner && i < n; ++i) {
    if (code[i]) owner = kc__owner_of_code(code[i]);
  }
  kc__link(o, obj, owner);
}

void kc__owned_attach_to(kc__owned* o, kc_object* obj, kc__owner* owner) {
  kc__link(o, obj, owner);
}

void kc__owned_detach(kc__owned* o) {
  kc__owner* owner = o->owner;
  if (!owner) return;
  pthread_mutex_lock(&owner->mu);
  if (o->prev) o->prev->next = o->next;
  else owner->head = o->next;
  if (o->next) o->next->prev = o->prev;
  owner->live--;
  pthread_mutex_unlock(&owner->mu);
  o->owner = NULL;
}

void kc__owner_init(kc__owner* w) {
  pthread_mutex_init(&w->mu, NULL);
  w->head = NULL;
  w->live = 0;
  w->num_ranges = 0;
}

typedef struct kc__segments {
  uintptr_t inside;
  kc__owner* w;
  bool found;
} kc__segments;

/* dl_iterate_phdr's callback: records the loadable segments of the
 * object that holds `inside`. */
static int kc__find_segments(struct dl_phdr_info* info, size_t size,
                             void* arg) {
  (void)size;
  kc__segments* s = arg;
  bool holds = false;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum && !holds; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    holds = ph->p_type == PT_LOAD && s->inside >= lo &&
            s->inside < lo + (uintptr_t)ph->p_memsz;
  }
  if (!holds) return 0;
  kc__owner* w = s->w;
  w->num_ranges = 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || w->num_ranges == KC__OWNER_RANGES) continue;
    uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    w->lo[w->num_ranges] = lo;
    w->hi[w->num_ranges] = lo + (uintptr_t)ph->p_memsz;
    w->num_ranges++;
  }
  s->found = true;
  return 1;
}

static void kc__range_table_free(kc__retired* r) { kc__free(r->base); }

/* Whether an entry of the current table stays in the next one: not
 * `drop`'s, nor one withdrawn in place. */
static bool kc__range_kept(const kc__range_table* t, size_t i,
                           const kc__owner* drop) {
  return t->ranges[i].owner && t->ranges[i].owner != drop;
}

/* Publishes a new table: the current one without `drop`'s ranges, plus
 * `add`'s (either may be NULL). With kc__ranges_mu held. False when out
 * of memory, the table unchanged. */
static bool kc__republish_locked(kc__owner* add, kc__owner* drop) {
  kc__range_table* old = kc__ranges;
  size_t count = add ? add->num_ranges : 0;
  for (size_t i = 0; old && i < old->count; ++i) count += kc__range_kept(old, i, drop);
  kc__range_table* t = kc__malloc(sizeof *t + (count + 1) * sizeof t->ranges[0]);
  if (!t) return false;
  t->count = 0;
  for (size_t i = 0; old && i < old->count; ++i) {
    if (kc__range_kept(old, i, drop)) t->ranges[t->count++] = old->ranges[i];
  }
  for (size_t i = 0; add && i < add->num_ranges; ++i) {
    t->ranges[t->count].lo = add->lo[i];
    t->ranges[t->count].hi = add->hi[i];
    t->ranges[t->count].owner = add;
    t->count++;
  }
  __atomic_store_n(&kc__ranges, t, __ATOMIC_SEQ_CST);
  if (old) {
    kc__retire(&old->retired, old,
               sizeof *old + old->count * sizeof old->ranges[0],
               kc__range_table_free);
  }
  return true;
}

bool kc__owner_publish(kc__owner* w, uintptr_t inside) {
  kc__segments s = {inside, w, false};
  dl_iterate_phdr(kc__find_segments, &s);
  if (!s.found) return false;
  pthread_mutex_lock(&kc__ranges_mu);
  bool ok = kc__republish_locked(w, NULL);
  pthread_mutex_unlock(&kc__ranges_mu);
  kc__reclaim_collect();
  return ok;
}

void kc__owner_withdraw(kc__owner* w) {
  pthread_mutex_lock(&kc__ranges_mu);
  if (!kc__republish_locked(NULL, w)) {
    /* Out of memory for a new table: the owner's entries are cleared in
     * place, which readers take as no range, and the next table leaves
     * them out. Withdrawing never fails, so that an unload or a failed
     * load never keeps a plugin's file open for want of memory. */
    kc__range_table* t = kc__ranges;
    for (size_t i = 0; t && i < t->count; ++i) {
      if (t->ranges[i].owner == w) {
        __atomic_store_n(&t->ranges[i].owner, NULL, __ATOMIC_RELEASE);
      }
    }
  }
  pthread_mutex_unlock(&kc__ranges_mu);
  kc__reclaim_collect();
}
