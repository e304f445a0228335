/* The error half of the typed argument readers in func.h. */
#include "internal/object.h"

kc_status* kc_args_count_mismatch(const char* fn_name, int32_t nargs,
                                  int32_t min_count, int32_t max_count) {
  const char* name = fn_name ? fn_name : "function";
  if (min_count == max_count) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: expected %d argument%s, got %d", name,
                            min_count, min_count == 1 ? "" : "s", nargs);
  }
  if (max_count < 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: expected at least %d argument%s, got %d",
                            name, min_count, min_count == 1 ? "" : "s", nargs);
  }
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "%s: expected %d to %d arguments, got %d", name,
                          min_count, max_count, nargs);
}

kc_status* kc_args_mismatch(const char* fn_name, const kc_any* args,
                            int32_t nargs, int32_t index, const char* kind,
                            bool out_value_given) {
  const char* name = fn_name ? fn_name : "function";
  if (!kind) kind = "value";
  if (!out_value_given) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: argument %d: out_value is NULL", name, index);
  }
  if (!args || index < 0 || index >= nargs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: argument %d: expected %s, got nothing (%d "
                            "argument%s given)",
                            name, index, kind, nargs, nargs == 1 ? "" : "s");
  }
  const kc_any* a = &args[index];
  if (a->type_index == KC_TYPE_DLTENSOR_PTR && !a->u.v_dltensor) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: argument %d: expected %s, got a NULL tensor",
                            name, index, kind);
  }
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "%s: argument %d: expected %s, got %s", name, index,
                          kind, kc_type_name(a->type_index));
}
