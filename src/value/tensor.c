/* Tensor objects over DLPack 1.x: owned storage, imports, exports, views. */
#include "internal/object.h"
#include "kcall/device.h"

struct kc_tensor {
  kc_object header;
  const kc_allocator* alloc; /* this struct, and `storage` */
  DLTensor dl;
  uint64_t flags;
  void* storage;                      /* owned storage (create) */
  size_t storage_bytes;
  /* Where `storage` came from: 0 for `alloc`; kDLCUDA for device memory
   * and kDLCUDAHost for pinned host memory, from the device's backend. */
  int32_t storage_device;
  /* `storage` sits in this struct's own block, after the dims (a small
   * tensor from the caching allocator: one allocation, not two). */
  bool storage_inline;
  DLManagedTensorVersioned* imported; /* adopted producer (import) */
  kc_tensor* base;                    /* shared storage (view) */
  /* shape[ndim] then strides[ndim]; strides are always filled (row-major
   * for compact tensors) so that exports can carry them. */
  int64_t dims[];
};

static size_t kc__tensor_struct_size(int32_t ndim) {
  return sizeof(kc_tensor) + 2 * (size_t)ndim * sizeof(int64_t);
}

/* Storage of at most this many bytes from the caching allocator shares the
 * struct's block (eager calls on small tensors make one allocation). */
#define KC__TENSOR_INLINE_MAX 256

/* Where inline storage starts in the block: past the struct, aligned. */
static size_t kc__tensor_inline_offset(int32_t ndim) {
  return (kc__tensor_struct_size(ndim) + KC_TENSOR_ALIGNMENT - 1) &
         ~(size_t)(KC_TENSOR_ALIGNMENT - 1);
}

static void kc__tensor_delete(kc_object* obj) {
  kc_tensor* t = (kc_tensor*)(void*)obj;
  if (t->storage && t->storage_device == kDLCUDAHost) {
    kc_device_host_free(t->dl.device, t->storage);
  } else if (t->storage && t->storage_device) {
    /* A deleter cannot report: a failure here is the device's own error,
     * which the next synchronising call reports again. */
    kc_status_destroy(kc_device_free(t->dl.device, t->storage, NULL));
  } else if (t->storage && !t->storage_inline) {
    kc_allocator_free(t->alloc, t->storage, t->storage_bytes,
                      KC_TENSOR_ALIGNMENT);
  }
  if (t->imported && t->imported->deleter) t->imported->deleter(t->imported);
  kc_object_release(KC_OBJECT(t->base));
  if (t->storage_inline) {
    kc_allocator_free(t->alloc, t,
                      kc__tensor_inline_offset(t->dl.ndim) + t->storage_bytes,
                      KC_TENSOR_ALIGNMENT);
  } else {
    kc_allocator_free(t->alloc, t, kc__tensor_struct_size(t->dl.ndim), 0);
  }
}

/* Checks rank and dims; writes row-major strides into `strides`. */
static kc_status* kc__check_shape(const char* where, int32_t ndim,
                                  const int64_t* shape) {
  if (ndim < 0 || ndim > KC_TENSOR_MAX_NDIM) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: ndim: expected 0 to %d, got %d", where,
                            KC_TENSOR_MAX_NDIM, ndim);
  }
  if (ndim > 0 && !shape) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: shape is NULL with ndim %d", where, ndim);
  }
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "%s: dimension %d: expected >= 0, got %lld",
                              where, i, (long long)shape[i]);
    }
  }
  return NULL;
}

/* Allocates an uninitialised tensor struct for `ndim` dims and copies the
 * shape; strides are row-major unless `strides` is given. With
 * `inline_bytes` > 0 the block also holds that much storage, aligned to
 * KC_TENSOR_ALIGNMENT (t->storage points there). */
