/*
 * kcall/xla_ffi.h — XLA FFI handlers in kcall, and kcall targets as XLA FFI
 * handlers.
 *
 * XLA's FFI is a versioned C ABI (xla/ffi/api/c_api.h): a handler is
 *
 *   XLA_FFI_Error* handler(XLA_FFI_CallFrame* call_frame);
 *
 * and reaches its host only through the XLA_FFI_Api table in the call
 * frame. kcall implements the host side of that API, version 0.3 (jaxlib
 * 0.10.2; KC_XLA_FFI_API_VERSION_* below), so a handler built with XLA's
 * own C++ headers (`XLA_FFI_DEFINE_HANDLER_SYMBOL` in xla/ffi/api/ffi.h)
 * and loaded from its shared object runs unchanged in a kcall program:
 *
 *   void* lib = dlopen("libmine.so", RTLD_NOW);
 *   kc_xla_ffi_handler_fn fn = (kc_xla_ffi_handler_fn)dlsym(lib, "AddOne");
 *   kc_xcall_register_xla_ffi_handler(KC_SV_LIT("add_one"), KC_PLATFORM_HOST,
 *                                     fn, 0);
 *
 * A program calls it as JAX prints the call:
 *
 *   y = f32[4] custom-call(x), custom_call_target="add_one",
 *       api_version=API_VERSION_TYPED_FFI, backend_config={eps = 1.0 : f32}
 *
 * What the handler gets, and when:
 *   - INSTANTIATE, PREPARE and INITIALIZE (whichever handlers are given)
 *     run once per call site when the program is compiled, in that order,
 *     with the attributes and the buffers' dtypes and dims but no data
 *     (XLA gives no buffers at instantiate; kcall gives their shapes, data
 *     NULL). State set there (XLA_FFI_State_Set) belongs to the call site
 *     and is destroyed, with its registered type's deleter, when the
 *     executable is.
 *   - EXECUTE runs on every execution. Operands then results are
 *     XLA_FFI_Buffer leaves, tuples flattened in pre-order; attributes are
 *     every attribute of the call site, sorted by name, nested dictionaries
 *     as XLA_FFI_Attrs (also sorted), integers and floats as scalars of
 *     their declared width (`true` is PRED), `array<T: ...>` and `dense<...>`
 *     as arrays (dense ones flattened in row-major order), strings as byte
 *     spans. The call frame is laid out when the program is compiled; a
 *     run writes only the buffer addresses.
 *   - The execution context offers: the call site's state (State_Get),
 *     kcall's thread pool (ThreadPool_Schedule / NumThreads: the pool the
 *     program was compiled with, else the default one), host memory
 *     (DeviceMemory_Allocate / Free: aligned memory from the run's
 *     allocator, the system's at the stages run when compiling; XLA:CPU
 *     itself refuses these), a run id shared by every
 *     call of one execution, device ordinal 0, a NULL stream (Stream_Get
 *     succeeds on the host). ExecutionContext_Get (user data) answers
 *     NOT_FOUND: kcall has no user data to offer yet.
 *   - A handler that returns an XLA_FFI_Error stops the run: the status
 *     has the error's code and message, with the target and instruction
 *     ("INVALID_ARGUMENT: running 'p': in custom call 'f' (instruction
 *     'y'): message"). A handler that sets call_frame->future is waited
 *     for before the next instruction runs; an error it sets on the future
 *     stops the run the same way.
 *
 * The other direction, kc_xla_ffi_adapter_create, gives XLA (JAX) a
 * handler that runs a kcall TYPED target.
 *
 * Thread safety: every function here is thread-safe. Registration is
 * published like kc_xcall_register's (staged while a plugin's init runs).
 * Handlers run concurrently when programs do, and must be thread-safe.
 */
#ifndef KCALL_XLA_FFI_H_
#define KCALL_XLA_FFI_H_

