/*
 * Eager op calls.
 *
 * A call resolves itself against the definition into a frame on the
 * stack (attribute values, where each arg's tensors start, output dtypes),
 * then looks the frame's key (device and attribute values, which include
 * every dtype a kernel can depend on) up in the op's cache. A hit is a
 * hash, a probe and a generation check; a miss selects and constructs the
 * kernel and publishes a new entry. Then shape inference, outputs and
 * compute.
 *
 * The cache is a hash table with the registry's discipline: lock-free
 * readers, writers under the op's mutex, nothing a reader may hold freed
 * before the op itself goes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op/op_internal.h"
#include "runtime/device_internal.h"

/* A frame value not yet resolved. */
#define KC__UNSET (-1)

typedef struct kc__frame {
  const kc__op_schema* def;
  kc_any values[KC_OP_MAX_ATTRS];
  uint64_t owned; /* bit i: values[i] holds a reference this frame owns */
  int32_t input_starts[KC_OP_MAX_ARGS + 1];
  int32_t output_starts[KC_OP_MAX_ARGS + 1];
  int32_t num_inputs;
  int32_t num_outputs;
  DLDataType input_dtypes[KC_OP_MAX_TENSORS];
  DLDataType output_dtypes[KC_OP_MAX_TENSORS];
  DLDevice device;
  bool mixed_devices;
} kc__frame;

static void kc__frame_release(kc__frame* f) {
  for (int32_t i = 0; f->owned && i < f->def->num_attrs; ++i) {
    if (f->owned >> i & 1u) kc_any_release(&f->values[i]);
  }
}

static bool kc__host_device(DLDevice d) {
  return d.device_type == kDLCPU || d.device_type == kDLCUDAHost;
}

/* ---- resolving a call -------------------------------------------------- */

static kc_status* kc__given_attrs(kc__frame* f, const kc_op_attr* attrs,
                                  int32_t num_attrs) {
  const kc__op_schema* def = f->def;
  for (int32_t j = 0; j < num_attrs; ++j) {
    int32_t i = kc__op_find_attr(def, attrs[j].name);
    if (i < 0) {
      char names[512];
      size_t n = 0;
      names[0] = '\0';
      for (int32_t k = 0; k < def->num_attrs && n < sizeof names; ++k) {
        int w = snprintf(names + n, sizeof names - n, "%s%s", k ? ", " : "",
                         def->attrs[k].name);
        if (w > 0) n += (size_t)w;
      }
      return kc_status_create(
          KC_INVALID_ARGUMENT, "attr %s: the op has no such attr (%s%s)",
          KC__Q(attrs[j].name),
          def->num_attrs ? "its attrs: " : "it has none", names);
    }
    if (f->values[i].type_index != KC__UNSET) {
      return kc_status_create(KC_INVALID_ARGUMENT, "attr %s given twice",
                              KC__QS(def->attrs[i].name));
    }
    KC__TRY(
        kc__check_attr_value(&def->attrs[i], &attrs[j].value, &f->values[i]));
  }
  return NULL;
}

/* How many tensors each input arg takes. */
static kc_status* kc__input_lengths(kc__frame* f, int32_t num_inputs) {
  const kc__op_schema* def = f->def;
  int32_t known = 0, open_args = 0, open_attr = -1;
  int32_t lens[KC_OP_MAX_ARGS];
  for (int32_t a = 0; a < def->num_inputs; ++a) {
    const kc__arg_def* arg = &def->inputs[a];
    int32_t attr = arg->form == KC__ARG_REPEATED    ? arg->number_attr
                   : arg->form == KC__ARG_TYPE_LIST ? arg->type_attr
                                                    : -1;
    lens[a] = 1;
    if (attr >= 0) {
      const kc_any* v = &f->values[attr];
      if (v->type_index == KC__UNSET) {
        if (open_attr >= 0 && open_attr != attr) {
          return kc_status_create(
              KC_INVALID_ARGUMENT,
              "cannot tell how the %d input tensors split between the "
              "lengths %s and %s: give one of those attrs",
              num_inputs, KC__QS(def->attrs[open_attr].name), KC__QS(def->attrs[attr].name));
        }
        open_attr = attr;
        open_args++;
        lens[a] = -1;
        continue;
      }
      int64_t n = arg->form == KC__ARG_REPEATED
                      ? v->u.v_int64
                      : (int64_t)kc_array_get_size(
                            (const kc_array*)(const void*)v->u.v_obj);
      if (n < 0 || n > KC_OP_MAX_TENSORS) {
        return kc_status_create(KC_INVALID_ARGUMENT,
                                "input %s: %lld tensors (attr %s)",
                                KC__QS(arg->name), (long long)n, KC__QS(def->attrs[attr].name));
      }
      lens[a] = (int32_t)n;
    }
    known += lens[a];
  }
  if (open_args) {
    int32_t rest = num_inputs - known;
    if (rest < 0 || rest % open_args) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "expected %d fixed input tensor(s) plus some "
                              "for %s, got %d in all",
                              known, KC__QS(def->attrs[open_attr].name), num_inputs);
    }
    int32_t n = rest / open_args;
    const kc__attr_def* a = &def->attrs[open_attr];
    if (a->kind == KC__ATTR_INT) {
      kc_any v = kc_any_int(n);
      KC_RETURN_IF_ERROR(kc__check_attr_value(a, &v, &f->values[open_attr]),
                         "inferring attr %s from %d input tensor(s)", KC__QS(a->name),
                         n);
    }
    for (int32_t k = 0; k < def->num_inputs; ++k) {
      if (lens[k] < 0) lens[k] = n;
    }
    known = num_inputs;
  }
  if (known != num_inputs) {
    return kc_status_create(
        KC_INVALID_ARGUMENT, "expected %d input tensor(s), got %d (%s)", known,
        num_inputs, num_inputs < known ? "missing inputs" : "extra inputs");
  }
  f->input_starts[0] = 0;
  for (int32_t a = 0; a < def->num_inputs; ++a) {
    f->input_starts[a + 1] = f->input_starts[a] + lens[a];
  }
  f->num_inputs = num_inputs;
  return NULL;
}

