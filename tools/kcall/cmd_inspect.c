/*
 * cmd_inspect.c — `kcall inspect`: load plugins and show what they are and
 * what they register; read programs and show what they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kcall/program.h>
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
  if (desc.xla_ffi) {
    /* Its signature is open: the handler decodes its own frame. */
    printf(" (platform %s, XLA FFI handler", kc_platform_name(desc.platform));
    if (desc.xla_ffi_api_major >= 0) {
      printf(", built for XLA FFI API %d.%d)", (int)desc.xla_ffi_api_major,
             (int)desc.xla_ffi_api_minor);
    } else {
      printf(", XLA FFI API version not reported)");
    }
    return NULL;
  }
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
  return strcmp(kind, "custom-call target") == 0;
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
                                     "custom call %s", CLI_Q(reg.name));
      if (status) return status;
    }
    putchar('\n');
  }
  return NULL;
}

/* Whether the file at `path` is a shared object (ELF), not a program. A
 * file that cannot be read goes to kc_plugin_load, which says why. */
static bool is_shared_object(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return true;
  unsigned char magic[4] = {0};
  size_t n = fread(magic, 1, sizeof magic, f);
  fclose(f);
  return n < 4 || memcmp(magic, "\x7f" "ELF", 4) == 0;
}

/* A program file (HLO or StableHLO text, an artifact, a serialized
 * jax.export): what it was read from, its parameters and result. */
static kc_status* print_program(const char* path) {
  kc_program* p = NULL;
  KC_RETURN_IF_ERROR(kc_program_parse_file(path, &p));
  char shape[256];
  printf("program:  %s\n", kc_program_get_name(p));
  printf("path:     %s\n", path);
  printf("format:   %s\n", kc_program_get_format(p));
  printf("parameters: %zu\n", kc_program_get_parameter_count(p));
  for (size_t i = 0; i < kc_program_get_parameter_count(p); ++i) {
    kc_shape_format(kc_program_get_parameter_shape(p, i), shape, sizeof shape);
    printf("  %-10s %s\n", kc_program_get_parameter_name(p, i), shape);
  }
  const kc_shape* result = kc_program_get_result_shape(p);
  kc_shape_format(result, shape, sizeof shape);
  printf("result:   %s\n", shape);
  /* The outputs' names, where the producer gave them (jax.result_info). */
  size_t outputs = kc_shape_is_tuple(result) ? kc_shape_get_tuple_size(result) : 1;
  for (size_t i = 0; i < outputs; ++i) {
    const char* name = kc_program_get_output_name(p, i);
    if (name) printf("  out%zu       %s\n", i, name);
  }
  printf("instructions: %zu\n", kc_program_get_instruction_count(p));
  kc_program_destroy(p);
  return NULL;
}

/* Collects the --python modules into *py and the plugin paths into
 * paths[0, *out_count). Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char** argv, cli_python* py,
                         const char** paths, int* out_count) {
  for (int i = 0; i < argc; ++i) {
    const char* module = NULL;
    if (strncmp(argv[i], "--python=", 9) == 0) {
      module = argv[i] + 9;
    } else if (strcmp(argv[i], "--python") == 0) {
      if (i + 1 >= argc) {
        return cli_usage_error(&cli_cmd_inspect, "--python needs a module");
      }
      module = argv[++i];
    } else if (argv[i][0] == '-') {
      return cli_usage_error(&cli_cmd_inspect, "unknown option %s",
                             CLI_QS(argv[i]));
    } else {
      paths[(*out_count)++] = argv[i];
      continue;
    }
    int exit_code = cli_python_add(py, &cli_cmd_inspect, module);
    if (exit_code >= 0) return exit_code;
  }
  if (*out_count == 0 && !py->modules) {
    return cli_usage_error(&cli_cmd_inspect, "no plugin given");
  }
  return -1;
}

/* Loads and prints each plugin, then the Python modules' plugin. */
static kc_status* inspect(const char* const* paths, int count, cli_python* py) {
  kc_status* status = NULL;
  for (int i = 0; i < count && !status; ++i) {
    if (i > 0) putchar('\n');
    if (!is_shared_object(paths[i])) {
      status = print_program(paths[i]);
      continue;
    }
    kc_plugin* plugin = NULL;
    status = kc_plugin_load(paths[i], &plugin);
    if (!status) status = print_plugin(plugin);
  }
  if (!status) status = cli_python_load(py);
  if (!status && py->plugin) {
    if (count > 0) putchar('\n');
    status = print_plugin(py->plugin);
  }
  return status;
}

static int run_inspect(int argc, char** argv) {
  const char** paths = calloc((size_t)argc + 1, sizeof *paths);
  if (!paths) {
    return cli_report_status(
        kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
  }
  cli_python py = {0};
  int count = 0;
  int exit_code = parse_options(argc, argv, &py, paths, &count);
  if (exit_code < 0) {
    kc_status* status = inspect(paths, count, &py);
    exit_code = status ? cli_report_status(status) : CLI_EXIT_OK;
  }
  cli_python_deinit(&py);
  free(paths);
  return exit_code;
}

const cli_command cli_cmd_inspect = {
    "inspect",
    "load plugins and list what they register; show what a program is",
    "usage: kcall inspect [--python MODULE]... [PLUGIN.so | PROGRAM]...\n"
    "\n"
    "Loads each plugin and prints its name, version and path, the plugin API\n"
    "version it was built against and the one negotiated with the library,\n"
    "and every registration it made (kind and name), in order. A custom\n"
    "call also shows its platform, its API version (calling convention)\n"
    "and, for a typed handler, its signature, with the default of each\n"
    "optional attribute (eps: f32 = 1e-05); an XLA FFI handler shows the\n"
    "XLA FFI API version it was built for.\n"
    "\n"
    "--python MODULE (may be repeated) imports a Python module, or runs a\n"
    ".py file, after the plugins, and shows what it registered as the\n"
    "plugin 'python' (see `kcall help call`).\n"
    "\n"
    "A PROGRAM (any file that is not a shared object: HLO or StableHLO\n"
    "text, a portable artifact, a serialized jax.export) is read and shown:\n"
    "its name, the format it was read from (with the StableHLO version and\n"
    "calling convention), its parameters, result and instruction count.\n",
    run_inspect,
};
