// The replay: what both backends run, and the loop that drives them.
//
// A replay plan fixes the model, the targets (at the model's timestep), the
// number of worlds N and of steps S, and where in the clip each world starts.
// A backend (src/cpu, src/host or src/cuda) steps all worlds one block of steps at a time,
// asynchronously; the driver here overlaps each block's stepping with writing the
// previous block to HDF5, prints progress, honours Ctrl-C and measures throughput.
#ifndef FLYSIM_COMMON_REPLAY_H
#define FLYSIM_COMMON_REPLAY_H

#include <mujoco/mujoco.h>

#include "src/base/error.h"
#include "common/inputs/model.h"
#include "common/inputs/targets.h"
#include "common/recorder/recorder.h"
#include "common/replay/record.h"

/// The GPU replay launches its steps FS_STEPS_PER_LAUNCH at a time (one kernel and one
/// graph launch each; what is left of a run, fewer than that, one at a time): what
/// Nsight Compute's launch counts and the NVTX `step` ranges count (fs_replay_launches).
/// Blocks (fs_replay_block_steps) are whole numbers of such launches, however many
/// worlds, so that only a run's last block has single steps.
#define FS_STEPS_PER_LAUNCH 8

#ifdef __cplusplus
extern "C" {
#endif

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
  // Per-world variation (flysim generate); NULL/none in a replay:
  const mjModel* const* world_model; // (N) world w's model (same sizes as m), or NULL: m
  void (*init_world)(void* arg, int w, const mjModel* m, mjData* d); // after each reset
  void* init_arg;
} fsReplay;

/// World w's model: its own (per-world variation) or the plan's.
static inline const mjModel* fs_replay_model(const fsReplay* r, int w) {
  return r->world_model ? r->world_model[w] : r->m;
}

/// World w's start: fs_replay_reset_world on its model, then the plan's init_world.
void fs_replay_start_world(const fsReplay* r, int w, mjData* d);

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

/// Per-world health after a run: MuJoCo's warning counters and the first step at
/// which any warning (NaN/Inf state or acceleration, full buffers, ...) appeared.
typedef struct fsWorldStatus {
  int warnings[mjNWARNING]; // mjData.warning[i].number
  int first_warning_step;   // replay step (negative: during warm-up), or INT_MIN
  int first_warning;        // mjtWarning of that first warning, or -1
  int fatal;                // a MuJoCo error stopped this world
  int solver_limit;         // steps whose Newton solve (an island's) ran to opt.iterations
  int solver_error;         // steps whose solve failed (the GPU stepper's rank-deficient
                            // Hessian, where MuJoCo would stop with an error)
  int peak_contacts;        // the most contacts the world's collision made in one step
                            // (kept or not: what --max-contacts must hold), warm-up included
} fsWorldStatus;

/// What a stepper's worlds cost: memory, and on a GPU its step kernel.
typedef struct fsBackendCost {
  double world_bytes; // one world's data
  double model_bytes; // what the worlds share
  int chip_bytes;     // of world_bytes, what the step keeps on-chip (src/model/onchip.h)
  int contacts;       // contacts a world holds (fsReplay.max_contacts or every pair's
                      // slots); 0: no bound (MuJoCo's arena, cpu)
  int has_kernel;     // the kernel fields are set (cuda)
  int registers;      // per thread
  int local_bytes;    // per thread: stack and register spills
  int shared_bytes;   // static shared memory per block
  int block_threads;
  double occupancy; // theoretical: resident threads over the SM's maximum
} fsBackendCost;

