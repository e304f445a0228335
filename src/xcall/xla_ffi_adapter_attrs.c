/* XLA's attributes decoded for the adapter (xla_ffi_adapter.c): into
 * kc_attr for a kcall target, in its signature's order, or into kc_op_attr
 * values for an op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/arena.h"
#include "internal/common.h"
#include "kcall/op.h"
#include "kcall/value.h"
#include "xcall/xla_ffi_adapter_internal.h"

static int32_t kc__attr_type_of(XLA_FFI_DataType t) {
  switch (t) {
    case XLA_FFI_DataType_PRED: return KC_ATTR_BOOL;
    case XLA_FFI_DataType_S8: return KC_ATTR_I8;
    case XLA_FFI_DataType_S16: return KC_ATTR_I16;
    case XLA_FFI_DataType_S32: return KC_ATTR_I32;
    case XLA_FFI_DataType_S64: return KC_ATTR_I64;
    case XLA_FFI_DataType_U8: return KC_ATTR_U8;
    case XLA_FFI_DataType_U16: return KC_ATTR_U16;
    case XLA_FFI_DataType_U32: return KC_ATTR_U32;
    case XLA_FFI_DataType_U64: return KC_ATTR_U64;
    case XLA_FFI_DataType_F32: return KC_ATTR_F32;
    case XLA_FFI_DataType_F64: return KC_ATTR_F64;
    default: return 0;
  }
}

/* The number of numeric kc_attr_type `type` at `p` (stored at its own
 * width) into out->v, widened; false for a type that is not numeric. */
static bool kc__read_number(int32_t type, const void* p, kc_attr* out) {
  switch (type) {
    /* XLA's PRED is a byte: any value but 0 is true (a byte read as bool
     * must be 0 or 1). */
    case KC_ATTR_BOOL: out->v.b = *(const uint8_t*)p != 0; return true;
    case KC_ATTR_I8: out->v.i64 = *(const int8_t*)p; return true;
    case KC_ATTR_I16: out->v.i64 = *(const int16_t*)p; return true;
    case KC_ATTR_I32: out->v.i64 = *(const int32_t*)p; return true;
    case KC_ATTR_I64: out->v.i64 = *(const int64_t*)p; return true;
    case KC_ATTR_U8: out->v.u64 = *(const uint8_t*)p; return true;
    case KC_ATTR_U16: out->v.u64 = *(const uint16_t*)p; return true;
    case KC_ATTR_U32: out->v.u64 = *(const uint32_t*)p; return true;
    case KC_ATTR_U64: out->v.u64 = *(const uint64_t*)p; return true;
    case KC_ATTR_F32: out->v.f32 = *(const float*)p; return true;
    case KC_ATTR_F64: out->v.f64 = *(const double*)p; return true;
    default: return false;
  }
}

/* A widened number (out of kc__read_number) as an op attribute's value:
 * bool, int or float. False for an unsigned value above INT64_MAX, which
 * an op's int cannot hold. */
static bool kc__number_any(int32_t type, const kc_attr* a, kc_any* out) {
  switch (type) {
    case KC_ATTR_BOOL: *out = (kc_any){.type_index = KC_TYPE_BOOL, .u.v_int64 = a->v.b}; return true;
    case KC_ATTR_U8: case KC_ATTR_U16: case KC_ATTR_U32: case KC_ATTR_U64:
      if (a->v.u64 > (uint64_t)INT64_MAX) return false;
      *out = (kc_any){.type_index = KC_TYPE_INT, .u.v_int64 = (int64_t)a->v.u64};
      return true;
    case KC_ATTR_F32: *out = (kc_any){.type_index = KC_TYPE_FLOAT, .u.v_float64 = a->v.f32}; return true;
    case KC_ATTR_F64: *out = (kc_any){.type_index = KC_TYPE_FLOAT, .u.v_float64 = a->v.f64}; return true;
    default: *out = (kc_any){.type_index = KC_TYPE_INT, .u.v_int64 = a->v.i64}; return true;
  }
}

/* Room for n attributes: from the arena, or the pool's tail. */
static kc_attr* kc__decoder_take(kc__decoder* d, size_t n) {
  if (d->arena) return kc__arena_alloc(d->arena, (n + 1) * sizeof(kc_attr));
  if (n > (size_t)d->pool_left) return NULL;
  d->pool_left -= (int32_t)n;
  d->pool -= n;
  return d->pool;
}

static XLA_FFI_Error* kc__decode_dict(kc__decoder* d, const XLA_FFI_Attrs* in,
                                      kc_attr* out);

