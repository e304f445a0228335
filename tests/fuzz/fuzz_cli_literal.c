/*
 * fuzz_cli_literal.c — how the kcall tool reads values written on its
 * command line: `kcall call` arguments (tools/kcall/parse_arg.c), tensor
 * literals such as f32[2,2]:1,2,3,4 (tensor_literal.c), and `kcall run
 * --input NAME=VALUE` scalars and lists (run_inputs.c).
 *
 * The input is one argument, up to its first NUL byte. A value it parses
 * to must print (as `kcall call` prints results) to text that parses back
 * to the same value; a tensor literal's elements must be what its words
 * say, each read on its own. The same text is then given as every input
 * of a program with one parameter of each dtype `kcall run` can fill,
 * when `kcall run` would take it for a literal rather than a file name.
 */
#include <errno.h>
#include <math.h>

#include "cli.h"
#include "fuzz.h"
#include "run.h"

/* ---- kcall call ------------------------------------------------------------- */

static char* kf_print(const kc_any* v) {
  char* buf = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  KF_ASSERT(f != NULL);
  cli_print_value(f, v);
  KF_ASSERT(fclose(f) == 0);
  return buf;
}

/* Bitwise equal, or both NaN (a literal has no NaN payloads). */
static bool kf_same_double(double a, double b) {
  return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* Two elements of type `dtype`, at p and q, hold the same value. */
static bool kf_same_element(DLDataType dtype, const void* p, const void* q) {
  if (dtype.code == kDLFloat && dtype.bits == 32) {
    float x, y;
    memcpy(&x, p, 4);
    memcpy(&y, q, 4);
    return kf_same_double(x, y);
  }
  if (dtype.code == kDLFloat && dtype.bits == 64) {
    double x, y;
    memcpy(&x, p, 8);
    memcpy(&y, q, 8);
    return kf_same_double(x, y);
  }
  return memcmp(p, q, kc_dtype_get_size(dtype)) == 0;
}

static const void* kf_element(const DLTensor* t, int64_t i) {
  return (const char*)t->data + (size_t)i * kc_dtype_get_size(t->dtype);
}

static void kf_same_tensor(const DLTensor* a, const DLTensor* b) {
  KF_ASSERT(kc_dtype_equal(a->dtype, b->dtype) && a->ndim == b->ndim);
  for (int32_t d = 0; d < a->ndim; ++d) KF_ASSERT(a->shape[d] == b->shape[d]);
  int64_t n = kc_dltensor_get_numel(a);
  for (int64_t i = 0; i < n; ++i) {
    KF_ASSERT(kf_same_element(a->dtype, kf_element(a, i), kf_element(b, i)));
  }
}

/* What `word` means as an element of `t`'s dtype, read here on its own
 * with the C library; false when the word is not one. */
static bool kf_reference(const DLTensor* t, const char* word, unsigned char out[8]) {
  char* end = NULL;
  errno = 0;
  memset(out, 0, 8);
  if (t->dtype.code == kDLFloat) {
    double d = strtod(word, &end);
    if (end == word || *end) return false;
    if (t->dtype.bits == 32) {
      float f = (float)d;
      memcpy(out, &f, 4);
    } else {
      memcpy(out, &d, 8);
    }
    return true;
  }
  if (t->dtype.code == kDLBool) {
    bool yes = !strcmp(word, "true") || !strcmp(word, "1");
    bool no = !strcmp(word, "false") || !strcmp(word, "0");
    out[0] = yes;
    return yes || no;
  }
  if (t->dtype.code == kDLUInt && word[0] == '-') return false;
  long long s = 0;
  unsigned long long u = 0;
  if (t->dtype.code == kDLInt) {
    s = strtoll(word, &end, 10);
    u = (unsigned long long)s;
  } else {
    u = strtoull(word, &end, 10);
  }
  if (end == word || *end || errno) return false;
  memcpy(out, &u, 8); /* little-endian: the low bytes are the element */
  return true;
}

/* Checks a tensor literal's elements against its words. */
static void kf_check_literal(const char* text, const DLTensor* t) {
  const char* p = strstr(text, "]:");
  KF_ASSERT(p != NULL);
  p += 2;
  size_t words = 1;
  for (const char* c = p; *c; ++c) words += *c == ',';
  int64_t n = kc_dltensor_get_numel(t);
  /* One word fills the whole tensor. */
  for (int64_t i = 0; i < n && (words > 1 || i == 0); ++i) {
    size_t len = strcspn(p, ",");
    char* word = kf_cstr((const uint8_t*)p, len);
    unsigned char want[8];
    KF_ASSERT(kf_reference(t, word, want));
    if (!kf_same_element(t->dtype, kf_element(t, i), want)) {
      fprintf(stderr, "fuzz_cli_literal: element %lld is not '%.80s'\n",
              (long long)i, word);
      abort();
    }
    free(word);
    p += len + (p[len] == ',');
  }
  for (int64_t i = 1; i < n && words == 1; ++i) {
    KF_ASSERT(memcmp(kf_element(t, i), t->data, kc_dtype_get_size(t->dtype)) == 0);
  }
}

/* Elements a tensor literal may ask for here. A literal makes the tensor
 * its shape says, as it should; the point here is the parser, not the
 * memory. */
#define KF_MAX_ELEMENTS (1 << 20)

/* True when the first "[...]" of `text` reads as dims whose product
 * passes KF_MAX_ELEMENTS. */
static bool kf_too_big(const char* text) {
  const char* p = strchr(text, '[');
  if (!p) return false;
  double product = 1;
  double dim = 0;
  for (++p; (*p >= '0' && *p <= '9') || *p == ','; ++p) {
    if (*p == ',') {
      product *= dim;
      dim = 0;
    } else {
      dim = dim * 10 + (*p - '0');
    }
  }
  return product * dim > KF_MAX_ELEMENTS;
}

static void kf_call_arg(const char* text) {
  if (kf_too_big(text)) return;
  kc_any v;
  if (kf_refused(cli_parse_arg(text, 0, &v))) return;
  char* printed = kf_print(&v);
  int32_t type = v.type_index;
  if (type == KC_TYPE_TENSOR) {
    const DLTensor* t = kc_tensor_get_dltensor((const kc_tensor*)(void*)v.u.v_obj);
    kf_check_literal(text, t);
  }
  /* A top-level string prints as it is, and may then read as anything. */
  if (type != KC_TYPE_RAW_STR && type != KC_TYPE_SMALL_STR && type != KC_TYPE_STR &&
      strchr(printed, '<') == NULL) {
    kc_any again;
    kc_status* st = cli_parse_arg(printed, 0, &again);
    if (st) fprintf(stderr, "fuzz_cli_literal: '%s' printed as '%s'\n", text, printed);
    KF_ASSERT(!kf_refused(st));
    KF_ASSERT(again.type_index == type);
    if (type == KC_TYPE_TENSOR) {
      kf_same_tensor(kc_tensor_get_dltensor((const kc_tensor*)(void*)v.u.v_obj),
                     kc_tensor_get_dltensor((const kc_tensor*)(void*)again.u.v_obj));
    } else if (type == KC_TYPE_FLOAT) {
      KF_ASSERT(kf_same_double(v.u.v_float64, again.u.v_float64));
    } else {
      KF_ASSERT(v.u.v_int64 == again.u.v_int64);
    }
    kc_any_release(&again);
  }
  free(printed);
  kc_any_release(&v);
}

/* ---- kcall run --input ------------------------------------------------------ */

static const char kProgram[] =
    "HloModule literals\n"
    "ENTRY main {\n"
    "  f32 = f32[2,3] parameter(0)\n"
    "  f64 = f64[] parameter(1)\n"
    "  s8 = s8[4] parameter(2)\n"
    "  u64 = u64[2] parameter(3)\n"
    "  pred = pred[3] parameter(4)\n"
    "  f16 = f16[2] parameter(5)\n"
    "  bf16 = bf16[1,2] parameter(6)\n"
    "  s64 = s64[2,1,2] parameter(7)\n"
    "  u16 = u16[0] parameter(8)\n"
    "  ROOT t = (f32[2,3], f64[], s8[4], u64[2], pred[3], f16[2], bf16[1,2],"
    " s64[2,1,2], u16[0]) tuple(f32, f64, s8, u64, pred, f16, bf16, s64, u16)\n"
    "}\n";

typedef struct kf_run {
  kc_program* program;
  kc_executable* exe;
} kf_run;

static const kf_run* kf_run_program(void) {
  static kf_run run = {NULL, NULL};
  if (!run.exe) {
    KF_ASSERT(!kf_refused(kc_program_parse(kc_sv(kProgram), &run.program)));
    KF_ASSERT(!kf_refused(kc_program_compile(run.program, NULL, &run.exe)));
  }
  return &run;
}

/* What `kcall run` takes for a literal rather than a file name (the rule
 * of run_inputs.c, restated: anything else would be opened as a file). */
static bool kf_is_literal(const char* value) {
  if (value[0] == '[') return true;
  if (!strcmp(value, "true") || !strcmp(value, "false")) return true;
  if (!value[0] || strchr(" \t\n\v\f\r", value[0])) return false;
  char* end = NULL;
  (void)strtod(value, &end);
  return end != value && *end == '\0';
}

static void kf_run_inputs(const char* text) {
  if (!kf_is_literal(text)) return;
  const kf_run* run = kf_run_program();
  run_inputs in;
  KF_ASSERT(!kf_refused(run_inputs_init(&in, run->program, run->exe)));
  size_t n = strlen(text);
  for (size_t i = 0; i < in.count; ++i) {
    size_t cap = strlen(in.leaves[i].name) + 1 + n + 1;
    char* spec = malloc(cap);
    KF_ASSERT(spec != NULL);
    snprintf(spec, cap, "%s=%s", in.leaves[i].name, text);
    if (!kf_refused(run_inputs_set(&in, spec))) {
      const DLTensor* t = kc_tensor_get_dltensor(in.leaves[i].tensor);
      KF_ASSERT(t->ndim == kc_shape_get_rank(in.leaves[i].shape));
      KF_ASSERT(kc_dtype_equal(t->dtype, kc_shape_get_dtype(in.leaves[i].shape)));
      /* A second value for the same input is refused. */
      KF_ASSERT(kf_refused(run_inputs_set(&in, spec)));
    }
    free(spec);
  }
  run_inputs_deinit(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text = kf_cstr(data, size);
  kf_call_arg(text);
  kf_run_inputs(text);
  free(text);
  return 0;
}
