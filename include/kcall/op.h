/*
 * kcall/op.h — op definitions, shape inference and eager op calls.
 *
 * An op is declared once, by name, with typed inputs and outputs,
 * attributes, flags, a doc string and a shape function, all written as spec
 * strings (docs/ops.md has the grammar):
 *
 *   kc_op_builder* b;
 *   kc_status* st = kc_op_builder_create("Concat", &b);
 *   if (st) return st;
 *   kc_op_builder_add_input_v2(b, "values: N * T");
 *   kc_op_builder_add_output_v2(b, "output: T");
 *   kc_op_builder_add_attr_v2(b, "N: int >= 1");
 *   kc_op_builder_add_attr_v2(b, "T: {f32, f64, i32}");
 *   kc_op_builder_add_attr_v2(b, "axis: int = 0");
 *   kc_op_builder_set_shape_fn_v2(b, concat_shape, NULL, NULL);
 *   return kc_op_registry_register(b, 0);  (consumes b; the first error)
 *
 * Kernels, the code that computes an op on a device for some dtypes, are
 * registered separately (kcall/kernel.h). Anyone can then call the op
 * eagerly: kc_op_call checks the inputs against the definition, resolves
 * the attributes, runs the shape function, picks a kernel, constructs it
 * once per (op, attributes, device) and computes.
 *
 * Every registered op named NAME is also the packed function "op.NAME" in
 * the function registry (kcall/func.h), registered together with it and
 * removed with it by kc_op_registry_reset, so that anything that calls
 * packed functions (the kcall tool, Python) calls ops too; see "Ops as
 * packed functions" below.
 *
 * Thread safety: the registry is lock-free for lookups and serialises
 * registration; registration from a plugin's init is staged and published
 * with the rest of the plugin, or discarded with it. Builders are not
 * thread-safe (one builder, one thread). Registered ops are immutable and
 * may be called from any number of threads at once.
 */
#ifndef KCALL_OP_H_
#define KCALL_OP_H_

#include "kcall/func.h"
#include "kcall/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most input args, output args or attributes one op may declare. */
#define KC_OP_MAX_ARGS 64
#define KC_OP_MAX_ATTRS 64
/* Most tensors one call may take, and most it may produce. */
#define KC_OP_MAX_TENSORS 256

/* ======================================================================== */
/* Building and registering                                                 */
/* ======================================================================== */
/*
 * Errors are handled in one place. A builder remembers the first call that
 * failed, with its position ("call 3 (kc_op_builder_add_attr_v2)", counting
 * every add and set call from 1), and kc_op_registry_register fails with
 * that error, so a builder that went wrong never registers half an op:
 *   "registering op 'Concat': call 3 (kc_op_builder_add_attr_v2): attr spec
 *    'N: int >= x': column 11: expected an integer, got 'x'"
 * The _v2 add and set functions therefore return nothing: check the
 * status of kc_op_builder_create and of kc_op_registry_register, and none
 * in between. The original functions (kc_op_builder_add_input, ...) do the
 * same and also return the status of their own call (with the op's name
 * as context), which the caller owns and must destroy or pass on.
 *
 * Each add call parses its spec at once and fails with INVALID_ARGUMENT for
 * a malformed one, naming the spec, the 1-based column and what was
 * expected. References between specs (an input's `T` naming an attr) are
 * resolved at registration, so specs may come in any order. Every add and
 * set call fails with INVALID_ARGUMENT for a NULL builder (a _v2 call has
 * nowhere to record it: it does nothing, and registering the NULL builder
 * fails) or a NULL spec, and with RESOURCE_EXHAUSTED when memory runs out.
 * A call made after an earlier one failed still runs, but cannot make the
 * builder succeed.
 */

/* Creates an empty builder for the op `name` (NUL-terminated; 1 to 252
 * bytes of [A-Za-z0-9_.:-], so that "op.NAME" is a valid function name).
 * The caller owns the builder until it passes it to kc_op_registry_register
 * or kc_op_builder_destroy. INVALID_ARGUMENT for a bad name or NULL out;
 * RESOURCE_EXHAUSTED when out of memory. */
KC_API kc_status* kc_op_builder_create(const char* name,
                                       kc_op_builder** out_builder);

/* Adds an input: "name: T" (a type attr), "name: f32" (a fixed dtype),
 * "name: N * T" (N tensors of one type; N an int attr) or "name: L" (one
 * tensor per item of the list(type) attr L). Errors as above, and
 * INVALID_ARGUMENT for a second arg of the same name or more than
 * KC_OP_MAX_ARGS inputs. */
KC_API void kc_op_builder_add_input_v2(kc_op_builder* builder,
                                       const char* spec);

/* Adds an output; same forms and errors as kc_op_builder_add_input_v2. */
KC_API void kc_op_builder_add_output_v2(kc_op_builder* builder,
                                        const char* spec);

/* Adds an attribute: "name: KIND [BOUNDS] [= DEFAULT]" where KIND is int,
 * float, bool, string, type, shape, list(KIND), a type set {f32, f64}, a
 * type class (numeric, integer, ...) or a string set {'same', 'valid'};
 * BOUNDS is ">= n" and/or "<= n" (a value for int, a length for lists).
 * Errors as above; INVALID_ARGUMENT also for a duplicate name or more than
 * KC_OP_MAX_ATTRS attrs, for a default outside its kind, set or bounds,
 * and for a refused type word (see "Type words"). */
KC_API void kc_op_builder_add_attr_v2(kc_op_builder* builder,
                                      const char* spec);

/*
 * Type words. Wherever a spec names dtypes (an arg's type, a type set
 * {...}, a type attr's kind, a default or a given value of a type attr,
 * the text of an "op.NAME" attribute), it takes kcall's words and
 * TensorFlow's, each with its own language's meaning, so that a spec
 * written for TensorFlow registers unchanged and means what it meant
 * there; no other word:
 *   dtypes   one dtype each: bool i8 i16 i32 i64 u8 u16 u32 u64 f16 f32 f64
 *            bf16 c64 c128 opaque64 and the float8/6/4 kinds (f8e4m3fn,
 *            f8e5m2, ..., f4e2m1fn), as kc_dtype_format prints them;
 *            NumPy's names bool_ int8..int64 uint8..uint64 float16 float32
 *            float64 bfloat16 complex64 complex128 float8_e4m3fn
 *            float8_e5m2 float8_e4m3fnuz float8_e4m3b11fnuz float8_e5m2fnuz;
 *            TensorFlow's half (f16), float (f32), double (f64) and its
 *            enum names DT_FLOAT, DT_INT32, ... (upper case: the dtype of
 *            the lower-case name after DT_), as its defaults write them
 *            ("T: {float, int32} = DT_FLOAT"). Args and values may add
 *            x<lanes> (f32x4); type sets hold scalar dtypes only.
 *   classes  signed    {i8, i16, i32, i64}
 *            unsigned  {u8, u16, u32, u64}
 *            integer   signed and unsigned
 *            floating  {f16, f32, f64, bf16}
 *            complex   {c64, c128}
 *            numeric   integer, floating and complex (not bool, not the
 *                      float8/6/4 kinds, not opaque64)
 *            realnumbertype, realnumerictype (TensorFlow's): integer and
 *                      floating, TensorFlow's set exactly
 *            numbertype, numerictype (TensorFlow's): as numeric, which is
 *                      TensorFlow's set less its quantized dtypes
 *            any       every dtype, vectors included
 *            A class stands alone as a type attr's kind ("T: numeric") or
 *            joins dtypes in braces ("T: {floating, i32}").
 *   refused  with INVALID_ARGUMENT naming the word, its column and why:
 *            int and long, C's names, which neither language has as a
 *            dtype ("attr spec 'T: {int, i64}': column 5: type word 'int'
 *            is ambiguous: write i32 (or int32) for that one dtype, or
 *            'signed' for {i8, i16, i32, i64}"); TensorFlow's dtypes that
 *            kcall has no dtype for: string, qint8 quint8 qint16 quint16
 *            qint32 (and quantizedtype, their class), int4 uint4 int2
 *            uint2, resource, variant, their DT_ names and reference types
 *            (float_ref) ("type word 'string' is TensorFlow's string, which
 *            kcall has no dtype for: kcall tensors hold numbers, not
 *            strings").
 *            (int, float, bool and string remain attr kinds, as in
 *            TensorFlow: "alpha: float" is a double attr.)
 * kc_dtype_parse, outside specs, also reads int as i32 and long as i64.
 */

