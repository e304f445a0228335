/*
 * run_cuda.c — the CUDA examples from C: the ops Add and MatMul called
 * eagerly on cuda:0 tensors (their CUDA kernels come from cuda_plugin.cu),
 * checked against the CPU kernels of the same ops, and the seed program's
 * GPU custom call run on the device.
 *
 *   run_cuda OPS_PLUGIN CUDA_PLUGIN SEED_HLO
 *   run_cuda --probe          (only says whether there is a GPU)
 *
 * Exits 77 (a skip, for ctest) with "no CUDA device: ..." where there is
 * no usable GPU, 0 when every result is right, 1 otherwise.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kcall/kcall.h>
#include <kcall/device.h>
#include <kcall/program.h>

static const DLDevice kGpu = {kDLCUDA, 0};

static int fail(const char* where, kc_status* st) {
  size_t size = kc_status_format(st, NULL, 0) + 1;
  char* text = malloc(size);
  if (text) kc_status_format(st, text, size);
  fprintf(stderr, "run_cuda: %s: %s\n", where, text ? text : "out of memory");
  free(text);
  kc_status_destroy(st);
  return 1;
}

static int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* A host tensor of `dtype` with element i = scale * ((i * 7919) % 1000 - 500). */
static kc_status* host_tensor(DLDataType dtype, const int64_t* dims,
                              int32_t ndim, double scale, kc_tensor** out) {
  kc_status* st = kc_tensor_create(NULL, dims, ndim, dtype, kc_device_cpu(), out);
  if (st) return st;
  const DLTensor* t = kc_tensor_get_dltensor(*out);
  int64_t n = numel(t);
  for (int64_t i = 0; i < n; ++i) {
    double v = scale * (double)((i * 7919) % 1000 - 500);
    if (dtype.code == kDLFloat && dtype.bits == 32) {
      ((float*)t->data)[i] = (float)v;
    } else if (dtype.code == kDLFloat) {
      ((double*)t->data)[i] = v;
    } else {
      ((int32_t*)t->data)[i] = (int32_t)v;
    }
  }
  return NULL;
}

/* A copy of `from` on `device`, made on `stream` (NULL: waits). */
static kc_status* copy_to(const kc_tensor* from, DLDevice device, void* stream,
                          kc_tensor** out) {
  const DLTensor* f = kc_tensor_get_dltensor(from);
  kc_status* st = kc_tensor_create(NULL, f->shape, f->ndim, f->dtype, device, out);
  if (!st) st = kc_dltensor_copy(f, kc_tensor_get_dltensor(*out), stream);
  if (st) {
    kc_object_release(KC_OBJECT(*out));
    *out = NULL;
  }
  return st;
}

static double element(const DLTensor* t, int64_t i) {
  if (t->dtype.code == kDLFloat && t->dtype.bits == 32) return ((float*)t->data)[i];
  if (t->dtype.code == kDLFloat) return ((double*)t->data)[i];
  return ((int32_t*)t->data)[i];
}

/* Compares a host tensor with the host copy of a device one: element by
 * element within `tolerance` times the largest magnitude of `want` (sums
 * in another order differ by rounding on the scale of the whole result,
 * not of each element). */
static int compare(const char* what, const DLTensor* want, const DLTensor* got,
                   double tolerance) {
  if (want->ndim != got->ndim || numel(want) != numel(got)) {
    fprintf(stderr, "run_cuda: %s: shapes differ\n", what);
    return 1;
  }
  double scale = 1.0;
  for (int64_t i = 0; i < numel(want); ++i) {
    if (fabs(element(want, i)) > scale) scale = fabs(element(want, i));
  }
  for (int64_t i = 0; i < numel(want); ++i) {
    double w = element(want, i), g = element(got, i);
    if (fabs(w - g) > tolerance * scale) {
      fprintf(stderr, "run_cuda: %s: element %lld: expected %.9g, got %.9g\n",
              what, (long long)i, w, g);
      return 1;
    }
  }
  printf("%s: %lld elements match the CPU kernel\n", what, (long long)numel(want));
  return 0;
}

/* Calls `op_name` on the CPU and on cuda:0 (on `stream`, or kcall's own
 * stream when NULL) with the same inputs, and compares. */
