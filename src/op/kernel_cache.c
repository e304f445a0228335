/*
 * The per-op kernel cache. A resolved call's key (device and attribute
 * values, which include every dtype a kernel can depend on) is looked up
 * in the op's cache (kernel_cache.h): a hit is a hash, a probe and a
 * generation check; a miss selects and constructs the kernel and
 * publishes a new entry.
 *
 * The cache is a hash table with the registry's discipline: lock-free
 * readers, writers under the op's mutex, nothing a reader may hold freed
 * before the op itself goes.
 */
#include <stdlib.h>

#include "op/kernel_cache.h"

/* ---- the key ----------------------------------------------------------- */

void kc__key_grow(kc__key* k, uint64_t w) {
  size_t cap = k->cap * 2;
  uint64_t* grown = kc__malloc(cap * sizeof *grown);
  if (!grown) {
    k->oom = true;
    return;
  }
  memcpy(grown, k->words, k->n * sizeof *grown);
  if (k->words != k->stack) kc__free(k->words);
  k->words = grown;
  k->cap = cap;
  k->words[k->n++] = w;
}

void kc__key_value(kc__key* k, const kc_any* v) {
  /* The kinds every call has (dtypes, numbers) first, without the string
   * test. */
  if (KC__LIKELY(v->type_index == KC_TYPE_DTYPE)) {
    DLDataType t = v->u.v_dtype;
    kc__key_put(k, (uint64_t)(uint32_t)v->type_index);
    kc__key_put(
        k, (uint64_t)t.code | (uint64_t)t.bits << 8 | (uint64_t)t.lanes << 16);
    return;
  }
  kc_string_view s;
  if (kc_any_get_string(v, &s)) {
    kc__key_put(k, KC_TYPE_STR);
    kc__key_put(k, s.size);
    for (size_t i = 0; i < s.size; i += 8) {
      uint64_t w = 0;
      memcpy(&w, s.data + i, s.size - i < 8 ? s.size - i : 8);
      kc__key_put(k, w);
    }
    return;
  }
  kc__key_put(k, (uint64_t)(uint32_t)v->type_index);
  if (v->type_index == KC_TYPE_ARRAY) {
    const kc_array* a = (const kc_array*)(const void*)v->u.v_obj;
    size_t n = kc_array_get_size(a);
    kc__key_put(k, n);
    for (size_t i = 0; i < n; ++i) kc__key_value(k, kc_array_get_item(a, i));
    return;
  }
  if (v->type_index == KC_TYPE_DTYPE) {
    DLDataType t = v->u.v_dtype;
    kc__key_put(
        k, (uint64_t)t.code | (uint64_t)t.bits << 8 | (uint64_t)t.lanes << 16);
    return;
  }
  uint64_t w;
  memcpy(&w, &v->u, sizeof w); /* int, bool, float bits */
  kc__key_put(k, w);
}

/* ---- the cache --------------------------------------------------------- */

void kc__op_cache_init(kc__op_cache* c) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->mu, NULL);
}

static void kc__cache_entry_free(kc__cache_entry* e) {
  if (e->kernel && e->kernel->delete_fn && e->instance) {
    e->kernel->delete_fn(e->instance);
  }
  kc_object_release(KC_OBJECT(e->kernel));
  for (int32_t i = 0; i < e->num_values; ++i) kc_any_release(&e->values[i]);
  kc__free(e->values);
  kc__free(e->key);
  kc__free(e);
}

static void kc__memo_free(kc__call_memo* m) {
  kc__resolved_call_release(&m->call);
  kc__free(m);
}

void kc__memo_publish(const kc_op* op, const kc__resolved_call* f,
                      kc__cache_entry* e) {
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  if (__atomic_load_n(&c->memos_made, __ATOMIC_RELAXED) >= KC__CALL_MEMO_MAX) {
    return;
  }
  kc__call_memo* m = kc__malloc(sizeof *m);
  if (!m) return;
  m->entry = e;
  m->call = *f;
  for (int32_t i = 0; m->call.owned && i < f->def->num_attrs; ++i) {
    if (m->call.owned >> i & 1u) kc_any_retain(&m->call.values[i]);
  }
  DLDataType first = f->num_inputs ? f->input_dtypes[0] : (DLDataType){0};
  kc__call_memo** slot = &c->memos[kc__memo_slot(f->num_inputs, first)];
  pthread_mutex_lock(&c->mu);
  if (c->memos_made >= KC__CALL_MEMO_MAX) {
    pthread_mutex_unlock(&c->mu);
    kc__memo_free(m);
    return;
  }
  kc__call_memo* old = *slot;
  __atomic_store_n(slot, m, __ATOMIC_RELEASE);
  if (old) {
    old->retired_next = c->retired_memos;
    c->retired_memos = old;
  }
  __atomic_store_n(&c->memos_made, c->memos_made + 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&c->mu);
}

