/* kcall values and statuses to tvm-ffi's and back (the tables are in
 * kcall/tvm_ffi.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "internal/object.h"
#include "kcall/tensor.h"
#include "tvmffi/tvmffi_internal.h"

/* ---- errors -------------------------------------------------------------- */

static const struct {
  const char* kind;
  kc_status_code code;
} kc__kinds[] = {
    {"ValueError", KC_INVALID_ARGUMENT},
    {"TypeError", KC_INVALID_ARGUMENT},
    {"IndexError", KC_OUT_OF_RANGE},
    {"KeyError", KC_NOT_FOUND},
    {"AttributeError", KC_NOT_FOUND},
    {"NotImplementedError", KC_UNIMPLEMENTED},
    {"MemoryError", KC_RESOURCE_EXHAUSTED},
};

static kc_status_code kc__code_of_kind(kc__tvm_byte_array kind) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__kinds); ++i) {
    if (strlen(kc__kinds[i].kind) == kind.size &&
        memcmp(kc__kinds[i].kind, kind.data, kind.size) == 0) {
      return kc__kinds[i].code;
    }
  }
  return KC_UNKNOWN;
}

static const char* kc__kind_of_code(kc_status_code code) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__kinds); ++i) {
    /* The first kind of each code is the one it maps back to. */
    if (kc__kinds[i].code == code) return kc__kinds[i].kind;
  }
  return "RuntimeError";
}

kc_status* kc__tvm_error_to_status(const kc__tvm_api* api, int rc,
                                   const char* what) {
  void* err = NULL;
  api->error_move_from_raised(&err);
  if (rc == -2) {
    if (err) api->object_dec_ref(err);
    return kc_status_create(KC_CANCELLED,
                            "%s was interrupted (tvm-ffi reported a signal, "
                            "such as Python's KeyboardInterrupt)",
                            what);
  }
  if (!err) {
    return kc_status_create(KC_UNKNOWN,
                            "%s failed (returned %d) without raising a "
                            "tvm-ffi error",
                            what, rc);
  }
  kc_status* st;
  if (((kc__tvm_object*)err)->type_index != KC__TVM_ERROR) {
    st = kc_status_create(KC_UNKNOWN,
                          "%s failed (returned %d) and raised an object of "
                          "tvm-ffi type %d, not an error",
                          what, rc, ((kc__tvm_object*)err)->type_index);
  } else {
    const kc__tvm_error_cell* cell = KC__TVM_CELL(err);
    st = kc_status_create(kc__code_of_kind(cell->kind), "%.*s: %.*s",
                          (int)cell->kind.size, cell->kind.data,
                          (int)cell->message.size, cell->message.data);
    st = kc_status_add_context(st, "in %s", what);
  }
  api->object_dec_ref(err);
  return st;
}

/* The length of a "Kind: " prefix of `msg` naming an error kind (an
 * identifier starting with a capital letter, as tvm-ffi's kinds do:
 * ValueError, KernelFault), or 0. */
static size_t kc__kind_prefix(const char* msg) {
  if (!(msg[0] >= 'A' && msg[0] <= 'Z')) return 0;
  size_t n = 1;
  while ((msg[n] >= 'A' && msg[n] <= 'Z') || (msg[n] >= 'a' && msg[n] <= 'z') ||
         (msg[n] >= '0' && msg[n] <= '9') || msg[n] == '_') {
    ++n;
  }
  return msg[n] == ':' && msg[n + 1] == ' ' ? n : 0;
}

int kc__tvm_raise_status(const kc__tvm_api* api, kc_status* st) {
  const char* inner = kc_status_get_message(st);
  size_t kind_len = kc__kind_prefix(inner);
  char kind[64];
  if (kind_len > 0 && kind_len < sizeof kind) {
    memcpy(kind, inner, kind_len);
    kind[kind_len] = '\0';
    inner += kind_len + 2;
  } else {
    snprintf(kind, sizeof kind, "%s", kc__kind_of_code(kc_status_get_code(st)));
  }
  /* The message: the contexts, outermost first, then the innermost text. */
  size_t cap = strlen(inner) + 1;
  size_t nctx = kc_status_get_context_count(st);
  for (size_t i = 0; i < nctx; ++i) cap += strlen(kc_status_get_context(st, i)) + 2;
  char* text = kc__malloc(cap);
  if (text) {
    size_t len = 0;
    for (size_t i = 0; i < nctx; ++i) {
      kc__appendf(text, cap, &len, "%s: ", kc_status_get_context(st, i));
    }
    kc__appendf(text, cap, &len, "%s", inner);
  }
  api->error_set_raised_from_cstr(kind, text ? text : inner);
  kc__free(text);
  kc_status_destroy(st);
  return -1;
}

