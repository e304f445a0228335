/* The LAPACK custom calls JAX emits for jnp.linalg on the CPU, built in:
 * lapack_{s,d,c,z}{potrf,getrf,trsm,syevd|heevd,gesdd,geqrf,orgqr|ungqr}_ffi,
 * with the semantics of jaxlib's XLA FFI handlers, run by the LAPACK that
 * lapack.c loads. A target registered under one of these names takes
 * precedence (compile.c asks the registry first).
 *
 * Like jaxlib's handlers they see their buffers' bytes: a matrix operand
 * f32[..., m, n] is a batch of m x n column-major matrices (leading
 * dimension m) when its layout is JAX's {..., n-2, n-1} (the parser hands
 * custom calls their operands in their layouts); pivots, vectors and the
 * info codes are row-major batches. Every batch element is one LAPACK call.
 *
 *   potrf (cholesky)  (a) -> (a factor, s32 info[batch]); uplo
 *   getrf (lu)        (a) -> (a factored, s32 ipiv[batch, min(m,n)]
 *                     (1-based, as LAPACK), s32 info[batch])
 *   trsm              (a[k,k], b[m,n]) -> b solved in place, alpha 1;
 *                     side, uplo, trans_x, diag; k = m (side L) or n (R)
 *   syevd / heevd     (a) -> (eigenvectors (mode V) or a destroyed (N),
 *                     real eigenvalues[batch, n] ascending, s32 info); uplo, mode
 *   gesdd             (a) -> (a destroyed, real s[batch, min(m,n)], u, vt,
 *                     s32 info); mode A (u m x m, vt n x n), S (u m x min,
 *                     vt min x n), N (u and vt not computed: zeros)
 *   geqrf             (a) -> (a factored, tau[batch, min(m,n)])
 *   orgqr / ungqr     (a[m,n], tau[k]) -> q[m,n]; m >= n >= k
 *
 * The attributes are JAX's backend_config characters (ui8): uplo L/U,
 * side L/R, trans_x N/T/C, diag N/U, mode V/N (eigh) or A/S/N (svd).
 * Workspace sizes are asked of LAPACK once, when the program is compiled;
 * each run allocates its workspace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "program/compiler/compile_internal.h"
#include "kernels/lapack.h"
#include "program/instr/instr.h"

/* ---- the targets -------------------------------------------------------- */

typedef struct kc__la_target {
  const char* name;
  kc__la_routine routine;
  kc__la_type type;
} kc__la_target;

#define KC__LA_TARGETS(R, real, cplx)                            \
  {"lapack_s" real "_ffi", R, KC__LA_S}, {"lapack_d" real "_ffi", R, KC__LA_D}, \
      {"lapack_c" cplx "_ffi", R, KC__LA_C}, {"lapack_z" cplx "_ffi", R, KC__LA_Z}

static const kc__la_target kc__la_targets[] = {
    KC__LA_TARGETS(KC__LA_POTRF, "potrf", "potrf"), KC__LA_TARGETS(KC__LA_GETRF, "getrf", "getrf"),
    KC__LA_TARGETS(KC__LA_TRSM, "trsm", "trsm"),    KC__LA_TARGETS(KC__LA_SYEVD, "syevd", "heevd"),
    KC__LA_TARGETS(KC__LA_GESDD, "gesdd", "gesdd"), KC__LA_TARGETS(KC__LA_GEQRF, "geqrf", "geqrf"),
    KC__LA_TARGETS(KC__LA_ORGQR, "orgqr", "ungqr"),
};

static const kc__la_target* kc__la_target_find(kc_string_view name) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__la_targets); ++i) {
    if (kc_sv_equal(name, kc_sv(kc__la_targets[i].name))) return &kc__la_targets[i];
  }
  return NULL;
}

/* ---- reading a call ------------------------------------------------------ */

