/*
 * Kernels: the builder, the registry and selection.
 *
 * The registry maps "OP:DEVICE:N" to a kernel, N counting from 0 per op and
 * device type. Device names hold no ':' and N is digits, so the key is
 * unambiguous even for op names that contain ':'. Selection probes N = 0, 1,
 * ... until a name is missing: lock-free like every lookup, and it runs
 * only when an op's cache misses. Numbers stay dense: registration takes
 * the first free number, and unloading a plugin renumbers the kernels that
 * followed its own (plugin.c); while an unload is deciding, its kernels
 * are hidden, and probing steps over a hidden number.
 *
 * Everything that reads kernel objects found in the registry does so in a
 * read section (reclaim.h), and what it keeps it retains there.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/grow.h"
#include "internal/txn.h"
#include "op/op_internal.h"

static kc__registry kc__kernel_registry =
    KC__REGISTRY_INIT(kc__kind_kernel, 2);

kc__registry* kc__registry_of_kernels(void) { return &kc__kernel_registry; }

/* More kernels than this for one op and device type is a runaway loop. */
#define KC__MAX_KERNELS_PER_DEVICE 4096

uint64_t kc__kernel_generation(void) {
  return kc__registry_generation(&kc__kernel_registry);
}

size_t kc__device_type_format(DLDeviceType t, char* buf, size_t cap) {
  char full[64];
  DLDevice d = {t, 0};
  kc_device_format(d, full, sizeof full);
  char* colon = strrchr(full, ':');
  if (colon) *colon = '\0';
  return (size_t)snprintf(buf, cap, "%s", full);
}

/* "OP:DEVICE:N" into key (KC__NAME_MAX + 1 bytes); false when too long. */
static bool kc__kernel_key(kc_string_view op, DLDeviceType t, int n,
                           char* key) {
  char dev[64];
  kc__device_type_format(t, dev, sizeof dev);
  int k = snprintf(key, KC__NAME_MAX + 1, "%.*s:%s:%d", (int)op.size, op.data,
                   dev, n);
  return k > 0 && k <= KC__NAME_MAX;
}

/* ---- kernel objects ---------------------------------------------------- */

static void kc__kernel_delete(kc_object* obj) {
  kc__kernel* k = (kc__kernel*)(void*)obj;
  for (int32_t i = 0; i < k->num_constraints; ++i) kc__free(k->constraints[i].attr);
  kc__free(k->constraints);
  for (int32_t i = 0; i < k->num_host_memory; ++i) kc__free(k->host_memory[i]);
  kc__free(k->host_memory);
  if (k->data_deleter) k->data_deleter(k->data);
  kc__owned_detach(&k->owned); /* after the plugin's code has run */
  kc__free(k->op_name);
  kc__free(k);
}

size_t kc__kernel_describe(const kc__kernel* k, char* buf, size_t cap) {
  size_t n = kc__device_type_format(k->device_type, buf, cap);
  const char* sep = ": ";
  for (int32_t i = 0; i < k->num_constraints; ++i) {
    char set[512];
    kc__type_set_format(&k->constraints[i].types, set, sizeof set);
    kc__appendf(buf, cap, &n, "%s%s in %s", sep, k->constraints[i].attr, set);
    sep = ", ";
  }
  if (k->num_constraints == 0) {
    kc__appendf(buf, cap, &n, ": any dtypes");
  }
  for (int32_t i = 0; i < k->num_host_memory; ++i) {
    kc__appendf(buf, cap, &n, "%s%s",
                i ? ", " : ", host memory: ", k->host_memory[i]);
  }
  if (k->priority != 0) {
    kc__appendf(buf, cap, &n, " (priority %d)", k->priority);
  }
  return n;
}

/* ---- the builder ------------------------------------------------------- */

struct kc_kernel_builder {
  kc__kernel* k;
  kc__first_error error; /* replayed by registration */
};

