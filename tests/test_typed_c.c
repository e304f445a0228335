/* Tests of the typed wrappers for C plugins (kcall/typed.h): every ARG and
 * RESULT tag, the arity and type checks and their messages, through the
 * host table a plugin gets. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kcall/typed.h"
#include "test.h"

/* ---- the C functions, written as a plugin author would ------------------ */

static int64_t kt_add(int64_t a, int64_t b) { return a + b; }
static int64_t kt_answer(void) { return 42; }
static double kt_scale(float x, int32_t k) { return (double)x * k; }
static bool kt_not(bool b) { return !b; }
static double kt_half(double x) { return x / 2; }

/* The last `n` bytes of `s` (all of it when shorter). */
static kc_string_view kt_tail(kc_string_view s, int32_t n) {
  if ((size_t)n < s.size) {
    s.data += s.size - (size_t)n;
    s.size = (size_t)n;
  }
  return s;
}

/* A C string argument, handed back when `keep`, else NULL (none). */
static const char* kt_maybe(const char* s, bool keep) { return keep ? s : NULL; }

static void* kt_last_opaque;
static void kt_remember(void* p) { kt_last_opaque = p; }

/* Sums six arguments of six kinds. */
static double kt_six(int64_t a, int32_t b, double c, float d, bool e,
                     kc_string_view f) {
  return (double)a + b + c + d + (e ? 1 : 0) + (double)f.size;
}

/* x[i] = v for every element of a compact f32 tensor. */
static void kt_fill(DLTensor* x, double v) {
  int64_t n = 1;
  for (int32_t d = 0; d < x->ndim; ++d) n *= x->shape[d];
  float* data = (float*)x->data;
  for (int64_t i = 0; i < n; ++i) data[i] = (float)v;
}

static int32_t kt_rank(DLTensor* t) { return t->ndim; }
static int64_t kt_first_i64(DLTensor* t) { return ((int64_t*)t->data)[0]; }
static double kt_first_f64(DLTensor* t) { return ((double*)t->data)[0]; }
static int64_t kt_first_i32(DLTensor* t) { return ((int32_t*)t->data)[0]; }

/* status form: fails for a negative x, else does nothing. */
static kc_status* kt_check(const kc_host_api* host, int64_t x) {
  if (x < 0) {
    return host->status_create(KC_FAILED_PRECONDITION,
                               "t.check: %lld is negative", (long long)x);
  }
  return NULL;
}

/* any form: f(x), calling the function argument through the table. */
static kc_status* kt_apply(const kc_host_api* host, kc_func* f, int64_t x,
                           kc_any* ret) {
  kc_any arg = kc_any_int(x);
  return host->func_call(f, &arg, 1, ret);
}

/* any form that sets a result and then fails: the wrapper must release
 * what was left in ret. */
static kc_str* kt_leftover;
static kc_status* kt_set_then_fail(const kc_host_api* host, kc_any* ret) {
  host->object_retain(KC_OBJECT(kt_leftover));
  *ret = kc_any_object(KC_OBJECT(kt_leftover));
  return host->status_create(KC_ABORTED, "t.set_then_fail: as asked");
}

KC_TYPED_FUNC(kt_typed_add, "t.add", int, kt_add, int, int)
KC_TYPED_FUNC0(kt_typed_answer, "t.answer", int, kt_answer)
KC_TYPED_FUNC(kt_typed_scale, "t.scale", float, kt_scale, f32, i32)
KC_TYPED_FUNC(kt_typed_not, "t.not", bool, kt_not, bool)
KC_TYPED_FUNC(kt_typed_half, "t.half", float, kt_half, float)
KC_TYPED_FUNC(kt_typed_tail, "t.tail", str, kt_tail, str, i32)
KC_TYPED_FUNC(kt_typed_maybe, "t.maybe", cstr, kt_maybe, cstr, bool)
KC_TYPED_FUNC(kt_typed_remember, "t.remember", void, kt_remember, opaque)
KC_TYPED_FUNC(kt_typed_six, "t.six", float, kt_six, int, i32, float, f32,
              bool, str)
