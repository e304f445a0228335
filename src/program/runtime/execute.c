/* Running a compiled program: the run pool, the steps, the plan printer. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "internal/common.h"
#include "kcall/runtime.h"
#include "kernels/split.h"
#include "program/runtime/executable_internal.h"
#include "program/instr/instr.h"
#include "xcall/xla_ffi_internal.h"

/* ---- runs -------------------------------------------------------------------- */

static void kc__run_destroy(const kc_executable* exe, kc__run* run) {
  if (!run) return;
  if (exe->backend) {
    kc__device_run_free(exe, run);
  } else {
    kc_allocator_free(run->alloc, run->arena, exe->arena_bytes, KC_TENSOR_ALIGNMENT);
  }
  kc_allocator_free(run->alloc, run->block, exe->block_bytes, 16);
  kc_allocator_free(run->alloc, run, sizeof *run, 0);
}

void kc__apply_fills(char* block, void** addr, const kc__fill* fills,
                            size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const kc__fill* f = &fills[i];
    void* value = f->buffer >= 0 ? addr[f->buffer] : block + f->block_offset;
    memcpy(block + f->target, &value, sizeof value);
  }
}

/* A new run: the block copied from the template, the arena allocated, and
 * every address that does not change between runs filled in. */
static kc_status* kc__run_create(const kc_executable* exe,
                                 const kc_allocator* alloc, kc__run** out) {
  kc__run* run = kc_allocator_alloc(alloc, sizeof *run, 0);
  if (!run) goto oom;
  memset(run, 0, sizeof *run);
  run->exe = exe;
  run->alloc = alloc;
  run->block = kc_allocator_alloc(alloc, exe->block_bytes, 16);
  if (!run->block) goto oom;
  if (exe->backend) {
    kc_status* st = kc__device_run_init(exe, run);
    if (st) {
      kc__run_destroy(exe, run);
      return kc_status_add_context(st, "making a run of %s on cuda:%d",
                                   KC__QS(exe->program->name), exe->device.device_id);
    }
  } else if (exe->arena_bytes) {
    run->arena = kc_allocator_alloc(alloc, exe->arena_bytes, KC_TENSOR_ALIGNMENT);
    if (!run->arena) goto oom;
  }
  memcpy(run->block, exe->block_template, exe->block_bytes);
  run->addr = (void**)(void*)(run->block + exe->addr_offset);
  for (size_t i = 0; i < exe->num_buffers; ++i) {
    const kc__buffer* b = &exe->buffers[i];
    if (b->kind == KC__BUF_CONST) {
      run->addr[i] = (void*)(uintptr_t)b->data;
    } else if (b->kind == KC__BUF_TEMP || b->kind == KC__BUF_SCRATCH) {
      run->addr[i] = run->arena + b->offset;
    } else if (b->kind == KC__BUF_TABLE) {
      run->addr[i] = run->tables + b->offset;
    }
  }
  kc__apply_fills(run->block, run->addr, exe->static_fills, exe->num_static_fills);
  if (exe->has_xla) {
    kc__xla_run_info* info = (kc__xla_run_info*)(void*)(run->block + exe->xla_run_offset);
    info->alloc = alloc ? alloc : kc_allocator_system();
  }
  *out = run;
  return NULL;
oom:
  kc__run_destroy(exe, run);
  return kc_status_create(KC_RESOURCE_EXHAUSTED,
                          "out of memory allocating a run of %s (%zu bytes of "
                          "temporaries)",
                          KC__QS(exe->program->name), exe->arena_bytes);
}

/* A run made with `alloc` from the pool, or a new one. On CUDA, a run
 * whose work may still be queued on a stream is only taken for that
 * stream, which orders the new work after it. */
kc_status* kc__run_acquire_for(kc_executable* exe, const kc_allocator* alloc, void* stream,
                               kc__run** out) {
  pthread_mutex_lock(&exe->runs_mu);
  for (kc__run** link = &exe->runs; *link; link = &(*link)->next) {
    if ((*link)->alloc == alloc && (!(*link)->pending || (*link)->stream == stream)) {
      *out = *link;
      *link = (*link)->next;
      pthread_mutex_unlock(&exe->runs_mu);
      return NULL;
    }
  }
  pthread_mutex_unlock(&exe->runs_mu);
  return kc__run_create(exe, alloc, out);
}

