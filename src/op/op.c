/* Op definitions: the builder, the checks made at registration, the op
 * registry and reading a definition back. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/txn.h"
#include "op/op_internal.h"

/* The registry of ops. Statically initialised: nothing runs at load time.
 * See registry.h for how it locks. */
static kc__registry kc__op_registry =
    KC__REGISTRY_INIT(kc__kind_op, 1);

kc__registry* kc__registry_of_ops(void) { return &kc__op_registry; }

/* Ops are also functions named "op." + NAME. */
#define KC__OP_FUNC_PREFIX "op."
#define KC__OP_NAME_MAX (KC__NAME_MAX - 3)

struct kc_op_builder {
  kc__op_def def;
  /* The first error of any add/set call, replayed at registration. */
  kc__first_error error; /* replayed by registration */
};

/* ---- lookups within a definition --------------------------------------- */

static int32_t kc__find_arg(const kc__arg_def* args, int32_t n,
                            kc_string_view name) {
  for (int32_t i = 0; i < n; ++i) {
    if (kc_sv_equal(kc_sv(args[i].name), name)) return i;
  }
  return -1;
}

int32_t kc__op_find_attr(const kc__op_def* def, kc_string_view name) {
  for (int32_t i = 0; i < def->num_attrs; ++i) {
    if (kc_sv_equal(kc_sv(def->attrs[i].name), name)) return i;
  }
  return -1;
}

int32_t kc__op_find_input(const kc__op_def* def, kc_string_view name) {
  return kc__find_arg(def->inputs, def->num_inputs, name);
}

int32_t kc__op_find_output(const kc__op_def* def, kc_string_view name) {
  return kc__find_arg(def->outputs, def->num_outputs, name);
}

/* ---- the builder ------------------------------------------------------- */

static kc_status* kc__builder_misuse(const char* fn, const char* what) {
  return kc_status_create(KC_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
}

/* Remembers the first error and passes `st` on. */
static kc_status* kc__builder_note(kc_op_builder* b, kc_status* st) {
  return kc__first_error_note(&b->error, st);
}

kc_status* kc_op_builder_create(const char* name, kc_op_builder** out_builder) {
  if (!out_builder)
    return kc__builder_misuse("kc_op_builder_create", "out_builder");
  *out_builder = NULL;
  if (!name) return kc__builder_misuse("kc_op_builder_create", "name");
  kc_string_view v = kc_sv(name);
  KC_RETURN_IF_ERROR(kc__check_name(&kc__op_registry, v),
                     "creating an op builder");
  if (v.size > KC__OP_NAME_MAX) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "op name '%.40s...': expected at most %d bytes "
                            "(room for the function name 'op.NAME'), got %zu",
                            name, KC__OP_NAME_MAX, v.size);
  }
  kc_op_builder* b = calloc(1, sizeof *b);
  if (b) b->def.name = malloc(v.size + 1);
  if (!b || !b->def.name) {
    free(b);
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory creating a builder for op '%s'",
                            name);
  }
  memcpy(b->def.name, name, v.size + 1);
  b->def.name_size = v.size;
  *out_builder = b;
  return NULL;
}

void kc_op_builder_destroy(kc_op_builder* builder) {
  if (!builder) return;
  kc__op_def_clear(&builder->def);
  kc__first_error_deinit(&builder->error);
  free(builder);
}

/* A name already taken by an arg or an attr of the definition. */
static kc_status* kc__check_unique(const kc__op_def* def, const char* name) {
  kc_string_view v = kc_sv(name);
  const char* what = kc__op_find_input(def, v) >= 0    ? "an input"
                     : kc__op_find_output(def, v) >= 0 ? "an output"
                     : kc__op_find_attr(def, v) >= 0   ? "an attr"
                                                       : NULL;
  if (!what) return NULL;
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "op '%s': '%s' is already the name of %s", def->name,
                          name, what);
}

