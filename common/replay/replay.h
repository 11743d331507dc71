// The replay: a client of the library (include/flysim/flysim.h) that plays a clip.
//
// A replay plan fixes the model, the targets (at the model's timestep), the number of
// worlds N and of steps S, and where in the clip each world starts. fs_replay_open opens
// the plan's worlds as a batch on a backend (cpu, host or cuda) with the plan's
// recordings; fs_replay_run resets and warms the worlds up, sets the clip as the batch's
// control sequence and steps it a block at a time, overlapping each block's stepping with
// writing the previous block to HDF5; it prints progress, honours Ctrl-C (between blocks)
// and measures throughput.
#ifndef FLYSIM_COMMON_REPLAY_REPLAY_H
#define FLYSIM_COMMON_REPLAY_REPLAY_H

#include <flysim/flysim.h>
#include <mujoco/mujoco.h>

#include "common/base/error.h"
#include "common/inputs/inputs.h"
#include "common/recorder/recorder.h"
#include "common/replay/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/// What a run replays.
typedef struct fsReplay {
  const mjModel* m;
  const char* model_path;
  const fsTargets* targets; // (T x A) at m->opt.timestep
  const fsReplayBinding* bind;
  int nworld;         // N
  int nstep;          // S: timed, recorded steps
  int nwarmup;        // steps before the clock, at the keyframe's controls
  long* world_start;  // (N) target row of each world's first step
  fsRecordLayout rec; // what the blocks record (common/replay/record.h): nothing by default
  int nrender;        // K: worlds 0..K-1 keep their whole qpos every step (the video)
  int max_contacts;   // contacts a world of flysim's stepper (host, cuda) holds, and the
                      // rows they make (--max-contacts); 0: every pair's slots. MuJoCo's
                      // cpu stepper grows its arena instead (no such bound)
  int max_candidates; // candidate pairs a world of flysim's stepper tests where pairs are
                      // culled (--max-candidates); 0: the default bound
  // Per-world variation (flysim generate); NULL in a replay:
  int (*setup)(void* arg, fsBatch b, fsError* err);       // once, after the batch opens:
                                                          // per-world parameters
  int (*init_worlds)(void* arg, fsBatch b, fsError* err); // after each reset: the worlds'
                                                          // own start (through the views)
  void* arg;
} fsReplay;

/// The most steps a replay runs (--sim-steps, --sim-duration-sec, --warmup-sec).
#define FS_REPLAY_MAX_STEPS (1L << 30)

/// Steps that `seconds` take at the model's `timestep`, rounded to the nearest, for the
/// option or spec key `what` (e.g. "--warmup-sec"): an error naming it, the steps it asks
/// for and the most seconds allowed when they are more than `max` (at most INT_MAX), or
/// when seconds / timestep is not a finite number.
int fs_steps_of_seconds(const char* what, double seconds, double timestep, long max, int* steps,
                        fsError* err);

/// Fill r: world w starts at row (w mod floor(T / S)) * S -- FlyGym's GPU script's
/// slices: (w * S) mod T when S divides T, never running past the clip's end.
/// Errors (as usage errors) if S > T or N < 1.
int fs_replay_plan(fsReplay* r, const mjModel* m, const char* model_path, const fsTargets* t,
                   const fsReplayBinding* b, int nworld, int nstep, int nwarmup, fsError* err);
void fs_replay_plan_free(fsReplay* r);

/// Record the series of mask (fsSeriesId bits; 0: none), and the whole qpos of
/// worlds 0..nrender-1 (capped at N). Before the backend is created.
int fs_replay_set_record(fsReplay* r, unsigned mask, int nrender, fsError* err);

/// Steps [step0, step0 + nstep) of a run, with buffers for the recorded series.
typedef struct fsBlock {
  int step0;
  int nstep;                 // requested
  int ndone;                 // completed by every world (set by the backend)
  float* series[FS_NSERIES]; // (nstep x N x C_k) each selected series, else NULL (all NULL
                             // when not recording)
  float* render_qpos;        // (nstep x K x nq) qpos of worlds 0..K-1 (K = fsReplay.nrender),
                             // or NULL
} fsBlock;

/// A world's health after a run, in the replay's steps (fsWorldHealth, with the step of
/// its first warning counted from the replay's first step).
typedef struct fsWorldStatus {
  int warnings[mjNWARNING]; // MuJoCo's warning counters
  int first_warning_step;   // replay step (negative: during warm-up), or INT_MIN
  int first_warning;        // mjtWarning of that first warning, or -1
  int fatal;                // a MuJoCo error stopped this world (cpu)
  int solver_limit;         // steps whose Newton solve (an island's) ran to opt.iterations
  int solver_error;         // steps whose solve failed (the GPU stepper's rank-deficient
                            // Hessian, where MuJoCo would stop with an error)
  int peak_contacts;        // the most contacts the world's collision made in one step
                            // (kept or not: what --max-contacts must hold), warm-up included
} fsWorldStatus;

