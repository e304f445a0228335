/* kc_program_parse_file (kcall/program.h): an HLO text file read whole
 * and parsed, or a status naming the file with the code that says why
 * not. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

KC_TEST(parse_file_reads_and_names_the_file) {
  char dir[] = "/tmp/kt_parse_file_XXXXXX";
  KC_CHECK(mkdtemp(dir) != NULL);
  char path[128];
  snprintf(path, sizeof path, "%s/add.hlo", dir);
  FILE* f = fopen(path, "w");
  KC_CHECK(f != NULL);
  fputs("HloModule add\nENTRY main {\n  x = f32[2] parameter(0)\n"
        "  ROOT y = f32[2] add(x, x)\n}\n", f);
  fclose(f);
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse_file(path, &p));
  KC_CHECK_STR(kc_program_get_name(p), "add");
  kc_program_destroy(p);
  /* A syntax error names the file, its line and column. */
  f = fopen(path, "w");
  fputs("HloModule add\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] add(x x)\n}\n",
        f);
  fclose(f);
  KC_CHECK_CODE(kc_program_parse_file(path, &p), KC_INVALID_ARGUMENT, "parsing '", "add.hlo'",
                "line 4, column");
  KC_CHECK(p == NULL);
  char missing[160];
  snprintf(missing, sizeof missing, "%s/none.hlo", dir);
  KC_CHECK_CODE(kc_program_parse_file(missing, &p), KC_NOT_FOUND, "cannot open '", "none.hlo'",
                "No such file");
  KC_CHECK_CODE(kc_program_parse_file(dir, &p), KC_INVALID_ARGUMENT, "is a directory, expected "
                "an HLO or StableHLO text file");
  KC_CHECK_CODE(kc_program_parse_file(NULL, &p), KC_INVALID_ARGUMENT, "path is NULL");
  remove(path);
  rmdir(dir);
}
