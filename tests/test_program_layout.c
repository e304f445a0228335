/* The run block and the run loop under load: many typed calls with equal
 * and distinct shapes, mixed with legacy calls and element-wise steps, each
 * typed handler checking its own frame, over runs whose inputs stay put or
 * move, and over threads sharing one executable. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"

enum { KT_CALLS = 48, KT_N = 8 };

/* What step k is. */
enum { KT_TYPED, KT_LEGACY, KT_ADD };
static int kt_kind(int k) { return k % 8 == 5 ? KT_LEGACY : k % 8 == 6 ? KT_ADD : KT_TYPED; }
/* A typed call's second operand (parameter 0, 1 or 2) and its result rank:
 * x and z are f32[8], y is f32[2,4]. */
static int kt_other(int k) { return k % 3; }
static int32_t kt_param_rank(int p) { return p == 1 ? 2 : 1; }
static int32_t kt_result_rank(int k) { return kt_kind(k) == KT_TYPED ? 1 + (k & 1) : 1; }
static float kt_scale(int k) { return k % 4 == 0 ? 2.0f : 1.0f; }

static bool kt_dims_ok(const DLTensor* t, int32_t rank) {
  if (t->ndim != rank || !t->shape || t->strides || t->byte_offset || !t->data) return false;
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) return false;
  if (t->device.device_type != kDLCPU) return false;
  return rank == 1 ? t->shape[0] == KT_N : t->shape[0] == 2 && t->shape[1] == 4;
}

/* out = a + b * scale + k, after checking that the frame is this call's:
 * attribute k says which call it is, ranks what its operands must be. */
static kc_status* kt_layout_fma(kc_xcall_frame* f) {
  if (f->stage != KC_XCALL_STAGE_EXECUTE) return NULL;
  if (f->num_args != 2 || f->num_results != 1 || f->num_attrs != 3) {
    return kc_status_create(KC_INTERNAL, "frame has %d args, %d results, %d attrs",
                            f->num_args, f->num_results, f->num_attrs);
  }
  int64_t k = f->attrs[0].v.i64;
  int64_t ranks = f->attrs[1].v.i64;
  float scale = f->attrs[2].v.f32;
  if (f->attrs[0].type != KC_ATTR_I64 || f->attrs[2].type != KC_ATTR_F32 || k < 0 ||
      k >= KT_CALLS || scale != kt_scale((int)k)) {
    return kc_status_create(KC_INTERNAL, "call %lld: attributes are not its own", (long long)k);
  }
  if (!kt_dims_ok(&f->args[0], (int32_t)(ranks / 100)) ||
      !kt_dims_ok(&f->args[1], (int32_t)(ranks / 10 % 10)) ||
      !kt_dims_ok(&f->results[0], (int32_t)(ranks % 10))) {
    return kc_status_create(KC_INTERNAL, "call %lld: a tensor is not what it should be",
                            (long long)k);
  }
  const float* a = f->args[0].data;
  const float* b = f->args[1].data;
  float* out = f->results[0].data;
  for (int i = 0; i < KT_N; ++i) out[i] = a[i] + b[i] * scale + (float)k;
  return NULL;
}

static void kt_layout_add(void* out, const void** ins) {
  const float* a = ins[0];
  const float* b = ins[1];
  for (int i = 0; i < KT_N; ++i) ((float*)out)[i] = a[i] + b[i];
}

static kc_status* kt_layout_register(void) {
  static const kc_xcall_buffer_spec any_rank[] = {{{kDLFloat, 32, 1}, -1},
                                                  {{kDLFloat, 32, 1}, -1}};
  static const kc_xcall_attr_spec attrs[] = {
      {"k", KC_ATTR_I64, 0}, {"ranks", KC_ATTR_I64, 0}, {"scale", KC_ATTR_F32, 0}};
  kc_xcall_signature sig = {.struct_size = sizeof sig, .num_args = 2, .args = any_rank,
                            .num_results = 1, .results = any_rank,
                            .num_attrs = 3, .attrs = attrs};
  KC_RETURN_IF_ERROR(kc_xcall_register_typed(KC_SV_LIT("kt_layout_fma"), KC_PLATFORM_HOST,
                                             &sig, kt_layout_fma, NULL, NULL, 0),
                     "registering");
  return kc_xcall_register(KC_SV_LIT("kt_layout_add"), KC_PLATFORM_HOST,
                           KC_XCALL_API_ORIGINAL, (void (*)(void))kt_layout_add, 0);
}

