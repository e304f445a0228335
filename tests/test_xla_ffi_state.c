/* XLA FFI handlers run by kcall's program runtime: the four stages, state
 * per call site and its types, handlers of older API versions, and the
 * version checks at registration (test_xla_ffi.c has the frames). */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "kt_xla_ffi_test.h"

/* ---- stages and state ------------------------------------------------------------- */

typedef struct kt_tally {
  int64_t site;
  _Atomic int64_t runs;
} kt_tally;

XLA_FFI_TypeId kt_counter_id = {0};
static XLA_FFI_TypeId kt_other_id = {0};
static _Atomic int kt_counters_deleted;
static void kt_counter_delete(void* p) {
  atomic_fetch_add(&kt_counters_deleted, 1);
  free(p);
}
static const XLA_FFI_TypeInfo kt_counter_info = {sizeof(XLA_FFI_TypeInfo), NULL,
                                                 kt_counter_delete};
/* The same type's info as a library loaded again would give it. */
static void kt_counter_delete2(void* p) {
  atomic_fetch_add(&kt_counters_deleted, 10);
  free(p);
}
static const XLA_FFI_TypeInfo kt_counter_info2 = {sizeof(XLA_FFI_TypeInfo), NULL,
                                                  kt_counter_delete2};

void kt_register_types(void) {
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.counter"), &kt_counter_id,
                                       &kt_counter_info));
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.other"), &kt_other_id, NULL));
  KC_CHECK(kt_counter_id.type_id > 0 && kt_other_id.type_id > 0);
  KC_CHECK(kt_counter_id.type_id != kt_other_id.type_id);
}

static pthread_mutex_t kt_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char kt_log[64];
static void kt_log_stage(char c) {
  pthread_mutex_lock(&kt_log_mu);
  size_t n = strlen(kt_log);
  if (n + 1 < sizeof kt_log) kt_log[n] = c;
  pthread_mutex_unlock(&kt_log_mu);
}

static XLA_FFI_Error* kt_stage_instantiate(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  kt_log_stage('I');
  if (f->stage != XLA_FFI_ExecutionStage_INSTANTIATE || kt_xla_arg(f, 0)->data) {
    return kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "instantiate: wrong stage or data");
  }
  XLA_FFI_AttrType type;
  const XLA_FFI_Scalar* site = kt_xla_attr(&f->attrs, "site", &type);
  kt_tally* c = calloc(1, sizeof *c);
  c->site = site ? *(const int64_t*)site->value : -1;
  XLA_FFI_Error* e = kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_counter_id, c);
  if (e) free(c);
  return e;
}

static XLA_FFI_Error* kt_stage_prepare(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  kt_log_stage('P');
  void* state = NULL;
  XLA_FFI_Error* e = kt_xla_state_get(f, &kt_counter_id, &state);
  if (!e && (!state || f->stage != XLA_FFI_ExecutionStage_PREPARE)) {
    e = kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "prepare: no state");
  }
  return e;
}

static XLA_FFI_Error* kt_stage_initialize(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  kt_log_stage('N');
  return f->stage == XLA_FFI_ExecutionStage_INITIALIZE
             ? NULL
             : kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "initialize: wrong stage");
}

/* y[0] = 100 site + the number of runs so far; y[1] = the run id. */
static XLA_FFI_Error* kt_stage_execute(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  kt_log_stage('E');
  void* state = NULL;
  XLA_FFI_Error* e = kt_xla_state_get(f, &kt_counter_id, &state);
  if (e) return e;
  kt_tally* c = state;
  int64_t runs = atomic_fetch_add(&c->runs, 1) + 1;
  float* y = kt_xla_ret(f, 0)->data;
  y[0] = (float)(100 * c->site + runs);
  return NULL;
}

const kc_xla_ffi_handlers kt_stage_handlers = {
    sizeof(kc_xla_ffi_handlers), KT_FN(kt_stage_instantiate), KT_FN(kt_stage_prepare),
    KT_FN(kt_stage_initialize), KT_FN(kt_stage_execute)};

static const char kt_two_sites[] =
    "HloModule sites\n"
    "ENTRY main {\n"
    "  x = f32[2] parameter(0)\n"
    "  a = f32[2] custom-call(x), custom_call_target=\"kt.stages\", "
    "api_version=API_VERSION_TYPED_FFI, backend_config={site = 1 : i64}\n"
    "  b = f32[2] custom-call(x), custom_call_target=\"kt.stages\", "
    "api_version=API_VERSION_TYPED_FFI, backend_config={site = 2 : i64}\n"
    "  ROOT t = (f32[2], f32[2]) tuple(a, b)\n"
    "}\n";

