/*
 * cuda_plugin.cu — the CUDA side of the examples, as a plugin built with
 * nvcc. It reaches kcall only through the host table (<kcall/plugin_api.h>)
 * and links the CUDA runtime itself:
 *
 *   kernels for kDLCUDA of the ops that examples/ops/ops_plugin.c defines
 *   (load both plugins; a kernel may be registered before its op):
 *     Add(x: T, y: T) -> (z: T)       f32 f64 i32, NumPy broadcasting
 *     MatMul(a: T, b: T) -> (product: T)   f32, a tiled shared-memory kernel
 *   the custom call of XLA's guide, A[i] = B[i % 128] + C[i], as the
 *   CUDA target "do_custom_call" in the GPU convention (stream, buffers,
 *   opaque), which examples/cuda/seed_add_gpu.hlo calls;
 *   and y = factor * x as the typed CUDA target "cuda_scale" (f32 buffers
 *   of any rank, the f32 attribute `factor`), which JAX calls on a GPU
 *   through kcall.jax.register_target("cuda_scale", platform="cuda").
 *
 * Every kernel queues its work on the stream kcall hands it
 * (kc_kernel_ctx_get_stream, the custom call's `stream`) and returns
 * without waiting; kcall waits when the caller gave no stream.
 */
#include <cuda_runtime.h>
#include <kcall/plugin_api.h>

#include <stdint.h>

namespace {

constexpr int kMaxRank = 8;

kc_status* cuda_error(cudaError_t err, const char* what) {
  return kc_status_create(KC_INTERNAL, "%s: %s (%s)", what,
                          cudaGetErrorString(err), cudaGetErrorName(err));
}

/* The error of the launch just made, if any. */
kc_status* launch_status(const char* what) {
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cuda_error(err, what);
}

/* Compute runs on the caller's thread, whose current CUDA device kcall
 * does not promise: make the call's device current (cheap when it is). */
kc_status* use_device(kc_kernel_ctx* ctx, const char* op) {
  cudaError_t err = cudaSetDevice(kc_kernel_ctx_get_device(ctx).device_id);
  if (err == cudaSuccess) return nullptr;
  return kc_status_create(KC_INTERNAL, "%s: cudaSetDevice(%d): %s (%s)", op,
                          kc_kernel_ctx_get_device(ctx).device_id,
                          cudaGetErrorString(err), cudaGetErrorName(err));
}

int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

template <class T>
T* data(const DLTensor* t) {
  return reinterpret_cast<T*>(static_cast<char*>(t->data) + t->byte_offset);
}

/* ======================================================================== */
/* Add                                                                      */
/* ======================================================================== */

/* Output dims and each input's element strides against them (0 where the
 * input is broadcast), passed to the kernel by value. */
struct AddGeometry {
  int32_t rank;
  int64_t dims[kMaxRank];
  int64_t sx[kMaxRank];
  int64_t sy[kMaxRank];
};

void broadcast_strides(const DLTensor* t, int32_t rank, const int64_t* out,
                       int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    int32_t ti = i - (rank - t->ndim);
    int64_t d = ti >= 0 ? t->shape[ti] : 1;
    strides[i] = d == 1 && out[i] != 1 ? 0 : s;
    s *= d;
  }
}

template <class T>
__global__ void add_same(const T* x, const T* y, T* z, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    z[i] = x[i] + y[i];
  }
}

template <class T>
__global__ void add_broadcast(const T* x, const T* y, T* z, int64_t n,
                              AddGeometry g) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t rest = i, ox = 0, oy = 0;
    for (int32_t d = g.rank - 1; d >= 0; --d) {
      int64_t idx = rest % g.dims[d];
      rest /= g.dims[d];
      ox += idx * g.sx[d];
      oy += idx * g.sy[d];
    }
    z[i] = x[ox] + y[oy];
  }
}

unsigned grid_for(int64_t n, int block) {
  int64_t blocks = (n + block - 1) / block;
  return (unsigned)(blocks < 65535 ? blocks : 65535);
}

