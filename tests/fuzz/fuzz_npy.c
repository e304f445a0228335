/*
 * fuzz_npy.c — the .npy reader and writer of the kcall tool
 * (tools/kcall/npy.c).
 *
 * The input is a file. What reads must be exactly the file's last bytes
 * (the data ends the file), allocated from the caller's allocator and all
 * of it returned; it must then write, and what is written must read back
 * as the same tensor.
 */
#include "fuzz.h"

static kc_counting_allocator* kf_counter(void) {
  static kc_counting_allocator* counter = NULL;
  if (!counter) KF_ASSERT(!kf_refused(kc_counting_allocator_create(&counter)));
  return counter;
}

static int64_t kf_live_blocks(void) {
  kc_alloc_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  kc_counting_allocator_query(kf_counter(), &stats);
  KF_ASSERT(stats.bad_frees == 0);
  return stats.live_blocks;
}

static size_t kf_bytes(const DLTensor* t) {
  int64_t n = kc_dltensor_get_numel(t);
  KF_ASSERT(n >= 0);
  return (size_t)n * kc_dtype_get_size(t->dtype);
}

/* Reads `size` bytes as a .npy file. */
static kc_status* kf_read(const void* data, size_t size, kc_tensor** out) {
  /* fmemopen wants a buffer; an empty file is a buffer of no bytes. */
  static char empty[1];
  FILE* f = fmemopen(size ? (void*)(uintptr_t)data : empty, size, "rb");
  KF_ASSERT(f != NULL);
  kc_status* st = kc_tensor_read_npy_stream(f, kc_counting_allocator_get_allocator(kf_counter()),
                                      out);
  fclose(f);
  return st;
}

/* Writes `t`, reads it back and compares. */
static void kf_round_trip(const DLTensor* t) {
  char* buf = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  KF_ASSERT(f != NULL);
  kc_status* st = kc_tensor_write_npy_stream(f, t);
  KF_ASSERT(fclose(f) == 0);
  /* f16 is read but has a descr to write too; every dtype read can be
   * written. */
  KF_ASSERT(!kf_refused(st));
  /* NumPy's alignment: the data starts at a multiple of 64. */
  KF_ASSERT(len >= kf_bytes(t) && (len - kf_bytes(t)) % 64 == 0);
  kc_tensor* again = NULL;
  st = kf_read(buf, len, &again);
  if (st) {
    char text[512];
    kc_status_format(st, text, sizeof text);
    fprintf(stderr, "fuzz_npy: what was written does not read back: %s\n", text);
  }
  KF_ASSERT(!kf_refused(st));
  const DLTensor* u = kc_tensor_get_dltensor(again);
  KF_ASSERT(kc_dtype_equal(t->dtype, u->dtype) && t->ndim == u->ndim);
  for (int32_t i = 0; i < t->ndim; ++i) KF_ASSERT(t->shape[i] == u->shape[i]);
  size_t bytes = kf_bytes(t);
  KF_ASSERT(bytes == 0 || memcmp(t->data, u->data, bytes) == 0);
  kc_object_release(KC_OBJECT(again));
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int64_t live = kf_live_blocks();
  kc_tensor* t = NULL;
  kc_status* st = kf_read(data, size, &t);
  KF_ASSERT(st == NULL || t == NULL);
  if (!kf_refused(st)) {
    const DLTensor* dl = kc_tensor_get_dltensor(t);
    KF_ASSERT(dl->device.device_type == kDLCPU && kc_dltensor_is_compact(dl));
    size_t bytes = kf_bytes(dl);
    KF_ASSERT(bytes <= size);
    KF_ASSERT(bytes == 0 || memcmp(dl->data, data + size - bytes, bytes) == 0);
    kf_round_trip(dl);
    kc_object_release(KC_OBJECT(t));
  }
  KF_ASSERT(kf_live_blocks() == live);
  return 0;
}
