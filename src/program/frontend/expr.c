/* Element-wise decompositions shared by the front ends (expr.h). */
#include <stdio.h>
#include <string.h>

#include "internal/common.h"
#include "program/frontend/expr.h"
#include "program/instr/instr.h"
#include "program/program_internal.h"

/* The next instruction's name: e->name's, or "PREFIX/WHAT.K". */
kc_status* kc__e_name(kc__expr* e, kc_string_view* out) {
  if (e->name) return e->name(e, out);
  int n = snprintf(e->buf, sizeof e->buf, "%.*s/%s.%u", (int)e->prefix.size, e->prefix.data,
                   e->what ? e->what : "x", e->serial++);
  if (n < 0 || (size_t)n >= sizeof e->buf) {
    return kc_status_create(KC_INVALID_ARGUMENT, "instruction name %.*s is too long",
                            (int)e->prefix.size, e->prefix.data);
  }
  *out = (kc_string_view){e->buf, (size_t)n};
  return NULL;
}

int32_t kc__e_add(kc__expr* e, int32_t opcode, const kc_shape* shape, const int32_t* ids,
                         size_t n, const kc_attr_dict* attrs) {
  int32_t id = -1;
  kc_string_view name;
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] < 0) return -1;
  }
  if (!e->st) e->st = kc__e_name(e, &name);
  if (e->st) return -1;
  const kc__instr_def* def = kc__instr_def_find(opcode);
  if (def->kind == KC__INSTR_ELEMENTWISE || opcode == KC_OP_RESHAPE) {
    e->st = kc_program_builder_add_op(e->b, (kc_opcode)opcode, shape, ids, n, name, &id);
  } else {
    kc_instruction_desc d = {.struct_size = sizeof d, .op = opcode, .result_shape = shape,
                             .operands = ids, .num_operands = n, .attrs = attrs};
    e->st = kc_program_builder_add_instruction(e->b, &d, name, &id);
  }
  return e->st ? -1 : id;
}

int32_t kc__e_op(kc__expr* e, int32_t opcode, int32_t a, int32_t b) {
  int32_t ids[2] = {a, b};
  return kc__e_add(e, opcode, e->shape, ids, b < -1 ? 1 : 2, NULL);
}

/* The f32 constant v, broadcast to the shape. */
int32_t kc__e_const(kc__expr* e, float v) {
  if (e->st) return -1;
  kc_shape* scalar = NULL;
  int32_t c = -1, id = -1;
  kc_string_view name;
  e->st = kc_shape_create_array(kc_shape_get_dtype(e->shape), NULL, 0, &scalar);
  if (!e->st) e->st = kc__e_name(e, &name);
  if (!e->st) e->st = kc_program_builder_add_constant(e->b, scalar, &v, sizeof v, name, &c);
  if (!e->st) e->st = kc__e_name(e, &name);
  if (!e->st) e->st = kc_program_builder_add_broadcast(e->b, e->shape, c, NULL, 0, name, &id);
  kc_shape_destroy(scalar);
  return e->st ? -1 : id;
}

/* The integer constant v (its low bits, of the values' type), broadcast
 * to the shape. */
int32_t kc__e_const_int(kc__expr* e, uint64_t v) {
  if (e->st) return -1;
  DLDataType dt = kc_shape_get_dtype(e->shape);
  uint8_t bytes[8];
  for (unsigned k = 0; k < 8; ++k) bytes[k] = (uint8_t)(v >> (8 * k)); /* little-endian */
  kc_shape* scalar = NULL;
  int32_t c = -1, id = -1;
  kc_string_view name;
  e->st = kc_shape_create_array(dt, NULL, 0, &scalar);
  if (!e->st) e->st = kc__e_name(e, &name);
  if (!e->st) e->st = kc_program_builder_add_constant(e->b, scalar, bytes, dt.bits / 8u, name, &c);
  if (!e->st) e->st = kc__e_name(e, &name);
  if (!e->st) e->st = kc_program_builder_add_broadcast(e->b, e->shape, c, NULL, 0, name, &id);
  kc_shape_destroy(scalar);
  return e->st ? -1 : id;
}