static XLA_FFI_Error* kc__decode_one(kc__decoder* d, XLA_FFI_AttrType type,
                                     const XLA_FFI_ByteSpan* name, const void* value,
                                     kc_attr* out) {
  if (--d->budget < 0) goto too_many;
  out->name = (kc_string_view){name->ptr, name->len};
  if (d->arena && !(out->name.data = kc__arena_strdup(d->arena, out->name))) goto oom;
  switch (type) {
    case XLA_FFI_AttrType_SCALAR: {
      const XLA_FFI_Scalar* s = value;
      out->type = kc__attr_type_of(s->dtype);
      if (!kc__read_number(out->type, s->value, out)) {
          return kc__adapter_error(d->api, KC_INVALID_ARGUMENT,
                                   "%s: attribute %s: scalars of type %s are not "
                                   "supported (expected pred, s8..s64, u8..u64, f32 "
                                   "or f64)",
                                   d->who, KC__Q(((kc_string_view){name->ptr, name->len})),
                                   kc__xla_dtype_name(s->dtype));
      }
      return NULL;
    }
    case XLA_FFI_AttrType_ARRAY: {
      const XLA_FFI_Array* a = value;
      out->type = KC_ATTR_ARRAY;
      out->elem_type = kc__attr_type_of(a->dtype);
      if (!out->elem_type) {
        return kc__adapter_error(d->api, KC_INVALID_ARGUMENT,
                                 "%s: attribute %s: arrays of %s are not "
                                 "supported (expected pred, s8..s64, u8..u64, f32 "
                                 "or f64)",
                                 d->who, KC__Q(((kc_string_view){name->ptr, name->len})),
                                 kc__xla_dtype_name(a->dtype));
      }
      const void* data = a->data;
      if (d->arena &&
          !(data = kc__arena_dup(d->arena, a->data, a->size * kc__attr_width(out->elem_type)))) {
        goto oom;
      }
      out->v.array.data = data;
      out->v.array.count = a->size;
      return NULL;
    }
    case XLA_FFI_AttrType_STRING: {
      const XLA_FFI_ByteSpan* s = value;
      out->type = KC_ATTR_STRING;
      out->v.str = (kc_string_view){s->ptr, s->len};
      if (d->arena && !(out->v.str.data = kc__arena_strdup(d->arena, out->v.str))) goto oom;
      return NULL;
    }
    case XLA_FFI_AttrType_DICTIONARY: {
      const XLA_FFI_Attrs* dict = value;
      if (dict->size < 0 || dict->size > KC__ADAPTER_MAX_ATTRS) goto too_many;
      kc_attr* entries = kc__decoder_take(d, (size_t)dict->size);
      if (!entries) goto oom;
      out->type = KC_ATTR_DICT;
      out->v.dict = (kc_attr_dict){(size_t)dict->size, entries};
      return kc__decode_dict(d, dict, entries);
    }
    default:
      return kc__adapter_error(d->api, KC_INVALID_ARGUMENT,
                               "%s: attribute %s: unknown XLA attribute kind %d",
                               d->who, KC__Q(((kc_string_view){name->ptr, name->len})), (int)type);
  }
oom:
  if (!d->arena) goto too_many;
  return kc__adapter_error(d->api, KC_RESOURCE_EXHAUSTED, "%s: out of memory decoding attributes",
                           d->who);
too_many:
  return kc__adapter_error(d->api, KC_INVALID_ARGUMENT,
                           "%s: more than %d attributes (dictionary entries included)", d->who,
                           KC__ADAPTER_MAX_ATTRS);
}

static XLA_FFI_Error* kc__decode_dict(kc__decoder* d, const XLA_FFI_Attrs* in,
                                      kc_attr* out) {
  if (in->size < 0 || (in->size && (!in->types || !in->names || !in->attrs))) {
    return kc__adapter_error(d->api, KC_INVALID_ARGUMENT, "%s: malformed XLA attributes",
                             d->who);
  }
  for (int64_t i = 0; i < in->size; ++i) {
    XLA_FFI_Error* err = kc__decode_one(d, in->types[i], in->names[i], in->attrs[i], &out[i]);
    if (err) return err;
  }
  return NULL;
}

/* The attribute `name` of XLA's list (sorted by name), or -1. */
static int64_t kc__find_attr(const XLA_FFI_Attrs* attrs, const char* name) {
  size_t len = strlen(name);
  for (int64_t i = 0; i < attrs->size; ++i) {
    const XLA_FFI_ByteSpan* n = attrs->names[i];
    if (n->len == len && memcmp(n->ptr, name, len) == 0) return i;
  }
  return -1;
}

/* The attributes a target's signature declares, in its order, each of its
 * declared type; an open signature takes all of XLA's, in XLA's order. */
