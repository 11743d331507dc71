// The on-chip plan (common/model/onchip.h): which of a world's fields the step keeps on-chip.
#include "common/model/onchip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/model/model.h"

// The fields that may go on-chip, most used first (common/model/onchip.h says why these and
// why not the others), each with the first and the last phase of the step whose code
// refers to it: two fields share bytes only where these ranges do not overlap.
// scripts/onchip_lifetimes.py reads the ranges off the stage code, and the ctest
// engine_onchip_lifetimes fails when a row here is narrower than the code. Every field
// the table lacks stays in global memory.
static const struct {
  int field, first, last;
} kChip[] = {
    // the Newton iteration's vectors over dofs: every iteration and line search
    {FS_FIELD_sol_search, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    {FS_FIELD_sol_Mv, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    {FS_FIELD_sol_grad, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    {FS_FIELD_sol_Mgrad, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    {FS_FIELD_sol_Ma, FS_CHIP_SOLVER_SETUP, FS_CHIP_NEWTON},
    {FS_FIELD_sol_qacc, FS_CHIP_SOLVER_SETUP, FS_CHIP_SOLVER_RESULTS},
    {FS_FIELD_sol_qfrc, FS_CHIP_SOLVER_SETUP, FS_CHIP_SOLVER_RESULTS},
    {FS_FIELD_sol_vec, FS_CHIP_REFERENCE_CONSTRAINT, FS_CHIP_NEWTON},
    {FS_FIELD_sol_dense, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    // M (M x in every iteration), its factor (qacc_smooth, the first direction)
    {FS_FIELD_M, FS_CHIP_MAKE_M, FS_CHIP_EULER},
    {FS_FIELD_qLDiagInv, FS_CHIP_FACTOR_M, FS_CHIP_NOSLIP},
    {FS_FIELD_qLD, FS_CHIP_FACTOR_M, FS_CHIP_NOSLIP},
    // the Hessian and its factor: every iteration's solve and updates
    {FS_FIELD_sol_L, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    {FS_FIELD_sol_H, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    // the smooth dynamics' tree arrays and forces
    {FS_FIELD_cdof, FS_CHIP_COM_POS, FS_CHIP_RNE},
    {FS_FIELD_cinert, FS_CHIP_COM_POS, FS_CHIP_RNE},
    {FS_FIELD_crb, FS_CHIP_MAKE_M, FS_CHIP_MAKE_M},
    {FS_FIELD_cvel, FS_CHIP_COM_VEL, FS_CHIP_RNE},
    {FS_FIELD_cdof_dot, FS_CHIP_COM_VEL, FS_CHIP_RNE},
    {FS_FIELD_rne_cacc, FS_CHIP_RNE, FS_CHIP_RNE},
    {FS_FIELD_rne_cfrc, FS_CHIP_RNE, FS_CHIP_RNE},
    {FS_FIELD_subtree_com, FS_CHIP_COM_POS, FS_CHIP_PASSIVE},
    {FS_FIELD_xmat, FS_CHIP_KINEMATICS, FS_CHIP_COM_POS},
    {FS_FIELD_ximat, FS_CHIP_KINEMATICS, FS_CHIP_COM_POS},
    {FS_FIELD_xipos, FS_CHIP_KINEMATICS, FS_CHIP_COM_POS},
    {FS_FIELD_xanchor, FS_CHIP_KINEMATICS, FS_CHIP_COM_POS},
    {FS_FIELD_xaxis, FS_CHIP_KINEMATICS, FS_CHIP_COM_POS},
    {FS_FIELD_geom_xpos, FS_CHIP_KINEMATICS, FS_CHIP_COLLISION},
    {FS_FIELD_geom_xmat, FS_CHIP_KINEMATICS, FS_CHIP_COLLISION},
    {FS_FIELD_site_xmat, FS_CHIP_KINEMATICS, FS_CHIP_KINEMATICS},
    {FS_FIELD_actuator_length, FS_CHIP_TRANSMISSION, FS_CHIP_ACTUATION},
    {FS_FIELD_actuator_moment, FS_CHIP_TRANSMISSION, FS_CHIP_ACTUATION},
    {FS_FIELD_actuator_velocity, FS_CHIP_ACTUATOR_VELOCITY, FS_CHIP_ACTUATION},
    {FS_FIELD_qfrc_spring, FS_CHIP_PASSIVE, FS_CHIP_PASSIVE},
    {FS_FIELD_qfrc_damper, FS_CHIP_PASSIVE, FS_CHIP_PASSIVE},
    {FS_FIELD_qfrc_adhesion, FS_CHIP_PASSIVE, FS_CHIP_PASSIVE},
    {FS_FIELD_qfrc_passive, FS_CHIP_PASSIVE, FS_CHIP_ACCELERATION},
    {FS_FIELD_qfrc_bias, FS_CHIP_RNE, FS_CHIP_ACCELERATION},
    {FS_FIELD_qfrc_actuator, FS_CHIP_ACTUATION, FS_CHIP_ACCELERATION},
    {FS_FIELD_qfrc_smooth, FS_CHIP_ACCELERATION, FS_CHIP_EULER},
    {FS_FIELD_qacc_smooth, FS_CHIP_ACCELERATION, FS_CHIP_SOLVER_RESULTS},
    {FS_FIELD_qfrc_constraint, FS_CHIP_SOLVER_SETUP, FS_CHIP_EULER},
    {FS_FIELD_qacc, FS_CHIP_SOLVER_SETUP, FS_CHIP_EULER},
    // the implicit-damping factor
    {FS_FIELD_qH, FS_CHIP_EULER, FS_CHIP_EULER},
    {FS_FIELD_qHDiagInv, FS_CHIP_EULER, FS_CHIP_EULER},
    {FS_FIELD_euler_qacc, FS_CHIP_EULER, FS_CHIP_EULER},
    // the solver's row arrays, then the rows and the contacts no recording reads
    {FS_FIELD_sol_state, FS_CHIP_SOLVER_SETUP, FS_CHIP_SOLVER_RESULTS},
    {FS_FIELD_sol_oldstate, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    {FS_FIELD_sol_force, FS_CHIP_SOLVER_SETUP, FS_CHIP_SOLVER_RESULTS},
    {FS_FIELD_sol_Jaref, FS_CHIP_SOLVER_SETUP, FS_CHIP_NEWTON},
    {FS_FIELD_sol_Jv, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    {FS_FIELD_sol_quad, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    {FS_FIELD_sol_D, FS_CHIP_NEWTON, FS_CHIP_NEWTON},
    {FS_FIELD_efc_tree, FS_CHIP_SOLVER_SETUP, FS_CHIP_NOSLIP},
    {FS_FIELD_tree_island, FS_CHIP_SOLVER_SETUP, FS_CHIP_NOSLIP},
    {FS_FIELD_efc_b, FS_CHIP_SOLVER_SETUP, FS_CHIP_NOSLIP},
    {FS_FIELD_efc_state, FS_CHIP_SOLVER_SETUP, FS_CHIP_SOLVER_RESULTS},
    {FS_FIELD_efc_D, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_NEWTON},
    {FS_FIELD_efc_R, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_NOSLIP},
    {FS_FIELD_efc_J, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_NOSLIP},
    {FS_FIELD_efc_aref, FS_CHIP_REFERENCE_CONSTRAINT, FS_CHIP_NEWTON},
    {FS_FIELD_efc_vel, FS_CHIP_REFERENCE_CONSTRAINT, FS_CHIP_REFERENCE_CONSTRAINT},
    {FS_FIELD_efc_KBIP, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_REFERENCE_CONSTRAINT},
    {FS_FIELD_efc_diagA, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_MAKE_CONSTRAINT},
    {FS_FIELD_efc_pos, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_REFERENCE_CONSTRAINT},
    {FS_FIELD_efc_margin, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_REFERENCE_CONSTRAINT},
    {FS_FIELD_efc_frictionloss, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_MAKE_CONSTRAINT},
    {FS_FIELD_efc_type, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_NOSLIP},
    {FS_FIELD_efc_id, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_NOSLIP},
    {FS_FIELD_efc_J_rownnz, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_NOSLIP},
    {FS_FIELD_efc_J_coladr, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_NOSLIP},
    {FS_FIELD_noslip_u, FS_CHIP_NOSLIP, FS_CHIP_NOSLIP},
    {FS_FIELD_noslip_A, FS_CHIP_NOSLIP, FS_CHIP_NOSLIP},
    {FS_FIELD_noslip_Y, FS_CHIP_NOSLIP, FS_CHIP_NOSLIP},
    {FS_FIELD_cand_ncon, FS_CHIP_COLLISION, FS_CHIP_COLLISION},
    {FS_FIELD_cand_conout, FS_CHIP_COLLISION, FS_CHIP_COLLISION},
    {FS_FIELD_precon_dist, FS_CHIP_COLLISION, FS_CHIP_COLLISION},
    {FS_FIELD_precon_pos, FS_CHIP_COLLISION, FS_CHIP_COLLISION},
    {FS_FIELD_precon_normal, FS_CHIP_COLLISION, FS_CHIP_COLLISION},
    {FS_FIELD_precon_tangent, FS_CHIP_COLLISION, FS_CHIP_COLLISION},
    {FS_FIELD_contact_dist, FS_CHIP_COLLISION, FS_CHIP_MAKE_CONSTRAINT},
    {FS_FIELD_contact_pos, FS_CHIP_COLLISION, FS_CHIP_PASSIVE},
    {FS_FIELD_contact_includemargin, FS_CHIP_COLLISION, FS_CHIP_MAKE_CONSTRAINT},
    {FS_FIELD_contact_solref, FS_CHIP_COLLISION, FS_CHIP_MAKE_CONSTRAINT},
    {FS_FIELD_contact_solreffriction, FS_CHIP_COLLISION, FS_CHIP_COLLISION},
    {FS_FIELD_contact_solimp, FS_CHIP_COLLISION, FS_CHIP_MAKE_CONSTRAINT},
    {FS_FIELD_contact_adhesion, FS_CHIP_COLLISION, FS_CHIP_REFERENCE_CONSTRAINT},
    {FS_FIELD_contact_pair, FS_CHIP_COLLISION, FS_CHIP_NOSLIP},
    {FS_FIELD_contact_mu, FS_CHIP_MAKE_CONSTRAINT, FS_CHIP_MAKE_CONSTRAINT},
};

enum { kNChip = sizeof kChip / sizeof *kChip };

// Fields of kChip that the fluid forces (common/engine/stage_velocity.h) read in the passive
// stage: in a model with fluid forces they live to PASSIVE, in the others as kChip says (their
// plans stay as they were). scripts/onchip_lifetimes.py reads this list too.
static const int kFluidReads[] = {FS_FIELD_xipos, FS_FIELD_ximat};

// Fields of kChip that the sensor stage (common/engine/stage_sensor.h) reads: in a model
// whose sensors the step computes (the host's) they live to SENSOR, in the others (every
// model on the GPU) as kChip says. scripts/onchip_lifetimes.py reads this list too.
static const int kSensorReads[] = {FS_FIELD_xmat,
                                   FS_FIELD_ximat,
                                   FS_FIELD_xipos,
                                   FS_FIELD_geom_xpos,
                                   FS_FIELD_geom_xmat,
                                   FS_FIELD_site_xmat,
                                   FS_FIELD_cdof,
                                   FS_FIELD_cinert,
                                   FS_FIELD_subtree_com,
                                   FS_FIELD_cvel,
                                   FS_FIELD_cdof_dot,
                                   FS_FIELD_contact_dist,
                                   FS_FIELD_contact_pos,
                                   FS_FIELD_contact_adhesion,
                                   FS_FIELD_actuator_length,
                                   FS_FIELD_actuator_velocity,
                                   FS_FIELD_qfrc_actuator,
                                   FS_FIELD_efc_vel,
                                   FS_FIELD_efc_pos,
                                   FS_FIELD_efc_margin,
                                   FS_FIELD_efc_type,
                                   FS_FIELD_efc_id};

// The last phase of kChip[k]'s life in model m.
static int last_phase(const fsModel* m, int k) {
  int last = kChip[k].last;
  if (m->nvfluid)
    for (size_t j = 0; j < sizeof kFluidReads / sizeof *kFluidReads; j++)
      if (kFluidReads[j] == kChip[k].field && last < FS_CHIP_PASSIVE) last = FS_CHIP_PASSIVE;
  if (m->sensors)
    for (size_t j = 0; j < sizeof kSensorReads / sizeof *kSensorReads; j++)
      if (kSensorReads[j] == kChip[k].field && last < FS_CHIP_SENSOR) last = FS_CHIP_SENSOR;
  return last;
}

// 1 if kChip[k] (its life ending at last[k]) is alive in some phase of [first, last].
static int alive_within(const int* lasts, int k, int first, int last) {
  return lasts[k] >= first && kChip[k].first <= last;
}

// The lowest offset (a multiple of FS_CHIP_ALIGN) where n bytes live over phases
// [first, last] without touching a placed field whose phases overlap those, or -1 if
// none fits the budget. First fit over the candidates: 0 and every such field's end.
static long first_fit(const long* off, const long* size, const int* lasts, const int* placed,
                      int nplaced, int first, int last, long n, long budget) {
  long best = -1;
  for (int c = -1; c < nplaced; c++) {
    int pc = c < 0 ? -1 : placed[c];
    if (pc >= 0 && !alive_within(lasts, pc, first, last)) continue;
    long o = pc < 0 ? 0 : off[pc] + size[pc];
    if (o + n > budget || (best >= 0 && o >= best)) continue;
    int clash = 0;
    for (int j = 0; j < nplaced && !clash; j++) {
      int p = placed[j];
      clash = alive_within(lasts, p, first, last) && o < off[p] + size[p] && off[p] < o + n;
    }
    if (!clash) best = o;
  }
  return best;
}

// The fields of kChip in order (but those global[] keeps), each where it first fits within
// the budget.
static long pack(const fsModel* m, long budget, const unsigned char* global, fsChipPlan* out) {
  long off[kNChip], size[kNChip], used = 0;
  int placed[kNChip], lasts[kNChip], nplaced = 0;
  for (int k = 0; k < kNChip; k++) lasts[k] = last_phase(m, k);
  for (int k = 0; k < kNChip; k++) {
    size[k] = global && global[kChip[k].field]
                  ? 0
                  : (long)fs_chip_round(fs_field_bytes(m, &fs_data_fields[kChip[k].field]));
    off[k] = size[k] ? first_fit(off, size, lasts, placed, nplaced, kChip[k].first, lasts[k],
                                 size[k], budget)
                     : -1;
    if (off[k] < 0) continue;
    placed[nplaced++] = k;
    used = off[k] + size[k] > used ? off[k] + size[k] : used;
    if (out) {
      out->off[kChip[k].field] = (int)off[k];
      out->nfield++;
    }
  }
  return used;
}

void fs_chip_plan_except(const fsModel* m, long budget, const unsigned char* global,
                         fsChipPlan* out) {
  memset(out, 0, sizeof *out);
  for (int f = 0; f < FS_NDATA_FIELD; f++) out->off[f] = -1;
  out->bytes = (int)pack(m, budget, global, out);
  for (int k = 0; k < kNChip; k++) {
    long n = global && global[kChip[k].field]
                 ? 0
                 : (long)fs_chip_round(fs_field_bytes(m, &fs_data_fields[kChip[k].field]));
    out->nallow += n > 0;
    out->sum_bytes += n;
  }
  out->allow_bytes = pack(m, out->sum_bytes, global, NULL);
}

void fs_chip_plan(const fsModel* m, long budget, fsChipPlan* out) {
  fs_chip_plan_except(m, budget, NULL, out);
}

int fs_chip_lifetime(const fsModel* m, int field, int* first, int* last) {
  for (int k = 0; k < kNChip; k++)
    if (kChip[k].field == field) {
      *first = kChip[k].first;
      *last = last_phase(m, k);
      return 1;
    }
  return 0;
}

long fs_chip_budget(long deflt, long all, fsError* err) {
  const char* s = getenv("FLYSIM_ONCHIP_BYTES");
  if (!s || !*s) return deflt;
  if (!strcmp(s, "all")) return all;
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*end || errno || v < 0 || v > (1L << 30)) {
    fs_fail(err,
            "FLYSIM_ONCHIP_BYTES='%s' is not a number of bytes; fix: unset it (the default: "
            "what keeps the SM's resident worlds), or give the bytes of each world's "
            "intermediates to keep on-chip (0: none; all: every one)",
            s);
    return -1;
  }
  return v;
}

long fs_chip_all_bytes(const fsModel* m) {
  fsChipPlan none; // a plan within no budget still says what all of them take
  fs_chip_plan(m, 0, &none);
  return none.allow_bytes;
}
