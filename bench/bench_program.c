/*
 * The program runtime's overheads, each next to its baseline in one run:
 *   - dispatch: a compiled program of 1000 no-op custom calls vs 1000
 *     direct calls of the same function through a pointer;
 *   - typed decoding: typed calls that read 4 buffers and 2 attributes vs
 *     direct calls handed the same values, in a program of 32 calls (their
 *     frames stay in L1, as one call's frame does in a real program) and
 *     in one of 1000 (about 400 KB of frames and steps, read from L2 each run),
 *     there also with inputs that move between runs (each run then
 *     writes their addresses into the frames again);
 *   - user data: a program of 1000 STATUS_RETURNING calls that read their
 *     target's user data from the status (kc_xcall_status_get_user) vs the
 *     same calls that do not;
 *   - parse and compile of a 10,000-instruction HLO module, and of the
 *     same module as StableHLO (ratio to HLO's: target <= 1.5x).
 * The fixed cost of a run (input checks, output tensors) is measured on a
 * program with the same inputs and no calls, and subtracted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kcall/kcall.h"

#define KB_CALLS 1000

static volatile uintptr_t sink;

static void noop(void* out, const void** ins) {
  (void)ins;
  sink += (uintptr_t)out;
}
static void (*volatile noop_ptr)(void*, const void**) = noop;

/* What a typed handler does with 4 buffers and 2 attributes: touches each. */
static void use_values(void* a, void* b, void* c, void* d, float eps, int64_t n) {
  sink += (uintptr_t)a ^ (uintptr_t)b ^ (uintptr_t)c ^ (uintptr_t)d ^
          (uintptr_t)(eps * 1024.0f) ^ (uintptr_t)n;
}
static void (*volatile use_ptr)(void*, void*, void*, void*, float, int64_t) = use_values;

/* STATUS_RETURNING targets, one reading its user data, one not. */
static void status_noop(void* out, const void** ins, kc_xcall_status* status) {
  (void)ins;
  (void)status;
  sink += (uintptr_t)out;
}
static void status_user(void* out, const void** ins, kc_xcall_status* status) {
  (void)ins;
  sink += (uintptr_t)out + *(const uintptr_t*)kc_xcall_status_get_user(status);
}

static kc_status* typed4(kc_xcall_frame* f) {
  if (f->stage != KC_XCALL_STAGE_EXECUTE) return NULL;
  use_ptr(f->args[0].data, f->args[1].data, f->args[2].data, f->results[0].data,
          f->attrs[0].v.f32, f->attrs[1].v.i64);
  return NULL;
}

static void die(kc_status* st, const char* what) {
  if (!st) return;
  char text[512];
  kc_status_format(st, text, sizeof text);
  fprintf(stderr, "bench_program: %s: %s\n", what, text);
  exit(1);
}

/* A chain of `calls` custom calls, each taking the previous result. */
static kc_program* build_chain(const char* target, int32_t api, int num_args,
                               const kc_attr_dict* attrs, int calls) {
  kc_program_builder* b = NULL;
  die(kc_program_builder_create(KC_SV_LIT("chain"), &b), "builder");
  int64_t n = 16;
  kc_shape* s = NULL;
  die(kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), &n, 1, &s), "shape");
  int32_t params[3];
  for (int i = 0; i < num_args; ++i) {
    die(kc_program_builder_add_parameter(b, i, s, KC_SV_LIT(""), &params[i]), "param");
  }
  int32_t prev = params[0];
  if (calls == 0) die(kc_program_builder_set_root(b, params[0]), "root");
  for (int k = 0; k < calls; ++k) {
    int32_t ops[3] = {prev, params[num_args > 1 ? 1 : 0], params[num_args > 2 ? 2 : 0]};
    kc_custom_call_desc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.target = kc_sv(target);
    d.operands = ops;
    d.num_operands = (size_t)num_args;
    d.result_shape = s;
    d.api_version = api;
    d.attrs = attrs;
    die(kc_program_builder_add_custom_call(b, &d, KC_SV_LIT(""), &prev), "call");
  }
  kc_program* p = NULL;
  die(kc_program_builder_finish(b, &p), "finish");
  kc_shape_destroy(s);
  return p;
}

typedef struct run_ctx {
  kc_executable* exe;
  const DLTensor* const* ins;
  size_t n;
} run_ctx;

