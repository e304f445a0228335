/* The table of instructions added with kc_program_builder_add_instruction,
 * and the helpers their checks share; see instr.h. */
#include "program/instr/instr.h"

#include <stdarg.h>
#include <stdio.h>

#include "internal/common.h"
#include "program/shape_internal.h"

typedef struct kc__instr_family {
  const kc__instr_def* defs;
  const size_t* count;
} kc__instr_family;

static const kc__instr_family kc__families[] = {
    {kc__instr_builtin, &kc__instr_builtin_count}, /* first: its order is the opcode list's */
    {kc__instr_select, &kc__instr_select_count},
    {kc__instr_control, &kc__instr_control_count},
    {kc__instr_reduce, &kc__instr_reduce_count},
    {kc__instr_reduce_window, &kc__instr_reduce_window_count},
    {kc__instr_math, &kc__instr_math_count},
    {kc__instr_shape, &kc__instr_shape_count},
    {kc__instr_dot, &kc__instr_dot_count},
    {kc__instr_complex, &kc__instr_complex_count},
    {kc__instr_sort, &kc__instr_sort_count},
    {kc__instr_bits, &kc__instr_bits_count},
    {kc__instr_gather, &kc__instr_gather_count},
    {kc__instr_conv, &kc__instr_conv_count},
    {kc__instr_select_scatter, &kc__instr_select_scatter_count},
    {kc__instr_fft, &kc__instr_fft_count},
    {kc__instr_rng, &kc__instr_rng_count},
    {kc__instr_triangular, &kc__instr_triangular_count},
};

const kc__instr_def* kc__instr_def_find(int32_t op) {
  if (op == KC__OP_NONE) return NULL;
  for (size_t f = 0; f < KC__ARRAY_SIZE(kc__families); ++f) {
    for (size_t i = 0; i < *kc__families[f].count; ++i) {
      if (kc__families[f].defs[i].op == op) return &kc__families[f].defs[i];
    }
  }
  return NULL;
}

const kc__instr_def* kc__instr_def_find_name(kc_string_view name) {
  for (size_t f = 0; f < KC__ARRAY_SIZE(kc__families); ++f) {
    for (size_t i = 0; i < *kc__families[f].count; ++i) {
      const kc__instr_def* d = &kc__families[f].defs[i];
      if (kc_sv_equal(name, kc_sv(d->name))) return d;
    }
  }
  return NULL;
}

const kc__instr_def* kc__instr_def_at(size_t i) {
  for (size_t f = 0; f < KC__ARRAY_SIZE(kc__families); ++f) {
    if (i < *kc__families[f].count) return &kc__families[f].defs[i];
    i -= *kc__families[f].count;
  }
  return NULL;
}

const kc_attr* kc__instr_attr(const kc__instr* in, const char* name) {
  return kc_attr_dict_lookup(&in->attrs, kc_sv(name));
}

kc_status* kc__instr_attr_ints(const kc__instr* in, const char* name, bool optional,
                            const int64_t** out, size_t* out_count) {
  const kc_attr* a = kc__instr_attr(in, name);
  *out = NULL;
  *out_count = 0;
  if (!a) {
    if (optional) return NULL;
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected attribute %s={...}, got none",
                      name);
  }
  if (a->type != KC_ATTR_ARRAY || a->elem_type != KC_ATTR_I64) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "attribute %s: expected a list of integers", name);
  }
  *out = a->v.array.data;
  *out_count = a->v.array.count;
  return NULL;
}

kc_status* kc__instr_attr_int(const kc__instr* in, const char* name, int64_t* out) {
  const kc_attr* a = kc__instr_attr(in, name);
  if (!a) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected attribute %s=N, got none", name);
  }
  if (a->type != KC_ATTR_I64) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "attribute %s: expected an integer", name);
  }
  *out = a->v.i64;
  return NULL;
}

kc_status* kc__instr_attr_string(const kc__instr* in, const char* name, bool optional,
                              kc_string_view* out) {
  const kc_attr* a = kc__instr_attr(in, name);
  *out = (kc_string_view){NULL, 0};
  if (!a) {
    if (optional) return NULL;
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected attribute %s=WORD, got none",
                      name);
  }
  if (a->type != KC_ATTR_STRING) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "attribute %s: expected a word", name);
  }
  *out = a->v.str;
  return NULL;
}

