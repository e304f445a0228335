/* What each StableHLO operation computes, as the instructions of kcall's
 * program representation (the HLO instruction table's, with HLO's
 * attribute names), built through the program builder. One rule per
 * operation; an operation without one is refused, naming it. This file:
 * the shared helpers, the ops without regions, the table and
 * kc__shlo_lower (lower_internal.h says where the others are). */
#include <math.h>
#include <stdio.h>

#include "program/instr/instr.h"
#include "program/frontend/parse_internal.h"
#include "program/frontend/stablehlo/lower_internal.h"


kc_status* kc__shlo_attrs_ints(kc__shlo_scope* s, kc__shlo_attrs* at, const char* name,
                                 const int64_t* v, size_t n) {
  if (at->n == KC__ARRAY_SIZE(at->a)) {
    at->full = true;
    return kc_status_create(KC_INTERNAL, "too many attributes");
  }
  kc_attr* a = &at->a[at->n++];
  memset(a, 0, sizeof *a);
  a->name = kc_sv(name);
  a->type = KC_ATTR_ARRAY;
  a->elem_type = KC_ATTR_I64;
  a->v.array.data = kc__arena_dup(&s->m->arena, v, n * sizeof *v);
  a->v.array.count = n;
  return a->v.array.data ? NULL : kc__parse_oom();
}

/* The next attribute. The rules give at most a dozen, far below the
 * capacity; past it, `full` is set, and kc__shlo_emit refuses the op. */
static kc_attr* kc__attrs_next(kc__shlo_attrs* at, const char* name, int32_t type) {
  if (at->n == KC__ARRAY_SIZE(at->a)) {
    at->full = true;
    return &at->spare;
  }
  kc_attr* a = &at->a[at->n++];
  memset(a, 0, sizeof *a);
  a->name = kc_sv(name);
  a->type = type;
  return a;
}

void kc__shlo_attrs_int(kc__shlo_attrs* at, const char* name, int64_t v) {
  kc__attrs_next(at, name, KC_ATTR_I64)->v.i64 = v;
}

void kc__shlo_attrs_bool(kc__shlo_attrs* at, const char* name, bool v) {
  kc__attrs_next(at, name, KC_ATTR_BOOL)->v.b = v;
}

void kc__shlo_attrs_str(kc__shlo_attrs* at, const char* name, kc_string_view v) {
  kc__attrs_next(at, name, KC_ATTR_STRING)->v.str = v;
}

/* The first of two spellings of an attribute (pretty, generic) op has. */
const kc__shlo_item* kc__shlo_either(const kc__shlo_op* op, const char* a, const char* b) {
  const kc__shlo_item* it = kc__shlo_attr(op, a);
  return it ? it : (b ? kc__shlo_attr(op, b) : NULL);
}

kc_status* kc__shlo_missing(const kc__shlo_op* op, const char* what) {
  return kc__shlo_fail(&op->at, "%.*s: expected attribute %s, got none", (int)op->name.size,
                       op->name.data, what);
}

/* An integer-list attribute copied under HLO's name `hlo` (when given;
 * required when `required`). */
kc_status* kc__shlo_copy_ints(kc__shlo_scope* s, const kc__shlo_op* op, kc__shlo_attrs* at,
                                const char* pretty, const char* generic, const char* hlo,
                                bool required) {
  const kc__shlo_item* it = kc__shlo_either(op, pretty, generic);
  if (!it) return required ? kc__shlo_missing(op, pretty) : NULL;
  int64_t v[KC_TENSOR_MAX_NDIM * 2];
  size_t n;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &it->at, hlo, v, KC__ARRAY_SIZE(v), &n));
  return kc__shlo_attrs_ints(s, at, hlo, v, n);
}

/* The instruction ids of op's operands, into ids. */
kc_status* kc__shlo_operand_ids(kc__shlo_scope* s, const kc__shlo_op* op, size_t from,
                                  size_t count, kc__buf* ids) {
  for (size_t i = from; i < from + count; ++i) {
    int32_t id = kc__shlo_operand(s, op, i)->id;
    if (!kc__buf_append(ids, &id, sizeof id)) return kc__parse_oom();
  }
  return NULL;
}

/* op's result: its one type, or a tuple of them (owned by the module). */
kc_status* kc__shlo_result_shape(kc__shlo_scope* s, const kc__shlo_op* op, bool* tuple,
                                   const kc_shape** out) {
  size_t n = kc__shlo_num_result_types(op);
  if (op->num_results > 1 && (int64_t)n != op->num_results) {
    return kc__shlo_fail(&op->at, "%.*s: %lld results named, %zu types given", (int)op->name.size,
                         op->name.data, (long long)op->num_results, n);
  }
  *tuple = n != 1;
  if (n == 1) {
    *out = kc__shlo_result_type(op, 0);
    return NULL;
  }
  kc_shape* t = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_tuple((const kc_shape* const*)(const void*)op->result_types.data, n, &t));
  if (!kc__buf_append(&s->m->shapes, &t, sizeof t)) {
    kc_shape_destroy(t);
    return kc__parse_oom();
  }
  *out = t;
  return NULL;
}

/* Adds instruction `opcode` with operands `ids`, attributes and called
 * programs (released here), of op's result shape, and binds op's results. */
