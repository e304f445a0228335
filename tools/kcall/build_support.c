/*
 * build_support.c — the parts of `kcall build` that are not about
 * compiling: command lines, running programs, finding them and kcall's
 * headers, the cache directory and hashing files.
 */
#define _GNU_SOURCE /* readlink, realpath, posix_spawn, environ */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build.h"

extern char** environ;

static kc_status* out_of_memory(void) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- command lines -------------------------------------------------------- */

static kc_status* argv_push(cli_argv* a, char* arg, bool owned) {
  if (a->count + 2 > a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 16;
    char** items = realloc(a->items, cap * sizeof *items);
    if (items) a->items = items;
    bool* own = items ? realloc(a->owned, cap * sizeof *own) : NULL;
    if (!own) {
      if (owned) free(arg);
      return out_of_memory();
    }
    a->owned = own;
    a->cap = cap;
  }
  a->owned[a->count] = owned;
  a->items[a->count++] = arg;
  a->items[a->count] = NULL;
  return NULL;
}

kc_status* cli_argv_add(cli_argv* a, const char* arg) {
  return argv_push(a, (char*)arg, false);
}

kc_status* cli_argv_addf(cli_argv* a, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  char* text = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (text) vsnprintf(text, (size_t)n + 1, fmt, args);
  va_end(args);
  if (!text) return out_of_memory();
  return argv_push(a, text, true);
}

kc_status* cli_argv_add_words(cli_argv* a, const char* words) {
  const char* p = words;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n') ++p;
    if (!*p) return NULL;
    const char* end = p;
    while (*end && *end != ' ' && *end != '\t' && *end != '\n') ++end;
    kc_status* st = cli_argv_addf(a, "%.*s", (int)(end - p), p);
    if (st) return st;
    p = end;
  }
}

void cli_argv_deinit(cli_argv* a) {
  for (size_t i = 0; i < a->count; ++i) {
    if (a->owned[i]) free(a->items[i]);
  }
  free(a->items);
  free(a->owned);
  *a = (cli_argv){0};
}

/* ---- running programs ----------------------------------------------------- */

