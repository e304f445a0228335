/* The f16 and bf16 kernel every built-in op has besides its f32 and f64
 * one: the half inputs widened to f32 (exactly), the op called in f32, its
 * outputs rounded to the half type (to nearest even), as PyTorch computes
 * half ops on the CPU. One compute function serves every op: its kernel
 * instance is the op's table row. */
#include <string.h>

#include "builtin/builtin_internal.h"
#include "internal/common.h"
#include "kernels/half.h"

#define KC__HF_MAX_ARGS 8

static bool kc__hf_is_half(DLDataType t) {
  return t.lanes == 1 && t.bits == 16 && (t.code == kDLFloat || t.code == kDLBfloat);
}

/* The name of the attr spec `spec` ("axes: list(int)" -> "axes") into
 * out (NUL-terminated, truncated to its size). */
static void kc__hf_attr_name(const char* spec, char* out, size_t size) {
  size_t n = 0;
  while (spec[n] && spec[n] != ':' && spec[n] != ' ' && n + 1 < size) {
    out[n] = spec[n];
    ++n;
  }
  out[n] = '\0';
}

/* The op's attrs as the call passed them, with T set to f32. */
static kc_status* kc__hf_attrs(const kc__bi_op* row, kc_kernel_ctx* ctx, char names[][32],
                               kc_op_attr* attrs, int32_t* count) {
  const kc_op_attrs* given = kc_kernel_ctx_get_attrs(ctx);
  int32_t n = 0;
  for (int32_t i = 0; row->attrs[i] && n < KC__HF_MAX_ARGS; ++i) {
    kc__hf_attr_name(row->attrs[i], names[n], sizeof names[n]);
    attrs[n].name = kc_sv(names[n]);
    if (strcmp(names[n], "T") == 0) {
      attrs[n].value = kc_any_dtype((DLDataType){kDLFloat, 32, 1});
    } else {
      const kc_any* v = NULL;
      KC_RETURN_IF_ERROR(kc_op_attrs_get_value(given, names[n], &v));
      attrs[n].value = *v;
    }
    ++n;
  }
  *count = n;
  return NULL;
}

static kc_status* kc__hf_compute(void* kernel, kc_kernel_ctx* ctx) {
  const kc__bi_op* row = kernel;
  int32_t n_in = kc_kernel_ctx_get_input_count(ctx);
  int32_t n_out = kc_kernel_ctx_get_output_count(ctx);
  if (n_in > KC__HF_MAX_ARGS || n_out > KC__HF_MAX_ARGS) {
    return kc_status_create(KC_INTERNAL, "%s: more args than the f16 kernel takes", row->name);
  }
  DLTensor wide[KC__HF_MAX_ARGS];
  const DLTensor* in[KC__HF_MAX_ARGS];
  for (int32_t i = 0; i < n_in; ++i) {
    const DLTensor* t = kc_kernel_ctx_get_input(ctx, i);
    in[i] = t;
    if (!kc__hf_is_half(t->dtype)) continue; /* indices, labels */
    int64_t numel = kc__bi_numel(t);
    float* w = NULL;
    KC_RETURN_IF_ERROR(kc_kernel_ctx_allocate_temp(ctx, (size_t)(numel ? numel : 1) * sizeof(float),
                                                   0, (void**)&w));
    const uint16_t* h = kc__bi_data(t);
    bool bf16 = t->dtype.code == kDLBfloat;
    for (int64_t k = 0; k < numel; ++k) w[k] = kc__half_to_f32(bf16, h[k]);
    wide[i] = *t;
    wide[i].data = w;
    wide[i].byte_offset = 0;
    wide[i].dtype = (DLDataType){kDLFloat, 32, 1};
    in[i] = &wide[i];
  }
  char names[KC__HF_MAX_ARGS][32];
  kc_op_attr attrs[KC__HF_MAX_ARGS];
  int32_t n_attrs = 0;
  KC_RETURN_IF_ERROR(kc__hf_attrs(row, ctx, names, attrs, &n_attrs));
  const kc_op* op = NULL;
  KC_RETURN_IF_ERROR(kc_op_registry_lookup(kc_sv(row->name), &op));
  kc_op_call_options options = {.struct_size = sizeof options,
                                .thread_pool = kc_kernel_ctx_get_thread_pool(ctx)};
  kc_tensor* out[KC__HF_MAX_ARGS] = {NULL};
  int32_t got = 0;
  KC_RETURN_IF_ERROR(
      kc_op_call(op, in, n_in, attrs, n_attrs, &options, out, KC__HF_MAX_ARGS, &got));
  for (int32_t o = 0; o < got && o < n_out; ++o) {
    DLTensor* dst = kc_kernel_ctx_get_output(ctx, o);
    const float* src = kc_tensor_get_dltensor(out[o])->data;
    uint16_t* h = kc__bi_data(dst);
    bool bf16 = dst->dtype.code == kDLBfloat;
    int64_t numel = kc__bi_numel(dst);
    for (int64_t k = 0; k < numel; ++k) h[k] = kc__f32_to_half(bf16, src[k]);
  }
  for (int32_t o = 0; o < got; ++o) kc_object_release(KC_OBJECT(out[o]));
  return NULL;
}

static kc_status* kc__hf_create(kc_kernel_construct_ctx* ctx, void** out) {
  *out = kc_kernel_construct_ctx_get_data(ctx);
  return NULL;
}

kc_status* kc__bi_register_half_kernel(const kc__bi_op* row) {
  kc_kernel_builder* k = NULL;
  KC_RETURN_IF_ERROR(
      kc_kernel_builder_create(row->name, kDLCPU, kc__hf_create, kc__hf_compute, NULL, &k));
  static const DLDataType kTypes[2] = {{kDLFloat, 16, 1}, {kDLBfloat, 16, 1}};
  kc_status* st = kc_kernel_builder_add_type_constraint(k, "T", kTypes, 2);
  if (!st) st = kc_kernel_builder_set_data(k, (void*)row, NULL);
  if (st) {
    kc_kernel_builder_destroy(k);
    return st;
  }
  return kc_kernel_registry_register(k);
}
