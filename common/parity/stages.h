// The stage-by-stage check of the stepper against MuJoCo, run by tests/engine/
// test_stages.c and by `flysim compare --stages`: in every world a different MuJoCo
// state (contact worlds when the model's contacts are on: bodies touching,
// penetrating, leaving the ground, with velocities and controls),
//  1. each stage alone: every input from MuJoCo, the stage's outputs poisoned with
//     NaN, the stage run, every output field of every world compared (contacts and
//     constraint rows through common/parity/contacts.h and efc.h; Euler against
//     mj_Euler from the same data);
//  2. mj_forward from the state alone, every stage's fields compared in order (the
//     first stage that diverges is named);
//  3. whole steps from the state (1, then nstep), state and warning counters against
//     mj_step's; world 1 with a NaN control, world 2 with a NaN velocity (contact-free
//     models).
// Every field reports through fsh_report (common/parity/harness.h), labelled by its stage
// ("kinematics"), "forward: <stage>" or "step 1" / "step <n>".
#ifndef FLYSIM_COMMON_PARITY_STAGES_H
#define FLYSIM_COMMON_PARITY_STAGES_H

#include "common/parity/harness.h"

#define fsh_check_stages    FS_PREC(fsh_check_stages)
#define fsh_stage_tolerance FS_PREC(fsh_stage_tolerance)

/// What to check, and how closely.
typedef struct fshStageCheck {
  int nworld;
  uint64_t seed;
  int nstep;      // whole steps after the first (0: one step only)
  int parts;      // FSH_CHECK_ALONE | FSH_CHECK_FORWARD | FSH_CHECK_STEPS
  fshNoise noise; // contact-free models' worlds (common/parity/harness.h)
  fshTol tol;     // fsh_stage_tolerance() unless set
  double tol_b;   // contacts at a threshold (common/parity/contacts.h): 0 in float64
} fshStageCheck;

enum { FSH_CHECK_ALONE = 1, FSH_CHECK_FORWARD = 2, FSH_CHECK_STEPS = 4 };

/// The build's bounds: float64 1e-9 with a floor of 1e-6 of the field's scale in the
/// world; float32 1e-4 of the field's scale (docs/engine/accuracy.md); tol_b 1e-6 in float32.
fshTol fsh_stage_tolerance(double* tol_b);

/// Run the check of model mj (path names it) on runner r. Returns the number of
/// comparisons beyond their bounds, FSH_SKIP when the runner has no device, or -1
/// on an error (message in err).
int fsh_check_stages(const fshRunner* r, const mjModel* mj, const char* path,
                     const fshStageCheck* c, fsError* err);

#endif
