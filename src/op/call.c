/*
 * Eager op calls: kc_op_call, kc_op_call_into and kc_op_infer. A call
 * resolves itself (resolve.c), takes its kernel from the op's cache
 * (kernel_cache.c), then runs shape inference, makes or checks the
 * outputs, and computes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op/kernel_cache.h"
#include "runtime/device_internal.h"

/* For a call whose inputs are on more than one device: each input is on
 * the call's device, or on the host for a host-memory arg of the kernel. */
static kc_status* kc__check_devices(const kc__resolved_call* f,
                                    const kc__cache_entry* e,
                                    const DLTensor* const* inputs) {
  for (int32_t a = 0; a < f->def->num_inputs; ++a) {
    bool host_ok = a < 64 && (e->host_memory_inputs >> a & 1u);
    for (int32_t i = f->input_starts[a]; i < f->input_starts[a + 1]; ++i) {
      DLDevice d = inputs[i]->device;
      if (d.device_type == f->device.device_type &&
          d.device_id == f->device.device_id) {
        continue;
      }
      if (host_ok && kc__host_device(d)) continue;
      char want[64], got[64];
      kc_device_format(f->device, want, sizeof want);
      kc_device_format(d, got, sizeof got);
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "input %d (%s) is on %s, but the call runs on "
                              "%s",
                              i, KC__QS(f->def->inputs[a].name), got, want);
    }
  }
  return NULL;
}

/* True when every dim of s is known. */
static bool kc__shape_known(const kc_shape_handle* s) {
  if (!s || s->rank < 0) return false;
  for (int32_t i = 0; i < s->rank; ++i) {
    if (s->dims[i] < 0) return false;
  }
  return true;
}

/* "[2,3]" (a negative dim, unknown, as "?"), "[?...]" for an unknown rank
 * (dims NULL). */
static void kc__dims_text(const int64_t* dims, int32_t rank, char* buf, size_t cap) {
  if (!dims || rank < 0) {
    snprintf(buf, cap, "[?...]");
    return;
  }
  size_t at = (size_t)snprintf(buf, cap, "[");
  for (int32_t d = 0; d < rank && at < cap; ++d) {
    at += dims[d] < 0 ? (size_t)snprintf(buf + at, cap - at, "%s?", d ? "," : "")
                      : (size_t)snprintf(buf + at, cap - at, "%s%lld", d ? "," : "",
                                         (long long)dims[d]);
  }
  if (at < cap) snprintf(buf + at, cap - at, "]");
}

static kc_status* kc__check_given_output(const kc_kernel_ctx* ctx, int32_t i,
                                         const DLTensor* t) {
  if (!t) {
    return kc_status_create(KC_INVALID_ARGUMENT, "output %d is NULL", i);
  }
  const kc_shape_handle* s = ctx->inferred[i];
  DLDevice want = kc__kernel_ctx_output_device(ctx, i);
  bool ok = kc_dtype_equal(t->dtype, ctx->output_dtypes[i]) &&
            t->device.device_type == want.device_type &&
            t->device.device_id == want.device_id && t->ndim >= 0 &&
            t->ndim <= KC_TENSOR_MAX_NDIM && (t->ndim == 0 || t->shape) &&
            kc_dltensor_is_compact(t);
  if (ok && s && s->rank >= 0) {
    ok = t->ndim == s->rank;
    for (int32_t d = 0; ok && d < s->rank; ++d) {
      ok = s->dims[d] < 0 || s->dims[d] == t->shape[d];
    }
  }
  if (ok) return NULL;
  char dt[64], dev[64], got_dt[64], got_dev[64], want_dims[256], got_dims[256];
  kc_dtype_format(ctx->output_dtypes[i], dt, sizeof dt);
  kc_device_format(want, dev, sizeof dev);
  kc_dtype_format(t->dtype, got_dt, sizeof got_dt);
  kc_device_format(t->device, got_dev, sizeof got_dev);
  kc__dims_text(s && s->rank >= 0 ? s->dims : NULL, s ? s->rank : -1, want_dims,
                sizeof want_dims);
  bool readable = t->ndim >= 0 && t->ndim <= KC_TENSOR_MAX_NDIM && (t->ndim == 0 || t->shape);
  kc__dims_text(readable ? t->shape : NULL, readable ? t->ndim : -1, got_dims, sizeof got_dims);
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "output %d: expected a compact %s tensor on %s of "
                          "the shape the op produces (got one on %s): the op "
                          "produces %s%s, the output given is a %s%s%s",
                          i, dt, dev, got_dev, dt, want_dims,
                          readable && !kc_dltensor_is_compact(t) ? "strided " : "",
                          got_dt, got_dims);
}

