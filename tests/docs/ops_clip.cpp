// ops_clip.cpp: the C++ example of docs/ops.md (kcall/kcall.hpp), in a
// plugin the tests load and call (tests/docs/CMakeLists.txt). Like every
// plugin it sees only kcall's headers and links nothing of kcall.
#include <algorithm>
#include <cstdint>

#include <kcall/kcall.hpp>

namespace {

void ClipShape(kcall::InferenceContext& ctx) {
  ctx.set_output(0, ctx.input(0));
}

template <class T>
class ClipOp : public kcall::OpKernel {
 public:
  explicit ClipOp(kcall::OpKernelConstruction& ctx)
      : lo_(static_cast<T>(ctx.attr<double>("lo"))),
        hi_(static_cast<T>(ctx.attr<double>("hi"))) {}
  void Compute(kcall::OpKernelContext& ctx) override {
    const T* in = ctx.input(0).data<T>();
    T* out = ctx.output(0).mutable_data<T>();
    ctx.thread_pool().parallel_for(ctx.input(0).numel(), 2,
        [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) out[i] = std::clamp(in[i], lo_, hi_);
        });
  }
 private:
  const T lo_, hi_;
};

kc_status* Init(const kc_host_api* host) {
  kcall::set_host(host);
  return kcall::guard([] {
    kcall::OpDefBuilder("cpp.Clip").Input("x: T").Output("y: T")
        .Attr("T: {f32, f64}").Attr("lo: float = -inf").Attr("hi: float = inf")
        .SetShapeFn<ClipShape>().Register();
    kcall::KernelBuilder<ClipOp<float>>("cpp.Clip").TypeConstraint<float>("T").Register();
  });
}

const char* const kRequired[] = {"ops", "kernels", "thread_pool", nullptr};

const kc_plugin_info kInfo = {
    sizeof(kc_plugin_info),
    KC_API_VERSION_MAJOR,
    KC_API_VERSION_MINOR,
    "ops_md_clip",
    "1.0.0",
    kRequired,
    Init,
};

}  // namespace

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kInfo;
}
