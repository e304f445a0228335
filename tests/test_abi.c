/* Compatibility tests of the plugin ABI (docs/abi.md): plugins built for
 * API 1.0 against the frozen headers, and by the other compiler, loaded
 * into this host (tests/abi/plugin_compat.c, built by
 * tests/abi/abi_tests.cmake), and the host table they are handed. */
#include <string.h>

#include "kt_ops.h"

/* ---- what kt_compat registers, called, with the answers checked ---------- */

static kc_func* kt_fn(const char* name) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(kc_sv(name), &f));
  return f;
}

static void kt_check_functions(void) {
  kc_any ret = kc_any_none();

  kc_any ab[2] = {kc_any_int(40), kc_any_int(2)};
  KC_CHECK_OK(kc_func_call(kt_fn("kt_compat.add"), ab, 2, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_INT && ret.u.v_int64 == 42);
  /* The plugin's inline readers build the host's message. */
  kc_any wrong[2] = {kc_any_int(1), kc_any_float(2)};
  KC_CHECK_CODE(kc_func_call(kt_fn("kt_compat.add"), wrong, 2, &ret),
                KC_INVALID_ARGUMENT,
                "kt_compat.add: argument 1: expected int, got float");

  /* Every kind of plain value in, an array of them out. */
  kc_any mix[4] = {kc_any_int(21), kc_any_float(3.0), kc_any_bool(false),
                   kc_any_cstr("a longer string")};
  KC_CHECK_OK(kc_func_call(kt_fn("kt_compat.mix"), mix, 4, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_ARRAY);
  const kc_array* array = (const kc_array*)(const void*)ret.u.v_obj;
  KC_CHECK_INT(kc_array_get_size(array), 4);
  const kc_any* items[4];
  for (size_t i = 0; i < 4; ++i) items[i] = kc_array_get_item(array, i);
  KC_CHECK(items[0]->type_index == KC_TYPE_INT && items[0]->u.v_int64 == 42);
  KC_CHECK(items[1]->type_index == KC_TYPE_FLOAT && items[1]->u.v_float64 == 0.75);
  KC_CHECK(items[2]->type_index == KC_TYPE_BOOL && items[2]->u.v_int64 == 1);
  kc_string_view s;
  KC_CHECK(kc_any_get_string(items[3], &s) && kt_sv_is(s, "a longer string!"));
  KC_CHECK_INT(items[3]->type_index, KC_TYPE_STR);
  kc_any_release(&ret);
  /* A short string comes back inline, in the kc_any itself. */
  mix[3] = kc_any_cstr("abc");
  KC_CHECK_OK(kc_func_call(kt_fn("kt_compat.mix"), mix, 4, &ret));
  const kc_any* small = kc_array_get_item((const kc_array*)(const void*)ret.u.v_obj, 3);
  KC_CHECK_INT(small->type_index, KC_TYPE_SMALL_STR);
  KC_CHECK(kc_any_get_string(small, &s) && kt_sv_is(s, "abc!"));
  kc_any_release(&ret);

  /* A strided view with a byte offset: the middle column of a 3x3
   * matrix, from its second row, read through DLTensor's fields. */
  double m[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  int64_t shape[1] = {2};
  int64_t strides[1] = {3};
  DLTensor view = {m, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, shape, strides,
                   4 * sizeof(double)};
  kc_any t = kc_any_dltensor(&view);
  KC_CHECK_OK(kc_func_call(kt_fn("kt_compat.strided_sum"), &t, 1, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_FLOAT && ret.u.v_float64 == 5.0 + 8.0);
  /* And compact, rank 2. */
  int64_t shape2[2] = {3, 3};
  DLTensor whole = {m, {kDLCPU, 0}, 2, {kDLFloat, 64, 1}, shape2, NULL, 0};
  t = kc_any_dltensor(&whole);
  KC_CHECK_OK(kc_func_call(kt_fn("kt_compat.strided_sum"), &t, 1, &ret));
  KC_CHECK(ret.u.v_float64 == 45.0);

  /* A tensor object made through the table. */
  kc_any n = kc_any_int(5);
  KC_CHECK_OK(kc_func_call(kt_fn("kt_compat.iota"), &n, 1, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_TENSOR);
  const DLTensor* dl = kc_tensor_get_dltensor((const kc_tensor*)(const void*)ret.u.v_obj);
  KC_CHECK(dl->ndim == 1 && dl->shape[0] == 5 && dl->dtype.code == kDLFloat &&
           dl->dtype.bits == 32);
  for (int i = 0; i < 5; ++i) KC_CHECK(((const float*)dl->data)[i] == (float)i);
  kc_any_release(&ret);

  /* A function object passed in and called back through the table. */
  kc_any apply[2] = {kc_any_object(KC_OBJECT(kt_fn("kt_compat.iota"))),
                     kc_any_int(3)};
  KC_CHECK_OK(kc_func_call(kt_fn("kt_compat.apply"), apply, 2, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_TENSOR);
  kc_any_release(&ret);
}

static void kt_check_op(void) {
  const kc_op* op = kt_op("kt_compat.Axpy");
  KC_CHECK_STR(kc_op_get_doc(op), "z = a * x + y");
  for (int bits = 32; bits <= 64; bits *= 2) {
    const DLDataType dtype = bits == 32 ? kt_f32 : kt_f64;
    double xd[4] = {1, 2, 3, 4}, yd[4] = {10, 20, 30, 40};
    float xf[4] = {1, 2, 3, 4}, yf[4] = {10, 20, 30, 40};
    int64_t shape[2] = {2, 2};
    kc_tensor* x = kt_tensor(dtype, shape, 2, bits == 32 ? (void*)xf : (void*)xd);
    kc_tensor* y = kt_tensor(dtype, shape, 2, bits == 32 ? (void*)yf : (void*)yd);
    const DLTensor* in[2] = {kt_dl(x), kt_dl(y)};
    kc_op_attr a = {KC_SV_LIT("a"), kc_any_float(0.5)};
    kc_tensor* z = NULL;
    int32_t count = 0;
    KC_CHECK_OK(kc_op_call(op, in, 2, &a, 1, NULL, &z, 1, &count));
    KC_CHECK_INT(count, 1);
    const DLTensor* zd = kt_dl(z);
    KC_CHECK(zd->ndim == 2 && zd->shape[0] == 2 && zd->shape[1] == 2 &&
             zd->dtype.bits == bits);
    for (int i = 0; i < 4; ++i) {
      double got = bits == 32 ? ((const float*)zd->data)[i]
                              : ((const double*)zd->data)[i];
      KC_CHECK(got == 0.5 * (i + 1) + 10.0 * (i + 1));
    }
    kt_release(z);
    /* The plugin's shape function, through the table, refuses a mismatch. */
    kc_tensor* odd = kt_tensor(dtype, (int64_t[]){3}, 1, NULL);
    const DLTensor* bad[2] = {kt_dl(x), kt_dl(odd)};
    KC_CHECK_CODE(kc_op_call(op, bad, 2, &a, 1, NULL, &z, 1, &count),
                  KC_INVALID_ARGUMENT, "kt_compat.Axpy");
    kt_release(odd);
    kt_release(x);
    kt_release(y);
  }
}

static kc_executable* kt_compile_text(const char* text) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, NULL, &exe);
  kc_program_destroy(p);
  KC_CHECK_OK(st);
  return exe;
}

static void kt_check_targets(void) {
  /* Both conventions in one program: s = x + y (legacy, its length in
   * the opaque bytes), r = s * 2.5 (typed, an f32 attribute). */
  kc_executable* exe = kt_compile_text(
      "HloModule compat\n"
      "ENTRY main {\n"
      "  x = f32[4] parameter(0)\n"
      "  y = f32[4] parameter(1)\n"
      "  s = f32[4] custom-call(x, y), custom_call_target=\"kt_compat.add_n\", "
      "api_version=API_VERSION_STATUS_RETURNING_UNIFIED, backend_config=\"4\"\n"
      "  ROOT r = f32[4] custom-call(s), custom_call_target=\"kt_compat.scale\", "
      "api_version=API_VERSION_TYPED_FFI, backend_config={factor = 2.5 : f32}\n"
      "}\n");
  float xv[4] = {1, 2, 3, 4}, yv[4] = {10, 20, 30, 40};
  int64_t dims[1] = {4};
  DLTensor x = {xv, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, dims, NULL, 0};
  DLTensor y = {yv, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, dims, NULL, 0};
  const DLTensor* in[2] = {&x, &y};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, in, 2, NULL, &out));
  const float* r = kt_dl(out)->data;
  for (int i = 0; i < 4; ++i) KC_CHECK(r[i] == 2.5f * 11.0f * (float)(i + 1));
  kt_release(out);
  kc_executable_destroy(exe);

  /* A failure the plugin reports through the legacy status arrives with
   * its message. */
  exe = kt_compile_text(
      "HloModule compat_fails\n"
      "ENTRY main {\n"
      "  x = f32[4] parameter(0)\n"
      "  ROOT s = f32[4] custom-call(x, x), custom_call_target=\"kt_compat.add_n\", "
      "api_version=API_VERSION_STATUS_RETURNING_UNIFIED, backend_config=\"four\"\n"
      "}\n");
  KC_CHECK_CODE(kc_executable_execute(exe, in, 1, NULL, &out), KC_INTERNAL,
                "in custom call 'kt_compat.add_n'",
                "kt_compat.add_n: backend_config must be the element count");
  kc_executable_destroy(exe);
}

/* Loads kt_compat from `path` and checks everything it offers. */
static void kt_check_compat_plugin(const char* path, uint32_t built_minor) {
  kc_plugin* p = NULL;
  KC_CHECK_OK(kc_plugin_load(path, &p));
  kc_plugin_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  KC_CHECK_OK(kc_plugin_get_desc(p, &d));
  KC_CHECK_STR(d.name, "kt_compat");
  KC_CHECK_STR(d.version, "1.0.0");
  KC_CHECK_INT(d.built_api_major, 1);
  KC_CHECK_INT(d.built_api_minor, built_minor);
  KC_CHECK_INT(d.api_major, KC_API_VERSION_MAJOR);
  KC_CHECK_INT(d.api_minor, built_minor);
  static const char* const want[][2] = {
      {"function", "kt_compat.add"},
      {"function", "kt_compat.mix"},
      {"function", "kt_compat.strided_sum"},
      {"function", "kt_compat.iota"},
      {"function", "kt_compat.apply"},
      {"op", "kt_compat.Axpy"},
      {"function", "op.kt_compat.Axpy"},
      {"kernel", "kt_compat.Axpy:cpu:0"},
      {"custom-call target", "kt_compat.add_n@Host"},
      {"custom-call target", "kt_compat.scale@Host"},
  };
  const size_t count = sizeof want / sizeof want[0];
  KC_CHECK_INT(d.registration_count, count);
  for (size_t i = 0; i < count; ++i) {
    kc_registration r = {sizeof r, NULL, {NULL, 0}};
    KC_CHECK_OK(kc_plugin_get_registration(p, i, &r));
    KC_CHECK_STR(r.kind, want[i][0]);
    if (!kt_sv_is(r.name, want[i][1])) {
      kt__fail(__FILE__, __LINE__, "registration %zu: expected %s, got %.*s",
               i, want[i][1], (int)r.name.size, r.name.data);
    }
  }
  kt_check_functions();
  kt_check_op();
  kt_check_targets();
}

/* ---- the tests ------------------------------------------------------------ */

KC_TEST(abi_v1_0_plugin_runs) {
  /* Built against tests/abi/v1.0 alone: API 1.0, whatever the host's. */
  kt_check_compat_plugin(KC_V1_0_PLUGIN, 0);
}

KC_TEST(abi_other_compiler_plugin_runs) {
  if (KC_OTHER_CC_PLUGIN[0] == '\0') {
    kt_skip("no %s found: the plugin built by the other compiler than this "
            "build's (%s) is not tested here",
            KC_OTHER_CC_NAME[0] ? KC_OTHER_CC_NAME : "second compiler", KC_CC_ID);
  }
  /* Built against include/: the current API. */
  kt_check_compat_plugin(KC_OTHER_CC_PLUGIN, KC_API_VERSION_MINOR);
}

KC_TEST(abi_host_table_entries_all_set) {
  /* After its five fixed fields the table holds function pointers only,
   * each filled in: an entry appended to the struct but not to the
   * library's table would be NULL, and a plugin calling it would crash. */
  const kc_host_api* host = kc_plugin_get_host_api();
  const size_t first = offsetof(kc_host_api, status_create);
  KC_CHECK_INT(first, 32);
  KC_CHECK_INT(host->struct_size, sizeof(kc_host_api));
  KC_CHECK_INT((host->struct_size - first) % sizeof(void (*)(void)), 0);
  size_t entries = 0;
  for (size_t at = first; at < host->struct_size; at += sizeof(void (*)(void))) {
    void (*entry)(void) = NULL;
    memcpy(&entry, (const char*)host + at, sizeof entry);
    if (!entry) {
      kt__fail(__FILE__, __LINE__, "host table entry %zu (offset %zu) is NULL",
               entries, at);
    }
    ++entries;
  }
  /* API 1.0 shipped 115; entries are only ever appended. */
  KC_CHECK(entries >= 115);
  KC_CHECK(host->xla_ffi_get_api != NULL); /* the last of 1.0 */
}
