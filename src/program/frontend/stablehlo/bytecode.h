/* StableHLO portable artifacts: what jax.export deploys
 * (`Exported.mlir_module_serialized`), MLIR bytecode of the VHLO dialect,
 * read without MLIR. Never installed.
 *
 * The artifact is turned into StableHLO text in MLIR's generic op form,
 * which the text reader (stablehlo_internal.h) then parses, so every op,
 * check and refusal is the text reader's. bytecode_internal.h says how
 * the reading is split. */
#ifndef KCALL_PROGRAM_STABLEHLO_BYTECODE_H_
#define KCALL_PROGRAM_STABLEHLO_BYTECODE_H_

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "internal/grow.h"
#include "kcall/program.h"

/* True when `data` starts with MLIR bytecode's magic number, "ML\xEFR". */
static inline bool kc__stablehlo_bytecode_detect(kc_string_view data) {
  return data.size >= 4 && memcmp(data.data, "ML\xEFR", 4) == 0;
}

/* Appends to *out_text the StableHLO text of the artifact `data`
 * (`size` bytes): a module of func.func ops whose ops are written in
 * MLIR's generic form ("stablehlo.add"(%0, %1) <{...}> : (...) -> ...).
 * The text is not NUL-terminated; on failure *out_text keeps what was
 * appended, for the caller to free. INVALID_ARGUMENT "StableHLO
 * bytecode, byte N: ..." (what was expected there, what was found) for
 * an artifact that is not well formed, truncated or corrupted;
 * UNIMPLEMENTED naming the VHLO op, attribute or type for what has no
 * StableHLO text kcall reads (collectives, quantized types, a bytecode
 * version other than 5 or 6, ...); RESOURCE_EXHAUSTED when out of memory
 * or when the text would be more than 16 MiB plus four times the
 * artifact's size. Reads nothing outside [data, data + size) and takes
 * time and memory linear in the text. */
kc_status* kc__stablehlo_bytecode_to_text(const void* data, size_t size, kc__buf* out_text);

/* kc_program_parse_with for an artifact: its text, parsed by
 * kc__stablehlo_parse with `options` (checked and complete). Errors in
 * the text's reading get the context "in the StableHLO text of the
 * bytecode". */
kc_status* kc__stablehlo_bytecode_parse(kc_string_view data, const kc_parse_options* options,
                                        kc_program** out_program);

/* The producer an artifact names ("StableHLO_v1.15.0"; a view into
 * `data`), or "" when its header does not read. */
kc_string_view kc__stablehlo_bytecode_producer(kc_string_view data);

/* The same with the entry's platform index argument bound to
 * `platform_index` (kc__stablehlo_parse_for). */
kc_status* kc__stablehlo_bytecode_parse_for(kc_string_view data, const kc_parse_options* options,
                                            int32_t platform_index, kc_program** out_program);

/* ---- Exported.serialize() (exported.c) ----------------------------------- */

/* True when `data` is a flatbuffer of jax.export's schema
 * (jax_export.serialization.Exported, what `Exported.serialize()`
 * writes) whose mlir_module_serialized field holds a portable artifact:
 * the root table, its vtable and that vector all in bounds. */
bool kc__jax_exported_detect(kc_string_view data);

/* kc_program_parse_with for a serialized Exported: its calling
 * convention checked (versions 9 and 10), its artifact parsed with the
 * platform index argument, when it has platforms to choose from, bound
 * to the index of "cpu" (else "cuda"). UNIMPLEMENTED for what kcall
 * does not run: another calling convention version, ordered effects
 * (token arguments), more than one device, no cpu or cuda lowering.
 * INVALID_ARGUMENT "serialized jax.export, byte N: ..." for a field out
 * of bounds. Errors of the artifact get the context "in the module of
 * the serialized jax.export". */
kc_status* kc__jax_exported_parse(kc_string_view data, const kc_parse_options* options,
                                  kc_program** out_program);

#endif /* KCALL_PROGRAM_STABLEHLO_BYTECODE_H_ */