typedef struct kc__la_plan {
  kc__la_routine r;
  kc__la_type t;
  const kc__lapack* la;
  int32_t batch_rank;
  int64_t batch;
  int64_t m, n, k; /* the matrix (trsm: b; orgqr: a); k: trsm a's order, orgqr tau's length */
  char uplo, side, trans, diag, mode;
  int64_t ldu, ldvt;
  int64_t lwork, lrwork, liwork; /* workspace, in elements, real elements, integers */
  size_t esize, rsize;
} kc__la_plan;

static DLDataType kc__la_dtype(kc__la_type t, bool real) {
  static const DLDataType types[] = {{kDLFloat, 32, 1}, {kDLFloat, 64, 1},
                                     {kDLComplex, 64, 1}, {kDLComplex, 128, 1}};
  if (real && t == KC__LA_C) return types[KC__LA_S];
  if (real && t == KC__LA_Z) return types[KC__LA_D];
  return types[t];
}

/* Checks that `s` is an array of `dtype` and dims batch..., d0, d1 (nd
 * of them after the batch: 0, 1 or 2); `what` names it. */
static kc_status* kc__la_expect(const kc__instr* in, const char* what, const kc_shape* s,
                                DLDataType dtype, const int64_t* batch, int32_t batch_rank,
                                int nd, int64_t d0, int64_t d1) {
  bool ok = !s->is_tuple && s->rank == batch_rank + nd &&
            s->dtype.code == dtype.code && s->dtype.bits == dtype.bits && s->dtype.lanes == 1;
  for (int32_t i = 0; ok && i < batch_rank; ++i) ok = s->dims[i] == batch[i];
  if (ok && nd >= 1) ok = s->dims[batch_rank] == d0;
  if (ok && nd == 2) ok = s->dims[batch_rank + 1] == d1;
  if (ok) return NULL;
  char want[256];
  size_t at = (size_t)snprintf(want, sizeof want, "%s[", kc__hlo_dtype_name(dtype));
  for (int32_t i = 0; i < batch_rank + nd && at < sizeof want; ++i) {
    int64_t d = i < batch_rank ? batch[i] : (i == batch_rank ? d0 : d1);
    at += (size_t)snprintf(want + at, sizeof want - at, "%s%lld", i ? "," : "", (long long)d);
  }
  if (at < sizeof want) snprintf(want + at, sizeof want - at, "]");
  KC__SHAPE_TEXT(got, s);
  return kc__instr_error(in, KC_INVALID_ARGUMENT, "custom call %s: %s: expected %s, got %s",
                         KC__QS(in->target), what, want, got);
}

/* The character attribute `name` (JAX's ui8), one of `allowed`. */
static kc_status* kc__la_char_attr(const kc__instr* in, const char* name, const char* allowed,
                                   char* out) {
  const kc_attr* a = kc_attr_dict_lookup(&in->attrs, kc_sv(name));
  if (!a) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "custom call %s: missing attribute %s (one of the characters %s, "
                           "as ui8)",
                           KC__QS(in->target), KC__QS(name), allowed);
  }
  bool integer = a->type >= KC_ATTR_I8 && a->type <= KC_ATTR_U64;
  int64_t v = !integer ? -1
              : (a->type >= KC_ATTR_U8) ? (a->v.u64 > 127 ? -1 : (int64_t)a->v.u64)
                                        : a->v.i64;
  if (v <= 0 || v > 127 || !strchr(allowed, (int)v)) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "custom call %s: attribute %s: expected one of the characters %s "
                           "(as an integer, JAX's ui8), got %s%lld",
                           KC__QS(in->target), KC__QS(name), allowed,
                           integer ? "" : "an attribute that is not an integer: ",
                           (long long)(integer ? v : 0));
  }
  *out = (char)v;
  return NULL;
}

