/* The HLO-text tokenizer and the helpers shared by the parsers. */
#include "program/frontend/lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/cnum.h"

/* ASCII classes by table: <ctype.h> answers by the process's locale, and
 * the lexer looks at every byte of the text. Bytes from 128 on are in no
 * class. */
enum { KC__C_START = 1, KC__C_IDENT = 2, KC__C_DIGIT = 4 };
static const unsigned char kc__char_class[128] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 0, /* $ - . */
    6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 0, 0, 0, 0, 0, 0, /* 0-9 */
    0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, /* A-O */
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 3, /* P-Z _ */
    0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, /* a-o */
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0, /* p-z */
};

static inline bool kc__in_class(int c, unsigned cls) {
  return c >= 0 && c < 128 && (kc__char_class[c] & cls);
}
static inline bool kc__is_digit(int c) { return kc__in_class(c, KC__C_DIGIT); }
static inline bool kc__is_ident_start(int c) { return kc__in_class(c, KC__C_START); }
static inline bool kc__is_ident_char(int c) { return kc__in_class(c, KC__C_IDENT); }
static int kc__hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static inline int kc__byte_at(const kc__lexer* lx, size_t pos) {
  return pos < lx->size ? (unsigned char)lx->text[pos] : -1;
}

static int32_t kc__column(const kc__lexer* lx, size_t pos) {
  int64_t col = (int64_t)pos - lx->line_start + 1;
  return col > INT32_MAX ? INT32_MAX : (int32_t)col;
}

/* Skips blanks and comments. False (with an ERROR token in lx->tok) for
 * a block comment that never ends. */
static bool kc__skip_blank(kc__lexer* lx) {
  for (;;) {
    int c = kc__byte_at(lx, lx->pos);
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      lx->pos++;
    } else if (c == '\n') {
      lx->pos++;
      if (lx->line < INT32_MAX) lx->line++;
      lx->line_start = (int64_t)lx->pos;
    } else if (c == '/' && kc__byte_at(lx, lx->pos + 1) == '/') {
      while (lx->pos < lx->size && lx->text[lx->pos] != '\n') lx->pos++;
    } else if (c == '/' && kc__byte_at(lx, lx->pos + 1) == '*') {
      /* XLA writes index comments ("/" "*index=5*" "/") inside long
       * tuples and operand lists. */
      kc__token start = {.kind = KC__TOK_ERROR,
                         .text = {lx->text + lx->pos, 2},
                         .line = lx->line,
                         .column = kc__column(lx, lx->pos),
                         .error = "unterminated comment"};
      lx->pos += 2;
      for (;;) {
        int d = kc__byte_at(lx, lx->pos);
        if (d < 0) {
          lx->tok = start;
          return false;
        }
        lx->pos++;
        if (d == '\n') {
          if (lx->line < INT32_MAX) lx->line++;
          lx->line_start = (int64_t)lx->pos;
        } else if (d == '*' && kc__byte_at(lx, lx->pos) == '/') {
          lx->pos++;
          break;
        }
      }
    } else {
      return true;
    }
  }
}

static void kc__lex_number(kc__lexer* lx) {
  size_t p = lx->pos;
  if (kc__byte_at(lx, p) == '-') p++;
  int x = kc__byte_at(lx, p + 1);
  if (kc__byte_at(lx, p) == '0' && (x == 'x' || x == 'X') &&
      kc__hex_value(kc__byte_at(lx, p + 2)) >= 0) {
    p += 2;
    while (kc__hex_value(kc__byte_at(lx, p)) >= 0) p++;
  } else {
    while (kc__is_digit(kc__byte_at(lx, p))) p++;
    if (kc__byte_at(lx, p) == '.') {
      p++;
      while (kc__is_digit(kc__byte_at(lx, p))) p++;
    }
    int e = kc__byte_at(lx, p);
    if (e == 'e' || e == 'E') {
      size_t q = p + 1;
      if (kc__byte_at(lx, q) == '+' || kc__byte_at(lx, q) == '-') q++;
      if (kc__is_digit(kc__byte_at(lx, q))) {
        p = q;
        while (kc__is_digit(kc__byte_at(lx, p))) p++;
      }
    }
  }
  lx->tok.kind = KC__TOK_NUMBER;
  lx->tok.text.size = p - lx->pos;
  lx->pos = p;
}

