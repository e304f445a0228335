/* "Did you mean": the registered names nearest to a missing one. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/registry.h"

#define KC__NEAREST_COUNT 3

typedef struct kc__nearest {
  kc_string_view wanted;
  size_t total;
  struct {
    size_t distance;
    char copy[KC__NAME_MAX + 1];
  } best[KC__NEAREST_COUNT];
  size_t found;
} kc__nearest;

/* Edit distance (insert, delete, substitute), two rows; names are at most
 * KC__NAME_MAX bytes. */
static size_t kc__edit_distance(kc_string_view a, kc_string_view b) {
  size_t row[KC__NAME_MAX + 2];
  if (a.size > KC__NAME_MAX) a.size = KC__NAME_MAX;
  if (b.size > KC__NAME_MAX) b.size = KC__NAME_MAX;
  for (size_t j = 0; j <= b.size; ++j) row[j] = j;
  for (size_t i = 1; i <= a.size; ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size; ++j) {
      size_t up = row[j];
      size_t cost = a.data[i - 1] == b.data[j - 1] ? 0 : 1;
      size_t best = diag + cost;
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[b.size];
}

static void kc__consider(void* ctx, const kc__reg_entry* e) {
  kc__nearest* n = ctx;
  n->total++;
  kc_string_view name = {e->name, e->name_size};
  size_t d = kc__edit_distance(n->wanted, name);
  /* A name the wanted one is a prefix of counts as close. */
  if (n->wanted.size > 0 && name.size > n->wanted.size &&
      memcmp(name.data, n->wanted.data, n->wanted.size) == 0 && d > 1) {
    d = 1;
  }
  size_t limit = n->wanted.size / 4 > 2 ? n->wanted.size / 4 : 2;
  if (d > limit) return;
  size_t pos = n->found < KC__NEAREST_COUNT ? n->found : KC__NEAREST_COUNT;
  while (pos > 0 && (n->best[pos - 1].distance > d ||
                     (n->best[pos - 1].distance == d &&
                      strcmp(n->best[pos - 1].copy, e->name) > 0))) {
    if (pos < KC__NEAREST_COUNT) n->best[pos] = n->best[pos - 1];
    --pos;
  }
  if (pos >= KC__NEAREST_COUNT) return;
  n->best[pos].distance = d;
  memcpy(n->best[pos].copy, e->name, e->name_size + 1);
  if (n->found < KC__NEAREST_COUNT) n->found++;
}

kc_status* kc__registry_not_found(const kc__registry* reg,
                                  kc_string_view name) {
  kc__nearest* n = calloc(1, sizeof *n);
  if (!n) return kc__status_oom();
  n->wanted = name;
  kc__registry_visit((kc__registry*)(uintptr_t)reg, kc__consider, n);
  char hint[3 * (KC__NAME_MAX + 8) + 32] = "";
  size_t len = 0;
  for (size_t i = 0; i < n->found; ++i) {
    len += (size_t)snprintf(hint + len, sizeof hint - len, "%s%s",
                            i ? ", " : "; did you mean ", KC__QS(n->best[i].copy));
  }
  if (n->found == 0 && n->total == 0) {
    snprintf(hint, sizeof hint, "; none is registered");
  }
  kc_status* st = kc_status_create(
      KC_NOT_FOUND, "no %s named %s is registered%s", reg->kind, KC__Q(name),
      hint);
  free(n);
  return st;
}
