/* Tests of plugin loading and unloading (kcall/plugin.h) against the real
 * shared objects built from tests/fixtures/. Plugins that are not unloaded
 * stay loaded for the life of the process; ctest runs every test in its
 * own process, so each starts clean. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt_ops.h"
#include "test.h"

#define KT_FIXTURE(name) KC_FIXTURE_DIR "/kt_plugin_" name ".so"

static kc_plugin* kt_load(const char* path) {
  kc_plugin* p = NULL;
  KC_CHECK_OK(kc_plugin_load(path, &p));
  KC_CHECK(p != NULL);
  return p;
}

static kc_plugin_desc kt_desc(const kc_plugin* p) {
  kc_plugin_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  KC_CHECK_OK(kc_plugin_get_desc(p, &d));
  return d;
}

static kc_func* kt_lookup(const char* name) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(kc_sv(name), &f));
  return f;
}

static void kt_check_absent(const char* name) {
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(kc_sv(name), &f), KC_NOT_FOUND, name);
}

/* All registered names, joined with spaces, for before/after comparisons. */
static void kt_names(char* buf, size_t cap) {
  kc_array* list = NULL;
  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), KC_SV_LIT(""), &list));
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < kc_array_get_size(list); ++i) {
    kc_string_view v;
    KC_CHECK(kc_any_get_string(kc_array_get_item(list, i), &v));
    int n = snprintf(buf + used, cap - used, "%.*s ", (int)v.size, v.data);
    KC_CHECK(n > 0 && (size_t)n < cap - used);
    used += (size_t)n;
  }
  kc_object_release(KC_OBJECT(list));
}

static kc_status* kt_seven(void* self, const kc_any* args, int32_t nargs,
                           kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  *ret = kc_any_int(7);
  return NULL;
}

static void kt_register_seven(const char* name) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_create(kt_alloc(), kt_seven, NULL, NULL, &f));
  KC_CHECK_OK(kc_func_registry_register(kc_sv(name), f, 0));
  kc_object_release(KC_OBJECT(f));
}

static int64_t kt_call_int(const kc_func* f, const kc_any* args, int32_t n) {
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kc_func_call(f, args, n, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_INT);
  return ret.u.v_int64;
}

/* ---- (a) a good plugin --------------------------------------------------------- */

KC_TEST(plugin_load_good_and_call) {
  kt_load(KT_FIXTURE("good"));
  kc_any args[] = {kc_any_int(20), kc_any_int(22)};
  KC_CHECK_INT(kt_call_int(kt_lookup("kt_good.add"), args, 2), 42);
  /* twice calls add through the host's registry. */
  KC_CHECK_INT(kt_call_int(kt_lookup("kt_good.twice"), args, 1), 40);
  kc_any name = kc_any_cstr("kcall tests");
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kc_func_call(kt_lookup("kt_good.greet"), &name, 1, &ret));
  kc_string_view v;
  KC_CHECK(kc_any_get_string(&ret, &v) && kt_sv_is(v, "hello, kcall tests"));
  kc_any_release(&ret);
  /* The plugin's helpers report errors in the documented form. */
  kc_any wrong[] = {kc_any_int(1), kc_any_cstr("x")};
  KC_CHECK_CODE(kc_func_call(kt_lookup("kt_good.add"), wrong, 2, &ret),
                KC_INVALID_ARGUMENT, "kt_good.add: argument 1: expected int, got str");
}

KC_TEST(plugin_desc_and_registrations) {
  kc_plugin* p = kt_load(KT_FIXTURE("good"));
  kc_plugin_desc d = kt_desc(p);
  KC_CHECK_STR(d.path, KT_FIXTURE("good"));
  KC_CHECK_STR(d.name, "kt_good");
  KC_CHECK_STR(d.version, "1.2.3");
  KC_CHECK_INT(d.built_api_major, KC_API_VERSION_MAJOR);
  KC_CHECK_INT(d.built_api_minor, KC_API_VERSION_MINOR);
  KC_CHECK_INT(d.api_major, KC_API_VERSION_MAJOR);
  KC_CHECK_INT(d.api_minor, KC_API_VERSION_MINOR);
  KC_CHECK_INT(d.registration_count, 3);
  const char* names[] = {"kt_good.add", "kt_good.twice", "kt_good.greet"};
  for (size_t i = 0; i < 3; ++i) {
    kc_registration r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    KC_CHECK_OK(kc_plugin_get_registration(p, i, &r));
    KC_CHECK_STR(r.kind, "function");
    KC_CHECK(kt_sv_is(r.name, names[i]));
  }
  kc_registration r;
  r.struct_size = sizeof r;
  KC_CHECK_CODE(kc_plugin_get_registration(p, 3, &r), KC_OUT_OF_RANGE, "");
  KC_CHECK_CODE(kc_plugin_get_registration(p, (size_t)-1, &r), KC_OUT_OF_RANGE, "");
}