kc_status* kc__shlo_emit(kc__shlo_scope* s, const kc__shlo_op* op, int32_t opcode,
                           const kc__buf* ids, const kc__shlo_attrs* attrs, kc_program** programs,
                           size_t num_programs) {
  bool tuple = false;
  const kc_shape* shape = NULL;
  kc_string_view name;
  kc_status* st = attrs && attrs->full
                      ? kc_status_create(KC_INTERNAL, "%.*s: more attributes than kcall holds",
                                         (int)op->name.size, op->name.data)
                      : kc__shlo_result_shape(s, op, &tuple, &shape);
  if (!st) st = kc__shlo_instr_name(s, op, tuple ? "tuple" : NULL, &name);
  const kc__instr_def* def = kc__instr_def_find(opcode);
  int32_t id = -1;
  const int32_t* ops = (const int32_t*)(const void*)ids->data;
  size_t n = ids->size / sizeof(int32_t);
  if (!st && (def->kind == KC__INSTR_ELEMENTWISE || def->kind == KC__INSTR_RESHAPE)) {
    st = kc_program_builder_add_op(s->b, (kc_opcode)opcode, shape, ops, n, name, &id);
  } else if (!st) {
    kc_attr_dict dict = {.count = attrs ? attrs->n : 0, .entries = attrs ? attrs->a : NULL};
    kc_instruction_desc d = {.struct_size = sizeof d,
                             .op = opcode,
                             .result_shape = shape,
                             .operands = ops,
                             .num_operands = n,
                             .attrs = dict.count ? &dict : NULL,
                             .computations = programs,
                             .num_computations = num_programs};
    st = kc_program_builder_add_instruction(s->b, &d, name, &id);
  }
  for (size_t i = 0; i < num_programs; ++i) kc_program_destroy(programs[i]);
  if (!st) st = kc_program_builder_set_location(s->b, id, op->at.line, op->at.column);
  if (!st) st = kc__shlo_bind_results(s, op, id, tuple);
  return st;
}

/* ---- rules ---------------------------------------------------------------- */


/* Every operand, no attributes. */
kc_status* kc__shlo_lower_plain(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__buf ids = {0};
  kc_status* st = kc__shlo_operand_ids(s, op, 0, kc__shlo_num_operands(op), &ids);
  if (!st) st = kc__shlo_emit(s, op, r->opcode, &ids, NULL, NULL, 0);
  kc__buf_free(&ids);
  return st;
}

/* The first n operands, attributes and called programs (released here). */
kc_status* kc__shlo_lower_with_n(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r,
                                   size_t n, const kc__shlo_attrs* attrs, kc_program** programs,
                                   size_t np) {
  kc__buf ids = {0};
  kc_status* st = n > kc__shlo_num_operands(op)
                      ? kc__shlo_fail(&op->at, "%.*s: expected %zu operands", (int)op->name.size,
                                      op->name.data, n)
                      : kc__shlo_operand_ids(s, op, 0, n, &ids);
  if (!st) {
    st = kc__shlo_emit(s, op, r->opcode, &ids, attrs, programs, np);
  } else {
    for (size_t i = 0; i < np; ++i) kc_program_destroy(programs[i]);
  }
  kc__buf_free(&ids);
  return st;
}

/* Every operand, the attributes and called programs (released here). */
kc_status* kc__shlo_lower_with(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r,
                                 const kc__shlo_attrs* attrs, kc_program** programs, size_t np) {
  kc__buf ids = {0};
  kc_status* st = kc__shlo_operand_ids(s, op, 0, kc__shlo_num_operands(op), &ids);
  if (!st) {
    st = kc__shlo_emit(s, op, r->opcode, &ids, attrs, programs, np);
  } else {
    for (size_t i = 0; i < np; ++i) kc_program_destroy(programs[i]);
  }
  kc__buf_free(&ids);
  return st;
}

/* A small integer or pred constant's elements, recorded as known (what
 * shape-polymorphic modules compute shapes from). */
static kc_status* kc__constant_known(kc__shlo_scope* s, const kc__shlo_op* op,
                                     const kc_shape* shape, const void* data) {
  DLDataType dt = kc_shape_get_dtype(shape);
  size_t width = dt.code == kDLBool ? 1 : dt.bits / 8u;
  size_t n = kc_shape_get_byte_size(shape) / (width ? width : 1);
  if (op->result.kind == KC__TOK_END || n > 64 ||
      !(dt.code == kDLInt || dt.code == kDLUInt || dt.code == kDLBool)) {
    return NULL;
  }
  int64_t v[64];
  const unsigned char* p = data;
  for (size_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    memcpy(&bits, p + i * width, width);
    if (dt.code == kDLInt && width < 8 && (bits >> (8 * width - 1) & 1)) {
      bits |= ~(uint64_t)0 << (8 * width); /* sign-extended */
    }
    v[i] = (int64_t)bits;
  }
  return kc__shlo_set_known(s, op->result.text, v, n);
}

static kc_status* kc__lower_constant(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  const kc__shlo_item* v = kc__shlo_word(op, 0);
  if (!v) v = kc__shlo_attr(op, "value");
  if (!v) return kc__shlo_missing(op, "value (dense<...>)");
  if (kc__shlo_num_result_types(op) != 1) return kc__shlo_fail(&op->at, "constant: expected one result type");
  const kc_shape* shape = kc__shlo_result_type(op, 0);
  void* data = NULL;
  size_t size = 0;
  KC_RETURN_IF_ERROR(kc__shlo_dense(s->m, &v->at, shape, &data, &size));
  KC_RETURN_IF_ERROR(kc__shlo_narrow_constant(s->m, op, shape, data, size));
  kc_string_view name;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, NULL, &name));
  int32_t id;
  KC_RETURN_IF_ERROR(kc_program_builder_add_constant(s->b, shape, data, size, name, &id));
  KC_RETURN_IF_ERROR(kc__shlo_bind_results(s, op, id, false));
  kc__shlo_value* bound = op->result.kind == KC__TOK_END ? NULL
                                                         : kc__shlo_lookup(s, op->result.text);
  if (bound) bound->constant = data;
  return kc__constant_known(s, op, shape, data);
}

