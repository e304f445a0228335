/* The VHLO dialect's attributes, types and ops, as StableHLO text
 * (bytecode_internal.h). The encodings are those of stablehlo's
 * VhloBytecode.cpp; what each op's attributes mean in StableHLO, and
 * which only restate a default, those of its VhloLegalizeToStablehlo.cpp. */
#include <math.h>
#include <stdio.h>

#include "kernels/half.h"
#include "program/frontend/stablehlo/bytecode_internal.h"

/* ---- codes ---------------------------------------------------------------- */

/* VHLO's attribute codes. */
enum {
  KC__VA_ARRAY = 1,
  KC__VA_BOOLEAN = 2,
  KC__VA_COMPARISON_DIRECTION = 3,
  KC__VA_COMPARISON_TYPE = 4,
  KC__VA_API_VERSION = 5,
  KC__VA_DICTIONARY = 6,
  KC__VA_FFT_TYPE = 7,
  KC__VA_FLOAT = 8,
  KC__VA_INTEGER = 9,
  KC__VA_OUTPUT_OPERAND_ALIAS = 10,
  KC__VA_PRECISION = 11,
  KC__VA_RNG_ALGORITHM = 12,
  KC__VA_RNG_DISTRIBUTION = 13,
  KC__VA_STRING = 14,
  KC__VA_TENSOR = 15,
  KC__VA_TRANSPOSE = 16,
  KC__VA_TYPE = 17,
};

/* The builtin dialect's attribute codes (module and discardable
 * attributes are builtin ones). */
enum {
  KC__BA_ARRAY = 0,
  KC__BA_DICTIONARY = 1,
  KC__BA_STRING = 2,
  KC__BA_FLAT_SYMBOL = 4,
  KC__BA_UNIT = 7,
  KC__BA_INTEGER = 8,
  KC__BA_FLOAT = 9,
};

/* VHLO's type codes that are not scalars (kc__vhlo_scalars has those). */
enum {
  KC__VT_COMPLEX = 1,
  KC__VT_FUNCTION = 8,
  KC__VT_RANKED_TENSOR = 20,
  KC__VT_RANKED_TENSOR_ENCODED = 21,
  KC__VT_TOKEN = 22,
  KC__VT_TUPLE = 23,
  KC__VT_UNRANKED_TENSOR = 25,
  KC__VT_NONE = 33,
};

typedef enum kc__vhlo_kind {
  KC__VK_BOOL,
  KC__VK_SIGNED,
  KC__VK_UNSIGNED,
  KC__VK_FLOAT,
} kc__vhlo_kind;

/* A scalar type: its code, its text, its width in bits. */
typedef struct kc__vhlo_scalar {
  uint8_t code;
  const char* text;
  uint8_t bits;
  kc__vhlo_kind kind;
} kc__vhlo_scalar;

static const kc__vhlo_scalar kc__vhlo_scalars[] = {
    {0, "i1", 1, KC__VK_BOOL},           {2, "bf16", 16, KC__VK_FLOAT},
    {3, "f16", 16, KC__VK_FLOAT},        {4, "f32", 32, KC__VK_FLOAT},
    {5, "f64", 64, KC__VK_FLOAT},        {6, "f8E4M3FN", 8, KC__VK_FLOAT},
    {7, "f8E5M2", 8, KC__VK_FLOAT},      {9, "index", 64, KC__VK_SIGNED},
    {10, "i4", 4, KC__VK_SIGNED},        {11, "i8", 8, KC__VK_SIGNED},
    {12, "i16", 16, KC__VK_SIGNED},      {13, "i32", 32, KC__VK_SIGNED},
    {14, "i64", 64, KC__VK_SIGNED},      {15, "ui4", 4, KC__VK_UNSIGNED},
    {16, "ui8", 8, KC__VK_UNSIGNED},     {17, "ui16", 16, KC__VK_UNSIGNED},
    {18, "ui32", 32, KC__VK_UNSIGNED},   {19, "ui64", 64, KC__VK_UNSIGNED},
    {27, "f8E4M3FNUZ", 8, KC__VK_FLOAT}, {28, "f8E5M2FNUZ", 8, KC__VK_FLOAT},
    {29, "f8E4M3B11FNUZ", 8, KC__VK_FLOAT}, {31, "i2", 2, KC__VK_SIGNED},
    {32, "ui2", 2, KC__VK_UNSIGNED},     {34, "tf32", 19, KC__VK_FLOAT},
    {35, "f8E4M3", 8, KC__VK_FLOAT},     {36, "f8E3M4", 8, KC__VK_FLOAT},
    {37, "f4E2M1FN", 4, KC__VK_FLOAT},   {38, "f6E2M3FN", 6, KC__VK_FLOAT},
    {39, "f6E3M2FN", 6, KC__VK_FLOAT},   {40, "f8E8M0FNU", 8, KC__VK_FLOAT},
};

static const kc__vhlo_scalar* kc__vhlo_scalar_find(uint64_t code) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__vhlo_scalars); ++i) {
    if (kc__vhlo_scalars[i].code == code) return &kc__vhlo_scalars[i];
  }
  return NULL;
}

/* Bytes an element takes in a dense literal (sub-byte types take one). */
static size_t kc__vhlo_width(const kc__vhlo_scalar* s) {
  return s->bits <= 8 ? 1 : s->bits <= 16 ? 2 : s->bits <= 32 ? 4 : 8;
}

/* VHLO's types that have no StableHLO text kcall reads, by code. */
static const char* kc__vhlo_type_name(uint64_t code) {
  switch (code) {
    case 24: return "uniform_quantized_v1";
    case 26: return "witness_v1";
    case 30: return "uniform_quantized_per_axis_v1";
    case 41: return "ranked_buffer_v1";
    case 42: return "future_v1";
    default: return NULL;
  }
}

