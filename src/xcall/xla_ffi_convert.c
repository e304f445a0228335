/* kcall's values in XLA's terms, for the frames kcall builds and the
 * handlers it hosts: element types (both ways) and attributes. */
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "xcall/xla_ffi_internal.h"

/* ---- element types ---------------------------------------------------------------------- */

/* X(XLA name, DLPack code, bits, text) */
#define KC__XLA_DTYPES(X)                             \
  X(PRED, kDLBool, 8, "pred")                         \
  X(S8, kDLInt, 8, "s8")                              \
  X(S16, kDLInt, 16, "s16")                           \
  X(S32, kDLInt, 32, "s32")                           \
  X(S64, kDLInt, 64, "s64")                           \
  X(U8, kDLUInt, 8, "u8")                             \
  X(U16, kDLUInt, 16, "u16")                          \
  X(U32, kDLUInt, 32, "u32")                          \
  X(U64, kDLUInt, 64, "u64")                          \
  X(F16, kDLFloat, 16, "f16")                         \
  X(F32, kDLFloat, 32, "f32")                         \
  X(F64, kDLFloat, 64, "f64")                         \
  X(BF16, kDLBfloat, 16, "bf16")                      \
  X(C64, kDLComplex, 64, "c64")                       \
  X(C128, kDLComplex, 128, "c128")                    \
  X(S4, kDLInt, 4, "s4")                              \
  X(U4, kDLUInt, 4, "u4")                             \
  X(S2, kDLInt, 2, "s2")                              \
  X(U2, kDLUInt, 2, "u2")                             \
  X(F8E5M2, kDLFloat8_e5m2, 8, "f8e5m2")              \
  X(F8E4M3FN, kDLFloat8_e4m3fn, 8, "f8e4m3fn")        \
  X(F8E4M3B11FNUZ, kDLFloat8_e4m3b11fnuz, 8, "f8e4m3b11fnuz") \
  X(F8E5M2FNUZ, kDLFloat8_e5m2fnuz, 8, "f8e5m2fnuz")  \
  X(F8E4M3FNUZ, kDLFloat8_e4m3fnuz, 8, "f8e4m3fnuz")  \
  X(F8E4M3, kDLFloat8_e4m3, 8, "f8e4m3")              \
  X(F8E3M4, kDLFloat8_e3m4, 8, "f8e3m4")              \
  X(F8E8M0FNU, kDLFloat8_e8m0fnu, 8, "f8e8m0fnu")     \
  X(F4E2M1FN, kDLFloat4_e2m1fn, 4, "f4e2m1fn")

XLA_FFI_DataType kc__xla_dtype_from_dl(DLDataType t) {
  if (t.lanes != 1) return XLA_FFI_DataType_INVALID;
#define KC__FROM_DL(name, dl_code, dl_bits, text) \
  if (t.code == (dl_code) && t.bits == (dl_bits)) return XLA_FFI_DataType_##name;
  KC__XLA_DTYPES(KC__FROM_DL)
#undef KC__FROM_DL
  return XLA_FFI_DataType_INVALID;
}

bool kc__xla_dtype_to_dl(int64_t xla, DLDataType* out) {
  switch (xla) {
#define KC__TO_DL(name, dl_code, dl_bits, text)            \
  case XLA_FFI_DataType_##name:                           \
    *out = (DLDataType){(uint8_t)(dl_code), (uint8_t)(dl_bits), 1}; \
    return true;
    KC__XLA_DTYPES(KC__TO_DL)
#undef KC__TO_DL
    default: return false;
  }
}

const char* kc__xla_dtype_name(int64_t xla) {
  switch (xla) {
#define KC__NAME(name, dl_code, dl_bits, text) \
  case XLA_FFI_DataType_##name: return text;
    KC__XLA_DTYPES(KC__NAME)
#undef KC__NAME
    case XLA_FFI_DataType_TOKEN: return "token";
    default: return "unknown";
  }
}

/* ---- attributes ------------------------------------------------------------------------- */

static XLA_FFI_DataType kc__xla_attr_dtype(int32_t type) {
  switch (type) {
    case KC_ATTR_BOOL: return XLA_FFI_DataType_PRED;
    case KC_ATTR_I8: return XLA_FFI_DataType_S8;
    case KC_ATTR_I16: return XLA_FFI_DataType_S16;
    case KC_ATTR_I32: return XLA_FFI_DataType_S32;
    case KC_ATTR_I64: return XLA_FFI_DataType_S64;
    case KC_ATTR_U8: return XLA_FFI_DataType_U8;
    case KC_ATTR_U16: return XLA_FFI_DataType_U16;
    case KC_ATTR_U32: return XLA_FFI_DataType_U32;
    case KC_ATTR_U64: return XLA_FFI_DataType_U64;
    case KC_ATTR_F32: return XLA_FFI_DataType_F32;
    case KC_ATTR_F64: return XLA_FFI_DataType_F64;
    default: return XLA_FFI_DataType_INVALID;
  }
}

