/* What each StableHLO operation computes, as the instructions of kcall's
 * program representation (the HLO instruction table's, with HLO's
 * attribute names), built through the program builder. One rule per
 * operation; an operation without one is refused, naming it. */
#include <math.h>
#include <stdio.h>

#include "program/ops.h"
#include "program/parse_internal.h"
#include "program/stablehlo/stablehlo_internal.h"

/* Attributes being gathered for one instruction; their values live in
 * the module's arena. */
typedef struct kc__attrs {
  kc_attr a[24];
  size_t n;
  bool full;    /* more were given than a holds */
  kc_attr spare; /* where those go */
} kc__attrs;

static kc_status* kc__attrs_ints(kc__shlo_scope* s, kc__attrs* at, const char* name,
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
 * capacity; past it, `full` is set, and kc__emit refuses the op. */
static kc_attr* kc__attrs_next(kc__attrs* at, const char* name, int32_t type) {
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

static void kc__attrs_int(kc__attrs* at, const char* name, int64_t v) {
  kc__attrs_next(at, name, KC_ATTR_I64)->v.i64 = v;
}

static void kc__attrs_bool(kc__attrs* at, const char* name, bool v) {
  kc__attrs_next(at, name, KC_ATTR_BOOL)->v.b = v;
}

static void kc__attrs_str(kc__attrs* at, const char* name, kc_string_view v) {
  kc__attrs_next(at, name, KC_ATTR_STRING)->v.str = v;
}

/* The first of two spellings of an attribute (pretty, generic) op has. */
static const kc__shlo_item* kc__either(const kc__shlo_op* op, const char* a, const char* b) {
  const kc__shlo_item* it = kc__shlo_attr(op, a);
  return it ? it : (b ? kc__shlo_attr(op, b) : NULL);
}

static kc_status* kc__missing(const kc__shlo_op* op, const char* what) {
  return kc__shlo_fail(&op->at, "%.*s: expected attribute %s, got none", (int)op->name.size,
                       op->name.data, what);
}

/* An integer-list attribute copied under HLO's name `hlo` (when given;
 * required when `required`). */
static kc_status* kc__copy_ints(kc__shlo_scope* s, const kc__shlo_op* op, kc__attrs* at,
                                const char* pretty, const char* generic, const char* hlo,
                                bool required) {
  const kc__shlo_item* it = kc__either(op, pretty, generic);
  if (!it) return required ? kc__missing(op, pretty) : NULL;
  int64_t v[KC_TENSOR_MAX_NDIM * 2];
  size_t n;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &it->at, hlo, v, KC__ARRAY_SIZE(v), &n));
  return kc__attrs_ints(s, at, hlo, v, n);
}

/* The instruction ids of op's operands, into ids. */
static kc_status* kc__shlo_operand_ids(kc__shlo_scope* s, const kc__shlo_op* op, size_t from,
                                  size_t count, kc__buf* ids) {
  for (size_t i = from; i < from + count; ++i) {
    int32_t id = kc__shlo_operand(s, op, i)->id;
    if (!kc__buf_append(ids, &id, sizeof id)) return kc__parse_oom();
  }
  return NULL;
}

/* op's result: its one type, or a tuple of them (owned by the module). */
static kc_status* kc__result_shape(kc__shlo_scope* s, const kc__shlo_op* op, bool* tuple,
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
static kc_status* kc__emit(kc__shlo_scope* s, const kc__shlo_op* op, int32_t opcode,
                           const kc__buf* ids, const kc__attrs* attrs, kc_program** programs,
                           size_t num_programs) {
  bool tuple = false;
  const kc_shape* shape = NULL;
  kc_string_view name;
  kc_status* st = attrs && attrs->full
                      ? kc_status_create(KC_INTERNAL, "%.*s: more attributes than kcall holds",
                                         (int)op->name.size, op->name.data)
                      : kc__result_shape(s, op, &tuple, &shape);
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

typedef struct kc__rule kc__rule;
typedef kc_status* (*kc__lower_fn)(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r);
struct kc__rule {
  const char* name;
  int32_t opcode;
  kc__lower_fn fn;
};

/* Every operand, no attributes. */
static kc_status* kc__lower_plain(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc__buf ids = {0};
  kc_status* st = kc__shlo_operand_ids(s, op, 0, kc__shlo_num_operands(op), &ids);
  if (!st) st = kc__emit(s, op, r->opcode, &ids, NULL, NULL, 0);
  kc__buf_free(&ids);
  return st;
}

/* The first n operands, attributes and called programs (released here). */
static kc_status* kc__lower_with_n(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r,
                                   size_t n, const kc__attrs* attrs, kc_program** programs,
                                   size_t np) {
  kc__buf ids = {0};
  kc_status* st = n > kc__shlo_num_operands(op)
                      ? kc__shlo_fail(&op->at, "%.*s: expected %zu operands", (int)op->name.size,
                                      op->name.data, n)
                      : kc__shlo_operand_ids(s, op, 0, n, &ids);
  if (!st) {
    st = kc__emit(s, op, r->opcode, &ids, attrs, programs, np);
  } else {
    for (size_t i = 0; i < np; ++i) kc_program_destroy(programs[i]);
  }
  kc__buf_free(&ids);
  return st;
}

/* Every operand, the attributes and called programs (released here). */
static kc_status* kc__lower_with(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r,
                                 const kc__attrs* attrs, kc_program** programs, size_t np) {
  kc__buf ids = {0};
  kc_status* st = kc__shlo_operand_ids(s, op, 0, kc__shlo_num_operands(op), &ids);
  if (!st) {
    st = kc__emit(s, op, r->opcode, &ids, attrs, programs, np);
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

static kc_status* kc__lower_constant(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  (void)r;
  const kc__shlo_item* v = kc__shlo_word(op, 0);
  if (!v) v = kc__shlo_attr(op, "value");
  if (!v) return kc__missing(op, "value (dense<...>)");
  if (kc__shlo_num_result_types(op) != 1) return kc__shlo_fail(&op->at, "constant: expected one result type");
  const kc_shape* shape = kc__shlo_result_type(op, 0);
  void* data = NULL;
  size_t size = 0;
  KC_RETURN_IF_ERROR(kc__shlo_dense(s->m, &v->at, shape, &data, &size));
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

static kc_status* kc__lower_broadcast(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  (void)r;
  const kc__shlo_item* it = kc__either(op, "dims", "broadcast_dimensions");
  if (!it) return kc__missing(op, "dims");
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
static kc_status* kc__lower_dims(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc__attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, "dims",
                                   r->opcode == KC_OP_TRANSPOSE ? "permutation" : "dimensions",
                                   "dimensions", true));
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_concatenate(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc__attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, "dim", "dimension", "dimensions", true));
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_iota(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  const kc__shlo_item* it = kc__either(op, "dim", "iota_dimension");
  if (!it) return kc__missing(op, "dim");
  int64_t d;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &it->at, "dim", &d));
  kc__attrs at = {.n = 0};
  kc__attrs_int(&at, "iota_dimension", d);
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_compare(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  const kc__shlo_item* dir = kc__shlo_attr(op, "comparison_direction");
  const kc__shlo_item* type = kc__shlo_attr(op, "compare_type");
  if (!dir) dir = kc__shlo_word(op, 0);
  if (!type && kc__shlo_word(op, 1)) type = kc__shlo_word(op, 1);
  if (!dir) return kc__missing(op, "a comparison direction (EQ, LT, ...)");
  kc__attrs at = {.n = 0};
  kc_string_view d, t;
  KC_RETURN_IF_ERROR(kc__shlo_enum(s->m, &dir->at, "the comparison direction", &d));
  kc__attrs_str(&at, "direction", d);
  if (type) {
    KC_RETURN_IF_ERROR(kc__shlo_enum(s->m, &type->at, "the comparison type", &t));
    if (!kc_sv_equal(t, KC_SV_LIT("NOTYPE"))) kc__attrs_str(&at, "type", t);
  }
  return kc__lower_with(s, op, r, &at, NULL, 0);
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

static kc_status* kc__lower_slice(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc__attrs at = {.n = 0};
  static const char* const names[] = {"start_indices", "limit_indices", "strides"};
  const kc__shlo_item* w = kc__shlo_word(op, 0);
  if (w) {
    int64_t parts[3][KC_TENSOR_MAX_NDIM];
    size_t rank;
    KC_RETURN_IF_ERROR(kc__slice_text(&w->at, parts, &rank));
    for (int k = 0; k < 3; ++k) KC_RETURN_IF_ERROR(kc__attrs_ints(s, &at, names[k], parts[k], rank));
  } else {
    for (int k = 0; k < 3; ++k) {
      KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, names[k], NULL, names[k], k < 2));
    }
  }
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_dynamic_slice(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc__attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, "sizes", "slice_sizes", "dynamic_slice_sizes", true));
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_pad(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc__attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, "low", "edge_padding_low", "edge_padding_low", true));
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, "high", "edge_padding_high", "edge_padding_high", true));
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, "interior", "interior_padding", "interior_padding", true));
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

