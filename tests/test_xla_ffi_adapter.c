/* kcall targets and ops as XLA FFI handlers (kc_xla_ffi_adapter_create):
 * each adapter is registered back into kcall as an XLA FFI handler, so
 * kcall's own host side of XLA's API builds the call frames, runs the
 * stages, keeps the state and destroys it, as XLA would. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcall/kcall.h"
#include "kt_ops.h"
#include "xcall/xla_ffi_api.h"
#include "test.h"

static const kc_xcall_buffer_spec kt_any_f32[] = {{{kDLFloat, 32, 1}, -1}};

static kc_executable* kt_compile(const char* text) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, NULL, &exe);
  kc_program_destroy(p);
  KC_CHECK_OK(st);
  return exe;
}

/* Runs a one-input program on x (n floats); the output into *out. */
static kc_status* kt_run(const kc_executable* exe, float* x, int64_t n, kc_tensor** out) {
  DLTensor in = {.data = x, .device = {kDLCPU, 0}, .ndim = 1, .dtype = kt_f32, .shape = &n};
  const DLTensor* ins[1] = {&in};
  kc_execute_options o = {.struct_size = sizeof o, .allocator = kt_alloc()};
  return kc_executable_execute(exe, ins, 1, &o, out);
}

/* The adapter for target `name`, registered back as XLA FFI target
 * `as`, for both stages unless `execute_only`. */
static void kt_adapt(const char* name, const char* as, bool execute_only) {
  kc_xla_ffi_handler_fn fn = NULL;
  KC_CHECK_OK(kc_xla_ffi_adapter_create(kc_sv(name), KC_PLATFORM_HOST, &fn));
  kc_xla_ffi_handlers h = {.struct_size = sizeof h, .execute = fn};
  if (!execute_only) h.instantiate = fn;
  KC_CHECK_OK(kc_xcall_register_xla_ffi(kc_sv(as), KC_PLATFORM_HOST, &h, 0));
  kc_xcall_target_desc d = {.struct_size = sizeof d};
  KC_CHECK_OK(kc_xcall_lookup(kc_sv(as), KC_PLATFORM_HOST, &d));
  KC_CHECK(d.xla_ffi);
  KC_CHECK_INT(d.xla_ffi_api_major, KC_XLA_FFI_API_VERSION_MAJOR);
  KC_CHECK_INT(d.xla_ffi_api_minor, KC_XLA_FFI_API_VERSION_MINOR);
}

/* ---- a stateless target ------------------------------------------------------------ */

static kc_status* kt_scale(kc_xcall_frame* f) {
  KC_CHECK_INT(f->stage, KC_XCALL_STAGE_EXECUTE); /* never INSTANTIATE */
  KC_CHECK(f->thread_pool != NULL);
  const float* x = f->args[0].data;
  float* y = f->results[0].data;
  for (int64_t i = 0; i < f->args[0].shape[0]; ++i) y[i] = f->attrs[0].v.f32 * x[i];
  return NULL;
}

static void kt_register_scale(void) {
  static const kc_xcall_attr_spec attrs[] = {{"factor", KC_ATTR_F32, 0}};
  kc_xcall_signature sig = {.struct_size = sizeof sig,
                            .num_args = 1, .args = kt_any_f32,
                            .num_results = 1, .results = kt_any_f32,
                            .num_attrs = 1, .attrs = attrs,
                            .flags = KC_XCALL_SIG_NO_INSTANTIATE};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.scale"), KC_PLATFORM_HOST, &sig, kt_scale,
                                      NULL, NULL, 0));
}

#define KT_SCALE_PROGRAM(target, attrs)                                      \
  "HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"                  \
  "  ROOT y = f32[4] custom-call(x), custom_call_target=\"" target "\",\n" \
  "      api_version=API_VERSION_TYPED_FFI, backend_config={" attrs "}\n}\n"

