/* StableHLO portable artifacts (src/program/frontend/stablehlo/bytecode.c, vhlo.c,
 * vhlo_ops.c): the MLIR bytecode jax.export deploys, read by
 * kc_program_parse through the StableHLO text reader. The fixtures of
 * tests/fixtures/stablehlo_bytecode (tests/stablehlo_bytecode/generate.py)
 * run as JAX ran them and read as the same program as their text; cut
 * short, corrupted, or without memory they are refused, never crashing
 * or leaking (run under valgrind by `valgrind -q --leak-check=full
 * kcall_tests stablehlo_bytecode_...`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

/* The cases generate.py writes, and the tolerance each is held to. */
static const struct {
  const char* name;
  double rtol, atol;
} kt_bc_cases[] = {
    {"mlp", 1e-5, 1e-6},  {"conv", 1e-5, 1e-5},           {"scan", 1e-5, 1e-6},
    {"cond", 1e-6, 1e-6}, {"sort", 0, 0},                 {"gather_scatter", 1e-6, 1e-6},
    {"top_k", 0, 0},      {"misc", 1e-5, 1e-5},          {"triangular", 1e-5, 1e-5},
    {"int4", 1e-6, 1e-6},  {"float8", 0, 0},
};

static void kt_bc_path(char* buf, size_t cap, const char* name, const char* suffix) {
  snprintf(buf, cap, "%s/%s%s", KT_STABLEHLO_BYTECODE_DIR, name, suffix);
}

