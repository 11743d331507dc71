// Actuator transmission (mj_transmission), one world per call (see src/exec/real.h for
// the lanes): joint transmission, and body transmission (adhesion) through the
// body's contacts and their constraint rows (stage_constraint.h).
#ifndef FLYSIM_ENGINE_STAGE_TRANSMISSION_H
#define FLYSIM_ENGINE_STAGE_TRANSMISSION_H

#include "src/engine/stage_constraint.h"

/// Position of dof j in pair p's chain, or -1.
FS_HD int fsi_chain_pos(const fsModel* m, int p, int j) {
  const int* chain = m->pair_dof + m->pair_dofadr[p];
  for (int k = 0; k < m->pair_nv[p] && chain[k] <= j; k++)
    if (chain[k] == j) return k;
  return -1;
}

/// Moment of body transmission on body `body` at dof j (mj_transmission,
/// mjTRN_BODY): minus the average over the body's contacts of their normal
/// Jacobians. A contact with rows counts the mean of its rows (each pyramid edge
/// weighted 0.5 / (condim - 1), the condim-1 row 1), summed over all rows in order
/// (mj_mulJacTVec); an excluded contact in the gap (exclude 1) its normal Jacobian,
/// summed apart and added after. Divided by the number of these contacts; 0 if none.
FS_HD fsReal fsi_body_moment(const fsModel* m, const fsData* d, int body, int j) {
  fsReal rows = 0, gap = 0;
  int counter = 0, ncon = d->ncon[0];
  for (int c = 0; c < ncon; c++) {
    const int* g = d->contact_geom + 2 * c;
    int ex = d->contact_exclude[c];
    if ((m->geom_bodyid[g[0]] != body && m->geom_bodyid[g[1]] != body) || (ex != 0 && ex != 1))
      continue;
    counter++;
    int k = fsi_chain_pos(m, d->contact_pair[c], j), adr = d->contact_efc_address[c];
    if (k < 0) continue;
    if (ex == 0 && adr >= 0) {
      int dim = d->contact_dim[c];
      fsReal w = dim == 1 ? 1 : (fsReal)0.5 / (fsReal)(dim - 1);
      for (int r = adr; r < adr + fsi_contact_rows(dim); r++)
        rows += d->efc_J[(size_t)r * m->njmax + k] * w;
    } else if (ex == 1) {
      fsReal off[3], jp[3], jr[3];
      fsi_contact_offset(m, d, c, off);
      fsi_contact_jac_col(m, d, c, j, off, jp, jr);
      gap += fsi_frame_dot(d->contact_frame + 9 * c, jp);
    }
  }
  return counter ? (rows + gap) * ((fsReal)-1 / (fsReal)counter) : 0;
}

/// mj_transmission: actuator lengths and moments (sparsity fixed in the model).
/// Joint transmission on a hinge or slide: length qpos * gear, moment gear. Body
/// transmission (adhesion): length 0, the moment over the body's contacts
/// (fsi_body_moment) at the dofs they can move; with no constraint rows in the
/// model (contacts disabled, or not built for them) the row is empty.
FS_HD FS_FORCEINLINE void fs_transmission(const fsModel* m, fsData* d) {
  FS_FOR_LANE(i, m->nu) {
    fsReal gear = m->actuator_gear[6 * i];
    if (m->actuator_trntype[i] == FS_TRN_BODY) {
      d->actuator_length[i] = 0;
    } else { // joint or joint-in-parent, on a hinge or slide
      int jnt = m->actuator_trnid[2 * i];
      d->actuator_length[i] = d->qpos[m->jnt_qposadr[jnt]] * gear;
      d->actuator_moment[m->moment_rowadr[i]] = gear;
    }
  }
  for (int a = 0; a < m->nu; a++) { // body transmissions: lanes over the row's dofs
    if (m->actuator_trntype[a] != FS_TRN_BODY) continue;
    int adr = m->moment_rowadr[a], body = m->actuator_trnid[2 * a];
    FS_FOR_LANE(k, m->moment_rownnz[a]) {
      d->actuator_moment[adr + k] = fsi_body_moment(m, d, body, m->moment_colind[adr + k]);
    }
  }
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
