/* Symbolic dims (op.h, "Symbolic dims"): the expressions a shape function
 * builds when it runs on symbolic input dims, the assumptions it makes,
 * and the result kc_op_infer_symbolic hands back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/grow.h"
#include "op/op_internal.h"

/* ---- codes ------------------------------------------------------------- */

/* A symbolic dim holds its index far below KC_DIM_SYMBOL's range, with a
 * 16-bit check field, so that a dim a shape function computed with C
 * arithmetic on a code (code + 1) is refused, not read as another one. */
#define KC__SYM_BASE (-(INT64_C(1) << 50))

static int64_t kc__sym_check(size_t index) {
  return (int64_t)((index * 40503u + 0x5a17u) & 0xffffu);
}

int64_t kc__sym_code(size_t index) {
  return KC__SYM_BASE - ((int64_t)index << 16) - kc__sym_check(index);
}

bool kc__sym_decode(const kc__sym_table* t, int64_t dim, size_t* out_index) {
  if (!t || dim > KC__SYM_BASE) return false;
  int64_t v = KC__SYM_BASE - dim; /* no overflow: dim >= INT64_MIN */
  size_t index = (size_t)(v >> 16);
  if (index >= t->num_exprs || (v & 0xffff) != kc__sym_check(index)) {
    return false;
  }
  *out_index = index;
  return true;
}

static bool kc__is_sym(int64_t dim) { return dim < KC_DIM_UNKNOWN; }

kc_status* kc__dim_check(const kc_shape_ctx* ctx, int64_t dim,
                         const char* what) {
  size_t index;
  if (dim >= KC_DIM_UNKNOWN) return NULL;
  if (ctx && ctx->sym && kc__sym_decode(ctx->sym, dim, &index)) return NULL;
  if (ctx && ctx->sym) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: dim %lld is neither a size, KC_DIM_UNKNOWN "
                            "nor a symbolic dim of this context",
                            what, (long long)dim);
  }
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "%s: dim %lld is neither a size nor KC_DIM_UNKNOWN "
                          "(symbolic dims exist only while a symbolic shape "
                          "function runs)",
                          what, (long long)dim);
}

/* ---- the table --------------------------------------------------------- */

kc_status* kc__sym_add_expr(kc__sym_table* t, int32_t kind, int64_t a,
                            int64_t b, int64_t* out_dim) {
  if (!KC__GROW(t->exprs, t->cap_exprs, t->num_exprs + 1)) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory in symbolic shape inference");
  }
  t->exprs[t->num_exprs] = (kc__dim_expr){.kind = kind, .a = a, .b = b};
  *out_dim = kc__sym_code(t->num_exprs++);
  return NULL;
}

kc_status* kc__sym_assume(kc__sym_table* t, int32_t kind, int64_t lhs,
                          int64_t rhs) {
  for (size_t i = 0; i < t->num_assumptions; ++i) {
    const kc__dim_assumption* a = &t->assumptions[i];
    if (a->kind == kind && kc__sym_same(t, a->lhs, lhs) &&
        kc__sym_same(t, a->rhs, rhs)) {
      return NULL;
    }
  }
  if (!KC__GROW(t->assumptions, t->cap_assumptions, t->num_assumptions + 1)) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory in symbolic shape inference");
  }
  t->assumptions[t->num_assumptions++] =
      (kc__dim_assumption){.kind = kind, .lhs = lhs, .rhs = rhs};
  return NULL;
}

void kc__sym_table_clear(kc__sym_table* t) {
  kc__free(t->exprs);
  kc__free(t->assumptions);
  *t = (kc__sym_table){0};
}

static bool kc__commutes(int32_t kind) {
  return kind == KC_DIM_EXPR_ADD || kind == KC_DIM_EXPR_MULTIPLY;
}

bool kc__sym_same(const kc__sym_table* t, int64_t a, int64_t b) {
  if (a == KC_DIM_UNKNOWN || b == KC_DIM_UNKNOWN) return false;
  if (a == b) return true;
  size_t ia, ib;
  if (!kc__sym_decode(t, a, &ia) || !kc__sym_decode(t, b, &ib)) return false;
  const kc__dim_expr *x = &t->exprs[ia], *y = &t->exprs[ib];
  /* One leaf per symbol: two leaves are two symbols. */
  if (x->kind != y->kind || x->kind == KC_DIM_EXPR_INPUT) return false;
  if (kc__sym_same(t, x->a, y->a) && kc__sym_same(t, x->b, y->b)) return true;
  return kc__commutes(x->kind) && kc__sym_same(t, x->a, y->b) &&
         kc__sym_same(t, x->b, y->a);
}

