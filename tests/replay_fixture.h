// A replay run in-process for tests: model + targets + binding + plan + the cpu backend
// (MuJoCo's mj_step through the library), optionally recorded to an HDF5 file that the
// test reads back.
#ifndef FLYSIM_TESTS_REPLAY_FIXTURE_H
#define FLYSIM_TESTS_REPLAY_FIXTURE_H

#include <mujoco/mujoco.h>

#include "common/replay/replay.h"

/// Not copyable: the plan points into the struct.
typedef struct Fixture {
  mjModel* m;
  fsTargets t;
  fsReplayBinding b;
  fsReplay plan;
  fsReplayBatch rb; // opened by fixture_run (the model may be changed before)
  int nthread;
  fsRunResult res;
  char h5[512]; // the recorded file ("" if not recorded)
} Fixture;

/// Load and plan; returns 0 or prints the error and returns -1.
int fixture_open(Fixture* f, const char* model, const char* targets, int nworld, int nstep,
                 int nwarmup, int nthread);

/// Open the batch (from the model as it is now) and run it (recording into h5 if not
/// NULL); returns 0 or prints the error.
int fixture_run(Fixture* f, const char* h5);

/// Every world's status after the run (N, malloc'd).
fsWorldStatus* fixture_status(const Fixture* f);

/// Print the problem worlds and count them.
int fixture_report(const Fixture* f, int verbose_limit);

void fixture_close(Fixture* f);

/// World w's MuJoCo data (the cpu batch's).
mjData* fixture_world(const Fixture* f, int w);

/// Read dataset name (T x N x C, float32) of a recorded file; malloc'd, dims in t,n,c.
float* fixture_read_series(const char* h5, const char* name, int* t, int* n, int* c);

#endif