template <class T>
kc_status* add_typed(const DLTensor* x, const DLTensor* y, DLTensor* z,
                     cudaStream_t stream) {
  int64_t n = numel(z);
  if (n == 0) return nullptr;
  const int block = 256;
  if (numel(x) == n && numel(y) == n) {
    add_same<T><<<grid_for(n, block), block, 0, stream>>>(
        data<T>(x), data<T>(y), data<T>(z), n);
  } else {
    AddGeometry g{};
    g.rank = z->ndim;
    for (int32_t i = 0; i < z->ndim; ++i) g.dims[i] = z->shape[i];
    broadcast_strides(x, z->ndim, z->shape, g.sx);
    broadcast_strides(y, z->ndim, z->shape, g.sy);
    add_broadcast<T><<<grid_for(n, block), block, 0, stream>>>(
        data<T>(x), data<T>(y), data<T>(z), n, g);
  }
  return launch_status("Add: launching the CUDA kernel");
}

kc_status* add_compute(void*, kc_kernel_ctx* ctx) {
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* y = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* z = kc_kernel_ctx_get_output(ctx, 0);
  if (z->ndim > kMaxRank) {
    return kc_status_create(KC_UNIMPLEMENTED,
                            "Add on CUDA: rank %d; this kernel takes up to %d",
                            z->ndim, kMaxRank);
  }
  kc_status* st = use_device(ctx, "Add");
  if (st) return st;
  auto stream = static_cast<cudaStream_t>(kc_kernel_ctx_get_stream(ctx));
  if (x->dtype.code == kDLFloat && x->dtype.bits == 32) {
    return add_typed<float>(x, y, z, stream);
  }
  if (x->dtype.code == kDLFloat) return add_typed<double>(x, y, z, stream);
  return add_typed<int32_t>(x, y, z, stream);
}

/* ======================================================================== */
/* MatMul                                                                   */
/* ======================================================================== */

/* C[M, N] = A[M, K] B[K, N]: each block computes a kTile x kTile tile of C,
 * walking K in steps of kTile with the matching tiles of A and B staged in
 * shared memory (each element loaded from global memory once per block
 * instead of once per thread). */
constexpr int kTile = 16;

