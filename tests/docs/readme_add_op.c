/* readme_add_op.c: the code README.md shows under "Ops and kernels", in a
 * plugin the tests load and call (tests/docs/CMakeLists.txt). The op Add is
 * defined through the host table exactly as the README writes it; its one
 * kernel adds f32 tensors whose shapes are each a suffix of the output's
 * (the broadcasts the tests use), and refuses the others rather than
 * compute them wrong. */
#include <kcall/abi.h>

/* Set in init, before any op can be called; shape functions get no user
 * data. */
static const kc_host_api* g_host;

static kc_status* add_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* out = NULL;
  kc_status* st =
      g_host->shape_ctx_broadcast(ctx, g_host->shape_ctx_get_input(ctx, 0),
                                  g_host->shape_ctx_get_input(ctx, 1), &out);
  if (!st) st = g_host->shape_ctx_set_output(ctx, 0, out);
  return st;
}

/* The element count of t, when t's dims are the last dims of out's. */
static bool suffix_numel(const DLTensor* t, const DLTensor* out,
                         int64_t* numel) {
  int32_t skip = out->ndim - t->ndim;
  *numel = 1;
  if (skip < 0) return false;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] != out->shape[skip + i]) return false;
    *numel *= t->shape[i];
  }
  return true;
}

static kc_status* add_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* x = g_host->kernel_ctx_get_input(ctx, 0);
  const DLTensor* y = g_host->kernel_ctx_get_input(ctx, 1);
  DLTensor* z = g_host->kernel_ctx_get_output(ctx, 0);
  int64_t nx = 0, ny = 0, nz = 0;
  if (!suffix_numel(x, z, &nx) || !suffix_numel(y, z, &ny) ||
      !suffix_numel(z, z, &nz) || nx == 0 || ny == 0) {
    return g_host->status_create(KC_UNIMPLEMENTED,
                                 "Add: this kernel broadcasts only inputs "
                                 "whose dims end the output's");
  }
  const float* xs = (const float*)((const char*)x->data + x->byte_offset);
  const float* ys = (const float*)((const char*)y->data + y->byte_offset);
  float* zs = (float*)((char*)z->data + z->byte_offset);
  for (int64_t i = 0; i < nz; ++i) zs[i] = xs[i % nx] + ys[i % ny];
  return NULL;
}

static kc_status* readme_init(const kc_host_api* host) {
  g_host = host;
  /* in a plugin's init, through the host table */
  kc_op_builder* b;
  kc_status* st = host->op_builder_create("Add", &b);
  if (st) return st;
  st = host->op_builder_add_input(b, "x: T");
  if (!st) st = host->op_builder_add_input(b, "y: T");
  if (!st) st = host->op_builder_add_output(b, "z: T");
  if (!st) st = host->op_builder_add_attr(b, "T: {f32, f64, i32}");
  if (!st) st = host->op_builder_set_shape_fn(b, add_shape);   /* broadcast */
  if (st) host->op_builder_destroy(b);
  else st = host->op_registry_register(b, 0);                  /* consumes b */
  /* ...then a kernel: host->kernel_builder_create("Add", kDLCPU, ...) */
  if (st) return st;
  kc_kernel_builder* kb;
  static const DLDataType f32 = {kDLFloat, 32, 1};
  st = host->kernel_builder_create("Add", kDLCPU, NULL, add_compute, NULL, &kb);
  if (st) return st;
  st = host->kernel_builder_add_type_constraint(kb, "T", &f32, 1);
  if (st) {
    host->kernel_builder_destroy(kb);
    return st;
  }
  return host->kernel_registry_register(kb); /* consumes kb */
}

static const char* const required[] = {"ops", "kernels", NULL};

static const kc_plugin_info info = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "readme_add_op",
    .required_features = required,
    .init = readme_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &info;
}
