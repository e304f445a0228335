/* Dtype and device names, parsing and printing. */
#include <stdio.h>

#include "internal/common.h"

typedef struct kc__dtype_name {
  const char* name;
  uint8_t code;
  uint8_t bits;
} kc__dtype_name;

/* Canonical names first: kc_dtype_format prints the first match. */
static const kc__dtype_name kc__dtype_names[] = {
    {"bool", kDLBool, 8},
    {"i8", kDLInt, 8},
    {"i16", kDLInt, 16},
    {"i32", kDLInt, 32},
    {"i64", kDLInt, 64},
    {"u8", kDLUInt, 8},
    {"u16", kDLUInt, 16},
    {"u32", kDLUInt, 32},
    {"u64", kDLUInt, 64},
    {"f16", kDLFloat, 16},
    {"f32", kDLFloat, 32},
    {"f64", kDLFloat, 64},
    {"bf16", kDLBfloat, 16},
    {"c64", kDLComplex, 64},
    {"c128", kDLComplex, 128},
    {"f8e3m4", kDLFloat8_e3m4, 8},
    {"f8e4m3", kDLFloat8_e4m3, 8},
    {"f8e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8},
    {"f8e4m3fn", kDLFloat8_e4m3fn, 8},
    {"f8e4m3fnuz", kDLFloat8_e4m3fnuz, 8},
    {"f8e5m2", kDLFloat8_e5m2, 8},
    {"f8e5m2fnuz", kDLFloat8_e5m2fnuz, 8},
    {"f8e8m0fnu", kDLFloat8_e8m0fnu, 8},
    {"f6e2m3fn", kDLFloat6_e2m3fn, 6},
    {"f6e3m2fn", kDLFloat6_e3m2fn, 6},
    {"f4e2m1fn", kDLFloat4_e2m1fn, 4},
    {"opaque64", kDLOpaqueHandle, 64},
    /* aliases */
    {"bool_", kDLBool, 8},
    {"int8", kDLInt, 8},
    {"int16", kDLInt, 16},
    {"int32", kDLInt, 32},
    {"int64", kDLInt, 64},
    {"int", kDLInt, 32},
    {"long", kDLInt, 64},
    {"uint8", kDLUInt, 8},
    {"uint16", kDLUInt, 16},
    {"uint32", kDLUInt, 32},
    {"uint64", kDLUInt, 64},
    {"float16", kDLFloat, 16},
    {"half", kDLFloat, 16},
    {"float32", kDLFloat, 32},
    {"float", kDLFloat, 32},
    {"float64", kDLFloat, 64},
    {"double", kDLFloat, 64},
    {"bfloat16", kDLBfloat, 16},
    {"complex64", kDLComplex, 64},
    {"complex128", kDLComplex, 128},
    {"float8_e4m3fn", kDLFloat8_e4m3fn, 8},
    {"float8_e5m2", kDLFloat8_e5m2, 8},
    {"float8_e4m3fnuz", kDLFloat8_e4m3fnuz, 8},
    {"float8_e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8},
    {"float8_e5m2fnuz", kDLFloat8_e5m2fnuz, 8},
};

/* The table entry named exactly `text`, or NULL. */
static const kc__dtype_name* kc__dtype_find(kc_string_view text) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__dtype_names); ++i) {
    if (kc_sv_equal(text, kc_sv(kc__dtype_names[i].name))) {
      return &kc__dtype_names[i];
    }
  }
  return NULL;
}

kc_status* kc_dtype_parse(kc_string_view text, DLDataType* out_dtype) {
  if (!out_dtype) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_dtype_parse: out is NULL");
  }
  const kc__dtype_name* d = kc__dtype_find(text);
  uint32_t lanes = 1;
  if (!d) {
    /* A vector type: "<name>x<lanes>", e.g. f32x4. */
    size_t x = text.size;
    while (x > 0 && text.data[x - 1] >= '0' && text.data[x - 1] <= '9') --x;
    if (x > 1 && x < text.size && text.data[x - 1] == 'x') {
      lanes = 0;
      for (size_t j = x; j < text.size && lanes <= UINT16_MAX; ++j) {
        lanes = lanes * 10 + (uint32_t)(text.data[j] - '0');
      }
      kc_string_view base = {text.data, x - 1};
      if (lanes >= 1 && lanes <= UINT16_MAX) d = kc__dtype_find(base);
    }
  }
  if (d) {
    *out_dtype = kc_dtype_make(d->code, d->bits, (uint16_t)lanes);
    return NULL;
  }
  return kc_status_create(
      KC_INVALID_ARGUMENT,
      "unknown dtype %s: expected bool, i8..i64, u8..u64, f16, f32, f64, "
      "bf16, c64, c128, a float8 kind (f8e4m3fn, f8e5m2, ...), or a long "
      "name such as float32, optionally followed by x<lanes>",
      KC__Q(text));
}