/* Refuses attributes the target does not read. */
static kc_status* kc__la_known_attrs(const kc__instr* in, const char* const* names) {
  for (size_t i = 0; i < in->attrs.count; ++i) {
    bool known = false;
    for (const char* const* n = names; *n && !known; ++n) {
      known = kc_sv_equal(in->attrs.entries[i].name, kc_sv(*n));
    }
    if (!known) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "custom call %s: attribute %s is not one it reads",
                             KC__QS(in->target), KC__Q(in->attrs.entries[i].name));
    }
  }
  return NULL;
}

static kc_status* kc__la_count(const kc__instr* in, size_t operands, size_t results) {
  size_t got_results = in->shape->is_tuple ? in->shape->count : 1;
  bool tuple_ok = results == 1 ? !in->shape->is_tuple : in->shape->is_tuple;
  if (in->num_operands != operands || !tuple_ok || got_results != results) {
    KC__SHAPE_TEXT(got, in->shape);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "custom call %s: expected %zu operand%s and %s%zu result%s, got %zu "
                           "operand%s and the result %s",
                           KC__QS(in->target), operands, operands == 1 ? "" : "s",
                           results == 1 ? "an array: " : "a tuple of ", results,
                           results == 1 ? "" : "s", in->num_operands,
                           in->num_operands == 1 ? "" : "s", got);
  }
  return NULL;
}

static const kc_shape* kc__la_result(const kc__instr* in, size_t i) {
  return in->shape->is_tuple ? in->shape->elements[i] : in->shape;
}

