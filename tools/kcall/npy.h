/*
 * npy.h — NumPy .npy files as kcall tensors, for `kcall run`.
 *
 * Read: format versions 1.0, 2.0 and 3.0; C order; little-endian (or
 * byte-order free) element types <f2 <f4 <f8, <i1..<i8, <u1..<u8, |b1,
 * and complex <c8 (c64) and <c16 (c128).
 * Write: version 1.0 (2.0 only if the header would not fit), the same
 * element types, the descr NumPy itself writes (|i1, |u1, |b1, <f4, <c8,
 * ...).
 * Anything else is refused with a status naming the file and the reason;
 * a malformed file never crashes the reader and leaks nothing.
 */
#ifndef KCALL_TOOLS_NPY_H_
#define KCALL_TOOLS_NPY_H_

#include <stdio.h>

#include <kcall/kcall.h>

/* Longest header (the dictionary and its padding) the reader accepts.
 * NumPy's own reader stops at 10000 bytes; a little more room costs
 * nothing and still bounds what a hostile file can make us allocate. */
#define CLI_NPY_MAX_HEADER 65536

/* Reads the .npy file at `path` into a new CPU tensor allocated from
 * `alloc` (NULL: system). Errors, each naming the path:
 *   NOT_FOUND, PERMISSION_DENIED, ...  the file cannot be opened or read
 *                     (the code of cli_errno_code, files.h)
 *   INVALID_ARGUMENT  a directory; not a .npy file; a malformed header
 *                     (a control byte such as NUL in a string of it is
 *                     refused, shown escaped with its byte position); or
 *                     data shorter or longer than the shape says
 *   UNIMPLEMENTED     a valid file kcall does not take: Fortran order,
 *                     big-endian data, another dtype, another version
 *   OUT_OF_RANGE      a shape whose byte size overflows, or rank above
 *                     KC_TENSOR_MAX_NDIM
 *   RESOURCE_EXHAUSTED  out of memory */
kc_status* cli_npy_read(const char* path, const kc_allocator* alloc,
                        kc_tensor** out_tensor);

/* As cli_npy_read, from the current position of `f` (left open) to its
 * end: the data must end the stream. Same errors, naming no path.
 * The data's size is checked against the shape before the tensor is
 * allocated only when `f` can seek (a file, fmemopen); a stream that
 * cannot (a pipe) is read into a tensor of the size the header says. */
kc_status* cli_npy_read_stream(FILE* f, const kc_allocator* alloc,
                               kc_tensor** out_tensor);

/* Writes `tensor` (CPU, compact row-major) to `path`, replacing the file.
 * UNIMPLEMENTED for a dtype .npy has no name for here (bf16, ...);
 * INVALID_ARGUMENT for a strided or non-CPU tensor; FAILED_PRECONDITION
 * when `path` is a directory; the code of cli_errno_code when the file
 * cannot be written. */
kc_status* cli_npy_write(const char* path, const DLTensor* tensor);

/* As cli_npy_write, to the current position of `f` (left open, not
 * flushed); errors name no path, and a failed write may leave part of
 * the file in the stream. */
kc_status* cli_npy_write_stream(FILE* f, const DLTensor* tensor);

/* The descr cli_npy_write uses for `dtype` ("<f4"), or NULL if none. */
const char* cli_npy_descr(DLDataType dtype);

#endif /* KCALL_TOOLS_NPY_H_ */
