/* Tests of the global function registry (kcall/func.h). The runner resets
 * the registry after every test. */
#include <stddef.h>
#include <stdio.h>
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

/* What a function declares it writes: everything by default, what
 * kc_func_set_writes says, and nothing when registered with
 * KC_REGISTER_WRITES_NONE (only when the registration succeeds). */
KC_TEST(registry_func_writes_declaration) {
  kc_func* f = kt_make_const(&kt_one);
  KC_CHECK(kc_func_get_writes(f) == KC_FUNC_WRITES_ALL);
  KC_CHECK(kc_func_get_writes(NULL) == KC_FUNC_WRITES_ALL);
  kc_func_set_writes(f, KC_FUNC_WRITES_ARG(0) | KC_FUNC_WRITES_ARG(2));
  KC_CHECK(kc_func_get_writes(f) == 5u);
  KC_CHECK(KC_FUNC_WRITES_ARG(63) == KC_FUNC_WRITES_ARG(100));
  kc_func_set_writes(NULL, 0); /* a no-op */
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("t.reads_only"), f,
                                        KC_REGISTER_WRITES_NONE));
  KC_CHECK(kc_func_get_writes(f) == 0);
  kc_object_release(KC_OBJECT(f));
  KC_CHECK_INT(kt_call_name("t.reads_only"), 1);
  /* Later registrations of the name still refuse duplicates. */
  kc_func* g = kt_make_const(&kt_two);
  KC_CHECK_CODE(kc_func_registry_register(KC_SV_LIT("t.reads_only"), g,
                                          KC_REGISTER_WRITES_NONE),
                KC_ALREADY_EXISTS, "t.reads_only");
  KC_CHECK(kc_func_get_writes(g) == KC_FUNC_WRITES_ALL); /* unchanged */
  kc_object_release(KC_OBJECT(g));
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
  KC_CHECK_OK(kc_func_registry_lookup_retained(KC_SV_LIT("t.over"), &old));
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(old)), 2);
  kt_register_const("t.over", &kt_two, KC_REGISTER_OVERRIDE);
  KC_CHECK_INT(kt_call_name("t.over"), 2);
  /* The registry dropped its reference at once (no lookup was running);
   * the one the lookup took keeps the replaced function valid. */
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(old)), 1);
  kc_any ret;
  KC_CHECK_OK(kc_func_call(old, NULL, 0, &ret));
  KC_CHECK_INT(ret.u.v_int64, 1);
  kc_object_release(KC_OBJECT(old));
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

KC_TEST(registry_remove_frees_once_no_lookup_runs) {
  kc_func* f = kt_make_const(&kt_one);
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("t.short_lived"), f, 0));
  kc_object_release(KC_OBJECT(f));
  kc_func* kept = NULL;
  KC_CHECK_OK(kc_func_registry_lookup_retained(KC_SV_LIT("t.short_lived"), &kept));
  KC_CHECK(kept == f);
  KC_CHECK_OK(kc_func_registry_remove(KC_SV_LIT("t.short_lived")));
  /* Removed: the registry's reference is gone, the retained one works. */
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(kept)), 1);
  kc_any ret;
  KC_CHECK_OK(kc_func_call(kept, NULL, 0, &ret));
  KC_CHECK_INT(ret.u.v_int64, 1);
  kc_object_release(KC_OBJECT(kept));
  /* Nothing waits for a reset. */
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(registry_lookup_retained) {
  kt_register_const("t.kept", &kt_two, 0);
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup_retained(KC_SV_LIT("t.kept"), &f));
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(f)), 2);
  kc_object_release(KC_OBJECT(f));
  f = kt_make_const(&kt_one); /* a value the lookup must overwrite */
  kc_func* g = f;
  KC_CHECK_CODE(kc_func_registry_lookup_retained(KC_SV_LIT("t.kep"), &g),
                KC_NOT_FOUND, "t.kep", "t.kept");
  KC_CHECK(g == NULL);
  kc_object_release(KC_OBJECT(f));
  KC_CHECK_CODE(kc_func_registry_lookup_retained(KC_SV_LIT("t.kept"), NULL),
                KC_INVALID_ARGUMENT, "out_func");
}

/* The number of entries and tables waiting to be freed. */
static int64_t kt_retired(void) {
  kc_registry_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  kc_registry_query_stats(&s);
  return s.retired_objects;
}

