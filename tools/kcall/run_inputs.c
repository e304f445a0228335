/*
 * run_inputs.c — the inputs of `kcall run`: naming the executable's
 * inputs after the program's parameters, and making a tensor for each
 * from a .npy file, a literal, or the generated pattern.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "kernels/half.h"
#include "run.h"

/* ---- text helpers --------------------------------------------------------- */

static char* format_text(const char* fmt, ...) KC_PRINTF(1, 2);
static char* format_text(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(NULL, 0, fmt, args);
  va_end(args);
  if (n < 0) return NULL;
  char* text = malloc((size_t)n + 1);
  if (!text) return NULL;
  va_start(args, fmt);
  vsnprintf(text, (size_t)n + 1, fmt, args);
  va_end(args);
  return text;
}

/* A growing string for lists of names in messages: the first
 * LIST_MAX_ITEMS, then a count of the others (list_end). On out of memory
 * it keeps what it has. */
enum { LIST_MAX_ITEMS = 16 };
typedef struct text_list {
  char* text;
  size_t size;
  size_t items;
} text_list;

/* A name as a list shows it: as it is when it is a short name of the
 * bytes HLO names are made of, else quoted (escaped and bounded). */
static const char* list_name(const char* name, char* buf) {
  size_t n = strlen(name);
  bool plain = n > 0 && n <= KC_QUOTE_MAX_SHOWN;
  for (size_t i = 0; plain && i < n; ++i) {
    char c = name[i];
    plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || (c && strchr("_.$%-", c));
  }
  if (plain) return name;
  kc_sv_format_quoted(kc_sv(name), buf, KC_QUOTED_CAP);
  return buf;
}

static void list_add(text_list* list, const char* item, const kc_shape* shape) {
  if (list->items++ >= LIST_MAX_ITEMS) return;
  char shape_text[256] = "";
  if (shape) kc_shape_format(shape, shape_text, sizeof shape_text);
  char quoted[KC_QUOTED_CAP];
  char* more = format_text("%s%s%s%s%s", list->text ? list->text : "",
                           list->size ? ", " : "", list_name(item, quoted),
                           shape ? " " : "", shape_text);
  if (!more) return;
  free(list->text);
  list->text = more;
  list->size = strlen(more);
}

/* Says how many items the list left out, if any. */
static void list_end(text_list* list) {
  if (list->items <= LIST_MAX_ITEMS || !list->text) return;
  char* more = format_text("%s and %zu more", list->text,
                           list->items - LIST_MAX_ITEMS);
  if (!more) return;
  free(list->text);
  list->text = more;
  list->size = strlen(more);
}

static kc_status* oom(void) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- naming --------------------------------------------------------------- */

/* Adds the leaves of `shape` in pre-order, named `name` and `number` with
 * ".i" appended per tuple level. */
static kc_status* add_leaves(run_inputs* in, size_t* next,
                             const kc_executable* exe, const kc_shape* shape,
                             const char* name, const char* number) {
  if (kc_shape_is_tuple(shape)) {
    /* Kept by name and by number, for the message that says it is one. */
    char* keep = format_text("%s", name);
    if (keep) in->tuple_names[in->num_tuple_names++] = keep;
    char* keep_number = keep ? format_text("%s", number) : NULL;
    if (!keep_number) return oom();
    in->tuple_names[in->num_tuple_names++] = keep_number;
    for (size_t i = 0; i < kc_shape_get_tuple_size(shape); ++i) {
      char* child = format_text("%s.%zu", name, i);
      char* child_number = format_text("%s.%zu", number, i);
      kc_status* st = child && child_number
                          ? add_leaves(in, next, exe,
                                       kc_shape_get_element(shape, i), child,
                                       child_number)
                          : oom();
      free(child);
      free(child_number);
      if (st) return st;
    }
    return NULL;
  }
  if (*next >= in->count) {
    return kc_status_create(KC_INTERNAL,
                            "the executable has fewer inputs than the "
                            "program's parameters have leaves");
  }
  run_leaf* leaf = &in->leaves[(*next)++];
  leaf->name = format_text("%s", name);
  leaf->number_name = format_text("%s", number);
  leaf->shape = kc_executable_get_input_shape(exe, *next - 1);
  if (!leaf->name || !leaf->number_name) return oom();
  return NULL;
}

