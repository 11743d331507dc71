// What a backend implements for the library (include/flysim/flysim.h; common/api/batch.c
// checks every argument first, so a backend sees only valid calls).
//
// A backend is a table of operations over its own state (`self`), opened from the
// batch's model and options. Three of them: cpu/backend_cpu.c (MuJoCo's mj_step on
// threads), cpu/backend_host.c (the engine on threads, per precision) and cuda/ (the
// engine as kernels, per precision). The library owns what is common: the handles, the
// arguments' checks, the worlds' own models (set_param: an mjModel copy per world that
// has one, with what MuJoCo derives recomputed), the views' names and shapes, the
// control sequence's bounds and the recordings' columns.
//
// Steps are counted for the whole batch (fs_batch_steps): `step` is the count before a
// call's first step, and a world's health numbers steps the same way.
#ifndef FLYSIM_COMMON_API_BACKEND_H
#define FLYSIM_COMMON_API_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <flysim/flysim.h>
#include <mujoco/mujoco.h>

#include "common/base/error.h"
#include "common/exec/real.h"
#include "common/model/health.h"
#include "common/model/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The most recordings a batch holds (fs_batch_add_recording; flysim replay keeps each
/// recorded series in one and its video's worlds in another).
#define FS_MAX_RECORDINGS 16

/// A recording, checked: columns as the record kernel reads them (common/model/record.h)
/// and how many steps a call may record.
typedef struct fsRecordSpec {
  fsRecordCols cols; // host arrays (src, index, geom_group), owned by the library
  int capacity;      // the most steps one step call records
  fsMemory memory;   // where the step's out[id] is (FS_MEMORY_DEVICE: cuda only)
} fsRecordSpec;

/// The control sequence, checked (every actuator in range, every world's first row in
/// the table; the library refuses a step that would read past the last row).
typedef struct fsCtrlSeqSpec {
  int nrow, ncol;
  const double* value;      // (nrow x ncol)
  const int* actuator;      // (ncol)
  const int64_t* world_row; // (N) each world's row at step `step0`
  int64_t step0;            // the batch's step count when it was set
} fsCtrlSeqSpec;

/// A backend's own copy of the control sequence (fs_ctrl_seq_set; nrow 0: none), one
/// definition for every backend (common/api/backend.c).
typedef struct fsCtrlSeq {
  int nrow, ncol;
  double* value;      // (nrow x ncol)
  int* actuator;      // (ncol)
  int64_t* world_row; // (N) each world's row at step `step0`
  int64_t step0;      // the batch's step count when it was set
} fsCtrlSeq;

/// seq <- a copy of spec for N worlds (spec NULL: none), the old copy freed; on failure
/// (no memory) seq is as it was.
int fs_ctrl_seq_set(fsCtrlSeq* seq, const fsCtrlSeqSpec* spec, int N, fsError* err);
/// Free seq's arrays (none set).
void fs_ctrl_seq_free(fsCtrlSeq* seq);

/// The control sequence as a world's step reads it (host or device memory).
typedef struct fsCtrlRows {
  const fsReal* table;      // (nrow x ncol) in the build's real, or NULL: no sequence
  const int* actuator;      // (ncol) the actuator of each column
  const int64_t* world_row; // (N) each world's row at step `step0`
  int64_t step0;            // the batch's step count when it was set
  int ncol;
} fsCtrlRows;

/// The table's row world w reads at the batch's step count `step` (world_row: each
/// world's row at step0).
FS_HD int64_t fs_ctrl_seq_row(const int64_t* world_row, int64_t step0, int w, int64_t step) {
  return world_row[w] + (step - step0);
}

/// World w's ctrl at the batch's step count `step` from the sequence q (an fsCtrlRows, its
/// table set): its row's column c into ctrl[actuator[c]], the columns over the world's
/// lanes, which then sync (the step reads ctrl). Every backend's: the cpu backend's mjData
/// (its real, double, is MuJoCo's), the host backend's worlds and the cuda kernel's. A
/// macro, so that the kernel reads q's fields from its parameter and ctrl's address from
/// the world's view where it uses each, as before it was shared: a function's copies of
/// them cost the float64 kernel spills (sm_90: 20/36 B of spill stores/loads, not 12/28).
/// q and ctrl are evaluated more than once.
#define FS_CTRL_SEQ_APPLY(q, w, step, ctrl)                                                        \
  do {                                                                                             \
    const fsReal* fsi_row_ =                                                                       \
        (q).table + fs_ctrl_seq_row((q).world_row, (q).step0, (w), (step)) * (q).ncol;             \
    FS_FOR_LANE(fsi_c_, (q).ncol) {                                                                \
      (ctrl)[(q).actuator[fsi_c_]] = fsi_row_[fsi_c_];                                             \
    }                                                                                              \
    FS_SYNC();                                                                                     \
  } while (0)

