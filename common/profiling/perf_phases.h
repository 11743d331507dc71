// The two views of a CPU replay side by side: MuJoCo's per-phase timers
// (--mujoco-timing) and the sampling profile (--profile), phase by phase.
//
// A phase of mjData.timer is run by a few MuJoCo functions; a profile sample is in
// phase i when one of them is on its stack (and, for a sub-phase, its parent phase
// too: mj_factorI under mj_EulerSkip is not inertia). The names are MuJoCo 3.16's as
// perf sees them in the wheel's libmujoco, ".llvm.<hash>" suffixes removed:
// link-time optimisation renamed mj_fwdConstraint to fwdConstraint(Stage), and tail
// calls hide some callers (mj_makeARNumeric shows up under mj_fwdPosition, not under
// mj_projectConstraint), so such callees are listed with their phase. Phases with no
// function listed (broad- and narrow-phase, run through mju_dispatch) are not compared.
#ifndef FLYSIM_COMMON_PROFILING_PERF_PHASES_H
#define FLYSIM_COMMON_PROFILING_PERF_PHASES_H

#include <stdio.h>

#include <mujoco/mujoco.h>

#include "common/profiling/mujoco_timing.h"
#include "common/profiling/perf_script.h"

#ifdef __cplusplus
extern "C" {
#endif

/// MuJoCo functions that run timer phase i (NULL-terminated; empty if not mapped).
const char* const* fs_perf_phase_functions(int i);

/// For each timer phase, the share of the samples with mj_step on the stack whose
/// stack is in that phase (-1 where no function is mapped); the count of samples
/// with mj_step into *nstep_samples.
void fs_perf_phase_shares(const fsPerfProfile* p, double share[mjNTIMER], long long* nstep_samples);

/// Print the timer's share of the step next to the profile's, phase by phase.
void fs_perf_phase_print(const fsMjTiming* t, const double share[mjNTIMER], long long nstep_samples,
                         FILE* out);

#ifdef __cplusplus
}
#endif
#endif
