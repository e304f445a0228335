/*
 * Unloading a plugin: removing its registrations only when nothing
 * outside it still holds what it made.
 *
 * With every registry's mutex held (no registration can interleave), the
 * entries whose objects are the plugin's (internal/owner.h) are found and
 * the plugin's objects checked once as they are: a plugin in plain use is
 * refused there, unseen by anyone. Otherwise the entries are hidden:
 * lookups no longer take them (registry.h). After kc__reclaim_synchronize
 * no lookup that found one before is still running, and whoever kept one
 * retained it. The check is made again, and it decides. Each of the
 * plugin's live objects should be referenced only by
 *   - its registry entries,
 *   - another of the plugin's objects holding it on the library's behalf
 *     (an op's "op.NAME" function holds the op), and
 *   - the kernel caches of the plugin's own ops (they hold the kernels).
 * Any reference beyond those is a use from outside: a retained function or
 * op, a closure the plugin returned, an executable compiled against one of
 * its targets, an XLA FFI adapter, another op's kernel cache. If there is
 * one, the entries are shown again and the unload is refused, naming
 * each object in use and how many references hold it. Otherwise the
 * entries are removed (the kernels that followed the plugin's in their
 * numbering move down), and freeing them frees everything the plugin
 * made.
 *
 * References only fall while the entries are hidden: nothing can find the
 * objects any more, and retaining needs a reference to begin with. So a
 * check that passes stays true.
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "internal/grow.h"
#include "internal/reclaim.h"
#include "internal/registry.h"
#include "op/op_internal.h"
#include "plugin/plugin_internal.h"
#include "xcall/xcall_internal.h"

/* The owner record of a registry object, or NULL for other objects. */
static kc__owned* kc__owned_of(kc_object* obj) {
  switch (obj->type_index) {
    case KC_TYPE_FUNC: return &((kc_func*)(void*)obj)->owned;
    case KC__TYPE_OP: return &((kc_op*)(void*)obj)->owned;
    case KC__TYPE_KERNEL: return &((kc__kernel*)(void*)obj)->owned;
    case KC__TYPE_XCALL_TARGET: return &((kc__xcall_target*)(void*)obj)->owned;
    default: return NULL;
  }
}

typedef struct kc__ours {
  kc__registry* reg;
  size_t slot;
  kc__reg_entry* e;
} kc__ours;

/* One of the plugin's live objects, with its references: all of them, and
 * those the plugin's own entries and objects explain. */
typedef struct kc__use {
  kc_object* obj;
  kc__owned* owned;
  int64_t refs;
  int64_t expected;
} kc__use;

typedef struct kc__unload {
  kc_plugin* p;
  kc__registry* regs[4];
  kc__ours* ours; /* the registry entries of the plugin's objects */
  size_t num_ours, cap_ours;
  bool oom;
  kc__use* uses;
  size_t num_uses;
  kc__kernel_renumber renumber;
} kc__unload;

typedef struct kc__find_ctx {
  kc__unload* u;
  kc__registry* reg;
} kc__find_ctx;

/* Notes each entry whose object is the plugin's. */
static void kc__note_if_ours(void* arg, size_t slot, kc__reg_entry* e,
                             bool hidden) {
  kc__find_ctx* c = arg;
  kc__unload* u = c->u;
  kc__owned* o = kc__owned_of(e->obj);
  if (hidden || !o || o->owner != &u->p->owner || u->oom) return;
  if (!KC__GROW(u->ours, u->cap_ours, u->num_ours + 1)) {
    u->oom = true;
    return;
  }
  u->ours[u->num_ours].reg = c->reg;
  u->ours[u->num_ours].slot = slot;
  u->ours[u->num_ours].e = e;
  u->num_ours++;
}

static void kc__hide(kc__unload* u, bool hide) {
  for (size_t i = 0; i < u->num_ours; ++i) {
    kc__registry_hide_locked(u->ours[i].reg, u->ours[i].slot, hide);
  }
}

static int kc__by_object(const void* a, const void* b) {
  uintptr_t x = (uintptr_t)((const kc__use*)a)->obj;
  uintptr_t y = (uintptr_t)((const kc__use*)b)->obj;
  return (x > y) - (x < y);
}

static kc__use* kc__use_of(kc__unload* u, const void* obj) {
  kc__use key = {(kc_object*)(uintptr_t)obj, NULL, 0, 0};
  return bsearch(&key, u->uses, u->num_uses, sizeof key, kc__by_object);
}

static void kc__count_cached_kernel(void* ctx, const kc__kernel* k) {
  kc__use* use = kc__use_of(ctx, k);
  if (use) use->expected++;
}

/* Takes the census of the plugin's objects. With the owner's mutex held,
 * which the caller keeps until it is done with the objects: none can be
 * added, and none can finish dying (detaching is the last thing a dying
 * object does before freeing what describing it reads). False when out of
 * memory. */
