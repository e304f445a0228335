/*
 * kcall/kcall.hpp — a header-only C++17 layer over the op, kernel and
 * thread-pool C API (the seed's "C++ header-only API").
 *
 * It calls the library only through a kc_host_api table, so it works in a
 * plugin (which sees nothing else) and in a host program alike:
 *
 *   plugin:  kc_status* init(const kc_host_api* host) {
 *              kcall::set_host(host);
 *              return kcall::guard([] { ... register ops and kernels ... });
 *            }
 *   host:    kcall::set_host(kc_plugin_get_host_api());
 *
 * Nothing here crosses the ABI: C++ objects live on one side of it, and
 * everything that reaches the library is the C API's (function pointers,
 * kc_closure with its deleter, kc_status). Exceptions never cross the
 * boundary either: every callback the layer installs catches them and turns
 * them into a kc_status (kcall::Error keeps the code and the status it came
 * from).
 *
 * Thread safety is the C API's: Tensor, Attrs and the contexts are views,
 * valid as long as what they view (a callback's duration).
 */
#ifndef KCALL_KCALL_HPP_
#define KCALL_KCALL_HPP_

#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kcall/abi.h"

namespace kcall {

/* ---- the host table ------------------------------------------------------ */

namespace detail {
inline const kc_host_api*& host_slot() {
  static const kc_host_api* table = nullptr;
  return table;
}
}  // namespace detail

/* Sets the table the layer calls through: once, before anything else (a
 * plugin's init, or a host program's main). One table per shared object. */
inline void set_host(const kc_host_api* host) { detail::host_slot() = host; }

/* The table. set_host must have been called. */
inline const kc_host_api& host() { return *detail::host_slot(); }

/* ---- errors ----------------------------------------------------------------
 */

/* A failed call: the code, the message, and the kc_status it came from (its
 * context chain included), which release() hands back to C. */
class Error : public std::exception {
 public:
  Error(kc_status_code code, std::string message)
      : state_(std::make_shared<State>(code, std::move(message), nullptr)) {}

  /* Takes ownership of `status` (non-NULL). */
  explicit Error(kc_status* status)
      : state_(std::make_shared<State>(host().status_get_code(status),
                                       host().status_get_message(status),
                                       status)) {}

  kc_status_code code() const noexcept { return state_->code; }
  const char* what() const noexcept override { return state_->message.c_str(); }

  /* A kc_status for C (owned by the caller): the original one the first
   * time, a new one with the same code and message after that. */
  kc_status* release() const {
    kc_status* st = state_->status;
    state_->status = nullptr;
    return st ? st
              : host().status_create(state_->code, "%s",
                                     state_->message.c_str());
  }

 private:
  struct State {
    State(kc_status_code c, std::string m, kc_status* s)
        : code(c), message(std::move(m)), status(s) {}
    ~State() {
      if (status) host().status_destroy(status);
    }
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    kc_status_code code;
    std::string message;
    kc_status* status;
  };
  std::shared_ptr<State> state_; /* copies of an exception share it */
};

/* Throws Error for a failed call; nothing for NULL. */
inline void check(kc_status* status) {
  if (status) throw Error(status);
}

/* Runs f, turning any exception into a kc_status: for the bodies of C
 * callbacks and plugin inits. */
template <class F>
kc_status* guard(F&& f) noexcept {
  try {
    std::forward<F>(f)();
    return nullptr;
  } catch (const Error& e) {
    return e.release();
  } catch (const std::bad_alloc&) {
    return host().status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return host().status_create(KC_INTERNAL, "C++ exception: %s", e.what());
  } catch (...) {
    return host().status_create(KC_INTERNAL, "unknown C++ exception");
  }
}

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

  /* The data as T (byte_offset applied). INVALID_ARGUMENT when the dtype is
   * not T's. */
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
      throw Error(KC_INVALID_ARGUMENT,
                  "tensor of dtype code " + std::to_string(t_->dtype.code) +
                      " with " + std::to_string(t_->dtype.bits) +
                      " bits read as another type");
    }
    return static_cast<char*>(t_->data) + t_->byte_offset;
  }
  const DLTensor* t_ = nullptr;
};

/* ---- attributes
 * ----------------------------------------------------------------- */

/* The resolved attributes of a call: attr<int64_t>("axis"), ... Throws
 * Error for a missing attr or one of another kind. */
class Attrs {
 public:
  explicit Attrs(const kc_op_attrs* attrs) : a_(attrs) {}

  template <class T>
  T get(const char* name) const {
    T value{};
    read(name, &value);
    return value;
  }

