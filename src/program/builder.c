/* Building programs instruction by instruction. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/grow.h"
#include "internal/attrs.h"
#include "internal/common.h"
#include "program/instr/instr.h"
#include "program/program_internal.h"

struct kc_program_builder {
  kc_program* p;
  kc__strmap names;
  int32_t root; /* -1: the last instruction */
};

const char* kc__instr_name(int32_t op) {
  const kc__instr_def* d = kc__instr_def_find(op);
  return d ? d->name : "unknown";
}

size_t kc__instr_where(const kc__instr* in, char* buf, size_t cap) {
  int n = in->line > 0
              ? snprintf(buf, cap, "instruction %s (line %d)", KC__QS(in->name), in->line)
              : snprintf(buf, cap, "instruction %s", KC__QS(in->name));
  return n < 0 ? 0 : (size_t)n;
}

kc_status* kc__instr_error(const kc__instr* in, kc_status_code code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  kc_status* st = kc_status_create_v(code, fmt, args);
  va_end(args);
  /* The context kc__instr_where writes. */
  return in->line > 0 ? kc_status_add_context(st, "instruction %s (line %d)",
                                              KC__QS(in->name), in->line)
                      : kc_status_add_context(st, "instruction %s", KC__QS(in->name));
}

static kc_status* kc__builder_oom(void) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory building a program");
}

static void kc__program_free(kc_program* p) {
  if (!p) return;
  for (size_t i = 0; i < p->count; ++i) {
    kc__instr* in = &p->instrs[i];
    kc_shape_destroy(in->shape);
    for (size_t k = 0; k < in->num_computations; ++k) {
      kc_program_destroy(in->computations[k]);
    }
  }
  kc__free(p->instrs);
  kc__free(p->params);
  kc__free(p->skipped);
  kc__arena_free(&p->arena);
  kc__free(p);
}

void kc__program_retain(kc_program* program) {
  __atomic_fetch_add(&program->refs, 1, __ATOMIC_RELAXED);
}

void kc_program_destroy(kc_program* program) {
  if (program &&
      __atomic_fetch_sub(&program->refs, 1, __ATOMIC_ACQ_REL) == 1) {
    kc__program_free(program);
  }
}

kc_status* kc_program_builder_create(kc_string_view name,
                                     kc_program_builder** out_builder) {
  if (!out_builder) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_program_builder_create: out is NULL");
  }
  *out_builder = NULL;
  kc_program_builder* b = kc__calloc(1, sizeof *b);
  kc_program* p = kc__calloc(1, sizeof *p);
  if (!b || !p) {
    kc__free(b);
    kc__free(p);
    return kc__builder_oom();
  }
  b->p = p;
  b->root = -1;
  p->name = kc__arena_strdup(&p->arena, name.size ? name : KC_SV_LIT("program"));
  if (!p->name) {
    kc_program_builder_destroy(b);
    return kc__builder_oom();
  }
  *out_builder = b;
  return NULL;
}

void kc_program_builder_destroy(kc_program_builder* b) {
  if (!b) return;
  kc__program_free(b->p);
  kc__strmap_free(&b->names);
  kc__free(b);
}

/* Appends an instruction with a copy of `shape` and of the operand ids,
 * named `name` (or "<op>.<id>"). Checks builder, out_id, operand ids and
 * name uniqueness. */
