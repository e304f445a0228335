/* Shapes: arrays and tuples nested to any depth. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/shape_internal.h"

typedef struct kc__hlo_type {
  const char* name;
  uint8_t code;
  uint8_t bits;
} kc__hlo_type;

static const kc__hlo_type kc__hlo_types[] = {
    {"pred", kDLBool, 8},    {"s8", kDLInt, 8},       {"s16", kDLInt, 16},
    {"s32", kDLInt, 32},     {"s64", kDLInt, 64},     {"u8", kDLUInt, 8},
    {"u16", kDLUInt, 16},    {"u32", kDLUInt, 32},    {"u64", kDLUInt, 64},
    {"f16", kDLFloat, 16},   {"bf16", kDLBfloat, 16}, {"f32", kDLFloat, 32},
    {"f64", kDLFloat, 64},   {"c64", kDLComplex, 64}, {"c128", kDLComplex, 128},
};

const char* kc__hlo_dtype_name(DLDataType dtype) {
  if (dtype.lanes != 1) return NULL;
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__hlo_types); ++i) {
    if (kc__hlo_types[i].code == dtype.code &&
        kc__hlo_types[i].bits == dtype.bits) {
      return kc__hlo_types[i].name;
    }
  }
  return NULL;
}

bool kc__hlo_dtype_parse(kc_string_view text, DLDataType* out) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__hlo_types); ++i) {
    if (kc_sv_equal(text, kc_sv(kc__hlo_types[i].name))) {
      *out = kc_dtype_make(kc__hlo_types[i].code, kc__hlo_types[i].bits, 1);
      return true;
    }
  }
  kc_status* st = kc_dtype_parse(text, out);
  if (!st) return true;
  kc_status_destroy(st);
  return false;
}

static kc_status* kc__shape_oom(void) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory creating a shape");
}

kc_status* kc_shape_create_array(DLDataType dtype, const int64_t* dims,
                                 int32_t rank, kc_shape** out_shape) {
  if (!out_shape) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_shape_create_array: out is NULL");
  }
  *out_shape = NULL;
  if (rank < 0 || rank > KC_TENSOR_MAX_NDIM || (rank > 0 && !dims)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "shape: rank: expected 0 to %d with dims, got %d",
                            KC_TENSOR_MAX_NDIM, rank);
  }
  if (dtype.bits == 0 || dtype.lanes == 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "shape: dtype: expected non-zero bits and lanes");
  }
  uint64_t elems = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "shape: dimension %d: expected >= 0, got %lld", i,
                              (long long)dims[i]);
    }
    if (__builtin_mul_overflow(elems, (uint64_t)dims[i], &elems)) {
      return kc_status_create(KC_OUT_OF_RANGE, "shape: the element count overflows");
    }
  }
  uint64_t bits;
  if (__builtin_mul_overflow(elems, (uint64_t)dtype.bits * dtype.lanes, &bits) ||
      bits / 8 > (uint64_t)(SIZE_MAX / 4)) {
    return kc_status_create(KC_OUT_OF_RANGE, "shape: the byte size overflows");
  }
  kc_shape* s = kc__calloc(1, sizeof *s + (size_t)rank * sizeof(int64_t));
  if (!s) return kc__shape_oom();
  s->dtype = dtype;
  s->rank = rank;
  if (rank) memcpy(s->storage, dims, (size_t)rank * sizeof(int64_t));
  s->dims = rank ? s->storage : NULL;
  s->leaf_count = 1;
  s->byte_size = (size_t)((bits + 7) / 8);
  *out_shape = s;
  return NULL;
}

kc_status* kc_shape_create_tuple(const kc_shape* const* elements, size_t count,
                                 kc_shape** out_shape) {
  if (!out_shape || (count && !elements)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_shape_create_tuple: %s is NULL",
                            out_shape ? "elements" : "out");
  }
  *out_shape = NULL;
  for (size_t i = 0; i < count; ++i) {
    if (!elements[i]) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "tuple shape: element %zu is NULL", i);
    }
  }
  kc_shape* s = kc__calloc(1, sizeof *s);
  if (!s) return kc__shape_oom();
  s->is_tuple = true;
  s->rank = -1;
  s->elements = count ? kc__calloc(count, sizeof *s->elements) : NULL;
  if (count && !s->elements) {
    kc__free(s);
    return kc__shape_oom();
  }
  for (size_t i = 0; i < count; ++i) {
    kc_status* st = kc_shape_create_copy(elements[i], &s->elements[i]);
    if (st) {
      kc_shape_destroy(s);
      return st;
    }
    s->count = i + 1;
    s->leaf_count += s->elements[i]->leaf_count;
    if (__builtin_add_overflow(s->byte_size, s->elements[i]->byte_size,
                               &s->byte_size)) {
      kc_shape_destroy(s);
      return kc_status_create(KC_OUT_OF_RANGE, "tuple shape: the byte size overflows");
    }
  }
  *out_shape = s;
  return NULL;
}

kc_status* kc_shape_create_copy(const kc_shape* shape, kc_shape** out_shape) {
  if (!shape) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_shape_create_copy: shape is NULL");
  }
  if (shape->is_tuple) {
    return kc_shape_create_tuple((const kc_shape* const*)shape->elements,
                                 shape->count, out_shape);
  }
  return kc_shape_create_array(shape->dtype, shape->dims, shape->rank, out_shape);
}

void kc_shape_destroy(kc_shape* shape) {
  if (!shape) return;
  for (size_t i = 0; i < shape->count; ++i) kc_shape_destroy(shape->elements[i]);
  kc__free(shape->elements);
  kc__free(shape);
}

bool kc_shape_is_tuple(const kc_shape* shape) { return shape && shape->is_tuple; }

size_t kc_shape_get_tuple_size(const kc_shape* shape) {
  return shape && shape->is_tuple ? shape->count : 0;
}

const kc_shape* kc_shape_get_element(const kc_shape* shape, size_t index) {
  if (!shape || !shape->is_tuple || index >= shape->count) return NULL;
  return shape->elements[index];
}

DLDataType kc_shape_get_dtype(const kc_shape* shape) {
  return shape && !shape->is_tuple ? shape->dtype : kc_dtype_make(0, 0, 0);
}

int32_t kc_shape_get_rank(const kc_shape* shape) {
  return shape && !shape->is_tuple ? shape->rank : -1;
}

const int64_t* kc_shape_get_dims(const kc_shape* shape) {
  /* A scalar's dims are an empty array, not NULL, so that copying or
   * comparing rank-many of them never passes NULL to memcpy. */
  static const int64_t no_dims[1] = {0};
  if (!shape || shape->is_tuple) return NULL;
  return shape->dims ? shape->dims : no_dims;
}

