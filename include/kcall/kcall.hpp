/*
 * kcall/kcall.hpp — a header-only C++17 layer over packed functions and the
 * op, kernel and thread-pool C API (the seed's "C++ header-only API" and
 * its typed packed functions, set_body_typed).
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
 * kc_closure and packed functions with their deleters, kc_any, kc_status).
 * Exceptions never cross the boundary either: every callback the layer
 * installs catches them and turns them into a kc_status (kcall::Error keeps
 * the code and the status it came from).
 *
 * Thread safety is the C API's: Tensor, Attrs and the contexts are views,
 * valid as long as what they view (a callback's duration); Any, Function
 * and TensorObject own references, which may be copied between threads.
 */
#ifndef KCALL_KCALL_HPP_
#define KCALL_KCALL_HPP_

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
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

/* The kc_status for the exception being handled; call it only inside a
 * catch block. kcall::Error keeps its code and status; std::bad_alloc is
 * RESOURCE_EXHAUSTED; std::invalid_argument and std::out_of_range are
 * INVALID_ARGUMENT and OUT_OF_RANGE with their what(); any other exception
 * is INTERNAL ("C++ exception: what()"). */
inline kc_status* status_from_current_exception() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return e.release();
  } catch (const std::bad_alloc&) {
    return host().status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::invalid_argument& e) {
    return host().status_create(KC_INVALID_ARGUMENT, "%s", e.what());
  } catch (const std::out_of_range& e) {
    return host().status_create(KC_OUT_OF_RANGE, "%s", e.what());
  } catch (const std::exception& e) {
    return host().status_create(KC_INTERNAL, "C++ exception: %s", e.what());
  } catch (...) {
    return host().status_create(KC_INTERNAL, "unknown C++ exception");
  }
}

/* Runs f, turning any exception into a kc_status (as
 * status_from_current_exception does): for the bodies of C callbacks and
 * plugin inits. */
