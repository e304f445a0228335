/* MLIR's bytecode container, as a StableHLO portable artifact uses it
 * (bytecode versions 5 and 6), read into StableHLO text; the VHLO
 * dialect's own encodings are vhlo.c's (bytecode_internal.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/grow.h"
#include "program/program_internal.h"
#include "program/frontend/stablehlo/bytecode_internal.h"
#include "program/frontend/stablehlo/stablehlo_internal.h"

/* The sections of the container. */
enum {
  KC__BC_STRING = 0,
  KC__BC_DIALECT = 1,
  KC__BC_ATTR_TYPE = 2,
  KC__BC_ATTR_TYPE_OFFSET = 3,
  KC__BC_IR = 4,
  KC__BC_RESOURCE = 5,
  KC__BC_RESOURCE_OFFSET = 6,
  KC__BC_DIALECT_VERSIONS = 7,
  KC__BC_PROPERTIES = 8,
  KC__BC_NUM_SECTIONS = 9,
};

/* What an op's encoding holds besides its name and location. */
enum {
  KC__BC_HAS_ATTRS = 0x01,
  KC__BC_HAS_RESULTS = 0x02,
  KC__BC_HAS_OPERANDS = 0x04,
  KC__BC_HAS_SUCCESSORS = 0x08,
  KC__BC_HAS_REGIONS = 0x10,
  KC__BC_HAS_USE_LISTS = 0x20,
  KC__BC_HAS_PROPERTIES = 0x40,
};

/* The bytecode versions read: 5 brought properties (VHLO has used them
 * since StableHLO 0.15), 6 is the newest. */
enum { KC__BC_MIN_VERSION = 5, KC__BC_MAX_VERSION = 6 };

/* ---- messages and primitives ---------------------------------------------- */

kc_status* kc__bc_fail(const kc__bc* c, size_t pos, const char* fmt, ...) {
  (void)c;
  va_list args;
  va_start(args, fmt);
  kc_status* st = kc__status_create_prefixed_v(KC_INVALID_ARGUMENT, fmt, args,
                                               "StableHLO bytecode, byte %zu", pos);
  va_end(args);
  return st;
}

kc_status* kc__bc_unsupported(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  kc_status* st =
      kc__status_create_prefixed_v(KC_UNIMPLEMENTED, fmt, args, "StableHLO bytecode");
  va_end(args);
  return st;
}

static kc_status* kc__bc_short(const kc__bc* c, const kc__bc_cursor* cur, const char* what) {
  return kc__bc_fail(c, cur->pos, "expected %s, got the end of %s", what,
                     cur->end == c->size ? "the artifact" : "its section or entry");
}

kc_status* kc__bc_byte(const kc__bc* c, kc__bc_cursor* cur, const char* what, uint8_t* out) {
  *out = 0;
  if (cur->pos >= cur->end) return kc__bc_short(c, cur, what);
  *out = c->data[cur->pos++];
  return NULL;
}

/* PrefixVarInt: the low bits of the first byte, up to the first 1, count
 * the bytes that follow; all other bits are the value, little-endian. */
kc_status* kc__bc_varint(const kc__bc* c, kc__bc_cursor* cur, const char* what, uint64_t* out) {
  *out = 0;
  if (cur->pos >= cur->end) return kc__bc_short(c, cur, what);
  uint8_t first = c->data[cur->pos];
  unsigned extra = 0;
  while (extra < 8 && !(first >> extra & 1)) extra++;
  if (cur->end - cur->pos < 1 + (size_t)extra) return kc__bc_short(c, cur, what);
  /* A zero first byte: the eight bytes after it are the value. */
  const uint8_t* p = c->data + cur->pos + (extra == 8);
  uint64_t v = 0;
  for (unsigned i = 0; i < (extra == 8 ? 8u : extra + 1); ++i) v |= (uint64_t)p[i] << (8 * i);
  cur->pos += 1 + extra;
  *out = extra == 8 ? v : v >> (extra + 1);
  return NULL;
}

kc_status* kc__bc_svarint(const kc__bc* c, kc__bc_cursor* cur, const char* what, int64_t* out) {
  uint64_t v;
  *out = 0;
  KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, what, &v));
  uint64_t u = (v >> 1) ^ (~(v & 1) + 1); /* zigzag */
  memcpy(out, &u, sizeof u);
  return NULL;
}

kc_status* kc__bc_index(const kc__bc* c, kc__bc_cursor* cur, size_t limit, const char* what,
                        uint32_t* out) {
  size_t at = cur->pos;
  uint64_t v;
  *out = 0;
  KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, what, &v));
  if (v >= limit) {
    return kc__bc_fail(c, at, "expected %s (an index below %zu), got %llu", what, limit,
                       (unsigned long long)v);
  }
  *out = (uint32_t)v;
  return NULL;
}

kc_status* kc__bc_count(const kc__bc* c, kc__bc_cursor* cur, size_t min_bytes, const char* what,
                        size_t* out) {
  size_t at = cur->pos;
  uint64_t v;
  *out = 0;
  KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, what, &v));
  size_t left = cur->end - cur->pos;
  if (v > left / (min_bytes ? min_bytes : 1)) {
    return kc__bc_fail(c, at, "expected %s, got %llu, more than the %zu bytes left hold", what,
                       (unsigned long long)v, left);
  }
  *out = (size_t)v;
  return NULL;
}