static kc_status* kc__kb_misuse(const char* fn, const char* what) {
  return kc_status_create(KC_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
}

/* The first error, replayed by kc_kernel_registry_register. */
static kc_status* kc__kb_note(kc_kernel_builder* b, kc_status* st) {
  return kc__first_error_note(&b->error, st);
}

static bool kc__ident_ok(const char* s) {
  if (!s ||
      !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) {
    return false;
  }
  for (; *s; ++s) {
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9'))) {
      return false;
    }
  }
  return true;
}

static char* kc__dup(const char* s) {
  size_t n = strlen(s) + 1;
  char* d = kc__malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

kc_status* kc_kernel_builder_create(const char* op_name,
                                    DLDeviceType device_type,
                                    kc_kernel_create_fn create,
                                    kc_kernel_compute_fn compute,
                                    kc_deleter_fn delete_fn,
                                    kc_kernel_builder** out_builder) {
  static const char fn[] = "kc_kernel_builder_create";
  if (!out_builder) return kc__kb_misuse(fn, "out_builder");
  *out_builder = NULL;
  if (!op_name) return kc__kb_misuse(fn, "op_name");
  if (!compute) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kernel of op %s: compute is NULL", KC__QS(op_name));
  }
  KC_RETURN_IF_ERROR(kc__check_name(&kc__kernel_registry, kc_sv(op_name)),
                     "creating a kernel builder");
  char key[KC__NAME_MAX + 1];
  if (!kc__kernel_key(kc_sv(op_name), device_type, 0, key)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kernel of op %s: the op name is too long",
                            KC__QS(op_name));
  }
  kc_kernel_builder* b = kc__calloc(1, sizeof *b);
  kc__kernel* k = b ? kc__calloc(1, sizeof *k) : NULL;
  char* name = k ? kc__dup(op_name) : NULL;
  if (!name) {
    kc__free(k);
    kc__free(b);
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory creating a kernel builder");
  }
  kc__object_init(&k->header, KC__TYPE_KERNEL, kc__kernel_delete);
  k->op_name = name;
  k->op_name_size = strlen(name);
  k->device_type = device_type;
  k->create = create;
  k->compute = compute;
  k->delete_fn = delete_fn;
  b->k = k;
  *out_builder = b;
  return NULL;
}

void kc_kernel_builder_destroy(kc_kernel_builder* b) {
  if (!b) return;
  kc_object_release(KC_OBJECT(b->k));
  kc__first_error_deinit(&b->error);
  kc__free(b);
}

kc_status* kc_kernel_builder_add_type_constraint(kc_kernel_builder* b,
                                                 const char* attr_name,
                                                 const DLDataType* dtypes,
                                                 int32_t count) {
  static const char fn[] = "kc_kernel_builder_add_type_constraint";
  if (!b) return kc__kb_misuse(fn, "builder");
  kc__kernel* k = b->k;
  kc_status* st = NULL;
  if (!kc__ident_ok(attr_name)) {
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "kernel of op %s: type constraint on %s: not an "
                          "attr name",
                          KC__QS(k->op_name), KC__QS(attr_name ? attr_name : "(null)"));
  } else if (!dtypes || count < 1) {
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "kernel of op %s: type constraint on %s: "
                          "expected at least one dtype",
                          KC__QS(k->op_name), KC__QS(attr_name));
  }
  for (int32_t i = 0; !st && i < k->num_constraints; ++i) {
    if (strcmp(k->constraints[i].attr, attr_name) == 0) {
      st = kc_status_create(KC_INVALID_ARGUMENT,
                            "kernel of op %s: a second type constraint on "
                            "%s",
                            KC__QS(k->op_name), KC__QS(attr_name));
    }
  }
  kc__type_set set = {false, 0};
  for (int32_t i = 0; !st && i < count; ++i) {
    int slot = kc__dtype_slot(dtypes[i]);
    if (slot < 0) {
      char name[64];
      kc_dtype_format(dtypes[i], name, sizeof name);
      st = kc_status_create(KC_INVALID_ARGUMENT,
                            "kernel of op %s: type constraint on %s: %s "
                            "is not a scalar dtype",
                            KC__QS(k->op_name), KC__QS(attr_name), name);
    } else {
      set.mask |= UINT64_C(1) << slot;
    }
  }
  if (st) return kc__kb_note(b, st);
  bool grown = KC__GROW(k->constraints, k->cap_constraints, (size_t)k->num_constraints + 1);
  char* attr = grown ? kc__dup(attr_name) : NULL;
  if (!attr) {
    return kc__kb_note(
        b, kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
  }
  k->constraints[k->num_constraints].attr = attr;
  k->constraints[k->num_constraints].types = set;
  k->num_constraints++;
  return NULL;
}