KC_TEST(xla_ffi_stages_run_in_order_and_state_lives_with_the_executable) {
  kt_register_types();
  KC_CHECK_OK(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.stages"), KC_PLATFORM_HOST,
                                        &kt_stage_handlers, 0));
  memset(kt_log, 0, sizeof kt_log);
  atomic_store(&kt_counters_deleted, 0);
  kc_executable* exe = kt_compile_text(kt_two_sites, NULL);
  /* Each call site: instantiate, prepare, initialize, when compiled. */
  KC_CHECK_STR(kt_log, "IPNIPN");
  kc_tensor* x = kt_f32s(2, 0.0f);
  for (int run = 1; run <= 2; ++run) {
    kc_tensor* out[2] = {NULL, NULL};
    KC_CHECK_OK(kt_run(exe, x, out));
    KC_CHECK(((const float*)kt_data(out[0]))[0] == (float)(100 + run));
    KC_CHECK(((const float*)kt_data(out[1]))[0] == (float)(200 + run));
    kt_release(out, 2);
  }
  KC_CHECK_STR(kt_log, "IPNIPNEEEE");
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 0);
  kc_executable_destroy(exe);
  /* One state per call site, deleted with the executable. */
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 2);
  kt_release(&x, 1);

  /* A failing compile still deletes the state already made. */
  atomic_store(&kt_counters_deleted, 0);
  static const char half[] =
      "HloModule sites\n"
      "ENTRY main {\n"
      "  x = f32[2] parameter(0)\n"
      "  a = f32[2] custom-call(x), custom_call_target=\"kt.stages\", "
      "api_version=API_VERSION_TYPED_FFI, backend_config={site = 1 : i64}\n"
      "  ROOT b = f32[2] custom-call(a), custom_call_target=\"kt.nowhere\", "
      "api_version=API_VERSION_TYPED_FFI\n"
      "}\n";
  KC_CHECK_CODE(kt_compile_status(half), KC_NOT_FOUND, "kt.nowhere");
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 1);

  /* A type registered again (a library loaded anew) keeps its id and
   * takes the new info: state set from then on is deleted by it. */
  XLA_FFI_TypeId again = {0};
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.counter"), &again, &kt_counter_info2));
  KC_CHECK_INT(again.type_id, kt_counter_id.type_id);
  atomic_store(&kt_counters_deleted, 0);
  exe = kt_compile_text(kt_two_sites, NULL);
  kc_executable_destroy(exe);
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 20);
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.counter"), &again, &kt_counter_info));
}

/* State of kt.other, which has no deleter: nothing to free. */
static int kt_plain_state;

/* What kt_state_misuse does, named by its `mode` attribute. */
static XLA_FFI_Error* kt_state_misuse(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  XLA_FFI_AttrType type;
  const XLA_FFI_ByteSpan* mode = kt_xla_attr(&f->attrs, "mode", &type);
  if (!mode) return kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "no mode");
  char m[32] = {0};
  memcpy(m, mode->ptr, mode->len < 31 ? mode->len : 31);
  bool inst = f->stage == XLA_FFI_ExecutionStage_INSTANTIATE;
  void* state = NULL;
  if (strcmp(m, "unregistered") == 0 && inst) {
    XLA_FFI_TypeId bogus = {987654321};
    return kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &bogus, &bogus);
  }
  if (strcmp(m, "at_execute") == 0 && !inst) {
    return kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_other_id, &kt_plain_state);
  }
  if (strcmp(m, "missing") == 0 && !inst) return kt_xla_state_get(f, &kt_counter_id, &state);
  if (strcmp(m, "twice") == 0 && inst) {
    kt_tally* a = calloc(1, sizeof *a);
    kt_tally* b = calloc(1, sizeof *b);
    XLA_FFI_Error* e = kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_counter_id, a);
    if (e) free(a);
    if (!e) e = kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_counter_id, b);
    if (e) free(b);
    return e;
  }
  if (strcmp(m, "wrong_type") == 0) {
    if (inst) {
      return kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_other_id, &kt_plain_state);
    }
    return kt_xla_state_get(f, &kt_counter_id, &state);
  }
  if (strcmp(m, "bad_stage") == 0 && inst) {
    return kt_xla_state_set(f, XLA_FFI_ExecutionStage_EXECUTE, &kt_other_id, &kt_plain_state);
  }
  return NULL;
}

