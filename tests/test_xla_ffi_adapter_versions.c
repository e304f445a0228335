/* The XLA FFI adapter (kc_xla_ffi_adapter_create) called by XLAs of each
 * API version it speaks, 0.1 (jaxlib 0.5 to 0.7), 0.2 (jaxlib 0.8) and 0.3,
 * and by one it does not: a fake XLA here checks that what the adapter
 * passes it is laid out as its version lays it out, and that the
 * metadata query is answered with its version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcall/kcall.h"
#include "test.h"
#include "xcall/xla_ffi_api.h"

struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  char message[512];
};

/* The fake XLA: its version, and what the adapter set with it. */
static struct {
  int minor;
  int bad_layouts; /* calls whose struct_size or fields were off */
  int64_t type_id;
  void (*type_deleter)(void*);
  void* state;
  void (*state_deleter)(void*);
} kt_xla;

static XLA_FFI_Error* kt_error_create(XLA_FFI_Error_Create_Args* a) {
  XLA_FFI_Error* e = calloc(1, sizeof *e);
  if (!e) abort();
  e->code = a->errc;
  snprintf(e->message, sizeof e->message, "%s", a->message);
  return e;
}

static void kt_error_get_message(XLA_FFI_Error_GetMessage_Args* a) { a->message = a->error->message; }

static void kt_error_destroy(XLA_FFI_Error_Destroy_Args* a) { free(a->error); }

static XLA_FFI_Error* kt_type_register(XLA_FFI_Type_Register_Args* a) {
  if (a->struct_size < KC__XLA_SIZE(XLA_FFI_Type_Register_Args, type_id)) ++kt_xla.bad_layouts;
  /* Before 0.2 a type has no info: its deleter comes with the state. */
  kt_xla.type_deleter = kt_xla.minor >= 2 && a->type_info ? a->type_info->deleter : NULL;
  a->type_id->type_id = kt_xla.type_id = 42;
  return NULL;
}

static XLA_FFI_Error* kt_state_set(XLA_FFI_State_Set_Args* a) {
  if (kt_xla.minor == 1) {
    const kc__xla_state_set_args_0_1* o = (const void*)a;
    if (o->struct_size != KC__XLA_STATE_SET_ARGS_0_1_SIZE || !o->deleter ||
        o->type_id->type_id != 42) {
      ++kt_xla.bad_layouts;
    }
    kt_xla.state = o->state;
    kt_xla.state_deleter = o->deleter;
  } else if (kt_xla.minor == 2) {
    const kc__xla_state_args_0_2* o = (const void*)a;
    if (o->struct_size != KC__XLA_STATE_ARGS_0_2_SIZE || o->type_id->type_id != 42) {
      ++kt_xla.bad_layouts;
    }
    kt_xla.state = o->state;
    kt_xla.state_deleter = kt_xla.type_deleter;
  } else {
    if (a->struct_size != KC__XLA_SIZE(XLA_FFI_State_Set_Args, state) ||
        a->stage != XLA_FFI_ExecutionStage_INSTANTIATE || a->type_id->type_id != 42) {
      ++kt_xla.bad_layouts;
    }
    kt_xla.state = a->state;
    kt_xla.state_deleter = kt_xla.type_deleter;
  }
  return NULL;
}

static XLA_FFI_Error* kt_state_get(XLA_FFI_State_Get_Args* a) {
  if (kt_xla.minor <= 2) {
    kc__xla_state_args_0_2* o = (void*)a;
    if (o->struct_size != KC__XLA_STATE_ARGS_0_2_SIZE || o->type_id->type_id != 42) {
      ++kt_xla.bad_layouts;
    }
    o->state = kt_xla.state;
  } else {
    if (a->struct_size != KC__XLA_SIZE(XLA_FFI_State_Get_Args, state) ||
        a->stage != XLA_FFI_ExecutionStage_INSTANTIATE || a->type_id->type_id != 42) {
      ++kt_xla.bad_layouts;
    }
    a->state = kt_xla.state;
  }
  return NULL;
}

