/* Immutable arrays of values. */
#include "internal/object.h"

static void kc__array_delete(kc_object* obj) {
  kc_array* a = (kc_array*)(void*)obj;
  for (size_t i = 0; i < a->size; ++i) kc_any_release(&a->items[i]);
  kc_allocator_free(a->alloc, a, sizeof *a + a->size * sizeof(kc_any), 0);
}

kc_status* kc_array_create(const kc_allocator* alloc, const kc_any* items,
                           size_t count, kc_array** out_array) {
  if (!out_array) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_array_create: out_array is NULL");
  }
  *out_array = NULL;
  if (!items && count) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_array_create: NULL items with count %zu",
                            count);
  }
  for (size_t i = 0; i < count; ++i) {
    int32_t t = items[i].type_index;
    if (t == KC_TYPE_RAW_STR || t == KC_TYPE_DLTENSOR_PTR) {
      return kc_status_create(
          KC_INVALID_ARGUMENT,
          "kc_array_create: item %zu: expected an owned value, got a "
          "borrowed %s (make a str or tensor object)",
          i, kc_type_name(t));
    }
  }
  if (count > (SIZE_MAX - sizeof(kc_array)) / sizeof(kc_any)) {
    return kc_status_create(KC_OUT_OF_RANGE,
                            "kc_array_create: %zu items is too many", count);
  }
  if (!alloc) alloc = kc_allocator_system();
  kc_array* a = kc_allocator_alloc(alloc, sizeof *a + count * sizeof(kc_any), 0);
  if (!a) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory creating an array of %zu items",
                            count);
  }
  kc__object_init(&a->header, KC_TYPE_ARRAY, kc__array_delete);
  a->alloc = alloc;
  a->size = count;
  for (size_t i = 0; i < count; ++i) {
    a->items[i] = items[i];
    kc_any_retain(&a->items[i]);
  }
  *out_array = a;
  return NULL;
}

size_t kc_array_get_size(const kc_array* array) {
  return array ? array->size : 0;
}

const kc_any* kc_array_get_item(const kc_array* array, size_t index) {
  if (!array || index >= array->size) return NULL;
  return &array->items[index];
}