kc_status* kc__bc_bytes(const kc__bc* c, kc__bc_cursor* cur, uint64_t n, const char* what,
                        size_t* out_pos) {
  *out_pos = cur->pos;
  if (n > cur->end - cur->pos) {
    return kc__bc_fail(c, cur->pos, "expected %s of %llu bytes, got %zu before the end", what,
                       (unsigned long long)n, cur->end - cur->pos);
  }
  *out_pos = cur->pos;
  cur->pos += (size_t)n;
  return NULL;
}

kc_string_view kc__bc_string(const kc__bc* c, uint32_t i) {
  return (kc_string_view){(const char*)c->data + c->strings[i].pos, c->strings[i].size};
}

kc_string_view kc__bc_dialect_name(const kc__bc* c, uint32_t i) {
  return kc__bc_string(c, c->dialects[i]);
}

/* ---- the text ------------------------------------------------------------- */

char* kc__bc_reserve(kc__bc* c, size_t n) {
  if (n == 0 || c->out_oom || c->out_full) return NULL;
  kc__buf* b = c->out;
  if (n > c->out_cap - b->size) {
    c->out_full = true;
    return NULL;
  }
  /* grown when needed, never zeroed: the caller writes the n bytes */
  if (n > b->cap - b->size && !KC__GROW(b->data, b->cap, b->size + n)) {
    c->out_oom = true;
    return NULL;
  }
  char* at = (char*)b->data + b->size;
  b->size += n;
  return at;
}

void kc__bc_put(kc__bc* c, const void* bytes, size_t n) {
  char* at = kc__bc_reserve(c, n);
  if (at) memcpy(at, bytes, n);
}

void kc__bc_printf(kc__bc* c, const char* fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  if (n < 0) {
    c->out_oom = true;
  } else if ((size_t)n < sizeof buf) {
    kc__bc_put(c, buf, (size_t)n);
  } else {
    char* big = kc__malloc((size_t)n + 1);
    if (!big) {
      c->out_oom = true;
      return;
    }
    va_start(args, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, args);
    va_end(args);
    kc__bc_put(c, big, (size_t)n);
    kc__free(big);
  }
}

void kc__bc_put_quoted(kc__bc* c, kc_string_view s) {
  kc__bc_put(c, "\"", 1);
  size_t run = 0; /* bytes written as they are, not yet put */
  for (size_t i = 0; i < s.size; ++i) {
    unsigned char ch = (unsigned char)s.data[i];
    if (ch >= 0x20 && ch < 0x7F && ch != '"' && ch != '\\') {
      run++;
      continue;
    }
    if (run) kc__bc_put(c, s.data + i - run, run);
    run = 0;
    kc__bc_printf(c, "\\%02X", ch);
  }
  if (run) kc__bc_put(c, s.data + s.size - run, run);
  kc__bc_put(c, "\"", 1);
}

kc_status* kc__bc_text_status(const kc__bc* c) {
  if (c->out_oom) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory writing the StableHLO text of the bytecode");
  }
  if (c->out_full) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "the StableHLO text of %zu bytes of bytecode would be more than "
                            "%zu bytes",
                            c->size, c->out_cap);
  }
  return NULL;
}

/* The digits of v, at the end of buf (of 10 bytes at least): their start. */
static char* kc__bc_digits(char* end, uint32_t v) {
  do {
    *--end = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  return end;
}

void kc__bc_put_uint(kc__bc* c, uint64_t v) {
  char buf[24], *end = buf + sizeof buf, *p = end;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  kc__bc_put(c, p, (size_t)(end - p));
}

void kc__bc_put_int(kc__bc* c, int64_t v) {
  if (v < 0) kc__bc_put(c, "-", 1);
  kc__bc_put_uint(c, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

void kc__bc_put_value(kc__bc* c, const kc__bc_value* v) {
  char buf[32], *end = buf + sizeof buf;
  char* p = end;
  if (v->result >= 0) {
    p = kc__bc_digits(p, (uint32_t)v->result);
    *--p = '#';
  }
  p = kc__bc_digits(p, v->serial);
  if (v->result == -2) {
    p -= 3;
    memcpy(p, "arg", 3);
  }
  *--p = '%';
  kc__bc_put(c, p, (size_t)(end - p));
}

/* ---- sections ------------------------------------------------------------- */

/* A section's header at the cursor: its id, and its data's bytes, after
 * any alignment padding (0xCB bytes, to a multiple of the alignment from
 * the artifact's start). */
static kc_status* kc__bc_section(const kc__bc* c, kc__bc_cursor* cur, uint8_t* out_id,
                                 kc__bc_cursor* out_data) {
  *out_id = 0;
  *out_data = (kc__bc_cursor){cur->pos, cur->pos};
  uint8_t id;
  uint64_t length;
  KC_RETURN_IF_ERROR(kc__bc_byte(c, cur, "a section id", &id));
  KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, "a section length", &length));
  if ((id & 0x7F) >= KC__BC_NUM_SECTIONS) {
    return kc__bc_fail(c, cur->pos - 1, "expected a section id below %d, got %d",
                       KC__BC_NUM_SECTIONS, id & 0x7F);
  }
  if (id & 0x80) {
    size_t at = cur->pos;
    uint64_t align;
    KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, "a section alignment", &align));
    if (align == 0 || (align & (align - 1)) || align > ((uint64_t)1 << 32)) {
      return kc__bc_fail(c, at, "expected a section alignment that is a power of two, got %llu",
                         (unsigned long long)align);
    }
    while (cur->pos % align) {
      uint8_t pad;
      KC_RETURN_IF_ERROR(kc__bc_byte(c, cur, "alignment padding", &pad));
      if (pad != 0xCB) {
        return kc__bc_fail(c, cur->pos - 1, "expected alignment padding (0xCB), got 0x%02X",
                           pad);
      }
    }
  }
  size_t pos;
  KC_RETURN_IF_ERROR(kc__bc_bytes(c, cur, length, "a section's data", &pos));
  *out_id = id & 0x7F;
  *out_data = (kc__bc_cursor){pos, pos + (size_t)length};
  return NULL;
}

