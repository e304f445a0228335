/* Growable arrays (grow.h). */
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
  char* grown = realloc(items, n * elem_size);
  if (!grown) return false;
  memset(grown + *cap * elem_size, 0, (n - *cap) * elem_size);
  memcpy(items_ptr, &grown, sizeof grown);
  *cap = n;
  return true;
}
