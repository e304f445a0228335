/* Compiled programs: the buffer plan and the steps that execute it. Never
 * installed. */
#ifndef KCALL_PROGRAM_EXECUTABLE_INTERNAL_H_
#define KCALL_PROGRAM_EXECUTABLE_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>

#include "program/program_internal.h"
#include "runtime/backend.h"
#include "xcall/xcall_internal.h"

/* Where a buffer's memory is. */
enum {
  KC__BUF_INPUT = 1, /* the caller's input leaf `index` */
  KC__BUF_CONST,     /* the program's constant bytes */
  KC__BUF_TEMP,      /* the run's arena at `offset` */
  KC__BUF_OUTPUT,    /* output tensor `index` */
  KC__BUF_SCRATCH,   /* the run's arena, for one typed call */
  KC__BUF_TABLE      /* CUDA: the run's device pointer tables at `offset` */
};

typedef struct kc__buffer {
  int32_t kind;
  int32_t index;
  size_t size;
  size_t offset;
  const void* data;
  int32_t def;  /* plan position that writes it; -1 for inputs/constants */
  int32_t last; /* last plan position that reads it */
  const kc_shape* shape; /* a leaf shape, for the printed plan */
} kc__buffer;

/* At the start of a run: *(void**)(block + target) = the address of
 * `buffer`, or block + `block_offset` when buffer < 0. */
typedef struct kc__fill {
  size_t target;
  int32_t buffer;
  size_t block_offset;
} kc__fill;

/* An input or output buffer, whose address is set on every run. The block
 * offsets that hold it are dynamic_targets[first, first + count), written
 * again only when the address differs from the one the run's block holds. */
typedef struct kc__dynamic {
  int32_t buffer;
  int32_t kind;  /* KC__BUF_INPUT or KC__BUF_OUTPUT */
  int32_t index; /* the input leaf or the output */
  uint32_t count;
  size_t first;
} kc__dynamic;

typedef struct kc__run kc__run;
typedef struct kc__step kc__step;
typedef kc_status* (*kc__step_fn)(const kc__step* step, kc__run* run);

enum {
  KC__STEP_ELEMENTWISE = 1, /* CUDA: the backend's element-wise kernel */
  KC__STEP_BROADCAST,
  KC__STEP_COPY,
  KC__STEP_LEGACY_CALL,
  KC__STEP_TYPED_CALL,
  KC__STEP_XLA_CALL,
  KC__STEP_KERNEL, /* a KC__INSTR_KERNEL instruction (instr.h) */
  KC__STEP_GPU_CALL, /* CUDA: a legacy convention (kc_xcall_gpu_fn) */
  KC__STEP_IOTA,     /* CUDA: the backend's iota */
  KC__STEP_FUSION    /* a group of element-wise instructions (fusion.c) */
};

/* What the run loop reads of a step, 16 bytes so that four share a cache
 * line and a run streams through them: custom calls are dispatched from
 * here without touching their kc__step. */
enum {
  KC__HOT_STEP = 0, /* steps[offset].run(&steps[offset], run) */
  KC__HOT_TYPED,    /* fn: the handler; offset: its frame */
  KC__HOT_XLA,      /* fn: the XLA FFI handler; offset: its frame */
  KC__HOT_LEGACY    /* fn: an API_ORIGINAL target; offset: the result slot,
                     * followed by the operand table */
};

typedef struct kc__hot_step {
  void (*fn)(void);
  uint32_t kind;   /* KC__HOT_* */
  uint32_t offset; /* a block offset, or for KC__HOT_STEP a step index */
} kc__hot_step;

