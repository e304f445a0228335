/*
 * run.h — the pieces of `kcall run`: input tensors named after the
 * program's parameters, and printing of output tensors.
 */
#ifndef KCALL_TOOLS_RUN_H_
#define KCALL_TOOLS_RUN_H_

#include <stdio.h>

#include <kcall/kcall.h>
#include <kcall/program.h>

/* One input of an executable: a leaf of a parameter. */
typedef struct run_leaf {
  char* name;        /* "p0", or "p0.1.0" for a leaf of a tuple parameter */
  char* number_name; /* the same with the parameter number: "0.1.0" */
  const kc_shape* shape; /* borrowed from the executable */
  kc_tensor* tensor;     /* owned; NULL until given */
  char* source;          /* what it came from, for messages; owned */
} run_leaf;

typedef struct run_inputs {
  run_leaf* leaves; /* one per executable input, in input order */
  size_t count;
  /* Parameter names that are tuples (their leaves are named, they are
   * not), for a message that says so. */
  char** tuple_names;
  size_t num_tuple_names;
} run_inputs;

/* Names every input of `exe` after the parameters of `program` (the
 * program it was compiled from). */
kc_status* run_inputs_init(run_inputs* in, const kc_program* program,
                           const kc_executable* exe);

/* Frees every name and tensor. Safe on a zeroed struct. */
void run_inputs_deinit(run_inputs* in);

/* Takes one "NAME=VALUE" from the command line: NAME is a leaf name or
 * number (a leading '%' is ignored); VALUE a scalar, a bracketed list or
 * a .npy path (see `kcall help run`). */
kc_status* run_inputs_set(run_inputs* in, const char* spec);

/* Checks that every input was given; with `generate`, fills the missing
 * ones with the deterministic pattern instead (i * 0.01 for floats, i for
 * ints, i odd for bools; i the row-major element index) and prints a
 * line naming them to `note`. */
kc_status* run_inputs_finish(run_inputs* in, bool generate, FILE* note);

/* Prints `t`'s values the way NumPy does, summarised with "..." (three
 * items at each end of every dimension) past 1000 elements. */
void run_print_tensor(FILE* out, const DLTensor* t);

#endif /* KCALL_TOOLS_RUN_H_ */
