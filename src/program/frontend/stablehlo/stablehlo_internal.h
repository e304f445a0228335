/* Internals of the StableHLO text reader, shared by its files. Never
 * installed. The reader is a front end beside the HLO-text parser: it
 * reads MLIR text as JAX prints it (`Lowered.as_text()`,
 * `Exported.mlir_module()`) and builds the same programs, through the
 * program builder, so that everything after parsing serves both.
 *
 *   reader.c   types, values, and one operation in either of MLIR's
 *              forms (pretty or generic) read into a kc__shlo_op
 *   reader_module.c
 *              regions as programs, functions inlined, the module and
 *              its entry; kc__stablehlo_parse
 *   attrs.c    attribute values read from where the op recorded them:
 *              integer lists, enums, struct fields, dense literals
 *   lower*.c   each operation's meaning: the instructions it builds
 *              (lower_internal.h)
 *   refine.c   shape-polymorphic modules refined for concrete shapes
 *   narrow.c   narrow integers (i4, ui4, i2, ui2) held in bytes, kept in
 *              their range
 *   float8.c   the f8, f6 and f4 floats held as their bits
 *
 * How an operation is read: MLIR's pretty forms differ per op, but they
 * are made of the same pieces, so one loop reads any of them into a
 * kc__shlo_op: operands (%x, %x#1), attributes (key = value, <{...}>,
 * {...}), positional items (EQ, [1:2], dense<...>, "name"), a callee
 * (@f), regions ({...}), and the type signature after ':'. Values are
 * not interpreted while reading: the reader records a lexer positioned
 * at each, and lower.c decodes those its operation reads. */
#ifndef KCALL_PROGRAM_STABLEHLO_INTERNAL_H_
#define KCALL_PROGRAM_STABLEHLO_INTERNAL_H_

#include "internal/strmap.h"
#include "kcall/program.h"
#include "program/frontend/float8.h"
#include "program/frontend/lexer.h"

/* The deepest nesting of regions and function calls followed. */
enum { KC__SHLO_MAX_DEPTH = 32 };

/* A function of the module: where its argument list starts. */
typedef struct kc__shlo_func {
  kc_string_view name;
  kc__lexer at; /* at the '(' of its arguments */
  bool active;  /* being inlined now: a function cannot call itself */
} kc__shlo_func;

/* What the reader of one module shares across its scopes. */
typedef struct kc__shlo_module {
  kc_string_view text;
  kc__arena arena; /* names, attribute copies, literal bytes */
  kc__buf shapes;  /* kc_shape*, owned: every type read */
  kc__strmap funcs;
  kc__buf func_list;  /* kc__shlo_func */
  kc__strmap aliases; /* "#name" -> index into alias_list */
  kc__buf alias_list; /* kc__lexer, each at an alias's value */
  /* The types with dynamic dimensions (tensor<?x8xf32>): shape address ->
   * mask of those dimensions (kc__shlo_dynamic). */
  kc__strmap dynamic;
  /* The types of narrow integers (tensor<4xi4>, held in s8 or u8): shape
   * address -> their width in bits (kc__shlo_narrow). */
  kc__strmap narrow;
  /* The types of the f8, f6 and f4 floats (held as their bits in u8):
   * shape address -> their format (kc__shlo_float8). */
  kc__strmap float8;
  /* The results of the op being lowered that it computes in f32 and
   * float8.c encodes after it. */
  kc__buf float8_pending;
  /* The uniform quantized types (tensor<4x!quant.uniform<i8:f32, 0.1:-3>>,
   * held in their storage type): shape address -> index into quants
   * (kc__shlo_quant); the results quant.c quantizes after an op. */
  kc__strmap quant;
  kc__buf quants;
  kc__buf quant_pending;
  /* Each tensor type read, by its text ("4x8xf32") -> index into shapes:
   * a type is made once however often it is written. */
  kc__strmap tensor_types;
  /* The blobs of the builtin dialect's resources ({-# dialect_resources:
   * { builtin: { KEY: "0x..." } } #-}): KEY -> index into resource_list,
   * each a kc__token (the blob's string, in the text). */
  kc__strmap resources;
  kc__buf resource_list;
  /* The entry's results' jax.result_info names (kc_string_view, empty for
   * none; kc_program_get_output_name). */
  kc__buf result_names;
  /* The entry parameters' shapes the caller gave (kc_parse_options). */
  const kc_parse_options* options;
  /* Counts instructions, so that made-up names do not clash. */
  int64_t serial;
  /* The value of the entry's platform index argument, which then is a
   * constant and not a parameter (a serialized jax.export names the
   * platforms it was lowered for); -1: a parameter like any. */
  int32_t platform_index;
} kc__shlo_module;

