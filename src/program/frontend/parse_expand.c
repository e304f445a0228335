/* The instructions the parser builds from others, as the StableHLO reader
 * builds their StableHLO and CHLO forms: map (map.h), mulhi, ragged-dot,
 * a dot's algorithm and the complex forms of maximum, minimum, atan2, cbrt
 * and logistic (expr.h, shared with the reader), and scan (unrolled, as
 * the reader unrolls chlo.scan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/frontend/expr.h"
#include "program/frontend/map.h"
#include "program/frontend/parse_internal.h"
#include "program/instr/instr.h"

/* The I64 array attribute `name` of ins (none: empty). */
static void kc__ints(const kc__hlo_instr* ins, const char* name, const int64_t** v, size_t* n) {
  const kc_attr* attrs = (const kc_attr*)(const void*)ins->attrs.data;
  *v = NULL;
  *n = 0;
  for (size_t i = 0; i < ins->attrs.size / sizeof *attrs; ++i) {
    if (kc_sv_equal(attrs[i].name, kc_sv(name)) && attrs[i].type == KC_ATTR_ARRAY) {
      *v = attrs[i].v.array.data;
      *n = attrs[i].v.array.count;
    }
  }
}

/* The attribute `name` of ins, or NULL. */
static const kc_attr* kc__attr(const kc__hlo_instr* ins, const char* name) {
  const kc_attr* attrs = (const kc_attr*)(const void*)ins->attrs.data;
  for (size_t i = 0; i < ins->attrs.size / sizeof *attrs; ++i) {
    if (kc_sv_equal(attrs[i].name, kc_sv(name))) return &attrs[i];
  }
  return NULL;
}

/* A map: its computation (to_apply=) applied to whole arrays
 * (kc__build_map). */
static kc_status* kc__build_map_instr(kc__hlo_parser* p, kc__hlo_instr* ins, kc_string_view name,
                                      int32_t* out_id) {
  const kc__hlo_callee* callees = (const kc__hlo_callee*)(const void*)ins->callees.data;
  if (ins->callees.size != sizeof *callees) {
    return kc__missing_attr(p, ins, "to_apply=COMPUTATION");
  }
  if (!kc__attr(ins, "dimensions")) return kc__missing_attr(p, ins, "dimensions={...}");
  const int64_t* dims;
  size_t num_dims;
  kc__ints(ins, "dimensions", &dims, &num_dims);
  size_t n = kc__num_operands(p);
  const kc_shape** shapes = kc__arena_alloc(&p->tmp, (n ? n : 1) * sizeof *shapes);
  if (!shapes) return kc__parse_oom();
  for (size_t i = 0; i < n; ++i) shapes[i] = kc__operand_value(p, i)->shape;
  return kc__build_map(p->b, callees[0].program, kc__operand_ids(p), shapes, n, ins->shape, dims,
                       num_dims, name, out_id);
}

/* mulhi (XLA's HLO for chlo.mulhi): two integer operands of the result's
 * shape. */
static kc_status* kc__build_mulhi(kc__hlo_parser* p, kc__hlo_instr* ins, kc_string_view name,
                                  int32_t* out_id) {
  KC_RETURN_IF_ERROR(kc__expect_operand_count(p, ins, 2));
  char want[256], got[256];
  kc_shape_format(ins->shape, want, sizeof want);
  DLDataType dt = kc_shape_get_dtype(ins->shape);
  if (kc_shape_is_tuple(ins->shape) || (dt.code != kDLInt && dt.code != kDLUInt)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "mulhi: expected an integer result (s8..s64, u8..u64), got %s", want);
  }
  for (size_t i = 0; i < 2; ++i) {
    const kc_shape* s = kc__operand_value(p, i)->shape;
    if (!kc_shape_equal(s, ins->shape)) {
      kc_shape_format(s, got, sizeof got);
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "mulhi: operand %zu: expected the result's shape %s, got %s", i,
                              want, got);
    }
  }
  kc__expr e = {.b = p->b, .prefix = name, .what = "mulhi"};
  const int32_t* ids = kc__operand_ids(p);
  *out_id = kc__e_mulhi(&e, ids[0], ids[1], ins->shape);
  return e.st;
}

/* ragged-dot (XLA's HLO for chlo.ragged_dot): its first mode, a ragged
 * lhs row dimension (expr.h's kc__e_ragged_dot). */