/* Sets the flags (KC_OP_COMMUTATIVE | KC_OP_AGGREGATE | KC_OP_STATEFUL |
 * KC_OP_SYMBOLIC_SHAPES, the last to let the shape function run on
 * symbolic dims: see "Symbolic dims"). INVALID_ARGUMENT for an unknown
 * bit. An op whose shape function is kc_shape_fn_unchanged gets
 * KC_OP_SYMBOLIC_SHAPES at registration whatever its flags say. */
KC_API void kc_op_builder_set_flags_v2(kc_op_builder* builder,
                                       uint32_t flags);

/* Sets the doc string (copied; NULL clears it). */
KC_API void kc_op_builder_set_doc_v2(kc_op_builder* builder, const char* doc);

/* Sets the shape function, which runs before every kernel (see "Shape
 * inference"), and its data: `data` is what kc_shape_ctx_get_data returns
 * while `fn` runs (NULL for none), so a shape function needs no globals.
 * The op owns `data` from this call on: `data_deleter` (may be NULL) runs
 * with it exactly once, when the op is freed (by kc_op_registry_reset,
 * which takes its function "op.NAME" away too; by unloading its plugin;
 * when discarded with a failing plugin init; or, replaced with
 * KC_REGISTER_OVERRIDE, once nothing holds it: no call running, no
 * "op.NAME" kept from before), when the builder is destroyed or its
 * registration fails, when a later call replaces the shape function, or
 * at once when the builder is NULL. The data may be read by several calls
 * at once: keep it read-only or synchronised. Without a shape function
 * (fn NULL), outputs have unknown shapes and kernels allocate them
 * (kc_kernel_ctx_allocate_output). */
KC_API void kc_op_builder_set_shape_fn_v2(kc_op_builder* builder,
                                          kc_shape_fn fn, void* data,
                                          kc_deleter_fn data_deleter);

/*
 * Gradients. An op may declare, once, how its gradient is computed: by
 * another op (its gradient op), which takes some of a call's inputs,
 * outputs and output cotangents and returns the cotangents of some of its
 * inputs. The JAX and PyTorch adapters (kcall.jax, kcall.torch) turn the
 * declaration into jax.custom_vjp and torch autograd; nobody writes
 * framework code for it. The spec:
 *
 *   GRAD_OP(ITEM, ...) -> RESULT      or   GRAD_OP(ITEM, ...) -> (RESULT, ...)
 *   ITEM    NAME         the forward input or output of that name
 *           grad(NAME)   the cotangent of the forward output NAME
 *   RESULT  grad(NAME)   the cotangent of the forward input NAME
 *
 *   MatMul  "MatMulGrad(a, b, grad(product)) -> (grad(a), grad(b))"
 *   Scale   "Scale(grad(y)) -> grad(x)"   (linear: it is its own gradient)
 *   Gather  "GatherGrad(params, indices, grad(output)) -> grad(params)"
 *
 * The gradient op is called with the ITEMs as its inputs, in order (the
 * tensors of an "N * T" or list arg where the arg is named), and returns
 * the RESULTs as its outputs, in order. It gets every attribute of the
 * forward op that it declares under the same name and does not infer from
 * its own inputs, with the value the forward call used (given or
 * defaulted). An input named by no RESULT is not differentiable (indices,
 * integer tensors): JAX gets a zero cotangent for it, PyTorch None. The
 * gradient op is found by name when a gradient is computed, so it may be
 * registered before or after the op, by the same plugin or another; it
 * may declare a gradient of its own, which gives second derivatives.
 *
 * A gradient op may declare the attr "kc_needed: int = -1": a caller that
 * uses only some of its RESULTs (kcall.torch, when some inputs do not
 * require grad; kcall.jax, when it differentiates in some inputs only)
 * passes a mask of them, bit i for RESULT i, and the op may leave the
 * others zero rather than compute them (kc.MatMulGrad skips a product);
 * -1, the default, asks for all.
 *
 * The spec is parsed at this call: INVALID_ARGUMENT naming the spec and
 * the column for a malformed one ("gradient spec 'AddGrad(x, y) -> x':
 * column 18: expected 'grad(', got 'x'"). Its names are checked against
 * the op's args at registration: INVALID_ARGUMENT for an ITEM that names
 * no input or output, grad() of a name that is not an output, a RESULT
 * that is not an input or names one twice; RESOURCE_EXHAUSTED when out
 * of memory. The spec is copied; the builder, then the op, owns the
 * declaration. A second call replaces the first. Errors are kept by the
 * builder, as for the _v2 calls. Plugins:
 * host API 1.3 (feature "gradient"). */
KC_API void kc_op_builder_set_gradient(kc_op_builder* builder,
                                       const char* spec);

/* A builder for the gradient op that the gradient declaration of the op
 * `op_name` names, made from the declaration and the op's specs, so that
 * its author writes only its kernel. The op must be registered (in a
 * plugin's init, registering it just before is enough). The builder:
 *   name     the declaration's gradient op (op.h above)
 *   inputs   the ITEMs in order: a forward input or output NAME with its
 *            spec as registered, grad(NAME) as "dNAME" of NAME's type
 *   outputs  each RESULT grad(NAME) as "dNAME" of input NAME's type
 *   attrs    every attr of the op, as registered (the forward call's
 *            values reach the gradient op by name, as for any)
 *   shape    output dNAME has input NAME's shape when NAME is an ITEM,
 *            else it is left to the kernel; symbolic
 *   doc      "The gradient of OP."
 * So "RmsNormGrad(x, w, grad(y)) -> (grad(x), grad(w))" on RmsNorm(x: T,
 * w: T) -> (y: T) with attrs "T: {f32}", "eps: float = 1e-6" gives
 * RmsNormGrad(x: T, w: T, dy: T) -> (dx: T, dw: T) with the same attrs.
 * The caller may amend the builder (a doc, flags, a gradient of its own)
 * and registers it (kc_op_registry_register), then its kernel. An "N * T"
 * or type-list arg among the items or results is UNIMPLEMENTED (write
 * that gradient op by hand); FAILED_PRECONDITION when the op declares no
 * gradient; NOT_FOUND when there is no such op; INVALID_ARGUMENT for
 * NULLs; RESOURCE_EXHAUSTED. *out_builder
 * is the caller's (kc_op_registry_register or kc_op_builder_destroy).
 * Plugins: host API 1.5. */
