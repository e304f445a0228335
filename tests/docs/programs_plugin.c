/* programs_plugin.c: the plugin code docs/programs.md shows (registering a
 * legacy target and a typed one through the host table), in a plugin the
 * tests load and run programs with (tests/docs/CMakeLists.txt):
 *
 *   do_custom_call  ORIGINAL: A[i] = B[i % 128] + C[i], f32[128] and
 *                   f32[2048] in, f32[2048] out (XLA's guide)
 *   rms_norm        TYPED: y = x / sqrt(mean(x^2) + eps) along the last
 *                   dim of f32 arrays, eps an f32 attribute
 */
#include <kcall/abi.h>

static void do_custom_call(void* out, const void** ins) {
  const float* b = ins[0];
  const float* c = ins[1];
  float* a = out;
  for (int i = 0; i < 2048; ++i) a[i] = b[i % 128] + c[i];
}

/* The registration's user data is released with the target; here it is
 * static, and there is nothing to free. */
static void user_deleter(void* user) { (void)user; }

static kc_status* rms_norm(kc_xcall_frame* frame) {
  const kc_host_api* host = *(const kc_host_api* const*)frame->user;
  const DLTensor* x = &frame->args[0];
  if (x->ndim < 1) {
    return host->status_create(KC_INVALID_ARGUMENT,
                               "rms_norm: the argument needs at least one "
                               "dimension, got a scalar");
  }
  if (frame->stage == KC_XCALL_STAGE_INSTANTIATE) return NULL;
  int64_t cols = x->shape[x->ndim - 1];
  int64_t rows = 1;
  for (int32_t i = 0; i + 1 < x->ndim; ++i) rows *= x->shape[i];
  double eps = (double)frame->attrs[0].v.f32;
  const float* xs = (const float*)((const char*)x->data + x->byte_offset);
  float* ys = (float*)((char*)frame->results[0].data +
                       frame->results[0].byte_offset);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      sum += (double)xs[r * cols + j] * xs[r * cols + j];
    }
    double inv = 1.0 / __builtin_sqrt(sum / (double)cols + eps);
    for (int64_t j = 0; j < cols; ++j) {
      ys[r * cols + j] = (float)(xs[r * cols + j] * inv);
    }
  }
  return NULL;
}

/* The host table, where rms_norm finds it through its user pointer. */
static const kc_host_api* g_host;

static const char* const required[] = {"custom_calls", NULL};

static kc_status* programs_init(const kc_host_api* host) {
  g_host = host;
  void* user = (void*)&g_host;
  kc_status* st;
  st = host->xcall_register(KC_SV_LIT("do_custom_call"), KC_PLATFORM_HOST,
                            KC_XCALL_API_ORIGINAL, (void (*)(void))do_custom_call, 0);
  if (st) return st;
  static const kc_xcall_buffer_spec f32_any[] = {{{kDLFloat, 32, 1}, -1}};
  static const kc_xcall_attr_spec attrs[] = {{"eps", KC_ATTR_F32, 0}};
  static const kc_xcall_signature sig = {.struct_size = sizeof sig,
                                         .num_args = 1, .args = f32_any,
                                         .num_results = 1, .results = f32_any,
                                         .num_attrs = 1, .attrs = attrs};
  return host->xcall_register_typed(KC_SV_LIT("rms_norm"), KC_PLATFORM_HOST, &sig,
                                    rms_norm, user, user_deleter, 0);
}

static const kc_plugin_info info = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "programs_doc",
    .required_features = required,
    .init = programs_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &info;
}
