/*
 * test_npy.c — the CLI's .npy reader and writer, compiled in with npy.c.
 *
 *   test_npy DIR    (DIR: an existing directory for scratch files)
 *
 * Round trips every element type, reads headers written the ways NumPy
 * (old and new) writes them, and feeds the reader broken files, each of
 * which must give the expected status code and message and leak nothing
 * (every tensor comes from a counting allocator).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kcall/kcall.h>


static const char* g_dir;
static int g_failures;
static kc_counting_allocator* g_counter;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      ++g_failures;                                        \
    }                                                      \
  } while (0)

static const kc_allocator* alloc(void) {
  return kc_counting_allocator_get_allocator(g_counter);
}

static void path_for(const char* name, char* buf, size_t cap) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

static void write_bytes(const char* path, const void* data, size_t size) {
  FILE* f = fopen(path, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size)) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

/* A file with the given version, header text (padded as NumPy pads it
 * unless `raw`), then `data_size` bytes of data. */
static void write_npy(const char* path, int major, const char* dict,
                      size_t data_size, bool raw) {
  size_t len_bytes = major == 1 ? 2 : 4;
  size_t dict_len = strlen(dict);
  size_t header_len = dict_len;
  if (!raw) header_len = (6 + 2 + len_bytes + dict_len + 1 + 63) / 64 * 64 -
                         (6 + 2 + len_bytes);
  size_t total = 8 + len_bytes + header_len + data_size;
  unsigned char* buf = calloc(1, total);
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  for (size_t i = 0; i < len_bytes; ++i) {
    buf[8 + i] = (unsigned char)(header_len >> (8 * i));
  }
  memcpy(buf + 8 + len_bytes, dict, dict_len);
  if (!raw) {
    memset(buf + 8 + len_bytes + dict_len, ' ', header_len - dict_len - 1);
    buf[8 + len_bytes + header_len - 1] = '\n';
  }
  for (size_t i = 0; i < data_size; ++i) {
    buf[8 + len_bytes + header_len + i] = (unsigned char)i;
  }
  write_bytes(path, buf, total);
  free(buf);
}

/* A string literal's bytes, without the terminating NUL. */
#define WRITE_LIT(path, lit) write_bytes(path, lit, sizeof(lit) - 1)

static kc_tensor* read_ok(const char* path) {
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_read_npy(path, alloc(), &t);
  if (st) {
    char msg[512];
    kc_status_format(st, msg, sizeof msg);
    CHECK(false, "%s", msg);
    kc_status_destroy(st);
  }
  return t;
}

/* Reads `path` and expects `code` with `needle` in the formatted text. */
static void read_fails(const char* path, kc_status_code code,
                       const char* needle) {
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_read_npy(path, alloc(), &t);
  char msg[512] = "OK";
  if (st) kc_status_format(st, msg, sizeof msg);
  CHECK(st && kc_status_get_code(st) == code,
        "%s: expected %s, got %s", path, kc_status_code_name(code), msg);
  CHECK(strstr(msg, needle) != NULL, "'%s' not in '%s'", needle, msg);
  char quoted[KC_QUOTED_CAP];
  kc_sv_format_quoted(kc_sv(path), quoted, sizeof quoted);
  CHECK(strstr(msg, quoted) != NULL, "the path is not in '%s'", msg);
  CHECK(t == NULL, "a tensor came back with an error");
  kc_status_destroy(st);
}

