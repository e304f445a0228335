/* The StableHLO text reader's scopes: regions made into programs (with
 * the values they capture), functions inlined where they are called, and
 * the module, its entry and kc__stablehlo_parse (stablehlo_internal.h).
 * reader.c reads types, values and one op. */
#include <stdio.h>

#include "program/program_internal.h"
#include "program/frontend/stablehlo/stablehlo_internal.h"

/* ---- regions -------------------------------------------------------------- */

kc_status* kc__shlo_region_captures(kc__shlo_scope* outer, const kc__lexer* at, kc__buf* out) {
  kc__lexer lx = *at;
  kc__strmap defined = {0};
  kc_status* st = NULL;
  int depth = 0;
  bool block_args = false; /* inside ^bb0(...) */
  kc__token prev = {0};
  do {
    kc__token t = lx.tok;
    if (t.kind == KC__TOK_END || t.kind == KC__TOK_ERROR) {
      st = kc__lex_expected(&lx, &t, "'}' closing the region");
      break;
    }
    if (kc__tok_is_punct(&t, '{')) depth++;
    if (kc__tok_is_punct(&t, '}')) depth--;
    if (kc__tok_is_punct(&t, '(') && prev.kind == KC__TOK_IDENT && prev.text.data > lx.text &&
        prev.text.data[-1] == '^') {
      block_args = true;
    }
    if (kc__tok_is_punct(&t, ')')) block_args = false;
    prev = t;
    kc__lex_next(&lx);
    if (t.kind != KC__TOK_NAME) continue;
    /* Defined here: "%x = ", "%x:2 = ", a block argument "%x: type". */
    kc__token after = kc__lex_peek(&lx);
    bool defines = kc__tok_is_punct(&lx.tok, '=') ||
                   (kc__tok_is_punct(&lx.tok, ':') &&
                    (block_args || after.kind == KC__TOK_NUMBER));
    if (defines) {
      if (!kc__strmap_put(&defined, t.text, 1)) st = kc__parse_oom();
      continue;
    }
    kc_string_view key = t.text;
    if (kc__tok_is_punct(&lx.tok, '#')) {
      kc__token k = kc__lex_peek(&lx);
      bool negative;
      uint64_t v;
      if (k.kind == KC__TOK_NUMBER && kc__number_to_int(k.text, &negative, &v) && !negative) {
        st = kc__shlo_result_key(outer->m, t.text, (int64_t)v, &key);
      }
    }
    if (kc__strmap_get(&defined, t.text) >= 0) continue;
    int32_t index = kc__strmap_get(&outer->names, key);
    if (index < 0) continue; /* reported where it is used */
    if (!kc__strmap_put(&defined, t.text, 1)) st = kc__parse_oom();
    if (!st) st = kc__shlo_append(out, &index, sizeof index);
  } while (!st && depth > 0);
  kc__strmap_free(&defined);
  return st;
}

/* "^bb0(%a: t, ...):" at the start of a region, when it names its args. */
static kc_status* kc__block_args(kc__shlo_module* m, kc__lexer* lx, kc__buf* args, bool* named) {
  *named = false;
  if (!kc__tok_is_punct(&lx->tok, '^')) return NULL;
  *named = true;
  kc__lex_next(lx);
  if (lx->tok.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &lx->tok, "a block label");
  kc__lex_next(lx);
  if (kc__tok_is_punct(&lx->tok, '(')) KC_RETURN_IF_ERROR(kc__shlo_read_args(m, lx, args));
  return kc__lex_expect(lx, ':');
}

/* A new scope of the module with a builder of its own. */
static kc_status* kc__region_scope(kc__shlo_scope* outer, const char* what, kc__shlo_scope* s) {
  memset(s, 0, sizeof *s);
  s->m = outer->m;
  s->outer = outer;
  s->depth = outer->depth + 1;
  if (s->depth > KC__SHLO_MAX_DEPTH) {
    return kc_status_create(KC_INVALID_ARGUMENT, "regions nested deeper than %d",
                            KC__SHLO_MAX_DEPTH);
  }
  char name[96];
  snprintf(name, sizeof name, "%s.%lld", what, (long long)++outer->m->serial);
  return kc_program_builder_create(kc_sv(name), &s->b);
}

/* Finishes a region's program: its root is `root`. */
static kc_status* kc__region_finish(kc__shlo_scope* s, int32_t root, kc_program** out) {
  kc_status* st = kc_program_builder_set_root(s->b, root);
  kc_program_builder* b = s->b;
  s->b = NULL;
  if (st) {
    kc_program_builder_destroy(b);
    return st;
  }
  return kc_program_builder_finish(b, out);
}

