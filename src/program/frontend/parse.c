/* The HLO-text parser: modules, computations and instructions, and
 * kc_program_parse. What an instruction is made of (shapes, constants,
 * attributes, called computations) is parsed in the files parse_internal.h
 * lists.
 *
 * Programs are made only through the public builder (program.h), so this
 * file does not depend on how a program is represented. Names map to
 * instructions through a hash map keyed by views into the text, and every
 * instruction's temporaries live in one arena emptied after it is added,
 * so parsing takes time and memory linear in the text. */
#include <stdio.h>
#include <stdlib.h>

#include "program/frontend/parse_internal.h"
#include "program/frontend/stablehlo/stablehlo_internal.h"
#include "program/frontend/stablehlo/bytecode.h"
#include "program/shape_internal.h"

/* ---- instructions -------------------------------------------------------- */

static kc_status* kc__operand_mismatch(kc__hlo_parser* p, const kc__token* at,
                                       const kc__token* name, const kc__hlo_value* v,
                                       const kc_shape* written) {
  char want[256], got[256];
  kc_shape_format(v->shape, want, sizeof want);
  kc_shape_format(written, got, sizeof got);
  return kc__lex_fail(&p->lx, at, "operand %s: expected %s (its shape at line %d), got %s",
                      KC__Q(name->text), want, v->line, got);
}

/* One operand: a name, or a shape and a name; checks the shape. */
static kc_status* kc__parse_operand(kc__hlo_parser* p, int32_t* out_index) {
  kc__lexer* lx = &p->lx;
  kc__token shape_tok = lx->tok;
  kc_shape* tuple = NULL; /* a tuple shape written before the name */
  kc__array_text array;   /* an array shape written before the name */
  bool has_array = false;
  /* The shape written before the name, if any. */
  if (kc__tok_is_punct(&shape_tok, '(')) {
    kc__layouts ignored;
    memset(&ignored, 0, sizeof ignored);
    KC_RETURN_IF_ERROR(kc__parse_shape(lx, 0, &ignored, &tuple));
  } else if (shape_tok.kind == KC__TOK_IDENT) {
    kc__token next = kc__lex_peek(lx);
    if (kc__tok_is_punct(&next, '[')) {
      kc__layouts ignored;
      memset(&ignored, 0, sizeof ignored);
      KC_RETURN_IF_ERROR(kc__parse_array_text(lx, &ignored, &array));
      has_array = true;
    }
  }
  /* The name, which must be defined, with that shape. */
  kc__token name = lx->tok;
  kc_status* st = NULL;
  int32_t index = -1;
  if (name.kind != KC__TOK_NAME && name.kind != KC__TOK_IDENT) {
    st = kc__lex_expected(lx, &name,
                          tuple || has_array ? "an operand name"
                                             : "an operand (a name, or a shape and a name)");
  } else if ((index = kc__strmap_get(&p->names, name.text)) < 0) {
    st = kc__lex_expected(lx, &name, "the name of an instruction defined earlier");
  } else {
    const kc__hlo_value* v = kc__hlo_value_at(p, index);
    if (tuple && !kc_shape_equal(tuple, v->shape)) {
      st = kc__operand_mismatch(p, &shape_tok, &name, v, tuple);
    } else if (has_array && !kc__array_text_equal(&array, v->shape)) {
      st = kc__array_text_create(lx, &array, &tuple);
      if (!st) st = kc__operand_mismatch(p, &shape_tok, &name, v, tuple);
    }
  }
  kc_shape_destroy(tuple);
  if (st) return st;
  kc__lex_next(lx);
  *out_index = index;
  return NULL;
}

/* "(a, b, ...)" into p->operands (instruction ids) and p->operand_values. */
static kc_status* kc__parse_operands(kc__hlo_parser* p) {
  kc__lexer* lx = &p->lx;
  p->operands.size = 0;
  p->operand_values.size = 0;
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '('));
  for (bool more = kc__lex_list_begin(lx, ')'); more;) {
    int32_t index;
    kc_status* st = kc__parse_operand(p, &index);
    if (st) return st;
    int32_t id = kc__hlo_value_at(p, index)->id;
    if (!kc__buf_append(&p->operands, &id, sizeof id) ||
        !kc__buf_append(&p->operand_values, &index, sizeof index)) {
      return kc__parse_oom();
    }
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, ')', &more));
  }
  return NULL;
}

kc_status* kc__missing_attr(kc__hlo_parser* p, const kc__hlo_instr* ins,
                            const char* attr) {
  return kc__lex_fail(&p->lx, &ins->opcode_tok,
                      "%s %s: expected attribute %s, got none", ins->op->name,
                      KC__Q(ins->name_tok.text), attr);
}