KC_TYPED_FUNC(kt_typed_fill, "t.fill", void, kt_fill, f32_tensor, float)
KC_TYPED_FUNC(kt_typed_rank, "t.rank", int, kt_rank, tensor)
KC_TYPED_FUNC(kt_typed_first_i64, "t.first_i64", int, kt_first_i64,
              i64_tensor)
KC_TYPED_FUNC(kt_typed_first_f64, "t.first_f64", float, kt_first_f64,
              f64_tensor)
KC_TYPED_FUNC(kt_typed_first_i32, "t.first_i32", int, kt_first_i32,
              i32_tensor)
KC_TYPED_FUNC(kt_typed_check, "t.check", status, kt_check, int)
KC_TYPED_FUNC(kt_typed_apply, "t.apply", any, kt_apply, func, int)
KC_TYPED_FUNC0(kt_typed_set_then_fail, "t.set_then_fail", any,
               kt_set_then_fail)

static const kc_func_entry kt_typed_entries[] = {
    KC_TYPED_ENTRY(kt_typed_add),       KC_TYPED_ENTRY(kt_typed_answer),
    KC_TYPED_ENTRY(kt_typed_scale),     KC_TYPED_ENTRY(kt_typed_not),
    KC_TYPED_ENTRY(kt_typed_half),      KC_TYPED_ENTRY(kt_typed_tail),
    KC_TYPED_ENTRY(kt_typed_maybe),     KC_TYPED_ENTRY(kt_typed_remember),
    KC_TYPED_ENTRY(kt_typed_six),       KC_TYPED_ENTRY(kt_typed_fill),
    KC_TYPED_ENTRY(kt_typed_rank),      KC_TYPED_ENTRY(kt_typed_first_i64),
    KC_TYPED_ENTRY(kt_typed_first_f64), KC_TYPED_ENTRY(kt_typed_first_i32),
    KC_TYPED_ENTRY(kt_typed_check),     KC_TYPED_ENTRY(kt_typed_apply),
    KC_TYPED_ENTRY(kt_typed_set_then_fail),
};

/* ---- helpers -------------------------------------------------------------- */

static void kt_register_typed(void) {
  KC_CHECK_OK(kc_host_register_typed(
      kc_plugin_get_host_api(), kt_typed_entries,
      sizeof kt_typed_entries / sizeof kt_typed_entries[0]));
}

static kc_func* kt_get(const char* name) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(kc_sv(name), &f));
  return f;
}

/* Calls `name`; the result is the caller's. */
static kc_status* kt_call(const char* name, const kc_any* args, int32_t n,
                          kc_any* ret) {
  return kc_func_call(kt_get(name), args, n, ret);
}

static int64_t kt_call_int(const char* name, const kc_any* args, int32_t n) {
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kt_call(name, args, n, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_INT);
  return ret.u.v_int64;
}

static double kt_call_float(const char* name, const kc_any* args, int32_t n) {
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kt_call(name, args, n, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_FLOAT);
  return ret.u.v_float64;
}

/* The status of a call expected to fail; ret must come back none. */
static kc_status* kt_call_fails(const char* name, const kc_any* args,
                                int32_t n) {
  kc_any ret = kc_any_int(-1);
  kc_status* st = kt_call(name, args, n, &ret);
  KC_CHECK(st != NULL);
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  return st;
}

static kc_tensor* kt_tensor(uint8_t code, uint8_t bits, int32_t ndim) {
  const int64_t shape[] = {2, 3};
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, ndim,
                               kc_dtype_make(code, bits, 1), kc_device_cpu(),
                               &t));
  memset(kc_tensor_get_dltensor(t)->data, 0,
         (size_t)kc_dltensor_get_numel(kc_tensor_get_dltensor(t)) *
             kc_dtype_get_size(kc_dtype_make(code, bits, 1)));
  return t;
}

/* ---- the tests ------------------------------------------------------------ */

