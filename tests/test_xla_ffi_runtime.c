/* XLA FFI handlers run by kcall's program runtime, continued from
 * test_xla_ffi.c: the execution context, the thread pool and futures, host
 * memory, the API table, concurrent executions, and handlers from plugins. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "kt_xla_ffi_test.h"

/* ---- the execution context ---------------------------------------------------- */

static XLA_FFI_Error* kt_run_id(XLA_FFI_CallFrame* f, int64_t* out) {
  XLA_FFI_RunId_Get_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = KC__XLA_SIZE(XLA_FFI_RunId_Get_Args, run_id);
  a.ctx = f->ctx;
  XLA_FFI_Error* e = f->api->XLA_FFI_RunId_Get(&a);
  *out = a.run_id;
  return e;
}

/* y (s64[5]) = [pool threads, run id, device ordinal, stream is NULL,
 * user data NOT_FOUND]. */
static XLA_FFI_Error* kt_context(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) {
    /* No run at compile time: no run id. */
    int64_t id = 0;
    XLA_FFI_Error* e = kt_run_id(f, &id);
    if (!e) return kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "a run id at instantiate");
    kt_take_code(f->api, e, NULL, 0);
    return NULL;
  }
  int64_t* y = kt_xla_ret(f, 0)->data;
  int64_t threads = 0;
  XLA_FFI_ThreadPool_NumThreads_Args n;
  memset(&n, 0, sizeof n);
  n.struct_size = KC__XLA_SIZE(XLA_FFI_ThreadPool_NumThreads_Args, num_threads);
  n.ctx = f->ctx;
  n.num_threads = &threads;
  XLA_FFI_Error* e = f->api->XLA_FFI_ThreadPool_NumThreads(&n);
  if (e) return e;
  y[0] = threads;
  if ((e = kt_run_id(f, &y[1]))) return e;
  XLA_FFI_DeviceOrdinal_Get_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = KC__XLA_SIZE(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal);
  d.ctx = f->ctx;
  d.device_ordinal = -7;
  if ((e = f->api->XLA_FFI_DeviceOrdinal_Get(&d))) return e;
  y[2] = d.device_ordinal;
  XLA_FFI_Stream_Get_Args s;
  memset(&s, 0, sizeof s);
  s.struct_size = KC__XLA_SIZE(XLA_FFI_Stream_Get_Args, stream);
  s.ctx = f->ctx;
  s.stream = &s;
  if ((e = f->api->XLA_FFI_Stream_Get(&s))) return e;
  y[3] = s.stream == NULL;
  XLA_FFI_ExecutionContext_Get_Args u;
  memset(&u, 0, sizeof u);
  u.struct_size = KC__XLA_SIZE(XLA_FFI_ExecutionContext_Get_Args, data);
  u.ctx = f->ctx;
  u.type_id = &kt_counter_id;
  char msg[256];
  y[4] = kt_take_code(f->api, f->api->XLA_FFI_ExecutionContext_Get(&u), msg, sizeof msg) &&
         strstr(msg, "no user data") != NULL;
  return NULL;
}

KC_TEST(xla_ffi_execution_context) {
  kt_register_both("kt.context", KT_FN(kt_context));
  kc_thread_pool* pool = NULL;
  KC_CHECK_OK(kc_thread_pool_create(3, &pool));
  kc_executable* exe = kt_compile_text(
      "HloModule context\n"
      "ENTRY main {\n"
      "  x = f32[2] parameter(0)\n"
      "  a = s64[5] custom-call(x), custom_call_target=\"kt.context\", "
      "api_version=API_VERSION_TYPED_FFI\n"
      "  b = s64[5] custom-call(x), custom_call_target=\"kt.context\", "
      "api_version=API_VERSION_TYPED_FFI\n"
      "  ROOT t = (s64[5], s64[5]) tuple(a, b)\n"
      "}\n",
      pool);
  kc_tensor* x = kt_f32s(2, 0.0f);
  int64_t last_id = 0;
  for (int run = 0; run < 3; ++run) {
    kc_tensor* out[2] = {NULL, NULL};
    KC_CHECK_OK(kt_run(exe, x, out));
    const int64_t* a = kt_data(out[0]);
    const int64_t* b = kt_data(out[1]);
    KC_CHECK_INT(a[0], 3); /* the pool the program was compiled with */
    KC_CHECK(a[1] > 0);
    KC_CHECK_INT(b[1], a[1]); /* one id for every call of a run */
    KC_CHECK(a[1] != last_id); /* a new one for each run */
    last_id = a[1];
    KC_CHECK_INT(a[2], 0);
    KC_CHECK_INT(a[3], 1);
    KC_CHECK_INT(a[4], 1);
    kt_release(out, 2);
  }
  kt_release(&x, 1);
  kc_executable_destroy(exe);
  kc_thread_pool_destroy(pool);
}

