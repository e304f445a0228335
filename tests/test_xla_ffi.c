/* XLA FFI handlers run by kcall's program runtime: call frames, attributes,
 * stages and state, errors, the execution context, futures, version checks
 * at registration, the API table and plugins. The handlers are written in C
 * against kcall's declarations of XLA's C API, as XLA's C++ headers would
 * compile them. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "kt_xla_ffi.h"
#include "test.h"

/* ---- helpers ------------------------------------------------------------------- */

static kc_executable* kt_compile_text(const char* text, kc_thread_pool* pool) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_compile_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.thread_pool = pool;
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, &o, &exe);
  kc_program_destroy(p);
  KC_CHECK_OK(st);
  return exe;
}

/* The status of compiling `text` (which must parse). */
static kc_status* kt_compile_status(const char* text) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, NULL, &exe);
  kc_program_destroy(p);
  kc_executable_destroy(exe);
  return st;
}

static kc_tensor* kt_tensor(DLDataType dtype, int32_t rank, const int64_t* dims) {
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), dims, rank, dtype, kc_device_cpu(), &t));
  memset(kc_tensor_get_dltensor(t)->data, 0,
         kc_dtype_get_size(dtype) * (size_t)(rank ? dims[0] : 1) *
             (size_t)(rank > 1 ? dims[1] : 1));
  return t;
}

static kc_tensor* kt_f32s(int64_t n, float base) {
  kc_tensor* t = kt_tensor(kc_dtype_make(kDLFloat, 32, 1), 1, &n);
  float* d = kc_tensor_get_dltensor(t)->data;
  for (int64_t i = 0; i < n; ++i) d[i] = base + (float)i;
  return t;
}

static void* kt_data(const kc_tensor* t) { return kc_tensor_get_dltensor(t)->data; }

static void kt_release(kc_tensor** ts, size_t n) {
  for (size_t i = 0; i < n; ++i) kc_object_release(KC_OBJECT(ts[i]));
}

/* Runs a one-input executable; outputs into out[]. */
static kc_status* kt_run(const kc_executable* exe, const kc_tensor* x, kc_tensor** out) {
  const DLTensor* ins[1] = {kc_tensor_get_dltensor(x)};
  kc_execute_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.allocator = kt_alloc();
  return kc_executable_execute(exe, ins, 1, &o, out);
}

/* `fn` for the instantiate and execute stages of target `name`. */
static void kt_register_both(const char* name, kc_xla_ffi_handler_fn fn) {
  kc_xla_ffi_handlers h;
  memset(&h, 0, sizeof h);
  h.struct_size = sizeof h;
  h.instantiate = fn;
  h.execute = fn;
  KC_CHECK_OK(kc_xcall_register_xla_ffi(kc_sv(name), KC_PLATFORM_HOST, &h, 0));
}

static void kt_register(const char* name, XLA_FFI_Handler* fn) {
  KC_CHECK_OK(kc_xcall_register_xla_ffi_handler(kc_sv(name), KC_PLATFORM_HOST,
                                                (kc_xla_ffi_handler_fn)(void (*)(void))fn,
                                                0));
}

#define KT_FN(fn) ((kc_xla_ffi_handler_fn)(void (*)(void))(fn))

/* A one-call program: y = target(x), x f32[N]. */
static void kt_one_call(char* buf, size_t cap, const char* target, int n,
                        const char* config) {
  snprintf(buf, cap,
           "HloModule one\n"
           "ENTRY main {\n"
           "  x = f32[%d]{0} parameter(0)\n"
           "  ROOT y = f32[%d]{0} custom-call(f32[%d]{0} x), custom_call_target=\"%s\", "
           "api_version=API_VERSION_TYPED_FFI%s%s\n"
           "}\n",
           n, n, n, target, config ? ", backend_config=" : "", config ? config : "");
}

/* Destroys an error made by kcall's table, returning its code. */
static int kt_take_code(const XLA_FFI_Api* api, XLA_FFI_Error* e, char* msg, size_t cap) {
  if (!e) return 0;
  XLA_FFI_Error_GetMessage_Args g;
  memset(&g, 0, sizeof g);
  g.struct_size = KC__XLA_SIZE(XLA_FFI_Error_GetMessage_Args, message);
  g.error = e;
  api->XLA_FFI_Error_GetMessage(&g);
  if (msg) snprintf(msg, cap, "%s", g.message);
  /* The code is not readable through the API; the tests read it from
   * statuses. Here any error counts as 1. */
  XLA_FFI_Error_Destroy_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error);
  d.error = e;
  api->XLA_FFI_Error_Destroy(&d);
  return 1;
}

/* ---- the simplest handler ------------------------------------------------------- */

/* y = x + delta (an f32 attribute, 1 when absent). */
static XLA_FFI_Error* kt_add_one(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  if (f->args.size != 1 || f->rets.size != 1) {
    return kt_xla_error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "add_one: expected one operand and one result");
  }
  const XLA_FFI_Buffer* x = kt_xla_arg(f, 0);
  XLA_FFI_Buffer* y = kt_xla_ret(f, 0);
  if (x->dtype != XLA_FFI_DataType_F32 || y->dtype != XLA_FFI_DataType_F32) {
    return kt_xla_error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT, "add_one: expected f32");
  }
  float delta = kt_xla_attr_f32(&f->attrs, "delta", 1.0f);
  const float* in = x->data;
  float* out = y->data;
  for (int64_t i = 0; i < kt_xla_count(x); ++i) out[i] = in[i] + delta;
  return NULL;
}

KC_TEST(xla_ffi_handler_runs_in_a_program) {
  kt_register("kt.add_one", kt_add_one);
  kc_xcall_target_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  KC_CHECK_OK(kc_xcall_lookup(KC_SV_LIT("kt.add_one"), KC_PLATFORM_HOST, &d));
  KC_CHECK(d.xla_ffi);
  KC_CHECK_INT(d.api, KC_XCALL_API_TYPED);
  KC_CHECK_INT(d.xla_ffi_api_major, 0);
  KC_CHECK_INT(d.xla_ffi_api_minor, 3);
  char sig[64];
  kc_xcall_signature_format(d.signature, sig, sizeof sig);
  KC_CHECK_STR(sig, "(...) -> (...) {...}");

  char text[512];
  kt_one_call(text, sizeof text, "kt.add_one", 4, "{delta = 2.500000e+00 : f32}");
  kc_executable* exe = kt_compile_text(text, NULL);
  kc_tensor* x = kt_f32s(4, 1.0f);
  for (int run = 0; run < 3; ++run) {
    kc_tensor* y = NULL;
    KC_CHECK_OK(kt_run(exe, x, &y));
    const float* v = kt_data(y);
    KC_CHECK(v[0] == 3.5f && v[3] == 6.5f);
    kt_release(&y, 1);
  }
  kt_release(&x, 1);
  kc_executable_destroy(exe);

  /* The program must call it as an XLA FFI handler. */
  snprintf(text, sizeof text,
           "HloModule one\nENTRY main {\n  x = f32[4] parameter(0)\n"
           "  ROOT y = f32[4] custom-call(x), custom_call_target=\"kt.add_one\"\n}\n");
  KC_CHECK_CODE(kt_compile_status(text), KC_FAILED_PRECONDITION,
                "calls it with API ORIGINAL", "registered for TYPED");
}

