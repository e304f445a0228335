/* A string -> int32 map (open addressing) for building programs. The keys
 * are borrowed and must outlive the map. Not thread-safe. */
#ifndef KCALL_INTERNAL_STRMAP_H_
#define KCALL_INTERNAL_STRMAP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcall/abi.h"

typedef struct kc__strmap_slot {
  kc_string_view key;
  uint64_t hash;
  int32_t value;
  bool used;
} kc__strmap_slot;

typedef struct kc__strmap {
  kc__strmap_slot* slots;
  size_t mask;
  size_t count;
} kc__strmap;

/* The value stored under key, or -1. */
int32_t kc__strmap_get(const kc__strmap* m, kc_string_view key);

/* Stores key -> value (replacing). False when out of memory. */
bool kc__strmap_put(kc__strmap* m, kc_string_view key, int32_t value);

void kc__strmap_free(kc__strmap* m);

#endif /* KCALL_INTERNAL_STRMAP_H_ */