/* Reads and checks a call against its target's signature into *plan. */
static kc_status* kc__la_read(const kc_program* p, const kc__instr* in, kc__la_plan* plan) {
  memset(plan, 0, sizeof *plan);
  const kc__la_target* tg = kc__la_target_find(kc_sv(in->target));
  if (!tg) return kc__instr_error(in, KC_INTERNAL, "custom call %s: not a LAPACK target",
                                  KC__QS(in->target));
  plan->r = tg->routine;
  plan->t = tg->type;
  plan->esize = plan->t == KC__LA_S ? 4 : plan->t == KC__LA_Z ? 16 : 8;
  plan->rsize = plan->t == KC__LA_S || plan->t == KC__LA_C ? 4 : 8;
  if (in->api_version != KC_XCALL_API_TYPED) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "custom call %s: expected api_version=API_VERSION_TYPED_FFI (4), as "
                           "JAX emits it, got %d",
                           KC__QS(in->target), in->api_version);
  }
  static const size_t operands[KC__LA_NUM_ROUTINES] = {1, 1, 2, 1, 1, 1, 2};
  static const size_t results[KC__LA_NUM_ROUTINES] = {2, 3, 1, 3, 5, 2, 1};
  KC_RETURN_IF_ERROR(kc__la_count(in, operands[plan->r], results[plan->r]));
  /* The matrix operand: trsm's b, the others' first. */
  const kc_shape* a = kc__instr_operand(p, in, plan->r == KC__LA_TRSM ? 1 : 0);
  DLDataType et = kc__la_dtype(plan->t, false), rt = kc__la_dtype(plan->t, true);
  DLDataType s32 = {kDLInt, 32, 1};
  if (a->is_tuple || a->rank < 2 || a->dtype.code != et.code || a->dtype.bits != et.bits ||
      a->dtype.lanes != 1) {
    KC__SHAPE_TEXT(got, a);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "custom call %s: operand %d: expected %s[..., m, n] (a batch of "
                           "matrices), got %s",
                           KC__QS(in->target), plan->r == KC__LA_TRSM ? 1 : 0,
                           kc__hlo_dtype_name(et), got);
  }
  int32_t br = a->rank - 2;
  const int64_t* bd = a->dims;
  plan->batch_rank = br;
  plan->batch = 1;
  for (int32_t i = 0; i < br; ++i) plan->batch *= bd[i];
  int64_t m = a->dims[br], n = a->dims[br + 1], mn = m < n ? m : n;
  plan->m = m;
  plan->n = n;
  bool square = plan->r == KC__LA_POTRF || plan->r == KC__LA_SYEVD;
  if (square && m != n) {
    return kc__la_expect(in, "operand 0 (square matrices)", a, et, bd, br, 2, m, m);
  }
  switch (plan->r) {
    case KC__LA_POTRF: {
      static const char* const names[] = {"uplo", NULL};
      KC_RETURN_IF_ERROR(kc__la_known_attrs(in, names));
      KC_RETURN_IF_ERROR(kc__la_char_attr(in, "uplo", "LU", &plan->uplo));
      KC_RETURN_IF_ERROR(kc__la_expect(in, "result 0", kc__la_result(in, 0), et, bd, br, 2, m, n));
      return kc__la_expect(in, "result 1 (info)", kc__la_result(in, 1), s32, bd, br, 0, 0, 0);
    }
    case KC__LA_GETRF: {
      static const char* const names[] = {NULL};
      KC_RETURN_IF_ERROR(kc__la_known_attrs(in, names));
      KC_RETURN_IF_ERROR(kc__la_expect(in, "result 0", kc__la_result(in, 0), et, bd, br, 2, m, n));
      KC_RETURN_IF_ERROR(
          kc__la_expect(in, "result 1 (pivots)", kc__la_result(in, 1), s32, bd, br, 1, mn, 0));
      return kc__la_expect(in, "result 2 (info)", kc__la_result(in, 2), s32, bd, br, 0, 0, 0);
    }
    case KC__LA_TRSM: {
      static const char* const names[] = {"side", "uplo", "trans_x", "diag", NULL};
      KC_RETURN_IF_ERROR(kc__la_known_attrs(in, names));
      KC_RETURN_IF_ERROR(kc__la_char_attr(in, "side", "LR", &plan->side));
      KC_RETURN_IF_ERROR(kc__la_char_attr(in, "uplo", "LU", &plan->uplo));
      KC_RETURN_IF_ERROR(kc__la_char_attr(in, "trans_x", "NTC", &plan->trans));
      KC_RETURN_IF_ERROR(kc__la_char_attr(in, "diag", "NU", &plan->diag));
      plan->k = plan->side == 'L' ? m : n;
      KC_RETURN_IF_ERROR(kc__la_expect(in, "operand 0 (the triangular matrices)",
                                       kc__instr_operand(p, in, 0), et, bd, br, 2, plan->k,
                                       plan->k));
      return kc__la_expect(in, "the result", in->shape, et, bd, br, 2, m, n);
    }
    case KC__LA_SYEVD: {
      static const char* const names[] = {"uplo", "mode", NULL};
      KC_RETURN_IF_ERROR(kc__la_known_attrs(in, names));
      KC_RETURN_IF_ERROR(kc__la_char_attr(in, "uplo", "LU", &plan->uplo));
      KC_RETURN_IF_ERROR(kc__la_char_attr(in, "mode", "VN", &plan->mode));
      KC_RETURN_IF_ERROR(kc__la_expect(in, "result 0", kc__la_result(in, 0), et, bd, br, 2, m, n));
      KC_RETURN_IF_ERROR(kc__la_expect(in, "result 1 (eigenvalues)", kc__la_result(in, 1), rt,
                                       bd, br, 1, n, 0));
      return kc__la_expect(in, "result 2 (info)", kc__la_result(in, 2), s32, bd, br, 0, 0, 0);
    }
    case KC__LA_GESDD: {
      static const char* const names[] = {"mode", NULL};
      KC_RETURN_IF_ERROR(kc__la_known_attrs(in, names));
      KC_RETURN_IF_ERROR(kc__la_char_attr(in, "mode", "ASN", &plan->mode));
      KC_RETURN_IF_ERROR(kc__la_expect(in, "result 0", kc__la_result(in, 0), et, bd, br, 2, m, n));
      KC_RETURN_IF_ERROR(kc__la_expect(in, "result 1 (singular values)", kc__la_result(in, 1),
                                       rt, bd, br, 1, mn, 0));
      const kc_shape* u = kc__la_result(in, 2);
      const kc_shape* vt = kc__la_result(in, 3);
      if (plan->mode != 'N') {
        int64_t uc = plan->mode == 'A' ? m : mn, vr = plan->mode == 'A' ? n : mn;
        KC_RETURN_IF_ERROR(kc__la_expect(in, "result 2 (u)", u, et, bd, br, 2, m, uc));
        KC_RETURN_IF_ERROR(kc__la_expect(in, "result 3 (vt)", vt, et, bd, br, 2, vr, n));
      } else {
        /* Not computed: any batch of matrices of the element type. */
        KC_RETURN_IF_ERROR(kc__la_expect(in, "result 2 (u)", u, et, bd, br, 2,
                                         u->rank == br + 2 ? u->dims[br] : m,
                                         u->rank == br + 2 ? u->dims[br + 1] : m));
        KC_RETURN_IF_ERROR(kc__la_expect(in, "result 3 (vt)", vt, et, bd, br, 2,
                                         vt->rank == br + 2 ? vt->dims[br] : n,
                                         vt->rank == br + 2 ? vt->dims[br + 1] : n));
      }
      plan->ldu = m > 1 ? m : 1;
      plan->ldvt = vt->dims[br] > 1 ? vt->dims[br] : 1;
      return kc__la_expect(in, "result 4 (info)", kc__la_result(in, 4), s32, bd, br, 0, 0, 0);
    }
    case KC__LA_GEQRF: {
      static const char* const names[] = {NULL};
      KC_RETURN_IF_ERROR(kc__la_known_attrs(in, names));
      KC_RETURN_IF_ERROR(kc__la_expect(in, "result 0", kc__la_result(in, 0), et, bd, br, 2, m, n));
      return kc__la_expect(in, "result 1 (tau)", kc__la_result(in, 1), et, bd, br, 1, mn, 0);
    }
    case KC__LA_ORGQR: {
      static const char* const names[] = {NULL};
      KC_RETURN_IF_ERROR(kc__la_known_attrs(in, names));
      const kc_shape* tau = kc__instr_operand(p, in, 1);
      plan->k = !tau->is_tuple && tau->rank == br + 1 ? tau->dims[br] : 0;
      KC_RETURN_IF_ERROR(kc__la_expect(in, "operand 1 (tau)", tau, et, bd, br, 1, plan->k, 0));
      if (!(m >= n && n >= plan->k)) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "custom call %s: expected m >= n >= k (a's rows, a's columns, "
                               "tau's length), got m %lld, n %lld, k %lld",
                               KC__QS(in->target), (long long)m, (long long)n,
                               (long long)plan->k);
      }
      return kc__la_expect(in, "the result", in->shape, et, bd, br, 2, m, n);
    }
    case KC__LA_NUM_ROUTINES:
      break;
  }
  return kc__instr_error(in, KC_INTERNAL, "custom call %s: unknown routine",
                         KC__QS(in->target));
}