static XLA_FFI_Api kt_api(int minor) {
  return (XLA_FFI_Api){
      /* As XLA sizes it: 0.1 to XLA_FFI_Stream_Get, short of its last entries. */
      .struct_size = minor == 1 ? KC__XLA_SIZE(XLA_FFI_Api, XLA_FFI_Stream_Get) : KC__XLA_API_SIZE,
      .api_version = {KC__XLA_API_VERSION_SIZE, NULL, 0, minor},
      .XLA_FFI_Error_Create = kt_error_create,
      .XLA_FFI_Error_GetMessage = kt_error_get_message,
      .XLA_FFI_Error_Destroy = kt_error_destroy,
      .XLA_FFI_Type_Register = kt_type_register,
      .XLA_FFI_State_Set = kt_state_set,
      .XLA_FFI_State_Get = kt_state_get,
  };
}

/* y = x + 1: a target with an INSTANTIATE stage, so that the adapter
 * keeps a call site as XLA state. */
static kc_status* kt_add_one(kc_xcall_frame* f) {
  if (f->stage != KC_XCALL_STAGE_EXECUTE) return NULL;
  const float* x = f->args[0].data;
  float* y = f->results[0].data;
  for (int64_t i = 0; i < f->args[0].shape[0]; ++i) y[i] = x[i] + 1;
  return NULL;
}

static XLA_FFI_Handler* kt_adapter(void) {
  static const kc_xcall_buffer_spec f32[] = {{{kDLFloat, 32, 1}, 1}};
  kc_xcall_signature sig = {.struct_size = sizeof sig,
                            .num_args = 1, .args = f32,
                            .num_results = 1, .results = f32};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.v.add_one"), KC_PLATFORM_HOST, &sig, kt_add_one,
                                      NULL, NULL, KC_REGISTER_OVERRIDE));
  kc_xla_ffi_handler_fn fn = NULL;
  KC_CHECK_OK(kc_xla_ffi_adapter_create(kc_sv("kt.v.add_one"), KC_PLATFORM_HOST, &fn));
  return (XLA_FFI_Handler*)(void (*)(void))fn;
}

/* Asks `h` for its metadata as XLA does (api NULL before jaxlib 0.9). */
static XLA_FFI_Error* kt_metadata(XLA_FFI_Handler* h, const XLA_FFI_Api* api,
                                  XLA_FFI_Metadata* md) {
  memset(md, 0, sizeof *md);
  md->struct_size = KC__XLA_METADATA_SIZE;
  md->api_version.struct_size = KC__XLA_API_VERSION_SIZE;
  XLA_FFI_Metadata_Extension ext = {
      .extension_base = {.struct_size = KC__XLA_METADATA_EXTENSION_SIZE,
                         .type = XLA_FFI_Extension_Metadata},
      .metadata = md};
  XLA_FFI_CallFrame cf = {.struct_size = KC__XLA_CALL_FRAME_SIZE,
                          .extension_start = &ext.extension_base,
                          .api = api,
                          .stage = XLA_FFI_ExecutionStage_EXECUTE,
                          .args = {.struct_size = KC__XLA_ARGS_SIZE},
                          .rets = {.struct_size = KC__XLA_RETS_SIZE},
                          .attrs = {.struct_size = KC__XLA_ATTRS_SIZE}};
  return h(&cf);
}

/* One stage of a call on x (4 floats) into y. */
static XLA_FFI_Error* kt_call(XLA_FFI_Handler* h, const XLA_FFI_Api* api,
                              XLA_FFI_ExecutionStage stage, float* x, float* y) {
  static int ctx_storage;
  int64_t dims[1] = {4};
  XLA_FFI_Buffer in = {.struct_size = KC__XLA_BUFFER_SIZE, .dtype = XLA_FFI_DataType_F32,
                       .data = x, .rank = 1, .dims = dims};
  XLA_FFI_Buffer out = in;
  out.data = y;
  XLA_FFI_ArgType arg_types[1] = {XLA_FFI_ArgType_BUFFER};
  XLA_FFI_RetType ret_types[1] = {XLA_FFI_RetType_BUFFER};
  void* args[1] = {&in};
  void* rets[1] = {&out};
  bool execute = stage == XLA_FFI_ExecutionStage_EXECUTE;
  XLA_FFI_CallFrame cf = {
      .struct_size = KC__XLA_CALL_FRAME_SIZE,
      .api = api,
      .ctx = (XLA_FFI_ExecutionContext*)(void*)&ctx_storage,
      .stage = stage,
      .args = {.struct_size = KC__XLA_ARGS_SIZE, .size = execute, .types = arg_types,
               .args = args},
      .rets = {.struct_size = KC__XLA_RETS_SIZE, .size = execute, .types = ret_types,
               .rets = rets},
      .attrs = {.struct_size = KC__XLA_ATTRS_SIZE}};
  return h(&cf);
}

