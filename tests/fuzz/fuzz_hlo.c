/*
 * fuzz_hlo.c — the HLO text parser, then compilation, then a run.
 *
 * The input is a program's text. What parses is compiled against a small
 * registry of fake targets, one per calling convention (legacy, typed with
 * a fixed signature, typed open, XLA FFI), under the names the seed corpus
 * calls, so that compile's checks (shapes, signatures, attributes,
 * aliasing, the buffer plan) see fuzzed programs too. What compiles, and
 * is small, is run on zero inputs: the built-in instructions compute on
 * whatever the constants hold, and the fake targets check what they are
 * handed (attributes sorted and readable, buffers as large as their
 * shapes) and write zeros to their results.
 */
#include <math.h>

#include "fuzz.h"
#include "kcall/xla_ffi.h"
#include "kt_xla_ffi.h"

/* Whether programs with a while loop are run. A loop's trip count comes
 * from the program's own values, so a mutated bound can run for as long
 * as it likes. The fuzzing build stops a loop after 256 iterations
 * (instr_control.c), but the corpus also runs in every other build,
 * which does not: harnesses whose corpus holds such loops (JAX's scans,
 * kept by earlier fuzzing with any bound) set 0. */
#ifndef KF_RUN_WHILE_LOOPS
#define KF_RUN_WHILE_LOOPS 1
#endif

/* Largest run (inputs, temporaries and outputs) the harness makes: the
 * point is the code, not the memory. */
#define KF_RUN_MAX_BYTES (1u << 20)

/* ---- fake targets ----------------------------------------------------------- */

static void kf_original(void* out, const void** ins) {
  (void)out;
  (void)ins;
}

static void kf_status(void* out, const void** ins, kc_xcall_status* status) {
  (void)out;
  (void)ins;
  (void)status;
}

static void kf_unified(void* out, const void** ins, const char* opaque,
                       size_t opaque_len, kc_xcall_status* status) {
  (void)out;
  (void)ins;
  /* The opaque bytes must be readable to their length. */
  unsigned sum = 0;
  for (size_t i = 0; i < opaque_len; ++i) sum += (unsigned char)opaque[i];
  (void)sum;
  (void)status;
}

static const char kAlwaysFails[] = "always_fails: refused";

static void kf_always_fails(void* out, const void** ins, kc_xcall_status* status) {
  (void)out;
  (void)ins;
  kc_xcall_status_set_failure(status, kAlwaysFails, sizeof kAlwaysFails - 1);
}

static size_t kf_attr_width(int32_t type) {
  switch (type) {
    case KC_ATTR_BOOL: case KC_ATTR_I8: case KC_ATTR_U8: return 1;
    case KC_ATTR_I16: case KC_ATTR_U16: return 2;
    case KC_ATTR_I32: case KC_ATTR_U32: case KC_ATTR_F32: return 4;
    case KC_ATTR_I64: case KC_ATTR_U64: case KC_ATTR_F64: return 8;
    default: return 0;
  }
}

static int kf_sv_compare(kc_string_view a, kc_string_view b) {
  size_t n = a.size < b.size ? a.size : b.size;
  int c = n ? memcmp(a.data, b.data, n) : 0;
  return c ? c : (a.size > b.size) - (a.size < b.size);
}

/* Reads every byte of every attribute; with `sorted`, checks the order
 * the open signature promises (bytewise by name, nested ones too). */
static void kf_walk_attrs(const kc_attr* attrs, size_t count, bool sorted) {
  for (size_t i = 0; i < count; ++i) {
    const kc_attr* a = &attrs[i];
    KF_ASSERT(a->name.size == 0 || a->name.data != NULL);
    if (sorted && i > 0) KF_ASSERT(kf_sv_compare(attrs[i - 1].name, a->name) <= 0);
    volatile unsigned char sink = 0;
    if (a->type == KC_ATTR_STRING) {
      for (size_t k = 0; k < a->v.str.size; ++k) sink ^= (unsigned char)a->v.str.data[k];
    } else if (a->type == KC_ATTR_ARRAY) {
      size_t bytes = a->v.array.count * kf_attr_width(a->elem_type);
      KF_ASSERT(bytes == 0 || a->v.array.data != NULL);
      const unsigned char* p = a->v.array.data;
      for (size_t k = 0; k < bytes; ++k) sink ^= p[k];
    } else if (a->type == KC_ATTR_DICT) {
      kf_walk_attrs(a->v.dict.entries, a->v.dict.count, sorted);
    } else {
      KF_ASSERT(kf_attr_width(a->type) != 0);
    }
    (void)sink;
  }
}

static void kf_zero(DLTensor* t) {
  int64_t n = kc_dltensor_get_numel(t);
  KF_ASSERT(n >= 0);
  size_t bytes = (size_t)n * kc_dtype_get_size(t->dtype);
  if (bytes) {
    KF_ASSERT(t->data != NULL);
    memset(t->data, 0, bytes);
  }
}

