/* gather and scatter (src/program/instr/instr_gather.c), through HLO text and
 * kc_program_builder_add_instruction: XLA's dimension numbers, clamped
 * gather starts, skipped scatter windows, the update computations, and
 * the refusals of malformed dimension numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

/* Each of got[0..n) equals want[0..n); a mismatch names its position. */
static void kt_g_floats(const float* got, const float* want, int n, int which) {
  for (int i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      fprintf(stderr, "output %d, element %d: got %g, want %g\n", which, i, (double)got[i],
              (double)want[i]);
      KC_CHECK(got[i] == want[i]);
    }
  }
}

static void kt_g_ints(const int32_t* got, const int32_t* want, int n, int which) {
  for (int i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      fprintf(stderr, "output %d, element %d: got %d, want %d\n", which, i, got[i], want[i]);
      KC_CHECK_INT(got[i], want[i]);
    }
  }
}

KC_TEST(hlo_gather_embedding_lookup_clamps_starts) {
  /* Rows of a table by id (an index vector of one entry: index_vector_dim
   * is the indices' rank); ids past either end clamp to the last or
   * first row, whatever the index type. Then column windows of 2 whose
   * starts clamp so that the window stays inside. */
  kc_tensor* outs[5];
  kt_run_text("HloModule m\nENTRY e {\n"
           " t = f32[4,3] constant({{0,1,2},{10,11,12},{20,21,22},{30,31,32}})\n"
           " i = s32[5] constant({2, 0, 3, 7, -1})\n"
           " g = f32[5,3] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, "
           "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}, "
           "indices_are_sorted=false\n"
           " u = u8[2] constant({255, 1})\n"
           " gu = f32[2,3] gather(t, u), offset_dims={1}, collapsed_slice_dims={0}, "
           "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n"
           " w = u64[1] constant({18446744073709551615})\n"
           " gw = f32[1,3] gather(t, w), offset_dims={1}, collapsed_slice_dims={0}, "
           "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n"
           " c = s64[2] constant({2, -5})\n"
           " gc = f32[2,4,2] gather(t, c), offset_dims={1,2}, collapsed_slice_dims={}, "
           "start_index_map={1}, index_vector_dim=1, slice_sizes={4,2}, "
           "indices_are_sorted=true\n"
           " z = s32[0] constant({})\n"
           " gz = f32[0,3] gather(t, z), offset_dims={1}, collapsed_slice_dims={0}, "
           "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}\n"
           " ROOT r = (f32[5,3], f32[2,3], f32[1,3], f32[2,4,2], f32[0,3]) "
           "tuple(g, gu, gw, gc, gz)\n}\n",
           outs, 5);
  static const float g[15] = {20, 21, 22, 0, 1, 2, 30, 31, 32, 30, 31, 32, 0, 1, 2};
  static const float gu[6] = {30, 31, 32, 10, 11, 12};
  static const float gw[3] = {30, 31, 32};
  /* start 2 of a 2-wide window on 3 columns clamps to 1; -5 to 0. */
  static const float gc[16] = {1, 2, 11, 12, 21, 22, 31, 32, 0, 1, 10, 11, 20, 21, 30, 31};
  kt_g_floats(kt_data(outs[0]), g, 15, 0);
  kt_g_floats(kt_data(outs[1]), gu, 6, 1);
  kt_g_floats(kt_data(outs[2]), gw, 3, 2);
  kt_g_floats(kt_data(outs[3]), gc, 16, 3);
  KC_CHECK_INT(kc_tensor_get_dltensor(outs[4])->shape[0], 0);
  kt_release(outs, 5);
}

KC_TEST(hlo_gather_index_vectors) {
  /* x[idx] with 2-D indices: (row, col) pairs along index_vector_dim 2,
   * along dimension 0, and with start_index_map reversed (col, row). */
  kc_tensor* outs[3];
  kt_run_text("HloModule m\nENTRY e {\n"
           " x = f32[3,4] constant({{0,1,2,3},{10,11,12,13},{20,21,22,23}})\n"
           " i = s32[2,2,2] constant({{{0,1},{2,3}},{{1,0},{2,2}}})\n"
           " a = f32[2,2] gather(x, i), offset_dims={}, collapsed_slice_dims={0,1}, "
           "start_index_map={0,1}, index_vector_dim=2, slice_sizes={1,1}\n"
           " j = s32[2,3] constant({{0,2,1},{3,0,1}})\n"
           " b = f32[3] gather(x, j), offset_dims={}, collapsed_slice_dims={0,1}, "
           "start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1}\n"
           " k = s32[2,2] constant({{3,0},{1,2}})\n"
           " c = f32[2,2] gather(x, k), offset_dims={1}, collapsed_slice_dims={1}, "
           "start_index_map={1,0}, index_vector_dim=1, slice_sizes={2,1}\n"
           " ROOT r = (f32[2,2], f32[3], f32[2,2]) tuple(a, b, c)\n}\n",
           outs, 3);
  static const float a[4] = {1, 23, 10, 22};
  static const float b[3] = {3, 20, 11};
  /* (col 3, row 0) two rows down: 3, 13; (col 1, row 2) clamps to row 1:
   * 11, 21. */
  static const float c[4] = {3, 13, 11, 21};
  kt_g_floats(kt_data(outs[0]), a, 4, 0);
  kt_g_floats(kt_data(outs[1]), b, 3, 1);
  kt_g_floats(kt_data(outs[2]), c, 4, 2);
  kt_release(outs, 3);
}

