// MuJoCo's noslip solver (mj_solNoSlip) for pyramidal contacts, and the dual finish
// that follows it in mj_fwdConstraint (qfrc_constraint = J' f, qacc = qacc_smooth +
// inv(M) qfrc_constraint). One world per call (see common/exec/real.h for the lanes).
//
// After the Newton solve, noslip runs Gauss-Seidel sweeps over each contact's pairs
// of opposing pyramid edges: the pair's mean (its normal force) is kept and the
// difference chosen to minimise the dual cost with the other forces fixed, so that
// friction holds the contact where the soft Newton solution lets it slip. This is
// what MuJoCo Warp leaves out (FlyGym strips noslip to 0 for the GPU); NeuroMechFly
// runs 5 iterations.
//
// MuJoCo works with AR = J inv(M) J' + R (mj_projectConstraint: Y = J M^-1/2, AR =
// Y Y' + R) and a row's residual b + AR f - R f as a sparse dot over its AR row.
// flysim keeps the same Y (computeY_backsub's arithmetic) but not AR: u = Y' f over
// the dofs, kept up to date as forces change, gives each residual b_r + Y_r u in one
// dot over the row's columns, and the 2 x 2 blocks of AR that noslip reads are Y_r .
// Y_s (+ R - R on the diagonal, as MuJoCo's extractBlock). The sums differ from
// MuJoCo's in order only (float64: ~1e-15 relative, measured by the tests); an AR of
// nefc^2 values per world would not fit on-chip.
//
// Lanes: Y rows and the pair blocks over the lanes; the sweep is sequential over
// pairs (each pair's residual depends on every force before it), with the lanes on
// the residual dots and the update of u.
#ifndef FLYSIM_COMMON_ENGINE_STAGE_NOSLIP_H
#define FLYSIM_COMMON_ENGINE_STAGE_NOSLIP_H

#include "common/engine/stage_solver.h"

/// Row r of Y = J M^-1/2 into noslip_Y (efc_J's layout), as computeY_backsub: the row
/// times inv(L') from its last column up (zeros skipped), then each column scaled by
/// 1 / sqrt(D) of the L'DL factor of M (noslip_sqrtinv). Column k's dof j adds to its
/// ancestors' places: the chain's first k where they are all it holds before j (M's row
/// j has k + 1 entries, as on a tree's path to a static geom), else from pair_chainpos.
FS_HD void fsi_noslip_row_Y(const fsModel* m, fsData* d, int r) {
  int n = d->efc_J_rownnz[r], p = fsi_row_pair(d, r);
  const int* cols = m->pair_dof + d->efc_J_coladr[r];
  const fsReal* J = d->efc_J + (size_t)r * m->njmax;
  fsSol* Y = d->noslip_Y + (size_t)r * m->njmax;
  FS_IVDEP // noslip_Y apart from efc_J
  for (int k = 0; k < n; k++) Y[k] = J[k];
  for (int k = n - 1; k >= 0; k--) {
    fsSol val = Y[k];
    if (val == 0) continue;
    int j = cols[k], adr = m->M_rowadr[j], na = m->M_rownnz[j] - 1;
    if (na == k) {
      FS_IVDEP // noslip_Y apart from qLD
      for (int a = 0; a < na; a++) Y[a] += -val * d->qLD[adr + a];
    } else {
      for (int a = 0; a < na; a++) {
        int place = m->pair_chainpos[p * m->nv + m->M_colind[adr + a]];
        if (place >= 0) Y[place] += -val * d->qLD[adr + a];
      }
    }
  }
  for (int k = 0; k < n; k++) Y[k] *= d->noslip_sqrtinv[cols[k]];
}

/// Y_r . Y_s over their common columns (rows of one pair: the same columns).
FS_HD fsSol fsi_noslip_YY(const fsModel* m, const fsData* d, int r, int s) {
  const fsSol *a = d->noslip_Y + (size_t)r * m->njmax, *b = d->noslip_Y + (size_t)s * m->njmax;
  fsSol sum = 0;
  for (int k = 0; k < d->efc_J_rownnz[r]; k++) sum += a[k] * b[k];
  return sum;
}

/// b_r + Y_r u: row r's residual (MuJoCo's b + AR f - R f). Lanes over the row's
/// columns; every lane gets it.
FS_HD fsSol fsi_noslip_residual(const fsModel* m, const fsData* d, int r) {
  const fsSol* Y = d->noslip_Y + (size_t)r * m->njmax;
  const int* cols = m->pair_dof + d->efc_J_coladr[r];
  fsSol part = FS_LANE == 0 ? d->efc_b[r] : 0;
  FS_FOR_LANE(k, d->efc_J_rownnz[r]) part += Y[k] * d->noslip_u[cols[k]];
  return fs_lane_sum(part);
}

