/* libkcall_ort: what an op's specs say (input and output types, attr
 * kinds and the dtypes a type attr lists) and the attribute values of a
 * node, read through a kernel info or a shape-inference context. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ort/ort_internal.h"

/* ---- reading the op's specs ------------------------------------------------ */

/* The part of a spec after "name:", blanks trimmed at its start. */
static const char* kc__ort_spec_rest(const char* spec) {
  const char* colon = strchr(spec, ':');
  const char* p = colon ? colon + 1 : spec;
  while (*p == ' ') ++p;
  return p;
}

/* An input or output spec's ONNX type: a fixed dtype's, else UNDEFINED (a
 * type attr). Sets *list for "N * T" and list(...) specs, *homogeneous
 * for "N * T". */
int kc__ort_arg_type(const char* spec, bool* list, bool* homogeneous,
                            const char** type_word) {
  const char* rest = kc__ort_spec_rest(spec);
  *list = strchr(rest, '*') != NULL || strncmp(rest, "list(", 5) == 0;
  *homogeneous = strchr(rest, '*') != NULL;
  if (*list) {
    const char* t = strchr(rest, '*');
    if (!t) return KC__ONNX_UNDEFINED;
    rest = t + 1;
    while (*rest == ' ') ++rest;
  }
  *type_word = rest;
  DLDataType dtype;
  kc_status* st = kc_dtype_parse(kc_sv(rest), &dtype);
  if (st) {
    kc_status_destroy(st);
    return KC__ONNX_UNDEFINED;
  }
  return kc__ort_type_of(dtype);
}

/* The index of the attr named `word` (to its end or a ')'), or -1. */
int8_t kc__ort_attr_index(const kc__ort_op* o, const char* word) {
  size_t n = strcspn(word, ") ");
  for (int32_t i = 0; i < o->num_attrs; ++i) {
    if (strlen(o->attrs[i].name) == n && strncmp(o->attrs[i].name, word, n) == 0) {
      return (int8_t)i;
    }
  }
  return -1;
}

/* A type attr's allowed dtypes, when its spec lists them by name
 * ("T: {f32, f64, i32}"); a group ("numeric") or any type leaves it
 * without choices. */
void kc__ort_attr_choices(const char* spec, kc__ort_attr_decl* d) {
  const char* p = kc__ort_spec_rest(spec);
  d->num_choices = 0;
  if (*p != '{') return;
  ++p;
  int32_t n = 0;
  while (*p && *p != '}') {
    while (*p == ' ' || *p == ',') ++p;
    size_t len = strcspn(p, ",} ");
    if (len == 0) break;
    DLDataType dtype;
    kc_status* st = kc_dtype_parse((kc_string_view){.data = p, .size = len}, &dtype);
    int onnx = st ? KC__ONNX_UNDEFINED : kc__ort_type_of(dtype);
    kc_status_destroy(st);
    if (onnx == KC__ONNX_UNDEFINED || n == KC__ORT_MAX_CHOICES) return;
    d->choices[n++] = onnx;
    p += len;
  }
  d->num_choices = n;
}

/* The attr's kind, its name written to `name`; false when the name does
 * not fit. */
bool kc__ort_attr_kind_of(const char* spec, char* name, size_t cap,
                                 kc__ort_attr_kind* kind) {
  const char* colon = strchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
  while (n > 0 && spec[n - 1] == ' ') --n;
  if (n >= cap) return false;
  memcpy(name, spec, n);
  name[n] = '\0';
  const char* rest = kc__ort_spec_rest(spec);
  static const struct {
    const char* word;
    kc__ort_attr_kind kind;
  } kinds[] = {{"list(int)", KC__ORT_KIND_INTS}, {"list(float)", KC__ORT_KIND_FLOATS},
               {"shape", KC__ORT_KIND_INTS},     {"int", KC__ORT_KIND_INT},
               {"bool", KC__ORT_KIND_BOOL},      {"float", KC__ORT_KIND_FLOAT},
               {"string", KC__ORT_KIND_STRING}};
  *kind = KC__ORT_KIND_SKIP;
  if (rest[0] == '{' || strncmp(rest, "type", 4) == 0) {
    *kind = KC__ORT_KIND_TYPE;
    return true;
  }
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    size_t len = strlen(kinds[i].word);
    if (strncmp(rest, kinds[i].word, len) == 0 &&
        (rest[len] == '\0' || rest[len] == ' ' || rest[len] == '=')) {
      *kind = kinds[i].kind;
      break;
    }
  }
  return true;
}

/* ---- attributes -------------------------------------------------------------- */

static void kc__ort_attrs_free(kc__ort_attrs* a) {
  for (int32_t i = 0; i < a->count; ++i) free(a->owned[i]);
  a->count = 0;
}