/* A named value in scope: an instruction of the scope's builder. */
typedef struct kc__shlo_value {
  kc_string_view name; /* "0", "arg1", "0#1" for result 1 of %0 */
  int32_t id;
  const kc_shape* shape; /* borrowed from the module; never dynamic */
  /* Its elements, when known while parsing (a small integer or pred
   * value: a constant, a dimension's size, arithmetic on them): what
   * shapes are computed from in shape-polymorphic modules. NULL: not
   * known. In the module's arena. */
  const int64_t* known;
  /* A constant's bytes (in the arena), so that a region using it from
   * outside gets the same constant; NULL for other values. */
  const void* constant;
} kc__shlo_value;

/* One scope: a function inlined into a builder, or a region made into a
 * program of its own. Names are unique within a function as MLIR prints
 * them, so one map serves a function and the regions it inlines. */
typedef struct kc__shlo_scope {
  kc__shlo_module* m;
  kc_program_builder* b;
  /* A region's enclosing scope, whose constants it may use; NULL for a
   * function. */
  struct kc__shlo_scope* outer;
  kc__strmap names; /* -> index into values */
  kc__buf values;   /* kc__shlo_value */
  kc_string_view prefix; /* of instruction names: the call site's */
  int depth;
  /* The values a terminator returned (indices into values), once read. */
  kc__buf returned;
  bool has_return;
} kc__shlo_scope;

/* A region's argument: "%name: type", before the region or in its ^bb0. */
typedef struct kc__shlo_arg {
  kc__token name;
  const kc_shape* shape;
  /* jax.export's platform index argument ({jax.global_constant =
   * "_platform_index"}), which selects among a module's lowerings. */
  bool platform_index;
} kc__shlo_arg;

/* An attribute or positional item, recorded where its value starts. */
typedef struct kc__shlo_item {
  kc_string_view key; /* empty for a positional item */
  kc__lexer at;
  bool read; /* looked up by the op's rule (kc__shlo_attr) */
} kc__shlo_item;

/* One operation as read. */
typedef struct kc__shlo_op {
  kc__token at;        /* the operation's name, for messages */
  kc_string_view name; /* "stablehlo.add", "func.call", "chlo.erf" */
  kc__token result;    /* its result's name, or an END token */
  int64_t num_results; /* from "%0:2 = "; 1 with a name, 0 without */
  kc__buf result_names; /* kc__token: "%a, %b = " names each result */
  kc__buf operands;    /* int32_t, indices into the scope's values */
  int32_t num_inits;   /* reduce's "(%x init: %c)", chlo.scan's "inits(...)": the inits, last */
  kc__buf iter_names;  /* kc__token: while's "%iterArg = %x" names */
  kc__buf attrs;       /* kc__shlo_item with a key */
  kc__buf words;       /* kc__shlo_item without one, in order */
  kc__buf regions;     /* kc__lexer, each at a region's '{' */
  kc__buf region_args; /* kc__shlo_arg written before the regions */
  int32_t arg_group;   /* reduce's reducer(...) (...): args per group */
  kc__token callee;    /* @name, or an END token */
  kc__buf operand_types; /* const kc_shape*, as the signature gives them */
  kc__buf result_types;  /* const kc_shape* */
  bool functional;       /* the signature was "(...) -> ..." */
  bool has_signature;    /* ": types" was read */
} kc__shlo_op;

