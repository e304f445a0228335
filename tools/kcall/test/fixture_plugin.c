/*
 * fixture_plugin.c — functions that hand back one of each kind of value,
 * for the CLI's tests of argument typing and result printing.
 */
#include <kcall/abi.h>

#define MAX_ITEMS 16

static const char* type_label(int32_t type_index) {
  switch (type_index) {
    case KC_TYPE_NONE: return "none";
    case KC_TYPE_BOOL: return "bool";
    case KC_TYPE_INT: return "int";
    case KC_TYPE_FLOAT: return "float";
    case KC_TYPE_RAW_STR:
    case KC_TYPE_SMALL_STR:
    case KC_TYPE_STR: return "str";
    case KC_TYPE_FUNC: return "function";
    default: return "other";
  }
}

/* An owned copy of an argument: borrowed strings are copied. *out is none
 * on failure. */
static kc_status* own(const kc_host_api* host, const kc_any* in,
                      kc_any* out) {
  kc_string_view text;
  *out = kc_any_none();
  if (in->type_index == KC_TYPE_RAW_STR && host->any_get_string(in, &text)) {
    return host->any_from_string(NULL, text, out);
  }
  if (in->type_index == KC_TYPE_DLTENSOR_PTR) {
    return host->status_create(KC_UNIMPLEMENTED, "cannot keep a borrowed "
                               "tensor");
  }
  *out = *in;
  host->any_retain(out);
  return NULL;
}

static void release_all(const kc_host_api* host, kc_any* items, int32_t n) {
  for (int32_t i = 0; i < n; ++i) host->any_release(&items[i]);
}

/* An array of owned copies of `args`. */
static kc_status* make_array(const kc_host_api* host, const kc_any* args,
                             int32_t nargs, kc_any* ret) {
  kc_any items[MAX_ITEMS];
  kc_status* status = kc_host_args_check_count(host, "fixture.list", nargs, 0,
                                             MAX_ITEMS);
  int32_t n = 0;
  for (; n < nargs && !status; ++n) status = own(host, &args[n], &items[n]);
  kc_array* array = NULL;
  if (!status) status = host->array_create(NULL, items, (size_t)n, &array);
  release_all(host, items, n); /* the array holds its own references */
  if (!status) *ret = kc_any_object(KC_OBJECT(array));
  return status;
}

static kc_status* fixture_type(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  const kc_host_api* host = self;
  kc_status* status = kc_host_args_check_count(host, "fixture.type", nargs, 1, 1);
  if (status) return status;
  return host->any_from_string(NULL, kc_sv(type_label(args[0].type_index)),
                               ret);
}

static kc_status* fixture_echo(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  const kc_host_api* host = self;
  kc_status* status = kc_host_args_check_count(host, "fixture.echo", nargs, 1, 1);
  if (status) return status;
  return own(host, &args[0], ret);
}

static kc_status* fixture_list(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  return make_array(self, args, nargs, ret);
}

static kc_status* fixture_nested(void* self, const kc_any* args, int32_t nargs,
                                 kc_any* ret) {
  const kc_host_api* host = self;
  (void)args;
  kc_status* status = kc_host_args_check_count(host, "fixture.nested", nargs, 0, 0);
  if (status) return status;
  kc_any inner[2] = {kc_any_none(), kc_any_cstr("x")};
  kc_any outer[3] = {kc_any_int(1), kc_any_none(), kc_any_none()};
  status = make_array(host, inner, 2, &outer[1]);
  if (!status) status = make_array(host, NULL, 0, &outer[2]);
  if (!status) status = make_array(host, outer, 3, ret);
  release_all(host, outer, 3);
  return status;
}

static kc_status* fixture_none(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  const kc_host_api* host = self;
  (void)args;
  (void)ret;
  return kc_host_args_check_count(host, "fixture.none", nargs, 0, 0);
}

static kc_status* fixture_bytes(void* self, const kc_any* args, int32_t nargs,
                                kc_any* ret) {
  const kc_host_api* host = self;
  (void)args;
  static const char data[] = "a'b\\c\n\x01\xff";
  kc_status* status = kc_host_args_check_count(host, "fixture.bytes", nargs, 0, 0);
  kc_bytes* bytes = NULL;
  if (!status) status = host->bytes_create(NULL, data, sizeof data - 1, &bytes);
  if (!status) *ret = kc_any_object(KC_OBJECT(bytes));
  return status;
}

