/* XLA FFI handlers run by kcall's program runtime: call frames (attributes,
 * buffers and tuples) and errors. Stages, state and versions:
 * test_xla_ffi_state.c; the execution context, futures, memory, the API
 * table, threads and plugins: test_xla_ffi_runtime.c. The handlers are
 * written in C against kcall's declarations of XLA's C API, as XLA's C++
 * headers would compile them. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "kt_xla_ffi_test.h"

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
