// What every verb loads for a replay: the model, the clip and their binding.
#ifndef FLYSIM_COMMON_INPUTS_INPUTS_H
#define FLYSIM_COMMON_INPUTS_INPUTS_H

#include <mujoco/mujoco.h>

#include "common/inputs/model.h"
#include "common/inputs/targets.h"
#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Folder of the exported assets: $FLYSIM_ASSETS, else the build's default.
const char* fs_assets_dir(void);

/// The exported model of one of FlyGym's worlds (--world NAME): "flat" is the default
/// mesh.mjb (FlatGroundWorld), "flat_capsule" capsule.mjb, any other NAME
/// worlds/NAME.mjb of the assets (tethered, tethered_capsule, ...). An unknown NAME's
/// error lists the worlds there are.
int fs_world_model_path(const char* name, char* out, size_t n, fsError* err);

/// A replay's inputs, as every verb loads them: the model (MJCF or MJB) with the
/// disable flags added, the clip resampled to the model's timestep, and the binding
/// of the clip's columns to the model's actuators.
typedef struct fsReplayInputs {
  mjModel* m;
  fsTargets targets;
  fsReplayBinding bind;
} fsReplayInputs;

/// Load them (errors name the file and the fix). in may be freed after a failure.
int fs_replay_inputs_load(const char* model_path, const char* targets_path, int disable,
                          fsReplayInputs* in, fsError* err);
void fs_replay_inputs_free(fsReplayInputs* in);

#ifdef __cplusplus
}
#endif
#endif
