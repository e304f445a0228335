/* The instruction table: one entry (kc__instr_def) per HLO opcode kcall
 * reads or builds, so that a new instruction is one entry and one file of
 * kernels. Never installed.
 *
 * The entry gives the HLO name (the parser's lookup and the opcode list of
 * its messages, in table order; kc__instr_name), the kc_opcode, the operand
 * and called-computation counts, the attributes it reads, its verify
 * function, its kernel, and its kind, which says who handles it:
 *   KC__INSTR_KERNEL       the families' entries (instr_*.c): added with
 *                          kc_program_builder_add_instruction, checked by
 *                          the counts and attribute names here, then by
 *                          `verify`; one step calls `kernel`.
 *   KC__INSTR_ELEMENTWISE  add .. log and convert (instr_builtin.c): added
 *                          with kc_program_builder_add_op and verified by
 *                          kc__verify_elementwise for the entry's
 *                          elementwise_types; planned, run and fused as
 *                          KC__INSTR_KERNEL is (elementwise.c's prepare,
 *                          kernel and tile), so that every element-wise
 *                          instruction runs one way.
 *   the others             parameter, constant, tuple, get-tuple-element,
 *                          broadcast, custom-call and reshape have their
 *                          own builder functions and compile steps;
 *                          fusion, call, copy, bitcast, map, mulhi,
 *                          ragged-dot and scan are the parser's.
 * The parser (parse.c), the builder (builder.c), verification (verify.c),
 * planning (compile.c) and the CUDA checks (compile_cuda.c) switch on the
 * kind, never on ranges of opcodes.
 *
 * A KC__INSTR_KERNEL instruction becomes one step that calls its kernel
 * with the operands' and the result's addresses (for a tuple, its pointer
 * table, as custom calls get them) and the instruction itself, whose
 * shapes and attributes the program keeps for as long as the executable
 * lives.
 *
 * Adding one (docs/programs.md, "Adding an instruction", says it in full):
 * an element-wise operation of one or two operands is a row of
 * src/kernels/elementwise_ops.h, its kc_opcode and a docs line; any other
 * is a kc_opcode value in include/kcall/hlo_opcode.h; an entry in the
 * family array of the file that holds its kernels (or a new
 * instr_<family>.c listed in kc__families, instr.c, and src/CMakeLists.txt)
 * with verify, optional prepare and a kernel per element type;
 * `device_elementwise` when the CUDA backend runs it element-wise; the
 * syntax of an attribute name the parser has not met in kc__attr_syntaxes
 * (parse_attrs_table.c); tests in tests/test_hlo_ops.c. */
#ifndef KCALL_PROGRAM_INSTR_H_
#define KCALL_PROGRAM_INSTR_H_

#include "kcall/runtime.h"
#include "kernels/conv.h"
#include "kernels/etype.h"
#include "program/program_internal.h"

/* What a kernel gets besides its buffers. */
typedef struct kc__instr_kernel_ctx {
  const kc_program* program;
  const kc__instr* instr;
  const void* data;      /* what the op's prepare made; NULL without one */
  kc_thread_pool* pool;  /* the executable's; NULL: run on the caller */
} kc__instr_kernel_ctx;

/* What prepare may use: the executable's arena (which lives as long as the
 * executable), its compile options, and the executable itself, to hand it
 * state with kc__executable_own_state. */
typedef struct kc__prepare_ctx {
  kc__arena* arena;
  kc_platform platform;
  kc_thread_pool* pool;
  kc_executable* exe;
} kc__prepare_ctx;

/* Hands per-instance state to the executable, which calls deleter(state)
 * when it is destroyed; when that fails (out of memory), deletes it now.
 * Used by prepare functions and by the lowering of custom calls. */
kc_status* kc__executable_own_state(kc_executable* exe, void* state,
                                    void (*deleter)(void*));

typedef kc_status* (*kc__instr_kernel_fn)(const kc__instr_kernel_ctx* ctx, void* out,
                                    const void* const* ins);

/* An element-wise kernel on elements [0, n) of the operands and result
 * given, each a compact array (a scalar operand, where the entry allows
 * one, is read at [0]); `data` is what prepare made. It must give the
 * bits the entry's kernel gives for those elements, however the whole
 * array is cut into pieces: fusion (fusion.c) runs chains of these a tile
 * at a time. */
typedef void (*kc__instr_tile_fn)(const void* data, void* out, const void* const* ins,
                                  int64_t n);

/* A typed loop of one operation on one element type: out[i] = f(a[i],
 * b[i]) for i < n (b not read by a unary operation). What a tile does for
 * some prepared data, without the tile's own dispatch on the operation
 * and type (kc__instr_def.tile_loop). */