/* ---- the thread pool and futures ---------------------------------------------- */

enum { KT_CHUNKS = 8 };

typedef struct kt_job {
  const XLA_FFI_Api* api;
  XLA_FFI_Future* future;
  const float* x;
  float* y;
  int64_t n;
  bool fail;
  _Atomic int next_chunk;
  _Atomic int remaining;
} kt_job;

/* One chunk of y = 2 x; the last chunk to finish completes the future
 * and frees the job. */
static void kt_chunk(void* data) {
  kt_job* job = data;
  int c = atomic_fetch_add(&job->next_chunk, 1);
  int64_t per = (job->n + KT_CHUNKS - 1) / KT_CHUNKS;
  for (int64_t i = c * per; i < (c + 1) * per && i < job->n; ++i) job->y[i] = 2.0f * job->x[i];
  if (atomic_fetch_sub(&job->remaining, 1) != 1) return;
  const XLA_FFI_Api* api = job->api;
  XLA_FFI_Future* future = job->future;
  bool fail = job->fail;
  free(job);
  XLA_FFI_Error* e;
  if (fail) {
    XLA_FFI_Error_Create_Args ea;
    memset(&ea, 0, sizeof ea);
    ea.struct_size = KC__XLA_SIZE(XLA_FFI_Error_Create_Args, errc);
    ea.message = "a chunk went wrong";
    ea.errc = XLA_FFI_Error_Code_DATA_LOSS;
    XLA_FFI_Future_SetError_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = KC__XLA_SIZE(XLA_FFI_Future_SetError_Args, error);
    a.future = future;
    a.error = api->XLA_FFI_Error_Create(&ea);
    e = api->XLA_FFI_Future_SetError(&a);
  } else {
    XLA_FFI_Future_SetAvailable_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = KC__XLA_SIZE(XLA_FFI_Future_SetAvailable_Args, future);
    a.future = future;
    e = api->XLA_FFI_Future_SetAvailable(&a);
  }
  if (e) abort(); /* completing a fresh future cannot fail */
}

/* Spreads y = 2 x over the pool and returns at once with a future. */
static XLA_FFI_Error* kt_parallel(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  XLA_FFI_Future_Create_Args c;
  memset(&c, 0, sizeof c);
  c.struct_size = KC__XLA_SIZE(XLA_FFI_Future_Create_Args, extension_start);
  XLA_FFI_Error* e = f->api->XLA_FFI_Future_Create(&c);
  if (e) return e;
  kt_job* job = calloc(1, sizeof *job);
  job->api = f->api;
  job->future = c.future;
  job->x = kt_xla_arg(f, 0)->data;
  job->y = kt_xla_ret(f, 0)->data;
  job->n = kt_xla_count(kt_xla_arg(f, 0));
  XLA_FFI_AttrType type;
  job->fail = kt_xla_attr(&f->attrs, "fail", &type) != NULL;
  atomic_store(&job->remaining, KT_CHUNKS);
  f->future = c.future;
  for (int i = 0; i < KT_CHUNKS; ++i) {
    XLA_FFI_ThreadPool_Schedule_Args s;
    memset(&s, 0, sizeof s);
    s.struct_size = KC__XLA_SIZE(XLA_FFI_ThreadPool_Schedule_Args, data);
    s.ctx = f->ctx;
    s.task = kt_chunk;
    s.data = job;
    /* Scheduling cannot fail on kcall's pool; a real handler would run
     * the rest inline. */
    if ((e = f->api->XLA_FFI_ThreadPool_Schedule(&s))) abort();
  }
  return NULL;
}