/// u += Y_r' dr + Y_s' ds (rows of one pair: the same columns). Lanes over columns.
FS_HD void fsi_noslip_move(const fsModel* m, fsData* d, int r, fsSol dr, fsSol ds) {
  const fsSol *a = d->noslip_Y + (size_t)r * m->njmax,
              *b = d->noslip_Y + (size_t)(r + 1) * m->njmax;
  const int* cols = m->pair_dof + d->efc_J_coladr[r];
  FS_FOR_LANE(k, d->efc_J_rownnz[r]) d->noslip_u[cols[k]] += a[k] * dr + b[k] * ds;
  FS_SYNC();
}

/// One pair of opposing pyramid edges (rows j, j+1): keep their mean, choose their
/// half-difference y in [-mean, mean] minimising the dual cost, undo a change that
/// raises it by more than 1e-10 (costChange). Returns the cost change (<= 0).
FS_HD fsSol fsi_noslip_pair(const fsModel* m, fsData* d, int j) {
  fsSol res[2] = {fsi_noslip_residual(m, d, j), fsi_noslip_residual(m, d, j + 1)};
  fsSol* f = d->sol_force + j;
  fsSol old[2] = {f[0], f[1]};
  const fsSol* A2 = d->noslip_A + 2 * j;     // row j: A00, A01; row j + 1: A11
  fsSol A[4] = {A2[0], A2[1], A2[1], A2[2]}; // [A00 A01; A10 A11]
  fsSol bc[2];
  for (int k = 0; k < 2; k++) bc[k] = res[k] - (A[2 * k] * old[0] + A[2 * k + 1] * old[1]);
  fsSol mid = 0.5 * (f[0] + f[1]);
  fsSol K1 = A[0] + A[3] - A[1] - A[2];
  fsSol K0 = mid * (A[0] - A[3]) + bc[0] - bc[1];
  fsSol nf[2];
  if (K1 < FS_SOL_MINVAL) {
    nf[0] = nf[1] = mid;
  } else {
    fsSol y = -K0 / K1;
    if (y < -mid) {
      nf[0] = 0;
      nf[1] = 2 * mid;
    } else if (y > mid) {
      nf[0] = 2 * mid;
      nf[1] = 0;
    } else {
      nf[0] = mid + y;
      nf[1] = mid - y;
    }
  }
  fsSol dl[2] = {nf[0] - old[0], nf[1] - old[1]};
  fsSol quad = dl[0] * (A[0] * dl[0] + A[1] * dl[1]);
  quad += dl[1] * (A[2] * dl[0] + A[3] * dl[1]);
  fsSol change = 0.5 * quad + (dl[0] * res[0] + dl[1] * res[1]);
  if (change > 1e-10) return 0; // would raise the cost: keep the old forces
  FS_SYNC();                    // every lane has read the old forces
  FS_LANE0 {
    f[0] = nf[0];
    f[1] = nf[1];
  }
  fsi_noslip_move(m, d, j, dl[0], dl[1]);
  return change;
}

/// u = Y' f over the island's dofs: for each dof the rows that move it, in row order,
/// each adding Y_r,j f_r. Lanes over dofs through J's transpose; on one lane as a scatter
/// over the rows in order (the same terms in the same order per dof, so the same bits)
/// with no transpose, which one lane builds only where the rows are sparse.
FS_HD void fsi_noslip_u(const fsModel* m, fsData* d, const fsIsland* is) {
#ifdef FS_ONE_LANE
  for (int j = is->d0; j < is->d1; j++) d->noslip_u[j] = 0;
  for (int r = is->r0; r < is->r1; r++) {
    if (!fsi_in_island(d, is, r)) continue;
    const fsSol* Y = d->noslip_Y + (size_t)r * m->njmax; // (chain): row r's entries
    const int* cols = m->pair_dof + d->efc_J_coladr[r];
    fsSol f = d->sol_force[r];
    for (int k = 0; k < d->efc_J_rownnz[r]; k++) d->noslip_u[cols[k]] += Y[k] * f;
  }
#else
  (void)m;
  FS_FOR_LANE(t, is->d1 - is->d0) {
    int j = is->d0 + t, a = d->efc_JT_rowadr[j];
    fsSol s = 0;
    for (int q = a; q < a + d->efc_JT_rownnz[j]; q++)
      s += d->noslip_Y[d->efc_JT_adr[q]] * d->sol_force[d->efc_JT_row[q]];
    d->noslip_u[j] = s;
  }
#endif
}

