/*
 * Derivative rules (op.h, "Gradients" and "Forward-mode rules"): the
 * specs "GRAD_OP(ITEM, ...) -> (grad(NAME), ...)" and
 * "JVP_OP(ITEM, ...) -> (tangent(NAME), ...)" parsed by hand when the
 * builder gets them, and their names resolved to arg indices when the op
 * registers. One parser serves both; the rule's kind picks the marker
 * word (grad or tangent) and which side of the op each name must be on.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal/grow.h"
#include "op/op_internal.h"

/* The longest spec kept; longer ones are refused. */
#define KC__GRAD_SPEC_MAX 4096

typedef struct kc__grad_parser {
  const char* text;
  size_t len;
  size_t pos;
  kc__op_gradient* grad;
  const char* word; /* the marker: "grad" or "tangent" */
  const char* what; /* "gradient spec" or "jvp spec", in messages */
  char norm[KC__GRAD_SPEC_MAX + 1]; /* the normalised spec, built as read */
  size_t norm_len;
} kc__grad_parser;

static bool kc__grad_is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool kc__grad_ident_char(char c, bool first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
  return !first && c >= '0' && c <= '9';
}

/* An op name also takes . : and - after its first character. */
static bool kc__grad_op_char(char c, bool first) {
  return kc__grad_ident_char(c, first) ||
         (!first && (c == '.' || c == ':' || c == '-'));
}

static void kc__grad_skip(kc__grad_parser* p) {
  while (p->pos < p->len && kc__grad_is_space(p->text[p->pos])) p->pos++;
}

/* "gradient spec 'S': column N: expected WHAT, got 'TEXT'" (or "jvp
 * spec"). */
static kc_status* kc__grad_expected(const kc__grad_parser* p,
                                    const char* what) {
  kc_string_view spec = {p->text, p->len};
  if (p->pos >= p->len) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s %s: column %zu: expected %s, got "
                            "the end of the spec",
                            p->what, KC__Q(spec), p->pos + 1, what);
  }
  size_t end = p->pos + 1;
  while (end < p->len && kc__grad_ident_char(p->text[end], false) &&
         kc__grad_ident_char(p->text[p->pos], false)) {
    end++;
  }
  kc_string_view got = {p->text + p->pos, end - p->pos};
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "%s %s: column %zu: expected %s, got %s",
                          p->what, KC__Q(spec), p->pos + 1, what, KC__Q(got));
}

static void kc__grad_emit(kc__grad_parser* p, const char* s, size_t n) {
  if (p->norm_len + n <= KC__GRAD_SPEC_MAX) memcpy(p->norm + p->norm_len, s, n);
  p->norm_len += n;
}

/* Takes the punctuation `s` (after blanks) or fails expecting it. */
static kc_status* kc__grad_punct(kc__grad_parser* p, const char* s) {
  kc__grad_skip(p);
  size_t n = strlen(s);
  if (p->len - p->pos < n || memcmp(p->text + p->pos, s, n) != 0) {
    char what[16];
    snprintf(what, sizeof what, "'%s'", s);
    return kc__grad_expected(p, what);
  }
  p->pos += n;
  return NULL;
}

static bool kc__grad_peek(kc__grad_parser* p, const char* s) {
  kc__grad_skip(p);
  size_t n = strlen(s);
  return p->len - p->pos >= n && memcmp(p->text + p->pos, s, n) == 0;
}

/* A name (an identifier, or an op name with `op`) as a new string. */
static kc_status* kc__grad_name(kc__grad_parser* p, bool op, const char* what,
                                char** out) {
  kc__grad_skip(p);
  size_t start = p->pos;
  while (p->pos < p->len &&
         (op ? kc__grad_op_char : kc__grad_ident_char)(p->text[p->pos],
                                                      p->pos == start)) {
    p->pos++;
  }
  if (p->pos == start) return kc__grad_expected(p, what);
  size_t n = p->pos - start;
  *out = kc__malloc(n + 1);
  if (!*out) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(*out, p->text + start, n);
  (*out)[n] = '\0';
  return NULL;
}

/* "WORD(NAME)" (grad or tangent) when `required` or when it comes next
 * (*out_marked says which); else a plain NAME. */
