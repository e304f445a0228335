/* Lowering of calls into steps: the legacy, typed and XLA FFI calling
 * conventions of custom calls on the host, and table kernels, with
 * the pointer tables, frames and DLTensors they read in the run block. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/grow.h"
#include "kcall/runtime.h"
#include "program/compiler/compile_internal.h"
#include "xcall/xla_ffi_internal.h"

/* Pointer table for a tuple value whose leaves are `leaves`: reserves
 * shape->count pointers in the block, nested tables for nested tuples,
 * and fills for leaf addresses. Returns the table's block offset. */
static size_t kc__new_tuple_table(kc__compiler* c, const kc_shape* s, const int32_t* leaves) {
  size_t table = kc__block_reserve(c, s->count * sizeof(void*));
  if (table == SIZE_MAX) return SIZE_MAX;
  size_t leaf = 0;
  for (size_t i = 0; i < s->count; ++i) {
    const kc_shape* e = s->elements[i];
    size_t target = table + i * sizeof(void*);
    bool ok;
    if (e->is_tuple) {
      size_t sub = kc__new_tuple_table(c, e, leaves + leaf);
      ok = sub != SIZE_MAX && kc__add_fill(c, target, -1, sub);
    } else {
      ok = kc__add_fill(c, target, leaves[leaf], 0);
    }
    if (!ok) return SIZE_MAX;
    leaf += e->leaf_count;
  }
  return table;
}

/* Fills the pointer at block offset `target` with the address of a value
 * of shape `s` held in `leaves`: its buffer for an array, its table for a
 * tuple. */
static bool kc__point_at_leaves(kc__compiler* c, size_t target, const kc_shape* s,
                                const int32_t* leaves) {
  if (!s->is_tuple) return kc__add_fill(c, target, leaves[0], 0);
  size_t table = kc__new_tuple_table(c, s, leaves);
  return table != SIZE_MAX && kc__add_fill(c, target, -1, table);
}

static bool kc__point_at_instr(kc__compiler* c, size_t target, int32_t id) {
  return kc__point_at_leaves(c, target, c->p->instrs[id].shape, kc__leaves_of(c, id));
}

/* The leaves a call sees for operand `i`, in `leaves`: the operand's, but
 * where a result aliases one of them the result's buffer, into which it
 * was copied. As in XLA, operand and result are then one buffer for the
 * handler, whatever the operand is (a parameter, a constant, a value
 * read later). */
void kc__call_operand_leaves(kc__compiler* c, int32_t id, size_t i, int32_t* leaves) {
  const kc__instr* in = &c->p->instrs[id];
  int32_t o = in->operands[i];
  memcpy(leaves, kc__leaves_of(c, o), c->p->instrs[o].shape->leaf_count * sizeof *leaves);
  for (size_t k = 0; k < in->num_aliases; ++k) {
    const kc__alias* a = &in->aliases[k];
    if ((size_t)a->operand != i) continue;
    size_t out_leaf = 0, src_leaf = 0;
    kc__subshape(in->shape, a->output_index, a->output_index_size, &out_leaf);
    kc__subshape(c->p->instrs[o].shape, a->operand_index, a->operand_index_size, &src_leaf);
    leaves[src_leaf] = kc__leaves_of(c, id)[out_leaf];
  }
}

/* Points the operand table at `ins` (one slot per operand) at the
 * operands as the call sees them (kc__call_operand_leaves). */
static kc_status* kc__point_at_call_operands(kc__compiler* c, int32_t id, size_t ins) {
  const kc__instr* in = &c->p->instrs[id];
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* shape = c->p->instrs[in->operands[i]].shape;
    int32_t* leaves = kc__malloc((shape->leaf_count + 1) * sizeof *leaves);
    if (!leaves) return kc__oom();
    kc__call_operand_leaves(c, id, i, leaves);
    bool ok = kc__point_at_leaves(c, ins + i * sizeof(void*), shape, leaves);
    kc__free(leaves);
    if (!ok) return kc__oom();
  }
  return NULL;
}

