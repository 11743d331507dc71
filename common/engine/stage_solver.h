// The constraint solver of mj_fwdConstraint for contact rows: MuJoCo's warm start
// and its Newton solver (mj_solNewton with the pyramidal cone: the exact line
// search, incremental Cholesky updates of the Hessian, MuJoCo's convergence tests),
// per constraint island as MuJoCo 3.16 solves them. One world per call (see
// common/exec/real.h for the lanes); noslip is in stage_noslip.h.
//
// MuJoCo's operations and orders of summation, so that the host float64 build gives
// MuJoCo's bits where MuJoCo's Jacobian is sparse (jacobian="auto" from nv 60 on, so
// for NeuroMechFly); for dense Jacobians MuJoCo factors the Hessian densely, and so
// does the host (over its dense rows: the same bits), while the lanes keep the tree
// factor (the results agree to rounding). Comments name MuJoCo's functions
// (engine_solver.c, engine_forward.c, engine_core_constraint.c).
//
// Islands (mj_island): the trees that rows join, numbered by their first tree; an
// island's dofs are its trees' in increasing order (a tree's are consecutive) and its
// rows come in row order. Each is solved alone, as MuJoCo solves its gathered copy,
// with its own scale 1 / (sum of its diagonal of M); with islands disabled
// (mjDSBL_ISLAND) one solve takes every row and dof with the scale 1 / (meaninertia *
// nv). Rows join two trees only where the host keeps them dense (nefcD: elsewhere the
// model check refuses rows across trees), so on the lanes an island is one tree.
//
// Precision: the iteration runs in the solver's real (fsSol, double in every build):
// qacc, the forces, J qacc - aref, the gradient, the Hessian and its factor; the
// rows, M and its factor are read in fsReal. efc_b is kept in fsSol (noslip's
// residuals need it); qacc, qfrc_constraint and efc_force are written back in fsReal.
//
// Lanes: rows (the constraint update, J x, the line search's row terms, the rows'
// quadratics) and dofs (M x, J' f, the gradient, the Hessian's entries) are split
// over the lanes; the row sums of the line search and the dots over dofs are lane
// parts added by fs_lane_sum (on one lane: MuJoCo's sequential order); the tree
// passes (factor, solves) go by depth (common/engine/linalg.h); the line search's scalar
// logic runs on every lane alike. A rank-1 update of the factor is serial over the
// dofs of its row's chain, lanes over each dof's entries.
#ifndef FLYSIM_COMMON_ENGINE_STAGE_SOLVER_H
#define FLYSIM_COMMON_ENGINE_STAGE_SOLVER_H

#include "common/engine/linalg.h"
#include "common/engine/stage_constraint.h"

/// An island being solved: dofs [d0, d1); rows [r0, r1), from its first row to its last,
/// the range its row loops visit, so that an island costs its own rows and not every
/// island's (contacts come in pair order, which keeps a tree's rows together where the
/// model lists its pairs so); `tree`, the tree whose rows in the range are its own (the
/// others skipped), or -1 where every row of the range is (islands off, one island
/// holding every row, or the island's rows one run); the improvement and gradient scale;
/// its index (statistics). One lane: where its trees are several (ntree > 1), [d0, d1)
/// spans them and their dofs are dof (n: MuJoCo's gathered order), the trees trees.
typedef struct fsIsland {
  int d0, d1, tree, index;
  fsSol scale;
  int r0, r1;
#ifdef FS_ONE_LANE
  int ntree, n;
  const int *trees, *dof;
#endif
} fsIsland;

/// The island's dofs as runs of consecutive dofs: its trees' (one run where it is one
/// tree, or on the lanes), run s being [fsi_run_d0, fsi_run_d1).
FS_HD int fsi_island_nrun(const fsIsland* is) {
#ifdef FS_ONE_LANE
  return is->ntree > 1 ? is->ntree : 1;
#else
  (void)is;
  return 1;
#endif
}

FS_HD int fsi_run_d0(const fsModel* m, const fsIsland* is, int s) {
#ifdef FS_ONE_LANE
  if (is->ntree > 1) return m->tree_dofadr[is->trees[s]];
#endif
  (void)m, (void)s;
  return is->d0;
}

FS_HD int fsi_run_d1(const fsModel* m, const fsIsland* is, int s) {
#ifdef FS_ONE_LANE
  if (is->ntree > 1) return m->tree_dofadr[is->trees[s]] + m->tree_dofnum[is->trees[s]];
#endif
  (void)m, (void)s;
  return is->d1;
}

/// The block that follows runs for each dof i of island is: lanes over [d0, d1), or on one
/// lane each run's dofs in increasing order (the solver's vectors apart: FS_IVDEP).
#ifdef FS_ONE_LANE
#define FSI_FOR_ISLAND_DOF(m, is, i)                                                               \
  for (int s_ = 0, ns_ = fsi_island_nrun(is); s_ < ns_; s_++) FS_IVDEP                             \
  for (int i = fsi_run_d0(m, is, s_), e_ = fsi_run_d1(m, is, s_); i < e_; i++)
#else
#define FSI_FOR_ISLAND_DOF(m, is, i)                                                               \
  FS_FOR_LANE(t_, (is)->d1 - (is)->d0) for (int i = (is)->d0 + t_, o_ = 1; o_; o_ = 0)
#endif

/// x . y over the island's dofs, every lane gets it: on one lane mju_dot's order over
/// MuJoCo's gathered vectors.
FS_HD fsSol fsi_island_dot(const fsIsland* is, const fsSol* x, const fsSol* y) {
#ifdef FS_ONE_LANE
  if (is->ntree > 1) return fsi_dot_mj_list(x, y, is->dof, is->n);
#endif
  return fsi_lane_dot(x + is->d0, y + is->d0, is->d1 - is->d0);
}

/// Row r times x over the island's dofs (J x's entry; MuJoCo's gathered row, mju_dot).
FS_HD fsSol fsi_island_row_dot(const fsModel* m, const fsData* d, const fsIsland* is, int r,
                               const fsSol* x) {
#ifdef FS_ONE_LANE
  if (is->ntree > 1) return fsi_dot_mj_list(d->efc_Jd + (size_t)r * m->nv, x, is->dof, is->n);
#endif
  return fsi_efc_dot_range(m, d, r, x, is->d0, is->d1 - is->d0);
}

/// res = M x over the island's dofs (M is block-diagonal by tree: run by run).
FS_HD void fsi_island_mul_M(const fsModel* m, const fsData* d, const fsIsland* is, const fsSol* x,
                            fsSol* res) {
  fsLayout LM = fsi_layout_M(m);
  for (int s = 0; s < fsi_island_nrun(is); s++)
    fsi_mul_sym(&LM, d->M, x, res, fsi_run_d0(m, is, s), fsi_run_d1(m, is, s));
}

#ifdef FS_ONE_LANE
/// The island's dofs (n) and its column k's dof in the host's dense rows.
static inline int fsi_island_n(const fsIsland* is) {
  return is->ntree > 1 ? is->n : is->d1 - is->d0;
}

static inline int fsi_island_col(const fsIsland* is, int k) {
  return is->ntree > 1 ? is->dof[k] : is->d0 + k;
}
#endif

/// The island of every dof and row (islands disabled; noslip's whole).
FS_HD fsIsland fsi_island_all(const fsModel* m, const fsData* d) {
  fsIsland is;
  is.d0 = is.index = is.r0 = 0;
  is.d1 = m->nv;
  is.tree = -1;
  is.scale = 0;
  is.r1 = d->nefc[0];
#ifdef FS_ONE_LANE
  is.ntree = is.n = 0;
  is.trees = is.dof = NULL;
#endif
  return is;
}

FS_HD int fsi_in_island(const fsData* d, const fsIsland* is, int r) {
  return is->tree < 0 || d->efc_tree[r] == is->tree;
}

/// The first contact row of the island's range (after the friction-loss and limit rows,
/// nefc_dof, clamped to [r0, r1]).
FS_HD int fsi_first_contact_row(const fsData* d, const fsIsland* is) {
  int c0 = d->nefc_dof[0];
  return c0 < is->r0 ? is->r0 : (c0 > is->r1 ? is->r1 : c0);
}

/// Row r's contact pair (a contact's row).
FS_HD int fsi_row_pair(const fsData* d, int r) {
  return d->contact_pair[d->efc_id[r]];
}

/// Row r's tree (its island): its pair's, or its one dof's (friction loss, limits).
FS_HD int fsi_row_tree(const fsModel* m, const fsData* d, int r) {
  if (FSI_ROWS && r < d->nefc_dof[0]) return m->dof_treeid[m->pair_dof[d->efc_J_coladr[r]]];
  return m->pair_tree[fsi_row_pair(d, r)];
}

/// Place of dof j in row r's columns (a contact's row), -1 if the row does not move it.
FS_HD int fsi_row_place(const fsModel* m, const fsData* d, int r, int j) {
  return m->pair_chainpos[fsi_row_pair(d, r) * m->nv + j];
}

/// mj_constraintUpdate_impl for a limit row or a contact's (pyramidal edge, condim-1
/// normal): quadratic with force -D jar where jar < 0, else satisfied with no force.
/// Returns its cost: 0.5 D jar^2 where quadratic.
FS_HD fsSol fsi_row_update(const fsData* d, int r, fsSol jar, fsSol* force, int* state) {
  if (jar >= 0) {
    *force = 0;
    *state = FS_CNSTRSTATE_SATISFIED;
    return 0;
  }
  *force = -d->efc_D[r] * jar;
  *state = FS_CNSTRSTATE_QUADRATIC;
  return 0.5 * d->efc_D[r] * jar * jar;
}