static kc_status* kc__run_acquire(kc_executable* exe, const kc_allocator* alloc,
                                  kc__run** out) {
  return kc__run_acquire_for(exe, alloc, NULL, out);
}

void kc__run_release(kc_executable* exe, kc__run* run) {
  pthread_mutex_lock(&exe->runs_mu);
  run->next = exe->runs;
  exe->runs = run;
  pthread_mutex_unlock(&exe->runs_mu);
}

void kc_executable_destroy(kc_executable* exe) {
  if (!exe) return;
  while (exe->runs) {
    kc__run* next = exe->runs->next;
    kc__run_destroy(exe, exe->runs);
    exe->runs = next;
  }
  if (exe->backend) kc__device_exe_free(exe);
  for (size_t i = exe->num_states; i-- > 0;) exe->states[i].deleter(exe->states[i].state);
  kc__free(exe->states);
  for (size_t i = 0; i < exe->num_targets; ++i) kc_object_release(exe->targets[i]);
  kc__free(exe->targets);
  pthread_mutex_destroy(&exe->runs_mu);
  kc__free(exe->buffers);
  kc__free(exe->steps);
  kc__free(exe->hot_steps);
  kc__free(exe->live_instr);
  kc__free(exe->pos_of);
  kc__free(exe->leaf_base);
  kc__free(exe->leaf_buf);
  kc__free(exe->input_shapes);
  kc__free(exe->output_shapes);
  kc__free(exe->output_buffers);
  kc__free(exe->block_template);
  kc__free(exe->static_fills);
  kc__free(exe->dynamic_targets);
  kc__free(exe->dynamics);
  kc__free(exe->table_fills);
  kc__free(exe->stream_slots);
  kc__free(exe->input_staging);
  kc__arena_free(&exe->arena);
  kc_program_destroy(exe->program);
  kc__free(exe);
}

/* ---- steps ------------------------------------------------------------------- */

kc_status* kc__step_broadcast(const kc__step* s, kc__run* run) {
  kc__broadcast_copy(run->addr[s->in[0]], s->in_rank, s->in_dims, run->addr[s->out],
                     s->out_rank, s->out_dims, s->map, s->bytes);
  return NULL;
}

kc_status* kc__step_kernel(const kc__step* s, kc__run* run) {
  const kc_executable* exe = run->exe;
  kc__instr_kernel_ctx ctx;
  ctx.program = exe->program;
  ctx.instr = &exe->program->instrs[s->instr];
  ctx.data = s->data;
  ctx.pool = exe->pool;
  void* out;
  memcpy(&out, run->block + s->out_offset, sizeof out);
  return s->def->kernel(&ctx, out, (const void* const*)(const void*)(run->block + s->ins_offset));
}

kc_status* kc__step_copy(const kc__step* s, kc__run* run) {
  void* to = run->addr[s->out];
  const void* from = run->addr[s->in[0]];
  if (to != from && s->bytes) memcpy(to, from, s->bytes);
  return NULL;
}

/* The status for a failed call: INTERNAL, as XLA reports custom-call
 * failures, with the target's message. */
static kc_status* kc__call_failed(kc_xcall_status* xs) {
  kc_status* st = kc_status_create(KC_INTERNAL, "%s",
                                   xs->message ? xs->message : "failed (no message)");
  kc_xcall_status_set_success(xs);
  return st;
}

kc_status* kc__step_legacy_call(const kc__step* s, kc__run* run) {
  void* out = *(void**)(void*)(run->block + s->out_offset);
  const void** ins = (const void**)(void*)(run->block + s->ins_offset);
  void (*fn)(void) = s->fn;
  kc_xcall_status xs = {false, NULL, 0, s->target->user};
  switch (s->api) {
    case KC_XCALL_API_ORIGINAL:
      ((kc_xcall_cpu_fn)fn)(out, ins);
      return NULL;
    case KC_XCALL_API_STATUS_RETURNING:
      ((kc_xcall_cpu_status_fn)fn)(out, ins, &xs);
      break;
    default:
      ((kc_xcall_cpu_unified_fn)fn)(out, ins, s->opaque, s->opaque_size, &xs);
      break;
  }
  if (KC__LIKELY(!xs.failed)) {
    kc__free(xs.message);
    return NULL;
  }
  return kc__call_failed(&xs);
}

kc_status* kc__step_typed_call(const kc__step* s, kc__run* run) {
  kc_xcall_frame* frame = (kc_xcall_frame*)(void*)(run->block + s->frame_offset);
  return s->handler(frame);
}

