/*
 * fuzz_stablehlo.c — the StableHLO text reader (src/program/frontend/stablehlo),
 * then compilation, then a run.
 *
 * kc_program_parse tells the format from the content, so this is
 * fuzz_hlo's harness (its fake targets, checks and runs) with a corpus and
 * a dictionary of MLIR text as JAX prints it: tests/fuzz/corpus/stablehlo
 * and stablehlo.dict.
 */
/* JAX's scans are while loops with a constant bound, which mutation
 * raises without limit: those programs are parsed and compiled, not run. */
#define KF_RUN_WHILE_LOOPS 0
#include "fuzz_hlo.c"
