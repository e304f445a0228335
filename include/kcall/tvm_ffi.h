/*
 * kcall/tvm_ffi.h — tvm-ffi functions in kcall, and kcall functions in
 * tvm-ffi.
 *
 * tvm-ffi (the apache-tvm-ffi package) is a C ABI for calling functions
 * across languages and frameworks: a function is
 *
 *   int fn(void* self, const TVMFFIAny* args, int32_t num_args,
 *          TVMFFIAny* result);
 *
 * and a kernel library ships as a shared object exporting one such symbol
 * per function, `__tvm_ffi_NAME` (what TVM_FFI_DLL_EXPORT_TYPED_FUNC
 * writes). Its runtime, libtvm_ffi, holds a global registry of functions
 * by name, the error being raised, and its objects (strings, tensors,
 * functions).
 *
 * libtvm_ffi is never a build or link dependency of libkcall: it is found
 * at run time, the first time something here needs it, as the first of
 *   1. the library already in the process (a tvm-ffi module kcall loads
 *      brings it in; so does `import tvm_ffi` in Python), by its soname
 *      libtvm_ffi.so;
 *   2. the file named by the environment variable KCALL_TVM_FFI_LIBRARY;
 *   3. libtvm_ffi.so on the loader's search path.
 * Without it, what needs it is refused with FAILED_PRECONDITION saying
 * what to install ("pip install apache-tvm-ffi") and how to point kcall
 * at it (KCALL_TVM_FFI_LIBRARY, e.g. the path
 * `python -c "import tvm_ffi.libinfo as l; print(l.find_libtvm_ffi())"`
 * prints). kcall speaks tvm-ffi's ABI 0.1 (apache-tvm-ffi 0.1.x); another
 * major or minor version is refused when the library is found.
 *
 * Values, both ways (tvm-ffi's type, then kcall's):
 *   None, int, bool, float, opaque pointer, DLDataType, DLDevice
 *                         the same value
 *   str (raw, small or an object)
 *                         str: arguments are lent for the call (a kcall
 *                         str holding a NUL crosses as a tvm-ffi String
 *                         made for the call), results copied
 *   bytes (byte array, small or an object)
 *                         bytes, copied
 *   DLTensor*             DLTensor* (borrowed for the call)
 *   Tensor (object)       kc_tensor, the memory shared, never copied: a
 *                         tvm-ffi tensor result becomes a kc_tensor holding
 *                         it, a kc_tensor (argument or result) a tvm-ffi
 *                         tensor holding it; a tvm-ffi tensor argument of
 *                         an exported kcall function arrives as its
 *                         DLTensor*, lent for the call
 *   Function              kc_func, calling the tvm-ffi function (and the
 *                         other way round); a function that crossed once
 *                         crosses back as the original, not a wrapper
 *   Shape, Array          array (of ints; of converted items), copied,
 *                         one way: a kcall array is refused by tvm-ffi
 *                         calls (tvm-ffi's C ABI has no array constructor)
 * Anything else (maps, modules, tvm-ffi's own object types) is refused
 * with INVALID_ARGUMENT naming the argument or result, its type key and
 * the function.
 *
 * Errors, both ways: a tvm-ffi error of kind K with message M becomes a
 * kcall status whose message is "K: M" (ValueError and TypeError are
 * INVALID_ARGUMENT, IndexError OUT_OF_RANGE, KeyError and AttributeError
 * NOT_FOUND, NotImplementedError UNIMPLEMENTED, MemoryError
 * RESOURCE_EXHAUSTED, anything else UNKNOWN); a kcall status becomes a
 * tvm-ffi error of the kind its message starts with ("K: ", K an
 * identifier starting with a capital letter, so an error crossing twice
 * keeps its kind, custom ones included) or, failing that, the kind of its code
 * (the same table read backwards; RuntimeError for the rest). A tvm-ffi
 * function that reports an interrupt (return value -2: Python's
 * KeyboardInterrupt) gives CANCELLED.
 */
#ifndef KCALL_TVM_FFI_H_
#define KCALL_TVM_FFI_H_

