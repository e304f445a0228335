/*
 * cmd_build.c — `kcall build`: compile a plugin's C, C++ and CUDA sources
 * into one shared object in a cache, keyed by a hash of everything that
 * goes into it, and print its path.
 *
 * Several processes may build the same plugin at once: the first to take
 * the key's lock file builds it in a directory of its own and renames the
 * result into place, the others wait for the lock and find it there.
 */
#define _GNU_SOURCE /* flock, mkdtemp, realpath, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"

/* Changed whenever the commands below change what they make. */
#define BUILD_KEY_VERSION "kcall build 1"

typedef enum { LANG_C, LANG_CXX, LANG_CUDA, LANG_HEADER } source_lang;

typedef struct build_source {
  const char* path; /* borrowed from argv */
  source_lang lang;
} build_source;

/* One compiler the build runs: what the user named, and what it is. */
typedef struct build_tool {
  const char* name;   /* as given: "cc", "/opt/cuda/bin/nvcc" */
  const char* option; /* the option that chooses it */
  const char* role;   /* for messages: "C compiler" */
  char* path;         /* found: owned */
  char* version;      /* what `path --version` printed: owned */
} build_tool;

typedef struct build_options {
  const char* name;
  build_source* sources;
  size_t num_sources;
  cli_argv flags;      /* C, C++ and the link by cc or c++ */
  cli_argv nvcc_flags; /* CUDA, and the link by nvcc */
  build_tool cc, cxx, nvcc;
  const char* cache_dir;
  bool verbose;
} build_options;

/* ---- the command line ------------------------------------------------------ */

static bool lang_of(const char* path, source_lang* out_lang) {
  static const struct {
    const char* ext;
    source_lang lang;
  } kExts[] = {
      {".c", LANG_C},      {".cc", LANG_CXX},     {".cpp", LANG_CXX},
      {".cxx", LANG_CXX},  {".C", LANG_CXX},      {".cu", LANG_CUDA},
      {".h", LANG_HEADER}, {".hh", LANG_HEADER},  {".hpp", LANG_HEADER},
      {".hxx", LANG_HEADER}, {".cuh", LANG_HEADER}, {".inc", LANG_HEADER},
  };
  const char* slash = strrchr(path, '/');
  const char* dot = strrchr(slash ? slash : path, '.');
  if (!dot) return false;
  for (size_t i = 0; i < sizeof kExts / sizeof kExts[0]; ++i) {
    if (strcmp(dot, kExts[i].ext) == 0) {
      *out_lang = kExts[i].lang;
      return true;
    }
  }
  return false;
}

/* A name is a file name's part: letters, digits, '_', '-', '.', not
 * beginning with '.' or '-'. */
