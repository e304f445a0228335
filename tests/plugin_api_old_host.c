/* kcall/plugin_api.h in plugin mode against a host that offers API 1.0
 * only: the API 1.1 spellings must never read past the table, and must
 * fall back or refuse as the header says. Compiled with KC_BUILDING_PLUGIN
 * into the test runner; tests/test_plugin_api.c runs it. */
#include <string.h>

#include "kcall/plugin_api.h"
#include "kt_plugin_api.h"

static int kt_old_deleted;
static void kt_old_delete(void* self) {
  (void)self;
  kt_old_deleted++;
}

static kc_status* kt_old_shape(kc_shape_ctx* ctx) {
  return kc_shape_fn_unchanged(ctx);
}

static void kt_old_target(void* out, const void** ins,
                          kc_xcall_status* status) {
  (void)out;
  (void)ins;
  (void)status;
}

/* A failed check, as a status naming it. */
#define KT_OLD_CHECK(cond, what)                                            \
  do {                                                                      \
    if (!(cond)) {                                                          \
      return kc_status_create(KC_INTERNAL, "on an API 1.0 host: %s", what); \
    }                                                                       \
  } while (0)

/* True when `st` fails and its message contains `needle`; destroys it. */
static bool kt_old_fails_with(kc_status* st, kc_status_code code,
                              const char* needle) {
  bool ok = st && kc_status_get_code(st) == code &&
            strstr(kc_status_get_message(st), needle) != NULL;
  kc_status_destroy(st);
  return ok;
}