kc_status* kc__plan_legacy_call(kc__compiler* c, int32_t id,
                                const kc__xcall_target* t) {
  const kc__instr* in = &c->p->instrs[id];
  kc__step* s = kc__new_legacy_step(c, KC__STEP_LEGACY_CALL, kc__step_legacy_call, id, t);
  if (!s) return kc__oom();
  /* The result slot, then the operand table: the run loop finds both
   * from one offset (kc__hot_step). */
  size_t out = kc__block_reserve(c, (in->num_operands + 2) * sizeof(void*));
  if (out == SIZE_MAX) return kc__oom();
  size_t ins = out + sizeof(void*);
  c->steps[c->num_steps - 1].ins_offset = ins;
  c->steps[c->num_steps - 1].out_offset = out;
  KC_RETURN_IF_ERROR(kc__point_at_call_operands(c, id, ins));
  if (!kc__point_at_instr(c, out, id)) return kc__oom();
  return NULL;
}

/* The leaves a call sees: its operands' (flattened in pre-order), then its
 * result's, as shapes and buffers; the caller frees both arrays. */
static kc_status* kc__call_leaves(kc__compiler* c, int32_t id, const kc_shape*** out_shapes,
                                  int32_t** out_bufs, size_t* out_nargs, size_t* out_nres) {
  const kc__instr* in = &c->p->instrs[id];
  size_t nargs = 0;
  for (size_t i = 0; i < in->num_operands; ++i) {
    nargs += c->p->instrs[in->operands[i]].shape->leaf_count;
  }
  size_t nres = in->shape->leaf_count;
  const kc_shape** shapes = kc__malloc((nargs + nres + 1) * sizeof *shapes);
  int32_t* bufs = kc__malloc((nargs + nres + 1) * sizeof *bufs);
  if (!shapes || !bufs) {
    kc__free(shapes);
    kc__free(bufs);
    return kc__oom();
  }
  size_t n = 0;
  for (size_t i = 0; i < in->num_operands; ++i) {
    kc__call_operand_leaves(c, id, i, bufs + n);
    kc__shape_leaves(c->p->instrs[in->operands[i]].shape, shapes, &n);
  }
  kc__shape_leaves(in->shape, shapes, &n);
  memcpy(bufs + nargs, kc__leaves_of(c, id), nres * sizeof *bufs);
  *out_shapes = shapes;
  *out_bufs = bufs;
  *out_nargs = nargs;
  *out_nres = nres;
  return NULL;
}

static kc_status* kc__check_leaves(const kc__instr* in, const char* what,
                                   const kc_shape* const* leaves, size_t n,
                                   const kc_xcall_buffer_spec* specs,
                                   int32_t num_specs) {
  if ((size_t)num_specs != n) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "custom call %s: expected %d %s buffer%s, got %zu",
                           KC__QS(in->target), num_specs, what, num_specs == 1 ? "" : "s", n);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!kc__xcall_buffer_spec_accepts(&specs[i], leaves[i]->dtype, leaves[i]->rank)) {
      char want[64];
      kc__xcall_buffer_spec_describe(&specs[i], kc__hlo_dtype_name(specs[i].dtype), want,
                                     sizeof want);
      KC__SHAPE_TEXT(got, leaves[i]);
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "custom call %s: %s %zu: expected %s, got %s",
                             KC__QS(in->target), what, i, want, got);
    }
  }
  return NULL;
}

/* Orders the instruction's attributes as the signature declares them, into
 * `out` (num_attrs entries). */
static kc_status* kc__match_attrs(const kc__instr* in,
                                  const kc_xcall_signature* sig, kc_attr* out) {
  for (int32_t i = 0; i < sig->num_attrs; ++i) {
    const kc_attr* given = kc_attr_dict_lookup(&in->attrs, kc_sv(sig->attrs[i].name));
    char why[KC__XCALL_ATTR_WHY_CAP];
    const kc_attr* a = kc__xcall_attr_match(sig, i, given, false, why, sizeof why);
    if (!a) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "custom call %s: %s",
                             KC__QS(in->target), why);
    }
    out[i] = *a;
  }
  return NULL;
}

/* A typed call's buffers checked against its signature (unless open),
 * and the attributes its handler receives, in the executable's arena:
 * *out_attrs (NULL on error) holding *out_num_attrs. */