KC_TEST(plugin_desc_respects_struct_size) {
  kc_plugin* p = kt_load(KT_FIXTURE("good"));
  kc_plugin_desc d;
  memset(&d, 0x7b, sizeof d);
  d.struct_size = offsetof(kc_plugin_desc, version);
  KC_CHECK_OK(kc_plugin_get_desc(p, &d));
  KC_CHECK_STR(d.name, "kt_good");
  kc_plugin_desc untouched;
  memset(&untouched, 0x7b, sizeof untouched);
  size_t from = offsetof(kc_plugin_desc, version);
  KC_CHECK(memcmp((char*)&d + from, (char*)&untouched + from, sizeof d - from) == 0);
}

KC_TEST(plugin_load_twice_same_handle) {
  kc_plugin* a = kt_load(KT_FIXTURE("good"));
  kc_plugin* b = kt_load(KT_FIXTURE("good"));
  KC_CHECK(a == b);
  KC_CHECK_INT(kt_desc(b).registration_count, 3);
  kc_any args[] = {kc_any_int(1), kc_any_int(2)};
  KC_CHECK_INT(kt_call_int(kt_lookup("kt_good.add"), args, 2), 3);
}

KC_TEST(plugin_same_file_other_path) {
  kc_plugin* a = kt_load(KT_FIXTURE("good"));
  /* Another spelling of the same file is the same plugin, not a second
   * init that would collide with the first one's names. */
  kc_plugin* b = kt_load(KC_FIXTURE_DIR "/./kt_plugin_good.so");
  KC_CHECK(a == b);
}

KC_TEST(plugin_bad_input) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(NULL, &p), KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("good"), NULL), KC_INVALID_ARGUMENT, "");
  kc_plugin_desc d;
  d.struct_size = sizeof d;
  KC_CHECK_CODE(kc_plugin_get_desc(NULL, &d), KC_INVALID_ARGUMENT, "");
  p = kt_load(KT_FIXTURE("good"));
  KC_CHECK_CODE(kc_plugin_get_desc(p, NULL), KC_INVALID_ARGUMENT, "");
  kc_registration r;
  r.struct_size = sizeof r;
  KC_CHECK_CODE(kc_plugin_get_registration(NULL, 0, &r), KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_plugin_get_registration(p, 0, NULL), KC_INVALID_ARGUMENT, "");
}

KC_TEST(plugin_host_api_table) {
  const kc_host_api* host = kc_plugin_get_host_api();
  KC_CHECK(host != NULL);
  KC_CHECK(host == kc_plugin_get_host_api());
  KC_CHECK_INT(host->struct_size, sizeof(kc_host_api));
  KC_CHECK_INT(host->api_major, KC_API_VERSION_MAJOR);
  KC_CHECK_INT(host->api_minor, KC_API_VERSION_MINOR);
  KC_CHECK(host->features != NULL);
  for (size_t i = 0; host->features[i]; ++i) {
    KC_CHECK(host->features[i][0] != '\0');
    KC_CHECK(strcmp(host->features[i], "kt.teleportation") != 0);
  }
  KC_CHECK(host->system_allocator == kc_allocator_system());
  /* Every entry is filled in. */
  const void* entries[] = {
      (const void*)host->status_create,     (const void*)host->status_add_context,
      (const void*)host->status_get_code,   (const void*)host->status_get_message,
      (const void*)host->status_destroy,    (const void*)host->object_retain,
      (const void*)host->object_release,    (const void*)host->any_retain,
      (const void*)host->any_release,       (const void*)host->any_from_string,
      (const void*)host->any_get_string,    (const void*)host->str_create,
      (const void*)host->bytes_create,      (const void*)host->array_create,
      (const void*)host->array_get_size,    (const void*)host->array_get_item,
      (const void*)host->tensor_create,     (const void*)host->tensor_get_dltensor,
      (const void*)host->func_create,       (const void*)host->func_call,
      (const void*)host->func_registry_register,
      (const void*)host->func_registry_lookup,
      (const void*)host->args_check_count,  (const void*)host->args_get_int,
      (const void*)host->args_get_float,    (const void*)host->args_get_bool,
      (const void*)host->args_get_string,   (const void*)host->args_get_func,
      (const void*)host->args_get_dltensor, (const void*)host->args_get_opaque,
  };
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
    if (!entries[i]) kt__fail(__FILE__, __LINE__, "host entry %zu is NULL", i);
  }
  /* They behave as the library functions do. */
  kc_status* st = host->status_create(KC_NOT_FOUND, "via %s", "table");
  KC_CHECK_INT(host->status_get_code(st), KC_NOT_FOUND);
  KC_CHECK_STR(host->status_get_message(st), "via table");
  host->status_destroy(st);
  kt_register_seven("t.host_table");
  kc_func* f = NULL;
  KC_CHECK_OK(host->func_registry_lookup(KC_SV_LIT("t.host_table"), &f));
  KC_CHECK(f == kt_lookup("t.host_table"));
}