static kc_status* kc__bc_end(const kc__bc* c, const kc__bc_cursor* cur, const char* what) {
  if (cur->pos == cur->end) return NULL;
  return kc__bc_fail(c, cur->pos, "expected the end of %s, got %zu more bytes", what,
                     cur->end - cur->pos);
}

/* The string table: a count, each string's size (its NUL included) in
 * reverse order, then the strings, back to back. */
static kc_status* kc__bc_read_strings(kc__bc* c, kc__bc_cursor cur) {
  size_t n;
  KC_RETURN_IF_ERROR(kc__bc_count(c, &cur, 1, "the number of strings", &n));
  c->strings = kc__calloc(n ? n : 1, sizeof *c->strings);
  if (!c->strings) return kc__status_oom();
  c->num_strings = n;
  size_t end = cur.end;
  for (size_t k = n; k-- > 0;) {
    size_t at = cur.pos;
    uint64_t len;
    KC_RETURN_IF_ERROR(kc__bc_varint(c, &cur, "a string's size", &len));
    /* The sizes are read forwards and the strings taken from the end
     * backwards: where the two meet, no room is left. */
    size_t room = cur.pos <= end ? end - cur.pos : 0;
    if (len == 0 || len > room) {
      return kc__bc_fail(c, at, "expected the size of string %zu (1 to %zu bytes), got %llu", k,
                         room, (unsigned long long)len);
    }
    end -= (size_t)len;
    if (c->data[end + len - 1] != 0) {
      return kc__bc_fail(c, end + (size_t)len - 1, "expected the NUL ending string %zu", k);
    }
    c->strings[k] = (kc__bc_span){end, (size_t)len - 1};
  }
  if (cur.pos != end) {
    return kc__bc_fail(c, cur.pos, "expected the string data to follow the sizes, got %zu "
                       "bytes between them", end - cur.pos);
  }
  return NULL;
}

/* The dialects (a name each, and a version section to skip), then the op
 * names, grouped by dialect. */
static kc_status* kc__bc_read_dialects(kc__bc* c, kc__bc_cursor cur) {
  size_t n;
  KC_RETURN_IF_ERROR(kc__bc_count(c, &cur, 1, "the number of dialects", &n));
  c->dialects = kc__calloc(n ? n : 1, sizeof *c->dialects);
  if (!c->dialects) return kc__status_oom();
  c->num_dialects = n;
  for (size_t i = 0; i < n; ++i) {
    size_t at = cur.pos;
    uint64_t v;
    KC_RETURN_IF_ERROR(kc__bc_varint(c, &cur, "a dialect's name", &v));
    if ((v >> 1) >= c->num_strings) {
      return kc__bc_fail(c, at, "expected a dialect's name (a string index below %zu), got %llu",
                         c->num_strings, (unsigned long long)(v >> 1));
    }
    c->dialects[i] = (uint32_t)(v >> 1);
    kc_string_view name = kc__bc_string(c, c->dialects[i]);
    if (kc_sv_equal(name, KC_SV_LIT("builtin"))) c->builtin = (int64_t)i;
    if (kc_sv_equal(name, KC_SV_LIT("vhlo"))) c->vhlo = (int64_t)i;
    if (v & 1) {
      uint8_t id;
      kc__bc_cursor version;
      at = cur.pos;
      KC_RETURN_IF_ERROR(kc__bc_section(c, &cur, &id, &version));
      if (id != KC__BC_DIALECT_VERSIONS) {
        return kc__bc_fail(c, at, "expected a dialect version section (7), got section %d", id);
      }
    }
  }
  size_t total;
  KC_RETURN_IF_ERROR(kc__bc_count(c, &cur, 1, "the number of op names", &total));
  c->opnames = kc__calloc(total ? total : 1, sizeof *c->opnames);
  c->rules = kc__calloc(total ? total : 1, sizeof *c->rules);
  if (!c->opnames || !c->rules) return kc__status_oom();
  while (cur.pos < cur.end) {
    uint32_t dialect;
    size_t count;
    KC_RETURN_IF_ERROR(kc__bc_index(c, &cur, c->num_dialects, "a dialect", &dialect));
    KC_RETURN_IF_ERROR(kc__bc_count(c, &cur, 1, "the number of op names", &count));
    if (count > total - c->num_opnames) {
      return kc__bc_fail(c, cur.pos, "expected at most the %zu op names announced, got more",
                         total);
    }
    for (size_t i = 0; i < count; ++i) {
      size_t at = cur.pos;
      uint64_t v;
      KC_RETURN_IF_ERROR(kc__bc_varint(c, &cur, "an op name", &v));
      if ((v >> 1) >= c->num_strings) {
        return kc__bc_fail(c, at, "expected an op name (a string index below %zu), got %llu",
                           c->num_strings, (unsigned long long)(v >> 1));
      }
      c->opnames[c->num_opnames++] =
          (kc__bc_opname){.dialect = dialect, .name = (uint32_t)(v >> 1), .registered = v & 1};
    }
  }
  return NULL;
}

