/*
 * kcall/program.h — shapes, programs (an XLA-style HLO module with one
 * entry computation), their builder and text parser, compilation and
 * execution.
 *
 * The life of a program:
 *   kc_program_parse (HLO text) or kc_program_builder_* (C) -> kc_program
 *   kc_program_compile -> kc_executable: every instruction is checked once
 *     (shapes, targets registered for the platform, typed signatures,
 *     aliasing), dead instructions are dropped (side-effecting custom calls
 *     are kept), buffers are planned by liveness with reuse, and typed
 *     handlers (and XLA FFI handlers' stages before execute) are
 *     instantiated;
 *   kc_executable_execute, any number of times, from any number of threads
 *     at once: inputs in, output tensors out; a failed custom call stops the
 *     run with its message and the instruction's name, returns no output and
 *     frees every buffer.
 *
 * Instructions: parameter, constant, tuple, get-tuple-element,
 * custom-call and broadcast have builder calls of their own; element-wise
 * arithmetic, math, bit and compare instructions, select, clamp, convert,
 * bitcast-convert, reduce-precision, and the shape, slicing, dot, reduce,
 * reduce-window, control-flow, sort, topk, fft and rng-bit-generator
 * instructions are the
 * kc_opcode values below (docs/programs.md lists
 * every HLO opcode kcall runs). Arrays are row-major.
 *
 * Element types: the numeric instructions take the integer types and f16,
 * bf16, f32 and f64 where XLA defines them, and c64 and c128 where XLA
 * defines the instruction on complex numbers (arithmetic, abs giving the
 * part type, sign, sqrt, rsqrt, exp, log, tanh, sine, cosine, tan,
 * log-plus-one, exponential-minus-one, power, compare EQ/NE, convert,
 * reduce with add or multiply, dot). f16 and bf16 are computed in f32 and
 * rounded to nearest even once per instruction (a reduce's reducer once
 * per step; a dot accumulates in f32 and rounds once). A dot's result may
 * be of another type than its operands when their values convert to it
 * exactly (s8 x s8 -> s32, bf16 x bf16 -> f32, f32 x f32 -> f64). Any
 * other type is refused by kc_program_compile with UNIMPLEMENTED, naming
 * the instruction and the type.
 *
 * The host contract of each function is stated at the function; what
 * changes on a CUDA device (placement, streams, graphs) is stated once,
 * in the section "CUDA executables" at the end of this header.
 */
#ifndef KCALL_PROGRAM_H_
#define KCALL_PROGRAM_H_

#include "kcall/hlo_opcode.h"
#include "kcall/tensor.h"
#include "kcall/xcall.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/* Shapes                                                                   */
/* ======================================================================== */
/*
 * An array shape (dtype and dims) or a tuple of shapes, nested to any
 * depth. Text form, as HLO writes it: "f32[2,3]", "s32[]", "pred[4]",
 * "(f32[32], (f32[64], f32[128]), f32[256])". Element types take their HLO
 * names (pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128); the
 * kcall names (i32, bool, ...) are accepted too. A layout suffix such as
 * "{1,0}" is accepted when it is the row-major one.
 * Shapes are immutable; each is owned by whoever created it.
 */
typedef struct kc_shape kc_shape;

/* INVALID_ARGUMENT for a negative dim, rank outside [0, KC_TENSOR_MAX_NDIM]
 * or a zero-width dtype; OUT_OF_RANGE when the byte size overflows. */
KC_API kc_status* kc_shape_create_array(DLDataType dtype, const int64_t* dims,
                                        int32_t rank, kc_shape** out_shape);

/* A tuple of copies of `elements` (count may be 0). */
KC_API kc_status* kc_shape_create_tuple(const kc_shape* const* elements,
                                        size_t count, kc_shape** out_shape);

/* A deep copy. */
KC_API kc_status* kc_shape_create_copy(const kc_shape* shape,
                                       kc_shape** out_shape);

/* Parses the text form. INVALID_ARGUMENT with the column and what was
 * expected. */
KC_API kc_status* kc_shape_parse(kc_string_view text, kc_shape** out_shape);

/* Frees a shape and its elements. NULL is a no-op. */
KC_API void kc_shape_destroy(kc_shape* shape);

