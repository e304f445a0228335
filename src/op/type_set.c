/*
 * Dtype sets and type words: the scalar dtypes a set can hold, the type
 * class words of specs (numeric, integer, ..., TensorFlow's numbertype,
 * ...), TensorFlow's dtype names, and the words a spec refuses (C's int
 * and long as ambiguous, TensorFlow's dtypes that kcall does not have).
 */
#include <stdio.h>
#include <string.h>

#include "op/op_internal.h"

typedef struct kc__slot_dtype {
  uint8_t code;
  uint8_t bits;
} kc__slot_dtype;

/* Bit i of a set's mask is kc__slots[i]; the order is the printing order. */
static const kc__slot_dtype kc__slots[] = {
    {kDLBool, 8},           {kDLInt, 8},
    {kDLInt, 16},           {kDLInt, 32},
    {kDLInt, 64},           {kDLUInt, 8},
    {kDLUInt, 16},          {kDLUInt, 32},
    {kDLUInt, 64},          {kDLFloat, 16},
    {kDLFloat, 32},         {kDLFloat, 64},
    {kDLBfloat, 16},        {kDLComplex, 64},
    {kDLComplex, 128},      {kDLFloat8_e3m4, 8},
    {kDLFloat8_e4m3, 8},    {kDLFloat8_e4m3b11fnuz, 8},
    {kDLFloat8_e4m3fn, 8},  {kDLFloat8_e4m3fnuz, 8},
    {kDLFloat8_e5m2, 8},    {kDLFloat8_e5m2fnuz, 8},
    {kDLFloat8_e8m0fnu, 8}, {kDLFloat6_e2m3fn, 6},
    {kDLFloat6_e3m2fn, 6},  {kDLFloat4_e2m1fn, 4},
    {kDLOpaqueHandle, 64},
};

int kc__dtype_slot(DLDataType t) {
  if (t.lanes != 1) return -1;
  for (int i = 0; i < (int)KC__ARRAY_SIZE(kc__slots); ++i) {
    if (kc__slots[i].code == t.code && kc__slots[i].bits == t.bits) return i;
  }
  return -1;
}

bool kc__type_set_has(const kc__type_set* set, DLDataType t) {
  if (set->any) return true;
  int slot = kc__dtype_slot(t);
  return slot >= 0 && (set->mask >> slot & 1u);
}

size_t kc__type_set_format(const kc__type_set* set, char* buf, size_t cap) {
  if (set->any) return (size_t)snprintf(buf, cap, "any type");
  size_t n = 0;
  const char* sep = "{";
  for (int i = 0; i < (int)KC__ARRAY_SIZE(kc__slots); ++i) {
    if (!(set->mask >> i & 1u)) continue;
    char name[32];
    kc_dtype_format(kc_dtype_make(kc__slots[i].code, kc__slots[i].bits, 1),
                    name, sizeof name);
    kc__appendf(buf, cap, &n, "%s%s", sep, name);
    sep = ", ";
  }
  kc__appendf(buf, cap, &n, "%s", n ? "}" : "{}");
  return n;
}

/* Type classes, as masks. */
#define KC__BIT(i) (UINT64_C(1) << (i))
#define KC__SIGNED (KC__BIT(1) | KC__BIT(2) | KC__BIT(3) | KC__BIT(4))
#define KC__UNSIGNED (KC__BIT(5) | KC__BIT(6) | KC__BIT(7) | KC__BIT(8))
#define KC__FLOATING (KC__BIT(9) | KC__BIT(10) | KC__BIT(11) | KC__BIT(12))
#define KC__COMPLEX (KC__BIT(13) | KC__BIT(14))
#define KC__NUMERIC (KC__SIGNED | KC__UNSIGNED | KC__FLOATING | KC__COMPLEX)

typedef struct kc__type_class {
  const char* name;
  bool any;
  uint64_t mask;
} kc__type_class;

