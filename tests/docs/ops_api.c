/* ops_api.c: the C code docs/ops.md shows, in a program the tests run
 * (tests/docs/CMakeLists.txt), and the errors the page quotes, as the
 * library words them. One mode a run, each in a fresh registry:
 *
 *   ops_api run       Concat and MatMul defined with the page's code, and
 *                     called; Add with the page's type constraint
 *   ops_api specs     malformed specs, refused when they are added
 *   ops_api words     refused type words: C's int and long, TensorFlow's
 *                     string
 *   ops_api register  definitions refused at registration
 *   ops_api select    a call that no kernel matches (with its code)
 *   ops_api calls     calls refused before a kernel runs
 *
 * Each message is printed on a line of its own; a status that should have
 * come and did not is an error (exit status 1).
 */
#include <stdio.h>
#include <string.h>

#include <kcall/kcall.h>

static int failures;

/* Prints st ("CODE: context: message", without the code unless asked)
 * and frees it; a missing status is a failure. */
static void print_status(const char* what, kc_status* st, bool with_code) {
  char text[1024];
  if (!st) {
    printf("ops_api: %s: no error\n", what);
    ++failures;
    return;
  }
  kc_status_format(st, text, sizeof text);
  const char* shown = text;
  if (!with_code) {
    const char* colon = strstr(text, ": ");
    if (colon) shown = colon + 2;
  }
  printf("%s\n", shown);
  kc_status_destroy(st);
}

/* Fails the program on an unexpected status. */
static bool ok(const char* what, kc_status* st) {
  if (!st) return true;
  char text[1024];
  kc_status_format(st, text, sizeof text);
  printf("ops_api: %s: %s\n", what, text);
  kc_status_destroy(st);
  ++failures;
  return false;
}

static void* tensor_data(const DLTensor* t) {
  return (char*)t->data + t->byte_offset;
}

static int64_t tensor_numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* ---- Concat(values: N * T) -> (output: T), along `axis` ------------------ */

static kc_status* concat_shape(kc_shape_ctx* ctx) {
  int64_t axis = 0;
  kc_status* st = kc_op_attrs_get_int(kc_shape_ctx_get_attrs(ctx), "axis", &axis);
  if (st) return st;
  const kc_shape_handle* first = kc_shape_ctx_get_input(ctx, 0);
  int32_t rank = kc_shape_handle_get_rank(first);
  if (axis < 0) axis += rank;
  if (rank < 1 || axis < 0 || axis >= rank) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "Concat: axis %lld is out of range for rank %d",
                            (long long)axis, (int)rank);
  }
  int64_t dims[KC_TENSOR_MAX_NDIM];
  for (int32_t d = 0; d < rank; ++d) dims[d] = kc_shape_handle_get_dim(first, d);
  for (int32_t i = 1; !st && i < kc_shape_ctx_get_input_count(ctx); ++i) {
    const kc_shape_handle* in = NULL;
    st = kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, i), rank, &in);
    for (int32_t d = 0; !st && d < rank; ++d) {
      int64_t dim = kc_shape_handle_get_dim(in, d);
      st = d == axis ? kc_shape_ctx_add_dims(ctx, dims[d], dim, &dims[d])
                     : kc_shape_ctx_merge_dim(ctx, dims[d], dim, &dims[d]);
    }
  }
  const kc_shape_handle* out = NULL;
  if (!st) st = kc_shape_ctx_make_shape(ctx, rank, dims, &out);
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, out);
  return st;
}

/* Copies each input's block of `axis` and the dims after it, in turn, for
 * every index of the dims before `axis`. */
