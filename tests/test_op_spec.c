/* The spec grammar (docs/ops.md): every construct accepted, every error
 * refused with its column and what was expected, and the checks made when
 * an op is registered. */
#include <stdio.h>
#include <stdlib.h>

#include "kt_ops.h"

/* Adds one attr spec to a fresh builder and returns the status. */
static kc_status* kt_attr(const char* spec) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Spec", &b));
  kc_status* st = kc_op_builder_add_attr(b, spec);
  kc_op_builder_destroy(b);
  return st;
}

static kc_status* kt_input(const char* spec) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Spec", &b));
  kc_status* st = kc_op_builder_add_input(b, spec);
  kc_op_builder_destroy(b);
  return st;
}

/* Registers an op with one attr and returns its normalised spec. */
static const char* kt_attr_roundtrip(const char* name, const char* spec) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create(name, &b));
  KC_CHECK_OK(kc_op_builder_add_attr(b, spec));
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  const kc_op* op = kt_op(name);
  KC_CHECK_INT(kc_op_get_attr_count(op), 1);
  return kc_op_get_attr_spec(op, 0);
}

KC_TEST(op_spec_accepts_every_attr_construct) {
  static const char* const ok[] = {
      "a: int",
      "a: float",
      "a: bool",
      "a: string",
      "a: type",
      "a: shape",
      "a: list(int)",
      "a: list(float)",
      "a: list(bool)",
      "a: list(string)",
      "a: list(type)",
      "a: list(shape)",
      "T: {f32, f64, i32}",
      "T: {float32, int64, bool, bf16, c64}",
      "T: numeric",
      "T: integer",
      "T: signed",
      "T: unsigned",
      "T: complex",
      "T: any",
      "T: floating",
      "T: {floating}",
      "T: {floating, integer, bool}",
      "T: {float16, float32, float64, bfloat16, int32, uint8, bool_}",
      "T: type = float32",
      "T: list(floating) = [f16, bf16]",
      "T: list({f32, i32})",
      "L: list(numeric) >= 1",
      "p: {'same', 'valid'}",
      "p: {\"same\"}",
      "N: int >= 1",
      "N: int <= 4",
      "N: int >= -2 <= 4",
      "N: int <= 4 >= 1",
      "l: list(int) >= 2",
      "l: list(int) >= 1 <= 3 = [1, 2]",
      "a: int = 3",
      "a: int = -3",
      "a: int = +3",
      "a: int >= 1 = 3",
      "a: float = 1.5",
      "a: float = -2e3",
      "a: float = .5",
      "a: float = 2",
      "a: float = inf",
      "a: float = -inf",
      "a: float = nan",
      "a: bool = true",
      "a: bool = false",
      "a: string = 'same'",
      "a: string = \"it's\"",
      "a: string = 'it\\'s'",
      "a: string = ''",
      "a: type = f32",
      "a: type = float64",
      "T: {f32, f64} = f64",
      "a: shape = [2, 3]",
      "a: shape = [2, ?]",
      "a: shape = []",
      "a: list(int) = []",
      "a: list(int) = [1, -2, 3]",
      "a: list(float) = [1.5, 2]",
      "a: list(bool) = [true, false]",
      "a: list(string) = ['a', \"b\"]",
      "a: list(type) = [f32, i64]",
      "a: list(shape) = [[1], [2, ?]]",
      "p: {'same', 'valid'} = 'valid'",
      "  spaced :   int   >=   0   =   4  ",
  };
  for (size_t i = 0; i < sizeof ok / sizeof *ok; ++i) {
    kc_status* st = kt_attr(ok[i]);
    if (st) {
      char text[512];
      kt__fail(__FILE__, __LINE__, "spec \"%s\" refused: %s", ok[i],
               kt_status_text(st, text, sizeof text));
      kc_status_destroy(st);
    }
  }
  KC_CHECK_STR(kt_attr_roundtrip("kt.A", "  spaced :   int   >=   0   =   4  "),
               "spaced : int >= 0 = 4");
  KC_CHECK_STR(kt_attr_roundtrip("kt.B", "T: {f32,\tf64}"), "T: {f32, f64}");
}