typedef void (*kc__instr_loop_fn)(const void* a, const void* b, void* out, int64_t n);

/* Who handles an instruction: which path the parser, builder and compiler
 * take for it. */
typedef enum kc__instr_kind {
  /* Verified by its entry and run by its entry's kernel as one step; added
   * with kc_program_builder_add_instruction. The default (0), so a family's
   * entries need not say it. */
  KC__INSTR_KERNEL = 0,
  /* Arithmetic, exponential, log and convert: added with
   * kc_program_builder_add_op and verified by kc__verify_elementwise; the
   * compiler then plans and fuses them as KC__INSTR_KERNEL entries (their
   * prepare, kernel and tile are elementwise.c's). */
  KC__INSTR_ELEMENTWISE,
  /* Added with kc_program_builder_add_op; the result is its operand's
   * buffer (row-major bytes do not move). */
  KC__INSTR_RESHAPE,
  /* Each with its own builder function and its own step or buffers. */
  KC__INSTR_PARAMETER,
  KC__INSTR_CONSTANT,
  KC__INSTR_TUPLE,
  KC__INSTR_GET_TUPLE_ELEMENT,
  KC__INSTR_BROADCAST,
  KC__INSTR_CUSTOM_CALL,
  /* The parser's alone: never an instruction of a program. */
  KC__INSTR_CALL,   /* fusion and call: the called computation, inlined */
  KC__INSTR_COPY,    /* its operand's value: layouts are all row-major */
  KC__INSTR_BITCAST, /* a reshape, through the physical order where layouts differ */
  KC__INSTR_EXPANDED /* built from others: map, mulhi, ragged-dot, scan (frontend/parse_expand.c) */
} kc__instr_kind;

/* kc__instr_def.elementwise_types: integers (not pred); f16, bf16, f32 and
 * f64; c64 and c128; or convert: from any of them to any but complex to
 * real. */
enum {
  KC__ELEMENTWISE_INT = 1,
  KC__ELEMENTWISE_FLOAT = 2,
  KC__ELEMENTWISE_COMPLEX = 4,
  KC__ELEMENTWISE_INEXACT = 6, /* not integers */
  KC__ELEMENTWISE_CONVERT = 8
};

typedef struct kc__instr_def {
  int32_t op;       /* kc_opcode, KC__OP_* or, for the parser's alone, KC__OP_NONE */
  const char* name; /* HLO's opcode */
  kc__instr_kind kind;
  bool unlisted; /* a second spelling of the entry before: left out of lists */
  int32_t min_operands, max_operands; /* max -1: any number */
  int32_t num_computations;           /* -1: one or more */
  /* The attributes it reads, NULL-terminated; any other given to the
   * builder is refused by compile. */
  const char* const* attrs;
  /* The HLO attributes naming its called computations, in the order of
   * kc_instruction_desc.computations (a list attribute, such as
   * branch_computations, gives several); NULL-terminated, NULL for none. */
  const char* const* computation_attrs;
  /* Checks operand shapes, attributes, called programs and the result
   * shape; for KC__INSTR_KERNEL the operand count and attribute names are
   * checked before. NULL: nothing to check (the builder made the shapes
   * consistent). */
  kc_status* (*verify)(const kc_program* p, const kc__instr* in);
  /* Optional: what the kernel needs precomputed (see kc__prepare_ctx). */
  kc_status* (*prepare)(const kc_program* p, const kc__instr* in,
                        const kc__prepare_ctx* ctx, const void** out_data);
  kc__instr_kernel_fn kernel;
  /* Optional, KC__INSTR_KERNEL: the kernel on a range of elements
   * (kc__instr_tile_fn), for instructions whose result element i depends
   * only on operand elements i; such instructions may be fused. */
  kc__instr_tile_fn tile;
  /* Optional, with tile: rough nanoseconds an element of the tile costs
   * for the prepared `data`, for the split of a fused group across the
   * thread pool; without it, 1. */
  double (*tile_cost)(const void* data);
  /* Optional, with tile: the loop that computes the tile for the prepared
   * `data` by itself (the same bits), or NULL where there is none; fusion
   * calls it directly, one call an op and tile fewer. */
  kc__instr_loop_fn (*tile_loop)(const void* data);
  /* KC__INSTR_ELEMENTWISE: the element types elementwise.c runs it for,
   * operands and result alike (KC__ELEMENTWISE_INT | _FLOAT | _COMPLEX),
   * or KC__ELEMENTWISE_CONVERT. */
  uint32_t elementwise_types;
  /* The CUDA backend runs it as an element-wise kernel of min_operands
   * operands of the result's dims (compile_cuda.c); false: not on CUDA,
   * unless its kind or kc__verify_device says otherwise. */
  bool device_elementwise;
} kc__instr_def;

