// flysim generate: a dataset of replays with per-world variation (generate/spec.h),
// block of worlds by block, on any backend, into one world-major HDF5 file
// (generate/dataset.h), resumable and the same bytes whatever the threads.
//
// Each block of worlds is one replay plan: its worlds' targets (each world's clip
// window, time scaling, amplitude and noise) concatenated, each world's model when
// the model axes vary (a copy of the mjModel per world; MuJoCo and the host stepper
// take one each), each world's start (fsReplay.init_worlds); fs_replay_run steps it,
// a block hook keeps every record_every-th step in world-major buffers, and the
// block is written and marked done.
#ifndef FLYSIM_GENERATE_GENERATE_H
#define FLYSIM_GENERATE_GENERATE_H

#include <stdio.h>

#include "common/base/error.h"
#include "generate/ranks.h"
#include "generate/spec.h"

typedef struct fsGenOptions {
  const char* out;      // --out DIR
  int resume;           // --resume
  int threads;          // --threads (0: one per core)
  int progress;         // a progress line on stderr
  const fsRanks* ranks; // MPI ranks (block k is rank k mod size's), or NULL: one process
} fsGenOptions;

/// What a run did (the summary line).
typedef struct fsGenResult {
  int blocks, blocks_done_before, blocks_run;
  long long world_steps;
  double wall_s;
  double bytes;
  int problem_worlds;
  int complete;
  int interrupted; // the signal that stopped it, or 0
  char path[4200]; // the dataset (final or partial)
} fsGenResult;

/// Generate (or with resume, finish) the dataset of spec s into o->out: this rank's
/// blocks, then (rank 0, once every rank is done) the merge into DIR/dataset.h5. The
/// figures in res are every rank's. Returns 0, or -1 with err (what was written
/// stays; --resume goes on from it). out: the header lines (rank 0), or NULL.
int fs_gen_run(const fsGenSpec* s, const fsGenOptions* o, fsGenResult* res, FILE* out,
               fsError* err);

#endif
