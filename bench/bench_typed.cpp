// What typed registration costs per call, next to the same functions
// written by hand with the host-table readers of abi.h (the baseline), in
// one run:
//   - add(int64, int64) -> int64: by hand, with KC_TYPED_FUNC (typed.h),
//     with kcall::register_func (kcall.hpp);
//   - len(str) -> int64 on a short (inline) string: by hand and typed C++;
//   - apply(function, int64): typed C++ taking a borrowed kc_func* and
//     calling it with kc_func_call by hand (the baseline) or kcall::call,
//     or taking a kcall::Function (a reference taken and dropped per call);
//   - calling add from C++ through kcall::Function's call operator, which
//     packs the arguments and returns a kcall::Any, next to kc_func_call.
// Every call goes through kc_func_call, as a host or binding calls.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "kcall/kcall.h"
#include "kcall/kcall.hpp"
#include "kcall/typed.h"

extern "C" {
#include "bench_util.h"
}

namespace {

volatile int64_t sink;

kc_status* add_by_hand(void* self, const kc_any* args, int32_t nargs,
                       kc_any* ret) {
  const kc_host_api* host = static_cast<const kc_host_api*>(self);
  int64_t a = 0, b = 0;
  kc_status* st = kc_host_args_check_count(host, "bench.add", nargs, 2, 2);
  if (!st) st = kc_host_args_get_int(host, "bench.add", args, nargs, 0, &a);
  if (!st) st = kc_host_args_get_int(host, "bench.add", args, nargs, 1, &b);
  if (st) return st;
  *ret = kc_any_int(a + b);
  return nullptr;
}

kc_status* len_by_hand(void* self, const kc_any* args, int32_t nargs,
                       kc_any* ret) {
  const kc_host_api* host = static_cast<const kc_host_api*>(self);
  kc_string_view s{nullptr, 0};
  kc_status* st = kc_host_args_check_count(host, "bench.len", nargs, 1, 1);
  if (!st) st = kc_host_args_get_string(host, "bench.len", args, nargs, 0, &s);
  if (st) return st;
  *ret = kc_any_int(static_cast<int64_t>(s.size));
  return nullptr;
}

int64_t add_c(int64_t a, int64_t b) { return a + b; }
KC_TYPED_FUNC(add_typed_c, "bench.add_c", int, add_c, int, int)

kc_status* identity(void*, const kc_any* args, int32_t, kc_any* ret) {
  *ret = args[0];
  return nullptr;
}

struct Ctx {
  kc_func* f;
  kc_any args[2];
  kcall::Function fn;
};

void run_call(void* p, int64_t iters) {
  Ctx* c = static_cast<Ctx*>(p);
  int64_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    c->args[0] = kc_any_int(i);
    kc_any ret;
    if (kc_func_call(c->f, c->args, 2, &ret)) std::abort();
    acc += ret.u.v_int64;
  }
  sink = acc;
}

void run_call1(void* p, int64_t iters) {
  Ctx* c = static_cast<Ctx*>(p);
  int64_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    kc_any ret;
    if (kc_func_call(c->f, c->args, 1, &ret)) std::abort();
    acc += ret.u.v_int64;
  }
  sink = acc;
}

void run_apply(void* p, int64_t iters) {
  Ctx* c = static_cast<Ctx*>(p);
  int64_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    c->args[1] = kc_any_int(i);
    kc_any ret;
    if (kc_func_call(c->f, c->args, 2, &ret)) std::abort();
    acc += ret.u.v_int64;
  }
  sink = acc;
}

void run_cpp_call(void* p, int64_t iters) {
  Ctx* c = static_cast<Ctx*>(p);
  int64_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    acc += c->fn(i, int64_t{1}).as<int64_t>();
  }
  sink = acc;
}

