/*
 * The contexts handed to kernels: kc_kernel_construct_ctx_* when a kernel
 * instance is constructed, and kc_kernel_ctx_* during compute (inputs,
 * outputs, temporaries, status, thread pool, stream).
 */
#include <stdlib.h>

#include "op/call_internal.h"
#include "runtime/device_internal.h"

/* ---- the construction context ------------------------------------------ */

const kc_op_attrs* kc_kernel_construct_ctx_get_attrs(
    const kc_kernel_construct_ctx* ctx) {
  return ctx ? ctx->attrs : NULL;
}

kc_string_view kc_kernel_construct_ctx_get_op_name(
    const kc_kernel_construct_ctx* ctx) {
  kc_string_view v = {"", 0};
  if (ctx) {
    v.data = ctx->def->name;
    v.size = ctx->def->name_size;
  }
  return v;
}

DLDevice kc_kernel_construct_ctx_get_device(
    const kc_kernel_construct_ctx* ctx) {
  return ctx ? ctx->device : kc_device_cpu();
}

int32_t kc_kernel_construct_ctx_get_input_count(
    const kc_kernel_construct_ctx* ctx) {
  return ctx ? ctx->num_inputs : 0;
}

DLDataType kc_kernel_construct_ctx_get_input_dtype(
    const kc_kernel_construct_ctx* ctx, int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_inputs) {
    return kc_dtype_make(0, 0, 0);
  }
  return ctx->input_dtypes[index];
}

int32_t kc_kernel_construct_ctx_get_output_count(
    const kc_kernel_construct_ctx* ctx) {
  return ctx ? ctx->num_outputs : 0;
}

DLDataType kc_kernel_construct_ctx_get_output_dtype(
    const kc_kernel_construct_ctx* ctx, int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_outputs) {
    return kc_dtype_make(0, 0, 0);
  }
  return ctx->output_dtypes[index];
}

void* kc_kernel_construct_ctx_get_data(const kc_kernel_construct_ctx* ctx) {
  return ctx ? ctx->data : NULL;
}

/* ---- the compute context ----------------------------------------------- */

int32_t kc_kernel_ctx_get_input_count(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->num_inputs : 0;
}

const DLTensor* kc_kernel_ctx_get_input(const kc_kernel_ctx* ctx,
                                        int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_inputs) return NULL;
  return ctx->inputs[index];
}

int32_t kc_kernel_ctx_get_output_count(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->num_outputs : 0;
}

DLTensor* kc_kernel_ctx_get_output(const kc_kernel_ctx* ctx, int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_outputs) return NULL;
  return ctx->outputs[index];
}

kc_status* kc_kernel_ctx_get_input_range(const kc_kernel_ctx* ctx,
                                         const char* arg_name,
                                         int32_t* out_start,
                                         int32_t* out_stop) {
  if (!ctx || !arg_name || !out_start || !out_stop) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_kernel_ctx_get_input_range: a pointer is "
                            "NULL");
  }
  int32_t a = kc__op_find_input(ctx->def, kc_sv(arg_name));
  if (a < 0) {
    return kc_status_create(KC_NOT_FOUND, "op %s has no input %s",
                            KC__QS(ctx->def->name), KC__QS(arg_name));
  }
  *out_start = ctx->input_starts[a];
  *out_stop = ctx->input_starts[a + 1];
  return NULL;
}

DLDevice kc__kernel_ctx_output_device(const kc_kernel_ctx* ctx, int32_t index) {
  if (ctx->host_memory_outputs) {
    for (int32_t a = 0; a < ctx->def->num_outputs && a < 64; ++a) {
      if (index >= ctx->output_starts[a] && index < ctx->output_starts[a + 1]) {
        if (ctx->host_memory_outputs >> a & 1u) return kc_device_cpu();
        break;
      }
    }
  }
  return ctx->device;
}

static bool kc__same_shape(const DLTensor* t, const int64_t* shape,
                           int32_t ndim) {
  if (t->ndim != ndim) return false;
  for (int32_t i = 0; i < ndim; ++i) {
    if (t->shape[i] != shape[i]) return false;
  }
  return true;
}