static kc_status* concat_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  int64_t axis = 0;
  kc_status* st = kc_op_attrs_get_int(kc_kernel_ctx_get_attrs(ctx), "axis", &axis);
  if (st) return st;
  DLTensor* out = kc_kernel_ctx_get_output(ctx, 0);
  if (axis < 0) axis += out->ndim;
  size_t item = (size_t)(out->dtype.bits * out->dtype.lanes + 7) / 8;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out->shape[d];
  char* dst = tensor_data(out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int32_t i = 0; i < kc_kernel_ctx_get_input_count(ctx); ++i) {
      const DLTensor* in = kc_kernel_ctx_get_input(ctx, i);
      size_t block = item * (size_t)(outer ? tensor_numel(in) / outer : 0);
      memcpy(dst, (const char*)tensor_data(in) + (size_t)o * block, block);
      dst += block;
    }
  }
  return NULL;
}

static kc_status* define_concat(void) {
  kc_op_builder* b;
  kc_op_builder_create("Concat", &b);
  kc_op_builder_add_input(b, "values: N * T");
  kc_op_builder_add_output(b, "output: T");
  kc_op_builder_add_attr(b, "N: int >= 1");
  kc_op_builder_add_attr(b, "T: type");
  kc_op_builder_add_attr(b, "axis: int = 0");
  kc_op_builder_set_shape_fn(b, concat_shape);
  kc_op_registry_register(b, 0);           /* consumes the builder */

  kc_kernel_builder* kb;
  kc_kernel_builder_create("Concat", kDLCPU, NULL, concat_compute, NULL, &kb);
  kc_kernel_registry_register(kb);         /* consumes the builder */
  /* The page leaves the statuses out; the lookup says whether it worked. */
  const kc_op* op = NULL;
  return kc_op_registry_lookup(KC_SV_LIT("Concat"), &op);
}

/* ---- MatMul(a: T, b: T) -> (product: T) ------------------------------------ */

static kc_status* matmul_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle *a, *b, *out;
  int64_t k;
  kc_status* st = kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 0), 2, &a);
  if (!st) st = kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 1), 2, &b);
  if (!st) st = kc_shape_ctx_merge_dim(ctx, kc_shape_handle_get_dim(a, 1),
                                       kc_shape_handle_get_dim(b, 0), &k);
  if (!st) st = kc_shape_ctx_make_shape(
               ctx, 2, (int64_t[]){kc_shape_handle_get_dim(a, 0),
                                   kc_shape_handle_get_dim(b, 1)}, &out);
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, out);
  return st;
}

static kc_status* matmul_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* a = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* b = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* c = kc_kernel_ctx_get_output(ctx, 0);
  int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  const float* as = tensor_data(a);
  const float* bs = tensor_data(b);
  float* cs = tensor_data(c);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) sum += as[i * k + p] * bs[p * n + j];
      cs[i * n + j] = sum;
    }
  }
  return NULL;
}

static kc_status* define_matmul(void) {
  kc_op_builder* b = NULL;
  kc_kernel_builder* kb = NULL;
  static const DLDataType f32 = {kDLFloat, 32, 1};
  kc_status* st = kc_op_builder_create("MatMul", &b);
  if (st) return st;
  st = kc_op_builder_add_input(b, "a: T");
  if (!st) st = kc_op_builder_add_input(b, "b: T");
  if (!st) st = kc_op_builder_add_output(b, "product: T");
  if (!st) st = kc_op_builder_add_attr(b, "T: {f32}");
  if (!st) st = kc_op_builder_set_shape_fn(b, matmul_shape);
  if (st) {
    kc_op_builder_destroy(b);
    return st;
  }
  st = kc_op_registry_register(b, 0);
  if (!st) st = kc_kernel_builder_create("MatMul", kDLCPU, NULL, matmul_compute, NULL, &kb);
  if (!st) st = kc_kernel_builder_add_type_constraint(kb, "T", &f32, 1);
  if (st) {
    kc_kernel_builder_destroy(kb);
    return st;
  }
  return kc_kernel_registry_register(kb);
}

/* ---- Add(x: T, y: T) -> (z: T), same shapes -------------------------------- */