/* "[0] x [1]": two integer lists. */
static kc_status* kc__pair_lists(kc__shlo_scope* s, const kc__lexer* at, const char* what,
                                 int64_t* a, size_t* na, int64_t* b, size_t* nb) {
  kc__lexer lx = *at;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &lx, what, a, KC_TENSOR_MAX_NDIM, na));
  KC_RETURN_IF_ERROR(kc__lex_skip_group(&lx, NULL));
  if (!kc__tok_is_word(&lx.tok, "x")) return kc__lex_expected(&lx, &lx.tok, "'x' between the lists");
  kc__lex_next(&lx);
  return kc__shlo_ints(s->m, &lx, what, b, KC_TENSOR_MAX_NDIM, nb);
}

static kc_status* kc__lower_dot(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  if (kc__shlo_attr(op, "algorithm")) {
    return kc__shlo_fail(&op->at, "dot_general: the algorithm attribute is not supported");
  }
  kc__attrs at = {.n = 0};
  int64_t a[KC_TENSOR_MAX_NDIM], b[KC_TENSOR_MAX_NDIM];
  size_t na = 0, nb = 0;
  const kc__shlo_item* dn = kc__shlo_attr(op, "dot_dimension_numbers");
  static const char* const pretty[] = {"batching_dims", "contracting_dims"};
  static const char* const hlo[][2] = {{"lhs_batch_dims", "rhs_batch_dims"},
                                       {"lhs_contracting_dims", "rhs_contracting_dims"}};
  static const char* const fields[][2] = {
      {"lhs_batching_dimensions", "rhs_batching_dimensions"},
      {"lhs_contracting_dimensions", "rhs_contracting_dimensions"}};
  for (int k = 0; k < 2; ++k) {
    na = nb = 0;
    if (dn) {
      for (int side = 0; side < 2; ++side) {
        kc__lexer f;
        bool found;
        KC_RETURN_IF_ERROR(kc__shlo_field(s->m, &dn->at, fields[k][side], &f, &found));
        if (found) {
          KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, fields[k][side], side ? b : a,
                                           KC_TENSOR_MAX_NDIM, side ? &nb : &na));
        }
      }
    } else {
      const kc__shlo_item* it = kc__shlo_attr(op, pretty[k]);
      if (it) KC_RETURN_IF_ERROR(kc__pair_lists(s, &it->at, pretty[k], a, &na, b, &nb));
    }
    KC_RETURN_IF_ERROR(kc__attrs_ints(s, &at, hlo[k][0], a, na));
    KC_RETURN_IF_ERROR(kc__attrs_ints(s, &at, hlo[k][1], b, nb));
  }
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

/* ---- regions -------------------------------------------------------------- */

static const kc__rule* kc__find_rule(kc_string_view name);

/* reduce's "applies stablehlo.add": a program of that op on two scalars
 * of each init's shape. */
static kc_status* kc__applies_program(kc__shlo_scope* s, kc__shlo_op* op, kc_program** out) {
  const kc__shlo_item* w = kc__shlo_word(op, 1);
  if (!w || op->num_inits != 1) {
    return kc__shlo_fail(&op->at, "reduce: expected 'applies OP' with one operand");
  }
  kc_string_view fn = w->at.tok.text;
  const kc__rule* r = kc__find_rule(fn);
  if (!r || r->fn != kc__lower_plain) {
    return kc__shlo_fail(&w->at.tok, "reduce: applies %.*s: expected an element-wise operation",
                         (int)fn.size, fn.data);
  }
  const kc_shape* scalar = kc__shlo_operand(s, op, kc__shlo_num_operands(op) - 1)->shape;
  kc_program_builder* b = NULL;
  char name[64];
  snprintf(name, sizeof name, "reducer.%lld", (long long)++s->m->serial);
  KC_RETURN_IF_ERROR(kc_program_builder_create(kc_sv(name), &b));
  int32_t ids[2], root;
  kc_status* st = kc_program_builder_add_parameter(b, 0, scalar, KC_SV_LIT("lhs"), &ids[0]);
  if (!st) st = kc_program_builder_add_parameter(b, 1, scalar, KC_SV_LIT("rhs"), &ids[1]);
  if (!st) {
    const kc__instr_def* def = kc__instr_def_find(r->opcode);
    if (def->kind == KC__INSTR_ELEMENTWISE) {
      st = kc_program_builder_add_op(b, (kc_opcode)r->opcode, scalar, ids, 2, KC_SV_LIT("result"), &root);
    } else {
      kc_instruction_desc d = {.struct_size = sizeof d, .op = r->opcode, .result_shape = scalar,
                               .operands = ids, .num_operands = 2};
      st = kc_program_builder_add_instruction(b, &d, KC_SV_LIT("result"), &root);
    }
  }
  if (!st) return kc_program_builder_finish(b, out);
  kc_program_builder_destroy(b);
  return st;
}

/* The region's arguments as reduce's reducer(...) (...) groups give them
 * (each group: an accumulator and an element): accumulators first. */
static kc_status* kc__reducer_args(const kc__shlo_op* op, kc__buf* out) {
  const kc__shlo_arg* a = (const kc__shlo_arg*)(const void*)op->region_args.data;
  size_t n = op->region_args.size / sizeof *a;
  if (op->arg_group != 2 || n % 2) {
    return kc__shlo_fail(&op->at, "reduce: expected the reducer's arguments in pairs");
  }
  for (size_t side = 0; side < 2; ++side) {
    for (size_t g = 0; g < n / 2; ++g) {
      if (!kc__buf_append(out, &a[2 * g + side], sizeof *a)) return kc__parse_oom();
    }
  }
  return NULL;
}

/* The region at index i of op as a program; `what` names it. */
static kc_status* kc__region(kc__shlo_scope* s, const kc__shlo_op* op, size_t i,
                             const kc__shlo_arg* args, size_t num_args, const char* what,
                             kc_program** out) {
  if (op->regions.size / sizeof(kc__lexer) <= i) {
    return kc__shlo_fail(&op->at, "%.*s: expected a region (%s)", (int)op->name.size,
                         op->name.data, what);
  }
  const kc__lexer* at = (const kc__lexer*)(const void*)op->regions.data + i;
  return kc__shlo_region_program(s, at, args, num_args, what, out);
}

static size_t kc__num_regions(const kc__shlo_op* op) {
  return op->regions.size / sizeof(kc__lexer);
}

static kc_status* kc__lower_reduce(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc__attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, "dimensions", NULL, "dimensions", true));
  kc_program* body = NULL;
  if (kc__num_regions(op) == 0) {
    KC_RETURN_IF_ERROR(kc__applies_program(s, op, &body));
  } else {
    kc__buf args = {0};
    kc_status* st = op->region_args.size ? kc__reducer_args(op, &args) : NULL;
    if (!st) {
      st = kc__region(s, op, 0, (const kc__shlo_arg*)(const void*)args.data,
                      args.size / sizeof(kc__shlo_arg), "reducer", &body);
    }
    kc__buf_free(&args);
    KC_RETURN_IF_ERROR(st);
  }
  return kc__lower_with(s, op, r, &at, &body, 1);
}

/* "padding = dense<[[l, h], ...]>" into padding_low and padding_high. */
static kc_status* kc__window_padding(kc__shlo_scope* s, const kc__lexer* value, kc__attrs* at) {
  int64_t v[2 * KC_TENSOR_MAX_NDIM], lo[KC_TENSOR_MAX_NDIM], hi[KC_TENSOR_MAX_NDIM];
  size_t n;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, value, "padding", v, KC__ARRAY_SIZE(v), &n));
  if (n % 2) return kc__lex_fail(value, &value->tok, "padding: expected [low, high] pairs");
  for (size_t i = 0; i < n / 2; ++i) {
    lo[i] = v[2 * i];
    hi[i] = v[2 * i + 1];
  }
  KC_RETURN_IF_ERROR(kc__attrs_ints(s, at, "padding_low", lo, n / 2));
  return kc__attrs_ints(s, at, "padding_high", hi, n / 2);
}

/* The window attributes of reduce_window and select_and_scatter. */
static kc_status* kc__window_attrs(kc__shlo_scope* s, const kc__shlo_op* op, kc__attrs* at) {
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, at, "window_dimensions", NULL, "window_dimensions", true));
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, at, "window_strides", NULL, "window_strides", false));
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, at, "base_dilations", NULL, "base_dilations", false));
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, at, "window_dilations", NULL, "window_dilations", false));
  const kc__shlo_item* pad = kc__shlo_attr(op, "padding");
  return pad ? kc__window_padding(s, &pad->at, at) : NULL;
}

static kc_status* kc__lower_reduce_window(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc__attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__window_attrs(s, op, &at));
  kc_program* body = NULL;
  KC_RETURN_IF_ERROR(kc__region(s, op, 0, NULL, 0, "reducer", &body));
  return kc__lower_with(s, op, r, &at, &body, 1);
}

static kc_status* kc__lower_select_and_scatter(kc__shlo_scope* s, kc__shlo_op* op,
                                               const kc__rule* r) {
  kc__attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__window_attrs(s, op, &at));
  kc_program* p[2] = {NULL, NULL};
  KC_RETURN_IF_ERROR(kc__region(s, op, 0, NULL, 0, "select", &p[0]));
  kc_status* st = kc__region(s, op, 1, NULL, 0, "scatter", &p[1]);
  if (st) {
    kc_program_destroy(p[0]);
    return st;
  }
  return kc__lower_with(s, op, r, &at, p, 2);
}

