/*
 * The part of XLA's FFI C API that kcall speaks, declared here from XLA's
 * specification (xla/ffi/api/c_api.h, API version 0.3, as shipped in
 * jaxlib 0.10.2), layout for layout. Never installed: the default build
 * needs no XLA or jaxlib headers. xla_ffi_layout.h freezes every layout
 * with static assertions (LP64).
 *
 * The names are XLA's, because they are the ABI handlers are written
 * against: a handler built with XLA's own C++ headers (xla/ffi/api/ffi.h)
 * and a C handler written against this file see the same structs. When
 * XLA's header was included first, these declarations are skipped.
 *
 * Conventions of the API, once:
 *   - Every argument struct starts with `size_t struct_size` and a pointer
 *     to a chain of extensions. XLA defines a struct's size as the end of
 *     its last field *as first shipped* (KC__XLA_SIZE below); a few structs
 *     have fields past that size (the out field of Future_Create_Args,
 *     type_info of Type_Register_Args, state_type_id of XLA_FFI_Metadata),
 *     and callers set them anyway.
 *   - Functions return NULL for success or an XLA_FFI_Error the caller
 *     owns and destroys through the API table.
 *   - Strings are byte spans (pointer and length), not NUL-terminated.
 */
#ifndef KCALL_XCALL_XLA_FFI_API_H_
#define KCALL_XCALL_XLA_FFI_API_H_

#include <stddef.h>
#include <stdint.h>

/* The end of `field` in `type`: how XLA sizes its structs. */
#define KC__XLA_SIZE(type, field) \
  (offsetof(type, field) + sizeof(((type*)0)->field))

/* The version of XLA's FFI API these declarations follow. */
#define KC_XLA_FFI_API_MAJOR 0
#define KC_XLA_FFI_API_MINOR 3

#ifndef XLA_FFI_API_C_API_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef struct XLA_FFI_Api XLA_FFI_Api;
typedef struct XLA_FFI_InternalApi XLA_FFI_InternalApi; /* never used */

/* ---- extensions -------------------------------------------------------------- */

/* Kinds of extension that may hang off an argument struct. */
typedef enum {
  XLA_FFI_Extension_Metadata = 1
} XLA_FFI_Extension_Type;

/* The header every extension starts with; `next` chains them. */
typedef struct XLA_FFI_Extension_Base {
  size_t struct_size;
  XLA_FFI_Extension_Type type;
  struct XLA_FFI_Extension_Base* next;
} XLA_FFI_Extension_Base;

/* ---- version ------------------------------------------------------------------- */

/* Major: bumped by changes that break the ABI. Minor: bumped by additions
 * (fields at the end of structs, entries at the end of the table). */
typedef struct XLA_FFI_Api_Version {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int major_version;
  int minor_version;
} XLA_FFI_Api_Version;

/* ---- errors ---------------------------------------------------------------------- */

/* An error owned by whoever received it; opaque. */
typedef struct XLA_FFI_Error XLA_FFI_Error;

/* The canonical status codes, numbered as kcall's (and absl's). */
typedef enum {
  XLA_FFI_Error_Code_OK = 0,
  XLA_FFI_Error_Code_CANCELLED = 1,
  XLA_FFI_Error_Code_UNKNOWN = 2,
  XLA_FFI_Error_Code_INVALID_ARGUMENT = 3,
  XLA_FFI_Error_Code_DEADLINE_EXCEEDED = 4,
  XLA_FFI_Error_Code_NOT_FOUND = 5,
  XLA_FFI_Error_Code_ALREADY_EXISTS = 6,
  XLA_FFI_Error_Code_PERMISSION_DENIED = 7,
  XLA_FFI_Error_Code_RESOURCE_EXHAUSTED = 8,
  XLA_FFI_Error_Code_FAILED_PRECONDITION = 9,
  XLA_FFI_Error_Code_ABORTED = 10,
  XLA_FFI_Error_Code_OUT_OF_RANGE = 11,
  XLA_FFI_Error_Code_UNIMPLEMENTED = 12,
  XLA_FFI_Error_Code_INTERNAL = 13,
  XLA_FFI_Error_Code_UNAVAILABLE = 14,
  XLA_FFI_Error_Code_DATA_LOSS = 15,
  XLA_FFI_Error_Code_UNAUTHENTICATED = 16
} XLA_FFI_Error_Code;