static kc_status* kc__add(kc_program_builder* b, int32_t op,
                          const kc_shape* shape, const int32_t* operands,
                          size_t num_operands, kc_string_view name,
                          int32_t* out_id, kc__instr** out_instr) {
  if (!b || !out_id) {
    return kc_status_create(KC_INVALID_ARGUMENT, "adding %s: %s is NULL",
                            kc__instr_name(op), b ? "out_id" : "builder");
  }
  *out_id = -1;
  kc_program* p = b->p;
  if (p->count >= INT32_MAX - 1) {
    return kc_status_create(KC_OUT_OF_RANGE, "too many instructions");
  }
  if (num_operands && !operands) {
    return kc_status_create(KC_INVALID_ARGUMENT, "adding %s: operands is NULL",
                            kc__instr_name(op));
  }
  for (size_t i = 0; i < num_operands; ++i) {
    if (operands[i] < 0 || (size_t)operands[i] >= p->count) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "adding %s: operand %zu: expected an instruction "
                              "id below %zu, got %d",
                              kc__instr_name(op), i, p->count, operands[i]);
    }
  }
  char made_up[64];
  if (name.size == 0) {
    snprintf(made_up, sizeof made_up, "%s.%zu", kc__instr_name(op), p->count);
    name = kc_sv(made_up);
  }
  if (kc__strmap_get(&b->names, name) >= 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "adding %s: an instruction named %s already exists",
                            kc__instr_name(op), KC__Q(name));
  }
  if (!KC__GROW(p->instrs, p->cap, p->count + 1)) return kc__builder_oom();
  kc__instr* in = &p->instrs[p->count];
  memset(in, 0, sizeof *in);
  in->op = op;
  in->def = kc__instr_def_find(op);
  in->name = kc__arena_strdup(&p->arena, name);
  in->num_operands = num_operands;
  in->operands = kc__arena_dup(&p->arena, operands, num_operands * sizeof(int32_t));
  if (!in->name || !in->operands) return kc__builder_oom();
  if (shape) {
    kc_status* st = kc_shape_create_copy(shape, &in->shape);
    if (st) return st;
  }
  if (!kc__strmap_put(&b->names, kc_sv(in->name), (int32_t)p->count)) {
    kc_shape_destroy(in->shape);
    return kc__builder_oom();
  }
  *out_id = (int32_t)p->count++;
  *out_instr = in;
  return NULL;
}

/* Takes back the instruction kc__add appended last, when what follows it
 * fails, so that a failed add leaves the builder as it was. */
static kc_status* kc__unadd(kc_program_builder* b, kc_status* st) {
  kc_program* p = b->p;
  kc__instr* in = &p->instrs[--p->count];
  kc_shape_destroy(in->shape);
  in->shape = NULL;
  kc__strmap_put(&b->names, kc_sv(in->name), -1); /* cannot grow: present */
  return st;
}

kc_status* kc_program_builder_add_parameter(kc_program_builder* b,
                                            int64_t number,
                                            const kc_shape* shape,
                                            kc_string_view name,
                                            int32_t* out_id) {
  if (!shape || number < 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "adding parameter %s: %s", KC__Q(name),
                            shape ? "the number is negative" : "shape is NULL");
  }
  kc__instr* in = NULL;
  KC_RETURN_IF_ERROR(kc__add(b, KC__OP_PARAMETER, shape, NULL, 0, name, out_id, &in),
                     "adding parameter %lld", (long long)number);
  in->number = number;
  return NULL;
}

kc_status* kc_program_builder_add_constant(kc_program_builder* b,
                                           const kc_shape* shape,
                                           const void* data, size_t size,
                                           kc_string_view name,
                                           int32_t* out_id) {
  if (!shape || kc_shape_is_tuple(shape) || (size && !data) ||
      size != kc_shape_get_byte_size(shape)) {
    return kc_status_create(
        KC_INVALID_ARGUMENT,
        "adding constant %s: expected an array shape and %zu bytes of "
        "data, got %s and %zu bytes",
        KC__Q(name),
        kc_shape_get_byte_size(shape),
        !shape ? "no shape" : kc_shape_is_tuple(shape) ? "a tuple" : "an array",
        size);
  }
  kc__instr* in = NULL;
  KC_RETURN_IF_ERROR(kc__add(b, KC__OP_CONSTANT, shape, NULL, 0, name, out_id, &in),
                     "adding a constant");
  in->literal = kc__arena_dup(&b->p->arena, data, size);
  in->literal_size = size;
  if (!in->literal) return kc__unadd(b, kc__builder_oom());
  return NULL;
}

kc_status* kc_program_builder_add_tuple(kc_program_builder* b,
                                        const int32_t* operands,
                                        size_t num_operands,
                                        kc_string_view name, int32_t* out_id) {
  kc__instr* in = NULL;
  KC_RETURN_IF_ERROR(
      kc__add(b, KC__OP_TUPLE, NULL, operands, num_operands, name, out_id, &in),
      "adding a tuple");
  const kc_shape** elems = kc__calloc(num_operands + 1, sizeof *elems);
  if (!elems) return kc__unadd(b, kc__builder_oom());
  for (size_t i = 0; i < num_operands; ++i) {
    elems[i] = b->p->instrs[operands[i]].shape;
  }
  kc_status* st = kc_shape_create_tuple(elems, num_operands, &in->shape);
  kc__free(elems);
  return st ? kc__unadd(b, st) : NULL;
}

