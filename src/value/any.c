/* kc_any: type names, retain/release, strings. */
#include "internal/object.h"

/* The layouts of kc_any, kc_object and the DLPack structs are frozen in
 * src/plugin/abi_layout.c. */

const char* kc_type_name(int32_t type_index) {
  switch (type_index) {
#define KC__TYPE_CASE(name, value, text) \
  case value:                            \
    return text;
    KC_POD_TYPES(KC__TYPE_CASE)
    KC_OBJECT_TYPES(KC__TYPE_CASE)
#undef KC__TYPE_CASE
    default:
      return "unknown";
  }
}

void kc_any_retain(const kc_any* value) {
  if (value && kc_any_is_object(value)) kc_object_retain(value->u.v_obj);
}

void kc_any_release(kc_any* value) {
  if (!value) return;
  if (kc_any_is_object(value)) kc_object_release(value->u.v_obj);
  *value = kc_any_none();
}

kc_status* kc_any_from_string(const kc_allocator* alloc, kc_string_view s,
                              kc_any* out_value) {
  if (!out_value) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_any_from_string: out_value is NULL");
  }
  *out_value = kc_any_none();
  if (s.size <= KC_SMALL_STR_MAX) {
    if (s.size && !s.data) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "kc_any_from_string: NULL data with size %zu",
                              s.size);
    }
    out_value->type_index = KC_TYPE_SMALL_STR;
    out_value->small_len = (uint32_t)s.size;
    if (s.size) memcpy(out_value->u.v_small, s.data, s.size);
    out_value->u.v_small[s.size] = '\0';
    return NULL;
  }
  kc_str* str = NULL;
  kc_status* st = kc_str_create(alloc, s, &str);
  if (st) return st;
  *out_value = kc_any_object(KC_OBJECT(str));
  return NULL;
}

bool kc_any_get_string(const kc_any* value, kc_string_view* out_view) {
  if (!value || !out_view) return false;
  switch (value->type_index) {
    case KC_TYPE_RAW_STR:
      *out_view = kc_sv(value->u.v_c_str);
      return value->u.v_c_str != NULL;
    case KC_TYPE_SMALL_STR:
      out_view->data = value->u.v_small;
      out_view->size = value->small_len;
      return true;
    case KC_TYPE_STR:
      *out_view = kc_str_get_view((const kc_str*)(const void*)value->u.v_obj);
      return true;
    default:
      return false;
  }
}

bool kc_any_get_func(const kc_any* value, kc_func** out_func) {
  if (!value || !out_func || value->type_index != KC_TYPE_FUNC) return false;
  *out_func = (kc_func*)(void*)value->u.v_obj;
  return true;
}