KC_TEST(xla_ffi_adapter_runs_a_stateless_target) {
  kt_register_scale();
  kt_adapt("kt.scale", "kt.scale_xla", true);
  kc_executable* exe = kt_compile(KT_SCALE_PROGRAM("kt.scale_xla", "factor = 2.5 : f32"));
  float x[4] = {1, 2, 3, 4};
  for (int run = 0; run < 3; ++run) {
    kc_tensor* out = NULL;
    KC_CHECK_OK(kt_run(exe, x, 4, &out));
    const float* y = kt_dl(out)->data;
    KC_CHECK(y[0] == 2.5f && y[3] == 10.0f);
    kt_release(out);
  }
  kc_executable_destroy(exe);
}

KC_TEST(xla_ffi_adapter_refuses_attributes_and_buffers_off_the_signature) {
  kt_register_scale();
  kt_adapt("kt.scale", "kt.scale_xla", true);
  struct {
    const char* program;
    const char* message;
  } cases[] = {
      {KT_SCALE_PROGRAM("kt.scale_xla", "factor = 2.5 : f64"),
       "kcall target 'kt.scale': attribute 'factor': expected f32, got f64"},
      {KT_SCALE_PROGRAM("kt.scale_xla", "scale = 2.5 : f32"),
       "attribute 'factor': expected f32, got none"},
      {"HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"
       "  c = s32[4] convert(x)\n"
       "  ROOT y = s32[4] custom-call(c), custom_call_target=\"kt.scale_xla\",\n"
       "      api_version=API_VERSION_TYPED_FFI, backend_config={factor = 1.0 : f32}\n}\n",
       "kcall target 'kt.scale': operand 0: expected f32 of any rank, got i32[4]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kc_executable* exe = kt_compile(cases[i].program);
    float x[4] = {1, 2, 3, 4};
    kc_tensor* out = NULL;
    KC_CHECK_CODE(kt_run(exe, x, 4, &out), KC_INVALID_ARGUMENT, cases[i].message);
    KC_CHECK(out == NULL);
    kc_executable_destroy(exe);
  }
}

/* ---- a target with state and scratch ----------------------------------------------- */

static atomic_int kt_instantiated, kt_deleted;

typedef struct kt_state {
  int64_t n;
  float bias;
} kt_state;

static void kt_state_delete(void* p) {
  atomic_fetch_add(&kt_deleted, 1);
  free(p);
}

/* y = x + bias + n, where n (the length) and bias are fixed at INSTANTIATE,
 * going through 64 bytes of scratch. */
static kc_status* kt_stateful(kc_xcall_frame* f) {
  if (f->stage == KC_XCALL_STAGE_INSTANTIATE) {
    KC_CHECK(f->args[0].data == NULL);
    kt_state* s = malloc(sizeof *s);
    if (!s) return kc_status_create(KC_RESOURCE_EXHAUSTED, "state");
    s->n = f->args[0].shape[0];
    s->bias = f->attrs[0].v.f32;
    f->state = s;
    f->state_deleter = kt_state_delete;
    f->scratch_bytes = 64;
    atomic_fetch_add(&kt_instantiated, 1);
    return NULL;
  }
  const kt_state* s = f->state;
  KC_CHECK(s != NULL && f->scratch != NULL && ((uintptr_t)f->scratch & 63) == 0);
  float* tmp = f->scratch;
  const float* x = f->args[0].data;
  float* y = f->results[0].data;
  for (int64_t i = 0; i < s->n; ++i) tmp[i] = x[i] + s->bias + (float)s->n;
  for (int64_t i = 0; i < s->n; ++i) y[i] = tmp[i];
  return NULL;
}

KC_TEST(xla_ffi_adapter_keeps_state_per_call_site) {
  static const kc_xcall_attr_spec attrs[] = {{"bias", KC_ATTR_F32, 0}};
  kc_xcall_signature sig = {.struct_size = sizeof sig,
                            .num_args = 1, .args = kt_any_f32,
                            .num_results = 1, .results = kt_any_f32,
                            .num_attrs = 1, .attrs = attrs};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.stateful"), KC_PLATFORM_HOST, &sig,
                                      kt_stateful, NULL, NULL, 0));
  kt_adapt("kt.stateful", "kt.stateful_xla", false);
  kc_executable* exe = kt_compile(
      "HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  a = f32[4] custom-call(x), custom_call_target=\"kt.stateful_xla\",\n"
      "      api_version=API_VERSION_TYPED_FFI, backend_config={bias = 10.0 : f32}\n"
      "  ROOT b = f32[4] custom-call(a), custom_call_target=\"kt.stateful_xla\",\n"
      "      api_version=API_VERSION_TYPED_FFI, backend_config={bias = 100.0 : f32}\n}\n");
  float x[4] = {1, 2, 3, 4};
  for (int run = 0; run < 3; ++run) {
    kc_tensor* out = NULL;
    KC_CHECK_OK(kt_run(exe, x, 4, &out));
    const float* y = kt_dl(out)->data;
    /* Each site: + bias + 4. */
    KC_CHECK(y[0] == 1 + 14 + 104.0f && y[3] == 4 + 14 + 104.0f);
    kt_release(out);
  }
  /* One INSTANTIATE per call site (at its first run), none after. */
  KC_CHECK_INT(atomic_load(&kt_instantiated), 2);
  KC_CHECK_INT(atomic_load(&kt_deleted), 0);
  kc_executable_destroy(exe);
  KC_CHECK_INT(atomic_load(&kt_deleted), 2);
}

