/* Allocation failures along whole paths. The library's own allocations
 * come from the internal allocator (kc_allocator_set_internal), here one
 * that fails the n-th of them, for n = 0, s, 2s, ... until a run fails
 * none: each run must end in OK or RESOURCE_EXHAUSTED,
 * release everything it made (live blocks back where they were), leave
 * the registries as they were, and the run after it, with memory, must
 * succeed. Paths: a plugin loaded, its op called and the plugin unloaded;
 * real model programs read from their files, parsed, compiled and run (a
 * CNN, a transformer block, a scan's while loop, a sort; a CNN training
 * step and a scan read as StableHLO); a program
 * calling a plugin's XLA FFI handlers; a .npy file read; a gradient op
 * made from its declaration.
 *
 * The stride s is KCALL_FAULT_STRIDE when set (`make faults` sets 1), else
 * 1 (every allocation) for a path that makes up to 5,000 of them, which
 * each of these does (a sweep takes well under a second), and spaced to
 * 5,000 points above. Each sweep prints how many allocations one run
 * makes and how many points it failed. KCALL_FAULT_AT=n runs point n
 * alone and prints its status (with a debugger or valgrind, to find a
 * leak). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kt_ops.h"
#include "kt_xla_ffi.h"

#define KT_FIXTURE(name) KC_FIXTURE_DIR "/kt_plugin_" name ".so"

/* The internal allocator of these tests: a counting allocator (for the
 * live blocks) behind one that fails the n-th allocation it is asked for,
 * once (a growing realloc counts; the run's later allocations succeed, so
 * that what cleans up after the failure, an unload, has memory). One for
 * the process, never destroyed: blocks it gave may outlive a test (a
 * registry's table), and must go back to it. */
typedef struct kt_fault_allocator {
  kc_allocator base;
  kc_counting_allocator* counter;
  int64_t countdown; /* allocations to let through; < 0: never fail */
  int64_t failed;
} kt_fault_allocator;

static void* kt_fault_fn(void* self, void* ptr, size_t old_size,
                         size_t new_size, size_t alignment) {
  kt_fault_allocator* f = self;
  if (new_size > 0 && (!ptr || new_size > old_size) &&
      __atomic_fetch_sub(&f->countdown, 1, __ATOMIC_SEQ_CST) == 0) {
    __atomic_fetch_add(&f->failed, 1, __ATOMIC_SEQ_CST);
    return NULL;
  }
  const kc_allocator* a = kc_counting_allocator_get_allocator(f->counter);
  return a->fn(a->self, ptr, old_size, new_size, alignment);
}

static kt_fault_allocator* kt_fault(void) {
  static kt_fault_allocator f = {{&f, kt_fault_fn}, NULL, -1, 0};
  if (!f.counter) KC_CHECK_OK(kc_counting_allocator_create(&f.counter));
  return &f;
}

/* Fails the n-th allocation from now (n >= 0), or none (n < 0). */
static void kt_fault_at(int64_t n) {
  __atomic_store_n(&kt_fault()->countdown, n < 0 ? INT64_MIN : n,
                   __ATOMIC_SEQ_CST);
}

static int64_t kt_fault_failed(void) {
  return __atomic_load_n(&kt_fault()->failed, __ATOMIC_SEQ_CST);
}

static kc_alloc_stats kt_fault_stats(void) {
  kc_alloc_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  kc_counting_allocator_query(kt_fault()->counter, &s);
  return s;
}

/* A path: runs once, releasing all it made, and returns its status. */
typedef kc_status* (*kt_fault_path)(void* ctx);

/* The names of the registries' entries, as one string, to compare. */
static void kt_registry_text(char* buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  kc_array* ops = NULL;
  KC_CHECK_OK(kc_op_registry_list(kt_alloc(), kc_sv(""), &ops));
  for (size_t i = 0; i < kc_array_get_size(ops); ++i) {
    kc_string_view name = {0};
    KC_CHECK(kc_any_get_string(kc_array_get_item(ops, i), &name));
    len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%.*s,",
                            (int)name.size, name.data);
  }
  kc_object_release(KC_OBJECT(ops));
  kc_array* funcs = NULL;
  KC_CHECK_OK(kc_func_registry_list(kt_alloc(), kc_sv(""), &funcs));
  len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "| %zu funcs",
                          kc_array_get_size(funcs));
  kc_object_release(KC_OBJECT(funcs));
}

