/*
 * What the files of the op module share: definitions as parsed from spec
 * strings, the op and kernel objects, the per-op kernel cache, and the
 * contexts handed to callbacks. Never installed.
 */
#ifndef KCALL_OP_OP_INTERNAL_H_
#define KCALL_OP_OP_INTERNAL_H_

#include <pthread.h>

#include "internal/object.h"
#include "internal/registry.h"
#include "kcall/kernel.h"
#include "kcall/op.h"
#include "kcall/runtime.h"

/* Type indices of the registries' objects; never seen in a kc_any. */
#define KC__TYPE_OP 0x7f01
#define KC__TYPE_KERNEL 0x7f02

/* ---- dtype sets (type_set.c) ------------------------------------------- */

/* A set of dtypes: every dtype (`any`), or a mask over the scalar dtypes
 * kcall names (kc__dtype_slot). */
typedef struct kc__type_set {
  bool any;
  uint64_t mask;
} kc__type_set;

/* The bit of a scalar dtype in a kc__type_set mask, or -1. */
int kc__dtype_slot(DLDataType t);
bool kc__type_set_has(const kc__type_set* set, DLDataType t);
/* "{f32, f64, i32}" or "any type", snprintf-style. */
size_t kc__type_set_format(const kc__type_set* set, char* buf, size_t cap);

/* When `word` is a type class word (numeric, integer, signed, unsigned,
 * floating, complex, any, and TensorFlow's numbertype, numerictype,
 * realnumbertype, realnumerictype: op.h, "Type words"), sets *out to the
 * dtypes it stands for and returns true; otherwise returns false. */
bool kc__type_class_find(kc_string_view word, kc__type_set* out);

/* When `word` is one a spec refuses as a type word (op.h, "Type words"):
 * C's int and long ("type word 'int' is ambiguous: write i32 (or int32)
 * for that one dtype, or 'signed' for {i8, i16, i32, i64}"), a TensorFlow
 * dtype kcall has no dtype for (string, qint8, DT_STRING, ...), TensorFlow's
 * quantizedtype or a reference type (float_ref), writes why and what to
 * write instead into buf and returns its length, snprintf-style; otherwise
 * returns 0. */
size_t kc__type_word_refusal(kc_string_view word, char* buf, size_t cap);

/* When `word` names one dtype (op.h, "Type words": a word kc_dtype_parse
 * takes, or a TensorFlow enum name such as DT_FLOAT), sets *out to it and
 * returns true. Check kc__type_word_refusal first: this does not refuse. */
bool kc__type_word_dtype(kc_string_view word, DLDataType* out);

/* ---- definitions ------------------------------------------------------- */

typedef enum kc__attr_kind {
  KC__ATTR_INT,
  KC__ATTR_FLOAT,
  KC__ATTR_BOOL,
  KC__ATTR_STRING,
  KC__ATTR_TYPE,
  KC__ATTR_SHAPE
} kc__attr_kind;

/* How an attr is inferred from the inputs of a call. */
typedef enum kc__attr_use {
  KC__USE_NONE,     /* given or defaulted */
  KC__USE_TYPE,     /* the dtype of inputs ("x: T") */
  KC__USE_NUMBER,   /* a count of inputs ("xs: N * T") */
  KC__USE_TYPE_LIST /* the dtypes of inputs ("xs: L") */
} kc__attr_use;

typedef struct kc__attr_def {
  char* name;
  char* spec; /* normalised source text */
  kc__attr_kind kind;
  bool is_list;
  kc__type_set types; /* KC__ATTR_TYPE: the allowed dtypes */
  char** strings;     /* KC__ATTR_STRING: allowed values, or NULL */
  int32_t num_strings;
  size_t cap_strings;
  bool has_min, has_max; /* a value for int, a length for lists */
  int64_t min, max;
  bool has_default;
  kc_any default_value; /* owned */
  kc__attr_use use;     /* set at registration */
} kc__attr_def;

typedef enum kc__arg_form {
  KC__ARG_ONE,      /* "x: T" or "x: f32" */
  KC__ARG_REPEATED, /* "xs: N * T" */
  KC__ARG_TYPE_LIST /* "xs: L" */
} kc__arg_form;