KC_TEST(xla_ffi_thread_pool_and_futures) {
  kt_register("kt.parallel", kt_parallel);
  for (int size = 1; size <= 4; size += 3) {
    kc_thread_pool* pool = NULL;
    KC_CHECK_OK(kc_thread_pool_create(size, &pool));
    /* Two calls in a row: the second reads what the first's tasks wrote,
     * so the run must wait for each future before going on. */
    kc_executable* exe = kt_compile_text(
        "HloModule parallel\n"
        "ENTRY main {\n"
        "  x = f32[1000] parameter(0)\n"
        "  a = f32[1000] custom-call(x), custom_call_target=\"kt.parallel\", "
        "api_version=API_VERSION_TYPED_FFI\n"
        "  ROOT b = f32[1000] custom-call(a), custom_call_target=\"kt.parallel\", "
        "api_version=API_VERSION_TYPED_FFI\n"
        "}\n",
        pool);
    kc_tensor* x = kt_f32s(1000, 1.0f);
    for (int run = 0; run < 20; ++run) {
      kc_tensor* y = NULL;
      KC_CHECK_OK(kt_run(exe, x, &y));
      const float* v = kt_data(y);
      KC_CHECK(v[0] == 4.0f && v[999] == 4000.0f);
      kt_release(&y, 1);
    }
    kt_release(&x, 1);
    kc_executable_destroy(exe);
    kc_thread_pool_destroy(pool);
  }

  /* An error set on the future stops the run like a returned one. */
  char text[512];
  kt_one_call(text, sizeof text, "kt.parallel", 64, "{fail = true}");
  kc_executable* exe = kt_compile_text(text, NULL);
  kc_tensor* x = kt_f32s(64, 0.0f);
  kc_tensor* y = NULL;
  KC_CHECK_CODE(kt_run(exe, x, &y), KC_DATA_LOSS,
                "in custom call 'kt.parallel' (instruction 'y'): a chunk went wrong");
  KC_CHECK(y == NULL);
  kt_release(&x, 1);
  kc_executable_destroy(exe);
}

/* ---- host memory ------------------------------------------------------------------ */

static XLA_FFI_Error* kt_alloc_mem(XLA_FFI_CallFrame* f, size_t size, size_t align,
                                   void** out) {
  XLA_FFI_DeviceMemory_Allocate_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = KC__XLA_SIZE(XLA_FFI_DeviceMemory_Allocate_Args, data);
  a.ctx = f->ctx;
  a.size = size;
  a.alignment = align;
  XLA_FFI_Error* e = f->api->XLA_FFI_DeviceMemory_Allocate(&a);
  *out = a.data;
  return e;
}

static XLA_FFI_Error* kt_free_mem(XLA_FFI_CallFrame* f, size_t size, void* data) {
  XLA_FFI_DeviceMemory_Free_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = KC__XLA_SIZE(XLA_FFI_DeviceMemory_Free_Args, data);
  a.ctx = f->ctx;
  a.size = size;
  a.data = data;
  return f->api->XLA_FFI_DeviceMemory_Free(&a);
}

/* y = x reversed, through scratch memory; checks the allocator's rules. */
static XLA_FFI_Error* kt_scratch(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  const XLA_FFI_Buffer* x = kt_xla_arg(f, 0);
  int64_t n = kt_xla_count(x);
  size_t bytes = (size_t)n * sizeof(float);
  void* odd = NULL;
  XLA_FFI_Error* e = kt_alloc_mem(f, 8, 3, &odd);
  if (!e) return kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "alignment 3 accepted");
  kt_take_code(f->api, e, NULL, 0);
  float* tmp = NULL;
  if ((e = kt_alloc_mem(f, bytes, 256, (void**)&tmp))) return e;
  if ((uintptr_t)tmp % 256) return kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "unaligned");
  const float* in = x->data;
  for (int64_t i = 0; i < n; ++i) tmp[n - 1 - i] = in[i];
  memcpy(kt_xla_ret(f, 0)->data, tmp, bytes);
  /* The size must be the one allocated. */
  e = kt_free_mem(f, bytes + 1, tmp);
  if (!e) return kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "wrong size accepted");
  kt_take_code(f->api, e, NULL, 0);
  if ((e = kt_free_mem(f, bytes, tmp))) return e;
  void* small = NULL;
  if ((e = kt_alloc_mem(f, 1, 0, &small))) return e;
  if ((uintptr_t)small % 16) return kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "unaligned");
  if ((e = kt_free_mem(f, 1, small))) return e;
  return kt_free_mem(f, 0, NULL);
}