/// seq as a step reads it, with its values `table` (seq's own where the build's real is
/// double, else fs_ctrl_seq_reals' copy); table NULL where seq has none.
static inline fsCtrlRows fs_ctrl_rows(const fsCtrlSeq* seq, const fsReal* table) {
  fsCtrlRows q = {seq->nrow ? table : NULL, seq->actuator, seq->world_row, seq->step0, seq->ncol};
  return q;
}

/// seq's values in the build's real (nrow x ncol, allocated: free it; rounded as a
/// caller's write of ctrl would be), or NULL with err (no memory).
static inline fsReal* fs_ctrl_seq_reals(const fsCtrlSeq* seq, fsError* err) {
  size_t n = (size_t)seq->nrow * (size_t)seq->ncol;
  fsReal* table = (fsReal*)fs_calloc(err, "the control sequence", n ? n : 1, sizeof(fsReal));
  for (size_t k = 0; table && k < n; k++) table[k] = (fsReal)seq->value[k];
  return table;
}

/// The views a backend offers beyond its data fields of MuJoCo's names.
typedef enum fsExtraView {
  FS_VIEW_PROBLEMS = 0,      // (N) int: FS_PROBLEM_* bits since the world's reset
  FS_VIEW_SOLVER_ITERATIONS, // (N x 2) int: the last step's Newton and noslip iterations
  FS_NEXTRA_VIEW
} fsExtraView;

/// A view's strides for C-contiguous worlds (its shape set): every backend's but a host
/// batch's data (common/model/worlds.h), whose worlds lie a block apart.
static inline void fs_view_contiguous(fsView* v) {
  v->strides[2] = 1;
  v->strides[1] = v->shape[2];
  v->strides[0] = v->shape[1] * v->shape[2];
}

/// Extra view `extra` of N worlds' health arrays h, in the backend's memory (host, or
/// device number `device`): every backend's view of problems and solver_iterations.
static inline void fs_extra_view(const fsHealthArrays* h, int N, int extra, fsMemory memory,
                                 int device, fsView* out) {
  out->dtype = FS_DTYPE_I32;
  out->memory = memory;
  out->device = device;
  out->writable = 0;
  out->shape[0] = N;
  out->shape[1] = out->shape[2] = 1;
  if (extra == FS_VIEW_PROBLEMS) {
    out->data = h->problems;
    out->ndim = 1;
  } else {
    out->data = h->iterations;
    out->ndim = 2;
    out->shape[1] = 2;
  }
  fs_view_contiguous(out);
}

/// The view of N worlds' field `name`, each world's rows x cols elements of dtype (scalar:
/// one value a world): its dtype, dimensions, shape and whether a caller writes it
/// (fs_view_writable); the backend sets its address and memory. Every backend's views.
static inline void fs_field_view(const char* name, fsDtype dtype, int64_t rows, int64_t cols,
                                 int scalar, int N, fsView* out) {
  out->dtype = dtype;
  out->ndim = scalar ? 1 : cols == 1 ? 2 : 3;
  out->shape[0] = N;
  out->shape[1] = scalar ? 1 : rows;
  out->shape[2] = scalar ? 1 : cols;
  fs_view_contiguous(out);
  out->writable = fs_view_writable(name);
}

/// fs_field_view of the engine's data field f (model m's sizes, this build's real): the
/// host and cuda backends' views.
static inline void fs_data_field_view(const fsModel* m, const fsFieldInfo* f, int N, fsView* out) {
  fsDtype dtype = f->type == FS_TYPE_int      ? FS_DTYPE_I32
                  : f->type == FS_TYPE_double ? FS_DTYPE_F64
                  : sizeof(fsReal) == 4       ? FS_DTYPE_F32
                                              : FS_DTYPE_F64;
  int scalar = f->size_off == offsetof(fsModel, one) && f->cols == 1;
  fs_field_view(f->name, dtype, fs_field_rows(m, f), f->cols, scalar, N, out);
}