static kc_status* kc__tensor_alloc_v2(const kc_allocator* alloc, int32_t ndim,
                                      const int64_t* shape,
                                      const int64_t* strides,
                                      size_t inline_bytes, kc_tensor** out) {
  if (!alloc) alloc = kc_allocator_caching();
  kc_tensor* t =
      inline_bytes
          ? kc_allocator_alloc(alloc,
                               kc__tensor_inline_offset(ndim) + inline_bytes,
                               KC_TENSOR_ALIGNMENT)
          : kc_allocator_alloc(alloc, kc__tensor_struct_size(ndim), 0);
  if (!t) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory creating a tensor");
  }
  /* Field by field: a memset of the struct compiles to `rep stos`, whose
   * start-up cost is most of an eager call's allocation. */
  kc__object_init(&t->header, KC_TYPE_TENSOR, kc__tensor_delete);
  t->alloc = alloc;
  t->dl = (DLTensor){0};
  t->flags = 0;
  t->storage = NULL;
  t->storage_bytes = 0;
  t->storage_device = 0;
  t->imported = NULL;
  t->base = NULL;
  t->storage_inline = inline_bytes > 0;
  if (inline_bytes) {
    t->storage = (char*)t + kc__tensor_inline_offset(ndim);
    t->storage_bytes = inline_bytes;
  }
  int64_t* t_shape = t->dims;
  int64_t* t_strides = t->dims + ndim;
  int64_t running = 1;
  for (int32_t i = ndim - 1; i >= 0; --i) {
    t_shape[i] = shape[i];
    t_strides[i] = strides ? strides[i] : running;
    /* Saturate: an overflowing shape is refused by the caller's size
     * check, but the strides are computed before that matters. */
    if (__builtin_mul_overflow(running, shape[i] > 0 ? shape[i] : 1, &running)) {
      running = INT64_MAX;
    }
  }
  t->dl.ndim = ndim;
  t->dl.shape = ndim ? t_shape : NULL;
  t->dl.strides = NULL;
  *out = t;
  return NULL;
}

static kc_status* kc__tensor_alloc(const kc_allocator* alloc, int32_t ndim,
                                   const int64_t* shape,
                                   const int64_t* strides, kc_tensor** out) {
  return kc__tensor_alloc_v2(alloc, ndim, shape, strides, 0, out);
}

int64_t kc_dltensor_get_numel(const DLTensor* t) {
  if (!t) return -1;
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0) return -1;
    if (t->shape[i] != 0 && n > INT64_MAX / t->shape[i]) return -1;
    n *= t->shape[i];
  }
  return n;
}

bool kc_dltensor_is_compact(const DLTensor* t) {
  if (!t) return false;
  if (!t->strides) return true;
  /* No elements: no layout to get wrong (PyTorch gives shape (2, 0)
   * strides (1, 1)). */
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] == 0) return true;
  }
  int64_t expected = 1;
  for (int32_t i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expected) return false;
    expected *= t->shape[i];
  }
  return true;
}