/* ---- reader.c, reader_module.c -------------------------------------------- */

/* Reads the type at the current token (tensor<...>, tuple<...>) into a
 * shape the module owns. A dynamic dimension ('?') is 0 in the shape and
 * recorded (kc__shlo_dynamic). */
kc_status* kc__shlo_type(kc__shlo_module* m, kc__lexer* lx, const kc_shape** out);

/* map[shape's address] = value; and the value, or -1 (reader.c). */
kc_status* kc__shlo_shape_map_put(kc__shlo_module* m, kc__strmap* map, const kc_shape* shape,
                                  int32_t value);
int32_t kc__shlo_shape_map_get(const kc__strmap* map, const kc_shape* shape);

/* Records `shape` as a type whose dimensions in `mask` are dynamic. */
kc_status* kc__shlo_mark_dynamic(kc__shlo_module* m, const kc_shape* shape, uint32_t mask);

/* The mask of a type's dynamic dimensions (0 for a static type). */
uint32_t kc__shlo_dynamic(const kc__shlo_module* m, const kc_shape* shape);

/* A new array shape the module keeps (values refer to their shapes). */
kc_status* kc__shlo_module_shape(kc__shlo_module* m, DLDataType dt, const int64_t* dims,
                                 int32_t rank, const kc_shape** out);

/* ---- float8.c ------------------------------------------------------------- */

/* Records `shape` (of u8) as a type of format f; its format, or NULL. */
kc_status* kc__shlo_mark_float8(kc__shlo_module* m, const kc_shape* shape,
                                const kc__f8_format* f);
const kc__f8_format* kc__shlo_float8(const kc__shlo_module* m, const kc_shape* shape);

/* Before op is lowered: nothing for an op that only moves values; for
 * another without regions, its operands of these formats decoded to f32
 * and its results of them given f32 types; any other refused. After it
 * (kc__shlo_float8_finish): the values from index `first` on given those
 * f32 types encoded to their own. */
kc_status* kc__shlo_float8_prepare(kc__shlo_scope* s, kc__shlo_op* op);
kc_status* kc__shlo_float8_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first);

/* ---- quant.c --------------------------------------------------------------- */

/* A uniform quantized element type: a storage integer standing for
 * (storage - zero_point) * scale of the expressed float type, one scale
 * and zero point for the tensor or one per index of dimension `axis`. */
typedef struct kc__shlo_quant {
  DLDataType storage, expressed;
  int64_t storage_min, storage_max;
  int32_t axis; /* -1: per tensor */
  size_t count; /* scales and zero points */
  const double* scales;
  const int64_t* zero_points;
} kc__shlo_quant;

/* "!quant.uniform<...>" (word) read into *out (arrays in the module's
 * arena); INVALID_ARGUMENT at `at` for a form kcall does not read. */
kc_status* kc__shlo_quant_parse(kc__shlo_module* m, const kc__lexer* lx, const kc__token* at,
                                kc_string_view word, kc__shlo_quant* out);

/* Records `shape` (of the storage type) as of quantized type q; its type,
 * or NULL. */
kc_status* kc__shlo_mark_quant(kc__shlo_module* m, const kc_shape* shape,
                               const kc__shlo_quant* q);
const kc__shlo_quant* kc__shlo_quant_of(const kc__shlo_module* m, const kc_shape* shape);

/* Before op is lowered (dequantize_op_quantize, as the specification
 * defines the ops on quantized tensors): its quantized operands
 * dequantized and its quantized results given their expressed types; ops
 * with regions and custom calls on quantized types refused. After it
 * (kc__shlo_quant_finish): the values from index `first` on given those
 * expressed types quantized to their own. uniform_quantize,
 * uniform_dequantize and bitcast_convert are lowered by their rules. */