kc_status* kc__expect_operand_count(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                    size_t want) {
  size_t got = kc__num_operands(p);
  if (got == want) return NULL;
  return kc__lex_fail(&p->lx, &ins->opcode_tok, "%s %s: expected %zu operand%s, got %zu",
                      ins->op->name, KC__Q(ins->name_tok.text), want, want == 1 ? "" : "s", got);
}

/* The shape a tuple or get-tuple-element takes from its operands must be
 * the one the text gives it. */
kc_status* kc__check_shape(kc__hlo_parser* p, const kc__hlo_instr* ins,
                           const kc_shape* derived, const char* how) {
  if (derived && kc_shape_equal(derived, ins->shape)) return NULL;
  char want[256] = "no shape", got[256];
  if (derived) kc_shape_format(derived, want, sizeof want);
  kc_shape_format(ins->shape, got, sizeof got);
  return kc__lex_fail(&p->lx, &ins->shape_tok, "%s %s: expected %s (%s), got %s",
                      ins->op->name, KC__Q(ins->name_tok.text), want, how, got);
}

static const kc_shape* kc__operand_shape(kc__hlo_parser* p, size_t i) {
  return kc__operand_value(p, i)->shape;
}

static kc_status* kc__check_tuple(kc__hlo_parser* p, const kc__hlo_instr* ins) {
  size_t n = kc__num_operands(p);
  bool ok = kc_shape_is_tuple(ins->shape) && kc_shape_get_tuple_size(ins->shape) == n;
  for (size_t i = 0; ok && i < n; ++i) {
    ok = kc_shape_equal(kc_shape_get_element(ins->shape, i), kc__operand_shape(p, i));
  }
  if (ok) return NULL;
  kc_shape* derived = NULL;
  const kc_shape** elems = kc__calloc(n + 1, sizeof *elems);
  if (!elems) return kc__parse_oom();
  for (size_t i = 0; i < n; ++i) elems[i] = kc__operand_shape(p, i);
  kc_status* st = kc_shape_create_tuple(elems, n, &derived);
  kc__free(elems);
  if (st) return st;
  st = kc__check_shape(p, ins, derived, "the tuple of its operands");
  kc_shape_destroy(derived);
  return st;
}

/* Typed attributes from a backend_config, for API_VERSION_TYPED_FFI. */
static kc_status* kc__parse_typed_config(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                         kc_attr_dict* out) {
  /* A string holds the dictionary XLA would otherwise print bare; its
   * positions are only approximate when it has escapes. */
  int32_t column = ins->config_tok.column +
                   (ins->config_kind == KC__CONFIG_STRING ? 1 : 0);
  kc__lexer sub;
  kc__lexer_init(&sub, ins->config, ins->config_tok.line, column);
  kc_status* st = kc__parse_typed_attr_dict(&sub, &p->tmp, out);
  if (!st && sub.tok.kind != KC__TOK_END) {
    st = kc__lex_expected(&sub, &sub.tok, "the end of backend_config");
  }
  return kc_status_add_context(st, "in backend_config");
}

