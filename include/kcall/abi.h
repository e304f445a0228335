/*
 * kcall/abi.h — every type that crosses the plugin boundary, and the host
 * API table a plugin receives.
 *
 * This is the plugin-facing header. It includes only <stddef.h>,
 * <stdint.h> and <stdbool.h>, is valid C11 and C++, and is all a plugin
 * needs: a plugin built against it reaches the host only through the
 * kc_host_api table handed to its entry point, so it need not link libkcall.
 *
 * It holds the ABI itself, what a shipped library must keep: the types,
 * constants and layouts that cross the boundary, the host table and the
 * entry point. The inline helpers built only on them (value constructors,
 * kc_sv, the argument readers kc_host_args_*, kc_host_register_functions)
 * compile into each plugin; they are in kcall/abi_helpers.h, which this
 * header includes at its end.
 *
 * ABI rules (docs/abi.md has the long form):
 *   - Every struct that crosses the boundary and may grow starts with
 *     `size_t struct_size`. Fields are only ever appended. A reader reads a
 *     field only if it lies inside the struct_size it was given
 *     (KC_STRUCT_HAS below).
 *   - kc_host_api is append-only. A plugin built against a newer minor than
 *     the host offers sees the host's (smaller) struct_size and api_minor and
 *     must not call past them.
 *   - Layouts of shipped structs are frozen by static assertions in the
 *     library.
 *
 * Ownership, once for the whole API:
 *   - A `_create` function returns an owned object or status; the caller
 *     releases it (`kc_object_release`, `kc_status_destroy`).
 *   - Arguments are borrowed for the duration of the call.
 *   - Accessors (`_get_*`) return borrowed pointers that live as long as the
 *     object they came from.
 *   - `_destroy(NULL)` and `_release(NULL)` are no-ops.
 *   - A value written to an `out_*` or `ret` parameter is owned by the
 *     caller.
 */
#ifndef KCALL_ABI_H_
#define KCALL_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Export macros                                                             */
/* ------------------------------------------------------------------------ */

/* KC_API marks a function exported from libkcall. The library is built with
 * -fvisibility=hidden; nothing else is visible. */
#if defined(_WIN32)
#if defined(KC_BUILDING_LIBRARY)
#define KC_API __declspec(dllexport)
#else
#define KC_API
#endif
#else
#define KC_API __attribute__((visibility("default")))
#endif

/* KC_PLUGIN_EXPORT marks the one symbol a plugin exports. */
#ifdef __cplusplus
#define KC_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define KC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Marks a printf-style function: argument fmt_index is the format. */
#if defined(__GNUC__)
#define KC_PRINTF(fmt_index, first_arg) \
  __attribute__((format(printf, fmt_index, first_arg)))
#else
#define KC_PRINTF(fmt_index, first_arg)
#endif

/* True when `field` of `type` lies wholly inside the struct_size that `p`
 * (a pointer to that type) declares. Read a field only when this holds. */
#define KC_STRUCT_HAS(p, type, field)                                         \
  ((p)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* Version of the plugin API (the kc_host_api table and kc_plugin_info).
 * A different major is refused; a newer plugin minor is capped to the
 * host's. */
#define KC_API_VERSION_MAJOR 1
#define KC_API_VERSION_MINOR 5

/* ------------------------------------------------------------------------ */
/* DLPack 1.x, declared from the DLPack specification, layout for layout.    */
/* Skipped when the official dlpack.h was included first.                    */
/* ------------------------------------------------------------------------ */
#ifndef DLPACK_MAJOR_VERSION
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1
#define DLPACK_EXTERN_C
#define DLPACK_DLL

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} DLTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1ULL << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1ULL << 1)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1ULL << 2)

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif /* DLPACK_MAJOR_VERSION */

/* ------------------------------------------------------------------------ */
/* Status                                                                    */
/* ------------------------------------------------------------------------ */

/* The 17 canonical codes, written once. X(NAME, value). */
#define KC_STATUS_CODES(X)                                                     \
  X(OK, 0)                                                                     \
  X(CANCELLED, 1)                                                              \
  X(UNKNOWN, 2)                                                                \
  X(INVALID_ARGUMENT, 3)                                                       \
  X(DEADLINE_EXCEEDED, 4)                                                      \
  X(NOT_FOUND, 5)                                                              \
  X(ALREADY_EXISTS, 6)                                                         \
  X(PERMISSION_DENIED, 7)                                                      \
  X(RESOURCE_EXHAUSTED, 8)                                                     \
  X(FAILED_PRECONDITION, 9)                                                    \
  X(ABORTED, 10)                                                               \
  X(OUT_OF_RANGE, 11)                                                          \
  X(UNIMPLEMENTED, 12)                                                         \
  X(INTERNAL, 13)                                                              \
  X(UNAVAILABLE, 14)                                                           \
  X(DATA_LOSS, 15)                                                             \
  X(UNAUTHENTICATED, 16)

typedef enum kc_status_code {
#define KC__CODE_ENUM(name, value) KC_##name = value,
  KC_STATUS_CODES(KC__CODE_ENUM)
#undef KC__CODE_ENUM
} kc_status_code;

/* An error: code, message, and context added while it propagates. NULL is
 * success. Opaque; see base.h for the functions. */
typedef struct kc_status kc_status;

/* ------------------------------------------------------------------------ */
/* Strings and allocators                                                    */
/* ------------------------------------------------------------------------ */

/* A borrowed run of bytes. Not necessarily NUL-terminated. */
typedef struct kc_string_view {
  const char* data;
  size_t size;
} kc_string_view;

/* An allocator: one function and its state, in the style of Lua's
 * lua_Alloc. `fn(self, NULL, 0, n, align)` allocates n bytes aligned to
 * `align` (a power of two; 0 means the platform's default);
 * `fn(self, p, old, 0, align)` frees p (returns NULL); both sizes non-zero
 * reallocates. Returns NULL when out of memory. `old_size` and `align` are
 * the values p was allocated with. Must be thread-safe. */
typedef struct kc_allocator {
  void* self;
  void* (*fn)(void* self, void* ptr, size_t old_size, size_t new_size,
              size_t alignment);
} kc_allocator;

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

/* Type indices of kc_any, written once. X(NAME, value, "printed name").
 * Indices below KC_TYPE_OBJECT_BEGIN are plain values held in the payload;
 * indices from KC_TYPE_OBJECT_BEGIN on are reference-counted objects. */
