/* Tests of the global function registry (kcall/func.h). The runner resets
 * the registry after every test. */
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* Returns self's constant: tells apart which function a name resolves to. */
static kc_status* kt_const(void* self, const kc_any* args, int32_t nargs,
                           kc_any* ret) {
  (void)args;
  (void)nargs;
  *ret = kc_any_int(*(const int64_t*)self);
  return NULL;
}

static kc_func* kt_make_const(const int64_t* value) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_create(kt_alloc(), kt_const, (void*)(uintptr_t)value, NULL, &f));
  return f;
}

/* Registers a new constant function under `name` and drops the test's own
 * reference, so the registry holds the only one. */
static void kt_register_const(const char* name, const int64_t* value,
                              uint32_t flags) {
  kc_func* f = kt_make_const(value);
  KC_CHECK_OK(kc_func_registry_register(kc_sv(name), f, flags));
  kc_object_release(KC_OBJECT(f));
}

static int64_t kt_call_name(const char* name) {
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(kc_sv(name), &f));
  kc_any ret;
  KC_CHECK_OK(kc_func_call(f, NULL, 0, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_INT);
  return ret.u.v_int64;
}

static const int64_t kt_one = 1, kt_two = 2, kt_three = 3;

KC_TEST(registry_register_lookup_call) {
  kc_func* f = kt_make_const(&kt_one);
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("t.one"), f, 0));
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(f)), 2);
  kc_func* found = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("t.one"), &found));
  KC_CHECK(found == f);
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(f)), 2); /* borrowed */
  kc_object_release(KC_OBJECT(f));
  KC_CHECK_INT(kt_call_name("t.one"), 1);
  /* The name is compared by its bytes, not by a terminating NUL. */
  kc_string_view prefix_of = {"t.one.more", 5};
  KC_CHECK_OK(kc_func_registry_lookup(prefix_of, &found));
  KC_CHECK(found == f);
}

KC_TEST(registry_valid_names) {
  const char* names[] = {"mylib.add", "mylib::add", "a", "A_b-c.d:e9",
                         "0leading.digit", "x.y.z.w"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    kt_register_const(names[i], &kt_two, 0);
    KC_CHECK_INT(kt_call_name(names[i]), 2);
  }
  char longest[256];
  memset(longest, 'n', 255);
  longest[255] = '\0';
  kt_register_const(longest, &kt_three, 0);
  KC_CHECK_INT(kt_call_name(longest), 3);
}

KC_TEST(registry_duplicate_refused) {
  kt_register_const("t.dup", &kt_one, 0);
  kc_func* g = kt_make_const(&kt_two);
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT("t.dup"), g, 0),
                KC_ALREADY_EXISTS, "t.dup");
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(g)), 1); /* not taken */
  KC_CHECK_INT(kt_call_name("t.dup"), 1);
  kc_object_release(KC_OBJECT(g));
}

KC_TEST(registry_override_replaces) {
  kt_register_const("t.over", &kt_one, 0);
  kc_func* old = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("t.over"), &old));
  kt_register_const("t.over", &kt_two, KC_REGISTER_OVERRIDE);
  KC_CHECK_INT(kt_call_name("t.over"), 2);
  /* The replaced function stays valid for whoever looked it up. */
  kc_any ret;
  KC_CHECK_OK(kc_func_call(old, NULL, 0, &ret));
  KC_CHECK_INT(ret.u.v_int64, 1);
  /* Overriding a name that is not there simply registers it. */
  kt_register_const("t.fresh", &kt_three, KC_REGISTER_OVERRIDE);
  KC_CHECK_INT(kt_call_name("t.fresh"), 3);
}

