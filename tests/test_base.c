/* Tests of kcall/base.h and kcall/version.h: status, string views, dtypes,
 * devices, version. Allocators are in test_alloc.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* ---- status --------------------------------------------------------------- */

KC_TEST(status_create_and_read) {
  kc_status* st = kc_status_create(KC_INVALID_ARGUMENT, "bad %s at %d", "x", 3);
  KC_CHECK(st != NULL);
  KC_CHECK_INT(kc_status_get_code(st), KC_INVALID_ARGUMENT);
  KC_CHECK_STR(kc_status_get_message(st), "bad x at 3");
  KC_CHECK_INT(kc_status_get_context_count(st), 0);
  KC_CHECK(kc_status_get_context(st, 0) == NULL);
  char buf[128];
  KC_CHECK_STR(kt_status_text(st, buf, sizeof buf), "INVALID_ARGUMENT: bad x at 3");
  kc_status_destroy(st);
}

KC_TEST(status_context_chain_order) {
  kc_status* st = kc_status_create(KC_NOT_FOUND, "no such file");
  st = kc_status_add_context(st, "inner %d", 1);
  st = kc_status_add_context(st, "outer");
  KC_CHECK_INT(kc_status_get_code(st), KC_NOT_FOUND);
  KC_CHECK_STR(kc_status_get_message(st), "no such file");
  KC_CHECK_INT(kc_status_get_context_count(st), 2);
  KC_CHECK_STR(kc_status_get_context(st, 0), "outer");
  KC_CHECK_STR(kc_status_get_context(st, 1), "inner 1");
  KC_CHECK(kc_status_get_context(st, 2) == NULL);
  char buf[128];
  KC_CHECK_STR(kt_status_text(st, buf, sizeof buf),
               "NOT_FOUND: outer: inner 1: no such file");
  kc_status_destroy(st);
}

KC_TEST(status_ok_and_null) {
  KC_CHECK(kc_status_create(KC_OK, "ignored %d", 1) == NULL);
  KC_CHECK(kc_status_add_context(NULL, "ctx") == NULL);
  KC_CHECK_INT(kc_status_get_code(NULL), KC_OK);
  KC_CHECK_STR(kc_status_get_message(NULL), "");
  KC_CHECK_INT(kc_status_get_context_count(NULL), 0);
  KC_CHECK(kc_status_get_context(NULL, 0) == NULL);
  char buf[16];
  KC_CHECK_INT(kc_status_format(NULL, buf, sizeof buf), 2);
  KC_CHECK_STR(buf, "OK");
  kc_status_destroy(NULL);
}

KC_TEST(status_unknown_code_becomes_unknown) {
  kc_status* st = kc_status_create((kc_status_code)99, "odd");
  KC_CHECK_INT(kc_status_get_code(st), KC_UNKNOWN);
  kc_status_destroy(st);
}

KC_TEST(status_code_names) {
  struct {
    kc_status_code code;
    const char* name;
  } codes[] = {
#define KT_CODE(name, value) {KC_##name, #name},
      KC_STATUS_CODES(KT_CODE)
#undef KT_CODE
  };
  KC_CHECK_INT(sizeof codes / sizeof codes[0], 17);
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; ++i) {
    KC_CHECK_INT(codes[i].code, i);
    KC_CHECK_STR(kc_status_code_name(codes[i].code), codes[i].name);
    if (codes[i].code == KC_OK) continue;
    kc_status* st = kc_status_create(codes[i].code, "m");
    char buf[64], want[64];
    snprintf(want, sizeof want, "%s: m", codes[i].name);
    KC_CHECK_STR(kt_status_text(st, buf, sizeof buf), want);
    kc_status_destroy(st);
  }
  KC_CHECK_STR(kc_status_code_name((kc_status_code)17), "UNKNOWN");
  KC_CHECK_STR(kc_status_code_name((kc_status_code)-1), "UNKNOWN");
  KC_CHECK_STR(kc_status_code_name((kc_status_code)1000), "UNKNOWN");
}

