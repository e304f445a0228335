/*
 * double_plugin.c — an op written with <kcall/plugin_api.h>, which lets a
 * plugin call kcall by the library's own names: Double(x: f32) ->
 * (y: f32), y = 2 x, with the shape function kc_shape_fn_unchanged.
 * Nothing needs defining: a file that includes <kcall/plugin_api.h>
 * without the host's headers is built as a plugin, whose every kc_* call
 * goes through the host table (see the header). kcall_add_plugin builds it
 * (CMakeLists.txt); pkg-config's or `python -m kcall.config`'s --cflags do
 * as well.
 */
#include <kcall/plugin_api.h>

static kc_status* double_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  int64_t n = 1;
  for (int32_t i = 0; i < x->ndim; ++i) n *= x->shape[i];
  const float* from = (const float*)(const void*)((const char*)x->data + x->byte_offset);
  float* to = (float*)(void*)((char*)y->data + y->byte_offset);
  for (int64_t i = 0; i < n; ++i) to[i] = 2.0f * from[i];
  return NULL;
}

static kc_status* double_init(const kc_host_api* host) {
  (void)host; /* KC_PLUGIN_ENTRY handed it to <kcall/plugin_api.h> */
  kc_op_builder* b = NULL;
  KC_RETURN_IF_ERROR(kc_op_builder_create("Double", &b), "double_plugin");
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_add_output_v2(b, "y: f32");
  kc_op_builder_set_doc_v2(b, "y = 2 x");
  kc_op_builder_set_shape_fn_v2(b, kc_shape_fn_unchanged, NULL, NULL);
  KC_RETURN_IF_ERROR(kc_op_registry_register(b, 0), "double_plugin");
  kc_kernel_builder* kb = NULL;
  KC_RETURN_IF_ERROR(kc_kernel_builder_create("Double", kDLCPU, NULL,
                                              double_compute, NULL, &kb),
                     "double_plugin");
  return kc_kernel_registry_register(kb);
}

static const kc_plugin_info double_info = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "double",
    .required_features = (const char* const[]){"ops", "kernels",
                                               "op_builder_v2", NULL},
    .init = double_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &double_info;
}
