/* Running a compiled program on a CUDA device, through the backend table
 * (runtime/backend.h): the device side of run states, the device steps,
 * staging of host inputs, and capture and replay of CUDA graphs. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/runtime/executable_internal.h"
#include "runtime/device_internal.h"
#include "xcall/xla_ffi_internal.h"

#define KC__ORD(exe) ((exe)->device.device_id)

/* ---- the executable and its run states --------------------------------------- */

kc_status* kc__device_upload_constants(kc_executable* exe) {
  const kc__backend* be = exe->backend;
  size_t total = 0;
  for (size_t i = 0; i < exe->num_buffers; ++i) {
    if (exe->buffers[i].kind == KC__BUF_CONST) {
      total += (exe->buffers[i].size + 255) & ~(size_t)255;
    }
  }
  if (!total) return NULL;
  void* dev = NULL;
  KC_RETURN_IF_ERROR(be->alloc(KC__ORD(exe), total, NULL, &dev),
                     "copying the constants (%zu bytes) to cuda:%d", total, KC__ORD(exe));
  exe->dev_consts = dev;
  size_t off = 0;
  kc_status* st = NULL;
  for (size_t i = 0; i < exe->num_buffers && !st; ++i) {
    kc__buffer* b = &exe->buffers[i];
    if (b->kind != KC__BUF_CONST) continue;
    char* at = (char*)dev + off;
    if (b->size) {
      st = be->memcpy(KC__ORD(exe), at, b->data, b->size, KC__COPY_HOST_TO_DEVICE, NULL);
    }
    b->data = at;
    off += (b->size + 255) & ~(size_t)255;
  }
  if (!st) st = be->stream_synchronize(KC__ORD(exe), NULL);
  if (st) {
    return kc_status_add_context(st, "copying the constants (%zu bytes) to cuda:%d", total,
                                 KC__ORD(exe));
  }
  return NULL;
}

void kc__device_exe_free(kc_executable* exe) {
  if (exe->dev_consts) {
    kc_status_destroy(exe->backend->free(KC__ORD(exe), exe->dev_consts, NULL));
    exe->dev_consts = NULL;
  }
}

kc_status* kc__device_run_init(const kc_executable* exe, kc__run* run) {
  const kc__backend* be = exe->backend;
  int32_t ord = KC__ORD(exe);
  void* p = NULL;
  if (exe->arena_bytes) {
    KC_RETURN_IF_ERROR(be->alloc(ord, exe->arena_bytes, NULL, &p), "temporaries");
    run->arena = p;
  }
  if (exe->tables_bytes) {
    KC_RETURN_IF_ERROR(be->alloc(ord, exe->tables_bytes, NULL, &p), "pointer tables");
    run->tables = p;
    KC_RETURN_IF_ERROR(be->host_alloc(ord, exe->tables_bytes, &p), "pinned pointer tables");
    run->host_tables = p;
    memset(run->host_tables, 0, exe->tables_bytes);
  }
  run->key = kc__calloc(exe->num_inputs + exe->num_outputs + 1, sizeof *run->key);
  if (!run->key) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory making a run's graph key");
  }
  return NULL;
}

static void kc__drop_graph(const kc_executable* exe, kc__run* run) {
  if (run->graph) exe->backend->graph_destroy(KC__ORD(exe), run->graph);
  run->graph = NULL;
}

void kc__device_run_free(const kc_executable* exe, kc__run* run) {
  const kc__backend* be = exe->backend;
  int32_t ord = KC__ORD(exe);
  kc__drop_graph(exe, run);
  kc_status_destroy(be->free(ord, run->arena, NULL));
  kc_status_destroy(be->free(ord, run->tables, NULL));
  kc_status_destroy(be->free(ord, run->dev_inputs, NULL));
  if (run->host_tables) be->host_free(ord, run->host_tables);
  if (run->host_inputs) be->host_free(ord, run->host_inputs);
  kc__free(run->key);
}

/* ---- steps -------------------------------------------------------------------- */

kc_status* kc__step_elementwise_device(const kc__step* s, kc__run* run) {
  const kc_executable* exe = run->exe;
  kc__elementwise_desc d = {.op = s->op,
                             .arity = s->arity,
                             .direction = s->direction,
                             .in_dtype = s->in_dtype,
                             .out_dtype = s->out_dtype,
                             .count = s->count};
  for (int32_t i = 0; i < s->arity && i < 3; ++i) d.in[i] = run->addr[s->in[i]];
  d.out = run->addr[s->out];
  if (!d.count) return NULL;
  return exe->backend->elementwise(KC__ORD(exe), run->stream, &d);
}

kc_status* kc__step_broadcast_device(const kc__step* s, kc__run* run) {
  const kc_executable* exe = run->exe;
  kc__broadcast_desc d = {.in = run->addr[s->in[0]],
                           .out = run->addr[s->out],
                           .in_rank = s->in_rank,
                           .out_rank = s->out_rank,
                           .in_dims = s->in_dims,
                           .out_dims = s->out_dims,
                           .map = s->map,
                           .esize = s->bytes};
  return exe->backend->broadcast(KC__ORD(exe), run->stream, &d);
}

