/* kcall/plugin_api.h: one source built as a plugin and linked into a host
 * behaves the same; its API 1.1 spellings on an API 1.0 host; a C++
 * plugin written with it; a plugin built against API 1.0 in this host;
 * the C++ layer's builder in a host; a plugin compiled in host mode,
 * which calls libkcall without linking it, refused.
 * (That every table entry has its spelling is checked when the library is
 * built, in src/plugin/host_api.c; tests/check_host_api_list.sh checks
 * that this check refuses a list that lacks an entry or mistypes one.) */
#include <stdio.h>

/* The host's headers (through kt_ops.h) first: kcall/plugin_api.h is then
 * in host mode, as in any host. */
#include "kt_ops.h"
#include "kcall/plugin_api.h"
#include "kt_plugin_api.h"

#define KT_FIXTURE(name) KC_FIXTURE_DIR "/kt_plugin_" name ".so"

static kc_func* kt_fn(const char* name) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(kc_sv(name), &f));
  return f;
}

static kc_status* kt_call(const char* name, const kc_any* args, int32_t n,
                          kc_any* ret) {
  *ret = kc_any_none();
  return kc_func_call(kt_fn(name), args, n, ret);
}

static int64_t kt_call_int(const char* name, const kc_any* args, int32_t n) {
  kc_any ret;
  KC_CHECK_OK(kt_call(name, args, n, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_INT);
  return ret.u.v_int64;
}

/* What tests/fixtures/same_source.c registers, checked the same way
 * whichever build registered it, down to the deletion of its user data. */
static void kt_check_same_source(void) {
  /* Functions, the argument readers and their messages. */
  kc_any args[3] = {kc_any_int(20), kc_any_int(22), kc_any_int(0)};
  KC_CHECK_INT(kt_call_int("kt_same.add", args, 2), 42);
  KC_CHECK_INT(kt_call_int("kt_same.twice", args, 1), 40);
  kc_any ret;
  kc_any name = kc_any_cstr("kcall");
  KC_CHECK_OK(kt_call("kt_same.greet", &name, 1, &ret));
  kc_string_view v;
  KC_CHECK(kc_any_get_string(&ret, &v) && kt_sv_is(v, "hello, kcall"));
  kc_any_release(&ret);
  kc_any wrong[2] = {kc_any_int(1), kc_any_cstr("x")};
  KC_CHECK_CODE(kt_call("kt_same.add", wrong, 2, &ret), KC_INVALID_ARGUMENT,
                "kt_same.add: argument 1: expected int, got str");
  KC_CHECK_CODE(kt_call("kt_same.add", args, 3, &ret), KC_INVALID_ARGUMENT,
                "kt_same.add: expected 2 arguments, got 3");
  KC_CHECK_CODE(kt_call("kt_same.twice", wrong + 1, 1, &ret),
                KC_INVALID_ARGUMENT,
                "in kt_same.twice: kt_same.twice: argument 0: expected int");
  KC_CHECK_CODE(kt_call("kt_same.fail", args, 1, &ret), KC_FAILED_PRECONDITION,
                "kt_same.fail: refused with 1 arguments");
  name = kc_any_cstr(
      "a name much too long to be greeted by this function, "
      "or so");
  KC_CHECK_CODE(kt_call("kt_same.greet", &name, 1, &ret), KC_OUT_OF_RANGE,
                "kt_same.greet: a name of 58 bytes is longer than 57");

  /* The op: the shape function reads its data, the kernel fills it. */
  const kc_op* op = kt_op("kt_same.Tile");
  KC_CHECK_STR(kc_op_get_doc(op), "x repeated 3 times");
  float x[2] = {1, 2};
  kc_tensor* in = kt_tensor(kt_f32, (int64_t[]){2}, 1, x);
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)&in, 1, NULL, 0, &out));
  const DLTensor* y = kt_dl(out);
  KC_CHECK_INT(y->shape[0], 6);
  KC_CHECK(((const float*)y->data)[4] == 1.0f &&
           ((const float*)y->data)[5] == 2.0f);
  kt_release(out);
  kt_release(in);
  in = kt_tensor(kt_f32, NULL, 0, NULL);
  KC_CHECK_CODE(kt_call1(op, (const kc_tensor* const*)&in, 1, NULL, 0, &out),
                KC_INVALID_ARGUMENT,
                "in the shape function: kt_same.Tile: expected rank 1");
  kt_release(in);

  /* The custom call reads its factor from the status. */
  float z[4] = {0};
  KC_CHECK_OK(
      kt_run_target("kt_same.scale", "API_VERSION_STATUS_RETURNING", z));
  KC_CHECK(z[0] == 2.5f && z[3] == 10.0f);

  /* Each user data object is deleted once, with what owns it. */
  kc_func* live = kt_fn("kt_same.live");
  kc_object_retain(KC_OBJECT(live)); /* outlives the resets below */
  KC_CHECK_OK(kc_func_call(live, NULL, 0, &ret));
  KC_CHECK_INT(ret.u.v_int64, 2);
  kc_xcall_registry_reset();
  KC_CHECK_OK(kc_func_call(live, NULL, 0, &ret));
  KC_CHECK_INT(ret.u.v_int64, 1);
  kc_op_registry_reset();
  kc_func_registry_reset();
  KC_CHECK_OK(kc_func_call(live, NULL, 0, &ret));
  KC_CHECK_INT(ret.u.v_int64, 0);
  kc_object_release(KC_OBJECT(live));
}