/* An XLA FFI handler: the frame is ready in the block; only a failure or
 * a future costs more than the call. */
static inline kc_status* kc__xla_call(void (*fn)(void), char* at) {
  XLA_FFI_CallFrame* frame = (XLA_FFI_CallFrame*)(void*)at;
  XLA_FFI_Error* err = ((XLA_FFI_Handler*)fn)(frame);
  if (KC__LIKELY(!err && !frame->future)) return NULL;
  return kc__xla_call_finish(frame, err);
}

kc_status* kc__step_xla_call(const kc__step* s, kc__run* run) {
  return kc__xla_call(s->fn, run->block + s->frame_offset);
}

/* ---- execute ------------------------------------------------------------------ */

/* The status for an input that is not what the program expects. Only
 * built on failure: formatting shapes is not free. */
static kc_status* kc__bad_input(const kc_shape* want, size_t i,
                                const DLTensor* t, const char* why) {
  char w[256], g[256] = "?";
  kc_shape_format(want, w, sizeof w);
  if (why) {
    return kc_status_create(KC_INVALID_ARGUMENT, "input %zu: expected %s, got %s", i, w, why);
  }
  kc_shape* got = NULL;
  kc_status* st = kc_shape_create_array(t->dtype, t->shape, t->ndim, &got);
  if (!st) kc_shape_format(got, g, sizeof g);
  kc_status_destroy(st);
  kc_shape_destroy(got);
  return kc_status_create(KC_INVALID_ARGUMENT, "input %zu: expected %s, got %s", i, w, g);
}

/* Where an input may be: the CPU for a host executable; the
 * executable's device, or host memory that is copied there, for CUDA. */
static const char* kc__input_device_refusal(const kc_executable* exe, DLDevice d) {
  if (!exe->backend) {
    return d.device_type == kDLCPU ? NULL : "a tensor on another device than the CPU";
  }
  if (d.device_type == kDLCPU || d.device_type == kDLCUDAHost) return NULL;
  if (d.device_type != kDLCUDA) return "a tensor on a device that is neither CUDA nor the host";
  if (d.device_id != exe->device.device_id) return "a tensor on another CUDA device";
  return NULL;
}

static kc_status* kc__check_input(const kc_executable* exe, size_t i,
                                  const DLTensor* t) {
  const kc_shape* want = exe->input_shapes[i];
  if (KC__UNLIKELY(!t)) return kc__bad_input(want, i, t, "NULL");
  const char* where = kc__input_device_refusal(exe, t->device);
  if (KC__UNLIKELY(where != NULL)) {
    char why[160];
    snprintf(why, sizeof why, "%s (device type %d, id %d)", where, (int)t->device.device_type,
             (int)t->device.device_id);
    return kc__bad_input(want, i, t, why);
  }
  bool same = kc_dtype_equal(t->dtype, want->dtype) && t->ndim == want->rank &&
              (t->ndim == 0 || (t->shape && !memcmp(t->shape, want->dims,
                                                    (size_t)t->ndim * sizeof(int64_t))));
  if (KC__UNLIKELY(!same)) return kc__bad_input(want, i, t, NULL);
  if (KC__UNLIKELY(t->strides && !kc_dltensor_is_compact(t))) {
    return kc__bad_input(want, i, t, "strides that are not compact row-major");
  }
  if (KC__UNLIKELY(!t->data && want->byte_size)) {
    return kc__bad_input(want, i, t, "NULL data");
  }
  return NULL;
}

static uint64_t kc__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