KC_TEST(typed_c_ints_and_arity) {
  kt_register_typed();
  kc_any args[] = {kc_any_int(2), kc_any_int(3), kc_any_int(4)};
  KC_CHECK_INT(kt_call_int("t.add", args, 2), 5);
  args[1] = kc_any_bool(true); /* a bool is an int of 0 or 1 */
  KC_CHECK_INT(kt_call_int("t.add", args, 2), 3);
  KC_CHECK_INT(kt_call_int("t.answer", NULL, 0), 42);

  KC_CHECK_CODE(kt_call_fails("t.add", args, 3), KC_INVALID_ARGUMENT,
                "t.add: expected 2 arguments, got 3");
  KC_CHECK_CODE(kt_call_fails("t.add", args, 1), KC_INVALID_ARGUMENT,
                "t.add: expected 2 arguments, got 1");
  KC_CHECK_CODE(kt_call_fails("t.answer", args, 1), KC_INVALID_ARGUMENT,
                "t.answer: expected 0 arguments, got 1");
  args[1] = kc_any_cstr("three");
  KC_CHECK_CODE(kt_call_fails("t.add", args, 2), KC_INVALID_ARGUMENT,
                "t.add: argument 1: expected int, got str");
  args[0] = kc_any_float(2.0); /* a float is not an int, even a whole one */
  KC_CHECK_CODE(kt_call_fails("t.add", args, 2), KC_INVALID_ARGUMENT,
                "t.add: argument 0: expected int, got float");
}