typedef struct kc__arg_def {
  char* name;
  char* spec;
  char* type_word;   /* as written; resolved at registration */
  char* number_word; /* the N of "N * T", or NULL */
  kc__arg_form form;
  int32_t type_attr; /* index of T or L; -1 for a fixed dtype */
  DLDataType fixed_type;
  int32_t number_attr; /* index of N; -1 */
} kc__arg_def;

struct kc__op_schema;

/* A derivative rule (gradient.c; op.h, "Gradients" and "Forward-mode
 * rules"): parsed when it is set, its names resolved to arg indices at
 * registration. A gradient's results are inputs of the op, a jvp's
 * outputs. */
typedef struct kc__op_gradient {
  bool jvp;      /* a forward-mode rule (tangent) rather than a gradient */
  char* spec;    /* normalised */
  char* op_name; /* the gradient (or jvp) op */
  kc_op_grad_arg* args;
  char** arg_names; /* as written, until resolved */
  int32_t num_args;
  int32_t* results;
  char** result_names;
  int32_t num_results;
} kc__op_gradient;

/* Parses `spec`, a gradient or (`jvp`) a forward-mode rule, into a new
 * declaration (*out owned by the caller). */
kc_status* kc__op_rule_parse(const char* spec, bool jvp,
                             kc__op_gradient** out);
/* Resolves the names against the op's args (by the rule's kind). */
kc_status* kc__op_gradient_resolve(const struct kc__op_schema* def,
                                   kc__op_gradient* grad);
/* Resolves the positional names of a typed target's declaration (argN,
 * resultN; kc_xcall_signature.gradient) against its counts; a negative
 * count (an open signature) bounds nothing. */
kc_status* kc__op_gradient_resolve_positional(kc__op_gradient* grad,
                                              int32_t num_args,
                                              int32_t num_results);
void kc__op_gradient_destroy(kc__op_gradient* grad);
/* Fills `out` (up to out->struct_size) from the declaration. */
void kc__op_gradient_fill(const kc__op_gradient* grad, kc_op_gradient* out);

/* An op's schema, as its builder defined it: name, doc, flags, shape
 * function, and the inputs, outputs and attrs parsed from spec strings. */
typedef struct kc__op_schema {
  char* name;
  size_t name_size;
  char* doc;
  uint32_t flags;
  kc_shape_fn shape_fn;
  void* shape_data; /* kc_shape_ctx_get_data; freed with the def */
  kc_deleter_fn shape_data_deleter;
  kc__arg_def* inputs;
  int32_t num_inputs;
  kc__arg_def* outputs;
  int32_t num_outputs;
  kc__attr_def* attrs;
  int32_t num_attrs;
  kc__op_gradient* gradient; /* NULL: none declared */
  kc__op_gradient* jvp;      /* the forward-mode rule; NULL: none */
  kc_op_batching batching;   /* KC_OP_BATCH_SEQUENTIAL unless declared */
  size_t cap_inputs, cap_outputs, cap_attrs; /* KC__GROW's, while building */
} kc__op_schema;

/* spec.c: parsing. The def structs are filled on success and left empty
 * on failure; `what` names the spec in messages ("attr spec"). */
kc_status* kc__parse_attr_spec(const char* spec, kc__attr_def* out);
kc_status* kc__parse_arg_spec(const char* what, const char* spec,
                              kc__arg_def* out);
/* Parses `text` as a value of `attr` (the default syntax; a string attr
 * also takes unquoted text) into an owned value. */
kc_status* kc__parse_attr_value(const kc__attr_def* attr, kc_string_view text,
                                kc_any* out_value);
/* attr_check.c. Checks `value` against attr's kind, set and bounds. On
 * success *out is the value to use: `value` itself (borrowed) or a
 * converted plain value (int to float, dtype names to dtypes). */
kc_status* kc__check_attr_value(const kc__attr_def* attr, const kc_any* value,
                                kc_any* out);
/* "int", "list(type)", ... for messages. */
const char* kc__attr_kind_name(const kc__attr_def* attr);
/* spec.c: freeing what parsing made. */
void kc__attr_def_clear(kc__attr_def* a);
void kc__arg_def_clear(kc__arg_def* a);
void kc__op_schema_clear(kc__op_schema* def);

/* ---- the op object ----------------------------------------------------- */

typedef struct kc__kernel kc__kernel;