static void kt_check_no_error(XLA_FFI_Error* e) {
  bool failed = e != NULL; /* the adapter returned an error */
  if (failed) {
    fprintf(stderr, "XLA error %d: %s\n", (int)e->code, e->message);
    free(e);
  }
  KC_CHECK(!failed);
}

KC_TEST(xla_ffi_adapter_speaks_the_api_version_of_its_xla) {
  XLA_FFI_Handler* h = kt_adapter();
  for (int minor = 1; minor <= 3; ++minor) {
    memset(&kt_xla, 0, sizeof kt_xla);
    kt_xla.minor = minor;
    /* One table per XLA, for the life of the process, as XLA's are. */
    static XLA_FFI_Api apis[4];
    apis[minor] = kt_api(minor);
    const XLA_FFI_Api* api = &apis[minor];
    XLA_FFI_Metadata md;
    /* An XLA that passes its table gets its own version... */
    kt_check_no_error(kt_metadata(h, api, &md));
    KC_CHECK_INT(md.api_version.major_version, 0);
    KC_CHECK_INT(md.api_version.minor_version, minor);
    /* ... one that passes none the version announced for it. */
    KC_CHECK_OK(kc_xla_ffi_adapter_set_api_version(0, minor));
    kt_check_no_error(kt_metadata(h, NULL, &md));
    KC_CHECK_INT(md.api_version.minor_version, minor);
    KC_CHECK_INT(md.api_version.struct_size, (int64_t)KC__XLA_API_VERSION_SIZE);

    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    kt_check_no_error(kt_call(h, api, XLA_FFI_ExecutionStage_INSTANTIATE, NULL, NULL));
    KC_CHECK(kt_xla.state != NULL && kt_xla.state_deleter != NULL);
    for (int run = 0; run < 2; ++run) {
      kt_check_no_error(kt_call(h, api, XLA_FFI_ExecutionStage_EXECUTE, x, y));
      KC_CHECK(y[0] == 2.0f && y[3] == 5.0f);
    }
    KC_CHECK_INT(kt_xla.bad_layouts, 0);
    kt_xla.state_deleter(kt_xla.state); /* XLA destroying its executable */
  }
  KC_CHECK_OK(kc_xla_ffi_adapter_set_api_version(0, 3));
}

KC_TEST(xla_ffi_adapter_refuses_an_api_version_it_does_not_speak) {
  XLA_FFI_Handler* h = kt_adapter();
  const int versions[][2] = {{0, 4}, {1, 0}, {0, 0}};
  for (size_t i = 0; i < sizeof versions / sizeof versions[0]; ++i) {
    memset(&kt_xla, 0, sizeof kt_xla);
    kt_xla.minor = versions[i][1];
    XLA_FFI_Api api = kt_api(versions[i][1]);
    api.api_version.major_version = versions[i][0];
    char want[128];
    snprintf(want, sizeof want,
             "kcall target 'kt.v.add_one': XLA FFI API %d.%d is not one kcall's adapter "
             "speaks (0.1 to 0.3",
             versions[i][0], versions[i][1]);
    XLA_FFI_Metadata md;
    XLA_FFI_Error* e = kt_metadata(h, &api, &md);
    KC_CHECK(e != NULL);
    KC_CHECK_INT(e->code, XLA_FFI_Error_Code_FAILED_PRECONDITION);
    KC_CHECK(strstr(e->message, want) != NULL);
    free(e);
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    for (int stage = 0; stage < 2; ++stage) {
      e = kt_call(h, &api,
                  stage ? XLA_FFI_ExecutionStage_EXECUTE : XLA_FFI_ExecutionStage_INSTANTIATE,
                  x, y);
      KC_CHECK(e != NULL && strstr(e->message, want) != NULL);
      free(e);
    }
    KC_CHECK(kt_xla.state == NULL && y[0] == 0.0f);
    KC_CHECK_CODE(kc_xla_ffi_adapter_set_api_version(versions[i][0], versions[i][1]),
                  KC_INVALID_ARGUMENT, "is not one the adapter speaks (0.1 to 0.3)");
  }
}
