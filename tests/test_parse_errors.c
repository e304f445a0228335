/* Errors of the HLO text parser (src/program/frontend/parse.c, lexer.c) at
 * module level: each names where it is and what was expected; messages
 * stay bounded on long and odd text; locations reach compile errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_parse.h"

/* ---- module-level errors ----------------------------------------------------- */

KC_TEST(parse_module_errors) {
  static const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "line 1, column 1: expected 'HloModule', got end of input"},
      {"ENTRY main {}", "line 1, column 1: expected 'HloModule', got 'ENTRY'"},
      {"HloModule", "line 1, column 10: expected a module name, got end of input"},
      {"HloModule m, x", "line 1, column 15: expected '=', got end of input"},
      {"HloModule m\n", "line 2, column 1: expected an ENTRY computation, got end of input"},
      {"HloModule m\nc {\n ROOT x = f32[] parameter(0)\n}\n",
       "line 5, column 1: expected an ENTRY computation, got end of input"},
      {"HloModule m\nENTRY a {\n x = f32[] parameter(0)\n}\nENTRY b {\n y = f32[] parameter(0)\n}\n",
       "line 5, column 1: expected one ENTRY computation, got a second"},
      {"HloModule m\nENTRY main {\n}\n", "line 3, column 1: expected an instruction, got '}'"},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0)\n", "line 4, column 1: expected "
                                                               "an instruction or '}', got end of input"},
      {"HloModule m\n{", "line 2, column 1: expected a computation, got '{'"},
      {"HloModule m\nc (x: f32[]) -> f32[]\n", "line 3, column 1: expected '{', got end of input"},
      {"HloModule m\nc {\n x = f32[] parameter(0)\n", "line 4, column 1: expected a bracket "
                                                    "closing the '{' at line 2, column 3"},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0)\n /* never closed\n}\n",
       "line 4, column 2: unterminated comment"},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0), metadata={op_name=\"a}\n}\n",
       "line 3, column 44: unterminated string"},
      {"HloModule m\nENTRY main {\n x f32[] parameter(0)\n}\n",
       "line 3, column 4: expected '=', got 'f32'"},
      {"HloModule m\nENTRY main {\n x = f32[] 7(0)\n}\n",
       "line 3, column 12: expected an opcode, got '7'"},
      {"HloModule m\nENTRY main {\n x = f32[2,2] parameter(0)\n"
       " d = f32[2,2] frobnicate(x, x), lhs_contracting_dims={1}\n}\n",
       "line 4, column 15: instruction 'd': opcode 'frobnicate' is not supported "
       "(supported: parameter, constant, tuple, get-tuple-element, custom-call, add, "},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0)\n y = f32[] negate(z)\n}\n",
       "line 4, column 19: expected the name of an instruction defined earlier, got 'z'"},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0)\n x = f32[] negate(x)\n}\n",
       "line 4, column 2: instruction 'x' is defined twice (first at line 3)"},
      {"HloModule m\nENTRY main {\n ROOT x = f32[] parameter(0)\n ROOT y = f32[] negate(x)\n}\n",
       "line 4, column 2: expected one ROOT instruction, got a second (the first is 'x' at "
       "line 3)"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(f32[8] x)\n}\n",
       "line 4, column 20: operand 'x': expected f32[4] (its shape at line 3), got f32[8]"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(f32[4] 3)\n}\n",
       "line 4, column 27: expected an operand name, got '3'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(x, )\n}\n",
       "line 4, column 23: expected an operand (a name, or a shape and a name), got ')'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(x x)\n}\n",
       "line 4, column 22: expected ',' or ')', got 'x'"},
      {"HloModule m\nENTRY main {\n x = f32[4]{0,1} parameter(0)\n}\n",
       "line 3, column 12: expected a layout: a permutation of 0 to 0, minor to major (each "
       "dimension once), got '{0,1'"},
      {"HloModule m\nENTRY main {\n x = f32[2,3]{0,0} parameter(0)\n}\n",
       "line 3, column 14: expected a layout: a permutation of 0 to 1"},
      {"HloModule m\nENTRY main {\n x = f32[2,3]{1,0:T(8,128)} parameter(0)\n}\n",
       "tiling and memory spaces are not supported"},
      {"HloModule m\nENTRY main {\n x = f32[<=4] parameter(0)\n}\n",
       "line 3, column 10: expected a dimension size, got '<': dynamic dimensions are not "
       "supported"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(-1)\n}\n",
       "line 3, column 23: expected a parameter number (from 0 to"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0) y = f32[4] negate(x)\n}\n",
       "line 3, column 26: expected ',' or the end of the line, got 'y'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] add(x)\n}\n",
       "line 4, column 13: add 'y': expected 2 operands, got 1"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(x, x)\n}\n",
       "line 4, column 13: negate 'y': expected 1 operand, got 2"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[2,4] broadcast(x)\n}\n",
       "line 4, column 15: broadcast 'y': expected attribute dimensions={...}, got none"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n"
       " y = f32[2,4] broadcast(x), dimensions={1}, dimensions={1}\n}\n",
       "line 4, column 45: attribute 'dimensions' is given twice"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n"
       " y = f32[2,4] broadcast(x), dimensions=1\n}\n",
       "line 4, column 40: expected '{' starting the dimensions, got '1'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n"
       " y = f32[4] get-tuple-element(x), index=a\n}\n",
       "line 4, column 41: expected a tuple index, got 'a'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(1)\n}\n",
       "parameter number 1: expected each of 0 to 0 exactly once"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] parameter(0)\n}\n",
       "parameter number 0"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(x)\n}\n"
       "stray",
       "line 6, column 6: expected '{', got end of input"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0), sharding={\n}\n",
       "line 5, column 1: expected an instruction or '}', got end of input"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n}\n\x01",
       "line 5, column 1: expected a computation, got byte 0x01"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    KT_PARSE_FAILS(cases[i].text, cases[i].message);
  }
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse(KC_SV_LIT("HloModule m"), NULL), KC_INVALID_ARGUMENT,
                "NULL");
  KC_CHECK_CODE(kc_program_parse((kc_string_view){NULL, 3}, &p), KC_INVALID_ARGUMENT,
                "NULL");
}

/* A module whose text is `head`, `n` copies of `fill`, then `tail`;
 * malloc'd. */