/* The words of VHLO's enumerations, by attribute code. */
static const char* kc__vhlo_enum_word(uint64_t code, uint64_t v, const char** out_kind) {
  static const char* const direction[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  static const char* const compare[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  static const char* const fft[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  static const char* const precision[] = {"DEFAULT", "HIGH", "HIGHEST"};
  static const char* const rng[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
  static const char* const distribution[] = {NULL, "UNIFORM", "NORMAL"};
  static const char* const transpose[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE",
                                          "ADJOINT"};
  static const struct {
    uint64_t code;
    const char* kind;
    const char* const* words;
    size_t n;
  } enums[] = {
      {KC__VA_COMPARISON_DIRECTION, "comparison_direction", direction, 6},
      {KC__VA_COMPARISON_TYPE, "comparison_type", compare, 5},
      {KC__VA_FFT_TYPE, "fft_type", fft, 4},
      {KC__VA_PRECISION, "precision", precision, 3},
      {KC__VA_RNG_ALGORITHM, "rng_algorithm", rng, 3},
      {KC__VA_RNG_DISTRIBUTION, "rng_distribution", distribution, 3},
      {KC__VA_TRANSPOSE, "transpose", transpose, 4},
  };
  for (size_t i = 0; i < KC__ARRAY_SIZE(enums); ++i) {
    if (enums[i].code != code) continue;
    *out_kind = enums[i].kind;
    return v < enums[i].n ? enums[i].words[v] : NULL;
  }
  *out_kind = NULL;
  return NULL;
}

/* ---- entries ---------------------------------------------------------------- */

/* An attribute or type entry opened for reading: its dialect's code for
 * it, and the cursor after the code. */
typedef struct kc__vhlo_entry {
  kc__bc_cursor cur;
  uint64_t code;
  bool builtin; /* of the builtin dialect, not VHLO */
  size_t at;
} kc__vhlo_entry;

static kc_status* kc__vhlo_open(const kc__bc* c, const kc__bc_entry* e, const char* what,
                                kc__vhlo_entry* out) {
  kc_string_view d = kc__bc_dialect_name(c, e->dialect);
  bool builtin = (int64_t)e->dialect == c->builtin;
  if (!e->custom) {
    /* Written as text: an attribute or type of a dialect without a
     * bytecode encoding. */
    size_t n = e->size && c->data[e->pos + e->size - 1] == 0 ? e->size - 1 : e->size;
    return kc__bc_unsupported("%s %.*s (byte %zu) is not a VHLO one", what,
                              (int)(n > 200 ? 200 : n), (const char*)c->data + e->pos, e->pos);
  }
  if (!builtin && (int64_t)e->dialect != c->vhlo) {
    return kc__bc_unsupported("%s of dialect %.*s (byte %zu)", what, (int)d.size, d.data, e->pos);
  }
  out->cur = (kc__bc_cursor){e->pos, e->pos + e->size};
  out->builtin = builtin;
  out->at = e->pos;
  return kc__bc_varint(c, &out->cur, what, &out->code);
}

static kc_status* kc__vhlo_attr(const kc__bc* c, uint32_t i, kc__vhlo_entry* out) {
  return kc__vhlo_open(c, &c->attrs[i], "an attribute", out);
}

static kc_status* kc__vhlo_type(const kc__bc* c, uint32_t i, kc__vhlo_entry* out) {
  return kc__vhlo_open(c, &c->types[i], "a type", out);
}

static kc_status* kc__vhlo_done(const kc__bc* c, const kc__vhlo_entry* e) {
  if (e->cur.pos == e->cur.end) return NULL;
  return kc__bc_fail(c, e->cur.pos, "expected the end of the entry at byte %zu, got %zu more "
                     "bytes", e->at, e->cur.end - e->cur.pos);
}

static kc_status* kc__vhlo_depth(const kc__bc* c, size_t at, int depth) {
  if (depth < KC__BC_MAX_DEPTH) return NULL;
  return kc__bc_fail(c, at, "expected attributes and types nested at most %d deep",
                     KC__BC_MAX_DEPTH);
}

/* ---- types ------------------------------------------------------------------ */

/* The scalar type `index`, or an error naming `what` needed it. */
static kc_status* kc__vhlo_scalar_type(const kc__bc* c, uint32_t index, const char* what,
                                       const kc__vhlo_scalar** out) {
  kc__vhlo_entry e;
  KC_RETURN_IF_ERROR(kc__vhlo_type(c, index, &e));
  const kc__vhlo_scalar* s = e.builtin ? NULL : kc__vhlo_scalar_find(e.code);
  if (!s) {
    return kc__bc_fail(c, e.at, "expected a scalar type for %s, got type code %llu", what,
                       (unsigned long long)e.code);
  }
  *out = s;
  return kc__vhlo_done(c, &e);
}

/* A ranked tensor type's dims and element type. */
typedef struct kc__vhlo_tensor {
  int64_t dims[64];
  size_t rank;
  uint32_t elem;
} kc__vhlo_tensor;

static kc_status* kc__vhlo_tensor_type(const kc__bc* c, uint32_t index, kc__vhlo_tensor* out) {
  kc__vhlo_entry e;
  KC_RETURN_IF_ERROR(kc__vhlo_type(c, index, &e));
  if (e.builtin || e.code != KC__VT_RANKED_TENSOR) {
    return kc__bc_fail(c, e.at, "expected a ranked tensor type without encoding for a dense "
                       "attribute, got type code %llu", (unsigned long long)e.code);
  }
  KC_RETURN_IF_ERROR(kc__bc_count(c, &e.cur, 1, "a tensor's rank", &out->rank));
  if (out->rank > KC__ARRAY_SIZE(out->dims)) {
    return kc__bc_unsupported("a dense attribute of rank %zu (byte %zu)", out->rank, e.at);
  }
  for (size_t i = 0; i < out->rank; ++i) {
    KC_RETURN_IF_ERROR(kc__bc_svarint(c, &e.cur, "a dimension", &out->dims[i]));
    if (out->dims[i] < 0) {
      return kc__bc_fail(c, e.at, "expected a static shape for a dense attribute, got "
                         "dimension %zu of %lld", i, (long long)out->dims[i]);
    }
  }
  KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_types, "an element type", &out->elem));
  return kc__vhlo_done(c, &e);
}

static kc_status* kc__vhlo_put_types(kc__bc* c, kc__vhlo_entry* e, int depth) {
  size_t n;
  KC_RETURN_IF_ERROR(kc__bc_count(c, &e->cur, 1, "a number of types", &n));
  for (size_t i = 0; i < n; ++i) {
    uint32_t t;
    KC_RETURN_IF_ERROR(kc__bc_index(c, &e->cur, c->num_types, "a type", &t));
    if (i) kc__bc_puts(c, ", ");
    KC_RETURN_IF_ERROR(kc__vhlo_put_type(c, t, depth + 1));
  }
  return NULL;
}

static kc_status* kc__vhlo_put_type_once(kc__bc* c, uint32_t index, int depth);

/* A type's text is made once and copied from where the text has it. */
kc_status* kc__vhlo_put_type(kc__bc* c, uint32_t index, int depth) {
  kc__bc_span* seen = &c->type_text[index];
  if (seen->size) {
    char* at = kc__bc_reserve(c, seen->size);
    if (at) memcpy(at, c->out->data + seen->pos, seen->size);
    return NULL;
  }
  size_t start = c->out->size;
  KC_RETURN_IF_ERROR(kc__vhlo_put_type_once(c, index, depth));
  if (!c->out_full && !c->out_oom) *seen = (kc__bc_span){start, c->out->size - start};
  return NULL;
}

static kc_status* kc__vhlo_put_type_once(kc__bc* c, uint32_t index, int depth) {
  kc__vhlo_entry e;
  KC_RETURN_IF_ERROR(kc__vhlo_type(c, index, &e));
  KC_RETURN_IF_ERROR(kc__vhlo_depth(c, e.at, depth));
  if (e.builtin) return kc__bc_unsupported("a builtin type (byte %zu) as a value's", e.at);
  const kc__vhlo_scalar* s = kc__vhlo_scalar_find(e.code);
  if (s) {
    kc__bc_puts(c, s->text);
    return kc__vhlo_done(c, &e);
  }
  switch (e.code) {
    case KC__VT_COMPLEX: {
      uint32_t t;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_types, "an element type", &t));
      kc__bc_puts(c, "complex<");
      KC_RETURN_IF_ERROR(kc__vhlo_put_type(c, t, depth + 1));
      kc__bc_puts(c, ">");
      break;
    }
    case KC__VT_FUNCTION:
      kc__bc_puts(c, "(");
      KC_RETURN_IF_ERROR(kc__vhlo_put_types(c, &e, depth));
      kc__bc_puts(c, ") -> (");
      KC_RETURN_IF_ERROR(kc__vhlo_put_types(c, &e, depth));
      kc__bc_puts(c, ")");
      break;
    case KC__VT_RANKED_TENSOR: {
      size_t rank;
      uint32_t t;
      KC_RETURN_IF_ERROR(kc__bc_count(c, &e.cur, 1, "a tensor's rank", &rank));
      kc__bc_puts(c, "tensor<");
      for (size_t i = 0; i < rank; ++i) {
        int64_t d;
        KC_RETURN_IF_ERROR(kc__bc_svarint(c, &e.cur, "a dimension", &d));
        if (d == INT64_MIN) {
          kc__bc_puts(c, "?x"); /* a dynamic dimension */
        } else if (d < 0) {
          return kc__bc_fail(c, e.at, "expected a dimension (a size, or dynamic), got %lld",
                             (long long)d);
        } else {
          kc__bc_put_int(c, d);
          kc__bc_put(c, "x", 1);
        }
      }
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_types, "an element type", &t));
      KC_RETURN_IF_ERROR(kc__vhlo_put_type(c, t, depth + 1));
      kc__bc_puts(c, ">");
      break;
    }
    case KC__VT_RANKED_TENSOR_ENCODED:
      return kc__bc_unsupported("a tensor type with an encoding (bounded dynamic dimensions, "
                                "byte %zu)", e.at);
    case KC__VT_TOKEN: kc__bc_puts(c, "!stablehlo.token"); break;
    case KC__VT_TUPLE:
      kc__bc_puts(c, "tuple<");
      KC_RETURN_IF_ERROR(kc__vhlo_put_types(c, &e, depth));
      kc__bc_puts(c, ">");
      break;
    case KC__VT_UNRANKED_TENSOR: {
      uint32_t t;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_types, "an element type", &t));
      kc__bc_puts(c, "tensor<*x");
      KC_RETURN_IF_ERROR(kc__vhlo_put_type(c, t, depth + 1));
      kc__bc_puts(c, ">");
      break;
    }
    case KC__VT_NONE: kc__bc_puts(c, "none"); break;
    default: {
      const char* name = kc__vhlo_type_name(e.code);
      if (name) return kc__bc_unsupported("type vhlo.%s (byte %zu)", name, e.at);
      return kc__bc_fail(c, e.at, "expected a VHLO type code, got %llu",
                         (unsigned long long)e.code);
    }
  }
  return kc__vhlo_done(c, &e);
}

