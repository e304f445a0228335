/* Deep copies of typed attributes; see attrs.h. */
#include "internal/attrs.h"

size_t kc__attr_elem_size(int32_t elem_type) {
  switch (elem_type) {
    case KC_ATTR_BOOL: case KC_ATTR_I8: case KC_ATTR_U8: return 1;
    case KC_ATTR_I16: case KC_ATTR_U16: return 2;
    case KC_ATTR_I32: case KC_ATTR_U32: case KC_ATTR_F32: return 4;
    case KC_ATTR_I64: case KC_ATTR_U64: case KC_ATTR_F64: return 8;
    default: return 0;
  }
}

bool kc__attr_copy(kc__arena* a, const kc_attr* s, kc_attr* d) {
  *d = *s;
  d->name.data = kc__arena_strdup(a, s->name);
  if (!d->name.data) return false;
  if (s->type == KC_ATTR_STRING) {
    d->v.str.data = kc__arena_strdup(a, s->v.str);
    return d->v.str.data != NULL;
  }
  if (s->type == KC_ATTR_ARRAY) {
    size_t width = kc__attr_elem_size(s->elem_type);
    if (!width || (s->v.array.count && !s->v.array.data)) return false;
    d->v.array.data = kc__arena_dup(a, s->v.array.data, s->v.array.count * width);
    return d->v.array.data != NULL;
  }
  if (s->type == KC_ATTR_DICT) return kc__attr_dict_copy(a, &s->v.dict, &d->v.dict);
  return s->type >= KC_ATTR_BOOL && s->type < KC_ATTR_DICT;
}

bool kc__attr_dict_copy(kc__arena* a, const kc_attr_dict* src, kc_attr_dict* dst) {
  dst->count = 0;
  dst->entries = NULL;
  if (!src || src->count == 0) return true;
  if (!src->entries) return false;
  kc_attr* out = kc__arena_alloc(a, src->count * sizeof *out);
  if (!out) return false;
  for (size_t i = 0; i < src->count; ++i) {
    if (!kc__attr_copy(a, &src->entries[i], &out[i])) return false;
  }
  dst->entries = out;
  dst->count = src->count;
  return true;
}

bool kc__attr_dict_well_formed(const kc_attr_dict* d) {
  if (!d || d->count == 0) return true;
  if (!d->entries) return false;
  for (size_t i = 0; i < d->count; ++i) {
    const kc_attr* s = &d->entries[i];
    if (s->type == KC_ATTR_ARRAY) {
      if (!kc__attr_elem_size(s->elem_type) ||
          (s->v.array.count && !s->v.array.data)) {
        return false;
      }
    } else if (s->type == KC_ATTR_DICT) {
      if (!kc__attr_dict_well_formed(&s->v.dict)) return false;
    } else if (s->type != KC_ATTR_STRING &&
               !(s->type >= KC_ATTR_BOOL && s->type < KC_ATTR_DICT)) {
      return false;
    }
  }
  return true;
}
