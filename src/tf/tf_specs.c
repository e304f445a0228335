/* libkcall_tf: a kcall op's specs in TensorFlow's spelling, checked before
 * anything reaches TensorFlow. TensorFlow finalises a library's op
 * definitions only after the library is loaded, and one it refuses fails
 * the whole load, so every spec written here is one TensorFlow takes: an
 * op with anything else is left out, with the reason. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf/tf_internal.h"

/* ---- dtypes ------------------------------------------------------------------- */

static const struct {
  uint8_t code, bits;
  int tf;
  const char* name;
} kc__tf_types[] = {
    {kDLFloat, 32, KC__TF_FLOAT, "float"},       {kDLFloat, 64, KC__TF_DOUBLE, "double"},
    {kDLFloat, 16, KC__TF_HALF, "half"},         {kDLBfloat, 16, KC__TF_BFLOAT16, "bfloat16"},
    {kDLInt, 8, KC__TF_INT8, "int8"},            {kDLInt, 16, KC__TF_INT16, "int16"},
    {kDLInt, 32, KC__TF_INT32, "int32"},         {kDLInt, 64, KC__TF_INT64, "int64"},
    {kDLUInt, 8, KC__TF_UINT8, "uint8"},         {kDLUInt, 16, KC__TF_UINT16, "uint16"},
    {kDLUInt, 32, KC__TF_UINT32, "uint32"},      {kDLUInt, 64, KC__TF_UINT64, "uint64"},
    {kDLBool, 8, KC__TF_BOOL, "bool"},           {kDLComplex, 64, KC__TF_COMPLEX64, "complex64"},
    {kDLComplex, 128, KC__TF_COMPLEX128, "complex128"},
};
#define KC__TF_NUM_TYPES (sizeof kc__tf_types / sizeof kc__tf_types[0])

static int kc__tf_type_index(DLDataType t) {
  if (t.lanes != 1) return -1;
  for (size_t i = 0; i < KC__TF_NUM_TYPES; ++i) {
    if (kc__tf_types[i].code == t.code && kc__tf_types[i].bits == t.bits) return (int)i;
  }
  return -1;
}

const char* kc__tf_type_name(DLDataType t) {
  int i = kc__tf_type_index(t);
  return i < 0 ? NULL : kc__tf_types[i].name;
}

int kc__tf_type_of(DLDataType t) {
  int i = kc__tf_type_index(t);
  return i < 0 ? 0 : kc__tf_types[i].tf;
}

bool kc__tf_dtype_of(int tf, DLDataType* out) {
  for (size_t i = 0; i < KC__TF_NUM_TYPES; ++i) {
    if (kc__tf_types[i].tf == tf) {
      *out = (DLDataType){.code = kc__tf_types[i].code, .bits = kc__tf_types[i].bits, .lanes = 1};
      return true;
    }
  }
  return false;
}

/* The dtypes of a class word of kcall's spec language (op.h, "Type
 * words"), as a mask over kc__tf_types; 0 for a word that is not one.
 * Every class lists dtypes TensorFlow has, so nothing is lost. */
static uint32_t kc__tf_class_mask(const char* word, size_t len) {
  uint32_t sign = 0, unsign = 0, floating = 0, complex = 0;
  for (size_t i = 0; i < KC__TF_NUM_TYPES; ++i) {
    uint32_t bit = 1u << i;
    switch (kc__tf_types[i].code) {
      case kDLInt: sign |= bit; break;
      case kDLUInt: unsign |= bit; break;
      case kDLFloat:
      case kDLBfloat: floating |= bit; break;
      case kDLComplex: complex |= bit; break;
      default: break;
    }
  }
  static const char* const words[] = {"signed",         "unsigned",        "integer",
                                      "floating",       "complex",         "numeric",
                                      "realnumbertype", "realnumerictype", "numbertype",
                                      "numerictype"};
  const uint32_t masks[] = {sign,
                            unsign,
                            sign | unsign,
                            floating,
                            complex,
                            sign | unsign | floating | complex,
                            sign | unsign | floating,
                            sign | unsign | floating,
                            sign | unsign | floating | complex,
                            sign | unsign | floating | complex};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i) {
    if (strlen(words[i]) == len && strncmp(words[i], word, len) == 0) return masks[i];
  }
  return 0;
}

/* ---- names -------------------------------------------------------------------- */