/* The whole file at `path`, malloc'd; its size in *out_size. */
static unsigned char* kt_bc_read(const char* path, size_t* out_size) {
  FILE* f = fopen(path, "rb");
  KC_CHECK(f != NULL);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  KC_CHECK(n > 0);
  unsigned char* data = malloc((size_t)n);
  KC_CHECK(data != NULL);
  KC_CHECK(fread(data, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  *out_size = (size_t)n;
  return data;
}

static int64_t kt_bc_count(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

/* Element i of a float or complex tensor (part 0 real, 1 imaginary). */
static double kt_bc_real(const DLTensor* t, int64_t i, int part) {
  size_t bits = t->dtype.code == kDLComplex ? t->dtype.bits / 2u : t->dtype.bits;
  const char* p = (const char*)t->data + ((size_t)i * (t->dtype.code == kDLComplex ? 2 : 1) +
                                          (size_t)part) * (bits / 8);
  if (bits == 64) {
    double d;
    memcpy(&d, p, sizeof d);
    return d;
  }
  if (bits == 32) {
    float f;
    memcpy(&f, p, sizeof f);
    return f;
  }
  uint16_t h;
  memcpy(&h, p, sizeof h);
  uint32_t u = (uint32_t)h << 16; /* bf16; f16 outputs are not among the cases */
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* `got` is `want` (dtype, shape, and each element within the tolerance;
 * integers and bools exactly). */
static void kt_bc_check_close(const char* what, const DLTensor* got, const DLTensor* want,
                              double rtol, double atol) {
  KC_CHECK(got->dtype.code == want->dtype.code && got->dtype.bits == want->dtype.bits);
  KC_CHECK_INT(got->ndim, want->ndim);
  for (int32_t d = 0; d < got->ndim; ++d) KC_CHECK_INT(got->shape[d], want->shape[d]);
  int64_t n = kt_bc_count(want);
  bool floats = want->dtype.code == kDLFloat || want->dtype.code == kDLBfloat ||
                want->dtype.code == kDLComplex;
  if (!floats) {
    size_t width = (want->dtype.bits + 7u) / 8u;
    for (int64_t i = 0; i < n; ++i) {
      const unsigned char* g = (const unsigned char*)got->data + (size_t)i * width;
      const unsigned char* w = (const unsigned char*)want->data + (size_t)i * width;
      if (memcmp(g, w, width) != 0) {
        kt__fail(__FILE__, __LINE__, "%s: element %lld differs (first byte %#x, JAX's %#x)", what,
                 (long long)i, g[0], w[0]);
        return;
      }
    }
    return;
  }
  int parts = want->dtype.code == kDLComplex ? 2 : 1;
  for (int64_t i = 0; i < n; ++i) {
    for (int part = 0; part < parts; ++part) {
      double g = kt_bc_real(got, i, part), w = kt_bc_real(want, i, part);
      bool ok = isnan(w) ? isnan(g) : g == w || fabs(g - w) <= atol + rtol * fabs(w);
      if (!ok) {
        kt__fail(__FILE__, __LINE__, "%s: element %lld is %.9g, JAX's is %.9g", what,
                 (long long)i, g, w);
      }
    }
  }
}

/* Each case's file `suffix` (".bc", ".jax_exported") runs on the case's
 * inputs as JAX ran it. */
static void kt_bc_run_cases(const char* format) {
  for (size_t c = 0; c < sizeof kt_bc_cases / sizeof kt_bc_cases[0]; ++c) {
    const char* name = kt_bc_cases[c].name;
    char path[1024];
    kt_bc_path(path, sizeof path, name, format);
    kc_program* p = NULL;
    KC_CHECK_OK(kc_program_parse_file(path, &p));
    kc_executable* exe = NULL;
    KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
    kc_executable_info info = {.struct_size = sizeof info};
    kc_executable_query(exe, &info);
    KC_CHECK(info.num_inputs <= 8 && info.num_outputs <= 32);
    kc_tensor* in[8] = {NULL};
    kc_tensor* out[32] = {NULL};
    const DLTensor* dl[8] = {NULL};
    for (size_t i = 0; i < info.num_inputs; ++i) {
      char suffix[32];
      snprintf(suffix, sizeof suffix, ".input%zu.npy", i);
      kt_bc_path(path, sizeof path, name, suffix);
      KC_CHECK_OK(kc_tensor_read_npy(path, NULL, &in[i]));
      dl[i] = kc_tensor_get_dltensor(in[i]);
    }
    KC_CHECK_OK(kc_executable_execute(exe, dl, info.num_inputs, NULL, out));
    for (size_t i = 0; i < info.num_outputs; ++i) {
      char suffix[32], what[96];
      snprintf(suffix, sizeof suffix, ".output%zu.npy", i);
      snprintf(what, sizeof what, "%s output %zu", name, i);
      kt_bc_path(path, sizeof path, name, suffix);
      kc_tensor* want = NULL;
      KC_CHECK_OK(kc_tensor_read_npy(path, NULL, &want));
      kt_bc_check_close(what, kc_tensor_get_dltensor(out[i]), kc_tensor_get_dltensor(want),
                        kt_bc_cases[c].rtol, kt_bc_cases[c].atol);
      kc_object_release(KC_OBJECT(want));
    }
    kt_release(in, info.num_inputs);
    kt_release(out, info.num_outputs);
    kc_executable_destroy(exe);
    kc_program_destroy(p);
  }
}

KC_TEST(stablehlo_bytecode_fixtures_run_as_jax_ran_them) { kt_bc_run_cases(".bc"); }

/* ---- Exported.serialize() ------------------------------------------------ */

KC_TEST(stablehlo_serialized_exports_run_as_jax_ran_them) {
  /* The flatbuffer around each artifact, told by its content. */
  kt_bc_run_cases(".jax_exported");
}

/* mlp's outputs from `p` on mlp's inputs (batch rows of them), checked
 * against JAX's. */
static void kt_bc_check_mlp(kc_program* p, int64_t batch) {
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  kc_tensor* in[5] = {NULL};
  const DLTensor* dl[5];
  DLTensor first;
  char path[1024];
  for (int i = 0; i < 5; ++i) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".input%d.npy", i);
    kt_bc_path(path, sizeof path, "mlp", suffix);
    KC_CHECK_OK(kc_tensor_read_npy(path, NULL, &in[i]));
    dl[i] = kc_tensor_get_dltensor(in[i]);
  }
  int64_t first_shape[2] = {batch, dl[0]->shape[1]};
  first = *dl[0];
  first.shape = first_shape; /* the first rows: mlp's rows are independent */
  dl[0] = &first;
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, dl, 5, NULL, &out));
  kc_tensor* want = NULL;
  kt_bc_path(path, sizeof path, "mlp", ".output0.npy");
  KC_CHECK_OK(kc_tensor_read_npy(path, NULL, &want));
  const DLTensor* w = kc_tensor_get_dltensor(want);
  DLTensor rows = *w;
  int64_t rows_shape[2] = {batch, w->shape[1]};
  rows.shape = rows_shape;
  kt_bc_check_close("mlp", kc_tensor_get_dltensor(out), &rows, 1e-5, 1e-6);
  kc_object_release(KC_OBJECT(want));
  kc_object_release(KC_OBJECT(out));
  kt_release(in, 5);
  kc_executable_destroy(exe);
}

