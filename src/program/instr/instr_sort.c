/* sort and topk.
 *
 * sort: N operands of one dims sorted together along `dimensions={d}` by
 * the comparator `to_apply` (2N scalar parameters, lhs then rhs of each
 * operand; a pred[] "lhs < rhs"). Every sort is stable (a valid result
 * for is_stable=false too): a merge sort of indices per row, then each
 * operand gathered by them. The comparator runs as its computation per
 * comparison, except where it is one of the orders below, which sort by
 * a 64-bit key per element:
 *   compare(p[2k], p[2k+1]), direction=LT or GT, on integers (SIGNED or
 *     UNSIGNED) or floats with type=TOTALORDER: operand k's order;
 *   JAX's float comparator (jnp.sort, argsort, lax.sort with one key, of
 *     f16, bf16, f32 or f64): the
 *     same compare of each parameter with -0.0 made +0.0 and every NaN
 *     made +NaN (select(x != x, nan, select(x == 0, 0, x))), as JAX lowers
 *     it (compare type=TOTALORDER) or as XLA:CPU rewrites it (the floats'
 *     bits as a signed integer, negative ones xor its maximum, compared as
 *     integers).
 *
 * topk: the k largest (largest=true, the default) or smallest elements of
 * each row along the last dimension, with their s32 indices, in XLA's
 * total order of floats (-NaN < -inf < -0 < +0 < inf < NaN); equal
 * elements keep the order of their indices. The custom call "TopK" that
 * XLA:CPU emits for it is read as topk (parse.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/instr/instr.h"
#include "kernels/split.h"

#define KC__SORT_MAX_OPERANDS 64

/* ---- keys: an order-preserving uint64 per element ------------------------- */

typedef enum kc__key_kind {
  KC__KEY_NONE = 0, /* the comparator's computation */
  KC__KEY_PLAIN,    /* the element's own order (total order for floats) */
  KC__KEY_CANON     /* floats with -0 as +0 and every NaN as +NaN */
} kc__key_kind;

/* The ordered key of the element at `p` of type `t`: unsigned integers
 * as they are, signed ones with the sign bit flipped, floats in XLA's
 * total order (negative ones' bits inverted, positive ones' sign bit set).
 * False for a type with no key. */
static bool kc__elem_key(DLDataType t, const void* p, bool canon, uint64_t* out) {
  uint64_t bits = 0;
  size_t size = t.bits / 8u;
  if (t.lanes != 1 || (size != 1 && size != 2 && size != 4 && size != 8)) return false;
  memcpy(&bits, p, size); /* little-endian hosts */
  unsigned w = t.bits;
  uint64_t sign = (uint64_t)1 << (w - 1);
  uint64_t all = w == 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
  if (t.code == kDLUInt || t.code == kDLBool) {
    *out = bits;
    return true;
  }
  if (t.code == kDLInt) {
    *out = (bits ^ sign) & all;
    return true;
  }
  if (t.code != kDLFloat && t.code != kDLBfloat) return false;
  if (t.code == kDLFloat && w == 8) return false;
  unsigned mant = t.code == kDLBfloat ? 7u : w == 16 ? 10u : w == 32 ? 23u : 52u;
  uint64_t exp_mask = (all >> 1) & ~(((uint64_t)1 << mant) - 1);
  uint64_t mant_mask = ((uint64_t)1 << mant) - 1;
  if (canon) {
    if ((bits & exp_mask) == exp_mask && (bits & mant_mask) != 0) {
      bits = exp_mask | ((uint64_t)1 << (mant - 1)); /* +NaN */
    } else if ((bits & ~sign) == 0) {
      bits = 0; /* +0 */
    }
  }
  *out = (bits & sign) ? (~bits & all) : (bits | sign);
  return true;
}

/* ---- recognising comparators ---------------------------------------------- */

static const kc__instr* kc__at(const kc_program* r, int32_t id) { return &r->instrs[id]; }

static bool kc__is_param(const kc_program* r, int32_t id, int64_t number) {
  const kc__instr* in = kc__at(r, id);
  return in->op == KC__OP_PARAMETER && in->number == number;
}

static bool kc__attr_is(const kc__instr* in, const char* name, const char* want) {
  const kc_attr* a = kc__instr_attr(in, name);
  if (!a) return want == NULL;
  return want && a->type == KC_ATTR_STRING && kc_sv_equal(a->v.str, kc_sv(want));
}

