/*
 * Dtype sets and type words: the scalar dtypes a set can hold, the type
 * class words of specs (numeric, integer, ...), and the C type names a
 * spec refuses as ambiguous (float, int, ...).
 */
#include <stdio.h>

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

typedef struct kc__type_class {
  const char* name;
  bool any;
  uint64_t mask;
} kc__type_class;

/* The class words (op.h, "Type words"); each may stand alone as a kind or
 * go inside braces. */
static const kc__type_class kc__classes[] = {
    {"numeric", false, KC__SIGNED | KC__UNSIGNED | KC__FLOATING | KC__COMPLEX},
    {"integer", false, KC__SIGNED | KC__UNSIGNED},
    {"signed", false, KC__SIGNED},
    {"unsigned", false, KC__UNSIGNED},
    {"floating", false, KC__FLOATING},
    {"complex", false, KC__COMPLEX},
    {"any", true, 0},
};

/* Words kc_dtype_parse takes that a spec refuses: C type names, whose
 * reader may take them for a class ("float": f32, or every float?) or for
 * a width they do not have here ("long"), with what to write instead. */
static const struct {
  const char* word;
  const char* dtype;     /* the one dtype kc_dtype_parse reads it as */
  const char* long_name; /* the same, spelt as NumPy does */
  const char* class_word; /* the class it may be taken for, or NULL */
  uint64_t class_mask;
} kc__ambiguous_words[] = {
    {"float", "f32", "float32", "floating", KC__FLOATING},
    {"double", "f64", "float64", "floating", KC__FLOATING},
    {"half", "f16", "float16", "floating", KC__FLOATING},
    {"int", "i32", "int32", "signed", KC__SIGNED},
    {"long", "i64", "int64", "signed", KC__SIGNED},
};

size_t kc__type_word_ambiguity(kc_string_view word, char* buf, size_t cap) {
  if (cap) buf[0] = '\0';
  /* A vector of one ("floatx4") is as ambiguous as its element. */
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