KC_TEST(hlo_gather_batching_dims) {
  /* take_along_axis-like: for each batch b (operand dimension 0, indices
   * dimension 1), the column i[p][b] of every row of x[b]. */
  char text[2048];
  char consts[512];
  size_t len = 0;
  len += (size_t)snprintf(consts + len, sizeof consts - len, "{");
  for (int b = 0; b < 2; ++b) {
    len += (size_t)snprintf(consts + len, sizeof consts - len, "%s{", b ? "," : "");
    for (int r = 0; r < 3; ++r) {
      len += (size_t)snprintf(consts + len, sizeof consts - len, "%s{%d,%d,%d,%d}", r ? "," : "",
                              100 * b + 10 * r, 100 * b + 10 * r + 1, 100 * b + 10 * r + 2,
                              100 * b + 10 * r + 3);
    }
    len += (size_t)snprintf(consts + len, sizeof consts - len, "}");
  }
  snprintf(consts + len, sizeof consts - len, "}");
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n"
           " x = f32[2,3,4] constant(%s)\n"
           " i = s32[3,2] constant({{0,3},{2,1},{5,0}})\n"
           " ROOT g = f32[3,2,3] gather(x, i), offset_dims={2}, collapsed_slice_dims={2}, "
           "start_index_map={2}, operand_batching_dims={0}, start_indices_batching_dims={1}, "
           "index_vector_dim=2, slice_sizes={1,3,1}\n}\n",
           consts);
  kc_tensor* out;
  kt_run_text(text, &out, 1);
  static const int idx[3][2] = {{0, 3}, {2, 1}, {3 /* 5, clamped */, 0}};
  const float* g = kt_data(out);
  for (int p = 0; p < 3; ++p) {
    for (int b = 0; b < 2; ++b) {
      for (int r = 0; r < 3; ++r) {
        float want = (float)(100 * b + 10 * r + idx[p][b]);
        KC_CHECK(g[(p * 2 + b) * 3 + r] == want);
      }
    }
  }
  kt_release(&out, 1);
}

KC_TEST(hlo_gather_element_types) {
  /* gather moves elements of any type: f16, c64, pred, s64, with s8 and
   * u16 indices. */
  kc_tensor* outs[5];
  kt_run_text("HloModule m\nENTRY e {\n"
           " c = f32[4] constant({1.5, -2, 3.25, 4})\n"
           " h = f16[4] convert(c)\n"
           " i = s8[2,1] constant({{3},{1}})\n"
           " gh = f16[2] gather(h, i), offset_dims={}, collapsed_slice_dims={0}, "
           "start_index_map={0}, index_vector_dim=1, slice_sizes={1}\n"
           " rh = f32[2] convert(gh)\n"
           " z = c64[4] complex(c, c)\n"
           " gz = c64[2] gather(z, i), offset_dims={}, collapsed_slice_dims={0}, "
           "start_index_map={0}, index_vector_dim=1, slice_sizes={1}\n"
           " re = f32[2] real(gz)\n"
           " p = pred[4] constant({true, false, false, true})\n"
           " j = u16[2] constant({3, 2})\n"
           " gp = pred[2] gather(p, j), offset_dims={}, collapsed_slice_dims={0}, "
           "start_index_map={0}, index_vector_dim=1, slice_sizes={1}\n"
           " l = s64[3] constant({-9000000000, 7, 8})\n"
           " gl = s64[2] gather(l, j), offset_dims={}, collapsed_slice_dims={0}, "
           "start_index_map={0}, index_vector_dim=1, slice_sizes={1}\n"
           " gl0 = s64[1,2] gather(l, i), offset_dims={0}, collapsed_slice_dims={}, "
           "start_index_map={0}, index_vector_dim=1, slice_sizes={1}\n"
           " ROOT r = (f32[2], f32[2], pred[2], s64[2], s64[1,2]) tuple(rh, re, gp, gl, gl0)\n}\n",
           outs, 5);
  static const float rh[2] = {4, -2};
  kt_g_floats(kt_data(outs[0]), rh, 2, 0);
  kt_g_floats(kt_data(outs[1]), rh, 2, 1);
  const uint8_t* gp = kt_data(outs[2]);
  KC_CHECK(gp[0] == 1 && gp[1] == 0);
  const int64_t* gl = kt_data(outs[3]);
  KC_CHECK(gl[0] == 8 && gl[1] == 8); /* index 3 clamps to 2 */
  /* A window of one (offset dimension 0) at starts 3 (clamped to 2) and 1. */
  const int64_t* gl0 = kt_data(outs[4]);
  KC_CHECK(gl0[0] == 8 && gl0[1] == 7);
  kt_release(outs, 5);
}

