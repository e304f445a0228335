/*
 * Compiling a program: verify every instruction once, drop dead ones, give
 * every array value a buffer, plan temporaries by liveness into one arena,
 * and lay out the per-run block (pointer tables for tuples, typed frames).
 *
 * This file drives the compile and finishes the executable; verify.c,
 * plan_buffers.c, lower_call.c and compile_cuda.c hold the phases.
 */
#include <stdlib.h>

#include "internal/grow.h"
#include "kcall/runtime.h"
#include "program/compiler/compile_internal.h"
#include "runtime/device_internal.h"

/* ---- the compiler's outputs -------------------------------------------------- */

int32_t kc__new_buffer(kc__compiler* c, int32_t kind, size_t size, int32_t def,
                       const kc_shape* shape) {
  if (!KC__GROW(c->bufs, c->cap_bufs, c->num_bufs + 1)) {
    return -1;
  }
  c->bufs[c->num_bufs] = (kc__buffer){
      .kind = kind, .index = -1, .size = size, .def = def, .last = def, .shape = shape};
  return (int32_t)c->num_bufs++;
}

kc__step* kc__new_step(kc__compiler* c, int32_t kind, kc__step_fn fn, int32_t instr) {
  if (!KC__GROW(c->steps, c->cap_steps, c->num_steps + 1)) {
    return NULL;
  }
  kc__step* s = &c->steps[c->num_steps++];
  *s = (kc__step){.kind = kind, .run = fn, .instr = instr, .in = {-1, -1, -1}, .out = -1};
  return s;
}

kc__step* kc__new_legacy_step(kc__compiler* c, int32_t kind, kc__step_fn fn, int32_t instr,
                              const kc__xcall_target* t) {
  kc__step* s = kc__new_step(c, kind, fn, instr);
  if (!s) return NULL;
  const kc__instr* in = &c->p->instrs[instr];
  s->target = t;
  s->fn = t->fn;
  s->api = (int32_t)t->api;
  s->opaque = in->opaque;
  s->opaque_size = in->opaque_size;
  return s;
}

size_t kc__block_reserve(kc__compiler* c, size_t size) {
  size_t off = (c->block_size + 15) & ~(size_t)15;
  if (!KC__GROW(c->block, c->block_cap, off + size + 1)) return SIZE_MAX;
  c->block_size = off + size;
  return off;
}

bool kc__add_fill(kc__compiler* c, size_t target, int32_t buffer, size_t block_offset) {
  if (!KC__GROW(c->fills, c->cap_fills, c->num_fills + 1)) {
    return false;
  }
  c->fills[c->num_fills++] =
      (kc__fill){.target = target, .buffer = buffer, .block_offset = block_offset};
  return true;
}

kc_status* kc__executable_own_state(kc_executable* exe, void* state,
                                    void (*deleter)(void*)) {
  if (!KC__GROW(exe->states, exe->cap_states, exe->num_states + 1)) {
    deleter(state);
    return kc__oom();
  }
  exe->states[exe->num_states++] = (struct kc__state){.state = state, .deleter = deleter};
  return NULL;
}

/* ---- the whole compile ------------------------------------------------------- */

/* A parameter: an INPUT buffer per leaf, numbered across all parameters'
 * leaves. */
static kc_status* kc__plan_parameter(kc__compiler* c, int32_t id) {
  const kc_program* p = c->p;
  const kc__instr* in = &p->instrs[id];
  int32_t* leaves = &c->leaf_buf[c->leaf_base[id]];
  size_t first = 0;
  for (int64_t k = 0; k < in->number; ++k) {
    first += p->instrs[p->params[k]].shape->leaf_count;
  }
  size_t n = 0;
  const kc_shape** shapes = kc__malloc(in->shape->leaf_count * sizeof *shapes + 1);
  if (!shapes) return kc__oom();
  kc__shape_leaves(in->shape, shapes, &n);
  for (size_t i = 0; i < n; ++i) {
    int32_t b = kc__new_buffer(c, KC__BUF_INPUT, shapes[i]->byte_size, -1, shapes[i]);
    if (b < 0) {
      kc__free(shapes);
      return kc__oom();
    }
    c->bufs[b].index = (int32_t)(first + i);
    leaves[i] = b;
  }
  kc__free(shapes);
  return NULL;
}