static kc_status* kc__check_tensor(const DLTensor* t, int32_t index) {
  if (!t) {
    return kc_status_create(KC_INVALID_ARGUMENT, "input %d is NULL", index);
  }
  if (t->ndim < 0 || t->ndim > KC_TENSOR_MAX_NDIM || (t->ndim && !t->shape)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "input %d: ndim %d, shape %p: not a valid tensor",
                            index, t->ndim, (void*)t->shape);
  }
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "input %d: dimension %d is %lld", index, i,
                              (long long)t->shape[i]);
    }
  }
  if (t->strides && !kc_dltensor_is_compact(t)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "input %d is strided; kernels take compact "
                            "row-major tensors (copy it first)",
                            index);
  }
  return NULL;
}

static kc_status* kc__dtype_error(int32_t index, const kc__arg_def* arg,
                                  DLDataType want, DLDataType got,
                                  const char* why) {
  char w[64], g[64];
  kc_dtype_format(want, w, sizeof w);
  kc_dtype_format(got, g, sizeof g);
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "input %d (%s): expected %s%s, got %s", index,
                          KC__QS(arg->name), w, why, g);
}

/* Checks each input tensor and infers type attrs and type lists. */
static kc_status* kc__input_types(kc__frame* f, const DLTensor* const* inputs) {
  const kc__op_schema* def = f->def;
  f->device = kc_device_cpu();
  f->mixed_devices = false;
  int32_t type_source[KC_OP_MAX_ATTRS]; /* the input that set each T */
  for (int32_t i = 0; i < def->num_attrs; ++i) type_source[i] = -1;
  for (int32_t a = 0; a < def->num_inputs; ++a) {
    const kc__arg_def* arg = &def->inputs[a];
    int32_t start = f->input_starts[a], stop = f->input_starts[a + 1];
    kc_any* tv = arg->type_attr >= 0 ? &f->values[arg->type_attr] : NULL;
    bool make_list =
        arg->form == KC__ARG_TYPE_LIST && tv->type_index == KC__UNSET;
    kc_any list_items[KC_OP_MAX_TENSORS];
    for (int32_t i = start; i < stop; ++i) {
      const DLTensor* t = inputs[i];
      KC__TRY(kc__check_tensor(t, i));
      DLDataType dt = t->dtype;
      f->input_dtypes[i] = dt;
      if (i == 0) {
        f->device = t->device;
      } else if (t->device.device_type != f->device.device_type ||
                 t->device.device_id != f->device.device_id) {
        f->mixed_devices = true;
        /* The call runs where its device inputs are; host inputs may be
         * host-memory args of the kernel. */
        if (kc__host_device(f->device)) f->device = t->device;
      }
      if (!tv) {
        if (!kc_dtype_equal(dt, arg->fixed_type)) {
          return kc__dtype_error(i, arg, arg->fixed_type, dt, "");
        }
      } else if (arg->form == KC__ARG_TYPE_LIST) {
        if (make_list) {
          list_items[i - start] = kc_any_dtype(dt);
          continue;
        }
        DLDataType want =
            kc_array_get_item((const kc_array*)(const void*)tv->u.v_obj,
                              (size_t)(i - start))
                ->u.v_dtype;
        if (!kc_dtype_equal(dt, want)) {
          char why[96];
          snprintf(why, sizeof why, " (item %d of attr %s)", i - start,
                   KC__QS(def->attrs[arg->type_attr].name));
          return kc__dtype_error(i, arg, want, dt, why);
        }
      } else if (tv->type_index == KC__UNSET) {
        kc_any v = kc_any_dtype(dt);
        KC_RETURN_IF_ERROR(
            kc__check_attr_value(&def->attrs[arg->type_attr], &v, tv),
            "input %d (%s)", i, KC__QS(arg->name));
        type_source[arg->type_attr] = i;
      } else if (!kc_dtype_equal(dt, tv->u.v_dtype)) {
        char why[96];
        const kc__attr_def* ta = &def->attrs[arg->type_attr];
        if (type_source[arg->type_attr] >= 0) {
          snprintf(why, sizeof why, " (%s, as input %d set it)", ta->name,
                   type_source[arg->type_attr]);
        } else {
          snprintf(why, sizeof why, " (attr %s)", ta->name);
        }
        return kc__dtype_error(i, arg, tv->u.v_dtype, dt, why);
      }
    }
    if (make_list) {
      kc_array* list = NULL;
      KC__TRY(kc_array_create(NULL, list_items, (size_t)(stop - start), &list));
      kc_any v = kc_any_object(KC_OBJECT(list));
      kc_status* st = kc__check_attr_value(&def->attrs[arg->type_attr], &v, tv);
      f->owned |= UINT64_C(1) << arg->type_attr;
      *tv = v;
      KC_RETURN_IF_ERROR(st, "input %s", KC__QS(arg->name));
    }
  }
  return NULL;
}

/* Fills defaults, refuses missing attrs, and works out the outputs. */
static kc_status* kc__finish_resolve(kc__frame* f) {
  const kc__op_schema* def = f->def;
  for (int32_t i = 0; i < def->num_attrs; ++i) {
    if (f->values[i].type_index != KC__UNSET) continue;
    const kc__attr_def* a = &def->attrs[i];
    if (!a->has_default) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "attr %s (%s) is required: it has no default "
                              "and no input determines it",
                              KC__QS(a->name), kc__attr_kind_name(a));
    }
    f->values[i] = a->default_value;
  }
  int32_t n = 0;
  f->output_starts[0] = 0;
  for (int32_t o = 0; o < def->num_outputs; ++o) {
    const kc__arg_def* arg = &def->outputs[o];
    const kc_any* tv = arg->type_attr >= 0 ? &f->values[arg->type_attr] : NULL;
    int64_t len = 1;
    if (arg->form == KC__ARG_REPEATED) {
      len = f->values[arg->number_attr].u.v_int64;
    } else if (arg->form == KC__ARG_TYPE_LIST) {
      len =
          (int64_t)kc_array_get_size((const kc_array*)(const void*)tv->u.v_obj);
    }
    if (len < 0 || len > KC_OP_MAX_TENSORS - n) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "output %s: %lld tensors (at most %d in all)",
                              KC__QS(arg->name), (long long)len, KC_OP_MAX_TENSORS);
    }
    for (int32_t j = 0; j < (int32_t)len; ++j) {
      DLDataType dt = arg->fixed_type;
      if (arg->form == KC__ARG_TYPE_LIST) {
        dt = kc_array_get_item((const kc_array*)(const void*)tv->u.v_obj,
                               (size_t)j)
                 ->u.v_dtype;
      } else if (tv) {
        dt = tv->u.v_dtype;
      }
      f->output_dtypes[n + j] = dt;
    }
    n += (int32_t)len;
    f->output_starts[o + 1] = n;
  }
  f->num_outputs = n;
  return NULL;
}

