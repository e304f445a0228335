/* Internals of the HLO-text parser shared between its files. Never
 * installed. The parser's files, each with its section below:
 *   parse.c             modules, computations and instructions;
 *                       kc_program_parse
 *   parse_shape.c       shapes and the layouts written in them;
 *                       kc_shape_parse
 *   parse_opcodes.c     opcode lookup and lists, from the instruction table
 *   parse_inline.c      called computations: inlined, or programs
 *   parse_layout_rewrite.c
 *                       layouts other than row-major, as transposes
 *   parse_constant.c    the literals of constants
 *   parse_attrs.c       ", key=value" attributes of an instruction
 *   parse_attrs_table.c attributes of kernel instructions (KC__INSTR_KERNEL)
 *   parse_typed_attrs.c typed attribute dictionaries (backend_config)
 *   lexer.c             the tokenizer and the helpers all of them use */
#ifndef KCALL_PROGRAM_PARSE_INTERNAL_H_
#define KCALL_PROGRAM_PARSE_INTERNAL_H_

#include "internal/strmap.h"
#include "kcall/program.h"
#include "program/frontend/lexer.h"
#include "program/instr/instr.h"

/* ---- shapes (parse_shape.c) ---------------------------------------------- */

/* The layouts of a shape's array leaves as written. kcall computes on
 * logical values, so a layout matters only where bytes are reinterpreted:
 * a bitcast, and the buffers a custom call sees. */
enum { KC__LAYOUT_LEAVES = 8, KC__LAYOUT_RANK = 8 };

typedef struct kc__layouts {
  size_t leaves;     /* array leaves seen, in pre-order */
  size_t nondefault; /* of them, with a layout other than row-major */
  /* minor_to_major of the first leaf (the array, for an array shape) */
  int8_t first[KC_TENSOR_MAX_NDIM];
  bool first_nondefault;
  /* minor_to_major of the first KC__LAYOUT_LEAVES leaves and whether
   * each is other than row-major: a custom call's tuple result (the
   * linear-algebra calls JAX emits return up to five arrays). */
  int8_t leaf[KC__LAYOUT_LEAVES][KC__LAYOUT_RANK];
  bool leaf_nondefault[KC__LAYOUT_LEAVES];
  /* An integer type narrower than a byte (s2, s4, u2, u4), held one to a
   * byte of s8 or u8 (parse_narrow.c): the first leaf's bits (0: none),
   * and whether any leaf has one. */
  uint8_t first_narrow;
  bool any_narrow;
  /* An f8, f6 or f4 float, held as its bits in u8 (parse_float8.c): the
   * first leaf's format (kc__f8_index + 1; 0: none), and whether any leaf
   * has one. */
  uint8_t first_f8;
  bool any_f8;
} kc__layouts;

/* An array shape as written, before it becomes a kc_shape: operands
 * repeat the shapes of their instructions, and comparing those needs no
 * allocation. */
typedef struct kc__array_text {
  kc__token start;
  DLDataType dtype;
  uint8_t narrow; /* s2, s4, u2, u4: their bits (dtype s8 or u8); else 0 */
  uint8_t f8;     /* an f8, f6 or f4 float (dtype u8): kc__f8_index + 1; else 0 */
  int32_t rank;
  int64_t dims[KC_TENSOR_MAX_NDIM];
} kc__array_text;

/* A shape at the current token: an array, or a tuple nested at most
 * KC__PARSE_MAX_DEPTH - depth deep. Layouts other than row-major are
 * recorded in `layouts`, or refused when it is NULL. */
kc_status* kc__parse_shape(kc__lexer* lx, int depth, kc__layouts* layouts,
                           kc_shape** out);

/* An array shape as written, without making it. */
kc_status* kc__parse_array_text(kc__lexer* lx, kc__layouts* layouts,
                                kc__array_text* out);

/* The kc_shape of an array shape as written; messages cite where it was. */
kc_status* kc__array_text_create(const kc__lexer* lx, const kc__array_text* a,
                                 kc_shape** out);

/* True when the array shape as written is `s` (layouts aside). */
bool kc__array_text_equal(const kc__array_text* a, const kc_shape* s);