/* A compare of (a, b) with `direction` (and no type, or `type`). */
static bool kc__is_compare(const kc_program* r, int32_t id, const char* direction,
                           const char* type, int32_t* a, int32_t* b) {
  const kc__instr* in = kc__at(r, id);
  if (in->op != KC_OP_COMPARE || in->num_operands != 2) return false;
  if (!kc__attr_is(in, "direction", direction)) return false;
  const kc_attr* t = kc__instr_attr(in, "type");
  if (t && !kc__attr_is(in, "type", type)) return false;
  *a = in->operands[0];
  *b = in->operands[1];
  return true;
}

/* A scalar constant whose bytes, as an integer of its width, are `bits`
 * (or, with nan, whose key is above every number's: a positive NaN). */
static bool kc__is_const_bits(const kc_program* r, int32_t id, uint64_t bits, bool nan) {
  const kc__instr* in = kc__at(r, id);
  if (in->op != KC__OP_CONSTANT || kc_shape_is_tuple(in->shape) ||
      kc_shape_get_rank(in->shape) != 0 || in->literal_size > 8) {
    return false;
  }
  uint64_t v = 0;
  memcpy(&v, in->literal, in->literal_size);
  if (!nan) return v == bits;
  DLDataType t = kc_shape_get_dtype(in->shape);
  uint64_t key, inf_key;
  uint64_t inf = t.code == kDLBfloat ? 0x7f80u
                 : t.bits == 16      ? 0x7c00u
                 : t.bits == 32      ? 0x7f800000u
                                     : 0x7ff0000000000000u;
  return (t.code == kDLFloat || t.code == kDLBfloat) && kc__elem_key(t, in->literal, false, &key) &&
         kc__elem_key(t, &inf, false, &inf_key) && key > inf_key;
}

static bool kc__is_select(const kc_program* r, int32_t id, int32_t* c, int32_t* t, int32_t* f) {
  const kc__instr* in = kc__at(r, id);
  if (in->op != KC_OP_SELECT || in->num_operands != 3) return false;
  *c = in->operands[0];
  *t = in->operands[1];
  *f = in->operands[2];
  return true;
}

/* select(x != x, nan, select(x == 0, 0, x)) of float parameter `number`. */
static bool kc__is_canon(const kc_program* r, int32_t id, int64_t number) {
  int32_t c, t, f, a, b, c2, t2, f2;
  if (!kc__is_select(r, id, &c, &t, &f)) return false;
  if (!kc__is_compare(r, c, "NE", "FLOAT", &a, &b) || !kc__is_param(r, a, number) ||
      !kc__is_param(r, b, number) || !kc__is_const_bits(r, t, 0, true)) {
    return false;
  }
  if (!kc__is_select(r, f, &c2, &t2, &f2)) return false;
  return kc__is_compare(r, c2, "EQ", "FLOAT", &a, &b) && kc__is_param(r, a, number) &&
         kc__is_const_bits(r, b, 0, false) && kc__is_const_bits(r, t2, 0, false) &&
         kc__is_param(r, f2, number);
}

/* select(i < 0, xor(INT_MAX, i), i) with i = bitcast-convert of `inner`
 * to a signed integer of width `bits`: XLA's total-order key of a float.
 * *out_inner: what was cast. */
static bool kc__is_total_key(const kc_program* r, int32_t id, uint8_t bits, int32_t* out_inner) {
  int32_t c, t, f, a, b;
  if (!kc__is_select(r, id, &c, &t, &f)) return false;
  const kc__instr* cast = kc__at(r, f);
  if (cast->op != KC_OP_BITCAST_CONVERT || kc_shape_is_tuple(cast->shape) ||
      !kc_dtype_equal(kc_shape_get_dtype(cast->shape), (DLDataType){kDLInt, bits, 1})) {
    return false;
  }
  if (!kc__is_compare(r, c, "LT", "SIGNED", &a, &b) || a != f ||
      !kc__is_const_bits(r, b, 0, false)) {
    return false;
  }
  const kc__instr* x = kc__at(r, t);
  if (x->op != KC_OP_XOR || x->num_operands != 2) return false;
  int32_t other = x->operands[0] == f ? x->operands[1] : x->operands[0];
  if ((x->operands[0] != f && x->operands[1] != f) ||
      !kc__is_const_bits(r, other, ((uint64_t)1 << (bits - 1)) - 1, false)) {
    return false;
  }
  *out_inner = cast->operands[0];
  return true;
}

