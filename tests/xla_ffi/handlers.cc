// XLA FFI handlers for kcall's test fixtures.
//
// These are written against XLA's own C++ FFI headers (xla/ffi/api/ffi.h,
// API 0.3 as jaxlib 0.10.2 ships it), the way a JAX user writes a CPU
// custom call, so that the same shared object runs in JAX and in
// `kcall run --xla-ffi`. tests/xla_ffi/generate.py builds it into
// tests/fixtures/xla_ffi/libjax_handlers.so and records what JAX computes
// with it; see tests/fixtures/xla_ffi/README.md.
//
// Exported (extern "C", default visibility), and nothing else:
//
//   AddOne             (f32[*]) -> f32[*], y = x + 1
//   ScaleShift         (f32[*]) -> f32[*], y = x * scale + shift;
//                      {scale: f32, shift: f64}
//   AttrsEcho          (f32[*]) -> (f32[*], s64[n], f64[m]), y = x and
//                      every attribute kind JAX emits, encoded into the
//                      two last results (layout below)
//   RowSum             (f32[m,n]) -> (f32[m], f32[m]), row sums and maxima
//   AffineInstantiate  the instantiate stage of Affine: {offset: f32,
//                      scale: f32} -> an AffineState
//   AffineExecute      its execute stage: (f32[*]) -> f32[*],
//                      y = x * scale + offset, read from the state
//   AffineStateTypeId  the XLA_FFI_TypeId of AffineState (data)
//   AffineStateTypeInfo  its XLA_FFI_TypeInfo (data)
//   PoolSquare         (f32[*]) -> f32[*], y = x * x, computed in chunks on
//                      the FFI thread pool and completed through a future
//   FailIfNegative     (f32[*]) -> f32[*], y = sqrt(x); fails with
//                      INVALID_ARGUMENT "negative input at index N"
//
// Float results are computed without contraction (the generator compiles
// with -ffp-contract=off), so they match the NumPy references bit for bit.
//
// None asks for scratch memory (ffi::ScratchAllocator): XLA:CPU answers
// every DeviceMemory_Allocate with an error, so JAX could not run it.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// ---------------------------------------------------------------------------
// AddOne, ScaleShift: the smallest handlers, one with scalar attributes of
// two widths.
// ---------------------------------------------------------------------------

ffi::Error AddOneImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; ++i) out[i] = in[i] + 1.0f;
  return ffi::Error::Success();
}

// Computed in double and rounded once, so the reference is simply
// float32(float64(x) * float64(scale) + shift).
ffi::Error ScaleShiftImpl(ffi::Buffer<ffi::F32> x,
                          ffi::ResultBuffer<ffi::F32> y, float scale,
                          double shift) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  const size_t n = x.element_count();
  const double s = static_cast<double>(scale);
  for (size_t i = 0; i < n; ++i) {
    out[i] = static_cast<float>(static_cast<double>(in[i]) * s + shift);
  }
  return ffi::Error::Success();
}

// ---------------------------------------------------------------------------
// AttrsEcho: decodes one attribute of every kind and writes what it read.
//
// y = x, and two encodings, each value in the order listed:
//
//   ints   s64: int32_value, int64_value, flag (0 or 1),
//               len(int64_array), int64_array...,
//               len(name), the bytes of name...,
//               options.count, len(options.label), the bytes of
//               options.label...
//   floats f64: float32_value, float64_value,
//               len(float32_array), float32_array...,
//               options.alpha
//
// A result of the wrong length is an INVALID_ARGUMENT error that says the
// length needed.
// ---------------------------------------------------------------------------

class Encoder {
 public:
  void Int(int64_t v) { ints_.push_back(v); }
  void Float(double v) { floats_.push_back(v); }
  void Bytes(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    for (char c : s) Int(static_cast<unsigned char>(c));
  }

  ffi::Error WriteTo(ffi::Result<ffi::BufferR1<ffi::S64>>& ints,
                     ffi::Result<ffi::BufferR1<ffi::F64>>& floats) const {
    if (ints->element_count() != ints_.size()) {
      return ffi::Error::InvalidArgument(
          "AttrsEcho: the ints result has " +
          std::to_string(ints->element_count()) +
          " elements, the attributes need " + std::to_string(ints_.size()));
    }
    if (floats->element_count() != floats_.size()) {
      return ffi::Error::InvalidArgument(
          "AttrsEcho: the floats result has " +
          std::to_string(floats->element_count()) +
          " elements, the attributes need " + std::to_string(floats_.size()));
    }
    std::copy(ints_.begin(), ints_.end(), ints->typed_data());
    std::copy(floats_.begin(), floats_.end(), floats->typed_data());
    return ffi::Error::Success();
  }