KC_TEST(xla_ffi_state_misuse_is_an_error) {
  kt_register_types();
  kt_register_both("kt.misuse", KT_FN(kt_state_misuse));
  char text[512];

  kt_one_call(text, sizeof text, "kt.misuse", 2, "{mode = \"unregistered\"}");
  KC_CHECK_CODE(kt_compile_status(text), KC_FAILED_PRECONDITION,
                "instantiating custom call 'kt.misuse' (instruction 'y')",
                "type id 987654321 is not registered", "kc_xla_ffi_type_register");

  atomic_store(&kt_counters_deleted, 0);
  kt_one_call(text, sizeof text, "kt.misuse", 2, "{mode = \"twice\"}");
  KC_CHECK_CODE(kt_compile_status(text), KC_ALREADY_EXISTS,
                "the instantiate stage's state is already set");
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 1); /* the first one */

  kt_one_call(text, sizeof text, "kt.misuse", 2, "{mode = \"bad_stage\"}");
  KC_CHECK_CODE(kt_compile_status(text), KC_INVALID_ARGUMENT,
                "stage 3: expected instantiate, prepare or initialize");

  static const struct {
    const char* mode;
    kc_status_code code;
    const char* message;
  } at_run[] = {
      {"at_execute", KC_FAILED_PRECONDITION, "not at execute"},
      {"missing", KC_NOT_FOUND, "no state was set at the instantiate stage"},
      {"wrong_type", KC_INVALID_ARGUMENT, "the instantiate stage's state has type id"},
  };
  kc_tensor* x = kt_f32s(2, 0.0f);
  for (size_t i = 0; i < sizeof at_run / sizeof at_run[0]; ++i) {
    char config[64];
    snprintf(config, sizeof config, "{mode = \"%s\"}", at_run[i].mode);
    kt_one_call(text, sizeof text, "kt.misuse", 2, config);
    kc_executable* exe = kt_compile_text(text, NULL);
    kc_tensor* y = NULL;
    KC_CHECK_CODE(kt_run(exe, x, &y), at_run[i].code, at_run[i].message,
                  "in custom call 'kt.misuse' (instruction 'y')");
    KC_CHECK(y == NULL);
    kc_executable_destroy(exe);
  }
  kt_release(&x, 1);
}

KC_TEST(xla_ffi_type_registration) {
  XLA_FFI_TypeId a = {0}, again = {0}, b = {0};
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_a"), &a, NULL));
  KC_CHECK(a.type_id > 0);
  /* The same name again: its id, with 0 or with the id itself. */
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_a"), &again, NULL));
  KC_CHECK_INT(again.type_id, a.type_id);
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_a"), &again, NULL));
  /* An id of one's own choosing, if free. */
  b.type_id = a.type_id + 1000;
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_b"), &b, NULL));
  KC_CHECK_INT(b.type_id, a.type_id + 1000);
  XLA_FFI_TypeId taken = {a.type_id};
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_c"), &taken, NULL),
                KC_ALREADY_EXISTS, "taken by another type");
  XLA_FFI_TypeId other = {b.type_id};
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_a"), &other, NULL),
                KC_ALREADY_EXISTS, "is registered with id");
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT(""), &a, NULL), KC_INVALID_ARGUMENT,
                "the name is empty");
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT("kt.x"), NULL, NULL),
                KC_INVALID_ARGUMENT, "type_id is NULL");
  XLA_FFI_TypeId negative = {-5};
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT("kt.x"), &negative, NULL),
                KC_INVALID_ARGUMENT, "type id -5 is negative");
  /* A fresh id after a chosen one never collides with it. */
  XLA_FFI_TypeId fresh = {0};
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_d"), &fresh, NULL));
  KC_CHECK(fresh.type_id > b.type_id);
}

/* ---- versions --------------------------------------------------------------------- */

static _Atomic int kt_version_calls; /* calls that were not metadata queries */

#define KT_VERSIONED(name, major, minor)                         \
  static XLA_FFI_Error* name(XLA_FFI_CallFrame* f) {             \
    if (kt_xla_answer(f, (major), (minor))) return NULL;         \
    atomic_fetch_add(&kt_version_calls, 1);                      \
    return kt_add_one(f);                                        \
  }
