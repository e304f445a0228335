// mykernels.cc: a tvm-ffi kernel library, written with tvm-ffi's own
// headers as a tvm-ffi user writes one. kcall loads it unchanged.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

namespace ffi = tvm::ffi;

// y = x + 1, for f32 tensors of any shape (y is written).
void AddOne(ffi::TensorView x, ffi::TensorView y) {
  if (x.dtype().code != kDLFloat || x.dtype().bits != 32 || x.numel() != y.numel()) {
    TVM_FFI_THROW(TypeError) << "add_one: expected two f32 tensors of one size";
  }
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] + 1.0f;
}

int64_t Div(int64_t a, int64_t b) {
  if (b == 0) TVM_FFI_THROW(ValueError) << "div: division of " << a << " by zero";
  return a / b;
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(div, Div);