static bool kc__looks_like_dict(kc_string_view s) {
  for (size_t i = 0; i < s.size; ++i) {
    char c = s.data[i];
    if (c == '{') return true;
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return false;
}

/* Fills `desc` for the builder; typed attributes, when the call has
 * them, go to *attrs. */
static kc_status* kc__prepare_custom_call(kc__hlo_parser* p,
                                          const kc__hlo_instr* ins,
                                          kc_custom_call_desc* desc,
                                          kc_attr_dict* attrs) {
  if (!(ins->seen & KC__SEEN_TARGET)) {
    return kc__missing_attr(p, ins, "custom_call_target=\"...\"");
  }
  *desc = (kc_custom_call_desc){
      .struct_size = sizeof *desc,
      .target = ins->target,
      .operands = kc__operand_ids(p),
      .num_operands = kc__num_operands(p),
      .result_shape = ins->shape,
      .has_side_effect = ins->has_side_effect,
      .aliases = ins->aliases,
      .num_aliases = ins->num_aliases,
      .schedule = ins->schedule,
      .api_version = ins->api_version,
  };
  bool typed = ins->api_version == KC_XCALL_API_TYPED;
  if (typed && (ins->config_kind == KC__CONFIG_BRACES ||
                (ins->config_kind == KC__CONFIG_STRING &&
                 kc__looks_like_dict(ins->config)))) {
    KC_RETURN_IF_ERROR(kc__parse_typed_config(p, ins, attrs));
    desc->attrs = attrs;
  } else if (ins->config_kind != KC__CONFIG_NONE) {
    /* The legacy conventions take the text as it is; a typed call whose
     * config is not a dictionary gets it as opaque bytes too, and the
     * compiler decides what to make of that. */
    desc->opaque = ins->config.data;
    desc->opaque_size = ins->config.size;
  }
  return NULL;
}

/* Hands a parsed instruction to the builder. */
static kc_status* kc__build_instruction(kc__hlo_parser* p, kc__hlo_instr* ins,
                                        int64_t number, const void* literal,
                                        size_t literal_size, const kc_custom_call_desc* desc,
                                        int32_t* out_id) {
  kc_program_builder* b = p->b;
  kc_string_view name = ins->name_tok.text;
  KC_RETURN_IF_ERROR(kc__scoped_name(p, &name));
  const int32_t* ids = kc__operand_ids(p);
  switch (ins->op->kind) {
    case KC__INSTR_PARAMETER:
      return kc_program_builder_add_parameter(b, number, ins->shape, name, out_id);
    case KC__INSTR_CONSTANT:
      return kc_program_builder_add_constant(b, ins->shape, literal, literal_size,
                                             name, out_id);
    case KC__INSTR_TUPLE:
      return kc_program_builder_add_tuple(b, ids, kc__num_operands(p), name, out_id);
    case KC__INSTR_GET_TUPLE_ELEMENT:
      return kc_program_builder_add_get_tuple_element(b, ids[0], ins->index, name,
                                                      out_id);
    case KC__INSTR_BROADCAST:
      return kc_program_builder_add_broadcast(b, ins->shape, ids[0], ins->dims,
                                              ins->num_dims, name, out_id);
    case KC__INSTR_CUSTOM_CALL:
      return kc__build_custom_call(p, ins, desc, name, out_id);
    case KC__INSTR_BITCAST:
      return kc__build_bitcast(p, ins, name, out_id);
    case KC__INSTR_KERNEL: {
      kc_attr_dict attrs = {.count = ins->attrs.size / sizeof(kc_attr),
                            .entries = (const kc_attr*)(const void*)ins->attrs.data};
      kc_instruction_desc d = {
          .struct_size = sizeof d,
          .op = ins->op->op,
          .result_shape = ins->shape,
          .operands = ids,
          .num_operands = kc__num_operands(p),
          .attrs = &attrs,
      };
      /* Called computations in the order the entry lists their attributes. */
      const kc__hlo_callee* callees = (const kc__hlo_callee*)(const void*)ins->callees.data;
      size_t count = ins->callees.size / sizeof *callees, n = 0;
      kc_program** called = kc__arena_alloc(&p->tmp, (count + 1) * sizeof *called);
      if (!called) return kc__parse_oom();
      for (const char* const* a = ins->op->computation_attrs; a && *a; ++a) {
        for (size_t k = 0; k < count; ++k) {
          if (kc_sv_equal(callees[k].attr, kc_sv(*a))) called[n++] = callees[k].program;
        }
      }
      d.computations = called;
      d.num_computations = n;
      return kc_program_builder_add_instruction(b, &d, name, out_id);
    }
    case KC__INSTR_ELEMENTWISE:
    case KC__INSTR_RESHAPE:
      return kc_program_builder_add_op(b, (kc_opcode)ins->op->op, ins->shape, ids,
                                       kc__num_operands(p), name, out_id);
    case KC__INSTR_CALL:
    case KC__INSTR_COPY:
    case KC__INSTR_EXPANDED:
      break; /* bound to another's value before */
  }
  return kc_status_create(KC_INTERNAL, "%s %s: not an instruction to build", ins->op->name,
                          KC__Q(ins->name_tok.text));
}

/* The element of its operand that a get-tuple-element names. */
static kc_status* kc__check_get_tuple_element(kc__hlo_parser* p,
                                              const kc__hlo_instr* ins) {
  const kc_shape* tuple = kc__operand_shape(p, 0);
  const kc_shape* elem =
      ins->index >= 0 ? kc_shape_get_element(tuple, (size_t)ins->index) : NULL;
  if (!elem) {
    char text[256];
    kc_shape_format(tuple, text, sizeof text);
    return kc__lex_fail(&p->lx, &ins->opcode_tok,
                        "get-tuple-element %s: index %lld is not an element "
                        "of its operand's shape %s",
                        KC__Q(ins->name_tok.text),
                        (long long)ins->index, text);
  }
  char how[64];
  snprintf(how, sizeof how, "element %lld of its operand", (long long)ins->index);
  return kc__check_shape(p, ins, elem, how);
}

/* A copy: since every layout kcall accepts is the row-major one, a copy
 * is its operand's value, and the program refers to the operand. (Where a
 * custom call updates an operand in place, compile copies it first.) */
static kc_status* kc__bind_copy(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                int32_t* out_id) {
  KC_RETURN_IF_ERROR(kc__expect_operand_count(p, ins, 1));
  KC_RETURN_IF_ERROR(kc__check_shape(p, ins, kc__operand_shape(p, 0), "the shape of its operand"));
  *out_id = kc__operand_ids(p)[0];
  return NULL;
}

/* The custom calls that only annotate how a value is sharded across
 * devices (JAX prints them around results and parameters): on one device
 * each is its operand. */
static bool kc__is_sharding_annotation(const kc__hlo_instr* ins) {
  static const char* const targets[] = {"Sharding", "xla.sdy.FuncResultSharding",
                                        "xla.sdy.FuncArgSharding"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(targets); ++i) {
    if (kc_sv_equal(ins->target, kc_sv(targets[i]))) return true;
  }
  return false;
}

/* XLA:CPU's custom call "TopK", what it makes of a topk instruction: a
 * topk of its one operand, the largest first, k the result's minor
 * dimension (the comparator it names is always that order). */
static kc_status* kc__build_topk_call(kc__hlo_parser* p, kc__hlo_instr* ins, int32_t* out_id) {
  KC_RETURN_IF_ERROR(kc__expect_operand_count(p, ins, 1));
  const kc_shape* s = ins->shape;
  const kc_shape* values = kc_shape_is_tuple(s) && kc_shape_get_tuple_size(s) == 2
                               ? kc_shape_get_element(s, 0)
                               : NULL;
  if (!values || kc_shape_is_tuple(values) || kc_shape_get_rank(values) < 1) {
    char g[256];
    kc_shape_format(s, g, sizeof g);
    return kc__lex_fail(&p->lx, &ins->opcode_tok,
                        "custom-call %s to TopK: expected a result (values, indices) of "
                        "arrays of rank 1 or more, got %s",
                        KC__Q(ins->name_tok.text), g);
  }
  kc_attr attrs[2];
  memset(attrs, 0, sizeof attrs);
  attrs[0].name = KC_SV_LIT("k");
  attrs[0].type = KC_ATTR_I64;
  attrs[0].v.i64 = kc_shape_get_dims(values)[kc_shape_get_rank(values) - 1];
  attrs[1].name = KC_SV_LIT("largest");
  attrs[1].type = KC_ATTR_BOOL;
  attrs[1].v.b = true;
  kc_attr_dict dict = {.count = 2, .entries = attrs};
  kc_instruction_desc d = {
      .struct_size = sizeof d,
      .op = KC_OP_TOPK,
      .result_shape = s,
      .operands = kc__operand_ids(p),
      .num_operands = 1,
      .attrs = &dict,
  };
  kc_string_view name = ins->name_tok.text;
  kc_status* st = kc__scoped_name(p, &name);
  if (!st) st = kc_program_builder_add_instruction(p->b, &d, name, out_id);
  if (st) {
    return kc_status_add_context(st, "line %d, column %d: instruction %s",
                                 ins->name_tok.line, ins->name_tok.column,
                                 KC__Q(ins->name_tok.text));
  }
  return kc_program_builder_set_location(p->b, *out_id, ins->name_tok.line,
                                         ins->name_tok.column);
}

/* Everything after the opcode; hands the instruction to the builder. */
static kc_status* kc__parse_body(kc__hlo_parser* p, kc__hlo_instr* ins,
                                 int32_t* out_id) {
  kc__lexer* lx = &p->lx;
  int64_t number = 0;
  void* literal = NULL;
  size_t literal_size = 0;
  kc_custom_call_desc desc;
  kc_attr_dict attrs;
  p->operands.size = 0;
  p->operand_values.size = 0;
  kc__instr_kind kind = ins->op->kind;
  /* What the parentheses hold: a parameter's number, a constant's
   * literal, or operands. */
  if (kind == KC__INSTR_PARAMETER) {
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '('));
    KC_RETURN_IF_ERROR(kc__lex_int(lx, "a parameter number", 0, INT64_MAX, &number));
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, ')'));
  } else if (kind == KC__INSTR_CONSTANT) {
    if (ins->layouts.first_f8 && !kc_shape_is_tuple(ins->shape)) {
      KC_RETURN_IF_ERROR(kc__f8_constant(p, ins, &literal, &literal_size));
    } else {
      KC_RETURN_IF_ERROR(kc__parse_constant(p, ins, &literal, &literal_size));
    }
    if (ins->layouts.any_narrow) {
      KC_RETURN_IF_ERROR(kc__narrow_constant(p, ins, literal, literal_size));
    }
  } else {
    KC_RETURN_IF_ERROR(kc__parse_operands(p));
  }
  KC_RETURN_IF_ERROR(kc__parse_attrs(p, ins));
  /* Instructions that add nothing: their value is another's. */
  if (kind == KC__INSTR_PARAMETER && p->inlined) return kc__bind_parameter(p, ins, number, out_id);
  if (kind == KC__INSTR_CALL) return kc__inline_call(p, ins, out_id);
  if (kind == KC__INSTR_EXPANDED) {
    KC_RETURN_IF_ERROR(kc__build_expanded(p, ins, out_id));
    return kc__narrow_finish(p, ins, out_id);
  }
  if (kind == KC__INSTR_COPY) return kc__bind_copy(p, ins, out_id);
  if (kind == KC__INSTR_CUSTOM_CALL && kc__is_sharding_annotation(ins)) {
    return kc__bind_copy(p, ins, out_id);
  }
  if (kind == KC__INSTR_CUSTOM_CALL && kc_sv_equal(ins->target, KC_SV_LIT("TopK"))) {
    return kc__build_topk_call(p, ins, out_id);
  }
  /* What the builder cannot check from the text it is given. */
  kc_shape* f8_saved = NULL;
  kc_status* st = kc__narrow_prepare(p, ins);
  if (!st) st = kc__f8_prepare(p, ins, &f8_saved);
  switch (st ? KC__INSTR_KERNEL : kind) {
    case KC__INSTR_TUPLE:
      st = kc__check_tuple(p, ins);
      break;
    case KC__INSTR_GET_TUPLE_ELEMENT:
      st = kc__expect_operand_count(p, ins, 1);
      if (!st && !(ins->seen & KC__SEEN_INDEX)) st = kc__missing_attr(p, ins, "index=N");
      if (!st) st = kc__check_get_tuple_element(p, ins);
      break;
    case KC__INSTR_BROADCAST:
      st = kc__expect_operand_count(p, ins, 1);
      if (!st && !(ins->seen & KC__SEEN_DIMENSIONS)) {
        st = kc__missing_attr(p, ins, "dimensions={...}");
      }
      break;
    case KC__INSTR_ELEMENTWISE:
    case KC__INSTR_RESHAPE:
    case KC__INSTR_BITCAST:
      st = kc__expect_operand_count(p, ins, (size_t)ins->op->min_operands);
      break;
    case KC__INSTR_CUSTOM_CALL:
      st = kc__prepare_custom_call(p, ins, &desc, &attrs);
      break;
    default:
      break;
  }
  if (!st && (ins->seen & KC__SEEN_ALGORITHM)) st = kc__apply_dot_algorithm(p, ins);
  if (st) {
    if (f8_saved) kc__f8_finish(p, ins, f8_saved, NULL);
    return st;
  }
  /* Built, and located for messages at run time. */
  if ((kind == KC__INSTR_ELEMENTWISE || kind == KC__INSTR_KERNEL) && kc__is_complex_form(p, ins)) {
    kc_string_view name = ins->name_tok.text;
    st = kc__scoped_name(p, &name);
    if (!st) st = kc__build_complex_form(p, ins, name, out_id);
  } else {
    st = kc__build_instruction(p, ins, number, literal, literal_size, &desc, out_id);
  }
  if (!st) st = kc_program_builder_set_location(p->b, *out_id, ins->name_tok.line,
                                                ins->name_tok.column);
  if (f8_saved) {
    /* without an id (a failure) it only gives the shape back */
    kc_status* f8_st = kc__f8_finish(p, ins, f8_saved, st ? NULL : out_id);
    if (!st) st = f8_st;
  }
  if (!st) st = kc__narrow_finish(p, ins, out_id);
  if (st) {
    return kc_status_add_context(st, "line %d, column %d: instruction %s",
                                 ins->name_tok.line, ins->name_tok.column,
                                 KC__Q(ins->name_tok.text));
  }
  return NULL;
}

