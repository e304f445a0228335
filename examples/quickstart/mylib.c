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

/* mylib.add(a, b) -> a + b, a packed function (see "Packed functions"). */
static kc_status* mylib_add(void* self, const kc_any* args, int32_t nargs,
                            kc_any* ret) {
  const kc_host_api* host = self;
  int64_t a = 0, b = 0, sum = 0;
  kc_status* st = kc_host_args_check_count(host, "mylib.add", nargs, 2, 2);
  if (!st) st = kc_host_args_get_int(host, "mylib.add", args, nargs, 0, &a);
  if (!st) st = kc_host_args_get_int(host, "mylib.add", args, nargs, 1, &b);
  if (st) return st; /* "mylib.add: argument 1: expected int, got str" */
  if (__builtin_add_overflow(a, b, &sum)) {
    return host->status_create(KC_OUT_OF_RANGE, "mylib.add: %lld + %lld "
                               "does not fit in 64 bits", (long long)a,
                               (long long)b);
  }
  *ret = kc_any_int(sum);
  return NULL;
}

static kc_status* mylib_init(const kc_host_api* host) {
  kc_status* st = host->xcall_register(KC_SV_LIT("mylib.axpy"),
                                       KC_PLATFORM_HOST, KC_XCALL_API_ORIGINAL,
                                       (void (*)(void))mylib_axpy, 0);
  /* Each function gets the host table as its `self`. */
  static const kc_func_entry fns[] = {{"mylib.add", mylib_add}};
  if (!st) st = kc_host_register_functions(host, fns, 1, (void*)host);
  return st;
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
