/*
 * files.c — opening the files the tool is named (see files.h).
 */
#define _POSIX_C_SOURCE 200809L /* fileno, mkdir, stat */

#include "files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

kc_status* cli_errno_status(int err, const char* what, const char* path) {
  return kc_status_create(kc_status_code_from_errno(err), "%s %s: %s", what, CLI_QS(path),
                          strerror(err));
}

static kc_status* is_a_directory(const char* path, const char* expected) {
  return kc_status_create(KC_INVALID_ARGUMENT, "%s is a directory, expected %s",
                          CLI_QS(path), expected);
}

kc_status* cli_file_open_read(const char* path, const char* expected,
                              FILE** out_file) {
  *out_file = NULL;
  FILE* f = fopen(path, "rb");
  if (!f) {
    int err = errno;
    if (err == EISDIR) return is_a_directory(path, expected);
    return cli_errno_status(err, "cannot open", path);
  }
  /* fopen opens a directory for reading; its first read would fail with
   * EISDIR, which says less. */
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fclose(f);
    return is_a_directory(path, expected);
  }
  *out_file = f;
  return NULL;
}

kc_status* cli_dir_prepare(const char* dir) {
  struct stat sb;
  if (stat(dir, &sb) == 0) {
    if (S_ISDIR(sb.st_mode)) return NULL;
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s is %s, expected a directory", CLI_QS(dir),
                            S_ISREG(sb.st_mode) ? "a file" : "not a directory");
  }
  /* Missing parents too, as mkdir -p makes them. */
  size_t n = strlen(dir);
  char* path = malloc(n + 1);
  if (!path) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(path, dir, n + 1);
  kc_status* st = NULL;
  for (size_t i = 1; !st && i <= n; ++i) {
    if (path[i] != '/' && path[i] != '\0') continue;
    char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      st = cli_errno_status(errno, "cannot create directory", path);
    } else if (stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
      st = kc_status_create(KC_INVALID_ARGUMENT,
                            "cannot create directory %s: %s is %s, expected a directory",
                            CLI_QS(dir), CLI_QS(path),
                            S_ISREG(sb.st_mode) ? "a file" : "not a directory");
    }
    path[i] = saved;
  }
  free(path);
  return st;
}