kc_status* kc__run_steps(const kc_executable* exe, kc__run* run, uint64_t* times) {
  kc_status* st = NULL;
  size_t i = 0;
  if (!times) {
    /* Custom calls, the common case, are dispatched here from the hot
     * steps rather than through the step's function pointer: one
     * indirect call per call, and 16 bytes read besides the frame. */
    const kc__hot_step* hot = exe->hot_steps;
    char* block = run->block;
    for (; i < exe->num_steps; ++i) {
      const kc__hot_step* h = &hot[i];
      char* at = block + h->offset;
      if (h->kind == KC__HOT_TYPED) {
        st = ((kc_xcall_handler_fn)h->fn)((kc_xcall_frame*)(void*)at);
      } else if (h->kind == KC__HOT_XLA) {
        st = kc__xla_call(h->fn, at);
      } else if (h->kind == KC__HOT_LEGACY) {
        ((kc_xcall_cpu_fn)h->fn)(*(void**)(void*)at, (const void**)(void*)(at + sizeof(void*)));
      } else {
        st = exe->steps[h->offset].run(&exe->steps[h->offset], run);
      }
      if (KC__UNLIKELY(st != NULL)) break;
    }
  } else {
    memset(times, 0, exe->num_live * sizeof *times);
    for (; i < exe->num_steps; ++i) {
      uint64_t t0 = kc__now_ns();
      st = exe->steps[i].run(&exe->steps[i], run);
      /* On a device, a step's time is its work's: wait for it. */
      if (!st && exe->backend) {
        st = exe->backend->stream_synchronize(exe->device.device_id, run->stream);
      }
      int32_t instr = exe->steps[i].instr;
      if (instr >= 0) times[exe->pos_of[instr]] += kc__now_ns() - t0;
      if (st) break;
    }
  }
  if (!st) return NULL;
  const kc__step* s = &exe->steps[i];
  if (s->instr < 0) return kc_status_add_context(st, "copying the outputs");
  const kc__instr* in = &exe->program->instrs[s->instr];
  if (s->kind == KC__STEP_LEGACY_CALL || s->kind == KC__STEP_TYPED_CALL ||
      s->kind == KC__STEP_XLA_CALL || s->kind == KC__STEP_GPU_CALL) {
    return kc_status_add_context(st, "in custom call %s (instruction %s)",
                                 KC__QS(in->target), KC__QS(in->name));
  }
  return kc_status_add_context(st, "in instruction %s", KC__QS(in->name));
}

/* The run's input and output addresses. A run's block keeps what its last
 * execution wrote, so the places that hold an address are written only when
 * it changed: a program called on the same buffers writes nothing. On CUDA,
 * a host input's address is its device staging copy. */
void kc__set_dynamic(const kc_executable* exe, kc__run* run, const DLTensor* const* inputs,
                     void* const* out_data) {
  for (size_t i = 0; i < exe->num_dynamics; ++i) {
    const kc__dynamic* d = &exe->dynamics[i];
    void* a;
    if (d->kind == KC__BUF_INPUT) {
      const DLTensor* t = inputs[d->index];
      a = exe->backend && t->device.device_type != kDLCUDA
              ? run->dev_inputs + exe->input_staging[d->index]
              : (char*)t->data + t->byte_offset;
    } else {
      a = out_data[d->index];
    }
    if (a == run->addr[d->buffer] && run->primed) continue;
    run->addr[d->buffer] = a;
    const size_t* targets = exe->dynamic_targets + d->first;
    for (uint32_t k = 0; k < d->count; ++k) memcpy(run->block + targets[k], &a, sizeof a);
  }
  run->primed = true;
}

/* The checks every execution makes: counts, inputs. */
static kc_status* kc__check_call(const kc_executable* exe, const char* fn,
                                 const DLTensor* const* inputs, size_t num_inputs) {
  if (!exe || (!inputs && num_inputs)) {
    return kc_status_create(KC_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                            !exe ? "executable" : "inputs");
  }
  if (num_inputs != exe->num_inputs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "running %s: expected %zu inputs, got %zu",
                            KC__QS(exe->program->name), exe->num_inputs, num_inputs);
  }
  for (size_t i = 0; i < num_inputs; ++i) {
    KC_RETURN_IF_ERROR(kc__check_input(exe, i, inputs[i]), "running %s",
                       KC__QS(exe->program->name));
  }
  return NULL;
}

/* Runs `run` of `exe` on the host with outputs at `out_data`. */
static kc_status* kc__host_run(const kc_executable* exe, kc__run* run,
                               const DLTensor* const* inputs, void* const* out_data,
                               uint64_t* times) {
  kc__set_dynamic(exe, run, inputs, out_data);
  if (exe->has_xla) {
    /* A new run id, made when a handler first asks for it. */
    kc__xla_run_info* info = (kc__xla_run_info*)(void*)(run->block + exe->xla_run_offset);
    atomic_store_explicit(&info->run_id, 0, memory_order_relaxed);
  }
  return kc__run_steps(exe, run, times);
}

/* Runs on the host with outputs at `out_data`. */
static kc_status* kc__host_execute(kc_executable* exe, const DLTensor* const* inputs,
                                   void* const* out_data, uint64_t* times,
                                   const kc_allocator* alloc) {
  kc__run* run = NULL;
  KC_RETURN_IF_ERROR(kc__run_acquire(exe, alloc, &run));
  kc_status* st = kc__host_run(exe, run, inputs, out_data, times);
  kc__run_release(exe, run);
  return st;
}

