/*
 * kcall/cpp/value.hpp — values: the conversions between C++ types and
 * kc_any, kcall::Any and kcall::TensorObject. Part of the C++ layer:
 * kcall/kcall.hpp includes every part and says how the layer works (the host
 * table, ownership, threads).
 */
#ifndef KCALL_CPP_VALUE_HPP_
#define KCALL_CPP_VALUE_HPP_

#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kcall/cpp/tensor.hpp"

namespace kcall {

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
                "see \"values and packed functions\" in kcall/cpp/value.hpp");
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
                "\"values and packed functions\" in kcall/cpp/value.hpp");
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

}  // namespace kcall

#endif /* KCALL_CPP_VALUE_HPP_ */