/* Fails at INSTANTIATE: every call of the site then fails the same way. */
static kc_status* kt_instantiate_fails(kc_xcall_frame* f) {
  if (f->stage == KC_XCALL_STAGE_INSTANTIATE) {
    return kc_status_create(KC_OUT_OF_RANGE, "%lld elements is too many",
                            (long long)f->args[0].shape[0]);
  }
  return kc_status_create(KC_INTERNAL, "execute ran after a failed instantiate");
}

/* The status of running `exe` once, its message formatted into buf. */
static kc_status_code kt_run_message(const kc_executable* exe, char* buf, size_t cap) {
  float x[4] = {1, 2, 3, 4};
  kc_tensor* out = NULL;
  kc_status* st = kt_run(exe, x, 4, &out);
  KC_CHECK(st != NULL && out == NULL);
  kc_status_code code = kc_status_get_code(st);
  kc_status_format(st, buf, cap);
  kc_status_destroy(st);
  return code;
}

/* How often `needle` occurs in `text`. */
static int kt_count(const char* text, const char* needle) {
  int n = 0;
  for (const char* p = strstr(text, needle); p; p = strstr(p + 1, needle)) ++n;
  return n;
}

KC_TEST(xla_ffi_adapter_instantiate_errors_say_the_code_once) {
  kc_xcall_signature sig = {.struct_size = sizeof sig,
                            .num_args = 1, .args = kt_any_f32,
                            .num_results = 1, .results = kt_any_f32};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.inst_fails"), KC_PLATFORM_HOST, &sig,
                                      kt_instantiate_fails, NULL, NULL, 0));
  kt_adapt("kt.inst_fails", "kt.inst_fails_xla", false);
  kc_executable* exe = kt_compile(
      "HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  ROOT y = f32[4] custom-call(x), custom_call_target=\"kt.inst_fails_xla\",\n"
      "      api_version=API_VERSION_TYPED_FFI\n}\n");
  char msg[1024];
  for (int run = 0; run < 2; ++run) { /* remembered: the same the second time */
    KC_CHECK_INT(kt_run_message(exe, msg, sizeof msg), KC_OUT_OF_RANGE);
    KC_CHECK_STR(msg, "OUT_OF_RANGE: running 'm': in custom call 'kt.inst_fails_xla' "
                      "(instruction 'y'): kcall target 'kt.inst_fails': 4 elements is too "
                      "many");
    KC_CHECK_INT(kt_count(msg, "OUT_OF_RANGE"), 1);
  }
  kc_executable_destroy(exe);

  /* Buffers off the signature, found at the site's first execute: the
   * target named once. */
  static const kc_xcall_buffer_spec f64s[] = {{{kDLFloat, 64, 1}, -1}};
  sig.args = f64s;
  sig.results = f64s;
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.wants_f64"), KC_PLATFORM_HOST, &sig,
                                      kt_instantiate_fails, NULL, NULL, 0));
  kt_adapt("kt.wants_f64", "kt.wants_f64_xla", false);
  exe = kt_compile(
      "HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  ROOT y = f32[4] custom-call(x), custom_call_target=\"kt.wants_f64_xla\",\n"
      "      api_version=API_VERSION_TYPED_FFI\n}\n");
  KC_CHECK_INT(kt_run_message(exe, msg, sizeof msg), KC_INVALID_ARGUMENT);
  KC_CHECK_STR(msg, "INVALID_ARGUMENT: running 'm': in custom call 'kt.wants_f64_xla' "
                    "(instruction 'y'): kcall target 'kt.wants_f64': operand 0: expected "
                    "f64 of any rank, got f32[4]");
  KC_CHECK_INT(kt_count(msg, "INVALID_ARGUMENT"), 1);
  kc_executable_destroy(exe);
}