/// mj_solNoSlip for one island's rows (pyramidal contacts), up to noslip_iterations
/// sweeps, stopping when the scaled improvement falls below noslip_tolerance; the
/// rows' dual states into efc_state; its iterations added to the island's count.
FS_HD FS_FORCEINLINE void fsi_noslip(const fsModel* m, fsData* d, const fsIsland* is) {
  FS_FOR_LANE(t, is->d1 - is->d0) {
    int j = is->d0 + t;
    d->noslip_sqrtinv[j] = 1 / sqrt(d->qLD[m->M_rowadr[j] + m->M_rownnz[j] - 1]);
  }
  FS_SYNC();
  FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
    if (fsi_in_island(d, is, r)) fsi_noslip_row_Y(m, d, r);
  }
  FS_SYNC();
  fsi_noslip_u(m, d, is);
  // pyramid edge pairs' blocks: (AR - R) diagonal clamped, AR_r,r+1
  FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
    if (!fsi_in_island(d, is, r) || d->efc_type[r] != FS_CNSTR_CONTACT_PYRAMIDAL) continue;
    fsSol R = d->efc_R[r], diag = fsi_noslip_YY(m, d, r, r) + R - R;
    d->noslip_A[2 * r] = diag > 1e-10 ? diag : 1e-10;
    int c = d->efc_id[r], first = d->contact_efc_address[c];
    d->noslip_A[2 * r + 1] = (r - first) % 2 == 0 ? fsi_noslip_YY(m, d, r, r + 1) : 0;
  }
  FS_SYNC();
  fsSol scale = 1 / (m->meaninertia * (fsSol)(m->nv > 1 ? m->nv : 1));
  int iter = 0;
  while (iter < m->noslip_iterations) {
    fsSol improvement = 0;
    if (iter == 0) { // the cost change of the first sweep starts from 0.5 f' R f
      fsSol part = 0;
      FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
        if (fsi_in_island(d, is, r)) part += 0.5 * d->sol_force[r] * d->sol_force[r] * d->efc_R[r];
      }
      improvement = fs_lane_sum(part);
    }
    for (int r = is->r0; r < is->r1; r++) { // contacts in row order, their edge pairs in turn
      if (!fsi_in_island(d, is, r) || d->efc_type[r] != FS_CNSTR_CONTACT_PYRAMIDAL) continue;
      int c = d->efc_id[r];
      if (d->contact_efc_address[c] != r) continue;
      for (int j = r; j < r + 2 * (d->contact_dim[c] - 1); j += 2)
        improvement -= fsi_noslip_pair(m, d, j);
    }
    FS_FOR_LANE_RANGE(r, is->r0, is->r1) { // dualStateChange
      if (fsi_in_island(d, is, r))
        d->efc_state[r] = d->sol_force[r] <= 0 ? FS_CNSTRSTATE_SATISFIED : FS_CNSTRSTATE_QUADRATIC;
    }
    FS_SYNC();
    improvement *= scale;
    iter++;
    if (improvement < m->noslip_tolerance) break;
  }
  FS_LANE0 {
    if (is->index < FS_NISLAND) {
      d->solver_niter[is->index] += iter;
      d->solver_nnoslip[is->index] = iter;
    }
  }
  FS_SYNC();
}

/// mj_dualFinish: qfrc_constraint = J' f (mj_mulJacTVec: rows in order, zero forces
/// skipped), qacc = qacc_smooth + inv(M) qfrc_constraint (mj_solveM), into sol_qfrc and
/// sol_qacc.
FS_HD FS_FORCEINLINE void fsi_dual_finish(const fsModel* m, fsData* d) {
#ifdef FS_ONE_LANE
  fsIsland all = fsi_island_all(m, d);
  if (m->nefcD)
    fsi_mul_jt_dense(m, d, &all, d->sol_force, d->sol_qfrc);
  else
#endif
    fsi_mul_jt(d, d->sol_force, d->sol_qfrc, 0, m->nv, 0);
  FS_FOR_LANE(i, m->nv) d->sol_qacc[i] = d->sol_qfrc[i];
  FS_SYNC();
  fsLayout LM = fsi_layout_M(m);
  fsi_solve_ld_levels(&LM, d->qLD, d->qLDiagInv, d->sol_qacc, 0, m->nv);
  FS_FOR_LANE(i, m->nv) d->sol_qacc[i] += d->qacc_smooth[i];
  FS_SYNC();
}

/// Noslip on every island (or on everything without islands), then the dual finish.
FS_HD FS_FORCEINLINE void fsi_noslip_islands(const fsModel* m, fsData* d) {
  int nisland = d->nisland[0] ? d->nisland[0] : 1;
  for (int k = 0; k < nisland; k++) {
    fsIsland is = fsi_island(m, d, k);
    fsi_noslip(m, d, &is);
  }
  fsi_dual_finish(m, d);
}

#endif