KC_TEST(stablehlo_programs_say_what_they_were_read_from) {
  static const struct {
    const char* file;
    const char* format;
  } cases[] = {
      {"mlp.mlir", "StableHLO text"},
      {"mlp.bc", "StableHLO portable artifact (StableHLO_v1."},
      {"mlp.jax_exported", "serialized jax.export (calling convention 10, StableHLO_v1."},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char path[1024];
    kt_bc_path(path, sizeof path, cases[i].file, "");
    kc_program* p = NULL;
    KC_CHECK_OK(kc_program_parse_file(path, &p));
    KC_CHECK_CONTAINS(kc_program_get_format(p), cases[i].format);
    kc_program_destroy(p);
  }
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"),
                               &p));
  KC_CHECK_STR(kc_program_get_format(p), "HLO text");
  kc_program_destroy(p);
  KC_CHECK_STR(kc_program_get_format(NULL), "built");
}

/* The outputs' names JAX gave them (jax.result_info), from each form; the
 * sort case has five outputs. None from HLO text or past the outputs. */
KC_TEST(stablehlo_programs_name_their_outputs) {
  static const char* const files[] = {"sort.mlir", "sort.bc", "sort.jax_exported"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    char path[1024];
    kt_bc_path(path, sizeof path, files[i], "");
    kc_program* p = NULL;
    KC_CHECK_OK(kc_program_parse_file(path, &p));
    for (size_t k = 0; k < 5; ++k) {
      char want[32];
      snprintf(want, sizeof want, "result[%zu]", k);
      KC_CHECK_STR(kc_program_get_output_name(p, k), want);
    }
    KC_CHECK(kc_program_get_output_name(p, 5) == NULL);
    kc_program_destroy(p);
  }
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(
      kc_sv("func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32> {jax.result_info = "
            "\"result['lo\\22git']\", mhlo.sharding = \"{replicated}\"}, tensor<2xf32>) {\n"
            "  return %x, %x : tensor<2xf32>, tensor<2xf32>\n}\n"),
      &p));
  KC_CHECK_STR(kc_program_get_output_name(p, 0), "result['lo\"git']");
  KC_CHECK(kc_program_get_output_name(p, 1) == NULL);
  kc_program_destroy(p);
  KC_CHECK_OK(kc_program_parse(kc_sv("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"),
                               &p));
  KC_CHECK(kc_program_get_output_name(p, 0) == NULL);
  kc_program_destroy(p);
  KC_CHECK(kc_program_get_output_name(NULL, 0) == NULL);
}

KC_TEST(stablehlo_serialized_export_for_several_platforms_runs_the_cpu_lowering) {
  /* Lowered for ["cpu", "cuda"]: the platform index argument is bound to
   * cpu's, so the program's parameters are mlp's five. */
  char path[1024];
  kt_bc_path(path, sizeof path, "mlp_cpu_cuda", ".jax_exported");
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse_file(path, &p));
  KC_CHECK_INT(kc_program_get_parameter_count(p), 5);
  kt_bc_check_mlp(p, 4);
  kc_program_destroy(p);
}