static void kt_fault_sweep(const char* what, kt_fault_path path, void* ctx) {
  kt_fault_at(-1);
  const kc_allocator* before = kc_allocator_set_internal(&kt_fault()->base);
  /* Twice with memory: what a first run makes once and keeps (a thread
   * pool, a lazily built table) is part of the baseline. */
  KC_CHECK_OK(path(ctx));
  KC_CHECK_OK(path(ctx));
  char registries[4096], after[4096];
  kt_registry_text(registries, sizeof registries);
  kc_alloc_stats s = kt_fault_stats();
  int64_t baseline = s.live_blocks;
  int64_t start = s.total_allocs;
  KC_CHECK_OK(path(ctx));
  int64_t per_run = kt_fault_stats().total_allocs - start;
  KC_CHECK_INT(kt_fault_stats().live_blocks, baseline);
  int64_t stride = per_run / 5000 + 1;
  const char* env = getenv("KCALL_FAULT_STRIDE");
  if (env && atoll(env) > 0) stride = atoll(env);
  int64_t points = 0, refused = 0;
  /* KCALL_FAULT_AT=n runs that point alone, saying what it returned: to
   * look at one with a debugger or valgrind. */
  const char* at = getenv("KCALL_FAULT_AT");
  for (int64_t n = at ? atoll(at) : 0;; n += stride) {
    int64_t failed_before = kt_fault_failed();
    kt_fault_at(n);
    kc_status* st = path(ctx);
    kt_fault_at(-1);
    bool failed = kt_fault_failed() > failed_before;
    if (at) {
      char buf[512];
      printf("%s: failing allocation %lld: %s; %lld blocks live, %lld "
             "before\n",
             what, (long long)n, kt_status_text(st, buf, sizeof buf),
             (long long)kt_fault_stats().live_blocks, (long long)baseline);
      kc_status_destroy(st);
      kc_allocator_set_internal(before);
      return;
    }
    if (st) {
      char buf[512];
      if (kc_status_get_code(st) != KC_RESOURCE_EXHAUSTED) {
        kt__fail(__FILE__, __LINE__, "%s: failing allocation %lld: %s", what,
                 (long long)n, kt_status_text(st, buf, sizeof buf));
      }
      kc_status_destroy(st);
      refused++;
    }
    if (kt_fault_stats().live_blocks != baseline) {
      kt__fail(__FILE__, __LINE__,
               "%s: failing allocation %lld: %lld blocks live after the run, "
               "%lld before",
               what, (long long)n, (long long)kt_fault_stats().live_blocks,
               (long long)baseline);
    }
    kt_registry_text(after, sizeof after);
    if (strcmp(after, registries) != 0) {
      kt__fail(__FILE__, __LINE__,
               "%s: failing allocation %lld left the registries as '%s', "
               "not '%s'",
               what, (long long)n, after, registries);
    }
    if (!failed) break;
    points++;
    /* The next run, with memory, succeeds. */
    if (n % (stride * 16) == 0) KC_CHECK_OK(path(ctx));
  }
  KC_CHECK_OK(path(ctx));
  KC_CHECK(refused > 0);
  kc_allocator_set_internal(before);
  printf("%s: %lld allocations a run; %lld failure points swept (stride "
         "%lld), %lld refused with RESOURCE_EXHAUSTED\n",
         what, (long long)per_run, (long long)points, (long long)stride,
         (long long)refused);
}

/* ---- a plugin, its op, unloaded ------------------------------------------ */

/* kt_plugin_unload.so (a plugin that opts in to unloading): loaded, its
 * op kt_unload.Double called twice (the second call through the op's
 * memo) and its function kt_unload.add once, unloaded. */