/// The same for an equality, friction-loss or limit row (r < nefc_dof). Equality: always
/// quadratic. Friction loss (bound f = efc_frictionloss, read from the dof's
/// dof_frictionloss: efc_frictionloss's life ends with the rows): linear with force +f
/// where jar <= -R f, -f where jar >= R f, else quadratic; its cost -0.5 R f^2 -+ f jar
/// where linear.
FS_HD fsSol fsi_dof_row_update(const fsModel* m, const fsData* d, int r, fsSol jar, fsSol* force,
                               int* state) {
  if (d->efc_type[r] == FS_CNSTR_EQUALITY) {
    *force = -d->efc_D[r] * jar;
    *state = FS_CNSTRSTATE_QUADRATIC;
    return 0.5 * d->efc_D[r] * jar * jar;
  }
  if (!fsi_friction_row(d, r)) return fsi_row_update(d, r, jar, force, state);
  fsSol f = fsi_row_frictionloss(m, d, r), R = d->efc_R[r];
  if (jar <= -R * f) {
    *force = f;
    *state = FS_CNSTRSTATE_LINEARNEG;
    return -0.5 * R * f * f - f * jar;
  }
  if (jar >= R * f) {
    *force = -f;
    *state = FS_CNSTRSTATE_LINEARPOS;
    return -0.5 * R * f * f + f * jar;
  }
  *force = -d->efc_D[r] * jar;
  *state = FS_CNSTRSTATE_QUADRATIC;
  return 0.5 * d->efc_D[r] * jar * jar;
}

/// Contact c's mu under the elliptic cone (its rows from r), as fsi_cone_impedance made it
/// (contact_mu, whose life ends with the rows): friction[0] sqrt(R_1 / R_0).
FS_HD fsReal fsi_cone_mu(const fsData* d, int r, int c) {
  return d->contact_friction[5 * c] * fs_sqrt(d->efc_R[r + 1] / d->efc_R[r]);
}

/// mj_constraintUpdate_impl for elliptic contact c (its rows r, r + 1, ... r + dim - 1: jar
/// there, forces and states written there): in the cone's space U = (mu jar_0, friction_k
/// jar_k), N = U_0 and T = |U_1..|: the top zone (N >= mu T) satisfied with no force, the
/// bottom zone (mu N + T <= 0) quadratic in every row, else the middle zone with cost 0.5
/// Dm (N - mu T)^2, Dm = D_0 / (mu^2 (1 + mu^2)), and, where H is not NULL (Newton), its
/// Hessian in the rows' space into H (dim x dim). The cost's terms added to *cost in
/// MuJoCo's order.
FS_HD void fsi_cone_update(const fsData* d, int r, int c, const fsSol* jar, fsSol* force,
                           int* state, fsSol* cost, fsSol* H) {
  // U_j = friction_(j-1) jar_j read where used: no arrays (no local memory on the device)
  int dim = d->contact_dim[c];
  const fsReal* fr = d->contact_friction + 5 * c;
  fsSol mu = fsi_cone_mu(d, r, c);
#define FSI_U(j) (jar[r + (j)] * (fsSol)fr[(j)-1])
  for (int j = 0; j < dim; j++) force[r + j] = -d->efc_D[r + j] * jar[r + j];
  fsSol N = jar[r] * mu, T2; // |U_t|^2 in mju_dot's order: dim - 1 is 2, 3 or 5
  if (dim == 6)
    T2 = (FSI_U(1) * FSI_U(1) + FSI_U(3) * FSI_U(3)) + (FSI_U(2) * FSI_U(2) + FSI_U(4) * FSI_U(4)) +
         FSI_U(5) * FSI_U(5);
  else if (dim == 4)
    T2 = FSI_U(1) * FSI_U(1) + FSI_U(2) * FSI_U(2) + FSI_U(3) * FSI_U(3);
  else
    T2 = FSI_U(1) * FSI_U(1) + FSI_U(2) * FSI_U(2);
  fsSol T = sqrt(T2);
  int st;
  if (N >= mu * T || (T <= 0 && N >= 0)) { // top zone
    for (int j = 0; j < dim; j++) force[r + j] = 0;
    st = FS_CNSTRSTATE_SATISFIED;
  } else if (mu * N + T <= 0 || (T <= 0 && N < 0)) { // bottom zone
    for (int j = 0; j < dim; j++) *cost += 0.5 * d->efc_D[r + j] * jar[r + j] * jar[r + j];
    st = FS_CNSTRSTATE_QUADRATIC;
  } else { // middle zone
    fsSol Dm = d->efc_D[r] / (mu * mu * (1 + mu * mu)), NmT = N - mu * T;
    *cost += 0.5 * Dm * NmT * NmT;
    force[r] = -Dm * NmT * mu;
    for (int j = 1; j < dim; j++) force[r + j] = -force[r] / T * FSI_U(j) * fr[j - 1];
    st = FS_CNSTRSTATE_CONE;
    if (H) { // (1, -mu/T U) first row, mu N / T^3 U U' + (mu^2 - mu N / T) I below, scaled
      fsSol scl = -mu / T;
      H[0] = 1;
      for (int j = 1; j < dim; j++) H[j] = scl * FSI_U(j);
      scl = mu * N / (T * T * T);
      for (int k = 1; k < dim; k++)
        for (int j = k; j < dim; j++) H[k * dim + j] = scl * FSI_U(j) * FSI_U(k);
      scl = mu * mu - mu * N / T;
      for (int j = 1; j < dim; j++) H[j * (dim + 1)] += scl;
      for (int k = 0; k < dim; k++) {
        scl = Dm * (k == 0 ? mu : (fsSol)fr[k - 1]);
        for (int j = k; j < dim; j++) H[k * dim + j] *= scl * (j == 0 ? mu : (fsSol)fr[j - 1]);
      }
      for (int k = 0; k < dim; k++)
        for (int j = k + 1; j < dim; j++) H[j * dim + k] = H[k * dim + j];
    }
  }
#undef FSI_U
  for (int j = 0; j < dim; j++) state[r + j] = st;
}

/// Row r is the first of an elliptic contact's (the one that updates them all): 1; another
/// of its rows: -1; any other row: 0.
FS_HD int fsi_cone_row(const fsData* d, int r) {
  if (d->efc_type[r] != FS_CNSTR_CONTACT_ELLIPTIC) return 0;
  return d->contact_efc_address[d->efc_id[r]] == r ? 1 : -1;
}

/// The constraint update of contact row r of a model with elliptic cones (fsi_row_update;
/// an elliptic contact's at its first row, fsi_cone_update, where H is its cone Hessian or
/// NULL), its cost added to *cost. Returns 1 where a cone is in its middle zone.
FS_HD int fsi_update_cone_row(fsData* d, int r, const fsSol* jar, fsSol* force, int* state,
                              fsSol* cost, int hessian) {
  int cone = fsi_cone_row(d, r);
  if (cone == 0) *cost += fsi_row_update(d, r, jar[r], force + r, state + r);
  if (cone <= 0) return 0;
  int c = d->efc_id[r];
  fsi_cone_update(d, r, c, jar, force, state, cost, hessian ? d->sol_coneH + 36 * c : NULL);
  return state[r] == FS_CNSTRSTATE_CONE;
}

/// The transpose of J's sparsity (mju_transposeSparse's structure, no values): for
/// each dof j the rows that move it, in row order, at [efc_JT_rowadr[j],
/// + efc_JT_rownnz[j]) of efc_JT_row, with their entries' indices in efc_J (and in
/// noslip_Y, the same layout) in efc_JT_adr. Built once per step, so that J' f, the
/// Hessian and noslip's Y' f visit only the rows that move a dof. The friction-loss and
/// limit rows come first, one dof each (one lane: two may move one dof). A contact's
/// rows share its pair's chain: contacts in order, each counted (then written) into the
/// lists of its chain's dofs, lanes over the chain (its dofs are distinct).
FS_HD void fsi_transpose_rows(const fsModel* m, fsData* d) {
  int ncon = d->ncon[0], nv = m->nv, ndof = FSI_ROWS ? d->nefc_dof[0] : 0;
  int *nnz = d->efc_JT_rownnz, *adr = d->efc_JT_rowadr;
  FS_FOR_LANE(j, nv) nnz[j] = 0;
  FS_SYNC();
  if (ndof) {
    FS_LANE0 {
      for (int r = 0; r < ndof; r++) nnz[m->pair_dof[d->efc_J_coladr[r]]]++;
    }
    FS_SYNC();
  }
  for (int c = 0; c < ncon; c++) {
    int r0 = d->contact_efc_address[c], p = d->contact_pair[c];
    if (r0 < 0) continue;
    const int* chain = m->pair_dof + m->pair_dofadr[p];
    int rows = fsi_contact_rows(m, d->contact_dim[c]);
    FS_FOR_LANE(k, m->pair_nv[p]) nnz[chain[k]] += rows;
    FS_SYNC();
  }
  FS_LANE0 {
    int a = 0;
    for (int j = 0; j < nv; j++) {
      adr[j] = a;
      a += nnz[j];
      nnz[j] = 0;
    }
    for (int r = 0; r < ndof; r++) {
      int j = m->pair_dof[d->efc_J_coladr[r]], q = adr[j] + nnz[j]++;
      d->efc_JT_row[q] = r;
      d->efc_JT_adr[q] = r * m->njmax;
    }
  }
  FS_SYNC();
  for (int c = 0; c < ncon; c++) {
    int r0 = d->contact_efc_address[c], p = d->contact_pair[c];
    if (r0 < 0) continue;
    const int* chain = m->pair_dof + m->pair_dofadr[p];
    int rows = fsi_contact_rows(m, d->contact_dim[c]);
    FS_FOR_LANE(k, m->pair_nv[p]) {
      int j = chain[k], q = adr[j] + nnz[j];
      FS_IVDEP // efc_JT_row apart from efc_JT_adr
      for (int r = r0; r < r0 + rows; r++, q++) {
        d->efc_JT_row[q] = r;
        d->efc_JT_adr[q] = r * m->njmax + k;
      }
      nnz[chain[k]] += rows;
    }
    FS_SYNC();
  }
}

