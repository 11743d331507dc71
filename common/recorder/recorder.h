// The recorder: per-step series streamed into HDF5 as the run goes.
//
// Each series is a time-major dataset (T x N x C) float32 chunked in whole
// blocks of steps (chunk = block x worlds-slice x C); /time (T) float64 goes with
// them, and the scalar dataset /steps_recorded counts the steps complete in
// every series.
//
// Crash safety by construction: every dataset is created at its planned size
// with its file space allocated up front, so appending a block writes data into
// space that already exists and never changes the file's metadata. After each
// block the data are flushed, then /steps_recorded is raised and flushed. A
// writer killed at any instant (SIGKILL, the OOM killer) therefore leaves a file
// that every HDF5 tool opens, whose first /steps_recorded steps are complete;
// rows past them are not data. (HDF5 rewrites its chunk index when a dataset
// grows or a compressed chunk is written, and a kill during that leaves the
// dataset unreadable -- tests/test_recorder.c kills writers at random to check.)
//
// When the run ends normally (or on Ctrl-C/SIGTERM, which stop it between
// steps), fs_recorder_finish trims the datasets to the recorded steps and writes
// `complete`, `stop_reason` and `steps_recorded`; fs_h5_compress can then repack
// the file compressed.
//
// A writer owns worlds [world_begin, world_begin + world_count) of nworld: one
// writer per file today; one per MPI rank with parallel HDF5 later.
#ifndef FLYSIM_COMMON_RECORDER_RECORDER_H
#define FLYSIM_COMMON_RECORDER_RECORDER_H

#include <hdf5.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// One recorded series: dataset /name, shape (T x N x ncol).
typedef struct fsSeriesSpec {
  const char* name;          // dataset name
  int ncol;                  // C: values per world per step
  const char* units;         // attribute `units`
  const char* doc;           // attribute `description`
  const char* names_dataset; // dataset naming the C columns (attribute `columns`), or NULL
} fsSeriesSpec;

typedef struct fsRecorderSpec {
  const char* path; // file to create (truncated if it exists)
  long long nstep;  // T: steps planned (the datasets' allocated length)
  int nworld;       // N: worlds in the file
  int world_begin;  // first world this writer owns
  int world_count;  // worlds this writer owns
  int block;        // steps per chunk (appends should be whole blocks)
  double timestep;  // seconds per step (/time and attribute `timestep`)
  int nseries;
  const fsSeriesSpec* series; // copied by fs_recorder_create (its strings are not)
} fsRecorderSpec;

typedef struct fsRecorder fsRecorder;

/// Create the file and allocate its datasets (T x N x C each).
fsRecorder* fs_recorder_create(const fsRecorderSpec* spec, fsError* err);

/// The open file, for the caller's metadata (names, attributes). Write metadata
/// right after create or at the end, not between appends (see above).
hid_t fs_recorder_file(const fsRecorder* r);
const char* fs_recorder_path(const fsRecorder* r);

/// Append nstep steps: data[k] is series k, (nstep x world_count x ncol_k), row-major.
/// Writes, flushes, then raises /steps_recorded and flushes again.
int fs_recorder_append(fsRecorder* r, int nstep, const float* const* data, fsError* err);

/// Steps appended so far.
long long fs_recorder_steps(const fsRecorder* r);

/// Whether the disk holding the file has room for its ending (what a close writes: at
/// least 1 MiB, or the disk's free space unknown). Where it has not (a disk that another
/// writer filled), writing it would fail half-way and leave the file's metadata pointing
/// past its end; closed as is (fs_recorder_finish with stop_reason NULL), the file stays
/// as the last block left it. Returns 0 with err saying so, else 1.
int fs_recorder_ending_fits(const fsRecorder* r, fsError* err);

/// Trim the datasets to the recorded steps, write attributes `complete` (1 if
/// stop_reason is "completed"), `stop_reason` and `steps_recorded`, close the file
/// and free r. With stop_reason NULL the file is closed as is. Safe with r == NULL.
int fs_recorder_finish(fsRecorder* r, const char* stop_reason, fsError* err);

/// Repack a closed file with the named datasets compressed (shuffle + deflate,
/// chunks kept), through HDF5's h5repack, replacing the file atomically. Returns 1
/// (file left as is, reason in err) if h5repack is not available, -1 (file left as is,
/// reason in err, naming the file) if it fails, is killed, or runs past its limit
/// (600 s; FLYSIM_H5REPACK_TIMEOUT=<seconds>, a test switch), when it is stopped.
int fs_h5_compress(const char* path, int ndataset, const char* const* datasets, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