/* The root for returned values: the one, or a tuple of all. */
static kc_status* kc__return_root(kc__shlo_scope* s, const int32_t* extra, size_t num_extra,
                                  bool tuple, int32_t* out) {
  size_t n;
  const int32_t* r = kc__shlo_returned(s, &n);
  if (!tuple && n == 1 && num_extra == 0) {
    *out = kc__shlo_value_at(s, r[0])->id;
    return NULL;
  }
  kc__buf ids = {0};
  kc_status* st = NULL;
  for (size_t i = 0; i < n && !st; ++i) {
    st = kc__shlo_append(&ids, &kc__shlo_value_at(s, r[i])->id, sizeof(int32_t));
  }
  if (!st && num_extra) st = kc__shlo_append(&ids, extra, num_extra * sizeof *extra);
  if (!st) {
    st = kc_program_builder_add_tuple(s->b, (const int32_t*)(const void*)ids.data,
                                      ids.size / sizeof(int32_t), (kc_string_view){NULL, 0}, out);
  }
  kc__buf_free(&ids);
  return st;
}

kc_status* kc__shlo_region_program(kc__shlo_scope* outer, const kc__lexer* at,
                                   const kc__shlo_arg* args, size_t num_args, const char* what,
                                   kc_program** out_program) {
  kc__shlo_scope s;
  kc_status* st = kc__region_scope(outer, what, &s);
  kc__lexer lx = *at;
  kc__buf named_args = {0};
  bool named = false;
  if (!st) st = kc__lex_expect(&lx, '{');
  if (!st) st = kc__block_args(s.m, &lx, &named_args, &named);
  if (!st && named) {
    args = (const kc__shlo_arg*)(const void*)named_args.data;
    num_args = named_args.size / sizeof *args;
  }
  for (size_t i = 0; !st && i < num_args; ++i) {
    int32_t id;
    st = kc_program_builder_add_parameter(s.b, (int64_t)i, args[i].shape, args[i].name.text, &id);
    if (!st) st = kc__shlo_bind(&s, args[i].name.text, id, args[i].shape);
  }
  if (!st) st = kc__shlo_read_block(&s, &lx);
  int32_t root = -1;
  if (!st) st = kc__return_root(&s, NULL, 0, false, &root);
  if (!st) st = kc__region_finish(&s, root, out_program);
  kc_program_builder_destroy(s.b);
  kc__buf_free(&named_args);
  kc__shlo_scope_free(&s);
  return st;
}

kc_status* kc__shlo_region_tuple_program(kc__shlo_scope* outer, const kc__lexer* at,
                                         const kc__shlo_arg* args, size_t num_args,
                                         const int32_t* captures, size_t num_captures,
                                         bool tuple_result, bool return_captures,
                                         const char* what, kc_program** out_program) {
  kc__shlo_scope s;
  kc_status* st = kc__region_scope(outer, what, &s);
  kc__lexer lx = *at;
  kc__buf named_args = {0}, shapes = {0}, gtes = {0};
  kc_shape* tuple = NULL;
  bool named = false;
  if (!st) st = kc__lex_expect(&lx, '{');
  if (!st) st = kc__block_args(s.m, &lx, &named_args, &named);
  const kc__shlo_arg* given = args;
  size_t num_given = num_args;
  if (!st && named) {
    args = (const kc__shlo_arg*)(const void*)named_args.data;
    num_args = named_args.size / sizeof *args;
  }
  for (size_t i = 0; !st && i < num_args + num_captures; ++i) {
    const kc_shape* e = i < num_args ? args[i].shape
                                     : kc__shlo_value_at(outer, captures[i - num_args])->shape;
    /* An argument whose type leaves dimensions open has the shape of the
     * value the op gives it (a while's operand). */
    if (i < num_args && named && i < num_given && kc__shlo_dynamic(s.m, e)) {
      if (!kc__shlo_type_matches(s.m, e, given[i].shape)) {
        st = kc__shlo_fail(&args[i].name, "region argument %%%.*s: its type does not match "
                           "the op's operand %zu", (int)args[i].name.text.size,
                           args[i].name.text.data, i);
        break;
      }
      e = given[i].shape;
    }
    st = kc__shlo_append(&shapes, &e, sizeof e);
  }
  if (!st) {
    st = kc_shape_create_tuple((const kc_shape* const*)(const void*)shapes.data,
                               num_args + num_captures, &tuple);
  }
  int32_t param = -1;
  if (!st) st = kc_program_builder_add_parameter(s.b, 0, tuple, KC_SV_LIT("state"), &param);
  for (size_t i = 0; !st && i < num_args + num_captures; ++i) {
    const kc_shape* e = ((const kc_shape* const*)(const void*)shapes.data)[i];
    kc_string_view name = i < num_args ? args[i].name.text
                                       : kc__shlo_value_at(outer, captures[i - num_args])->name;
    int32_t id;
    st = kc_program_builder_add_get_tuple_element(s.b, param, (int64_t)i, (kc_string_view){NULL, 0},
                                                  &id);
    /* A captured value keeps what is known of it. */
    kc__shlo_value v = {.name = name, .id = id, .shape = e, .known = NULL, .constant = NULL};
    if (i >= num_args) {
      v.known = kc__shlo_value_at(outer, captures[i - num_args])->known;
      v.constant = kc__shlo_value_at(outer, captures[i - num_args])->constant;
    }
    if (!st) st = kc__shlo_bind_value(&s, name, &v);
    if (!st && i >= num_args) st = kc__shlo_append(&gtes, &id, sizeof id);
  }
  if (!st) st = kc__shlo_read_block(&s, &lx);
  int32_t root = -1;
  if (!st) {
    st = kc__return_root(&s, return_captures ? (const int32_t*)(const void*)gtes.data : NULL,
                         return_captures ? num_captures : 0, tuple_result, &root);
  }
  if (!st) st = kc__region_finish(&s, root, out_program);
  kc_program_builder_destroy(s.b);
  kc_shape_destroy(tuple);
  kc__buf_free(&named_args);
  kc__buf_free(&shapes);
  kc__buf_free(&gtes);
  kc__shlo_scope_free(&s);
  return st;
}