#define KC_POD_TYPES(X)                                                        \
  X(NONE, 0, "none")                                                           \
  X(BOOL, 1, "bool")                                                           \
  X(INT, 2, "int")                                                             \
  X(FLOAT, 3, "float")                                                         \
  X(OPAQUE_PTR, 4, "opaque_ptr")                                               \
  X(DTYPE, 5, "dtype")                                                         \
  X(DEVICE, 6, "device")                                                       \
  X(RAW_STR, 7, "str")                                                         \
  X(DLTENSOR_PTR, 8, "tensor")                                                 \
  X(SMALL_STR, 9, "str")
#define KC_OBJECT_TYPES(X)                                                     \
  X(STR, 64, "str")                                                            \
  X(BYTES, 65, "bytes")                                                        \
  X(FUNC, 66, "function")                                                      \
  X(ARRAY, 67, "array")                                                        \
  X(TENSOR, 68, "tensor")                                                      \
  X(MODULE, 69, "module")

typedef enum kc_type_index {
#define KC__TYPE_ENUM(name, value, text) KC_TYPE_##name = value,
  KC_POD_TYPES(KC__TYPE_ENUM) KC_OBJECT_TYPES(KC__TYPE_ENUM)
#undef KC__TYPE_ENUM
  KC_TYPE_OBJECT_BEGIN = 64
} kc_type_index;

/* Longest string held inline in a kc_any (KC_TYPE_SMALL_STR), excluding
 * the terminating NUL that is always stored after it. */
#define KC_SMALL_STR_MAX 7

/* The header every heap object starts with. `ref_count` is updated only
 * with atomic operations (kc_object_retain / kc_object_release). The
 * deleter frees the object when the count reaches zero. */
typedef struct kc_object {
  int64_t ref_count;
  int32_t type_index;
  uint32_t reserved;
  void (*deleter)(struct kc_object* self);
} kc_object;

/* A 16-byte tagged value. `small_len` is the length of an inline string
 * (KC_TYPE_SMALL_STR) and 0 otherwise. Which payload member is valid
 * follows from type_index:
 *   BOOL, INT           v_int64        FLOAT        v_float64
 *   OPAQUE_PTR          v_ptr          DTYPE        v_dtype
 *   DEVICE              v_device       RAW_STR      v_c_str (borrowed)
 *   DLTENSOR_PTR        v_dltensor (borrowed)       SMALL_STR  v_small
 *   >= OBJECT_BEGIN     v_obj (a reference is held by whoever owns the any)
 */
typedef struct kc_any {
  int32_t type_index;
  uint32_t small_len;
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    kc_object* v_obj;
    const char* v_c_str;
    DLTensor* v_dltensor;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_small[8];
  } u;
} kc_any;

/* Object handles. Each starts with a kc_object header, so a pointer to one
 * converts to kc_object* with KC_OBJECT(p). */
typedef struct kc_str kc_str;     /* immutable UTF-8 text, NUL-terminated */
typedef struct kc_bytes kc_bytes; /* immutable bytes */
typedef struct kc_array kc_array; /* immutable array of kc_any */
typedef struct kc_tensor kc_tensor; /* DLPack tensor with owned storage */
typedef struct kc_func kc_func;   /* packed function */
/* A pool of worker threads (kcall/runtime.h). */
typedef struct kc_thread_pool kc_thread_pool;
#define KC_OBJECT(p) ((kc_object*)(void*)(p))

/* ------------------------------------------------------------------------ */
/* Packed functions                                                          */
/* ------------------------------------------------------------------------ */

/* The one calling convention of a packed function. `args` are borrowed for
 * the call; `ret` arrives as none and, on success, receives a value the
 * caller owns. On failure the function returns a status and leaves `ret`
 * none (the caller releases anything left there). */
typedef kc_status* (*kc_packed_fn)(void* self, const kc_any* args,
                                   int32_t nargs, kc_any* ret);

/* Destructor of user data crossing the boundary. */
typedef void (*kc_deleter_fn)(void* self);

/* The frozen first fields of every function object. Exposed so that a call
 * compiles to two loads and an indirect call (kc_func_call in func.h);
 * the rest of the object is private. */
typedef struct kc_func_prefix {
  kc_object header;
  kc_packed_fn fn;
  void* self;
} kc_func_prefix;

/* Flags for kc_func_registry_register. */
#define KC_REGISTER_OVERRIDE 1u
/* The function writes none of its tensor arguments (kc_func_set_writes
 * with 0, in kcall/func.h): callers may lend it read-only and overlapping
 * memory. Packed functions only; a host that predates the flag ignores
 * it, and the function is then taken to write any tensor argument. */
#define KC_REGISTER_WRITES_NONE 2u

/* ------------------------------------------------------------------------ */
/* Devices (kcall/device.h)                                                  */
/* ------------------------------------------------------------------------ */

/* Directions of kc_device_memcpy. */
typedef enum kc_memcpy_kind {
  KC_MEMCPY_HOST_TO_DEVICE = 1,
  KC_MEMCPY_DEVICE_TO_HOST = 2,
  KC_MEMCPY_DEVICE_TO_DEVICE = 3
} kc_memcpy_kind;

/* What a device is. Filled up to struct_size by kc_device_get_properties;
 * fields a device does not have are zero. */
typedef struct kc_device_properties {
  size_t struct_size;          /* set by the caller */
  DLDevice device;
  char name[256];              /* "NVIDIA H100 80GB HBM3", "cpu" */
  int32_t compute_capability_major;
  int32_t compute_capability_minor;
  int32_t multiprocessor_count; /* CPU: online cores */
  int32_t max_threads_per_block;
  int32_t warp_size;
  size_t total_memory_bytes;
  size_t shared_memory_per_block_bytes;
  int32_t driver_version;      /* CUDA: 1000 * major + 10 * minor */
  int32_t runtime_version;     /* the runtime libkcall_cuda was built with */
  int32_t pci_bus_id;
  int32_t pci_device_id;
} kc_device_properties;

/* ------------------------------------------------------------------------ */
/* Custom calls (kcall/xcall.h)                                              */
/* ------------------------------------------------------------------------ */

/* Where a custom-call target runs. Text forms (case-insensitive): "Host" or
 * "cpu"; "CUDA" or "gpu". */
typedef enum kc_platform {
  KC_PLATFORM_HOST = 1,
  KC_PLATFORM_CUDA = 2
} kc_platform;