kc_status* kc_tensor_create(const kc_allocator* alloc, const int64_t* shape,
                            int32_t ndim, DLDataType dtype, DLDevice device,
                            kc_tensor** out_tensor) {
  static const char where[] = "kc_tensor_create";
  if (!out_tensor) {
    return kc_status_create(KC_INVALID_ARGUMENT, "%s: out is NULL", where);
  }
  *out_tensor = NULL;
  KC_RETURN_IF_ERROR(kc__check_shape(where, ndim, shape), "creating a tensor");
  if (dtype.bits == 0 || dtype.lanes == 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: dtype: expected non-zero bits and lanes, got "
                            "bits=%u lanes=%u",
                            where, dtype.bits, dtype.lanes);
  }
  if (device.device_type != kDLCPU && device.device_type != kDLCUDA &&
      device.device_type != kDLCUDAHost) {
    char name[48];
    kc_device_format(device, name, sizeof name);
    return kc_status_create(KC_UNIMPLEMENTED,
                            "%s: device %s: no backend allocates there "
                            "(expected cpu, cuda or cuda_host)",
                            where, name);
  }
  if (device.device_type != kDLCPU || device.device_id != 0) {
    KC_RETURN_IF_ERROR(kc_device_check(device), "%s", where);
  }
  /* The byte size, refused when it overflows (the dims are >= 0):
   * multiplications checked by the compiler's builtins, no division, as
   * every eager call's output comes through here. */
  uint64_t bits = (uint64_t)dtype.bits * dtype.lanes;
  int64_t numel = 1;
  bool overflow = false;
  for (int32_t i = 0; i < ndim; ++i) {
    overflow |= __builtin_mul_overflow(numel, shape[i], &numel);
    overflow |= __builtin_mul_overflow(bits, (uint64_t)shape[i], &bits);
  }
  if (overflow || bits > UINT64_MAX - 7 || (bits + 7) / 8 > SIZE_MAX / 2) {
    return kc_status_create(KC_OUT_OF_RANGE,
                            "%s: the tensor's byte size overflows", where);
  }
  size_t bytes = (size_t)((bits + 7) / 8);
  kc_tensor* t = NULL;
  size_t storage_bytes = bytes ? bytes : 1;
  bool inline_storage = device.device_type == kDLCPU &&
                        (!alloc || alloc == kc_allocator_caching()) &&
                        storage_bytes <= KC__TENSOR_INLINE_MAX;
  KC_RETURN_IF_ERROR(kc__tensor_alloc_v2(alloc, ndim, shape, NULL,
                                         inline_storage ? storage_bytes : 0,
                                         &t),
                     "creating a tensor");
  t->storage_bytes = storage_bytes;
  t->dl.device = device;
  if (inline_storage) {
    /* In the struct's block already. */
  } else if (device.device_type != kDLCPU) {
    kc_status* st =
        device.device_type == kDLCUDAHost
            ? kc_device_host_allocate(device, t->storage_bytes, &t->storage)
            : kc_device_allocate(device, t->storage_bytes, NULL, &t->storage);
    if (st) {
      kc_object_release(KC_OBJECT(t));
      return kc_status_add_context(st, "%s: %zu bytes of tensor data", where,
                                   t->storage_bytes);
    }
    t->storage_device = (int32_t)device.device_type;
  } else {
    t->storage = kc_allocator_alloc(t->alloc, t->storage_bytes,
                                    KC_TENSOR_ALIGNMENT);
  }
  if (!t->storage) {
    kc_object_release(KC_OBJECT(t));
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory allocating %zu bytes of tensor data",
                            bytes);
  }
  t->dl.data = t->storage;
  t->dl.device = device;
  t->dl.dtype = dtype;
  *out_tensor = t;
  return NULL;
}

const DLTensor* kc_tensor_get_dltensor(const kc_tensor* tensor) {
  return tensor ? &tensor->dl : NULL;
}

uint64_t kc_tensor_get_flags(const kc_tensor* tensor) {
  return tensor ? tensor->flags : 0;
}

kc_status* kc_tensor_import_dlpack(const kc_allocator* alloc,
                                   DLManagedTensorVersioned* managed,
                                   kc_tensor** out_tensor) {
  static const char where[] = "kc_tensor_import_dlpack";
  if (!out_tensor || !managed) {
    return kc_status_create(KC_INVALID_ARGUMENT, "%s: %s is NULL", where,
                            managed ? "out" : "managed");
  }
  *out_tensor = NULL;
  if (managed->version.major != DLPACK_MAJOR_VERSION) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "%s: DLPack version: expected major %d, got %u.%u",
                            where, DLPACK_MAJOR_VERSION,
                            managed->version.major, managed->version.minor);
  }
  const DLTensor* src = &managed->dl_tensor;
  KC_RETURN_IF_ERROR(kc__check_shape(where, src->ndim, src->shape),
                     "importing a DLPack tensor");
  if (src->dtype.bits == 0 || src->dtype.lanes == 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: dtype: expected non-zero bits and lanes",
                            where);
  }
  kc_tensor* t = NULL;
  KC_RETURN_IF_ERROR(
      kc__tensor_alloc(alloc, src->ndim, src->shape, src->strides, &t),
      "importing a DLPack tensor");
  t->dl.data = src->data;
  t->dl.byte_offset = src->byte_offset;
  t->dl.device = src->device;
  t->dl.dtype = src->dtype;
  if (src->strides && !kc_dltensor_is_compact(src)) {
    t->dl.strides = t->dims + src->ndim;
  }
  t->flags = managed->flags;
  t->imported = managed;
  *out_tensor = t;
  return NULL;
}

static void kc__export_delete(DLManagedTensorVersioned* self) {
  kc_tensor* t = self->manager_ctx;
  kc_allocator_free(t->alloc, self, sizeof *self, 0);
  kc_object_release(KC_OBJECT(t));
}

