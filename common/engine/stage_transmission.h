// Actuator transmission (mj_transmission), one world per call (see common/exec/real.h for
// the lanes): joint transmission, and body transmission (adhesion) through the
// body's contacts and their constraint rows (stage_constraint.h).
#ifndef FLYSIM_COMMON_ENGINE_STAGE_TRANSMISSION_H
#define FLYSIM_COMMON_ENGINE_STAGE_TRANSMISSION_H

#include "common/engine/stage_constraint.h"

/// Position of dof j in pair p's chain, or -1.
FS_HD int fsi_chain_pos(const fsModel* m, int p, int j) {
  const int* chain = m->pair_dof + m->pair_dofadr[p];
  for (int k = 0; k < m->pair_nv[p] && chain[k] <= j; k++)
    if (chain[k] == j) return k;
  return -1;
}

/// 1 if contact c touches body `body` and counts for its body transmission (exclude 0:
/// its rows; exclude 1: in the gap).
FS_HD int fsi_body_contact(const fsModel* m, const fsData* d, int body, int c) {
  const int* g = d->contact_geom + 2 * c;
  int ex = d->contact_exclude[c];
  return (m->geom_bodyid[g[0]] == body || m->geom_bodyid[g[1]] == body) && (ex == 0 || ex == 1);
}

/// Actuator a's body transmission (mj_transmission, mjTRN_BODY): at each dof j of its
/// moment row, minus the average over the body's contacts of their normal Jacobians. A
/// contact with rows counts the mean of its rows (each pyramid edge weighted 0.5 /
/// (condim - 1), the condim-1 row 1), summed over all rows in contact order
/// (mj_mulJacTVec); an excluded contact in the gap (exclude 1) its normal Jacobian, summed
/// apart and added after. Divided by the number of these contacts; 0 if none. The
/// contacts are visited once, the row's entries (lanes') summed in place, so that each
/// entry sums the same terms in the same order as a pass over the contacts per entry.
FS_HD void fsi_body_moment(const fsModel* m, fsData* d, int a) {
  int adr = m->moment_rowadr[a], nnz = m->moment_rownnz[a], body = m->actuator_trnid[2 * a];
  fsReal* row = d->actuator_moment + adr;
  int counter = 0, ngap = 0, ncon = d->ncon[0];
  FS_FOR_LANE(k, nnz) row[k] = 0;
  for (int c = 0; c < ncon; c++) {
    if (!fsi_body_contact(m, d, body, c)) continue;
    counter++;
    int efc = d->contact_efc_address[c];
    if (d->contact_exclude[c] == 1) {
      ngap++;
    } else if (efc >= 0) {
      int dim = d->contact_dim[c], p = d->contact_pair[c];
      int nrow =
          dim == 1 || (FSI_ROWS && m->elliptic) ? 1 : fsi_contact_rows(m, dim); // normal|edges
      fsReal w = nrow == 1 ? 1 : (fsReal)0.5 / (fsReal)(dim - 1);
      FS_FOR_LANE(k, nnz) {
        int pos = fsi_chain_pos(m, p, m->moment_colind[adr + k]);
        if (pos < 0) continue;
        fsReal rows = row[k];
        for (int r = efc; r < efc + nrow; r++) rows += d->efc_J[(size_t)r * m->njmax + pos] * w;
        row[k] = rows;
      }
    }
  }
  FS_FOR_LANE(k, nnz) {
    int j = m->moment_colind[adr + k];
    fsReal gap = 0;
    for (int c = 0; ngap && c < ncon; c++) { // the contacts in the gap (rare)
      if (d->contact_exclude[c] != 1 || !fsi_body_contact(m, d, body, c)) continue;
      int p = d->contact_pair[c], place = fsi_chain_pos(m, p, j);
      if (place < 0) continue;
      int side = fsi_pair_dof_side(m, p, place);
      fsReal off[3], jp[3], jr[3];
      fsi_contact_offset(m, d, c, side, off);
      fsi_contact_jac_col(d, side, j, off, jp, jr);
      gap += fsi_frame_dot(d->contact_frame + 9 * c, jp);
    }
    row[k] = counter ? (row[k] + gap) * ((fsReal)-1 / (fsReal)counter) : 0;
  }
}