/* ---- attribute values ----------------------------------------------------- */

/* An APInt of a known width: one byte up to 8 bits, else a signed varint;
 * sign-extended from the width when `is_signed`. */
static kc_status* kc__vhlo_apint(const kc__bc* c, kc__bc_cursor* cur, unsigned bits,
                                 bool is_signed, uint64_t* out) {
  uint64_t v;
  if (bits <= 8) {
    uint8_t b;
    KC_RETURN_IF_ERROR(kc__bc_byte(c, cur, "an integer", &b));
    v = b;
  } else {
    int64_t s;
    KC_RETURN_IF_ERROR(kc__bc_svarint(c, cur, "an integer", &s));
    memcpy(&v, &s, sizeof v);
  }
  if (bits < 64) {
    v &= ((uint64_t)1 << bits) - 1;
    if (is_signed && (v >> (bits - 1) & 1)) v |= ~(((uint64_t)1 << bits) - 1);
  }
  *out = v;
  return NULL;
}

/* A builtin integer type: width << 2 | signedness (0 signless, 1 signed,
 * 2 unsigned); index as 64 bits. */
static kc_status* kc__vhlo_builtin_int_type(const kc__bc* c, uint32_t t, uint64_t* out) {
  kc__vhlo_entry te;
  KC_RETURN_IF_ERROR(kc__vhlo_type(c, t, &te));
  if (!te.builtin || (te.code != 0 && te.code != 1)) {
    return kc__bc_fail(c, te.at, "expected a builtin integer type, got type code %llu",
                       (unsigned long long)te.code);
  }
  *out = 64 << 2;
  if (te.code == 0) KC_RETURN_IF_ERROR(kc__bc_varint(c, &te.cur, "an integer type", out));
  KC_RETURN_IF_ERROR(kc__vhlo_done(c, &te));
  unsigned bits = (unsigned)(*out >> 2);
  if (bits == 0 || bits > 64) {
    return kc__bc_unsupported("a builtin integer type of %u bits (byte %zu)", bits, te.at);
  }
  return NULL;
}

