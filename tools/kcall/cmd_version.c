/*
 * cmd_version.c — `kcall version`.
 */
#include "cli.h"

static int run_version(int argc, char** argv) {
  if (argc > 0) {
    return cli_usage_error(&cli_cmd_version, "unexpected argument %s",
                           CLI_QS(argv[0]));
  }
  uint32_t major = 0;
  uint32_t minor = 0;
  kc_version_query_api(&major, &minor);
  /* The loaded library's version, which can differ from the headers the
   * tool was compiled with. */
  printf("kcall %s\n", kc_version_string());
  printf("plugin API %u.%u\n", (unsigned)major, (unsigned)minor);
  fputs("host features:", stdout);
  for (const char* const* f = kc_plugin_get_host_api()->features; f && *f;
       ++f) {
    printf(" %s", *f);
  }
  putchar('\n');
  return CLI_EXIT_OK;
}

const cli_command cli_cmd_version = {
    "version",
    "print the library version and the plugin API version",
    "usage: kcall version\n"
    "\n"
    "Prints the version of the kcall library in use, the version of the\n"
    "plugin API it offers (major.minor), and the optional features it offers\n"
    "to plugins (what kc_plugin_info.required_features may name).\n",
    run_version,
};