/* True for a tuple shape; false for an array or NULL. */
KC_API bool kc_shape_is_tuple(const kc_shape* shape);
/* Tuple: number of elements, and the i-th (borrowed; NULL out of range). */
KC_API size_t kc_shape_get_tuple_size(const kc_shape* shape);
KC_API const kc_shape* kc_shape_get_element(const kc_shape* shape,
                                            size_t index);
/* Array: dtype, rank and dims (borrowed; for rank 0, a non-NULL pointer
 * to no dims). For a tuple: a zero dtype, -1 and NULL. */
KC_API DLDataType kc_shape_get_dtype(const kc_shape* shape);
KC_API int32_t kc_shape_get_rank(const kc_shape* shape);
KC_API const int64_t* kc_shape_get_dims(const kc_shape* shape);

/* Number of array leaves (1 for an array). */
KC_API size_t kc_shape_get_leaf_count(const kc_shape* shape);

/* The leaf at pre-order position `index` (borrowed; NULL out of range). */
KC_API const kc_shape* kc_shape_get_leaf(const kc_shape* shape,
                                         size_t index);

/* Bytes of an array, or of all the leaves of a tuple; checked when the
 * shape was created, so this cannot overflow. */
KC_API size_t kc_shape_get_byte_size(const kc_shape* shape);

/* Same structure, dtypes and dims (two NULLs are equal). */
KC_API bool kc_shape_equal(const kc_shape* a, const kc_shape* b);

/* Prints the text form (HLO element type names), snprintf-style. */
KC_API size_t kc_shape_format(const kc_shape* shape, char* buf, size_t cap);

/* ======================================================================== */
/* Programs                                                                 */
/* ======================================================================== */

typedef struct kc_program kc_program;
typedef struct kc_program_builder kc_program_builder;

/* kc_opcode, the HLO opcodes of instructions: kcall/hlo_opcode.h. */

/* XLA's scheduling hint for a custom call; recorded, not yet acted on. */
typedef enum kc_schedule {
  KC_SCHEDULE_NONE = 0,
  KC_SCHEDULE_LATEST = 1,
  KC_SCHEDULE_EARLIEST = 2
} kc_schedule;

/* A result (sub)buffer that is the same memory as an operand (sub)buffer:
 * the call updates that operand in place. A path is a list of tuple
 * indices; an empty path is the whole value. */
typedef struct kc_output_operand_alias {
  const int64_t* output_index;
  size_t output_index_size;
  int32_t operand; /* position among the call's operands */
  const int64_t* operand_index;
  size_t operand_index_size;
} kc_output_operand_alias;

/* Everything a custom-call instruction says. Pointers are borrowed for the
 * call to kc_program_builder_add_custom_call, which copies what it keeps. */
typedef struct kc_custom_call_desc {
  size_t struct_size;
  kc_string_view target;
  const int32_t* operands; /* instruction ids */
  size_t num_operands;
  const kc_shape* result_shape;
  /* Opaque bytes (XLA's backend_config) for the legacy conventions. */
  const void* opaque;
  size_t opaque_size;
  bool has_side_effect; /* kept even when its result is unused */
  const kc_output_operand_alias* aliases;
  size_t num_aliases;
  int32_t schedule;    /* kc_schedule */
  int32_t api_version; /* kc_xcall_api; 0 means ORIGINAL */
  /* Typed attributes for API_VERSION_TYPED (XLA writes them in
   * backend_config as a dictionary); NULL for none. Deep-copied. */
  const kc_attr_dict* attrs;
} kc_custom_call_desc;

/* Creates an empty builder for a program called `name`. */
KC_API kc_status* kc_program_builder_create(kc_string_view name,
                                            kc_program_builder** out_builder);

/* Destroys a builder that was not finished. NULL is a no-op. */
KC_API void kc_program_builder_destroy(kc_program_builder* builder);

/*
 * Each add_* appends one instruction and returns its id (0, 1, ...) in
 * *out_id. `name` may be empty (a name is made up). Operands must be ids
 * returned earlier. Checks made here are local: INVALID_ARGUMENT for an
 * unknown operand id, a duplicate instruction name, an operand count the
 * instruction does not take; shape agreement is checked by
 * kc_program_compile. Shapes are copied.
 */
KC_API kc_status* kc_program_builder_add_parameter(kc_program_builder* b,
                                                   int64_t number,
                                                   const kc_shape* shape,
                                                   kc_string_view name,
                                                   int32_t* out_id);
/* `data` holds the array's bytes, row-major; `size` must equal the
 * shape's byte size (INVALID_ARGUMENT otherwise). Tuple constants are
 * not supported. */
