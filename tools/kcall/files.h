/*
 * files.h — how the kcall tool opens the files it is named, and how it
 * cites what it was given in messages.
 *
 * Every path, name or argument a message of the tool shows goes through
 * CLI_Q (kc_sv_format_quoted): quoted, escaped and bounded, as the
 * library's own messages are. A file that cannot be used gets the code
 * that says why: NOT_FOUND when it is not there, INVALID_ARGUMENT when the
 * path names something else than what was expected (a directory for a
 * file, a file for a directory), PERMISSION_DENIED, and so on.
 */
#ifndef KCALL_TOOLS_FILES_H_
#define KCALL_TOOLS_FILES_H_

#include <stdio.h>

#include <kcall/kcall.h>

/* `text` quoted for a message, in storage that lives until the end of the
 * enclosing block; CLI_QS takes a C string. */
static inline const char* cli_quote(char* buf, kc_string_view text) {
  kc_sv_format_quoted(text, buf, KC_QUOTED_CAP);
  return buf;
}
#define CLI_Q(text) cli_quote((char[KC_QUOTED_CAP]){0}, (text))
#define CLI_QS(cstr) CLI_Q(kc_sv(cstr))

/* "<what> <path>: <strerror(err)>" with kc_status_code_from_errno's code. */
kc_status* cli_errno_status(int err, const char* what, const char* path);

/* Opens the file at `path` for reading (binary). `expected` says what it
 * should be, for the message when it is a directory ("an HLO text file").
 *   NOT_FOUND          no such file
 *   INVALID_ARGUMENT   a directory: "'PATH' is a directory, expected ..."
 *   PERMISSION_DENIED  and the other codes of kc_status_code_from_errno
 * On success *out_file is the caller's to fclose. */
kc_status* cli_file_open_read(const char* path, const char* expected,
                              FILE** out_file);

/* Makes sure `dir` is a directory the tool can write files into, creating
 * it (not its parents) when it is missing. INVALID_ARGUMENT when it is a
 * file or anything else than a directory; NOT_FOUND when its parent does
 * not exist; the codes of kc_status_code_from_errno otherwise. */
kc_status* cli_dir_prepare(const char* dir);

#endif /* KCALL_TOOLS_FILES_H_ */