static bool kc__census_locked(kc__unload* u) {
  kc__owner* w = &u->p->owner;
  u->uses = kc__calloc((size_t)w->live + 1, sizeof *u->uses);
  if (!u->uses) return false;
  for (kc__owned* o = w->head; o; o = o->next) {
    kc__use* use = &u->uses[u->num_uses++];
    use->obj = o->obj;
    use->owned = o;
    use->refs = kc_object_get_ref_count(o->obj);
  }
  qsort(u->uses, u->num_uses, sizeof *u->uses, kc__by_object);
  for (size_t i = 0; i < u->num_ours; ++i) {
    kc__use* use = kc__use_of(u, u->ours[i].e->obj);
    if (use) use->expected++;
  }
  /* Holds of objects already dying are not counted: what they held may
   * already be released, and counting it could hide a real use. */
  for (size_t i = 0; i < u->num_uses; ++i) {
    const kc__use* holder = &u->uses[i];
    if (holder->refs == 0) continue;
    if (holder->owned->holds) {
      kc__use* held = kc__use_of(u, holder->owned->holds);
      if (held) held->expected++;
    }
    if (holder->obj->type_index == KC__TYPE_OP) {
      kc__op_cache_each_kernel((const kc_op*)(const void*)holder->obj,
                               kc__count_cached_kernel, u);
    }
  }
  return true;
}

/* ---- saying what is in use ------------------------------------------------ */

/* The name an object is registered under among the plugin's entries (and
 * its registry's kind), or NULL. */
static const kc__ours* kc__entry_of(const kc__unload* u, const kc_object* obj) {
  for (size_t i = 0; i < u->num_ours; ++i) {
    if (u->ours[i].e->obj == obj) return &u->ours[i];
  }
  return NULL;
}

typedef struct kc__cached_in {
  const kc__kernel* k;
  bool found;
} kc__cached_in;

static void kc__find_cached(void* ctx, const kc__kernel* k) {
  kc__cached_in* c = ctx;
  if (k == c->k) c->found = true;
}

typedef struct kc__op_search {
  const kc__unload* u;
  const kc__kernel* k;
  const char* op; /* an op, not the plugin's, whose cache holds k */
} kc__op_search;

static void kc__search_caches(void* arg, size_t slot, kc__reg_entry* e,
                              bool hidden) {
  (void)slot;
  kc__op_search* s = arg;
  if (hidden || s->op) return;
  const kc_op* op = (const kc_op*)(const void*)e->obj;
  kc__cached_in c = {s->k, false};
  kc__op_cache_each_kernel(op, kc__find_cached, &c);
  if (c.found) s->op = e->name;
}

/* "function 'name'", "a closure ...", into buf (snprintf-style). */
static void kc__describe(const kc__unload* u, const kc__use* use, char* buf,
                         size_t cap, size_t* len) {
  const kc__ours* h = kc__entry_of(u, use->obj);
  const char* file = strrchr(u->p->path, '/');
  file = file ? file + 1 : u->p->path;
  if (h) {
    kc__appendf(buf, cap, len, "%s '%s'", h->reg->kind, h->e->name);
  } else if (use->obj->type_index == KC_TYPE_FUNC) {
    const kc_func* f = (const kc_func*)(const void*)use->obj;
    Dl_info info;
    void* code;
    memcpy(&code, &f->fn, sizeof code);
    if (dladdr(code, &info) && info.dli_fbase) {
      kc__appendf(buf, cap, len,
                  "a function it made and did not register (code at %s+0x%lx)",
                  file, (unsigned long)((uintptr_t)code - (uintptr_t)info.dli_fbase));
    } else {
      kc__appendf(buf, cap, len, "a function it made and did not register");
    }
  } else if (use->obj->type_index == KC__TYPE_OP) {
    kc__appendf(buf, cap, len, "op '%s' (not registered)",
                ((const kc_op*)(const void*)use->obj)->def.name);
  } else if (use->obj->type_index == KC__TYPE_KERNEL) {
    const kc__kernel* k = (const kc__kernel*)(const void*)use->obj;
    char dev[64];
    kc__device_type_format(k->device_type, dev, sizeof dev);
    kc__appendf(buf, cap, len, "a kernel of op '%s' on %s (not registered)",
                k->op_name, dev);
  } else {
    const kc__xcall_target* t = (const kc__xcall_target*)(const void*)use->obj;
    kc__appendf(buf, cap, len, "custom-call target '%s@%s' (not registered)",
                t->name, kc_platform_name(t->platform));
  }
  if (use->obj->type_index == KC__TYPE_KERNEL) {
    kc__op_search s = {u, (const kc__kernel*)(const void*)use->obj, NULL};
    kc__registry_each_locked(kc__registry_of_ops(), kc__search_caches, &s);
    if (s.op) kc__appendf(buf, cap, len, " (in the kernel cache of op '%s')", s.op);
  }
}

