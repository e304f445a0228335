/* Growable arrays and byte runs (grow.h). */
#include "internal/common.h"
#include "internal/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool kc__grow_array(void* items_ptr, size_t* cap, size_t need, size_t elem_size) {
  if (need <= *cap) return true;
  size_t n = *cap ? *cap : 8;
  while (n < need) {
    if (n > SIZE_MAX / 2) {
      n = need;
      break;
    }
    n *= 2;
  }
  if (elem_size && n > SIZE_MAX / elem_size) return false;
  /* The pointer is read and written as bytes: items_ptr is a T**, and
   * every object pointer has void*'s representation on the platforms the
   * library builds for. */
  void* items;
  memcpy(&items, items_ptr, sizeof items);
  char* grown = kc__realloc(items, n * elem_size);
  if (!grown) return false;
  memset(grown + *cap * elem_size, 0, (n - *cap) * elem_size);
  memcpy(items_ptr, &grown, sizeof grown);
  *cap = n;
  return true;
}

bool kc__buf_append(kc__buf* b, const void* data, size_t n) {
  if (n > SIZE_MAX - b->size) return false;
  if (!KC__GROW(b->data, b->cap, b->size + n)) return false;
  if (data) {
    memcpy(b->data + b->size, data, n);
  } else if (n) {
    memset(b->data + b->size, 0, n);
  }
  b->size += n;
  return true;
}

bool kc__buf_repeat(kc__buf* b, size_t width, size_t count) {
  if (b->size != width) return false;
  if (count == 0) {
    b->size = 0;
    return true;
  }
  if (width > SIZE_MAX / count) return false;
  size_t total = width * count;
  /* Grown once, then filled by doubling: copies never read memory the
   * growth may have moved. */
  if (!kc__buf_append(b, NULL, total - width)) return false;
  for (size_t have = width; have < total;) {
    size_t n = have < total - have ? have : total - have;
    memcpy(b->data + have, b->data, n);
    have += n;
  }
  return true;
}

void kc__buf_free(kc__buf* b) {
  kc__free(b->data);
  b->data = NULL;
  b->size = b->cap = 0;
}