#include "kcall/xcall.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of XLA's FFI API kcall implements (its table, call frame and
 * metadata): 0.3. Handlers built for an older minor of the same major are
 * run; a newer minor or another major is refused at registration.
 *
 * Each argument struct a handler passes to the table is read in the
 * layout of the version it was built for, which its struct_size tells;
 * fields a version lacks take their defaults. Only the state functions'
 * structs changed: XLA_FFI_State_Set_Args of 0.2 (40 bytes) and
 * XLA_FFI_State_Get_Args of 0.0 to 0.2 (40 bytes) have no `stage` and
 * mean the instantiate stage's state; XLA_FFI_State_Set_Args of 0.0 and
 * 0.1 has no `stage` either but carries the state's own deleter (used
 * instead of its type's), and is 48 bytes like 0.3's, so kcall reads it
 * so for a handler that reported 0.0 or 0.1 in its metadata (a handler of
 * unknown version is read as 0.3). A smaller struct_size than any
 * version's is INVALID_ARGUMENT naming the struct and the sizes
 * expected. */
#define KC_XLA_FFI_API_VERSION_MAJOR 0
#define KC_XLA_FFI_API_VERSION_MINOR 3

/* kc_xla_ffi_handler_fn, kc_xla_ffi_handlers and KC_XLA_FFI_NO_METADATA
 * are declared in kcall/abi.h, so that plugins see them too. */

/*
 * Registers XLA FFI handlers as the target (name, platform), called with
 * api_version=API_VERSION_TYPED_FFI. The target's signature is open
 * (KC_XCALL_SIG_OPEN): any operands and results, every attribute.
 *
 * Unless flags has KC_XLA_FFI_NO_METADATA, each handler given is first
 * asked for its metadata, as XLA asks it: called once with a call frame
 * that carries XLA's metadata extension and no buffers. A handler built
 * with XLA's C++ headers answers with the API version it was built
 * against and does not run. kcall refuses (FAILED_PRECONDITION, naming
 * both versions) a handler built for another major or a newer minor than
 * KC_XLA_FFI_API_VERSION_*; such a handler is never called to execute.
 * A handler that answers the query with an error is refused with that
 * error's code and message (a C++ handler whose state type is not
 * registered says so: call kc_xla_ffi_type_register first). A handler
 * that returns success without answering is accepted, its version
 * unknown (kc_xcall_target_desc reports -1.-1). A handler that predates
 * the extension would run the query as a call: register it with
 * KC_XLA_FFI_NO_METADATA.
 *
 * `handlers` is copied (read up to its struct_size); the functions must
 * stay valid (their library loaded) while the target is registered and
 * any program compiled against it exists. flags: KC_REGISTER_OVERRIDE,
 * KC_XLA_FFI_NO_METADATA.
 *   INVALID_ARGUMENT     NULL handlers or execute, a struct_size too small,
 *                        a malformed name, an unknown platform, unknown
 *                        flags; a handler that is data, not code (a
 *                        library's data symbol, such as a type's
 *                        XLA_FFI_TypeInfo, named as the handler: its ELF
 *                        symbol type is STT_OBJECT, or it lies in a
 *                        segment that is not executable), named with its
 *                        symbol and library and never called
 *   FAILED_PRECONDITION  the handler's API version is not one kcall runs
 *   ALREADY_EXISTS       (name, platform) is taken (without OVERRIDE)
 *   any code             the handler answered the metadata query with an
 *                        error */
KC_API kc_status* kc_xcall_register_xla_ffi(kc_string_view name,
                                            kc_platform platform,
                                            const kc_xla_ffi_handlers* handlers,
                                            uint32_t flags);

/* The common case: one handler, for the execute stage only (what
 * XLA_FFI_DEFINE_HANDLER_SYMBOL makes). Same rules and codes. */
KC_API kc_status* kc_xcall_register_xla_ffi_handler(
    kc_string_view name, kc_platform platform, kc_xla_ffi_handler_fn execute,
    uint32_t flags);