typedef struct XLA_FFI_Error_Create_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const char* message; /* NUL-terminated; copied */
  XLA_FFI_Error_Code errc;
} XLA_FFI_Error_Create_Args;

typedef struct XLA_FFI_Error_GetMessage_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Error* error;
  const char* message; /* out: lives as long as the error */
} XLA_FFI_Error_GetMessage_Args;

typedef struct XLA_FFI_Error_Destroy_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Error* error;
} XLA_FFI_Error_Destroy_Args;

typedef XLA_FFI_Error* XLA_FFI_Error_Create(XLA_FFI_Error_Create_Args* args);
typedef void XLA_FFI_Error_GetMessage(XLA_FFI_Error_GetMessage_Args* args);
typedef void XLA_FFI_Error_Destroy(XLA_FFI_Error_Destroy_Args* args);

/* ---- element types --------------------------------------------------------------- */

/* XLA's PrimitiveType numbers (xla_data.proto). */
typedef enum {
  XLA_FFI_DataType_INVALID = 0,
  XLA_FFI_DataType_PRED = 1,
  XLA_FFI_DataType_S8 = 2,
  XLA_FFI_DataType_S16 = 3,
  XLA_FFI_DataType_S32 = 4,
  XLA_FFI_DataType_S64 = 5,
  XLA_FFI_DataType_U8 = 6,
  XLA_FFI_DataType_U16 = 7,
  XLA_FFI_DataType_U32 = 8,
  XLA_FFI_DataType_U64 = 9,
  XLA_FFI_DataType_F16 = 10,
  XLA_FFI_DataType_F32 = 11,
  XLA_FFI_DataType_F64 = 12,
  XLA_FFI_DataType_C64 = 15,
  XLA_FFI_DataType_BF16 = 16,
  XLA_FFI_DataType_TOKEN = 17,
  XLA_FFI_DataType_C128 = 18,
  XLA_FFI_DataType_F8E5M2 = 19,
  XLA_FFI_DataType_F8E4M3FN = 20,
  XLA_FFI_DataType_S4 = 21,
  XLA_FFI_DataType_U4 = 22,
  XLA_FFI_DataType_F8E4M3B11FNUZ = 23,
  XLA_FFI_DataType_F8E5M2FNUZ = 24,
  XLA_FFI_DataType_F8E4M3FNUZ = 25,
  XLA_FFI_DataType_S2 = 26,
  XLA_FFI_DataType_U2 = 27,
  XLA_FFI_DataType_F8E4M3 = 28,
  XLA_FFI_DataType_F8E3M4 = 29,
  XLA_FFI_DataType_S1 = 30,
  XLA_FFI_DataType_U1 = 31,
  XLA_FFI_DataType_F4E2M1FN = 32,
  XLA_FFI_DataType_F8E8M0FNU = 33
} XLA_FFI_DataType;

/* ---- buffers, attributes and their primitives ----------------------------------- */

/* A dense row-major array: what every operand and result is. */
typedef struct XLA_FFI_Buffer {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims; /* rank entries */
} XLA_FFI_Buffer;

typedef enum { XLA_FFI_ArgType_BUFFER = 1 } XLA_FFI_ArgType;
typedef enum { XLA_FFI_RetType_BUFFER = 1 } XLA_FFI_RetType;

/* What an attribute's `void*` points at: ARRAY an XLA_FFI_Array,
 * DICTIONARY an XLA_FFI_Attrs, SCALAR an XLA_FFI_Scalar, STRING an
 * XLA_FFI_ByteSpan. */
typedef enum {
  XLA_FFI_AttrType_ARRAY = 1,
  XLA_FFI_AttrType_DICTIONARY = 2,
  XLA_FFI_AttrType_SCALAR = 3,
  XLA_FFI_AttrType_STRING = 4
} XLA_FFI_AttrType;

typedef struct XLA_FFI_ByteSpan {
  const char* ptr;
  size_t len;
} XLA_FFI_ByteSpan;

/* `value` points at one element of `dtype`, stored at its own width. */
typedef struct XLA_FFI_Scalar {
  XLA_FFI_DataType dtype;
  void* value;
} XLA_FFI_Scalar;

/* `size` elements of `dtype`, packed. */
typedef struct XLA_FFI_Array {
  XLA_FFI_DataType dtype;
  size_t size;
  void* data;
} XLA_FFI_Array;