static kc_status* kc__resolve(kc__frame* f, const DLTensor* const* inputs,
                              int32_t num_inputs, const kc_op_attr* attrs,
                              int32_t num_attrs) {
  for (int32_t i = 0; i < f->def->num_attrs; ++i) {
    f->values[i].type_index = KC__UNSET;
  }
  f->owned = 0;
  if (num_attrs) KC__TRY(kc__given_attrs(f, attrs, num_attrs));
  KC__TRY(kc__input_lengths(f, num_inputs));
  KC__TRY(kc__input_types(f, inputs));
  return kc__finish_resolve(f);
}

/* ---- the key ----------------------------------------------------------- */

#define KC__KEY_STACK 48

typedef struct kc__key {
  uint64_t* words;
  size_t n, cap;
  bool oom;
  uint64_t stack[KC__KEY_STACK];
} kc__key;

static void kc__key_put(kc__key* k, uint64_t w) {
  if (k->n == k->cap) {
    size_t cap = k->cap * 2;
    uint64_t* grown = malloc(cap * sizeof *grown);
    if (!grown) {
      k->oom = true;
      return;
    }
    memcpy(grown, k->words, k->n * sizeof *grown);
    if (k->words != k->stack) free(k->words);
    k->words = grown;
    k->cap = cap;
  }
  k->words[k->n++] = w;
}

static void kc__key_value(kc__key* k, const kc_any* v) {
  kc_string_view s;
  if (kc_any_get_string(v, &s)) {
    kc__key_put(k, KC_TYPE_STR);
    kc__key_put(k, s.size);
    for (size_t i = 0; i < s.size; i += 8) {
      uint64_t w = 0;
      memcpy(&w, s.data + i, s.size - i < 8 ? s.size - i : 8);
      kc__key_put(k, w);
    }
    return;
  }
  kc__key_put(k, (uint64_t)(uint32_t)v->type_index);
  if (v->type_index == KC_TYPE_ARRAY) {
    const kc_array* a = (const kc_array*)(const void*)v->u.v_obj;
    size_t n = kc_array_get_size(a);
    kc__key_put(k, n);
    for (size_t i = 0; i < n; ++i) kc__key_value(k, kc_array_get_item(a, i));
    return;
  }
  if (v->type_index == KC_TYPE_DTYPE) {
    DLDataType t = v->u.v_dtype;
    kc__key_put(
        k, (uint64_t)t.code | (uint64_t)t.bits << 8 | (uint64_t)t.lanes << 16);
    return;
  }
  uint64_t w;
  memcpy(&w, &v->u, sizeof w); /* int, bool, float bits */
  kc__key_put(k, w);
}

static void kc__key_build(kc__key* k, const kc__frame* f) {
  k->words = k->stack;
  k->n = 0;
  k->cap = KC__KEY_STACK;
  k->oom = false;
  kc__key_put(
      k, (uint64_t)f->device.device_type << 32 | (uint32_t)f->device.device_id);
  for (int32_t i = 0; i < f->def->num_attrs; ++i) {
    kc__key_value(k, &f->values[i]);
  }
}

static void kc__key_free(kc__key* k) {
  if (k->words != k->stack) free(k->words);
}

static uint64_t kc__key_hash(const kc__key* k) {
  uint64_t h = 0x243f6a8885a308d3ull;
  for (size_t i = 0; i < k->n; ++i) {
    h = (h ^ k->words[i]) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  return h;
}

/* ---- the cache --------------------------------------------------------- */

void kc__op_cache_init(kc__op_cache* c) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->mu, NULL);
}

static void kc__cache_entry_free(kc__cache_entry* e) {
  if (e->kernel && e->kernel->delete_fn && e->instance) {
    e->kernel->delete_fn(e->instance);
  }
  kc_object_release(KC_OBJECT(e->kernel));
  for (int32_t i = 0; i < e->num_values; ++i) kc_any_release(&e->values[i]);
  free(e->values);
  free(e->key);
  free(e);
}

void kc__op_cache_clear(kc__op_cache* c) {
  kc__cache_table* t = c->table;
  c->table = NULL;
  for (size_t i = 0; t && i <= t->mask; ++i) {
    if (t->slots[i]) kc__cache_entry_free(t->slots[i]);
  }
  free(t);
  while (c->retired_entries) {
    kc__cache_entry* next = c->retired_entries->retired_next;
    kc__cache_entry_free(c->retired_entries);
    c->retired_entries = next;
  }
  while (c->retired_tables) {
    kc__cache_table* next = c->retired_tables->retired_next;
    free(c->retired_tables);
    c->retired_tables = next;
  }
  c->entries = 0;
}

void kc__op_cache_deinit(kc__op_cache* c) {
  kc__op_cache_clear(c);
  pthread_mutex_destroy(&c->mu);
}

void kc__op_cache_each_kernel(const kc_op* op,
                              void (*fn)(void* ctx, const kc__kernel* k),
                              void* ctx) {
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  pthread_mutex_lock(&c->mu);
  kc__cache_table* t = c->table;
  for (size_t i = 0; t && i <= t->mask; ++i) {
    if (t->slots[i] && t->slots[i]->kernel) fn(ctx, t->slots[i]->kernel);
  }
  for (kc__cache_entry* e = c->retired_entries; e; e = e->retired_next) {
    if (e->kernel) fn(ctx, e->kernel);
  }
  pthread_mutex_unlock(&c->mu);
}

static kc__cache_entry** kc__cache_probe(kc__cache_table* t, uint64_t h,
                                         const kc__key* k) {
  for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
    kc__cache_entry* e = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
    if (!e) return &t->slots[i];
    if (e->hash == h && e->key_words == k->n &&
        memcmp(e->key, k->words, k->n * sizeof(uint64_t)) == 0) {
      return &t->slots[i];
    }
  }
}

