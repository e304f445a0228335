/*
 * cmd_run.c — `kcall run`: load plugins, parse an HLO-text program,
 * compile it for a platform, feed it inputs, run it, and print or save
 * its outputs.
 */
#define _POSIX_C_SOURCE 200809L /* mkdir, clock_gettime, sysconf */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "run.h"

typedef struct run_options {
  const char* program_path;
  const char** plugins;
  size_t num_plugins;
  cli_python python; /* --python modules, loaded after the plugins */
  cli_xla_ffi xla;   /* --xla-ffi handlers and --xla-ffi-type types, last */
  const char** inputs;
  size_t num_inputs;
  /* --dim NAME=VALUE: a serialized export's dimension variables. */
  const char** dim_names; /* into argv, cut at '=' in dim_text */
  int64_t* dim_values;
  size_t num_dims;
  char** dim_text;
  const char* output_dir;
  const char* platform;
  const char* device; /* --device: the CUDA ordinal */
  bool stats;
  bool generate_inputs;
} run_options;

/* ---- the command line ----------------------------------------------------- */

/* The value of option `name` at argv[*i]: "--name=VALUE" or "--name VALUE"
 * (or the short form and its next word). NULL when `arg` is not that
 * option; *out_missing when it is but has no value. */
static const char* option_value(int argc, char** argv, int* i,
                                const char* name, const char* short_name,
                                bool* out_missing) {
  const char* arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) == 0 && arg[n] == '=') return arg + n + 1;
  if (strcmp(arg, name) != 0 && !(short_name && strcmp(arg, short_name) == 0)) {
    return NULL;
  }
  if (*i + 1 >= argc) {
    *out_missing = true;
    return NULL;
  }
  return argv[++*i];
}

/* Fills *o from the command line. Returns -1 to go on, else the exit
 * status (usage errors, --help). */