/* ---- opcodes (parse_opcodes.c) ------------------------------------------- */

/* The instruction table's entry (program/instr/instr.h) whose HLO opcode is
 * `word`, or NULL; its kind says how the parser handles it. */
const kc__instr_def* kc__hlo_opcode_find(kc_string_view word);

/* Every opcode the parser reads, comma-separated, into buf (for messages). */
void kc__hlo_opcode_list(char* buf, size_t cap);

/* The attribute naming the computation a fusion or call runs. */
const char* kc__hlo_callee_attr(const kc__instr_def* op);

/* ---- the parser's state -------------------------------------------------- */

/* A computation other than the entry: where its body starts, so that each
 * fusion or call that names it parses it again, inlined (its parameters
 * are the caller's operands). */
typedef struct kc__hlo_computation {
  kc_string_view name;
  kc__lexer at; /* at the body's '{' */
  bool active;  /* being parsed now: a computation cannot call itself */
  /* As a program of its own, for the instructions that call it (reduce,
   * while, conditional); made on first use, released with the module. */
  kc_program* program;
} kc__hlo_computation;

/* The computations of a module, shared by the parsers of its scopes. */
typedef struct kc__hlo_module {
  kc_program_builder* top; /* the entry's: where skipped attributes are counted */
  kc__strmap names; /* name -> index into `computations` */
  kc__buf computations; /* kc__hlo_computation */
} kc__hlo_module;

/* What the parser remembers of an instruction once it is built. */
typedef struct kc__hlo_value {
  kc_string_view name;
  kc_shape* shape; /* owned: the shape the text gives it */
  int32_t id;
  int32_t line;
  /* Its layout as written: minor_to_major for an array; for a tuple only
   * whether a leaf has a non-default one. */
  int8_t m2m[KC_TENSOR_MAX_NDIM];
  bool nondefault;
  uint8_t narrow; /* an array of s2, s4, u2 or u4: its bits (parse_narrow.c) */
  uint8_t f8;     /* an array of an f8, f6 or f4 float: kc__f8_index + 1 (parse_float8.c) */
} kc__hlo_value;

/* The parser of one scope: the entry computation, an inlined one, or
 * one made into a program of its own. */
typedef struct kc__hlo_parser {
  kc__lexer lx;
  kc_program_builder* b;
  kc__strmap names; /* name -> index into `values` */
  kc__buf values;   /* kc__hlo_value */
  kc__buf operands; /* int32_t ids of the instruction being parsed */
  kc__buf operand_values; /* int32_t, the same operands as `values` indices */
  kc__buf path;     /* int64_t, a list being parsed */
  kc__buf literal;  /* a constant's bytes */
  kc__arena tmp;    /* what one instruction needs until it is added */
  int32_t root;     /* index into `values`; -1 until a ROOT */
  kc__hlo_module* module;
  /* An inlined computation's scope: its parameters are these instructions
   * (with these shapes), and the names of what it builds are prefixed
   * with the calling instruction's ("fusion.1/add.0"). */
  const int32_t* args;
  kc_shape* const* arg_shapes;
  size_t num_args;
  kc_string_view prefix;
  bool inlined; /* parameters are bound to args, not added */
  int depth;
} kc__hlo_parser;

/* The value at `index` of p->values (as p->names maps a name to). */
static inline kc__hlo_value* kc__hlo_value_at(const kc__hlo_parser* p, int32_t index) {
  return (kc__hlo_value*)(void*)p->values.data + index;
}

/* Where the backend_config of a custom call was. */
typedef enum kc__config_kind {
  KC__CONFIG_NONE,
  KC__CONFIG_STRING, /* "...": decoded into tmp */
  KC__CONFIG_BRACES  /* {...}: the text as written */
} kc__config_kind;

