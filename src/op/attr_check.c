/*
 * Checking an attribute value against its definition: kind, allowed set
 * and bounds, with the conversions a call may rely on (int to float,
 * dtype names to dtypes).
 */
#include <stdio.h>

#include "op/op_internal.h"

static const char* kc__attr_item_name(const kc__attr_def* a) {
  static const char* const names[] = {"int",    "float", "bool",
                                      "string", "type",  "shape"};
  return names[a->kind];
}

const char* kc__attr_kind_name(const kc__attr_def* a) {
  static const char* const list[] = {"list(int)",  "list(float)",
                                     "list(bool)", "list(string)",
                                     "list(type)", "list(shape)"};
  return a->is_list ? list[a->kind] : kc__attr_item_name(a);
}

static kc_status* kc__value_mismatch(const kc__attr_def* a, const kc_any* v,
                                     const char* where) {
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "attr %s%s: expected %s, got %s", KC__QS(a->name), where,
                          kc__attr_item_name(a), kc_type_name(v->type_index));
}

static kc_status* kc__check_bounds(const kc__attr_def* a, int64_t v,
                                   const char* what) {
  if ((a->has_min && v < a->min) || (a->has_max && v > a->max)) {
    char range[96];
    if (a->has_min && a->has_max) {
      snprintf(range, sizeof range, "between %lld and %lld", (long long)a->min,
               (long long)a->max);
    } else if (a->has_min) {
      snprintf(range, sizeof range, ">= %lld", (long long)a->min);
    } else {
      snprintf(range, sizeof range, "<= %lld", (long long)a->max);
    }
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "attr %s: %s must be %s, got %lld", KC__QS(a->name), what,
                            range, (long long)v);
  }
  return NULL;
}

/* A string outside its attr's set: the message lists the set. */
static kc_status* kc__not_allowed(const kc__attr_def* a, const char* where,
                                  kc_string_view text) {
  char allowed[512];
  size_t n = 0;
  allowed[0] = '\0';
  for (int32_t i = 0; i < a->num_strings && n < sizeof allowed; ++i) {
    kc__appendf(allowed, sizeof allowed, &n, "%s%s", i ? ", " : "",
                KC__QS(a->strings[i]));
  }
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "attr %s%s: %s is not one of the allowed "
                          "values (%s)",
                          KC__QS(a->name), where, KC__Q(text), allowed);
}

static kc_status* kc__check_scalar(const kc__attr_def* a, const kc_any* v,
                                   const char* where, kc_any* out) {
  *out = *v;
  kc_string_view text;
  switch (a->kind) {
    case KC__ATTR_INT:
      if (v->type_index != KC_TYPE_INT) break;
      return a->is_list ? NULL : kc__check_bounds(a, v->u.v_int64, "the value");
    case KC__ATTR_FLOAT:
      if (v->type_index == KC_TYPE_INT) {
        *out = kc_any_float((double)v->u.v_int64);
        return NULL;
      }
      if (v->type_index != KC_TYPE_FLOAT) break;
      return NULL;
    case KC__ATTR_BOOL:
      if (v->type_index != KC_TYPE_BOOL) break;
      return NULL;
    case KC__ATTR_STRING:
      if (!kc_any_get_string(v, &text)) break;
      if (a->num_strings == 0) return NULL;
      for (int32_t i = 0; i < a->num_strings; ++i) {
        if (kc_sv_equal(text, kc_sv(a->strings[i]))) return NULL;
      }
      return kc__not_allowed(a, where, text);
    case KC__ATTR_TYPE: {
      DLDataType t;
      if (v->type_index == KC_TYPE_DTYPE) {
        t = v->u.v_dtype;
      } else if (!a->is_list && kc_any_get_string(v, &text)) {
        char why[320];
        if (kc__type_word_refusal(text, why, sizeof why)) {
          return kc_status_create(KC_INVALID_ARGUMENT, "attr %s%s: %s",
                                  KC__QS(a->name), where, why);
        }
        if (!kc__type_word_dtype(text, &t)) {
          KC_RETURN_IF_ERROR(kc_dtype_parse(text, &t), "attr %s", KC__QS(a->name));
        }
        *out = kc_any_dtype(t);
      } else {
        break;
      }
      if (kc__type_set_has(&a->types, t)) return NULL;
      char name[64], set[512];
      kc_dtype_format(t, name, sizeof name);
      kc__type_set_format(&a->types, set, sizeof set);
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "attr %s%s: expected one of %s, got %s",
                              KC__QS(a->name), where, set, name);
    }
    case KC__ATTR_SHAPE: {
      if (v->type_index != KC_TYPE_ARRAY) break;
      const kc_array* dims = (const kc_array*)(const void*)v->u.v_obj;
      size_t rank = kc_array_get_size(dims);
      if (rank > KC_TENSOR_MAX_NDIM) {
        return kc_status_create(KC_INVALID_ARGUMENT,
                                "attr %s%s: a shape has at most %d dims, "
                                "got %zu",
                                KC__QS(a->name), where, KC_TENSOR_MAX_NDIM, rank);
      }
      for (size_t i = 0; i < rank; ++i) {
        const kc_any* d = kc_array_get_item(dims, i);
        if (d->type_index != KC_TYPE_INT || d->u.v_int64 < KC_DIM_UNKNOWN) {
          return kc_status_create(KC_INVALID_ARGUMENT,
                                  "attr %s%s: dim %zu: expected an int >= "
                                  "0 (or -1, unknown)",
                                  KC__QS(a->name), where, i);
        }
      }
      return NULL;
    }
  }
  return kc__value_mismatch(a, v, where);
}

kc_status* kc__check_attr_value(const kc__attr_def* a, const kc_any* v,
                                kc_any* out) {
  if (!a->is_list) return kc__check_scalar(a, v, "", out);
  *out = *v;
  if (v->type_index != KC_TYPE_ARRAY) {
    return kc_status_create(
        KC_INVALID_ARGUMENT, "attr %s: expected %s (an array), got %s",
        KC__QS(a->name), kc__attr_kind_name(a), kc_type_name(v->type_index));
  }
  const kc_array* list = (const kc_array*)(const void*)v->u.v_obj;
  size_t n = kc_array_get_size(list);
  KC_RETURN_IF_ERROR(kc__check_bounds(a, (int64_t)n, "the length"));
  for (size_t i = 0; i < n; ++i) {
    kc_any item;
    kc_status* st = kc__check_scalar(a, kc_array_get_item(list, i), "", &item);
    if (st) {
      /* The item's position goes into the message only when there is
       * one, not formatted for every item of every call. The check is
       * the same, so it fails again, this time with the position. */
      kc_status_destroy(st);
      char where[32];
      snprintf(where, sizeof where, " item %zu", i);
      return kc__check_scalar(a, kc_array_get_item(list, i), where, &item);
    }
  }
  return NULL;
}