static kc_status* fixture_tensor(void* self, const kc_any* args,
                                 int32_t nargs, kc_any* ret) {
  const kc_host_api* host = self;
  (void)args;
  static const int64_t shape[2] = {2, 3};
  const DLDataType f32 = {kDLFloat, 32, 1};
  const DLDevice cpu = {kDLCPU, 0};
  kc_status* status = kc_host_args_check_count(host, "fixture.tensor", nargs, 0, 0);
  kc_tensor* tensor = NULL;
  if (!status) status = host->tensor_create(NULL, shape, 2, f32, cpu, &tensor);
  if (status) return status;
  /* Filled, so that the result prints the same every time. */
  float* data = host->tensor_get_dltensor(tensor)->data;
  for (int i = 0; i < 6; ++i) data[i] = (float)i / 2;
  *ret = kc_any_object(KC_OBJECT(tensor));
  return NULL;
}

static kc_status* fixture_func(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  const kc_host_api* host = self;
  (void)args;
  kc_status* status = kc_host_args_check_count(host, "fixture.func", nargs, 0, 0);
  kc_func* func = NULL;
  if (!status) {
    status = host->func_create(NULL, fixture_none, self, NULL, &func);
  }
  if (!status) *ret = kc_any_object(KC_OBJECT(func));
  return status;
}

/* fixture_norm: a typed custom-call target whose signature has required
 * and optional attributes, for `kcall inspect`. It copies its operand. */
static kc_status* fixture_norm(kc_xcall_frame* frame) {
  if (frame->stage != KC_XCALL_STAGE_EXECUTE) return NULL;
  const DLTensor* x = &frame->args[0];
  size_t n = 1;
  for (int32_t i = 0; i < x->ndim; ++i) n *= (size_t)x->shape[i];
  const float* in = x->data;
  float* out = frame->results[0].data;
  for (size_t i = 0; i < n; ++i) out[i] = in[i];
  return NULL;
}

static kc_status* register_norm(const kc_host_api* host) {
  static const kc_xcall_buffer_spec any_f32 = {{kDLFloat, 32, 1}, -1};
  static const kc_xcall_attr_spec attrs[] = {
      {"eps", KC_ATTR_F32, 0},         {"axis", KC_ATTR_I64, 0},
      {"mode", KC_ATTR_STRING, 0},     {"axes", KC_ATTR_ARRAY, KC_ATTR_I64},
      {"center", KC_ATTR_BOOL, 0},     {"scale", KC_ATTR_F64, 0},
  };
  static const int64_t axes[2] = {0, 1};
  kc_attr defaults[6] = {{.type = 0}};
  defaults[0].type = KC_ATTR_F32; /* axis (1) is required */
  defaults[0].v.f32 = 1e-5f;
  defaults[2].type = KC_ATTR_STRING;
  defaults[2].v.str = kc_sv("fast");
  defaults[3].type = KC_ATTR_ARRAY;
  defaults[3].elem_type = KC_ATTR_I64;
  defaults[3].v.array.data = axes;
  defaults[3].v.array.count = 2;
  defaults[4].type = KC_ATTR_BOOL;
  defaults[4].v.b = true;
  defaults[5].type = KC_ATTR_F64;
  defaults[5].v.f64 = 0.1;
  const kc_xcall_signature sig = {
      .struct_size = sizeof sig,
      .num_args = 1,
      .args = &any_f32,
      .num_results = 1,
      .results = &any_f32,
      .num_attrs = 6,
      .attrs = attrs,
      .attr_defaults = defaults,
  };
  return host->xcall_register_typed(kc_sv("fixture_norm"), KC_PLATFORM_HOST, &sig,
                                    fixture_norm, NULL, NULL, 0);
}

static kc_status* fixture_init(const kc_host_api* host) {
  static const kc_func_entry kFunctions[] = {
      {"fixture.type", fixture_type},     {"fixture.echo", fixture_echo},
      {"fixture.list", fixture_list},     {"fixture.nested", fixture_nested},
      {"fixture.none", fixture_none},     {"fixture.bytes", fixture_bytes},
      {"fixture.tensor", fixture_tensor}, {"fixture.func", fixture_func},
  };
  /* If one registration fails, the host discards the earlier ones:
   * nothing is left half registered. */
  kc_status* status = kc_host_register_functions(
      host, kFunctions, sizeof kFunctions / sizeof kFunctions[0],
      (void*)(uintptr_t)host);
  return status ? status : register_norm(host);
}

static const kc_plugin_info kFixtureInfo = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "cli_fixture",
    .version = "1",
    .required_features = NULL,
    .init = fixture_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kFixtureInfo;
}