/* The backend and stream of a call on a device: the caller's stream, or
 * kcall's default one (which the call then waits for). */
static kc_status* kc__call_stream(DLDevice device,
                                  const kc_op_call_options* options,
                                  const kc__backend** out_backend,
                                  void** out_stream, bool* out_wait) {
  KC_RETURN_IF_ERROR(kc__device_backend(device, out_backend));
  void* stream = NULL;
  if (options && KC_STRUCT_HAS(options, kc_op_call_options, stream)) {
    stream = options->stream;
  }
  *out_wait = stream == NULL;
  if (!stream) KC_RETURN_IF_ERROR(kc__device_default_stream(device, &stream));
  *out_stream = stream;
  return NULL;
}

/* After compute on a device: frees the temporaries in the stream's order,
 * picks up a failed launch, and waits for the stream when the call owns
 * it. Returns `st`, or the first failure of these when `st` is NULL. */
static kc_status* kc__device_finish(kc_kernel_ctx* ctx, bool wait,
                                    kc_status* st) {
  const kc__backend* b = ctx->backend;
  int32_t ordinal = ctx->device.device_id;
  char dev[64];
  kc_device_format(ctx->device, dev, sizeof dev);
  while (ctx->temps) {
    kc__temp* t = ctx->temps;
    ctx->temps = t->next;
    kc_status* fst = b->free(ordinal, t->ptr, ctx->stream);
    if (fst && !st) {
      st = kc_status_add_context(fst, "freeing %zu temporary bytes on %s",
                                 t->size, dev);
    } else {
      kc_status_destroy(fst);
    }
    kc__free(t);
  }
  /* Both run even after a failure: the launch error is cleared, and work
   * already queued is done before the caller frees what it uses. */
  kc_status* launch = b->check_launch(ordinal);
  if (launch && !st) {
    st = kc_status_add_context(launch, "a kernel launch on %s", dev);
  } else {
    kc_status_destroy(launch);
  }
  if (wait) {
    kc_status* sync = b->stream_synchronize(ordinal, ctx->stream);
    if (sync && !st) {
      st = kc_status_add_context(sync, "waiting for the call's work on %s",
                                 dev);
    } else {
      kc_status_destroy(sync);
    }
  }
  return st;
}

/* Shape inference for a resolved call: the context and the storage it
 * points into (the input shapes, the outputs' slots, and an arena for the
 * first shapes inference makes). Filled by kc__infer_shapes; freed with
 * kc__shape_ctx_free_all(&s->ctx). */
typedef struct kc__call_shapes {
  kc_shape_handle inputs[KC_OP_MAX_TENSORS];
  const kc_shape_handle* outputs[KC_OP_MAX_TENSORS];
  uint64_t arena[64];
  kc_shape_ctx ctx;
} kc__call_shapes;

/* Runs the op's shape function, if it has one; an output it leaves
 * unknown keeps a NULL slot. */
