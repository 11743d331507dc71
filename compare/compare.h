// flysim compare: the same worlds on two steppers, step by step, against MuJoCo's
// own sensitivity (the floor).
//
// Three runs of one replay plan go in lockstep, one step at a time: A, B, and A
// again with its state perturbed (the floor run F, whose batch holds K copies of A's
// worlds, each perturbed on its own: world k N + w is copy k of world w). After every
// step each run's worlds are read back in double; the joint angles (the binding's J
// recorded joints) of B and F are compared with A's, world by world:
//
// (a floor world's |dq|: the largest over its copies; dq_rms: over every copy)
//   dq_max[p][t]  largest |q_X - q_A| over worlds and joints after step t (rad)
//   dq_rms[p][t]  RMS of q_X - q_A over worlds and joints
//   dq_geo[p][t]  geometric mean over worlds of the largest |q_X - q_A| over joints
//                 (each at least FS_CMP_DQ_RESOLUTION)
//   thorax[p][t]  largest distance between the root free joint's positions (model
//                 length units; 0 when the model has no free joint)
//   ncon[p][t]    worlds whose contact counts differ (the floor's: in any copy)
//   track[r][t]   RMS |q - target| of run r over worlds and the driven joints
//
// with p = 0 for B vs A and p = 1 for F vs A. A world gone bad (NaN) counts as an
// infinite difference. The floor is what MuJoCo (or whatever A is) does with a
// float-sized change of its own state:
//   FS_FLOOR_ULP       A's qpos and qvel moved one ulp of A's real at the start of the
//                      warm-up
//   FS_FLOOR_F32       rounded to float32 there (one float32 ulp in a float32 A)
//   FS_FLOOR_F32_STEP  rounded to float32 before every step, the warm-up's included
//                      (the caller gives the floor a model and clip rounded to float32):
//                      what holding them in float32 does, the least error of a float32
//                      stepper
// With K floor runs (floor_runs), copy 0 is perturbed as above and copies 1..K-1 at
// random: a float32 rounding is stochastic there (up or down with the odds of the
// distance, a fresh draw per world, element and step: Monte Carlo arithmetic's model of
// float32 arithmetic, whose errors are independent from step to step), an ulp moves in
// the copy's own directions. F's |dq| in a world after a step is the largest over its
// copies. Rounding to nearest every step carries what float32 storage does to a state
// that moves by less than half an ulp a step (the move is lost, as in a float32
// stepper); the stochastic copies carry the independent errors of float32 arithmetic,
// and with contacts the events they set off (a contact that touches or not within
// float32's resolution): a float32 stepper has both.
// The floor starts where B does: every run goes through the same warm-up
// (fs_replay_start) before step 0, B's arithmetic differs from A's from its first
// warm-up step, and so the floor's perturbation starts there too (a landing during the
// warm-up amplifies both alike).
// The verdict: the ratio to the floor <= max_ratio, and B has no problem world
// (warnings, solves at the iteration limit or failed) that A has not. The ratio is
// the geometric mean over worlds and steps of B's |dq| in the world over the floor's
// (fs_compare_ratio). With contacts the differences are events (a contact that
// touches a step earlier in one world, a solve that stops an iteration sooner), not
// a smooth growth: the largest difference over worlds and steps is one world's
// lottery, and it saturates at the size of the motion on long runs whatever B does;
// the geometric mean weighs every world and step alike, so a stepper that is wrong
// everywhere stands out and one unlucky world does not.
#ifndef FLYSIM_COMPARE_COMPARE_H
#define FLYSIM_COMPARE_COMPARE_H

#include "common/replay/replay.h"

typedef enum fsFloorMode {
  FS_FLOOR_ULP,
  FS_FLOOR_F32,
  FS_FLOOR_F32_STEP,
  FS_FLOOR_NMODE
} fsFloorMode;

/// "ulp", "f32", "f32-step".
const char* fs_floor_name(fsFloorMode mode);

/// One stepper of a comparison: its plan open as a batch.
typedef struct fsCompareSide {
  const char* label; // "cpu", "host f32", ...
  fsReplayBatch* rb;
  const fsReplay* plan;
  int bits; // its real (64 or 32)
} fsCompareSide;