/* The key order a comparator is, if it is one: which operand, the kind of
 * key, and whether descending. */
static kc__key_kind kc__match_comparator(const kc_program* r, size_t n, DLDataType const* types,
                                         size_t* out_operand, bool* out_descending) {
  const kc__instr* root = kc__at(r, r->root);
  if (root->op != KC_OP_COMPARE || root->num_operands != 2) return KC__KEY_NONE;
  bool lt = kc__attr_is(root, "direction", "LT"), gt = kc__attr_is(root, "direction", "GT");
  if (!lt && !gt) return KC__KEY_NONE;
  *out_descending = gt;
  int32_t a = root->operands[0], b = root->operands[1];
  const kc__instr* pa = kc__at(r, a);
  const kc__instr* pb = kc__at(r, b);
  /* compare(p[2k], p[2k+1]) */
  if (pa->op == KC__OP_PARAMETER && pb->op == KC__OP_PARAMETER && pa->number % 2 == 0 &&
      pb->number == pa->number + 1 && (size_t)pa->number / 2 < n) {
    size_t k = (size_t)pa->number / 2;
    DLDataType t = types[k];
    bool is_float = t.code == kDLFloat || t.code == kDLBfloat;
    bool ok = is_float ? kc__attr_is(root, "type", "TOTALORDER")
                       : !kc__instr_attr(root, "type") ||
                             kc__attr_is(root, "type", t.code == kDLInt ? "SIGNED" : "UNSIGNED");
    uint64_t probe;
    uint8_t zero[8] = {0};
    if (!ok || !kc__elem_key(t, zero, false, &probe)) return KC__KEY_NONE;
    *out_operand = k;
    return KC__KEY_PLAIN;
  }
  DLDataType t0 = types[0];
  bool is_float = t0.lanes == 1 && ((t0.code == kDLFloat && t0.bits >= 16) ||
                                    (t0.code == kDLBfloat && t0.bits == 16));
  if (!is_float) return KC__KEY_NONE;
  *out_operand = 0;
  /* JAX's, lowered: compare(canon(p0), canon(p1)), type=TOTALORDER */
  if (kc__attr_is(root, "type", "TOTALORDER") && kc__is_canon(r, a, 0) && kc__is_canon(r, b, 1)) {
    return KC__KEY_CANON;
  }
  /* and as XLA:CPU rewrites it: compare(key(canon(p0)), key(canon(p1))) */
  int32_t ia, ib;
  if ((!kc__instr_attr(root, "type") || kc__attr_is(root, "type", "SIGNED")) &&
      kc__is_total_key(r, a, t0.bits, &ia) && kc__is_total_key(r, b, t0.bits, &ib) &&
      kc__is_canon(r, ia, 0) &&
      kc__is_canon(r, ib, 1)) {
    return KC__KEY_CANON;
  }
  return KC__KEY_NONE;
}

/* ---- the plan --------------------------------------------------------------- */

typedef struct kc__sort_plan {
  size_t n;            /* operands */
  int64_t outer, len, inner; /* rows before, along and after the sorted dimension */
  size_t esize[KC__SORT_MAX_OPERANDS];
  DLDataType types[KC__SORT_MAX_OPERANDS];
  /* The key path, or KC__KEY_NONE for the comparator's computation. */
  kc__key_kind key;
  size_t key_operand;
  bool descending;
  kc_executable* comparator;
  /* topk */
  int64_t k;
} kc__sort_plan;

static const kc_shape* kc__leaf(const kc_shape* s, size_t i, size_t n) {
  return n == 1 && !kc_shape_is_tuple(s) ? s : kc_shape_get_element(s, i);
}

