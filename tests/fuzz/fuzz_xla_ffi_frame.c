/*
 * fuzz_xla_ffi_frame.c — XLA FFI call frames as the adapter decodes them
 * (src/xcall/xla_ffi_adapter.c and xla_ffi_adapter_attrs.c): what XLA
 * hands a kcall target through kc_xla_ffi_adapter_create.
 *
 * The input describes one call frame, byte by byte (a missing byte reads
 * as 0):
 *
 *   mode       bits 0-1: the target (open or declared signature, with or
 *              without an INSTANTIATE stage); bit 2: run XLA's instantiate
 *              stage first; bit 3: execute twice; bit 4: a call frame
 *              smaller than XLA's; bit 5: no execution context
 *   nargs      % 5, then each operand; nrets % 4, then each result:
 *                dtype (any byte: XLA's element types and others), rank
 *                % 4, each dim % 6, the length of its data % 65 and the
 *                data
 *   attributes count (bits 0-5) % 6 (bit 6: the arrays are NULL, bit 7: the size is
 *              negative), then each: kind % 6 (1..4 are XLA's; 0 and 5
 *              are not), a name (a byte below 200 picks a declared name,
 *              else up to 5 raw bytes), and its value: a scalar's dtype
 *              and 8 bytes, an array's dtype, size % 5 and 8 bytes an
 *              element, a string's length % 8 and bytes, a dictionary's
 *              entries (nested up to 3 deep)
 *
 * The frame is handed to the adapter with kcall's own XLA API table and an
 * execution context that keeps state, as XLA would. What must hold: the
 * adapter answers every frame, with success or an error whose message
 * says something; a target it calls gets exactly the frame's buffers
 * (dtype, rank, dims; every byte readable or writable) and, with an open
 * signature, exactly the frame's attributes in the frame's order, values
 * equal; a declared signature gets only what it declared. Every input
 * ends with the site state deleted and nothing leaked.
 */
#include "fuzz.h"
#include "xcall/xla_ffi_internal.h"

#define KF_MAX_BLOCKS 4096
#define KF_MAX_DEPTH 3

/* ---- the input and what the frame is made of ------------------------------- */

typedef struct kf_in {
  const uint8_t* p;
  size_t n;
} kf_in;

static uint8_t kf_byte(kf_in* in) {
  if (!in->n) return 0;
  --in->n;
  return *in->p++;
}

static void kf_read(kf_in* in, void* out, size_t size) {
  memset(out, 0, size);
  size_t k = size < in->n ? size : in->n;
  memcpy(out, in->p, k);
  in->p += k;
  in->n -= k;
}

/* Every block the frame is made of, freed after each input. */
static void* kf_blocks[KF_MAX_BLOCKS];
static size_t kf_num_blocks;

static void* kf_alloc(size_t size) {
  KF_ASSERT(kf_num_blocks < KF_MAX_BLOCKS);
  void* p = calloc(1, size ? size : 1);
  KF_ASSERT(p != NULL);
  kf_blocks[kf_num_blocks++] = p;
  return p;
}

static void kf_free_blocks(void) {
  for (size_t i = 0; i < kf_num_blocks; ++i) free(kf_blocks[i]);
  kf_num_blocks = 0;
}

/* ---- the targets ------------------------------------------------------------ */

/* The frame being run, for the targets to compare with. */
static const XLA_FFI_CallFrame* kf_frame;

/* The bytes of `n` elements of `dtype` (sub-byte types rounded up). */
static size_t kf_bytes_of(DLDataType dtype, int64_t n) {
  return (size_t)n * (((size_t)dtype.bits * dtype.lanes + 7) / 8);
}

static int64_t kf_numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

