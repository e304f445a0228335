/* repeat.c: ops defined once and built either way, as a plugin
 * (libops_repeat.so, no define needed) or into a host program
 * (repeat_host.c, with -DKC_PLUGIN_API_HOST): Twice(x: T) -> (y: T) and
 * Thrice(x: T) -> (y: T) repeat x along its first dim. One shape function
 * serves both; each op hands it its own count as data, so nothing lives in
 * a global. */
#include <kcall/plugin_api.h>
#include <string.h>

kc_status* repeat_register(void);

typedef struct repeat_count {
  int64_t times;
} repeat_count;

static kc_status* repeat_shape(kc_shape_ctx* ctx) {
  const repeat_count* count = kc_shape_ctx_get_data(ctx);
  const kc_shape_handle* x = NULL;
  const kc_shape_handle* y = NULL;
  int64_t rows = 0;
  KC_RETURN_IF_ERROR(kc_shape_ctx_with_rank_at_least(
                         ctx, kc_shape_ctx_get_input(ctx, 0), 1, &x),
                     "repeat");
  KC_RETURN_IF_ERROR(
      kc_shape_ctx_multiply_dims(ctx, kc_shape_handle_get_dim(x, 0),
                                 count->times, &rows),
      "repeat");
  KC_RETURN_IF_ERROR(kc_shape_ctx_replace_dim(ctx, x, 0, rows, &y), "repeat");
  return kc_shape_ctx_set_output(ctx, 0, y);
}

/* Row-major, so y is x's bytes over and over until y is full (when x is
 * empty, so is y: bytes is 0 and nothing is copied). */
static kc_status* repeat_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  size_t bytes = ((size_t)x->dtype.bits * x->dtype.lanes + 7) / 8;
  for (int32_t i = 0; i < x->ndim; ++i) bytes *= (size_t)x->shape[i];
  const char* from = (const char*)x->data + x->byte_offset;
  char* to = (char*)y->data + y->byte_offset;
  for (int64_t r = 0; bytes && r < y->shape[0] / x->shape[0]; ++r) {
    memcpy(to + (size_t)r * bytes, from, bytes);
  }
  return NULL;
}

static void repeat_count_delete(void* count) {
  const kc_allocator* a = kc_allocator_system();
  a->fn(a->self, count, sizeof(repeat_count), 0, 0);
}

static kc_status* repeat_define(const char* name, int64_t times) {
  const kc_allocator* a = kc_allocator_system();
  repeat_count* count = a->fn(a->self, NULL, 0, sizeof *count, 0);
  if (!count) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  count->times = times;
  kc_op_builder* b = NULL;
  kc_status* st = kc_op_builder_create(name, &b);
  if (st) {
    repeat_count_delete(count);
    return st;
  }
  /* No status to check until registration: the builder keeps the first
   * failure, naming the call, and the op owns `count` from here on. */
  kc_op_builder_add_input_v2(b, "x: T");
  kc_op_builder_add_output_v2(b, "y: T");
  kc_op_builder_add_attr_v2(b, "T: type");
  kc_op_builder_set_doc_v2(b, "x repeated along its first dim");
  kc_op_builder_set_shape_fn_v2(b, repeat_shape, count, repeat_count_delete);
  /* repeat_shape multiplies through kc_shape_ctx_multiply_dims only. */
  kc_op_builder_set_flags_v2(b, KC_OP_SYMBOLIC_SHAPES);
  KC_RETURN_IF_ERROR(kc_op_registry_register(b, 0), "defining %s", name);

  kc_kernel_builder* kb = NULL;
  KC_RETURN_IF_ERROR(
      kc_kernel_builder_create(name, kDLCPU, NULL, repeat_compute, NULL, &kb),
      "defining %s", name);
  return kc_kernel_registry_register(kb);
}

kc_status* repeat_register(void) {
  KC_RETURN_IF_ERROR(repeat_define("Twice", 2), "repeat.c");
  return repeat_define("Thrice", 3);
}

/* The plugin's side: the loader calls the entry point, then init. */
static kc_status* repeat_init(const kc_host_api* host) {
  (void)host; /* KC_PLUGIN_ENTRY handed it to <kcall/plugin_api.h> */
  return repeat_register();
}

static const kc_plugin_info repeat_info = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "ops_repeat",
    .version = "1.0.0",
    /* The _v2 builder calls and shape-function data are plugin API 1.1. */
    .required_features = (const char* const[]){"ops", "kernels",
                                               "op_builder_v2", "user_data",
                                               NULL},
    .init = repeat_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &repeat_info;
}
