/*
 * xla_ffi.c — `--xla-ffi` and `--xla-ffi-type`: XLA FFI handlers (and the
 * user types their state is made of) taken straight from a shared library
 * built with XLA's headers, with no kcall plugin around them.
 *
 *   --xla-ffi LIB:SYMBOL[=TARGET]
 *   --xla-ffi LIB:STAGE:SYMBOL,STAGE:SYMBOL...=TARGET
 *   --xla-ffi-type LIB:TYPE_ID[:TYPE_INFO]=NAME
 *
 * A library stays loaded until the process exits: targets registered from
 * it point into it.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plugin/dlopen_file.h"

#define STAGES "instantiate, prepare, initialize or execute"

/* "LIB:REST[=NAME]" split in place into its parts (`name` NULL without
 * '='). LIB is up to the first ':'; NAME after the last '='. */
typedef struct xla_spec {
  char* text; /* owned: the copy the parts point into */
  const char* lib;
  char* rest;
  const char* name;
} xla_spec;

static bool split_spec(const char* spec, xla_spec* out) {
  memset(out, 0, sizeof *out);
  out->text = strdup(spec);
  if (!out->text) return false;
  char* colon = strchr(out->text, ':');
  if (!colon) return true;
  *colon = '\0';
  out->lib = out->text;
  out->rest = colon + 1;
  char* eq = strrchr(out->rest, '=');
  if (eq) {
    *eq = '\0';
    out->name = eq + 1;
  }
  return true;
}

/* A symbol name: what dlsym can find (C identifiers, and "()" after one
 * for --xla-ffi-type). */
static bool is_symbol(const char* s, bool call_ok) {
  size_t n = strlen(s);
  if (call_ok && n > 2 && strcmp(s + n - 2, "()") == 0) n -= 2;
  if (n == 0 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (size_t i = 0; i < n; ++i) {
    char c = s[i];
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9'))) {
      return false;
    }
  }
  return true;
}

/* The stage a "STAGE:" prefix names (0..3, XLA's order), or -1. */
static int stage_index(const char* s, size_t n) {
  static const char* const names[] = {"instantiate", "prepare", "initialize", "execute"};
  for (int i = 0; i < 4; ++i) {
    if (strlen(names[i]) == n && strncmp(s, names[i], n) == 0) return i;
  }
  return -1;
}

/* Splits "SYM" or "STAGE:SYM,STAGE:SYM,..." into one symbol per stage
 * (in place). Returns NULL, or what is wrong. */
static const char* split_stages(char* rest, char* out[4]) {
  memset(out, 0, 4 * sizeof *out);
  if (!strchr(rest, ':') && !strchr(rest, ',')) {
    if (!is_symbol(rest, false)) return "expected a symbol after ':'";
    out[3] = rest;
    return NULL;
  }
  for (char* item = rest; item;) {
    char* comma = strchr(item, ',');
    if (comma) *comma = '\0';
    char* colon = strchr(item, ':');
    int stage = colon ? stage_index(item, (size_t)(colon - item)) : -1;
    if (stage < 0) return "expected STAGE:SYMBOL, STAGE one of " STAGES;
    if (out[stage]) return "a stage is given twice";
    if (!is_symbol(colon + 1, false)) return "expected a symbol after STAGE:";
    out[stage] = colon + 1;
    item = comma ? comma + 1 : NULL;
  }
  return out[3] ? NULL : "the execute stage is missing";
}