/* ---- attributes ------------------------------------------------------------------- */

static char kt_dump_text[2048];
static char kt_dump_at_instantiate[2048];

static void kt_put(char* buf, size_t cap, size_t* len, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(buf + *len, *len < cap ? cap - *len : 0, fmt, args);
  va_end(args);
  if (n > 0) *len += (size_t)n;
  if (*len >= cap) *len = cap - 1;
}

static void kt_put_number(char* buf, size_t cap, size_t* len, XLA_FFI_DataType t,
                          const void* v) {
  switch (t) {
    case XLA_FFI_DataType_PRED: kt_put(buf, cap, len, "pred:%d", *(const uint8_t*)v); break;
    case XLA_FFI_DataType_S8: kt_put(buf, cap, len, "s8:%d", *(const int8_t*)v); break;
    case XLA_FFI_DataType_S16: kt_put(buf, cap, len, "s16:%d", *(const int16_t*)v); break;
    case XLA_FFI_DataType_S32: kt_put(buf, cap, len, "s32:%d", *(const int32_t*)v); break;
    case XLA_FFI_DataType_S64:
      kt_put(buf, cap, len, "s64:%lld", (long long)*(const int64_t*)v);
      break;
    case XLA_FFI_DataType_U8: kt_put(buf, cap, len, "u8:%u", *(const uint8_t*)v); break;
    case XLA_FFI_DataType_U16: kt_put(buf, cap, len, "u16:%u", *(const uint16_t*)v); break;
    case XLA_FFI_DataType_U32: kt_put(buf, cap, len, "u32:%u", *(const uint32_t*)v); break;
    case XLA_FFI_DataType_U64:
      kt_put(buf, cap, len, "u64:%llu", (unsigned long long)*(const uint64_t*)v);
      break;
    case XLA_FFI_DataType_F32: kt_put(buf, cap, len, "f32:%g", (double)*(const float*)v); break;
    case XLA_FFI_DataType_F64: kt_put(buf, cap, len, "f64:%g", *(const double*)v); break;
    default: kt_put(buf, cap, len, "?%d", (int)t); break;
  }
}

static size_t kt_width(XLA_FFI_DataType t) {
  switch (t) {
    case XLA_FFI_DataType_PRED: case XLA_FFI_DataType_S8: case XLA_FFI_DataType_U8: return 1;
    case XLA_FFI_DataType_S16: case XLA_FFI_DataType_U16: return 2;
    case XLA_FFI_DataType_S32: case XLA_FFI_DataType_U32: case XLA_FFI_DataType_F32: return 4;
    default: return 8;
  }
}

/* "{name=value,...}" in the frame's order. */
static void kt_put_attrs(char* buf, size_t cap, size_t* len, const XLA_FFI_Attrs* a) {
  kt_put(buf, cap, len, "{");
  if (a->struct_size != KC__XLA_ATTRS_SIZE) kt_put(buf, cap, len, "BAD SIZE ");
  for (int64_t i = 0; i < a->size; ++i) {
    if (i) kt_put(buf, cap, len, ",");
    kt_put(buf, cap, len, "%.*s=", (int)a->names[i]->len, a->names[i]->ptr);
    void* v = a->attrs[i];
    switch (a->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar* s = v;
        kt_put_number(buf, cap, len, s->dtype, s->value);
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan* s = v;
        kt_put(buf, cap, len, "'%.*s'", (int)s->len, s->ptr);
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array* arr = v;
        kt_put(buf, cap, len, "[");
        for (size_t k = 0; k < arr->size; ++k) {
          if (k) kt_put(buf, cap, len, " ");
          kt_put_number(buf, cap, len, arr->dtype,
                        (const char*)arr->data + k * kt_width(arr->dtype));
        }
        kt_put(buf, cap, len, "]");
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY:
        kt_put_attrs(buf, cap, len, v);
        break;
      default:
        kt_put(buf, cap, len, "?");
    }
  }
  kt_put(buf, cap, len, "}");
}

static XLA_FFI_Error* kt_dump(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  char* out = f->stage == XLA_FFI_ExecutionStage_EXECUTE ? kt_dump_text : kt_dump_at_instantiate;
  size_t len = 0;
  kt_put_attrs(out, sizeof kt_dump_text, &len, &f->attrs);
  return NULL;
}

