/* kc_program_parse_file: a program file read whole and parsed
 * (kcall/program.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal/common.h"
#include "kcall/program.h"

/* The whole of `f`, into kcall's memory (kc__free); errors name `path`. */
static kc_status* kc__read_all(FILE* f, const char* path, char** out_text,
                               size_t* out_size) {
  size_t cap = 4096, size = 0;
  char* text = kc__malloc(cap);
  while (text) {
    size += fread(text + size, 1, cap - size, f);
    if (ferror(f)) {
      int err = errno;
      kc__free(text);
      return kc_status_create(kc_status_code_from_errno(err), "cannot read %s: %s",
                              KC__QS(path), strerror(err));
    }
    if (feof(f)) break;
    char* bigger = cap < SIZE_MAX / 2 ? kc__realloc(text, cap * 2) : NULL;
    if (!bigger) {
      kc__free(text);
      text = NULL;
      break;
    }
    text = bigger;
    cap *= 2;
  }
  if (!text) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory reading %s",
                            KC__QS(path));
  }
  *out_text = text;
  *out_size = size;
  return NULL;
}

kc_status* kc_program_parse_file(const char* path, kc_program** out_program) {
  return kc_program_parse_file_with(path, NULL, out_program);
}

kc_status* kc_program_parse_file_with(const char* path, const kc_parse_options* options,
                                      kc_program** out_program) {
  if (!path || !out_program) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_program_parse_file: %s is NULL",
                            path ? "out_program" : "path");
  }
  *out_program = NULL;
  FILE* f = NULL;
  KC_RETURN_IF_ERROR(kc__file_open_read(path, "an HLO or StableHLO text file", &f));
  char* text = NULL;
  size_t size = 0;
  kc_status* st = kc__read_all(f, path, &text, &size);
  fclose(f);
  if (st) return st;
  st = kc_program_parse_with((kc_string_view){text, size}, options, out_program);
  kc__free(text);
  return kc_status_add_context(st, "parsing %s", KC__QS(path));
}
