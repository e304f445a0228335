/* The instructions the parser, builder and compiler handle themselves
 * (parameter, constant, tuple, get-tuple-element, broadcast, custom-call;
 * fusion, call, copy, bitcast and the ones built from others, map,
 * mulhi, ragged-dot and scan, which only the parser sees), the
 * element-wise arithmetic, exponential, log and convert that elementwise.c
 * runs, and reshape: their entries in the instruction table (instr.h). The
 * order is that of the parser's list of opcodes in its messages. */
#include "kernels/elementwise_ops.h"
#include "program/instr/elementwise.h"
#include "program/instr/instr.h"

static const char* const kc__no_attrs[] = {NULL};
static const char* const kc__fusion_callee[] = {"calls", NULL};
static const char* const kc__call_callee[] = {"to_apply", NULL};
static const char* const kc__map_attrs[] = {"dimensions", NULL};
static const char* const kc__ragged_dot_attrs[] = {
    "lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims", "rhs_contracting_dims",
    "lhs_ragged_dims", "rhs_group_dims", NULL};
static const char* const kc__scan_attrs[] = {"dimensions", "num_carries", "is_reverse",
                                             "is_associative", NULL};

/* An entry handled by its `kind`, with `min` to `max` operands (-1: any). */
#define KC__BUILTIN(NAME, KIND, OP, MIN, MAX, VERIFY)                                 \
  {.op = (OP), .name = (NAME), .kind = (KIND), .min_operands = (MIN), .max_operands = (MAX), \
   .attrs = kc__no_attrs, .verify = (VERIFY)}

/* An element-wise instruction of elementwise.c (and of the CUDA backend),
 * of `n` operands, for the element types `TYPES` (KC__ELEMENTWISE_*): the
 * rows of KC__EW_ARITH_OPS, and convert. */
#define KC__ELEMENTWISE(NAME, OP, N, TYPES)                                                   \
  {.op = (OP), .name = (NAME), .kind = KC__INSTR_ELEMENTWISE, .min_operands = (N),          \
   .max_operands = (N), .attrs = kc__no_attrs, .verify = kc__verify_elementwise,            \
   .prepare = kc__elementwise_prepare, .kernel = kc__elementwise_kernel,                    \
   .tile = kc__elementwise_tile, .tile_cost = kc__elementwise_tile_cost,                    \
   .tile_loop = kc__elementwise_tile_loop, .elementwise_types = (TYPES),                    \
   .device_elementwise = true}

/* A row's domain (KC__EW_*, kernels/elementwise_ops.h) as
 * elementwise_types. */
#define KC__TYPES_OF(DOM)                                             \
  (((DOM) & KC__EW_INT ? KC__ELEMENTWISE_INT : 0u) |                  \
   ((DOM) & KC__EW_FLOAT ? KC__ELEMENTWISE_FLOAT : 0u) |              \
   ((DOM) & KC__EW_COMPLEX ? KC__ELEMENTWISE_COMPLEX : 0u))

const kc__instr_def kc__instr_builtin[] = {
    KC__BUILTIN("parameter", KC__INSTR_PARAMETER, KC__OP_PARAMETER, 0, 0, NULL),
    KC__BUILTIN("constant", KC__INSTR_CONSTANT, KC__OP_CONSTANT, 0, 0, NULL),
    KC__BUILTIN("tuple", KC__INSTR_TUPLE, KC__OP_TUPLE, 0, -1, NULL),
    KC__BUILTIN("get-tuple-element", KC__INSTR_GET_TUPLE_ELEMENT, KC__OP_GET_TUPLE_ELEMENT, 1,
                1, NULL),
    KC__BUILTIN("custom-call", KC__INSTR_CUSTOM_CALL, KC__OP_CUSTOM_CALL, 0, -1, NULL),
#define KC__ARITH_DEF(OP, NAME, N, RES, DOM, ...) \
  KC__ELEMENTWISE(NAME, KC_OP_##OP, N, KC__TYPES_OF(DOM)),
    KC__EW_ARITH_OPS(KC__ARITH_DEF)
#undef KC__ARITH_DEF
    {.op = KC_OP_EXPONENTIAL, .name = "exp", .kind = KC__INSTR_ELEMENTWISE, .unlisted = true,
     .min_operands = 1, .max_operands = 1, .attrs = kc__no_attrs,
     .verify = kc__verify_elementwise, .prepare = kc__elementwise_prepare,
     .kernel = kc__elementwise_kernel, .tile = kc__elementwise_tile,
     .tile_cost = kc__elementwise_tile_cost, .tile_loop = kc__elementwise_tile_loop,
     .elementwise_types = KC__ELEMENTWISE_INEXACT,
     .device_elementwise = true},
    KC__ELEMENTWISE("convert", KC_OP_CONVERT, 1, KC__ELEMENTWISE_CONVERT),
    KC__BUILTIN("reshape", KC__INSTR_RESHAPE, KC_OP_RESHAPE, 1, 1, kc__verify_elementwise),
    KC__BUILTIN("broadcast", KC__INSTR_BROADCAST, KC__OP_BROADCAST, 1, 1, kc__verify_broadcast),
    {.op = KC__OP_NONE, .name = "fusion", .kind = KC__INSTR_CALL, .min_operands = 0,
     .max_operands = -1, .attrs = kc__no_attrs, .computation_attrs = kc__fusion_callee},
    {.op = KC__OP_NONE, .name = "call", .kind = KC__INSTR_CALL, .min_operands = 0,
     .max_operands = -1, .attrs = kc__no_attrs, .computation_attrs = kc__call_callee},
    KC__BUILTIN("copy", KC__INSTR_COPY, KC__OP_NONE, 1, 1, NULL),
    KC__BUILTIN("bitcast", KC__INSTR_BITCAST, KC__OP_NONE, 1, 1, NULL),
    {.op = KC__OP_NONE, .name = "map", .kind = KC__INSTR_EXPANDED, .min_operands = 1,
     .max_operands = -1, .attrs = kc__map_attrs, .computation_attrs = kc__call_callee},
    KC__BUILTIN("mulhi", KC__INSTR_EXPANDED, KC__OP_NONE, 2, 2, NULL),
    {.op = KC__OP_NONE, .name = "ragged-dot", .kind = KC__INSTR_EXPANDED, .min_operands = 3,
     .max_operands = 3, .attrs = kc__ragged_dot_attrs},
    {.op = KC__OP_NONE, .name = "scan", .kind = KC__INSTR_EXPANDED, .min_operands = 1,
     .max_operands = -1, .attrs = kc__scan_attrs, .computation_attrs = kc__call_callee},
};
const size_t kc__instr_builtin_count = sizeof kc__instr_builtin / sizeof kc__instr_builtin[0];
