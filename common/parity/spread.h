// MuJoCo's own spread: how far MuJoCo's results move when the same computation runs
// in another order of summation or from a state moved by the precision's last bit.
// A comparison whose bound comes from it (the solver's outputs, whole steps) allows
// FSH_FLOOR_RATIO times that spread, or the build's tolerance where that is larger:
// a solve stops within its tolerance and contacts make steps chaotic, so a fixed
// bound is either loose on smooth steps or fails on the ill-conditioned ones.
//
// The runs (each a set of worlds, like the reference):
//   float64: MuJoCo with its other Jacobian layout (dense against sparse: the same
//     solve in another order of summation), and MuJoCo from the state off by one
//     float64 ulp (sign at random per value, 3 draws);
//   float32: MuJoCo from the state rounded to float32 before every step, and from
//     that rounded state moved by float32's epsilon (3 draws): one rounding alone is
//     a single sample of MuJoCo's sensitivity.
// And for the solver's outputs, noslip's decisions: a pair of pyramid edges keeps its
// new forces only if the dual cost falls by more than 1e-10 (mj_solNoSlip), a change
// that is a difference of much larger terms, so that where it lies near 1e-10 the last
// bits of the residuals decide, and a force moves by up to 1e-7 of its size on the
// capsule fly's contacts. flysim sums the residuals in another order than MuJoCo (see
// common/engine/stage_noslip.h); the floor replays MuJoCo's noslip from MuJoCo's own
// Newton forces and AR with the residuals summed one by one, and from the last
// (fsh_noslip_floor): MuJoCo's algorithm, its arithmetic reordered. Summed in
// MuJoCo's order the replay is MuJoCo's to the bit (checked by the tests).
#ifndef FLYSIM_COMMON_PARITY_SPREAD_H
#define FLYSIM_COMMON_PARITY_SPREAD_H

#include "common/parity/harness.h"

#define fsh_round_state       FS_PREC(fsh_round_state)
#define fsh_mj_steps          FS_PREC(fsh_mj_steps)
#define fsh_step_floors       FS_PREC(fsh_step_floors)
#define fsh_floors_free       FS_PREC(fsh_floors_free)
#define fsh_mj_spread         FS_PREC(fsh_mj_spread)
#define fsh_floor_bound       FS_PREC(fsh_floor_bound)
#define fsh_noslip_replay     FS_PREC(fsh_noslip_replay)
#define fsh_noslip_floor      FS_PREC(fsh_noslip_floor)
#define fsh_noslip_step_floor FS_PREC(fsh_noslip_step_floor)
#define fsh_solver_floors     FS_PREC(fsh_solver_floors)

enum { FSH_NFLOOR = 6 };
#define FSH_FLOOR_RATIO 4.0

/// MuJoCo runs that bound a comparison (NULL entries unused), each nworld worlds.
typedef struct fshFloors {
  mjData** run[FSH_NFLOOR];
} fshFloors;

/// How fsh_mj_steps starts from the reference states.
enum {
  FSH_MJ_AS_IS = 0, // the states as they are
  FSH_MJ_ULP,       // qpos and qvel off by one float64 ulp (sign at random per value)
  FSH_MJ_F32,       // the state rounded to float32 before every step (and the forward)
  FSH_MJ_F32_EPS,   // as FSH_MJ_F32, the first rounded state moved by float32's epsilon
};

/// The state (qpos, qvel, ctrl, warm start) rounded to float32.
void fsh_round_state(const mjModel* mj, mjData* d);

/// New worlds: nstep mj_steps (0: mj_forward) of model mj from the states ref, started
/// as `how` says (the signs from common/base/random.h's sequence).
mjData** fsh_mj_steps(const mjModel* mj, mjData* const* ref, int nworld, int nstep, int how);

/// The build's floors for nstep whole steps from ref (see the top): float64 the other
/// Jacobian layout, three ulp draws and (one step) noslip's decisions in two orders;
/// float32 the rounded state and three epsilon draws.
void fsh_step_floors(const mjModel* mj, mjData* const* ref, int nworld, int nstep, fshFloors* f);
void fsh_floors_free(fshFloors* f, int nworld);

/// The comparisons' error measure (tol's floor) of MuJoCo's field `name` in runs a
/// against the reference b, worst over the worlds (those skip marks, and worlds whose
/// rows differ in number, left out). Fields: qpos, qvel, qacc_warmstart, the other
/// nv-sized fields fs_mj_field names, efc_force and efc_b, and the sensor stage's:
/// sensordata, subtree_linvel, subtree_angmom, cacc, cfrc_int, cfrc_ext.
double fsh_mj_spread(const mjModel* mj, const char* name, mjData* const* a, mjData* const* b,
                     int nworld, const char* skip, const fshTol* tol);

/// The bound of field `name`: tol's rel, or FSH_FLOOR_RATIO times the largest spread
/// of f's runs against ref where that is larger; that spread into *spread_out.
double fsh_floor_bound(const mjModel* mj, const char* name, const fshFloors* f, mjData* const* ref,
                       int nworld, const char* skip, const fshTol* tol, double* spread_out);

/// The order of a replayed residual's sum: MuJoCo's (mju_dotSparse, or mju_dot where AR
/// is dense), one by one, one by one from the last.
enum { FSH_SUM_MJ = 0, FSH_SUM_SEQ, FSH_SUM_REV };

/// MuJoCo's noslip (mj_solNoSlip per island, pyramidal cones and dry friction) on data d
/// (a MuJoCo forward with noslip: its rows and AR) from the Newton forces `newton`, the
/// residuals summed in `order`; then the dual finish (qfrc_constraint, qacc). Into d's
/// efc_force, qfrc_constraint, qacc; returns -1 (d unchanged past efc_force) where it
/// cannot (no noslip, no AR, elliptic cones).
int fsh_noslip_replay(const mjModel* mj, mjData* d, const mjtNum* newton, int order);

/// A floor run for the solver's outputs: each world of ref (MuJoCo's forward with
/// noslip) with noslip replayed in `order` from MuJoCo's Newton forces (a solve of the
/// same world without noslip). NULL where the model has no noslip or the replay cannot
/// run. self_err (order FSH_SUM_MJ): the replay's largest relative difference from
/// MuJoCo's efc_force (0: MuJoCo's bits).
mjData** fsh_noslip_floor(const mjModel* mj, mjData* const* ref, int nworld, int order,
                          double* self_err);

/// One mj_step of each world of start (Euler) with noslip replayed in `order` (a step
/// floor: the step's noslip decisions). NULL without noslip or for another integrator.
mjData** fsh_noslip_step_floor(const mjModel* mj, mjData* const* start, int nworld, int order);

/// The floors of the solver's outputs from MuJoCo's forward ref: float64 the other
/// Jacobian layout and noslip's decisions (two orders); float32 none (the build's
/// tolerance is far above them).
void fsh_solver_floors(const mjModel* mj, mjData* const* ref, int nworld, fshFloors* f);

#endif