static int parse_options(int argc, char** argv, run_options* o) {
  bool options_done = false;
  for (int i = 0; i < argc; ++i) {
    const char* arg = argv[i];
    if (options_done || arg[0] != '-' || arg[1] == '\0') {
      if (o->program_path) {
        return cli_usage_error(&cli_cmd_run, "unexpected argument %s (one "
                               "program at a time)", CLI_QS(arg));
      }
      o->program_path = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      options_done = true;
      continue;
    }
    if (cli_is_help_flag(arg)) {
      fputs(cli_cmd_run.usage, stdout);
      return CLI_EXIT_OK;
    }
    if (strcmp(arg, "--stats") == 0) {
      o->stats = true;
      continue;
    }
    if (strcmp(arg, "--generate-inputs") == 0) {
      o->generate_inputs = true;
      continue;
    }
    bool missing = false;
    const char* v;
    if ((v = option_value(argc, argv, &i, "--plugin", "-p", &missing))) {
      o->plugins[o->num_plugins++] = v;
    } else if ((v = option_value(argc, argv, &i, "--python", NULL, &missing))) {
      int exit_code = cli_python_add(&o->python, &cli_cmd_run, v);
      if (exit_code >= 0) return exit_code;
    } else if ((v = option_value(argc, argv, &i, "--xla-ffi", NULL, &missing)) ||
               (v = option_value(argc, argv, &i, "--xla-ffi-type", NULL, &missing))) {
      const char* option = strncmp(arg, "--xla-ffi-type", 14) == 0 ? "--xla-ffi-type"
                                                                     : "--xla-ffi";
      int exit_code = cli_xla_ffi_add(&o->xla, &cli_cmd_run, option, v);
      if (exit_code >= 0) return exit_code;
    } else if ((v = option_value(argc, argv, &i, "--input", "-i", &missing))) {
      if (!strchr(v, '=') || v[0] == '=') {
        return cli_usage_error(&cli_cmd_run, "--input %s: expected "
                               "NAME=FILE.npy or NAME=VALUE", CLI_QS(v));
      }
      o->inputs[o->num_inputs++] = v;
    } else if ((v = option_value(argc, argv, &i, "--dim", NULL, &missing))) {
      const char* eq = strchr(v, '=');
      char* end = NULL;
      long long value = eq ? strtoll(eq + 1, &end, 10) : -1;
      if (!eq || eq == v || !eq[1] || *end || value < 0) {
        return cli_usage_error(&cli_cmd_run, "--dim %s: expected NAME=SIZE (b=32)", CLI_QS(v));
      }
      char* name = strndup(v, (size_t)(eq - v));
      if (!name) return cli_report_status(kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
      o->dim_text[o->num_dims] = name;
      o->dim_names[o->num_dims] = name;
      o->dim_values[o->num_dims++] = value;
    } else if ((v = option_value(argc, argv, &i, "--output", "-o", &missing))) {
      o->output_dir = v;
    } else if ((v = option_value(argc, argv, &i, "--platform", NULL,
                                 &missing))) {
      o->platform = v;
    } else if ((v = option_value(argc, argv, &i, "--device", NULL, &missing))) {
      o->device = v;
    } else if (missing) {
      return cli_usage_error(&cli_cmd_run, "%s needs a value", arg);
    } else {
      return cli_usage_error(&cli_cmd_run, "unknown option %s", CLI_QS(arg));
    }
  }
  if (!o->program_path) {
    return cli_usage_error(&cli_cmd_run, "no program given");
  }
  return -1;
}

/* ---- files ---------------------------------------------------------------- */

/* ---- outputs -------------------------------------------------------------- */

static void print_outputs(const kc_executable* exe, kc_tensor* const* outputs,
                          size_t count) {
  for (size_t i = 0; i < count; ++i) {
    char shape[256];
    kc_shape_format(kc_executable_get_output_shape(exe, i), shape, sizeof shape);
    printf("out%zu: %s\n", i, shape);
    run_print_tensor(stdout, kc_tensor_get_dltensor(outputs[i]));
    putchar('\n');
  }
}

static kc_status* write_outputs(const char* dir, const kc_executable* exe,
                                kc_tensor* const* outputs, size_t count) {
  KC_RETURN_IF_ERROR(cli_dir_prepare(dir), "--output");
  for (size_t i = 0; i < count; ++i) {
    size_t n = strlen(dir) + 32;
    char* path = malloc(n);
    if (!path) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    snprintf(path, n, "%s/out%zu.npy", dir, i);
    struct stat sb;
    kc_status* st = NULL;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      /* The tool names the file; what is in its way is the directory's. */
      st = kc_status_create(KC_FAILED_PRECONDITION,
                            "cannot write output %zu: %s is a directory, "
                            "expected a file (or nothing) there",
                            i, CLI_QS(path));
    }
    if (!st) st = kc_tensor_write_npy(path, kc_tensor_get_dltensor(outputs[i]));
    if (!st) {
      char shape[256];
      kc_shape_format(kc_executable_get_output_shape(exe, i), shape,
                      sizeof shape);
      printf("wrote %s (%s)\n", path, shape);
    }
    free(path);
    if (st) return st;
  }
  return NULL;
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_stats(const kc_executable* exe, const uint64_t* times,
                        double wall_seconds) {
  kc_executable_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  printf("\n-- stats\n");
  printf("read from: %s\n", kc_program_get_format(kc_executable_get_program(exe)));
  printf("instructions: %zu, %zu live after dead-code removal\n",
         info.num_instructions, info.num_live_instructions);
  printf("buffer plan:\n");
  size_t n = kc_executable_format_plan(exe, NULL, 0) + 1;
  char* plan = malloc(n);
  if (plan) {
    kc_executable_format_plan(exe, plan, n);
    fputs(plan, stdout);
    if (n > 1 && plan[n - 2] != '\n') putchar('\n');
    free(plan);
  }
  printf("peak bytes: %zu (temporaries %zu in %zu buffers, %zu without "
         "reuse; outputs %zu)\n",
         info.peak_bytes, info.temp_bytes, info.num_buffers,
         info.temp_bytes_unshared, info.output_bytes);
  printf("time per instruction:\n");
  for (size_t i = 0; times && i < info.num_live_instructions; ++i) {
    printf("  %6zu %-24s %10.3f us\n", i,
           kc_executable_get_instruction_name(exe, i), (double)times[i] / 1e3);
  }
  printf("whole run: %.3f us\n", wall_seconds * 1e6);
  const kc_program* program = kc_executable_get_program(exe);
  size_t skipped = kc_program_get_skipped_attribute_count(program);
  if (skipped) {
    printf("attributes not read (they do not change the result):");
    for (size_t i = 0; i < skipped; ++i) {
      size_t count = 0;
      const char* name = kc_program_get_skipped_attribute(program, i, &count);
      printf("%s %s (%zu)", i ? "," : "", name, count);
    }
    printf("\n");
  }
}

/* ---- the run -------------------------------------------------------------- */

/* Replaces a device tensor by a host copy of it (the device one is
 * released); a host tensor stays. */
static kc_status* bring_to_host(kc_tensor** t) {
  const DLTensor* dl = kc_tensor_get_dltensor(*t);
  if (dl->device.device_type == kDLCPU) return NULL;
  kc_tensor* host = NULL;
  kc_status* st = kc_tensor_create(NULL, dl->shape, dl->ndim, dl->dtype, kc_device_cpu(), &host);
  if (!st) st = kc_dltensor_copy(dl, kc_tensor_get_dltensor(host), NULL);
  if (st) {
    kc_object_release(KC_OBJECT(host));
    return kc_status_add_context(st, "copying to the host");
  }
  kc_object_release(KC_OBJECT(*t));
  *t = host;
  return NULL;
}

static kc_status* execute(const run_options* o, const kc_executable* exe,
                          run_inputs* in) {
  kc_executable_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  const DLTensor** args = calloc(in->count + 1, sizeof *args);
  kc_tensor** outputs = calloc(info.num_outputs + 1, sizeof *outputs);
  uint64_t* times =
      o->stats ? calloc(info.num_live_instructions + 1, sizeof *times) : NULL;
  kc_status* st = NULL;
  if (!args || !outputs || (o->stats && !times)) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (size_t i = 0; !st && i < in->count; ++i) {
    args[i] = kc_tensor_get_dltensor(in->leaves[i].tensor);
  }
  kc_execute_options options;
  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.instruction_ns = times;
  double start = seconds_now();
  if (!st) st = kc_executable_execute(exe, args, in->count, &options, outputs);
  double wall = seconds_now() - start;
  /* Outputs on a device come back to the host to be printed or written. */
  for (size_t i = 0; !st && i < info.num_outputs; ++i) {
    st = bring_to_host(&outputs[i]);
    if (st) st = kc_status_add_context(st, "output %zu", i);
  }
  if (!st && o->output_dir) {
    st = write_outputs(o->output_dir, exe, outputs, info.num_outputs);
  } else if (!st) {
    print_outputs(exe, outputs, info.num_outputs);
  }
  if (!st && o->stats) print_stats(exe, times, wall);
  for (size_t i = 0; outputs && i < info.num_outputs; ++i) {
    kc_object_release(KC_OBJECT(outputs[i]));
  }
  free(times);
  free(outputs);
  free(args);
  return st;
}

/* The program parsed for the shapes of the inputs given as .npy files
 * (NAME=FILE.npy, NAME a parameter's name or number): what a
 * shape-polymorphic module needs. Fails when an input cannot be read, or
 * as kc_program_parse_file_with does. */
static kc_status* parse_for_inputs(const run_options* o, kc_program** out) {
  const char** names = calloc(o->num_inputs + 1, sizeof *names);
  kc_shape** shapes = calloc(o->num_inputs + 1, sizeof *shapes);
  char** owned = calloc(o->num_inputs + 1, sizeof *owned);
  size_t n = 0;
  kc_status* st = names && shapes && owned ? NULL
                                           : kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; !st && i < o->num_inputs; ++i) {
    const char* eq = strchr(o->inputs[i], '=');
    const char* file = eq + 1;
    size_t len = strlen(file);
    if (len < 4 || strcmp(file + len - 4, ".npy") != 0) continue;
    kc_tensor* t = NULL;
    st = kc_tensor_read_npy(file, NULL, &t);
    if (st) break;
    const DLTensor* dl = kc_tensor_get_dltensor(t);
    st = kc_shape_create_array(dl->dtype, dl->shape, dl->ndim, &shapes[n]);
    kc_object_release(KC_OBJECT(t));
    owned[n] = st ? NULL : strndup(o->inputs[i], (size_t)(eq - o->inputs[i]));
    if (!st && !owned[n]) st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    if (!st) {
      names[n] = owned[n];
      n++;
    }
  }
  if (!st) {
    kc_parse_options options = {.struct_size = sizeof options,
                                .parameter_shapes = (const kc_shape* const*)shapes,
                                .num_parameter_shapes = n,
                                .parameter_names = names};
    st = kc_program_parse_file_with(o->program_path, &options, out);
  }
  for (size_t i = 0; shapes && i < n; ++i) kc_shape_destroy(shapes[i]);
  for (size_t i = 0; owned && i < n; ++i) free(owned[i]);
  free(names);
  free(shapes);
  free(owned);
  return st;
}