template <class F>
kc_status* guard(F&& f) noexcept {
  try {
    std::forward<F>(f)();
    return nullptr;
  } catch (...) {
    return status_from_current_exception();
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

/* ---- values and packed functions --------------------------------------------
 *
 * Typed functions (the seed's set_body_typed):
 *
 *   kcall::register_func("mylib.add", [](int64_t a, double b) -> double {
 *     return static_cast<double>(a) + b;
 *   });
 *
 * registers a packed function that checks its argument count, converts
 * each kc_any argument to the parameter's type, calls the lambda and
 * converts its result back. A call that does not fit is refused before the
 * lambda runs, with a status naming the function and the argument:
 *
 *   INVALID_ARGUMENT  "mylib.add: expected 2 arguments, got 3"
 *   INVALID_ARGUMENT  "mylib.add: argument 1: expected float, got str"
 *   OUT_OF_RANGE      "mylib.f: argument 0: expected an int in
 *                      [-2147483648, 2147483647], got 4294967296"
 *
 * Parameter types, and the kc_any values they accept:
 *
 *   int64_t, int32_t, ... uint8_t   int (bool as 0 or 1), checked against
 *   (any integer type but the       the type's range: OUT_OF_RANGE when it
 *   character types)                does not fit
 *   double, float                   float, or int (converted); for float a
 *                                   finite value beyond its range is
 *                                   OUT_OF_RANGE
 *   bool                            bool, or int (non-zero is true)
 *   std::string_view                any string, borrowed for the call
 *   std::string                     any string, copied
 *   DLTensor*, const DLTensor*,     a borrowed DLTensor or a tensor object,
 *   kcall::Tensor                   borrowed for the call
 *   kcall::TensorObject             a tensor object (a reference is taken)
 *   kcall::Function                 a function (a reference is taken)
 *   kc_func*                        a function, borrowed for the call
 *   void*                           an opaque pointer; none gives nullptr
 *   DLDataType, DLDevice            a dtype, a device
 *   std::vector<T>                  an array whose items convert to T
 *   kcall::Any                      any value, owned (a borrowed string is
 *                                   copied; a borrowed DLTensor stays
 *                                   borrowed)
 *   kc_any, const kc_any&           the argument itself, borrowed
 *   std::optional<T>                none gives std::nullopt, else as T;
 *                                   trailing optional parameters may also
 *                                   be left out by the caller (defaults)
 *
 * Result types: void (none), the integer, floating and bool types,
 * std::string, std::string_view and const char* (copied; a null const char*
 * gives none), kcall::Function, kcall::TensorObject, kcall::Any,
 * std::vector<T> (an array), DLDataType, DLDevice, void* (opaque),
 * std::optional<T> (none when empty). Borrowed things (DLTensor*,
 * kcall::Tensor, kc_func*, kc_any) cannot be returned: the caller would
 * own what nobody keeps alive; the compiler says so.
 *
 * An exception thrown by the function becomes its status, with the
 * function's name as context (status_from_current_exception says which
 * code): throw kcall::Error(KC_INVALID_ARGUMENT, "b must not be 0") gives
 * "INVALID_ARGUMENT: mylib.div: b must not be 0".
 *
 * Costs: conversions that succeed are inline type checks (a string or
 * tensor object takes one call through the host table; Function, Any and
 * TensorObject parameters an atomic increment and decrement: take a
 * kc_func* and call it with kcall::call where that matters); nothing is
 * allocated but std::string and std::vector parameters and string, array
 * or object results. The function may be called from several threads at
 * once: keep its captures read-only or synchronised.
 */

class Any;
class Function;
class TensorObject;

namespace detail {

/* The printed name of a type index, as kc_type_name gives it. */
constexpr const char* type_name(int32_t type_index) noexcept {
  switch (type_index) {
#define KCALL__TYPE_NAME(name, value, text) \
  case value:                              \
    return text;
    KC_POD_TYPES(KCALL__TYPE_NAME)
    KC_OBJECT_TYPES(KCALL__TYPE_NAME)
#undef KCALL__TYPE_NAME
    default:
      return "unknown";
  }
}

/* Where a value being converted comes from, for messages. */
struct Where {
  static constexpr int32_t kResult = -1;
  static constexpr int32_t kAny = -2;
  const char* fn;       /* the function's name; unused for kAny */
  int32_t index;        /* an argument (>= 0), kResult or kAny */
  int64_t item = -1;    /* an item of an array argument or result */

  /* "mylib.add: argument 1: ", "mylib.f: result: item 2: ", "kcall::Any: " */
  std::string prefix() const {
    std::string p = index == kAny ? std::string("kcall::Any: ")
                                  : std::string(fn ? fn : "function") + ": ";
    if (index >= 0) p += "argument " + std::to_string(index) + ": ";
    if (index == kResult) p += "result: ";
    if (item >= 0) p += "item " + std::to_string(item) + ": ";
    return p;
  }
  Where at_item(size_t i) const {
    Where w = *this;
    w.item = static_cast<int64_t>(i);
    return w;
  }
};

/* What a value is, as messages say it. */
inline std::string describe(const kc_any& v) {
  if (v.type_index == KC_TYPE_DLTENSOR_PTR && !v.u.v_dltensor) {
    return "a NULL tensor";
  }
  return type_name(v.type_index);
}

[[noreturn]] inline void mismatch(const Where& w, const char* expected,
                                  const kc_any& found) {
  throw Error(KC_INVALID_ARGUMENT,
              w.prefix() + "expected " + expected + ", got " + describe(found));
}

[[noreturn]] inline void out_of_range(const Where& w,
                                      const std::string& expected,
                                      const std::string& found) {
  throw Error(KC_OUT_OF_RANGE, w.prefix() + "expected " + expected + ", got " +
                                   found);
}

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
constexpr bool is_char_v =
    std::is_same_v<T, char> || std::is_same_v<T, wchar_t> ||
    std::is_same_v<T, char16_t> || std::is_same_v<T, char32_t>;

/* The integer types a parameter or result may have. */
template <class T>
constexpr bool is_integer_v = std::is_integral_v<T> &&
                              !std::is_same_v<T, bool> && !is_char_v<T>;

template <class T>
constexpr bool always_false_v = false;

/* "an int in [-128, 127]" */
template <class I>
std::string int_range() {
  return "an int in [" + std::to_string(std::numeric_limits<I>::min()) +
         ", " + std::to_string(std::numeric_limits<I>::max()) + "]";
}

/* x as I, or OUT_OF_RANGE. */
template <class I>
I narrow_int(int64_t x, const Where& w) {
  bool fits;
  if constexpr (std::is_signed_v<I>) {
    fits = x >= static_cast<int64_t>(std::numeric_limits<I>::min()) &&
           x <= static_cast<int64_t>(std::numeric_limits<I>::max());
  } else {
    fits = x >= 0 && static_cast<uint64_t>(x) <=
                         static_cast<uint64_t>(std::numeric_limits<I>::max());
  }
  if (!fits) out_of_range(w, int_range<I>(), std::to_string(x));
  return static_cast<I>(x);
}

/* A string kc_any's text: inline for the borrowed and small kinds, through
 * the table for a string object (its layout is private). */
inline bool read_string(const kc_any& v, std::string_view* out) {
  if (v.type_index == KC_TYPE_SMALL_STR) {
    *out = std::string_view(v.u.v_small, v.small_len);
    return true;
  }
  if (v.type_index == KC_TYPE_RAW_STR) {
    if (!v.u.v_c_str) return false;
    *out = std::string_view(v.u.v_c_str);
    return true;
  }
  kc_string_view sv{nullptr, 0};
  if (v.type_index != KC_TYPE_STR || !host().any_get_string(&v, &sv)) {
    return false;
  }
  *out = std::string_view(sv.data, sv.size);
  return true;
}

/* A tensor kc_any's DLTensor (borrowed), or nullptr. */
inline DLTensor* read_tensor(const kc_any& v) {
  if (v.type_index == KC_TYPE_DLTENSOR_PTR) return v.u.v_dltensor;
  if (v.type_index == KC_TYPE_TENSOR) {
    return const_cast<DLTensor*>(host().tensor_get_dltensor(
        reinterpret_cast<const kc_tensor*>(v.u.v_obj)));
  }
  return nullptr;
}

/* FromAny<T>::get(value, where): value as T, or an Error naming where. */
template <class T, class = void>
struct FromAny {
  static_assert(always_false_v<T>,
                "kcall: no conversion from kc_any to this parameter type; "
                "see \"values and packed functions\" in kcall/kcall.hpp");
};

template <class I>
struct FromAny<I, std::enable_if_t<is_integer_v<I>>> {
  static I get(const kc_any& v, const Where& w) {
    if (v.type_index != KC_TYPE_INT && v.type_index != KC_TYPE_BOOL) {
      mismatch(w, "int", v);
    }
    return narrow_int<I>(v.u.v_int64, w);
  }
};

template <class D>
struct FromAny<D, std::enable_if_t<std::is_floating_point_v<D>>> {
  static D get(const kc_any& v, const Where& w) {
    double d = 0;
    if (v.type_index == KC_TYPE_FLOAT) {
      d = v.u.v_float64;
    } else if (v.type_index == KC_TYPE_INT) {
      d = static_cast<double>(v.u.v_int64);
    } else {
      mismatch(w, "float", v);
    }
    if constexpr (sizeof(D) < sizeof(double)) {
      constexpr double kMax = static_cast<double>(std::numeric_limits<D>::max());
      /* inf and nan convert as they are; finite overflow is refused. */
      if (d - d == 0 && (d > kMax || d < -kMax)) {
        char text[64];
        std::snprintf(text, sizeof text, "%g", d);
        char range[96];
        std::snprintf(range, sizeof range,
                      "a float within f%d range (magnitude at most %g)",
                      static_cast<int>(sizeof(D) * 8), kMax);
        out_of_range(w, range, text);
      }
    }
    return static_cast<D>(d);
  }
};

template <>
struct FromAny<bool> {
  static bool get(const kc_any& v, const Where& w) {
    if (v.type_index != KC_TYPE_BOOL && v.type_index != KC_TYPE_INT) {
      mismatch(w, "bool", v);
    }
    return v.u.v_int64 != 0;
  }
};

template <>
struct FromAny<std::string_view> {
  static std::string_view get(const kc_any& v, const Where& w) {
    std::string_view s;
    if (!read_string(v, &s)) mismatch(w, "str", v);
    return s;
  }
};

template <>
struct FromAny<std::string> {
  static std::string get(const kc_any& v, const Where& w) {
    return std::string(FromAny<std::string_view>::get(v, w));
  }
};

template <>
struct FromAny<DLTensor*> {
  static DLTensor* get(const kc_any& v, const Where& w) {
    DLTensor* t = read_tensor(v);
    if (!t) mismatch(w, "tensor", v);
    return t;
  }
};

template <>
struct FromAny<const DLTensor*> {
  static const DLTensor* get(const kc_any& v, const Where& w) {
    return FromAny<DLTensor*>::get(v, w);
  }
};

template <>
struct FromAny<Tensor> {
  static Tensor get(const kc_any& v, const Where& w) {
    return Tensor(FromAny<DLTensor*>::get(v, w));
  }
};

template <>
struct FromAny<kc_func*> {
  static kc_func* get(const kc_any& v, const Where& w) {
    if (v.type_index != KC_TYPE_FUNC) mismatch(w, "function", v);
    return reinterpret_cast<kc_func*>(v.u.v_obj);
  }
};

template <>
struct FromAny<void*> {
  static void* get(const kc_any& v, const Where& w) {
    if (v.type_index == KC_TYPE_NONE) return nullptr;
    if (v.type_index != KC_TYPE_OPAQUE_PTR) mismatch(w, "opaque_ptr", v);
    return v.u.v_ptr;
  }
};

template <>
struct FromAny<DLDataType> {
  static DLDataType get(const kc_any& v, const Where& w) {
    if (v.type_index != KC_TYPE_DTYPE) mismatch(w, "dtype", v);
    return v.u.v_dtype;
  }
};

template <>
struct FromAny<DLDevice> {
  static DLDevice get(const kc_any& v, const Where& w) {
    if (v.type_index != KC_TYPE_DEVICE) mismatch(w, "device", v);
    return v.u.v_device;
  }
};

template <>
struct FromAny<kc_any> {
  static kc_any get(const kc_any& v, const Where&) { return v; }
};

/* Defined after the classes they need. */
template <>
struct FromAny<Function>;
template <>
struct FromAny<TensorObject>;
template <>
struct FromAny<Any>;

template <class T>
struct FromAny<std::optional<T>> {
  static std::optional<T> get(const kc_any& v, const Where& w) {
    if (v.type_index == KC_TYPE_NONE) return std::nullopt;
    return FromAny<T>::get(v, w);
  }
};

template <class T>
struct FromAny<std::vector<T>> {
  static std::vector<T> get(const kc_any& v, const Where& w) {
    if (v.type_index != KC_TYPE_ARRAY) mismatch(w, "array", v);
    const auto* array = reinterpret_cast<const kc_array*>(v.u.v_obj);
    size_t n = host().array_get_size(array);
    std::vector<T> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      out.push_back(FromAny<T>::get(*host().array_get_item(array, i),
                                    w.at_item(i)));
    }
    return out;
  }
};

/* ToAny<T>::make(value, where): an owned kc_any holding value, or an Error
 * naming where. */
template <class T, class = void>
struct ToAny {
  static_assert(always_false_v<T>,
                "kcall: no conversion of this type to a kc_any result; see "
                "\"values and packed functions\" in kcall/kcall.hpp");
};

template <class I>
struct ToAny<I, std::enable_if_t<is_integer_v<I>>> {
  static kc_any make(I value, const Where& w) {
    if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t)) {
      if (value > static_cast<I>(std::numeric_limits<int64_t>::max())) {
        out_of_range(w, int_range<int64_t>(), std::to_string(value));
      }
    }
    return kc_any_int(static_cast<int64_t>(value));
  }
};