/* ---- scratch ------------------------------------------------------------- */

/* The next free slot of an inline array of `n` entries backed by a heap
 * array of s->capacity entries; NULL when memory runs out. */
static void* kc__slot(void* inline_items, size_t n, void** more, size_t* used,
                      size_t size, size_t capacity) {
  if (*used < n) return (char*)inline_items + (*used)++ * size;
  if (!*more) {
    *more = kc__calloc(capacity, size);
    if (!*more) return NULL;
  }
  if (*used - n >= capacity) return NULL;
  return (char*)*more + (*used)++ * size - n * size;
}

void kc__tvm_scratch_release(const kc__tvm_api* api, kc__tvm_scratch* s) {
  for (size_t i = 0; i < s->tvm_used; ++i) {
    api->object_dec_ref(i < KC__ARRAY_SIZE(s->tvm_objects)
                            ? s->tvm_objects[i]
                            : s->more_tvm_objects[i - KC__ARRAY_SIZE(s->tvm_objects)]);
  }
  for (size_t i = 0; i < s->kc_used; ++i) {
    kc_any_release(i < KC__ARRAY_SIZE(s->kc_values)
                       ? &s->kc_values[i]
                       : &s->more_kc_values[i - KC__ARRAY_SIZE(s->kc_values)]);
  }
  for (size_t i = 0; i < s->views_used; ++i) {
    kc__free(i < KC__ARRAY_SIZE(s->views) ? s->views[i]
                                      : s->more_views[i - KC__ARRAY_SIZE(s->views)]);
  }
  kc__free(s->more_bytes);
  kc__free(s->more_tvm_objects);
  kc__free(s->more_kc_values);
  kc__free(s->more_views);
}

static kc_status* kc__oom(void) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- kcall -> tvm-ffi ---------------------------------------------------- */

static kc_status* kc__refuse_to_tvm(const kc_any* in, int32_t index,
                                    const char* fn) {
  const char* what = in->type_index == KC_TYPE_ARRAY ? "an array"
                     : in->type_index == KC_TYPE_MODULE ? "a module"
                                                        : "a value";
  return kc_status_create(
      KC_INVALID_ARGUMENT,
      "%s %d of %s: %s (kcall type %d) does not cross to tvm-ffi (its C ABI "
      "has no constructor for it); pass tensors, scalars, strings, bytes or "
      "functions",
      index < 0 ? "result" : "argument", index < 0 ? 0 : index, fn, what,
      in->type_index);
}

