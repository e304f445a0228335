/* `Exported.serialize()`: the flatbuffer jax.export wraps around a
 * portable artifact (schema jax_export.serialization.Exported), read for
 * what running the artifact needs: its calling convention, platforms,
 * effects and device count, and the artifact itself (bytecode.h).
 *
 * FlatBuffers' layout, as its specification gives it: the buffer starts
 * with the offset (u32) of the root table; a table starts with the signed
 * offset (i32) back to its vtable, which is two u16 sizes (its own, the
 * table's) and one u16 offset per field, from the table's start (0: the
 * field is absent, its default holds); a reference field holds a u32
 * offset from where it is to a table, a string or a vector (a u32 count,
 * then the elements; a vector of tables holds an offset per element).
 * Everything is little-endian. Every position is checked against the
 * buffer before it is read. */
#include <stdio.h>
#include <string.h>

#include "program/program_internal.h"
#include "program/frontend/stablehlo/bytecode.h"
#include "program/frontend/stablehlo/stablehlo_internal.h"

/* The Exported table's fields kcall reads (their slots in the schema). */
enum {
  KC__EXP_IN_AVALS = 3,
  KC__EXP_NR_DEVICES_SHORT = 6,
  KC__EXP_PLATFORMS = 9,
  KC__EXP_ORDERED_EFFECTS = 10,
  KC__EXP_MLIR_MODULE = 13,
  KC__EXP_CALLING_CONVENTION = 14,
  KC__EXP_KEPT_VARS = 15,
  KC__EXP_NR_DEVICES = 18,
  KC__EXP_UNIQUE_AVALS = 19,
  KC__EXP_IN_AVALS_IDXS = 22
};

/* An AbstractValue's fields. */
enum { KC__AVAL_SHAPE = 1, KC__AVAL_DTYPE = 2 };

/* The calling conventions kcall runs: jax.export's versions 9 (ordered
 * effects take tokens) and 10 (the current one). */
#define KC__EXP_MIN_VERSION 9
#define KC__EXP_MAX_VERSION 10

typedef struct kc__fb {
  const uint8_t* d;
  size_t n;
} kc__fb;

typedef struct kc__fb_table {
  size_t at;     /* the table */
  size_t vtable; /* its vtable */
  uint16_t vsize;
} kc__fb_table;

static kc_status* kc__fb_fail(size_t at, const char* what) {
  return kc_status_create(KC_INVALID_ARGUMENT, "serialized jax.export, byte %zu: %s", at, what);
}

static bool kc__fb_has(const kc__fb* b, size_t at, size_t size) {
  return at <= b->n && size <= b->n - at;
}

