// Tests of the C++ layer's packed functions (kcall/kcall.hpp): typed
// registration with every parameter and result conversion, the errors
// (arity, types, ranges, exceptions), kcall::Function, kcall::Any and
// kcall::TensorObject. The layer runs over the host table, as in a plugin.
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kcall/kcall.hpp"
#include "test.h"

namespace {

const kc_host_api* host_table() {
  const kc_host_api* h = kc_plugin_get_host_api();
  kcall::set_host(h);
  return h;
}

int64_t refs(const void* obj) {
  return kc_object_get_ref_count(static_cast<const kc_object*>(obj));
}

kc_func* lookup(const char* name) {
  kc_func* f = nullptr;
  KC_CHECK_OK(kc_func_registry_lookup(kc_sv(name), &f));
  return f;
}

// Calls `name` through the C API. The result is the caller's.
kc_status* call(const char* name, std::initializer_list<kc_any> args,
                kc_any* ret) {
  *ret = kc_any_int(-1);
  return kc_func_call(lookup(name), args.begin(),
                      static_cast<int32_t>(args.size()), ret);
}

// The status of a call that must fail, leaving ret none.
kc_status* fails(const char* name, std::initializer_list<kc_any> args) {
  kc_any ret = kc_any_int(-1);
  kc_status* st = call(name, args, &ret);
  KC_CHECK(st != nullptr);
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  return st;
}

int64_t call_int(const char* name, std::initializer_list<kc_any> args) {
  kc_any ret = kc_any_none();
  KC_CHECK_OK(call(name, args, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_INT);
  return ret.u.v_int64;
}

double call_float(const char* name, std::initializer_list<kc_any> args) {
  kc_any ret = kc_any_none();
  KC_CHECK_OK(call(name, args, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_FLOAT);
  return ret.u.v_float64;
}

std::string call_str(const char* name, std::initializer_list<kc_any> args) {
  kc_any ret = kc_any_none();
  KC_CHECK_OK(call(name, args, &ret));
  kc_string_view v{nullptr, 0};
  KC_CHECK(kc_any_get_string(&ret, &v));
  std::string s(v.data, v.size);
  kc_any_release(&ret);
  return s;
}

kc_tensor* make_tensor(DLDataType dtype, std::vector<int64_t> shape) {
  kc_tensor* t = nullptr;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape.data(),
                               static_cast<int32_t>(shape.size()), dtype,
                               kc_device_cpu(), &t));
  return t;
}

// A packed function written in C, to pass to typed ones: x -> 10 * x.
kc_status* times_ten(void*, const kc_any* args, int32_t nargs, kc_any* ret) {
  int64_t x = 0;
  kc_status* st = kc_args_check_count("c.times_ten", nargs, 1, 1);
  if (!st) st = kc_args_get_int("c.times_ten", args, nargs, 0, &x);
  if (!st) *ret = kc_any_int(10 * x);
  return st;
}

// Counts the live copies of a lambda's captured state.
struct Probe {
  static std::atomic<int> live;
  Probe() { ++live; }
  Probe(const Probe&) { ++live; }
  Probe(Probe&&) noexcept { ++live; }
  ~Probe() { --live; }
};
std::atomic<int> Probe::live{0};

// Runs `stmt`, which must throw kcall::Error with `want_code` and a message
// containing `want_text`.
#define KT_CHECK_THROWS(stmt, want_code, want_text)                                    \
  do {                                                                       \
    bool kt__thrown = false;                                                 \
    try {                                                                    \
      stmt;                                                                  \
    } catch (const kcall::Error& kt__e) {                                    \
      kt__thrown = true;                                                     \
      KC_CHECK_INT(kt__e.code(), want_code);                                 \
      KC_CHECK_CONTAINS(kt__e.what(), want_text);                            \
    }                                                                        \
    KT__CPP_CHECKED(if (!kt__thrown) kt__fail(__FILE__, __LINE__,            \
                                              "%s did not throw", #stmt));   \
  } while (0)

int64_t plain_sub(int64_t a, int64_t b) { return a - b; }
double noexcept_half(double x) noexcept { return x / 2; }

}  // namespace

KC_TEST(typed_cpp_integer_parameters) {
  host_table();
  kcall::register_func("t.i8", [](int8_t x) { return x; });
  kcall::register_func("t.u8", [](uint8_t x) { return x; });
  kcall::register_func("t.i16", [](int16_t x) { return x; });
  kcall::register_func("t.u16", [](uint16_t x) { return x; });
  kcall::register_func("t.i32", [](int32_t x) { return x; });
  kcall::register_func("t.u32", [](uint32_t x) { return x; });
  kcall::register_func("t.i64", [](int64_t x) { return x; });
  kcall::register_func("t.u64", [](uint64_t x) { return x; });
  kcall::register_func("t.long", [](long x, unsigned short y) {
    return x + static_cast<long>(y);
  });

  KC_CHECK_INT(call_int("t.i8", {kc_any_int(-128)}), -128);
  KC_CHECK_INT(call_int("t.i8", {kc_any_int(127)}), 127);
  KC_CHECK_CODE(fails("t.i8", {kc_any_int(128)}), KC_OUT_OF_RANGE,
                "t.i8: argument 0: expected an int in [-128, 127], got 128");
  KC_CHECK_CODE(fails("t.i8", {kc_any_int(-129)}), KC_OUT_OF_RANGE, "got -129");
  KC_CHECK_INT(call_int("t.u8", {kc_any_int(255)}), 255);
  KC_CHECK_CODE(fails("t.u8", {kc_any_int(-1)}), KC_OUT_OF_RANGE,
                "t.u8: argument 0: expected an int in [0, 255], got -1");
  KC_CHECK_CODE(fails("t.u8", {kc_any_int(256)}), KC_OUT_OF_RANGE, "got 256");
  KC_CHECK_INT(call_int("t.i16", {kc_any_int(-32768)}), -32768);
  KC_CHECK_CODE(fails("t.i16", {kc_any_int(32768)}), KC_OUT_OF_RANGE,
                "[-32768, 32767]");
  KC_CHECK_INT(call_int("t.u16", {kc_any_int(65535)}), 65535);
  KC_CHECK_CODE(fails("t.u16", {kc_any_int(65536)}), KC_OUT_OF_RANGE,
                "[0, 65535]");
  KC_CHECK_INT(call_int("t.i32", {kc_any_int(INT32_MIN)}), INT32_MIN);
  KC_CHECK_CODE(fails("t.i32", {kc_any_int(int64_t{1} << 32)}),
                KC_OUT_OF_RANGE,
                "t.i32: argument 0: expected an int in [-2147483648, "
                "2147483647], got 4294967296");
  KC_CHECK_INT(call_int("t.u32", {kc_any_int(UINT32_MAX)}), UINT32_MAX);
  KC_CHECK_CODE(fails("t.u32", {kc_any_int(-5)}), KC_OUT_OF_RANGE,
                "[0, 4294967295], got -5");
  KC_CHECK_INT(call_int("t.i64", {kc_any_int(INT64_MIN)}), INT64_MIN);
  KC_CHECK_INT(call_int("t.i64", {kc_any_int(INT64_MAX)}), INT64_MAX);
  KC_CHECK_INT(call_int("t.u64", {kc_any_int(INT64_MAX)}), INT64_MAX);
  KC_CHECK_CODE(fails("t.u64", {kc_any_int(-1)}), KC_OUT_OF_RANGE,
                "expected an int in [0, 18446744073709551615], got -1");
  KC_CHECK_INT(call_int("t.long", {kc_any_int(-3), kc_any_int(5)}), 2);
  // A bool is an int of 0 or 1; a float, even a whole one, is not an int.
  KC_CHECK_INT(call_int("t.i8", {kc_any_bool(true)}), 1);
  KC_CHECK_CODE(fails("t.i32", {kc_any_float(2.0)}), KC_INVALID_ARGUMENT,
                "t.i32: argument 0: expected int, got float");
  KC_CHECK_CODE(fails("t.long", {kc_any_int(1), kc_any_cstr("2")}),
                KC_INVALID_ARGUMENT, "t.long: argument 1: expected int, got str");
}

KC_TEST(typed_cpp_scalar_parameters) {
  host_table();
  kcall::register_func("t.add", [](int64_t a, double b) -> double {
    return static_cast<double>(a) + b;
  });
  kcall::register_func("t.f32", [](float x) { return static_cast<double>(x); });
  kcall::register_func("t.not", [](bool b) { return !b; });

  KC_CHECK(call_float("t.add", {kc_any_int(2), kc_any_float(0.5)}) == 2.5);
  KC_CHECK(call_float("t.add", {kc_any_int(2), kc_any_int(3)}) == 5.0);
  KC_CHECK_CODE(fails("t.add", {kc_any_int(1), kc_any_cstr("x")}),
                KC_INVALID_ARGUMENT,
                "t.add: argument 1: expected float, got str");
  KC_CHECK_CODE(fails("t.add", {kc_any_int(1)}), KC_INVALID_ARGUMENT,
                "t.add: expected 2 arguments, got 1");
  KC_CHECK_CODE(fails("t.add", {kc_any_int(1), kc_any_int(2), kc_any_int(3)}),
                KC_INVALID_ARGUMENT, "t.add: expected 2 arguments, got 3");

  KC_CHECK(call_float("t.f32", {kc_any_float(0.5)}) == 0.5);
  KC_CHECK(call_float("t.f32", {kc_any_int(7)}) == 7.0);
  KC_CHECK_CODE(fails("t.f32", {kc_any_float(1e300)}), KC_OUT_OF_RANGE,
                "t.f32: argument 0: expected a float within f32 range",
                "got 1e+300");
  KC_CHECK_CODE(fails("t.f32", {kc_any_float(-1e39)}), KC_OUT_OF_RANGE,
                "got -1e+39");
  KC_CHECK(std::isinf(call_float("t.f32", {kc_any_float(-INFINITY)})));
  KC_CHECK(std::isnan(call_float("t.f32", {kc_any_float(NAN)})));

  kc_any ret = kc_any_none();
  KC_CHECK_OK(call("t.not", {kc_any_bool(false)}, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_BOOL && ret.u.v_int64 == 1);
  KC_CHECK_OK(call("t.not", {kc_any_int(5)}, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_BOOL && ret.u.v_int64 == 0);
  KC_CHECK_CODE(fails("t.not", {kc_any_none()}), KC_INVALID_ARGUMENT,
                "t.not: argument 0: expected bool, got none");
}

KC_TEST(typed_cpp_string_parameters) {
  host_table();
  kcall::register_func("t.view", [](std::string_view s) {
    return std::string(s.rbegin(), s.rend());
  });
  kcall::register_func("t.copy", [](const std::string& s, std::string t) {
    return s + "+" + t;
  });
  kc_str* object = nullptr;
  KC_CHECK_OK(kc_str_create(kt_alloc(), KC_SV_LIT("a string object"), &object));
  kc_any small = kc_any_none();
  KC_CHECK_OK(kc_any_from_string(nullptr, KC_SV_LIT("abc"), &small));

  KC_CHECK(call_str("t.view", {kc_any_cstr("raw text")}) == "txet war");
  KC_CHECK(call_str("t.view", {small}) == "cba");
  KC_CHECK(call_str("t.view", {kc_any_object(KC_OBJECT(object))}) ==
           "tcejbo gnirts a");
  KC_CHECK(call_str("t.copy", {small, kc_any_object(KC_OBJECT(object))}) ==
           "abc+a string object");
  KC_CHECK_CODE(fails("t.view", {kc_any_int(3)}), KC_INVALID_ARGUMENT,
                "t.view: argument 0: expected str, got int");
  KC_CHECK_CODE(fails("t.copy", {small, kc_any_cstr(nullptr)}),
                KC_INVALID_ARGUMENT, "t.copy: argument 1: expected str, got str");
  KC_CHECK_INT(refs(object), 1);
  kc_object_release(KC_OBJECT(object));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(typed_cpp_tensor_parameters) {
  host_table();
  kcall::register_func("t.sum", [](kcall::Tensor t) {
    double s = 0;
    const float* x = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) s += x[i];
    return s;
  });
  kcall::register_func("t.rank", [](DLTensor* t, const DLTensor* u) {
    return t->ndim * 10 + u->ndim;
  });
  kcall::register_func("t.keep", [](kcall::TensorObject t) {
    return t;  // handed back: the caller gets a reference of its own
  });
  kc_tensor* t = make_tensor(kcall::dtype_of<float>(), {2, 2});
  float* data = static_cast<float*>(kc_tensor_get_dltensor(t)->data);
  for (int i = 0; i < 4; ++i) data[i] = static_cast<float>(i) + 0.5f;
  DLTensor borrowed = *kc_tensor_get_dltensor(t);

  KC_CHECK(call_float("t.sum", {kc_any_object(KC_OBJECT(t))}) == 8.0);
  KC_CHECK(call_float("t.sum", {kc_any_dltensor(&borrowed)}) == 8.0);
  KC_CHECK_INT(call_int("t.rank", {kc_any_dltensor(&borrowed),
                                   kc_any_object(KC_OBJECT(t))}),
               22);
  KC_CHECK_CODE(fails("t.rank", {kc_any_dltensor(nullptr), kc_any_none()}),
                KC_INVALID_ARGUMENT,
                "t.rank: argument 0: expected tensor, got a NULL tensor");
  KC_CHECK_CODE(fails("t.sum", {kc_any_cstr("x")}), KC_INVALID_ARGUMENT,
                "t.sum: argument 0: expected tensor, got str");
  // kcall::Tensor checks the dtype the body reads as: the body's error
  // gets the function's name as context.
  kc_tensor* i64 = make_tensor(kcall::dtype_of<int64_t>(), {1});
  KC_CHECK_CODE(fails("t.sum", {kc_any_object(KC_OBJECT(i64))}),
                KC_INVALID_ARGUMENT,
                "t.sum: expected a tensor of f32, got one of i64");

  kc_any ret = kc_any_none();
  KC_CHECK_OK(call("t.keep", {kc_any_object(KC_OBJECT(t))}, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_TENSOR && ret.u.v_obj == KC_OBJECT(t));
  KC_CHECK_INT(refs(t), 2);
  kc_any_release(&ret);
  KC_CHECK_INT(refs(t), 1);
  KC_CHECK_CODE(fails("t.keep", {kc_any_dltensor(&borrowed)}),
                KC_INVALID_ARGUMENT,
                "t.keep: argument 0: expected a tensor object, got a "
                "borrowed DLTensor");
  kc_object_release(KC_OBJECT(t));
  kc_object_release(KC_OBJECT(i64));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(typed_cpp_function_parameters) {
  host_table();
  // A function received as an argument, called with C++ values.
  kcall::register_func("t.twice", [](kcall::Function f, int64_t x) {
    return f(f(x).as<int64_t>());
  });
  kcall::register_func("t.raw", [](kc_func* f, int64_t x) {
    return kcall::call(f, x).as<int64_t>() + 1;  // no reference taken
  });
  kc_func* ten = nullptr;
  KC_CHECK_OK(kc_func_create(kt_alloc(), times_ten, nullptr, nullptr, &ten));
  KC_CHECK_INT(call_int("t.twice", {kc_any_object(KC_OBJECT(ten)), kc_any_int(3)}),
               300);
  KC_CHECK_INT(call_int("t.raw", {kc_any_object(KC_OBJECT(ten)), kc_any_int(3)}),
               31);
  KC_CHECK_CODE(fails("t.raw", {kc_any_object(KC_OBJECT(ten)), kc_any_none()}),
                KC_INVALID_ARGUMENT, "t.raw: argument 1: expected int, got none");
  KC_CHECK_INT(refs(ten), 1);
  KC_CHECK_CODE(fails("t.twice", {kc_any_cstr("c.times_ten"), kc_any_int(3)}),
                KC_INVALID_ARGUMENT,
                "t.twice: argument 0: expected function, got str");
  // The inner function's error keeps its message; the typed function that
  // called it adds its name.
  KC_CHECK_CODE(fails("t.twice", {kc_any_object(KC_OBJECT(lookup("t.twice"))),
                                  kc_any_int(1)}),
                KC_INVALID_ARGUMENT,
                "t.twice: t.twice: expected 2 arguments, got 1");
  kc_object_release(KC_OBJECT(ten));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(typed_cpp_other_parameters) {
  host_table();
  kcall::register_func("t.opaque", [](void* p) { return p == nullptr ? 0 : 1; });
  kcall::register_func("t.dtype", [](DLDataType t, DLDevice d) {
    return t.bits * 100 + d.device_id;
  });
  kcall::register_func("t.shape", [](std::vector<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  });
  kcall::register_func("t.names", [](const std::vector<std::string>& names) {
    std::string all;
    for (const std::string& n : names) all += n;
    return all;
  });
  kcall::register_func("t.kind", [](const kc_any& v) {
    return std::string(kc_type_name(v.type_index));
  });
  kcall::register_func("t.any", [](kcall::Any v) { return v; });

  int marker = 0;
  KC_CHECK_INT(call_int("t.opaque", {kc_any_opaque(&marker)}), 1);
  KC_CHECK_INT(call_int("t.opaque", {kc_any_none()}), 0);
  KC_CHECK_CODE(fails("t.opaque", {kc_any_int(0)}), KC_INVALID_ARGUMENT,
                "t.opaque: argument 0: expected opaque_ptr, got int");
  DLDevice dev{kDLCUDA, 3};
  KC_CHECK_INT(call_int("t.dtype", {kc_any_dtype(kcall::dtype_of<double>()),
                                    kc_any_device(dev)}),
               6403);
  KC_CHECK_CODE(fails("t.dtype", {kc_any_cstr("f32"), kc_any_device(dev)}),
                KC_INVALID_ARGUMENT, "t.dtype: argument 0: expected dtype, got str");
  KC_CHECK_CODE(fails("t.dtype", {kc_any_dtype(kcall::dtype_of<float>()),
                                  kc_any_int(0)}),
                KC_INVALID_ARGUMENT, "argument 1: expected device, got int");

  kc_any dims[] = {kc_any_int(2), kc_any_int(3), kc_any_int(4)};
  kc_array* array = nullptr;
  KC_CHECK_OK(kc_array_create(kt_alloc(), dims, 3, &array));
  KC_CHECK_INT(call_int("t.shape", {kc_any_object(KC_OBJECT(array))}), 24);
  KC_CHECK_CODE(fails("t.shape", {kc_any_int(2)}), KC_INVALID_ARGUMENT,
                "t.shape: argument 0: expected array, got int");
  kc_any mixed[] = {kc_any_int(2), kc_any_float(3.5)};
  kc_array* bad = nullptr;
  KC_CHECK_OK(kc_array_create(kt_alloc(), mixed, 2, &bad));
  KC_CHECK_CODE(fails("t.shape", {kc_any_object(KC_OBJECT(bad))}),
                KC_INVALID_ARGUMENT,
                "t.shape: argument 0: item 1: expected int, got float");
  kc_any words[2];
  KC_CHECK_OK(kc_any_from_string(kt_alloc(), KC_SV_LIT("ab"), &words[0]));
  KC_CHECK_OK(kc_any_from_string(kt_alloc(), KC_SV_LIT("a longer word"), &words[1]));
  kc_array* names = nullptr;
  KC_CHECK_OK(kc_array_create(kt_alloc(), words, 2, &names));
  kc_any_release(&words[1]);
  KC_CHECK(call_str("t.names", {kc_any_object(KC_OBJECT(names))}) ==
           "aba longer word");

  KC_CHECK(call_str("t.kind", {kc_any_dtype(kcall::dtype_of<float>())}) == "dtype");
  KC_CHECK(call_str("t.kind", {kc_any_none()}) == "none");
  // kcall::Any: an owned copy; a borrowed C string is copied so that it can
  // be returned.
  KC_CHECK(call_str("t.any", {kc_any_cstr("borrowed text")}) == "borrowed text");
  kc_any ret = kc_any_none();
  KC_CHECK_OK(call("t.any", {kc_any_object(KC_OBJECT(array))}, &ret));
  KC_CHECK(ret.u.v_obj == KC_OBJECT(array));
  KC_CHECK_INT(refs(array), 2);
  kc_any_release(&ret);
  kc_tensor* t = make_tensor(kcall::dtype_of<float>(), {1});
  DLTensor borrowed = *kc_tensor_get_dltensor(t);
  KC_CHECK_CODE(fails("t.any", {kc_any_dltensor(&borrowed)}),
                KC_INVALID_ARGUMENT,
                "t.any: result: a borrowed tensor cannot be returned");

  kc_object_release(KC_OBJECT(array));
  kc_object_release(KC_OBJECT(bad));
  kc_object_release(KC_OBJECT(names));
  kc_object_release(KC_OBJECT(t));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(typed_cpp_optional_and_defaults) {
  host_table();
  kcall::register_func("t.greet", [](std::string_view name,
                                     std::optional<int64_t> times,
                                     std::optional<std::string> sep) {
    std::string out;
    for (int64_t i = 0; i < times.value_or(1); ++i) {
      if (i) out += sep.value_or(" ");
      out += name;
    }
    return out;
  });
  // Optional in the middle: none is accepted, leaving it out is not.
  kcall::register_func("t.mid", [](std::optional<double> x, int64_t y) {
    return x ? *x + static_cast<double>(y) : -1.0;
  });

  KC_CHECK(call_str("t.greet", {kc_any_cstr("hi")}) == "hi");
  KC_CHECK(call_str("t.greet", {kc_any_cstr("hi"), kc_any_int(3)}) == "hi hi hi");
  KC_CHECK(call_str("t.greet", {kc_any_cstr("hi"), kc_any_int(2),
                                kc_any_cstr(", ")}) == "hi, hi");
  KC_CHECK(call_str("t.greet", {kc_any_cstr("hi"), kc_any_none(),
                                kc_any_cstr("-")}) == "hi");
  KC_CHECK_CODE(fails("t.greet", {}), KC_INVALID_ARGUMENT,
                "t.greet: expected 1 to 3 arguments, got 0");
  KC_CHECK_CODE(fails("t.greet", {kc_any_cstr("a"), kc_any_int(1),
                                  kc_any_cstr("b"), kc_any_int(0)}),
                KC_INVALID_ARGUMENT, "expected 1 to 3 arguments, got 4");
  KC_CHECK_CODE(fails("t.greet", {kc_any_cstr("hi"), kc_any_cstr("3")}),
                KC_INVALID_ARGUMENT, "t.greet: argument 1: expected int, got str");

  KC_CHECK(call_float("t.mid", {kc_any_float(0.5), kc_any_int(2)}) == 2.5);
  KC_CHECK(call_float("t.mid", {kc_any_none(), kc_any_int(2)}) == -1.0);
  KC_CHECK_CODE(fails("t.mid", {kc_any_int(2)}), KC_INVALID_ARGUMENT,
                "t.mid: expected 2 arguments, got 1");
}

KC_TEST(typed_cpp_results) {
  host_table();
  kcall::register_func("t.void", [](int64_t) {});
  kcall::register_func("t.short", [] { return std::string("tiny"); });
  kcall::register_func("t.long", [] { return std::string_view("longer than seven"); });
  kcall::register_func("t.cstr", [](bool give) -> const char* {
    return give ? "text" : nullptr;
  });
  kcall::register_func("t.u64", [](int64_t x) {
    return static_cast<uint64_t>(x) * 2u;
  });
  kcall::register_func("t.f32", [] { return 0.25f; });
  kcall::register_func("t.list", [] { return std::vector<double>{1.5, -2}; });
  kcall::register_func("t.words", [] {
    return std::vector<std::string>{"a", "much longer word"};
  });
  kcall::register_func("t.dtype", [] { return kcall::dtype_of<int16_t>(); });
  kcall::register_func("t.device", [] { return DLDevice{kDLCUDA, 1}; });
  kcall::register_func("t.ptr", [](void* p) { return p; });
  kcall::register_func("t.maybe", [](bool give) {
    return give ? std::optional<int32_t>(7) : std::nullopt;
  });
  kcall::register_func("t.tensor", [](int64_t n) {
    kcall::TensorObject t =
        kcall::TensorObject::empty({n}, kcall::dtype_of<int32_t>());
    int32_t* d = t.view().mutable_data<int32_t>();
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<int32_t>(i * i);
    return t;
  });

  kc_any ret = kc_any_int(5);
  KC_CHECK_OK(call("t.void", {kc_any_int(1)}, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);
  KC_CHECK_OK(call("t.short", {}, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_SMALL_STR);
  KC_CHECK(call_str("t.short", {}) == "tiny");
  KC_CHECK_OK(call("t.long", {}, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_STR);
  kc_any_release(&ret);
  KC_CHECK(call_str("t.long", {}) == "longer than seven");
  KC_CHECK(call_str("t.cstr", {kc_any_bool(true)}) == "text");
  KC_CHECK_OK(call("t.cstr", {kc_any_bool(false)}, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);

  KC_CHECK_INT(call_int("t.u64", {kc_any_int(21)}), 42);
  KC_CHECK_CODE(fails("t.u64", {kc_any_int(INT64_MAX)}), KC_OUT_OF_RANGE,
                "t.u64: result: expected an int in [-9223372036854775808, "
                "9223372036854775807], got 18446744073709551614");
  KC_CHECK(call_float("t.f32", {}) == 0.25);

  KC_CHECK_OK(call("t.list", {}, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_ARRAY);
  {
    const kc_array* a = reinterpret_cast<const kc_array*>(ret.u.v_obj);
    KC_CHECK_INT(kc_array_get_size(a), 2);
    KC_CHECK(kc_array_get_item(a, 0)->u.v_float64 == 1.5);
    KC_CHECK(kc_array_get_item(a, 1)->u.v_float64 == -2.0);
  }
  kc_any_release(&ret);
  KC_CHECK_OK(call("t.words", {}, &ret));
  {
    const kc_array* a = reinterpret_cast<const kc_array*>(ret.u.v_obj);
    kc_string_view v{nullptr, 0};
    KC_CHECK(kc_any_get_string(kc_array_get_item(a, 1), &v));
    KC_CHECK(kt_sv_is(v, "much longer word"));
    KC_CHECK_INT(refs(kc_array_get_item(a, 1)->u.v_obj), 1);
  }
  kc_any_release(&ret);

  KC_CHECK_OK(call("t.dtype", {}, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_DTYPE &&
           kc_dtype_equal(ret.u.v_dtype, kc_dtype_make(kDLInt, 16, 1)));
  KC_CHECK_OK(call("t.device", {}, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_DEVICE && ret.u.v_device.device_id == 1);
  int marker = 0;
  KC_CHECK_OK(call("t.ptr", {kc_any_opaque(&marker)}, &ret));
  KC_CHECK(ret.type_index == KC_TYPE_OPAQUE_PTR && ret.u.v_ptr == &marker);
  KC_CHECK_INT(call_int("t.maybe", {kc_any_bool(true)}), 7);
  KC_CHECK_OK(call("t.maybe", {kc_any_bool(false)}, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_NONE);

  KC_CHECK_OK(call("t.tensor", {kc_any_int(4)}, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_TENSOR);
  KC_CHECK_INT(refs(ret.u.v_obj), 1);
  {
    const DLTensor* t = kc_tensor_get_dltensor(
        reinterpret_cast<const kc_tensor*>(ret.u.v_obj));
    KC_CHECK_INT(t->shape[0], 4);
    KC_CHECK_INT(static_cast<const int32_t*>(t->data)[3], 9);
  }
  kc_any_release(&ret);
  KC_CHECK_CODE(fails("t.tensor", {kc_any_int(-1)}), KC_INVALID_ARGUMENT,
                "t.tensor: ");
}

KC_TEST(typed_cpp_exceptions_become_statuses) {
  host_table();
  kcall::register_func("t.div", [](int64_t a, int64_t b) {
    if (b == 0) throw kcall::Error(KC_INVALID_ARGUMENT, "b must not be 0");
    return a / b;
  });
  kcall::register_func("t.throw", [](int64_t kind) -> int64_t {
    switch (kind) {
      case 0: throw std::invalid_argument("bad input");
      case 1: throw std::out_of_range("index 9 of 3");
      case 2: throw std::runtime_error("it broke");
      case 3: throw std::bad_alloc();
      default: throw 42;
    }
  });
  KC_CHECK_INT(call_int("t.div", {kc_any_int(7), kc_any_int(2)}), 3);
  kc_status* st = fails("t.div", {kc_any_int(7), kc_any_int(0)});
  KC_CHECK_STR(kc_status_get_message(st), "b must not be 0");
  KC_CHECK_INT(kc_status_get_context_count(st), 1);
  KC_CHECK_STR(kc_status_get_context(st, 0), "t.div");
  KC_CHECK_CODE(st, KC_INVALID_ARGUMENT, "INVALID_ARGUMENT: t.div: b must not be 0");

  KC_CHECK_CODE(fails("t.throw", {kc_any_int(0)}), KC_INVALID_ARGUMENT,
                "t.throw: bad input");
  KC_CHECK_CODE(fails("t.throw", {kc_any_int(1)}), KC_OUT_OF_RANGE,
                "t.throw: index 9 of 3");
  KC_CHECK_CODE(fails("t.throw", {kc_any_int(2)}), KC_INTERNAL,
                "t.throw: C++ exception: it broke");
  KC_CHECK_CODE(fails("t.throw", {kc_any_int(3)}), KC_RESOURCE_EXHAUSTED,
                "t.throw: out of memory");
  KC_CHECK_CODE(fails("t.throw", {kc_any_int(4)}), KC_INTERNAL,
                "t.throw: unknown C++ exception");

  // guard, shared with kernels and inits, maps the same way.
  KC_CHECK_CODE(kcall::guard([] { throw std::invalid_argument("no"); }),
                KC_INVALID_ARGUMENT, "no");
  KC_CHECK(kcall::guard([] {}) == nullptr);
}

KC_TEST(typed_cpp_registration) {
  host_table();
  kcall::register_func("t.sub", plain_sub);  // a function
  kcall::register_func("t.half", &noexcept_half);
  kcall::register_func("t.std", std::function<int64_t(int64_t)>(
                                    [](int64_t x) { return -x; }));
  int64_t calls = 0;
  kcall::register_func("t.count", [calls]() mutable { return ++calls; });
  KC_CHECK_INT(call_int("t.sub", {kc_any_int(5), kc_any_int(7)}), -2);
  KC_CHECK(call_float("t.half", {kc_any_int(5)}) == 2.5);
  KC_CHECK_INT(call_int("t.std", {kc_any_int(5)}), -5);
  KC_CHECK_INT(call_int("t.count", {}), 1);
  KC_CHECK_INT(call_int("t.count", {}), 2);

  // A taken name, unless overriding; a malformed one.
  KT_CHECK_THROWS(kcall::register_func("t.sub", [](int64_t a) { return a; }),
                  KC_ALREADY_EXISTS, "t.sub");
  KC_CHECK_INT(call_int("t.sub", {kc_any_int(5), kc_any_int(7)}), -2);
  kcall::register_func("t.sub", [](int64_t a) { return a * 100; },
                       KC_REGISTER_OVERRIDE);
  KC_CHECK_INT(call_int("t.sub", {kc_any_int(5)}), 500);
  KT_CHECK_THROWS(kcall::register_func("not a name", [] {}),
                  KC_INVALID_ARGUMENT, "'not a name'");

  // A Function already made registers as it is, under any number of names.
  kcall::Function neg = kcall::Function::get_global("t.std");
  kcall::register_func("t.neg", neg);
  KC_CHECK(lookup("t.neg") == lookup("t.std"));

  // The callable and its state live as long as the function object.
  {
    Probe probe;
    kcall::register_func("t.probe", [probe](int64_t x) { return x; });
  }
  KC_CHECK(Probe::live.load() >= 1);
  kc_func_registry_reset();
  KC_CHECK_INT(Probe::live.load(), 0);
}

KC_TEST(typed_cpp_function_handle) {
  host_table();
  kcall::register_func("t.concat", [](std::string_view a, std::string_view b) {
    return std::string(a) + std::string(b);
  });
  kcall::register_func("t.kinds", [](const kc_any& a, const kc_any& b,
                                     const kc_any& c, const kc_any& d) {
    return std::string(kc_type_name(a.type_index)) + " " +
           kc_type_name(b.type_index) + " " + kc_type_name(c.type_index) +
           " " + kc_type_name(d.type_index);
  });
  kcall::Function concat = kcall::Function::get_global("t.concat");
  KC_CHECK(static_cast<bool>(concat));
  KC_CHECK_INT(refs(concat.get()), 2);  // the registry's and this handle's
  {
    kcall::Function copy = concat;
    KC_CHECK_INT(refs(concat.get()), 3);
    kcall::Function moved = std::move(copy);
    KC_CHECK_INT(refs(concat.get()), 3);
    KC_CHECK(!copy);
  }
  KC_CHECK_INT(refs(concat.get()), 2);

  // Strings of every C++ kind: borrowed where they end in a NUL.
  std::string with_nul("a\0b", 3);
  KC_CHECK(concat("ab", std::string("cd")).as<std::string>() == "abcd");
  KC_CHECK(concat(std::string_view("a longer view, not NUL-ended", 6),
                  with_nul).as<std::string>() == std::string("a long") + with_nul);
  kcall::Any kinds = kcall::Function::get_global("t.kinds")(
      int8_t{1}, nullptr, std::optional<double>(2.0), std::vector<int64_t>{1});
  KC_CHECK(kinds.as<std::string>() == "int none float array");

  // A lambda passed as an argument becomes a function for the call.
  kcall::register_func("t.apply", [](kcall::Function f, int64_t x) {
    return f(x);
  });
  kcall::Any r = kcall::Function::get_global("t.apply")(
      [](int64_t x) { return x * x; }, 9);
  KC_CHECK_INT(r.as<int64_t>(), 81);

  // Errors: the callee's status, thrown.
  KT_CHECK_THROWS(concat(1, 2), KC_INVALID_ARGUMENT,
                  "t.concat: argument 0: expected str, got int");
  // An argument that cannot be packed: nothing is called, and what was
  // packed before it (a string object) is released.
  KT_CHECK_THROWS(concat(std::string_view("longer than seven bytes"),
                         std::numeric_limits<uint64_t>::max()),
                  KC_OUT_OF_RANGE,
                  "calling a function: argument 1: expected an int in "
                  "[-9223372036854775808, 9223372036854775807], got "
                  "18446744073709551615");
  KT_CHECK_THROWS(kcall::Function::get_global("t.concot"), KC_NOT_FOUND,
                  "did you mean 't.concat'");
  KT_CHECK_THROWS(kcall::Function().call_packed(nullptr, 0),
                  KC_INVALID_ARGUMENT, "");

  // A closure made with Function::from, returned by a typed function.
  kcall::register_func("t.adder", [](int64_t n) {
    return kcall::Function::from([n](int64_t x) { return x + n; }, "t.adder.fn");
  });
  kcall::Any adder = kcall::Function::get_global("t.adder")(10);
  KC_CHECK_STR(adder.type_name(), "function");
  kcall::Function add10 = adder.as<kcall::Function>();
  KC_CHECK_INT(add10(5).as<int64_t>(), 15);
  KT_CHECK_THROWS(add10("x"), KC_INVALID_ARGUMENT,
                  "t.adder.fn: argument 0: expected int, got str");
}

KC_TEST(typed_cpp_any) {
  host_table();
  kcall::Any none;
  KC_CHECK(none.is_none());
  KC_CHECK_STR(none.type_name(), "none");
  kcall::Any i(int64_t{5});
  KC_CHECK_INT(i.as<int32_t>(), 5);
  KC_CHECK(i.as<double>() == 5.0);
  KT_CHECK_THROWS(i.as<std::string>(), KC_INVALID_ARGUMENT,
                  "kcall::Any: expected str, got int");
  KT_CHECK_THROWS(kcall::Any(int64_t{300}).as<uint8_t>(), KC_OUT_OF_RANGE,
                  "kcall::Any: expected an int in [0, 255], got 300");

  kcall::Any s(std::string("a string of some length"));
  KC_CHECK_INT(s.type_index(), KC_TYPE_STR);
  const kc_object* obj = s.raw().u.v_obj;
  KC_CHECK_INT(refs(obj), 1);
  {
    kcall::Any copy = s;
    KC_CHECK_INT(refs(obj), 2);
    kcall::Any moved = std::move(copy);
    KC_CHECK_INT(refs(obj), 2);
    KC_CHECK(copy.is_none());
  }
  KC_CHECK_INT(refs(obj), 1);
  KC_CHECK(s.as<std::string_view>() == "a string of some length");

  // borrow copies a borrowed C string and takes a reference to an object.
  char text[] = "changes later";
  kcall::Any b = kcall::Any::borrow(kc_any_cstr(text));
  text[0] = 'X';
  KC_CHECK(b.as<std::string>() == "changes later");
  kcall::Any b2 = kcall::Any::borrow(s.raw());
  KC_CHECK_INT(refs(obj), 2);
  kc_any owned = b2.release();
  KC_CHECK(b2.is_none());
  KC_CHECK_INT(refs(obj), 2);
  kcall::Any back = kcall::Any::adopt(owned);
  KC_CHECK_INT(refs(obj), 2);

  kcall::Any list(std::vector<std::string>{"x", "yy"});
  std::vector<std::string> items = list.as<std::vector<std::string>>();
  KC_CHECK_INT(items.size(), 2);
  KC_CHECK(items[1] == "yy");
}

KC_TEST(typed_cpp_tensor_object) {
  host_table();
  kcall::TensorObject t =
      kcall::TensorObject::empty({2, 3}, kcall::dtype_of<double>());
  KC_CHECK(static_cast<bool>(t));
  KC_CHECK_INT(t.dltensor()->ndim, 2);
  KC_CHECK_INT(t.view().numel(), 6);
  KC_CHECK_INT(refs(t.get()), 1);
  kcall::TensorObject u = t;
  KC_CHECK_INT(refs(t.get()), 2);
  kcall::Any a(u);
  KC_CHECK_INT(refs(t.get()), 3);
  KC_CHECK(a.as<kcall::TensorObject>().get() == t.get());
  KC_CHECK(a.as<kcall::Tensor>().raw() == t.dltensor());
  KT_CHECK_THROWS(kcall::TensorObject::empty({-1}, kcall::dtype_of<float>()),
                  KC_INVALID_ARGUMENT, "dimension 0");
}

// dtype_name names dtypes as kc_dtype_format does; is_compact tells a
// row-major layout from a strided one.
KC_TEST(typed_cpp_dtype_name_and_compact) {
  host_table();
  const DLDataType kinds[] = {
      kcall::dtype_of<float>(),         kcall::dtype_of<int64_t>(),
      kcall::dtype_of<uint8_t>(),       kcall::dtype_of<bool>(),
      kc_dtype_make(kDLBfloat, 16, 1),  kc_dtype_make(kDLComplex, 128, 1),
      kc_dtype_make(kDLFloat, 32, 4),   kc_dtype_make(kDLOpaqueHandle, 64, 1)};
  for (DLDataType t : kinds) {
    char want[64];
    kc_dtype_format(t, want, sizeof want);
    KC_CHECK_STR(kcall::dtype_name(t).c_str(), want);
  }
  KC_CHECK_STR(kcall::dtype_name(kc_dtype_make(kDLFloat8_e5m2, 8, 1)).c_str(),
               "dtype(code=12,bits=8,lanes=1)");

  int64_t shape[] = {2, 1, 3};
  int64_t row_major[] = {3, 99, 1};  // the extent-1 dim's stride is free
  int64_t column_major[] = {1, 2, 2};
  float data[6] = {};
  DLTensor t{data, {kDLCPU, 0}, 3, kcall::dtype_of<float>(), shape, nullptr, 0};
  KC_CHECK(kcall::Tensor(&t).is_compact());
  t.strides = row_major;
  KC_CHECK(kcall::Tensor(&t).is_compact());
  t.strides = column_major;
  KC_CHECK(!kcall::Tensor(&t).is_compact());
}

// Many threads call one typed function that calls another: no shared state
// but the function objects' reference counts.
KC_TEST(typed_cpp_concurrent_calls) {
  host_table();
  kcall::register_func("t.square", [](int64_t x) { return x * x; });
  kcall::register_func("t.sum_squares", [](kcall::Function sq, int64_t n) {
    int64_t s = 0;
    for (int64_t i = 0; i < n; ++i) s += sq(i).as<int64_t>();
    return s;
  });
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&wrong] {
      kcall::Function f = kcall::Function::get_global("t.sum_squares");
      kcall::Function sq = kcall::Function::get_global("t.square");
      for (int k = 0; k < 200; ++k) {
        if (f(sq, 10).as<int64_t>() != 285) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  KC_CHECK_INT(wrong.load(), 0);
  KC_CHECK_INT(refs(lookup("t.square")), 1);
}