XLA_FFI_Error* kc__decode_target_attrs(kc__decoder* d, const kc_xcall_signature* sig,
                                       const XLA_FFI_Attrs* in, kc_attr** out,
                                       int32_t* out_count) {
  bool open = sig->flags & KC_XCALL_SIG_OPEN;
  /* Looked up by name below: the lists must be there. */
  if (in->size < 0 || (in->size && (!in->types || !in->names || !in->attrs))) {
    return kc__adapter_error(d->api, KC_INVALID_ARGUMENT, "%s: malformed XLA attributes",
                             d->who);
  }
  int64_t n = open ? in->size : sig->num_attrs;
  if (n < 0 || n > KC__ADAPTER_MAX_ATTRS) {
    return kc__adapter_error(d->api, KC_INVALID_ARGUMENT,
                             "%s: more than %d attributes (dictionary entries included)",
                             d->who, KC__ADAPTER_MAX_ATTRS);
  }
  kc_attr* attrs = *out = kc__decoder_take(d, (size_t)n);
  if (!attrs) {
    return kc__adapter_error(d->api, KC_RESOURCE_EXHAUSTED,
                             "%s: out of memory decoding attributes", d->who);
  }
  *out_count = (int32_t)n;
  if (open) return kc__decode_dict(d, in, attrs);
  for (int32_t i = 0; i < sig->num_attrs; ++i) {
    int64_t at = kc__find_attr(in, sig->attrs[i].name);
    const kc_attr* given = NULL;
    if (at >= 0) {
      XLA_FFI_Error* err = kc__decode_one(d, in->types[at], in->names[at], in->attrs[at],
                                          &attrs[i]);
      if (err) return err;
      given = &attrs[i];
    }
    char why[KC__XCALL_ATTR_WHY_CAP];
    const kc_attr* a = kc__xcall_attr_match(sig, i, given, true, why, sizeof why);
    if (!a) return kc__adapter_error(d->api, KC_INVALID_ARGUMENT, "%s: %s", d->who, why);
    /* A default is owned by the target, which outlives the call. */
    attrs[i] = *a;
  }
  return NULL;
}

/* The refusal of an unsigned value an op's int cannot hold: the
 * attribute's, or its element `index` - 1. */
static kc_status* kc__too_big(const kc_attr* a, size_t index) {
  char where[48] = "";
  if (index) snprintf(where, sizeof where, " (element %zu)", index - 1);
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "attribute %s%s: an unsigned value above %lld, which an "
                          "op's int cannot hold",
                          KC__Q(a->name), where, (long long)INT64_MAX);
}

kc_status* kc__op_attr_from(const kc_attr* a, kc_op_attr* o) {
  o->name = a->name;
  o->value = kc_any_none();
  switch (a->type) {
    case KC_ATTR_BOOL: case KC_ATTR_I8: case KC_ATTR_I16: case KC_ATTR_I32: case KC_ATTR_I64:
    case KC_ATTR_U8: case KC_ATTR_U16: case KC_ATTR_U32: case KC_ATTR_U64:
    case KC_ATTR_F32: case KC_ATTR_F64:
      return kc__number_any(a->type, a, &o->value) ? NULL : kc__too_big(a, 0);
    case KC_ATTR_STRING: {
      kc_str* s = NULL;
      KC_RETURN_IF_ERROR(kc_str_create(NULL, a->v.str, &s));
      o->value = (kc_any){.type_index = KC_TYPE_STR, .u.v_obj = KC_OBJECT(s)};
      return NULL;
    }
    case KC_ATTR_ARRAY: {
      size_t count = a->v.array.count;
      kc_any* items = kc__calloc(count + 1, sizeof *items);
      if (!items) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
      kc_status* st = NULL;
      for (size_t k = 0; !st && k < count; ++k) {
        kc_attr elem = {0}; /* kc__read_number writes the member of its type */
        kc__read_number(a->elem_type,
                        (const char*)a->v.array.data + k * kc__attr_width(a->elem_type),
                        &elem);
        if (!kc__number_any(a->elem_type, &elem, &items[k])) st = kc__too_big(a, k + 1);
      }
      kc_array* arr = NULL;
      if (!st) st = kc_array_create(NULL, items, count, &arr);
      kc__free(items);
      if (!st) o->value = (kc_any){.type_index = KC_TYPE_ARRAY, .u.v_obj = KC_OBJECT(arr)};
      return st;
    }
    default:
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "attribute %s: dictionaries are not op attributes",
                              KC__Q(a->name));
  }
}

/* An op's attributes as kc_op_attr values (numbers, strings, arrays of
 * numbers); what the op does not declare is left for kc_op_call_into to
 * refuse by name. */
XLA_FFI_Error* kc__decode_op_attrs(kc__decoder* d, const XLA_FFI_Attrs* in,
                                   kc_op_attr** op_attrs, int32_t* num_op_attrs) {
  kc_attr* attrs = kc__arena_alloc(d->arena, ((size_t)in->size + 1) * sizeof *attrs);
  *op_attrs = kc__calloc((size_t)in->size + 1, sizeof **op_attrs);
  if (!attrs || !*op_attrs) {
    return kc__adapter_error(d->api, KC_RESOURCE_EXHAUSTED,
                             "%s: out of memory decoding attributes", d->who);
  }
  XLA_FFI_Error* err = kc__decode_dict(d, in, attrs);
  if (err) return err;
  for (int64_t i = 0; i < in->size; ++i) {
    kc_status* st = kc__op_attr_from(&attrs[i], &(*op_attrs)[i]);
    if (st) return kc__adapter_error_from(d->api, d->who, st);
    *num_op_attrs = (int32_t)(i + 1);
  }
  return NULL;
}
