/* Batching rules (op.h, "Batching"): declared on the builder, read back
 * from the op, sequential by default, and a value that is no rule refused
 * with the call's position; typed targets declare theirs as signature
 * flags. */
#include "kt_ops.h"

static kc_status* kt_batch_register(const char* name, int rule, bool declare) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create(name, &b));
  kc_op_builder_add_input_v2(b, "x: f32");
  kc_op_builder_add_output_v2(b, "y: f32");
  if (declare) kc_op_builder_set_batching(b, (kc_op_batching)rule);
  return kc_op_registry_register(b, 0);
}

KC_TEST(op_batching_is_read_back) {
  KC_CHECK_OK(kt_batch_register("kt.Plain", 0, false));
  KC_CHECK_OK(kt_batch_register("kt.Loop", KC_OP_BATCH_SEQUENTIAL, true));
  KC_CHECK_OK(kt_batch_register("kt.Each", KC_OP_BATCH_ELEMENTWISE, true));
  KC_CHECK_OK(kt_batch_register("kt.Never", KC_OP_BATCH_NONE, true));
  KC_CHECK_INT(kc_op_get_batching(kt_op("kt.Plain")), KC_OP_BATCH_SEQUENTIAL);
  KC_CHECK_INT(kc_op_get_batching(kt_op("kt.Loop")), KC_OP_BATCH_SEQUENTIAL);
  KC_CHECK_INT(kc_op_get_batching(kt_op("kt.Each")), KC_OP_BATCH_ELEMENTWISE);
  KC_CHECK_INT(kc_op_get_batching(kt_op("kt.Never")), KC_OP_BATCH_NONE);
  KC_CHECK_INT(kc_op_get_batching(NULL), KC_OP_BATCH_SEQUENTIAL);
  KC_CHECK_STR(kc_op_batching_name(KC_OP_BATCH_SEQUENTIAL), "sequential");
  KC_CHECK_STR(kc_op_batching_name(KC_OP_BATCH_ELEMENTWISE), "elementwise");
  KC_CHECK_STR(kc_op_batching_name(KC_OP_BATCH_NONE), "none");
  KC_CHECK(kc_op_batching_name((kc_op_batching)3) == NULL);
  kc_op_registry_reset();
}

KC_TEST(op_batching_refuses_a_value_that_is_no_rule) {
  KC_CHECK_CODE(kt_batch_register("kt.Bad", 7, true), KC_INVALID_ARGUMENT,
                "registering op 'kt.Bad': call 3 (kc_op_builder_set_batching): "
                "kc_op_builder_set_batching: unknown batching rule 7 (expected "
                "KC_OP_BATCH_SEQUENTIAL, KC_OP_BATCH_ELEMENTWISE or KC_OP_BATCH_NONE)");
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(kc_sv("kt.Bad"), &op), KC_NOT_FOUND, "kt.Bad");
  kc_op_builder_set_batching(NULL, KC_OP_BATCH_NONE); /* nowhere to record it */
}

static kc_status* kt_noop(kc_xcall_frame* f) {
  (void)f;
  return NULL;
}

KC_TEST(xcall_signature_batching_flags) {
  kc_xcall_signature sig = {.struct_size = sizeof sig,
                            .flags = KC_XCALL_SIG_OPEN | KC_XCALL_SIG_BATCH_ELEMENTWISE};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.batched"), KC_PLATFORM_HOST, &sig, kt_noop,
                                      NULL, NULL, 0));
  kc_xcall_target_desc d = {.struct_size = sizeof d};
  KC_CHECK_OK(kc_xcall_lookup(kc_sv("kt.batched"), KC_PLATFORM_HOST, &d));
  KC_CHECK(d.signature && (d.signature->flags & KC_XCALL_SIG_BATCH_ELEMENTWISE));
  sig.flags = KC_XCALL_SIG_OPEN | KC_XCALL_SIG_BATCH_ELEMENTWISE | KC_XCALL_SIG_BATCH_NONE;
  KC_CHECK_CODE(kc_xcall_register_typed(kc_sv("kt.both"), KC_PLATFORM_HOST, &sig, kt_noop, NULL,
                                        NULL, 0),
                KC_INVALID_ARGUMENT,
                "KC_XCALL_SIG_BATCH_ELEMENTWISE and KC_XCALL_SIG_BATCH_NONE together");
  kc_xcall_registry_reset();
}