bool kc__tf_op_name(const char* name, char* out, size_t cap, char* why, size_t why_cap) {
  size_t n = 0;
  bool start = true;
  const char* prefix = "Kcall";
  for (const char* p = prefix; *p && n + 1 < cap; ++p) out[n++] = *p;
  for (const char* p = name; *p; ++p) {
    if (*p == '.') {
      start = true;
      continue;
    }
    if (!isalnum((unsigned char)*p) && *p != '_') {
      snprintf(why, why_cap,
               "its name has '%c', which a TensorFlow op name cannot (letters, digits, '_' "
               "and the dots kcall drops)",
               *p);
      return false;
    }
    if (n + 1 >= cap) {
      snprintf(why, why_cap, "its name is longer than %zu characters", cap - 6);
      return false;
    }
    out[n++] = start ? (char)toupper((unsigned char)*p) : *p;
    start = false;
  }
  out[n] = '\0';
  if (n == strlen(prefix)) {
    snprintf(why, why_cap, "its name is empty");
    return false;
  }
  return true;
}

/* TensorFlow's rule for arg names ([a-z][a-z0-9_]*) or attr names
 * ([a-zA-Z][a-zA-Z0-9_]*). */
static bool kc__tf_name_ok(const char* name, size_t len, bool attr) {
  if (len == 0) return false;
  if (attr ? !isalpha((unsigned char)name[0]) : !islower((unsigned char)name[0])) return false;
  for (size_t i = 1; i < len; ++i) {
    unsigned char c = (unsigned char)name[i];
    bool ok = attr ? (isalnum(c) || c == '_')
                   : (islower(c) || isdigit(c) || c == '_');
    if (!ok) return false;
  }
  return true;
}

/* ---- specs -------------------------------------------------------------------- */

/* A spec's name (before ':', blanks trimmed) and its rest (after ':'). */
static void kc__tf_spec_split(const char* spec, size_t* name_len, const char** rest) {
  const char* colon = strchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
  while (n > 0 && spec[n - 1] == ' ') --n;
  *name_len = n;
  const char* r = colon ? colon + 1 : spec + strlen(spec);
  while (*r == ' ') ++r;
  *rest = r;
}

static int32_t kc__tf_attr_find(const kc__tf_op* o, const char* word, size_t len) {
  for (int32_t i = 0; i < o->num_attrs; ++i) {
    if (strlen(o->attrs[i].name) == len && strncmp(o->attrs[i].name, word, len) == 0) return i;
  }
  return -1;
}

/* Appends to `out` (cap KC__TF_SPEC_CAP); false when it does not fit. */
static bool kc__tf_put(char* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static bool kc__tf_put(char* out, const char* fmt, ...) {
  size_t used = strlen(out);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out + used, KC__TF_SPEC_CAP - used, fmt, ap);
  va_end(ap);
  return n >= 0 && (size_t)n < KC__TF_SPEC_CAP - used;
}

/* The set of dtypes "{w, w, ...}" names (dtype and class words), as a
 * mask over kc__tf_types; *dropped when one names a dtype TensorFlow has
 * not. False for a word kcall's specs do not take (never, after kcall has
 * read the spec). */
static bool kc__tf_type_set(const char* set, size_t len, uint32_t* mask, bool* dropped) {
  *mask = 0;
  *dropped = false;
  size_t i = 0;
  while (i < len) {
    while (i < len && (set[i] == ' ' || set[i] == ',')) ++i;
    size_t start = i;
    while (i < len && set[i] != ' ' && set[i] != ',') ++i;
    if (i == start) break;
    uint32_t cls = kc__tf_class_mask(set + start, i - start);
    if (cls) {
      *mask |= cls;
      continue;
    }
    DLDataType t;
    kc_status* st = kc_dtype_parse((kc_string_view){.data = set + start, .size = i - start}, &t);
    if (st) {
      kc_status_destroy(st);
      return false;
    }
    int index = kc__tf_type_index(t);
    if (index < 0) {
      *dropped = true;
    } else {
      *mask |= 1u << index;
    }
  }
  return true;
}

static bool kc__tf_put_mask(char* out, uint32_t mask) {
  bool ok = kc__tf_put(out, "{");
  const char* sep = "";
  for (size_t i = 0; i < KC__TF_NUM_TYPES; ++i) {
    if (!(mask & (1u << i))) continue;
    ok = ok && kc__tf_put(out, "%s%s", sep, kc__tf_types[i].name);
    sep = ", ";
  }
  return ok && kc__tf_put(out, "}");
}

/* A default value in TensorFlow's spelling; false for one it cannot
 * write as kcall means it. */