/* Remembers a built instruction under its name; takes its shape. */
static kc_status* kc__record_value(kc__hlo_parser* p, kc__hlo_instr* ins, int32_t id,
                                   int32_t* out_index) {
  kc__hlo_value v = {
      .name = ins->name_tok.text,
      .shape = ins->shape,
      .id = id,
      .line = ins->name_tok.line,
      .nondefault = ins->layouts.nondefault > 0,
      .narrow = kc_shape_is_tuple(ins->shape) ? 0 : ins->layouts.first_narrow,
      .f8 = kc_shape_is_tuple(ins->shape) ? 0 : ins->layouts.first_f8,
  };
  memcpy(v.m2m, ins->layouts.first, sizeof v.m2m);
  size_t count = p->values.size / sizeof v;
  if (count >= INT32_MAX || !kc__buf_append(&p->values, &v, sizeof v)) {
    return kc__parse_oom();
  }
  ins->shape = NULL;
  *out_index = (int32_t)count;
  return kc__strmap_put(&p->names, v.name, (int32_t)count) ? NULL : kc__parse_oom();
}

/* The head of an instruction: [ROOT] name = SHAPE opcode. */
static kc_status* kc__parse_head(kc__hlo_parser* p, kc__hlo_instr* ins,
                                 bool* out_root) {
  kc__lexer* lx = &p->lx;
  kc__token root_tok = lx->tok;
  *out_root = false;
  /* ROOT, unless it is the instruction's name ("ROOT = ..."). */
  if (kc__tok_is_word(&root_tok, "ROOT")) {
    kc__token next = kc__lex_peek(lx);
    if (!kc__tok_is_punct(&next, '=')) {
      if (p->root >= 0) {
        const kc__hlo_value* first = kc__hlo_value_at(p, p->root);
        return kc__lex_fail(lx, &root_tok,
                            "expected one ROOT instruction, got a second (the "
                            "first is %s at line %d)",
                            KC__Q(first->name), first->line);
      }
      *out_root = true;
      kc__lex_next(lx);
    }
  }
  /* The name, new in this scope. */
  ins->name_tok = lx->tok;
  if (ins->name_tok.kind != KC__TOK_NAME && ins->name_tok.kind != KC__TOK_IDENT) {
    return kc__lex_expected(lx, &ins->name_tok, "an instruction or '}'");
  }
  int32_t earlier = kc__strmap_get(&p->names, ins->name_tok.text);
  if (earlier >= 0) {
    return kc__lex_fail(lx, &ins->name_tok,
                        "instruction %s is defined twice (first at line %d)",
                        KC__Q(ins->name_tok.text),
                        kc__hlo_value_at(p, earlier)->line);
  }
  kc__lex_next(lx);
  /* "= SHAPE opcode" */
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '='));
  ins->shape_tok = lx->tok;
  KC_RETURN_IF_ERROR(kc__parse_shape(lx, 0, &ins->layouts, &ins->shape));
  ins->opcode_tok = lx->tok;
  if (ins->opcode_tok.kind != KC__TOK_IDENT) {
    return kc__lex_expected(lx, &ins->opcode_tok, "an opcode");
  }
  ins->op = kc__hlo_opcode_find(ins->opcode_tok.text);
  if (!ins->op) {
    char supported[2048];
    kc__hlo_opcode_list(supported, sizeof supported);
    return kc__lex_fail(lx, &ins->opcode_tok,
                        "instruction %s: opcode %s is not supported "
                        "(supported: %s)",
                        KC__Q(ins->name_tok.text), KC__Q(ins->opcode_tok.text), supported);
  }
  kc__lex_next(lx);
  return NULL;
}