static void kc__dim_append(const kc__sym_table* t, int64_t dim, char* buf,
                           size_t cap, size_t* n) {
  static const char* const ops[] = {"", "", "+", "-", "*", "//"};
  size_t index;
  if (dim >= 0) {
    kc__appendf(buf, cap, n, "%lld", (long long)dim);
  } else if (!kc__sym_decode(t, dim, &index)) {
    kc__appendf(buf, cap, n, "?");
  } else if (t->exprs[index].kind == KC_DIM_EXPR_INPUT) {
    kc__appendf(buf, cap, n, "in%lld[%lld]", (long long)t->exprs[index].a,
                (long long)t->exprs[index].b);
  } else {
    const kc__dim_expr* e = &t->exprs[index];
    kc__appendf(buf, cap, n, "(");
    kc__dim_append(t, e->a, buf, cap, n);
    kc__appendf(buf, cap, n, " %s ", ops[e->kind]);
    kc__dim_append(t, e->b, buf, cap, n);
    kc__appendf(buf, cap, n, ")");
  }
}

size_t kc__dim_format(const kc__sym_table* t, int64_t dim, char* buf,
                      size_t cap) {
  size_t n = 0;
  if (cap) buf[0] = '\0';
  kc__dim_append(t, dim, buf, cap, &n);
  return n;
}

/* ---- the helpers' symbolic forms --------------------------------------- */

kc_status* kc__sym_binary(kc_shape_ctx* ctx, int32_t kind, int64_t a,
                          int64_t b, bool evenly, int64_t* out_dim) {
  kc__sym_table* t = ctx->sym;
  switch (kind) {
    case KC_DIM_EXPR_ADD:
      if (a == 0 || b == 0) {
        *out_dim = a == 0 ? b : a;
        return NULL;
      }
      break;
    case KC_DIM_EXPR_SUBTRACT:
      if (b == 0 || kc__sym_same(t, a, b)) {
        *out_dim = b == 0 ? a : 0;
        return NULL;
      }
      KC_RETURN_IF_ERROR(kc__sym_assume(t, KC_DIM_ASSUME_GREATER_EQUAL, a, b));
      break;
    case KC_DIM_EXPR_MULTIPLY:
      if (a == 1 || b == 1) {
        *out_dim = a == 1 ? b : a;
        return NULL;
      }
      break;
    case KC_DIM_EXPR_DIVIDE:
      if (b == 1) {
        *out_dim = a;
        return NULL;
      }
      if (kc__is_sym(b)) {
        KC_RETURN_IF_ERROR(
            kc__sym_assume(t, KC_DIM_ASSUME_GREATER_EQUAL, b, 1));
      }
      if (evenly && a != 0) {
        KC_RETURN_IF_ERROR(kc__sym_assume(t, KC_DIM_ASSUME_DIVISIBLE, a, b));
      }
      if (a == 0 || kc__sym_same(t, a, b)) {
        *out_dim = a == 0 ? 0 : 1;
        return NULL;
      }
      break;
    default:
      return kc_status_create(KC_INTERNAL, "dim expression kind %d", kind);
  }
  return kc__sym_add_expr(t, kind, a, b, out_dim);
}

kc_status* kc__sym_merge_dim(kc_shape_ctx* ctx, int64_t a, int64_t b,
                             int64_t* out_dim) {
  if (a == KC_DIM_UNKNOWN || b == KC_DIM_UNKNOWN || kc__sym_same(ctx->sym, a, b)) {
    *out_dim = a == KC_DIM_UNKNOWN ? b : a;
    return NULL;
  }
  /* A number wins: the symbol is assumed to be it. */
  bool swap = !kc__is_sym(a);
  *out_dim = kc__is_sym(a) && !kc__is_sym(b) ? b : a;
  return kc__sym_assume(ctx->sym, KC_DIM_ASSUME_EQUAL, swap ? b : a,
                        swap ? a : b);
}

kc_status* kc__sym_broadcast_dim(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                 int64_t* out_dim) {
  if (a == 1 || b == 1) {
    *out_dim = a == 1 ? b : a;
  } else if (a == KC_DIM_UNKNOWN || b == KC_DIM_UNKNOWN) {
    /* A number other than 1 settles it; a symbol may be 1, and then the
     * unknown side would. */
    int64_t other = a == KC_DIM_UNKNOWN ? b : a;
    *out_dim = kc__is_sym(other) ? KC_DIM_UNKNOWN : other;
  } else if (kc__sym_same(ctx->sym, a, b)) {
    *out_dim = a;
  } else if (!kc__is_sym(a) || !kc__is_sym(b)) {
    /* A symbol against n != 1 is 1 or n: either way n. */
    *out_dim = kc__is_sym(a) ? b : a;
  } else {
    *out_dim = a;
    return kc__sym_assume(ctx->sym, KC_DIM_ASSUME_EQUAL, a, b);
  }
  return NULL;
}