/* ---- user types ------------------------------------------------------------------- */

/* A user type's number in one host; 0 is "not registered yet". */
typedef struct XLA_FFI_TypeId {
  int64_t type_id;
} XLA_FFI_TypeId;

/* How the host destroys objects of a user type (state it owns). */
typedef struct XLA_FFI_TypeInfo {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  void (*deleter)(void* object);
} XLA_FFI_TypeInfo;

/* ---- the execution context and futures ------------------------------------------ */

/* Whatever the host hands a call: state, thread pool, memory, ids. Opaque. */
typedef struct XLA_FFI_ExecutionContext XLA_FFI_ExecutionContext;

/* Completion of a handler's asynchronous work. Opaque. */
typedef struct XLA_FFI_Future XLA_FFI_Future;

typedef struct XLA_FFI_Future_Create_Args {
  size_t struct_size; /* XLA sizes it to extension_start */
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Future* future; /* out */
} XLA_FFI_Future_Create_Args;

typedef struct XLA_FFI_Future_SetAvailable_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Future* future;
} XLA_FFI_Future_SetAvailable_Args;

typedef struct XLA_FFI_Future_SetError_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Future* future;
  XLA_FFI_Error* error; /* passes to the host */
} XLA_FFI_Future_SetError_Args;

typedef XLA_FFI_Error* XLA_FFI_Future_Create(XLA_FFI_Future_Create_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Future_SetAvailable(
    XLA_FFI_Future_SetAvailable_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Future_SetError(XLA_FFI_Future_SetError_Args* args);

/* ---- the call frame ------------------------------------------------------------- */

/* The four stages, in the order a host runs them: INSTANTIATE once per
 * call site (and may set state), PREPARE and INITIALIZE before running,
 * EXECUTE on every run. */
typedef enum {
  XLA_FFI_ExecutionStage_INSTANTIATE = 0,
  XLA_FFI_ExecutionStage_PREPARE = 1,
  XLA_FFI_ExecutionStage_INITIALIZE = 2,
  XLA_FFI_ExecutionStage_EXECUTE = 3
} XLA_FFI_ExecutionStage;

typedef struct XLA_FFI_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_ArgType* types; /* size entries */
  void** args;            /* size entries: XLA_FFI_Buffer* */
} XLA_FFI_Args;

typedef struct XLA_FFI_Rets {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_RetType* types;
  void** rets;
} XLA_FFI_Rets;

/* Attributes, sorted by name (bytewise), so a handler may bisect. */
typedef struct XLA_FFI_Attrs {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_AttrType* types;
  XLA_FFI_ByteSpan** names;
  void** attrs;
} XLA_FFI_Attrs;

typedef struct XLA_FFI_CallFrame {
  size_t struct_size; /* XLA sizes it to attrs: future came later */
  XLA_FFI_Extension_Base* extension_start;
  const XLA_FFI_Api* api;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_Args args;
  XLA_FFI_Rets rets;
  XLA_FFI_Attrs attrs;
  /* out: a handler that finishes later returns NULL and sets this; the
   * host waits for it. */
  XLA_FFI_Future* future;
} XLA_FFI_CallFrame;

/* ---- handlers ------------------------------------------------------------------- */

typedef XLA_FFI_Error* XLA_FFI_Handler(XLA_FFI_CallFrame* call_frame);

/* One handler per stage; only execute is required. */
typedef struct XLA_FFI_Handler_Bundle {
  XLA_FFI_Handler* instantiate;
  XLA_FFI_Handler* prepare;
  XLA_FFI_Handler* initialize;
  XLA_FFI_Handler* execute;
} XLA_FFI_Handler_Bundle;

enum XLA_FFI_Handler_TraitsBits {
  XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0
};
typedef uint32_t XLA_FFI_Handler_Traits;

typedef struct XLA_FFI_Handler_Register_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_ByteSpan platform;
  XLA_FFI_Handler_Bundle bundle;
  XLA_FFI_Handler_Traits traits;
} XLA_FFI_Handler_Register_Args;

typedef XLA_FFI_Error* XLA_FFI_Handler_Register(
    XLA_FFI_Handler_Register_Args* args);

/* ---- user types, context, state ------------------------------------------------- */

typedef struct XLA_FFI_Type_Register_Args {
  size_t struct_size; /* XLA sizes it to type_id */
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_TypeId* type_id; /* in: 0 to be given one, or the id to check */
  const XLA_FFI_TypeInfo* type_info;
} XLA_FFI_Type_Register_Args;

