// The host build of the batched stepper: the same stage functions as the CUDA
// kernels (common/engine/stage_*.h), compiled by the C compiler in float64
// (flysim_engine_f64) or float32 (flysim_engine_f32), one world after
// another. It is the reference the tests compare with MuJoCo where there is no
// GPU, and a way to run the pipeline anywhere.
//
//   fsModel m;  fs_model_build(mj, path, &m, &err);         // checks, converts
//   fsWorlds b;  fs_worlds_alloc(&m, nworld, &b, &err);
//   fs_worlds_from_mj(&m, &b, w, mj, d, FS_STAGE_STATE, &err) // state of world w
//   fs_serial_step(&m, &b, nstep);                             // mj_step x nstep
#ifndef FLYSIM_CPU_SERIAL_H
#define FLYSIM_CPU_SERIAL_H

#include "common/model/worlds.h"
#include "common/model/model.h"
#include "common/model/onchip.h"

// This build's names (common/exec/real.h FS_PREC): both precisions link into one program.
#define fs_serial_stage           FS_PREC(fs_serial_stage)
#define fs_serial_forward         FS_PREC(fs_serial_forward)
#define fs_serial_step            FS_PREC(fs_serial_step)
#define fs_serial_step_on_chip    FS_PREC(fs_serial_step_on_chip)
#define fs_serial_real_name       FS_PREC(fs_serial_real_name)
#define fs_serial_perturb_passive FS_PREC(fs_serial_perturb_passive)

#ifdef __cplusplus
extern "C" {
#endif

/// Run one stage (fsStage) on every world.
void fs_serial_stage(const fsModel* m, fsWorlds* b, int stage);

/// mj_forward on every world.
void fs_serial_forward(const fsModel* m, fsWorlds* b);

/// nstep steps (mj_step, Euler) of every world.
void fs_serial_step(const fsModel* m, fsWorlds* b, int nstep);

/// fs_serial_step with plan's fields of each world in `chip` (plan->bytes, shared by the
/// worlds in turn) instead of the batch, as the GPU's step kernel keeps them in shared
/// memory (common/model/onchip.h); poison != 0 fills chip with NaN before every step of every
/// world (nothing may carry over in it). The batch's copies of those fields are left
/// alone.
void fs_serial_step_on_chip(const fsModel* m, fsWorlds* b, int nstep, const fsChipPlan* plan,
                            char* chip, int poison);

/// "float64" or "float32": the real type this build was compiled with.
const char* fs_serial_real_name(void);

/// The host steppers' test switch, outside the engine: FLYSIM_PERTURB_PASSIVE=x (a relative
/// change in (-1, 1)) scales model m's joint and tendon stiffness, dof and tendon damping and
/// its medium's density and viscosity by (1 + x), a deliberately wrong passive force (and
/// implicit damping, fluid forces) that `flysim compare` and its --stages must catch. *x is the
/// change (0: unset, m untouched); -1 with the fix for a bad value. The host backend applies it to
/// its models, the host runner to the stages'. FLYSIM_PERTURB_ROWS=limits (every limited joint's
/// range reversed: a limit's sign flipped), frictionloss (every dof's friction-loss bound dropped),
/// friction (every pair's friction scaled by 1.001: a cone's friction off), margin (every contact
/// pair's margin dropped), moving (the contacts between two moving bodies frictionless: their
/// pairs' parameters mixed wrongly) or islands (contacts between two trees leave their islands
/// apart) breaks the constraint rows too, and tendon (every fixed
/// tendon's coefficients x 1.001) its actuators on fixed tendons, tendonrows (every tendon's
/// range reversed and friction loss dropped) its tendons' rows, equality (every equality's
/// offset + 1e-3, its polynomial's slope x 1.001) its equality rows (the host backend names it
/// in its description). FLYSIM_PERTURB_STEP=euler steps RK4 models with Euler, =act scales
/// every actuator's first dynamics parameter (a filter's time constant) by 1.001.
int fs_serial_perturb_passive(fsModel* m, double* x, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
