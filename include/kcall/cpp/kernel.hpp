/*
 * kcall/cpp/kernel.hpp — kernels: kcall::OpKernel and the contexts it sees.
 * Part of the C++ layer: kcall/kcall.hpp includes every part and says how
 * the layer works (the host table, ownership, threads).
 */
#ifndef KCALL_CPP_KERNEL_HPP_
#define KCALL_CPP_KERNEL_HPP_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kcall/cpp/attrs.hpp"
#include "kcall/cpp/thread_pool.hpp"

namespace kcall {

/* ---- kernels
 * ----------------------------------------------------------------------------
 */

/* What a kernel's constructor sees (the seed's OpKernelConstruction). */
class OpKernelConstruction {
 public:
  explicit OpKernelConstruction(kc_kernel_construct_ctx* ctx) : c_(ctx) {}
  Attrs attrs() const {
    return Attrs(host().kernel_construct_ctx_get_attrs(c_));
  }
  template <class T>
  T attr(const char* name) const {
    return attrs().get<T>(name);
  }
  /* The seed's spelling. */
  template <class T>
  void GetAttr(const char* name, T* out) const {
    *out = attrs().get<T>(name);
  }
  std::string_view op_name() const {
    kc_string_view v = host().kernel_construct_ctx_get_op_name(c_);
    return std::string_view(v.data, v.size);
  }
  DLDevice device() const { return host().kernel_construct_ctx_get_device(c_); }
  int32_t num_inputs() const {
    return host().kernel_construct_ctx_get_input_count(c_);
  }
  DLDataType input_dtype(int32_t i) const {
    return host().kernel_construct_ctx_get_input_dtype(c_, i);
  }
  int32_t num_outputs() const {
    return host().kernel_construct_ctx_get_output_count(c_);
  }
  DLDataType output_dtype(int32_t i) const {
    return host().kernel_construct_ctx_get_output_dtype(c_, i);
  }

 private:
  kc_kernel_construct_ctx* c_;
};

/* What Compute sees (the seed's OpKernelContext). */
class OpKernelContext {
 public:
  explicit OpKernelContext(kc_kernel_ctx* ctx) : c_(ctx) {}
  kc_kernel_ctx* raw() const { return c_; }

  int32_t num_inputs() const { return host().kernel_ctx_get_input_count(c_); }
  Tensor input(int32_t i) const {
    return Tensor(host().kernel_ctx_get_input(c_, i));
  }
  /* The tensors of the input arg `name`: [first, second). */
  std::pair<int32_t, int32_t> input_range(const char* name) const {
    std::pair<int32_t, int32_t> r{0, 0};
    check(host().kernel_ctx_get_input_range(c_, name, &r.first, &r.second));
    return r;
  }
  int32_t num_outputs() const { return host().kernel_ctx_get_output_count(c_); }
  /* The output, if the runtime allocated it (its shape was inferred). */
  Tensor output(int32_t i) const {
    return Tensor(host().kernel_ctx_get_output(c_, i));
  }
  Tensor allocate_output(int32_t i, const std::vector<int64_t>& shape) const {
    DLTensor* t = nullptr;
    check(host().kernel_ctx_allocate_output(
        c_, i, shape.data(), static_cast<int32_t>(shape.size()), &t));
    return Tensor(t);
  }
  /* Scratch memory freed when Compute returns. */
  void* allocate_temp(size_t size, size_t alignment = 0) const {
    void* p = nullptr;
    check(host().kernel_ctx_allocate_temp(c_, size, alignment, &p));
    return p;
  }
  /* Records a failure (the first one wins) without throwing: for code
   * running on pool threads. */
  void set_status(kc_status_code code, const std::string& message) const {
    host().kernel_ctx_set_status(
        c_, host().status_create(code, "%s", message.c_str()));
  }
  Attrs attrs() const { return Attrs(host().kernel_ctx_get_attrs(c_)); }
  ThreadPool thread_pool() const {
    return ThreadPool(host().kernel_ctx_get_thread_pool(c_));
  }
  void* stream() const { return host().kernel_ctx_get_stream(c_); }
  DLDevice device() const { return host().kernel_ctx_get_device(c_); }

 private:
  kc_kernel_ctx* c_;
};

/* The base of a kernel written in C++. A kernel class derives from it, has
 * a constructor taking OpKernelConstruction& (where it reads and checks its
 * attrs, throwing Error to refuse) and implements Compute. Compute may run
 * on several threads at once: keep members read-only or synchronised. */
class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual void Compute(OpKernelContext& ctx) = 0;
};

}  // namespace kcall

#endif /* KCALL_CPP_KERNEL_HPP_ */