static kc_status* kc__lower_sort(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc__attrs at = {.n = 0};
  int32_t rank = kc_shape_get_rank(kc__shlo_operand(s, op, 0)->shape);
  int64_t d = -1;
  const kc__shlo_item* dim = kc__shlo_attr(op, "dimension");
  if (dim) KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &dim->at, "dimension", &d));
  if (d < 0) d += rank; /* -1, the default: the last dimension */
  KC_RETURN_IF_ERROR(kc__attrs_ints(s, &at, "dimensions", &d, 1));
  const kc__shlo_item* stable = kc__shlo_attr(op, "is_stable");
  bool is_stable = false;
  if (stable) KC_RETURN_IF_ERROR(kc__shlo_bool(s->m, &stable->at, "is_stable", &is_stable));
  kc__attrs_bool(&at, "is_stable", is_stable);
  kc_program* cmp = NULL;
  KC_RETURN_IF_ERROR(kc__region(s, op, 0, NULL, 0, "comparator", &cmp));
  return kc__lower_with(s, op, r, &at, &cmp, 1);
}

/* A field of a dimension-numbers struct copied under HLO's name. */
static kc_status* kc__struct_ints(kc__shlo_scope* s, const kc__shlo_item* dn, kc__attrs* at,
                                  const char* field) {
  kc__lexer f;
  bool found;
  KC_RETURN_IF_ERROR(kc__shlo_field(s->m, &dn->at, field, &f, &found));
  bool vector_dim = !strcmp(field, "index_vector_dim");
  /* MLIR leaves out the fields that have their defaults: empty lists,
   * and index_vector_dim 0. */
  if (!found && vector_dim) {
    kc__attrs_int(at, field, 0);
    return NULL;
  }
  if (!found) return kc__attrs_ints(s, at, field, NULL, 0);
  int64_t v[KC_TENSOR_MAX_NDIM * 2];
  size_t n;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, field, v, KC__ARRAY_SIZE(v), &n));
  if (vector_dim) {
    if (n != 1) return kc__lex_fail(&f, &f.tok, "index_vector_dim: expected one integer");
    kc__attrs_int(at, field, v[0]);
    return NULL;
  }
  return kc__attrs_ints(s, at, field, v, n);
}

static kc_status* kc__copy_bool(kc__shlo_scope* s, const kc__shlo_op* op, kc__attrs* at,
                                const char* name) {
  const kc__shlo_item* it = kc__shlo_attr(op, name);
  if (!it) return NULL;
  bool b;
  KC_RETURN_IF_ERROR(kc__shlo_bool(s->m, &it->at, name, &b));
  kc__attrs_bool(at, name, b);
  return NULL;
}

/* Operands first..first+count-1, known, as the integer-list attributes
 * `names` (the static form's). */
static kc_status* kc__known_attrs(kc__shlo_scope* s, const kc__shlo_op* op, size_t first,
                                  const char* const* names, size_t count, kc__attrs* at) {
  for (size_t k = 0; k < count; ++k) {
    int64_t v[KC_TENSOR_MAX_NDIM];
    size_t n;
    KC_RETURN_IF_ERROR(kc__shlo_known_ints(s, op, first + k, v, KC_TENSOR_MAX_NDIM, &n));
    KC_RETURN_IF_ERROR(kc__attrs_ints(s, at, names[k], v, n));
  }
  return NULL;
}

/* gather; dynamic_gather, whose slice sizes are its third operand. */
static kc_status* kc__gather(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r,
                             bool dynamic_op) {
  static const char* const fields[] = {"offset_dims", "collapsed_slice_dims",
                                       "operand_batching_dims", "start_indices_batching_dims",
                                       "start_index_map", "index_vector_dim"};
  const kc__shlo_item* dn = kc__shlo_attr(op, "dimension_numbers");
  if (!dn) return kc__missing(op, "dimension_numbers");
  kc__attrs at = {.n = 0};
  for (size_t i = 0; i < KC__ARRAY_SIZE(fields); ++i) {
    KC_RETURN_IF_ERROR(kc__struct_ints(s, dn, &at, fields[i]));
  }
  if (dynamic_op) {
    static const char* const sizes[] = {"slice_sizes"};
    KC_RETURN_IF_ERROR(kc__known_attrs(s, op, 2, sizes, 1, &at));
  } else {
    KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, "slice_sizes", NULL, "slice_sizes", true));
  }
  KC_RETURN_IF_ERROR(kc__copy_bool(s, op, &at, "indices_are_sorted"));
  return kc__lower_with_n(s, op, r, 2, &at, NULL, 0);
}

static kc_status* kc__lower_gather(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  return kc__gather(s, op, r, false);
}

static kc_status* kc__lower_dynamic_gather(kc__shlo_scope* s, kc__shlo_op* op,
                                           const kc__rule* r) {
  return kc__gather(s, op, r, true);
}

static kc_status* kc__lower_scatter(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  static const char* const fields[] = {"update_window_dims", "inserted_window_dims",
                                       "input_batching_dims", "scatter_indices_batching_dims",
                                       "scatter_dims_to_operand_dims", "index_vector_dim"};
  const kc__shlo_item* dn = kc__shlo_attr(op, "scatter_dimension_numbers");
  if (!dn) return kc__missing(op, "scatter_dimension_numbers");
  kc__attrs at = {.n = 0};
  for (size_t i = 0; i < KC__ARRAY_SIZE(fields); ++i) {
    KC_RETURN_IF_ERROR(kc__struct_ints(s, dn, &at, fields[i]));
  }
  KC_RETURN_IF_ERROR(kc__copy_bool(s, op, &at, "indices_are_sorted"));
  KC_RETURN_IF_ERROR(kc__copy_bool(s, op, &at, "unique_indices"));
  kc_program* body = NULL;
  KC_RETURN_IF_ERROR(kc__region(s, op, 0, NULL, 0, "update", &body));
  return kc__lower_with(s, op, r, &at, &body, 1);
}

/* ---- control flow --------------------------------------------------------- */

static kc_status* kc__append_unique(kc__buf* into, const kc__buf* from) {
  const int32_t* f = (const int32_t*)(const void*)from->data;
  for (size_t i = 0; i < from->size / sizeof *f; ++i) {
    const int32_t* have = (const int32_t*)(const void*)into->data;
    bool seen = false;
    for (size_t k = 0; k < into->size / sizeof *have && !seen; ++k) seen = have[k] == f[i];
    if (!seen && !kc__buf_append(into, &f[i], sizeof f[i])) return kc__parse_oom();
  }
  return NULL;
}

/* The instruction ids of values (indices into the scope's), appended. */
static kc_status* kc__value_ids(kc__shlo_scope* s, const int32_t* values, size_t n,
                                kc__buf* ids) {
  for (size_t i = 0; i < n; ++i) {
    if (!kc__buf_append(ids, &kc__shlo_value_at(s, values[i])->id, sizeof(int32_t))) {
      return kc__parse_oom();
    }
  }
  return NULL;
}

/* A tuple instruction of `ids`. */
static kc_status* kc__tuple_of(kc__shlo_scope* s, const kc__buf* ids, int32_t* out) {
  return kc_program_builder_add_tuple(s->b, (const int32_t*)(const void*)ids->data,
                                      ids->size / sizeof(int32_t), (kc_string_view){NULL, 0}, out);
}

/* while: the state is (operands..., values the regions capture...);
 * condition and body take it as one tuple, the body passes the captured
 * values on unchanged. */
