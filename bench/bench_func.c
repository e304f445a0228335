/*
 * Packed-call overhead: a direct C call, a packed call through a function
 * handle (inline, and through the exported kc_func_call_noinline that FFI
 * bindings and plugins use), and a lookup by name followed by the call, in
 * one run.
 *
 * The direct call and the exported call go through function pointers the
 * compiler cannot see through, so they are real calls, as a kernel entry or
 * a binding's call would be. The packed function does what a hand-written
 * one does: checks arity and argument types, then adds.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "kcall/kcall.h"

static int64_t add_direct(int64_t a, int64_t b) { return a + b; }
static int64_t (*volatile direct_ptr)(int64_t, int64_t) = add_direct;
static kc_status* (*volatile call_noinline_ptr)(const kc_func*, const kc_any*,
                                                int32_t, kc_any*) =
    kc_func_call_noinline;

static kc_status* add_packed(void* self, const kc_any* args, int32_t nargs,
                             kc_any* ret) {
  (void)self;
  if (nargs != 2 || args[0].type_index != KC_TYPE_INT ||
      args[1].type_index != KC_TYPE_INT) {
    kc_status* st = kc_args_check_count("bench.add", nargs, 2, 2);
    if (!st) st = kc_args_get_int("bench.add", args, nargs, 0, &(int64_t){0});
    if (!st) st = kc_args_get_int("bench.add", args, nargs, 1, &(int64_t){0});
    return st;
  }
  *ret = kc_any_int(args[0].u.v_int64 + args[1].u.v_int64);
  return NULL;
}

/* The same function written with the library's typed helpers. */
static kc_status* add_packed_helpers(void* self, const kc_any* args,
                                     int32_t nargs, kc_any* ret) {
  (void)self;
  int64_t a, b;
  kc_status* st = kc_args_check_count("bench.add2", nargs, 2, 2);
  if (!st) st = kc_args_get_int("bench.add2", args, nargs, 0, &a);
  if (!st) st = kc_args_get_int("bench.add2", args, nargs, 1, &b);
  if (st) return st;
  *ret = kc_any_int(a + b);
  return NULL;
}

/* The same function as a plugin writes it, with the readers of abi.h:
 * checks inline, errors through the host table. */
static kc_status* add_packed_host_table(void* self, const kc_any* args,
                                        int32_t nargs, kc_any* ret) {
  const kc_host_api* host = self;
  int64_t a = 0, b = 0;
  kc_status* st = kc_host_args_check_count(host, "bench.add3", nargs, 2, 2);
  if (!st) st = kc_host_args_get_int(host, "bench.add3", args, nargs, 0, &a);
  if (!st) st = kc_host_args_get_int(host, "bench.add3", args, nargs, 1, &b);
  if (st) return st;
  *ret = kc_any_int(a + b);
  return NULL;
}

static volatile int64_t sink;

static void run_direct(void* ctx, int64_t iters) {
  (void)ctx;
  int64_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) acc += direct_ptr(i, 1);
  sink = acc;
}

typedef struct packed_ctx {
  kc_func* func;
  kc_string_view name;
} packed_ctx;

static void run_packed(void* ctx, int64_t iters) {
  packed_ctx* c = ctx;
  int64_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    kc_any args[2] = {kc_any_int(i), kc_any_int(1)};
    kc_any ret;
    kc_status* st = kc_func_call(c->func, args, 2, &ret);
    if (st) abort();
    acc += ret.u.v_int64;
  }
  sink = acc;
}

/* As a binding calls: through the exported function. */
static void run_packed_noinline(void* ctx, int64_t iters) {
  packed_ctx* c = ctx;
  int64_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    kc_any args[2] = {kc_any_int(i), kc_any_int(1)};
    kc_any ret;
    kc_status* st = call_noinline_ptr(c->func, args, 2, &ret);
    if (st) abort();
    acc += ret.u.v_int64;
  }
  sink = acc;
}