static const char kt_g_computations[] =
    "HloModule m\n"
    "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n"
    "%sub (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n  ROOT %s = f32[] subtract(%a, %b)\n}\n"
    "%max (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n  ROOT %m = f32[] maximum(%b, %a)\n}\n"
    "%set (a: s32[], b: s32[]) -> s32[] {\n  %a = s32[] parameter(0)\n"
    "  ROOT %b = s32[] parameter(1)\n}\n"
    "%mul (a: s32[], b: s32[]) -> s32[] {\n  %a = s32[] parameter(0)\n"
    "  %b = s32[] parameter(1)\n  ROOT %m = s32[] multiply(%a, %b)\n}\n"
    "%addu8 (a: u8[], b: u8[]) -> u8[] {\n  %a = u8[] parameter(0)\n"
    "  %b = u8[] parameter(1)\n  ROOT %s = u8[] add(%a, %b)\n}\n"
    "%or (a: pred[], b: pred[]) -> pred[] {\n  %a = pred[] parameter(0)\n"
    "  %b = pred[] parameter(1)\n  ROOT %o = pred[] or(%a, %b)\n}\n"
    "%addh (a: f16[], b: f16[]) -> f16[] {\n  %a = f16[] parameter(0)\n"
    "  %b = f16[] parameter(1)\n  ROOT %s = f16[] add(%a, %b)\n}\n"
    "%pair (a: f32[], i: s32[], b: f32[], j: s32[]) -> (f32[], s32[]) {\n"
    "  %a = f32[] parameter(0)\n  %i = s32[] parameter(1)\n"
    "  %b = f32[] parameter(2)\n  %j = s32[] parameter(3)\n"
    "  %s = f32[] add(%a, %b)\n  %m = s32[] maximum(%i, %j)\n"
    "  ROOT %t = (f32[], s32[]) tuple(%s, %m)\n}\n"
    "%setpair (a: f32[], i: s32[], b: f32[], j: s32[]) -> (f32[], s32[]) {\n"
    "  %a = f32[] parameter(0)\n  %i = s32[] parameter(1)\n"
    "  %b = f32[] parameter(2)\n  %j = s32[] parameter(3)\n"
    "  ROOT %t = (f32[], s32[]) tuple(%b, %j)\n}\n";

KC_TEST(hlo_scatter_add_repeats_and_skips_out_of_bounds) {
  /* Rows added by index: repeated indices all add; 4 and -1 lie outside
   * and are skipped. Then 2x2 windows at column starts 0, 3 and 4: the
   * window at 4 would cross the end, so it is skipped whole. */
  char text[4096];
  snprintf(text, sizeof text,
           "%sENTRY e {\n"
           " z = f32[] constant(0)\n"
           " t = f32[4,2] broadcast(z), dimensions={}\n"
           " i = s32[6] constant({1, 1, 3, 4, -1, 1})\n"
           " u = f32[6,2] constant({{1,2},{3,4},{5,6},{7,8},{9,9},{10,20}})\n"
           " s = f32[4,2] scatter(t, i, u), update_window_dims={1}, "
           "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
           "to_apply=%%add, indices_are_sorted=false, unique_indices=false\n"
           " o = f32[2,5] broadcast(z), dimensions={}\n"
           " c = s32[3] constant({0, 3, 4})\n"
           " w = f32[3,2,2] constant({{{1,1},{1,1}},{{2,2},{2,2}},{{3,3},{3,3}}})\n"
           " v = f32[2,5] scatter(o, c, w), update_window_dims={1,2}, "
           "inserted_window_dims={}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, "
           "to_apply=%%add\n"
           " ROOT r = (f32[4,2], f32[2,5]) tuple(s, v)\n}\n",
           kt_g_computations);
  kc_tensor* outs[2];
  kt_run_text(text, outs, 2);
  static const float s[8] = {0, 0, 14, 26, 0, 0, 5, 6};
  static const float v[10] = {1, 1, 0, 2, 2, 1, 1, 0, 2, 2};
  kt_g_floats(kt_data(outs[0]), s, 8, 0);
  kt_g_floats(kt_data(outs[1]), v, 10, 1);
  kt_release(outs, 2);
}