/* The definition of `op` (the first entry of that op, not a second
 * spelling), or NULL when it is not one of the table's. */
const kc__instr_def* kc__instr_def_find(int32_t op);

/* The definition whose HLO opcode is `name`, or NULL. */
const kc__instr_def* kc__instr_def_find_name(kc_string_view name);

/* The i-th definition of the table (in no particular order), or NULL past
 * the end: for listing them. */
const kc__instr_def* kc__instr_def_at(size_t i);

/* ---- helpers for verify functions ----------------------------------------- */

/* Operand i's shape. */
static inline const kc_shape* kc__instr_operand(const kc_program* p, const kc__instr* in,
                                             size_t i) {
  return p->instrs[in->operands[i]].shape;
}

/* The attribute `name`, or NULL. */
const kc_attr* kc__instr_attr(const kc__instr* in, const char* name);

/* The I64 array attribute `name` into *out (borrowed) and its length;
 * INVALID_ARGUMENT when missing (unless `optional`, which gives count 0)
 * or of another type. */
kc_status* kc__instr_attr_ints(const kc__instr* in, const char* name, bool optional,
                            const int64_t** out, size_t* out_count);

/* The I64 attribute `name`. */
kc_status* kc__instr_attr_int(const kc__instr* in, const char* name, int64_t* out);

/* The string attribute `name`. */
kc_status* kc__instr_attr_string(const kc__instr* in, const char* name, bool optional,
                              kc_string_view* out);

/* The HLO name of `t` ("s32", "f16"), else its DLPack text, in `buf`. */
const char* kc__instr_dtype_text(DLDataType t, char* buf, size_t cap);

/* An array operand or result: INVALID_ARGUMENT for a tuple. */
kc_status* kc__instr_expect_array(const kc__instr* in, const kc_shape* s, const char* what);

/* ---- element types ---------------------------------------------------------- */

/* The element type of `t` (kernels/etype.h) when it is one of the types
 * the numeric kernels are written for (KC__ETYPES: f32 to u64 and pred),
 * else KC__E_NONE. */
int kc__instr_num_type(DLDataType t);

/* The integer at `p` of type `t` (kDLInt or kDLUInt, 8 to 64 bits), an
 * index: a u64 above INT64_MAX reads as INT64_MAX. */
int64_t kc__instr_load_index(const void* p, DLDataType t);

/* The op of a reducer that is `op(p0, p1)` (or `op(p1, p0)`) of its two
 * scalar parameters, for the ops with a native loop (add, multiply,
 * maximum, minimum, and, or); 0 otherwise (instr_reduce.c). */
int32_t kc__simple_reducer(const kc_program* reducer);

/* Compiles `program` (a called computation) with the executable's
 * platform and pool. */
kc_status* kc__prepare_compile(const kc__prepare_ctx* ctx, const kc_program* program,
                               kc_executable** out);

/* Runs an executable kc__prepare_compile made on `inputs` (CPU tensors of
 * its parameter shapes, which the caller built from shapes compile
 * checked) and writes its outputs at out_data (compact buffers of its
 * output shapes, not overlapping the inputs): kc_executable_execute_into
 * without its per-call checks, for kernels that call a computation per
 * element or per iteration (execute.c). */
kc_status* kc__executable_run_called(const kc_executable* exe, const DLTensor* const* inputs,
                                     void* const* out_data);

/* For a kernel that runs a called executable many times in one call (a
 * while loop's condition and body): kc__executable_hold takes a run state
 * of `exe` from its pool (or makes one) and keeps it for the caller until
 * kc__executable_unhold gives it back, so that each run costs no lock;
 * kc__executable_run_held runs `exe` in it as kc__executable_run_called
 * does. A held run remembers the input and output addresses of its last
 * run and rewrites the places that hold them only when they change; with
 * `same_addresses` the caller promises they are those of the run's last
 * run_held, and they are not even compared. A caller that alternates
 * between two sets of buffers may hold one run per set. A run state
 * holds the executable's temporaries (kc__executable_run_bytes tells how
 * many bytes). For an executable on a device, the held run is NULL and
 * run_held runs as run_called does; unhold of NULL is a no-op. hold fails
 * only for want of memory, run_held as the executable's steps do. */
struct kc__run; /* a run state (program/runtime/executable_internal.h) */
kc_status* kc__executable_hold(const kc_executable* exe, struct kc__run** out_run);
kc_status* kc__executable_run_held(const kc_executable* exe, struct kc__run* run,
                                   const DLTensor* const* inputs, void* const* out_data,
                                   bool same_addresses);