struct kc__step {
  /* What a step function reads first. */
  int32_t kind;
  int32_t instr; /* in the program; -1 for the final output copies */
  kc_xcall_handler_fn handler;  /* typed: target->handler */
  void (*fn)(void);             /* legacy: target->fn; XLA: its execute handler */
  int32_t api;                  /* legacy: target->api */
  int32_t op;                   /* kc_opcode of an element-wise step */
  size_t frame_offset;          /* typed, XLA: block offset of the frame */
  size_t ins_offset;            /* legacy: block offset of the operands */
  size_t out_offset;            /* legacy: block offset of the result slot */
  kc__step_fn run;
  /* Cold. */
  const kc__xcall_target* target;
  const char* opaque;
  size_t opaque_size;
  int32_t in[3]; /* buffers; -1 when unused */
  int32_t out;   /* buffer */
  int32_t arity;     /* CUDA element-wise: 1, 2 or 3 */
  int32_t direction; /* CUDA compare: KC__CMP_* */
  DLDataType in_dtype, out_dtype;
  int64_t count; /* elements */
  size_t bytes;  /* copy */
  /* broadcast */
  int32_t in_rank, out_rank;
  const int64_t* in_dims;
  const int64_t* out_dims;
  const int64_t* map;
  /* kernel: its definition and what its prepare made (ins_offset and
   * out_offset hold the operand table and the result pointer) */
  const struct kc__instr_def* def;
  const void* data;
};

/* One execution's state. Runs reuse them through the executable's pool, so
 * that only what differs between runs (input and output addresses) is
 * written per run. */
struct kc__run {
  kc__run* next; /* in the pool */
  const kc_executable* exe;
  const kc_allocator* alloc;
  char* block;  /* addresses, pointer tables, frames, DLTensors */
  char* arena;  /* temporaries and scratch (device memory on CUDA) */
  void** addr;  /* buffer addresses: into block */
  bool primed;  /* the dynamic fills have been applied once */
  /* CUDA only. */
  char* tables;        /* device pointer tables (exe->tables_bytes) */
  char* host_tables;   /* pinned: what is copied into `tables` */
  char* dev_inputs;    /* device copies of host inputs (exe->staging_bytes) */
  char* host_inputs;   /* pinned staging of host inputs */
  void* stream;        /* where the run's work was last queued */
  bool pending;        /* work may still be queued on `stream` */
  void** key;          /* input and output addresses of the last run */
  bool key_valid;      /* `key` holds a run's addresses */
  void* graph;         /* captured for `key`, or NULL */
};

struct kc_executable {
  kc_program* program; /* retained: steps refer to its names and data */
  kc_platform platform;
  kc_thread_pool* pool;
  kc__buffer* buffers;
  size_t num_buffers;
  kc__step* steps;
  kc__hot_step* hot_steps; /* num_steps, parallel to steps */
  size_t num_steps;
  size_t num_live;     /* live instructions */
  int32_t* live_instr; /* program instruction of each plan position */
  int32_t* pos_of;     /* plan position of each instruction; -1: dead */
  size_t* leaf_base;   /* first leaf of each instruction */
  int32_t* leaf_buf;   /* buffer of each leaf */
  size_t num_inputs;
  const kc_shape** input_shapes;
  size_t num_outputs;
  const kc_shape** output_shapes;
  int32_t* output_buffers; /* OUTPUT buffer of each output */
  size_t arena_bytes;
  size_t arena_unshared;
  size_t output_bytes;
  /* The run block: its size, the template copied into each new run, and
   * the fills applied once per new run (static) or when an input or output
   * address changes (dynamic, sorted by buffer). */
  size_t block_bytes;
  char* block_template;
  kc__fill* static_fills;
  size_t num_static_fills;
  size_t* dynamic_targets;
  kc__dynamic* dynamics;
  size_t num_dynamics;
  size_t addr_offset;
  /* The custom-call targets the steps call, each retained once: they, and
   * the plugins whose code they are, outlive the executable. Released
   * after the states below are deleted (their deleters may be plugin
   * code). */
  kc_object** targets;
  size_t num_targets, cap_targets;
  /* Instantiated typed-call state, destroyed with the executable. */
  struct kc__state {
    void* state;
    void (*deleter)(void* state);
  }* states;
  size_t num_states, cap_states;
  /* Programs with XLA FFI calls: where their runs' shared kc__xla_run_info
   * lies in the block. */
  bool has_xla;
  size_t xla_run_offset;
  kc__arena arena; /* ordered attribute arrays and other compile output */
  pthread_mutex_t runs_mu;
  kc__run* runs; /* idle runs, for reuse */
  /* CUDA executables (backend non-NULL). */
  const kc__backend* backend;
  DLDevice device;
  uint32_t flags;         /* KC_COMPILE_* */
  void* dev_consts;       /* every constant, on the device */
  size_t tables_bytes;    /* device pointer tables per run */
  kc__fill* table_fills;  /* target: offset in the tables; source: buffer */
  size_t num_table_fills;
  size_t* stream_slots;   /* block offsets of typed frames' stream */
  size_t num_stream_slots, cap_stream_slots;
  size_t* input_staging;  /* offset of each input in the staging areas */
  size_t staging_bytes;
  bool graph_capable;     /* every custom call is graph-safe, flags allow */
  _Atomic bool graphs_failed; /* the backend could not capture */
  _Atomic uint64_t graph_captures, graph_launches;
};

