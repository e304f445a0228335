/* Internals of the StableHLO bytecode reader, shared by its files. Never
 * installed.
 *
 *   bytecode.c  MLIR's bytecode container (mlir/docs/BytecodeFormat.md):
 *               the header, sections, string table, dialects and op names,
 *               the attribute, type and properties tables, and the IR:
 *               regions, blocks, ops and the numbering of values, with the
 *               text's structure (module, functions, regions, names);
 *               kc__stablehlo_bytecode_to_text
 *   vhlo.c      the VHLO dialect's types and attributes (their encodings,
 *               stablehlo's VhloBytecode.cpp) and their StableHLO text
 *   vhlo_ops.c  one table row per VHLO op: its StableHLO name and how each
 *               of its attributes is written; each op's text
 *
 * Everything is read in place from the artifact: a position is a byte
 * offset into it, and every read checks it against the end of what it
 * is reading (a section, an attribute's encoding), so malformed input is
 * refused where it goes wrong, with the offset. Attributes and types are
 * decoded when an op uses them, as often as it does; their nesting, and
 * that of regions, is bounded by KC__BC_MAX_DEPTH. */
#ifndef KCALL_PROGRAM_STABLEHLO_BYTECODE_INTERNAL_H_
#define KCALL_PROGRAM_STABLEHLO_BYTECODE_INTERNAL_H_

#include <stdint.h>
#include <string.h>

#include "internal/common.h"
#include "program/frontend/stablehlo/bytecode.h"

/* The deepest nesting of attributes, types and regions followed. */
enum { KC__BC_MAX_DEPTH = 32 };

/* A run of bytes [pos, end) of the artifact being read. */
typedef struct kc__bc_cursor {
  size_t pos, end;
} kc__bc_cursor;

/* An attribute or a type of the artifact's tables. */
typedef struct kc__bc_entry {
  size_t pos, size; /* its encoding */
  uint32_t dialect;
  bool custom; /* the dialect's encoding; else its text, NUL-terminated */
} kc__bc_entry;

/* A string of the string table. */
typedef struct kc__bc_span {
  size_t pos, size;
} kc__bc_span;

/* An op name of the dialect section. */
typedef struct kc__bc_opname {
  uint32_t dialect;
  uint32_t name; /* string index, without the dialect */
  bool registered;
} kc__bc_opname;

/* How an op's text is written (vhlo.c's rows say which). */
typedef enum kc__bc_form {
  KC__BC_GENERIC, /* "stablehlo.add"(...) ... */
  KC__BC_MODULE,  /* module @name { ... } */
  KC__BC_FUNC,    /* func.func [private] @name(%arg0: t) -> (t) { ... } */
  KC__BC_RETURN,  /* "func.return" in a function, "stablehlo.return" elsewhere */
  KC__BC_SKIP,    /* nothing: a module's op that means nothing on one device */
} kc__bc_form;

/* A value of the IR: a block argument or an op's result, as named in the
 * text: %argN or %N, %N#i for result i of an op with several. */
typedef struct kc__bc_value {
  uint32_t serial;
  int32_t result; /* -1: its op's only result; -2: a block argument */
  uint32_t type;
  bool defined;
} kc__bc_value;

/* The values of one region isolated from above (a function's body,
 * and, as VHLO writes them, other ops' regions), numbered as the
 * bytecode numbers them. */
typedef struct kc__bc_scope {
  kc__bc_value* values;
  size_t size, cap;
} kc__bc_scope;

/* An attribute with its name: an op's property or one of its discardable
 * attributes. */
typedef struct kc__bc_named {
  kc_string_view name;
  uint32_t attr;
  uint8_t how; /* vhlo.c's: how the text writes it */
} kc__bc_named;

typedef struct kc__vhlo_rule kc__vhlo_rule;

/* One op as read, regions aside. */
typedef struct kc__bc_op {
  size_t at; /* where its encoding starts */
  const kc__vhlo_rule* rule;
  kc__bc_form parent; /* the form of the op whose region holds it */
  kc__buf named;      /* kc__bc_named: properties, then discardable ones */
  kc__buf results;    /* uint32_t type indices */
  kc__buf operands;   /* kc__bc_value */
  uint32_t serial;    /* of its results' names */
  uint64_t num_regions;
  bool isolated;
} kc__bc_op;