KC_TEST(status_format_truncates_like_snprintf) {
  kc_status* st = kc_status_create(KC_ABORTED, "stop");
  st = kc_status_add_context(st, "here");
  const char* full = "ABORTED: here: stop";
  size_t n = strlen(full);
  KC_CHECK_INT(kc_status_format(st, NULL, 0), n);
  char buf[64];
  memset(buf, 'z', sizeof buf);
  KC_CHECK_INT(kc_status_format(st, buf, 0), n);
  KC_CHECK(buf[0] == 'z'); /* cap 0 writes nothing */
  KC_CHECK_INT(kc_status_format(st, buf, 1), n);
  KC_CHECK_STR(buf, "");
  KC_CHECK_INT(kc_status_format(st, buf, 5), n);
  KC_CHECK_STR(buf, "ABOR");
  KC_CHECK_INT(kc_status_format(st, buf, n), n);
  KC_CHECK(strncmp(buf, full, n - 1) == 0 && buf[n - 1] == '\0');
  KC_CHECK_INT(kc_status_format(st, buf, n + 1), n);
  KC_CHECK_STR(buf, full);
  kc_status_destroy(st);
}

KC_TEST(status_long_message) {
  char big[3000];
  memset(big, 'q', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  kc_status* st = kc_status_create(KC_INTERNAL, "%s!", big);
  KC_CHECK_INT(strlen(kc_status_get_message(st)), sizeof big);
  KC_CHECK_INT(kc_status_format(st, NULL, 0), strlen("INTERNAL: ") + sizeof big);
  kc_status_destroy(st);
}

static kc_status* kt_create_v(kc_status_code code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  kc_status* st = kc_status_create_v(code, fmt, args);
  va_end(args);
  return st;
}

static kc_status* kt_add_context_v(kc_status* st, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  st = kc_status_add_context_v(st, fmt, args);
  va_end(args);
  return st;
}

KC_TEST(status_va_list_forms) {
  kc_status* st = kt_create_v(KC_OUT_OF_RANGE, "index %d of %s", 7, "x");
  st = kt_add_context_v(st, "in %s", "f");
  char buf[128];
  KC_CHECK_STR(kt_status_text(st, buf, sizeof buf),
               "OUT_OF_RANGE: in f: index 7 of x");
  kc_status_destroy(st);
  KC_CHECK(kt_create_v(KC_OK, "%d", 1) == NULL);
  KC_CHECK(kt_add_context_v(NULL, "%d", 1) == NULL);
}

static kc_status* kt_failing_step(bool fail) {
  return fail ? kc_status_create(KC_DATA_LOSS, "broken") : NULL;
}

static int kt_steps_done;

static kc_status* kt_two_steps(bool fail_second) {
  KC_RETURN_IF_ERROR(kt_failing_step(false), "step %d", 1);
  ++kt_steps_done;
  KC_RETURN_IF_ERROR(kt_failing_step(fail_second), "while loading '%s'", "x.so");
  ++kt_steps_done;
  return NULL;
}

KC_TEST(status_return_if_error_adds_context) {
  kt_steps_done = 0;
  KC_CHECK_OK(kt_two_steps(false));
  KC_CHECK_INT(kt_steps_done, 2);
  kt_steps_done = 0;
  kc_status* st = kt_two_steps(true);
  KC_CHECK_INT(kt_steps_done, 1);
  char buf[128];
  KC_CHECK_STR(kt_status_text(st, buf, sizeof buf),
               "DATA_LOSS: while loading 'x.so': broken");
  kc_status_destroy(st);
}

/* Without a context the status comes back as it was; with the most
 * arguments the macro takes (a format and 14 more) the context is
 * formatted in full. */
static kc_status* kt_bare_then_wide(bool fail_first) {
  KC_RETURN_IF_ERROR(kt_failing_step(fail_first));
  ++kt_steps_done;
  KC_RETURN_IF_ERROR(kt_failing_step(true),
                     "%d%d%d%d%d%d%d%d%d%d%d%d%d%d", 1, 2, 3, 4, 5, 6, 7, 8, 9, 0,
                     1, 2, 3, 4);
  ++kt_steps_done;
  return NULL;
}

KC_TEST(status_return_if_error_without_context) {
  kt_steps_done = 0;
  kc_status* st = kt_bare_then_wide(true);
  KC_CHECK_INT(kt_steps_done, 0);
  char buf[128];
  KC_CHECK_STR(kt_status_text(st, buf, sizeof buf), "DATA_LOSS: broken");
  KC_CHECK_INT(kc_status_get_context_count(st), 0);
  kc_status_destroy(st);
  st = kt_bare_then_wide(false);
  KC_CHECK_INT(kt_steps_done, 1);
  KC_CHECK_STR(kt_status_text(st, buf, sizeof buf), "DATA_LOSS: 12345678901234: broken");
  kc_status_destroy(st);
}

/* ---- string views ------------------------------------------------------------ */

KC_TEST(sv_equal) {
  char a[] = "mylib.add";
  char b[] = "mylib.add";
  KC_CHECK(kc_sv_equal(kc_sv(a), kc_sv(b)));
  KC_CHECK(kc_sv_equal(KC_SV_LIT("mylib.add"), kc_sv(a)));
  KC_CHECK(!kc_sv_equal(kc_sv("mylib.ad"), kc_sv(a)));
  KC_CHECK(!kc_sv_equal(kc_sv("mylib.sub"), kc_sv(a)));
  /* Only `size` bytes count, whatever follows them. */
  kc_string_view prefix = {a, 5};
  KC_CHECK(kc_sv_equal(prefix, kc_sv("mylib")));
  KC_CHECK(!kc_sv_equal(prefix, kc_sv("mylib.")));
  kc_string_view empty_null = {NULL, 0};
  KC_CHECK(kc_sv_equal(empty_null, kc_sv("")));
  KC_CHECK(kc_sv_equal(kc_sv(NULL), empty_null));
  KC_CHECK(!kc_sv_equal(empty_null, kc_sv("a")));
}

/* ---- quoting ---------------------------------------------------------------- */

/* kc_sv_format_quoted of the first n bytes of `text`, checked against
 * `want`, with its length. */
static void kt_check_quote(const char* text, size_t n, const char* want) {
  char buf[KC_QUOTED_CAP];
  kc_string_view v = {text, n};
  size_t len = kc_sv_format_quoted(v, buf, sizeof buf);
  KC_CHECK_STR(buf, want);
  KC_CHECK_INT(len, strlen(want));
}

#define KT_QUOTE(lit, want) kt_check_quote((lit), sizeof(lit) - 1, (want))

KC_TEST(sv_format_quoted_escapes_what_would_not_show) {
  KT_QUOTE("x: T", "'x: T'");
  KT_QUOTE("", "''");
  kt_check_quote(NULL, 0, "''");
  kt_check_quote(NULL, 5, "''");
  KT_QUOTE("a\0b", "'a\\x00b'");
  KT_QUOTE("it's a\\b", "'it\\'s a\\\\b'");
  KT_QUOTE("1\n2\t3\r", "'1\\n2\\t3\\r'");
  KT_QUOTE("\x01\x1b[2J\x7f", "'\\x01\\x1b[2J\\x7f'");
  /* UTF-8 shows as itself; what is not UTF-8 byte by byte. */
  KT_QUOTE("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "'caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80'");
  KT_QUOTE("\xc3", "'\\xc3'");
  KT_QUOTE("\xff\xfe", "'\\xff\\xfe'");
  KT_QUOTE("\xc0\xaf", "'\\xc0\\xaf'");         /* overlong '/' */
  KT_QUOTE("\xed\xa0\x80", "'\\xed\\xa0\\x80'"); /* a surrogate */
  KT_QUOTE("\xf4\x90\x80\x80", "'\\xf4\\x90\\x80\\x80'"); /* past U+10FFFF */
  KT_QUOTE("\xe2\x82", "'\\xe2\\x82'");         /* cut short */
  /* Valid, but they would hide or reorder text: C1, separators, bidi. */
  KT_QUOTE("\xc2\x85", "'\\xc2\\x85'");
  KT_QUOTE("a\xe2\x80\xae" "b", "'a\\xe2\\x80\\xaeb'");
  KT_QUOTE("\xe2\x80\xa8", "'\\xe2\\x80\\xa8'");
}

KC_TEST(sv_format_quoted_bounds_long_text) {
  char text[KC_QUOTE_MAX_SHOWN + 1];
  memset(text, 'a', sizeof text);
  char want[256];
  /* Exactly as long as a quote shows: whole. */
  snprintf(want, sizeof want, "'%.*s'", KC_QUOTE_MAX_SHOWN, text);
  kt_check_quote(text, KC_QUOTE_MAX_SHOWN, want);
  /* One more: its two ends and its length. */
  text[0] = '<';
  text[KC_QUOTE_MAX_SHOWN] = '>';
  snprintf(want, sizeof want, "'<%.55s'...'%.23s>' (%d bytes)", text + 1,
           text + 1, KC_QUOTE_MAX_SHOWN + 1);
  kt_check_quote(text, KC_QUOTE_MAX_SHOWN + 1, want);

  /* A megabyte: the quote stays short, the explanation can follow it. */
  size_t big = (size_t)1 << 20;
  char* mb = malloc(big);
  KC_CHECK(mb != NULL);
  memset(mb, 'x', big);
  memcpy(mb + big - 4, "tail", 4);
  char buf[KC_QUOTED_CAP];
  size_t len = kc_sv_format_quoted((kc_string_view){mb, big}, buf, sizeof buf);
  KC_CHECK(len < KC_QUOTED_CAP);
  KC_CHECK_INT(len, strlen(buf));
  KC_CHECK_CONTAINS(buf, "xxxx'...'xxxx");
  KC_CHECK_CONTAINS(buf, "tail' (1048576 bytes)");

  /* Cuts fall between characters and escapes, never inside one. */
  for (size_t i = 0; i < 256; ++i) mb[i] = (i % 2) ? '\xa9' : '\xc3';
  kc_sv_format_quoted((kc_string_view){mb, 256}, buf, sizeof buf);
  char head[64] = "", tail[32] = "";
  for (int i = 0; i < 28; ++i) strcat(head, "\xc3\xa9");
  for (int i = 0; i < 12; ++i) strcat(tail, "\xc3\xa9");
  snprintf(want, sizeof want, "'%s'...'%s' (256 bytes)", head, tail);
  KC_CHECK_STR(buf, want);
  memset(mb, 0, 100);
  kc_sv_format_quoted((kc_string_view){mb, 100}, buf, sizeof buf);
  KC_CHECK_STR(buf,
               "'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
               "\\x00\\x00'...'\\x00\\x00\\x00\\x00\\x00\\x00' (100 bytes)");
  /* Whatever the bytes, the quote fits KC_QUOTED_CAP. */
  uint32_t seed = 12345;
  for (int round = 0; round < 200; ++round) {
    size_t n = (size_t)round * 7 + 1;
    for (size_t i = 0; i < n; ++i) {
      seed = seed * 1103515245u + 12345u;
      mb[i] = (char)(seed >> 16);
    }
    len = kc_sv_format_quoted((kc_string_view){mb, n}, buf, sizeof buf);
    KC_CHECK(len < KC_QUOTED_CAP);
    KC_CHECK_INT(len, strlen(buf));
    for (size_t i = 0; i < len; ++i) KC_CHECK(buf[i] != '\n' && buf[i] != '\0');
  }
  free(mb);
}

KC_TEST(sv_format_quoted_truncates_like_snprintf) {
  char buf[4];
  size_t len = kc_sv_format_quoted(kc_sv("abcdef"), buf, sizeof buf);
  KC_CHECK_INT(len, 8);
  KC_CHECK_STR(buf, "'ab");
  KC_CHECK_INT(kc_sv_format_quoted(kc_sv("a\n"), NULL, 0), 5);
}

/* ---- dtypes ----------------------------------------------------------------- */

typedef struct kt_dtype_name {
  const char* text;
  DLDataType dtype;
} kt_dtype_name;

static DLDataType kt_dt(int code, int bits, int lanes) {
  return kc_dtype_make((uint8_t)code, (uint8_t)bits, (uint16_t)lanes);
}

static void kt_check_parse(const char* text, DLDataType want) {
  DLDataType got = kt_dt(99, 99, 99);
  kc_status* st = kc_dtype_parse(kc_sv(text), &got);
  if (st) {
    char buf[512];
    kt__fail(__FILE__, __LINE__, "kc_dtype_parse(\"%s\"): %s", text,
             kt_status_text(st, buf, sizeof buf));
    kc_status_destroy(st);
    return;
  }
  if (!kc_dtype_equal(got, want)) {
    kt__fail(__FILE__, __LINE__,
             "kc_dtype_parse(\"%s\") gave code=%d bits=%d lanes=%d, expected "
             "code=%d bits=%d lanes=%d",
             text, got.code, got.bits, got.lanes, want.code, want.bits,
             want.lanes);
  }
}

static void kt_check_format(DLDataType dtype, const char* want) {
  char buf[64];
  size_t n = kc_dtype_format(dtype, buf, sizeof buf);
  KC_CHECK_STR(buf, want);
  KC_CHECK_INT(n, strlen(want));
}

KC_TEST(dtype_parse_canonical_round_trip) {
  const kt_dtype_name names[] = {
      {"bool", kt_dt(kDLBool, 8, 1)},
      {"i8", kt_dt(kDLInt, 8, 1)},
      {"i16", kt_dt(kDLInt, 16, 1)},
      {"i32", kt_dt(kDLInt, 32, 1)},
      {"i64", kt_dt(kDLInt, 64, 1)},
      {"u8", kt_dt(kDLUInt, 8, 1)},
      {"u16", kt_dt(kDLUInt, 16, 1)},
      {"u32", kt_dt(kDLUInt, 32, 1)},
      {"u64", kt_dt(kDLUInt, 64, 1)},
      {"f16", kt_dt(kDLFloat, 16, 1)},
      {"f32", kt_dt(kDLFloat, 32, 1)},
      {"f64", kt_dt(kDLFloat, 64, 1)},
      {"bf16", kt_dt(kDLBfloat, 16, 1)},
      {"c64", kt_dt(kDLComplex, 64, 1)},
      {"c128", kt_dt(kDLComplex, 128, 1)},
      {"f8e4m3fn", kt_dt(kDLFloat8_e4m3fn, 8, 1)},
      {"f8e5m2", kt_dt(kDLFloat8_e5m2, 8, 1)},
      {"opaque64", kt_dt(kDLOpaqueHandle, 64, 1)},
      {"f32x4", kt_dt(kDLFloat, 32, 4)},
      {"i8x16", kt_dt(kDLInt, 8, 16)},
      {"bf16x2", kt_dt(kDLBfloat, 16, 2)},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    kt_check_parse(names[i].text, names[i].dtype);
    kt_check_format(names[i].dtype, names[i].text);
  }
}

KC_TEST(dtype_parse_aliases) {
  const kt_dtype_name names[] = {
      {"float32", kt_dt(kDLFloat, 32, 1)},
      {"float64", kt_dt(kDLFloat, 64, 1)},
      {"float16", kt_dt(kDLFloat, 16, 1)},
      {"int8", kt_dt(kDLInt, 8, 1)},
      {"int32", kt_dt(kDLInt, 32, 1)},
      {"int64", kt_dt(kDLInt, 64, 1)},
      {"uint8", kt_dt(kDLUInt, 8, 1)},
      {"uint64", kt_dt(kDLUInt, 64, 1)},
      {"bfloat16", kt_dt(kDLBfloat, 16, 1)},
      {"complex64", kt_dt(kDLComplex, 64, 1)},
      {"complex128", kt_dt(kDLComplex, 128, 1)},
      {"bool_", kt_dt(kDLBool, 8, 1)},
      {"half", kt_dt(kDLFloat, 16, 1)},
      {"double", kt_dt(kDLFloat, 64, 1)},
      {"long", kt_dt(kDLInt, 64, 1)},
  };
  const char* canonical[] = {"f32", "f64", "f16", "i8", "i32", "i64", "u8",
                             "u64", "bf16", "c64", "c128", "bool", "f16",
                             "f64", "i64"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    kt_check_parse(names[i].text, names[i].dtype);
    /* An alias prints as its canonical name. */
    kt_check_format(names[i].dtype, canonical[i]);
  }
  /* "float" and "int" mean different widths to C and to numpy; the header
   * promises only that they parse, to a float and a signed int. */
  DLDataType t;
  KC_CHECK_OK(kc_dtype_parse(kc_sv("float"), &t));
  KC_CHECK(t.code == kDLFloat && (t.bits == 32 || t.bits == 64) && t.lanes == 1);
  KC_CHECK_OK(kc_dtype_parse(kc_sv("int"), &t));
  KC_CHECK(t.code == kDLInt && (t.bits == 32 || t.bits == 64) && t.lanes == 1);
}

KC_TEST(dtype_low_precision_kinds_round_trip) {
  const DLDataType kinds[] = {
      kt_dt(kDLFloat8_e3m4, 8, 1),       kt_dt(kDLFloat8_e4m3, 8, 1),
      kt_dt(kDLFloat8_e4m3b11fnuz, 8, 1), kt_dt(kDLFloat8_e4m3fn, 8, 1),
      kt_dt(kDLFloat8_e4m3fnuz, 8, 1),   kt_dt(kDLFloat8_e5m2, 8, 1),
      kt_dt(kDLFloat8_e5m2fnuz, 8, 1),   kt_dt(kDLFloat8_e8m0fnu, 8, 1),
      kt_dt(kDLFloat6_e2m3fn, 6, 1),     kt_dt(kDLFloat6_e3m2fn, 6, 1),
      kt_dt(kDLFloat4_e2m1fn, 4, 1),
  };
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    char buf[64];
    kc_dtype_format(kinds[i], buf, sizeof buf);
    KC_CHECK(strncmp(buf, "dtype(", 6) != 0);
    kt_check_parse(buf, kinds[i]);
  }
}

KC_TEST(dtype_parse_uses_only_view_bytes) {
  DLDataType t;
  kc_string_view v = {"f32x4", 3};
  KC_CHECK_OK(kc_dtype_parse(v, &t));
  KC_CHECK(kc_dtype_equal(t, kt_dt(kDLFloat, 32, 1)));
  kc_string_view w = {"i64junk", 3};
  KC_CHECK_OK(kc_dtype_parse(w, &t));
  KC_CHECK(kc_dtype_equal(t, kt_dt(kDLInt, 64, 1)));
}

KC_TEST(dtype_parse_rejects_bad_text) {
  const char* bad[] = {"f33", "floaty", "i64 ", " f32", "f32x", "xf32",
                       "int65", "f32x0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    DLDataType t;
    char expr[64];
    snprintf(expr, sizeof expr, "kc_dtype_parse(\"%s\")", bad[i]);
    kt__check_status(__FILE__, __LINE__, expr, kc_dtype_parse(kc_sv(bad[i]), &t),
                     KC_INVALID_ARGUMENT, (const char* const[]){bad[i], NULL});
  }
  DLDataType t;
  /* The message also says what would have been accepted. */
  KC_CHECK_CODE(kc_dtype_parse(kc_sv("floaty"), &t), KC_INVALID_ARGUMENT,
                "floaty", "f32");
  KC_CHECK_CODE(kc_dtype_parse(kc_sv(""), &t), KC_INVALID_ARGUMENT, "");
}

KC_TEST(dtype_format_unnamed_and_truncated) {
  kt_check_format(kt_dt(kDLInt, 7, 1), "dtype(code=0,bits=7,lanes=1)");
  kt_check_format(kt_dt(42, 32, 1), "dtype(code=42,bits=32,lanes=1)");
  char buf[4];
  KC_CHECK_INT(kc_dtype_format(kt_dt(kDLFloat, 32, 4), buf, 3), 5);
  KC_CHECK_STR(buf, "f3");
  KC_CHECK_INT(kc_dtype_format(kt_dt(kDLFloat, 32, 4), NULL, 0), 5);
}

KC_TEST(dtype_size) {
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLFloat, 32, 1)), 4);
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLFloat, 64, 1)), 8);
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLBool, 8, 1)), 1);
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLBfloat, 16, 1)), 2);
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLComplex, 128, 1)), 16);
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLFloat, 32, 4)), 16);
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLFloat4_e2m1fn, 4, 1)), 1);
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLFloat4_e2m1fn, 4, 3)), 2);
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLFloat6_e2m3fn, 6, 4)), 3);
  KC_CHECK_INT(kc_dtype_get_size(kt_dt(kDLOpaqueHandle, 64, 1)), 8);
}