 private:
  template <class I,
            std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>,
                             int> = 0>
  void read(const char* name, I* out) const {
    int64_t v = 0;
    check(host().op_attrs_get_int(a_, name, &v));
    *out = static_cast<I>(v);
  }
  void read(const char* name, bool* out) const {
    check(host().op_attrs_get_bool(a_, name, out));
  }
  void read(const char* name, double* out) const {
    check(host().op_attrs_get_float(a_, name, out));
  }
  void read(const char* name, float* out) const {
    double v = 0;
    check(host().op_attrs_get_float(a_, name, &v));
    *out = static_cast<float>(v);
  }
  void read(const char* name, std::string_view* out) const {
    kc_string_view v{nullptr, 0};
    check(host().op_attrs_get_string(a_, name, &v));
    *out = std::string_view(v.data, v.size);
  }
  void read(const char* name, std::string* out) const {
    std::string_view v;
    read(name, &v);
    *out = std::string(v);
  }
  void read(const char* name, DLDataType* out) const {
    check(host().op_attrs_get_type(a_, name, out));
  }
  void read(const char* name, std::vector<int64_t>* out) const {
    int32_t n = 0;
    check(host().op_attrs_get_int_list(a_, name, nullptr, 0, &n));
    out->resize(static_cast<size_t>(n));
    check(host().op_attrs_get_int_list(a_, name, out->data(), n, &n));
  }
  void read(const char* name, std::vector<DLDataType>* out) const {
    int32_t n = 0;
    check(host().op_attrs_get_type_list(a_, name, nullptr, 0, &n));
    out->resize(static_cast<size_t>(n));
    check(host().op_attrs_get_type_list(a_, name, out->data(), n, &n));
  }
  const kc_op_attrs* a_;
};

/* ---- the thread pool
 * --------------------------------------------------------------- */

/* A non-owning handle to a pool (the default pool when NULL). */
class ThreadPool {
 public:
  explicit ThreadPool(kc_thread_pool* pool = nullptr) : p_(pool) {}
  kc_thread_pool* raw() const { return p_; }
  int32_t size() const { return host().thread_pool_get_size(p_); }

  /* f(begin, end) over [0, total); see kc_thread_pool_parallel_for. An
   * exception thrown by f is rethrown here, after every range ran. */
  template <class F>
  void parallel_for(int64_t total, int64_t cost_per_unit, F&& f) const {
    Loop<std::decay_t<F>> loop{std::forward<F>(f)};
    host().thread_pool_parallel_for(p_, total, cost_per_unit,
                                    &Loop<std::decay_t<F>>::range, &loop);
    loop.rethrow();
  }

  /* f(begin, end, worker_id); see kc_thread_pool_parallel_for_with_worker_id.
   */
  template <class F>
  void parallel_for_with_worker_id(int64_t total, int64_t cost_per_unit,
                                   F&& f) const {
    Loop<std::decay_t<F>> loop{std::forward<F>(f)};
    host().thread_pool_parallel_for_with_worker_id(
        p_, total, cost_per_unit, &Loop<std::decay_t<F>>::worker_range, &loop);
    loop.rethrow();
  }

  /* Runs f on a worker, later. The function travels as a kc_closure whose
   * deleter frees it (the seed's FuncWrap). An exception escaping f ends
   * the process, as it would in a std::thread. */
  void schedule(std::function<void()> f) const {
    check(host().thread_pool_schedule(p_, wrap(std::move(f)).get()));
  }
  void schedule_with_hint(std::function<void()> f, int32_t start,
                          int32_t limit) const {
    check(host().thread_pool_schedule_with_hint(p_, wrap(std::move(f)).get(),
                                                start, limit));
  }

 private:
  template <class F>
  struct Loop {
    F f;
    std::once_flag once{};
    std::exception_ptr error{};

    void run(int64_t begin, int64_t end, int32_t id) {
      try {
        if constexpr (std::is_invocable_v<F&, int64_t, int64_t, int32_t>) {
          f(begin, end, id);
        } else {
          f(begin, end);
        }
      } catch (...) {
        auto caught = std::current_exception();
        std::call_once(once, [&] { error = caught; });
      }
    }
    static void range(void* self, int64_t begin, int64_t end) {
      static_cast<Loop*>(self)->run(begin, end, 0);
    }
    static void worker_range(void* self, int64_t begin, int64_t end,
                             int32_t id) {
      static_cast<Loop*>(self)->run(begin, end, id);
    }
    void rethrow() {
      if (error) std::rethrow_exception(error);
    }
  };

  /* A closure owning a heap copy of f; the pool owns it once scheduled. */
  struct Closure {
    kc_closure c;
    const kc_closure* get() const { return &c; }
  };
  static Closure wrap(std::function<void()> f) {
    auto* heap = new std::function<void()>(std::move(f));
    return Closure{kc_closure{
        sizeof(kc_closure),
        [](void* self) noexcept {
          (*static_cast<std::function<void()>*>(self))();
        },
        heap,
        [](void* self) { delete static_cast<std::function<void()>*>(self); }}};
  }

  kc_thread_pool* p_;
};

/* ---- shape inference
 * --------------------------------------------------------------- */

/* A shape owned by an InferenceContext. */
class ShapeHandle {
 public:
  ShapeHandle() = default;
  explicit ShapeHandle(const kc_shape_handle* s) : s_(s) {}
  const kc_shape_handle* raw() const { return s_; }
  int32_t rank() const { return host().shape_handle_get_rank(s_); }
  int64_t dim(int32_t i) const { return host().shape_handle_get_dim(s_, i); }