kc_status* kc_program_builder_add_get_tuple_element(kc_program_builder* b,
                                                    int32_t operand,
                                                    int64_t index,
                                                    kc_string_view name,
                                                    int32_t* out_id) {
  kc__instr* in = NULL;
  KC_RETURN_IF_ERROR(kc__add(b, KC__OP_GET_TUPLE_ELEMENT, NULL, &operand, 1,
                             name, out_id, &in),
                     "adding a get-tuple-element");
  const kc_shape* t = b->p->instrs[operand].shape;
  const kc_shape* elem =
      index >= 0 ? kc_shape_get_element(t, (size_t)index) : NULL;
  if (!elem) {
    char text[256];
    kc_shape_format(t, text, sizeof text);
    return kc__unadd(b, kc_status_create(KC_INVALID_ARGUMENT,
                                         "get-tuple-element %s: index %lld "
                                         "is not an element of %s",
                                         KC__QS(in->name), (long long)index, text));
  }
  in->number = index;
  kc_status* st = kc_shape_create_copy(elem, &in->shape);
  return st ? kc__unadd(b, st) : NULL;
}

/* The logical op XLA computes for `op` on pred values, or `op`: add and
 * maximum of bools are their or, multiply and minimum their and. */
static int32_t kc__pred_op(const kc_program_builder* b, kc_opcode op, const kc_shape* result,
                           const int32_t* operands, size_t num_operands) {
  bool is_or = op == KC_OP_ADD || op == KC_OP_MAXIMUM;
  bool is_and = op == KC_OP_MULTIPLY || op == KC_OP_MINIMUM;
  if ((!is_or && !is_and) || !b || !result || kc_shape_is_tuple(result) ||
      kc_shape_get_dtype(result).code != kDLBool || num_operands != 2 || !operands) {
    return (int32_t)op;
  }
  for (size_t i = 0; i < num_operands; ++i) {
    if (operands[i] < 0 || (size_t)operands[i] >= b->p->count) return (int32_t)op;
    const kc_shape* s = b->p->instrs[operands[i]].shape;
    if (kc_shape_is_tuple(s) || kc_shape_get_dtype(s).code != kDLBool) return (int32_t)op;
  }
  return is_or ? KC_OP_OR : KC_OP_AND;
}

/* True for the entries kc_program_builder_add_op adds: the element-wise
 * arithmetic, exponential, log and convert, and reshape. */
static bool kc__is_add_op(const kc__instr_def* def) {
  return def && (def->kind == KC__INSTR_ELEMENTWISE || def->kind == KC__INSTR_RESHAPE);
}

/* An instruction of kc__is_add_op's entries: its operand count checked
 * here, pred arithmetic added as or/and. */
static kc_status* kc__add_elementwise(kc_program_builder* b, const kc__instr_def* def,
                                      int32_t op, const kc_shape* result_shape,
                                      const int32_t* operands, size_t num_operands,
                                      kc_string_view name, int32_t* out_id) {
  int32_t logical = kc__pred_op(b, (kc_opcode)op, result_shape, operands, num_operands);
  kc__instr* in = NULL;
  if (logical != op) {
    return kc__add(b, logical, result_shape, operands, num_operands, name, out_id, &in);
  }
  /* The count a refused opcode's message asks for is 2 up to
   * KC_OP_MINIMUM, else 1. */
  size_t want = def ? (size_t)def->min_operands : op <= KC_OP_MINIMUM ? 2 : 1;
  if (!def || !result_shape || num_operands != want) {
    return kc_status_create(
        KC_INVALID_ARGUMENT,
        "adding %s %s: expected a known opcode, a result shape and %zu "
        "operand%s, got %zu",
        kc__instr_name(op), KC__Q(name),
        want, want == 1 ? "" : "s", num_operands);
  }
  return kc__add(b, op, result_shape, operands, num_operands, name, out_id, &in);
}

kc_status* kc_program_builder_add_op(kc_program_builder* b, kc_opcode op,
                                     const kc_shape* result_shape,
                                     const int32_t* operands,
                                     size_t num_operands, kc_string_view name,
                                     int32_t* out_id) {
  const kc__instr_def* def = kc__instr_def_find((int32_t)op);
  if (!kc__is_add_op(def) || !result_shape) {
    /* Its own message, as before kc_program_builder_add_instruction took
     * these opcodes too. */
    return kc__add_elementwise(b, NULL, (int32_t)op, result_shape, operands, num_operands,
                               name, out_id);
  }
  kc_instruction_desc d = {.struct_size = sizeof d, .op = (int32_t)op,
                           .result_shape = result_shape, .operands = operands,
                           .num_operands = num_operands};
  return kc_program_builder_add_instruction(b, &d, name, out_id);
}