/* IntegerV1: its value and type. */
static kc_status* kc__vhlo_int_value(const kc__bc* c, kc__vhlo_entry* e, int64_t* out,
                                     const kc__vhlo_scalar** out_type) {
  uint32_t t;
  const kc__vhlo_scalar* s;
  KC_RETURN_IF_ERROR(kc__bc_index(c, &e->cur, c->num_types, "an integer's type", &t));
  KC_RETURN_IF_ERROR(kc__vhlo_scalar_type(c, t, "an integer", &s));
  if (s->kind != KC__VK_SIGNED && s->kind != KC__VK_UNSIGNED) {
    return kc__bc_fail(c, e->at, "expected an integer type for an integer attribute, got %s",
                       s->text);
  }
  uint64_t v;
  KC_RETURN_IF_ERROR(kc__vhlo_apint(c, &e->cur, s->bits, s->kind == KC__VK_SIGNED, &v));
  memcpy(out, &v, sizeof v);
  *out_type = s;
  return NULL;
}

static kc_status* kc__vhlo_expect(const kc__bc* c, const kc__vhlo_entry* e, uint64_t code,
                                  const char* what) {
  if (!e->builtin && e->code == code) return NULL;
  return kc__bc_fail(c, e->at, "expected %s, got %s attribute code %llu", what,
                     e->builtin ? "builtin" : "VHLO", (unsigned long long)e->code);
}

kc_status* kc__vhlo_get_int(const kc__bc* c, uint32_t i, const char* what, int64_t* out) {
  kc__vhlo_entry e;
  const kc__vhlo_scalar* s;
  KC_RETURN_IF_ERROR(kc__vhlo_attr(c, i, &e));
  if (e.builtin) {
    /* a builtin integer (the module's attributes) */
    uint32_t t;
    uint64_t ws, v;
    if (e.code != KC__BA_INTEGER) return kc__vhlo_expect(c, &e, KC__VA_INTEGER, what);
    KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_types, "an integer's type", &t));
    KC_RETURN_IF_ERROR(kc__vhlo_builtin_int_type(c, t, &ws));
    KC_RETURN_IF_ERROR(kc__vhlo_apint(c, &e.cur, (unsigned)(ws >> 2), (ws & 3) != 2, &v));
    memcpy(out, &v, sizeof v);
    return kc__vhlo_done(c, &e);
  }
  KC_RETURN_IF_ERROR(kc__vhlo_expect(c, &e, KC__VA_INTEGER, what));
  KC_RETURN_IF_ERROR(kc__vhlo_int_value(c, &e, out, &s));
  return kc__vhlo_done(c, &e);
}

kc_status* kc__vhlo_get_string(const kc__bc* c, uint32_t i, const char* what,
                                      kc_string_view* out) {
  kc__vhlo_entry e;
  uint32_t s;
  KC_RETURN_IF_ERROR(kc__vhlo_attr(c, i, &e));
  bool ok = e.builtin ? e.code == KC__BA_STRING : e.code == KC__VA_STRING;
  if (!ok) return kc__vhlo_expect(c, &e, KC__VA_STRING, what);
  KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_strings, "a string", &s));
  *out = kc__bc_string(c, s);
  return kc__vhlo_done(c, &e);
}

/* A dense tensor attribute's elements, read in place. */
typedef struct kc__vhlo_dense {
  kc__vhlo_tensor type;
  const kc__vhlo_scalar* scalar; /* NULL for complex */
  size_t width;                  /* bytes per element in `data` */
  size_t count;                  /* elements of the type */
  size_t pos, size;              /* the data: count elements, or one (a splat) */
  bool packed;                   /* i1 elements as bits */
  bool splat;
} kc__vhlo_dense;

static kc_status* kc__vhlo_dense_open(const kc__bc* c, kc__vhlo_entry* e, kc__vhlo_dense* d) {
  uint32_t t;
  uint64_t size;
  memset(d, 0, sizeof *d);
  KC_RETURN_IF_ERROR(kc__bc_index(c, &e->cur, c->num_types, "a tensor's type", &t));
  KC_RETURN_IF_ERROR(kc__vhlo_tensor_type(c, t, &d->type));
  kc__vhlo_entry el;
  KC_RETURN_IF_ERROR(kc__vhlo_type(c, d->type.elem, &el));
  if (!el.builtin && el.code == KC__VT_COMPLEX) {
    uint32_t part;
    const kc__vhlo_scalar* s;
    KC_RETURN_IF_ERROR(kc__bc_index(c, &el.cur, c->num_types, "an element type", &part));
    KC_RETURN_IF_ERROR(kc__vhlo_scalar_type(c, part, "a complex element", &s));
    if (s->kind != KC__VK_FLOAT) {
      return kc__bc_fail(c, el.at, "expected complex<f32> or complex<f64>, got complex<%s>",
                         s->text);
    }
    d->width = 2 * kc__vhlo_width(s);
  } else {
    KC_RETURN_IF_ERROR(kc__vhlo_scalar_type(c, d->type.elem, "a dense element", &d->scalar));
    d->width = kc__vhlo_width(d->scalar);
  }
  d->count = 1;
  bool empty = false;
  for (size_t i = 0; i < d->type.rank; ++i) empty |= d->type.dims[i] == 0;
  for (size_t i = 0; i < d->type.rank && !empty; ++i) {
    uint64_t dim = (uint64_t)d->type.dims[i];
    if (dim > SIZE_MAX / d->count) {
      return kc__bc_fail(c, e->at, "expected a dense attribute that fits in memory, got one of "
                         "more than %zu elements", SIZE_MAX);
    }
    d->count *= (size_t)dim;
  }
  if (empty) d->count = 0;
  size_t at = e->cur.pos;
  KC_RETURN_IF_ERROR(kc__bc_varint(c, &e->cur, "a dense attribute's size", &size));
  KC_RETURN_IF_ERROR(kc__bc_bytes(c, &e->cur, size, "a dense attribute's data", &d->pos));
  d->size = (size_t)size;
  if (d->scalar && d->scalar->kind == KC__VK_BOOL) {
    /* VHLO packs i1 elements 8 to a byte; one byte 0xFF is a splat of true. */
    bool all_true = d->size == 1 && c->data[d->pos] == 0xFF;
    d->packed = !all_true && d->size == (d->count + 7) / 8 && d->size != d->count;
    d->splat = all_true || (!d->packed && d->size == 1 && d->count > 1);
    if (d->packed || d->splat || d->size == d->count) return NULL;
  } else {
    d->splat = d->size == d->width && d->count > 1;
    /* (MLIR may keep a byte for a literal of no elements) */
    if (d->splat || d->size == d->count * d->width || (d->count == 0 && d->size <= d->width)) {
      return NULL;
    }
  }
  return kc__bc_fail(c, at, "expected %zu elements of %zu bytes, or one, for a dense attribute, "
                     "got %zu bytes", d->count, d->width, d->size);
}