/// A plan's worlds opened as a batch, with the plan's recordings: one per recorded series
/// and one of the video's worlds' qpos.
typedef struct fsReplayBatch {
  fsBatch b;
  fsBatchInfo info;           // backend, precision, threads, costs, description
  int bits;                   // its real: 64 (cpu, or f64) or 32
  int rec_series[FS_NSERIES]; // series k's recording, or -1
  int rec_render;             // the video's worlds' recording, or -1
  int64_t step0;              // the batch's step count at the warm-up's first step
} fsReplayBatch;

/// Open plan r on a backend (bits: flysim's real; the cpu is float64) with nthread CPU
/// threads (0: one per core). The error names the fix when the backend is missing here.
int fs_replay_open(const fsReplay* r, fsBackendKind kind, int bits, int nthread, fsReplayBatch* out,
                   fsError* err);

/// Close (rb may be zeroed or already closed).
void fs_replay_close(fsReplayBatch* rb);

/// Every world's status (N).
int fs_replay_health(const fsReplay* r, const fsReplayBatch* rb, fsWorldStatus* out, fsError* err);

/// Every world's qpos (N x nq) in double and contact count (N), after the last step.
int fs_replay_read_worlds(const fsReplay* r, const fsReplayBatch* rb, double* qpos, int* ncon,
                          fsError* err);

/// How flysim compare perturbs a stepper's state for its floor (fs_replay_perturb).
typedef enum fsPerturb {
  FS_PERTURB_ROUND_F32 = 0,     // rounded to the nearest float32 (in a float32 stepper: no
                                // change)
  FS_PERTURB_ULP = 1,           // moved one ulp of the stepper's real, up or down
  FS_PERTURB_STOCHASTIC_F32 = 2 // rounded to one of the two float32 values around it, the
                                // upper with the odds of its distance from the lower
                                // (stochastic rounding: unbiased; in a float32 stepper: no
                                // change)
} fsPerturb;

/// Perturb world w's qpos and qvel as how[w] (fsPerturb; N) in the batch's real, element k
/// of world w up if fs_perturb_up(seed, w, k) else down, or rounded up if
/// fs_perturb_uniform(seed, w, k) is below its distance from the float32 below over their
/// gap (qvel's elements after qpos's).
int fs_replay_perturb(const fsReplay* r, const fsReplayBatch* rb, const int* how, unsigned seed,
                      fsError* err);

