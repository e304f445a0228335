/*
 * files.c — the status code of a failed file operation (base.h), and how
 * the library opens the files it is named (internal/common.h).
 */
#define _POSIX_C_SOURCE 200809L /* fileno */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal/common.h"

kc_status_code kc_status_code_from_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return KC_NOT_FOUND;
    case EACCES:
    case EPERM:
    case EROFS:
      return KC_PERMISSION_DENIED;
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:
      return KC_INVALID_ARGUMENT;
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      return KC_RESOURCE_EXHAUSTED;
    case EEXIST:
      return KC_ALREADY_EXISTS;
    case EINTR:
    case EAGAIN:
      return KC_UNAVAILABLE;
    default:
      return KC_UNKNOWN;
  }
}

kc_status* kc__file_open_read(const char* path, const char* expected, FILE** out_file) {
  *out_file = NULL;
  FILE* f = fopen(path, "rb");
  int err = f ? 0 : errno;
  /* fopen opens a directory for reading; its first read would fail with
   * EISDIR, which says less. */
  struct stat sb;
  if (err == EISDIR || (f && fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode))) {
    if (f) fclose(f);
    return kc_status_create(KC_INVALID_ARGUMENT, "%s is a directory, expected %s",
                            KC__QS(path), expected);
  }
  if (!f) {
    return kc_status_create(kc_status_code_from_errno(err), "cannot open %s: %s",
                            KC__QS(path), strerror(err));
  }
  *out_file = f;
  return NULL;
}