/* ---- every kind of attribute, and failures ------------------------------------------ */

static char kt_seen[512];

static kc_status* kt_echo(kc_xcall_frame* f) {
  if (f->stage != KC_XCALL_STAGE_EXECUTE) return NULL;
  size_t len = 0;
  for (int32_t i = 0; i < f->num_attrs; ++i) {
    const kc_attr* a = &f->attrs[i];
    len += (size_t)snprintf(kt_seen + len, sizeof kt_seen - len, "%.*s=", (int)a->name.size,
                            a->name.data);
    switch (a->type) {
      case KC_ATTR_BOOL: len += (size_t)snprintf(kt_seen + len, sizeof kt_seen - len, "%d", a->v.b); break;
      case KC_ATTR_I32: case KC_ATTR_I64:
        len += (size_t)snprintf(kt_seen + len, sizeof kt_seen - len, "%lld", (long long)a->v.i64);
        break;
      case KC_ATTR_F64: len += (size_t)snprintf(kt_seen + len, sizeof kt_seen - len, "%g", a->v.f64); break;
      case KC_ATTR_STRING:
        len += (size_t)snprintf(kt_seen + len, sizeof kt_seen - len, "'%.*s'", (int)a->v.str.size,
                                a->v.str.data);
        break;
      case KC_ATTR_ARRAY: {
        const int64_t* v = a->v.array.data;
        for (size_t k = 0; k < a->v.array.count; ++k) {
          len += (size_t)snprintf(kt_seen + len, sizeof kt_seen - len, "%s%lld", k ? "," : "",
                                  (long long)v[k]);
        }
        break;
      }
      case KC_ATTR_DICT:
        len += (size_t)snprintf(kt_seen + len, sizeof kt_seen - len, "{%zu:%.*s}",
                                a->v.dict.count, (int)a->v.dict.entries[0].name.size,
                                a->v.dict.entries[0].name.data);
        break;
      default: break;
    }
    len += (size_t)snprintf(kt_seen + len, sizeof kt_seen - len, ";");
  }
  const float* x = f->args[0].data;
  if (x[0] < 0) return kc_status_create(KC_OUT_OF_RANGE, "negative input %g", x[0]);
  float* y = f->results[0].data;
  for (int64_t i = 0; i < f->args[0].shape[0]; ++i) y[i] = x[i];
  return NULL;
}