/* One instruction while it is parsed. */
typedef struct kc__hlo_instr {
  kc__token name_tok;
  kc__token shape_tok;
  kc__token opcode_tok;
  const kc__instr_def* op; /* its entry in the instruction table (program/instr/instr.h) */
  kc_shape* shape; /* owned until it moves into a kc__hlo_value */
  uint32_t seen;   /* attributes already given, by bit */
  int64_t index;   /* get-tuple-element */
  const int64_t* dims; /* broadcast */
  size_t num_dims;
  /* custom-call */
  kc_string_view target;
  int32_t api_version;
  int32_t schedule;
  bool has_side_effect;
  kc__config_kind config_kind;
  kc__token config_tok;
  kc_string_view config;
  const kc_output_operand_alias* aliases;
  size_t num_aliases;
  /* fusion (calls=) and call (to_apply=) */
  kc__token callee;
  /* a dot's algorithm=dot_L_R_A (kc__apply_dot_algorithm) */
  kc__token algorithm;
  /* a KC__INSTR_KERNEL instruction: the attributes read */
  kc__buf attrs; /* kc_attr, their values in the parser's tmp */
  kc__layouts layouts; /* of its result shape */
  /* operand_layout_constraints of a custom call: kc__hlo_constraint, one
   * per operand written */
  kc__buf constraints;
  /* Its called computations: kc__hlo_callee, by the attribute naming each. */
  kc__buf callees;
} kc__hlo_instr;

/* An operand_layout_constraints entry. */
typedef struct kc__hlo_constraint {
  int8_t m2m[KC_TENSOR_MAX_NDIM];
  bool nondefault;
} kc__hlo_constraint;

/* A computation a kernel instruction of the table calls. */
typedef struct kc__hlo_callee {
  kc_string_view attr;
  kc__token name; /* the computation's, as written */
  kc_program* program; /* the computation's, borrowed */
} kc__hlo_callee;

/* The bits of kc__hlo_instr.seen: attributes given once at most. */
enum {
  KC__SEEN_INDEX = 1u << 0,
  KC__SEEN_DIMENSIONS = 1u << 1,
  KC__SEEN_TARGET = 1u << 2,
  KC__SEEN_API = 1u << 3,
  KC__SEEN_CONFIG = 1u << 4,
  KC__SEEN_SIDE_EFFECT = 1u << 5,
  KC__SEEN_ALIASING = 1u << 6,
  KC__SEEN_SCHEDULE = 1u << 7,
  KC__SEEN_CALLEE = 1u << 8,
  KC__SEEN_CONSTRAINTS = 1u << 9,
  KC__SEEN_ALGORITHM = 1u << 10
};

/* The operands of the instruction being parsed: how many, their ids. */
static inline size_t kc__num_operands(const kc__hlo_parser* p) {
  return p->operands.size / sizeof(int32_t);
}

static inline const int32_t* kc__operand_ids(const kc__hlo_parser* p) {
  return (const int32_t*)(const void*)p->operands.data;
}

/* The value operand i of the instruction being parsed refers to. */
static inline const kc__hlo_value* kc__operand_value(const kc__hlo_parser* p, size_t i) {
  return kc__hlo_value_at(p, ((const int32_t*)(const void*)p->operand_values.data)[i]);
}

/* ---- instructions and scopes (parse.c) ----------------------------------- */

/* "{ instructions }": the body of a computation, at its '{'. Without a
 * ROOT the last instruction is the result, as in XLA. */
kc_status* kc__parse_scope(kc__hlo_parser* p);

/* Frees what a parser of one scope holds (not the builder). */
void kc__parser_free(kc__hlo_parser* p);

/* "<opcode> NAME: expected attribute <attr>, got none" at the opcode. */
kc_status* kc__missing_attr(kc__hlo_parser* p, const kc__hlo_instr* ins,
                            const char* attr);

/* The shape the instruction takes from elsewhere (`derived`, which `how`
 * describes) must be the one the text gives it. */
kc_status* kc__check_shape(kc__hlo_parser* p, const kc__hlo_instr* ins,
                           const kc_shape* derived, const char* how);

/* ---- called computations (parse_inline.c) -------------------------------- */

/* The name an instruction of an inlined computation gets in the program:
 * "caller/name", so that two inlinings of one computation do not clash. */
kc_status* kc__scoped_name(kc__hlo_parser* p, kc_string_view* name);

/* A parameter of an inlined computation: the caller's operand `number`,
 * which must have the parameter's shape. */