template <class D>
struct ToAny<D, std::enable_if_t<std::is_floating_point_v<D>>> {
  static kc_any make(D value, const Where&) {
    return kc_any_float(static_cast<double>(value));
  }
};

template <>
struct ToAny<bool> {
  static kc_any make(bool value, const Where&) { return kc_any_bool(value); }
};

template <>
struct ToAny<std::string_view> {
  static kc_any make(std::string_view value, const Where&) {
    kc_any out = kc_any_none();
    check(host().any_from_string(nullptr, {value.data(), value.size()}, &out));
    return out;
  }
};

template <>
struct ToAny<std::string> {
  static kc_any make(const std::string& value, const Where& w) {
    return ToAny<std::string_view>::make(value, w);
  }
};

template <>
struct ToAny<const char*> {
  static kc_any make(const char* value, const Where& w) {
    if (!value) return kc_any_none();
    return ToAny<std::string_view>::make(value, w);
  }
};

template <>
struct ToAny<char*> : ToAny<const char*> {};

template <>
struct ToAny<void*> {
  static kc_any make(void* value, const Where&) { return kc_any_opaque(value); }
};

template <>
struct ToAny<DLDataType> {
  static kc_any make(DLDataType value, const Where&) {
    return kc_any_dtype(value);
  }
};