KC_TEST(xla_ffi_adapter_decodes_every_attribute_kind_and_passes_failures) {
  static const kc_xcall_attr_spec attrs[] = {
      {"n", KC_ATTR_I32, 0},          {"big", KC_ATTR_I64, 0},
      {"flag", KC_ATTR_BOOL, 0},      {"x", KC_ATTR_F64, 0},
      {"label", KC_ATTR_STRING, 0},   {"dims", KC_ATTR_ARRAY, KC_ATTR_I64},
      {"opts", KC_ATTR_DICT, 0}};
  kc_xcall_signature sig = {.struct_size = sizeof sig,
                            .num_args = 1, .args = kt_any_f32,
                            .num_results = 1, .results = kt_any_f32,
                            .num_attrs = 7, .attrs = attrs};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.echo"), KC_PLATFORM_HOST, &sig, kt_echo,
                                      NULL, NULL, 0));
  kt_adapt("kt.echo", "kt.echo_xla", false);
  kc_executable* exe = kt_compile(KT_SCALE_PROGRAM(
      "kt.echo_xla",
      "big = -9007199254740993 : i64, dims = array<i64: 2, 3, 5>, flag = true, "
      "label = \"hi\", n = -7 : i32, opts = {z = 1 : i64, a = 2 : i64}, x = 0.25 : f64"));
  float x[4] = {1, 2, 3, 4};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_run(exe, x, 4, &out));
  kt_release(out);
  KC_CHECK_STR(kt_seen,
               "n=-7;big=-9007199254740993;flag=1;x=0.25;label='hi';dims=2,3,5;opts={2:a};");
  x[0] = -1;
  KC_CHECK_CODE(kt_run(exe, x, 4, &out), KC_OUT_OF_RANGE, "kcall target 'kt.echo'",
                "negative input -1");
  kc_executable_destroy(exe);
}

/* ---- ops ------------------------------------------------------------------------------ */

KC_TEST(xla_ffi_adapter_runs_an_op) {
  kt_register_add();
  kc_xla_ffi_handler_fn fn = NULL;
  KC_CHECK_OK(kc_xla_ffi_adapter_create_for_op(kc_sv("kt.Add"), &fn));
  kc_xla_ffi_handlers h = {.struct_size = sizeof h, .instantiate = fn, .execute = fn};
  KC_CHECK_OK(kc_xcall_register_xla_ffi(kc_sv("kt.add_xla"), KC_PLATFORM_HOST, &h, 0));
  kc_executable* exe = kt_compile(
      "HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  ROOT y = f32[4] custom-call(x, x), custom_call_target=\"kt.add_xla\",\n"
      "      api_version=API_VERSION_TYPED_FFI\n}\n");
  float x[4] = {1, 2, 3, 4};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_run(exe, x, 4, &out));
  const float* y = kt_dl(out)->data;
  KC_CHECK(y[0] == 2 && y[3] == 8);
  kt_release(out);
  kc_executable_destroy(exe);

  /* An op attribute it does not have is refused by name. */
  exe = kt_compile(
      "HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  ROOT y = f32[4] custom-call(x, x), custom_call_target=\"kt.add_xla\",\n"
      "      api_version=API_VERSION_TYPED_FFI, backend_config={axis = 1 : i64}\n}\n");
  KC_CHECK_CODE(kt_run(exe, x, 4, &out), KC_INVALID_ARGUMENT, "calling op 'kt.Add'",
                "attr 'axis'");
  kc_executable_destroy(exe);

  /* An unsigned value an op's int cannot hold is refused, not wrapped:
   * at XLA's instantiate stage, which kcall runs when it compiles. */
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(
      kc_sv("HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"
            "  ROOT y = f32[4] custom-call(x, x), custom_call_target=\"kt.add_xla\",\n"
            "      api_version=API_VERSION_TYPED_FFI,\n"
            "      backend_config={n = 18446744073709551615 : ui64}\n}\n"),
      &p));
  exe = NULL;
  KC_CHECK_CODE(kc_program_compile(p, NULL, &exe), KC_INVALID_ARGUMENT, "kcall op 'kt.Add'",
                "attribute 'n': an unsigned value above 9223372036854775807");
  KC_CHECK(exe == NULL);
  kc_program_destroy(p);
}

