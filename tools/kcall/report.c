/*
 * report.c — how the tool tells the user that something went wrong.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "cli.h"

int cli_report_status(kc_status* status) {
  /* Sized with a first call so that no part of a long context chain is
   * cut off. */
  size_t size = kc_status_format(status, NULL, 0) + 1;
  char* text = malloc(size);
  if (text) {
    kc_status_format(status, text, size);
    fprintf(stderr, "kcall: error: %s\n", text);
    free(text);
  } else {
    fprintf(stderr, "kcall: error: %s: %s\n",
            kc_status_code_name(kc_status_get_code(status)),
            kc_status_get_message(status));
  }
  kc_status_destroy(status);
  return CLI_EXIT_ERROR;
}

int cli_usage_error(const cli_command* command, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  fputs("kcall: ", stderr);
  vfprintf(stderr, fmt, args);
  fputs("\n\n", stderr);
  va_end(args);
  if (command) {
    fputs(command->usage, stderr);
  } else {
    cli_print_overview(stderr);
  }
  return CLI_EXIT_USAGE;
}