static kc_status* kc__lower_while(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  size_t n = kc__shlo_num_operands(op);
  const kc__token* names = (const kc__token*)(const void*)op->iter_names.data;
  /* The pretty form names the loop's values in its header; the generic
   * one in each region's ^bb0. */
  size_t named = op->iter_names.size / sizeof *names;
  if (kc__num_regions(op) != 2 || (named != n && named != 0) ||
      kc__shlo_num_result_types(op) != n) {
    return kc__shlo_fail(&op->at, "while: expected (%%iterArg = %%init, ...) : types cond {...} "
                                  "do {...}, a type per operand");
  }
  const kc__lexer* regions = (const kc__lexer*)(const void*)op->regions.data;
  kc__buf args = {0}, caps = {0}, one = {0}, ids = {0}, shapes = {0};
  kc_status* st = NULL;
  for (size_t i = 0; !st && i < n; ++i) {
    kc__shlo_arg a = {.name = named ? names[i] : op->at, .shape = kc__shlo_operand(s, op, i)->shape};
    st = kc__buf_append(&args, &a, sizeof a) ? NULL : kc__parse_oom();
  }
  for (size_t k = 0; !st && k < 2; ++k) {
    one.size = 0;
    st = kc__shlo_region_captures(s, &regions[k], &one);
    if (!st) st = kc__append_unique(&caps, &one);
  }
  const int32_t* cap = (const int32_t*)(const void*)caps.data;
  size_t nc = caps.size / sizeof(int32_t);
  kc_program* p[2] = {NULL, NULL};
  for (size_t k = 0; !st && k < 2; ++k) {
    st = kc__shlo_region_tuple_program(s, &regions[k], (const kc__shlo_arg*)(const void*)args.data,
                                       n, cap, nc, k == 1, k == 1, k ? "body" : "condition", &p[k]);
  }
  if (!st) st = kc__shlo_operand_ids(s, op, 0, n, &ids);
  if (!st) st = kc__value_ids(s, cap, nc, &ids);
  int32_t init = -1, id = -1;
  if (!st) st = kc__tuple_of(s, &ids, &init);
  for (size_t i = 0; !st && i < n + nc; ++i) {
    const kc_shape* e = i < n ? kc__shlo_operand(s, op, i)->shape
                              : kc__shlo_value_at(s, cap[i - n])->shape;
    st = kc__buf_append(&shapes, &e, sizeof e) ? NULL : kc__parse_oom();
  }
  kc_shape* state = NULL;
  if (!st) {
    st = kc_shape_create_tuple((const kc_shape* const*)(const void*)shapes.data, n + nc, &state);
  }
  kc_string_view name;
  if (!st) st = kc__shlo_instr_name(s, op, "while", &name);
  if (!st) {
    kc_instruction_desc d = {.struct_size = sizeof d, .op = r->opcode, .result_shape = state,
                             .operands = &init, .num_operands = 1, .computations = p,
                             .num_computations = 2};
    st = kc_program_builder_add_instruction(s->b, &d, name, &id);
  }
  for (size_t k = 0; k < 2; ++k) kc_program_destroy(p[k]);
  if (!st) st = kc_program_builder_set_location(s->b, id, op->at.line, op->at.column);
  if (!st) st = kc__shlo_bind_results(s, op, id, true);
  kc_shape_destroy(state);
  kc__buf_free(&shapes);
  kc__buf_free(&args);
  kc__buf_free(&caps);
  kc__buf_free(&one);
  kc__buf_free(&ids);
  return st;
}

/* case and if: each branch takes a tuple of the values it captures. */
static kc_status* kc__lower_branches(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  size_t nb = kc__num_regions(op);
  bool is_if = !strcmp(r->name, "if");
  kc_program* progs[64];
  if (nb == 0 || (is_if && nb != 2) || nb > KC__ARRAY_SIZE(progs) ||
      kc__shlo_num_operands(op) != 1) {
    return kc__shlo_fail(&op->at, "%.*s: expected one operand and %s", (int)op->name.size,
                         op->name.data, is_if ? "two regions" : "1 to 64 regions");
  }
  bool tuple = kc__shlo_num_result_types(op) != 1;
  size_t made = 0;
  kc__buf ids = {0}, caps = {0}, capids = {0};
  kc_status* st = kc__shlo_operand_ids(s, op, 0, 1, &ids);
  for (size_t k = 0; !st && k < nb; ++k) {
    const kc__lexer* at = (const kc__lexer*)(const void*)op->regions.data + k;
    caps.size = capids.size = 0;
    st = kc__shlo_region_captures(s, at, &caps);
    const int32_t* cap = (const int32_t*)(const void*)caps.data;
    size_t nc = caps.size / sizeof(int32_t);
    if (!st) {
      st = kc__shlo_region_tuple_program(s, at, NULL, 0, cap, nc, tuple, false,
                                         is_if ? (k ? "false" : "true") : "branch", &progs[k]);
    }
    if (!st) made++;
    if (!st) st = kc__value_ids(s, cap, nc, &capids);
    int32_t t = -1;
    if (!st) st = kc__tuple_of(s, &capids, &t);
    if (!st && !kc__buf_append(&ids, &t, sizeof t)) st = kc__parse_oom();
  }
  /* Results whose types leave dimensions open have the branches' shapes. */
  if (!st && made) {
    const kc_shape* got = kc_program_get_result_shape(progs[0]);
    for (size_t i = 0; !st && i < kc__shlo_num_result_types(op); ++i) {
      const kc_shape* e = tuple ? (kc_shape_is_tuple(got) && i < kc_shape_get_tuple_size(got)
                                       ? kc_shape_get_element(got, i)
                                       : NULL)
                                : got;
      if (e && !kc_shape_is_tuple(e)) {
        st = kc__shlo_refine_result(s, op, i, kc_shape_get_dims(e), kc_shape_get_rank(e));
      }
    }
  }
  if (!st) {
    st = kc__emit(s, op, r->opcode, &ids, NULL, progs, made);
  } else {
    for (size_t k = 0; k < made; ++k) kc_program_destroy(progs[k]);
  }
  kc__buf_free(&ids);
  kc__buf_free(&caps);
  kc__buf_free(&capids);
  return st;
}

/* Results bound to values computed elsewhere (calls, barriers). */
static kc_status* kc__bind_values(kc__shlo_scope* s, const kc__shlo_op* op,
                                  const kc__shlo_value* v, size_t n) {
  if (op->result.kind == KC__TOK_END) return NULL;
  if ((int64_t)n != op->num_results) {
    return kc__shlo_fail(&op->at, "%.*s: %zu values for %lld results", (int)op->name.size,
                         op->name.data, n, (long long)op->num_results);
  }
  const kc__token* names = (const kc__token*)(const void*)op->result_names.data;
  for (size_t k = 0; k < n; ++k) {
    kc_string_view key = op->result.text;
    if (op->result_names.size) {
      key = names[k].text;
    } else if (n > 1) {
      char buf[32];
      int len = snprintf(buf, sizeof buf, "#%zu", k);
      char* t = kc__arena_alloc(&s->m->arena, key.size + (size_t)len + 1);
      if (!t) return kc__parse_oom();
      memcpy(t, key.data, key.size);
      memcpy(t + key.size, buf, (size_t)len + 1);
      key = (kc_string_view){t, key.size + (size_t)len};
    }
    KC_RETURN_IF_ERROR(kc__shlo_bind_value(s, key, &v[k]));
  }
  return NULL;
}

/* optimization_barrier, sharding annotations: their operands. */
static kc_status* kc__lower_identity(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  (void)r;
  kc__buf vals = {0};
  kc_status* st = NULL;
  for (size_t i = 0; !st && i < kc__shlo_num_operands(op); ++i) {
    if (!kc__buf_append(&vals, kc__shlo_operand(s, op, i), sizeof(kc__shlo_value))) {
      st = kc__parse_oom();
    }
  }
  if (!st) {
    st = kc__bind_values(s, op, (const kc__shlo_value*)(const void*)vals.data,
                         vals.size / sizeof(kc__shlo_value));
  }
  kc__buf_free(&vals);
  return st;
}

/* func.call, and composite (its decomposition), inlined. */
static kc_status* kc__lower_call(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  (void)r;
  kc__token callee = op->callee;
  const kc__shlo_item* dec = kc__shlo_attr(op, "decomposition");
  if (!dec) dec = kc__shlo_attr(op, "callee"); /* the generic "func.call" */
  if (dec) {
    kc__lexer lx = dec->at;
    if (!kc__tok_is_punct(&lx.tok, '@')) return kc__lex_expected(&lx, &lx.tok, "@function");
    kc__lex_next(&lx);
    callee = lx.tok;
  }
  if (callee.kind == KC__TOK_END) return kc__missing(op, "@function");
  kc__buf results = {0};
  kc_status* st = kc__shlo_inline_func(s, op, &callee, (const int32_t*)(const void*)op->operands.data,
                                       kc__shlo_num_operands(op), &results);
  if (!st) {
    st = kc__bind_values(s, op, (const kc__shlo_value*)(const void*)results.data,
                         results.size / sizeof(kc__shlo_value));
  }
  kc__buf_free(&results);
  return st;
}

static kc_status* kc__lower_tuple(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  (void)r;
  kc__buf ids = {0};
  kc_string_view name;
  int32_t id = -1;
  kc_status* st = kc__shlo_operand_ids(s, op, 0, kc__shlo_num_operands(op), &ids);
  if (!st) st = kc__shlo_instr_name(s, op, NULL, &name);
  if (!st) {
    st = kc_program_builder_add_tuple(s->b, (const int32_t*)(const void*)ids.data,
                                      ids.size / sizeof(int32_t), name, &id);
  }
  kc__buf_free(&ids);
  if (!st) st = kc__shlo_bind_results(s, op, id, false);
  return st;
}

static kc_status* kc__lower_get_tuple_element(kc__shlo_scope* s, kc__shlo_op* op,
                                              const kc__rule* r) {
  (void)r;
  const kc__shlo_item* it = kc__shlo_attr(op, "index");
  if (!it) it = kc__shlo_word(op, 0);
  if (!it || kc__shlo_num_operands(op) != 1) return kc__missing(op, "index");
  int64_t index;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &it->at, "index", &index));
  kc_string_view name;
  int32_t id;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, NULL, &name));
  KC_RETURN_IF_ERROR(kc_program_builder_add_get_tuple_element(s->b, kc__shlo_operand(s, op, 0)->id,
                                                              index, name, &id));
  return kc__shlo_bind_results(s, op, id, false);
}

/* ---- the rest ------------------------------------------------------------- */

