#include "internal/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "internal/registry.h"

static kc__strmap_slot* kc__strmap_find(const kc__strmap* m, kc_string_view key,
                                        uint64_t h) {
  for (size_t i = (size_t)h & m->mask;; i = (i + 1) & m->mask) {
    kc__strmap_slot* s = &m->slots[i];
    if (!s->used) return s;
    if (s->hash == h && s->key.size == key.size &&
        memcmp(s->key.data, key.data, key.size) == 0) {
      return s;
    }
  }
}

int32_t kc__strmap_get(const kc__strmap* m, kc_string_view key) {
  if (!m->slots) return -1;
  kc__strmap_slot* s = kc__strmap_find(m, key, kc__hash_name(key));
  return s->used ? s->value : -1;
}

static bool kc__strmap_grow(kc__strmap* m) {
  size_t cap = m->slots ? (m->mask + 1) * 2 : 64;
  kc__strmap_slot* slots = kc__calloc(cap, sizeof *slots);
  if (!slots) return false;
  kc__strmap old = *m;
  m->slots = slots;
  m->mask = cap - 1;
  for (size_t i = 0; old.slots && i <= old.mask; ++i) {
    if (old.slots[i].used) *kc__strmap_find(m, old.slots[i].key, old.slots[i].hash) = old.slots[i];
  }
  kc__free(old.slots);
  return true;
}

bool kc__strmap_put(kc__strmap* m, kc_string_view key, int32_t value) {
  if ((!m->slots || (m->count + 1) * 2 > m->mask + 1) && !kc__strmap_grow(m)) {
    return false;
  }
  uint64_t h = kc__hash_name(key);
  kc__strmap_slot* s = kc__strmap_find(m, key, h);
  if (!s->used) {
    s->used = true;
    s->key = key;
    s->hash = h;
    m->count++;
  }
  s->value = value;
  return true;
}

void kc__strmap_free(kc__strmap* m) {
  kc__free(m->slots);
  m->slots = NULL;
  m->mask = m->count = 0;
}