kc_status* kc__tvm_arg_from_kc(const kc__tvm_api* api, const kc_any* in,
                               kc__tvm_any* out, kc__tvm_scratch* s,
                               int32_t index, const char* fn) {
  if (kc__pod_to_tvm(in, out)) {
    if (!kc__tvm_needs_strides(out)) return NULL;
    size_t ndim = (size_t)((const DLTensor*)out->u.v_ptr)->ndim;
    void** slot = kc__slot(s->views, KC__ARRAY_SIZE(s->views), (void**)&s->more_views,
                           &s->views_used, sizeof(void*), s->capacity);
    DLTensor* copy = slot ? kc__malloc(sizeof *copy + ndim * sizeof(int64_t)) : NULL;
    if (!copy) {
      if (slot) s->views_used--;
      return kc__oom();
    }
    *slot = copy;
    kc__tvm_lend_strided(out, copy, (int64_t*)(void*)(copy + 1));
    return NULL;
  }
  out->small_len = 0;
  out->u.v_int64 = 0;
  switch (in->type_index) {
    case KC_TYPE_STR:
    case KC_TYPE_TENSOR: {
      const kc_str* str = (const kc_str*)(const void*)in->u.v_obj;
      if (in->type_index == KC_TYPE_STR && !memchr(str->data, '\0', str->size)) {
        out->type_index = KC__TVM_RAW_STR;
        out->u.v_c_str = str->data;
        return NULL;
      }
      /* Text with a NUL inside (which a C string would cut), and a tensor
       * object (which a function taking tvm-ffi's Tensor needs as one):
       * a tvm-ffi object made for the call. */
      void** slot = kc__slot(s->tvm_objects, KC__ARRAY_SIZE(s->tvm_objects),
                             (void**)&s->more_tvm_objects, &s->tvm_used,
                             sizeof(void*), s->capacity);
      if (!slot) return kc__oom();
      kc_any copy = *in;
      kc_any_retain(&copy);
      kc_status* st = kc__tvm_from_kc_owned(api, &copy, out, fn);
      if (st) {
        s->tvm_used--;
        return kc_status_add_context(st, "argument %d of %s", index, fn);
      }
      *slot = out->u.v_obj;
      return NULL;
    }
    case KC_TYPE_BYTES: {
      const kc_str* b = (const kc_str*)(const void*)in->u.v_obj;
      kc__tvm_byte_array* arr =
          kc__slot(s->bytes, KC__ARRAY_SIZE(s->bytes), (void**)&s->more_bytes,
                   &s->bytes_used, sizeof *arr, s->capacity);
      if (!arr) return kc__oom();
      arr->data = b->data;
      arr->size = b->size;
      out->type_index = KC__TVM_BYTE_ARRAY_PTR;
      out->u.v_ptr = arr;
      return NULL;
    }
    case KC_TYPE_FUNC: {
      void** slot = kc__slot(s->tvm_objects, KC__ARRAY_SIZE(s->tvm_objects),
                             (void**)&s->more_tvm_objects, &s->tvm_used,
                             sizeof(void*), s->capacity);
      if (!slot) return kc__oom();
      void* obj = NULL;
      kc_status* st =
          kc__tvm_func_from_kc(api, (kc_func*)(void*)in->u.v_obj, &obj);
      if (st) {
        s->tvm_used--;
        return kc_status_add_context(st, "argument %d of %s", index, fn);
      }
      *slot = obj;
      out->type_index = KC__TVM_FUNCTION;
      out->u.v_obj = obj;
      return NULL;
    }
    default:
      return kc__refuse_to_tvm(in, index, fn);
  }
}

kc_status* kc__tvm_from_kc_owned(const kc__tvm_api* api, kc_any* in,
                                 kc__tvm_any* out, const char* fn) {
  kc_status* st = NULL;
  memset(out, 0, sizeof *out);
  if (in->type_index == KC_TYPE_RAW_STR || in->type_index == KC_TYPE_STR ||
      in->type_index == KC_TYPE_BYTES) {
    kc_string_view v = {0};
    if (in->type_index == KC_TYPE_RAW_STR) {
      v = kc_sv(in->u.v_c_str);
    } else {
      const kc_str* str = (const kc_str*)(const void*)in->u.v_obj;
      v = (kc_string_view){str->data, str->size};
    }
    kc__tvm_byte_array arr = {v.data, v.size};
    int rc = in->type_index == KC_TYPE_BYTES
                 ? api->bytes_from_byte_array(&arr, out)
                 : api->string_from_byte_array(&arr, out);
    if (rc != 0) st = kc__tvm_error_to_status(api, rc, "making a tvm-ffi string");
  } else if (in->type_index == KC_TYPE_DLTENSOR_PTR) {
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "the result of %s is a borrowed DLTensor*, which "
                          "tvm-ffi cannot hold past the call; return a "
                          "tensor object",
                          fn);
  } else if (in->type_index != KC_TYPE_TENSOR && in->type_index != KC_TYPE_FUNC &&
             kc__pod_to_tvm(in, out)) {
    return NULL; /* nothing owned */
  } else if (in->type_index == KC_TYPE_TENSOR) {
    DLManagedTensorVersioned* managed = NULL;
    st = kc_tensor_export_dlpack((kc_tensor*)(void*)in->u.v_obj, &managed);
    if (!st) {
      void* obj = NULL;
      int rc = api->tensor_from_dlpack_versioned(managed, 0, 0, &obj);
      if (rc != 0) {
        managed->deleter(managed);
        st = kc__tvm_error_to_status(api, rc, "making a tvm-ffi tensor");
      } else {
        out->type_index = KC__TVM_TENSOR;
        out->u.v_obj = obj;
      }
    }
  } else if (in->type_index == KC_TYPE_FUNC) {
    void* obj = NULL;
    st = kc__tvm_func_from_kc(api, (kc_func*)(void*)in->u.v_obj, &obj);
    if (!st) {
      out->type_index = KC__TVM_FUNCTION;
      out->u.v_obj = obj;
    }
  } else {
    st = kc__refuse_to_tvm(in, -1, fn);
  }
  kc_any_release(in);
  if (st) memset(out, 0, sizeof *out);
  return st;
}

