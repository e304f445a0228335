/*
 * cmd_inspect.c — `kcall inspect`: load plugins and show what they are and
 * what they register.
 */
#include "cli.h"

static kc_status* print_plugin(const kc_plugin* plugin) {
  kc_plugin_desc desc = {0};
  desc.struct_size = sizeof desc;
  kc_status* status = kc_plugin_get_desc(plugin, &desc);
  if (status) return status;

  printf("plugin:   %s\n", desc.name);
  printf("version:  %s\n", desc.version && desc.version[0] ? desc.version
                                                            : "(none)");
  printf("path:     %s\n", desc.path);
  printf("api:      %u.%u (built against %u.%u)\n", (unsigned)desc.api_major,
         (unsigned)desc.api_minor, (unsigned)desc.built_api_major,
         (unsigned)desc.built_api_minor);
  printf("registrations: %zu\n", desc.registration_count);
  for (size_t i = 0; i < desc.registration_count; ++i) {
    kc_registration reg = {0};
    reg.struct_size = sizeof reg;
    status = kc_plugin_get_registration(plugin, i, &reg);
    if (status) return status;
    printf("  %-10s %.*s\n", reg.kind, (int)reg.name.size, reg.name.data);
  }
  return NULL;
}

static int run_inspect(int argc, char** argv) {
  if (argc == 0) return cli_usage_error(&cli_cmd_inspect, "no plugin given");
  for (int i = 0; i < argc; ++i) {
    if (argv[i][0] == '-') {
      return cli_usage_error(&cli_cmd_inspect, "unknown option '%s'",
                             argv[i]);
    }
  }
  for (int i = 0; i < argc; ++i) {
    if (i > 0) putchar('\n');
    kc_plugin* plugin = NULL;
    kc_status* status = kc_plugin_load(argv[i], &plugin);
    if (!status) status = print_plugin(plugin);
    if (status) return cli_report_status(status);
  }
  return CLI_EXIT_OK;
}

const cli_command cli_cmd_inspect = {
    "inspect",
    "load plugins and list what they register",
    "usage: kcall inspect PLUGIN.so...\n"
    "\n"
    "Loads each plugin and prints its name, version and path, the plugin API\n"
    "version it was built against and the one negotiated with the library,\n"
    "and every registration it made (kind and name), in order.\n",
    run_inspect,
};
