// typed_plugin.cpp: packed functions written as plain C++ functions.
//
// kcall::register_func reads each function's signature: a call is checked
// and its arguments converted before the body runs, and the result is
// converted back. The plugin still reaches kcall only through the host
// table (kcall.hpp calls nothing else), so it links nothing of kcall.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <kcall/kcall.hpp>

namespace {

kc_status* Init(const kc_host_api* host) {
  kcall::set_host(host);
  return kcall::guard([] {
    // "typed.add: argument 1: expected int, got str" for typed.add 1 x.
    kcall::register_func("typed.add", [](int64_t a, int64_t b) {
      if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {
        throw kcall::Error(KC_OUT_OF_RANGE, "the sum does not fit in 64 bits");
      }
      return a + b;
    });

    // A trailing std::optional may be left out: a default.
    kcall::register_func("typed.greet", [](std::string_view name,
                                           std::optional<int32_t> times) {
      std::string text = "hello";
      for (int32_t i = 0; i < times.value_or(1); ++i) {
        text += ' ';
        text += name;
      }
      return text;
    });

    // A tensor argument is borrowed for the call; the result is a new one.
    kcall::register_func("typed.scaled", [](kcall::Tensor x, double factor) {
      if (!x.is_compact()) {
        throw kcall::Error(KC_UNIMPLEMENTED, "x must be compact");
      }
      const float* in = x.data<float>();  // refuses a dtype other than f32
      auto y = kcall::TensorObject::empty(x.shape(), x.dtype());
      float* out = y.view().mutable_data<float>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        out[i] = in[i] * static_cast<float>(factor);
      }
      return y;
    });

    // Functions are values: taken as arguments, called, and returned.
    kcall::register_func("typed.twice", [](kcall::Function f, kcall::Any x) {
      return f(f(x));
    });
    kcall::register_func("typed.make_scaler", [](double k) {
      return kcall::Function::from([k](double x) { return k * x; },
                                   "typed.scaler");
    });
  });
}

const kc_plugin_info kInfo = {
    sizeof(kc_plugin_info), KC_API_VERSION_MAJOR, KC_API_VERSION_MINOR,
    "typed",                "1.0.0",              nullptr,
    Init,                   nullptr,
};

}  // namespace

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kInfo;
}