/* ---- devices ------------------------------------------------------------------ */

static void kt_check_device(const char* text, int type, int id) {
  DLDevice d = {kDLExtDev, -5};
  kc_status* st = kc_device_parse(kc_sv(text), &d);
  if (st) {
    char buf[512];
    kt__fail(__FILE__, __LINE__, "kc_device_parse(\"%s\"): %s", text,
             kt_status_text(st, buf, sizeof buf));
    kc_status_destroy(st);
    return;
  }
  if ((int)d.device_type != type || d.device_id != id) {
    kt__fail(__FILE__, __LINE__, "kc_device_parse(\"%s\") gave %d:%d", text,
             (int)d.device_type, (int)d.device_id);
  }
}

KC_TEST(device_parse) {
  kt_check_device("cpu", kDLCPU, 0);
  kt_check_device("cpu:0", kDLCPU, 0);
  kt_check_device("cuda", kDLCUDA, 0);
  kt_check_device("cuda:1", kDLCUDA, 1);
  kt_check_device("cuda:12", kDLCUDA, 12);
  kt_check_device("cuda_host", kDLCUDAHost, 0);
  kt_check_device("rocm:0", kDLROCM, 0);
  kt_check_device("rocm:3", kDLROCM, 3);
}

KC_TEST(device_parse_rejects_bad_text) {
  const char* bad[] = {"tpu", "cuda:", "cuda:x", "cuda:-1", "cuda:1a",
                       "cuda1", ":1", "CPUU", "cpu:", "cuda:99999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    DLDevice d;
    char expr[64];
    snprintf(expr, sizeof expr, "kc_device_parse(\"%s\")", bad[i]);
    kt__check_status(__FILE__, __LINE__, expr, kc_device_parse(kc_sv(bad[i]), &d),
                     KC_INVALID_ARGUMENT, (const char* const[]){bad[i], NULL});
  }
  DLDevice d;
  KC_CHECK_CODE(kc_device_parse(kc_sv(""), &d), KC_INVALID_ARGUMENT, "");
}

