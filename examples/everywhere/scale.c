/* scale.c: one kernel, y = factor * x, for JAX, PyTorch and `kcall run` */
#include <kcall/abi.h>
#include <stdlib.h>

static const kc_host_api* g_host;

/* The kernel, written once. */
static void scale(const float* x, float* y, int64_t n, float factor) {
  for (int64_t i = 0; i < n; ++i) y[i] = factor * x[i];
}

static int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* As the typed target "scale" (programs, `kcall run`, JAX): f32 buffers
 * of any rank and the attribute `factor` (f32). */
static kc_status* scale_target(kc_xcall_frame* f) {
  scale(f->args[0].data, f->results[0].data, numel(&f->args[0]),
        f->attrs[0].v.f32);
  return NULL;
}

static const kc_xcall_buffer_spec kF32[] = {{{kDLFloat, 32, 1}, -1}};
static const kc_xcall_attr_spec kFactor[] = {{"factor", KC_ATTR_F32, 0}};
static const kc_xcall_signature kSignature = {
    .struct_size = sizeof(kc_xcall_signature),
    .num_args = 1, .args = kF32,
    .num_results = 1, .results = kF32,
    .num_attrs = 1, .attrs = kFactor,
    .flags = KC_XCALL_SIG_NO_INSTANTIATE, /* no state, no scratch */
    /* Linear: its gradient is itself (kcall.jax.call_target). */
    .gradient = "scale(grad(result0)) -> grad(arg0)",
};

/* As the op "Scale" (PyTorch, kcall.ops, JAX): its kernel instance holds
 * the factor, read once per distinct attribute value. */
static kc_status* scale_create(kc_kernel_construct_ctx* ctx, void** out) {
  double factor = 0;
  kc_status* st = g_host->op_attrs_get_float(
      g_host->kernel_construct_ctx_get_attrs(ctx), "factor", &factor);
  float* kernel = st ? NULL : malloc(sizeof *kernel);
  if (!st && !kernel) st = g_host->status_create(KC_RESOURCE_EXHAUSTED, "Scale");
  if (!st) *kernel = (float)factor;
  *out = kernel;
  return st;
}

static kc_status* scale_compute(void* kernel, kc_kernel_ctx* ctx) {
  const DLTensor* x = g_host->kernel_ctx_get_input(ctx, 0);
  DLTensor* y = g_host->kernel_ctx_get_output(ctx, 0);
  scale(x->data, y->data, numel(x), *(const float*)kernel);
  return NULL;
}

static kc_status* define_op(void) {
  kc_op_builder* b = NULL;
  kc_status* st = g_host->op_builder_create("Scale", &b);
  if (!st) st = g_host->op_builder_add_input(b, "x: f32");
  if (!st) st = g_host->op_builder_add_output(b, "y: f32");
  if (!st) st = g_host->op_builder_add_attr(b, "factor: float = 1.0");
  if (!st) st = g_host->op_builder_set_shape_fn(b, g_host->shape_fn_unchanged);
  /* Linear: its gradient is itself, with the same factor (the attribute
   * goes to the gradient op under its name). The builder keeps an error,
   * which registration reports. */
  if (!st) g_host->op_builder_set_gradient(b, "Scale(grad(y)) -> grad(x)");
  /* And its own forward-mode rule, on a host that knows them (API 1.5);
   * on an older one forward mode is refused, naming the op. */
  if (!st && KC_STRUCT_HAS(g_host, kc_host_api, op_builder_set_jvp)) {
    g_host->op_builder_set_jvp(b, "Scale(tangent(x)) -> tangent(y)");
  }
  /* Element-wise: a batch is one call (jax.vmap), on a host that knows
   * batching rules (API 1.4); an older one batches element by element. */
  if (!st && KC_STRUCT_HAS(g_host, kc_host_api, op_builder_set_batching)) {
    g_host->op_builder_set_batching(b, KC_OP_BATCH_ELEMENTWISE);
  }
  if (st) {
    g_host->op_builder_destroy(b);
    return st;
  }
  st = g_host->op_registry_register(b, 0);
  kc_kernel_builder* k = NULL;
  if (!st) {
    st = g_host->kernel_builder_create("Scale", kDLCPU, scale_create,
                                       scale_compute, free, &k);
  }
  return st ? st : g_host->kernel_registry_register(k);
}

static kc_status* init(const kc_host_api* host) {
  g_host = host;
  kc_status* st = host->xcall_register_typed(KC_SV_LIT("scale"),
                                             KC_PLATFORM_HOST, &kSignature,
                                             scale_target, NULL, NULL, 0);
  return st ? st : define_op();
}

static const char* const kRequired[] = {"custom_calls", "ops", "kernels",
                                        "gradient", "target_gradient", NULL};

static const kc_plugin_info kInfo = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "scale",
    .required_features = kRequired,
    .init = init,
};

KC_PLUGIN_ENTRY(host) { (void)host; return &kInfo; }
