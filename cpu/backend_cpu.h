// The cpu backend (common/api/backend.h's fs_cpu_open, fs_cpu_ops): MuJoCo's own mj_step,
// one mjData a world, the worlds on the worker pool (each thread a contiguous range).
// Also what the backend reads from MuJoCo's data after a step, for whoever compares
// with it: the solver's iterations and the contact force on a group of geoms.
#ifndef FLYSIM_CPU_BACKEND_CPU_H
#define FLYSIM_CPU_BACKEND_CPU_H

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Newton iterations of island `island` in d's last step: MuJoCo keeps one statistics
/// entry per solver iteration, Newton's with line-search evaluations, noslip's without.
int fs_cpu_newton_iterations(const mjData* d, int island);

/// The last step's Newton (it[0]) and noslip (it[1]) iterations, summed over its islands
/// (one island when MuJoCo made none but has constraint rows); returns 1 if some island's
/// Newton solve ran to m->opt.iterations.
int fs_cpu_solver_iterations(const mjModel* m, const mjData* d, int it[2]);

/// The contact force on each geom group in the world frame, added into out (3 x groups:
/// out[3 g + axis]): every contact's mj_contactForce (on geom 1 from geom 0) rotated to
/// the world frame, counted on the side of its geom in a group (geom 1's when both are,
/// negated for geom 0's), summed in double. geom_group (ngeom): each geom's group, -1:
/// none.
void fs_cpu_group_forces(const mjModel* m, const mjData* d, const int* geom_group, double* out);

#ifdef __cplusplus
}
#endif
#endif
