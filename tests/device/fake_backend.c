/*
 * A device backend for tests, in plain host memory: it implements the
 * table of src/runtime/backend.h as libkcall_cuda does, so that the core's
 * handling of CUDA devices (the loader, device tensors, programs and
 * kernels on a device) is tested on machines without a GPU. Tests point
 * the core at it with KCALL_CUDA_BACKEND before their first device use.
 *
 * "Device" memory is host memory, so a test's GPU-convention target can
 * compute on the pointers it is given. Streams are small objects checked
 * on every use (a stray pointer is an error, as it would be for CUDA).
 * Graph capture answers UNIMPLEMENTED.
 *
 * Environment:
 *   KCALL_FAKE_CUDA_DEVICES    the device count (default 1; 0 fails init)
 *   KCALL_FAKE_CUDA_FAIL_INIT  when set, init fails with this message
 *
 * kt_fake_cuda_stats (exported) lets a test check that every allocation
 * and stream was given back, and which stream work was last queued on.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcall/program.h"
#include "runtime/backend.h"

#define KT_EXPORT __attribute__((visibility("default")))

static const kc__backend_core* kt_core;

typedef struct kt_stream {
  uint32_t magic;
  int32_t ordinal;
} kt_stream;
#define KT_STREAM_MAGIC 0x5743a11u

typedef struct kt_fake_cuda_stats {
  int64_t live_allocations; /* device and pinned */
  int64_t live_streams;
  int64_t kernels;          /* elementwise, broadcast, iota queued */
  int64_t copies;
  int64_t synchronizes;
  void* last_stream;        /* of the last kernel or copy */
} kt_fake_cuda_stats;

static atomic_llong kt_allocs, kt_streams, kt_kernels, kt_copies, kt_syncs;
static _Atomic(void*) kt_last_stream;

KT_EXPORT void kt_fake_cuda_stats_get(kt_fake_cuda_stats* out);
void kt_fake_cuda_stats_get(kt_fake_cuda_stats* out) {
  out->live_allocations = atomic_load(&kt_allocs);
  out->live_streams = atomic_load(&kt_streams);
  out->kernels = atomic_load(&kt_kernels);
  out->copies = atomic_load(&kt_copies);
  out->synchronizes = atomic_load(&kt_syncs);
  out->last_stream = atomic_load(&kt_last_stream);
}

static int32_t kt_count = 1;

static kc_status* kt_bad_stream(const char* what, void* stream) {
  return kt_core->status_create(KC_INTERNAL, "fake CUDA: %s: invalid stream %p",
                                what, stream);
}

/* False for a pointer that is not a stream of `ordinal` (NULL, the legacy
 * default stream, is one); records the stream work was queued on. */
static bool kt_stream_bad(int32_t ordinal, void* stream) {
  if (!stream) return false;
  const kt_stream* s = stream;
  if (s->magic != KT_STREAM_MAGIC || s->ordinal != ordinal) return true;
  atomic_store(&kt_last_stream, stream);
  return false;
}

static kc_status* kt_init(int32_t* out_count) {
  const char* fail = getenv("KCALL_FAKE_CUDA_FAIL_INIT");
  if (fail) return kt_core->status_create(KC_FAILED_PRECONDITION, "%s", fail);
  const char* n = getenv("KCALL_FAKE_CUDA_DEVICES");
  if (n) kt_count = atoi(n);
  if (kt_count < 1) {
    return kt_core->status_create(KC_FAILED_PRECONDITION,
                                  "no device (fake: KCALL_FAKE_CUDA_DEVICES=%s)", n);
  }
  *out_count = kt_count;
  return NULL;
}

static kc_status* kt_get_properties(int32_t ordinal, kc__device_props* out) {
  snprintf(out->name, sizeof out->name, "Fake CUDA device %d", ordinal);
  out->compute_major = 9;
  out->compute_minor = 0;
  out->multiprocessor_count = 4;
  out->max_threads_per_block = 1024;
  out->warp_size = 32;
  out->total_memory = (size_t)1 << 30;
  out->shared_memory_per_block = 48 * 1024;
  out->driver_version = 13000;
  out->runtime_version = 13000;
  out->pci_bus_id = ordinal + 1;
  return NULL;
}

static kc_status* kt_alloc(int32_t ordinal, size_t bytes, void* stream, void** out) {
  *out = NULL;
  if (kt_stream_bad(ordinal, stream)) return kt_bad_stream("alloc", stream);
  if (!bytes) return NULL;
  /* An absurd size fails as the device would. */
  if (bytes > ((size_t)1 << 40)) {
    return kt_core->status_create(KC_RESOURCE_EXHAUSTED,
                                  "fake cudaMalloc of %zu bytes on cuda:%d: out of memory",
                                  bytes, ordinal);
  }
  *out = aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!*out) {
    return kt_core->status_create(KC_RESOURCE_EXHAUSTED,
                                  "fake cudaMalloc of %zu bytes: out of memory", bytes);
  }
  atomic_fetch_add(&kt_allocs, 1);
  return NULL;
}