/* Calling conventions, numbered as XLA numbers its API versions. */
typedef enum kc_xcall_api {
  KC_XCALL_API_ORIGINAL = 1,                 /* no status */
  KC_XCALL_API_STATUS_RETURNING = 2,         /* + kc_xcall_status* */
  KC_XCALL_API_STATUS_RETURNING_UNIFIED = 3, /* CPU also gets opaque */
  KC_XCALL_API_TYPED = 4                     /* kc_xcall_frame */
} kc_xcall_api;

/* Where a STATUS_RETURNING target reports failure (see
 * kc_xcall_status_set_failure). Lives for the duration of one call. */
typedef struct kc_xcall_status kc_xcall_status;

/* Host (CPU) conventions. `out` is the result buffer, or for a tuple result
 * the root pointer table whose leaves the runtime has allocated; `ins[i]`
 * is operand i, or for a tuple operand its (nested) pointer table. */
typedef void (*kc_xcall_cpu_fn)(void* out, const void** ins);
typedef void (*kc_xcall_cpu_status_fn)(void* out, const void** ins,
                                       kc_xcall_status* status);
typedef void (*kc_xcall_cpu_unified_fn)(void* out, const void** ins,
                                        const char* opaque, size_t opaque_len,
                                        kc_xcall_status* status);
/* CUDA conventions: `buffers` holds the operands then the results,
 * flattened in pre-order. Registered now, run by the CUDA backend. */
typedef void (*kc_xcall_gpu_fn)(void* stream, void** buffers,
                                const char* opaque, size_t opaque_len);
typedef void (*kc_xcall_gpu_status_fn)(void* stream, void** buffers,
                                       const char* opaque, size_t opaque_len,
                                       kc_xcall_status* status);

/* Typed attributes, decoded once when a program is built. Integers keep
 * their declared width in `type` but are held widened (v.i64 / v.u64);
 * array elements are stored packed at their declared width. */
typedef enum kc_attr_type {
  KC_ATTR_BOOL = 1,
  KC_ATTR_I8,
  KC_ATTR_I16,
  KC_ATTR_I32,
  KC_ATTR_I64,
  KC_ATTR_U8,
  KC_ATTR_U16,
  KC_ATTR_U32,
  KC_ATTR_U64,
  KC_ATTR_F32,
  KC_ATTR_F64,
  KC_ATTR_STRING,
  KC_ATTR_ARRAY, /* of numbers: elem_type says which */
  KC_ATTR_DICT
} kc_attr_type;

typedef struct kc_attr kc_attr;

/* A dictionary of attributes, in the order they were written. */
typedef struct kc_attr_dict {
  size_t count;
  const kc_attr* entries;
} kc_attr_dict;

struct kc_attr {
  kc_string_view name;
  int32_t type;      /* kc_attr_type */
  int32_t elem_type; /* for KC_ATTR_ARRAY: the kc_attr_type of elements */
  union {
    bool b;
    int64_t i64; /* KC_ATTR_I8 .. KC_ATTR_I64 */
    uint64_t u64; /* KC_ATTR_U8 .. KC_ATTR_U64 */
    float f32;
    double f64;
    kc_string_view str;
    struct {
      const void* data;
      size_t count;
    } array;
    kc_attr_dict dict;
  } v;
};

/* What a typed handler is called with. */
typedef enum kc_xcall_stage {
  KC_XCALL_STAGE_INSTANTIATE = 0, /* once per instruction, at compile */
  KC_XCALL_STAGE_EXECUTE = 1      /* every time the program runs */
} kc_xcall_stage;

typedef struct kc_xcall_frame {
  size_t struct_size;
  int32_t stage; /* kc_xcall_stage */
  int32_t num_args;
  int32_t num_results;
  int32_t num_attrs;
  /* Operands then results, as row-major DLTensors (on the CPU, or on the
   * device for a program compiled for KC_PLATFORM_CUDA): tuple operands
   * and results are flattened to their leaves in pre-order. At
   * INSTANTIATE, `data` is NULL; shapes and dtypes are final. At EXECUTE
   * the frame and these DLTensors are read-only to the handler: runs
   * reuse them and write again only the addresses that changed. */
  DLTensor* args;
  DLTensor* results;
  /* The attributes the signature declares, in the signature's order, so a
   * handler reads attrs[i] without looking names up. */
  const kc_attr* attrs;
  /* At INSTANTIATE the handler may set `state` (and `state_deleter`, run
   * when the compiled program is destroyed) and `scratch_bytes`. State is
   * shared by concurrent executions: keep it read-only or synchronised. */
  void* state;
  void (*state_deleter)(void* state);
  size_t scratch_bytes;
  /* At EXECUTE: scratch_bytes of 64-byte aligned memory for this call. */
  void* scratch;
  /* Never NULL, on the host and on CUDA: the pool the program was compiled
   * with (kc_compile_options.thread_pool), else, and under XLA, the
   * default pool (kcall/runtime.h). */
  kc_thread_pool* thread_pool;
  void* stream;                /* the device stream; NULL on the host */
  void* user;                  /* given at registration */
  const char* instruction_name;
} kc_xcall_frame;

typedef kc_status* (*kc_xcall_handler_fn)(kc_xcall_frame* frame);

/* A buffer a typed handler accepts. `dtype.bits == 0` accepts any dtype;
 * `rank < 0` accepts any rank. */
typedef struct kc_xcall_buffer_spec {
  DLDataType dtype;
  int32_t rank;
} kc_xcall_buffer_spec;

/* An attribute a typed handler requires. For KC_ATTR_ARRAY, `elem_type`
 * names the element type (0: any). */
typedef struct kc_xcall_attr_spec {
  const char* name;
  int32_t type;
  int32_t elem_type;
} kc_xcall_attr_spec;

/* What a typed handler declares when it registers; checked once, when a
 * program that calls it is compiled. The arrays are copied. */
