/*
 * npy.c — NumPy .npy files as tensors (kcall/tensor.h, ".npy files").
 *
 * The file is "\x93NUMPY", two version bytes, the header length (2 bytes
 * in 1.0, 4 in 2.0 and 3.0, little-endian), then a Python dict literal
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline, then the raw elements. The dict is
 * read with a small parser of just that literal syntax, never evaluated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "kcall/tensor.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_SIZE 6

typedef struct npy_header {
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[KC_TENSOR_MAX_NDIM];
} npy_header;

/* ---- element types -------------------------------------------------------- */

typedef struct npy_type {
  char kind; /* the descr's kind letter */
  uint8_t code;
  uint8_t bits;
  const char* descr; /* what NumPy writes */
} npy_type;

static const npy_type kTypes[] = {
    {'f', kDLFloat, 16, "<f2"}, {'f', kDLFloat, 32, "<f4"},
    {'f', kDLFloat, 64, "<f8"}, {'i', kDLInt, 8, "|i1"},
    {'i', kDLInt, 16, "<i2"},   {'i', kDLInt, 32, "<i4"},
    {'i', kDLInt, 64, "<i8"},   {'u', kDLUInt, 8, "|u1"},
    {'u', kDLUInt, 16, "<u2"},  {'u', kDLUInt, 32, "<u4"},
    {'u', kDLUInt, 64, "<u8"},  {'b', kDLBool, 8, "|b1"},
    {'c', kDLComplex, 64, "<c8"}, {'c', kDLComplex, 128, "<c16"},
    /* bfloat16 has no NumPy letter: the name ml_dtypes gives it, which
     * np.load reads as that type once ml_dtypes is imported (JAX does). */
    {0, kDLBfloat, 16, "bfloat16"},
};
#define TYPE_COUNT (sizeof(kTypes) / sizeof(kTypes[0]))
#define SUPPORTED_TYPES "<f2 <f4 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8 |b1 <c8 <c16 bfloat16"

const char* kc_dtype_npy_descr(DLDataType dtype) {
  if (dtype.lanes != 1) return NULL;
  for (size_t i = 0; i < TYPE_COUNT; ++i) {
    if (kTypes[i].code == dtype.code && kTypes[i].bits == dtype.bits) {
      return kTypes[i].descr;
    }
  }
  return NULL;
}

/* The data is copied as it lies in memory, so files are only correct on a
 * little-endian host. */
static bool host_is_little_endian(void) {
  const uint16_t probe = 1;
  unsigned char first;
  memcpy(&first, &probe, 1);
  return first == 1;
}

static kc_status* parse_descr(kc_string_view d, DLDataType* out) {
  const char* supported = "supported: " SUPPORTED_TYPES;
  if (kc_sv_equal(d, KC_SV_LIT("bfloat16"))) {
    *out = kc_dtype_make(kDLBfloat, 16, 1);
    return NULL;
  }
  if (d.size >= 2 && d.data[1] == 'V') {
    return kc_status_create(KC_UNIMPLEMENTED,
                            "dtype %s (elements of no named type: how np.save writes "
                            "ml_dtypes' bfloat16 or float8 arrays) is not supported (%s); "
                            "convert them (x.astype(np.float32))",
                            KC__Q(d), supported);
  }
  if (d.size < 3 || !strchr("<>|=", d.data[0])) {
    return kc_status_create(KC_UNIMPLEMENTED, "dtype %s is not supported (%s)",
                            KC__Q(d), supported);
  }
  unsigned width = 0;
  for (size_t i = 2; i < d.size; ++i) {
    if (d.data[i] < '0' || d.data[i] > '9' || width > 1000) {
      return kc_status_create(KC_UNIMPLEMENTED, "dtype %s is not supported (%s)",
                              KC__Q(d), supported);
    }
    width = width * 10 + (unsigned)(d.data[i] - '0');
  }
  for (size_t i = 0; i < TYPE_COUNT; ++i) {
    if (kTypes[i].kind != d.data[1] || kTypes[i].bits != width * 8) continue;
    /* Byte order means nothing for one-byte elements. */
    if (d.data[0] == '>' && width > 1) {
      return kc_status_create(KC_UNIMPLEMENTED,
                              "big-endian data (%s) is not supported; "
                              "save it with arr.astype('<%c%u')",
                              KC__Q(d), d.data[1], width);
    }
    *out = kc_dtype_make(kTypes[i].code, kTypes[i].bits, 1);
    return NULL;
  }
  return kc_status_create(KC_UNIMPLEMENTED, "dtype %s is not supported (%s)",
                          KC__Q(d), supported);
}