static kc_status* kc__grad_item(kc__grad_parser* p, bool required,
                                bool* out_marked, char** out_name) {
  kc__grad_skip(p);
  size_t word = strlen(p->word);
  bool marked = false;
  if (kc__grad_peek(p, p->word)) {
    size_t save = p->pos;
    p->pos += word;
    kc__grad_skip(p);
    marked = p->pos < p->len && p->text[p->pos] == '(';
    p->pos = save;
  }
  if (required && !marked) {
    char what[16];
    snprintf(what, sizeof what, "'%s('", p->word);
    return kc__grad_expected(p, what);
  }
  if (marked) {
    p->pos += word;
    KC_RETURN_IF_ERROR(kc__grad_punct(p, "("));
  }
  const char* whose = !marked                         ? "an arg's name"
                      : strcmp(p->word, "grad") == 0 ? "an output's name"
                                                     : "an input's name";
  KC_RETURN_IF_ERROR(kc__grad_name(p, false, whose, out_name));
  if (marked) {
    kc_status* st = kc__grad_punct(p, ")");
    if (st) {
      kc__free(*out_name);
      *out_name = NULL;
      return st;
    }
  }
  *out_marked = marked;
  if (marked) {
    kc__grad_emit(p, p->word, word);
    kc__grad_emit(p, "(", 1);
  }
  kc__grad_emit(p, *out_name, strlen(*out_name));
  if (marked) kc__grad_emit(p, ")", 1);
  return NULL;
}

/* The items between the parentheses of the gradient op's call. */
static kc_status* kc__grad_args(kc__grad_parser* p) {
  kc__op_gradient* g = p->grad;
  size_t cap_args = 0, cap_names = 0;
  KC_RETURN_IF_ERROR(kc__grad_punct(p, "("));
  kc__grad_emit(p, "(", 1);
  if (kc__grad_peek(p, ")")) {
    p->pos++;
    kc__grad_emit(p, ")", 1);
    return NULL;
  }
  for (;;) {
    if (g->num_args == KC_OP_MAX_ARGS * 3) {
      return kc__grad_expected(p, "fewer items");
    }
    if (!KC__GROW(g->args, cap_args, (size_t)g->num_args + 1) ||
        !KC__GROW(g->arg_names, cap_names, (size_t)g->num_args + 1)) {
      return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    }
    bool marked = false;
    char* name = NULL;
    KC_RETURN_IF_ERROR(kc__grad_item(p, false, &marked, &name));
    int32_t source = !marked  ? KC_OP_GRAD_INPUT
                     : g->jvp ? KC_OP_GRAD_TANGENT
                              : KC_OP_GRAD_COTANGENT;
    g->args[g->num_args] = (kc_op_grad_arg){.source = source, .index = -1};
    g->arg_names[g->num_args++] = name;
    if (kc__grad_peek(p, ")")) break;
    if (!kc__grad_peek(p, ",")) return kc__grad_expected(p, "',' or ')'");
    p->pos++;
    kc__grad_emit(p, ", ", 2);
  }
  p->pos++;
  kc__grad_emit(p, ")", 1);
  return NULL;
}

/* "-> grad(x)" or "-> (grad(x), grad(y))" (tangent( for a jvp). */
static kc_status* kc__grad_results(kc__grad_parser* p) {
  kc__op_gradient* g = p->grad;
  size_t cap_results = 0, cap_names = 0;
  KC_RETURN_IF_ERROR(kc__grad_punct(p, "->"));
  kc__grad_emit(p, " -> ", 4);
  bool paren = kc__grad_peek(p, "(");
  if (paren) {
    p->pos++;
    kc__grad_emit(p, "(", 1);
  }
  for (;;) {
    if (g->num_results == KC_OP_MAX_ARGS) {
      return kc__grad_expected(p, g->jvp ? "at most one result per output"
                                         : "at most one result per input");
    }
    if (!KC__GROW(g->results, cap_results, (size_t)g->num_results + 1) ||
        !KC__GROW(g->result_names, cap_names, (size_t)g->num_results + 1)) {
      return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    }
    bool marked = false;
    char* name = NULL;
    KC_RETURN_IF_ERROR(kc__grad_item(p, true, &marked, &name));
    g->results[g->num_results] = -1;
    g->result_names[g->num_results++] = name;
    if (!paren || kc__grad_peek(p, ")")) break;
    if (!kc__grad_peek(p, ",")) return kc__grad_expected(p, "',' or ')'");
    p->pos++;
    kc__grad_emit(p, ", ", 2);
  }
  if (paren) {
    KC_RETURN_IF_ERROR(kc__grad_punct(p, ")"));
    kc__grad_emit(p, ")", 1);
  }
  kc__grad_skip(p);
  if (p->pos < p->len) return kc__grad_expected(p, "the end of the spec");
  return NULL;
}

