/* Status objects: code, message and a context chain. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"

struct kc_status {
  kc_status_code code;
  /* Atomic: NULL until a deferred message is first read. */
  char* message;
  /* Context strings in the order they were added: innermost first. */
  char** context;
  size_t context_count;
  /* A deferred message: written by `deferred(ctx)` when first read. */
  kc__message_fn deferred;
  max_align_t ctx[];
};

static char kc__oom_message[] = "out of memory while reporting an error";
static kc_status kc__oom_status = {KC_RESOURCE_EXHAUSTED, kc__oom_message,
                                   NULL, 0, NULL};

kc_status* kc__status_oom(void) { return &kc__oom_status; }

static const char* const kc__code_names[] = {
#define KC__CODE_NAME(name, value) [value] = #name,
    KC_STATUS_CODES(KC__CODE_NAME)
#undef KC__CODE_NAME
};

const char* kc_status_code_name(kc_status_code code) {
  if ((unsigned)code >= KC__ARRAY_SIZE(kc__code_names)) return "UNKNOWN";
  return kc__code_names[code];
}

/* vasprintf into kcall's memory (kc__malloc); NULL when out of memory. */
static char* kc__vformat(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(NULL, 0, fmt ? fmt : "", copy);
  va_end(copy);
  if (n < 0) n = 0;
  char* text = kc__malloc((size_t)n + 1);
  if (!text) return NULL;
  vsnprintf(text, (size_t)n + 1, fmt ? fmt : "", args);
  return text;
}

kc_status* kc_status_create_v(kc_status_code code, const char* fmt,
                              va_list args) {
  if (code == KC_OK) return NULL;
  if ((unsigned)code >= KC__ARRAY_SIZE(kc__code_names)) code = KC_UNKNOWN;
  kc_status* s = kc__malloc(sizeof *s);
  if (!s) return kc__status_oom();
  s->message = kc__vformat(fmt, args);
  if (!s->message) {
    kc__free(s);
    return kc__status_oom();
  }
  s->code = code;
  s->context = NULL;
  s->context_count = 0;
  s->deferred = NULL;
  return s;
}

kc_status* kc__status_create_deferred(kc_status_code code, kc__message_fn fn,
                                      const void* ctx, size_t ctx_size) {
  if (code == KC_OK) return NULL;
  kc_status* s = kc__malloc(sizeof *s + ctx_size);
  if (!s) return kc__status_oom();
  s->code = code;
  s->message = NULL;
  s->context = NULL;
  s->context_count = 0;
  s->deferred = fn;
  if (ctx_size) memcpy(s->ctx, ctx, ctx_size);
  return s;
}

/* Writes a deferred message. Statuses are normally read by one thread, but
 * two readers at once are safe: the first message published wins. */
