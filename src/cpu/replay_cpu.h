// The CPU reference stepper: one mjData per world, stepped with MuJoCo's own
// mj_step, worlds spread over a pool of threads (each thread a contiguous range).
#ifndef FLYSIM_CPU_REPLAY_CPU_H
#define FLYSIM_CPU_REPLAY_CPU_H

#include <mujoco/mujoco.h>

#include "common/replay/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsCpuReplay fsCpuReplay;

/// Worlds for replay r on nthread threads (capped at the number of worlds; 0 means
/// one per core). r must outlive the stepper.
fsCpuReplay* fs_cpu_create(const fsReplay* r, int nthread, fsError* err);
void fs_cpu_destroy(fsCpuReplay* c);

/// Threads actually used.
int fs_cpu_threads(const fsCpuReplay* c);

/// World w's MuJoCo data (for tests and tools; not while a block runs).
mjData* fs_cpu_world(fsCpuReplay* c, int w);

/// Called on the thread that steps world 0, after each of its replay steps (not
/// the warm-up), with world 0's data and the replay step (0-based): world 0's
/// pose and video frames (common/outputs/replay_outputs.h). Must not step d.
typedef void (*fsCpuWorldHook)(void* arg, const mjData* d, int step);

/// Install (or with fn NULL remove) the world-0 hook; not while a block runs.
void fs_cpu_set_world0_hook(fsCpuReplay* c, fsCpuWorldHook fn, void* arg);

/// The backend interface (warm-up, blocks, world health) for fs_replay_run.
extern const fsBackendOps fs_cpu_ops;

#ifdef __cplusplus
}
#endif
#endif