kc_status* kc__bind_parameter(kc__hlo_parser* p, const kc__hlo_instr* ins,
                              int64_t number, int32_t* out_id);

/* A fusion or call: the called computation parsed again in a scope of its
 * own, its parameters bound to the operands; the instruction is its ROOT. */
kc_status* kc__inline_call(kc__hlo_parser* p, kc__hlo_instr* ins, int32_t* out_id);
/* The computation `callee` names parsed again, its parameters bound to
 * ids (of `shapes`, n of them), its instructions named "SCOPE/NAME"; its
 * ROOT, which must have shape `expected`, into *out_id. For fusion, call
 * and a scan's steps. */
kc_status* kc__inline_computation(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                  const kc__token* callee, const int32_t* ids,
                                  kc_shape* const* shapes, size_t n, kc_string_view scope,
                                  const kc_shape* expected, int32_t* out_id);
/* An instruction of kind KC__INSTR_EXPANDED (map, mulhi), built from
 * others (parse_expand.c). */
/* INVALID_ARGUMENT at the opcode unless the instruction has `want`
 * operands. */
kc_status* kc__expect_operand_count(kc__hlo_parser* p, const kc__hlo_instr* ins, size_t want);
/* A dot's algorithm (algorithm=dot_bf16_bf16_f32, ...): its operands
 * rounded to its precision types where they are wider (the operand ids
 * replaced); INVALID_ARGUMENT naming an algorithm kcall does not honour
 * (more than one product per pair, f8, an accumulation type the dot does
 * not accumulate in). */
kc_status* kc__apply_dot_algorithm(kc__hlo_parser* p, kc__hlo_instr* ins);
/* Integer types narrower than a byte (parse_narrow.c). Before an
 * instruction with such operands or result is built: what kcall cannot
 * hold in bytes refused (a custom call, a bitcast of another width, an
 * rng-bit-generator), the operands a few instructions read the upper
 * bits of masked, a float converted to one clamped. After: its result
 * wrapped into the narrow type's range (*id replaced). A constant's
 * literal is checked against the range. */
kc_status* kc__narrow_prepare(kc__hlo_parser* p, kc__hlo_instr* ins);
kc_status* kc__narrow_finish(kc__hlo_parser* p, kc__hlo_instr* ins, int32_t* id);
kc_status* kc__narrow_constant(kc__hlo_parser* p, const kc__hlo_instr* ins, const void* literal,
                               size_t size);
/* The f8, f6 and f4 floats (parse_float8.c), held as their bits in u8.
 * Before an instruction is built: those that only move values run on the
 * bits; others computing with them get their operands decoded to f32 and,
 * with a result of one, the result's shape made f32 (*saved keeps the
 * instruction's own, NULL when nothing changed); custom calls, rng,
 * fft, triangular-solve and topk of them refused. After
 * (kc__f8_finish): that result encoded, the shape given back. A
 * constant's literal is read as floats and encoded. */
kc_status* kc__f8_prepare(kc__hlo_parser* p, kc__hlo_instr* ins, kc_shape** saved);
kc_status* kc__f8_finish(kc__hlo_parser* p, kc__hlo_instr* ins, kc_shape* saved, int32_t* id);
kc_status* kc__f8_constant(kc__hlo_parser* p, kc__hlo_instr* ins, void** data, size_t* size);
kc_status* kc__build_expanded(kc__hlo_parser* p, kc__hlo_instr* ins, int32_t* out_id);
/* Whether `ins`, with the operands parsed, is a complex form that
 * kc__build_complex_form builds (expr.h's kc__e_complex): maximum,
 * minimum, atan2, cbrt or logistic of complex operands of its shape. */
bool kc__is_complex_form(const kc__hlo_parser* p, const kc__hlo_instr* ins);
kc_status* kc__build_complex_form(kc__hlo_parser* p, kc__hlo_instr* ins, kc_string_view name,
                                  int32_t* out_id);

/* The computation `name` as a program of its own: its parameters are the
 * program's, its ROOT the result. Made once per module. */
kc_status* kc__computation_program(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                   const kc__token* name, kc_program** out);