static kc_status* kc__parse_instruction(kc__hlo_parser* p) {
  kc__hlo_instr ins;
  memset(&ins, 0, sizeof ins);
  bool is_root = false;
  int32_t id = -1, index = -1;
  kc_status* st = kc__parse_head(p, &ins, &is_root);
  if (!st) st = kc__parse_body(p, &ins, &id);
  if (!st) st = kc__record_value(p, &ins, id, &index);
  if (!st && is_root) p->root = index;
  kc_shape_destroy(ins.shape);
  kc__buf_free(&ins.attrs);
  kc__buf_free(&ins.constraints);
  kc__buf_free(&ins.callees);
  kc__arena_free(&p->tmp);
  return st;
}

/* ---- computations and modules -------------------------------------------- */

/* ", key=value" pairs nobody reads (module and computation headers). */
static kc_status* kc__skip_attrs(kc__lexer* lx) {
  while (kc__tok_is_punct(&lx->tok, ',')) {
    kc__lex_next(lx);
    if (lx->tok.kind != KC__TOK_IDENT) {
      return kc__lex_expected(lx, &lx->tok, "an attribute name");
    }
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '='));
    KC_RETURN_IF_ERROR(kc__lex_skip_value(lx));
  }
  return NULL;
}

/* An optional signature "(params) -> shape" before a computation's '{'. */
static kc_status* kc__skip_signature(kc__lexer* lx) {
  if (kc__tok_is_punct(&lx->tok, '(')) {
    KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
  }
  if (!kc__tok_is_punct(&lx->tok, '-')) return NULL;
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '>'));
  for (;;) {
    const kc__token* t = &lx->tok;
    if (t->kind == KC__TOK_END || t->kind == KC__TOK_ERROR) {
      return kc__lex_expected(lx, t, "'{'");
    }
    if (kc__tok_is_punct(t, '{')) {
      /* A layout of the result shape holds numbers; the body does not. */
      kc__token next = kc__lex_peek(lx);
      if (next.kind != KC__TOK_NUMBER) return NULL;
    }
    if (kc__tok_is_punct(t, '{') || kc__tok_is_punct(t, '(') || kc__tok_is_punct(t, '[')) {
      KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
    } else {
      kc__lex_next(lx);
    }
  }
}