/* Parameters x: f32[8], y: f32[2,4], z: f32[8]; then KT_CALLS steps, each
 * taking the previous one's result. */
static kc_status* kt_layout_program(kc_program** out) {
  kc_program_builder* b = NULL;
  kc_status* st = kc_program_builder_create(KC_SV_LIT("layout"), &b);
  if (st) return st;
  int64_t n = KT_N, nm[2] = {2, 4};
  kc_shape* shapes[3] = {NULL, NULL, NULL};
  st = kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), &n, 1, &shapes[1]);
  if (!st) st = kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), nm, 2, &shapes[2]);
  int32_t params[3];
  for (int p = 0; p < 3 && !st; ++p) {
    st = kc_program_builder_add_parameter(b, p, shapes[kt_param_rank(p)], KC_SV_LIT(""),
                                          &params[p]);
  }
  int32_t prev = params[0];
  int32_t prev_rank = 1;
  for (int k = 0; k < KT_CALLS && !st; ++k) {
    const kc_shape* result = shapes[kt_result_rank(k)];
    if (kt_kind(k) == KT_ADD) {
      int32_t ops[2] = {prev, prev};
      st = kc_program_builder_add_op(b, KC_OP_ADD, shapes[prev_rank], ops, 2, KC_SV_LIT(""),
                                     &prev);
      continue;
    }
    int32_t ops[2] = {prev, params[kt_kind(k) == KT_LEGACY ? 2 : kt_other(k)]};
    kc_attr attrs[3];
    memset(attrs, 0, sizeof attrs);
    attrs[0].name = KC_SV_LIT("k");
    attrs[0].type = KC_ATTR_I64;
    attrs[0].v.i64 = k;
    attrs[1].name = KC_SV_LIT("ranks");
    attrs[1].type = KC_ATTR_I64;
    attrs[1].v.i64 = prev_rank * 100 + kt_param_rank(kt_other(k)) * 10 + kt_result_rank(k);
    attrs[2].name = KC_SV_LIT("scale");
    attrs[2].type = KC_ATTR_F32;
    attrs[2].v.f32 = kt_scale(k);
    kc_attr_dict dict = {3, attrs};
    kc_custom_call_desc d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.operands = ops;
    d.num_operands = 2;
    d.result_shape = result;
    if (kt_kind(k) == KT_LEGACY) {
      d.target = KC_SV_LIT("kt_layout_add");
      d.api_version = KC_XCALL_API_ORIGINAL;
    } else {
      d.target = KC_SV_LIT("kt_layout_fma");
      d.api_version = KC_XCALL_API_TYPED;
      d.attrs = &dict;
    }
    st = kc_program_builder_add_custom_call(b, &d, KC_SV_LIT(""), &prev);
    prev_rank = kt_result_rank(k);
  }
  if (!st) {
    st = kc_program_builder_finish(b, out);
    b = NULL;
  }
  kc_program_builder_destroy(b);
  kc_shape_destroy(shapes[1]);
  kc_shape_destroy(shapes[2]);
  return st;
}

/* What the program computes, in the same float operations. */
static void kt_layout_reference(const float* const in[3], float out[KT_N]) {
  float v[KT_N];
  memcpy(v, in[0], sizeof v);
  for (int k = 0; k < KT_CALLS; ++k) {
    for (int i = 0; i < KT_N; ++i) {
      if (kt_kind(k) == KT_ADD) {
        v[i] = v[i] + v[i];
      } else if (kt_kind(k) == KT_LEGACY) {
        v[i] = v[i] + in[2][i];
      } else {
        v[i] = v[i] + in[kt_other(k)][i] * kt_scale(k) + (float)k;
      }
    }
  }
  memcpy(out, v, sizeof v);
}

/* Input sets: three tensors holding small integers that start at `base`. */
typedef struct kt_inputs {
  kc_tensor* t[3];
  const DLTensor* dl[3];
  float want[KT_N];
} kt_inputs;

static bool kt_inputs_init(kt_inputs* s, int base) {
  const float* data[3];
  int64_t n = KT_N, nm[2] = {2, 4};
  for (int p = 0; p < 3; ++p) {
    s->t[p] = NULL;
    kc_status* st = kc_tensor_create(kt_alloc(), p == 1 ? nm : &n, kt_param_rank(p),
                                     kc_dtype_make(kDLFloat, 32, 1), kc_device_cpu(), &s->t[p]);
    if (st) {
      kc_status_destroy(st);
      return false;
    }
    s->dl[p] = kc_tensor_get_dltensor(s->t[p]);
    float* d = s->dl[p]->data;
    for (int i = 0; i < KT_N; ++i) d[i] = (float)(base + 3 * i + p);
    data[p] = d;
  }
  kt_layout_reference(data, s->want);
  return true;
}

