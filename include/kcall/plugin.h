/*
 * kcall/plugin.h — loading plugins (the host side).
 *
 * A plugin is a shared object exporting one symbol, kc_plugin_entry (see
 * kcall/abi.h, the only header a plugin needs). Loading it:
 *   1. dlopen()s the file (RTLD_NOW | RTLD_LOCAL);
 *   2. calls kc_plugin_entry(host) and reads the kc_plugin_info it returns,
 *      only the fields inside its struct_size;
 *   3. negotiates the API version: another major is refused, a newer minor
 *      is capped to the host's; a required feature the host lacks is
 *      refused, naming it;
 *   4. runs info->init(host) with registration staged: everything the init
 *      registers is published at once when it returns NULL, and discarded
 *      (objects released, file closed) when it fails.
 * A loaded plugin stays mapped for the life of the process; loading the
 * same file again returns the plugin already loaded.
 * All functions are thread-safe; loads are serialised.
 */
#ifndef KCALL_PLUGIN_H_
#define KCALL_PLUGIN_H_

#include "kcall/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kc_plugin kc_plugin;

/* What kcall knows about a loaded plugin. Strings are borrowed and live as
 * long as the process (plugins are never unloaded). */
typedef struct kc_plugin_desc {
  size_t struct_size;       /* set by the caller */
  const char* path;         /* as given to kc_plugin_load */
  const char* name;         /* from the plugin's info */
  const char* version;      /* from the plugin's info; "" when absent */
  uint32_t built_api_major; /* what the plugin was built against */
  uint32_t built_api_minor;
  uint32_t api_major;       /* negotiated */
  uint32_t api_minor;
  size_t registration_count;
} kc_plugin_desc;

/* One thing a plugin registered. `kind` is one of the static strings
 * "function", "op", "kernel" and "custom-call target" (whose names are
 * "TARGET@Platform"); compare it with strcmp. (The library exports
 * functions only: no data object's size is part of its ABI.) */
typedef struct kc_registration {
  size_t struct_size;  /* set by the caller */
  const char* kind;    /* "function", "op", "kernel", "custom-call target" */
  kc_string_view name; /* borrowed, lives as long as the process */
} kc_registration;

/* Loads the plugin at `path` (see above). On success *out_plugin is
 * borrowed and lives as long as the process. Errors, each naming the path:
 *   NOT_FOUND            the file does not exist
 *   PERMISSION_DENIED    the file cannot be read
 *   INVALID_ARGUMENT     a directory ("it is a directory, expected a shared
 *                        object file") or another non-regular file, not an
 *                        ELF file of this process's class and byte
 *                        order, or truncated (the ELF header, program
 *                        headers or a loadable segment past the end of the
 *                        file: checked before dlopen, which would fault),
 *                        or not loadable (dlerror's text), or no
 *                        kc_plugin_entry symbol, or a malformed info
 *                        (NULL, short struct_size, no name or init)
 *   FAILED_PRECONDITION  another API major, or a required feature missing
 *   ALREADY_EXISTS       a name it registers is taken (nothing published)
 *   any code             the plugin's init failed, with its message
 * On every error nothing the plugin registered remains and the file is
 * closed. */
KC_API kc_status* kc_plugin_load(const char* path, kc_plugin** out_plugin);

/* Fills `out` (up to out->struct_size). INVALID_ARGUMENT for NULLs. */
KC_API kc_status* kc_plugin_get_desc(const kc_plugin* plugin,
                                     kc_plugin_desc* out);

/* The `index`-th registration of `plugin`, in the order they were made.
 * OUT_OF_RANGE past the end. */
KC_API kc_status* kc_plugin_get_registration(const kc_plugin* plugin,
                                             size_t index,
                                             kc_registration* out);

/* The host API table handed to plugins. Static storage. */
KC_API const kc_host_api* kc_plugin_get_host_api(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_PLUGIN_H_ */