int32_t kc__e_compare(kc__expr* e, const char* direction, int32_t a, int32_t b) {
  kc_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.name = KC_SV_LIT("direction");
  attr.type = KC_ATTR_STRING;
  attr.v.str = kc_sv(direction);
  kc_attr_dict attrs = {.count = 1, .entries = &attr};
  int32_t ids[2] = {a, b};
  return kc__e_add(e, KC_OP_COMPARE, e->pred, ids, 2, &attrs);
}

int32_t kc__e_select(kc__expr* e, int32_t p, int32_t a, int32_t b) {
  int32_t ids[3] = {p, a, b};
  return kc__e_add(e, KC_OP_SELECT, e->shape, ids, 3, NULL);
}

kc_status* kc__unroll_check(const kc_program_builder* b, const char* what) {
  if (kc__builder_count(b) <= KC__UNROLL_MAX_INSTRUCTIONS) return NULL;
  return kc_status_create(KC_RESOURCE_EXHAUSTED,
                          "%s: unrolled, the program would hold more than %d instructions", what,
                          KC__UNROLL_MAX_INSTRUCTIONS);
}

/* ---- decompositions --------------------------------------------------------- */

int32_t kc__e_mulhi(kc__expr* e, int32_t x, int32_t y, const kc_shape* shape) {
  if (e->st) return -1;
  DLDataType dt = kc_shape_get_dtype(shape);
  bool sign = dt.code == kDLInt;
  int32_t shift = sign ? KC_OP_SHIFT_RIGHT_ARITHMETIC : KC_OP_SHIFT_RIGHT_LOGICAL;
  if (dt.bits < 64) {
    kc_shape* wide = NULL;
    e->st = kc_shape_create_array(kc_dtype_make(dt.code, 64, 1), kc_shape_get_dims(shape),
                                  kc_shape_get_rank(shape), &wide);
    if (e->st) return -1;
    e->shape = wide;
    int32_t a = kc__e_add(e, KC_OP_CONVERT, wide, &x, 1, NULL);
    int32_t b = kc__e_add(e, KC_OP_CONVERT, wide, &y, 1, NULL);
    int32_t p = kc__e_op(e, shift, kc__e_op(e, KC_OP_MULTIPLY, a, b), kc__e_const_int(e, dt.bits));
    int32_t hi = kc__e_add(e, KC_OP_CONVERT, shape, &p, 1, NULL);
    e->shape = shape;
    kc_shape_destroy(wide);
    return hi;
  }
  e->shape = shape;
  int32_t mask = kc__e_const_int(e, 0xFFFFFFFFu), n32 = kc__e_const_int(e, 32);
  int32_t a0 = kc__e_op(e, KC_OP_AND, x, mask), a1 = kc__e_op(e, shift, x, n32);
  int32_t b0 = kc__e_op(e, KC_OP_AND, y, mask), b1 = kc__e_op(e, shift, y, n32);
  int32_t w0 = kc__e_op(e, KC_OP_MULTIPLY, a0, b0);
  int32_t t = kc__e_op(e, KC_OP_ADD, kc__e_op(e, KC_OP_MULTIPLY, a1, b0),
                       kc__e_op(e, KC_OP_SHIFT_RIGHT_LOGICAL, w0, n32));
  int32_t w1 = kc__e_op(e, KC_OP_ADD, kc__e_op(e, KC_OP_MULTIPLY, a0, b1),
                        kc__e_op(e, KC_OP_AND, t, mask));
  return kc__e_op(e, KC_OP_ADD, kc__e_op(e, KC_OP_MULTIPLY, a1, b1),
                  kc__e_op(e, KC_OP_ADD, kc__e_op(e, shift, t, n32), kc__e_op(e, shift, w1, n32)));
}

bool kc__e_is_complex_form(int32_t opcode, DLDataType dt) {
  return dt.code == kDLComplex &&
         (opcode == KC_OP_MAXIMUM || opcode == KC_OP_MINIMUM || opcode == KC_OP_ATAN2 ||
          opcode == KC_OP_CBRT || opcode == KC_OP_LOGISTIC);
}