static kc_status* kc__sort_read(const kc_program* p, const kc__instr* in, kc__sort_plan* plan) {
  size_t n = in->num_operands;
  if (n > KC__SORT_MAX_OPERANDS) {
    return kc__instr_error(in, KC_UNIMPLEMENTED, "sort of %zu operands: at most %d are supported",
                           n, KC__SORT_MAX_OPERANDS);
  }
  plan->n = n;
  const kc_shape* first = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, first, "operand 0"));
  int32_t rank = kc_shape_get_rank(first);
  const int64_t* dims = kc_shape_get_dims(first);
  const int64_t* d;
  size_t nd;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "dimensions", false, &d, &nd));
  if (nd != 1) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute dimensions: expected one dimension, got %zu", nd);
  }
  if (d[0] < 0 || d[0] >= rank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute dimensions: expected a dimension of 0 to %d, got %lld",
                           rank - 1, (long long)d[0]);
  }
  if (dims[d[0]] > INT32_MAX) {
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "sort along a dimension of %lld: at most 2^31-1 elements are supported",
                           (long long)dims[d[0]]);
  }
  const kc_attr* stable = kc__instr_attr(in, "is_stable");
  if (stable && stable->type != KC_ATTR_BOOL) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "attribute is_stable: expected true or false");
  }
  plan->outer = plan->inner = 1;
  for (int32_t k = 0; k < rank; ++k) {
    if (k < d[0]) plan->outer *= dims[k];
    if (k > d[0]) plan->inner *= dims[k];
  }
  plan->len = dims[d[0]];
  bool tuple = kc_shape_is_tuple(in->shape);
  if ((n == 1 && tuple) || (n > 1 && (!tuple || kc_shape_get_tuple_size(in->shape) != n))) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "sort of %zu operand%s: expected %s result", n, n == 1 ? "" : "s",
                           n == 1 ? "an array" : "a tuple of one array per operand as its");
  }
  for (size_t i = 0; i < n; ++i) {
    const kc_shape* o = kc__instr_operand(p, in, i);
    char what[32], g[256], w[256];
    snprintf(what, sizeof what, "operand %zu", i);
    KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, what));
    if (kc_shape_get_rank(o) != rank ||
        memcmp(kc_shape_get_dims(o), dims, (size_t)rank * sizeof *dims) != 0) {
      kc_shape_format(o, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: expected the dims of operand 0, got %s",
                             what, g);
    }
    const kc_shape* r = kc__leaf(in->shape, i, n);
    if (!kc_shape_equal(r, o)) {
      kc_shape_format(o, w, sizeof w);
      kc_shape_format(r, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "result %zu: expected %s, got %s", i, w, g);
    }
    plan->types[i] = kc_shape_get_dtype(o);
    plan->esize[i] = kc_dtype_get_size(plan->types[i]);
  }
  /* The comparator: lhs and rhs of each operand, a pred[]. */
  const kc_program* cmp = in->computations[0];
  if (kc_program_get_parameter_count(cmp) != 2 * n) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "to_apply '%s': expected %zu scalar parameters (two per operand), "
                           "got %zu",
                           kc_program_get_name(cmp), 2 * n, kc_program_get_parameter_count(cmp));
  }
  for (size_t k = 0; k < 2 * n; ++k) {
    const kc_shape* got = kc_program_get_parameter_shape(cmp, k);
    DLDataType t = plan->types[k / 2];
    if (kc_shape_is_tuple(got) || kc_shape_get_rank(got) != 0 ||
        !kc_dtype_equal(kc_shape_get_dtype(got), t)) {
      char g[256], buf[32];
      kc_shape_format(got, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "to_apply '%s': parameter %zu: expected %s[], got %s",
                             kc_program_get_name(cmp), k, kc__instr_dtype_text(t, buf, sizeof buf),
                             g);
    }
  }
  const kc_shape* rr = kc_program_get_result_shape(cmp);
  if (kc_shape_is_tuple(rr) || kc_shape_get_rank(rr) != 0 ||
      kc_shape_get_dtype(rr).code != kDLBool) {
    char g[256];
    kc_shape_format(rr, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "to_apply '%s': expected a pred[] result, got %s",
                           kc_program_get_name(cmp), g);
  }
  plan->key = kc__match_comparator(cmp, n, plan->types, &plan->key_operand, &plan->descending);
  return NULL;
}

static kc_status* kc__sort_verify(const kc_program* p, const kc__instr* in) {
  kc__sort_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__sort_read(p, in, plan);
  kc__free(plan);
  return st;
}

static void kc__sort_plan_free(void* thing) {
  kc__sort_plan* plan = thing;
  kc_executable_destroy(plan->comparator);
  kc__free(plan);
}