/* ---- (b) .. (j) plugins that must not load -------------------------------------- */

KC_TEST(plugin_no_entry_symbol) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("no_entry"), &p), KC_INVALID_ARGUMENT,
                KT_FIXTURE("no_entry"), KC_PLUGIN_ENTRY_SYMBOL);
  KC_CHECK(p == NULL);
}

KC_TEST(plugin_newer_major_refused) {
  char built[32], offered[32];
  snprintf(built, sizeof built, "%d.0", KC_API_VERSION_MAJOR + 1);
  snprintf(offered, sizeof offered, "%d.%d", KC_API_VERSION_MAJOR,
           KC_API_VERSION_MINOR);
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("major"), &p), KC_FAILED_PRECONDITION,
                KT_FIXTURE("major"), built, offered);
  KC_CHECK(p == NULL);
  kt_check_absent("kt_major.fn"); /* init never ran */
  /* What the entry point registered was staged, and went with the refusal
   * (it would point into the closed file). */
  kt_check_absent("kt_major.from_entry");
}

KC_TEST(plugin_older_major_refused) {
  /* Another major is another ABI, older as much as newer. */
  char built[64], offered[64];
  snprintf(built, sizeof built, "built for kcall plugin API %d.9",
           KC_API_VERSION_MAJOR - 1);
  snprintf(offered, sizeof offered, "this host offers %d.%d",
           KC_API_VERSION_MAJOR, KC_API_VERSION_MINOR);
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("major_old"), &p),
                KC_FAILED_PRECONDITION, KT_FIXTURE("major_old"), built, offered);
  KC_CHECK(p == NULL);
  kt_check_absent("kt_major_old.fn"); /* init never ran */
}

KC_TEST(plugin_newer_minor_capped) {
  kc_plugin* p = kt_load(KT_FIXTURE("minor"));
  kc_plugin_desc d = kt_desc(p);
  KC_CHECK_STR(d.name, "kt_minor");
  KC_CHECK_INT(d.built_api_major, KC_API_VERSION_MAJOR);
  KC_CHECK_INT(d.built_api_minor, KC_API_VERSION_MINOR + 1);
  KC_CHECK_INT(d.api_major, KC_API_VERSION_MAJOR);
  KC_CHECK_INT(d.api_minor, KC_API_VERSION_MINOR);
  KC_CHECK_INT(d.registration_count, 1);
  /* The plugin sees the host's minor in the table it was given. */
  KC_CHECK_INT(kt_call_int(kt_lookup("kt_minor.host_minor"), NULL, 0),
               KC_API_VERSION_MINOR);
}

KC_TEST(plugin_init_failure_leaves_nothing) {
  kt_register_seven("t.before");
  char before[1024], after[1024];
  kt_names(before, sizeof before);
  for (int attempt = 0; attempt < 2; ++attempt) {
    kc_plugin* p = NULL;
    KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("init_fails"), &p), KC_ABORTED,
                  "kt_fail: the device is on fire", KT_FIXTURE("init_fails"));
    KC_CHECK(p == NULL);
    kt_check_absent("kt_fail.one");
    kt_check_absent("kt_fail.two");
    kt_names(after, sizeof after);
    KC_CHECK_STR(after, before);
  }
  KC_CHECK_INT(kt_call_int(kt_lookup("t.before"), NULL, 0), 7);
}