/* Runs `exe` writing its outputs at out_data[0..num_outputs). */
static kc_status* kc__execute(kc_executable* exe, const DLTensor* const* inputs,
                              const kc_execute_options* options, void* const* out_data) {
  const kc_allocator* alloc = NULL;
  uint64_t* times = NULL;
  void* stream = NULL;
  if (options) {
    if (KC_STRUCT_HAS(options, kc_execute_options, allocator)) alloc = options->allocator;
    if (KC_STRUCT_HAS(options, kc_execute_options, instruction_ns)) {
      times = options->instruction_ns;
    }
    if (KC_STRUCT_HAS(options, kc_execute_options, stream)) stream = options->stream;
  }
  if (!alloc) alloc = kc_allocator_system();
  kc_status* st = exe->backend ? kc__device_execute(exe, inputs, out_data, stream, times, alloc)
                               : kc__host_execute(exe, inputs, out_data, times, alloc);
  if (st) return kc_status_add_context(st, "running %s", KC__QS(exe->program->name));
  return NULL;
}

kc_status* kc__executable_run_called(const kc_executable* executable,
                                     const DLTensor* const* inputs, void* const* out_data) {
  return kc__execute((kc_executable*)(uintptr_t)executable, inputs, NULL, out_data);
}

kc_status* kc__executable_hold(const kc_executable* executable, kc__run** out_run) {
  *out_run = NULL;
  kc_executable* exe = (kc_executable*)(uintptr_t)executable;
  if (exe->backend) return NULL;
  return kc__run_acquire(exe, kc_allocator_system(), out_run);
}

kc_status* kc__executable_run_held(const kc_executable* executable, kc__run* run,
                                   const DLTensor* const* inputs, void* const* out_data,
                                   bool same_addresses) {
  kc_executable* exe = (kc_executable*)(uintptr_t)executable;
  if (!run) return kc__execute(exe, inputs, NULL, out_data);
  kc_status* st = same_addresses && !exe->has_xla ? kc__run_steps(exe, run, NULL)
                                                  : kc__host_run(exe, run, inputs, out_data, NULL);
  if (st) return kc_status_add_context(st, "running %s", KC__QS(exe->program->name));
  return NULL;
}

void kc__executable_unhold(const kc_executable* executable, kc__run* run) {
  if (run) kc__run_release((kc_executable*)(uintptr_t)executable, run);
}

size_t kc__executable_run_bytes(const kc_executable* executable) {
  return executable->arena_bytes + executable->block_bytes;
}

/* Output addresses: on the stack for a few, else on the heap. */
#define KC__FEW_OUTPUTS 16

kc_status* kc_executable_execute(const kc_executable* executable,
                                 const DLTensor* const* inputs,
                                 size_t num_inputs,
                                 const kc_execute_options* options,
                                 kc_tensor** out_outputs) {
  kc_executable* exe = (kc_executable*)(uintptr_t)executable;
  if (exe && !out_outputs && exe->num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_executable_execute: out_outputs is NULL");
  }
  KC_RETURN_IF_ERROR(kc__check_call(exe, "kc_executable_execute", inputs, num_inputs));
  const kc_allocator* alloc = NULL;
  if (options && KC_STRUCT_HAS(options, kc_execute_options, allocator)) {
    alloc = options->allocator;
  }
  if (!alloc) alloc = kc_allocator_system();
  void* few[KC__FEW_OUTPUTS];
  void** data = exe->num_outputs <= KC__FEW_OUTPUTS
                    ? few
                    : kc__malloc(exe->num_outputs * sizeof *data);
  if (!data) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "running %s: out of memory",
                            KC__QS(exe->program->name));
  }
  DLDevice device = exe->backend ? exe->device : kc_device_cpu();
  kc_status* st = NULL;
  size_t made = 0;
  for (; made < exe->num_outputs && !st; ++made) {
    const kc_shape* s = exe->output_shapes[made];
    st = kc_tensor_create(alloc, s->dims, s->rank, s->dtype, device, &out_outputs[made]);
    if (!st) data[made] = kc_tensor_get_dltensor(out_outputs[made])->data;
  }
  if (st) {
    made--;
    st = kc_status_add_context(st, "running %s: output %zu", KC__QS(exe->program->name), made);
  }
  if (!st) st = kc__execute(exe, inputs, options, data);
  if (data != few) kc__free(data);
  if (st) {
    for (size_t i = 0; i < made; ++i) {
      kc_object_release(KC_OBJECT(out_outputs[i]));
      out_outputs[i] = NULL;
    }
    return st;
  }
  return NULL;
}