/* "{ instructions }": the body of a computation, at its '{'. Without a
 * ROOT the last instruction is the result, as in XLA. */
kc_status* kc__parse_scope(kc__hlo_parser* p) {
  kc__lexer* lx = &p->lx;
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '{'));
  if (kc__tok_is_punct(&lx->tok, '}')) {
    return kc__lex_expected(lx, &lx->tok, "an instruction");
  }
  while (!kc__tok_is_punct(&lx->tok, '}')) {
    KC_RETURN_IF_ERROR(kc__parse_instruction(p));
  }
  kc__lex_next(lx);
  if (p->root < 0) p->root = (int32_t)(p->values.size / sizeof(kc__hlo_value)) - 1;
  return NULL;
}

/* A computation other than the entry: remembered, and parsed where a
 * fusion or call names it. */
static kc_status* kc__record_computation(kc__hlo_parser* p) {
  kc__lexer* lx = &p->lx;
  kc__token name = lx->tok;
  kc__hlo_module* m = p->module;
  if (kc__strmap_get(&m->names, name.text) >= 0) {
    return kc__lex_fail(lx, &name, "computation %s is defined twice",
                        KC__Q(name.text));
  }
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__skip_signature(lx));
  if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{'");
  kc__hlo_computation c = {.name = name.text, .at = *lx};
  size_t count = m->computations.size / sizeof c;
  if (count >= INT32_MAX || !kc__buf_append(&m->computations, &c, sizeof c) ||
      !kc__strmap_put(&m->names, name.text, (int32_t)count)) {
    return kc__parse_oom();
  }
  KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
  return kc__skip_attrs(lx);
}

