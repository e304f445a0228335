/* User data given at registration, with its destructor: a shape
 * function's (kc_op_builder_set_shape_fn_v2, kc_shape_ctx_get_data) and a
 * legacy custom-call target's (kc_xcall_register_v2,
 * kc_xcall_status_get_user). Each destructor runs exactly once, whichever
 * way the registration goes. */
#include <stdio.h>

#include "kt_ops.h"

/* User data that counts its own deletions. */
typedef struct kt_data {
  int64_t value; /* what the callbacks read */
  int deleted;
} kt_data;

static void kt_data_delete(void* self) { ((kt_data*)self)->deleted++; }

/* ---- shape functions ----------------------------------------------------- */

/* y = x repeated data->value times along a new last dim. */
static kc_status* kt_repeat_shape(kc_shape_ctx* ctx) {
  const kt_data* d = kc_shape_ctx_get_data(ctx);
  if (!d) return kc_status_create(KC_INTERNAL, "kt.Repeat: no data");
  const kc_shape_handle* extra = NULL;
  const kc_shape_handle* out = NULL;
  kc_status* st = kc_shape_ctx_make_shape(ctx, 1, &d->value, &extra);
  if (!st) {
    st = kc_shape_ctx_concatenate(ctx, kc_shape_ctx_get_input(ctx, 0), extra,
                                  &out);
  }
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, out);
  return st;
}

static void kt_register_repeat(const char* name, kt_data* d, uint32_t flags,
                               kc_status** out_status) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create(name, &b));
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_add_output_v2(b, "y: f32");
  kc_op_builder_set_shape_fn_v2(b, kt_repeat_shape, d, kt_data_delete);
  *out_status = kc_op_registry_register(b, flags);
}

/* The rank and last dim inference gives `op` for an f32[2] input. */
static int64_t kt_inferred_last_dim(const kc_op* op) {
  int64_t shape[1] = {2};
  DLTensor x = {NULL, {kDLCPU, 0}, 1, kt_f32, shape, NULL, 0};
  const DLTensor* in = &x;
  kc_op_output_info info;
  int32_t n = 0;
  KC_CHECK_OK(kc_op_infer(op, &in, 1, NULL, 0, &info, 1, &n));
  KC_CHECK_INT(info.rank, 2);
  return info.dims[1];
}

KC_TEST(user_data_reaches_the_shape_function) {
  kt_data d = {3, 0};
  kc_status* st = NULL;
  kt_register_repeat("kt.Repeat", &d, 0, &st);
  KC_CHECK_OK(st);
  KC_CHECK_INT(kt_inferred_last_dim(kt_op("kt.Repeat")), 3);
  /* An eager call (with no kernel) runs the shape function too, and fails
   * only at kernel selection. */
  kc_tensor* in = kt_tensor(kt_f32, (int64_t[]){2}, 1, NULL);
  kc_tensor* out = NULL;
  KC_CHECK_CODE(kt_call1(kt_op("kt.Repeat"), (const kc_tensor* const*)&in, 1,
                         NULL, 0, &out),
                KC_NOT_FOUND, "no kernel");
  kt_release(in);
  KC_CHECK_INT(d.deleted, 0);
  /* The op reset takes the op and its function "op.kt.Repeat" away: the op
   * is freed, and the data with it, once. */
  kc_op_registry_reset();
  KC_CHECK_INT(d.deleted, 1);
  kc_func_registry_reset();
  KC_CHECK_INT(d.deleted, 1);
  KC_CHECK(kc_shape_ctx_get_data(NULL) == NULL);
}

