/*
 * The model programs of tests/fixtures/hlo_jax run from each text JAX
 * prints: HLO (lowered.hlo) and StableHLO (stablehlo.mlir, JAX's default).
 * Both readers build the same instructions, so the runs should cost the
 * same (target: StableHLO within 1.05x of HLO, per case and as the
 * geometric mean); parsing and compiling each is timed beside them.
 *
 * Each case runs on its fixture inputs (inputN.npy), best of several
 * trials, alternating the two executables so that drift in the machine's
 * speed falls on both.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "kcall/kcall.h"

static void die(kc_status* st, const char* what) {
  if (!st) return;
  fprintf(stderr, "bench_formats: %s: %s\n", what, kc_status_get_message(st));
  exit(1);
}

typedef struct kb_case {
  const char* name;
  int inputs;
} kb_case;

/* Whole models; the two-layer MLP and the attention block also as their
 * larger versions. */
static const kb_case kCases[] = {
    {"mlp_wide", 5},  {"transformer", 11}, {"cnn", 7},        {"cnn_train_step", 8},
    {"attention", 4}, {"scan", 2},         {"layer_norm", 3}, {"sort", 1},
};

typedef struct kb_run {
  const kc_executable* exe;
  const DLTensor* const* ins;
  size_t n;
} kb_run;

static void run_once(void* ctx, int64_t iters) {
  kb_run* r = ctx;
  kc_executable_info info = {.struct_size = sizeof info};
  kc_executable_query(r->exe, &info);
  kc_tensor* outs[16];
  for (int64_t i = 0; i < iters; ++i) {
    die(kc_executable_execute(r->exe, r->ins, r->n, NULL, outs), "execute");
    for (size_t k = 0; k < info.num_outputs; ++k) kc_object_release(KC_OBJECT(outs[k]));
  }
}

static kc_executable* load(const char* name, const char* file, double* parse_compile_ns) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/%s", KB_HLO_JAX_DIR, name, file);
  double t0 = kb_now_ns();
  kc_program* p = NULL;
  die(kc_program_parse_file(path, &p), path);
  kc_executable* exe = NULL;
  die(kc_program_compile(p, NULL, &exe), path);
  *parse_compile_ns = kb_now_ns() - t0;
  kc_program_destroy(p);
  return exe;
}

int main(int argc, char** argv) {
  kb_report r = {.name = "program_formats"};
  double log_sum = 0;
  int count = 0;
  double worst = 0;
  printf("  %-16s %12s %12s %8s %14s %14s\n", "case", "hlo_us", "stablehlo_us", "ratio",
         "hlo_load_ms", "shlo_load_ms");
  for (size_t c = 0; c < sizeof kCases / sizeof kCases[0]; ++c) {
    const kb_case* k = &kCases[c];
    double load_hlo, load_shlo;
    kc_executable* a = load(k->name, "lowered.hlo", &load_hlo);
    kc_executable* b = load(k->name, "stablehlo.mlir", &load_shlo);
    kc_tensor* tensors[16];
    const DLTensor* ins[16];
    for (int i = 0; i < k->inputs; ++i) {
      char path[1024];
      snprintf(path, sizeof path, "%s/%s/input%d.npy", KB_HLO_JAX_DIR, k->name, i);
      die(kc_tensor_read_npy(path, NULL, &tensors[i]), path);
      ins[i] = kc_tensor_get_dltensor(tensors[i]);
    }
    kb_run ra = {a, ins, (size_t)k->inputs}, rb = {b, ins, (size_t)k->inputs};
    /* About 0.2 s a case: iterations from one timed run. */
    double t0 = kb_now_ns();
    run_once(&ra, 1);
    double one = kb_now_ns() - t0;
    int64_t iters = one > 2e7 ? 1 : (int64_t)(2e7 / (one + 1));
    double best_a = -1, best_b = -1;
    for (int t = 0; t < 5; ++t) {
      double x = kb_time_per_iter(run_once, &ra, iters, 1);
      double y = kb_time_per_iter(run_once, &rb, iters, 1);
      if (best_a < 0 || x < best_a) best_a = x;
      if (best_b < 0 || y < best_b) best_b = y;
    }
    double ratio = best_b / best_a;
    printf("  %-16s %12.1f %12.1f %8.3f %14.3f %14.3f\n", k->name, best_a / 1e3, best_b / 1e3,
           ratio, load_hlo / 1e6, load_shlo / 1e6);
    /* The report keeps the keys' pointers. */
    static char keys[2 * sizeof kCases / sizeof kCases[0]][96];
    snprintf(keys[2 * c], sizeof keys[0], "%s_stablehlo_ratio_to_hlo", k->name);
    kb_report_add(&r, keys[2 * c], ratio);
    snprintf(keys[2 * c + 1], sizeof keys[0], "%s_hlo_run_us", k->name);
    kb_report_add(&r, keys[2 * c + 1], best_a / 1e3);
    log_sum += log(ratio);
    count++;
    if (ratio > worst) worst = ratio;
    for (int i = 0; i < k->inputs; ++i) kc_object_release(KC_OBJECT(tensors[i]));
    kc_executable_destroy(a);
    kc_executable_destroy(b);
  }
  double geomean = exp(log_sum / count);
  kb_report_add(&r, "stablehlo_run_ratio_to_hlo_geomean", geomean);
  kb_report_add(&r, "stablehlo_run_ratio_to_hlo_worst", worst);
  int rc = kb_report_finish(&r, kb_json_arg(argc, argv));
  printf("  target: StableHLO's runs within 1.05x of HLO's (geomean %.3fx, %s; worst %.3fx)\n",
         geomean, geomean <= 1.05 ? "met" : "MISSED", worst);
  return rc;
}
