/*
 * commands.c — the list of commands, the overview, and `kcall help`.
 */
#include <string.h>

#include "cli.h"

static const cli_command* const kCommands[] = {
    &cli_cmd_version,
    &cli_cmd_inspect,
    &cli_cmd_call,
    &cli_cmd_ops,
    &cli_cmd_run,
    &cli_cmd_build,
    &cli_cmd_devices,
    &cli_cmd_help,
};
#define COMMAND_COUNT (sizeof(kCommands) / sizeof(kCommands[0]))

const cli_command* cli_find_command(const char* name) {
  for (size_t i = 0; i < COMMAND_COUNT; ++i) {
    if (strcmp(kCommands[i]->name, name) == 0) return kCommands[i];
  }
  return NULL;
}

void cli_print_overview(FILE* out) {
  fputs("usage: kcall <command> [arguments]\n"
        "\n"
        "Commands:\n",
        out);
  for (size_t i = 0; i < COMMAND_COUNT; ++i) {
    fprintf(out, "  %-9s %s\n", kCommands[i]->name, kCommands[i]->summary);
  }
  fputs("\n"
        "Run 'kcall help COMMAND' or 'kcall COMMAND --help' for details.\n"
        "Exit status: 0 on success, 1 on an error, 2 on a usage error.\n",
        out);
}

bool cli_is_help_flag(const char* arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

static int run_help(int argc, char** argv) {
  if (argc == 0) {
    cli_print_overview(stdout);
    return CLI_EXIT_OK;
  }
  if (argc > 1) return cli_usage_error(&cli_cmd_help, "too many arguments");
  const cli_command* command = cli_find_command(argv[0]);
  if (!command) {
    return cli_usage_error(NULL, "unknown command %s", CLI_QS(argv[0]));
  }
  fputs(command->usage, stdout);
  return CLI_EXIT_OK;
}

const cli_command cli_cmd_help = {
    "help",
    "print this overview, or the usage of one command",
    "usage: kcall help [COMMAND]\n"
    "\n"
    "Prints the list of commands, or the usage of COMMAND.\n",
    run_help,
};