KC_API kc_status* kc_op_builder_create_gradient(const char* op_name,
                                                kc_op_builder** out_builder);

/*
 * Forward-mode rules. An op may also declare how its outputs' tangents
 * follow from its inputs' (a Jacobian-vector product): by another op (its
 * jvp op), which takes some of a call's inputs, outputs and input
 * tangents and returns the tangents of some of its outputs. kcall.torch
 * turns it into forward-mode AD (torch.autograd.forward_ad,
 * torch.func.jvp, jacfwd, hessian) and kcall.jax into jax.jvp and
 * jacfwd; an op without one is refused in forward mode, naming it. The
 * spec mirrors the gradient's:
 *
 *   JVP_OP(ITEM, ...) -> RESULT      or   JVP_OP(ITEM, ...) -> (RESULT, ...)
 *   ITEM    NAME           the forward input or output of that name
 *           tangent(NAME)  the tangent of the forward input NAME
 *   RESULT  tangent(NAME)  the tangent of the forward output NAME
 *
 *   Add       "Add(tangent(x), tangent(y)) -> tangent(z)"   (linear)
 *   Softplus  "SoftplusGrad(x, tangent(x)) -> tangent(y)"
 *   MatMul    "MatMulJvp(a, b, tangent(a), tangent(b)) -> tangent(product)"
 *
 * The jvp op is called with the ITEMs as its inputs, in order (a missing
 * tangent is passed as zeros), and returns the RESULTs as its outputs, in
 * order; an output named by no RESULT has a zero tangent. It gets the
 * forward op's attributes as a gradient op does. An input whose tangent
 * no ITEM names is taken as not differentiable (indices). The result's
 * shape and dtype must be the output's: the adapters refuse a mismatch,
 * naming both ops. In JAX, an op that declares both rules is
 * differentiable in both modes: reverse mode transposes the jvp through
 * the gradient op, which must be its transpose. A jvp op may declare
 * rules of its own, which gives second derivatives in forward mode
 * (torch.func.hessian needs the gradient op's jvp).
 *
 * Errors as for kc_op_builder_set_gradient, with "jvp spec" in the
 * message: tangent() of a name that is not an input, a RESULT that is not
 * an output or names one twice, an ITEM naming neither. The spec is
 * copied; a second call replaces the first. Plugins: host API 1.5
 * (feature "jvp"). */
KC_API void kc_op_builder_set_jvp(kc_op_builder* builder, const char* spec);

/*
 * Batching. An op may declare, once, how it batches: what a framework
 * does when it maps the op over a leading batch dim (jax.vmap). The JAX
 * adapter (kcall.jax.call_op) turns the rule into ffi_call's vmap_method;
 * `kcall ops` and help(kcall.ops.NAME) show it.
 *
 *   KC_OP_BATCH_SEQUENTIAL   the default: the op runs once per batch
 *                            element (JAX's "sequential", a loop). Always
 *                            right, for any op.
 *   KC_OP_BATCH_ELEMENTWISE  the op runs once on the whole batch: every
 *                            input gets the batch dim in front (an input
 *                            that is not batched is broadcast to it: JAX's
 *                            "broadcast_all") and every output comes back
 *                            with it. Declare it only when slice b of each
 *                            output, along that new leading dim, is what
 *                            the op computes from slice b of every input,
 *                            with the same attributes: element-wise ops
 *                            (Add, Softplus, Scale), and ops that work on
 *                            trailing dims only. "broadcast_all" rather
 *                            than "expand_dims": the kernel then sees all
 *                            inputs with the same leading dim, which is
 *                            right whether or not it broadcasts size-1
 *                            dims ("expand_dims" hands an unbatched input
 *                            over with a leading dim of 1, which a kernel
 *                            that expects equal shapes would misread).
 *                            The adapter uses it for a call whose inputs
 *                            all have one rank (else a new leading dim
 *                            would not line up across them under NumPy
 *                            broadcasting) and runs the others one element
 *                            at a time.
 *   KC_OP_BATCH_NONE         refused: mapping the op raises an error
 *                            naming it (an op whose calls must happen one
 *                            by one, in the program's order, as it is
 *                            written).
 *
 * INVALID_ARGUMENT for another value; errors are kept by the builder, as
 * for the _v2 calls. A second call replaces the first. Plugins: host API
 * 1.4 (feature "batching"; on an older host see kcall/plugin_api.h). */
KC_API void kc_op_builder_set_batching(kc_op_builder* builder,
                                       kc_op_batching rule);

/* The rule's name: "sequential", "elementwise" or "none"; NULL for a value
 * that is no rule. */
KC_API const char* kc_op_batching_name(kc_op_batching rule);

/* The original builder functions: each does what its _v2 does and
 * returns the status of its own call (NULL on success), owned by the
 * caller; the builder remembers the first failure all the same.
 * kc_op_builder_set_shape_fn(b, fn) is kc_op_builder_set_shape_fn_v2(b,
 * fn, NULL, NULL). */
KC_API kc_status* kc_op_builder_add_input(kc_op_builder* builder,
                                          const char* spec);
KC_API kc_status* kc_op_builder_add_output(kc_op_builder* builder,
                                           const char* spec);
KC_API kc_status* kc_op_builder_add_attr(kc_op_builder* builder,
                                         const char* spec);
KC_API kc_status* kc_op_builder_set_flags(kc_op_builder* builder,
                                          uint32_t flags);
KC_API kc_status* kc_op_builder_set_doc(kc_op_builder* builder,
                                        const char* doc);
KC_API kc_status* kc_op_builder_set_shape_fn(kc_op_builder* builder,
                                             kc_shape_fn fn);

/* Frees a builder that will not be registered, running the deleter of
 * its shape function's data. NULL is a no-op. */
KC_API void kc_op_builder_destroy(kc_op_builder* builder);

/* Validates the definition and registers it, and the packed function
 * "op.NAME" with it; consumes `builder` whether it succeeds or not. `flags`
 * may hold KC_REGISTER_OVERRIDE (replace an op of the same name, and its
 * function). Both names are published together or neither is.
 * Fails with the builder's first error when a call failed (its own code,
 * with the call's position, see above); otherwise INVALID_ARGUMENT for a
 * NULL builder, unknown flags, or a definition that does not hold
 * together: an arg's type naming neither a type attr nor a dtype (or an
 * refused type word, see "Type words"), the N of "N * T" not an int
 * attr, "name: L" with L not a list(type) attr, an arg and an attr of
 * the same name; ALREADY_EXISTS when the op or its function name is
 * taken; RESOURCE_EXHAUSTED. Every error names the op ("registering op
 * 'NAME'"). */