KC_TEST(plugin_not_a_shared_object) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KC_NOT_A_PLUGIN, &p), KC_INVALID_ARGUMENT,
                KC_NOT_A_PLUGIN);
  KC_CHECK(p == NULL);
  /* A directory is not one either. */
  KC_CHECK_CODE(kc_plugin_load(KC_FIXTURE_DIR, &p), KC_INVALID_ARGUMENT,
                KC_FIXTURE_DIR);
}

KC_TEST(plugin_short_info_refused) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("short_info"), &p), KC_INVALID_ARGUMENT,
                KT_FIXTURE("short_info"));
  KC_CHECK(p == NULL);
  kt_check_absent("kt_short.fn");
}

KC_TEST(plugin_null_info_refused) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("null_info"), &p), KC_INVALID_ARGUMENT,
                KT_FIXTURE("null_info"));
  KC_CHECK(p == NULL);
}

KC_TEST(plugin_missing_feature_refused) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("feature"), &p), KC_FAILED_PRECONDITION,
                "kt.teleportation", KT_FIXTURE("feature"));
  KC_CHECK(p == NULL);
  kt_check_absent("kt_feature.fn");
}

KC_TEST(plugin_name_conflict_publishes_nothing) {
  kt_register_seven("kt_conflict.taken");
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("conflict"), &p), KC_ALREADY_EXISTS,
                "kt_conflict.taken");
  KC_CHECK(p == NULL);
  kt_check_absent("kt_conflict.free");
  KC_CHECK_INT(kt_call_int(kt_lookup("kt_conflict.taken"), NULL, 0), 7);
  /* Once the name is free the same file loads: the failed attempt left
   * nothing behind, not even a half-loaded plugin. */
  KC_CHECK_OK(kc_func_registry_remove(KC_SV_LIT("kt_conflict.taken")));
  p = kt_load(KT_FIXTURE("conflict"));
  KC_CHECK_INT(kt_desc(p).registration_count, 2);
  KC_CHECK_INT(kt_call_int(kt_lookup("kt_conflict.taken"), NULL, 0), 42);
  KC_CHECK_INT(kt_call_int(kt_lookup("kt_conflict.free"), NULL, 0), 42);
}

KC_TEST(plugin_missing_file) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KC_FIXTURE_DIR "/no_such_plugin.so", &p),
                KC_NOT_FOUND, KC_FIXTURE_DIR "/no_such_plugin.so");
  KC_CHECK(p == NULL);
}

/* A copy of the first `cut` bytes of `from`, in a new file; its path in
 * `out` (at least 32 bytes). */
static void kt_truncated_copy(const char* from, long cut, char* out) {
  FILE* in = fopen(from, "rb");
  KC_CHECK(in != NULL);
  char* bytes = malloc((size_t)cut);
  KC_CHECK(bytes && fread(bytes, 1, (size_t)cut, in) == (size_t)cut);
  fclose(in);
  strcpy(out, "/tmp/kt_truncated_XXXXXX");
  int fd = mkstemp(out);
  KC_CHECK(fd >= 0);
  KC_CHECK(write(fd, bytes, (size_t)cut) == (ssize_t)cut);
  close(fd);
  free(bytes);
}

KC_TEST(plugin_truncated_file_is_refused_before_dlopen) {
  /* Cut inside the ELF header, inside the program headers, and one byte
   * before the end of the last loadable segment: each is refused, none
   * reaches dlopen (which would die of SIGBUS on the last). */
  FILE* f = fopen(KT_FIXTURE("good"), "rb");
  KC_CHECK(f != NULL);
  Elf64_Ehdr eh;
  KC_CHECK(fread(&eh, sizeof eh, 1, f) == 1);
  long load_end = 0;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    KC_CHECK(fseek(f, (long)(eh.e_phoff + (size_t)i * sizeof ph), SEEK_SET) == 0);
    KC_CHECK(fread(&ph, sizeof ph, 1, f) == 1);
    long end = (long)(ph.p_offset + ph.p_filesz);
    if (ph.p_type == PT_LOAD && end > load_end) load_end = end;
  }
  fclose(f);
  KC_CHECK(load_end > 200);
  const long cuts[] = {40, 80, load_end - 1};
  const char* messages[] = {"truncated: the ELF header needs",
                            "truncated: its program headers end at byte",
                            "truncated: loadable segment"};
  for (int i = 0; i < 3; ++i) {
    char path[32];
    kt_truncated_copy(KT_FIXTURE("good"), cuts[i], path);
    kc_plugin* p = NULL;
    KC_CHECK_CODE(kc_plugin_load(path, &p), KC_INVALID_ARGUMENT, path, messages[i]);
    KC_CHECK(p == NULL);
    unlink(path);
  }
}