/*
 * Registers a user type with kcall's XLA FFI host, as
 * XLA_FFI_Type_Register does (and jax.ffi.register_ffi_type): `type_id`
 * points at the handler library's XLA_FFI_TypeId (an int64_t), `type_info`
 * at its XLA_FFI_TypeInfo (NULL: objects of the type are never deleted by
 * kcall). A type id of 0 is given the next free id, written back through
 * `type_id`; a non-zero id must be free or already this name's. State a
 * handler sets (XLA_FFI_State_Set) must be of a registered type, so that
 * kcall can delete it with the executable; a C++ handler that makes state
 * reports the type's id in its metadata and is refused until the type is
 * registered. Types stay registered for the life of the process (as in
 * XLA), with their info copied; registering a name again gives its id and
 * replaces its info when `type_info` is not NULL (a library loaded anew
 * registers its types anew; state already set keeps the deleter it was
 * set with).
 *   INVALID_ARGUMENT  a NULL type_id, an empty name, a negative id
 *   ALREADY_EXISTS    the name has another id, or the id another name */
KC_API kc_status* kc_xla_ffi_type_register(kc_string_view name, void* type_id,
                                           const void* type_info);

/* kcall's XLA_FFI_Api table (as const XLA_FFI_Api*): what kcall puts in
 * every call frame. Static storage. A library that registers its handlers
 * through XLA's API (XLA_FFI_REGISTER_HANDLER, XLA_FFI_Handler_Register,
 * XLA_FFI_Type_Register) can be handed this table: a handler registered
 * through it becomes a kcall target, its platform parsed as
 * kc_platform_parse does ("cpu" is the host). */
KC_API const void* kc_xla_ffi_get_api(void);

/*
 * A kcall TYPED target as an XLA FFI handler: `*out_handler` is a
 * function XLA can call with its call frame, bound to the target (name,
 * platform), which must be registered (with kc_xcall_register_typed) when
 * this is called. Hand it to XLA for both the instantiate and the execute
 * stage, e.g. from JAX:
 *
 *   cap = jax.ffi.pycapsule(handler)   # a PyCapsule of the pointer
 *   jax.ffi.register_ffi_target("name", {"instantiate": cap,
 *                                        "execute": cap}, platform="cpu")
 *
 * What it does with XLA's call frame:
 *   - speaks the XLA FFI API version of the XLA that calls it, 0.1
 *     (jaxlib 0.5 to 0.7), 0.2 (jaxlib 0.8) or 0.3 (jaxlib 0.9 and
 *     later), read from the api_version of the XLA_FFI_Api table in each
 *     call frame: the state functions' arguments are laid out as that
 *     version lays them out. Any other version (another major, a newer
 *     minor whose layouts kcall does not know) is refused: each call
 *     returns FAILED_PRECONDITION ("kcall target 'NAME': XLA FFI API 0.4
 *     is not one kcall's adapter speaks (0.1 to 0.3, ...)");
 *   - answers XLA's metadata query with that version and no traits, which
 *     is what an XLA older than 0.3 requires (it refuses a handler of any
 *     other version; a refused registration breaks its CPU backend's
 *     start-up). An XLA whose query carries its table (jaxlib 0.9 and
 *     later) gets its own version, an unknown one the error above; an
 *     XLA whose query carries none (jaxlib before 0.9) gets the version
 *     set with kc_xla_ffi_adapter_set_api_version, 0.3 by default
 *     (kcall.jax sets the version of the jaxlib it imports);
 *   - EXECUTE turns XLA's buffers into DLTensors on the stack (XLA dtype
 *     to DLPack, dims borrowed), without allocating, and calls the target
 *     with the attributes its signature declares, looked up by name in
 *     XLA's sorted list and of exactly the declared type (an open
 *     signature gets all of them, in XLA's order);
 *   - a target whose signature has KC_XCALL_SIG_NO_INSTANTIATE is checked
 *     (buffers against the signature) and decoded (attributes borrowed
 *     from XLA's frame) on every call, and needs only the execute stage;
 *   - any other target needs both stages: INSTANTIATE registers kcall's
 *     record type with the calling XLA (once per API table) and sets, as
 *     XLA state, a per-call-site record with the attributes decoded and
 *     copied; the site's first EXECUTE checks the buffers and runs the
 *     target's INSTANTIATE (XLA's instantiate stage has no buffers;
 *     kcall's needs their shapes), once, keeping its state and scratch
 *     (64-byte aligned, reused; a concurrent call that finds it busy
 *     allocates its own). Each EXECUTE asks XLA for the record, which
 *     XLA:CPU does under a lock. XLA destroys the record (and with it the
 *     target's state) with its executable. Registered for EXECUTE only,
 *     such a target runs its INSTANTIATE, and deletes its state, on every
 *     call: correct, but slower;
 *   - XLA's call frame carries no layouts: buffers are handed over as
 *     row-major, which is what XLA gives a custom call unless the call
 *     site asks otherwise. A call site given other layouts (ffi_call's
 *     input_layouts / output_layouts in JAX) cannot be detected here and
 *     would be read in the wrong order: do not give a kcall target any;
 *   - at most 64 operands, 64 results and 128 decoded attributes
 *     (dictionary entries included) per call;
 *   - errors are made with the calling XLA's XLA_FFI_Error_Create: a
 *     target's failure keeps its status code, its message prefixed with
 *     "kcall target 'NAME': " (the code is the error's, not repeated in
 *     the message; a failure at the site's first EXECUTE is returned the
 *     same way by every later call); a missing attribute, an attribute or
 *     buffer of the wrong type, counts past the bounds, or a frame XLA
 *     never makes (attribute lists missing, a negative count, a frame
 *     smaller than XLA's) are INVALID_ARGUMENT. The adapter never aborts
 *     the process; tests/fuzz/fuzz_xla_ffi_frame.c fuzzes its decoding.
 *
 * Handlers come from a fixed pool of 256 trampolines, each bound to one
 * (name, platform) for the life of the process: asking again for the same
 * pair returns the same handler. The adapter keeps the target it was
 * created for (a reference), even if the name is later registered again.
 *   INVALID_ARGUMENT     NULL out_handler, an unknown platform
 *   NOT_FOUND            no such target (with the nearest names)
 *   FAILED_PRECONDITION  the target is not a kcall TYPED target (one of
 *                        the legacy conventions, or an XLA FFI handler)
 *   RESOURCE_EXHAUSTED   all 256 trampolines are bound */