KC_TEST(registry_malformed_names) {
  kc_func* f = kt_make_const(&kt_one);
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT(""), f, 0),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT("my lib"), f, 0),
                KC_INVALID_ARGUMENT, "2");
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT("mylib/add"), f, 0),
                KC_INVALID_ARGUMENT, "5");
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT("tab\there"), f, 0),
                KC_INVALID_ARGUMENT, "3");
  kc_string_view embedded_nul = {"ab\0c", 4};
  KC_CHECK_CODE(kc_func_registry_register(embedded_nul, f, 0),
                KC_INVALID_ARGUMENT, "2");
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT("caf\xc3\xa9"), f, 0),
                KC_INVALID_ARGUMENT, "3");
  char big[300];
  memset(big, 'a', sizeof big);
  kc_string_view too_long = {big, sizeof big};
  KC_CHECK_CODE(kc_func_registry_register(too_long, f, 0), KC_INVALID_ARGUMENT,
                "");
  too_long.size = 256;
  KC_CHECK_CODE(kc_func_registry_register(too_long, f, 0), KC_INVALID_ARGUMENT,
                "");
  kc_string_view null_data = {NULL, 3};
  KC_CHECK_CODE(kc_func_registry_register(null_data, f, 0), KC_INVALID_ARGUMENT,
                "");
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT("t.null"), NULL, 0),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(f)), 1);
  kc_array* all = NULL;
  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), KC_SV_LIT(""), &all));
  KC_CHECK_INT(kc_array_get_size(all), 0);
  kc_object_release(KC_OBJECT(all));
  kc_object_release(KC_OBJECT(f));
}

/* The formatted status, checked to be shorter than `limit`; destroys it. */
static void kt_status_short(kc_status* st, char* buf, size_t cap, size_t limit) {
  KC_CHECK(st != NULL);
  size_t len = kc_status_format(st, buf, cap);
  kc_status_destroy(st);
  KC_CHECK(len < limit);
}

KC_TEST(registry_messages_quote_names) {
  kc_func* f = kt_make_const(&kt_one);
  char buf[1024];
  kc_string_view embedded_nul = {"ab\0c", 4};
  KC_CHECK_CODE(kc_func_registry_register(embedded_nul, f, 0),
                KC_INVALID_ARGUMENT,
                "invalid function name 'ab\\x00c': byte 2 (0x00) is not one of");
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT("tab\there"), f, 0),
                KC_INVALID_ARGUMENT, "invalid function name 'tab\\there': byte 3 (0x09)");
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT("\x1b[31mred"), f, 0),
                KC_INVALID_ARGUMENT, "'\\x1b[31mred': byte 0 (0x1b)");
  char big[300];
  memset(big, 'a', sizeof big);
  kc_string_view too_long = {big, sizeof big};
  KC_CHECK_CODE(kc_func_registry_register(too_long, f, 0), KC_INVALID_ARGUMENT,
                "invalid function name 'aaaa", "aaaa'...'aaaa",
                "aaaa' (300 bytes): expected at most 255 bytes, got 300");
  /* A megabyte name looked up: the message stays short. */
  size_t mb = (size_t)1 << 20;
  char* name = malloc(mb);
  KC_CHECK(name != NULL);
  memset(name, 'n', mb);
  kc_func* found = NULL;
  kt_status_short(kc_func_registry_lookup((kc_string_view){name, mb}, &found), buf,
                  sizeof buf, 256);
  KC_CHECK_CONTAINS(buf, "NOT_FOUND: no function named 'nnnn");
  KC_CHECK_CONTAINS(buf, "nnnn' (1048576 bytes) is registered");
  kt_status_short(kc_func_registry_register((kc_string_view){name, mb}, f, 0), buf,
                  sizeof buf, 256);
  KC_CHECK_CONTAINS(buf, "(1048576 bytes): expected at most 255 bytes, got 1048576");
  /* ... a custom-call target too, with its platform. */
  kc_xcall_target_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  kt_status_short(kc_xcall_lookup((kc_string_view){name, mb}, KC_PLATFORM_HOST, &desc),
                  buf, sizeof buf, 300);
  KC_CHECK_CONTAINS(buf, "NOT_FOUND: no custom-call target named 'nnnn");
  KC_CHECK_CONTAINS(buf, "nnnn' (1048576 bytes) is registered for Host (names are "
                         "at most 240 bytes)");
  free(name);
  kc_object_release(KC_OBJECT(f));
  /* Names given to the other parsers of user text. */
  DLDataType t;
  KC_CHECK_CODE(kc_dtype_parse((kc_string_view){"f\0" "32", 4}, &t), KC_INVALID_ARGUMENT,
                "unknown dtype 'f\\x0032': expected");
  DLDevice d;
  KC_CHECK_CODE(kc_device_parse(KC_SV_LIT("cuda\n:0"), &d), KC_INVALID_ARGUMENT,
                "unknown device 'cuda\\n:0'");
  kc_platform pl;
  KC_CHECK_CODE(kc_platform_parse(KC_SV_LIT("Ho\x7fst"), &pl), KC_INVALID_ARGUMENT,
                "unknown platform 'Ho\\x7fst'");
}

