/* programs_host.c: docs/programs.md's failing custom call, in a host
 * program the tests run (tests/docs/CMakeLists.txt). A STATUS_RETURNING
 * target fails through the host table (as a plugin does) and through the
 * library's own function (as a host program does); the run stops, and the
 * program prints the status it returns. */
#include <stdio.h>

#include <kcall/kcall.h>

static void docs_refuse(void* out, const void** ins, kc_xcall_status* status) {
  const kc_host_api* host = kc_plugin_get_host_api();
  static const char msg[] = "docs_refuse: refused, as a failing target is";
  size_t msg_len = sizeof msg - 1;
  (void)out;
  (void)ins;
  host->xcall_status_set_failure(status, msg, msg_len);   /* from a plugin */
  kc_xcall_status_set_failure(status, msg, msg_len);      /* from a host program */
}

static const char program_text[] =
    "HloModule refuses\n"
    "ENTRY main {\n"
    "  x = f32[2]{0} parameter(0)\n"
    "  ROOT checked = f32[2]{0} custom-call(x), custom_call_target=\"docs_refuse\", "
    "api_version=API_VERSION_STATUS_RETURNING\n"
    "}\n";

int main(void) {
  kc_program* program = NULL;
  kc_executable* exe = NULL;
  kc_tensor* out = NULL;
  float x[2] = {1, 2};
  int64_t shape[1] = {2};
  DLTensor input = {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  const DLTensor* inputs[1] = {&input};
  kc_status* st = kc_xcall_register(KC_SV_LIT("docs_refuse"), KC_PLATFORM_HOST,
                                    KC_XCALL_API_STATUS_RETURNING,
                                    (void (*)(void))docs_refuse, 0);
  if (!st) st = kc_program_parse(KC_SV_LIT(program_text), &program);
  if (!st) st = kc_program_compile(program, NULL, &exe);
  if (!st) st = kc_executable_execute(exe, inputs, 1, NULL, &out);
  int code = 0;
  if (st) {
    char text[512];
    kc_status_format(st, text, sizeof text);
    printf("%s\n", text);
    kc_status_destroy(st);
  } else {
    printf("programs_host: the run succeeded; the target should have failed "
           "it\n");
    kc_object_release(KC_OBJECT(out));
    code = 1;
  }
  kc_executable_destroy(exe);
  kc_program_destroy(program);
  return code;
}