kc_status* kc__step_copy_device(const kc__step* s, kc__run* run) {
  const kc_executable* exe = run->exe;
  void* to = run->addr[s->out];
  const void* from = run->addr[s->in[0]];
  if (to == from || !s->bytes) return NULL;
  return exe->backend->memcpy(KC__ORD(exe), to, from, s->bytes, KC__COPY_DEVICE_TO_DEVICE,
                              run->stream);
}

kc_status* kc__step_iota_device(const kc__step* s, kc__run* run) {
  const kc_executable* exe = run->exe;
  return exe->backend->iota(KC__ORD(exe), run->stream, run->addr[s->out], s->out_dtype,
                            s->out_rank, s->out_dims, s->in_rank);
}

kc_status* kc__step_gpu_call(const kc__step* s, kc__run* run) {
  void** buffers = (void**)(void*)(run->block + s->ins_offset);
  if (s->api == KC_XCALL_API_ORIGINAL) {
    ((kc_xcall_gpu_fn)s->fn)(run->stream, buffers, s->opaque, s->opaque_size);
    return NULL;
  }
  kc_xcall_status xs = {false, NULL, 0, s->target->user};
  ((kc_xcall_gpu_status_fn)s->fn)(run->stream, buffers, s->opaque, s->opaque_size, &xs);
  if (KC__LIKELY(!xs.failed)) {
    kc__free(xs.message);
    return NULL;
  }
  kc_status* st = kc_status_create(KC_INTERNAL, "%s",
                                   xs.message ? xs.message : "failed (no message)");
  kc__free(xs.message);
  return st;
}

/* ---- one run ---------------------------------------------------------------------- */

static bool kc__is_host_input(const DLTensor* t) { return t->device.device_type != kDLCUDA; }

/* Queues the whole run on run->stream: host inputs and pointer tables up,
 * then the steps. */
static kc_status* kc__queue_run(const kc_executable* exe, kc__run* run,
                                const DLTensor* const* inputs, uint64_t* times) {
  const kc__backend* be = exe->backend;
  int32_t ord = KC__ORD(exe);
  for (size_t i = 0; i < exe->num_inputs; ++i) {
    size_t bytes = exe->input_shapes[i]->byte_size;
    if (!kc__is_host_input(inputs[i]) || !bytes) continue;
    size_t off = exe->input_staging[i];
    KC_RETURN_IF_ERROR(be->memcpy(ord, run->dev_inputs + off, run->host_inputs + off, bytes,
                                  KC__COPY_HOST_TO_DEVICE, run->stream),
                       "copying input %zu to cuda:%d", i, ord);
  }
  if (exe->num_table_fills) {
    KC_RETURN_IF_ERROR(be->memcpy(ord, run->tables, run->host_tables, exe->tables_bytes,
                                  KC__COPY_HOST_TO_DEVICE, run->stream),
                       "copying tuple pointer tables to cuda:%d", ord);
  }
  return kc__run_steps(exe, run, times);
}

/* Captures the run into a graph and launches it. *out_fallback is set
 * when the backend could not capture: nothing ran on the device, and the
 * caller runs on the stream instead. */
static kc_status* kc__capture_and_launch(kc_executable* exe, kc__run* run,
                                         const DLTensor* const* inputs, bool* out_fallback) {
  const kc__backend* be = exe->backend;
  int32_t ord = KC__ORD(exe);
  *out_fallback = false;
  kc_status* st = be->capture_begin(ord, run->stream);
  if (st) {
    kc_status_destroy(st);
    atomic_store(&exe->graphs_failed, true);
    *out_fallback = true;
    return NULL;
  }
  kc_status* run_st = kc__queue_run(exe, run, inputs, NULL);
  void* graph = NULL;
  st = be->capture_end(ord, run->stream, &graph);
  if (run_st) {
    if (graph) be->graph_destroy(ord, graph);
    kc_status_destroy(st);
    return run_st;
  }
  if (st || !graph) {
    kc_status_destroy(st);
    atomic_store(&exe->graphs_failed, true);
    *out_fallback = true;
    return NULL;
  }
  run->graph = graph;
  atomic_fetch_add(&exe->graph_captures, 1);
  atomic_fetch_add(&exe->graph_launches, 1);
  return be->graph_launch(ord, graph, run->stream);
}

/* Makes the run's key of the input and output addresses; true when it is
 * the key of the run state's last run. */
static bool kc__make_key(const kc_executable* exe, kc__run* run, const DLTensor* const* inputs,
                         void* const* out_data) {
  size_t ni = exe->num_inputs;
  bool same = run->key_valid;
  for (size_t i = 0; i < ni + exe->num_outputs; ++i) {
    void* a;
    if (i < ni) {
      const DLTensor* t = inputs[i];
      a = kc__is_host_input(t) ? run->dev_inputs + exe->input_staging[i]
                               : (char*)t->data + t->byte_offset;
    } else {
      a = out_data[i - ni];
    }
    if (run->key[i] != a) same = false;
    run->key[i] = a;
  }
  return same;
}

/* Device and pinned staging for host inputs, made on the first run that
 * has one. */
