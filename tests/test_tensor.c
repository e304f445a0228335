/* Tests of kcall/tensor.h: creation, DLPack exchange, strided views. */
#include <stdlib.h>
#include <string.h>

#include "test.h"

static DLDataType kt_f32(void) { return kc_dtype_make(kDLFloat, 32, 1); }

static kc_tensor* kt_make(const int64_t* shape, int32_t ndim) {
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, ndim, kt_f32(),
                               kc_device_cpu(), &t));
  return t;
}

static int64_t kt_refs(const void* obj) {
  return kc_object_get_ref_count((const kc_object*)obj);
}

/* Address of element `idx` of a float tensor, honouring strides (NULL:
 * row-major) and byte_offset. */
static float* kt_at(const DLTensor* t, const int64_t* idx) {
  int64_t offset = 0, stride = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    int64_t s = t->strides ? t->strides[d] : stride;
    offset += idx[d] * s;
    stride *= t->shape[d];
  }
  return (float*)(void*)((char*)t->data + t->byte_offset) + offset;
}

/* A float tensor of `shape` whose element i (row-major) holds i. */
static kc_tensor* kt_make_iota(const int64_t* shape, int32_t ndim) {
  kc_tensor* t = kt_make(shape, ndim);
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  int64_t n = kc_dltensor_get_numel(dl);
  float* data = (float*)(void*)((char*)dl->data + dl->byte_offset);
  for (int64_t i = 0; i < n; ++i) data[i] = (float)i;
  return t;
}

KC_TEST(tensor_create_rank0) {
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), NULL, 0, kt_f32(), kc_device_cpu(), &t));
  KC_CHECK_INT(KC_OBJECT(t)->type_index, KC_TYPE_TENSOR);
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  KC_CHECK_INT(dl->ndim, 0);
  KC_CHECK_INT(kc_dltensor_get_numel(dl), 1);
  KC_CHECK(dl->data != NULL);
  KC_CHECK((uintptr_t)dl->data % KC_TENSOR_ALIGNMENT == 0);
  *(float*)dl->data = 1.5f;
  KC_CHECK(kc_dltensor_is_compact(dl));
  kc_object_release(KC_OBJECT(t));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_create_rank3) {
  int64_t shape[] = {2, 3, 4};
  kc_tensor* t = kt_make(shape, 3);
  shape[0] = 100; /* the tensor keeps its own shape */
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  KC_CHECK_INT(dl->ndim, 3);
  KC_CHECK(dl->shape != NULL && dl->shape != shape);
  KC_CHECK(dl->shape[0] == 2 && dl->shape[1] == 3 && dl->shape[2] == 4);
  KC_CHECK(dl->strides == NULL);
  KC_CHECK_INT(dl->byte_offset, 0);
  KC_CHECK(kc_dtype_equal(dl->dtype, kt_f32()));
  KC_CHECK(dl->device.device_type == kDLCPU && dl->device.device_id == 0);
  KC_CHECK_INT(kc_dltensor_get_numel(dl), 24);
  KC_CHECK((uintptr_t)dl->data % KC_TENSOR_ALIGNMENT == 0);
  memset(dl->data, 0x11, 24 * sizeof(float)); /* all of it is ours */
  KC_CHECK(kc_dltensor_is_compact(dl));
  KC_CHECK((kc_tensor_get_flags(t) & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
  kc_object_release(KC_OBJECT(t));
}

KC_TEST(tensor_create_max_rank_and_vector_dtype) {
  int64_t shape[KC_TENSOR_MAX_NDIM];
  for (int i = 0; i < KC_TENSOR_MAX_NDIM; ++i) shape[i] = 1;
  shape[5] = 3;
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, KC_TENSOR_MAX_NDIM,
                               kc_dtype_make(kDLFloat, 32, 4), kc_device_cpu(), &t));
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  KC_CHECK_INT(dl->ndim, KC_TENSOR_MAX_NDIM);
  KC_CHECK_INT(kc_dltensor_get_numel(dl), 3);
  memset(dl->data, 0, 3 * 16);
  kc_object_release(KC_OBJECT(t));
}