KC_API kc_status* kc_program_builder_add_constant(kc_program_builder* b,
                                                  const kc_shape* shape,
                                                  const void* data,
                                                  size_t size,
                                                  kc_string_view name,
                                                  int32_t* out_id);
KC_API kc_status* kc_program_builder_add_tuple(kc_program_builder* b,
                                               const int32_t* operands,
                                               size_t num_operands,
                                               kc_string_view name,
                                               int32_t* out_id);
KC_API kc_status* kc_program_builder_add_get_tuple_element(
    kc_program_builder* b, int32_t operand, int64_t index,
    kc_string_view name, int32_t* out_id);
/* Elementwise (binary: 2 operands of the result's dims; unary: 1),
 * convert (1 operand, same dims) and reshape (1 operand, same element
 * count), each with its result shape. On pred operands and result, add
 * and maximum are added as KC_OP_OR, multiply and minimum as KC_OP_AND
 * (what XLA computes for them). The same as
 * kc_program_builder_add_instruction with a desc of no attributes and no
 * computations, which it calls; INVALID_ARGUMENT ("expected a known
 * opcode, a result shape and N operands") for another opcode, no result
 * shape or another operand count. */
KC_API kc_status* kc_program_builder_add_op(kc_program_builder* b,
                                            kc_opcode op,
                                            const kc_shape* result_shape,
                                            const int32_t* operands,
                                            size_t num_operands,
                                            kc_string_view name,
                                            int32_t* out_id);
/* broadcast: operand dim i becomes result dim dimensions[i]. */
KC_API kc_status* kc_program_builder_add_broadcast(
    kc_program_builder* b, const kc_shape* result_shape, int32_t operand,
    const int64_t* dimensions, size_t num_dimensions, kc_string_view name,
    int32_t* out_id);
KC_API kc_status* kc_program_builder_add_custom_call(
    kc_program_builder* b, const kc_custom_call_desc* desc,
    kc_string_view name, int32_t* out_id);

/* Any instruction of kc_opcode, with its attributes and the programs it
 * calls. Pointers are borrowed for the call to
 * kc_program_builder_add_instruction, which copies what it keeps and
 * retains the programs. */
typedef struct kc_instruction_desc {
  size_t struct_size;
  int32_t op; /* kc_opcode */
  const kc_shape* result_shape;
  const int32_t* operands; /* instruction ids */
  size_t num_operands;
  /* The attributes the instruction reads, by name (HLO's spelling, as
   * listed in docs/programs.md: `direction` as a string, `dimensions` as
   * an array of I64, ...); NULL for none. Deep-copied. An attribute the
   * instruction does not read is refused by compile. */
  const kc_attr_dict* attrs;
  /* Called computations (a reduce's reducer, a sort's comparator, a
   * while's condition and body, a conditional's branches), each a
   * finished program. */
  kc_program* const* computations;
  size_t num_computations;
} kc_instruction_desc;

/* Appends the instruction `desc` describes (see kc_program_builder_add_op
 * for what is checked here; the operand count, attributes, shapes and
 * called programs are checked by kc_program_compile, which names the
 * instruction). It adds every kc_opcode, kc_program_builder_add_op's
 * included, which it adds as add_op does (pred arithmetic as or and and,
 * the operand count checked here) and which take no attributes and no
 * computations. INVALID_ARGUMENT for a NULL or short desc, an opcode
 * this function does not add (none of kc_opcode's, or parameter,
 * constant, tuple and the other instructions with calls of their own),
 * attributes or computations given to an add_op opcode, or an attribute
 * of an unknown type. */
KC_API kc_status* kc_program_builder_add_instruction(
    kc_program_builder* b, const kc_instruction_desc* desc,
    kc_string_view name, int32_t* out_id);

/* Makes `id` the program's result (default: the last instruction). */
KC_API kc_status* kc_program_builder_set_root(kc_program_builder* b,
                                              int32_t id);

/* Records where an instruction came from, for messages (the parser calls
 * it with 1-based line and column). */
KC_API kc_status* kc_program_builder_set_location(kc_program_builder* b,
                                                  int32_t id, int32_t line,
                                                  int32_t column);

/* Finishes the program. The builder is consumed, whether or not this
 * succeeds. INVALID_ARGUMENT for an empty program or parameter numbers
 * that are not 0..n-1 without gaps or repeats. */
