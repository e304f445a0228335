/*
 * Resolving an eager call against its op: the attrs given, how many
 * tensors each input arg takes, the dtypes the inputs set, defaults, and
 * the outputs that follow.
 */
#include <stdio.h>

#include "op/call_internal.h"

static kc_status* kc__given_attrs(kc__resolved_call* f, const kc_op_attr* attrs,
                                  int32_t num_attrs) {
  const kc__op_schema* def = f->def;
  for (int32_t j = 0; j < num_attrs; ++j) {
    int32_t i = kc__op_find_attr(def, attrs[j].name);
    if (i < 0) {
      char names[512];
      kc__op_format_attr_names(def, names, sizeof names);
      return kc_status_create(
          KC_INVALID_ARGUMENT, "attr %s: the op has no such attr (%s%s)",
          KC__Q(attrs[j].name),
          def->num_attrs ? "its attrs: " : "it has none", names);
    }
    if (f->values[i].type_index != KC__UNSET) {
      return kc_status_create(KC_INVALID_ARGUMENT, "attr %s given twice",
                              KC__QS(def->attrs[i].name));
    }
    KC_RETURN_IF_ERROR(
        kc__check_attr_value(&def->attrs[i], &attrs[j].value, &f->values[i]));
  }
  return NULL;
}

/* How many tensors each input arg takes. */
static kc_status* kc__input_lengths(kc__resolved_call* f, int32_t num_inputs) {
  const kc__op_schema* def = f->def;
  int32_t known = 0, open_args = 0, open_attr = -1;
  int32_t lens[KC_OP_MAX_ARGS];
  for (int32_t a = 0; a < def->num_inputs; ++a) {
    const kc__arg_def* arg = &def->inputs[a];
    int32_t attr = arg->form == KC__ARG_REPEATED    ? arg->number_attr
                   : arg->form == KC__ARG_TYPE_LIST ? arg->type_attr
                                                    : -1;
    lens[a] = 1;
    if (attr >= 0) {
      const kc_any* v = &f->values[attr];
      if (v->type_index == KC__UNSET) {
        if (open_attr >= 0 && open_attr != attr) {
          return kc_status_create(
              KC_INVALID_ARGUMENT,
              "cannot tell how the %d input tensors split between the "
              "lengths %s and %s: give one of those attrs",
              num_inputs, KC__QS(def->attrs[open_attr].name), KC__QS(def->attrs[attr].name));
        }
        open_attr = attr;
        open_args++;
        lens[a] = -1;
        continue;
      }
      int64_t n = arg->form == KC__ARG_REPEATED
                      ? v->u.v_int64
                      : (int64_t)kc_array_get_size(
                            (const kc_array*)(const void*)v->u.v_obj);
      if (n < 0 || n > KC_OP_MAX_TENSORS) {
        return kc_status_create(KC_INVALID_ARGUMENT,
                                "input %s: %lld tensors (attr %s)",
                                KC__QS(arg->name), (long long)n, KC__QS(def->attrs[attr].name));
      }
      lens[a] = (int32_t)n;
    }
    known += lens[a];
  }
  /* The args whose length no attr gave share the tensors left over. */
  if (open_args) {
    int32_t rest = num_inputs - known;
    if (rest < 0 || rest % open_args) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "expected %d fixed input tensor(s) plus some "
                              "for %s, got %d in all",
                              known, KC__QS(def->attrs[open_attr].name), num_inputs);
    }
    int32_t n = rest / open_args;
    const kc__attr_def* a = &def->attrs[open_attr];
    if (a->kind == KC__ATTR_INT) {
      kc_any v = kc_any_int(n);
      KC_RETURN_IF_ERROR(kc__check_attr_value(a, &v, &f->values[open_attr]),
                         "inferring attr %s from %d input tensor(s)", KC__QS(a->name),
                         n);
    }
    for (int32_t k = 0; k < def->num_inputs; ++k) {
      if (lens[k] < 0) lens[k] = n;
    }
    known = num_inputs;
  }
  if (known != num_inputs) {
    return kc_status_create(
        KC_INVALID_ARGUMENT, "expected %d input tensor(s), got %d (%s)", known,
        num_inputs, num_inputs < known ? "missing inputs" : "extra inputs");
  }
  f->input_starts[0] = 0;
  for (int32_t a = 0; a < def->num_inputs; ++a) {
    f->input_starts[a + 1] = f->input_starts[a] + lens[a];
  }
  f->num_inputs = num_inputs;
  return NULL;
}