typedef XLA_FFI_Error* XLA_FFI_Type_Register(XLA_FFI_Type_Register_Args* args);

typedef struct XLA_FFI_ExecutionContext_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* data; /* out */
} XLA_FFI_ExecutionContext_Get_Args;

typedef XLA_FFI_Error* XLA_FFI_ExecutionContext_Get(
    XLA_FFI_ExecutionContext_Get_Args* args);

typedef struct XLA_FFI_State_Set_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage; /* whose state: the stage that made it */
  XLA_FFI_TypeId* type_id;
  void* state;
} XLA_FFI_State_Set_Args;

typedef XLA_FFI_Error* XLA_FFI_State_Set(XLA_FFI_State_Set_Args* args);

typedef struct XLA_FFI_State_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_TypeId* type_id;
  void* state; /* out */
} XLA_FFI_State_Get_Args;

typedef XLA_FFI_Error* XLA_FFI_State_Get(XLA_FFI_State_Get_Args* args);

/* ---- device: stream, memory, thread pool, ids ----------------------------------- */

typedef struct XLA_FFI_Stream_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  void* stream; /* out */
} XLA_FFI_Stream_Get_Args;

typedef XLA_FFI_Error* XLA_FFI_Stream_Get(XLA_FFI_Stream_Get_Args* args);

typedef struct XLA_FFI_DeviceMemory_Allocate_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  size_t size;
  size_t alignment;
  void* data; /* out */
} XLA_FFI_DeviceMemory_Allocate_Args;

typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Allocate(
    XLA_FFI_DeviceMemory_Allocate_Args* args);

typedef struct XLA_FFI_DeviceMemory_Free_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  size_t size;
  void* data;
} XLA_FFI_DeviceMemory_Free_Args;

typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Free(
    XLA_FFI_DeviceMemory_Free_Args* args);

/* A task for the host's pool: called once with its data, on any thread
 * (possibly the caller's). */
typedef void XLA_FFI_Task(void* data);

typedef struct XLA_FFI_ThreadPool_Schedule_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_Task* task;
  void* data;
} XLA_FFI_ThreadPool_Schedule_Args;

typedef XLA_FFI_Error* XLA_FFI_ThreadPool_Schedule(
    XLA_FFI_ThreadPool_Schedule_Args* args);

typedef struct XLA_FFI_ThreadPool_NumThreads_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  int64_t* num_threads; /* out */
} XLA_FFI_ThreadPool_NumThreads_Args;

typedef XLA_FFI_Error* XLA_FFI_ThreadPool_NumThreads(
    XLA_FFI_ThreadPool_NumThreads_Args* args);

typedef struct XLA_FFI_RunId_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  int64_t run_id; /* out */
} XLA_FFI_RunId_Get_Args;

typedef XLA_FFI_Error* XLA_FFI_RunId_Get(XLA_FFI_RunId_Get_Args* args);

typedef struct XLA_FFI_DeviceOrdinal_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  int32_t device_ordinal; /* out */
} XLA_FFI_DeviceOrdinal_Get_Args;

typedef XLA_FFI_Error* XLA_FFI_DeviceOrdinal_Get(
    XLA_FFI_DeviceOrdinal_Get_Args* args);

/* ---- metadata ------------------------------------------------------------------- */

/* What a handler says about itself when a call frame carries the metadata
 * extension: the API version it was built against and its traits. It fills
 * the struct and returns without running. */
typedef struct XLA_FFI_Metadata {
  size_t struct_size; /* XLA sizes it to traits */
  XLA_FFI_Api_Version api_version;
  XLA_FFI_Handler_Traits traits;
  XLA_FFI_TypeId state_type_id; /* the type its instantiate stage makes */
} XLA_FFI_Metadata;

typedef struct XLA_FFI_Metadata_Extension {
  XLA_FFI_Extension_Base extension_base;
  XLA_FFI_Metadata* metadata;
} XLA_FFI_Metadata_Extension;

/* ---- the API table -------------------------------------------------------------- */

