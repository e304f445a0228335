// add_one.cc: an XLA FFI handler, written with XLA's own headers as a JAX
// user writes one. kcall runs it unchanged.
#include <cstddef>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// y = x + delta, for f32 arrays of any shape.
static ffi::Error AddOneImpl(ffi::Buffer<ffi::F32> x,
                             ffi::ResultBuffer<ffi::F32> y, float delta) {
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) out[i] = in[i] + delta;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(AddOne, AddOneImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("delta"));