KC_TEST(xla_ffi_attributes_of_every_kind_sorted_by_name) {
  kt_register_both("kt.dump", KT_FN(kt_dump));
  /* As JAX prints them (NumPy scalars and arrays, Python ints and floats,
   * strings, dictionaries), in no particular order. */
  const char* config =
      "{z_str = \"hi \\22there\\22\", b_i8 = -3 : i8, a_bool = true, c_i16 = 300 : i16, "
      "d_i32 = 7 : i32, e_i64 = 1099511627776 : i64, f_u8 = 200 : ui8, g_u16 = 60000 : ui16, "
      "h_u32 = 4000000000 : ui32, i_u64 = 18446744073709551615 : ui64, "
      "j_f32 = 1.500000e+00 : f32, k_f64 = 2.250000e+00 : f64, l_arr = array<i32: 1, 2>, "
      "m_dense = dense<[[1.000000e+00, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>, "
      "n_hex = dense<\"0x0100000002000000\"> : tensor<2xi32>, o_empty = dense<> : tensor<0xi64>, "
      "p_dict = {zz = 1 : i32, aa = \"s\", mm = {y = 2, b = false}}, q_none = {}, "
      "B_upper = 1, \"a b\" = 5.000000e-01, r_u = dense<[1, 255]> : tensor<2xui8>, "
      "s_splat = dense<-1> : tensor<3xi64>, t_f64s = array<f64: 0.5, -2.0>, "
      "u_i1 = 0 : i1}";
  char text[2048];
  kt_one_call(text, sizeof text, "kt.dump", 2, config);
  kc_executable* exe = kt_compile_text(text, NULL);
  static const char want[] =
      "{B_upper=s64:1,a b=f64:0.5,a_bool=pred:1,b_i8=s8:-3,c_i16=s16:300,d_i32=s32:7,"
      "e_i64=s64:1099511627776,f_u8=u8:200,g_u16=u16:60000,h_u32=u32:4000000000,"
      "i_u64=u64:18446744073709551615,j_f32=f32:1.5,k_f64=f64:2.25,"
      "l_arr=[s32:1 s32:2],m_dense=[f32:1 f32:2 f32:3 f32:4],n_hex=[s32:1 s32:2],"
      "o_empty=[],p_dict={aa='s',mm={b=pred:0,y=s64:2},zz=s32:1},q_none={},"
      "r_u=[u8:1 u8:255],s_splat=[s64:-1 s64:-1 s64:-1],t_f64s=[f64:0.5 f64:-2],"
      "u_i1=pred:0,z_str='hi \"there\"'}";
  /* The instantiate stage sees them too, when the program is compiled. */
  KC_CHECK_STR(kt_dump_at_instantiate, want);
  kc_tensor* x = kt_f32s(2, 0.0f);
  kc_tensor* y = NULL;
  KC_CHECK_OK(kt_run(exe, x, &y));
  KC_CHECK_STR(kt_dump_text, want);
  kt_release(&y, 1);
  kt_release(&x, 1);
  kc_executable_destroy(exe);

  /* No attributes at all: an empty list. */
  kt_one_call(text, sizeof text, "kt.dump", 2, NULL);
  exe = kt_compile_text(text, NULL);
  KC_CHECK_STR(kt_dump_at_instantiate, "{}");
  kc_executable_destroy(exe);
}

/* ---- buffers and tuples --------------------------------------------------------- */

static char kt_buffers_seen[2][256];

static const char* kt_type_name(XLA_FFI_DataType t) {
  switch (t) {
    case XLA_FFI_DataType_PRED: return "pred";
    case XLA_FFI_DataType_S32: return "s32";
    case XLA_FFI_DataType_S64: return "s64";
    case XLA_FFI_DataType_U8: return "u8";
    case XLA_FFI_DataType_F32: return "f32";
    case XLA_FFI_DataType_F64: return "f64";
    case XLA_FFI_DataType_F16: return "f16";
    case XLA_FFI_DataType_BF16: return "bf16";
    case XLA_FFI_DataType_C64: return "c64";
    default: return "other";
  }
}

static void kt_put_buffers(char* buf, size_t cap, size_t* len, void** list, int64_t n,
                           bool expect_data) {
  for (int64_t i = 0; i < n; ++i) {
    const XLA_FFI_Buffer* b = list[i];
    kt_put(buf, cap, len, "%s%s[", i ? " " : "", kt_type_name(b->dtype));
    for (int64_t d = 0; d < b->rank; ++d) {
      kt_put(buf, cap, len, "%s%lld", d ? "," : "", (long long)b->dims[d]);
    }
    kt_put(buf, cap, len, "]");
    if (b->struct_size != KC__XLA_BUFFER_SIZE) kt_put(buf, cap, len, "!size");
    if ((b->data != NULL) != expect_data) kt_put(buf, cap, len, "!data");
  }
}

/* Records what it was given; computes r.0 = 2 p.0, r.1.0 = the sum of
 * p.1.0, p.1.1 and q, r.1.1[i] = p.0[i] > 0. */
static XLA_FFI_Error* kt_tuples(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  bool exec = f->stage == XLA_FFI_ExecutionStage_EXECUTE;
  char* out = kt_buffers_seen[exec];
  size_t len = 0;
  for (int64_t i = 0; i < f->args.size; ++i) {
    if (f->args.types[i] != XLA_FFI_ArgType_BUFFER) kt_put(out, 256, &len, "!type");
  }
  for (int64_t i = 0; i < f->rets.size; ++i) {
    if (f->rets.types[i] != XLA_FFI_RetType_BUFFER) kt_put(out, 256, &len, "!type");
  }
  kt_put_buffers(out, 256, &len, f->args.args, f->args.size, exec);
  kt_put(out, 256, &len, " -> ");
  kt_put_buffers(out, 256, &len, f->rets.rets, f->rets.size, exec);
  if (!exec) return NULL;
  if (f->args.size != 4 || f->rets.size != 3) {
    return kt_xla_error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT, "tuples: wrong counts");
  }
  const float* p0 = kt_xla_arg(f, 0)->data;
  const int32_t* p10 = kt_xla_arg(f, 1)->data;
  const double* p11 = kt_xla_arg(f, 2)->data;
  const uint8_t* q = kt_xla_arg(f, 3)->data;
  float* r0 = kt_xla_ret(f, 0)->data;
  int64_t* r10 = kt_xla_ret(f, 1)->data;
  uint8_t* r11 = kt_xla_ret(f, 2)->data;
  int64_t sum = (int64_t)*p11;
  for (int i = 0; i < 3; ++i) sum += p10[i];
  for (int i = 0; i < 4; ++i) sum += q[i];
  r10[0] = sum;
  for (int i = 0; i < 2; ++i) {
    r0[i] = 2.0f * p0[i];
    r11[i] = p0[i] > 0.0f;
  }
  return NULL;
}