KC_API kc_status* kc_op_registry_register(kc_op_builder* builder,
                                          uint32_t flags);

/* Finds a registered op. *out_op is borrowed from the registry: it stays
 * valid while `name` stays registered to it, that is until the op is
 * overridden or the plugin that registered it is unloaded (by any thread),
 * or kc_op_registry_reset(). A caller that may race with those uses
 * kc_op_registry_lookup_retained. NOT_FOUND lists the nearest registered
 * names (computed when its message is first read, as for functions:
 * kcall/func.h). Allocates nothing when found. Lock-free. */
KC_API kc_status* kc_op_registry_lookup(kc_string_view name,
                                        const kc_op** out_op);

/* As kc_op_registry_lookup, but *out_op is a new reference, taken before
 * any concurrent override or unload could drop the registry's: the caller
 * releases it with kc_object_release(KC_OBJECT(op)). */
KC_API kc_status* kc_op_registry_lookup_retained(kc_string_view name,
                                                 const kc_op** out_op);

/* An array (of strings) of the registered op names starting with `prefix`
 * (empty: all), sorted; owned by the caller, allocated from `alloc` (NULL:
 * system). */
KC_API kc_status* kc_op_registry_list(const kc_allocator* alloc,
                                      kc_string_view prefix,
                                      kc_array** out_names);

/* Removes every op, overridden ones included: frees the kernel instances
 * cached for them (running each kernel's deleter, now) and removes their
 * functions "op.NAME" from the function registry (a function registered
 * over "op.NAME" by someone else stays). kc_op pointers from earlier
 * lookups become invalid. An "op.NAME" function obtained before the reset
 * and still held (retained, or not yet freed by kc_func_registry_reset)
 * stays safe to call: it fails with FAILED_PRECONDITION naming the op.
 * NOT thread-safe: no other thread may use ops during the call. For tests
 * and shutdown. */
KC_API void kc_op_registry_reset(void);

/* ======================================================================== */
/* Reading a definition                                                     */
/* ======================================================================== */
/* A registered op never changes, so these are thread-safe. Borrowed strings
 * live as long as the op. A NULL op reads as empty (0, "", NULL). */

KC_API kc_string_view kc_op_get_name(const kc_op* op);
/* The doc string; "" when none. */
KC_API const char* kc_op_get_doc(const kc_op* op);
KC_API uint32_t kc_op_get_flags(const kc_op* op);

/* Numbers of input args, output args and attrs as declared (an "N * T" arg
 * counts once). */
KC_API int32_t kc_op_get_input_count(const kc_op* op);
KC_API int32_t kc_op_get_output_count(const kc_op* op);
KC_API int32_t kc_op_get_attr_count(const kc_op* op);

/* The spec of the index-th input, output or attr as registered, with its
 * blanks normalised ("values: N * T", "axis: int = 0"); NULL out of
 * range. */
KC_API const char* kc_op_get_input_spec(const kc_op* op, int32_t index);
KC_API const char* kc_op_get_output_spec(const kc_op* op, int32_t index);
KC_API const char* kc_op_get_attr_spec(const kc_op* op, int32_t index);

/* Where a gradient op's input comes from (kc_op_grad_arg.source). */
typedef enum kc_op_grad_source {
  KC_OP_GRAD_INPUT = 1,    /* the forward input arg `index` */
  KC_OP_GRAD_OUTPUT = 2,   /* the forward output arg `index` */
  KC_OP_GRAD_COTANGENT = 3, /* the cotangent of forward output arg `index` */
  KC_OP_GRAD_TANGENT = 4    /* (jvp rules) the tangent of forward input
                               arg `index` */
} kc_op_grad_source;

/* One input of the gradient op: a forward arg (by its index among the
 * op's declared inputs or outputs, as kc_op_get_input_spec counts). */
typedef struct kc_op_grad_arg {
  int32_t source; /* kc_op_grad_source */
  int32_t index;
} kc_op_grad_arg;

/* An op's gradient declaration (kc_op_builder_set_gradient), or its
 * forward-mode rule (kc_op_builder_set_jvp), resolved. Every pointer
 * borrows from the op and lives as long as it. */
typedef struct kc_op_gradient {
  size_t struct_size;  /* set by the caller */
  const char* op_name; /* the gradient op's name */
  const char* spec;    /* the spec, blanks normalised */
  int32_t num_args;    /* the gradient op's inputs, in order */
  const kc_op_grad_arg* args;
  /* The gradient op's outputs, in order: the index of the forward input
   * arg whose cotangent each one is (for a jvp rule: of the forward
   * output arg whose tangent each one is). */
  int32_t num_results;
  const int32_t* results;
} kc_op_gradient;

/* Fills `out` (up to out->struct_size) with the op's gradient and returns
 * true; returns false, leaving `out` alone, when the op declares none (or
 * op or out is NULL). Thread-safe. */
KC_API bool kc_op_get_gradient(const kc_op* op, kc_op_gradient* out);

/* The same for the op's forward-mode rule (kc_op_builder_set_jvp):
 * op_name is the jvp op, args may be KC_OP_GRAD_TANGENT, results index
 * outputs. False when the op declares none. Thread-safe. */
KC_API bool kc_op_get_jvp(const kc_op* op, kc_op_gradient* out);

/* How the op batches (kc_op_builder_set_batching): KC_OP_BATCH_SEQUENTIAL
 * when it declares nothing, or for a NULL op. Thread-safe. */
KC_API kc_op_batching kc_op_get_batching(const kc_op* op);

/* The default value of the index-th attr (see "Attribute values"), as
 * its spec gives it; NULL when it has none or the index is out of range.
 * Borrowed: lives as long as the op. */
KC_API const kc_any* kc_op_get_attr_default(const kc_op* op, int32_t index);

/* Writes the signature, "Concat(values: N * T) -> (output: T)", into buf,
 * snprintf-style (returns the length the whole text needs). */
KC_API size_t kc_op_format_signature(const kc_op* op, char* buf, size_t cap);

/* ======================================================================== */
/* Attribute values                                                         */
/* ======================================================================== */
/*
 * A kc_op_attrs holds every attribute of one use of an op, resolved: given by
 * the caller, inferred from the inputs (type attrs such as T, lengths such
 * as N, type lists) or defaulted. Shape functions, kernel constructors and
 * kernels read it through their context; it is borrowed for the duration of
 * that callback. `name` is NUL-terminated.
 *
 * Values are kc_any: int, float, bool, a string (any string kind), a dtype
 * (KC_TYPE_DTYPE), a shape (an array of ints, -1 for an unknown dim) or a
 * list (an array of such values).
 *
 * Each getter answers NOT_FOUND when the op has no attr `name` (listing the
 * ones it has) and INVALID_ARGUMENT when the attr is of another kind
 * ("attr 'axis' of op 'Concat' is an int, not a float") or an out pointer
 * is NULL. Views and pointers borrow from `attrs`. The values never change,
 * so the getters may be called from any thread (a parallel loop's body).
 */