static bool kc__tf_put_value(char* out, const kc_any* v) {
  kc_string_view s;
  switch (v->type_index) {
    case KC_TYPE_INT: return kc__tf_put(out, "%lld", (long long)v->u.v_int64);
    case KC_TYPE_BOOL: return kc__tf_put(out, "%s", v->u.v_int64 ? "true" : "false");
    case KC_TYPE_FLOAT: /* as protobuf's text format reads a float */
      if (isnan(v->u.v_float64)) return kc__tf_put(out, "nan");
      if (isinf(v->u.v_float64)) return kc__tf_put(out, "%sinf", v->u.v_float64 < 0 ? "-" : "");
      return kc__tf_put(out, "%.9g", v->u.v_float64);
    case KC_TYPE_DTYPE: {
      const char* name = kc__tf_type_name(v->u.v_dtype);
      if (!name || !kc__tf_put(out, "DT_")) return false;
      for (const char* p = name; *p; ++p) {
        if (!kc__tf_put(out, "%c", toupper((unsigned char)*p))) return false;
      }
      return true;
    }
    case KC_TYPE_ARRAY: {
      const kc_array* a = (const kc_array*)v->u.v_obj;
      bool ok = kc__tf_put(out, "[");
      for (size_t i = 0; ok && i < kc_array_get_size(a); ++i) {
        const kc_any* item = kc_array_get_item(a, i);
        if (item->type_index != KC_TYPE_INT && item->type_index != KC_TYPE_FLOAT &&
            item->type_index != KC_TYPE_BOOL) {
          return false;
        }
        ok = (i == 0 || kc__tf_put(out, ", ")) && kc__tf_put_value(out, item);
      }
      return ok && kc__tf_put(out, "]");
    }
    default:
      if (!kc_any_get_string(v, &s)) return false;
      for (size_t i = 0; i < s.size; ++i) {
        if (s.data[i] == '\'' || s.data[i] == '\\' || !isprint((unsigned char)s.data[i])) {
          return false;
        }
      }
      return kc__tf_put(out, "'%.*s'", (int)s.size, s.data);
  }
}

/* The attr `index` of the op: its kind in o->attrs and its TensorFlow
 * spec in `out`. */