template <>
struct ToAny<DLDevice> {
  static kc_any make(DLDevice value, const Where&) {
    return kc_any_device(value);
  }
};

template <>
struct ToAny<std::nullptr_t> {
  static kc_any make(std::nullptr_t, const Where&) { return kc_any_none(); }
};

template <class T>
struct ToAny<std::optional<T>> {
  static kc_any make(std::optional<T> value, const Where& w) {
    if (!value) return kc_any_none();
    return ToAny<T>::make(std::move(*value), w);
  }
};

template <class T>
constexpr bool is_borrowed_v =
    std::is_same_v<T, DLTensor*> || std::is_same_v<T, const DLTensor*> ||
    std::is_same_v<T, Tensor> || std::is_same_v<T, kc_func*> ||
    std::is_same_v<T, kc_any>;

template <class T>
struct ToAny<T, std::enable_if_t<is_borrowed_v<T>>> {
  static_assert(always_false_v<T>,
                "kcall: a borrowed value (DLTensor*, kcall::Tensor, kc_func*, "
                "kc_any) cannot be a result: return a kcall::TensorObject, "
                "kcall::Function or kcall::Any, which own what they hold");
};

/* Defined after the classes they need. */
template <>
struct ToAny<Function>;
template <>
struct ToAny<TensorObject>;
template <>
struct ToAny<Any>;
template <class T>
struct ToAny<std::vector<T>>;

}  // namespace detail

/* An owned kc_any: copies retain, the destructor releases. What calling a
 * Function returns; also a parameter or result type of a typed function
 * (any value at all). Not thread-safe to modify; the value it holds is
 * immutable and may be shared. */
class Any {
 public:
  Any() noexcept : v_(kc_any_none()) {}

  /* A value made from a C++ one: Any(5), Any(2.5), Any("text") (copied),
   * Any(function), Any(std::vector<int64_t>{1, 2}) — any result type of a
   * typed function. */
  template <class T,
            class = std::enable_if_t<!std::is_same_v<std::decay_t<T>, Any> &&
                                     !std::is_same_v<std::decay_t<T>, kc_any>>>
  explicit Any(T&& value)
      : v_(detail::ToAny<std::decay_t<T>>::make(
            std::forward<T>(value), detail::Where{nullptr, detail::Where::kAny})) {}

  /* Takes ownership of `value`, an owned kc_any (a call's result). */
  static Any adopt(kc_any value) noexcept { return Any(value, 0); }

  /* An owned copy of `value`, which may be borrowed (an argument): takes a
   * reference to an object; copies a borrowed C string. A borrowed
   * DLTensor (KC_TYPE_DLTENSOR_PTR) stays borrowed: it is valid as long as
   * the call that lent it. Throws Error when memory runs out. */
  static Any borrow(const kc_any& value) {
    if (value.type_index == KC_TYPE_RAW_STR) {
      return Any(detail::ToAny<const char*>::make(
                     value.u.v_c_str, detail::Where{nullptr, detail::Where::kAny}),
                 0);
    }
    host().any_retain(&value);
    return Any(value, 0);
  }

  Any(const Any& other) noexcept : v_(other.v_) {
    if (kc_any_is_object(&v_)) host().any_retain(&v_);
  }
  Any(Any&& other) noexcept : v_(other.v_) { other.v_ = kc_any_none(); }
  Any& operator=(Any other) noexcept {
    std::swap(v_, other.v_);
    return *this;
  }
  ~Any() {
    if (kc_any_is_object(&v_)) host().any_release(&v_);
  }