typedef struct kc_xcall_signature {
  size_t struct_size;
  int32_t num_args;
  const kc_xcall_buffer_spec* args;
  int32_t num_results;
  const kc_xcall_buffer_spec* results;
  int32_t num_attrs;
  const kc_xcall_attr_spec* attrs;
  /* Appended in 1.0 (read only when struct_size covers it): KC_XCALL_SIG_*
   * bits. */
  uint32_t flags;
  /* Appended in 1.1 (read only when struct_size covers it): optional
   * attributes. NULL, or num_attrs entries parallel to `attrs`: an entry
   * whose type is 0 leaves its attribute required; any other is the
   * default (of the attribute's type and element type; not a dictionary)
   * handed to the handler where a call site omits the attribute. Its name
   * is ignored. Deep-copied at registration. */
  const kc_attr* attr_defaults;
  /* Appended in 1.4 (read only when struct_size covers it): NULL, or how
   * the target's gradient is computed, by another typed target of the same
   * platform: the spec of kc_op_builder_set_gradient (kcall/op.h,
   * "Gradients") with the target's buffers named by position, since they
   * have no names: argN is argument N, resultN result N, grad(resultN) its
   * cotangent, and each RESULT grad(argN). The scale target of
   * examples/everywhere declares "scale(grad(result0)) -> grad(arg0)". The
   * gradient target gets the forward call's attributes. Copied and
   * checked at registration (kc_xcall_register_typed); kcall.jax.call_target
   * turns it into jax.custom_vjp, and kc_xcall_get_gradient reads it back.
   * A plugin that sets it lists the host feature "target_gradient" among
   * its required_features: an older host would ignore the field. */
  const char* gradient;
} kc_xcall_signature;

/* An open signature: any number of operands and results of any dtype and
 * rank, and every attribute of the call site handed over, sorted by name
 * (bytewise; nested dictionaries too), whatever their names and types. The
 * three lists must then be empty. This is how a handler that decodes its
 * own frame is checked: XLA FFI handlers (kcall/xla_ffi.h) are registered
 * with it. */
#define KC_XCALL_SIG_OPEN 1u

/* The handler does nothing at KC_XCALL_STAGE_INSTANTIATE (no state, no
 * scratch): runtimes may skip that stage. XLA's, through the adapter
 * (kc_xla_ffi_adapter_create), then calls the handler without looking up
 * per-call-site state, which costs XLA a lock per call. */
#define KC_XCALL_SIG_NO_INSTANTIATE 2u

/* The handler may be captured into a CUDA graph (see KC_XCALL_GRAPH_SAFE,
 * which registration flags may say instead). */
#define KC_XCALL_SIG_GRAPH_SAFE 4u

/* How the target batches under a framework's vmap (kcall.jax.ffi_call
 * passes the matching vmap_method; see kc_op_batching): with neither bit
 * one call per batch element, ELEMENTWISE one call on the whole batch
 * (the target computes each slice along a new leading dim of all its
 * buffers as it would alone), NONE refused. At most one of the two. */
#define KC_XCALL_SIG_BATCH_ELEMENTWISE 8u
#define KC_XCALL_SIG_BATCH_NONE 16u

/* An XLA FFI handler, XLA_FFI_Error* fn(XLA_FFI_CallFrame*), with XLA's
 * pointer types erased so that this header needs none of XLA's (see
 * kcall/xla_ffi.h). A handler built with XLA's C++ headers
 * (XLA_FFI_DEFINE_HANDLER_SYMBOL) converts to it with a cast. */
typedef void* (*kc_xla_ffi_handler_fn)(void* call_frame);

/* XLA's handler bundle: one handler per execution stage. Only `execute` is
 * required. The same function may serve several stages. */
typedef struct kc_xla_ffi_handlers {
  size_t struct_size; /* sizeof(kc_xla_ffi_handlers) as the caller saw it */
  kc_xla_ffi_handler_fn instantiate; /* optional: once per call site */
  kc_xla_ffi_handler_fn prepare;     /* optional */
  kc_xla_ffi_handler_fn initialize;  /* optional */
  kc_xla_ffi_handler_fn execute;     /* required: every run */
} kc_xla_ffi_handlers;

/* A kc_xcall_register_xla_ffi flag: register without asking the handler
 * for XLA's metadata (its API version), for handlers that predate XLA's
 * metadata extension and would otherwise be run by the query. */
#define KC_XLA_FFI_NO_METADATA (1u << 8)

/* A registration flag for custom-call targets (kc_xcall_register,
 * kc_xcall_register_v2, kc_xcall_register_typed, kc_xcall_register_xla_ffi):
 * the target may be captured into a CUDA graph. Its host code then runs
 * only while a run is captured, and later runs replay the device work it
 * queued: it must queue all its work on the stream it is given, and must
 * neither synchronise nor read device results on the host nor depend on
 * host state that changes between runs. Ignored on the host. */
#define KC_XCALL_GRAPH_SAFE (1u << 9)

/* ------------------------------------------------------------------------ */
/* Ops, kernels and the thread pool (op.h, kernel.h, runtime.h)              */
/* ------------------------------------------------------------------------ */

/* A registered op definition: typed inputs, outputs and attributes, flags,
 * a doc string and a shape function (op.h). Immutable once registered. */
typedef struct kc_op kc_op;
/* Collects an op definition from spec strings until it is registered. */
typedef struct kc_op_builder kc_op_builder;
/* The attribute values of one use of an op, all resolved (given, inferred
 * from the inputs, or defaulted); read with the kc_op_attrs_get_* getters. */
typedef struct kc_op_attrs kc_op_attrs;
/* A shape during shape inference (the seed's ShapeHandle): a rank and
 * dims, either of which may be unknown. Owned by the inference context it
 * came from. */
typedef struct kc_shape_handle kc_shape_handle;
/* What a shape function sees: input shapes and dtypes, the attributes, and
 * where the output shapes go. */
typedef struct kc_shape_ctx kc_shape_ctx;
/* Collects a kernel (op, device, callbacks, constraints) until registered. */
typedef struct kc_kernel_builder kc_kernel_builder;
/* What a kernel's create callback sees (the seed's OpKernelConstruction). */
typedef struct kc_kernel_construct_ctx kc_kernel_construct_ctx;
/* What a kernel's compute callback sees (the seed's OpKernelContext). */
typedef struct kc_kernel_ctx kc_kernel_ctx;

/* An unknown dimension, and an unknown rank, in shape inference. */
#define KC_DIM_UNKNOWN (-1)
#define KC_RANK_UNKNOWN (-1)

/* Op flags (kc_op_builder_set_flags). */
#define KC_OP_COMMUTATIVE (1u << 0) /* f(a, b) == f(b, a) */
#define KC_OP_AGGREGATE (1u << 1)   /* combines inputs of one type: sum */
#define KC_OP_STATEFUL (1u << 2)    /* a call may see or change state */
/* The shape function may run on symbolic dims: it computes dims only with
 * the kc_shape_ctx_* helpers (op.h, "Symbolic dims"). */
#define KC_OP_SYMBOLIC_SHAPES (1u << 3)