/* Element i of an integer or i1 dense attribute. */
static int64_t kc__vhlo_dense_int(const kc__bc* c, const kc__vhlo_dense* d, size_t i) {
  if (d->splat) i = 0;
  if (d->packed) return c->data[d->pos + i / 8] >> (i % 8) & 1;
  if (d->scalar->kind == KC__VK_BOOL) return c->data[d->pos + (d->splat ? 0 : i)] != 0;
  uint64_t v = 0;
  const uint8_t* p = c->data + d->pos + i * d->width;
  for (size_t k = 0; k < d->width; ++k) v |= (uint64_t)p[k] << (8 * k);
  unsigned bits = (unsigned)(8 * d->width);
  if (d->scalar->kind == KC__VK_SIGNED && bits < 64 && (v >> (bits - 1) & 1)) {
    v |= ~(((uint64_t)1 << bits) - 1);
  }
  int64_t out;
  memcpy(&out, &v, sizeof out);
  return out;
}

kc_status* kc__vhlo_get_ints(const kc__bc* c, uint32_t i, const char* what, int64_t* out,
                                    size_t cap, size_t* out_count) {
  kc__vhlo_entry e;
  kc__vhlo_dense d;
  KC_RETURN_IF_ERROR(kc__vhlo_attr(c, i, &e));
  KC_RETURN_IF_ERROR(kc__vhlo_expect(c, &e, KC__VA_TENSOR, what));
  KC_RETURN_IF_ERROR(kc__vhlo_dense_open(c, &e, &d));
  if (!d.scalar || d.scalar->kind == KC__VK_FLOAT) {
    return kc__bc_fail(c, e.at, "expected integers for %s, got a tensor of %s", what,
                       d.scalar ? d.scalar->text : "complex");
  }
  if (d.count > cap) {
    return kc__bc_fail(c, e.at, "expected at most %zu integers for %s, got %zu", cap, what,
                       d.count);
  }
  for (size_t k = 0; k < d.count; ++k) out[k] = kc__vhlo_dense_int(c, &d, k);
  *out_count = d.count;
  return kc__vhlo_done(c, &e);
}

/* Writes the elements of a dense attribute, nested by its shape. */
static void kc__vhlo_put_nested(kc__bc* c, const kc__vhlo_dense* d) {
  size_t stride[65];
  size_t r = d->type.rank;
  stride[r] = 1;
  for (size_t k = r; k-- > 0;) stride[k] = stride[k + 1] * (size_t)d->type.dims[k];
  bool bools = d->scalar->kind == KC__VK_BOOL;
  for (size_t i = 0; i < d->count && !c->out_full && !c->out_oom; ++i) {
    for (size_t k = 0; k < r; ++k) {
      if (i % stride[k] == 0) kc__bc_puts(c, "[");
    }
    int64_t v = kc__vhlo_dense_int(c, d, i);
    if (bools) {
      kc__bc_puts(c, v ? "true" : "false");
    } else if (d->scalar->kind == KC__VK_UNSIGNED) {
      kc__bc_put_uint(c, (uint64_t)v);
    } else {
      kc__bc_put_int(c, v);
    }
    for (size_t k = 0; k < r; ++k) {
      if ((i + 1) % stride[k] == 0) kc__bc_puts(c, "]");
    }
    if (i + 1 < d->count) kc__bc_puts(c, ", ");
  }
}

/* dense<...> : tensor<...>: integers and i1 in decimal, floats as their
 * bytes in hex (exact), a splat as its one element. */
static kc_status* kc__vhlo_put_dense(kc__bc* c, kc__vhlo_entry* e) {
  kc__vhlo_dense d;
  size_t at = e->cur.pos;
  KC_RETURN_IF_ERROR(kc__vhlo_dense_open(c, e, &d));
  kc__bc_puts(c, "dense<");
  if (d.count == 0) {
    /* nothing */
  } else if (d.scalar && d.scalar->kind != KC__VK_FLOAT) {
    if (d.splat) {
      kc__vhlo_dense one = d;
      one.type.rank = 0;
      one.count = 1;
      kc__vhlo_put_nested(c, &one);
    } else {
      kc__vhlo_put_nested(c, &d);
    }
  } else {
    static const char hex[] = "0123456789ABCDEF";
    kc__bc_puts(c, "\"0x");
    char* hex_at = d.size <= SIZE_MAX / 2 ? kc__bc_reserve(c, 2 * d.size) : NULL;
    for (size_t i = 0; hex_at && i < d.size; ++i) {
      hex_at[2 * i] = hex[c->data[d.pos + i] >> 4];
      hex_at[2 * i + 1] = hex[c->data[d.pos + i] & 15];
    }
    kc__bc_puts(c, "\"");
  }
  kc__bc_puts(c, "> : ");
  /* the tensor type, again from its index */
  kc__bc_cursor again = {at, e->cur.end};
  uint32_t t;
  KC_RETURN_IF_ERROR(kc__bc_index(c, &again, c->num_types, "a tensor's type", &t));
  return kc__vhlo_put_type(c, t, 1);
}