  /* The value, borrowed from this Any. */
  const kc_any& raw() const noexcept { return v_; }
  /* Hands the value (and its reference) to the caller; this becomes none. */
  kc_any release() noexcept {
    kc_any v = v_;
    v_ = kc_any_none();
    return v;
  }

  int32_t type_index() const noexcept { return v_.type_index; }
  /* "int", "str", "function", ... as kc_type_name. */
  const char* type_name() const noexcept {
    return detail::type_name(v_.type_index);
  }
  bool is_none() const noexcept { return v_.type_index == KC_TYPE_NONE; }

  /* The value as T, converted as a typed function's parameter of type T
   * would be; throws Error ("kcall::Any: expected int, got str") when it
   * does not convert. A std::string_view or DLTensor* borrows from this
   * Any, so as() of those is refused on a temporary. */
  template <class T>
  T as() const& {
    return detail::FromAny<T>::get(v_,
                                   detail::Where{nullptr, detail::Where::kAny});
  }
  template <class T>
  T as() && {
    static_assert(!std::is_same_v<T, std::string_view> &&
                      !std::is_same_v<T, Tensor> &&
                      !std::is_same_v<T, DLTensor*> &&
                      !std::is_same_v<T, const DLTensor*> &&
                      !std::is_same_v<T, kc_func*>,
                  "kcall::Any::as: this would borrow from a temporary Any; "
                  "keep the Any in a variable first");
    return detail::FromAny<T>::get(v_,
                                   detail::Where{nullptr, detail::Where::kAny});
  }

 private:
  friend class Function;
  Any(kc_any value, int) noexcept : v_(value) {}
  kc_any v_;
};

/* A reference to a tensor object (kc_tensor): owned storage with a
 * DLTensor. What a typed function returns to hand back a new tensor. */
class TensorObject {
 public:
  TensorObject() noexcept = default;

  /* A new compact tensor, contents undefined (kc_tensor_create). Throws
   * Error: INVALID_ARGUMENT for a bad shape or dtype, UNIMPLEMENTED for a
   * device with no allocator, RESOURCE_EXHAUSTED. */
  static TensorObject empty(const std::vector<int64_t>& shape, DLDataType dtype,
                            DLDevice device = DLDevice{kDLCPU, 0}) {
    kc_tensor* t = nullptr;
    check(host().tensor_create(nullptr, shape.data(),
                               static_cast<int32_t>(shape.size()), dtype,
                               device, &t));
    return adopt(t);
  }
  /* Takes a new reference to `t` (may be null). */
  static TensorObject borrow(kc_tensor* t) noexcept {
    if (t) host().object_retain(KC_OBJECT(t));
    return adopt(t);
  }
  /* Takes over the caller's reference to `t`. */
  static TensorObject adopt(kc_tensor* t) noexcept {
    TensorObject o;
    o.t_ = t;
    return o;
  }

  TensorObject(const TensorObject& o) noexcept : t_(o.t_) {
    if (t_) host().object_retain(KC_OBJECT(t_));
  }
  TensorObject(TensorObject&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  TensorObject& operator=(TensorObject o) noexcept {
    std::swap(t_, o.t_);
    return *this;
  }
  ~TensorObject() {
    if (t_) host().object_release(KC_OBJECT(t_));
  }

  kc_tensor* get() const noexcept { return t_; }
  kc_tensor* release() noexcept {
    kc_tensor* t = t_;
    t_ = nullptr;
    return t;
  }
  explicit operator bool() const noexcept { return t_ != nullptr; }
  /* Borrowed; lives as long as the tensor. */
  const DLTensor* dltensor() const { return host().tensor_get_dltensor(t_); }
  /* A view with typed access to the data. */
  Tensor view() const { return Tensor(dltensor()); }

 private:
  kc_tensor* t_ = nullptr;
};

namespace detail {

/* The signature of a callable: R and the parameter types. */
template <class R, class... A>
struct SigOf {
  using Result = R;
  using Args = std::tuple<A...>;
};
template <class T, class = void>
struct Sig {
  static_assert(always_false_v<T>,
                "kcall: a typed function needs one signature: a function "
                "pointer, a lambda without auto parameters, or a "
                "std::function");
};
template <class R, class... A>
struct Sig<R (*)(A...)> : SigOf<R, A...> {};
template <class R, class... A>
struct Sig<R (*)(A...) noexcept> : SigOf<R, A...> {};
template <class C, class R, class... A>
struct Sig<R (C::*)(A...)> : SigOf<R, A...> {};
template <class C, class R, class... A>
struct Sig<R (C::*)(A...) const> : SigOf<R, A...> {};
template <class C, class R, class... A>
struct Sig<R (C::*)(A...) noexcept> : SigOf<R, A...> {};
template <class C, class R, class... A>
struct Sig<R (C::*)(A...) const noexcept> : SigOf<R, A...> {};
template <class T>
struct Sig<T, std::void_t<decltype(&T::operator())>>
    : Sig<decltype(&T::operator())> {};

/* True for a type that has one call signature (a lambda, a function
 * pointer, a std::function). */
template <class T, class = void>
struct has_one_signature : std::false_type {};
template <class R, class... A>
struct has_one_signature<R (*)(A...), void> : std::true_type {};
template <class R, class... A>
struct has_one_signature<R (*)(A...) noexcept, void> : std::true_type {};
template <class T>
struct has_one_signature<T, std::void_t<decltype(&T::operator())>>
    : std::true_type {};

/* How many of the parameter types, counted from the end, are optional:
 * the caller may leave those out. */
template <class... A>
constexpr int32_t trailing_optionals() {
  constexpr bool opt[] = {false, is_optional<std::decay_t<A>>::value...};
  int32_t n = 0;
  for (size_t i = sizeof(opt) / sizeof(opt[0]); i-- > 1 && opt[i];) ++n;
  return n;
}

/* Argument `index` as T; a missing trailing optional is std::nullopt. */
template <class T>
T read_arg(const kc_any* args, int32_t nargs, int32_t index, const char* fn) {
  if constexpr (is_optional<T>::value) {
    if (index >= nargs) return std::nullopt;
  }
  return FromAny<T>::get(args[index], Where{fn, index});
}

/* The packed function behind a typed one: owns the callable and its name,
 * and is the function object's `self`. */
template <class F, class R, class... A>
class Typed {
 public:
  Typed(F f, std::string name) : f_(std::move(f)), name_(std::move(name)) {}