kc_status* kc_tensor_export_dlpack(kc_tensor* tensor,
                                   DLManagedTensorVersioned** out) {
  if (!tensor || !out) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_tensor_export_dlpack: %s is NULL",
                            tensor ? "out" : "tensor");
  }
  *out = NULL;
  DLManagedTensorVersioned* m =
      kc_allocator_alloc(tensor->alloc, sizeof *m, 0);
  if (!m) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory exporting a tensor");
  }
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = tensor;
  m->deleter = kc__export_delete;
  m->flags = tensor->flags;
  m->dl_tensor = tensor->dl;
  m->dl_tensor.strides = tensor->dl.ndim ? tensor->dims + tensor->dl.ndim : NULL;
  kc_object_retain(KC_OBJECT(tensor));
  *out = m;
  return NULL;
}

/* Lowest and highest element offsets (relative to element 0) that a
 * tensor of this shape and these strides addresses. False when it
 * addresses nothing (a zero dim). */
static bool kc__extent(int32_t ndim, const int64_t* shape,
                       const int64_t* strides, int64_t* lo, int64_t* hi) {
  *lo = 0;
  *hi = 0;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) {
      *lo = *hi = 0;
      return false;
    }
    int64_t reach;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &reach)) {
      reach = strides[i] < 0 ? INT64_MIN / 4 : INT64_MAX / 4;
    }
    if (reach < 0) {
      *lo += reach;
    } else {
      *hi += reach;
    }
  }
  return true;
}

kc_status* kc_tensor_create_view(kc_tensor* base, int32_t ndim,
                                 const int64_t* shape, const int64_t* strides,
                                 int64_t elem_offset, kc_tensor** out_view) {
  static const char where[] = "kc_tensor_create_view";
  if (!base || !out_view) {
    return kc_status_create(KC_INVALID_ARGUMENT, "%s: %s is NULL", where,
                            base ? "out_view" : "base");
  }
  *out_view = NULL;
  KC_RETURN_IF_ERROR(kc__check_shape(where, ndim, shape), "creating a view");
  if (base->dl.dtype.bits % 8 != 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: views of sub-byte dtypes are not supported",
                            where);
  }
  kc_tensor* v = NULL;
  KC_RETURN_IF_ERROR(kc__tensor_alloc(base->alloc, ndim, shape, strides, &v),
                     "creating a view");
  int64_t base_lo, base_hi, lo, hi;
  bool base_any = kc__extent(base->dl.ndim, base->dims,
                             base->dims + base->dl.ndim, &base_lo, &base_hi);
  /* An empty view addresses nothing, but its data pointer is still formed
   * from elem_offset, so the offset itself must lie inside the base. */
  bool view_any = kc__extent(ndim, v->dims, v->dims + ndim, &lo, &hi);
  {
    bool outside = __builtin_add_overflow(lo, elem_offset, &lo) ||
                   __builtin_add_overflow(hi, elem_offset, &hi) ||
                   lo < base_lo || hi > base_hi;
    /* An empty base has no element to address at all. */
    if (!base_any) outside = view_any || elem_offset != 0;
    if (outside) {
      kc_object_release(KC_OBJECT(v));
      return kc_status_create(
          KC_OUT_OF_RANGE,
          "%s: the view reaches elements [%lld, %lld] of its base, which "
          "addresses only [%lld, %lld]",
          where, (long long)lo, (long long)hi, (long long)base_lo,
          (long long)base_hi);
    }
  }
  size_t esize = kc_dtype_get_size(base->dl.dtype);
  v->dl.data = (char*)base->dl.data + base->dl.byte_offset +
               elem_offset * (int64_t)esize;
  v->dl.device = base->dl.device;
  v->dl.dtype = base->dl.dtype;
  if (strides && !kc_dltensor_is_compact(&(DLTensor){
                     .ndim = ndim, .shape = v->dims, .strides = v->dims + ndim})) {
    v->dl.strides = v->dims + ndim;
  }
  v->flags = base->flags;
  v->base = base;
  kc_object_retain(KC_OBJECT(base));
  *out_view = v;
  return NULL;
}
