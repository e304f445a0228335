/*
 * tests/kt_plugin_api.h — what the sources of the test runner that are not
 * tests themselves (tests/fixtures/same_source.c, also built as a plugin;
 * tests/plugin_api_old_host.c, in plugin mode; tests/cpp_layer.cpp) offer
 * the tests. It includes only kcall/abi.h, so both modes can include it.
 */
#ifndef KCALL_TESTS_KT_PLUGIN_API_H_
#define KCALL_TESTS_KT_PLUGIN_API_H_

#include "kcall/abi.h"

/* Registers what tests/fixtures/same_source.c offers (see there). In the
 * plugin, its init calls it; linked into the runner, a test does. */
kc_status* kt_same_register(void);

/* Runs every API 1.1 spelling of kcall/plugin_api.h in plugin mode
 * against `old_host`, a table that offers API 1.0 only (and NULL in its
 * 1.1 entries, so that a call through one of them crashes), checking the
 * fallbacks; `host` is the real table, for what needs restoring.
 * Returns NULL, or a status naming the first check that failed. */
kc_status* kt_plugin_api_on_old_host(const kc_host_api* old_host,
                                     const kc_host_api* host);

/* Checks of the C++ layer (kcall/kcall.hpp) in a host (tests/
 * cpp_layer.cpp); `old_host` as above. NULL, or the first failure. */
#ifdef __cplusplus
extern "C" {
#endif
kc_status* kt_cpp_layer_checks(const kc_host_api* old_host);
#ifdef __cplusplus
}
#endif

#endif /* KCALL_TESTS_KT_PLUGIN_API_H_ */