void kc__executable_unhold(const kc_executable* exe, struct kc__run* run);
size_t kc__executable_run_bytes(const kc_executable* exe);

/* ---- moving elements ------------------------------------------------------- */

typedef struct kc__box {
  int32_t rank;
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int64_t src_stride[KC_TENSOR_MAX_NDIM];
  int64_t dst_stride[KC_TENSOR_MAX_NDIM];
  int64_t src_offset, dst_offset; /* in elements */
} kc__box;

/* Copies the box; elements of `esize` bytes. */
void kc__box_copy(const kc__box* b, const char* src, char* dst, size_t esize);

/* The box's element count when it is one contiguous run on both sides
 * (kc__box_copy then does one memcpy of that many elements, from
 * src_offset to dst_offset), else -1. */
int64_t kc__box_run(const kc__box* b);

/* broadcast: result[i] = operand[i mapped through `map`] (operand dim k
 * is result dim map[k]), row-major, elements of `esize` bytes; runs of
 * the operand are copied whole and broadcast dimensions copied from what
 * is already written (instr_shape.c). */
void kc__broadcast_copy(const void* operand, int32_t in_rank, const int64_t* in_dims,
                        void* result, int32_t out_rank, const int64_t* out_dims,
                        const int64_t* map, size_t esize);

/* Row-major strides of array shape `s`, in elements, into out[0..rank). */
void kc__instr_strides(const kc_shape* s, int64_t* out);

/* ---- verify functions of the built-in entries (verify.c) ------------------ */

/* Element-wise arithmetic, convert and reshape: operand and result shapes,
 * and the element types elementwise.c runs. */
kc_status* kc__verify_elementwise(const kc_program* p, const kc__instr* in);

/* Broadcast: its dimensions map each operand dim onto an equal result dim. */
kc_status* kc__verify_broadcast(const kc_program* p, const kc__instr* in);

/* ---- the families ----------------------------------------------------------- */

/* Each file of kernels lists its definitions. */
extern const kc__instr_def kc__instr_builtin[];  /* instr_builtin.c: parameter, add, ..., bitcast */
extern const size_t kc__instr_builtin_count;
extern const kc__instr_def kc__instr_select[];   /* instr_select.c: compare, select, clamp, iota */
extern const size_t kc__instr_select_count;
extern const kc__instr_def kc__instr_control[];  /* instr_control.c: while, conditional */
extern const size_t kc__instr_control_count;
extern const kc__instr_def kc__instr_reduce[];   /* instr_reduce.c: reduce */
extern const size_t kc__instr_reduce_count;
extern const kc__instr_def kc__instr_reduce_window[]; /* instr_reduce_window.c: reduce-window */
extern const size_t kc__instr_reduce_window_count;
extern const kc__instr_def kc__instr_math[];     /* instr_math.c: tanh, sqrt, power, and, ... */
extern const size_t kc__instr_math_count;
extern const kc__instr_def kc__instr_shape[];    /* instr_shape.c: transpose, slice, pad, ... */
extern const size_t kc__instr_shape_count;
extern const kc__instr_def kc__instr_dot[];      /* instr_dot.c: dot */
extern const size_t kc__instr_dot_count;
extern const kc__instr_def kc__instr_complex[];  /* instr_complex.c: complex, real, imag */
extern const size_t kc__instr_complex_count;
extern const kc__instr_def kc__instr_sort[];     /* instr_sort.c: sort, topk */
extern const size_t kc__instr_sort_count;
extern const kc__instr_def kc__instr_bits[];     /* instr_bits.c: bitcast-convert, reduce-precision, opt-barrier */
extern const size_t kc__instr_bits_count;
extern const kc__instr_def kc__instr_gather[];   /* instr_gather.c: gather, scatter */
extern const size_t kc__instr_gather_count;
extern const kc__instr_def kc__instr_conv[];     /* instr_conv.c: convolution */
extern const size_t kc__instr_conv_count;
extern const kc__instr_def kc__instr_select_scatter[]; /* instr_select_scatter.c: select-and-scatter */
extern const size_t kc__instr_select_scatter_count;
extern const kc__instr_def kc__instr_fft[];      /* instr_fft.c: fft */
extern const size_t kc__instr_fft_count;
extern const kc__instr_def kc__instr_rng[];      /* instr_rng.c: rng-bit-generator */
extern const size_t kc__instr_rng_count;
extern const kc__instr_def kc__instr_triangular[]; /* instr_triangular.c: triangular-solve */
extern const size_t kc__instr_triangular_count;

#endif /* KCALL_PROGRAM_INSTR_H_ */