kc_status* kc_program_builder_add_broadcast(kc_program_builder* b,
                                            const kc_shape* result_shape,
                                            int32_t operand,
                                            const int64_t* dimensions,
                                            size_t num_dimensions,
                                            kc_string_view name,
                                            int32_t* out_id) {
  if (!result_shape || (num_dimensions && !dimensions)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "adding broadcast %s: %s is NULL", KC__Q(name),
                            result_shape ? "dimensions" : "result_shape");
  }
  kc__instr* in = NULL;
  KC_RETURN_IF_ERROR(kc__add(b, KC__OP_BROADCAST, result_shape, &operand, 1,
                             name, out_id, &in),
                     "adding a broadcast");
  in->dims = kc__arena_dup(&b->p->arena, dimensions, num_dimensions * sizeof(int64_t));
  in->num_dims = num_dimensions;
  return in->dims ? NULL : kc__unadd(b, kc__builder_oom());
}

static const int64_t* kc__dup_path(kc__arena* a, const int64_t* path, size_t n) {
  return kc__arena_dup(a, path, n * sizeof *path);
}

kc_status* kc_program_builder_add_custom_call(kc_program_builder* b,
                                              const kc_custom_call_desc* desc,
                                              kc_string_view name,
                                              int32_t* out_id) {
  if (!desc || desc->struct_size < offsetof(kc_custom_call_desc, attrs) ||
      !desc->result_shape || !desc->target.data || desc->target.size == 0) {
    return kc_status_create(
        KC_INVALID_ARGUMENT,
        "adding custom-call %s: expected a desc with a target and a "
        "result shape",
        KC__Q(name));
  }
  kc__instr* in = NULL;
  KC_RETURN_IF_ERROR(kc__add(b, KC__OP_CUSTOM_CALL, desc->result_shape,
                             desc->operands, desc->num_operands, name, out_id,
                             &in),
                     "adding custom-call to %s", KC__Q(desc->target));
  kc__arena* a = &b->p->arena;
  in->target = kc__arena_strdup(a, desc->target);
  in->opaque = kc__arena_dup(a, desc->opaque, desc->opaque ? desc->opaque_size : 0);
  in->opaque_size = desc->opaque ? desc->opaque_size : 0;
  in->has_side_effect = desc->has_side_effect;
  in->schedule = desc->schedule;
  in->api_version = desc->api_version ? desc->api_version : KC_XCALL_API_ORIGINAL;
  if (!in->target || !in->opaque) return kc__unadd(b, kc__builder_oom());
  const kc_attr_dict* attrs =
      KC_STRUCT_HAS(desc, kc_custom_call_desc, attrs) ? desc->attrs : NULL;
  if (!kc__attr_dict_copy(a, attrs, &in->attrs)) {
    if (kc__attr_dict_well_formed(attrs)) return kc__unadd(b, kc__builder_oom());
    return kc__unadd(b, kc_status_create(KC_INVALID_ARGUMENT,
                                         "custom-call %s: malformed "
                                         "attributes (an unknown type, or NULL "
                                         "data)",
                                         KC__QS(in->name)));
  }
  if (desc->num_aliases && !desc->aliases) {
    return kc__unadd(b, kc_status_create(KC_INVALID_ARGUMENT,
                                         "custom-call %s: aliases is NULL",
                                         KC__QS(in->name)));
  }
  kc__alias* aliases = kc__arena_alloc(a, desc->num_aliases * sizeof *aliases);
  if (!aliases) return kc__unadd(b, kc__builder_oom());
  for (size_t i = 0; i < desc->num_aliases; ++i) {
    const kc_output_operand_alias* s = &desc->aliases[i];
    aliases[i].output_index = kc__dup_path(a, s->output_index, s->output_index_size);
    aliases[i].output_index_size = s->output_index_size;
    aliases[i].operand = s->operand;
    aliases[i].operand_index = kc__dup_path(a, s->operand_index, s->operand_index_size);
    aliases[i].operand_index_size = s->operand_index_size;
    if (!aliases[i].output_index || !aliases[i].operand_index) return kc__unadd(b, kc__builder_oom());
  }
  in->aliases = aliases;
  in->num_aliases = desc->num_aliases;
  return NULL;
}