KC_TEST(user_data_of_a_shape_function_is_deleted_once_on_every_path) {
  /* A builder destroyed unregistered. */
  kt_data d1 = {1, 0};
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Unused", &b));
  kc_op_builder_set_shape_fn_v2(b, kt_repeat_shape, &d1, kt_data_delete);
  kc_op_builder_destroy(b);
  KC_CHECK_INT(d1.deleted, 1);

  /* Replaced within the builder: the old data goes at once; the original
   * setter replaces it with none. */
  kt_data d2 = {2, 0}, d3 = {3, 0};
  KC_CHECK_OK(kc_op_builder_create("kt.Unused", &b));
  kc_op_builder_set_shape_fn_v2(b, kt_repeat_shape, &d2, kt_data_delete);
  kc_op_builder_set_shape_fn_v2(b, kt_repeat_shape, &d3, kt_data_delete);
  KC_CHECK_INT(d2.deleted, 1);
  KC_CHECK_OK(kc_op_builder_set_shape_fn(b, kc_shape_fn_unchanged));
  KC_CHECK_INT(d3.deleted, 1);
  kc_op_builder_destroy(b);
  KC_CHECK_INT(d3.deleted, 1);

  /* A NULL builder cannot take it: deleted at once. */
  kt_data d4 = {4, 0};
  kc_op_builder_set_shape_fn_v2(NULL, kt_repeat_shape, &d4, kt_data_delete);
  KC_CHECK_INT(d4.deleted, 1);

  /* A registration that fails: a bad spec, a name taken. */
  kt_data d5 = {5, 0};
  KC_CHECK_OK(kc_op_builder_create("kt.Repeat", &b));
  kc_op_builder_set_shape_fn_v2(b, kt_repeat_shape, &d5, kt_data_delete);
  kc_op_builder_add_input_v2(b, "x: nope");
  KC_CHECK_CODE(kc_op_registry_register(b, 0), KC_INVALID_ARGUMENT, "nope");
  KC_CHECK_INT(d5.deleted, 1);
  kt_data d6 = {6, 0}, d7 = {7, 0};
  kc_status* st = NULL;
  kt_register_repeat("kt.Repeat", &d6, 0, &st);
  KC_CHECK_OK(st);
  kt_register_repeat("kt.Repeat", &d7, 0, &st);
  KC_CHECK_CODE(st, KC_ALREADY_EXISTS, "kt.Repeat");
  KC_CHECK_INT(d7.deleted, 1);

  /* Overridden: the new op's data is used at once; the old op (and its
   * data) is freed once no call can hold it any more: here, at once,
   * since none runs. */
  kt_data d8 = {8, 0};
  kt_register_repeat("kt.Repeat", &d8, KC_REGISTER_OVERRIDE, &st);
  KC_CHECK_OK(st);
  KC_CHECK_INT(kt_inferred_last_dim(kt_op("kt.Repeat")), 8);
  KC_CHECK_INT(d6.deleted, 1);
  KC_CHECK_INT(d8.deleted, 0);
  kc_op_registry_reset();
  kc_func_registry_reset();
  KC_CHECK_INT(d6.deleted, 1);
  KC_CHECK_INT(d8.deleted, 1);
  KC_CHECK_INT(d7.deleted, 1);
}

/* ---- legacy custom calls ------------------------------------------------- */

/* out[i] = ins[0][i] * data->value for 4 floats; fails when the data is
 * missing. */
static void kt_scale_status(void* out, const void** ins,
                            kc_xcall_status* status) {
  const kt_data* d = kc_xcall_status_get_user(status);
  if (!d) {
    kc_xcall_status_set_failure(status, "no user data", 12);
    return;
  }
  for (int i = 0; i < 4; ++i) {
    ((float*)out)[i] = ((const float*)ins[0])[i] * (float)d->value;
  }
}

static void kt_scale_unified(void* out, const void** ins, const char* opaque,
                             size_t opaque_len, kc_xcall_status* status) {
  (void)opaque;
  (void)opaque_len;
  kt_scale_status(out, ins, status);
}

static void kt_original(void* out, const void** ins) {
  (void)out;
  (void)ins;
}

KC_TEST(user_data_reaches_legacy_custom_calls_through_their_status) {
  kt_data d = {10, 0};
  KC_CHECK_OK(kc_xcall_register_v2(
      KC_SV_LIT("kt.scale"), KC_PLATFORM_HOST, KC_XCALL_API_STATUS_RETURNING,
      (void (*)(void))kt_scale_status, &d, kt_data_delete, 0));
  kt_data u = {100, 0};
  KC_CHECK_OK(kc_xcall_register_v2(
      KC_SV_LIT("kt.scale_unified"), KC_PLATFORM_HOST,
      KC_XCALL_API_STATUS_RETURNING_UNIFIED, (void (*)(void))kt_scale_unified,
      &u, kt_data_delete, 0));
  float y[4] = {0};
  KC_CHECK_OK(kt_run_target("kt.scale", "API_VERSION_STATUS_RETURNING", y));
  KC_CHECK(y[0] == 10.0f && y[3] == 40.0f);
  KC_CHECK_OK(kt_run_target("kt.scale_unified",
                            "API_VERSION_STATUS_RETURNING_UNIFIED", y));
  KC_CHECK(y[0] == 100.0f);
  /* Without user data the status carries none. */
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("kt.scale_none"), KC_PLATFORM_HOST,
                                KC_XCALL_API_STATUS_RETURNING,
                                (void (*)(void))kt_scale_status, 0));
  KC_CHECK_CODE(
      kt_run_target("kt.scale_none", "API_VERSION_STATUS_RETURNING", y),
      KC_INTERNAL, "in custom call 'kt.scale_none'", "no user data");
  KC_CHECK(kc_xcall_status_get_user(NULL) == NULL);
  KC_CHECK_INT(d.deleted + u.deleted, 0);
  kc_xcall_registry_reset();
  KC_CHECK_INT(d.deleted, 1);
  KC_CHECK_INT(u.deleted, 1);
}