static uint32_t kc__fb_u32(const kc__fb* b, size_t at) {
  const uint8_t* p = b->d + at;
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t kc__fb_u16(const kc__fb* b, size_t at) {
  return (uint16_t)(b->d[at] | b->d[at + 1] << 8);
}

/* The table at `at`, its vtable checked. */
static kc_status* kc__fb_table_at(const kc__fb* b, size_t at, kc__fb_table* out) {
  if (!kc__fb_has(b, at, 4)) return kc__fb_fail(at, "a table past the end");
  int64_t back = (int32_t)kc__fb_u32(b, at);
  int64_t vtable = (int64_t)at - back;
  if (vtable < 0 || !kc__fb_has(b, (size_t)vtable, 4)) {
    return kc__fb_fail(at, "a table whose vtable is outside the buffer");
  }
  uint16_t vsize = kc__fb_u16(b, (size_t)vtable);
  uint16_t tsize = kc__fb_u16(b, (size_t)vtable + 2);
  if (vsize < 4 || vsize % 2 || !kc__fb_has(b, (size_t)vtable, vsize) || tsize < 4 ||
      !kc__fb_has(b, at, tsize)) {
    return kc__fb_fail((size_t)vtable, "a vtable whose sizes do not fit the buffer");
  }
  *out = (kc__fb_table){.at = at, .vtable = (size_t)vtable, .vsize = vsize};
  return NULL;
}

/* Where field `slot` of `t` is (`size` bytes of it in bounds); false
 * when it is absent. */
static bool kc__fb_field(const kc__fb* b, const kc__fb_table* t, int slot, size_t size,
                         size_t* out, kc_status** st) {
  size_t entry = 4 + 2 * (size_t)slot;
  if (entry + 2 > t->vsize) return false;
  uint16_t off = kc__fb_u16(b, t->vtable + entry);
  if (!off) return false;
  if (!kc__fb_has(b, t->at + off, size)) {
    *st = kc__fb_fail(t->at + off, "a field past the end");
    return false;
  }
  *out = t->at + off;
  return true;
}

static uint32_t kc__fb_scalar(const kc__fb* b, const kc__fb_table* t, int slot, size_t size,
                              uint32_t fallback, kc_status** st) {
  size_t at = 0;
  if (!kc__fb_field(b, t, slot, size, &at, st)) return fallback;
  return size == 4 ? kc__fb_u32(b, at) : size == 2 ? kc__fb_u16(b, at) : b->d[at];
}

/* The vector (or string) field `slot`: its first element and count, each
 * element `elem` bytes, in bounds. False when absent. */
static bool kc__fb_vector(const kc__fb* b, const kc__fb_table* t, int slot, size_t elem,
                          size_t* out_at, uint32_t* out_count, kc_status** st) {
  size_t at = 0;
  if (!kc__fb_field(b, t, slot, 4, &at, st)) return false;
  size_t target = at + kc__fb_u32(b, at);
  if (target < at || !kc__fb_has(b, target, 4)) {
    *st = kc__fb_fail(at, "a reference past the end");
    return false;
  }
  uint32_t count = kc__fb_u32(b, target);
  if (elem && (size_t)count > (b->n - target - 4) / elem) {
    *st = kc__fb_fail(target, "a vector longer than the buffer");
    return false;
  }
  *out_at = target + 4;
  *out_count = count;
  return true;
}

/* Element i of a vector of strings or tables (at `first`): where it is. */
static kc_status* kc__fb_element(const kc__fb* b, size_t first, uint32_t i, size_t* out) {
  size_t at = first + 4 * (size_t)i;
  size_t target = at + kc__fb_u32(b, at);
  if (target < at || !kc__fb_has(b, target, 4)) return kc__fb_fail(at, "a reference past the end");
  *out = target;
  return NULL;
}

/* String element i (at `first`) as a view into the buffer. */
static kc_status* kc__fb_string(const kc__fb* b, size_t first, uint32_t i, kc_string_view* out) {
  size_t at = 0;
  KC_RETURN_IF_ERROR(kc__fb_element(b, first, i, &at));
  uint32_t len = kc__fb_u32(b, at);
  if (!kc__fb_has(b, at + 4, len)) return kc__fb_fail(at, "a string longer than the buffer");
  *out = (kc_string_view){(const char*)b->d + at + 4, len};
  return NULL;
}

/* The root table and its module's bytes. */
static kc_status* kc__exported_root(const kc__fb* b, kc__fb_table* root, kc_string_view* module) {
  if (b->n < 8) return kc__fb_fail(0, "shorter than a flatbuffer");
  KC_RETURN_IF_ERROR(kc__fb_table_at(b, kc__fb_u32(b, 0), root));
  kc_status* st = NULL;
  size_t at = 0;
  uint32_t count = 0;
  if (!kc__fb_vector(b, root, KC__EXP_MLIR_MODULE, 1, &at, &count, &st)) {
    return st ? st : kc__fb_fail(root->at, "no mlir_module_serialized");
  }
  *module = (kc_string_view){(const char*)b->d + at, count};
  return NULL;
}

bool kc__jax_exported_detect(kc_string_view data) {
  kc__fb b = {(const uint8_t*)data.data, data.size};
  kc__fb_table root = {0, 0, 0};
  kc_string_view module = {NULL, 0};
  kc_status* st = kc__exported_root(&b, &root, &module);
  bool yes = !st && kc__stablehlo_bytecode_detect(module);
  kc_status_destroy(st);
  return yes;
}

/* The platform whose lowering kcall runs: "cpu", else "cuda"; its index
 * among the platforms. */
static kc_status* kc__exported_platform(const kc__fb* b, const kc__fb_table* root,
                                        int32_t* out_index) {
  kc_status* st = NULL;
  size_t first = 0;
  uint32_t count = 0;
  if (!kc__fb_vector(b, root, KC__EXP_PLATFORMS, 4, &first, &count, &st)) {
    return st ? st : kc__fb_fail(root->at, "no platforms");
  }
  char listed[256] = "";
  size_t used = 0;
  int32_t cpu = -1, cuda = -1;
  for (uint32_t i = 0; i < count && i < INT32_MAX; ++i) {
    kc_string_view p = {0};
    KC_RETURN_IF_ERROR(kc__fb_string(b, first, i, &p));
    if (p.size == 3 && memcmp(p.data, "cpu", 3) == 0 && cpu < 0) cpu = (int32_t)i;
    if (p.size == 4 && memcmp(p.data, "cuda", 4) == 0 && cuda < 0) cuda = (int32_t)i;
    if (used < sizeof listed) {
      int k = snprintf(listed + used, sizeof listed - used, "%s'%.*s'", i ? ", " : "",
                       (int)(p.size < 64 ? p.size : 64), p.data);
      used += k > 0 ? (size_t)k : 0;
    }
  }
  *out_index = cpu >= 0 ? cpu : cuda;
  if (*out_index < 0) {
    return kc_status_create(KC_UNIMPLEMENTED,
                            "serialized jax.export: lowered for the platforms [%s]; kcall "
                            "runs a 'cpu' or 'cuda' lowering (export with "
                            "platforms=[\"cpu\"])", listed);
  }
  return NULL;
}

/* ---- dimension variables -------------------------------------------------- */

/* A dim of an input aval ("8", "b", "2*b + 1"), evaluated with the
 * options' dimension variables: integers, names, +, -, * and
 * parentheses. */
typedef struct kc__dim_expr {
  const char* p;
  const char* end;
  const kc_parse_options* o;
  const char* missing; /* a name not given, for the message */
  size_t missing_len;
  bool bad;
} kc__dim_expr;

static void kc__dim_blank(kc__dim_expr* e) {
  while (e->p < e->end && *e->p == ' ') ++e->p;
}

static int64_t kc__dim_sum(kc__dim_expr* e, int depth);

static int64_t kc__dim_factor(kc__dim_expr* e, int depth) {
  kc__dim_blank(e);
  if (e->p >= e->end || depth > 32) {
    e->bad = true;
    return 0;
  }
  char c = *e->p;
  if (c == '-') {
    ++e->p;
    int64_t v = kc__dim_factor(e, depth + 1);
    return v == INT64_MIN ? (e->bad = true, 0) : -v;
  }
  if (c == '(') {
    ++e->p;
    int64_t v = kc__dim_sum(e, depth + 1);
    kc__dim_blank(e);
    if (e->p >= e->end || *e->p != ')') e->bad = true;
    ++e->p;
    return v;
  }
  if (c >= '0' && c <= '9') {
    int64_t v = 0;
    while (e->p < e->end && *e->p >= '0' && *e->p <= '9') {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *e->p - '0', &v)) {
        e->bad = true;
      }
      ++e->p;
    }
    return v;
  }
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
    const char* start = e->p;
    while (e->p < e->end && ((*e->p >= 'a' && *e->p <= 'z') || (*e->p >= 'A' && *e->p <= 'Z') ||
                             (*e->p >= '0' && *e->p <= '9') || *e->p == '_')) {
      ++e->p;
    }
    size_t len = (size_t)(e->p - start);
    kc__dim_blank(e);
    if (e->p < e->end && *e->p == '(') { /* floordiv(...), max(...): not read */
      e->bad = true;
      return 0;
    }
    for (size_t i = 0; i < e->o->num_dims; ++i) {
      const char* name = e->o->dim_names[i];
      if (name && strlen(name) == len && memcmp(name, start, len) == 0) return e->o->dim_values[i];
    }
    if (!e->missing) {
      e->missing = start;
      e->missing_len = len;
    }
    return 0;
  }
  e->bad = true;
  return 0;
}

