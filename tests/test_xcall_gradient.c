/* Gradients of typed custom-call targets (kc_xcall_signature.gradient):
 * the positional spec checked at registration, read back resolved, and a
 * target whose declaration is wrong never registered. */
#include <kcall/xcall.h>

#include "test.h"

static kc_status* kt_noop(kc_xcall_frame* frame) {
  (void)frame;
  return NULL;
}

static const kc_xcall_buffer_spec kt_f32[] = {{{kDLFloat, 32, 1}, -1},
                                              {{kDLFloat, 32, 1}, -1}};

/* Registers "kt.t" (two f32 args, one result) declaring `gradient`. */
static kc_status* kt_register(const char* gradient, uint32_t flags) {
  kc_xcall_signature sig = {
      .struct_size = sizeof sig,
      .num_args = (flags & KC_XCALL_SIG_OPEN) ? 0 : 2,
      .args = kt_f32,
      .num_results = (flags & KC_XCALL_SIG_OPEN) ? 0 : 1,
      .results = kt_f32,
      .flags = flags,
      .gradient = gradient,
  };
  return kc_xcall_register_typed(KC_SV_LIT("kt.t"), KC_PLATFORM_HOST, &sig,
                                 kt_noop, NULL, NULL, KC_REGISTER_OVERRIDE);
}

KC_TEST(xcall_gradient_is_read_back_resolved) {
  KC_CHECK_OK(kt_register(
      "kt.t_grad( arg1, result0,grad(result0) ,arg0) -> (grad(arg1), "
      "grad(arg0))",
      0));
  kc_op_gradient g = {.struct_size = sizeof g};
  bool declared = false;
  KC_CHECK_OK(kc_xcall_get_gradient(KC_SV_LIT("kt.t"), KC_PLATFORM_HOST, &g,
                                    &declared));
  KC_CHECK(declared);
  KC_CHECK_STR(g.op_name, "kt.t_grad");
  KC_CHECK_STR(g.spec,
               "kt.t_grad(arg1, result0, grad(result0), arg0) -> (grad(arg1), "
               "grad(arg0))");
  const int32_t want[4][2] = {{KC_OP_GRAD_INPUT, 1},
                              {KC_OP_GRAD_OUTPUT, 0},
                              {KC_OP_GRAD_COTANGENT, 0},
                              {KC_OP_GRAD_INPUT, 0}};
  KC_CHECK_INT(g.num_args, 4);
  for (int i = 0; i < 4; ++i) {
    KC_CHECK_INT(g.args[i].source, want[i][0]);
    KC_CHECK_INT(g.args[i].index, want[i][1]);
  }
  KC_CHECK_INT(g.num_results, 2);
  KC_CHECK_INT(g.results[0], 1);
  KC_CHECK_INT(g.results[1], 0);
  /* The registered signature carries the normalised spec. */
  kc_xcall_target_desc d = {.struct_size = sizeof d};
  KC_CHECK_OK(kc_xcall_lookup(KC_SV_LIT("kt.t"), KC_PLATFORM_HOST, &d));
  KC_CHECK_STR(d.signature->gradient, g.spec);
  kc_xcall_registry_reset();
}

KC_TEST(xcall_gradient_none_declared_and_bad_calls) {
  KC_CHECK_OK(kt_register(NULL, 0));
  kc_op_gradient g = {.struct_size = sizeof g, .op_name = "untouched"};
  bool declared = true;
  KC_CHECK_OK(kc_xcall_get_gradient(KC_SV_LIT("kt.t"), KC_PLATFORM_HOST, &g,
                                    &declared));
  KC_CHECK(!declared);
  KC_CHECK_STR(g.op_name, "untouched");
  KC_CHECK_CODE(kc_xcall_get_gradient(KC_SV_LIT("kt.nope"), KC_PLATFORM_HOST,
                                      &g, &declared),
                KC_NOT_FOUND, "kt.nope");
  KC_CHECK_CODE(kc_xcall_get_gradient(KC_SV_LIT("kt.t"), KC_PLATFORM_HOST,
                                      NULL, &declared),
                KC_INVALID_ARGUMENT, "out or out_declared is NULL");
  /* A signature from before the field (struct_size short of it): none. */
  kc_xcall_signature old = {.struct_size = offsetof(kc_xcall_signature, gradient),
                            .num_args = 1, .args = kt_f32,
                            .num_results = 1, .results = kt_f32,
                            .gradient = "ignored(grad(result0)) -> grad(arg0)"};
  KC_CHECK_OK(kc_xcall_register_typed(KC_SV_LIT("kt.t"), KC_PLATFORM_HOST,
                                      &old, kt_noop, NULL, NULL,
                                      KC_REGISTER_OVERRIDE));
  KC_CHECK_OK(kc_xcall_get_gradient(KC_SV_LIT("kt.t"), KC_PLATFORM_HOST, &g,
                                    &declared));
  KC_CHECK(!declared);
  kc_xcall_registry_reset();
}

KC_TEST(xcall_gradient_bad_specs_refuse_the_target) {
  static const struct {
    const char* spec;
    const char* expect;
  } cases[] = {
      {"G(x) -> x", "column 9: expected 'grad(', got 'x'"},
      {"G(arg2) -> grad(arg0)",
       "item 1: expected argN (N below 2) or resultN (N below 1), got 'arg2'"},
      {"G(x) -> grad(arg0)",
       "item 1: expected argN (N below 2) or resultN (N below 1), got 'x'"},
      {"G(arg01) -> grad(arg0)", "got 'arg01'"},
      {"G(grad(result1)) -> grad(arg0)",
       "item 1: grad(result1): expected grad(resultN) with N below the "
       "target's 1 results"},
      {"G(grad(arg0)) -> grad(arg0)", "item 1: grad(arg0): expected"},
      {"G(grad(result0)) -> grad(result0)",
       "result 1: expected grad(argN) with N below the target's 2 arguments, "
       "got grad(result0)"},
      {"G(grad(result0)) -> (grad(arg1), grad(arg1))",
       "result 2: grad(arg1) is already result 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    KC_CHECK_CODE(kt_register(cases[i].spec, 0), KC_INVALID_ARGUMENT,
                  "registering custom-call target 'kt.t@Host'", "gradient spec",
                  cases[i].expect);
    kc_xcall_target_desc d = {.struct_size = sizeof d};
    KC_CHECK_CODE(kc_xcall_lookup(KC_SV_LIT("kt.t"), KC_PLATFORM_HOST, &d),
                  KC_NOT_FOUND, "");
  }
}

KC_TEST(xcall_gradient_of_an_open_signature_bounds_nothing) {
  KC_CHECK_OK(kt_register("G(arg7, grad(result3)) -> grad(arg5)",
                          KC_XCALL_SIG_OPEN));
  kc_op_gradient g = {.struct_size = sizeof g};
  bool declared = false;
  KC_CHECK_OK(kc_xcall_get_gradient(KC_SV_LIT("kt.t"), KC_PLATFORM_HOST, &g,
                                    &declared));
  KC_CHECK(declared);
  KC_CHECK_INT(g.args[0].index, 7);
  KC_CHECK_INT(g.args[1].index, 3);
  KC_CHECK_INT(g.results[0], 5);
  kc_xcall_registry_reset();
}