static void run_program(void* ctx, int64_t iters) {
  run_ctx* c = ctx;
  kc_execute_options o = {.struct_size = sizeof o};
  for (int64_t i = 0; i < iters; ++i) {
    kc_tensor* out = NULL;
    die(kc_executable_execute(c->exe, c->ins, c->n, &o, &out), "execute");
    kc_object_release(KC_OBJECT(out));
  }
}

/* The same, with the inputs at one of two places in turn, so that every
 * run must write the addresses of its inputs again. */
static void run_program_moving(void* ctx, int64_t iters) {
  run_ctx* c = ctx;
  kc_execute_options o = {.struct_size = sizeof o};
  for (int64_t i = 0; i < iters; ++i) {
    kc_tensor* out = NULL;
    die(kc_executable_execute(c->exe, c[i & 1].ins, c->n, &o, &out), "execute");
    kc_object_release(KC_OBJECT(out));
  }
}

static void run_direct_noop(void* ctx, int64_t iters) {
  void* buf = ctx;
  const void* ins[1] = {buf};
  for (int64_t i = 0; i < iters; ++i) {
    for (int k = 0; k < KB_CALLS; ++k) noop_ptr(buf, ins);
  }
}

static void run_direct_typed(void* ctx, int64_t iters) {
  float* buf = ctx;
  for (int64_t i = 0; i < iters; ++i) {
    for (int k = 0; k < KB_CALLS; ++k) use_ptr(buf, buf + 16, buf + 32, buf + 48, 1e-5f, 3);
  }
}

/* HLO text of `n` instructions: a chain of adds, multiplies and custom
 * calls over one f32[16] parameter. */
/* 3x3 SAME convolutions of f32[1,32,32,64] (NHWC): by f32[3,3,64,64]
 * (HWIO) to 64 features, or depthwise (f32[3,3,1,64], feature_group_count
 * 64). ns per run, with the executable's default pool. */
static double time_conv(bool depthwise) {
  char text[512];
  snprintf(text, sizeof text,
           "HloModule conv\nENTRY e {\n x = f32[1,32,32,64] parameter(0)\n"
           " k = f32[3,3,%d,64] parameter(1)\n"
           " ROOT y = f32[1,32,32,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, "
           "dim_labels=b01f_01io->b01f, feature_group_count=%d\n}\n",
           depthwise ? 1 : 64, depthwise ? 64 : 1);
  kc_program* p = NULL;
  kc_executable* e = NULL;
  die(kc_program_parse(kc_sv(text), &p), "parse conv");
  die(kc_program_compile(p, NULL, &e), "compile conv");
  static float x[32 * 32 * 64], k[3 * 3 * 64 * 64];
  for (size_t i = 0; i < sizeof x / sizeof *x; ++i) x[i] = (float)(i % 7) * 0.25f;
  for (size_t i = 0; i < sizeof k / sizeof *k; ++i) k[i] = (float)(i % 5) * 0.125f;
  int64_t xd[4] = {1, 32, 32, 64}, kd[4] = {3, 3, depthwise ? 1 : 64, 64};
  DLTensor tx = {.data = x, .device = {kDLCPU, 0}, .ndim = 4, .dtype = {kDLFloat, 32, 1},
                 .shape = xd};
  DLTensor tk = {.data = k, .device = {kDLCPU, 0}, .ndim = 4, .dtype = {kDLFloat, 32, 1},
                 .shape = kd};
  const DLTensor* ins[2] = {&tx, &tk};
  run_ctx c = {.exe = e, .ins = ins, .n = 2};
  double ns = kb_time_per_iter(run_program, &c, 20, 7);
  kc_executable_destroy(e);
  kc_program_destroy(p);
  return ns;
}

static char* make_hlo(int n) {
  size_t cap = (size_t)n * 160 + 256;
  char* text = malloc(cap);
  size_t len = (size_t)snprintf(text, cap,
                                "HloModule big, entry_computation_layout={(f32[16]{0})->f32[16]{0}}\n\n"
                                "ENTRY main {\n  x.0 = f32[16]{0} parameter(0)\n");
  for (int i = 1; i < n; ++i) {
    const char* root = i == n - 1 ? "ROOT " : "";
    if (i % 3 == 0) {
      len += (size_t)snprintf(text + len, cap - len,
                              "  %sv.%d = f32[16]{0} custom-call(v.%d), "
                              "custom_call_target=\"noop\", "
                              "api_version=API_VERSION_ORIGINAL, "
                              "metadata={op_name=\"jit(f)/noop\"}\n",
                              root, i, i - 1);
    } else {
      len += (size_t)snprintf(text + len, cap - len,
                              "  %sv.%d = f32[16]{0} %s(%s.%d, x.0)\n", root, i,
                              i % 3 == 1 ? "add" : "multiply", i == 1 ? "x" : "v",
                              i == 1 ? 0 : i - 1);
    }
  }
  snprintf(text + len, cap - len, "}\n");
  return text;
}