/* The real constant v of e->shape (f32 or f64), broadcast. */
static int32_t kc__part_const(kc__expr* e, kc_shape* f32, float v) {
  const kc_shape* part = e->shape;
  e->shape = f32;
  int32_t c = kc__e_const(e, v);
  e->shape = part;
  if (kc_shape_get_dtype(part).bits == 32) return c;
  return kc__e_add(e, KC_OP_CONVERT, part, &c, 1, NULL);
}

/* complex(re, im) of the complex shape c. */
static int32_t kc__make_complex(kc__expr* e, const kc_shape* c, int32_t re, int32_t im) {
  int32_t ids[2] = {re, im};
  return kc__e_add(e, KC_OP_COMPLEX, c, ids, 2, NULL);
}

/* maximum and minimum, lexicographic in (real, imaginary). */
static int32_t kc__complex_max_min(kc__expr* e, int32_t opcode, int32_t a, int32_t b,
                                   const kc_shape* c, const kc_shape* part) {
  const char* gt = opcode == KC_OP_MAXIMUM ? "GT" : "LT";
  e->st = kc_shape_create_array(kc_dtype_make(kDLBool, 8, 1), kc_shape_get_dims(c),
                                kc_shape_get_rank(c), &e->pred);
  int32_t ra = kc__e_add(e, KC_OP_REAL, part, &a, 1, NULL);
  int32_t rb = kc__e_add(e, KC_OP_REAL, part, &b, 1, NULL);
  int32_t ia = kc__e_add(e, KC_OP_IMAG, part, &a, 1, NULL);
  int32_t ib = kc__e_add(e, KC_OP_IMAG, part, &b, 1, NULL);
  int32_t tie[2] = {kc__e_compare(e, "EQ", ra, rb), kc__e_compare(e, gt, ia, ib)};
  int32_t first[2] = {kc__e_compare(e, gt, ra, rb),
                      kc__e_add(e, KC_OP_AND, e->pred, tie, 2, NULL)};
  int32_t pick = kc__e_add(e, KC_OP_OR, e->pred, first, 2, NULL);
  int32_t sel[3] = {pick, a, b};
  int32_t y = kc__e_add(e, KC_OP_SELECT, c, sel, 3, NULL);
  kc_shape_destroy(e->pred);
  e->pred = NULL;
  return y;
}

/* atan2(z, x), cbrt(z), logistic(z); e->shape is the parts' shape. */
static int32_t kc__complex_math(kc__expr* e, int32_t opcode, const int32_t* ids,
                                const kc_shape* c, kc_shape* part, kc_shape* f32) {
  int32_t z = ids[0];
  if (opcode == KC_OP_ATAN2) {
    /* atan2(y, x): z is y. */
    int32_t x = ids[1];
    int32_t yr = kc__e_add(e, KC_OP_REAL, part, &z, 1, NULL);
    int32_t yi = kc__e_add(e, KC_OP_IMAG, part, &z, 1, NULL);
    int32_t iy = kc__make_complex(e, c, kc__e_op(e, KC_OP_NEGATE, yi, KC__UNARY), yr);
    e->shape = c;
    int32_t num = kc__e_op(e, KC_OP_ADD, x, iy);
    int32_t den = kc__e_op(e, KC_OP_SQRT,
                           kc__e_op(e, KC_OP_ADD, kc__e_op(e, KC_OP_MULTIPLY, x, x),
                                    kc__e_op(e, KC_OP_MULTIPLY, z, z)),
                           KC__UNARY);
    int32_t l = kc__e_op(e, KC_OP_LOG, kc__e_op(e, KC_OP_DIVIDE, num, den), KC__UNARY);
    e->shape = part;
    int32_t lr = kc__e_add(e, KC_OP_REAL, part, &l, 1, NULL);
    int32_t li = kc__e_add(e, KC_OP_IMAG, part, &l, 1, NULL);
    return kc__make_complex(e, c, li, kc__e_op(e, KC_OP_NEGATE, lr, KC__UNARY));
  }
  if (opcode == KC_OP_CBRT) {
    int32_t re = kc__e_add(e, KC_OP_REAL, part, &z, 1, NULL);
    int32_t im = kc__e_add(e, KC_OP_IMAG, part, &z, 1, NULL);
    int32_t m = kc__e_op(e, KC_OP_CBRT, kc__e_add(e, KC_OP_ABS, part, &z, 1, NULL), KC__UNARY);
    int32_t t = kc__e_op(e, KC_OP_DIVIDE, kc__e_op(e, KC_OP_ATAN2, im, re),
                         kc__part_const(e, f32, 3.0f));
    return kc__make_complex(
        e, c, kc__e_op(e, KC_OP_MULTIPLY, m, kc__e_op(e, KC_OP_COSINE, t, KC__UNARY)),
        kc__e_op(e, KC_OP_MULTIPLY, m, kc__e_op(e, KC_OP_SINE, t, KC__UNARY)));
  }
  int32_t one =
      kc__make_complex(e, c, kc__part_const(e, f32, 1.0f), kc__part_const(e, f32, 0.0f));
  e->shape = c;
  int32_t ez = kc__e_op(e, KC_OP_EXPONENTIAL, kc__e_op(e, KC_OP_NEGATE, z, KC__UNARY), KC__UNARY);
  return kc__e_op(e, KC_OP_DIVIDE, one, kc__e_op(e, KC_OP_ADD, one, ez));
}