static kc_status* kc__check_tensor(const DLTensor* t, int32_t index) {
  if (!t) {
    return kc_status_create(KC_INVALID_ARGUMENT, "input %d is NULL", index);
  }
  if (t->ndim < 0 || t->ndim > KC_TENSOR_MAX_NDIM || (t->ndim && !t->shape)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "input %d: ndim %d, shape %p: not a valid tensor",
                            index, t->ndim, (void*)t->shape);
  }
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "input %d: dimension %d is %lld", index, i,
                              (long long)t->shape[i]);
    }
  }
  if (t->strides && !kc_dltensor_is_compact(t)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "input %d is strided; kernels take compact "
                            "row-major tensors (copy it first)",
                            index);
  }
  return NULL;
}

static kc_status* kc__dtype_error(int32_t index, const kc__arg_def* arg,
                                  DLDataType want, DLDataType got,
                                  const char* why) {
  char w[64], g[64];
  kc_dtype_format(want, w, sizeof w);
  kc_dtype_format(got, g, sizeof g);
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "input %d (%s): expected %s%s, got %s", index,
                          KC__QS(arg->name), w, why, g);
}

/* Checks each input tensor and infers type attrs and type lists. */
static kc_status* kc__input_types(kc__resolved_call* f,
                                  const DLTensor* const* inputs) {
  const kc__op_schema* def = f->def;
  f->device = kc_device_cpu();
  f->mixed_devices = false;
  int32_t type_source[KC_OP_MAX_ATTRS]; /* the input that set each T */
  for (int32_t i = 0; i < def->num_attrs; ++i) type_source[i] = -1;
  for (int32_t a = 0; a < def->num_inputs; ++a) {
    const kc__arg_def* arg = &def->inputs[a];
    int32_t start = f->input_starts[a], stop = f->input_starts[a + 1];
    kc_any* tv = arg->type_attr >= 0 ? &f->values[arg->type_attr] : NULL;
    bool make_list =
        arg->form == KC__ARG_TYPE_LIST && tv->type_index == KC__UNSET;
    kc_any list_items[KC_OP_MAX_TENSORS];
    for (int32_t i = start; i < stop; ++i) {
      const DLTensor* t = inputs[i];
      KC_RETURN_IF_ERROR(kc__check_tensor(t, i));
      DLDataType dt = t->dtype;
      f->input_dtypes[i] = dt;
      /* The device: the first input's, or a device input's after it. */
      if (i == 0) {
        f->device = t->device;
      } else if (t->device.device_type != f->device.device_type ||
                 t->device.device_id != f->device.device_id) {
        f->mixed_devices = true;
        /* The call runs where its device inputs are; host inputs may be
         * host-memory args of the kernel. */
        if (kc__host_device(f->device)) f->device = t->device;
      }
      /* The dtype: the arg's fixed one, an item of its type list, or its
       * type attr (which the first input of that attr sets). */
      if (!tv) {
        if (!kc_dtype_equal(dt, arg->fixed_type)) {
          return kc__dtype_error(i, arg, arg->fixed_type, dt, "");
        }
      } else if (arg->form == KC__ARG_TYPE_LIST) {
        if (make_list) {
          list_items[i - start] = kc_any_dtype(dt);
          continue;
        }
        DLDataType want =
            kc_array_get_item((const kc_array*)(const void*)tv->u.v_obj,
                              (size_t)(i - start))
                ->u.v_dtype;
        if (!kc_dtype_equal(dt, want)) {
          char why[96];
          snprintf(why, sizeof why, " (item %d of attr %s)", i - start,
                   KC__QS(def->attrs[arg->type_attr].name));
          return kc__dtype_error(i, arg, want, dt, why);
        }
      } else if (tv->type_index == KC__UNSET) {
        kc_any v = kc_any_dtype(dt);
        KC_RETURN_IF_ERROR(
            kc__check_attr_value(&def->attrs[arg->type_attr], &v, tv),
            "input %d (%s)", i, KC__QS(arg->name));
        type_source[arg->type_attr] = i;
      } else if (!kc_dtype_equal(dt, tv->u.v_dtype)) {
        char why[96];
        const kc__attr_def* ta = &def->attrs[arg->type_attr];
        if (type_source[arg->type_attr] >= 0) {
          snprintf(why, sizeof why, " (%s, as input %d set it)", ta->name,
                   type_source[arg->type_attr]);
        } else {
          snprintf(why, sizeof why, " (attr %s)", ta->name);
        }
        return kc__dtype_error(i, arg, tv->u.v_dtype, dt, why);
      }
    }
    /* A type list no attr gave is the dtypes of the arg's inputs. */
    if (make_list) {
      kc_array* list = NULL;
      KC_RETURN_IF_ERROR(kc_array_create(NULL, list_items, (size_t)(stop - start), &list));
      kc_any v = kc_any_object(KC_OBJECT(list));
      kc_status* st = kc__check_attr_value(&def->attrs[arg->type_attr], &v, tv);
      f->owned |= UINT64_C(1) << arg->type_attr;
      *tv = v;
      KC_RETURN_IF_ERROR(st, "input %s", KC__QS(arg->name));
    }
  }
  return NULL;
}