static void kt_inputs_deinit(kt_inputs* s) {
  for (int p = 0; p < 3; ++p) kc_object_release(KC_OBJECT(s->t[p]));
}

/* Runs the program on `in`; false with a message in `why` when it fails or
 * computes something else than the reference. */
static bool kt_layout_run(const kc_executable* exe, const kt_inputs* in, char* why,
                          size_t cap) {
  kc_execute_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.allocator = kt_alloc();
  kc_tensor* out = NULL;
  kc_status* st = kc_executable_execute(exe, in->dl, 3, &o, &out);
  if (st) {
    kc_status_format(st, why, cap);
    kc_status_destroy(st);
    return false;
  }
  const float* got = kc_tensor_get_dltensor(out)->data;
  bool same = !memcmp(got, in->want, sizeof in->want);
  if (!same) snprintf(why, cap, "got %g at 0, expected %g", (double)got[0], (double)in->want[0]);
  kc_object_release(KC_OBJECT(out));
  return same;
}

KC_TEST(program_typed_frames_hold_across_runs_with_moving_inputs) {
  KC_CHECK_OK(kt_layout_register());
  kc_program* p = NULL;
  KC_CHECK_OK(kt_layout_program(&p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  kt_inputs a, b;
  KC_CHECK(kt_inputs_init(&a, 1));
  KC_CHECK(kt_inputs_init(&b, 40));
  KC_CHECK(memcmp(a.want, b.want, sizeof a.want) != 0);
  /* Same inputs twice, then moving every run, then one run's inputs mixed
   * with the other's. */
  const kt_inputs* order[] = {&a, &a, &b, &a, &b, &b, &a};
  char why[512] = "";
  for (size_t r = 0; r < sizeof order / sizeof order[0]; ++r) {
    bool ok = kt_layout_run(exe, order[r], why, sizeof why);
    if (!ok) fprintf(stderr, "run %zu: %s\n", r, why);
    KC_CHECK(ok);
  }
  kt_inputs mixed = a;
  mixed.dl[2] = b.dl[2];
  const float* data[3] = {a.dl[0]->data, a.dl[1]->data, b.dl[2]->data};
  kt_layout_reference(data, mixed.want);
  KC_CHECK(kt_layout_run(exe, &mixed, why, sizeof why));
  KC_CHECK(kt_layout_run(exe, &a, why, sizeof why));
  kt_inputs_deinit(&a);
  kt_inputs_deinit(&b);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

typedef struct kt_layout_thread {
  const kc_executable* exe;
  int base;
  int ok;
  char why[512];
} kt_layout_thread;

static void* kt_layout_thread_main(void* arg) {
  kt_layout_thread* t = arg;
  kt_inputs in[2];
  t->ok = kt_inputs_init(&in[0], t->base) && kt_inputs_init(&in[1], t->base + 7);
  /* Runs pass between threads through the executable's pool, so a run
   * often finds another thread's addresses in its block. */
  for (int r = 0; r < 40 && t->ok; ++r) {
    t->ok = kt_layout_run(t->exe, &in[(r / 3) & 1], t->why, sizeof t->why);
  }
  kt_inputs_deinit(&in[0]);
  kt_inputs_deinit(&in[1]);
  return NULL;
}

KC_TEST(program_typed_frames_hold_across_threads) {
  KC_CHECK_OK(kt_layout_register());
  kc_program* p = NULL;
  KC_CHECK_OK(kt_layout_program(&p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  pthread_t threads[4];
  kt_layout_thread ctx[4];
  for (int i = 0; i < 4; ++i) {
    memset(&ctx[i], 0, sizeof ctx[i]);
    ctx[i].exe = exe;
    ctx[i].base = 100 * i;
    KC_CHECK_INT(pthread_create(&threads[i], NULL, kt_layout_thread_main, &ctx[i]), 0);
  }
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < 4; ++i) {
    if (!ctx[i].ok) fprintf(stderr, "thread %d: %s\n", i, ctx[i].why);
    KC_CHECK_INT(ctx[i].ok, 1);
  }
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}