static kc_status* kc__add_arg(kc_op_builder* b, const char* spec,
                              bool is_input) {
  const char* fn =
      is_input ? "kc_op_builder_add_input" : "kc_op_builder_add_output";
  if (!b) return kc__builder_misuse(fn, "builder");
  if (!spec) return kc__builder_note(b, kc__builder_misuse(fn, "spec"));
  kc__arg_def** args = is_input ? &b->def.inputs : &b->def.outputs;
  int32_t* n = is_input ? &b->def.num_inputs : &b->def.num_outputs;
  if (*n == KC_OP_MAX_ARGS) {
    return kc__builder_note(
        b, kc_status_create(KC_INVALID_ARGUMENT, "op '%s': more than %d %ss",
                            b->def.name, KC_OP_MAX_ARGS,
                            is_input ? "input" : "output"));
  }
  kc__arg_def arg;
  kc_status* st =
      kc__parse_arg_spec(is_input ? "input spec" : "output spec", spec, &arg);
  if (!st) st = kc__check_unique(&b->def, arg.name);
  if (!st) {
    kc__arg_def* grown = realloc(*args, ((size_t)*n + 1) * sizeof *grown);
    if (!grown) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      *args = grown;
      grown[(*n)++] = arg;
      return NULL;
    }
  }
  kc__arg_def_clear(&arg);
  return kc__builder_note(b, kc_status_add_context(st, "op '%s'", b->def.name));
}

kc_status* kc_op_builder_add_input(kc_op_builder* builder, const char* spec) {
  return kc__add_arg(builder, spec, true);
}

kc_status* kc_op_builder_add_output(kc_op_builder* builder, const char* spec) {
  return kc__add_arg(builder, spec, false);
}