KC_TEST(op_spec_accepts_every_arg_construct) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Args", &b));
  KC_CHECK_OK(kc_op_builder_add_input(b, "a: T"));
  KC_CHECK_OK(kc_op_builder_add_input(b, "b: f32"));
  KC_CHECK_OK(kc_op_builder_add_input(b, "c: N * T"));
  KC_CHECK_OK(kc_op_builder_add_input(b, "d: M * i64"));
  KC_CHECK_OK(kc_op_builder_add_input(b, "e: L"));
  KC_CHECK_OK(kc_op_builder_add_output(b, "out:T"));
  /* Attrs may come after the args that name them. */
  KC_CHECK_OK(kc_op_builder_add_attr(b, "T: type"));
  KC_CHECK_OK(kc_op_builder_add_attr(b, "N: int >= 0"));
  KC_CHECK_OK(kc_op_builder_add_attr(b, "M: int = 1"));
  KC_CHECK_OK(kc_op_builder_add_attr(b, "L: list(type)"));
  KC_CHECK_OK(kc_op_builder_set_flags(b, KC_OP_STATEFUL | KC_OP_COMMUTATIVE));
  KC_CHECK_OK(kc_op_builder_set_doc(b, "Takes every kind of arg."));
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  const kc_op* op = kt_op("kt.Args");
  char sig[256];
  kc_op_format_signature(op, sig, sizeof sig);
  KC_CHECK_STR(sig,
               "kt.Args(a: T, b: f32, c: N * T, d: M * i64, e: L) -> "
               "(out:T)");
  KC_CHECK_INT(kc_op_get_input_count(op), 5);
  KC_CHECK_INT(kc_op_get_output_count(op), 1);
  KC_CHECK_INT(kc_op_get_flags(op), KC_OP_STATEFUL | KC_OP_COMMUTATIVE);
  KC_CHECK_STR(kc_op_get_doc(op), "Takes every kind of arg.");
  KC_CHECK(kc_op_get_input_spec(op, 5) == NULL);
  KC_CHECK(kc_op_get_attr_spec(op, -1) == NULL);
  /* Its function is registered with it. */
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("op.kt.Args"), &f));
}

/* Every error: spec, then what the status must say. */
typedef struct kt_bad_spec {
  const char* spec;
  const char* message;
} kt_bad_spec;