/* ---- unloading ------------------------------------------------------------------ */

#define KT_UNLOAD KT_FIXTURE("unload")

static int kt_fini_runs;

static kc_status* kt_note_fini(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  (void)ret;
  kt_fini_runs++;
  return NULL;
}

/* The host's function the fixture's fini calls. */
static void kt_watch_fini(void) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_create(kt_alloc(), kt_note_fini, NULL, NULL, &f));
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("kt_host.fini_ran"), f, 0));
  kc_object_release(KC_OBJECT(f));
}

static int64_t kt_add_via_registry(int64_t a, int64_t b) {
  kc_any args[] = {kc_any_int(a), kc_any_int(b)};
  return kt_call_int(kt_lookup("kt_unload.add"), args, 2);
}

/* Everything the fixture registers is gone. */
static void kt_check_unloaded_names(void) {
  kt_check_absent("kt_unload.add");
  kt_check_absent("kt_unload.adder");
  kt_check_absent("op.kt_unload.Double");
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt_unload.Double"), &op),
                KC_NOT_FOUND, "kt_unload.Double");
  kc_xcall_target_desc d = {.struct_size = sizeof d};
  KC_CHECK_CODE(kc_xcall_lookup(KC_SV_LIT("kt_unload_inc"), KC_PLATFORM_HOST, &d),
                KC_NOT_FOUND, "kt_unload_inc@Host");
  KC_CHECK_CODE(kc_xcall_lookup(KC_SV_LIT("kt_unload_xla"), KC_PLATFORM_HOST, &d),
                KC_NOT_FOUND, "kt_unload_xla@Host");
  kc_array* kernels = NULL;
  KC_CHECK_OK(kc_kernel_registry_list(kt_alloc(), KC_SV_LIT("kt_unload.Double"),
                                      &kernels));
  KC_CHECK_INT(kc_array_get_size(kernels), 0);
  kc_object_release(KC_OBJECT(kernels));
}

KC_TEST(plugin_unload_removes_everything_and_reloads) {
  kt_watch_fini();
  kc_plugin* p = kt_load(KT_UNLOAD);
  KC_CHECK_INT(kt_add_via_registry(1, 2), 3);
  KC_CHECK_INT(kt_desc(p).registration_count, 8);
  KC_CHECK_OK(kc_plugin_unload(p));
  KC_CHECK_INT(kt_fini_runs, 1);
  kt_check_unloaded_names();
  /* The handle answers, and says why. */
  kc_plugin_desc d = {.struct_size = sizeof d};
  KC_CHECK_CODE(kc_plugin_get_desc(p, &d), KC_FAILED_PRECONDITION, "unloaded",
                KT_UNLOAD);
  kc_registration r = {.struct_size = sizeof r};
  KC_CHECK_CODE(kc_plugin_get_registration(p, 0, &r), KC_FAILED_PRECONDITION,
                "unloaded");
  /* The file loads again (init runs again) and works. */
  kc_plugin* again = kt_load(KT_UNLOAD);
  KC_CHECK(again == p);
  KC_CHECK_INT(kt_add_via_registry(20, 22), 42);
  KC_CHECK_INT(kt_desc(again).registration_count, 8);
  KC_CHECK_OK(kc_plugin_unload(again));
  KC_CHECK_INT(kt_fini_runs, 2);
  kt_check_unloaded_names();
}