/* One cached kernel instance. Immutable once published, except
 * `generation`. */
typedef struct kc__cache_entry {
  struct kc__cache_entry* retired_next;
  uint64_t hash;
  size_t key_words;
  uint64_t* key;
  kc__kernel* kernel; /* a reference */
  void* instance;
  uint64_t generation; /* atomic: kernel registry generation it matches */
  DLDevice device;
  kc_any* values; /* owned attribute values */
  int32_t num_values;
  uint64_t host_memory_inputs;  /* bit per input arg (first 64) */
  uint64_t host_memory_outputs; /* bit per output arg (first 64) */
} kc__cache_entry;

typedef struct kc__cache_table {
  struct kc__cache_table* retired_next;
  size_t mask;
  size_t used;
  kc__cache_entry* slots[]; /* atomic */
} kc__cache_table;

/* How many resolved calls an op remembers at once, and in all (call.c). */
#define KC__CALL_MEMO_SLOTS 4
#define KC__CALL_MEMO_MAX 64
struct kc__call_memo;

typedef struct kc__op_cache {
  pthread_mutex_t mu;
  kc__cache_table* table; /* atomic */
  kc__cache_table* retired_tables;
  kc__cache_entry* retired_entries;
  /* Calls given no attrs, resolved once and remembered by their inputs'
   * count, dtypes and device (call.c): published atomically, immutable,
   * freed with the cache. */
  struct kc__call_memo* memos[KC__CALL_MEMO_SLOTS]; /* atomic */
  struct kc__call_memo* retired_memos;              /* under mu */
  int32_t memos_made;                               /* atomic */
  int64_t entries;       /* under mu */
  int64_t constructions; /* atomic */
  int64_t reselections;  /* atomic */
} kc__op_cache;

struct kc_op {
  kc_object header;
  kc__op_schema def;
  kc__op_cache cache;
  /* Set (atomically) by kc_op_registry_reset: the op's cache is gone and
   * calls fail. The op itself lives on while a function "op.NAME" someone
   * kept still holds it. */
  bool removed;
  kc__owned owned; /* the plugin it belongs to, if any (owner.h) */
  /* Every op made and not yet freed, registered or replaced: so that
   * kc_op_registry_reset reaches the ops an override replaced too (op.c,
   * under kc__ops_alive_mu). */
  struct kc_op* alive_prev;
  struct kc_op* alive_next;
};

/* FAILED_PRECONDITION for a call of an op that kc_op_registry_reset
 * removed; NULL for a registered one. Inline, since every call checks;
 * the error is made by kc__op_removed_error (call.c). */
kc_status* kc__op_removed_error(const kc_op* op);
static inline kc_status* kc__op_check_live(const kc_op* op) {
  if (KC__LIKELY(!__atomic_load_n(&op->removed, __ATOMIC_ACQUIRE))) return NULL;
  return kc__op_removed_error(op);
}

/* Index of the attr/input named `name` (NUL-terminated or sized), or -1. */
int32_t kc__op_find_attr(const kc__op_schema* def, kc_string_view name);
int32_t kc__op_find_input(const kc__op_schema* def, kc_string_view name);
int32_t kc__op_find_output(const kc__op_schema* def, kc_string_view name);
/* "a, b, c": the names of def's attrs, for messages; snprintf-style. */
size_t kc__op_format_attr_names(const kc__op_schema* def, char* buf,
                                size_t cap);

/* The op registered (or staged by this thread's plugin) as `name`;
 * borrowed: call it inside a read section (reclaim.h) and use the op
 * only there, unless it is retained. */
const kc_op* kc__op_find_any(kc_string_view name);

/* op_func.c: the packed function "op.NAME" (it holds a reference to op). */
kc_status* kc__op_func_create(kc_op* op, kc_func** out_func);
/* Removes "op.NAME" from the function registry when the function
 * registered there is op's own (not one registered over it). */
void kc__op_func_unregister(const kc_op* op);

/* kernel_cache.c. clear frees every cached kernel instance (running kernel
 * deleters) and leaves an empty cache; deinit clears and destroys. */
void kc__op_cache_init(kc__op_cache* cache);
void kc__op_cache_clear(kc__op_cache* cache);
void kc__op_cache_deinit(kc__op_cache* cache);

/* ---- attribute values -------------------------------------------------- */