int32_t kc__e_complex(kc__expr* e, int32_t opcode, const int32_t* ids, const kc_shape* c) {
  if (e->st) return -1;
  kc_shape *part = NULL, *f32 = NULL;
  DLDataType dt = kc_shape_get_dtype(c);
  e->st = kc_shape_create_array(kc_dtype_make(kDLFloat, (uint8_t)(dt.bits / 2), 1),
                                kc_shape_get_dims(c), kc_shape_get_rank(c), &part);
  if (!e->st) {
    e->st = kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), kc_shape_get_dims(c),
                                  kc_shape_get_rank(c), &f32);
  }
  int32_t y = -1;
  e->shape = part;
  if (!e->st && (opcode == KC_OP_MAXIMUM || opcode == KC_OP_MINIMUM)) {
    y = kc__complex_max_min(e, opcode, ids[0], ids[1], c, part);
  } else if (!e->st) {
    y = kc__complex_math(e, opcode, ids, c, part, f32);
  }
  e->shape = c;
  kc_shape_destroy(part);
  kc_shape_destroy(f32);
  return e->st ? -1 : y;
}

/* ---- narrow integers -------------------------------------------------------- */

int32_t kc__e_narrow_wrap(kc__expr* e, int32_t x, unsigned bits) {
  if (kc_shape_get_dtype(e->shape).code != kDLInt)
    return kc__e_op(e, KC_OP_AND, x, kc__e_const_int(e, (1u << bits) - 1));
  int32_t up = kc__e_const_int(e, 8 - bits);
  return kc__e_op(e, KC_OP_SHIFT_RIGHT_ARITHMETIC, kc__e_op(e, KC_OP_SHIFT_LEFT, x, up), up);
}

int32_t kc__e_narrow_clamp(kc__expr* e, int32_t x, const kc_shape* shape, bool is_signed,
                           unsigned bits) {
  if (e->st) return -1;
  float lo = is_signed ? -(float)(1u << (bits - 1)) : 0.0f;
  float hi = is_signed ? (float)((1u << (bits - 1)) - 1) : (float)((1u << bits) - 1);
  kc_shape* f32 = NULL;
  e->st = kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), kc_shape_get_dims(shape),
                                kc_shape_get_rank(shape), &f32);
  e->shape = f32;
  int32_t bounds[2] = {kc__e_const(e, lo), kc__e_const(e, hi)};
  e->shape = shape;
  DLDataType dt = kc_shape_get_dtype(shape);
  for (int k = 0; k < 2 && !(dt.code == kDLFloat && dt.bits == 32); ++k) {
    bounds[k] = kc__e_add(e, KC_OP_CONVERT, shape, &bounds[k], 1, NULL);
  }
  int32_t y = kc__e_op(e, KC_OP_MINIMUM, kc__e_op(e, KC_OP_MAXIMUM, x, bounds[0]), bounds[1]);
  kc_shape_destroy(f32);
  return y;
}

/* ---- a dot's algorithm ------------------------------------------------------ */