/* ---- functions ------------------------------------------------------------ */

/* The jax.result_info string of a result's attributes {...} (the
 * current token is the '{'), decoded into the module's arena; empty when
 * there is none. */
static kc_status* kc__result_info(kc__shlo_module* m, const kc__lexer* at, kc_string_view* out) {
  kc__lexer lx = *at;
  *out = (kc_string_view){NULL, 0};
  int depth = 0;
  do {
    if (kc__tok_is_punct(&lx.tok, '{') || kc__tok_is_punct(&lx.tok, '[')) depth++;
    if (kc__tok_is_punct(&lx.tok, '}') || kc__tok_is_punct(&lx.tok, ']')) depth--;
    if (depth == 1 && kc__tok_is_word(&lx.tok, "jax.result_info")) {
      kc__lex_next(&lx);
      if (!kc__tok_is_punct(&lx.tok, '=')) continue;
      kc__lex_next(&lx);
      if (lx.tok.kind != KC__TOK_STRING) continue;
      return kc__lex_string(&lx, &lx.tok, KC__ESCAPES_MLIR, &m->arena, out);
    }
    kc__lex_next(&lx);
  } while (depth > 0 && lx.tok.kind != KC__TOK_END);
  return NULL;
}

/* "-> (t {attrs}, ...)" or "-> t", then "attributes {...}", up to the
 * body's '{'. Result types into `results` and their jax.result_info
 * names (kc_string_view, empty for none) into `names`, when not NULL. */