static kc_status* kc__build_ragged_dot(kc__hlo_parser* p, kc__hlo_instr* ins, kc_string_view name,
                                       int32_t* out_id) {
  KC_RETURN_IF_ERROR(kc__expect_operand_count(p, ins, 3));
  kc__ragged_dot rd = {.result = ins->shape, .ragged = -1, .group = -1};
  size_t n_rb, n_rc, n_ragged, n_group;
  const int64_t *ragged, *group;
  kc__ints(ins, "lhs_batch_dims", &rd.lhs_batch, &rd.num_batch);
  kc__ints(ins, "rhs_batch_dims", &rd.rhs_batch, &n_rb);
  kc__ints(ins, "lhs_contracting_dims", &rd.lhs_contract, &rd.num_contract);
  kc__ints(ins, "rhs_contracting_dims", &rd.rhs_contract, &n_rc);
  kc__ints(ins, "lhs_ragged_dims", &ragged, &n_ragged);
  kc__ints(ins, "rhs_group_dims", &group, &n_group);
  if (n_rb != rd.num_batch || n_rc != rd.num_contract || n_ragged != 1 || n_group > 1) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "ragged-dot: expected as many lhs as rhs batch and contracting "
                            "dimensions, one lhs_ragged_dims and at most one rhs_group_dims");
  }
  rd.ragged = ragged[0];
  if (n_group) rd.group = group[0];
  const int32_t* ids = kc__operand_ids(p);
  rd.lhs = ids[0];
  rd.rhs = ids[1];
  rd.sizes = ids[2];
  rd.lhs_shape = kc__operand_value(p, 0)->shape;
  rd.rhs_shape = kc__operand_value(p, 1)->shape;
  rd.sizes_shape = kc__operand_value(p, 2)->shape;
  kc__expr e = {.b = p->b, .prefix = name, .what = "ragged"};
  *out_id = kc__e_ragged_dot(&e, &rd);
  return e.st ? kc_status_add_context(e.st, "ragged-dot") : NULL;
}

/* scan (XLA's HLO for chlo.scan): scan(inputs..., inits...),
 * dimensions={d}, num_carries=K, is_reverse=B, to_apply=F gives (outputs...,
 * carries...). Step t (from the last index down when is_reverse) calls F
 * with each input's slice at index t of d and the carries, and F gives
 * each output's slice at t and the new carries. Unrolled, F inlined once
 * per step, as the StableHLO reader unrolls chlo.scan; at most
 * KC__SCAN_MAX_STEPS steps. */
enum { KC__SCAN_MAX_STEPS = 4096, KC__SCAN_MAX_OPERANDS = 64 };

/* `shape` without dimension d, or with d of size 1 (`keep`). */
static kc_status* kc__drop_dim(const kc_shape* shape, int64_t d, bool keep, kc_shape** out) {
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t rank = 0;
  for (int32_t i = 0; i < kc_shape_get_rank(shape); ++i) {
    if (i != d) dims[rank++] = kc_shape_get_dims(shape)[i];
    else if (keep) dims[rank++] = 1;
  }
  return kc_shape_create_array(kc_shape_get_dtype(shape), dims, rank, out);
}

typedef struct kc__scan {
  size_t n_in, n_out, k;
  int64_t d, len;
  kc_shape* in_flat[KC__SCAN_MAX_OPERANDS];   /* a step's input slices */
  kc_shape* out_flat[KC__SCAN_MAX_OPERANDS];  /* a step's output slices */
  kc_shape* out_one[KC__SCAN_MAX_OPERANDS];   /* the same with d of size 1 */
  kc_shape* step;                             /* what F gives: (out slices..., carries...) */
} kc__scan;

static void kc__scan_free(kc__scan* sc) {
  for (size_t i = 0; i < KC__SCAN_MAX_OPERANDS; ++i) {
    kc_shape_destroy(sc->in_flat[i]);
    kc_shape_destroy(sc->out_flat[i]);
    kc_shape_destroy(sc->out_one[i]);
  }
  kc_shape_destroy(sc->step);
}