static kc_status* kt_free(int32_t ordinal, void* ptr, void* stream) {
  if (kt_stream_bad(ordinal, stream)) return kt_bad_stream("free", stream);
  if (!ptr) return NULL;
  free(ptr);
  atomic_fetch_sub(&kt_allocs, 1);
  return NULL;
}

static kc_status* kt_host_alloc(int32_t ordinal, size_t bytes, void** out) {
  return kt_alloc(ordinal, bytes, NULL, out);
}

static void kt_host_free(int32_t ordinal, void* ptr) {
  kc_status* st = kt_free(ordinal, ptr, NULL);
  (void)st; /* cannot fail with a NULL stream */
}

static kc_status* kt_memcpy(int32_t ordinal, void* dst, const void* src,
                            size_t bytes, int32_t kind, void* stream) {
  if (kt_stream_bad(ordinal, stream)) return kt_bad_stream("memcpy", stream);
  if (kind < KC__COPY_HOST_TO_DEVICE || kind > KC__COPY_DEVICE_TO_DEVICE) {
    return kt_core->status_create(KC_INVALID_ARGUMENT, "fake memcpy: kind %d", kind);
  }
  memmove(dst, src, bytes);
  atomic_fetch_add(&kt_copies, 1);
  return NULL;
}

static kc_status* kt_memset(int32_t ordinal, void* dst, int value, size_t bytes,
                            void* stream) {
  if (kt_stream_bad(ordinal, stream)) return kt_bad_stream("memset", stream);
  memset(dst, value, bytes);
  return NULL;
}

static kc_status* kt_stream_create(int32_t ordinal, void** out) {
  kt_stream* s = malloc(sizeof *s);
  if (!s) return kt_core->status_create(KC_RESOURCE_EXHAUSTED, "fake stream");
  s->magic = KT_STREAM_MAGIC;
  s->ordinal = ordinal;
  atomic_fetch_add(&kt_streams, 1);
  *out = s;
  return NULL;
}

static void kt_stream_destroy(int32_t ordinal, void* stream) {
  if (!stream || kt_stream_bad(ordinal, stream)) return;
  ((kt_stream*)stream)->magic = 0;
  free(stream);
  atomic_fetch_sub(&kt_streams, 1);
}

static kc_status* kt_stream_synchronize(int32_t ordinal, void* stream) {
  if (kt_stream_bad(ordinal, stream)) {
    return kt_bad_stream("synchronize", stream);
  }
  atomic_fetch_add(&kt_syncs, 1);
  return NULL;
}

static kc_status* kt_check_launch(int32_t ordinal) {
  (void)ordinal;
  return NULL;
}

/* ---- kernels: a few ops on f32, f64, i32 and i64, enough for tests ---------- */

static bool kt_dtype_ok(DLDataType t) {
  return t.lanes == 1 && ((t.code == kDLFloat && (t.bits == 32 || t.bits == 64)) ||
                          (t.code == kDLInt && (t.bits == 32 || t.bits == 64)));
}

static bool kt_elementwise_supported(int32_t op, DLDataType in, DLDataType out) {
  if (!kt_dtype_ok(in) || !kt_dtype_ok(out)) return false;
  bool same = in.code == out.code && in.bits == out.bits;
  switch (op) {
    case KC_OP_ADD: case KC_OP_SUBTRACT: case KC_OP_MULTIPLY:
    case KC_OP_MAXIMUM: case KC_OP_MINIMUM: case KC_OP_NEGATE:
      return same;
    case KC_OP_CONVERT:
      return true;
    default:
      return false;
  }
}

static double kt_load(DLDataType t, const void* p, int64_t i) {
  if (t.code == kDLFloat) return t.bits == 32 ? ((const float*)p)[i] : ((const double*)p)[i];
  return t.bits == 32 ? ((const int32_t*)p)[i] : (double)((const int64_t*)p)[i];
}

static void kt_store(DLDataType t, void* p, int64_t i, double v) {
  if (t.code == kDLFloat) {
    if (t.bits == 32) {
      ((float*)p)[i] = (float)v;
    } else {
      ((double*)p)[i] = v;
    }
  } else if (t.bits == 32) {
    ((int32_t*)p)[i] = (int32_t)v;
  } else {
    ((int64_t*)p)[i] = (int64_t)v;
  }
}