kc_status* kc__shlo_quant_prepare(kc__shlo_scope* s, kc__shlo_op* op);
kc_status* kc__shlo_quant_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first);

/* ---- narrow.c -------------------------------------------------------------- */

/* Records `shape` (of s8 or u8) as a type of `bits`-wide integers. */
kc_status* kc__shlo_mark_narrow(kc__shlo_module* m, const kc_shape* shape, unsigned bits);

/* The width of a narrow integer type (2 or 4), or 0 for any other type. */
unsigned kc__shlo_narrow(const kc__shlo_module* m, const kc_shape* shape);

/* Before op is lowered: the operands of narrow integers that its
 * instruction would read wrongly held in a byte are brought into form
 * (masked to their bits for shift_right_logical, popcnt and
 * count_leading_zeros; a float clamped to the range for convert), and an
 * op that cannot take them (a custom call; bitcast_convert to another
 * width) is refused. */
kc_status* kc__shlo_narrow_prepare(kc__shlo_scope* s, kc__shlo_op* op);

/* After op is lowered: each of its results from value index `first` on
 * of a narrow type that is not a constant is wrapped into its range (its low bits,
 * sign-extended for a signed type), as arithmetic on the narrow type
 * wraps. */
kc_status* kc__shlo_narrow_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first);

/* A constant's elements of the narrow type `shape` (decoded into bytes)
 * checked against its range and held as kcall holds them. */
kc_status* kc__shlo_narrow_constant(const kc__shlo_module* m, const kc__shlo_op* op,
                                    const kc_shape* shape, void* data, size_t size);

/* The entry parameter `name`, declared of `type`, wrapped into its range
 * when that is a narrow type (the caller's bytes may hold any value). */
kc_status* kc__shlo_narrow_parameter(kc__shlo_scope* s, const kc__token* name,
                                     const kc_shape* type);

/* The type as HLO writes shapes, '?' for a dynamic dimension
 * ("f32[?,8]"), snprintf-style. */
size_t kc__shlo_format_type(const kc__shlo_module* m, const kc_shape* type, char* buf, size_t cap);

/* Whether a value of shape `value` has the type `type` (whose dynamic
 * dimensions match any size). */
bool kc__shlo_type_matches(const kc__shlo_module* m, const kc_shape* type, const kc_shape* value);

/* The value at index i of the scope. */
static inline const kc__shlo_value* kc__shlo_value_at(const kc__shlo_scope* s, int32_t i) {
  return (const kc__shlo_value*)(const void*)s->values.data + i;
}

/* Operand i of op, as a value of the scope. */
static inline const kc__shlo_value* kc__shlo_operand(const kc__shlo_scope* s,
                                                     const kc__shlo_op* op, size_t i) {
  return kc__shlo_value_at(s, ((const int32_t*)(const void*)op->operands.data)[i]);
}

static inline size_t kc__shlo_num_operands(const kc__shlo_op* op) {
  return op->operands.size / sizeof(int32_t);
}

static inline size_t kc__shlo_num_result_types(const kc__shlo_op* op) {
  return op->result_types.size / sizeof(const kc_shape*);
}

static inline const kc_shape* kc__shlo_result_type(const kc__shlo_op* op, size_t i) {
  return ((const kc_shape* const*)(const void*)op->result_types.data)[i];
}

/* Binds `name` (a view into the text or the module's arena) to an
 * instruction of the scope. */
kc_status* kc__shlo_bind(kc__shlo_scope* s, kc_string_view name, int32_t id,
                         const kc_shape* shape);

/* Binds `name` to the value v (its instruction, shape and known elements). */
kc_status* kc__shlo_bind_value(kc__shlo_scope* s, kc_string_view name, const kc__shlo_value* v);

/* The value `name` of the scope, or NULL. */
kc__shlo_value* kc__shlo_lookup(kc__shlo_scope* s, kc_string_view name);

/* Whether `name` is one of op's results ("%0", "%0#1", or one of its
 * "%a, %b = " names). */
