/* Ops as packed functions: "op.NAME" (see "Ops as packed functions" in
 * kcall/op.h). */
#include <stdio.h>
#include <stdlib.h>

#include "op/op_internal.h"

static bool kc__arg_tensor(const kc_any* a, const DLTensor** out) {
  if (a->type_index == KC_TYPE_DLTENSOR_PTR && a->u.v_dltensor) {
    *out = a->u.v_dltensor;
    return true;
  }
  if (a->type_index == KC_TYPE_TENSOR) {
    *out = kc_tensor_get_dltensor((const kc_tensor*)(const void*)a->u.v_obj);
    return true;
  }
  return false;
}

/* An array whose items are all tensors. */
static bool kc__arg_tensor_list(const kc_any* a) {
  if (a->type_index != KC_TYPE_ARRAY) return false;
  const kc_array* list = (const kc_array*)(const void*)a->u.v_obj;
  size_t n = kc_array_get_size(list);
  for (size_t i = 0; i < n; ++i) {
    const DLTensor* t = NULL;
    if (!kc__arg_tensor(kc_array_get_item(list, i), &t)) return false;
  }
  return n > 0;
}

typedef struct kc__packed_call {
  const DLTensor* inputs[KC_OP_MAX_TENSORS];
  int32_t num_inputs;
  kc_op_attr attrs[KC_OP_MAX_ATTRS];
  int32_t num_attrs;
  kc_any parsed[KC_OP_MAX_ATTRS]; /* values parsed from text, owned */
  int32_t num_parsed;
} kc__packed_call;

static kc_status* kc__add_input(kc__packed_call* c, const DLTensor* t,
                                int32_t position, bool after_attrs) {
  if (after_attrs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "argument %d: a tensor after the attributes "
                            "(inputs come first)",
                            position);
  }
  if (c->num_inputs == KC_OP_MAX_TENSORS) {
    return kc_status_create(KC_INVALID_ARGUMENT, "more than %d input tensors",
                            KC_OP_MAX_TENSORS);
  }
  c->inputs[c->num_inputs++] = t;
  return NULL;
}

/* "name=value": the value parsed as the attr's kind. */
static kc_status* kc__add_text_attr(kc__packed_call* c,
                                    const kc__op_schema* def,
                                    kc_string_view text, int32_t position) {
  size_t eq = 0;
  while (eq < text.size && text.data[eq] != '=') ++eq;
  if (eq == 0 || eq == text.size) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "argument %d: %s is neither a tensor nor an "
                            "attr (write name=value)",
                            position, KC__Q(text));
  }
  kc_string_view name = {text.data, eq};
  kc_string_view value = {text.data + eq + 1, text.size - eq - 1};
  int32_t a = kc__op_find_attr(def, name);
  if (a < 0) {
    /* The call reports an unknown name with the op's attr list. */
    c->attrs[c->num_attrs].name = name;
    c->attrs[c->num_attrs].value = kc_any_none();
    c->num_attrs++;
    return NULL;
  }
  kc_any* v = &c->parsed[c->num_parsed];
  KC_RETURN_IF_ERROR(kc__parse_attr_value(&def->attrs[a], value, v),
                     "argument %d", position);
  c->num_parsed++;
  c->attrs[c->num_attrs].name = name;
  c->attrs[c->num_attrs].value = *v;
  c->num_attrs++;
  return NULL;
}