/* How many blocks one run of `target` (f32[5] -> f32[5]) takes from the
 * run's allocator, the run's own state made beforehand. */
static int64_t kt_allocs_per_run(const char* target, float* out_first) {
  char text[512];
  kt_one_call(text, sizeof text, target, 5, NULL);
  kc_executable* exe = kt_compile_text(text, NULL);
  kc_tensor* x = kt_f32s(5, 1.0f);
  kc_alloc_stats before, after;
  before.struct_size = after.struct_size = sizeof before;
  kc_tensor* y = NULL;
  KC_CHECK_OK(kt_run(exe, x, &y));
  kt_release(&y, 1);
  kc_counting_allocator_query(kt_counter(), &before);
  KC_CHECK_OK(kt_run(exe, x, &y));
  kc_counting_allocator_query(kt_counter(), &after);
  KC_CHECK_INT(after.bad_frees, 0);
  *out_first = ((const float*)kt_data(y))[0];
  kt_release(&y, 1);
  kt_release(&x, 1);
  kc_executable_destroy(exe);
  return after.total_allocs - before.total_allocs;
}

KC_TEST(xla_ffi_device_memory_is_host_scratch) {
  kt_register("kt.scratch", kt_scratch);
  kt_register("kt.add_one", kt_add_one);
  float first = 0;
  int64_t plain = kt_allocs_per_run("kt.add_one", &first);
  KC_CHECK(first == 2.0f);
  int64_t scratch = kt_allocs_per_run("kt.scratch", &first);
  KC_CHECK(first == 5.0f); /* reversed */
  /* The handler's two blocks come from the run's allocator (and are
   * given back: the runner checks). */
  KC_CHECK_INT(scratch - plain, 2);
}

/* ---- the API table ------------------------------------------------------------------ */

KC_TEST(xla_ffi_api_table) {
  const XLA_FFI_Api* api = kc_xla_ffi_get_api();
  KC_CHECK(api != NULL);
  KC_CHECK_INT(api->struct_size, KC__XLA_API_SIZE);
  KC_CHECK_INT(api->api_version.major_version, 0);
  KC_CHECK_INT(api->api_version.minor_version, 3);
  KC_CHECK_INT(KC_XLA_FFI_API_VERSION_MAJOR, 0);
  KC_CHECK_INT(KC_XLA_FFI_API_VERSION_MINOR, 3);

  /* Errors: made, read and destroyed through the table. */
  XLA_FFI_Error_Create_Args ea;
  memset(&ea, 0, sizeof ea);
  ea.struct_size = KC__XLA_SIZE(XLA_FFI_Error_Create_Args, errc);
  ea.message = "made here";
  ea.errc = XLA_FFI_Error_Code_ABORTED;
  char msg[64];
  KC_CHECK(kt_take_code(api, api->XLA_FFI_Error_Create(&ea), msg, sizeof msg));
  KC_CHECK_STR(msg, "made here");
  /* A struct smaller than the version needs is answered, not read past. */
  XLA_FFI_RunId_Get_Args small;
  memset(&small, 0, sizeof small);
  small.struct_size = 8;
  KC_CHECK(kt_take_code(api, api->XLA_FFI_RunId_Get(&small), msg, sizeof msg));
  KC_CHECK_CONTAINS(msg, "XLA_FFI_RunId_Get_Args: struct_size 8");
  KC_CHECK(kt_take_code(api, api->XLA_FFI_RunId_Get(NULL), msg, sizeof msg));

  /* A library that registers through XLA's API ends up with a kcall
   * target; "cpu" is the host. */
  XLA_FFI_Handler_Register_Args r;
  memset(&r, 0, sizeof r);
  r.struct_size = KC__XLA_SIZE(XLA_FFI_Handler_Register_Args, traits);
  r.name.ptr = "kt.via_api";
  r.name.len = strlen(r.name.ptr);
  r.platform.ptr = "cpu";
  r.platform.len = 3;
  r.bundle.execute = kt_add_one;
  KC_CHECK(api->XLA_FFI_Handler_Register(&r) == NULL);
  kt_check_version("kt.via_api", 0, 3);
  r.platform.ptr = "tpu";
  KC_CHECK(kt_take_code(api, api->XLA_FFI_Handler_Register(&r), msg, sizeof msg));
  KC_CHECK_CONTAINS(msg, "unknown platform 'tpu'");
  r.platform.ptr = "cpu";
  KC_CHECK(kt_take_code(api, api->XLA_FFI_Handler_Register(&r), msg, sizeof msg));
  KC_CHECK_CONTAINS(msg, "kt.via_api");

  /* Types too; the status's code name is not repeated in the message. */
  XLA_FFI_TypeId id = {0};
  XLA_FFI_Type_Register_Args t;
  memset(&t, 0, sizeof t);
  t.struct_size = KC__XLA_SIZE(XLA_FFI_Type_Register_Args, type_id);
  t.name.ptr = "kt.api_type";
  t.name.len = strlen(t.name.ptr);
  t.type_id = &id;
  KC_CHECK(api->XLA_FFI_Type_Register(&t) == NULL);
  KC_CHECK(id.type_id > 0);
  XLA_FFI_TypeId clash = {id.type_id};
  t.name.ptr = "kt.api_type2";
  t.name.len = strlen(t.name.ptr);
  t.type_id = &clash;
  KC_CHECK(kt_take_code(api, api->XLA_FFI_Type_Register(&t), msg, sizeof msg));
  KC_CHECK(strncmp(msg, "XLA FFI type 'kt.api_type2'", 27) == 0);

  /* Outside a program: no state, no pool, no run. */
  XLA_FFI_ThreadPool_NumThreads_Args n;
  memset(&n, 0, sizeof n);
  n.struct_size = KC__XLA_SIZE(XLA_FFI_ThreadPool_NumThreads_Args, num_threads);
  KC_CHECK(kt_take_code(api, api->XLA_FFI_ThreadPool_NumThreads(&n), msg, sizeof msg));
  KC_CHECK_CONTAINS(msg, "no thread pool");
}

