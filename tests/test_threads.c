/* Concurrency: the registry, functions and the reference counts used from
 * several threads at once. Meant to run under ThreadSanitizer as well
 * (make tsan), where a data race fails the test even if results are right. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "test.h"

#define KT_THREADS 8
#define KT_ITERATIONS 1000
#define KT_OWN_NAMES 4

/* Functions return self->base + sum of their int arguments, so a call says
 * which function answered. */
typedef struct kt_const_self {
  int64_t base;
} kt_const_self;

static kc_status* kt_sum(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  int64_t total = ((const kt_const_self*)self)->base;
  for (int32_t i = 0; i < nargs; ++i) {
    int64_t v;
    KC_RETURN_IF_ERROR(kc_args_get_int("thr.sum", args, nargs, i, &v),
                       "in thr.sum");
    total += v;
  }
  *ret = kc_any_int(total);
  return NULL;
}

static void kt_free_self(void* self) {
  kc_allocator_free(kt_alloc(), self, sizeof(kt_const_self), 0);
}

/* A new function with its own heap state, both from kt_alloc(), so that the
 * leak check sees every function freed exactly once. */
static kc_func* kt_new_sum(int64_t base) {
  kt_const_self* self = kc_allocator_alloc(kt_alloc(), sizeof *self, 0);
  if (!self) return NULL;
  self->base = base;
  kc_func* f = NULL;
  kc_status* st = kc_func_create(kt_alloc(), kt_sum, self, kt_free_self, &f);
  if (st) {
    kc_status_destroy(st);
    return NULL;
  }
  return f;
}

typedef struct kt_worker {
  pthread_t thread;
  int id;
} kt_worker;

static bool kt_call_expect(const char* what, kc_func* f, int64_t a, int64_t b,
                           int64_t expected) {
  kc_any args[] = {kc_any_int(a), kc_any_int(b)};
  kc_any ret = kc_any_none();
  kc_status* st = kc_func_call(f, args, 2, &ret);
  if (st) {
    char text[256];
    kt__fail(__FILE__, __LINE__, "%s: %s", what, kt_status_text(st, text, sizeof text));
    kc_status_destroy(st);
    return false;
  }
  if (ret.type_index != KC_TYPE_INT || ret.u.v_int64 != expected) {
    kt__fail(__FILE__, __LINE__, "%s: got %lld, expected %lld", what,
             (long long)ret.u.v_int64, (long long)expected);
    kc_any_release(&ret);
    return false;
  }
  return true;
}