kc_status* kc_kernel_builder_set_priority(kc_kernel_builder* b,
                                          int32_t priority) {
  if (!b) return kc__kb_misuse("kc_kernel_builder_set_priority", "builder");
  b->k->priority = priority;
  return NULL;
}

kc_status* kc_kernel_builder_add_host_memory_arg(kc_kernel_builder* b,
                                                 const char* arg_name) {
  if (!b) {
    return kc__kb_misuse("kc_kernel_builder_add_host_memory_arg", "builder");
  }
  kc__kernel* k = b->k;
  if (!kc__ident_ok(arg_name)) {
    return kc__kb_note(
        b, kc_status_create(KC_INVALID_ARGUMENT,
                            "kernel of op %s: host memory arg %s: not an "
                            "arg name",
                            KC__QS(k->op_name), KC__QS(arg_name ? arg_name : "(null)")));
  }
  bool grown = KC__GROW(k->host_memory, k->cap_host_memory, (size_t)k->num_host_memory + 1);
  char* copy = grown ? kc__dup(arg_name) : NULL;
  if (!copy) {
    return kc__kb_note(
        b, kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
  }
  k->host_memory[k->num_host_memory++] = copy;
  return NULL;
}

kc_status* kc_kernel_builder_set_data(kc_kernel_builder* b, void* data,
                                      kc_deleter_fn data_deleter) {
  if (!b) {
    if (data_deleter) data_deleter(data);
    return kc__kb_misuse("kc_kernel_builder_set_data", "builder");
  }
  kc__kernel* k = b->k;
  if (k->data_deleter) k->data_deleter(k->data);
  k->data = data;
  k->data_deleter = data_deleter;
  return NULL;
}

/* ---- checking against the op ------------------------------------------- */

/* Why `k` cannot serve `def`, or NULL. */
static kc_status* kc__kernel_check(const kc__kernel* k,
                                   const kc__op_schema* def) {
  for (int32_t i = 0; i < k->num_constraints; ++i) {
    const kc__type_constraint* c = &k->constraints[i];
    int32_t a = kc__op_find_attr(def, kc_sv(c->attr));
    if (a < 0 || def->attrs[a].kind != KC__ATTR_TYPE) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "type constraint on %s: op %s has no type "
                              "or list(type) attr of that name",
                              KC__QS(c->attr), KC__QS(def->name));
    }
    const kc__type_set* allowed = &def->attrs[a].types;
    if (!allowed->any && (c->types.mask & ~allowed->mask)) {
      char got[512], set[512];
      kc__type_set cut = {false, c->types.mask & ~allowed->mask};
      kc__type_set_format(&cut, got, sizeof got);
      kc__type_set_format(allowed, set, sizeof set);
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "type constraint on %s: %s not allowed by op "
                              "%s (%s: %s)",
                              KC__QS(c->attr), got, KC__QS(def->name), c->attr, set);
    }
  }
  for (int32_t i = 0; i < k->num_host_memory; ++i) {
    kc_string_view arg = kc_sv(k->host_memory[i]);
    if (kc__op_find_input(def, arg) < 0 && kc__op_find_output(def, arg) < 0) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "host memory arg %s: op %s has no input or "
                              "output of that name",
                              KC__QS(k->host_memory[i]), KC__QS(def->name));
    }
  }
  return NULL;
}