static kc_status* kt_old_checks(void) {
  /* The _v2 builder calls are their 1.0 forms: the definition registers,
   * and a failure is the 1.0 call's, with its position. */
  kc_op_builder* b = NULL;
  KC_RETURN_IF_ERROR(kc_op_builder_create("kt_old.Op", &b), "create");
  kc_op_builder_add_input_v2(b, "x: T");
  kc_op_builder_add_output_v2(b, "y: T");
  kc_op_builder_add_attr_v2(b, "T: {f32}");
  kc_op_builder_set_flags_v2(b, KC_OP_STATEFUL);
  kc_op_builder_set_doc_v2(b, "doc");
  kc_op_builder_set_shape_fn_v2(b, kt_old_shape, NULL, NULL);
  KC_RETURN_IF_ERROR(kc_op_registry_register(b, 0), "register kt_old.Op");

  KC_RETURN_IF_ERROR(kc_op_builder_create("kt_old.Bad", &b), "create");
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_add_attr_v2(b, "T: {f65}");
  KT_OLD_CHECK(
      kt_old_fails_with(kc_op_registry_register(b, 0), KC_INVALID_ARGUMENT,
                        "call 2 (kc_op_builder_add_attr): attr spec "
                        "'T: {f65}'"),
      "a failing _v2 call fails the registration");

  /* Data for a shape function cannot be kept by a 1.0 builder: it is
   * deleted, and the op refused, naming the call. */
  KC_RETURN_IF_ERROR(kc_op_builder_create("kt_old.Data", &b), "create");
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_set_shape_fn_v2(b, kt_old_shape, &kt_old_deleted,
                                kt_old_delete);
  KT_OLD_CHECK(kt_old_deleted == 1, "the shape data is deleted at once");
  KT_OLD_CHECK(
      kt_old_fails_with(kc_op_registry_register(b, 0), KC_INVALID_ARGUMENT,
                        "kc_op_builder_set_shape_fn_v2 with data "
                        "needs host API 1.1"),
      "shape data fails the registration");

  /* User data for a custom call: refused, deleted; without data the 1.0
   * registration is used. */
  KT_OLD_CHECK(
      kt_old_fails_with(
          kc_xcall_register_v2(KC_SV_LIT("kt_old.target"), KC_PLATFORM_HOST,
                               KC_XCALL_API_STATUS_RETURNING,
                               (void (*)(void))kt_old_target, &kt_old_deleted,
                               kt_old_delete, 0),
          KC_FAILED_PRECONDITION,
          "registering custom-call target 'kt_old.target': user data needs "
          "host API 1.1, this host offers 1.0"),
      "user data for a custom call is refused");
  KT_OLD_CHECK(kt_old_deleted == 2, "the target's user data is deleted");
  KC_RETURN_IF_ERROR(
      kc_xcall_register_v2(KC_SV_LIT("kt_old.target"), KC_PLATFORM_HOST,
                           KC_XCALL_API_STATUS_RETURNING,
                           (void (*)(void))kt_old_target, NULL, NULL, 0),
      "a target without user data");

  /* The accessors answer NULL without calling the (missing) entries. */
  KT_OLD_CHECK(kc_shape_ctx_get_data((const kc_shape_ctx*)(void*)&b) == NULL,
               "kc_shape_ctx_get_data is NULL");
  KT_OLD_CHECK(
      kc_xcall_status_get_user((const kc_xcall_status*)(void*)&b) == NULL,
      "kc_xcall_status_get_user is NULL");

  /* A function read from a kc_any, and text quoted, from the value and
   * the bytes themselves. */
  kc_func* f = NULL;
  KC_RETURN_IF_ERROR(kc_func_registry_lookup(KC_SV_LIT("op.kt_old.Op"), &f), "lookup"); /* borrowed */
  kc_any value;
  memset(&value, 0, sizeof value);
  value.type_index = KC_TYPE_FUNC;
  value.u.v_obj = KC_OBJECT(f);
  kc_func* got = NULL;
  KT_OLD_CHECK(kc_any_get_func(&value, &got) && got == f, "kc_any_get_func reads the function");
  kc_any number = kc_any_int(3);
  KT_OLD_CHECK(!kc_any_get_func(&number, &got), "kc_any_get_func refuses an int");
  char quoted[16];
  KT_OLD_CHECK(kc_sv_format_quoted(KC_SV_LIT("name"), quoted, sizeof quoted) == 6 &&
                   strcmp(quoted, "'name'") == 0,
               "kc_sv_format_quoted quotes");
  KT_OLD_CHECK(kc_sv_format_quoted(KC_SV_LIT("a longer name"), quoted, 6) == 15 &&
                   strcmp(quoted, "'a lo") == 0,
               "kc_sv_format_quoted cuts to its buffer");

  /* The 1.2 device functions: UNIMPLEMENTED naming the version, or
   * nothing for those without a status. */
  void* ptr = NULL;
  KT_OLD_CHECK(kt_old_fails_with(kc_device_allocate(kc_device_cpu(), 16, NULL, &ptr),
                                 KC_UNIMPLEMENTED,
                                 "kc_device_allocate needs host API 1.2, this host "
                                 "offers 1.0"),
               "kc_device_allocate needs 1.2");
  kc_device_host_free(kc_device_cpu(), NULL);
  kc_device_stream_destroy(kc_device_cpu(), NULL);

  /* The 1.3 gradient declaration fails the builder: the op is refused,
   * saying why, never registered without its gradient. */
  KC_RETURN_IF_ERROR(kc_op_builder_create("kt_old.Grad", &b), "create");
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_add_output_v2(b, "y: f32");
  kc_op_builder_set_gradient(b, "kt_old.Grad(grad(y)) -> grad(x)");
  KT_OLD_CHECK(kt_old_fails_with(kc_op_registry_register(b, 0),
                                 KC_INVALID_ARGUMENT,
                                 "kc_op_builder_set_gradient needs host API 1.3"),
               "kc_op_builder_set_gradient needs 1.3");

  /* The 1.4 batching rules: a refusal fails the builder (the op is
   * refused, never batched); the others leave the op to batch one element
   * at a time, always right. */
  KC_RETURN_IF_ERROR(kc_op_builder_create("kt_old.NoBatch", &b), "create");
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_add_output_v2(b, "y: f32");
  kc_op_builder_set_batching(b, KC_OP_BATCH_NONE);
  KT_OLD_CHECK(kt_old_fails_with(kc_op_registry_register(b, 0),
                                 KC_INVALID_ARGUMENT,
                                 "kc_op_builder_set_batching needs host API 1.4"),
               "kc_op_builder_set_batching(NONE) needs 1.4");
  KC_RETURN_IF_ERROR(kc_op_builder_create("kt_old.Batch", &b), "create");
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_add_output_v2(b, "y: f32");
  kc_op_builder_set_batching(b, KC_OP_BATCH_ELEMENTWISE);
  KC_RETURN_IF_ERROR(kc_op_registry_register(b, 0), "an elementwise op on a 1.0 host");

  /* The 1.5 forward-mode rule fails the builder: the op is refused, never
   * registered without it. */
  KC_RETURN_IF_ERROR(kc_op_builder_create("kt_old.Jvp", &b), "create");
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_add_output_v2(b, "y: f32");
  kc_op_builder_set_jvp(b, "kt_old.Jvp(tangent(x)) -> tangent(y)");
  KT_OLD_CHECK(kt_old_fails_with(kc_op_registry_register(b, 0),
                                 KC_INVALID_ARGUMENT,
                                 "kc_op_builder_set_jvp needs host API 1.5"),
               "kc_op_builder_set_jvp needs 1.5");

  /* A 1.5 ready-made shape function fails the builder too; called, it
   * says the host is too old. */
  KC_RETURN_IF_ERROR(kc_op_builder_create("kt_old.MatMul", &b), "create");
  kc_op_builder_add_input_v2(b, "a: f32");
  kc_op_builder_add_input_v2(b, "b: f32");
  kc_op_builder_add_output_v2(b, "c: f32");
  kc_op_builder_set_shape_fn_v2(b, kc_shape_fn_matmul, NULL, NULL);
  KT_OLD_CHECK(kt_old_fails_with(kc_op_registry_register(b, 0),
                                 KC_INVALID_ARGUMENT,
                                 "kc_shape_fn_matmul needs host API 1.5"),
               "kc_shape_fn_matmul needs 1.5");
  KT_OLD_CHECK(kt_old_fails_with(kc_shape_fn_reduce(NULL), KC_UNIMPLEMENTED,
                                 "kc_shape_fn_reduce needs host API 1.5, this host "
                                 "offers 1.0"),
               "kc_shape_fn_reduce needs 1.5");
  kc_op_builder* grad = NULL;
  KT_OLD_CHECK(kt_old_fails_with(kc_op_builder_create_gradient("kt_old.Grad", &grad),
                                 KC_UNIMPLEMENTED,
                                 "kc_op_builder_create_gradient needs host API 1.5"),
               "kc_op_builder_create_gradient needs 1.5");
  return NULL;
}

kc_status* kt_plugin_api_on_old_host(const kc_host_api* old_host,
                                     const kc_host_api* host) {
  const kc_host_api* before = kc_plugin_get_host();
  kc_plugin_set_host(old_host);
  kc_status* st = kt_old_checks();
  kc_plugin_set_host(host);
  if (!st && kc_plugin_get_host() != host) {
    st = kc_status_create(KC_INTERNAL, "kc_plugin_set_host did not set it");
  }
  kc_plugin_set_host(before);
  return st;
}