kc_status* kc__op_rule_parse(const char* spec, bool jvp,
                             kc__op_gradient** out) {
  *out = NULL;
  const char* what = jvp ? "jvp spec" : "gradient spec";
  size_t len = strlen(spec);
  if (len > KC__GRAD_SPEC_MAX) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: expected at most %d bytes, got %zu", what,
                            KC__GRAD_SPEC_MAX, len);
  }
  kc__grad_parser* p = kc__calloc(1, sizeof *p);
  kc__op_gradient* g = kc__calloc(1, sizeof *g);
  if (!p || !g) {
    kc__free(p);
    kc__free(g);
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  p->text = spec;
  p->len = len;
  p->grad = g;
  p->word = jvp ? "tangent" : "grad";
  p->what = what;
  g->jvp = jvp;
  kc_status* st = kc__grad_name(
      p, true, jvp ? "the jvp op's name" : "the gradient op's name",
      &g->op_name);
  if (!st) {
    kc__grad_emit(p, g->op_name, strlen(g->op_name));
    st = kc__grad_args(p);
  }
  if (!st) st = kc__grad_results(p);
  if (!st && p->norm_len > KC__GRAD_SPEC_MAX) {
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "%s: its normalised form is longer than %d bytes",
                          what, KC__GRAD_SPEC_MAX);
  }
  if (!st) {
    g->spec = kc__malloc(p->norm_len + 1);
    if (!g->spec) st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (st) {
    kc__op_gradient_destroy(g);
    kc__free(p);
    return st;
  }
  memcpy(g->spec, p->norm, p->norm_len);
  g->spec[p->norm_len] = '\0';
  kc__free(p);
  *out = g;
  return NULL;
}

/* "x, y" into buf: the names of the op's inputs or outputs. */
static const char* kc__grad_arg_list(const kc__arg_def* args, int32_t n,
                                     char* buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int32_t i = 0; i < n; ++i) {
    kc__appendf(buf, cap, &len, "%s%s", i ? ", " : "", args[i].name);
  }
  if (n == 0) kc__appendf(buf, cap, &len, "none");
  return buf;
}

/* One side of an op, for the names of a rule: its inputs or outputs. */
typedef struct kc__grad_side {
  const kc__arg_def* args;
  int32_t count;
  const char* one;  /* "an input" */
  const char* many; /* "inputs" */
} kc__grad_side;

static kc__grad_side kc__grad_side_of(const kc__op_schema* def, bool inputs) {
  return inputs ? (kc__grad_side){def->inputs, def->num_inputs, "an input", "inputs"}
                : (kc__grad_side){def->outputs, def->num_outputs, "an output", "outputs"};
}

/* A gradient's marked items, grad(NAME), name outputs and its results
 * inputs; a jvp's, tangent(NAME), name inputs and its results outputs.
 * Plain items name either. */
kc_status* kc__op_gradient_resolve(const kc__op_schema* def,
                                   kc__op_gradient* g) {
  const char* what = g->jvp ? "jvp spec" : "gradient spec";
  const char* word = g->jvp ? "tangent" : "grad";
  kc__grad_side marked = kc__grad_side_of(def, g->jvp);
  kc__grad_side result = kc__grad_side_of(def, !g->jvp);
  char names[512], outs[512];
  for (int32_t i = 0; i < g->num_args; ++i) {
    kc_string_view name = kc_sv(g->arg_names[i]);
    kc_op_grad_arg* a = &g->args[i];
    int32_t in = kc__op_find_input(def, name);
    int32_t out = kc__op_find_output(def, name);
    if (a->source == KC_OP_GRAD_COTANGENT || a->source == KC_OP_GRAD_TANGENT) {
      a->index = g->jvp ? in : out;
      if (a->index < 0) {
        return kc_status_create(
            KC_INVALID_ARGUMENT,
            "%s %s: item %d: %s(%s): %s is not %s of the op (its %s: %s)", what,
            KC__QS(g->spec), i + 1, word, g->arg_names[i], KC__Q(name), marked.one,
            marked.many, kc__grad_arg_list(marked.args, marked.count, names, sizeof names));
      }
    } else if (in >= 0) {
      a->index = in;
    } else if (out >= 0) {
      a->source = KC_OP_GRAD_OUTPUT;
      a->index = out;
    } else {
      return kc_status_create(
          KC_INVALID_ARGUMENT,
          "%s %s: item %d: %s is neither an input nor an output of the op "
          "(inputs: %s; outputs: %s)",
          what, KC__QS(g->spec), i + 1, KC__Q(name),
          kc__grad_arg_list(def->inputs, def->num_inputs, names, sizeof names),
          kc__grad_arg_list(def->outputs, def->num_outputs, outs, sizeof outs));
    }
  }
  for (int32_t i = 0; i < g->num_results; ++i) {
    kc_string_view name = kc_sv(g->result_names[i]);
    int32_t index = g->jvp ? kc__op_find_output(def, name) : kc__op_find_input(def, name);
    if (index < 0) {
      return kc_status_create(
          KC_INVALID_ARGUMENT, "%s %s: result %d: %s(%s): %s is not %s of the op (its %s: %s)",
          what, KC__QS(g->spec), i + 1, word, g->result_names[i], KC__Q(name), result.one,
          result.many, kc__grad_arg_list(result.args, result.count, names, sizeof names));
    }
    for (int32_t j = 0; j < i; ++j) {
      if (g->results[j] == index) {
        return kc_status_create(KC_INVALID_ARGUMENT, "%s %s: result %d: %s(%s) is already result %d",
                                what, KC__QS(g->spec), i + 1, word, g->result_names[i], j + 1);
      }
    }
    g->results[i] = index;
  }
  return NULL;
}