/// A backend: one set of worlds being stepped.
typedef struct fsBackendOps {
  const char* name;
  /// Reset every world and run r->nwarmup steps (not timed, not recorded).
  int (*warmup)(void* self, fsError* err);
  /// Start stepping b->nstep steps from b->step0; return without waiting.
  int (*begin_block)(void* self, fsBlock* b, fsError* err);
  /// Wait for the block; set b->ndone (fewer than b->nstep only if stopped).
  int (*end_block)(void* self, fsBlock* b, fsError* err);
  /// Health of world w.
  void (*world_status)(void* self, int w, fsWorldStatus* st);
  /// Every world's qpos (N x nq) and contact count (N), in double, after the last
  /// block (flysim compare reads them; not while a block runs).
  int (*read_worlds)(void* self, double* qpos, int* ncon, fsError* err);
  /// Perturb every world's qpos and qvel as `how` (fsPerturb) with directions from
  /// seed (fs_perturb_up): flysim compare's floor; not while a block runs.
  int (*perturb_state)(void* self, int how, unsigned seed, fsError* err);
  /// What the worlds cost (flysim bench).
  int (*cost)(void* self, fsBackendCost* out, fsError* err);
  /// The block's recorded data into b->series / b->render_qpos, once its steps are
  /// done (end_block) -- called by the driver just before it writes the block, after
  /// the next block has begun, so that a GPU's copies overlap the next block's
  /// steps. NULL: end_block filled them.
  int (*fetch_block)(void* self, fsBlock* b, fsError* err);
} fsBackendOps;

/// How flysim compare perturbs a stepper's state for its floor (perturb_state).
typedef enum fsPerturb {
  FS_PERTURB_ROUND_F32 = 0, // rounded to float32 (in a float32 stepper: no change)
  FS_PERTURB_ULP = 1        // moved one ulp of the stepper's real, up or down
} fsPerturb;

#ifdef __CUDACC__
#define FS_PERTURB_HD __host__ __device__
#else
#define FS_PERTURB_HD
#endif

/// 1 if element k of world w moves up (else down) in perturbation number seed: a
/// hash, so that every backend moves the same elements the same way.
static inline FS_PERTURB_HD int fs_perturb_up(unsigned seed, unsigned w, unsigned k) {
  unsigned h = seed * 0x9E3779B1u ^ w * 0x85EBCA77u ^ k * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return (int)(h >> 31);
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
} fsRunOptions;

/// Steps per block for N worlds (what the driver waits for and records at once): about
/// 1e4 world-steps rounded down to a multiple of FS_STEPS_PER_LAUNCH, at least one launch's
/// FS_STEPS_PER_LAUNCH (at 65,536 worlds too) and at most 1000; at most S.
int fs_replay_block_steps(int nworld, int nstep);

/// Launches that run nstep steps: FS_STEPS_PER_LAUNCH at a time, the rest one at a time
/// (the GPU backend's graphs, src/cuda/replay_cuda.cu's run_steps).
int fs_replay_launches(int nstep);

/// Launches of a replay of nstep steps of nworld worlds, block by block (the driver's
/// blocks): the NVTX `step` ranges of its timed run.
long fs_replay_run_launches(int nworld, int nstep);

/// Warm up, then run r->nstep steps in blocks, recording if opt->recorder.
/// Stops early (result->interrupted) on SIGINT/SIGTERM/SIGHUP.
int fs_replay_run(const fsReplay* r, const fsBackendOps* ops, void* self, const fsRunOptions* opt,
                  fsRunResult* result, fsError* err);

/// A short name of MuJoCo warning i (mjtWarning), e.g. "bad-qacc".
const char* fs_warning_name(int i);

/// 1 if world status st has a problem: a warning, an error, a solve that ran to the
/// iteration limit or failed.
int fs_world_has_problem(const fsWorldStatus* st);

/// Print each problem world (stderr) and count them.
int fs_replay_report_worlds(const fsReplay* r, const fsBackendOps* ops, void* self,
                            int verbose_limit);

/// The most contacts any world made in one step (fsWorldStatus.peak_contacts).
int fs_replay_peak_contacts(const fsReplay* r, const fsBackendOps* ops, void* self);

#ifdef __cplusplus
}
#endif
#endif