static inline kc_status* kc__infer_shapes(kc__call_shapes* s,
                                          const kc__resolved_call* f,
                                          const kc_op_attrs* attrs,
                                          const DLTensor* const* inputs,
                                          kc__sym_table* sym) {
  for (int32_t i = 0; i < f->num_inputs; ++i) {
    s->inputs[i].rank = inputs[i]->ndim;
    s->inputs[i].dims = inputs[i]->shape;
  }
  for (int32_t i = 0; i < f->num_outputs; ++i) s->outputs[i] = NULL;
  s->ctx = (kc_shape_ctx){
      .def = f->def,
      .attrs = attrs,
      .num_inputs = f->num_inputs,
      .num_outputs = f->num_outputs,
      .inputs = s->inputs,
      .input_dtypes = f->input_dtypes,
      .outputs = s->outputs,
      .output_dtypes = f->output_dtypes,
      .blocks = NULL,
      .inline_buf = (unsigned char*)s->arena,
      .inline_used = 0,
      .inline_cap = sizeof s->arena,
      .sym = sym,
  };
  if (!f->def->shape_fn) return NULL;
  kc_status* st = f->def->shape_fn(&s->ctx);
  if (st) st = kc_status_add_context(st, "in the shape function");
  return st;
}

/* Checks the caller's outputs (call_into), or creates each output whose
 * shape inference found (the kernel allocates the others). */
static kc_status* kc__prepare_outputs(kc_kernel_ctx* kctx,
                                      DLTensor* const* given) {
  for (int32_t i = 0; i < kctx->num_outputs; ++i) {
    if (given) {
      KC_RETURN_IF_ERROR(kc__check_given_output(kctx, i, given[i]));
    } else if (kc__shape_known(kctx->inferred[i])) {
      kc_tensor* t = NULL;
      KC_RETURN_IF_ERROR(kc_tensor_create(kctx->alloc, kctx->inferred[i]->dims,
                               kctx->inferred[i]->rank,
                               kctx->output_dtypes[i],
                               kc__kernel_ctx_output_device(kctx, i), &t));
      kctx->owned[i] = t;
      kctx->outputs[i] = (DLTensor*)(uintptr_t)kc_tensor_get_dltensor(t);
    }
  }
  return NULL;
}

/* Runs the kernel: its own failure wins over one it recorded with
 * kc_kernel_ctx_set_status; then every output must exist. */
static kc_status* kc__compute(const kc__cache_entry* e, kc_kernel_ctx* kctx) {
  kc_status* st = e->kernel->compute(e->instance, kctx);
  kc_status* recorded = __atomic_load_n(&kctx->status, __ATOMIC_ACQUIRE);
  if (st) {
    kc_status_destroy(recorded);
    return st;
  }
  if (recorded) return recorded;
  for (int32_t i = 0; i < kctx->num_outputs; ++i) {
    if (!kctx->outputs[i]) {
      return kc_status_create(KC_INTERNAL,
                              "the kernel did not produce output %d (its "
                              "shape is not known before compute, so the "
                              "kernel must allocate it)",
                              i);
    }
  }
  return NULL;
}

/* Frees the host temporaries the kernel allocated. */
static void kc__free_host_temps(kc_kernel_ctx* kctx) {
  while (kctx->temps) {
    kc__temp* t = kctx->temps;
    kctx->temps = t->next;
    kc_allocator_free(kctx->alloc, t->ptr, t->size, t->alignment);
    kc_allocator_free(kctx->alloc, t, sizeof *t, 0);
  }
}

/* Runs shape inference, allocates outputs and computes. `given` holds the
 * caller's outputs (call_into) or is NULL. */