KC_TEST(plugin_unload_refused_while_a_function_is_held) {
  kt_watch_fini();
  kc_plugin* p = kt_load(KT_UNLOAD);
  kc_func* held = NULL;
  KC_CHECK_OK(kc_func_registry_lookup_retained(KC_SV_LIT("kt_unload.add"), &held));
  KC_CHECK_CODE(kc_plugin_unload(p), KC_FAILED_PRECONDITION,
                "plugin 'kt_unload' is still in use",
                "function 'kt_unload.add' is held by 1 reference");
  KC_CHECK_INT(kt_fini_runs, 0);
  /* Nothing changed: every name is there and works. */
  KC_CHECK_INT(kt_add_via_registry(2, 3), 5);
  KC_CHECK_INT(kt_desc(p).registration_count, 8);
  const kc_op* op = NULL;
  KC_CHECK_OK(kc_op_registry_lookup(KC_SV_LIT("kt_unload.Double"), &op));
  kc_xcall_target_desc td = {.struct_size = sizeof td};
  KC_CHECK_OK(kc_xcall_lookup(KC_SV_LIT("kt_unload_inc"), KC_PLATFORM_HOST, &td));
  /* Two references now: both counted. */
  kc_object_retain(KC_OBJECT(held));
  KC_CHECK_CODE(kc_plugin_unload(p), KC_FAILED_PRECONDITION,
                "function 'kt_unload.add' is held by 2 references");
  kc_object_release(KC_OBJECT(held));
  kc_any args[] = {kc_any_int(4), kc_any_int(5)};
  KC_CHECK_INT(kt_call_int(held, args, 2), 9);
  kc_object_release(KC_OBJECT(held));
  KC_CHECK_OK(kc_plugin_unload(p));
  KC_CHECK_INT(kt_fini_runs, 1);
  kt_check_unloaded_names();
}

KC_TEST(plugin_unload_refused_while_a_closure_is_held) {
  kc_plugin* p = kt_load(KT_UNLOAD);
  kc_any n = kc_any_int(10);
  kc_any closure = kc_any_none();
  KC_CHECK_OK(kc_func_call(kt_lookup("kt_unload.adder"), &n, 1, &closure));
  KC_CHECK_INT(closure.type_index, KC_TYPE_FUNC);
  KC_CHECK_CODE(kc_plugin_unload(p), KC_FAILED_PRECONDITION,
                "a function it made and did not register (code at "
                "kt_plugin_unload.so+0x",
                "is held by 1 reference");
  kc_func* f = (kc_func*)(void*)closure.u.v_obj;
  kc_any x = kc_any_int(5);
  KC_CHECK_INT(kt_call_int(f, &x, 1), 15);
  kc_any_release(&closure); /* its deleter is the plugin's code */
  KC_CHECK_OK(kc_plugin_unload(p));
  kt_check_unloaded_names();
}

static kc_executable* kt_compile_inc(void) {
  static const char text[] =
      "HloModule inc\n"
      "ENTRY main {\n"
      "  x = f32[4]{0} parameter(0)\n"
      "  ROOT y = f32[4]{0} custom-call(x), custom_call_target=\"kt_unload_inc\"\n"
      "}\n";
  kc_program* prog = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &prog));
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(prog, NULL, &exe);
  kc_program_destroy(prog);
  KC_CHECK_OK(st);
  return exe;
}

KC_TEST(plugin_unload_refused_while_an_executable_holds_a_target) {
  kc_plugin* p = kt_load(KT_UNLOAD);
  kc_executable* exe = kt_compile_inc();
  KC_CHECK_CODE(kc_plugin_unload(p), KC_FAILED_PRECONDITION,
                "custom-call target 'kt_unload_inc@Host' is held by 1 reference",
                "destroy executables compiled against its targets");
  /* The executable still runs the plugin's code. */
  const int64_t four = 4;
  const float in[4] = {1, 2, 3, 4};
  kc_tensor* x = kt_tensor(kt_f32, &four, 1, in);
  const DLTensor* ins[1] = {kt_dl(x)};
  kc_execute_options o = {.struct_size = sizeof o, .allocator = kt_alloc()};
  kc_tensor* y = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, ins, 1, &o, &y));
  KC_CHECK(((const float*)kt_dl(y)->data)[3] == 5.0f);
  kt_release(y);
  kt_release(x);
  kc_executable_destroy(exe);
  KC_CHECK_OK(kc_plugin_unload(p));
  kt_check_unloaded_names();
  /* A program calling the target no longer compiles. */
  kc_program* prog = NULL;
  KC_CHECK_OK(kc_program_parse(
      KC_SV_LIT("HloModule inc\nENTRY main {\n  x = f32[4]{0} parameter(0)\n"
                "  ROOT y = f32[4]{0} custom-call(x), "
                "custom_call_target=\"kt_unload_inc\"\n}\n"),
      &prog));
  KC_CHECK_CODE(kc_program_compile(prog, NULL, &exe), KC_NOT_FOUND, "kt_unload_inc");
  kc_program_destroy(prog);
}

