/* Compiling for the CUDA backend: what it can run, XLA's GPU calling
 * convention with its device pointer tables, built-in instructions as
 * backend kernels, and the device part of the executable. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/grow.h"
#include "program/compiler/compile_internal.h"
#include "runtime/device_internal.h"

static kc_status* kc__not_on_cuda(const kc__instr* in, const char* why) {
  return kc__instr_error(in, KC_UNIMPLEMENTED, "%s is not available on CUDA%s",
                         kc__instr_name(in->op), why);
}

static bool kc__same_dims(const kc_shape* a, const kc_shape* b) {
  return !kc_shape_is_tuple(a) && !kc_shape_is_tuple(b) && a->rank == b->rank &&
         (a->rank == 0 || !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(int64_t)));
}

/* KC__CMP_* of a compare instruction, or an error. */
static kc_status* kc__device_direction(const kc_program* p, const kc__instr* in,
                                      int32_t* out) {
  static const char* const names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  kc_string_view dir;
  KC_RETURN_IF_ERROR(kc__instr_attr_string(in, "direction", false, &dir));
  *out = 0;
  for (int32_t i = 0; i < 6; ++i) {
    if (kc_sv_equal(dir, kc_sv(names[i]))) *out = KC__CMP_EQ + i;
  }
  kc_string_view type = {NULL, 0};
  KC_RETURN_IF_ERROR(kc__instr_attr_string(in, "type", true, &type));
  if (!*out) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute direction: expected EQ, NE, LT, LE, GT or GE");
  }
  if (type.size && kc_sv_equal(type, kc_sv("TOTALORDER"))) {
    DLDataType t = kc__operand_shape(p, in, 0)->dtype;
    if (t.code != kDLFloat || (t.bits != 32 && t.bits != 64) || t.lanes != 1) {
      return kc__not_on_cuda(in, " with type=TOTALORDER except for f32 and f64");
    }
    *out |= KC__CMP_TOTAL_ORDER;
  }
  return NULL;
}

/* What the CUDA backend can run, on top of the host's checks
 * (kc__verify_instr): anything else is refused rather than run on the
 * host with device pointers. */
kc_status* kc__verify_device(kc__compiler* c, const kc__instr* in) {
  const kc__backend* be = c->exe->backend;
  const kc_program* p = c->p;
  switch (in->def->kind) {
    case KC__INSTR_PARAMETER:
    case KC__INSTR_CONSTANT:
    case KC__INSTR_TUPLE:
    case KC__INSTR_GET_TUPLE_ELEMENT:
    case KC__INSTR_CUSTOM_CALL:
    case KC__INSTR_RESHAPE:
      return NULL;
    case KC__INSTR_BROADCAST: {
      size_t esize = kc_dtype_get_size(in->shape->dtype);
      if (in->shape->rank > 32 || (esize != 1 && esize != 2 && esize != 4 && esize != 8 &&
                                   esize != 16)) {
        return kc__not_on_cuda(in, " for this dtype or rank (elements of 1, 2, 4, 8 or 16 "
                                   "bytes, rank at most 32)");
      }
      return NULL;
    }
    default:
      break;
  }
  if (in->op == KC_OP_IOTA) {
    if (in->shape->rank > 32) return kc__not_on_cuda(in, " above rank 32");
    return NULL;
  }
  const kc__instr_def* def = in->def;
  if (!def->device_elementwise || (size_t)def->min_operands != in->num_operands) {
    return kc__not_on_cuda(in, "");
  }
  for (size_t i = 0; i < in->num_operands; ++i) {
    if (!kc__same_dims(kc__operand_shape(p, in, i), in->shape)) {
      return kc__not_on_cuda(in, " unless every operand has the result's dims (no scalar "
                                 "operands)");
    }
  }
  DLDataType from = kc__operand_shape(p, in, in->op == KC_OP_SELECT ? 1 : 0)->dtype;
  if (!be->elementwise_supported(in->op, from, in->shape->dtype)) {
    char a[32], b[32], why[96];
    snprintf(why, sizeof why, " for %s -> %s", kc__instr_dtype_text(from, a, sizeof a),
             kc__instr_dtype_text(in->shape->dtype, b, sizeof b));
    return kc__not_on_cuda(in, why);
  }
  if (in->op == KC_OP_COMPARE) {
    int32_t dir;
    KC_RETURN_IF_ERROR(kc__device_direction(p, in, &dir));
  }
  return NULL;
}

/* A pointer table on the device for a tuple node of `bytes` bytes. */
static int32_t kc__new_device_table(kc__compiler* c, size_t bytes) {
  if (bytes == 0) bytes = sizeof(void*);
  int32_t b = kc__new_buffer(c, KC__BUF_TABLE, bytes, -1, NULL);
  if (b < 0) return -1;
  c->bufs[b].offset = c->tables_size;
  c->tables_size += (bytes + 15) & ~(size_t)15;
  return b;
}

static bool kc__add_table_fill(kc__compiler* c, size_t target, int32_t buffer) {
  if (!KC__GROW(c->table_fills, c->cap_table_fills, c->num_table_fills + 1)) {
    return false;
  }
  c->table_fills[c->num_table_fills++] =
      (kc__fill){.target = target, .buffer = buffer, .block_offset = 0};
  return true;
}

/* Entries of a GPU call's `buffers` for a value of shape `s` in `leaves`,
 * in pre-order from entry *k of the array at block offset `arr`: an array
 * is its buffer; a tuple is a device table, filled with its elements'
 * addresses for an operand, left to the callee for a result. Returns the
 * node's buffer, -1 when out of memory. */
