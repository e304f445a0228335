/*
 * cmd_ops.c — `kcall ops`: load plugins and list the registered ops with
 * their signatures, attrs, flags, gradients, kernels and docs.
 */
#include <string.h>

#include "cli.h"

static void print_flags(uint32_t flags) {
  static const struct {
    uint32_t bit;
    const char* name;
  } kFlags[] = {{KC_OP_COMMUTATIVE, "commutative"},
                {KC_OP_AGGREGATE, "aggregate"},
                {KC_OP_STATEFUL, "stateful"},
                {KC_OP_SYMBOLIC_SHAPES, "symbolic_shapes"}};
  if (!flags) return;
  const char* sep = "  flags:   ";
  for (size_t i = 0; i < sizeof kFlags / sizeof kFlags[0]; ++i) {
    if (flags & kFlags[i].bit) {
      printf("%s%s", sep, kFlags[i].name);
      sep = ", ";
    }
  }
  putchar('\n');
}

static kc_status* print_op(kc_string_view name) {
  const kc_op* op = NULL;
  kc_status* status = kc_op_registry_lookup(name, &op);
  if (status) return status;
  char sig[4096];
  kc_op_format_signature(op, sig, sizeof sig);
  printf("%s\n", sig);
  for (int32_t i = 0; i < kc_op_get_attr_count(op); ++i) {
    printf("  %s %s\n",
           i ? "        " : "attrs:  ", kc_op_get_attr_spec(op, i));
  }
  print_flags(kc_op_get_flags(op));
  kc_op_gradient grad = {.struct_size = sizeof grad};
  if (kc_op_get_gradient(op, &grad)) printf("  gradient: %s\n", grad.spec);
  kc_op_gradient jvp = {.struct_size = sizeof jvp};
  if (kc_op_get_jvp(op, &jvp)) printf("  jvp:      %s\n", jvp.spec);
  printf("  batching: %s\n", kc_op_batching_name(kc_op_get_batching(op)));
  kc_array* kernels = NULL;
  status = kc_kernel_registry_list(NULL, name, &kernels);
  if (status) return status;
  size_t n = kc_array_get_size(kernels);
  if (n == 0) printf("  kernels: (none)\n");
  for (size_t i = 0; i < n; ++i) {
    kc_string_view d;
    kc_any_get_string(kc_array_get_item(kernels, i), &d);
    printf("  %s %.*s\n", i ? "        " : "kernels:", (int)d.size, d.data);
  }
  kc_object_release(KC_OBJECT(kernels));
  const char* doc = kc_op_get_doc(op);
  if (doc[0]) printf("  doc:     %s\n", doc);
  return NULL;
}

static kc_status* print_all(void) {
  kc_array* names = NULL;
  kc_status* status = kc_op_registry_list(NULL, KC_SV_LIT(""), &names);
  for (size_t i = 0; !status && i < kc_array_get_size(names); ++i) {
    kc_string_view name;
    kc_any_get_string(kc_array_get_item(names, i), &name);
    if (i) putchar('\n');
    status = print_op(name);
  }
  kc_object_release(KC_OBJECT(names));
  return status;
}

static int run_ops(int argc, char** argv) {
  int i = 0;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    const char* arg = argv[i];
    const char* path = NULL;
    if (strcmp(arg, "--") == 0) {
      ++i;
      break;
    }
    if (cli_is_help_flag(arg)) {
      fputs(cli_cmd_ops.usage, stdout);
      return CLI_EXIT_OK;
    }
    if (strncmp(arg, "--plugin=", 9) == 0) {
      path = arg + 9;
    } else if (strcmp(arg, "--plugin") == 0 || strcmp(arg, "-p") == 0) {
      if (i + 1 >= argc) {
        return cli_usage_error(&cli_cmd_ops, "%s needs a path", arg);
      }
      path = argv[++i];
    } else {
      return cli_usage_error(&cli_cmd_ops, "unknown option %s", CLI_QS(arg));
    }
    kc_plugin* plugin = NULL;
    kc_status* status = kc_plugin_load(path, &plugin);
    if (status) return cli_report_status(status);
  }
  kc_status* status = NULL;
  if (i == argc) {
    status = print_all();
  }
  for (int first = i; !status && i < argc; ++i) {
    if (i > first) putchar('\n');
    status = print_op(kc_sv(argv[i]));
  }
  return status ? cli_report_status(status) : CLI_EXIT_OK;
}

const cli_command cli_cmd_ops = {
    "ops",
    "list the registered ops, their signatures and kernels",
    "usage: kcall ops [--plugin PLUGIN.so]... [--] [NAME]...\n"
    "\n"
    "Loads each plugin, then describes every registered op (or those named),\n"
    "one block each:\n"
    "\n"
    "  Add(x: T, y: T) -> (z: T)\n"
    "    attrs:   T: {f32, f64, i32}\n"
    "    flags:   commutative\n"
    "    kernels: cpu: T in {i32, f32, f64}\n"
    "    doc:     z = x + y, broadcasting as NumPy does.\n"
    "\n"
    "Every op NAME is also the function op.NAME: `kcall call op.Add\n"
    "f32[2]:1,2 f32[2]:3,4` calls it (see `kcall help call`).\n"
    "\n"
    "Options:\n"
    "  -p, --plugin PLUGIN.so  load a plugin first (may be repeated)\n"
    "  -h, --help              print this text\n",
    run_ops,
};
