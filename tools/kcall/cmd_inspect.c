/*
 * cmd_inspect.c — `kcall inspect`: load plugins and show what they are and
 * what they register.
 */
#include <stdlib.h>
#include <string.h>

#include <kcall/xcall.h>

#include "cli.h"

/* A custom-call registration is named "TARGET@Platform"; the registry
 * adds its calling convention and, for a typed handler, its signature. */
static kc_status* print_custom_call(kc_string_view name) {
  size_t at = name.size;
  while (at > 0 && name.data[at - 1] != '@') --at;
  kc_string_view target = {name.data, at ? at - 1 : name.size};
  kc_platform platform = KC_PLATFORM_HOST;
  kc_status* status = NULL;
  if (at) {
    kc_string_view platform_name = {name.data + at, name.size - at};
    status = kc_platform_parse(platform_name, &platform);
  }
  kc_xcall_target_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  if (!status) status = kc_xcall_lookup(target, platform, &desc);
  if (status) return status;
  printf(" (platform %s, API %s)", kc_platform_name(desc.platform),
         kc_xcall_api_name(desc.api));
  if (desc.signature) {
    size_t size = kc_xcall_signature_format(desc.signature, NULL, 0) + 1;
    char* text = malloc(size);
    if (!text) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    kc_xcall_signature_format(desc.signature, text, size);
    printf(" %s", text);
    free(text);
  }
  return NULL;
}

static bool is_custom_call(const char* kind) {
  return strcmp(kind, kc_registration_kind_custom_call) == 0;
}

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
    printf("  %-10s %.*s", reg.kind, (int)reg.name.size, reg.name.data);
    if (is_custom_call(reg.kind)) {
      status = kc_status_add_context(print_custom_call(reg.name),
                                     "custom call '%.*s'", (int)reg.name.size,
                                     reg.name.data);
      if (status) return status;
    }
    putchar('\n');
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
    "and every registration it made (kind and name), in order. A custom\n"
    "call also shows its platform, its API version (calling convention)\n"
    "and, for a typed handler, its signature.\n",
    run_inspect,
};