static kc_status* kc__run(const kc__resolved_call* f, const kc__cache_entry* e,
                          const DLTensor* const* inputs,
                          const kc_op_call_options* options,
                          DLTensor* const* given, kc_tensor** owned) {
  /* What the options give: an allocator, a thread pool, a stream. */
  const kc_allocator* alloc = NULL;
  kc_thread_pool* pool = NULL;
  if (options) {
    if (KC_STRUCT_HAS(options, kc_op_call_options, allocator)) {
      alloc = options->allocator;
    }
    if (KC_STRUCT_HAS(options, kc_op_call_options, thread_pool)) {
      pool = options->thread_pool;
    }
  }
  const kc__backend* backend = NULL;
  void* stream = NULL;
  bool wait = false;
  if (!kc__host_device(f->device)) {
    KC_RETURN_IF_ERROR(kc__call_stream(f->device, options, &backend, &stream, &wait));
  }

  /* The kernel's context: the outputs start empty, or as given. */
  kc_op_attrs attrs = {.def = f->def, .values = f->values};
  kc__call_shapes shapes;
  DLTensor* outputs[KC_OP_MAX_TENSORS];
  for (int32_t i = 0; i < f->num_outputs; ++i) {
    outputs[i] = given ? given[i] : NULL;
    if (owned) owned[i] = NULL;
  }
  kc_kernel_ctx kctx = {
      .def = f->def,
      .attrs = &attrs,
      .inputs = inputs,
      .num_inputs = f->num_inputs,
      .num_outputs = f->num_outputs,
      .input_starts = f->input_starts,
      .outputs = outputs,
      .owned = owned,
      .inferred = shapes.outputs,
      .output_dtypes = f->output_dtypes,
      .alloc = alloc,
      .pool = pool,
      .device = f->device,
      .status = NULL,
      .temps = NULL,
      .backend = backend,
      .stream = stream,
      .output_starts = f->output_starts,
      .host_memory_outputs = e->host_memory_outputs,
  };

  /* Shapes, outputs, compute; then the temporaries go (and on a device,
   * the call's work is checked and waited for) whatever happened. */
  kc_status* st = kc__infer_shapes(&shapes, f, &attrs, inputs, NULL);
  if (!st) st = kc__prepare_outputs(&kctx, given);
  if (!st) st = kc__compute(e, &kctx);
  if (backend) {
    st = kc__device_finish(&kctx, wait, st);
  } else {
    kc__free_host_temps(&kctx);
  }
  kc__shape_ctx_free_all(&shapes.ctx);
  if (st && owned) {
    for (int32_t i = 0; i < f->num_outputs; ++i) {
      kc_object_release(KC_OBJECT(owned[i]));
      owned[i] = NULL;
    }
  }
  return st;
}

kc_status* kc__op_removed_error(const kc_op* op) {
  return kc_status_create(KC_FAILED_PRECONDITION,
                          "op %s was removed by kc_op_registry_reset (its "
                          "kernels are released; register the op again and "
                          "look it up anew)",
                          KC__QS(op->def.name));
}

/* Refuses a call of a removed op, and bad input or attr arrays. */
static inline kc_status* kc__check_call(const kc_op* op,
                                        const DLTensor* const* inputs,
                                        int32_t num_inputs,
                                        const kc_op_attr* attrs,
                                        int32_t num_attrs) {
  kc_status* st = kc__op_check_live(op);
  if (KC__UNLIKELY(st != NULL)) return st;
  if (num_inputs < 0 || num_inputs > KC_OP_MAX_TENSORS ||
      (num_inputs && !inputs) || num_attrs < 0 || (num_attrs && !attrs)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "inputs (%d) or attrs (%d): a bad count or a NULL "
                            "array",
                            num_inputs, num_attrs);
  }
  return NULL;
}

/* OUT_OF_RANGE when the caller's out_outputs is too short. */
static kc_status* kc__check_room(const kc__resolved_call* f,
                                 int32_t max_outputs) {
  if (max_outputs >= f->num_outputs) return NULL;
  return kc_status_create(KC_OUT_OF_RANGE,
                          "the op produces %d output tensor(s); out_outputs "
                          "has room for %d",
                          f->num_outputs, max_outputs);
}

/* Refuses a call whose outputs do not fit: given (call_into) in another
 * number than the op makes, or more than out_outputs has room for. */