static kc_status* add_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* y = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* z = kc_kernel_ctx_get_output(ctx, 0);
  int64_t n = tensor_numel(z);
  if (tensor_numel(x) != n || tensor_numel(y) != n) {
    return kc_status_create(KC_UNIMPLEMENTED, "Add: this kernel does not "
                            "broadcast");
  }
  for (int64_t i = 0; i < n; ++i) {
    switch (z->dtype.code == kDLInt ? 0 : z->dtype.bits) {
      case 0:
        ((int32_t*)tensor_data(z))[i] = ((const int32_t*)tensor_data(x))[i] +
                                        ((const int32_t*)tensor_data(y))[i];
        break;
      case 32:
        ((float*)tensor_data(z))[i] = ((const float*)tensor_data(x))[i] +
                                      ((const float*)tensor_data(y))[i];
        break;
      default:
        ((double*)tensor_data(z))[i] = ((const double*)tensor_data(x))[i] +
                                       ((const double*)tensor_data(y))[i];
        break;
    }
  }
  return NULL;
}

/* Add for T in {f32, f64, i32}, without a kernel. */
static kc_status* define_add(void) {
  kc_op_builder* b = NULL;
  kc_status* st = kc_op_builder_create("Add", &b);
  if (st) return st;
  st = kc_op_builder_add_input(b, "x: T");
  if (!st) st = kc_op_builder_add_input(b, "y: T");
  if (!st) st = kc_op_builder_add_output(b, "z: T");
  if (!st) st = kc_op_builder_add_attr(b, "T: {f32, f64, i32}");
  if (!st) st = kc_op_builder_set_shape_fn(b, kc_shape_fn_unchanged);
  if (st) {
    kc_op_builder_destroy(b);
    return st;
  }
  return kc_op_registry_register(b, 0);
}

/* Add's kernel with the page's type constraint: f32, f64 and i32. */
static kc_status* define_add_kernel(void) {
  kc_kernel_builder* kb;
  kc_status* st = kc_kernel_builder_create("Add", kDLCPU, NULL, add_compute, NULL, &kb);
  if (st) return st;
  DLDataType types[3] = {{kDLFloat, 32, 1}, {kDLFloat, 64, 1}, {kDLInt, 32, 1}};
  kc_kernel_builder_add_type_constraint(kb, "T", types, 3);
  return kc_kernel_registry_register(kb);
}

/* Add's kernel for i32 and f32 only. */
static kc_status* define_add_kernel_i32_f32(void) {
  static const DLDataType types[2] = {{kDLInt, 32, 1}, {kDLFloat, 32, 1}};
  kc_kernel_builder* kb;
  kc_status* st = kc_kernel_builder_create("Add", kDLCPU, NULL, add_compute, NULL, &kb);
  if (!st) st = kc_kernel_builder_add_type_constraint(kb, "T", types, 2);
  if (st) {
    kc_kernel_builder_destroy(kb);
    return st;
  }
  return kc_kernel_registry_register(kb);
}

/* ---- calling ---------------------------------------------------------------- */

static DLTensor tensor(void* data, DLDataType dtype, int32_t ndim,
                       int64_t* shape) {
  DLTensor t = {data, {kDLCPU, 0}, ndim, dtype, shape, NULL, 0};
  return t;
}

