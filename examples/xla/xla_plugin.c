/*
 * xla_plugin.c — the custom calls of XLA's custom-call guide, as a kcall
 * plugin, for the programs beside it (*.hlo) and `kcall run`.
 *
 *   do_custom_call          A[i] = B[i % 128] + C[i], ORIGINAL convention
 *   do_custom_call_status   the same, STATUS_RETURNING
 *   do_custom_call_unified  the same, STATUS_RETURNING_UNIFIED: the length
 *                           comes in the opaque bytes (backend_config)
 *   do_tuple_call           a tuple operand and a tuple result whose second
 *                           element is scratch memory
 *   always_fails            fails through its status, as a target does when
 *                           its input is bad
 *   rms_norm                a typed handler with an f32 attribute `eps`
 *
 * Like every kcall plugin it includes only <kcall/abi.h> and reaches the
 * library through the host table.
 *
 *   kcall run seed_add.hlo --plugin libxla_plugin.so --generate-inputs
 */
#include <kcall/abi.h>

/* The legacy conventions hand a target no user pointer, so the one
 * thing they need from the host (reporting a failure) is kept here: set
 * once by init, before any target can run, and only read after. */
static const kc_host_api* g_host;

/* ---- messages without libc -------------------------------------------------- */

typedef struct message {
  char text[256];
  size_t size;
} message;

static void message_add(message* m, const char* s, size_t n) {
  for (size_t i = 0; i < n && m->size < sizeof m->text; ++i) {
    m->text[m->size++] = s[i];
  }
}

static void message_add_str(message* m, const char* s) {
  message_add(m, s, kc_sv(s).size);
}

static void fail(kc_xcall_status* status, const message* m) {
  g_host->xcall_status_set_failure(status, m->text, m->size);
}

/* ---- A[i] = B[i % 128] + C[i] ----------------------------------------------- */

/* B's length, and the length the ORIGINAL and STATUS_RETURNING versions
 * assume, as the guide hardcodes them. */
enum { SEED_B = 128, SEED_N = 2048 };

static void seed_add(float* a, const float* b, const float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i % SEED_B] + c[i];
}

static void do_custom_call(void* out, const void** in) {
  seed_add(out, in[0], in[1], SEED_N);
}

/* It cannot fail, but a target written for this convention can (see
 * always_fails); a success needs no call on `status`. */
static void do_custom_call_status(void* out, const void** in,
                                  kc_xcall_status* status) {
  (void)status;
  seed_add(out, in[0], in[1], SEED_N);
}

/* The opaque bytes are the decimal element count ("2048"): the same
 * function serves any length. The count cannot be checked against the
 * buffers (the convention does not pass their sizes), only its form. */
static void do_custom_call_unified(void* out, const void** in,
                                   const char* opaque, size_t opaque_len,
                                   kc_xcall_status* status) {
  int64_t n = 0;
  bool ok = opaque_len > 0 && opaque_len <= 12;
  for (size_t i = 0; ok && i < opaque_len; ++i) {
    ok = opaque[i] >= '0' && opaque[i] <= '9';
    if (ok) n = n * 10 + (opaque[i] - '0');
  }
  if (!ok || n < SEED_B) {
    message m = {{0}, 0};
    message_add_str(&m, "do_custom_call_unified: backend_config must be the "
                        "element count (at least 128), for example \"2048\"; "
                        "got \"");
    message_add(&m, opaque, opaque_len < 32 ? opaque_len : 32);
    message_add_str(&m, "\"");
    fail(status, &m);
    return;
  }
  seed_add(out, in[0], in[1], n);
}

/* ---- tuples ----------------------------------------------------------------- */

/* Operand (f32[32], (f32[64], f32[128]), f32[256]) arrives as nested
 * pointer tables; the result (f32[512], f32[1024]) as a table whose leaves
 * the runtime allocated. The program reads only result 0, so result 1 is
 * this call's scratch memory:
 *   scratch[i]       = a[i % 32] + b[i % 64]
 *   scratch[512 + i] = c[i % 128] + d[i % 256]
 *   sum[i]           = scratch[i] + scratch[512 + i]      (i < 512) */
static void do_tuple_call(void* out, const void** in) {
  const void* const* p0 = in[0];
  const void* const* inner = p0[1];
  const float* a = p0[0];
  const float* b = inner[0];
  const float* c = inner[1];
  const float* d = p0[2];
  void* const* result = out;
  float* sum = result[0];
  float* scratch = result[1];
  for (int i = 0; i < 512; ++i) {
    scratch[i] = a[i % 32] + b[i % 64];
    scratch[512 + i] = c[i % 128] + d[i % 256];
  }
  for (int i = 0; i < 512; ++i) sum[i] = scratch[i] + scratch[512 + i];
}

/* ---- failure ---------------------------------------------------------------- */

static void always_fails(void* out, const void** in, kc_xcall_status* status) {
  (void)out;
  (void)in;
  message m = {{0}, 0};
  message_add_str(&m, "always_fails: this target refuses every input, to "
                      "show how a failed custom call is reported");
  fail(status, &m);
}

/* ---- rms_norm: a typed handler ---------------------------------------------- */
/*
 * y[..., j] = x[..., j] / sqrt(mean_k(x[..., k]^2) + eps), over the last
 * dimension. Its signature (one f32 array of any rank in, one out, an f32
 * attribute eps) is checked when a program is compiled; what a signature
 * cannot say (rank at least 1, the same dims in and out, eps >= 0) is
 * checked once at INSTANTIATE, which also works out the row length and
 * keeps it, with eps, as the instance's state. EXECUTE then only loops.
 */