size_t kc_dtype_format(DLDataType dtype, char* buf, size_t cap) {
  const char* name = NULL;
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__dtype_names); ++i) {
    if (kc__dtype_names[i].code == dtype.code &&
        kc__dtype_names[i].bits == dtype.bits) {
      name = kc__dtype_names[i].name;
      break;
    }
  }
  int n;
  if (!name || dtype.lanes == 0) {
    n = snprintf(buf, cap, "dtype(code=%u,bits=%u,lanes=%u)", dtype.code,
                 dtype.bits, dtype.lanes);
  } else if (dtype.lanes == 1) {
    n = snprintf(buf, cap, "%s", name);
  } else {
    n = snprintf(buf, cap, "%sx%u", name, dtype.lanes);
  }
  return n < 0 ? 0 : (size_t)n;
}

size_t kc_dtype_get_size(DLDataType dtype) {
  return ((size_t)dtype.bits * dtype.lanes + 7) / 8;
}

bool kc_sv_equal(kc_string_view a, kc_string_view b) {
  return a.size == b.size && (a.size == 0 || memcmp(a.data, b.data, a.size) == 0);
}

/* ---- devices ------------------------------------------------------------- */

typedef struct kc__device_name {
  const char* name;
  DLDeviceType type;
} kc__device_name;

static const kc__device_name kc__device_names[] = {
    {"cpu", kDLCPU},          {"cuda", kDLCUDA},
    {"cuda_host", kDLCUDAHost}, {"opencl", kDLOpenCL},
    {"vulkan", kDLVulkan},    {"metal", kDLMetal},
    {"vpi", kDLVPI},          {"rocm", kDLROCM},
    {"rocm_host", kDLROCMHost}, {"ext_dev", kDLExtDev},
    {"cuda_managed", kDLCUDAManaged}, {"oneapi", kDLOneAPI},
    {"webgpu", kDLWebGPU},    {"hexagon", kDLHexagon},
    {"maia", kDLMAIA},        {"gpu", kDLCUDA},
    {"host", kDLCPU},
};

kc_status* kc_device_parse(kc_string_view text, DLDevice* out_device) {
  if (!out_device) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_device_parse: out is NULL");
  }
  kc_string_view kind = text;
  int64_t id = 0;
  for (size_t i = 0; i < text.size; ++i) {
    if (text.data[i] != ':') continue;
    kind.size = i;
    size_t j = i + 1;
    if (j == text.size) goto bad;
    for (; j < text.size; ++j) {
      if (text.data[j] < '0' || text.data[j] > '9') goto bad;
      id = id * 10 + (text.data[j] - '0');
      if (id > INT32_MAX) goto bad;
    }
    break;
  }
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__device_names); ++i) {
    if (kc_sv_equal(kind, kc_sv(kc__device_names[i].name))) {
      out_device->device_type = kc__device_names[i].type;
      out_device->device_id = (int32_t)id;
      return NULL;
    }
  }
bad:
  return kc_status_create(
      KC_INVALID_ARGUMENT,
      "unknown device %s: expected a kind (cpu, cuda, cuda_host, rocm, "
      "...) optionally followed by ':<id>'",
      KC__Q(text));
}

size_t kc_device_format(DLDevice device, char* buf, size_t cap) {
  const char* name = NULL;
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__device_names); ++i) {
    if (kc__device_names[i].type == device.device_type) {
      name = kc__device_names[i].name;
      break;
    }
  }
  int n = name ? snprintf(buf, cap, "%s:%d", name, device.device_id)
               : snprintf(buf, cap, "device(%d):%d", (int)device.device_type,
                          device.device_id);
  return n < 0 ? 0 : (size_t)n;
}