static kc__cache_entry* kc__cache_find(kc__op_cache* c, uint64_t h,
                                       const kc__key* k) {
  kc__cache_table* t = __atomic_load_n(&c->table, __ATOMIC_ACQUIRE);
  if (!t) return NULL;
  return __atomic_load_n(kc__cache_probe(t, h, k), __ATOMIC_ACQUIRE);
}

/* With mu held: a table with room for one more entry. */
static bool kc__cache_reserve(kc__op_cache* c) {
  kc__cache_table* old = c->table;
  if (old && (old->used + 1) * 2 <= old->mask + 1) return true;
  size_t cap = old ? (old->mask + 1) * 2 : 8;
  kc__cache_table* t = calloc(1, sizeof *t + cap * sizeof(kc__cache_entry*));
  if (!t) return false;
  t->mask = cap - 1;
  for (size_t i = 0; old && i <= old->mask; ++i) {
    kc__cache_entry* e = old->slots[i];
    if (!e) continue;
    size_t j = (size_t)e->hash & t->mask;
    while (t->slots[j]) j = (j + 1) & t->mask;
    t->slots[j] = e;
  }
  t->used = old ? old->used : 0;
  if (old) {
    old->retired_next = c->retired_tables;
    c->retired_tables = old;
  }
  __atomic_store_n(&c->table, t, __ATOMIC_RELEASE);
  return true;
}

/* A string that only borrows becomes an owned copy; objects are retained. */
static kc_status* kc__own_value(const kc_any* in, kc_any* out) {
  if (in->type_index == KC_TYPE_RAW_STR) {
    return kc_any_from_string(NULL, kc_sv(in->u.v_c_str), out);
  }
  *out = *in;
  kc_any_retain(out);
  return NULL;
}

/* Selects and constructs a kernel for the frame and makes an entry for it
 * (not yet published). */
static kc_status* kc__cache_entry_create(const kc_op* op, const kc__frame* f,
                                         const kc__key* k, uint64_t hash,
                                         uint64_t generation,
                                         kc__cache_entry** out) {
  const kc__op_schema* def = f->def;
  kc__kernel* kernel = NULL;
  KC__TRY(kc__kernel_select(def, f->device.device_type, f->values, &kernel));
  kc__cache_entry* e = calloc(1, sizeof *e);
  if (!e) {
    kc_object_release(KC_OBJECT(kernel));
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  e->kernel = kernel; /* the selection's reference */
  e->hash = hash;
  e->generation = generation;
  e->device = f->device;
  e->key_words = k->n;
  e->key = malloc(k->n * sizeof *e->key);
  e->values = calloc((size_t)def->num_attrs + 1, sizeof *e->values);
  kc_status* st = NULL;
  if (!e->key || !e->values) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    memcpy(e->key, k->words, k->n * sizeof *e->key);
  }
  for (int32_t i = 0; !st && i < def->num_attrs; ++i) {
    st = kc__own_value(&f->values[i], &e->values[i]);
    if (!st) e->num_values = i + 1;
  }
  for (int32_t h = 0; h < kernel->num_host_memory; ++h) {
    for (int32_t a = 0; a < def->num_inputs && a < 64; ++a) {
      if (strcmp(kernel->host_memory[h], def->inputs[a].name) == 0) {
        e->host_memory_inputs |= UINT64_C(1) << a;
      }
    }
    for (int32_t a = 0; a < def->num_outputs && a < 64; ++a) {
      if (strcmp(kernel->host_memory[h], def->outputs[a].name) == 0) {
        e->host_memory_outputs |= UINT64_C(1) << a;
      }
    }
  }
  if (!st && kernel->create) {
    kc_op_attrs attrs = {def, e->values};
    kc_kernel_construct_ctx cctx = {def,
                                    &attrs,
                                    f->device,
                                    f->num_inputs,
                                    f->num_outputs,
                                    f->input_dtypes,
                                    f->output_dtypes,
                                    kernel->data};
    st = kernel->create(&cctx, &e->instance);
    if (st) e->instance = NULL;
    if (st) {
      char dev[64];
      kc__device_type_format(f->device.device_type, dev, sizeof dev);
      st = kc_status_add_context(st, "constructing the %s kernel", dev);
    }
  }
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  __atomic_add_fetch(&c->constructions, 1, __ATOMIC_RELAXED);
  if (st) {
    kc__cache_entry_free(e);
    return st;
  }
  *out = e;
  return NULL;
}

/* Publishes `e` (replacing `stale`, an entry of the same key, when given)
 * unless another thread published one first, in which case `e` is freed
 * and theirs returned. */
static kc__cache_entry* kc__cache_publish(kc__op_cache* c, kc__cache_entry* e,
                                          const kc__key* k,
                                          kc__cache_entry* stale,
                                          kc_status** out_status) {
  pthread_mutex_lock(&c->mu);
  kc__cache_entry* result = e;
  if (!kc__cache_reserve(c)) {
    *out_status = kc_status_create(KC_RESOURCE_EXHAUSTED,
                                   "out of memory caching a kernel");
    result = NULL;
  } else {
    kc__cache_entry** slot = kc__cache_probe(c->table, e->hash, k);
    kc__cache_entry* present = *slot;
    if (present && present != stale) {
      result = present; /* another thread got there first */
    } else {
      __atomic_store_n(slot, e, __ATOMIC_RELEASE);
      if (present) {
        present->retired_next = c->retired_entries;
        c->retired_entries = present;
      } else {
        c->table->used++;
        c->entries++;
      }
    }
  }
  pthread_mutex_unlock(&c->mu);
  if (result != e) kc__cache_entry_free(e);
  return result;
}

