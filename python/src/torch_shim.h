/*
 * libtorch's stable C ABI as kcall.torch's native kernels use it: the
 * shim functions (found with dlsym in the libtorch `import torch` loaded,
 * torch_shim.c), torch's dtype codes, and a kcall thread pool on torch's
 * intra-op threads. The declarations are written from the public C ABI;
 * nothing here needs torch's headers. Never installed.
 */
#ifndef KCALL_PYTHON_TORCH_SHIM_H_
#define KCALL_PYTHON_TORCH_SHIM_H_

#include <stdbool.h>

#include "kcpy.h"

typedef uint64_t stable_ivalue;
typedef void* aten_tensor;
typedef int32_t torch_err;  /* 0: success */
typedef void (*boxed_fn)(stable_ivalue* stack, uint64_t num_args,
                         uint64_t num_outputs);

typedef struct torch_shim {
  torch_err (*library_init_impl)(const char* ns, const char* key,
                                 const char* file, uint32_t line,
                                 void** out_library);
  torch_err (*library_impl)(void* library, const char* name, boxed_fn fn);
  torch_err (*call_dispatcher)(const char* op_name, const char* overload,
                               stable_ivalue* stack);
  bool (*grad_mode_is_enabled)(void);
  torch_err (*delete_tensor_object)(aten_tensor t);
  torch_err (*get_data_ptr)(aten_tensor t, void** out);
  torch_err (*get_dim)(aten_tensor t, int64_t* out);
  torch_err (*get_sizes)(aten_tensor t, int64_t** out);
  torch_err (*get_strides)(aten_tensor t, int64_t** out);
  torch_err (*get_dtype)(aten_tensor t, int32_t* out);
  torch_err (*get_device_type)(aten_tensor t, int32_t* out);
  torch_err (*empty_strided)(int64_t ndim, const int64_t* sizes,
                             const int64_t* strides, int32_t dtype,
                             int32_t device_type, int32_t device_index,
                             aten_tensor* out);
  torch_err (*copy_)(aten_tensor self, aten_tensor src, int32_t non_blocking);
  void (*check)(bool cond, const char* func, const char* file, uint32_t line,
                const char* msg);
  torch_err (*tensor_to_pyobject)(aten_tensor t, void* py_type, void** out);
  int32_t (*device_type_cpu)(void);
  /* Optional (torch 2.13): without them, optional attributes and the
   * messages of errors raised below the router are not native. */
  torch_err (*delete_stable_ivalue)(stable_ivalue* v);
  const char* (*exception_what)(void);
  /* Optional (torch 2.10): without them, kernels split their loops over
   * kcall's default pool instead of torch's intra-op threads. */
  torch_err (*parallel_for)(int64_t begin, int64_t end, int64_t grain,
                            void (*fn)(int64_t begin, int64_t end, void* ctx),
                            void* ctx);
  torch_err (*get_num_threads)(uint32_t* out);
  /* Optional (torch 2.10): without them, list attributes (int[]) are not
   * native. A list argument reaches a kernel as a list handle it owns. */
  torch_err (*list_size)(void* list, size_t* out);
  torch_err (*list_get_item)(void* list, size_t index, stable_ivalue* out);
  torch_err (*delete_list)(void* list);
  /* Optional (torch 2.10): without them, str attributes are not native. A
   * string argument reaches a kernel as a string handle it owns. */
  torch_err (*string_c_str)(void* string, const char** out);
  torch_err (*delete_string)(void* string);
} torch_shim;

/* The functions found, valid once torch_shim_load succeeded; torch's code
 * of its CPU device type. */
extern torch_shim shim;
extern int32_t cpu_device_type;

/* Fills `shim` from `lib` (a dlopen handle of libtorch), leaving out the
 * symbols named in `hidden` (a sequence of str, or NULL; tests simulate
 * older torch with it), and reads torch's dtype codes. 0 on success; -1
 * with a Python exception set (RuntimeError naming a missing required
 * symbol). Closes `lib` on failure. */
int torch_shim_load(void* lib, PyObject* hidden);

/* kcall's dtype for torch's `code`; false with *out_name torch's name of
 * it (NULL when not known here) when kcall has none. */
bool dtype_from_torch(int32_t code, DLDataType* out, const char** out_name);
/* torch's code for a kcall dtype; false when torch has none. */
bool dtype_to_torch(DLDataType dtype, int32_t* out);
/* torch's code of float32. */
int32_t torch_dtype_float32(void);

/* A kcall pool whose loops run on torch's intra-op threads, sized as
 * torch is now; NULL (kcall's default pool) without the shim functions
 * for it. Borrowed: it lives as long as the process. */
kc_thread_pool* torch_thread_pool(void);

#endif /* KCALL_PYTHON_TORCH_SHIM_H_ */