/* ---- the header dictionary ------------------------------------------------ */

typedef struct scanner {
  const char* begin;
  const char* p;
  const char* end;
} scanner;

static void skip_blanks(scanner* s) {
  while (s->p < s->end && strchr(" \t\r\n", *s->p) && *s->p) ++s->p;
}

static kc_status* malformed(const scanner* s, const char* expected) {
  size_t at = (size_t)(s->p - s->begin);
  if (s->p >= s->end) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "malformed header: expected %s, found its end",
                            expected);
  }
  /* Show a little of what is there, up to the end of its line. */
  kc_string_view seen = {s->p, 0};
  while (seen.size < 16 && s->p + seen.size < s->end && s->p[seen.size] != '\n') {
    ++seen.size;
  }
  while (seen.size > 1 && seen.data[seen.size - 1] == ' ') --seen.size; /* padding */
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "malformed header at byte %zu: expected %s, found %s",
                          at, expected, KC__Q(seen));
}

static bool accept(scanner* s, char c) {
  skip_blanks(s);
  if (s->p < s->end && *s->p == c) {
    ++s->p;
    return true;
  }
  return false;
}

static bool accept_word(scanner* s, const char* word) {
  skip_blanks(s);
  size_t n = strlen(word);
  if ((size_t)(s->end - s->p) >= n && memcmp(s->p, word, n) == 0) {
    s->p += n;
    return true;
  }
  return false;
}

/* A quoted string without escapes (no key or descr NumPy writes has one)
 * or control bytes: a NUL would end the string for anything reading it as
 * C text, so that it would pass for something it is not. `what` names it
 * in messages ("a key", "the dtype string"). */
static kc_status* parse_string(scanner* s, const char* what, kc_string_view* out) {
  skip_blanks(s);
  if (s->p >= s->end || (*s->p != '\'' && *s->p != '"')) {
    return malformed(s, "a quoted string");
  }
  char quote = *s->p++;
  const char* start = s->p;
  const char* close = memchr(start, quote, (size_t)(s->end - start));
  if (!close) {
    s->p = s->end;
    return malformed(s, "a closing quote");
  }
  kc_string_view text = {start, (size_t)(close - start)};
  for (; s->p < close; ++s->p) {
    if (*s->p == '\\') return malformed(s, "a plain string");
    unsigned char c = (unsigned char)*s->p;
    if (c < 0x20 || c == 0x7f) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "malformed header: %s %s holds byte 0x%02x at "
                              "byte %zu of the header; expected printable text",
                              what, KC__Q(text), c, (size_t)(s->p - s->begin));
    }
  }
  out->data = start;
  out->size = (size_t)(s->p - start);
  ++s->p;
  return NULL;
}

/* A non-negative int, with the 'L' that Python 2 wrote after longs. */
static kc_status* parse_dim(scanner* s, int64_t* out) {
  skip_blanks(s);
  if (s->p >= s->end || *s->p < '0' || *s->p > '9') {
    return malformed(s, "a non-negative dimension");
  }
  int64_t v = 0;
  while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
    int d = *s->p - '0';
    if (v > (INT64_MAX - d) / 10) {
      return kc_status_create(KC_OUT_OF_RANGE,
                              "a dimension does not fit in 64 bits");
    }
    v = v * 10 + d;
    ++s->p;
  }
  if (s->p < s->end && *s->p == 'L') ++s->p;
  *out = v;
  return NULL;
}

