/* Listing a registry's names, sorted, as an array of strings. */
#include <stdlib.h>

#include "internal/grow.h"
#include "internal/registry.h"
#include "kcall/value.h"

typedef struct kc__name_list {
  kc_string_view prefix;
  kc_string_view* names; /* valid under the registry lock only */
  size_t count;
  size_t cap;
  bool oom;
} kc__name_list;

static void kc__collect(void* ctx, const kc__reg_entry* e) {
  kc__name_list* l = ctx;
  if (l->oom || e->name_size < l->prefix.size ||
      (l->prefix.size && memcmp(e->name, l->prefix.data, l->prefix.size))) {
    return;
  }
  if (!KC__GROW(l->names, l->cap, l->count + 1)) {
    l->oom = true;
    return;
  }
  /* Copy the text: the entry may be retired, and freed, once the lock is
   * dropped. */
  char* copy = kc__malloc(e->name_size + 1);
  if (!copy) {
    l->oom = true;
    return;
  }
  memcpy(copy, e->name, e->name_size + 1);
  l->names[l->count].data = copy;
  l->names[l->count].size = e->name_size;
  l->count++;
}

static int kc__compare_names(const void* a, const void* b) {
  const kc_string_view* x = a;
  const kc_string_view* y = b;
  size_t n = x->size < y->size ? x->size : y->size;
  int c = memcmp(x->data, y->data, n);
  if (c) return c;
  return (x->size > y->size) - (x->size < y->size);
}

kc_status* kc__registry_list(kc__registry* reg, const kc_allocator* alloc,
                             kc_string_view prefix, kc_array** out_names) {
  *out_names = NULL;
  kc__name_list l = {prefix, NULL, 0, 0, false};
  if (!l.prefix.data) l.prefix.size = 0;
  kc__registry_visit(reg, kc__collect, &l);
  kc_status* st = NULL;
  kc_any* items = l.oom ? NULL : kc__calloc(l.count + 1, sizeof *items);
  if (!items) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED,
                          "out of memory listing %ss", reg->kind);
  } else {
    if (l.count) qsort(l.names, l.count, sizeof *l.names, kc__compare_names);
    for (size_t i = 0; i < l.count && !st; ++i) {
      st = kc_any_from_string(alloc, l.names[i], &items[i]);
    }
    if (!st) st = kc_array_create(alloc, items, l.count, out_names);
    for (size_t i = 0; i < l.count; ++i) kc_any_release(&items[i]);
  }
  for (size_t i = 0; i < l.count; ++i) kc__free((void*)(uintptr_t)l.names[i].data);
  kc__free(l.names);
  kc__free(items);
  return st;
}