static kc_status* kc__parse_entry(kc__hlo_parser* p) {
  kc__lexer* lx = &p->lx;
  kc__lex_next(lx); /* ENTRY */
  if (lx->tok.kind != KC__TOK_NAME && lx->tok.kind != KC__TOK_IDENT) {
    return kc__lex_expected(lx, &lx->tok, "a computation name");
  }
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__skip_signature(lx));
  KC_RETURN_IF_ERROR(kc__parse_scope(p));
  return kc__skip_attrs(lx);
}

/* The debug tables JAX prints after the module's header (FileNames,
 * FunctionNames, FileLocations, StackFrames): rows of "N value" that only
 * metadata refers to, which kcall does not read. */
static bool kc__is_debug_table(const kc__token* t) {
  static const char* const tables[] = {"FileNames", "FunctionNames",
                                       "FileLocations", "StackFrames"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(tables); ++i) {
    if (kc__tok_is_word(t, tables[i])) return true;
  }
  return false;
}

static kc_status* kc__skip_debug_table(kc__lexer* lx) {
  kc__token table = lx->tok;
  kc__lex_next(lx);
  while (lx->tok.kind == KC__TOK_NUMBER) {
    kc__lex_next(lx);
    const kc__token* t = &lx->tok;
    if (t->kind == KC__TOK_STRING) {
      kc__lex_next(lx);
    } else if (kc__tok_is_punct(t, '{')) {
      KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
    } else {
      return kc_status_add_context(
          kc__lex_expected(lx, t, "a string or '{...}' after the row number"),
          "in debug table %s", KC__Q(table.text));
    }
  }
  return NULL;
}

static kc_status* kc__parse_module(kc__hlo_parser* p, kc_program** out) {
  kc__lexer* lx = &p->lx;
  if (!kc__tok_is_word(&lx->tok, "HloModule")) {
    return kc__lex_expected(lx, &lx->tok, "'HloModule'");
  }
  kc__lex_next(lx);
  kc__token name = lx->tok;
  if (name.kind != KC__TOK_IDENT && name.kind != KC__TOK_NAME) {
    return kc__lex_expected(lx, &name, "a module name");
  }
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__skip_attrs(lx));
  KC_RETURN_IF_ERROR(kc_program_builder_create(name.text, &p->b));
  p->module->top = p->b;
  bool have_entry = false;
  while (lx->tok.kind != KC__TOK_END) {
    kc__token t = lx->tok;
    if (kc__tok_is_word(&t, "ENTRY")) {
      if (have_entry) {
        return kc__lex_fail(lx, &t, "expected one ENTRY computation, got a second");
      }
      have_entry = true;
      KC_RETURN_IF_ERROR(kc__parse_entry(p));
    } else if (kc__is_debug_table(&t) && kc__lex_peek(lx).kind == KC__TOK_NUMBER) {
      KC_RETURN_IF_ERROR(kc__skip_debug_table(lx));
    } else if (t.kind == KC__TOK_IDENT || t.kind == KC__TOK_NAME) {
      KC_RETURN_IF_ERROR(kc__record_computation(p));
    } else {
      return kc__lex_expected(lx, &t, "a computation");
    }
  }
  if (!have_entry) return kc__lex_expected(lx, &lx->tok, "an ENTRY computation");
  KC_RETURN_IF_ERROR(kc_program_builder_set_root(p->b, kc__hlo_value_at(p, p->root)->id));
  kc_program_builder* b = p->b;
  p->b = NULL; /* finish consumes it, whether or not it succeeds */
  return kc_program_builder_finish(b, out);
}