static kc_status* kc__lower_broadcast(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  const kc__shlo_item* it = kc__shlo_either(op, "dims", "broadcast_dimensions");
  if (!it) return kc__shlo_missing(op, "dims");
  int64_t v[KC_TENSOR_MAX_NDIM];
  size_t n;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &it->at, "dims", v, KC_TENSOR_MAX_NDIM, &n));
  /* (dynamic_broadcast_in_dim's second operand is the result's shape,
   * already its type's; which dimensions expand is a hint.) */
  kc__shlo_attr(op, "known_expanding_dimensions");
  kc__shlo_attr(op, "known_nonexpanding_dimensions");
  if (kc__shlo_num_operands(op) < 1 || kc__shlo_num_result_types(op) != 1) {
    return kc__shlo_fail(&op->at, "broadcast_in_dim: expected an operand and one result");
  }
  const kc__shlo_value* x = kc__shlo_operand(s, op, 0);
  const kc_shape* result = kc__shlo_result_type(op, 0);
  int32_t rank = kc_shape_get_rank(x->shape);
  if ((int32_t)n != rank || kc_shape_is_tuple(result)) {
    return kc__shlo_fail(&op->at, "broadcast_in_dim: expected a dim per operand dimension");
  }
  /* StableHLO also stretches operand dimensions of size 1; HLO's
   * broadcast does not, so those go first, by a reshape. */
  int64_t kept[KC_TENSOR_MAX_NDIM], keep_dims[KC_TENSOR_MAX_NDIM];
  size_t nk = 0;
  for (int32_t i = 0; i < rank; ++i) {
    int64_t d = v[i];
    bool stretched = d >= 0 && d < kc_shape_get_rank(result) &&
                     kc_shape_get_dims(x->shape)[i] == 1 && kc_shape_get_dims(result)[d] != 1;
    if (stretched) continue;
    kept[nk] = kc_shape_get_dims(x->shape)[i];
    keep_dims[nk++] = d;
  }
  int32_t from = x->id;
  if (nk != n) {
    kc_shape* squeezed = NULL;
    kc_string_view rname;
    KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, "reshape", &rname));
    KC_RETURN_IF_ERROR(kc_shape_create_array(kc_shape_get_dtype(x->shape), kept, (int32_t)nk, &squeezed));
    kc_status* st = kc_program_builder_add_op(s->b, KC_OP_RESHAPE, squeezed, &x->id, 1, rname, &from);
    kc_shape_destroy(squeezed);
    KC_RETURN_IF_ERROR(st);
  }
  kc_string_view name;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, NULL, &name));
  int32_t id;
  KC_RETURN_IF_ERROR(kc_program_builder_add_broadcast(s->b, result, from, keep_dims, nk, name, &id));
  KC_RETURN_IF_ERROR(kc_program_builder_set_location(s->b, id, op->at.line, op->at.column));
  return kc__shlo_bind_results(s, op, id, false);
}

/* transpose, reverse: dims -> dimensions. */
static kc_status* kc__lower_dims(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, "dims",
                                   r->opcode == KC_OP_TRANSPOSE ? "permutation" : "dimensions",
                                   "dimensions", true));
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_concatenate(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, "dim", "dimension", "dimensions", true));
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_iota(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  const kc__shlo_item* it = kc__shlo_either(op, "dim", "iota_dimension");
  if (!it) return kc__shlo_missing(op, "dim");
  int64_t d;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &it->at, "dim", &d));
  kc__shlo_attrs at = {.n = 0};
  kc__shlo_attrs_int(&at, "iota_dimension", d);
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_compare(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  const kc__shlo_item* dir = kc__shlo_attr(op, "comparison_direction");
  const kc__shlo_item* type = kc__shlo_attr(op, "compare_type");
  if (!dir) dir = kc__shlo_word(op, 0);
  if (!type && kc__shlo_word(op, 1)) type = kc__shlo_word(op, 1);
  if (!dir) return kc__shlo_missing(op, "a comparison direction (EQ, LT, ...)");
  kc__shlo_attrs at = {.n = 0};
  kc_string_view d, t;
  KC_RETURN_IF_ERROR(kc__shlo_enum(s->m, &dir->at, "the comparison direction", &d));
  kc__shlo_attrs_str(&at, "direction", d);
  if (type) {
    KC_RETURN_IF_ERROR(kc__shlo_enum(s->m, &type->at, "the comparison type", &t));
    if (!kc_sv_equal(t, KC_SV_LIT("NOTYPE"))) kc__shlo_attrs_str(&at, "type", t);
  }
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

/* "[1:3, 0:6:2]" */
static kc_status* kc__slice_text(const kc__lexer* at, int64_t parts[3][KC_TENSOR_MAX_NDIM],
                                 size_t* rank) {
  kc__lexer lx = *at;
  *rank = 0;
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '['));
  for (bool more = kc__lex_list_begin(&lx, ']'); more;) {
    if (*rank == KC_TENSOR_MAX_NDIM) return kc__lex_fail(&lx, &lx.tok, "too many dimensions");
    KC_RETURN_IF_ERROR(kc__lex_int(&lx, "a start index", INT64_MIN, INT64_MAX, &parts[0][*rank]));
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, ':'));
    KC_RETURN_IF_ERROR(kc__lex_int(&lx, "a limit index", INT64_MIN, INT64_MAX, &parts[1][*rank]));
    parts[2][*rank] = 1;
    if (kc__tok_is_punct(&lx.tok, ':')) {
      kc__lex_next(&lx);
      KC_RETURN_IF_ERROR(kc__lex_int(&lx, "a stride", INT64_MIN, INT64_MAX, &parts[2][*rank]));
    }
    (*rank)++;
    KC_RETURN_IF_ERROR(kc__lex_list_next(&lx, ']', &more));
  }
  return NULL;
}

static kc_status* kc__lower_slice(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  static const char* const names[] = {"start_indices", "limit_indices", "strides"};
  const kc__shlo_item* w = kc__shlo_word(op, 0);
  if (w) {
    int64_t parts[3][KC_TENSOR_MAX_NDIM];
    size_t rank;
    KC_RETURN_IF_ERROR(kc__slice_text(&w->at, parts, &rank));
    for (int k = 0; k < 3; ++k) KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, &at, names[k], parts[k], rank));
  } else {
    for (int k = 0; k < 3; ++k) {
      KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, names[k], NULL, names[k], k < 2));
    }
  }
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_dynamic_slice(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, "sizes", "slice_sizes", "dynamic_slice_sizes", true));
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_pad(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, "low", "edge_padding_low", "edge_padding_low", true));
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, "high", "edge_padding_high", "edge_padding_high", true));
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, "interior", "interior_padding", "interior_padding", true));
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

/* Operands first..first+count-1, known, as the integer-list attributes
 * `names` (the static form's). */