kc_status* kc_kernel_ctx_allocate_output(kc_kernel_ctx* ctx, int32_t index,
                                         const int64_t* shape, int32_t ndim,
                                         DLTensor** out_tensor) {
  if (!ctx || !out_tensor || (ndim > 0 && !shape)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_kernel_ctx_allocate_output: a pointer is "
                            "NULL");
  }
  if (index < 0 || index >= ctx->num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "op %s: allocating output %d of %d",
                            KC__QS(ctx->def->name), index, ctx->num_outputs);
  }
  DLTensor* have = ctx->outputs[index];
  const kc_shape_handle* known = ctx->inferred[index];
  bool fits = have ? kc__same_shape(have, shape, ndim)
                   : !known || known->rank < 0 || known->rank == ndim;
  for (int32_t i = 0; fits && !have && known && known->rank == ndim && i < ndim;
       ++i) {
    fits = known->dims[i] < 0 || known->dims[i] == shape[i];
  }
  if (!fits) {
    return kc_status_create(
        KC_INVALID_ARGUMENT,
        "op %s: output %d: the kernel's shape (rank "
        "%d) contradicts %s",
        KC__QS(ctx->def->name), index, ndim,
        have ? "the output tensor given" : "what shape inference found");
  }
  if (!have) {
    kc_tensor* t = NULL;
    KC_RETURN_IF_ERROR(kc_tensor_create(ctx->alloc, shape, ndim, ctx->output_dtypes[index],
                             kc__kernel_ctx_output_device(ctx, index), &t));
    ctx->owned[index] = t;
    have = (DLTensor*)(uintptr_t)kc_tensor_get_dltensor(t);
    ctx->outputs[index] = have;
  }
  *out_tensor = have;
  return NULL;
}

/* Device scratch memory: stream-ordered on the call's stream, so that it
 * is freed (kc__device_finish) after the work compute queued there. The
 * record of it is host memory. */
static kc_status* kc__device_temp(kc_kernel_ctx* ctx, size_t size,
                                  size_t alignment, void** out_ptr) {
  char dev[64];
  if (alignment > 256 || (alignment & (alignment - 1))) {
    kc_device_format(ctx->device, dev, sizeof dev);
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_kernel_ctx_allocate_temp: alignment %zu on "
                            "%s: expected a power of two up to 256",
                            alignment, dev);
  }
  kc__temp* t = kc__malloc(sizeof *t);
  if (!t) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory allocating %zu temporary bytes",
                            size);
  }
  void* p = NULL;
  kc_status* st = ctx->backend->alloc(ctx->device.device_id, size,
                                      ctx->stream, &p);
  if (st) {
    kc__free(t);
    kc_device_format(ctx->device, dev, sizeof dev);
    return kc_status_add_context(st, "allocating %zu temporary bytes on %s",
                                 size, dev);
  }
  t->ptr = p;
  t->size = size;
  t->alignment = 0; /* 0: device memory */
  t->next = ctx->temps;
  ctx->temps = t;
  *out_ptr = p;
  return NULL;
}

kc_status* kc_kernel_ctx_allocate_temp(kc_kernel_ctx* ctx, size_t size,
                                       size_t alignment, void** out_ptr) {
  if (!ctx || !out_ptr || size == 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_kernel_ctx_allocate_temp: %s",
                            size == 0 ? "size is 0" : "a pointer is NULL");
  }
  if (alignment == 0) alignment = 64;
  if (ctx->backend) return kc__device_temp(ctx, size, alignment, out_ptr);
  kc__temp* t = kc_allocator_alloc(ctx->alloc, sizeof *t, 0);
  void* p = t ? kc_allocator_alloc(ctx->alloc, size, alignment) : NULL;
  if (!p) {
    kc_allocator_free(ctx->alloc, t, sizeof *t, 0);
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory allocating %zu temporary bytes",
                            size);
  }
  t->ptr = p;
  t->size = size;
  t->alignment = alignment;
  t->next = ctx->temps;
  ctx->temps = t;
  *out_ptr = p;
  return NULL;
}

void kc_kernel_ctx_set_status(kc_kernel_ctx* ctx, kc_status* status) {
  if (!status) return;
  if (!ctx) {
    kc_status_destroy(status);
    return;
  }
  kc_status* expected = NULL;
  if (!__atomic_compare_exchange_n(&ctx->status, &expected, status, false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    kc_status_destroy(status);
  }
}

kc_thread_pool* kc_kernel_ctx_get_thread_pool(const kc_kernel_ctx* ctx) {
  return ctx && ctx->pool ? ctx->pool : kc_thread_pool_get_default();
}

void* kc_kernel_ctx_get_stream(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->stream : NULL;
}

DLDevice kc_kernel_ctx_get_device(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->device : kc_device_cpu();
}

const kc_op_attrs* kc_kernel_ctx_get_attrs(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->attrs : NULL;
}