KC_TEST(op_spec_refuses_malformed_attrs) {
  static const kt_bad_spec bad[] = {
      {"",
       "attr spec '': column 1: expected an attr name, got the end of "
       "the spec"},
      {"1x: int", "column 1: expected an attr name, got '1'"},
      {"x int", "column 3: expected ':' after the name, got 'int'"},
      {"x: itn",
       "column 4: expected a kind (int, float, bool, string, type, "
       "shape, list(...), {...} or a type class), got 'itn'"},
      {"x: float32", "column 4: expected a kind"},
      {"x: list(",
       "column 9: expected an item kind (int, float, bool, "
       "string, type, shape, {...} or a type class), got the end "
       "of the spec"},
      {"x: list int", "column 9: expected '(' after list, got 'int'"},
      {"x: list(int", "column 12: expected ')' closing list(, got the end"},
      {"x: list(list(int))", "column 9: expected an item kind"},
      {"T: {f32, f65}",
       "column 10: expected a dtype or a type class "
       "(numeric, integer, signed, unsigned, floating, complex, "
       "any), got 'f65'"},
      {"T: {f32 f64}", "column 9: expected ',' or '}', got 'f64'"},
      {"T: {f32,", "column 9: expected a dtype or a type class"},
      {"T: {}", "column 5: expected a dtype or a type class"},
      {"T: {f32x4}",
       "column 5: 'f32x4' cannot be in a type set (only scalar "
       "dtypes can)"},
      {"p: {'a', b}", "column 10: expected a quoted string, got 'b'"},
      {"p: {'a", "column 5: unterminated string (no closing ')"},
      {"x: float >= 1",
       "column 10: bounds apply only to int and list attrs, "
       "not to float"},
      {"x: int >= 1 >= 2", "column 13: a second '>=' bound"},
      {"x: int >= x", "column 11: expected an integer, got 'x'"},
      {"x: int >= 3 <= 1", "the bounds leave no value (3 > 1)"},
      {"l: list(int) >= -1", "column 14: a list length bound must be >= 0"},
      {"x: int = 1.5", "column 10: expected an integer, got '1.5'"},
      {"x: int = 99999999999999999999",
       "column 10: integer out of the range of int64"},
      {"x: int =", "column 9: expected an integer, got the end of the spec"},
      {"x: int >= 2 = 1",
       "attr spec 'x: int >= 2 = 1': the default: attr "
       "'x': the value must be >= 2, got 1"},
      {"x: int <= 2 = 3", "the value must be <= 2, got 3"},
      {"x: float = one", "column 12: expected a number, got 'one'"},
      {"x: bool = yes", "column 11: expected true or false, got 'yes'"},
      {"x: string = same", "column 13: expected a quoted string, got 'same'"},
      {"x: string = 'abc", "column 13: unterminated string"},
      {"x: type = f65",
       "column 11: expected a dtype (f32, i64, bool, ...), "
       "got 'f65'"},
      {"T: {f32} = f64",
       "the default: attr 'T': expected one of {f32}, got "
       "f64"},
      {"s: shape = [2, -1]",
       "column 16: expected a dimension (an integer >= "
       "0, or ?), got '-'"},
      {"s: shape = 2", "column 12: expected '[' starting a shape, got '2'"},
      {"x: list(int) = [1 2]", "column 19: expected ',' or ']', got '2'"},
      {"x: list(int) = 1", "column 16: expected '[' starting a list, got '1'"},
      {"x: list(int) >= 3 = [1]", "the length must be >= 3, got 1"},
      {"x: int = 3 4", "column 12: expected the end of the spec, got '4'"},
      {"x: int $",
       "column 8: expected '=', '>=', '<=' or the end of the "
       "spec, got '$'"},
      {"p: {'a', 'b'} = 'c'",
       "attr 'p': 'c' is not one of the allowed "
       "values ('a', 'b')"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    kc_status* st = kt_attr(bad[i].spec);
    char text[1024];
    kt_status_text(st, text, sizeof text);
    if (kc_status_get_code(st) != KC_INVALID_ARGUMENT ||
        !strstr(text, bad[i].message)) {
      kt__fail(__FILE__, __LINE__, "spec \"%s\": got \"%s\", wanted \"%s\"",
               bad[i].spec, text, bad[i].message);
    }
    kc_status_destroy(st);
  }
}

KC_TEST(op_spec_refuses_malformed_args) {
  static const kt_bad_spec bad[] = {
      {"x",
       "input spec 'x': column 2: expected ':' after the name, got the "
       "end of the spec"},
      {"x:",
       "column 3: expected a type (a type attr, a dtype, N * T or a "
       "list(type) attr), got the end of the spec"},
      {"x: N *",
       "column 7: expected a type (a type attr or a dtype), got "
       "the end of the spec"},
      {"x: T U", "column 6: expected '*' or the end of the spec, got 'U'"},
      {"x: N * T * U", "column 10: expected the end of the spec, got '*'"},
      {"x: 3 * T", "column 4: expected a type"},
      {": T", "column 1: expected an arg name, got ':'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    kc_status* st = kt_input(bad[i].spec);
    char text[1024];
    kt_status_text(st, text, sizeof text);
    if (kc_status_get_code(st) != KC_INVALID_ARGUMENT ||
        !strstr(text, bad[i].message)) {
      kt__fail(__FILE__, __LINE__, "spec \"%s\": got \"%s\", wanted \"%s\"",
               bad[i].spec, text, bad[i].message);
    }
    kc_status_destroy(st);
  }
}

/* Registers name with the given specs; returns the status. */
static kc_status* kt_try_register(const char* name, const char* const* inputs,
                                  const char* const* outputs,
                                  const char* const* attrs) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create(name, &b));
  for (size_t i = 0; inputs && inputs[i]; ++i) {
    KC_CHECK_OK(kc_op_builder_add_input(b, inputs[i]));
  }
  for (size_t i = 0; outputs && outputs[i]; ++i) {
    KC_CHECK_OK(kc_op_builder_add_output(b, outputs[i]));
  }
  for (size_t i = 0; attrs && attrs[i]; ++i) {
    KC_CHECK_OK(kc_op_builder_add_attr(b, attrs[i]));
  }
  return kc_op_registry_register(b, 0);
}

/* C's int and long, wherever a spec or a value takes a type word: refused
 * with their column and the exact alternatives (TensorFlow's language has
 * neither, and C leaves long's width open). */