/* The attribute and type tables: counts, then per dialect group each
 * entry's size and whether the dialect encoded it (else it is text). */
static kc_status* kc__bc_read_entries(kc__bc* c, kc__bc_cursor data, kc__bc_cursor cur) {
  size_t na, nt;
  KC_RETURN_IF_ERROR(kc__bc_count(c, &cur, 1, "the number of attributes", &na));
  KC_RETURN_IF_ERROR(kc__bc_count(c, &cur, 1, "the number of types", &nt));
  c->attrs = kc__calloc(na ? na : 1, sizeof *c->attrs);
  c->types = kc__calloc(nt ? nt : 1, sizeof *c->types);
  c->type_text = kc__calloc(nt ? nt : 1, sizeof *c->type_text);
  if (!c->attrs || !c->types || !c->type_text) return kc__status_oom();
  c->num_attrs = na;
  c->num_types = nt;
  size_t offset = data.pos;
  for (int kind = 0; kind < 2; ++kind) {
    kc__bc_entry* list = kind ? c->types : c->attrs;
    size_t want = kind ? nt : na, have = 0;
    while (have < want) {
      uint32_t dialect;
      size_t count;
      KC_RETURN_IF_ERROR(kc__bc_index(c, &cur, c->num_dialects, "a dialect", &dialect));
      KC_RETURN_IF_ERROR(kc__bc_count(c, &cur, 1, "a group's number of entries", &count));
      if (count > want - have) {
        return kc__bc_fail(c, cur.pos, "expected at most %zu more %s, got %zu", want - have,
                           kind ? "types" : "attributes", count);
      }
      for (size_t i = 0; i < count; ++i) {
        size_t at = cur.pos;
        uint64_t v;
        KC_RETURN_IF_ERROR(kc__bc_varint(c, &cur, "an entry's size", &v));
        uint64_t size = v >> 1;
        if (size > data.end - offset) {
          return kc__bc_fail(c, at, "expected an entry's size of at most the %zu bytes left "
                             "of the attribute and type section, got %llu",
                             data.end - offset, (unsigned long long)size);
        }
        list[have++] = (kc__bc_entry){.pos = offset, .size = (size_t)size, .dialect = dialect,
                                      .custom = v & 1};
        offset += (size_t)size;
      }
    }
  }
  return kc__bc_end(c, &cur, "the attribute and type offset section");
}

/* The properties: a count, then each op's as a size and its bytes. */
static kc_status* kc__bc_read_props(kc__bc* c, kc__bc_cursor cur) {
  c->props_section = cur;
  if (cur.pos == cur.end) return NULL;
  size_t n;
  KC_RETURN_IF_ERROR(kc__bc_count(c, &cur, 1, "the number of properties", &n));
  c->props = kc__calloc(n ? n : 1, sizeof *c->props);
  if (!c->props) return kc__status_oom();
  c->num_props = n;
  for (size_t i = 0; i < n; ++i) {
    c->props[i] = cur.pos;
    uint64_t size;
    size_t pos;
    KC_RETURN_IF_ERROR(kc__bc_varint(c, &cur, "the size of an op's properties", &size));
    KC_RETURN_IF_ERROR(kc__bc_bytes(c, &cur, size, "an op's properties", &pos));
  }
  return kc__bc_end(c, &cur, "the properties section");
}

/* ---- the IR --------------------------------------------------------------- */

/* The value slots of the region being read: [base, limit), the next to
 * define. */
typedef struct kc__bc_slots {
  size_t base, next, limit;
} kc__bc_slots;

static kc_status* kc__bc_read_op(kc__bc* c, kc__bc_cursor* cur, kc__bc_scope* s,
                                 kc__bc_form parent, kc__bc_slots* slots, int depth);

/* Use-list orders (the order of a value's uses, which the text does not
 * keep) for `n` values: read past. */
static kc_status* kc__bc_skip_use_lists(const kc__bc* c, kc__bc_cursor* cur, size_t n) {
  size_t lists = 1;
  if (n > 1) KC_RETURN_IF_ERROR(kc__bc_count(c, cur, 1, "a number of use lists", &lists));
  for (size_t i = 0; i < lists; ++i) {
    uint64_t v;
    if (n > 1) KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, "a use list's value", &v));
    size_t at = cur->pos;
    KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, "a use list's size", &v));
    uint64_t count = v >> 1; /* the low bit says how the indices pair */
    if (count > cur->end - cur->pos) {
      return kc__bc_fail(c, at, "expected a use list's size, got %llu, more than the %zu bytes "
                         "left hold", (unsigned long long)count, cur->end - cur->pos);
    }
    for (uint64_t k = 0; k < count; ++k) {
      KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, "a use list's index", &v));
    }
  }
  return NULL;
}

/* Makes room for `n` more values of the scope, undefined. */
static kc_status* kc__bc_scope_grow(kc__bc_scope* s, size_t n) {
  if (n == 0) return NULL;
  if (!KC__GROW(s->values, s->cap, s->size + n)) return kc__status_oom();
  memset(s->values + s->size, 0, n * sizeof *s->values);
  s->size += n;
  return NULL;
}

/* Defines the region's next value. */
static kc_status* kc__bc_define(const kc__bc* c, size_t at, kc__bc_scope* s,
                                kc__bc_slots* slots, kc__bc_value v) {
  if (slots->next >= slots->limit) {
    return kc__bc_fail(c, at, "expected at most the %zu values the region announced, got more",
                       slots->limit - slots->base);
  }
  v.defined = true;
  s->values[slots->next++] = v;
  return NULL;
}