/* ---- the result -------------------------------------------------------- */

typedef struct kc__sym_output {
  DLDataType dtype;
  int32_t rank;
  int64_t dims[KC_TENSOR_MAX_NDIM];
} kc__sym_output;

struct kc_symbolic_shapes {
  kc__sym_table table;
  int32_t num_outputs;
  kc__sym_output outputs[];
};

kc_status* kc__symbolic_shapes_create(kc__sym_table* table,
                                      int32_t num_outputs,
                                      const DLDataType* dtypes,
                                      const kc_shape_handle* const* outputs,
                                      kc_symbolic_shapes** out) {
  kc_symbolic_shapes* s =
      kc__calloc(1, sizeof *s + (size_t)num_outputs * sizeof(kc__sym_output));
  if (!s) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory in symbolic shape inference");
  }
  s->table = *table;
  *table = (kc__sym_table){0};
  s->num_outputs = num_outputs;
  for (int32_t i = 0; i < num_outputs; ++i) {
    kc__sym_output* o = &s->outputs[i];
    o->dtype = dtypes[i];
    o->rank = outputs[i] ? outputs[i]->rank : KC_RANK_UNKNOWN;
    if (o->rank > 0) {
      memcpy(o->dims, outputs[i]->dims, (size_t)o->rank * sizeof(int64_t));
    }
  }
  *out = s;
  return NULL;
}

void kc_symbolic_shapes_destroy(kc_symbolic_shapes* shapes) {
  if (!shapes) return;
  kc__sym_table_clear(&shapes->table);
  kc__free(shapes);
}

int32_t kc_symbolic_shapes_get_output_count(const kc_symbolic_shapes* shapes) {
  return shapes ? shapes->num_outputs : 0;
}

kc_status* kc_symbolic_shapes_get_output(const kc_symbolic_shapes* shapes,
                                         int32_t index, DLDataType* out_dtype,
                                         int32_t* out_rank,
                                         const int64_t** out_dims) {
  if (!shapes || !out_dtype || !out_rank || !out_dims) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_symbolic_shapes_get_output: %s is NULL",
                            !shapes ? "shapes" : "an out pointer");
  }
  if (index < 0 || index >= shapes->num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_symbolic_shapes_get_output: output %d: "
                            "expected 0 to %d",
                            index, shapes->num_outputs - 1);
  }
  const kc__sym_output* o = &shapes->outputs[index];
  *out_dtype = o->dtype;
  *out_rank = o->rank;
  *out_dims = o->rank >= 0 ? o->dims : NULL;
  return NULL;
}

kc_status* kc_symbolic_shapes_get_expr(const kc_symbolic_shapes* shapes,
                                       int64_t dim, int32_t* out_kind,
                                       int64_t* out_a, int64_t* out_b) {
  if (!shapes || !out_kind || !out_a || !out_b) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_symbolic_shapes_get_expr: %s is NULL",
                            !shapes ? "shapes" : "an out pointer");
  }
  size_t index;
  if (!kc__sym_decode(&shapes->table, dim, &index)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_symbolic_shapes_get_expr: dim %lld is not a "
                            "symbolic dim of these shapes (%s)",
                            (long long)dim,
                            dim >= 0                  ? "it is a number"
                            : dim == KC_DIM_UNKNOWN   ? "it is unknown"
                                                      : "no such symbol");
  }
  const kc__dim_expr* e = &shapes->table.exprs[index];
  *out_kind = e->kind;
  *out_a = e->a;
  *out_b = e->b;
  return NULL;
}

int32_t kc_symbolic_shapes_get_assumption_count(
    const kc_symbolic_shapes* shapes) {
  return shapes ? (int32_t)shapes->table.num_assumptions : 0;
}

kc_status* kc_symbolic_shapes_get_assumption(const kc_symbolic_shapes* shapes,
                                             int32_t index, int32_t* out_kind,
                                             int64_t* out_lhs,
                                             int64_t* out_rhs) {
  if (!shapes || !out_kind || !out_lhs || !out_rhs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_symbolic_shapes_get_assumption: %s is NULL",
                            !shapes ? "shapes" : "an out pointer");
  }
  int32_t n = (int32_t)shapes->table.num_assumptions;
  if (index < 0 || index >= n) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_symbolic_shapes_get_assumption: assumption "
                            "%d: there are %d",
                            index, n);
  }
  const kc__dim_assumption* a = &shapes->table.assumptions[index];
  *out_kind = a->kind;
  *out_lhs = a->lhs;
  *out_rhs = a->rhs;
  return NULL;
}
