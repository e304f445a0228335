/* The internal growable array (src/internal/grow.h), compiled into the
 * runner since libkcall does not export it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal/grow.h"
#include "test.h"

KC_TEST(grow_appends_one_at_a_time_and_zero_fills) {
  int64_t* items = NULL;
  size_t count = 0, cap = 0, reallocs = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    size_t before = cap;
    KC_CHECK(KC__GROW(items, cap, count + 1));
    if (cap != before) {
      ++reallocs;
      /* What grew is zero until written. */
      for (size_t k = count; k < cap; ++k) KC_CHECK_INT(items[k], 0);
    }
    items[count++] = i * 3;
  }
  for (size_t i = 0; i < count; ++i) KC_CHECK_INT(items[i], (int64_t)i * 3);
  /* Geometric growth: 8, 16, ..., 1024. */
  KC_CHECK_INT(reallocs, 8);
  KC_CHECK_INT(cap, 1024);
  KC_CHECK(KC__GROW(items, cap, 10)); /* already held: nothing moves */
  KC_CHECK_INT(cap, 1024);
  free(items);
}

KC_TEST(grow_refuses_an_overflowing_size_and_keeps_the_array) {
  int64_t* items = NULL;
  size_t cap = 0;
  KC_CHECK(KC__GROW(items, cap, 3));
  items[2] = 7;
  int64_t* before = items;
  KC_CHECK(!KC__GROW(items, cap, SIZE_MAX / 4));
  KC_CHECK(items == before);
  KC_CHECK_INT(cap, 8);
  KC_CHECK_INT(items[2], 7);
  free(items);
}

KC_TEST(grow_byte_runs_append_and_repeat) {
  kc__buf b = {0};
  const int32_t v = 0x01020304;
  KC_CHECK(kc__buf_append(&b, &v, sizeof v));
  KC_CHECK(kc__buf_repeat(&b, sizeof v, 1000));
  KC_CHECK_INT(b.size, 4000);
  for (size_t i = 0; i < 1000; ++i) {
    int32_t got;
    memcpy(&got, b.data + 4 * i, sizeof got);
    KC_CHECK_INT(got, v);
  }
  KC_CHECK(kc__buf_append(&b, NULL, 3)); /* zeroes */
  KC_CHECK_INT(b.size, 4003);
  KC_CHECK_INT(b.data[4002], 0);
  KC_CHECK(!kc__buf_repeat(&b, 4, 2)); /* holds more than one element */
  KC_CHECK(!kc__buf_append(&b, NULL, SIZE_MAX));
  KC_CHECK_INT(b.size, 4003);
  kc__buf_free(&b);
  KC_CHECK(b.data == NULL);
}