/* A buffer the target got is the frame's buffer `b`. */
static void kf_check_buffer(const DLTensor* t, const XLA_FFI_Buffer* b, bool write) {
  DLDataType want;
  KF_ASSERT(kc__xla_dtype_to_dl(b->dtype, &want));
  KF_ASSERT(kc_dtype_equal(t->dtype, want));
  KF_ASSERT(t->ndim == b->rank && t->data == b->data);
  for (int32_t d = 0; d < t->ndim; ++d) KF_ASSERT(t->shape[d] == b->dims[d]);
  size_t size = kf_bytes_of(t->dtype, kf_numel(t));
  volatile unsigned char sink = 0;
  unsigned char* p = t->data;
  for (size_t i = 0; i < size; ++i) {
    if (write) p[i] = (unsigned char)i;
    else sink ^= p[i];
  }
  (void)sink;
}

static bool kf_name_is(kc_string_view name, const XLA_FFI_ByteSpan* s) {
  return name.size == s->len && (!s->len || memcmp(name.data, s->ptr, s->len) == 0);
}

/* A decoded attribute is XLA's attribute (type, value). */
static void kf_check_attr(const kc_attr* a, XLA_FFI_AttrType type, const void* value) {
  switch (type) {
    case XLA_FFI_AttrType_SCALAR: {
      const XLA_FFI_Scalar* s = value;
      switch (a->type) {
        case KC_ATTR_BOOL: KF_ASSERT(a->v.b == (*(const uint8_t*)s->value != 0)); break;
        case KC_ATTR_I8: KF_ASSERT(a->v.i64 == *(const int8_t*)s->value); break;
        case KC_ATTR_I16: KF_ASSERT(a->v.i64 == *(const int16_t*)s->value); break;
        case KC_ATTR_I32: KF_ASSERT(a->v.i64 == *(const int32_t*)s->value); break;
        case KC_ATTR_I64: KF_ASSERT(a->v.i64 == *(const int64_t*)s->value); break;
        case KC_ATTR_U8: KF_ASSERT(a->v.u64 == *(const uint8_t*)s->value); break;
        case KC_ATTR_U16: KF_ASSERT(a->v.u64 == *(const uint16_t*)s->value); break;
        case KC_ATTR_U32: KF_ASSERT(a->v.u64 == *(const uint32_t*)s->value); break;
        case KC_ATTR_U64: KF_ASSERT(a->v.u64 == *(const uint64_t*)s->value); break;
        case KC_ATTR_F32: KF_ASSERT(!memcmp(&a->v.f32, s->value, 4)); break;
        case KC_ATTR_F64: KF_ASSERT(!memcmp(&a->v.f64, s->value, 8)); break;
        default: KF_ASSERT(0 && "a scalar of another type");
      }
      break;
    }
    case XLA_FFI_AttrType_ARRAY: {
      const XLA_FFI_Array* arr = value;
      KF_ASSERT(a->type == KC_ATTR_ARRAY && a->v.array.count == arr->size);
      size_t width = 0;
      switch (a->elem_type) {
        case KC_ATTR_BOOL: case KC_ATTR_I8: case KC_ATTR_U8: width = 1; break;
        case KC_ATTR_I16: case KC_ATTR_U16: width = 2; break;
        case KC_ATTR_I32: case KC_ATTR_U32: case KC_ATTR_F32: width = 4; break;
        default: width = 8;
      }
      KF_ASSERT(!arr->size || !memcmp(a->v.array.data, arr->data, arr->size * width));
      break;
    }
    case XLA_FFI_AttrType_STRING: {
      const XLA_FFI_ByteSpan* s = value;
      KF_ASSERT(a->type == KC_ATTR_STRING && kf_name_is(a->v.str, s));
      break;
    }
    case XLA_FFI_AttrType_DICTIONARY: {
      const XLA_FFI_Attrs* d = value;
      KF_ASSERT(a->type == KC_ATTR_DICT && (int64_t)a->v.dict.count == d->size);
      for (int64_t i = 0; i < d->size; ++i) {
        KF_ASSERT(kf_name_is(a->v.dict.entries[i].name, d->names[i]));
        kf_check_attr(&a->v.dict.entries[i], d->types[i], d->attrs[i]);
      }
      break;
    }
    default: KF_ASSERT(0 && "an attribute of a kind XLA has not");
  }
}

static void kf_state_delete(void* p) { free(p); }