static kc_status* kc__func_tail(kc__shlo_module* m, kc__lexer* lx, kc__buf* results,
                                kc__buf* names) {
  if (kc__shlo_is_arrow(lx)) {
    KC_RETURN_IF_ERROR(kc__shlo_expect_arrow(lx));
    bool paren = kc__tok_is_punct(&lx->tok, '(');
    if (paren) kc__lex_next(lx);
    for (bool more = !paren || kc__lex_list_begin(lx, ')'); more;) {
      const kc_shape* t = NULL;
      KC_RETURN_IF_ERROR(kc__shlo_type(m, lx, &t));
      if (results) KC_RETURN_IF_ERROR(kc__shlo_append(results, &t, sizeof t));
      kc_string_view name = {NULL, 0};
      if (kc__tok_is_punct(&lx->tok, '{') && !kc__shlo_opens_region(lx)) {
        if (names) KC_RETURN_IF_ERROR(kc__result_info(m, lx, &name));
        KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL)); /* {jax.result_info = ...} */
      }
      if (names) KC_RETURN_IF_ERROR(kc__shlo_append(names, &name, sizeof name));
      KC_RETURN_IF_ERROR(kc__shlo_skip_loc(lx));
      if (!paren) break;
      KC_RETURN_IF_ERROR(kc__lex_list_next(lx, ')', &more));
    }
  }
  if (kc__tok_is_word(&lx->tok, "attributes")) {
    kc__lex_next(lx);
    if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{'");
    KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
  }
  if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{' (the body)");
  return NULL;
}

static const kc__shlo_func* kc__find_func(kc__shlo_module* m, kc_string_view name) {
  int32_t i = kc__strmap_get(&m->funcs, name);
  return i < 0 ? NULL : (const kc__shlo_func*)(const void*)m->func_list.data + i;
}

kc_status* kc__shlo_inline_func(kc__shlo_scope* s, const kc__shlo_op* op, const kc__token* callee,
                                const int32_t* args, size_t num_args, kc__buf* out_results) {
  kc__shlo_module* m = s->m;
  int32_t fi = kc__strmap_get(&m->funcs, callee->text);
  if (fi < 0) {
    return kc__shlo_fail(callee, "no function @%.*s in the module", (int)callee->text.size,
                        callee->text.data);
  }
  kc__shlo_func* f = (kc__shlo_func*)(void*)m->func_list.data + fi;
  if (f->active) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "line %d, column %d: function @%.*s calls itself", callee->line,
                            callee->column, (int)callee->text.size, callee->text.data);
  }
  kc__shlo_scope c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.b = s->b;
  c.depth = s->depth + 1;
  if (c.depth > KC__SHLO_MAX_DEPTH) {
    return kc_status_create(KC_INVALID_ARGUMENT, "calls nested deeper than %d",
                            KC__SHLO_MAX_DEPTH);
  }
  /* The callee's instructions are named "CALLER/NAME" */
  kc_string_view site;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, op->result.kind == KC__TOK_END ? "call" : NULL,
                                         &site));
  char* prefix = kc__arena_alloc(&m->arena, site.size + 2);
  if (!prefix) return kc__parse_oom();
  memcpy(prefix, site.data, site.size);
  prefix[site.size] = '/';
  c.prefix = (kc_string_view){prefix, site.size + 1};
  kc__lexer lx = f->at;
  kc__buf params = {0};
  kc_status* st = kc__shlo_read_args(m, &lx, &params);
  size_t n = params.size / sizeof(kc__shlo_arg);
  const kc__shlo_arg* p = (const kc__shlo_arg*)(const void*)params.data;
  if (!st && n != num_args) {
    st = kc__shlo_fail(callee, "@%.*s takes %zu arguments, the call gives %zu",
                      (int)callee->text.size, callee->text.data, n, num_args);
  }
  for (size_t i = 0; !st && i < n; ++i) {
    const kc__shlo_value* v = kc__shlo_value_at(s, args[i]);
    if (!kc__shlo_type_matches(m, p[i].shape, v->shape)) {
      char a[128], b[128];
      kc_shape_format(v->shape, a, sizeof a);
      kc_shape_format(p[i].shape, b, sizeof b);
      st = kc__shlo_fail(callee, "@%.*s: argument %zu is %s, the call gives %s",
                        (int)callee->text.size, callee->text.data, i, b, a);
    }
    if (!st) st = kc__shlo_bind_value(&c, p[i].name.text, v);
  }
  if (!st) st = kc__func_tail(m, &lx, NULL, NULL);
  if (!st) {
    kc__lex_next(&lx);
    f->active = true;
    st = kc__shlo_read_block(&c, &lx);
    f = (kc__shlo_func*)(void*)m->func_list.data + fi;
    f->active = false;
  }
  size_t nr;
  const int32_t* r = kc__shlo_returned(&c, &nr);
  for (size_t i = 0; !st && i < nr; ++i) {
    st = kc__shlo_append(out_results, kc__shlo_value_at(&c, r[i]), sizeof(kc__shlo_value));
  }
  kc__buf_free(&params);
  kc__shlo_scope_free(&c);
  return st;
}

kc_status* kc__shlo_inline_region(kc__shlo_scope* s, const kc__shlo_op* op, const kc__lexer* at,
                                  const kc__shlo_value* args, size_t n, const char* label,
                                  kc__buf* out_results) {
  kc__shlo_module* m = s->m;
  kc_string_view site;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, label, &site));
  char* prefix = kc__arena_alloc(&m->arena, site.size + 2);
  if (!prefix) return kc__parse_oom();
  memcpy(prefix, site.data, site.size);
  prefix[site.size] = '/';
  /* The block's return is the region's, not the scope's: the scope's own
   * is kept aside while it is read. */
  kc__buf returned = s->returned;
  bool has_return = s->has_return;
  kc_string_view outer_prefix = s->prefix;
  s->returned = (kc__buf){0};
  s->has_return = false;
  s->prefix = (kc_string_view){prefix, site.size + 1};
  kc__lexer lx = *at;
  kc__buf block_args = {0};
  bool named = false;
  kc_status* st = kc__lex_expect(&lx, '{');
  if (!st) st = kc__block_args(m, &lx, &block_args, &named);
  size_t na = block_args.size / sizeof(kc__shlo_arg);
  const kc__shlo_arg* p = (const kc__shlo_arg*)(const void*)block_args.data;
  if (!st && na != n) {
    st = kc__shlo_fail(&op->at, "%.*s: the region takes %zu arguments, expected %zu",
                       (int)op->name.size, op->name.data, na, n);
  }
  for (size_t i = 0; !st && i < n; ++i) {
    if (!kc__shlo_type_matches(m, p[i].shape, args[i].shape)) {
      char a[128], b[128];
      kc__shlo_format_type(m, p[i].shape, a, sizeof a);
      kc__shlo_format_type(m, args[i].shape, b, sizeof b);
      st = kc__shlo_fail(&p[i].name, "%.*s: region argument %zu is %s, expected %s",
                         (int)op->name.size, op->name.data, i, a, b);
    }
    if (!st) st = kc__shlo_bind_value(s, p[i].name.text, &args[i]);
  }
  if (!st) st = kc__shlo_read_block(s, &lx);
  size_t nr;
  const int32_t* r = kc__shlo_returned(s, &nr);
  for (size_t i = 0; !st && i < nr; ++i) {
    st = kc__shlo_append(out_results, kc__shlo_value_at(s, r[i]), sizeof(kc__shlo_value));
  }
  kc__buf_free(&s->returned);
  kc__buf_free(&block_args);
  s->returned = returned;
  s->has_return = has_return;
  s->prefix = outer_prefix;
  return st;
}