/* A float's bits as MLIR writes the value: decimal, exactly enough to
 * read back the same bits, or hex for infinities and NaNs. */
static void kc__vhlo_put_float(kc__bc* c, const kc__vhlo_scalar* s, uint64_t bits) {
  double v;
  if (s->bits == 64) {
    memcpy(&v, &bits, sizeof v);
  } else if (s->bits == 32) {
    uint32_t u = (uint32_t)bits;
    float f;
    memcpy(&f, &u, sizeof f);
    v = f;
  } else if (s->bits == 16) {
    v = s->code == 2 ? kc__bf16_to_f32((uint16_t)bits) : kc__f16_to_f32((uint16_t)bits);
  } else {
    v = NAN; /* the narrow types: their bits */
  }
  if (!isfinite(v)) {
    kc__bc_printf(c, "0x%0*llX", (int)(kc__vhlo_width(s) * 2), (unsigned long long)bits);
    return;
  }
  char buf[64];
  snprintf(buf, sizeof buf, "%.*g", s->bits == 64 ? 17 : 9, v);
  kc__bc_puts(c, buf);
  if (!strpbrk(buf, ".e")) kc__bc_puts(c, ".0");
}


static bool kc__vhlo_letter(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* A dictionary's key: bare when MLIR would write it so, else quoted. */
static void kc__vhlo_put_key(kc__bc* c, kc_string_view k) {
  bool bare = k.size > 0 && (k.data[0] == '_' || kc__vhlo_letter(k.data[0]));
  for (size_t i = 0; bare && i < k.size; ++i) {
    char ch = k.data[i];
    bare = ch == '_' || ch == '.' || ch == '$' || (ch >= '0' && ch <= '9') || kc__vhlo_letter(ch);
  }
  if (bare) {
    kc__bc_put(c, k.data, k.size);
  } else {
    kc__bc_put_quoted(c, k);
  }
}

void kc__vhlo_put_symbol(kc__bc* c, kc_string_view name) {
  kc__bc_puts(c, "@");
  kc__vhlo_put_key(c, name);
}

/* The attributes of a list (`count` indices at the cursor), with `sep`. */
static kc_status* kc__vhlo_put_list(kc__bc* c, kc__vhlo_entry* e, bool pairs, int depth) {
  size_t n;
  KC_RETURN_IF_ERROR(kc__bc_count(c, &e->cur, pairs ? 2 : 1, "a number of attributes", &n));
  for (size_t k = 0; k < n && !c->out_full && !c->out_oom; ++k) {
    uint32_t a;
    if (k) kc__bc_puts(c, ", ");
    if (pairs) {
      kc_string_view key;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e->cur, c->num_attrs, "a name", &a));
      KC_RETURN_IF_ERROR(kc__vhlo_get_string(c, a, "a dictionary key", &key));
      kc__vhlo_put_key(c, key);
      kc__bc_puts(c, " = ");
    }
    KC_RETURN_IF_ERROR(kc__bc_index(c, &e->cur, c->num_attrs, "an attribute", &a));
    KC_RETURN_IF_ERROR(kc__vhlo_put_attr(c, a, depth + 1));
  }
  return NULL;
}

/* Signed varints, as "[a, b]". */
static kc_status* kc__vhlo_put_svarints(kc__bc* c, kc__vhlo_entry* e) {
  size_t n;
  KC_RETURN_IF_ERROR(kc__bc_count(c, &e->cur, 1, "a number of integers", &n));
  kc__bc_puts(c, "[");
  for (size_t k = 0; k < n; ++k) {
    int64_t v;
    KC_RETURN_IF_ERROR(kc__bc_svarint(c, &e->cur, "an integer", &v));
    if (k) kc__bc_puts(c, ", ");
    kc__bc_put_int(c, v);
  }
  kc__bc_puts(c, "]");
  return NULL;
}

/* The builtin attributes the text keeps: strings, integers, units,
 * dictionaries, arrays and symbols. */
static kc_status* kc__vhlo_put_builtin(kc__bc* c, kc__vhlo_entry* e, int depth) {
  switch (e->code) {
    case KC__BA_ARRAY:
      kc__bc_puts(c, "[");
      KC_RETURN_IF_ERROR(kc__vhlo_put_list(c, e, false, depth));
      kc__bc_puts(c, "]");
      return NULL;
    case KC__BA_DICTIONARY:
      kc__bc_puts(c, "{");
      KC_RETURN_IF_ERROR(kc__vhlo_put_list(c, e, true, depth));
      kc__bc_puts(c, "}");
      return NULL;
    case KC__BA_STRING:
    case KC__BA_FLAT_SYMBOL: {
      uint32_t s;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e->cur, c->num_strings, "a string", &s));
      if (e->code == KC__BA_STRING) {
        kc__bc_put_quoted(c, kc__bc_string(c, s));
      } else {
        kc__vhlo_put_symbol(c, kc__bc_string(c, s));
      }
      return NULL;
    }
    case KC__BA_UNIT: kc__bc_puts(c, "unit"); return NULL;
    case KC__BA_FLOAT: {
      /* builtin bf16, f16, f32, f64 (type codes 3 to 6) */
      static const uint8_t vhlo_code[] = {2, 3, 4, 5};
      uint32_t t;
      uint64_t bits;
      kc__vhlo_entry te;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e->cur, c->num_types, "a float's type", &t));
      KC_RETURN_IF_ERROR(kc__vhlo_type(c, t, &te));
      if (!te.builtin || te.code < 3 || te.code > 6) {
        return kc__bc_unsupported("a builtin float of type code %llu (byte %zu)",
                                  (unsigned long long)te.code, te.at);
      }
      KC_RETURN_IF_ERROR(kc__vhlo_done(c, &te));
      const kc__vhlo_scalar* s = kc__vhlo_scalar_find(vhlo_code[te.code - 3]);
      KC_RETURN_IF_ERROR(kc__vhlo_apint(c, &e->cur, s->bits, false, &bits));
      kc__vhlo_put_float(c, s, bits);
      kc__bc_puts(c, " : ");
      kc__bc_puts(c, s->text);
      return NULL;
    }
    case KC__BA_INTEGER: {
      /* a builtin integer type: width << 2 | signedness (0 signless,
       * 1 signed, 2 unsigned), or index */
      uint32_t t;
      uint64_t ws, v;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e->cur, c->num_types, "an integer's type", &t));
      KC_RETURN_IF_ERROR(kc__vhlo_builtin_int_type(c, t, &ws));
      unsigned bits = (unsigned)(ws >> 2);
      KC_RETURN_IF_ERROR(kc__vhlo_apint(c, &e->cur, bits, (ws & 3) != 2, &v));
      if (bits == 1) {
        kc__bc_puts(c, v & 1 ? "true" : "false");
      } else if ((ws & 3) == 2) {
        kc__bc_printf(c, "%llu : ui%u", (unsigned long long)v, bits);
      } else {
        kc__bc_printf(c, "%lld : %s%u", (long long)v, (ws & 3) == 1 ? "si" : "i", bits);
      }
      return NULL;
    }
    default:
      return kc__bc_unsupported("builtin attribute code %llu (byte %zu)",
                                (unsigned long long)e->code, e->at);
  }
}