static int check_op(const char* op_name, DLDataType dtype, const int64_t* xd,
                    int32_t xn, const int64_t* yd, int32_t yn, double tol,
                    void* stream) {
  const kc_op* op = NULL;
  kc_status* st = kc_op_registry_lookup(kc_sv(op_name), &op);
  if (st) return fail(op_name, st);
  kc_tensor *x = NULL, *y = NULL, *gx = NULL, *gy = NULL;
  kc_tensor *want = NULL, *got = NULL, *back = NULL;
  int32_t count = 0;
  st = host_tensor(dtype, xd, xn, 0.01, &x);
  if (!st) st = host_tensor(dtype, yd, yn, 0.02, &y);
  if (!st) st = copy_to(x, kGpu, NULL, &gx);
  if (!st) st = copy_to(y, kGpu, NULL, &gy);
  if (!st) {
    const DLTensor* in[2] = {kc_tensor_get_dltensor(x), kc_tensor_get_dltensor(y)};
    st = kc_op_call(op, in, 2, NULL, 0, NULL, &want, 1, &count);
  }
  if (!st) {
    const DLTensor* in[2] = {kc_tensor_get_dltensor(gx), kc_tensor_get_dltensor(gy)};
    kc_op_call_options options = {0};
    options.struct_size = sizeof options;
    options.stream = stream;
    st = kc_op_call(op, in, 2, NULL, 0, &options, &got, 1, &count);
  }
  /* The device result is ready once the stream gets there. */
  if (!st && stream) st = kc_device_stream_synchronize(kGpu, stream);
  int rc = 1;
  if (!st && kc_tensor_get_dltensor(got)->device.device_type != kDLCUDA) {
    fprintf(stderr, "run_cuda: %s: the output is not on the GPU\n", op_name);
  } else if (!st) {
    st = copy_to(got, kc_device_cpu(), NULL, &back);
  }
  if (st) {
    rc = fail(op_name, st);
  } else if (back) {
    char what[128];
    snprintf(what, sizeof what, "%s %s%s", op_name,
             dtype.code == kDLInt ? "i32" : dtype.bits == 32 ? "f32" : "f64",
             stream ? " (caller's stream)" : "");
    rc = compare(what, kc_tensor_get_dltensor(want), kc_tensor_get_dltensor(back), tol);
  }
  kc_tensor* all[] = {x, y, gx, gy, want, got, back};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
    kc_object_release(KC_OBJECT(all[i]));
  }
  return rc;
}

/* A[i] == B[i % 128] + C[i] for host copies of the three. */
static int check_seed_values(const char* what, const kc_tensor* b,
                             const kc_tensor* c, const kc_tensor* back) {
  const float* B = kc_tensor_get_dltensor(b)->data;
  const float* C = kc_tensor_get_dltensor(c)->data;
  const float* A = kc_tensor_get_dltensor(back)->data;
  for (int i = 0; i < 2048; ++i) {
    if (A[i] != B[i % 128] + C[i]) {
      fprintf(stderr, "run_cuda: %s: A[%d] = %g, expected %g\n", what, i,
              A[i], B[i % 128] + C[i]);
      return 1;
    }
  }
  printf("%s: all 2048 elements are right\n", what);
  return 0;
}

/* execute_into on `stream` with the same addresses three times: a run on
 * the stream, one captured into a CUDA graph and launched, and a replay
 * (the target is registered graph-safe). */
static kc_status* seed_into(const kc_executable* exe, const DLTensor* const* in,
                            kc_tensor* out, void* stream) {
  const DLTensor* outs[1] = {kc_tensor_get_dltensor(out)};
  kc_execute_options options = {0};
  options.struct_size = sizeof options;
  options.stream = stream;
  /* Zeroed before each run, so that the last one is seen to write. */
  static const float zeros[2048];
  kc_status* st = NULL;
  for (int run = 0; run < 3 && !st; ++run) {
    st = kc_device_memcpy(kGpu, outs[0]->data, zeros, sizeof zeros,
                          KC_MEMCPY_HOST_TO_DEVICE, stream);
    if (!st) st = kc_executable_execute_into(exe, in, 2, &options, outs, 1);
  }
  if (!st) st = kc_device_stream_synchronize(kGpu, stream);
  return st;
}