/* Calls `name` and prints its one output as "name: dtype[dims]: values". */
static void call_and_print(const char* name, const DLTensor* const* inputs,
                           int32_t n, const kc_op_attr* attrs, int32_t na) {
  const kc_op* op = NULL;
  kc_tensor* out = NULL;
  int32_t count = 0;
  if (!ok(name, kc_op_registry_lookup(kc_sv(name), &op))) return;
  if (!ok(name, kc_op_call(op, inputs, n, attrs, na, NULL, &out, 1, &count))) {
    return;
  }
  const DLTensor* t = kc_tensor_get_dltensor(out);
  printf("%s:", name);
  for (int32_t d = 0; d < t->ndim; ++d) printf(" %lld", (long long)t->shape[d]);
  printf(" ->");
  for (int64_t i = 0; i < tensor_numel(t); ++i) {
    if (t->dtype.code == kDLInt) {
      printf(" %d", ((const int32_t*)tensor_data(t))[i]);
    } else if (t->dtype.bits == 64) {
      printf(" %g", ((const double*)tensor_data(t))[i]);
    } else {
      printf(" %g", (double)((const float*)tensor_data(t))[i]);
    }
  }
  printf("\n");
  kc_object_release(KC_OBJECT(out));
}

static const DLDataType kF32 = {kDLFloat, 32, 1};
static const DLDataType kF64 = {kDLFloat, 64, 1};
static const DLDataType kI32 = {kDLInt, 32, 1};

static void mode_run(void) {
  if (!ok("Concat", define_concat()) || !ok("MatMul", define_matmul()) ||
      !ok("Add", define_add()) || !ok("Add's kernel", define_add_kernel())) {
    return;
  }
  float a[2][1] = {{1}, {2}}, b[2][2] = {{3, 4}, {5, 6}};
  int64_t sa[2] = {2, 1}, sb[2] = {2, 2};
  DLTensor ta = tensor(a, kF32, 2, sa), tb = tensor(b, kF32, 2, sb);
  const DLTensor* concat_in[2] = {&ta, &tb};
  kc_op_attr axis = {KC_SV_LIT("axis"), kc_any_int(1)};
  call_and_print("Concat", concat_in, 2, &axis, 1);
  call_and_print("Concat", concat_in + 1, 1, NULL, 0);

  float m[2][3] = {{1, 2, 3}, {4, 5, 6}}, p[3][2] = {{1, 0}, {0, 1}, {1, 1}};
  int64_t sm[2] = {2, 3}, sp[2] = {3, 2};
  DLTensor tm = tensor(m, kF32, 2, sm), tp = tensor(p, kF32, 2, sp);
  const DLTensor* matmul_in[2] = {&tm, &tp};
  call_and_print("MatMul", matmul_in, 2, NULL, 0);

  double x[2] = {1.5, 2}, y[2] = {0.25, 8};
  int32_t i[2] = {7, -9}, j[2] = {3, 4};
  int64_t s2[1] = {2};
  DLTensor tx = tensor(x, kF64, 1, s2), ty = tensor(y, kF64, 1, s2);
  DLTensor ti = tensor(i, kI32, 1, s2), tj = tensor(j, kI32, 1, s2);
  const DLTensor* add_f64[2] = {&tx, &ty};
  const DLTensor* add_i32[2] = {&ti, &tj};
  call_and_print("Add", add_f64, 2, NULL, 0);
  call_and_print("Add", add_i32, 2, NULL, 0);
}

/* Adds `spec` to a fresh builder with `add` and prints the refusal. */
static void refused_spec(kc_status* (*add)(kc_op_builder*, const char*),
                         const char* spec) {
  kc_op_builder* b = NULL;
  if (!ok("builder", kc_op_builder_create("Op", &b))) return;
  print_status(spec, add(b, spec), false);
  kc_op_builder_destroy(b);
}

static void mode_specs(void) {
  refused_spec(kc_op_builder_add_attr, "x: itn");
  refused_spec(kc_op_builder_add_attr, "T: {f32, f65}");
  refused_spec(kc_op_builder_add_attr, "x: int >= 2 = 1");
  refused_spec(kc_op_builder_add_input, "x: N *");
}

/* Builds the op "Op" of `input` and the attrs, and prints the refusal of
 * its registration. */