/* The class words (op.h, "Type words"); each may stand alone as a kind or
 * go inside braces. kcall's own first, then TensorFlow's type-list
 * shorthands with TensorFlow's sets: its realnumbertype is exactly integer
 * and floating, its numbertype adds complex and the quantized dtypes,
 * which kcall does not have (quantizedtype, all quantized, is refused). */
static const kc__type_class kc__classes[] = {
    {"numeric", false, KC__NUMERIC},
    {"integer", false, KC__SIGNED | KC__UNSIGNED},
    {"signed", false, KC__SIGNED},
    {"unsigned", false, KC__UNSIGNED},
    {"floating", false, KC__FLOATING},
    {"complex", false, KC__COMPLEX},
    {"any", true, 0},
    {"numbertype", false, KC__NUMERIC},
    {"numerictype", false, KC__NUMERIC},
    {"realnumbertype", false, KC__SIGNED | KC__UNSIGNED | KC__FLOATING},
    {"realnumerictype", false, KC__SIGNED | KC__UNSIGNED | KC__FLOATING},
};

/* Words kc_dtype_parse takes that a spec refuses: C type names that
 * TensorFlow's op language does not have either and whose width C leaves
 * open ("long"), with what to write instead. */
static const struct {
  const char* word;
  const char* dtype;     /* the one dtype kc_dtype_parse reads it as */
  const char* long_name; /* the same, spelt as NumPy does */
  const char* class_word; /* the class it may be taken for */
  uint64_t class_mask;
} kc__ambiguous_words[] = {
    {"int", "i32", "int32", "signed", KC__SIGNED},
    {"long", "i64", "int64", "signed", KC__SIGNED},
};

/* TensorFlow's dtype names (its DataType enum without DT_, lower-cased):
 * those kcall has mean the dtype kc_dtype_parse reads them as (float: f32,
 * double: f64, half: f16, ...); the others say why kcall has none. */
static const struct {
  const char* name;
  const char* missing; /* NULL: kc_dtype_parse reads the name */
} kc__tf_dtypes[] = {
    {"float", NULL},
    {"double", NULL},
    {"half", NULL},
    {"bfloat16", NULL},
    {"int8", NULL},
    {"int16", NULL},
    {"int32", NULL},
    {"int64", NULL},
    {"uint8", NULL},
    {"uint16", NULL},
    {"uint32", NULL},
    {"uint64", NULL},
    {"complex64", NULL},
    {"complex128", NULL},
    {"bool", NULL},
    {"float8_e5m2", NULL},
    {"float8_e4m3fn", NULL},
    {"float8_e4m3fnuz", NULL},
    {"float8_e4m3b11fnuz", NULL},
    {"float8_e5m2fnuz", NULL},
    {"string", "kcall tensors hold numbers, not strings"},
    {"qint8", "kcall has no quantized dtypes"},
    {"quint8", "kcall has no quantized dtypes"},
    {"qint16", "kcall has no quantized dtypes"},
    {"quint16", "kcall has no quantized dtypes"},
    {"qint32", "kcall has no quantized dtypes"},
    {"int4", "kcall has no 4-bit integers"},
    {"uint4", "kcall has no 4-bit integers"},
    {"int2", "kcall has no 2-bit integers"},
    {"uint2", "kcall has no 2-bit integers"},
    {"resource", "kcall has no resource handles"},
    {"variant", "kcall has no variant values"},
};

/* The index in kc__tf_dtypes of `word` ("float", or its enum name
 * "DT_FLOAT" when `enum_name`), or -1. */
static int kc__tf_dtype_find(kc_string_view word, bool enum_name) {
  if (enum_name) {
    if (word.size < 4 || memcmp(word.data, "DT_", 3) != 0) return -1;
    word.data += 3;
    word.size -= 3;
  }
  for (int i = 0; i < (int)KC__ARRAY_SIZE(kc__tf_dtypes); ++i) {
    const char* name = kc__tf_dtypes[i].name;
    if (strlen(name) != word.size) continue;
    size_t j = 0;
    for (; j < word.size; ++j) {
      char c = word.data[j];
      if (enum_name) c = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
      /* An enum name is upper case only: "DT_Float" is no name. */
      if (c != name[j] || (enum_name && word.data[j] >= 'a')) break;
    }
    if (j == word.size) return i;
  }
  return -1;
}

