/* Opening a shared object named by its file: internal to libkcall and the
 * kcall tool, never installed. */
#ifndef KCALL_PLUGIN_DLOPEN_FILE_H_
#define KCALL_PLUGIN_DLOPEN_FILE_H_

#include <stdbool.h>

#include "kcall/base.h"

/* dlopen(RTLD_NOW | RTLD_LOCAL) of the file at `path` (a name without a
 * slash means ./name, not a search of the library path), after checking
 * that it is an ELF file of this process's class and byte order whose
 * header, program headers and loadable segments lie inside the file: a
 * truncated library would make dlopen fault (SIGBUS) instead of failing.
 * On success *out_handle is dlopen's handle, the caller's to dlclose.
 *   NOT_FOUND            no such file
 *   PERMISSION_DENIED    the file cannot be read
 *   INVALID_ARGUMENT     a directory or another file that is not a regular
 *                        one, not ELF, another class or byte order,
 *                        truncated, or dlopen's refusal (dlerror's text)
 *   RESOURCE_EXHAUSTED   out of memory */
kc_status* kc__dlopen_file(const char* path, void** out_handle);

/* The names of the dynamic symbols that the ELF file at `path` uses
 * without defining them (not weak ones) and that start with "kc_": the
 * functions of libkcall it calls directly. One block, the caller's to
 * kc__free, of NUL-terminated names ended by an empty one; NULL when there
 * are none, or when the file has no section headers or cannot be read that
 * far (kc__dlopen_file says what is wrong with it), and with *oom set when
 * memory ran out (the list is then unknown, not empty). */
char* kc__elf_undefined_kc_names(const char* path, bool* oom);

/* The same list for the global dynamic symbols of `path` that start with
 * `prefix`: the undefined ones (not weak), or with `defined` the functions
 * it defines. */
char* kc__elf_symbol_names(const char* path, const char* prefix, bool defined, bool* oom);

#endif /* KCALL_PLUGIN_DLOPEN_FILE_H_ */