/* ---- registration ------------------------------------------------------ */

/* True when `key` is published or staged by this thread's plugin. */
static bool kc__key_taken(const char* key) {
  kc_string_view v = kc_sv(key);
  bool hidden = false;
  if (kc__registry_find_ex(&kc__kernel_registry, v, &hidden) || hidden) {
    return true;
  }
  kc__txn* txn = kc__txn_current();
  for (size_t i = 0; txn && i < txn->count; ++i) {
    const kc__reg_entry* e = txn->items[i].entry;
    if (txn->items[i].reg == &kc__kernel_registry &&
        kc_sv_equal((kc_string_view){e->name, e->name_size}, v)) {
      return true;
    }
  }
  return false;
}

kc_status* kc_kernel_registry_register(kc_kernel_builder* b) {
  if (!b) return kc__kb_misuse("kc_kernel_registry_register", "builder");
  kc__kernel* k = b->k;
  char dev[64];
  kc__device_type_format(k->device_type, dev, sizeof dev);
  kc_status* st = kc__first_error_replay(&b->error);
  if (!st) {
    /* The op may be overridden meanwhile: read it inside a section. */
    kc__section r = kc__read_lock();
    const kc_op* op = kc__op_find_any(kc_sv(k->op_name));
    if (op) st = kc__kernel_check(k, &op->def);
    kc__read_unlock(r);
  }
  kc_string_view op_name = {k->op_name, k->op_name_size};
  if (!st && !k->owned.obj) {
    const uintptr_t code[] = {KC__CODE(k->create), KC__CODE(k->compute),
                              KC__CODE(k->delete_fn), KC__CODE(k->data_deleter)};
    kc__owned_attach(&k->owned, &k->header, code, 4);
  }
  for (int n = 0; !st && n < KC__MAX_KERNELS_PER_DEVICE; ++n) {
    char key[KC__NAME_MAX + 1];
    kc__kernel_key(op_name, k->device_type, n, key);
    if (kc__key_taken(key)) continue;
    st = kc__registry_insert(&kc__kernel_registry, kc_sv(key), KC_OBJECT(k), 0);
    /* Another thread took the number between the probe and the insert. */
    if (kc_status_get_code(st) == KC_ALREADY_EXISTS && !kc__txn_current()) {
      kc_status_destroy(st);
      st = NULL;
      continue;
    }
    /* The context first: op_name is the builder's, freed with it. */
    st = kc_status_add_context(st, "registering a kernel of op %s on %s",
                               KC__Q(op_name), dev);
    kc_kernel_builder_destroy(b);
    return st;
  }
  if (!st) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "more than %d kernels",
                          KC__MAX_KERNELS_PER_DEVICE);
  }
  st = kc_status_add_context(st, "registering a kernel of op %s on %s",
                             KC__Q(op_name), dev);
  kc_kernel_builder_destroy(b);
  return st;
}

void kc_kernel_registry_reset(void) {
  kc__registry_reset(&kc__kernel_registry);
}

/* ---- renumbering after an unload --------------------------------------- */

typedef struct kc__group {
  const char* op;
  size_t op_size;
  DLDeviceType device;
} kc__group;

typedef struct kc__groups {
  kc__group* items;
  size_t count, cap;
  bool oom;
} kc__groups;

/* kc__registry_each_locked's callback: the (op, device) of each hidden
 * kernel, once. */
static void kc__note_group(void* ctx, size_t slot, kc__reg_entry* e,
                           bool hidden) {
  (void)slot;
  kc__groups* g = ctx;
  if (!hidden || g->oom) return;
  const kc__kernel* k = (const kc__kernel*)(const void*)e->obj;
  for (size_t i = 0; i < g->count; ++i) {
    if (g->items[i].device == k->device_type &&
        g->items[i].op_size == k->op_name_size &&
        memcmp(g->items[i].op, k->op_name, k->op_name_size) == 0) {
      return;
    }
  }
  if (!KC__GROW(g->items, g->cap, g->count + 1)) {
    g->oom = true;
    return;
  }
  g->items[g->count].op = k->op_name;
  g->items[g->count].op_size = k->op_name_size;
  g->items[g->count].device = k->device_type;
  g->count++;
}