/* The program of make_hlo(n) as StableHLO, as JAX prints it with
 * debug_info: a location on every op, its alias after the module. */
static char* make_stablehlo(int n) {
  size_t cap = (size_t)n * 200 + 256;
  char* text = malloc(cap);
  size_t len = (size_t)snprintf(text, cap,
                                "module @big attributes {mhlo.num_partitions = 1 : i32} {\n"
                                "  func.func public @main(%%arg0: tensor<16xf32> loc(\"x\")) "
                                "-> (tensor<16xf32> {jax.result_info = \"result\"}) {\n");
  for (int i = 1; i < n; ++i) {
    char prev[32];
    snprintf(prev, sizeof prev, i == 1 ? "%%arg0" : "%%%d", i - 2);
    if (i % 3 == 0) {
      len += (size_t)snprintf(text + len, cap - len,
                              "    %%%d = stablehlo.custom_call @noop(%s) : (tensor<16xf32>) -> "
                              "tensor<16xf32> loc(#loc%d)\n",
                              i - 1, prev, i % 3 + 1);
    } else {
      len += (size_t)snprintf(text + len, cap - len,
                              "    %%%d = stablehlo.%s %s, %%arg0 : tensor<16xf32> loc(#loc%d)\n",
                              i - 1, i % 3 == 1 ? "add" : "multiply", prev, i % 3 + 1);
    }
  }
  len += (size_t)snprintf(text + len, cap - len,
                          "    return %%%d : tensor<16xf32> loc(#loc1)\n  } loc(#loc1)\n} "
                          "loc(#loc1)\n#loc1 = loc(unknown)\n#loc2 = loc(\"jit(f)/add\")\n"
                          "#loc3 = loc(\"jit(f)/mul\")\n#loc4 = loc(\"jit(f)/noop\")\n",
                          n - 2);
  return text;
}

/* The best parse and compile times of `text`, over 5 runs. */
static void time_parse_compile(const char* text, double* parse_ns, double* compile_ns) {
  *parse_ns = *compile_ns = -1;
  for (int t = 0; t < 5; ++t) {
    kc_program* p = NULL;
    kc_executable* e = NULL;
    double t0 = kb_now_ns();
    die(kc_program_parse(kc_sv(text), &p), "parse");
    double t1 = kb_now_ns();
    die(kc_program_compile(p, NULL, &e), "compile");
    double t2 = kb_now_ns();
    if (*parse_ns < 0 || t1 - t0 < *parse_ns) *parse_ns = t1 - t0;
    if (*compile_ns < 0 || t2 - t1 < *compile_ns) *compile_ns = t2 - t1;
    kc_executable_destroy(e);
    kc_program_destroy(p);
  }
}

