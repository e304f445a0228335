/* The public accessors of a compiled program (kc_executable_query and
 * kc_executable_get_*). */
#include <string.h>

#include "program/runtime/executable_internal.h"

void kc_executable_query(const kc_executable* exe, kc_executable_info* out) {
  if (!exe || !out) return;
  kc_executable_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = out->struct_size;
  info.num_instructions = exe->program->count;
  info.num_live_instructions = exe->num_live;
  info.num_inputs = exe->num_inputs;
  info.num_outputs = exe->num_outputs;
  for (size_t i = 0; i < exe->num_buffers; ++i) {
    int32_t k = exe->buffers[i].kind;
    info.num_buffers += k == KC__BUF_TEMP || k == KC__BUF_SCRATCH;
  }
  info.temp_bytes = exe->arena_bytes;
  info.temp_bytes_unshared = exe->arena_unshared;
  info.output_bytes = exe->output_bytes;
  info.peak_bytes = exe->arena_bytes + exe->output_bytes;
  info.cuda_graph_captures = atomic_load(&exe->graph_captures);
  info.cuda_graph_launches = atomic_load(&exe->graph_launches);
  memcpy(out, &info, out->struct_size < sizeof info ? out->struct_size : sizeof info);
}

const kc_shape* kc_executable_get_input_shape(const kc_executable* exe, size_t index) {
  return exe && index < exe->num_inputs ? exe->input_shapes[index] : NULL;
}

const kc_shape* kc_executable_get_output_shape(const kc_executable* exe, size_t index) {
  return exe && index < exe->num_outputs ? exe->output_shapes[index] : NULL;
}

const kc_program* kc_executable_get_program(const kc_executable* exe) {
  return exe ? exe->program : NULL;
}

const char* kc_executable_get_instruction_name(const kc_executable* exe,
                                               size_t index) {
  if (!exe || index >= exe->num_live) return NULL;
  return exe->program->instrs[exe->live_instr[index]].name;
}