/* ---- layouts rewritten into transposes (parse_layout_rewrite.c) ---------- */

/* A bitcast: a reshape, through the physical order where the operand's or
 * the result's layout is not row-major. */
kc_status* kc__build_bitcast(kc__hlo_parser* p, kc__hlo_instr* ins, kc_string_view name,
                             int32_t* out_id);

/* x (a logical value of `shape`) as the bytes of the layout m2m
 * (minor_to_major): its elements in physical order, reshaped back to the
 * logical dims, as a custom call expects an operand in that layout. The
 * instructions added are named "NAME/to_layout", "NAME/as_laid_out", in
 * `names`. (The StableHLO reader uses it too.) */
kc_status* kc__layout_to_physical(kc_program_builder* b, kc__arena* names, int32_t x,
                                  const kc_shape* shape, const int8_t* m2m,
                                  kc_string_view name, int32_t* out_id);

/* The inverse: x, the bytes of layout m2m held as a row-major `shape`
 * (a custom call's result), as the logical value, named `name`. */
kc_status* kc__layout_from_physical(kc_program_builder* b, kc__arena* names, int32_t x,
                                    const kc_shape* shape, const int8_t* m2m,
                                    kc_string_view name, int32_t* out_id);

/* A custom call, its operands handed over and its result read back in
 * the layouts the text gives them. */
kc_status* kc__build_custom_call(kc__hlo_parser* p, kc__hlo_instr* ins,
                                 const kc_custom_call_desc* given, kc_string_view name,
                                 int32_t* out_id);

/* ---- constants (parse_constant.c) ---------------------------------------- */

/* "(LITERAL)" of a constant of shape ins->shape, into p->literal. */
kc_status* kc__parse_constant(kc__hlo_parser* p, kc__hlo_instr* ins,
                              void** out_data, size_t* out_size);

/* ---- attributes (parse_attrs.c, parse_attrs_table.c) --------------------- */

/* ", key=value" pairs up to the end of the instruction. */
kc_status* kc__parse_attrs(kc__hlo_parser* p, kc__hlo_instr* ins);

/* "{1, 2}" into p->path, then copied into tmp; `what` names the list
 * ("an output index") in messages. */
kc_status* kc__parse_int_list(kc__hlo_parser* p, const char* what,
                              const int64_t** out, size_t* out_count);

/* An attribute of a kernel instruction: those its entry reads, in the
 * syntax HLO writes them; the others are left to be skipped. */
kc_status* kc__parse_table_attr(kc__hlo_parser* p, kc__hlo_instr* ins,
                                const kc__token* key, bool* out_handled);

/* ---- typed attributes (parse_typed_attrs.c) ------------------------------ */

/* MLIR's hex form of a dense attribute (the STRING token t, "0x..."): the
 * elements' bytes as stored, little-endian, `count` elements of `width`
 * bytes or one element standing for all (a splat), appended to *packed.
 * The StableHLO reader's dense literals use it too. */
kc_status* kc__dense_hex(const kc__lexer* lx, const kc__token* t, size_t width,
                         size_t count, kc__buf* packed);

/*
 * Parses a typed-attribute dictionary as XLA writes a typed FFI call's
 * backend_config (MLIR's attribute-dictionary syntax), starting at the
 * current token, which must be '{', and consuming the closing '}':
 *   {eps = 1.000000e-05 : f32, n = 3 : i64, flag = true, name = "abc",
 *    dims = array<i64: 1, 2, 3>, nested = {a = 1 : i32}}
 * Everything *out refers to lives in `arena` or borrows from the lexer's
 * text (bare names); both must outlive *out. Untyped integers are i64,
 * untyped floats f64; floats may be written as hex bit patterns
 * (0x7F800000 : f32), as MLIR prints infinities and NaNs.
 * INVALID_ARGUMENT citing line and column; RESOURCE_EXHAUSTED.
 */
kc_status* kc__parse_typed_attr_dict(kc__lexer* lx, kc__arena* arena,
                                     kc_attr_dict* out);

#endif /* KCALL_PROGRAM_PARSE_INTERNAL_H_ */