/* A broadcast on the host: one step. */
static kc_status* kc__plan_broadcast(kc__compiler* c, int32_t id, int32_t pos) {
  const kc_program* p = c->p;
  const kc__instr* in = &p->instrs[id];
  int32_t* leaves = &c->leaf_buf[c->leaf_base[id]];
  KC_RETURN_IF_ERROR(kc__temp_leaves(c, id, pos));
  kc__step* s = kc__new_step(c, KC__STEP_BROADCAST, kc__step_broadcast, id);
  if (!s) return kc__oom();
  const kc_shape* o = p->instrs[in->operands[0]].shape;
  s->in[0] = kc__leaves_of(c, in->operands[0])[0];
  s->out = leaves[0];
  s->in_rank = o->rank;
  s->in_dims = o->dims;
  s->out_rank = in->shape->rank;
  s->out_dims = in->shape->dims;
  s->map = in->dims;
  s->bytes = kc_dtype_get_size(o->dtype);
  return NULL;
}

/* A custom call: its target checked and held, its result's buffers and
 * alias copies, then the step of its calling convention. */
static kc_status* kc__plan_custom_call(kc__compiler* c, int32_t id, int32_t pos) {
  const kc__instr* in = &c->p->instrs[id];
  /* A built-in target, unless one is registered under its name. */
  const kc__instr_def* builtin =
      c->exe->platform == KC_PLATFORM_HOST ? kc__builtin_call_find(kc_sv(in->target)) : NULL;
  if (builtin) {
    kc__xcall_target* registered = kc__xcall_get(kc_sv(in->target), c->exe->platform);
    if (!registered) return kc__plan_builtin_call(c, id, pos, builtin);
    kc_object_release(KC_OBJECT(registered));
  }
  const kc__xcall_target* t = NULL;
  KC_RETURN_IF_ERROR(kc__verify_custom_call(c->p, in, c->exe, &t));
  KC_RETURN_IF_ERROR(kc__temp_leaves(c, id, pos));
  KC_RETURN_IF_ERROR(kc__plan_aliases(c, id, pos));
  if (t->xla.execute) return kc__plan_xla_call(c, id, t);
  if (t->api == KC_XCALL_API_TYPED) return kc__plan_typed_call(c, id, pos, t);
  if (c->exe->backend) return kc__plan_gpu_call(c, id, t);
  return kc__plan_legacy_call(c, id, t);
}

/* An element-wise op on the host: one step. */
/* Assigns buffers to instruction `id` at plan position `pos` and emits its
 * step, if it computes anything. */
static kc_status* kc__plan_instr(kc__compiler* c, int32_t id, int32_t pos) {
  const kc_program* p = c->p;
  const kc__instr* in = &p->instrs[id];
  int32_t* leaves = &c->leaf_buf[c->leaf_base[id]];
  switch (in->def->kind) {
    case KC__INSTR_PARAMETER:
      return kc__plan_parameter(c, id);
    case KC__INSTR_CONSTANT: {
      int32_t b = kc__new_buffer(c, KC__BUF_CONST, in->literal_size, -1, in->shape);
      if (b < 0) return kc__oom();
      c->bufs[b].data = in->literal;
      leaves[0] = b;
      return NULL;
    }
    case KC__INSTR_TUPLE: {
      size_t n = 0;
      for (size_t i = 0; i < in->num_operands; ++i) {
        int32_t o = in->operands[i];
        size_t k = p->instrs[o].shape->leaf_count;
        memcpy(leaves + n, kc__leaves_of(c, o), k * sizeof *leaves);
        n += k;
      }
      return NULL;
    }
    case KC__INSTR_GET_TUPLE_ELEMENT: {
      size_t offset = 0;
      const kc_shape* t = p->instrs[in->operands[0]].shape;
      kc__subshape(t, &in->number, 1, &offset);
      memcpy(leaves, kc__leaves_of(c, in->operands[0]) + offset,
             in->shape->leaf_count * sizeof *leaves);
      return NULL;
    }
    case KC__INSTR_RESHAPE:
      /* Row-major bytes do not move: the result is the operand's buffer. */
      leaves[0] = kc__leaves_of(c, in->operands[0])[0];
      return NULL;
    case KC__INSTR_BROADCAST:
      return kc__plan_broadcast(c, id, pos);
    case KC__INSTR_CUSTOM_CALL:
      return kc__plan_custom_call(c, id, pos);
    case KC__INSTR_KERNEL:
    case KC__INSTR_ELEMENTWISE:
      /* On a device, its backend's kernel (kc__verify_device said which). */
      if (c->exe->backend) return kc__plan_device_instr(c, id, pos);
      return kc__plan_kernel(c, id, pos, in->def);
    case KC__INSTR_CALL:
    case KC__INSTR_COPY:
    case KC__INSTR_BITCAST:
    case KC__INSTR_EXPANDED:
      break; /* the parser's alone: never in a program */
  }
  return kc__instr_error(in, KC_INTERNAL, "%s: not an instruction of a program",
                         in->def->name);
}

