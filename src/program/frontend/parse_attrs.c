/* The ", key=value" attributes of an HLO instruction: those of the
 * instructions the parser builds itself (get-tuple-element, broadcast,
 * fusion and call, custom-call); those of kernel instructions go to
 * parse_attrs_table.c; any other is skipped and counted, or refused when
 * it changes what the instruction computes. */
#include <stdio.h>

#include "program/frontend/parse_internal.h"

/* "{1, 2}" into p->path, then copied into tmp; `what` names the list
 * ("an output index") in messages. */
kc_status* kc__parse_int_list(kc__hlo_parser* p, const char* what,
                              const int64_t** out, size_t* out_count) {
  kc__lexer* lx = &p->lx;
  p->path.size = 0;
  if (!kc__tok_is_punct(&lx->tok, '{')) {
    char text[96];
    snprintf(text, sizeof text, "'{' starting %s", what);
    return kc__lex_expected(lx, &lx->tok, text);
  }
  kc__lex_next(lx);
  for (bool more = kc__lex_list_begin(lx, '}'); more;) {
    int64_t v;
    KC_RETURN_IF_ERROR(kc__lex_int(lx, "a non-negative integer", 0, INT64_MAX, &v));
    if (!kc__buf_append(&p->path, &v, sizeof v)) return kc__parse_oom();
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, '}', &more));
  }
  *out_count = p->path.size / sizeof(int64_t);
  *out = kc__arena_dup(&p->tmp, p->path.data, p->path.size);
  return *out ? NULL : kc__parse_oom();
}

/* output_to_operand_aliasing={{}: (0, {}), {1}: (2, {0})} */
static kc_status* kc__parse_aliasing(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  kc__buf list = {0};
  kc_status* st = kc__lex_expect(lx, '{');
  for (bool more = !st && kc__lex_list_begin(lx, '}'); more;) {
    kc_output_operand_alias a;
    memset(&a, 0, sizeof a);
    int64_t operand = 0;
    st = kc__parse_int_list(p, "an output index", &a.output_index, &a.output_index_size);
    if (!st) st = kc__lex_expect(lx, ':');
    if (!st) st = kc__lex_expect(lx, '(');
    if (!st) st = kc__lex_int(lx, "an operand number", 0, INT32_MAX, &operand);
    if (!st) st = kc__lex_expect(lx, ',');
    if (!st) {
      st = kc__parse_int_list(p, "an operand index", &a.operand_index,
                              &a.operand_index_size);
    }
    if (!st) st = kc__lex_expect(lx, ')');
    if (st) break;
    a.operand = (int32_t)operand;
    if (!kc__buf_append(&list, &a, sizeof a)) {
      st = kc__parse_oom();
      break;
    }
    st = kc__lex_list_next(lx, '}', &more);
    if (st) break;
  }
  if (!st) {
    ins->num_aliases = list.size / sizeof(kc_output_operand_alias);
    ins->aliases = kc__arena_dup(&p->tmp, list.data, list.size);
    if (!ins->aliases) st = kc__parse_oom();
  }
  kc__buf_free(&list);
  return st;
}

typedef struct kc__word_value {
  const char* word;
  int32_t value;
} kc__word_value;

static const kc__word_value kc__api_words[] = {
    {"API_VERSION_ORIGINAL", KC_XCALL_API_ORIGINAL},
    {"API_VERSION_STATUS_RETURNING", KC_XCALL_API_STATUS_RETURNING},
    {"API_VERSION_STATUS_RETURNING_UNIFIED", KC_XCALL_API_STATUS_RETURNING_UNIFIED},
    {"API_VERSION_TYPED_FFI", KC_XCALL_API_TYPED},
};

static const kc__word_value kc__schedule_words[] = {
    {"SCHEDULE_NONE", KC_SCHEDULE_NONE},
    {"SCHEDULE_LATEST", KC_SCHEDULE_LATEST},
    {"SCHEDULE_EARLIEST", KC_SCHEDULE_EARLIEST},
};

static const kc__word_value kc__bool_words[] = {{"false", 0}, {"true", 1}};

static kc_status* kc__parse_enum_word(kc__lexer* lx, const kc__word_value* words,
                                      size_t count, const char* what, int32_t* out) {
  for (size_t i = 0; i < count; ++i) {
    if (kc__tok_is_word(&lx->tok, words[i].word)) {
      *out = words[i].value;
      kc__lex_next(lx);
      return NULL;
    }
  }
  return kc__lex_expected(lx, &lx->tok, what);
}