KC_API kc_status* kc_op_attrs_get_int(const kc_op_attrs* attrs,
                                      const char* name, int64_t* out_value);
KC_API kc_status* kc_op_attrs_get_float(const kc_op_attrs* attrs,
                                        const char* name, double* out_value);
KC_API kc_status* kc_op_attrs_get_bool(const kc_op_attrs* attrs,
                                       const char* name, bool* out_value);
KC_API kc_status* kc_op_attrs_get_string(const kc_op_attrs* attrs,
                                         const char* name,
                                         kc_string_view* out_value);
KC_API kc_status* kc_op_attrs_get_type(const kc_op_attrs* attrs,
                                       const char* name, DLDataType* out_value);

/* A shape attr: writes up to `capacity` dims to out_dims (may be NULL when
 * capacity is 0) and the rank to *out_rank, so a first call with capacity
 * 0 asks for the rank. */
KC_API kc_status* kc_op_attrs_get_shape(const kc_op_attrs* attrs,
                                        const char* name, int64_t* out_dims,
                                        int32_t capacity, int32_t* out_rank);

/* A list(int) or list(type) attr: writes up to `capacity` items and the
 * length to *out_count, as kc_op_attrs_get_shape. */
KC_API kc_status* kc_op_attrs_get_int_list(const kc_op_attrs* attrs,
                                           const char* name,
                                           int64_t* out_values,
                                           int32_t capacity,
                                           int32_t* out_count);
KC_API kc_status* kc_op_attrs_get_type_list(const kc_op_attrs* attrs,
                                            const char* name,
                                            DLDataType* out_values,
                                            int32_t capacity,
                                            int32_t* out_count);

/* Any attr as its kc_any (borrowed), for kinds without a typed getter. */
KC_API kc_status* kc_op_attrs_get_value(const kc_op_attrs* attrs,
                                        const char* name,
                                        const kc_any** out_value);

/* ======================================================================== */
/* Shape inference                                                          */
/* ======================================================================== */
/*
 * A shape function gets a context with the input shapes and dtypes, the
 * attributes, and one slot per output. Inputs and outputs are numbered as
 * tensors, in order: an "N * T" input with N = 3 takes three indices. It
 * sets each output's shape (kc_shape_ctx_set_output); an output it leaves
 * unset, or sets with unknown dims, is allocated by the kernel instead.
 * Output dtypes come from the definition; setting one is allowed only to
 * the same dtype. A status it returns stops the call, with context naming
 * the op.
 *
 * kc_shape_handle values are owned by the context and live until the shape
 * function returns; they are immutable, so one may be set as several
 * outputs. Unknown dims and ranks are allowed (KC_DIM_UNKNOWN,
 * KC_RANK_UNKNOWN); inputs of an eager call are always fully known, but a
 * shape function should not rely on it. The helpers follow the usual shape
 * algebra and answer INVALID_ARGUMENT when shapes are incompatible, naming
 * both ("cannot merge [2,3] with [2,4]: dimension 1: 3 != 4").
 *
 * Not thread-safe: a context belongs to the one call that runs it.
 */

KC_API int32_t kc_shape_ctx_get_input_count(const kc_shape_ctx* ctx);
KC_API int32_t kc_shape_ctx_get_output_count(const kc_shape_ctx* ctx);
/* The index-th input's shape; NULL out of range. */
KC_API const kc_shape_handle* kc_shape_ctx_get_input(const kc_shape_ctx* ctx,
                                                     int32_t index);
/* The index-th input's or output's dtype; all-zero out of range. */
KC_API DLDataType kc_shape_ctx_get_input_dtype(const kc_shape_ctx* ctx,
                                               int32_t index);
KC_API DLDataType kc_shape_ctx_get_output_dtype(const kc_shape_ctx* ctx,
                                                int32_t index);
KC_API const kc_op_attrs* kc_shape_ctx_get_attrs(const kc_shape_ctx* ctx);
/* The data given with the shape function (kc_op_builder_set_shape_fn_v2);
 * NULL when none or for a NULL ctx. Borrowed: owned by the op. */
KC_API void* kc_shape_ctx_get_data(const kc_shape_ctx* ctx);

/* Sets the index-th output's shape (a shape of this context).
 * INVALID_ARGUMENT for an index out of range or a NULL shape. */
KC_API kc_status* kc_shape_ctx_set_output(kc_shape_ctx* ctx, int32_t index,
                                          const kc_shape_handle* shape);
/* Confirms the index-th output's dtype: INVALID_ARGUMENT when it differs
 * from what the definition gives it, or the index is out of range. */
KC_API kc_status* kc_shape_ctx_set_output_dtype(kc_shape_ctx* ctx,
                                                int32_t index,
                                                DLDataType dtype);

/* The rank, or KC_RANK_UNKNOWN. */
KC_API int32_t kc_shape_handle_get_rank(const kc_shape_handle* shape);
/* Dim `index` (negative counts from the end); KC_DIM_UNKNOWN when unknown,
 * out of range, or the rank is unknown. */
KC_API int64_t kc_shape_handle_get_dim(const kc_shape_handle* shape,
                                       int32_t index);

/* A new shape of `rank` dims (KC_RANK_UNKNOWN: unknown rank) copied from
 * `dims` (NULL: all unknown; each >= 0 or KC_DIM_UNKNOWN). INVALID_ARGUMENT
 * for a rank above KC_TENSOR_MAX_NDIM or a bad dim; RESOURCE_EXHAUSTED. */
KC_API kc_status* kc_shape_ctx_make_shape(kc_shape_ctx* ctx, int32_t rank,
                                          const int64_t* dims,
                                          const kc_shape_handle** out_shape);

/* `shape` known to have rank `rank`: an unknown rank becomes `rank`
 * unknown dims; another known rank is INVALID_ARGUMENT. The at_least and
 * at_most forms check a bound instead (an unknown rank passes unchanged). */
KC_API kc_status* kc_shape_ctx_with_rank(kc_shape_ctx* ctx,
                                         const kc_shape_handle* shape,
                                         int32_t rank,
                                         const kc_shape_handle** out_shape);
KC_API kc_status* kc_shape_ctx_with_rank_at_least(
    kc_shape_ctx* ctx, const kc_shape_handle* shape, int32_t rank,
    const kc_shape_handle** out_shape);
KC_API kc_status* kc_shape_ctx_with_rank_at_most(
    kc_shape_ctx* ctx, const kc_shape_handle* shape, int32_t rank,
    const kc_shape_handle** out_shape);

/* The most specific shape compatible with both: ranks and dims must agree
 * where both are known. */
KC_API kc_status* kc_shape_ctx_merge(kc_shape_ctx* ctx,
                                     const kc_shape_handle* a,
                                     const kc_shape_handle* b,
                                     const kc_shape_handle** out_shape);