static kc_status* kc__ensure_staging(const kc_executable* exe, kc__run* run) {
  if (run->dev_inputs || !exe->staging_bytes) return NULL;
  const kc__backend* be = exe->backend;
  void* p = NULL;
  KC_RETURN_IF_ERROR(be->alloc(KC__ORD(exe), exe->staging_bytes, NULL, &p),
                     "staging host inputs on cuda:%d", KC__ORD(exe));
  run->dev_inputs = p;
  kc_status* st = be->host_alloc(KC__ORD(exe), exe->staging_bytes, &p);
  if (st) {
    kc_status_destroy(be->free(KC__ORD(exe), run->dev_inputs, NULL));
    run->dev_inputs = NULL;
    return kc_status_add_context(st, "pinned staging of host inputs");
  }
  run->host_inputs = p;
  return NULL;
}

/* Everything of the run that happens on the host before work is queued:
 * addresses, staging, the block's fills and streams. *out_same: the
 * addresses are those of the run state's last run. */
static kc_status* kc__prepare_run(kc_executable* exe, kc__run* run,
                                  const DLTensor* const* inputs, void* const* out_data,
                                  void* stream, bool* out_same) {
  const kc__backend* be = exe->backend;
  int32_t ord = KC__ORD(exe);
  bool host_inputs = false;
  for (size_t i = 0; i < exe->num_inputs; ++i) host_inputs |= kc__is_host_input(inputs[i]);
  if (host_inputs) KC_RETURN_IF_ERROR(kc__ensure_staging(exe, run));
  bool same = kc__make_key(exe, run, inputs, out_data);
  /* Pinned memory that earlier work on the stream may still be reading is
   * about to change: wait for it. */
  if (run->pending && (host_inputs || (!same && exe->num_table_fills))) {
    KC_RETURN_IF_ERROR(be->stream_synchronize(ord, run->stream));
    run->pending = false;
  }
  for (size_t i = 0; i < exe->num_inputs; ++i) {
    const DLTensor* t = inputs[i];
    size_t bytes = exe->input_shapes[i]->byte_size;
    if (kc__is_host_input(t) && bytes) {
      memcpy(run->host_inputs + exe->input_staging[i], (const char*)t->data + t->byte_offset,
             bytes);
    }
  }
  kc__set_dynamic(exe, run, inputs, out_data);
  if (!same) {
    for (size_t i = 0; i < exe->num_table_fills; ++i) {
      const kc__fill* f = &exe->table_fills[i];
      memcpy(run->host_tables + f->target, &run->addr[f->buffer], sizeof(void*));
    }
  }
  for (size_t i = 0; i < exe->num_stream_slots; ++i) {
    memcpy(run->block + exe->stream_slots[i], &stream, sizeof stream);
  }
  if (exe->has_xla) {
    kc__xla_run_info* info = (kc__xla_run_info*)(void*)(run->block + exe->xla_run_offset);
    atomic_store_explicit(&info->run_id, 0, memory_order_relaxed);
    info->stream = stream;
    info->device_ordinal = KC__ORD(exe);
  }
  run->stream = stream;
  *out_same = same;
  return NULL;
}

kc_status* kc__device_execute(kc_executable* exe, const DLTensor* const* inputs,
                              void* const* output_data, void* stream, uint64_t* times,
                              const kc_allocator* alloc) {
  const kc__backend* be = exe->backend;
  int32_t ord = KC__ORD(exe);
  bool own_stream = stream == NULL;
  if (own_stream) KC_RETURN_IF_ERROR(kc__device_default_stream(exe->device, &stream));
  kc__run* run = NULL;
  KC_RETURN_IF_ERROR(kc__run_acquire_for(exe, alloc, stream, &run));
  bool same = false;
  kc_status* st = kc__prepare_run(exe, run, inputs, output_data, stream, &same);
  if (!st) {
    bool graphs = exe->graph_capable && !times && !atomic_load(&exe->graphs_failed);
    if (!same) kc__drop_graph(exe, run);
    run->pending = true;
    if (graphs && same && run->graph) {
      st = be->graph_launch(ord, run->graph, stream);
      if (!st) atomic_fetch_add(&exe->graph_launches, 1);
    } else {
      bool fallback = !(graphs && same);
      if (!fallback) st = kc__capture_and_launch(exe, run, inputs, &fallback);
      if (!st && fallback) st = kc__queue_run(exe, run, inputs, times);
    }
  }
  if (own_stream && run->pending) {
    /* Wait for the run (and report what the device hit), even after a
     * failure, so that the state goes back to the pool idle. */
    kc_status* sync = be->stream_synchronize(ord, stream);
    if (!st && sync) {
      st = kc_status_add_context(sync, "waiting for the run on cuda:%d", ord);
    } else {
      kc_status_destroy(sync);
    }
    run->pending = false;
  }
  /* A failed run starts over: the next run with these addresses runs on
   * the stream, and captures only after that. */
  if (st) {
    run->key_valid = false;
    kc__drop_graph(exe, run);
  } else {
    run->key_valid = true;
  }
  kc__run_release(exe, run);
  return st;
}
