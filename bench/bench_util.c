#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

double kb_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double kb_time_per_iter(void (*body)(void* ctx, int64_t iters), void* ctx,
                        int64_t iters, int trials) {
  body(ctx, iters / 10 + 1); /* warm caches and branch predictors */
  double best = -1;
  for (int t = 0; t < trials; ++t) {
    double start = kb_now_ns();
    body(ctx, iters);
    double per = (kb_now_ns() - start) / (double)iters;
    if (best < 0 || per < best) best = per;
  }
  return best;
}

void kb_report_add(kb_report* r, const char* key, double value) {
  if (r->count >= sizeof r->keys / sizeof r->keys[0]) return;
  r->keys[r->count] = key;
  r->values[r->count] = value;
  r->count++;
}

int kb_report_finish(const kb_report* r, const char* json_path) {
  printf("%s\n", r->name);
  for (size_t i = 0; i < r->count; ++i) {
    printf("  %-34s %12.3f\n", r->keys[i], r->values[i]);
  }
  if (!json_path) return 0;
  FILE* f = fopen(json_path, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", json_path);
    return 1;
  }
  fprintf(f, "{\"benchmark\": \"%s\"", r->name);
  for (size_t i = 0; i < r->count; ++i) {
    fprintf(f, ", \"%s\": %.4f", r->keys[i], r->values[i]);
  }
  fprintf(f, "}\n");
  return fclose(f) == 0 ? 0 : 1;
}

const char* kb_json_arg(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], "--json") == 0) return argv[i + 1];
  }
  return NULL;
}