static kc_status* kc__typed_call_attrs(kc_executable* exe, const kc__instr* in,
                                       const kc_xcall_signature* sig,
                                       const kc_shape* const* shapes, size_t nargs,
                                       size_t nres, kc_attr** out_attrs,
                                       size_t* out_num_attrs) {
  kc_status* st = NULL;
  bool open = (sig->flags & KC_XCALL_SIG_OPEN) != 0;
  if (!open) st = kc__check_leaves(in, "argument", shapes, nargs, sig->args, sig->num_args);
  if (!st && !open) {
    st = kc__check_leaves(in, "result", shapes + nargs, nres, sig->results,
                          sig->num_results);
  }
  kc_attr* attrs = NULL;
  /* An open signature receives every attribute, sorted by name. */
  size_t num_attrs = open ? in->attrs.count : (size_t)sig->num_attrs;
  if (!st && open) {
    attrs = kc__xcall_attrs_sorted(&exe->arena, &in->attrs);
    if (!attrs) st = kc__oom();
  } else if (!st) {
    attrs = kc__arena_alloc(&exe->arena, (num_attrs + 1) * sizeof *attrs);
    st = attrs ? kc__match_attrs(in, sig, attrs) : kc__oom();
  }
  *out_attrs = attrs;
  *out_num_attrs = num_attrs;
  return st;
}

/* Lays out a typed call's frame and DLTensors in the block, and
 * instantiates the handler. */
kc_status* kc__plan_typed_call(kc__compiler* c, int32_t id, int32_t pos,
                               const kc__xcall_target* t) {
  const kc__instr* in = &c->p->instrs[id];
  const kc_xcall_signature* sig = &t->signature;
  kc_executable* exe = c->exe;
  const kc_shape** shapes = NULL;
  int32_t* bufs = NULL;
  size_t nargs = 0, nres = 0;
  KC_RETURN_IF_ERROR(kc__call_leaves(c, id, &shapes, &bufs, &nargs, &nres));
  kc_attr* attrs = NULL;
  size_t num_attrs = 0;
  kc_status* st = kc__typed_call_attrs(exe, in, sig, shapes, nargs, nres, &attrs, &num_attrs);
  /* The frame and its DLTensors, first as a local copy for INSTANTIATE. */
  DLTensor* tensors = st ? NULL : kc__calloc(nargs + nres + 1, sizeof *tensors);
  if (!st && !tensors) st = kc__oom();
  for (size_t i = 0; !st && i < nargs + nres; ++i) {
    tensors[i].device = exe->backend ? exe->device : kc_device_cpu();
    tensors[i].ndim = shapes[i]->rank;
    tensors[i].dtype = shapes[i]->dtype;
    tensors[i].shape = (int64_t*)(uintptr_t)shapes[i]->dims;
  }
  kc_xcall_frame frame;
  memset(&frame, 0, sizeof frame);
  frame.struct_size = sizeof frame;
  frame.stage = KC_XCALL_STAGE_INSTANTIATE;
  frame.num_args = (int32_t)nargs;
  frame.num_results = (int32_t)nres;
  frame.num_attrs = (int32_t)num_attrs;
  frame.args = tensors;
  frame.results = tensors ? tensors + nargs : NULL;
  frame.attrs = attrs;
  /* Handlers always get a pool on the host; the default one is started
   * only when a program has a typed call. */
  if (!exe->pool) exe->pool = kc_thread_pool_get_default();
  frame.thread_pool = exe->pool;
  frame.user = t->user;
  frame.instruction_name = in->name;
  /* KC_XCALL_SIG_NO_INSTANTIATE: the handler has nothing to do there. */
  if (!st && !(sig->flags & KC_XCALL_SIG_NO_INSTANTIATE)) {
    st = t->handler(&frame);
    if (frame.state && frame.state_deleter) {
      st = kc__keep_first_error(
          st, kc__executable_own_state(exe, frame.state, frame.state_deleter));
    }
    if (st) {
      st = kc_status_add_context(st, "instantiating custom call %s (instruction %s)",
                                 KC__QS(in->target), KC__QS(in->name));
    }
  }
  /* Into the block: frame, then the DLTensors; pointers become fills. */
  size_t frame_off = SIZE_MAX, tensors_off = SIZE_MAX;
  /* Frame, DLTensors and ordered attributes sit together, in the order
   * a handler reads them. */
  size_t attrs_off = SIZE_MAX;
  if (!st) {
    frame_off = kc__block_reserve(c, sizeof frame);
    tensors_off = kc__block_reserve(c, (nargs + nres) * sizeof *tensors);
    attrs_off = kc__block_reserve(c, num_attrs * sizeof *attrs);
    if (frame_off == SIZE_MAX || tensors_off == SIZE_MAX || attrs_off == SIZE_MAX) {
      st = kc__oom();
    }
  }
  /* The block's copy runs EXECUTE; its pointers become fills, then the
   * scratch buffer, the stream slot (CUDA) and the step. */
  if (!st) {
    frame.stage = KC_XCALL_STAGE_EXECUTE;
    frame.args = NULL;
    frame.results = NULL;
    frame.attrs = NULL;
    memcpy(c->block + frame_off, &frame, sizeof frame);
    memcpy(c->block + tensors_off, tensors, (nargs + nres) * sizeof *tensors);
    memcpy(c->block + attrs_off, attrs, num_attrs * sizeof *attrs);
    bool ok = kc__add_fill(c, frame_off + offsetof(kc_xcall_frame, args), -1, tensors_off) &&
              kc__add_fill(c, frame_off + offsetof(kc_xcall_frame, results), -1,
                           tensors_off + nargs * sizeof *tensors) &&
              kc__add_fill(c, frame_off + offsetof(kc_xcall_frame, attrs), -1, attrs_off);
    for (size_t i = 0; ok && i < nargs + nres; ++i) {
      ok = kc__add_fill(c, tensors_off + i * sizeof *tensors + offsetof(DLTensor, data),
                        bufs[i], 0);
    }
    if (ok && frame.scratch_bytes) {
      int32_t b = kc__new_buffer(c, KC__BUF_SCRATCH, frame.scratch_bytes, pos, NULL);
      ok = b >= 0 && kc__add_fill(c, frame_off + offsetof(kc_xcall_frame, scratch), b, 0);
    }
    if (ok && exe->backend) {
      size_t slot = frame_off + offsetof(kc_xcall_frame, stream);
      ok = KC__GROW(exe->stream_slots, exe->cap_stream_slots, exe->num_stream_slots + 1);
      if (ok) exe->stream_slots[exe->num_stream_slots++] = slot;
    }
    kc__step* s = ok ? kc__new_step(c, KC__STEP_TYPED_CALL, kc__step_typed_call, id) : NULL;
    if (!s) {
      st = kc__oom();
    } else {
      s->target = t;
      s->handler = t->handler;
      s->frame_offset = frame_off;
    }
  }
  kc__free(tensors);
  kc__free(shapes);
  kc__free(bufs);
  return st;
}

