/*
 * cmd_call.c — `kcall call`: load plugins, look a function up by name, call
 * it with typed command-line arguments and print the result.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Handles the options, loading each plugin as it comes and the Python
 * modules after them. Options come before NAME: after it every word is an
 * argument, so that `-7` and `--help` reach the function. Returns true
 * when the call should go on, with *out_name_index set; otherwise
 * *out_exit is the exit status. */
static bool handle_options(int argc, char** argv, cli_python* py,
                           int* out_name_index, int* out_exit) {
  int i = 0;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    const char* arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      ++i;
      break;
    }
    if (cli_is_help_flag(arg)) {
      fputs(cli_cmd_call.usage, stdout);
      *out_exit = CLI_EXIT_OK;
      return false;
    }
    const char* path = NULL;
    const char* module = NULL;
    if (strncmp(arg, "--plugin=", 9) == 0) {
      path = arg + 9;
    } else if (strncmp(arg, "--python=", 9) == 0) {
      module = arg + 9;
    } else if (strcmp(arg, "--plugin") == 0 || strcmp(arg, "-p") == 0) {
      if (i + 1 >= argc) {
        *out_exit = cli_usage_error(&cli_cmd_call, "%s needs a path", arg);
        return false;
      }
      path = argv[++i];
    } else if (strcmp(arg, "--python") == 0) {
      if (i + 1 >= argc) {
        *out_exit = cli_usage_error(&cli_cmd_call, "%s needs a module", arg);
        return false;
      }
      module = argv[++i];
    } else {
      *out_exit = cli_usage_error(&cli_cmd_call, "unknown option %s", CLI_QS(arg));
      return false;
    }
    if (module) {
      int exit_code = cli_python_add(py, &cli_cmd_call, module);
      if (exit_code >= 0) {
        *out_exit = exit_code;
        return false;
      }
      continue;
    }
    kc_plugin* plugin = NULL;
    kc_status* status = kc_plugin_load(path, &plugin);
    if (status) {
      *out_exit = cli_report_status(status);
      return false;
    }
  }
  kc_status* status = cli_python_load(py);
  if (status) {
    *out_exit = cli_report_status(status);
    return false;
  }
  *out_name_index = i;
  return true;
}

/* Types the arguments, calls `func` and prints what it returns. */
static kc_status* call_and_print(const kc_func* func, int argc, char** argv) {
  kc_any* args = calloc((size_t)argc + 1, sizeof *args);
  if (!args) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* status = NULL;
  for (int i = 0; i < argc && !status; ++i) {
    status = cli_parse_arg(argv[i], i, &args[i]);
  }
  kc_any ret = kc_any_none();
  if (!status) status = kc_func_call(func, args, (int32_t)argc, &ret);
  if (!status) {
    cli_print_value(stdout, &ret);
    putchar('\n');
  }
  /* Strings only borrow argv; tensor literals, functions and the result
   * are ours. */
  kc_any_release(&ret);
  for (int i = 0; i < argc; ++i) kc_any_release(&args[i]);
  free(args);
  return status;
}

static int run_call(int argc, char** argv) {
  int name_index = 0;
  int exit_code = CLI_EXIT_OK;
  cli_python py = {0};
  bool go_on = handle_options(argc, argv, &py, &name_index, &exit_code);
  cli_python_deinit(&py);
  if (!go_on) return exit_code;
  if (name_index >= argc) {
    return cli_usage_error(&cli_cmd_call, "no function name given");
  }
  kc_func* func = NULL;
  kc_status* status = kc_func_registry_lookup(kc_sv(argv[name_index]), &func);
  if (!status) {
    int first_arg = name_index + 1;
    status = call_and_print(func, argc - first_arg, argv + first_arg);
  }
  return status ? cli_report_status(status) : CLI_EXIT_OK;
}

const cli_command cli_cmd_call = {
    "call",
    "call a registered function and print its result",
    "usage: kcall call [--plugin PLUGIN.so]... [--python MODULE]... [--] NAME\n"
    "                  [ARG]...\n"
    "\n"
    "Loads each plugin, then calls the function registered as NAME with the\n"
    "arguments ARG... and prints its result.\n"
    "\n"
    "Options (before NAME; every word after NAME is an argument):\n"
    "  -p, --plugin PLUGIN.so  load a plugin first (may be repeated)\n"
    "      --python MODULE     import a Python module (or run a .py file)\n"
    "                          whose functions, registered with\n"
    "                          @kcall.register_func, can then be called; may\n"
    "                          be repeated; after the plugins, through the\n"
    "                          plugin libkcall_python.so beside libkcall\n"
    "  -h, --help              print this text\n"
    "\n"
    "An argument's form gives its type:\n"
    "  42  -7  0x10            int (64-bit)\n"
    "  3.5  1e-3  inf  nan     float\n"
    "  true  false             bool\n"
    "  f32[2,2]:1,2,3,4        a tensor: DTYPE[DIMS]:VALUES (f32[3]:0 fills;\n"
    "                          i64[]:7 is a scalar)\n"
    "  anything else           str\n"
    "A prefix forces a type: int:42  float:2  bool:1  str:42\n"
    "func:NAME passes the function registered as NAME (NOT_FOUND when there\n"
    "is none): `kcall call hello.call func:hello.add 2 3`.\n"
    "\n"
    "The result prints as: 5, 2.5, true, text as-is, None, <function>,\n"
    "[1, 'a'], b'\\x00\\n', a tensor as a literal (f32[2]:4,6) or, when\n"
    "large or not on the CPU, as <tensor f32[512,512] cpu:0>.\n"
    "\n"
    "Ops are functions too: `kcall call op.Concat f32[2]:1,2 f32[1]:3 axis=0`\n"
    "passes tensors, then attrs as name=value (see `kcall help ops`).\n",
    run_call,
};