static kc_status* kc__parse_backend_config(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  ins->config_tok = lx->tok;
  if (lx->tok.kind == KC__TOK_STRING) {
    ins->config_kind = KC__CONFIG_STRING;
    KC_RETURN_IF_ERROR(kc__lex_string(lx, &lx->tok, KC__ESCAPES_HLO, &p->tmp, &ins->config));
    kc__lex_next(lx);
    return NULL;
  }
  if (!kc__tok_is_punct(&lx->tok, '{')) {
    return kc__lex_expected(lx, &lx->tok, "a string or '{'");
  }
  /* Kept as written: whether it is typed attributes or opaque bytes
   * depends on api_version, which may come later. */
  const char* start = lx->tok.text.data;
  kc__token close;
  KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, &close));
  ins->config_kind = KC__CONFIG_BRACES;
  ins->config.data = start;
  ins->config.size = (size_t)(close.text.data + 1 - start);
  return NULL;
}

/* Marks attribute `bit` as given; the second time is an error. */
static kc_status* kc__attr_once(kc__hlo_parser* p, kc__hlo_instr* ins,
                                const kc__token* key, uint32_t bit) {
  if (ins->seen & bit) {
    return kc__lex_fail(&p->lx, key, "attribute %s is given twice",
                        KC__Q(key->text));
  }
  ins->seen |= bit;
  return NULL;
}

/* operand_layout_constraints={f32[3,4]{0,1}, ...}: the layout each
 * operand is handed over in. */
static kc_status* kc__parse_constraints(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '{'));
  for (bool more = kc__lex_list_begin(lx, '}'); more;) {
    size_t i = ins->constraints.size / sizeof(kc__hlo_constraint);
    kc__layouts layouts;
    memset(&layouts, 0, sizeof layouts);
    kc_shape* shape = NULL;
    KC_RETURN_IF_ERROR(kc__parse_shape(lx, 0, &layouts, &shape));
    kc_shape_destroy(shape);
    if (layouts.nondefault && layouts.leaves > 1) {
      return kc__lex_fail(lx, &lx->tok,
                          "operand %zu: a tuple constraint with non-default layouts is not "
                          "supported",
                          i);
    }
    kc__hlo_constraint c;
    memcpy(c.m2m, layouts.first, sizeof c.m2m);
    c.nondefault = layouts.nondefault > 0;
    if (!kc__buf_append(&ins->constraints, &c, sizeof c)) return kc__parse_oom();
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, '}', &more));
  }
  return NULL;
}

/* An attribute a custom call reads; *out_handled false leaves any other
 * for the caller to skip. */
