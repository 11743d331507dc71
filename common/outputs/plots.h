// The replay's plots: which series they show (written into the HDF5 file, so that
// tests check numbers rather than pixels) and the script that draws them.
//
// /plots/tracking_error  (every world; written by common/outputs/replay_outputs.c):
//   rms (N x A) rad: each world's RMS of target - simulated angle per DoF,
//   dof_names (A); attribute steps.
// /plots/joint_tracking  (world 0, the DoFs of one leg; FlyGym's
//                         plot_joint_angle_tracking):
//   time (T) s, target (T x K) rad, simulated (T x K) rad, dof_names (K),
//   target_column (K) and joint_column (K): the columns of /target and /qpos_joint
//   copied; attributes leg, world.
// /pose                  (world 0; FlyGym's plot_pose_over_time):
//   points (T x P x 3) float32 world positions (see fsPose), time (T),
//   point_names (P), point_leg (P) index into leg_names or -1,
//   leg_names (L); attribute source ("site_xpos": the model's sites, as FlyGym's
//   leg joint sites; "xpos": body origins when the model has no sites).
//
// scripts/plot_replay.py reads only these groups and writes
// joint_angle_tracking.{png,pdf}, pose_over_time.{png,pdf} and
// tracking_error.{png,pdf} (median and spread over worlds per DoF). flysim runs it with
// the venv's Python found at build time (FLYSIM_PYTHON overrides it;
// FLYSIM_PLOT_SCRIPT overrides the script).
//
// Legs are named by the joints (common/inputs/legs.h).
#ifndef FLYSIM_COMMON_OUTPUTS_PLOTS_H
#define FLYSIM_COMMON_OUTPUTS_PLOTS_H

#include <stddef.h>

#include <hdf5.h>
#include <mujoco/mujoco.h>

#include "common/base/error.h"
#include "common/inputs/model.h"
#include "common/inputs/legs.h"
#include "common/replay/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/// --plot-leg: asked ("" = "lf" if the model has it, else its first leg) checked
/// against the model; the leg into leg. Usage error naming the legs there are.
int fs_plot_leg_resolve(const fsReplayBinding* b, const char* model_path, const char* asked,
                        char* leg, size_t n, fsError* err);

/// World 0's positions of the model's sites (or bodies) at every replay step: the
/// recorded /site_pos of world 0 (common/replay/record.h), as FlyGym's
/// get_site_positions reads them after sim.step().
typedef struct fsPose {
  const fsRecordLayout* rec; // the points (rec->npoint, their names and source)
  long long nstep;           // T allocated
  float* points;             // (T x P x 3)
} fsPose;

int fs_pose_init(fsPose* p, const fsRecordLayout* rec, long long nstep, fsError* err);
void fs_pose_free(fsPose* p);

/// Write /pose (nstep rows) and /plots/joint_tracking (read back from the file's
/// /qpos_joint and /target, nstep rows of world 0) into the open file.
int fs_plots_write_h5(hid_t file, const char* path, const mjModel* m, const fsReplayBinding* b,
                      const char* leg, const fsPose* pose, long long nstep, double timestep,
                      fsError* err);

/// Run the plot script on the closed file h5path, writing into dir. Errors say
/// that the data are saved and how to draw the plots later.
int fs_plots_run(const char* h5path, const char* dir, fsError* err);

/// Run `python script h5path dir` (FLYSIM_PYTHON, else the build's venv Python),
/// its output into dir/<script name>.log (removed on success). Errors say the data
/// are saved in h5path and the fix: a Python with matplotlib, or `instead`.
int fs_plot_script_run(const char* script, const char* h5path, const char* dir, const char* instead,
                       fsError* err);

/// The Python that runs flysim's scripts: FLYSIM_PYTHON, else the venv's found at
/// build time (else python3 on PATH).
const char* fs_python(void);

/// The path of scripts/<name> in the source tree flysim was built from.
const char* fs_script_path(const char* name, char* out, size_t n);

/// The path of rel (e.g. "bench/peers/flygym_cpu.py") in that source tree.
const char* fs_source_path(const char* rel, char* out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