KC_TEST(hlo_scatter_update_computations) {
  /* Each path: assignment (s32), a native multiply (s32), maximum with
   * its parameters swapped, u8 add wrapping, pred or, a computation with
   * no native loop (subtract, run per element), f16 add (per element),
   * and variadic scatters, one general and one assigning. */
  char text[8192];
  snprintf(text, sizeof text,
           "%sENTRY e {\n"
           " n = s32[4] constant({1, 2, 3, 4})\n"
           " i = s32[3,1] constant({{2},{0},{2}})\n"
           " k = s32[3] constant({7, 8, 9})\n"
           " rset = s32[4] scatter(n, i, k), update_window_dims={}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%%set\n"
           " rmul = s32[4] scatter(n, i, k), update_window_dims={}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%%mul\n"
           " x = f32[4] constant({1, 5, -1, 0})\n"
           " f = f32[3] constant({3, 2, -4})\n"
           " rmax = f32[4] scatter(x, i, f), update_window_dims={}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%%max\n"
           " rsub = f32[4] scatter(x, i, f), update_window_dims={}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%%sub\n"
           " b = u8[4] constant({250, 0, 1, 2})\n"
           " bu = u8[3] constant({10, 6, 255})\n"
           " j = s32[3,1] constant({{0},{0},{3}})\n"
           " rwrap = u8[4] scatter(b, j, bu), update_window_dims={}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%%addu8\n"
           " p = pred[4] constant({false, false, true, false})\n"
           " pu = pred[3] constant({false, true, false})\n"
           " ror = pred[4] scatter(p, i, pu), update_window_dims={}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%%or\n"
           " h = f16[4] convert(x)\n"
           " fh = f16[3] convert(f)\n"
           " sh = f16[4] scatter(h, i, fh), update_window_dims={}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%%addh\n"
           " addh = f32[4] convert(sh)\n"
           " pair = (f32[4], s32[4]) scatter(x, n, i, f, k), update_window_dims={}, "
           "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
           "to_apply=%%pair\n"
           " p0 = f32[4] get-tuple-element(pair), index=0\n"
           " p1 = s32[4] get-tuple-element(pair), index=1\n"
           " sp = (f32[4], s32[4]) scatter(x, n, j, f, k), update_window_dims={}, "
           "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
           "to_apply=%%setpair, unique_indices=true\n"
           " s0 = f32[4] get-tuple-element(sp), index=0\n"
           " s1 = s32[4] get-tuple-element(sp), index=1\n"
           " ROOT r = (s32[4], s32[4], f32[4], f32[4], u8[4], pred[4], f32[4], f32[4], s32[4], "
           "f32[4], s32[4]) tuple(rset, rmul, rmax, rsub, rwrap, ror, addh, p0, p1, s0, s1)\n}\n",
           kt_g_computations);
  kc_tensor* outs[11];
  kt_run_text(text, outs, 11);
  /* Updates 7 (to 2), 8 (to 0), 9 (to 2): the last to 2 wins for the
   * assignment, as they are applied in the updates' order. */
  static const int32_t set[4] = {8, 2, 9, 4};
  static const int32_t mul[4] = {8, 2, 3 * 7 * 9, 4};
  static const float max[4] = {2, 5, 3, 0};
  static const float sub[4] = {1 - 2, 5, -1 - 3 + 4, 0};
  static const float add[4] = {1 + 2, 5, -1 + 3 - 4, 0};
  static const int32_t imax[4] = {8, 2, 9, 4};
  kt_g_ints(kt_data(outs[0]), set, 4, 0);
  kt_g_ints(kt_data(outs[1]), mul, 4, 1);
  kt_g_floats(kt_data(outs[2]), max, 4, 2);
  kt_g_floats(kt_data(outs[3]), sub, 4, 3);
  const uint8_t* wrap = kt_data(outs[4]);
  KC_CHECK(wrap[0] == (uint8_t)(250 + 10 + 6) && wrap[1] == 0 && wrap[2] == 1 &&
           wrap[3] == (uint8_t)(2 + 255));
  const uint8_t* por = kt_data(outs[5]);
  KC_CHECK(por[0] == 1 && por[1] == 0 && por[2] == 1 && por[3] == 0);
  kt_g_floats(kt_data(outs[6]), add, 4, 6);
  kt_g_floats(kt_data(outs[7]), add, 4, 7);
  kt_g_ints(kt_data(outs[8]), imax, 4, 8);
  /* j = {0, 0, 3}: updates 0 then 1 to 0, update 2 to 3. */
  static const float s0[4] = {2, 5, -1, -4};
  static const int32_t s1[4] = {8, 2, 3, 9};
  kt_g_floats(kt_data(outs[9]), s0, 4, 9);
  kt_g_ints(kt_data(outs[10]), s1, 4, 10);
  kt_release(outs, 11);
}