static void test_round_trip(void) {
  static const char* const types[] = {"f16", "f32", "f64", "i8",  "i16", "i32", "i64",
                                      "u8",  "u16", "u32", "u64", "bool", "c64", "c128"};
  static const int64_t shapes[][3] = {{2, 3, 0}, {5, 0, 0}, {0, 0, 0}, {0, 4, 0}};
  static const int32_t ranks[] = {2, 1, 0, 2};
  char path[1024];
  path_for("round_trip.npy", path, sizeof path);
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ++ti) {
    DLDataType dtype;
    kc_status* st = kc_dtype_parse(kc_sv(types[ti]), &dtype);
    CHECK(!st, "dtype %s", types[ti]);
    kc_status_destroy(st);
    for (size_t si = 0; si < 4; ++si) {
      kc_tensor* t = NULL;
      st = kc_tensor_create(alloc(), shapes[si], ranks[si], dtype,
                            kc_device_cpu(), &t);
      CHECK(!st, "create");
      const DLTensor* dl = kc_tensor_get_dltensor(t);
      size_t size = (size_t)kc_dltensor_get_numel(dl) * kc_dtype_get_size(dtype);
      for (size_t i = 0; i < size; ++i) {
        ((unsigned char*)dl->data)[i] = (unsigned char)(i * 7 + 1);
      }
      st = kc_tensor_write_npy(path, dl);
      CHECK(!st, "write %s", types[ti]);
      kc_status_destroy(st);
      kc_tensor* back = read_ok(path);
      if (back) {
        const DLTensor* b = kc_tensor_get_dltensor(back);
        CHECK(kc_dtype_equal(b->dtype, dtype), "dtype %s", types[ti]);
        CHECK(b->ndim == dl->ndim, "rank");
        for (int32_t d = 0; d < b->ndim && d < dl->ndim; ++d) {
          CHECK(b->shape[d] == dl->shape[d], "dim %d", (int)d);
        }
        CHECK(size == 0 || memcmp(b->data, dl->data, size) == 0, "data %s",
              types[ti]);
      }
      kc_object_release(KC_OBJECT(back));
      kc_object_release(KC_OBJECT(t));
    }
  }
}

/* What the writer puts before the data: the layout NumPy's np.save uses. */
static void test_written_header(void) {
  char path[1024];
  path_for("header.npy", path, sizeof path);
  int64_t shape[1] = {3};
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_create(alloc(), shape, 1, kc_dtype_make(kDLFloat, 32, 1),
                                   kc_device_cpu(), &t);
  CHECK(!st, "create");
  float* f = kc_tensor_get_dltensor(t)->data;
  f[0] = 1.0f;
  f[1] = 2.0f;
  f[2] = 3.0f;
  st = kc_tensor_write_npy(path, kc_tensor_get_dltensor(t));
  CHECK(!st, "write");
  kc_object_release(KC_OBJECT(t));
  static const char want[] =
      "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, "
      "'shape': (3,), }";
  unsigned char got[128 + 12];
  FILE* in = fopen(path, "rb");
  size_t n = in ? fread(got, 1, sizeof got, in) : 0;
  if (in) fclose(in);
  CHECK(n == 140, "file size %zu", n);
  CHECK(memcmp(got, want, sizeof want - 1) == 0, "header start");
  CHECK(got[127] == '\n' && got[126] == ' ', "header padding");
  float back[3];
  memcpy(back, got + 128, sizeof back);
  CHECK(back[0] == 1.0f && back[1] == 2.0f && back[2] == 3.0f, "data");

  /* Complex elements take NumPy's names. */
  static const struct {
    uint8_t bits;
    const char* descr;
  } complex_types[] = {{64, "{'descr': '<c8', "}, {128, "{'descr': '<c16', "}};
  for (size_t i = 0; i < sizeof complex_types / sizeof complex_types[0]; ++i) {
    st = kc_tensor_create(alloc(), shape, 1, kc_dtype_make(kDLComplex, complex_types[i].bits, 1),
                          kc_device_cpu(), &t);
    CHECK(!st, "create");
    memset(kc_tensor_get_dltensor(t)->data, 0, 3u * complex_types[i].bits / 8);
    st = kc_tensor_write_npy(path, kc_tensor_get_dltensor(t));
    CHECK(!st, "write");
    kc_object_release(KC_OBJECT(t));
    in = fopen(path, "rb");
    n = in ? fread(got, 1, sizeof got, in) : 0;
    if (in) fclose(in);
    size_t len = strlen(complex_types[i].descr);
    CHECK(n > 10 + len && memcmp(got + 10, complex_types[i].descr, len) == 0, "%s",
          complex_types[i].descr);
  }
}

