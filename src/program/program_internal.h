/* The program representation shared by the builder, compile and execute.
 * Never installed. */
#ifndef KCALL_PROGRAM_PROGRAM_INTERNAL_H_
#define KCALL_PROGRAM_PROGRAM_INTERNAL_H_

#include "internal/arena.h"
#include "internal/strmap.h"
#include "program/shape_internal.h"

/* Instruction opcodes: the public kc_opcode values, then these; each has
 * one entry in the instruction table (program/instr/instr.h). */
enum {
  KC__OP_NONE = 0, /* no kc_opcode: the table's entries the parser alone handles */
  KC__OP_PARAMETER = 100,
  KC__OP_CONSTANT,
  KC__OP_TUPLE,
  KC__OP_GET_TUPLE_ELEMENT,
  KC__OP_BROADCAST,
  KC__OP_CUSTOM_CALL
};

typedef struct kc__alias {
  const int64_t* output_index;
  size_t output_index_size;
  int32_t operand;
  const int64_t* operand_index;
  size_t operand_index_size;
} kc__alias;

struct kc__instr_def;

typedef struct kc__instr {
  int32_t op;
  const struct kc__instr_def* def; /* op's entry in the instruction table */
  const char* name;
  kc_shape* shape; /* owned */
  const int32_t* operands;
  size_t num_operands;
  int32_t line, column; /* 0 when unknown */
  int64_t number;       /* parameter number; get-tuple-element index */
  const void* literal;  /* constant bytes */
  size_t literal_size;
  const int64_t* dims; /* broadcast dimensions */
  size_t num_dims;
  /* custom call */
  const char* target;
  const void* opaque;
  size_t opaque_size;
  bool has_side_effect;
  int32_t schedule;
  int32_t api_version;
  const kc__alias* aliases;
  size_t num_aliases;
  kc_attr_dict attrs; /* custom calls and kc_instruction_desc's */
  /* Called programs (kc_instruction_desc), each retained. */
  kc_program** computations;
  size_t num_computations;
} kc__instr;

struct kc_program {
  int64_t refs; /* the owner and each executable compiled from it */
  const char* name;
  kc__instr* instrs;
  size_t count;
  size_t cap;
  int32_t root;
  int32_t* params; /* instruction id by parameter number */
  size_t num_params;
  /* Attributes of the text that nothing read (metadata, sharding, ...),
   * by name, with how many instructions carried each. */
  struct kc__skipped_attr {
    const char* name;
    size_t count;
  }* skipped;
  size_t num_skipped, cap_skipped;
  /* What it was read from (kc_program_get_format); NULL: built. */
  const char* format;
  /* The names its producer gave the results (kc_program_get_output_name),
   * NULL entries for none; num_output_names 0: none at all. */
  const char** output_names;
  size_t num_output_names;
  kc__arena arena; /* every string and array above */
};

/* Sets what `program`, just parsed and not yet shared, was read from
 * (copied); false when out of memory. */
bool kc__program_set_format(kc_program* program, kc_string_view format);

/* Sets the names of `program`'s results (copied; empty ones are none);
 * false when out of memory. */
bool kc__program_set_output_names(kc_program* program, const kc_string_view* names, size_t n);

/* A parse's result `st` with *out's format set: `st` when it failed;
 * RESOURCE_EXHAUSTED (*out destroyed and NULL) when the format does not
 * fit in memory; else NULL. */
kc_status* kc__program_formatted(kc_status* st, kc_program** out, kc_string_view format);

/* How many instructions `b` holds. */
size_t kc__builder_count(const kc_program_builder* b);

/* Counts an attribute `name` that the parser skipped (for
 * kc_program_get_skipped_attribute). */
kc_status* kc__builder_note_skipped(kc_program_builder* b, kc_string_view name);

/* Shares a finished (immutable) program; kc_program_destroy drops a
 * reference. */
void kc__program_retain(kc_program* program);

/* "instruction 'name' (line L)" or "instruction 'name'", for messages. */
size_t kc__instr_where(const kc__instr* in, char* buf, size_t cap);

/* A status about instruction `in` (`code`, usually INVALID_ARGUMENT): the
 * message, with where the instruction is as context. */
kc_status* kc__instr_error(const kc__instr* in, kc_status_code code, const char* fmt, ...)
    KC_PRINTF(3, 4);

/* The HLO name of opcode `op` ("add", "custom-call"): its entry's in the
 * instruction table, or "unknown". */
const char* kc__instr_name(int32_t op);

#endif /* KCALL_PROGRAM_PROGRAM_INTERNAL_H_ */