KT_VERSIONED(kt_v0_4, 0, 4)
KT_VERSIONED(kt_v1_0, 1, 0)
KT_VERSIONED(kt_v0_2, 0, 2)
KT_VERSIONED(kt_v0_3, 0, 3)

/* Returns success without saying anything about itself. */
static _Atomic int kt_silent_calls;
static XLA_FFI_Error* kt_silent(XLA_FFI_CallFrame* f) {
  atomic_fetch_add(&kt_silent_calls, 1);
  if (kt_xla_metadata(f)) return NULL;
  return kt_add_one(f);
}

/* Answers the query with an error, as a C++ handler whose state type is
 * not registered does. */
static XLA_FFI_Error* kt_query_fails(XLA_FFI_CallFrame* f) {
  if (kt_xla_metadata(f)) {
    return kt_xla_error(f, XLA_FFI_Error_Code_FAILED_PRECONDITION,
                        "Types used by FFI handlers must be registered before the "
                        "handler registration");
  }
  return NULL;
}

/* Predates the extension: reads its operand even when asked for metadata. */
static _Atomic int kt_ancient_calls;
static XLA_FFI_Error* kt_ancient(XLA_FFI_CallFrame* f) {
  atomic_fetch_add(&kt_ancient_calls, 1);
  if (f->args.size < 1) {
    return kt_xla_error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT, "ancient: no operand");
  }
  return kt_add_one(f);
}

void kt_check_version(const char* name, int32_t major, int32_t minor) {
  kc_xcall_target_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  KC_CHECK_OK(kc_xcall_lookup(kc_sv(name), KC_PLATFORM_HOST, &d));
  KC_CHECK(d.xla_ffi);
  KC_CHECK_INT(d.xla_ffi_api_major, major);
  KC_CHECK_INT(d.xla_ffi_api_minor, minor);
}

KC_TEST(xla_ffi_versions_checked_at_registration) {
  atomic_store(&kt_version_calls, 0);
  /* A newer minor and another major are refused, naming both versions. */
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.v04"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_v0_4), 0),
                KC_FAILED_PRECONDITION, "registering XLA FFI handlers for 'kt.v04@Host'",
                "the execute handler was built for XLA FFI API 0.4",
                "kcall implements 0.3");
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.v10"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_v1_0), 0),
                KC_FAILED_PRECONDITION, "built for XLA FFI API 1.0", "kcall implements 0.3");
  kc_xcall_target_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  KC_CHECK_CODE(kc_xcall_lookup(KC_SV_LIT("kt.v04"), KC_PLATFORM_HOST, &d), KC_NOT_FOUND,
                "kt.v04");
  /* Refused handlers were asked, never called. */
  KC_CHECK_INT(atomic_load(&kt_version_calls), 0);

  /* The same and older minors run. */
  kt_register("kt.v02", kt_v0_2);
  kt_register("kt.v03", kt_v0_3);
  kt_check_version("kt.v02", 0, 2);
  kt_check_version("kt.v03", 0, 3);
  KC_CHECK_INT(atomic_load(&kt_version_calls), 0);
  char text[512];
  kt_one_call(text, sizeof text, "kt.v02", 2, NULL);
  kc_executable* exe = kt_compile_text(text, NULL);
  kc_tensor* x = kt_f32s(2, 1.0f);
  kc_tensor* y = NULL;
  KC_CHECK_OK(kt_run(exe, x, &y));
  KC_CHECK(((const float*)kt_data(y))[1] == 3.0f);
  kt_release(&y, 1);
  kc_executable_destroy(exe);
  KC_CHECK_INT(atomic_load(&kt_version_calls), 1); /* no instantiate stage: one run */

  /* In a bundle, every stage's handler is asked; the message names it. */
  kc_xla_ffi_handlers h;
  memset(&h, 0, sizeof h);
  h.struct_size = sizeof h;
  h.execute = KT_FN(kt_v0_3);
  h.initialize = KT_FN(kt_v0_4);
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.bundle"), KC_PLATFORM_HOST, &h, 0),
                KC_FAILED_PRECONDITION, "the initialize handler was built for XLA FFI API 0.4");

  /* Silent: accepted, its version unknown. */
  atomic_store(&kt_silent_calls, 0);
  kt_register("kt.silent", kt_silent);
  KC_CHECK_INT(atomic_load(&kt_silent_calls), 1);
  kt_check_version("kt.silent", -1, -1);

  /* An error answering the query refuses the handler with that error. */
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.qfail"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_query_fails), 0),
                KC_FAILED_PRECONDITION, "Types used by FFI handlers must be registered",
                "did not answer XLA's metadata query");

  /* A handler that predates the extension would run the query as a call:
   * without KC_XLA_FFI_NO_METADATA it fails there; with it, it is never
   * asked and runs. */
  atomic_store(&kt_ancient_calls, 0);
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.ancient"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_ancient), 0),
                KC_INVALID_ARGUMENT, "ancient: no operand");
  atomic_store(&kt_ancient_calls, 0);
  KC_CHECK_OK(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.ancient"), KC_PLATFORM_HOST,
                                                KT_FN(kt_ancient), KC_XLA_FFI_NO_METADATA));
  KC_CHECK_INT(atomic_load(&kt_ancient_calls), 0);
  kt_check_version("kt.ancient", -1, -1);
  kt_one_call(text, sizeof text, "kt.ancient", 2, NULL);
  exe = kt_compile_text(text, NULL);
  KC_CHECK_OK(kt_run(exe, x, &y));
  KC_CHECK(((const float*)kt_data(y))[0] == 2.0f);
  KC_CHECK_INT(atomic_load(&kt_ancient_calls), 1);
  kt_release(&y, 1);
  kc_executable_destroy(exe);
  kt_release(&x, 1);
}