/* Tuples inside `shape`, itself included. */
static size_t count_tuples(const kc_shape* shape) {
  if (!kc_shape_is_tuple(shape)) return 0;
  size_t n = 1;
  for (size_t i = 0; i < kc_shape_get_tuple_size(shape); ++i) {
    n += count_tuples(kc_shape_get_element(shape, i));
  }
  return n;
}

kc_status* run_inputs_init(run_inputs* in, const kc_program* program,
                           const kc_executable* exe) {
  memset(in, 0, sizeof *in);
  kc_executable_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  size_t num_params = kc_program_get_parameter_count(program);
  size_t num_tuples = 0;
  for (size_t p = 0; p < num_params; ++p) {
    num_tuples += count_tuples(kc_program_get_parameter_shape(program, p));
  }
  in->count = info.num_inputs;
  in->leaves = calloc(info.num_inputs ? info.num_inputs : 1, sizeof *in->leaves);
  in->tuple_names = calloc(num_tuples ? 2 * num_tuples : 1,
                           sizeof *in->tuple_names);
  if (!in->leaves || !in->tuple_names) return oom();
  size_t next = 0;
  for (size_t p = 0; p < num_params; ++p) {
    const char* name = kc_program_get_parameter_name(program, p);
    char number[32];
    snprintf(number, sizeof number, "%zu", p);
    if (!name || !name[0]) name = number;
    if (name[0] == '%') ++name;
    kc_status* st = add_leaves(in, &next, exe,
                               kc_program_get_parameter_shape(program, p),
                               name, number);
    if (st) return st;
  }
  if (next != in->count) {
    return kc_status_create(KC_INTERNAL,
                            "the program's parameters have %zu leaves but "
                            "the executable takes %zu inputs",
                            next, in->count);
  }
  return NULL;
}

void run_inputs_deinit(run_inputs* in) {
  for (size_t i = 0; in->leaves && i < in->count; ++i) {
    free(in->leaves[i].name);
    free(in->leaves[i].number_name);
    free(in->leaves[i].source);
    kc_object_release(KC_OBJECT(in->leaves[i].tensor));
  }
  for (size_t i = 0; i < in->num_tuple_names; ++i) free(in->tuple_names[i]);
  free(in->leaves);
  free(in->tuple_names);
  memset(in, 0, sizeof *in);
}

/* The leaf called `name` (by name or number), or a status saying why
 * there is none. */
static kc_status* find_leaf(run_inputs* in, kc_string_view name,
                            run_leaf** out_leaf) {
  for (size_t i = 0; i < in->count; ++i) {
    run_leaf* leaf = &in->leaves[i];
    if (kc_sv_equal(name, kc_sv(leaf->name)) ||
        kc_sv_equal(name, kc_sv(leaf->number_name))) {
      *out_leaf = leaf;
      return NULL;
    }
  }
  text_list inputs = {NULL, 0, 0};
  for (size_t i = 0; i < in->count; ++i) {
    list_add(&inputs, in->leaves[i].name, in->leaves[i].shape);
  }
  list_end(&inputs);
  kc_status* st = NULL;
  for (size_t i = 0; i < in->num_tuple_names && !st; ++i) {
    if (kc_sv_equal(name, kc_sv(in->tuple_names[i]))) {
      st = kc_status_create(KC_INVALID_ARGUMENT,
                            "%s is a tuple; give each of its leaves "
                            "(the inputs are: %s)",
                            CLI_Q(name),
                            inputs.text ? inputs.text : "");
    }
  }
  if (!st) {
    st = kc_status_create(KC_NOT_FOUND,
                          "the program has no input named %s (its "
                          "inputs are: %s)",
                          CLI_Q(name),
                          inputs.text ? inputs.text : "none");
  }
  free(inputs.text);
  return st;
}

/* ---- literals ------------------------------------------------------------- */

typedef enum int_parse { INT_BAD, INT_OK, INT_RANGE } int_parse;

/* [+-]digits or [+-]0x hex digits that fit an integer of `bits` bits,
 * signed or not; *out holds it as two's complement. Written out because
 * strtoll would read 010 as octal. */
