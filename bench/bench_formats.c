/*
 * The model programs of tests/fixtures/hlo_jax run from each form JAX
 * writes: HLO (lowered.hlo), StableHLO (stablehlo.mlir, JAX's default
 * text) and the serialized jax.export (exported.jax_exported: the portable
 * artifact in its flatbuffer). The readers build the same instructions, so
 * the runs should cost the same (target: within 1.05x of HLO, per case and
 * as the geometric mean); parsing and compiling each is timed beside them,
 * and reading the binary export is timed against reading the StableHLO
 * text of the same module (target: at most 1.0x, as the geometric mean).
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

/* The best of `reps` parses of the file (the program destroyed each time). */
static double parse_ns(const char* name, const char* file, int reps) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/%s", KB_HLO_JAX_DIR, name, file);
  double best = -1;
  for (int i = 0; i < reps; ++i) {
    double t0 = kb_now_ns();
    kc_program* p = NULL;
    die(kc_program_parse_file(path, &p), path);
    double t = kb_now_ns() - t0;
    kc_program_destroy(p);
    if (best < 0 || t < best) best = t;
  }
  return best;
}

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
  double log_sum_export = 0, log_sum_parse = 0;
  int count = 0;
  double worst = 0, worst_export = 0;
  printf("  %-16s %10s %10s %7s %10s %7s %11s %11s %7s\n", "case", "hlo_us", "shlo_us", "ratio",
         "export_us", "ratio", "text_parse", "expt_parse", "ratio");
  for (size_t c = 0; c < sizeof kCases / sizeof kCases[0]; ++c) {
    const kb_case* k = &kCases[c];
    double load_hlo, load_shlo;
    kc_executable* a = load(k->name, "lowered.hlo", &load_hlo);
    kc_executable* b = load(k->name, "stablehlo.mlir", &load_shlo);
    double load_export;
    kc_executable* e = load(k->name, "exported.jax_exported", &load_export);
    kc_tensor* tensors[16];
    const DLTensor* ins[16];
    for (int i = 0; i < k->inputs; ++i) {
      char path[1024];
      snprintf(path, sizeof path, "%s/%s/input%d.npy", KB_HLO_JAX_DIR, k->name, i);
      die(kc_tensor_read_npy(path, NULL, &tensors[i]), path);
      ins[i] = kc_tensor_get_dltensor(tensors[i]);
    }
    kb_run ra = {a, ins, (size_t)k->inputs}, rb = {b, ins, (size_t)k->inputs};
    kb_run re = {e, ins, (size_t)k->inputs};
    /* About 0.2 s a case: iterations from one timed run. */
    double t0 = kb_now_ns();
    run_once(&ra, 1);
    double one = kb_now_ns() - t0;
    int64_t iters = one > 2e7 ? 1 : (int64_t)(2e7 / (one + 1));
    double best_a = -1, best_b = -1, best_e = -1;
    for (int t = 0; t < 5; ++t) {
      double x = kb_time_per_iter(run_once, &ra, iters, 1);
      double y = kb_time_per_iter(run_once, &rb, iters, 1);
      double z = kb_time_per_iter(run_once, &re, iters, 1);
      if (best_a < 0 || x < best_a) best_a = x;
      if (best_b < 0 || y < best_b) best_b = y;
      if (best_e < 0 || z < best_e) best_e = z;
    }
    /* Reading alone: the StableHLO text against the binary export of the
     * same module, alternating. */
    double text_parse = -1, export_parse = -1;
    for (int t = 0; t < 5; ++t) {
      double x = parse_ns(k->name, "stablehlo.mlir", 10);
      double y = parse_ns(k->name, "exported.jax_exported", 10);
      if (text_parse < 0 || x < text_parse) text_parse = x;
      if (export_parse < 0 || y < export_parse) export_parse = y;
    }
    double ratio = best_b / best_a, ratio_export = best_e / best_a;
    double ratio_parse = export_parse / text_parse;
    printf("  %-16s %10.1f %10.1f %7.3f %10.1f %7.3f %11.1f %11.1f %7.3f\n", k->name,
           best_a / 1e3, best_b / 1e3, ratio, best_e / 1e3, ratio_export, text_parse / 1e3,
           export_parse / 1e3, ratio_parse);
    (void)load_hlo;
    (void)load_shlo;
    (void)load_export;
    /* The report keeps the keys' pointers. */
    enum { KEYS = 5 };
    static char keys[KEYS * sizeof kCases / sizeof kCases[0]][96];
    static const char* const suffixes[KEYS] = {"stablehlo_ratio_to_hlo", "hlo_run_us",
                                               "export_ratio_to_hlo", "stablehlo_parse_us",
                                               "export_parse_ratio_to_stablehlo_text"};
    const double values[KEYS] = {ratio, best_a / 1e3, ratio_export, text_parse / 1e3,
                                 ratio_parse};
    for (int j = 0; j < KEYS; ++j) {
      snprintf(keys[KEYS * c + (size_t)j], sizeof keys[0], "%s_%s", k->name, suffixes[j]);
      kb_report_add(&r, keys[KEYS * c + (size_t)j], values[j]);
    }
    log_sum += log(ratio);
    log_sum_export += log(ratio_export);
    log_sum_parse += log(ratio_parse);
    count++;
    if (ratio > worst) worst = ratio;
    if (ratio_export > worst_export) worst_export = ratio_export;
    for (int i = 0; i < k->inputs; ++i) kc_object_release(KC_OBJECT(tensors[i]));
    kc_executable_destroy(a);
    kc_executable_destroy(b);
    kc_executable_destroy(e);
  }
  double geomean = exp(log_sum / count), geomean_export = exp(log_sum_export / count);
  double geomean_parse = exp(log_sum_parse / count);
  kb_report_add(&r, "stablehlo_run_ratio_to_hlo_geomean", geomean);
  kb_report_add(&r, "stablehlo_run_ratio_to_hlo_worst", worst);
  kb_report_add(&r, "export_run_ratio_to_hlo_geomean", geomean_export);
  kb_report_add(&r, "export_run_ratio_to_hlo_worst", worst_export);
  kb_report_add(&r, "export_parse_ratio_to_stablehlo_text_geomean", geomean_parse);
  int rc = kb_report_finish(&r, kb_json_arg(argc, argv));
  printf("  target: StableHLO's runs within 1.05x of HLO's (geomean %.3fx, %s; worst %.3fx)\n",
         geomean, geomean <= 1.05 ? "met" : "MISSED", worst);
  printf("  target: the serialized export's runs within 1.05x of HLO's (geomean %.3fx, %s; "
         "worst %.3fx)\n",
         geomean_export, geomean_export <= 1.05 ? "met" : "MISSED", worst_export);
  printf("  target: reading the serialized export at most 1.0x the StableHLO text's (geomean "
         "%.3fx, %s)\n",
         geomean_parse, geomean_parse <= 1.0 ? "met" : "MISSED");
  return rc;
}
