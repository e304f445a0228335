// A tvm-ffi kernel module, written only with tvm-ffi's own C++ headers and
// macros, as a kernel library outside kcall would be: each
// TVM_FFI_DLL_EXPORT_TYPED_FUNC(NAME, ...) exports `__tvm_ffi_NAME`.
//
// The Python tests (tests/python/tvm_ffi_util.py compiles it against the
// apache-tvm-ffi wheel) load it with kcall and with tvm_ffi.load_module,
// and compare. The functions cover each kind of value tvm-ffi passes
// (tensors as views and as owned objects, strings, bytes, functions, None),
// its errors, and no-ops for the benchmarks.

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace ffi = tvm::ffi;

void CheckF32(const ffi::TensorView& t, const char* what) {
  DLDataType dt = t.dtype();
  if (dt.code != kDLFloat || dt.bits != 32 || dt.lanes != 1) {
    TVM_FFI_THROW(TypeError) << what << ": expected a float32 tensor, got dtype code "
                             << static_cast<int>(dt.code) << " bits "
                             << static_cast<int>(dt.bits);
  }
  if (t.device().device_type != kDLCPU) {
    TVM_FFI_THROW(ValueError) << what << ": expected a CPU tensor";
  }
  if (!t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << what << ": expected a contiguous tensor";
  }
  // As an ordinary kernel reads them: tvm-ffi's DLPack promises strides
  // for every rank, and stride(i) reads them unchecked.
  int64_t expected = 1;
  for (int64_t i = t.ndim(); i-- > 0;) {
    if (t.shape()[i] != 1 && t.stride(i) != expected) {
      TVM_FFI_THROW(ValueError) << what << ": stride(" << i << ") is " << t.stride(i)
                                << ", expected " << expected;
    }
    expected *= t.shape()[i];
  }
}

void CheckSameShape(const ffi::TensorView& x, const ffi::TensorView& y) {
  if (x.numel() != y.numel()) {
    TVM_FFI_THROW(ValueError) << "x has " << x.numel() << " elements but y has " << y.numel();
  }
}

// y = x + 1 (float32, destination-passing style: y is written).
void AddOne(ffi::TensorView x, ffi::TensorView y) {
  CheckF32(x, "x");
  CheckF32(y, "y");
  CheckSameShape(x, y);
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] + 1.0f;
}

// y = x * factor.
void Scale(ffi::TensorView x, ffi::TensorView y, double factor) {
  CheckF32(x, "x");
  CheckF32(y, "y");
  CheckSameShape(x, y);
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = static_cast<float>(in[i] * factor);
}

// The sum of a float32 tensor (reads an owned Tensor argument).
double SumF32(ffi::Tensor x) {
  CheckF32(x, "x");
  const float* in = static_cast<const float*>(x.data_ptr());
  double s = 0;
  for (int64_t i = 0; i < x.numel(); ++i) s += in[i];
  return s;
}

// Host memory for tensors this module makes. The count of live
// allocations is readable (live_tensors), so that tests see a tensor
// result freed once nothing holds it.
std::atomic<int64_t> g_live_tensors{0};

struct HostAlloc {
  void AllocData(DLTensor* t) {
    size_t bytes = static_cast<size_t>(ffi::GetDataSize(*t));
    t->data = std::malloc(bytes == 0 ? 1 : bytes);
    if (t->data == nullptr) TVM_FFI_THROW(MemoryError) << "out of memory";
    g_live_tensors.fetch_add(1);
  }
  void FreeData(DLTensor* t) {
    std::free(t->data);
    g_live_tensors.fetch_sub(1);
  }
};

// A new float32 tensor of n elements holding 0, 1, ..., n-1.
ffi::Tensor Arange(int64_t n) {
  if (n < 0) TVM_FFI_THROW(ValueError) << "n must be >= 0, got " << n;
  DLDataType f32{kDLFloat, 32, 1};
  DLDevice cpu{kDLCPU, 0};
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(HostAlloc(), ffi::Shape({n}), f32, cpu);
  float* data = static_cast<float*>(t.data_ptr());
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i);
  return t;
}

int64_t LiveTensors() { return g_live_tensors.load(); }

// The tensor passed in, as is (an owned reference crosses back).
ffi::Tensor EchoTensor(ffi::Tensor t) { return t; }

// Nothing, for the call benchmarks.
void Noop() {}
void Noop3(int64_t, int64_t, int64_t) {}

