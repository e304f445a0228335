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
 * Loading the same file again returns the plugin already loaded, and
 * counts: a plugin loaded N times is unloaded by the Nth kc_plugin_unload.
 *
 * Unloading is opt-in, for the plugin and for the host. A plugin that can
 * be unloaded says so by giving kc_plugin_info.fini (kcall/abi.h); one
 * without fini stays loaded for the life of the process. A host unloads
 * it with kc_plugin_unload, which succeeds only when nothing outside the
 * plugin still holds anything the plugin registered or made:
 *   - functions (registered ones, and closures the plugin made and handed
 *     out, e.g. returned from a call), ops, kernels, custom-call targets
 *     and XLA FFI handlers, held by a reference: one taken with
 *     kc_object_retain or a *_lookup_retained function, an argument list,
 *     a Python handle, an XLA FFI adapter (which holds its target for the
 *     life of the process);
 *   - executables compiled against its custom-call targets (they hold the
 *     targets they call until kc_executable_destroy);
 *   - kernels of the plugin cached by an op that is not the plugin's (a
 *     kernel registered for the host's op and used holds the plugin until
 *     that op is freed).
 * What belongs to a plugin: whatever is made while its entry point or
 * init runs, and every function, op, kernel or target whose code (the
 * function, its deleter, a kernel's create/compute/delete, a target's
 * handler or deleter) lies in the plugin's file. Code in other libraries
 * the plugin links is not recognised.
 * Borrowed pointers (kc_func_registry_lookup and the like) do not hold a
 * plugin: they are invalid once it is unloaded. A host that calls a
 * plugin's functions on one thread while it may unload the plugin on
 * another holds references for the duration of those calls.
 * Work a plugin started itself (threads, tasks scheduled on the thread
 * pool) is not seen; its fini must end it.
 *
 * All functions are thread-safe; loads and unloads are serialised.
 */
#ifndef KCALL_PLUGIN_H_
#define KCALL_PLUGIN_H_

#include "kcall/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kc_plugin kc_plugin;

/* What kcall knows about a loaded plugin. Strings are borrowed and live
 * until the plugin is unloaded. */
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
  kc_string_view name; /* borrowed, lives until the plugin is unloaded */
} kc_registration;

/* Loads the plugin at `path` (see above). On success *out_plugin is the
 * plugin's handle: the same one for every load of the same file, valid
 * for the life of the process (after the plugin is unloaded, functions
 * taking it answer FAILED_PRECONDITION; loading the file again makes it
 * valid again). Errors, each naming the path:
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
 *                        (NULL, short struct_size, no name or init);
 *                        or it calls libkcall's functions without linking
 *                        libkcall (compiled against the host's
 *                        declarations, e.g. kcall/plugin_api.h in host
 *                        mode): a kc_* function it uses undefined is not
 *                        found among its own dependencies. Refused the
 *                        same way whether or not this process made
 *                        libkcall's symbols global (where it did not,
 *                        dlopen fails on it); the message names the
 *                        function and says how to build the plugin
 *   FAILED_PRECONDITION  another API major, or a required feature missing;
 *                        or the file is the plugin of a kc_plugin_unload
 *                        that could not finish (objects it made are still
 *                        alive)
 *   ALREADY_EXISTS       a name it registers is taken (nothing published)
 *   any code             the plugin's init failed, with its message
 * On every error nothing the plugin registered remains and the file is
 * closed (unless an object the plugin made outlived the failed init, say a
 * closure it kept: then the file stays mapped for it). */
KC_API kc_status* kc_plugin_load(const char* path, kc_plugin** out_plugin);

/* Unloads `plugin` (see above), or counts one load off when it was loaded
 * more than once (the plugin then stays loaded). When it is its last
 * load, in this order: its registry entries are hidden (lookups stop
 * finding them), lookups running on other threads are waited for, and the
 * plugin's objects are checked. If something outside the plugin still
 * holds one, the entries are shown again and the unload fails, leaving
 * the plugin loaded and its registrations intact. Otherwise its entries
 * are removed (kernels numbered after the plugin's move down), its
 * objects are freed (their deleters run), its fini runs, and its file is
 * closed; the handle stays safe to pass but answers FAILED_PRECONDITION
 * until the file is loaded again. Errors:
 *   INVALID_ARGUMENT     plugin is NULL, or not a handle from
 *                        kc_plugin_load
 *   FAILED_PRECONDITION  the plugin is not loaded (unloaded already);
 *                        it has no fini (it does not support unloading);
 *                        it is still in use: the message names each
 *                        object held ("function 'mylib.add' is held by 1
 *                        reference", "custom-call target 'f@Host' ...", "a
 *                        function it made and did not register (code at
 *                        libmine.so+0x1139) ...") and by how many
 *                        references; or called from inside a plugin's
 *                        init. Nothing changed.
 *   FAILED_PRECONDITION  its registrations were removed, but an object it
 *                        made was still alive after they were freed (a
 *                        reference taken in the meantime, which the rules
 *                        above exclude): the file stays loaded; a later
 *                        kc_plugin_unload finishes the job once the
 *                        object is released, and loading the file fails
 *                        until then
 *   RESOURCE_EXHAUSTED   out of memory; nothing changed
 * Thread-safe; blocks while other threads are inside a registry lookup
 * (a few loads and compares). Object deleters and fini run on the calling
 * thread; they must not load or unload plugins. */
KC_API kc_status* kc_plugin_unload(kc_plugin* plugin);

/* Fills `out` (up to out->struct_size). INVALID_ARGUMENT for NULLs or a
 * handle not from kc_plugin_load; FAILED_PRECONDITION once the plugin is
 * unloaded. */
KC_API kc_status* kc_plugin_get_desc(const kc_plugin* plugin,
                                     kc_plugin_desc* out);

/* The `index`-th registration of `plugin`, in the order they were made.
 * OUT_OF_RANGE past the end; otherwise as kc_plugin_get_desc. */
KC_API kc_status* kc_plugin_get_registration(const kc_plugin* plugin,
                                             size_t index,
                                             kc_registration* out);

/* The host API table handed to plugins. Static storage. */
KC_API const kc_host_api* kc_plugin_get_host_api(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_PLUGIN_H_ */
