#include "internal/common.h"
#include "kcall/version.h"

const char* kc_version_string(void) { return KC_VERSION_STRING; }

uint32_t kc_version_number(void) { return KC_VERSION_NUMBER; }

void kc_version_query_api(uint32_t* out_major, uint32_t* out_minor) {
  if (out_major) *out_major = KC_API_VERSION_MAJOR;
  if (out_minor) *out_minor = KC_API_VERSION_MINOR;
}