static int64_t kc__dim_product(kc__dim_expr* e, int depth) {
  int64_t v = kc__dim_factor(e, depth);
  for (;;) {
    kc__dim_blank(e);
    if (e->p >= e->end || *e->p != '*') return v;
    ++e->p;
    int64_t w = kc__dim_factor(e, depth);
    if (__builtin_mul_overflow(v, w, &v)) e->bad = true;
  }
}

static int64_t kc__dim_sum(kc__dim_expr* e, int depth) {
  int64_t v = kc__dim_product(e, depth);
  for (;;) {
    kc__dim_blank(e);
    if (e->p >= e->end || (*e->p != '+' && *e->p != '-')) return v;
    bool minus = *e->p++ == '-';
    int64_t w = kc__dim_product(e, depth);
    if (minus ? __builtin_sub_overflow(v, w, &v) : __builtin_add_overflow(v, w, &v)) {
      e->bad = true;
    }
  }
}

/* JAX's DType enum (the schema's) as a dtype; false for one kcall has not. */
static bool kc__exported_dtype(uint32_t code, DLDataType* out) {
  static const struct {
    uint8_t code, bits;
  } map[] = {
      {kDLBool, 8},  {kDLInt, 8},     {kDLInt, 16},     {kDLInt, 32},     {kDLInt, 64},
      {kDLUInt, 8},  {kDLUInt, 16},   {kDLUInt, 32},    {kDLUInt, 64},    {kDLFloat, 16},
      {kDLFloat, 32}, {kDLFloat, 64}, {kDLComplex, 64}, {kDLComplex, 128}, {kDLBfloat, 16},
  };
  if (code >= sizeof map / sizeof map[0]) return false;
  *out = (DLDataType){.code = map[code].code, .bits = map[code].bits, .lanes = 1};
  return true;
}