static void* kt_worker_main(void* arg) {
  const kt_worker* w = arg;
  char own[KT_OWN_NAMES][32];
  bool present[KT_OWN_NAMES] = {false};
  int64_t own_base[KT_OWN_NAMES] = {0};
  for (int k = 0; k < KT_OWN_NAMES; ++k) {
    snprintf(own[k], sizeof own[k], "thr%d.f%d", w->id, k);
  }
  for (int i = 0; i < KT_ITERATIONS; ++i) {
    int k = i % KT_OWN_NAMES;
    int64_t base = (int64_t)w->id * 1000000 + i;

    /* Register, or replace, one of this thread's names. */
    kc_func* f = kt_new_sum(base);
    if (!f) {
      kt__fail(__FILE__, __LINE__, "thread %d: cannot create a function", w->id);
      return NULL;
    }
    kc_status* st = kc_func_registry_register(
        kc_sv(own[k]), f, present[k] ? KC_REGISTER_OVERRIDE : 0);
    kc_object_release(KC_OBJECT(f));
    if (st) {
      char text[256];
      kt__fail(__FILE__, __LINE__, "thread %d: register %s: %s", w->id, own[k],
               kt_status_text(st, text, sizeof text));
      kc_status_destroy(st);
      return NULL;
    }
    present[k] = true;
    own_base[k] = base;

    /* The shared name, registered before the threads started. */
    kc_func* shared = NULL;
    st = kc_func_registry_lookup(KC_SV_LIT("thr.shared"), &shared);
    if (st) {
      kc_status_destroy(st);
      kt__fail(__FILE__, __LINE__, "thread %d: thr.shared vanished", w->id);
      return NULL;
    }
    kt_call_expect("thr.shared", shared, w->id, i, 5 + w->id + i);

    /* A name every thread overrides: whichever version answers, each
     * returns 0 + a + b, and the one looked up (and retained: another
     * thread's override frees the one it replaces) stays valid. */
    f = kt_new_sum(0);
    if (f) {
      st = kc_func_registry_register(KC_SV_LIT("thr.contended"), f,
                                     KC_REGISTER_OVERRIDE);
      kc_object_release(KC_OBJECT(f));
      if (st) {
        kt__fail(__FILE__, __LINE__, "thread %d: override thr.contended", w->id);
        kc_status_destroy(st);
      }
    }
    kc_func* contended = NULL;
    st = kc_func_registry_lookup_retained(KC_SV_LIT("thr.contended"), &contended);
    if (st) {
      kt__fail(__FILE__, __LINE__, "thread %d: thr.contended missing", w->id);
      kc_status_destroy(st);
    } else {
      kt_call_expect("thr.contended", contended, i, 1, i + 1);
      kc_object_release(KC_OBJECT(contended));
    }

    /* Every own name answers with what this thread last put there. */
    for (int j = 0; j < KT_OWN_NAMES; ++j) {
      kc_func* g = NULL;
      st = kc_func_registry_lookup(kc_sv(own[j]), &g);
      if (present[j] != (st == NULL)) {
        kt__fail(__FILE__, __LINE__, "thread %d: %s should %sbe registered",
                 w->id, own[j], present[j] ? "" : "not ");
      }
      if (st) {
        if (kc_status_get_code(st) != KC_NOT_FOUND) {
          kt__fail(__FILE__, __LINE__, "thread %d: lookup %s: wrong code",
                   w->id, own[j]);
        }
        kc_status_destroy(st);
        continue;
      }
      kt_call_expect(own[j], g, 1, 2, own_base[j] + 3);
    }

    /* Remove one now and then; the next round registers it afresh. */
    if (i % 3 == 2) {
      int r = (i / 3) % KT_OWN_NAMES;
      if (present[r]) {
        st = kc_func_registry_remove(kc_sv(own[r]));
        if (st) {
          kt__fail(__FILE__, __LINE__, "thread %d: remove %s", w->id, own[r]);
          kc_status_destroy(st);
        }
        present[r] = false;
      }
    }

    /* The listing of this thread's namespace is exactly what it holds. */
    if (i % 50 == 0) {
      char prefix[16];
      snprintf(prefix, sizeof prefix, "thr%d.", w->id);
      kc_array* list = NULL;
      st = kc_func_registry_list(kt_alloc(), kc_sv(prefix), &list);
      if (st) {
        kt__fail(__FILE__, __LINE__, "thread %d: list", w->id);
        kc_status_destroy(st);
      } else {
        size_t want = 0;
        for (int j = 0; j < KT_OWN_NAMES; ++j) want += present[j];
        if (kc_array_get_size(list) != want) {
          kt__fail(__FILE__, __LINE__, "thread %d: list has %zu names, expected %zu",
                   w->id, kc_array_get_size(list), want);
        }
        kc_object_release(KC_OBJECT(list));
      }
    }
  }
  return NULL;
}

KC_TEST(threads_registry_and_calls) {
  kc_func* shared = kt_new_sum(5);
  KC_CHECK(shared != NULL);
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("thr.shared"), shared, 0));
  kt_worker workers[KT_THREADS];
  for (int t = 0; t < KT_THREADS; ++t) {
    workers[t].id = t;
    KC_CHECK(pthread_create(&workers[t].thread, NULL, kt_worker_main, &workers[t]) == 0);
  }
  for (int t = 0; t < KT_THREADS; ++t) pthread_join(workers[t].thread, NULL);
  /* The test's own reference saw the whole run through. */
  KC_CHECK(kc_object_get_ref_count(KC_OBJECT(shared)) >= 2);
  kc_object_release(KC_OBJECT(shared));
  kc_array* list = NULL;
  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), KC_SV_LIT("thr"), &list));
  KC_CHECK(kc_array_get_size(list) >= 2);
  kc_object_release(KC_OBJECT(list));
}

/* Retain and release of one shared object from every thread: the count must
 * come back to where it started. */
static void* kt_refcount_main(void* arg) {
  kc_object* obj = arg;
  for (int i = 0; i < 20000; ++i) {
    kc_object_retain(obj);
    kc_any copy = kc_any_object(obj);
    kc_any_retain(&copy);
    kc_any_release(&copy);
    kc_object_release(obj);
  }
  return NULL;
}

KC_TEST(threads_reference_counts) {
  kc_str* s = NULL;
  KC_CHECK_OK(kc_str_create(kt_alloc(), kc_sv("shared between threads"), &s));
  pthread_t threads[KT_THREADS];
  for (int t = 0; t < KT_THREADS; ++t) {
    KC_CHECK(pthread_create(&threads[t], NULL, kt_refcount_main, s) == 0);
  }
  for (int t = 0; t < KT_THREADS; ++t) pthread_join(threads[t], NULL);
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(s)), 1);
  kc_object_release(KC_OBJECT(s));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

/* ---- lookups while others override and remove ----------------------------- */

#define KT_CHURN_NAMES 4

