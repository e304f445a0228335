/* Tests of kcall/value.h: kc_any, objects, strings, bytes, arrays. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "test.h"

/* The layout is ABI: frozen here as well as in the library. */
_Static_assert(sizeof(kc_any) == 16, "kc_any is 16 bytes");
_Static_assert(offsetof(kc_any, type_index) == 0, "type_index first");
_Static_assert(offsetof(kc_any, small_len) == 4, "small_len at 4");
_Static_assert(offsetof(kc_any, u) == 8, "payload at 8");
_Static_assert(offsetof(kc_object, ref_count) == 0, "ref_count first");
_Static_assert(offsetof(kc_object, type_index) == 8, "object type at 8");
_Static_assert(offsetof(kc_object, deleter) == 16, "deleter at 16");

KC_TEST(any_layout) {
  KC_CHECK_INT(sizeof(kc_any), 16);
  kc_any v = kc_any_none();
  KC_CHECK_INT((char*)&v.u.v_small[0] - (char*)&v, 8);
  KC_CHECK_INT(sizeof v.u, 8);
}

static int64_t kt_refs(const void* obj) {
  return kc_object_get_ref_count((const kc_object*)obj);
}

static kc_str* kt_make_str(const char* text) {
  kc_str* s = NULL;
  KC_CHECK_OK(kc_str_create(kt_alloc(), kc_sv(text), &s));
  return s;
}