KC_TEST(xla_ffi_buffers_flatten_tuples_in_pre_order) {
  kt_register_both("kt.tuples", KT_FN(kt_tuples));
  kc_executable* exe = kt_compile_text(
      "HloModule tuples\n"
      "ENTRY main {\n"
      "  p = (f32[2], (s32[3], f64[])) parameter(0)\n"
      "  q = u8[2,2] parameter(1)\n"
      "  ROOT r = (f32[2], (s64[1], pred[2])) custom-call(p, q), "
      "custom_call_target=\"kt.tuples\", api_version=API_VERSION_TYPED_FFI\n"
      "}\n",
      NULL);
  /* Shapes without data at instantiate; data at execute. */
  KC_CHECK_STR(kt_buffers_seen[0], "f32[2] s32[3] f64[] u8[2,2] -> f32[2] s64[1] pred[2]");
  int64_t three = 3, dims22[2] = {2, 2};
  kc_tensor* p0 = kt_f32s(2, -0.5f); /* -0.5, 0.5 */
  kc_tensor* p10 = kt_tensor(kc_dtype_make(kDLInt, 32, 1), 1, &three);
  kc_tensor* p11 = kt_tensor(kc_dtype_make(kDLFloat, 64, 1), 0, NULL);
  kc_tensor* q = kt_tensor(kc_dtype_make(kDLUInt, 8, 1), 2, dims22);
  int32_t* i32 = kt_data(p10);
  i32[0] = 1, i32[1] = 2, i32[2] = 3;
  *(double*)kt_data(p11) = 10.0;
  uint8_t* u8 = kt_data(q);
  u8[0] = 100, u8[1] = 1, u8[2] = 1, u8[3] = 1;
  const DLTensor* ins[4] = {kc_tensor_get_dltensor(p0), kc_tensor_get_dltensor(p10),
                            kc_tensor_get_dltensor(p11), kc_tensor_get_dltensor(q)};
  kc_tensor* out[3] = {NULL, NULL, NULL};
  kc_execute_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.allocator = kt_alloc();
  KC_CHECK_OK(kc_executable_execute(exe, ins, 4, &o, out));
  KC_CHECK_STR(kt_buffers_seen[1], "f32[2] s32[3] f64[] u8[2,2] -> f32[2] s64[1] pred[2]");
  const float* r0 = kt_data(out[0]);
  KC_CHECK(r0[0] == -1.0f && r0[1] == 1.0f);
  KC_CHECK_INT(((const int64_t*)kt_data(out[1]))[0], 119);
  const uint8_t* r11 = kt_data(out[2]);
  KC_CHECK(r11[0] == 0 && r11[1] == 1);
  kt_release(out, 3);
  kc_tensor* ins_owned[4] = {p0, p10, p11, q};
  kt_release(ins_owned, 4);
  kc_executable_destroy(exe);
}

KC_TEST(xla_ffi_buffer_element_types) {
  kt_register_both("kt.types", KT_FN(kt_tuples));
  /* Compiling alone runs instantiate, which records the element types. */
  kc_executable* exe = kt_compile_text(
      "HloModule types\n"
      "ENTRY main {\n"
      "  a = f16[2] parameter(0)\n"
      "  b = bf16[3] parameter(1)\n"
      "  c = c64[1] parameter(2)\n"
      "  ROOT r = (s64[], f64[2,3,4]) custom-call(a, b, c), "
      "custom_call_target=\"kt.types\", api_version=API_VERSION_TYPED_FFI\n"
      "}\n",
      NULL);
  KC_CHECK_STR(kt_buffers_seen[0], "f16[2] bf16[3] c64[1] -> s64[] f64[2,3,4]");
  kc_executable_destroy(exe);
}

/* ---- stages and state ------------------------------------------------------------- */

typedef struct kt_tally {
  int64_t site;
  _Atomic int64_t runs;
} kt_tally;

static XLA_FFI_TypeId kt_counter_id = {0};
static XLA_FFI_TypeId kt_other_id = {0};
static _Atomic int kt_counters_deleted;
static void kt_counter_delete(void* p) {
  atomic_fetch_add(&kt_counters_deleted, 1);
  free(p);
}
static const XLA_FFI_TypeInfo kt_counter_info = {sizeof(XLA_FFI_TypeInfo), NULL,
                                                 kt_counter_delete};
/* The same type's info as a library loaded again would give it. */
static void kt_counter_delete2(void* p) {
  atomic_fetch_add(&kt_counters_deleted, 10);
  free(p);
}
static const XLA_FFI_TypeInfo kt_counter_info2 = {sizeof(XLA_FFI_TypeInfo), NULL,
                                                  kt_counter_delete2};

static void kt_register_types(void) {
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.counter"), &kt_counter_id,
                                       &kt_counter_info));
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.other"), &kt_other_id, NULL));
  KC_CHECK(kt_counter_id.type_id > 0 && kt_other_id.type_id > 0);
  KC_CHECK(kt_counter_id.type_id != kt_other_id.type_id);
}

static pthread_mutex_t kt_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char kt_log[64];
static void kt_log_stage(char c) {
  pthread_mutex_lock(&kt_log_mu);
  size_t n = strlen(kt_log);
  if (n + 1 < sizeof kt_log) kt_log[n] = c;
  pthread_mutex_unlock(&kt_log_mu);
}

static XLA_FFI_Error* kt_stage_instantiate(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  kt_log_stage('I');
  if (f->stage != XLA_FFI_ExecutionStage_INSTANTIATE || kt_xla_arg(f, 0)->data) {
    return kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "instantiate: wrong stage or data");
  }
  XLA_FFI_AttrType type;
  const XLA_FFI_Scalar* site = kt_xla_attr(&f->attrs, "site", &type);
  kt_tally* c = calloc(1, sizeof *c);
  c->site = site ? *(const int64_t*)site->value : -1;
  XLA_FFI_Error* e = kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_counter_id, c);
  if (e) free(c);
  return e;
}

static XLA_FFI_Error* kt_stage_prepare(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  kt_log_stage('P');
  void* state = NULL;
  XLA_FFI_Error* e = kt_xla_state_get(f, &kt_counter_id, &state);
  if (!e && (!state || f->stage != XLA_FFI_ExecutionStage_PREPARE)) {
    e = kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "prepare: no state");
  }
  return e;
}

static XLA_FFI_Error* kt_stage_initialize(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  kt_log_stage('N');
  return f->stage == XLA_FFI_ExecutionStage_INITIALIZE
             ? NULL
             : kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "initialize: wrong stage");
}

/* y[0] = 100 site + the number of runs so far; y[1] = the run id. */
static XLA_FFI_Error* kt_stage_execute(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  kt_log_stage('E');
  void* state = NULL;
  XLA_FFI_Error* e = kt_xla_state_get(f, &kt_counter_id, &state);
  if (e) return e;
  kt_tally* c = state;
  int64_t runs = atomic_fetch_add(&c->runs, 1) + 1;
  float* y = kt_xla_ret(f, 0)->data;
  y[0] = (float)(100 * c->site + runs);
  return NULL;
}

static const kc_xla_ffi_handlers kt_stage_handlers = {
    sizeof(kc_xla_ffi_handlers), KT_FN(kt_stage_instantiate), KT_FN(kt_stage_prepare),
    KT_FN(kt_stage_initialize), KT_FN(kt_stage_execute)};

static const char kt_two_sites[] =
    "HloModule sites\n"
    "ENTRY main {\n"
    "  x = f32[2] parameter(0)\n"
    "  a = f32[2] custom-call(x), custom_call_target=\"kt.stages\", "
    "api_version=API_VERSION_TYPED_FFI, backend_config={site = 1 : i64}\n"
    "  b = f32[2] custom-call(x), custom_call_target=\"kt.stages\", "
    "api_version=API_VERSION_TYPED_FFI, backend_config={site = 2 : i64}\n"
    "  ROOT t = (f32[2], f32[2]) tuple(a, b)\n"
    "}\n";