static const char* kc__status_resolve(kc_status* s) {
  char* text = s->deferred(s->ctx);
  if (!text) return kc__oom_message; /* the next read tries again */
  char* none = NULL;
  if (!__atomic_compare_exchange_n(&s->message, &none, text, false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    kc__free(text);
    return none;
  }
  return text;
}

kc_status* kc_status_create(kc_status_code code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  kc_status* s = kc_status_create_v(code, fmt, args);
  va_end(args);
  return s;
}

kc_status* kc_status_add_context_v(kc_status* status, const char* fmt,
                                   va_list args) {
  if (!status || status == &kc__oom_status) return status;
  char* text = kc__vformat(fmt, args);
  char** grown = text ? kc__realloc(status->context,
                                (status->context_count + 1) * sizeof(char*))
                      : NULL;
  if (!grown) {
    kc__free(text);
    kc_status_destroy(status);
    return kc__status_oom();
  }
  grown[status->context_count++] = text;
  status->context = grown;
  return status;
}

kc_status* kc_status_add_context(kc_status* status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  status = kc_status_add_context_v(status, fmt, args);
  va_end(args);
  return status;
}

kc_status_code kc_status_get_code(const kc_status* status) {
  return status ? status->code : KC_OK;
}

const char* kc_status_get_message(const kc_status* status) {
  if (!status) return "";
  const char* m = __atomic_load_n(&status->message, __ATOMIC_ACQUIRE);
  if (m) return m;
  return kc__status_resolve((kc_status*)(uintptr_t)status);
}

size_t kc_status_get_context_count(const kc_status* status) {
  return status ? status->context_count : 0;
}

const char* kc_status_get_context(const kc_status* status, size_t index) {
  if (!status || index >= status->context_count) return NULL;
  return status->context[status->context_count - 1 - index];
}

size_t kc_status_format(const kc_status* status, char* buf, size_t cap) {
  size_t len = 0;
  kc__appendf(buf, cap, &len, "%s", kc_status_code_name(kc_status_get_code(status)));
  if (status) {
    for (size_t i = 0; i < status->context_count; ++i) {
      kc__appendf(buf, cap, &len, ": %s", kc_status_get_context(status, i));
    }
    kc__appendf(buf, cap, &len, ": %s", kc_status_get_message(status));
  }
  return len;
}

void kc_status_destroy(kc_status* status) {
  if (!status || status == &kc__oom_status) return;
  for (size_t i = 0; i < status->context_count; ++i) kc__free(status->context[i]);
  kc__free(status->context);
  kc__free(status->message);
  kc__free(status);
}

/* ---- internal helpers -------------------------------------------------------- */

kc_status* kc__status_create_prefixed_v(kc_status_code code, const char* fmt,
                                        va_list args, const char* prefix_fmt, ...) {
  char* message = kc__vformat(fmt, args);
  va_list prefix_args;
  va_start(prefix_args, prefix_fmt);
  char* prefix = kc__vformat(prefix_fmt, prefix_args);
  va_end(prefix_args);
  kc_status* st = message && prefix ? kc_status_create(code, "%s: %s", prefix, message)
                                    : kc__status_oom();
  kc__free(message);
  kc__free(prefix);
  return st;
}

void kc__appendf(char* buf, size_t cap, size_t* len, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(*len < cap ? buf + *len : NULL, *len < cap ? cap - *len : 0,
                    fmt, args);
  va_end(args);
  if (n > 0) *len += (size_t)n;
}

/* Records `st` as the first error, after `label` and ": " when one is
 * given. Out of memory, the code is still recorded (without the text), so
 * that the builder cannot succeed. */
static void kc__first_error_record(kc__first_error* e, const kc_status* st,
                                   const char* label) {
  e->code = st->code;
  size_t skip = strlen(kc_status_code_name(st->code)) + 2; /* "CODE: " */
  size_t prefix = label ? strlen(label) + 2 : 0;
  size_t n = kc_status_format(st, NULL, 0) + 1;
  if (skip > n - 1) skip = n - 1;
  char* text = kc__malloc(prefix + n);
  if (!text) return;
  /* The replay adds the code back: keep the rest, after the label. */
  kc_status_format(st, text + prefix, n);
  memmove(text + prefix, text + prefix + skip, n - skip);
  if (label) {
    memcpy(text, label, prefix - 2);
    memcpy(text + prefix - 2, ": ", 2);
  }
  e->text = text;
}

kc_status* kc__first_error_note(kc__first_error* e, kc_status* st) {
  if (st && e->code == KC_OK) kc__first_error_record(e, st, NULL);
  return st;
}

kc_status* kc__first_error_note_at(kc__first_error* e, kc_status* st,
                                   const char* fmt, ...) {
  if (!st || e->code != KC_OK) return st;
  char label[256];
  va_list args;
  va_start(args, fmt);
  vsnprintf(label, sizeof label, fmt, args);
  va_end(args);
  kc__first_error_record(e, st, label);
  return st;
}

kc_status* kc__first_error_replay(const kc__first_error* e) {
  if (e->code == KC_OK) return NULL;
  return kc_status_create(e->code, "%s",
                          e->text ? e->text : "(the message was lost: out of memory)");
}

void kc__first_error_deinit(kc__first_error* e) {
  kc__free(e->text);
  e->text = NULL;
  e->code = KC_OK;
}