/* The status for an output that is not what the program makes. */
static kc_status* kc__bad_output(const kc_executable* exe, size_t i, const char* why) {
  char w[256];
  kc_shape_format(exe->output_shapes[i], w, sizeof w);
  return kc_status_create(KC_INVALID_ARGUMENT, "running %s: output %zu: expected %s%s, got %s",
                          KC__QS(exe->program->name), i, w,
                          exe->backend ? " on the executable's CUDA device" : " on the CPU", why);
}

static kc_status* kc__check_output(const kc_executable* exe, size_t i, const DLTensor* t) {
  const kc_shape* want = exe->output_shapes[i];
  if (!t) return kc__bad_output(exe, i, "NULL");
  DLDevice d = t->device;
  bool here = exe->backend ? d.device_type == kDLCUDA && d.device_id == exe->device.device_id
                           : d.device_type == kDLCPU;
  if (!here) {
    char why[96];
    snprintf(why, sizeof why, "a tensor on device type %d, id %d", (int)d.device_type,
             (int)d.device_id);
    return kc__bad_output(exe, i, why);
  }
  bool same = kc_dtype_equal(t->dtype, want->dtype) && t->ndim == want->rank &&
              (t->ndim == 0 || (t->shape && !memcmp(t->shape, want->dims,
                                                    (size_t)t->ndim * sizeof(int64_t))));
  if (!same) {
    char g[256] = "?";
    kc_shape* got = NULL;
    kc_status* st = kc_shape_create_array(t->dtype, t->shape, t->ndim, &got);
    if (!st) kc_shape_format(got, g, sizeof g);
    kc_status_destroy(st);
    kc_shape_destroy(got);
    return kc__bad_output(exe, i, g);
  }
  if (t->strides && !kc_dltensor_is_compact(t)) {
    return kc__bad_output(exe, i, "strides that are not compact row-major");
  }
  if (!t->data && want->byte_size) return kc__bad_output(exe, i, "NULL data");
  return NULL;
}

/* Whether the bytes of two tensors of `a_size` and `b_size` bytes meet
 * (only tensors in one address space can). */
static bool kc__meet(const DLTensor* a, size_t a_size, const DLTensor* b, size_t b_size) {
  if (!a_size || !b_size || a->device.device_type != b->device.device_type ||
      a->device.device_id != b->device.device_id) {
    return false;
  }
  uintptr_t pa = (uintptr_t)a->data + a->byte_offset;
  uintptr_t pb = (uintptr_t)b->data + b->byte_offset;
  return pa < pb + b_size && pb < pa + a_size;
}

/* Output `i` shares no byte with an input or another output: the plan
 * reads inputs and writes outputs in any order, so an overlap would give
 * a wrong result rather than an error. */
static kc_status* kc__check_overlap(const kc_executable* exe, const DLTensor* const* inputs,
                                    const DLTensor* const* outputs, size_t i) {
  size_t size = exe->output_shapes[i]->byte_size;
  for (size_t j = 0; j < exe->num_inputs; ++j) {
    if (kc__meet(outputs[i], size, inputs[j], exe->input_shapes[j]->byte_size)) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "running %s: output %zu overlaps input %zu (outputs must "
                              "not share memory with inputs or each other)",
                              KC__QS(exe->program->name), i, j);
    }
  }
  for (size_t j = 0; j < i; ++j) {
    if (kc__meet(outputs[i], size, outputs[j], exe->output_shapes[j]->byte_size)) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "running %s: output %zu overlaps output %zu (outputs must "
                              "not share memory with inputs or each other)",
                              KC__QS(exe->program->name), i, j);
    }
  }
  return NULL;
}