kc_status* kc__vhlo_put_attr(kc__bc* c, uint32_t i, int depth) {
  kc__vhlo_entry e;
  KC_RETURN_IF_ERROR(kc__vhlo_attr(c, i, &e));
  KC_RETURN_IF_ERROR(kc__vhlo_depth(c, e.at, depth));
  if (e.builtin) {
    KC_RETURN_IF_ERROR(kc__vhlo_put_builtin(c, &e, depth));
    return kc__vhlo_done(c, &e);
  }
  const char* kind = NULL;
  switch (e.code) {
    case KC__VA_ARRAY:
      kc__bc_puts(c, "[");
      KC_RETURN_IF_ERROR(kc__vhlo_put_list(c, &e, false, depth));
      kc__bc_puts(c, "]");
      break;
    case KC__VA_BOOLEAN: {
      uint64_t v;
      KC_RETURN_IF_ERROR(kc__bc_varint(c, &e.cur, "a boolean", &v));
      if (v > 1) {
        return kc__bc_fail(c, e.at, "expected a boolean (0 or 1), got %llu",
                           (unsigned long long)v);
      }
      kc__bc_puts(c, v ? "true" : "false");
      break;
    }
    case KC__VA_API_VERSION: {
      uint64_t v;
      KC_RETURN_IF_ERROR(kc__bc_varint(c, &e.cur, "a custom call API version", &v));
      if (v > 4) {
        return kc__bc_fail(c, e.at, "expected a custom call API version (0 to 4), got %llu",
                           (unsigned long long)v);
      }
      kc__bc_printf(c, "%llu : i32", (unsigned long long)v);
      break;
    }
    case KC__VA_DICTIONARY:
      kc__bc_puts(c, "{");
      KC_RETURN_IF_ERROR(kc__vhlo_put_list(c, &e, true, depth));
      kc__bc_puts(c, "}");
      break;
    case KC__VA_FLOAT: {
      uint32_t t;
      const kc__vhlo_scalar* s;
      uint64_t bits;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_types, "a float's type", &t));
      KC_RETURN_IF_ERROR(kc__vhlo_scalar_type(c, t, "a float", &s));
      if (s->kind != KC__VK_FLOAT) {
        return kc__bc_fail(c, e.at, "expected a float type for a float attribute, got %s",
                           s->text);
      }
      KC_RETURN_IF_ERROR(kc__vhlo_apint(c, &e.cur, s->bits, false, &bits));
      kc__vhlo_put_float(c, s, bits);
      kc__bc_puts(c, " : ");
      kc__bc_puts(c, s->text);
      break;
    }
    case KC__VA_INTEGER: {
      int64_t v;
      const kc__vhlo_scalar* s;
      KC_RETURN_IF_ERROR(kc__vhlo_int_value(c, &e, &v, &s));
      if (s->kind == KC__VK_UNSIGNED) {
        kc__bc_put_uint(c, (uint64_t)v);
      } else {
        kc__bc_put_int(c, v);
      }
      kc__bc_puts(c, " : ");
      kc__bc_puts(c, s->text);
      break;
    }
    case KC__VA_OUTPUT_OPERAND_ALIAS: {
      int64_t operand;
      kc__bc_puts(c, "#stablehlo.output_operand_alias<output_tuple_indices = ");
      KC_RETURN_IF_ERROR(kc__vhlo_put_svarints(c, &e));
      KC_RETURN_IF_ERROR(kc__bc_svarint(c, &e.cur, "an operand index", &operand));
      kc__bc_printf(c, ", operand_index = %lld, operand_tuple_indices = ", (long long)operand);
      KC_RETURN_IF_ERROR(kc__vhlo_put_svarints(c, &e));
      kc__bc_puts(c, ">");
      break;
    }
    case KC__VA_STRING: {
      uint32_t s;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_strings, "a string", &s));
      kc__bc_put_quoted(c, kc__bc_string(c, s));
      break;
    }
    case KC__VA_TENSOR: KC_RETURN_IF_ERROR(kc__vhlo_put_dense(c, &e)); break;
    case KC__VA_TYPE: {
      uint32_t t;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_types, "a type", &t));
      KC_RETURN_IF_ERROR(kc__vhlo_put_type(c, t, depth + 1));
      break;
    }
    default: {
      uint64_t v;
      const char* word = NULL;
      if (kc__vhlo_enum_word(e.code, 0, &kind), kind) {
        KC_RETURN_IF_ERROR(kc__bc_varint(c, &e.cur, kind, &v));
        word = kc__vhlo_enum_word(e.code, v, &kind);
        if (!word) {
          return kc__bc_fail(c, e.at, "expected a %s, got value %llu", kind,
                             (unsigned long long)v);
        }
        kc__bc_printf(c, "#stablehlo<%s %s>", kind, word);
        break;
      }
      static const char* const names[] = {"type_extensions_v1", "result_accuracy_mode_v1",
                                          "result_accuracy_v1", "sub_axis_info_v1",
                                          "axis_ref_v1", "replica_group_mesh_axes_v1",
                                          "mesh_axis_v1", "mesh_v1"};
      if (e.code >= 18 && e.code < 18 + KC__ARRAY_SIZE(names)) {
        return kc__bc_unsupported("attribute vhlo.%s (byte %zu)", names[e.code - 18], e.at);
      }
      return kc__bc_fail(c, e.at, "expected a VHLO attribute code, got %llu",
                         (unsigned long long)e.code);
    }
  }
  return kc__vhlo_done(c, &e);
}