static kc_status* compile(const run_options* o, kc_thread_pool* pool,
                          kc_executable** out_exe, run_inputs* in) {
  kc_compile_options options;
  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.platform = KC_PLATFORM_HOST;
  if (o->platform) {
    kc_status* st = kc_platform_parse(kc_sv(o->platform), &options.platform);
    if (st) return kc_status_add_context(st, "--platform");
  }
  if (o->device) {
    char* end = NULL;
    long id = strtol(o->device, &end, 10);
    if (!*o->device || *end || id < 0 || id > INT32_MAX) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "--device %s: expected a device number (0, 1, ...)",
                              CLI_QS(o->device));
    }
    if (options.platform != KC_PLATFORM_CUDA) {
      return kc_status_create(KC_INVALID_ARGUMENT, "--device %s: needs --platform cuda",
                              CLI_QS(o->device));
    }
    options.device_id = (int32_t)id;
  }
  options.thread_pool = pool;

  kc_program* program = NULL;
  kc_status* st = NULL;
  if (o->num_dims) {
    /* A serialized export's shapes from its dimension variables. */
    kc_parse_options parse = {.struct_size = sizeof parse,
                              .dim_names = o->dim_names,
                              .dim_values = o->dim_values,
                              .num_dims = o->num_dims};
    st = kc_status_add_context(kc_program_parse_file_with(o->program_path, &parse, &program),
                               "--dim");
  } else {
    st = kc_program_parse_file(o->program_path, &program);
  }
  if (st && !o->num_dims && kc_status_get_code(st) == KC_FAILED_PRECONDITION) {
    /* A shape-polymorphic module: compiled for the shapes of the inputs
     * given as .npy files. */
    kc_status* again = parse_for_inputs(o, &program);
    if (again && kc_status_get_code(again) == KC_FAILED_PRECONDITION) {
      kc_status_destroy(again); /* still a shape missing: the first says which */
    } else {
      kc_status_destroy(st);
      st = again;
    }
  }
  if (st) return st;
  /* Messages name the module from here on ("compiling 'seed_add': ..."). */
  st = kc_program_compile(program, &options, out_exe);
  /* The names of the inputs come from the program's parameters. */
  if (!st) st = run_inputs_init(in, program, *out_exe);
  kc_program_destroy(program);
  return st;
}