KC_TEST(stablehlo_serialized_shape_polymorphic_export_takes_its_shapes) {
  char path[1024];
  kt_bc_path(path, sizeof path, "mlp_batch", ".jax_exported");
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse_file(path, &p), KC_FAILED_PRECONDITION, "parameter 0",
                "in the module of the serialized jax.export");
  for (int64_t batch = 4; batch >= 2; batch -= 2) {
    int64_t dims[2] = {batch, 8};
    kc_shape* shape = NULL;
    KC_CHECK_OK(kc_shape_create_array((DLDataType){kDLFloat, 32, 1}, dims, 2, &shape));
    const kc_shape* shapes[1] = {shape};
    kc_parse_options o = {.struct_size = sizeof o, .parameter_shapes = shapes,
                          .num_parameter_shapes = 1};
    KC_CHECK_OK(kc_program_parse_file_with(path, &o, &p));
    kt_bc_check_mlp(p, batch);
    kc_program_destroy(p);
    kc_shape_destroy(shape);
  }
  /* An empty batch fails the module's shape assertion, with JAX's message. */
  int64_t empty[2] = {0, 8};
  kc_shape* shape = NULL;
  KC_CHECK_OK(kc_shape_create_array((DLDataType){kDLFloat, 32, 1}, empty, 2, &shape));
  const kc_shape* shapes[1] = {shape};
  kc_parse_options o = {.struct_size = sizeof o, .parameter_shapes = shapes,
                        .num_parameter_shapes = 1};
  KC_CHECK_CODE(kc_program_parse_file_with(path, &o, &p), KC_INVALID_ARGUMENT,
                "Expected value >= 1 for dimension variable 'b'");
  kc_shape_destroy(shape);
}

KC_TEST(stablehlo_serialized_export_sized_by_its_dimension_variables) {
  /* stack_batch's avals are "b, 4" and "2*b, 4": b = 3 makes them
   * [3,4] and [6,4], and its result [9,4]. */
  char path[1024];
  kt_bc_path(path, sizeof path, "stack_batch", ".jax_exported");
  const char* names[] = {"b"};
  int64_t values[] = {3};
  kc_parse_options o = {.struct_size = sizeof o, .dim_names = names, .dim_values = values,
                        .num_dims = 1};
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse_file_with(path, &o, &p));
  char text[64];
  kc_shape_format(kc_program_get_parameter_shape(p, 0), text, sizeof text);
  KC_CHECK_STR(text, "f32[3,4]");
  kc_shape_format(kc_program_get_parameter_shape(p, 1), text, sizeof text);
  KC_CHECK_STR(text, "f32[6,4]");
  kc_shape_format(kc_program_get_result_shape(p), text, sizeof text);
  KC_CHECK_STR(text, "f32[9,4]");
  kc_program_destroy(p);
  /* A variable not given, shapes and dims both, dims for another format,
   * NULL arrays. */
  const char* other[] = {"c"};
  o.dim_names = other;
  KC_CHECK_CODE(kc_program_parse_file_with(path, &o, &p), KC_INVALID_ARGUMENT,
                "parameter 0 (args[0]) dim 0 is 'b': no value is given for dimension variable "
                "'b'");
  o.dim_names = names;
  int64_t dims[2] = {3, 4};
  kc_shape* shape = NULL;
  KC_CHECK_OK(kc_shape_create_array((DLDataType){kDLFloat, 32, 1}, dims, 2, &shape));
  const kc_shape* shapes[1] = {shape};
  o.parameter_shapes = shapes;
  o.num_parameter_shapes = 1;
  KC_CHECK_CODE(kc_program_parse_file_with(path, &o, &p), KC_INVALID_ARGUMENT,
                "give parameter shapes or dimension variables, not both");
  o.parameter_shapes = NULL;
  o.num_parameter_shapes = 0;
  kt_bc_path(path, sizeof path, "mlp", ".bc");
  KC_CHECK_CODE(kc_program_parse_file_with(path, &o, &p), KC_INVALID_ARGUMENT,
                "dimension variables are read only for a serialized jax.export");
  o.dim_values = NULL;
  KC_CHECK_CODE(kc_program_parse_file_with(path, &o, &p), KC_INVALID_ARGUMENT,
                "dim_names or dim_values is NULL with num_dims 1");
  kc_shape_destroy(shape);
}