 private:
  const kc_shape_handle* s_ = nullptr;
};

/* What a shape function sees (the seed's InferenceContext). */
class InferenceContext {
 public:
  explicit InferenceContext(kc_shape_ctx* ctx) : c_(ctx) {}
  kc_shape_ctx* raw() const { return c_; }

  int32_t num_inputs() const { return host().shape_ctx_get_input_count(c_); }
  int32_t num_outputs() const { return host().shape_ctx_get_output_count(c_); }
  ShapeHandle input(int32_t i) const {
    return ShapeHandle(host().shape_ctx_get_input(c_, i));
  }
  DLDataType input_dtype(int32_t i) const {
    return host().shape_ctx_get_input_dtype(c_, i);
  }
  Attrs attrs() const { return Attrs(host().shape_ctx_get_attrs(c_)); }
  template <class T>
  T attr(const char* name) const {
    return attrs().get<T>(name);
  }
  void set_output(int32_t i, ShapeHandle s) const {
    check(host().shape_ctx_set_output(c_, i, s.raw()));
  }

  ShapeHandle make_shape(const std::vector<int64_t>& dims) const {
    const kc_shape_handle* s = nullptr;
    check(host().shape_ctx_make_shape(c_, static_cast<int32_t>(dims.size()),
                                      dims.data(), &s));
    return ShapeHandle(s);
  }
  ShapeHandle unknown_shape() const {
    const kc_shape_handle* s = nullptr;
    check(host().shape_ctx_make_shape(c_, KC_RANK_UNKNOWN, nullptr, &s));
    return ShapeHandle(s);
  }
  ShapeHandle with_rank(ShapeHandle s, int32_t rank) const {
    return apply(host().shape_ctx_with_rank, s, rank);
  }
  ShapeHandle with_rank_at_least(ShapeHandle s, int32_t rank) const {
    return apply(host().shape_ctx_with_rank_at_least, s, rank);
  }
  ShapeHandle with_rank_at_most(ShapeHandle s, int32_t rank) const {
    return apply(host().shape_ctx_with_rank_at_most, s, rank);
  }
  ShapeHandle merge(ShapeHandle a, ShapeHandle b) const {
    return combine(host().shape_ctx_merge, a, b);
  }
  ShapeHandle broadcast(ShapeHandle a, ShapeHandle b) const {
    return combine(host().shape_ctx_broadcast, a, b);
  }
  ShapeHandle concatenate(ShapeHandle a, ShapeHandle b) const {
    return combine(host().shape_ctx_concatenate, a, b);
  }
  ShapeHandle subshape(ShapeHandle s, int32_t start, int32_t end) const {
    const kc_shape_handle* out = nullptr;
    check(host().shape_ctx_subshape(c_, s.raw(), start, end, &out));
    return ShapeHandle(out);
  }
  ShapeHandle replace_dim(ShapeHandle s, int32_t index, int64_t dim) const {
    const kc_shape_handle* out = nullptr;
    check(host().shape_ctx_replace_dim(c_, s.raw(), index, dim, &out));
    return ShapeHandle(out);
  }
  int64_t merge_dim(int64_t a, int64_t b) const {
    return dims(host().shape_ctx_merge_dim, a, b);
  }
  int64_t add_dims(int64_t a, int64_t b) const {
    return dims(host().shape_ctx_add_dims, a, b);
  }
  int64_t multiply_dims(int64_t a, int64_t b) const {
    return dims(host().shape_ctx_multiply_dims, a, b);
  }

 private:
  using RankFn = kc_status* (*)(kc_shape_ctx*, const kc_shape_handle*, int32_t,
                                const kc_shape_handle**);
  using PairFn = kc_status* (*)(kc_shape_ctx*, const kc_shape_handle*,
                                const kc_shape_handle*,
                                const kc_shape_handle**);
  using DimFn = kc_status* (*)(kc_shape_ctx*, int64_t, int64_t, int64_t*);
  ShapeHandle apply(RankFn fn, ShapeHandle s, int32_t rank) const {
    const kc_shape_handle* out = nullptr;
    check(fn(c_, s.raw(), rank, &out));
    return ShapeHandle(out);
  }
  ShapeHandle combine(PairFn fn, ShapeHandle a, ShapeHandle b) const {
    const kc_shape_handle* out = nullptr;
    check(fn(c_, a.raw(), b.raw(), &out));
    return ShapeHandle(out);
  }
  int64_t dims(DimFn fn, int64_t a, int64_t b) const {
    int64_t out = 0;
    check(fn(c_, a, b, &out));
    return out;
  }
  kc_shape_ctx* c_;
};

/* The C shape function that runs F(InferenceContext&), errors caught. */
template <void (*F)(InferenceContext&)>
kc_status* shape_fn(kc_shape_ctx* ctx) {
  return guard([ctx] {
    InferenceContext ic(ctx);
    F(ic);
  });
}

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

#endif /* KCALL_KCALL_HPP_ */
