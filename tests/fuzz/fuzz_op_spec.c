/*
 * fuzz_op_spec.c — op definitions from spec strings (src/op/spec.c).
 *
 * The input is one op, a line per spec, its first letter saying what the
 * rest of the line is:
 *
 *   i x: T              an input          (kc_op_builder_add_input)
 *   o y: T              an output         (kc_op_builder_add_output)
 *   a T: {f32, f64}     an attribute      (kc_op_builder_add_attr)
 *   d text              the doc string    (kc_op_builder_set_doc)
 *   v T=f64             a "name=value" argument of the op's function,
 *                       parsed as a default is (the value syntax)
 *
 * The op is registered; when it is, every spec it reports (normalised)
 * must build the same op again and read back the same, and its function
 * op.Fuzz is called with the v lines (with no inputs it reaches the
 * attributes; no kernel is registered, so the call cannot compute). Every
 * input ends with both registries empty.
 */
#include "fuzz.h"

#define KF_MAX_LINES 256
#define KF_MAX_VALUES 16

/* Adds one line's spec to the builder; lines of other letters are
 * ignored. */
static kc_status* kf_add(kc_op_builder* b, char kind, const char* spec) {
  switch (kind) {
    case 'i': return kc_op_builder_add_input(b, spec);
    case 'o': return kc_op_builder_add_output(b, spec);
    case 'a': return kc_op_builder_add_attr(b, spec);
    case 'd': return kc_op_builder_set_doc(b, spec);
    default: return NULL;
  }
}

/* The spec of `op`'s index-th arg of `kind`, as it reports it. */
static const char* kf_spec(const kc_op* op, char kind, int32_t index) {
  switch (kind) {
    case 'i': return kc_op_get_input_spec(op, index);
    case 'o': return kc_op_get_output_spec(op, index);
    default: return kc_op_get_attr_spec(op, index);
  }
}

static int32_t kf_count(const kc_op* op, char kind) {
  switch (kind) {
    case 'i': return kc_op_get_input_count(op);
    case 'o': return kc_op_get_output_count(op);
    default: return kc_op_get_attr_count(op);
  }
}

/* Builds "Again" from the normalised specs of `op`, registers it, and
 * checks that it reports the same specs and signature. */
static void kf_check_round_trip(const kc_op* op) {
  kc_op_builder* b = NULL;
  KF_ASSERT(!kf_refused(kc_op_builder_create("Again", &b)));
  static const char kKinds[] = {'i', 'o', 'a'};
  for (size_t k = 0; k < sizeof kKinds; ++k) {
    for (int32_t i = 0; i < kf_count(op, kKinds[k]); ++i) {
      const char* spec = kf_spec(op, kKinds[k], i);
      KF_ASSERT(spec != NULL);
      kc_status* st = kf_add(b, kKinds[k], spec);
      if (st) {
        fprintf(stderr, "fuzz_op_spec: the normalised spec '%s' is refused\n", spec);
      }
      KF_ASSERT(!kf_refused(st));
    }
  }
  KF_ASSERT(!kf_refused(kc_op_builder_set_doc(b, kc_op_get_doc(op))));
  kc_status* st = kc_op_registry_register(b, 0);
  if (st) {
    char text[512];
    kc_status_format(st, text, sizeof text);
    fprintf(stderr, "fuzz_op_spec: the normalised op is refused: %s\n", text);
  }
  KF_ASSERT(!kf_refused(st));
  const kc_op* again = NULL;
  KF_ASSERT(!kf_refused(kc_op_registry_lookup(KC_SV_LIT("Again"), &again)));
  for (size_t k = 0; k < sizeof kKinds; ++k) {
    KF_ASSERT(kf_count(op, kKinds[k]) == kf_count(again, kKinds[k]));
    for (int32_t i = 0; i < kf_count(op, kKinds[k]); ++i) {
      const char* a = kf_spec(op, kKinds[k], i);
      const char* b2 = kf_spec(again, kKinds[k], i);
      if (strcmp(a, b2) != 0) {
        fprintf(stderr, "fuzz_op_spec: '%s' reads back as '%s'\n", a, b2);
      }
      KF_ASSERT(strcmp(a, b2) == 0);
    }
  }
  KF_ASSERT(strcmp(kc_op_get_doc(op), kc_op_get_doc(again)) == 0);
  char sig[1024];
  char sig2[1024];
  size_t n = kc_op_format_signature(op, sig, sizeof sig);
  size_t n2 = kc_op_format_signature(again, sig2, sizeof sig2);
  /* The same after the name: "Fuzz(" and "Again(" differ by one byte. */
  KF_ASSERT(n + 1 == n2);
  if (n < sizeof sig && n2 < sizeof sig2) KF_ASSERT(strcmp(sig + 4, sig2 + 5) == 0);
}

/* Calls op.Fuzz with the "name=value" arguments. */
static void kf_call(char** values, int32_t count) {
  kc_func* fn = NULL;
  KF_ASSERT(!kf_refused(kc_func_registry_lookup(KC_SV_LIT("op.Fuzz"), &fn)));
  kc_any args[KF_MAX_VALUES];
  for (int32_t i = 0; i < count; ++i) args[i] = kc_any_cstr(values[i]);
  kc_any ret = kc_any_none();
  kc_status* st = kc_func_call(fn, args, count, &ret);
  if (!kf_refused(st)) kc_any_release(&ret);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text = kf_cstr(data, size);
  /* Lines, each NUL-terminated in place. */
  char* lines[KF_MAX_LINES];
  size_t count = 0;
  for (char* p = text; *p && count < KF_MAX_LINES;) {
    lines[count++] = p;
    char* nl = strchr(p, '\n');
    if (!nl) break;
    *nl = '\0';
    p = nl + 1;
  }

  kc_op_builder* b = NULL;
  KF_ASSERT(!kf_refused(kc_op_builder_create("Fuzz", &b)));
  char* values[KF_MAX_VALUES];
  int32_t num_values = 0;
  bool refused = false;
  for (size_t i = 0; i < count; ++i) {
    char kind = lines[i][0];
    const char* rest = lines[i][0] ? lines[i] + 1 : lines[i];
    if (*rest == ' ') ++rest;
    if (kind == 'v') {
      if (num_values < KF_MAX_VALUES) values[num_values++] = (char*)(uintptr_t)rest;
      continue;
    }
    refused |= kf_refused(kf_add(b, kind, rest));
  }
  kc_status* st = kc_op_registry_register(b, 0);
  /* A builder that refused a spec must refuse to register. */
  KF_ASSERT(!refused || st != NULL);
  if (!kf_refused(st)) {
    const kc_op* op = NULL;
    KF_ASSERT(!kf_refused(kc_op_registry_lookup(KC_SV_LIT("Fuzz"), &op)));
    kf_check_round_trip(op);
    kf_call(values, num_values);
  }
  kc_op_registry_reset();
  kc_func_registry_reset();
  free(text);
  return 0;
}