/* Room for one more in r->moved and r->drop. */
static bool kc__renumber_room(kc__kernel_renumber* r, size_t* moved_cap,
                              size_t* drop_cap) {
  return KC__GROW(r->moved, *moved_cap, r->num_moved + 1) &&
         KC__GROW(r->drop, *drop_cap, r->num_drop + 1);
}

void kc__kernel_renumber_discard(kc__kernel_renumber* r) {
  for (size_t i = 0; i < r->num_moved; ++i) kc__entry_destroy(r->moved[i]);
  kc__free(r->moved);
  kc__free(r->drop);
  memset(r, 0, sizeof *r);
}

kc_status* kc__kernel_renumber_prepare_locked(kc__kernel_renumber* out) {
  memset(out, 0, sizeof *out);
  kc__groups g = {.items = NULL, .count = 0, .cap = 0, .oom = false};
  kc__registry_each_locked(&kc__kernel_registry, kc__note_group, &g);
  size_t moved_cap = 0, drop_cap = 0;
  bool oom = g.oom;
  for (size_t gi = 0; gi < g.count && !oom; ++gi) {
    kc_string_view op = {g.items[gi].op, g.items[gi].op_size};
    int kept = 0; /* the next dense number */
    for (int n = 0; n < KC__MAX_KERNELS_PER_DEVICE && !oom; ++n) {
      char key[KC__NAME_MAX + 1];
      kc__kernel_key(op, g.items[gi].device, n, key);
      bool hidden;
      kc__reg_entry* e =
          kc__registry_find_state_locked(&kc__kernel_registry, kc_sv(key), &hidden);
      if (!e) {
        /* n is the group's count: numbers kept..n-1 go. */
        for (int d = kept; d < n && !oom; ++d) {
          oom = !kc__renumber_room(out, &moved_cap, &drop_cap);
          if (!oom) kc__kernel_key(op, g.items[gi].device, d, out->drop[out->num_drop++]);
        }
        break;
      }
      if (hidden) continue;
      if (n != kept) {
        char to[KC__NAME_MAX + 1];
        kc__kernel_key(op, g.items[gi].device, kept, to);
        oom = !kc__renumber_room(out, &moved_cap, &drop_cap);
        kc__reg_entry* m = oom ? NULL : kc__entry_create(kc_sv(to), e->obj);
        if (!m) oom = true;
        else out->moved[out->num_moved++] = m;
      }
      kept++;
    }
  }
  kc__free(g.items);
  if (oom) {
    kc__kernel_renumber_discard(out);
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory renumbering the kernels that remain");
  }
  return NULL;
}

void kc__kernel_renumber_commit_locked(kc__kernel_renumber* r) {
  /* Each moved entry replaces the one at its number (no table grows). */
  for (size_t i = 0; i < r->num_moved; ++i) {
    bool ok = kc__registry_publish_locked(&kc__kernel_registry, r->moved[i]);
    (void)ok;
  }
  for (size_t i = 0; i < r->num_drop; ++i) {
    kc__registry_drop_named_locked(&kc__kernel_registry, kc_sv(r->drop[i]));
  }
  r->num_moved = 0;
  kc__kernel_renumber_discard(r);
}

/* ---- selection --------------------------------------------------------- */

static bool kc__kernel_matches(const kc__kernel* k, const kc__op_schema* def,
                               const kc_any* values) {
  for (int32_t i = 0; i < k->num_constraints; ++i) {
    int32_t a = kc__op_find_attr(def, kc_sv(k->constraints[i].attr));
    if (a < 0 || def->attrs[a].kind != KC__ATTR_TYPE) return false;
    const kc__type_set* set = &k->constraints[i].types;
    const kc_any* v = &values[a];
    if (!def->attrs[a].is_list) {
      if (!kc__type_set_has(set, v->u.v_dtype)) return false;
      continue;
    }
    const kc_array* list = (const kc_array*)(const void*)v->u.v_obj;
    for (size_t j = 0; j < kc_array_get_size(list); ++j) {
      if (!kc__type_set_has(set, kc_array_get_item(list, j)->u.v_dtype)) {
        return false;
      }
    }
  }
  return true;
}

