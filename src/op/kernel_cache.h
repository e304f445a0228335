/*
 * The kernel cache's lookup, shared by call.c and kernel_cache.c: a call's
 * key, and the hit path, inline because every call runs it. A miss, and
 * everything else about the cache, is kernel_cache.c.
 */
#ifndef KCALL_OP_KERNEL_CACHE_H_
#define KCALL_OP_KERNEL_CACHE_H_

#include <stdlib.h>

#include "op/call_internal.h"

/* A call's key: its device and its attribute values (which include every
 * dtype a kernel can depend on), as words; on the stack unless long. */
#define KC__KEY_STACK 48

typedef struct kc__key {
  uint64_t* words;
  size_t n, cap;
  bool oom;
  uint64_t stack[KC__KEY_STACK];
} kc__key;

/* Appends a word, or a value's words, growing off the stack when needed
 * (oom set when that fails). The append is inline (every call's key is a
 * few words); growing is kc__key_grow, out of line. */
void kc__key_grow(kc__key* k, uint64_t w);
static inline void kc__key_put(kc__key* k, uint64_t w) {
  if (KC__UNLIKELY(k->n == k->cap)) {
    kc__key_grow(k, w);
    return;
  }
  k->words[k->n++] = w;
}
void kc__key_value(kc__key* k, const kc_any* v);

static inline void kc__key_build(kc__key* k, const kc__resolved_call* f) {
  k->words = k->stack;
  k->n = 0;
  k->cap = KC__KEY_STACK;
  k->oom = false;
  kc__key_put(
      k, (uint64_t)f->device.device_type << 32 | (uint32_t)f->device.device_id);
  for (int32_t i = 0; i < f->def->num_attrs; ++i) {
    kc__key_value(k, &f->values[i]);
  }
}

static inline void kc__key_free(kc__key* k) {
  if (k->words != k->stack) kc__free(k->words);
}

/* Each word mixed on its own (the multiplications do not wait for one
 * another, as a chained hash's would) and the sum mixed once more. */
static inline uint64_t kc__key_hash(const kc__key* k) {
  uint64_t h = 0x243f6a8885a308d3ull ^ k->n;
  for (size_t i = 0; i < k->n; ++i) {
    uint64_t w = (k->words[i] ^ (i * 0x632be59bd9b4e019ull)) *
                 0x9e3779b97f4a7c15ull;
    h += w ^ (w >> 31);
  }
  h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

/* The slot of table t that holds the key, or the empty slot it would go
 * in. Inline, the key compared word by word: keys are a few words, too
 * short for a call of memcmp to pay. */
static inline kc__cache_entry** kc__cache_probe(kc__cache_table* t,
                                                uint64_t h, const kc__key* k) {
  for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
    kc__cache_entry* e = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
    if (!e) return &t->slots[i];
    if (e->hash != h || e->key_words != k->n) continue;
    size_t w = 0;
    while (w < k->n && e->key[w] == k->words[w]) ++w;
    if (w == k->n) return &t->slots[i];
  }
}

static inline kc__cache_entry* kc__cache_find(kc__op_cache* c, uint64_t h,
                                              const kc__key* k) {
  kc__cache_table* t = __atomic_load_n(&c->table, __ATOMIC_ACQUIRE);
  if (!t) return NULL;
  return __atomic_load_n(kc__cache_probe(t, h, k), __ATOMIC_ACQUIRE);
}

/* A miss of kc__cache_get: `e`, when given, is an entry of the key made
 * before kernels were registered. Re-selects, or constructs a new entry
 * and publishes it. */
kc_status* kc__cache_miss(const kc_op* op, const kc__resolved_call* f,
                          const kc__key* k, uint64_t h, uint64_t gen,
                          kc__cache_entry* e, kc__cache_entry** out);

/* The cache entry for a resolved call of op: cached, re-checked after new
 * registrations, or selected and constructed now. Borrowed: it lives as
 * long as the op. */
static inline kc_status* kc__cache_get(const kc_op* op,
                                       const kc__resolved_call* f,
                                       kc__cache_entry** out) {
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  kc__key k;
  kc__key_build(&k, f);
  if (k.oom) {
    kc__key_free(&k);
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  uint64_t h = kc__key_hash(&k);
  uint64_t gen = kc__kernel_generation();
  kc__cache_entry* e = kc__cache_find(c, h, &k);
  kc_status* st = NULL;
  if (KC__LIKELY(e &&
                 __atomic_load_n(&e->generation, __ATOMIC_ACQUIRE) == gen)) {
    *out = e;
  } else {
    st = kc__cache_miss(op, f, &k, h, gen, e, out);
  }
  kc__key_free(&k);
  return st;
}

/* ---- memos of resolved calls ------------------------------------------ */

/* The memo slot for calls with n inputs, the first of dtype t. */
static inline size_t kc__memo_slot(int32_t n, DLDataType t) {
  uint32_t w = ((uint32_t)t.code | (uint32_t)t.bits << 8 |
                (uint32_t)t.lanes << 16) * 0x9e3779b1u +
               (uint32_t)n * 0x85ebca6bu;
  return (size_t)(w >> 28) % KC__CALL_MEMO_SLOTS;
}

/* The memo of a call given no attrs whose inputs (checked by
 * kc__check_call) match it in count, dtype and device, are valid, and
 * whose kernel is still the one to use; NULL otherwise. Borrowed: it
 * lives as long as the op's cache. */
static inline const kc__call_memo* kc__memo_find(const kc_op* op,
                                                 const DLTensor* const* inputs,
                                                 int32_t n) {
  DLDataType first = {0, 0, 0};
  if (n > 0 && inputs[0]) first = inputs[0]->dtype;
  const kc__call_memo* m = __atomic_load_n(
      &op->cache.memos[kc__memo_slot(n, first)], __ATOMIC_ACQUIRE);
  if (!m || m->call.num_inputs != n) return NULL;
  DLDevice dev = m->call.device;
  for (int32_t i = 0; i < n; ++i) {
    const DLTensor* t = inputs[i];
    if (!t || !kc_dtype_equal(t->dtype, m->call.input_dtypes[i]) ||
        t->device.device_type != dev.device_type ||
        t->device.device_id != dev.device_id || !kc__input_tensor_ok(t)) {
      return NULL;
    }
  }
  if (__atomic_load_n(&m->entry->generation, __ATOMIC_ACQUIRE) !=
      kc__kernel_generation()) {
    return NULL;
  }
  return m;
}

/* Remembers `f` (resolved from no attrs, all inputs on one device) and its
 * cache entry, unless the op has made KC__CALL_MEMO_MAX memos already.
 * Out of memory, it remembers nothing. */
void kc__memo_publish(const kc_op* op, const kc__resolved_call* f,
                      kc__cache_entry* e);

#endif /* KCALL_OP_KERNEL_CACHE_H_ */