/* The entry block's arguments: written "(%argN: t, ...)" for a function,
 * "^bb0(%argN: t, ...):" for another op's region. */
static kc_status* kc__bc_read_args(kc__bc* c, kc__bc_cursor* cur, kc__bc_scope* s,
                                   const kc__bc_op* owner, kc__bc_slots* slots) {
  size_t n;
  KC_RETURN_IF_ERROR(kc__bc_count(c, cur, 1, "the number of block arguments", &n));
  bool func = owner->rule->form == KC__BC_FUNC;
  if (n) kc__bc_puts(c, func ? "(" : "^bb0(");
  for (size_t i = 0; i < n; ++i) {
    size_t at = cur->pos;
    uint64_t v;
    KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, "a block argument's type", &v));
    if ((v >> 1) >= c->num_types) {
      return kc__bc_fail(c, at, "expected a block argument's type (an index below %zu), got "
                         "%llu", c->num_types, (unsigned long long)(v >> 1));
    }
    if (v & 1) {
      uint32_t loc;
      KC_RETURN_IF_ERROR(kc__bc_index(c, cur, c->num_attrs, "a location", &loc));
    }
    kc__bc_value value = {.serial = c->next_arg++, .result = -2, .type = (uint32_t)(v >> 1)};
    KC_RETURN_IF_ERROR(kc__bc_define(c, at, s, slots, value));
    if (i) kc__bc_puts(c, ", ");
    kc__bc_put_value(c, &value);
    kc__bc_puts(c, ": ");
    KC_RETURN_IF_ERROR(kc__vhlo_put_type(c, value.type, 0));
    if (func) KC_RETURN_IF_ERROR(kc__vhlo_put_arg_attrs(c, owner, i));
  }
  if (n) kc__bc_puts(c, func ? ")" : "):\n");
  if (!n && func) kc__bc_puts(c, "()");
  uint8_t lists;
  KC_RETURN_IF_ERROR(kc__bc_byte(c, cur, "whether the arguments have use lists", &lists));
  if (lists) KC_RETURN_IF_ERROR(kc__bc_skip_use_lists(c, cur, n));
  return NULL;
}

/* One region of `owner`: its one block, with the text's braces. */
static kc_status* kc__bc_read_region(kc__bc* c, kc__bc_cursor* cur, kc__bc_scope* s,
                                     const kc__bc_op* owner, int depth) {
  kc__bc_form form = owner->rule->form;
  size_t at = cur->pos, blocks;
  KC_RETURN_IF_ERROR(kc__bc_count(c, cur, 1, "the number of blocks of a region", &blocks));
  if (blocks == 0) {
    if (form == KC__BC_FUNC) {
      return kc__bc_unsupported("a function without a body (byte %zu)", at);
    }
    kc__bc_puts(c, form == KC__BC_MODULE ? " {\n}" : "{\n}");
    return NULL;
  }
  if (blocks > 1) {
    return kc__bc_unsupported("a region of %zu blocks (byte %zu): only regions of one block "
                              "have StableHLO text", blocks, at);
  }
  size_t num_values, base = s->size;
  KC_RETURN_IF_ERROR(kc__bc_count(c, cur, 1, "the number of values of a region", &num_values));
  KC_RETURN_IF_ERROR(kc__bc_scope_grow(s, num_values));
  kc__bc_slots slots = {.base = base, .next = base, .limit = base + num_values};
  uint64_t header;
  at = cur->pos;
  KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, "a block's number of ops", &header));
  uint64_t num_ops = header >> 1;
  if (num_ops > (cur->end - cur->pos) / 3) { /* name, mask and location: 3 bytes at least */
    return kc__bc_fail(c, at, "expected a block's number of ops, got %llu, more than the %zu "
                       "bytes left hold", (unsigned long long)num_ops, cur->end - cur->pos);
  }
  if (form == KC__BC_GENERIC || form == KC__BC_RETURN) kc__bc_puts(c, "{\n");
  if (header & 1) {
    KC_RETURN_IF_ERROR(kc__bc_read_args(c, cur, s, owner, &slots));
  } else if (form == KC__BC_FUNC) {
    kc__bc_puts(c, "()");
  }
  if (form == KC__BC_FUNC) KC_RETURN_IF_ERROR(kc__vhlo_func_results(c, owner));
  if (form == KC__BC_FUNC || form == KC__BC_MODULE) kc__bc_puts(c, " {\n");
  for (uint64_t i = 0; i < num_ops; ++i) {
    KC_RETURN_IF_ERROR(kc__bc_read_op(c, cur, s, form, &slots, depth));
  }
  kc__bc_puts(c, "}");
  s->size = base;
  return NULL;
}

/* An isolated op's regions: a section of their own, and their own values. */
static kc_status* kc__bc_read_isolated(kc__bc* c, kc__bc_cursor* cur, kc__bc_op* op,
                                       int depth) {
  size_t at = cur->pos;
  uint8_t id;
  kc__bc_cursor body;
  KC_RETURN_IF_ERROR(kc__bc_section(c, cur, &id, &body));
  if (id != KC__BC_IR) {
    return kc__bc_fail(c, at, "expected an IR section (4) holding an op's regions, got "
                       "section %d", id);
  }
  kc__bc_scope inner = {.values = NULL};
  kc_status* st = NULL;
  for (uint64_t i = 0; !st && i < op->num_regions; ++i) {
    if (i) kc__bc_puts(c, ", ");
    st = kc__bc_read_region(c, &body, &inner, op, depth + 1);
  }
  kc__free(inner.values);
  if (!st) st = kc__bc_end(c, &body, "an op's region section");
  return st;
}

