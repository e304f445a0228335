/*
 * kcall/tensor.h — tensor objects over DLPack 1.x.
 *
 * A kc_tensor is a reference-counted object (type KC_TYPE_TENSOR) that
 * exposes a DLTensor and owns, or shares, its storage:
 *   - kc_tensor_create allocates compact row-major storage from an
 *     allocator;
 *   - kc_tensor_import_dlpack adopts a DLManagedTensorVersioned without
 *     copying and calls its deleter when the last reference goes;
 *   - kc_tensor_export_dlpack hands a DLManagedTensorVersioned to a consumer
 *     without copying; it keeps the tensor alive until its deleter is called;
 *   - kc_tensor_create_view makes a strided view that shares the storage of
 *     another tensor and keeps it alive.
 * A tensor's shape, strides and dtype never change; its data may be written.
 * All functions are thread-safe.
 */
#ifndef KCALL_TENSOR_H_
#define KCALL_TENSOR_H_

#include <stdio.h>

#include "kcall/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest rank a kc_tensor supports. */
#define KC_TENSOR_MAX_NDIM 32

/* Alignment of storage allocated by kc_tensor_create, in bytes. */
#define KC_TENSOR_ALIGNMENT 64

/* Creates a tensor with compact row-major storage (contents undefined)
 * on `device`. On the CPU the storage comes from `alloc` (NULL: kcall's
 * caching host allocator, kc_allocator_caching in kcall/base.h).
 * On "cuda:N" it is device memory and on "cuda_host" pinned host memory,
 * from the CUDA backend, which this call loads if no call has yet
 * (kcall/device.h); `alloc` then gives only the tensor object. Errors:
 * INVALID_ARGUMENT names the offending dimension (negative), an ndim
 * outside [0, KC_TENSOR_MAX_NDIM], a NULL shape with ndim > 0, or a dtype
 * of zero bits or lanes; OUT_OF_RANGE when the byte size overflows, or for
 * a device ordinal past the last device; FAILED_PRECONDITION "no CUDA
 * device: ..." when the backend, the driver or a device is missing;
 * UNIMPLEMENTED for any other device type (no backend allocates there);
 * RESOURCE_EXHAUSTED when memory runs out. */
KC_API kc_status* kc_tensor_create(const kc_allocator* alloc,
                                   const int64_t* shape, int32_t ndim,
                                   DLDataType dtype, DLDevice device,
                                   kc_tensor** out_tensor);

/* The tensor's DLTensor. Borrowed; lives as long as the tensor. Its shape
 * is never NULL for ndim > 0; strides is NULL for compact tensors. */
KC_API const DLTensor* kc_tensor_get_dltensor(const kc_tensor* tensor);

/* The DLPack flags (DLPACK_FLAG_BITMASK_*) the tensor carries. */
KC_API uint64_t kc_tensor_get_flags(const kc_tensor* tensor);

/* Adopts `managed` without copying. On success the tensor owns it and calls
 * managed->deleter when its last reference is released; on failure
 * ownership stays with the caller. FAILED_PRECONDITION for a DLPack major
 * version other than 1; INVALID_ARGUMENT for a NULL tensor, a negative
 * dimension or ndim beyond KC_TENSOR_MAX_NDIM. */
KC_API kc_status* kc_tensor_import_dlpack(const kc_allocator* alloc,
                                          DLManagedTensorVersioned* managed,
                                          kc_tensor** out_tensor);

/* Exports `tensor` as a new DLManagedTensorVersioned (version 1.1) that
 * shares its storage. The managed tensor holds a reference to `tensor`
 * until the consumer calls its deleter exactly once. RESOURCE_EXHAUSTED when
 * memory runs out. */
KC_API kc_status* kc_tensor_export_dlpack(kc_tensor* tensor,
                                          DLManagedTensorVersioned** out);

/* Creates a view of `base`: `ndim` dims of `shape`, with `strides` in
 * elements (NULL: compact row-major), starting `elem_offset` elements after
 * base's first element. Every element the view can address must lie inside
 * the storage `base` addresses; otherwise OUT_OF_RANGE naming the extent.
 * Negative strides are allowed. The view keeps `base` alive. */
KC_API kc_status* kc_tensor_create_view(kc_tensor* base, int32_t ndim,
                                        const int64_t* shape,
                                        const int64_t* strides,
                                        int64_t elem_offset,
                                        kc_tensor** out_view);