/* ---- making adapters ------------------------------------------------------------------- */

static void kt_legacy(void* out, const void** ins) {
  (void)out;
  (void)ins;
}

KC_TEST(xla_ffi_adapter_create_errors_and_reuse) {
  kc_xla_ffi_handler_fn fn = NULL, again = NULL;
  KC_CHECK_CODE(kc_xla_ffi_adapter_create(kc_sv("kt.scale"), KC_PLATFORM_HOST, NULL),
                KC_INVALID_ARGUMENT, "out_handler is NULL");
  KC_CHECK_CODE(kc_xla_ffi_adapter_create(kc_sv("kt.nothing"), KC_PLATFORM_HOST, &fn),
                KC_NOT_FOUND, "making an XLA FFI adapter", "kt.nothing");
  KC_CHECK(fn == NULL);
  KC_CHECK_OK(kc_xcall_register(kc_sv("kt.legacy"), KC_PLATFORM_HOST, KC_XCALL_API_ORIGINAL,
                                (void (*)(void))kt_legacy, 0));
  KC_CHECK_CODE(kc_xla_ffi_adapter_create(kc_sv("kt.legacy"), KC_PLATFORM_HOST, &fn),
                KC_FAILED_PRECONDITION, "not a kcall TYPED target");
  KC_CHECK_CODE(kc_xla_ffi_adapter_create_for_op(kc_sv("kt.NoOp"), &fn), KC_NOT_FOUND,
                "kt.NoOp");
  kt_register_scale();
  KC_CHECK_OK(kc_xla_ffi_adapter_create(kc_sv("kt.scale"), KC_PLATFORM_HOST, &fn));
  KC_CHECK_OK(kc_xla_ffi_adapter_create(kc_sv("kt.scale"), KC_PLATFORM_HOST, &again));
  KC_CHECK(fn != NULL && fn == again);
  /* An XLA FFI handler registered in kcall is not adapted back. */
  kt_adapt("kt.scale", "kt.scale_xla", true);
  KC_CHECK_CODE(kc_xla_ffi_adapter_create(kc_sv("kt.scale_xla"), KC_PLATFORM_HOST, &fn),
                KC_FAILED_PRECONDITION, "an XLA FFI handler already");
}

/* ---- frames XLA never makes ------------------------------------------------------ */