KC_TEST(xla_ffi_stages_run_in_order_and_state_lives_with_the_executable) {
  kt_register_types();
  KC_CHECK_OK(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.stages"), KC_PLATFORM_HOST,
                                        &kt_stage_handlers, 0));
  memset(kt_log, 0, sizeof kt_log);
  atomic_store(&kt_counters_deleted, 0);
  kc_executable* exe = kt_compile_text(kt_two_sites, NULL);
  /* Each call site: instantiate, prepare, initialize, when compiled. */
  KC_CHECK_STR(kt_log, "IPNIPN");
  kc_tensor* x = kt_f32s(2, 0.0f);
  for (int run = 1; run <= 2; ++run) {
    kc_tensor* out[2] = {NULL, NULL};
    KC_CHECK_OK(kt_run(exe, x, out));
    KC_CHECK(((const float*)kt_data(out[0]))[0] == (float)(100 + run));
    KC_CHECK(((const float*)kt_data(out[1]))[0] == (float)(200 + run));
    kt_release(out, 2);
  }
  KC_CHECK_STR(kt_log, "IPNIPNEEEE");
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 0);
  kc_executable_destroy(exe);
  /* One state per call site, deleted with the executable. */
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 2);
  kt_release(&x, 1);

  /* A failing compile still deletes the state already made. */
  atomic_store(&kt_counters_deleted, 0);
  static const char half[] =
      "HloModule sites\n"
      "ENTRY main {\n"
      "  x = f32[2] parameter(0)\n"
      "  a = f32[2] custom-call(x), custom_call_target=\"kt.stages\", "
      "api_version=API_VERSION_TYPED_FFI, backend_config={site = 1 : i64}\n"
      "  ROOT b = f32[2] custom-call(a), custom_call_target=\"kt.nowhere\", "
      "api_version=API_VERSION_TYPED_FFI\n"
      "}\n";
  KC_CHECK_CODE(kt_compile_status(half), KC_NOT_FOUND, "kt.nowhere");
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 1);

  /* A type registered again (a library loaded anew) keeps its id and
   * takes the new info: state set from then on is deleted by it. */
  XLA_FFI_TypeId again = {0};
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.counter"), &again, &kt_counter_info2));
  KC_CHECK_INT(again.type_id, kt_counter_id.type_id);
  atomic_store(&kt_counters_deleted, 0);
  exe = kt_compile_text(kt_two_sites, NULL);
  kc_executable_destroy(exe);
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 20);
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.counter"), &again, &kt_counter_info));
}

/* State of kt.other, which has no deleter: nothing to free. */
static int kt_plain_state;

/* What kt_state_misuse does, named by its `mode` attribute. */
static XLA_FFI_Error* kt_state_misuse(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  XLA_FFI_AttrType type;
  const XLA_FFI_ByteSpan* mode = kt_xla_attr(&f->attrs, "mode", &type);
  if (!mode) return kt_xla_error(f, XLA_FFI_Error_Code_INTERNAL, "no mode");
  char m[32] = {0};
  memcpy(m, mode->ptr, mode->len < 31 ? mode->len : 31);
  bool inst = f->stage == XLA_FFI_ExecutionStage_INSTANTIATE;
  void* state = NULL;
  if (strcmp(m, "unregistered") == 0 && inst) {
    XLA_FFI_TypeId bogus = {987654321};
    return kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &bogus, &bogus);
  }
  if (strcmp(m, "at_execute") == 0 && !inst) {
    return kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_other_id, &kt_plain_state);
  }
  if (strcmp(m, "missing") == 0 && !inst) return kt_xla_state_get(f, &kt_counter_id, &state);
  if (strcmp(m, "twice") == 0 && inst) {
    kt_tally* a = calloc(1, sizeof *a);
    kt_tally* b = calloc(1, sizeof *b);
    XLA_FFI_Error* e = kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_counter_id, a);
    if (e) free(a);
    if (!e) e = kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_counter_id, b);
    if (e) free(b);
    return e;
  }
  if (strcmp(m, "wrong_type") == 0) {
    if (inst) {
      return kt_xla_state_set(f, XLA_FFI_ExecutionStage_INSTANTIATE, &kt_other_id, &kt_plain_state);
    }
    return kt_xla_state_get(f, &kt_counter_id, &state);
  }
  if (strcmp(m, "bad_stage") == 0 && inst) {
    return kt_xla_state_set(f, XLA_FFI_ExecutionStage_EXECUTE, &kt_other_id, &kt_plain_state);
  }
  return NULL;
}

KC_TEST(xla_ffi_state_misuse_is_an_error) {
  kt_register_types();
  kt_register_both("kt.misuse", KT_FN(kt_state_misuse));
  char text[512];

  kt_one_call(text, sizeof text, "kt.misuse", 2, "{mode = \"unregistered\"}");
  KC_CHECK_CODE(kt_compile_status(text), KC_FAILED_PRECONDITION,
                "instantiating custom call 'kt.misuse' (instruction 'y')",
                "type id 987654321 is not registered", "kc_xla_ffi_type_register");

  atomic_store(&kt_counters_deleted, 0);
  kt_one_call(text, sizeof text, "kt.misuse", 2, "{mode = \"twice\"}");
  KC_CHECK_CODE(kt_compile_status(text), KC_ALREADY_EXISTS,
                "the instantiate stage's state is already set");
  KC_CHECK_INT(atomic_load(&kt_counters_deleted), 1); /* the first one */

  kt_one_call(text, sizeof text, "kt.misuse", 2, "{mode = \"bad_stage\"}");
  KC_CHECK_CODE(kt_compile_status(text), KC_INVALID_ARGUMENT,
                "stage 3: expected instantiate, prepare or initialize");

  static const struct {
    const char* mode;
    kc_status_code code;
    const char* message;
  } at_run[] = {
      {"at_execute", KC_FAILED_PRECONDITION, "not at execute"},
      {"missing", KC_NOT_FOUND, "no state was set at the instantiate stage"},
      {"wrong_type", KC_INVALID_ARGUMENT, "the instantiate stage's state has type id"},
  };
  kc_tensor* x = kt_f32s(2, 0.0f);
  for (size_t i = 0; i < sizeof at_run / sizeof at_run[0]; ++i) {
    char config[64];
    snprintf(config, sizeof config, "{mode = \"%s\"}", at_run[i].mode);
    kt_one_call(text, sizeof text, "kt.misuse", 2, config);
    kc_executable* exe = kt_compile_text(text, NULL);
    kc_tensor* y = NULL;
    KC_CHECK_CODE(kt_run(exe, x, &y), at_run[i].code, at_run[i].message,
                  "in custom call 'kt.misuse' (instruction 'y')");
    KC_CHECK(y == NULL);
    kc_executable_destroy(exe);
  }
  kt_release(&x, 1);
}