KC_TEST(hlo_scatter_batching_dims) {
  /* updates[b][p] added at out[b][idx[b][p]]: operand dimension 0 is the
   * batch, indices dimension 0 too; 9 lies outside and is skipped. */
  char text[4096];
  snprintf(text, sizeof text,
           "%sENTRY e {\n"
           " z = f32[] constant(0)\n"
           " o = f32[2,4] broadcast(z), dimensions={}\n"
           " i = s32[2,3] constant({{0,0,3},{1,2,9}})\n"
           " u = f32[2,3] constant({{1,2,3},{4,5,6}})\n"
           " ROOT s = f32[2,4] scatter(o, i, u), update_window_dims={}, "
           "inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
           "input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, "
           "to_apply=%%add\n}\n",
           kt_g_computations);
  kc_tensor* out;
  kt_run_text(text, &out, 1);
  static const float want[8] = {3, 0, 0, 3, 0, 4, 5, 0};
  kt_g_floats(kt_data(out), want, 8, 0);
  kt_release(&out, 1);
}

KC_TEST(hlo_gather_scatter_refusals) {
  static const char gather_head[] =
      "HloModule m\nENTRY e {\n x = f32[3,4] parameter(0)\n i = s32[2] parameter(1)\n";
  static const struct {
    const char* instr;
    const char* message;
  } gathers[] = {
      {"f32[2,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,5}",
       "attribute slice_sizes: entry 1: expected 0 to 4 (the operand's size), got 5"},
      {"f32[2,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1}",
       "attribute slice_sizes: expected 2 entries (one per operand dimension), got 1"},
      {"f32[2,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1",
       "expected attribute slice_sizes={...}, got none"},
      {"f32[2,1] gather(x, i), offset_dims={1}, collapsed_slice_dims={1}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,4}",
       "attribute collapsed_slice_dims: entry 0: expected a dimension of slice size 1, got "
       "dimension 1 of slice size 4"},
      {"f32[2,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={2}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,4}",
       "attribute collapsed_slice_dims: entry 0: expected a dimension of the operand (0 to 1), "
       "got 2"},
      {"f32[2,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1}, "
       "index_vector_dim=1, slice_sizes={1,4}",
       "attribute start_index_map: expected 1 entry (the length of the index vector, 1 as "
       "index_vector_dim is the indices' rank), got 2"},
      {"f32[2,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=2, slice_sizes={1,4}",
       "attribute index_vector_dim: expected 0 to 1 (a dimension of the indices, or their rank "
       "for an index vector of one entry), got 2"},
      {"f32[2,4] gather(x, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,4}",
       "attribute offset_dims: entry 0: expected a dimension of the result (0 to 1), got 2"},
      {"f32[2,4] gather(x, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,4}",
       "attribute offset_dims: expected 1 entry (the operand's rank 2 less 1 collapsed and 0 "
       "batching dimensions), got 0"},
      {"f32[2,1,4] gather(x, i), offset_dims={1,1}, collapsed_slice_dims={}, "
       "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}",
       "attribute offset_dims: entry 1: expected distinct dimensions, got 1 again"},
      {"f32[2,1,4] gather(x, i), offset_dims={2,1}, collapsed_slice_dims={}, "
       "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}",
       "attribute offset_dims: entry 1: expected ascending dimensions, got 1 after 2"},
      {"f32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,4}",
       "expected the result f32[2,4], got f32[2,3]"},
      {"f32[2,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "operand_batching_dims={0}, index_vector_dim=1, slice_sizes={1,4}",
       "attribute start_indices_batching_dims: expected 1 entry (one per entry of "
       "operand_batching_dims), got 0"},
      {"f32[2,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={}, start_index_map={1}, "
       "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, "
       "slice_sizes={1,4}",
       "attribute start_indices_batching_dims: entry 0: expected a dimension of the indices of "
       "size 3 (operand dimension 0), got dimension 0 of size 2"},
  };
  for (size_t k = 0; k < sizeof gathers / sizeof gathers[0]; ++k) {
    char text[1024];
    snprintf(text, sizeof text, "%s ROOT g = %s\n}\n", gather_head, gathers[k].instr);
    KT_COMPILE_FAILS(text, KC_INVALID_ARGUMENT, "instruction 'g'", gathers[k].message);
  }
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = f32[3,4] parameter(0)\n"
                     " i = f32[2] parameter(1)\n"
                     " ROOT g = f32[2,4] gather(x, i), offset_dims={1}, "
                     "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                     "slice_sizes={1,4}\n}\n",
                     KC_INVALID_ARGUMENT,
                     "operand 1 (the indices): expected an integer type, got f32");

  static const struct {
    const char* instr;
    const char* message;
  } scatters[] = {
      {"f32[4,2] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add",
       "attribute update_window_dims: expected 2 entries (the operand's rank 2 less 0 inserted "
       "and 0 batching dimensions), got 1"},
      {"f32[4,2] scatter(t, i, w), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add",
       "operand 2 (updates 0): dimension 0 (scatter dimension 0): expected 3, the indices' size "
       "there, got 2"},
      {"f32[4,2] scatter(t, i, v), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add",
       "operand 2 (updates 0): dimension 1 (window dimension 0): expected at most 2 (operand "
       "dimension 1), got 3"},
      {"f32[4,2] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={1,0}, index_vector_dim=1, to_apply=%add",
       "attribute scatter_dims_to_operand_dims: expected 1 entry (the length of the index "
       "vector"},
      {"f32[4,2] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%adds",
       "to_apply 'adds': parameter 0: expected f32[], got s32[]"},
      {"f32[4,3] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add",
       "result 0: expected f32[4,2], got f32[4,3]"},
      {"f32[4,2] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1",
       "scatter: expected 1 called computation, got 0"},
      {"f32[4,2] scatter(t, i, u, u), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add",
       "scatter: expected N operands, the indices, then N updates (N up to 32), got 4 operands"},
      {"f32[4,2] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={1}, input_batching_dims={0}, "
       "scatter_indices_batching_dims={0}, index_vector_dim=1, to_apply=%add",
       "attribute scatter_indices_batching_dims: entry 0: expected a dimension of the indices "
       "of size 4 (operand dimension 0), got dimension 0 of size 3"},
      {"f32[4,2] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%pair",
       "to_apply 'pair': expected 2 scalar parameters (1 current value, then 1 update), got 4"},
  };
  for (size_t k = 0; k < sizeof scatters / sizeof scatters[0]; ++k) {
    char text[4096];
    snprintf(text, sizeof text,
             "%s%%adds (a: s32[], b: s32[]) -> s32[] {\n  %%a = s32[] parameter(0)\n"
             "  %%b = s32[] parameter(1)\n  ROOT %%s = s32[] add(%%a, %%b)\n}\n"
             "ENTRY e {\n t = f32[4,2] parameter(0)\n i = s32[3] parameter(1)\n"
             " u = f32[3,2] parameter(2)\n w = f32[2,2] parameter(3)\n v = f32[3,3] parameter(4)\n"
             " ROOT s = %s\n}\n",
             kt_g_computations, scatters[k].instr);
    KT_COMPILE_FAILS(text, KC_INVALID_ARGUMENT, "instruction 's'", scatters[k].message);
  }
  /* The hints are true or false, said where they are written. */
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse(KC_SV_LIT("HloModule m\nENTRY e {\n x = f32[3,4] parameter(0)\n"
                                           " i = s32[2] parameter(1)\n"
                                           " ROOT g = f32[2,4] gather(x, i), offset_dims={1}, "
                                           "collapsed_slice_dims={0}, start_index_map={0}, "
                                           "index_vector_dim=1, slice_sizes={1,4}, "
                                           "indices_are_sorted=maybe\n}\n"),
                                &p),
                KC_INVALID_ARGUMENT, "line 5", "expected true or false, got 'maybe'");
  KC_CHECK(p == NULL);
}

