// The on-chip plan (cuda/onchip.h): which of a world's fields the step keeps on-chip.
#include "cuda/onchip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/model.h"

// The fields that may go on-chip, most used first (cuda/onchip.h says why these and
// why not the others). Every field the table lacks stays in global memory.
static const int kOrder[] = {
    // the Newton iteration's vectors over dofs: every iteration and line search
    FS_FIELD_sol_search, FS_FIELD_sol_Mv, FS_FIELD_sol_grad, FS_FIELD_sol_Mgrad, FS_FIELD_sol_Ma,
    FS_FIELD_sol_qacc, FS_FIELD_sol_qfrc, FS_FIELD_sol_vec, FS_FIELD_sol_dense,
    // M (M x in every iteration), its factor (qacc_smooth, the first direction)
    FS_FIELD_M, FS_FIELD_qLDiagInv, FS_FIELD_qLD,
    // the Hessian and its factor: every iteration's solve and updates
    FS_FIELD_sol_L, FS_FIELD_sol_H,
    // the smooth dynamics' tree arrays and forces
    FS_FIELD_cdof, FS_FIELD_cinert, FS_FIELD_crb, FS_FIELD_cvel, FS_FIELD_cdof_dot,
    FS_FIELD_rne_cacc, FS_FIELD_rne_cfrc, FS_FIELD_subtree_com, FS_FIELD_xmat, FS_FIELD_ximat,
    FS_FIELD_xipos, FS_FIELD_xanchor, FS_FIELD_xaxis, FS_FIELD_geom_xpos, FS_FIELD_geom_xmat,
    FS_FIELD_site_xmat, FS_FIELD_actuator_length, FS_FIELD_actuator_moment,
    FS_FIELD_actuator_velocity, FS_FIELD_qfrc_spring, FS_FIELD_qfrc_damper, FS_FIELD_qfrc_adhesion,
    FS_FIELD_qfrc_passive, FS_FIELD_qfrc_bias, FS_FIELD_qfrc_actuator, FS_FIELD_qfrc_smooth,
    FS_FIELD_qacc_smooth, FS_FIELD_qfrc_constraint, FS_FIELD_qacc,
    // the implicit-damping factor
    FS_FIELD_qH, FS_FIELD_qHDiagInv, FS_FIELD_euler_qacc,
    // the solver's row arrays, then the rows and the contacts the replay does not record
    FS_FIELD_sol_state, FS_FIELD_sol_oldstate, FS_FIELD_sol_force, FS_FIELD_sol_Jaref,
    FS_FIELD_sol_Jv, FS_FIELD_sol_quad, FS_FIELD_sol_D, FS_FIELD_efc_tree, FS_FIELD_tree_island,
    FS_FIELD_efc_b, FS_FIELD_efc_state, FS_FIELD_efc_D, FS_FIELD_efc_R, FS_FIELD_efc_J,
    FS_FIELD_efc_aref, FS_FIELD_efc_vel, FS_FIELD_efc_KBIP, FS_FIELD_efc_diagA, FS_FIELD_efc_pos,
    FS_FIELD_efc_margin, FS_FIELD_efc_frictionloss, FS_FIELD_efc_type, FS_FIELD_efc_id,
    FS_FIELD_efc_J_rownnz, FS_FIELD_efc_J_coladr, FS_FIELD_noslip_u, FS_FIELD_noslip_A,
    FS_FIELD_noslip_Y, FS_FIELD_pair_ncon, FS_FIELD_pair_conout, FS_FIELD_precon_dist,
    FS_FIELD_precon_pos, FS_FIELD_precon_normal, FS_FIELD_precon_tangent, FS_FIELD_contact_dist,
    FS_FIELD_contact_pos, FS_FIELD_contact_includemargin, FS_FIELD_contact_solref,
    FS_FIELD_contact_solreffriction, FS_FIELD_contact_solimp, FS_FIELD_contact_adhesion,
    FS_FIELD_contact_pair, FS_FIELD_contact_mu};

void fs_chip_plan(const fsModel* m, long budget, fsChipPlan* out) {
  memset(out, 0, sizeof *out);
  for (int f = 0; f < FS_NDATA_FIELD; f++) out->off[f] = -1;
  long used = 0;
  for (size_t k = 0; k < sizeof kOrder / sizeof *kOrder; k++) {
    const fsFieldInfo* f = &fs_data_fields[kOrder[k]];
    long n = (long)fs_chip_round(fs_field_bytes(m, f));
    out->nallow += n > 0;
    out->allow_bytes += n;
    if (n == 0 || used + n > budget) continue;
    out->off[kOrder[k]] = (int)used;
    out->nfield++;
    used += n;
  }
  out->bytes = (int)used;
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
  fsChipPlan none; // a plan within no budget still adds up what it may take
  fs_chip_plan(m, 0, &none);
  return none.allow_bytes;
}
