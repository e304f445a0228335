/*
 * kcall/cpp/function.hpp — packed functions: kcall::Function, typed
 * functions (register_func, set_body_typed), kcall::call. Part of the C++
 * layer: kcall/kcall.hpp includes every part and says how the layer works
 * (the host table, ownership, threads).
 */
#ifndef KCALL_CPP_FUNCTION_HPP_
#define KCALL_CPP_FUNCTION_HPP_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kcall/cpp/value.hpp"

namespace kcall {

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

}  // namespace kcall

#endif /* KCALL_CPP_FUNCTION_HPP_ */