static void run_lookup_call(void* ctx, int64_t iters) {
  packed_ctx* c = ctx;
  int64_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    kc_func* f;
    if (kc_func_registry_lookup(c->name, &f)) abort();
    kc_any args[2] = {kc_any_int(i), kc_any_int(1)};
    kc_any ret;
    if (kc_func_call(f, args, 2, &ret)) abort();
    acc += ret.u.v_int64;
  }
  sink = acc;
}

static void run_lookup(void* ctx, int64_t iters) {
  packed_ctx* c = ctx;
  intptr_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    kc_func* f;
    if (kc_func_registry_lookup(c->name, &f)) abort();
    acc += (intptr_t)f;
  }
  sink = acc;
}

static kc_func* make(kc_packed_fn fn, void* self) {
  kc_func* f = NULL;
  if (kc_func_create(NULL, fn, self, NULL, &f)) abort();
  return f;
}

int main(int argc, char** argv) {
  const int64_t iters = 20 * 1000 * 1000;
  const int trials = 7;
  kc_func* f = make(add_packed, NULL);
  kc_func* f2 = make(add_packed_helpers, NULL);
  kc_func* f3 = make(add_packed_host_table,
                     (void*)(uintptr_t)kc_plugin_get_host_api());
  /* A registry of realistic size, so the probe is not trivially short. */
  char name[32];
  for (int i = 0; i < 200; ++i) {
    snprintf(name, sizeof name, "bench.filler_%d", i);
    if (kc_func_registry_register(kc_sv(name), f, 0)) abort();
  }
  if (kc_func_registry_register(KC_SV_LIT("bench.add"), f, 0)) abort();
  packed_ctx c = {f, KC_SV_LIT("bench.add")};
  packed_ctx c2 = {f2, KC_SV_LIT("bench.add")};
  packed_ctx c3 = {f3, KC_SV_LIT("bench.add")};

  double direct = kb_time_per_iter(run_direct, NULL, iters, trials);
  double packed = kb_time_per_iter(run_packed, &c, iters, trials);
  double packed_noinline =
      kb_time_per_iter(run_packed_noinline, &c, iters, trials);
  double packed_helpers = kb_time_per_iter(run_packed, &c2, iters, trials);
  double packed_host = kb_time_per_iter(run_packed, &c3, iters, trials);
  double lookup_call = kb_time_per_iter(run_lookup_call, &c, iters, trials);
  double lookup = kb_time_per_iter(run_lookup, &c, iters, trials);

  kb_report r = {.name = "packed_call"};
  kb_report_add(&r, "direct_call_ns", direct);
  kb_report_add(&r, "packed_call_ns", packed);
  kb_report_add(&r, "packed_call_ratio_to_direct", packed / direct);
  kb_report_add(&r, "packed_call_noinline_ns", packed_noinline);
  kb_report_add(&r, "packed_call_noinline_ratio_to_direct",
                packed_noinline / direct);
  kb_report_add(&r, "packed_call_with_arg_helpers_ns", packed_helpers);
  kb_report_add(&r, "packed_call_with_arg_helpers_ratio_to_direct",
                packed_helpers / direct);
  kb_report_add(&r, "packed_call_with_host_table_readers_ns", packed_host);
  kb_report_add(&r, "packed_call_with_host_table_readers_ratio_to_direct",
                packed_host / direct);
  kb_report_add(&r, "lookup_ns", lookup);
  kb_report_add(&r, "lookup_and_call_ns", lookup_call);
  kb_report_add(&r, "lookup_and_call_ratio_to_direct", lookup_call / direct);
  int rc = kb_report_finish(&r, kb_json_arg(argc, argv));
  printf("  targets: packed call within 3x of direct (%s), lookup <= 30 ns "
         "(%s)\n",
         packed / direct <= 3.0 ? "met" : "MISSED",
         lookup <= 30.0 ? "met" : "MISSED");

  kc_object_release(KC_OBJECT(f));
  kc_object_release(KC_OBJECT(f2));
  kc_object_release(KC_OBJECT(f3));
  kc_func_registry_reset();
  return rc;
}
