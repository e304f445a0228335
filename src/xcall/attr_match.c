/* A call site's attributes as a typed signature receives them: matched to
 * the attributes it declares (the program compiler and the XLA FFI adapter
 * both check with kc__xcall_attr_match), or all of them sorted by name for
 * an open signature. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "xcall/xcall_internal.h"

/* "f32", or "array of f64" for an array with a known element type. */
static const char* kc__attr_type_text(int32_t type, int32_t elem, char* buf,
                                      size_t cap) {
  if (type != KC_ATTR_ARRAY || !elem) return kc_attr_type_name(type);
  snprintf(buf, cap, "array of %s", kc_attr_type_name(elem));
  return buf;
}

const kc_attr* kc__xcall_attr_match(const kc_xcall_signature* sig, int32_t i,
                                    const kc_attr* given, bool float_hint, char* why,
                                    size_t cap) {
  const kc_xcall_attr_spec* spec = &sig->attrs[i];
  const kc_attr* a = given;
  if (!a && sig->attr_defaults && sig->attr_defaults[i].type) a = &sig->attr_defaults[i];
  if (a && a->type == spec->type &&
      !(spec->type == KC_ATTR_ARRAY && spec->elem_type && a->elem_type != spec->elem_type)) {
    return a;
  }
  char want[48], got[48];
  snprintf(why, cap, "attribute %s: expected %s, got %s%s", KC__QS(spec->name),
           kc__attr_type_text(spec->type, spec->elem_type, want, sizeof want),
           a ? kc__attr_type_text(a->type, a->elem_type, got, sizeof got) : "none",
           float_hint && a && spec->type == KC_ATTR_F32 && a->type == KC_ATTR_F64
               ? " (pass np.float32(...): a Python float is f64)"
               : "");
  return NULL;
}

static int kc__attr_by_name(const void* pa, const void* pb) {
  const kc_attr* a = pa;
  const kc_attr* b = pb;
  size_t n = a->name.size < b->name.size ? a->name.size : b->name.size;
  int cmp = n ? memcmp(a->name.data, b->name.data, n) : 0;
  if (cmp) return cmp;
  return (a->name.size > b->name.size) - (a->name.size < b->name.size);
}

kc_attr* kc__xcall_attrs_sorted(kc__arena* arena, const kc_attr_dict* dict) {
  kc_attr* out = kc__arena_alloc(arena, (dict->count + 1) * sizeof *out);
  if (!out) return NULL;
  if (dict->count) memcpy(out, dict->entries, dict->count * sizeof *out);
  qsort(out, dict->count, sizeof *out, kc__attr_by_name);
  for (size_t i = 0; i < dict->count; ++i) {
    if (out[i].type != KC_ATTR_DICT) continue;
    kc_attr* nested = kc__xcall_attrs_sorted(arena, &out[i].v.dict);
    if (!nested) return NULL;
    out[i].v.dict.entries = nested;
  }
  return out;
}