int cli_xla_ffi_add(cli_xla_ffi* x, const cli_command* command, const char* option,
                    const char* spec) {
  bool is_type = strcmp(option, "--xla-ffi-type") == 0;
  xla_spec s;
  if (!split_spec(spec, &s)) {
    return cli_report_status(kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
  }
  const char* problem = NULL;
  if (!s.lib) {
    problem = is_type ? "no ':TYPE_ID' after the library" : "no ':SYMBOL' after the library";
  } else if (!s.lib[0]) {
    problem = "expected a library path before ':'";
  } else if (s.name && !s.name[0]) {
    problem = "expected a name after '='";
  } else if (is_type) {
    char* colon = strchr(s.rest, ':');
    if (colon) *colon = '\0';
    if (!is_symbol(s.rest, true) || (colon && !is_symbol(colon + 1, true))) {
      problem = "expected TYPE_ID_SYMBOL[:TYPE_INFO_SYMBOL] after the library";
    } else if (!s.name) {
      problem = "expected '=NAME', the type's name";
    }
  } else {
    char* stages[4];
    problem = split_stages(s.rest, stages);
    if (!problem && !s.name && (stages[0] || stages[1] || stages[2])) {
      problem = "expected '=TARGET' after several stages";
    }
  }
  free(s.text);
  if (problem) {
    return cli_usage_error(command,
                           "%s %s: %s (expected %s)", option, CLI_QS(spec), problem,
                           is_type ? "LIB.so:TYPE_ID[:TYPE_INFO]=NAME"
                                   : "LIB.so:SYMBOL[=TARGET] or "
                                     "LIB.so:STAGE:SYMBOL,...=TARGET");
  }
  const char*** list = is_type ? &x->types : &x->handlers;
  size_t* count = is_type ? &x->num_types : &x->num_handlers;
  const char** grown = realloc(*list, (*count + 1) * sizeof *grown);
  if (!grown) {
    return cli_report_status(kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
  }
  grown[(*count)++] = spec;
  *list = grown;
  return -1;
}

/* dlopen's handle for `lib`, loaded once and kept for good; the file is
 * checked first (a truncated library is refused, not a SIGBUS). */
static kc_status* open_library(const char* option, const char* lib, void** out) {
  kc_status* st = kc__dlopen_file(lib, out);
  if (!st) return NULL;
  kc_status* wrapped = kc_status_create(kc_status_get_code(st), "%s: cannot load %s: %s",
                                        option, CLI_QS(lib), kc_status_get_message(st));
  kc_status_destroy(st);
  return wrapped;
}

/* The address of `symbol` in `handle`; "NAME()" calls NAME, a function
 * returning the address (XLA_FFI_DECLARE_TYPE_ID_SYMBOL's kind). */
static kc_status* find_symbol(const char* option, void* handle, const char* lib,
                              const char* symbol, void** out) {
  size_t n = strlen(symbol);
  bool call = n > 2 && strcmp(symbol + n - 2, "()") == 0;
  char name[256];
  size_t len = call ? n - 2 : n;
  if (len >= sizeof name) {
    /* Cut short, it would name another symbol. */
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: symbol %s: expected at most %zu bytes, got %zu",
                            option, CLI_QS(symbol), sizeof name - 1, len);
  }
  snprintf(name, sizeof name, "%.*s", (int)len, symbol);
  dlerror();
  void* addr = dlsym(handle, name);
  if (!addr) {
    return kc_status_create(KC_NOT_FOUND, "%s: no symbol %s in %s", option, CLI_QS(name),
                            CLI_QS(lib));
  }
  if (call) {
    void* (*fn)(void);
    memcpy(&fn, &addr, sizeof fn); /* data to function pointer (POSIX) */
    addr = fn();
    if (!addr) {
      return kc_status_create(KC_FAILED_PRECONDITION,
                              "%s: the function %s in %s returned NULL", option,
                              CLI_QS(name), CLI_QS(lib));
    }
  }
  *out = addr;
  return NULL;
}

static kc_status* register_type(const char* spec) {
  xla_spec s;
  if (!split_spec(spec, &s)) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  char* info_symbol = strchr(s.rest, ':');
  if (info_symbol) *info_symbol++ = '\0';
  void* handle = NULL;
  void* type_id = NULL;
  void* type_info = NULL;
  kc_status* st = open_library("--xla-ffi-type", s.lib, &handle);
  if (!st) st = find_symbol("--xla-ffi-type", handle, s.lib, s.rest, &type_id);
  if (!st && info_symbol) {
    st = find_symbol("--xla-ffi-type", handle, s.lib, info_symbol, &type_info);
  }
  if (!st) {
    st = kc_status_add_context(kc_xla_ffi_type_register(kc_sv(s.name), type_id, type_info),
                               "--xla-ffi-type %s", CLI_QS(spec));
  }
  free(s.text);
  return st;
}

static kc_status* register_handlers(const char* spec) {
  xla_spec s;
  if (!split_spec(spec, &s)) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  char* stages[4];
  split_stages(s.rest, stages); /* checked when the option was read */
  void* handle = NULL;
  kc_status* st = open_library("--xla-ffi", s.lib, &handle);
  void* fns[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < 4 && !st; ++i) {
    if (stages[i]) st = find_symbol("--xla-ffi", handle, s.lib, stages[i], &fns[i]);
  }
  if (!st) {
    kc_xla_ffi_handlers h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    kc_xla_ffi_handler_fn* slots[4] = {&h.instantiate, &h.prepare, &h.initialize, &h.execute};
    for (int i = 0; i < 4; ++i) {
      if (fns[i]) memcpy(slots[i], &fns[i], sizeof fns[i]); /* data to function (POSIX) */
    }
    const char* target = s.name ? s.name : stages[3];
    st = kc_status_add_context(
        kc_xcall_register_xla_ffi(kc_sv(target), KC_PLATFORM_HOST, &h, 0),
        "--xla-ffi %s", CLI_QS(spec));
  }
  free(s.text);
  return st;
}

kc_status* cli_xla_ffi_load(const cli_xla_ffi* x) {
  kc_status* st = NULL;
  /* Types first: a handler that makes state names its type when it is
   * registered. */
  for (size_t i = 0; i < x->num_types && !st; ++i) st = register_type(x->types[i]);
  for (size_t i = 0; i < x->num_handlers && !st; ++i) st = register_handlers(x->handlers[i]);
  return st;
}

void cli_xla_ffi_deinit(cli_xla_ffi* x) {
  free(x->handlers);
  free(x->types);
  memset(x, 0, sizeof *x);
}