static bool kc__tf_attr_make(const kc_op* op, int32_t index, kc__tf_attr* a, char* out,
                             char* why, size_t cap) {
  const char* spec = kc_op_get_attr_spec(op, index);
  size_t name_len = 0;
  const char* rest = NULL;
  kc__tf_spec_split(spec, &name_len, &rest);
  if (name_len >= sizeof a->name || !kc__tf_name_ok(spec, name_len, true)) {
    snprintf(why, cap, "attr '%.*s': TensorFlow's attr names are [a-zA-Z][a-zA-Z0-9_]*",
             (int)name_len, spec);
    return false;
  }
  memcpy(a->name, spec, name_len);
  a->name[name_len] = '\0';
  out[0] = '\0';
  kc__tf_put(out, "%s: ", a->name);
  /* The kind: "{...}", "list(...)" or a word. */
  size_t kind_len = 0;
  if (rest[0] == '{') {
    const char* close = strchr(rest, '}');
    kind_len = close ? (size_t)(close - rest) + 1 : strlen(rest);
  } else if (strncmp(rest, "list(", 5) == 0) {
    const char* close = strchr(rest, ')');
    kind_len = close ? (size_t)(close - rest) + 1 : strlen(rest);
  } else {
    while (rest[kind_len] && (isalnum((unsigned char)rest[kind_len]) || rest[kind_len] == '_')) {
      ++kind_len;
    }
  }
  const char* tail = rest + kind_len;
  bool ok = true, is_list = false;
  uint32_t mask = 0;
  bool dropped = false;
#define KC__TF_IS(word) (kind_len == strlen(word) && strncmp(rest, word, kind_len) == 0)
  if (KC__TF_IS("int") || KC__TF_IS("float") || KC__TF_IS("bool") || KC__TF_IS("string")) {
    a->kind = KC__TF_IS("int")     ? KC__TF_KIND_INT
              : KC__TF_IS("float") ? KC__TF_KIND_FLOAT
              : KC__TF_IS("bool")  ? KC__TF_KIND_BOOL
                                   : KC__TF_KIND_STRING;
    ok = kc__tf_put(out, "%.*s", (int)kind_len, rest);
  } else if (KC__TF_IS("list(int)") || KC__TF_IS("list(float)") || KC__TF_IS("list(bool)") ||
             KC__TF_IS("list(type)")) {
    a->kind = KC__TF_IS("list(int)")     ? KC__TF_KIND_INTS
              : KC__TF_IS("list(float)") ? KC__TF_KIND_FLOATS
              : KC__TF_IS("list(bool)")  ? KC__TF_KIND_BOOLS
                                         : KC__TF_KIND_TYPES;
    is_list = true;
    ok = kc__tf_put(out, "%.*s", (int)kind_len, rest);
  } else if (KC__TF_IS("type") || KC__TF_IS("any")) {
    a->kind = KC__TF_KIND_TYPE;
    ok = kc__tf_put(out, "type");
  } else if (rest[0] == '{' && (rest[1] == '\'' || rest[1] == '"')) {
    a->kind = KC__TF_KIND_STRING; /* a string set, as TensorFlow writes one */
    ok = kc__tf_put(out, "%.*s", (int)kind_len, rest);
  } else if (rest[0] == '{' || kc__tf_class_mask(rest, kind_len)) {
    a->kind = KC__TF_KIND_TYPE;
    bool read = rest[0] == '{' ? kc__tf_type_set(rest + 1, kind_len - 2, &mask, &dropped)
                               : (mask = kc__tf_class_mask(rest, kind_len)) != 0;
    if (!read || !mask) {
      snprintf(why, cap, "attr '%s': TensorFlow has none of the dtypes of %s", a->name, spec);
      return false;
    }
    ok = kc__tf_put_mask(out, mask);
  } else if (strncmp(rest, "list({", 6) == 0) {
    a->kind = KC__TF_KIND_TYPES;
    is_list = true;
    if (!kc__tf_type_set(rest + 6, kind_len - 8, &mask, &dropped) || !mask) {
      snprintf(why, cap, "attr '%s': TensorFlow has none of the dtypes of %s", a->name, spec);
      return false;
    }
    ok = kc__tf_put(out, "list(") && kc__tf_put_mask(out, mask) && kc__tf_put(out, ")");
  } else {
    snprintf(why, cap,
             "attr '%s' (%s): TensorFlow's C API reads no attr of this kind from a node",
             a->name, spec);
    return false;
  }
#undef KC__TF_IS
  (void)dropped; /* dtypes TensorFlow has not are never given there */
  /* A minimum TensorFlow keeps as written; a maximum it cannot state is
   * kcall's to check when the kernel is made. */
  const char* at_least = strstr(tail, ">=");
  if (at_least && (a->kind == KC__TF_KIND_INT || is_list)) {
    long long minimum = strtoll(at_least + 2, NULL, 10);
    ok = ok && kc__tf_put(out, " >= %lld", minimum);
  }
  const kc_any* def = kc_op_get_attr_default(op, index);
  if (def) {
    ok = ok && kc__tf_put(out, " = ");
    if (ok && !kc__tf_put_value(out, def)) {
      snprintf(why, cap, "attr '%s': TensorFlow cannot write its default (%s)", a->name, spec);
      return false;
    }
  }
  if (!ok) {
    snprintf(why, cap, "attr '%s': its spec is longer than %d characters", a->name,
             KC__TF_SPEC_CAP - 1);
    return false;
  }
  return true;
}

/* An input or output arg's TensorFlow spec in `out`; for an input, the
 * attrs it types or counts become inferred and its dtype is noted. */
