// What a replay records, and where each recorded column comes from.
//
// A replay records, for every world after every step, the series that --record
// selects (one HDF5 dataset each, (T x N x C), common/recorder/recorder.h):
//
//   angles   /qpos_joint      (J)    hinge/slide joint positions after the step (qpos)
//   targets  /target          (A)    the target each position actuator had in the step
//                                    (its ctrl: 0 after MuJoCo reset a bad world)
//   forces   /actuator_force  (A)    those actuators' forces in the step (actuator_force),
//                                    FlyGym's get_actuator_forces
//   sites    /site_pos        (3P)   the model's sites (its anatomical joint sites:
//                                    FlyGym's get_site_positions; body origins when the
//                                    model has no site), x y z per point (site_xpos)
//   thorax   /thorax_pos      (3)    the root body's origin: the body of the model's
//                                    free joint, else body 1 (xpos)
//   orientation /thorax_quat  (4)    the root body's orientation (xquat, w x y z)
//   qpos     /qpos            (nq)   the whole state after the step
//   qvel     /qvel            (nv)
//   adhesion /adhesion_force  (D)    the adhesion actuators' forces in the step
//   iterations /solver_iterations (2) the step's Newton and noslip iterations, summed
//                                    over its islands
//   legs     /leg_contact_force (3L) each leg's ground contact force (world frame, x y
//                                    z per leg): its contacts' constraint forces (MuJoCo's
//                                    mj_contactForce, pyramids decoded), summed
//   sensors  /sensordata      (S)    the model's sensors (MuJoCo's sensordata: cpu, and
//                                    host where it computes them all), columns named by
//                                    /sensor_names ("name" or "name[k]")
//
// replay --save-data records the first five by default (FlyGym's series and the
// targets); flysim generate what its spec asks.
//
// site_xpos and xpos are what mj_step computed at the start of the step (MuJoCo's
// kinematics run first): what FlyGym reads after sim.step(). Each series is one of the
// batch's recordings (fs_batch_add_recording): column c is element index[c] of the
// source src[c] in a world's data, so that every backend records the same thing.
//
// The video's worlds (fsReplay.nrender, the first K) also keep their whole qpos at
// every step of a block (fsBlock.render_qpos); the outputs pick the frames.
#ifndef FLYSIM_COMMON_REPLAY_RECORD_H
#define FLYSIM_COMMON_REPLAY_RECORD_H

#include <stddef.h>

#include <mujoco/mujoco.h>

#include "common/base/error.h"
#include "common/inputs/model.h"
#include "common/recorder/recorder.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The series a replay can record, one definition each.
typedef enum fsSeriesId {
  FS_SERIES_QPOS_JOINT = 0, // angles
  FS_SERIES_TARGET,         // targets
  FS_SERIES_ACTUATOR_FORCE, // forces
  FS_SERIES_SITE_POS,       // sites
  FS_SERIES_THORAX_POS,     // thorax
  FS_SERIES_THORAX_QUAT,    // orientation
  FS_SERIES_QPOS,           // qpos
  FS_SERIES_QVEL,           // qvel
  FS_SERIES_ADHESION,       // adhesion
  FS_SERIES_ITERATIONS,     // iterations
  FS_SERIES_LEG_FORCE,      // legs
  FS_SERIES_SENSORS,        // sensors
  FS_NSERIES
} fsSeriesId;

#define FS_RECORD_ALL            ((1u << FS_NSERIES) - 1u)
#define FS_RECORD_REPLAY_DEFAULT ((1u << (FS_SERIES_THORAX_POS + 1)) - 1u)

/// The selected series and the source of each of their columns.
typedef struct fsRecordLayout {
  unsigned mask;        // selected series (bit k: fsSeriesId k)
  int ncol[FS_NSERIES]; // C_k of each series (0 when not selected)
  int col0[FS_NSERIES]; // first column of series k in src/index
  int ncol_total;       // sum of C_k over the selected series
  const char** src;     // (ncol_total) the source of each column (a recording's source:
                        // include/flysim/flysim.h fsRecordOptions)
  int* index;           // (ncol_total) index into that source
  int npoint;           // P: points of /site_pos
  int points_are_sites; // 1: site_xpos; 0: body origins 1..nbody-1 (no sites)
  int root_body;        // the body of /thorax_pos
  int nleg;             // L: legs (the actuated joints' legs, fs_leg_list)
  char leg_names[16][8];
  int* geom_leg; // (ngeom) the leg of each geom's body, or -1
} fsRecordLayout;

#define FS_RECORD_MAX_LEGS 16

/// --record: a comma-separated list of series names (angles, targets, forces, sites,
/// thorax, orientation, qpos, qvel, adhesion, iterations, legs, sensors; or all, none) into a
/// mask.
/// Usage error
/// naming the choices.
int fs_record_parse(const char* list, unsigned* mask, fsError* err);

/// "angles,targets,forces,sites,thorax" for a mask ("none" for 0).
void fs_record_names(unsigned mask, char* out, size_t n);

/// Build the layout of mask for model m and binding b.
int fs_record_layout_build(const mjModel* m, const fsReplayBinding* b, unsigned mask,
                           fsRecordLayout* out, fsError* err);
void fs_record_layout_free(fsRecordLayout* l);

/// The recorder's description of series k (dataset, columns, units, doc).
fsSeriesSpec fs_record_series_spec(const fsRecordLayout* l, int k);

/// Names of the P points of /site_pos (the model's site or body names).
const char* fs_record_point_name(const mjModel* m, const fsRecordLayout* l, int p);

#ifdef __cplusplus
}
#endif
#endif