/* Headers as NumPy versions have written them, and as a person might. */
static void test_header_forms(void) {
  static const struct {
    int major;
    const char* dict;
    size_t data;
    int32_t ndim;
    int64_t dim0;
  } cases[] = {
      {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 24, 1, 3},
      {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3)}", 24, 2, 2},
      {1, "{\"descr\": \"|u1\", \"fortran_order\": False, \"shape\": (4,)}", 4, 1, 4},
      {1, "{'shape': (2L, 2L), 'fortran_order': False, 'descr': '<i2'}", 8, 2, 2},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, 0, 0},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5)}", 20, 1, 5},
      {1, "{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }", 4, 1, 1},
      {1, "{'descr': '>i1', 'fortran_order': False, 'shape': (1,), }", 1, 1, 1},
      {1, "{'descr': '|b1', 'fortran_order': False, 'shape': (0, 7), }", 0, 2, 0},
      {2, "{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }", 16, 1, 2},
      {3, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", 4, 1, 2},
  };
  char path[1024];
  path_for("form.npy", path, sizeof path);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    write_npy(path, cases[i].major, cases[i].dict, cases[i].data, false);
    kc_tensor* t = read_ok(path);
    if (!t) {
      fprintf(stderr, "  (case %zu: %s)\n", i, cases[i].dict);
      continue;
    }
    const DLTensor* dl = kc_tensor_get_dltensor(t);
    CHECK(dl->ndim == cases[i].ndim, "case %zu rank %d", i, (int)dl->ndim);
    if (dl->ndim > 0) CHECK(dl->shape[0] == cases[i].dim0, "case %zu dim", i);
    if (cases[i].data > 0) {
      CHECK(((unsigned char*)dl->data)[cases[i].data - 1] ==
                (unsigned char)(cases[i].data - 1),
            "case %zu data", i);
    }
    kc_object_release(KC_OBJECT(t));
  }
  /* No padding at all, not even the newline. */
  write_npy(path, 1, "{'descr':'<i8','fortran_order':False,'shape':(1,)}", 8, true);
  kc_object_release(KC_OBJECT(read_ok(path)));
}