static bool kc__tf_arg_make(kc__tf_op* o, const char* spec, bool input, int32_t index, char* out,
                            char* why, size_t cap) {
  const char* side = input ? "input" : "output";
  size_t name_len = 0;
  const char* rest = NULL;
  kc__tf_spec_split(spec, &name_len, &rest);
  if (!kc__tf_name_ok(spec, name_len, false)) {
    snprintf(why, cap, "%s '%.*s': TensorFlow's arg names are [a-z][a-z0-9_]*", side,
             (int)name_len, spec);
    return false;
  }
  out[0] = '\0';
  bool ok = kc__tf_put(out, "%.*s: ", (int)name_len, spec);
  const char* type = rest;
  const char* star = strchr(rest, '*');
  bool list = false;
  if (star) {
    size_t n = (size_t)(star - rest);
    while (n > 0 && rest[n - 1] == ' ') --n;
    int32_t count = kc__tf_attr_find(o, rest, n);
    if (count < 0 || o->attrs[count].kind != KC__TF_KIND_INT) {
      snprintf(why, cap, "%s '%s': its length is not an int attr", side, spec);
      return false;
    }
    if (input) o->attrs[count].inferred = true;
    ok = ok && kc__tf_put(out, "%s * ", o->attrs[count].name);
    type = star + 1;
    while (*type == ' ') ++type;
    list = true;
  }
  size_t type_len = strlen(type);
  int32_t attr = kc__tf_attr_find(o, type, type_len);
  DLDataType dtype = {0, 0, 0};
  if (attr >= 0) {
    kc__tf_attr_kind kind = o->attrs[attr].kind;
    if (kind != KC__TF_KIND_TYPE && !(kind == KC__TF_KIND_TYPES && !star)) {
      snprintf(why, cap, "%s '%s': '%s' is not a type attr", side, spec, o->attrs[attr].name);
      return false;
    }
    if (kind == KC__TF_KIND_TYPES) list = true;
    if (input) o->attrs[attr].inferred = true;
    ok = ok && kc__tf_put(out, "%s", o->attrs[attr].name);
  } else {
    kc_status* st = kc_dtype_parse((kc_string_view){.data = type, .size = type_len}, &dtype);
    const char* name = st ? NULL : kc__tf_type_name(dtype);
    kc_status_destroy(st);
    if (!name) {
      snprintf(why, cap, "%s '%s': TensorFlow has no dtype '%s'", side, spec, type);
      return false;
    }
    ok = ok && kc__tf_put(out, "%s", name);
  }
  if (!ok) {
    snprintf(why, cap, "%s '%s': its spec is too long", side, spec);
    return false;
  }
  if (input) {
    o->arg_dtype[index] = dtype;
    o->arg_attr[index] = (int8_t)attr;
    o->arg_list[index] = list;
  }
  return true;
}

bool kc__tf_op_make(const kc_op* op, kc__tf_op* o, kc__tf_specs* specs, char* why, size_t cap) {
  memset(o, 0, sizeof *o);
  memset(specs, 0, sizeof *specs);
  o->op = op;
  kc_string_view name = kc_op_get_name(op);
  if (name.size >= sizeof o->name) {
    snprintf(why, cap, "its name is longer than %zu characters", sizeof o->name - 1);
    return false;
  }
  memcpy(o->name, name.data, name.size);
  if (!kc__tf_op_name(o->name, o->tf_name, sizeof o->tf_name, why, cap)) return false;
  int32_t num_in = kc_op_get_input_count(op), num_out = kc_op_get_output_count(op);
  int32_t num_attrs = kc_op_get_attr_count(op);
  if (num_in > KC__TF_MAX_ARGS || num_out > KC__TF_MAX_ARGS || num_attrs > KC__TF_MAX_ATTRS) {
    snprintf(why, cap, "more than %d inputs or outputs or %d attrs", KC__TF_MAX_ARGS,
             KC__TF_MAX_ATTRS);
    return false;
  }
  o->num_attrs = specs->num_attrs = num_attrs;
  for (int32_t i = 0; i < num_attrs; ++i) {
    if (!kc__tf_attr_make(op, i, &o->attrs[i], specs->attrs[i], why, cap)) return false;
  }
  o->num_args = specs->num_inputs = num_in;
  specs->num_outputs = num_out;
  int32_t lists = 0;
  for (int32_t i = 0; i < num_in; ++i) {
    if (!kc__tf_arg_make(o, kc_op_get_input_spec(op, i), true, i, specs->inputs[i], why, cap)) {
      return false;
    }
    lists += o->arg_list[i];
  }
  for (int32_t i = 0; i < num_out; ++i) {
    if (!kc__tf_arg_make(o, kc_op_get_output_spec(op, i), false, i, specs->outputs[i], why,
                         cap)) {
      return false;
    }
  }
  /* TensorFlow's shape context gives the inputs' shapes and type attrs,
   * nothing else: a shape function reading another attr, or the dtypes
   * of a type list, runs only when the kernel does. */
  o->static_shapes = lists <= 1;
  for (int32_t i = 0; i < num_in; ++i) {
    if (o->arg_attr[i] >= 0 && o->attrs[o->arg_attr[i]].kind == KC__TF_KIND_TYPES) {
      o->static_shapes = false;
    }
  }
  for (int32_t i = 0; i < num_attrs; ++i) {
    if (!o->attrs[i].inferred && o->attrs[i].kind != KC__TF_KIND_TYPE) o->static_shapes = false;
  }
  return true;
}