static kc_status* kc__lower_rng(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  const kc__shlo_item* it = kc__either(op, "algorithm", "rng_algorithm");
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
  kc__attrs at = {.n = 0};
  kc__attrs_str(&at, "algorithm", kc_sv(hlo));
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_fft(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  const kc__shlo_item* type = kc__either(op, "type", "fft_type");
  if (!type) return kc__missing(op, "type");
  kc_string_view t;
  KC_RETURN_IF_ERROR(kc__shlo_enum(s->m, &type->at, "the FFT type", &t));
  kc__attrs at = {.n = 0};
  kc__attrs_str(&at, "fft_type", t);
  KC_RETURN_IF_ERROR(kc__copy_ints(s, op, &at, "length", "fft_length", "fft_length", true));
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_reduce_precision(kc__shlo_scope* s, kc__shlo_op* op,
                                             const kc__rule* r) {
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
    if (!a || !b) return kc__missing(op, "format");
    KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &a->at, "exponent_bits", &e));
    KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &b->at, "mantissa_bits", &m));
  }
  kc__attrs at = {.n = 0};
  kc__attrs_int(&at, "exponent_bits", e);
  kc__attrs_int(&at, "mantissa_bits", m);
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

static kc_status* kc__lower_top_k(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  const kc__shlo_item* k = kc__shlo_attr(op, "k");
  if (!k) return kc__missing(op, "k");
  int64_t kv;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &k->at, "k", &kv));
  kc__attrs at = {.n = 0};
  kc__attrs_int(&at, "k", kv);
  kc__attrs_bool(&at, "largest", true);
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

/* One side of a convolution's dimension numbers, "[b, 0, 1, f]", as
 * HLO's labels "b01f", appended to buf at *len. */
static kc_status* kc__conv_side(kc__lexer* lx, char* buf, size_t cap, size_t* len) {
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '['));
  for (bool more = kc__lex_list_begin(lx, ']'); more;) {
    kc_string_view t = lx->tok.text;
    if ((lx->tok.kind != KC__TOK_IDENT && lx->tok.kind != KC__TOK_NUMBER) || t.size != 1 ||
        *len + 4 >= cap) {
      return kc__lex_expected(lx, &lx->tok, "a dimension label (b, f, i, o, 0, 1, ...)");
    }
    buf[(*len)++] = t.data[0];
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, ']', &more));
  }
  return NULL;
}

/* Field `field` of the pretty form's "window = {stride = [1, 1], ...}". */
static kc_status* kc__window_field(const kc__lexer* window, const char* field, kc__lexer* out,
                                   bool* found) {
  kc__lexer lx = *window;
  *found = false;
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '{'));
  for (bool more = kc__lex_list_begin(&lx, '}'); more;) {
    bool mine = kc__tok_is_word(&lx.tok, field);
    kc__lex_next(&lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '='));
    if (mine) {
      *out = lx;
      *found = true;
      return NULL;
    }
    KC_RETURN_IF_ERROR(kc__shlo_skip_value(&lx, false));
    KC_RETURN_IF_ERROR(kc__lex_list_next(&lx, '}', &more));
  }
  return NULL;
}

/* A window field, from the pretty form's window = {...} or the generic
 * form's own attribute. */
static kc_status* kc__conv_field(const kc__shlo_op* op, const char* pretty, const char* generic,
                                 kc__lexer* out, bool* found) {
  const kc__shlo_item* window = kc__shlo_attr(op, "window");
  if (window) return kc__window_field(&window->at, pretty, out, found);
  const kc__shlo_item* it = kc__shlo_attr(op, generic);
  *found = it != NULL;
  if (it) *out = it->at;
  return NULL;
}

/* The I64 array attribute `name` of at, or NULL. */
static const int64_t* kc__attrs_get(const kc__attrs* at, const char* name, size_t* n) {
  for (size_t i = 0; i < at->n; ++i) {
    if (kc_sv_equal(at->a[i].name, kc_sv(name))) {
      *n = at->a[i].type == KC_ATTR_ARRAY ? at->a[i].v.array.count : 1;
      return at->a[i].type == KC_ATTR_ARRAY ? at->a[i].v.array.data : &at->a[i].v.i64;
    }
  }
  return NULL;
}

/* A convolution's result type refined where it leaves dimensions open:
 * batch from the input's (over batch_group_count), features from the
 * kernel's output features, each spatial dimension as its window slides
 * over the padded, dilated input. `labels` are HLO's dim_labels, the
 * kernel's at [kernel_at, kernel_end); `at` the attributes built. */
static kc_status* kc__refine_convolution(kc__shlo_scope* s, kc__shlo_op* op, const char* labels,
                                         size_t kernel_at, size_t kernel_end,
                                         const kc__attrs* at) {
  if (!kc__shlo_dynamic(s->m, kc__shlo_result_type(op, 0))) return NULL;
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  const kc_shape* k = kc__shlo_operand(s, op, 1)->shape;
  const char* in = labels;
  const char* kern = labels + kernel_at;
  const char* out = labels + kernel_end + 2;
  size_t n_in = kernel_at - 1, n_out = strlen(out);
  size_t n;
  const int64_t* groups = kc__attrs_get(at, "batch_group_count", &n);
  const int64_t* str = kc__attrs_get(at, "window_strides", &n);
  const int64_t* lo = kc__attrs_get(at, "padding_low", &n);
  const int64_t* hi = kc__attrs_get(at, "padding_high", &n);
  const int64_t* bd = kc__attrs_get(at, "base_dilations", &n);
  const int64_t* wd = kc__attrs_get(at, "window_dilations", &n);
  int64_t dims[KC_TENSOR_MAX_NDIM];
  if (n_out > KC_TENSOR_MAX_NDIM) return kc__shlo_fail(&op->at, "convolution: labels");
  for (size_t d = 0; d < n_out; ++d) {
    char c = out[d];
    const char* pi = memchr(in, c == 'f' ? 'f' : c, n_in);
    const char* pk = memchr(kern, c == 'f' ? 'o' : c, kernel_end - kernel_at);
    if (c == 'b' && pi) {
      dims[d] = kc_shape_get_dims(x)[pi - in] / (groups && *groups > 0 ? *groups : 1);
    } else if (c == 'f' && pk) {
      dims[d] = kc_shape_get_dims(k)[pk - kern];
    } else if (c >= '0' && c <= '9' && pi && pk) {
      size_t i = (size_t)(c - '0');
      if (!kc__window_positions(kc_shape_get_dims(x)[pi - in], lo ? lo[i] : 0, hi ? hi[i] : 0,
                                bd ? bd[i] : 1, kc_shape_get_dims(k)[pk - kern],
                                wd ? wd[i] : 1, str ? str[i] : 1, &dims[d])) {
        return kc__shlo_fail(&op->at, "convolution: spatial dimension %zu: the window, padding "
                                      "and dilations overflow 64 bits", i);
      }
    } else {
      return kc__shlo_fail(&op->at, "convolution: dimension labels %s", labels);
    }
  }
  return kc__shlo_refine_result(s, op, 0, dims, (int32_t)n_out);
}