/* ---- state from handlers built with older headers -------------------------------- */

/* Handlers that set and get state with the argument structs of older API
 * versions, as a handler built with those headers passes them: 0.2
 * (jaxlib 0.8) without `stage`, 0.1 (jaxlib 0.4.38 to 0.7) without
 * `stage` and with the state's own deleter. Each reports its version. */
static _Atomic int kt_old_deleted;
static void kt_old_delete(void* p) {
  atomic_fetch_add(&kt_old_deleted, 1);
  free(p);
}

static XLA_FFI_Error* kt_old_state_get(XLA_FFI_CallFrame* f, XLA_FFI_TypeId* id, void** out) {
  kc__xla_state_args_0_2 g;
  memset(&g, 0, sizeof g);
  g.struct_size = KC__XLA_STATE_ARGS_0_2_SIZE; /* 40, in 0.0 to 0.2 */
  g.ctx = f->ctx;
  g.type_id = id;
  XLA_FFI_Error* e = f->api->XLA_FFI_State_Get((XLA_FFI_State_Get_Args*)(void*)&g);
  *out = g.state;
  return e;
}

/* y = x + the float the instantiate stage kept (its `add` attribute). */
static XLA_FFI_Error* kt_old_add(XLA_FFI_CallFrame* f, void* state) {
  const float* in = kt_xla_arg(f, 0)->data;
  float* out = kt_xla_ret(f, 0)->data;
  for (int64_t i = 0; i < kt_xla_count(kt_xla_arg(f, 0)); ++i) out[i] = in[i] + *(float*)state;
  return NULL;
}

static float* kt_old_new_state(XLA_FFI_CallFrame* f) {
  float* v = malloc(sizeof *v);
  *v = kt_xla_attr_f32(&f->attrs, "add", 0.0f);
  return v;
}

static XLA_FFI_Error* kt_state_v0_2(XLA_FFI_CallFrame* f) {
  if (kt_xla_answer(f, 0, 2)) return NULL;
  if (f->stage == XLA_FFI_ExecutionStage_INSTANTIATE) {
    kc__xla_state_args_0_2 s;
    memset(&s, 0, sizeof s);
    s.struct_size = KC__XLA_STATE_ARGS_0_2_SIZE; /* 40 */
    s.ctx = f->ctx;
    s.type_id = &kt_counter_id; /* its type's info deletes it */
    s.state = kt_old_new_state(f);
    XLA_FFI_Error* e = f->api->XLA_FFI_State_Set((XLA_FFI_State_Set_Args*)(void*)&s);
    if (e) free(s.state);
    return e;
  }
  void* state = NULL;
  XLA_FFI_Error* e = kt_old_state_get(f, &kt_counter_id, &state);
  return e ? e : kt_old_add(f, state);
}

