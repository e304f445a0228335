/* Op definitions: the builder, the checks made at registration, the op
 * registry and reading a definition back. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/grow.h"
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
  kc__op_schema def;
  /* The first error of any add/set call, with its position, replayed at
   * registration. */
  kc__first_error error;
  int32_t calls; /* add/set calls made, counted from 1 */
};

/* ---- lookups within a definition --------------------------------------- */

static int32_t kc__find_arg(const kc__arg_def* args, int32_t n,
                            kc_string_view name) {
  for (int32_t i = 0; i < n; ++i) {
    if (kc_sv_equal(kc_sv(args[i].name), name)) return i;
  }
  return -1;
}

int32_t kc__op_find_attr(const kc__op_schema* def, kc_string_view name) {
  for (int32_t i = 0; i < def->num_attrs; ++i) {
    if (kc_sv_equal(kc_sv(def->attrs[i].name), name)) return i;
  }
  return -1;
}

int32_t kc__op_find_input(const kc__op_schema* def, kc_string_view name) {
  return kc__find_arg(def->inputs, def->num_inputs, name);
}

int32_t kc__op_find_output(const kc__op_schema* def, kc_string_view name) {
  return kc__find_arg(def->outputs, def->num_outputs, name);
}

size_t kc__op_format_attr_names(const kc__op_schema* def, char* buf,
                                size_t cap) {
  size_t n = 0;
  if (cap) buf[0] = '\0';
  for (int32_t i = 0; i < def->num_attrs && n < cap; ++i) {
    kc__appendf(buf, cap, &n, "%s%s", i ? ", " : "", def->attrs[i].name);
  }
  return n;
}

/* ---- the builder ------------------------------------------------------- */
/*
 * Each operation is written once and returns its own status, without the
 * op's name. The public functions wrap it: the original ones return that
 * status (with the op's name as context), the _v2 ones return nothing.
 * Both count the call and remember the first failure with its position,
 * which registration replays.
 */

static kc_status* kc__builder_misuse(const char* fn, const char* what) {
  return kc_status_create(KC_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
}

/* Counts a call on `b` and remembers its failure if it is the first;
 * returns `st`. */
static kc_status* kc__builder_count(kc_op_builder* b, const char* fn,
                                    kc_status* st) {
  if (!b) return st;
  b->calls++;
  return kc__first_error_note_at(&b->error, st, "call %d (%s)", b->calls, fn);
}

/* What an original builder function returns. */
static kc_status* kc__builder_return(kc_op_builder* b, const char* fn,
                                     kc_status* st) {
  kc__builder_count(b, fn, st);
  if (!b || !st) return st;
  return kc_status_add_context(st, "op %s", KC__QS(b->def.name));
}

/* What a _v2 builder function does with its status. */
static void kc__builder_keep(kc_op_builder* b, const char* fn, kc_status* st) {
  kc_status_destroy(kc__builder_count(b, fn, st));
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
                            "op name %s: expected at most %d bytes "
                            "(room for the function name 'op.NAME'), got %zu",
                            KC__Q(v), KC__OP_NAME_MAX, v.size);
  }
  kc_op_builder* b = kc__calloc(1, sizeof *b);
  if (b) b->def.name = kc__malloc(v.size + 1);
  if (!b || !b->def.name) {
    kc__free(b);
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory creating a builder for op %s",
                            KC__QS(name));
  }
  memcpy(b->def.name, name, v.size + 1);
  b->def.name_size = v.size;
  *out_builder = b;
  return NULL;
}

void kc_op_builder_destroy(kc_op_builder* builder) {
  if (!builder) return;
  kc__op_schema_clear(&builder->def);
  kc__first_error_deinit(&builder->error);
  kc__free(builder);
}

/* A name already taken by an arg or an attr of the definition. */
static kc_status* kc__check_unique(const kc__op_schema* def, const char* name) {
  kc_string_view v = kc_sv(name);
  const char* what = kc__op_find_input(def, v) >= 0    ? "an input"
                     : kc__op_find_output(def, v) >= 0 ? "an output"
                     : kc__op_find_attr(def, v) >= 0   ? "an attr"
                                                       : NULL;
  if (!what) return NULL;
  return kc_status_create(KC_INVALID_ARGUMENT, "%s is already the name of %s",
                          KC__QS(name), what);
}