KC_TEST(op_spec_refuses_ambiguous_type_words) {
  static const struct {
    const char* spec;
    const char* message;
  } cases[] = {
      {"T: {int}",
       "attr spec 'T: {int}': column 5: type word 'int' is ambiguous: write "
       "i32 (or int32) for that one dtype, or 'signed' for {i8, i16, i32, i64}"},
      {"T: list({f32, long})",
       "column 15: type word 'long' is ambiguous: write i64 (or int64) for "
       "that one dtype, or 'signed' for {i8, i16, i32, i64}"},
      {"T: type = int", "column 11: type word 'int' is ambiguous: write i32"},
      {"L: list(type) = [f32, int]", "column 23: type word 'int' is ambiguous"},
      {"T: type = longx4",
       "column 11: type word 'longx4' is ambiguous: write i64x4 (or int64x4) "
       "for that one dtype"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    KC_CHECK_CODE(kt_attr(cases[i].spec), KC_INVALID_ARGUMENT, cases[i].message);
  }
  /* In args, at registration, unless an attr has the name. */
  KC_CHECK_CODE(kt_try_register("kt.W1", KT_SPECS("x: int"), NULL, NULL),
                KC_INVALID_ARGUMENT,
                "registering op 'kt.W1': op 'kt.W1': input 'x: int': column 4: "
                "type word 'int' is ambiguous: write i32 (or int32)");
  KC_CHECK_CODE(kt_try_register("kt.W2", NULL, KT_SPECS("ys: N * long"),
                                KT_SPECS("N: int")),
                KC_INVALID_ARGUMENT,
                "output 'ys: N * long': column 9: type word 'long' is ambiguous");
  /* In values given to a call: as a string, and as text for op.NAME. */
  kt_register_op("kt.W4", NULL, NULL, KT_SPECS("T: {i32, i64}"), NULL);
  const kc_op* op = kt_op("kt.W4");
  kc_op_attr given = {KC_SV_LIT("T"), kc_any_cstr("long")};
  int32_t n = 0;
  KC_CHECK_CODE(kc_op_infer(op, NULL, 0, &given, 1, NULL, 0, &n), KC_INVALID_ARGUMENT,
                "calling op 'kt.W4': attr 'T': type word 'long' is ambiguous: "
                "write i64 (or int64)");
  given.value = kc_any_cstr("int64");
  KC_CHECK_OK(kc_op_infer(op, NULL, 0, &given, 1, NULL, 0, &n));
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("op.kt.W4"), &f));
  kc_any arg = kc_any_cstr("T=int"), ret = kc_any_none();
  KC_CHECK_CODE(kc_func_call(f, &arg, 1, &ret), KC_INVALID_ARGUMENT,
                "argument 0: attr 'T' (type): value 'int': column 1: type word "
                "'int' is ambiguous");
}

/* The set the type attr `attr` of `op` allows, as the refusal of opaque64
 * (in no set but `any`) prints it; checks the refusal's text. */
static void kt_check_set(const kc_op* op, const char* attr, const char* set) {
  kc_op_attr given = {kc_sv(attr), kc_any_cstr("opaque64")};
  kc_op_output_info out[8];
  int32_t n = 0;
  char want[320];
  snprintf(want, sizeof want, "attr '%s': expected one of %s, got opaque64",
           attr, set);
  KC_CHECK_CODE(kc_op_infer(op, NULL, 0, &given, 1, out, 8, &n),
                KC_INVALID_ARGUMENT, want);
}

/* TensorFlow's dtype names mean TensorFlow's one dtype each, in a set, an
 * arg and a value; its DT_ enum names too. */