/* NumPy broadcasting: dims aligned from the right; a dim of 1 stretches.
 * Unknown dims give unknown results unless the other side settles them. */
KC_API kc_status* kc_shape_ctx_broadcast(kc_shape_ctx* ctx,
                                         const kc_shape_handle* a,
                                         const kc_shape_handle* b,
                                         const kc_shape_handle** out_shape);

/* a's dims followed by b's (unknown if either rank is). */
KC_API kc_status* kc_shape_ctx_concatenate(kc_shape_ctx* ctx,
                                           const kc_shape_handle* a,
                                           const kc_shape_handle* b,
                                           const kc_shape_handle** out_shape);

/* Dims [start, end) of `shape`; negative indices count from the end and
 * are clamped as in Python slicing. INVALID_ARGUMENT for an unknown rank
 * unless start is 0 and end is KC_TENSOR_MAX_NDIM or more. */
KC_API kc_status* kc_shape_ctx_subshape(kc_shape_ctx* ctx,
                                        const kc_shape_handle* shape,
                                        int32_t start, int32_t end,
                                        const kc_shape_handle** out_shape);

/* `shape` with dim `index` (negative from the end) replaced by `dim`.
 * INVALID_ARGUMENT for an index out of range or an unknown rank. */
KC_API kc_status* kc_shape_ctx_replace_dim(kc_shape_ctx* ctx,
                                           const kc_shape_handle* shape,
                                           int32_t index, int64_t dim,
                                           const kc_shape_handle** out_shape);

/* Dimension arithmetic on dims (KC_DIM_UNKNOWN propagates). merge: equal
 * or one unknown, else INVALID_ARGUMENT. add, subtract and multiply:
 * OUT_OF_RANGE on overflow, INVALID_ARGUMENT for a negative difference.
 * divide: INVALID_ARGUMENT for a zero divisor, or when `evenly` and the
 * division leaves a remainder. */
KC_API kc_status* kc_shape_ctx_merge_dim(kc_shape_ctx* ctx, int64_t a,
                                         int64_t b, int64_t* out_dim);
KC_API kc_status* kc_shape_ctx_add_dims(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                        int64_t* out_dim);
KC_API kc_status* kc_shape_ctx_subtract_dims(kc_shape_ctx* ctx, int64_t a,
                                             int64_t b, int64_t* out_dim);
KC_API kc_status* kc_shape_ctx_multiply_dims(kc_shape_ctx* ctx, int64_t a,
                                             int64_t b, int64_t* out_dim);
KC_API kc_status* kc_shape_ctx_divide_dims(kc_shape_ctx* ctx, int64_t a,
                                           int64_t b, bool evenly,
                                           int64_t* out_dim);

/*
 * Ready-made shape functions, for the shapes most ops have: give one to
 * kc_op_builder_set_shape_fn_v2 rather than writing it. Each computes only
 * through the helpers above, so it is right on symbolic dims, and an op
 * that uses one gets KC_OP_SYMBOLIC_SHAPES at registration. Each sets
 * every output of the op to the shape it computes, and refuses what does
 * not fit with INVALID_ARGUMENT naming the inputs and their shapes
 * ("input 1 has shape [4], input 0 [3]: the op's inputs must all have one
 * shape"), which a call reports with the op's name.
 *
 *   unchanged    input 0's shape, not checking the others (the first
 *                helper; kept as it was).
 *   elementwise  the shape every input has: the inputs must all have one
 *                shape (x * y without broadcasting, an activation and its
 *                gradient).
 *   broadcast    the inputs broadcast together as NumPy does (x + y with
 *                a bias).
 *   matmul       input 0 [..., M, K] times input 1 [..., K, N]: [..., M,
 *                N], the leading (batch) dims broadcast, K checked equal;
 *                ranks of at least 2.
 *   reduce       input 0 reduced over the op's attr `axis` (an int) or
 *                `axes` (a list(int)), negative ones counting from the
 *                end, none twice: those dims dropped, or kept as 1 when
 *                the op has a bool attr `keepdims` that is true.
 *
 * INVALID_ARGUMENT also for an op with too few inputs (none; one for
 * matmul) or, for reduce, without an axis attr. Plugins: host API 1.5
 * (the five after unchanged). */
KC_API kc_status* kc_shape_fn_unchanged(kc_shape_ctx* ctx);
KC_API kc_status* kc_shape_fn_elementwise(kc_shape_ctx* ctx);
KC_API kc_status* kc_shape_fn_broadcast(kc_shape_ctx* ctx);
KC_API kc_status* kc_shape_fn_matmul(kc_shape_ctx* ctx);
KC_API kc_status* kc_shape_fn_reduce(kc_shape_ctx* ctx);
/* And for a gradient op (op.h, "Gradients"), whose outputs are its first
 * inputs' cotangents, GRAD(x, w, dy) -> (dx, dw): output i has input i's
 * shape. INVALID_ARGUMENT when the op has fewer inputs than outputs.
 * Plugins: host API 1.5. */
KC_API kc_status* kc_shape_fn_like_inputs(kc_shape_ctx* ctx);

/*
 * Symbolic dims. A framework that traces a program once for many sizes
 * (torch.compile with dynamic shapes, torch.export, jax.export with
 * symbolic shapes) needs each output dim as an expression of the input
 * dims rather than a number. kc_op_infer_symbolic (below) gets it by
 * running the shape function on symbolic input dims. Only an op that
 * declares its shape function safe for that runs so: one with the flag
 * KC_OP_SYMBOLIC_SHAPES, or whose shape function is kc_shape_fn_unchanged
 * (the flag is then added at registration). Other ops keep running on
 * numbers only, and kc_op_infer_symbolic refuses them. A shape function
 * that computes with dims as C numbers (dims[0] + dims[1], d == 3, a loop
 * to a dim) must not set the flag: on symbolic dims it would compute a
 * wrong shape.
 *
 * In a symbolic run a dim (kc_shape_handle_get_dim, and every dim the
 * helpers return) is a number (>= 0), KC_DIM_UNKNOWN, or a symbolic dim:
 * an opaque int64_t below KC_DIM_UNKNOWN, owned by the context and valid
 * until the shape function returns. Test `d >= 0` to see a number, and do
 * every computation through the helpers: they take symbolic dims wherever
 * they take a dim, and answer INVALID_ARGUMENT for any other value below
 * KC_DIM_UNKNOWN ("dim -7 is neither a size, KC_DIM_UNKNOWN nor a
 * symbolic dim of this context"). On numbers alone they compute as
 * described above; with a symbolic dim they record an expression:
 *   with_rank*, concatenate, subshape, replace_dim, make_shape,
 *   set_output  carry symbolic dims unchanged.
 *   merge, merge_dim  two equal dims (the same symbol, or the same
 *            expression) give that dim; a symbol against a number n
 *            gives n, and against a different symbol the first, each
 *            with the assumption that the two are equal.
 *   broadcast  1 against d gives d; two equal dims give that dim; a
 *            symbol against a number n other than 1 gives n (the symbol
 *            can only be 1 or n, and either way the result is n; the call
 *            checks which when it runs); two different symbols give the
 *            first, with the assumption that they are equal (which one
 *            is 1, if either, is not known: kcall does not guess).
 *   add_dims, multiply_dims  a + b, a * b (a + 0 and a * 1 are a, a * 0
 *            is 0).
 *   subtract_dims  a - b (a - 0 is a, a - a is 0), assuming a >= b.
 *   divide_dims  floor(a / b) (a / 1 is a), assuming b >= 1 when b is
 *            symbolic, and that b divides a when `evenly`.
 * An assumption is a condition the result holds under, which kcall
 * cannot decide from symbols: it is recorded with the result, and the
 * framework enforces it (kcall.torch: torch._check, a guard or a run-time
 * assert; kcall.jax: proved from JAX's symbolic dims at trace time, or
 * the call is refused). Nothing is assumed silently: a dim whose value
 * would depend on an undecided comparison is either an assumption or
 * KC_DIM_UNKNOWN (a symbol broadcast against an unknown dim).
 */