/* ---- many threads at once ------------------------------------------------------- */

typedef struct kt_thread_arg {
  const kc_executable* exe;
  int failures;
} kt_thread_arg;

static void* kt_thread_main(void* p) {
  kt_thread_arg* a = p;
  kc_tensor* x = kt_f32s(1000, 1.0f);
  for (int i = 0; i < 25; ++i) {
    kc_tensor* out[2] = {NULL, NULL};
    kc_status* st = kt_run(a->exe, x, out);
    if (st) {
      kc_status_destroy(st);
      a->failures++;
      continue;
    }
    const float* v = kt_data(out[0]);
    const float* w = kt_data(out[1]);
    if (v[999] != 4000.0f || w[0] < 100.0f) a->failures++;
    kt_release(out, 2);
  }
  kt_release(&x, 1);
  return NULL;
}

KC_TEST(xla_ffi_concurrent_executions) {
  kt_register_types();
  kt_register("kt.parallel", kt_parallel);
  KC_CHECK_OK(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.stages"), KC_PLATFORM_HOST,
                                        &kt_stage_handlers, 0));
  kc_executable* exe = kt_compile_text(
      "HloModule concurrent\n"
      "ENTRY main {\n"
      "  x = f32[1000] parameter(0)\n"
      "  a = f32[1000] custom-call(x), custom_call_target=\"kt.parallel\", "
      "api_version=API_VERSION_TYPED_FFI\n"
      "  b = f32[1000] custom-call(a), custom_call_target=\"kt.parallel\", "
      "api_version=API_VERSION_TYPED_FFI\n"
      "  c = f32[1000] custom-call(x), custom_call_target=\"kt.stages\", "
      "api_version=API_VERSION_TYPED_FFI, backend_config={site = 1 : i64}\n"
      "  ROOT t = (f32[1000], f32[1000]) tuple(b, c)\n"
      "}\n",
      NULL);
  enum { kThreads = 6 };
  pthread_t threads[kThreads];
  kt_thread_arg args[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    args[i].exe = exe;
    args[i].failures = 0;
    KC_CHECK(pthread_create(&threads[i], NULL, kt_thread_main, &args[i]) == 0);
  }
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(threads[i], NULL);
    KC_CHECK_INT(args[i].failures, 0);
  }
  kc_executable_destroy(exe);
}

/* ---- from a plugin ----------------------------------------------------------------- */

#define KT_FIXTURE(name) KC_FIXTURE_DIR "/kt_plugin_" name ".so"