/* Describes a frame's buffers (from kc__xla_frame_write) by the call's
 * leaf shapes, which live as long as the program. */
static void kc__xla_frame_describe(XLA_FFI_Buffer* bufs, const kc_shape* const* shapes,
                                   size_t n) {
  for (size_t i = 0; i < n; ++i) {
    kc__xla_buffer_describe(&bufs[i], shapes[i]->dtype, shapes[i]->rank, shapes[i]->dims);
  }
}

/* Lays out an XLA FFI call's frame in the block (what a run needs is
 * then a few buffer addresses), and runs its compile-time stages. */
kc_status* kc__plan_xla_call(kc__compiler* c, int32_t id, const kc__xcall_target* t) {
  const kc__instr* in = &c->p->instrs[id];
  kc_executable* exe = c->exe;
  const kc_shape** shapes = NULL;
  int32_t* bufs = NULL;
  size_t nargs = 0, nres = 0;
  KC_RETURN_IF_ERROR(kc__call_leaves(c, id, &shapes, &bufs, &nargs, &nres));
  size_t n = nargs + nres;
  kc_status* st = NULL;
  /* Every leaf needs an XLA element type. */
  for (size_t i = 0; !st && i < n; ++i) {
    if (kc__xla_dtype_from_dl(shapes[i]->dtype) == XLA_FFI_DataType_INVALID) {
      char dt[32];
      kc_dtype_format(shapes[i]->dtype, dt, sizeof dt);
      st = kc__instr_error(in, KC_UNIMPLEMENTED,
                           "custom call %s: %s %zu: XLA has no element type for %s",
                           KC__QS(in->target), i < nargs ? "operand leaf" : "result leaf",
                           i < nargs ? i : i - nargs, dt);
    }
  }
  /* What never changes lives in the executable: the types, the attributes
   * and the call site's state. */
  XLA_FFI_ArgType* arg_types =
      st ? NULL : kc__arena_alloc(&exe->arena, (n + 1) * sizeof *arg_types);
  XLA_FFI_RetType* ret_types =
      st ? NULL : kc__arena_alloc(&exe->arena, (n + 1) * sizeof *ret_types);
  kc__xla_instance* inst = st ? NULL : kc__arena_alloc(&exe->arena, sizeof *inst);
  if (!st && (!arg_types || !ret_types || !inst)) st = kc__oom();
  if (!st) {
    memset(inst, 0, sizeof *inst);
    inst->api_major = t->xla_api_major;
    inst->api_minor = t->xla_api_minor;
  }
  for (size_t i = 0; !st && i < n; ++i) {
    arg_types[i] = XLA_FFI_ArgType_BUFFER;
    ret_types[i] = XLA_FFI_RetType_BUFFER;
  }
  XLA_FFI_Attrs attrs;
  memset(&attrs, 0, sizeof attrs);
  if (!st) {
    st = kc__xla_attrs_build(&exe->arena, &in->attrs, &attrs);
    if (st) {
      st = kc_status_add_context(st, "custom call %s (instruction %s)", KC__QS(in->target),
                                 KC__QS(in->name));
    }
  }
  /* The stages before the first execution, run now on a local frame. */
  if (!exe->pool) exe->pool = kc_thread_pool_get_default();
  XLA_FFI_ExecutionContext ctx = {.stage = XLA_FFI_ExecutionStage_INSTANTIATE,
                                  .instance = inst,
                                  .pool = exe->pool,
                                  .run = NULL};
  kc__xla_layout l = kc__xla_layout_of(n);
  char* local = st ? NULL : kc__calloc(1, l.total);
  if (!st && !local) st = kc__oom();
  if (!st) {
    kc__xla_frame_describe(kc__xla_frame_write(local, &l, nargs, nres, arg_types, ret_types,
                                               &attrs, &ctx),
                           shapes, n);
    st = kc__xla_run_stages(t, (XLA_FFI_CallFrame*)(void*)local);
    /* State set by any stage is the executable's now, even on failure. */
    for (size_t k = 0; inst && k < KC__ARRAY_SIZE(inst->states); ++k) {
      struct kc__xla_state* s = &inst->states[k];
      if (s->type_id && s->deleter) {
        st = kc__keep_first_error(st, kc__executable_own_state(exe, s->state, s->deleter));
      }
    }
    if (st) {
      st = kc_status_add_context(st, "instantiating custom call %s (instruction %s)",
                                 KC__QS(in->target), KC__QS(in->name));
    }
  }
  /* What the XLA calls of a run share, once per executable. */
  if (!st && !exe->has_xla) {
    size_t run_off = kc__block_reserve(c, sizeof(kc__xla_run_info));
    if (run_off == SIZE_MAX) st = kc__oom();
    exe->has_xla = true;
    exe->xla_run_offset = run_off;
  }
  /* The block's frame runs EXECUTE; its pointers become fills, then the
   * step. */
  size_t off = st ? 0 : kc__block_reserve(c, l.total);
  if (!st && off == SIZE_MAX) st = kc__oom();
  if (!st) {
    ctx.stage = XLA_FFI_ExecutionStage_EXECUTE;
    kc__xla_frame_describe(kc__xla_frame_write(c->block + off, &l, nargs, nres, arg_types,
                                               ret_types, &attrs, &ctx),
                           shapes, n);
    bool ok = kc__add_fill(c, off + offsetof(XLA_FFI_CallFrame, ctx), -1, off + l.ctx) &&
              kc__add_fill(c, off + offsetof(XLA_FFI_CallFrame, args.args), -1, off + l.ptrs) &&
              kc__add_fill(c, off + offsetof(XLA_FFI_CallFrame, rets.rets), -1,
                           off + l.ptrs + nargs * sizeof(void*)) &&
              kc__add_fill(c, off + l.ctx + offsetof(XLA_FFI_ExecutionContext, run), -1,
                           exe->xla_run_offset);
    for (size_t i = 0; ok && i < n; ++i) {
      size_t buf = off + l.bufs + i * sizeof(XLA_FFI_Buffer);
      ok = kc__add_fill(c, off + l.ptrs + i * sizeof(void*), -1, buf) &&
           kc__add_fill(c, buf + offsetof(XLA_FFI_Buffer, data), bufs[i], 0);
    }
    kc__step* s = ok ? kc__new_step(c, KC__STEP_XLA_CALL, kc__step_xla_call, id) : NULL;
    if (!s) {
      st = kc__oom();
    } else {
      s->target = t;
      s->fn = (void (*)(void))t->xla.execute;
      s->frame_offset = off;
    }
  }
  kc__free(local);
  kc__free(shapes);
  kc__free(bufs);
  return st;
}