static void kc__lex_quoted(kc__lexer* lx) {
  size_t p = lx->pos + 1;
  for (;;) {
    int c = kc__byte_at(lx, p);
    if (c == '\\' && kc__byte_at(lx, p + 1) >= 0 && kc__byte_at(lx, p + 1) != '\n') {
      p += 2;
    } else if (c == '"') {
      lx->tok.kind = KC__TOK_STRING;
      lx->tok.text.data = lx->text + lx->pos + 1;
      lx->tok.text.size = p - lx->pos - 1;
      lx->pos = p + 1;
      return;
    } else if (c < 0 || c == '\n') {
      /* A string never spans lines, so a lost quote is reported where the
       * string starts instead of swallowing the rest of the file. */
      lx->tok.kind = KC__TOK_ERROR;
      lx->tok.text.size = 1;
      lx->tok.error = "unterminated string (a string must end on its line)";
      return;
    } else {
      p++;
    }
  }
}

void kc__lex_next(kc__lexer* lx) {
  /* An error token stays current, so every later look reports it. */
  if (lx->tok.kind == KC__TOK_ERROR) return;
  lx->prev_line = lx->tok.line;
  if (!kc__skip_blank(lx)) return;
  kc__token* t = &lx->tok;
  t->line = lx->line;
  t->column = kc__column(lx, lx->pos);
  t->text.data = lx->text + lx->pos;
  t->text.size = 0;
  t->error = NULL;
  int c = kc__byte_at(lx, lx->pos);
  if (c < 0) {
    t->kind = KC__TOK_END;
  } else if (kc__is_ident_start(c)) {
    size_t p = lx->pos;
    while (kc__is_ident_char(kc__byte_at(lx, p))) p++;
    t->kind = KC__TOK_IDENT;
    t->text.size = p - lx->pos;
    lx->pos = p;
  } else if (c == '%' && kc__is_ident_char(kc__byte_at(lx, lx->pos + 1))) {
    size_t p = lx->pos + 1;
    while (kc__is_ident_char(kc__byte_at(lx, p))) p++;
    t->kind = KC__TOK_NAME;
    t->text.data++;
    t->text.size = p - lx->pos - 1;
    lx->pos = p;
  } else if (kc__is_digit(c) ||
             (c == '-' && kc__is_digit(kc__byte_at(lx, lx->pos + 1)))) {
    kc__lex_number(lx);
  } else if (c == '"') {
    kc__lex_quoted(lx);
  } else {
    t->kind = KC__TOK_PUNCT;
    t->text.size = 1;
    lx->pos++;
  }
}

void kc__lexer_init(kc__lexer* lx, kc_string_view text, int32_t line,
                    int32_t column) {
  memset(lx, 0, sizeof *lx);
  lx->text = text.data ? text.data : "";
  lx->size = text.data ? text.size : 0;
  lx->line = line;
  lx->line_start = 1 - (int64_t)column;
  lx->tok.kind = KC__TOK_END;
  lx->tok.line = line;
  kc__lex_next(lx);
  lx->prev_line = line;
}