static void test_malformed(void) {
  char path[1024];
  path_for("bad.npy", path, sizeof path);
  WRITE_LIT(path, "");
  read_fails(path, KC_INVALID_ARGUMENT, "empty");
  WRITE_LIT(path, "PK\x03\x04 a zip file");
  read_fails(path, KC_INVALID_ARGUMENT, "not a .npy file");
  WRITE_LIT(path, "\x93NUM");
  read_fails(path, KC_INVALID_ARGUMENT, "not a .npy file");
  WRITE_LIT(path, "\x93NUMPY\x01");
  read_fails(path, KC_INVALID_ARGUMENT, "truncated file: the version");
  WRITE_LIT(path, "\x93NUMPY\x01\x00\x10");
  read_fails(path, KC_INVALID_ARGUMENT, "truncated file: the header length");
  WRITE_LIT(path, "\x93NUMPY\x01\x00\x40\x00{'descr'");
  read_fails(path, KC_INVALID_ARGUMENT, "truncated file: the header needs 64");
  WRITE_LIT(path, "\x93NUMPY\x02\x00\x00\x00\x00\x40{");
  read_fails(path, KC_INVALID_ARGUMENT, "too long");
  WRITE_LIT(path, "\x93NUMPY\x02\x00\xff\xff\xff\xff{");
  read_fails(path, KC_INVALID_ARGUMENT, "too long");
  WRITE_LIT(path, "\x93NUMPY\x04\x00\x00\x00\x00\x00");
  read_fails(path, KC_UNIMPLEMENTED, "version 4.0");
  WRITE_LIT(path, "\x93NUMPY\x00\x01\x00\x00");
  read_fails(path, KC_UNIMPLEMENTED, "version 0.1");

  static const struct {
    const char* dict;
    size_t data;
    kc_status_code code;
    const char* needle;
  } cases[] = {
      {"", 0, KC_INVALID_ARGUMENT, "expected '{', found its end"},
      {"['descr']", 0, KC_INVALID_ARGUMENT, "expected '{'"},
      {"{'descr': '<f4', 'shape': (1,)}", 4, KC_INVALID_ARGUMENT,
       "no 'fortran_order' key"},
      {"{'descr': '<f4', 'fortran_order': False}", 4, KC_INVALID_ARGUMENT,
       "no 'shape' key"},
      {"{'fortran_order': False, 'shape': (1,)}", 4, KC_INVALID_ARGUMENT,
       "no 'descr' key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4,
       KC_INVALID_ARGUMENT, "unknown key 'x'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
       4, KC_INVALID_ARGUMENT, "'descr' appears twice"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", 16,
       KC_UNIMPLEMENTED, "Fortran"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4,
       KC_INVALID_ARGUMENT, "True or False"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}", 4,
       KC_UNIMPLEMENTED, "big-endian"},
      {"{'descr': '>i8', 'fortran_order': False, 'shape': (1,)}", 8,
       KC_UNIMPLEMENTED, "astype('<i8')"},
      {"{'descr': '>c8', 'fortran_order': False, 'shape': (1,)}", 8,
       KC_UNIMPLEMENTED, "astype('<c8')"},
      {"{'descr': '<c4', 'fortran_order': False, 'shape': (1,)}", 4,
       KC_UNIMPLEMENTED, "'<c4' is not supported"},
      {"{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}", 12,
       KC_UNIMPLEMENTED, "'<U3' is not supported"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", 8,
       KC_UNIMPLEMENTED, "'|O' is not supported"},
      {"{'descr': '<f99999999999', 'fortran_order': False, 'shape': (1,)}", 8,
       KC_UNIMPLEMENTED, "is not supported"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", 4,
       KC_UNIMPLEMENTED, "structured"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4,
       KC_INVALID_ARGUMENT, "non-negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, x)}", 4,
       KC_INVALID_ARGUMENT, "non-negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", 4,
       KC_INVALID_ARGUMENT, "',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(4611686018427387904, 4611686018427387904)}",
       4, KC_OUT_OF_RANGE, "overflows"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       4, KC_OUT_OF_RANGE, "64 bits"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,"
       "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}",
       4, KC_OUT_OF_RANGE, "more than 32 dimensions"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}", 15,
       KC_INVALID_ARGUMENT, "the data is 15 bytes but the shape needs 16"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}", 17,
       KC_INVALID_ARGUMENT, "the data is 17 bytes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x", 16,
       KC_INVALID_ARGUMENT, "nothing after '}'"},
      {"{'descr: '<f4', 'fortran_order': False, 'shape': (4,)}", 16,
       KC_INVALID_ARGUMENT, "':' after a key"},
      {"{'descr': '<f4", 16, KC_INVALID_ARGUMENT, "closing quote"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)", 16,
       KC_INVALID_ARGUMENT, "',' or '}'"},
      {"{'descr': '<f4' 'fortran_order': False}", 16, KC_INVALID_ARGUMENT,
       "',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}\x01", 16,
       KC_INVALID_ARGUMENT, "found '\\x01'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    write_npy(path, 1, cases[i].dict, cases[i].data, false);
    read_fails(path, cases[i].code, cases[i].needle);
  }

  /* A NUL inside the dtype string: refused, shown escaped, with its byte
   * position in the header (not printed as '<f' as if the rest were not
   * there). Other control bytes, and those in keys, too. */
  static const struct {
    const char header[64];
    size_t size;
    const char* needle;
  } controls[] = {
      {"{'descr': '<f\0004', 'fortran_order': False, 'shape': (1,)}", 58,
       "malformed header: the dtype string '<f\\x004' holds byte 0x00 at byte 13 "
       "of the header; expected printable text"},
      {"{'descr': '<f4\t', 'fortran_order': False, 'shape': (1,)}", 58,
       "the dtype string '<f4\\t' holds byte 0x09 at byte 14"},
      {"{'desc\033r': '<f4', 'fortran_order': False, 'shape': (1,)}", 58,
       "a key 'desc\\x1br' holds byte 0x1b at byte 6"},
  };
  for (size_t i = 0; i < sizeof controls / sizeof controls[0]; ++i) {
    unsigned char file[256];
    size_t n = controls[i].size;
    size_t header_len = (10 + n + 1 + 63) / 64 * 64 - 10;
    memcpy(file, "\x93NUMPY\x01\x00", 8);
    file[8] = (unsigned char)header_len;
    file[9] = 0;
    memcpy(file + 10, controls[i].header, n);
    memset(file + 10 + n, ' ', header_len - n - 1);
    file[10 + header_len - 1] = '\n';
    memset(file + 10 + header_len, 0, 4);
    write_bytes(path, file, 10 + header_len + 4);
    read_fails(path, KC_INVALID_ARGUMENT, controls[i].needle);
  }
}

