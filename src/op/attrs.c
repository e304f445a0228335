/* Reading resolved attribute values (kc_op_attrs_get_*). */
#include <stdio.h>

#include "op/op_internal.h"

/* NOT_FOUND naming what the op does have. */
static kc_status* kc__no_attr(const kc__op_schema* def, const char* name) {
  char list[512];
  kc__op_format_attr_names(def, list, sizeof list);
  return kc_status_create(KC_NOT_FOUND, "op %s has no attr %s (%s%s)",
                          KC__QS(def->name), KC__QS(name), def->num_attrs ? "its attrs: " : "",
                          def->num_attrs ? list : "it has none");
}

/* The attr `name` of kind `kind` (list or not), and its value. */
static kc_status* kc__attr_lookup(const kc_op_attrs* attrs, const char* name,
                                  kc__attr_kind kind, bool is_list,
                                  const void* out, const kc_any** out_value) {
  if (!attrs || !name || !out) {
    return kc_status_create(KC_INVALID_ARGUMENT, "reading an attr: %s is NULL",
                            !attrs  ? "attrs"
                            : !name ? "name"
                                    : "the out "
                                      "pointer");
  }
  int32_t i = kc__op_find_attr(attrs->def, kc_sv(name));
  if (i < 0) return kc__no_attr(attrs->def, name);
  const kc__attr_def* a = &attrs->def->attrs[i];
  if (a->kind != kind || a->is_list != is_list) {
    kc__attr_def wanted = *a;
    wanted.kind = kind;
    wanted.is_list = is_list;
    return kc_status_create(
        KC_INVALID_ARGUMENT, "attr %s of op %s is %s %s, not %s %s", KC__QS(name),
        KC__QS(attrs->def->name), a->kind == KC__ATTR_INT && !a->is_list ? "an" : "a",
        kc__attr_kind_name(a), kind == KC__ATTR_INT && !is_list ? "an" : "a",
        kc__attr_kind_name(&wanted));
  }
  *out_value = &attrs->values[i];
  return NULL;
}

kc_status* kc_op_attrs_get_int(const kc_op_attrs* attrs, const char* name,
                               int64_t* out_value) {
  const kc_any* v;
  KC_RETURN_IF_ERROR(kc__attr_lookup(attrs, name, KC__ATTR_INT, false, out_value, &v));
  *out_value = v->u.v_int64;
  return NULL;
}

kc_status* kc_op_attrs_get_float(const kc_op_attrs* attrs, const char* name,
                                 double* out_value) {
  const kc_any* v;
  KC_RETURN_IF_ERROR(kc__attr_lookup(attrs, name, KC__ATTR_FLOAT, false, out_value, &v));
  *out_value =
      v->type_index == KC_TYPE_INT ? (double)v->u.v_int64 : v->u.v_float64;
  return NULL;
}

kc_status* kc_op_attrs_get_bool(const kc_op_attrs* attrs, const char* name,
                                bool* out_value) {
  const kc_any* v;
  KC_RETURN_IF_ERROR(kc__attr_lookup(attrs, name, KC__ATTR_BOOL, false, out_value, &v));
  *out_value = v->u.v_int64 != 0;
  return NULL;
}

kc_status* kc_op_attrs_get_string(const kc_op_attrs* attrs, const char* name,
                                  kc_string_view* out_value) {
  const kc_any* v;
  KC_RETURN_IF_ERROR(kc__attr_lookup(attrs, name, KC__ATTR_STRING, false, out_value, &v));
  kc_any_get_string(v, out_value);
  return NULL;
}

kc_status* kc_op_attrs_get_type(const kc_op_attrs* attrs, const char* name,
                                DLDataType* out_value) {
  const kc_any* v;
  KC_RETURN_IF_ERROR(kc__attr_lookup(attrs, name, KC__ATTR_TYPE, false, out_value, &v));
  *out_value = v->u.v_dtype;
  return NULL;
}

/* The items of an array value, copied out as `item` reads them. */
static int32_t kc__array_items(const kc_any* v) {
  return (int32_t)kc_array_get_size((const kc_array*)(const void*)v->u.v_obj);
}
static const kc_any* kc__array_item(const kc_any* v, int32_t i) {
  return kc_array_get_item((const kc_array*)(const void*)v->u.v_obj, (size_t)i);
}

kc_status* kc_op_attrs_get_shape(const kc_op_attrs* attrs, const char* name,
                                 int64_t* out_dims, int32_t capacity,
                                 int32_t* out_rank) {
  const kc_any* v;
  KC_RETURN_IF_ERROR(kc__attr_lookup(attrs, name, KC__ATTR_SHAPE, false, out_rank, &v));
  *out_rank = kc__array_items(v);
  for (int32_t i = 0; out_dims && i < capacity && i < *out_rank; ++i) {
    out_dims[i] = kc__array_item(v, i)->u.v_int64;
  }
  return NULL;
}

kc_status* kc_op_attrs_get_int_list(const kc_op_attrs* attrs, const char* name,
                                    int64_t* out_values, int32_t capacity,
                                    int32_t* out_count) {
  const kc_any* v;
  KC_RETURN_IF_ERROR(kc__attr_lookup(attrs, name, KC__ATTR_INT, true, out_count, &v));
  *out_count = kc__array_items(v);
  for (int32_t i = 0; out_values && i < capacity && i < *out_count; ++i) {
    out_values[i] = kc__array_item(v, i)->u.v_int64;
  }
  return NULL;
}

kc_status* kc_op_attrs_get_type_list(const kc_op_attrs* attrs, const char* name,
                                     DLDataType* out_values, int32_t capacity,
                                     int32_t* out_count) {
  const kc_any* v;
  KC_RETURN_IF_ERROR(kc__attr_lookup(attrs, name, KC__ATTR_TYPE, true, out_count, &v));
  *out_count = kc__array_items(v);
  for (int32_t i = 0; out_values && i < capacity && i < *out_count; ++i) {
    out_values[i] = kc__array_item(v, i)->u.v_dtype;
  }
  return NULL;
}

kc_status* kc_op_attrs_get_value(const kc_op_attrs* attrs, const char* name,
                                 const kc_any** out_value) {
  if (!attrs || !name || !out_value) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_op_attrs_get_value: a pointer is NULL");
  }
  int32_t i = kc__op_find_attr(attrs->def, kc_sv(name));
  if (i < 0) return kc__no_attr(attrs->def, name);
  *out_value = &attrs->values[i];
  return NULL;
}