bool kc__precision_bits(kc_string_view t, int* exponent, int* mantissa) {
  static const struct {
    const char* name;
    int e, m;
  } types[] = {{"tf32", 8, 10}, {"bf16", 8, 7}, {"f16", 5, 10}, {"f32", 8, 23}, {"f64", 11, 52}};
  for (size_t i = 0; i < KC__ARRAY_SIZE(types); ++i) {
    if (kc_sv_equal(t, kc_sv(types[i].name))) {
      *exponent = types[i].e;
      *mantissa = types[i].m;
      return true;
    }
  }
  return false;
}

const char* kc__dot_accumulation(DLDataType dt) {
  if (dt.code == kDLBfloat || (dt.code == kDLFloat && dt.bits == 16)) return "f32";
  if (dt.code == kDLFloat) return dt.bits == 64 ? "f64" : "f32";
  return NULL;
}

int32_t kc__e_round_to(kc__expr* e, int32_t x, const kc_shape* shape, int exponent,
                       int mantissa) {
  DLDataType dt = kc_shape_get_dtype(shape);
  bool is_float = dt.code == kDLFloat || dt.code == kDLBfloat;
  int own = dt.code == kDLBfloat ? 7 : dt.bits == 16 ? 10 : dt.bits == 32 ? 23 : 52;
  if (!is_float || own <= mantissa) return x;
  kc_attr a[2];
  memset(a, 0, sizeof a);
  a[0].name = KC_SV_LIT("exponent_bits");
  a[0].type = KC_ATTR_I64;
  a[0].v.i64 = exponent;
  a[1].name = KC_SV_LIT("mantissa_bits");
  a[1].type = KC_ATTR_I64;
  a[1].v.i64 = mantissa;
  kc_attr_dict dict = {.count = 2, .entries = a};
  return kc__e_add(e, KC_OP_REDUCE_PRECISION, shape, &x, 1, &dict);
}

/* ---- ragged dot ------------------------------------------------------------ */

static bool kc__listed(const int64_t* v, size_t n, int64_t d) {
  for (size_t i = 0; i < n; ++i) {
    if (v[i] == d) return true;
  }
  return false;
}

/* An I64 array attribute (borrowed values: the builder copies them). */
static kc_attr kc__ints_attr(const char* name, const int64_t* v, size_t n) {
  kc_attr a;
  memset(&a, 0, sizeof a);
  a.name = kc_sv(name);
  a.type = KC_ATTR_ARRAY;
  a.elem_type = KC_ATTR_I64;
  a.v.array.data = v;
  a.v.array.count = n;
  return a;
}

static int32_t kc__e_fail(kc__expr* e, const char* message) {
  if (!e->st) e->st = kc_status_create(KC_INVALID_ARGUMENT, "%s", message);
  return -1;
}

/* The checks of the first mode; the dims of every group's dot ([batch...,
 * lhs free..., rhs free...]) into dims, the ragged and group dimensions'
 * places among them into pos_m and pos_g. */