/* FAILED_PRECONDITION naming what is in use, or NULL when nothing is. */
static kc_status* kc__in_use(const kc__unload* u) {
  char text[2048];
  size_t len = 0;
  size_t named = 0, more = 0;
  for (size_t i = 0; i < u->num_uses; ++i) {
    const kc__use* use = &u->uses[i];
    if (use->refs <= use->expected) continue;
    if (named == 6) {
      more++;
      continue;
    }
    kc__appendf(text, sizeof text, &len, "%s", named ? "; " : "");
    kc__describe(u, use, text, sizeof text, &len);
    int64_t n = use->refs - use->expected;
    kc__appendf(text, sizeof text, &len, " is held by %lld reference%s",
                (long long)n, n == 1 ? "" : "s");
    named++;
  }
  if (!named) return NULL;
  if (more) kc__appendf(text, sizeof text, &len, "; and %zu more", more);
  return kc_status_create(
      KC_FAILED_PRECONDITION,
      "plugin '%s' is still in use, so it stays loaded with its "
      "registrations: %s (release them, destroy executables compiled "
      "against its targets, then unload again)",
      u->p->name, text);
}

/* ---- the unload ------------------------------------------------------------ */

/* The census and its verdict: FAILED_PRECONDITION naming what is in
 * use, RESOURCE_EXHAUSTED, or NULL. */
static kc_status* kc__check(kc__unload* u) {
  kc__free(u->uses);
  u->uses = NULL;
  u->num_uses = 0;
  pthread_mutex_lock(&u->p->owner.mu);
  kc_status* st = kc__census_locked(u)
                      ? kc__in_use(u)
                      : kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_unlock(&u->p->owner.mu);
  return st;
}

kc_status* kc__plugin_unregister(kc_plugin* p) {
  kc__unload u;
  memset(&u, 0, sizeof u);
  u.p = p;
  u.regs[0] = kc__registry_of_functions();
  u.regs[1] = kc__registry_of_ops();
  u.regs[2] = kc__registry_of_kernels();
  u.regs[3] = kc__registry_of_targets();
  for (int i = 0; i < 4; ++i) pthread_mutex_lock(&u.regs[i]->mu);
  for (int i = 0; i < 4; ++i) {
    kc__find_ctx c = {&u, u.regs[i]};
    kc__registry_each_locked(u.regs[i], kc__note_if_ours, &c);
  }
  kc_status* st =
      u.oom ? kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory") : kc__check(&u);
  if (!st) {
    kc__hide(&u, true);
    st = kc__kernel_renumber_prepare_locked(&u.renumber);
    if (!st) {
      /* Lookups that found an entry before it was hidden are over: whoever
       * kept its object holds a reference now. Lookups take no registry
       * mutex, so waiting with them held is safe. */
      kc__reclaim_synchronize();
      st = kc__check(&u);
      if (st) kc__kernel_renumber_discard(&u.renumber);
    }
    if (st) kc__hide(&u, false);
  }
  if (!st) {
    for (size_t i = 0; i < u.num_ours; ++i) {
      if (u.ours[i].reg != u.regs[2]) {
        kc__registry_drop_locked(u.ours[i].reg, u.ours[i].slot);
      }
    }
    kc__kernel_renumber_commit_locked(&u.renumber); /* the kernels' entries */
  }
  for (int i = 4; i > 0; --i) pthread_mutex_unlock(&u.regs[i - 1]->mu);
  kc__free(u.ours);
  kc__free(u.uses);
  return st;
}

kc_status* kc__plugin_wait_freed(kc_plugin* p) {
  /* Freeing the removed entries drops the registries' references, and
   * what the plugin made goes with them. An object that another thread
   * released just before the unload may still be running its deleter:
   * give it a moment. */
  kc__reclaim_synchronize();
  kc__reclaim_collect();
  kc__owner* w = &p->owner;
  for (int i = 0; i < 2000; ++i) {
    pthread_mutex_lock(&w->mu);
    int64_t live = w->live;
    pthread_mutex_unlock(&w->mu);
    if (live == 0) return NULL;
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
    kc__reclaim_collect();
  }
  kc__unload u;
  memset(&u, 0, sizeof u);
  u.p = p;
  pthread_mutex_lock(&kc__registry_of_ops()->mu);
  pthread_mutex_lock(&w->mu);
  char text[1024];
  size_t len = 0;
  int64_t live = 0;
  if (kc__census_locked(&u)) {
    for (size_t i = 0; i < u.num_uses && i < 4; ++i) {
      kc__appendf(text, sizeof text, &len, "%s", i ? "; " : "");
      kc__describe(&u, &u.uses[i], text, sizeof text, &len);
    }
    live = (int64_t)u.num_uses;
  } else {
    live = w->live;
  }
  pthread_mutex_unlock(&w->mu);
  pthread_mutex_unlock(&kc__registry_of_ops()->mu);
  kc__free(u.uses);
  if (live == 0) return NULL;
  return kc_status_create(
      KC_FAILED_PRECONDITION,
      "plugin '%s': its registrations are removed, but %lld object%s it "
      "made %s still alive (%s%s), so its file stays loaded; unload again "
      "once they are released",
      p->name, (long long)live, live == 1 ? "" : "s", live == 1 ? "is" : "are",
      len ? text : "", live > 4 ? "; ..." : "");
}