/* A kernel step for instruction `id`: its data prepared (def->prepare,
 * when there is one), and room in the run block for the operands' and the
 * result's addresses, at *out_ins and *out_out. */
static kc_status* kc__kernel_step(kc__compiler* c, int32_t id, const kc__instr_def* def,
                                  size_t* out_ins, size_t* out_out) {
  const kc__instr* in = &c->p->instrs[id];
  const void* data = NULL;
  if (def->prepare) {
    kc__prepare_ctx ctx = {.arena = &c->exe->arena,
                           .platform = c->exe->platform,
                           .pool = c->exe->pool,
                           .exe = c->exe};
    KC_RETURN_IF_ERROR(def->prepare(c->p, in, &ctx, &data));
  }
  kc__step* s = kc__new_step(c, KC__STEP_KERNEL, kc__step_kernel, id);
  if (!s) return kc__oom();
  s->def = def;
  s->data = data;
  size_t ins = kc__block_reserve(c, (in->num_operands + 1) * sizeof(void*));
  size_t out = kc__block_reserve(c, sizeof(void*));
  if (ins == SIZE_MAX || out == SIZE_MAX) return kc__oom();
  c->steps[c->num_steps - 1].ins_offset = ins;
  c->steps[c->num_steps - 1].out_offset = out;
  *out_ins = ins;
  *out_out = out;
  return NULL;
}