static int32_t kc__gpu_entries(kc__compiler* c, const kc_shape* s, const int32_t* leaves,
                               size_t arr, size_t* k, bool operand) {
  size_t slot = arr + (*k)++ * sizeof(void*);
  if (!s->is_tuple) return kc__add_fill(c, slot, leaves[0], 0) ? leaves[0] : -1;
  int32_t table = kc__new_device_table(c, s->count * sizeof(void*));
  if (table < 0 || !kc__add_fill(c, slot, table, 0)) return -1;
  size_t leaf = 0;
  for (size_t i = 0; i < s->count; ++i) {
    const kc_shape* e = s->elements[i];
    int32_t child = kc__gpu_entries(c, e, leaves + leaf, arr, k, operand);
    if (child < 0) return -1;
    if (operand && !kc__add_table_fill(c, c->bufs[table].offset + i * sizeof(void*), child)) {
      return -1;
    }
    leaf += e->leaf_count;
  }
  return table;
}

static size_t kc__shape_node_count(const kc_shape* s) {
  size_t n = 1;
  for (size_t i = 0; s->is_tuple && i < s->count; ++i) n += kc__shape_node_count(s->elements[i]);
  return n;
}

/* A call with XLA's GPU convention: `buffers` (a host array in the block)
 * holds the operands then the result, each flattened in pre-order of its
 * shape, tuple nodes included (XLA's "Tuples in GPU custom-calls"). */
kc_status* kc__plan_gpu_call(kc__compiler* c, int32_t id, const kc__xcall_target* t) {
  const kc__instr* in = &c->p->instrs[id];
  size_t n = kc__shape_node_count(in->shape);
  for (size_t i = 0; i < in->num_operands; ++i) {
    n += kc__shape_node_count(c->p->instrs[in->operands[i]].shape);
  }
  size_t arr = kc__block_reserve(c, (n + 1) * sizeof(void*));
  if (arr == SIZE_MAX) return kc__oom();
  size_t k = 0;
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* shape = c->p->instrs[in->operands[i]].shape;
    int32_t* leaves = kc__malloc((shape->leaf_count + 1) * sizeof *leaves);
    if (!leaves) return kc__oom();
    kc__call_operand_leaves(c, id, i, leaves);
    int32_t b = kc__gpu_entries(c, shape, leaves, arr, &k, true);
    kc__free(leaves);
    if (b < 0) return kc__oom();
  }
  if (kc__gpu_entries(c, in->shape, kc__leaves_of(c, id), arr, &k, false) < 0) return kc__oom();
  kc__step* s = kc__new_legacy_step(c, KC__STEP_GPU_CALL, kc__step_gpu_call, id, t);
  if (!s) return kc__oom();
  s->ins_offset = arr;
  return NULL;
}

/* A built-in instruction on CUDA (kc__verify_device let it through):
 * iota or an element-wise op, as a backend kernel. */
kc_status* kc__plan_device_instr(kc__compiler* c, int32_t id, int32_t pos) {
  const kc__instr* in = &c->p->instrs[id];
  KC_RETURN_IF_ERROR(kc__temp_leaves(c, id, pos));
  int32_t out = kc__leaves_of(c, id)[0];
  if (in->op == KC_OP_IOTA) {
    int64_t dim = 0;
    KC_RETURN_IF_ERROR(kc__instr_attr_int(in, "iota_dimension", &dim));
    kc__step* s = kc__new_step(c, KC__STEP_IOTA, kc__step_iota_device, id);
    if (!s) return kc__oom();
    s->out = out;
    s->out_dtype = in->shape->dtype;
    s->out_rank = in->shape->rank;
    s->out_dims = in->shape->dims;
    s->in_rank = (int32_t)dim; /* the iota dimension */
    return NULL;
  }
  int32_t direction = 0;
  if (in->op == KC_OP_COMPARE) KC_RETURN_IF_ERROR(kc__device_direction(c->p, in, &direction));
  kc__step* s = kc__new_step(c, KC__STEP_ELEMENTWISE, kc__step_elementwise_device, id);
  if (!s) return kc__oom();
  s->op = in->op;
  s->arity = (int32_t)in->num_operands;
  s->direction = direction;
  for (size_t i = 0; i < in->num_operands && i < 3; ++i) {
    s->in[i] = kc__leaves_of(c, in->operands[i])[0];
  }
  s->out = out;
  s->in_dtype = c->p->instrs[in->operands[in->op == KC_OP_SELECT ? 1 : 0]].shape->dtype;
  s->out_dtype = in->shape->dtype;
  int64_t count = 1;
  for (int32_t d = 0; d < in->shape->rank; ++d) count *= in->shape->dims[d];
  s->count = count;
  return NULL;
}

/* The CUDA part of kc__finish_executable: device step functions, the
 * tables, the staging layout of host inputs, the constants on the device. */
kc_status* kc__finish_device(kc__compiler* c) {
  kc_executable* exe = c->exe;
  for (size_t i = 0; i < exe->num_steps; ++i) {
    kc__step* s = &exe->steps[i];
    if (s->kind == KC__STEP_BROADCAST) s->run = kc__step_broadcast_device;
    if (s->kind == KC__STEP_COPY) s->run = kc__step_copy_device;
  }
  exe->tables_bytes = c->tables_size;
  exe->table_fills = c->table_fills;
  exe->num_table_fills = c->num_table_fills;
  c->table_fills = NULL;
  exe->input_staging = kc__calloc(exe->num_inputs + 1, sizeof *exe->input_staging);
  if (!exe->input_staging) return kc__oom();
  size_t off = 0;
  for (size_t i = 0; i < exe->num_inputs; ++i) {
    exe->input_staging[i] = off;
    off += (exe->input_shapes[i]->byte_size + 255) & ~(size_t)255;
  }
  exe->staging_bytes = off;
  return kc__device_upload_constants(exe);
}
