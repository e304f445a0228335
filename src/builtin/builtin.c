/* kc_builtin_ops_register (kcall/builtin.h): every built-in op registered
 * through the public op and kernel builders, as a plugin registers its own,
 * all at once or none. */
#include "kcall/builtin.h"

#include <pthread.h>
#include <string.h>

#include "builtin/builtin_internal.h"
#include "internal/common.h"
#include "internal/txn.h"

static const struct {
  const kc__bi_op* ops;
  const size_t* count;
} kc__bi_families[] = {
    {kc__bi_matmul_ops, &kc__bi_matmul_op_count},
    {kc__bi_elementwise_ops, &kc__bi_elementwise_op_count},
    {kc__bi_reduce_ops, &kc__bi_reduce_op_count},
    {kc__bi_nn_ops, &kc__bi_nn_op_count},
    {kc__bi_index_ops, &kc__bi_index_op_count},
    {kc__bi_conv_ops, &kc__bi_conv_op_count},
    {kc__bi_pool_ops, &kc__bi_pool_op_count},
};

void kc__bi_broadcast_strides(const DLTensor* t, int32_t rank, const int64_t* out,
                              int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    int32_t ti = i - (rank - t->ndim);
    int64_t d = ti >= 0 ? t->shape[ti] : 1;
    strides[i] = d == 1 && out[i] != 1 ? 0 : s;
    s *= d;
  }
}

/* Whether the row's type attr T admits f16 and bf16 (KC__BI_T). */
static bool kc__bi_takes_half(const kc__bi_op* op) {
  for (size_t i = 0; op->attrs[i]; ++i) {
    if (strcmp(op->attrs[i], KC__BI_T) == 0) return true;
  }
  return false;
}

kc_status* kc__bi_needed(kc_kernel_ctx* ctx, bool* need, int32_t count) {
  int64_t mask = -1;
  KC_RETURN_IF_ERROR(kc_op_attrs_get_int(kc_kernel_ctx_get_attrs(ctx), "kc_needed", &mask));
  if (mask != -1 && (mask < 0 || mask >= ((int64_t)1 << count))) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "attr 'kc_needed': %lld is not a mask of the op's %d outputs (expected "
                            "-1 for all, or 0 .. %lld)",
                            (long long)mask, count, (long long)(((int64_t)1 << count) - 1));
  }
  for (int32_t i = 0; i < count; ++i) need[i] = (mask >> i) & 1;
  return NULL;
}

/* The kernel instance of an op whose table row needs no attributes: its
 * operation code. */
static kc_status* kc__bi_create_code(kc_kernel_construct_ctx* ctx, void** out) {
  *out = kc_kernel_construct_ctx_get_data(ctx);
  return NULL;
}

static kc_status* kc__bi_register_one(const kc__bi_op* op) {
  kc_op_builder* b = NULL;
  KC_RETURN_IF_ERROR(kc_op_builder_create(op->name, &b));
  for (size_t i = 0; op->inputs[i]; ++i) kc_op_builder_add_input_v2(b, op->inputs[i]);
  for (size_t i = 0; op->outputs[i]; ++i) kc_op_builder_add_output_v2(b, op->outputs[i]);
  for (size_t i = 0; op->attrs[i]; ++i) kc_op_builder_add_attr_v2(b, op->attrs[i]);
  kc_op_builder_set_flags_v2(b, KC_OP_SYMBOLIC_SHAPES);
  kc_op_builder_set_doc_v2(b, op->doc);
  kc_op_builder_set_shape_fn_v2(b, op->shape_fn, NULL, NULL);
  if (op->gradient) kc_op_builder_set_gradient(b, op->gradient);
  if (op->jvp) kc_op_builder_set_jvp(b, op->jvp);
  kc_op_builder_set_batching(b, op->batching);
  KC_RETURN_IF_ERROR(kc_op_registry_register(b, 0));
  kc_kernel_builder* k = NULL;
  KC_RETURN_IF_ERROR(kc_kernel_builder_create(
      op->name, kDLCPU, op->create ? op->create : kc__bi_create_code, op->compute, NULL, &k));
  static const DLDataType kTypes[2] = {{kDLFloat, 32, 1}, {kDLFloat, 64, 1}};
  kc_status* st = kc_kernel_builder_add_type_constraint(k, "T", kTypes, 2);
  if (!st) st = kc_kernel_builder_set_data(k, (void*)op->code, NULL);
  if (st) {
    kc_kernel_builder_destroy(k);
    return st;
  }
  KC_RETURN_IF_ERROR(kc_kernel_registry_register(k));
  return kc__bi_takes_half(op) ? kc__bi_register_half_kernel(op) : NULL;
}

static kc_status* kc__bi_register_all(void) {
  for (size_t f = 0; f < sizeof kc__bi_families / sizeof kc__bi_families[0]; ++f) {
    for (size_t i = 0; i < *kc__bi_families[f].count; ++i) {
      const kc__bi_op* op = &kc__bi_families[f].ops[i];
      KC_RETURN_IF_ERROR(kc__bi_register_one(op), "built-in op %s", op->name);
    }
  }
  return NULL;
}

static pthread_mutex_t kc__bi_mu = PTHREAD_MUTEX_INITIALIZER;

kc_status* kc_builtin_ops_register(void) {
  pthread_mutex_lock(&kc__bi_mu);
  kc_status* st = NULL;
  const kc_op* probe = NULL;
  kc_status* missing = kc_op_registry_lookup(kc_sv(kc__bi_matmul_ops[0].name), &probe);
  if (!missing) {
    /* Registered already (since the last kc_op_registry_reset), unless
     * another registration took the name. */
    const char* doc = kc_op_get_doc(probe);
    if (!doc || strcmp(doc, kc__bi_matmul_ops[0].doc) != 0) {
      st = kc_status_create(KC_ALREADY_EXISTS,
                            "the built-in ops: an op named %s that is not kcall's is registered "
                            "(names starting with \"kc.\" are kcall's own)",
                            kc__bi_matmul_ops[0].name);
    }
  } else if (kc__txn_current()) {
    /* Inside a plugin's init: staged with the plugin's own ops. */
    kc_status_destroy(missing);
    st = kc__bi_register_all();
  } else {
    kc_status_destroy(missing);
    kc__txn txn = {0};
    kc__txn_begin(&txn);
    st = kc__bi_register_all();
    kc__txn_end();
    if (st) {
      kc__txn_discard(&txn);
    } else {
      st = kc__txn_commit(&txn); /* empties txn either way */
    }
  }
  pthread_mutex_unlock(&kc__bi_mu);
  return st;
}
