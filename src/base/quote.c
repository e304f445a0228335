/* Quoting user text in messages: escaped, and bounded (see base.h). */
#include <stdio.h>

#include "internal/common.h"

/* Of a text too long to show whole: the most bytes of quoted output kept
 * from its start and from its end. */
enum { KC__QUOTE_HEAD = 56, KC__QUOTE_TAIL = 24 };

_Static_assert(KC__QUOTE_HEAD + KC__QUOTE_TAIL <= KC_QUOTE_MAX_SHOWN,
               "the two ends fit in what a quote shows");
/* Quotes, the two ends, "..." between them and " (N bytes)". */
_Static_assert(2 + KC__QUOTE_HEAD + 3 + 2 + KC__QUOTE_TAIL + 30 < KC_QUOTED_CAP,
               "a cut quote fits KC_QUOTED_CAP");
_Static_assert(2 + KC_QUOTE_MAX_SHOWN < KC_QUOTED_CAP,
               "a whole quote fits KC_QUOTED_CAP");

/* Length of the valid UTF-8 sequence starting at s[0] (n bytes left), and
 * its code point in *out_cp; 0 when the bytes are not one (a stray
 * continuation byte, an overlong form, a surrogate, past U+10FFFF, cut
 * short). */
static size_t kc__utf8_sequence(const unsigned char* s, size_t n,
                                uint32_t* out_cp) {
  unsigned char c = s[0];
  size_t len;
  uint32_t cp, min;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2, cp = c & 0x1fu, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3, cp = c & 0x0fu, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4, cp = c & 0x07u, min = 0x10000;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  *out_cp = cp;
  return len;
}

/* Code points that are valid but would not show as what they are: C1
 * controls, and the line separators and direction controls that move
 * or reorder the text around them. */
static bool kc__hidden_code_point(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
         cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

/* How a unit of the text shows quoted. */
typedef enum kc__unit_kind {
  KC__UNIT_ITSELF, /* a printable byte or a UTF-8 sequence */
  KC__UNIT_ESCAPE, /* \n \t \r \\ \' */
  KC__UNIT_HEX     /* \xNN, one byte */
} kc__unit_kind;

/* One unit of the text at s[0] (n bytes left): its kind, how many bytes
 * it takes quoted (*out_width), and how many it takes in the text (the
 * return value). */
static size_t kc__unit(const unsigned char* s, size_t n, size_t* out_width,
                       kc__unit_kind* out_kind) {
  unsigned char c = s[0];
  if (c == '\\' || c == '\'' || c == '\n' || c == '\t' || c == '\r') {
    *out_kind = KC__UNIT_ESCAPE;
    *out_width = 2;
    return 1;
  }
  if (c >= 0x20 && c < 0x7f) {
    *out_kind = KC__UNIT_ITSELF;
    *out_width = 1;
    return 1;
  }
  uint32_t cp = 0;
  size_t len = c >= 0x80 ? kc__utf8_sequence(s, n, &cp) : 0;
  if (len && !kc__hidden_code_point(cp)) {
    *out_kind = KC__UNIT_ITSELF;
    *out_width = len;
    return len;
  }
  *out_kind = KC__UNIT_HEX; /* byte by byte */
  *out_width = 4;
  return 1;
}

/* Appends the units of s[0 .. n) quoted, at most `room` bytes of them, to
 * buf at *len (snprintf-style); returns how many text bytes went in. */
static size_t kc__put_units(const unsigned char* s, size_t n, size_t room,
                            char* buf, size_t cap, size_t* len) {
  size_t i = 0, used = 0;
  while (i < n) {
    size_t width;
    kc__unit_kind kind;
    size_t step = kc__unit(s + i, n - i, &width, &kind);
    if (used + width > room) break;
    unsigned char c = s[i];
    if (kind == KC__UNIT_HEX) {
      kc__appendf(buf, cap, len, "\\x%02x", c);
    } else if (kind == KC__UNIT_ESCAPE) {
      kc__appendf(buf, cap, len, "\\%c",
                  c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : (char)c);
    } else {
      kc__appendf(buf, cap, len, "%.*s", (int)step, (const char*)s + i);
    }
    used += width;
    i += step;
  }
  return i;
}

/* The start of the shortest end of s[0 .. n) that quotes in at most
 * `room` bytes, at or after `from`. Units are read forwards from a byte
 * that starts a character, a little before where the end can begin. */
static size_t kc__tail_start(const unsigned char* s, size_t n, size_t from,
                             size_t room) {
  if (room > KC__QUOTE_TAIL) room = KC__QUOTE_TAIL;
  size_t p = n > from + 4 * room ? n - 4 * room : from;
  while (p > from && (s[p] & 0xc0) == 0x80) --p;
  size_t starts[4 * KC__QUOTE_TAIL + 1], widths[4 * KC__QUOTE_TAIL + 1];
  size_t count = 0;
  while (p < n && count < KC__ARRAY_SIZE(starts)) {
    kc__unit_kind kind;
    starts[count] = p;
    p += kc__unit(s + p, n - p, &widths[count], &kind);
    ++count;
  }
  size_t start = n, used = 0;
  while (count > 0 && used + widths[count - 1] <= room) {
    used += widths[--count];
    start = starts[count];
  }
  return start;
}

size_t kc_sv_format_quoted(kc_string_view text, char* buf, size_t cap) {
  size_t len = 0;
  if (cap) buf[0] = '\0';
  const unsigned char* s = (const unsigned char*)(text.data ? text.data : "");
  size_t n = text.data ? text.size : 0;
  /* Whole, when it fits. */
  size_t width = 0;
  for (size_t i = 0; i < n && width <= KC_QUOTE_MAX_SHOWN;) {
    size_t w;
    kc__unit_kind kind;
    i += kc__unit(s + i, n - i, &w, &kind);
    width += w;
  }
  kc__appendf(buf, cap, &len, "'");
  if (width <= KC_QUOTE_MAX_SHOWN) {
    kc__put_units(s, n, KC_QUOTE_MAX_SHOWN, buf, cap, &len);
    kc__appendf(buf, cap, &len, "'");
    return len;
  }
  size_t head = kc__put_units(s, n, KC__QUOTE_HEAD, buf, cap, &len);
  size_t tail = kc__tail_start(s, n, head, KC__QUOTE_TAIL);
  kc__appendf(buf, cap, &len, "'...'");
  kc__put_units(s + tail, n - tail, KC__QUOTE_TAIL, buf, cap, &len);
  kc__appendf(buf, cap, &len, "' (%zu bytes)", n);
  return len;
}