KC_TEST(stablehlo_serialized_exports_kcall_cannot_run_are_refused) {
  static const struct {
    const char* name;
    const char* needle;
  } cases[] = {
      {"effects", "1 ordered effect (<class '__main__.TestOrderedEffect'>), whose calls take "
                  "and return tokens, which kcall does not run"},
      {"convention_8", "calling convention version 8; kcall reads versions 9 to 10"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char path[1024];
    kt_bc_path(path, sizeof path, cases[i].name, ".jax_exported");
    kc_program* p = NULL;
    KC_CHECK_CODE(kc_program_parse_file(path, &p), KC_UNIMPLEMENTED, cases[i].needle);
    KC_CHECK(p == NULL);
  }
}

KC_TEST(stablehlo_serialized_export_cut_or_corrupted_never_crashes) {
  /* Every prefix, and every byte flipped: read, or refused (not as a
   * flatbuffer any more, it is read as HLO text and refused there),
   * never read past its end (valgrind sees the copies' exact sizes). */
  char path[1024];
  size_t size = 0;
  kt_bc_path(path, sizeof path, "top_k", ".jax_exported");
  unsigned char* data = kt_bc_read(path, &size);
  int64_t refused = 0, runs = 0;
  for (int pattern = 0; pattern < 3; ++pattern) {
    for (size_t i = 0; i < size; ++i) {
      size_t n = pattern == 0 ? i : size;
      unsigned char* copy = malloc(n ? n : 1);
      KC_CHECK(copy != NULL);
      memcpy(copy, data, n);
      if (pattern) copy[i] ^= pattern == 1 ? 0xFF : 0x01;
      kc_program* p = NULL;
      kc_status* st = kc_program_parse((kc_string_view){(const char*)copy, n}, &p);
      runs++;
      if (st) {
        kc_status_code code = kc_status_get_code(st);
        refused++;
        if (code != KC_INVALID_ARGUMENT && code != KC_UNIMPLEMENTED &&
            code != KC_RESOURCE_EXHAUSTED && code != KC_OUT_OF_RANGE) {
          kt__fail(__FILE__, __LINE__, "pattern %d at byte %zu: %s", pattern, i,
                   kc_status_get_message(st));
        }
      }
      kc_status_destroy(st);
      kc_program_destroy(p);
      free(copy);
    }
  }
  KC_CHECK(refused > (int64_t)size); /* every prefix at least */
  printf("%lld of %lld cut or corrupted serialized exports refused\n", (long long)refused,
         (long long)runs);
  free(data);
}

KC_TEST(stablehlo_bytecode_reads_as_its_text) {
  /* The artifact and exported.mlir_module() are one program: the same
   * parameters, result and instructions. (top_k's text calls chlo.top_k,
   * which the artifact holds as a composite with its decomposition: the
   * reader inlines the decomposition either way.) */
  for (size_t c = 0; c < sizeof kt_bc_cases / sizeof kt_bc_cases[0]; ++c) {
    const char* name = kt_bc_cases[c].name;
    char path[1024];
    kc_program* p[2] = {NULL, NULL};
    kt_bc_path(path, sizeof path, name, ".bc");
    KC_CHECK_OK(kc_program_parse_file(path, &p[0]));
    kt_bc_path(path, sizeof path, name, ".mlir");
    KC_CHECK_OK(kc_program_parse_file(path, &p[1]));
    KC_CHECK_STR(kc_program_get_name(p[0]), kc_program_get_name(p[1]));
    KC_CHECK_INT(kc_program_get_parameter_count(p[0]), kc_program_get_parameter_count(p[1]));
    for (size_t i = 0; i < kc_program_get_parameter_count(p[0]); ++i) {
      KC_CHECK(kc_shape_equal(kc_program_get_parameter_shape(p[0], i),
                              kc_program_get_parameter_shape(p[1], i)));
    }
    KC_CHECK(kc_shape_equal(kc_program_get_result_shape(p[0]),
                            kc_program_get_result_shape(p[1])));
    KC_CHECK_INT(kc_program_get_instruction_count(p[0]), kc_program_get_instruction_count(p[1]));
    kc_program_destroy(p[0]);
    kc_program_destroy(p[1]);
  }
}

/* The smallest fixture, for the byte-by-byte sweeps. */
#define KT_BC_SMALL "top_k"

KC_TEST(stablehlo_bytecode_cut_short_is_refused_at_every_length) {
  char path[1024];
  size_t size = 0;
  kt_bc_path(path, sizeof path, KT_BC_SMALL, ".bc");
  unsigned char* data = kt_bc_read(path, &size);
  /* From the magic number on: every shorter prefix is refused as bytecode
   * that ends too soon (naming where), never read past its end. */
  for (size_t n = 4; n < size; ++n) {
    unsigned char* copy = malloc(n); /* exactly n bytes: valgrind sees a read past them */
    KC_CHECK(copy != NULL);
    memcpy(copy, data, n);
    kc_program* p = NULL;
    kc_status* st = kc_program_parse((kc_string_view){(const char*)copy, n}, &p);
    if (!st || kc_status_get_code(st) != KC_INVALID_ARGUMENT ||
        !strstr(kc_status_get_message(st), "StableHLO bytecode, byte ")) {
      kt__fail(__FILE__, __LINE__, "the first %zu of %zu bytes: %s", n, size,
               st ? kc_status_get_message(st) : "parsed");
    }
    kc_status_destroy(st);
    kc_program_destroy(p);
    free(copy);
  }
  free(data);
}

KC_TEST(stablehlo_bytecode_corrupted_bytes_never_crash) {
  /* Each byte flipped (all its bits, then its lowest): whatever the
   * artifact then says is read, or refused as malformed bytecode, as
   * something without StableHLO text, or by the text reader. */
  char path[1024];
  size_t size = 0;
  kt_bc_path(path, sizeof path, KT_BC_SMALL, ".bc");
  unsigned char* data = kt_bc_read(path, &size);
  int64_t refused = 0;
  for (int pattern = 0; pattern < 2; ++pattern) {
    for (size_t i = 4; i < size; ++i) {
      unsigned char* copy = malloc(size);
      KC_CHECK(copy != NULL);
      memcpy(copy, data, size);
      copy[i] ^= pattern ? 0x01 : 0xFF;
      kc_program* p = NULL;
      kc_status* st = kc_program_parse((kc_string_view){(const char*)copy, size}, &p);
      if (st) {
        kc_status_code code = kc_status_get_code(st);
        refused++;
        if (code != KC_INVALID_ARGUMENT && code != KC_UNIMPLEMENTED &&
            code != KC_RESOURCE_EXHAUSTED && code != KC_OUT_OF_RANGE) {
          kt__fail(__FILE__, __LINE__, "byte %zu flipped: %s", i, kc_status_get_message(st));
        }
      }
      kc_status_destroy(st);
      kc_program_destroy(p);
      free(copy);
    }
  }
  KC_CHECK(refused > 0);
  printf("%lld of %zu corrupted artifacts refused\n", (long long)refused, 2 * (size - 4));
  free(data);
}

/* The fixture `name` with `from` replaced by `to` (as long) where it
 * first occurs, parsed: refused with `code` and `needle`. */
static void kt_bc_patched_fails(const char* name, const char* from, const char* to,
                                kc_status_code code, const char* needle) {
  char path[1024];
  size_t size = 0;
  kt_bc_path(path, sizeof path, name, ".bc");
  unsigned char* data = kt_bc_read(path, &size);
  size_t n = strlen(from);
  unsigned char* at = NULL;
  for (size_t i = 0; !at && i + n <= size; ++i) {
    if (memcmp(data + i, from, n) == 0) at = data + i;
  }
  KC_CHECK(at != NULL && strlen(to) == n);
  memcpy(at, to, n);
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse((kc_string_view){(const char*)data, size}, &p), code, needle);
  KC_CHECK(p == NULL);
  free(data);
}