static kc_status* kc__lower_convolution(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  const kc__shlo_item* dn = kc__either(op, "dim_numbers", "dimension_numbers");
  if (!dn) return kc__missing(op, "dim_numbers");
  if (kc__shlo_num_operands(op) != 2) {
    return kc__shlo_fail(&op->at, "convolution: expected two operands");
  }
  kc__lexer lx = kc__shlo_resolve(s->m, &dn->at);
  if (kc__tok_is_punct(&lx.tok, '#')) {
    /* #stablehlo.conv<[b, 0, 1, f]x[...]->[...]> */
    kc__lex_next(&lx);
    kc__lex_next(&lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '<'));
  }
  char labels[64];
  size_t len = 0;
  KC_RETURN_IF_ERROR(kc__conv_side(&lx, labels, sizeof labels, &len));
  labels[len++] = '_';
  size_t kernel_at = len;
  if (!kc__tok_is_word(&lx.tok, "x")) return kc__lex_expected(&lx, &lx.tok, "'x'");
  kc__lex_next(&lx);
  KC_RETURN_IF_ERROR(kc__conv_side(&lx, labels, sizeof labels, &len));
  size_t kernel_end = len;
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '-'));
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '>'));
  labels[len++] = '-';
  labels[len++] = '>';
  KC_RETURN_IF_ERROR(kc__conv_side(&lx, labels, sizeof labels, &len));
  kc__attrs at = {.n = 0};
  char* text = kc__arena_strdup(&s->m->arena, (kc_string_view){labels, len});
  if (!text) return kc__parse_oom();
  kc__attrs_str(&at, "dim_labels", (kc_string_view){text, len});
  /* The window's size: the kernel's spatial dims, in spatial order. */
  const kc_shape* kernel = kc__shlo_operand(s, op, 1)->shape;
  int64_t size[KC_TENSOR_MAX_NDIM];
  size_t spatial = 0;
  for (char d = '0'; d <= '9'; ++d) {
    const char* p = memchr(labels + kernel_at, d, kernel_end - kernel_at);
    if (!p || (int32_t)(p - (labels + kernel_at)) >= kc_shape_get_rank(kernel)) break;
    size[spatial++] = kc_shape_get_dims(kernel)[p - (labels + kernel_at)];
  }
  if (spatial) KC_RETURN_IF_ERROR(kc__attrs_ints(s, &at, "window_dimensions", size, spatial));
  static const char* const pretty[] = {"stride", "lhs_dilate", "rhs_dilate"};
  static const char* const generic[] = {"window_strides", "lhs_dilation", "rhs_dilation"};
  static const char* const hlo[] = {"window_strides", "base_dilations", "window_dilations"};
  kc__lexer f;
  bool found;
  for (int k = 0; k < 3; ++k) {
    KC_RETURN_IF_ERROR(kc__conv_field(op, pretty[k], generic[k], &f, &found));
    if (!found) continue;
    int64_t v[KC_TENSOR_MAX_NDIM];
    size_t n;
    KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, hlo[k], v, KC_TENSOR_MAX_NDIM, &n));
    KC_RETURN_IF_ERROR(kc__attrs_ints(s, &at, hlo[k], v, n));
  }
  KC_RETURN_IF_ERROR(kc__conv_field(op, "pad", "padding", &f, &found));
  if (found) KC_RETURN_IF_ERROR(kc__window_padding(s, &f, &at));
  KC_RETURN_IF_ERROR(kc__conv_field(op, "reverse", "window_reversal", &f, &found));
  if (found) {
    int64_t v[KC_TENSOR_MAX_NDIM];
    size_t n;
    KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, "reverse", v, KC_TENSOR_MAX_NDIM, &n));
    for (size_t i = 0; i < n; ++i) {
      if (v[i]) return kc__shlo_fail(&op->at, "convolution: window reversal is not supported");
    }
  }
  static const char* const counts[] = {"feature_group_count", "batch_group_count"};
  for (int k = 0; k < 2; ++k) {
    const kc__shlo_item* it = kc__shlo_attr(op, counts[k]);
    int64_t v = 1;
    if (it) KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &it->at, counts[k], &v));
    kc__attrs_int(&at, counts[k], v);
  }
  KC_RETURN_IF_ERROR(kc__refine_convolution(s, op, text, kernel_at, kernel_end, &at));
  return kc__lower_with(s, op, r, &at, NULL, 0);
}

/* ---- shape-polymorphic ops, in their static forms -------------------------- */

/* get_dimension_size: the size of a dimension of the (refined) operand,
 * as a constant. */
static kc_status* kc__lower_dimension_size(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  (void)r;
  const kc__shlo_item* it = kc__either(op, "dim", "dimension");
  if (!it || kc__shlo_num_operands(op) != 1 || kc__shlo_num_result_types(op) != 1) {
    return kc__missing(op, "dim");
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
static kc_status* kc__lower_first_operand(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  return kc__lower_with_n(s, op, r, 1, NULL, NULL, 0);
}

static kc_status* kc__lower_dynamic_iota(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  const kc__shlo_item* it = kc__either(op, "dim", "iota_dimension");
  if (!it) return kc__missing(op, "iota_dimension");
  int64_t d;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &it->at, "iota_dimension", &d));
  kc__attrs at = {.n = 0};
  kc__attrs_int(&at, "iota_dimension", d);
  return kc__lower_with_n(s, op, r, 0, &at, NULL, 0);
}

static kc_status* kc__lower_real_dynamic_slice(kc__shlo_scope* s, kc__shlo_op* op,
                                               const kc__rule* r) {
  static const char* const names[] = {"start_indices", "limit_indices", "strides"};
  kc__attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__known_attrs(s, op, 1, names, 3, &at));
  return kc__lower_with_n(s, op, r, 1, &at, NULL, 0);
}

static kc_status* kc__lower_dynamic_pad(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  static const char* const names[] = {"edge_padding_low", "edge_padding_high",
                                      "interior_padding"};
  kc__attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__known_attrs(s, op, 2, names, 3, &at));
  return kc__lower_with_n(s, op, r, 2, &at, NULL, 0);
}

/* A custom call to shape_assertion, as jax.export checks the shapes a
 * shape-polymorphic module is given: nothing when its condition holds;
 * its error_message, with {0}, {1}, ... the values after the condition,
 * when it does not. */
static kc_status* kc__shape_assertion(kc__shlo_scope* s, kc__shlo_op* op) {
  const kc__shlo_item* msg = kc__shlo_attr(op, "error_message");
  /* What JAX writes beside it says only how XLA calls the check. */
  kc__shlo_attr(op, "api_version");
  kc__shlo_attr(op, "has_side_effect");
  size_t n = kc__shlo_num_operands(op);
  const int64_t* ok = n ? kc__shlo_known(s, op, 0) : NULL;
  if (!ok) {
    return kc__shlo_fail(&op->at, "shape_assertion: its condition is not known while the "
                                  "module is read");
  }
  if (ok[0]) return NULL;
  kc_string_view text = KC_SV_LIT("shape assertion failed");
  if (msg) KC_RETURN_IF_ERROR(kc__shlo_string(s->m, &msg->at, "error_message", &text));
  char out[1024];
  size_t len = 0;
  for (size_t i = 0; i < text.size; ++i) {
    size_t k = 0, j = i + 1;
    if (text.data[i] == '{') {
      while (j < text.size && text.data[j] >= '0' && text.data[j] <= '9' && k < 1000) {
        k = k * 10 + (size_t)(text.data[j++] - '0');
      }
    }
    if (text.data[i] == '{' && j > i + 1 && j < text.size && text.data[j] == '}' &&
        k + 1 < n && kc__shlo_known(s, op, k + 1)) {
      kc__appendf(out, sizeof out, &len, "%lld", (long long)kc__shlo_known(s, op, k + 1)[0]);
      i = j;
    } else {
      kc__appendf(out, sizeof out, &len, "%c", text.data[i]);
    }
  }
  return kc_status_create(KC_INVALID_ARGUMENT, "%s", out);
}

/* The layouts a custom call gives its operands or results
 * ([dense<[1, 0]> : tensor<2xindex>, ...], minor to major), one per
 * array of `shapes`: into m2m[i], nondefault[i] saying whether it is other
 * than row-major. Without the attribute, all are row-major. */
static kc_status* kc__read_layouts(kc__shlo_scope* s, const kc__shlo_op* op, const char* key,
                                   const kc_shape* const* shapes, size_t n,
                                   int8_t (*m2m)[KC_TENSOR_MAX_NDIM], bool* nondefault) {
  for (size_t i = 0; i < n; ++i) nondefault[i] = false;
  const kc__shlo_item* it = kc__shlo_attr(op, key);
  if (!it) return NULL;
  kc__lexer lx = it->at;
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '['));
  size_t i = 0;
  for (bool more = kc__lex_list_begin(&lx, ']'); more; ++i) {
    int64_t v[KC_TENSOR_MAX_NDIM];
    size_t rank;
    kc__token at = lx.tok;
    KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &lx, key, v, KC_TENSOR_MAX_NDIM, &rank));
    bool seen[KC_TENSOR_MAX_NDIM] = {false};
    bool array = i < n && !kc_shape_is_tuple(shapes[i]);
    bool ok = array && (int32_t)rank == kc_shape_get_rank(shapes[i]);
    for (size_t k = 0; ok && k < rank; ++k) {
      ok = v[k] >= 0 && v[k] < (int64_t)rank && !seen[v[k]];
      if (ok) seen[v[k]] = true;
      if (ok) m2m[i][k] = (int8_t)v[k];
      if (ok && v[k] != (int64_t)(rank - 1 - k)) nondefault[i] = true;
    }
    if (!ok) {
      return kc__shlo_fail(&at, "custom_call: %s: layout %zu: expected each dimension of an "
                           "array of %zu once", key, i, i < n ? (size_t)kc_shape_get_rank(shapes[i]) : (size_t)0);
    }
    KC_RETURN_IF_ERROR(kc__shlo_skip_value(&lx, true));
    KC_RETURN_IF_ERROR(kc__lex_list_next(&lx, ']', &more));
  }
  if (i != n) {
    return kc__shlo_fail(&it->at.tok, "custom_call: %s: %zu layouts for %zu arrays", key, i, n);
  }
  return NULL;
}

/* output_operand_aliases = [#stablehlo.output_operand_alias<
 * output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>]
 * into the builder's form, in the module's arena. */