struct kc_op_attrs {
  const kc__op_schema* def;
  const kc_any* values; /* def->num_attrs of them */
};

/* ---- kernels ----------------------------------------------------------- */

typedef struct kc__type_constraint {
  char* attr;
  kc__type_set types;
} kc__type_constraint;

struct kc__kernel {
  kc_object header;
  char* op_name;
  size_t op_name_size;
  DLDeviceType device_type;
  kc_kernel_create_fn create;
  kc_kernel_compute_fn compute;
  kc_deleter_fn delete_fn;
  void* data;
  kc_deleter_fn data_deleter;
  int32_t priority;
  kc__type_constraint* constraints;
  int32_t num_constraints;
  char** host_memory;
  int32_t num_host_memory;
  size_t cap_constraints, cap_host_memory;
  kc__owned owned; /* from registration: the plugin it belongs to (owner.h) */
};

/* The kernel registry's generation: bumped by every registration, so that
 * cache entries notice new kernels. */
uint64_t kc__kernel_generation(void);

/* Picks the kernel for `def` on `device_type` with resolved `values`, or
 * NOT_FOUND listing the op's kernels. *out_kernel is a new reference (or
 * NULL on failure). */
kc_status* kc__kernel_select(const kc__op_schema* def, DLDeviceType device_type,
                             const kc_any* values, kc__kernel** out_kernel);

/* Renumbering the kernels that follow removed ones, when a plugin is
 * unloaded (plugin.c): with the kernel registry's mutex held and the
 * plugin's kernels hidden, prepare makes the entries that move each
 * remaining kernel of an affected (op, device type) down to a dense
 * number (RESOURCE_EXHAUSTED when memory runs out, with nothing changed);
 * commit publishes them and removes the numbers past the last, the hidden
 * entries among them; discard frees what prepare made (nothing is
 * published). Commit and discard free the storage. */
typedef struct kc__kernel_renumber {
  kc__reg_entry** moved;
  size_t num_moved;
  char (*drop)[KC__NAME_MAX + 1];
  size_t num_drop;
} kc__kernel_renumber;

kc_status* kc__kernel_renumber_prepare_locked(kc__kernel_renumber* out);
void kc__kernel_renumber_commit_locked(kc__kernel_renumber* r);
void kc__kernel_renumber_discard(kc__kernel_renumber* r);

/* Calls fn for each kernel an op's cache holds a reference to (current
 * and replaced entries), under the cache's mutex. */
void kc__op_cache_each_kernel(const kc_op* op,
                              void (*fn)(void* ctx, const kc__kernel* k),
                              void* ctx);

/* "cpu: T in {f32, f64} (priority 1)", snprintf-style. */
size_t kc__kernel_describe(const kc__kernel* k, char* buf, size_t cap);

/* The name of a device type ("cpu", "cuda"), snprintf-style. */
size_t kc__device_type_format(DLDeviceType t, char* buf, size_t cap);

/* ---- contexts ---------------------------------------------------------- */

struct kc_shape_handle {
  int32_t rank;
  const int64_t* dims; /* rank entries; NULL for an unknown rank */
};

/* Memory a shape context hands out, freed all at once. */
typedef struct kc__arena_block {
  struct kc__arena_block* next;
  size_t used, cap;
  max_align_t data[];
} kc__arena_block;

/* Symbolic dims (op.h, "Symbolic dims"; shape_sym.c): the expressions
 * behind a symbolic run's dims and the assumptions it made. A symbolic
 * dim is a code for its index in `exprs` (kc__sym_code). */
typedef struct kc__dim_expr {
  int32_t kind; /* kc_dim_expr_kind */
  int64_t a, b;
} kc__dim_expr;

typedef struct kc__dim_assumption {
  int32_t kind; /* kc_dim_assumption_kind */
  int64_t lhs, rhs;
} kc__dim_assumption;

typedef struct kc__sym_table {
  kc__dim_expr* exprs;
  size_t num_exprs, cap_exprs;
  kc__dim_assumption* assumptions;
  size_t num_assumptions, cap_assumptions;
} kc__sym_table;