KC_TEST(xla_ffi_type_registration) {
  XLA_FFI_TypeId a = {0}, again = {0}, b = {0};
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_a"), &a, NULL));
  KC_CHECK(a.type_id > 0);
  /* The same name again: its id, with 0 or with the id itself. */
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_a"), &again, NULL));
  KC_CHECK_INT(again.type_id, a.type_id);
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_a"), &again, NULL));
  /* An id of one's own choosing, if free. */
  b.type_id = a.type_id + 1000;
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_b"), &b, NULL));
  KC_CHECK_INT(b.type_id, a.type_id + 1000);
  XLA_FFI_TypeId taken = {a.type_id};
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_c"), &taken, NULL),
                KC_ALREADY_EXISTS, "taken by another type");
  XLA_FFI_TypeId other = {b.type_id};
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_a"), &other, NULL),
                KC_ALREADY_EXISTS, "is registered with id");
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT(""), &a, NULL), KC_INVALID_ARGUMENT,
                "the name is empty");
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT("kt.x"), NULL, NULL),
                KC_INVALID_ARGUMENT, "type_id is NULL");
  XLA_FFI_TypeId negative = {-5};
  KC_CHECK_CODE(kc_xla_ffi_type_register(KC_SV_LIT("kt.x"), &negative, NULL),
                KC_INVALID_ARGUMENT, "type id -5 is negative");
  /* A fresh id after a chosen one never collides with it. */
  XLA_FFI_TypeId fresh = {0};
  KC_CHECK_OK(kc_xla_ffi_type_register(KC_SV_LIT("kt.type_d"), &fresh, NULL));
  KC_CHECK(fresh.type_id > b.type_id);
}

/* ---- errors --------------------------------------------------------------------- */

/* Fails with the `code` attribute's code and the `message` attribute. */
static XLA_FFI_Error* kt_fail(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  XLA_FFI_AttrType type;
  const XLA_FFI_Scalar* code = kt_xla_attr(&f->attrs, "code", &type);
  const XLA_FFI_ByteSpan* msg = kt_xla_attr(&f->attrs, "message", &type);
  const XLA_FFI_Scalar* when = kt_xla_attr(&f->attrs, "at_instantiate", &type);
  bool at_instantiate = when && *(const uint8_t*)when->value;
  if ((f->stage == XLA_FFI_ExecutionStage_INSTANTIATE) != at_instantiate) return NULL;
  char text[128] = {0};
  if (msg) memcpy(text, msg->ptr, msg->len < 127 ? msg->len : 127);
  return kt_xla_error(f, (XLA_FFI_Error_Code)(code ? *(const int32_t*)code->value : 3), text);
}

KC_TEST(xla_ffi_errors_name_the_target_and_instruction) {
  kt_register_both("kt.fail", KT_FN(kt_fail));
  char text[512];
  kt_one_call(text, sizeof text, "kt.fail", 2,
              "{code = 3 : i32, message = \"the input is odd\"}");
  kc_executable* exe = kt_compile_text(text, NULL);
  kc_tensor* x = kt_f32s(2, 0.0f);
  for (int run = 0; run < 2; ++run) {
    kc_tensor* y = NULL;
    KC_CHECK_CODE(kt_run(exe, x, &y), KC_INVALID_ARGUMENT,
                  "INVALID_ARGUMENT: running 'one': in custom call 'kt.fail' "
                  "(instruction 'y'): the input is odd");
    KC_CHECK(y == NULL);
  }
  kc_executable_destroy(exe);

  /* Every code comes through; OK, which is not an error, reads UNKNOWN. */
  kt_one_call(text, sizeof text, "kt.fail", 2, "{code = 8 : i32, message = \"full\"}");
  exe = kt_compile_text(text, NULL);
  kc_tensor* y = NULL;
  KC_CHECK_CODE(kt_run(exe, x, &y), KC_RESOURCE_EXHAUSTED, "full");
  kc_executable_destroy(exe);
  kt_one_call(text, sizeof text, "kt.fail", 2, "{code = 0 : i32, message = \"odd\"}");
  exe = kt_compile_text(text, NULL);
  KC_CHECK_CODE(kt_run(exe, x, &y), KC_UNKNOWN, "odd");
  kc_executable_destroy(exe);
  kt_release(&x, 1);

  /* At instantiate: the compile fails. */
  kt_one_call(text, sizeof text, "kt.fail", 2,
              "{code = 9 : i32, message = \"not now\", at_instantiate = true}");
  KC_CHECK_CODE(kt_compile_status(text), KC_FAILED_PRECONDITION,
                "compiling 'one': instantiating custom call 'kt.fail' (instruction 'y'): "
                "not now");
}

/* ---- versions --------------------------------------------------------------------- */

static _Atomic int kt_version_calls; /* calls that were not metadata queries */

#define KT_VERSIONED(name, major, minor)                         \
  static XLA_FFI_Error* name(XLA_FFI_CallFrame* f) {             \
    if (kt_xla_answer(f, (major), (minor))) return NULL;         \
    atomic_fetch_add(&kt_version_calls, 1);                      \
    return kt_add_one(f);                                        \
  }
KT_VERSIONED(kt_v0_4, 0, 4)
KT_VERSIONED(kt_v1_0, 1, 0)
KT_VERSIONED(kt_v0_2, 0, 2)
KT_VERSIONED(kt_v0_3, 0, 3)

/* Returns success without saying anything about itself. */
static _Atomic int kt_silent_calls;
static XLA_FFI_Error* kt_silent(XLA_FFI_CallFrame* f) {
  atomic_fetch_add(&kt_silent_calls, 1);
  if (kt_xla_metadata(f)) return NULL;
  return kt_add_one(f);
}

/* Answers the query with an error, as a C++ handler whose state type is
 * not registered does. */
static XLA_FFI_Error* kt_query_fails(XLA_FFI_CallFrame* f) {
  if (kt_xla_metadata(f)) {
    return kt_xla_error(f, XLA_FFI_Error_Code_FAILED_PRECONDITION,
                        "Types used by FFI handlers must be registered before the "
                        "handler registration");
  }
  return NULL;
}