static kc_status* kc__la_verify(const kc_program* p, const kc__instr* in) {
  kc__la_plan plan;
  return kc__la_read(p, in, &plan);
}

/* ---- workspace sizes, asked once ---------------------------------------- */

static int64_t kc__la_max(int64_t a, int64_t b) { return a > b ? a : b; }

/* work[0] after a query: its real part, rounded up. */
static int64_t kc__la_work_size(const kc__la_plan* plan, const void* work) {
  double v;
  if (plan->rsize == 4) {
    float f;
    memcpy(&f, work, sizeof f);
    v = f;
  } else {
    memcpy(&v, work, sizeof v);
  }
  return v > 0 && v < 9.0e18 ? (int64_t)ceil(v) : 0;
}

static void kc__la_query(kc__la_plan* plan) {
  const kc__lapack* la = plan->la;
  kc__la_type t = plan->t;
  int64_t m = plan->m, n = plan->n, mn = m < n ? m : n, mx = m > n ? m : n;
  int64_t lda = kc__la_max(1, m);
  double a[4] = {0}, w[4] = {0}, work[4] = {0}, rwork[4] = {0}, u[4] = {0}, vt[4] = {0};
  int64_t iwork[4] = {0};
  bool cplx = t == KC__LA_C || t == KC__LA_Z;
  switch (plan->r) {
    case KC__LA_SYEVD: {
      kc__lapack_syevd(la, t, plan->mode, plan->uplo, n, a, lda, w, work, -1, rwork, -1, iwork, -1);
      bool v = plan->mode == 'V';
      int64_t lwork = cplx ? (v ? 2 * n + n * n : n + 1) : (v ? 1 + 6 * n + 2 * n * n : 2 * n + 1);
      int64_t lrwork = v ? 1 + 5 * n + 2 * n * n : n;
      int64_t liwork = v ? 3 + 5 * n : 1;
      plan->lwork = kc__la_max(kc__la_max(kc__la_work_size(plan, work), lwork), 1);
      double rq;
      if (plan->rsize == 4) {
        float f;
        memcpy(&f, rwork, sizeof f);
        rq = f;
      } else {
        memcpy(&rq, rwork, sizeof rq);
      }
      plan->lrwork = cplx ? kc__la_max(kc__la_max((int64_t)ceil(rq > 0 && rq < 9e18 ? rq : 0),
                                                  lrwork), 1)
                          : 0;
      plan->liwork = kc__la_max(kc__la_max(kc__lapack_int_at(la, iwork, 0), liwork), 1);
      return;
    }
    case KC__LA_GESDD:
      kc__lapack_gesdd(la, t, plan->mode, m, n, a, lda, w, u, plan->ldu, vt, plan->ldvt, work,
                       -1, rwork, iwork);
      plan->lwork = kc__la_max(kc__la_work_size(plan, work), 1);
      plan->lrwork = !cplx ? 0
                     : plan->mode == 'N'
                         ? kc__la_max(7 * mn, 1)
                         : kc__la_max(kc__la_max(5 * mn * mn + 5 * mn,
                                                 2 * mx * mn + 2 * mn * mn + mn), 1);
      plan->liwork = kc__la_max(8 * mn, 1);
      return;
    case KC__LA_GEQRF:
      kc__lapack_geqrf(la, t, m, n, a, lda, w, work, -1);
      plan->lwork = kc__la_max(kc__la_max(kc__la_work_size(plan, work), n), 1);
      return;
    case KC__LA_ORGQR:
      kc__lapack_orgqr(la, t, m, n, plan->k, a, lda, w, work, -1);
      plan->lwork = kc__la_max(kc__la_max(kc__la_work_size(plan, work), n), 1);
      return;
    default:
      return; /* potrf, getrf, trsm: none; getrf's pivots are counted below */
  }
}