/* The pool typed handlers may spread their work over: sized as the
 * library sizes its default pool (KCALL_NUM_THREADS, else the cores), but
 * owned here, so that its threads are stopped before the tool exits. */
static kc_status* create_pool(kc_thread_pool** out_pool) {
  long size = 0;
  const char* env = getenv("KCALL_NUM_THREADS");
  if (env && *env) size = strtol(env, NULL, 10);
  if (size <= 0) size = sysconf(_SC_NPROCESSORS_ONLN);
  if (size <= 0) size = 1;
  if (size > KC_THREAD_POOL_MAX_SIZE) size = KC_THREAD_POOL_MAX_SIZE;
  return kc_thread_pool_create((int32_t)size, out_pool);
}

static void free_options(run_options* o) {
  cli_python_deinit(&o->python);
  cli_xla_ffi_deinit(&o->xla);
  for (size_t i = 0; o->dim_text && i < o->num_dims; ++i) free(o->dim_text[i]);
  free(o->dim_text);
  free((void*)o->dim_names);
  free(o->dim_values);
  free(o->plugins);
  free(o->inputs);
}

static int run_run(int argc, char** argv) {
  run_options o;
  memset(&o, 0, sizeof o);
  o.plugins = calloc((size_t)argc + 1, sizeof *o.plugins);
  o.inputs = calloc((size_t)argc + 1, sizeof *o.inputs);
  o.dim_names = calloc((size_t)argc + 1, sizeof *o.dim_names);
  o.dim_values = calloc((size_t)argc + 1, sizeof *o.dim_values);
  o.dim_text = calloc((size_t)argc + 1, sizeof *o.dim_text);
  int exit_code = -1;
  if (!o.plugins || !o.inputs || !o.dim_names || !o.dim_values || !o.dim_text) {
    exit_code = cli_report_status(
        kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
  }
  if (exit_code < 0) exit_code = parse_options(argc, argv, &o);
  if (exit_code >= 0) {
    cli_python_deinit(&o.python);
    cli_xla_ffi_deinit(&o.xla);
    free_options(&o);
    return exit_code;
  }

  kc_status* st = NULL;
  for (size_t i = 0; i < o.num_plugins && !st; ++i) {
    kc_plugin* plugin = NULL;
    st = kc_plugin_load(o.plugins[i], &plugin);
  }
  if (!st) st = cli_python_load(&o.python);
  if (!st) st = cli_xla_ffi_load(&o.xla);
  kc_thread_pool* pool = NULL;
  kc_executable* exe = NULL;
  run_inputs in;
  memset(&in, 0, sizeof in);
  if (!st) st = create_pool(&pool);
  if (!st) st = compile(&o, pool, &exe, &in);
  for (size_t i = 0; i < o.num_inputs && !st; ++i) {
    st = run_inputs_set(&in, o.inputs[i]);
  }
  if (!st) st = run_inputs_finish(&in, o.generate_inputs, stderr);
  if (!st) st = execute(&o, exe, &in);
  run_inputs_deinit(&in);
  kc_executable_destroy(exe);
  kc_thread_pool_destroy(pool);
  free_options(&o);
  return st ? cli_report_status(st) : CLI_EXIT_OK;
}

const cli_command cli_cmd_run = {
    "run",
    "run an HLO or StableHLO program that calls custom calls",
    "usage: kcall run PROGRAM.hlo [--plugin P.so]... [--python MODULE]...\n"
    "                 [--xla-ffi LIB.so:SYMBOL[=TARGET]]...\n"
    "                 [--xla-ffi-type LIB.so:TYPE_ID[:TYPE_INFO]=NAME]...\n"
    "                 [--input NAME=VALUE]... [--generate-inputs]\n"
    "                 [--dim NAME=SIZE]... [--output DIR] [--platform NAME]\n"
    "                 [--device N] [--stats]\n"
    "\n"
    "Loads each plugin (which registers custom-call targets), parses\n"
    "PROGRAM.hlo (an HloModule as XLA prints it, StableHLO as JAX\n"
    "prints it by default, a portable artifact or a serialized\n"
    "jax.export: the content says which), compiles it for the\n"
    "platform, runs it once with the inputs and prints every output: its\n"
    "shape, then its values as NumPy prints them (\"...\" past 1000\n"
    "elements).\n"
    "\n"
    "Options:\n"
    "  -p, --plugin P.so       load a plugin first (may be repeated)\n"
    "      --python MODULE     import a Python module (or run a .py file)\n"
    "                          whose custom-call targets, registered with\n"
    "                          kcall.register_target, the program may call;\n"
    "                          may be repeated (see `kcall help call`)\n"
    "      --xla-ffi LIB.so:SYMBOL[=TARGET]\n"
    "                          register the XLA FFI handler SYMBOL of LIB.so\n"
    "                          (XLA_FFI_DEFINE_HANDLER_SYMBOL) as the host\n"
    "                          target TARGET (default: SYMBOL), called with\n"
    "                          api_version=API_VERSION_TYPED_FFI; for several\n"
    "                          stages, LIB.so:instantiate:SYM,execute:SYM=TARGET\n"
    "                          (also prepare:, initialize:); may be repeated\n"
    "      --xla-ffi-type LIB.so:TYPE_ID[:TYPE_INFO]=NAME\n"
    "                          register the user type NAME whose XLA_FFI_TypeId\n"
    "                          and XLA_FFI_TypeInfo are the symbols TYPE_ID and\n"
    "                          TYPE_INFO (\"SYM()\": the address SYM returns);\n"
    "                          handlers with state need their type first\n"
    "  -i, --input NAME=VALUE  one input (may be repeated); NAME is the\n"
    "                          parameter's name (with or without %) or\n"
    "                          number, and a leaf of a tuple parameter is\n"
    "                          NAME.i.j (its tuple indices); VALUE is\n"
    "                            FILE.npy    a NumPy file of the input's\n"
    "                                        dtype and shape\n"
    "                            2.5         a scalar, filling the input\n"
    "                            [1,2,3]     a list of exactly as many\n"
    "                                        elements (brackets may nest)\n"
    "      --generate-inputs   fill inputs not given with i * 0.01 (floats),\n"
    "                          i (ints) or i odd (bools), i the element index\n"
    "      --dim NAME=SIZE     the size of a dimension variable of a\n"
    "                          serialized jax.export (b=32; may be repeated):\n"
    "                          its parameters' shapes follow from the\n"
    "                          export's input avals (\"b, 8\" is [32,8])\n"
    "  -o, --output DIR        write the outputs as DIR/out0.npy, out1.npy, ...\n"
    "                          instead of printing them (DIR and missing\n"
    "                          parents are made)\n"
    "      --platform NAME     host (the default; also cpu) or cuda\n"
    "      --device N          with --platform cuda: the device number (default 0);\n"
    "                          inputs are copied there, outputs copied back\n"
    "      --stats             print the buffer plan, the peak bytes and the\n"
    "                          time each instruction took\n"
    "  -h, --help              print this text\n"
    "\n"
    "A missing input is an error naming it. A custom call that fails stops\n"
    "the run: the error names the target and the instruction. Typed handlers\n"
    "get a pool of KCALL_NUM_THREADS threads (default: one per core).\n"
    "Exit status: 0 on success, 1 on an error, 2 on a usage error.\n",
    run_run,
};