/* The plan: liveness, verification of what is live, then buffers and
 * steps in program order, outputs and the arena. */
static kc_status* kc__compile(kc__compiler* c) {
  const kc_program* p = c->p;
  kc_executable* exe = c->exe;
  bool* live = kc__calloc(p->count, sizeof *live);
  c->pos_of = kc__malloc(p->count * sizeof *c->pos_of);
  c->leaf_base = kc__malloc(p->count * sizeof *c->leaf_base);
  exe->live_instr = kc__malloc(p->count * sizeof *exe->live_instr);
  if (!live || !c->pos_of || !c->leaf_base || !exe->live_instr) {
    kc__free(live);
    return kc__oom();
  }
  /* Live instructions get plan positions and are verified. */
  kc_status* st = kc__mark_live(c, live);
  for (size_t i = 0; !st && i < p->count; ++i) {
    c->pos_of[i] = -1;
    c->leaf_base[i] = c->num_leaves;
    if (!live[i]) continue;
    st = kc__verify_instr(p, &p->instrs[i]);
    if (!st && exe->backend) st = kc__verify_device(c, &p->instrs[i]);
    c->pos_of[i] = (int32_t)exe->num_live;
    exe->live_instr[exe->num_live++] = (int32_t)i;
    c->num_leaves += p->instrs[i].shape->leaf_count;
  }
  kc__free(live);
  if (st) return st;
  c->leaf_buf = kc__malloc((c->num_leaves + 1) * sizeof *c->leaf_buf);
  if (!c->leaf_buf) return kc__oom();
  /* Buffers and steps, instruction by instruction. */
  KC_RETURN_IF_ERROR(kc__plan_inputs(c));
  /* Element-wise chains fused into one step each, on the host. */
  if (!exe->backend && kc__fusion_enabled()) KC_RETURN_IF_ERROR(kc__fusion_find(c));
  for (size_t k = 0; k < exe->num_live; ++k) {
    int32_t id = exe->live_instr[k];
    int32_t group = c->group_of ? c->group_of[id] : -1;
    if (group == id) {
      KC_RETURN_IF_ERROR(kc__plan_fusion(c, id, (int32_t)k));
      continue;
    }
    if (group >= 0) {
      c->leaf_buf[c->leaf_base[id]] = -1; /* computed within its group's step */
      continue;
    }
    KC_RETURN_IF_ERROR(kc__plan_instr(c, id, (int32_t)k));
    kc__note_uses(c, id, (int32_t)k);
  }
  /* The root lives to the end; then aliases, outputs and the arena. */
  int32_t end = (int32_t)exe->num_live;
  const int32_t* root_leaves = kc__leaves_of(c, p->root);
  for (size_t i = 0; i < p->instrs[p->root].shape->leaf_count; ++i) {
    if (c->bufs[root_leaves[i]].last < end) c->bufs[root_leaves[i]].last = end;
  }
  kc__merge_aliases(c);
  KC_RETURN_IF_ERROR(kc__plan_outputs(c, end));
  return kc__plan_arena(c);
}

static bool kc__is_dynamic(const kc_executable* exe, int32_t buffer) {
  int32_t kind = buffer >= 0 ? exe->buffers[buffer].kind : 0;
  return kind == KC__BUF_INPUT || kind == KC__BUF_OUTPUT;
}