kc_status* kc_executable_execute_into(const kc_executable* executable,
                                      const DLTensor* const* inputs, size_t num_inputs,
                                      const kc_execute_options* options,
                                      const DLTensor* const* outputs, size_t num_outputs) {
  kc_executable* exe = (kc_executable*)(uintptr_t)executable;
  KC_RETURN_IF_ERROR(kc__check_call(exe, "kc_executable_execute_into", inputs, num_inputs));
  if (!outputs && num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_executable_execute_into: outputs is NULL");
  }
  if (num_outputs != exe->num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT, "running %s: expected %zu outputs, got %zu",
                            KC__QS(exe->program->name), exe->num_outputs, num_outputs);
  }
  for (size_t i = 0; i < num_outputs; ++i) KC_RETURN_IF_ERROR(kc__check_output(exe, i, outputs[i]));
  for (size_t i = 0; i < num_outputs; ++i) KC_RETURN_IF_ERROR(kc__check_overlap(exe, inputs, outputs, i));
  void* few[KC__FEW_OUTPUTS];
  void** data = num_outputs <= KC__FEW_OUTPUTS ? few : kc__malloc(num_outputs * sizeof *data);
  if (!data) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "running %s: out of memory",
                            KC__QS(exe->program->name));
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    data[i] = (char*)outputs[i]->data + outputs[i]->byte_offset;
  }
  kc_status* st = kc__execute(exe, inputs, options, data);
  if (data != few) kc__free(data);
  return st;
}

/* ---- the printed plan ----------------------------------------------------------- */


static const char* kc__buffer_kind(int32_t kind) {
  switch (kind) {
    case KC__BUF_INPUT: return "input";
    case KC__BUF_CONST: return "constant";
    case KC__BUF_TEMP: return "temp";
    case KC__BUF_OUTPUT: return "output";
    case KC__BUF_SCRATCH: return "scratch";
    case KC__BUF_TABLE: return "table";
    default: return "?";
  }
}

static void kc__put_buffer(const kc_executable* exe, int32_t id, char* buf,
                           size_t cap, size_t* len) {
  if (id < 0) {
    kc__appendf(buf, cap, len, "fused");
    return;
  }
  const kc__buffer* b = &exe->buffers[id];
  kc__appendf(buf, cap, len, "b%d %s", id, kc__buffer_kind(b->kind));
  if (b->kind == KC__BUF_TEMP || b->kind == KC__BUF_SCRATCH || b->kind == KC__BUF_TABLE) {
    kc__appendf(buf, cap, len, " @%zu", b->offset);
  } else if (b->kind == KC__BUF_INPUT || b->kind == KC__BUF_OUTPUT) {
    kc__appendf(buf, cap, len, " #%d", b->index);
  }
  kc__appendf(buf, cap, len, " %zuB", b->size);
  if (b->def >= 0) kc__appendf(buf, cap, len, " live [%d,%d]", b->def, b->last);
}

size_t kc_executable_format_plan(const kc_executable* exe, char* buf, size_t cap) {
  size_t len = 0;
  if (cap) buf[0] = '\0';
  if (!exe) return 0;
  kc_executable_info info;
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  kc__appendf(buf, cap, &len,
          "plan of '%s': %zu of %zu instructions live, %zu temporaries in a "
          "%zu-byte arena (%zu unshared), %zu output bytes, peak %zu bytes\n",
          exe->program->name, info.num_live_instructions, info.num_instructions,
          info.num_buffers, info.temp_bytes, info.temp_bytes_unshared,
          info.output_bytes, info.peak_bytes);
  for (size_t k = 0; k < exe->num_live; ++k) {
    int32_t id = exe->live_instr[k];
    const kc__instr* in = &exe->program->instrs[id];
    char shape[128];
    kc_shape_format(in->shape, shape, sizeof shape);
    kc__appendf(buf, cap, &len, "  %4zu %-24s %-18s %s:", k, in->name, kc__instr_name(in->op),
                shape);
    size_t leaves = in->shape->leaf_count;
    for (size_t i = 0; i < leaves && i < 8; ++i) {
      kc__appendf(buf, cap, &len, i ? ", " : " ");
      kc__put_buffer(exe, exe->leaf_buf[exe->leaf_base[id] + i], buf, cap, &len);
    }
    if (leaves > 8) kc__appendf(buf, cap, &len, ", ... (%zu leaves)", leaves);
    kc__appendf(buf, cap, &len, "\n");
  }
  for (size_t i = 0; i < exe->num_outputs; ++i) {
    kc__appendf(buf, cap, &len, "  output %zu: ", i);
    kc__put_buffer(exe, exe->output_buffers[i], buf, cap, &len);
    kc__appendf(buf, cap, &len, "\n");
  }
  return len;
}