/* The input aval of function argument `arg` (in_avals, or the unique
 * avals in_avals_idxs points into). */
static kc_status* kc__exported_aval(const kc__fb* b, const kc__fb_table* root, uint32_t arg,
                                    kc__fb_table* out) {
  kc_status* st = NULL;
  size_t first = 0, idx_first = 0;
  uint32_t count = 0, idx_count = 0;
  uint32_t index = arg;
  int slot = KC__EXP_IN_AVALS;
  if (kc__fb_vector(b, root, KC__EXP_IN_AVALS_IDXS, 4, &idx_first, &idx_count, &st)) {
    if (arg >= idx_count) return kc__fb_fail(idx_first, "fewer input aval indices than arguments");
    index = kc__fb_u32(b, idx_first + 4 * (size_t)arg);
    slot = KC__EXP_UNIQUE_AVALS;
  }
  if (st) return st;
  if (!kc__fb_vector(b, root, slot, 4, &first, &count, &st)) {
    return st ? st : kc__fb_fail(root->at, "no input avals");
  }
  if (index >= count) return kc__fb_fail(first, "an input aval index past the avals");
  size_t at = 0;
  KC_RETURN_IF_ERROR(kc__fb_element(b, first, index, &at));
  return kc__fb_table_at(b, at, out);
}

/* The shape of module parameter k (function argument `arg`) from its
 * aval and the options' dimension variables. */
