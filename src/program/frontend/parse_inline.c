/* Called computations: a fusion or call inlined, its parameters bound to
 * the caller's operands; a computation that reduce, while or conditional
 * call made into a program of its own. */
#include <stdio.h>

#include "program/frontend/parse_internal.h"

/* The name an instruction of an inlined computation gets in the program:
 * "caller/name", so that two inlinings of one computation do not clash. */
kc_status* kc__scoped_name(kc__hlo_parser* p, kc_string_view* name) {
  if (!p->prefix.size) return NULL;
  size_t size = p->prefix.size + 1 + name->size;
  char* full = kc__arena_alloc(&p->tmp, size + 1);
  if (!full) return kc__parse_oom();
  memcpy(full, p->prefix.data, p->prefix.size);
  full[p->prefix.size] = '/';
  memcpy(full + p->prefix.size + 1, name->data, name->size);
  *name = (kc_string_view){full, size};
  return NULL;
}

/* ---- layouts: converting between logical values and physical bytes ---- */

/* A parameter of an inlined computation: the caller's operand `number`,
 * which must have the parameter's shape. */
kc_status* kc__bind_parameter(kc__hlo_parser* p, const kc__hlo_instr* ins,
                              int64_t number, int32_t* out_id) {
  if ((uint64_t)number >= p->num_args) {
    return kc__lex_fail(&p->lx, &ins->opcode_tok,
                        "parameter %s: number %lld, but the caller passes %zu "
                        "operand%s",
                        KC__Q(ins->name_tok.text),
                        (long long)number, p->num_args, p->num_args == 1 ? "" : "s");
  }
  char how[64];
  snprintf(how, sizeof how, "operand %lld of the caller", (long long)number);
  KC_RETURN_IF_ERROR(kc__check_shape(p, ins, p->arg_shapes[number], how));
  *out_id = p->args[number];
  return NULL;
}

/* The computation `name` that instruction `ins` calls, which must be
 * defined before it and not be being parsed already (it would call
 * itself). */
static kc_status* kc__find_computation(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                       const kc__token* name, kc__hlo_computation** out) {
  kc__hlo_module* m = p->module;
  int32_t index = kc__strmap_get(&m->names, name->text);
  kc__hlo_computation* c =
      index < 0 ? NULL : (kc__hlo_computation*)(void*)m->computations.data + index;
  if (c && !c->active && p->depth < KC__PARSE_MAX_DEPTH) {
    *out = c;
    return NULL;
  }
  return kc__lex_fail(&p->lx, name, "%s %s: computation %s %s", ins->op->name,
                      KC__Q(ins->name_tok.text),
                      KC__Q(name->text),
                      !c          ? "is not defined before it"
                      : c->active ? "calls itself"
                                  : "is nested too deeply");
}

kc_status* kc__inline_computation(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                  const kc__token* callee, const int32_t* ids,
                                  kc_shape* const* shapes, size_t n, kc_string_view scope,
                                  const kc_shape* expected, int32_t* out_id) {
  kc__hlo_module* m = p->module;
  kc__hlo_computation* c = NULL;
  KC_RETURN_IF_ERROR(kc__find_computation(p, ins, callee, &c));
  kc__hlo_parser sub = {
      .lx = c->at,
      .b = p->b,
      .root = -1,
      .module = m,
      .args = ids,
      .arg_shapes = shapes,
      .num_args = n,
      .prefix = scope,
      .inlined = true,
      .depth = p->depth + 1,
  };
  c->active = true;
  kc_status* st = kc__parse_scope(&sub);
  c->active = false;
  /* Its ROOT is the value, and must have the expected shape. */
  int32_t id = -1;
  if (!st) {
    const kc__hlo_value* root = kc__hlo_value_at(&sub, sub.root);
    if (!kc_shape_equal(root->shape, expected)) {
      char want[256], got[256];
      kc_shape_format(expected, want, sizeof want);
      kc_shape_format(root->shape, got, sizeof got);
      st = kc__lex_fail(&p->lx, &ins->shape_tok,
                        "%s %s: expected computation %s to give %s, but its ROOT %s "
                        "(line %d) is %s",
                        ins->op->name, KC__Q(ins->name_tok.text), KC__Q(c->name), want,
                        KC__Q(root->name), root->line, got);
    }
    id = root->id;
  }
  kc__parser_free(&sub);
  if (st) {
    return kc_status_add_context(st, "in computation %s, called by %s %s at line %d",
                                 KC__Q(c->name), ins->op->name,
                                 KC__Q(ins->name_tok.text),
                                 ins->name_tok.line);
  }
  *out_id = id;
  return NULL;
}

/* A fusion or call: the called computation parsed again in a scope of its
 * own, its parameters bound to the operands; the instruction is its ROOT.
 * Inlining costs nothing at run time, and the fused instructions run as
 * if written in place. */
kc_status* kc__inline_call(kc__hlo_parser* p, kc__hlo_instr* ins,
                           int32_t* out_id) {
  if (!(ins->seen & KC__SEEN_CALLEE)) {
    char attr[32];
    snprintf(attr, sizeof attr, "%s=COMPUTATION", kc__hlo_callee_attr(ins->op));
    return kc__missing_attr(p, ins, attr);
  }
  size_t n = kc__num_operands(p);
  kc_shape** shapes = kc__arena_alloc(&p->tmp, (n ? n : 1) * sizeof *shapes);
  if (!shapes) return kc__parse_oom();
  for (size_t i = 0; i < n; ++i) shapes[i] = kc__operand_value(p, i)->shape;
  kc_string_view name = ins->name_tok.text;
  KC_RETURN_IF_ERROR(kc__scoped_name(p, &name));
  return kc__inline_computation(p, ins, &ins->callee, kc__operand_ids(p), shapes, n, name,
                                ins->shape, out_id);
}

/* The computation `name` as a program of its own: its parameters are the
 * program's, its ROOT the result. Made once per module. */
kc_status* kc__computation_program(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                   const kc__token* name, kc_program** out) {
  kc__hlo_module* m = p->module;
  kc__hlo_computation* c = NULL;
  KC_RETURN_IF_ERROR(kc__find_computation(p, ins, name, &c));
  if (c->program) {
    *out = c->program;
    return NULL;
  }
  kc__hlo_parser sub = {.lx = c->at, .root = -1, .module = m, .depth = p->depth + 1};
  kc_status* st = kc_program_builder_create(c->name, &sub.b);
  c->active = true;
  if (!st) st = kc__parse_scope(&sub);
  c->active = false;
  if (!st) st = kc_program_builder_set_root(sub.b, kc__hlo_value_at(&sub, sub.root)->id);
  if (!st) {
    kc_program_builder* b = sub.b;
    sub.b = NULL; /* finish consumes it */
    st = kc_program_builder_finish(b, &c->program);
  }
  kc_program_builder_destroy(sub.b);
  kc__parser_free(&sub);
  if (st) {
    return kc_status_add_context(st, "in computation %s, called at line %d",
                                 KC__Q(c->name), name->line);
  }
  *out = c->program;
  return NULL;
}