static void test_files(void) {
  char path[1024];
  path_for("no-such-dir/x.npy", path, sizeof path);
  read_fails(path, KC_NOT_FOUND, "cannot open");

  int64_t shape[1] = {2};
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_create(alloc(), shape, 1, kc_dtype_make(kDLFloat, 32, 1),
                                   kc_device_cpu(), &t);
  CHECK(!st, "create");
  st = kc_tensor_write_npy(path, kc_tensor_get_dltensor(t));
  CHECK(kc_status_get_code(st) == KC_NOT_FOUND, "write into a missing dir");
  kc_status_destroy(st);
  kc_object_release(KC_OBJECT(t));

  /* An element type .npy has no name for (an 8-bit float). */
  uint8_t bytes[4] = {0};
  DLTensor f8 = {.data = bytes, .device = {kDLCPU, 0}, .ndim = 1,
                 .dtype = {kDLFloat, 8, 1}, .shape = shape};
  path_for("f8.npy", path, sizeof path);
  st = kc_tensor_write_npy(path, &f8);
  char msg[256] = "OK";
  if (st) kc_status_format(st, msg, sizeof msg);
  CHECK(kc_status_get_code(st) == KC_UNIMPLEMENTED && strstr(msg, ".npy has no type for") &&
            strstr(msg, path),
        "f8: %s", msg);
  FILE* left = fopen(path, "rb");
  CHECK(left == NULL, "a tensor that cannot be written left a file");
  if (left) fclose(left);
  kc_status_destroy(st);

  /* bf16 goes out as 'bfloat16' (ml_dtypes' name) and comes back. */
  t = NULL;
  st = kc_tensor_create(alloc(), shape, 1, kc_dtype_make(kDLBfloat, 16, 1),
                        kc_device_cpu(), &t);
  CHECK(!st, "create");
  uint16_t* h = kc_tensor_get_dltensor(t)->data;
  for (int64_t i = 0; i < shape[0]; ++i) h[i] = (uint16_t)(0x3F80 + i); /* 1.0, ... */
  path_for("bf16.npy", path, sizeof path);
  st = kc_tensor_write_npy(path, kc_tensor_get_dltensor(t));
  CHECK(!st, "write bf16");
  kc_status_destroy(st);
  kc_tensor* back = NULL;
  st = kc_tensor_read_npy(path, alloc(), &back);
  CHECK(!st && back, "read bf16 back");
  if (back) {
    const DLTensor* b = kc_tensor_get_dltensor(back);
    CHECK(b->dtype.code == kDLBfloat && b->dtype.bits == 16 && b->ndim == 1 &&
              b->shape[0] == shape[0] &&
              memcmp(b->data, h, (size_t)shape[0] * sizeof *h) == 0,
          "bf16 round trip");
    kc_object_release(KC_OBJECT(back));
  }
  kc_status_destroy(st);
  FILE* f = fopen(path, "rb");
  char head[128] = {0};
  CHECK(f && fread(head, 1, sizeof head - 1, f) > 0 && strstr(head + 10, "'descr': 'bfloat16'"),
        "bf16 descr");
  if (f) fclose(f);
  kc_object_release(KC_OBJECT(t));
}