KC_TEST(op_spec_takes_tensorflow_dtype_names) {
  static const struct {
    const char* word;
    const char* dtype;
  } names[] = {
      {"float", "f32"},       {"double", "f64"},
      {"half", "f16"},        {"bfloat16", "bf16"},
      {"int8", "i8"},         {"int16", "i16"},
      {"int32", "i32"},       {"int64", "i64"},
      {"uint8", "u8"},        {"uint16", "u16"},
      {"uint32", "u32"},      {"uint64", "u64"},
      {"complex64", "c64"},   {"complex128", "c128"},
      {"bool", "bool"},       {"float8_e5m2", "f8e5m2"},
      {"float8_e4m3fn", "f8e4m3fn"}, {"float8_e4m3fnuz", "f8e4m3fnuz"},
      {"float8_e4m3b11fnuz", "f8e4m3b11fnuz"},
      {"float8_e5m2fnuz", "f8e5m2fnuz"},
      {"DT_FLOAT", "f32"},    {"DT_HALF", "f16"},
      {"DT_UINT16", "u16"},   {"DT_COMPLEX128", "c128"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    char name[64], set[64], arg[64], dflt[64], want[64];
    snprintf(name, sizeof name, "kt.TF.%s", names[i].word);
    snprintf(set, sizeof set, "T: {%s}", names[i].word);
    snprintf(dflt, sizeof dflt, "U: type = %s", names[i].word);
    snprintf(arg, sizeof arg, "y: %s", names[i].word);
    kt_register_op(name, NULL, KT_SPECS("z: U", arg), KT_SPECS(set, dflt), NULL);
    const kc_op* op = kt_op(name);
    snprintf(want, sizeof want, "{%s}", names[i].dtype);
    kt_check_set(op, "T", want);
    /* The default and the fixed arg, as the outputs' dtypes. */
    kc_op_attr t = {KC_SV_LIT("T"), kc_any_cstr(names[i].word)};
    kc_op_output_info out[2];
    int32_t n = 0;
    KC_CHECK_OK(kc_op_infer(op, NULL, 0, &t, 1, out, 2, &n));
    KC_CHECK_INT(n, 2);
    for (int32_t k = 0; k < 2; ++k) {
      char got[32];
      kc_dtype_format(out[k].dtype, got, sizeof got);
      KC_CHECK_STR(got, names[i].dtype);
    }
  }
}

/* The seed's op, spelt as the seed spells it, registers and means
 * TensorFlow's dtypes; so does the common "T: {float, int32}". */
KC_TEST(op_spec_registers_the_seeds_tensorflow_op) {
  /* TensorFlow's Bitcast lists the quantized dtypes too, which kcall does
   * not have; the rest is its list as written. */
  const char* types =
      "{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, "
      "uint64, int8, int16, complex64, complex128}";
  char t_spec[200], type_spec[200];
  snprintf(t_spec, sizeof t_spec, "T: %s", types);
  snprintf(type_spec, sizeof type_spec, "type: %s", types);
  kt_register_op("kt.Bitcast", KT_SPECS("input: T"), KT_SPECS("output: type"),
                 KT_SPECS(t_spec, type_spec), NULL);
  const kc_op* op = kt_op("kt.Bitcast");
  const char* set =
      "{i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, bf16, c64, c128}";
  kt_check_set(op, "T", set);
  kt_check_set(op, "type", set);
  float data[2] = {1, 2};
  int64_t shape[1] = {2};
  DLTensor x = {.data = data, .device = {kDLCPU, 0}, .ndim = 1,
                .dtype = kc_dtype_make(kDLFloat, 32, 1), .shape = shape};
  const DLTensor* in[1] = {&x};
  kc_op_attr type = {KC_SV_LIT("type"), kc_any_cstr("int32")};
  kc_op_output_info out[1];
  int32_t n = 0;
  KC_CHECK_OK(kc_op_infer(op, in, 1, &type, 1, out, 1, &n));
  KC_CHECK(out[0].dtype.code == kDLInt && out[0].dtype.bits == 32);

  kt_register_op("kt.TF.FloatInt", KT_SPECS("x: T"), KT_SPECS("y: T"),
                 KT_SPECS("T: {float, int32} = DT_FLOAT"), NULL);
  kt_check_set(kt_op("kt.TF.FloatInt"), "T", "{i32, f32}");
  /* f64 is not float: refused, not widened. */
  double wide[2] = {1, 2};
  x.data = wide;
  x.dtype = kc_dtype_make(kDLFloat, 64, 1);
  KC_CHECK_CODE(kc_op_infer(kt_op("kt.TF.FloatInt"), in, 1, NULL, 0, out, 1, &n),
                KC_INVALID_ARGUMENT, "expected one of {i32, f32}, got f64");
  /* A default in TensorFlow's enum spelling, also in a list. */
  kt_register_op("kt.TF.Defaults", NULL, KT_SPECS("y: T", "zs: L"),
                 KT_SPECS("T: {half, bfloat16, float, double} = DT_FLOAT",
                          "L: list(type) = [DT_INT32, DT_DOUBLE]"),
                 NULL);
  kc_op_output_info outs[3];
  KC_CHECK_OK(kc_op_infer(kt_op("kt.TF.Defaults"), NULL, 0, NULL, 0, outs, 3, &n));
  KC_CHECK_INT(n, 3);
  KC_CHECK(outs[0].dtype.code == kDLFloat && outs[0].dtype.bits == 32);
  KC_CHECK(outs[1].dtype.code == kDLInt && outs[1].dtype.bits == 32);
  KC_CHECK(outs[2].dtype.code == kDLFloat && outs[2].dtype.bits == 64);
}

/* TensorFlow dtypes kcall has no dtype for, and its quantizedtype and
 * reference types, are refused by name wherever a type word goes. */
KC_TEST(op_spec_refuses_tensorflow_dtypes_kcall_lacks) {
  static const struct {
    const char* spec;
    const char* message;
  } cases[] = {
      {"T: {float, string}",
       "attr spec 'T: {float, string}': column 12: type word 'string' is "
       "TensorFlow's string, which kcall has no dtype for: kcall tensors hold "
       "numbers, not strings"},
      {"T: {int8, qint8}",
       "column 11: type word 'qint8' is TensorFlow's qint8, which kcall has no "
       "dtype for: kcall has no quantized dtypes"},
      {"T: quantizedtype",
       "column 4: type word 'quantizedtype' is TensorFlow's {qint8, quint8, "
       "qint16, quint16, qint32}, which kcall has no dtypes for"},
      {"T: {numbertype, quantizedtype}", "column 17: type word 'quantizedtype'"},
      {"T: type = DT_STRING",
       "column 11: type word 'DT_STRING' is TensorFlow's string"},
      {"L: list(type) = [float, resource]",
       "column 25: type word 'resource' is TensorFlow's resource, which kcall "
       "has no dtype for: kcall has no resource handles"},
      {"T: {uint4}", "type word 'uint4' is TensorFlow's uint4"},
      {"T: {float_ref}",
       "column 5: type word 'float_ref' is a TensorFlow reference type, which "
       "kcall does not have: write the dtype, float"},
      /* Enum names are upper case, as TensorFlow writes them. */
      {"T: type = DT_Float", "column 11: expected a dtype"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    KC_CHECK_CODE(kt_attr(cases[i].spec), KC_INVALID_ARGUMENT, cases[i].message);
  }
  KC_CHECK_CODE(kt_try_register("kt.TFR1", KT_SPECS("x: string"), NULL, NULL),
                KC_INVALID_ARGUMENT,
                "input 'x: string': column 4: type word 'string' is TensorFlow's "
                "string");
  kt_register_op("kt.TFR2", NULL, NULL, KT_SPECS("T: type"), NULL);
  kc_op_attr given = {KC_SV_LIT("T"), kc_any_cstr("quint8")};
  int32_t n = 0;
  KC_CHECK_CODE(kc_op_infer(kt_op("kt.TFR2"), NULL, 0, &given, 1, NULL, 0, &n),
                KC_INVALID_ARGUMENT,
                "calling op 'kt.TFR2': attr 'T': type word 'quint8' is "
                "TensorFlow's quint8");
}

/* What each class word stands for, exactly (docs/ops.md has the table). */
KC_TEST(op_spec_type_classes_are_exact) {
  static const struct {
    const char* word;
    const char* set; /* NULL: every dtype */
  } classes[] = {
      {"signed", "{i8, i16, i32, i64}"},
      {"unsigned", "{u8, u16, u32, u64}"},
      {"integer", "{i8, i16, i32, i64, u8, u16, u32, u64}"},
      {"floating", "{f16, f32, f64, bf16}"},
      {"complex", "{c64, c128}"},
      {"numeric", "{i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, bf16, "
                  "c64, c128}"},
      {"any", NULL},
      /* TensorFlow's shorthands, with TensorFlow's sets (numbertype's
       * quantized dtypes are not kcall's). */
      {"numbertype", "{i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, "
                     "bf16, c64, c128}"},
      {"numerictype", "{i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, "
                      "bf16, c64, c128}"},
      {"realnumbertype", "{i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, "
                         "f64, bf16}"},
      {"realnumerictype", "{i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, "
                          "f64, bf16}"},
  };
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; ++i) {
    char name[32], spec[32], braced[40];
    snprintf(name, sizeof name, "kt.Class.%s", classes[i].word);
    snprintf(spec, sizeof spec, "T: %s", classes[i].word);
    snprintf(braced, sizeof braced, "U: {%s}", classes[i].word);
    kt_register_op(name, NULL, NULL, KT_SPECS(spec, braced), NULL);
    const kc_op* op = kt_op(name);
    /* opaque64 is in no class but `any`, so the message lists the set. */
    kc_op_attr attrs[2] = {{KC_SV_LIT("T"), kc_any_cstr("opaque64")},
                           {KC_SV_LIT("U"), kc_any_cstr("f32")}};
    int32_t n = 0;
    kc_status* st = kc_op_infer(op, NULL, 0, attrs, 2, NULL, 0, &n);
    if (!classes[i].set) {
      KC_CHECK_OK(st);
      continue;
    }
    char want[256];
    snprintf(want, sizeof want, "attr 'T': expected one of %s, got opaque64",
             classes[i].set);
    KC_CHECK_CODE(st, KC_INVALID_ARGUMENT, want);
    /* In braces, the same set. */
    attrs[1].value = kc_any_cstr("opaque64");
    snprintf(want, sizeof want, "attr 'U': expected one of %s, got opaque64",
             classes[i].set);
    KC_CHECK_CODE(kc_op_infer(op, NULL, 0, &attrs[1], 1, NULL, 0, &n),
                  KC_INVALID_ARGUMENT, want);
  }
}

KC_TEST(op_spec_refuses_definitions_that_do_not_hold_together) {
  KC_CHECK_CODE(kt_try_register("kt.R1", KT_SPECS("x: Q"), NULL, NULL),
                KC_INVALID_ARGUMENT,
                "registering op 'kt.R1': op 'kt.R1': input 'x: Q': 'Q' names "
                "neither an attr of the op nor a dtype");
  KC_CHECK_CODE(kt_try_register("kt.R2", KT_SPECS("x: N * T"), NULL,
                                KT_SPECS("N: float", "T: type")),
                KC_INVALID_ARGUMENT,
                "input 'x: N * T': 'N' must name an int attr");
  KC_CHECK_CODE(
      kt_try_register("kt.R3", KT_SPECS("x: N * T"), NULL, KT_SPECS("T: type")),
      KC_INVALID_ARGUMENT, "but the op has no such attr");
  KC_CHECK_CODE(
      kt_try_register("kt.R4", NULL, KT_SPECS("y: N"), KT_SPECS("N: int")),
      KC_INVALID_ARGUMENT,
      "output 'y: N': 'N' is an int attr; the type of an arg must "
      "be a type attr, a list(type) attr or a dtype");
  KC_CHECK_CODE(kt_try_register("kt.R5", KT_SPECS("x: N * L"), NULL,
                                KT_SPECS("N: int", "L: list(type)")),
                KC_INVALID_ARGUMENT,
                "'L' is a list(type) attr; the type of N * T must be a type "
                "attr or a dtype");
  /* Nothing of a refused op remains. */
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt.R1"), &op), KC_NOT_FOUND,
                "kt.R1");
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("op.kt.R1"), &f),
                KC_NOT_FOUND, "");
}