/* The reader of one artifact. */
typedef struct kc__bc {
  const uint8_t* data;
  size_t size;
  uint64_t version;
  kc_string_view producer;
  kc__bc_span* strings;
  size_t num_strings;
  uint32_t* dialects; /* string index of each dialect's name */
  size_t num_dialects;
  kc__bc_opname* opnames;
  const kc__vhlo_rule** rules; /* each op name's row, once looked up */
  size_t num_opnames;
  kc__bc_entry* attrs;
  size_t num_attrs;
  kc__bc_entry* types;
  kc__bc_span* type_text; /* where the text has each type already, size 0 if not */
  size_t num_types;
  size_t* props; /* where each op's properties start (a size, then bytes) */
  size_t num_props;
  kc__bc_cursor props_section;
  int64_t builtin, vhlo; /* dialect indices, -1 where absent */
  /* Serials of the values' names, unique in the module (the text reader
   * wants them unique in a function, its regions included). */
  uint32_t next_result, next_arg;
  /* The text. Appends stop at the first failure, which is kept here for
   * kc__bc_text_status. */
  kc__buf* out;
  size_t out_cap;
  bool out_oom, out_full;
} kc__bc;

/* ---- bytecode.c ---------------------------------------------------------- */

/* INVALID_ARGUMENT "StableHLO bytecode, byte POS: ...". */
kc_status* kc__bc_fail(const kc__bc* c, size_t pos, const char* fmt, ...) KC_PRINTF(3, 4);

/* UNIMPLEMENTED "StableHLO bytecode: ...", for what is well formed but
 * has no text kcall reads. */
kc_status* kc__bc_unsupported(const char* fmt, ...) KC_PRINTF(1, 2);

/* Primitives at cur->pos, each advancing it; `what` names the value for
 * the message when the bytes run out or are wrong. */
kc_status* kc__bc_byte(const kc__bc* c, kc__bc_cursor* cur, const char* what, uint8_t* out);
kc_status* kc__bc_varint(const kc__bc* c, kc__bc_cursor* cur, const char* what, uint64_t* out);
kc_status* kc__bc_svarint(const kc__bc* c, kc__bc_cursor* cur, const char* what, int64_t* out);
/* A varint below `limit` (a table's size), as an index. */
kc_status* kc__bc_index(const kc__bc* c, kc__bc_cursor* cur, size_t limit, const char* what,
                        uint32_t* out);
/* A count of items each taking at least `min_bytes` of what is left. */
kc_status* kc__bc_count(const kc__bc* c, kc__bc_cursor* cur, size_t min_bytes, const char* what,
                        size_t* out);
/* `n` bytes: their position into *out_pos. */
kc_status* kc__bc_bytes(const kc__bc* c, kc__bc_cursor* cur, uint64_t n, const char* what,
                        size_t* out_pos);

/* String i of the string table. */
kc_string_view kc__bc_string(const kc__bc* c, uint32_t i);

/* The name of dialect i ("vhlo", "builtin"). */
kc_string_view kc__bc_dialect_name(const kc__bc* c, uint32_t i);

/* Appends to the text (nothing after a failure). */
void kc__bc_put(kc__bc* c, const void* bytes, size_t n);
/* (inline, so that a literal's length is known where it is written) */
static inline void kc__bc_puts(kc__bc* c, const char* s) { kc__bc_put(c, s, strlen(s)); }
void kc__bc_printf(kc__bc* c, const char* fmt, ...) KC_PRINTF(2, 3);
/* An integer in decimal (printf's %llu and %lld, without its cost). */
void kc__bc_put_uint(kc__bc* c, uint64_t v);
void kc__bc_put_int(kc__bc* c, int64_t v);
/* A string literal, quoted and escaped as MLIR writes one. */
void kc__bc_put_quoted(kc__bc* c, kc_string_view s);
/* Room for `n` more bytes at the text's end, to be written there: NULL
 * (nothing to write) after a failure. */
char* kc__bc_reserve(kc__bc* c, size_t n);
/* The text's failure so far (out of memory, too long), or NULL. */
kc_status* kc__bc_text_status(const kc__bc* c);

/* A value's name: %argN, %N or %N#i. */
void kc__bc_put_value(kc__bc* c, const kc__bc_value* v);

/* ---- vhlo.c: types and attributes ---------------------------------------- */

/* Type `index` of the type table, as the text writes it. */
kc_status* kc__vhlo_put_type(kc__bc* c, uint32_t index, int depth);

/* Attribute `index`, as the text writes it: [..], {..}, "..", 1 : i64,
 * dense<..> : tensor<..>, #stablehlo<comparison_direction LT>, ... */
kc_status* kc__vhlo_put_attr(kc__bc* c, uint32_t index, int depth);

/* The results of the function type that attribute `index` (a type
 * attribute) holds, "(t {attrs}, u)": each followed by its attributes in
 * `func`'s res_attrs (jax.result_info) when it has any. */
kc_status* kc__vhlo_put_func_results(kc__bc* c, uint32_t index, const kc__bc_op* func);

/* A symbol: @name, quoted where the name is not a bare identifier. */
void kc__vhlo_put_symbol(kc__bc* c, kc_string_view name);

