/*
 * build.h — what `kcall build` (cmd_build.c) needs from build_support.c:
 * running a program and keeping what it printed, finding programs and
 * kcall's headers, and the cache directory.
 */
#ifndef KCALL_TOOLS_BUILD_H_
#define KCALL_TOOLS_BUILD_H_

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "sha256.h"

/* A growable NULL-terminated list of strings, for command lines. `owned`
 * strings are freed with it, the others borrowed. Zero-initialise. */
typedef struct cli_argv {
  char** items; /* items[count] == NULL once anything was added */
  bool* owned;
  size_t count;
  size_t cap;
} cli_argv;

/* Adds `arg` (borrowed: it must outlive the list). */
kc_status* cli_argv_add(cli_argv* a, const char* arg);
/* Adds a malloc'd copy of the printf-style text. */
kc_status* cli_argv_addf(cli_argv* a, const char* fmt, ...) KC_PRINTF(2, 3);
/* Adds each blank-separated word of `words` (copies). */
kc_status* cli_argv_add_words(cli_argv* a, const char* words);
void cli_argv_deinit(cli_argv* a);

/* Runs argv[0] (a path) with argv, standard input from /dev/null, and
 * collects what it writes to standard output and standard error together
 * into *out_text (malloc'd, NUL-terminated, the caller frees). Sets
 * *out_exit to its exit status, or to 128 + the signal that ended it.
 * A status only when it could not be run at all (the codes of
 * kc_status_code_from_errno, naming the program). */
kc_status* cli_run_capture(char* const argv[], char** out_text, int* out_exit);

/* The path of the program `name`: `name` itself when it holds a '/', else
 * the first executable of that name on PATH. NOT_FOUND, naming `role` ("C
 * compiler") and the option that chooses it, when there is none. The
 * caller frees *out_path. */
kc_status* cli_find_program(const char* name, const char* role,
                            const char* option, char** out_path);

/* kcall's include directory (the one holding kcall/abi.h):
 * $KCALL_INCLUDE_DIR when set; else PREFIX/include, PREFIX being the
 * directory above the one holding this tool (`make install`, the Python
 * package); else the source tree's include/ for a tool run from its build
 * tree. NOT_FOUND, naming what was tried, when none holds kcall/abi.h.
 * The caller frees *out_dir. */
kc_status* cli_kcall_include_dir(char** out_dir);

/* The cache directory for built plugins: `option` when not NULL, else
 * $KCALL_CACHE_DIR, $XDG_CACHE_HOME/kcall or $HOME/.cache/kcall; created
 * with its parents. The caller frees *out_dir. */
kc_status* cli_cache_dir(const char* option, char** out_dir);

/* Feeds one field to the hash: its length, then its bytes, so that no two
 * sequences of fields hash the same bytes. */
void cli_sha256_field(cli_sha256* h, const void* data, size_t size);
void cli_sha256_string(cli_sha256* h, const char* text);

/* Hashes the whole file at `path` as one field (cli_sha256_field), read in
 * pieces. The codes of cli_file_open_read, naming `path`. */
kc_status* cli_sha256_file(cli_sha256* h, const char* path);

/* Hashes every regular file of directory `dir` (name and contents, in the
 * order of their names). */
kc_status* cli_sha256_dir(cli_sha256* h, const char* dir);

#endif /* KCALL_TOOLS_BUILD_H_ */