KC_TEST(registry_lookup_missing_lists_nearest) {
  kt_register_const("mylib.add", &kt_one, 0);
  kt_register_const("mylib.sub", &kt_two, 0);
  kt_register_const("zzz.unrelated_thing", &kt_three, 0);
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("mylib.ad"), &f), KC_NOT_FOUND,
                "mylib.ad", "mylib.add");
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("mylib.sbu"), &f), KC_NOT_FOUND,
                "mylib.sbu", "mylib.sub");
  /* Not a prefix match: only the bytes of the view count. */
  kc_string_view longer = {"mylib.addition", 14};
  KC_CHECK_CODE(kc_func_registry_lookup(longer, &f), KC_NOT_FOUND, "mylib.addition");
}

KC_TEST(registry_lookup_in_empty_registry) {
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("nothing.here"), &f),
                KC_NOT_FOUND, "nothing.here");
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("x"), NULL), KC_INVALID_ARGUMENT,
                "");
}

KC_TEST(registry_remove) {
  kt_register_const("t.gone", &kt_one, 0);
  kt_register_const("t.kept", &kt_two, 0);
  KC_CHECK_OK(kc_func_registry_remove(KC_SV_LIT("t.gone")));
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("t.gone"), &f), KC_NOT_FOUND,
                "t.gone");
  KC_CHECK_INT(kt_call_name("t.kept"), 2);
  KC_CHECK_CODE(kc_func_registry_remove(KC_SV_LIT("t.gone")), KC_NOT_FOUND,
                "t.gone");
  KC_CHECK_CODE(kc_func_registry_remove(KC_SV_LIT("t.kep")), KC_NOT_FOUND,
                "t.kep", "t.kept");
  /* The name is free again. */
  kt_register_const("t.gone", &kt_three, 0);
  KC_CHECK_INT(kt_call_name("t.gone"), 3);
}

KC_TEST(registry_lookup_survives_remove_until_reset) {
  kc_func* f = kt_make_const(&kt_one);
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("t.short_lived"), f, 0));
  kc_object_release(KC_OBJECT(f));
  kc_func* found = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("t.short_lived"), &found));
  KC_CHECK_OK(kc_func_registry_remove(KC_SV_LIT("t.short_lived")));
  /* Removed, and the test holds no reference: still callable until reset. */
  kc_any ret;
  KC_CHECK_OK(kc_func_call(found, NULL, 0, &ret));
  KC_CHECK_INT(ret.u.v_int64, 1);
  KC_CHECK(kt_live_blocks() > 0);
  kc_func_registry_reset();
  KC_CHECK_INT(kt_live_blocks(), 0);
}

static void kt_count_delete(void* self) { *(int*)self += 1; }

static kc_status* kt_zero(void* self, const kc_any* args, int32_t nargs,
                          kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  *ret = kc_any_int(0);
  return NULL;
}