/* The entry for the frame: cached, re-checked, or new. */
static kc_status* kc__cache_get(const kc_op* op, const kc__frame* f,
                                kc__cache_entry** out) {
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  kc__key k;
  kc__key_build(&k, f);
  if (k.oom) {
    kc__key_free(&k);
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  uint64_t h = kc__key_hash(&k);
  uint64_t gen = kc__kernel_generation();
  kc__cache_entry* e = kc__cache_find(c, h, &k);
  if (KC__LIKELY(e &&
                 __atomic_load_n(&e->generation, __ATOMIC_ACQUIRE) == gen)) {
    kc__key_free(&k);
    *out = e;
    return NULL;
  }
  kc_status* st = NULL;
  if (e) {
    /* Kernels were registered since: is this still the one to use? */
    __atomic_add_fetch(&c->reselections, 1, __ATOMIC_RELAXED);
    kc__kernel* kernel = NULL;
    st = kc__kernel_select(f->def, f->device.device_type, f->values, &kernel);
    bool same = !st && kernel == e->kernel;
    kc_object_release(KC_OBJECT(kernel)); /* e holds its own */
    if (same) {
      __atomic_store_n(&e->generation, gen, __ATOMIC_RELEASE);
      kc__key_free(&k);
      *out = e;
      return NULL;
    }
  }
  kc__cache_entry* fresh = NULL;
  if (!st) st = kc__cache_entry_create(op, f, &k, h, gen, &fresh);
  if (!st) *out = kc__cache_publish(c, fresh, &k, e, &st);
  kc__key_free(&k);
  return st;
}

void kc_op_query_cache(const kc_op* op, kc_op_cache_stats* out) {
  if (!op || !out) return;
  kc__op_cache* c = (kc__op_cache*)(uintptr_t)&op->cache;
  kc_op_cache_stats s;
  s.struct_size = out->struct_size;
  pthread_mutex_lock(&c->mu);
  s.entries = c->entries;
  pthread_mutex_unlock(&c->mu);
  s.constructions = __atomic_load_n(&c->constructions, __ATOMIC_RELAXED);
  s.reselections = __atomic_load_n(&c->reselections, __ATOMIC_RELAXED);
  memcpy(out, &s, out->struct_size < sizeof s ? out->struct_size : sizeof s);
}

/* ---- the compute context ----------------------------------------------- */

int32_t kc_kernel_ctx_get_input_count(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->num_inputs : 0;
}

const DLTensor* kc_kernel_ctx_get_input(const kc_kernel_ctx* ctx,
                                        int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_inputs) return NULL;
  return ctx->inputs[index];
}

int32_t kc_kernel_ctx_get_output_count(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->num_outputs : 0;
}

DLTensor* kc_kernel_ctx_get_output(const kc_kernel_ctx* ctx, int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_outputs) return NULL;
  return ctx->outputs[index];
}

kc_status* kc_kernel_ctx_get_input_range(const kc_kernel_ctx* ctx,
                                         const char* arg_name,
                                         int32_t* out_start,
                                         int32_t* out_stop) {
  if (!ctx || !arg_name || !out_start || !out_stop) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_kernel_ctx_get_input_range: a pointer is "
                            "NULL");
  }
  int32_t a = kc__op_find_input(ctx->def, kc_sv(arg_name));
  if (a < 0) {
    return kc_status_create(KC_NOT_FOUND, "op %s has no input %s",
                            KC__QS(ctx->def->name), KC__QS(arg_name));
  }
  *out_start = ctx->input_starts[a];
  *out_stop = ctx->input_starts[a + 1];
  return NULL;
}

/* Where the index-th output lives: the call's device, or the host for an
 * output arg the kernel declared host memory. */
static DLDevice kc__output_device(const kc_kernel_ctx* ctx, int32_t index) {
  if (ctx->host_memory_outputs) {
    for (int32_t a = 0; a < ctx->def->num_outputs && a < 64; ++a) {
      if (index >= ctx->output_starts[a] && index < ctx->output_starts[a + 1]) {
        if (ctx->host_memory_outputs >> a & 1u) return kc_device_cpu();
        break;
      }
    }
  }
  return ctx->device;
}

static bool kc__same_shape(const DLTensor* t, const int64_t* shape,
                           int32_t ndim) {
  if (t->ndim != ndim) return false;
  for (int32_t i = 0; i < ndim; ++i) {
    if (t->shape[i] != shape[i]) return false;
  }
  return true;
}

kc_status* kc_kernel_ctx_allocate_output(kc_kernel_ctx* ctx, int32_t index,
                                         const int64_t* shape, int32_t ndim,
                                         DLTensor** out_tensor) {
  if (!ctx || !out_tensor || (ndim > 0 && !shape)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_kernel_ctx_allocate_output: a pointer is "
                            "NULL");
  }
  if (index < 0 || index >= ctx->num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "op %s: allocating output %d of %d",
                            KC__QS(ctx->def->name), index, ctx->num_outputs);
  }
  DLTensor* have = ctx->outputs[index];
  const kc_shape_handle* known = ctx->inferred[index];
  bool fits = have ? kc__same_shape(have, shape, ndim)
                   : !known || known->rank < 0 || known->rank == ndim;
  for (int32_t i = 0; fits && !have && known && known->rank == ndim && i < ndim;
       ++i) {
    fits = known->dims[i] < 0 || known->dims[i] == shape[i];
  }
  if (!fits) {
    return kc_status_create(
        KC_INVALID_ARGUMENT,
        "op %s: output %d: the kernel's shape (rank "
        "%d) contradicts %s",
        KC__QS(ctx->def->name), index, ndim,
        have ? "the output tensor given" : "what shape inference found");
  }
  if (!have) {
    kc_tensor* t = NULL;
    KC__TRY(kc_tensor_create(ctx->alloc, shape, ndim, ctx->output_dtypes[index],
                             kc__output_device(ctx, index), &t));
    ctx->owned[index] = t;
    have = (DLTensor*)(uintptr_t)kc_tensor_get_dltensor(t);
    ctx->outputs[index] = have;
  }
  *out_tensor = have;
  return NULL;
}

/* Device scratch memory: stream-ordered on the call's stream, so that it
 * is freed (kc__device_finish) after the work compute queued there. The
 * record of it is host memory. */
static kc_status* kc__device_temp(kc_kernel_ctx* ctx, size_t size,
                                  size_t alignment, void** out_ptr) {
  char dev[64];
  if (alignment > 256 || (alignment & (alignment - 1))) {
    kc_device_format(ctx->device, dev, sizeof dev);
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_kernel_ctx_allocate_temp: alignment %zu on "
                            "%s: expected a power of two up to 256",
                            alignment, dev);
  }
  kc__temp* t = malloc(sizeof *t);
  if (!t) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory allocating %zu temporary bytes",
                            size);
  }
  void* p = NULL;
  kc_status* st = ctx->backend->alloc(ctx->device.device_id, size,
                                      ctx->stream, &p);
  if (st) {
    free(t);
    kc_device_format(ctx->device, dev, sizeof dev);
    return kc_status_add_context(st, "allocating %zu temporary bytes on %s",
                                 size, dev);
  }
  t->ptr = p;
  t->size = size;
  t->alignment = 0; /* 0: device memory */
  t->next = ctx->temps;
  ctx->temps = t;
  *out_ptr = p;
  return NULL;
}