static kc_status* kt_plugin_path(void* ctx) {
  (void)ctx;
  kc_plugin* p = NULL;
  KC_RETURN_IF_ERROR(kc_plugin_load(KT_FIXTURE("unload"), &p));
  const kc_op* op = NULL;
  kc_status* st = kc_op_registry_lookup(KC_SV_LIT("kt_unload.Double"), &op);
  kc_tensor* in = NULL;
  const float v[4] = {1, 2, 3, 4};
  if (!st) {
    st = kc_tensor_create(kc_allocator_system(), (int64_t[]){2, 2}, 2,
                          kc_dtype_make(kDLFloat, 32, 1), kc_device_cpu(), &in);
  }
  if (!st) memcpy(kc_tensor_get_dltensor(in)->data, v, sizeof v);
  kc_tensor* out = NULL;
  int32_t n = 0;
  if (!st) {
    const DLTensor* x = kc_tensor_get_dltensor(in);
    st = kc_op_call(op, &x, 1, NULL, 0, NULL, &out, 1, &n);
  }
  if (!st && ((float*)kc_tensor_get_dltensor(out)->data)[3] != 8.0f) {
    st = kc_status_create(KC_INTERNAL, "kt_unload.Double computed a wrong "
                          "value");
  }
  /* Again: through the op's memo of the first call. */
  kc_object_release(KC_OBJECT(out));
  out = NULL;
  if (!st) {
    const DLTensor* x = kc_tensor_get_dltensor(in);
    st = kc_op_call(op, &x, 1, NULL, 0, NULL, &out, 1, &n);
  }
  kc_func* add = NULL;
  if (!st) st = kc_func_registry_lookup(KC_SV_LIT("kt_unload.add"), &add);
  kc_any args[2] = {kc_any_int(2), kc_any_int(3)};
  kc_any ret = kc_any_none();
  if (!st) st = kc_func_call(add, args, 2, &ret);
  kc_any_release(&ret);
  kc_object_release(KC_OBJECT(out));
  kc_object_release(KC_OBJECT(in));
  kc_status* unload = kc_plugin_unload(p);
  if (unload && kc_status_get_code(unload) == KC_RESOURCE_EXHAUSTED) {
    /* Out of memory, the unload changed nothing (kcall/plugin.h): again,
     * as its caller would, now that memory is back. */
    if (!st) st = unload;
    else kc_status_destroy(unload);
    unload = kc_plugin_unload(p);
  }
  if (!st) return unload;
  kc_status_destroy(unload);
  return st;
}

KC_TEST(faults_plugin_load_op_calls_unload) {
  kt_fault_sweep("plugin load, op calls, unload", kt_plugin_path, NULL);
}

/* ---- model programs ---------------------------------------------------- */

/* A program: its file (read by kc_program_parse_file, inside the sweep),
 * or its text. */
typedef struct kt_model {
  const char* path;
  const char* text;
  const kc_parse_options* options; /* NULL: none */
} kt_model;

/* Parses, compiles and runs the program on zeros. */
static kc_status* kt_model_path(void* ctx) {
  const kt_model* m = ctx;
  kc_program* p = NULL;
  KC_RETURN_IF_ERROR(m->path ? kc_program_parse_file_with(m->path, m->options, &p)
                             : kc_program_parse_with(kc_sv(m->text), m->options, &p));
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, NULL, &exe);
  kc_executable_info info = {.struct_size = sizeof info};
  if (!st) kc_executable_query(exe, &info);
  kc_tensor* ins[32] = {0};
  const DLTensor* dl[32] = {0};
  kc_tensor* outs[32] = {0};
  if (!st && (info.num_inputs > 32 || info.num_outputs > 32)) {
    st = kc_status_create(KC_INTERNAL, "more than 32 inputs or outputs");
  }
  for (size_t i = 0; !st && i < info.num_inputs; ++i) {
    const kc_shape* shape = kc_executable_get_input_shape(exe, i);
    st = kc_tensor_create(kc_allocator_system(), kc_shape_get_dims(shape),
                          kc_shape_get_rank(shape), kc_shape_get_dtype(shape),
                          kc_device_cpu(), &ins[i]);
    if (!st) {
      dl[i] = kc_tensor_get_dltensor(ins[i]);
      memset(dl[i]->data, 0, kc_shape_get_byte_size(shape));
    }
  }
  if (!st) st = kc_executable_execute(exe, dl, info.num_inputs, NULL, outs);
  for (size_t i = 0; i < 32; ++i) {
    kc_object_release(KC_OBJECT(ins[i]));
    kc_object_release(KC_OBJECT(outs[i]));
  }
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  return st;
}

/* The program `name` of tests/fixtures/hlo_jax from its file `file`
 * (lowered.hlo, stablehlo.mlir). */
static void kt_model_sweep_file(const char* name, const char* file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/%s", KT_HLO_JAX_DIR, name, file);
  kt_model m = {path, NULL, NULL};
  char what[128];
  snprintf(what, sizeof what, "program %s: read, parse, compile, execute", name);
  kt_fault_sweep(what, kt_model_path, &m);
}

static void kt_model_sweep(const char* name) { kt_model_sweep_file(name, "lowered.hlo"); }