/// res = x' f over dofs [d0, d1), x J or noslip_Y (efc_J's layout), the rows of each
/// dof from the transpose (fsi_transpose_rows). dotsparse: as mju_mulMatVecSparse takes
/// the sparse transpose (mju_dotSparse over the rows that move the dof, in row order:
/// four running sums up to the last multiple of 4, (s0 + s2) + (s1 + s3), then the
/// rest); else as mju_mulMatTVec(Sparse) scatters (rows in order, zero forces
/// skipped). Lanes over dofs.
FS_HD void fsi_mul_xt(const fsData* d, const fsReal* x, const fsSol* f, fsSol* res, int d0, int d1,
                      int dotsparse) {
  FS_FOR_LANE(t, d1 - d0) {
    int j = d0 + t, a = d->efc_JT_rowadr[j], n = d->efc_JT_rownnz[j];
    const int *row = d->efc_JT_row + a, *adr = d->efc_JT_adr + a;
    fsSol acc = 0;
    if (dotsparse) { // scalars, not an array: no local memory on the device
      int nb = n / 4 * 4;
      fsSol s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int q = 0; q < nb; q += 4) {
        s0 += x[adr[q]] * f[row[q]];
        s1 += x[adr[q + 1]] * f[row[q + 1]];
        s2 += x[adr[q + 2]] * f[row[q + 2]];
        s3 += x[adr[q + 3]] * f[row[q + 3]];
      }
      acc = (s0 + s2) + (s1 + s3);
      for (int q = nb; q < n; q++) acc += x[adr[q]] * f[row[q]];
    } else {
      for (int q = 0; q < n; q++) {
        if (f[row[q]] != 0) acc += x[adr[q]] * f[row[q]];
      }
    }
    res[j] = acc;
  }
  FS_SYNC();
}

/// res = J' f over dofs [d0, d1) (fsi_mul_xt).
FS_HD void fsi_mul_jt(const fsData* d, const fsSol* f, fsSol* res, int d0, int d1, int dotsparse) {
  fsi_mul_xt(d, d->efc_J, f, res, d0, d1, dotsparse);
}

#ifdef FS_ONE_LANE
/// res = J' f over the island's dofs from the dense rows (efc_Jd, one lane), as MuJoCo's
/// dense loop (mju_mulMatTVec) and fsi_mul_xt's scatter: rows in order, zero forces
/// skipped, each adding f_r J_r over the dofs (the columns off its chain add zeros).
FS_HD void fsi_mul_jt_dense(const fsModel* m, const fsData* d, const fsIsland* is, const fsSol* f,
                            fsSol* res) {
  FSI_FOR_ISLAND_DOF(m, is, j) res[j] = 0;
  for (int r = is->r0; r < is->r1; r++) {
    fsSol fr = f[r];
    if (fr == 0 || !fsi_in_island(d, is, r)) continue;
    const double* J = d->efc_Jd + (size_t)r * m->nv; // (nv)
    // res (a solver vector) apart from efc_Jd
    FSI_FOR_ISLAND_DOF(m, is, j) res[j] += J[j] * fr;
  }
}
#endif

//---------------------------------- warm start
//------------------------------------------------------

/// J's transpose; each row's tree (its island) and efc_b = J qacc_smooth - aref
/// (mj_fwdConstraint).
FS_HD void fsi_solver_rows(const fsModel* m, fsData* d) {
#ifdef FS_ONE_LANE
  if (!m->nefcD) // dense rows on one lane: J' f and the Hessian go by the rows, not the transpose
#endif
    fsi_transpose_rows(m, d);
  const fsSol* qacc_smooth = fsi_sol_vec(m, d, d->qacc_smooth);
  FS_FOR_LANE(r, d->nefc[0]) {
    d->efc_tree[r] = fsi_row_tree(m, d, r);
    d->efc_b[r] = fsi_efc_dot(m, d, r, qacc_smooth) - d->efc_aref[r];
  }
  FS_SYNC();
}

/// The rows' forces and states for jar (sol_force, efc_state) and their total cost
/// (mj_constraintUpdate), every lane gets it.
FS_HD fsSol fsi_update_all(const fsModel* m, fsData* d, const fsSol* jar) {
  fsSol cost = 0;
  int nefc = d->nefc[0], c0 = 0; // c0: the first contact row
#if FSI_ROWS // the friction-loss and limit rows, then the contacts' (each row on its lane)
  c0 = d->nefc_dof[0];
  FS_FOR_LANE(r, c0)
  cost += fsi_dof_row_update(m, d, r, jar[r], d->sol_force + r, d->efc_state + r);
  if (m->elliptic) {
    FS_FOR_LANE_RANGE(r, c0, nefc)
    fsi_update_cone_row(d, r, jar, d->sol_force, d->efc_state, &cost, 0);
    return fs_lane_sum(cost);
  }
#endif
  FS_FOR_LANE_RANGE(r, c0, nefc)
  cost += fsi_row_update(d, r, jar[r], d->sol_force + r, d->efc_state + r);
  return fs_lane_sum(cost);
}

/// MuJoCo's warmstart (non-PGS): qacc = qacc_warmstart unless the cost (Gauss +
/// constraints) of qacc_smooth is lower; dofs outside the islands get qacc_smooth.
/// Leaves sol_force and efc_state as the last evaluation (qacc_smooth's) left them.
/// Without warm start: qacc_smooth and zero forces.
FS_HD FS_FORCEINLINE void fsi_warmstart(const fsModel* m, fsData* d) {
  int nv = m->nv, nefc = d->nefc[0];
  if (!m->warmstart) {
    FS_FOR_LANE(i, nv) d->sol_qacc[i] = d->qacc_smooth[i];
    FS_FOR_LANE(r, nefc) d->sol_force[r] = 0;
    FS_SYNC();
    return;
  }
  const fsSol* warm = fsi_sol_vec(m, d, d->qacc_warmstart);
  FS_FOR_LANE(r, nefc) d->sol_Jaref[r] = fsi_efc_dot(m, d, r, warm) - d->efc_aref[r];
  FS_SYNC();
  fsSol cost_warm = fsi_update_all(m, d, d->sol_Jaref);
  fsLayout LM = fsi_layout_M(m);
  fsi_mul_sym(&LM, d->M, warm, d->sol_Ma, 0, nv);
  fsSol part = FS_LANE == 0 ? cost_warm : 0;
  FS_FOR_LANE(i, nv) {
    part += 0.5 * (d->sol_Ma[i] - d->qfrc_smooth[i]) *
            ((fsSol)d->qacc_warmstart[i] - d->qacc_smooth[i]);
  }
  cost_warm = fs_lane_sum(part);
  fsSol cost_smooth = fsi_update_all(m, d, d->efc_b);
  int smooth = cost_warm > cost_smooth, islands = d->nisland[0] > 0;
  FS_FOR_LANE(i, nv) {
    int outside = islands && d->tree_island[m->dof_treeid[i]] < 0;
    d->sol_qacc[i] = smooth || outside ? d->qacc_smooth[i] : d->qacc_warmstart[i];
  }
  FS_SYNC();
}

#ifdef FS_ONE_LANE
/// The root of tree t's set (union-find parents p: the set's first tree).
static inline int fsi_tree_root(const int* p, int t) {
  while (p[t] != t) t = p[t];
  return t;
}

/// mj_dsuMerge: trees a and b (b -1: a alone) into one set, under its first tree.
static inline void fsi_tree_join(int* p, int a, int b) {
  if (b < 0) b = a;
  if (p[a] < 0) p[a] = a;
  if (p[b] < 0) p[b] = b;
  a = fsi_tree_root(p, a);
  b = fsi_tree_root(p, b);
  if (a < b) p[b] = a;
  if (b < a) p[a] = b;
}

/// mj_island where rows may join trees (the host's dense rows, one lane): the trees a row
/// moves joined (a contact's two bodies' trees; an equality's or a tendon's, its non-zero
/// columns' in column order, as MuJoCo's scan of the dense row; a dof's friction-loss or
/// limit row's dof's tree); islands numbered in the order of their first trees (tree_island), and
/// each row's efc_tree its island's first tree. island_tree: the union-find parents here.
static inline void fsi_islands_joined(const fsModel* m, fsData* d) {
  int nefc = d->nefc[0], *p = d->island_tree;
  for (int t = 0; t < m->ntree; t++) p[t] = -1;
  for (int r = 0; r < nefc; r++) {
    if (r >= d->nefc_dof[0]) {
      fsi_tree_join(p, d->efc_tree[r], m->pair_tree2[fsi_row_pair(d, r)]);
      continue;
    }
    int type = d->efc_type[r];
    if (type != FS_CNSTR_EQUALITY && type != FS_CNSTR_FRICTION_TENDON &&
        type != FS_CNSTR_LIMIT_TENDON) {
      fsi_tree_join(p, d->efc_tree[r], -1);
      continue;
    }
    const double* J = d->efc_Jd + (size_t)r * m->nv; // (nv)
    int prev = -1;
    for (int j = 0; j < m->nv; j++) {
      if (J[j] == 0) continue;
      int t = m->dof_treeid[j];
      fsi_tree_join(p, t, prev);
      if (prev < 0) d->efc_tree[r] = t; // its first tree, not its chain's first column's
      prev = t;
      j = m->tree_dofadr[t] + m->tree_dofnum[t] - 1; // the tree's other dofs: the same tree
    }
    if (prev < 0) fsi_tree_join(p, d->efc_tree[r], -1); // no column (MuJoCo errs)
  }
  int n = 0;
  for (int t = 0; t < m->ntree; t++) {
    int root = p[t] < 0 ? -1 : fsi_tree_root(p, t);
    d->tree_island[t] = root < 0 ? -1 : (root == t ? n++ : d->tree_island[root]);
  }
  d->nisland[0] = n;
  for (int r = 0; r < nefc; r++) d->efc_tree[r] = fsi_tree_root(p, d->efc_tree[r]);
}
#endif

/// mj_island: each tree with rows is an island, numbered in tree order (tree_island, -1:
/// none; nisland), or where rows may join trees fsi_islands_joined. None with islands
/// disabled.
FS_HD void fsi_islands(const fsModel* m, fsData* d) {
  int nefc = d->nefc[0];
#ifdef FS_ONE_LANE
  if (m->nefcD && m->islands) {
    fsi_islands_joined(m, d);
    return;
  }
#endif
  FS_FOR_LANE(t, m->ntree) {
    int has = 0;
    for (int r = 0; r < nefc && !has && m->islands; r++) has = d->efc_tree[r] == t;
    d->tree_island[t] = has ? 0 : -1;
  }
  FS_SYNC();
  FS_LANE0 {
    int n = 0;
    for (int t = 0; t < m->ntree; t++)
      if (d->tree_island[t] >= 0) d->tree_island[t] = n++;
    d->nisland[0] = n;
  }
  FS_SYNC();
}