KC_TEST(registry_overrides_keep_memory_bounded) {
  /* A long-running host re-registering one name: what each override
   * replaces is freed, not kept until a reset. */
  kc_registry_stats before;
  memset(&before, 0, sizeof before);
  before.struct_size = sizeof before;
  kc_registry_query_stats(&before);
  int64_t most_retired = 0, most_live = 0;
  for (int i = 0; i < 100000; ++i) {
    kt_register_const("t.hot", &kt_one, KC_REGISTER_OVERRIDE);
    int64_t retired = kt_retired();
    int64_t live = kt_live_blocks();
    if (retired > most_retired) most_retired = retired;
    if (live > most_live) most_live = live;
  }
  /* No lookup runs on another thread: what is retired is freed by the
   * call that retires it. */
  KC_CHECK(most_retired <= 2);
  KC_CHECK_INT(most_live, 1); /* the registered function only */
  kc_registry_stats after;
  memset(&after, 0, sizeof after);
  after.struct_size = sizeof after;
  kc_registry_query_stats(&after);
  KC_CHECK(after.reclaimed_objects - before.reclaimed_objects >= 99999);
  KC_CHECK(after.retired_bytes <= 2 * 512);
  KC_CHECK_INT(kt_call_name("t.hot"), 1);
}

KC_TEST(registry_stats_say_how_lookups_enter) {
  kc_func* f = NULL;
  kc_status_destroy(kc_func_registry_lookup(KC_SV_LIT("t.any"), &f));
  kc_registry_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  kc_registry_query_stats(&s);
  KC_CHECK(s.lookups_use_membarrier == 0 || s.lookups_use_membarrier == 1);
  if (getenv("KCALL_NO_MEMBARRIER")) KC_CHECK_INT(s.lookups_use_membarrier, 0);
}