KC_TEST(device_format_round_trip) {
  char buf[32];
  KC_CHECK_INT(kc_device_format(kc_device_cpu(), buf, sizeof buf), 5);
  KC_CHECK_STR(buf, "cpu:0");
  DLDevice cuda1 = {kDLCUDA, 1};
  KC_CHECK_INT(kc_device_format(cuda1, buf, sizeof buf), 6);
  KC_CHECK_STR(buf, "cuda:1");
  const DLDevice devices[] = {{kDLCPU, 0},  {kDLCUDA, 7},   {kDLCUDAHost, 0},
                              {kDLROCM, 2}, {kDLCUDA, 123}};
  for (size_t i = 0; i < sizeof devices / sizeof devices[0]; ++i) {
    kc_device_format(devices[i], buf, sizeof buf);
    DLDevice back;
    KC_CHECK_OK(kc_device_parse(kc_sv(buf), &back));
    KC_CHECK(back.device_type == devices[i].device_type);
    KC_CHECK_INT(back.device_id, devices[i].device_id);
  }
  char small[4];
  KC_CHECK_INT(kc_device_format(cuda1, small, sizeof small), 6);
  KC_CHECK_STR(small, "cud");
}

/* ---- version ------------------------------------------------------------------ */

KC_TEST(version_matches_headers) {
  KC_CHECK_STR(kc_version_string(), KC_VERSION_STRING);
  KC_CHECK_INT(kc_version_number(), KC_VERSION_NUMBER);
  KC_CHECK_INT(KC_VERSION_NUMBER, KC_VERSION_MAJOR * 10000 +
                                      KC_VERSION_MINOR * 100 + KC_VERSION_PATCH);
  char text[32];
  snprintf(text, sizeof text, "%d.%d.%d", KC_VERSION_MAJOR, KC_VERSION_MINOR,
           KC_VERSION_PATCH);
  KC_CHECK_STR(KC_VERSION_STRING, text);
  uint32_t major = 99, minor = 99;
  kc_version_query_api(&major, &minor);
  KC_CHECK_INT(major, KC_API_VERSION_MAJOR);
  KC_CHECK_INT(minor, KC_API_VERSION_MINOR);
}
