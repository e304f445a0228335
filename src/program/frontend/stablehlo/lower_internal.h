/* What the files of the StableHLO lowering share (lower.c, lower_regions.c,
 * lower_conv.c, lower_calls.c). Never installed. Each op has one rule in
 * lower.c's table, which builds its instructions through the program
 * builder:
 *   lower.c          the shared helpers below, the ops without regions
 *                    (element-wise, shapes, dot, the dynamic ops of
 *                    shape-polymorphic modules, chlo.erf_inv), the table,
 *                    kc__shlo_lower
 *   lower_regions.c  ops with regions (reduce, windows, sort, scatter,
 *                    while, case/if), gather, calls, tuples
 *   lower_conv.c     convolution
 *   lower_dot.c      dot_general and chlo.ragged_dot
 *   lower_scan.c     chlo.scan
 *   lower_complex.c  complex forms of maximum, minimum, atan2, cbrt and
 *                    logistic
 *   lower_calls.c    custom calls (layouts, aliases, shape_assertion) */
#ifndef KCALL_PROGRAM_STABLEHLO_LOWER_INTERNAL_H_
#define KCALL_PROGRAM_STABLEHLO_LOWER_INTERNAL_H_

#include "program/frontend/expr.h"
#include "program/frontend/stablehlo/stablehlo_internal.h"

/* Attributes being gathered for one instruction; their values live in
 * the module's arena. */
typedef struct kc__shlo_attrs {
  kc_attr a[24];
  size_t n;
  bool full;    /* more were given than a holds */
  kc_attr spare; /* where those go */
} kc__shlo_attrs;

/* One op's rule: what it builds (lower.c's table holds them). */
typedef struct kc__shlo_rule kc__shlo_rule;
typedef kc_status* (*kc__shlo_lower_fn)(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
struct kc__shlo_rule {
  const char* name;
  int32_t opcode;
  kc__shlo_lower_fn fn;
};

/* ---- element-wise decompositions (../expr.h) ---------------------------- */

/* Names an expression's next instruction as the StableHLO reader does
 * (kc__shlo_instr_name of its scope and op, e->what the suffix). */
kc_status* kc__shlo_expr_name(kc__expr* e, kc_string_view* out);

/* A kc__expr building into scope s for op, its names suffixed `what`. */
#define KC__SHLO_EXPR(s, op, what_) \
  ((kc__expr){.b = (s)->b, .name = kc__shlo_expr_name, .ctx = (s), .ctx2 = (op), .what = (what_)})

/* Types held as another and computed in a third (the f8 floats: their bits
 * in u8, computed in f32; quantized types: their storage integers,
 * computed in their expressed type). An op computing with them gets its
 * operands of such a type converted to its computing type
 * (kc__shlo_held_prepare, which also gives each such result its computing
 * type and records it in `pending`), and its results converted back after
 * it (kc__shlo_held_finish: the values from index `first` on). */
typedef struct kc__shlo_held_kind {
  const char *what_in, *what_out; /* suffixes of the instructions' names */
  /* The held type of `shape` (a format, a quantization), or NULL. */
  const void* (*of)(const kc__shlo_module* m, const kc_shape* shape);
  DLDataType (*computed)(const void* how);
  int32_t (*to_computed)(kc__expr* e, int32_t x, const kc_shape* shape, const void* how);
  int32_t (*to_held)(kc__expr* e, int32_t x, const kc_shape* type, const void* how);
} kc__shlo_held_kind;

kc_status* kc__shlo_held_prepare(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_held_kind* k,
                                 kc__buf* pending);
kc_status* kc__shlo_held_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first,
                                const kc__shlo_held_kind* k, kc__buf* pending);

/* Operand i of op replaced by a new value of the scope: instruction `id`,
 * of `shape` (NULL: the operand's own), nothing known of its elements
 * (narrow.c). */
kc_status* kc__shlo_replace_operand(kc__shlo_scope* s, kc__shlo_op* op, size_t i, int32_t id,
                                    const kc_shape* shape);

/* ---- attributes of an instruction (lower.c) ------------------------------- */

/* Appends the I64 array attribute `name` holding v[0..n) (copied). */
kc_status* kc__shlo_attrs_ints(kc__shlo_scope* s, kc__shlo_attrs* at, const char* name,
                               const int64_t* v, size_t n);
void kc__shlo_attrs_int(kc__shlo_attrs* at, const char* name, int64_t v);
void kc__shlo_attrs_bool(kc__shlo_attrs* at, const char* name, bool v);
void kc__shlo_attrs_str(kc__shlo_attrs* at, const char* name, kc_string_view v);

/* The first of two spellings of an attribute (pretty, generic) op has. */
const kc__shlo_item* kc__shlo_either(const kc__shlo_op* op, const char* a, const char* b);

/* INVALID_ARGUMENT: op lacks attribute `what`. */
kc_status* kc__shlo_missing(const kc__shlo_op* op, const char* what);

/* An integer-list attribute (`pretty`, else `generic`) copied under HLO's
 * name `hlo`; refused when missing and `required`. */