KC_TEST(stablehlo_bytecode_refusals_name_what_and_where) {
  kc_program* p = NULL;
  /* Bytecode versions other than 5 and 6 (StableHLO 0.15 and later). */
  kt_bc_patched_fails("cond", "ML\xEFR\x0D", "ML\xEFR\x0F", KC_UNIMPLEMENTED,
                      "bytecode version 7 (byte 4)");
  /* An op without a row (its name changed in the string table). */
  kt_bc_patched_fails("mlp", "tanh_v2", "tanh_v9", KC_UNIMPLEMENTED,
                      "op vhlo.tanh_v9 (byte ");
  /* A dialect other than VHLO's. */
  kt_bc_patched_fails("cond", "vhlo", "xhlo", KC_UNIMPLEMENTED, "op xhlo.");
  /* The magic number alone, and after it a section that does not fit. */
  KC_CHECK_CODE(kc_program_parse(kc_sv("ML\xEFR"), &p), KC_INVALID_ARGUMENT,
                "StableHLO bytecode, byte 4: expected the bytecode version, got the end of "
                "the artifact");
  static const char bad_section[] = "ML\xEFR\x0Dproducer\0\x01\x7F";
  KC_CHECK_CODE(kc_program_parse((kc_string_view){bad_section, sizeof bad_section - 1}, &p),
                KC_INVALID_ARGUMENT, "byte 16: expected a section's data of 63 bytes, got 0");
  KC_CHECK(p == NULL);
}