kc_func* make(kc_packed_fn fn, const kc_host_api* host) {
  kc_func* f = nullptr;
  if (kc_func_create(nullptr, fn, const_cast<kc_host_api*>(host), nullptr, &f)) {
    std::abort();
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const kc_host_api* host = kc_plugin_get_host_api();
  kcall::set_host(host);
  const int64_t iters = 10 * 1000 * 1000;
  const int trials = 7;

  kcall::Function add_cpp = kcall::Function::from(
      [](int64_t a, int64_t b) { return a + b; }, "bench.add_cpp");
  kcall::Function len_cpp = kcall::Function::from(
      [](std::string_view s) { return static_cast<int64_t>(s.size()); },
      "bench.len_cpp");
  kcall::Function apply_fn = kcall::Function::from(
      [](kcall::Function f, int64_t x) { return f(x).as<int64_t>(); },
      "bench.apply_fn");
  kcall::Function apply_raw = kcall::Function::from(
      [](kc_func* f, int64_t x) {
        kc_any arg = kc_any_int(x);
        kc_any ret;
        kcall::check(kc_func_call(f, &arg, 1, &ret));
        return ret.u.v_int64;
      },
      "bench.apply_raw");
  kcall::Function apply_call = kcall::Function::from(
      [](kc_func* f, int64_t x) { return kcall::call(f, x).as<int64_t>(); },
      "bench.apply_call");
  kc_func* add_hand = make(add_by_hand, host);
  kc_func* add_c_fn = make(add_typed_c, host);
  kc_func* len_hand = make(len_by_hand, host);
  kc_func* id = make(identity, host);

  Ctx c_hand{add_hand, {kc_any_int(0), kc_any_int(1)}, {}};
  Ctx c_typed_c{add_c_fn, {kc_any_int(0), kc_any_int(1)}, {}};
  Ctx c_cpp{add_cpp.get(), {kc_any_int(0), kc_any_int(1)}, {}};
  Ctx c_cpp_op{nullptr, {}, kcall::Function::borrow(add_hand)};
  kc_any word = kc_any_none();
  if (kc_any_from_string(nullptr, KC_SV_LIT("seven!"), &word)) std::abort();
  Ctx c_len_hand{len_hand, {word, kc_any_none()}, {}};
  Ctx c_len_cpp{len_cpp.get(), {word, kc_any_none()}, {}};
  Ctx c_apply_fn{apply_fn.get(), {kc_any_object(KC_OBJECT(id)), kc_any_int(0)}, {}};
  Ctx c_apply_raw{apply_raw.get(), {kc_any_object(KC_OBJECT(id)), kc_any_int(0)}, {}};
  Ctx c_apply_call{apply_call.get(), {kc_any_object(KC_OBJECT(id)), kc_any_int(0)}, {}};

  double hand = kb_time_per_iter(run_call, &c_hand, iters, trials);
  double typed_c = kb_time_per_iter(run_call, &c_typed_c, iters, trials);
  double typed_cpp = kb_time_per_iter(run_call, &c_cpp, iters, trials);
  double cpp_op = kb_time_per_iter(run_cpp_call, &c_cpp_op, iters, trials);
  double len_h = kb_time_per_iter(run_call1, &c_len_hand, iters, trials);
  double len_c = kb_time_per_iter(run_call1, &c_len_cpp, iters, trials);
  // apply(f, x) calls f(x); f is a C function that hands x back.
  double apply_f = kb_time_per_iter(run_apply, &c_apply_fn, iters, trials);
  double apply_r = kb_time_per_iter(run_apply, &c_apply_raw, iters, trials);
  double apply_c = kb_time_per_iter(run_apply, &c_apply_call, iters, trials);

  kb_report r = {};
  r.name = "typed_call";
  kb_report_add(&r, "add_by_hand_ns", hand);
  kb_report_add(&r, "add_typed_c_ns", typed_c);
  kb_report_add(&r, "add_typed_c_ratio_to_by_hand", typed_c / hand);
  kb_report_add(&r, "add_typed_cpp_ns", typed_cpp);
  kb_report_add(&r, "add_typed_cpp_ratio_to_by_hand", typed_cpp / hand);
  kb_report_add(&r, "add_called_with_cpp_function_ns", cpp_op);
  kb_report_add(&r, "add_called_with_cpp_function_ratio_to_by_hand",
                cpp_op / hand);
  kb_report_add(&r, "len_small_str_by_hand_ns", len_h);
  kb_report_add(&r, "len_small_str_typed_cpp_ns", len_c);
  kb_report_add(&r, "len_small_str_typed_cpp_ratio_to_by_hand", len_c / len_h);
  kb_report_add(&r, "apply_kc_func_ptr_ns", apply_r);
  kb_report_add(&r, "apply_kc_func_ptr_with_kcall_call_ns", apply_c);
  kb_report_add(&r, "apply_kc_func_ptr_with_kcall_call_ratio_to_kc_func_ptr",
                apply_c / apply_r);
  kb_report_add(&r, "apply_function_handle_ns", apply_f);
  kb_report_add(&r, "apply_function_handle_ratio_to_kc_func_ptr",
                apply_f / apply_r);
  int rc = kb_report_finish(&r, kb_json_arg(argc, argv));

  kc_object_release(KC_OBJECT(add_hand));
  kc_object_release(KC_OBJECT(add_c_fn));
  kc_object_release(KC_OBJECT(len_hand));
  kc_object_release(KC_OBJECT(id));
  return rc;
}
