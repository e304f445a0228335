/* The program compiler's working state and the functions its files share
 * (compile.c drives verify.c, plan_buffers.c, lower_call.c and
 * compile_cuda.c). Never installed. */
#ifndef KCALL_PROGRAM_COMPILE_INTERNAL_H_
#define KCALL_PROGRAM_COMPILE_INTERNAL_H_

#include <stdlib.h>

#include "internal/common.h"
#include "program/runtime/executable_internal.h"
#include "program/instr/instr.h"

typedef struct kc__compiler {
  const kc_program* p;
  kc_executable* exe;
  int32_t* pos_of;    /* plan position of each instruction; -1 when dead */
  size_t* leaf_base;  /* first leaf of each instruction */
  int32_t* leaf_buf;  /* buffer of each leaf */
  size_t num_leaves;
  kc__buffer* bufs;
  size_t num_bufs, cap_bufs;
  kc__step* steps;
  size_t num_steps, cap_steps;
  char* block;        /* the run-block template, growing */
  size_t block_size, block_cap;
  kc__fill* fills;    /* targets fed from buffers or block offsets */
  size_t num_fills, cap_fills;
  /* CUDA: device pointer tables, filled from buffers (offsets in the
   * tables area). */
  kc__fill* table_fills;
  size_t num_table_fills, cap_table_fills;
  size_t tables_size;
  /* Output-operand aliases that may become in-place: the call's position,
   * the operand's buffer, the result's buffer and the copy step. */
  struct kc__alias_plan {
    int32_t pos;
    int32_t from;
    int32_t to;
    size_t copy_step;
  }* aliases;
  size_t num_aliases, cap_aliases;
  /* Fusion (fusion.c): per instruction, the root of its fused group or -1
   * (NULL: no fusion); per root, where its members (itself last, in
   * program order) start in group_members. */
  int32_t* group_of;
  int32_t* group_first;
  int32_t* group_members;
} kc__compiler;

static inline kc_status* kc__oom(void) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory compiling");
}

/* ---- the compiler's outputs (compile.c) ------------------------------------ */

/* A new buffer; its index, or -1 when out of memory. */
int32_t kc__new_buffer(kc__compiler* c, int32_t kind, size_t size, int32_t def,
                       const kc_shape* shape);
/* A new step (zeroed, no buffers), or NULL when out of memory. */
kc__step* kc__new_step(kc__compiler* c, int32_t kind, kc__step_fn fn, int32_t instr);
/* A new step calling legacy-convention target `t` for custom call `instr`
 * (its function, API and the call's opaque bytes); NULL out of memory. */
kc__step* kc__new_legacy_step(kc__compiler* c, int32_t kind, kc__step_fn fn, int32_t instr,
                              const kc__xcall_target* t);
/* Reserves `size` bytes of the run block (zeroed, 16-aligned); returns
 * its offset, or SIZE_MAX when out of memory. */
size_t kc__block_reserve(kc__compiler* c, size_t size);
/* A fill of the pointer at block offset `target` (kc__fill); false when
 * out of memory. */
bool kc__add_fill(kc__compiler* c, size_t target, int32_t buffer, size_t block_offset);

/* `first` when it is an error (`then` is dropped), else `then`. */
static inline kc_status* kc__keep_first_error(kc_status* first, kc_status* then) {
  if (!first) return then;
  kc_status_destroy(then);
  return first;
}

/* The buffers of instruction `instr`'s leaves. */
static inline const int32_t* kc__leaves_of(const kc__compiler* c, int32_t instr) {
  return &c->leaf_buf[c->leaf_base[instr]];
}

/* ---- verification (verify.c) ----------------------------------------------- */

#define KC__SHAPE_TEXT(var, shape) \
  char var[256];                   \
  kc_shape_format((shape), var, sizeof var)

/* The shape of operand `i` of `in`. */
const kc_shape* kc__operand_shape(const kc_program* p, const kc__instr* in, size_t i);
/* The sub-shape at `path` of `shape`, or NULL. */
const kc_shape* kc__subshape(const kc_shape* shape, const int64_t* path, size_t n,
                             size_t* out_leaf_offset);
/* The host's checks of one instruction. */
kc_status* kc__verify_instr(const kc_program* p, const kc__instr* in);
/* Finds and checks the target of a custom call; on success the executable
 * holds it, so *out_target lives as long as the executable. */
kc_status* kc__verify_custom_call(const kc_program* p, const kc__instr* in,
                                  kc_executable* exe, const kc__xcall_target** out_target);
/* A custom call's output_to_operand_aliasing: paths that exist, shapes
 * that match, each result leaf aliased once. */
kc_status* kc__verify_aliases(const kc_program* p, const kc__instr* in);