/* ---- tvm-ffi -> kcall ---------------------------------------------------- */

static kc_status* kc__refuse_from_tvm(const kc__tvm_api* api, int32_t type,
                                      int32_t index, const char* fn) {
  const kc__tvm_type_info* info = api->get_type_info(type);
  char where[48];
  if (index < 0) snprintf(where, sizeof where, "the result");
  else snprintf(where, sizeof where, "argument %d", index);
  if (info && info->type_key.data) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s of %s: tvm-ffi's %.*s (type index %d) has no "
                            "kcall counterpart",
                            where, fn, (int)info->type_key.size,
                            info->type_key.data, type);
  }
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "%s of %s: tvm-ffi type index %d has no kcall "
                          "counterpart",
                          where, fn, type);
}

/* A new kcall value (owned) copying or wrapping the tvm-ffi value `in`
 * (borrowed), for the types that need an object on kcall's side. */
static kc_status* kc__kc_object_from_tvm(const kc__tvm_api* api,
                                         const kc__tvm_any* in, kc_any* out,
                                         int32_t index, const char* fn);

static kc_status* kc__kc_array_from_tvm(const kc__tvm_api* api,
                                        const kc__tvm_any* in, kc_any* out,
                                        int32_t index, const char* fn) {
  size_t n;
  const int64_t* dims = NULL;
  const kc__tvm_any* items = NULL;
  if (in->type_index == KC__TVM_SHAPE) {
    const kc__tvm_shape_cell* cell = KC__TVM_CELL(in->u.v_obj);
    n = cell->size;
    dims = cell->data;
  } else {
    const kc__tvm_seq_cell* cell = KC__TVM_CELL(in->u.v_obj);
    n = (size_t)cell->size;
    items = cell->data;
  }
  kc_any* vals = n ? kc__calloc(n, sizeof *vals) : NULL;
  if (n && !vals) return kc__oom();
  kc_status* st = NULL;
  size_t made = 0;
  for (; made < n && !st; ++made) {
    if (dims) {
      vals[made].type_index = KC_TYPE_INT;
      vals[made].u.v_int64 = dims[made];
    } else if (!kc__pod_to_kc(&items[made], &vals[made]) ||
               vals[made].type_index == KC_TYPE_RAW_STR ||
               vals[made].type_index == KC_TYPE_DLTENSOR_PTR) {
      memset(&vals[made], 0, sizeof vals[made]);
      st = kc__kc_object_from_tvm(api, &items[made], &vals[made], index, fn);
    }
  }
  kc_array* arr = NULL;
  if (!st) st = kc_array_create(NULL, vals, n, &arr);
  for (size_t i = 0; i < made; ++i) kc_any_release(&vals[i]);
  kc__free(vals);
  if (st) return st;
  out->type_index = KC_TYPE_ARRAY;
  out->small_len = 0;
  out->u.v_obj = KC_OBJECT(arr);
  return NULL;
}