/// A backend's operations. Every one returns 0, or -1 with err written (err->status a
/// fsStatus; fs_fail's default is FS_ERR_RUNTIME).
typedef struct fsBackendOps {
  const char* name; // "cpu", "host", "cuda"
  void (*destroy)(void* self);

  /// nstep steps of every world; out[r] (nstep x nworld_r x C_r float32, or NULL) gets
  /// recording r's columns after each step (out itself NULL: no recording). The worlds
  /// read their ctrl from the sequence when one is set. cpu, host: done on return;
  /// cuda: queued, and out[r] lands once a later step call or sync returns.
  int (*step)(void* self, int64_t step, int nstep, float* const* out, fsError* err);
  /// Wait for every queued step and copy.
  int (*sync)(void* self, fsError* err);
  /// The worlds whose mask entry is non-zero (NULL: all) to keyframe key of their model
  /// (-1: qpos0), their health from zero; the others untouched.
  int (*reset)(void* self, const uint8_t* mask, int key, fsError* err);
  /// reset with the mask in device memory, read in stream order (cuda; NULL elsewhere).
  int (*reset_device)(void* self, const uint8_t* mask, int key, fsError* err);

  /// The view of data field `name` (MuJoCo's mjData name) or of extra view `extra`
  /// (fsExtraView, name NULL): its address, dtype, memory and shape (worlds first). A
  /// backend that does not compute `name` fails with FS_ERR_ARGUMENT and the fix.
  int (*view)(void* self, const char* name, int extra, fsView* out, fsError* err);
  /// Copy a view (from `view`) to (to_host 1) or from host memory, in order with the
  /// steps; NULL for backends whose views are host memory (the library copies).
  int (*copy)(void* self, const fsView* v, void* host, int to_host, fsError* err);

  /// World w steps with model m from its next step (m: the library's per-world copy,
  /// sizes as the batch's model, alive until the batch closes or w's next call); NULL:
  /// the batch's model again.
  int (*set_world_model)(void* self, int w, const mjModel* m, fsError* err);
  /// The control sequence (copied; NULL: none).
  int (*set_ctrl_sequence)(void* self, const fsCtrlSeqSpec* seq, fsError* err);
  /// Add recording number `id` (0, 1, ... in turn).
  int (*add_recording)(void* self, int id, const fsRecordSpec* spec, fsError* err);

  /// Every world's health into out (N).
  int (*health)(void* self, fsWorldHealth* out, fsError* err);
  /// What the batch is and costs (backend, precision, nworld set by the library).
  int (*info)(void* self, fsBatchInfo* out, fsError* err);
  /// cpu: world w's mjData; others NULL.
  mjData* (*mjdata)(void* self, int w);
  /// mj_forward of every world's state, the state unchanged (NULL: not implemented).
  int (*forward)(void* self, fsError* err);
} fsBackendOps;

/// Opening a backend: the batch's model (the library's copy: alive until the batch
/// closes), its options (defaults filled in), and the model's name for messages.
typedef void* (*fsBackendOpen)(const mjModel* m, const fsBatchOptions* opt, fsError* err);

// The backends, each precision of host and cuda under its own names (common/exec/real.h
// FS_PREC): one program links both.
extern const fsBackendOps fs_cpu_ops;
void* fs_cpu_open(const mjModel* m, const fsBatchOptions* opt, fsError* err);
#define FS_DECLARE_BACKEND(kind, p)                                                                \
  extern const fsBackendOps fs_##kind##_ops_##p;                                                   \
  void* fs_##kind##_open_##p(const mjModel* m, const fsBatchOptions* opt, fsError* err);
FS_DECLARE_BACKEND(host, f32)
FS_DECLARE_BACKEND(host, f64)
FS_DECLARE_BACKEND(cuda, f32)
FS_DECLARE_BACKEND(cuda, f64)
#undef FS_DECLARE_BACKEND

/// Usable CUDA devices (0 without a driver or a GPU, or in a build without CUDA).
int fs_cuda_devices(void);

#ifdef __cplusplus
}
#endif
#endif