/* A KC__INSTR_KERNEL instruction: one step calling its kernel with the
 * operands' and the result's addresses, laid out in the run block. */
kc_status* kc__plan_kernel(kc__compiler* c, int32_t id, int32_t pos,
                           const kc__instr_def* def) {
  const kc__instr* in = &c->p->instrs[id];
  KC_RETURN_IF_ERROR(kc__temp_leaves(c, id, pos));
  size_t ins = 0, out = 0;
  KC_RETURN_IF_ERROR(kc__kernel_step(c, id, def, &ins, &out));
  for (size_t i = 0; i < in->num_operands; ++i) {
    if (!kc__point_at_instr(c, ins + i * sizeof(void*), in->operands[i])) return kc__oom();
  }
  return kc__point_at_instr(c, out, id) ? NULL : kc__oom();
}

kc_status* kc__plan_builtin_call(kc__compiler* c, int32_t id, int32_t pos,
                                 const kc__instr_def* def) {
  const kc__instr* in = &c->p->instrs[id];
  KC_RETURN_IF_ERROR(def->verify(c->p, in));
  KC_RETURN_IF_ERROR(kc__verify_aliases(c->p, in));
  KC_RETURN_IF_ERROR(kc__temp_leaves(c, id, pos));
  KC_RETURN_IF_ERROR(kc__plan_aliases(c, id, pos));
  size_t ins = 0, out = 0;
  KC_RETURN_IF_ERROR(kc__kernel_step(c, id, def, &ins, &out));
  /* Operands as the call sees them: an aliased one is its result's buffer,
   * into which it was copied. */
  KC_RETURN_IF_ERROR(kc__point_at_call_operands(c, id, ins));
  return kc__point_at_instr(c, out, id) ? NULL : kc__oom();
}