/* Reads `fd` to its end into a malloc'd, NUL-terminated buffer. */
static kc_status* read_all(int fd, char** out_text) {
  size_t size = 0, cap = 4096;
  char* text = malloc(cap);
  if (!text) return out_of_memory();
  for (;;) {
    if (cap - size < 1024) {
      char* grown = realloc(text, 2 * cap);
      if (!grown) {
        free(text);
        return out_of_memory();
      }
      text = grown;
      cap *= 2;
    }
    ssize_t n = read(fd, text + size, cap - size - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size += (size_t)n;
  }
  text[size] = '\0';
  *out_text = text;
  return NULL;
}

kc_status* cli_run_capture(char* const argv[], char** out_text, int* out_exit) {
  *out_text = NULL;
  *out_exit = -1;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return cli_errno_status(errno, "cannot run", argv[0]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  pid_t pid;
  int err = posix_spawn(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (err != 0) {
    close(pipe_fds[0]);
    return cli_errno_status(err, "cannot run", argv[0]);
  }
  kc_status* st = read_all(pipe_fds[0], out_text);
  close(pipe_fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) {
      free(*out_text);
      *out_text = NULL;
      return cli_errno_status(errno, "cannot wait for", argv[0]);
    }
  }
  if (WIFEXITED(wstatus)) {
    *out_exit = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    *out_exit = 128 + WTERMSIG(wstatus);
  }
  return st;
}

/* ---- finding programs and headers ----------------------------------------- */

static bool is_executable_file(const char* path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

static char* str_dup(const char* s) {
  size_t n = strlen(s) + 1;
  char* copy = malloc(n);
  if (copy) memcpy(copy, s, n);
  return copy;
}

kc_status* cli_find_program(const char* name, const char* role,
                            const char* option, char** out_path) {
  *out_path = NULL;
  if (!*name) {
    return kc_status_create(KC_INVALID_ARGUMENT, "the %s given with %s is empty",
                            role, option);
  }
  if (strchr(name, '/')) {
    if (!is_executable_file(name)) {
      return kc_status_create(KC_NOT_FOUND,
                              "no %s: %s is not an executable file (choose "
                              "one with %s)", role, CLI_QS(name), option);
    }
    *out_path = str_dup(name);
    return *out_path ? NULL : out_of_memory();
  }
  const char* path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char* p = path;;) {
    const char* end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == 0) {
      p = ".";  /* an empty entry is the current directory */
      len = 1;
    }
    size_t size = len + 1 + strlen(name) + 1;
    char* candidate = malloc(size);
    if (!candidate) return out_of_memory();
    snprintf(candidate, size, "%.*s/%s", (int)len, p, name);
    if (is_executable_file(candidate)) {
      *out_path = candidate;
      return NULL;
    }
    free(candidate);
    if (!end) break;
    p = end + 1;
  }
  return kc_status_create(KC_NOT_FOUND,
                          "no %s: %s is not on PATH (choose one with %s)", role,
                          CLI_QS(name), option);
}

static bool holds_kcall_headers(const char* dir) {
  size_t size = strlen(dir) + sizeof "/kcall/abi.h";
  char* path = malloc(size);
  if (!path) return false;
  snprintf(path, size, "%s/kcall/abi.h", dir);
  struct stat sb;
  bool found = stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
  free(path);
  return found;
}

/* The install's include directory as seen from its bin directory. */
#ifndef KCALL_BIN_TO_INCLUDE
#define KCALL_BIN_TO_INCLUDE "../include"
#endif

/* PREFIX/include for the tool at PREFIX/bin/kcall, or NULL. */
static char* include_beside_tool(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = '\0';
  char* slash = strrchr(exe, '/');
  if (!slash) return NULL;
  *slash = '\0';
  size_t size = strlen(exe) + sizeof "/" KCALL_BIN_TO_INCLUDE;
  char* dir = malloc(size);
  if (!dir) return NULL;
  snprintf(dir, size, "%s/" KCALL_BIN_TO_INCLUDE, exe);
  /* Shown in messages and passed to the compiler: without "..". */
  char* real = realpath(dir, NULL);
  if (real) {
    free(dir);
    dir = real;
  }
  return dir;
}

kc_status* cli_kcall_include_dir(char** out_dir) {
  *out_dir = NULL;
  const char* env = getenv("KCALL_INCLUDE_DIR");
  if (env && *env) {
    if (!holds_kcall_headers(env)) {
      return kc_status_create(KC_NOT_FOUND,
                              "KCALL_INCLUDE_DIR=%s holds no kcall/abi.h",
                              CLI_QS(env));
    }
    *out_dir = str_dup(env);
    return *out_dir ? NULL : out_of_memory();
  }
  char* beside = include_beside_tool();
  if (beside && holds_kcall_headers(beside)) {
    *out_dir = beside;
    return NULL;
  }
#ifdef KCALL_SOURCE_INCLUDE_DIR
  if (holds_kcall_headers(KCALL_SOURCE_INCLUDE_DIR)) {
    free(beside);
    *out_dir = str_dup(KCALL_SOURCE_INCLUDE_DIR);
    return *out_dir ? NULL : out_of_memory();
  }
#endif
  kc_status* st = kc_status_create(
      KC_NOT_FOUND,
      "cannot find kcall's headers: no kcall/abi.h in %s (beside this "
      "tool); set KCALL_INCLUDE_DIR to the directory holding kcall/",
      beside ? CLI_QS(beside) : "the include directory");
  free(beside);
  return st;
}

kc_status* cli_cache_dir(const char* option, char** out_dir) {
  *out_dir = NULL;
  const char* base = option;
  const char* suffix = "";
  if (!base) {
    const char* env = getenv("KCALL_CACHE_DIR");
    const char* xdg = getenv("XDG_CACHE_HOME");
    const char* home = getenv("HOME");
    if (env && *env) {
      base = env;
    } else if (xdg && *xdg) {
      base = xdg;
      suffix = "/kcall";
    } else if (home && *home) {
      base = home;
      suffix = "/.cache/kcall";
    } else {
      return kc_status_create(KC_FAILED_PRECONDITION,
                              "no cache directory: none of KCALL_CACHE_DIR, "
                              "XDG_CACHE_HOME and HOME is set (give one with "
                              "--cache-dir)");
    }
  }
  if (!*base) {
    return kc_status_create(KC_INVALID_ARGUMENT, "--cache-dir is empty");
  }
  size_t size = strlen(base) + strlen(suffix) + 1;
  char* dir = malloc(size);
  if (!dir) return out_of_memory();
  snprintf(dir, size, "%s%s", base, suffix);
  kc_status* st = kc_status_add_context(cli_dir_prepare(dir), "the cache directory");
  if (st) {
    free(dir);
    return st;
  }
  *out_dir = dir;
  return NULL;
}

/* ---- hashing --------------------------------------------------------------- */

void cli_sha256_field(cli_sha256* h, const void* data, size_t size) {
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = (uint8_t)((uint64_t)size >> (8 * i));
  cli_sha256_update(h, len, sizeof len);
  cli_sha256_update(h, data, size);
}

void cli_sha256_string(cli_sha256* h, const char* text) {
  cli_sha256_field(h, text, strlen(text));
}

kc_status* cli_sha256_file(cli_sha256* h, const char* path) {
  FILE* f = NULL;
  kc_status* st = cli_file_open_read(path, "a file", &f);
  if (st) return st;
  /* Hashed on its own, then its length and digest as two fields: the
   * length is known only once it is read. */
  cli_sha256 body;
  cli_sha256_init(&body);
  unsigned char buf[65536];
  size_t n;
  uint64_t size = 0;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    cli_sha256_update(&body, buf, n);
    size += n;
  }
  bool failed = ferror(f) != 0;
  fclose(f);
  if (failed) return cli_errno_status(EIO, "cannot read", path);
  uint8_t digest[CLI_SHA256_SIZE];
  cli_sha256_final(&body, digest);
  cli_sha256_field(h, &size, sizeof size);
  cli_sha256_field(h, digest, sizeof digest);
  return NULL;
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

kc_status* cli_sha256_dir(cli_sha256* h, const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return cli_errno_status(errno, "cannot read directory", dir);
  cli_argv names = {0};
  kc_status* st = NULL;
  struct dirent* e;
  while (!st && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    st = cli_argv_addf(&names, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (!st && names.count) {
    qsort(names.items, names.count, sizeof *names.items, compare_names);
  }
  for (size_t i = 0; !st && i < names.count; ++i) {
    struct stat sb;
    if (stat(names.items[i], &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    cli_sha256_string(h, strrchr(names.items[i], '/') + 1);
    st = cli_sha256_file(h, names.items[i]);
  }
  cli_argv_deinit(&names);
  return st;
}