KC_TEST(user_data_of_a_custom_call_is_deleted_once_on_every_path) {
  /* ORIGINAL's signature has no place for it: refused, deleted at once. */
  kt_data d1 = {1, 0};
  KC_CHECK_CODE(
      kc_xcall_register_v2(KC_SV_LIT("kt.orig"), KC_PLATFORM_HOST,
                           KC_XCALL_API_ORIGINAL, (void (*)(void))kt_original,
                           &d1, kt_data_delete, 0),
      KC_INVALID_ARGUMENT,
      "registering custom-call target 'kt.orig@Host': user data "
      "needs a convention with a status argument");
  KC_CHECK_INT(d1.deleted, 1);
  /* ORIGINAL without data registers as before. */
  KC_CHECK_OK(kc_xcall_register_v2(KC_SV_LIT("kt.orig"), KC_PLATFORM_HOST,
                                   KC_XCALL_API_ORIGINAL,
                                   (void (*)(void))kt_original, NULL, NULL, 0));
  /* Refused for a bad name, a NULL fn, a taken name. */
  kt_data d2 = {2, 0};
  KC_CHECK_CODE(kc_xcall_register_v2(KC_SV_LIT("bad@name"), KC_PLATFORM_HOST,
                                     KC_XCALL_API_STATUS_RETURNING,
                                     (void (*)(void))kt_scale_status, &d2,
                                     kt_data_delete, 0),
                KC_INVALID_ARGUMENT, "invalid custom-call target name");
  KC_CHECK_INT(d2.deleted, 1);
  kt_data d3 = {3, 0};
  KC_CHECK_CODE(kc_xcall_register_v2(KC_SV_LIT("kt.null"), KC_PLATFORM_HOST,
                                     KC_XCALL_API_STATUS_RETURNING, NULL, &d3,
                                     kt_data_delete, 0),
                KC_INVALID_ARGUMENT, "fn is NULL");
  KC_CHECK_INT(d3.deleted, 1);
  kt_data d4 = {4, 0}, d5 = {5, 0};
  KC_CHECK_OK(kc_xcall_register_v2(
      KC_SV_LIT("kt.scale"), KC_PLATFORM_HOST, KC_XCALL_API_STATUS_RETURNING,
      (void (*)(void))kt_scale_status, &d4, kt_data_delete, 0));
  KC_CHECK_CODE(kc_xcall_register_v2(KC_SV_LIT("kt.scale"), KC_PLATFORM_HOST,
                                     KC_XCALL_API_STATUS_RETURNING,
                                     (void (*)(void))kt_scale_status, &d5,
                                     kt_data_delete, 0),
                KC_ALREADY_EXISTS, "kt.scale@Host");
  KC_CHECK_INT(d5.deleted, 1);
  /* Overridden: the new data serves the next compile; the old target is
   * freed once nothing holds it (an executable compiled before would). */
  kt_data d6 = {6, 0};
  KC_CHECK_OK(kc_xcall_register_v2(KC_SV_LIT("kt.scale"), KC_PLATFORM_HOST,
                                   KC_XCALL_API_STATUS_RETURNING,
                                   (void (*)(void))kt_scale_status, &d6,
                                   kt_data_delete, KC_REGISTER_OVERRIDE));
  float y[4] = {0};
  KC_CHECK_OK(kt_run_target("kt.scale", "API_VERSION_STATUS_RETURNING", y));
  KC_CHECK(y[0] == 6.0f);
  KC_CHECK_INT(d4.deleted, 1);
  KC_CHECK_INT(d6.deleted, 0);
  kc_xcall_registry_reset();
  KC_CHECK_INT(d4.deleted, 1);
  KC_CHECK_INT(d6.deleted, 1);
  KC_CHECK_INT(d5.deleted, 1);
}

/* ---- a plugin whose init fails ------------------------------------------- */

static char kt_deleted_names[128];

/* kt.on_delete(name): appends name and ';' to kt_deleted_names. */
static kc_status* kt_on_delete(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  (void)self;
  (void)ret;
  kc_string_view name;
  KC_RETURN_IF_ERROR(kc_args_get_string("kt.on_delete", args, nargs, 0, &name),
                     "kt.on_delete");
  size_t used = strlen(kt_deleted_names);
  snprintf(kt_deleted_names + used, sizeof kt_deleted_names - used, "%.*s;",
           (int)name.size, name.data);
  return NULL;
}

KC_TEST(user_data_is_deleted_once_when_a_plugin_init_fails) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_create(kt_alloc(), kt_on_delete, NULL, NULL, &f));
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("kt.on_delete"), f, 0));
  kc_object_release(KC_OBJECT(f));
  kc_plugin* p = NULL;
  KC_CHECK_CODE(
      kc_plugin_load(KC_FIXTURE_DIR "/kt_plugin_user_data_init_fails.so", &p),
      KC_ABORTED, "in init of plugin 'kt_ud_fail'",
      "kt_ud_fail: giving up after 2");
  /* Discarded in the order registered: the op (with its function), then
   * the target. */
  KC_CHECK_STR(kt_deleted_names, "shape data;user data;");
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt_ud_fail.Op"), &op),
                KC_NOT_FOUND, "");
  kc_xcall_target_desc d = {sizeof d, {NULL, 0}, 0, 0, NULL, false, 0, 0};
  KC_CHECK_CODE(
      kc_xcall_lookup(KC_SV_LIT("kt_ud_fail.target"), KC_PLATFORM_HOST, &d),
      KC_NOT_FOUND, "");
  /* The resets find nothing more to delete. */
  kc_xcall_registry_reset();
  kc_op_registry_reset();
  KC_CHECK_STR(kt_deleted_names, "shape data;user data;");
}