/* The kernel registered as number n for (op, device type); NULL when the
 * number is free; sets *hidden when it is hidden. In a read section. */
static kc__kernel* kc__kernel_at(kc_string_view op, DLDeviceType t, int n,
                                 bool* hidden) {
  char key[KC__NAME_MAX + 1];
  *hidden = false;
  if (!kc__kernel_key(op, t, n, key)) return NULL;
  return (kc__kernel*)(void*)kc__registry_find_ex(&kc__kernel_registry,
                                                  kc_sv(key), hidden);
}

/* Calls fn for every kernel of `op`, device type by device type. In a read
 * section: fn must not run user code. */
static void kc__kernel_visit(kc_string_view op,
                             void (*fn)(void* ctx, const kc__kernel* k),
                             void* ctx) {
  for (int t = kDLCPU; t <= kDLMAIA; ++t) {
    for (int n = 0; n < KC__MAX_KERNELS_PER_DEVICE; ++n) {
      bool hidden;
      kc__kernel* k = kc__kernel_at(op, (DLDeviceType)t, n, &hidden);
      if (hidden) continue;
      if (!k) break;
      fn(ctx, k);
    }
  }
}

typedef struct kc__text {
  char buf[2048];
  size_t n;
  int count;
} kc__text;

static void kc__describe_into(void* ctx, const kc__kernel* k) {
  kc__text* t = ctx;
  char d[512];
  kc__kernel_describe(k, d, sizeof d);
  if (t->n < sizeof t->buf) {
    int w = snprintf(t->buf + t->n, sizeof t->buf - t->n, "%s%s",
                     t->count ? "; " : "", d);
    if (w > 0) t->n += (size_t)w;
  }
  t->count++;
}

/* Why no kernel of `def` serves (device_type, values): NOT_FOUND listing
 * the kernels there are. In a read section. */
static kc_status* kc__no_kernel(const kc__op_schema* def,
                                DLDeviceType device_type, const kc_any* values);

kc_status* kc__kernel_select(const kc__op_schema* def, DLDeviceType device_type,
                             const kc_any* values, kc__kernel** out_kernel) {
  kc_string_view op = {def->name, def->name_size};
  kc__kernel* best = NULL;
  kc__section r = kc__read_lock();
  for (int n = 0; n < KC__MAX_KERNELS_PER_DEVICE; ++n) {
    bool hidden;
    kc__kernel* k = kc__kernel_at(op, device_type, n, &hidden);
    if (KC__UNLIKELY(hidden) && r.outer) {
      /* An unload is deciding about this kernel (registry.h): wait for
       * its answer out of the section, then choose again. */
      kc__read_unlock(r);
      sched_yield();
      r = kc__read_lock();
      best = NULL;
      n = -1;
      continue;
    }
    if (hidden) continue;
    if (!k) break;
    if (kc__kernel_matches(k, def, values) &&
        (!best || k->priority > best->priority)) {
      best = k;
    }
  }
  /* Retained inside the section: the registry may drop its reference (an
   * unload) as soon as the section closes. */
  kc_status* st = NULL;
  if (best) {
    kc_object_retain(KC_OBJECT(best));
  } else {
    st = kc__no_kernel(def, device_type, values);
  }
  kc__read_unlock(r);
  *out_kernel = best;
  return st;
}