/* Every target: its buffers and attributes are the frame's. */
static kc_status* kf_target(kc_xcall_frame* f) {
  const XLA_FFI_CallFrame* cf = kf_frame;
  KF_ASSERT(cf != NULL);
  KF_ASSERT(f->num_args == cf->args.size && f->num_results == cf->rets.size);
  bool instantiate = f->stage == KC_XCALL_STAGE_INSTANTIATE;
  for (int32_t i = 0; i < f->num_args; ++i) {
    if (instantiate) KF_ASSERT(f->args[i].data == NULL);
    else kf_check_buffer(&f->args[i], cf->args.args[i], false);
  }
  for (int32_t i = 0; i < f->num_results; ++i) {
    if (instantiate) KF_ASSERT(f->results[i].data == NULL);
    else kf_check_buffer(&f->results[i], cf->rets.rets[i], true);
  }
  const char* kind = f->user;
  if (kind[0] == 'o') { /* open: all of XLA's attributes, in its order */
    KF_ASSERT(f->num_attrs == cf->attrs.size);
    for (int32_t i = 0; i < f->num_attrs; ++i) {
      KF_ASSERT(kf_name_is(f->attrs[i].name, cf->attrs.names[i]));
      kf_check_attr(&f->attrs[i], cf->attrs.types[i], cf->attrs.attrs[i]);
    }
  } else { /* declared: n (i64), x (f64), label (string) */
    KF_ASSERT(f->num_attrs == 3);
    KF_ASSERT(f->attrs[0].type == KC_ATTR_I64 && f->attrs[1].type == KC_ATTR_F64 &&
              f->attrs[2].type == KC_ATTR_STRING);
  }
  if (instantiate) {
    f->state = malloc(8);
    KF_ASSERT(f->state != NULL);
    f->state_deleter = kf_state_delete;
    f->scratch_bytes = 64;
  } else if (f->scratch_bytes) {
    KF_ASSERT(f->scratch != NULL && ((uintptr_t)f->scratch & 63) == 0);
    memset(f->scratch, 1, f->scratch_bytes);
  }
  return NULL;
}

/* The four targets and their adapters: [open, declared] x [with
 * INSTANTIATE, without]. */
static XLA_FFI_Handler* kf_handlers[4];

static void kf_setup(void) {
  static bool done = false;
  if (done) return;
  done = true;
  static const kc_xcall_attr_spec declared[] = {
      {"n", KC_ATTR_I64, 0}, {"x", KC_ATTR_F64, 0}, {"label", KC_ATTR_STRING, 0}};
  static const kc_xcall_buffer_spec any[4] = {{{0, 0, 0}, -1}, {{0, 0, 0}, -1},
                                              {{0, 0, 0}, -1}, {{0, 0, 0}, -1}};
  static const char* const names[4] = {"kf.open", "kf.open_stateless", "kf.declared",
                                       "kf.declared_stateless"};
  for (int k = 0; k < 4; ++k) {
    bool open = k < 2, stateless = k & 1;
    kc_xcall_signature sig = {.struct_size = sizeof sig,
                              .num_args = open ? 0 : 2,
                              .args = any,
                              .num_results = open ? 0 : 1,
                              .results = any,
                              .num_attrs = open ? 0 : 3,
                              .attrs = declared,
                              .flags = (open ? KC_XCALL_SIG_OPEN : 0) |
                                       (stateless ? KC_XCALL_SIG_NO_INSTANTIATE : 0)};
    KF_ASSERT(!kf_refused(kc_xcall_register_typed(kc_sv(names[k]), KC_PLATFORM_HOST, &sig,
                                                  kf_target, (void*)(open ? "o" : "d"),
                                                  NULL, 0)));
    kc_xla_ffi_handler_fn fn = NULL;
    KF_ASSERT(!kf_refused(kc_xla_ffi_adapter_create(kc_sv(names[k]), KC_PLATFORM_HOST, &fn)));
    kf_handlers[k] = (XLA_FFI_Handler*)(void (*)(void))fn;
  }
}

/* ---- the frame ----------------------------------------------------------------- */