/* Typed, fixed or open signature: checks the attributes, zeros the
 * results. frame->user says whether the signature is open. */
static kc_status* kf_typed(kc_xcall_frame* f) {
  bool open = f->user != NULL;
  kf_walk_attrs(f->attrs, (size_t)f->num_attrs, open);
  if (f->stage == KC_XCALL_STAGE_INSTANTIATE) {
    for (int32_t i = 0; i < f->num_results; ++i) KF_ASSERT(f->results[i].data == NULL);
    f->scratch_bytes = 64;
    return NULL;
  }
  KF_ASSERT(f->scratch != NULL);
  memset(f->scratch, 0, 64);
  for (int32_t i = 0; i < f->num_results; ++i) kf_zero(&f->results[i]);
  return NULL;
}

static size_t kf_xla_width(XLA_FFI_DataType t) {
  switch (t) {
    case XLA_FFI_DataType_PRED: case XLA_FFI_DataType_S8: case XLA_FFI_DataType_U8: return 1;
    case XLA_FFI_DataType_S16: case XLA_FFI_DataType_U16: case XLA_FFI_DataType_F16:
    case XLA_FFI_DataType_BF16: return 2;
    case XLA_FFI_DataType_S32: case XLA_FFI_DataType_U32: case XLA_FFI_DataType_F32: return 4;
    case XLA_FFI_DataType_S64: case XLA_FFI_DataType_U64: case XLA_FFI_DataType_F64:
    case XLA_FFI_DataType_C64: return 8;
    case XLA_FFI_DataType_C128: return 16;
    default: return 0;
  }
}

static void kf_walk_xla_attrs(const XLA_FFI_Attrs* attrs) {
  KF_ASSERT(attrs->size >= 0);
  for (int64_t i = 0; i < attrs->size; ++i) {
    const XLA_FFI_ByteSpan* name = attrs->names[i];
    if (i > 0) {
      const XLA_FFI_ByteSpan* prev = attrs->names[i - 1];
      KF_ASSERT(kf_sv_compare((kc_string_view){prev->ptr, prev->len},
                              (kc_string_view){name->ptr, name->len}) <= 0);
    }
    volatile unsigned char sink = 0;
    switch (attrs->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = attrs->attrs[i];
        const unsigned char* p = s->value;
        for (size_t k = 0; k < kf_xla_width(s->dtype); ++k) sink ^= p[k];
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* a = attrs->attrs[i];
        const unsigned char* p = a->data;
        for (size_t k = 0; k < a->size * kf_xla_width(a->dtype); ++k) sink ^= p[k];
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = attrs->attrs[i];
        for (size_t k = 0; k < s->len; ++k) sink ^= (unsigned char)s->ptr[k];
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY:
        kf_walk_xla_attrs(attrs->attrs[i]);
        break;
      default:
        fprintf(stderr, "fuzz_hlo: an XLA FFI attribute of type %d\n", (int)attrs->types[i]);
        abort();
    }
    (void)sink;
  }
}

static XLA_FFI_Error* kf_xla(XLA_FFI_CallFrame* f) {
  kf_walk_xla_attrs(&f->attrs);
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  for (int64_t i = 0; i < f->rets.size; ++i) {
    XLA_FFI_Buffer* b = kt_xla_ret(f, i);
    size_t bytes = (size_t)kt_xla_count(b) * kf_xla_width(b->dtype);
    if (bytes) memset(b->data, 0, bytes);
  }
  return NULL;
}

static void kf_check(kc_status* st) {
  if (st) {
    char text[512];
    kc_status_format(st, text, sizeof text);
    fprintf(stderr, "fuzz_hlo: registering the fake targets: %s\n", text);
    abort();
  }
}

