// flysim bench's peers: what a user would run instead, on the same exported model
// and clip, in the same run (bench/peers/*.py; each prints flysim's summary line).
//   flygym   FlyGym's own CPU loop (bench/peers/flygym_cpu.py): MuJoCo's mj_step
//            through FlyGym's Simulation, one Python thread
//   mjx      MuJoCo MJX on JAX's default device (bench/peers/mjx.py): the GPU peer a
//            MuJoCo user would pick; it cannot take the fly as exported, so it runs it
//            without adhesion, contact margins and noslip (the script says so)
//   rollout  MuJoCo's own batch on CPU threads (bench/peers/rollout.py: mujoco.rollout),
//            from the state the bench's worlds settle to, with the clip's controls; run a
//            rollout a turn of the CPU points' repeats (app/bench_cmd.c)
#ifndef FLYSIM_BENCH_PEERS_H
#define FLYSIM_BENCH_PEERS_H

#include "bench/sweep.h"

/// 1 if name is a known peer.
int fs_bench_peer_known(const char* name);

/// "flygym, mjx" (the names).
const char* fs_bench_peer_names(void);

/// 1 if the peer runs on a GPU (it is run at the GPU points' worlds).
int fs_bench_peer_on_gpu(const char* name);

/// 1 if the peer takes the model's path (mjx, rollout), else FlyGym's variant name.
int fs_bench_peer_takes_path(const char* name);

/// Run peer `name` at nworld worlds x nstep steps on `model` (flygym: the variant,
/// "mesh" or "capsule"; mjx, rollout: the model's path), `repeats` timed runs where the
/// peer takes --repeat (1: the option not given), and the peer's own options `extra`
/// (NULL-terminated, or NULL): its row (ok 0 with the error, naming the script, its log and
/// the fix, when it failed). log_dir holds the peer's output (<name>.log).
void fs_bench_peer(const char* name, int nworld, int nstep, int repeats, const char* model,
                   const char* const* extra, const char* log_dir, fsBenchRow* out);

#endif