static kc_status* kc__parse_custom_call_attr(kc__hlo_parser* p, kc__hlo_instr* ins,
                                             const kc__token* key, bool* out_handled) {
  kc__lexer* lx = &p->lx;
  kc_string_view k = key->text;
  *out_handled = true;
  kc_status* st = NULL;
  int32_t v = 0;
  if (kc_sv_equal(k, KC_SV_LIT("custom_call_target"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_TARGET);
    if (!st) st = kc__lex_string(lx, &lx->tok, KC__ESCAPES_HLO, &p->tmp, &ins->target);
    if (!st) kc__lex_next(lx);
  } else if (kc_sv_equal(k, KC_SV_LIT("api_version"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_API);
    if (!st) {
      st = kc__parse_enum_word(lx, kc__api_words, KC__ARRAY_SIZE(kc__api_words),
                               "an API version (API_VERSION_ORIGINAL, "
                               "API_VERSION_STATUS_RETURNING, "
                               "API_VERSION_STATUS_RETURNING_UNIFIED or "
                               "API_VERSION_TYPED_FFI)",
                               &ins->api_version);
    }
  } else if (kc_sv_equal(k, KC_SV_LIT("backend_config"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_CONFIG);
    if (!st) st = kc__parse_backend_config(p, ins);
  } else if (kc_sv_equal(k, KC_SV_LIT("custom_call_has_side_effect"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_SIDE_EFFECT);
    if (!st) {
      st = kc__parse_enum_word(lx, kc__bool_words, 2, "true or false", &v);
      ins->has_side_effect = v != 0;
    }
  } else if (kc_sv_equal(k, KC_SV_LIT("operand_layout_constraints"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_CONSTRAINTS);
    if (!st) st = kc__parse_constraints(p, ins);
  } else if (kc_sv_equal(k, KC_SV_LIT("output_to_operand_aliasing"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_ALIASING);
    if (!st) st = kc__parse_aliasing(p, ins);
  } else if (kc_sv_equal(k, KC_SV_LIT("schedule")) ||
             kc_sv_equal(k, KC_SV_LIT("custom_call_schedule"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_SCHEDULE);
    if (!st) {
      st = kc__parse_enum_word(lx, kc__schedule_words, KC__ARRAY_SIZE(kc__schedule_words),
                               "SCHEDULE_NONE, SCHEDULE_LATEST or SCHEDULE_EARLIEST",
                               &ins->schedule);
    }
  } else {
    *out_handled = false;
  }
  return st;
}

/* The value of attribute `key` if this kind of instruction reads it;
 * *out_handled false leaves it for the caller to skip. */
static kc_status* kc__parse_known_attr(kc__hlo_parser* p, kc__hlo_instr* ins,
                                       const kc__token* key, bool* out_handled) {
  kc__lexer* lx = &p->lx;
  kc__instr_kind kind = ins->op->kind;
  kc_string_view k = key->text;
  *out_handled = true;
  if (kind == KC__INSTR_GET_TUPLE_ELEMENT && kc_sv_equal(k, KC_SV_LIT("index"))) {
    KC_RETURN_IF_ERROR(kc__attr_once(p, ins, key, KC__SEEN_INDEX));
    return kc__lex_int(lx, "a tuple index", 0, INT64_MAX, &ins->index);
  }
  if (kind == KC__INSTR_BROADCAST && kc_sv_equal(k, KC_SV_LIT("dimensions"))) {
    KC_RETURN_IF_ERROR(kc__attr_once(p, ins, key, KC__SEEN_DIMENSIONS));
    return kc__parse_int_list(p, "the dimensions", &ins->dims, &ins->num_dims);
  }
  if (kind == KC__INSTR_CALL &&
      kc_sv_equal(k, kc_sv(kc__hlo_callee_attr(ins->op)))) {
    KC_RETURN_IF_ERROR(kc__attr_once(p, ins, key, KC__SEEN_CALLEE));
    if (lx->tok.kind != KC__TOK_NAME && lx->tok.kind != KC__TOK_IDENT) {
      return kc__lex_expected(lx, &lx->tok, "a computation name");
    }
    ins->callee = lx->tok;
    kc__lex_next(lx);
    return NULL;
  }
  if (ins->op->op == KC_OP_DOT && kc_sv_equal(k, KC_SV_LIT("algorithm"))) {
    KC_RETURN_IF_ERROR(kc__attr_once(p, ins, key, KC__SEEN_ALGORITHM));
    if (lx->tok.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &lx->tok, "an algorithm name");
    ins->algorithm = lx->tok;
    kc__lex_next(lx);
    return NULL;
  }
  if (kind == KC__INSTR_KERNEL || kind == KC__INSTR_EXPANDED) {
    return kc__parse_table_attr(p, ins, key, out_handled);
  }
  if (kind == KC__INSTR_CUSTOM_CALL) return kc__parse_custom_call_attr(p, ins, key, out_handled);
  *out_handled = false;
  return NULL;
}

/* Attributes that change what an instruction computes, which kcall would
 * rather refuse than skip where the instruction does not read them (a
 * dot's algorithm, an accuracy asked of a transcendental function, the
 * layout of a sub-byte or tiled type). Others are skipped and counted
 * (kc_program_get_skipped_attribute). */
static bool kc__changes_meaning(kc_string_view name) {
  static const char* const words[] = {"algorithm", "result_accuracy", "exponent_bits",
                                      "mantissa_bits", "feature_group_count",
                                      "batch_group_count", "dim_labels", "is_stable",
                                      "indices_are_sorted", "unique_indices"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(words); ++i) {
    if (kc_sv_equal(name, kc_sv(words[i]))) return true;
  }
  return false;
}

/* ", key=value" pairs up to the end of the instruction. */
kc_status* kc__parse_attrs(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  while (kc__tok_is_punct(&lx->tok, ',')) {
    kc__lex_next(lx);
    kc__token key = lx->tok;
    if (key.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &key, "an attribute name");
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '='));
    bool handled = false;
    kc_status* st = kc__parse_known_attr(p, ins, &key, &handled);
    if (!st && !handled && kc__changes_meaning(key.text)) {
      st = kc__lex_fail(lx, &key,
                        "%s %s: attribute %s is not supported (it changes what the "
                        "instruction computes, and kcall does not honour it)",
                        ins->op->name, KC__Q(ins->name_tok.text),
                        KC__Q(key.text));
    }
    if (!st && !handled) st = kc__lex_skip_value(lx);
    if (!st && !handled) st = kc__builder_note_skipped(p->module->top, key.text);
    if (st) {
      return kc_status_add_context(st, "in attribute %s", KC__Q(key.text));
    }
  }
  const kc__token* t = &lx->tok;
  if (t->kind != KC__TOK_END && !kc__tok_is_punct(t, '}') && t->line == lx->prev_line) {
    return kc__lex_expected(lx, t, "',' or the end of the line");
  }
  return NULL;
}