kc_status* kc_kernel_ctx_allocate_temp(kc_kernel_ctx* ctx, size_t size,
                                       size_t alignment, void** out_ptr) {
  if (!ctx || !out_ptr || size == 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_kernel_ctx_allocate_temp: %s",
                            size == 0 ? "size is 0" : "a pointer is NULL");
  }
  if (alignment == 0) alignment = 64;
  if (ctx->backend) return kc__device_temp(ctx, size, alignment, out_ptr);
  kc__temp* t = kc_allocator_alloc(ctx->alloc, sizeof *t, 0);
  void* p = t ? kc_allocator_alloc(ctx->alloc, size, alignment) : NULL;
  if (!p) {
    kc_allocator_free(ctx->alloc, t, sizeof *t, 0);
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory allocating %zu temporary bytes",
                            size);
  }
  t->ptr = p;
  t->size = size;
  t->alignment = alignment;
  t->next = ctx->temps;
  ctx->temps = t;
  *out_ptr = p;
  return NULL;
}

void kc_kernel_ctx_set_status(kc_kernel_ctx* ctx, kc_status* status) {
  if (!status) return;
  if (!ctx) {
    kc_status_destroy(status);
    return;
  }
  kc_status* expected = NULL;
  if (!__atomic_compare_exchange_n(&ctx->status, &expected, status, false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    kc_status_destroy(status);
  }
}

kc_thread_pool* kc_kernel_ctx_get_thread_pool(const kc_kernel_ctx* ctx) {
  return ctx && ctx->pool ? ctx->pool : kc_thread_pool_get_default();
}

void* kc_kernel_ctx_get_stream(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->stream : NULL;
}

DLDevice kc_kernel_ctx_get_device(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->device : kc_device_cpu();
}

const kc_op_attrs* kc_kernel_ctx_get_attrs(const kc_kernel_ctx* ctx) {
  return ctx ? ctx->attrs : NULL;
}

/* ---- running a call ---------------------------------------------------- */

static kc_status* kc__check_devices(const kc__frame* f,
                                    const kc__cache_entry* e,
                                    const DLTensor* const* inputs) {
  for (int32_t a = 0; a < f->def->num_inputs; ++a) {
    bool host_ok = a < 64 && (e->host_memory_inputs >> a & 1u);
    for (int32_t i = f->input_starts[a]; i < f->input_starts[a + 1]; ++i) {
      DLDevice d = inputs[i]->device;
      if (d.device_type == f->device.device_type &&
          d.device_id == f->device.device_id) {
        continue;
      }
      if (host_ok && kc__host_device(d)) continue;
      char want[64], got[64];
      kc_device_format(f->device, want, sizeof want);
      kc_device_format(d, got, sizeof got);
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "input %d (%s) is on %s, but the call runs on "
                              "%s",
                              i, KC__QS(f->def->inputs[a].name), got, want);
    }
  }
  return NULL;
}

/* True when every dim of s is known. */
static bool kc__shape_known(const kc_shape_handle* s) {
  if (!s || s->rank < 0) return false;
  for (int32_t i = 0; i < s->rank; ++i) {
    if (s->dims[i] < 0) return false;
  }
  return true;
}

static kc_status* kc__check_given_output(const kc_kernel_ctx* ctx, int32_t i,
                                         const DLTensor* t) {
  if (!t) {
    return kc_status_create(KC_INVALID_ARGUMENT, "output %d is NULL", i);
  }
  const kc_shape_handle* s = ctx->inferred[i];
  DLDevice want = kc__output_device(ctx, i);
  bool ok = kc_dtype_equal(t->dtype, ctx->output_dtypes[i]) &&
            t->device.device_type == want.device_type &&
            t->device.device_id == want.device_id && t->ndim >= 0 &&
            t->ndim <= KC_TENSOR_MAX_NDIM && (t->ndim == 0 || t->shape) &&
            kc_dltensor_is_compact(t);
  if (ok && s && s->rank >= 0) {
    ok = t->ndim == s->rank;
    for (int32_t d = 0; ok && d < s->rank; ++d) {
      ok = s->dims[d] < 0 || s->dims[d] == t->shape[d];
    }
  }
  if (ok) return NULL;
  char dt[64], dev[64], got[64];
  kc_dtype_format(ctx->output_dtypes[i], dt, sizeof dt);
  kc_device_format(want, dev, sizeof dev);
  kc_device_format(t->device, got, sizeof got);
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "output %d: expected a compact %s tensor on %s of "
                          "the shape the op produces (got one on %s)",
                          i, dt, dev, got);
}

/* The backend and stream of a call on a device: the caller's stream, or
 * kcall's default one (which the call then waits for). */
static kc_status* kc__call_stream(DLDevice device,
                                  const kc_op_call_options* options,
                                  const kc__backend** out_backend,
                                  void** out_stream, bool* out_wait) {
  KC__TRY(kc__device_backend(device, out_backend));
  void* stream = NULL;
  if (options && KC_STRUCT_HAS(options, kc_op_call_options, stream)) {
    stream = options->stream;
  }
  *out_wait = stream == NULL;
  if (!stream) KC__TRY(kc__device_default_stream(device, &stream));
  *out_stream = stream;
  return NULL;
}

/* After compute on a device: frees the temporaries in the stream's order,
 * picks up a failed launch, and waits for the stream when the call owns
 * it. Returns `st`, or the first failure of these when `st` is NULL. */
static kc_status* kc__device_finish(kc_kernel_ctx* ctx, bool wait,
                                    kc_status* st) {
  const kc__backend* b = ctx->backend;
  int32_t ordinal = ctx->device.device_id;
  char dev[64];
  kc_device_format(ctx->device, dev, sizeof dev);
  while (ctx->temps) {
    kc__temp* t = ctx->temps;
    ctx->temps = t->next;
    kc_status* fst = b->free(ordinal, t->ptr, ctx->stream);
    if (fst && !st) {
      st = kc_status_add_context(fst, "freeing %zu temporary bytes on %s",
                                 t->size, dev);
    } else {
      kc_status_destroy(fst);
    }
    free(t);
  }
  /* Both run even after a failure: the launch error is cleared, and work
   * already queued is done before the caller frees what it uses. */
  kc_status* launch = b->check_launch(ordinal);
  if (launch && !st) {
    st = kc_status_add_context(launch, "a kernel launch on %s", dev);
  } else {
    kc_status_destroy(launch);
  }
  if (wait) {
    kc_status* sync = b->stream_synchronize(ordinal, ctx->stream);
    if (sync && !st) {
      st = kc_status_add_context(sync, "waiting for the call's work on %s",
                                 dev);
    } else {
      kc_status_destroy(sync);
    }
  }
  return st;
}