static void kf_register_targets(void) {
  static const struct {
    const char* name;
    kc_xcall_api api;
    void (*fn)(void);
  } kLegacy[] = {
      {"do_custom_call", KC_XCALL_API_ORIGINAL, (void (*)(void))kf_original},
      {"fake.original", KC_XCALL_API_ORIGINAL, (void (*)(void))kf_original},
      {"do_tuple_call", KC_XCALL_API_ORIGINAL, (void (*)(void))kf_original},
      {"kt.effect", KC_XCALL_API_ORIGINAL, (void (*)(void))kf_original},
      {"do_custom_call_status", KC_XCALL_API_STATUS_RETURNING, (void (*)(void))kf_status},
      {"fake.status", KC_XCALL_API_STATUS_RETURNING, (void (*)(void))kf_status},
      {"always_fails", KC_XCALL_API_STATUS_RETURNING, (void (*)(void))kf_always_fails},
      {"do_custom_call_unified", KC_XCALL_API_STATUS_RETURNING_UNIFIED,
       (void (*)(void))kf_unified},
      {"fake.unified", KC_XCALL_API_STATUS_RETURNING_UNIFIED, (void (*)(void))kf_unified},
      {"kt.unified", KC_XCALL_API_STATUS_RETURNING_UNIFIED, (void (*)(void))kf_unified},
  };
  for (size_t i = 0; i < sizeof kLegacy / sizeof kLegacy[0]; ++i) {
    kf_check(kc_xcall_register(kc_sv(kLegacy[i].name), KC_PLATFORM_HOST, kLegacy[i].api,
                               kLegacy[i].fn, 0));
  }

  /* rms_norm as examples/xla declares it; fake.typed with one attribute
   * of each kind. */
  static const kc_xcall_buffer_spec kAnyF32[] = {{{kDLFloat, 32, 1}, -1}};
  static const kc_xcall_attr_spec kEps[] = {{"eps", KC_ATTR_F32, 0}};
  kc_xcall_signature rms = {.struct_size = sizeof rms, .num_args = 1, .args = kAnyF32,
                            .num_results = 1, .results = kAnyF32, .num_attrs = 1,
                            .attrs = kEps};
  kf_check(kc_xcall_register_typed(KC_SV_LIT("rms_norm"), KC_PLATFORM_HOST, &rms,
                                   kf_typed, NULL, NULL, 0));
  kf_check(kc_xcall_register_typed(KC_SV_LIT("kt.rms_norm"), KC_PLATFORM_HOST, &rms,
                                   kf_typed, NULL, NULL, 0));
  static const kc_xcall_buffer_spec kAny[] = {{{0, 0, 0}, -1}, {{0, 0, 0}, -1}};
  static const kc_xcall_attr_spec kKinds[] = {
      {"flag", KC_ATTR_BOOL, 0},   {"count", KC_ATTR_I64, 0},
      {"scale", KC_ATTR_F32, 0},   {"name", KC_ATTR_STRING, 0},
      {"values", KC_ATTR_ARRAY, KC_ATTR_F64}, {"options", KC_ATTR_DICT, 0}};
  kc_xcall_signature kinds = {.struct_size = sizeof kinds, .num_args = 2, .args = kAny,
                              .num_results = 1, .results = kAny, .num_attrs = 6,
                              .attrs = kKinds};
  kf_check(kc_xcall_register_typed(KC_SV_LIT("fake.typed"), KC_PLATFORM_HOST, &kinds,
                                   kf_typed, NULL, NULL, 0));
  kc_xcall_signature open = {.struct_size = sizeof open, .flags = KC_XCALL_SIG_OPEN};
  static int kOpen = 1; /* frame->user: the signature is open */
  /* The typed targets of the tests and examples the seeds come from. */
  static const char* const kOpenNames[] = {
      "fake.open", "kt.add_one", "kt.context", "kt.dense", "kt.parallel",
      "kt.stages", "kt.tuples", "kt.typed", "kt.types", "kt_xla.double",
      "mylib.axpy", "scale"};
  for (size_t i = 0; i < sizeof kOpenNames / sizeof kOpenNames[0]; ++i) {
    kf_check(kc_xcall_register_typed(kc_sv(kOpenNames[i]), KC_PLATFORM_HOST, &open,
                                     kf_typed, &kOpen, NULL, 0));
  }

  /* The XLA FFI targets of tests/fixtures. */
  static const char* const kXla[] = {
      "add_one", "context", "count", "counter", "KtFail", "fake.xla",
      "ffi_test.add_one", "ffi_test.affine", "ffi_test.attrs_echo",
      "ffi_test.fail_if_negative", "ffi_test.pool_square", "ffi_test.row_sum",
      "ffi_test.scale_shift"};
  for (size_t i = 0; i < sizeof kXla / sizeof kXla[0]; ++i) {
    kf_check(kc_xcall_register_xla_ffi_handler(kc_sv(kXla[i]), KC_PLATFORM_HOST,
                                               (kc_xla_ffi_handler_fn)(void*)kf_xla,
                                               KC_XLA_FFI_NO_METADATA));
  }
}

/* ---- the harness ------------------------------------------------------------ */

/* Reads what a parsed program reports about itself. */
static void kf_inspect_program(const kc_program* p) {
  KF_ASSERT(kc_program_get_name(p) != NULL);
  size_t params = kc_program_get_parameter_count(p);
  for (size_t i = 0; i < params; ++i) {
    const kc_shape* s = kc_program_get_parameter_shape(p, i);
    KF_ASSERT(s != NULL && kc_program_get_parameter_name(p, i) != NULL);
    char text[64];
    size_t n = kc_shape_format(s, text, sizeof text);
    KF_ASSERT(n > 0);
  }
  KF_ASSERT(kc_program_get_parameter_shape(p, params) == NULL);
  KF_ASSERT(kc_program_get_result_shape(p) != NULL);
}