KC_TEST(xla_ffi_adapter_refuses_attribute_lists_that_are_not_there) {
  static const kc_xcall_attr_spec attrs[] = {{"factor", KC_ATTR_F32, 0}};
  kc_xcall_signature sig = {.struct_size = sizeof sig,
                            .num_args = 1, .args = kt_any_f32,
                            .num_results = 1, .results = kt_any_f32,
                            .num_attrs = 1, .attrs = attrs,
                            .flags = KC_XCALL_SIG_NO_INSTANTIATE};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.malformed"), KC_PLATFORM_HOST, &sig, kt_scale,
                                      NULL, NULL, 0));
  kc_xla_ffi_handler_fn fn = NULL;
  KC_CHECK_OK(kc_xla_ffi_adapter_create(kc_sv("kt.malformed"), KC_PLATFORM_HOST, &fn));
  float x[1] = {1}, y[1] = {0};
  int64_t dims[1] = {1};
  XLA_FFI_Buffer bx = {KC__XLA_BUFFER_SIZE, NULL, XLA_FFI_DataType_F32, x, 1, dims};
  XLA_FFI_Buffer by = {KC__XLA_BUFFER_SIZE, NULL, XLA_FFI_DataType_F32, y, 1, dims};
  void* args[1] = {&bx};
  void* rets[1] = {&by};
  XLA_FFI_ArgType at[1] = {XLA_FFI_ArgType_BUFFER};
  XLA_FFI_RetType rt[1] = {XLA_FFI_RetType_BUFFER};
  XLA_FFI_CallFrame f;
  memset(&f, 0, sizeof f);
  f.struct_size = KC__XLA_CALL_FRAME_SIZE;
  f.api = kc_xla_ffi_get_api();
  f.stage = XLA_FFI_ExecutionStage_EXECUTE;
  f.args = (XLA_FFI_Args){KC__XLA_ARGS_SIZE, NULL, 1, at, args};
  f.rets = (XLA_FFI_Rets){KC__XLA_RETS_SIZE, NULL, 1, rt, rets};
  /* One attribute said, its lists missing; then a negative count. */
  f.attrs = (XLA_FFI_Attrs){KC__XLA_ATTRS_SIZE, NULL, 1, NULL, NULL, NULL};
  for (int k = 0; k < 2; ++k) {
    XLA_FFI_Error* e = ((XLA_FFI_Handler*)(void (*)(void))fn)(&f);
    KC_CHECK(e != NULL);
    if (!e) return;
    XLA_FFI_Error_GetMessage_Args m = {
        .struct_size = KC__XLA_SIZE(XLA_FFI_Error_GetMessage_Args, message), .error = e};
    f.api->XLA_FFI_Error_GetMessage(&m);
    KC_CHECK_STR(m.message, "kcall target 'kt.malformed': malformed XLA attributes");
    XLA_FFI_Error_Destroy_Args d = {
        .struct_size = KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error), .error = e};
    f.api->XLA_FFI_Error_Destroy(&d);
    f.attrs.size = -1;
  }
  KC_CHECK(y[0] == 0); /* never run */
}

/* The byte of the bool the target got: a bool holds 0 or 1. */
static uint8_t kt_flag_seen;
static kc_status* kt_flag(kc_xcall_frame* f) {
  memcpy(&kt_flag_seen, &f->attrs[0].v.b, 1);
  return NULL;
}

/* XLA's PRED is a byte: 2 is true, not a bool's invalid value. */
KC_TEST(xla_ffi_adapter_reads_any_nonzero_pred_as_true) {
  static const kc_xcall_attr_spec attrs[] = {{"flag", KC_ATTR_BOOL, 0}};
  kc_xcall_signature sig = {.struct_size = sizeof sig,
                            .num_attrs = 1, .attrs = attrs,
                            .flags = KC_XCALL_SIG_NO_INSTANTIATE};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.flag"), KC_PLATFORM_HOST, &sig, kt_flag,
                                      NULL, NULL, 0));
  kc_xla_ffi_handler_fn fn = NULL;
  KC_CHECK_OK(kc_xla_ffi_adapter_create(kc_sv("kt.flag"), KC_PLATFORM_HOST, &fn));
  uint8_t byte = 2;
  XLA_FFI_Scalar scalar = {XLA_FFI_DataType_PRED, &byte};
  XLA_FFI_ByteSpan name = {"flag", 4};
  XLA_FFI_ByteSpan* names[1] = {&name};
  XLA_FFI_AttrType types[1] = {XLA_FFI_AttrType_SCALAR};
  void* values[1] = {&scalar};
  XLA_FFI_CallFrame f;
  memset(&f, 0, sizeof f);
  f.struct_size = KC__XLA_CALL_FRAME_SIZE;
  f.api = kc_xla_ffi_get_api();
  f.stage = XLA_FFI_ExecutionStage_EXECUTE;
  f.args.struct_size = KC__XLA_ARGS_SIZE;
  f.rets.struct_size = KC__XLA_RETS_SIZE;
  f.attrs = (XLA_FFI_Attrs){KC__XLA_ATTRS_SIZE, NULL, 1, types, names, values};
  kt_flag_seen = 0;
  KC_CHECK(((XLA_FFI_Handler*)(void (*)(void))fn)(&f) == NULL);
  KC_CHECK_INT(kt_flag_seen, 1);
}