/* ---- buffers (plan_buffers.c) ---------------------------------------------- */

/* Marks in `live` (one per instruction) the root, side-effecting custom
 * calls and what they read. */
kc_status* kc__mark_live(kc__compiler* c, bool* live);
/* A fresh TEMP buffer for each leaf of `in`'s result, defined at `pos`. */
kc_status* kc__temp_leaves(kc__compiler* c, int32_t id, int32_t pos);
/* Records copy-ins for the call's aliases (made in place later where the
 * operand dies at the call). */
kc_status* kc__plan_aliases(kc__compiler* c, int32_t id, int32_t pos);
/* Extends last uses: every operand read at `pos`. */
void kc__note_uses(kc__compiler* c, int32_t id, int32_t pos);
/* Makes aliases in place where the operand's buffer is a temporary that
 * nothing reads after the call; the copy-in steps of those become no-ops. */
void kc__merge_aliases(kc__compiler* c);
/* Root leaves become outputs: a temporary computed by the program is
 * written straight into its output tensor; anything else is copied. */
kc_status* kc__plan_outputs(kc__compiler* c, int32_t end);
/* Gives each temporary an arena offset; buffers whose live ranges do not
 * overlap share memory. */
kc_status* kc__plan_arena(kc__compiler* c);
/* The executable's input leaves, from the program's parameters. */
kc_status* kc__plan_inputs(kc__compiler* c);

/* ---- calls and kernels (lower_call.c) ---------------------------------------- */

/* The leaves a call sees for operand `i`, in `leaves` (the operand's leaf
 * count), aliased results' buffers substituted. */
void kc__call_operand_leaves(kc__compiler* c, int32_t id, size_t i, int32_t* leaves);
/* A legacy-convention call on the host: the result slot and operand
 * table in the block, one step. */
kc_status* kc__plan_legacy_call(kc__compiler* c, int32_t id, const kc__xcall_target* t);
/* Lays out a typed call's frame and DLTensors in the block, and
 * instantiates the handler. */
kc_status* kc__plan_typed_call(kc__compiler* c, int32_t id, int32_t pos,
                               const kc__xcall_target* t);
/* Lays out an XLA FFI call's frame in the block, and runs its
 * compile-time stages. */
kc_status* kc__plan_xla_call(kc__compiler* c, int32_t id, const kc__xcall_target* t);
/* A KC__INSTR_KERNEL instruction of the instruction table as one step. */
kc_status* kc__plan_kernel(kc__compiler* c, int32_t id, int32_t pos, const kc__instr_def* def);
/* A custom call to a built-in target (kc__builtin_call_find) as one step
 * of its entry's kernel, aliases copied in first. */
kc_status* kc__plan_builtin_call(kc__compiler* c, int32_t id, int32_t pos,
                                 const kc__instr_def* def);

/* ---- built-in custom-call targets (instr_linalg.c) ------------------------------ */

/* The entry (verify, prepare, kernel) of the built-in target `target` on
 * the host: the LAPACK calls JAX emits for jnp.linalg; NULL for any other
 * name. A target registered under the same name takes precedence. */
const kc__instr_def* kc__builtin_call_find(kc_string_view target);

/* ---- fusion (fusion.c) --------------------------------------------------------- */

/* Whether compiles fuse element-wise chains: unless the environment
 * variable KCALL_FUSION is "0" (read at each compile). */
bool kc__fusion_enabled(void);
/* Groups the live instructions (c->group_of, group_first, group_members):
 * element-wise instructions, broadcasts and reshapes under a root whose
 * members' values are read only by members of the group. */
kc_status* kc__fusion_find(kc__compiler* c);
/* The group of `root` as one step at plan position `pos`: the root's
 * buffer, the external operands' last uses extended to `pos`; the
 * members' leaves are -1 (they have no buffer). */
kc_status* kc__plan_fusion(kc__compiler* c, int32_t root, int32_t pos);

/* ---- CUDA (compile_cuda.c) ---------------------------------------------------- */

/* What the CUDA backend can run, on top of the host's checks (kc__verify_instr). */
kc_status* kc__verify_device(kc__compiler* c, const kc__instr* in);
/* A call with XLA's GPU convention. */
kc_status* kc__plan_gpu_call(kc__compiler* c, int32_t id, const kc__xcall_target* t);
/* A built-in instruction on CUDA, as a backend kernel. */
kc_status* kc__plan_device_instr(kc__compiler* c, int32_t id, int32_t pos);
/* The CUDA part of finishing the executable. */
kc_status* kc__finish_device(kc__compiler* c);

#endif /* KCALL_PROGRAM_COMPILE_INTERNAL_H_ */