/* ======================================================================== */
/* Eager calls                                                              */
/* ======================================================================== */

/* One attribute given to a call: the attr's name and its value (see
 * "Attribute values"; an int is accepted for a float attr, and a string
 * naming a dtype for a type attr). Both borrowed for the call. */
typedef struct kc_op_attr {
  kc_string_view name;
  kc_any value;
} kc_op_attr;

/* Options of a call; NULL means all defaults. */
typedef struct kc_op_call_options {
  size_t struct_size;
  /* Outputs and temporaries are allocated from it; NULL: system. */
  const kc_allocator* allocator;
  /* The pool kernels get (kc_kernel_ctx_get_thread_pool); NULL: the
   * default pool. */
  kc_thread_pool* thread_pool;
  /* Calls on a device (cuda:N) only: the stream the kernel queues its work
   * on (a cudaStream_t; kc_kernel_ctx_get_stream). The call returns without
   * waiting for it: the outputs are ready when the stream reaches that
   * point, and temporary device memory is freed in the stream's order.
   * NULL: kcall's default stream of the device
   * (kc_device_get_default_stream), and the call waits for the stream
   * before it returns, reporting what the device hit meanwhile. Ignored on
   * the CPU. */
  void* stream;
} kc_op_call_options;

/*
 * Calls `op` on `inputs` (borrowed DLTensors, compact row-major, all on one
 * device: the kernel's device; CPU when there are none). A call whose
 * inputs are on a device (cuda:N) runs a kernel registered for that device
 * type, with outputs allocated on that device and the stream of
 * `options->stream` (see kc_op_call_options); a host input is refused
 * there unless the kernel declares that arg host memory
 * (kc_kernel_builder_add_host_memory_arg), and an output so declared is
 * allocated in host memory. Inputs are given
 * flat, in order; the length of an "N * T" or list input comes from its
 * attr when given, else from the number of inputs left over (so only one
 * such input may go without it). In order, the call:
 *   1. checks the inputs against the definition (count, dtype of each,
 *      device) and infers type attrs, N and type lists from them;
 *   2. resolves the attributes: given ones (checked against kind, set and
 *      bounds), inferred ones, defaults; a missing one is an error;
 *   3. runs the shape function;
 *   4. finds the constructed kernel for (op, attributes, device) in the
 *      op's cache, or picks one (highest priority among those whose device
 *      and type constraints match; the first registered among equals),
 *      constructs it and caches it;
 *   5. allocates the outputs whose shapes are known and computes.
 * A repeat call with the same attributes and dtypes skips step 4's
 * selection and construction. A call given no attrs whose inputs have the
 * count, dtypes and device of a recent such call (the op remembers up to 4
 * at once, 64 in its life) also skips steps 1 and 2 beyond checking each
 * input's rank, dims and layout: it has the same resolution, so it gives
 * the same results and errors. Registering a new kernel makes each cached
 * entry re-check its selection once.
 *
 * On success out_outputs[0 .. *out_num_outputs) hold new tensors the
 * caller owns (release with kc_object_release). On the CPU an output's
 * object and storage come from `options->allocator`, or when that is NULL
 * from kcall's caching host allocator (kc_allocator_caching, kcall/base.h):
 * when the last reference to the output goes, its memory returns to the
 * cache of the thread that released it, and the next call of a similar
 * size on that thread takes it again, so repeated calls on large tensors
 * neither take fresh zero-filled pages nor make system calls. The cache is
 * bounded by KCALL_HOST_CACHE_MB (0 turns it off). The memory of an output
 * of at most 256 bytes shares one block with the tensor object. On
 * failure nothing is left in out_outputs. Errors, with context "calling
 * op 'NAME'":
 *   INVALID_ARGUMENT  wrong input count, dtype or device, a bad or missing
 *                     attr, an input that is not compact, a shape function
 *                     failure, NULL pointers
 *   NOT_FOUND         no kernel matches; the message lists the op's
 *                     kernels with their devices and dtypes
 *   OUT_OF_RANGE      the op produces more outputs than max_outputs, or a
 *                     device ordinal past the last device
 *   FAILED_PRECONDITION  inputs on cuda:N where there is no CUDA device
 *                     ("no CUDA device: ...")
 *   INTERNAL          the device reported an error while the call waited
 *                     for its stream
 *   RESOURCE_EXHAUSTED
 *   any code          the kernel's own failure
 * Thread-safe.
 */
KC_API kc_status* kc_op_call(const kc_op* op, const DLTensor* const* inputs,
                             int32_t num_inputs, const kc_op_attr* attrs,
                             int32_t num_attrs,
                             const kc_op_call_options* options,
                             kc_tensor** out_outputs, int32_t max_outputs,
                             int32_t* out_num_outputs);

/* As kc_op_call, but the results go into caller-owned `outputs`, which
 * must have exactly the number, dtypes, shapes and device the call
 * produces (INVALID_ARGUMENT naming the first that does not) and be
 * compact. Nothing is allocated for them. */
KC_API kc_status* kc_op_call_into(const kc_op* op,
                                  const DLTensor* const* inputs,
                                  int32_t num_inputs, const kc_op_attr* attrs,
                                  int32_t num_attrs,
                                  const kc_op_call_options* options,
                                  DLTensor* const* outputs,
                                  int32_t num_outputs);

/* What shape inference says of one output. */
typedef struct kc_op_output_info {
  DLDataType dtype;
  int32_t rank;                     /* KC_RANK_UNKNOWN when not inferred */
  int64_t dims[KC_TENSOR_MAX_NDIM]; /* KC_DIM_UNKNOWN where not inferred */
} kc_op_output_info;