static kc_status* kc__no_kernel(const kc__op_schema* def,
                                DLDeviceType device_type,
                                const kc_any* values) {
  kc_string_view op = {def->name, def->name_size};
  /* Say what was asked for (device, type attrs) and what there is. */
  char wanted[1024];
  size_t w = kc__device_type_format(device_type, wanted, sizeof wanted);
  for (int32_t i = 0; i < def->num_attrs && w < sizeof wanted; ++i) {
    const kc__attr_def* a = &def->attrs[i];
    if (a->kind != KC__ATTR_TYPE) continue;
    char name[64];
    if (!a->is_list) {
      kc_dtype_format(values[i].u.v_dtype, name, sizeof name);
      int k = snprintf(wanted + w, sizeof wanted - w, ", %s=%s", a->name, name);
      if (k > 0) w += (size_t)k;
      continue;
    }
    const kc_array* list = (const kc_array*)(const void*)values[i].u.v_obj;
    int k = snprintf(wanted + w, sizeof wanted - w, ", %s=[", a->name);
    if (k > 0) w += (size_t)k;
    for (size_t j = 0; j < kc_array_get_size(list) && w < sizeof wanted; ++j) {
      kc_dtype_format(kc_array_get_item(list, j)->u.v_dtype, name, sizeof name);
      k = snprintf(wanted + w, sizeof wanted - w, "%s%s", j ? ", " : "", name);
      if (k > 0) w += (size_t)k;
    }
    if (w < sizeof wanted) {
      k = snprintf(wanted + w, sizeof wanted - w, "]");
      if (k > 0) w += (size_t)k;
    }
  }
  kc__text have = {.buf = {0}, .n = 0, .count = 0};
  kc__kernel_visit(op, kc__describe_into, &have);
  if (have.count == 0) {
    return kc_status_create(KC_NOT_FOUND,
                            "no kernel for %s: op %s has no kernels "
                            "registered",
                            wanted, KC__QS(def->name));
  }
  return kc_status_create(KC_NOT_FOUND,
                          "no kernel for %s; the kernels of op %s are: %s",
                          wanted, KC__QS(def->name), have.buf);
}

/* ---- listing ----------------------------------------------------------- */

typedef struct kc__kernel_list {
  kc__kernel** items; /* references */
  size_t count, cap;
  bool oom;
} kc__kernel_list;

static void kc__collect_kernel(void* ctx, const kc__kernel* k) {
  kc__kernel_list* l = ctx;
  if (l->oom) return;
  if (!KC__GROW(l->items, l->cap, l->count + 1)) {
    l->oom = true;
    return;
  }
  kc_object_retain(KC_OBJECT(k));
  l->items[l->count++] = (kc__kernel*)(uintptr_t)k;
}

kc_status* kc_kernel_registry_list(const kc_allocator* alloc,
                                   kc_string_view op_name,
                                   kc_array** out_descriptions) {
  if (!out_descriptions) {
    return kc__kb_misuse("kc_kernel_registry_list", "out_descriptions");
  }
  *out_descriptions = NULL;
  /* Kernels are retained in the read section and described outside it,
   * where the caller's allocator may run. */
  kc__kernel_list l = {.items = NULL, .count = 0, .cap = 0, .oom = false};
  kc__section r = kc__read_lock();
  kc__kernel_visit(op_name, kc__collect_kernel, &l);
  kc__read_unlock(r);
  kc_status* st = l.oom ? kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory")
                        : NULL;
  kc_any* items = st ? NULL : kc__calloc(l.count + 1, sizeof *items);
  if (!st && !items) st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  size_t made = 0;
  for (; !st && made < l.count; ++made) {
    char d[1024];
    size_t n = kc__kernel_describe(l.items[made], d, sizeof d);
    kc_string_view v = {d, n < sizeof d ? n : sizeof d - 1};
    st = kc_any_from_string(alloc, v, &items[made]);
    if (st) break;
  }
  if (!st) st = kc_array_create(alloc, items, l.count, out_descriptions);
  for (size_t i = 0; i < made; ++i) kc_any_release(&items[i]);
  kc__free(items);
  for (size_t i = 0; i < l.count; ++i) kc_object_release(KC_OBJECT(l.items[i]));
  kc__free(l.items);
  return st;
}