/* A size query (a read into no buffer) may answer with an error status
 * ("the buffer is too small") and the size: the size is what counts. */
static kc__ort_status* kc__ort_size_query(const kc__ort_api* api, kc__ort_status* st,
                                          size_t size) {
  if (st && size > 0) {
    api->release_status(st);
    return NULL;
  }
  return st;
}

/* One attribute's value from the node, through a kernel info or a shape
 * context. Returns false when the node does not set it (kcall then takes
 * the default, or refuses the call naming it); *oom on allocation
 * failure. */
static bool kc__ort_attr_read(const kc__ort_api* api, const kc__ort_kernel_info* info,
                              const kc__ort_shape_ctx* shape_ctx, const kc__ort_attr_decl* d,
                              kc_any* value, void** owned, bool* oom) {
  kc__ort_status* st = NULL;
  const kc__ort_op_attr* attr = NULL;
  if (shape_ctx) {
    st = api->shape_ctx_get_attribute(shape_ctx, d->name, &attr);
    if (st || !attr) {
      api->release_status(st);
      return false;
    }
  }
  size_t size = 0;
  switch (d->kind) {
    case KC__ORT_KIND_INT:
    case KC__ORT_KIND_BOOL: {
      int64_t v = 0;
      st = shape_ctx ? api->read_op_attr(attr, KC__ORT_ATTR_INT, &v, sizeof v, &size)
                     : api->kernel_info_get_int64(info, d->name, &v);
      if (st) break;
      *value = d->kind == KC__ORT_KIND_BOOL ? kc_any_bool(v != 0) : kc_any_int(v);
      return true;
    }
    case KC__ORT_KIND_FLOAT: {
      float v = 0;
      st = shape_ctx ? api->read_op_attr(attr, KC__ORT_ATTR_FLOAT, &v, sizeof v, &size)
                     : api->kernel_info_get_float(info, d->name, &v);
      if (st) break;
      *value = kc_any_float(v);
      return true;
    }
    case KC__ORT_KIND_STRING:
    case KC__ORT_KIND_TYPE: {
      if (d->kind == KC__ORT_KIND_TYPE) {
        /* A type may also be an ONNX element type, as Cast's `to` is. */
        int64_t code = 0;
        DLDataType dtype;
        kc__ort_status* as_int =
            shape_ctx ? api->read_op_attr(attr, KC__ORT_ATTR_INT, &code, sizeof code, &size)
                      : api->kernel_info_get_int64(info, d->name, &code);
        api->release_status(as_int);
        if (!as_int) {
          if (code <= 0 || code >= 64 || !kc__ort_dtype_of((int)code, &dtype)) {
            return false; /* an element type kcall has none for: refused */
          }
          *value = kc_any_dtype(dtype);
          return true;
        }
        size = 0;
      }
      st = shape_ctx ? api->read_op_attr(attr, KC__ORT_ATTR_STRING, NULL, 0, &size)
                     : api->kernel_info_get_string(info, d->name, NULL, &size);
      st = kc__ort_size_query(api, st, size);
      if (st) break;
      char* text = calloc(size + 1, 1);
      if (!text) {
        *oom = true;
        return false;
      }
      size_t got = size;
      st = shape_ctx ? api->read_op_attr(attr, KC__ORT_ATTR_STRING, text, size, &got)
                     : api->kernel_info_get_string(info, d->name, text, &got);
      if (st) {
        free(text);
        break;
      }
      *owned = text;
      *value = kc_any_cstr(text);
      return true;
    }
    case KC__ORT_KIND_INTS:
    case KC__ORT_KIND_FLOATS: {
      bool ints = d->kind == KC__ORT_KIND_INTS;
      size_t elem = ints ? sizeof(int64_t) : sizeof(float);
      int type = ints ? KC__ORT_ATTR_INTS : KC__ORT_ATTR_FLOATS;
      if (shape_ctx) {
        st = kc__ort_size_query(api, api->read_op_attr(attr, type, NULL, 0, &size), size);
        if (!st) size /= elem; /* bytes */
      } else {
        st = ints ? api->kernel_info_get_int64s(info, d->name, NULL, &size)
                  : api->kernel_info_get_floats(info, d->name, NULL, &size);
      }
      if (st) break;
      void* data = calloc(size ? size : 1, elem);
      kc_array* array = NULL;
      kc_status* made = NULL;
      if (!data) {
        *oom = true;
        return false;
      }
      if (shape_ctx) {
        size_t got = 0;
        st = api->read_op_attr(attr, type, data, size * elem, &got);
      } else {
        size_t got = size;
        st = ints ? api->kernel_info_get_int64s(info, d->name, data, &got)
                  : api->kernel_info_get_floats(info, d->name, data, &got);
      }
      if (st) {
        free(data);
        break;
      }
      kc_any* items = calloc(size ? size : 1, sizeof *items);
      if (!items) {
        free(data);
        *oom = true;
        return false;
      }
      for (size_t i = 0; i < size; ++i) {
        items[i] = ints ? kc_any_int(((int64_t*)data)[i])
                        : kc_any_float(((float*)data)[i]);
      }
      free(data);
      made = kc_array_create(NULL, items, size, &array);
      free(items);
      if (made) {
        kc_status_destroy(made);
        *oom = true;
        return false;
      }
      *owned = NULL;
      *value = kc_any_object(KC_OBJECT(array));
      return true;
    }
    case KC__ORT_KIND_SKIP: return false;
  }
  api->release_status(st);
  return false;
}

