/* typed_c_plugin.c: typed packed functions in C, with kcall/typed.h.
 *
 * Each KC_TYPED_FUNC line writes the packed function around a plain C
 * function: it checks the argument count and each argument's type (and
 * range, for i32 and f32; dtype and memory, for f32_tensor) and converts
 * the result. The wrappers use only the host table. */
#include <kcall/typed.h>

static double hypot2(double x, double y) { return x * x + y * y; }

static int64_t clamp(int64_t x, int64_t lo, int64_t hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* A function that can fail gets the host table first, to make its status. */
static kc_status* fill(const kc_host_api* host, DLTensor* x, float value) {
  int64_t n = 1;
  for (int32_t d = x->ndim - 1; d >= 0; --d) {
    if (x->strides && x->shape[d] != 1 && x->strides[d] != n) {
      return host->status_create(KC_UNIMPLEMENTED,
                                 "ctyped.fill: argument 0: not compact");
    }
    n *= x->shape[d];
  }
  float* data = (float*)(void*)((char*)x->data + x->byte_offset);
  for (int64_t i = 0; i < n; ++i) data[i] = value;
  return NULL;
}

KC_TYPED_FUNC(ctyped_hypot2, "ctyped.hypot2", float, hypot2, float, float)
KC_TYPED_FUNC(ctyped_clamp, "ctyped.clamp", int, clamp, int, int, int)
KC_TYPED_FUNC(ctyped_fill, "ctyped.fill", status, fill, f32_tensor, f32)

static kc_status* init(const kc_host_api* host) {
  static const kc_func_entry kFunctions[] = {
      KC_TYPED_ENTRY(ctyped_hypot2),
      KC_TYPED_ENTRY(ctyped_clamp),
      KC_TYPED_ENTRY(ctyped_fill),
  };
  return kc_host_register_typed(host, kFunctions,
                                sizeof kFunctions / sizeof kFunctions[0]);
}

static const kc_plugin_info kInfo = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "ctyped",
    .version = "1.0.0",
    .required_features = NULL,
    .init = init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kInfo;
}