kc_status* kc__shlo_known_attrs(kc__shlo_scope* s, const kc__shlo_op* op, size_t first,
                                  const char* const* names, size_t count, kc__shlo_attrs* at) {
  for (size_t k = 0; k < count; ++k) {
    int64_t v[KC_TENSOR_MAX_NDIM];
    size_t n;
    KC_RETURN_IF_ERROR(kc__shlo_known_ints(s, op, first + k, v, KC_TENSOR_MAX_NDIM, &n));
    KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, at, names[k], v, n));
  }
  return NULL;
}

/* ---- the rest ------------------------------------------------------------- */

static kc_status* kc__lower_rng(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  const kc__shlo_item* it = kc__shlo_either(op, "algorithm", "rng_algorithm");
  kc_string_view alg = KC_SV_LIT("DEFAULT");
  if (it) KC_RETURN_IF_ERROR(kc__shlo_enum(s->m, &it->at, "the algorithm", &alg));
  const char* hlo = kc_sv_equal(alg, KC_SV_LIT("PHILOX"))      ? "rng_philox"
                    : kc_sv_equal(alg, KC_SV_LIT("THREE_FRY")) ? "rng_three_fry"
                    : kc_sv_equal(alg, KC_SV_LIT("DEFAULT"))   ? "rng_default"
                                                               : NULL;
  if (!hlo) {
    return kc__shlo_fail(&op->at, "rng_bit_generator: algorithm %s is not DEFAULT, PHILOX or "
                         "THREE_FRY", KC__Q(alg));
  }
  kc__shlo_attrs at = {.n = 0};
  kc__shlo_attrs_str(&at, "algorithm", kc_sv(hlo));
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_fft(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  const kc__shlo_item* type = kc__shlo_either(op, "type", "fft_type");
  if (!type) return kc__shlo_missing(op, "type");
  kc_string_view t;
  KC_RETURN_IF_ERROR(kc__shlo_enum(s->m, &type->at, "the FFT type", &t));
  kc__shlo_attrs at = {.n = 0};
  kc__shlo_attrs_str(&at, "fft_type", t);
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, "length", "fft_length", "fft_length", true));
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

/* triangular_solve: its four attributes, all required, as HLO names
 * them. */
static kc_status* kc__lower_triangular_solve(kc__shlo_scope* s, kc__shlo_op* op,
                                             const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  static const char* const bools[] = {"left_side", "lower", "unit_diagonal"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(bools); ++i) {
    const kc__shlo_item* it = kc__shlo_attr(op, bools[i]);
    if (!it) return kc__shlo_missing(op, bools[i]);
    bool v;
    KC_RETURN_IF_ERROR(kc__shlo_bool(s->m, &it->at, bools[i], &v));
    kc__shlo_attrs_bool(&at, bools[i], v);
  }
  const kc__shlo_item* tr = kc__shlo_attr(op, "transpose_a");
  if (!tr) return kc__shlo_missing(op, "transpose_a");
  kc_string_view t;
  KC_RETURN_IF_ERROR(kc__shlo_enum(s->m, &tr->at, "transpose_a", &t));
  kc__shlo_attrs_str(&at, "transpose_a", t);
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_reduce_precision(kc__shlo_scope* s, kc__shlo_op* op,
                                             const kc__shlo_rule* r) {
  int64_t e = -1, m = -1;
  const kc__shlo_item* f = kc__shlo_attr(op, "format");
  if (f) {
    /* format = e5m10 */
    kc_string_view w = f->at.tok.text;
    int en = 0, mn = 0;
    char buf[32];
    snprintf(buf, sizeof buf, "%.*s", (int)w.size, w.data);
    if (sscanf(buf, "e%dm%d", &en, &mn) != 2) {
      return kc__shlo_fail(&f->at.tok, "reduce_precision: expected a format such as e5m10");
    }
    e = en;
    m = mn;
  } else {
    const kc__shlo_item* a = kc__shlo_attr(op, "exponent_bits");
    const kc__shlo_item* b = kc__shlo_attr(op, "mantissa_bits");
    if (!a || !b) return kc__shlo_missing(op, "format");
    KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &a->at, "exponent_bits", &e));
    KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &b->at, "mantissa_bits", &m));
  }
  kc__shlo_attrs at = {.n = 0};
  kc__shlo_attrs_int(&at, "exponent_bits", e);
  kc__shlo_attrs_int(&at, "mantissa_bits", m);
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_top_k(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  const kc__shlo_item* k = kc__shlo_attr(op, "k");
  if (!k) return kc__shlo_missing(op, "k");
  int64_t kv;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &k->at, "k", &kv));
  kc__shlo_attrs at = {.n = 0};
  kc__shlo_attrs_int(&at, "k", kv);
  kc__shlo_attrs_bool(&at, "largest", true);
  return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
}

/* ---- shape-polymorphic ops, in their static forms -------------------------- */

/* get_dimension_size: the size of a dimension of the (refined) operand,
 * as a constant. */
static kc_status* kc__lower_dimension_size(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  const kc__shlo_item* it = kc__shlo_either(op, "dim", "dimension");
  if (!it || kc__shlo_num_operands(op) != 1 || kc__shlo_num_result_types(op) != 1) {
    return kc__shlo_missing(op, "dim");
  }
  int64_t d;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &it->at, "dim", &d));
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  const kc_shape* t = kc__shlo_result_type(op, 0);
  DLDataType dt = kc_shape_get_dtype(t);
  if (kc_shape_is_tuple(x) || d < 0 || d >= kc_shape_get_rank(x) || kc_shape_get_rank(t) != 0 ||
      !(dt.code == kDLInt && (dt.bits == 32 || dt.bits == 64))) {
    return kc__shlo_fail(&op->at, "get_dimension_size: expected a dimension of the operand and "
                                  "an i32 or i64 scalar result");
  }
  int64_t size = kc_shape_get_dims(x)[d];
  int32_t size32 = (int32_t)size;
  kc_string_view name;
  int32_t id;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, NULL, &name));
  KC_RETURN_IF_ERROR(kc_program_builder_add_constant(s->b, t, dt.bits == 32 ? (void*)&size32 : (void*)&size,
                                                     dt.bits / 8u, name, &id));
  KC_RETURN_IF_ERROR(kc__shlo_bind_results(s, op, id, false));
  return kc__shlo_set_known(s, op->result.text, &size, 1);
}

