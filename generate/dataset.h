// flysim generate's dataset file: world-major, written block of worlds by block,
// resumable, and the same bytes however it was produced. generate/dataset.c creates,
// resumes and writes a rank's partial file; generate/dataset_merge.c merges the ranks' files
// (fs_dataset_merge, fs_h5_compact).
//
// While it is generated the data live in DIR/dataset.partial.h5 (one per MPI rank:
// DIR/dataset.partial.<rank>-of-<ranks>.h5, each holding its blocks), uncompressed and
// crash-safe as the replay recorder's (common/recorder/recorder.h): every dataset is
// created at its full size with its space allocated, a block of worlds only writes
// data into that space, is flushed, and only then marked in /blocks_done (flushed
// again). A run killed at any instant (SIGKILL included) leaves a file whose marked
// blocks are complete; `--resume` generates the others. When every block is done
// the file is compacted into DIR/dataset.h5 (the float series shuffled and
// deflated; everything else copied) and the partial file is removed. No object
// carries a timestamp, so the same spec gives the same bytes.
//
// Layout (N worlds, R recorded rows = steps / record_every, C_k columns):
//   /worlds/<series> (N, R, C_k) float32: qpos_joint, target, actuator_force, site_pos,
//                    thorax_pos, thorax_quat, qpos, qvel, adhesion_force (as record:);
//                    chunks of one world by a window of rows (about 64 KiB)
//   /time (R) float64   /params (N, P) float64: each world's sampled values
//   /param_names (P)  /param_distributions (P)  /blocks_done (B) uint8
//   /world_warnings (N, W) int32  /warning_names (W)  /world_solver_limit_steps (N)
//   /world_solver_error_steps (N)  /world_peak_contacts (N)  /world_problem (N) uint8
//   /joint_names /actuator_names /point_names /adhesion_names
//   attributes: spec (the spec file's text), flysim_version,
//   mujoco_version, model_file, targets_files, backend, precision, worlds, steps,
//   record_every, block_worlds, seed, timestep, complete
#ifndef FLYSIM_GENERATE_DATASET_H
#define FLYSIM_GENERATE_DATASET_H

#include <mujoco/mujoco.h>

#include "common/inputs/model.h"
#include "common/replay/record.h"
#include "common/replay/replay.h"
#include "generate/spec.h"

typedef struct fsDatasetSpec {
  const char* dir; // --out
  const fsGenSpec* spec;
  const fsRecordLayout* rec;
  const mjModel* m;
  const fsReplayBinding* b;
  int nrow;             // R
  double row_dt;        // seconds between rows
  const double* params; // (N x FS_NAXIS)
  const char* backend;  // "cpu", "host:f32", ...
  int rank, nrank;      // this process of how many: block k is rank (k mod nrank)'s
} fsDatasetSpec;

typedef struct fsDataset fsDataset;

/// Start this rank's partial file. Fails if DIR holds a dataset already (fix:
/// --resume, or another --out).
fsDataset* fs_dataset_create(const fsDatasetSpec* s, fsError* err);

/// Reopen this rank's partial file to finish it: its spec must be the same text (a
/// rank that had not started yet starts its file).
fsDataset* fs_dataset_resume(const fsDatasetSpec* s, fsError* err);

/// Whether --resume finds the dataset complete already (DIR/dataset.h5 and no partial file
/// of this rank): 1 if so and from the same spec, 0 if not complete, -1 (err) if it was made
/// from another spec.
int fs_dataset_complete(const fsDatasetSpec* s, fsError* err);

/// 1 if block k is this rank's.
int fs_dataset_owns(const fsDataset* d, int k);

/// Blocks of worlds, and whether block k is done.
int fs_dataset_nblock(const fsDataset* d);
int fs_dataset_block_done(const fsDataset* d, int k);

/// Write block k: data[s] = series s of its worlds (nb x R x C_s), st their health;
/// flushed, then marked done and flushed.
int fs_dataset_write_block(fsDataset* d, int k, float* const* data, const fsWorldStatus* st,
                           fsError* err);

/// Bytes of the series written so far.
double fs_dataset_bytes(const fsDataset* d);

/// Close. Returns 1 if every block this rank owns is done, 0 if not, -1 (err).
int fs_dataset_close(fsDataset* d, fsError* err);

/// Once every rank's blocks are done (rank 0, after the others closed): compact the
/// partial files into DIR/dataset.h5 (its path into final) and remove them. The same
/// bytes whatever the number of ranks.
int fs_dataset_merge(const fsDatasetSpec* s, char* final, size_t n, fsError* err);

/// The partial file of rank of nrank in dir.
void fs_dataset_partial_path(const char* dir, int rank, int nrank, char* out, size_t n);

/// Compact nsrc HDF5 files of one layout into dst: world w of the per-world datasets
/// (/worlds/<series> compressed with shuffle + deflate, and the health datasets) from
/// srcs[world_src[w]] (world_src NULL: srcs[0]), everything else from srcs[0]; no
/// timestamps. dst is replaced atomically.
int fs_h5_compact(const char* const* srcs, int nsrc, const int* world_src, int nworld,
                  const char* dst, fsError* err);

#endif