KC_API kc_status* kc_program_builder_finish(kc_program_builder* b,
                                            kc_program** out_program);

/* Parses HLO text: one HloModule with one ENTRY computation holding the
 * instructions above (an instruction that is not supported is an error
 * naming it). The computations a `fusion` or `call` names are inlined
 * where they are called, their instructions named "CALLER/NAME"; a
 * `copy` is its operand. Values are logical and held row-major; layouts
 * are honoured where bytes are reinterpreted (a `bitcast`, the buffers of
 * a custom call, with its operand_layout_constraints, and its result, a
 * tuple of up to 8 arrays included), by transposes the parser adds;
 * tiled layouts are refused. The debug tables of optimized modules
 * (FileNames, FunctionNames, FileLocations, StackFrames) are skipped, as
 * are unknown instruction attributes (metadata, sharding,
 * frontend_attributes, layouts).
 * INVALID_ARGUMENT "line L, column C: expected ..., got ..." on a syntax
 * error.
 *
 * StableHLO (MLIR text, as JAX's `lowered.as_text()` and
 * `Exported.mlir_module()` print it) is read too, told apart by the text
 * itself: MLIR begins with `module`, `func.func` or an alias `#name = `
 * (after blanks and // comments), HLO text with `HloModule`. So is a
 * StableHLO portable artifact (`Exported.mlir_module_serialized`, MLIR
 * bytecode of the VHLO dialect, bytecode versions 5 and 6: StableHLO 0.15
 * on), told by its first bytes "ML\xEFR"; `text` may then hold any bytes,
 * and errors say "StableHLO bytecode, byte N: ..." for one that is cut
 * short or corrupted, UNIMPLEMENTED naming a VHLO op, attribute or type
 * kcall does not read. The entry is
 * the function @main (or the only one); its arguments are the program's
 * parameters, named as the text names them ("arg0"), its results the
 * result (a tuple for several or none); other functions are inlined where
 * they are called. docs/programs.md, "StableHLO", lists the ops read;
 * any other op, a dynamic dimension (symbolic shapes), a token or an
 * element type kcall does not hold is refused: INVALID_ARGUMENT
 * "line L, column C: op chlo.lgamma is not supported ...". The program
 * owns nothing of `text`. */
KC_API kc_status* kc_program_parse(kc_string_view text,
                                   kc_program** out_program);

/* Options of kc_program_parse_with. Zero-initialise them and set
 * struct_size; fields a caller built against an older header leaves out
 * read as zero. */
typedef struct kc_parse_options {
  size_t struct_size;
  /* The shapes of the entry's parameters. A shape-polymorphic StableHLO
   * module (what jax.export writes for symbolic shapes: `tensor<?x8xf32>`,
   * the dimension variables computed with get_dimension_size, checked by
   * shape_assertion custom calls) is compiled for concrete shapes: the
   * reader gives every open dimension its size from these, as jax.export's
   * shape refinement does, evaluating the integer arithmetic the module
   * computes shapes with and turning dynamic_broadcast_in_dim,
   * dynamic_reshape, dynamic_iota, real_dynamic_slice and dynamic_pad into
   * their static forms. parameter_shapes[i] is parameter i's; NULL, or i
   * past num_parameter_shapes, leaves parameter i as its type says (which
   * must then fix every dimension). A shape must be of its parameter's
   * type, open dimensions aside. For HLO text, whose shapes are all fixed,
   * each given shape must be its parameter's. Borrowed for the call. */
  const kc_shape* const* parameter_shapes;
  size_t num_parameter_shapes;
  /* NULL, or a name for each of parameter_shapes: shape i is then the
   * parameter's named parameter_names[i] (as the text names it, "arg0" or
   * "x"; or its number, "0"), and every name must be a parameter's. */
  const char* const* parameter_names;
  /* Appended in 0.1 (read only when struct_size covers them). */
  /* The values of a serialized jax.export's dimension variables
   * (dim_names[i] is dim_values[i], "b" = 32): the parameters' shapes
   * then follow from the export's input avals, which write their dims
   * with them ("b, 8", "2*b"), as jax.export's own call computes them. Only
   * for a serialized export (INVALID_ARGUMENT for any other program, and
   * with parameter_shapes: give one or the other); INVALID_ARGUMENT
   * naming the parameter and the variable for one that a shape needs and
   * that is not given, and naming the expression for one kcall does not
   * evaluate (it reads integers, names, +, - and *). Borrowed for the
   * call. */
  const char* const* dim_names;
  const int64_t* dim_values;
  size_t num_dims;
} kc_parse_options;