static kc_status* kc__read_aliases(kc__shlo_scope* s, const kc__shlo_item* it,
                                   kc_output_operand_alias** out, size_t* count) {
  *out = NULL;
  *count = 0;
  kc__lexer lx = it->at;
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '['));
  kc__buf list = {0};
  kc_status* st = NULL;
  for (bool more = kc__lex_list_begin(&lx, ']'); more && !st;) {
    kc_output_operand_alias a;
    memset(&a, 0, sizeof a);
    static const char* const fields[] = {"output_tuple_indices", "operand_index",
                                         "operand_tuple_indices"};
    for (int f = 0; f < 3 && !st; ++f) {
      kc__lexer v;
      bool found = false;
      int64_t ints[KC_TENSOR_MAX_NDIM];
      size_t n = 0;
      st = kc__shlo_field(s->m, &lx, fields[f], &v, &found);
      if (!st && found) st = kc__shlo_ints(s->m, &v, fields[f], ints, KC_TENSOR_MAX_NDIM, &n);
      if (st) break;
      if (f == 1) {
        if (n != 1 || ints[0] < 0 || ints[0] > INT32_MAX) {
          st = kc__shlo_fail(&lx.tok, "output_operand_alias: expected an operand_index");
        } else {
          a.operand = (int32_t)ints[0];
        }
        continue;
      }
      int64_t* copy = kc__arena_dup(&s->m->arena, ints, n * sizeof *ints);
      if (!copy) st = kc__parse_oom();
      if (f == 0) {
        a.output_index = copy;
        a.output_index_size = n;
      } else {
        a.operand_index = copy;
        a.operand_index_size = n;
      }
    }
    if (!st && !kc__buf_append(&list, &a, sizeof a)) st = kc__parse_oom();
    if (!st) st = kc__shlo_skip_value(&lx, false);
    if (!st) st = kc__lex_list_next(&lx, ']', &more);
  }
  if (!st && list.size) {
    *count = list.size / sizeof(kc_output_operand_alias);
    *out = kc__arena_dup(&s->m->arena, list.data, list.size);
    if (!*out) st = kc__parse_oom();
  }
  kc__buf_free(&list);
  return st;
}

static bool kc__is_empty_list(const kc__shlo_item* it) {
  if (!kc__tok_is_punct(&it->at.tok, '[')) return false;
  kc__token next = kc__lex_peek(&it->at);
  return kc__tok_is_punct(&next, ']');
}

/* The custom call `d` describes, with op's operands and results: each
 * handed over, and read back, in the layout operand_layouts and
 * result_layouts give it (JAX's LAPACK calls take column-major
 * matrices), through the HLO parser's layout conversions. */
static kc_status* kc__laid_out_call(kc__shlo_scope* s, const kc__shlo_op* op,
                                    kc_custom_call_desc* d) {
  enum { kMax = 64 };
  size_t n = kc__shlo_num_operands(op), nr = kc__shlo_num_result_types(op);
  if (n > kMax || nr > kMax) return kc__shlo_fail(&op->at, "custom_call: more than 64 operands or results");
  const kc_shape* in_shapes[kMax];
  int32_t ops[kMax];
  int8_t m2m[kMax][KC_TENSOR_MAX_NDIM];
  bool nondefault[kMax];
  for (size_t i = 0; i < n; ++i) {
    in_shapes[i] = kc__shlo_operand(s, op, i)->shape;
    ops[i] = kc__shlo_operand(s, op, i)->id;
  }
  KC_RETURN_IF_ERROR(kc__read_layouts(s, op, "operand_layouts", in_shapes, n, m2m, nondefault));
  kc_string_view name;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, NULL, &name));
  for (size_t i = 0; i < n; ++i) {
    if (!nondefault[i]) continue;
    char suffix[32];
    snprintf(suffix, sizeof suffix, "operand%zu", i);
    kc_string_view at;
    KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, suffix, &at));
    KC_RETURN_IF_ERROR(kc__layout_to_physical(s->b, &s->m->arena, ops[i], in_shapes[i], m2m[i],
                                              at, &ops[i]));
  }
  const kc_shape* const* out_shapes = (const kc_shape* const*)(const void*)op->result_types.data;
  KC_RETURN_IF_ERROR(kc__read_layouts(s, op, "result_layouts", out_shapes, nr, m2m, nondefault));
  bool tuple = false;
  const kc_shape* shape = NULL;
  KC_RETURN_IF_ERROR(kc__result_shape(s, op, &tuple, &shape));
  d->operands = ops;
  d->num_operands = n;
  d->result_shape = shape;
  kc_string_view call_name;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, "call", &call_name));
  int32_t id = -1;
  KC_RETURN_IF_ERROR(kc_program_builder_add_custom_call(s->b, d, call_name, &id));
  KC_RETURN_IF_ERROR(kc_program_builder_set_location(s->b, id, op->at.line, op->at.column));
  /* Its results, each read back from its layout. */
  kc__shlo_value results[kMax];
  memset(results, 0, sizeof results);
  for (size_t i = 0; i < nr; ++i) {
    results[i].shape = out_shapes[i];
    results[i].id = id;
    char suffix[32];
    snprintf(suffix, sizeof suffix, "result%zu", i);
    kc_string_view at, element = {NULL, 0};
    KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, suffix, &at));
    if (tuple) {
      snprintf(suffix, sizeof suffix, "result%zu_laid_out", i);
      if (nondefault[i]) KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, suffix, &element));
      KC_RETURN_IF_ERROR(kc_program_builder_add_get_tuple_element(
          s->b, id, (int64_t)i, nondefault[i] ? element : at, &results[i].id));
    }
    if (nondefault[i]) {
      KC_RETURN_IF_ERROR(kc__layout_from_physical(s->b, &s->m->arena, results[i].id,
                                                  out_shapes[i], m2m[i],
                                                  nr == 1 ? name : at, &results[i].id));
    }
  }
  return kc__bind_values(s, op, results, nr);
}

static kc_status* kc__lower_custom_call(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
  kc_string_view target = op->callee.text;
  if (op->callee.kind == KC__TOK_END) {
    const kc__shlo_item* t = kc__shlo_attr(op, "call_target_name");
    if (!t) return kc__missing(op, "@target");
    KC_RETURN_IF_ERROR(kc__shlo_string(s->m, &t->at, "call_target_name", &target));
  }
  if (kc_sv_equal(target, KC_SV_LIT("shape_assertion"))) return kc__shape_assertion(s, op);
  /* Sharding annotations: their operand, on one device. */
  if (kc_sv_equal(target, KC_SV_LIT("Sharding")) ||
      kc_sv_equal(target, KC_SV_LIT("xla.sdy.FuncResultSharding")) ||
      kc_sv_equal(target, KC_SV_LIT("xla.sdy.FuncArgSharding"))) {
    return kc__lower_identity(s, op, r);
  }
  const kc__shlo_item* called = kc__shlo_attr(op, "called_computations");
  if (called && !kc__is_empty_list(called)) {
    return kc__shlo_fail(&op->at, "custom_call @%.*s: called_computations are not supported",
                         (int)target.size, target.data);
  }
  int64_t api = 0;
  const kc__shlo_item* v = kc__shlo_attr(op, "api_version");
  if (v) KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &v->at, "api_version", &api));
  /* Typed FFI attributes: backend_config as a dictionary, or (as JAX
   * writes them) mhlo.backend_config beside an empty string. */
  const kc__shlo_item* dict = kc__shlo_attr(op, "mhlo.backend_config");
  const kc__shlo_item* config = kc__shlo_attr(op, "backend_config");
  if (config && kc__tok_is_punct(&config->at.tok, '{')) {
    dict = config;
    config = NULL;
  }
  /* JAX writes a typed FFI call as the default (original) version with
   * mhlo.backend_config beside it, stated or not; XLA reads it as typed. */
  if (api <= KC_XCALL_API_ORIGINAL) api = dict ? KC_XCALL_API_TYPED : KC_XCALL_API_ORIGINAL;
  kc_custom_call_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.target = target;
  d.api_version = (int32_t)api;
  kc_attr_dict attrs = {0, NULL};
  if (dict) {
    kc__lexer lx = dict->at;
    KC_RETURN_IF_ERROR(kc__parse_typed_attr_dict(&lx, &s->m->arena, &attrs));
    d.attrs = &attrs;
  }
  if (config) {
    kc_string_view bytes;
    KC_RETURN_IF_ERROR(kc__shlo_string(s->m, &config->at, "backend_config", &bytes));
    d.opaque = bytes.data;
    d.opaque_size = bytes.size;
  }
  const kc__shlo_item* alias = kc__shlo_attr(op, "output_operand_aliases");
  if (alias) {
    kc_output_operand_alias* aliases = NULL;
    KC_RETURN_IF_ERROR(kc__read_aliases(s, alias, &aliases, &d.num_aliases));
    d.aliases = aliases;
  }
  const kc__shlo_item* side = kc__shlo_attr(op, "has_side_effect");
  if (side && !kc__tok_is_word(&side->at.tok, "true") && !kc__tok_is_word(&side->at.tok, "false")) {
    d.has_side_effect = true; /* a unit attribute */
  } else if (side) {
    KC_RETURN_IF_ERROR(kc__shlo_bool(s->m, &side->at, "has_side_effect", &d.has_side_effect));
  }
  return kc__laid_out_call(s, op, &d);
}

/* ---- CHLO ops without an HLO instruction, as instructions ---------------- */

/* Builds element-wise instructions of one shape for a decomposition; the
 * first failure is kept in `st` and later calls do nothing. */
typedef struct kc__expr {
  kc__shlo_scope* s;
  const kc__shlo_op* op;
  const kc_shape* shape; /* the values' */
  kc_shape* pred;        /* pred of the same dims, owned */
  kc_status* st;
} kc__expr;

