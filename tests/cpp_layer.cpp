// The C++ layer (kcall/kcall.hpp) in a host: Register throws the builder's
// first error with its position, and a shape function with state is kept
// by the op and destroyed with it, once, or refused by an API 1.0 host.
#include <memory>
#include <string>

#include "kcall/kcall.h"
#include "kcall/kcall.hpp"
#include "kt_plugin_api.h"

namespace {

kc_status* Fail(const std::string& what) {
  return kc_status_create(KC_INTERNAL, "kcall.hpp: %s", what.c_str());
}

// The output's rank inference gives for an f32[5] input, or -2.
int64_t InferredDim(const char* op_name) {
  const kc_op* op = nullptr;
  kc_status* st = kc_op_registry_lookup(kc_sv(op_name), &op);
  int64_t shape[1] = {5};
  DLTensor x = {nullptr, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  const DLTensor* in = &x;
  kc_op_output_info info{};
  int32_t n = 0;
  if (!st) st = kc_op_infer(op, &in, 1, nullptr, 0, &info, 1, &n);
  if (st) {
    kc_status_destroy(st);
    return -2;
  }
  return info.dims[0];
}

kc_status* Checks(const kc_host_api* old_host) {
  // The first failing call of the chain, named by Register.
  try {
    kcall::OpDefBuilder("kt_cppl.Bad")
        .Input("x: T")
        .Attr("T: {f65}")
        .Register();
    return Fail("a bad spec registered");
  } catch (const kcall::Error& e) {
    if (std::string(e.what()).find("call 2 (kc_op_builder_add_attr): attr "
                                   "spec 'T: {f65}'") == std::string::npos) {
      return Fail(std::string("Register threw: ") + e.what());
    }
  }

  // A lambda holding a count and a reference: kept by the op, destroyed
  // once when the op is freed.
  auto held = std::make_shared<int>(4);
  kcall::OpDefBuilder("kt_cppl.Grow")
      .Input("x: f32")
      .Output("y: f32")
      .SetShapeFn([held](kcall::InferenceContext& ctx) {
        ctx.set_output(0, ctx.make_shape({ctx.input(0).dim(0) + *held}));
      })
      .Register();
  if (InferredDim("kt_cppl.Grow") != 9) return Fail("the lambda did not run");
  if (held.use_count() != 2) return Fail("the op holds no single copy");
  kc_op_registry_reset();
  kc_func_registry_reset();
  if (held.use_count() != 1) return Fail("the copy was not destroyed");

  // An API 1.0 host cannot keep it: refused, nothing kept.
  kcall::set_host(old_host);
  try {
    kcall::OpDefBuilder("kt_cppl.Old")
        .Input("x: f32")
        .SetShapeFn([held](kcall::InferenceContext&) {})
        .Register();
    kcall::set_host(kc_plugin_get_host_api());
    return Fail("an API 1.0 host took a stateful shape function");
  } catch (const kcall::Error& e) {
    kcall::set_host(kc_plugin_get_host_api());
    if (e.code() != KC_FAILED_PRECONDITION || held.use_count() != 1) {
      return Fail(std::string("on an API 1.0 host: ") + e.what());
    }
  }
  return nullptr;
}

}  // namespace

extern "C" kc_status* kt_cpp_layer_checks(const kc_host_api* old_host) {
  kcall::set_host(kc_plugin_get_host_api());
  return kcall::guard([&] { kcall::check(Checks(old_host)); });
}
