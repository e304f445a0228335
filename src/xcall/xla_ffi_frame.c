/* XLA FFI call frames as the program compiler lays them out: where the
 * parts of a frame lie, writing one, and running the stages XLA runs
 * before the first execution. */
#include <string.h>

#include "internal/common.h"
#include "xcall/xla_ffi_internal.h"

kc__xla_layout kc__xla_layout_of(size_t n) {
  kc__xla_layout l;
  l.ctx = (sizeof(XLA_FFI_CallFrame) + 15) & ~(size_t)15;
  l.ptrs = l.ctx + ((sizeof(XLA_FFI_ExecutionContext) + 15) & ~(size_t)15);
  l.bufs = l.ptrs + ((n * sizeof(void*) + 15) & ~(size_t)15);
  l.total = l.bufs + n * sizeof(XLA_FFI_Buffer);
  return l;
}

/* Writes a frame at `at` with absolute pointers (the compile-time copy;
 * the block copy's pointers are replaced by fills), buffers without data. */
XLA_FFI_Buffer* kc__xla_frame_write(char* at, const kc__xla_layout* l, size_t nargs,
                                    size_t nres, XLA_FFI_ArgType* arg_types,
                                    XLA_FFI_RetType* ret_types, const XLA_FFI_Attrs* attrs,
                                    const XLA_FFI_ExecutionContext* ctx) {
  XLA_FFI_CallFrame* f = (XLA_FFI_CallFrame*)(void*)at;
  XLA_FFI_ExecutionContext* x = (XLA_FFI_ExecutionContext*)(void*)(at + l->ctx);
  void** ptrs = (void**)(void*)(at + l->ptrs);
  XLA_FFI_Buffer* bufs = (XLA_FFI_Buffer*)(void*)(at + l->bufs);
  *x = *ctx;
  memset(f, 0, sizeof *f);
  f->struct_size = KC__XLA_CALL_FRAME_SIZE;
  f->api = kc__xla_api();
  f->ctx = x;
  f->stage = (XLA_FFI_ExecutionStage)ctx->stage;
  f->args.struct_size = KC__XLA_ARGS_SIZE;
  f->args.size = (int64_t)nargs;
  f->args.types = arg_types;
  f->args.args = ptrs;
  f->rets.struct_size = KC__XLA_RETS_SIZE;
  f->rets.size = (int64_t)nres;
  f->rets.types = ret_types;
  f->rets.rets = ptrs + nargs;
  f->attrs = *attrs;
  for (size_t i = 0; i < nargs + nres; ++i) {
    memset(&bufs[i], 0, sizeof bufs[i]);
    bufs[i].struct_size = KC__XLA_BUFFER_SIZE;
    ptrs[i] = &bufs[i];
  }
  return bufs;
}

void kc__xla_buffer_describe(XLA_FFI_Buffer* b, DLDataType dtype, int32_t rank,
                             const int64_t* dims) {
  b->dtype = kc__xla_dtype_from_dl(dtype);
  b->rank = rank;
  b->dims = (int64_t*)(uintptr_t)dims;
}

/* Runs the stages XLA runs before the first execution, in XLA's order,
 * with the compile-time frame. */
kc_status* kc__xla_run_stages(const kc__xcall_target* t, XLA_FFI_CallFrame* f) {
  kc_xla_ffi_handler_fn stages[3] = {t->xla.instantiate, t->xla.prepare, t->xla.initialize};
  for (int32_t k = 0; k < 3; ++k) {
    if (!stages[k]) continue;
    f->stage = (XLA_FFI_ExecutionStage)k;
    f->ctx->stage = k;
    XLA_FFI_Error* err = ((XLA_FFI_Handler*)(void (*)(void))stages[k])(f);
    KC_RETURN_IF_ERROR(kc__xla_call_finish(f, err));
  }
  return NULL;
}

