/* npy_equal A.npy B.npy: exit 0 when the two files hold the same dtype,
 * shape and bytes (what np.array_equal says of exact results, NaNs aside),
 * else 1 with the first difference; 2 when a file cannot be read. Read
 * with the kcall tool's own reader. */
#include <stdio.h>
#include <string.h>

#include "npy.h"

static int64_t kt_count(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: npy_equal A.npy B.npy\n");
    return 2;
  }
  kc_tensor* t[2] = {NULL, NULL};
  for (int i = 0; i < 2; ++i) {
    kc_status* st = cli_npy_read(argv[1 + i], NULL, &t[i]);
    if (st) {
      char msg[512];
      kc_status_format(st, msg, sizeof msg);
      fprintf(stderr, "npy_equal: %s\n", msg);
      kc_status_destroy(st);
      if (t[0]) kc_object_release(KC_OBJECT(t[0]));
      return 2;
    }
  }
  const DLTensor* a = kc_tensor_get_dltensor(t[0]);
  const DLTensor* b = kc_tensor_get_dltensor(t[1]);
  int rc = 0;
  char da[32], db[32];
  kc_dtype_format(a->dtype, da, sizeof da);
  kc_dtype_format(b->dtype, db, sizeof db);
  if (!kc_dtype_equal(a->dtype, b->dtype)) {
    fprintf(stderr, "npy_equal: dtype %s, expected %s\n", da, db);
    rc = 1;
  } else if (a->ndim != b->ndim ||
             (a->ndim && memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof *a->shape))) {
    fprintf(stderr, "npy_equal: the shapes differ (rank %d and %d)\n", a->ndim, b->ndim);
    rc = 1;
  } else {
    size_t width = kc_dtype_get_size(a->dtype);
    int64_t n = kt_count(a);
    for (int64_t i = 0; i < n && !rc; ++i) {
      if (memcmp((const char*)a->data + (size_t)i * width,
                 (const char*)b->data + (size_t)i * width, width)) {
        fprintf(stderr, "npy_equal: element %lld of %s differs\n", (long long)i, da);
        rc = 1;
      }
    }
  }
  kc_object_release(KC_OBJECT(t[0]));
  kc_object_release(KC_OBJECT(t[1]));
  return rc;
}
