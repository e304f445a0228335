/*
 * ops_plugin.h — what the example plugin's files share: small tensor
 * helpers, and Add's functions (ops_add.c) that ops_plugin.c registers and
 * AddGrad reuses.
 */
#ifndef KCALL_EXAMPLES_OPS_PLUGIN_H_
#define KCALL_EXAMPLES_OPS_PLUGIN_H_

#include <kcall/plugin_api.h>

#define OPS_MAX_RANK 32

static inline int64_t ops_numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static inline void* ops_data(const DLTensor* t) {
  return (char*)t->data + t->byte_offset;
}

kc_status* add_compute(void* kernel, kc_kernel_ctx* ctx);
/* Element strides of `t` against an output of rank `rank` and dims `out`:
 * 0 where t is broadcast. */
void add_strides(const DLTensor* t, int32_t rank, const int64_t* out,
                 int64_t* strides);

#endif /* KCALL_EXAMPLES_OPS_PLUGIN_H_ */