static kc_status* kc__kc_object_from_tvm(const kc__tvm_api* api,
                                         const kc__tvm_any* in, kc_any* out,
                                         int32_t index, const char* fn) {
  kc_status* st = NULL;
  switch (in->type_index) {
    case KC__TVM_RAW_STR:
    case KC__TVM_SMALL_STR:
    case KC__TVM_STR: {
      kc_string_view v;
      if (in->type_index == KC__TVM_RAW_STR) {
        v = kc_sv(in->u.v_c_str);
      } else if (in->type_index == KC__TVM_SMALL_STR) {
        v = (kc_string_view){in->u.v_bytes, in->small_len};
      } else {
        const kc__tvm_byte_array* a = KC__TVM_CELL(in->u.v_obj);
        v = (kc_string_view){a->data, a->size};
      }
      kc_str* str = NULL;
      st = kc_str_create(NULL, v, &str);
      if (!st) {
        out->type_index = KC_TYPE_STR;
        out->u.v_obj = KC_OBJECT(str);
      }
      return st;
    }
    case KC__TVM_BYTE_ARRAY_PTR:
    case KC__TVM_SMALL_BYTES:
    case KC__TVM_BYTES: {
      const void* data;
      size_t size;
      if (in->type_index == KC__TVM_SMALL_BYTES) {
        data = in->u.v_bytes;
        size = in->small_len;
      } else {
        const kc__tvm_byte_array* a = in->type_index == KC__TVM_BYTES
                                          ? KC__TVM_CELL(in->u.v_obj)
                                          : in->u.v_ptr;
        data = a->data;
        size = a->size;
      }
      kc_bytes* b = NULL;
      st = kc_bytes_create(NULL, data, size, &b);
      if (!st) {
        out->type_index = KC_TYPE_BYTES;
        out->u.v_obj = KC_OBJECT(b);
      }
      return st;
    }
    case KC__TVM_TENSOR: {
      DLManagedTensorVersioned* managed = NULL;
      int rc = api->tensor_to_dlpack_versioned(in->u.v_obj, &managed);
      if (rc != 0) return kc__tvm_error_to_status(api, rc, fn);
      kc_tensor* t = NULL;
      st = kc_tensor_import_dlpack(NULL, managed, &t);
      if (st) {
        managed->deleter(managed);
        return st;
      }
      out->type_index = KC_TYPE_TENSOR;
      out->u.v_obj = KC_OBJECT(t);
      return NULL;
    }
    case KC__TVM_FUNCTION: {
      kc_func* f = NULL;
      st = kc__tvm_func_to_kc(api, in->u.v_obj, &f);
      if (!st) {
        out->type_index = KC_TYPE_FUNC;
        out->u.v_obj = KC_OBJECT(f);
      }
      return st;
    }
    case KC__TVM_SHAPE:
    case KC__TVM_ARRAY:
      return kc__kc_array_from_tvm(api, in, out, index, fn);
    default:
      return kc__refuse_from_tvm(api, in->type_index, index, fn);
  }
}

kc_status* kc__kc_arg_from_tvm(const kc__tvm_api* api, const kc__tvm_any* in,
                               kc_any* out, kc__tvm_scratch* s, int32_t index,
                               const char* fn) {
  if (kc__pod_to_kc(in, out)) return NULL;
  memset(out, 0, sizeof *out);
  if (in->type_index == KC__TVM_TENSOR) {
    /* Lent for the call: its DLTensor, no object on kcall's side. */
    out->type_index = KC_TYPE_DLTENSOR_PTR;
    out->u.v_dltensor = KC__TVM_CELL(in->u.v_obj);
    return NULL;
  }
  if (in->type_index == KC__TVM_FUNCTION) {
    kc_func* wrapped = kc__tvm_unwrap_kc(in->u.v_obj);
    if (wrapped) {
      out->type_index = KC_TYPE_FUNC;
      out->u.v_obj = KC_OBJECT(wrapped);
      return NULL;
    }
  }
  kc_any* slot = kc__slot(s->kc_values, KC__ARRAY_SIZE(s->kc_values),
                          (void**)&s->more_kc_values, &s->kc_used,
                          sizeof(kc_any), s->capacity);
  if (!slot) return kc__oom();
  memset(slot, 0, sizeof *slot);
  kc_status* st = kc__kc_object_from_tvm(api, in, slot, index, fn);
  if (st) {
    s->kc_used--;
    return st;
  }
  *out = *slot; /* borrowed from the scratch, released after the call */
  return NULL;
}

kc_status* kc__kc_from_tvm_owned(const kc__tvm_api* api, kc__tvm_any* in,
                                 kc_any* out, const char* fn) {
  kc_status* st = NULL;
  memset(out, 0, sizeof *out);
  if (in->type_index == KC__TVM_RAW_STR || in->type_index == KC__TVM_DLTENSOR_PTR ||
      in->type_index == KC__TVM_BYTE_ARRAY_PTR) {
    /* Views are never results (tvm-ffi's Any cannot hold them). */
    st = kc__refuse_from_tvm(api, in->type_index, -1, fn);
  } else if (!kc__pod_to_kc(in, out)) {
    st = kc__kc_object_from_tvm(api, in, out, -1, fn);
  }
  if (in->type_index >= KC__TVM_OBJECT_BEGIN && in->u.v_obj) {
    api->object_dec_ref(in->u.v_obj);
  }
  memset(in, 0, sizeof *in);
  if (st) memset(out, 0, sizeof *out);
  return st;
}