/* ---- the module ----------------------------------------------------------- */

/* Skips a statement the reader does not need: to the end of its line,
 * groups included. */
static kc_status* kc__skip_statement(kc__lexer* lx) {
  int32_t line = lx->tok.line;
  while (lx->tok.kind != KC__TOK_END && lx->tok.line == line) {
    if (lx->tok.kind == KC__TOK_ERROR) return kc__lex_expected(lx, &lx->tok, "a statement");
    if (kc__tok_is_punct(&lx->tok, '(') || kc__tok_is_punct(&lx->tok, '[') ||
        kc__tok_is_punct(&lx->tok, '{')) {
      KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
      line = lx->prev_line;
    } else {
      kc__lex_next(lx);
    }
  }
  return NULL;
}

/* "#name = value": an alias, recorded. */
static kc_status* kc__read_alias(kc__shlo_module* m, kc__lexer* lx) {
  kc__token hash = lx->tok;
  kc__lex_next(lx);
  kc__token name = lx->tok;
  if (name.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &name, "an alias name after '#'");
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '='));
  int32_t index = (int32_t)(m->alias_list.size / sizeof *lx);
  KC_RETURN_IF_ERROR(kc__shlo_append(&m->alias_list, lx, sizeof *lx));
  kc_string_view key = {hash.text.data, (size_t)(name.text.data + name.text.size - hash.text.data)};
  if (!kc__strmap_put(&m->aliases, key, index)) return kc__parse_oom();
  return kc__skip_statement(lx);
}

/* "func.func [public|private] @name(args) -> results attributes {..} {body}" */
static kc_status* kc__read_func(kc__shlo_module* m, kc__lexer* lx) {
  kc__lex_next(lx);
  while (kc__tok_is_word(&lx->tok, "public") || kc__tok_is_word(&lx->tok, "private") ||
         kc__tok_is_word(&lx->tok, "nested")) {
    kc__lex_next(lx);
  }
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '@'));
  kc__shlo_func f = {.name = lx->tok.text};
  if (lx->tok.kind != KC__TOK_IDENT && lx->tok.kind != KC__TOK_STRING) {
    return kc__lex_expected(lx, &lx->tok, "a function name");
  }
  if (kc__find_func(m, f.name)) return kc__lex_fail(lx, &lx->tok, "function @%.*s is defined twice", (int)f.name.size, f.name.data);
  kc__lex_next(lx);
  f.at = *lx;
  if (!kc__tok_is_punct(&lx->tok, '(')) return kc__lex_expected(lx, &lx->tok, "'('");
  KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
  KC_RETURN_IF_ERROR(kc__func_tail(m, lx, NULL, NULL));
  KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
  KC_RETURN_IF_ERROR(kc__shlo_skip_loc(lx));
  int32_t index = (int32_t)(m->func_list.size / sizeof f);
  KC_RETURN_IF_ERROR(kc__shlo_append(&m->func_list, &f, sizeof f));
  return kc__strmap_put(&m->funcs, f.name, index) ? NULL : kc__parse_oom();
}

/* A resource's key: a bare name or a string (its quotes left off). */
static kc_status* kc__resource_key(kc__lexer* lx, kc_string_view* out) {
  kc__token t = lx->tok;
  if (t.kind == KC__TOK_STRING) {
    *out = t.text;
  } else if (t.kind == KC__TOK_IDENT || t.kind == KC__TOK_NUMBER) {
    *out = t.text;
  } else {
    return kc__lex_expected(lx, &t, "a resource's name");
  }
  kc__lex_next(lx);
  return NULL;
}

/* {-# dialect_resources: { DIALECT: { KEY: "0x...", ... }, ... },
 * external_resources: {...} #-}: the builtin dialect's blobs are kept
 * (dense_resource constants name them), the rest skipped. */