KC_TEST(op_spec_names_must_be_unique) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Dup", &b));
  KC_CHECK_OK(kc_op_builder_add_input(b, "x: f32"));
  KC_CHECK_CODE(kc_op_builder_add_output(b, "x: f32"), KC_INVALID_ARGUMENT,
                "op 'kt.Dup': 'x' is already the name of an input");
  KC_CHECK_CODE(kc_op_builder_add_attr(b, "x: int"), KC_INVALID_ARGUMENT,
                "'x' is already the name of an input");
  /* The builder remembers its first error and registration replays it,
   * once: the code is not repeated inside the message. */
  kc_status* replayed = kc_op_registry_register(b, 0);
  char text[512];
  kt_status_text(replayed, text, sizeof text);
  KC_CHECK(strstr(text, "INVALID_ARGUMENT: registering op 'kt.Dup'") == text);
  KC_CHECK_CONTAINS(text, "'x' is already the name of an input");
  KC_CHECK(strstr(text + 1, "INVALID_ARGUMENT") == NULL);
  kc_status_destroy(replayed);
  KC_CHECK_OK(kc_op_builder_create("kt.Dup", &b));
  KC_CHECK_OK(kc_op_builder_add_attr(b, "a: int"));
  KC_CHECK_CODE(kc_op_builder_add_attr(b, "a: float"), KC_INVALID_ARGUMENT,
                "'a' is already the name of an attr");
  KC_CHECK_CODE(kc_op_builder_add_input(b, NULL), KC_INVALID_ARGUMENT,
                "spec is NULL");
  KC_CHECK_CODE(kc_op_builder_set_flags(b, 1u << 9), KC_INVALID_ARGUMENT,
                "unknown flag bits 0x200");
  kc_op_builder_destroy(b);
}