KC_TEST(plugin_api_same_source_as_a_plugin) {
  kc_plugin* p = NULL;
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("same_source"), &p));
  static const char* const want[][2] = {
      {"function", "kt_same.add"},
      {"function", "kt_same.twice"},
      {"function", "kt_same.greet"},
      {"function", "kt_same.fail"},
      {"function", "kt_same.live"},
      {"op", "kt_same.Tile"},
      {"function", "op.kt_same.Tile"},
      {"kernel", "kt_same.Tile:cpu:0"},
      {"custom-call target", "kt_same.scale@Host"}};
  kc_plugin_desc d = {sizeof d, 0, 0, 0, 0, 0, 0, 0, 0};
  KC_CHECK_OK(kc_plugin_get_desc(p, &d));
  KC_CHECK_INT(d.registration_count, 9);
  for (size_t i = 0; i < 9; ++i) {
    kc_registration r = {sizeof r, NULL, {NULL, 0}};
    KC_CHECK_OK(kc_plugin_get_registration(p, i, &r));
    KC_CHECK_STR(r.kind, want[i][0]);
    KC_CHECK(kt_sv_is(r.name, want[i][1]));
  }
  kt_check_same_source();
}

KC_TEST(plugin_api_same_source_linked_into_the_host) {
  /* The runner holds the host build: its entry point and init run as the
   * loader would run them, without the table in between. */
  const kc_host_api* host = kc_plugin_get_host_api();
  const kc_plugin_info* info = kc_plugin_entry(host);
  KC_CHECK_STR(info->name, "kt_same");
  KC_CHECK_OK(info->init(host));
  kt_check_same_source();
  /* Registered once more through its own function, as a host would. */
  KC_CHECK_OK(kt_same_register());
  KC_CHECK_INT(
      kt_call_int("kt_same.add", (kc_any[]){kc_any_int(1), kc_any_int(2)}, 2),
      3);
  KC_CHECK(kc_plugin_get_host() == host);
}

/* The table as an API 1.0 host gives it: shorter, and NULL beyond, so
 * that a call through an entry 1.0 lacks would crash the test. */
static kc_host_api kt_api_1_0_table(void) {
  kc_host_api old = *kc_plugin_get_host_api();
  old.struct_size = offsetof(kc_host_api, op_builder_add_input_v2);
  old.api_minor = 0;
  memset((char*)&old + old.struct_size, 0, sizeof old - old.struct_size);
  return old;
}