static kc_status* kc__read_resources(kc__shlo_module* m, kc__lexer* lx) {
  kc__lex_next(lx); /* '{' */
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '-'));
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '#'));
  while (!kc__tok_is_punct(&lx->tok, '#')) {
    kc__token section = lx->tok;
    if (section.kind != KC__TOK_IDENT) {
      return kc__lex_expected(lx, &section, "dialect_resources, external_resources or '#-}'");
    }
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, ':'));
    if (!kc__tok_is_word(&section, "dialect_resources")) {
      if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{'");
      KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
    } else {
      KC_RETURN_IF_ERROR(kc__lex_expect(lx, '{'));
      for (bool more = kc__lex_list_begin(lx, '}'); more;) {
        kc__token dialect = lx->tok;
        if (dialect.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &dialect, "a dialect");
        kc__lex_next(lx);
        KC_RETURN_IF_ERROR(kc__lex_expect(lx, ':'));
        bool builtin = kc__tok_is_word(&dialect, "builtin");
        KC_RETURN_IF_ERROR(kc__lex_expect(lx, '{'));
        for (bool entries = kc__lex_list_begin(lx, '}'); entries;) {
          kc_string_view key;
          KC_RETURN_IF_ERROR(kc__resource_key(lx, &key));
          KC_RETURN_IF_ERROR(kc__lex_expect(lx, ':'));
          kc__token blob = lx->tok;
          if (blob.kind != KC__TOK_STRING) {
            return kc__lex_expected(lx, &blob, "a blob (\"0x...\")");
          }
          kc__lex_next(lx);
          if (builtin) {
            int32_t index = (int32_t)(m->resource_list.size / sizeof blob);
            if (!kc__buf_append(&m->resource_list, &blob, sizeof blob) ||
                !kc__strmap_put(&m->resources, key, index)) {
              return kc__parse_oom();
            }
          }
          KC_RETURN_IF_ERROR(kc__lex_list_next(lx, '}', &entries));
        }
        KC_RETURN_IF_ERROR(kc__lex_list_next(lx, '}', &more));
      }
    }
    if (kc__tok_is_punct(&lx->tok, ',')) kc__lex_next(lx);
  }
  kc__lex_next(lx); /* '#' */
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '-'));
  return kc__lex_expect(lx, '}');
}

const kc__token* kc__shlo_resource(const kc__shlo_module* m, kc_string_view key) {
  int32_t index = m->resources.slots ? kc__strmap_get(&m->resources, key) : -1;
  return index < 0 ? NULL : (const kc__token*)(const void*)m->resource_list.data + index;
}