KC_TEST(tensor_create_zero_size) {
  const int64_t shape[] = {3, 0, 2};
  kc_tensor* t = kt_make(shape, 3);
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  KC_CHECK_INT(kc_dltensor_get_numel(dl), 0);
  KC_CHECK(dl->shape[1] == 0);
  kc_object_release(KC_OBJECT(t));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_create_refuses_bad_shapes) {
  kc_tensor* t = NULL;
  const int64_t negative[] = {1, 1, 1, -7};
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), negative, 4, kt_f32(),
                                 kc_device_cpu(), &t),
                KC_INVALID_ARGUMENT, "3", "-7");
  KC_CHECK(t == NULL);
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), NULL, 2, kt_f32(), kc_device_cpu(), &t),
                KC_INVALID_ARGUMENT, "");
  int64_t big[KC_TENSOR_MAX_NDIM + 1];
  for (int i = 0; i <= KC_TENSOR_MAX_NDIM; ++i) big[i] = 1;
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), big, KC_TENSOR_MAX_NDIM + 1,
                                 kt_f32(), kc_device_cpu(), &t),
                KC_INVALID_ARGUMENT, "33");
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), big, -1, kt_f32(), kc_device_cpu(), &t),
                KC_INVALID_ARGUMENT, "");
  const int64_t shape[] = {2};
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), shape, 1, kc_dtype_make(kDLFloat, 0, 1),
                                 kc_device_cpu(), &t),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), shape, 1, kc_dtype_make(kDLFloat, 32, 0),
                                 kc_device_cpu(), &t),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), shape, 1, kt_f32(), kc_device_cpu(),
                                 NULL),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK(t == NULL);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_create_refuses_overflow) {
  kc_tensor* t = NULL;
  const int64_t numel_overflow[] = {INT64_C(1) << 40, INT64_C(1) << 40};
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), numel_overflow, 2, kt_f32(),
                                 kc_device_cpu(), &t),
                KC_OUT_OF_RANGE, "");
  const int64_t max_dims[] = {INT64_MAX, 2};
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), max_dims, 2, kt_f32(),
                                 kc_device_cpu(), &t),
                KC_OUT_OF_RANGE, "");
  /* The count fits in int64 but its bytes do not. */
  const int64_t bytes_overflow[] = {INT64_C(1) << 62};
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), bytes_overflow, 1,
                                 kc_dtype_make(kDLFloat, 64, 1), kc_device_cpu(), &t),
                KC_OUT_OF_RANGE, "");
  /* A zero dim makes the rest harmless only if nothing overflows on the
   * way; either answer is fine, but it must not crash or leak. */
  const int64_t zero_first[] = {0, INT64_MAX, INT64_MAX};
  kc_status* st = kc_tensor_create(kt_alloc(), zero_first, 3, kt_f32(),
                                   kc_device_cpu(), &t);
  KC_CHECK(st == NULL || kc_status_get_code(st) == KC_OUT_OF_RANGE);
  kc_status_destroy(st);
  kc_object_release(KC_OBJECT(t));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