kc_status* kc__shlo_copy_ints(kc__shlo_scope* s, const kc__shlo_op* op, kc__shlo_attrs* at,
                              const char* pretty, const char* generic, const char* hlo,
                              bool required);

/* Operands first..first+count-1, known while reading, as the integer-list
 * attributes `names` (the static form's). */
kc_status* kc__shlo_known_attrs(kc__shlo_scope* s, const kc__shlo_op* op, size_t first,
                                const char* const* names, size_t count, kc__shlo_attrs* at);

/* ---- building (lower.c) --------------------------------------------------- */

/* The instruction ids of op's operands [from, from + count), appended. */
kc_status* kc__shlo_operand_ids(kc__shlo_scope* s, const kc__shlo_op* op, size_t from,
                                size_t count, kc__buf* ids);

/* op's result: its one type, or a tuple of them (owned by the module). */
kc_status* kc__shlo_result_shape(kc__shlo_scope* s, const kc__shlo_op* op, bool* tuple,
                                 const kc_shape** out);

/* Adds instruction `opcode` with operands `ids`, attributes and called
 * programs (released here), of op's result shape, and binds op's results. */
kc_status* kc__shlo_emit(kc__shlo_scope* s, const kc__shlo_op* op, int32_t opcode,
                         const kc__buf* ids, const kc__shlo_attrs* attrs, kc_program** programs,
                         size_t num_programs);

/* Every operand, no attributes. */
kc_status* kc__shlo_lower_plain(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);

/* Whether r's op is one HLO element-wise instruction on real values (what
 * a reduce's short form `applies OP` may name). */
bool kc__shlo_rule_is_elementwise(const kc__shlo_rule* r);

/* The first n operands (every one: _with), the attributes and the called
 * programs (released here). */
kc_status* kc__shlo_lower_with_n(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r,
                                 size_t n, const kc__shlo_attrs* attrs, kc_program** programs,
                                 size_t np);
kc_status* kc__shlo_lower_with(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r,
                               const kc__shlo_attrs* attrs, kc_program** programs, size_t np);

/* The rule of an op's name, or NULL. */
const kc__shlo_rule* kc__shlo_find_rule(kc_string_view name);

/* ---- lower_regions.c ------------------------------------------------------ */

/* "padding = dense<[[l, h], ...]>" into padding_low and padding_high. */
kc_status* kc__shlo_window_padding(kc__shlo_scope* s, const kc__lexer* value,
                                   kc__shlo_attrs* at);

/* op's results bound to values computed elsewhere (calls, barriers). */
kc_status* kc__shlo_bind_values(kc__shlo_scope* s, const kc__shlo_op* op,
                                const kc__shlo_value* v, size_t n);

kc_status* kc__shlo_lower_reduce(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_reduce_window(kc__shlo_scope* s, kc__shlo_op* op,
                                        const kc__shlo_rule* r);
kc_status* kc__shlo_lower_select_and_scatter(kc__shlo_scope* s, kc__shlo_op* op,
                                             const kc__shlo_rule* r);
kc_status* kc__shlo_lower_sort(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_map(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
/* uniform_quantize and uniform_dequantize (quant.c). */
kc_status* kc__shlo_lower_uniform_quantize(kc__shlo_scope* s, kc__shlo_op* op,
                                           const kc__shlo_rule* r);
kc_status* kc__shlo_lower_gather(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_dynamic_gather(kc__shlo_scope* s, kc__shlo_op* op,
                                         const kc__shlo_rule* r);
kc_status* kc__shlo_lower_scatter(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_while(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_branches(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_identity(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_call(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_tuple(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_get_tuple_element(kc__shlo_scope* s, kc__shlo_op* op,
                                            const kc__shlo_rule* r);

/* ---- lower_conv.c, lower_calls.c ------------------------------------------ */

/* lower_complex.c: maximum, minimum, atan2, cbrt and logistic, their
 * complex forms built from other instructions, their real ones the HLO
 * instruction's. */
kc_status* kc__shlo_lower_max_min(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_complex_math(kc__shlo_scope* s, kc__shlo_op* op,
                                       const kc__shlo_rule* r);
/* lower_dot.c: dot_general (its algorithm honoured or refused) and
 * chlo.ragged_dot (a ragged lhs dimension; the other modes refused). */
kc_status* kc__shlo_lower_dot(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_ragged_dot(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);

/* lower_scan.c: chlo.scan, unrolled. */
kc_status* kc__shlo_lower_scan(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);

/* narrow.c: bitcast_convert, to and from i1 (one bit there) built from
 * shifts; otherwise the HLO instruction. */
kc_status* kc__shlo_lower_bitcast(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r);
kc_status* kc__shlo_lower_convolution(kc__shlo_scope* s, kc__shlo_op* op,
                                      const kc__shlo_rule* r);
kc_status* kc__shlo_lower_custom_call(kc__shlo_scope* s, kc__shlo_op* op,
                                      const kc__shlo_rule* r);

#endif /* KCALL_PROGRAM_STABLEHLO_LOWER_INTERNAL_H_ */