/* dynamic_reshape: a reshape of its operand (the refined type is the shape). */
static kc_status* kc__lower_first_operand(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  return kc__shlo_lower_with_n(s, op, r, 1, NULL, NULL, 0);
}

static kc_status* kc__lower_dynamic_iota(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  const kc__shlo_item* it = kc__shlo_either(op, "dim", "iota_dimension");
  if (!it) return kc__shlo_missing(op, "iota_dimension");
  int64_t d;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &it->at, "iota_dimension", &d));
  kc__shlo_attrs at = {.n = 0};
  kc__shlo_attrs_int(&at, "iota_dimension", d);
  return kc__shlo_lower_with_n(s, op, r, 0, &at, NULL, 0);
}

static kc_status* kc__lower_real_dynamic_slice(kc__shlo_scope* s, kc__shlo_op* op,
                                               const kc__shlo_rule* r) {
  static const char* const names[] = {"start_indices", "limit_indices", "strides"};
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__shlo_known_attrs(s, op, 1, names, 3, &at));
  return kc__shlo_lower_with_n(s, op, r, 1, &at, NULL, 0);
}

static kc_status* kc__lower_dynamic_pad(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  static const char* const names[] = {"edge_padding_low", "edge_padding_high",
                                      "interior_padding"};
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__shlo_known_attrs(s, op, 2, names, 3, &at));
  return kc__shlo_lower_with_n(s, op, r, 2, &at, NULL, 0);
}

/* ---- CHLO ops without an HLO instruction, as instructions ---------------- */

/* chlo.erf_inv of f32 (f16 and bf16 through f32), as XLA expands it: M.
 * Giles' single-precision approximation ("Approximating the erfinv
 * function", GPU Computing Gems, 2011), a polynomial in w = -log((1 - x)(1
 * + x)) on each side of w = 5, and +-inf at +-1. */
static kc_status* kc__lower_erf_inv(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  static const float kSmall[9] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                  -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                  -0.00417768164f,  0.246640727f,    1.50140941f};
  static const float kLarge[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                  -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                  0.00943887047f,   1.00167406f,     2.83297682f};
  if (kc__shlo_num_operands(op) != 1 || kc__shlo_num_result_types(op) != 1) {
    return kc__shlo_fail(&op->at, "chlo.erf_inv: expected one operand and one result");
  }
  const kc__shlo_value* x = kc__shlo_operand(s, op, 0);
  DLDataType dt = kc_shape_get_dtype(x->shape);
  bool half = (dt.code == kDLFloat && dt.bits == 16) || dt.code == kDLBfloat;
  if (kc_shape_is_tuple(x->shape) || !((dt.code == kDLFloat && dt.bits == 32) || half)) {
    return kc__shlo_fail(&op->at, "chlo.erf_inv of %s is not supported (f16, bf16 and f32 are)",
                         dt.code == kDLFloat && dt.bits == 64 ? "f64" : "this element type");
  }
  kc__expr e = KC__SHLO_EXPR(s, op, "erf_inv");
  kc_shape* f32 = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1),
                                           kc_shape_get_dims(x->shape),
                                           kc_shape_get_rank(x->shape), &f32));
  e.shape = f32;
  e.st = kc_shape_create_array(kc_dtype_make(kDLBool, 8, 1), kc_shape_get_dims(x->shape),
                               kc_shape_get_rank(x->shape), &e.pred);
  int32_t v = half ? kc__e_add(&e, KC_OP_CONVERT, f32, &x->id, 1, NULL) : x->id;
  int32_t one = kc__e_const(&e, 1.0f);
  int32_t w = kc__e_op(&e, KC_OP_MULTIPLY, kc__e_op(&e, KC_OP_SUBTRACT, one, v),
                       kc__e_op(&e, KC_OP_ADD, one, v));
  w = kc__e_op(&e, KC_OP_NEGATE, kc__e_op(&e, KC_OP_LOG, w, KC__UNARY), KC__UNARY);
  int32_t small = kc__e_compare(&e, "LT", w, kc__e_const(&e, 5.0f));
  w = kc__e_select(&e, small, kc__e_op(&e, KC_OP_SUBTRACT, w, kc__e_const(&e, 2.5f)),
                   kc__e_op(&e, KC_OP_SUBTRACT, kc__e_op(&e, KC_OP_SQRT, w, KC__UNARY),
                            kc__e_const(&e, 3.0f)));
  int32_t p = -1;
  for (int i = 0; i < 9; ++i) {
    int32_t c = kc__e_select(&e, small, kc__e_const(&e, kSmall[i]), kc__e_const(&e, kLarge[i]));
    p = i == 0 ? c : kc__e_op(&e, KC_OP_ADD, c, kc__e_op(&e, KC_OP_MULTIPLY, p, w));
  }
  int32_t y = kc__e_op(&e, KC_OP_MULTIPLY, p, v);
  int32_t edge = kc__e_compare(&e, "EQ", kc__e_op(&e, KC_OP_ABS, v, KC__UNARY), one);
  y = kc__e_select(&e, edge, kc__e_op(&e, KC_OP_MULTIPLY, v, kc__e_const(&e, INFINITY)), y);
  if (half) y = kc__e_add(&e, KC_OP_CONVERT, x->shape, &y, 1, NULL);
  kc_shape_destroy(f32);
  kc_shape_destroy(e.pred);
  KC_RETURN_IF_ERROR(e.st);
  kc__shlo_value result = {.id = y, .shape = kc__shlo_result_type(op, 0)};
  return kc__shlo_bind_values(s, op, &result, 1);
}

kc_status* kc__shlo_expr_name(kc__expr* e, kc_string_view* out) {
  return kc__shlo_instr_name(e->ctx, e->ctx2, e->what, out);
}