/* N of "PREFIXN" (digits only, no leading zero but "0"), or -1. */
static int32_t kc__grad_position(const char* name, const char* prefix) {
  size_t n = strlen(prefix);
  if (strncmp(name, prefix, n) != 0) return -1;
  const char* d = name + n;
  if (!*d || (d[0] == '0' && d[1]) || strlen(d) > 4) return -1;
  int32_t v = 0;
  for (; *d; ++d) {
    if (*d < '0' || *d > '9') return -1;
    v = v * 10 + (*d - '0');
  }
  return v;
}

/* "argument 3 of 2" or "argument 3" (an open signature): true when
 * `index` is beyond `count`. */
static bool kc__grad_beyond(int32_t index, int32_t count) {
  return index < 0 || (count >= 0 && index >= count);
}

kc_status* kc__op_gradient_resolve_positional(kc__op_gradient* g,
                                              int32_t num_args,
                                              int32_t num_results) {
  for (int32_t i = 0; i < g->num_args; ++i) {
    const char* name = g->arg_names[i];
    kc_op_grad_arg* a = &g->args[i];
    int32_t arg = kc__grad_position(name, "arg");
    int32_t result = kc__grad_position(name, "result");
    if (a->source == KC_OP_GRAD_COTANGENT && kc__grad_beyond(result, num_results)) {
      return kc_status_create(
          KC_INVALID_ARGUMENT,
          "gradient spec %s: item %d: grad(%s): expected grad(resultN) with "
          "N below the target's %d results",
          KC__QS(g->spec), i + 1, name, num_results);
    }
    if (a->source == KC_OP_GRAD_COTANGENT) {
      a->index = result;
    } else if (arg >= 0 && !kc__grad_beyond(arg, num_args)) {
      a->index = arg;
    } else if (result >= 0 && !kc__grad_beyond(result, num_results)) {
      a->source = KC_OP_GRAD_OUTPUT;
      a->index = result;
    } else {
      return kc_status_create(
          KC_INVALID_ARGUMENT,
          "gradient spec %s: item %d: expected argN (N below %d) or resultN "
          "(N below %d), got '%s'",
          KC__QS(g->spec), i + 1, num_args, num_results, name);
    }
  }
  for (int32_t i = 0; i < g->num_results; ++i) {
    const char* name = g->result_names[i];
    int32_t arg = kc__grad_position(name, "arg");
    if (kc__grad_beyond(arg, num_args)) {
      return kc_status_create(
          KC_INVALID_ARGUMENT,
          "gradient spec %s: result %d: expected grad(argN) with N below the "
          "target's %d arguments, got grad(%s)",
          KC__QS(g->spec), i + 1, num_args, name);
    }
    for (int32_t j = 0; j < i; ++j) {
      if (g->results[j] == arg) {
        return kc_status_create(KC_INVALID_ARGUMENT,
                                "gradient spec %s: result %d: grad(%s) is "
                                "already result %d",
                                KC__QS(g->spec), i + 1, name, j + 1);
      }
    }
    g->results[i] = arg;
  }
  return NULL;
}

void kc__op_gradient_destroy(kc__op_gradient* g) {
  if (!g) return;
  for (int32_t i = 0; i < g->num_args; ++i) kc__free(g->arg_names[i]);
  for (int32_t i = 0; i < g->num_results; ++i) kc__free(g->result_names[i]);
  kc__free(g->arg_names);
  kc__free(g->result_names);
  kc__free(g->args);
  kc__free(g->results);
  kc__free(g->op_name);
  kc__free(g->spec);
  kc__free(g);
}

void kc__op_gradient_fill(const kc__op_gradient* g, kc_op_gradient* out) {
  kc_op_gradient full = {
      .struct_size = out->struct_size,
      .op_name = g->op_name,
      .spec = g->spec,
      .num_args = g->num_args,
      .args = g->args,
      .num_results = g->num_results,
      .results = g->results,
  };
  size_t n = out->struct_size < sizeof full ? out->struct_size : sizeof full;
  memcpy(out, &full, n);
}

bool kc_op_get_gradient(const kc_op* op, kc_op_gradient* out) {
  if (!op || !out || !op->def.gradient) return false;
  kc__op_gradient_fill(op->def.gradient, out);
  return true;
}

bool kc_op_get_jvp(const kc_op* op, kc_op_gradient* out) {
  if (!op || !out || !op->def.jvp) return false;
  kc__op_gradient_fill(op->def.jvp, out);
  return true;
}
