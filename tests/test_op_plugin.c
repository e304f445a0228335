/* Ops and kernels registered by plugins through the host table, against
 * the fixtures kt_plugin_ops.so and kt_plugin_ops_init_fails.so. */
#include <stdio.h>

#include "kt_ops.h"

#define KT_FIXTURE(name) KC_FIXTURE_DIR "/kt_plugin_" name ".so"

KC_TEST(op_plugin_defines_op_and_kernel) {
  kc_plugin* p = NULL;
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("ops"), &p));
  /* kcall inspect shows each registration with its kind. */
  static const char* const want[][2] = {{"op", "kt_ops.Scale"},
                                        {"function", "op.kt_ops.Scale"},
                                        {"kernel", "kt_ops.Scale:cpu:0"}};
  kc_plugin_desc d = {sizeof d, 0, 0, 0, 0, 0, 0, 0, 0};
  KC_CHECK_OK(kc_plugin_get_desc(p, &d));
  KC_CHECK_INT(d.registration_count, 3);
  for (size_t i = 0; i < 3; ++i) {
    kc_registration r = {sizeof r, NULL, {NULL, 0}};
    KC_CHECK_OK(kc_plugin_get_registration(p, i, &r));
    KC_CHECK_STR(r.kind, want[i][0]);
    KC_CHECK(kt_sv_is(r.name, want[i][1]));
  }
  const kc_op* op = kt_op("kt_ops.Scale");
  KC_CHECK_STR(kc_op_get_doc(op), "y = x * factor");
  double v[4] = {1, 2, 3, 4};
  kc_tensor* in = kt_tensor(kt_f64, (int64_t[]){2, 2}, 2, v);
  kc_tensor* out = NULL;
  kc_op_attr factor = {KC_SV_LIT("factor"), kc_any_float(0.5)};
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)&in, 1, &factor, 1, &out));
  KC_CHECK(((double*)kt_dl(out)->data)[3] == 2.0);
  kt_release(out);
  /* Through its packed function, with the default factor. */
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("op.kt_ops.Scale"), &f));
  kc_any arg = kc_any_object(KC_OBJECT(in));
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kc_func_call(f, &arg, 1, &ret));
  const DLTensor* y =
      kc_tensor_get_dltensor((const kc_tensor*)(const void*)ret.u.v_obj);
  KC_CHECK(((double*)y->data)[3] == 8.0);
  kc_any_release(&ret);
  /* The shape function, through the table, refuses a scalar. */
  kt_release(in);
  in = kt_tensor(kt_f32, NULL, 0, NULL);
  KC_CHECK_CODE(kt_call1(op, (const kc_tensor* const*)&in, 1, NULL, 0, &out),
                KC_INVALID_ARGUMENT, "expected rank >= 1, got rank 0");
  kt_release(in);
}

KC_TEST(op_plugin_failing_init_leaves_nothing) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("ops_init_fails"), &p), KC_ABORTED,
                "in init of plugin 'kt_ops_fail'",
                "kt_ops_fail: giving up after registering");
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt_ops_fail.Op"), &op),
                KC_NOT_FOUND, "");
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("op.kt_ops_fail.Op"), &f),
                KC_NOT_FOUND, "");
  kc_array* kernels = NULL;
  KC_CHECK_OK(kc_kernel_registry_list(kt_alloc(), KC_SV_LIT("kt_ops_fail.Op"),
                                      &kernels));
  KC_CHECK_INT(kc_array_get_size(kernels), 0);
  kc_object_release(KC_OBJECT(kernels));
  /* The names are free: the same op can be registered now. */
  kt_register_op("kt_ops_fail.Op", KT_SPECS("x: f32"), NULL, NULL, NULL);
}

/* A program calling kcall.OP (as kcall.jax.call_op lowers) when neither
 * that target nor the op is registered: the error says the op's plugin is
 * what is missing; once it is loaded, the same program compiles. */
KC_TEST(op_plugin_missing_for_a_program_says_so) {
  static const char text[] =
      "HloModule m\nENTRY main {\n  x = f32[3] parameter(0)\n"
      "  ROOT y = f32[3] custom-call(x), custom_call_target=\"kcall.kt_bad.Square\", "
      "api_version=API_VERSION_TYPED_FFI\n}\n";
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_CODE(kc_program_compile(p, NULL, &exe), KC_NOT_FOUND,
                "no custom-call target named 'kcall.kt_bad.Square@Host'",
                "the op kt_bad.Square, which a target named "
                "'kcall.kt_bad.Square' calls, is not registered either: load "
                "the plugin that defines it (kcall run --plugin FILE");
  kc_plugin* plugin = NULL;
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("bad_gradient"), &plugin));
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

/* A program calling kcall.OP is checked against the op when it is
 * compiled, not at its first run: the results it declares must be what
 * the op produces (dtype and dims, each output), its attributes ones the
 * op declares, its operands ones the op takes; each error names the
 * instruction, its line, and what was expected and found. */
KC_TEST(op_program_calls_are_checked_when_compiled) {
  kc_plugin* plugin = NULL;
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("ops"), &plugin));
  static const struct {
    const char* body;
    const char* expect;
  } cases[] = {
      {"  ROOT y = f64[4] custom-call(x), custom_call_target=\"kcall.kt_ops.Scale\", "
       "api_version=API_VERSION_TYPED_FFI\n",
       "custom call 'kcall.kt_ops.Scale' (instruction 'y', line 4): result 0: "
       "the op kt_ops.Scale produces f64[2,3], the program declares f64[4]"},
      {"  ROOT y = f32[2,3] custom-call(x), custom_call_target=\"kcall.kt_ops.Scale\", "
       "api_version=API_VERSION_TYPED_FFI\n",
       "result 0: the op kt_ops.Scale produces f64[2,3], the program declares "
       "f32[2,3]"},
      {"  ROOT y = (f64[2,3], f64[2,3]) custom-call(x), "
       "custom_call_target=\"kcall.kt_ops.Scale\", api_version=API_VERSION_TYPED_FFI\n",
       "the op kt_ops.Scale produces 1 outputs, the program declares 2 results"},
      {"  ROOT y = f64[2,3] custom-call(x), custom_call_target=\"kcall.kt_ops.Scale\", "
       "api_version=API_VERSION_TYPED_FFI, backend_config={factr = 2.0 : f64}\n",
       "attr 'factr': the op has no such attr (its attrs: T, factor)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[1024];
    snprintf(text, sizeof text, "HloModule m\nENTRY main {\n  x = f64[2,3] parameter(0)\n%s}\n",
             cases[i].body);
    kc_program* p = NULL;
    KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
    kc_executable* exe = NULL;
    KC_CHECK_CODE(kc_program_compile(p, NULL, &exe), KC_INVALID_ARGUMENT, cases[i].expect);
    KC_CHECK(exe == NULL);
    kc_program_destroy(p);
  }
  /* The call as the op makes it compiles and runs. */
  static const char good[] =
      "HloModule m\nENTRY main {\n  x = f64[2,3] parameter(0)\n"
      "  ROOT y = f64[2,3] custom-call(x), custom_call_target=\"kcall.kt_ops.Scale\", "
      "api_version=API_VERSION_TYPED_FFI, backend_config={factor = 2.0 : f64}\n}\n";
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(good), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}
