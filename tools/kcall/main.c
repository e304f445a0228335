/*
 * main.c — the kcall tool's entry: picks the command and hands it the rest
 * of the command line.
 */
#include <string.h>

#include "cli.h"

int main(int argc, char** argv) {
  if (argc < 2) return cli_usage_error(NULL, "no command given");
  const char* name = argv[1];
  if (cli_is_help_flag(name)) {
    cli_print_overview(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(name, "--version") == 0) name = "version";

  const cli_command* command = cli_find_command(name);
  if (!command) {
    return cli_usage_error(NULL, "unknown %s %s",
                           name[0] == '-' ? "option" : "command", CLI_QS(name));
  }
  /* kcall's own ops (kcall/builtin.h), for call, ops, run and the rest. */
  kc_status* st = kc_builtin_ops_register();
  if (st) return cli_report_status(st);
  int rc;
  if (argc > 2 && cli_is_help_flag(argv[2])) {
    fputs(command->usage, stdout);
    rc = CLI_EXIT_OK;
  } else {
    rc = command->run(argc - 2, argv + 2);
  }

  /* A full disk or a closed pipe must not pass for success. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fputs("kcall: error: could not write to standard output\n", stderr);
    if (rc == CLI_EXIT_OK) rc = CLI_EXIT_ERROR;
  }
  return rc;
}
