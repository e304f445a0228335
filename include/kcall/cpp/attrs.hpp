/*
 * kcall/cpp/attrs.hpp — kcall::Attrs, a call's resolved attributes. Part of
 * the C++ layer: kcall/kcall.hpp includes every part and says how the layer
 * works (the host table, ownership, threads).
 */
#ifndef KCALL_CPP_ATTRS_HPP_
#define KCALL_CPP_ATTRS_HPP_

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kcall/cpp/value.hpp"

namespace kcall {

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

}  // namespace kcall

#endif /* KCALL_CPP_ATTRS_HPP_ */
