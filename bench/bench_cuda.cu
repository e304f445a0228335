/*
 * bench_cuda — what kcall adds to launching tiny kernels on a GPU.
 *
 * A program of 1,000 chained custom calls (y = x + 1 on f32[128], each a
 * GPU custom call that launches one kernel) is run
 *   - on the stream path (compiled with KC_COMPILE_NO_CUDA_GRAPH, run with
 *     kc_executable_execute_into on the caller's stream), against a raw
 *     loop launching the same kernel 1,000 times on a stream;
 *   - on the graph path (kcall captures the run into a CUDA graph and
 *     replays it when execute_into is called again with the same
 *     addresses), against a CUDA graph of the same 1,000 launches made by
 *     hand with stream capture.
 * Each figure is the best of several trials of many runs, per kernel, in
 * microseconds; the ratios are kcall / baseline (targets: stream <= 1.05,
 * graph <= 1.1). The results are checked (x + 1000) before timing.
 *
 * Without a GPU (no libkcall_cuda, no driver, no device) it prints why and
 * writes {"benchmark": "bench_cuda", "skipped": "no CUDA device: ..."}.
 */
#include <cuda_runtime.h>
#include <kcall/kcall.h>
#include <kcall/device.h>
#include <kcall/program.h>
#include <kcall/xcall.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>

extern "C" {
#include "bench_util.h"
}

namespace {

constexpr int kChain = 1000;
constexpr int kN = 128;

__global__ void add_one_kernel(const float* x, float* y) {
  y[threadIdx.x] = x[threadIdx.x] + 1.0f;
}

/* The GPU custom call: buffers = {x, y}. */
void add_one_target(void* stream, void** buffers, const char*, size_t) {
  add_one_kernel<<<1, kN, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(buffers[0]), static_cast<float*>(buffers[1]));
}

void die_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  fprintf(stderr, "bench_cuda: %s: %s\n", what, cudaGetErrorString(err));
  exit(1);
}

void die_kc(kc_status* st, const char* what) {
  if (!st) return;
  char text[2048];
  kc_status_format(st, text, sizeof text);
  fprintf(stderr, "bench_cuda: %s: %s\n", what, text);
  kc_status_destroy(st);
  exit(1);
}

int write_skip(const char* json_path, const char* reason) {
  printf("bench_cuda: skipped: %s\n", reason);
  if (!json_path) return 0;
  FILE* f = fopen(json_path, "w");
  if (!f) return 1;
  fprintf(f, "{\"benchmark\": \"bench_cuda\", \"skipped\": \"");
  for (const char* p = reason; *p; ++p) {
    if (*p == '"' || *p == '\\') fputc('\\', f);
    if ((unsigned char)*p >= 0x20) fputc(*p, f);
  }
  fprintf(f, "\"}\n");
  return fclose(f) == 0 ? 0 : 1;
}

/* ---- the baselines -------------------------------------------------------- */

struct Raw {
  cudaStream_t stream;
  float* a;
  float* b;
};

/* 1,000 launches, ping-ponging between two buffers, per iteration. */
void raw_loop(void* ctx, int64_t iters) {
  Raw* r = static_cast<Raw*>(ctx);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < kChain; ++i) {
      const float* x = i % 2 ? r->b : r->a;
      float* y = i % 2 ? r->a : r->b;
      add_one_kernel<<<1, kN, 0, r->stream>>>(x, y);
    }
  }
  die_cuda(cudaStreamSynchronize(r->stream), "raw loop");
}

struct HandGraph {
  cudaStream_t stream;
  cudaGraphExec_t exec;
};

void hand_graph(void* ctx, int64_t iters) {
  HandGraph* g = static_cast<HandGraph*>(ctx);
  for (int64_t it = 0; it < iters; ++it) {
    die_cuda(cudaGraphLaunch(g->exec, g->stream), "cudaGraphLaunch");
  }
  die_cuda(cudaStreamSynchronize(g->stream), "hand-made graph");
}

/* ---- kcall ---------------------------------------------------------------- */

std::string chain_program() {
  std::string s = "HloModule chain\n\nENTRY main {\n";
  s += "  v0 = f32[128]{0} parameter(0)\n";
  for (int i = 1; i <= kChain; ++i) {
    s += (i == kChain ? "  ROOT v" : "  v") + std::to_string(i) +
         " = f32[128]{0} custom-call(v" + std::to_string(i - 1) +
         "), custom_call_target=\"bench.add_one\"\n";
  }
  return s + "}\n";
}

struct Kcall {
  kc_executable* exe;
  cudaStream_t stream;
  const DLTensor* in[1];
  const DLTensor* out[1];
};

void kcall_runs(void* ctx, int64_t iters) {
  Kcall* k = static_cast<Kcall*>(ctx);
  kc_execute_options opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.stream = k->stream;
  for (int64_t it = 0; it < iters; ++it) {
    die_kc(kc_executable_execute_into(k->exe, k->in, 1, &opts, k->out, 1),
           "execute_into");
  }
  die_cuda(cudaStreamSynchronize(k->stream), "kcall runs");
}