/* kc_program_parse with options (NULL: none). Besides kc_program_parse's
 * errors: INVALID_ARGUMENT for a shape that is not of its parameter's
 * type or more shapes than parameters, and, naming the op, line and
 * column, for an op whose result kcall cannot refine, a shape computed
 * from values the module does not know until it runs, or a
 * shape_assertion that fails (with JAX's own message, the dimension
 * values filled in: "Input shapes do not match the polymorphic shapes
 * specification. Expected value >= 1 for dimension variable 'b' ...").
 * Without the shape of a parameter whose type leaves dimensions open,
 * kc_program_parse and this function answer FAILED_PRECONDITION naming
 * the parameter. */
KC_API kc_status* kc_program_parse_with(kc_string_view text, const kc_parse_options* options,
                                        kc_program** out_program);

/* kc_program_parse of the file at `path` (HLO text, as JAX's
 * `lowered.as_text(dialect="hlo")` or `compiled.as_text()` writes it,
 * StableHLO text, as `lowered.as_text()` does, or a portable artifact,
 * `Exported.mlir_module_serialized`), read whole. A file that cannot be opened or read gets
 * kc_status_code_from_errno's code ("cannot open 'f.hlo': No such file or
 * directory"), a directory INVALID_ARGUMENT; parse errors are
 * kc_program_parse's with the context "parsing 'PATH'". INVALID_ARGUMENT
 * for NULL arguments; RESOURCE_EXHAUSTED. *out_program as
 * kc_program_parse's. */
KC_API kc_status* kc_program_parse_file(const char* path,
                                        kc_program** out_program);

/* kc_program_parse_file with kc_program_parse_with's options (NULL: none). */
KC_API kc_status* kc_program_parse_file_with(const char* path, const kc_parse_options* options,
                                             kc_program** out_program);

/* Releases the caller's program. Executables compiled from it keep what
 * they need, so it may be destroyed while they are still in use. NULL is a
 * no-op. */
KC_API void kc_program_destroy(kc_program* program);

/* The module's name (borrowed). */
KC_API const char* kc_program_get_name(const kc_program* program);
/* What the program was read from, for people: "HLO text", "StableHLO
 * text", "StableHLO portable artifact (StableHLO_v1.15.0)" (the
 * artifact's producer), "serialized jax.export (calling convention 10,
 * StableHLO_v1.15.0)"; "built" for one a kc_program_builder made.
 * Borrowed: lives as long as the program. `kcall run --stats` prints it. */
KC_API const char* kc_program_get_format(const kc_program* program);
KC_API size_t kc_program_get_instruction_count(const kc_program* program);
KC_API size_t kc_program_get_parameter_count(const kc_program* program);
/* The shape of parameter `number` (borrowed; NULL out of range). */
KC_API const kc_shape* kc_program_get_parameter_shape(
    const kc_program* program, size_t number);
/* The name of parameter `number` (borrowed; NULL out of range). */
KC_API const char* kc_program_get_parameter_name(const kc_program* program,
                                                 size_t number);
KC_API const kc_shape* kc_program_get_result_shape(const kc_program* program);
/* The name the program's producer gave result `index` (a leaf of
 * kc_program_get_result_shape: the result itself, or element `index` of
 * its tuple): JAX's jax.result_info in StableHLO, "result[0]",
 * "result['logits']". Borrowed, lives as long as the program; NULL when
 * the result has none (HLO text, a built program) or past the results. */
KC_API const char* kc_program_get_output_name(const kc_program* program, size_t index);

/* The attributes of the HLO text that kcall did not read, because they do
 * not change what a program computes (metadata, sharding of one device,
 * frontend_attributes, XLA's backend_config of built-in instructions,
 * precision hints, which kcall exceeds by computing at full precision):
 * how many names, and the `index`-th name (borrowed, lives as long as the
 * program; NULL out of range) with, in *out_count (may be NULL), how many
 * instructions carried it. `kcall run --stats` lists them. */
KC_API size_t kc_program_get_skipped_attribute_count(const kc_program* program);
KC_API const char* kc_program_get_skipped_attribute(const kc_program* program,
                                                    size_t index, size_t* out_count);

/* ======================================================================== */
/* Compile and execute                                                      */
/* ======================================================================== */