__global__ void matmul_tiled(const float* a, const float* b, float* c,
                             int64_t m, int64_t k, int64_t n) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile + 1]; /* +1: no bank conflicts */
  int64_t row = blockIdx.y * (int64_t)kTile + threadIdx.y;
  int64_t col = blockIdx.x * (int64_t)kTile + threadIdx.x;
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < k; k0 += kTile) {
    int64_t ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = row < m && ak < k ? a[row * k + ak] : 0.0f;
    bs[threadIdx.y][threadIdx.x] = bk < k && col < n ? b[bk * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kTile; ++p) acc += as[threadIdx.y][p] * bs[p][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

kc_status* matmul_compute(void*, kc_kernel_ctx* ctx) {
  const DLTensor* a = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* b = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* c = kc_kernel_ctx_get_output(ctx, 0);
  int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  if (m == 0 || n == 0) return nullptr;
  if ((m + kTile - 1) / kTile > 65535) {
    return kc_status_create(KC_UNIMPLEMENTED,
                            "MatMul on CUDA: %lld rows; this kernel takes up "
                            "to %d",
                            (long long)m, 65535 * kTile);
  }
  kc_status* st = use_device(ctx, "MatMul");
  if (st) return st;
  auto stream = static_cast<cudaStream_t>(kc_kernel_ctx_get_stream(ctx));
  dim3 block(kTile, kTile);
  dim3 grid((unsigned)((n + kTile - 1) / kTile),
            (unsigned)((m + kTile - 1) / kTile));
  matmul_tiled<<<grid, block, 0, stream>>>(data<float>(a), data<float>(b),
                                           data<float>(c), m, k, n);
  return launch_status("MatMul: launching the CUDA kernel");
}

/* ======================================================================== */
/* The custom call of XLA's guide, on the GPU                               */
/* ======================================================================== */

__global__ void custom_call_kernel(const float* in0, const float* in1,
                                   float* out, int64_t n) {
  int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (idx < n) out[idx] = in0[idx % 128] + in1[idx];
}

/* The GPU convention: buffers holds the operands (B: f32[128], C:
 * f32[2048]) then the result (A: f32[2048]), all device pointers. A failed
 * launch is picked up by kcall after the call. */
void do_custom_call(void* stream, void** buffers, const char*, size_t) {
  const float* in0 = static_cast<const float*>(buffers[0]);
  const float* in1 = static_cast<const float*>(buffers[1]);
  float* out = static_cast<float*>(buffers[2]);
  const int64_t n = 2048;
  const int block_dim = 64;
  const int grid_dim = (int)((n + block_dim - 1) / block_dim);
  custom_call_kernel<<<grid_dim, block_dim, 0,
                       static_cast<cudaStream_t>(stream)>>>(in0, in1, out, n);
}

/* ======================================================================== */
/* A typed target: y = factor * x                                           */
/* ======================================================================== */

__global__ void scale_kernel(const float* x, float* y, int64_t n,
                             float factor) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = factor * x[i];
}

/* The frame's buffers are device memory and its stream the caller's (a
 * program's, or XLA's under JAX): queue the work there and return. */
kc_status* scale_target(kc_xcall_frame* f) {
  int64_t n = numel(&f->args[0]);
  if (n == 0) return nullptr;
  const int block = 256;
  scale_kernel<<<grid_for(n, block), block, 0,
                 static_cast<cudaStream_t>(f->stream)>>>(
      data<float>(&f->args[0]), data<float>(&f->results[0]), n,
      f->attrs[0].v.f32);
  return launch_status("cuda_scale");
}

const kc_xcall_buffer_spec kF32[] = {{{kDLFloat, 32, 1}, -1}};
const kc_xcall_attr_spec kFactor[] = {{"factor", KC_ATTR_F32, 0}};

kc_xcall_signature scale_signature() {
  kc_xcall_signature s = {};
  s.struct_size = sizeof s;
  s.num_args = 1;
  s.args = kF32;
  s.num_results = 1;
  s.results = kF32;
  s.num_attrs = 1;
  s.attrs = kFactor;
  s.flags = KC_XCALL_SIG_NO_INSTANTIATE; /* no state, no scratch */
  return s;
}

/* ======================================================================== */
/* Registration                                                             */
/* ======================================================================== */

kc_status* cuda_kernel(const char* op, kc_kernel_compute_fn compute,
                       const DLDataType* dtypes, int32_t count) {
  kc_kernel_builder* b = nullptr;
  kc_status* st =
      kc_kernel_builder_create(op, kDLCUDA, nullptr, compute, nullptr, &b);
  if (st) return st;
  st = kc_kernel_builder_add_type_constraint(b, "T", dtypes, count);
  if (st) {
    kc_kernel_builder_destroy(b);
    return st;
  }
  return kc_kernel_registry_register(b);
}

kc_status* cuda_init(const kc_host_api* host) {
  const DLDataType add_types[3] = {
      {kDLFloat, 32, 1}, {kDLFloat, 64, 1}, {kDLInt, 32, 1}};
  kc_status* st = cuda_kernel("Add", add_compute, add_types, 3);
  if (!st) st = cuda_kernel("MatMul", matmul_compute, add_types, 1);
  /* The launch is all the target does, and its buffers are fixed for the
   * run: safe to capture into a CUDA graph. */
  if (!st) {
    st = host->xcall_register(KC_SV_LIT("do_custom_call"), KC_PLATFORM_CUDA,
                              KC_XCALL_API_ORIGINAL,
                              reinterpret_cast<void (*)(void)>(do_custom_call),
                              KC_XCALL_GRAPH_SAFE);
  }
  if (!st) {
    static const kc_xcall_signature sig = scale_signature();
    st = host->xcall_register_typed(KC_SV_LIT("cuda_scale"), KC_PLATFORM_CUDA,
                                    &sig, scale_target, nullptr, nullptr,
                                    KC_XCALL_GRAPH_SAFE);
  }
  /* On failure the host discards everything registered above. */
  return st;
}

const char* const kRequired[] = {"kernels", "custom_calls", nullptr};

const kc_plugin_info kInfo = {
    sizeof(kc_plugin_info),
    KC_API_VERSION_MAJOR,
    KC_API_VERSION_MINOR,
    "cuda_examples",
    "1.0.0",
    kRequired,
    cuda_init,
    nullptr,
};

}  // namespace

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kInfo;
}