static kc_status* kc__check_counts(const kc__resolved_call* f,
                                   DLTensor* const* given, int32_t num_given,
                                   kc_tensor** owned, int32_t max_owned) {
  if (given && num_given != f->num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "expected %d output tensor(s), got %d",
                            f->num_outputs, num_given);
  }
  return owned ? kc__check_room(f, max_owned) : NULL;
}

static kc_status* kc__call(const kc_op* op, const DLTensor* const* inputs,
                           int32_t num_inputs, const kc_op_attr* attrs,
                           int32_t num_attrs, const kc_op_call_options* options,
                           DLTensor* const* given, int32_t num_given,
                           kc_tensor** owned, int32_t max_owned,
                           int32_t* out_count) {
  KC_RETURN_IF_ERROR(kc__check_call(op, inputs, num_inputs, attrs, num_attrs));
  /* A call like one before it: resolved already, on one device. */
  const kc__call_memo* m =
      num_attrs ? NULL : kc__memo_find(op, inputs, num_inputs);
  if (KC__LIKELY(m != NULL)) {
    const kc__resolved_call* f = &m->call;
    KC_RETURN_IF_ERROR(kc__check_counts(f, given, num_given, owned, max_owned));
    KC_RETURN_IF_ERROR(kc__run(f, m->entry, inputs, options, given, owned));
    if (out_count) *out_count = f->num_outputs;
    return NULL;
  }
  kc__resolved_call f;
  f.def = &op->def;
  kc_status* st = kc__resolve(&f, inputs, num_inputs, attrs, num_attrs);
  if (!st) st = kc__check_counts(&f, given, num_given, owned, max_owned);
  kc__cache_entry* e = NULL;
  if (!st) st = kc__cache_get(op, &f, &e);
  if (!st && f.mixed_devices) st = kc__check_devices(&f, e, inputs);
  if (!st && !num_attrs && !f.mixed_devices) kc__memo_publish(op, &f, e);
  if (!st) st = kc__run(&f, e, inputs, options, given, owned);
  if (!st && out_count) *out_count = f.num_outputs;
  kc__resolved_call_release(&f);
  return st;
}

static kc_status* kc__call_context(const kc_op* op, kc_status* st) {
  return kc_status_add_context(st, "calling op %s", KC__QS(op->def.name));
}

kc_status* kc_op_call(const kc_op* op, const DLTensor* const* inputs,
                      int32_t num_inputs, const kc_op_attr* attrs,
                      int32_t num_attrs, const kc_op_call_options* options,
                      kc_tensor** out_outputs, int32_t max_outputs,
                      int32_t* out_num_outputs) {
  if (KC__UNLIKELY(!op || !out_num_outputs || max_outputs < 0 ||
                   (max_outputs && !out_outputs))) {
    return kc_status_create(
        KC_INVALID_ARGUMENT, "kc_op_call: %s",
        !op ? "op is NULL" : "out_outputs/out_num_outputs are NULL");
  }
  *out_num_outputs = 0;
  kc_tensor* scratch[1];
  kc_tensor** owned = max_outputs ? out_outputs : scratch;
  kc_status* st = kc__call(op, inputs, num_inputs, attrs, num_attrs, options,
                           NULL, 0, owned, max_outputs, out_num_outputs);
  if (KC__UNLIKELY(st != NULL)) return kc__call_context(op, st);
  return NULL;
}