KC_TEST(plugin_unload_refused_while_an_op_is_held) {
  kc_plugin* p = kt_load(KT_UNLOAD);
  const kc_op* op = NULL;
  KC_CHECK_OK(kc_op_registry_lookup_retained(KC_SV_LIT("kt_unload.Double"), &op));
  const int64_t two = 2;
  const float in[2] = {1.5f, -3};
  kc_tensor* x = kt_tensor(kt_f32, &two, 1, in);
  kc_tensor* y = NULL;
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)&x, 1, NULL, 0, &y));
  KC_CHECK(((const float*)kt_dl(y)->data)[1] == -6.0f);
  kt_release(y);
  KC_CHECK_CODE(kc_plugin_unload(p), KC_FAILED_PRECONDITION,
                "op 'kt_unload.Double' is held by 1 reference");
  kc_object_release(KC_OBJECT((kc_op*)(uintptr_t)op));
  /* Its kernel was constructed and cached by its own op: not a use. */
  KC_CHECK_OK(kc_plugin_unload(p));
  kt_check_unloaded_names();
  kt_release(x);
}

static kc_status* kt_plus(kc_kernel_ctx* ctx, float amount) {
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  ((float*)y->data)[0] = ((const float*)x->data)[0] + amount;
  return NULL;
}
static kc_status* kt_plus_one(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  return kt_plus(ctx, 1);
}
static kc_status* kt_plus_ten(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  return kt_plus(ctx, 10);
}

/* kt.HostOp(x) on one f32, with the kernel selection makes. */
static float kt_host_op(float value) {
  const int64_t one = 1;
  kc_tensor* x = kt_tensor(kt_f32, &one, 1, &value);
  kc_tensor* y = NULL;
  KC_CHECK_OK(kt_call1(kt_op("kt.HostOp"), (const kc_tensor* const*)&x, 1, NULL, 0, &y));
  float result = y ? ((const float*)kt_dl(y)->data)[0] : -1;
  kt_release(y);
  kt_release(x);
  return result;
}

static void kt_register_host_op(uint32_t flags) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.HostOp", &b));
  KC_CHECK_OK(kc_op_builder_add_input(b, "x: f32"));
  KC_CHECK_OK(kc_op_builder_add_output(b, "y: f32"));
  KC_CHECK_OK(kc_op_builder_set_shape_fn(b, kc_shape_fn_unchanged));
  KC_CHECK_OK(kc_op_registry_register(b, flags));
}

KC_TEST(plugin_unload_renumbers_the_kernels_of_other_ops) {
  /* kt.HostOp: the host's kernel (number 0, +1), the plugin's (1, +100,
   * priority 5), another of the host's (2, +10, priority 3). */
  kt_register_host_op(0);
  kt_register_kernel("kt.HostOp", NULL, kt_plus_one, NULL, NULL, NULL, 0, 0);
  kc_plugin* p = kt_load(KT_UNLOAD);
  kt_register_kernel("kt.HostOp", NULL, kt_plus_ten, NULL, NULL, NULL, 0, 3);
  kc_array* kernels = NULL;
  KC_CHECK_OK(kc_kernel_registry_list(kt_alloc(), KC_SV_LIT("kt.HostOp"), &kernels));
  KC_CHECK_INT(kc_array_get_size(kernels), 3);
  kc_object_release(KC_OBJECT(kernels));
  KC_CHECK_OK(kc_plugin_unload(p));
  /* Number 2 moved to 1: selection, which stops at the first free number,
   * still sees it. */
  KC_CHECK_OK(kc_kernel_registry_list(kt_alloc(), KC_SV_LIT("kt.HostOp"), &kernels));
  KC_CHECK_INT(kc_array_get_size(kernels), 2);
  kc_object_release(KC_OBJECT(kernels));
  KC_CHECK(kt_host_op(1) == 11.0f);
  /* Loaded again, its kernel takes number 2 and wins on priority. */
  p = kt_load(KT_UNLOAD);
  KC_CHECK(kt_host_op(1) == 101.0f);
}

KC_TEST(plugin_unload_refused_while_another_op_caches_its_kernel) {
  kt_register_host_op(0);
  kt_register_kernel("kt.HostOp", NULL, kt_plus_one, NULL, NULL, NULL, 0, 0);
  kc_plugin* p = kt_load(KT_UNLOAD);
  KC_CHECK(kt_host_op(1) == 101.0f); /* the plugin's kernel, cached */
  KC_CHECK_CODE(kc_plugin_unload(p), KC_FAILED_PRECONDITION, "kernel 'kt.HostOp:cpu:1'",
                "(in the kernel cache of op 'kt.HostOp')");
  KC_CHECK(kt_host_op(1) == 101.0f); /* still loaded and selected */
  /* Replacing the op frees its cache, and with it the last use. */
  kt_register_host_op(KC_REGISTER_OVERRIDE);
  KC_CHECK_OK(kc_plugin_unload(p));
  KC_CHECK(kt_host_op(1) == 2.0f);
}