/* Parses the fixture `ctx`, read beforehand. */
typedef struct kt_bc_blob {
  const unsigned char* data;
  size_t size;
} kt_bc_blob;

static kc_status* kt_bc_parse(const kt_bc_blob* b) {
  kc_program* p = NULL;
  kc_status* st = kc_program_parse((kc_string_view){(const char*)b->data, b->size}, &p);
  kc_program_destroy(p);
  return st;
}

KC_TEST(stablehlo_bytecode_without_memory_is_refused_and_leaks_nothing) {
  /* The n-th of the library's allocations, and every one after it, fails,
   * for every n a parse makes: RESOURCE_EXHAUSTED each time, everything
   * it made given back. The counting allocator lives as long as the
   * process: blocks it gave may outlive the test. */
  static kc_counting_allocator* counter = NULL;
  if (!counter) KC_CHECK_OK(kc_counting_allocator_create(&counter));
  char path[1024];
  kt_bc_blob b;
  kt_bc_path(path, sizeof path, "scan", ".bc");
  unsigned char* data = kt_bc_read(path, &b.size);
  b.data = data;
  const kc_allocator* before =
      kc_allocator_set_internal(kc_counting_allocator_get_allocator(counter));
  kc_alloc_stats s = {.struct_size = sizeof s};
  KC_CHECK_OK(kt_bc_parse(&b));
  kc_counting_allocator_query(counter, &s);
  int64_t live = s.live_blocks, start = s.total_allocs;
  KC_CHECK_OK(kt_bc_parse(&b));
  kc_counting_allocator_query(counter, &s);
  int64_t per_run = s.total_allocs - start;
  for (int64_t n = 0; n < per_run; ++n) {
    kc_counting_allocator_set_fail_after(counter, n);
    kc_status* st = kt_bc_parse(&b);
    kc_counting_allocator_set_fail_after(counter, -1);
    if (!st || kc_status_get_code(st) != KC_RESOURCE_EXHAUSTED) {
      kt__fail(__FILE__, __LINE__, "allocation %lld failing: %s", (long long)n,
               st ? kc_status_get_message(st) : "parsed");
    }
    kc_status_destroy(st);
    kc_counting_allocator_query(counter, &s);
    if (s.live_blocks != live) {
      kt__fail(__FILE__, __LINE__, "allocation %lld failing: %lld blocks live, %lld before",
               (long long)n, (long long)s.live_blocks, (long long)live);
    }
  }
  KC_CHECK_OK(kt_bc_parse(&b));
  kc_allocator_set_internal(before);
  printf("a parse of scan.bc makes %lld allocations; each refused in turn\n",
         (long long)per_run);
  free(data);
}

