/* mylib.c */
#include <kcall/abi.h>

/* r[i] = 2 x[i] + y[i]: the target gets the buffers and knows their size
 * (here, 4 floats). */
static void mylib_axpy(void* out, const void** ins) {
  const float* x = ins[0];
  const float* y = ins[1];
  float* r = out;
  for (int i = 0; i < 4; ++i) r[i] = 2.0f * x[i] + y[i];
}

static kc_status* mylib_init(const kc_host_api* host) {
  return host->xcall_register(KC_SV_LIT("mylib.axpy"), KC_PLATFORM_HOST,
                              KC_XCALL_API_ORIGINAL,
                              (void (*)(void))mylib_axpy, 0);
}

static const char* const required[] = {"custom_calls", NULL};

static const kc_plugin_info info = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "mylib",
    .required_features = required,
    .init = mylib_init,
};

KC_PLUGIN_ENTRY(host) { (void)host; return &info; }
