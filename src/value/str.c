/* String and bytes objects. */
#include "internal/object.h"

static void kc__str_delete(kc_object* obj) {
  kc_str* s = (kc_str*)(void*)obj;
  kc_allocator_free(s->alloc, s, sizeof *s + s->size + 1, 0);
}

static kc_status* kc__str_make(const kc_allocator* alloc, int32_t type_index,
                               const void* data, size_t size, kc_str** out) {
  const char* what = type_index == KC_TYPE_STR ? "str" : "bytes";
  if (!out) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_%s_create: out is NULL",
                            what);
  }
  *out = NULL;
  if (!data && size) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_%s_create: NULL data with size %zu", what,
                            size);
  }
  if (size > SIZE_MAX - sizeof(kc_str) - 1) {
    return kc_status_create(KC_OUT_OF_RANGE, "kc_%s_create: size %zu too large",
                            what, size);
  }
  if (!alloc) alloc = kc_allocator_system();
  kc_str* s = kc_allocator_alloc(alloc, sizeof *s + size + 1, 0);
  if (!s) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory creating a %s of %zu bytes", what,
                            size);
  }
  kc__object_init(&s->header, type_index, kc__str_delete);
  s->alloc = alloc;
  s->size = size;
  if (size) memcpy(s->data, data, size);
  s->data[size] = '\0';
  *out = s;
  return NULL;
}

kc_status* kc_str_create(const kc_allocator* alloc, kc_string_view s,
                         kc_str** out_str) {
  return kc__str_make(alloc, KC_TYPE_STR, s.data, s.size, out_str);
}

kc_string_view kc_str_get_view(const kc_str* str) {
  kc_string_view v = {"", 0};
  if (str) {
    v.data = str->data;
    v.size = str->size;
  }
  return v;
}

kc_status* kc_bytes_create(const kc_allocator* alloc, const void* data,
                           size_t size, kc_bytes** out_bytes) {
  return kc__str_make(alloc, KC_TYPE_BYTES, data, size, (kc_str**)out_bytes);
}

kc_string_view kc_bytes_get_view(const kc_bytes* bytes) {
  return kc_str_get_view(bytes ? &bytes->as_str : NULL);
}