typedef struct kt_churn {
  pthread_t thread;
  int id;
  int rounds;
  int readers;  /* how many readers a writer waits for */
  int* stop;    /* atomic: readers end when it is set */
  int* running; /* atomic: readers that have started */
  int64_t calls, misses;
} kt_churn;

static const char* const kt_churn_names[KT_CHURN_NAMES] = {
    "churn.a", "churn.b", "churn.c", "churn.d"};

/* Readers: retained lookups (then a call, which reads the function's
 * state) and plain lookups, which only test presence; every name is
 * always either there or not, never a freed entry. */
static void* kt_churn_reader(void* arg) {
  kt_churn* c = arg;
  __atomic_add_fetch(c->running, 1, __ATOMIC_RELEASE);
  /* At least some rounds, however the threads are scheduled. */
  for (int i = 0; i < 2000 || !__atomic_load_n(c->stop, __ATOMIC_ACQUIRE); ++i) {
    const char* name = kt_churn_names[i % KT_CHURN_NAMES];
    kc_func* f = NULL;
    kc_status* st = kc_func_registry_lookup_retained(kc_sv(name), &f);
    if (st) {
      if (kc_status_get_code(st) != KC_NOT_FOUND) {
        kt__fail(__FILE__, __LINE__, "reader %d: %s: wrong code", c->id, name);
      }
      /* Reading the message searches the registry while it changes. */
      if (i % 64 == 0 && !strstr(kc_status_get_message(st), name)) {
        kt__fail(__FILE__, __LINE__, "reader %d: message without %s", c->id, name);
      }
      kc_status_destroy(st);
      c->misses++;
      continue;
    }
    /* Whatever version answers returns base + a + b with base % 1000 ==
     * the name's index. */
    kc_any args[] = {kc_any_int(1), kc_any_int(2)};
    kc_any ret = kc_any_none();
    st = kc_func_call(f, args, 2, &ret);
    if (st || ret.type_index != KC_TYPE_INT ||
        (ret.u.v_int64 - 3) % 1000 != i % KT_CHURN_NAMES) {
      kt__fail(__FILE__, __LINE__, "reader %d: %s answered wrongly", c->id, name);
    }
    kc_status_destroy(st);
    kc_object_release(KC_OBJECT(f));
    c->calls++;
    kc_func* borrowed = NULL;
    st = kc_func_registry_lookup(kc_sv(name), &borrowed);
    kc_status_destroy(st);
  }
  return NULL;
}

/* Writers: override, remove and register again, as fast as they can. */
static void* kt_churn_writer(void* arg) {
  kt_churn* c = arg;
  /* Begin when every reader runs, so that they overlap. */
  while (__atomic_load_n(c->running, __ATOMIC_ACQUIRE) < c->readers) {
    sched_yield();
  }
  for (int i = 0; i < c->rounds; ++i) {
    int k = (i + c->id) % KT_CHURN_NAMES;
    kc_func* f = kt_new_sum((int64_t)(i % 1000) * 1000 + k);
    if (!f) {
      kt__fail(__FILE__, __LINE__, "writer %d: out of memory", c->id);
      break;
    }
    kc_status* st = kc_func_registry_register(kc_sv(kt_churn_names[k]), f,
                                              KC_REGISTER_OVERRIDE);
    kc_object_release(KC_OBJECT(f));
    if (st) {
      kt__fail(__FILE__, __LINE__, "writer %d: override", c->id);
      kc_status_destroy(st);
    }
    if (i % 3 == 0) {
      /* Another writer may have removed it first. */
      kc_status_destroy(kc_func_registry_remove(kc_sv(kt_churn_names[k])));
    }
  }
  return NULL;
}

KC_TEST(threads_lookups_during_override_and_remove) {
  enum { readers = 4, writers = 3 };
  int stop = 0, running = 0;
  kt_churn r[readers], w[writers];
  /* A name is there most of the time: readers also call, not only miss. */
  for (int k = 0; k < KT_CHURN_NAMES; ++k) {
    kc_func* f = kt_new_sum(k);
    KC_CHECK_OK(kc_func_registry_register(kc_sv(kt_churn_names[k]), f, 0));
    kc_object_release(KC_OBJECT(f));
  }
  for (int t = 0; t < readers; ++t) {
    r[t] = (kt_churn){.id = t, .stop = &stop, .running = &running};
    KC_CHECK(pthread_create(&r[t].thread, NULL, kt_churn_reader, &r[t]) == 0);
  }
  for (int t = 0; t < writers; ++t) {
    w[t] = (kt_churn){.id = t, .rounds = 4000, .readers = readers,
                      .stop = &stop, .running = &running};
    KC_CHECK(pthread_create(&w[t].thread, NULL, kt_churn_writer, &w[t]) == 0);
  }
  for (int t = 0; t < writers; ++t) pthread_join(w[t].thread, NULL);
  __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
  int64_t calls = 0;
  for (int t = 0; t < readers; ++t) {
    pthread_join(r[t].thread, NULL);
    calls += r[t].calls;
  }
  KC_CHECK(calls > 0);
  /* What the last writes retired may wait for the next one; with no reader
   * left, that one frees everything. */
  kc_func* f = kt_new_sum(0);
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("churn.last"), f, 0));
  kc_object_release(KC_OBJECT(f));
  kc_registry_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  kc_registry_query_stats(&s);
  KC_CHECK_INT(s.retired_objects, 0);
  /* Two blocks per function (it and its state): the registered ones only. */
  KC_CHECK(kt_live_blocks() <= 2 * (KT_CHURN_NAMES + 1));
}