static int kc__fill_order(const void* a, const void* b) {
  const kc__fill* x = a;
  const kc__fill* y = b;
  if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
  return x->target < y->target ? -1 : x->target > y->target;
}

/* Lists the input and output buffers with the block offsets that hold
 * their address (the `n` dynamic fills, sorted here by buffer, then by
 * offset so that a group is written front to back): a run visits only
 * them, and rewrites only what moved. */
static kc_status* kc__group_dynamic_fills(kc_executable* exe, kc__fill* fills, size_t n) {
  if (n > 1) qsort(fills, n, sizeof *fills, kc__fill_order); /* fills: NULL when n is 0 */
  size_t num = 0;
  for (size_t i = 0; i < exe->num_buffers; ++i) num += kc__is_dynamic(exe, (int32_t)i);
  exe->dynamics = kc__calloc(num + 1, sizeof *exe->dynamics);
  exe->dynamic_targets = kc__malloc((n + 1) * sizeof *exe->dynamic_targets);
  if (!exe->dynamics || !exe->dynamic_targets) return kc__oom();
  for (size_t f = 0; f < n; ++f) exe->dynamic_targets[f] = fills[f].target;
  size_t f = 0;
  for (size_t i = 0; i < exe->num_buffers; ++i) {
    if (!kc__is_dynamic(exe, (int32_t)i)) continue;
    kc__dynamic* d = &exe->dynamics[exe->num_dynamics++];
    d->buffer = (int32_t)i;
    d->kind = exe->buffers[i].kind;
    d->index = exe->buffers[i].index;
    d->first = f;
    while (f < n && fills[f].buffer == (int32_t)i) ++f;
    if (f - d->first > UINT32_MAX) return kc__oom();
    d->count = (uint32_t)(f - d->first);
  }
  return NULL;
}

/* The run loop's view of the steps (kc__hot_step). */
static kc_status* kc__make_hot_steps(kc_executable* exe) {
  exe->hot_steps = kc__calloc(exe->num_steps + 1, sizeof *exe->hot_steps);
  if (!exe->hot_steps || exe->num_steps > UINT32_MAX) return kc__oom();
  for (size_t i = 0; i < exe->num_steps; ++i) {
    const kc__step* s = &exe->steps[i];
    kc__hot_step* h = &exe->hot_steps[i];
    h->kind = KC__HOT_STEP;
    h->offset = (uint32_t)i;
    size_t off = 0;
    if (s->kind == KC__STEP_TYPED_CALL) {
      h->kind = KC__HOT_TYPED;
      h->fn = (void (*)(void))s->handler;
      off = s->frame_offset;
    } else if (s->kind == KC__STEP_XLA_CALL) {
      h->kind = KC__HOT_XLA;
      h->fn = s->fn;
      off = s->frame_offset;
    } else if (s->kind == KC__STEP_LEGACY_CALL && s->api == KC_XCALL_API_ORIGINAL &&
               s->ins_offset == s->out_offset + sizeof(void*)) {
      h->kind = KC__HOT_LEGACY;
      h->fn = s->fn;
      off = s->out_offset;
    }
    /* A block past 4 GiB: those steps go the long way. */
    if (off > UINT32_MAX) {
      h->kind = KC__HOT_STEP;
      h->fn = NULL;
    } else if (h->kind != KC__HOT_STEP) {
      h->offset = (uint32_t)off;
    }
  }
  return NULL;
}

/* Moves the compiler's results into the executable: buffers, steps, the
 * block template with the address table at its end, and the fills split
 * into those fixed per run (static) and those that change (dynamic). */
