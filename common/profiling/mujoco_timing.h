// `--mujoco-timing`: MuJoCo's own per-phase timers (mjData.timer).
//
// MuJoCo counts every phase of mj_step in mjData.timer[mjtTimer] (calls and
// cumulative duration), but durations stay zero unless the global callback
// mjcb_time returns a clock. fs_mjtiming_install sets it to a monotonic clock in
// seconds; the durations then include the callback's own cost (two clock reads per
// phase), so the table is a relative breakdown, not an absolute throughput figure.
//
// The phases nest as mj_step calls them (engine_forward.c):
//   step
//     forward
//       position: pos_kinematics, pos_inertia, pos_collision (col_broadphase,
//                 col_narrowphase), pos_make, pos_project
//       velocity, actuation, constraint
//     advance
// Names are MuJoCo's mjTIMERSTRING; only the nesting is ours (fs_mjtiming_parent).
#ifndef FLYSIM_COMMON_PROFILING_MUJOCO_TIMING_H
#define FLYSIM_COMMON_PROFILING_MUJOCO_TIMING_H

#include <stdio.h>

#include <hdf5.h>
#include <mujoco/mujoco.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Timers summed over worlds (and so over threads).
typedef struct fsMjTiming {
  double seconds[mjNTIMER];  // cumulative duration of each phase
  long long calls[mjNTIMER]; // times each phase ran
  int nworld;                // worlds summed
} fsMjTiming;

/// Set mjcb_time to a monotonic clock in seconds (process-wide), or clear it.
void fs_mjtiming_install(void);
void fs_mjtiming_uninstall(void);

/// Zero d->timer (call after the warm-up so that the table covers the timed loop).
void fs_mjtiming_zero(mjData* d);

/// Add d->timer to t.
void fs_mjtiming_add(fsMjTiming* t, const mjData* d);

/// The phase that timer i is part of (an mjtTimer), or -1 for step and inverse.
int fs_mjtiming_parent(int i);

/// Nesting depth of timer i (step: 0).
int fs_mjtiming_depth(int i);

/// Print the nested table: phase, calls, total ms, us per world-step, % of step;
/// rows "(other)" hold each parent's time outside its timed children.
void fs_mjtiming_print(const fsMjTiming* t, FILE* out);

/// Write group /mujoco_timing into an open file: phase_names (mjTIMERSTRING),
/// parent, calls, seconds (one entry per mjtTimer), attributes world_steps, nworld
/// and a note on the callback's overhead. path names the file in errors.
int fs_mjtiming_write_h5(const fsMjTiming* t, hid_t file, const char* path, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