bool kc__type_word_dtype(kc_string_view word, DLDataType* out) {
  int tf = kc__tf_dtype_find(word, true);
  if (tf >= 0) {
    if (kc__tf_dtypes[tf].missing) return false;
    word = kc_sv(kc__tf_dtypes[tf].name);
  }
  kc_status* st = kc_dtype_parse(word, out);
  kc_status_destroy(st);
  return st == NULL;
}

/* The ambiguous C names, with their alternatives. */
static size_t kc__ambiguity(kc_string_view word, char* buf, size_t cap) {
  /* A vector of one ("intx4") is as ambiguous as its element. */
  kc_string_view element = word;
  size_t n = word.size;
  while (n > 0 && word.data[n - 1] >= '0' && word.data[n - 1] <= '9') --n;
  if (n > 1 && n < word.size && word.data[n - 1] == 'x') element.size = n - 1;
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__ambiguous_words); ++i) {
    if (!kc_sv_equal(element, kc_sv(kc__ambiguous_words[i].word))) continue;
    char set[256];
    kc__type_set set_of = {false, kc__ambiguous_words[i].class_mask};
    kc__type_set_format(&set_of, set, sizeof set);
    kc_string_view lanes = {word.data + element.size, word.size - element.size};
    int k = snprintf(buf, cap,
                     "type word %s is ambiguous: write %s%.*s (or %s%.*s) for "
                     "that one dtype, or '%s' for %s",
                     KC__Q(word), kc__ambiguous_words[i].dtype, (int)lanes.size,
                     lanes.data, kc__ambiguous_words[i].long_name,
                     (int)lanes.size, lanes.data,
                     kc__ambiguous_words[i].class_word, set);
    return k < 0 ? 0 : (size_t)k;
  }
  return 0;
}

size_t kc__type_word_refusal(kc_string_view word, char* buf, size_t cap) {
  if (cap) buf[0] = '\0';
  size_t n = kc__ambiguity(word, buf, cap);
  if (n) return n;
  int k = 0;
  int tf = kc__tf_dtype_find(word, false);
  if (tf < 0) tf = kc__tf_dtype_find(word, true);
  kc_string_view base = {word.data, word.size >= 4 ? word.size - 4 : 0};
  if (tf >= 0 && kc__tf_dtypes[tf].missing) {
    k = snprintf(buf, cap,
                 "type word %s is TensorFlow's %s, which kcall has no dtype "
                 "for: %s",
                 KC__Q(word), kc__tf_dtypes[tf].name, kc__tf_dtypes[tf].missing);
  } else if (kc_sv_equal(word, KC_SV_LIT("quantizedtype"))) {
    k = snprintf(buf, cap,
                 "type word 'quantizedtype' is TensorFlow's {qint8, quint8, "
                 "qint16, quint16, qint32}, which kcall has no dtypes for: "
                 "kcall has no quantized dtypes");
  } else if (base.size && memcmp(word.data + base.size, "_ref", 4) == 0 &&
             kc__tf_dtype_find(base, false) >= 0) {
    k = snprintf(buf, cap,
                 "type word %s is a TensorFlow reference type, which kcall "
                 "does not have: write the dtype, %.*s",
                 KC__Q(word), (int)base.size, base.data);
  }
  return k < 0 ? 0 : (size_t)k;
}

bool kc__type_class_find(kc_string_view word, kc__type_set* out) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__classes); ++i) {
    if (kc_sv_equal(word, kc_sv(kc__classes[i].name))) {
      out->any = kc__classes[i].any;
      out->mask = kc__classes[i].mask;
      return true;
    }
  }
  return false;
}
