/*
 * run_program.c — the seed program from C: register a custom-call target
 * at run time, build the program with the builder (no HLO text), compile
 * it, run it and print a few outputs.
 *
 *   run_program
 *
 * The program is the one of XLA's custom-call guide:
 *   p0 = f32[128] parameter(0)
 *   p1 = f32[2048] parameter(1)
 *   ROOT A = f32[2048] custom-call(p0, p1), custom_call_target="do_custom_call"
 */
#include <stdio.h>
#include <stdlib.h>

#include <kcall/kcall.h>
#include <kcall/program.h>
#include <kcall/xcall.h>

enum { B_SIZE = 128, N = 2048 };

/* The target, as the guide writes it: the ORIGINAL convention, sizes
 * known in advance. */
static void do_custom_call(void* out, const void** in) {
  float* out_buf = out;
  const float* in0 = in[0];
  const float* in1 = in[1];
  for (int i = 0; i < N; ++i) out_buf[i] = in0[i % B_SIZE] + in1[i];
}

static int report(kc_status* status) {
  size_t size = kc_status_format(status, NULL, 0) + 1;
  char* text = malloc(size);
  if (text) kc_status_format(status, text, size);
  fprintf(stderr, "run_program: %s\n", text ? text : "out of memory");
  free(text);
  kc_status_destroy(status);
  return EXIT_FAILURE;
}

/* Builds the program. The builder copies the shapes it is given. */
static kc_status* build(kc_program** out_program) {
  DLDataType f32 = kc_dtype_make(kDLFloat, 32, 1);
  int64_t b_dims[1] = {B_SIZE};
  int64_t n_dims[1] = {N};
  kc_shape* b_shape = NULL;
  kc_shape* n_shape = NULL;
  kc_program_builder* b = NULL;
  kc_status* st = kc_shape_create_array(f32, b_dims, 1, &b_shape);
  if (!st) st = kc_shape_create_array(f32, n_dims, 1, &n_shape);
  if (!st) st = kc_program_builder_create(KC_SV_LIT("do_it"), &b);

  int32_t p[2] = {-1, -1};
  int32_t call = -1;
  if (!st) st = kc_program_builder_add_parameter(b, 0, b_shape, KC_SV_LIT("p0"), &p[0]);
  if (!st) st = kc_program_builder_add_parameter(b, 1, n_shape, KC_SV_LIT("p1"), &p[1]);
  if (!st) {
    kc_custom_call_desc desc = {0};
    desc.struct_size = sizeof desc;
    desc.target = KC_SV_LIT("do_custom_call");
    desc.operands = p;
    desc.num_operands = 2;
    desc.result_shape = n_shape;
    desc.api_version = KC_XCALL_API_ORIGINAL;
    st = kc_program_builder_add_custom_call(b, &desc, KC_SV_LIT("A"), &call);
  }
  if (!st) st = kc_program_builder_set_root(b, call);
  if (!st) {
    st = kc_program_builder_finish(b, out_program); /* consumes b */
    b = NULL;
  }
  kc_program_builder_destroy(b);
  kc_shape_destroy(b_shape);
  kc_shape_destroy(n_shape);
  return st;
}

static kc_status* make_input(int64_t size, float scale, kc_tensor** out) {
  kc_status* st = kc_tensor_create(NULL, &size, 1, kc_dtype_make(kDLFloat, 32, 1),
                                   kc_device_cpu(), out);
  if (st) return st;
  float* data = kc_tensor_get_dltensor(*out)->data;
  for (int64_t i = 0; i < size; ++i) data[i] = (float)i * scale;
  return NULL;
}

/* Runs the program on B[i] = i, C[i] = i / 2 and checks every element. */
static kc_status* run(const kc_executable* exe) {
  kc_tensor* in_b = NULL;
  kc_tensor* in_c = NULL;
  kc_tensor* out = NULL;
  kc_status* st = make_input(B_SIZE, 1.0f, &in_b);
  if (!st) st = make_input(N, 0.5f, &in_c);
  if (!st) {
    const DLTensor* inputs[2] = {kc_tensor_get_dltensor(in_b),
                                 kc_tensor_get_dltensor(in_c)};
    st = kc_executable_execute(exe, inputs, 2, NULL, &out);
  }
  if (!st) {
    const float* a = kc_tensor_get_dltensor(out)->data;
    printf("A[i] = B[i %% 128] + C[i] with B[i] = i and C[i] = i / 2:\n");
    static const int shown[] = {0, 1, 127, 128, 2047};
    for (size_t k = 0; k < sizeof shown / sizeof shown[0]; ++k) {
      printf("  A[%d] = %g\n", shown[k], (double)a[shown[k]]);
    }
    for (int i = 0; i < N && !st; ++i) {
      float want = (float)(i % B_SIZE) + (float)i * 0.5f;
      if (a[i] != want) {
        st = kc_status_create(KC_INTERNAL, "A[%d] is %g, expected %g", i,
                              (double)a[i], (double)want);
      }
    }
    if (!st) printf("all %d elements are right\n", N);
  }
  kc_object_release(KC_OBJECT(out));
  kc_object_release(KC_OBJECT(in_c));
  kc_object_release(KC_OBJECT(in_b));
  return st;
}

int main(void) {
  /* A custom call can be registered from C at any time, not only from a
   * plugin's init. */
  kc_status* st = kc_xcall_register(KC_SV_LIT("do_custom_call"), KC_PLATFORM_HOST,
                                    KC_XCALL_API_ORIGINAL,
                                    (void (*)(void))do_custom_call, 0);
  kc_program* program = NULL;
  kc_executable* exe = NULL;
  if (!st) st = build(&program);
  /* The executable does not need the program once compiled. */
  if (!st) st = kc_program_compile(program, NULL, &exe);
  kc_program_destroy(program);
  if (!st) st = run(exe);
  kc_executable_destroy(exe);
  return st ? report(st) : EXIT_SUCCESS;
}