/* chlo.mulhi (expr.h's kc__e_mulhi). */
static kc_status* kc__lower_mulhi(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  if (kc__shlo_num_operands(op) != 2 || kc__shlo_num_result_types(op) != 1) {
    return kc__shlo_fail(&op->at, "chlo.mulhi: expected two operands and one result");
  }
  const kc__shlo_value* x = kc__shlo_operand(s, op, 0);
  const kc__shlo_value* y = kc__shlo_operand(s, op, 1);
  DLDataType dt = kc_shape_get_dtype(x->shape);
  if (kc_shape_is_tuple(x->shape) || (dt.code != kDLInt && dt.code != kDLUInt) ||
      !kc_shape_equal(x->shape, y->shape)) {
    return kc__shlo_fail(&op->at, "chlo.mulhi: expected two integer operands of one type");
  }
  kc__expr e = KC__SHLO_EXPR(s, op, "mulhi");
  int32_t hi = kc__e_mulhi(&e, x->id, y->id, x->shape);
  KC_RETURN_IF_ERROR(e.st);
  kc__shlo_value v = {.id = hi, .shape = kc__shlo_result_type(op, 0)};
  return kc__shlo_bind_values(s, op, &v, 1);
}

bool kc__shlo_rule_is_elementwise(const kc__shlo_rule* r) {
  return r->fn == kc__shlo_lower_plain || r->fn == kc__shlo_lower_max_min ||
         r->fn == kc__shlo_lower_complex_math;
}

/* convert: of a complex operand to a real or integer type, its real part
 * converted (StableHLO's meaning; HLO's convert refuses complex to real,
 * as XLA's does); otherwise the HLO instruction. */
static kc_status* kc__lower_convert(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  const kc__shlo_value* x = kc__shlo_operand(s, op, 0);
  const kc_shape* result = kc__shlo_num_result_types(op) == 1 ? kc__shlo_result_type(op, 0) : NULL;
  if (!result || kc_shape_is_tuple(x->shape) || kc_shape_is_tuple(result) ||
      kc_shape_get_dtype(x->shape).code != kDLComplex ||
      kc_shape_get_dtype(result).code == kDLComplex) {
    return kc__shlo_lower_plain(s, op, r);
  }
  kc_shape* part = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(
      kc_dtype_make(kDLFloat, (uint8_t)(kc_shape_get_dtype(x->shape).bits / 2), 1),
      kc_shape_get_dims(x->shape), kc_shape_get_rank(x->shape), &part));
  kc__expr e = KC__SHLO_EXPR(s, op, "real");
  e.shape = part;
  int32_t y = kc__e_add(&e, KC_OP_REAL, part, &x->id, 1, NULL);
  if (!kc_dtype_equal(kc_shape_get_dtype(part), kc_shape_get_dtype(result))) {
    y = kc__e_add(&e, KC_OP_CONVERT, result, &y, 1, NULL);
  }
  kc_shape_destroy(part);
  KC_RETURN_IF_ERROR(e.st);
  kc__shlo_value v = {.id = y, .shape = result};
  return kc__shlo_bind_values(s, op, &v, 1);
}

/* ---- the table ------------------------------------------------------------ */

#define KC__PLAIN(name, op) {name, op, kc__shlo_lower_plain}

/* By the op's name without its dialect. CHLO ops are read only where
 * they are an HLO instruction kcall runs (chlo.erf, chlo.tan, chlo.top_k);
 * `chlo` marks them. */