static kc_status* kc__sort_prepare(const kc_program* p, const kc__instr* in,
                                   const kc__prepare_ctx* ctx, const void** out) {
  kc__sort_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__sort_read(p, in, plan);
  if (!st && plan->key == KC__KEY_NONE) {
    st = kc__prepare_compile(ctx, in->computations[0], &plan->comparator);
  }
  if (st) {
    kc__sort_plan_free(plan);
    return st;
  }
  KC_RETURN_IF_ERROR(kc__executable_own_state(ctx->exe, plan, kc__sort_plan_free));
  *out = plan;
  return NULL;
}

/* ---- sorting a row ---------------------------------------------------------- */

/* What one comparison needs: keys, or the comparator and the row. */
typedef struct kc__row_cmp {
  const kc__sort_plan* plan;
  const uint64_t* keys; /* by index along the row */
  bool descending;
  /* The comparator's path. */
  const char* base[KC__SORT_MAX_OPERANDS]; /* the row's first element per operand */
  int64_t step;                            /* elements between neighbours in the row */
  DLTensor* args;                          /* 2n scalar tensors */
  const DLTensor** arg_ptrs;
  DLTensor* result;
  kc_status* st;
} kc__row_cmp;

/* Whether element i goes before element j (strictly). */
static bool kc__row_less(kc__row_cmp* c, int32_t i, int32_t j) {
  if (c->keys) return c->descending ? c->keys[i] > c->keys[j] : c->keys[i] < c->keys[j];
  if (c->st) return false;
  const kc__sort_plan* plan = c->plan;
  for (size_t k = 0; k < plan->n; ++k) {
    size_t off = (size_t)c->step * plan->esize[k];
    c->args[2 * k].data = (void*)(uintptr_t)(c->base[k] + (size_t)i * off);
    c->args[2 * k + 1].data = (void*)(uintptr_t)(c->base[k] + (size_t)j * off);
  }
  const DLTensor* outs[1] = {c->result};
  c->st = kc_executable_execute_into(plan->comparator, c->arg_ptrs, 2 * plan->n, NULL, outs, 1);
  return !c->st && *(const uint8_t*)c->result->data != 0;
}

/* A stable bottom-up merge sort of idx[0..n) (tmp: n more). */
static void kc__merge_sort(kc__row_cmp* c, int32_t* idx, int32_t* tmp, int64_t n) {
  int32_t* src = idx;
  int32_t* dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) {
        /* Take from the right only when it is strictly less. */
        dst[o++] = kc__row_less(c, src[b], src[a]) ? src[b++] : src[a++];
      }
      while (a < mid) dst[o++] = src[a++];
      while (b < hi) dst[o++] = src[b++];
    }
    int32_t* t = src;
    src = dst;
    dst = t;
  }
  if (src != idx) memcpy(idx, src, (size_t)n * sizeof *idx);
}

/* The keys of row (o, i) of operand `k` into keys[0..len). */
static void kc__row_keys(const kc__sort_plan* plan, size_t k, const char* x, int64_t o, int64_t i,
                         bool canon, uint64_t* keys) {
  size_t es = plan->esize[k];
  for (int64_t j = 0; j < plan->len; ++j) {
    const char* e = x + (size_t)((o * plan->len + j) * plan->inner + i) * es;
    kc__elem_key(plan->types[k], e, canon, &keys[j]);
  }
}

/* Rows [begin, end) of a sort (row r is (r / inner, r % inner)), with
 * buffers of their own; the comparator's status, or RESOURCE_EXHAUSTED. */