/* The operands and result against dimensions and num_carries. */
static kc_status* kc__scan_shapes(kc__hlo_parser* p, const kc__hlo_instr* ins, kc__scan* sc) {
  const int64_t* dims;
  size_t nd;
  kc__ints(ins, "dimensions", &dims, &nd);
  const kc_attr* carries = kc__attr(ins, "num_carries");
  size_t n_ops = kc__num_operands(p);
  const kc_shape* r = ins->shape;
  size_t n_res = kc_shape_is_tuple(r) ? kc_shape_get_tuple_size(r) : 0;
  if (nd != 1 || !carries || carries->v.i64 < 0 || (size_t)carries->v.i64 >= n_ops ||
      n_res < (size_t)carries->v.i64) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "scan: expected dimensions={d}, num_carries=K below the operand "
                            "count, and a tuple result of the outputs then K carries");
  }
  sc->k = (size_t)carries->v.i64;
  sc->d = dims[0];
  sc->n_in = n_ops - sc->k;
  sc->n_out = n_res - sc->k;
  if (sc->n_in > KC__SCAN_MAX_OPERANDS || sc->n_out > KC__SCAN_MAX_OPERANDS) {
    return kc_status_create(KC_INVALID_ARGUMENT, "scan: more than %d inputs or outputs",
                            KC__SCAN_MAX_OPERANDS);
  }
  sc->len = -1;
  for (size_t i = 0; i < sc->n_in + sc->n_out; ++i) {
    const kc_shape* x = i < sc->n_in ? kc__operand_value(p, i)->shape
                                     : kc_shape_get_element(r, i - sc->n_in);
    if (kc_shape_is_tuple(x) || sc->d < 0 || sc->d >= kc_shape_get_rank(x) ||
        (sc->len >= 0 && kc_shape_get_dims(x)[sc->d] != sc->len)) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "scan: %s %zu is not an array with dimension %lld of the "
                              "scan's length",
                              i < sc->n_in ? "input" : "output", i < sc->n_in ? i : i - sc->n_in,
                              (long long)sc->d);
    }
    if (sc->len < 0) sc->len = kc_shape_get_dims(x)[sc->d];
  }
  for (size_t c = 0; c < sc->k; ++c) {
    if (!kc_shape_equal(kc__operand_value(p, sc->n_in + c)->shape,
                        kc_shape_get_element(r, sc->n_out + c))) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "scan: carry %zu: its init and its result differ in shape", c);
    }
  }
  if (sc->len < 1 || sc->len > KC__SCAN_MAX_STEPS) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "scan: %lld steps; kcall unrolls scans of 1 to %d steps",
                            (long long)sc->len, KC__SCAN_MAX_STEPS);
  }
  const kc_shape* parts[2 * KC__SCAN_MAX_OPERANDS];
  for (size_t i = 0; i < sc->n_in; ++i) {
    KC_RETURN_IF_ERROR(kc__drop_dim(kc__operand_value(p, i)->shape, sc->d, false, &sc->in_flat[i]));
  }
  for (size_t i = 0; i < sc->n_out; ++i) {
    const kc_shape* y = kc_shape_get_element(r, i);
    KC_RETURN_IF_ERROR(kc__drop_dim(y, sc->d, false, &sc->out_flat[i]));
    KC_RETURN_IF_ERROR(kc__drop_dim(y, sc->d, true, &sc->out_one[i]));
    parts[i] = sc->out_flat[i];
  }
  for (size_t c = 0; c < sc->k; ++c) parts[sc->n_out + c] = kc_shape_get_element(r, sc->n_out + c);
  return kc_shape_create_tuple(parts, sc->n_out + sc->k, &sc->step);
}

/* slice [t, t + 1) of dimension d of x (shape s), then that dimension
 * dropped (flat). */
static int32_t kc__slice_step(kc__expr* e, int32_t x, const kc_shape* s, int64_t d, int64_t t,
                              const kc_shape* flat) {
  int32_t rank = kc_shape_get_rank(s);
  int64_t start[KC_TENSOR_MAX_NDIM], limit[KC_TENSOR_MAX_NDIM], stride[KC_TENSOR_MAX_NDIM];
  for (int32_t i = 0; i < rank; ++i) {
    start[i] = i == d ? t : 0;
    limit[i] = i == d ? t + 1 : kc_shape_get_dims(s)[i];
    stride[i] = 1;
  }
  kc_shape* one = NULL;
  if (!e->st) e->st = kc__drop_dim(s, d, true, &one);
  kc_attr a[3];
  memset(a, 0, sizeof a);
  const char* names[3] = {"start_indices", "limit_indices", "strides"};
  const int64_t* values[3] = {start, limit, stride};
  for (int i = 0; i < 3; ++i) {
    a[i].name = kc_sv(names[i]);
    a[i].type = KC_ATTR_ARRAY;
    a[i].elem_type = KC_ATTR_I64;
    a[i].v.array.data = values[i];
    a[i].v.array.count = (size_t)rank;
  }
  kc_attr_dict dict = {.count = 3, .entries = a};
  int32_t sliced = kc__e_add(e, KC_OP_SLICE, one, &x, 1, &dict);
  int32_t y = kc__e_add(e, KC_OP_RESHAPE, flat, &sliced, 1, NULL);
  kc_shape_destroy(one);
  return y;
}