/* Devices without a backend; CUDA is tested in test_device.c. */
KC_TEST(tensor_create_non_cpu_unimplemented) {
  const int64_t shape[] = {4};
  DLDevice vulkan = {kDLVulkan, 0};
  kc_tensor* t = NULL;
  KC_CHECK_CODE(kc_tensor_create(kt_alloc(), shape, 1, kt_f32(), vulkan, &t),
                KC_UNIMPLEMENTED, "device vulkan:0: no backend allocates there");
  KC_CHECK(t == NULL);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

/* ---- DLPack ----------------------------------------------------------------- */

KC_TEST(tensor_export_import_shares_data) {
  const int64_t shape[] = {4, 5};
  kc_tensor* t = kt_make_iota(shape, 2);
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  DLManagedTensorVersioned* m = NULL;
  KC_CHECK_OK(kc_tensor_export_dlpack(t, &m));
  KC_CHECK(m != NULL && m->deleter != NULL);
  KC_CHECK_INT(m->version.major, 1);
  KC_CHECK_INT(m->version.minor, 1);
  KC_CHECK(m->dl_tensor.data == dl->data);
  KC_CHECK_INT(m->dl_tensor.byte_offset, dl->byte_offset);
  KC_CHECK_INT(m->dl_tensor.ndim, 2);
  KC_CHECK(m->dl_tensor.shape[0] == 4 && m->dl_tensor.shape[1] == 5);
  KC_CHECK(kc_dtype_equal(m->dl_tensor.dtype, kt_f32()));
  /* Strides always, compact as here too: DLPack 1.x consumers such as
   * tvm-ffi read them unchecked when ndim > 0. */
  KC_CHECK(m->dl_tensor.strides != NULL);
  KC_CHECK(m->dl_tensor.strides[0] == 5 && m->dl_tensor.strides[1] == 1);
  KC_CHECK_INT(kt_refs(t), 2);

  kc_tensor* back = NULL;
  KC_CHECK_OK(kc_tensor_import_dlpack(kt_alloc(), m, &back));
  const DLTensor* bdl = kc_tensor_get_dltensor(back);
  KC_CHECK(bdl->data == dl->data); /* no copy either way */
  KC_CHECK(bdl->shape[0] == 4 && bdl->shape[1] == 5);
  int64_t idx[] = {3, 4};
  KC_CHECK(*kt_at(bdl, idx) == 19.0f);

  kc_object_release(KC_OBJECT(t));
  /* The import holds the export, which holds the original storage. */
  KC_CHECK(*kt_at(bdl, idx) == 19.0f);
  kc_object_release(KC_OBJECT(back));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_export_consumer_deletes) {
  const int64_t shape[] = {3};
  kc_tensor* t = kt_make_iota(shape, 1);
  DLManagedTensorVersioned* m = NULL;
  KC_CHECK_OK(kc_tensor_export_dlpack(t, &m));
  kc_object_release(KC_OBJECT(t));
  /* Only the managed tensor keeps it alive now. */
  KC_CHECK(((float*)m->dl_tensor.data)[2] == 2.0f);
  KC_CHECK(kt_live_blocks() > 0);
  m->deleter(m);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_export_bad_input) {
  DLManagedTensorVersioned* m = NULL;
  KC_CHECK_CODE(kc_tensor_export_dlpack(NULL, &m), KC_INVALID_ARGUMENT, "");
  const int64_t shape[] = {3};
  kc_tensor* t = kt_make(shape, 1);
  KC_CHECK_CODE(kc_tensor_export_dlpack(t, NULL), KC_INVALID_ARGUMENT, "");
  KC_CHECK_INT(kt_refs(t), 1);
  kc_object_release(KC_OBJECT(t));
}

/* A producer's managed tensor whose deleter counts its calls. */
typedef struct kt_producer {
  DLManagedTensorVersioned managed;
  int64_t shape[3];
  int64_t strides[3];
  float data[24];
  int deletions;
} kt_producer;

static void kt_producer_delete(DLManagedTensorVersioned* self) {
  kt_producer* p = self->manager_ctx;
  p->deletions += 1;
}

static void kt_producer_init(kt_producer* p, int32_t ndim) {
  memset(p, 0, sizeof *p);
  p->managed.version.major = 1;
  p->managed.version.minor = 1;
  p->managed.manager_ctx = p;
  p->managed.deleter = kt_producer_delete;
  p->shape[0] = 2;
  p->shape[1] = 3;
  p->shape[2] = 4;
  for (int i = 0; i < 24; ++i) p->data[i] = (float)i;
  p->managed.dl_tensor.data = p->data;
  p->managed.dl_tensor.device = kc_device_cpu();
  p->managed.dl_tensor.ndim = ndim;
  p->managed.dl_tensor.dtype = kt_f32();
  p->managed.dl_tensor.shape = p->shape;
}

KC_TEST(tensor_import_calls_deleter_once) {
  kt_producer p;
  kt_producer_init(&p, 3);
  p.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_import_dlpack(kt_alloc(), &p.managed, &t));
  KC_CHECK_INT(p.deletions, 0);
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  KC_CHECK(dl->data == p.data);
  KC_CHECK_INT(dl->ndim, 3);
  KC_CHECK(dl->shape[2] == 4);
  KC_CHECK_INT(kc_dltensor_get_numel(dl), 24);
  KC_CHECK((kc_tensor_get_flags(t) & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  kc_object_retain(KC_OBJECT(t));
  kc_object_release(KC_OBJECT(t));
  KC_CHECK_INT(p.deletions, 0);
  kc_object_release(KC_OBJECT(t));
  KC_CHECK_INT(p.deletions, 1);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_import_keeps_strides) {
  kt_producer p;
  kt_producer_init(&p, 2);
  /* A 3x2 transpose of a 2x3 row-major block. */
  p.shape[0] = 3;
  p.shape[1] = 2;
  p.strides[0] = 1;
  p.strides[1] = 3;
  p.managed.dl_tensor.strides = p.strides;
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_import_dlpack(kt_alloc(), &p.managed, &t));
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  KC_CHECK(dl->strides != NULL);
  KC_CHECK(!kc_dltensor_is_compact(dl));
  int64_t idx[] = {2, 1};
  KC_CHECK(*kt_at(dl, idx) == 5.0f);
  kc_object_release(KC_OBJECT(t));
  KC_CHECK_INT(p.deletions, 1);
}

KC_TEST(tensor_import_refuses_other_major) {
  kt_producer p;
  kt_producer_init(&p, 3);
  p.managed.version.major = 2;
  kc_tensor* t = NULL;
  KC_CHECK_CODE(kc_tensor_import_dlpack(kt_alloc(), &p.managed, &t),
                KC_FAILED_PRECONDITION, "2");
  KC_CHECK(t == NULL);
  p.managed.version.major = 0;
  KC_CHECK_CODE(kc_tensor_import_dlpack(kt_alloc(), &p.managed, &t),
                KC_FAILED_PRECONDITION, "");
  /* Ownership stayed here: the library must not have deleted it. */
  KC_CHECK_INT(p.deletions, 0);
  p.managed.deleter(&p.managed);
  KC_CHECK_INT(p.deletions, 1);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_import_refuses_bad_tensors) {
  kc_tensor* t = NULL;
  KC_CHECK_CODE(kc_tensor_import_dlpack(kt_alloc(), NULL, &t),
                KC_INVALID_ARGUMENT, "");
  kt_producer p;
  kt_producer_init(&p, 3);
  p.shape[1] = -3;
  KC_CHECK_CODE(kc_tensor_import_dlpack(kt_alloc(), &p.managed, &t),
                KC_INVALID_ARGUMENT, "-3");
  kt_producer_init(&p, KC_TENSOR_MAX_NDIM + 8);
  KC_CHECK_CODE(kc_tensor_import_dlpack(kt_alloc(), &p.managed, &t),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK(t == NULL);
  KC_CHECK_INT(p.deletions, 0);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

/* ---- views -------------------------------------------------------------------- */

KC_TEST(tensor_view_transpose) {
  const int64_t shape[] = {2, 3};
  kc_tensor* base = kt_make_iota(shape, 2);
  const int64_t vshape[] = {3, 2};
  const int64_t vstrides[] = {1, 3};
  kc_tensor* v = NULL;
  KC_CHECK_OK(kc_tensor_create_view(base, 2, vshape, vstrides, 0, &v));
  KC_CHECK_INT(KC_OBJECT(v)->type_index, KC_TYPE_TENSOR);
  const DLTensor* dl = kc_tensor_get_dltensor(v);
  KC_CHECK_INT(dl->ndim, 2);
  KC_CHECK(dl->shape[0] == 3 && dl->shape[1] == 2);
  KC_CHECK(!kc_dltensor_is_compact(dl));
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      int64_t idx[] = {i, j};
      KC_CHECK(*kt_at(dl, idx) == (float)(j * 3 + i));
    }
  }
  /* Shared storage: a write through the base shows in the view. */
  const DLTensor* bdl = kc_tensor_get_dltensor(base);
  int64_t b_idx[] = {1, 2};
  *kt_at(bdl, b_idx) = 100.0f;
  int64_t v_idx[] = {2, 1};
  KC_CHECK(*kt_at(dl, v_idx) == 100.0f);
  kc_object_release(KC_OBJECT(v));
  kc_object_release(KC_OBJECT(base));
}

KC_TEST(tensor_view_slice_with_offset) {
  const int64_t shape[] = {4, 5};
  kc_tensor* base = kt_make_iota(shape, 2);
  /* Rows 1..2, columns 2..4. */
  const int64_t vshape[] = {2, 3};
  const int64_t vstrides[] = {5, 1};
  kc_tensor* v = NULL;
  KC_CHECK_OK(kc_tensor_create_view(base, 2, vshape, vstrides, 7, &v));
  const DLTensor* dl = kc_tensor_get_dltensor(v);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      int64_t idx[] = {i, j};
      KC_CHECK(*kt_at(dl, idx) == (float)((i + 1) * 5 + j + 2));
    }
  }
  KC_CHECK(!kc_dltensor_is_compact(dl));
  /* Whole rows: compact again. The last element sits at the base's end. */
  const int64_t rows[] = {2, 5};
  kc_tensor* r = NULL;
  KC_CHECK_OK(kc_tensor_create_view(base, 2, rows, NULL, 10, &r));
  const DLTensor* rdl = kc_tensor_get_dltensor(r);
  KC_CHECK(kc_dltensor_is_compact(rdl));
  int64_t last[] = {1, 4};
  KC_CHECK(*kt_at(rdl, last) == 19.0f);
  /* A view of a view: offsets and strides count storage elements from the
   * first element of the view it is made from (base element 7), so this is
   * the view's second row, base elements 12..14. */
  const int64_t one[] = {3};
  const int64_t unit[] = {1};
  kc_tensor* vv = NULL;
  KC_CHECK_OK(kc_tensor_create_view(v, 1, one, unit, 5, &vv));
  const DLTensor* vvdl = kc_tensor_get_dltensor(vv);
  int64_t k[] = {2};
  KC_CHECK(*kt_at(vvdl, k) == 14.0f);
  kc_object_release(KC_OBJECT(vv));
  kc_object_release(KC_OBJECT(r));
  kc_object_release(KC_OBJECT(v));
  kc_object_release(KC_OBJECT(base));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_view_negative_strides) {
  const int64_t shape[] = {6};
  kc_tensor* base = kt_make_iota(shape, 1);
  const int64_t strides[] = {-1};
  kc_tensor* v = NULL;
  KC_CHECK_OK(kc_tensor_create_view(base, 1, shape, strides, 5, &v));
  const DLTensor* dl = kc_tensor_get_dltensor(v);
  for (int64_t i = 0; i < 6; ++i) {
    int64_t idx[] = {i};
    KC_CHECK(*kt_at(dl, idx) == (float)(5 - i));
  }
  KC_CHECK(!kc_dltensor_is_compact(dl));
  /* Every other element, backwards from the end: 5, 3, 1. */
  const int64_t half[] = {3};
  const int64_t back2[] = {-2};
  kc_tensor* w = NULL;
  KC_CHECK_OK(kc_tensor_create_view(base, 1, half, back2, 5, &w));
  int64_t i2[] = {2};
  KC_CHECK(*kt_at(kc_tensor_get_dltensor(w), i2) == 1.0f);
  kc_object_release(KC_OBJECT(w));
  kc_object_release(KC_OBJECT(v));
  kc_object_release(KC_OBJECT(base));
}