bool kc__shlo_is_result(const kc__shlo_op* op, kc_string_view name);

/* Binds the op's results: result i of a tuple-valued instruction `id`
 * through a get-tuple-element each when `tuple`, else `id` itself. */
kc_status* kc__shlo_bind_results(kc__shlo_scope* s, const kc__shlo_op* op, int32_t id,
                                 bool tuple);

/* A name for the instruction an op builds (the op's result name, with the
 * scope's prefix; made up when the op has none). */
kc_status* kc__shlo_instr_name(kc__shlo_scope* s, const kc__shlo_op* op, const char* suffix,
                               kc_string_view* out);

/* The region at `at` ('{') as a program of its own: `args` are its
 * parameters unless the region names its own (^bb0(...)); `captured`
 * values of `outer` it uses, a parameter each after them. *out_program
 * is the caller's. `what` names the region in messages. */
kc_status* kc__shlo_region_program(kc__shlo_scope* outer, const kc__lexer* at,
                                   const kc__shlo_arg* args, size_t num_args,
                                   const char* what, kc_program** out_program);

/* The region at `at` as a program taking ONE tuple parameter: the
 * region's arguments `args` (unless it names its own), then `captures`
 * (indices into outer's values), as elements; it returns its result, or a
 * tuple of them when `tuple_result` (with the captures after them when
 * `return_captures`: a while's body). */
kc_status* kc__shlo_region_tuple_program(kc__shlo_scope* outer, const kc__lexer* at,
                                         const kc__shlo_arg* args, size_t num_args,
                                         const int32_t* captures, size_t num_captures,
                                         bool tuple_result, bool return_captures,
                                         const char* what, kc_program** out_program);

/* The values of `outer` a region uses without defining them, in order of
 * first use (indices into outer's values), into *out (kc__buf of int32_t). */
kc_status* kc__shlo_region_captures(kc__shlo_scope* outer, const kc__lexer* at,
                                    kc__buf* out);

/* Inlines the region at `at` (its '{') into the scope, its block's
 * arguments bound to args[0..n) (values, whose types must match the
 * arguments'), its instructions named "SITE/LABEL/NAME"; the values it
 * returns are appended to *out_results (kc__shlo_value). The region may
 * use the scope's values. */
kc_status* kc__shlo_inline_region(kc__shlo_scope* s, const kc__shlo_op* op, const kc__lexer* at,
                                  const kc__shlo_value* args, size_t n, const char* label,
                                  kc__buf* out_results);

/* Inlines function `callee` into the scope with `args` (indices into the
 * scope's values) as its arguments; its returned values are appended to
 * *out_results (kc__shlo_value, without names). */
kc_status* kc__shlo_inline_func(kc__shlo_scope* s, const kc__shlo_op* op, const kc__token* callee,
                                const int32_t* args, size_t num_args, kc__buf* out_results);

/* INVALID_ARGUMENT "line L, column C: <message>" at `at`. */
kc_status* kc__shlo_fail(const kc__token* at, const char* fmt, ...) KC_PRINTF(2, 3);

/* ---- reader.c, for reader_module.c ---------------------------------------- */

/* The current token is "->" (consumed by kc__shlo_expect_arrow, which
 * refuses anything else). */
bool kc__shlo_is_arrow(const kc__lexer* lx);
kc_status* kc__shlo_expect_arrow(kc__lexer* lx);

/* Skips `loc(...)` when it is the current token. */
kc_status* kc__shlo_skip_loc(kc__lexer* lx);

/* kc__buf_append, RESOURCE_EXHAUSTED when out of memory. */
kc_status* kc__shlo_append(kc__buf* b, const void* data, size_t n);

/* "%0#1": the name of result k of `base`, in the module's arena. */
kc_status* kc__shlo_result_key(kc__shlo_module* m, kc_string_view base, int64_t k,
                               kc_string_view* out);

/* Whether the '{' at the current token opens a region rather than an
 * attribute dictionary. */
