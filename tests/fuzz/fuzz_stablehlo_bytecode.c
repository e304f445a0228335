/*
 * fuzz_stablehlo_bytecode.c — StableHLO portable artifacts (MLIR bytecode
 * of the VHLO dialect, src/program/frontend/stablehlo/bytecode.c), read into text
 * and through the StableHLO text reader, then compilation, then a run.
 *
 * kc_program_parse tells the format from the content (the bytecode's
 * magic number, or the flatbuffer of a serialized jax.export around it),
 * so this is fuzz_hlo's harness with a corpus of the artifacts and
 * serialized exports jax.export writes (tests/fixtures/stablehlo_bytecode):
 * tests/fuzz/corpus/stablehlo_bytecode. Mutations that keep the magic
 * number exercise the bytecode reader's bounds on every count, index,
 * size and nesting; those that do not, the other readers.
 */
/* JAX's scans are while loops with a constant bound, which mutation
 * raises without limit: those programs are parsed and compiled, not run
 * (an artifact with one names "while_v1" in its string table). */
#define KF_RUN_WHILE_LOOPS 0
#include "fuzz_hlo.c"
