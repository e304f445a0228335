/* Tests of packed functions and the typed argument helpers (kcall/func.h).
 * The registry is in test_registry.c. */
#include <stdio.h>
#include <string.h>

#include "test.h"

static int64_t kt_refs(const void* obj) {
  return kc_object_get_ref_count((const kc_object*)obj);
}

/* `self` of a function whose deleter the test watches. */
typedef struct kt_counted_self {
  int deletions;
  int64_t bias;
} kt_counted_self;

static void kt_counted_delete(void* self) {
  ((kt_counted_self*)self)->deletions += 1;
}

/* t.add(a, b) = a + b + self->bias; self may be NULL. */
static kc_status* kt_add(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  int64_t a, b;
  KC_RETURN_IF_ERROR(kc_args_check_count("t.add", nargs, 2, 2), "in t.add");
  KC_RETURN_IF_ERROR(kc_args_get_int("t.add", args, nargs, 0, &a), "in t.add");
  KC_RETURN_IF_ERROR(kc_args_get_int("t.add", args, nargs, 1, &b), "in t.add");
  int64_t bias = self ? ((kt_counted_self*)self)->bias : 0;
  *ret = kc_any_int(a + b + bias);
  return NULL;
}

static kc_func* kt_make_func(kc_packed_fn fn, void* self,
                             kc_deleter_fn deleter) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_create(kt_alloc(), fn, self, deleter, &f));
  return f;
}

static int64_t kt_call_int(const kc_func* f, const kc_any* args,
                           int32_t nargs) {
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kc_func_call(f, args, nargs, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_INT);
  return ret.u.v_int64;
}