KC_TEST(registry_reset_releases_everything) {
  int deletions = 0;
  const char* names[] = {"r.a", "r.b", "r.c"};
  for (int i = 0; i < 3; ++i) {
    kc_func* f = NULL;
    KC_CHECK_OK(kc_func_create(kt_alloc(), kt_zero, &deletions, kt_count_delete, &f));
    KC_CHECK_OK(kc_func_registry_register(kc_sv(names[i]), f, 0));
    kc_object_release(KC_OBJECT(f));
  }
  kt_register_const("r.a", &kt_two, KC_REGISTER_OVERRIDE); /* retires one */
  KC_CHECK_OK(kc_func_registry_remove(KC_SV_LIT("r.b")));  /* retires one */
  KC_CHECK_INT(deletions, 0);
  kc_func_registry_reset();
  KC_CHECK_INT(deletions, 3);
  KC_CHECK_INT(kt_live_blocks(), 0);
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("r.c"), &f), KC_NOT_FOUND, "r.c");
  /* Usable again after a reset. */
  kt_register_const("r.c", &kt_three, 0);
  KC_CHECK_INT(kt_call_name("r.c"), 3);
}

static void kt_check_list(const kc_array* list, const char* const* want,
                          size_t count) {
  KC_CHECK_INT(kc_array_get_size(list), count);
  for (size_t i = 0; i < count && i < kc_array_get_size(list); ++i) {
    kc_string_view v = {NULL, 0};
    KC_CHECK(kc_any_get_string(kc_array_get_item(list, i), &v));
    if (!kt_sv_is(v, want[i])) {
      kt__fail(__FILE__, __LINE__, "list item %zu is \"%.*s\", expected \"%s\"",
               i, (int)v.size, v.data ? v.data : "", want[i]);
    }
  }
}

KC_TEST(registry_list_prefix_sorted) {
  const char* names[] = {"mylib.zeta", "mylib.alpha", "other.x", "mylib.mid",
                         "mylibx", "mylib::colon", "a.first"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    kt_register_const(names[i], &kt_one, 0);
  }
  kc_array* list = NULL;
  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), KC_SV_LIT("mylib."), &list));
  const char* dotted[] = {"mylib.alpha", "mylib.mid", "mylib.zeta"};
  kt_check_list(list, dotted, 3);
  kc_object_release(KC_OBJECT(list));

  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), KC_SV_LIT("mylib"), &list));
  const char* all_mylib[] = {"mylib.alpha", "mylib.mid", "mylib.zeta",
                             "mylib::colon", "mylibx"};
  kt_check_list(list, all_mylib, 5);
  kc_object_release(KC_OBJECT(list));

  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), KC_SV_LIT(""), &list));
  const char* all[] = {"a.first",      "mylib.alpha", "mylib.mid", "mylib.zeta",
                       "mylib::colon", "mylibx",      "other.x"};
  kt_check_list(list, all, 7);
  kc_object_release(KC_OBJECT(list));

  kc_string_view null_empty = {NULL, 0};
  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), null_empty, &list));
  KC_CHECK_INT(kc_array_get_size(list), 7);
  kc_object_release(KC_OBJECT(list));

  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), KC_SV_LIT("nomatch"), &list));
  KC_CHECK_INT(kc_array_get_size(list), 0);
  kc_object_release(KC_OBJECT(list));

  KC_CHECK_CODE(kc_func_registry_list(kt_alloc(), KC_SV_LIT(""), NULL),
                KC_INVALID_ARGUMENT, "");
}

KC_TEST(registry_list_after_remove) {
  kt_register_const("l.a", &kt_one, 0);
  kt_register_const("l.b", &kt_one, 0);
  kt_register_const("l.c", &kt_one, 0);
  KC_CHECK_OK(kc_func_registry_remove(KC_SV_LIT("l.b")));
  kc_array* list = NULL;
  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), KC_SV_LIT("l."), &list));
  const char* want[] = {"l.a", "l.c"};
  kt_check_list(list, want, 2);
  kc_object_release(KC_OBJECT(list));
}