/* "()", "(3,)", "(2, 3)"; "(3)" is let through too. */
static kc_status* parse_shape(scanner* s, npy_header* h) {
  if (!accept(s, '(')) return malformed(s, "'(' starting the shape");
  h->ndim = 0;
  while (!accept(s, ')')) {
    if (h->ndim == KC_TENSOR_MAX_NDIM) {
      return kc_status_create(KC_OUT_OF_RANGE,
                              "the shape has more than %d dimensions",
                              KC_TENSOR_MAX_NDIM);
    }
    kc_status* st = parse_dim(s, &h->shape[h->ndim]);
    if (st) return st;
    ++h->ndim;
    if (!accept(s, ',')) {
      if (!accept(s, ')')) return malformed(s, "',' or ')' in the shape");
      break;
    }
  }
  return NULL;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static kc_status* parse_entry(scanner* s, npy_header* h, unsigned* seen) {
  kc_string_view key;
  kc_status* st = parse_string(s, "a key", &key);
  if (st) return st;
  if (!accept(s, ':')) return malformed(s, "':' after a key");
  unsigned bit = 0;
  if (kc_sv_equal(key, KC_SV_LIT("descr"))) bit = KEY_DESCR;
  if (kc_sv_equal(key, KC_SV_LIT("fortran_order"))) bit = KEY_FORTRAN;
  if (kc_sv_equal(key, KC_SV_LIT("shape"))) bit = KEY_SHAPE;
  if (bit == 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "malformed header: unknown key %s", KC__Q(key));
  }
  if (*seen & bit) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "malformed header: key %s appears twice", KC__Q(key));
  }
  *seen |= bit;
  if (bit == KEY_SHAPE) return parse_shape(s, h);
  if (bit == KEY_FORTRAN) {
    if (accept_word(s, "False")) return NULL;
    if (accept_word(s, "True")) {
      return kc_status_create(KC_UNIMPLEMENTED,
                              "Fortran-order data is not supported; save it "
                              "with np.ascontiguousarray(arr)");
    }
    return malformed(s, "True or False for 'fortran_order'");
  }
  skip_blanks(s);
  if (s->p < s->end && *s->p == '[') {
    return kc_status_create(KC_UNIMPLEMENTED,
                            "structured dtypes are not supported");
  }
  kc_string_view descr;
  st = parse_string(s, "the dtype string", &descr);
  if (!st) st = parse_descr(descr, &h->dtype);
  return st;
}

static kc_status* parse_header(const char* text, size_t size, npy_header* h) {
  scanner s = {text, text, text + size};
  if (!accept(&s, '{')) return malformed(&s, "'{'");
  unsigned seen = 0;
  while (!accept(&s, '}')) {
    kc_status* st = parse_entry(&s, h, &seen);
    if (st) return st;
    if (!accept(&s, ',')) {
      if (!accept(&s, '}')) return malformed(&s, "',' or '}'");
      break;
    }
  }
  skip_blanks(&s);
  if (s.p != s.end) return malformed(&s, "nothing after '}'");
  static const struct { unsigned bit; const char* name; } keys[] = {
      {KEY_DESCR, "descr"}, {KEY_FORTRAN, "fortran_order"}, {KEY_SHAPE, "shape"}};
  for (size_t i = 0; i < 3; ++i) {
    if (!(seen & keys[i].bit)) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "malformed header: no '%s' key", keys[i].name);
    }
  }
  return NULL;
}

/* ---- files ---------------------------------------------------------------- */

static kc_status* errno_status(int err, const char* what) {
  return kc_status_create(kc_status_code_from_errno(err), "%s: %s", what, strerror(err));
}

static kc_status* truncated(const char* part, size_t wanted, size_t found) {
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "truncated file: %s needs %zu bytes, found %zu",
                          part, wanted, found);
}

/* Reads the magic, version and header into *h. */
static kc_status* read_header(FILE* f, npy_header* h) {
  unsigned char head[12];
  size_t got = fread(head, 1, 8, f);
  if (got < 8 && ferror(f)) return errno_status(errno, "cannot read");
  if (got == 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "not a .npy file (it is empty)");
  }
  if (got < NPY_MAGIC_SIZE || memcmp(head, NPY_MAGIC, NPY_MAGIC_SIZE) != 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "not a .npy file (it does not start with "
                            "\\x93NUMPY)");
  }
  if (got < 8) return truncated("the version", 8, got);
  unsigned major = head[6];
  unsigned minor = head[7];
  size_t len_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3) {
    return kc_status_create(KC_UNIMPLEMENTED,
                            ".npy format version %u.%u is not supported "
                            "(1.0, 2.0 and 3.0 are)",
                            major, minor);
  }
  got = fread(head + 8, 1, len_bytes, f);
  if (got < len_bytes) return truncated("the header length", len_bytes, got);
  size_t header_len = (size_t)head[8] | (size_t)head[9] << 8;
  if (len_bytes == 4) header_len |= (size_t)head[10] << 16 | (size_t)head[11] << 24;
  if (header_len > KC_NPY_MAX_HEADER) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "header of %zu bytes is too long (at most %d)",
                            header_len, KC_NPY_MAX_HEADER);
  }
  char* text = kc__malloc(header_len + 1);
  if (!text) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  got = fread(text, 1, header_len, f);
  kc_status* st = got < header_len ? truncated("the header", header_len, got)
                                   : parse_header(text, header_len, h);
  kc__free(text);
  return st;
}