static kc_status* kt_elementwise(int32_t ordinal, void* stream,
                                 const kc__elementwise_desc* d) {
  if (kt_stream_bad(ordinal, stream)) {
    return kt_bad_stream("elementwise", stream);
  }
  if (!kt_elementwise_supported(d->op, d->in_dtype, d->out_dtype)) {
    return kt_core->status_create(KC_UNIMPLEMENTED, "fake elementwise: op %d", d->op);
  }
  for (int64_t i = 0; i < d->count; ++i) {
    double a = kt_load(d->in_dtype, d->in[0], i);
    double b = d->arity > 1 ? kt_load(d->in_dtype, d->in[1], i) : 0;
    double r;
    switch (d->op) {
      case KC_OP_ADD: r = a + b; break;
      case KC_OP_SUBTRACT: r = a - b; break;
      case KC_OP_MULTIPLY: r = a * b; break;
      case KC_OP_MAXIMUM: r = a > b ? a : b; break;
      case KC_OP_MINIMUM: r = a < b ? a : b; break;
      case KC_OP_NEGATE: r = -a; break;
      default: r = a; break; /* convert */
    }
    kt_store(d->out_dtype, d->out, i, r);
  }
  atomic_fetch_add(&kt_kernels, 1);
  return NULL;
}

static kc_status* kt_broadcast(int32_t ordinal, void* stream, const kc__broadcast_desc* d) {
  if (kt_stream_bad(ordinal, stream)) return kt_bad_stream("broadcast", stream);
  int64_t total = 1;
  for (int32_t i = 0; i < d->out_rank; ++i) total *= d->out_dims[i];
  int64_t index[32] = {0};
  for (int64_t k = 0; k < total; ++k) {
    /* The operand element of result element `index`. */
    int64_t off = 0;
    for (int32_t i = 0; i < d->in_rank; ++i) {
      off = off * d->in_dims[i] + (d->in_dims[i] == 1 ? 0 : index[d->map[i]]);
    }
    memcpy((char*)d->out + (size_t)k * d->esize,
           (const char*)d->in + (size_t)off * d->esize, d->esize);
    for (int32_t i = d->out_rank - 1; i >= 0; --i) {
      if (++index[i] < d->out_dims[i]) break;
      index[i] = 0;
    }
  }
  atomic_fetch_add(&kt_kernels, 1);
  return NULL;
}

static kc_status* kt_iota(int32_t ordinal, void* stream, void* out, DLDataType dtype,
                          int32_t rank, const int64_t* dims, int32_t dim) {
  if (kt_stream_bad(ordinal, stream)) return kt_bad_stream("iota", stream);
  if (!kt_dtype_ok(dtype)) {
    return kt_core->status_create(KC_UNIMPLEMENTED, "fake iota: dtype code %d bits %d",
                                  dtype.code, dtype.bits);
  }
  int64_t total = 1, inner = 1;
  for (int32_t i = 0; i < rank; ++i) total *= dims[i];
  for (int32_t i = dim + 1; i < rank; ++i) inner *= dims[i];
  for (int64_t k = 0; k < total; ++k) {
    kt_store(dtype, out, k, (double)((k / inner) % dims[dim]));
  }
  atomic_fetch_add(&kt_kernels, 1);
  return NULL;
}

static kc_status* kt_capture_begin(int32_t ordinal, void* stream) {
  (void)ordinal;
  (void)stream;
  return kt_core->status_create(KC_UNIMPLEMENTED, "fake CUDA: no graphs");
}

static kc_status* kt_capture_end(int32_t ordinal, void* stream, void** out) {
  (void)ordinal;
  (void)stream;
  *out = NULL;
  return kt_core->status_create(KC_UNIMPLEMENTED, "fake CUDA: no graphs");
}

static kc_status* kt_graph_launch(int32_t ordinal, void* graph, void* stream) {
  (void)ordinal;
  (void)graph;
  (void)stream;
  return kt_core->status_create(KC_UNIMPLEMENTED, "fake CUDA: no graphs");
}

static void kt_graph_destroy(int32_t ordinal, void* graph) {
  (void)ordinal;
  (void)graph;
}

static const kc__backend kt_backend = {
    sizeof(kc__backend), KC__BACKEND_ABI_VERSION, "CUDA", kDLCUDA,
    kt_init, kt_get_properties, kt_alloc, kt_free, kt_host_alloc, kt_host_free,
    kt_memcpy, kt_memset, kt_stream_create, kt_stream_destroy,
    kt_stream_synchronize, kt_check_launch, kt_elementwise_supported,
    kt_elementwise, kt_broadcast, kt_iota, kt_capture_begin, kt_capture_end,
    kt_graph_launch, kt_graph_destroy};

KT_EXPORT const kc__backend* kc_backend_entry(uint32_t abi_version,
                                             const kc__backend_core* core);
const kc__backend* kc_backend_entry(uint32_t abi_version, const kc__backend_core* core) {
  if (abi_version != KC__BACKEND_ABI_VERSION || !core) return NULL;
  kt_core = core;
  return &kt_backend;
}