static kc_status* kc__build_scan(kc__hlo_parser* p, kc__hlo_instr* ins, kc_string_view name,
                                 int32_t* out_id) {
  const kc__hlo_callee* callees = (const kc__hlo_callee*)(const void*)ins->callees.data;
  if (ins->callees.size != sizeof *callees) {
    return kc__missing_attr(p, ins, "to_apply=COMPUTATION");
  }
  const kc_attr* rev = kc__attr(ins, "is_reverse");
  bool reverse = rev && rev->v.b;
  kc__scan sc;
  memset(&sc, 0, sizeof sc);
  kc__expr e = {.b = p->b, .prefix = name, .what = "scan"};
  e.st = kc__scan_shapes(p, ins, &sc);
  const int32_t* ops = kc__operand_ids(p);
  size_t n_args = sc.n_in + sc.k;
  int32_t* slices = e.st ? NULL : kc__calloc((size_t)sc.len * (sc.n_out ? sc.n_out : 1), sizeof *slices);
  int32_t args[2 * KC__SCAN_MAX_OPERANDS];
  kc_shape* arg_shapes[2 * KC__SCAN_MAX_OPERANDS];
  if (!e.st && !slices) e.st = kc__parse_oom();
  for (size_t c = 0; !e.st && c < sc.k; ++c) args[sc.n_in + c] = ops[sc.n_in + c];
  for (size_t i = 0; i < n_args && !e.st; ++i) {
    arg_shapes[i] = i < sc.n_in ? sc.in_flat[i] : kc__operand_value(p, i)->shape;
  }
  for (int64_t step = 0; step < sc.len && !e.st; ++step) {
    int64_t t = reverse ? sc.len - 1 - step : step;
    for (size_t i = 0; i < sc.n_in; ++i) {
      args[i] = kc__slice_step(&e, ops[i], kc__operand_value(p, i)->shape, sc.d, t, sc.in_flat[i]);
    }
    char scope[320];
    snprintf(scope, sizeof scope, "%.*s/step%lld", (int)name.size, name.data, (long long)t);
    int32_t root = -1;
    if (!e.st) {
      e.st = kc__inline_computation(p, ins, &callees[0].name, args, arg_shapes, n_args,
                                    kc_sv(scope), sc.step, &root);
    }
    if (!e.st) e.st = kc__unroll_check(p->b, "scan");
    for (size_t j = 0; j < sc.n_out + sc.k && !e.st; ++j) {
      kc_string_view gname;
      int32_t v = -1;
      e.st = kc__e_name(&e, &gname);
      if (!e.st) e.st = kc_program_builder_add_get_tuple_element(p->b, root, (int64_t)j, gname, &v);
      if (j < sc.n_out) {
        slices[(size_t)t * sc.n_out + j] = kc__e_add(&e, KC_OP_RESHAPE, sc.out_one[j], &v, 1, NULL);
      } else {
        args[sc.n_in + j - sc.n_out] = v;
      }
    }
  }
  /* Each output: its steps' slices in index order, then the carries. */
  int32_t results[2 * KC__SCAN_MAX_OPERANDS];
  int32_t* pieces = e.st ? NULL : kc__calloc((size_t)sc.len, sizeof *pieces);
  if (!e.st && !pieces) e.st = kc__parse_oom();
  for (size_t j = 0; j < sc.n_out && !e.st; ++j) {
    for (int64_t t = 0; t < sc.len; ++t) pieces[t] = slices[(size_t)t * sc.n_out + j];
    kc_attr a;
    memset(&a, 0, sizeof a);
    a.name = KC_SV_LIT("dimensions");
    a.type = KC_ATTR_ARRAY;
    a.elem_type = KC_ATTR_I64;
    a.v.array.data = &sc.d;
    a.v.array.count = 1;
    kc_attr_dict dict = {.count = 1, .entries = &a};
    results[j] = kc__e_add(&e, KC_OP_CONCATENATE, kc_shape_get_element(ins->shape, j), pieces,
                           (size_t)sc.len, &dict);
  }
  for (size_t c = 0; c < sc.k && !e.st; ++c) results[sc.n_out + c] = args[sc.n_in + c];
  if (!e.st) {
    e.st = kc_program_builder_add_tuple(p->b, results, sc.n_out + sc.k, name, out_id);
  }
  kc__free(pieces);
  kc__free(slices);
  kc__scan_free(&sc);
  return e.st ? kc_status_add_context(e.st, "scan") : NULL;
}