/* Frees what a parser of one scope holds (not the builder). */
void kc__parser_free(kc__hlo_parser* p) {
  kc__hlo_value* values = (kc__hlo_value*)(void*)p->values.data;
  for (size_t i = 0; i < p->values.size / sizeof *values; ++i) {
    kc_shape_destroy(values[i].shape);
  }
  kc__buf_free(&p->values);
  kc__buf_free(&p->operands);
  kc__buf_free(&p->operand_values);
  kc__buf_free(&p->path);
  kc__buf_free(&p->literal);
  kc__strmap_free(&p->names);
  kc__arena_free(&p->tmp);
}

kc_status* kc_program_parse(kc_string_view text, kc_program** out_program) {
  return kc_program_parse_with(text, NULL, out_program);
}

static const char* kc__param_name(const void* ctx, size_t i) {
  return kc_program_get_parameter_name(ctx, i);
}

/* HLO text fixes every shape: those given must be the parameters'. */
static kc_status* kc__check_given_shapes(const kc_program* p, const kc_parse_options* o) {
  size_t n = kc_program_get_parameter_count(p);
  KC_RETURN_IF_ERROR(kc__check_given_names(o, n, kc__param_name, p));
  for (size_t i = 0; i < n; ++i) {
    const kc_shape* given = kc__given_shape(o, i, kc_program_get_parameter_name(p, i));
    const kc_shape* have = kc_program_get_parameter_shape(p, i);
    if (given && !kc_shape_equal(given, have)) {
      char a[128], b[128];
      kc_shape_format(given, a, sizeof a);
      kc_shape_format(have, b, sizeof b);
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "parameter %zu (%s): the shape given, %s, is not its shape %s", i,
                              kc_program_get_parameter_name(p, i), a, b);
    }
  }
  return NULL;
}

kc_status* kc_program_parse_with(kc_string_view text, const kc_parse_options* options,
                                 kc_program** out_program) {
  if (!out_program || (!text.data && text.size)) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_program_parse: %s is NULL",
                            out_program ? "text" : "out_program");
  }
  *out_program = NULL;
  kc_parse_options o;
  memset(&o, 0, sizeof o);
  if (options) {
    size_t n = options->struct_size < sizeof o ? options->struct_size : sizeof o;
    memcpy(&o, options, n);
    o.struct_size = sizeof o;
    if (o.num_parameter_shapes && !o.parameter_shapes) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "kc_program_parse_with: parameter_shapes is NULL with "
                              "num_parameter_shapes %zu", o.num_parameter_shapes);
    }
    if (o.num_dims && (!o.dim_names || !o.dim_values)) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "kc_program_parse_with: dim_names or dim_values is NULL with "
                              "num_dims %zu", o.num_dims);
    }
  }
  kc__hlo_module module;
  memset(&module, 0, sizeof module);
  kc__hlo_parser p = {.root = -1, .module = &module};
  /* A byte-order mark, as some editors write, is not part of the text. */
  if (text.size >= 3 && memcmp(text.data, "\xEF\xBB\xBF", 3) == 0) {
    text.data += 3;
    text.size -= 3;
  }
  /* A serialized jax.export (Exported.serialize(): a flatbuffer around a
   * portable artifact and its calling convention). */
  if (kc__jax_exported_detect(text)) {
    return kc__jax_exported_parse(text, &o, out_program);
  }
  if (o.num_dims) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_program_parse_with: dimension variables are read only for a "
                            "serialized jax.export, whose input avals name them; give this "
                            "program's parameter shapes instead");
  }
  /* A StableHLO portable artifact (jax.export's MLIR bytecode) is read as its text. */
  if (kc__stablehlo_bytecode_detect(text)) {
    return kc__stablehlo_bytecode_parse(text, &o, out_program);
  }
  /* MLIR text (StableHLO, as JAX prints it) goes to its own reader. */
  if (kc__stablehlo_detect(text)) {
    return kc__program_formatted(kc__stablehlo_parse(text, &o, out_program), out_program,
                                 KC_SV_LIT("StableHLO text"));
  }
  kc__lexer_init(&p.lx, text, 1, 1);
  kc_status* st = kc__parse_module(&p, out_program);
  st = kc__program_formatted(st, out_program, KC_SV_LIT("HLO text"));
  if (!st && o.num_parameter_shapes) {
    st = kc__check_given_shapes(*out_program, &o);
    if (st) {
      kc_program_destroy(*out_program);
      *out_program = NULL;
    }
  }
  kc_program_builder_destroy(p.b);
  kc__parser_free(&p);
  kc__hlo_computation* comps = (kc__hlo_computation*)(void*)module.computations.data;
  for (size_t i = 0; i < module.computations.size / sizeof *comps; ++i) {
    kc_program_destroy(comps[i].program);
  }
  kc__strmap_free(&module.names);
  kc__buf_free(&module.computations);
  return st;
}