/* An I64 array attribute. */
static kc_attr kt_g_ints_attr(const char* name, const int64_t* v, size_t n) {
  kc_attr a;
  memset(&a, 0, sizeof a);
  a.name = kc_sv(name);
  a.type = KC_ATTR_ARRAY;
  a.elem_type = KC_ATTR_I64;
  a.v.array.data = v;
  a.v.array.count = n;
  return a;
}

/* Builds x[i] for x f32[3,4] and i s32[2], with `sorted` as the type of
 * indices_are_sorted, and runs it on x = 0..11, i = {2, -3}. */
static kc_status* kt_g_build_and_run(int32_t sorted_type, float* out8) {
  kc_program_builder* b = NULL;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("m"), &b));
  kc_shape *xs = NULL, *is = NULL, *rs = NULL;
  KC_CHECK_OK(kc_shape_parse(KC_SV_LIT("f32[3,4]"), &xs));
  KC_CHECK_OK(kc_shape_parse(KC_SV_LIT("s32[2]"), &is));
  KC_CHECK_OK(kc_shape_parse(KC_SV_LIT("f32[2,4]"), &rs));
  int32_t ops[2];
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, xs, KC_SV_LIT("x"), &ops[0]));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 1, is, KC_SV_LIT("i"), &ops[1]));
  static const int64_t one[1] = {1}, zero[1] = {0}, sizes[2] = {1, 4};
  kc_attr attrs[6];
  attrs[0] = kt_g_ints_attr("offset_dims", one, 1);
  attrs[1] = kt_g_ints_attr("collapsed_slice_dims", zero, 1);
  attrs[2] = kt_g_ints_attr("start_index_map", zero, 1);
  attrs[3] = kt_g_ints_attr("slice_sizes", sizes, 2);
  memset(&attrs[4], 0, sizeof attrs[4]);
  attrs[4].name = KC_SV_LIT("index_vector_dim");
  attrs[4].type = KC_ATTR_I64;
  attrs[4].v.i64 = 1;
  memset(&attrs[5], 0, sizeof attrs[5]);
  attrs[5].name = KC_SV_LIT("indices_are_sorted");
  attrs[5].type = sorted_type;
  attrs[5].v.b = true;
  kc_attr_dict dict = {6, attrs};
  kc_instruction_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = KC_OP_GATHER;
  d.result_shape = rs;
  d.operands = ops;
  d.num_operands = 2;
  d.attrs = &dict;
  int32_t id = -1;
  KC_CHECK_OK(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("g"), &id));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_shape_destroy(xs);
  kc_shape_destroy(is);
  kc_shape_destroy(rs);
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, NULL, &exe);
  kc_program_destroy(p);
  if (st) return st;
  float x[12];
  for (int k = 0; k < 12; ++k) x[k] = (float)k;
  int32_t idx[2] = {2, -3};
  int64_t xd[2] = {3, 4}, id2[1] = {2};
  DLTensor tx, ti;
  memset(&tx, 0, sizeof tx);
  memset(&ti, 0, sizeof ti);
  tx.data = x;
  tx.device.device_type = kDLCPU;
  tx.ndim = 2;
  tx.dtype = (DLDataType){kDLFloat, 32, 1};
  tx.shape = xd;
  ti.data = idx;
  ti.device.device_type = kDLCPU;
  ti.ndim = 1;
  ti.dtype = (DLDataType){kDLInt, 32, 1};
  ti.shape = id2;
  const DLTensor* ins[2] = {&tx, &ti};
  kc_tensor* out = NULL;
  st = kc_executable_execute(exe, ins, 2, NULL, &out);
  if (!st) {
    memcpy(out8, kt_data(out), 8 * sizeof(float));
    kc_object_release(KC_OBJECT(out));
  }
  kc_executable_destroy(exe);
  return st;
}