kc_executable* compile_chain(uint32_t flags) {
  std::string text = chain_program();
  kc_program* p = nullptr;
  die_kc(kc_program_parse(kc_string_view{text.data(), text.size()}, &p),
         "parsing the chain");
  kc_compile_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.platform = KC_PLATFORM_CUDA;
  o.device_id = 0;
  o.flags = flags;
  kc_executable* exe = nullptr;
  die_kc(kc_program_compile(p, &o, &exe), "compiling the chain");
  kc_program_destroy(p);
  return exe;
}

/* Sets x[i] = i (the baselines' runs changed it), runs once and checks
 * y = x + 1000. */
void check_chain(Kcall* k, float* host) {
  for (int i = 0; i < kN; ++i) host[i] = (float)i;
  die_cuda(cudaMemcpy(k->in[0]->data, host, kN * sizeof(float),
                      cudaMemcpyHostToDevice),
           "resetting the input");
  kcall_runs(k, 1);
  die_cuda(cudaMemcpy(host, k->out[0]->data, kN * sizeof(float),
                      cudaMemcpyDeviceToHost),
           "reading the result");
  for (int i = 0; i < kN; ++i) {
    if (host[i] != (float)i + kChain) {
      fprintf(stderr, "bench_cuda: y[%d] = %g, expected %g\n", i, host[i],
              (double)i + kChain);
      exit(1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* json = kb_json_arg(argc, argv);
  const DLDevice gpu = {kDLCUDA, 0};
  kc_status* st = kc_device_check(gpu);
  if (st) {
    char reason[1024];
    kc_status_format(st, reason, sizeof reason);
    kc_status_destroy(st);
    const char* msg = strstr(reason, "no CUDA device");
    return write_skip(json, msg ? msg : reason);
  }
  die_cuda(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream;
  die_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
           "cudaStreamCreate");
  float *a, *b;
  die_cuda(cudaMalloc(&a, kN * sizeof(float)), "cudaMalloc");
  die_cuda(cudaMalloc(&b, kN * sizeof(float)), "cudaMalloc");
  float host[kN];
  for (int i = 0; i < kN; ++i) host[i] = (float)i;
  die_cuda(cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice), "copy");

  const int64_t iters = 20;
  const int trials = 5;
  const double per = 1e-3 / kChain; /* ns per run -> us per kernel */
  kb_report r = {"bench_cuda", 0, {0}, {0}};

  Raw raw = {stream, a, b};
  raw_loop(&raw, 2); /* warm up: module load, first launches */
  double raw_ns = kb_time_per_iter(raw_loop, &raw, iters, trials);
  kb_report_add(&r, "raw_loop_us_per_kernel", raw_ns * per);

  cudaGraph_t graph;
  HandGraph hg = {stream, nullptr};
  die_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
           "cudaStreamBeginCapture");
  for (int i = 0; i < kChain; ++i) {
    add_one_kernel<<<1, kN, 0, stream>>>(i % 2 ? b : a, i % 2 ? a : b);
  }
  die_cuda(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  die_cuda(cudaGraphInstantiate(&hg.exec, graph, 0), "cudaGraphInstantiate");
  hand_graph(&hg, 2);
  double graph_ns = kb_time_per_iter(hand_graph, &hg, iters, trials);
  kb_report_add(&r, "hand_graph_us_per_kernel", graph_ns * per);

  die_kc(kc_xcall_register(KC_SV_LIT("bench.add_one"), KC_PLATFORM_CUDA,
                           KC_XCALL_API_ORIGINAL,
                           reinterpret_cast<void (*)(void)>(add_one_target),
                           KC_XCALL_GRAPH_SAFE),
         "registering bench.add_one");
  int64_t shape[1] = {kN};
  DLTensor in = {a, gpu, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  DLTensor out = {b, gpu, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  Kcall k = {compile_chain(KC_COMPILE_NO_CUDA_GRAPH), stream, {&in}, {&out}};
  check_chain(&k, host);
  double stream_ns = kb_time_per_iter(kcall_runs, &k, iters, trials);
  kb_report_add(&r, "kcall_stream_us_per_kernel", stream_ns * per);
  kb_report_add(&r, "stream_ratio_to_raw_loop", stream_ns / raw_ns);
  kc_executable_destroy(k.exe);

  Kcall kg = {compile_chain(0), stream, {&in}, {&out}};
  check_chain(&kg, host); /* the first run goes on the stream */
  kcall_runs(&kg, 2);     /* the second captures the graph, then replays */
  double kgraph_ns = kb_time_per_iter(kcall_runs, &kg, iters, trials);
  kb_report_add(&r, "kcall_graph_us_per_kernel", kgraph_ns * per);
  kb_report_add(&r, "graph_ratio_to_hand_graph", kgraph_ns / graph_ns);
  kc_executable_destroy(kg.exe);

  cudaGraphExecDestroy(hg.exec);
  cudaGraphDestroy(graph);
  cudaFree(a);
  cudaFree(b);
  cudaStreamDestroy(stream);
  return kb_report_finish(&r, json);
}