int64_t EchoInt(int64_t v) { return v; }
double EchoFloat(double v) { return v; }
bool EchoBool(bool v) { return v; }
ffi::String EchoStr(ffi::String v) { return v; }
ffi::Bytes EchoBytes(ffi::Bytes v) { return v; }
// Any value back as it came.
ffi::Any Echo(ffi::Any v) { return v; }
// None when given None, else the int.
ffi::Optional<int64_t> EchoOptional(ffi::Optional<int64_t> v) { return v; }
// Returns nothing: None to the caller.
void ReturnNone(int64_t) {}

// tvm-ffi's type key of the argument ("int", "ffi.String", "DLTensor*",
// "ffi.Tensor", "ffi.Function", "None", ...): what arrived, as tvm-ffi
// sees it.
ffi::String TypeKey(ffi::AnyView v) { return ffi::String(v.GetTypeKey()); }

int64_t AddInts(int64_t a, int64_t b) { return a + b; }

ffi::String Concat(ffi::String a, ffi::String b) {
  return ffi::String(std::string(a) + std::string(b));
}

int64_t Len(ffi::String s) { return static_cast<int64_t>(s.size()); }

// Calls f(args...) with what it was given: the callback direction.
ffi::Any Apply(ffi::Function f, int64_t a, int64_t b) { return f(a, b); }

// Calls f(x) n times and returns the last result (for leak tests).
ffi::Any ApplyN(ffi::Function f, int64_t n, ffi::Any x) {
  ffi::Any last;
  for (int64_t i = 0; i < n; ++i) last = f(x);
  return last;
}

// A closure: a new tvm-ffi function adding `k` to its argument.
ffi::Function MakeAdder(int64_t k) {
  return ffi::Function::FromTyped([k](int64_t x) { return x + k; });
}

// The function passed in, as is.
ffi::Function EchoFunc(ffi::Function f) { return f; }

// Raises ValueError with a message naming the value.
void RaiseValueError(int64_t v) {
  TVM_FFI_THROW(ValueError) << "bad value " << v << ": expected a positive number";
}

// Raises an error of a kind of this module's own.
void RaiseCustom(ffi::String msg) { TVM_FFI_THROW(KernelFault) << std::string(msg); }

// Raises the kind given, with the message given.
void RaiseKind(ffi::String kind, ffi::String msg) {
  throw ffi::Error(std::string(kind), std::string(msg), TVMFFIBacktrace(__FILE__, __LINE__,
                                                                      TVM_FFI_FUNC_SIG, 0));
}

// Containers: a Shape (0, 1, ..., n-1), an Array of mixed items, and a
// Map (which kcall has no value for).
ffi::Shape MakeShape(int64_t n) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < n; ++i) dims.push_back(i);
  return ffi::Shape(dims);
}

ffi::Array<ffi::Any> MakeArray() {
  return ffi::Array<ffi::Any>({ffi::Any(int64_t{1}), ffi::Any(ffi::String("two")),
                               ffi::Any(3.5), ffi::Any(nullptr)});
}

ffi::Map<ffi::String, int64_t> MakeMap() {
  return ffi::Map<ffi::String, int64_t>({{"a", 1}});
}

}  // namespace

// What a function returns after the frontend (Python) saw an interrupt:
// -2 (tvm-ffi's "the environment has an error set"), written by hand as
// the C ABI has it.
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_interrupted(void*, const TVMFFIAny*, int32_t,
                                                        TVMFFIAny*) {
  return -2;
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale, Scale);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_f32, SumF32);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(arange, Arange);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(live_tensors, LiveTensors);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_tensor, EchoTensor);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(noop, Noop);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(noop3, Noop3);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_int, EchoInt);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_float, EchoFloat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_bool, EchoBool);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_str, EchoStr);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_bytes, EchoBytes);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo, Echo);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_optional, EchoOptional);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(return_none, ReturnNone);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(type_key, TypeKey);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_ints, AddInts);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(concat, Concat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(len, Len);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply, Apply);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_n, ApplyN);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_adder, MakeAdder);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_func, EchoFunc);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_value_error, RaiseValueError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_custom, RaiseCustom);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_kind, RaiseKind);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_shape, MakeShape);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_array, MakeArray);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_map, MakeMap);

// The benchmark's build (bench/python/bench_tvm_ffi.py) also puts a function
// in tvm-ffi's global registry as tvm-ffi's own C++ API makes one, its
// "native tvm-ffi function". Not in the tests' build: they load several
// copies of this file, and a second registration of one name is an error
// while the library loads.
#ifdef KT_TVM_FFI_BENCH_GLOBAL
TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("tvm_kernels.global_noop", []() {});
}
#endif
