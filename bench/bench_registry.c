/*
 * Registry lookups: a hit next to a miss, in registries of 1,000 and
 * 20,000 names, in one run. The hit is the baseline: a miss (a NOT_FOUND
 * status made and dropped unread, as a caller that falls back to something
 * else does) is reported as a ratio to it. Reading the miss's message runs
 * the "did you mean" search; that is reported in microseconds, as is an
 * override (register with KC_REGISTER_OVERRIDE, which retires the old
 * entry and frees it once no lookup can read it).
 *
 * Names are namespaced as real ones are ("ns17.op_00412"); lookups cycle
 * through 64 names spread over the registry, and misses are one-letter
 * typos of registered names, the case the suggestions are for.
 *
 * Built with -DKB_BASELINE_API it uses only functions that exist in older
 * versions of the library, so that it can measure one for comparison.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kcall/kcall.h"

#define KB_CYCLE 64

static volatile uintptr_t sink;

static kc_status* nop(void* self, const kc_any* args, int32_t nargs,
                      kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  (void)ret;
  return NULL;
}

typedef struct names {
  char text[KB_CYCLE][32];
  kc_string_view view[KB_CYCLE];
} names;

typedef struct ctx {
  names hits;
  names misses;
  kc_func* func;
} ctx;

static void name_of(int i, char* out, size_t cap) {
  snprintf(out, cap, "ns%d.op_%05d", i % 50, i);
}

static void run_hit(void* p, int64_t iters) {
  ctx* c = p;
  uintptr_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    kc_func* f;
    if (kc_func_registry_lookup(c->hits.view[i & (KB_CYCLE - 1)], &f)) abort();
    acc += (uintptr_t)f;
  }
  sink = acc;
}

#ifndef KB_BASELINE_API
static void run_hit_retained(void* p, int64_t iters) {
  ctx* c = p;
  uintptr_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    kc_func* f;
    if (kc_func_registry_lookup_retained(c->hits.view[i & (KB_CYCLE - 1)], &f)) {
      abort();
    }
    acc += (uintptr_t)f;
    kc_object_release(KC_OBJECT(f));
  }
  sink = acc;
}
#endif

static void run_miss(void* p, int64_t iters) {
  ctx* c = p;
  uintptr_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    kc_func* f;
    kc_status* st = kc_func_registry_lookup(c->misses.view[i & (KB_CYCLE - 1)], &f);
    if (!st) abort();
    acc += (uintptr_t)st;
    kc_status_destroy(st);
  }
  sink = acc;
}

static void run_miss_message(void* p, int64_t iters) {
  ctx* c = p;
  uintptr_t acc = 0;
  for (int64_t i = 0; i < iters; ++i) {
    kc_func* f;
    kc_status* st = kc_func_registry_lookup(c->misses.view[i & (KB_CYCLE - 1)], &f);
    char text[1024];
    acc += kc_status_format(st, text, sizeof text);
    kc_status_destroy(st);
  }
  sink = acc;
}

static void run_override(void* p, int64_t iters) {
  ctx* c = p;
  for (int64_t i = 0; i < iters; ++i) {
    kc_string_view name = c->hits.view[i & (KB_CYCLE - 1)];
    if (kc_func_registry_register(name, c->func, KC_REGISTER_OVERRIDE)) abort();
  }
}

/* Registers `count` names and measures; figures go into `r` with keys
 * prefixed by `tag` (static strings, so the report can keep them). */
typedef struct figures {
  double ratio;      /* miss / hit */
  double message_us; /* a miss whose message is read */
} figures;

static figures measure(kb_report* r, int count, const char* const keys[6]) {
  kc_func_registry_reset();
  ctx c;
  if (kc_func_create(NULL, nop, NULL, NULL, &c.func)) abort();
  char name[32];
  for (int i = 0; i < count; ++i) {
    name_of(i, name, sizeof name);
    if (kc_func_registry_register(kc_sv(name), c.func, 0)) abort();
  }
  for (int k = 0; k < KB_CYCLE; ++k) {
    int i = (int)((int64_t)k * count / KB_CYCLE);
    name_of(i, c.hits.text[k], sizeof c.hits.text[k]);
    c.hits.view[k] = kc_sv(c.hits.text[k]);
    /* A typo: one letter of the op part replaced. */
    memcpy(c.misses.text[k], c.hits.text[k], sizeof c.misses.text[k]);
    char* op = strstr(c.misses.text[k], "op_");
    op[1] = 'q';
    c.misses.view[k] = kc_sv(c.misses.text[k]);
  }
  double hit = kb_time_per_iter(run_hit, &c, 5 * 1000 * 1000, 7);
#ifdef KB_BASELINE_API
  /* Older versions search for the nearest names on every miss. */
  int64_t miss_iters = count > 5000 ? 20 : 200, message_iters = miss_iters;
#else
  int64_t miss_iters = 1000 * 1000, message_iters = count > 5000 ? 200 : 2000;
#endif
  double miss = kb_time_per_iter(run_miss, &c, miss_iters, 5);
  double message = kb_time_per_iter(run_miss_message, &c, message_iters, 3);
  double override = kb_time_per_iter(run_override, &c, 200 * 1000, 5);
  kb_report_add(r, keys[0], hit);
  kb_report_add(r, keys[1], miss);
  kb_report_add(r, keys[2], miss / hit);
  kb_report_add(r, keys[3], message / 1000.0);
  kb_report_add(r, keys[4], override / 1000.0);
#ifndef KB_BASELINE_API
  double retained = kb_time_per_iter(run_hit_retained, &c, 5 * 1000 * 1000, 7);
  kb_report_add(r, keys[5], retained);
#endif
  kc_object_release(KC_OBJECT(c.func));
  kc_func_registry_reset();
  figures f = {miss / hit, message / 1000.0};
  return f;
}

int main(int argc, char** argv) {
  static const char* const small[6] = {
      "hit_1k_names_ns",         "miss_1k_names_ns",
      "miss_ratio_to_hit_1k",    "miss_message_1k_names_us",
      "override_1k_names_us",    "hit_retained_1k_names_ns"};
  static const char* const large[6] = {
      "hit_20k_names_ns",        "miss_20k_names_ns",
      "miss_ratio_to_hit_20k",   "miss_message_20k_names_us",
      "override_20k_names_us",   "hit_retained_20k_names_ns"};
  kb_report r = {.name = "registry_lookup"};
  figures a = measure(&r, 1000, small);
  figures b = measure(&r, 20000, large);
#ifndef KB_BASELINE_API
  /* After 2 x 200,000 overrides: what is still waiting to be freed. */
  kc_registry_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  kc_registry_query_stats(&stats);
  kb_report_add(&r, "retired_entries_after_overrides", (double)stats.retired_objects);
#endif
  int rc = kb_report_finish(&r, kb_json_arg(argc, argv));
  printf("  targets: a miss within 10x of a hit (%s), a message under 1 ms "
         "at 20,000 names (%s)\n",
         a.ratio <= 10.0 && b.ratio <= 10.0 ? "met" : "MISSED",
         b.message_us < 1000.0 ? "met" : "MISSED");
  return rc;
}
