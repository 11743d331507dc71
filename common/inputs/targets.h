// Replay targets: the actuated DoFs' target angles over time, read from HDF5.
//
// File layout (what scripts/export_assets.py writes):
//   /targets    (T x A) float32 or float64, radians
//   /dof_names  (A) strings, the DoF each column drives (a joint name of the model
//               without the fly's prefix, e.g. "c_thorax-lf_coxa-yaw")
//   attribute `timestep` (seconds between rows) on the file or on /targets
#ifndef FLYSIM_COMMON_INPUTS_TARGETS_H
#define FLYSIM_COMMON_INPUTS_TARGETS_H

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Target angles, row-major (T x A), at a uniform timestep.
typedef struct fsTargets {
  int nstep;              // T: rows
  int ndof;               // A: columns
  double timestep;        // seconds between rows
  double* value;          // (T x A) radians
  char** names;           // (A) DoF names
  char* path;             // the file they came from
  double source_timestep; // the file's timestep (differs from timestep if resampled)
} fsTargets;

/// Read and validate a targets file. Errors name the file, the dataset and the fix.
int fs_targets_load(const char* path, fsTargets* t, fsError* err);

/// Resample to `timestep` (cubic, as FlyGym) unless already at it. The new length
/// covers the same duration (numpy.arange(0, T * dt, timestep)).
int fs_targets_resample(fsTargets* t, double timestep, fsError* err);

/// Free what fs_targets_load allocated; t is zeroed.
void fs_targets_free(fsTargets* t);

#ifdef __cplusplus
}
#endif
#endif
