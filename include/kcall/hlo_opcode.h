/*
 * kcall/hlo_opcode.h — the opcodes of HLO instructions, as programs
 * (kcall/program.h) hold them and the CUDA backend's kernels receive them.
 *
 * `KC_OP_*` names an HLO opcode (`KC_OP_ADD` is HLO's `add`), the kind of
 * an instruction in a program; it is not an op of kcall/op.h, which is a
 * registered function with a spec string, kernels and a gradient. The
 * prefix is kept for compatibility. The values are part of the ABI: an
 * opcode keeps its number, new ones take unused numbers.
 *
 * Only the enumeration: a header of types that any layer may include
 * (kcall/program.h includes it).
 */
#ifndef KCALL_HLO_OPCODE_H_
#define KCALL_HLO_OPCODE_H_

/* Instruction kinds other than the ones with their own builder call
 * (kcall/program.h). Each has one entry in the program module's
 * instruction table (src/program/instr/instr.h); docs/programs.md says how
 * to add one. */
typedef enum kc_opcode {
  KC_OP_ADD = 1,
  KC_OP_SUBTRACT,
  KC_OP_MULTIPLY,
  KC_OP_DIVIDE,
  KC_OP_MAXIMUM,
  KC_OP_MINIMUM,
  KC_OP_NEGATE,
  KC_OP_EXPONENTIAL,
  KC_OP_LOG,
  KC_OP_CONVERT,
  KC_OP_RESHAPE,
  /* Added with kc_program_builder_add_instruction (the attributes each
   * reads are listed there). Element-wise, one operand: */
  KC_OP_ABS = 32,
  KC_OP_SIGN,
  KC_OP_SQRT,
  KC_OP_RSQRT,
  KC_OP_CBRT,
  KC_OP_TANH,
  KC_OP_LOGISTIC,
  KC_OP_SINE,
  KC_OP_COSINE,
  KC_OP_TAN,
  KC_OP_FLOOR,
  KC_OP_CEIL,
  KC_OP_ROUND_NEAREST_AFZ,
  KC_OP_ROUND_NEAREST_EVEN,
  KC_OP_LOG_PLUS_ONE,
  KC_OP_EXPONENTIAL_MINUS_ONE,
  KC_OP_ERF,
  KC_OP_IS_FINITE,
  KC_OP_NOT,
  KC_OP_POPCNT,
  KC_OP_COUNT_LEADING_ZEROS,
  KC_OP_REAL,
  KC_OP_IMAG,
  KC_OP_BITCAST_CONVERT,
  KC_OP_REDUCE_PRECISION,
  /* Element-wise, two operands: */
  KC_OP_POWER = 64,
  KC_OP_REMAINDER,
  KC_OP_ATAN2,
  KC_OP_AND,
  KC_OP_OR,
  KC_OP_XOR,
  KC_OP_SHIFT_LEFT,
  KC_OP_SHIFT_RIGHT_ARITHMETIC,
  KC_OP_SHIFT_RIGHT_LOGICAL,
  KC_OP_COMPLEX,
  KC_OP_COMPARE,
  /* Element-wise, three operands: */
  KC_OP_SELECT = 96,
  KC_OP_CLAMP,
  /* Structure: */
  KC_OP_IOTA = 128,
  KC_OP_TRANSPOSE,
  KC_OP_SLICE,
  KC_OP_DYNAMIC_SLICE,
  KC_OP_DYNAMIC_UPDATE_SLICE,
  KC_OP_CONCATENATE,
  KC_OP_PAD,
  KC_OP_REVERSE,
  KC_OP_DOT,
  KC_OP_REDUCE,
  KC_OP_REDUCE_WINDOW,
  KC_OP_WHILE,
  KC_OP_CONDITIONAL,
  /* XLA's general gather and scatter (their dimension numbers as I64
   * arrays and index_vector_dim as an I64, indices_are_sorted and
   * unique_indices as optional bools; docs/programs.md): */
  KC_OP_GATHER,
  KC_OP_SCATTER,
  /* Windows. convolution reads dim_labels (a string, "b01f_01io->b01f"),
   * the window as window_dimensions, window_strides, padding_low,
   * padding_high, base_dilations and window_dilations (I64 arrays, one
   * entry per spatial dimension), feature_group_count and
   * batch_group_count (I64); select-and-scatter reads the window
   * attributes and calls two programs, select and scatter. */
  KC_OP_CONVOLUTION = 160,
  KC_OP_SELECT_AND_SCATTER,
  /* Sorting: */
  KC_OP_SORT = 192,
  KC_OP_TOPK,
  /* Transforms and random bits (fft reads fft_type and fft_length,
   * rng-bit-generator algorithm): */
  KC_OP_FFT = 200,
  KC_OP_RNG_BIT_GENERATOR,
  /* Linear algebra. triangular-solve (a, b) reads left_side, lower and
   * unit_diagonal (bools, false when left out) and transpose_a (a string:
   * NO_TRANSPOSE, TRANSPOSE or ADJOINT), in f32, f64, c64 and c128 on the
   * CPU: */
  KC_OP_TRIANGULAR_SOLVE = 224
} kc_opcode;

#endif /* KCALL_HLO_OPCODE_H_ */