bool kc__shlo_opens_region(const kc__lexer* lx);

/* "(%a: type loc(..), ...)": arguments, appended to `out` (kc__shlo_arg). */
kc_status* kc__shlo_read_args(kc__shlo_module* m, kc__lexer* lx, kc__buf* out);

/* The operations of a block up to its '}' (consumed), each lowered; the
 * terminator's operands become the scope's returned values. */
kc_status* kc__shlo_read_block(kc__shlo_scope* s, kc__lexer* lx);

/* The returned values of a scope (indices into its values), *n of them. */
const int32_t* kc__shlo_returned(const kc__shlo_scope* s, size_t* n);

/* Frees what a scope holds (not its builder). */
void kc__shlo_scope_free(kc__shlo_scope* s);

/* ---- attrs.c ------------------------------------------------------------- */

/* The attribute `key` of op, or NULL; marks it read. After an op's rule
 * has built it, an attribute no rule read is refused unless it is one
 * that does not change what runs on one device (kc__shlo_lower). */
const kc__shlo_item* kc__shlo_attr(const kc__shlo_op* op, const char* key);

/* Positional item i, or NULL. */
const kc__shlo_item* kc__shlo_word(const kc__shlo_op* op, size_t i);

/* The value at `at` resolved through an attribute alias (#name). */
kc__lexer kc__shlo_resolve(kc__shlo_module* m, const kc__lexer* at);

/* Integers, flattened, from any of: [1, [2, 3]], array<i64: 1, 2>,
 * dense<[1, 2]> : tensor<2xi64>, a splat dense<1> : tensor<3xi64>, or a
 * single 1 : i64. At most `cap`; `what` names them in messages. */
kc_status* kc__shlo_ints(kc__shlo_module* m, const kc__lexer* at, const char* what,
                         int64_t* out, size_t cap, size_t* out_count);

/* One integer (1, 1 : i64). */
kc_status* kc__shlo_int(kc__shlo_module* m, const kc__lexer* at, const char* what,
                        int64_t* out);

/* true or false. */
kc_status* kc__shlo_bool(kc__shlo_module* m, const kc__lexer* at, const char* what, bool* out);

/* The blob the module's builtin dialect resources hold under `key`, or
 * NULL (dense_resource<KEY>). */
const kc__token* kc__shlo_resource(const kc__shlo_module* m, kc_string_view key);

/* An enumeration's word: LT, or #stablehlo<comparison_direction LT>. */
kc_status* kc__shlo_enum(kc__shlo_module* m, const kc__lexer* at, const char* what,
                         kc_string_view* out);

/* A string ("..."), decoded into the module's arena. */
kc_status* kc__shlo_string(kc__shlo_module* m, const kc__lexer* at, const char* what,
                           kc_string_view* out);

/* Field `field` of a struct attribute (#stablehlo.gather<a = [1], b = 2>,
 * or the bare <a = 1> of a pretty form),
 * positioned at its value; false when the struct does not give it. */
kc_status* kc__shlo_field(kc__shlo_module* m, const kc__lexer* at, const char* field,
                          kc__lexer* out, bool* out_found);

/* The bytes of a dense literal (dense<...>, at "dense") for `shape`: its
 * elements row-major at the element type's width, into the arena. */
kc_status* kc__shlo_dense(kc__shlo_module* m, const kc__lexer* at, const kc_shape* shape,
                          void** out_data, size_t* out_size);

/* Skips one attribute value at the current token: balanced groups,
 * <...>, and, when `typed` (inside a dictionary), a trailing ": type". */
kc_status* kc__shlo_skip_value(kc__lexer* lx, bool typed);

/* ---- refine.c ------------------------------------------------------------ */

/* Makes the result types of op that leave dimensions open concrete, from
 * its operands' shapes, attributes and known values; an op whose results
 * kcall cannot refine so is refused, naming it. Nothing for static types. */
kc_status* kc__shlo_refine(kc__shlo_scope* s, kc__shlo_op* op);