KC_TEST(op_spec_messages_quote_and_bound_the_spec) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Quote", &b));
  /* Bytes that would not print are escaped, in the spec and the token. */
  KC_CHECK_CODE(kc_op_builder_add_attr(b, "x: in\x01t"), KC_INVALID_ARGUMENT,
                "attr spec 'x: in\\x01t': column 4: expected a kind",
                "got 'in'");
  KC_CHECK_CODE(kc_op_builder_add_attr(b, "mode: {'a', 'b'} = 'c\td'"),
                KC_INVALID_ARGUMENT,
                "'c\\td' is not one of the allowed values ('a', 'b')");
  KC_CHECK_CODE(kc_op_builder_add_input(b, "x\x1b: f32"), KC_INVALID_ARGUMENT,
                "input spec 'x\\x1b: f32': column 2: expected ':' after the name, "
                "got '\\x1b'");
  /* A megabyte spec: both it and the token are cut, the explanation is
   * whole. */
  size_t mb = (size_t)1 << 20;
  char* spec = malloc(mb + 4);
  KC_CHECK(spec != NULL);
  memcpy(spec, "x: ", 3);
  memset(spec + 3, 'q', mb);
  spec[mb + 3] = '\0';
  kc_status* st = kc_op_builder_add_attr(b, spec);
  char text[1024];
  size_t len = kc_status_format(st, text, sizeof text);
  kc_status_destroy(st);
  KC_CHECK(len < 600);
  KC_CHECK_CONTAINS(text, "attr spec 'x: qqqq");
  KC_CHECK_CONTAINS(text, "qqqq' (1048579 bytes): column 4: expected a kind (int, "
                          "float, bool, string, type, shape, list(...), {...} or "
                          "a type class), got 'qqqq");
  KC_CHECK(len > 21 && strcmp(text + len - 21, "qqqq' (1048576 bytes)") == 0);
  free(spec);
  kc_op_builder_destroy(b);
}