static void refused_op(const char* input, const char* const* attrs) {
  kc_op_builder* b = NULL;
  if (!ok("builder", kc_op_builder_create("Op", &b))) return;
  kc_status* st = kc_op_builder_add_input(b, input);
  for (; !st && *attrs; ++attrs) st = kc_op_builder_add_attr(b, *attrs);
  if (!ok(input, st)) {
    kc_op_builder_destroy(b);
    return;
  }
  print_status(input, kc_op_registry_register(b, 0), false);
}

/* The type words the page says are refused: in an attr's type set, and in
 * an input's type (refused when the op registers). */
static void mode_words(void) {
  refused_spec(kc_op_builder_add_attr, "T: {int, i64}");
  refused_op("x: long", (const char* const[]){NULL});
  refused_spec(kc_op_builder_add_attr, "T: {float, string}");
}

static void mode_register(void) {
  refused_op("x: Q", (const char* const[]){NULL});
  refused_op("x: N * T", (const char* const[]){"N: float", "T: type", NULL});
}

static void mode_select(void) {
  if (!ok("Add", define_add()) ||
      !ok("Add's kernel", define_add_kernel_i32_f32())) {
    return;
  }
  const kc_op* op = NULL;
  kc_tensor* out = NULL;
  int32_t count = 0;
  double x[1] = {1};
  int64_t s1[1] = {1};
  DLTensor tx = tensor(x, kF64, 1, s1);
  const DLTensor* in[2] = {&tx, &tx};
  if (!ok("Add", kc_op_registry_lookup(KC_SV_LIT("Add"), &op))) return;
  print_status("Add of f64", kc_op_call(op, in, 2, NULL, 0, NULL, &out, 1, &count),
               true);
}

static void mode_calls(void) {
  kc_op_builder* b = NULL;
  if (!ok("Add", define_add()) ||
      !ok("Add's kernel", define_add_kernel_i32_f32()) ||
      !ok("Fill", kc_op_builder_create("Fill", &b))) {
    return;
  }
  kc_status* st = kc_op_builder_add_output(b, "y: f32");
  if (!st) st = kc_op_builder_add_attr(b, "offset: int");
  if (st) kc_op_builder_destroy(b);
  if (!ok("Fill", st ? st : kc_op_registry_register(b, 0))) return;

  const kc_op *add = NULL, *fill = NULL;
  kc_tensor* out = NULL;
  int32_t count = 0;
  float x[1] = {1};
  int32_t y[1] = {2};
  int64_t s1[1] = {1};
  DLTensor tx = tensor(x, kF32, 1, s1), ty = tensor(y, kI32, 1, s1);
  const DLTensor* in[2] = {&tx, &ty};
  if (!ok("Add", kc_op_registry_lookup(KC_SV_LIT("Add"), &add)) ||
      !ok("Fill", kc_op_registry_lookup(KC_SV_LIT("Fill"), &fill))) {
    return;
  }
  print_status("Add(f32, i32)", kc_op_call(add, in, 2, NULL, 0, NULL, &out, 1, &count),
               false);
  print_status("Fill()", kc_op_call(fill, NULL, 0, NULL, 0, NULL, &out, 1, &count),
               false);
  print_status("Add(f32)", kc_op_call(add, in, 1, NULL, 0, NULL, &out, 1, &count),
               false);
}

int main(int argc, char** argv) {
  static const struct {
    const char* name;
    void (*run)(void);
  } modes[] = {{"run", mode_run},       {"specs", mode_specs},
      {"words", mode_words},
               {"register", mode_register}, {"select", mode_select},
               {"calls", mode_calls}};
  for (size_t i = 0; argc == 2 && i < sizeof modes / sizeof modes[0]; ++i) {
    if (strcmp(argv[1], modes[i].name) == 0) {
      modes[i].run();
      kc_op_registry_reset();
      kc_kernel_registry_reset();
      kc_func_registry_reset();
      return failures ? 1 : 0;
    }
  }
  fprintf(stderr, "usage: ops_api run|specs|words|register|select|calls\n");
  return 2;
}
