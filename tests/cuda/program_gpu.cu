// Programs on a real CUDA device: a GPU-convention custom call with tuple
// operands and results (XLA's nine-entry layout), built-in instructions on
// the device, the caller's stream, and CUDA graphs captured, replayed and
// recaptured when addresses change. Exits 77 (ctest: skipped) with "no
// CUDA device: ..." where there is none.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kcall/kcall.h"

static int failures = 0;

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

#define CHECK_OK(expr)                                                        \
  do {                                                                        \
    kc_status* st_ = (expr);                                                  \
    if (st_) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,      \
                   kc_status_get_message(st_));                               \
      kc_status_destroy(st_);                                                 \
      ++failures;                                                             \
    }                                                                         \
  } while (0)

#define CUDA_OK(expr)                                                         \
  do {                                                                        \
    cudaError_t e_ = (expr);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,      \
                   cudaGetErrorString(e_));                                   \
      ++failures;                                                             \
    }                                                                         \
  } while (0)

// Checks the tuple tables on the device, computes, and fills the root
// tuple: all on the stream, so that the call can be captured.
__global__ void nine_kernel(void** p0_table, void** sub_table, const float* s0,
                            const float* s1, const float* s2, const float* s3,
                            float* o0, float* o1, void** root, int* bad) {
  int i = threadIdx.x;
  if (i == 0) {
    if (p0_table[0] != s0 || p0_table[2] != s3 || sub_table[0] != s1 ||
        sub_table[1] != s2 || p0_table[1] != (void*)sub_table) {
      *bad = 1;
    }
    root[0] = o0;
    root[1] = o1;
  }
  if (i < 2) {
    o0[i] = s0[i] + s1[i];
    o1[i] = s2[i] * s3[i];
  }
}

static int* d_bad = nullptr;
static int nine_calls = 0;

extern "C" void gpu_nine(void* stream, void** b, const char*, size_t) {
  ++nine_calls;
  nine_kernel<<<1, 32, 0, (cudaStream_t)stream>>>(
      (void**)b[0], (void**)b[2], (const float*)b[1], (const float*)b[3],
      (const float*)b[4], (const float*)b[5], (float*)b[7], (float*)b[8],
      (void**)b[6], d_bad);
}

static const char* kHlo =
    "HloModule nine\nENTRY main {\n"
    " a = f32[2] parameter(0)\n b = f32[2] parameter(1)\n"
    " c = f32[2] parameter(2)\n d = f32[2] parameter(3)\n"
    " sub = (f32[2], f32[2]) tuple(b, c)\n"
    " p0 = (f32[2], (f32[2], f32[2]), f32[2]) tuple(a, sub, d)\n"
    " cc = (f32[2], f32[2]) custom-call(p0), custom_call_target=\"gpu.nine\", "
    "api_version=API_VERSION_ORIGINAL\n"
    " g0 = f32[2] get-tuple-element(cc), index=0\n"
    " g1 = f32[2] get-tuple-element(cc), index=1\n"
    " n = f32[2] negate(g0)\n"
    " ROOT r = (f32[2], f32[2]) tuple(n, g1)\n}\n";

static void read2(const DLTensor* t, float* out) {
  CUDA_OK(cudaMemcpy(out, t->data, 2 * sizeof(float), cudaMemcpyDeviceToHost));
}