struct XLA_FFI_Api {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Api_Version api_version;
  const XLA_FFI_InternalApi* internal_api; /* XLA's own; NULL in kcall */
  XLA_FFI_Error_Create* XLA_FFI_Error_Create;
  XLA_FFI_Error_GetMessage* XLA_FFI_Error_GetMessage;
  XLA_FFI_Error_Destroy* XLA_FFI_Error_Destroy;
  XLA_FFI_Handler_Register* XLA_FFI_Handler_Register;
  XLA_FFI_Stream_Get* XLA_FFI_Stream_Get;
  XLA_FFI_Type_Register* XLA_FFI_Type_Register;
  XLA_FFI_ExecutionContext_Get* XLA_FFI_ExecutionContext_Get;
  XLA_FFI_State_Set* XLA_FFI_State_Set;
  XLA_FFI_State_Get* XLA_FFI_State_Get;
  XLA_FFI_DeviceMemory_Allocate* XLA_FFI_DeviceMemory_Allocate;
  XLA_FFI_DeviceMemory_Free* XLA_FFI_DeviceMemory_Free;
  XLA_FFI_ThreadPool_Schedule* XLA_FFI_ThreadPool_Schedule;
  XLA_FFI_ThreadPool_NumThreads* XLA_FFI_ThreadPool_NumThreads;
  XLA_FFI_Future_Create* XLA_FFI_Future_Create;
  XLA_FFI_Future_SetAvailable* XLA_FFI_Future_SetAvailable;
  XLA_FFI_Future_SetError* XLA_FFI_Future_SetError;
  XLA_FFI_RunId_Get* XLA_FFI_RunId_Get;
  XLA_FFI_DeviceOrdinal_Get* XLA_FFI_DeviceOrdinal_Get;
};

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XLA_FFI_API_C_API_H_ */

/* ---- the layouts of older API versions ------------------------------------------ */

/* XLA's struct_size is a struct's version. Every argument struct of 0.3
 * holds what it held in 0.0 to 0.2 at the same offsets, except the state
 * functions': 0.3 put a `stage` after `ctx` (state became per stage), and
 * 0.2 had taken the state's deleter out of XLA_FFI_State_Set_Args (types
 * got an XLA_FFI_TypeInfo). Callers built with older headers pass these
 * layouts (jaxlib 0.4.31 to 0.7 for 0.0 and 0.1, jaxlib 0.8 for 0.2); a
 * state they set or get is the instantiate stage's. */

/* XLA_FFI_State_Set_Args of API 0.0 and 0.1: 48 bytes, like 0.3's, so the
 * host tells them apart by the version the handler reported. */
typedef struct kc__xla_state_set_args_0_1 {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* state;
  void (*deleter)(void* state); /* the state's own; may be NULL */
} kc__xla_state_set_args_0_1;

/* XLA_FFI_State_Set_Args of API 0.2, and XLA_FFI_State_Get_Args of 0.0 to
 * 0.2: 40 bytes. */
typedef struct kc__xla_state_args_0_2 {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* state; /* Set: in; Get: out */
} kc__xla_state_args_0_2;

#define KC__XLA_STATE_ARGS_0_2_SIZE KC__XLA_SIZE(kc__xla_state_args_0_2, state)
#define KC__XLA_STATE_SET_ARGS_0_1_SIZE KC__XLA_SIZE(kc__xla_state_set_args_0_1, deleter)

/* XLA's sizes of the structs, as its headers compute them: a caller built
 * with them reports exactly these. */
#define KC__XLA_CALL_FRAME_SIZE KC__XLA_SIZE(XLA_FFI_CallFrame, attrs)
#define KC__XLA_METADATA_SIZE KC__XLA_SIZE(XLA_FFI_Metadata, traits)
#define KC__XLA_METADATA_EXTENSION_SIZE \
  KC__XLA_SIZE(XLA_FFI_Metadata_Extension, metadata)
#define KC__XLA_API_VERSION_SIZE KC__XLA_SIZE(XLA_FFI_Api_Version, minor_version)
#define KC__XLA_BUFFER_SIZE KC__XLA_SIZE(XLA_FFI_Buffer, dims)
#define KC__XLA_ARGS_SIZE KC__XLA_SIZE(XLA_FFI_Args, args)
#define KC__XLA_RETS_SIZE KC__XLA_SIZE(XLA_FFI_Rets, rets)
#define KC__XLA_ATTRS_SIZE KC__XLA_SIZE(XLA_FFI_Attrs, attrs)
#define KC__XLA_API_SIZE KC__XLA_SIZE(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get)

#endif /* KCALL_XCALL_XLA_FFI_API_H_ */
