/* clip_plugin.cpp — ops and kernels written with the C++ layer
 * (kcall/kcall.hpp), built as a plugin that still reaches the library only
 * through the host table:
 *
 *   cpp.Clip(x: T, lo: float = -inf, hi: float = inf) -> (y: T)
 *       a kernel class template, registered once per dtype, that splits its
 *       work with a lambda over the thread pool;
 *   cpp.Range(n: int >= 0) -> (y: i64)
 *       no shape function: the kernel allocates its output;
 *   cpp.Twice(x: T) -> (y: T), cpp.Thrice(x: T) -> (y: T)
 *       x repeated along its first dim: two ops made in a loop, whose shape
 *       function is a lambda holding the count, and one kernel class.
 */
#include <algorithm>
#include <cstdint>
#include <utility>

#include <kcall/kcall.hpp>

namespace {

template <class T>
class ClipOp : public kcall::OpKernel {
 public:
  explicit ClipOp(kcall::OpKernelConstruction& ctx)
      : lo_(static_cast<T>(ctx.attr<double>("lo"))),
        hi_(static_cast<T>(ctx.attr<double>("hi"))) {
    // Refused once, when the kernel is built for these attrs, not per call.
    if (lo_ > hi_) {
      throw kcall::Error(KC_INVALID_ARGUMENT, "cpp.Clip: lo exceeds hi");
    }
  }

  void Compute(kcall::OpKernelContext& ctx) override {
    kcall::Tensor x = ctx.input(0);
    const T* in = x.data<T>();
    T* out = ctx.output(0).mutable_data<T>();
    ctx.thread_pool().parallel_for(x.numel(), 2, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = std::clamp(in[i], lo_, hi_);
    });
  }

 private:
  const T lo_;
  const T hi_;
};

class RangeOp : public kcall::OpKernel {
 public:
  explicit RangeOp(kcall::OpKernelConstruction& ctx)
      : n_(ctx.attr<int64_t>("n")) {}

  void Compute(kcall::OpKernelContext& ctx) override {
    int64_t* out = ctx.allocate_output(0, {n_}).mutable_data<int64_t>();
    for (int64_t i = 0; i < n_; ++i) out[i] = i;
  }

 private:
  const int64_t n_;
};

// y is x's elements `times` times over: the count is y's size over x's.
class RepeatOp : public kcall::OpKernel {
 public:
  explicit RepeatOp(kcall::OpKernelConstruction& ctx) {
    static_cast<void>(ctx);
  }

  void Compute(kcall::OpKernelContext& ctx) override {
    kcall::Tensor x = ctx.input(0);
    kcall::Tensor y = ctx.output(0);
    const float* in = x.data<float>();
    float* out = y.mutable_data<float>();
    for (int64_t i = 0; i < y.numel(); ++i) out[i] = in[i % x.numel()];
  }
};

void ClipShape(kcall::InferenceContext& ctx) {
  ctx.set_output(0, ctx.input(0));
}

kc_status* Init(const kc_host_api* host) {
  kcall::set_host(host);
  return kcall::guard([] {
    kcall::OpDefBuilder("cpp.Clip")
        .Input("x: T")
        .Output("y: T")
        .Attr("T: {f32, f64}")
        .Attr("lo: float = -inf")
        .Attr("hi: float = inf")
        .Doc("Limits every element of x to [lo, hi].")
        .SetShapeFn<ClipShape>()
        .Register();
    kcall::KernelBuilder<ClipOp<float>>("cpp.Clip")
        .TypeConstraint<float>("T")
        .Register();
    kcall::KernelBuilder<ClipOp<double>>("cpp.Clip")
        .TypeConstraint<double>("T")
        .Register();

    kcall::OpDefBuilder("cpp.Range")
        .Output("y: i64")
        .Attr("n: int >= 0")
        .Doc("0, 1, ..., n - 1.")
        .Register();
    kcall::KernelBuilder<RangeOp>("cpp.Range").Register();

    const std::pair<const char*, int64_t> repeats[] = {{"cpp.Twice", 2},
                                                       {"cpp.Thrice", 3}};
    for (const auto& [name, times] : repeats) {
      kcall::OpDefBuilder(name)
          .Input("x: f32")
          .Output("y: f32")
          .SetShapeFn([times = times](kcall::InferenceContext& ctx) {
            kcall::ShapeHandle x = ctx.with_rank_at_least(ctx.input(0), 1);
            ctx.set_output(
                0, ctx.replace_dim(x, 0, ctx.multiply_dims(x.dim(0), times)));
          })
          .Register();
      kcall::KernelBuilder<RepeatOp>(name).Register();
    }
  });
}

const char* const kRequired[] = {"ops", "kernels", "thread_pool", "user_data",
                                 nullptr};

const kc_plugin_info kInfo = {
    sizeof(kc_plugin_info),
    KC_API_VERSION_MAJOR,
    KC_API_VERSION_MINOR,
    "ops_cpp",
    "1.0.0",
    kRequired,
    Init,
    nullptr,  // fini: the plugin stays loaded
};

}  // namespace

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kInfo;
}