  static kc_status* call(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) noexcept {
    return static_cast<Typed*>(self)->run(args, nargs, ret,
                                          std::index_sequence_for<A...>{});
  }
  static void destroy(void* self) noexcept { delete static_cast<Typed*>(self); }

 private:
  using Values = std::tuple<std::decay_t<A>...>;
  using Stored = std::conditional_t<std::is_void_v<R>, bool, std::decay_t<R>>;

  template <size_t... I>
  kc_status* run(const kc_any* args, int32_t nargs, kc_any* ret,
                 std::index_sequence<I...>) noexcept {
    constexpr int32_t kMax = static_cast<int32_t>(sizeof...(A));
    constexpr int32_t kMin = kMax - trailing_optionals<A...>();
    const char* name = name_.c_str();
    (void)args; /* unread when there are no parameters */
    if (nargs < kMin || nargs > kMax) {
      return host().args_check_count(name, nargs, kMin, kMax);
    }
    /* The arguments: their messages name the function already. */
    std::optional<Values> values;
    try {
      /* Braces: converted left to right, so the first bad one is named. */
      values.emplace(Values{read_arg<std::decay_t<A>>(
          args, nargs, static_cast<int32_t>(I), name)...});
    } catch (...) {
      return status_from_current_exception();
    }
    /* The body: what it throws gets the function's name as context. */
    std::optional<Stored> result;
    try {
      if constexpr (std::is_void_v<R>) {
        f_(std::forward<A>(std::get<I>(*values))...);
        result.emplace(true);
      } else {
        result.emplace(f_(std::forward<A>(std::get<I>(*values))...));
      }
    } catch (...) {
      return host().status_add_context(status_from_current_exception(), "%s",
                                       name);
    }
    if constexpr (!std::is_void_v<R>) {
      try {
        *ret = ToAny<Stored>::make(std::move(*result), Where{name, Where::kResult});
      } catch (...) {
        return status_from_current_exception();
      }
    }
    return nullptr;
  }

  F f_;
  std::string name_;
};

template <class F, class R, class Args>
struct MakeTyped;
template <class F, class R, class... A>
struct MakeTyped<F, R, std::tuple<A...>> {
  using type = Typed<F, R, A...>;
};

}  // namespace detail

/* A reference to a packed function (kc_func): retained on copy, released
 * on destruction. Calling it packs C++ values into kc_any arguments and
 * returns the result as an Any; a failed call throws Error with the
 * callee's status. Thread-safe as far as the function is. */
class Function {
 public:
  Function() noexcept = default;

  /* The function registered as `name`. Throws Error: NOT_FOUND, listing
   * the nearest registered names. */
  static Function get_global(std::string_view name) {
    kc_func* f = nullptr;
    check(host().func_registry_lookup({name.data(), name.size()}, &f));
    return borrow(f);
  }

  /* A typed function (see above) that is not registered: to return a
   * closure, or pass one as an argument. `name` is used in its messages.
   * Throws Error: RESOURCE_EXHAUSTED. */
  template <class F>
  static Function from(F&& f, std::string_view name = "function") {
    using Fn = std::decay_t<F>;
    using S = detail::Sig<Fn>;
    using T = typename detail::MakeTyped<Fn, typename S::Result,
                                         typename S::Args>::type;
    auto* typed = new T(Fn(std::forward<F>(f)), std::string(name));
    kc_func* out = nullptr;
    /* On failure func_create runs the deleter: nothing leaks. */
    check(host().func_create(nullptr, &T::call, typed, &T::destroy, &out));
    return adopt(out);
  }

  /* Takes a new reference to `f` (may be null). */
  static Function borrow(kc_func* f) noexcept {
    if (f) host().object_retain(KC_OBJECT(f));
    return adopt(f);
  }
  /* Takes over the caller's reference to `f`. */
  static Function adopt(kc_func* f) noexcept {
    Function fn;
    fn.f_ = f;
    return fn;
  }