/* The size of kc_instruction_desc as first shipped: fields appended later
 * are read only from callers whose struct_size covers them. */
static const size_t kc__desc_v1_size =
    offsetof(kc_instruction_desc, num_computations) + sizeof(size_t);

kc_status* kc_program_builder_add_instruction(kc_program_builder* b,
                                              const kc_instruction_desc* desc,
                                              kc_string_view name, int32_t* out_id) {
  const kc__instr_def* def = desc ? kc__instr_def_find(desc->op) : NULL;
  /* Parameter, constant, tuple, get-tuple-element, broadcast and custom
   * call are added by their own functions. */
  if (def && def->kind != KC__INSTR_KERNEL && !kc__is_add_op(def)) def = NULL;
  if (!desc || desc->struct_size < kc__desc_v1_size || !desc->result_shape || !def ||
      (desc->num_computations && !desc->computations)) {
    return kc_status_create(
        KC_INVALID_ARGUMENT,
        "adding instruction '%.*s': expected a desc with an opcode of "
        "kc_program_builder_add_instruction, a result shape and its computations, got %s",
        (int)name.size, name.data ? name.data : "",
        !desc ? "NULL"
        : desc->struct_size < kc__desc_v1_size ? "a short struct_size"
        : !desc->result_shape ? "no result shape"
        : !def ? "an opcode it does not add"
               : "NULL computations");
  }
  for (size_t k = 0; k < desc->num_computations; ++k) {
    if (!desc->computations[k]) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "adding %s '%.*s': computation %zu is NULL", def->name,
                              (int)name.size, name.data ? name.data : "", k);
    }
  }
  if (kc__is_add_op(def)) {
    size_t num_attrs = desc->attrs ? desc->attrs->count : 0;
    if (num_attrs || desc->num_computations) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "adding %s %s: expected no attributes and no computations, "
                              "got %zu and %zu",
                              def->name, KC__Q(name), num_attrs, desc->num_computations);
    }
    return kc__add_elementwise(b, def, desc->op, desc->result_shape, desc->operands,
                               desc->num_operands, name, out_id);
  }
  kc__instr* in = NULL;
  KC_RETURN_IF_ERROR(kc__add(b, desc->op, desc->result_shape, desc->operands, desc->num_operands,
                  name, out_id, &in));
  kc__arena* a = &b->p->arena;
  if (!kc__attr_dict_copy(a, desc->attrs, &in->attrs)) {
    if (kc__attr_dict_well_formed(desc->attrs)) return kc__unadd(b, kc__builder_oom());
    return kc__unadd(b, kc_status_create(KC_INVALID_ARGUMENT,
                                         "%s '%s': malformed attributes (an unknown "
                                         "type, or NULL data)",
                                         def->name, in->name));
  }
  kc_program** called = kc__arena_alloc(a, desc->num_computations * sizeof *called + 1);
  if (!called) return kc__unadd(b, kc__builder_oom());
  for (size_t k = 0; k < desc->num_computations; ++k) {
    called[k] = desc->computations[k];
    kc__program_retain(called[k]);
  }
  in->computations = called;
  in->num_computations = desc->num_computations;
  return NULL;
}

kc_status* kc__builder_note_skipped(kc_program_builder* b, kc_string_view name) {
  kc_program* p = b->p;
  for (size_t i = 0; i < p->num_skipped; ++i) {
    if (kc_sv_equal(kc_sv(p->skipped[i].name), name)) {
      p->skipped[i].count++;
      return NULL;
    }
  }
  if (!KC__GROW(p->skipped, p->cap_skipped, p->num_skipped + 1)) return kc__builder_oom();
  const char* copy = kc__arena_strdup(&p->arena, name);
  if (!copy) return kc__builder_oom();
  p->skipped[p->num_skipped].name = copy;
  p->skipped[p->num_skipped].count = 1;
  p->num_skipped++;
  return NULL;
}

size_t kc_program_get_skipped_attribute_count(const kc_program* program) {
  return program ? program->num_skipped : 0;
}

const char* kc_program_get_skipped_attribute(const kc_program* program, size_t index,
                                             size_t* out_count) {
  if (!program || index >= program->num_skipped) return NULL;
  if (out_count) *out_count = program->skipped[index].count;
  return program->skipped[index].name;
}

size_t kc__builder_count(const kc_program_builder* b) {
  return b->p->count;
}