/* Runs shape inference, allocates outputs and computes. `given` holds the
 * caller's outputs (call_into) or is NULL. */
static kc_status* kc__run(const kc_op* op, const kc__frame* f,
                          const kc__cache_entry* e,
                          const DLTensor* const* inputs,
                          const kc_op_call_options* options,
                          DLTensor* const* given, kc_tensor** owned) {
  const kc__op_schema* def = f->def;
  const kc_allocator* alloc = NULL;
  kc_thread_pool* pool = NULL;
  if (options) {
    if (KC_STRUCT_HAS(options, kc_op_call_options, allocator)) {
      alloc = options->allocator;
    }
    if (KC_STRUCT_HAS(options, kc_op_call_options, thread_pool)) {
      pool = options->thread_pool;
    }
  }
  const kc__backend* backend = NULL;
  void* stream = NULL;
  bool wait = false;
  if (!kc__host_device(f->device)) {
    KC__TRY(kc__call_stream(f->device, options, &backend, &stream, &wait));
  }
  kc_op_attrs attrs = {def, f->values};
  kc_shape_handle in_shapes[KC_OP_MAX_TENSORS];
  const kc_shape_handle* out_shapes[KC_OP_MAX_TENSORS];
  DLTensor* outputs[KC_OP_MAX_TENSORS];
  for (int32_t i = 0; i < f->num_inputs; ++i) {
    in_shapes[i].rank = inputs[i]->ndim;
    in_shapes[i].dims = inputs[i]->shape;
  }
  for (int32_t i = 0; i < f->num_outputs; ++i) {
    out_shapes[i] = NULL;
    outputs[i] = given ? given[i] : NULL;
    if (owned) owned[i] = NULL;
  }
  uint64_t arena[64]; /* the first shapes inference makes */
  kc_shape_ctx sctx = {def,
                       &attrs,
                       f->num_inputs,
                       f->num_outputs,
                       in_shapes,
                       f->input_dtypes,
                       out_shapes,
                       f->output_dtypes,
                       NULL,
                       (unsigned char*)arena,
                       0,
                       sizeof arena};
  kc_kernel_ctx kctx = {def,
                        &attrs,
                        inputs,
                        f->num_inputs,
                        f->num_outputs,
                        f->input_starts,
                        outputs,
                        owned,
                        out_shapes,
                        f->output_dtypes,
                        alloc,
                        pool,
                        f->device,
                        NULL,
                        NULL,
                        backend,
                        stream,
                        f->output_starts,
                        e->host_memory_outputs};
  kc_status* st = NULL;
  if (def->shape_fn) {
    st = def->shape_fn(&sctx);
    if (st) st = kc_status_add_context(st, "in the shape function");
  }
  for (int32_t i = 0; !st && i < f->num_outputs; ++i) {
    if (given) {
      st = kc__check_given_output(&kctx, i, given[i]);
    } else if (kc__shape_known(out_shapes[i])) {
      kc_tensor* t = NULL;
      st = kc_tensor_create(alloc, out_shapes[i]->dims, out_shapes[i]->rank,
                            f->output_dtypes[i], kc__output_device(&kctx, i),
                            &t);
      if (!st) {
        owned[i] = t;
        outputs[i] = (DLTensor*)(uintptr_t)kc_tensor_get_dltensor(t);
      }
    }
  }
  if (!st) {
    st = e->kernel->compute(e->instance, &kctx);
    kc_status* recorded = __atomic_load_n(&kctx.status, __ATOMIC_ACQUIRE);
    if (st) {
      kc_status_destroy(recorded);
    } else {
      st = recorded;
    }
    for (int32_t i = 0; !st && i < f->num_outputs; ++i) {
      if (!outputs[i]) {
        st = kc_status_create(KC_INTERNAL,
                              "the kernel did not produce output %d (its "
                              "shape is not known before compute, so the "
                              "kernel must allocate it)",
                              i);
      }
    }
  }
  if (backend) {
    st = kc__device_finish(&kctx, wait, st);
  } else {
    while (kctx.temps) {
      kc__temp* t = kctx.temps;
      kctx.temps = t->next;
      kc_allocator_free(alloc, t->ptr, t->size, t->alignment);
      kc_allocator_free(alloc, t, sizeof *t, 0);
    }
  }
  kc__shape_ctx_free_all(&sctx);
  if (st && owned) {
    for (int32_t i = 0; i < f->num_outputs; ++i) {
      kc_object_release(KC_OBJECT(owned[i]));
      owned[i] = NULL;
    }
  }
  (void)op;
  return st;
}

kc_status* kc__op_check_live(const kc_op* op) {
  if (KC__LIKELY(!__atomic_load_n(&op->removed, __ATOMIC_ACQUIRE))) return NULL;
  return kc_status_create(KC_FAILED_PRECONDITION,
                          "op %s was removed by kc_op_registry_reset (its "
                          "kernels are released; register the op again and "
                          "look it up anew)",
                          KC__QS(op->def.name));
}