/* Predates the extension: reads its operand even when asked for metadata. */
static _Atomic int kt_ancient_calls;
static XLA_FFI_Error* kt_ancient(XLA_FFI_CallFrame* f) {
  atomic_fetch_add(&kt_ancient_calls, 1);
  if (f->args.size < 1) {
    return kt_xla_error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT, "ancient: no operand");
  }
  return kt_add_one(f);
}

static void kt_check_version(const char* name, int32_t major, int32_t minor) {
  kc_xcall_target_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  KC_CHECK_OK(kc_xcall_lookup(kc_sv(name), KC_PLATFORM_HOST, &d));
  KC_CHECK(d.xla_ffi);
  KC_CHECK_INT(d.xla_ffi_api_major, major);
  KC_CHECK_INT(d.xla_ffi_api_minor, minor);
}

KC_TEST(xla_ffi_versions_checked_at_registration) {
  atomic_store(&kt_version_calls, 0);
  /* A newer minor and another major are refused, naming both versions. */
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.v04"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_v0_4), 0),
                KC_FAILED_PRECONDITION, "registering XLA FFI handlers for 'kt.v04@Host'",
                "the execute handler was built for XLA FFI API 0.4",
                "kcall implements 0.3");
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.v10"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_v1_0), 0),
                KC_FAILED_PRECONDITION, "built for XLA FFI API 1.0", "kcall implements 0.3");
  kc_xcall_target_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  KC_CHECK_CODE(kc_xcall_lookup(KC_SV_LIT("kt.v04"), KC_PLATFORM_HOST, &d), KC_NOT_FOUND,
                "kt.v04");
  /* Refused handlers were asked, never called. */
  KC_CHECK_INT(atomic_load(&kt_version_calls), 0);

  /* The same and older minors run. */
  kt_register("kt.v02", kt_v0_2);
  kt_register("kt.v03", kt_v0_3);
  kt_check_version("kt.v02", 0, 2);
  kt_check_version("kt.v03", 0, 3);
  KC_CHECK_INT(atomic_load(&kt_version_calls), 0);
  char text[512];
  kt_one_call(text, sizeof text, "kt.v02", 2, NULL);
  kc_executable* exe = kt_compile_text(text, NULL);
  kc_tensor* x = kt_f32s(2, 1.0f);
  kc_tensor* y = NULL;
  KC_CHECK_OK(kt_run(exe, x, &y));
  KC_CHECK(((const float*)kt_data(y))[1] == 3.0f);
  kt_release(&y, 1);
  kc_executable_destroy(exe);
  KC_CHECK_INT(atomic_load(&kt_version_calls), 1); /* no instantiate stage: one run */

  /* In a bundle, every stage's handler is asked; the message names it. */
  kc_xla_ffi_handlers h;
  memset(&h, 0, sizeof h);
  h.struct_size = sizeof h;
  h.execute = KT_FN(kt_v0_3);
  h.initialize = KT_FN(kt_v0_4);
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.bundle"), KC_PLATFORM_HOST, &h, 0),
                KC_FAILED_PRECONDITION, "the initialize handler was built for XLA FFI API 0.4");

  /* Silent: accepted, its version unknown. */
  atomic_store(&kt_silent_calls, 0);
  kt_register("kt.silent", kt_silent);
  KC_CHECK_INT(atomic_load(&kt_silent_calls), 1);
  kt_check_version("kt.silent", -1, -1);

  /* An error answering the query refuses the handler with that error. */
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.qfail"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_query_fails), 0),
                KC_FAILED_PRECONDITION, "Types used by FFI handlers must be registered",
                "did not answer XLA's metadata query");

  /* A handler that predates the extension would run the query as a call:
   * without KC_XLA_FFI_NO_METADATA it fails there; with it, it is never
   * asked and runs. */
  atomic_store(&kt_ancient_calls, 0);
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.ancient"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_ancient), 0),
                KC_INVALID_ARGUMENT, "ancient: no operand");
  atomic_store(&kt_ancient_calls, 0);
  KC_CHECK_OK(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.ancient"), KC_PLATFORM_HOST,
                                                KT_FN(kt_ancient), KC_XLA_FFI_NO_METADATA));
  KC_CHECK_INT(atomic_load(&kt_ancient_calls), 0);
  kt_check_version("kt.ancient", -1, -1);
  kt_one_call(text, sizeof text, "kt.ancient", 2, NULL);
  exe = kt_compile_text(text, NULL);
  KC_CHECK_OK(kt_run(exe, x, &y));
  KC_CHECK(((const float*)kt_data(y))[0] == 2.0f);
  KC_CHECK_INT(atomic_load(&kt_ancient_calls), 1);
  kt_release(&y, 1);
  kc_executable_destroy(exe);
  kt_release(&x, 1);
}

/* ---- state from handlers built with older headers -------------------------------- */

/* Handlers that set and get state with the argument structs of older API
 * versions, as a handler built with those headers passes them: 0.2
 * (jaxlib 0.8) without `stage`, 0.1 (jaxlib 0.4.38 to 0.7) without
 * `stage` and with the state's own deleter. Each reports its version. */
static _Atomic int kt_old_deleted;
static void kt_old_delete(void* p) {
  atomic_fetch_add(&kt_old_deleted, 1);
  free(p);
}

static XLA_FFI_Error* kt_old_state_get(XLA_FFI_CallFrame* f, XLA_FFI_TypeId* id, void** out) {
  kc__xla_state_args_0_2 g;
  memset(&g, 0, sizeof g);
  g.struct_size = KC__XLA_STATE_ARGS_0_2_SIZE; /* 40, in 0.0 to 0.2 */
  g.ctx = f->ctx;
  g.type_id = id;
  XLA_FFI_Error* e = f->api->XLA_FFI_State_Get((XLA_FFI_State_Get_Args*)(void*)&g);
  *out = g.state;
  return e;
}

/* y = x + the float the instantiate stage kept (its `add` attribute). */
static XLA_FFI_Error* kt_old_add(XLA_FFI_CallFrame* f, void* state) {
  const float* in = kt_xla_arg(f, 0)->data;
  float* out = kt_xla_ret(f, 0)->data;
  for (int64_t i = 0; i < kt_xla_count(kt_xla_arg(f, 0)); ++i) out[i] = in[i] + *(float*)state;
  return NULL;
}

static float* kt_old_new_state(XLA_FFI_CallFrame* f) {
  float* v = malloc(sizeof *v);
  *v = kt_xla_attr_f32(&f->attrs, "add", 0.0f);
  return v;
}