/* Fills defaults, refuses missing attrs, and works out the outputs. */
static kc_status* kc__finish_resolve(kc__resolved_call* f) {
  const kc__op_schema* def = f->def;
  for (int32_t i = 0; i < def->num_attrs; ++i) {
    if (f->values[i].type_index != KC__UNSET) continue;
    const kc__attr_def* a = &def->attrs[i];
    if (!a->has_default) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "attr %s (%s) is required: it has no default "
                              "and no input determines it",
                              KC__QS(a->name), kc__attr_kind_name(a));
    }
    f->values[i] = a->default_value;
  }
  int32_t n = 0;
  f->output_starts[0] = 0;
  for (int32_t o = 0; o < def->num_outputs; ++o) {
    const kc__arg_def* arg = &def->outputs[o];
    const kc_any* tv = arg->type_attr >= 0 ? &f->values[arg->type_attr] : NULL;
    int64_t len = 1;
    if (arg->form == KC__ARG_REPEATED) {
      len = f->values[arg->number_attr].u.v_int64;
    } else if (arg->form == KC__ARG_TYPE_LIST) {
      len =
          (int64_t)kc_array_get_size((const kc_array*)(const void*)tv->u.v_obj);
    }
    if (len < 0 || len > KC_OP_MAX_TENSORS - n) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "output %s: %lld tensors (at most %d in all)",
                              KC__QS(arg->name), (long long)len, KC_OP_MAX_TENSORS);
    }
    for (int32_t j = 0; j < (int32_t)len; ++j) {
      DLDataType dt = arg->fixed_type;
      if (arg->form == KC__ARG_TYPE_LIST) {
        dt = kc_array_get_item((const kc_array*)(const void*)tv->u.v_obj,
                               (size_t)j)
                 ->u.v_dtype;
      } else if (tv) {
        dt = tv->u.v_dtype;
      }
      f->output_dtypes[n + j] = dt;
    }
    n += (int32_t)len;
    f->output_starts[o + 1] = n;
  }
  f->num_outputs = n;
  return NULL;
}

kc_status* kc__resolve(kc__resolved_call* f, const DLTensor* const* inputs,
                       int32_t num_inputs, const kc_op_attr* attrs,
                       int32_t num_attrs) {
  for (int32_t i = 0; i < f->def->num_attrs; ++i) {
    f->values[i].type_index = KC__UNSET;
  }
  f->owned = 0;
  if (num_attrs) KC_RETURN_IF_ERROR(kc__given_attrs(f, attrs, num_attrs));
  KC_RETURN_IF_ERROR(kc__input_lengths(f, num_inputs));
  KC_RETURN_IF_ERROR(kc__input_types(f, inputs));
  return kc__finish_resolve(f);
}