typedef struct rms_state {
  const kc_allocator* alloc; /* what the state came from, to free it */
  int64_t rows;
  int64_t cols;
  float eps;
} rms_state;

static void rms_state_free(void* state) {
  rms_state* s = state;
  s->alloc->fn(s->alloc->self, s, sizeof *s, 0, 0);
}

static kc_status* rms_norm_instantiate(const kc_host_api* host,
                                       kc_xcall_frame* frame) {
  const DLTensor* x = &frame->args[0];
  const DLTensor* y = &frame->results[0];
  if (x->ndim < 1) {
    return host->status_create(KC_INVALID_ARGUMENT,
                               "rms_norm: the argument needs at least one "
                               "dimension, got a scalar");
  }
  bool same = y->ndim == x->ndim;
  for (int32_t i = 0; same && i < x->ndim; ++i) {
    same = x->shape[i] == y->shape[i];
  }
  if (!same) {
    return host->status_create(KC_INVALID_ARGUMENT,
                               "rms_norm: the result must have the "
                               "argument's dimensions");
  }
  float eps = frame->attrs[0].v.f32;
  if (!(eps >= 0.0f && eps < 1e30f)) {
    return host->status_create(KC_INVALID_ARGUMENT,
                               "rms_norm: eps must be finite and >= 0, got %g",
                               (double)eps);
  }
  const kc_allocator* alloc = host->system_allocator;
  rms_state* s = alloc->fn(alloc->self, NULL, 0, sizeof *s, 0);
  if (!s) return host->status_create(KC_RESOURCE_EXHAUSTED, "rms_norm: no memory");
  s->alloc = alloc;
  s->cols = x->shape[x->ndim - 1];
  s->rows = 1;
  for (int32_t i = 0; i + 1 < x->ndim; ++i) s->rows *= x->shape[i];
  s->eps = eps;
  frame->state = s;
  frame->state_deleter = rms_state_free;
  return NULL;
}

static kc_status* rms_norm(kc_xcall_frame* frame) {
  const kc_host_api* host = frame->user;
  if (frame->stage == KC_XCALL_STAGE_INSTANTIATE) {
    return rms_norm_instantiate(host, frame);
  }
  const rms_state* s = frame->state;
  const float* x = (const float*)((const char*)frame->args[0].data +
                                  frame->args[0].byte_offset);
  float* y = (float*)((char*)frame->results[0].data +
                      frame->results[0].byte_offset);
  for (int64_t r = 0; r < s->rows; ++r) {
    const float* xr = x + r * s->cols;
    float* yr = y + r * s->cols;
    double sum = 0.0;
    for (int64_t j = 0; j < s->cols; ++j) sum += (double)xr[j] * xr[j];
    /* __builtin_sqrt needs no header; where the compiler does not inline
     * it, it calls libm's sqrt, which the plugin links. */
    double inv = 1.0 / __builtin_sqrt(sum / (double)s->cols + s->eps);
    for (int64_t j = 0; j < s->cols; ++j) yr[j] = (float)(xr[j] * inv);
  }
  return NULL;
}

static const kc_xcall_buffer_spec kRmsBuffer[] = {{{kDLFloat, 32, 1}, -1}};
static const kc_xcall_attr_spec kRmsAttrs[] = {{"eps", KC_ATTR_F32, 0}};
static const kc_xcall_signature kRmsSignature = {
    .struct_size = sizeof(kc_xcall_signature),
    .num_args = 1, .args = kRmsBuffer,
    .num_results = 1, .results = kRmsBuffer,
    .num_attrs = 1, .attrs = kRmsAttrs};

/* ---- registration ----------------------------------------------------------- */

typedef struct legacy_target {
  const char* name;
  kc_xcall_api api;
  void (*fn)(void);
} legacy_target;

static const legacy_target kTargets[] = {
    {"do_custom_call", KC_XCALL_API_ORIGINAL, (void (*)(void))do_custom_call},
    {"do_custom_call_status", KC_XCALL_API_STATUS_RETURNING,
     (void (*)(void))do_custom_call_status},
    {"do_custom_call_unified", KC_XCALL_API_STATUS_RETURNING_UNIFIED,
     (void (*)(void))do_custom_call_unified},
    {"do_tuple_call", KC_XCALL_API_ORIGINAL, (void (*)(void))do_tuple_call},
    {"always_fails", KC_XCALL_API_STATUS_RETURNING,
     (void (*)(void))always_fails},
};

/* A failure part way leaves nothing registered: the host publishes an
 * init's registrations only when it succeeds. */
static kc_status* xla_init(const kc_host_api* host) {
  g_host = host;
  for (size_t i = 0; i < sizeof kTargets / sizeof kTargets[0]; ++i) {
    kc_status* st = host->xcall_register(kc_sv(kTargets[i].name),
                                         KC_PLATFORM_HOST, kTargets[i].api,
                                         kTargets[i].fn, 0);
    if (st) return st;
  }
  return host->xcall_register_typed(KC_SV_LIT("rms_norm"), KC_PLATFORM_HOST,
                                    &kRmsSignature, rms_norm, (void*)host,
                                    NULL, 0);
}

/* The custom-call entries of the host table come with this feature. */
static const char* const kRequired[] = {"custom_calls", NULL};

static const kc_plugin_info kInfo = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "xla_examples",
    .version = "1.0.0",
    .required_features = kRequired,
    .init = xla_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kInfo;
}