static int32_t kc__e_add(kc__expr* e, int32_t opcode, const kc_shape* shape, const int32_t* ids,
                         size_t n, const kc_attr_dict* attrs) {
  int32_t id = -1;
  kc_string_view name;
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] < 0) return -1;
  }
  if (!e->st) e->st = kc__shlo_instr_name(e->s, e->op, "erf_inv", &name);
  if (e->st) return -1;
  const kc__instr_def* def = kc__instr_def_find(opcode);
  if (def->kind == KC__INSTR_ELEMENTWISE) {
    e->st = kc_program_builder_add_op(e->s->b, (kc_opcode)opcode, shape, ids, n, name, &id);
  } else {
    kc_instruction_desc d = {.struct_size = sizeof d, .op = opcode, .result_shape = shape,
                             .operands = ids, .num_operands = n, .attrs = attrs};
    e->st = kc_program_builder_add_instruction(e->s->b, &d, name, &id);
  }
  return e->st ? -1 : id;
}

static int32_t kc__e_op(kc__expr* e, int32_t opcode, int32_t a, int32_t b) {
  int32_t ids[2] = {a, b};
  return kc__e_add(e, opcode, e->shape, ids, b < -1 ? 1 : 2, NULL);
}

#define KC__UNARY (-2) /* kc__e_op's b for a one-operand op */

/* The f32 constant v, broadcast to the shape. */
static int32_t kc__e_const(kc__expr* e, float v) {
  if (e->st) return -1;
  kc_shape* scalar = NULL;
  int32_t c = -1, id = -1;
  kc_string_view name;
  e->st = kc_shape_create_array(kc_shape_get_dtype(e->shape), NULL, 0, &scalar);
  if (!e->st) e->st = kc__shlo_instr_name(e->s, e->op, "erf_inv", &name);
  if (!e->st) e->st = kc_program_builder_add_constant(e->s->b, scalar, &v, sizeof v, name, &c);
  if (!e->st) e->st = kc__shlo_instr_name(e->s, e->op, "erf_inv", &name);
  if (!e->st) e->st = kc_program_builder_add_broadcast(e->s->b, e->shape, c, NULL, 0, name, &id);
  kc_shape_destroy(scalar);
  return e->st ? -1 : id;
}

static int32_t kc__e_compare(kc__expr* e, const char* direction, int32_t a, int32_t b) {
  kc_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.name = KC_SV_LIT("direction");
  attr.type = KC_ATTR_STRING;
  attr.v.str = kc_sv(direction);
  kc_attr_dict attrs = {.count = 1, .entries = &attr};
  int32_t ids[2] = {a, b};
  return kc__e_add(e, KC_OP_COMPARE, e->pred, ids, 2, &attrs);
}

static int32_t kc__e_select(kc__expr* e, int32_t p, int32_t a, int32_t b) {
  int32_t ids[3] = {p, a, b};
  return kc__e_add(e, KC_OP_SELECT, e->shape, ids, 3, NULL);
}

/* chlo.erf_inv of f32 (f16 and bf16 through f32), as XLA expands it: M.
 * Giles' single-precision approximation ("Approximating the erfinv
 * function", GPU Computing Gems, 2011), a polynomial in w = -log((1 - x)(1
 * + x)) on each side of w = 5, and +-inf at +-1. */
static kc_status* kc__lower_erf_inv(kc__shlo_scope* s, kc__shlo_op* op, const kc__rule* r) {
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
  kc__expr e = {.s = s, .op = op};
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
  return kc__bind_values(s, op, &result, 1);
}

/* ---- the table ------------------------------------------------------------ */

#define KC__PLAIN(name, op) {name, op, kc__lower_plain}

/* By the op's name without its dialect. CHLO ops are read only where
 * they are an HLO instruction kcall runs (chlo.erf, chlo.tan, chlo.top_k);
 * `chlo` marks them. */
static const struct {
  kc__rule rule;
  bool chlo;
} kc__rules[] = {
    {KC__PLAIN("add", KC_OP_ADD), false},
    {KC__PLAIN("subtract", KC_OP_SUBTRACT), false},
    {KC__PLAIN("multiply", KC_OP_MULTIPLY), false},
    {KC__PLAIN("divide", KC_OP_DIVIDE), false},
    {KC__PLAIN("maximum", KC_OP_MAXIMUM), false},
    {KC__PLAIN("minimum", KC_OP_MINIMUM), false},
    {KC__PLAIN("negate", KC_OP_NEGATE), false},
    {KC__PLAIN("exponential", KC_OP_EXPONENTIAL), false},
    {KC__PLAIN("log", KC_OP_LOG), false},
    {KC__PLAIN("convert", KC_OP_CONVERT), false},
    {KC__PLAIN("reshape", KC_OP_RESHAPE), false},
    {KC__PLAIN("abs", KC_OP_ABS), false},
    {KC__PLAIN("sign", KC_OP_SIGN), false},
    {KC__PLAIN("sqrt", KC_OP_SQRT), false},
    {KC__PLAIN("rsqrt", KC_OP_RSQRT), false},
    {KC__PLAIN("cbrt", KC_OP_CBRT), false},
    {KC__PLAIN("tanh", KC_OP_TANH), false},
    {KC__PLAIN("logistic", KC_OP_LOGISTIC), false},
    {KC__PLAIN("sine", KC_OP_SINE), false},
    {KC__PLAIN("cosine", KC_OP_COSINE), false},
    {KC__PLAIN("tan", KC_OP_TAN), false},
    {KC__PLAIN("tan", KC_OP_TAN), true},
    {KC__PLAIN("erf", KC_OP_ERF), true},
    {{"erf_inv", KC__OP_NONE, kc__lower_erf_inv}, true},
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
    {KC__PLAIN("bitcast_convert", KC_OP_BITCAST_CONVERT), false},
    {KC__PLAIN("power", KC_OP_POWER), false},
    {KC__PLAIN("remainder", KC_OP_REMAINDER), false},
    {KC__PLAIN("atan2", KC_OP_ATAN2), false},
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
    {{"dot_general", KC_OP_DOT, kc__lower_dot}, false},
    {{"reduce", KC_OP_REDUCE, kc__lower_reduce}, false},
    {{"reduce_window", KC_OP_REDUCE_WINDOW, kc__lower_reduce_window}, false},
    {{"select_and_scatter", KC_OP_SELECT_AND_SCATTER, kc__lower_select_and_scatter}, false},
    {{"sort", KC_OP_SORT, kc__lower_sort}, false},
    {{"gather", KC_OP_GATHER, kc__lower_gather}, false},
    {{"scatter", KC_OP_SCATTER, kc__lower_scatter}, false},
    {{"while", KC_OP_WHILE, kc__lower_while}, false},
    {{"case", KC_OP_CONDITIONAL, kc__lower_branches}, false},
    {{"if", KC_OP_CONDITIONAL, kc__lower_branches}, false},
    {{"optimization_barrier", KC__OP_NONE, kc__lower_identity}, false},
    {{"tuple", KC__OP_NONE, kc__lower_tuple}, false},
    {{"get_tuple_element", KC__OP_NONE, kc__lower_get_tuple_element}, false},
    {{"rng_bit_generator", KC_OP_RNG_BIT_GENERATOR, kc__lower_rng}, false},
    {{"fft", KC_OP_FFT, kc__lower_fft}, false},
    {{"reduce_precision", KC_OP_REDUCE_PRECISION, kc__lower_reduce_precision}, false},
    {{"convolution", KC_OP_CONVOLUTION, kc__lower_convolution}, false},
    {{"custom_call", KC__OP_NONE, kc__lower_custom_call}, false},
    {{"composite", KC__OP_NONE, kc__lower_call}, false},
    {{"top_k", KC_OP_TOPK, kc__lower_top_k}, true},
    {{"get_dimension_size", KC__OP_NONE, kc__lower_dimension_size}, false},
    {{"dynamic_broadcast_in_dim", KC__OP_NONE, kc__lower_broadcast}, false},
    {{"dynamic_reshape", KC_OP_RESHAPE, kc__lower_first_operand}, false},
    {{"dynamic_iota", KC_OP_IOTA, kc__lower_dynamic_iota}, false},
    {{"real_dynamic_slice", KC_OP_SLICE, kc__lower_real_dynamic_slice}, false},
    {{"dynamic_pad", KC_OP_PAD, kc__lower_dynamic_pad}, false},
    {{"dynamic_gather", KC_OP_GATHER, kc__lower_dynamic_gather}, false},
};

static const kc__rule kc__call_rule = {"call", KC__OP_NONE, kc__lower_call};

static const kc__rule* kc__find_rule(kc_string_view name) {
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
  const kc__rule* r = kc__find_rule(op->name);
  if (r) KC_RETURN_IF_ERROR(kc__shlo_refine(s, op));
  if (!r) {
    return kc__shlo_fail(&op->at,
                         "op %.*s is not supported (kcall reads the StableHLO ops that have an "
                         "HLO instruction it runs, and chlo.erf, erf_inv, tan and top_k)",
                         (int)op->name.size, op->name.data);
  }
  KC_RETURN_IF_ERROR(r->fn(s, op, r));
  KC_RETURN_IF_ERROR(kc__unread_attrs(op));
  return kc__shlo_fold(s, op);
}