//---------------------------------- Newton
//----------------------------------------------------------

/// PrimalUpdateConstraint: the island's rows' forces and states from Jaref (into
/// sol_force and sol_state; for Newton the cones' Hessians into sol_coneH), sol_qfrc = J' f over
/// its dofs (mju_mulMatVecSparse of the transpose for sparse Jacobians, mju_mulMatTVec for dense).
/// The costs are not needed: the line search works with differences. Returns whether a contact is
/// in its cone's middle zone (every lane).
FS_HD int fsi_primal_update(const fsModel* m, fsData* d, const fsIsland* is, int newton) {
  int ncone = 0, c0 = is->r0; // c0: the island's first contact row
#if FSI_ROWS // the friction-loss and limit rows, then the contacts' (each row on its lane)
  c0 = fsi_first_contact_row(d, is);
  FS_FOR_LANE_RANGE(r, is->r0, c0) {
    if (fsi_in_island(d, is, r))
      fsi_dof_row_update(m, d, r, d->sol_Jaref[r], d->sol_force + r, d->sol_state + r);
  }
  if (m->elliptic) {
    fsSol cost = 0, middle = 0; // middle: cones in their middle zone
    FS_FOR_LANE_RANGE(r, c0, is->r1) {
      if (fsi_in_island(d, is, r))
        middle +=
            fsi_update_cone_row(d, r, d->sol_Jaref, d->sol_force, d->sol_state, &cost, newton);
    }
    ncone = fs_lane_sum(middle) > 0;
    c0 = is->r1;
  }
#endif
  FS_FOR_LANE_RANGE(r, c0, is->r1) {
    if (fsi_in_island(d, is, r))
      fsi_row_update(d, r, d->sol_Jaref[r], d->sol_force + r, d->sol_state + r);
  }
  FS_SYNC();
#ifdef FS_ONE_LANE
  if (m->nefcD) {
    fsi_mul_jt_dense(m, d, is, d->sol_force, d->sol_qfrc);
    return ncone;
  }
#endif
  fsi_mul_jt(d, d->sol_force, d->sol_qfrc, is->d0, is->d1, m->jac_sparse);
  return ncone;
}

/// PrimalUpdateGrad: grad = M qacc - qfrc_smooth - qfrc_constraint.
FS_HD void fsi_primal_grad(const fsModel* m, fsData* d, const fsIsland* is) {
  (void)m; // the lanes' runs: [d0, d1)
  FSI_FOR_ISLAND_DOF(m, is, i) d->sol_grad[i] = d->sol_Ma[i] - d->qfrc_smooth[i] - d->sol_qfrc[i];
  FS_SYNC();
}

/// mju_cholFactor: L (n, n, row-major) factored in place, lower triangle (column by
/// column, row dots in mju_dot's order, a diagonal under mjMINVAL clamped and its column
/// zeroed below: returns 1). One lane's work (every lane alike: a cone's small factor).
FS_HD int fsi_chol_factor_dense(fsSol* L, int n) {
  int bad = 0;
  for (int j = 0; j < n; j++) {
    fsSol* Lj = L + j * n;
    fsSol t = Lj[j];
    if (j) t -= fsi_dot_mj(Lj, Lj, j);
    int deficient = t < FS_SOL_MINVAL;
    if (deficient) {
      t = FS_SOL_MINVAL;
      bad = 1;
    }
    Lj[j] = sqrt(t);
    fsSol inv = 1 / Lj[j];
    for (int i = j + 1; i < n; i++)
      L[i * n + j] = deficient ? 0 : (L[i * n + j] - fsi_dot_mj(L + i * n, Lj, j)) * inv;
  }
  return bad;
}

#ifdef FS_ONE_LANE
/// Where MuJoCo's Jacobian is dense (nefcD: the host keeps the rows dense too), its
/// solver's dense Hessian and factor, MuJoCo's loops and orders. The island's n dofs
/// (fsi_island_col: its columns of efc_Jd, in MuJoCo's gathered order; a tree's
/// consecutive) and the factor sol_L as (n, n), row-major, lower triangle (H = L L').
/// H = J' D J (mju_sqrMatTD:
/// rows in order, each non-zero J_ri adding (J_ri D_r) J_r. to row i's columns up to
/// i), then M's entries added (mju_addToSymSparse); factored by mju_cholFactor (column
/// by column, row dots in mju_dot's order, a diagonal under mjMINVAL clamped: returns
/// 1).
static inline int fsi_hessian_factor_dense(const fsModel* m, fsData* d, const fsIsland* is) {
  int n = fsi_island_n(is), nv = m->nv;
  fsSol* L = d->sol_L; // (n, n)
  for (int k = 0; k < n * n; k++) L[k] = 0;
  for (int r = is->r0; r < is->r1; r++) {
    if (!fsi_in_island(d, is, r) || d->sol_D[r] == 0) continue;
    const double* J = d->efc_Jd + (size_t)r * nv; // (nv)
    if (is->ntree <= 1) {                         // one tree: its columns consecutive
      J += is->d0;
      for (int i = 0; i < n; i++) {
        if (J[i] == 0) continue;
        fsSol s = J[i] * d->sol_D[r], *Li = L + i * n;
        FS_IVDEP // sol_L apart from efc_Jd
        for (int k = 0; k <= i; k++) Li[k] += J[k] * s;
      }
      continue;
    }
    for (int i = 0; i < n; i++) {
      fsSol Ji = J[is->dof[i]];
      if (Ji == 0) continue;
      fsSol s = Ji * d->sol_D[r], *Li = L + i * n;
      for (int k = 0; k <= i; k++) Li[k] += J[is->dof[k]] * s;
    }
  }
  for (int i = 0; i < n; i++) { // M's entries of dof j: its tree's, i - (j - c) in the island
    int j = fsi_island_col(is, i), adr = m->M_rowadr[j];
    for (int k = 0; k < m->M_rownnz[j]; k++)
      L[i * n + i - (j - m->M_colind[adr + k])] += d->M[adr + k];
  }
  return fsi_chol_factor_dense(L, n);
}

/// L L' +- x x' (mju_cholUpdate) in place, x (n) overwritten: each k with x_k non-zero
/// rotates column k. Returns 1 if a diagonal was clamped at mjMINVAL (MuJoCo's rank
/// loss).
static inline int fsi_chol_update_dense(fsSol* L, fsSol* x, int n, int plus) {
  int bad = 0;
  for (int k = 0; k < n; k++) {
    if (x[k] == 0) continue;
    fsSol Lkk = L[k * (n + 1)];
    fsSol t = Lkk * Lkk + (plus ? x[k] * x[k] : -x[k] * x[k]);
    if (t < FS_SOL_MINVAL) {
      t = FS_SOL_MINVAL;
      bad = 1;
    }
    fsSol r = sqrt(t), c = r / Lkk, cinv = 1 / c, s = x[k] / Lkk;
    L[k * (n + 1)] = r;
    for (int i = k + 1; i < n; i++)
      L[i * n + k] = (plus ? L[i * n + k] + s * x[i] : L[i * n + k] - s * x[i]) * cinv;
    for (int i = k + 1; i < n; i++) x[i] = c * x[i] - s * L[i * n + k];
  }
  return bad;
}

/// res = inv(L L') vec over n entries (mju_cholSolve): forward with row dots in
/// mju_dot's order, backward by columns. res may be vec.
static inline void fsi_chol_solve_dense(const fsSol* L, const fsSol* vec, fsSol* res, int n) {
  for (int i = 0; i < n; i++) {
    fsSol x = vec[i];
    if (i) x -= fsi_dot_mj(L + i * n, res, i);
    res[i] = x / L[i * (n + 1)];
  }
  for (int i = n - 1; i >= 0; i--) {
    fsSol x = res[i];
    for (int j = i + 1; j < n; j++) x -= L[j * n + i] * res[j];
    res[i] = x / L[i * (n + 1)];
  }
}
#endif

/// The Hessian H = M + J' D J over the island's dofs (D = efc_D on quadratic rows, else
/// 0) in the Hessian's layout (the rows' chains are ancestor chains: nothing outside
/// it), as mju_sqrMatTDSparseNumeric sums each entry (rows in order, (D J_r) J_c) and
/// mju_addToMatSparse adds M where M has the entry. Lanes over H's rows: row i gathers
/// the rows r that move i (J's transpose) in order, each adding (D_r J_ri) J_rj to every
/// entry (i, j). The ancestors of i, all in r's chain and numbered below i, lead its
/// columns: where nothing else does (i at place H_rownnz[i] - 1 of the chain, as on a
/// tree's path to a static geom) H's row is the chain's prefix, one dense loop; else
/// each j's place comes from pair_chainpos. The same terms in the same order per entry.
FS_HD void fsi_hessian_cone(const fsModel* m, fsData* d, const fsIsland* is);

FS_HD int fsi_hessian_factor(const fsModel* m, fsData* d, const fsIsland* is, int ncone) {
  FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
    if (fsi_in_island(d, is, r))
      d->sol_D[r] = d->sol_state[r] == FS_CNSTRSTATE_QUADRATIC ? d->efc_D[r] : 0;
  }
  FS_SYNC();
#ifdef FS_ONE_LANE
  if (m->nefcD) {
    int bad = fsi_hessian_factor_dense(m, d, is);
    if (FSI_ROWS && ncone) fsi_hessian_cone(m, d, is);
    return bad;
  }
