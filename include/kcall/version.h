/*
 * kcall/version.h — the library's version, at compile time and run time.
 */
#ifndef KCALL_VERSION_H_
#define KCALL_VERSION_H_

#include "kcall/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KC_VERSION_MAJOR 0
#define KC_VERSION_MINOR 1
#define KC_VERSION_PATCH 0
#define KC_VERSION_STRING "0.1.0"
/* One comparable number: major * 10000 + minor * 100 + patch. */
#define KC_VERSION_NUMBER \
  (KC_VERSION_MAJOR * 10000 + KC_VERSION_MINOR * 100 + KC_VERSION_PATCH)

/* The version of the library actually loaded, which may differ from the
 * headers a program was compiled with. Static storage. */
KC_API const char* kc_version_string(void);
KC_API uint32_t kc_version_number(void);

/* The plugin API version this library offers (see kcall/abi.h). */
KC_API void kc_version_query_api(uint32_t* out_major, uint32_t* out_minor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_VERSION_H_ */