kc__token kc__lex_peek(const kc__lexer* lx) {
  kc__lexer copy = *lx;
  kc__lex_next(&copy);
  return copy.tok;
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */
/* ------------------------------------------------------------------------ */

/* How a message quotes a token (kc_sv_format_quoted): a string with its
 * double quotes, a %name with its '%'. */
static void kc__describe_token(const kc__token* t, char* buf, size_t cap) {
  kc_string_view text = t->text;
  switch (t->kind) {
    case KC__TOK_END:
      snprintf(buf, cap, "end of input");
      return;
    case KC__TOK_STRING: /* the lexer found both quotes around the text */
      text.data -= 1;
      text.size += 2;
      break;
    case KC__TOK_NAME:
      text.data -= 1;
      text.size += 1;
      break;
    case KC__TOK_PUNCT: {
      unsigned char c = (unsigned char)t->text.data[0];
      if (c < 0x20 || c >= 0x7f) {
        snprintf(buf, cap, "byte 0x%02x", c);
        return;
      }
      break;
    }
    default:
      break;
  }
  kc_sv_format_quoted(text, buf, cap);
}

static kc_status* kc__lex_fail_v(const kc__lexer* lx, const kc__token* at,
                                 const char* fmt, va_list args) {
  return lx->column_only
             ? kc__status_create_prefixed_v(KC_INVALID_ARGUMENT, fmt, args, "column %d",
                                            at->column)
             : kc__status_create_prefixed_v(KC_INVALID_ARGUMENT, fmt, args,
                                            "line %d, column %d", at->line, at->column);
}

kc_status* kc__lex_fail(const kc__lexer* lx, const kc__token* at,
                        const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  kc_status* st = kc__lex_fail_v(lx, at, fmt, args);
  va_end(args);
  return st;
}

kc_status* kc__lex_expected(const kc__lexer* lx, const kc__token* at,
                            const char* what) {
  if (at->kind == KC__TOK_ERROR) return kc__lex_fail(lx, at, "%s", at->error);
  char got[KC_QUOTED_CAP];
  kc__describe_token(at, got, sizeof got);
  return kc__lex_fail(lx, at, "expected %s, got %s", what, got);
}

kc_status* kc__lex_expect(kc__lexer* lx, char c) {
  if (kc__tok_is_punct(&lx->tok, c)) {
    kc__lex_next(lx);
    return NULL;
  }
  char what[4] = {'\'', c, '\'', '\0'};
  return kc__lex_expected(lx, &lx->tok, what);
}

bool kc__lex_list_begin(kc__lexer* lx, char close) {
  if (!kc__tok_is_punct(&lx->tok, close)) return true;
  kc__lex_next(lx);
  return false;
}

kc_status* kc__lex_list_next(kc__lexer* lx, char close, bool* out_more) {
  *out_more = kc__tok_is_punct(&lx->tok, ',');
  if (!*out_more && !kc__tok_is_punct(&lx->tok, close)) {
    char what[16] = {'\'', ',', '\'', ' ', 'o', 'r', ' ', '\'', close, '\'', '\0'};
    return kc__lex_expected(lx, &lx->tok, what);
  }
  kc__lex_next(lx);
  return NULL;
}

static bool kc__is_opener(const kc__token* t) {
  return kc__tok_is_punct(t, '(') || kc__tok_is_punct(t, '{') ||
         kc__tok_is_punct(t, '[');
}
static bool kc__is_closer(const kc__token* t) {
  return kc__tok_is_punct(t, ')') || kc__tok_is_punct(t, '}') ||
         kc__tok_is_punct(t, ']');
}

kc_status* kc__lex_skip_value(kc__lexer* lx) {
  int32_t last_line = lx->prev_line;
  for (;;) {
    const kc__token* t = &lx->tok;
    if (t->kind == KC__TOK_ERROR) return kc__lex_expected(lx, t, "a value");
    if (t->kind == KC__TOK_END || t->line != last_line ||
        kc__tok_is_punct(t, ',') || kc__is_closer(t)) {
      return NULL;
    }
    if (kc__is_opener(t)) {
      KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
      last_line = lx->prev_line;
    } else {
      last_line = t->line;
      kc__lex_next(lx);
    }
  }
}

bool kc__lex_raw_until(kc__lexer* lx, char close, kc_string_view* out) {
  size_t p = lx->pos;
  for (int c = kc__byte_at(lx, p); c != close; c = kc__byte_at(lx, ++p)) {
    if (c < 0 || c == '\n') return false;
  }
  out->data = lx->text + lx->pos;
  out->size = p - lx->pos;
  kc__token at = {.kind = KC__TOK_PUNCT,
                  .text = {lx->text + p, 1},
                  .line = lx->line,
                  .column = kc__column(lx, p)};
  lx->pos = p + 1;
  lx->tok = at;
  kc__lex_next(lx);
  return true;
}

kc_string_view kc__lex_raw_span(kc__lexer* lx, const char* allowed) {
  size_t start = (size_t)(lx->tok.text.data - lx->text);
  size_t p = start;
  for (int c = kc__byte_at(lx, p); c > 0 && strchr(allowed, c); c = kc__byte_at(lx, ++p)) {
  }
  kc_string_view out = {lx->text + start, p - start};
  lx->pos = p;
  kc__lex_next(lx);
  return out;
}

/* Groups are skipped byte by byte rather than token by token: metadata,
 * sharding and layouts of a large dump are most of its text. Strings and
 * comments are still honoured, so a bracket inside one does not count. */
kc_status* kc__lex_skip_group(kc__lexer* lx, kc__token* out_close) {
  kc__token open = lx->tok;
  size_t depth = 1;
  for (;;) {
    int c = kc__byte_at(lx, lx->pos);
    switch (c) {
      case '(': case '[': case '{':
        depth++;
        lx->pos++;
        break;
      case ')': case ']': case '}':
        if (--depth == 0) {
          kc__token close = {.kind = KC__TOK_PUNCT,
                             .text = {lx->text + lx->pos, 1},
                             .line = lx->line,
                             .column = kc__column(lx, lx->pos)};
          lx->pos++;
          lx->tok = close;
          if (out_close) *out_close = close;
          kc__lex_next(lx);
          return NULL;
        }
        lx->pos++;
        break;
      case '"':
        lx->tok.line = lx->line;
        lx->tok.column = kc__column(lx, lx->pos);
        lx->tok.text.data = lx->text + lx->pos;
        kc__lex_quoted(lx);
        if (lx->tok.kind == KC__TOK_ERROR) return kc__lex_expected(lx, &lx->tok, "a value");
        break;
      case '\n': case '/': {
        size_t before = lx->pos;
        if (!kc__skip_blank(lx)) return kc__lex_expected(lx, &lx->tok, "a value");
        if (lx->pos == before) lx->pos++; /* a '/' that starts no comment */
        break;
      }
      case -1: {
        kc__token end = {.kind = KC__TOK_END,
                         .text = {lx->text + lx->pos, 0},
                         .line = lx->line,
                         .column = kc__column(lx, lx->pos)};
        lx->tok = end;
        char what[96];
        snprintf(what, sizeof what, "a bracket closing the '%c' at line %d, column %d",
                 open.text.data[0], open.line, open.column);
        return kc__lex_expected(lx, &end, what);
      }
      default:
        lx->pos++;
        break;
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Numbers                                                                   */
/* ------------------------------------------------------------------------ */

bool kc__number_is_int(kc_string_view text) {
  size_t i = text.size && text.data[0] == '-' ? 1 : 0;
  if (text.size >= i + 2 && text.data[i] == '0' &&
      (text.data[i + 1] == 'x' || text.data[i + 1] == 'X')) {
    return true;
  }
  for (; i < text.size; ++i) {
    if (!kc__is_digit((unsigned char)text.data[i])) return false;
  }
  return true;
}

bool kc__number_to_int(kc_string_view text, bool* out_negative,
                       uint64_t* out_magnitude) {
  size_t i = 0;
  bool negative = text.size > 0 && text.data[0] == '-';
  if (negative) i++;
  unsigned base = 10;
  if (text.size >= i + 2 && text.data[i] == '0' &&
      (text.data[i + 1] == 'x' || text.data[i + 1] == 'X')) {
    base = 16;
    i += 2;
  }
  if (i == text.size) return false;
  uint64_t v = 0;
  for (; i < text.size; ++i) {
    int d = kc__hex_value((unsigned char)text.data[i]);
    if (d < 0 || (unsigned)d >= base) return false;
    if (__builtin_mul_overflow(v, (uint64_t)base, &v) ||
        __builtin_add_overflow(v, (uint64_t)d, &v)) {
      return false;
    }
  }
  *out_negative = negative;
  *out_magnitude = v;
  return true;
}

bool kc__number_to_double(kc_string_view text, double* out) {
  char buf[128];
  if (text.size == 0 || text.size >= sizeof buf) return false;
  for (size_t i = 0; i < text.size; ++i) {
    char c = text.data[i];
    if (c == 'x' || c == 'X') return false; /* strtod would take hex */
    buf[i] = c;
  }
  buf[text.size] = '\0';
  char* end = NULL;
  *out = kc__strtod_c(buf, &end);
  return end == buf + text.size;
}

kc_status* kc__lex_int(kc__lexer* lx, const char* what, int64_t lo,
                       int64_t hi, int64_t* out) {
  const kc__token* t = &lx->tok;
  bool negative;
  uint64_t magnitude;
  if (t->kind != KC__TOK_NUMBER || !kc__number_to_int(t->text, &negative, &magnitude)) {
    return kc__lex_expected(lx, t, what);
  }
  bool fits = negative ? (lo < 0 && magnitude <= (uint64_t)(-(lo + 1)) + 1)
                       : (hi >= 0 && magnitude <= (uint64_t)hi);
  int64_t v = 0;
  if (fits) {
    v = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    fits = v >= lo;
  }
  if (!fits) {
    char text[160];
    snprintf(text, sizeof text, "%s (from %lld to %lld)", what, (long long)lo,
             (long long)hi);
    return kc__lex_expected(lx, t, text);
  }
  *out = v;
  kc__lex_next(lx);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Strings                                                                   */
/* ------------------------------------------------------------------------ */

/* The escape at raw[*i] (the byte after a backslash), decoded into *out;
 * moves *i past it. False when it is not one `escapes` allows. */
static bool kc__unescape(kc_string_view raw, size_t* i, kc__escapes escapes,
                         unsigned char* out) {
  int c = (unsigned char)raw.data[*i];
  switch (c) {
    case '\\': *out = '\\'; break;
    case '"': *out = '"'; break;
    case 'n': *out = '\n'; break;
    case 't': *out = '\t'; break;
    default:
      if (escapes == KC__ESCAPES_MLIR) {
        int hi = kc__hex_value(c);
        int lo = *i + 1 < raw.size ? kc__hex_value((unsigned char)raw.data[*i + 1]) : -1;
        if (hi < 0 || lo < 0) return false;
        *out = (unsigned char)(hi * 16 + lo);
        *i += 2;
        return true;
      }
      switch (c) {
        case 'r': *out = '\r'; break;
        case '\'': *out = '\''; break;
        case '?': *out = '?'; break;
        case 'a': *out = '\a'; break;
        case 'b': *out = '\b'; break;
        case 'f': *out = '\f'; break;
        case 'v': *out = '\v'; break;
        case 'x': {
          size_t j = *i + 1;
          unsigned v = 0;
          while (j < raw.size && j < *i + 3 && kc__hex_value((unsigned char)raw.data[j]) >= 0) {
            v = v * 16 + (unsigned)kc__hex_value((unsigned char)raw.data[j++]);
          }
          if (j == *i + 1) return false;
          *out = (unsigned char)v;
          *i = j;
          return true;
        }
        default: {
          if (c < '0' || c > '7') return false;
          size_t j = *i;
          unsigned v = 0;
          while (j < raw.size && j < *i + 3 && raw.data[j] >= '0' && raw.data[j] <= '7') {
            v = v * 8 + (unsigned)(raw.data[j++] - '0');
          }
          if (v > 0xff) return false;
          *out = (unsigned char)v;
          *i = j;
          return true;
        }
      }
  }
  *i += 1;
  return true;
}

kc_status* kc__lex_string(const kc__lexer* lx, const kc__token* t,
                          kc__escapes escapes, kc__arena* arena,
                          kc_string_view* out) {
  if (t->kind != KC__TOK_STRING) return kc__lex_expected(lx, t, "a string");
  kc_string_view raw = t->text;
  unsigned char* dst = kc__arena_alloc(arena, raw.size + 1);
  if (!dst) return kc__parse_oom();
  size_t n = 0;
  for (size_t i = 0; i < raw.size;) {
    if (raw.data[i] != '\\') {
      dst[n++] = (unsigned char)raw.data[i++];
      continue;
    }
    size_t at = i++;
    if (!kc__unescape(raw, &i, escapes, &dst[n])) {
      /* Strings never span lines, so the column of the backslash is the
       * string's column plus its offset. */
      kc__token where = *t;
      where.column = t->column + 1 + (int32_t)at;
      where.kind = KC__TOK_IDENT;
      where.text.data = raw.data + at;
      where.text.size = at + 2 <= raw.size ? 2 : 1;
      return kc__lex_expected(
          lx, &where,
          escapes == KC__ESCAPES_MLIR
              ? "an escape (\\\\, \\\", \\n, \\t or two hex digits)"
              : "an escape (\\n, \\t, \\r, \\\\, \\\", \\', \\xHH, octal, ...)");
    }
    n++;
  }
  dst[n] = '\0';
  out->data = (const char*)dst;
  out->size = n;
  return NULL;
}

kc_status* kc__parse_oom(void) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory while parsing");
}