#endif
  FS_FOR_LANE(t, is->d1 - is->d0) {
    int i = is->d0 + t, hn = m->H_rownnz[i], a = d->efc_JT_rowadr[i], n = d->efc_JT_rownnz[i];
    fsSol* H = d->sol_H + m->H_rowadr[i]; // (hn): row i's ancestors, then (i, i)
    const int *cols = m->H_colind + m->H_rowadr[i], *madr = m->H_Madr + m->H_rowadr[i];
    for (int k = 0; k < hn; k++) H[k] = 0;
    for (int q = 0; q < n; q++) {
      int r = d->efc_JT_row[a + q];
      fsSol D = d->sol_D[r];
      if (D == 0 || !fsi_in_island(d, is, r)) continue;
      const fsReal* J = d->efc_J + (size_t)r * m->njmax; // (chain): row r's entries
      int pi = d->efc_JT_adr[a + q] - r * m->njmax;      // i's place in r's chain
      fsSol DJi = D * J[pi];
      if (pi + 1 == hn) {
        FS_IVDEP // sol_H apart from efc_J
        for (int k = 0; k < hn; k++) H[k] += DJi * J[k];
      } else if (FSI_ROWS && r < d->nefc_dof[0]) { // one column (friction loss, a limit)
        H[hn - 1] += DJi * J[0];
#ifdef FS_ONE_LANE
      } else if (m->nefcD) { // the dense row: the columns' entries without their places
        const double* Jd = d->efc_Jd + (size_t)r * m->nv; // (nv)
        for (int k = 0; k < hn; k++) H[k] += DJi * Jd[cols[k]];
#endif
      } else {
        for (int k = 0; k < hn; k++) H[k] += DJi * J[fsi_row_place(m, d, r, cols[k])];
      }
    }
    for (int k = 0; k < hn; k++)
      if (madr[k] >= 0) H[k] += d->M[madr[k]];
  }
  FS_SYNC();
  fsLayout LH = fsi_layout_H(m);
  int bad = fsi_chol_factor(&LH, d->sol_H, d->sol_L, is->d0, is->d1);
  if (FSI_ROWS && ncone) fsi_hessian_cone(m, d, is);
  return bad;
}

/// HessianCone: sol_Lcone = the factor sol_L with each middle-zone cone's Hessian added:
/// the cone Hessian's own factor C (mju_cholFactor), the rows of C' J (row k: the sum over
/// rows j >= k of C_jk J_{first + j}, mju_addToScl in j's order), each a rank-1 update of
/// the factor (its rank loss ignored, as MuJoCo's). Cones one after another; lanes over a
/// row's columns and within each update.
FS_HD void fsi_hessian_cone(const fsModel* m, fsData* d, const fsIsland* is) {
  int d0 = is->d0, n = is->d1 - is->d0;
  fsLayout LH = fsi_layout_H(m);
#ifdef FS_ONE_LANE
  int dense = m->nefcD > 0;
  if (dense) n = fsi_island_n(is);
#else
  int dense = 0;
#endif
  int l0 = dense ? 0 : m->H_rowadr[d0];
  int l1 = dense ? n * n : m->H_rowadr[is->d1 - 1] + m->H_rownnz[is->d1 - 1];
  FS_FOR_LANE_RANGE(k, l0, l1) d->sol_Lcone[k] = d->sol_L[k];
  FS_SYNC();
  for (int r = is->r0; r < is->r1; r++) {
    if (!fsi_in_island(d, is, r) || fsi_cone_row(d, r) <= 0) continue;
    if (d->sol_state[r] != FS_CNSTRSTATE_CONE) continue;
    int c = d->efc_id[r], dim = d->contact_dim[c];
    fsSol* C = d->sol_coneH + 36 * c; // factored in place: the next update makes it anew
    FS_LANE0 fsi_chol_factor_dense(C, dim);
    FS_SYNC();
    int ncol = dense ? n : d->efc_J_rownnz[r];
    fsSol* LTJ = d->sol_coneJ; // (dim, ncol)
    FS_FOR_LANE(k, ncol) {
      for (int j = 0; j < dim; j++) LTJ[j * ncol + k] = 0;
      for (int j = 0; j < dim; j++) {
#ifdef FS_ONE_LANE
        fsSol Jk = dense ? d->efc_Jd[(size_t)(r + j) * m->nv + fsi_island_col(is, k)]
                         : d->efc_J[(size_t)(r + j) * m->njmax + k];
#else
        fsSol Jk = d->efc_J[(size_t)(r + j) * m->njmax + k];
#endif
        for (int q = 0; q <= j; q++) LTJ[q * ncol + k] += Jk * C[j * dim + q];
      }
    }
    FS_SYNC();
    for (int j = 0; j < dim; j++) {
#ifdef FS_ONE_LANE
      if (dense) {
        fsSol* x = d->sol_dense; // (n): overwritten by the update
        for (int k = 0; k < n; k++) x[k] = LTJ[j * ncol + k];
        fsi_chol_update_dense(d->sol_Lcone, x, n, 1);
        continue;
      }
#endif
      fsi_chol_update_sol(&LH, d->sol_Lcone, LTJ + j * ncol, m->pair_dof + d->efc_J_coladr[r], ncol,
                          d->sol_dense, d0);
    }
  }
}

/// HessianIncremental: the factor updated for each row whose state entered (rank-1
/// update) or left (downdate) the quadratic set, in row order; refactored from scratch
/// if an update loses rank; then the cones (fsi_hessian_cone) where ncone. Returns 1 if
/// the refactored Hessian is rank-deficient.
FS_HD int fsi_hessian_incremental(const fsModel* m, fsData* d, const fsIsland* is, int ncone) {
  for (int r = is->r0; r < is->r1; r++) {
    if (!fsi_in_island(d, is, r)) continue;
    int was = d->sol_oldstate[r] == FS_CNSTRSTATE_QUADRATIC;
    int now = d->sol_state[r] == FS_CNSTRSTATE_QUADRATIC;
    if (was == now) continue;
    fsSol s = sqrt(d->efc_D[r]);
#ifdef FS_ONE_LANE
    if (m->nefcD) { // the dense factor: x = J_r sqrt(D_r) over the island's columns (mju_scl)
      int n = fsi_island_n(is);
      const double* J = d->efc_Jd + (size_t)r * m->nv; // (nv)
      fsSol* x = d->sol_dense;                         // (n)
      for (int k = 0; k < n; k++) x[k] = J[fsi_island_col(is, k)] * s;
      if (fsi_chol_update_dense(d->sol_L, x, n, now)) return fsi_hessian_factor(m, d, is, ncone);
      continue;
    }
#endif
    const int* cols = m->pair_dof + d->efc_J_coladr[r];
    fsLayout LH = fsi_layout_H(m);
    if (fsi_chol_update(&LH, d->sol_L, d->efc_J + (size_t)r * m->njmax, s, cols, d->efc_J_rownnz[r],
                        now, d->sol_dense, is->d0))
      return fsi_hessian_factor(m, d, is, ncone);
  }
  if (FSI_ROWS && ncone) fsi_hessian_cone(m, d, is);
  return 0;
}

/// Mgrad = inv(H) grad over the island's dofs, by the factor (dense where nefcD; with the
/// cones' Hessians where ncone).
FS_HD void fsi_hessian_solve(const fsModel* m, fsData* d, const fsIsland* is, int ncone) {
  const fsSol* L = FSI_ROWS && ncone ? d->sol_Lcone : d->sol_L;
#ifdef FS_ONE_LANE
  if (m->nefcD && is->ntree > 1) { // gathered (sol_dense), solved, scattered
    for (int k = 0; k < is->n; k++) d->sol_dense[k] = d->sol_grad[is->dof[k]];
    fsi_chol_solve_dense(L, d->sol_dense, d->sol_dense, is->n);
    for (int k = 0; k < is->n; k++) d->sol_Mgrad[is->dof[k]] = d->sol_dense[k];
    return;
  }
  if (m->nefcD) {
    int d0 = is->d0;
    fsi_chol_solve_dense(L, d->sol_grad + d0, d->sol_Mgrad + d0, is->d1 - d0);
    return;
  }
#endif
  fsLayout LH = fsi_layout_H(m);
  fsi_chol_solve(&LH, L, d->sol_grad, d->sol_Mgrad, is->d0, is->d1);
}

/// A point of the line search: step, cost change from step 0, first and second
/// derivatives.
typedef struct fsLinePoint {
  fsSol alpha, cost, d0, d1;
} fsLinePoint;

/// The line search's state: the Gauss quadratic's terms, the gradient tolerance,
/// evaluations so far; in the host's builds (FSI_ROWS) the world's friction-loss and limit
/// rows (nefc_dof: the first rows, with their own terms) and whether it has elliptic cones.
typedef struct fsLineSearch {
  fsSol qg1, qg2, gtol;
  int neval, dofrows; // dofrows: nefc_dof
#if FSI_ROWS
  int cones; // the host's: elliptic contacts' rows
#define FSI_LS_CONES(ls) ((ls)->cones)
#else
#define FSI_LS_CONES(ls) 0
#endif
} fsLineSearch;

/// Whether this build's line search tests rows for friction loss (ls->dofrows): the host's,
/// which has the rows, and the kernels without the convex collider (Shared, Own), where the
/// test is dead (the cuda backend refuses friction loss) but steers ptxas to fewer spills
/// (sm_90, f64 step_kernel<Shared>: 12/28 B without it, none with it); in the kernels with
/// the collider (Convex, Bare) it costs 4/4 B, so they compile without it.
#if FSI_ROWS || !defined(FS_DEVICE_CONVEX)
#define FSI_LS_TEST 1
#else
#define FSI_LS_TEST 0
#endif
#define FSI_LS_DOFROWS(ls) (FSI_LS_TEST && (ls)->dofrows)

/// PrimalPrepare for row r (not an elliptic contact's): its quadratic along the search
/// (quad[0..2]: 0.5 D Jaref^2, D Jaref Jv, 0.5 D Jv^2).
FS_HD void fsi_ls_prepare_row(fsData* d, int r) {
  fsSol D = d->efc_D[r], Jaref = d->sol_Jaref[r], Jv = d->sol_Jv[r], DJ0 = D * Jaref;
  fsSol* quad = d->sol_quad + 3 * r;
  quad[0] = Jaref * DJ0 * 0.5;
  quad[1] = Jv * DJ0;
  quad[2] = Jv * D * Jv * 0.5;
}