static char* kt_module_with_run(const char* head, char fill, size_t n,
                                const char* tail) {
  size_t h = strlen(head), t = strlen(tail);
  char* text = malloc(h + n + t + 1);
  if (!text) return NULL;
  memcpy(text, head, h);
  memset(text + h, fill, n);
  memcpy(text + h + n, tail, t + 1);
  return text;
}

/* Parsing `text` fails; the message is short, ends with `tail` and holds
 * `needle`. */
static void kt_check_bounded_failure(const char* text, const char* needle,
                                     const char* tail) {
  kc_program* p = NULL;
  kc_status* st = kc_program_parse(kc_sv(text), &p);
  KC_CHECK(p == NULL);
  KC_CHECK_INT(kc_status_get_code(st), KC_INVALID_ARGUMENT);
  char buf[2048];
  size_t len = kc_status_format(st, buf, sizeof buf);
  kc_status_destroy(st);
  KC_CHECK(len < 2000); /* the list of supported opcodes included */
  KC_CHECK_CONTAINS(buf, needle);
  KC_CHECK(len >= strlen(tail) && strcmp(buf + len - strlen(tail), tail) == 0);
}

KC_TEST(parse_messages_bound_long_and_odd_text) {
  const size_t mb = (size_t)1 << 20;
  /* A megabyte opcode: cut in the middle, the explanation kept whole. */
  char* text = kt_module_with_run("HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
                                  " ROOT b = f32[2] ", 'z', mb, "(a)\n}\n");
  KC_CHECK(text != NULL);
  kt_check_bounded_failure(text,
                           "line 4, column 18: instruction 'b': opcode "
                           "'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'..."
                           "'zzzzzzzzzzzzzzzzzzzzzzzz' "
                           "(1048576 bytes) is not supported (supported: parameter, ",
                           ")");
  free(text);
  /* A megabyte instruction name, defined twice. */
  char* name = kt_module_with_run("", 'a', mb, "");
  KC_CHECK(name != NULL);
  size_t cap = 2 * mb + 256;
  text = malloc(cap);
  KC_CHECK(text != NULL);
  snprintf(text, cap,
           "HloModule m\nENTRY main {\n %s = f32[2] parameter(0)\n"
           " %s = f32[2] parameter(1)\n}\n",
           name, name);
  kt_check_bounded_failure(text, "line 4, column 2: instruction 'aaaa",
                           "(1048576 bytes) is defined twice (first at line 3)");
  /* ... used as an unknown operand, with its '%'. */
  snprintf(text, cap,
           "HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
           " ROOT y = f32[2] negate(%%%s)\n}\n",
           name);
  kt_check_bounded_failure(text, "got '%aaaa", "'aaaaaaaaaaaaaaaaaaaaaaaa' (1048577 bytes)");
  free(text);
  free(name);
  /* Bytes that would not print are escaped. */
  KT_PARSE_FAILS("HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
                 " y = f32[2] negate(\"a\x01\x7f" "b\\\"'\")\n}\n",
                 "got '\"a\\x01\\x7fb\\\\\"\\'\"'");
  KT_PARSE_FAILS("HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
                 " y = f32[2] custom-call(x), custom_call_target=\"t\", "
                 "backend_config=\"\xff\\q\"\n}\n",
                 "got '\\\\q'");
  KT_PARSE_FAILS("HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
                 " y = f32[2] negate(\"a\tb\")\n}\n",
                 "got '\"a\\tb\"'");
}