/* The stream forms: from and to the current position of an open stream,
 * which stays open; messages name no path. */
static void test_streams(void) {
  FILE* f = tmpfile();
  if (!f) {
    fprintf(stderr, "cannot make a temporary file\n");
    exit(2);
  }
  fputs("junk", f); /* before the file: the reader starts where f is */
  long start = ftell(f);
  int64_t shape[2] = {2, 2};
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_create(alloc(), shape, 2, kc_dtype_make(kDLInt, 16, 1),
                                   kc_device_cpu(), &t);
  CHECK(!st, "create");
  int16_t* v = kc_tensor_get_dltensor(t)->data;
  for (int i = 0; i < 4; ++i) v[i] = (int16_t)(i * 1000 - 1500);
  st = kc_tensor_write_npy_stream(f, kc_tensor_get_dltensor(t));
  CHECK(!st, "write_stream");
  kc_status_destroy(st);
  CHECK(ftell(f) == start + 128 + 8, "wrote %ld bytes", ftell(f) - start);
  fseek(f, start, SEEK_SET);
  kc_tensor* back = NULL;
  st = kc_tensor_read_npy_stream(f, alloc(), &back);
  CHECK(!st && back, "read_stream");
  kc_status_destroy(st);
  if (back) {
    const DLTensor* b = kc_tensor_get_dltensor(back);
    CHECK(b->ndim == 2 && b->shape[0] == 2 && b->shape[1] == 2, "shape");
    CHECK(memcmp(b->data, v, 4 * sizeof *v) == 0, "data");
  }
  CHECK(fputc('x', f) != EOF, "the stream is still open");
  kc_object_release(KC_OBJECT(back));
  kc_object_release(KC_OBJECT(t));

  /* Data after the tensor's: the data must end the stream. */
  fseek(f, start, SEEK_SET);
  back = NULL;
  st = kc_tensor_read_npy_stream(f, alloc(), &back);
  char msg[256] = "OK";
  if (st) kc_status_format(st, msg, sizeof msg);
  CHECK(kc_status_get_code(st) == KC_INVALID_ARGUMENT && back == NULL &&
            strstr(msg, "the data is 9 bytes but the shape needs 8") &&
            !strstr(msg, "reading"),
        "%s", msg);
  kc_status_destroy(st);
  fclose(f);

  st = kc_tensor_read_npy_stream(NULL, alloc(), &back);
  CHECK(kc_status_get_code(st) == KC_INVALID_ARGUMENT, "NULL stream");
  kc_status_destroy(st);
  st = kc_tensor_write_npy_stream(NULL, NULL);
  CHECK(kc_status_get_code(st) == KC_INVALID_ARGUMENT, "NULL stream");
  kc_status_destroy(st);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_npy SCRATCH_DIR\n");
    return 2;
  }
  g_dir = argv[1];
  kc_status* st = kc_counting_allocator_create(&g_counter);
  if (st) return 2;
  test_round_trip();
  test_written_header();
  test_header_forms();
  test_malformed();
  test_files();
  test_streams();
  kc_alloc_stats stats = {0};
  stats.struct_size = sizeof stats;
  kc_counting_allocator_query(g_counter, &stats);
  CHECK(stats.live_blocks == 0 && stats.bad_frees == 0,
        "%lld blocks live, %lld bad frees", (long long)stats.live_blocks,
        (long long)stats.bad_frees);
  kc_counting_allocator_destroy(g_counter);
  if (g_failures) {
    fprintf(stderr, "test_npy: %d checks failed\n", g_failures);
    return 1;
  }
  printf("test_npy: all checks passed\n");
  return 0;
}