/// Actuator a's fixed-tendon transmission (mj_tendon, then mj_transmission's mjTRN_TENDON):
/// the tendon's length sum_j coef_j qpos_j from 0 in wrap order, times gear; its moment row
/// (the tendon's Jacobian columns: a slot per wrap, sorted by dof, a joint listed twice
/// twice) each column's first slot the sum of its joint's coefficients from 0 in wrap order
/// (mju_combineSparseInc's), a repeated column's later slots 0, times gear. On one lane.
FS_HD_OUTLINE void fsi_fixed_tendon(const fsModel* m, fsData* d, int a, fsReal gear) {
  int t = m->actuator_trnid[2 * a], w0 = m->tendon_adr[t], w1 = w0 + m->tendon_num[t];
  d->actuator_length[a] = fsi_tendon_length(m, d, t) * gear;
  int adr = m->moment_rowadr[a];
  for (int k = adr; k < adr + m->moment_rownnz[a]; k++) {
    fsReal J = 0;
    int first = k == adr || m->moment_colind[k - 1] != m->moment_colind[k]; // sorted columns
    for (int w = w0; first && w < w1; w++)
      if (m->jnt_dofadr[m->wrap_objid[w]] == m->moment_colind[k]) J += m->wrap_prm[w];
    d->actuator_moment[k] = J * gear;
  }
}

/// mj_transmission: actuator lengths and moments (sparsity fixed in the model).
/// Joint transmission on a hinge or slide: length qpos * gear, moment gear. Fixed tendons:
/// fsi_fixed_tendon. Body
/// transmission (adhesion): length 0, the moment over the body's contacts
/// (fsi_body_moment) at the dofs they can move; with no constraint rows in the
/// model (contacts disabled, or not built for them) the row is empty.
FS_HD FS_FORCEINLINE void fs_transmission(const fsModel* m, fsData* d) {
  FS_FOR_LANE(i, m->nu) {
    fsReal gear = m->actuator_gear[6 * i];
    if (m->actuator_trntype[i] == FS_TRN_BODY) {
      d->actuator_length[i] = 0;
    } else if (m->actuator_trntype[i] == FS_TRN_TENDON) {
      fsi_fixed_tendon(m, d, i, gear);
    } else { // joint or joint-in-parent, on a hinge or slide
      int jnt = m->actuator_trnid[2 * i];
      d->actuator_length[i] = d->qpos[m->jnt_qposadr[jnt]] * gear;
      d->actuator_moment[m->moment_rowadr[i]] = gear;
    }
  }
  for (int a = 0; a < m->nu; a++) // body transmissions: lanes over the row's dofs
    if (m->actuator_trntype[a] == FS_TRN_BODY) fsi_body_moment(m, d, a);
  FS_SYNC();
}

/// Actuator i's moment row times x (nv) as MuJoCo's mju_dotSparse sums its row:
/// entries in 4 running sums by position % 4 up to the last multiple of 4,
/// (s0 + s2) + (s1 + s3), then the rest in order. MuJoCo's body-transmission row
/// holds the non-zeros only, so zeros of ours are skipped (they would shift the
/// positions); a joint transmission's single entry counts even if zero.
FS_HD fsReal fsi_moment_dot(const fsModel* m, const fsData* d, int i, const fsReal* x) {
  int a0 = m->moment_rowadr[i], n = m->moment_rownnz[i];
  int skip = m->actuator_trntype[i] == FS_TRN_BODY, nz = 0;
  for (int k = a0; k < a0 + n; k++) nz += !skip || d->actuator_moment[k] != 0;
  int nb = nz / 4 * 4, q = 0;
  fsReal s[4] = {0, 0, 0, 0}, res;
  for (int k = a0; k < a0 + n && q < nb; k++) {
    fsReal v = d->actuator_moment[k];
    if (skip && v == 0) continue;
    s[q++ & 3] += v * x[m->moment_colind[k]];
  }
  res = (s[0] + s[2]) + (s[1] + s[3]);
  q = 0;
  for (int k = a0; k < a0 + n; k++) {
    fsReal v = d->actuator_moment[k];
    if (skip && v == 0) continue;
    if (q++ >= nb) res += v * x[m->moment_colind[k]];
  }
  return res;
}

#endif