KC_TEST(plugin_unload_counts_loads) {
  kc_plugin* p = kt_load(KT_UNLOAD);
  KC_CHECK(kt_load(KT_UNLOAD) == p);
  KC_CHECK_OK(kc_plugin_unload(p)); /* one load of two: stays */
  KC_CHECK_INT(kt_add_via_registry(1, 1), 2);
  KC_CHECK_INT(kt_desc(p).registration_count, 8);
  KC_CHECK_OK(kc_plugin_unload(p));
  kt_check_unloaded_names();
}

KC_TEST(plugin_unload_bad_handles) {
  KC_CHECK_CODE(kc_plugin_unload(NULL), KC_INVALID_ARGUMENT, "plugin is NULL");
  /* Not a handle at all: recognised without reading it. */
  kc_plugin* bogus = (kc_plugin*)(void*)&kt_fini_runs;
  KC_CHECK_CODE(kc_plugin_unload(bogus), KC_INVALID_ARGUMENT,
                "not a plugin handle");
  kc_plugin_desc d = {.struct_size = sizeof d};
  KC_CHECK_CODE(kc_plugin_get_desc(bogus, &d), KC_INVALID_ARGUMENT,
                "not a plugin handle");
  kc_plugin* p = kt_load(KT_UNLOAD);
  KC_CHECK_OK(kc_plugin_unload(p));
  KC_CHECK_CODE(kc_plugin_unload(p), KC_FAILED_PRECONDITION, "is not loaded",
                KT_UNLOAD);
}

KC_TEST(plugin_unload_needs_fini) {
  kc_plugin* p = kt_load(KT_FIXTURE("good"));
  KC_CHECK_CODE(kc_plugin_unload(p), KC_FAILED_PRECONDITION, "'kt_good'",
                "has no fini");
  kc_any args[] = {kc_any_int(1), kc_any_int(2)};
  KC_CHECK_INT(kt_call_int(kt_lookup("kt_good.add"), args, 2), 3);
}

KC_TEST(plugin_unload_frees_what_the_registry_held) {
  /* The registries' references were the last ones: after the unload the
   * plugin's objects are gone, and nothing waits to be freed. */
  kc_plugin* p = kt_load(KT_UNLOAD);
  kc_any n = kc_any_int(1);
  kc_any closure = kc_any_none();
  KC_CHECK_OK(kc_func_call(kt_lookup("kt_unload.adder"), &n, 1, &closure));
  kc_any_release(&closure);
  KC_CHECK_OK(kc_plugin_unload(p));
  kc_registry_stats s = {.struct_size = sizeof s};
  kc_registry_query_stats(&s);
  KC_CHECK_INT(s.retired_objects, 0);
}

static kc_object* kt_kept;

/* kt_host.keep(f): keeps a reference to f. */
static kc_status* kt_keep(void* self, const kc_any* args, int32_t nargs,
                          kc_any* ret) {
  (void)self;
  (void)ret;
  KC_CHECK_INT(nargs, 1);
  KC_CHECK(kt_kept == NULL);
  kt_kept = args[0].u.v_obj;
  kc_object_retain(kt_kept);
  return NULL;
}

KC_TEST(plugin_failed_load_keeps_the_file_for_what_outlives_it) {
  kc_func* keep = NULL;
  KC_CHECK_OK(kc_func_create(kt_alloc(), kt_keep, NULL, NULL, &keep));
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("kt_host.keep"), keep, 0));
  kc_object_release(KC_OBJECT(keep));
  for (int attempt = 0; attempt < 2; ++attempt) {
    kc_plugin* p = NULL;
    KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("keeps_closure"), &p), KC_ABORTED,
                  "failing after handing out a closure");
    KC_CHECK(p == NULL);
    /* The closure's code is still mapped: calling it works. */
    KC_CHECK(kt_kept != NULL);
    KC_CHECK_INT(kt_call_int((kc_func*)(void*)kt_kept, NULL, 0), 42);
    kc_object_release(kt_kept);
    kt_kept = NULL;
  }
}