void kc__op_cache_clear(kc__op_cache* c) {
  for (int32_t i = 0; i < KC__CALL_MEMO_SLOTS; ++i) {
    if (c->memos[i]) kc__memo_free(c->memos[i]);
    c->memos[i] = NULL;
  }
  while (c->retired_memos) {
    kc__call_memo* next = c->retired_memos->retired_next;
    kc__memo_free(c->retired_memos);
    c->retired_memos = next;
  }
  c->memos_made = 0;
  kc__cache_table* t = c->table;
  c->table = NULL;
  for (size_t i = 0; t && i <= t->mask; ++i) {
    if (t->slots[i]) kc__cache_entry_free(t->slots[i]);
  }
  kc__free(t);
  while (c->retired_entries) {
    kc__cache_entry* next = c->retired_entries->retired_next;
    kc__cache_entry_free(c->retired_entries);
    c->retired_entries = next;
  }
  while (c->retired_tables) {
    kc__cache_table* next = c->retired_tables->retired_next;
    kc__free(c->retired_tables);
    c->retired_tables = next;
  }
  c->entries = 0;
}

void kc__op_cache_deinit(kc__op_cache* c) {
  kc__op_cache_clear(c);
  pthread_mutex_destroy(&c->mu);
}

void kc__op_cache_each_kernel(const kc_op* op,
                              void (*fn)(void* ctx, const kc__kernel* k),
                              void* ctx) {
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  pthread_mutex_lock(&c->mu);
  kc__cache_table* t = c->table;
  for (size_t i = 0; t && i <= t->mask; ++i) {
    if (t->slots[i] && t->slots[i]->kernel) fn(ctx, t->slots[i]->kernel);
  }
  for (kc__cache_entry* e = c->retired_entries; e; e = e->retired_next) {
    if (e->kernel) fn(ctx, e->kernel);
  }
  pthread_mutex_unlock(&c->mu);
}

/* With mu held: a table with room for one more entry. */
static bool kc__cache_reserve(kc__op_cache* c) {
  kc__cache_table* old = c->table;
  if (old && (old->used + 1) * 2 <= old->mask + 1) return true;
  size_t cap = old ? (old->mask + 1) * 2 : 8;
  kc__cache_table* t = kc__calloc(1, sizeof *t + cap * sizeof(kc__cache_entry*));
  if (!t) return false;
  t->mask = cap - 1;
  for (size_t i = 0; old && i <= old->mask; ++i) {
    kc__cache_entry* e = old->slots[i];
    if (!e) continue;
    size_t j = (size_t)e->hash & t->mask;
    while (t->slots[j]) j = (j + 1) & t->mask;
    t->slots[j] = e;
  }
  t->used = old ? old->used : 0;
  if (old) {
    old->retired_next = c->retired_tables;
    c->retired_tables = old;
  }
  __atomic_store_n(&c->table, t, __ATOMIC_RELEASE);
  return true;
}

/* A string that only borrows becomes an owned copy; objects are retained. */
static kc_status* kc__own_value(const kc_any* in, kc_any* out) {
  if (in->type_index == KC_TYPE_RAW_STR) {
    return kc_any_from_string(NULL, kc_sv(in->u.v_c_str), out);
  }
  *out = *in;
  kc_any_retain(out);
  return NULL;
}

/* Marks in `e` the args of def that the kernel keeps in host memory (the
 * first 64 inputs and outputs). */
static void kc__note_host_memory(kc__cache_entry* e, const kc__kernel* kernel,
                                 const kc__op_schema* def) {
  for (int32_t h = 0; h < kernel->num_host_memory; ++h) {
    for (int32_t a = 0; a < def->num_inputs && a < 64; ++a) {
      if (strcmp(kernel->host_memory[h], def->inputs[a].name) == 0) {
        e->host_memory_inputs |= UINT64_C(1) << a;
      }
    }
    for (int32_t a = 0; a < def->num_outputs && a < 64; ++a) {
      if (strcmp(kernel->host_memory[h], def->outputs[a].name) == 0) {
        e->host_memory_outputs |= UINT64_C(1) << a;
      }
    }
  }
}

/* Selects and constructs a kernel for the call and makes an entry for it
 * (not yet published). */