/* The seed program: A[i] = B[i % 128] + C[i] through the CUDA target. */
static int check_seed(const char* hlo_path, void* stream) {
  FILE* f = fopen(hlo_path, "rb");
  if (!f) {
    fprintf(stderr, "run_cuda: cannot open %s\n", hlo_path);
    return 1;
  }
  char text[4096];
  size_t len = fread(text, 1, sizeof text, f);
  fclose(f);
  kc_program* program = NULL;
  kc_executable* exe = NULL;
  kc_tensor *b = NULL, *c = NULL, *gb = NULL, *gc = NULL, *out = NULL, *back = NULL;
  kc_status* st = kc_program_parse((kc_string_view){text, len}, &program);
  if (!st) {
    kc_compile_options options = {0};
    options.struct_size = sizeof options;
    options.platform = KC_PLATFORM_CUDA;
    options.device_id = 0;
    st = kc_program_compile(program, &options, &exe);
  }
  int64_t bd = 128, cd = 2048;
  DLDataType f32 = kc_dtype_make(kDLFloat, 32, 1);
  if (!st) st = host_tensor(f32, &bd, 1, 0.5, &b);
  if (!st) st = host_tensor(f32, &cd, 1, 0.25, &c);
  if (!st) st = copy_to(b, kGpu, NULL, &gb);
  if (!st) st = copy_to(c, kGpu, NULL, &gc);
  if (!st) {
    const DLTensor* in[2] = {kc_tensor_get_dltensor(gb), kc_tensor_get_dltensor(gc)};
    st = kc_executable_execute(exe, in, 2, NULL, &out);
  }
  if (!st) st = copy_to(out, kc_device_cpu(), NULL, &back);
  int rc = st ? fail("the seed program", st) : 0;
  if (!rc) rc = check_seed_values("seed program on cuda:0", b, c, back);
  kc_tensor* into = NULL;
  if (!rc) {
    const DLTensor* in[2] = {kc_tensor_get_dltensor(gb), kc_tensor_get_dltensor(gc)};
    st = copy_to(out, kGpu, NULL, &into);
    if (!st) st = seed_into(exe, in, into, stream);
    kc_object_release(KC_OBJECT(back));
    back = NULL;
    if (!st) st = copy_to(into, kc_device_cpu(), NULL, &back);
    rc = st ? fail("the seed program into a tensor on a stream", st)
            : check_seed_values("seed program into a tensor, graph replays",
                                b, c, back);
  }
  kc_object_release(KC_OBJECT(into));
  kc_tensor* all[] = {b, c, gb, gc, out, back};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
    kc_object_release(KC_OBJECT(all[i]));
  }
  kc_executable_destroy(exe);
  kc_program_destroy(program);
  return rc;
}

int main(int argc, char** argv) {
  bool probe = argc == 2 && strcmp(argv[1], "--probe") == 0;
  if (argc != 4 && !probe) {
    fprintf(stderr, "usage: run_cuda OPS_PLUGIN CUDA_PLUGIN SEED_HLO\n"
                    "       run_cuda --probe   (exit 77 without a GPU)\n");
    return 2;
  }
  kc_status* st = kc_device_check(kGpu);
  if (st) {
    char text[512];
    kc_status_format(st, text, sizeof text);
    printf("skipped: %s\n", text);
    kc_status_destroy(st);
    return 77;
  }
  if (probe) return 0;
  for (int i = 1; i <= 2; ++i) {
    kc_plugin* plugin = NULL;
    st = kc_plugin_load(argv[i], &plugin);
    if (st) return fail(argv[i], st);
  }
  void* stream = NULL;
  st = kc_device_stream_create(kGpu, &stream);
  if (st) return fail("creating a stream", st);
  DLDataType f32 = kc_dtype_make(kDLFloat, 32, 1);
  DLDataType f64 = kc_dtype_make(kDLFloat, 64, 1);
  DLDataType i32 = kc_dtype_make(kDLInt, 32, 1);
  int rc = 0;
  /* Same shapes (the fast path), NumPy broadcasting, each dtype. */
  rc |= check_op("Add", f32, (int64_t[]){1000, 1001}, 2, (int64_t[]){1000, 1001}, 2, 0, NULL);
  rc |= check_op("Add", f32, (int64_t[]){1000, 1001}, 2, (int64_t[]){1000, 1001}, 2, 0, stream);
  rc |= check_op("Add", f64, (int64_t[]){7, 1, 5}, 3, (int64_t[]){3, 1}, 2, 0, NULL);
  rc |= check_op("Add", i32, (int64_t[]){2, 1}, 2, (int64_t[]){1, 300}, 2, 0, stream);
  /* Sizes that are not multiples of the tile, and a bigger one. The CPU
   * kernel sums in another order: a relative tolerance. */
  rc |= check_op("MatMul", f32, (int64_t[]){67, 45}, 2, (int64_t[]){45, 33}, 2, 1e-4, NULL);
  rc |= check_op("MatMul", f32, (int64_t[]){512, 300}, 2, (int64_t[]){300, 257}, 2, 1e-4, stream);
  rc |= check_seed(argv[3], stream);
  kc_device_stream_destroy(kGpu, stream);
  if (!rc) printf("all CUDA examples are right\n");
  return rc ? 1 : 0;
}