/* How an op batches: what a framework does when it maps the op over a
 * leading batch dim (jax.vmap); kc_op_builder_set_batching in op.h. */
typedef enum kc_op_batching {
  KC_OP_BATCH_SEQUENTIAL = 0,  /* one call per batch element (the default) */
  KC_OP_BATCH_ELEMENTWISE = 1, /* one call on the whole batch, slice by slice */
  KC_OP_BATCH_NONE = 2         /* refused: the op cannot be batched */
} kc_op_batching;

/* Infers output shapes (and may refine output dtypes); a status stops the
 * call with its message. */
typedef kc_status* (*kc_shape_fn)(kc_shape_ctx* ctx);

/* A kernel's three callbacks. create builds the per-instance state from the
 * attributes (may leave *out_kernel NULL); compute runs one call and may
 * run on several threads at once with the same state; the kernel's deleter
 * (a kc_deleter_fn) frees the state. */
typedef kc_status* (*kc_kernel_create_fn)(kc_kernel_construct_ctx* ctx,
                                          void** out_kernel);
typedef kc_status* (*kc_kernel_compute_fn)(void* kernel, kc_kernel_ctx* ctx);

/* The body of a parallel loop: runs units [begin, end). */
typedef void (*kc_range_fn)(void* ctx, int64_t begin, int64_t end);
/* The same, told which participant runs it: 0 <= worker_id < the pool's
 * size, and no two ranges running at once share an id. */
typedef void (*kc_range_worker_fn)(void* ctx, int64_t begin, int64_t end,
                                   int32_t worker_id);

/* A task for a thread pool, carrying its destructor (the seed's FuncWrap):
 * the pool calls fn(self) once, then deleter(self) (deleter may be NULL);
 * when the task cannot be scheduled only the deleter runs. */
typedef struct kc_closure {
  size_t struct_size;
  void (*fn)(void* self);
  void* self;
  kc_deleter_fn deleter;
} kc_closure;

/* ------------------------------------------------------------------------ */
/* The host API table                                                        */
/* ------------------------------------------------------------------------ */

/* The functions a plugin may call, each the same as the library function of
 * the same name with the prefix kc_ (func_call is kc_func_call_noinline):
 * see base.h, value.h, tensor.h, func.h, op.h, kernel.h, runtime.h,
 * xcall.h, xla_ffi.h and device.h for their contracts. kcall/plugin_api.h
 * lets plugin code call each entry by that name. Append-only: new entries
 * go at the end (API 1.0 has 115 functions, 1.1 has 126, 1.2 has 139, 1.3
 * has 140, 1.4 has 141, 1.5 has 148),
 * and a plugin checks KC_STRUCT_HAS(host, kc_host_api, entry) before it
 * calls an entry newer than the API minor it requires (or lists the
 * entry's feature in its required_features). */