  Function(const Function& o) noexcept : f_(o.f_) {
    if (f_) host().object_retain(KC_OBJECT(f_));
  }
  Function(Function&& o) noexcept : f_(o.f_) { o.f_ = nullptr; }
  Function& operator=(Function o) noexcept {
    std::swap(f_, o.f_);
    return *this;
  }
  ~Function() {
    if (f_) host().object_release(KC_OBJECT(f_));
  }

  /* Calls the function with `args`, each packed as a kc_any: integers,
   * floats, bool, strings (const char*, std::string, std::string_view),
   * DLTensor*, Tensor, TensorObject, Function, kc_func*, Any, kc_any,
   * DLDataType, DLDevice, void*, nullptr (none), std::optional<T>,
   * std::vector<T> (an array) and callables (made into functions with
   * Function::from). What outlives the call is lent, not copied: const
   * char* and std::string text (unless it holds a NUL), tensors, functions.
   * Allocated for the call and released after it: a std::string_view
   * longer than KC_SMALL_STR_MAX (the text has no NUL to end it), an array
   * for a std::vector, a function for a callable. The callee may keep what
   * it is given only by retaining it, as any packed function. Throws Error
   * with the callee's status; INVALID_ARGUMENT when this is null. */
  template <class... Args>
  Any operator()(Args&&... args) const;

  /* Calls with arguments already packed (borrowed for the call). */
  Any call_packed(const kc_any* args, int32_t nargs) const {
    return call_packed(f_, args, nargs);
  }
  /* The same for a borrowed kc_func* (no reference taken). */
  static Any call_packed(const kc_func* f, const kc_any* args,
                         int32_t nargs) {
    Any ret; /* the callee writes the result in place */
    kc_status* st = host().func_call(f, args, nargs, &ret.v_);
    if (st) throw Error(st); /* ret releases what a callee left there */
    return ret;
  }

  kc_func* get() const noexcept { return f_; }
  kc_func* release() noexcept {
    kc_func* f = f_;
    f_ = nullptr;
    return f;
  }
  explicit operator bool() const noexcept { return f_ != nullptr; }