static void kc__bc_op_free(kc__bc_op* op) {
  kc__buf_free(&op->named);
  kc__buf_free(&op->results);
  kc__buf_free(&op->operands);
}

/* The op's encoding up to its regions: name, mask, location, attributes,
 * properties, results, operands, use lists, the number of regions. */
static kc_status* kc__bc_read_op_head(kc__bc* c, kc__bc_cursor* cur, const kc__bc_scope* s,
                                      kc__bc_op* op, uint8_t* out_mask) {
  uint32_t name, loc, dict = 0;
  uint8_t mask;
  KC_RETURN_IF_ERROR(kc__bc_index(c, cur, c->num_opnames, "an op name", &name));
  const kc__bc_opname* on = &c->opnames[name];
  kc_string_view dialect = kc__bc_dialect_name(c, on->dialect), opname = kc__bc_string(c, on->name);
  if (!c->rules[name]) c->rules[name] = kc__vhlo_rule_find(dialect, opname);
  op->rule = c->rules[name];
  if (!op->rule) {
    return kc__bc_unsupported("op %.*s.%.*s (byte %zu) has no StableHLO text kcall reads",
                              (int)dialect.size, dialect.data, (int)opname.size, opname.data,
                              op->at);
  }
  KC_RETURN_IF_ERROR(kc__bc_byte(c, cur, "an op's encoding mask", &mask));
  if (mask & 0x80) {
    return kc__bc_fail(c, cur->pos - 1, "expected an op's encoding mask, got 0x%02X", mask);
  }
  KC_RETURN_IF_ERROR(kc__bc_index(c, cur, c->num_attrs, "an op's location", &loc));
  if (mask & KC__BC_HAS_ATTRS) {
    KC_RETURN_IF_ERROR(kc__bc_index(c, cur, c->num_attrs, "an op's attributes", &dict));
  }
  bool skip = op->rule->form == KC__BC_SKIP;
  if (skip && op->parent != KC__BC_MODULE) {
    return kc__bc_unsupported("op %s (byte %zu) in a function", op->rule->vhlo, op->at);
  }
  if (mask & KC__BC_HAS_PROPERTIES) {
    size_t at = cur->pos;
    uint32_t i;
    uint64_t size;
    KC_RETURN_IF_ERROR(kc__bc_index(c, cur, c->num_props, "an op's properties", &i));
    if (!on->registered) {
      return kc__bc_unsupported("op %.*s.%.*s (byte %zu) was written unregistered",
                                (int)dialect.size, dialect.data, (int)opname.size, opname.data,
                                at);
    }
    kc__bc_cursor props = {c->props[i], c->props_section.end};
    KC_RETURN_IF_ERROR(kc__bc_varint(c, &props, "the size of an op's properties", &size));
    props.end = props.pos + (size_t)size; /* checked when the table was read */
    if (!skip) {
      KC_RETURN_IF_ERROR(kc__vhlo_read_props(c, &props, op));
      KC_RETURN_IF_ERROR(kc__bc_end(c, &props, "an op's properties"));
    }
  } else if (op->rule->attrs[0].name && !op->rule->optional) {
    return kc__bc_fail(c, op->at, "expected properties for op %s, got none", op->rule->vhlo);
  }
  if ((mask & KC__BC_HAS_ATTRS) && !skip) {
    KC_RETURN_IF_ERROR(kc__vhlo_read_discardable(c, dict, op));
  }
  size_t n = 0;
  if (mask & KC__BC_HAS_RESULTS) {
    KC_RETURN_IF_ERROR(kc__bc_count(c, cur, 1, "an op's number of results", &n));
    for (size_t i = 0; i < n; ++i) {
      uint32_t type;
      KC_RETURN_IF_ERROR(kc__bc_index(c, cur, c->num_types, "a result's type", &type));
      if (!kc__buf_append(&op->results, &type, sizeof type)) return kc__status_oom();
    }
  }
  if (mask & KC__BC_HAS_OPERANDS) {
    size_t count;
    KC_RETURN_IF_ERROR(kc__bc_count(c, cur, 1, "an op's number of operands", &count));
    for (size_t i = 0; i < count; ++i) {
      size_t at = cur->pos;
      uint32_t v;
      KC_RETURN_IF_ERROR(kc__bc_index(c, cur, s->size, "an operand (a value in scope)", &v));
      if (!s->values[v].defined) {
        return kc__bc_fail(c, at, "expected an operand defined before its use, got value %u",
                           v);
      }
      if (!kc__buf_append(&op->operands, &s->values[v], sizeof s->values[v])) {
        return kc__status_oom();
      }
    }
  }
  if (mask & KC__BC_HAS_SUCCESSORS) {
    return kc__bc_unsupported("op %s (byte %zu) branches to other blocks", op->rule->vhlo,
                              op->at);
  }
  if (mask & KC__BC_HAS_USE_LISTS) KC_RETURN_IF_ERROR(kc__bc_skip_use_lists(c, cur, n));
  if (mask & KC__BC_HAS_REGIONS) {
    size_t at = cur->pos;
    uint64_t v;
    KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, "an op's number of regions", &v));
    op->num_regions = v >> 1;
    op->isolated = v & 1;
    if (op->num_regions > cur->end - cur->pos) {
      return kc__bc_fail(c, at, "expected an op's number of regions, got %llu",
                         (unsigned long long)op->num_regions);
    }
  }
  *out_mask = mask;
  return NULL;
}