kc_status* kc__apply_dot_algorithm(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc_string_view a = ins->algorithm.text;
  /* dot_L_R_A: three words after "dot"; anything after them (_x3, _x6,
   * _fast_accum) asks for more than one product per pair of elements, or
   * for an inexact accumulation. */
  kc_string_view part[8];
  size_t n = 0;
  for (size_t i = 0, start = 0; i <= a.size && n < 8; ++i) {
    if (i == a.size || a.data[i] == '_') {
      part[n++] = (kc_string_view){a.data + start, i - start};
      start = i + 1;
    }
  }
  int eb[2], mb[2];
  bool ok = n == 4 && kc_sv_equal(part[0], KC_SV_LIT("dot")) &&
            kc__precision_bits(part[1], &eb[0], &mb[0]) &&
            kc__precision_bits(part[2], &eb[1], &mb[1]);
  const char* acc = kc__dot_accumulation(kc_shape_get_dtype(ins->shape));
  if (ok && acc && !kc_sv_equal(part[3], kc_sv(acc))) {
    return kc__lex_fail(&p->lx, &ins->algorithm,
                        "dot %s: algorithm %s: accumulation in %.*s is not supported for a "
                        "result of this type (kcall accumulates it in %s)",
                        KC__Q(ins->name_tok.text), KC__Q(a), (int)part[3].size, part[3].data,
                        acc);
  }
  if (!ok || kc__num_operands(p) != 2) {
    return kc__lex_fail(&p->lx, &ins->algorithm,
                        "dot %s: algorithm %s is not supported (kcall honours "
                        "dot_L_R_A with L and R each tf32, bf16, f16, f32 or f64: one product "
                        "per pair of elements, operands rounded to L and R)",
                        KC__Q(ins->name_tok.text), KC__Q(a));
  }
  kc_string_view name = ins->name_tok.text;
  KC_RETURN_IF_ERROR(kc__scoped_name(p, &name));
  int32_t* ids = (int32_t*)(void*)p->operands.data;
  kc__expr e = {.b = p->b, .prefix = name, .what = "precision"};
  for (int side = 0; side < 2; ++side) {
    ids[side] = kc__e_round_to(&e, ids[side], kc__operand_value(p, (size_t)side)->shape,
                               eb[side], mb[side]);
  }
  return e.st;
}

kc_status* kc__build_expanded(kc__hlo_parser* p, kc__hlo_instr* ins, int32_t* out_id) {
  kc_string_view name = ins->name_tok.text;
  kc_status* st = kc__scoped_name(p, &name);
  if (!st && !strcmp(ins->op->name, "map")) st = kc__build_map_instr(p, ins, name, out_id);
  if (!st && !strcmp(ins->op->name, "mulhi")) st = kc__build_mulhi(p, ins, name, out_id);
  if (!st && !strcmp(ins->op->name, "ragged-dot")) {
    st = kc__build_ragged_dot(p, ins, name, out_id);
  }
  if (!st && !strcmp(ins->op->name, "scan")) st = kc__build_scan(p, ins, name, out_id);
  if (st) {
    return kc_status_add_context(st, "line %d, column %d: instruction %s", ins->name_tok.line,
                                 ins->name_tok.column, KC__Q(ins->name_tok.text));
  }
  return NULL;
}

bool kc__is_complex_form(const kc__hlo_parser* p, const kc__hlo_instr* ins) {
  size_t n = kc__num_operands(p);
  if (n == 0 || ins->op->op == KC__OP_NONE || kc_shape_is_tuple(ins->shape)) return false;
  const kc_shape* a = kc__operand_value(p, 0)->shape;
  if (kc_shape_is_tuple(a) || !kc__e_is_complex_form(ins->op->op, kc_shape_get_dtype(a))) {
    return false;
  }
  /* Anything else about the operands is left to compile, which names it. */
  size_t want = ins->op->op == KC_OP_MAXIMUM || ins->op->op == KC_OP_MINIMUM ||
                        ins->op->op == KC_OP_ATAN2
                    ? 2
                    : 1;
  for (size_t i = 0; i < n; ++i) {
    if (!kc_shape_equal(kc__operand_value(p, i)->shape, ins->shape)) return false;
  }
  return n == want;
}

kc_status* kc__build_complex_form(kc__hlo_parser* p, kc__hlo_instr* ins, kc_string_view name,
                                  int32_t* out_id) {
  kc__expr e = {.b = p->b, .prefix = name, .what = ins->op->name};
  *out_id = kc__e_complex(&e, ins->op->op, kc__operand_ids(p), ins->shape);
  return e.st;
}