static int_parse parse_int(const char* text, bool is_signed, unsigned bits,
                           uint64_t* out) {
  const char* p = text;
  bool negative = false;
  if (*p == '+' || *p == '-') negative = *p++ == '-';
  unsigned base = 10;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  }
  if (!*p) return INT_BAD;
  uint64_t mag = 0;
  bool big = false;
  for (; *p; ++p) {
    unsigned d = 99;
    if (*p >= '0' && *p <= '9') d = (unsigned)(*p - '0');
    if (*p >= 'a' && *p <= 'f') d = (unsigned)(*p - 'a' + 10);
    if (*p >= 'A' && *p <= 'F') d = (unsigned)(*p - 'A' + 10);
    if (d >= base) return INT_BAD;
    if (mag > (UINT64_MAX - d) / base) big = true;
    else mag = mag * base + d;
  }
  uint64_t limit_pos = is_signed ? (UINT64_C(1) << (bits - 1)) - 1
                                 : (bits == 64 ? UINT64_MAX
                                               : (UINT64_C(1) << bits) - 1);
  uint64_t limit_neg = is_signed ? UINT64_C(1) << (bits - 1) : 0;
  if (big || (!negative && mag > limit_pos) || (negative && mag > limit_neg)) {
    return INT_RANGE;
  }
  *out = negative ? (uint64_t)0 - mag : mag;
  return INT_OK;
}

/* Anything strtod reads in full (no leading blanks). */
static bool parse_double(const char* text, double* out) {
  if (!*text || strchr(" \t\n\v\f\r", *text)) return false;
  char* end = NULL;
  double d = strtod(text, &end);
  if (*end) return false;
  *out = d;
  return true;
}

/* Writes `text` into element `index` of `t`. */
static kc_status* store_element(const DLTensor* t, size_t index,
                                const char* text) {
  DLDataType dt = t->dtype;
  unsigned char* p = (unsigned char*)t->data + index * kc_dtype_get_size(dt);
  char type[32];
  kc_dtype_format(dt, type, sizeof type);
  if (dt.code == kDLFloat || dt.code == kDLBfloat) {
    double d = 0;
    if (!parse_double(text, &d)) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "element %zu: %s is not a number", index, CLI_QS(text));
    }
    if (dt.bits == 64) {
      memcpy(p, &d, sizeof d);
    } else if (dt.bits == 32) {
      float f = (float)d;
      memcpy(p, &f, sizeof f);
    } else {
      /* Rounded once, from the double (XLA's f64 -> f16 convert). */
      uint16_t h = dt.code == kDLBfloat ? kc__f64_to_bf16(d) : kc__f64_to_f16(d);
      memcpy(p, &h, sizeof h);
    }
    return NULL;
  }
  if (dt.code == kDLBool) {
    bool t_ = !strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "1");
    bool f_ = !strcmp(text, "false") || !strcmp(text, "False") || !strcmp(text, "0");
    if (!t_ && !f_) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "element %zu: %s is not a bool (true, false, "
                              "1 or 0)", index, CLI_QS(text));
    }
    *p = t_ ? 1 : 0;
    return NULL;
  }
  uint64_t v = 0;
  switch (parse_int(text, dt.code == kDLInt, dt.bits, &v)) {
    case INT_BAD:
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "element %zu: %s is not an integer", index,
                              CLI_QS(text));
    case INT_RANGE:
      return kc_status_create(KC_OUT_OF_RANGE,
                              "element %zu: %s does not fit in %s", index,
                              text, type);
    case INT_OK:
      break;
  }
  /* Little-endian: the low bytes of v are the element. */
  uint8_t bytes[8];
  for (size_t i = 0; i < 8; ++i) bytes[i] = (uint8_t)(v >> (8 * i));
  memcpy(p, bytes, dt.bits / 8);
  return NULL;
}

/* Dtypes a literal or the generated pattern can fill. */
static bool fillable(DLDataType dt) {
  if (dt.lanes != 1) return false;
  switch (dt.code) {
    case kDLFloat: return dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
    case kDLBfloat: return dt.bits == 16;
    case kDLInt:
    case kDLUInt:
      return dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
    case kDLBool: return dt.bits == 8;
    default: return false;
  }
}

static kc_status* new_tensor(const kc_shape* shape, kc_tensor** out) {
  if (!fillable(kc_shape_get_dtype(shape))) {
    char text[256];
    kc_shape_format(shape, text, sizeof text);
    return kc_status_create(KC_UNIMPLEMENTED,
                            "kcall run cannot make %s values; give a .npy "
                            "file", text);
  }
  return kc_tensor_create(NULL, kc_shape_get_dims(shape),
                          kc_shape_get_rank(shape), kc_shape_get_dtype(shape),
                          kc_device_cpu(), out);
}

