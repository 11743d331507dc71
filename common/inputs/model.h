// The model loader (MJCF or MJB through MuJoCo's C API) and the check that a
// model has what a replay needs.
#ifndef FLYSIM_COMMON_INPUTS_MODEL_H
#define FLYSIM_COMMON_INPUTS_MODEL_H

#include <mujoco/mujoco.h>

#include "common/base/error.h"
#include "common/inputs/targets.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Load a model: MJB if the file name ends in .mjb, MJCF otherwise. MuJoCo's own
/// error text is passed on with the file name. Free with mj_deleteModel.
mjModel* fs_model_load(const char* path, fsError* err);

/// Round every real of m (its arrays, timestep and gravity) to float32: the model a
/// float32 stepper holds (flysim compare's f32-step floor).
void fs_model_round_to_float(mjModel* m);

/// How a replay drives and reads a model: which actuator each target column
/// drives, which actuators are adhesion, which joints are recorded.
typedef struct fsReplayBinding {
  int nact;                    // A: target columns
  int* actuator;               // (A) actuator id driven by each target column
  int* actuator_joint;         // (A) index into the recorded joints of the driven joint, -1:
                               // none (fs_replay_bind_controls' other actuators)
  const char** actuator_names; // (A) the model's actuator names (owned by the model)
  int nadhesion;               // adhesion actuators (body transmission), switched on
  int* adhesion;               // (nadhesion) actuator ids
  int njoint;                  // J: recorded 1-DoF joints (hinge, slide), model order
  int* joint_id;               // (J) joint ids
  int* joint_qposadr;          // (J) qpos address of each
  const char** joint_names;    // (J) the model's joint names (owned by the model)
  int key;                     // keyframe each world resets to ("neutral", else 0); -1: qpos0
} fsReplayBinding;

/// Bind targets to a model: for every target DoF name, the position actuator whose
/// joint has that name (exactly, or after the fly's "prefix/"). Lists every DoF
/// that has no such actuator. model_path names the model in errors.
int fs_replay_bind(const mjModel* m, const char* model_path, const fsTargets* t, fsReplayBinding* b,
                   fsError* err);

/// Bind a clip of one column per actuator, in order (the sine control,
/// common/inputs/controls.h): column a drives actuator a whatever its kind; the recorded
/// joints, adhesion actuators and keyframe as fs_replay_bind's; actuator_joint[a] the
/// recorded joint that a position servo drives, else -1 (a column nothing tracks).
int fs_replay_bind_controls(const mjModel* m, const fsTargets* t, fsReplayBinding* b, fsError* err);

/// The clip's columns that drive a recorded joint's angle (actuator_joint >= 0): what
/// tracking (|joint angle - target|) is measured over.
int fs_replay_tracked_columns(const fsReplayBinding* b);

void fs_replay_binding_free(fsReplayBinding* b);

/// A world's start, as FlyGym's Simulation.reset + set_leg_adhesion_states(ones):
/// the binding's keyframe (or qpos0), every adhesion actuator's control at 1.
void fs_replay_reset_world(const mjModel* m, const fsReplayBinding* b, mjData* d);

/// True if actuator i is a position servo: joint transmission, fixed gain kp,
/// affine bias (0, -kp, -kv).
int fs_actuator_is_position(const mjModel* m, int i);

/// How many of m's actuators are position servos.
int fs_position_actuators(const mjModel* m);

#ifdef __cplusplus
}
#endif
#endif
