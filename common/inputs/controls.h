// A smooth control for any model (--targets sine): every actuator driven by its own sine,
// where a model has no clip of its own (the conformance test over dm_control's suite,
// `flysim compare --model` on a robot).
#ifndef FLYSIM_COMMON_INPUTS_CONTROLS_H
#define FLYSIM_COMMON_INPUTS_CONTROLS_H

#include <mujoco/mujoco.h>

#include "common/base/error.h"
#include "common/inputs/targets.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The --targets value that asks for the sine control instead of a clip file.
#define FS_TARGETS_SINE "sine"

/// Rows of the sine clip: FS_SINE_SECONDS at the model's timestep, within
/// [FS_SINE_MIN_ROWS, FS_SINE_MAX_ROWS]: as long as a verb's run may be, and worlds that
/// start at different rows (world w at row w x steps).
#define FS_SINE_SECONDS  20.0
#define FS_SINE_MIN_ROWS 20000
#define FS_SINE_MAX_ROWS 200000

/// The sine clip at m's timestep: column a is actuator a's control (its name the
/// actuator's, else "actuator a"), c + h sin(2 pi t / P + phi): c the middle of its control
/// range, h 0.8 of its half-width (a control without a range: the range of the joint a
/// position servo drives, else -1 to 1); periods P from 0.5 s to 1.5 s and phases phi
/// differing actuator by actuator (deterministic). A model without actuators gets a clip
/// of no columns (its passive dynamics). Bound by fs_replay_bind_controls.
int fs_targets_sine(const mjModel* m, fsTargets* t, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
