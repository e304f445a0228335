/*
 * The layouts of XLA's FFI structs (LP64), as XLA's header of API 0.3
 * (xla/ffi/api/c_api.h) defines them, frozen with static assertions.
 * Included after either kcall's declarations (xla_ffi_api.h) or XLA's own
 * header followed by kcall's, so that a build with XLA's header at hand
 * checks that the two agree (tests/xla_ffi_layout.c). Never installed.
 */
#ifndef KCALL_XCALL_XLA_FFI_LAYOUT_H_
#define KCALL_XCALL_XLA_FFI_LAYOUT_H_

#include <stddef.h>

#include "xcall/xla_ffi_api.h"

_Static_assert(sizeof(XLA_FFI_Extension_Base) == 24, "XLA_FFI_Extension_Base");
_Static_assert(sizeof(XLA_FFI_Api_Version) == 24, "XLA_FFI_Api_Version");
_Static_assert(KC__XLA_SIZE(XLA_FFI_Error_Create_Args, errc) == 28,
               "XLA_FFI_Error_Create_Args");
_Static_assert(KC__XLA_SIZE(XLA_FFI_Error_GetMessage_Args, message) == 32,
               "XLA_FFI_Error_GetMessage_Args");
_Static_assert(KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error) == 24,
               "XLA_FFI_Error_Destroy_Args");
_Static_assert(sizeof(XLA_FFI_Buffer) == 48 && offsetof(XLA_FFI_Buffer, dtype) == 16 &&
                   offsetof(XLA_FFI_Buffer, data) == 24 &&
                   offsetof(XLA_FFI_Buffer, rank) == 32 &&
                   offsetof(XLA_FFI_Buffer, dims) == 40,
               "XLA_FFI_Buffer");
_Static_assert(sizeof(XLA_FFI_ByteSpan) == 16 && sizeof(XLA_FFI_Scalar) == 16 &&
                   sizeof(XLA_FFI_Array) == 24 && offsetof(XLA_FFI_Array, data) == 16 &&
                   sizeof(XLA_FFI_TypeId) == 8,
               "XLA FFI primitives");
_Static_assert(sizeof(XLA_FFI_TypeInfo) == 24, "XLA_FFI_TypeInfo");
_Static_assert(KC__XLA_SIZE(XLA_FFI_Future_Create_Args, extension_start) == 16 &&
                   offsetof(XLA_FFI_Future_Create_Args, future) == 16,
               "XLA_FFI_Future_Create_Args");
_Static_assert(KC__XLA_SIZE(XLA_FFI_Future_SetAvailable_Args, future) == 24,
               "XLA_FFI_Future_SetAvailable_Args");
_Static_assert(KC__XLA_SIZE(XLA_FFI_Future_SetError_Args, error) == 32,
               "XLA_FFI_Future_SetError_Args");
_Static_assert(KC__XLA_ARGS_SIZE == 40 && KC__XLA_RETS_SIZE == 40 &&
                   KC__XLA_ATTRS_SIZE == 48,
               "XLA_FFI_Args, Rets, Attrs");
_Static_assert(offsetof(XLA_FFI_CallFrame, api) == 16 &&
                   offsetof(XLA_FFI_CallFrame, ctx) == 24 &&
                   offsetof(XLA_FFI_CallFrame, stage) == 32 &&
                   offsetof(XLA_FFI_CallFrame, args) == 40 &&
                   offsetof(XLA_FFI_CallFrame, rets) == 80 &&
                   offsetof(XLA_FFI_CallFrame, attrs) == 120 &&
                   offsetof(XLA_FFI_CallFrame, future) == 168 &&
                   KC__XLA_CALL_FRAME_SIZE == 168 && sizeof(XLA_FFI_CallFrame) == 176,
               "XLA_FFI_CallFrame");
_Static_assert(sizeof(XLA_FFI_Handler_Bundle) == 32, "XLA_FFI_Handler_Bundle");
_Static_assert(offsetof(XLA_FFI_Handler_Register_Args, bundle) == 48 &&
                   KC__XLA_SIZE(XLA_FFI_Handler_Register_Args, traits) == 84,
               "XLA_FFI_Handler_Register_Args");
_Static_assert(KC__XLA_SIZE(XLA_FFI_Type_Register_Args, type_id) == 40 &&
                   offsetof(XLA_FFI_Type_Register_Args, type_info) == 40,
               "XLA_FFI_Type_Register_Args");
_Static_assert(KC__XLA_SIZE(XLA_FFI_ExecutionContext_Get_Args, data) == 40,
               "XLA_FFI_ExecutionContext_Get_Args");
_Static_assert(offsetof(XLA_FFI_State_Set_Args, stage) == 24 &&
                   KC__XLA_SIZE(XLA_FFI_State_Set_Args, state) == 48 &&
                   KC__XLA_SIZE(XLA_FFI_State_Get_Args, state) == 48,
               "XLA_FFI_State_Set_Args, Get_Args");
/* The older layouts of the state functions' arguments. */
_Static_assert(KC__XLA_STATE_SET_ARGS_0_1_SIZE == 48 &&
                   offsetof(kc__xla_state_set_args_0_1, type_id) == 24 &&
                   offsetof(kc__xla_state_set_args_0_1, deleter) == 40 &&
                   KC__XLA_STATE_ARGS_0_2_SIZE == 40 &&
                   offsetof(kc__xla_state_args_0_2, type_id) == 24 &&
                   offsetof(kc__xla_state_args_0_2, ctx) == offsetof(XLA_FFI_State_Set_Args, ctx) &&
                   offsetof(kc__xla_state_args_0_2, ctx) == offsetof(XLA_FFI_State_Get_Args, ctx),
               "XLA_FFI_State_Set_Args and Get_Args of API 0.0 to 0.2");
_Static_assert(KC__XLA_SIZE(XLA_FFI_Stream_Get_Args, stream) == 32 &&
                   KC__XLA_SIZE(XLA_FFI_DeviceMemory_Allocate_Args, data) == 48 &&
                   KC__XLA_SIZE(XLA_FFI_DeviceMemory_Free_Args, data) == 40 &&
                   KC__XLA_SIZE(XLA_FFI_ThreadPool_Schedule_Args, data) == 40 &&
                   KC__XLA_SIZE(XLA_FFI_ThreadPool_NumThreads_Args, num_threads) == 32 &&
                   KC__XLA_SIZE(XLA_FFI_RunId_Get_Args, run_id) == 32 &&
                   KC__XLA_SIZE(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal) == 28,
               "XLA FFI context argument structs");
_Static_assert(KC__XLA_METADATA_SIZE == 36 &&
                   offsetof(XLA_FFI_Metadata, state_type_id) == 40 &&
                   KC__XLA_METADATA_EXTENSION_SIZE == 32,
               "XLA_FFI_Metadata");
_Static_assert(offsetof(XLA_FFI_Api, internal_api) == 40 &&
                   offsetof(XLA_FFI_Api, XLA_FFI_Error_Create) == 48 &&
                   offsetof(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get) == 184 &&
                   KC__XLA_API_SIZE == 192,
               "XLA_FFI_Api");

#endif /* KCALL_XCALL_XLA_FFI_LAYOUT_H_ */