KC_TEST(faults_program_cnn) { kt_model_sweep("cnn"); }
KC_TEST(faults_program_transformer) { kt_model_sweep("transformer"); }
KC_TEST(faults_program_scan_while_loop) { kt_model_sweep("scan"); }
KC_TEST(faults_program_sort) { kt_model_sweep("sort"); }

/* The StableHLO reader: a CNN's training step (functions called, a
 * reduce-window, a select-and-scatter and their regions) and a scan (a
 * while whose regions capture values and call functions). */
KC_TEST(faults_stablehlo_cnn_train_step) { kt_model_sweep_file("cnn_train_step", "stablehlo.mlir"); }
KC_TEST(faults_stablehlo_scan) { kt_model_sweep_file("scan", "stablehlo.mlir"); }

/* A shape-polymorphic transformer block refined for a batch of 5: the
 * evaluation of its shape arithmetic and the refined types. */
KC_TEST(faults_stablehlo_shape_polymorphic) {
  const int64_t dims[3] = {5, 6, 16};
  kc_shape* shape = NULL;
  KC_CHECK_OK(kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), dims, 3, &shape));
  const kc_shape* shapes[1] = {shape};
  kc_parse_options o = {.struct_size = sizeof o, .parameter_shapes = shapes,
                        .num_parameter_shapes = 1};
  char path[1024];
  snprintf(path, sizeof path, "%s/../shape_poly/transformer/module.mlir", KT_HLO_JAX_DIR);
  kt_model m = {path, NULL, &o};
  kt_fault_sweep("shape-polymorphic transformer block: parse for batch 5, compile, execute",
                 kt_model_path, &m);
  kc_shape_destroy(shape);
}

/* Serialized jax.export files: the flatbuffer read, the platform index
 * bound (mlp for cpu and cuda), and the parameters' shapes made from the
 * input avals and a dimension variable (stack_batch, b = 3). */
KC_TEST(faults_stablehlo_serialized_export) {
  char path[1024];
  snprintf(path, sizeof path, "%s/../stablehlo_bytecode/mlp_cpu_cuda.jax_exported",
           KT_HLO_JAX_DIR);
  kt_model m = {path, NULL, NULL};
  kt_fault_sweep("serialized export for two platforms: parse, compile, execute", kt_model_path,
                 &m);
  const char* names[1] = {"b"};
  const int64_t values[1] = {3};
  kc_parse_options o = {.struct_size = sizeof o, .dim_names = names, .dim_values = values,
                        .num_dims = 1};
  snprintf(path, sizeof path, "%s/../stablehlo_bytecode/stack_batch.jax_exported",
           KT_HLO_JAX_DIR);
  kt_model sized = {path, NULL, &o};
  kt_fault_sweep("serialized export sized by a dimension variable: parse, compile, execute",
                 kt_model_path, &sized);
}

/* The StableHLO types held in bytes and the ops built from instructions:
 * the int4 and f8 exports (narrow wraps, f8 tables, decoding, encoding),
 * and a module with chlo.scan, chlo.ragged_dot, an i1 bitcast and a dot
 * algorithm. */
static const char kKtStablehloDecomposed[] =
    "func.func @main(%x: tensor<4x3xf32>, %w: tensor<2x3x2xf32>, %g: tensor<2xi32>) -> "
    "(tensor<4x3xf32>, tensor<4x2xf32>, tensor<4x3x32xi1>, tensor<4x2xf32>) {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<3xf32>\n"
    "  %0:2 = chlo.scan(%x) inits(%z) dimension=0 {\n"
    "  ^bb0(%e: tensor<3xf32>, %s: tensor<3xf32>):\n"
    "    %t = stablehlo.add %s, %e : tensor<3xf32>\n"
    "    stablehlo.return %t, %t : tensor<3xf32>, tensor<3xf32>\n"
    "  } : (tensor<4x3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)\n"
    "  %1 = \"chlo.ragged_dot\"(%x, %w, %g) {ragged_dot_dimension_numbers = "
    "#chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
    "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], "
    "lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<4x3xf32>, "
    "tensor<2x3x2xf32>, tensor<2xi32>) -> tensor<4x2xf32>\n"
    "  %2 = stablehlo.bitcast_convert %x : (tensor<4x3xf32>) -> tensor<4x3x32xi1>\n"
    "  %v = stablehlo.slice %w [0:1, 0:3, 0:2] : (tensor<2x3x2xf32>) -> tensor<1x3x2xf32>\n"
    "  %u = stablehlo.reshape %v : (tensor<1x3x2xf32>) -> tensor<3x2xf32>\n"
    "  %3 = stablehlo.dot_general %x, %u, contracting_dims = [1] x [0], algorithm = "
    "<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, "
    "lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, "
    "allow_imprecise_accumulation = false> : (tensor<4x3xf32>, tensor<3x2xf32>) -> "
    "tensor<4x2xf32>\n"
    "  return %0#0, %1, %2, %3 : tensor<4x3xf32>, tensor<4x2xf32>, tensor<4x3x32xi1>, "
    "tensor<4x2xf32>\n}\n";