/* Bytes the data takes, or OUT_OF_RANGE. */
static kc_status* data_size(const npy_header* h, size_t* out_size) {
  *out_size = 0;
  for (int32_t i = 0; i < h->ndim; ++i) {
    if (h->shape[i] == 0) return NULL; /* empty, whatever the others say */
  }
  size_t size = kc_dtype_get_size(h->dtype);
  for (int32_t i = 0; i < h->ndim; ++i) {
    uint64_t dim = (uint64_t)h->shape[i];
    if (size > SIZE_MAX / dim) {
      return kc_status_create(KC_OUT_OF_RANGE,
                              "the shape's byte size overflows");
    }
    size *= (size_t)dim;
  }
  *out_size = size;
  return NULL;
}

/* Bytes left in `f` after the current position, or -1 when it cannot
 * seek (a pipe). */
static long bytes_left(FILE* f) {
  long here = ftell(f);
  if (here < 0 || fseek(f, 0, SEEK_END) != 0) return -1;
  long end = ftell(f);
  if (end < 0 || fseek(f, here, SEEK_SET) != 0) return -1;
  return end - here;
}

kc_status* kc_tensor_read_npy_stream(FILE* f, const kc_allocator* alloc,
                               kc_tensor** out_tensor) {
  if (!f || !out_tensor) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_tensor_read_npy_stream: NULL argument");
  }
  *out_tensor = NULL;
  if (!host_is_little_endian()) {
    return kc_status_create(KC_UNIMPLEMENTED,
                            ".npy files need a little-endian host");
  }
  npy_header h;
  memset(&h, 0, sizeof h);
  kc_status* st = read_header(f, &h);
  size_t size = 0;
  if (!st) st = data_size(&h, &size);
  if (st) return st;
  /* Checked before allocating, so that a forged shape cannot make us ask
   * for memory the file could never fill. */
  long left = bytes_left(f);
  if (left >= 0 && (uint64_t)left != (uint64_t)size) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "the data is %ld bytes but the shape needs %zu",
                            left, size);
  }
  kc_tensor* t = NULL;
  st = kc_tensor_create(alloc, h.shape, h.ndim, h.dtype, kc_device_cpu(), &t);
  if (st) return st;
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  size_t got = size ? fread(dl->data, 1, size, f) : 0;
  if (got < size) {
    st = truncated("the data", size, got);
  } else if (fgetc(f) != EOF) {
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "the file has more data than the shape needs "
                          "(%zu bytes)", size);
  } else if (ferror(f)) {
    st = errno_status(errno, "read failed");
  }
  if (st) {
    kc_object_release(KC_OBJECT(t));
    return st;
  }
  *out_tensor = t;
  return NULL;
}

kc_status* kc_tensor_read_npy(const char* path, const kc_allocator* alloc,
                        kc_tensor** out_tensor) {
  if (!path || !out_tensor) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_tensor_read_npy: NULL argument");
  }
  *out_tensor = NULL;
  if (!host_is_little_endian()) {
    return kc_status_create(KC_UNIMPLEMENTED,
                            "reading %s: .npy files need a little-endian "
                            "host", KC__QS(path));
  }
  FILE* f = NULL;
  kc_status* st = kc__file_open_read(path, "a .npy file", &f);
  if (st) return st; /* it names the path */
  st = kc_tensor_read_npy_stream(f, alloc, out_tensor);
  fclose(f);
  return kc_status_add_context(st, "reading %s", KC__QS(path));
}

/* ---- writing -------------------------------------------------------------- */

/* The header NumPy writes: the dict, padded with spaces and a newline so
 * that the data starts at a multiple of 64 bytes. Returns its length. */