/// PrimalPrepare for elliptic contact rows r.. (its first): the quadratic of all its rows
/// (the bottom zone's) in quad[0..2] of row r, then in the slots after (quad[3..8]: dim >=
/// 3 rows) the cone's terms along the search: U_0 = mu Jaref_0, V_0 = mu Jv_0, |U_t|^2, U_t
/// . V_t, |V_t|^2 (U_t, V_t the friction-scaled rest) and Dm = D_0 / (mu^2 (1 + mu^2)).
FS_HD void fsi_cone_prepare(fsData* d, int r) {
  int c = d->efc_id[r], dim = d->contact_dim[c];
  const fsSol *Jaref = d->sol_Jaref + r, *Jv = d->sol_Jv + r;
  const fsReal* D = d->efc_D + r;
  const fsReal* fr = d->contact_friction + 5 * c;
  fsSol mu = fsi_cone_mu(d, r, c), *quad = d->sol_quad + 3 * r;
  fsSol DJ0 = D[0] * Jaref[0];
  quad[0] = Jaref[0] * DJ0;
  quad[1] = Jv[0] * DJ0;
  quad[2] = Jv[0] * D[0] * Jv[0];
  for (int j = 1; j < dim; j++) {
    fsSol DJj = D[j] * Jaref[j];
    quad[0] += Jaref[j] * DJj;
    quad[1] += Jv[j] * DJj;
    quad[2] += Jv[j] * D[j] * Jv[j];
  }
  fsSol UU = 0, UV = 0, VV = 0;
  for (int j = 1; j < dim; j++) {
    fsSol U = Jaref[j] * fr[j - 1], V = Jv[j] * fr[j - 1];
    UU += U * U;
    UV += U * V;
    VV += V * V;
  }
  quad[3] = Jaref[0] * mu;
  quad[4] = Jv[0] * mu;
  quad[5] = UU;
  quad[6] = UV;
  quad[7] = VV;
  quad[8] = D[0] / ((mu * mu) * (1 + (mu * mu)));
  quad[0] *= 0.5;
  quad[2] *= 0.5;
}

/// ellipticCostDif: an elliptic contact's cost at alpha less its cost at 0, by the zones
/// (top 1, bottom 2, middle 3) at 0 and at alpha, with the middle zone's change in a form
/// without cancellation.
FS_HD fsSol fsi_cone_cost_dif(const fsSol* quad, fsSol alpha, fsSol mu, fsSol Dm) {
  fsSol U0 = quad[3], V0 = quad[4], UU = quad[5], UV = quad[6], VV = quad[7], T0 = 0, T = 0;
  int z0, za;
  if (UU <= 0) {
    z0 = U0 < 0 ? 2 : 1;
  } else {
    T0 = sqrt(UU);
    z0 = U0 >= mu * T0 ? 1 : (mu * U0 + T0 <= 0 ? 2 : 3);
  }
  fsSol N = U0 + alpha * V0, Tsqr = UU + alpha * (2 * UV + alpha * VV);
  if (Tsqr <= 0) {
    za = N < 0 ? 2 : 1;
  } else {
    T = sqrt(Tsqr);
    za = N >= mu * T ? 1 : (mu * N + T <= 0 ? 2 : 3);
  }
  if (z0 == 1 && za == 1) return 0;
  if (z0 == 2 && za == 2) return alpha * alpha * quad[2] + alpha * quad[1];
  if (z0 == 3 && za == 3) {
    fsSol Tsqr_delta = alpha * (2 * UV + alpha * VV), T_delta = Tsqr_delta / (T + T0);
    fsSol r_delta = alpha * V0 - mu * T_delta, r0 = U0 - mu * T0;
    return 0.5 * Dm * r_delta * (2 * r0 + r_delta);
  }
  if (z0 == 3 && za == 2) {
    fsSol dq = alpha * (alpha * quad[2] + quad[1]), b0 = mu * U0 + T0;
    return dq + 0.5 * Dm * b0 * b0;
  }
  if (z0 == 2 && za == 3) {
    fsSol dq = alpha * (alpha * quad[2] + quad[1]), b = mu * N + T;
    return dq - 0.5 * Dm * b * b;
  }
  if (z0 == 1 && za == 2) return alpha * alpha * quad[2] + alpha * quad[1] + quad[0];
  if (z0 == 1 && za == 3) {
    fsSol rr = N - mu * T;
    return 0.5 * Dm * rr * rr;
  }
  if (z0 == 3 && za == 1) {
    fsSol r0 = U0 - mu * T0;
    return -0.5 * Dm * r0 * r0;
  }
  return -quad[0]; // 2 -> 1
}

/// PrimalEval's terms of an elliptic contact (its first row's quad): the cost change into
/// *cost, the derivatives into *f0, *f1 (the bottom zone's quadratic, the middle zone's
/// from N - mu T).
FS_HD void fsi_ls_cone(const fsSol* quad, fsSol alpha, fsSol mu, fsSol* cost, fsSol* f0,
                       fsSol* f1) {
  fsSol U0 = quad[3], V0 = quad[4], UU = quad[5], UV = quad[6], VV = quad[7], Dm = quad[8];
  *cost += fsi_cone_cost_dif(quad, alpha, mu, Dm);
  fsSol N = U0 + alpha * V0, Tsqr = UU + alpha * (2 * UV + alpha * VV);
  if (Tsqr <= 0) {
    if (N < 0) {
      *f0 += 2 * alpha * quad[2] + quad[1];
      *f1 += 2 * quad[2];
    }
    return;
  }
  fsSol T = sqrt(Tsqr);
  if (N >= mu * T) return;
  if (mu * N + T <= 0) {
    *f0 += 2 * alpha * quad[2] + quad[1];
    *f1 += 2 * quad[2];
    return;
  }
  fsSol N1 = V0, T1 = (UV + alpha * VV) / T, T2 = VV / T - (UV + alpha * VV) * T1 / (T * T);
  *f0 += Dm * (N - mu * T) * (N1 - mu * T1);
  *f1 += Dm * ((N1 - mu * T1) * (N1 - mu * T1) + (N - mu * T) * (-mu * T2));
}

/// frictionCost: a friction-loss row's Huber cost at x (bound Rf = R f): quadratic
/// inside (-Rf, Rf), linear beyond.
FS_HD fsSol fsi_friction_cost(fsSol x, fsSol f, fsSol Rf, fsSol D) {
  if (-Rf < x && x < Rf) return 0.5 * D * x * x;
  if (x <= -Rf) return f * (-0.5 * Rf - x);
  return f * (-0.5 * Rf + x);
}

/// frictionCostDif: cost(x) - cost(start) of a friction-loss row, by zone (both
/// quadratic, both linear on one side, else the costs' difference).
FS_HD fsSol fsi_friction_cost_dif(fsSol start, fsSol x, fsSol f, fsSol Rf, fsSol D) {
  int zs = (-Rf < start && start < Rf) ? 0 : (start <= -Rf ? -1 : 1);
  int zx = (-Rf < x && x < Rf) ? 0 : (x <= -Rf ? -1 : 1);
  if (zs == 0 && zx == 0) return 0.5 * D * (x - start) * (x + start);
  if (zs == -1 && zx == -1) return f * (start - x);
  if (zs == 1 && zx == 1) return f * (x - start);
  return fsi_friction_cost(x, f, Rf, D) - fsi_friction_cost(start, f, Rf, D);
}

/// PrimalEval's terms of a friction-loss row r (bound f; x its Jaref at alpha, start at
/// 0): its Huber cost change into *cost, its derivatives into *f0, *f1.
FS_HD void fsi_ls_friction(const fsData* d, int r, fsSol f, fsSol start, fsSol x, fsSol* cost,
                           fsSol* f0, fsSol* f1) {
  fsSol D = d->efc_D[r], Rf = d->efc_R[r] * f, dir = d->sol_Jv[r];
  *cost += fsi_friction_cost_dif(start, x, f, Rf, D);
  if (-Rf < x && x < Rf) {
    *f0 += D * x * dir;
    *f1 += D * dir * dir;
  } else {
    *f0 += x <= -Rf ? -f * dir : f * dir;
  }
}

/// PrimalEval's term of a quadratic row (a limit, a pyramid's edge, a condim-1 normal; x
/// its Jaref at alpha, start at 0): its quadratic's terms into q0..q2 where active at x,
/// its cost at 0 taken from *cost where not.
FS_HD void fsi_ls_row(const fsSol* quad, fsSol start, fsSol x, fsSol* cost, fsSol* q0, fsSol* q1,
                      fsSol* q2) {
  fsSol cost0 = start < 0 ? quad[0] : 0;
  if (x < 0) {
    *q0 += quad[0] - cost0;
    *q1 += quad[1];
    *q2 += quad[2];
  } else {
    *cost -= cost0;
  }
}

/// ... for an equality row: always active, its quadratic shifted (quad[0] left out).
FS_HD void fsi_ls_equality(const fsSol* quad, fsSol* q1, fsSol* q2) {
  *q1 += quad[1];
  *q2 += quad[2];
}

/// PrimalEval: the cost change at p->alpha along the search and its derivatives: the
/// Gauss quadratic plus each row's quadratic where the row is active at alpha, less its
/// cost at 0; a friction-loss row's Huber cost change and derivatives, an elliptic cone's,
/// apart (added first, as MuJoCo's). One loop over the rows, friction loss tested where
/// the world has it (FSI_LS_TEST); on the host (FSI_ROWS) the cones in a loop of their own
/// and the fly's rows without tests. Each row on its lane, sums added in row order on one lane.
FS_HD void fsi_ls_eval(const fsModel* m, fsData* d, const fsIsland* is, fsLineSearch* ls,
                       fsLinePoint* p) {
  fsSol alpha = p->alpha, cost = 0, q0 = 0, f0 = 0, f1 = 0;
  fsSol q1 = FS_LANE == 0 ? ls->qg1 : 0, q2 = FS_LANE == 0 ? ls->qg2 : 0;
  int c0 = is->r0; // the first row of the one loop below
#if FSI_ROWS
  if (ls->cones) { // elliptic cones (the host's): their tests in a loop of their own
    FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
      if (!fsi_in_island(d, is, r)) continue;
      int cone = fsi_cone_row(d, r);
      if (cone > 0)
        fsi_ls_cone(d->sol_quad + 3 * r, alpha, fsi_cone_mu(d, r, d->efc_id[r]), &cost, &f0, &f1);
      if (cone) continue;
      fsSol start = d->sol_Jaref[r], x = start + alpha * d->sol_Jv[r];
      if (r < ls->dofrows && fsi_friction_row(d, r))
        fsi_ls_friction(d, r, fsi_row_frictionloss(m, d, r), start, x, &cost, &f0, &f1);
      else if (r < ls->dofrows && d->efc_type[r] == FS_CNSTR_EQUALITY)
        fsi_ls_equality(d->sol_quad + 3 * r, &q1, &q2);
      else
        fsi_ls_row(d->sol_quad + 3 * r, start, x, &cost, &q0, &q1, &q2);
    }
    c0 = is->r1;
  } else if (!ls->dofrows) { // the host's: the quadratic rows alone, without the tests
    FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
      if (!fsi_in_island(d, is, r)) continue;
      fsSol start = d->sol_Jaref[r], x = start + alpha * d->sol_Jv[r];
      fsi_ls_row(d->sol_quad + 3 * r, start, x, &cost, &q0, &q1, &q2);
    }
    c0 = is->r1;
  }