int main() {
  int32_t count = 0;
  kc_status* st = kc_device_get_count(kDLCUDA, &count);
  if (st) {
    std::printf("SKIP: %s\n", kc_status_get_message(st));
    kc_status_destroy(st);
    return 77;
  }
  DLDevice dev = {kDLCUDA, 0};
  DLDataType f32 = kc_dtype_make(kDLFloat, 32, 1);
  CUDA_OK(cudaMalloc(&d_bad, sizeof(int)));
  CUDA_OK(cudaMemset(d_bad, 0, sizeof(int)));
  CHECK_OK(kc_xcall_register(kc_sv("gpu.nine"), KC_PLATFORM_CUDA,
                             KC_XCALL_API_ORIGINAL, (void (*)(void))gpu_nine,
                             KC_XCALL_GRAPH_SAFE));
  kc_program* p = nullptr;
  CHECK_OK(kc_program_parse(kc_sv(kHlo), &p));
  kc_compile_options co;
  std::memset(&co, 0, sizeof co);
  co.struct_size = sizeof co;
  co.platform = KC_PLATFORM_CUDA;
  kc_executable* exe = nullptr;
  CHECK_OK(kc_program_compile(p, &co, &exe));
  if (!exe) return 1;

  float host[4][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  int64_t shape[1] = {2};
  kc_tensor* in[4];
  const DLTensor* args[4];
  for (int i = 0; i < 4; ++i) {
    CHECK_OK(kc_tensor_create(nullptr, shape, 1, f32, dev, &in[i]));
    args[i] = kc_tensor_get_dltensor(in[i]);
    CUDA_OK(cudaMemcpy(args[i]->data, host[i], sizeof host[i], cudaMemcpyHostToDevice));
  }
  kc_tensor* outs_a[2];
  kc_tensor* outs_b[2];
  for (int i = 0; i < 2; ++i) {
    CHECK_OK(kc_tensor_create(nullptr, shape, 1, f32, dev, &outs_a[i]));
    CHECK_OK(kc_tensor_create(nullptr, shape, 1, f32, dev, &outs_b[i]));
  }
  const DLTensor* oa[2] = {kc_tensor_get_dltensor(outs_a[0]), kc_tensor_get_dltensor(outs_a[1])};
  const DLTensor* ob[2] = {kc_tensor_get_dltensor(outs_b[0]), kc_tensor_get_dltensor(outs_b[1])};

  // Expected counts after each run: (captures, launches).
  struct { const DLTensor* const* outs; uint64_t captures, launches; } plan[] = {
      {oa, 0, 0},  // first run with these addresses: on the stream
      {oa, 1, 1},  // second: captured and launched
      {oa, 1, 2},  // replayed
      {ob, 1, 2},  // other outputs: on the stream, old graph dropped
      {ob, 2, 3},  // recaptured
      {ob, 2, 4},  // replayed
  };
  for (size_t k = 0; k < sizeof plan / sizeof plan[0]; ++k) {
    // New input values every run: a replay must see them.
    host[0][0] = (float)k;
    CUDA_OK(cudaMemcpy(args[0]->data, host[0], sizeof host[0], cudaMemcpyHostToDevice));
    CHECK_OK(kc_executable_execute_into(exe, args, 4, nullptr, plan[k].outs, 2));
    float n[2], g1[2];
    read2(plan[k].outs[0], n);
    read2(plan[k].outs[1], g1);
    CHECK(n[0] == -((float)k + 3) && n[1] == -(2 + 4));
    CHECK(g1[0] == 5 * 7 && g1[1] == 6 * 8);
    kc_executable_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    kc_executable_query(exe, &info);
    if (info.cuda_graph_captures != plan[k].captures ||
        info.cuda_graph_launches != plan[k].launches) {
      std::fprintf(stderr, "run %zu: captures %llu launches %llu, expected %llu %llu\n", k,
                   (unsigned long long)info.cuda_graph_captures,
                   (unsigned long long)info.cuda_graph_launches,
                   (unsigned long long)plan[k].captures,
                   (unsigned long long)plan[k].launches);
      ++failures;
    }
  }
  // The handler's host code ran only when not replaying: 1, 2, 4, 5.
  CHECK(nine_calls == 4);
  int bad = 0;
  CUDA_OK(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
  CHECK(bad == 0);

  // Host inputs, the caller's stream, outputs allocated by kcall.
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DLTensor h[4];
  const DLTensor* hargs[4];
  for (int i = 0; i < 4; ++i) {
    h[i] = DLTensor{host[i], {kDLCPU, 0}, 1, f32, shape, nullptr, 0};
    hargs[i] = &h[i];
  }
  host[0][0] = 100;
  kc_execute_options eo;
  std::memset(&eo, 0, sizeof eo);
  eo.struct_size = sizeof eo;
  eo.stream = stream;
  kc_tensor* out[2] = {nullptr, nullptr};
  CHECK_OK(kc_executable_execute(exe, hargs, 4, &eo, out));
  CUDA_OK(cudaStreamSynchronize(stream));
  if (out[0]) {
    float n[2];
    read2(kc_tensor_get_dltensor(out[0]), n);
    CHECK(n[0] == -103 && n[1] == -6);
    CHECK(kc_tensor_get_dltensor(out[0])->device.device_type == kDLCUDA);
  }
  for (int i = 0; i < 2; ++i) kc_object_release(KC_OBJECT(out[i]));

  // Without graphs, by compile flag: same results, nothing captured.
  kc_executable* plain = nullptr;
  co.flags = KC_COMPILE_NO_CUDA_GRAPH;
  CHECK_OK(kc_program_compile(p, &co, &plain));
  for (int k = 0; k < 3 && plain; ++k) {
    CHECK_OK(kc_executable_execute_into(plain, args, 4, nullptr, oa, 2));
  }
  if (plain) {
    kc_executable_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    kc_executable_query(plain, &info);
    CHECK(info.cuda_graph_captures == 0);
  }
  // A failing device call is reported: dot is refused at compile.
  kc_program* dot = nullptr;
  CHECK_OK(kc_program_parse(
      kc_sv("HloModule d\nENTRY main {\n a = f32[2,2] parameter(0)\n"
            " ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}\n}\n"),
      &dot));
  kc_executable* refused = nullptr;
  co.flags = 0;
  st = kc_program_compile(dot, &co, &refused);
  CHECK(st && kc_status_get_code(st) == KC_UNIMPLEMENTED &&
        std::strstr(kc_status_get_message(st), "dot is not available on CUDA"));
  kc_status_destroy(st);
  kc_program_destroy(dot);

  // Built-in instructions on the device: iota, broadcast, compare (with
  // total order), select, clamp, convert, constants.
  kc_program* builtins = nullptr;
  CHECK_OK(kc_program_parse(
      kc_sv("HloModule b\nENTRY main {\n x = f32[4] parameter(0)\n s = f32[] parameter(1)\n"
            " i = s32[4] iota(), iota_dimension=0\n f = f32[4] convert(i)\n"
            " b = f32[4] broadcast(s), dimensions={}\n"
            " lo = f32[4] constant({0, 0, 0, 0})\n hi = f32[4] constant({2, 2, 2, 2})\n"
            " c = pred[4] compare(x, f), direction=GT, type=TOTALORDER\n"
            " sel = f32[4] select(c, x, b)\n"
            " ROOT r = f32[4] clamp(lo, sel, hi)\n}\n"),
      &builtins));
  kc_executable* bexe = nullptr;
  CHECK_OK(kc_program_compile(builtins, &co, &bexe));
  if (bexe) {
    float xv[4] = {5, 0.5f, -1, 3.5f}, sv = 1.5f;
    int64_t shape4[1] = {4};
    DLTensor tx = {xv, {kDLCPU, 0}, 1, f32, shape4, nullptr, 0};
    DLTensor ts = {&sv, {kDLCPU, 0}, 0, f32, nullptr, nullptr, 0};
    const DLTensor* bargs[2] = {&tx, &ts};
    kc_tensor* r = nullptr;
    CHECK_OK(kc_executable_execute(bexe, bargs, 2, nullptr, &r));
    if (r) {
      float got[4];
      CUDA_OK(cudaMemcpy(got, kc_tensor_get_dltensor(r)->data, sizeof got,
                         cudaMemcpyDeviceToHost));
      // x > iota: 5 > 0 yes -> 5 -> 2; 0.5 > 1 no -> 1.5; -1 > 2 no -> 1.5;
      // 3.5 > 3 yes -> 3.5 -> 2.
      CHECK(got[0] == 2 && got[1] == 1.5f && got[2] == 1.5f && got[3] == 2);
    }
    kc_object_release(KC_OBJECT(r));
  }
  kc_executable_destroy(bexe);
  kc_program_destroy(builtins);

  CUDA_OK(cudaStreamDestroy(stream));
  kc_executable_destroy(plain);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  for (int i = 0; i < 4; ++i) kc_object_release(KC_OBJECT(in[i]));
  for (int i = 0; i < 2; ++i) {
    kc_object_release(KC_OBJECT(outs_a[i]));
    kc_object_release(KC_OBJECT(outs_b[i]));
  }
  CUDA_OK(cudaFree(d_bad));
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