/// A hash of perturbation number seed, world w and element k, so that every backend moves
/// the same elements the same way.
static inline unsigned fs_perturb_hash(unsigned seed, unsigned w, unsigned k) {
  unsigned h = seed * 0x9E3779B1u ^ w * 0x85EBCA77u ^ k * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

/// 1 if element k of world w moves up (else down) in perturbation number seed.
static inline int fs_perturb_up(unsigned seed, unsigned w, unsigned k) {
  return (int)(fs_perturb_hash(seed, w, k) >> 31);
}

/// A number in [0, 1) for element k of world w in perturbation number seed (24 bits).
static inline double fs_perturb_uniform(unsigned seed, unsigned w, unsigned k) {
  unsigned h = fs_perturb_hash(seed, w, k);
  h *= 0x297A2D39u; // one more round: the low bits of the hash above mix less
  h ^= h >> 15;
  return (double)(h >> 8) * (1.0 / 16777216.0);
}

/// What a run measured.
typedef struct fsRunResult {
  long long steps;          // steps completed by every world
  double wall_s;            // timed loop, after warm-up, until the last step is done
  double world_steps_per_s; // N * steps / wall_s
  double realtime;          // world_steps_per_s * timestep
  int interrupted;          // signal number that stopped the run, or 0
  int problem_worlds;       // worlds with MuJoCo warnings or errors, or solves that ran to
                            // the iteration limit or failed
  int peak_contacts;        // the most contacts any world made in one step (fsWorldStatus)
} fsRunResult;

/// A hook at the edges of the timed loop (profilers, timers); non-zero stops the run.
typedef int (*fsRunHook)(void* arg, fsError* err);

/// Called with each block's recorded data (b->ndone steps), in step order, on the
/// driver's thread while the next block is stepped; non-zero stops the run.
typedef int (*fsBlockHook)(void* arg, const fsBlock* b, fsError* err);

/// Hooks around the timed loop, e.g. --profile's perf switches and --mujoco-timing's
/// timer reset: what they do is outside the measured wall time.
typedef struct fsRunHooks {
  fsRunHook on_timed_start; // after the warm-up, right before the clock starts (or NULL)
  fsRunHook on_timed_end;   // right after the clock stops (also when the loop fails,
                            // then with err NULL), before the last block is saved
  void* arg;                // passed to both
} fsRunHooks;

typedef struct fsRunOptions {
  fsRecorder* recorder;    // NULL: nothing recorded
  int block;               // steps per block
  int progress;            // print a progress line (stderr is a terminal)
  const char* label;       // progress label
  const fsRunHooks* hooks; // around the timed loop (or NULL)
  fsBlockHook on_block;    // each block's data (or NULL): the outputs' observer
  void* block_arg;
  // Steps the caller must see as they happen (the cpu's world-0 video, from MuJoCo's own
  // data): next_stop(arg, s) is the first replay step >= s after which at_stop(arg, b,
  // step) runs, between two of the batch's step calls; NULL: none.
  long (*next_stop)(void* arg, long step);
  int (*at_stop)(void* arg, fsBatch b, long step, fsError* err);
  void* stop_arg;
} fsRunOptions;

/// Steps per block for N worlds (what the driver waits for and records at once): about
/// 1e4 world-steps rounded down to a multiple of FLYSIM_STEPS_PER_LAUNCH (a cuda batch's
/// launch: what Nsight Compute's launch counts and the NVTX `step` ranges count), at least
/// one launch's (at 65,536 worlds too) and at most 1000; at most S. Blocks are whole
/// launches however many worlds, so only a run's last block has single steps.
int fs_replay_block_steps(int nworld, int nstep);

/// Launches that run nstep steps: FLYSIM_STEPS_PER_LAUNCH at a time, the rest one at a time
/// (the cuda backend's graphs, cuda/backend_cuda.cu).
int fs_replay_launches(int nstep);

/// Launches of a replay of nstep steps of nworld worlds, block by block (the driver's
/// blocks): the NVTX `step` ranges of its timed run.
long fs_replay_run_launches(int nworld, int nstep);

/// Clear the batch's control sequence (a batch that ran before holds the clip), reset every
/// world to the binding's keyframe with adhesion on (FlyGym's
/// Simulation.reset and set_leg_adhesion_states), the plan's init_worlds, the warm-up
/// (r->nwarmup steps at those controls); then the clip as the batch's control sequence,
/// world w from row world_start[w]: the batch is ready for the replay's step 0.
int fs_replay_start(const fsReplay* r, fsReplayBatch* rb, fsError* err);

/// A change of the worlds' state inside fs_replay_start_hooked's warm-up (flysim compare's
/// floor): before(arg, rb, s, err) runs before warm-up step s, between the batch's step
/// calls. every_step 0: once, right after the reset and init_worlds, before the first step
/// (s = 0, also when there is no warm-up); 1: before each of the r->nwarmup warm-up steps
/// (none when there is no warm-up), which then step one at a time.
typedef struct fsWarmupHook {
  int (*before)(void* arg, const fsReplayBatch* rb, int step, fsError* err);
  int every_step;
  void* arg;
} fsWarmupHook;

/// fs_replay_start with hook (NULL: none) inside its warm-up.
int fs_replay_start_hooked(const fsReplay* r, fsReplayBatch* rb, const fsWarmupHook* hook,
                           fsError* err);

/// n steps of the batch into block b's buffers (the series' and the video's that b has;
/// none: nothing recorded). A cuda batch's data lands in b once a later step call or
/// fs_batch_sync returns.
int fs_replay_step_block(const fsReplay* r, const fsReplayBatch* rb, fsBlock* b, int n,
                         fsError* err);

/// fs_replay_start, then r->nstep steps of the clip in blocks, recording if opt->recorder.
/// Stops early (result->interrupted) on SIGINT/SIGTERM/SIGHUP, between blocks.
int fs_replay_run(const fsReplay* r, fsReplayBatch* rb, const fsRunOptions* opt,
                  fsRunResult* result, fsError* err);

/// A short name of MuJoCo warning i (mjtWarning), e.g. "bad-qacc".
const char* fs_warning_name(int i);

/// 1 if world status st has a problem: a warning, an error, a solve that ran to the
/// iteration limit or failed.
int fs_world_has_problem(const fsWorldStatus* st);

/// Print each problem world of st (N, stderr) and count them.
int fs_replay_report_worlds(const fsReplay* r, const fsWorldStatus* st, int verbose_limit);

/// The most contacts any world of st (N) made in one step.
int fs_replay_peak_contacts(const fsReplay* r, const fsWorldStatus* st);

#ifdef __cplusplus
}
#endif
#endif