 private:
  kc_func* f_ = nullptr;
};

/* Registers `f` under `name` as a typed function (see above): a lambda, a
 * function pointer, a std::function, or a Function already made. `flags`:
 * KC_REGISTER_OVERRIDE replaces a function registered under the name.
 * Throws Error: ALREADY_EXISTS for a name taken (without the flag),
 * INVALID_ARGUMENT for a malformed name, RESOURCE_EXHAUSTED. In a plugin's
 * init (inside kcall::guard), a failure discards everything the init
 * registered. */
template <class F>
void register_func(std::string_view name, F&& f, uint32_t flags = 0) {
  if constexpr (std::is_same_v<std::decay_t<F>, Function>) {
    check(host().func_registry_register({name.data(), name.size()}, f.get(),
                                        flags));
  } else {
    Function fn = Function::from(std::forward<F>(f), name);
    check(host().func_registry_register({name.data(), name.size()}, fn.get(),
                                        flags));
  }
}

namespace detail {

template <>
struct FromAny<Function> {
  static Function get(const kc_any& v, const Where& w) {
    return Function::borrow(FromAny<kc_func*>::get(v, w));
  }
};

template <>
struct FromAny<TensorObject> {
  static TensorObject get(const kc_any& v, const Where& w) {
    if (v.type_index != KC_TYPE_TENSOR) {
      if (v.type_index == KC_TYPE_DLTENSOR_PTR) {
        throw Error(KC_INVALID_ARGUMENT,
                    w.prefix() + "expected a tensor object, got a borrowed "
                                 "DLTensor (take DLTensor* or kcall::Tensor "
                                 "for those)");
      }
      mismatch(w, "tensor", v);
    }
    return TensorObject::borrow(reinterpret_cast<kc_tensor*>(v.u.v_obj));
  }
};

template <>
struct FromAny<Any> {
  static Any get(const kc_any& v, const Where&) { return Any::borrow(v); }
};

template <>
struct ToAny<Function> {
  static kc_any make(Function value, const Where&) {
    if (!value) return kc_any_none();
    return kc_any_object(KC_OBJECT(value.release()));
  }
};

template <>
struct ToAny<TensorObject> {
  static kc_any make(TensorObject value, const Where&) {
    if (!value) return kc_any_none();
    return kc_any_object(KC_OBJECT(value.release()));
  }
};

template <>
struct ToAny<Any> {
  static kc_any make(Any value, const Where& w) {
    if (value.type_index() == KC_TYPE_DLTENSOR_PTR ||
        value.type_index() == KC_TYPE_RAW_STR) {
      throw Error(KC_INVALID_ARGUMENT,
                  w.prefix() + "a borrowed " + value.type_name() +
                      " cannot be returned (return a kcall::TensorObject "
                      "or a string, which own their data)");
    }
    return value.release();
  }
};

template <class T>
struct ToAny<std::vector<T>> {
  static kc_any make(const std::vector<T>& value, const Where& w) {
    std::vector<Any> items;
    items.reserve(value.size());
    for (size_t i = 0; i < value.size(); ++i) {
      items.push_back(Any::adopt(ToAny<T>::make(value[i], w.at_item(i))));
    }
    /* Any is a kc_any and nothing else, so the items are an array of
     * them; the array retains each. */
    static_assert(sizeof(Any) == sizeof(kc_any), "Any is one kc_any");
    std::vector<kc_any> raw;
    raw.reserve(items.size());
    for (const Any& a : items) raw.push_back(a.raw());
    kc_array* array = nullptr;
    check(host().array_create(nullptr, raw.data(), raw.size(), &array));
    return kc_any_object(KC_OBJECT(array));
  }
};

/* ToArg<T>::pack(value, out, index) writes the kc_any to pass for value
 * (argument `index`) into *out, borrowing where the value outlives the
 * call, and returns true when *out holds a reference of its own, to be
 * dropped after the call. Written in place: a kc_any copied through memory
 * right after it was built stalls the loads that read it back. */

/* Where a call's arguments come from, in messages. */
constexpr const char* kCaller = "calling a function";

template <class T, class = void>
struct ToArg {
  static bool pack(const T& value, kc_any* out, int32_t index) {
    if constexpr (has_one_signature<T>::value) {
      *out = kc_any_object(KC_OBJECT(Function::from(value).release()));
    } else {
      *out = ToAny<T>::make(value, Where{kCaller, index});
    }
    return kc_any_is_object(out);
  }
};

template <>
struct ToArg<const char*> {
  static bool pack(const char* value, kc_any* out, int32_t) {
    *out = value ? kc_any_cstr(value) : kc_any_none();
    return false;
  }
};
template <>
struct ToArg<char*> : ToArg<const char*> {};

template <>
struct ToArg<std::string> {
  static bool pack(const std::string& value, kc_any* out, int32_t index) {
    /* c_str() is the whole text unless it holds a NUL. */
    if (value.find('\0') == std::string::npos) {
      *out = kc_any_cstr(value.c_str());
      return false;
    }
    *out = ToAny<std::string_view>::make(value, Where{kCaller, index});
    return kc_any_is_object(out);
  }
};

template <>
struct ToArg<DLTensor*> {
  static bool pack(DLTensor* value, kc_any* out, int32_t) {
    *out = kc_any_dltensor(value);
    return false;
  }
};
template <>
struct ToArg<const DLTensor*> {
  static bool pack(const DLTensor* value, kc_any* out, int32_t) {
    *out = kc_any_dltensor(const_cast<DLTensor*>(value));
    return false;
  }
};
template <>
struct ToArg<Tensor> {
  static bool pack(const Tensor& value, kc_any* out, int32_t) {
    *out = kc_any_dltensor(const_cast<DLTensor*>(value.raw()));
    return false;
  }
};
template <>
struct ToArg<Function> {
  static bool pack(const Function& value, kc_any* out, int32_t) {
    *out = kc_any_object(KC_OBJECT(value.get()));
    return false;
  }
};
template <>
struct ToArg<TensorObject> {
  static bool pack(const TensorObject& value, kc_any* out, int32_t) {
    *out = kc_any_object(KC_OBJECT(value.get()));
    return false;
  }
};
template <>
struct ToArg<kc_func*> {
  static bool pack(kc_func* value, kc_any* out, int32_t) {
    *out = kc_any_object(KC_OBJECT(value));
    return false;
  }
};
template <>
struct ToArg<Any> {
  static bool pack(const Any& value, kc_any* out, int32_t) {
    *out = value.raw();
    return false;
  }
};
template <>
struct ToArg<kc_any> {
  static bool pack(const kc_any& value, kc_any* out, int32_t) {
    *out = value;
    return false;
  }
};
template <class T>
struct ToArg<std::optional<T>> {
  static bool pack(const std::optional<T>& value, kc_any* out, int32_t index) {
    if (value) return ToArg<T>::pack(*value, out, index);
    *out = kc_any_none();
    return false;
  }
};

/* The arguments of one call, and which of them hold a reference of their
 * own (dropped when the call is over). */
template <size_t N>
struct Packed {
  kc_any values[N > 0 ? N : 1];
  bool owned[N > 0 ? N : 1] = {};
  Packed() = default;
  Packed(const Packed&) = delete;
  Packed& operator=(const Packed&) = delete;
  ~Packed() {
    for (size_t i = 0; i < N; ++i) {
      if (owned[i]) host().any_release(&values[i]);
    }
  }
};

}  // namespace detail

/* Calls the borrowed function `f` as Function's call operator does, without
 * taking a reference to it: for a kc_func* parameter, where the atomic
 * increment and decrement of a kcall::Function one would dominate a cheap
 * call. */
template <class... Args>
Any call(const kc_func* f, Args&&... args) {
  detail::Packed<sizeof...(Args)> p;
  size_t i = 0;
  /* A comma fold runs left to right. */
  ((p.owned[i] = detail::ToArg<std::decay_t<Args>>::pack(
        args, &p.values[i], static_cast<int32_t>(i)),
    ++i),
   ...);
  (void)i;
  return Function::call_packed(f, p.values,
                               static_cast<int32_t>(sizeof...(Args)));
}

template <class... Args>
Any Function::operator()(Args&&... args) const {
  return call(f_, std::forward<Args>(args)...);
}

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