KC_TEST(compile_messages_bound_long_names) {
  /* The parser takes any length of name; what the compiler says of it
   * stays short. */
  const size_t mb = (size_t)1 << 20;
  char* target = kt_module_with_run("", 't', mb, "");
  char* name = kt_module_with_run("", 'n', mb, "");
  size_t cap = 2 * mb + 512;
  char* text = malloc(cap);
  KC_CHECK(target != NULL && name != NULL && text != NULL);
  if (!target || !name || !text) {
    free(target);
    free(name);
    free(text);
    return;
  }
  snprintf(text, cap,
           "HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
           " ROOT %s = f32[2] custom-call(x), custom_call_target=\"%s\"\n}\n",
           name, target);
  kc_program* p = kt_parse(text);
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, NULL, &exe);
  KC_CHECK_INT(kc_status_get_code(st), KC_NOT_FOUND);
  char buf[4096];
  size_t len = kc_status_format(st, buf, sizeof buf);
  kc_status_destroy(st);
  KC_CHECK(len < 1024);
  KC_CHECK_CONTAINS(buf, "compiling 'm': ");
  KC_CHECK_CONTAINS(buf, "custom call 'tttt");
  KC_CHECK_CONTAINS(buf, "tttt' (1048576 bytes) (instruction 'nnnn");
  KC_CHECK_CONTAINS(buf, "nnnn' (1048576 bytes))");
  kc_program_destroy(p);
  free(text);
  free(name);
  free(target);
}

KC_TEST(parse_locations_reach_compile_errors) {
  /* Shapes that do not agree are the compiler's to find; it cites the line
   * the parser recorded. */
  kc_program* p = kt_parse(
      "HloModule loc\n"
      "ENTRY main {\n"
      "  a = f32[4] parameter(0)\n"
      "  b = f32[8] parameter(1)\n"
      "\n"
      "  ROOT c = f32[4] add(a, b)\n"
      "}\n");
  kc_executable* exe = NULL;
  KC_CHECK_CODE(kc_program_compile(p, NULL, &exe), KC_INVALID_ARGUMENT, "'c' (line 6)");
  kc_program_destroy(p);
}