const char* kc__instr_dtype_text(DLDataType t, char* buf, size_t cap) {
  const char* name = kc__hlo_dtype_name(t);
  if (name) return name;
  kc_dtype_format(t, buf, cap);
  return buf;
}

kc_status* kc__instr_expect_array(const kc__instr* in, const kc_shape* s, const char* what) {
  if (!kc_shape_is_tuple(s)) return NULL;
  return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: expected an array, got a tuple", what);
}

/* A box of `dims` elements: element (i0, i1, ...) goes from
 * src + sum(i_d * src_stride[d]) to dst + sum(i_d * dst_stride[d]), in
 * elements of `esize` bytes. Strides may be negative. */
void kc__box_copy(const kc__box* b, const char* src, char* dst, size_t esize) {
  for (int32_t d = 0; d < b->rank; ++d) {
    if (b->dims[d] <= 0) return;
  }
  src += b->src_offset * (int64_t)esize;
  dst += b->dst_offset * (int64_t)esize;
  if (b->rank == 0) {
    memcpy(dst, src, esize);
    return;
  }
  int32_t last = b->rank - 1;
  /* The innermost run is one memcpy when both sides are contiguous. */
  bool contiguous = b->src_stride[last] == 1 && b->dst_stride[last] == 1;
  int64_t run = b->dims[last];
  /* Only the rank's counters are cleared: zeroing KC_TENSOR_MAX_NDIM of
   * them costs more than a small box's copy. */
  int64_t idx[KC_TENSOR_MAX_NDIM];
  for (int32_t d = 0; d < b->rank; ++d) idx[d] = 0;
  const char* s = src;
  char* t = dst;
  for (;;) {
    if (contiguous) {
      memcpy(t, s, (size_t)run * esize);
    } else {
      const char* si = s;
      char* ti = t;
      for (int64_t i = 0; i < run; ++i) {
        memcpy(ti, si, esize);
        si += b->src_stride[last] * (int64_t)esize;
        ti += b->dst_stride[last] * (int64_t)esize;
      }
    }
    int32_t d = last - 1;
    for (; d >= 0; --d) {
      s += b->src_stride[d] * (int64_t)esize;
      t += b->dst_stride[d] * (int64_t)esize;
      if (++idx[d] < b->dims[d]) break;
      s -= b->src_stride[d] * b->dims[d] * (int64_t)esize;
      t -= b->dst_stride[d] * b->dims[d] * (int64_t)esize;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

int64_t kc__box_run(const kc__box* b) {
  int64_t run = 1;
  for (int32_t d = b->rank - 1; d >= 0; --d) {
    if (b->dims[d] == 1) continue; /* its strides never step */
    if (b->dims[d] <= 0) return 0;
    if (b->src_stride[d] != run || b->dst_stride[d] != run) return -1;
    run *= b->dims[d];
  }
  return run;
}

/* Row-major strides of `s`, in elements. */
void kc__instr_strides(const kc_shape* s, int64_t* out) {
  int64_t stride = 1;
  for (int32_t d = kc_shape_get_rank(s) - 1; d >= 0; --d) {
    out[d] = stride;
    stride *= kc_shape_get_dims(s)[d];
  }
}

int64_t kc__instr_load_index(const void* p, DLDataType t) {
  if (t.code == kDLInt) {
    switch (t.bits) {
      case 8: return *(const int8_t*)p;
      case 16: return *(const int16_t*)p;
      case 32: return *(const int32_t*)p;
      default: return *(const int64_t*)p;
    }
  }
  switch (t.bits) {
    case 8: return *(const uint8_t*)p;
    case 16: return *(const uint16_t*)p;
    case 32: return *(const uint32_t*)p;
    default: {
      uint64_t v = *(const uint64_t*)p;
      return v > INT64_MAX ? INT64_MAX : (int64_t)v;
    }
  }
}

int kc__instr_num_type(DLDataType t) {
  kc__etype e = kc__etype_of(t);
  return e <= KC__E_pred ? (int)e : (int)KC__E_NONE;
}

kc_status* kc__prepare_compile(const kc__prepare_ctx* ctx, const kc_program* program,
                               kc_executable** out) {
  kc_compile_options options;
  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.platform = ctx->platform;
  options.thread_pool = ctx->pool;
  return kc_program_compile(program, &options, out);
}