static kc_status* kc__sort_rows(const kc__sort_plan* plan, void* out, const void* const* ins,
                                int64_t begin, int64_t end) {
  size_t n = plan->n;
  int64_t len = plan->len;
  int32_t* idx = kc__malloc((size_t)len * 2 * sizeof *idx);
  uint64_t* keys = plan->key ? kc__malloc((size_t)len * sizeof *keys) : NULL;
  if (!idx || (plan->key && !keys)) {
    kc__free(idx);
    kc__free(keys);
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "sort: out of memory for a row of %lld",
                            (long long)len);
  }
  DLTensor args[2 * KC__SORT_MAX_OPERANDS];
  const DLTensor* arg_ptrs[2 * KC__SORT_MAX_OPERANDS];
  uint8_t flag = 0;
  DLTensor result;
  memset(&result, 0, sizeof result);
  result.device.device_type = kDLCPU;
  result.dtype = (DLDataType){kDLBool, 8, 1};
  result.data = &flag;
  for (size_t k = 0; k < 2 * n; ++k) {
    memset(&args[k], 0, sizeof args[k]);
    args[k].device.device_type = kDLCPU;
    args[k].dtype = plan->types[k / 2];
    arg_ptrs[k] = &args[k];
  }
  kc__row_cmp c = {.plan = plan, .keys = keys, .descending = plan->descending,
                   .step = plan->inner, .args = args, .arg_ptrs = arg_ptrs, .result = &result};
  for (int64_t r = begin; r < end && !c.st; ++r) {
    int64_t o = r / plan->inner, i = r % plan->inner;
    for (int64_t j = 0; j < len; ++j) idx[j] = (int32_t)j;
    if (keys) {
      kc__row_keys(plan, plan->key_operand, ins[plan->key_operand], o, i,
                   plan->key == KC__KEY_CANON, keys);
    } else {
      for (size_t k = 0; k < n; ++k) {
        c.base[k] = (const char*)ins[k] + (size_t)(o * len * plan->inner + i) * plan->esize[k];
      }
    }
    kc__merge_sort(&c, idx, idx + len, len);
    for (size_t k = 0; k < n && !c.st; ++k) {
      size_t es = plan->esize[k];
      const char* x = ins[k];
      char* rk = n == 1 ? out : ((void* const*)out)[k];
      for (int64_t j = 0; j < len; ++j) {
        size_t to = (size_t)((o * len + j) * plan->inner + i) * es;
        size_t from = (size_t)((o * len + idx[j]) * plan->inner + i) * es;
        memcpy(rk + to, x + from, es);
      }
    }
  }
  kc__free(idx);
  kc__free(keys);
  return c.st ? kc_status_add_context(c.st, "in the comparator") : NULL;
}

/* Rows shared over the pool, when the comparator is one of the key
 * comparisons (a comparator computation runs on the caller alone). */
typedef struct kc__sort_job {
  const kc__sort_plan* plan;
  void* out;
  const void* const* ins;
  int failed; /* out of memory in some range */
} kc__sort_job;

static void kc__sort_range(void* p, int64_t begin, int64_t end) {
  kc__sort_job* job = p;
  kc_status* st = kc__sort_rows(job->plan, job->out, job->ins, begin, end);
  if (st) {
    kc_status_destroy(st);
    __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
  }
}

static kc_status* kc__sort_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                  const void* const* ins) {
  const kc__sort_plan* plan = ctx->data;
  int64_t len = plan->len, rows = plan->outer * plan->inner;
  if (len == 0 || rows == 0) return NULL;
  if (!plan->key) return kc__sort_rows(plan, out, ins, 0, rows);
  kc__sort_job job = {.plan = plan, .out = out, .ins = ins};
  /* About 4 ns a comparison and move of the merge sort's log2(len) passes,
   * and 2 ns an element for the keys. */
  double per_row = (double)len * (2.0 + 4.0 * log2((double)len + 1));
  kc__split_items(ctx->pool, rows, per_row, kc__sort_range, &job);
  if (job.failed) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "sort: out of memory for a row of %lld",
                            (long long)len);
  }
  return NULL;
}

/* ---- topk ------------------------------------------------------------------- */

