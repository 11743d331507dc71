// A replay run in-process for tests: model + targets + binding + plan + CPU
// stepper, optionally recorded to an HDF5 file that the test reads back.
#ifndef FLYSIM_TESTS_REPLAY_FIXTURE_H
#define FLYSIM_TESTS_REPLAY_FIXTURE_H

#include <mujoco/mujoco.h>

#include "common/replay/replay.h"
#include "src/cpu/replay_cpu.h"

/// Not copyable: the stepper points into the struct (its plan).
typedef struct Fixture {
  mjModel* m;
  fsTargets t;
  fsReplayBinding b;
  fsReplay plan;
  fsCpuReplay* cpu;
  fsRunResult res;
  char h5[512]; // the recorded file ("" if not recorded)
} Fixture;

/// Load and plan; returns 0 or prints the error and returns -1.
int fixture_open(Fixture* f, const char* model, const char* targets, int nworld, int nstep,
                 int nwarmup, int nthread);

/// Run (recording into h5 if not NULL); returns 0 or prints the error.
int fixture_run(Fixture* f, const char* h5);

void fixture_close(Fixture* f);

/// Read dataset name (T x N x C, float32) of a recorded file; malloc'd, dims in t,n,c.
float* fixture_read_series(const char* h5, const char* name, int* t, int* n, int* c);

#endif