static kc_status* kc__bc_read_op_in(kc__bc* c, kc__bc_cursor* cur, kc__bc_scope* s,
                                    kc__bc_op* op, kc__bc_slots* slots, int depth) {
  uint8_t mask;
  KC_RETURN_IF_ERROR(kc__bc_read_op_head(c, cur, s, op, &mask));
  size_t n = op->results.size / sizeof(uint32_t);
  /* Results are values only where the region announced some (not in the
   * module's body, whose functions have none). */
  if (n && slots->limit > slots->base) {
    op->serial = c->next_result++;
    const uint32_t* types = (const uint32_t*)(const void*)op->results.data;
    for (size_t i = 0; i < n; ++i) {
      kc__bc_value v = {.serial = op->serial, .result = n > 1 ? (int32_t)i : -1,
                        .type = types[i]};
      KC_RETURN_IF_ERROR(kc__bc_define(c, op->at, s, slots, v));
    }
  }
  kc__bc_form form = op->rule->form;
  if (form == KC__BC_SKIP && (n || op->num_regions)) {
    return kc__bc_unsupported("op %s (byte %zu) with results or regions", op->rule->vhlo,
                              op->at);
  }
  KC_RETURN_IF_ERROR(kc__vhlo_op_begin(c, op));
  if ((form == KC__BC_FUNC || form == KC__BC_MODULE) && op->num_regions != 1) {
    return kc__bc_fail(c, op->at, "expected one region for op %s, got %llu", op->rule->vhlo,
                       (unsigned long long)op->num_regions);
  }
  if (op->num_regions) {
    if (depth >= KC__BC_MAX_DEPTH) {
      return kc__bc_fail(c, op->at, "expected regions nested at most %d deep",
                         KC__BC_MAX_DEPTH);
    }
    bool generic = form == KC__BC_GENERIC || form == KC__BC_RETURN;
    if (generic) kc__bc_puts(c, " (");
    if (op->isolated) {
      KC_RETURN_IF_ERROR(kc__bc_read_isolated(c, cur, op, depth));
    } else {
      for (uint64_t i = 0; i < op->num_regions; ++i) {
        if (i) kc__bc_puts(c, ", ");
        KC_RETURN_IF_ERROR(kc__bc_read_region(c, cur, s, op, depth + 1));
      }
    }
    if (generic) kc__bc_puts(c, ")");
  }
  KC_RETURN_IF_ERROR(kc__vhlo_op_end(c, op));
  return kc__bc_text_status(c);
}

static kc_status* kc__bc_read_op(kc__bc* c, kc__bc_cursor* cur, kc__bc_scope* s,
                                 kc__bc_form parent, kc__bc_slots* slots, int depth) {
  kc__bc_op op = {.at = cur->pos, .parent = parent};
  kc_status* st = kc__bc_read_op_in(c, cur, s, &op, slots, depth);
  kc__bc_op_free(&op);
  return st;
}

/* The IR section: a block of one op, the module. */
static kc_status* kc__bc_read_ir(kc__bc* c, kc__bc_cursor cur) {
  size_t at = cur.pos;
  uint64_t header;
  KC_RETURN_IF_ERROR(kc__bc_varint(c, &cur, "the top block's number of ops", &header));
  if (header != 2) {
    return kc__bc_fail(c, at, "expected a top block of one op without arguments, got %llu "
                       "ops%s", (unsigned long long)(header >> 1),
                       header & 1 ? " and arguments" : "");
  }
  kc__bc_scope top = {.values = NULL};
  kc__bc_slots slots = {.base = 0, .next = 0, .limit = 0};
  kc__bc_op op = {.at = cur.pos, .parent = KC__BC_MODULE};
  kc_status* st = kc__bc_read_op_in(c, &cur, &top, &op, &slots, 0);
  if (!st && op.rule->form != KC__BC_MODULE) {
    st = kc__bc_fail(c, op.at, "expected a builtin.module op at the top, got %s", op.rule->vhlo);
  }
  kc__bc_op_free(&op);
  kc__free(top.values);
  if (!st) st = kc__bc_end(c, &cur, "the IR section");
  return st;
}

/* ---- the artifact --------------------------------------------------------- */