#endif
  FS_FOR_LANE_RANGE(r, c0, is->r1) { // friction loss (where the world has it), the rest
    if (!fsi_in_island(d, is, r)) continue;
    fsSol start = d->sol_Jaref[r], x = start + alpha * d->sol_Jv[r];
    if (FSI_LS_DOFROWS(ls) && fsi_friction_row(d, r)) {
      fsi_ls_friction(d, r, fsi_row_frictionloss(m, d, r), start, x, &cost, &f0, &f1);
      continue;
    }
#if FSI_ROWS // equality rows (the host's): always active
    if (r < ls->dofrows && d->efc_type[r] == FS_CNSTR_EQUALITY) {
      fsi_ls_equality(d->sol_quad + 3 * r, &q1, &q2);
      continue;
    }
#endif
    fsi_ls_row(d->sol_quad + 3 * r, start, x, &cost, &q0, &q1, &q2);
  }
  cost = fs_lane_sum(cost);
  q0 = fs_lane_sum(q0);
  q1 = fs_lane_sum(q1);
  q2 = fs_lane_sum(q2);
  p->cost = cost + (alpha * alpha * q2 + alpha * q1 + q0);
  p->d0 = 2 * alpha * q2 + q1;
  p->d1 = 2 * q2;
  if (FSI_LS_DOFROWS(ls) || FSI_LS_CONES(ls)) { // friction loss', cones' sums, then the quadratic
    p->d0 = fs_lane_sum(f0) + p->d0;
    p->d1 = fs_lane_sum(f1) + p->d1;
  }
  if (p->d1 <= 0) p->d1 = FS_SOL_MINVAL; // not convex: SHOULD NOT OCCUR (MuJoCo warns)
  ls->neval++;
}

/// updateBracket's test of one candidate c: p becomes c if c's derivative has p's sign
/// and is nearer zero. Returns 1 or 2 (the sign: negative, positive) if p moved, else 0.
FS_HD int fsi_ls_move(fsLinePoint* p, const fsLinePoint* c) {
  if (p->d0 < 0 && c->d0 < 0 && p->d0 < c->d0) {
    *p = *c;
    return 1;
  }
  if (p->d0 > 0 && c->d0 > 0 && p->d0 > c->d0) {
    *p = *c;
    return 2;
  }
  return 0;
}

/// updateBracket: p moves to the candidate (c0, c1, c2 in turn) of the same derivative
/// sign nearest zero; then pnext is p's Newton point. Returns 1 or 2 if p moved, else 0.
/// The candidates come by value: pnext may be one of them, they are the values before.
FS_HD int fsi_ls_bracket(const fsModel* m, fsData* d, const fsIsland* is, fsLineSearch* ls,
                         fsLinePoint* p, fsLinePoint c0, fsLinePoint c1, fsLinePoint c2,
                         fsLinePoint* pnext) {
  int flag = 0, f;
  if ((f = fsi_ls_move(p, &c0))) flag = f;
  if ((f = fsi_ls_move(p, &c1))) flag = f;
  if ((f = fsi_ls_move(p, &c2))) flag = f;
  if (flag) {
    pnext->alpha = p->alpha - p->d0 / p->d1;
    fsi_ls_eval(m, d, is, ls, pnext);
  }
  return flag;
}

/// c if its derivative is within gtol and it costs less than best (or best is none:
/// *found 0); MuJoCo's choice among the bracketed search's candidates, in their order.
FS_HD void fsi_ls_pick(const fsLinePoint* c, fsSol gtol, int* found, fsLinePoint* best) {
  if (fabs(c->d0) < gtol && (!*found || c->cost < best->cost)) {
    *best = *c;
    *found = 1;
  }
}

/// The result of the line search: the step and its improvement (-cost change).
FS_HD fsSol fsi_ls_done(const fsLinePoint* p, fsSol* improvement) {
  *improvement = -p->cost;
  return p->alpha;
}

/// PrimalSearch: MuJoCo's exact line search along sol_search (sol_vec: qfrc_smooth).
/// Mv = M search, Jv = J search, the quadratics (PrimalPrepare); a Newton step from 0, a one-sided
/// search while the slope keeps its sign, then bisection of the bracket with Newton candidates, at
/// most ls_iterations evaluations. Returns the step (0: none) and the improvement.
FS_HD FS_FORCEINLINE fsSol fsi_line_search(const fsModel* m, fsData* d, const fsIsland* is,
                                           fsSol tolerance, int ls_iterations, fsSol* improvement) {
  *improvement = 0;
  fsSol snorm = sqrt(fsi_island_dot(is, d->sol_search, d->sol_search));
  if (snorm < FS_SOL_MINVAL) return 0;
  fsLineSearch ls;
  ls.qg1 = ls.qg2 = 0;
  ls.gtol = tolerance * snorm / is->scale;
  ls.neval = 0;
  ls.dofrows = FSI_LS_TEST ? d->nefc_dof[0] : 0;
#if FSI_ROWS
  ls.cones = m->elliptic;
#endif
  fsi_island_mul_M(m, d, is, d->sol_search, d->sol_Mv);
  FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
    if (fsi_in_island(d, is, r)) d->sol_Jv[r] = fsi_island_row_dot(m, d, is, r, d->sol_search);
  }
  FS_SYNC();
  const fsSol* v = d->sol_search;
  ls.qg1 = fsi_island_dot(is, v, d->sol_Ma) - fsi_island_dot(is, d->sol_vec, v);
  ls.qg2 = 0.5 * fsi_island_dot(is, v, d->sol_Mv);
  int r0 = is->r0; // PrimalPrepare: each row's quadratic along the search
#if FSI_ROWS
  if (m->elliptic) { // the cones' rows apart (the fly's loop as the kernels')
    FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
      if (!fsi_in_island(d, is, r)) continue;
      int cone = fsi_cone_row(d, r);
      if (cone == 0) fsi_ls_prepare_row(d, r);
      if (cone > 0) fsi_cone_prepare(d, r);
    }
    r0 = is->r1;
  }
#endif
  FS_FOR_LANE_RANGE(r, r0, is->r1) {
    if (fsi_in_island(d, is, r)) fsi_ls_prepare_row(d, r);
  }
  FS_SYNC();
  fsSol gtol = ls.gtol;
  fsLinePoint p0 = {0, 0, 0, 0}, p1, p2, pmid, p1next, p2next;
  fsi_ls_eval(m, d, is, &ls, &p0);
  p1.alpha = p0.alpha - p0.d0 / p0.d1;
  fsi_ls_eval(m, d, is, &ls, &p1);
  if (fabs(p1.d0) < gtol && (p1.alpha == 0 || p1.cost < 0)) return fsi_ls_done(&p1, improvement);
  fsSol dir = p1.d0 < 0 ? 1 : -1;
  p2 = p0;
  while (p1.d0 * dir <= -gtol && ls.neval < ls_iterations) { // one-sided
    p2 = p1;
    p1.alpha -= p1.d0 / p1.d1;
    fsi_ls_eval(m, d, is, &ls, &p1);
    if (fabs(p1.d0) < gtol && p1.cost < 0) return fsi_ls_done(&p1, improvement);
  }
  if (ls.neval >= ls_iterations) return fsi_ls_done(&p1, improvement); // could not bracket
  p2next = p1;
  p1next.alpha = p1.alpha - p1.d0 / p1.d1;
  fsi_ls_eval(m, d, is, &ls, &p1next);
  while (ls.neval < ls_iterations) { // bracketed
    pmid.alpha = 0.5 * (p1.alpha + p2.alpha);
    fsi_ls_eval(m, d, is, &ls, &pmid);
    fsLinePoint best = pmid;
    int found = 0;
    fsi_ls_pick(&p1next, gtol, &found, &best);
    fsi_ls_pick(&p2next, gtol, &found, &best);
    fsi_ls_pick(&pmid, gtol, &found, &best);
    if (found) return fsi_ls_done(&best, improvement);
    fsLinePoint c0 = p1next, c1 = p2next;
    int b1 = fsi_ls_bracket(m, d, is, &ls, &p1, c0, c1, pmid, &p1next);
    int b2 = fsi_ls_bracket(m, d, is, &ls, &p2, c0, c1, pmid, &p2next);
    if (!b1 && !b2) return fsi_ls_done(&pmid, improvement); // numerical accuracy reached
  }
  if (p1.cost <= p2.cost && p1.cost < 0) return fsi_ls_done(&p1, improvement);
  if (p2.cost <= p1.cost && p2.cost < 0) return fsi_ls_done(&p2, improvement);
  return 0; // no improvement
}

/// search = -Mgrad over the island's dofs.
FS_HD void fsi_newton_direction(const fsModel* m, fsData* d, const fsIsland* is) {
  (void)m;
  FSI_FOR_ISLAND_DOF(m, is, i) d->sol_search[i] = -d->sol_Mgrad[i];
  FS_SYNC();
}

/// 0.5 scale grad' Mgrad, at least 0: the Newton decrement (or, with Mgrad = M \ grad,
/// the duality gap that certifies a warm start).
FS_HD fsSol fsi_newton_decrement(fsData* d, const fsIsland* is) {
  fsSol dec = 0.5 * is->scale * fsi_island_dot(is, d->sol_grad, d->sol_Mgrad);
  return dec > 0 ? dec : 0;
}