/* The scalar's value at its own width, in the arena. */
static void* kc__xla_scalar_value(kc__arena* arena, const kc_attr* a) {
  union {
    bool b;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
  } v;
  size_t size;
  switch (a->type) {
    case KC_ATTR_BOOL: v.b = a->v.b; size = sizeof v.b; break;
    case KC_ATTR_I8: v.i8 = (int8_t)a->v.i64; size = 1; break;
    case KC_ATTR_I16: v.i16 = (int16_t)a->v.i64; size = 2; break;
    case KC_ATTR_I32: v.i32 = (int32_t)a->v.i64; size = 4; break;
    case KC_ATTR_I64: v.i64 = a->v.i64; size = 8; break;
    case KC_ATTR_U8: v.u8 = (uint8_t)a->v.u64; size = 1; break;
    case KC_ATTR_U16: v.u16 = (uint16_t)a->v.u64; size = 2; break;
    case KC_ATTR_U32: v.u32 = (uint32_t)a->v.u64; size = 4; break;
    case KC_ATTR_U64: v.u64 = a->v.u64; size = 8; break;
    case KC_ATTR_F32: v.f32 = a->v.f32; size = 4; break;
    default: v.f64 = a->v.f64; size = 8; break;
  }
  return kc__arena_dup(arena, &v, size);
}

static int kc__xla_by_name(const void* pa, const void* pb) {
  const kc_attr* a = *(const kc_attr* const*)pa;
  const kc_attr* b = *(const kc_attr* const*)pb;
  size_t n = a->name.size < b->name.size ? a->name.size : b->name.size;
  int c = n ? memcmp(a->name.data, b->name.data, n) : 0;
  if (c) return c;
  return (a->name.size > b->name.size) - (a->name.size < b->name.size);
}

static kc_status* kc__xla_oom_status(void) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory building XLA attributes");
}

static kc_status* kc__xla_attr_value(kc__arena* arena, const kc_attr* a,
                                     XLA_FFI_AttrType* out_type, void** out) {
  switch (a->type) {
    case KC_ATTR_STRING: {
      XLA_FFI_ByteSpan* s = kc__arena_alloc(arena, sizeof *s);
      if (!s) return kc__xla_oom_status();
      s->ptr = a->v.str.data ? a->v.str.data : "";
      s->len = a->v.str.size;
      *out_type = XLA_FFI_AttrType_STRING;
      *out = s;
      return NULL;
    }
    case KC_ATTR_ARRAY: {
      XLA_FFI_DataType dt = kc__xla_attr_dtype(a->elem_type);
      if (dt == XLA_FFI_DataType_INVALID) {
        return kc_status_create(KC_INVALID_ARGUMENT,
                                "attribute %s: an array of %s has no XLA element type",
                                KC__Q(a->name),
                                kc_attr_type_name(a->elem_type));
      }
      XLA_FFI_Array* arr = kc__arena_alloc(arena, sizeof *arr);
      if (!arr) return kc__xla_oom_status();
      arr->dtype = dt;
      arr->size = a->v.array.count;
      arr->data = (void*)(uintptr_t)a->v.array.data;
      *out_type = XLA_FFI_AttrType_ARRAY;
      *out = arr;
      return NULL;
    }
    case KC_ATTR_DICT: {
      XLA_FFI_Attrs* d = kc__arena_alloc(arena, sizeof *d);
      if (!d) return kc__xla_oom_status();
      KC_RETURN_IF_ERROR(kc__xla_attrs_build(arena, &a->v.dict, d), "in attribute %s",
                         KC__Q(a->name));
      *out_type = XLA_FFI_AttrType_DICTIONARY;
      *out = d;
      return NULL;
    }
    default: {
      XLA_FFI_Scalar* s = kc__arena_alloc(arena, sizeof *s);
      if (!s) return kc__xla_oom_status();
      s->dtype = kc__xla_attr_dtype(a->type);
      if (s->dtype == XLA_FFI_DataType_INVALID) {
        return kc_status_create(KC_INVALID_ARGUMENT, "attribute %s: unknown type %d",
                                KC__Q(a->name), (int)a->type);
      }
      s->value = kc__xla_scalar_value(arena, a);
      if (!s->value) return kc__xla_oom_status();
      *out_type = XLA_FFI_AttrType_SCALAR;
      *out = s;
      return NULL;
    }
  }
}

kc_status* kc__xla_attrs_build(kc__arena* arena, const kc_attr_dict* dict,
                               XLA_FFI_Attrs* out) {
  size_t n = dict ? dict->count : 0;
  memset(out, 0, sizeof *out);
  out->struct_size = KC__XLA_ATTRS_SIZE;
  const kc_attr** sorted = kc__malloc((n + 1) * sizeof *sorted);
  out->types = kc__arena_alloc(arena, (n + 1) * sizeof *out->types);
  out->names = kc__arena_alloc(arena, (n + 1) * sizeof *out->names);
  out->attrs = kc__arena_alloc(arena, (n + 1) * sizeof *out->attrs);
  kc_status* st = NULL;
  if (!sorted || !out->types || !out->names || !out->attrs) st = kc__xla_oom_status();
  for (size_t i = 0; !st && i < n; ++i) sorted[i] = &dict->entries[i];
  if (!st && n > 1) qsort(sorted, n, sizeof *sorted, kc__xla_by_name);
  for (size_t i = 0; !st && i < n; ++i) {
    const kc_attr* a = sorted[i];
    if (i > 0 && kc_sv_equal(a->name, sorted[i - 1]->name)) {
      st = kc_status_create(KC_INVALID_ARGUMENT, "attribute %s is given twice",
                            KC__Q(a->name));
      break;
    }
    XLA_FFI_ByteSpan* name = kc__arena_alloc(arena, sizeof *name);
    if (!name) {
      st = kc__xla_oom_status();
      break;
    }
    name->ptr = a->name.data ? a->name.data : "";
    name->len = a->name.size;
    out->names[i] = name;
    st = kc__xla_attr_value(arena, a, &out->types[i], &out->attrs[i]);
  }
  kc__free(sorted);
  if (!st) out->size = (int64_t)n;
  return st;
}
