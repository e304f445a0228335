/*
 * kcall/cpp/register.hpp — registration: kcall::OpDefBuilder and
 * kcall::KernelBuilder. Part of the C++ layer: kcall/kcall.hpp includes
 * every part and says how the layer works (the host table, ownership,
 * threads).
 */
#ifndef KCALL_CPP_REGISTER_HPP_
#define KCALL_CPP_REGISTER_HPP_

#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "kcall/cpp/function.hpp"
#include "kcall/cpp/shape.hpp"
#include "kcall/cpp/kernel.hpp"

namespace kcall {

/* ---- registration
 * ------------------------------------------------------------------------ */

/* Builds and registers an op (the seed's REGISTER_OP, without static
 * initialisation): OpDefBuilder("Clip").Input("x: T")...Register(). A
 * bad spec throws nothing where it is given: the C builder keeps the first
 * failure, and Register throws it, naming the call that failed ("call 3
 * (kc_op_builder_add_attr): attr spec ..."). */
class OpDefBuilder {
 public:
  explicit OpDefBuilder(const char* name) {
    check(host().op_builder_create(name, &b_));
  }
  ~OpDefBuilder() { host().op_builder_destroy(b_); }
  OpDefBuilder(const OpDefBuilder&) = delete;
  OpDefBuilder& operator=(const OpDefBuilder&) = delete;

  /* Each leaves its failure, if it is the first, to Register. */
  OpDefBuilder& Input(const char* spec) {
    return note(host().op_builder_add_input(b_, spec));
  }
  OpDefBuilder& Output(const char* spec) {
    return note(host().op_builder_add_output(b_, spec));
  }
  OpDefBuilder& Attr(const char* spec) {
    return note(host().op_builder_add_attr(b_, spec));
  }
  OpDefBuilder& Doc(const char* doc) {
    return note(host().op_builder_set_doc(b_, doc));
  }
  OpDefBuilder& Flags(uint32_t flags) {
    return note(host().op_builder_set_flags(b_, flags));
  }
  OpDefBuilder& SetShapeFn(kc_shape_fn fn) {
    return note(host().op_builder_set_shape_fn(b_, fn));
  }
  template <void (*F)(InferenceContext&)>
  OpDefBuilder& SetShapeFn() {
    return SetShapeFn(&shape_fn<F>);
  }
  /* A shape function with state: any callable taking InferenceContext&,
   * such as a lambda with captures, so that one function can serve several
   * ops without globals. The op keeps a copy (kcall's shape-function data)
   * and destroys it when it is freed. Throws Error (FAILED_PRECONDITION)
   * on a host older than plugin API 1.1, which cannot keep it (a plugin
   * using it lists the feature "user_data"). */
  template <class F, class Fn = std::decay_t<F>,
            std::enable_if_t<std::is_invocable_v<Fn&, InferenceContext&>,
                             int> = 0>
  OpDefBuilder& SetShapeFn(F&& f) {
    if (!KC_STRUCT_HAS(&host(), kc_host_api, op_builder_set_shape_fn_v2)) {
      throw Error(KC_FAILED_PRECONDITION,
                  "kcall::OpDefBuilder::SetShapeFn with a callable needs "
                  "plugin API 1.1 (feature user_data)");
    }
    Fn* data = new Fn(std::forward<F>(f));
    host().op_builder_set_shape_fn_v2(
        b_, &stateful_shape_fn<Fn>, data,
        [](void* p) { delete static_cast<Fn*>(p); });
    return *this;
  }

  /* Registers (consuming the builder); throws the first error. */
  void Register(uint32_t flags = 0) {
    kc_op_builder* b = b_;
    b_ = nullptr;
    check(host().op_registry_register(b, flags));
  }

 private:
  OpDefBuilder& note(kc_status* status) {
    if (status) host().status_destroy(status);
    return *this;
  }
  template <class Fn>
  static kc_status* stateful_shape_fn(kc_shape_ctx* ctx) {
    return guard([ctx] {
      InferenceContext ic(ctx);
      (*static_cast<Fn*>(host().shape_ctx_get_data(ctx)))(ic);
    });
  }
  kc_op_builder* b_ = nullptr;
};

/* Registers kernel class K for an op on a device (the seed's
 * REGISTER_KERNEL_BUILDER): KernelBuilder<ClipOp<float>>("Clip")
 * .TypeConstraint<float>("T").Register(). */
template <class K>
class KernelBuilder {
  static_assert(std::is_base_of_v<OpKernel, K>, "K must derive from OpKernel");
  static_assert(std::is_constructible_v<K, OpKernelConstruction&>,
                "K needs a constructor taking OpKernelConstruction&");

 public:
  explicit KernelBuilder(const char* op, DLDeviceType device = kDLCPU) {
    check(host().kernel_builder_create(op, device, &create, &compute, &destroy,
                                       &b_));
  }
  ~KernelBuilder() { host().kernel_builder_destroy(b_); }
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  KernelBuilder& TypeConstraint(const char* attr,
                                std::initializer_list<DLDataType> dtypes) {
    return note(host().kernel_builder_add_type_constraint(
        b_, attr, dtypes.begin(), static_cast<int32_t>(dtypes.size())));
  }
  /* TypeConstraint<float, double>("T"). */
  template <class... Ts>
  KernelBuilder& TypeConstraint(const char* attr) {
    return TypeConstraint(attr, {dtype_of<Ts>()...});
  }
  KernelBuilder& Priority(int32_t priority) {
    return note(host().kernel_builder_set_priority(b_, priority));
  }
  KernelBuilder& HostMemory(const char* arg) {
    return note(host().kernel_builder_add_host_memory_arg(b_, arg));
  }

  /* Registers (consuming the builder); throws the first error. */
  void Register() {
    kc_kernel_builder* b = b_;
    b_ = nullptr;
    check(host().kernel_registry_register(b));
  }

 private:
  static kc_status* create(kc_kernel_construct_ctx* ctx, void** out) {
    return guard([&] {
      OpKernelConstruction c(ctx);
      *out = static_cast<OpKernel*>(new K(c));
    });
  }
  static kc_status* compute(void* kernel, kc_kernel_ctx* ctx) {
    return guard([&] {
      OpKernelContext c(ctx);
      static_cast<OpKernel*>(kernel)->Compute(c);
    });
  }
  static void destroy(void* kernel) { delete static_cast<OpKernel*>(kernel); }

  KernelBuilder& note(kc_status* status) {
    if (status) host().status_destroy(status);
    return *this;
  }
  kc_kernel_builder* b_ = nullptr;
};

}  // namespace kcall

#endif /* KCALL_CPP_REGISTER_HPP_ */