/* The next item of a literal: a number token, or one of "[],". */
typedef struct lexer {
  const char* p;
} lexer;

static size_t next_token(lexer* lx, const char** out_start) {
  while (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n') ++lx->p;
  *out_start = lx->p;
  if (!*lx->p) return 0;
  if (strchr("[],", *lx->p)) return (size_t)(++lx->p - *out_start);
  while (*lx->p && !strchr("[], \t\n", *lx->p)) ++lx->p;
  return (size_t)(lx->p - *out_start);
}

static kc_status* list_error(const char* text, const char* at) {
  if (!*at) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "malformed list: a ']' is missing");
  }
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "malformed list at character %zu ('%c'): write "
                          "[1, 2, 3] or [[1, 2], [3, 4]]",
                          (size_t)(at - text) + 1, *at);
}

/* Walks a bracketed literal. With `t` NULL it only counts the numbers
 * (and checks the brackets); otherwise it stores them in order. Nesting
 * is for the reader: only the count and order of the numbers matter. */
static kc_status* walk_list(const char* text, const DLTensor* t,
                            size_t* out_count) {
  lexer lx = {text};
  const char* tok;
  size_t len;
  size_t count = 0;
  int depth = 0;
  char prev = '\0'; /* the kind of the previous token: [ ] , or n */
  while ((len = next_token(&lx, &tok)) > 0) {
    bool after_item = prev == 'n' || prev == ']';
    char kind = strchr("[],", *tok) ? *tok : 'n';
    bool ok = depth > 0 || (prev == '\0' && kind == '[');
    if (kind == '[') {
      ok = ok && !after_item;
      ++depth;
    } else if (kind == ']') {
      ok = ok && prev != ',';
      --depth;
    } else if (kind == ',') {
      ok = ok && after_item;
    } else {
      ok = ok && !after_item;
      if (ok && t) {
        char buf[64];
        if (len >= sizeof buf) {
          return kc_status_create(KC_INVALID_ARGUMENT,
                                  "element %zu is too long", count);
        }
        memcpy(buf, tok, len);
        buf[len] = '\0';
        kc_status* st = store_element(t, count, buf);
        if (st) return st;
      }
      ++count;
    }
    prev = kind;
    if (!ok) return list_error(text, tok);
    if (depth == 0) {
      if (next_token(&lx, &tok) > 0) return list_error(text, tok);
      break;
    }
  }
  if (depth != 0) return list_error(text, lx.p);
  *out_count = count;
  return NULL;
}

static kc_status* literal_tensor(const char* text, const kc_shape* shape,
                                 kc_tensor** out) {
  size_t count = 0;
  if (text[0] == '[') {
    kc_status* st = walk_list(text, NULL, &count);
    if (st) return st;
  }
  kc_tensor* t = NULL;
  kc_status* st = new_tensor(shape, &t);
  if (st) return st;
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  size_t numel = (size_t)kc_dltensor_get_numel(dl);
  if (text[0] == '[' && count != numel) {
    char shape_text[256];
    kc_shape_format(shape, shape_text, sizeof shape_text);
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "the list has %zu elements, the input is %s "
                          "(%zu elements)",
                          count, shape_text, numel);
  } else if (text[0] == '[') {
    st = walk_list(text, dl, &count);
  } else {
    /* A scalar fills the whole array. */
    st = numel ? store_element(dl, 0, text) : NULL;
    size_t elem = kc_dtype_get_size(dl->dtype);
    for (size_t i = 1; i < numel && !st; ++i) {
      memcpy((char*)dl->data + i * elem, dl->data, elem);
    }
  }
  if (st) {
    kc_object_release(KC_OBJECT(t));
    return st;
  }
  *out = t;
  return NULL;
}

/* True when VALUE is a literal rather than a file name. */
static bool is_literal(const char* value) {
  if (value[0] == '[') return true;
  double d;
  return parse_double(value, &d) || !strcmp(value, "true") ||
         !strcmp(value, "false");
}

/* ---- files ---------------------------------------------------------------- */