static const struct {
  kc__shlo_rule rule;
  bool chlo;
} kc__rules[] = {
    {KC__PLAIN("add", KC_OP_ADD), false},
    {KC__PLAIN("subtract", KC_OP_SUBTRACT), false},
    {KC__PLAIN("multiply", KC_OP_MULTIPLY), false},
    {KC__PLAIN("divide", KC_OP_DIVIDE), false},
    {{"maximum", KC_OP_MAXIMUM, kc__shlo_lower_max_min}, false},
    {{"minimum", KC_OP_MINIMUM, kc__shlo_lower_max_min}, false},
    {KC__PLAIN("negate", KC_OP_NEGATE), false},
    {KC__PLAIN("exponential", KC_OP_EXPONENTIAL), false},
    {KC__PLAIN("log", KC_OP_LOG), false},
    {{"convert", KC_OP_CONVERT, kc__lower_convert}, false},
    {KC__PLAIN("reshape", KC_OP_RESHAPE), false},
    {KC__PLAIN("abs", KC_OP_ABS), false},
    {KC__PLAIN("sign", KC_OP_SIGN), false},
    {KC__PLAIN("sqrt", KC_OP_SQRT), false},
    {KC__PLAIN("rsqrt", KC_OP_RSQRT), false},
    {{"cbrt", KC_OP_CBRT, kc__shlo_lower_complex_math}, false},
    {KC__PLAIN("tanh", KC_OP_TANH), false},
    {{"logistic", KC_OP_LOGISTIC, kc__shlo_lower_complex_math}, false},
    {KC__PLAIN("sine", KC_OP_SINE), false},
    {KC__PLAIN("cosine", KC_OP_COSINE), false},
    {KC__PLAIN("tan", KC_OP_TAN), false},
    {KC__PLAIN("tan", KC_OP_TAN), true},
    {KC__PLAIN("erf", KC_OP_ERF), true},
    {{"erf_inv", KC__OP_NONE, kc__lower_erf_inv}, true},
    {{"mulhi", KC__OP_NONE, kc__lower_mulhi}, true},
    {KC__PLAIN("floor", KC_OP_FLOOR), false},
    {KC__PLAIN("ceil", KC_OP_CEIL), false},
    {KC__PLAIN("round_nearest_afz", KC_OP_ROUND_NEAREST_AFZ), false},
    {KC__PLAIN("round_nearest_even", KC_OP_ROUND_NEAREST_EVEN), false},
    {KC__PLAIN("log_plus_one", KC_OP_LOG_PLUS_ONE), false},
    {KC__PLAIN("exponential_minus_one", KC_OP_EXPONENTIAL_MINUS_ONE), false},
    {KC__PLAIN("is_finite", KC_OP_IS_FINITE), false},
    {KC__PLAIN("not", KC_OP_NOT), false},
    {KC__PLAIN("popcnt", KC_OP_POPCNT), false},
    {KC__PLAIN("count_leading_zeros", KC_OP_COUNT_LEADING_ZEROS), false},
    {KC__PLAIN("real", KC_OP_REAL), false},
    {KC__PLAIN("imag", KC_OP_IMAG), false},
    {{"bitcast_convert", KC_OP_BITCAST_CONVERT, kc__shlo_lower_bitcast}, false},
    {KC__PLAIN("power", KC_OP_POWER), false},
    {KC__PLAIN("remainder", KC_OP_REMAINDER), false},
    {{"atan2", KC_OP_ATAN2, kc__shlo_lower_complex_math}, false},
    {KC__PLAIN("and", KC_OP_AND), false},
    {KC__PLAIN("or", KC_OP_OR), false},
    {KC__PLAIN("xor", KC_OP_XOR), false},
    {KC__PLAIN("shift_left", KC_OP_SHIFT_LEFT), false},
    {KC__PLAIN("shift_right_arithmetic", KC_OP_SHIFT_RIGHT_ARITHMETIC), false},
    {KC__PLAIN("shift_right_logical", KC_OP_SHIFT_RIGHT_LOGICAL), false},
    {KC__PLAIN("complex", KC_OP_COMPLEX), false},
    {KC__PLAIN("select", KC_OP_SELECT), false},
    {KC__PLAIN("clamp", KC_OP_CLAMP), false},
    {KC__PLAIN("dynamic_update_slice", KC_OP_DYNAMIC_UPDATE_SLICE), false},
    {{"constant", KC__OP_NONE, kc__lower_constant}, false},
    {{"broadcast_in_dim", KC__OP_NONE, kc__lower_broadcast}, false},
    {{"transpose", KC_OP_TRANSPOSE, kc__lower_dims}, false},
    {{"reverse", KC_OP_REVERSE, kc__lower_dims}, false},
    {{"concatenate", KC_OP_CONCATENATE, kc__lower_concatenate}, false},
    {{"iota", KC_OP_IOTA, kc__lower_iota}, false},
    {{"compare", KC_OP_COMPARE, kc__lower_compare}, false},
    {{"slice", KC_OP_SLICE, kc__lower_slice}, false},
    {{"dynamic_slice", KC_OP_DYNAMIC_SLICE, kc__lower_dynamic_slice}, false},
    {{"pad", KC_OP_PAD, kc__lower_pad}, false},
    {{"dot_general", KC_OP_DOT, kc__shlo_lower_dot}, false},
    {{"reduce", KC_OP_REDUCE, kc__shlo_lower_reduce}, false},
    {{"reduce_window", KC_OP_REDUCE_WINDOW, kc__shlo_lower_reduce_window}, false},
    {{"select_and_scatter", KC_OP_SELECT_AND_SCATTER, kc__shlo_lower_select_and_scatter}, false},
    {{"sort", KC_OP_SORT, kc__shlo_lower_sort}, false},
    {{"map", KC__OP_NONE, kc__shlo_lower_map}, false},
    {{"uniform_quantize", KC__OP_NONE, kc__shlo_lower_uniform_quantize}, false},
    {{"uniform_dequantize", KC__OP_NONE, kc__shlo_lower_uniform_quantize}, false},
    {{"gather", KC_OP_GATHER, kc__shlo_lower_gather}, false},
    {{"scatter", KC_OP_SCATTER, kc__shlo_lower_scatter}, false},
    {{"while", KC_OP_WHILE, kc__shlo_lower_while}, false},
    {{"case", KC_OP_CONDITIONAL, kc__shlo_lower_branches}, false},
    {{"if", KC_OP_CONDITIONAL, kc__shlo_lower_branches}, false},
    {{"optimization_barrier", KC__OP_NONE, kc__shlo_lower_identity}, false},
    {{"tuple", KC__OP_NONE, kc__shlo_lower_tuple}, false},
    {{"get_tuple_element", KC__OP_NONE, kc__shlo_lower_get_tuple_element}, false},
    {{"rng_bit_generator", KC_OP_RNG_BIT_GENERATOR, kc__lower_rng}, false},
    {{"fft", KC_OP_FFT, kc__lower_fft}, false},
    {{"triangular_solve", KC_OP_TRIANGULAR_SOLVE, kc__lower_triangular_solve}, false},
    {{"reduce_precision", KC_OP_REDUCE_PRECISION, kc__lower_reduce_precision}, false},
    {{"convolution", KC_OP_CONVOLUTION, kc__shlo_lower_convolution}, false},
    {{"dynamic_conv", KC_OP_CONVOLUTION, kc__shlo_lower_convolution}, false},
    {{"custom_call", KC__OP_NONE, kc__shlo_lower_custom_call}, false},
    {{"composite", KC__OP_NONE, kc__shlo_lower_call}, false},
    {{"top_k", KC_OP_TOPK, kc__lower_top_k}, true},
    {{"ragged_dot", KC__OP_NONE, kc__shlo_lower_ragged_dot}, true},
    {{"scan", KC__OP_NONE, kc__shlo_lower_scan}, true},
    {{"get_dimension_size", KC__OP_NONE, kc__lower_dimension_size}, false},
    {{"dynamic_broadcast_in_dim", KC__OP_NONE, kc__lower_broadcast}, false},
    {{"dynamic_reshape", KC_OP_RESHAPE, kc__lower_first_operand}, false},
    {{"dynamic_iota", KC_OP_IOTA, kc__lower_dynamic_iota}, false},
    {{"real_dynamic_slice", KC_OP_SLICE, kc__lower_real_dynamic_slice}, false},
    {{"dynamic_pad", KC_OP_PAD, kc__lower_dynamic_pad}, false},
    {{"dynamic_gather", KC_OP_GATHER, kc__shlo_lower_dynamic_gather}, false},
};

static const kc__shlo_rule kc__call_rule = {"call", KC__OP_NONE, kc__shlo_lower_call};