kc_status* kc_program_builder_set_root(kc_program_builder* b, int32_t id) {
  if (!b || id < 0 || (size_t)id >= b->p->count) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "set_root: expected an instruction id below %zu, got %d",
                            b ? b->p->count : 0, id);
  }
  b->root = id;
  return NULL;
}

kc_status* kc_program_builder_set_location(kc_program_builder* b, int32_t id,
                                           int32_t line, int32_t column) {
  if (!b || id < 0 || (size_t)id >= b->p->count) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "set_location: expected an instruction id below "
                            "%zu, got %d",
                            b ? b->p->count : 0, id);
  }
  b->p->instrs[id].line = line;
  b->p->instrs[id].column = column;
  return NULL;
}

kc_status* kc_program_builder_finish(kc_program_builder* b,
                                     kc_program** out_program) {
  if (!b || !out_program) {
    kc_program_builder_destroy(b);
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_program_builder_finish: %s is NULL",
                            b ? "out_program" : "builder");
  }
  *out_program = NULL;
  kc_program* p = b->p;
  kc_status* st = NULL;
  if (p->count == 0) {
    st = kc_status_create(KC_INVALID_ARGUMENT, "program %s has no instructions",
                          KC__QS(p->name));
  }
  for (size_t i = 0; i < p->count && !st; ++i) {
    if (p->instrs[i].def->kind == KC__INSTR_PARAMETER) p->num_params++;
  }
  if (!st && p->num_params) {
    p->params = kc__malloc(p->num_params * sizeof *p->params);
    if (!p->params) st = kc__builder_oom();
    for (size_t i = 0; !st && i < p->num_params; ++i) p->params[i] = -1;
  }
  for (size_t i = 0; i < p->count && !st; ++i) {
    const kc__instr* in = &p->instrs[i];
    if (in->def->kind != KC__INSTR_PARAMETER) continue;
    if (in->number < 0 || (size_t)in->number >= p->num_params ||
        p->params[in->number] >= 0) {
      char where[300];
      kc__instr_where(in, where, sizeof where);
      st = kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: parameter number %lld: expected each of 0 to "
                            "%zu exactly once",
                            where, (long long)in->number, p->num_params - 1);
      break;
    }
    p->params[in->number] = (int32_t)i;
  }
  if (st) {
    kc_program_builder_destroy(b);
    return st;
  }
  p->root = b->root >= 0 ? b->root : (int32_t)p->count - 1;
  p->refs = 1;
  b->p = NULL;
  kc_program_builder_destroy(b);
  *out_program = p;
  return NULL;
}

const char* kc_program_get_name(const kc_program* program) {
  return program ? program->name : "";
}

const char* kc_program_get_format(const kc_program* program) {
  return program && program->format ? program->format : "built";
}

bool kc__program_set_format(kc_program* program, kc_string_view format) {
  const char* copy = kc__arena_strdup(&program->arena, format);
  if (copy) program->format = copy;
  return copy != NULL;
}

bool kc__program_set_output_names(kc_program* program, const kc_string_view* names, size_t n) {
  const char** list = kc__arena_alloc(&program->arena, n * sizeof *list + 1);
  if (!list) return false;
  for (size_t i = 0; i < n; ++i) {
    list[i] = NULL;
    if (names[i].size && !(list[i] = kc__arena_strdup(&program->arena, names[i]))) return false;
  }
  program->output_names = list;
  program->num_output_names = n;
  return true;
}

const char* kc_program_get_output_name(const kc_program* program, size_t index) {
  if (!program || index >= program->num_output_names) return NULL;
  return program->output_names[index];
}

kc_status* kc__program_formatted(kc_status* st, kc_program** out, kc_string_view format) {
  if (st || kc__program_set_format(*out, format)) return st;
  kc_program_destroy(*out);
  *out = NULL;
  return kc__status_oom();
}

size_t kc_program_get_instruction_count(const kc_program* program) {
  return program ? program->count : 0;
}

size_t kc_program_get_parameter_count(const kc_program* program) {
  return program ? program->num_params : 0;
}

const kc_shape* kc_program_get_parameter_shape(const kc_program* program,
                                               size_t number) {
  if (!program || number >= program->num_params) return NULL;
  return program->instrs[program->params[number]].shape;
}

const char* kc_program_get_parameter_name(const kc_program* program,
                                          size_t number) {
  if (!program || number >= program->num_params) return NULL;
  return program->instrs[program->params[number]].name;
}

const kc_shape* kc_program_get_result_shape(const kc_program* program) {
  return program ? program->instrs[program->root].shape : NULL;
}