kc_status* kc_op_infer(const kc_op* op, const DLTensor* const* inputs,
                       int32_t num_inputs, const kc_op_attr* attrs,
                       int32_t num_attrs, kc_op_output_info* out_outputs,
                       int32_t max_outputs, int32_t* out_num_outputs) {
  if (KC__UNLIKELY(!op || !out_num_outputs || max_outputs < 0 ||
                   (max_outputs && !out_outputs))) {
    return kc_status_create(
        KC_INVALID_ARGUMENT, "kc_op_infer: %s",
        !op ? "op is NULL" : "out_outputs/out_num_outputs are NULL");
  }
  *out_num_outputs = 0;
  kc_status* st = kc__check_call(op, inputs, num_inputs, attrs, num_attrs);
  if (st) return kc__call_context(op, st);
  /* Resolved by a call like this one already, or resolved now. */
  const kc__call_memo* m =
      num_attrs ? NULL : kc__memo_find(op, inputs, num_inputs);
  kc__resolved_call own;
  own.def = &op->def;
  own.owned = 0;
  const kc__resolved_call* f = m ? &m->call : &own;
  if (!m) st = kc__resolve(&own, inputs, num_inputs, attrs, num_attrs);
  if (!st) st = kc__check_room(f, max_outputs);
  if (st) {
    kc__resolved_call_release(&own);
    return kc__call_context(op, st);
  }
  kc_op_attrs resolved = {.def = f->def, .values = f->values};
  kc__call_shapes shapes;
  st = kc__infer_shapes(&shapes, f, &resolved, inputs, NULL);
  for (int32_t i = 0; !st && i < f->num_outputs; ++i) {
    kc_op_output_info* o = &out_outputs[i];
    const kc_shape_handle* s = shapes.outputs[i];
    o->dtype = f->output_dtypes[i];
    o->rank = s ? s->rank : KC_RANK_UNKNOWN;
    for (int32_t d = 0; d < o->rank; ++d) o->dims[d] = s->dims[d];
  }
  if (!st) *out_num_outputs = f->num_outputs;
  kc__shape_ctx_free_all(&shapes.ctx);
  kc__resolved_call_release(&own);
  return st ? kc__call_context(op, st) : NULL;
}

/* The inputs of a symbolic inference, twice: with a stand-in size for
 * each symbol (what the call's checks see) and with its symbolic dim (what
 * the shape function sees). */
typedef struct kc__sym_inputs {
  DLTensor checked[KC_OP_MAX_TENSORS];
  DLTensor coded[KC_OP_MAX_TENSORS];
  const DLTensor* checked_ptrs[KC_OP_MAX_TENSORS];
  const DLTensor* coded_ptrs[KC_OP_MAX_TENSORS];
  int64_t sizes[KC_OP_MAX_TENSORS][KC_TENSOR_MAX_NDIM];
  int64_t codes[KC_OP_MAX_TENSORS][KC_TENSOR_MAX_NDIM];
  int64_t symbols[KC_OP_MAX_TENSORS * KC_TENSOR_MAX_NDIM]; /* k, per leaf */
  int64_t leaves[KC_OP_MAX_TENSORS * KC_TENSOR_MAX_NDIM];
  size_t num_leaves;
  bool any;
} kc__sym_inputs;

/* Splits input i's dims into stand-ins and codes. Input tensors the
 * call's checks refuse (NULL, a bad ndim) pass through for them to. */
static kc_status* kc__sym_input(kc__sym_inputs* w, kc__sym_table* table,
                                const DLTensor* t, int32_t i) {
  w->checked_ptrs[i] = t;
  w->coded_ptrs[i] = t;
  if (!t || t->ndim < 0 || t->ndim > KC_TENSOR_MAX_NDIM ||
      (t->ndim && !t->shape)) {
    return NULL;
  }
  w->checked[i] = *t;
  w->checked[i].shape = w->sizes[i];
  w->checked[i].strides = NULL; /* only the shape is read */
  w->coded[i] = w->checked[i];
  w->coded[i].shape = w->codes[i];
  w->checked_ptrs[i] = &w->checked[i];
  w->coded_ptrs[i] = &w->coded[i];
  for (int32_t d = 0; d < t->ndim; ++d) {
    int64_t v = t->shape[d];
    w->sizes[i][d] = w->codes[i][d] = v;
    if (v >= 0) continue;
    int64_t k = KC_DIM_SYMBOL(0) - v;
    if (v == KC_DIM_UNKNOWN || k >= KC_DIM_SYMBOL_COUNT) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "input %d: dimension %d is %lld: expected a size "
                              "(>= 0) or KC_DIM_SYMBOL(k), 0 <= k < %d",
                              i, d, (long long)v, KC_DIM_SYMBOL_COUNT);
    }
    w->any = true;
    w->sizes[i][d] = 2; /* any size passes the checks */
    size_t leaf = 0;
    while (leaf < w->num_leaves && w->symbols[leaf] != k) ++leaf;
    if (leaf == w->num_leaves) {
      KC_RETURN_IF_ERROR(kc__sym_add_expr(table, KC_DIM_EXPR_INPUT, i, d,
                                          &w->leaves[leaf]));
      w->symbols[w->num_leaves++] = k;
    }
    w->codes[i][d] = w->leaves[leaf];
  }
  return NULL;
}

