// flysim bench's measurements: one point of a sweep (a stepper, its real, the graph
// on or off, a number of worlds) timed over repeats, and the peers beside it.
#ifndef FLYSIM_BENCH_SWEEP_H
#define FLYSIM_BENCH_SWEEP_H

#include "common/inputs/model.h"
#include "common/inputs/targets.h"
#include "common/replay/replay.h"

/// What is measured at a point.
typedef struct fsBenchPoint {
  fsBackendKind kind;
  int bits;   // 64 (cpu) or flysim's real: 32, 64
  int graph;  // cuda: 1 graph replayed each step, 0 the kernels launched (FLYSIM_NO_GRAPH)
  int nworld; // N
  int record; // 1: every series recorded into an HDF5 file (as replay --save-data), 0: none
} fsBenchPoint;

/// What is shared by the points: the inputs and how long each run is.
typedef struct fsBenchInputs {
  const mjModel* m;
  const char* model_path;
  const fsTargets* targets; // at the model's timestep
  const fsReplayBinding* bind;
  int nstep;              // timed steps per repeat
  int nwarmup;            // warm-up steps before each repeat (not timed)
  int threads;            // CPU threads (0: one per core)
  int repeats;            // R
  const char* record_dir; // where a recording point writes its file (removed after)
  int max_contacts;       // host and cuda: contacts a world holds (0: every pair's slots)
  int max_candidates;     // host and cuda: candidate pairs a world tests (0: the default)
} fsBenchInputs;

/// One row of the table.
typedef struct fsBenchRow {
  char stepper[32]; // "cpu", "host:f32", "cuda:f64", "flygym"
  fsBenchPoint p;
  int peer;       // 1: a peer's row (bench/peers)
  int nthread;    // CPU threads (0: the GPU)
  char desc[512]; // the backend's description
  int nstep, repeats;
  double wsps_median, wsps_min, wsps_max; // world-steps/s over the repeats
  double realtime_median;
  fsBatchInfo cost;   // what the batch is and costs
  int problem_worlds; // in the last repeat
  double cpu_ratio;   // host points: the median over repeats of this repeat's world-steps/s
                      // over the cpu point's in the same turn (0: no cpu point beside it)
  double peer_ratio;  // CPU points: the same over a peer run in the turns (rollout; 0: none)
  int ok;             // 0: failed, error says why
  char error[512];
} fsBenchRow;

/// Measure point p (open the stepper, R x (warm-up + timed steps), close): the row
/// (ok 0 with the error when it failed). Returns 0, or the signal that interrupted it.
int fs_bench_point(const fsBenchInputs* in, const fsBenchPoint* p, fsBenchRow* out);

/// A point measured a repeat at a time, so that the repeats of several points can take
/// turns (fs_bench_point is open, R repeats, close): the CPU steppers' points of one
/// number of worlds run that way, so that a shared machine's slower and faster spells
/// fall on each of them alike and their ratios hold.
typedef struct fsBenchRun {
  const fsBenchInputs* in;
  fsBenchRow* out;
  fsReplay plan;
  fsReplayBatch rb;
  int planned, opened, failed; // what to undo; failed: out->error says why
  double* wsps;                // (R) world-steps/s of the repeats done
  int done;
  double lo, hi;
} fsBenchRun;

/// Open point p's stepper into run (its row: out). 0, or -1 with the row's error (close
/// the run all the same).
int fs_bench_open(const fsBenchInputs* in, const fsBenchPoint* p, fsBenchRow* out, fsBenchRun* run);

/// One timed repeat (warm-up + timed steps) of an open run: 0, or the signal that
/// interrupted it. A failure goes into the row (run->failed) and ends the run's repeats.
int fs_bench_repeat(fsBenchRun* run);

/// The row's figures from the repeats (ok 1 when all R ran), then the stepper closed.
void fs_bench_close(fsBenchRun* run);

/// The row's error (printf-style; truncated to fit).
void fs_bench_row_error(fsBenchRow* r, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/// "cpu", "host:f32", "cuda:f64" into out.
void fs_bench_stepper_name(const fsBenchPoint* p, char* out, size_t n);

/// The median of x (n values; x is reordered).
double fs_median(double* x, int n);

#endif