KC_TEST(registry_stats_respect_struct_size) {
  kc_registry_stats s;
  memset(&s, 0x5a, sizeof s);
  s.struct_size = offsetof(kc_registry_stats, retired_bytes);
  kc_registry_query_stats(&s);
  KC_CHECK(s.retired_objects >= 0);
  unsigned char* tail = (unsigned char*)&s + offsetof(kc_registry_stats, retired_bytes);
  for (size_t i = 0; i < sizeof s - offsetof(kc_registry_stats, retired_bytes); ++i) {
    KC_CHECK(tail[i] == 0x5a);
  }
  kc_registry_query_stats(NULL); /* a no-op */
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
  /* Override and remove free what they replace at once when no lookup
   * is running; the reset frees the rest. */
  kt_register_const("r.a", &kt_two, KC_REGISTER_OVERRIDE);
  KC_CHECK_INT(deletions, 1);
  KC_CHECK_OK(kc_func_registry_remove(KC_SV_LIT("r.b")));
  KC_CHECK_INT(deletions, 2);
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

/* ---- "did you mean" ------------------------------------------------------- */

static kc_registry_stats kt_stats(void) {
  kc_registry_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  kc_registry_query_stats(&s);
  return s;
}

/* The formatted NOT_FOUND of looking `name` up. */
static void kt_miss_text(const char* name, char* text, size_t cap) {
  kc_func* f = NULL;
  kc_status* st = kc_func_registry_lookup(kc_sv(name), &f);
  KC_CHECK(st != NULL && f == NULL);
  KC_CHECK_INT(kc_status_get_code(st), KC_NOT_FOUND);
  kc_status_format(st, text, cap);
  kc_status_destroy(st);
}

/* The first suggestion of the message for `name`, or "" when none. */
static void kt_check_first_suggestion(const char* name, const char* want) {
  char text[1024];
  kt_miss_text(name, text, sizeof text);
  const char* hint = strstr(text, "did you mean '");
  char got[300] = "";
  if (hint) {
    hint += strlen("did you mean '");
    size_t n = strcspn(hint, "'");
    snprintf(got, sizeof got, "%.*s", (int)n, hint);
  }
  if (strcmp(got, want) != 0) {
    kt__fail(__FILE__, __LINE__, "'%s': first suggestion '%s', expected '%s' (%s)",
             name, got, want, text);
  }
}

KC_TEST(registry_suggestions_for_typical_mistakes) {
  const char* names[] = {"mylib.add",    "mylib.sub",     "mylib::matmul",
                         "linalg.solve", "mylib.reduce_sum_f32",
                         "zzz.unrelated_thing"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    kt_register_const(names[i], &kt_one, 0);
  }
  kt_check_first_suggestion("mylib.sbu", "mylib.sub");     /* transposed */
  kt_check_first_suggestion("mylb.add", "mylib.add");      /* a byte left out */
  kt_check_first_suggestion("mylib.addd", "mylib.add");    /* one too many */
  kt_check_first_suggestion("mylib.ade", "mylib.add");     /* one wrong */
  kt_check_first_suggestion("mylib::add", "mylib.add");    /* separator */
  kt_check_first_suggestion("mylib.matmul", "mylib::matmul");
  kt_check_first_suggestion("add", "mylib.add");           /* no namespace */
  kt_check_first_suggestion("numpy.solve", "linalg.solve"); /* another one */
  kt_check_first_suggestion("mylib.reduce", "mylib.reduce_sum_f32"); /* a start */
  kt_check_first_suggestion("totally.different", "");
  char text[1024];
  kt_miss_text("totally.different", text, sizeof text);
  KC_CHECK_STR(text, "NOT_FOUND: no function named 'totally.different' is registered");
}

KC_TEST(registry_miss_searches_only_when_read) {
  kt_register_const("mylib.add", &kt_one, 0);
  kc_registry_stats before = kt_stats();
  for (int i = 0; i < 1000; ++i) {
    kc_func* f = NULL;
    kc_status* st = kc_func_registry_lookup(KC_SV_LIT("mylib.ad"), &f);
    KC_CHECK_INT(kc_status_get_code(st), KC_NOT_FOUND);
    kc_status_destroy(st); /* dropped unread: no search */
  }
  KC_CHECK_INT(kt_stats().suggestion_searches, before.suggestion_searches);
  kc_func* f = NULL;
  kc_status* st = kc_func_registry_lookup(KC_SV_LIT("mylib.ad"), &f);
  /* The message reflects the registry when it is first read. */
  kt_register_const("mylib.ade", &kt_two, 0);
  KC_CHECK_CONTAINS(kc_status_get_message(st), "'mylib.ad' is registered");
  KC_CHECK_CONTAINS(kc_status_get_message(st), "mylib.ade");
  KC_CHECK_INT(kt_stats().suggestion_searches, before.suggestion_searches + 1);
  /* Read again, it is the same text, not a second search. */
  const char* first = kc_status_get_message(st);
  KC_CHECK(kc_status_get_message(st) == first);
  KC_CHECK_INT(kt_stats().suggestion_searches, before.suggestion_searches + 1);
  kc_status_destroy(st);
  /* Formatted after a reset, the message says so. */
  st = kc_func_registry_lookup(KC_SV_LIT("mylib.ad"), &f);
  kc_func_registry_reset();
  KC_CHECK_CONTAINS(kc_status_get_message(st), "none is registered");
  kc_status_destroy(st);
}

KC_TEST(registry_suggestion_work_is_bounded) {
  /* 20,000 names that all look alike: the hardest case for the filters. */
  char name[32];
  kc_func* f = kt_make_const(&kt_one);
  for (int i = 0; i < 20000; ++i) {
    snprintf(name, sizeof name, "ns%d.op_%05d", i % 50, i);
    KC_CHECK_OK(kc_func_registry_register(kc_sv(name), f, 0));
  }
  kc_object_release(KC_OBJECT(f));
  kc_registry_stats before = kt_stats();
  kt_check_first_suggestion("ns45.pp_12345", "ns45.op_12345");
  kt_check_first_suggestion("ns45.op_1234", "ns45.op_12345"); /* a start */
  kc_registry_stats after = kt_stats();
  int64_t searches = after.suggestion_searches - before.suggestion_searches;
  KC_CHECK_INT(searches, 2);
  /* One pass over the names, then at most 32 edit distances per search,
   * each within a band of 2 * limit + 1 = 7 cells per row of at most 14. */
  KC_CHECK_INT(after.suggestion_names_scanned - before.suggestion_names_scanned,
               2 * 20000);
  KC_CHECK(after.suggestion_distances - before.suggestion_distances <= 2 * 32);
  KC_CHECK(after.suggestion_distance_cells - before.suggestion_distance_cells <=
           2 * 32 * 7 * 14);
}