enum { FS_CMP_B = 0, FS_CMP_FLOOR = 1, FS_CMP_NPAIR = 2 };    // pairs: B vs A, F vs A
enum { FS_CMP_RUN_A = 0, FS_CMP_RUN_B = 1, FS_CMP_NRUN = 2 }; // tracking per run
enum { FS_CMP_ANGLE = 0, FS_CMP_THORAX = 1, FS_CMP_CONTACTS = 2, FS_CMP_NTHRESH = 3 };

typedef struct fsCompareSpec {
  fsCompareSide a, b, floor; // floor: a second instance of A's stepper, with floor_runs
                             // copies of A's worlds (its plan: K N worlds, world k N + w
                             // starting where A's world w does)
  fsFloorMode floor_mode;
  int floor_runs;                   // K >= 1
  double max_ratio;                 // the bound on the ratio to the floor
  double threshold[FS_CMP_NTHRESH]; // first steps over: rad, length, worlds (> value)
  int progress;                     // a progress line on stderr
} fsCompareSpec;

/// Per world, over the run.
typedef struct fsCompareWorld {
  double final_dq[FS_CMP_NPAIR]; // max |dq| over joints after the last step
  double max_dq[FS_CMP_NPAIR];   // ... over the run
  double track_rms[FS_CMP_NRUN]; // RMS |q - target| over the run and the driven joints
  fsWorldStatus status[FS_CMP_NRUN];
  int problem[FS_CMP_NRUN];    // fs_world_has_problem
  double log_dq[FS_CMP_NPAIR]; // sum over steps of log(max(|dq|, FS_CMP_DQ_RESOLUTION))
} fsCompareWorld;

/// Joint-angle differences below this count as this (rad): a few float64 ulps of an
/// angle of 1 rad, below which nothing is resolved.
#define FS_CMP_DQ_RESOLUTION 1e-15

typedef struct fsCompareResult {
  int nworld, nstep; // planned
  int ndone;         // steps compared
  int interrupted;   // the signal that stopped it, or 0
  double wall_s;
  // series (nstep; ndone filled)
  double* dq_max[FS_CMP_NPAIR];
  double* dq_rms[FS_CMP_NPAIR];
  double* dq_geo[FS_CMP_NPAIR];
  double* thorax[FS_CMP_NPAIR];
  int* ncon[FS_CMP_NPAIR];
  double* track[FS_CMP_NRUN];
  fsCompareWorld* worlds; // (nworld)
  // summary
  double max_dq[FS_CMP_NPAIR];
  double max_thorax[FS_CMP_NPAIR];
  int first_over[FS_CMP_NPAIR][FS_CMP_NTHRESH]; // first step over the threshold, or -1
  double ratio;           // fs_compare_ratio of dq_max[B] over dq_max[FLOOR]: the verdict's
  double max_ratio;       // max_dq[B] / max_dq[FLOOR] (0 if both 0, inf if only the floor is)
  int new_problem_worlds; // worlds with a problem on B and none on A
  int pass;               // ratio <= max_ratio and no new problem worlds
} fsCompareResult;

/// 1 if the floor moves A's state by ulps (--floor ulp, or a float32 A, which rounding to
/// float32 would not change), 0 if it rounds it to float32.
int fs_floor_moves_ulps(const fsCompareSpec* s);

/// Warm up the three runs, perturb the floor, and compare step by step until the
/// plan's end or an interrupt (result->interrupted; what was compared is kept).
/// The plans must agree in worlds (the floor's: floor_runs times A's), steps and recorded
/// joints (fs_compare_check_plans).
int fs_compare_run(const fsCompareSpec* spec, fsCompareResult* result, fsError* err);

/// Two plans comparable world by world: the same model sizes, joints, actuators,
/// clip length, timestep, worlds, steps and warm-up; the error names the field and
/// the fix (label_a / label_b name the inputs, e.g. the model paths).
int fs_compare_check_plans(const fsReplay* a, const fsReplay* b, fsError* err);

void fs_compare_result_free(fsCompareResult* r);

/// The ratio to the floor: the geometric mean over worlds and steps of B's |dq| (the
/// largest over joints in the world) over the floor's, each at least
/// FS_CMP_DQ_RESOLUTION.
double fs_compare_ratio(const fsCompareResult* r);

/// The qpos address of m's free joint (the thorax's position for the thorax rows), or -1:
/// none, as in FlyGym's tethered world, whose thorax is held by a mocap body.
int fs_compare_root_qposadr(const mjModel* m);

#endif