KC_API kc_status* kc_xla_ffi_adapter_create(kc_string_view name,
                                            kc_platform platform,
                                            kc_xla_ffi_handler_fn* out_handler);

/*
 * A kcall op as an XLA FFI handler, from the same pool: each EXECUTE runs
 * kc_op_call_into(op, operands, attrs, results) on the host, so the op's
 * kernel writes straight into XLA's result buffers, whose number, dtypes
 * and shapes must be what the op's shape function says. XLA's attributes
 * become op attributes by name: integers and PRED as int and bool,
 * floats as float, strings, arrays of numbers as lists; dictionaries are
 * refused. They are decoded once per call site (at XLA's INSTANTIATE
 * stage, as for targets). Errors keep the op's status code and message.
 * Called by an XLA that offers its intra-op thread pool
 * (XLA_FFI_ThreadPool_Schedule and NumThreads, with two threads or more),
 * an op's kernel and a target's handler get a kcall pool on XLA's threads
 * (kc_kernel_ctx_get_thread_pool, kc_xcall_frame.thread_pool), so their
 * parallel loops run there rather than on kcall's default pool beside
 * them; elsewhere they get the default pool.
 *   INVALID_ARGUMENT    NULL out_handler
 *   NOT_FOUND           no such op (with the nearest names)
 *   RESOURCE_EXHAUSTED  all adapters are bound */
KC_API kc_status* kc_xla_ffi_adapter_create_for_op(
    kc_string_view op_name, kc_xla_ffi_handler_fn* out_handler);

/* The XLA FFI API version every adapter reports to an XLA whose metadata
 * query carries no API table (XLA before API 0.3, jaxlib before 0.9), which
 * accepts only a handler of exactly its own version: 0.1 for jaxlib 0.5
 * to 0.7, 0.2 for jaxlib 0.8. The default is 0.3. Set it before the
 * adapters are registered with that XLA; process-wide (one XLA per
 * process). INVALID_ARGUMENT for a version the adapter does not speak
 * (0.1 to 0.3). Thread-safe. */
KC_API kc_status* kc_xla_ffi_adapter_set_api_version(int32_t major,
                                                     int32_t minor);

/* How many adapters the pool holds. */
#define KC_XLA_FFI_ADAPTER_MAX 256

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_XLA_FFI_H_ */
