/*
 * main.c — an HLO text file run from C with the public API: register the
 * custom-call target the program calls, read and parse the file
 * (kc_program_parse_file), compile it, run it, and check every output element against the same arithmetic
 * done here in double precision.
 *
 *   run_hlo leaky_axpy.hlo
 *
 * leaky_axpy.hlo computes out = leaky_relu(a * x + y) with a scalar `a`:
 * the arithmetic is built-in instructions, the activation a typed custom
 * call ("example.leaky_relu", its slope an attribute of the call site).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kcall/kcall.h>
#include <kcall/program.h>
#include <kcall/xcall.h>

/* ---- the custom-call target ---------------------------------------------- */

/* y = x for x >= 0, slope * x otherwise. The signature (below) lets only
 * f32 buffers and an f32 attribute through, checked at compile. */
static kc_status* leaky_relu(kc_xcall_frame* frame) {
  if (frame->stage != KC_XCALL_STAGE_EXECUTE) return NULL;
  const DLTensor* x = &frame->args[0];
  const DLTensor* y = &frame->results[0];
  float slope = frame->attrs[0].v.f32;
  const float* in = x->data;
  float* out = y->data;
  for (int64_t i = 0, n = kc_dltensor_get_numel(x); i < n; ++i) {
    out[i] = in[i] >= 0.0f ? in[i] : slope * in[i];
  }
  return NULL;
}

static kc_status* register_target(void) {
  static const kc_xcall_buffer_spec f32_any[] = {{{kDLFloat, 32, 1}, -1}};
  static const kc_xcall_attr_spec attrs[] = {{"slope", KC_ATTR_F32, 0}};
  static const kc_xcall_signature sig = {.struct_size = sizeof sig,
                                         .num_args = 1, .args = f32_any,
                                         .num_results = 1, .results = f32_any,
                                         .num_attrs = 1, .attrs = attrs};
  return kc_xcall_register_typed(KC_SV_LIT("example.leaky_relu"), KC_PLATFORM_HOST,
                                 &sig, leaky_relu, NULL, NULL, 0);
}

/* ---- running it ---------------------------------------------------------------- */

enum { ROWS = 2, COLS = 4, N = ROWS * COLS };
static const float slope = 0.125f; /* the call site's attribute */

static kc_status* make_f32(int32_t ndim, const int64_t* dims, kc_tensor** out) {
  return kc_tensor_create(NULL, dims, ndim, kc_dtype_make(kDLFloat, 32, 1), kc_device_cpu(),
                          out);
}

static kc_status* run_and_check(const kc_executable* exe) {
  static const int64_t dims[2] = {ROWS, COLS};
  kc_tensor* a = NULL;
  kc_tensor* x = NULL;
  kc_tensor* y = NULL;
  kc_tensor* out = NULL;
  kc_status* st = make_f32(0, NULL, &a);
  if (!st) st = make_f32(2, dims, &x);
  if (!st) st = make_f32(2, dims, &y);
  if (st) goto done;
  float* pa = kc_tensor_get_dltensor(a)->data;
  float* px = kc_tensor_get_dltensor(x)->data;
  float* py = kc_tensor_get_dltensor(y)->data;
  *pa = 2.0f;
  for (int i = 0; i < N; ++i) {
    px[i] = (float)i - 4.0f; /* -4 .. 3 */
    py[i] = 0.5f;
  }
  /* Inputs in parameter order; the program's parameter names say which. */
  const DLTensor* inputs[3] = {kc_tensor_get_dltensor(a), kc_tensor_get_dltensor(x),
                               kc_tensor_get_dltensor(y)};
  st = kc_executable_execute(exe, inputs, 3, NULL, &out);
  if (st) goto done;

  const float* got = kc_tensor_get_dltensor(out)->data;
  printf("out = leaky_relu(a * x + y), a = %g, y = %g, slope = %g:\n", (double)*pa,
         (double)py[0], (double)slope);
  for (int r = 0; r < ROWS; ++r) {
    printf(" ");
    for (int c = 0; c < COLS; ++c) printf(" %g", (double)got[r * COLS + c]);
    printf("\n");
  }
  for (int i = 0; i < N && !st; ++i) {
    double v = (double)*pa * (double)px[i] + (double)py[i];
    double want = v >= 0.0 ? v : (double)slope * v;
    if (fabs((double)got[i] - want) > 1e-6 * (1.0 + fabs(want))) {
      st = kc_status_create(KC_INTERNAL, "out[%d] is %.9g, expected %.9g", i,
                            (double)got[i], want);
    }
  }
  if (!st) printf("all %d elements match the double-precision reference\n", N);
done:
  kc_object_release(KC_OBJECT(out));
  kc_object_release(KC_OBJECT(y));
  kc_object_release(KC_OBJECT(x));
  kc_object_release(KC_OBJECT(a));
  return st;
}

static int report(kc_status* status) {
  size_t size = kc_status_format(status, NULL, 0) + 1;
  char* text = malloc(size);
  if (text) kc_status_format(status, text, size);
  fprintf(stderr, "run_hlo: %s\n", text ? text : "out of memory");
  free(text);
  kc_status_destroy(status);
  return EXIT_FAILURE;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: run_hlo PROGRAM.hlo\n");
    return 2;
  }
  kc_program* program = NULL;
  kc_executable* exe = NULL;
  /* The file is read whole and parsed; errors name it (and the line and
   * column of a syntax error). */
  kc_status* st = register_target();
  if (!st) st = kc_program_parse_file(argv[1], &program);
  if (!st) {
    printf("%s: %zu parameters:", kc_program_get_name(program),
           kc_program_get_parameter_count(program));
    for (size_t i = 0; i < kc_program_get_parameter_count(program); ++i) {
      char shape[64];
      kc_shape_format(kc_program_get_parameter_shape(program, i), shape, sizeof shape);
      printf(" %s %s", kc_program_get_parameter_name(program, i), shape);
    }
    printf("\n");
    /* Compile checks every instruction once (shapes, the target and its
     * signature, the attribute); the executable no longer needs the
     * program. */
    st = kc_program_compile(program, NULL, &exe);
  }
  kc_program_destroy(program);
  if (!st) st = run_and_check(exe);
  kc_executable_destroy(exe);
  return st ? report(st) : EXIT_SUCCESS;
}