static kc_status* kc__add_arg(kc_op_builder* b, const char* fn,
                              const char* spec, bool is_input) {
  if (!b) return kc__builder_misuse(fn, "builder");
  if (!spec) return kc__builder_misuse(fn, "spec");
  kc__arg_def** args = is_input ? &b->def.inputs : &b->def.outputs;
  int32_t* n = is_input ? &b->def.num_inputs : &b->def.num_outputs;
  size_t* cap = is_input ? &b->def.cap_inputs : &b->def.cap_outputs;
  if (*n == KC_OP_MAX_ARGS) {
    return kc_status_create(KC_INVALID_ARGUMENT, "more than %d %ss",
                            KC_OP_MAX_ARGS, is_input ? "input" : "output");
  }
  kc__arg_def arg;
  kc_status* st =
      kc__parse_arg_spec(is_input ? "input spec" : "output spec", spec, &arg);
  if (st) return st;
  st = kc__check_unique(&b->def, arg.name);
  if (!st) {
    if (kc__grow_array(args, cap, (size_t)*n + 1, sizeof **args)) {
      (*args)[(*n)++] = arg;
      return NULL;
    }
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  kc__arg_def_clear(&arg);
  return st;
}

static kc_status* kc__add_attr(kc_op_builder* b, const char* fn,
                               const char* spec) {
  if (!b) return kc__builder_misuse(fn, "builder");
  if (!spec) return kc__builder_misuse(fn, "spec");
  if (b->def.num_attrs == KC_OP_MAX_ATTRS) {
    return kc_status_create(KC_INVALID_ARGUMENT, "more than %d attrs",
                            KC_OP_MAX_ATTRS);
  }
  kc__attr_def attr;
  kc_status* st = kc__parse_attr_spec(spec, &attr);
  if (st) return st;
  st = kc__check_unique(&b->def, attr.name);
  if (!st) {
    if (KC__GROW(b->def.attrs, b->def.cap_attrs, (size_t)b->def.num_attrs + 1)) {
      b->def.attrs[b->def.num_attrs++] = attr;
      return NULL;
    }
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  kc__attr_def_clear(&attr);
  return st;
}

static kc_status* kc__set_flags(kc_op_builder* b, const char* fn,
                                uint32_t flags) {
  if (!b) return kc__builder_misuse(fn, "builder");
  const uint32_t known = KC_OP_COMMUTATIVE | KC_OP_AGGREGATE | KC_OP_STATEFUL |
                         KC_OP_SYMBOLIC_SHAPES;
  if (flags & ~known) {
    return kc_status_create(KC_INVALID_ARGUMENT, "unknown flag bits 0x%x",
                            (unsigned)(flags & ~known));
  }
  b->def.flags = flags;
  return NULL;
}

static kc_status* kc__set_doc(kc_op_builder* b, const char* fn,
                              const char* doc) {
  if (!b) return kc__builder_misuse(fn, "builder");
  char* copy = NULL;
  if (doc) {
    size_t n = strlen(doc) + 1;
    copy = kc__malloc(n);
    if (!copy) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    memcpy(copy, doc, n);
  }
  kc__free(b->def.doc);
  b->def.doc = copy;
  return NULL;
}

/* Replaces the shape function and its data, running the deleter of the
 * data it replaces; without a builder, runs this data's deleter. */
static kc_status* kc__set_shape_fn(kc_op_builder* b, const char* fn,
                                   kc_shape_fn shape_fn, void* data,
                                   kc_deleter_fn data_deleter) {
  if (!b) {
    if (data_deleter) data_deleter(data);
    return kc__builder_misuse(fn, "builder");
  }
  if (b->def.shape_data_deleter) b->def.shape_data_deleter(b->def.shape_data);
  b->def.shape_fn = shape_fn;
  b->def.shape_data = data;
  b->def.shape_data_deleter = data_deleter;
  return NULL;
}

/* Sets the builder's gradient or (`jvp`) forward-mode rule. */
static kc_status* kc__set_rule(kc_op_builder* b, const char* fn,
                               const char* spec, bool jvp) {
  if (!b) return kc__builder_misuse(fn, "builder");
  if (!spec) return kc__builder_misuse(fn, "spec");
  kc__op_gradient* rule = NULL;
  KC_RETURN_IF_ERROR(kc__op_rule_parse(spec, jvp, &rule));
  kc__op_gradient** slot = jvp ? &b->def.jvp : &b->def.gradient;
  kc__op_gradient_destroy(*slot);
  *slot = rule;
  return NULL;
}

kc_status* kc_op_builder_add_input(kc_op_builder* builder, const char* spec) {
  return kc__builder_return(builder, __func__,
                            kc__add_arg(builder, __func__, spec, true));
}

kc_status* kc_op_builder_add_output(kc_op_builder* builder, const char* spec) {
  return kc__builder_return(builder, __func__,
                            kc__add_arg(builder, __func__, spec, false));
}

kc_status* kc_op_builder_add_attr(kc_op_builder* builder, const char* spec) {
  return kc__builder_return(builder, __func__,
                            kc__add_attr(builder, __func__, spec));
}

kc_status* kc_op_builder_set_flags(kc_op_builder* builder, uint32_t flags) {
  return kc__builder_return(builder, __func__,
                            kc__set_flags(builder, __func__, flags));
}

kc_status* kc_op_builder_set_doc(kc_op_builder* builder, const char* doc) {
  return kc__builder_return(builder, __func__,
                            kc__set_doc(builder, __func__, doc));
}

kc_status* kc_op_builder_set_shape_fn(kc_op_builder* builder,
                                      kc_shape_fn shape_fn) {
  return kc__builder_return(
      builder, __func__,
      kc__set_shape_fn(builder, __func__, shape_fn, NULL, NULL));
}

void kc_op_builder_add_input_v2(kc_op_builder* builder, const char* spec) {
  kc__builder_keep(builder, __func__,
                   kc__add_arg(builder, __func__, spec, true));
}

void kc_op_builder_add_output_v2(kc_op_builder* builder, const char* spec) {
  kc__builder_keep(builder, __func__,
                   kc__add_arg(builder, __func__, spec, false));
}

void kc_op_builder_add_attr_v2(kc_op_builder* builder, const char* spec) {
  kc__builder_keep(builder, __func__, kc__add_attr(builder, __func__, spec));
}

void kc_op_builder_set_flags_v2(kc_op_builder* builder, uint32_t flags) {
  kc__builder_keep(builder, __func__, kc__set_flags(builder, __func__, flags));
}

void kc_op_builder_set_doc_v2(kc_op_builder* builder, const char* doc) {
  kc__builder_keep(builder, __func__, kc__set_doc(builder, __func__, doc));
}

void kc_op_builder_set_gradient(kc_op_builder* builder, const char* spec) {
  kc__builder_keep(builder, __func__,
                   kc__set_rule(builder, __func__, spec, false));
}

void kc_op_builder_set_jvp(kc_op_builder* builder, const char* spec) {
  kc__builder_keep(builder, __func__,
                   kc__set_rule(builder, __func__, spec, true));
}

static kc_status* kc__set_batching(kc_op_builder* b, const char* fn, kc_op_batching rule) {
  if (!b) return kc__builder_misuse(fn, "builder");
  if (!kc_op_batching_name(rule)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s: unknown batching rule %d (expected KC_OP_BATCH_SEQUENTIAL, "
                            "KC_OP_BATCH_ELEMENTWISE or KC_OP_BATCH_NONE)",
                            fn, (int)rule);
  }
  b->def.batching = rule;
  return NULL;
}

void kc_op_builder_set_batching(kc_op_builder* builder, kc_op_batching rule) {
  kc__builder_keep(builder, __func__, kc__set_batching(builder, __func__, rule));
}

const char* kc_op_batching_name(kc_op_batching rule) {
  switch (rule) {
    case KC_OP_BATCH_SEQUENTIAL: return "sequential";
    case KC_OP_BATCH_ELEMENTWISE: return "elementwise";
    case KC_OP_BATCH_NONE: return "none";
  }
  return NULL;
}

kc_op_batching kc_op_get_batching(const kc_op* op) {
  return op ? op->def.batching : KC_OP_BATCH_SEQUENTIAL;
}

void kc_op_builder_set_shape_fn_v2(kc_op_builder* builder, kc_shape_fn shape_fn,
                                   void* data, kc_deleter_fn data_deleter) {
  kc__builder_keep(
      builder, __func__,
      kc__set_shape_fn(builder, __func__, shape_fn, data, data_deleter));
}

/* ---- resolving references at registration ------------------------------ */

static kc_status* kc__arg_error(const kc__op_schema* def,
                                const kc__arg_def* arg, bool is_input,
                                const char* fmt, ...) KC_PRINTF(4, 5);
static kc_status* kc__arg_error(const kc__op_schema* def,
                                const kc__arg_def* arg, bool is_input,
                                const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  kc_status* st = kc__status_create_prefixed_v(
      KC_INVALID_ARGUMENT, fmt, args, "op %s: %s %s", KC__QS(def->name),
      is_input ? "input" : "output", KC__QS(arg->spec));
  va_end(args);
  return st;
}

static kc_status* kc__resolve_arg(kc__op_schema* def, kc__arg_def* arg,
                                  bool is_input) {
  if (arg->number_word) {
    int32_t n = kc__op_find_attr(def, kc_sv(arg->number_word));
    if (n < 0 || def->attrs[n].kind != KC__ATTR_INT || def->attrs[n].is_list) {
      return kc__arg_error(def, arg, is_input,
                           "%s must name an int attr (the number of "
                           "tensors)%s",
                           KC__QS(arg->number_word),
                           n < 0 ? ", but the op has no such attr" : "");
    }
    arg->number_attr = n;
  }
  int32_t t = kc__op_find_attr(def, kc_sv(arg->type_word));
  if (t >= 0) {
    const kc__attr_def* a = &def->attrs[t];
    if (a->kind != KC__ATTR_TYPE || (a->is_list && arg->number_word)) {
      return kc__arg_error(def, arg, is_input,
                           "%s is %s %s attr; the type of %s must be a "
                           "type attr%s or a dtype",
                           KC__QS(a->name),
                           kc__attr_kind_name(a)[0] == 'i' ? "an" : "a",
                           kc__attr_kind_name(a),
                           arg->number_word ? "N * T" : "an arg",
                           arg->number_word ? "" : ", a list(type) attr");
    }
    arg->type_attr = t;
    if (a->is_list) arg->form = KC__ARG_TYPE_LIST;
    return NULL;
  }
  char why[320];
  if (kc__type_word_refusal(kc_sv(arg->type_word), why, sizeof why)) {
    /* The type word ends the spec: its column follows from the length. */
    return kc__arg_error(def, arg, is_input, "column %zu: %s",
                         strlen(arg->spec) - strlen(arg->type_word) + 1, why);
  }
  if (!kc__type_word_dtype(kc_sv(arg->type_word), &arg->fixed_type)) {
    return kc__arg_error(def, arg, is_input,
                         "%s names neither an attr of the op nor a dtype",
                         KC__QS(arg->type_word));
  }
  return NULL;
}

/* Checks the definition as a whole and marks the attrs the inputs
 * determine. */
static kc_status* kc__op_resolve(kc__op_schema* def) {
  for (int32_t i = 0; i < def->num_inputs; ++i) {
    KC_RETURN_IF_ERROR(kc__resolve_arg(def, &def->inputs[i], true));
  }
  for (int32_t i = 0; i < def->num_outputs; ++i) {
    KC_RETURN_IF_ERROR(kc__resolve_arg(def, &def->outputs[i], false));
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
  if (def->gradient) KC_RETURN_IF_ERROR(kc__op_gradient_resolve(def, def->gradient));
  if (def->jvp) KC_RETURN_IF_ERROR(kc__op_gradient_resolve(def, def->jvp));
  return NULL;
}

/* ---- the registry ------------------------------------------------------ */

/* The ops alive, registered or not (see kc_op.alive_next). */
static pthread_mutex_t kc__ops_alive_mu = PTHREAD_MUTEX_INITIALIZER;
static kc_op* kc__ops_alive;

static void kc__op_alive_add(kc_op* op) {
  pthread_mutex_lock(&kc__ops_alive_mu);
  op->alive_next = kc__ops_alive;
  if (kc__ops_alive) kc__ops_alive->alive_prev = op;
  kc__ops_alive = op;
  pthread_mutex_unlock(&kc__ops_alive_mu);
}

static void kc__op_alive_remove(kc_op* op) {
  pthread_mutex_lock(&kc__ops_alive_mu);
  if (op->alive_prev) op->alive_prev->alive_next = op->alive_next;
  else if (kc__ops_alive == op) kc__ops_alive = op->alive_next;
  if (op->alive_next) op->alive_next->alive_prev = op->alive_prev;
  pthread_mutex_unlock(&kc__ops_alive_mu);
}

static void kc__op_delete(kc_object* obj) {
  kc_op* op = (kc_op*)(void*)obj;
  kc__op_alive_remove(op);
  /* First, unlike other objects: an op runs none of its plugin's code when
   * it goes (its kernels are objects of their own, detached when their
   * deleters have run), and an unload reading its cache must not see it
   * half freed. */
  kc__owned_detach(&op->owned);
  kc__op_cache_deinit(&op->cache);
  kc__op_schema_clear(&op->def);
  kc__free(op);
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
  /* The ready-made shape functions compute only through the helpers,
   * which is as right for symbolic dims as for numbers. */
  kc_shape_fn fn = st ? NULL : b->def.shape_fn;
  if (fn == kc_shape_fn_unchanged || fn == kc_shape_fn_elementwise ||
      fn == kc_shape_fn_broadcast || fn == kc_shape_fn_matmul || fn == kc_shape_fn_reduce ||
      fn == kc_shape_fn_like_inputs) {
    b->def.flags |= KC_OP_SYMBOLIC_SHAPES;
  }
  kc_op* op = st ? NULL : kc__calloc(1, sizeof *op);
  if (!st && !op) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (st) {
    st = kc_status_add_context(st, "registering op %s", KC__QS(b->def.name));
    kc_op_builder_destroy(b);
    return st;
  }
  kc__object_init(&op->header, KC__TYPE_OP, kc__op_delete);
  kc__op_alive_add(op);
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
  return kc_status_add_context(st, "registering op %s", KC__QS(name));
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

/* An op leaving the registry: it may outlive it (a function "op.NAME"
 * that someone kept holds it), but its kernel instances go now, and its
 * function leaves the function registry. */
static void kc__op_retire(kc_object* obj) {
  kc_op* op = (kc_op*)(void*)obj;
  __atomic_store_n(&op->removed, true, __ATOMIC_RELEASE);
  kc__op_func_unregister(op);
  kc__op_cache_clear(&op->cache);
}

/* A reference to every op alive that is not being freed already. */
static kc_op** kc__ops_alive_retained(size_t* out_count) {
  pthread_mutex_lock(&kc__ops_alive_mu);
  size_t n = 0;
  for (kc_op* op = kc__ops_alive; op; op = op->alive_next) ++n;
  kc_op** list = kc__calloc(n + 1, sizeof *list);
  size_t k = 0;
  for (kc_op* op = kc__ops_alive; list && op; op = op->alive_next) {
    /* An op whose count reached 0 is waiting for this lock to leave. */
    int64_t refs = __atomic_load_n(&op->header.ref_count, __ATOMIC_ACQUIRE);
    while (refs > 0 && !__atomic_compare_exchange_n(&op->header.ref_count, &refs, refs + 1,
                                                     false, __ATOMIC_ACQ_REL,
                                                     __ATOMIC_ACQUIRE)) {
    }
    if (refs > 0) list[k++] = op;
  }
  pthread_mutex_unlock(&kc__ops_alive_mu);
  *out_count = k;
  return list;
}

void kc_op_registry_reset(void) {
  /* The ops an override replaced are no longer in the registry, but a
   * function "op.NAME" kept from before may hold one: they go too. */
  size_t n = 0;
  kc_op** alive = kc__ops_alive_retained(&n);
  kc__registry_reset_with(&kc__op_registry, kc__op_retire);
  for (size_t i = 0; i < n; ++i) {
    kc__op_retire(KC_OBJECT(alive[i]));
    kc_object_release(KC_OBJECT(alive[i]));
  }
  kc__free(alive);
}

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

const kc_any* kc_op_get_attr_default(const kc_op* op, int32_t index) {
  if (!op || index < 0 || index >= op->def.num_attrs) return NULL;
  const kc__attr_def* a = &op->def.attrs[index];
  return a->has_default ? &a->default_value : NULL;
}

size_t kc_op_format_signature(const kc_op* op, char* buf, size_t cap) {
  size_t n = 0;
  if (cap) buf[0] = '\0';
  if (!op) return 0;
  const kc__op_schema* d = &op->def;
  kc__appendf(buf, cap, &n, "%s(", d->name);
  for (int32_t i = 0; i < d->num_inputs; ++i) {
    kc__appendf(buf, cap, &n, "%s%s", i ? ", " : "", d->inputs[i].spec);
  }
  kc__appendf(buf, cap, &n, ") -> (");
  for (int32_t i = 0; i < d->num_outputs; ++i) {
    kc__appendf(buf, cap, &n, "%s%s", i ? ", " : "", d->outputs[i].spec);
  }
  kc__appendf(buf, cap, &n, ")");
  return n;
}