/* Attribute `index` as a value of its kind; `what` names it in messages.
 * A string is a view into the artifact. */
kc_status* kc__vhlo_get_int(const kc__bc* c, uint32_t index, const char* what, int64_t* out);
kc_status* kc__vhlo_get_string(const kc__bc* c, uint32_t index, const char* what,
                               kc_string_view* out);
/* A tensor of integers or i1: at most `cap` of them. */
kc_status* kc__vhlo_get_ints(const kc__bc* c, uint32_t index, const char* what, int64_t* out,
                             size_t cap, size_t* out_count);
/* An enumeration's value (a comparison direction, an API version, ...). */
kc_status* kc__vhlo_get_enum(const kc__bc* c, uint32_t index, const char* what, int64_t* out);
/* Whether it is the none type (a dot algorithm's unset parts). */
kc_status* kc__vhlo_is_none(const kc__bc* c, uint32_t index, bool* out);
/* Item k of an array attribute: *found false when it is not an array
 * or has no item k. */
kc_status* kc__vhlo_get_item(const kc__bc* c, uint32_t index, size_t k, uint32_t* out,
                             bool* found);
/* Whether it is an empty array, string, dictionary or tensor. */
kc_status* kc__vhlo_is_empty(const kc__bc* c, uint32_t index, bool* out);

/* ---- vhlo_ops.c: ops --------------------------------------------------------- */

/* How an op's attribute is written. */
enum {
  KC__HOW_PLAIN,       /* as the attribute is */
  KC__HOW_ARRAY,       /* a tensor of integers, as array<i64: ...> */
  KC__HOW_BOOLS,       /* a tensor of i1, as array<i1: ...> */
  KC__HOW_SYMBOL,      /* a string, as @name */
  KC__HOW_FIELD,       /* a field of the struct the row's `special` builds */
  KC__HOW_DROP,        /* only restates a default, or means nothing on one device */
  KC__HOW_NONE,        /* must be the none type (an unset part of a dot algorithm) */
  KC__HOW_SOME,        /* left out when empty ([], "", {}) */
  KC__HOW_EMPTY,       /* must be empty: what it says has no StableHLO text kcall reads */
  KC__HOW_API,         /* a custom call's API version; left out when ORIGINAL, the
                        * default (with mhlo.backend_config, typed FFI then) */
  KC__HOW_DISCARDABLE, /* a discardable attribute kept, written after the regions */
};

/* How an op's properties are read: attribute indices, one per name of the
 * row in order (with a presence flag each where `optional`). */
struct kc__vhlo_rule {
  const char* vhlo; /* "dialect.name" as the bytecode names it */
  const char* text; /* its name in the text, for KC__BC_GENERIC */
  kc__bc_form form;
  uint8_t special; /* vhlo_ops.c's: a struct the row's fields build */
  bool optional;
  struct {
    const char* name;
    uint8_t how;
  } attrs[18]; /* sorted by name, as the bytecode writes them; NULL-ended */
};

/* The row of op `name` of `dialect`, or NULL. */
const kc__vhlo_rule* kc__vhlo_rule_find(kc_string_view dialect, kc_string_view name);

/* Reads op's properties (at the cursor) into its named attributes. */
kc_status* kc__vhlo_read_props(kc__bc* c, kc__bc_cursor* cur, kc__bc_op* op);

/* Adds the entries of the discardable attribute dictionary `attr` that
 * the text keeps (mhlo.backend_config; the rest mean nothing on one
 * device) to op's named attributes. For the module: checks that it is
 * for one partition and one replica. */
kc_status* kc__vhlo_read_discardable(kc__bc* c, uint32_t attr, kc__bc_op* op);

/* The op's text up to its regions: `%N = "stablehlo.x"(%a) <{...}>`,
 * `func.func private @f`, `module @m`. */
kc_status* kc__vhlo_op_begin(kc__bc* c, kc__bc_op* op);

/* The op's text after its regions: ` {...} : (types) -> types`. */
kc_status* kc__vhlo_op_end(kc__bc* c, kc__bc_op* op);

/* Argument k's attributes of a function ({jax.global_constant = ...}),
 * from its arg_attrs (`which`: or result k's, from "res_attrs"), after
 * the type; nothing when it has none, or one the text cannot write. */
kc_status* kc__vhlo_put_arg_attrs(kc__bc* c, const kc__bc_op* func, size_t k);
kc_status* kc__vhlo_put_item_attrs(kc__bc* c, const kc__bc_op* func, const char* which, size_t k);
/* A function's results, after its arguments: ` -> (t, ...)`. */
kc_status* kc__vhlo_func_results(kc__bc* c, const kc__bc_op* op);

#endif /* KCALL_PROGRAM_STABLEHLO_BYTECODE_INTERNAL_H_ */