const kc__shlo_rule* kc__shlo_find_rule(kc_string_view name) {
  if (name.size >= 2 && name.data[0] == '"') { /* the generic form's "stablehlo.sort" */
    name.data++;
    name.size -= 2;
  }
  if (kc_sv_equal(name, KC_SV_LIT("func.call")) || kc_sv_equal(name, KC_SV_LIT("call"))) {
    return &kc__call_rule;
  }
  static const char* const dialects[] = {"stablehlo.", "chlo."};
  for (size_t d = 0; d < KC__ARRAY_SIZE(dialects); ++d) {
    size_t n = strlen(dialects[d]);
    if (name.size <= n || memcmp(name.data, dialects[d], n) != 0) continue;
    kc_string_view rest = {name.data + n, name.size - n};
    for (size_t i = 0; i < KC__ARRAY_SIZE(kc__rules); ++i) {
      if (kc__rules[i].chlo == (d == 1) && kc_sv_equal(rest, kc_sv(kc__rules[i].rule.name))) {
        return &kc__rules[i].rule;
      }
    }
  }
  return NULL;
}

/* The fewest operands an op of rule r takes: the rules and the shape
 * refinement before them read these without looking, so an op with
 * fewer (a fuzzed or hand-written module) is refused before either. */
static size_t kc__min_operands(const kc__shlo_rule* r) {
  static const struct {
    const char* name;
    size_t n;
  } counts[] = {
      {"constant", 0}, {"iota", 0}, {"custom_call", 0}, {"composite", 0}, {"call", 0},
      {"tuple", 0}, {"optimization_barrier", 0}, {"while", 0}, {"dot_general", 2},
      {"gather", 2}, {"convolution", 2}, {"triangular_solve", 2}, {"mulhi", 2}, {"pad", 2},
      {"reduce", 2}, {"reduce_window", 2}, {"compare", 2}, {"dynamic_update_slice", 2},
      {"dynamic_reshape", 2}, {"dynamic_broadcast_in_dim", 2}, {"select", 3}, {"clamp", 3}, {"scatter", 3},
      {"select_and_scatter", 3}, {"dynamic_gather", 3}, {"real_dynamic_slice", 4},
      {"dynamic_pad", 5}, {"dynamic_conv", 3}};
  for (size_t i = 0; i < KC__ARRAY_SIZE(counts); ++i) {
    if (!strcmp(r->name, counts[i].name)) return counts[i].n;
  }
  static const char* const binary[] = {
      "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder",
      "atan2", "and", "or", "xor", "shift_left", "shift_right_arithmetic",
      "shift_right_logical", "complex"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(binary); ++i) {
    if (!strcmp(r->name, binary[i])) return 2;
  }
  return 1;
}

/* An attribute the op's rule did not read is refused (it may change what
 * the op computes: result_accuracy, a layout, a new field), unless it is
 * one that does not change what runs on one device: precision hints,
 * sharding and frontend annotations, and a composite's name, version and
 * attributes (its decomposition says what it computes). */
static kc_status* kc__unread_attrs(const kc__shlo_op* op) {
  static const char* const ignored[] = {"precision", "precision_config", "composite_attributes",
                                        "name", "version"};
  static const char* const prefixes[] = {"mhlo.", "jax.", "sdy."};
  const kc__shlo_item* items = (const kc__shlo_item*)(const void*)op->attrs.data;
  for (size_t i = 0; i < op->attrs.size / sizeof *items; ++i) {
    kc_string_view k = items[i].key;
    bool skip = items[i].read;
    for (size_t j = 0; !skip && j < KC__ARRAY_SIZE(ignored); ++j) skip = kc_sv_equal(k, kc_sv(ignored[j]));
    for (size_t j = 0; !skip && j < KC__ARRAY_SIZE(prefixes); ++j) {
      size_t n = strlen(prefixes[j]);
      skip = k.size > n && memcmp(k.data, prefixes[j], n) == 0;
    }
    if (!skip) {
      return kc__shlo_fail(&items[i].at.tok,
                           "%.*s: attribute %.*s is not supported (kcall does not read it, "
                           "and it may change what the op computes)",
                           (int)op->name.size, op->name.data, (int)k.size, k.data);
    }
  }
  return NULL;
}

kc_status* kc__shlo_lower(kc__shlo_scope* s, kc__shlo_op* op) {
  size_t types = kc__shlo_num_result_types(op);
  if (op->result.kind != KC__TOK_END && (int64_t)types != op->num_results) {
    return kc__shlo_fail(&op->at, "%.*s: %lld result%s named, %zu type%s given (expected ':' and "
                         "the op's types)", (int)op->name.size, op->name.data,
                         (long long)op->num_results, op->num_results == 1 ? "" : "s", types,
                         types == 1 ? "" : "s");
  }
  const kc__shlo_rule* r = kc__shlo_find_rule(op->name);
  if (r && kc__shlo_num_operands(op) < kc__min_operands(r)) {
    size_t want = kc__min_operands(r);
    return kc__shlo_fail(&op->at, "%.*s: expected at least %zu operand%s, found %zu",
                         (int)op->name.size, op->name.data, want, want == 1 ? "" : "s",
                         kc__shlo_num_operands(op));
  }
  if (r) KC_RETURN_IF_ERROR(kc__shlo_refine(s, op));
  if (!r) {
    return kc__shlo_fail(&op->at,
                         "op %.*s is not supported (kcall reads the StableHLO ops that have an "
                         "HLO instruction it runs, and chlo.erf, erf_inv, mulhi, ragged_dot, "
                         "scan, tan and top_k)",
                         (int)op->name.size, op->name.data);
  }
  /* f8 operands decoded first, so that a float converted to a narrow
   * integer is clamped as a float */
  KC_RETURN_IF_ERROR(kc__shlo_float8_prepare(s, op));
  KC_RETURN_IF_ERROR(kc__shlo_narrow_prepare(s, op));
  KC_RETURN_IF_ERROR(kc__shlo_quant_prepare(s, op));
  size_t first = s->values.size / sizeof(kc__shlo_value);
  KC_RETURN_IF_ERROR(r->fn(s, op, r));
  KC_RETURN_IF_ERROR(kc__unread_attrs(op));
  KC_RETURN_IF_ERROR(kc__shlo_fold(s, op));
  KC_RETURN_IF_ERROR(kc__shlo_float8_finish(s, op, first));
  KC_RETURN_IF_ERROR(kc__shlo_quant_finish(s, op, first));
  return kc__shlo_narrow_finish(s, op, first);
}