static XLA_FFI_Error* kt_state_v0_2(XLA_FFI_CallFrame* f) {
  if (kt_xla_answer(f, 0, 2)) return NULL;
  if (f->stage == XLA_FFI_ExecutionStage_INSTANTIATE) {
    kc__xla_state_args_0_2 s;
    memset(&s, 0, sizeof s);
    s.struct_size = KC__XLA_STATE_ARGS_0_2_SIZE; /* 40 */
    s.ctx = f->ctx;
    s.type_id = &kt_counter_id; /* its type's info deletes it */
    s.state = kt_old_new_state(f);
    XLA_FFI_Error* e = f->api->XLA_FFI_State_Set((XLA_FFI_State_Set_Args*)(void*)&s);
    if (e) free(s.state);
    return e;
  }
  void* state = NULL;
  XLA_FFI_Error* e = kt_old_state_get(f, &kt_counter_id, &state);
  return e ? e : kt_old_add(f, state);
}

static XLA_FFI_Error* kt_state_v0_1(XLA_FFI_CallFrame* f) {
  if (kt_xla_answer(f, 0, 1)) return NULL;
  if (f->stage == XLA_FFI_ExecutionStage_INSTANTIATE) {
    kc__xla_state_set_args_0_1 s;
    memset(&s, 0, sizeof s);
    s.struct_size = KC__XLA_STATE_SET_ARGS_0_1_SIZE; /* 48, as 0.3's */
    s.ctx = f->ctx;
    s.type_id = &kt_other_id; /* a type without info, as in 0.1 */
    s.state = kt_old_new_state(f);
    s.deleter = kt_old_delete;
    XLA_FFI_Error* e = f->api->XLA_FFI_State_Set((XLA_FFI_State_Set_Args*)(void*)&s);
    if (e) free(s.state);
    return e;
  }
  void* state = NULL;
  XLA_FFI_Error* e = kt_old_state_get(f, &kt_other_id, &state);
  return e ? e : kt_old_add(f, state);
}

/* Sets state with a struct smaller than any version's. */
static XLA_FFI_Error* kt_state_short(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  if (f->stage != XLA_FFI_ExecutionStage_INSTANTIATE) return NULL;
  kc__xla_state_args_0_2 s;
  memset(&s, 0, sizeof s);
  s.struct_size = 32;
  s.ctx = f->ctx;
  return f->api->XLA_FFI_State_Set((XLA_FFI_State_Set_Args*)(void*)&s);
}

KC_TEST(xla_ffi_state_from_handlers_of_older_api_versions) {
  kt_register_types();
  kt_register_both("kt.state_v0_2", KT_FN(kt_state_v0_2));
  kt_register_both("kt.state_v0_1", KT_FN(kt_state_v0_1));
  kt_check_version("kt.state_v0_2", 0, 2);
  kt_check_version("kt.state_v0_1", 0, 1);
  kc_tensor* x = kt_f32s(3, 1.0f);
  /* The 0.2 state is deleted by its type's deleter, the 0.1 state by
   * its own. */
  static const struct {
    const char* target;
    _Atomic int* deleted;
  } cases[] = {{"kt.state_v0_2", &kt_counters_deleted}, {"kt.state_v0_1", &kt_old_deleted}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[512];
    kt_one_call(text, sizeof text, cases[i].target, 3, "{add = 2.5 : f32}");
    atomic_store(cases[i].deleted, 0);
    kc_executable* exe = kt_compile_text(text, NULL);
    for (int run = 0; run < 2; ++run) {
      kc_tensor* y = NULL;
      KC_CHECK_OK(kt_run(exe, x, &y));
      const float* out = kt_data(y);
      KC_CHECK(out[0] == 3.5f && out[1] == 4.5f && out[2] == 5.5f);
      kt_release(&y, 1);
    }
    KC_CHECK_INT(atomic_load(cases[i].deleted), 0);
    kc_executable_destroy(exe);
    KC_CHECK_INT(atomic_load(cases[i].deleted), 1);
  }
  kt_release(&x, 1);

  kt_register_both("kt.state_short", KT_FN(kt_state_short));
  char text[512];
  kt_one_call(text, sizeof text, "kt.state_short", 2, NULL);
  KC_CHECK_CODE(kt_compile_status(text), KC_INVALID_ARGUMENT,
                "XLA_FFI_State_Set_Args: struct_size 32, expected 40 (API 0.2) or 48 "
                "(API 0.0, 0.1, 0.3)");
}

KC_TEST(xla_ffi_registration_errors) {
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, NULL, 0),
                KC_INVALID_ARGUMENT, "handlers is NULL");
  kc_xla_ffi_handlers h;
  memset(&h, 0, sizeof h);
  h.struct_size = sizeof h;
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h, 0),
                KC_INVALID_ARGUMENT, "the execute handler is NULL");
  h.execute = KT_FN(kt_add_one);
  h.struct_size = offsetof(kc_xla_ffi_handlers, execute);
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h, 0),
                KC_INVALID_ARGUMENT, "too small to hold execute");
  h.struct_size = sizeof h;
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST,
                                                  NULL, 0),
                KC_INVALID_ARGUMENT, "the execute handler is NULL");
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT(""), KC_PLATFORM_HOST, &h, 0),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), (kc_platform)77, &h, 0),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_OK(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h, 0));
  KC_CHECK_CODE(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h, 0),
                KC_ALREADY_EXISTS, "kt.r");
  KC_CHECK_OK(kc_xcall_register_xla_ffi(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST, &h,
                                        KC_REGISTER_OVERRIDE));
  /* A kcall target of another convention may not be replaced silently. */
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.r"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_add_one), 0),
                KC_ALREADY_EXISTS, "");
  /* Flags kcall does not know are refused. */
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(KC_SV_LIT("kt.r2"), KC_PLATFORM_HOST,
                                                  KT_FN(kt_add_one), 1u << 20),
                KC_INVALID_ARGUMENT, "");
}

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

  kc_executable* exe = kt_compile_text(
      "HloModule plugin\n"
      "ENTRY main {\n"
      "  x = f32[3] parameter(0)\n"
      "  a = f32[3] custom-call(x), custom_call_target=\"kt_xla.double\", "
      "api_version=API_VERSION_TYPED_FFI\n"
      "  b = f32[3] custom-call(a), custom_call_target=\"kt_xla.offset\", "
      "api_version=API_VERSION_TYPED_FFI, backend_config={offset = 1.500000e+00 : f32}\n"
      "  ROOT c = f32[3] custom-call(b), custom_call_target=\"kt_xla.via_api\", "
      "api_version=API_VERSION_TYPED_FFI\n"
      "}\n",
      NULL);
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