/* Makes op's result type i the shape of `dims` where the type leaves
 * dimensions open (its element type kept); a dimension the type fixes
 * must be the one given. */
kc_status* kc__shlo_refine_result(kc__shlo_scope* s, kc__shlo_op* op, size_t i,
                                  const int64_t* dims, int32_t rank);

/* After op is built: its result's elements, when its operands' are known
 * and it is arithmetic, a comparison, a conversion, a reshape, a
 * concatenation or a slice of small integers. */
kc_status* kc__shlo_fold(kc__shlo_scope* s, const kc__shlo_op* op);

/* The dimension numbers of a dot (lower_dot.c). */
typedef struct kc__shlo_dot_numbers {
  int64_t lhs_batch[KC_TENSOR_MAX_NDIM], rhs_batch[KC_TENSOR_MAX_NDIM];
  int64_t lhs_contract[KC_TENSOR_MAX_NDIM], rhs_contract[KC_TENSOR_MAX_NDIM];
  size_t num_batch, num_rhs_batch, num_contract, num_rhs_contract;
} kc__shlo_dot_numbers;

/* op's dimension numbers, from the struct attribute `attr`
 * (#stablehlo.dot<...>, #chlo.ragged_dot<...>) or the pretty form's
 * batching_dims and contracting_dims; INVALID_ARGUMENT when the two sides
 * name different counts. */
kc_status* kc__shlo_dot_dims(kc__shlo_scope* s, const kc__shlo_op* op, const char* attr,
                             kc__shlo_dot_numbers* d);

/* Whether op is the StableHLO or CHLO op `name` ("convert"), in either
 * of MLIR's forms. */
bool kc__shlo_op_is(const kc__shlo_op* op, const char* name);

/* Records the elements of the value `name` (n = its element count). */
kc_status* kc__shlo_set_known(kc__shlo_scope* s, kc_string_view name, const int64_t* values,
                              size_t n);

/* The known elements of operand i, or NULL. */
const int64_t* kc__shlo_known(const kc__shlo_scope* s, const kc__shlo_op* op, size_t i);

/* The known elements of operand i (at most cap), or INVALID_ARGUMENT
 * saying the shape depends on a value not known while reading. */
kc_status* kc__shlo_known_ints(const kc__shlo_scope* s, const kc__shlo_op* op, size_t i,
                               int64_t* out, size_t cap, size_t* count);

/* ---- lower.c ------------------------------------------------------------- */

/* Builds what `op` computes into the scope and binds its results. */
kc_status* kc__shlo_lower(kc__shlo_scope* s, kc__shlo_op* op);

/* ---- the entry point (reader_module.c) ----------------------------------- */

/* True when `text` looks like MLIR (its first token is "module",
 * "func.func", or an alias "#..."), not HLO text. */
bool kc__stablehlo_detect(kc_string_view text);

/* kc_program_parse_with for StableHLO text (options checked and complete:
 * struct_size is the current one). */
kc_status* kc__stablehlo_parse(kc_string_view text, const kc_parse_options* options,
                               kc_program** out_program);

/* The same with the entry's platform index argument bound to
 * `platform_index` (>= 0; -1: left a parameter): the module's parameters
 * are then its other arguments, numbered from 0, which the options'
 * shapes refer to. */
kc_status* kc__stablehlo_parse_for(kc_string_view text, const kc_parse_options* options,
                                   int32_t platform_index, kc_program** out_program);

/* The shape options give parameter `index` named `name`, or NULL. */
const kc_shape* kc__given_shape(const kc_parse_options* o, size_t index, const char* name);

/* INVALID_ARGUMENT for a name of options' that no parameter has (names
 * of the parameters: name(i) for i < n). */
kc_status* kc__check_given_names(const kc_parse_options* o, size_t n,
                                 const char* (*name)(const void* ctx, size_t i), const void* ctx);

#endif /* KCALL_PROGRAM_STABLEHLO_INTERNAL_H_ */
