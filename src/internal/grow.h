/* Growable arrays: the one way the library grows an array in place.
 * Never installed.
 *
 *   kc__instr* items = NULL; size_t count = 0, cap = 0;
 *   if (!KC__GROW(items, cap, count + 1)) return kc__status_oom();
 *   items[count++] = next;
 *
 * Capacity doubles (from 8), so appending n elements one at a time costs
 * O(n) copies; new capacity is zero-filled, so an element is zero until
 * written. The array is freed with kc__free(). */
#ifndef KCALL_INTERNAL_GROW_H_
#define KCALL_INTERNAL_GROW_H_

#include <stdbool.h>
#include <stddef.h>

/* Makes the array whose pointer is at `items_ptr` (a T**, passed as
 * void*) hold at least `need` elements of `elem_size` bytes, where *cap
 * counts those it holds now. False, with the array and *cap unchanged,
 * when out of memory or the byte size overflows. */
bool kc__grow_array(void* items_ptr, size_t* cap, size_t need, size_t elem_size);

/* kc__grow_array for a typed pointer lvalue `items` and a size_t lvalue
 * `cap`: KC__GROW(list->items, list->cap, list->count + 1). */
#define KC__GROW(items, cap, need) \
  kc__grow_array(&(items), &(cap), (need), sizeof *(items))

/* A growable run of bytes (for values of several types packed one after
 * another): grows as KC__GROW does, from the system allocator. */
typedef struct kc__buf {
  unsigned char* data;
  size_t size;
  size_t cap;
} kc__buf;

/* Appends `n` bytes (data may be NULL to append zeroes). False when out
 * of memory. */
bool kc__buf_append(kc__buf* b, const void* data, size_t n);
/* Makes `b`, which holds one element of `width` bytes, hold `count` copies
 * of it (none for 0). False when out of memory or the size overflows. */
bool kc__buf_repeat(kc__buf* b, size_t width, size_t count);
void kc__buf_free(kc__buf* b);

#endif /* KCALL_INTERNAL_GROW_H_ */