typedef struct kc_host_api {
  size_t struct_size;
  uint32_t api_major;
  uint32_t api_minor;
  /* NULL-terminated names of the optional features this host offers. */
  const char* const* features;
  const kc_allocator* system_allocator;

  /* status (base.h) */
  kc_status* (*status_create)(kc_status_code code, const char* fmt, ...);
  kc_status* (*status_add_context)(kc_status* status, const char* fmt, ...);
  kc_status_code (*status_get_code)(const kc_status* status);
  const char* (*status_get_message)(const kc_status* status);
  void (*status_destroy)(kc_status* status);

  /* values (value.h) */
  void (*object_retain)(kc_object* obj);
  void (*object_release)(kc_object* obj);
  void (*any_retain)(const kc_any* value);
  void (*any_release)(kc_any* value);
  kc_status* (*any_from_string)(const kc_allocator* alloc, kc_string_view s,
                                kc_any* out_value);
  bool (*any_get_string)(const kc_any* value, kc_string_view* out_view);
  kc_status* (*str_create)(const kc_allocator* alloc, kc_string_view s,
                           kc_str** out_str);
  kc_status* (*bytes_create)(const kc_allocator* alloc, const void* data,
                             size_t size, kc_bytes** out_bytes);
  kc_status* (*array_create)(const kc_allocator* alloc, const kc_any* items,
                             size_t count, kc_array** out_array);
  size_t (*array_get_size)(const kc_array* array);
  const kc_any* (*array_get_item)(const kc_array* array, size_t index);

  /* tensors (tensor.h) */
  kc_status* (*tensor_create)(const kc_allocator* alloc, const int64_t* shape,
                              int32_t ndim, DLDataType dtype, DLDevice device,
                              kc_tensor** out_tensor);
  const DLTensor* (*tensor_get_dltensor)(const kc_tensor* tensor);

  /* packed functions and their registry (func.h) */
  kc_status* (*func_create)(const kc_allocator* alloc, kc_packed_fn fn,
                            void* self, kc_deleter_fn self_deleter,
                            kc_func** out_func);
  kc_status* (*func_call)(const kc_func* func, const kc_any* args,
                          int32_t nargs, kc_any* out_ret);
  kc_status* (*func_registry_register)(kc_string_view name, kc_func* func,
                                       uint32_t flags);
  kc_status* (*func_registry_lookup)(kc_string_view name, kc_func** out_func);

  /* typed argument helpers (func.h) */
  kc_status* (*args_check_count)(const char* fn_name, int32_t nargs,
                                 int32_t min_count, int32_t max_count);
  kc_status* (*args_get_int)(const char* fn_name, const kc_any* args,
                             int32_t nargs, int32_t index, int64_t* out_value);
  kc_status* (*args_get_float)(const char* fn_name, const kc_any* args,
                               int32_t nargs, int32_t index, double* out_value);
  kc_status* (*args_get_bool)(const char* fn_name, const kc_any* args,
                              int32_t nargs, int32_t index, bool* out_value);
  kc_status* (*args_get_string)(const char* fn_name, const kc_any* args,
                                int32_t nargs, int32_t index,
                                kc_string_view* out_value);
  kc_status* (*args_get_func)(const char* fn_name, const kc_any* args,
                              int32_t nargs, int32_t index,
                              kc_func** out_value);
  kc_status* (*args_get_dltensor)(const char* fn_name, const kc_any* args,
                                  int32_t nargs, int32_t index,
                                  DLTensor** out_value);
  kc_status* (*args_get_opaque)(const char* fn_name, const kc_any* args,
                                int32_t nargs, int32_t index,
                                void** out_value);

  /* ops and kernels (op.h, kernel.h) and the thread pool (runtime.h) */
  kc_status* (*op_builder_create)(const char* name,
                                  kc_op_builder** out_builder);
  kc_status* (*op_builder_add_input)(kc_op_builder* builder,
                                     const char* spec);
  kc_status* (*op_builder_add_output)(kc_op_builder* builder,
                                      const char* spec);
  kc_status* (*op_builder_add_attr)(kc_op_builder* builder, const char* spec);
  kc_status* (*op_builder_set_flags)(kc_op_builder* builder, uint32_t flags);
  kc_status* (*op_builder_set_doc)(kc_op_builder* builder, const char* doc);
  kc_status* (*op_builder_set_shape_fn)(kc_op_builder* builder,
                                        kc_shape_fn fn);
  void (*op_builder_destroy)(kc_op_builder* builder);
  kc_status* (*op_registry_register)(kc_op_builder* builder, uint32_t flags);
  kc_status* (*op_attrs_get_int)(const kc_op_attrs* attrs, const char* name,
                                 int64_t* out_value);
  kc_status* (*op_attrs_get_float)(const kc_op_attrs* attrs, const char* name,
                                   double* out_value);
  kc_status* (*op_attrs_get_bool)(const kc_op_attrs* attrs, const char* name,
                                  bool* out_value);
  kc_status* (*op_attrs_get_string)(const kc_op_attrs* attrs,
                                    const char* name,
                                    kc_string_view* out_value);
  kc_status* (*op_attrs_get_type)(const kc_op_attrs* attrs, const char* name,
                                  DLDataType* out_value);
  kc_status* (*op_attrs_get_shape)(const kc_op_attrs* attrs, const char* name,
                                   int64_t* out_dims, int32_t capacity,
                                   int32_t* out_rank);
  kc_status* (*op_attrs_get_int_list)(const kc_op_attrs* attrs,
                                      const char* name, int64_t* out_values,
                                      int32_t capacity, int32_t* out_count);
  kc_status* (*op_attrs_get_type_list)(const kc_op_attrs* attrs,
                                       const char* name,
                                       DLDataType* out_values,
                                       int32_t capacity, int32_t* out_count);
  kc_status* (*op_attrs_get_value)(const kc_op_attrs* attrs, const char* name,
                                   const kc_any** out_value);
  int32_t (*shape_ctx_get_input_count)(const kc_shape_ctx* ctx);
  int32_t (*shape_ctx_get_output_count)(const kc_shape_ctx* ctx);
  const kc_shape_handle* (*shape_ctx_get_input)(const kc_shape_ctx* ctx,
                                                int32_t index);
  DLDataType (*shape_ctx_get_input_dtype)(const kc_shape_ctx* ctx,
                                          int32_t index);
  DLDataType (*shape_ctx_get_output_dtype)(const kc_shape_ctx* ctx,
                                           int32_t index);
  const kc_op_attrs* (*shape_ctx_get_attrs)(const kc_shape_ctx* ctx);
  kc_status* (*shape_ctx_set_output)(kc_shape_ctx* ctx, int32_t index,
                                     const kc_shape_handle* shape);
  kc_status* (*shape_ctx_set_output_dtype)(kc_shape_ctx* ctx, int32_t index,
                                           DLDataType dtype);
  int32_t (*shape_handle_get_rank)(const kc_shape_handle* shape);
  int64_t (*shape_handle_get_dim)(const kc_shape_handle* shape,
                                  int32_t index);
  kc_status* (*shape_ctx_make_shape)(kc_shape_ctx* ctx, int32_t rank,
                                     const int64_t* dims,
                                     const kc_shape_handle** out_shape);
  kc_status* (*shape_ctx_with_rank)(kc_shape_ctx* ctx,
                                    const kc_shape_handle* shape, int32_t rank,
                                    const kc_shape_handle** out_shape);
  kc_status* (*shape_ctx_with_rank_at_least)(
      kc_shape_ctx* ctx, const kc_shape_handle* shape, int32_t rank,
      const kc_shape_handle** out_shape);
  kc_status* (*shape_ctx_with_rank_at_most)(
      kc_shape_ctx* ctx, const kc_shape_handle* shape, int32_t rank,
      const kc_shape_handle** out_shape);
  kc_status* (*shape_ctx_merge)(kc_shape_ctx* ctx, const kc_shape_handle* a,
                                const kc_shape_handle* b,
                                const kc_shape_handle** out_shape);
  kc_status* (*shape_ctx_broadcast)(kc_shape_ctx* ctx,
                                    const kc_shape_handle* a,
                                    const kc_shape_handle* b,
                                    const kc_shape_handle** out_shape);
  kc_status* (*shape_ctx_concatenate)(kc_shape_ctx* ctx,
                                      const kc_shape_handle* a,
                                      const kc_shape_handle* b,
                                      const kc_shape_handle** out_shape);
  kc_status* (*shape_ctx_subshape)(kc_shape_ctx* ctx,
                                   const kc_shape_handle* shape,
                                   int32_t start, int32_t end,
                                   const kc_shape_handle** out_shape);
  kc_status* (*shape_ctx_replace_dim)(kc_shape_ctx* ctx,
                                      const kc_shape_handle* shape,
                                      int32_t index, int64_t dim,
                                      const kc_shape_handle** out_shape);
  kc_status* (*shape_ctx_merge_dim)(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                    int64_t* out_dim);
  kc_status* (*shape_ctx_add_dims)(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                   int64_t* out_dim);
  kc_status* (*shape_ctx_subtract_dims)(kc_shape_ctx* ctx, int64_t a,
                                        int64_t b, int64_t* out_dim);
  kc_status* (*shape_ctx_multiply_dims)(kc_shape_ctx* ctx, int64_t a,
                                        int64_t b, int64_t* out_dim);
  kc_status* (*shape_ctx_divide_dims)(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                      bool evenly, int64_t* out_dim);
  /* A shape function itself: usable directly as a builder's shape fn. */
  kc_status* (*shape_fn_unchanged)(kc_shape_ctx* ctx);
  kc_status* (*kernel_builder_create)(const char* op_name,
                                      DLDeviceType device_type,
                                      kc_kernel_create_fn create,
                                      kc_kernel_compute_fn compute,
                                      kc_deleter_fn delete_fn,
                                      kc_kernel_builder** out_builder);
  kc_status* (*kernel_builder_add_type_constraint)(kc_kernel_builder* builder,
                                                   const char* attr_name,
                                                   const DLDataType* dtypes,
                                                   int32_t count);
  kc_status* (*kernel_builder_set_priority)(kc_kernel_builder* builder,
                                            int32_t priority);
  kc_status* (*kernel_builder_add_host_memory_arg)(kc_kernel_builder* builder,
                                                   const char* arg_name);
  kc_status* (*kernel_builder_set_data)(kc_kernel_builder* builder,
                                        void* data,
                                        kc_deleter_fn data_deleter);
  void (*kernel_builder_destroy)(kc_kernel_builder* builder);
  kc_status* (*kernel_registry_register)(kc_kernel_builder* builder);
  const kc_op_attrs* (*kernel_construct_ctx_get_attrs)(
      const kc_kernel_construct_ctx* ctx);
  kc_string_view (*kernel_construct_ctx_get_op_name)(
      const kc_kernel_construct_ctx* ctx);
  DLDevice (*kernel_construct_ctx_get_device)(
      const kc_kernel_construct_ctx* ctx);
  int32_t (*kernel_construct_ctx_get_input_count)(
      const kc_kernel_construct_ctx* ctx);
  DLDataType (*kernel_construct_ctx_get_input_dtype)(
      const kc_kernel_construct_ctx* ctx, int32_t index);
  int32_t (*kernel_construct_ctx_get_output_count)(
      const kc_kernel_construct_ctx* ctx);
  DLDataType (*kernel_construct_ctx_get_output_dtype)(
      const kc_kernel_construct_ctx* ctx, int32_t index);
  void* (*kernel_construct_ctx_get_data)(const kc_kernel_construct_ctx* ctx);
  int32_t (*kernel_ctx_get_input_count)(const kc_kernel_ctx* ctx);
  const DLTensor* (*kernel_ctx_get_input)(const kc_kernel_ctx* ctx,
                                          int32_t index);
  int32_t (*kernel_ctx_get_output_count)(const kc_kernel_ctx* ctx);
  DLTensor* (*kernel_ctx_get_output)(const kc_kernel_ctx* ctx, int32_t index);
  kc_status* (*kernel_ctx_get_input_range)(const kc_kernel_ctx* ctx,
                                           const char* arg_name,
                                           int32_t* out_start,
                                           int32_t* out_stop);
  kc_status* (*kernel_ctx_allocate_output)(kc_kernel_ctx* ctx, int32_t index,
                                           const int64_t* shape, int32_t ndim,
                                           DLTensor** out_tensor);
  kc_status* (*kernel_ctx_allocate_temp)(kc_kernel_ctx* ctx, size_t size,
                                         size_t alignment, void** out_ptr);
  void (*kernel_ctx_set_status)(kc_kernel_ctx* ctx, kc_status* status);
  kc_thread_pool* (*kernel_ctx_get_thread_pool)(const kc_kernel_ctx* ctx);
  void* (*kernel_ctx_get_stream)(const kc_kernel_ctx* ctx);
  DLDevice (*kernel_ctx_get_device)(const kc_kernel_ctx* ctx);
  const kc_op_attrs* (*kernel_ctx_get_attrs)(const kc_kernel_ctx* ctx);
  kc_thread_pool* (*thread_pool_get_default)(void);
  int32_t (*thread_pool_get_size)(const kc_thread_pool* pool);
  kc_status* (*thread_pool_schedule)(kc_thread_pool* pool,
                                     const kc_closure* closure);
  kc_status* (*thread_pool_schedule_with_hint)(kc_thread_pool* pool,
                                               const kc_closure* closure,
                                               int32_t start, int32_t limit);
  void (*thread_pool_parallel_for)(kc_thread_pool* pool, int64_t total,
                                   int64_t cost_per_unit, kc_range_fn fn,
                                   void* ctx);
  void (*thread_pool_parallel_for_with_worker_id)(kc_thread_pool* pool,
                                                  int64_t total,
                                                  int64_t cost_per_unit,
                                                  kc_range_worker_fn fn,
                                                  void* ctx);

  /* custom calls (xcall.h) */
  kc_status* (*xcall_register)(kc_string_view name, kc_platform platform,
                               kc_xcall_api api, void (*fn)(void),
                               uint32_t flags);
  kc_status* (*xcall_register_typed)(kc_string_view name, kc_platform platform,
                                     const kc_xcall_signature* signature,
                                     kc_xcall_handler_fn fn, void* user,
                                     kc_deleter_fn user_deleter,
                                     uint32_t flags);
  void (*xcall_status_set_failure)(kc_xcall_status* status,
                                   const char* message, size_t size);
  void (*xcall_status_set_success)(kc_xcall_status* status);
  const kc_attr* (*attr_dict_lookup)(const kc_attr_dict* dict,
                                     kc_string_view name);

  /* XLA FFI handlers (xla_ffi.h; feature "xla_ffi"). xla_ffi_get_api
   * returns kcall's XLA_FFI_Api table, as const XLA_FFI_Api*. */
  kc_status* (*xcall_register_xla_ffi)(kc_string_view name,
                                       kc_platform platform,
                                       const kc_xla_ffi_handlers* handlers,
                                       uint32_t flags);
  kc_status* (*xcall_register_xla_ffi_handler)(kc_string_view name,
                                               kc_platform platform,
                                               kc_xla_ffi_handler_fn execute,
                                               uint32_t flags);
  kc_status* (*xla_ffi_type_register)(kc_string_view name, void* type_id,
                                      const void* type_info);
  const void* (*xla_ffi_get_api)(void);

  /* ---- API 1.1 ---------------------------------------------------------- */

  /* The op builder's calls without a status each: the builder keeps the
   * first failure, with its position, for op_registry_register (op.h;
   * feature "op_builder_v2"). */
  void (*op_builder_add_input_v2)(kc_op_builder* builder, const char* spec);
  void (*op_builder_add_output_v2)(kc_op_builder* builder, const char* spec);
  void (*op_builder_add_attr_v2)(kc_op_builder* builder, const char* spec);
  void (*op_builder_set_flags_v2)(kc_op_builder* builder, uint32_t flags);
  void (*op_builder_set_doc_v2)(kc_op_builder* builder, const char* doc);
  /* User data at registration, with its destructor, reachable from the
   * call (op.h, xcall.h; feature "user_data"). */
  void (*op_builder_set_shape_fn_v2)(kc_op_builder* builder, kc_shape_fn fn,
                                     void* data, kc_deleter_fn data_deleter);
  void* (*shape_ctx_get_data)(const kc_shape_ctx* ctx);
  kc_status* (*xcall_register_v2)(kc_string_view name, kc_platform platform,
                                  kc_xcall_api api, void (*fn)(void),
                                  void* user, kc_deleter_fn user_deleter,
                                  uint32_t flags);
  void* (*xcall_status_get_user)(const kc_xcall_status* status);
  /* The function a value holds (value.h), and text quoted for a message
   * (base.h), as the library's own messages quote it. */
  bool (*any_get_func)(const kc_any* value, kc_func** out_func);
  size_t (*sv_format_quoted)(kc_string_view text, char* buf, size_t cap);

  /* ---- API 1.2 ---------------------------------------------------------- */

  /* Devices: streams, device and pinned memory, copies, properties
   * (device.h; feature "device"). */
  kc_status* (*device_get_count)(DLDeviceType type, int32_t* out_count);
  kc_status* (*device_check)(DLDevice device);
  kc_status* (*device_get_properties)(DLDevice device, kc_device_properties* out);
  kc_status* (*device_allocate)(DLDevice device, size_t bytes, void* stream,
                                void** out_ptr);
  kc_status* (*device_free)(DLDevice device, void* ptr, void* stream);
  kc_status* (*device_host_allocate)(DLDevice device, size_t bytes, void** out_ptr);
  void (*device_host_free)(DLDevice device, void* ptr);
  kc_status* (*device_memcpy)(DLDevice device, void* dst, const void* src,
                              size_t bytes, kc_memcpy_kind kind, void* stream);
  kc_status* (*device_stream_create)(DLDevice device, void** out_stream);
  void (*device_stream_destroy)(DLDevice device, void* stream);
  kc_status* (*device_stream_synchronize)(DLDevice device, void* stream);
  kc_status* (*device_get_default_stream)(DLDevice device, void** out_stream);
  kc_status* (*dltensor_copy)(const DLTensor* from, const DLTensor* to, void* stream);

  /* ---- API 1.3 ---------------------------------------------------------- */

  /* An op's gradient, declared once for every framework (op.h,
   * "Gradients"; feature "gradient"). */
  void (*op_builder_set_gradient)(kc_op_builder* builder, const char* spec);

  /* ---- API 1.4 ---------------------------------------------------------- */

  /* How an op batches, declared once for every framework (op.h,
   * "Batching"; feature "batching"). */
  void (*op_builder_set_batching)(kc_op_builder* builder, kc_op_batching rule);

  /* ---- API 1.5 ---------------------------------------------------------- */

  /* An op's forward-mode rule, declared once for every framework (op.h,
   * "Forward-mode rules"; feature "jvp"). */
  void (*op_builder_set_jvp)(kc_op_builder* builder, const char* spec);
  /* Ready-made shape functions (op.h; feature "shape_fns"). */
  kc_status* (*shape_fn_elementwise)(kc_shape_ctx* ctx);
  kc_status* (*shape_fn_broadcast)(kc_shape_ctx* ctx);
  kc_status* (*shape_fn_matmul)(kc_shape_ctx* ctx);
  kc_status* (*shape_fn_reduce)(kc_shape_ctx* ctx);
  kc_status* (*shape_fn_like_inputs)(kc_shape_ctx* ctx);
  /* The gradient op an op's gradient declaration names (op.h). */
  kc_status* (*op_builder_create_gradient)(const char* op_name, kc_op_builder** out);
} kc_host_api;