static kc_status* kc__topk_read(const kc_program* p, const kc__instr* in, kc__sort_plan* plan) {
  const kc_shape* x = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, x, "operand 0"));
  int32_t rank = kc_shape_get_rank(x);
  DLDataType t = kc_shape_get_dtype(x);
  char buf[32], g[256], w[256];
  uint64_t probe;
  uint8_t zero[8] = {0};
  if (!kc__elem_key(t, zero, false, &probe) || t.code == kDLBool) {
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "topk of %s: expected an integer or float operand",
                           kc__instr_dtype_text(t, buf, sizeof buf));
  }
  if (rank < 1) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "operand 0: expected an array of rank 1 or more, got a scalar");
  }
  int64_t k;
  KC_RETURN_IF_ERROR(kc__instr_attr_int(in, "k", &k));
  const int64_t* dims = kc_shape_get_dims(x);
  if (k < 0 || k > dims[rank - 1]) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute k: expected 0 to %lld (the last dimension), got %lld",
                           (long long)dims[rank - 1], (long long)k);
  }
  const kc_attr* largest = kc__instr_attr(in, "largest");
  if (largest && largest->type != KC_ATTR_BOOL) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "attribute largest: expected true or false");
  }
  plan->descending = !largest || largest->v.b;
  plan->k = k;
  plan->n = 1;
  plan->types[0] = t;
  plan->esize[0] = kc_dtype_get_size(t);
  plan->outer = 1;
  for (int32_t d = 0; d < rank - 1; ++d) plan->outer *= dims[d];
  plan->len = dims[rank - 1];
  plan->inner = 1;
  plan->key = KC__KEY_PLAIN;
  /* (values, indices): the operand's dims with k last; s32 indices. */
  int64_t rdims[KC_TENSOR_MAX_NDIM];
  memcpy(rdims, dims, (size_t)rank * sizeof *rdims);
  rdims[rank - 1] = k;
  kc_shape* leaves[2] = {NULL, NULL};
  kc_shape* want = NULL;
  kc_status* st = kc_shape_create_array(t, rdims, rank, &leaves[0]);
  if (!st) st = kc_shape_create_array((DLDataType){kDLInt, 32, 1}, rdims, rank, &leaves[1]);
  if (!st) st = kc_shape_create_tuple((const kc_shape* const*)leaves, 2, &want);
  kc_shape_destroy(leaves[0]);
  kc_shape_destroy(leaves[1]);
  if (st) return st;
  bool ok = kc_shape_equal(want, in->shape);
  kc_shape_format(want, w, sizeof w);
  kc_shape_destroy(want);
  if (!ok) {
    kc_shape_format(in->shape, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected a result of %s, got %s", w, g);
  }
  return NULL;
}

static kc_status* kc__topk_verify(const kc_program* p, const kc__instr* in) {
  kc__sort_plan plan;
  memset(&plan, 0, sizeof plan);
  return kc__topk_read(p, in, &plan);
}

static kc_status* kc__topk_prepare(const kc_program* p, const kc__instr* in,
                                   const kc__prepare_ctx* ctx, const void** out) {
  kc__sort_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  memset(plan, 0, sizeof *plan);
  KC_RETURN_IF_ERROR(kc__topk_read(p, in, plan));
  *out = plan;
  return NULL;
}

static kc_status* kc__topk_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                  const void* const* ins) {
  const kc__sort_plan* plan = ctx->data;
  int64_t len = plan->len, k = plan->k;
  if (len == 0 || k == 0 || plan->outer == 0) return NULL;
  int32_t* idx = kc__malloc((size_t)len * 2 * sizeof *idx);
  uint64_t* keys = kc__malloc((size_t)len * sizeof *keys);
  if (!idx || !keys) {
    kc__free(idx);
    kc__free(keys);
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "topk: out of memory for a row of %lld",
                            (long long)len);
  }
  kc__row_cmp c = {.plan = plan, .keys = keys, .descending = plan->descending};
  size_t es = plan->esize[0];
  const char* x = ins[0];
  char* values = ((void* const*)out)[0];
  int32_t* indices = ((void* const*)out)[1];
  for (int64_t o = 0; o < plan->outer; ++o) {
    for (int64_t j = 0; j < len; ++j) idx[j] = (int32_t)j;
    kc__row_keys(plan, 0, x, o, 0, false, keys);
    kc__merge_sort(&c, idx, idx + len, len);
    for (int64_t j = 0; j < k; ++j) {
      memcpy(values + (size_t)(o * k + j) * es, x + (size_t)(o * len + idx[j]) * es, es);
      indices[o * k + j] = idx[j];
    }
  }
  kc__free(idx);
  kc__free(keys);
  return NULL;
}

static const char* const kc__sort_attrs[] = {"dimensions", "is_stable", NULL};
static const char* const kc__sort_computations[] = {"to_apply", NULL};
static const char* const kc__topk_attrs[] = {"k", "largest", NULL};

const kc__instr_def kc__instr_sort[] = {
    {.op = KC_OP_SORT, .name = "sort", .min_operands = 1, .max_operands = -1,
     .num_computations = 1, .attrs = kc__sort_attrs, .computation_attrs = kc__sort_computations,
     .verify = kc__sort_verify, .prepare = kc__sort_prepare, .kernel = kc__sort_kernel},
    {.op = KC_OP_TOPK, .name = "topk", .min_operands = 1, .max_operands = 1,
     .num_computations = 0, .attrs = kc__topk_attrs, .verify = kc__topk_verify,
     .prepare = kc__topk_prepare, .kernel = kc__topk_kernel},
};
const size_t kc__instr_sort_count = KC__ARRAY_SIZE(kc__instr_sort);
