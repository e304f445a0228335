/* The opcodes the HLO parser reads: the instruction table's names
 * (program/instr/instr.h), listed for messages. */
#include "program/frontend/parse_internal.h"

/* The attribute naming the computation a fusion or call runs. */
const char* kc__hlo_callee_attr(const kc__instr_def* op) {
  return op->computation_attrs[0];
}

/* "parameter, constant, ..., compare, ...": every opcode the parser
 * reads, for messages. */
void kc__hlo_opcode_list(char* buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  const kc__instr_def* d;
  for (size_t i = 0; (d = kc__instr_def_at(i)) != NULL; ++i) {
    if (d->unlisted) continue;
    kc__appendf(buf, cap, &len, "%s%s", len ? ", " : "", d->name);
  }
}

const kc__instr_def* kc__hlo_opcode_find(kc_string_view word) {
  return kc__instr_def_find_name(word);
}