static XLA_FFI_Error* kt_state_v0_1(XLA_FFI_CallFrame* f) {
  if (kt_xla_answer(f, 0, 1)) return NULL;
  if (f->stage == XLA_FFI_ExecutionStage_INSTANTIATE) {
    kc__xla_state_set_args_0_1 s;
    memset(&s, 0, sizeof s);
    s.struct_size = KC__XLA_STATE_SET_ARGS_0_1_SIZE; /* 48, as 0.3's */
    s.ctx = f->ctx;
    s.type_id = &kt_other_id; /* a type without info, as in 0.1 */
    s.state = kt_old_new_state(f);
    s.deleter = kt_old_delete;
    XLA_FFI_Error* e = f->api->XLA_FFI_State_Set((XLA_FFI_State_Set_Args*)(void*)&s);
    if (e) free(s.state);
    return e;
  }
  void* state = NULL;
  XLA_FFI_Error* e = kt_old_state_get(f, &kt_other_id, &state);
  return e ? e : kt_old_add(f, state);
}

/* Sets state with a struct smaller than any version's. */
static XLA_FFI_Error* kt_state_short(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  if (f->stage != XLA_FFI_ExecutionStage_INSTANTIATE) return NULL;
  kc__xla_state_args_0_2 s;
  memset(&s, 0, sizeof s);
  s.struct_size = 32;
  s.ctx = f->ctx;
  return f->api->XLA_FFI_State_Set((XLA_FFI_State_Set_Args*)(void*)&s);
}

KC_TEST(xla_ffi_state_from_handlers_of_older_api_versions) {
  kt_register_types();
  kt_register_both("kt.state_v0_2", KT_FN(kt_state_v0_2));
  kt_register_both("kt.state_v0_1", KT_FN(kt_state_v0_1));
  kt_check_version("kt.state_v0_2", 0, 2);
  kt_check_version("kt.state_v0_1", 0, 1);
  kc_tensor* x = kt_f32s(3, 1.0f);
  /* The 0.2 state is deleted by its type's deleter, the 0.1 state by
   * its own. */
  static const struct {
    const char* target;
    _Atomic int* deleted;
  } cases[] = {{"kt.state_v0_2", &kt_counters_deleted}, {"kt.state_v0_1", &kt_old_deleted}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[512];
    kt_one_call(text, sizeof text, cases[i].target, 3, "{add = 2.5 : f32}");
    atomic_store(cases[i].deleted, 0);
    kc_executable* exe = kt_compile_text(text, NULL);
    for (int run = 0; run < 2; ++run) {
      kc_tensor* y = NULL;
      KC_CHECK_OK(kt_run(exe, x, &y));
      const float* out = kt_data(y);
      KC_CHECK(out[0] == 3.5f && out[1] == 4.5f && out[2] == 5.5f);
      kt_release(&y, 1);
    }
    KC_CHECK_INT(atomic_load(cases[i].deleted), 0);
    kc_executable_destroy(exe);
    KC_CHECK_INT(atomic_load(cases[i].deleted), 1);
  }
  kt_release(&x, 1);

  kt_register_both("kt.state_short", KT_FN(kt_state_short));
  char text[512];
  kt_one_call(text, sizeof text, "kt.state_short", 2, NULL);
  KC_CHECK_CODE(kt_compile_status(text), KC_INVALID_ARGUMENT,
                "XLA_FFI_State_Set_Args: struct_size 32, expected 40 (API 0.2) or 48 "
                "(API 0.0, 0.1, 0.3)");
}

KC_TEST(xla_ffi_registration_errors) {
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, NULL, 0),
                KC_INVALID_ARGUMENT, "handlers is NULL");
  kc_xla_ffi_handlers h;
  memset(&h, 0, sizeof h);
  h.struct_size = sizeof h;
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h, 0),
                KC_INVALID_ARGUMENT, "the execute handler is NULL");
  h.execute = KT_FN(kt_add_one);
  h.struct_size = offsetof(kc_xla_ffi_handlers, execute);
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h, 0),
                KC_INVALID_ARGUMENT, "too small to hold execute");
  h.struct_size = sizeof h;
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST,
                                                  NULL, 0),
                KC_INVALID_ARGUMENT, "the execute handler is NULL");
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT(""), KC_PLATFORM_HOST, &h, 0),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), (kc_platform)77, &h, 0),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_OK(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h, 0));
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h, 0),
                KC_ALREADY_EXISTS, "kt.r");
  KC_CHECK_OK(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h,
                                        KC_REGISTER_OVERRIDE));
  /* A kcall target of another convention may not be replaced silently. */
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_add_one), 0),
                KC_ALREADY_EXISTS, "");
  /* Flags kcall does not know are refused. */
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.r2"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_add_one), 1u << 20),
                KC_INVALID_ARGUMENT, "");
}