static bool valid_name(const char* name) {
  size_t n = strlen(name);
  if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-') return false;
  for (size_t i = 0; i < n; ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

/* The value of option `opt` at argv[*i]: after '=' or the next word.
 * NULL (after a usage error, *out_exit set) when there is none. */
static const char* option_value(int argc, char** argv, int* i, const char* opt,
                                int* out_exit) {
  const char* arg = argv[*i];
  size_t n = strlen(opt);
  if (arg[n] == '=') return arg + n + 1;
  if (*i + 1 >= argc) {
    *out_exit = cli_usage_error(&cli_cmd_build, "%s needs a value", opt);
    return NULL;
  }
  return argv[++*i];
}

/* Is argv[i] the option `opt`, alone or as opt=VALUE? */
static bool is_option(const char* arg, const char* opt) {
  size_t n = strlen(opt);
  return strncmp(arg, opt, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

/* Reads the command line into *o. Returns -1 to go on, else the exit
 * status. */
static int parse_options(int argc, char** argv, build_options* o) {
  o->sources = calloc((size_t)argc + 1, sizeof *o->sources);
  if (!o->sources) {
    return cli_report_status(kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
  }
  bool options_done = false;
  for (int i = 0; i < argc; ++i) {
    const char* arg = argv[i];
    if (options_done || arg[0] != '-' || arg[1] == '\0') {
      if (!o->name) {
        o->name = arg;
        continue;
      }
      source_lang lang;
      if (!lang_of(arg, &lang)) {
        return cli_usage_error(&cli_cmd_build,
                               "source %s: expected a file ending in .c, .cc, "
                               ".cpp, .cxx, .cu or a header's .h, .hpp, .cuh",
                               CLI_QS(arg));
      }
      o->sources[o->num_sources++] = (build_source){.path = arg, .lang = lang};
      continue;
    }
    int exit_code = -1;
    const char* value = NULL;
    kc_status* st = NULL;
    if (strcmp(arg, "--") == 0) {
      options_done = true;
    } else if (cli_is_help_flag(arg)) {
      fputs(cli_cmd_build.usage, stdout);
      return CLI_EXIT_OK;
    } else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
      o->verbose = true;
    } else if (is_option(arg, "--flags")) {
      if ((value = option_value(argc, argv, &i, "--flags", &exit_code))) {
        st = cli_argv_add_words(&o->flags, value);
      }
    } else if (is_option(arg, "--flag")) {
      if ((value = option_value(argc, argv, &i, "--flag", &exit_code))) {
        st = cli_argv_add(&o->flags, value);
      }
    } else if (is_option(arg, "--nvcc-flags")) {
      if ((value = option_value(argc, argv, &i, "--nvcc-flags", &exit_code))) {
        st = cli_argv_add_words(&o->nvcc_flags, value);
      }
    } else if (is_option(arg, "--cc")) {
      value = option_value(argc, argv, &i, "--cc", &exit_code);
      if (value) o->cc.name = value;
    } else if (is_option(arg, "--cxx")) {
      value = option_value(argc, argv, &i, "--cxx", &exit_code);
      if (value) o->cxx.name = value;
    } else if (is_option(arg, "--nvcc")) {
      value = option_value(argc, argv, &i, "--nvcc", &exit_code);
      if (value) o->nvcc.name = value;
    } else if (is_option(arg, "--cache-dir")) {
      value = option_value(argc, argv, &i, "--cache-dir", &exit_code);
      if (value) o->cache_dir = value;
    } else {
      return cli_usage_error(&cli_cmd_build, "unknown option %s", CLI_QS(arg));
    }
    if (exit_code >= 0) return exit_code;
    if (st) return cli_report_status(st);
  }
  if (!o->name) return cli_usage_error(&cli_cmd_build, "no plugin name given");
  if (!valid_name(o->name)) {
    return cli_usage_error(&cli_cmd_build,
                           "plugin name %s: expected 1 to 64 letters, digits, "
                           "'_', '-' or '.', not beginning with '.' or '-'",
                           CLI_QS(o->name));
  }
  size_t compiled = 0;
  for (size_t i = 0; i < o->num_sources; ++i) {
    compiled += o->sources[i].lang != LANG_HEADER;
  }
  if (compiled == 0) {
    return cli_usage_error(&cli_cmd_build,
                           o->num_sources ? "no source to compile: only headers given"
                                          : "no source given");
  }
  return -1;
}

/* ---- compilers and the cache key ------------------------------------------- */

static bool has_lang(const build_options* o, source_lang lang) {
  for (size_t i = 0; i < o->num_sources; ++i) {
    if (o->sources[i].lang == lang) return true;
  }
  return false;
}

/* The tool that links: nvcc with CUDA sources, else c++ with C++ ones. */
static build_tool* linker_of(build_options* o) {
  if (has_lang(o, LANG_CUDA)) return &o->nvcc;
  if (has_lang(o, LANG_CXX)) return &o->cxx;
  return &o->cc;
}

/* Finds `t` and asks it for its version, which is part of the key. */
static kc_status* tool_prepare(build_tool* t, const char* needed_by) {
  if (t->path) return NULL;
  kc_status* st = cli_find_program(t->name, t->role, t->option, &t->path);
  if (st) return kc_status_add_context(st, "%s", needed_by);
  char* argv[] = {t->path, "--version", NULL};
  int exit_code = 0;
  st = cli_run_capture(argv, &t->version, &exit_code);
  if (!st && exit_code != 0) {
    st = kc_status_create(KC_FAILED_PRECONDITION,
                          "%s %s: '--version' failed (exit status %d): %s",
                          t->role, CLI_QS(t->path), exit_code, t->version);
  }
  return st;
}

static kc_status* tools_prepare(build_options* o) {
  kc_status* st = NULL;
  for (size_t i = 0; !st && i < o->num_sources; ++i) {
    const build_source* s = &o->sources[i];
    char why[KC_QUOTED_CAP + 16];
    snprintf(why, sizeof why, "compiling %s", CLI_QS(s->path));
    if (s->lang == LANG_C) st = tool_prepare(&o->cc, why);
    if (s->lang == LANG_CXX) st = tool_prepare(&o->cxx, why);
    if (s->lang == LANG_CUDA) st = tool_prepare(&o->nvcc, why);
  }
  if (!st) st = tool_prepare(linker_of(o), "to link");
  return st;
}

static const char* base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void hash_words(cli_sha256* h, const cli_argv* words) {
  uint64_t n = words->count;
  cli_sha256_field(h, &n, sizeof n);
  for (size_t i = 0; i < words->count; ++i) cli_sha256_string(h, words->items[i]);
}

/* The key: what could change the plugin. The sources by their names (not
 * their directories) and bytes, so that the same text built from another
 * place is found. */
static kc_status* build_key(build_options* o, const char* include_dir,
                            char out_hex[65]) {
  cli_sha256 h;
  cli_sha256_init(&h);
  cli_sha256_string(&h, BUILD_KEY_VERSION);
  cli_sha256_string(&h, kc_version_string());
  size_t size = strlen(include_dir) + sizeof "/kcall";
  char* headers = malloc(size);
  if (!headers) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  snprintf(headers, size, "%s/kcall", include_dir);
  kc_status* st = cli_sha256_dir(&h, headers);
  free(headers);
  if (st) return st;
  cli_sha256_string(&h, o->name);
  build_tool* tools[] = {&o->cc, &o->cxx, &o->nvcc};
  for (size_t i = 0; i < 3; ++i) {
    cli_sha256_string(&h, tools[i]->path ? tools[i]->path : "");
    cli_sha256_string(&h, tools[i]->version ? tools[i]->version : "");
  }
  hash_words(&h, &o->flags);
  hash_words(&h, &o->nvcc_flags);
  for (size_t i = 0; !st && i < o->num_sources; ++i) {
    uint8_t lang = (uint8_t)o->sources[i].lang;
    cli_sha256_field(&h, &lang, 1);
    cli_sha256_string(&h, base_name(o->sources[i].path));
    st = cli_sha256_file(&h, o->sources[i].path);
  }
  if (st) return st;
  uint8_t digest[CLI_SHA256_SIZE];
  cli_sha256_final(&h, digest);
  cli_sha256_hex(digest, out_hex);
  return NULL;
}

/* ---- compiling ------------------------------------------------------------- */

static void print_command(const cli_argv* a) {
  fputs("+", stderr);
  for (size_t i = 0; i < a->count; ++i) fprintf(stderr, " %s", a->items[i]);
  fputc('\n', stderr);
}

/* Runs a compiler; a failure carries what it printed. `what` says what it
 * was doing ("compiling 'x.c'"). */
static kc_status* run_tool(const build_options* o, const build_tool* t,
                           const cli_argv* a, const char* what) {
  if (o->verbose) print_command(a);
  char* output = NULL;
  int exit_code = 0;
  kc_status* st = cli_run_capture(a->items, &output, &exit_code);
  if (st) {
    free(output);
    return kc_status_add_context(st, "%s", what);
  }
  if (exit_code != 0) {
    size_t n = strlen(output);
    while (n > 0 && output[n - 1] == '\n') output[--n] = '\0';
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "%s failed: %s %s exited with status %d%s%s", what,
                          t->role, CLI_QS(t->path), exit_code,
                          n ? ":\n" : " and printed nothing", output);
  } else if (o->verbose && *output) {
    fputs(output, stderr);
  }
  free(output);
  return st;
}

static kc_status* compile_one(const build_options* o, const build_source* s,
                              const char* include_dir, const char* object) {
  const build_tool* t = s->lang == LANG_C     ? &o->cc
                        : s->lang == LANG_CXX ? &o->cxx
                                              : &o->nvcc;
  cli_argv a = {0};
  kc_status* st = cli_argv_add(&a, t->path);
  if (!st) st = cli_argv_add_words(&a, "-c -O2");
  if (!st && s->lang == LANG_CXX) st = cli_argv_add(&a, "-std=c++17");
  if (!st && s->lang == LANG_CUDA) {
    st = cli_argv_add_words(&a, "-std=c++17 -Xcompiler=-fPIC,-fvisibility=hidden");
  } else if (!st) {
    st = cli_argv_add_words(&a, "-fPIC -fvisibility=hidden");
  }
  if (!st) st = cli_argv_addf(&a, "-I%s", include_dir);
  const cli_argv* flags = s->lang == LANG_CUDA ? &o->nvcc_flags : &o->flags;
  for (size_t i = 0; !st && i < flags->count; ++i) st = cli_argv_add(&a, flags->items[i]);
  if (!st) st = cli_argv_add(&a, s->path);
  if (!st) st = cli_argv_add(&a, "-o");
  if (!st) st = cli_argv_add(&a, object);
  if (!st) {
    char what[KC_QUOTED_CAP + 16];
    snprintf(what, sizeof what, "compiling %s", CLI_QS(s->path));
    st = run_tool(o, t, &a, what);
  }
  cli_argv_deinit(&a);
  return st;
}

static kc_status* link_all(build_options* o, const cli_argv* objects,
                           const char* output) {
  build_tool* t = linker_of(o);
  bool nvcc = t == &o->nvcc;
  cli_argv a = {0};
  kc_status* st = cli_argv_add(&a, t->path);
  /* The plugin links nothing of kcall: an undefined symbol is an error
   * now rather than when it is loaded. */
  if (!st) st = cli_argv_add_words(&a, nvcc ? "-shared" : "-shared -Wl,--no-undefined");
  if (!st) st = cli_argv_add(&a, "-o");
  if (!st) st = cli_argv_add(&a, output);
  for (size_t i = 0; !st && i < objects->count; ++i) st = cli_argv_add(&a, objects->items[i]);
  const cli_argv* flags = nvcc ? &o->nvcc_flags : &o->flags;
  for (size_t i = 0; !st && i < flags->count; ++i) st = cli_argv_add(&a, flags->items[i]);
  /* The math library, as `cc` users expect it: a kernel calling expf
   * links without being told to. */
  if (!st) st = cli_argv_add(&a, "-lm");
  if (!st) st = run_tool(o, t, &a, "linking");
  cli_argv_deinit(&a);
  return st;
}

/* Removes the scratch directory and what is in it (objects, the output
 * when it was not moved). */
static void remove_scratch(const char* dir, const cli_argv* files) {
  for (size_t i = 0; i < files->count; ++i) unlink(files->items[i]);
  rmdir(dir);
}

/* Compiles and links into a scratch directory beside `final`, then renames
 * the result to `final`: readers see no file or a whole one. */
static kc_status* build_into(build_options* o, const char* cache_dir,
                             const char* include_dir, const char* final) {
  size_t size = strlen(cache_dir) + strlen(o->name) + 32;
  char* scratch = malloc(size);
  if (!scratch) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  snprintf(scratch, size, "%s/.tmp-%s-XXXXXX", cache_dir, o->name);
  if (!mkdtemp(scratch)) {
    kc_status* st = cli_errno_status(errno, "cannot create directory", scratch);
    free(scratch);
    return st;
  }
  cli_argv objects = {0};
  cli_argv made = {0}; /* every file the scratch directory may hold */
  kc_status* st = NULL;
  for (size_t i = 0; !st && i < o->num_sources; ++i) {
    if (o->sources[i].lang == LANG_HEADER) continue;
    st = cli_argv_addf(&objects, "%s/%zu.o", scratch, i);
    if (!st) st = cli_argv_add(&made, objects.items[objects.count - 1]);
    if (!st) {
      st = compile_one(o, &o->sources[i], include_dir,
                       objects.items[objects.count - 1]);
    }
  }
  if (!st) st = cli_argv_addf(&made, "%s/lib%s.so", scratch, o->name);
  if (!st) st = link_all(o, &objects, made.items[made.count - 1]);
  if (!st && rename(made.items[made.count - 1], final) != 0) {
    st = cli_errno_status(errno, "cannot rename the plugin to", final);
  }
  remove_scratch(scratch, &made);
  cli_argv_deinit(&made);
  cli_argv_deinit(&objects);
  free(scratch);
  return st;
}

static bool file_exists(const char* path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Builds `final` unless it is there, holding the key's lock meanwhile. */
static kc_status* build_locked(build_options* o, const char* cache_dir,
                               const char* include_dir, const char* final,
                               const char* lock_path) {
  int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return cli_errno_status(errno, "cannot open the lock file", lock_path);
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      kc_status* st = cli_errno_status(errno, "cannot lock", lock_path);
      close(fd);
      return st;
    }
  }
  kc_status* st = NULL;
  if (file_exists(final)) {
    if (o->verbose) fprintf(stderr, "kcall: %s was built meanwhile\n", CLI_QS(o->name));
  } else {
    st = build_into(o, cache_dir, include_dir, final);
    if (!st && o->verbose) fprintf(stderr, "kcall: built %s\n", CLI_QS(o->name));
  }
  close(fd); /* releases the lock */
  return st;
}

static kc_status* build(build_options* o) {
  char* include_dir = NULL;
  char* cache_dir = NULL;
  char* final = NULL;
  char* lock_path = NULL;
  char key[65];
  kc_status* st = cli_kcall_include_dir(&include_dir);
  if (!st) st = tools_prepare(o);
  if (!st) st = build_key(o, include_dir, key);
  if (!st) st = cli_cache_dir(o->cache_dir, &cache_dir);
  if (!st) {
    /* Printed, and dlopened later: a whole path. */
    char* real = realpath(cache_dir, NULL);
    if (real) {
      free(cache_dir);
      cache_dir = real;
    }
    size_t size = strlen(cache_dir) + strlen(o->name) + 64;
    final = malloc(size);
    lock_path = malloc(size);
    if (!final || !lock_path) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      /* 128 bits of the key name the file. */
      snprintf(final, size, "%s/lib%s-%.32s.so", cache_dir, o->name, key);
      snprintf(lock_path, size, "%s/lib%s-%.32s.lock", cache_dir, o->name, key);
    }
  }
  if (!st) {
    if (file_exists(final)) {
      if (o->verbose) fprintf(stderr, "kcall: %s is up to date\n", CLI_QS(o->name));
    } else {
      st = build_locked(o, cache_dir, include_dir, final, lock_path);
    }
  }
  if (!st) puts(final);
  free(lock_path);
  free(final);
  free(cache_dir);
  free(include_dir);
  return kc_status_add_context(st, "building plugin %s", CLI_QS(o->name));
}

static int run_build(int argc, char** argv) {
  build_options o = {
      .cc = {.name = "cc", .option = "--cc", .role = "C compiler"},
      .cxx = {.name = "c++", .option = "--cxx", .role = "C++ compiler"},
      .nvcc = {.name = "nvcc", .option = "--nvcc", .role = "CUDA compiler"},
  };
  int exit_code = parse_options(argc, argv, &o);
  if (exit_code < 0) {
    kc_status* st = build(&o);
    exit_code = st ? cli_report_status(st) : CLI_EXIT_OK;
  }
  build_tool* tools[] = {&o.cc, &o.cxx, &o.nvcc};
  for (size_t i = 0; i < 3; ++i) {
    free(tools[i]->path);
    free(tools[i]->version);
  }
  cli_argv_deinit(&o.flags);
  cli_argv_deinit(&o.nvcc_flags);
  free(o.sources);
  return exit_code;
}

const cli_command cli_cmd_build = {
    "build",
    "compile a plugin's sources, cached, and print its path",
    "usage: kcall build [OPTION]... NAME SOURCE...\n"
    "\n"
    "Compiles the C (.c), C++ (.cc .cpp .cxx) and CUDA (.cu) SOURCEs into\n"
    "one plugin, libNAME-KEY.so in the cache directory, and prints its path:\n"
    "  kcall call --plugin \"$(kcall build mylib mylib.c)\" mylib.add 2 3\n"
    "The sources see kcall's headers (<kcall/abi.h>, <kcall/plugin_api.h>,\n"
    "<kcall/kcall.hpp>) and link nothing of kcall, as a plugin should.\n"
    "\n"
    "KEY is a SHA-256 of everything that goes in: the sources' names and\n"
    "bytes, the flags, each compiler's path and `--version`, kcall's version\n"
    "and its headers. The plugin is built again only when one of them\n"
    "changed. Headers (.h .hh .hpp .hxx .cuh .inc) named as SOURCEs are\n"
    "hashed, not compiled: name those the sources include, so that a change\n"
    "to them is seen. Several processes may build the same plugin at once:\n"
    "one builds it, under a lock, and the others wait and use it.\n"
    "\n"
    "Options (anywhere before `--`):\n"
    "  --flags \"FLAGS\"       flags for the C and C++ compilers and the link,\n"
    "                        split at blanks (may be repeated)\n"
    "  --flag FLAG           one such flag, kept whole (may be repeated)\n"
    "  --nvcc-flags \"FLAGS\"  flags for nvcc, which compiles the .cu sources\n"
    "                        and, when there are any, links\n"
    "  --cc CC               the C compiler (default cc)\n"
    "  --cxx CXX             the C++ compiler (default c++)\n"
    "  --nvcc NVCC           the CUDA compiler (default nvcc)\n"
    "  --cache-dir DIR       where plugins are kept (default $KCALL_CACHE_DIR,\n"
    "                        else $XDG_CACHE_HOME/kcall, else ~/.cache/kcall)\n"
    "  -v, --verbose         print the commands run, and whether the plugin\n"
    "                        was up to date, to standard error\n"
    "  -h, --help            print this text\n"
    "\n"
    "Each source is compiled with -O2 -fPIC -fvisibility=hidden (C++ and\n"
    "CUDA also -std=c++17), then FLAGS, which may override them. kcall's\n"
    "include directory is PREFIX/include beside this tool (PREFIX/bin), or\n"
    "$KCALL_INCLUDE_DIR when set.\n"
    "\n"
    "Errors: a compiler that fails gives status 1 and its own message after\n"
    "\"kcall: error: INVALID_ARGUMENT: building plugin 'NAME': compiling\n"
    "'SOURCE' failed: ...\"; a compiler that is not there, NOT_FOUND.\n",
    run_build,
};