KC_TEST(hlo_gather_builder) {
  float got[8];
  KC_CHECK_OK(kt_g_build_and_run(KC_ATTR_BOOL, got));
  static const float want[8] = {8, 9, 10, 11, 0, 1, 2, 3};
  kt_g_floats(got, want, 8, 0);
  KC_CHECK_CODE(kt_g_build_and_run(KC_ATTR_I64, got), KC_INVALID_ARGUMENT, "instruction 'g'",
                "attribute indices_are_sorted: expected true or false");
}

KC_TEST(hlo_scatter_builder) {
  /* scatter built with kc_program_builder_add_instruction: its update
   * computation a program of its own (a maximum: the native loop), the
   * dimension numbers I64 arrays, the hints bools. */
  kc_program* maxp = NULL;
  KC_CHECK_OK(kc_program_parse(KC_SV_LIT("HloModule mx\nENTRY mx {\n a = s32[] parameter(0)\n"
                                         " b = s32[] parameter(1)\n"
                                         " ROOT m = s32[] maximum(a, b)\n}\n"),
                               &maxp));
  kc_program_builder* b = NULL;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("m"), &b));
  kc_shape *xs = NULL, *is = NULL;
  KC_CHECK_OK(kc_shape_parse(KC_SV_LIT("s32[5]"), &xs));
  KC_CHECK_OK(kc_shape_parse(KC_SV_LIT("s32[4]"), &is));
  static const int32_t x[5] = {0, 10, 20, 30, 40};
  static const int32_t idx[4] = {4, 0, 4, 5};
  static const int32_t upd[4] = {41, -1, 50, 99};
  int32_t ops[3];
  KC_CHECK_OK(kc_program_builder_add_constant(b, xs, x, sizeof x, KC_SV_LIT("x"), &ops[0]));
  KC_CHECK_OK(kc_program_builder_add_constant(b, is, idx, sizeof idx, KC_SV_LIT("i"), &ops[1]));
  KC_CHECK_OK(kc_program_builder_add_constant(b, is, upd, sizeof upd, KC_SV_LIT("u"), &ops[2]));
  static const int64_t zero[1] = {0};
  kc_attr attrs[6];
  attrs[0] = kt_g_ints_attr("update_window_dims", NULL, 0);
  attrs[1] = kt_g_ints_attr("inserted_window_dims", zero, 1);
  attrs[2] = kt_g_ints_attr("scatter_dims_to_operand_dims", zero, 1);
  memset(&attrs[3], 0, 3 * sizeof attrs[3]);
  attrs[3].name = KC_SV_LIT("index_vector_dim");
  attrs[3].type = KC_ATTR_I64;
  attrs[3].v.i64 = 1;
  attrs[4].name = KC_SV_LIT("indices_are_sorted");
  attrs[4].type = KC_ATTR_BOOL;
  attrs[5].name = KC_SV_LIT("unique_indices");
  attrs[5].type = KC_ATTR_BOOL;
  kc_attr_dict dict = {6, attrs};
  kc_instruction_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = KC_OP_SCATTER;
  d.result_shape = xs;
  d.operands = ops;
  d.num_operands = 3;
  d.attrs = &dict;
  d.computations = &maxp;
  d.num_computations = 1;
  int32_t id = -1;
  KC_CHECK_OK(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("s"), &id));
  kc_program_destroy(maxp); /* the builder retains it */
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_shape_destroy(xs);
  kc_shape_destroy(is);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  kc_program_destroy(p);
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, NULL, 0, NULL, &out));
  /* 5 lies outside: skipped. */
  static const int32_t want[5] = {0, 10, 20, 30, 50};
  kt_g_ints(kt_data(out), want, 5, 0);
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
}

