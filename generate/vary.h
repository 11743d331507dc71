// A world's variation applied (flysim generate): its targets, its model, its start.
#ifndef FLYSIM_GENERATE_VARY_H
#define FLYSIM_GENERATE_VARY_H

#include <flysim/flysim.h>
#include <mujoco/mujoco.h>

#include "common/inputs/model.h"
#include "common/inputs/targets.h"
#include "generate/spec.h"

/// The clips at the model's timestep, bound to the model through the first one
/// (the others must name the same DoFs in the same order), and each DoF's mean.
typedef struct fsGenClips {
  fsTargets clip[FS_GEN_MAX_TARGETS];
  double* mean[FS_GEN_MAX_TARGETS]; // (A) each clip's per-DoF mean
  int n;
} fsGenClips;

int fs_gen_clips_load(const fsGenSpec* s, double timestep, fsGenClips* c, fsError* err);
void fs_gen_clips_free(fsGenClips* c);

/// World w's S steps of targets (S x A) into out: clip p[FILE] read from row
/// p[START], advancing p[TIME_SCALE] rows a step (linear interpolation), scaled
/// about each DoF's clip mean by p[AMPLITUDE], plus noise of std p[NOISE] per step
/// and DoF. Error naming the world and the fix if the rows leave the clip.
/// Error (naming the spec, the world and the fix) if world w's S steps would read
/// past its clip's last row.
int fs_gen_check_window(const fsGenSpec* s, const fsGenClips* c, int w, const double* p, int S,
                        fsError* err);

int fs_gen_world_targets(const fsGenSpec* s, const fsGenClips* c, int w, const double* p, int S,
                         double* out, fsError* err);

/// 1 if any model axis of the spec can differ from the model's values.
int fs_gen_varies_model(const fsGenSpec* s);

/// What the block's worlds are given (fsReplay.arg).
typedef struct fsGenInit {
  const fsGenSpec* spec;
  const mjModel* m;            // the base model
  const fsReplayBinding* bind; // its binding
  const double* params;        // (nworld x FS_NAXIS) the block's worlds' values
  int world0;                  // the block's first world (the streams are keyed by global world)
  int nworld;                  // the block's worlds
} fsGenInit;

/// fsReplay.setup: each world's model axes as the batch's per-world parameters
/// (fs_batch_set_param: kp of the bound position actuators, joint damping and stiffness,
/// sliding friction of geoms and contact pairs, body masses and inertias, adhesion gain,
/// gravity; MuJoCo's constants derived again), when the spec varies any.
int fs_gen_setup(void* arg, fsBatch b, fsError* err);

/// fsReplay.init_worlds: every world's start (fs_gen_start_world) from the reset state,
/// written through the views.
int fs_gen_init_worlds(void* arg, fsBatch b, fsError* err);

/// World w's start from the reset state (qpos, qvel in double): hinge angles + pose noise,
/// qvel + velocity noise, the root's height + spawn height.
void fs_gen_start_world(const fsGenInit* in, int w, const mjModel* m, double* qpos, double* qvel);

#endif