static kc_status* kc__la_prepare(const kc_program* p, const kc__instr* in,
                                 const kc__prepare_ctx* ctx, const void** out_data) {
  kc__la_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__la_read(p, in, plan));
  const char* why = NULL;
  plan->la = kc__lapack_get(&why);
  if (!plan->la) {
    return kc__instr_error(in, KC_FAILED_PRECONDITION,
                           "custom call %s (a LAPACK routine, as JAX emits for jnp.linalg) "
                           "needs LAPACK: %s",
                           KC__QS(in->target), why);
  }
  char sym[64];
  if (!kc__lapack_has(plan->la, plan->r, plan->t, sym, sizeof sym)) {
    return kc__instr_error(in, KC_FAILED_PRECONDITION,
                           "custom call %s: the LAPACK library %s has no %s",
                           KC__QS(in->target), KC__QS(kc__lapack_name(plan->la)), sym);
  }
  /* A LAPACK of 32-bit integers cannot take larger dims (nor a matrix
   * whose entries a 32-bit index cannot reach, for the workspaces). */
  if (kc__lapack_int_size(plan->la) == 4 &&
      (plan->m > INT32_MAX || plan->n > INT32_MAX || plan->m * plan->n > INT32_MAX ||
       plan->k * plan->k > INT32_MAX)) {
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "custom call %s: matrices of %lld x %lld are too large for the "
                           "32-bit integers of the LAPACK library %s; set "
                           "KCALL_LAPACK_LIBRARY to a LAPACK of 64-bit integers",
                           KC__QS(in->target), (long long)plan->m, (long long)plan->n,
                           KC__QS(kc__lapack_name(plan->la)));
  }
  kc__la_query(plan);
  if (plan->r == KC__LA_GETRF) plan->liwork = kc__la_max(plan->m < plan->n ? plan->m : plan->n, 1);
  *out_data = plan;
  return NULL;
}

