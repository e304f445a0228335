/*
 * kc_op_builder_create_gradient (op.h, "Gradients"): the gradient op an
 * op's gradient declaration names, defined from the declaration and the
 * op's specs, so that its author writes only its kernel.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op/op_internal.h"

/* The gradient op's shape function: output k has the shape of the input
 * that is the forward input whose cotangent it is (shape_data: one int32
 * per output, -1 where no item is that input: left unknown). */
static kc_status* kc__gradient_op_shape(kc_shape_ctx* ctx) {
  const int32_t* from = kc_shape_ctx_get_data(ctx);
  for (int32_t k = 0; k < kc_shape_ctx_get_output_count(ctx); ++k) {
    if (from[k] < 0) continue;
    KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, k, kc_shape_ctx_get_input(ctx, from[k])));
  }
  return NULL;
}

/* "NAME: TYPE" of `arg` renamed `prefix` + NAME, into a new string. */
static char* kc__renamed_spec(const char* prefix, const kc__arg_def* arg, const char* spec) {
  const char* type = strchr(spec, ':');
  size_t n = strlen(prefix) + strlen(arg->name) + strlen(type ? type : "") + 1;
  char* out = kc__malloc(n);
  if (out) snprintf(out, n, "%s%s%s", prefix, arg->name, type ? type : "");
  return out;
}

static kc_status* kc__gradient_op_add(kc_op_builder* b, const char* prefix,
                                      const kc__arg_def* arg, const char* spec, bool input) {
  char* renamed = kc__renamed_spec(prefix, arg, spec);
  if (!renamed) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = input ? kc_op_builder_add_input(b, renamed) : kc_op_builder_add_output(b, renamed);
  kc__free(renamed);
  return st;
}

/* kc_op_builder_create_gradient for the op itself, which the caller holds. */
static kc_status* kc__gradient_op_of(const kc_op* op, kc_op_builder** out_builder) {
  const kc__op_schema* def = &op->def;
  const kc__op_gradient* g = def->gradient;
  if (!g) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "kc_op_builder_create_gradient: op %s declares no gradient "
                            "(kc_op_builder_set_gradient)",
                            KC__QS(def->name));
  }
  for (int32_t i = 0; i < g->num_args; ++i) {
    const kc__arg_def* arg = g->args[i].source == KC_OP_GRAD_INPUT ? &def->inputs[g->args[i].index]
                                                                   : &def->outputs[g->args[i].index];
    if (arg->form != KC__ARG_ONE) {
      return kc_status_create(KC_UNIMPLEMENTED,
                              "kc_op_builder_create_gradient: gradient spec %s: item %d names "
                              "the list arg '%s'; define the gradient op with "
                              "kc_op_builder_create",
                              KC__QS(g->spec), i + 1, arg->name);
    }
  }
  for (int32_t k = 0; k < g->num_results; ++k) {
    if (def->inputs[g->results[k]].form != KC__ARG_ONE) {
      return kc_status_create(KC_UNIMPLEMENTED,
                              "kc_op_builder_create_gradient: gradient spec %s: result %d is "
                              "the cotangent of the list arg '%s'; define the gradient op "
                              "with kc_op_builder_create",
                              KC__QS(g->spec), k + 1, def->inputs[g->results[k]].name);
    }
  }
  int32_t* from = kc__calloc((size_t)g->num_results + 1, sizeof *from);
  if (!from) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_op_builder* b = NULL;
  kc_status* st = kc_op_builder_create(g->op_name, &b);
  /* Inputs: the items, forward inputs and outputs as declared, each
   * output cotangent as "dNAME" of its output's type. */
  for (int32_t i = 0; !st && i < g->num_args; ++i) {
    const kc_op_grad_arg* a = &g->args[i];
    if (a->source == KC_OP_GRAD_INPUT) {
      st = kc_op_builder_add_input(b, kc_op_get_input_spec(op, a->index));
    } else if (a->source == KC_OP_GRAD_OUTPUT) {
      st = kc_op_builder_add_input(b, kc_op_get_output_spec(op, a->index));
    } else {
      st = kc__gradient_op_add(b, "d", &def->outputs[a->index],
                               kc_op_get_output_spec(op, a->index), true);
    }
  }
  /* Outputs: each result's cotangent "dNAME", of its input's type and,
   * where that input is an item, shape. */
  for (int32_t k = 0; !st && k < g->num_results; ++k) {
    int32_t in = g->results[k];
    st = kc__gradient_op_add(b, "d", &def->inputs[in], kc_op_get_input_spec(op, in), false);
    from[k] = -1;
    for (int32_t i = 0; i < g->num_args; ++i) {
      if (g->args[i].source == KC_OP_GRAD_INPUT && g->args[i].index == in) from[k] = i;
    }
  }
  for (int32_t i = 0; !st && i < def->num_attrs; ++i) {
    st = kc_op_builder_add_attr(b, kc_op_get_attr_spec(op, i));
  }
  if (!st) {
    char doc[256];
    snprintf(doc, sizeof doc, "The gradient of %s.", def->name);
    st = kc_op_builder_set_doc(b, doc);
  }
  if (!st) st = kc_op_builder_set_flags(b, KC_OP_SYMBOLIC_SHAPES);
  if (st) {
    kc__free(from);
    kc_op_builder_destroy(b);
    return kc_status_add_context(st, "kc_op_builder_create_gradient of op %s",
                                 KC__QS(def->name));
  }
  kc_op_builder_set_shape_fn_v2(b, kc__gradient_op_shape, from, kc__free);
  *out_builder = b;
  return NULL;
}

kc_status* kc_op_builder_create_gradient(const char* op_name, kc_op_builder** out_builder) {
  if (!op_name || !out_builder) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_op_builder_create_gradient: %s is NULL",
                            op_name ? "out_builder" : "op_name");
  }
  *out_builder = NULL;
  /* The op as this thread sees it, a plugin's init registering it just
   * before included; held while it is read. */
  kc__section r = kc__read_lock();
  const kc_op* op = kc__op_find_any(kc_sv(op_name));
  if (op) kc_object_retain(KC_OBJECT(op));
  kc__read_unlock(r);
  if (!op) {
    return kc_status_create(KC_NOT_FOUND, "kc_op_builder_create_gradient: no op named %s",
                            KC__QS(op_name));
  }
  kc_status* st = kc__gradient_op_of(op, out_builder);
  kc_object_release(KC_OBJECT(op));
  return st;
}