static bool kc__ragged_dims(kc__expr* e, const kc__ragged_dot* r, int64_t* dims, int32_t* rank,
                            int32_t* pos_m, int32_t* pos_g) {
  if (kc_shape_is_tuple(r->lhs_shape) || kc_shape_is_tuple(r->rhs_shape)) {
    kc__e_fail(e, "expected array operands");
    return false;
  }
  int32_t lrank = kc_shape_get_rank(r->lhs_shape), rrank = kc_shape_get_rank(r->rhs_shape);
  if (kc__listed(r->lhs_contract, r->num_contract, r->ragged) ||
      kc__listed(r->lhs_batch, r->num_batch, r->ragged)) {
    e->st = kc_status_create(KC_INVALID_ARGUMENT,
                             "a ragged %s dimension is not supported (kcall runs a "
                             "ragged non-contracting dimension of the lhs, with a group "
                             "dimension of the rhs)",
                             kc__listed(r->lhs_batch, r->num_batch, r->ragged) ? "batch"
                                                                              : "contracting");
    return false;
  }
  for (size_t k = 0; k < r->num_batch + r->num_contract; ++k) {
    int64_t l = k < r->num_batch ? r->lhs_batch[k] : r->lhs_contract[k - r->num_batch];
    int64_t rr = k < r->num_batch ? r->rhs_batch[k] : r->rhs_contract[k - r->num_batch];
    if (l < 0 || l >= lrank || rr < 0 || rr >= rrank) {
      kc__e_fail(e, "a batching or contracting dimension is outside its operand's rank");
      return false;
    }
  }
  DLDataType sdt = kc_shape_get_dtype(r->sizes_shape);
  if (r->ragged < 0 || r->ragged >= lrank || r->group < 0 || r->group >= rrank ||
      kc__listed(r->rhs_batch, r->num_batch, r->group) ||
      kc__listed(r->rhs_contract, r->num_contract, r->group) ||
      kc_shape_is_tuple(r->sizes_shape) || kc_shape_get_rank(r->sizes_shape) != 1 ||
      (sdt.code != kDLInt && sdt.code != kDLUInt) ||
      kc_shape_get_dims(r->sizes_shape)[0] != kc_shape_get_dims(r->rhs_shape)[r->group]) {
    kc__e_fail(e, "expected a ragged lhs dimension, a group dimension of the rhs outside its "
                  "batching and contracting ones, and group_sizes of one integer per group");
    return false;
  }
  *rank = 0;
  *pos_m = *pos_g = -1;
  for (size_t k = 0; k < r->num_batch; ++k) dims[(*rank)++] = kc_shape_get_dims(r->lhs_shape)[r->lhs_batch[k]];
  for (int32_t i = 0; i < lrank; ++i) {
    if (kc__listed(r->lhs_batch, r->num_batch, i) || kc__listed(r->lhs_contract, r->num_contract, i))
      continue;
    if (i == r->ragged) *pos_m = *rank;
    dims[(*rank)++] = kc_shape_get_dims(r->lhs_shape)[i];
  }
  for (int32_t i = 0; i < rrank && *rank < KC_TENSOR_MAX_NDIM; ++i) {
    if (kc__listed(r->rhs_batch, r->num_batch, i) || kc__listed(r->rhs_contract, r->num_contract, i))
      continue;
    if (i == r->group) *pos_g = *rank;
    dims[(*rank)++] = kc_shape_get_dims(r->rhs_shape)[i];
  }
  if (kc_shape_is_tuple(r->result) || *rank != kc_shape_get_rank(r->result) + 1) {
    kc__e_fail(e, "the result's rank is not the dot's without the group dimension");
    return false;
  }
  return true;
}