 private:
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
};

// The dictionary `options`: {alpha: f32, count: i64, label: string}. JAX
// passes a dict keyword argument as a dictionary attribute whose values
// are scalars, strings or arrays (it cannot hash a dict nested in one).
ffi::Error EncodeOptions(const ffi::Dictionary& options, Encoder& enc) {
  ffi::ErrorOr<int64_t> count = options.get<int64_t>("count");
  if (count.has_error()) return count.error();
  ffi::ErrorOr<std::string_view> label = options.get<std::string_view>("label");
  if (label.has_error()) return label.error();
  ffi::ErrorOr<float> alpha = options.get<float>("alpha");
  if (alpha.has_error()) return alpha.error();

  enc.Int(*count);
  enc.Bytes(*label);
  enc.Float(static_cast<double>(*alpha));
  return ffi::Error::Success();
}

ffi::Error AttrsEchoImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                         ffi::Result<ffi::BufferR1<ffi::S64>> ints,
                         ffi::Result<ffi::BufferR1<ffi::F64>> floats,
                         bool flag, ffi::Span<const float> float32_array,
                         float float32_value, double float64_value,
                         int32_t int32_value,
                         ffi::Span<const int64_t> int64_array,
                         int64_t int64_value, std::string_view name,
                         ffi::Dictionary options) {
  std::copy(x.typed_data(), x.typed_data() + x.element_count(),
            y->typed_data());

  Encoder enc;
  enc.Int(int32_value);
  enc.Int(int64_value);
  enc.Int(flag ? 1 : 0);
  enc.Int(static_cast<int64_t>(int64_array.size()));
  for (int64_t v : int64_array) enc.Int(v);
  enc.Bytes(name);

  enc.Float(static_cast<double>(float32_value));
  enc.Float(float64_value);
  enc.Float(static_cast<double>(float32_array.size()));
  for (float v : float32_array) enc.Float(static_cast<double>(v));

  if (ffi::Error err = EncodeOptions(options, enc); err.failure()) return err;
  return enc.WriteTo(ints, floats);
}

// ---------------------------------------------------------------------------
// RowSum: two results from one call.
// ---------------------------------------------------------------------------

ffi::Error RowSumImpl(ffi::BufferR2<ffi::F32> x,
                      ffi::ResultBufferR1<ffi::F32> sums,
                      ffi::ResultBufferR1<ffi::F32> maxima) {
  const int64_t m = x.dimensions()[0];
  const int64_t n = x.dimensions()[1];
  if (sums->dimensions()[0] != m || maxima->dimensions()[0] != m) {
    return ffi::Error::InvalidArgument(
        "RowSum: the results must have one element per row (" +
        std::to_string(m) + ")");
  }
  const float* in = x.typed_data();
  for (int64_t r = 0; r < m; ++r) {
    const float* row = in + r * n;
    float sum = 0.0f;
    float max = -INFINITY;
    for (int64_t c = 0; c < n; ++c) {
      sum += row[c];
      max = std::max(max, row[c]);
    }
    sums->typed_data()[r] = sum;
    maxima->typed_data()[r] = max;
  }
  return ffi::Error::Success();
}

// ---------------------------------------------------------------------------
// PoolSquare: work split into tasks on the runtime's thread pool; the call
// completes asynchronously, when the last task is done.
// ---------------------------------------------------------------------------

constexpr size_t kPoolChunk = 64;

ffi::Future PoolSquareImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x,
                           ffi::ResultBuffer<ffi::F32> y) {
  const size_t n = x.element_count();
  const size_t tasks = (n + kPoolChunk - 1) / kPoolChunk;
  if (tasks == 0) {
    ffi::Promise promise;
    ffi::Future future(promise);
    promise.SetAvailable();
    return future;
  }
  ffi::CountDownPromise done(static_cast<int64_t>(tasks));
  ffi::Future future(done);
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t t = 0; t < tasks; ++t) {
    const size_t begin = t * kPoolChunk;
    const size_t end = std::min(n, begin + kPoolChunk);
    pool.Schedule([in, out, begin, end, done]() mutable {
      for (size_t i = begin; i < end; ++i) out[i] = in[i] * in[i];
      done.CountDown();
    });
  }
  return future;
}

