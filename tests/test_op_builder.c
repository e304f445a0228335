/* The op builder's one way of handling errors: the _v2 calls return
 * nothing, the builder keeps the first failure with its position, and
 * registration fails with it. The original calls still return their own
 * status and feed the same record. */
#include <stdio.h>

#include "kt_ops.h"

/* Registers `b` and returns the formatted status ("OK" on success), which
 * it destroys. */
static const char* kt_register_text(kc_op_builder* b, char* buf, size_t cap) {
  kc_status* st = kc_op_registry_register(b, 0);
  kt_status_text(st, buf, cap);
  kc_status_destroy(st);
  return buf;
}

KC_TEST(op_builder_v2_registers_without_a_status_per_call) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Concat2", &b));
  kc_op_builder_add_input_v2(b, "values: N * T");
  kc_op_builder_add_output_v2(b, "output: T");
  kc_op_builder_add_attr_v2(b, "N: int >= 1");
  kc_op_builder_add_attr_v2(b, "T: {f32, f64}");
  kc_op_builder_add_attr_v2(b, "axis: int = 0");
  kc_op_builder_set_flags_v2(b, KC_OP_COMMUTATIVE);
  kc_op_builder_set_doc_v2(b, "joins");
  kc_op_builder_set_shape_fn_v2(b, kc_shape_fn_unchanged, NULL, NULL);
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  const kc_op* op = kt_op("kt.Concat2");
  char sig[128];
  kc_op_format_signature(op, sig, sizeof sig);
  KC_CHECK_STR(sig, "kt.Concat2(values: N * T) -> (output: T)");
  KC_CHECK_INT(kc_op_get_attr_count(op), 3);
  KC_CHECK_STR(kc_op_get_attr_spec(op, 2), "axis: int = 0");
  /* kc_shape_fn_unchanged makes the op symbolic too. */
  KC_CHECK_INT(kc_op_get_flags(op), KC_OP_COMMUTATIVE | KC_OP_SYMBOLIC_SHAPES);
  KC_CHECK_STR(kc_op_get_doc(op), "joins");
  /* The shape function is installed: the output has input 0's shape. */
  float x[2] = {1, 2};
  kc_tensor* in = kt_tensor(kt_f32, (int64_t[]){2}, 1, x);
  const DLTensor* dl = kt_dl(in);
  kc_op_output_info info;
  int32_t n = 0;
  KC_CHECK_OK(kc_op_infer(op, &dl, 1, NULL, 0, &info, 1, &n));
  KC_CHECK_INT(info.rank, 1);
  KC_CHECK_INT(info.dims[0], 2);
  kt_release(in);
}

KC_TEST(op_builder_v2_reports_the_first_failure_with_its_position) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Bad", &b));
  kc_op_builder_add_input_v2(b, "x: T");           /* call 1 */
  kc_op_builder_add_output_v2(b, "y: T");          /* call 2 */
  kc_op_builder_set_doc_v2(b, "never registered"); /* call 3 */
  kc_op_builder_add_attr_v2(b, "N: int >= x");     /* call 4: fails */
  kc_op_builder_add_attr_v2(b, "T: {f32, f65}");   /* call 5: fails too */
  kc_op_builder_set_flags_v2(b, 1u << 9);          /* call 6: fails too */
  char text[512];
  kt_register_text(b, text, sizeof text);
  KC_CHECK_STR(text,
               "INVALID_ARGUMENT: registering op 'kt.Bad': call 4 "
               "(kc_op_builder_add_attr_v2): attr spec 'N: int >= x': "
               "column 11: expected an integer, got 'x'");
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt.Bad"), &op), KC_NOT_FOUND,
                "");
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("op.kt.Bad"), &f),
                KC_NOT_FOUND, "");

  /* A failure's own code is kept: flags come first here. */
  KC_CHECK_OK(kc_op_builder_create("kt.Bad", &b));
  kc_op_builder_set_flags_v2(b, 1u << 9);
  kc_op_builder_add_input_v2(b, "x: f32");
  kt_register_text(b, text, sizeof text);
  KC_CHECK_STR(text,
               "INVALID_ARGUMENT: registering op 'kt.Bad': call 1 "
               "(kc_op_builder_set_flags_v2): unknown flag bits 0x200");

  /* NULL specs are failures of the call that passed them. */
  KC_CHECK_OK(kc_op_builder_create("kt.Bad", &b));
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_add_output_v2(b, NULL);
  kt_register_text(b, text, sizeof text);
  KC_CHECK_CONTAINS(text,
                    "call 2 (kc_op_builder_add_output_v2): "
                    "kc_op_builder_add_output_v2: spec is NULL");

  /* A NULL builder has nowhere to record anything: the calls do nothing,
   * and registering it fails. */
  kc_op_builder_add_input_v2(NULL, "x: f32");
  kc_op_builder_set_doc_v2(NULL, "doc");
  KC_CHECK_CODE(kc_op_registry_register(NULL, 0), KC_INVALID_ARGUMENT,
                "builder is NULL");
}

KC_TEST(op_builder_original_calls_count_and_return_their_own_status) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Mixed", &b));
  KC_CHECK_OK(kc_op_builder_add_input(b, "x: f32"));
  kc_op_builder_add_output_v2(b, "y: f32");
  /* The original call answers at once, naming the op, and the builder
   * records the failure with its position as well. */
  KC_CHECK_CODE(kc_op_builder_add_attr(b, "x: int"), KC_INVALID_ARGUMENT,
                "op 'kt.Mixed': 'x' is already the name of an input");
  kc_op_builder_add_attr_v2(b, "y: itn");
  char text[512];
  kt_register_text(b, text, sizeof text);
  KC_CHECK_STR(text,
               "INVALID_ARGUMENT: registering op 'kt.Mixed': call 3 "
               "(kc_op_builder_add_attr): 'x' is already the name of an "
               "input");
  /* The code is not repeated inside the message. */
  KC_CHECK(strstr(text + 1, "INVALID_ARGUMENT") == NULL);
}