KC_TEST(faults_stablehlo_narrow_types_and_decompositions) {
  static const char* const files[2] = {"int4.jax_exported", "float8.bc"};
  for (int k = 0; k < 2; ++k) {
    char path[1024], what[128];
    snprintf(path, sizeof path, "%s/../stablehlo_bytecode/%s", KT_HLO_JAX_DIR, files[k]);
    kt_model m = {path, NULL, NULL};
    snprintf(what, sizeof what, "%s: parse, compile, execute", files[k]);
    kt_fault_sweep(what, kt_model_path, &m);
  }
  kt_model m = {NULL, kKtStablehloDecomposed, NULL};
  kt_fault_sweep("chlo.scan, chlo.ragged_dot, an i1 bitcast, a dot algorithm", kt_model_path, &m);
}

/* HLO text's instructions built from others (parse_expand.c): map, mulhi,
 * ragged-dot, scan and a complex maximum and atan2. */
static const char kKtHloExpanded[] =
    "HloModule m\n"
    "f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n two = f32[] constant(2)\n"
    " m = f32[] multiply(a, two)\n ROOT s = f32[] add(m, b)\n}\n"
    "body {\n x = f32[3] parameter(0)\n c = f32[3] parameter(1)\n s = f32[3] add(x, c)\n"
    " ROOT t = (f32[3], f32[3]) tuple(s, s)\n}\n"
    "ENTRY e {\n x = f32[4,3] parameter(0)\n w = f32[2,3,2] parameter(1)\n"
    " g = s32[2] parameter(2)\n i = s32[4] parameter(3)\n z = c64[4] parameter(4)\n"
    " mp = f32[4,3] map(x, x), dimensions={0,1}, to_apply=f\n"
    " mh = s32[4] mulhi(i, i)\n"
    " rd = f32[4,2] ragged-dot(x, w, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
    "lhs_ragged_dims={0}, rhs_group_dims={0}\n"
    " c0 = f32[3] constant({0, 0, 0})\n"
    " sc = (f32[4,3], f32[3]) scan(x, c0), dimensions={0}, num_carries=1, to_apply=body\n"
    " mx = c64[4] maximum(z, z)\n at = c64[4] atan2(z, mx)\n"
    " ROOT r = (f32[4,3], s32[4], f32[4,2], (f32[4,3], f32[3]), c64[4]) "
    "tuple(mp, mh, rd, sc, at)\n}\n";

/* s4 in HLO text (parse_narrow.c): a parameter read by its low bits, a
 * float conversion clamped, a masked shift, a reducer that wraps. */
static const char kKtHloNarrow[] =
    "HloModule m\n"
    "add {\n a = s4[] parameter(0)\n b = s4[] parameter(1)\n ROOT s = s4[] add(a, b)\n}\n"
    "ENTRY e {\n x = s4[8] parameter(0)\n f = f32[8] parameter(1)\n"
    " c = s4[8] convert(f)\n s = s4[8] shift-right-logical(x, c)\n"
    " z = s4[] constant(0)\n r = s4[] reduce(s, z), dimensions={0}, to_apply=add\n"
    " h = f8e4m3fn[8] convert(f)\n hs = f8e4m3fn[8] add(h, h)\n"
    " hf = f32[8] convert(hs)\n"
    " ROOT t = (s4[8], s4[], f32[8]) tuple(s, r, hf)\n}\n";

/* Uniform quantized types (stablehlo/quant.c): per-axis dequantize,
 * requantize, and an add computed as dequantize_op_quantize. */