/* Runs steps 1 to 3 of kc_op_call (check the inputs, resolve the
 * attributes, run the shape function) and reports each output's dtype and
 * shape, without a kernel: what a tracer needs to describe an op's
 * outputs before running it (PyTorch's fake tensors, JAX's abstract
 * evaluation). Only the inputs' dtype, ndim, shape, strides and device are
 * read; their data may be NULL. An output the shape function leaves unset
 * (or sets with unknown dims) has rank KC_RANK_UNKNOWN (or
 * KC_DIM_UNKNOWN dims). On success out_outputs[0 .. *out_num_outputs)
 * are filled. Errors as kc_op_call's steps 1 to 3 (INVALID_ARGUMENT,
 * OUT_OF_RANGE when the op has more outputs than max_outputs), with
 * context "calling op 'NAME'". Allocates nothing that outlives the call.
 * Thread-safe. */
KC_API kc_status* kc_op_infer(const kc_op* op, const DLTensor* const* inputs,
                              int32_t num_inputs, const kc_op_attr* attrs,
                              int32_t num_attrs,
                              kc_op_output_info* out_outputs,
                              int32_t max_outputs, int32_t* out_num_outputs);

/* ---- symbolic shape inference (see "Symbolic dims") ------------------- */

/* In the input shapes given to kc_op_infer_symbolic, the dim that stands
 * for the caller's symbol k (0 <= k < KC_DIM_SYMBOL_COUNT): dims with the
 * same k are the same size, dims with different k are independent sizes
 * (KC_DIM_SYMBOL(0) is -2, KC_DIM_SYMBOL(1) -3, ...). */
#define KC_DIM_SYMBOL_COUNT (1 << 20)
#define KC_DIM_SYMBOL(k) (-2 - (int64_t)(k))

/* What a symbolic dim of a result stands for (kc_symbolic_shapes_get_expr).
 * Operands are dims: numbers (>= 0) or symbolic dims of the same result. */
typedef enum kc_dim_expr_kind {
  KC_DIM_EXPR_INPUT = 1,    /* dim b of input tensor a: the first input dim
                               given the symbol */
  KC_DIM_EXPR_ADD = 2,      /* a + b */
  KC_DIM_EXPR_SUBTRACT = 3, /* a - b */
  KC_DIM_EXPR_MULTIPLY = 4, /* a * b */
  KC_DIM_EXPR_DIVIDE = 5    /* floor(a / b) */
} kc_dim_expr_kind;

/* A condition a symbolic result holds under (see "Symbolic dims"). */
typedef enum kc_dim_assumption_kind {
  KC_DIM_ASSUME_EQUAL = 1,         /* lhs == rhs */
  KC_DIM_ASSUME_GREATER_EQUAL = 2, /* lhs >= rhs */
  KC_DIM_ASSUME_DIVISIBLE = 3      /* lhs % rhs == 0 */
} kc_dim_assumption_kind;

/* The outcome of a symbolic shape inference: each output's dtype and
 * dims, the expressions behind its symbolic dims, and the assumptions.
 * Owned by the caller (kc_symbolic_shapes_destroy); immutable, so it may
 * be read from several threads. */
typedef struct kc_symbolic_shapes kc_symbolic_shapes;

/* As kc_op_infer, with input dims that may be symbols: each input dim is
 * a number (>= 0) or KC_DIM_SYMBOL(k). Runs steps 1 to 3 of kc_op_call
 * (the checks see a symbol as some size) with the shape function seeing
 * a symbolic dim for each symbol, and returns what it found in
 * *out_shapes (owned by the caller). Inputs without a symbol run the
 * shape function on numbers, whatever the op's flags. Errors, with
 * context "calling op 'NAME'": INVALID_ARGUMENT for NULL pointers, an
 * input dim below 0 that is no KC_DIM_SYMBOL(k), and as kc_op_infer;
 * FAILED_PRECONDITION when an input dim is a symbol and the op does not
 * declare KC_OP_SYMBOLIC_SHAPES ("op 'NAME': its shape function is not
 * symbolic ..."); the shape function's own error; RESOURCE_EXHAUSTED.
 * On failure *out_shapes is NULL. Thread-safe. */
KC_API kc_status* kc_op_infer_symbolic(const kc_op* op,
                                       const DLTensor* const* inputs,
                                       int32_t num_inputs,
                                       const kc_op_attr* attrs,
                                       int32_t num_attrs,
                                       kc_symbolic_shapes** out_shapes);

/* Frees the result; NULL is a no-op. */
KC_API void kc_symbolic_shapes_destroy(kc_symbolic_shapes* shapes);

/* The number of output tensors (0 for NULL). */
KC_API int32_t kc_symbolic_shapes_get_output_count(
    const kc_symbolic_shapes* shapes);

/* The index-th output: its dtype, rank (KC_RANK_UNKNOWN when the shape
 * function left it unset) and dims (numbers, KC_DIM_UNKNOWN, or symbolic
 * dims to read with kc_symbolic_shapes_get_expr; borrowed from `shapes`,
 * NULL for an unknown rank). INVALID_ARGUMENT for NULL pointers or an
 * index out of range. */
KC_API kc_status* kc_symbolic_shapes_get_output(
    const kc_symbolic_shapes* shapes, int32_t index, DLDataType* out_dtype,
    int32_t* out_rank, const int64_t** out_dims);

/* What the symbolic dim `dim` of `shapes` is: *out_kind a
 * kc_dim_expr_kind, *out_a and *out_b its operands. INVALID_ARGUMENT for
 * NULL pointers, or a dim that is not a symbolic dim of `shapes` (a
 * number, KC_DIM_UNKNOWN, another result's dim). */
KC_API kc_status* kc_symbolic_shapes_get_expr(const kc_symbolic_shapes* shapes,
                                              int64_t dim, int32_t* out_kind,
                                              int64_t* out_a, int64_t* out_b);

/* The assumptions, in the order the shape function made them; each is a
 * kc_dim_assumption_kind and two dims. INVALID_ARGUMENT for NULL
 * pointers or an index out of range. */
KC_API int32_t kc_symbolic_shapes_get_assumption_count(
    const kc_symbolic_shapes* shapes);
KC_API kc_status* kc_symbolic_shapes_get_assumption(
    const kc_symbolic_shapes* shapes, int32_t index, int32_t* out_kind,
    int64_t* out_lhs, int64_t* out_rhs);

/* Counters of an op's kernel cache, for tests and diagnostics. */
typedef struct kc_op_cache_stats {
  size_t struct_size;    /* set by the caller */
  int64_t entries;       /* distinct (attributes, device) keys cached */
  int64_t constructions; /* kernel instances built (create run), ever */
  int64_t reselections;  /* entries re-checked after a kernel registration */
} kc_op_cache_stats;

/* Fills `out` up to out->struct_size. */
KC_API void kc_op_query_cache(const kc_op* op, kc_op_cache_stats* out);

/* ---- ops as packed functions -------------------------------------------- */
/*
 * The function "op.NAME" takes, in order:
 *   - the inputs: tensors (a DLTensor* or a tensor object), or arrays of
 *     tensors, flattened in order;
 *   - then the attributes, each either a string "name=value" (the value
 *     written as in a spec default, docs/ops.md; a string attr may go
 *     unquoted) or a 2-item array [name, value].
 * It returns the single output as a tensor object, several as an array of
 * them, or none when the op has no outputs. Outputs come from the system
 * allocator and the default pool.
 */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_OP_H_ */