typedef struct kc_executable kc_executable;

typedef struct kc_compile_options {
  size_t struct_size;
  kc_platform platform;        /* 0 means host */
  /* Handed to typed handlers and to XLA FFI handlers (their
   * ThreadPool_Schedule), and the pool that large dot, convolution and
   * element-wise instructions (above about 50 microseconds of work) are
   * split across; NULL: the default pool (kcall/runtime.h), started only
   * if the program has such a call or such an instruction. */
  kc_thread_pool* thread_pool;
  /* Appended in 0.1 (read only when struct_size covers them). */
  /* The CUDA device ordinal (DLDevice.device_id) when platform is
   * KC_PLATFORM_CUDA; ignored on the host. */
  int32_t device_id;
  /* KC_COMPILE_* bits. */
  uint32_t flags;
} kc_compile_options;

/* Never capture runs into CUDA graphs (see "CUDA executables"). */
#define KC_COMPILE_NO_CUDA_GRAPH 1u

/* Checks and plans `program` (which may be destroyed afterwards) into an
 * executable the caller owns (kc_executable_destroy). NULL options mean
 * the host and the default thread pool, as for a NULL
 * kc_compile_options.thread_pool; KC_PLATFORM_CUDA: see "CUDA
 * executables". On the host, chains of element-wise instructions (with
 * the broadcasts and reshapes between them) whose intermediate values
 * have one reader each run fused, as one pass over memory a tile at a
 * time, with the same results bit for bit (docs/programs.md,
 * "Compiling"); the environment variable KCALL_FUSION=0, read at each
 * compile, turns that off. Errors name the instruction
 * ("instruction 'add.3' (line 4): operand 1: expected f32[4], got
 * f32[8]"):
 *   INVALID_ARGUMENT     shapes that do not agree, bad aliasing, a typed
 *                        signature that does not match
 *   NOT_FOUND            a custom-call target not registered for the
 *                        platform (with the nearest names). On the host,
 *                        a target "kcall.OP" that is not registered runs
 *                        the op OP when there is one: the first compile
 *                        registers the op's XLA FFI adapter under that
 *                        name (docs/programs.md, "custom-call"). On
 *                        the host, the LAPACK targets JAX emits for
 *                        jnp.linalg (lapack_spotrf_ffi, lapack_dgetrf_ffi,
 *                        lapack_ctrsm_ffi, lapack_zheevd_ffi,
 *                        lapack_sgesdd_ffi, lapack_dgeqrf_ffi,
 *                        lapack_sorgqr_ffi, ...: potrf, getrf, trsm,
 *                        syevd/heevd, gesdd, geqrf, orgqr/ungqr in s, d,
 *                        c, z) are built in, unless a target of that name
 *                        is registered: they run with jaxlib's semantics
 *                        on a LAPACK loaded at the first such compile
 *                        (KCALL_LAPACK_LIBRARY, else the system's
 *                        liblapack.so.3 or OpenBLAS, else
 *                        KCALL_LAPACK_FALLBACK; docs/programs.md, "LAPACK
 *                        custom calls")
 *   RESOURCE_EXHAUSTED   that adapter could not be made (all bound)
 *   FAILED_PRECONDITION  an API version other than the one registered;
 *                        a LAPACK target where no LAPACK loads (naming
 *                        the target, where kcall looked and what to
 *                        install) or the library lacks the routine
 *   UNIMPLEMENTED        a platform with no backend, an unsupported dtype
 *                        for an instruction or for an XLA FFI handler's
 *                        buffer, matrices too large for a LAPACK of
 *                        32-bit integers
 *   any code             a typed handler's INSTANTIATE failed, or an XLA
 *                        FFI handler's instantiate, prepare or initialize
 *                        stage (kcall/xla_ffi.h) */
KC_API kc_status* kc_program_compile(const kc_program* program,
                                     const kc_compile_options* options,
                                     kc_executable** out_executable);

/* Runs the per-instance state deleters and frees the executable. Must not
 * run concurrently with an execution of it. NULL is a no-op. */
KC_API void kc_executable_destroy(kc_executable* executable);