KC_TEST(op_spec_op_names_and_conflicts) {
  kc_op_builder* b = NULL;
  KC_CHECK_CODE(kc_op_builder_create("bad name", &b), KC_INVALID_ARGUMENT,
                "byte 3 (0x20)");
  KC_CHECK_CODE(kc_op_builder_create("", &b), KC_INVALID_ARGUMENT, "empty");
  char long_name[260];
  memset(long_name, 'a', 253);
  long_name[253] = '\0';
  KC_CHECK_CODE(kc_op_builder_create(long_name, &b), KC_INVALID_ARGUMENT,
                "expected at most 252 bytes");
  kt_register_op("kt.Twice", KT_SPECS("x: f32"), KT_SPECS("y: f32"), NULL,
                 NULL);
  KC_CHECK_OK(kc_op_builder_create("kt.Twice", &b));
  KC_CHECK_CODE(kc_op_registry_register(b, 0), KC_ALREADY_EXISTS,
                "an op named 'kt.Twice' is already registered");
  /* Overriding replaces the op and its function together. */
  KC_CHECK_OK(kc_op_builder_create("kt.Twice", &b));
  KC_CHECK_OK(kc_op_builder_add_input(b, "x: i32"));
  KC_CHECK_OK(kc_op_registry_register(b, KC_REGISTER_OVERRIDE));
  KC_CHECK_STR(kc_op_get_input_spec(kt_op("kt.Twice"), 0), "x: i32");
  /* A function already named op.NAME blocks the op: neither is added. */
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("op.kt.Twice"), &f));
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("op.kt.Taken"), f, 0));
  KC_CHECK_OK(kc_op_builder_create("kt.Taken", &b));
  KC_CHECK_CODE(kc_op_registry_register(b, 0), KC_ALREADY_EXISTS,
                "a function named 'op.kt.Taken'");
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt.Taken"), &op), KC_NOT_FOUND,
                "");
  kc_array* names = NULL;
  KC_CHECK_OK(kc_op_registry_list(kt_alloc(), KC_SV_LIT("kt."), &names));
  KC_CHECK_INT(kc_array_get_size(names), 1);
  kc_object_release(KC_OBJECT(names));
}

KC_TEST(op_attr_default_is_read_back) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Defaults", &b));
  kc_op_builder_add_attr_v2(b, "lo: float = -inf");
  kc_op_builder_add_attr_v2(b, "n: int");
  kc_op_builder_add_attr_v2(b, "T: type = DT_FLOAT");
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  const kc_op* op = kt_op("kt.Defaults");
  const kc_any* lo = kc_op_get_attr_default(op, 0);
  KC_CHECK(lo && lo->type_index == KC_TYPE_FLOAT && lo->u.v_float64 < -1e308);
  KC_CHECK(kc_op_get_attr_default(op, 1) == NULL);
  const kc_any* t = kc_op_get_attr_default(op, 2);
  KC_CHECK(t && t->type_index == KC_TYPE_DTYPE && t->u.v_dtype.code == kDLFloat);
  KC_CHECK(kc_op_get_attr_default(op, 3) == NULL);
  KC_CHECK(kc_op_get_attr_default(NULL, 0) == NULL);
  kc_op_registry_reset();
}