static kc_status* kc__cache_entry_create(const kc_op* op,
                                         const kc__resolved_call* f,
                                         const kc__key* k, uint64_t hash,
                                         uint64_t generation,
                                         kc__cache_entry** out) {
  const kc__op_schema* def = f->def;
  kc__kernel* kernel = NULL;
  KC_RETURN_IF_ERROR(kc__kernel_select(def, f->device.device_type, f->values, &kernel));
  kc__cache_entry* e = kc__calloc(1, sizeof *e);
  if (!e) {
    kc_object_release(KC_OBJECT(kernel));
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  /* The entry keeps its own copy of the key and of the attribute values. */
  e->kernel = kernel; /* the selection's reference */
  e->hash = hash;
  e->generation = generation;
  e->device = f->device;
  e->key_words = k->n;
  e->key = kc__malloc(k->n * sizeof *e->key);
  e->values = kc__calloc((size_t)def->num_attrs + 1, sizeof *e->values);
  kc_status* st = NULL;
  if (!e->key || !e->values) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    memcpy(e->key, k->words, k->n * sizeof *e->key);
  }
  for (int32_t i = 0; !st && i < def->num_attrs; ++i) {
    st = kc__own_value(&f->values[i], &e->values[i]);
    if (!st) e->num_values = i + 1;
  }
  kc__note_host_memory(e, kernel, def);
  /* The kernel's instance, constructed for this key. */
  if (!st && kernel->create) {
    kc_op_attrs attrs = {.def = def, .values = e->values};
    kc_kernel_construct_ctx cctx = {
        .def = def,
        .attrs = &attrs,
        .device = f->device,
        .num_inputs = f->num_inputs,
        .num_outputs = f->num_outputs,
        .input_dtypes = f->input_dtypes,
        .output_dtypes = f->output_dtypes,
        .data = kernel->data,
    };
    st = kernel->create(&cctx, &e->instance);
    if (st) e->instance = NULL;
    if (st) {
      char dev[64];
      kc__device_type_format(f->device.device_type, dev, sizeof dev);
      st = kc_status_add_context(st, "constructing the %s kernel", dev);
    }
  }
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  __atomic_add_fetch(&c->constructions, 1, __ATOMIC_RELAXED);
  if (st) {
    kc__cache_entry_free(e);
    return st;
  }
  *out = e;
  return NULL;
}

/* Publishes `e` (replacing `stale`, an entry of the same key, when given)
 * unless another thread published one first, in which case `e` is freed
 * and theirs returned. */
static kc__cache_entry* kc__cache_publish(kc__op_cache* c, kc__cache_entry* e,
                                          const kc__key* k,
                                          kc__cache_entry* stale,
                                          kc_status** out_status) {
  pthread_mutex_lock(&c->mu);
  kc__cache_entry* result = e;
  if (!kc__cache_reserve(c)) {
    *out_status = kc_status_create(KC_RESOURCE_EXHAUSTED,
                                   "out of memory caching a kernel");
    result = NULL;
  } else {
    kc__cache_entry** slot = kc__cache_probe(c->table, e->hash, k);
    kc__cache_entry* present = *slot;
    if (present && present != stale) {
      result = present; /* another thread got there first */
    } else {
      __atomic_store_n(slot, e, __ATOMIC_RELEASE);
      if (present) {
        present->retired_next = c->retired_entries;
        c->retired_entries = present;
      } else {
        c->table->used++;
        c->entries++;
      }
    }
  }
  pthread_mutex_unlock(&c->mu);
  if (result != e) kc__cache_entry_free(e);
  return result;
}

kc_status* kc__cache_miss(const kc_op* op, const kc__resolved_call* f,
                          const kc__key* k, uint64_t h, uint64_t gen,
                          kc__cache_entry* e, kc__cache_entry** out) {
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  kc_status* st = NULL;
  if (e) {
    /* Kernels were registered since: is this still the one to use? */
    __atomic_add_fetch(&c->reselections, 1, __ATOMIC_RELAXED);
    kc__kernel* kernel = NULL;
    st = kc__kernel_select(f->def, f->device.device_type, f->values, &kernel);
    bool same = !st && kernel == e->kernel;
    kc_object_release(KC_OBJECT(kernel)); /* e holds its own */
    if (same) {
      __atomic_store_n(&e->generation, gen, __ATOMIC_RELEASE);
      *out = e;
      return NULL;
    }
  }
  kc__cache_entry* fresh = NULL;
  if (!st) st = kc__cache_entry_create(op, f, k, h, gen, &fresh);
  if (!st) *out = kc__cache_publish(c, fresh, k, e, &st);
  return st;
}

void kc_op_query_cache(const kc_op* op, kc_op_cache_stats* out) {
  if (!op || !out) return;
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  kc_op_cache_stats s;
  s.struct_size = out->struct_size;
  pthread_mutex_lock(&c->mu);
  s.entries = c->entries;
  pthread_mutex_unlock(&c->mu);
  s.constructions = __atomic_load_n(&c->constructions, __ATOMIC_RELAXED);
  s.reselections = __atomic_load_n(&c->reselections, __ATOMIC_RELAXED);
  memcpy(out, &s, out->struct_size < sizeof s ? out->struct_size : sizeof s);
}
