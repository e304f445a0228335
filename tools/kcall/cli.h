/*
 * cli.h — what the pieces of the kcall command-line tool share.
 *
 * The tool is written on the public API only (<kcall/kcall.h>); nothing
 * here is part of the library.
 */
#ifndef KCALL_TOOLS_CLI_H_
#define KCALL_TOOLS_CLI_H_

#include <stdbool.h>
#include <stdio.h>

#include <kcall/kcall.h>

#include "files.h"

/* Exit statuses, the same for every command. */
enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_ERROR = 1, /* the library answered with a status */
  CLI_EXIT_USAGE = 2  /* the command line itself was wrong */
};

/* One subcommand. `run` gets the arguments after the command's name;
 * `kcall NAME --help` is answered before it runs. */
typedef struct cli_command {
  const char* name;
  const char* summary; /* one line for the overview */
  const char* usage;   /* the full text `kcall help NAME` prints */
  int (*run)(int argc, char** argv);
} cli_command;

/* The command called `name`, or NULL. */
const cli_command* cli_find_command(const char* name);

/* Prints the overview of all commands to `out`. */
void cli_print_overview(FILE* out);

/* True for "-h" and "--help". */
bool cli_is_help_flag(const char* arg);

/* Prints "kcall: error: <the status, formatted>" to stderr, destroys the
 * status and returns CLI_EXIT_ERROR. */
int cli_report_status(kc_status* status);

/* Prints "kcall: <message>" and the usage of `command` (NULL: the
 * overview) to stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const cli_command* command, const char* fmt, ...)
    KC_PRINTF(2, 3);

/* Types one command-line argument (see `kcall help call`) into *out_value,
 * which the caller releases with kc_any_release. Strings borrow `text`, so
 * the value lives as long as argv; tensor literals and functions (func:NAME)
 * hold a reference of their own. `position` is the argument's 0-based
 * index, used in messages. INVALID_ARGUMENT when a prefix forces a type the
 * text does not have; OUT_OF_RANGE for an int that does not fit in 64 bits;
 * NOT_FOUND (with the nearest names) for func:NAME naming no registered
 * function. */
kc_status* cli_parse_arg(const char* text, int position, kc_any* out_value);

/* Writes the shortest text that reads back as `value` at the precision of
 * `dtype` (f16, bf16, f32 or f64) into buf: 0.1f is "0.1", 20 is "20.0";
 * exponents below 1e-4 and from 1e16 ("1e-05", "1e+300"), as NumPy. */
void cli_format_float(double value, DLDataType dtype, char* buf, size_t cap);

/* A tensor literal, DTYPE[DIMS]:VALUES ("f32[2,2]:1,2,3,4", "i64[]:7",
 * "f32[3]:0" to fill; see docs/cli.md). Returns false, touching nothing,
 * when `text` is not one (no '[', or no dtype before it); otherwise true,
 * with *out_value a new tensor object the caller releases, or
 * *out_status INVALID_ARGUMENT naming `position` and what is wrong. */
bool cli_parse_tensor_literal(const char* text, int position,
                              kc_any* out_value, kc_status** out_status);

/* Prints `t` as a tensor literal and returns true when it can be one: on
 * the CPU, compact, of a dtype literals hold, at most 256 elements.
 * Otherwise prints nothing and returns false. */
bool cli_print_tensor_literal(FILE* out, const DLTensor* t);

/* Prints `value` the way `kcall call` shows a result (see docs/cli.md). */
void cli_print_value(FILE* out, const kc_any* value);

/* The Python modules named with --python (python_modules.c). A command
 * collects them while it reads its options and loads them, all in one
 * load of the plugin kcall_python, after its other plugins (so that the
 * modules find their functions). Zero-initialise; cli_python_deinit. */
typedef struct cli_python {
  char* modules;      /* comma-separated; NULL when no --python was given */
  kc_plugin* plugin;  /* set by cli_python_load; borrowed */
} cli_python;

/* Adds `module`: a module name, a path to a .py file, or a comma-separated
 * list of them. Returns -1 when it did, else the exit status (a usage
 * error of `command` for an empty module). */
int cli_python_add(cli_python* py, const cli_command* command,
                   const char* module);

/* When modules were added: loads libkcall_python.so from the directory of
 * the libkcall this process runs with, with KCALL_PYTHON_MODULES set to
 * them (replacing what the environment had), and sets py->plugin.
 * Otherwise does nothing. NOT_FOUND when the plugin is not there; the
 * plugin's own errors (a module that raised) as kc_plugin_load returns
 * them. */
kc_status* cli_python_load(cli_python* py);

void cli_python_deinit(cli_python* py);

/* XLA FFI handlers and types named with --xla-ffi and --xla-ffi-type
 * (xla_ffi.c), taken from shared libraries built with XLA's headers.
 * Zero-initialise; cli_xla_ffi_deinit. The specs are borrowed from argv. */
typedef struct cli_xla_ffi {
  const char** handlers; /* "LIB:SYMBOL[=TARGET]", "LIB:STAGE:SYM,...=TARGET" */
  size_t num_handlers;
  const char** types; /* "LIB:TYPE_ID[:TYPE_INFO]=NAME" */
  size_t num_types;
} cli_xla_ffi;

/* Adds the value of `option` ("--xla-ffi" or "--xla-ffi-type") after
 * checking its syntax. Returns -1 when it did, else the exit status (a
 * usage error of `command` saying what is wrong). */
int cli_xla_ffi_add(cli_xla_ffi* x, const cli_command* command, const char* option,
                    const char* spec);

/* Loads the libraries, registers every type, then every handler for the
 * host platform (kc_xla_ffi_type_register, kc_xcall_register_xla_ffi).
 * NOT_FOUND for a library that does not load or a missing symbol;
 * registration errors with the option's text as context. */
kc_status* cli_xla_ffi_load(const cli_xla_ffi* x);

void cli_xla_ffi_deinit(cli_xla_ffi* x);

/* The commands, each defined beside its code. */
extern const cli_command cli_cmd_devices;
extern const cli_command cli_cmd_version;
extern const cli_command cli_cmd_inspect;
extern const cli_command cli_cmd_call;
extern const cli_command cli_cmd_ops;
extern const cli_command cli_cmd_run;
extern const cli_command cli_cmd_build;
extern const cli_command cli_cmd_help;

#endif /* KCALL_TOOLS_CLI_H_ */
