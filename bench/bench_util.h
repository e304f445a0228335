/* Timing and reporting shared by the benchmarks. */
#ifndef KCALL_BENCH_UTIL_H_
#define KCALL_BENCH_UTIL_H_

#include <stddef.h>
#include <stdint.h>

/* Monotonic time in nanoseconds. */
double kb_now_ns(void);

/* Runs body(ctx, iters) `trials` times and returns the fastest time per
 * iteration in ns: the minimum is the figure least disturbed by the rest of
 * a noisy machine. */
double kb_time_per_iter(void (*body)(void* ctx, int64_t iters), void* ctx,
                        int64_t iters, int trials);

/* One benchmark's figures, printed as a table and written as a JSON object
 * {"benchmark": name, key: value, ...}. Keys carry their unit. */
typedef struct kb_report {
  const char* name;
  size_t count;
  const char* keys[64];
  double values[64];
} kb_report;

void kb_report_add(kb_report* r, const char* key, double value);

/* Prints the table to stdout; writes JSON to json_path if non-NULL.
 * Returns 0, or 1 if the file could not be written. */
int kb_report_finish(const kb_report* r, const char* json_path);

/* The value following "--json" in argv, or NULL. */
const char* kb_json_arg(int argc, char** argv);

#endif /* KCALL_BENCH_UTIL_H_ */
