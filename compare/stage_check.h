// flysim compare --stages: common/parity/stages.h's check (each stage alone from MuJoCo's
// states, then one whole step; every field of every world) on the stepper a
// comparison ran (host or cuda, float32 or float64), each stage's worst element
// against the per-precision bounds of tests/engine.
#ifndef FLYSIM_COMPARE_STAGE_CHECK_H
#define FLYSIM_COMPARE_STAGE_CHECK_H

#include <stdint.h>

#include <mujoco/mujoco.h>

#include "common/base/error.h"

#define FS_STAGE_ROWS 40

/// One stage's worst element.
typedef struct fsStageRow {
  char stage[32]; // "kinematics", ..., "step" (whole steps)
  char field[48];
  double err, bound; // relative error (see common/parity/harness.h) and its bound
  int world, index;
  double ours, ref;
  int pass;
} fsStageRow;

typedef struct fsStageReport {
  char runner[64]; // "host float32", "cuda float64"
  int nworld;
  int nrow;
  fsStageRow rows[FS_STAGE_ROWS];
  int pass;
} fsStageReport;

typedef struct fsStageCheckSpec {
  const mjModel* m;
  const char* path;
  int gpu;  // 1: the device runner (cuda), 0: the host's
  int bits; // 32 or 64
  int nworld;
  uint64_t seed;
} fsStageCheckSpec;

/// Each stage alone from MuJoCo's states, then one whole step, in nworld worlds
/// (0: 8); the worst element of each stage (its error over its bound) into out.
int fs_stage_check(const fsStageCheckSpec* spec, fsStageReport* out, fsError* err);

#endif