static void kf_buffers(kf_in* in, int64_t n, void*** out_ptrs, int32_t** out_types) {
  void** ptrs = kf_alloc((size_t)(n + 1) * sizeof *ptrs);
  int32_t* types = kf_alloc((size_t)(n + 1) * sizeof *types);
  for (int64_t i = 0; i < n; ++i) {
    XLA_FFI_Buffer* b = kf_alloc(sizeof *b);
    b->struct_size = KC__XLA_BUFFER_SIZE;
    b->dtype = (XLA_FFI_DataType)kf_byte(in);
    b->rank = kf_byte(in) % 4;
    b->dims = kf_alloc((size_t)(b->rank + 1) * sizeof *b->dims);
    int64_t numel = 1;
    for (int64_t d = 0; d < b->rank; ++d) numel *= (b->dims[d] = kf_byte(in) % 6);
    /* Room for the widest element type (c128); its first bytes given. */
    size_t room = (size_t)numel * 16;
    b->data = kf_alloc(room);
    size_t given = kf_byte(in) % 65;
    kf_read(in, b->data, given < room ? given : room);
    ptrs[i] = b;
    types[i] = XLA_FFI_ArgType_BUFFER;
  }
  *out_ptrs = ptrs;
  *out_types = types;
}

static const char* const kf_names[] = {"n", "x", "label", "a", "b", "opts", ""};

static void kf_attrs(kf_in* in, int depth, XLA_FFI_Attrs* out);

static void* kf_value(kf_in* in, int depth, XLA_FFI_AttrType* type) {
  /* Too deep for another dictionary: a string instead. */
  if (*type == XLA_FFI_AttrType_DICTIONARY && depth >= KF_MAX_DEPTH) {
    *type = XLA_FFI_AttrType_STRING;
  }
  switch (*type) {
    case XLA_FFI_AttrType_SCALAR: {
      XLA_FFI_Scalar* s = kf_alloc(sizeof *s);
      s->dtype = (XLA_FFI_DataType)kf_byte(in);
      s->value = kf_alloc(16);
      kf_read(in, s->value, 8);
      return s;
    }
    case XLA_FFI_AttrType_ARRAY: {
      XLA_FFI_Array* a = kf_alloc(sizeof *a);
      a->dtype = (XLA_FFI_DataType)kf_byte(in);
      a->size = kf_byte(in) % 5;
      a->data = kf_alloc(a->size * 8);
      kf_read(in, a->data, a->size * 8);
      return a;
    }
    case XLA_FFI_AttrType_DICTIONARY: {
      XLA_FFI_Attrs* d = kf_alloc(sizeof *d);
      kf_attrs(in, depth + 1, d);
      return d;
    }
    case XLA_FFI_AttrType_STRING: {
      XLA_FFI_ByteSpan* s = kf_alloc(sizeof *s);
      s->len = kf_byte(in) % 8;
      char* text = kf_alloc(s->len);
      kf_read(in, text, s->len);
      s->ptr = text;
      return s;
    }
    default: {
      /* A kind XLA has not: something readable behind it all the same. */
      void* p = kf_alloc(32);
      kf_read(in, p, 8);
      return p;
    }
  }
}

static void kf_attrs(kf_in* in, int depth, XLA_FFI_Attrs* out) {
  uint8_t head = kf_byte(in);
  int64_t n = (head & 0x3f) % 6;
  memset(out, 0, sizeof *out);
  out->struct_size = KC__XLA_ATTRS_SIZE;
  out->size = n;
  out->types = kf_alloc((size_t)(n + 1) * sizeof *out->types);
  out->names = kf_alloc((size_t)(n + 1) * sizeof *out->names);
  out->attrs = kf_alloc((size_t)(n + 1) * sizeof *out->attrs);
  for (int64_t i = 0; i < n; ++i) {
    XLA_FFI_ByteSpan* name = kf_alloc(sizeof *name);
    uint8_t pick = kf_byte(in);
    if (pick < 200) {
      const char* s = kf_names[pick % (sizeof kf_names / sizeof kf_names[0])];
      name->ptr = s;
      name->len = strlen(s);
    } else {
      name->len = pick % 6;
      char* text = kf_alloc(name->len);
      kf_read(in, text, name->len);
      name->ptr = text;
    }
    XLA_FFI_AttrType type = (XLA_FFI_AttrType)(kf_byte(in) % 6);
    out->attrs[i] = kf_value(in, depth, &type);
    out->types[i] = type;
    out->names[i] = name;
  }
  /* Frames XLA never makes: the adapter must refuse them, not read them. */
  if (n && (head & 0x40)) {
    out->types = NULL;
    out->names = NULL;
    out->attrs = NULL;
  }
  if (head & 0x80) out->size = -1 - (int64_t)n;
}