size_t kc_shape_get_leaf_count(const kc_shape* shape) {
  return shape ? shape->leaf_count : 0;
}

const kc_shape* kc_shape_get_leaf(const kc_shape* shape, size_t index) {
  while (shape && shape->is_tuple) {
    const kc_shape* next = NULL;
    for (size_t i = 0; i < shape->count; ++i) {
      if (index < shape->elements[i]->leaf_count) {
        next = shape->elements[i];
        break;
      }
      index -= shape->elements[i]->leaf_count;
    }
    shape = next;
  }
  return shape && index == 0 ? shape : NULL;
}

size_t kc_shape_get_byte_size(const kc_shape* shape) {
  return shape ? shape->byte_size : 0;
}

bool kc_shape_equal(const kc_shape* a, const kc_shape* b) {
  if (!a || !b) return a == b;
  if (a->is_tuple != b->is_tuple) return false;
  if (a->is_tuple) {
    if (a->count != b->count) return false;
    for (size_t i = 0; i < a->count; ++i) {
      if (!kc_shape_equal(a->elements[i], b->elements[i])) return false;
    }
    return true;
  }
  return kc_dtype_equal(a->dtype, b->dtype) && a->rank == b->rank &&
         (a->rank == 0 ||
          memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(int64_t)) == 0);
}


static void kc__shape_print(const kc_shape* s, char* buf, size_t cap,
                            size_t* len) {
  if (s->is_tuple) {
    kc__appendf(buf, cap, len, "(");
    for (size_t i = 0; i < s->count; ++i) {
      if (i) kc__appendf(buf, cap, len, ", ");
      kc__shape_print(s->elements[i], buf, cap, len);
    }
    kc__appendf(buf, cap, len, ")");
    return;
  }
  const char* name = kc__hlo_dtype_name(s->dtype);
  char other[48];
  if (!name) {
    kc_dtype_format(s->dtype, other, sizeof other);
    name = other;
  }
  kc__appendf(buf, cap, len, "%s[", name);
  for (int32_t i = 0; i < s->rank; ++i) {
    kc__appendf(buf, cap, len, i ? ",%lld" : "%lld", (long long)s->dims[i]);
  }
  kc__appendf(buf, cap, len, "]");
}

size_t kc_shape_format(const kc_shape* shape, char* buf, size_t cap) {
  size_t len = 0;
  if (cap) buf[0] = '\0';
  if (!shape) {
    kc__appendf(buf, cap, &len, "(null)");
    return len;
  }
  kc__shape_print(shape, buf, cap, &len);
  return len;
}

void kc__shape_leaves(const kc_shape* s, const kc_shape** out, size_t* n) {
  if (!s->is_tuple) {
    out[(*n)++] = s;
    return;
  }
  for (size_t i = 0; i < s->count; ++i) kc__shape_leaves(s->elements[i], out, n);
}

bool kc__shape_same_dims(const kc_shape* a, const kc_shape* b) {
  return a->rank == b->rank &&
         (a->rank == 0 || memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(int64_t)) == 0);
}

int64_t kc__shape_elements(const kc_shape* s) {
  int64_t n = 1;
  for (int32_t d = 0; d < s->rank; ++d) n *= s->dims[d];
  return n;
}