kc_status* kc_op_infer_symbolic(const kc_op* op, const DLTensor* const* inputs,
                                int32_t num_inputs, const kc_op_attr* attrs,
                                int32_t num_attrs,
                                kc_symbolic_shapes** out_shapes) {
  if (!op || !out_shapes) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_op_infer_symbolic: %s",
                            !op ? "op is NULL" : "out_shapes is NULL");
  }
  *out_shapes = NULL;
  kc_status* st = kc__check_call(op, inputs, num_inputs, attrs, num_attrs);
  if (st) return kc__call_context(op, st);
  kc__sym_inputs* w = kc__malloc(sizeof *w);
  if (!w) {
    return kc__call_context(
        op, kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
  }
  w->num_leaves = 0;
  w->any = false;
  kc__sym_table table = {0};
  for (int32_t i = 0; !st && i < num_inputs; ++i) {
    st = kc__sym_input(w, &table, inputs[i], i);
  }
  if (!st && w->any && !(op->def.flags & KC_OP_SYMBOLIC_SHAPES)) {
    st = kc_status_create(
        KC_FAILED_PRECONDITION,
        "op %s: its shape function is not symbolic (the op does not declare "
        "KC_OP_SYMBOLIC_SHAPES), so its output shapes are known only for "
        "concrete input sizes",
        KC__QS(op->def.name));
  }
  if (st) {
    kc__sym_table_clear(&table);
    kc__free(w);
    return kc__call_context(op, st);
  }
  kc__resolved_call f;
  f.def = &op->def;
  st = kc__resolve(&f, w->checked_ptrs, num_inputs, attrs, num_attrs);
  if (!st) {
    kc_op_attrs resolved = {.def = f.def, .values = f.values};
    kc__call_shapes shapes;
    st = kc__infer_shapes(&shapes, &f, &resolved, w->coded_ptrs,
                          w->any ? &table : NULL);
    if (!st) {
      st = kc__symbolic_shapes_create(&table, f.num_outputs, f.output_dtypes,
                                      shapes.outputs, out_shapes);
    }
    kc__shape_ctx_free_all(&shapes.ctx);
  }
  kc__resolved_call_release(&f);
  kc__sym_table_clear(&table);
  kc__free(w);
  return st ? kc__call_context(op, st) : NULL;
}

kc_status* kc_op_call_into(const kc_op* op, const DLTensor* const* inputs,
                           int32_t num_inputs, const kc_op_attr* attrs,
                           int32_t num_attrs, const kc_op_call_options* options,
                           DLTensor* const* outputs, int32_t num_outputs) {
  if (KC__UNLIKELY(!op || num_outputs < 0 || (num_outputs && !outputs))) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_op_call_into: %s",
                            !op ? "op is NULL" : "outputs is NULL");
  }
  static DLTensor* const none[1] = {NULL};
  kc_status* st =
      kc__call(op, inputs, num_inputs, attrs, num_attrs, options,
               num_outputs ? outputs : none, num_outputs, NULL, 0, NULL);
  if (KC__UNLIKELY(st != NULL)) return kc__call_context(op, st);
  return NULL;
}