/* Runs `exe` on zero inputs when it is small enough; checks what comes
 * back against the executable's own account of it. */
static void kf_run(const kc_executable* exe) {
  kc_executable_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  KF_ASSERT(info.peak_bytes == info.temp_bytes + info.output_bytes);
  KF_ASSERT(info.temp_bytes <= info.temp_bytes_unshared);
  KF_ASSERT(info.num_live_instructions <= info.num_instructions);

  char plan[256];
  kc_executable_format_plan(exe, plan, sizeof plan);
  for (size_t i = 0; i < info.num_live_instructions; ++i) {
    KF_ASSERT(kc_executable_get_instruction_name(exe, i) != NULL);
  }
  KF_ASSERT(kc_executable_get_instruction_name(exe, info.num_live_instructions) == NULL);

  size_t input_bytes = 0;
  for (size_t i = 0; i < info.num_inputs; ++i) {
    const kc_shape* s = kc_executable_get_input_shape(exe, i);
    KF_ASSERT(s != NULL && !kc_shape_is_tuple(s));
    input_bytes += kc_shape_get_byte_size(s);
  }
  if (info.peak_bytes > KF_RUN_MAX_BYTES || input_bytes > KF_RUN_MAX_BYTES ||
      info.num_inputs > 256 || info.num_outputs > 256) {
    return;
  }
  kc_tensor* inputs[256];
  const DLTensor* views[256];
  size_t made = 0;
  kc_status* st = NULL;
  for (; made < info.num_inputs && !st; ++made) {
    const kc_shape* s = kc_executable_get_input_shape(exe, made);
    st = kc_tensor_create(NULL, kc_shape_get_dims(s), kc_shape_get_rank(s),
                          kc_shape_get_dtype(s), kc_device_cpu(), &inputs[made]);
    if (st) break;
    views[made] = kc_tensor_get_dltensor(inputs[made]);
    size_t bytes = kc_shape_get_byte_size(s);
    if (bytes) memset(views[made]->data, 0, bytes);
  }
  if (!kf_refused(st)) {
    kc_tensor* outputs[256];
    uint64_t ns[64];
    kc_execute_options opts = {.struct_size = sizeof opts,
                               .instruction_ns = info.num_live_instructions <= 64 ? ns : NULL};
    st = kc_executable_execute(exe, views, info.num_inputs, &opts, outputs);
    /* A legacy target's failure is INTERNAL, as in XLA; only
     * always_fails fails here. */
    if (st && kc_status_get_code(st) == KC_INTERNAL &&
        strstr(kc_status_get_message(st), kAlwaysFails) != NULL) {
      kc_status_destroy(st);
      st = kc_status_create(KC_ABORTED, "%s", kAlwaysFails);
    }
    if (!kf_refused(st)) {
      for (size_t i = 0; i < info.num_outputs; ++i) {
        const kc_shape* want = kc_executable_get_output_shape(exe, i);
        const DLTensor* got = kc_tensor_get_dltensor(outputs[i]);
        KF_ASSERT(kc_dtype_equal(got->dtype, kc_shape_get_dtype(want)));
        KF_ASSERT(got->ndim == kc_shape_get_rank(want));
        for (int32_t d = 0; d < got->ndim; ++d) {
          KF_ASSERT(got->shape[d] == kc_shape_get_dims(want)[d]);
        }
        /* Every byte of an output is readable. */
        volatile unsigned char sink = 0;
        const unsigned char* p = got->data;
        for (size_t k = 0; k < kc_shape_get_byte_size(want); ++k) sink ^= p[k];
        (void)sink;
        kc_object_release(KC_OBJECT(outputs[i]));
      }
    }
  }
  for (size_t i = 0; i < made && i < info.num_inputs; ++i) {
    kc_object_release(KC_OBJECT(inputs[i]));
  }
}

/* Whether `word` occurs in `text`. */
static bool kf_contains(kc_string_view text, const char* word) {
  size_t n = strlen(word);
  for (size_t i = 0; i + n <= text.size; ++i) {
    if (memcmp(text.data + i, word, n) == 0) return true;
  }
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool registered = false;
  if (!registered) {
    kf_register_targets();
    registered = true;
  }
  kc_program* program = NULL;
  kc_string_view text = {(const char*)data, size};
  if (kf_refused(kc_program_parse(text, &program))) return 0;
  kf_inspect_program(program);
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(program, NULL, &exe);
  /* An executable keeps what it needs of its program. */
  kc_program_destroy(program);
  if (kf_refused(st)) return 0;
  if (KF_RUN_WHILE_LOOPS || !kf_contains(text, "while")) kf_run(exe);
  kc_executable_destroy(exe);
  return 0;
}