int32_t kc__e_ragged_dot(kc__expr* e, const kc__ragged_dot* r) {
  if (e->st) return -1;
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t rank = 0, pos_m = -1, pos_g = -1;
  if (!kc__ragged_dims(e, r, dims, &rank, &pos_m, &pos_g)) return -1;
  int64_t groups = kc_shape_get_dims(r->sizes_shape)[0];
  kc_shape *full = NULL, *full_pred = NULL, *full_idx = NULL, *square = NULL, *row = NULL;
  kc_shape *square_pred = NULL, *ones_shape = NULL;
  DLDataType s64 = kc_dtype_make(kDLInt, 64, 1), pred = kc_dtype_make(kDLBool, 8, 1);
  DLDataType rt = kc_shape_get_dtype(r->result);
  int64_t gg[2] = {groups, groups};
  e->st = kc_shape_create_array(rt, dims, rank, &full);
  if (!e->st) e->st = kc_shape_create_array(pred, dims, rank, &full_pred);
  if (!e->st) e->st = kc_shape_create_array(s64, dims, rank, &full_idx);
  if (!e->st) e->st = kc_shape_create_array(s64, gg, 2, &square);
  if (!e->st) e->st = kc_shape_create_array(s64, &groups, 1, &row);
  if (!e->st) e->st = kc_shape_create_array(pred, gg, 2, &square_pred);
  if (!e->st) e->st = kc_shape_create_array(rt, &groups, 1, &ones_shape);
  kc_attr dot[4] = {kc__ints_attr("lhs_batch_dims", r->lhs_batch, r->num_batch),
                    kc__ints_attr("rhs_batch_dims", r->rhs_batch, r->num_batch),
                    kc__ints_attr("lhs_contracting_dims", r->lhs_contract, r->num_contract),
                    kc__ints_attr("rhs_contracting_dims", r->rhs_contract, r->num_contract)};
  kc_attr_dict dot_dict = {.count = 4, .entries = dot};
  int32_t operands[2] = {r->lhs, r->rhs};
  int32_t all = kc__e_add(e, KC_OP_DOT, full, operands, 2, &dot_dict);
  /* Group g's rows are [end - size, end), end the sum of the sizes up to
   * g: a dot with the upper triangle of ones. */
  e->shape = row;
  int32_t n = kc__e_add(e, KC_OP_CONVERT, row, &r->sizes, 1, NULL);
  e->shape = square;
  e->pred = square_pred;
  kc_attr iota;
  memset(&iota, 0, sizeof iota);
  iota.name = KC_SV_LIT("iota_dimension");
  iota.type = KC_ATTR_I64;
  kc_attr_dict iota_dict = {.count = 1, .entries = &iota};
  int32_t j = kc__e_add(e, KC_OP_IOTA, square, NULL, 0, &iota_dict);
  iota.v.i64 = 1;
  int32_t g = kc__e_add(e, KC_OP_IOTA, square, NULL, 0, &iota_dict);
  int32_t upper = kc__e_compare(e, "LE", j, g);
  int32_t tri = kc__e_add(e, KC_OP_CONVERT, square, &upper, 1, NULL);
  static const int64_t zero = 0;
  kc_attr sum[2] = {kc__ints_attr("lhs_contracting_dims", &zero, 1),
                    kc__ints_attr("rhs_contracting_dims", &zero, 1)};
  kc_attr_dict sum_dict = {.count = 2, .entries = sum};
  int32_t nt[2] = {n, tri};
  int32_t end = kc__e_add(e, KC_OP_DOT, row, nt, 2, &sum_dict);
  e->shape = row;
  int32_t start = kc__e_op(e, KC_OP_SUBTRACT, end, n);
  /* Spread over the full shape: the row index along m, the bounds along g. */
  e->shape = full_idx;
  e->pred = full_pred;
  iota.v.i64 = pos_m;
  int32_t m = kc__e_add(e, KC_OP_IOTA, full_idx, NULL, 0, &iota_dict);
  int64_t along_g = pos_g;
  int32_t bounds[2] = {start, end};
  for (int k = 0; k < 2 && !e->st; ++k) {
    kc_string_view name;
    e->st = kc__e_name(e, &name);
    if (!e->st) {
      e->st = kc_program_builder_add_broadcast(e->b, full_idx, bounds[k], &along_g, 1, name,
                                               &bounds[k]);
    }
  }
  int32_t in[2] = {kc__e_compare(e, "GE", m, bounds[0]), kc__e_compare(e, "LT", m, bounds[1])};
  int32_t mine = kc__e_add(e, KC_OP_AND, full_pred, in, 2, NULL);
  e->pred = NULL;
  /* Each row's own group kept, the others zero (so that an inf or NaN of
   * another group's dot cannot reach it), then summed over g by a dot
   * with ones. */
  int32_t zero_idx = kc__e_const_int(e, 0);
  int32_t zeros = kc__e_add(e, KC_OP_CONVERT, full, &zero_idx, 1, NULL);
  e->shape = full;
  int32_t kept = kc__e_select(e, mine, all, zeros);
  e->shape = row;
  int32_t one_idx = kc__e_const_int(e, 1);
  int32_t ones = kc__e_add(e, KC_OP_CONVERT, ones_shape, &one_idx, 1, NULL);
  kc_attr over_g[2] = {kc__ints_attr("lhs_contracting_dims", &along_g, 1),
                       kc__ints_attr("rhs_contracting_dims", &zero, 1)};
  kc_attr_dict over_dict = {.count = 2, .entries = over_g};
  int32_t ko[2] = {kept, ones};
  int32_t y = kc__e_add(e, KC_OP_DOT, r->result, ko, 2, &over_dict);
  e->shape = r->result;
  kc_shape_destroy(ones_shape);
  kc_shape_destroy(square_pred);
  kc_shape_destroy(full);
  kc_shape_destroy(full_pred);
  kc_shape_destroy(full_idx);
  kc_shape_destroy(square);
  kc_shape_destroy(row);
  return e->st ? -1 : y;
}
