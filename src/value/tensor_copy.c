/* kc_dltensor_copy: copies between DLTensors on the host and on devices.
 * It sits in the value layer, above the device runtime it copies through,
 * so that runtime/ never reaches up into tensors. */
#include <stdio.h>
#include <string.h>

#include "internal/common.h"
#include "kcall/device.h"
#include "kcall/tensor.h"
#include "runtime/device_internal.h"

static kc_status* kc__copy_mismatch(const char* what, const DLTensor* from,
                                    const DLTensor* to) {
  char a[48], b[48];
  kc_device_format(from->device, a, sizeof a);
  kc_device_format(to->device, b, sizeof b);
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "kc_dltensor_copy: from (on %s) and to (on %s): %s",
                          a, b, what);
}

kc_status* kc_dltensor_copy(const DLTensor* from, const DLTensor* to, void* stream) {
  if (!from || !to) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_dltensor_copy: %s is NULL",
                            !from ? "from" : "to");
  }
  if (!kc_dtype_equal(from->dtype, to->dtype)) {
    char a[32], b[32];
    kc_dtype_format(from->dtype, a, sizeof a);
    kc_dtype_format(to->dtype, b, sizeof b);
    char why[96];
    snprintf(why, sizeof why, "dtypes differ: %s and %s", a, b);
    return kc__copy_mismatch(why, from, to);
  }
  if (from->ndim != to->ndim ||
      (from->ndim && memcmp(from->shape, to->shape, (size_t)from->ndim * sizeof(int64_t)))) {
    return kc__copy_mismatch("dims differ", from, to);
  }
  if (!kc_dltensor_is_compact(from) || !kc_dltensor_is_compact(to)) {
    return kc__copy_mismatch("expected compact row-major tensors, got strides", from, to);
  }
  int64_t n = kc_dltensor_get_numel(from);
  uint64_t bits = (uint64_t)from->dtype.bits * from->dtype.lanes;
  if (n < 0 || (n > 0 && (uint64_t)n > SIZE_MAX / 2 / (bits ? bits : 1))) {
    return kc__copy_mismatch("the byte size overflows", from, to);
  }
  size_t bytes = (size_t)(((uint64_t)n * bits + 7) / 8);
  if (!bytes) return NULL;
  if (!from->data || !to->data) {
    return kc__copy_mismatch(!from->data ? "from's data is NULL" : "to's data is NULL",
                             from, to);
  }
  const char* src = (const char*)from->data + from->byte_offset;
  char* dst = (char*)to->data + to->byte_offset;
  bool host_from = kc__device_host_addressable(from->device);
  bool host_to = kc__device_host_addressable(to->device);
  if (host_from && host_to) {
    memmove(dst, src, bytes);
    return NULL;
  }
  DLDevice dev;
  kc_memcpy_kind kind;
  if (host_from) {
    dev = to->device;
    kind = KC_MEMCPY_HOST_TO_DEVICE;
  } else if (host_to) {
    dev = from->device;
    kind = KC_MEMCPY_DEVICE_TO_HOST;
  } else {
    if (from->device.device_type != to->device.device_type ||
        from->device.device_id != to->device.device_id) {
      return kc__copy_mismatch("copies between two devices are not supported "
                               "(copy through the host)", from, to);
    }
    dev = from->device;
    kind = KC_MEMCPY_DEVICE_TO_DEVICE;
  }
  const kc__backend* b;
  KC_RETURN_IF_ERROR(kc__device_backend(dev, &b));
  KC_RETURN_IF_ERROR(b->memcpy(dev.device_id, dst, src, bytes, (int32_t)kind, stream));
  return stream ? NULL : b->stream_synchronize(dev.device_id, NULL);
}