static kc_status* kc__call(const kc_op* op, const DLTensor* const* inputs,
                           int32_t num_inputs, const kc_op_attr* attrs,
                           int32_t num_attrs, const kc_op_call_options* options,
                           DLTensor* const* given, int32_t num_given,
                           kc_tensor** owned, int32_t max_owned,
                           int32_t* out_count) {
  kc__frame f;
  f.def = &op->def;
  kc_status* st = kc__op_check_live(op);
  if (KC__UNLIKELY(st != NULL)) return st;
  if (num_inputs < 0 || num_inputs > KC_OP_MAX_TENSORS ||
      (num_inputs && !inputs) || num_attrs < 0 || (num_attrs && !attrs)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "inputs (%d) or attrs (%d): a bad count or a NULL "
                            "array",
                            num_inputs, num_attrs);
  }
  st = kc__resolve(&f, inputs, num_inputs, attrs, num_attrs);
  if (!st && given && num_given != f.num_outputs) {
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "expected %d output tensor(s), got %d", f.num_outputs,
                          num_given);
  }
  if (!st && owned && max_owned < f.num_outputs) {
    st = kc_status_create(KC_OUT_OF_RANGE,
                          "the op produces %d output tensor(s); out_outputs "
                          "has room for %d",
                          f.num_outputs, max_owned);
  }
  kc__cache_entry* e = NULL;
  if (!st) st = kc__cache_get(op, &f, &e);
  if (!st && f.mixed_devices) st = kc__check_devices(&f, e, inputs);
  if (!st) st = kc__run(op, &f, e, inputs, options, given, owned);
  if (!st && out_count) *out_count = f.num_outputs;
  kc__frame_release(&f);
  return st;
}

static kc_status* kc__call_context(const kc_op* op, kc_status* st) {
  return kc_status_add_context(st, "calling op %s", KC__QS(op->def.name));
}

kc_status* kc_op_call(const kc_op* op, const DLTensor* const* inputs,
                      int32_t num_inputs, const kc_op_attr* attrs,
                      int32_t num_attrs, const kc_op_call_options* options,
                      kc_tensor** out_outputs, int32_t max_outputs,
                      int32_t* out_num_outputs) {
  if (KC__UNLIKELY(!op || !out_num_outputs || max_outputs < 0 ||
                   (max_outputs && !out_outputs))) {
    return kc_status_create(
        KC_INVALID_ARGUMENT, "kc_op_call: %s",
        !op ? "op is NULL" : "out_outputs/out_num_outputs are NULL");
  }
  *out_num_outputs = 0;
  kc_tensor* scratch[1];
  kc_tensor** owned = max_outputs ? out_outputs : scratch;
  kc_status* st = kc__call(op, inputs, num_inputs, attrs, num_attrs, options,
                           NULL, 0, owned, max_outputs, out_num_outputs);
  if (KC__UNLIKELY(st != NULL)) return kc__call_context(op, st);
  return NULL;
}

kc_status* kc_op_infer(const kc_op* op, const DLTensor* const* inputs,
                       int32_t num_inputs, const kc_op_attr* attrs,
                       int32_t num_attrs, kc_op_output_info* out_outputs,
                       int32_t max_outputs, int32_t* out_num_outputs) {
  if (KC__UNLIKELY(!op || !out_num_outputs || max_outputs < 0 ||
                   (max_outputs && !out_outputs))) {
    return kc_status_create(
        KC_INVALID_ARGUMENT, "kc_op_infer: %s",
        !op ? "op is NULL" : "out_outputs/out_num_outputs are NULL");
  }
  *out_num_outputs = 0;
  kc_status* live = kc__op_check_live(op);
  if (live) return kc__call_context(op, live);
  if (num_inputs < 0 || num_inputs > KC_OP_MAX_TENSORS ||
      (num_inputs && !inputs) || num_attrs < 0 || (num_attrs && !attrs)) {
    return kc__call_context(
        op, kc_status_create(KC_INVALID_ARGUMENT,
                             "inputs (%d) or attrs (%d): a bad count or a "
                             "NULL array",
                             num_inputs, num_attrs));
  }
  kc__frame f;
  f.def = &op->def;
  kc_status* st = kc__resolve(&f, inputs, num_inputs, attrs, num_attrs);
  if (!st && max_outputs < f.num_outputs) {
    st = kc_status_create(KC_OUT_OF_RANGE,
                          "the op produces %d output tensor(s); out_outputs "
                          "has room for %d",
                          f.num_outputs, max_outputs);
  }
  if (st) {
    kc__frame_release(&f);
    return kc__call_context(op, st);
  }
  const kc__op_schema* def = f.def;
  kc_op_attrs resolved = {def, f.values};
  kc_shape_handle in_shapes[KC_OP_MAX_TENSORS];
  const kc_shape_handle* out_shapes[KC_OP_MAX_TENSORS];
  for (int32_t i = 0; i < f.num_inputs; ++i) {
    in_shapes[i].rank = inputs[i]->ndim;
    in_shapes[i].dims = inputs[i]->shape;
  }
  for (int32_t i = 0; i < f.num_outputs; ++i) out_shapes[i] = NULL;
  uint64_t arena[64];
  kc_shape_ctx sctx = {def,         &resolved,        f.num_inputs,
                       f.num_outputs, in_shapes,      f.input_dtypes,
                       out_shapes,  f.output_dtypes, NULL,
                       (unsigned char*)arena, 0,      sizeof arena};
  if (def->shape_fn) {
    st = def->shape_fn(&sctx);
    if (st) st = kc_status_add_context(st, "in the shape function");
  }
  for (int32_t i = 0; !st && i < f.num_outputs; ++i) {
    kc_op_output_info* o = &out_outputs[i];
    o->dtype = f.output_dtypes[i];
    o->rank = out_shapes[i] ? out_shapes[i]->rank : KC_RANK_UNKNOWN;
    for (int32_t d = 0; d < o->rank; ++d) o->dims[d] = out_shapes[i]->dims[d];
  }
  if (!st) *out_num_outputs = f.num_outputs;
  kc__shape_ctx_free_all(&sctx);
  kc__frame_release(&f);
  return st ? kc__call_context(op, st) : NULL;
}

kc_status* kc_op_call_into(const kc_op* op, const DLTensor* const* inputs,
                           int32_t num_inputs, const kc_op_attr* attrs,
                           int32_t num_attrs, const kc_op_call_options* options,
                           DLTensor* const* outputs, int32_t num_outputs) {
  if (KC__UNLIKELY(!op || num_outputs < 0 || (num_outputs && !outputs))) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_op_call_into: %s",
                            !op ? "op is NULL" : "outputs is NULL");
  }
  static DLTensor* const none[1] = {NULL};
  kc_status* st =
      kc__call(op, inputs, num_inputs, attrs, num_attrs, options,
               num_outputs ? outputs : none, num_outputs, NULL, 0, NULL);
  if (KC__UNLIKELY(st != NULL)) return kc__call_context(op, st);
  return NULL;
}