static kc_status* kc__exported_param_shape(const kc__fb* b, const kc__fb_table* root, size_t k,
                                           uint32_t arg, const kc_parse_options* o,
                                           kc_shape** out) {
  kc__fb_table aval = {0, 0, 0};
  KC_RETURN_IF_ERROR(kc__exported_aval(b, root, arg, &aval));
  kc_status* st = NULL;
  uint32_t code = kc__fb_scalar(b, &aval, KC__AVAL_DTYPE, 1, 0, &st);
  if (st) return st;
  DLDataType dtype;
  if (!kc__exported_dtype(code, &dtype)) {
    return kc_status_create(KC_UNIMPLEMENTED,
                            "serialized jax.export: parameter %zu (args[%u]) has JAX dtype code "
                            "%u, which kcall has no dtype for", k, arg, code);
  }
  size_t first = 0;
  uint32_t rank = 0;
  if (!kc__fb_vector(b, &aval, KC__AVAL_SHAPE, 4, &first, &rank, &st) && st) return st;
  if (rank > KC_TENSOR_MAX_NDIM) {
    return kc__fb_fail(first, "an input aval of more dims than kcall takes");
  }
  int64_t dims[KC_TENSOR_MAX_NDIM];
  for (uint32_t d = 0; d < rank; ++d) {
    kc_string_view text = {NULL, 0};
    KC_RETURN_IF_ERROR(kc__fb_string(b, first, d, &text));
    kc__dim_expr e = {.p = text.data, .end = text.data + text.size, .o = o};
    dims[d] = kc__dim_sum(&e, 0);
    kc__dim_blank(&e);
    int n = (int)(text.size < 96 ? text.size : 96);
    if (e.missing && !e.bad) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "serialized jax.export: parameter %zu (args[%u]) dim %u is '%.*s': "
                              "no value is given for dimension variable '%.*s'",
                              k, arg, d, n, text.data, (int)(e.missing_len < 64 ? e.missing_len : 64),
                              e.missing);
    }
    if (e.bad || e.p != e.end || dims[d] < 0) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "serialized jax.export: parameter %zu (args[%u]) dim %u is '%.*s', "
                              "which %s", k, arg, d, n, text.data,
                              e.bad || e.p != e.end
                                  ? "kcall does not evaluate (it reads integers, names, +, - "
                                    "and *)"
                                  : "the dimension variables given make negative");
    }
  }
  return kc_shape_create_array(dtype, dims, (int32_t)rank, out);
}

/* The module's parameter shapes from the avals and the options'
 * dimension variables, into *out (owned, `count` of them). */
static kc_status* kc__exported_shapes(const kc__fb* b, const kc__fb_table* root,
                                      const kc_parse_options* o, kc_shape*** out,
                                      size_t* out_count) {
  kc_status* st = NULL;
  size_t kept_first = 0;
  uint32_t kept = 0;
  bool some = kc__fb_vector(b, root, KC__EXP_KEPT_VARS, 2, &kept_first, &kept, &st);
  if (st) return st;
  if (!some) { /* every argument: as many as avals */
    size_t first = 0, idx_first = 0;
    uint32_t idx_count = 0;
    if (kc__fb_vector(b, root, KC__EXP_IN_AVALS_IDXS, 4, &idx_first, &idx_count, &st)) {
      kept = idx_count;
    } else if (!st && !kc__fb_vector(b, root, KC__EXP_IN_AVALS, 4, &first, &kept, &st) && !st) {
      kept = 0;
    }
    if (st) return st;
  }
  kc_shape** shapes = kc__calloc(kept ? kept : 1, sizeof *shapes);
  if (!shapes) return kc__status_oom();
  for (uint32_t k = 0; k < kept && !st; ++k) {
    uint32_t arg = some ? kc__fb_u16(b, kept_first + 2 * (size_t)k) : k;
    st = kc__exported_param_shape(b, root, k, arg, o, &shapes[k]);
  }
  if (st) {
    for (uint32_t k = 0; k < kept; ++k) kc_shape_destroy(shapes[k]);
    kc__free(shapes);
    return st;
  }
  *out = shapes;
  *out_count = kept;
  return NULL;
}

