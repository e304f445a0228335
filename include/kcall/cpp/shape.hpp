/*
 * kcall/cpp/shape.hpp — shape functions: kcall::InferenceContext,
 * kcall::ShapeHandle. Part of the C++ layer: kcall/kcall.hpp includes every
 * part and says how the layer works (the host table, ownership, threads).
 */
#ifndef KCALL_CPP_SHAPE_HPP_
#define KCALL_CPP_SHAPE_HPP_

#include <cstdint>
#include <vector>

#include "kcall/cpp/attrs.hpp"

namespace kcall {

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

}  // namespace kcall

#endif /* KCALL_CPP_SHAPE_HPP_ */