/* Number of elements of a DLTensor (1 for rank 0); -1 on overflow. */
KC_API int64_t kc_dltensor_get_numel(const DLTensor* t);

/* True when `t` is compact row-major (NULL strides, or strides equal to
 * the row-major ones, ignoring dims of extent 1); a tensor with a dim of
 * extent 0 holds no elements and is compact whatever its strides. */
KC_API bool kc_dltensor_is_compact(const DLTensor* t);

/* ---- .npy files ---------------------------------------------------------- */
/*
 * NumPy's .npy format, what np.save writes and np.load reads, so that a C
 * host feeds a program the arrays a Python script saved and hands back
 * what NumPy reads (kcall run's --input x=FILE.npy and -o DIR use these).
 *
 * Read: format versions 1.0, 2.0 and 3.0; C order; little-endian (or
 * byte-order free) element types <f2 <f4 <f8, <i1..<i8, <u1..<u8, |b1,
 * complex <c8 (c64) and <c16 (c128), and bf16 as 'bfloat16' (the name
 * ml_dtypes gives it; np.save itself writes such arrays as '<V2', which
 * is refused: its bytes could be any 2-byte type). The header, a Python
 * dict literal, is parsed by its grammar, never evaluated, and at most
 * KC_NPY_MAX_HEADER bytes long (NumPy's own limit is 10000). Write:
 * version 1.0 and the descr NumPy itself writes (|i1, |u1, |b1, <f4,
 * <c8, ...; 'bfloat16' for bf16). Anything else is refused with a status saying why; a
 * malformed file never crashes the reader and leaves nothing allocated.
 */
#define KC_NPY_MAX_HEADER 65536

/* Reads the .npy file at `path` into a new CPU tensor (compact, from
 * `alloc`; NULL: kcall's caching allocator, as kc_tensor_create). Errors
 * name the path:
 *   NOT_FOUND, PERMISSION_DENIED, ...  the file cannot be opened or read
 *                     (kc_status_code_from_errno's code)
 *   INVALID_ARGUMENT  a directory; not a .npy file; a malformed header
 *                     (a control byte in a string of it is shown escaped,
 *                     with its byte position); data shorter or longer
 *                     than the shape says
 *   UNIMPLEMENTED     a valid file kcall does not take: Fortran order,
 *                     big-endian data, another dtype, another version, or
 *                     a big-endian host
 *   OUT_OF_RANGE      a shape whose byte size overflows, or a rank above
 *                     KC_TENSOR_MAX_NDIM
 *   RESOURCE_EXHAUSTED  out of memory
 * *out_tensor is the caller's (kc_object_release); NULL on failure. */
KC_API kc_status* kc_tensor_read_npy(const char* path,
                                     const kc_allocator* alloc,
                                     kc_tensor** out_tensor);

/* As kc_tensor_read_npy, from the current position of `f` (left open) to
 * its end: the data must end the stream. Errors name no path. The data's
 * size is checked against the shape before the tensor is allocated when
 * `f` can seek (a file, fmemopen); from one that cannot (a pipe) the
 * tensor the header describes is allocated, then filled. */
KC_API kc_status* kc_tensor_read_npy_stream(FILE* f, const kc_allocator* alloc,
                                            kc_tensor** out_tensor);

/* Writes `tensor` (compact row-major, on the CPU) to `path`, replacing
 * the file; on failure no file is left there. bf16 is written with the
 * descr 'bfloat16' (ml_dtypes' name, which np.load reads as that type
 * once ml_dtypes is imported; kc_tensor_read_npy reads it back).
 * UNIMPLEMENTED for a dtype .npy has no name for (kc_dtype_npy_descr);
 * INVALID_ARGUMENT
 * for a strided or non-CPU tensor; FAILED_PRECONDITION when `path` is a
 * directory; kc_status_code_from_errno's code when the file cannot be
 * written. */
KC_API kc_status* kc_tensor_write_npy(const char* path, const DLTensor* tensor);

/* As kc_tensor_write_npy, to the current position of `f` (left open, not
 * flushed); errors name no path, and a failed write may leave part of the
 * file in the stream. */
KC_API kc_status* kc_tensor_write_npy_stream(FILE* f, const DLTensor* tensor);

/* The descr kc_tensor_write_npy writes for `dtype` ("<f4", "bfloat16"),
 * static; NULL for a dtype .npy has no name for. */
KC_API const char* kc_dtype_npy_descr(DLDataType dtype);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_TENSOR_H_ */
