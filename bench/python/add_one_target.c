/* The benchmark's trivial kernel, y = x + 1 on f32, as kcall typed
 * targets for bench_jax.py to hand to JAX through the XLA FFI adapter:
 * "bench.add_one" without an INSTANTIATE stage, "bench.add_one_stateful"
 * with one (so the adapter keeps a record per call site in XLA's state,
 * and looks it up on every call). The same computation as AddOne in
 * tests/xla_ffi/handlers.cc, written against XLA's own headers. */
#include <kcall/abi.h>

static kc_status* add_one(kc_xcall_frame* f) {
  if (f->stage == KC_XCALL_STAGE_INSTANTIATE) return NULL; /* no state to make */
  const float* x = f->args[0].data;
  float* y = f->results[0].data;
  int64_t n = 1;
  for (int32_t i = 0; i < f->args[0].ndim; ++i) n *= f->args[0].shape[i];
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + 1.0f;
  return NULL;
}

static const kc_xcall_buffer_spec kF32[] = {{{kDLFloat, 32, 1}, -1}};
static const kc_xcall_signature kSignature = {
    .struct_size = sizeof(kc_xcall_signature),
    .num_args = 1, .args = kF32,
    .num_results = 1, .results = kF32,
    .flags = KC_XCALL_SIG_NO_INSTANTIATE,
};

static const kc_xcall_signature kStatefulSignature = {
    .struct_size = sizeof(kc_xcall_signature),
    .num_args = 1, .args = kF32,
    .num_results = 1, .results = kF32,
};

static kc_status* init(const kc_host_api* host) {
  kc_status* st = host->xcall_register_typed(KC_SV_LIT("bench.add_one"),
                                             KC_PLATFORM_HOST, &kSignature, add_one,
                                             NULL, NULL, 0);
  if (!st) {
    st = host->xcall_register_typed(KC_SV_LIT("bench.add_one_stateful"), KC_PLATFORM_HOST,
                                    &kStatefulSignature, add_one, NULL, NULL, 0);
  }
  return st;
}

static const char* const kRequired[] = {"custom_calls", NULL};

static const kc_plugin_info kInfo = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "bench_add_one",
    .required_features = kRequired,
    .init = init,
};

KC_PLUGIN_ENTRY(host) { (void)host; return &kInfo; }