static const char kKtStablehloQuant[] =
    "func.func @main(%p: tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:-4}>>) -> "
    "(tensor<2x2xf32>, tensor<2x2xi8>) {\n"
    "  %d = stablehlo.uniform_dequantize %p : (tensor<2x2x!quant.uniform<i8:f32:1, "
    "{0.5:0, 0.25:-4}>>) -> tensor<2x2xf32>\n"
    "  %r = stablehlo.uniform_quantize %p : (tensor<2x2x!quant.uniform<i8:f32:1, "
    "{0.5:0, 0.25:-4}>>) -> tensor<2x2x!quant.uniform<i8:f32, 0.1:1>>\n"
    "  %a = stablehlo.add %r, %r : (tensor<2x2x!quant.uniform<i8:f32, 0.1:1>>, "
    "tensor<2x2x!quant.uniform<i8:f32, 0.1:1>>) -> tensor<2x2x!quant.uniform<i8:f32, 0.2:0>>\n"
    "  %b = stablehlo.bitcast_convert %a : (tensor<2x2x!quant.uniform<i8:f32, 0.2:0>>) -> "
    "tensor<2x2xi8>\n"
    "  return %d, %b : tensor<2x2xf32>, tensor<2x2xi8>\n}\n";

KC_TEST(faults_hlo_expanded_instructions) {
  kt_model m = {NULL, kKtHloExpanded, NULL};
  kt_fault_sweep("map, mulhi, ragged-dot, scan, complex maximum and atan2", kt_model_path, &m);
  kt_model narrow = {NULL, kKtHloNarrow, NULL};
  kt_fault_sweep("s4 and f8e4m3fn: parameter, convert, shift, reduce, add", kt_model_path,
                 &narrow);
  kt_model quant = {NULL, kKtStablehloQuant, NULL};
  kt_fault_sweep("quantized: per-axis dequantize, requantize, add", kt_model_path, &quant);
}

/* XLA FFI handlers a plugin registered, called from a program: the
 * adapter's call frames, attributes and buffers. */
KC_TEST(faults_program_xla_ffi_handlers) {
  kc_plugin* plugin = NULL;
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("xla_ffi"), &plugin));
  kt_model m = {NULL, KT_XLA_PLUGIN_CHAIN_HLO, NULL};
  kt_fault_sweep("program calling XLA FFI handlers", kt_model_path, &m);
}

/* ---- smaller paths ------------------------------------------------------- */

/* A .npy file read back (kc_tensor_read_npy). */
static kc_status* kt_npy_path(void* ctx) {
  kc_tensor* t = NULL;
  KC_RETURN_IF_ERROR(kc_tensor_read_npy(ctx, kc_allocator_system(), &t));
  kc_object_release(KC_OBJECT(t));
  return NULL;
}

KC_TEST(faults_npy_read) {
  char path[] = "/tmp/kt_faults_XXXXXX";
  int fd = mkstemp(path);
  KC_CHECK(fd >= 0);
  close(fd);
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(kc_allocator_system(), (int64_t[]){2, 3}, 2,
                               kc_dtype_make(kDLFloat, 32, 1), kc_device_cpu(), &t));
  memset(kc_tensor_get_dltensor(t)->data, 0, 6 * sizeof(float));
  KC_CHECK_OK(kc_tensor_write_npy(path, kc_tensor_get_dltensor(t)));
  kc_object_release(KC_OBJECT(t));
  kt_fault_sweep("read a .npy file", kt_npy_path, path);
  remove(path);
}

/* The gradient op made from a declaration (kc_op_builder_create_gradient),
 * dropped unregistered. */
static kc_status* kt_gradient_op_path(void* ctx) {
  kc_op_builder* b = NULL;
  KC_RETURN_IF_ERROR(kc_op_builder_create_gradient(ctx, &b));
  kc_op_builder_destroy(b);
  return NULL;
}

KC_TEST(faults_gradient_op_from_a_declaration) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt_faults.Norm", &b));
  kc_op_builder_add_input_v2(b, "x: T");
  kc_op_builder_add_input_v2(b, "w: T");
  kc_op_builder_add_output_v2(b, "y: T");
  kc_op_builder_add_attr_v2(b, "T: {f32, f64}");
  kc_op_builder_add_attr_v2(b, "eps: float = 1e-6");
  kc_op_builder_set_gradient(b, "kt_faults.NormGrad(x, w, grad(y)) -> (grad(x), grad(w))");
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  kt_fault_sweep("a gradient op from its declaration", kt_gradient_op_path,
                 (void*)"kt_faults.Norm");
  kc_op_registry_reset();
}