static kc_status* kc__collect(kc__packed_call* c, const kc__op_schema* def,
                              const kc_any* args, int32_t nargs) {
  bool in_attrs = false;
  for (int32_t i = 0; i < nargs; ++i) {
    const kc_any* a = &args[i];
    const DLTensor* t = NULL;
    kc_string_view text;
    if (kc__arg_tensor(a, &t)) {
      KC_RETURN_IF_ERROR(kc__add_input(c, t, i, in_attrs));
      continue;
    }
    if (kc__arg_tensor_list(a)) {
      const kc_array* list = (const kc_array*)(const void*)a->u.v_obj;
      for (size_t j = 0; j < kc_array_get_size(list); ++j) {
        kc__arg_tensor(kc_array_get_item(list, j), &t);
        KC_RETURN_IF_ERROR(kc__add_input(c, t, i, in_attrs));
      }
      continue;
    }
    if (c->num_attrs == KC_OP_MAX_ATTRS) {
      return kc_status_create(KC_INVALID_ARGUMENT, "more than %d attrs",
                              KC_OP_MAX_ATTRS);
    }
    in_attrs = true;
    if (kc_any_get_string(a, &text)) {
      KC_RETURN_IF_ERROR(kc__add_text_attr(c, def, text, i));
      continue;
    }
    const kc_array* pair = a->type_index == KC_TYPE_ARRAY
                               ? (const kc_array*)(const void*)a->u.v_obj
                               : NULL;
    if (pair && kc_array_get_size(pair) == 2 &&
        kc_any_get_string(kc_array_get_item(pair, 0), &text)) {
      c->attrs[c->num_attrs].name = text;
      c->attrs[c->num_attrs].value = *kc_array_get_item(pair, 1);
      c->num_attrs++;
      continue;
    }
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "argument %d: expected a tensor, an array of "
                            "tensors, 'name=value' or [name, value], got %s",
                            i, kc_type_name(a->type_index));
  }
  return NULL;
}

/* The packed function: its self is the op. */
static kc_status* kc__op_packed(void* self, const kc_any* args, int32_t nargs,
                                kc_any* ret) {
  const kc_op* op = self;
  kc__packed_call* c = kc__malloc(sizeof *c);
  kc_tensor** outs = kc__malloc(KC_OP_MAX_TENSORS * sizeof *outs);
  kc_status* st = kc__op_check_live(op);
  if (st) {
    st = kc_status_add_context(st, "calling op %s", KC__QS(op->def.name));
  } else if (!c || !outs) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    c->num_inputs = c->num_attrs = c->num_parsed = 0;
    st = kc__collect(c, &op->def, args, nargs);
    if (st) st = kc_status_add_context(st, "calling op %s", KC__QS(op->def.name));
  }
  int32_t n = 0;
  if (!st) {
    st = kc_op_call(op, c->inputs, c->num_inputs, c->attrs, c->num_attrs, NULL,
                    outs, KC_OP_MAX_TENSORS, &n);
  }
  if (!st && n == 1) {
    *ret = kc_any_object(KC_OBJECT(outs[0]));
    n = 0;
  } else if (!st && n > 1) {
    kc_any* list = kc__malloc((size_t)n * sizeof *list);
    kc_array* array = NULL;
    if (!list) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      for (int32_t i = 0; i < n; ++i)
        list[i] = kc_any_object(KC_OBJECT(outs[i]));
      st = kc_array_create(NULL, list, (size_t)n, &array);
      kc__free(list);
    }
    if (!st) *ret = kc_any_object(KC_OBJECT(array));
  }
  for (int32_t i = 0; i < n; ++i) kc_object_release(KC_OBJECT(outs[i]));
  if (c) {
    for (int32_t i = 0; i < c->num_parsed; ++i) kc_any_release(&c->parsed[i]);
  }
  kc__free(c);
  kc__free(outs);
  return st;
}

static void kc__op_func_release(void* self) { kc_object_release(self); }

kc_status* kc__op_func_create(kc_op* op, kc_func** out_func) {
  kc_object_retain(KC_OBJECT(op));
  /* The deleter runs on failure too, dropping the reference again. */
  KC_RETURN_IF_ERROR(kc_func_create(NULL, kc__op_packed, op, kc__op_func_release, out_func));
  /* The function belongs to the op's plugin (its code is the library's),
   * and its reference to the op is the library's, not a use (owner.h). */
  kc__owned* owned = &(*out_func)->owned;
  if (owned->owner != op->owned.owner) {
    kc__owned_detach(owned);
    kc__owned_attach_to(owned, KC_OBJECT(*out_func), op->owned.owner);
  }
  owned->holds = KC_OBJECT(op);
  return NULL;
}

void kc__op_func_unregister(const kc_op* op) {
  char name[KC__NAME_MAX + 1];
  int n = snprintf(name, sizeof name, "op.%s", op->def.name);
  if (n < 0 || (size_t)n >= sizeof name) return; /* never registered */
  kc_func* f = NULL;
  kc_status* st = kc_func_registry_lookup(kc_sv(name), &f);
  if (st) {
    kc_status_destroy(st);
    return;
  }
  if (f->fn == kc__op_packed && f->self == op) {
    kc_status_destroy(kc_func_registry_remove(kc_sv(name)));
  }
}