kc_status* kc__jax_exported_parse(kc_string_view data, const kc_parse_options* options,
                                  kc_program** out_program) {
  kc__fb b = {(const uint8_t*)data.data, data.size};
  kc__fb_table root = {0, 0, 0};
  kc_string_view module = {NULL, 0};
  KC_RETURN_IF_ERROR(kc__exported_root(&b, &root, &module));
  kc_status* st = NULL;
  uint32_t version = kc__fb_scalar(&b, &root, KC__EXP_CALLING_CONVENTION, 2, 0, &st);
  if (st) return st;
  if (version < KC__EXP_MIN_VERSION || version > KC__EXP_MAX_VERSION) {
    return kc_status_create(KC_UNIMPLEMENTED,
                            "serialized jax.export: calling convention version %u; kcall "
                            "reads versions %d to %d",
                            version, KC__EXP_MIN_VERSION, KC__EXP_MAX_VERSION);
  }
  size_t first = 0;
  uint32_t count = 0;
  if (kc__fb_vector(&b, &root, KC__EXP_ORDERED_EFFECTS, 4, &first, &count, &st) && count) {
    kc_string_view name = KC_SV_LIT("?");
    size_t at = 0;
    kc__fb_table effect = {0, 0, 0};
    st = kc__fb_element(&b, first, 0, &at);
    if (!st) st = kc__fb_table_at(&b, at, &effect);
    size_t name_at = 0;
    uint32_t len = 0;
    if (!st && kc__fb_vector(&b, &effect, 0, 1, &name_at, &len, &st)) {
      name = (kc_string_view){(const char*)b.d + name_at, len};
    }
    if (st) return st;
    return kc_status_create(KC_UNIMPLEMENTED,
                            "serialized jax.export: %u ordered effect%s (%.*s%s), whose "
                            "calls take and return tokens, which kcall does not run",
                            count, count == 1 ? "" : "s", (int)(name.size < 96 ? name.size : 96),
                            name.data, count > 1 ? ", ..." : "");
  }
  if (st) return st;
  uint32_t devices = kc__fb_scalar(&b, &root, KC__EXP_NR_DEVICES, 4, 0, &st);
  if (!st && devices == 0) {
    devices = (uint16_t)kc__fb_scalar(&b, &root, KC__EXP_NR_DEVICES_SHORT, 2, 1, &st);
  }
  if (st) return st;
  if (devices > 1) {
    return kc_status_create(KC_UNIMPLEMENTED,
                            "serialized jax.export: exported for %u devices; kcall runs "
                            "single-device modules", devices);
  }
  int32_t platform = -1;
  KC_RETURN_IF_ERROR(kc__exported_platform(&b, &root, &platform));
  /* Dimension variables give the parameters' shapes. */
  kc_parse_options o = *options;
  kc_shape** shapes = NULL;
  size_t num_shapes = 0;
  if (options->num_dims) {
    if (options->num_parameter_shapes) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "kc_program_parse_with: give parameter shapes or dimension "
                              "variables, not both");
    }
    KC_RETURN_IF_ERROR(kc__exported_shapes(&b, &root, options, &shapes, &num_shapes));
    o.parameter_shapes = (const kc_shape* const*)shapes;
    o.num_parameter_shapes = num_shapes;
    o.parameter_names = NULL;
  }
  st = kc__stablehlo_bytecode_parse_for(module, &o, platform, out_program);
  for (size_t k = 0; k < num_shapes; ++k) kc_shape_destroy(shapes[k]);
  kc__free(shapes);
  char format[192];
  kc_string_view producer = kc__stablehlo_bytecode_producer(module);
  snprintf(format, sizeof format, "serialized jax.export (calling convention %u, %.*s)", version,
           (int)(producer.size < 96 ? producer.size : 96), producer.data);
  st = kc__program_formatted(st, out_program, kc_sv(format));
  return kc_status_add_context(st, "in the module of the serialized jax.export");
}
