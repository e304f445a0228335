/*
 * kcall/cpp/tensor.hpp — dtype names and kcall::Tensor, a view of a
 * DLTensor. Part of the C++ layer: kcall/kcall.hpp includes every part and
 * says how the layer works (the host table, ownership, threads).
 */
#ifndef KCALL_CPP_TENSOR_HPP_
#define KCALL_CPP_TENSOR_HPP_

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kcall/cpp/host.hpp"

namespace kcall {

/* ---- dtypes
 * ------------------------------------------------------------------ */

constexpr DLDataType make_dtype(DLDataTypeCode code, int bits) {
  return DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
}

/* The dtype of a C++ scalar type: dtype_of<float>() is f32. */
template <class T>
constexpr DLDataType dtype_of() {
  static_assert(std::is_arithmetic_v<T>, "no dtype for this type");
  if constexpr (std::is_same_v<T, bool>) {
    return make_dtype(kDLBool, 8);
  } else if constexpr (std::is_floating_point_v<T>) {
    return make_dtype(kDLFloat, static_cast<int>(sizeof(T) * 8));
  } else if constexpr (std::is_signed_v<T>) {
    return make_dtype(kDLInt, static_cast<int>(sizeof(T) * 8));
  } else {
    return make_dtype(kDLUInt, static_cast<int>(sizeof(T) * 8));
  }
}

constexpr bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/* A dtype's name as kcall prints it: "f32", "i64", "u8", "bf16", "c64",
 * "bool", "f32x4"; "dtype(code=C,bits=B,lanes=L)" for the codes from
 * kDLFloat8_e3m4 on (kc_dtype_format, in hosts, names those too). */
inline std::string dtype_name(DLDataType t) {
  static const char* const kPrefix[] = {"i", "u", "f", "opaque", "bf", "c",
                                        "bool"};
  if (t.code >= 7) {
    return "dtype(code=" + std::to_string(t.code) +
           ",bits=" + std::to_string(t.bits) +
           ",lanes=" + std::to_string(t.lanes) + ")";
  }
  std::string name = kPrefix[t.code];
  if (t.code != kDLBool || t.bits != 8) name += std::to_string(t.bits);
  if (t.lanes != 1) name += "x" + std::to_string(t.lanes);
  return name;
}

/* ---- tensors
 * -------------------------------------------------------------------- */

/* A view of a DLTensor: shape, dtype, and typed access to its data. */
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(const DLTensor* t) : t_(t) {}

  const DLTensor* raw() const { return t_; }
  explicit operator bool() const { return t_ != nullptr; }
  int32_t ndim() const { return t_->ndim; }
  /* Dim i; negative i counts from the end. */
  int64_t dim(int32_t i) const { return t_->shape[i < 0 ? i + t_->ndim : i]; }
  std::vector<int64_t> shape() const {
    return std::vector<int64_t>(t_->shape, t_->shape + t_->ndim);
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int32_t i = 0; i < t_->ndim; ++i) n *= t_->shape[i];
    return n;
  }
  DLDataType dtype() const { return t_->dtype; }
  DLDevice device() const { return t_->device; }
  /* True when the elements are laid out row-major without gaps (no
   * strides, or strides equal to the row-major ones; dims of extent 1 may
   * have any stride), so that data<T>()[i] is element i. */
  bool is_compact() const {
    if (!t_->strides || numel() == 0) return true;
    int64_t expected = 1;
    for (int32_t i = t_->ndim - 1; i >= 0; --i) {
      if (t_->shape[i] != 1 && t_->strides[i] != expected) return false;
      expected *= t_->shape[i];
    }
    return true;
  }

  /* The data as T (byte_offset applied). INVALID_ARGUMENT when the dtype is
   * not T's ("expected a tensor of f32, got one of f64"). */
  template <class T>
  const T* data() const {
    return static_cast<const T*>(checked<T>());
  }
  template <class T>
  T* mutable_data() const {
    return static_cast<T*>(checked<T>());
  }

 private:
  template <class T>
  void* checked() const {
    if (!same_dtype(t_->dtype, dtype_of<T>())) {
      throw Error(KC_INVALID_ARGUMENT, "expected a tensor of " +
                                           dtype_name(dtype_of<T>()) +
                                           ", got one of " +
                                           dtype_name(t_->dtype));
    }
    return static_cast<char*>(t_->data) + t_->byte_offset;
  }
  const DLTensor* t_ = nullptr;
};

}  // namespace kcall

#endif /* KCALL_CPP_TENSOR_HPP_ */