KC_TEST(plugin_api_on_an_api_1_0_host) {
  kc_host_api old = kt_api_1_0_table();
  KC_CHECK_OK(kt_plugin_api_on_old_host(&old, kc_plugin_get_host_api()));
}

KC_TEST(plugin_api_cpp_layer_in_a_host) {
  kc_host_api old = kt_api_1_0_table();
  KC_CHECK_OK(kt_cpp_layer_checks(&old));
}

KC_TEST(plugin_api_cpp_plugin) {
  kc_plugin* p = NULL;
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("api_cpp"), &p));
  kc_any args[2] = {kc_any_int(4), kc_any_int(5)};
  KC_CHECK_INT(kt_call_int("kt_cpp.mul", args, 2), 20);
  kc_any ret;
  KC_CHECK_CODE(kt_call("kt_cpp.mul", args, 1, &ret), KC_INVALID_ARGUMENT,
                "kt_cpp.mul: expected 2 arguments, got 1");
  /* Its op's shape function reads the data it was given. */
  int64_t shape[1] = {5};
  DLTensor x = {NULL, {kDLCPU, 0}, 1, kt_f32, shape, NULL, 0};
  const DLTensor* in = &x;
  kc_op_output_info info;
  int32_t n = 0;
  KC_CHECK_OK(kc_op_infer(kt_op("kt_cpp.Pad"), &in, 1, NULL, 0, &info, 1, &n));
  KC_CHECK_INT(info.dims[0], 9);
}

KC_TEST(plugin_api_1_0_plugin_loads_into_a_1_1_host) {
  /* Built against API 1.0: its info and calls are 1.0's, and it runs at
   * the minor it was built for. */
  kc_plugin* p = NULL;
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("api_1_0"), &p));
  kc_plugin_desc d = {sizeof d, 0, 0, 0, 0, 0, 0, 0, 0};
  KC_CHECK_OK(kc_plugin_get_desc(p, &d));
  KC_CHECK_INT(d.built_api_minor, 0);
  KC_CHECK_INT(d.api_minor, 0);
  kc_any arg = kc_any_int(7);
  KC_CHECK_INT(kt_call_int("kt_v10.next", &arg, 1), 8);
  /* Its op, defined with the 1.0 builder calls, works. */
  float x[2] = {1, 2};
  kc_tensor* t = kt_tensor(kt_f32, (int64_t[]){2}, 1, x);
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(kt_op("kt_v10.Neg"), (const kc_tensor* const*)&t, 1,
                       NULL, 0, &out));
  KC_CHECK(((const float*)kt_dl(out)->data)[1] == -2.0f);
  kt_release(out);
  kt_release(t);
}

KC_TEST(plugin_api_host_mode_plugin_is_refused_naming_the_function) {
  /* This runner makes libkcall's symbols global, so dlopen resolves the
   * plugin's calls; the loader refuses it all the same, as Python's
   * dlopen (libkcall private) would fail it. Nothing is registered. */
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("host_mode"), &p),
                KC_INVALID_ARGUMENT, "loading plugin '",
                "kt_plugin_host_mode.so': it calls libkcall's kc_shape_fn_unchanged",
                " directly without linking libkcall",
                "build it in plugin mode, including only <kcall/abi.h> and "
                "<kcall/plugin_api.h>",
                "no KC_PLUGIN_API_HOST",
                "older kcall headers need -DKC_BUILDING_PLUGIN",
                "or link it with libkcall");
  KC_CHECK(p == NULL);
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("kt_host_mode.answer"), &f),
                KC_NOT_FOUND, "kt_host_mode.answer");
}

KC_TEST(plugin_api_host_mode_plugin_linked_with_libkcall_loads) {
  kc_plugin* p = NULL;
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("host_mode_linked"), &p));
  KC_CHECK_INT(kt_call_int("kt_host_mode.answer", NULL, 0), 42);
}
