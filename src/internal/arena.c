#include "internal/common.h"
#include "internal/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct kc__arena_chunk {
  kc__arena_chunk* next;
  size_t pad; /* keeps data 16-byte aligned */
  unsigned char data[];
};

#define KC__ARENA_CHUNK 8192

void* kc__arena_alloc(kc__arena* a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  if (!a->head || a->cap - a->used < size) {
    size_t cap = size > KC__ARENA_CHUNK ? size : KC__ARENA_CHUNK;
    if (cap > SIZE_MAX - sizeof(kc__arena_chunk)) return NULL;
    kc__arena_chunk* c = kc__malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = a->head;
    a->head = c;
    a->used = 0;
    a->cap = cap;
  }
  void* p = a->head->data + a->used;
  a->used += size;
  memset(p, 0, size);
  return p;
}

void* kc__arena_dup(kc__arena* a, const void* data, size_t size) {
  void* p = kc__arena_alloc(a, size);
  if (p && size) memcpy(p, data, size);
  return p;
}

char* kc__arena_strdup(kc__arena* a, kc_string_view s) {
  char* p = kc__arena_alloc(a, s.size + 1);
  if (p && s.size) memcpy(p, s.data, s.size);
  return p;
}

void kc__arena_free(kc__arena* a) {
  while (a->head) {
    kc__arena_chunk* next = a->head->next;
    kc__free(a->head);
    a->head = next;
  }
  a->used = a->cap = 0;
}
