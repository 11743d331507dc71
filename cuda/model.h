// The batched stepper's model on the host: the check of what it implements, the
// conversion from mjModel (uploaded once to the device by cuda/device.h), and the
// descriptions of the model and data fields (cuda/fields.h) for loops over them.
#ifndef FLYSIM_CUDA_MODEL_H
#define FLYSIM_CUDA_MODEL_H

#include <mujoco/mujoco.h>

#include "common/error.h"
#include "cuda/fields.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Check that the stepper implements everything model m can do to the state.
/// Returns 0, or -1 with ONE error (naming model_path) that lists every
/// unsupported feature found and how to avoid each. What it lets through without
/// implementing it cannot change qpos/qvel: sensors, sites, cameras, lights,
/// visual and custom data, energy and fwdinv flags, inactive equality
/// constraints, tendons with no stiffness, damping, armature, actuator, limit or
/// friction loss, and geoms and pairs when contacts are disabled (mjDSBL_CONTACT
/// or mjDSBL_CONSTRAINT), adhesion actuators included (their moment is an average
/// over contacts, so with none they move nothing).
int fs_model_check(const mjModel* m, const char* model_path, fsError* err);

/// Build the stepper's model from mj (after fs_model_check): sizes, options,
/// arrays converted to fsReal, and the derived arrays. Host memory; free with
/// fs_model_free.
int fs_model_build(const mjModel* mj, const char* model_path, fsModel* m, fsError* err);
void fs_model_free(fsModel* m);

/// The model's and the data's fields (cuda/fields.h), in table order.
extern const fsFieldInfo fs_model_fields[];
extern const int fs_model_nfield;
extern const fsFieldInfo fs_data_fields[];
extern const int fs_data_nfield;

/// "kinematics", "com_pos", ... (fsStage); "state" for FS_STAGE_STATE.
const char* fs_stage_name(int stage);

#ifdef __cplusplus
}
#endif
#endif