int main(int argc, char** argv) {
  die(kc_xcall_register(KC_SV_LIT("noop"), KC_PLATFORM_HOST, KC_XCALL_API_ORIGINAL,
                        (void (*)(void))noop, 0),
      "register");
#define KB_F32_RANK1 {{kDLFloat, 32, 1}, 1}
  static const kc_xcall_buffer_spec any = KB_F32_RANK1;
  static const kc_xcall_buffer_spec args[3] = {KB_F32_RANK1, KB_F32_RANK1, KB_F32_RANK1};
  static const kc_xcall_attr_spec attr_specs[2] = {{"eps", KC_ATTR_F32, 0},
                                                   {"n", KC_ATTR_I64, 0}};
  kc_xcall_signature sig = {.struct_size = sizeof sig, .num_args = 3, .args = args,
                            .num_results = 1, .results = &any,
                            .num_attrs = 2, .attrs = attr_specs};
  die(kc_xcall_register_typed(KC_SV_LIT("typed4"), KC_PLATFORM_HOST, &sig, typed4,
                              NULL, NULL, 0),
      "register typed");

  static uintptr_t user_value = 1;
  die(kc_xcall_register_v2(KC_SV_LIT("status_noop"), KC_PLATFORM_HOST,
                           KC_XCALL_API_STATUS_RETURNING, (void (*)(void))status_noop,
                           &user_value, NULL, 0),
      "register status_noop");
  die(kc_xcall_register_v2(KC_SV_LIT("status_user"), KC_PLATFORM_HOST,
                           KC_XCALL_API_STATUS_RETURNING, (void (*)(void))status_user,
                           &user_value, NULL, 0),
      "register status_user");

  float data[64] = {0};
  int64_t n16 = 16;
  DLTensor in = {data, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &n16, NULL, 0};
  const DLTensor* ins[3] = {&in, &in, &in};
  float data2[64] = {0};
  DLTensor in2 = {data2, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &n16, NULL, 0};
  const DLTensor* ins2[3] = {&in2, &in2, &in2};

  kc_attr attrs[2];
  memset(attrs, 0, sizeof attrs);
  attrs[0].name = KC_SV_LIT("eps");
  attrs[0].type = KC_ATTR_F32;
  attrs[0].v.f32 = 1e-5f;
  attrs[1].name = KC_SV_LIT("n");
  attrs[1].type = KC_ATTR_I64;
  attrs[1].v.i64 = 3;
  kc_attr_dict dict = {2, attrs};
  /* Programs: [0] no calls, 1 input; [1] 1000 no-op calls; [2] no calls,
   * 3 inputs; [3] 32 typed calls; [4] 1000 typed calls; [5] and [6] 1000
   * status-returning calls, without and with reading user data. */
  enum { kNumProgs = 7 };
  kc_program* progs[kNumProgs] = {
      build_chain("noop", KC_XCALL_API_ORIGINAL, 1, NULL, 0),
      build_chain("noop", KC_XCALL_API_ORIGINAL, 1, NULL, KB_CALLS),
      build_chain("typed4", KC_XCALL_API_TYPED, 3, &dict, 0),
      build_chain("typed4", KC_XCALL_API_TYPED, 3, &dict, 32),
      build_chain("typed4", KC_XCALL_API_TYPED, 3, &dict, KB_CALLS),
      build_chain("status_noop", KC_XCALL_API_STATUS_RETURNING, 1, NULL, KB_CALLS),
      build_chain("status_user", KC_XCALL_API_STATUS_RETURNING, 1, NULL, KB_CALLS)};
  kc_executable* exes[kNumProgs];
  run_ctx ctx[kNumProgs];
  for (int i = 0; i < kNumProgs; ++i) {
    die(kc_program_compile(progs[i], NULL, &exes[i]), "compile");
    ctx[i].exe = exes[i];
    ctx[i].ins = ins;
    ctx[i].n = i == 2 || i == 3 || i == 4 ? 3 : 1;
  }

  const int64_t iters = 2000;
  const int trials = 7;
  double fixed1 = kb_time_per_iter(run_program, &ctx[0], iters * 10, trials);
  double chain_ns = kb_time_per_iter(run_program, &ctx[1], iters, trials);
  double fixed3 = kb_time_per_iter(run_program, &ctx[2], iters * 10, trials);
  double typed32_ns = kb_time_per_iter(run_program, &ctx[3], iters * 10, trials);
  double typed_ns = kb_time_per_iter(run_program, &ctx[4], iters, trials);
  run_ctx moving[2] = {ctx[4], ctx[4]};
  moving[1].ins = ins2;
  double typed_moving_ns = kb_time_per_iter(run_program_moving, moving, iters, trials);
  double direct_ns = kb_time_per_iter(run_direct_noop, data, iters, trials);
  double direct_typed_ns = kb_time_per_iter(run_direct_typed, data, iters, trials);
  double status_ns = kb_time_per_iter(run_program, &ctx[5], iters, trials);
  double status_user_ns = kb_time_per_iter(run_program, &ctx[6], iters, trials);

  double per_call = (chain_ns - fixed1) / KB_CALLS;
  double per_direct = direct_ns / KB_CALLS;
  double per_typed32 = (typed32_ns - fixed3) / 32;
  double per_typed = (typed_ns - fixed3) / KB_CALLS;
  double per_typed_moving = (typed_moving_ns - fixed3) / KB_CALLS;
  double per_direct_typed = direct_typed_ns / KB_CALLS;
  double per_status = (status_ns - fixed1) / KB_CALLS;
  double per_status_user = (status_user_ns - fixed1) / KB_CALLS;

  /* Parse and compile of 10,000 instructions, from HLO text and from the
   * same program as StableHLO. */
  char* hlo = make_hlo(10000);
  char* shlo = make_stablehlo(10000);
  double best_parse, best_compile, shlo_parse, shlo_compile;
  time_parse_compile(hlo, &best_parse, &best_compile);
  time_parse_compile(shlo, &shlo_parse, &shlo_compile);
  free(hlo);
  free(shlo);

  double conv_ns = time_conv(false);
  double depthwise_ns = time_conv(true);

  kb_report r = {.name = "program_runtime"};
  kb_report_add(&r, "run_fixed_cost_ns", fixed1);
  kb_report_add(&r, "custom_call_dispatch_ns", per_call);
  kb_report_add(&r, "direct_call_ns", per_direct);
  kb_report_add(&r, "dispatch_overhead_ns", per_call - per_direct);
  kb_report_add(&r, "dispatch_ratio_to_direct", per_call / per_direct);
  kb_report_add(&r, "typed_call_4_buffers_2_attrs_ns", per_typed32);
  kb_report_add(&r, "direct_call_same_values_ns", per_direct_typed);
  kb_report_add(&r, "typed_decode_overhead_ns", per_typed32 - per_direct_typed);
  kb_report_add(&r, "typed_ratio_to_direct", per_typed32 / per_direct_typed);
  kb_report_add(&r, "typed_call_in_1000_call_program_ns", per_typed);
  kb_report_add(&r, "typed_decode_overhead_1000_calls_ns", per_typed - per_direct_typed);
  kb_report_add(&r, "typed_decode_overhead_1000_calls_moving_inputs_ns",
                per_typed_moving - per_direct_typed);
  kb_report_add(&r, "status_call_ns", per_status);
  kb_report_add(&r, "status_call_reading_user_data_ns", per_status_user);
  kb_report_add(&r, "user_data_read_ns", per_status_user - per_status);
  kb_report_add(&r, "user_data_ratio_to_status_call", per_status_user / per_status);
  kb_report_add(&r, "parse_10k_instructions_ms", best_parse / 1e6);
  kb_report_add(&r, "compile_10k_instructions_ms", best_compile / 1e6);
  kb_report_add(&r, "parse_and_compile_10k_ms", (best_parse + best_compile) / 1e6);
  kb_report_add(&r, "stablehlo_parse_10k_instructions_ms", shlo_parse / 1e6);
  kb_report_add(&r, "stablehlo_parse_and_compile_10k_ms", (shlo_parse + shlo_compile) / 1e6);
  kb_report_add(&r, "stablehlo_parse_and_compile_ratio_to_hlo",
                (shlo_parse + shlo_compile) / (best_parse + best_compile));
  kb_report_add(&r, "conv3x3_1x32x32x64_to_64_f32_us", conv_ns / 1e3);
  kb_report_add(&r, "conv3x3_1x32x32x64_to_64_f32_gflops",
                2.0 * 32 * 32 * 64 * 3 * 3 * 64 / conv_ns);
  kb_report_add(&r, "conv3x3_depthwise_1x32x32x64_f32_us", depthwise_ns / 1e3);
  int rc = kb_report_finish(&r, kb_json_arg(argc, argv));
  double shlo_ratio = (shlo_parse + shlo_compile) / (best_parse + best_compile);
  printf("  targets: dispatch overhead <= 20 ns (%s), typed decoding <= 5 ns (%s), "
         "parse+compile 10k <= 50 ms (%s), StableHLO parse+compile <= 1.5x HLO's (%.2fx, %s)\n",
         per_call - per_direct <= 20 ? "met" : "MISSED",
         per_typed32 - per_direct_typed <= 5 ? "met" : "MISSED",
         (best_parse + best_compile) / 1e6 <= 50 ? "met" : "MISSED", shlo_ratio,
         shlo_ratio <= 1.5 ? "met" : "MISSED");

  for (int i = 0; i < kNumProgs; ++i) {
    kc_executable_destroy(exes[i]);
    kc_program_destroy(progs[i]);
  }
  kc_xcall_registry_reset();
  return rc;
}
