/* The opcodes the HLO parser reads: its own list of the instructions it
 * builds itself, then the op table's (program/ops.h). */
#include "program/parse_internal.h"

#define KC__OPCODE(NAME, KIND, OP) \
  {.name = NAME, .size = sizeof(NAME) - 1, .kind = KIND, .op = OP}

static const kc__hlo_opcode kc__hlo_opcodes[] = {
    KC__OPCODE("parameter", KC__HLO_PARAMETER, 0),
    KC__OPCODE("constant", KC__HLO_CONSTANT, 0),
    KC__OPCODE("tuple", KC__HLO_TUPLE, 0),
    KC__OPCODE("get-tuple-element", KC__HLO_GET_TUPLE_ELEMENT, 0),
    KC__OPCODE("custom-call", KC__HLO_CUSTOM_CALL, 0),
    KC__OPCODE("add", KC__HLO_BINARY, KC_OP_ADD),
    KC__OPCODE("subtract", KC__HLO_BINARY, KC_OP_SUBTRACT),
    KC__OPCODE("multiply", KC__HLO_BINARY, KC_OP_MULTIPLY),
    KC__OPCODE("divide", KC__HLO_BINARY, KC_OP_DIVIDE),
    KC__OPCODE("maximum", KC__HLO_BINARY, KC_OP_MAXIMUM),
    KC__OPCODE("minimum", KC__HLO_BINARY, KC_OP_MINIMUM),
    KC__OPCODE("negate", KC__HLO_UNARY, KC_OP_NEGATE),
    KC__OPCODE("exponential", KC__HLO_UNARY, KC_OP_EXPONENTIAL),
    KC__OPCODE("exp", KC__HLO_UNARY, KC_OP_EXPONENTIAL),
    KC__OPCODE("log", KC__HLO_UNARY, KC_OP_LOG),
    KC__OPCODE("convert", KC__HLO_UNARY, KC_OP_CONVERT),
    KC__OPCODE("reshape", KC__HLO_UNARY, KC_OP_RESHAPE),
    KC__OPCODE("broadcast", KC__HLO_BROADCAST, 0),
    KC__OPCODE("fusion", KC__HLO_CALL, 0),
    KC__OPCODE("call", KC__HLO_CALL, 0),
    KC__OPCODE("copy", KC__HLO_COPY, 0),
    KC__OPCODE("bitcast", KC__HLO_BITCAST, KC_OP_RESHAPE),
};
#undef KC__OPCODE

/* The attribute naming the computation a fusion or call runs. */
const char* kc__hlo_callee_attr(const kc__hlo_opcode* op) {
  return strcmp(op->name, "fusion") == 0 ? "calls" : "to_apply";
}

/* "parameter, constant, ..., compare, ...": every opcode the parser
 * reads, for messages. */
void kc__hlo_opcode_list(char* buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__hlo_opcodes); ++i) {
    if (strcmp(kc__hlo_opcodes[i].name, "exp") == 0) continue; /* a second spelling */
    kc__appendf(buf, cap, &len, "%s%s", i ? ", " : "", kc__hlo_opcodes[i].name);
  }
  const kc__instr_def* d;
  for (size_t i = 0; (d = kc__instr_def_at(i)) != NULL; ++i) {
    kc__appendf(buf, cap, &len, ", %s", d->name);
  }
}

const kc__hlo_opcode* kc__hlo_opcode_find(kc_string_view word, kc__hlo_opcode* table_op,
                                          const kc__instr_def** out_def) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__hlo_opcodes); ++i) {
    const kc__hlo_opcode* op = &kc__hlo_opcodes[i];
    if (word.size == op->size && memcmp(word.data, op->name, op->size) == 0) return op;
  }
  const kc__instr_def* def = kc__instr_def_find_name(word);
  if (!def) return NULL;
  *out_def = def;
  table_op->name = def->name;
  table_op->size = strlen(def->name);
  table_op->kind = KC__HLO_TABLE;
  table_op->op = (kc_opcode)def->op;
  return table_op;
}
