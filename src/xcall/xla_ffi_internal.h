/* kcall's side of XLA's FFI: internals shared by the host (xla_ffi_host.c),
 * the program compiler and runner, and the adapter. Never installed. */
#ifndef KCALL_XCALL_XLA_FFI_INTERNAL_H_
#define KCALL_XCALL_XLA_FFI_INTERNAL_H_

#include <stdatomic.h>

#include "internal/arena.h"
#include "kcall/xla_ffi.h"
#include "xcall/xcall_internal.h"
#include "xcall/xla_ffi_api.h"

/* kcall's API table, the one every call frame kcall builds carries. */
const XLA_FFI_Api* kc__xla_api(void);

/* What the XLA calls of one run share, in the run's block: the run id
 * (0 until a handler asks; reset by every execution) and the allocator of
 * host memory handed out by DeviceMemory_Allocate. */
typedef struct kc__xla_run_info {
  _Atomic int64_t run_id;
  const kc_allocator* alloc;
  void* stream; /* the run's device stream (Stream_Get); NULL on the host */
  int32_t device_ordinal; /* DeviceOrdinal_Get: the CUDA device; 0 on the host */
} kc__xla_run_info;

/* One call site's state, one slot per stage that may set it, for the life
 * of the executable (which deletes the states). */
typedef struct kc__xla_instance {
  /* The XLA FFI API version the target's handlers reported (-1: unknown),
   * which tells the layout of a 48-byte XLA_FFI_State_Set_Args. */
  int32_t api_major, api_minor;
  struct kc__xla_state {
    int64_t type_id; /* 0: not set */
    void* state;
    void (*deleter)(void* state); /* from the type's info; may be NULL */
  } states[3];
} kc__xla_instance;

/* The execution context of one call site: at compile, one for the stages
 * run there; in every run's block, one for EXECUTE. */
struct XLA_FFI_ExecutionContext {
  int32_t stage;              /* XLA_FFI_ExecutionStage being run */
  kc__xla_instance* instance; /* NULL outside a program (metadata query) */
  kc_thread_pool* pool;       /* NULL: no pool */
  kc__xla_run_info* run;      /* NULL at compile */
};

/* The XLA element type of a DLPack dtype (XLA_FFI_DataType_INVALID when
 * XLA has none), and back (false when kcall has none). XLA's numbers are
 * taken as int64_t, which an XLA_FFI_DataType and any integer widen to. */
XLA_FFI_DataType kc__xla_dtype_from_dl(DLDataType dtype);
bool kc__xla_dtype_to_dl(int64_t xla_dtype, DLDataType* out);
/* "f32", "s64", ...; "unknown" otherwise. Static storage. */
const char* kc__xla_dtype_name(int64_t xla_dtype);

/* XLA's attributes for a kcall dictionary, sorted by name, nested
 * dictionaries too, everything allocated from `arena` (the arrays of
 * numbers point at the dictionary's own, which must outlive them).
 * INVALID_ARGUMENT for a name given twice, or an array whose element type
 * XLA has no scalar for. */
kc_status* kc__xla_attrs_build(kc__arena* arena, const kc_attr_dict* dict,
                               XLA_FFI_Attrs* out);

/* The status for a handler's error (destroyed here): its code (OK becomes
 * UNKNOWN) and message. */
kc_status* kc__xla_error_take(XLA_FFI_Error* error);

/* After a handler returned `error` (NULL for success): its status, or, on
 * success with a future left in the frame, the future's outcome once it
 * completes (the future is destroyed and the frame's slot cleared). */
kc_status* kc__xla_call_finish(XLA_FFI_CallFrame* frame, XLA_FFI_Error* error);

/* An error made by kcall's own table: what the adapter's tests and the
 * host use to answer a call. NULL for KC_OK. */
XLA_FFI_Error* kc__xla_error_make(kc_status_code code, const char* fmt, ...)
    KC_PRINTF(2, 3);

/* ---- call frames laid out by the program compiler (xla_ffi_frame.c) ----- */

/* Where the parts of one XLA call frame lie, from the frame's start: the
 * frame, its execution context, the argument and result pointer arrays,
 * and the XLA_FFI_Buffers they point at. */
typedef struct kc__xla_layout {
  size_t ctx, ptrs, bufs, total;
} kc__xla_layout;

/* The layout of a frame with `n` buffers (arguments and results). */
kc__xla_layout kc__xla_layout_of(size_t n);

/* Writes a frame at `at` with absolute pointers (the compile-time copy;
 * the block copy's pointers are replaced by fills), buffers without data
 * or description. Returns its nargs + nres buffers, arguments first, for
 * the caller to describe with kc__xla_buffer_describe. */
XLA_FFI_Buffer* kc__xla_frame_write(char* at, const kc__xla_layout* l, size_t nargs,
                                    size_t nres, XLA_FFI_ArgType* arg_types,
                                    XLA_FFI_RetType* ret_types, const XLA_FFI_Attrs* attrs,
                                    const XLA_FFI_ExecutionContext* ctx);

/* Gives a frame's buffer its element type and dims (`dims` must outlive
 * the frame). */
void kc__xla_buffer_describe(XLA_FFI_Buffer* b, DLDataType dtype, int32_t rank,
                             const int64_t* dims);

/* Runs the stages XLA runs before the first execution, in XLA's order,
 * with the compile-time frame. */
kc_status* kc__xla_run_stages(const kc__xcall_target* t, XLA_FFI_CallFrame* f);

#endif /* KCALL_XCALL_XLA_FFI_INTERNAL_H_ */