KC_TEST(tensor_view_out_of_bounds) {
  const int64_t shape[] = {2, 3};
  kc_tensor* base = kt_make(shape, 2);
  kc_tensor* v = NULL;
  const int64_t too_big[] = {3, 3};
  KC_CHECK_CODE(kc_tensor_create_view(base, 2, too_big, NULL, 0, &v),
                KC_OUT_OF_RANGE, "");
  const int64_t flat[] = {6};
  KC_CHECK_CODE(kc_tensor_create_view(base, 1, flat, NULL, 1, &v),
                KC_OUT_OF_RANGE, "");
  KC_CHECK_CODE(kc_tensor_create_view(base, 1, flat, NULL, -1, &v),
                KC_OUT_OF_RANGE, "");
  const int64_t back[] = {-1};
  /* Reversed from element 4 reaches element -1. */
  KC_CHECK_CODE(kc_tensor_create_view(base, 1, flat, back, 4, &v),
                KC_OUT_OF_RANGE, "");
  const int64_t wide[] = {7};
  KC_CHECK_CODE(kc_tensor_create_view(base, 1, flat, wide, 0, &v),
                KC_OUT_OF_RANGE, "");
  KC_CHECK(v == NULL);
  KC_CHECK_CODE(kc_tensor_create_view(NULL, 1, flat, NULL, 0, &v),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_CODE(kc_tensor_create_view(base, 1, flat, NULL, 0, NULL),
                KC_INVALID_ARGUMENT, "");
  KC_CHECK_INT(kc_object_get_ref_count(KC_OBJECT(base)), 1);
  kc_object_release(KC_OBJECT(base));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_view_empty_cases) {
  /* A base with a zero dim addresses nothing: no non-empty view of it. */
  const int64_t empty_shape[] = {3, 0};
  kc_tensor* empty = kt_make(empty_shape, 2);
  kc_tensor* v = NULL;
  const int64_t two[] = {2};
  KC_CHECK_CODE(kc_tensor_create_view(empty, 1, two, NULL, 0, &v),
                KC_OUT_OF_RANGE, "reaches elements");
  const int64_t none[] = {0};
  KC_CHECK_OK(kc_tensor_create_view(empty, 1, none, NULL, 0, &v));
  kc_object_release(KC_OBJECT(v));
  v = NULL;
  /* An empty view still forms its data pointer from the offset. */
  const int64_t shape[] = {4};
  kc_tensor* base = kt_make(shape, 1);
  KC_CHECK_CODE(kc_tensor_create_view(base, 1, none, NULL, 1000000, &v),
                KC_OUT_OF_RANGE, "");
  KC_CHECK_OK(kc_tensor_create_view(base, 1, none, NULL, 3, &v));
  KC_CHECK_INT(kc_dltensor_get_numel(kc_tensor_get_dltensor(v)), 0);
  kc_object_release(KC_OBJECT(v));
  kc_object_release(KC_OBJECT(base));
  kc_object_release(KC_OBJECT(empty));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(tensor_view_keeps_base_alive) {
  const int64_t shape[] = {8};
  kc_tensor* base = kt_make_iota(shape, 1);
  const int64_t vshape[] = {2};
  kc_tensor* v = NULL;
  KC_CHECK_OK(kc_tensor_create_view(base, 1, vshape, NULL, 6, &v));
  KC_CHECK_INT(kt_refs(base), 2);
  kc_object_release(KC_OBJECT(base));
  const DLTensor* dl = kc_tensor_get_dltensor(v);
  int64_t idx[] = {1};
  KC_CHECK(*kt_at(dl, idx) == 7.0f); /* storage still there */
  KC_CHECK(kt_live_blocks() > 0);
  kc_object_release(KC_OBJECT(v));
  KC_CHECK_INT(kt_live_blocks(), 0);
}

KC_TEST(dltensor_numel) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  KC_CHECK_INT(kc_dltensor_get_numel(&t), 1); /* rank 0 */
  int64_t shape[3] = {2, 3, 4};
  t.shape = shape;
  t.ndim = 3;
  KC_CHECK_INT(kc_dltensor_get_numel(&t), 24);
  shape[1] = 0;
  KC_CHECK_INT(kc_dltensor_get_numel(&t), 0);
  int64_t huge[2] = {INT64_MAX, 2};
  t.shape = huge;
  t.ndim = 2;
  KC_CHECK_INT(kc_dltensor_get_numel(&t), -1);
  huge[0] = INT64_C(1) << 32;
  huge[1] = INT64_C(1) << 32;
  KC_CHECK_INT(kc_dltensor_get_numel(&t), -1);
  huge[0] = INT64_C(1) << 31;
  huge[1] = INT64_C(1) << 31;
  KC_CHECK_INT(kc_dltensor_get_numel(&t), INT64_C(1) << 62);
}

KC_TEST(dltensor_is_compact) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  int64_t shape[3] = {2, 3, 4};
  t.shape = shape;
  t.ndim = 3;
  KC_CHECK(kc_dltensor_is_compact(&t));
  int64_t strides[3] = {12, 4, 1};
  t.strides = strides;
  KC_CHECK(kc_dltensor_is_compact(&t));
  strides[2] = 2;
  KC_CHECK(!kc_dltensor_is_compact(&t));
  strides[2] = 1;
  strides[0] = 13;
  KC_CHECK(!kc_dltensor_is_compact(&t));
  /* A dim of extent 1 may have any stride. */
  shape[1] = 1;
  strides[0] = 4;
  strides[1] = 99;
  KC_CHECK(kc_dltensor_is_compact(&t));
  int64_t tshape[2] = {2, 3};
  int64_t tstrides[2] = {1, 2};
  t.shape = tshape;
  t.strides = tstrides;
  t.ndim = 2;
  KC_CHECK(!kc_dltensor_is_compact(&t));
}

KC_TEST(tensor_empty_is_compact_whatever_its_strides) {
  /* PyTorch's (2, 0) tensor has strides (1, 1). */
  int64_t shape[2] = {2, 0}, strides[2] = {1, 1};
  float dummy = 0;
  DLTensor t = {.data = &dummy, .device = {kDLCPU, 0}, .ndim = 2,
                .dtype = {kDLFloat, 32, 1}, .shape = shape, .strides = strides};
  KC_CHECK(kc_dltensor_is_compact(&t));
  shape[1] = 3; /* now it has elements, and those strides are not row-major */
  KC_CHECK(!kc_dltensor_is_compact(&t));
}
