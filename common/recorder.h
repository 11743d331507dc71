// The recorder: per-step series streamed into HDF5 as the run goes.
//
// Each series is a time-major dataset (T x N x C) float32, chunked in whole
// blocks of steps (chunk = block x worlds-slice x C) and compressed (shuffle +
// deflate). /time (T) float64 grows with it. After every append the file is
// flushed and the attribute `steps_recorded` updated, so a run that is killed
// leaves a readable file holding every flushed block; an interrupted run
// (SIGINT/SIGTERM) finishes its block and closes the file normally.
//
// A writer owns worlds [world_begin, world_begin + world_count) of nworld: one
// writer per file today; one per MPI rank with parallel HDF5 later.
#ifndef FLYSIM_COMMON_RECORDER_H
#define FLYSIM_COMMON_RECORDER_H

#include <hdf5.h>

#include "common/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// One recorded series: dataset /name, shape (T x N x ncol).
typedef struct fsSeriesSpec {
  const char* name;           // dataset name
  int ncol;                   // C: values per world per step
  const char* units;          // attribute `units`
  const char* doc;            // attribute `description`
  const char* names_dataset;  // dataset naming the C columns (attribute `columns`), or NULL
} fsSeriesSpec;

typedef struct fsRecorderSpec {
  const char* path;           // file to create (truncated if it exists)
  int nworld;                 // N: worlds in the file
  int world_begin;            // first world this writer owns
  int world_count;            // worlds this writer owns
  int block;                  // steps per chunk (appends should be whole blocks)
  double timestep;            // seconds per step (/time and attribute `timestep`)
  int nseries;
  const fsSeriesSpec* series;
} fsRecorderSpec;

typedef struct fsRecorder fsRecorder;

/// Create the file and its (empty, extendible) datasets.
fsRecorder* fs_recorder_create(const fsRecorderSpec* spec, fsError* err);

/// The open file, for metadata (names, attributes) written by the caller.
hid_t fs_recorder_file(const fsRecorder* r);
const char* fs_recorder_path(const fsRecorder* r);

/// Append nstep steps: data[k] is series k, (nstep x world_count x ncol_k), row-major.
/// Extends every dataset, writes, updates `steps_recorded` and flushes the file.
int fs_recorder_append(fsRecorder* r, int nstep, const float* const* data, fsError* err);

/// Steps appended so far.
long long fs_recorder_steps(const fsRecorder* r);

/// Write `complete` (1 if stop_reason is "completed") and `stop_reason`, close the
/// file and free r. Safe to call with r == NULL. Returns -1 if closing failed.
int fs_recorder_finish(fsRecorder* r, const char* stop_reason, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
