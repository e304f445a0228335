/* broadcast and iota (backend.h). */
#include <stdio.h>

#include "kernels/cuda/kernels.cuh"

namespace kc_cuda {
namespace {

enum { MAX_RANK = 32 };

/* The result's dims and, for each, the operand's stride along it (0 for
 * a dimension the operand lacks); passed by value. */
struct BroadcastPlan {
  int32_t rank;
  int64_t dims[MAX_RANK];
  int64_t stride[MAX_RANK];
};

struct Bytes16 {
  uint64_t lo, hi;
};

template <class E>
__global__ void broadcast_kernel(BroadcastPlan p, const E* __restrict__ in,
                                 E* __restrict__ out, int64_t n) {
  KC__CUDA_FOR(e, n) {
    int64_t rest = e, src = 0;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      int64_t q = rest / p.dims[d];
      src += (rest - q * p.dims[d]) * p.stride[d];
      rest = q;
    }
    out[e] = in[src];
  }
}

template <class E>
kc_status* run_broadcast(const Launch& l, const BroadcastPlan& p, const void* in, void* out) {
  broadcast_kernel<E><<<kc__cuda_grid_for(l.n), KC__CUDA_BLOCK, 0, l.stream>>>(
      p, static_cast<const E*>(in), static_cast<E*>(out), l.n);
  return launch_status(l);
}

/* The integer k as T, as the host's (T)k makes it. */
template <class T> __device__ T from_index(int64_t k) { return (T)k; }
template <> __device__ f16 from_index<f16>(int64_t k) { return from_f64<f16>::make((double)k); }
template <> __device__ bf16 from_index<bf16>(int64_t k) { return from_f64<bf16>::make((double)k); }

template <class T>
__global__ void iota_kernel(T* __restrict__ out, int64_t len, int64_t inner, int64_t n) {
  KC__CUDA_FOR(e, n) out[e] = from_index<T>((e / inner) % len);
}

}  // namespace
}  // namespace kc_cuda

using namespace kc_cuda;

#define KC__BAD(...) KC__CUDA_STATUS(KC_INVALID_ARGUMENT, __VA_ARGS__)

extern "C" kc_status* kc__cuda_broadcast_launch(int32_t ordinal, cudaStream_t stream,
                                                const kc__broadcast_desc* d) {
  int o = (int)ordinal;
  if (d->out_rank < 0 || d->out_rank > MAX_RANK || d->in_rank < 0 || d->in_rank > d->out_rank) {
    return KC__BAD("broadcast on cuda:%d: ranks: expected 0 <= in_rank (%d) <= out_rank (%d) "
                   "<= %d",
                   o, (int)d->in_rank, (int)d->out_rank, (int)MAX_RANK);
  }
  size_t es = d->esize;
  if (es != 1 && es != 2 && es != 4 && es != 8 && es != 16) {
    return KC__BAD("broadcast on cuda:%d: esize: expected 1, 2, 4, 8 or 16, got %zu", o, es);
  }
  if ((d->out_rank && !d->out_dims) || (d->in_rank && (!d->in_dims || !d->map))) {
    return KC__BAD("broadcast on cuda:%d: the dims or the map are NULL", o);
  }
  BroadcastPlan p{};
  p.rank = d->out_rank;
  int64_t n = 1;
  for (int32_t i = 0; i < d->out_rank; ++i) {
    if (d->out_dims[i] < 0) {
      return KC__BAD("broadcast on cuda:%d: out_dims[%d]: expected 0 or more, got %lld", o,
                     (int)i, (long long)d->out_dims[i]);
    }
    p.dims[i] = d->out_dims[i];
    n *= d->out_dims[i];
  }
  bool used[MAX_RANK] = {false};
  int64_t stride = 1;
  for (int32_t i = d->in_rank - 1; i >= 0; --i) {
    int64_t m = d->map[i];
    if (m < 0 || m >= d->out_rank || used[m]) {
      return KC__BAD("broadcast on cuda:%d: map[%d]: expected a result dim in 0..%d not named "
                     "before, got %lld",
                     o, (int)i, (int)d->out_rank - 1, (long long)m);
    }
    if (d->in_dims[i] != d->out_dims[m]) {
      return KC__BAD("broadcast on cuda:%d: in_dims[%d]: expected %lld (out_dims[%lld]), got "
                     "%lld",
                     o, (int)i, (long long)d->out_dims[m], (long long)m,
                     (long long)d->in_dims[i]);
    }
    used[m] = true;
    p.stride[m] = stride;
    stride *= d->in_dims[i];
  }
  if (n == 0) return nullptr;
  if (!d->in || !d->out) return KC__BAD("broadcast on cuda:%d: in or out is NULL", o);
  if (kc_status* s = kc__cuda_use_device(ordinal)) return s;
  Launch l{stream, ordinal, n, "broadcast"};
  switch (es) {
    case 1: return run_broadcast<uint8_t>(l, p, d->in, d->out);
    case 2: return run_broadcast<uint16_t>(l, p, d->in, d->out);
    case 4: return run_broadcast<uint32_t>(l, p, d->in, d->out);
    case 8: return run_broadcast<uint64_t>(l, p, d->in, d->out);
    default: return run_broadcast<Bytes16>(l, p, d->in, d->out);
  }
}

extern "C" kc_status* kc__cuda_iota_launch(int32_t ordinal, cudaStream_t stream, void* out,
                                           DLDataType dtype, int32_t rank,
                                           const int64_t* dims, int32_t dim) {
  int o = (int)ordinal;
  Type t = type_of(dtype);
  if (t == KC__E_NONE || t == KC__E_pred) {
    return KC__CUDA_STATUS(KC_UNIMPLEMENTED,
                           "iota on cuda:%d: dtype (code %u, %u bits, %u lanes) is not "
                           "supported (supported: s8..s64, u8..u64, f16, bf16, f32, f64)",
                           o, (unsigned)dtype.code, (unsigned)dtype.bits, (unsigned)dtype.lanes);
  }
  if (rank < 1 || rank > MAX_RANK || !dims) {
    return KC__BAD("iota on cuda:%d: rank: expected 1 to %d with dims, got %d%s", o,
                   (int)MAX_RANK, (int)rank, dims ? "" : " and NULL dims");
  }
  if (dim < 0 || dim >= rank) {
    return KC__BAD("iota on cuda:%d: dim: expected 0 to %d (the rank is %d), got %d", o,
                   (int)rank - 1, (int)rank, (int)dim);
  }
  int64_t n = 1, inner = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      return KC__BAD("iota on cuda:%d: dims[%d]: expected 0 or more, got %lld", o, (int)i,
                     (long long)dims[i]);
    }
    n *= dims[i];
    if (i > dim) inner *= dims[i];
  }
  if (n == 0) return nullptr;
  if (!out) return KC__BAD("iota on cuda:%d: out is NULL", o);
  if (kc_status* s = kc__cuda_use_device(ordinal)) return s;
  Launch l{stream, ordinal, n, "iota"};
  int64_t len = dims[dim];
  return with_type(t, [&](auto tag) -> kc_status* {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, pred>::value) {
      return nullptr; /* refused above */
    } else {
      iota_kernel<T><<<kc__cuda_grid_for(n), KC__CUDA_BLOCK, 0, stream>>>(
          static_cast<T*>(out), len, inner, n);
      return launch_status(l);
    }
  });
}