static void kt_expect_target(const char* name, bool present) {
  kc_xcall_target_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  kc_status* st = kc_xcall_lookup(kc_sv(name), KC_PLATFORM_HOST, &d);
  if (present) {
    KC_CHECK_OK(st);
    KC_CHECK(d.xla_ffi);
  } else {
    KC_CHECK_CODE(st, KC_NOT_FOUND, name);
  }
}

KC_TEST(xla_ffi_handlers_from_a_plugin) {
  /* The host offers the feature the fixture requires. */
  bool offered = false;
  for (const char* const* f = kc_plugin_get_host_api()->features; *f; ++f) {
    offered |= strcmp(*f, "xla_ffi") == 0;
  }
  KC_CHECK(offered);
  KC_CHECK(kc_plugin_get_host_api()->xla_ffi_get_api() == kc_xla_ffi_get_api());
  kc_plugin* plugin = NULL;
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("xla_ffi"), &plugin));
  kc_plugin_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  KC_CHECK_OK(kc_plugin_get_desc(plugin, &desc));
  KC_CHECK_INT(desc.registration_count, 3);
  kt_expect_target("kt_xla.double", true);
  kt_expect_target("kt_xla.offset", true);
  kt_expect_target("kt_xla.via_api", true);

  kc_executable* exe = kt_compile_text(KT_XLA_PLUGIN_CHAIN_HLO, NULL);
  kc_tensor* x = kt_f32s(3, 1.0f);
  kc_tensor* y = NULL;
  KC_CHECK_OK(kt_run(exe, x, &y));
  const float* v = kt_data(y);
  KC_CHECK(v[0] == 7.0f && v[1] == 11.0f && v[2] == 15.0f); /* 2 (2 x + 1.5) */
  kt_release(&y, 1);
  kt_release(&x, 1);
  kc_executable_destroy(exe);
}

KC_TEST(xla_ffi_plugin_init_fails_leaves_nothing) {
  kc_plugin* plugin = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("xla_ffi_init_fails"), &plugin), KC_ABORTED,
                "kt_xla: giving up after registering");
  KC_CHECK(plugin == NULL);
  kt_expect_target("kt_xla.double", false);
  kt_expect_target("kt_xla.offset", false);
  kt_expect_target("kt_xla.via_api", false);
}

/* Data that a caller might hand over as a handler by mistake. */
static const uint64_t kt_not_code[4] = {1, 2, 3, 4};

KC_TEST(xla_ffi_data_symbol_is_not_a_handler) {
  /* A library's data symbols (its state type's id and info): refused,
   * naming the symbol and the library, and never called. */
  void* lib = dlopen(KC_FIXTURE_DIR "/kt_xla_ffi_c_handlers.so", RTLD_NOW);
  KC_CHECK(lib != NULL);
  static const char* const data[] = {"KtCountTypeInfo", "KtCountTypeId"};
  for (size_t i = 0; i < sizeof data / sizeof data[0]; ++i) {
    void* sym = dlsym(lib, data[i]);
    KC_CHECK(sym != NULL);
    kc_xla_ffi_handler_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.data"), KC_PLATFORM_HOST,
                                                    fn, 0),
                  KC_INVALID_ARGUMENT, "registering XLA FFI handlers for 'kt.data'",
                  "the execute handler is the symbol", data[i],
                  "kt_xla_ffi_c_handlers.so", "a data object, not a function");
    /* At any stage, with or without the metadata query. */
    kc_xla_ffi_handlers h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    h.execute = KT_FN(kt_add_one);
    h.instantiate = fn;
    KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.data"), KC_PLATFORM_HOST, &h,
                                            KC_XLA_FFI_NO_METADATA),
                  KC_INVALID_ARGUMENT, "the instantiate handler is the symbol", data[i]);
  }
  kt_expect_target("kt.data", false);
  /* Read-only data of this program, whether or not a symbol names it. */
  const void* table = kt_not_code;
  kc_xla_ffi_handler_fn fn;
  memcpy(&fn, &table, sizeof fn);
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.data"), KC_PLATFORM_HOST,
                                                  fn, 0),
                KC_INVALID_ARGUMENT, "the execute handler", "not");
  kt_expect_target("kt.data", false);
  /* The library's functions still register. */
  void* code = dlsym(lib, "KtAddOne");
  memcpy(&fn, &code, sizeof fn);
  KC_CHECK_OK(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.data"), KC_PLATFORM_HOST, fn,
                                                0));
  kt_expect_target("kt.data", true); /* the library stays loaded for it */
}