/// M \ grad into Mgrad over the island's dofs (CG's preconditioned gradient, and the
/// certificate's).
FS_HD void fsi_m_solve_grad(const fsModel* m, fsData* d, const fsIsland* is) {
  fsLayout LM = fsi_layout_M(m);
  FSI_FOR_ISLAND_DOF(m, is, i) d->sol_Mgrad[i] = d->sol_grad[i];
  FS_SYNC();
  for (int s = 0; s < fsi_island_nrun(is); s++) // M's factor is block-diagonal by tree
    fsi_solve_ld_levels(&LM, d->qLD, d->qLDiagInv, d->sol_Mgrad, fsi_run_d0(m, is, s),
                        fsi_run_d1(m, is, s));
}

/// CG's next direction (mj_solPrimal's Hager-Zhang update): with y = grad - gradold and My
/// = Mgrad - Mgradold (into the old copies), beta = (y'Mgrad - 2 (y'My / d'y) d'grad) / d'y
/// bounded below by -1 / (|d| min(0.01, |grad|)), 0 where d'y < mjMINVAL (conjugacy
/// lost); search = -Mgrad + beta search. Dots over the island's dofs in mju_dot's order.
FS_HD void fsi_cg_direction(const fsModel* m, fsData* d, const fsIsland* is) {
  (void)m;
  FSI_FOR_ISLAND_DOF(m, is, i) {
    d->sol_gradold[i] = d->sol_grad[i] - d->sol_gradold[i];
    d->sol_Mgradold[i] = d->sol_Mgrad[i] - d->sol_Mgradold[i];
  }
  FS_SYNC();
  const fsSol *s = d->sol_search, *g = d->sol_grad, *Mg = d->sol_Mgrad;
  const fsSol *y = d->sol_gradold, *My = d->sol_Mgradold;
  fsSol dy = fsi_island_dot(is, s, y), beta = 0;
  if (!(dy < FS_SOL_MINVAL)) {
    fsSol yMy = fsi_island_dot(is, y, My), yMg = fsi_island_dot(is, y, Mg);
    fsSol dg = fsi_island_dot(is, s, g);
    fsSol beta_hz = (yMg - 2 * (yMy / dy) * dg) / dy;
    fsSol dn = sqrt(fsi_island_dot(is, s, s)), gn = sqrt(fsi_island_dot(is, g, g));
    fsSol lo = dn * (0.01 < gn ? 0.01 : gn);
    fsSol eta_k = -1.0 / (lo > FS_SOL_MINVAL ? lo : FS_SOL_MINVAL);
    beta = eta_k > beta_hz ? eta_k : beta_hz;
  }
  FS_SYNC(); // every lane has read search
  FSI_FOR_ISLAND_DOF(m, is, i) d->sol_search[i] = -d->sol_Mgrad[i] + beta * d->sol_search[i];
  FS_SYNC();
}

/// mj_solPrimal for one island, Newton or CG (solver_cg): sol_qacc (its dofs) from the warm
/// start to the minimum of the Gauss + constraint cost; sol_force (its rows), sol_qfrc (its
/// dofs), sol_state; iterations, last improvement and gradient into its statistics. Zero
/// iterations when the warm start is certified (the duality gap, and for Newton the
/// gradient, below tolerance) or Newton's first decrement is. Newton's direction is
/// -H \ grad (the Hessian factored once, then updated), CG's the Hager-Zhang conjugate of
/// -M \ grad.
FS_HD FS_FORCEINLINE void fsi_primal(const fsModel* m, fsData* d, const fsIsland* is) {
  int newton = !FSI_ROWS || !m->solver_cg;
  fsSol scale = is->scale, tol = m->tolerance;
  fsi_sol_vec(m, d, d->qfrc_smooth); // for the line search
  fsi_island_mul_M(m, d, is, d->sol_qacc, d->sol_Ma);
  FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
    if (fsi_in_island(d, is, r))
      d->sol_Jaref[r] = fsi_island_row_dot(m, d, is, r, d->sol_qacc) - d->efc_aref[r];
  }
  FS_SYNC();
  int ncone = fsi_primal_update(m, d, is, newton);
  fsi_primal_grad(m, d, is);
  fsi_m_solve_grad(m, d, is);
  int gap = fsi_newton_decrement(d, is) < tol;
  int small_grad = scale * sqrt(fsi_island_dot(is, d->sol_grad, d->sol_grad)) < tol;
  int done = gap && (!newton || small_grad), error = 0;
  if (!done && newton) {
    FSI_MARK(FS_MARK_HESSIAN);
    error |= fsi_hessian_factor(m, d, is, ncone);
    FSI_MARK(FS_MARK_NEWTON);
    fsi_hessian_solve(m, d, is, ncone);
    done = small_grad && fsi_newton_decrement(d, is) < tol;
  }
  if (!done) fsi_newton_direction(m, d, is);
  int iter = 0;
  fsSol improvement = 0, gradient = 0;
  while (!done && iter < m->iterations) {
    fsSol ls_improvement;
    FSI_MARK(FS_MARK_LINESEARCH);
    fsSol alpha =
        fsi_line_search(m, d, is, tol * m->ls_tolerance, m->ls_iterations, &ls_improvement);
    FSI_MARK(FS_MARK_NEWTON);
    if (alpha == 0) break;
    FSI_FOR_ISLAND_DOF(m, is, i) {
      d->sol_qacc[i] += d->sol_search[i] * alpha;
      d->sol_Ma[i] += d->sol_Mv[i] * alpha;
    }
#if FSI_ROWS
    if (!newton) {
      FSI_FOR_ISLAND_DOF(m, is, i) {
        d->sol_gradold[i] = d->sol_grad[i];
        d->sol_Mgradold[i] = d->sol_Mgrad[i];
      }
    }
#endif
    FS_FOR_LANE_RANGE(r, is->r0, is->r1) {
      if (!fsi_in_island(d, is, r)) continue;
      d->sol_Jaref[r] += d->sol_Jv[r] * alpha;
      d->sol_oldstate[r] = d->sol_state[r];
    }
    FS_SYNC();
    ncone = fsi_primal_update(m, d, is, newton);
    if (newton) {
      FSI_MARK(FS_MARK_HESSIAN);
      error |= fsi_hessian_incremental(m, d, is, ncone);
      FSI_MARK(FS_MARK_NEWTON);
    }
    fsi_primal_grad(m, d, is);
    if (newton)
      fsi_hessian_solve(m, d, is, ncone);
    else
      fsi_m_solve_grad(m, d, is);
    improvement = scale * ls_improvement;
    gradient = scale * sqrt(fsi_island_dot(is, d->sol_grad, d->sol_grad));
    fsSol decrement = newton ? fsi_newton_decrement(d, is) : 0;
    iter++;
    if ((improvement > 0 && improvement < tol) || gradient < tol || (newton && decrement < tol))
      break;
    if (newton)
      fsi_newton_direction(m, d, is);
    else
      fsi_cg_direction(m, d, is);
  }
  FS_LANE0 {
    if (is->index < FS_NISLAND) {
      d->solver_niter[is->index] += iter;
      d->solver_improvement[is->index] = improvement;
      d->solver_gradient[is->index] = gradient;
    }
    if (error) d->solver_error[0] |= FS_SOLVER_RANK;
  }
  FS_SYNC();
}

/// Island k of the world (k < nisland), or with islands disabled (k = 0) every dof
/// and row as one.
FS_HD fsIsland fsi_island(const fsModel* m, fsData* d, int k) {
  fsIsland is = fsi_island_all(m, d);
  if (d->nisland[0] == 0) {
    is.scale = 1 / (m->meaninertia * (fsSol)(m->nv > 1 ? m->nv : 1));
    return is;
  }
  int last = -1, ntree = 0;
  for (int t = 0; t < m->ntree; t++) {
    if (d->tree_island[t] != k) continue;
    if (is.tree < 0) is.tree = t;
    last = t;
#ifdef FS_ONE_LANE
    if (m->nitree) d->island_tree[ntree] = t;
#endif
    ntree++;
  }
  is.index = k;
  is.d0 = m->tree_dofadr[is.tree];
  is.d1 = m->tree_dofadr[last] + m->tree_dofnum[last];
#ifdef FS_ONE_LANE
  if (ntree > 1) { // its trees' dofs in order (MuJoCo's map_idof2dof)
    is.ntree = ntree;
    is.trees = d->island_tree;
    is.dof = d->island_dof;
    for (int s = 0; s < ntree; s++)
      for (int i = fsi_run_d0(m, &is, s); i < fsi_run_d1(m, &is, s); i++) d->island_dof[is.n++] = i;
  }
#endif
  fsSol inertia = 0; // the island's diagonal of M, summed in dof order
  for (int s = 0; s < fsi_island_nrun(&is); s++)
    for (int i = fsi_run_d0(m, &is, s); i < fsi_run_d1(m, &is, s); i++)
      inertia += d->M[m->M_rowadr[i] + m->M_rownnz[i] - 1];
  is.scale = 1 / inertia;
  if (d->nisland[0] == 1) {
    is.tree = -1; // the one island holds every row: no row tests
    return is;
  }
  while (is.r0 < is.r1 && d->efc_tree[is.r0] != is.tree) is.r0++;
  while (is.r1 > is.r0 && d->efc_tree[is.r1 - 1] != is.tree) is.r1--;
  int run = 1; // its rows one run, no other tree's between: the range alone, no row tests
  for (int r = is.r0; r < is.r1 && run; r++) run = d->efc_tree[r] == is.tree;
  if (run) is.tree = -1;
  return is;
}

/// The solver's results in the step's real: qacc, qfrc_constraint, efc_force.
FS_HD void fsi_solver_results(const fsModel* m, fsData* d) {
  FS_FOR_LANE(i, m->nv) {
    d->qacc[i] = (fsReal)d->sol_qacc[i];
    d->qfrc_constraint[i] = (fsReal)d->sol_qfrc[i];
  }
  FS_FOR_LANE(r, d->nefc[0]) d->efc_force[r] = (fsReal)d->sol_force[r];
  FS_SYNC();
}

#endif