/* ---- running ----------------------------------------------------------- */

static void kc__la_copy_in(void* to, const void* from, size_t bytes) {
  if (to != from && bytes) memcpy(to, from, bytes);
}

static void kc__la_store_info(int32_t* info, int64_t b, int64_t v) {
  info[b] = (int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}

static kc_status* kc__la_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                const void* const* ins) {
  const kc__la_plan* P = ctx->data;
  const kc__lapack* la = P->la;
  kc__la_type t = P->t;
  int64_t m = P->m, n = P->n, mn = m < n ? m : n, lda = kc__la_max(1, m);
  size_t isz = kc__lapack_int_size(la);
  void* const* res = out; /* a tuple's leaves; an array result is `out` itself */
  size_t mat = (size_t)(m * n) * P->esize;
  /* Workspace: work, rwork, iwork (ipiv for getrf), one allocation. */
  size_t wbytes = (size_t)P->lwork * P->esize, rbytes = (size_t)P->lrwork * P->rsize;
  size_t ibytes = (size_t)P->liwork * isz;
  char* ws = NULL;
  if (wbytes + rbytes + ibytes) {
    ws = kc__malloc(wbytes + rbytes + ibytes + 16);
    if (!ws) {
      return kc_status_create(KC_RESOURCE_EXHAUSTED,
                              "custom call '%s': out of memory for a LAPACK workspace of %zu "
                              "bytes",
                              ctx->instr->target, wbytes + rbytes + ibytes);
    }
  }
  void* work = ws;
  void* rwork = ws ? ws + wbytes : NULL;
  void* iwork = ws ? ws + wbytes + rbytes : NULL;
  switch (P->r) {
    case KC__LA_POTRF: {
      char* a = res[0];
      int32_t* info = res[1];
      kc__la_copy_in(a, ins[0], (size_t)P->batch * mat);
      for (int64_t b = 0; b < P->batch; ++b) {
        kc__la_store_info(info, b, kc__lapack_potrf(la, t, P->uplo, n, a + (size_t)b * mat, lda));
      }
      break;
    }
    case KC__LA_GETRF: {
      char* a = res[0];
      int32_t* ipiv = res[1];
      int32_t* info = res[2];
      kc__la_copy_in(a, ins[0], (size_t)P->batch * mat);
      for (int64_t b = 0; b < P->batch; ++b) {
        int32_t* piv = ipiv + b * mn;
        kc__la_store_info(info, b, kc__lapack_getrf(la, t, m, n, a + (size_t)b * mat, lda,
                                                    isz == 4 ? (void*)piv : iwork));
        if (isz != 4) {
          for (int64_t i = 0; i < mn; ++i) piv[i] = (int32_t)kc__lapack_int_at(la, iwork, (size_t)i);
        }
      }
      break;
    }
    case KC__LA_TRSM: {
      const char* x = ins[0];
      char* y = out;
      size_t xmat = (size_t)(P->k * P->k) * P->esize;
      kc__la_copy_in(y, ins[1], (size_t)P->batch * mat);
      for (int64_t b = 0; b < P->batch; ++b) {
        kc__lapack_trsm(la, t, P->side, P->uplo, P->trans, P->diag, m, n, x + (size_t)b * xmat,
                        kc__la_max(1, P->k), y + (size_t)b * mat, lda);
      }
      break;
    }
    case KC__LA_SYEVD: {
      char* a = res[0];
      char* w = res[1];
      int32_t* info = res[2];
      kc__la_copy_in(a, ins[0], (size_t)P->batch * mat);
      for (int64_t b = 0; b < P->batch; ++b) {
        kc__la_store_info(info, b,
                          kc__lapack_syevd(la, t, P->mode, P->uplo, n, a + (size_t)b * mat, lda,
                                           w + (size_t)(b * n) * P->rsize, work, P->lwork, rwork,
                                           P->lrwork, iwork, P->liwork));
      }
      break;
    }
    case KC__LA_GESDD: {
      char* a = res[0];
      char* s = res[1];
      char* u = res[2];
      char* vt = res[3];
      int32_t* info = res[4];
      const kc_shape* us = ctx->instr->shape->elements[2];
      const kc_shape* vs = ctx->instr->shape->elements[3];
      size_t umat = (size_t)(us->dims[P->batch_rank] * us->dims[P->batch_rank + 1]) * P->esize;
      size_t vmat = (size_t)(vs->dims[P->batch_rank] * vs->dims[P->batch_rank + 1]) * P->esize;
      kc__la_copy_in(a, ins[0], (size_t)P->batch * mat);
      if (P->mode == 'N') {
        memset(u, 0, (size_t)P->batch * umat);
        memset(vt, 0, (size_t)P->batch * vmat);
      }
      for (int64_t b = 0; b < P->batch; ++b) {
        kc__la_store_info(
            info, b,
            kc__lapack_gesdd(la, t, P->mode, m, n, a + (size_t)b * mat, lda,
                             s + (size_t)(b * mn) * P->rsize, u + (size_t)b * umat, P->ldu,
                             vt + (size_t)b * vmat, P->ldvt, work, P->lwork, rwork, iwork));
      }
      break;
    }
    case KC__LA_GEQRF: {
      char* a = res[0];
      char* tau = res[1];
      kc__la_copy_in(a, ins[0], (size_t)P->batch * mat);
      for (int64_t b = 0; b < P->batch; ++b) {
        kc__lapack_geqrf(la, t, m, n, a + (size_t)b * mat, lda, tau + (size_t)(b * mn) * P->esize,
                         work, P->lwork);
      }
      break;
    }
    case KC__LA_ORGQR: {
      char* a = out;
      const char* tau = ins[1];
      kc__la_copy_in(a, ins[0], (size_t)P->batch * mat);
      for (int64_t b = 0; b < P->batch; ++b) {
        kc__lapack_orgqr(la, t, m, n, P->k, a + (size_t)b * mat, lda,
                         tau + (size_t)(b * P->k) * P->esize, work, P->lwork);
      }
      break;
    }
    case KC__LA_NUM_ROUTINES:
      break;
  }
  kc__free(ws);
  return NULL;
}

/* One entry serves every target: the routine and element type come from
 * the target's row in kc__la_targets. */
static const kc__instr_def kc__la_def = {
    .op = KC__OP_CUSTOM_CALL,
    .name = "lapack",
    .kind = KC__INSTR_CUSTOM_CALL,
    .verify = kc__la_verify,
    .prepare = kc__la_prepare,
    .kernel = kc__la_kernel,
};

const kc__instr_def* kc__builtin_call_find(kc_string_view target) {
  return kc__la_target_find(target) ? &kc__la_def : NULL;
}