/* The statements of the module (or of a file of bare functions). */
static kc_status* kc__read_module(kc__shlo_module* m, kc__lexer* lx, kc_string_view* name) {
  bool in_module = false;
  for (;;) {
    kc__token t = lx->tok;
    if (t.kind == KC__TOK_END) {
      if (in_module) return kc__lex_expected(lx, &t, "'}' closing the module");
      return NULL;
    }
    if (t.kind == KC__TOK_ERROR) return kc__lex_expected(lx, &t, "a statement");
    if (kc__tok_is_punct(&t, '#')) {
      KC_RETURN_IF_ERROR(kc__read_alias(m, lx));
    } else if (kc__tok_is_word(&t, "func.func")) {
      KC_RETURN_IF_ERROR(kc__read_func(m, lx));
    } else if (kc__tok_is_word(&t, "module") && !in_module) {
      kc__lex_next(lx);
      if (kc__tok_is_punct(&lx->tok, '@')) {
        kc__lex_next(lx);
        *name = lx->tok.text;
        kc__lex_next(lx);
      }
      if (kc__tok_is_word(&lx->tok, "attributes")) {
        kc__lex_next(lx);
        if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{'");
        KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
      }
      KC_RETURN_IF_ERROR(kc__lex_expect(lx, '{'));
      in_module = true;
    } else if (in_module && kc__tok_is_punct(&t, '}')) {
      kc__lex_next(lx);
      KC_RETURN_IF_ERROR(kc__shlo_skip_loc(lx));
      in_module = false;
    } else if (kc__tok_is_punct(&t, '{') && !in_module) {
      KC_RETURN_IF_ERROR(kc__read_resources(m, lx));
    } else if (in_module && t.kind == KC__TOK_IDENT) {
      /* other top-level ops (sdy.mesh, ...): nothing on one device */
      KC_RETURN_IF_ERROR(kc__skip_statement(lx));
    } else {
      return kc__lex_expected(lx, &t, "'module', 'func.func' or an alias '#name = ...'");
    }
  }
}

const kc_shape* kc__given_shape(const kc_parse_options* o, size_t index, const char* name) {
  for (size_t k = 0; k < o->num_parameter_shapes; ++k) {
    if (!o->parameter_names) {
      if (k == index) return o->parameter_shapes[k];
      continue;
    }
    const char* want = o->parameter_names[k];
    char number[24];
    snprintf(number, sizeof number, "%zu", index);
    if (want && (strcmp(want, name) == 0 || strcmp(want, number) == 0)) {
      return o->parameter_shapes[k];
    }
  }
  return NULL;
}

kc_status* kc__check_given_names(const kc_parse_options* o, size_t n,
                                 const char* (*name)(const void* ctx, size_t i), const void* ctx) {
  if (!o->parameter_names) {
    return o->num_parameter_shapes > n
               ? kc_status_create(KC_INVALID_ARGUMENT, "%zu parameter shapes given for %zu "
                                  "parameters", o->num_parameter_shapes, n)
               : NULL;
  }
  for (size_t k = 0; k < o->num_parameter_shapes; ++k) {
    const char* want = o->parameter_names[k];
    bool found = false;
    for (size_t i = 0; want && i < n && !found; ++i) {
      char number[24];
      snprintf(number, sizeof number, "%zu", i);
      found = strcmp(want, name(ctx, i)) == 0 || strcmp(want, number) == 0;
    }
    if (!found) {
      return kc_status_create(KC_INVALID_ARGUMENT, "a shape is given for parameter %s, which "
                              "the program does not have", want ? KC__QS(want) : "NULL");
    }
  }
  return NULL;
}

/* The name of entry parameter i (ctx: the kc__shlo_arg array), for
 * kc__check_given_names. */
static const char* kc__arg_name(const void* ctx, size_t i) {
  static _Thread_local char buf[128];
  const kc__shlo_arg* a = (const kc__shlo_arg*)ctx + i;
  snprintf(buf, sizeof buf, "%.*s", (int)a->name.text.size, a->name.text.data);
  return buf;
}

/* Binds the entry's platform index argument, when it has one, to the
 * constant m->platform_index (an i32 scalar, known while parsing, so a
 * case on it is a case on a constant), and takes it out of `args`. */
static kc_status* kc__bind_platform_index(kc__shlo_module* m, kc__shlo_scope* s, kc__buf* args) {
  kc__shlo_arg* a = (kc__shlo_arg*)(void*)args->data;
  size_t n = args->size / sizeof *a;
  for (size_t i = 0; i < n; ++i) {
    if (!a[i].platform_index) continue;
    DLDataType dt = kc_shape_get_dtype(a[i].shape);
    if (kc_shape_is_tuple(a[i].shape) || kc_shape_get_rank(a[i].shape) != 0 ||
        dt.code != kDLInt || dt.bits != 32) {
      return kc__shlo_fail(&a[i].name, "the platform index argument %%%.*s is not a "
                           "tensor<i32>", (int)a[i].name.text.size, a[i].name.text.data);
    }
    int32_t value = m->platform_index;
    int64_t* known = kc__arena_alloc(&m->arena, sizeof *known);
    if (!known) return kc__status_oom();
    *known = value;
    int32_t id;
    KC_RETURN_IF_ERROR(kc_program_builder_add_constant(s->b, a[i].shape, &value, sizeof value,
                                                       KC_SV_LIT("platform_index"), &id));
    kc__shlo_value v = {.name = a[i].name.text, .id = id, .shape = a[i].shape, .known = known};
    KC_RETURN_IF_ERROR(kc__shlo_bind_value(s, a[i].name.text, &v));
    memmove(&a[i], &a[i + 1], (n - i - 1) * sizeof *a);
    args->size -= sizeof *a;
    return NULL;
  }
  return NULL;
}

/* The entry function as the program's parameters and body. */
static kc_status* kc__read_entry(kc__shlo_module* m, kc__shlo_scope* s, const kc__shlo_func* f) {
  kc__lexer lx = f->at;
  kc__buf params = {0}, results = {0};
  kc_status* st = kc__shlo_read_args(m, &lx, &params);
  if (!st && m->platform_index >= 0) st = kc__bind_platform_index(m, s, &params);
  const kc__shlo_arg* p = (const kc__shlo_arg*)(const void*)params.data;
  size_t n_params = params.size / sizeof *p;
  if (!st) st = kc__check_given_names(m->options, n_params, kc__arg_name, p);
  for (size_t i = 0; !st && i < n_params; ++i) {
    /* A shape the caller gave must be the type's, its open dimensions
     * aside; a type with open dimensions needs one. */
    const kc_shape* shape = p[i].shape;
    const kc_shape* given = kc__given_shape(m->options, i, kc__arg_name(p, i));
    char a[128], b[128];
    if (given && !kc__shlo_type_matches(m, shape, given)) {
      kc_shape_format(given, a, sizeof a);
      kc__shlo_format_type(m, shape, b, sizeof b);
      st = kc__shlo_fail(&p[i].name, "parameter %zu (%%%.*s): the shape given, %s, is not of "
                         "its type %s", i, (int)p[i].name.text.size, p[i].name.text.data, a, b);
      break;
    }
    if (!given && kc__shlo_dynamic(m, shape)) {
      kc__shlo_format_type(m, shape, b, sizeof b);
      st = kc_status_create(KC_FAILED_PRECONDITION,
                            "line %d, column %d: parameter %zu (%%%.*s) has the type %s, with "
                            "dimensions only its input fixes: a shape-polymorphic module is "
                            "compiled for the shapes of its inputs, so give them "
                            "(kc_program_parse_with, kcall run --input NAME=FILE.npy)",
                            p[i].name.line, p[i].name.column, i, (int)p[i].name.text.size,
                            p[i].name.text.data, b);
      break;
    }
    if (given) shape = given;
    int32_t id;
    st = kc_program_builder_add_parameter(s->b, (int64_t)i, shape, p[i].name.text, &id);
    if (!st) st = kc_program_builder_set_location(s->b, id, p[i].name.line, p[i].name.column);
    if (!st) st = kc__shlo_bind(s, p[i].name.text, id, shape);
    if (!st) st = kc__shlo_narrow_parameter(s, &p[i].name, p[i].shape);
  }
  if (!st) st = kc__func_tail(m, &lx, &results, &m->result_names);
  if (!st) {
    kc__lex_next(&lx);
    st = kc__shlo_read_block(s, &lx);
  }
  size_t n;
  const int32_t* r = kc__shlo_returned(s, &n);
  const kc_shape* const* want = (const kc_shape* const*)(const void*)results.data;
  if (!st && n != results.size / sizeof *want) {
    st = kc_status_create(KC_INVALID_ARGUMENT, "@%.*s returns %zu values, its type says %zu",
                          (int)f->name.size, f->name.data, n, results.size / sizeof *want);
  }
  for (size_t i = 0; !st && i < n; ++i) {
    if (!kc__shlo_type_matches(m, want[i], kc__shlo_value_at(s, r[i])->shape)) {
      char a[128], b[128];
      kc_shape_format(kc__shlo_value_at(s, r[i])->shape, a, sizeof a);
      kc_shape_format(want[i], b, sizeof b);
      st = kc_status_create(KC_INVALID_ARGUMENT, "@%.*s: result %zu is %s, its type says %s",
                            (int)f->name.size, f->name.data, i, a, b);
    }
  }
  int32_t root = -1;
  if (!st) st = kc__return_root(s, NULL, 0, n != 1, &root);
  if (!st) st = kc_program_builder_set_root(s->b, root);
  kc__buf_free(&params);
  kc__buf_free(&results);
  return st;
}

bool kc__stablehlo_detect(kc_string_view text) {
  kc__lexer lx;
  kc__lexer_init(&lx, text, 1, 1);
  return kc__tok_is_word(&lx.tok, "module") || kc__tok_is_word(&lx.tok, "func.func") ||
         kc__tok_is_punct(&lx.tok, '#');
}

static void kc__module_free(kc__shlo_module* m) {
  kc_shape** shapes = (kc_shape**)(void*)m->shapes.data;
  for (size_t i = 0; i < m->shapes.size / sizeof *shapes; ++i) kc_shape_destroy(shapes[i]);
  kc__buf_free(&m->shapes);
  kc__strmap_free(&m->funcs);
  kc__buf_free(&m->func_list);
  kc__strmap_free(&m->aliases);
  kc__buf_free(&m->alias_list);
  kc__strmap_free(&m->dynamic);
  kc__strmap_free(&m->narrow);
  kc__strmap_free(&m->float8);
  kc__buf_free(&m->float8_pending);
  kc__strmap_free(&m->quant);
  kc__buf_free(&m->quants);
  kc__buf_free(&m->quant_pending);
  kc__strmap_free(&m->tensor_types);
  kc__strmap_free(&m->resources);
  kc__buf_free(&m->resource_list);
  kc__buf_free(&m->result_names);
  kc__arena_free(&m->arena);
}

kc_status* kc__stablehlo_parse(kc_string_view text, const kc_parse_options* options,
                               kc_program** out_program) {
  return kc__stablehlo_parse_for(text, options, -1, out_program);
}

kc_status* kc__stablehlo_parse_for(kc_string_view text, const kc_parse_options* options,
                                   int32_t platform_index, kc_program** out_program) {
  kc__shlo_module m;
  memset(&m, 0, sizeof m);
  m.text = text;
  m.options = options;
  m.platform_index = platform_index;
  kc__lexer lx;
  kc__lexer_init(&lx, text, 1, 1);
  kc_string_view name = KC_SV_LIT("main");
  kc_status* st = kc__read_module(&m, &lx, &name);
  const kc__shlo_func* entry = NULL;
  if (!st) {
    entry = kc__find_func(&m, KC_SV_LIT("main"));
    if (!entry && m.func_list.size == sizeof(kc__shlo_func)) {
      entry = (const kc__shlo_func*)(const void*)m.func_list.data;
    }
    if (!entry) {
      st = kc_status_create(KC_INVALID_ARGUMENT,
                            "the module has no function @main (the entry point)");
    }
  }
  kc__shlo_scope s;
  memset(&s, 0, sizeof s);
  s.m = &m;
  if (!st) st = kc_program_builder_create(name, &s.b);
  if (!st) st = kc__read_entry(&m, &s, entry);
  if (!st) {
    kc_program_builder* b = s.b;
    s.b = NULL;
    st = kc_program_builder_finish(b, out_program);
  }
  if (!st && m.result_names.size) {
    const kc_string_view* names = (const kc_string_view*)(const void*)m.result_names.data;
    if (!kc__program_set_output_names(*out_program, names,
                                      m.result_names.size / sizeof *names)) {
      kc_program_destroy(*out_program);
      *out_program = NULL;
      st = kc__parse_oom();
    }
  }
  kc_program_builder_destroy(s.b);
  kc__shlo_scope_free(&s);
  kc__module_free(&m);
  return st;
}