static kc_status* kc__finish_executable(kc__compiler* c) {
  kc_executable* exe = c->exe;
  size_t addr = kc__block_reserve(c, (c->num_bufs + 1) * sizeof(void*));
  if (addr == SIZE_MAX) return kc__oom();
  exe->addr_offset = addr;
  exe->block_bytes = c->block_size;
  exe->block_template = c->block;
  c->block = NULL;
  exe->buffers = c->bufs;
  exe->num_buffers = c->num_bufs;
  c->bufs = NULL;
  exe->steps = c->steps;
  exe->num_steps = c->num_steps;
  c->steps = NULL;
  KC_RETURN_IF_ERROR(kc__make_hot_steps(exe));
  exe->static_fills = kc__malloc((c->num_fills + 1) * sizeof *exe->static_fills);
  if (!exe->static_fills) return kc__oom();
  /* The dynamic fills move to the front of the compiler's array. */
  size_t num_dynamic = 0;
  for (size_t i = 0; i < c->num_fills; ++i) {
    const kc__fill* f = &c->fills[i];
    if (kc__is_dynamic(exe, f->buffer)) {
      c->fills[num_dynamic++] = *f;
    } else {
      exe->static_fills[exe->num_static_fills++] = *f;
    }
  }
  KC_RETURN_IF_ERROR(kc__group_dynamic_fills(exe, c->fills, num_dynamic));
  if (exe->backend) return kc__finish_device(c);
  return NULL;
}

kc_status* kc_program_compile(const kc_program* program,
                              const kc_compile_options* options,
                              kc_executable** out_executable) {
  if (!program || !out_executable) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_program_compile: %s is NULL",
                            program ? "out_executable" : "program");
  }
  *out_executable = NULL;
  kc_platform platform = KC_PLATFORM_HOST;
  kc_thread_pool* pool = NULL;
  int32_t device_id = 0;
  uint32_t flags = 0;
  /* The options, as far as the caller's struct has them. */
  if (options) {
    if (KC_STRUCT_HAS(options, kc_compile_options, platform) && options->platform) {
      platform = options->platform;
    }
    if (KC_STRUCT_HAS(options, kc_compile_options, thread_pool)) pool = options->thread_pool;
    if (KC_STRUCT_HAS(options, kc_compile_options, device_id)) device_id = options->device_id;
    if (KC_STRUCT_HAS(options, kc_compile_options, flags)) flags = options->flags;
  }
  if (flags & ~(uint32_t)KC_COMPILE_NO_CUDA_GRAPH) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "compiling %s: unknown compile flags 0x%x (expected "
                            "KC_COMPILE_NO_CUDA_GRAPH or none)",
                            KC__QS(program->name), flags & ~(uint32_t)KC_COMPILE_NO_CUDA_GRAPH);
  }
  /* The platform's backend and device. */
  const kc__backend* backend = NULL;
  DLDevice device = kc_device_cpu();
  if (platform == KC_PLATFORM_CUDA) {
    device.device_type = kDLCUDA;
    device.device_id = device_id;
    KC_RETURN_IF_ERROR(kc__device_backend(device, &backend), "compiling %s for CUDA device %d",
                       KC__QS(program->name), device_id);
  } else if (platform != KC_PLATFORM_HOST) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "compiling %s: unknown platform %d (expected "
                            "KC_PLATFORM_HOST or KC_PLATFORM_CUDA)",
                            KC__QS(program->name), (int)platform);
  }
  /* The executable, then the compile into it. */
  kc_executable* exe = kc__calloc(1, sizeof *exe);
  if (!exe) return kc__oom();
  pthread_mutex_init(&exe->runs_mu, NULL);
  exe->program = (kc_program*)(uintptr_t)program;
  kc__program_retain(exe->program);
  exe->platform = platform;
  exe->pool = pool;
  exe->backend = backend;
  exe->device = device;
  exe->flags = flags;
  exe->graph_capable = backend && !(flags & KC_COMPILE_NO_CUDA_GRAPH);
  kc__compiler c;
  memset(&c, 0, sizeof c);
  c.p = program;
  c.exe = exe;
  kc_status* st = kc__compile(&c);
  if (!st) st = kc__finish_executable(&c);
  exe->pos_of = c.pos_of;
  exe->leaf_base = c.leaf_base;
  exe->leaf_buf = c.leaf_buf;
  kc__free(c.bufs);
  kc__free(c.steps);
  kc__free(c.block);
  kc__free(c.fills);
  kc__free(c.table_fills);
  kc__free(c.aliases);
  kc__free(c.group_of);
  kc__free(c.group_first);
  kc__free(c.group_members);
  if (st) {
    kc_executable_destroy(exe);
    return kc_status_add_context(st, "compiling %s", KC__QS(program->name));
  }
  *out_executable = exe;
  return NULL;
}