/* Releases the arrays among the values too. */
void kc__ort_attrs_release(kc__ort_attrs* a) {
  for (int32_t i = 0; i < a->count; ++i) kc_any_release(&a->items[i].value);
  kc__ort_attrs_free(a);
}

/* Whether the node sets the attribute `name` as any of the kinds read
 * here (an int, a float, a string, a list of either). */
static bool kc__ort_attr_present(const kc__ort_api* api, const kc__ort_kernel_info* info,
                                 const char* name) {
  int64_t i = 0;
  float f = 0;
  size_t size = 0;
  kc__ort_status* tries[5];
  tries[0] = api->kernel_info_get_int64(info, name, &i);
  tries[1] = api->kernel_info_get_float(info, name, &f);
  tries[2] = kc__ort_size_query(api, api->kernel_info_get_string(info, name, NULL, &size), size);
  size = 0;
  tries[3] = kc__ort_size_query(api, api->kernel_info_get_int64s(info, name, NULL, &size), size);
  size = 0;
  tries[4] = kc__ort_size_query(api, api->kernel_info_get_floats(info, name, NULL, &size), size);
  bool present = false;
  for (int k = 0; k < 5; ++k) {
    present = present || tries[k] == NULL;
    api->release_status(tries[k]);
  }
  return present;
}

static const char* kc__ort_kind_name(kc__ort_attr_kind kind) {
  switch (kind) {
    case KC__ORT_KIND_INT: return "an int";
    case KC__ORT_KIND_BOOL: return "an int (a bool)";
    case KC__ORT_KIND_FLOAT: return "a float";
    case KC__ORT_KIND_STRING: return "a string";
    case KC__ORT_KIND_INTS: return "a list of ints";
    case KC__ORT_KIND_FLOATS: return "a list of floats";
    case KC__ORT_KIND_TYPE: return "a string naming a dtype, or an ONNX element type";
    default: return "a kind ONNX nodes cannot give";
  }
}

/* The node's attributes, by the op's attr specs. One the node sets as
 * another kind than the op's attr is refused (when reading a kernel's):
 * never left to the op's default. */
kc__ort_status* kc__ort_attrs_read(const kc__ort_op* op, const kc__ort_kernel_info* info,
                                          const kc__ort_shape_ctx* shape_ctx,
                                          kc__ort_attrs* out) {
  out->count = 0;
  for (int32_t i = 0; i < op->num_attrs; ++i) {
    const kc__ort_attr_decl* d = &op->attrs[i];
    kc_any value;
    void* owned = NULL;
    bool oom = false;
    if (!kc__ort_attr_read(op->api, info, shape_ctx, d, &value, &owned, &oom)) {
      if (oom) {
        kc__ort_attrs_release(out);
        return kc__ort_fail(op->api, "kcall: out of memory reading a node's attributes");
      }
      if (info && kc__ort_attr_present(op->api, info, d->name)) {
        kc__ort_attrs_release(out);
        char message[512];
        if (d->kind == KC__ORT_KIND_SKIP) {
          snprintf(message, sizeof message,
                   "kcall op '%s': attribute '%s': its kind (%s) is not one an ONNX node "
                   "can give",
                   op->name, d->name, kc_op_get_attr_spec(op->op, i));
        } else {
          snprintf(message, sizeof message,
                   "kcall op '%s': attribute '%s': expected %s, and the node gives another "
                   "kind",
                   op->name, d->name, kc__ort_kind_name(d->kind));
        }
        return op->api->create_status(KC__ORT_INVALID_ARGUMENT, message);
      }
      continue;
    }
    kc_op_attr* a = &out->items[out->count];
    a->name = kc_sv(d->name);
    a->value = value;
    out->owned[out->count++] = owned;
  }
  return NULL;
}