struct kc_shape_ctx {
  const kc__op_schema* def;
  const kc_op_attrs* attrs;
  int32_t num_inputs;
  int32_t num_outputs;
  const kc_shape_handle* inputs;
  const DLDataType* input_dtypes;
  const kc_shape_handle** outputs; /* NULL until set */
  const DLDataType* output_dtypes;
  kc__arena_block* blocks;
  unsigned char* inline_buf; /* first allocations, from the caller's frame */
  size_t inline_used, inline_cap;
  kc__sym_table* sym; /* a symbolic run's table; NULL on numbers */
};

/* Allocates from the context; NULL when out of memory. */
void* kc__shape_ctx_alloc(kc_shape_ctx* ctx, size_t size);
void kc__shape_ctx_free_all(kc_shape_ctx* ctx);

/* shape_sym.c. The symbolic dim of exprs[index]; whether `dim` is one of
 * `t`'s (its index in *out_index). */
int64_t kc__sym_code(size_t index);
bool kc__sym_decode(const kc__sym_table* t, int64_t dim, size_t* out_index);
/* A dim the context may take: a number, KC_DIM_UNKNOWN, or (symbolic runs)
 * one of its symbolic dims; INVALID_ARGUMENT naming `what` otherwise. */
kc_status* kc__dim_check(const kc_shape_ctx* ctx, int64_t dim,
                         const char* what);
/* Appends an expression and gives its symbolic dim. */
kc_status* kc__sym_add_expr(kc__sym_table* t, int32_t kind, int64_t a,
                            int64_t b, int64_t* out_dim);
kc_status* kc__sym_assume(kc__sym_table* t, int32_t kind, int64_t lhs,
                          int64_t rhs);
/* Whether two dims are the same size for every value of the symbols
 * (the same number, symbol or expression). */
bool kc__sym_same(const kc__sym_table* t, int64_t a, int64_t b);
/* A dim as text for messages ("in0[1]", "(in0[1] + 2)", "?", "3"),
 * snprintf-style. */
size_t kc__dim_format(const kc__sym_table* t, int64_t dim, char* buf,
                      size_t cap);
/* The symbolic forms of the dim arithmetic and of merging and
 * broadcasting one dim; called when an operand is symbolic. */
kc_status* kc__sym_binary(kc_shape_ctx* ctx, int32_t kind, int64_t a,
                          int64_t b, bool evenly, int64_t* out_dim);
kc_status* kc__sym_merge_dim(kc_shape_ctx* ctx, int64_t a, int64_t b,
                             int64_t* out_dim);
kc_status* kc__sym_broadcast_dim(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                 int64_t* out_dim);
void kc__sym_table_clear(kc__sym_table* t);
/* The result of a symbolic run: takes `table` over (leaving it empty)
 * and copies the outputs' dims. */
kc_status* kc__symbolic_shapes_create(kc__sym_table* table,
                                      int32_t num_outputs,
                                      const DLDataType* dtypes,
                                      const kc_shape_handle* const* outputs,
                                      kc_symbolic_shapes** out);

struct kc_kernel_construct_ctx {
  const kc__op_schema* def;
  const kc_op_attrs* attrs;
  DLDevice device;
  int32_t num_inputs, num_outputs;
  const DLDataType* input_dtypes;
  const DLDataType* output_dtypes;
  void* data;
};

typedef struct kc__temp {
  struct kc__temp* next;
  void* ptr;
  size_t size, alignment;
} kc__temp;

struct kc_kernel_ctx {
  const kc__op_schema* def;
  const kc_op_attrs* attrs;
  const DLTensor* const* inputs;
  int32_t num_inputs;
  int32_t num_outputs;
  const int32_t* input_starts;      /* per input arg, plus the end */
  DLTensor** outputs;               /* NULL until allocated */
  kc_tensor** owned;                /* outputs this call created, or NULL */
  const kc_shape_handle** inferred; /* per output, NULL when unknown */
  const DLDataType* output_dtypes;
  const kc_allocator* alloc;
  kc_thread_pool* pool;
  DLDevice device;
  kc_status* status; /* atomic */
  kc__temp* temps;
  /* On a device: its backend and the call's stream (NULL on the host). */
  const struct kc__backend* backend;
  void* stream;
  const int32_t* output_starts;  /* per output arg, plus the end */
  uint64_t host_memory_outputs;  /* output args the kernel keeps on the host */
};

#endif /* KCALL_OP_OP_INTERNAL_H_ */