/* The message of an error made by kcall's table, which must say
 * something; the error is destroyed. */
static void kf_take_error(const XLA_FFI_Api* api, XLA_FFI_Error* e) {
  if (!e) return;
  XLA_FFI_Error_GetMessage_Args m = {
      .struct_size = KC__XLA_SIZE(XLA_FFI_Error_GetMessage_Args, message), .error = e};
  api->XLA_FFI_Error_GetMessage(&m);
  KF_ASSERT(m.message != NULL && m.message[0] != '\0');
  XLA_FFI_Error_Destroy_Args d = {
      .struct_size = KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error), .error = e};
  api->XLA_FFI_Error_Destroy(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kf_setup();
  kf_in in = {data, size};
  uint8_t mode = kf_byte(&in);
  XLA_FFI_Handler* handler = kf_handlers[mode & 3];
  const XLA_FFI_Api* api = kc_xla_ffi_get_api();

  XLA_FFI_CallFrame* cf = kf_alloc(sizeof *cf);
  cf->struct_size = (mode & 0x10) ? KC__XLA_CALL_FRAME_SIZE - 8 : KC__XLA_CALL_FRAME_SIZE;
  cf->api = api;
  kc__xla_instance* inst = kf_alloc(sizeof *inst);
  inst->api_major = KC_XLA_FFI_API_MAJOR;
  inst->api_minor = KC_XLA_FFI_API_MINOR;
  XLA_FFI_ExecutionContext* ctx = kf_alloc(sizeof *ctx);
  ctx->instance = inst;
  cf->ctx = (mode & 0x20) ? NULL : ctx;
  int64_t nargs = kf_byte(&in) % 5;
  int32_t* arg_types = NULL;
  kf_buffers(&in, nargs, &cf->args.args, &arg_types);
  cf->args = (XLA_FFI_Args){KC__XLA_ARGS_SIZE, NULL, nargs, (XLA_FFI_ArgType*)arg_types,
                            cf->args.args};
  int64_t nrets = kf_byte(&in) % 4;
  int32_t* ret_types = NULL;
  void** rets = NULL;
  kf_buffers(&in, nrets, &rets, &ret_types);
  cf->rets = (XLA_FFI_Rets){KC__XLA_RETS_SIZE, NULL, nrets, (XLA_FFI_RetType*)ret_types, rets};
  kf_attrs(&in, 0, &cf->attrs);
  kf_frame = cf;

  if (mode & 0x04) {
    cf->stage = XLA_FFI_ExecutionStage_INSTANTIATE;
    ctx->stage = XLA_FFI_ExecutionStage_INSTANTIATE;
    kf_take_error(api, handler(cf));
  }
  cf->stage = XLA_FFI_ExecutionStage_EXECUTE;
  ctx->stage = XLA_FFI_ExecutionStage_EXECUTE;
  for (int run = 0; run < ((mode & 0x08) ? 2 : 1); ++run) kf_take_error(api, handler(cf));

  /* The site XLA would delete with its executable. */
  for (size_t k = 0; k < sizeof inst->states / sizeof inst->states[0]; ++k) {
    struct kc__xla_state* s = &inst->states[k];
    if (s->type_id && s->deleter) s->deleter(s->state);
  }
  kf_frame = NULL;
  kf_free_blocks();
  return 0;
}
