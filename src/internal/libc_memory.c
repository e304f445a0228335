/*
 * libc_memory.c — the internal allocation functions of internal/common.h
 * on the C library's memory. Not part of libkcall (whose own are in
 * base/allocator.c, behind kc_allocator_set_internal): the kcall tool and
 * the test runner compile copies of a few library files (the tool's
 * checked dlopen for --xla-ffi libraries, the runner's growable arrays),
 * and this gives those copies their allocation calls, as nothing they
 * allocate crosses into libkcall.
 */
#include <stdlib.h>

#include "internal/common.h"

void* kc__malloc(size_t size) { return malloc(size ? size : 1); }

void* kc__realloc(void* ptr, size_t size) { return realloc(ptr, size); }

void kc__free(void* ptr) { free(ptr); }