/* ---- unloading a plugin while other threads use it -------------------------- */

typedef struct kt_user {
  pthread_t thread;
  int* stop; /* atomic */
  int64_t calls;
} kt_user;

/* A well-behaved user: it holds a reference for as long as it calls.
 * Between an unload and the next load the names are simply missing. */
static void* kt_plugin_user(void* arg) {
  kt_user* u = arg;
  /* Until told to stop, and at least until one call went through (the
   * names are there once the unload cycles are over). */
  for (int i = 0;
       i < 500 || !__atomic_load_n(u->stop, __ATOMIC_ACQUIRE) || u->calls == 0; ++i) {
    kc_func* f = NULL;
    kc_status* st = kc_func_registry_lookup_retained(KC_SV_LIT("kt_unload.add"), &f);
    if (st) {
      if (kc_status_get_code(st) != KC_NOT_FOUND) {
        kt__fail(__FILE__, __LINE__, "lookup: wrong code");
      }
      kc_status_destroy(st);
      continue;
    }
    kt_call_expect("kt_unload.add", f, i, 1, i + 1);
    kc_object_release(KC_OBJECT(f));
    u->calls++;
    /* Kernel selection and op calls go through the registries too. */
    const kc_op* op = NULL;
    st = kc_op_registry_lookup_retained(KC_SV_LIT("kt_unload.Double"), &op);
    if (st) {
      kc_status_destroy(st);
      continue;
    }
    float in = (float)i, out = 0;
    DLTensor x = {&in, kc_device_cpu(), 1, kc_dtype_make(kDLFloat, 32, 1),
                  (int64_t[]){1}, NULL, 0};
    DLTensor y = x;
    y.data = &out;
    const DLTensor* ins[1] = {&x};
    DLTensor* outs[1] = {&y};
    st = kc_op_call_into(op, ins, 1, NULL, 0, NULL, outs, 1);
    if (st || out != 2 * in) {
      char text[512];
      kt__fail(__FILE__, __LINE__, "kt_unload.Double(%g) = %g: %s", (double)in, (double)out,
               st ? kt_status_text(st, text, sizeof text) : "OK");
    }
    kc_status_destroy(st);
    kc_object_release(KC_OBJECT((kc_op*)(uintptr_t)op));
  }
  return NULL;
}

KC_TEST(threads_plugin_unload_while_in_use) {
  enum { users = 3, cycles = 20 };
  int stop = 0;
  kt_user u[users];
  const char* path = KC_FIXTURE_DIR "/kt_plugin_unload.so";
  kc_plugin* p = NULL;
  KC_CHECK_OK(kc_plugin_load(path, &p));
  for (int t = 0; t < users; ++t) {
    u[t] = (kt_user){.stop = &stop};
    KC_CHECK(pthread_create(&u[t].thread, NULL, kt_plugin_user, &u[t]) == 0);
  }
  int refused = 0;
  for (int c = 0; c < cycles; ++c) {
    /* Refused while a user holds something; it lets go soon. */
    kc_status* st;
    while ((st = kc_plugin_unload(p)) != NULL) {
      if (kc_status_get_code(st) != KC_FAILED_PRECONDITION ||
          !strstr(kc_status_get_message(st), "is still in use")) {
        char text[512];
        kt__fail(__FILE__, __LINE__, "unload: %s", kt_status_text(st, text, sizeof text));
        kc_status_destroy(st);
        break;
      }
      kc_status_destroy(st);
      refused++;
      sched_yield();
    }
    kc_plugin* again = NULL;
    KC_CHECK_OK(kc_plugin_load(path, &again));
    KC_CHECK(again == p);
  }
  __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
  int64_t calls = 0;
  for (int t = 0; t < users; ++t) {
    pthread_join(u[t].thread, NULL);
    calls += u[t].calls;
  }
  KC_CHECK(calls > 0);
  KC_CHECK_OK(kc_plugin_unload(p));
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("kt_unload.add"), &f), KC_NOT_FOUND,
                "kt_unload.add");
  (void)refused;
}