KC_TEST(any_plain_values) {
  kc_any v = kc_any_none();
  KC_CHECK_INT(v.type_index, KC_TYPE_NONE);
  KC_CHECK_INT(v.small_len, 0);
  KC_CHECK(!kc_any_is_object(&v));

  v = kc_any_bool(true);
  KC_CHECK(v.type_index == KC_TYPE_BOOL && v.u.v_int64 == 1);
  v = kc_any_bool(false);
  KC_CHECK(v.type_index == KC_TYPE_BOOL && v.u.v_int64 == 0);
  v = kc_any_int(INT64_MIN);
  KC_CHECK(v.type_index == KC_TYPE_INT && v.u.v_int64 == INT64_MIN);
  v = kc_any_float(-2.5);
  KC_CHECK(v.type_index == KC_TYPE_FLOAT && v.u.v_float64 == -2.5);
  int x = 0;
  v = kc_any_opaque(&x);
  KC_CHECK(v.type_index == KC_TYPE_OPAQUE_PTR && v.u.v_ptr == &x);
  v = kc_any_dtype(kc_dtype_make(kDLBfloat, 16, 2));
  KC_CHECK(v.type_index == KC_TYPE_DTYPE &&
           kc_dtype_equal(v.u.v_dtype, kc_dtype_make(kDLBfloat, 16, 2)));
  DLDevice dev = {kDLCUDA, 3};
  v = kc_any_device(dev);
  KC_CHECK(v.type_index == KC_TYPE_DEVICE && v.u.v_device.device_type == kDLCUDA &&
           v.u.v_device.device_id == 3);
  v = kc_any_cstr("hello");
  KC_CHECK(v.type_index == KC_TYPE_RAW_STR && strcmp(v.u.v_c_str, "hello") == 0);
  DLTensor t;
  memset(&t, 0, sizeof t);
  v = kc_any_dltensor(&t);
  KC_CHECK(v.type_index == KC_TYPE_DLTENSOR_PTR && v.u.v_dltensor == &t);
  v = kc_any_object(NULL);
  KC_CHECK_INT(v.type_index, KC_TYPE_NONE);
  /* None of them allocated. */
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(any_small_strings) {
  const char text[] = "abcdefghij";
  for (size_t n = 0; n <= KC_SMALL_STR_MAX; ++n) {
    kc_any v = kc_any_int(5);
    kc_string_view s = {text, n};
    KC_CHECK_OK(kc_any_from_string(kt_alloc(), s, &v));
    KC_CHECK_INT(v.type_index, KC_TYPE_SMALL_STR);
    KC_CHECK_INT(v.small_len, n);
    KC_CHECK(memcmp(v.u.v_small, text, n) == 0);
    KC_CHECK(v.u.v_small[n] == '\0');
    kc_string_view back = {NULL, 99};
    KC_CHECK(kc_any_get_string(&v, &back));
    KC_CHECK_INT(back.size, n);
    KC_CHECK(n == 0 || memcmp(back.data, text, n) == 0);
    /* The view points into the kc_any itself. */
    KC_CHECK(n == 0 || back.data == v.u.v_small);
    KC_CHECK_INT(kt_live_blocks(), 0);
    kc_any_release(&v);
    KC_CHECK_INT(v.type_index, KC_TYPE_NONE);
  }
}

KC_TEST(any_long_string_is_object) {
  const char* text = "eight+ b";
  kc_any v = kc_any_none();
  KC_CHECK_OK(kc_any_from_string(kt_alloc(), kc_sv(text), &v));
  KC_CHECK_INT(v.type_index, KC_TYPE_STR);
  KC_CHECK_INT(v.small_len, 0);
  KC_CHECK(kc_any_is_object(&v));
  KC_CHECK_INT(kt_refs(v.u.v_obj), 1);
  KC_CHECK(kt_live_blocks() > 0);
  kc_string_view back;
  KC_CHECK(kc_any_get_string(&v, &back));
  KC_CHECK(kt_sv_is(back, text));
  KC_CHECK(back.data != text); /* a copy */
  KC_CHECK(back.data[back.size] == '\0');
  kc_string_view direct = kc_str_get_view((const kc_str*)(void*)v.u.v_obj);
  KC_CHECK(direct.data == back.data && direct.size == back.size);
  kc_any_release(&v);
  KC_CHECK_INT(v.type_index, KC_TYPE_NONE);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(any_from_string_bad_input) {
  kc_any v = kc_any_int(1);
  kc_string_view bad = {NULL, 12};
  KC_CHECK_CODE(kc_any_from_string(kt_alloc(), bad, &v), KC_INVALID_ARGUMENT, "");
  KC_CHECK_INT(v.type_index, KC_TYPE_NONE);
  KC_CHECK_CODE(kc_any_from_string(kt_alloc(), kc_sv("text"), NULL),
                KC_INVALID_ARGUMENT, "");
  /* The empty view with NULL data is the empty string. */
  kc_string_view empty = {NULL, 0};
  KC_CHECK_OK(kc_any_from_string(kt_alloc(), empty, &v));
  KC_CHECK(v.type_index == KC_TYPE_SMALL_STR && v.small_len == 0);
}

KC_TEST(any_get_string_kinds) {
  kc_string_view v;
  kc_any raw = kc_any_cstr("raw text, rather long");
  KC_CHECK(kc_any_get_string(&raw, &v));
  KC_CHECK(kt_sv_is(v, "raw text, rather long"));
  KC_CHECK(v.data == raw.u.v_c_str);

  kc_str* s = kt_make_str("an object string");
  kc_any obj = kc_any_object(KC_OBJECT(s));
  KC_CHECK_INT(obj.type_index, KC_TYPE_STR);
  KC_CHECK(kc_any_get_string(&obj, &v));
  KC_CHECK(kt_sv_is(v, "an object string"));

  kc_bytes* b = NULL;
  KC_CHECK_OK(kc_bytes_create(kt_alloc(), "bytes", 5, &b));
  kc_any not_strings[] = {kc_any_none(), kc_any_int(3), kc_any_float(1.0),
                          kc_any_bool(true), kc_any_opaque(&v),
                          kc_any_object(KC_OBJECT(b))};
  for (size_t i = 0; i < sizeof not_strings / sizeof not_strings[0]; ++i) {
    KC_CHECK(!kc_any_get_string(&not_strings[i], &v));
  }
  kc_object_release(KC_OBJECT(b));
  kc_object_release(KC_OBJECT(s));
}

KC_TEST(str_create_copies) {
  char text[] = "with\0nul";
  kc_string_view in = {text, sizeof text - 1};
  kc_str* s = NULL;
  KC_CHECK_OK(kc_str_create(kt_alloc(), in, &s));
  KC_CHECK_INT(KC_OBJECT(s)->type_index, KC_TYPE_STR);
  text[0] = 'X'; /* the object holds its own copy */
  kc_string_view v = kc_str_get_view(s);
  KC_CHECK_INT(v.size, 8);
  KC_CHECK(memcmp(v.data, "with\0nul", 8) == 0);
  KC_CHECK(v.data[8] == '\0');
  kc_object_release(KC_OBJECT(s));

  kc_string_view empty = {NULL, 0};
  KC_CHECK_OK(kc_str_create(kt_alloc(), empty, &s));
  v = kc_str_get_view(s);
  KC_CHECK(v.size == 0 && v.data != NULL && v.data[0] == '\0');
  kc_object_release(KC_OBJECT(s));
}

KC_TEST(str_create_bad_input) {
  kc_str* s = NULL;
  kc_string_view bad = {NULL, 3};
  KC_CHECK_CODE(kc_str_create(kt_alloc(), bad, &s), KC_INVALID_ARGUMENT, "");
  KC_CHECK(s == NULL);
  KC_CHECK_CODE(kc_str_create(kt_alloc(), kc_sv("x"), NULL), KC_INVALID_ARGUMENT,
                "");
}

KC_TEST(bytes_create_copies) {
  unsigned char data[300];
  for (size_t i = 0; i < sizeof data; ++i) data[i] = (unsigned char)i;
  kc_bytes* b = NULL;
  KC_CHECK_OK(kc_bytes_create(kt_alloc(), data, sizeof data, &b));
  KC_CHECK_INT(KC_OBJECT(b)->type_index, KC_TYPE_BYTES);
  data[0] = 99;
  kc_string_view v = kc_bytes_get_view(b);
  KC_CHECK_INT(v.size, 300);
  KC_CHECK((unsigned char)v.data[0] == 0 && (unsigned char)v.data[299] == 43);
  kc_object_release(KC_OBJECT(b));

  KC_CHECK_OK(kc_bytes_create(kt_alloc(), NULL, 0, &b));
  KC_CHECK_INT(kc_bytes_get_view(b).size, 0);
  kc_object_release(KC_OBJECT(b));

  KC_CHECK_CODE(kc_bytes_create(kt_alloc(), NULL, 4, &b), KC_INVALID_ARGUMENT,
                "");
  KC_CHECK_CODE(kc_bytes_create(kt_alloc(), data, 4, NULL), KC_INVALID_ARGUMENT,
                "");
}

KC_TEST(object_retain_release_balance) {
  kc_str* s = kt_make_str("reference counted");
  KC_CHECK_INT(kt_refs(s), 1);
  kc_object_retain(KC_OBJECT(s));
  KC_CHECK_INT(kt_refs(s), 2);
  kc_any copy = kc_any_object(KC_OBJECT(s)); /* borrows */
  KC_CHECK_INT(kt_refs(s), 2);
  kc_any_retain(&copy); /* now owns */
  KC_CHECK_INT(kt_refs(s), 3);
  kc_any_release(&copy);
  KC_CHECK_INT(copy.type_index, KC_TYPE_NONE);
  KC_CHECK_INT(kt_refs(s), 2);
  kc_any_release(&copy); /* none: nothing happens */
  KC_CHECK_INT(kt_refs(s), 2);
  kc_object_release(KC_OBJECT(s));
  KC_CHECK_INT(kt_refs(s), 1);
  KC_CHECK(kt_live_blocks() > 0);
  kc_object_release(KC_OBJECT(s));
  KC_CHECK_INT(kt_live_blocks(), 0);

  kc_object_retain(NULL);
  kc_object_release(NULL);
  kc_any plain = kc_any_int(7);
  kc_any_retain(&plain);
  KC_CHECK(plain.type_index == KC_TYPE_INT && plain.u.v_int64 == 7);
  kc_any_release(&plain);
  KC_CHECK_INT(plain.type_index, KC_TYPE_NONE);
}

/* Any struct that starts with kc_object is an object to the library, which
 * runs its deleter on the last release. */
typedef struct kt_custom_obj {
  kc_object header;
  int deletions;
} kt_custom_obj;

static void kt_custom_delete(kc_object* self) {
  ((kt_custom_obj*)(void*)self)->deletions += 1;
}

KC_TEST(object_custom_deleter) {
  kt_custom_obj obj;
  memset(&obj, 0, sizeof obj);
  obj.header.ref_count = 1;
  obj.header.type_index = KC_TYPE_MODULE;
  obj.header.deleter = kt_custom_delete;
  kc_object_retain(&obj.header);
  kc_object_retain(&obj.header);
  KC_CHECK_INT(kc_object_get_ref_count(&obj.header), 3);
  kc_object_release(&obj.header);
  kc_object_release(&obj.header);
  KC_CHECK_INT(obj.deletions, 0);
  kc_object_release(&obj.header);
  KC_CHECK_INT(obj.deletions, 1);
}

KC_TEST(type_names) {
  struct {
    int32_t index;
    const char* name;
  } types[] = {
#define KT_TYPE(name, value, text) {KC_TYPE_##name, text},
      KC_POD_TYPES(KT_TYPE) KC_OBJECT_TYPES(KT_TYPE)
#undef KT_TYPE
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    KC_CHECK_STR(kc_type_name(types[i].index), types[i].name);
  }
  KC_CHECK_STR(kc_type_name(KC_TYPE_INT), "int");
  KC_CHECK_STR(kc_type_name(KC_TYPE_SMALL_STR), "str");
  KC_CHECK_STR(kc_type_name(KC_TYPE_FUNC), "function");
  const int32_t unknown[] = {-1, 10, 63, 70, 1000, INT32_MAX, INT32_MIN};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    KC_CHECK_STR(kc_type_name(unknown[i]), "unknown");
  }
}

/* ---- arrays ---------------------------------------------------------------- */

static kc_status* kt_nop(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  (void)ret;
  return NULL;
}

/* Every storable kind of value survives a trip through an array. */
KC_TEST(array_round_trip_every_type) {
  kc_str* s = kt_make_str("a long string object");
  kc_bytes* b = NULL;
  KC_CHECK_OK(kc_bytes_create(kt_alloc(), "\x01\x02\x03", 3, &b));
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_create(kt_alloc(), kt_nop, NULL, NULL, &f));
  const int64_t shape[] = {2, 2};
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 2, kc_dtype_make(kDLFloat, 32, 1),
                               kc_device_cpu(), &t));
  kc_array* inner = NULL;
  kc_any inner_items[] = {kc_any_int(1), kc_any_int(2)};
  KC_CHECK_OK(kc_array_create(kt_alloc(), inner_items, 2, &inner));
  kc_any small = kc_any_none();
  KC_CHECK_OK(kc_any_from_string(kt_alloc(), kc_sv("tiny"), &small));
  int token = 0;
  DLDevice dev = {kDLCUDA, 2};

  kc_any items[] = {
      kc_any_none(),
      kc_any_bool(true),
      kc_any_int(-42),
      kc_any_float(0.25),
      kc_any_opaque(&token),
      kc_any_dtype(kc_dtype_make(kDLUInt, 16, 1)),
      kc_any_device(dev),
      small,
      kc_any_object(KC_OBJECT(s)),
      kc_any_object(KC_OBJECT(b)),
      kc_any_object(KC_OBJECT(f)),
      kc_any_object(KC_OBJECT(inner)),
      kc_any_object(KC_OBJECT(t)),
  };
  const size_t count = sizeof items / sizeof items[0];
  kc_array* array = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), items, count, &array));
  KC_CHECK_INT(KC_OBJECT(array)->type_index, KC_TYPE_ARRAY);
  KC_CHECK_INT(kc_array_get_size(array), count);
  for (size_t i = 0; i < count; ++i) {
    const kc_any* got = kc_array_get_item(array, i);
    KC_CHECK(got != NULL);
    KC_CHECK_INT(got->type_index, items[i].type_index);
    KC_CHECK_INT(got->small_len, items[i].small_len);
  }
  KC_CHECK(kc_array_get_item(array, 1)->u.v_int64 == 1);
  KC_CHECK(kc_array_get_item(array, 2)->u.v_int64 == -42);
  KC_CHECK(kc_array_get_item(array, 3)->u.v_float64 == 0.25);
  KC_CHECK(kc_array_get_item(array, 4)->u.v_ptr == &token);
  KC_CHECK(kc_dtype_equal(kc_array_get_item(array, 5)->u.v_dtype,
                          kc_dtype_make(kDLUInt, 16, 1)));
  KC_CHECK(kc_array_get_item(array, 6)->u.v_device.device_id == 2);
  kc_string_view v;
  KC_CHECK(kc_any_get_string(kc_array_get_item(array, 7), &v));
  KC_CHECK(kt_sv_is(v, "tiny"));
  KC_CHECK(kc_any_get_string(kc_array_get_item(array, 8), &v));
  KC_CHECK(kt_sv_is(v, "a long string object"));
  KC_CHECK(kc_array_get_item(array, 9)->u.v_obj == KC_OBJECT(b));
  KC_CHECK(kc_array_get_item(array, 10)->u.v_obj == KC_OBJECT(f));
  const kc_array* nested = (const kc_array*)(const void*)kc_array_get_item(array, 11)->u.v_obj;
  KC_CHECK_INT(kc_array_get_size(nested), 2);
  KC_CHECK(kc_array_get_item(nested, 1)->u.v_int64 == 2);
  KC_CHECK(kc_array_get_item(array, 12)->u.v_obj == KC_OBJECT(t));
  KC_CHECK(kc_array_get_item(array, count) == NULL);
  KC_CHECK(kc_array_get_item(array, (size_t)-1) == NULL);

  /* Each object is held by the array as well as by the test. */
  KC_CHECK_INT(kt_refs(s), 2);
  KC_CHECK_INT(kt_refs(b), 2);
  KC_CHECK_INT(kt_refs(f), 2);
  KC_CHECK_INT(kt_refs(inner), 2);
  KC_CHECK_INT(kt_refs(t), 2);
  kc_object_release(KC_OBJECT(s));
  kc_object_release(KC_OBJECT(b));
  kc_object_release(KC_OBJECT(f));
  kc_object_release(KC_OBJECT(inner));
  kc_object_release(KC_OBJECT(t));
  kc_any_release(&small);
  /* The array alone keeps them alive now. */
  KC_CHECK(kc_any_get_string(kc_array_get_item(array, 8), &v));
  KC_CHECK(kt_sv_is(v, "a long string object"));
  KC_CHECK_INT(kc_array_get_size(nested), 2);
  kc_object_release(KC_OBJECT(array));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(array_empty_and_null) {
  kc_array* a = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), NULL, 0, &a));
  KC_CHECK_INT(kc_array_get_size(a), 0);
  KC_CHECK(kc_array_get_item(a, 0) == NULL);
  kc_object_release(KC_OBJECT(a));
  KC_CHECK_INT(kc_array_get_size(NULL), 0);
  KC_CHECK(kc_array_get_item(NULL, 0) == NULL);
  kc_any one = kc_any_int(1);
  KC_CHECK_CODE(kc_array_create(kt_alloc(), NULL, 2, &a), KC_INVALID_ARGUMENT,
                "");
  KC_CHECK_CODE(kc_array_create(kt_alloc(), &one, 1, NULL), KC_INVALID_ARGUMENT,
                "");
}

KC_TEST(array_refuses_borrowed_values) {
  kc_str* s = kt_make_str("held before the failure");
  DLTensor dl;
  memset(&dl, 0, sizeof dl);
  kc_any items[] = {kc_any_object(KC_OBJECT(s)), kc_any_int(1), kc_any_int(2),
                    kc_any_int(3), kc_any_int(4), kc_any_cstr("borrowed")};
  kc_array* a = NULL;
  KC_CHECK_CODE(kc_array_create(kt_alloc(), items, 6, &a), KC_INVALID_ARGUMENT,
                "5");
  KC_CHECK(a == NULL);
  items[5] = kc_any_int(5);
  items[3] = kc_any_dltensor(&dl);
  KC_CHECK_CODE(kc_array_create(kt_alloc(), items, 6, &a), KC_INVALID_ARGUMENT,
                "3");
  KC_CHECK(a == NULL);
  /* Nothing retained by the failed attempts stays retained. */
  KC_CHECK_INT(kt_refs(s), 1);
  kc_object_release(KC_OBJECT(s));
  KC_CHECK_INT(kt_live_blocks(), 0);
}