/* Step functions (execute.c). */
kc_status* kc__step_broadcast(const kc__step* step, kc__run* run);
kc_status* kc__step_copy(const kc__step* step, kc__run* run);
kc_status* kc__step_legacy_call(const kc__step* step, kc__run* run);
kc_status* kc__step_typed_call(const kc__step* step, kc__run* run);
kc_status* kc__step_xla_call(const kc__step* step, kc__run* run);
kc_status* kc__step_kernel(const kc__step* step, kc__run* run);
/* fusion.c: data is the group's plan; ins_offset holds the addresses of
 * its external operands, out_offset the result's. */
kc_status* kc__step_fusion(const kc__step* step, kc__run* run);

/* CUDA (execute_device.c). */
kc_status* kc__step_elementwise_device(const kc__step* step, kc__run* run);
kc_status* kc__step_broadcast_device(const kc__step* step, kc__run* run);
kc_status* kc__step_copy_device(const kc__step* step, kc__run* run);
kc_status* kc__step_iota_device(const kc__step* step, kc__run* run);
kc_status* kc__step_gpu_call(const kc__step* step, kc__run* run);
/* Copies the constants to the device once (at compile). */
kc_status* kc__device_upload_constants(kc_executable* exe);
/* Frees what a CUDA run state holds on the device and the graph. */
void kc__device_run_free(const kc_executable* exe, kc__run* run);
/* Allocates what a CUDA run state holds on the device. */
kc_status* kc__device_run_init(const kc_executable* exe, kc__run* run);
/* Frees the executable's device memory (constants). */
void kc__device_exe_free(kc_executable* exe);
/* The CUDA part of an execution: inputs checked (device tensors in place,
 * host ones staged), outputs' addresses given, the run queued on a stream
 * (or replayed as a graph), waited for on kcall's default stream. */
kc_status* kc__device_execute(kc_executable* exe, const DLTensor* const* inputs,
                              void* const* output_data, void* stream, uint64_t* times,
                              const kc_allocator* alloc);
/* Runs the steps on `run` (execute.c). */
kc_status* kc__run_steps(const kc_executable* exe, kc__run* run, uint64_t* times);
/* The pool of runs (execute.c). */
kc_status* kc__run_acquire_for(kc_executable* exe, const kc_allocator* alloc,
                               void* stream, kc__run** out);
void kc__run_release(kc_executable* exe, kc__run* run);
void kc__apply_fills(char* block, void** addr, const kc__fill* fills, size_t n);
/* Sets the addresses of inputs and outputs in the run (execute.c). */
void kc__set_dynamic(const kc_executable* exe, kc__run* run, const DLTensor* const* inputs,
                     void* const* out_data);


#endif /* KCALL_PROGRAM_EXECUTABLE_INTERNAL_H_ */