kc_status* kc__vhlo_is_none(const kc__bc* c, uint32_t i, bool* out) {
  kc__vhlo_entry e, te;
  *out = false;
  KC_RETURN_IF_ERROR(kc__vhlo_attr(c, i, &e));
  if (e.builtin || e.code != KC__VA_TYPE) return NULL;
  uint32_t t;
  KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_types, "a type", &t));
  KC_RETURN_IF_ERROR(kc__vhlo_type(c, t, &te));
  *out = !te.builtin && te.code == KC__VT_NONE;
  return NULL;
}

kc_status* kc__vhlo_get_item(const kc__bc* c, uint32_t i, size_t k, uint32_t* out,
                             bool* found) {
  kc__vhlo_entry e;
  *found = false;
  KC_RETURN_IF_ERROR(kc__vhlo_attr(c, i, &e));
  if (e.builtin || e.code != KC__VA_ARRAY) return NULL;
  size_t n;
  KC_RETURN_IF_ERROR(kc__bc_count(c, &e.cur, 1, "a number of attributes", &n));
  for (size_t j = 0; j <= k && j < n; ++j) {
    KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_attrs, "an attribute", out));
    *found = j == k;
  }
  return NULL;
}

kc_status* kc__vhlo_is_empty(const kc__bc* c, uint32_t i, bool* out) {
  kc__vhlo_entry e;
  *out = false;
  KC_RETURN_IF_ERROR(kc__vhlo_attr(c, i, &e));
  if (e.builtin) return NULL;
  if (e.code == KC__VA_ARRAY || e.code == KC__VA_DICTIONARY) {
    uint64_t n;
    KC_RETURN_IF_ERROR(kc__bc_varint(c, &e.cur, "a number of attributes", &n));
    *out = n == 0;
  } else if (e.code == KC__VA_STRING) {
    uint32_t s;
    KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_strings, "a string", &s));
    *out = c->strings[s].size == 0;
  } else if (e.code == KC__VA_TENSOR) {
    kc__vhlo_dense d;
    KC_RETURN_IF_ERROR(kc__vhlo_dense_open(c, &e, &d));
    *out = d.count == 0;
  }
  return NULL;
}

kc_status* kc__vhlo_put_func_results(kc__bc* c, uint32_t i, const kc__bc_op* func) {
  kc__vhlo_entry e, f;
  uint32_t t;
  size_t n;
  KC_RETURN_IF_ERROR(kc__vhlo_attr(c, i, &e));
  KC_RETURN_IF_ERROR(kc__vhlo_expect(c, &e, KC__VA_TYPE, "a function type"));
  KC_RETURN_IF_ERROR(kc__bc_index(c, &e.cur, c->num_types, "a function type", &t));
  KC_RETURN_IF_ERROR(kc__vhlo_type(c, t, &f));
  if (f.builtin || f.code != KC__VT_FUNCTION) {
    return kc__bc_fail(c, f.at, "expected a function type, got type code %llu",
                       (unsigned long long)f.code);
  }
  KC_RETURN_IF_ERROR(kc__bc_count(c, &f.cur, 1, "a number of arguments", &n));
  for (size_t k = 0; k < n; ++k) {
    KC_RETURN_IF_ERROR(kc__bc_index(c, &f.cur, c->num_types, "an argument's type", &t));
  }
  KC_RETURN_IF_ERROR(kc__bc_count(c, &f.cur, 1, "a number of results", &n));
  kc__bc_puts(c, "(");
  for (size_t k = 0; k < n; ++k) {
    KC_RETURN_IF_ERROR(kc__bc_index(c, &f.cur, c->num_types, "a result's type", &t));
    if (k) kc__bc_puts(c, ", ");
    KC_RETURN_IF_ERROR(kc__vhlo_put_type(c, t, 1));
    KC_RETURN_IF_ERROR(kc__vhlo_put_item_attrs(c, func, "res_attrs", k));
  }
  kc__bc_puts(c, ")");
  return kc__vhlo_done(c, &f);
}

kc_status* kc__vhlo_get_enum(const kc__bc* c, uint32_t i, const char* what, int64_t* out) {
  kc__vhlo_entry e;
  uint64_t v;
  *out = 0;
  KC_RETURN_IF_ERROR(kc__vhlo_attr(c, i, &e));
  if (e.builtin || e.code == KC__VA_ARRAY || e.code == KC__VA_DICTIONARY ||
      e.code == KC__VA_FLOAT || e.code == KC__VA_INTEGER || e.code == KC__VA_STRING ||
      e.code == KC__VA_TENSOR || e.code == KC__VA_TYPE || e.code == KC__VA_BOOLEAN ||
      e.code == KC__VA_OUTPUT_OPERAND_ALIAS || e.code > KC__VA_TYPE) {
    return kc__bc_fail(c, e.at, "expected %s, got attribute code %llu", what,
                       (unsigned long long)e.code);
  }
  KC_RETURN_IF_ERROR(kc__bc_varint(c, &e.cur, what, &v));
  *out = (int64_t)(v & INT64_MAX);
  return kc__vhlo_done(c, &e);
}