kc_status* kc_op_builder_add_attr(kc_op_builder* b, const char* spec) {
  static const char fn[] = "kc_op_builder_add_attr";
  if (!b) return kc__builder_misuse(fn, "builder");
  if (!spec) return kc__builder_note(b, kc__builder_misuse(fn, "spec"));
  if (b->def.num_attrs == KC_OP_MAX_ATTRS) {
    return kc__builder_note(
        b, kc_status_create(KC_INVALID_ARGUMENT, "op '%s': more than %d attrs",
                            b->def.name, KC_OP_MAX_ATTRS));
  }
  kc__attr_def attr;
  kc_status* st = kc__parse_attr_spec(spec, &attr);
  if (!st) st = kc__check_unique(&b->def, attr.name);
  if (!st) {
    kc__attr_def* grown =
        realloc(b->def.attrs, ((size_t)b->def.num_attrs + 1) * sizeof *grown);
    if (grown) {
      b->def.attrs = grown;
      grown[b->def.num_attrs++] = attr;
      return NULL;
    }
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  kc__attr_def_clear(&attr);
  return kc__builder_note(b, kc_status_add_context(st, "op '%s'", b->def.name));
}

kc_status* kc_op_builder_set_flags(kc_op_builder* b, uint32_t flags) {
  if (!b) return kc__builder_misuse("kc_op_builder_set_flags", "builder");
  const uint32_t known = KC_OP_COMMUTATIVE | KC_OP_AGGREGATE | KC_OP_STATEFUL;
  if (flags & ~known) {
    return kc__builder_note(
        b,
        kc_status_create(KC_INVALID_ARGUMENT, "op '%s': unknown flag bits 0x%x",
                         b->def.name, (unsigned)(flags & ~known)));
  }
  b->def.flags = flags;
  return NULL;
}

kc_status* kc_op_builder_set_doc(kc_op_builder* b, const char* doc) {
  if (!b) return kc__builder_misuse("kc_op_builder_set_doc", "builder");
  char* copy = NULL;
  if (doc) {
    size_t n = strlen(doc) + 1;
    copy = malloc(n);
    if (!copy) {
      return kc__builder_note(
          b, kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory"));
    }
    memcpy(copy, doc, n);
  }
  free(b->def.doc);
  b->def.doc = copy;
  return NULL;
}

kc_status* kc_op_builder_set_shape_fn(kc_op_builder* b, kc_shape_fn fn) {
  if (!b) return kc__builder_misuse("kc_op_builder_set_shape_fn", "builder");
  b->def.shape_fn = fn;
  return NULL;
}

/* ---- resolving references at registration ------------------------------ */

static kc_status* kc__arg_error(const kc__op_def* def, const kc__arg_def* arg,
                                bool is_input, const char* fmt, ...)
    KC_PRINTF(4, 5);
static kc_status* kc__arg_error(const kc__op_def* def, const kc__arg_def* arg,
                                bool is_input, const char* fmt, ...) {
  char msg[256];
  va_list args;
  va_start(args, fmt);
  vsnprintf(msg, sizeof msg, fmt, args);
  va_end(args);
  return kc_status_create(KC_INVALID_ARGUMENT, "op '%s': %s '%s': %s",
                          def->name, is_input ? "input" : "output", arg->spec,
                          msg);
}

static kc_status* kc__resolve_arg(kc__op_def* def, kc__arg_def* arg,
                                  bool is_input) {
  if (arg->number_word) {
    int32_t n = kc__op_find_attr(def, kc_sv(arg->number_word));
    if (n < 0 || def->attrs[n].kind != KC__ATTR_INT || def->attrs[n].is_list) {
      return kc__arg_error(def, arg, is_input,
                           "'%s' must name an int attr (the number of "
                           "tensors)%s",
                           arg->number_word,
                           n < 0 ? ", but the op has no such attr" : "");
    }
    arg->number_attr = n;
  }
  int32_t t = kc__op_find_attr(def, kc_sv(arg->type_word));
  if (t >= 0) {
    const kc__attr_def* a = &def->attrs[t];
    if (a->kind != KC__ATTR_TYPE || (a->is_list && arg->number_word)) {
      return kc__arg_error(def, arg, is_input,
                           "'%s' is %s %s attr; the type of %s must be a "
                           "type attr%s or a dtype",
                           a->name,
                           kc__attr_kind_name(a)[0] == 'i' ? "an" : "a",
                           kc__attr_kind_name(a),
                           arg->number_word ? "N * T" : "an arg",
                           arg->number_word ? "" : ", a list(type) attr");
    }
    arg->type_attr = t;
    if (a->is_list) arg->form = KC__ARG_TYPE_LIST;
    return NULL;
  }
  kc_status* st = kc_dtype_parse(kc_sv(arg->type_word), &arg->fixed_type);
  if (st) {
    kc_status_destroy(st);
    return kc__arg_error(def, arg, is_input,
                         "'%s' names neither an attr of the op nor a dtype",
                         arg->type_word);
  }
  return NULL;
}

/* Checks the definition as a whole and marks the attrs the inputs
 * determine. */
static kc_status* kc__op_resolve(kc__op_def* def) {
  for (int32_t i = 0; i < def->num_inputs; ++i) {
    KC__TRY(kc__resolve_arg(def, &def->inputs[i], true));
  }
  for (int32_t i = 0; i < def->num_outputs; ++i) {
    KC__TRY(kc__resolve_arg(def, &def->outputs[i], false));
  }
  for (int32_t i = 0; i < def->num_inputs; ++i) {
    const kc__arg_def* arg = &def->inputs[i];
    if (arg->number_attr >= 0)
      def->attrs[arg->number_attr].use = KC__USE_NUMBER;
    if (arg->type_attr >= 0) {
      def->attrs[arg->type_attr].use =
          arg->form == KC__ARG_TYPE_LIST ? KC__USE_TYPE_LIST : KC__USE_TYPE;
    }
  }
  return NULL;
}

/* ---- the registry ------------------------------------------------------ */

static void kc__op_delete(kc_object* obj) {
  kc_op* op = (kc_op*)(void*)obj;
  /* First, unlike other objects: an op runs none of its plugin's code when
   * it goes (its kernels are objects of their own, detached when their
   * deleters have run), and an unload reading its cache must not see it
   * half freed. */
  kc__owned_detach(&op->owned);
  kc__op_cache_deinit(&op->cache);
  kc__op_def_clear(&op->def);
  free(op);
}

/* Registers the op and its function together: in the plugin transaction
 * that is open on this thread, or in one of its own. */
static kc_status* kc__op_publish(kc_op* op, kc_func* func, uint32_t flags) {
  char fname[KC__NAME_MAX + 1];
  snprintf(fname, sizeof fname, KC__OP_FUNC_PREFIX "%s", op->def.name);
  kc_string_view name = {op->def.name, op->def.name_size};
  kc__txn local = {0};
  bool own = kc__txn_current() == NULL;
  if (own) kc__txn_begin(&local);
  kc_status* st = kc__registry_insert(&kc__op_registry, name, KC_OBJECT(op),
                                      flags & KC_REGISTER_OVERRIDE);
  if (!st) {
    st = kc_func_registry_register(kc_sv(fname), func,
                                   flags & KC_REGISTER_OVERRIDE);
  }
  if (!own) return st; /* the plugin loader commits or discards */
  kc__txn_end();
  if (st) {
    kc__txn_discard(&local);
    return st;
  }
  return kc__txn_commit(&local);
}

kc_status* kc_op_registry_register(kc_op_builder* b, uint32_t flags) {
  if (!b) return kc__builder_misuse("kc_op_registry_register", "builder");
  kc_status* st = kc__first_error_replay(&b->error);
  if (!st && (flags & ~KC_REGISTER_OVERRIDE)) {
    st = kc_status_create(KC_INVALID_ARGUMENT, "unknown flag bits 0x%x",
                          (unsigned)(flags & ~KC_REGISTER_OVERRIDE));
  }
  if (!st) st = kc__op_resolve(&b->def);
  kc_op* op = st ? NULL : calloc(1, sizeof *op);
  if (!st && !op) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (st) {
    st = kc_status_add_context(st, "registering op '%s'", b->def.name);
    kc_op_builder_destroy(b);
    return st;
  }
  kc__object_init(&op->header, KC__TYPE_OP, kc__op_delete);
  op->def = b->def; /* moved */
  const uintptr_t code[] = {KC__CODE(op->def.shape_fn)};
  kc__owned_attach(&op->owned, &op->header, code, 1);
  memset(&b->def, 0, sizeof b->def);
  kc_op_builder_destroy(b);
  kc__op_cache_init(&op->cache);

  kc_func* func = NULL;
  st = kc__op_func_create(op, &func);
  if (!st) st = kc__op_publish(op, func, flags);
  char name[KC__NAME_MAX + 1];
  snprintf(name, sizeof name, "%s", op->def.name);
  kc_object_release(KC_OBJECT(func));
  kc_object_release(KC_OBJECT(op)); /* the registries hold their own */
  return kc_status_add_context(st, "registering op '%s'", name);
}

const kc_op* kc__op_find_any(kc_string_view name) {
  kc_object* obj = kc__registry_find(&kc__op_registry, name);
  kc__txn* txn = kc__txn_current();
  for (size_t i = 0; !obj && txn && i < txn->count; ++i) {
    const kc__reg_entry* e = txn->items[i].entry;
    if (txn->items[i].reg == &kc__op_registry &&
        kc_sv_equal((kc_string_view){e->name, e->name_size}, name)) {
      obj = e->obj;
    }
  }
  return (const kc_op*)(const void*)obj;
}

kc_status* kc_op_registry_lookup(kc_string_view name, const kc_op** out_op) {
  if (KC__UNLIKELY(!out_op)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_op_registry_lookup: out_op is NULL");
  }
  kc_object* obj = kc__registry_find(&kc__op_registry, name);
  *out_op = (const kc_op*)(const void*)obj;
  if (KC__LIKELY(obj != NULL)) return NULL;
  return kc__registry_not_found(&kc__op_registry, name);
}

kc_status* kc_op_registry_lookup_retained(kc_string_view name,
                                         const kc_op** out_op) {
  if (KC__UNLIKELY(!out_op)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_op_registry_lookup_retained: out_op is NULL");
  }
  kc_object* obj = kc__registry_get(&kc__op_registry, name);
  *out_op = (const kc_op*)(const void*)obj;
  if (KC__LIKELY(obj != NULL)) return NULL;
  return kc__registry_not_found(&kc__op_registry, name);
}

kc_status* kc_op_registry_list(const kc_allocator* alloc, kc_string_view prefix,
                               kc_array** out_names) {
  if (!out_names) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_op_registry_list: out_names is NULL");
  }
  return kc__registry_list(&kc__op_registry, alloc, prefix, out_names);
}

void kc_op_registry_reset(void) { kc__registry_reset(&kc__op_registry); }

/* ---- reading a definition ---------------------------------------------- */

kc_string_view kc_op_get_name(const kc_op* op) {
  kc_string_view v = {"", 0};
  if (op) {
    v.data = op->def.name;
    v.size = op->def.name_size;
  }
  return v;
}

const char* kc_op_get_doc(const kc_op* op) {
  return op && op->def.doc ? op->def.doc : "";
}

uint32_t kc_op_get_flags(const kc_op* op) { return op ? op->def.flags : 0; }

int32_t kc_op_get_input_count(const kc_op* op) {
  return op ? op->def.num_inputs : 0;
}

int32_t kc_op_get_output_count(const kc_op* op) {
  return op ? op->def.num_outputs : 0;
}

int32_t kc_op_get_attr_count(const kc_op* op) {
  return op ? op->def.num_attrs : 0;
}

const char* kc_op_get_input_spec(const kc_op* op, int32_t index) {
  if (!op || index < 0 || index >= op->def.num_inputs) return NULL;
  return op->def.inputs[index].spec;
}

const char* kc_op_get_output_spec(const kc_op* op, int32_t index) {
  if (!op || index < 0 || index >= op->def.num_outputs) return NULL;
  return op->def.outputs[index].spec;
}

const char* kc_op_get_attr_spec(const kc_op* op, int32_t index) {
  if (!op || index < 0 || index >= op->def.num_attrs) return NULL;
  return op->def.attrs[index].spec;
}

/* Appends snprintf-style at *n. */
static void kc__append(char* buf, size_t cap, size_t* n, const char* fmt, ...)
    KC_PRINTF(4, 5);
static void kc__append(char* buf, size_t cap, size_t* n, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int k =
      vsnprintf(*n < cap ? buf + *n : NULL, *n < cap ? cap - *n : 0, fmt, args);
  va_end(args);
  if (k > 0) *n += (size_t)k;
}

size_t kc_op_format_signature(const kc_op* op, char* buf, size_t cap) {
  size_t n = 0;
  if (cap) buf[0] = '\0';
  if (!op) return 0;
  const kc__op_def* d = &op->def;
  kc__append(buf, cap, &n, "%s(", d->name);
  for (int32_t i = 0; i < d->num_inputs; ++i) {
    kc__append(buf, cap, &n, "%s%s", i ? ", " : "", d->inputs[i].spec);
  }
  kc__append(buf, cap, &n, ") -> (");
  for (int32_t i = 0; i < d->num_outputs; ++i) {
    kc__append(buf, cap, &n, "%s%s", i ? ", " : "", d->outputs[i].spec);
  }
  kc__append(buf, cap, &n, ")");
  return n;
}