KC_TEST(typed_c_narrow_scalars) {
  kt_register_typed();
  kc_any args[2] = {kc_any_float(1.5), kc_any_int(4)};
  KC_CHECK(kt_call_float("t.scale", args, 2) == 6.0);
  args[0] = kc_any_int(3); /* an int converts to float */
  KC_CHECK(kt_call_float("t.scale", args, 2) == 12.0);

  args[1] = kc_any_int(INT32_MAX);
  args[0] = kc_any_float(1.0);
  KC_CHECK(kt_call_float("t.scale", args, 2) == (double)INT32_MAX);
  args[1] = kc_any_int(INT32_MIN);
  KC_CHECK(kt_call_float("t.scale", args, 2) == (double)INT32_MIN);
  args[1] = kc_any_int((int64_t)INT32_MAX + 1);
  KC_CHECK_CODE(kt_call_fails("t.scale", args, 2), KC_OUT_OF_RANGE,
                "t.scale: argument 1: expected an int in [-2147483648, "
                "2147483647], got 2147483648");
  args[1] = kc_any_int((int64_t)INT32_MIN - 1);
  KC_CHECK_CODE(kt_call_fails("t.scale", args, 2), KC_OUT_OF_RANGE,
                "got -2147483649");

  args[1] = kc_any_int(1);
  args[0] = kc_any_float(1e300);
  KC_CHECK_CODE(kt_call_fails("t.scale", args, 2), KC_OUT_OF_RANGE,
                "t.scale: argument 0: expected a float within f32 range",
                "got 1e+300");
  args[0] = kc_any_float(-1e39);
  KC_CHECK_CODE(kt_call_fails("t.scale", args, 2), KC_OUT_OF_RANGE, "-1e+39");
  /* Infinities and NaN are floats of every width: they pass. */
  args[0] = kc_any_float(INFINITY);
  KC_CHECK(isinf(kt_call_float("t.scale", args, 2)));
  args[0] = kc_any_float(NAN);
  KC_CHECK(isnan(kt_call_float("t.scale", args, 2)));
  args[0] = kc_any_float(3.4028234663852886e38); /* FLT_MAX itself */
  KC_CHECK(kt_call_float("t.scale", args, 2) == 3.4028234663852886e38);

  kc_any b = kc_any_bool(true);
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kt_call("t.not", &b, 1, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_BOOL && ret.u.v_int64 == 0);
  b = kc_any_int(0); /* an int converts to bool */
  KC_CHECK_OK(kt_call("t.not", &b, 1, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_BOOL && ret.u.v_int64 == 1);
  b = kc_any_float(1);
  KC_CHECK_CODE(kt_call_fails("t.not", &b, 1), KC_INVALID_ARGUMENT,
                "t.not: argument 0: expected bool, got float");

  kc_any x = kc_any_int(5);
  KC_CHECK(kt_call_float("t.half", &x, 1) == 2.5);
  x = kc_any_none();
  KC_CHECK_CODE(kt_call_fails("t.half", &x, 1), KC_INVALID_ARGUMENT,
                "t.half: argument 0: expected float, got none");
}

KC_TEST(typed_c_strings) {
  kt_register_typed();
  kc_str* long_str = NULL;
  KC_CHECK_OK(kc_str_create(kt_alloc(), KC_SV_LIT("a string object"), &long_str));
  kc_any small = kc_any_none();
  KC_CHECK_OK(kc_any_from_string(NULL, KC_SV_LIT("short"), &small));
  const kc_any inputs[] = {kc_any_cstr("a raw string"), small,
                           kc_any_object(KC_OBJECT(long_str))};
  const char* const tails[] = {"aw string", "short", "ng object"};
  for (int i = 0; i < 3; ++i) {
    kc_any args[2] = {inputs[i], kc_any_int(9)};
    kc_any ret = kc_any_none();
    KC_CHECK_OK(kt_call("t.tail", args, 2, &ret));
    kc_string_view v;
    KC_CHECK(kc_any_get_string(&ret, &v) && kt_sv_is(v, tails[i]));
    /* The result is a copy, owned by the caller. */
    KC_CHECK(ret.type_index == KC_TYPE_STR || ret.type_index == KC_TYPE_SMALL_STR);
    kc_any_release(&ret);
  }
  kc_any args[2] = {kc_any_int(1), kc_any_int(2)};
  KC_CHECK_CODE(kt_call_fails("t.tail", args, 2), KC_INVALID_ARGUMENT,
                "t.tail: argument 0: expected str, got int");

  /* cstr both ways; NULL comes back as none. */
  kc_any margs[2] = {inputs[2], kc_any_bool(true)};
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kt_call("t.maybe", margs, 2, &ret));
  kc_string_view v;
  KC_CHECK(kc_any_get_string(&ret, &v) && kt_sv_is(v, "a string object"));
  kc_any_release(&ret);
  margs[0] = small; /* inline strings are NUL-terminated too */
  KC_CHECK_OK(kt_call("t.maybe", margs, 2, &ret));
  KC_CHECK(kc_any_get_string(&ret, &v) && kt_sv_is(v, "short"));
  kc_any_release(&ret);
  margs[1] = kc_any_bool(false);
  ret = kc_any_int(7);
  KC_CHECK_OK(kt_call("t.maybe", margs, 2, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  kc_object_release(KC_OBJECT(long_str));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(typed_c_opaque_and_six_arguments) {
  kt_register_typed();
  int marker = 0;
  kc_any p = kc_any_opaque(&marker);
  kc_any ret = kc_any_int(1);
  KC_CHECK_OK(kt_call("t.remember", &p, 1, &ret));
  KC_CHECK(kt_last_opaque == &marker);
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE); /* void gives none */
  p = kc_any_none();
  KC_CHECK_OK(kt_call("t.remember", &p, 1, &ret));
  KC_CHECK(kt_last_opaque == NULL);

  kc_any six[6] = {kc_any_int(1),       kc_any_int(2),
                   kc_any_float(0.5),   kc_any_float(0.25),
                   kc_any_bool(true),   kc_any_cstr("abcd")};
  KC_CHECK(kt_call_float("t.six", six, 6) == 1 + 2 + 0.5 + 0.25 + 1 + 4);
  six[5] = kc_any_int(0);
  KC_CHECK_CODE(kt_call_fails("t.six", six, 6), KC_INVALID_ARGUMENT,
                "t.six: argument 5: expected str, got int");
  /* The first bad argument is the one reported. */
  six[3] = kc_any_cstr("x");
  KC_CHECK_CODE(kt_call_fails("t.six", six, 6), KC_INVALID_ARGUMENT,
                "t.six: argument 3: expected float, got str");
  KC_CHECK_CODE(kt_call_fails("t.six", six, 5), KC_INVALID_ARGUMENT,
                "t.six: expected 6 arguments, got 5");
}

KC_TEST(typed_c_tensors) {
  kt_register_typed();
  kc_tensor* f32 = kt_tensor(kDLFloat, 32, 2);
  kc_tensor* f64 = kt_tensor(kDLFloat, 64, 1);
  kc_tensor* i64 = kt_tensor(kDLInt, 64, 1);
  kc_tensor* i32 = kt_tensor(kDLInt, 32, 1);
  ((double*)kc_tensor_get_dltensor(f64)->data)[0] = 2.5;
  ((int64_t*)kc_tensor_get_dltensor(i64)->data)[0] = -9;
  ((int32_t*)kc_tensor_get_dltensor(i32)->data)[0] = 77;

  /* A tensor object and a borrowed DLTensor are both tensors. */
  kc_any args[2] = {kc_any_object(KC_OBJECT(f32)), kc_any_float(1.5)};
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kt_call("t.fill", args, 2, &ret));
  const float* data = (const float*)kc_tensor_get_dltensor(f32)->data;
  KC_CHECK(data[0] == 1.5f && data[5] == 1.5f);
  args[0] = kc_any_dltensor((DLTensor*)(uintptr_t)kc_tensor_get_dltensor(f32));
  args[1] = kc_any_int(-2);
  KC_CHECK_OK(kt_call("t.fill", args, 2, &ret));
  KC_CHECK(data[3] == -2.0f);

  kc_any one = kc_any_object(KC_OBJECT(f64));
  KC_CHECK(kt_call_float("t.first_f64", &one, 1) == 2.5);
  KC_CHECK_INT(kt_call_int("t.rank", &one, 1), 1);
  one = kc_any_object(KC_OBJECT(i64));
  KC_CHECK_INT(kt_call_int("t.first_i64", &one, 1), -9);
  one = kc_any_object(KC_OBJECT(i32));
  KC_CHECK_INT(kt_call_int("t.first_i32", &one, 1), 77);

  /* Each dtype tag names what it wanted and what it got. */
  args[0] = kc_any_object(KC_OBJECT(f64));
  KC_CHECK_CODE(kt_call_fails("t.fill", args, 2), KC_INVALID_ARGUMENT,
                "t.fill: argument 0: expected a tensor of f32, got one of f64");
  KC_CHECK_CODE(kt_call_fails("t.first_i64", args, 1), KC_INVALID_ARGUMENT,
                "t.first_i64: argument 0: expected a tensor of i64, got one "
                "of f64");
  KC_CHECK_CODE(kt_call_fails("t.first_i32", args, 1), KC_INVALID_ARGUMENT,
                "expected a tensor of i32, got one of f64");
  KC_CHECK_CODE(kt_call_fails("t.first_f64", &one, 1), KC_INVALID_ARGUMENT,
                "expected a tensor of f64, got one of i32");
  args[0] = kc_any_int(3);
  KC_CHECK_CODE(kt_call_fails("t.fill", args, 2), KC_INVALID_ARGUMENT,
                "t.fill: argument 0: expected tensor, got int");
  args[0] = kc_any_dltensor(NULL);
  KC_CHECK_CODE(kt_call_fails("t.rank", args, 1), KC_INVALID_ARGUMENT,
                "t.rank: argument 0: expected tensor, got a NULL tensor");

  /* A tensor of the right dtype on a device the CPU cannot read. */
  DLTensor on_gpu = *kc_tensor_get_dltensor(f32);
  on_gpu.device.device_type = kDLCUDA;
  on_gpu.device.device_id = 1;
  args[0] = kc_any_dltensor(&on_gpu);
  args[1] = kc_any_float(0);
  KC_CHECK_CODE(kt_call_fails("t.fill", args, 2), KC_INVALID_ARGUMENT,
                "t.fill: argument 0: expected a tensor in host memory, got "
                "one on device type 2 (id 1)");
  /* The plain tag takes any device: checking is the function's job. */
  KC_CHECK_INT(kt_call_int("t.rank", args, 1), 2);

  kc_object_release(KC_OBJECT(f32));
  kc_object_release(KC_OBJECT(f64));
  kc_object_release(KC_OBJECT(i64));
  kc_object_release(KC_OBJECT(i32));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(typed_c_check_tensor) {
  const kc_host_api* host = kc_plugin_get_host_api();
  int64_t shape[3] = {2, 2, 2};
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.ndim = 3;
  t.shape = shape;
  t.device = kc_device_cpu();
  t.dtype = kc_dtype_make(kDLFloat, 32, 1);
  const DLDataType any_dtype = kc_dtype_make(0, 0, 0);
  KC_CHECK_OK(kc_host_check_tensor(host, "m.f", 0, &t, t.dtype, 3));
  KC_CHECK_OK(kc_host_check_tensor(host, "m.f", 0, &t, any_dtype, -1));
  KC_CHECK_CODE(kc_host_check_tensor(host, "m.f", 2, &t, any_dtype, 2),
                KC_INVALID_ARGUMENT,
                "m.f: argument 2: expected a tensor of rank 2, got rank 3");
  KC_CHECK_CODE(kc_host_check_tensor(host, "m.f", 0, NULL, any_dtype, -1),
                KC_INVALID_ARGUMENT, "m.f: argument 0: expected a tensor, got NULL");
  /* Pinned and managed memory are host memory. */
  t.device.device_type = kDLCUDAHost;
  KC_CHECK_OK(kc_host_check_tensor(host, "m.f", 0, &t, any_dtype, -1));
  t.device.device_type = kDLCUDAManaged;
  KC_CHECK_OK(kc_host_check_tensor(host, "m.f", 0, &t, any_dtype, -1));
  t.device.device_type = kDLROCM;
  KC_CHECK_CODE(kc_host_check_tensor(host, "m.f", 0, &t, any_dtype, -1),
                KC_INVALID_ARGUMENT, "device type 10");
  t.device = kc_device_cpu();

  /* The dtype names follow kcall's own (kc_dtype_format). */
  const DLDataType kinds[] = {
      kc_dtype_make(kDLBfloat, 16, 1), kc_dtype_make(kDLBool, 8, 1),
      kc_dtype_make(kDLFloat, 32, 4),  kc_dtype_make(kDLUInt, 8, 1),
      kc_dtype_make(kDLComplex, 64, 1), kc_dtype_make(kDLFloat8_e5m2, 8, 1)};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    char want[64];
    char text[256];
    if (kinds[i].code < 7) {
      kc_dtype_format(kinds[i], want, sizeof want);
    } else {
      snprintf(want, sizeof want, "dtype(code=%u,bits=%u,lanes=%u)",
               kinds[i].code, kinds[i].bits, kinds[i].lanes);
    }
    kc_status* st = kc_host_check_tensor(host, "m.f", 0, &t, kinds[i], -1);
    snprintf(text, sizeof text, "expected a tensor of %s, got one of f32", want);
    KC_CHECK_CODE(st, KC_INVALID_ARGUMENT, text);
  }
}

KC_TEST(typed_c_status_and_any_forms) {
  kt_register_typed();
  kc_any x = kc_any_int(3);
  kc_any ret = kc_any_int(1);
  KC_CHECK_OK(kt_call("t.check", &x, 1, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  x = kc_any_int(-3);
  KC_CHECK_CODE(kt_call_fails("t.check", &x, 1), KC_FAILED_PRECONDITION,
                "t.check: -3 is negative");

  /* A function argument, called through the table. */
  kc_any args[2] = {kc_any_object(KC_OBJECT(kt_get("t.half"))),
                    kc_any_int(9)};
  KC_CHECK(kt_call_float("t.apply", args, 2) == 4.5);
  args[0] = kc_any_object(KC_OBJECT(kt_get("t.add")));
  KC_CHECK_CODE(kt_call_fails("t.apply", args, 2), KC_INVALID_ARGUMENT,
                "t.add: expected 2 arguments, got 1");
  args[0] = kc_any_cstr("t.half");
  KC_CHECK_CODE(kt_call_fails("t.apply", args, 2), KC_INVALID_ARGUMENT,
                "t.apply: argument 0: expected function, got str");

  /* What an any function leaves in ret when it fails is released. */
  KC_CHECK_OK(kc_str_create(kt_alloc(), KC_SV_LIT("left behind"), &kt_leftover));
  KC_CHECK_CODE(kt_call_fails("t.set_then_fail", NULL, 0), KC_ABORTED,
                "t.set_then_fail: as asked");
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(kt_leftover)), 1);
  kc_object_release(KC_OBJECT(kt_leftover));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(typed_c_register_refuses_taken_name) {
  const kc_host_api* host = kc_plugin_get_host_api();
  kt_register_typed();
  KC_CHECK_CODE(kc_host_register_typed(host, kt_typed_entries, 1),
                KC_ALREADY_EXISTS, "t.add");
  const kc_func_entry bad[] = {{"not a name", kt_typed_add}};
  KC_CHECK_CODE(kc_host_register_typed(host, bad, 1), KC_INVALID_ARGUMENT, "");
}