typedef struct kc_executable_info {
  size_t struct_size;          /* set by the caller */
  size_t num_instructions;     /* in the program */
  size_t num_live_instructions; /* after dead-code removal */
  size_t num_inputs;           /* parameter leaves */
  size_t num_outputs;          /* result leaves */
  size_t num_buffers;          /* planned temporary buffers */
  size_t temp_bytes;           /* the per-run arena, after reuse */
  size_t temp_bytes_unshared;  /* what the temporaries would take unshared */
  size_t output_bytes;
  size_t peak_bytes;           /* temp_bytes + output_bytes */
  /* Appended in 0.1. CUDA executables: runs captured into a CUDA graph,
   * and graph launches (replays and the launch after each capture), so
   * far. Zero on the host. */
  uint64_t cuda_graph_captures;
  uint64_t cuda_graph_launches;
} kc_executable_info;

/* Fills `out` up to out->struct_size. */
KC_API void kc_executable_query(const kc_executable* executable,
                                kc_executable_info* out);

/* The i-th input (parameter leaves in parameter order, pre-order within a
 * tuple parameter) and output (result leaves in pre-order) shapes;
 * borrowed, NULL out of range. */
KC_API const kc_shape* kc_executable_get_input_shape(
    const kc_executable* executable, size_t index);
KC_API const kc_shape* kc_executable_get_output_shape(
    const kc_executable* executable, size_t index);

/* The program the executable was compiled from (borrowed; lives as long
 * as the executable). */
KC_API const kc_program* kc_executable_get_program(const kc_executable* executable);

/* The name of the instruction at plan position `index` (0 to
 * num_live_instructions - 1, the order of kc_execute_options.instruction_ns
 * and of the printed plan); borrowed, lives as long as the executable;
 * NULL out of range. */
KC_API const char* kc_executable_get_instruction_name(
    const kc_executable* executable, size_t index);

/* Prints the buffer plan: one line per live instruction with its buffer,
 * offset, size and live range ("fused" for an instruction computed within
 * its fused group's step, which has no buffer). snprintf-style. */
KC_API size_t kc_executable_format_plan(const kc_executable* executable,
                                        char* buf, size_t cap);

typedef struct kc_execute_options {
  size_t struct_size;
  /* Output tensors and the per-run state (the arena of temporaries, the
   * pointer tables and typed frames) come from here (NULL: system). The
   * per-run state is kept by the executable after the run and reused by
   * later runs with the same allocator, so a run allocates only its output
   * tensors; kc_executable_destroy frees it. The allocator must outlive
   * the executable. */
  const kc_allocator* allocator;
  /* When non-NULL: num_live_instructions entries receive each live
   * instruction's time in nanoseconds, in plan order. */
  uint64_t* instruction_ns;
  /* Appended in 0.1 (read only when struct_size covers it). CUDA
   * executables only: the caller's stream (a cudaStream_t) on which the
   * whole run is queued; execute then returns without waiting, and the
   * outputs are ready when the stream reaches that point. NULL: kcall's
   * default stream of the device (kc_device_get_default_stream), and
   * execute waits for the run (reporting an error the device hit) before
   * returning. Ignored on the host. See "CUDA executables" for what a
   * caller's stream must respect. */
  void* stream;
} kc_execute_options;

/* Runs the executable. `inputs` holds num_inputs DLTensors (compact
 * row-major, dtype and dims matching the input shapes; borrowed for the
 * call). On success out_outputs[0..n), n being kc_executable_info's
 * num_outputs, receive owned tensors (kc_object_release each). On failure
 * no output is returned and everything allocated is freed. Thread-safe:
 * several threads may execute one executable at once. Host executables
 * take CPU tensors; for CUDA ones see "CUDA executables".
 *
 *   INVALID_ARGUMENT  wrong input count, or an input whose device, dtype,
 *                     dims or strides do not match (named by position)
 *   RESOURCE_EXHAUSTED  out of memory
 *   any code          a custom call failed: "in custom call 'target'
 *                     (instruction 'name'): message"; on CUDA, an error the
 *                     device or the backend reported (with kcall's default
 *                     stream, also one found when waiting for the run) */
KC_API kc_status* kc_executable_execute(const kc_executable* executable,
                                        const DLTensor* const* inputs,
                                        size_t num_inputs,
                                        const kc_execute_options* options,
                                        kc_tensor** out_outputs);

/* As kc_executable_execute, but the results are written into the
 * caller's `outputs` (num_outputs tensors, borrowed): compact row-major,
 * dtype and dims matching the output shapes, on the executable's device
 * (CPU tensors for a host executable, {kDLCUDA, device_id} for a CUDA
 * one). Nothing is allocated for outputs. On failure the outputs' contents
 * are unspecified. INVALID_ARGUMENT names an output (or input) that does
 * not match, or an output that shares memory with an input or another
 * output (refused: the run would compute a wrong result); other codes as
 * kc_executable_execute. */