// ---------------------------------------------------------------------------
// FailIfNegative: a handler that fails through its return value.
// ---------------------------------------------------------------------------

ffi::Error FailIfNegativeImpl(ffi::Buffer<ffi::F32> x,
                              ffi::ResultBuffer<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; ++i) {
    if (in[i] < 0.0f) {
      return ffi::Error(ffi::ErrorCode::kInvalidArgument,
                        "negative input at index " + std::to_string(i));
    }
    out[i] = std::sqrt(in[i]);
  }
  return ffi::Error::Success();
}

}  // namespace

// ---------------------------------------------------------------------------
// Affine: state made once per call site at the instantiate stage, read on
// every execution.
//
// XLA finds a state's type by the TypeId object it is given: the runtime
// (JAX's jax.ffi.register_ffi_type, or kcall's kc_xla_ffi_type_register)
// writes the id it assigns into AffineState::id, and deletes the state
// with AffineStateTypeInfo's deleter. So the id must be reachable from
// outside: it is exported under the plain name AffineStateTypeId.
// ---------------------------------------------------------------------------

#pragma GCC visibility push(default)

struct AffineState {
  static ffi::TypeId id __asm__("AffineStateTypeId");
  float scale;
  float offset;
};

ffi::TypeId AffineState::id = XLA_FFI_UNKNOWN_TYPE_ID;

extern "C" const XLA_FFI_TypeInfo AffineStateTypeInfo =
    ffi::MakeTypeInfo<AffineState>();

#pragma GCC visibility pop

namespace {

ffi::ErrorOr<std::unique_ptr<AffineState>> AffineInstantiateImpl(
    float offset, float scale) {
  if (!std::isfinite(scale) || !std::isfinite(offset)) {
    return ffi::Unexpected(
        ffi::Error::InvalidArgument("Affine: scale and offset must be finite"));
  }
  auto state = std::make_unique<AffineState>();
  state->scale = scale;
  state->offset = offset;
  return state;
}

ffi::Error AffineExecuteImpl(AffineState* state, ffi::Buffer<ffi::F32> x,
                             ffi::ResultBuffer<ffi::F32> y) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; ++i) out[i] = in[i] * state->scale + state->offset;
  return ffi::Error::Success();
}

}  // namespace

// ---------------------------------------------------------------------------
// The exported handlers. A call frame carries the attributes sorted by
// name; the bindings list them in that order too (any order would do), so
// that each reads as the frame is laid out.
// ---------------------------------------------------------------------------

#pragma GCC visibility push(default)

XLA_FFI_DEFINE_HANDLER_SYMBOL(AddOne, AddOneImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(ScaleShift, ScaleShiftImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("scale")
                                  .Attr<double>("shift"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(AttrsEcho, AttrsEchoImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::BufferR1<ffi::S64>>()
                                  .Ret<ffi::BufferR1<ffi::F64>>()
                                  .Attr<bool>("flag")
                                  .Attr<ffi::Span<const float>>("float32_array")
                                  .Attr<float>("float32_value")
                                  .Attr<double>("float64_value")
                                  .Attr<int32_t>("int32_value")
                                  .Attr<ffi::Span<const int64_t>>("int64_array")
                                  .Attr<int64_t>("int64_value")
                                  .Attr<std::string_view>("name")
                                  .Attr<ffi::Dictionary>("options"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(RowSum, RowSumImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::BufferR2<ffi::F32>>()
                                  .Ret<ffi::BufferR1<ffi::F32>>()
                                  .Ret<ffi::BufferR1<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(AffineInstantiate, AffineInstantiateImpl,
                              ffi::Ffi::BindInstantiate()
                                  .Attr<float>("offset")
                                  .Attr<float>("scale"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(AffineExecute, AffineExecuteImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::State<AffineState>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(PoolSquare, PoolSquareImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(FailIfNegative, FailIfNegativeImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

#pragma GCC visibility pop
