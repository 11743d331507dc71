// The legs of a model, named by its joints: the leg of "nmf/c_thorax-lf_coxa-yaw" is "lf"
// (the part before '_' of the last '-'-separated token with a '_' in the last '/'
// component); NeuroMechFly's legs are lf lm lh rf rm rh, tests/models/walker.xml's l and r.
// The plots and the recorded points group by them.
#ifndef FLYSIM_COMMON_INPUTS_LEGS_H
#define FLYSIM_COMMON_INPUTS_LEGS_H

#include <stddef.h>

#include "common/inputs/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The leg a joint, site or body name belongs to ("" if none).
void fs_leg_of(const char* name, char* leg, size_t n);

/// Target columns of b that drive a joint of leg, in target order; returns how many.
int fs_leg_columns(const fsReplayBinding* b, const char* leg, int* cols, int max);

/// The legs among b's actuated joints, space-separated, in order of appearance.
void fs_leg_list(const fsReplayBinding* b, char* out, size_t n);

#ifdef __cplusplus
}
#endif

#endif // FLYSIM_COMMON_INPUTS_LEGS_H