static kc_status* file_tensor(const char* path, const kc_shape* shape,
                              kc_tensor** out) {
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_read_npy(path, NULL, &t);
  if (st) return st;
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  kc_shape* got = NULL;
  st = kc_shape_create_array(dl->dtype, dl->shape, dl->ndim, &got);
  if (!st && !kc_shape_equal(got, shape)) {
    char want_text[256];
    char got_text[256];
    kc_shape_format(shape, want_text, sizeof want_text);
    kc_shape_format(got, got_text, sizeof got_text);
    st = kc_status_create(KC_INVALID_ARGUMENT, "%s holds %s, the input is %s",
                          CLI_QS(path), got_text, want_text);
  }
  kc_shape_destroy(got);
  if (st) {
    kc_object_release(KC_OBJECT(t));
    return st;
  }
  *out = t;
  return NULL;
}

kc_status* run_inputs_set(run_inputs* in, const char* spec) {
  const char* eq = strchr(spec, '=');
  if (!eq || eq == spec) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "--input %s: expected NAME=FILE.npy or "
                            "NAME=VALUE", CLI_QS(spec));
  }
  kc_string_view name = {spec, (size_t)(eq - spec)};
  if (name.data[0] == '%') {
    ++name.data;
    --name.size;
  }
  run_leaf* leaf = NULL;
  kc_status* st = find_leaf(in, name, &leaf);
  if (st) return st;
  if (leaf->tensor) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "input %s is given twice (%s and %s)",
                            CLI_QS(leaf->name), CLI_QS(leaf->source), CLI_QS(eq + 1));
  }
  const char* value = eq + 1;
  st = is_literal(value) ? literal_tensor(value, leaf->shape, &leaf->tensor)
                         : file_tensor(value, leaf->shape, &leaf->tensor);
  if (!st) {
    leaf->source = format_text("%s", value);
    if (!leaf->source) st = oom();
  }
  return kc_status_add_context(st, "input %s", CLI_QS(leaf->name));
}

/* ---- the generated pattern ------------------------------------------------ */

static kc_status* generate(run_leaf* leaf) {
  kc_status* st = new_tensor(leaf->shape, &leaf->tensor);
  if (st) return st;
  const DLTensor* t = kc_tensor_get_dltensor(leaf->tensor);
  DLDataType dt = t->dtype;
  size_t numel = (size_t)kc_dltensor_get_numel(t);
  size_t elem = kc_dtype_get_size(dt);
  unsigned char* p = t->data;
  for (size_t i = 0; i < numel; ++i, p += elem) {
    if (dt.code == kDLFloat || dt.code == kDLBfloat) {
      double d = (double)i * 0.01;
      float f = (float)d;
      uint16_t h = kc__f32_to_half(dt.code == kDLBfloat, f);
      if (dt.bits == 64) memcpy(p, &d, sizeof d);
      if (dt.bits == 32) memcpy(p, &f, sizeof f);
      if (dt.bits == 16) memcpy(p, &h, sizeof h);
    } else if (dt.code == kDLBool) {
      *p = (unsigned char)(i & 1);
    } else {
      /* i modulo 2^bits: the low bytes, little-endian. */
      for (size_t b = 0; b < elem; ++b) p[b] = (unsigned char)(i >> (8 * b));
    }
  }
  leaf->source = format_text("generated");
  return leaf->source ? NULL : oom();
}

kc_status* run_inputs_finish(run_inputs* in, bool generate_missing,
                             FILE* note) {
  text_list missing = {NULL, 0, 0};
  size_t num_missing = 0;
  kc_status* st = NULL;
  for (size_t i = 0; i < in->count && !st; ++i) {
    run_leaf* leaf = &in->leaves[i];
    if (leaf->tensor) continue;
    ++num_missing;
    list_add(&missing, leaf->name, leaf->shape);
    if (generate_missing) {
      st = kc_status_add_context(generate(leaf), "input %s", CLI_QS(leaf->name));
    }
  }
  list_end(&missing);
  if (!st && num_missing) {
    if (generate_missing) {
      if (note) fprintf(note, "kcall: generated inputs: %s\n", missing.text);
    } else {
      st = kc_status_create(KC_INVALID_ARGUMENT,
                            "missing inputs: %s; give each with --input "
                            "NAME=FILE.npy or NAME=VALUE, or pass "
                            "--generate-inputs",
                            missing.text ? missing.text : "?");
    }
  }
  free(missing.text);
  return st;
}