#include "kcall/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads the tvm-ffi module at `path` and registers each function it
 * exports as a packed function named PREFIX.NAME: `__tvm_ffi_NAME`
 * symbols, functions, defined in the file; tvm-ffi's own
 * `__tvm_ffi__...` symbols (metadata, docs, the library context) are not
 * functions to call and are skipped. Each is also registered as the
 * custom-call target PREFIX.NAME on the host, called as
 * kc_tvm_ffi_register_target says, so that `kcall run --plugin MODULE`
 * programs and kcall.jax call its kernels with no other step. `prefix` is 1 to 200 bytes of
 * [A-Za-z0-9_.]; NULL means the file's name without its directory, a
 * leading "lib" and what follows the first '.' ("libmykernels.so" ->
 * "mykernels").
 *
 * The module is a plugin like any other: loading it again returns the
 * same handle (counted: the prefix is the first load's), kc_plugin_get_desc
 * names it PREFIX ("tvm-ffi" as its version), kc_plugin_get_registration
 * lists its functions and targets, and kc_plugin_unload removes them when
 * nothing
 * holds one (else FAILED_PRECONDITION naming them, as for any plugin).
 * The file itself stays mapped for the life of the process once loaded:
 * tvm-ffi objects it made (tensors, functions, errors) carry deleters in
 * it and may be held anywhere in the process.
 *
 * kc_plugin_load on a file that has no kc_plugin_entry and exports
 * `__tvm_ffi_` functions does this with the default prefix.
 *
 * A call converts the arguments (see above), calls the function on the
 * calling thread, and converts its result; tvm-ffi's thread-local error
 * is read and cleared when it fails.
 *
 * Errors, each naming the path: as kc_plugin_load; INVALID_ARGUMENT for a
 * malformed prefix, a file exporting no tvm-ffi function, or a name that
 * is not a kcall function name; FAILED_PRECONDITION when libtvm_ffi
 * cannot be found (see above) or speaks another ABI version;
 * ALREADY_EXISTS when PREFIX.NAME is taken, as a function or as a
 * target (nothing registered). */
KC_API kc_status* kc_tvm_ffi_load_module(const char* path, const char* prefix,
                                         kc_plugin** out_plugin);

/* Registers the kcall function `name` in tvm-ffi's global registry under
 * the same name; or, when `name` ends with '.', every function whose name
 * starts with it (each under its own name). Ops are registered functions
 * too ("op.NAME", kcall/op.h), so `kc_tvm_ffi_export("op.", ...)` exports
 * every op. tvm-ffi callers then call them with tvm-ffi's values (above);
 * the tvm-ffi function holds a reference to the kcall function for as
 * long as tvm-ffi's registry (or anything else) holds it, so a plugin
 * whose functions were exported cannot be unloaded (its functions are
 * held). A function that calls tvm-ffi itself (one of a tvm-ffi module) is
 * exported as the tvm-ffi function it calls, holding nothing of kcall's.
 * Names are matched once, now: a function registered later is not
 * exported. `allow_override` replaces tvm-ffi functions of the same names;
 * without it a name tvm-ffi has already is refused (ALREADY_EXISTS) and
 * nothing is exported. *out_count (may be NULL) is the number exported.
 * Errors: INVALID_ARGUMENT for a NULL or empty name; NOT_FOUND when no
 * kcall function matches (with the nearest names); FAILED_PRECONDITION
 * without libtvm_ffi; ALREADY_EXISTS as above; an error of tvm-ffi's own,
 * converted. */
KC_API kc_status* kc_tvm_ffi_export(const char* name, bool allow_override,
                                    size_t* out_count);

/* Registers the kcall function `func_name` (a function loaded from a
 * tvm-ffi module, or any kcall function) as a custom-call target `target`
 * on `platform` (KC_PLATFORM_HOST only), in the TYPED convention with an
 * open signature, so that programs (kcall run, kc_program_compile),
 * and kcall.jax call it. Each execution calls the function
 * with the operands, then the results (which it writes: tvm-ffi's
 * destination-passing style), each a DLTensor*, then the call site's
 * attributes in name order: integers and booleans as int, floats as
 * float, strings as str; an array attribute is refused when the program
 * is compiled. Its result is ignored. The target holds a reference to the
 * function (so its plugin cannot be unloaded while the target is
 * registered). Errors: INVALID_ARGUMENT for NULLs, a malformed target
 * name or another platform; NOT_FOUND for an unknown function;
 * ALREADY_EXISTS unless `flags` has KC_REGISTER_OVERRIDE. */
KC_API kc_status* kc_tvm_ffi_register_target(kc_string_view target,
                                             kc_platform platform,
                                             kc_string_view func_name,
                                             uint32_t flags);

/* The path of the libtvm_ffi kcall uses, loading it if it was not loaded
 * yet (see above); static storage. FAILED_PRECONDITION when there is none
 * (the message says what to install). */
KC_API kc_status* kc_tvm_ffi_library(const char** out_path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_TVM_FFI_H_ */
