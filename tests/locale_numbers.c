/* Numbers in HLO text and op specs read the same whatever locale the host
 * program set: a host in a locale whose decimal point is ',' must not read
 * constant(2.5) as 2. Run by ctest with LOCPATH pointing at a de_DE locale
 * it builds with localedef; exits 77 (skipped, saying why) when there is
 * no such locale. */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>

#include "kcall/kcall.h"

static int kt_fail(const char* what, kc_status* st) {
  fprintf(stderr, "locale_numbers: %s: %s\n", what, st ? kc_status_get_message(st) : "");
  kc_status_destroy(st);
  return 1;
}

int main(void) {
  if (!setlocale(LC_ALL, "de_DE.UTF-8")) {
    printf("locale_numbers: skipped: no de_DE.UTF-8 locale (LOCPATH=%s)\n",
           getenv("LOCPATH") ? getenv("LOCPATH") : "unset");
    return 77;
  }
  /* The locale is in effect: the C library itself now stops at '.'. */
  if (strtod("2.5", NULL) != 2.0) {
    fprintf(stderr, "locale_numbers: de_DE did not change strtod\n");
    return 1;
  }
  static const char text[] =
      "HloModule m\nENTRY e {\n c = f32[2] constant({2.5, -1.25e-1})\n"
      " d = f64[] constant(0.5)\n ROOT t = (f32[2], f64[]) tuple(c, d)\n}\n";
  kc_program* p = NULL;
  kc_status* st = kc_program_parse(kc_sv(text), &p);
  if (st) return kt_fail("parse", st);
  kc_executable* exe = NULL;
  st = kc_program_compile(p, NULL, &exe);
  kc_program_destroy(p);
  if (st) return kt_fail("compile", st);
  kc_tensor* outs[2] = {NULL, NULL};
  st = kc_executable_execute(exe, NULL, 0, NULL, outs);
  kc_executable_destroy(exe);
  if (st) return kt_fail("execute", st);
  const float* c = kc_tensor_get_dltensor(outs[0])->data;
  const double* d = kc_tensor_get_dltensor(outs[1])->data;
  int ok = c[0] == 2.5f && c[1] == -0.125f && d[0] == 0.5;
  printf("locale_numbers: read %g %g %g in de_DE.UTF-8\n", (double)c[0], (double)c[1], d[0]);
  kc_object_release(KC_OBJECT(outs[0]));
  kc_object_release(KC_OBJECT(outs[1]));
  return ok ? 0 : 1;
}
