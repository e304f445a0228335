/*
 * check_outputs.c — checks the .npy files `kcall run --generate-inputs
 * --output DIR` wrote for the example programs, element by element,
 * against the same computation done here.
 *
 *   check_outputs seed DIR       DIR/out0.npy .. out2.npy: A = B[i%128] + C
 *   check_outputs tuple DIR      DIR/out0.npy: the tuple example's sum
 *   check_outputs rms_norm DIR   DIR/out0.npy: rms_norm(x) * scale
 *
 * Generated inputs are x[i] = (float)(i * 0.01), i the element index
 * within each input (see `kcall help run`).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kcall/kcall.h>


static float gen(int64_t i) { return (float)((double)i * 0.01); }

/* Reads DIR/NAME, which must be f32 with the given dims. */
static kc_tensor* read_f32(const char* dir, const char* name,
                           const int64_t* dims, int32_t ndim) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_read_npy(path, NULL, &t);
  if (st) {
    char msg[512];
    kc_status_format(st, msg, sizeof msg);
    fprintf(stderr, "check_outputs: %s\n", msg);
    kc_status_destroy(st);
    return NULL;
  }
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  bool ok = dl->dtype.code == kDLFloat && dl->dtype.bits == 32 &&
            dl->ndim == ndim;
  for (int32_t i = 0; ok && i < ndim; ++i) ok = dl->shape[i] == dims[i];
  if (!ok) {
    fprintf(stderr, "check_outputs: %s has the wrong dtype or shape\n", path);
    kc_object_release(KC_OBJECT(t));
    return NULL;
  }
  return t;
}

static const float* data_of(const kc_tensor* t) {
  return kc_tensor_get_dltensor(t)->data;
}

static int check_seed(const char* dir) {
  int64_t n = 2048;
  int bad = 0;
  for (int k = 0; k < 3; ++k) {
    char name[32];
    snprintf(name, sizeof name, "out%d.npy", k);
    kc_tensor* t = read_f32(dir, name, &n, 1);
    if (!t) return 1;
    const float* a = data_of(t);
    for (int64_t i = 0; i < n; ++i) {
      float want = gen(i % 128) + gen(i);
      if (a[i] != want && bad++ < 5) {
        fprintf(stderr, "%s[%lld] = %.9g, expected %.9g\n", name, (long long)i,
                (double)a[i], (double)want);
      }
    }
    kc_object_release(KC_OBJECT(t));
  }
  return bad != 0;
}

static int check_tuple(const char* dir) {
  int64_t n = 512;
  kc_tensor* t = read_f32(dir, "out0.npy", &n, 1);
  if (!t) return 1;
  const float* sum = data_of(t);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    float first = gen(i % 32) + gen(i % 64);
    float second = gen(i % 128) + gen(i % 256);
    float want = first + second;
    if (sum[i] != want && bad++ < 5) {
      fprintf(stderr, "sum[%lld] = %.9g, expected %.9g\n", (long long)i,
              (double)sum[i], (double)want);
    }
  }
  kc_object_release(KC_OBJECT(t));
  return bad != 0;
}

static int check_rms_norm(const char* dir) {
  int64_t dims[2] = {4, 8};
  kc_tensor* t = read_f32(dir, "out0.npy", dims, 2);
  if (!t) return 1;
  const float* y = data_of(t);
  const double eps = 1e-5;
  int bad = 0;
  for (int64_t r = 0; r < 4; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < 8; ++j) sum += (double)gen(r * 8 + j) * gen(r * 8 + j);
    double inv = 1.0 / sqrt(sum / 8 + eps);
    for (int64_t j = 0; j < 8; ++j) {
      double want = gen(r * 8 + j) * inv * gen(j);
      double got = y[r * 8 + j];
      if (fabs(got - want) > 1e-6 * fabs(want) + 1e-7 && bad++ < 5) {
        fprintf(stderr, "y[%lld][%lld] = %.9g, expected %.9g\n", (long long)r,
                (long long)j, got, want);
      }
    }
  }
  kc_object_release(KC_OBJECT(t));
  return bad != 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: check_outputs seed|tuple|rms_norm DIR\n");
    return 2;
  }
  int rc = 2;
  if (strcmp(argv[1], "seed") == 0) rc = check_seed(argv[2]);
  if (strcmp(argv[1], "tuple") == 0) rc = check_tuple(argv[2]);
  if (strcmp(argv[1], "rms_norm") == 0) rc = check_rms_norm(argv[2]);
  if (rc == 0) printf("%s: every element is right\n", argv[1]);
  return rc;
}