/* ---- dense_resource constants -------------------------------------------- */

/* As MLIR prints them (dense_resource.py): the blobs after the module, in
 * {-# dialect_resources: { builtin: { KEY: "0x<alignment><bytes>" } } #-}. */
KC_TEST(stablehlo_dense_resource_constants_as_mlir_prints_them) {
  char path[1024];
  kt_bc_path(path, sizeof path, "dense_resource", ".mlir");
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse_file(path, &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  static const float x[6] = {1, 1, 1, 2, 2, 2};
  int64_t shape[2] = {2, 3};
  DLTensor in = {.data = (void*)x, .device = {kDLCPU, 0}, .ndim = 2,
                 .dtype = {kDLFloat, 32, 1}, .shape = shape};
  const DLTensor* ins[1] = {&in};
  kc_tensor* out[2] = {NULL, NULL};
  KC_CHECK_OK(kc_executable_execute(exe, ins, 1, NULL, out));
  const float* y = kc_tensor_get_dltensor(out[0])->data;
  for (int i = 0; i < 6; ++i) KC_CHECK(y[i] == x[i] + (float)i / 4);
  const uint8_t* mask = kc_tensor_get_dltensor(out[1])->data;
  KC_CHECK(mask[0] == 1 && mask[1] == 0 && mask[2] == 1);
  kt_release(out, 2);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

static void kt_resource_fails(const char* constant, const char* blobs, const char* needle) {
  char text[1024];
  snprintf(text, sizeof text,
           "module {\n  func.func @main() -> tensor<2xf32> {\n"
           "    %%c = stablehlo.constant %s : tensor<2xf32>\n"
           "    return %%c : tensor<2xf32>\n  }\n}\n\n"
           "{-#\n  dialect_resources: {\n    builtin: {\n      %s\n    }\n  }\n#-}\n",
           constant, blobs);
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse(kc_sv(text), &p), KC_INVALID_ARGUMENT, needle);
  KC_CHECK(p == NULL);
}

KC_TEST(stablehlo_dense_resource_refusals_name_the_blob) {
  kt_resource_fails("dense_resource<w>", "v: \"0x040000000000803F00000040\"",
                    "dense_resource<w>: the module's dialect_resources hold no builtin blob");
  kt_resource_fails("dense_resource<w>", "w: \"0x040000000000803F\"",
                    "dense_resource<w>: expected a blob of \"0x\", a 4-byte alignment and 8 "
                    "bytes, got 16 hex digits");
  kt_resource_fails("dense_resource<w>", "w: \"0x040000000000803F0000004Z\"",
                    "is not hex (digit 23)");
  kt_resource_fails("dense_resource<__elided__>", "w: \"0x040000000000803F00000040\"",
                    "dense_resource<__elided__>: the constant's bytes were left out");
  kt_resource_fails("dense_resource<w>", "w: 12", "expected a blob");
  /* The same blob given: it runs. */
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(
      kc_sv("module {\n  func.func @main() -> tensor<2xf32> {\n"
            "    %c = stablehlo.constant dense_resource<\"w 1\"> : tensor<2xf32>\n"
            "    return %c : tensor<2xf32>\n  }\n}\n{-# dialect_resources: { builtin: { "
            "\"w 1\": \"0x040000000000803F00000040\" } }, external_resources: { x: {} } #-}\n"),
      &p));
  kc_program_destroy(p);
}