static size_t format_header(const DLTensor* t, const char* descr, char* buf,
                            size_t cap) {
  int n = snprintf(buf, cap, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   descr);
  size_t len = n > 0 ? (size_t)n : 0;
  for (int32_t i = 0; i < t->ndim && len < cap; ++i) {
    n = snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "",
                 (long long)t->shape[i]);
    len += n > 0 ? (size_t)n : 0;
  }
  if (len < cap) {
    n = snprintf(buf + len, cap - len, "%s), }", t->ndim == 1 ? "," : "");
    len += n > 0 ? (size_t)n : 0;
  }
  /* 10 bytes of magic, version and length come first; +1 for '\n'. */
  size_t total = (10 + len + 1 + 63) / 64 * 64;
  size_t padded = total - 10;
  if (padded > cap) return 0;
  memset(buf + len, ' ', padded - len - 1);
  buf[padded - 1] = '\n';
  return padded;
}

/* What makes `t` writable: its descr and data size, or why it is not. */
static kc_status* check_writable(const DLTensor* t, const char** out_descr,
                                 size_t* out_size) {
  const char* descr = kc_dtype_npy_descr(t->dtype);
  if (!descr) {
    char name[64];
    kc_dtype_format(t->dtype, name, sizeof name);
    return kc_status_create(KC_UNIMPLEMENTED, ".npy has no type for %s", name);
  }
  if (t->device.device_type != kDLCPU || !kc_dltensor_is_compact(t) ||
      !host_is_little_endian()) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "only compact CPU tensors on a little-endian "
                            "host can be written");
  }
  int64_t numel = kc_dltensor_get_numel(t);
  if (numel < 0) return kc_status_create(KC_OUT_OF_RANGE, "size overflows");
  *out_descr = descr;
  *out_size = (size_t)numel * kc_dtype_get_size(t->dtype);
  return NULL;
}

kc_status* kc_tensor_write_npy_stream(FILE* f, const DLTensor* t) {
  if (!f || !t) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_tensor_write_npy_stream: NULL argument");
  }
  const char* descr = NULL;
  size_t size = 0;
  kc_status* st = check_writable(t, &descr, &size);
  if (st) return st;
  /* Rank is at most 32, so the header always fits the 1.0 format's 64 KiB;
   * 2 KiB holds 32 dimensions of 20 digits each. */
  char header[2048];
  size_t header_len = format_header(t, descr, header, sizeof header);
  if (header_len == 0) {
    return kc_status_create(KC_INTERNAL, "header too long");
  }
  unsigned char prefix[10];
  memcpy(prefix, NPY_MAGIC, NPY_MAGIC_SIZE);
  prefix[6] = 1;
  prefix[7] = 0;
  prefix[8] = (unsigned char)(header_len & 0xff);
  prefix[9] = (unsigned char)(header_len >> 8);
  const char* data = (const char*)t->data + t->byte_offset;
  bool ok = fwrite(prefix, 1, sizeof prefix, f) == sizeof prefix &&
            fwrite(header, 1, header_len, f) == header_len &&
            (size == 0 || fwrite(data, 1, size, f) == size);
  return ok ? NULL : errno_status(errno, "write failed");
}

kc_status* kc_tensor_write_npy(const char* path, const DLTensor* t) {
  if (!path || !t) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_tensor_write_npy: NULL argument");
  }
  /* Checked first, so that a tensor that cannot be written leaves no
   * file behind. */
  const char* descr = NULL;
  size_t size = 0;
  kc_status* st = check_writable(t, &descr, &size);
  if (st) return kc_status_add_context(st, "writing %s", KC__QS(path));
  FILE* f = fopen(path, "wb");
  if (!f && errno == EISDIR) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "writing %s: it is a directory, expected a file "
                            "(or nothing) there",
                            KC__QS(path));
  }
  if (!f) return kc_status_add_context(errno_status(errno, "cannot create"),
                                       "writing %s", KC__QS(path));
  st = kc_tensor_write_npy_stream(f, t);
  if (fclose(f) != 0 && !st) st = errno_status(errno, "write failed");
  if (st) {
    remove(path); /* no half-written file left behind */
    return kc_status_add_context(st, "writing %s", KC__QS(path));
  }
  return NULL;
}