KC_TEST(func_create_and_call) {
  kt_counted_self self = {0, 100};
  kc_func* f = kt_make_func(kt_add, &self, kt_counted_delete);
  KC_CHECK_INT(KC_OBJECT(f)->type_index, KC_TYPE_FUNC);
  KC_CHECK_INT(kt_refs(f), 1);
  kc_any args[] = {kc_any_int(2), kc_any_int(3)};
  KC_CHECK_INT(kt_call_int(f, args, 2), 105);
  /* A bool is an int of 0 or 1. */
  args[1] = kc_any_bool(true);
  KC_CHECK_INT(kt_call_int(f, args, 2), 103);
  kc_any as_value = kc_any_object(KC_OBJECT(f));
  KC_CHECK_INT(as_value.type_index, KC_TYPE_FUNC);
  KC_CHECK_STR(kc_type_name(as_value.type_index), "function");
  KC_CHECK_INT(self.deletions, 0);
  kc_object_release(KC_OBJECT(f));
  KC_CHECK_INT(self.deletions, 1);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

/* kc_any_get_func: a borrowed handle from a FUNC value, nothing from any
 * other kind, and no reference taken. */
KC_TEST(any_get_func) {
  kc_func* f = kt_make_func(kt_add, NULL, NULL);
  kc_any v = kc_any_object(KC_OBJECT(f));
  kc_func* got = NULL;
  KC_CHECK(kc_any_get_func(&v, &got));
  KC_CHECK(got == f);
  KC_CHECK_INT(kt_refs(f), 1);
  kc_any args[] = {kc_any_int(4), kc_any_int(5)};
  KC_CHECK_INT(kt_call_int(got, args, 2), 9);

  kc_str* s = NULL;
  KC_CHECK_OK(kc_str_create(kt_alloc(), KC_SV_LIT("not a function"), &s));
  const kc_any others[] = {kc_any_none(), kc_any_int(1), kc_any_cstr("f"),
                           kc_any_opaque(f), kc_any_object(KC_OBJECT(s))};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; ++i) {
    kc_func* untouched = f;
    KC_CHECK(!kc_any_get_func(&others[i], &untouched));
    KC_CHECK(untouched == f);
  }
  KC_CHECK(!kc_any_get_func(NULL, &got));
  KC_CHECK(!kc_any_get_func(&v, NULL));
  kc_object_release(KC_OBJECT(s));
  kc_object_release(KC_OBJECT(f));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(func_deleter_runs_once_after_last_release) {
  kt_counted_self self = {0, 0};
  kc_func* f = kt_make_func(kt_add, &self, kt_counted_delete);
  kc_object_retain(KC_OBJECT(f));
  kc_object_release(KC_OBJECT(f));
  KC_CHECK_INT(self.deletions, 0);
  kc_object_release(KC_OBJECT(f));
  KC_CHECK_INT(self.deletions, 1);
  /* A NULL deleter is allowed. */
  f = kt_make_func(kt_add, &self, NULL);
  kc_object_release(KC_OBJECT(f));
  KC_CHECK_INT(self.deletions, 1);
}

KC_TEST(func_create_failure_runs_deleter) {
  int64_t n = 0;
  bool created = false;
  for (; n < 100 && !created; ++n) {
    kt_counted_self self = {0, 0};
    kc_counting_allocator_set_fail_after(kt_counter(), n);
    kc_func* f = NULL;
    kc_status* st = kc_func_create(kt_alloc(), kt_add, &self, kt_counted_delete, &f);
    kc_counting_allocator_set_fail_after(kt_counter(), -1);
    if (st) {
      KC_CHECK_INT(kc_status_get_code(st), KC_RESOURCE_EXHAUSTED);
      kc_status_destroy(st);
      KC_CHECK(f == NULL);
      KC_CHECK_INT(self.deletions, 1); /* `self` did not leak */
    } else {
      created = true;
      KC_CHECK_INT(self.deletions, 0);
      kc_object_release(KC_OBJECT(f));
      KC_CHECK_INT(self.deletions, 1);
    }
    KC_CHECK_INT(kt_live_blocks(), 0);
  }
  KC_CHECK(created && n > 1);
}

KC_TEST(func_create_bad_input) {
  kt_counted_self self = {0, 0};
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_create(kt_alloc(), NULL, &self, kt_counted_delete, &f),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK(f == NULL);
  KC_CHECK_INT(self.deletions, 1);
  KC_CHECK_CODE(kc_func_create(kt_alloc(), kt_add, &self, kt_counted_delete, NULL),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_INT(self.deletions, 2);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(func_argument_type_message) {
  kc_func* f = kt_make_func(kt_add, NULL, NULL);
  kc_any args[] = {kc_any_int(1), kc_any_cstr("two")};
  kc_any ret = kc_any_int(77);
  kc_status* st = kc_func_call(f, args, 2, &ret);
  KC_CHECK_INT(kc_status_get_code(st), KC_INVALID_ARGUMENT);
  KC_CHECK_STR(kc_status_get_message(st), "t.add: argument 1: expected int, got str");
  kc_status_destroy(st);
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  kc_object_release(KC_OBJECT(f));
}

KC_TEST(func_arity_message) {
  kc_func* f = kt_make_func(kt_add, NULL, NULL);
  kc_any args[] = {kc_any_int(1), kc_any_int(2), kc_any_int(3)};
  kc_any ret = kc_any_none();
  kc_status* st = kc_func_call(f, args, 3, &ret);
  KC_CHECK_INT(kc_status_get_code(st), KC_INVALID_ARGUMENT);
  KC_CHECK_STR(kc_status_get_message(st), "t.add: expected 2 arguments, got 3");
  kc_status_destroy(st);
  KC_CHECK_CODE(kc_func_call(f, args, 1, &ret), KC_INVALID_ARGUMENT,
                "t.add", "got 1");
  KC_CHECK_CODE(kc_func_call(f, NULL, 0, &ret), KC_INVALID_ARGUMENT,
                "t.add", "got 0");
  kc_object_release(KC_OBJECT(f));
}

KC_TEST(args_check_count) {
  KC_CHECK_OK(kc_args_check_count("f", 2, 2, 2));
  KC_CHECK_OK(kc_args_check_count("f", 1, 1, 3));
  KC_CHECK_OK(kc_args_check_count("f", 3, 1, 3));
  KC_CHECK_OK(kc_args_check_count("f", 50, 1, -1));
  KC_CHECK_OK(kc_args_check_count("f", 0, 0, 0));
  KC_CHECK_CODE(kc_args_check_count("m.f", 4, 1, 3), KC_INVALID_ARGUMENT, "m.f",
                "got 4");
  KC_CHECK_CODE(kc_args_check_count("m.f", 0, 1, -1), KC_INVALID_ARGUMENT,
                "m.f", "got 0");
  KC_CHECK_CODE(kc_args_check_count("m.f", 1, 0, 0), KC_INVALID_ARGUMENT,
                "m.f: expected 0 arguments, got 1");
}

/* ---- typed argument helpers ------------------------------------------------- */

typedef struct kt_arg_fixture {
  kc_str* str;
  kc_func* func;
  kc_tensor* tensor;
  kc_bytes* bytes;
  DLTensor dl;
  int64_t shape[1];
  int token;
  kc_any args[12];
} kt_arg_fixture;

enum {
  KT_A_INT,
  KT_A_BOOL,
  KT_A_FLOAT,
  KT_A_RAW,
  KT_A_SMALL,
  KT_A_STR,
  KT_A_FUNC,
  KT_A_DLT,
  KT_A_TENSOR,
  KT_A_OPAQUE,
  KT_A_NONE,
  KT_A_BYTES,
  KT_A_COUNT
};

static void kt_arg_fixture_init(kt_arg_fixture* fx) {
  memset(fx, 0, sizeof *fx);
  KC_CHECK_OK(kc_str_create(kt_alloc(), kc_sv("a string object"), &fx->str));
  fx->func = kt_make_func(kt_add, NULL, NULL);
  const int64_t shape[] = {2};
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 1, kc_dtype_make(kDLFloat, 32, 1),
                               kc_device_cpu(), &fx->tensor));
  KC_CHECK_OK(kc_bytes_create(kt_alloc(), "b", 1, &fx->bytes));
  fx->shape[0] = 1;
  fx->dl.ndim = 1;
  fx->dl.shape = fx->shape;
  fx->dl.data = &fx->token;
  fx->dl.dtype = kc_dtype_make(kDLInt, 32, 1);
  fx->dl.device = kc_device_cpu();
  fx->args[KT_A_INT] = kc_any_int(-9);
  fx->args[KT_A_BOOL] = kc_any_bool(true);
  fx->args[KT_A_FLOAT] = kc_any_float(2.5);
  fx->args[KT_A_RAW] = kc_any_cstr("raw");
  KC_CHECK_OK(kc_any_from_string(kt_alloc(), kc_sv("small"), &fx->args[KT_A_SMALL]));
  fx->args[KT_A_STR] = kc_any_object(KC_OBJECT(fx->str));
  fx->args[KT_A_FUNC] = kc_any_object(KC_OBJECT(fx->func));
  fx->args[KT_A_DLT] = kc_any_dltensor(&fx->dl);
  fx->args[KT_A_TENSOR] = kc_any_object(KC_OBJECT(fx->tensor));
  fx->args[KT_A_OPAQUE] = kc_any_opaque(&fx->token);
  fx->args[KT_A_NONE] = kc_any_none();
  fx->args[KT_A_BYTES] = kc_any_object(KC_OBJECT(fx->bytes));
}

static void kt_arg_fixture_deinit(kt_arg_fixture* fx) {
  kc_object_release(KC_OBJECT(fx->str));
  kc_object_release(KC_OBJECT(fx->func));
  kc_object_release(KC_OBJECT(fx->tensor));
  kc_object_release(KC_OBJECT(fx->bytes));
}

/* Checks that argument `index` of the fixture is refused by a helper with a
 * message of the documented shape. */
static void kt_check_refused(kc_status* st, int index, const char* expected,
                             const char* got) {
  char want[128];
  snprintf(want, sizeof want, "h.f: argument %d: expected %s, got %s", index,
           expected, got);
  KC_CHECK_CODE(st, KC_INVALID_ARGUMENT, want);
}

KC_TEST(args_get_int) {
  kt_arg_fixture fx;
  kt_arg_fixture_init(&fx);
  int64_t v = 0;
  KC_CHECK_OK(kc_args_get_int("h.f", fx.args, KT_A_COUNT, KT_A_INT, &v));
  KC_CHECK_INT(v, -9);
  KC_CHECK_OK(kc_args_get_int("h.f", fx.args, KT_A_COUNT, KT_A_BOOL, &v));
  KC_CHECK_INT(v, 1);
  kt_check_refused(kc_args_get_int("h.f", fx.args, KT_A_COUNT, KT_A_FLOAT, &v),
                   KT_A_FLOAT, "int", "float");
  kt_check_refused(kc_args_get_int("h.f", fx.args, KT_A_COUNT, KT_A_RAW, &v),
                   KT_A_RAW, "int", "str");
  kt_check_refused(kc_args_get_int("h.f", fx.args, KT_A_COUNT, KT_A_SMALL, &v),
                   KT_A_SMALL, "int", "str");
  kt_check_refused(kc_args_get_int("h.f", fx.args, KT_A_COUNT, KT_A_STR, &v),
                   KT_A_STR, "int", "str");
  kt_check_refused(kc_args_get_int("h.f", fx.args, KT_A_COUNT, KT_A_NONE, &v),
                   KT_A_NONE, "int", "none");
  kt_check_refused(kc_args_get_int("h.f", fx.args, KT_A_COUNT, KT_A_FUNC, &v),
                   KT_A_FUNC, "int", "function");
  /* Past the end is a missing argument, not a read out of bounds. */
  KC_CHECK_CODE(kc_args_get_int("h.f", fx.args, 2, 2, &v), KC_INVALID_ARGUMENT,
                "h.f");
  KC_CHECK_CODE(kc_args_get_int("h.f", fx.args, 2, -1, &v), KC_INVALID_ARGUMENT,
                "h.f");
  kt_arg_fixture_deinit(&fx);
}

KC_TEST(args_get_float) {
  kt_arg_fixture fx;
  kt_arg_fixture_init(&fx);
  double v = 0;
  KC_CHECK_OK(kc_args_get_float("h.f", fx.args, KT_A_COUNT, KT_A_FLOAT, &v));
  KC_CHECK(v == 2.5);
  KC_CHECK_OK(kc_args_get_float("h.f", fx.args, KT_A_COUNT, KT_A_INT, &v));
  KC_CHECK(v == -9.0);
  kt_check_refused(kc_args_get_float("h.f", fx.args, KT_A_COUNT, KT_A_STR, &v),
                   KT_A_STR, "float", "str");
  kt_check_refused(kc_args_get_float("h.f", fx.args, KT_A_COUNT, KT_A_NONE, &v),
                   KT_A_NONE, "float", "none");
  kt_check_refused(kc_args_get_float("h.f", fx.args, KT_A_COUNT, KT_A_TENSOR, &v),
                   KT_A_TENSOR, "float", "tensor");
  KC_CHECK_CODE(kc_args_get_float("h.f", fx.args, 1, 1, &v), KC_INVALID_ARGUMENT,
                "h.f");
  kt_arg_fixture_deinit(&fx);
}

KC_TEST(args_get_bool) {
  kt_arg_fixture fx;
  kt_arg_fixture_init(&fx);
  bool v = false;
  KC_CHECK_OK(kc_args_get_bool("h.f", fx.args, KT_A_COUNT, KT_A_BOOL, &v));
  KC_CHECK(v);
  KC_CHECK_OK(kc_args_get_bool("h.f", fx.args, KT_A_COUNT, KT_A_INT, &v));
  KC_CHECK(v); /* -9 is non-zero */
  kc_any zero = kc_any_int(0);
  KC_CHECK_OK(kc_args_get_bool("h.f", &zero, 1, 0, &v));
  KC_CHECK(!v);
  kt_check_refused(kc_args_get_bool("h.f", fx.args, KT_A_COUNT, KT_A_FLOAT, &v),
                   KT_A_FLOAT, "bool", "float");
  kt_check_refused(kc_args_get_bool("h.f", fx.args, KT_A_COUNT, KT_A_RAW, &v),
                   KT_A_RAW, "bool", "str");
  kt_arg_fixture_deinit(&fx);
}

KC_TEST(args_get_string) {
  kt_arg_fixture fx;
  kt_arg_fixture_init(&fx);
  kc_string_view v;
  KC_CHECK_OK(kc_args_get_string("h.f", fx.args, KT_A_COUNT, KT_A_RAW, &v));
  KC_CHECK(kt_sv_is(v, "raw"));
  KC_CHECK_OK(kc_args_get_string("h.f", fx.args, KT_A_COUNT, KT_A_SMALL, &v));
  KC_CHECK(kt_sv_is(v, "small"));
  KC_CHECK(v.data == fx.args[KT_A_SMALL].u.v_small); /* borrowed from the arg */
  KC_CHECK_OK(kc_args_get_string("h.f", fx.args, KT_A_COUNT, KT_A_STR, &v));
  KC_CHECK(kt_sv_is(v, "a string object"));
  kt_check_refused(kc_args_get_string("h.f", fx.args, KT_A_COUNT, KT_A_INT, &v),
                   KT_A_INT, "str", "int");
  kt_check_refused(kc_args_get_string("h.f", fx.args, KT_A_COUNT, KT_A_BYTES, &v),
                   KT_A_BYTES, "str", "bytes");
  kt_check_refused(kc_args_get_string("h.f", fx.args, KT_A_COUNT, KT_A_NONE, &v),
                   KT_A_NONE, "str", "none");
  kt_arg_fixture_deinit(&fx);
}

KC_TEST(args_get_func) {
  kt_arg_fixture fx;
  kt_arg_fixture_init(&fx);
  kc_func* v = NULL;
  KC_CHECK_OK(kc_args_get_func("h.f", fx.args, KT_A_COUNT, KT_A_FUNC, &v));
  KC_CHECK(v == fx.func);
  KC_CHECK_INT(kt_refs(fx.func), 1); /* borrowed, not retained */
  kt_check_refused(kc_args_get_func("h.f", fx.args, KT_A_COUNT, KT_A_INT, &v),
                   KT_A_INT, "function", "int");
  kt_check_refused(kc_args_get_func("h.f", fx.args, KT_A_COUNT, KT_A_NONE, &v),
                   KT_A_NONE, "function", "none");
  kt_check_refused(kc_args_get_func("h.f", fx.args, KT_A_COUNT, KT_A_STR, &v),
                   KT_A_STR, "function", "str");
  kt_arg_fixture_deinit(&fx);
}

KC_TEST(args_get_dltensor) {
  kt_arg_fixture fx;
  kt_arg_fixture_init(&fx);
  DLTensor* v = NULL;
  KC_CHECK_OK(kc_args_get_dltensor("h.f", fx.args, KT_A_COUNT, KT_A_DLT, &v));
  KC_CHECK(v == &fx.dl);
  KC_CHECK_OK(kc_args_get_dltensor("h.f", fx.args, KT_A_COUNT, KT_A_TENSOR, &v));
  const DLTensor* own = kc_tensor_get_dltensor(fx.tensor);
  KC_CHECK(v != NULL && v->data == own->data && v->ndim == 1 && v->shape[0] == 2);
  KC_CHECK_INT(kt_refs(fx.tensor), 1);
  kt_check_refused(kc_args_get_dltensor("h.f", fx.args, KT_A_COUNT, KT_A_INT, &v),
                   KT_A_INT, "tensor", "int");
  kt_check_refused(kc_args_get_dltensor("h.f", fx.args, KT_A_COUNT, KT_A_OPAQUE, &v),
                   KT_A_OPAQUE, "tensor", "opaque_ptr");
  kt_arg_fixture_deinit(&fx);
}

KC_TEST(args_get_opaque) {
  kt_arg_fixture fx;
  kt_arg_fixture_init(&fx);
  void* v = NULL;
  KC_CHECK_OK(kc_args_get_opaque("h.f", fx.args, KT_A_COUNT, KT_A_OPAQUE, &v));
  KC_CHECK(v == &fx.token);
  v = &fx;
  KC_CHECK_OK(kc_args_get_opaque("h.f", fx.args, KT_A_COUNT, KT_A_NONE, &v));
  KC_CHECK(v == NULL);
  KC_CHECK_CODE(kc_args_get_opaque("h.f", fx.args, KT_A_COUNT, KT_A_INT, &v),
                KC_INVALID_ARGUMENT, "h.f: argument 0: expected ", ", got int");
  KC_CHECK_CODE(kc_args_get_opaque("h.f", fx.args, KT_A_COUNT, KT_A_STR, &v),
                KC_INVALID_ARGUMENT, "h.f: argument 5: expected ", ", got str");
  kt_arg_fixture_deinit(&fx);
}

/* ---- kc_func_call ------------------------------------------------------------ */

KC_TEST(func_call_bad_input) {
  kc_any ret = kc_any_none();
  kc_any args[] = {kc_any_int(1), kc_any_int(2)};
  KC_CHECK_CODE(kc_func_call(NULL, args, 2, &ret), KC_INVALID_ARGUMENT, "");
  kc_func* f = kt_make_func(kt_add, NULL, NULL);
  KC_CHECK_CODE(kc_func_call(f, args, 2, NULL), KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_func_call(f, args, -1, &ret), KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_func_call(f, NULL, 2, &ret), KC_INVALID_ARGUMENT, "");
  kc_object_release(KC_OBJECT(f));
}

/* "*out_ret is set to none first ... on failure *out_ret is none": that
 * holds for a call refused before it starts too, so that a caller may
 * release *out_ret after any failure without tracking why it failed. */
KC_TEST(func_call_refused_clears_ret) {
  kc_any args[] = {kc_any_int(1), kc_any_int(2)};
  kc_any ret = kc_any_int(3);
  KC_CHECK_CODE(kc_func_call(NULL, args, 2, &ret), KC_INVALID_ARGUMENT, "");
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  kc_func* f = kt_make_func(kt_add, NULL, NULL);
  ret = kc_any_int(3);
  KC_CHECK_CODE(kc_func_call(f, args, -1, &ret), KC_INVALID_ARGUMENT, "");
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  kc_object_release(KC_OBJECT(f));
}

static kc_status* kt_returns_nothing(void* self, const kc_any* args,
                                     int32_t nargs, kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  /* The convention promises `ret` arrives as none. */
  return ret->type_index == KC_TYPE_NONE
             ? NULL
             : kc_status_create(KC_INTERNAL, "ret arrived as %s",
                                kc_type_name(ret->type_index));
}

KC_TEST(func_returns_none) {
  kc_func* f = kt_make_func(kt_returns_nothing, NULL, NULL);
  kc_any ret = kc_any_float(1.0); /* the call must clear it first */
  KC_CHECK_OK(kc_func_call(f, NULL, 0, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  kc_object_release(KC_OBJECT(f));
}

/* Returns its argument as an owned value (strings become owned copies). */
static kc_status* kt_echo(void* self, const kc_any* args, int32_t nargs,
                          kc_any* ret) {
  (void)self;
  KC_RETURN_IF_ERROR(kc_args_check_count("t.echo", nargs, 1, 1),
                     "in t.echo");
  kc_string_view s;
  if (kc_any_get_string(&args[0], &s)) {
    return kc_any_from_string(kt_alloc(), s, ret);
  }
  *ret = args[0];
  kc_any_retain(ret);
  return NULL;
}

KC_TEST(func_returns_owned_values) {
  kc_func* f = kt_make_func(kt_echo, NULL, NULL);
  kc_any ret;
  kc_any arg = kc_any_cstr("a borrowed string argument");
  KC_CHECK_OK(kc_func_call(f, &arg, 1, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_STR);
  kc_string_view v;
  KC_CHECK(kc_any_get_string(&ret, &v) && kt_sv_is(v, "a borrowed string argument"));
  kc_any_release(&ret);

  arg = kc_any_object(KC_OBJECT(f));
  KC_CHECK_OK(kc_func_call(f, &arg, 1, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_FUNC && ret.u.v_obj == KC_OBJECT(f));
  KC_CHECK_INT(kt_refs(f), 2);
  kc_any_release(&ret);
  KC_CHECK_INT(kt_refs(f), 1);
  kc_object_release(KC_OBJECT(f));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

/* ---- functions as values ------------------------------------------------------ */

/* State captured by a counter closure, allocated from kt_alloc() so that the
 * leak check sees whether the closure frees it. */
typedef struct kt_counter_state {
  int64_t next;
} kt_counter_state;

static void kt_counter_state_free(void* self) {
  kc_allocator_free(kt_alloc(), self, sizeof(kt_counter_state), 0);
}

static kc_status* kt_counter_next(void* self, const kc_any* args, int32_t nargs,
                                  kc_any* ret) {
  (void)args;
  KC_RETURN_IF_ERROR(kc_args_check_count("t.counter", nargs, 0, 0),
                     "in t.counter");
  kt_counter_state* state = self;
  *ret = kc_any_int(state->next++);
  return NULL;
}

/* t.make_counter(start) returns a function counting up from start. */
static kc_status* kt_make_counter(void* self, const kc_any* args, int32_t nargs,
                                  kc_any* ret) {
  (void)self;
  int64_t start;
  KC_RETURN_IF_ERROR(kc_args_check_count("t.make_counter", nargs, 1, 1),
                     "in t.make_counter");
  KC_RETURN_IF_ERROR(kc_args_get_int("t.make_counter", args, nargs, 0, &start),
                     "in t.make_counter");
  kt_counter_state* state = kc_allocator_alloc(kt_alloc(), sizeof *state, 0);
  if (!state) return kc_status_create(KC_RESOURCE_EXHAUSTED, "no memory");
  state->next = start;
  kc_func* counter = NULL;
  KC_RETURN_IF_ERROR(kc_func_create(kt_alloc(), kt_counter_next, state,
                                    kt_counter_state_free, &counter),
                     "t.make_counter");
  *ret = kc_any_object(KC_OBJECT(counter)); /* hands over our reference */
  return NULL;
}

/* t.apply(f, x) = f(x). */
static kc_status* kt_apply(void* self, const kc_any* args, int32_t nargs,
                           kc_any* ret) {
  (void)self;
  kc_func* f;
  KC_RETURN_IF_ERROR(kc_args_check_count("t.apply", nargs, 1, -1),
                     "in t.apply");
  KC_RETURN_IF_ERROR(kc_args_get_func("t.apply", args, nargs, 0, &f),
                     "in t.apply");
  KC_RETURN_IF_ERROR(kc_func_call(f, args + 1, nargs - 1, ret), "in t.apply");
  return NULL;
}

KC_TEST(func_returns_closure) {
  kc_func* make = kt_make_func(kt_make_counter, NULL, NULL);
  kc_any start = kc_any_int(10);
  kc_any counter = kc_any_none();
  KC_CHECK_OK(kc_func_call(make, &start, 1, &counter));
  KC_CHECK_INT(counter.type_index, KC_TYPE_FUNC);
  KC_CHECK_INT(kc_object_get_ref_count(counter.u.v_obj), 1);
  const kc_func* c = (const kc_func*)(const void*)counter.u.v_obj;
  KC_CHECK_INT(kt_call_int(c, NULL, 0), 10);
  KC_CHECK_INT(kt_call_int(c, NULL, 0), 11);
  /* A second closure has its own state. */
  kc_any other = kc_any_none();
  start = kc_any_int(-5);
  KC_CHECK_OK(kc_func_call(make, &start, 1, &other));
  KC_CHECK_INT(kt_call_int((const kc_func*)(const void*)other.u.v_obj, NULL, 0), -5);
  KC_CHECK_INT(kt_call_int(c, NULL, 0), 12);
  kc_any_release(&other);
  kc_any_release(&counter);
  kc_object_release(KC_OBJECT(make));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(func_takes_function_argument) {
  kc_func* apply = kt_make_func(kt_apply, NULL, NULL);
  kt_counted_self bias = {0, 1000};
  kc_func* add = kt_make_func(kt_add, &bias, kt_counted_delete);
  kc_any args[] = {kc_any_object(KC_OBJECT(add)), kc_any_int(1), kc_any_int(2)};
  KC_CHECK_INT(kt_call_int(apply, args, 3), 1003);
  /* apply(apply, add, 1, 2): a function passed through a function. */
  kc_any nested[] = {kc_any_object(KC_OBJECT(apply)), kc_any_object(KC_OBJECT(add)),
                     kc_any_int(4), kc_any_int(5)};
  KC_CHECK_INT(kt_call_int(apply, nested, 4), 1009);
  /* The closure from make_counter, passed on. */
  kc_func* make = kt_make_func(kt_make_counter, NULL, NULL);
  kc_any start = kc_any_int(7);
  kc_any counter;
  KC_CHECK_OK(kc_func_call(make, &start, 1, &counter));
  KC_CHECK_INT(kt_call_int(apply, &counter, 1), 7);
  KC_CHECK_INT(kt_call_int(apply, &counter, 1), 8);
  kc_any_release(&counter);
  kc_object_release(KC_OBJECT(make));
  kc_object_release(KC_OBJECT(add));
  KC_CHECK_INT(bias.deletions, 1);
  kc_object_release(KC_OBJECT(apply));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

static kc_status* kt_fails(void* self, const kc_any* args, int32_t nargs,
                           kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  (void)ret;
  return kc_status_create(KC_DATA_LOSS, "disk %d is on fire", 3);
}

/* Sets a result and then fails: the convention says the caller cleans up. */
static kc_status* kt_fails_after_setting_ret(void* self, const kc_any* args,
                                             int32_t nargs, kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  kc_status* st = kc_any_from_string(kt_alloc(), kc_sv("a result that will leak"), ret);
  if (st) return st;
  return kc_status_create(KC_ABORTED, "changed my mind");
}

KC_TEST(func_error_propagates) {
  kc_func* apply = kt_make_func(kt_apply, NULL, NULL);
  kc_func* bad = kt_make_func(kt_fails, NULL, NULL);
  kc_any args[] = {kc_any_object(KC_OBJECT(bad))};
  kc_any ret = kc_any_int(1);
  kc_status* st = kc_func_call(apply, args, 1, &ret);
  KC_CHECK_INT(kc_status_get_code(st), KC_DATA_LOSS);
  KC_CHECK_STR(kc_status_get_message(st), "disk 3 is on fire");
  char text[256];
  KC_CHECK_CONTAINS(kt_status_text(st, text, sizeof text), "in t.apply");
  kc_status_destroy(st);
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);

  kc_func* half = kt_make_func(kt_fails_after_setting_ret, NULL, NULL);
  ret = kc_any_int(2);
  KC_CHECK_CODE(kc_func_call(half, NULL, 0, &ret), KC_ABORTED, "changed my mind");
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  kc_object_release(KC_OBJECT(half));
  kc_object_release(KC_OBJECT(bad));
  kc_object_release(KC_OBJECT(apply));
  /* Includes the string kt_fails_after_setting_ret left in ret. */
  KC_CHECK_INT(kt_live_blocks(), 0);
}

/* Round trip of borrowed values: only arguments may hold them. */
static kc_status* kt_check_borrowed(void* self, const kc_any* args,
                                    int32_t nargs, kc_any* ret) {
  DLTensor* expected = self;
  kc_string_view s;
  DLTensor* t;
  KC_RETURN_IF_ERROR(kc_args_get_string("t.b", args, nargs, 0, &s), "in t.b");
  KC_RETURN_IF_ERROR(kc_args_get_dltensor("t.b", args, nargs, 1, &t), "in t.b");
  *ret = kc_any_bool(kt_sv_is(s, "borrowed") && t == expected &&
                     args[0].type_index == KC_TYPE_RAW_STR &&
                     args[1].type_index == KC_TYPE_DLTENSOR_PTR);
  return NULL;
}

KC_TEST(func_borrowed_arguments) {
  DLTensor dl;
  memset(&dl, 0, sizeof dl);
  kc_func* f = kt_make_func(kt_check_borrowed, &dl, NULL);
  kc_any args[] = {kc_any_cstr("borrowed"), kc_any_dltensor(&dl)};
  kc_any ret;
  KC_CHECK_OK(kc_func_call(f, args, 2, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_BOOL && ret.u.v_int64 == 1);
  kc_object_release(KC_OBJECT(f));
}

KC_TEST(func_call_noinline_same_contract) {
  kc_func* f = kt_make_func(kt_add, NULL, NULL);
  kc_any args[] = {kc_any_int(4), kc_any_int(5)};
  kc_any ret = kc_any_float(1.0);
  KC_CHECK_OK(kc_func_call_noinline(f, args, 2, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_INT && ret.u.v_int64 == 9);
  args[1] = kc_any_cstr("five");
  KC_CHECK_CODE(kc_func_call_noinline(f, args, 2, &ret), KC_INVALID_ARGUMENT,
                "t.add: argument 1: expected int, got str");
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  KC_CHECK_CODE(kc_func_call_noinline(NULL, args, 2, &ret), KC_INVALID_ARGUMENT,
                "");
  KC_CHECK_CODE(kc_func_call_noinline(f, args, 2, NULL), KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_func_call_noinline(f, args, -3, &ret), KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_func_call_noinline(f, NULL, 1, &ret), KC_INVALID_ARGUMENT, "");
  kc_object_release(KC_OBJECT(f));
}

/* The exported call trusts the convention and does not clean up after a
 * function that breaks it (func.h): *out_ret is what the function left,
 * and the caller's release frees it. */
KC_TEST(func_call_noinline_leaves_ret_to_the_caller) {
  kc_func* fails = kt_make_func(kt_fails, NULL, NULL);
  kc_any ret = kc_any_int(2);
  KC_CHECK_CODE(kc_func_call_noinline(fails, NULL, 0, &ret), KC_DATA_LOSS,
                "disk 3 is on fire");
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  kc_func* half = kt_make_func(kt_fails_after_setting_ret, NULL, NULL);
  ret = kc_any_int(2);
  KC_CHECK_CODE(kc_func_call_noinline(half, NULL, 0, &ret), KC_ABORTED,
                "changed my mind");
  KC_CHECK(kc_any_is_object(&ret));
  kc_any_release(&ret);
  kc_object_release(KC_OBJECT(half));
  kc_object_release(KC_OBJECT(fails));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(args_readers_refuse_null_out) {
  kc_any args[] = {kc_any_int(1), kc_any_float(1.0), kc_any_bool(true),
                   kc_any_cstr("s"), kc_any_opaque(args)};
  KC_CHECK_CODE(kc_args_get_int("h.f", args, 5, 0, NULL), KC_INVALID_ARGUMENT, "h.f");
  KC_CHECK_CODE(kc_args_get_float("h.f", args, 5, 1, NULL), KC_INVALID_ARGUMENT, "h.f");
  KC_CHECK_CODE(kc_args_get_bool("h.f", args, 5, 2, NULL), KC_INVALID_ARGUMENT, "h.f");
  KC_CHECK_CODE(kc_args_get_string("h.f", args, 5, 3, NULL), KC_INVALID_ARGUMENT, "h.f");
  KC_CHECK_CODE(kc_args_get_opaque("h.f", args, 5, 4, NULL), KC_INVALID_ARGUMENT, "h.f");
  KC_CHECK_CODE(kc_args_get_func("h.f", args, 5, 0, NULL), KC_INVALID_ARGUMENT, "h.f");
  KC_CHECK_CODE(kc_args_get_dltensor("h.f", args, 5, 0, NULL), KC_INVALID_ARGUMENT,
                "h.f");
  /* NULL args with a count that says they exist. */
  int64_t v;
  KC_CHECK_CODE(kc_args_get_int("h.f", NULL, 1, 0, &v), KC_INVALID_ARGUMENT, "h.f");
  /* A NULL borrowed tensor is not a tensor. */
  kc_any null_tensor = kc_any_dltensor(NULL);
  DLTensor* t;
  KC_CHECK_CODE(kc_args_get_dltensor("h.f", &null_tensor, 1, 0, &t),
                KC_INVALID_ARGUMENT, "h.f");
}

KC_TEST(args_mismatch_builders) {
  kc_any args[] = {kc_any_int(1), kc_any_cstr("two")};
  KC_CHECK_CODE(kc_args_mismatch("m.f", args, 2, 1, "int", true),
                KC_INVALID_ARGUMENT, "m.f: argument 1: expected int, got str");
  KC_CHECK_CODE(kc_args_mismatch("m.f", args, 2, 0, "tensor", true),
                KC_INVALID_ARGUMENT, "m.f: argument 0: expected tensor, got int");
  /* Missing, and no place to put it: still a status naming the function. */
  KC_CHECK_CODE(kc_args_mismatch("m.f", args, 2, 4, "int", true),
                KC_INVALID_ARGUMENT, "m.f", "4");
  KC_CHECK_CODE(kc_args_mismatch("m.f", args, 2, 0, "int", false),
                KC_INVALID_ARGUMENT, "m.f");
  kc_status* st = kc_args_count_mismatch("m.f", 3, 2, 2);
  KC_CHECK_STR(kc_status_get_message(st), "m.f: expected 2 arguments, got 3");
  kc_status_destroy(st);
  KC_CHECK_CODE(kc_args_count_mismatch("m.f", 0, 1, 3), KC_INVALID_ARGUMENT,
                "m.f", "got 0");
}

/* The plugin-side readers of abi_helpers.h: inline checks, the host table for what
 * they do not cover and for errors. */
KC_TEST(host_args_readers) {
  const kc_host_api* host = kc_plugin_get_host_api();
  kc_str* long_str = NULL;
  KC_CHECK_OK(kc_str_create(kt_alloc(), KC_SV_LIT("a long string"), &long_str));
  const int64_t shape[] = {2};
  kc_tensor* tensor = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 1,
                               kc_dtype_make(kDLFloat, 32, 1), kc_device_cpu(),
                               &tensor));
  kc_any args[] = {kc_any_int(7),    kc_any_float(2.5),
                   kc_any_bool(true), kc_any_object(KC_OBJECT(long_str)),
                   kc_any_cstr("raw"), kc_any_object(KC_OBJECT(tensor)),
                   kc_any_none()};
  const int32_t n = (int32_t)(sizeof args / sizeof args[0]);

  int64_t i = 0;
  double d = 0;
  bool b = false;
  kc_string_view sv = {NULL, 0};
  DLTensor* t = NULL;
  void* p = &i;
  KC_CHECK(kc_args_try_int(args, n, 0, &i) && i == 7);
  KC_CHECK(!kc_args_try_int(args, n, 1, &i));
  KC_CHECK(!kc_args_try_int(args, n, 99, &i));
  KC_CHECK(!kc_args_try_int(args, n, 0, NULL));
  KC_CHECK(kc_args_try_float(args, n, 0, &d) && d == 7.0);
  /* Objects are not covered inline: the table resolves them. */
  KC_CHECK(!kc_args_try_string(args, n, 3, &sv));
  KC_CHECK(!kc_args_try_dltensor(args, n, 5, &t));

  KC_CHECK_OK(kc_host_args_check_count(host, "t.f", n, n, n));
  KC_CHECK_OK(kc_host_args_get_float(host, "t.f", args, n, 1, &d));
  KC_CHECK(d == 2.5);
  KC_CHECK_OK(kc_host_args_get_bool(host, "t.f", args, n, 2, &b));
  KC_CHECK(b);
  KC_CHECK_OK(kc_host_args_get_string(host, "t.f", args, n, 3, &sv));
  KC_CHECK(kc_sv_equal(sv, KC_SV_LIT("a long string")));
  KC_CHECK_OK(kc_host_args_get_string(host, "t.f", args, n, 4, &sv));
  KC_CHECK(kc_sv_equal(sv, KC_SV_LIT("raw")));
  KC_CHECK_OK(kc_host_args_get_dltensor(host, "t.f", args, n, 5, &t));
  KC_CHECK(t == kc_tensor_get_dltensor(tensor));
  KC_CHECK_OK(kc_host_args_get_opaque(host, "t.f", args, n, 6, &p));
  KC_CHECK(p == NULL);

  KC_CHECK_CODE(kc_host_args_check_count(host, "t.f", n, 1, 2),
                KC_INVALID_ARGUMENT, "t.f: expected 1 to 2 arguments, got 7");
  i = 42;
  KC_CHECK_CODE(kc_host_args_get_int(host, "t.f", args, n, 4, &i),
                KC_INVALID_ARGUMENT, "t.f: argument 4: expected int, got str");
  KC_CHECK_INT(i, 42); /* untouched on failure */
  KC_CHECK_CODE(kc_host_args_get_int(host, "t.f", args, n, 7, &i),
                KC_INVALID_ARGUMENT, "t.f: argument 7: expected int, got nothing");
  KC_CHECK_CODE(kc_host_args_get_int(host, "t.f", args, n, 0, NULL),
                KC_INVALID_ARGUMENT, "out_value is NULL");
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_host_args_get_func(host, "t.f", args, n, 0, &f),
                KC_INVALID_ARGUMENT, "expected function, got int");
  KC_CHECK(f == NULL);

  kc_object_release(KC_OBJECT(long_str));
  kc_object_release(KC_OBJECT(tensor));
}
