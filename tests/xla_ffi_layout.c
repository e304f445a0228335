/* Built only when XLA's headers are at hand (KCALL_XLA_FFI_INCLUDE_DIR):
 * XLA's own c_api.h must satisfy the layouts kcall froze from its
 * specification (xcall/xla_ffi_layout.h), and XLA's struct sizes and
 * version must be the ones kcall's declarations compute. Compiling this
 * file is the check; running it says so. */
#include <stdio.h>

#include "xla/ffi/api/c_api.h"
/* After XLA's header, kcall's declarations step aside; its sizes and
 * assertions then apply to XLA's structs. */
#include "xcall/xla_ffi_layout.h"

_Static_assert(XLA_FFI_API_MAJOR == KC_XLA_FFI_API_MAJOR &&
                   XLA_FFI_API_MINOR == KC_XLA_FFI_API_MINOR,
               "XLA's header is of the API version kcall implements");
_Static_assert(XLA_FFI_CallFrame_STRUCT_SIZE == KC__XLA_CALL_FRAME_SIZE &&
                   XLA_FFI_Metadata_STRUCT_SIZE == KC__XLA_METADATA_SIZE &&
                   XLA_FFI_Metadata_Extension_STRUCT_SIZE == KC__XLA_METADATA_EXTENSION_SIZE &&
                   XLA_FFI_Api_Version_STRUCT_SIZE == KC__XLA_API_VERSION_SIZE &&
                   XLA_FFI_Buffer_STRUCT_SIZE == KC__XLA_BUFFER_SIZE &&
                   XLA_FFI_Args_STRUCT_SIZE == KC__XLA_ARGS_SIZE &&
                   XLA_FFI_Rets_STRUCT_SIZE == KC__XLA_RETS_SIZE &&
                   XLA_FFI_Attrs_STRUCT_SIZE == KC__XLA_ATTRS_SIZE &&
                   XLA_FFI_Api_STRUCT_SIZE == KC__XLA_API_SIZE,
               "struct sizes as XLA computes them");
_Static_assert(XLA_FFI_DataType_F8E8M0FNU == 33 && XLA_FFI_DataType_C128 == 18 &&
                   XLA_FFI_AttrType_STRING == 4 && XLA_FFI_ExecutionStage_EXECUTE == 3 &&
                   XLA_FFI_Error_Code_UNAUTHENTICATED == 16,
               "enumerations");

int main(void) {
  printf("kcall's declarations agree with XLA FFI API %d.%d\n", XLA_FFI_API_MAJOR,
         XLA_FFI_API_MINOR);
  return 0;
}