KC_API kc_status* kc_executable_execute_into(
    const kc_executable* executable, const DLTensor* const* inputs,
    size_t num_inputs, const kc_execute_options* options,
    const DLTensor* const* outputs, size_t num_outputs);

/* ======================================================================== */
/* CUDA executables                                                         */
/* ======================================================================== */
/*
 * Compiling. kc_program_compile with KC_PLATFORM_CUDA makes an executable
 * for device options->device_id: the CUDA backend is loaded
 * (kcall/device.h), custom-call targets are looked up for CUDA, constants
 * are copied to the device once, temporaries are planned in device
 * memory. Built-in instructions run there only where the backend has a
 * kernel for them: element-wise ops (compare, select and clamp included)
 * for the dtypes it supports, broadcast, iota, and reshape, bitcast, copy,
 * tuple and get-tuple-element, which move no data or become
 * device-to-device copies. Any other instruction (dot, reduce, while,
 * transpose, ...) is refused with UNIMPLEMENTED naming it, its line and
 * "not available on CUDA"; nothing ever runs on the host with device
 * pointers. FAILED_PRECONDITION "no CUDA device: ..." when the backend,
 * the driver or a device is missing; OUT_OF_RANGE for a device_id past
 * the last device.
 *
 * Inputs and outputs. A CUDA executable takes tensors on its device
 * ({kDLCUDA, device_id}), used in place, or host tensors (kDLCPU,
 * kDLCUDAHost), copied to the device through pinned staging memory. Its
 * outputs are tensors on the device (kc_tensor_create on "cuda:N", from
 * options->allocator's host side only for the tensor object);
 * kc_executable_execute_into takes outputs on the device.
 *
 * Streams. Everything a run does is queued on one stream
 * (kc_execute_options.stream). The per-run state (device temporaries,
 * device pointer tables, staging) is pooled like the host's: a state last
 * used on a caller's stream is reused only by a run on that same stream
 * (which the stream orders after it) or after a run on kcall's default
 * stream finished; other runs make their own. So a caller must keep a
 * stream it passed alive, or synchronise it before destroying it, until
 * the work queued there is done; destroying the executable while its
 * work is queued is undefined, as for any device memory. Errors of a run
 * include those the device or the backend reported (with kcall's default
 * stream, also one found when waiting for the run).
 *
 * Graphs. When the compile flags allow it (no KC_COMPILE_NO_CUDA_GRAPH),
 * every custom call of the program is declared graph-safe
 * (KC_XCALL_GRAPH_SAFE at registration, KC_XCALL_SIG_GRAPH_SAFE in a
 * typed signature; built-in instructions always are) and instruction_ns
 * is NULL, runs are captured into CUDA graphs: per run state, keyed by the
 * device addresses of the inputs and outputs. The first run with a given
 * set of addresses runs on the stream; a second run with the same set
 * captures the run into a graph and launches it; later runs replay that
 * graph. A run with other addresses destroys the graph and starts over.
 * Graphs are destroyed with their run state. When the backend cannot
 * capture (capture_begin or capture_end fails), the run goes on the
 * stream and the executable stops trying. kc_executable_info counts
 * captures and launches. Stable replays need kc_executable_execute_into:
 * kc_executable_execute allocates fresh outputs each run, so it replays
 * only when the allocator returns the same addresses.
 *
 * Graphs belong to run states, and runs on different streams take
 * different states (see Streams), so the counts depend on the streams
 * runs use. Runs with the same addresses, on one stream: one capture, then
 * one launch a run. Runs alternating between kcall's default stream and a
 * caller's stream: never a replay. Each run on kcall's stream finds every
 * state last used on the caller's stream still counted as busy there (kcall
 * cannot tell when a caller's stream is done), so it takes an idle state,
 * or makes a new one (device temporaries included, kept until the
 * executable is destroyed), and runs without a graph; the next run on the
 * caller's stream takes that state, which its last run left with the same
 * addresses, and captures it anew (a capture and a launch). So after N
 * such pairs there are N captures, N launches and up to N run states. A
 * caller that wants replays, and a bounded number of run states, keeps an
 * executable's runs on one stream.
 */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_PROGRAM_H_ */