/* ------------------------------------------------------------------------ */
/* The plugin entry point                                                    */
/* ------------------------------------------------------------------------ */

/* What a plugin says about itself. The plugin owns it (usually a static
 * object); it must stay valid while the plugin is loaded. */
typedef struct kc_plugin_info {
  size_t struct_size;     /* sizeof(kc_plugin_info) as the plugin saw it */
  uint32_t api_major;     /* KC_API_VERSION_MAJOR the plugin was built with */
  uint32_t api_minor;     /* KC_API_VERSION_MINOR the plugin was built with */
  const char* name;       /* NUL-terminated, non-empty */
  const char* version;    /* the plugin's own version text; may be NULL */
  /* NULL, or a NULL-terminated list of host features the plugin cannot do
   * without; loading fails, naming the first one missing. */
  const char* const* required_features;
  /* Registers what the plugin offers. Called once, after the version check.
   * Everything registered during the call is published only if it returns
   * NULL; on a status nothing it registered remains. */
  kc_status* (*init)(const kc_host_api* host);
  /* Optional, and read only when struct_size covers it (added after the
   * 1.0 layout). A plugin opts in to being unloaded (kc_plugin_unload in
   * kcall/plugin.h) by setting it; without it the plugin stays loaded for
   * the life of the process. Called once, when the plugin is unloaded:
   * after everything it registered or made has been freed (its deleters
   * have run) and before its file is closed. It must leave nothing of the
   * plugin running or referenced: join the threads it started, wait for
   * work it scheduled on the thread pool, release references it holds to
   * the host's or other plugins' objects, free its global state, and
   * reset what init will read again (the file may stay mapped and be
   * initialised again). It must not register anything or make objects
   * (the unload then fails, leaving the file loaded), nor load or unload
   * plugins. */
  void (*fini)(const kc_host_api* host);
} kc_plugin_info;

/* The one symbol a plugin exports. It receives the host's table (to read
 * its version and features) and returns the plugin's info; it must not
 * register anything itself (that is init's job). */
#define KC_PLUGIN_ENTRY_NAME kc_plugin_entry
#define KC_PLUGIN_ENTRY_SYMBOL "kc_plugin_entry"
typedef const kc_plugin_info* (*kc_plugin_entry_fn)(const kc_host_api* host);

/* The entry point's prototype, so that a plugin compiled with
 * -Wmissing-prototypes needs nothing more than KC_PLUGIN_ENTRY. */
KC_PLUGIN_EXPORT const kc_plugin_info* KC_PLUGIN_ENTRY_NAME(
    const kc_host_api* host);

/* Declares the entry point in a plugin:
 *   KC_PLUGIN_ENTRY(host) { (void)host; return &my_info; } */
#define KC_PLUGIN_ENTRY(host_param)                                           \
  KC_PLUGIN_EXPORT const kc_plugin_info* KC_PLUGIN_ENTRY_NAME(                 \
      const kc_host_api* host_param)

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The inline helpers built on the declarations above. */
#include "kcall/abi_helpers.h"

#endif /* KCALL_ABI_H_ */