static kc_status* kc__bc_read(kc__bc* c) {
  kc__bc_cursor cur = {4, c->size};
  size_t at = cur.pos;
  KC_RETURN_IF_ERROR(kc__bc_varint(c, &cur, "the bytecode version", &c->version));
  if (c->version < KC__BC_MIN_VERSION || c->version > KC__BC_MAX_VERSION) {
    return kc__bc_unsupported("bytecode version %llu (byte %zu): versions %d and %d are read "
                              "(StableHLO 0.15 and later)", (unsigned long long)c->version, at,
                              KC__BC_MIN_VERSION, KC__BC_MAX_VERSION);
  }
  const uint8_t* nul = memchr(c->data + cur.pos, 0, cur.end - cur.pos);
  if (!nul) return kc__bc_fail(c, cur.pos, "expected the producer, a NUL-terminated string");
  c->producer = (kc_string_view){(const char*)c->data + cur.pos,
                                 (size_t)(nul - (c->data + cur.pos))};
  cur.pos += c->producer.size + 1;
  kc__bc_cursor sections[KC__BC_NUM_SECTIONS];
  bool seen[KC__BC_NUM_SECTIONS] = {false};
  while (cur.pos < cur.end) {
    at = cur.pos;
    uint8_t id;
    kc__bc_cursor data;
    KC_RETURN_IF_ERROR(kc__bc_section(c, &cur, &id, &data));
    if (seen[id]) return kc__bc_fail(c, at, "expected each section once, got section %d again", id);
    seen[id] = true;
    sections[id] = data;
  }
  static const int required[] = {KC__BC_STRING, KC__BC_DIALECT, KC__BC_ATTR_TYPE,
                                 KC__BC_ATTR_TYPE_OFFSET, KC__BC_IR, KC__BC_PROPERTIES};
  for (size_t i = 0; i < KC__ARRAY_SIZE(required); ++i) {
    if (!seen[required[i]]) {
      return kc__bc_fail(c, c->size, "expected section %d, got the end of the artifact",
                         required[i]);
    }
  }
  KC_RETURN_IF_ERROR(kc__bc_read_strings(c, sections[KC__BC_STRING]));
  KC_RETURN_IF_ERROR(kc__bc_read_dialects(c, sections[KC__BC_DIALECT]));
  KC_RETURN_IF_ERROR(kc__bc_read_entries(c, sections[KC__BC_ATTR_TYPE],
                                         sections[KC__BC_ATTR_TYPE_OFFSET]));
  KC_RETURN_IF_ERROR(kc__bc_read_props(c, sections[KC__BC_PROPERTIES]));
  KC_RETURN_IF_ERROR(kc__bc_read_ir(c, sections[KC__BC_IR]));
  kc__bc_puts(c, "\n");
  return kc__bc_text_status(c);
}

kc_status* kc__stablehlo_bytecode_to_text(const void* data, size_t size, kc__buf* out_text) {
  if (!out_text || (!data && size)) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc__stablehlo_bytecode_to_text: %s is NULL",
                            out_text ? "data" : "out_text");
  }
  if (!kc__stablehlo_bytecode_detect((kc_string_view){data, size})) {
    return kc_status_create(KC_INVALID_ARGUMENT, "StableHLO bytecode, byte 0: expected the "
                            "MLIR bytecode magic number \"ML\\xEFR\"");
  }
  kc__bc c = {.data = data, .size = size, .builtin = -1, .vhlo = -1, .out = out_text};
  /* Room for text that is larger than its bytecode (dense literals in
   * hex, attributes used more than once), within a bound. */
  c.out_cap = size > (SIZE_MAX - out_text->size - ((size_t)16 << 20)) / 4
                  ? SIZE_MAX
                  : out_text->size + ((size_t)16 << 20) + 4 * size;
  /* Most of a large artifact is dense literals, whose hex takes twice
   * their bytes: room for that at once, not by doubling. */
  size_t guess = size < (SIZE_MAX - 65536) / 2 ? 2 * size + 65536 : size;
  kc_status* st = NULL;
  if (guess > out_text->size && out_text->cap < guess && guess <= c.out_cap &&
      !KC__GROW(out_text->data, out_text->cap, guess)) {
    st = kc__status_oom();
  }
  if (!st) st = kc__bc_read(&c);
  kc__free(c.strings);
  kc__free(c.dialects);
  kc__free(c.opnames);
  kc__free(c.rules);
  kc__free(c.attrs);
  kc__free(c.types);
  kc__free(c.type_text);
  kc__free(c.props);
  if (st && kc_status_get_code(st) == KC_INVALID_ARGUMENT && c.producer.size) {
    st = kc_status_add_context(st, "an artifact of %.*s", (int)c.producer.size,
                               c.producer.data);
  }
  return st;
}

kc_status* kc__stablehlo_bytecode_parse(kc_string_view data, const kc_parse_options* options,
                                        kc_program** out_program) {
  return kc__stablehlo_bytecode_parse_for(data, options, -1, out_program);
}

kc_string_view kc__stablehlo_bytecode_producer(kc_string_view data) {
  kc__bc c = {.data = (const uint8_t*)data.data, .size = data.size, .builtin = -1, .vhlo = -1};
  kc__bc_cursor cur = {4, data.size};
  uint64_t version;
  kc_status* st = kc__stablehlo_bytecode_detect(data)
                      ? kc__bc_varint(&c, &cur, "the bytecode version", &version)
                      : kc_status_create(KC_INVALID_ARGUMENT, "not bytecode");
  const uint8_t* nul = st ? NULL : memchr(c.data + cur.pos, 0, cur.end - cur.pos);
  kc_status_destroy(st);
  if (!nul) return (kc_string_view){"", 0};
  return (kc_string_view){(const char*)c.data + cur.pos, (size_t)(nul - (c.data + cur.pos))};
}

kc_status* kc__stablehlo_bytecode_parse_for(kc_string_view data, const kc_parse_options* options,
                                            int32_t platform_index, kc_program** out_program) {
  kc__buf text = {0};
  kc_status* st = kc__stablehlo_bytecode_to_text(data.data, data.size, &text);
  if (!st) {
    st = kc__stablehlo_parse_for((kc_string_view){(const char*)text.data, text.size}, options,
                                 platform_index, out_program);
    char format[160];
    kc_string_view producer = kc__stablehlo_bytecode_producer(data);
    snprintf(format, sizeof format, "StableHLO portable artifact (%.*s)",
             (int)(producer.size < 96 ? producer.size : 96), producer.data);
    st = kc__program_formatted(st, out_program, kc_sv(format));
    st = kc_status_add_context(st, "in the StableHLO text of the bytecode");
  }
  kc__buf_free(&text);
  return st;
}
