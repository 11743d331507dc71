// `flysim replay --backend cpu --profile PATH`: a sampling profile of the timed
// loop alone, with native stacks (MuJoCo's mj_step and everything under it).
//
// How: before the run, flysim starts
//
//   perf record -e cpu-clock:u -F 999 --call-graph dwarf,16384 -p <flysim's pid>
//               --delay=-1 --control fd:3,4 --no-buildid-cache
//               -o <PATH's folder>/perf.data.flysim-<pid>
//
// in its own process group (a Ctrl-C stops the run, not perf), with its events
// disabled, and waits for perf's answer to a `ping` on the control pipe (fds 3 and
// 4 are pipes, no FIFOs on disk). perf starts after ffmpeg (the video), so that it
// does not follow that child; the rendering threads (Mesa's llvmpipe) are flysim's
// own and are sampled with the rest. The replay
// driver's hooks then send `enable` right before the timed loop starts and
// `disable` right after it ends (fs_perf_enable/disable wait for perf's ack), so
// model loading, warm-up and saving are never sampled. fs_perf_finish stops perf,
// runs `perf script --no-inline` and writes PATH: speedscope JSON when PATH ends
// in ".json", else perf script's text (which speedscope also opens). The raw
// perf.data (about 16 KiB per sample: ~16 MB per second and busy thread) is deleted
// unless FLYSIM_PERF_KEEP_DATA=1. perf 6.1 aborts its file if its control pipe
// closes before it stops, so perf gets SIGINT first and the pipes close after.
//
// Why DWARF stacks: the mujoco wheel's libmujoco is built without frame pointers,
// so --call-graph fp loses every caller of the leaf function. With dwarf, perf
// copies 16 KiB of user stack per sample and unwinds it afterwards from the
// libraries' .eh_frame; 16 KiB reaches mj_step in about 99% of NeuroMechFly's
// samples (8 KiB: 98.7%, 4 KiB: 48%: MuJoCo's collision and solver frames are large).
//
// Why cpu-clock:u: a software event every kernel offers (also in VMs without a
// PMU), user space only, so that it works with perf_event_paranoid <= 2 as a normal
// user, and the profile holds the same frames everywhere.
//
// Environment: FLYSIM_PERF (the perf binary; default: perf on PATH),
// FLYSIM_PERF_FREQ (samples per second, default 999), FLYSIM_PERF_CALL_GRAPH
// (perf's --call-graph, default dwarf,16384), FLYSIM_PERF_KEEP_DATA=1.
#ifndef FLYSIM_COMMON_PROFILING_PERF_PROFILE_H
#define FLYSIM_COMMON_PROFILING_PERF_PROFILE_H

#include <stdio.h>

#include <mujoco/mujoco.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsPerf fsPerf;

/// Before anything else runs: check that perf exists and that this process may be
/// sampled (perf_event_open on itself: perf_event_paranoid, seccomp, containers),
/// and that output's folder can be created. Errors name the cause and the fix.
int fs_perf_probe(const char* output, fsError* err);

/// Start perf record on this process, events disabled; returns once perf is
/// attached and listening, or NULL with err (perf's own message included).
fsPerf* fs_perf_start(const char* output, fsError* err);

/// Switch sampling on / off (waits for perf's acknowledgement).
int fs_perf_enable(fsPerf* p, fsError* err);
int fs_perf_disable(fsPerf* p, fsError* err);

/// What a profile says about MuJoCo's phases (common/profiling/perf_phases.h).
typedef struct fsPerfResult {
  long long samples;            // all samples, all threads
  long long step_samples;       // samples with mj_step on the stack
  double phase_share[mjNTIMER]; // share of step_samples in each timer phase (-1: n/a)
} fsPerfResult;

/// Stop perf, convert its data into the output file and print (to out) the sample
/// counts per thread, the hottest functions and how to open the file; fill res (if
/// not NULL). Frees p.
int fs_perf_finish(fsPerf* p, FILE* out, fsPerfResult* res, fsError* err);

/// Stop perf and delete its data (after a failed run). Frees p. Safe with NULL.
void fs_perf_abort(fsPerf* p);

#ifdef __cplusplus
}
#endif
#endif