KC_TEST(hlo_scatter_f16_bf16_native_matches_computation) {
  /* f16 and bf16 updates that add or take the maximum run natively,
   * computed in f32 and rounded once per update: the same bits as running
   * the computation (made not native by a dead instruction). */
  static const char text[] =
      "HloModule m\n"
      "%addb (a: bf16[], b: bf16[]) -> bf16[] {\n  %a = bf16[] parameter(0)\n"
      "  %b = bf16[] parameter(1)\n  ROOT %s = bf16[] add(%a, %b)\n}\n"
      "%addbg (a: bf16[], b: bf16[]) -> bf16[] {\n  %a = bf16[] parameter(0)\n"
      "  %b = bf16[] parameter(1)\n  %n = bf16[] negate(%a)\n"
      "  ROOT %s = bf16[] add(%a, %b)\n}\n"
      "%maxh (a: f16[], b: f16[]) -> f16[] {\n  %a = f16[] parameter(0)\n"
      "  %b = f16[] parameter(1)\n  ROOT %s = f16[] maximum(%a, %b)\n}\n"
      "%maxhg (a: f16[], b: f16[]) -> f16[] {\n  %a = f16[] parameter(0)\n"
      "  %b = f16[] parameter(1)\n  %n = f16[] negate(%a)\n"
      "  ROOT %s = f16[] maximum(%a, %b)\n}\n"
      "%addh (a: f16[], b: f16[]) -> f16[] {\n  %a = f16[] parameter(0)\n"
      "  %b = f16[] parameter(1)\n  ROOT %s = f16[] add(%b, %a)\n}\n"
      "%addhg (a: f16[], b: f16[]) -> f16[] {\n  %a = f16[] parameter(0)\n"
      "  %b = f16[] parameter(1)\n  %n = f16[] negate(%a)\n"
      "  ROOT %s = f16[] add(%b, %a)\n}\n"
      "ENTRY e {\n"
      " x = f32[4] constant({1, 256, 0.1, -3})\n"
      " u = f32[6] constant({0.00390625, 1, 0.3, 0.001, nan, -7.77})\n"
      " i = s32[6,1] constant({{0},{1},{2},{2},{3},{0}})\n"
      " xb = bf16[4] convert(x)\n ub = bf16[6] convert(u)\n"
      " xh = f16[4] convert(x)\n uh = f16[6] convert(u)\n"
      " nb = bf16[4] scatter(xb, i, ub), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%addb\n"
      " gb = bf16[4] scatter(xb, i, ub), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%addbg\n"
      " nm = f16[4] scatter(xh, i, uh), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%maxh\n"
      " gm = f16[4] scatter(xh, i, uh), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%maxhg\n"
      " na = f16[4] scatter(xh, i, uh), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%addh\n"
      " ga = f16[4] scatter(xh, i, uh), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%addhg\n"
      " ROOT r = (bf16[4], bf16[4], f16[4], f16[4], f16[4], f16[4]) tuple(nb, gb, nm, gm, na, ga)\n"
      "}\n";
  kc_tensor* outs[6];
  kt_run_text(text, outs, 6);
  for (int k = 0; k < 6; k += 2) {
    const uint16_t* native = kt_data(outs[k]);
    const uint16_t* general = kt_data(outs[k + 1]);
    for (int e = 0; e < 4; ++e) {
      if (native[e] != general[e]) {
        fprintf(stderr, "outputs %d and %d, element %d: 0x%04x, 0x%04x\n", k, k + 1, e,
                native[e], general[e]);
        KC_CHECK(native[e] == general[e]);
      }
    }
  }
  const uint16_t* nb = kt_data(outs[0]);
  KC_CHECK(nb[1] == 0x4380); /* 256 + 1 rounds to even: 256 in bf16 */
  KC_CHECK((nb[3] & 0x7fff) > 0x7f80); /* -3 + NaN */
  const uint16_t* nm = kt_data(outs[2]);
  KC_CHECK(nm[1] == 0x5c00); /* max(256, 1) = 256 in f16 */
  KC_CHECK((nm[3] & 0x7fff) > 0x7c00); /* max(-3, NaN) is NaN */
  kt_release(outs, 6);
}
