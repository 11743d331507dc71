// Constraint rows (mj_makeConstraint) and their reference accelerations
// (mj_referenceConstraint), one world per call (see common/exec/real.h for the lanes). In
// the step where mj_forward has them: the rows after collision (mj_fwdPosition), the
// reference after passive (mj_fwdVelocity).
//
// Rows in MuJoCo's order: equality (a row for each active joint or tendon equality), friction
// loss (a row for every dof with frictionloss, then every tendon with frictionloss > 0),
// limits (hinge and slide joints, then tendons: a row per side whose distance is within
// the margin), then contacts in d->contact order under MuJoCo's pyramidal cone: a contact of
// condim 1 gives one row (the normal), condim d > 1 gives 2 (d - 1) rows, the edges normal +-
// mu_k * direction k of the pyramid (or the elliptic cone's d rows). The model check refuses
// connect and weld equalities, the rows of spatial tendons that wrap geoms and ball-joint
// limits, which MuJoCo would also make. The arithmetic is MuJoCo 3.16's,
// operation for operation, so that float64 results are bit-identical (comments name
// MuJoCo's functions).
//
// Layout: every row of a contact moves the dofs of its pair's chain (pair_dof, fixed by the
// model: the two geoms' bodies' ancestor dofs less the common ones, MuJoCo's mj_mergeChain;
// against a static plane the other geom's body's ancestor dofs, 17 of NeuroMechFly's 72); a
// friction-loss or limit row moves one dof j, its chain the one entry
// pair_dof[dofrow_adr + j]; an equality's row its objects' merged dofs (eq_dofadr), a tendon's
// its Jacobian's columns (tendon_dofadr). Row r keeps its
// efc_J_rownnz[r] non-zeros at efc_J[r * njmax
// ...], their dofs at pair_dof[efc_J_coladr[r] ...] (docs/engine/constraints-and-solver.md).
#ifndef FLYSIM_COMMON_ENGINE_STAGE_CONSTRAINT_H
#define FLYSIM_COMMON_ENGINE_STAGE_CONSTRAINT_H

#include "common/engine/fields.h"
#include "common/engine/linalg.h"
#include "common/engine/spatial.h"
#include "common/engine/stage_collision.h" // fsi_pair_solreffriction
#include "common/engine/stage_position.h"  // fsi_tendon_length, fsi_tendon_J

/// The rows and solvers beyond NeuroMechFly's (equality, dof friction loss, joint limits, elliptic
/// cones, CG) in this build's step (FSI_ROWS): the host builds, not yet the kernels (the
/// cuda backend refuses models that use them: fs_model_general_rows), whose registers and
/// spills their code would raise for every model (ptxas, sm_90: the fly's step kernel
/// spilled 188 B a thread with it).
#ifndef __CUDA_ARCH__
#define FSI_ROWS 1
#else
#define FSI_ROWS 0
#endif

#define FS_MINIMP ((fsReal)0.0001) // mjMINIMP: smallest impedance
#define FS_MAXIMP ((fsReal)0.9999) // mjMAXIMP: largest impedance

/// Rows of a contact of condim dim: the normal for condim 1; else under the pyramidal cone
/// 2 (dim - 1) edges, under the elliptic cone dim (normal, tangents, spin, rolling).
FS_HD int fsi_contact_rows(const fsModel* m, int dim) {
#if FSI_ROWS
  if (m->elliptic && dim > 1) return dim;
#else
  (void)m;
#endif
  return dim == 1 ? 1 : 2 * (dim - 1);
}

FS_HD fsReal fsi_max(fsReal a, fsReal b) {
  return a < b ? b : a;
}

/// One row of a contact frame times a 3-vector as MuJoCo's mju_mulMatMat sums it:
/// from 0, terms with a zero frame entry skipped.
FS_HD fsReal fsi_frame_dot(const fsReal f[3], const fsReal v[3]) {
  fsReal s = 0;
  for (int j = 0; j < 3; j++)
    if (f[j] != 0) s += v[j] * f[j];
  return s;
}

/// Translation (jp) and rotation (jr) Jacobian of dof `dof` at the point whose
/// offset from its tree's subtree com is `offset` (mj_jacSparse's column).
FS_HD void fsi_jac_col(const fsData* d, int dof, const fsReal offset[3], fsReal jp[3],
                       fsReal jr[3]) {
  const fsReal* cdof = d->cdof + 6 * dof;
  fsReal tmp[3];
  fsi_cross(tmp, cdof, offset);
  for (int k = 0; k < 3; k++) {
    jp[k] = cdof[3 + k] + tmp[k];
    jr[k] = cdof[k];
  }
}

/// Offset of contact c's point from the subtree com of the tree of its geom on side `side`
/// (0: geom 1, 1: geom 2, in collision order).
FS_HD void fsi_contact_offset(const fsModel* m, const fsData* d, int c, int side,
                              fsReal offset[3]) {
  int root = m->body_rootid[m->geom_bodyid[d->contact_geom[2 * c + side]]];
  FS_IVDEP // offset apart from the fields
  for (int k = 0; k < 3; k++) offset[k] = d->contact_pos[3 * c + k] - d->subtree_com[3 * root + k];
}

/// Side of chain entry k of pair p: the body whose dof it is (0: geom 1's, 1: geom 2's).
/// pair_moveside is the side of every entry where one body moves (the planes', the static
/// geoms' pairs), else 2: each entry's pair_dofside.
FS_HD int fsi_pair_dof_side(const fsModel* m, int p, int k) {
  int side = m->pair_moveside[p];
  return side < 2 ? side : m->pair_dofside[m->pair_dofadr[p] + k];
}

/// fsi_jac_col for a dof of contact c's side `side`: MuJoCo's Jacobian difference (geom 2's
/// body minus geom 1's, mj_jacDifPair, common ancestors skipped: only one of the bodies
/// moves the dof) is that body's column, negated on geom 1's side (0 - x: MuJoCo's value).
FS_HD void fsi_contact_jac_col(const fsData* d, int side, int dof, const fsReal offset[3],
                               fsReal jp[3], fsReal jr[3]) {
  fsi_jac_col(d, dof, offset, jp, jr);
  if (side) return;
  for (int k = 0; k < 3; k++) {
    jp[k] = -jp[k];
    jr[k] = -jr[k];
  }
}

/// Jacobian rows of contact c (from row adr), column by column of its pair's chain:
/// the Jacobian difference (geom 2's body minus geom 1's; each column moved by one of them,
/// the point's offset from that body's tree's subtree com) turned into the contact frame
/// (mj_instantiateContact: normal and tangents from the translation, spin and rolling from
/// the rotation), then the pyramid's edges normal + mu_k * direction k and normal - mu_k *
/// direction k (mju_addScl); the frame's rows themselves under the elliptic cone, the normal
/// alone for condim 1.
FS_HD void fsi_contact_jacobian(const fsModel* m, fsData* d, int c, int adr) {
  int p = d->contact_pair[c], dim = d->contact_dim[c], nv = m->pair_nv[p];
  const int* chain = m->pair_dof + m->pair_dofadr[p];
  const fsReal* f = d->contact_frame + 9 * c;
  const fsReal* mu = d->contact_friction + 5 * c;
  int moveside = m->pair_moveside[p];
  fsReal off0[3], off1[3]; // each side's offset (one side moving: its offset in both)
  fsi_contact_offset(m, d, c, moveside == 0 ? 0 : 1, off1);
  if (moveside == 2)
    fsi_contact_offset(m, d, c, 0, off0);
  else
    fsi_copy(off0, off1, 3);
  for (int k = 0; k < nv; k++) {
    fsReal jp[3], jr[3], jac[6];
    int side = fsi_pair_dof_side(m, p, k);
    fsReal off[3] = {side ? off1[0] : off0[0], side ? off1[1] : off0[1], // constant indices:
                     side ? off1[2] : off0[2]}; // registers on the device, not local memory
    fsi_contact_jac_col(d, side, chain[k], off, jp, jr);
    for (int i = 0; i < (dim > 1 ? 3 : 1); i++) jac[i] = fsi_frame_dot(f + 3 * i, jp);
    for (int i = 0; i < dim - 3; i++) jac[3 + i] = fsi_frame_dot(f + 3 * i, jr);
    fsReal* J = d->efc_J + (size_t)adr * m->njmax + k;
    if (dim == 1) {
      J[0] = jac[0];
      continue;
    }
#if FSI_ROWS // the frame's rows (jac indexed at run time: the host's)
    if (m->elliptic) {
      for (int j = 0; j < dim; j++) J[(size_t)j * m->njmax] = jac[j];
      continue;
    }
#endif
    FS_IVDEP // the rows apart (njmax > 0)
    for (int j = 1; j < dim; j++) {
      J[(size_t)(2 * j - 2) * m->njmax] = jac[0] + jac[j] * mu[j - 1];
      J[(size_t)(2 * j - 1) * m->njmax] = jac[0] + jac[j] * -mu[j - 1];
    }
  }
}

/// MuJoCo's getsolparam's checks of a row's solref and solimp, in place: mixed signs give
/// MuJoCo's default (0.02, 1), solref[0] raised to 2 * timestep unless refsafe is
/// disabled, solimp clamped to its ranges.
FS_HD void fsi_solparam_checked(const fsModel* m, fsReal ref[2], fsReal imp[5]) {
  if ((ref[0] > 0) != (ref[1] > 0)) { // mixed: MuJoCo warns and uses its default
    ref[0] = (fsReal)0.02;
    ref[1] = 1;
  }
  if (!(m->disableflags & FS_DSBL_REFSAFE) && ref[0] > 0)
    ref[0] = fsi_max(ref[0], 2 * (fsReal)m->timestep);
  imp[0] = fs_clip(imp[0], FS_MINIMP, FS_MAXIMP);
  imp[1] = fs_clip(imp[1], FS_MINIMP, FS_MAXIMP);
  imp[2] = fsi_max(0, imp[2]);
  imp[3] = fs_clip(imp[3], FS_MINIMP, FS_MAXIMP);
  imp[4] = fsi_max(1, imp[4]);
}

/// getsolparam for a contact: its solref and solimp, checked.
FS_HD void fsi_contact_solparam(const fsModel* m, const fsData* d, int c, fsReal ref[2],
                                fsReal imp[5]) {
  for (int k = 0; k < FS_NREF; k++) ref[k] = d->contact_solref[FS_NREF * c + k];
  for (int k = 0; k < FS_NIMP; k++) imp[k] = d->contact_solimp[FS_NIMP * c + k];
  fsi_solparam_checked(m, ref, imp);
}

/// mj_makeImpedance's stiffness K of a row from its checked solref and solimp: standard
/// 1 / (width^2 timeconst^2 dampratio^2), direct -solref[0] / width^2.
FS_HD fsReal fsi_row_stiffness(const fsReal ref[2], const fsReal sol[5]) {
  return ref[0] > 0 ? 1 / fsi_max(FS_MINVAL, sol[1] * sol[1] * ref[0] * ref[0] * ref[1] * ref[1])
                    : -ref[0] / fsi_max(FS_MINVAL, sol[1] * sol[1]);
}

/// ... and its damping B: standard 2 / (width timeconst), direct -solref[1] / width.
FS_HD fsReal fsi_row_damping(const fsReal ref[2], const fsReal sol[5]) {
  return ref[1] > 0 ? 2 / fsi_max(FS_MINVAL, sol[1] * ref[0])
                    : -ref[1] / fsi_max(FS_MINVAL, sol[1]);
}

/// a^b with MuJoCo's quick returns for b = 1 and 2.
FS_HD fsReal fsi_power(fsReal a, fsReal b) {
  return b == 1 ? a : (b == 2 ? a * a : fs_pow(a, b));
}

/// MuJoCo's getimpedance: impedance (out[0]) and its derivative with respect to
/// pos (out[1]) from solimp s: s[0] at the margin, s[1] at width s[2] beyond it, a
/// power-s[4] sigmoid with midpoint s[3] between.
FS_HD void fsi_impedance(const fsReal s[5], fsReal pos, fsReal margin, fsReal out[2]) {
  if (s[0] == s[1] || s[2] <= FS_MINVAL) { // flat
    out[0] = (fsReal)0.5 * (s[0] + s[1]);
    out[1] = 0;
    return;
  }
  fsReal x = (pos - margin) / s[2], sgn = 1;
  if (x < 0) {
    x = -x;
    sgn = -1;
  }
  if (x >= 1 || x <= 0) { // saturated
    out[0] = x >= 1 ? s[1] : s[0];
    out[1] = 0;
    return;
  }
  fsReal y, yP;
  if (s[4] == 1) {
    y = x;
    yP = 1;
  } else if (x <= s[3]) {
    fsReal a = 1 / fsi_power(s[3], s[4] - 1);
    y = a * fsi_power(x, s[4]);
    yP = s[4] * a * fsi_power(x, s[4] - 1);
  } else {
    fsReal b = 1 / fsi_power(1 - s[3], s[4] - 1);
    y = 1 - b * fsi_power(1 - x, s[4]);
    yP = s[4] * b * fsi_power(1 - x, s[4] - 1);
  }
  out[0] = s[0] + y * (s[1] - s[0]);
  out[1] = yP * sgn * (s[1] - s[0]) / s[2];
}

/// Impedance of contact c's rows (from adr): mj_diagApprox (the normal row's
/// approximate inverse inertia from both bodies' body_invweight0, the first friction
/// direction weighted by mu^2), then mj_makeImpedance: K, B (standard or direct
/// solref), imp, imp'; R = (1 - imp) / imp * diagA, for a pyramid the normal's R
/// turned into MuJoCo's common R = 2 mu^2 R (mu = friction[0] * sqrt(1 / impratio),
/// contact_mu); D = 1 / R; efc_diagA = R * imp / (1 - imp).
/// fsi_contact_impedance under the elliptic cone (condim > 1): the normal's R from
/// mj_diagApprox (both bodies' translational body_invweight0), imp and imp' from the
/// distance, for every row; R_1 = R_0 / impratio, mu = friction[0] sqrt(R_1 / R_0)
/// (contact_mu), R_k = R_1 friction[0]^2 / friction[k-1]^2 beyond; K and B from solref on
/// the normal, K = 0 and B from solreffriction (solref where it is 0 0) on the others;
/// the distance and margin on the normal alone.
FS_HD void fsi_cone_impedance(const fsModel* m, fsData* d, int c, int adr) {
  int dim = d->contact_dim[c];
  fsReal tran = 0;
  for (int s = 0; s < 2; s++)
    tran += m->body_invweight0[2 * m->geom_bodyid[d->contact_geom[2 * c + s]]];
  const fsReal* fr = d->contact_friction + 5 * c;
  fsReal ref[2], reff[2], sol[5], imp[2];
  fsi_contact_solparam(m, d, c, ref, sol);
  const fsReal* srf = fsi_pair_solreffriction(m, d->contact_pair[c]); // contact_solreffriction's
  for (int k = 0; k < FS_NREF; k++) reff[k] = srf ? srf[k] : 0; // (its life ends at collision)
  if ((reff[0] > 0) != (reff[1] > 0)) reff[0] = reff[1] = 0;    // mixed: MuJoCo's default 0 0
  if (!(m->disableflags & FS_DSBL_REFSAFE) && reff[0] > 0)
    reff[0] = fsi_max(reff[0], 2 * (fsReal)m->timestep);
  const fsReal* fref = reff[0] != 0 || reff[1] != 0 ? reff : ref;
  fsReal pos = d->contact_dist[c], margin = d->contact_includemargin[c];
  fsi_impedance(sol, pos, margin, imp);
  fsReal R0 = fsi_max(FS_MINVAL, (1 - imp[0]) * tran / imp[0]);
  fsReal R1 = R0 / fsi_max(FS_MINVAL, m->impratio);
  d->contact_mu[c] = fr[0] * fs_sqrt(R1 / R0);
  fsReal K = fsi_row_stiffness(ref, sol), B = fsi_row_damping(ref, sol);
  fsReal Bf = fsi_row_damping(fref, sol);
  int nnz = m->pair_nv[d->contact_pair[c]], coladr = m->pair_dofadr[d->contact_pair[c]];
  for (int k = 0; k < dim; k++) {
    int r = adr + k;
    fsReal R = k == 0 ? R0 : (k == 1 ? R1 : R1 * fr[0] * fr[0] / (fr[k - 1] * fr[k - 1]));
    d->efc_KBIP[4 * r] = k ? 0 : K;
    d->efc_KBIP[4 * r + 1] = k ? Bf : B;
    d->efc_KBIP[4 * r + 2] = imp[0];
    d->efc_KBIP[4 * r + 3] = imp[1];
    d->efc_R[r] = R;
    d->efc_D[r] = 1 / R;
    d->efc_diagA[r] = R * imp[0] / (1 - imp[0]);
    d->efc_pos[r] = k ? 0 : pos;
    d->efc_margin[r] = k ? 0 : margin;
    d->efc_frictionloss[r] = 0;
    d->efc_type[r] = FS_CNSTR_CONTACT_ELLIPTIC;
    d->efc_id[r] = c;
    d->efc_J_rownnz[r] = nnz;
    d->efc_J_coladr[r] = coladr;
  }
}

FS_HD void fsi_contact_impedance(const fsModel* m, fsData* d, int c, int adr) {
  int dim = d->contact_dim[c], nrow = fsi_contact_rows(m, dim);
  if (FSI_ROWS && m->elliptic && dim > 1) {
    fsi_cone_impedance(m, d, c, adr);
    return;
  }
  fsReal tran = 0;
  for (int s = 0; s < 2; s++)
    tran += m->body_invweight0[2 * m->geom_bodyid[d->contact_geom[2 * c + s]]];
  fsReal fr = d->contact_friction[5 * c];
  fsReal diag = dim == 1 ? tran : tran + fr * fr * tran;
  fsReal ref[2], sol[5], imp[2];
  fsi_contact_solparam(m, d, c, ref, sol);
  fsReal pos = d->contact_dist[c], margin = d->contact_includemargin[c];
  fsi_impedance(sol, pos, margin, imp);
  fsReal K = fsi_row_stiffness(ref, sol), B = fsi_row_damping(ref, sol);
  fsReal R = fsi_max(FS_MINVAL, (1 - imp[0]) * diag / imp[0]), mu = 0;
  if (dim > 1) {
    fsReal R1 = R / fsi_max(FS_MINVAL, m->impratio);
    mu = fr * fs_sqrt(R1 / R);
    R = 2 * mu * mu * R;
  }
  d->contact_mu[c] = mu;
  fsReal D = 1 / R, diagA = R * imp[0] / (1 - imp[0]);
  int type = dim == 1 ? FS_CNSTR_CONTACT_FRICTIONLESS : FS_CNSTR_CONTACT_PYRAMIDAL;
  int nnz = m->pair_nv[d->contact_pair[c]], coladr = m->pair_dofadr[d->contact_pair[c]];
  fsReal *FS_RESTRICT kbip = d->efc_KBIP + 4 * adr, *FS_RESTRICT Rr = d->efc_R + adr;
  fsReal *FS_RESTRICT Dr = d->efc_D + adr, *FS_RESTRICT diagAr = d->efc_diagA + adr;
  fsReal *FS_RESTRICT posr = d->efc_pos + adr, *FS_RESTRICT marginr = d->efc_margin + adr;
  fsReal* FS_RESTRICT lossr = d->efc_frictionloss + adr;
  int *FS_RESTRICT typer = d->efc_type + adr, *FS_RESTRICT idr = d->efc_id + adr;
  int *FS_RESTRICT nnzr = d->efc_J_rownnz + adr, *FS_RESTRICT coladrr = d->efc_J_coladr + adr;
  for (int k = 0; k < nrow; k++) { // the contact's rows: fields apart (FS_RESTRICT)
    kbip[4 * k] = K;
    kbip[4 * k + 1] = B;
    kbip[4 * k + 2] = imp[0];
    kbip[4 * k + 3] = imp[1];
    Rr[k] = R;
    Dr[k] = D;
    diagAr[k] = diagA;
    posr[k] = pos;
    marginr[k] = margin;
    lossr[k] = 0;
    typer[k] = type;
    idr[k] = c;
    nnzr[k] = nnz;
    coladrr[k] = coladr;
  }
}

/// The rows [r0, r1) of efc_J into efc_Jd (nv columns each, zeros off a row's chain): the
/// dense rows MuJoCo keeps where its Jacobians are dense (nv < 60), which the host's row
/// products run through as MuJoCo's dense loops do (the lanes read efc_J's chains). One
/// lane: fs_make_constraint's on the host (a contact's rows), the loader of MuJoCo's rows.
FS_HD void fsi_dense_rows(const fsModel* m, fsData* d, int r0, int r1) {
  int nv = m->nv, most = 256 / nv > 1 ? 256 / nv : 1; // rows zeroed at once: 2 KiB at most
  double* Jd = d->efc_Jd + (size_t)r0 * nv;           // (r1 - r0, nv)
  for (int r = r0; r < r1; r += most) {               // a short memset, not a string store per byte
    size_t n = (size_t)(r1 - r < most ? r1 - r : most) * nv;
    for (size_t k = 0; k < n; k++) Jd[(size_t)(r - r0) * nv + k] = 0;
  }
  for (int r = r0; r < r1; r++, Jd += nv) {
    const fsReal* J = d->efc_J + (size_t)r * m->njmax;
    const int* col = m->pair_dof + d->efc_J_coladr[r];
    for (int k = 0; k < d->efc_J_rownnz[r]; k++) Jd[col[k]] = J[k];
  }
}

/// One row r's impedance and descriptors (mj_diagApprox's diag, then mj_makeImpedance:
/// solref and solimp checked; K from solref where stiff, else 0; B, imp, imp'; R, D,
/// diagA), its position, margin, friction-loss bound, type, id and chain (nnz entries of
/// pair_dof from coladr).
FS_HD void fsi_row_impedance(const fsModel* m, fsData* d, int r, const fsReal* sref,
                             const fsReal* simp, fsReal diag, int stiff, fsReal pos, fsReal margin,
                             fsReal loss, int type, int id, int nnz, int coladr) {
  fsReal ref[2], sol[5], imp[2];
  for (int k = 0; k < FS_NREF; k++) ref[k] = sref[k];
  for (int k = 0; k < FS_NIMP; k++) sol[k] = simp[k];
  fsi_solparam_checked(m, ref, sol);
  fsi_impedance(sol, pos, margin, imp);
  fsReal R = fsi_max(FS_MINVAL, (1 - imp[0]) * diag / imp[0]);
  fsReal* kbip = d->efc_KBIP + 4 * r;
  kbip[0] = stiff ? fsi_row_stiffness(ref, sol) : 0;
  kbip[1] = fsi_row_damping(ref, sol);
  kbip[2] = imp[0];
  kbip[3] = imp[1];
  d->efc_R[r] = R;
  d->efc_D[r] = 1 / R;
  d->efc_diagA[r] = R * imp[0] / (1 - imp[0]);
  d->efc_pos[r] = pos;
  d->efc_margin[r] = margin;
  d->efc_frictionloss[r] = loss;
  d->efc_type[r] = type;
  d->efc_id[r] = id;
  d->efc_J_rownnz[r] = nnz;
  d->efc_J_coladr[r] = coladr;
}

/// Friction-loss or limit row r as mj_instantiateFriction / mj_instantiateLimit add it and
/// mj_diagApprox / mj_makeImpedance weigh it: one column, dof `dof` with entry jac; `type`
/// and `id` (the dof or the joint); position and margin (a limit's distance and the
/// joint's margin; 0 for friction loss); the friction-loss bound. diagA from
/// dof_invweight0; solref and solimp the dof's (friction loss) or the joint's (limits); K
/// = 0 for friction loss.
FS_HD void fsi_dof_row(const fsModel* m, fsData* d, int r, int type, int id, int dof, fsReal jac,
                       fsReal pos, fsReal margin, fsReal loss) {
  int limit = type == FS_CNSTR_LIMIT_JOINT;
  const fsReal* sref = limit ? m->jnt_solref + FS_NREF * id : m->dof_solref + FS_NREF * id;
  const fsReal* simp = limit ? m->jnt_solimp + FS_NIMP * id : m->dof_solimp + FS_NIMP * id;
  fsi_row_impedance(m, d, r, sref, simp, m->dof_invweight0[dof], limit, pos, margin, loss, type, id,
                    1, m->dofrow_adr + dof);
  d->efc_J[(size_t)r * m->njmax] = jac;
}

/// The friction-loss bound of row r (< nefc_dof): its dof's or its tendon's frictionloss; 0
/// for rows of other types (read from the model: efc_frictionloss's life ends with the rows).
FS_HD fsReal fsi_row_frictionloss(const fsModel* m, const fsData* d, int r) {
  int type = d->efc_type[r];
  if (type == FS_CNSTR_FRICTION_DOF) return m->dof_frictionloss[d->efc_id[r]];
#if FSI_ROWS
  if (type == FS_CNSTR_FRICTION_TENDON) return m->tendon_frictionloss[d->efc_id[r]];
#endif
  return 0;
}

/// Whether row r (< nefc_dof) is a friction-loss row (dof or tendon).
FS_HD int fsi_friction_row(const fsData* d, int r) {
#if FSI_ROWS
  return d->efc_type[r] == FS_CNSTR_FRICTION_DOF || d->efc_type[r] == FS_CNSTR_FRICTION_TENDON;
#else
  return d->efc_type[r] == FS_CNSTR_FRICTION_DOF;
#endif
}

/// Entry of equality object `obj` (a joint or a fixed tendon) in column `dof` of its
/// dense Jacobian: a joint's 1 at its dof; a tendon's ten_J slot of that column (the last
/// one, as mju_sparse2dense writes them), 0 off its columns.
FS_HD fsReal fsi_eq_jac(const fsModel* m, int joint, int obj, int dof) {
  if (joint) return m->jnt_dofadr[obj] == dof ? 1 : 0;
  fsReal J = 0;
  for (int k = m->ten_J_rowadr[obj]; k < m->ten_J_rowadr[obj] + m->ten_J_rownnz[obj]; k++)
    if (m->ten_J_colind[k] == dof) J = fsi_tendon_J(m, obj, k);
  return J;
}

/// Tendon k's limit or friction-loss row r (mj_instantiateLimit's or mj_instantiateFriction's
/// tendon rows, then mj_diagApprox and mj_makeImpedance): its Jacobian ten_J (a fixed
/// tendon's coefficients, a spatial tendon's fsi_spatial_tendon) times sign (a limit's
/// -side, friction loss 1) over its chain (tendon_dofadr); diagA tendon_invweight0;
/// solref and solimp the tendon's for limits (K from solref) or for friction loss (K = 0).
/// Returns 0 (no row) where MuJoCo's dense Jacobian is all zeros (mj_addConstraint's empty
/// row).
FS_HD int fsi_tendon_row(const fsModel* m, fsData* d, int r, int type, int k, fsReal sign,
                         fsReal pos, fsReal margin, fsReal loss) {
  int nnz = m->tendon_nv[k], empty = !m->jac_sparse, limit = type == FS_CNSTR_LIMIT_TENDON;
  fsReal* J = d->efc_J + (size_t)r * m->njmax;
  const int* chain = m->pair_dof + m->tendon_dofadr[k];
  int spatial = m->wrap_type[m->tendon_adr[k]] != FS_WRAP_JOINT;
  if (spatial) fsi_spatial_tendon(m, d, k, chain, nnz, J);
  for (int q = 0; q < nnz; q++) {
    J[q] = (spatial ? J[q] : fsi_eq_jac(m, 0, k, chain[q])) * sign; // mju_sparse2dense, mju_scl
    empty &= J[q] == 0;
  }
  if (empty || !nnz) return 0;
  fsi_row_impedance(m, d, r, (limit ? m->tendon_solref_lim : m->tendon_solref_fri) + FS_NREF * k,
                    (limit ? m->tendon_solimp_lim : m->tendon_solimp_fri) + FS_NIMP * k,
                    m->tendon_invweight0[k], limit, pos, margin, loss, type, k, nnz,
                    m->tendon_dofadr[k]);
  return 1;
}

/// Equality constraint i's row r (mj_instantiateEquality's joint and tendon kinds, then
/// mj_diagApprox and mj_makeImpedance): each object's scalar (joint: qpos, tendon: length)
/// less its value at qpos0; with a second object, the error pos1 - data0 - (data1 x +
/// data2 x^2 + data3 x^3 + data4 x^4), x the second's, and the Jacobian J1 - deriv J2
/// (deriv the polynomial's slope at x); alone, pos1 - data0 and J1. Over the equality's
/// chain (its objects' merged dofs, eq_dofadr). diagA their dof_invweight0 or
/// tendon_invweight0 summed, margin 0, solref and solimp the equality's. Returns 0 (no row)
/// where MuJoCo's dense Jacobian is all zeros (mj_addConstraint's empty row).
FS_HD int fsi_eq_row(const fsModel* m, fsData* d, int r, int i) {
  const fsReal* data = m->eq_data + FS_NEQDATA * i;
  int joint = m->eq_type[i] == FS_EQ_JOINT, obj[2] = {m->eq_obj1id[i], m->eq_obj2id[i]};
  fsReal pos[2] = {0, 0}, ref[2] = {0, 0}, diag = 0;
  for (int j = 0; j < 1 + (obj[1] >= 0); j++) {
    pos[j] = joint ? d->qpos[m->jnt_qposadr[obj[j]]] : fsi_tendon_length(m, d, obj[j]);
    ref[j] = joint ? m->qpos0[m->jnt_qposadr[obj[j]]] : m->tendon_length0[obj[j]];
    diag += joint ? m->dof_invweight0[m->jnt_dofadr[obj[j]]] : m->tendon_invweight0[obj[j]];
  }
  fsReal cpos, deriv = 0;
  if (obj[1] >= 0) {
    fsReal dif = pos[1] - ref[1];
    cpos = pos[0] - ref[0] - data[0] -
           (data[1] * dif + data[2] * dif * dif + data[3] * dif * dif * dif +
            data[4] * dif * dif * dif * dif);
    deriv = data[1] + 2 * data[2] * dif + 3 * data[3] * dif * dif + 4 * data[4] * dif * dif * dif;
  } else {
    cpos = pos[0] - ref[0] - data[0];
  }
  int nnz = m->eq_nv[i], empty = !m->jac_sparse;
  const int* chain = m->pair_dof + m->eq_dofadr[i];
  fsReal* J = d->efc_J + (size_t)r * m->njmax;
  for (int k = 0; k < nnz; k++) {
    J[k] = fsi_eq_jac(m, joint, obj[0], chain[k]);
    if (obj[1] >= 0) J[k] += fsi_eq_jac(m, joint, obj[1], chain[k]) * -deriv; // mju_addToScl
    empty &= J[k] == 0;
  }
  if (empty || !nnz) return 0;
  fsi_row_impedance(m, d, r, m->eq_solref + FS_NREF * i, m->eq_solimp + FS_NIMP * i, diag, 1, cpos,
                    0, 0, FS_CNSTR_EQUALITY, i, nnz, m->eq_dofadr[i]);
  return 1;
}

/// The equality, friction-loss and limit rows, the world's first (MuJoCo's order: each
/// active joint or tendon equality (fsi_eq_row); every dof with friction loss, every tendon
/// with friction loss; then each limited joint's sides, lower first, whose distance side *
/// (range[side] - qpos) is below the joint's margin, with entry -side, then each limited
/// tendon's the same on its length (fsi_tendon_row)); returns how many. At most ndofrow
/// (nefcmax holds them all). One lane.
FS_HD int fsi_dof_rows(const fsModel* m, fsData* d) {
  int n = 0;
#if FSI_ROWS // equality rows: the host's (the lanes' tree layout refuses them)
  if (!(m->disableflags & FS_DSBL_EQUALITY))
    for (int i = 0; i < m->neq; i++)
      if (m->eq_active0[i] && m->eq_nv[i]) n += fsi_eq_row(m, d, n, i);
#endif
  if (!(m->disableflags & FS_DSBL_FRICTIONLOSS)) {
    for (int i = 0; i < m->nv; i++)
      if (m->dof_frictionloss[i] != 0)
        fsi_dof_row(m, d, n++, FS_CNSTR_FRICTION_DOF, i, i, 1, 0, 0, m->dof_frictionloss[i]);
#if FSI_ROWS // tendon rows: the host's (the lanes' tree layout refuses them)
    for (int k = 0; k < m->ntendon; k++)
      if (m->tendon_nv[k] && m->tendon_frictionloss[k] > 0)
        n += fsi_tendon_row(m, d, n, FS_CNSTR_FRICTION_TENDON, k, 1, 0, 0,
                            m->tendon_frictionloss[k]);
#endif
  }
  if (!(m->disableflags & FS_DSBL_LIMIT)) {
    for (int j = 0; j < m->njnt; j++) {
      int type = m->jnt_type[j];
      if (!m->jnt_limited[j] || (type != FS_JNT_SLIDE && type != FS_JNT_HINGE)) continue;
      fsReal value = d->qpos[m->jnt_qposadr[j]], margin = m->jnt_margin[j];
      for (int side = -1; side <= 1; side += 2) {
        fsReal dist = (fsReal)side * (m->jnt_range[2 * j + (side + 1) / 2] - value);
        if (dist < margin)
          fsi_dof_row(m, d, n++, FS_CNSTR_LIMIT_JOINT, j, m->jnt_dofadr[j], -(fsReal)side, dist,
                      margin, 0);
      }
    }
#if FSI_ROWS
    for (int k = 0; k < m->ntendon; k++) {
      if (!m->tendon_nv[k] || !m->tendon_limited[k]) continue;
      fsReal value = fsi_tendon_length_any(m, d, k), margin = m->tendon_margin[k];
      for (int side = -1; side <= 1; side += 2) {
        fsReal dist = (fsReal)side * (m->tendon_range[2 * k + (side + 1) / 2] - value);
        if (dist < margin)
          n += fsi_tendon_row(m, d, n, FS_CNSTR_LIMIT_TENDON, k, -(fsReal)side, dist, margin, 0);
      }
    }
#endif
  }
  return n;
}

/// mj_makeConstraint: the friction-loss and limit rows first (fsi_dof_rows), then each
/// contact not excluded gets its rows (its efc_address), in d->contact order, with their
/// Jacobians and impedances. With nefcmax from the model's bounds the rows always fit; a
/// caller that lowers it keeps the first contacts' rows, the rest are dropped, counted in
/// efc_overflow and warned (MuJoCo's CNSTRFULL), never silently.
FS_HD FS_FORCEINLINE void fs_make_constraint(const fsModel* m, fsData* d) {
  int on = m->nefcmax > 0 && !(m->disableflags & FS_DSBL_CONSTRAINT);
  int contacts = on && !(m->disableflags & FS_DSBL_CONTACT);
  int ncon = m->nconmax ? d->ncon[0] : 0;
  FS_LANE0 {
    int n = on && m->ndofrow ? fsi_dof_rows(m, d) : 0, lost = 0;
    d->nefc_dof[0] = n;
    for (int c = 0; c < ncon; c++) {
      int rows = contacts && !d->contact_exclude[c] ? fsi_contact_rows(m, d->contact_dim[c]) : 0;
      if (lost || n + rows > m->nefcmax) {
        lost += rows;
        rows = 0;
      }
      d->contact_efc_address[c] = rows ? n : -1;
      n += rows;
    }
    d->nefc[0] = n;
    d->efc_overflow[0] = lost;
    if (lost) d->warning_number[FS_WARN_CNSTRFULL]++;
#ifdef FS_ONE_LANE
    if (FSI_ROWS && m->nefcD && m->ndofrow) fsi_dense_rows(m, d, 0, d->nefc_dof[0]);
#endif
  }
  FS_SYNC();
  FS_FOR_LANE(c, ncon) {
    int adr = d->contact_efc_address[c];
    d->contact_mu[c] = 0;
    if (adr < 0) continue;
    fsi_contact_jacobian(m, d, c, adr);
    fsi_contact_impedance(m, d, c, adr);
#ifdef FS_ONE_LANE
    if (m->nefcD) fsi_dense_rows(m, d, adr, adr + fsi_contact_rows(m, d->contact_dim[c]));
#endif
  }
  FS_SYNC();
}

/// Row r of the constraint Jacobian times x in MuJoCo's order, over the columns
/// [c0, c0 + ncol) that MuJoCo's dense rows span (all nv in mj_mulJacVec; an island's
/// dofs in its solver). Sparse Jacobian (mju_dotSparse): the row's non-zeros k in 4
/// running sums by k % 4 up to the last multiple of 4, (s0 + s2) + (s1 + s3), then the
/// rest one by one. Dense (mju_dot over the columns): column j in sum (j - c0) % 4
/// below the last multiple of 4 of ncol, the 1-3 columns left summed, then added; on one
/// lane over the dense row itself (efc_Jd), on lanes over the chain's entries (the columns
/// off the chain add zeros: the same sums).
FS_HD fsSol fsi_efc_dot_range(const fsModel* m, const fsData* d, int r, const fsSol* x, int c0,
                              int ncol) {
#ifdef FS_ONE_LANE // the host's models keep the rows dense (nefcD) wherever jac_sparse is 0
  if (!m->jac_sparse)
    return fsi_dot_mj(d->efc_Jd + (size_t)r * m->nv + c0, x + c0, ncol); // mju_dot
#endif
  const fsReal* J = d->efc_J + (size_t)r * m->njmax;
  const int* col = m->pair_dof + d->efc_J_coladr[r];
  int n = d->efc_J_rownnz[r];
  fsSol res;
  if (m->jac_sparse) {  // four running sums in scalars (an array indexed at run time
    int nb = n / 4 * 4; // would live in local memory)
    fsSol s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int k = 0; k < nb; k += 4) {
      s0 += J[k] * x[col[k]];
      s1 += J[k + 1] * x[col[k + 1]];
      s2 += J[k + 2] * x[col[k + 2]];
      s3 += J[k + 3] * x[col[k + 3]];
    }
    res = (s0 + s2) + (s1 + s3);
    for (int k = nb; k < n; k++) res += J[k] * x[col[k]];
    return res;
  }
#ifndef FS_ONE_LANE
  int nb = ncol / 4 * 4, nt = ncol - nb;
  fsSol s[4] = {0, 0, 0, 0}, t[3] = {0, 0, 0};
  for (int k = 0; k < n; k++) { // the other columns add zeros
    int j = col[k] - c0;
    fsSol v = J[k] * x[col[k]];
    if (j < nb)
      s[j & 3] += v;
    else
      t[j - nb] = v;
  }
  res = (s[0] + s[2]) + (s[1] + s[3]);
  if (nt == 3) res += t[0] + t[1] + t[2];
  if (nt == 2) res += t[0] + t[1];
  if (nt == 1) res += t[0];
#endif
  return res;
}

/// Row r of the constraint Jacobian times x (nv) in MuJoCo's order (mj_mulJacVec).
FS_HD fsSol fsi_efc_dot(const fsModel* m, const fsData* d, int r, const fsSol* x) {
  return fsi_efc_dot_range(m, d, r, x, 0, m->nv);
}

/// x (nv, fsReal) into sol_vec in the solver's real, for the row products.
FS_HD const fsSol* fsi_sol_vec(const fsModel* m, fsData* d, const fsReal* x) {
  FS_FOR_LANE(i, m->nv) d->sol_vec[i] = x[i];
  FS_SYNC();
  return d->sol_vec;
}

/// mj_referenceConstraint: efc_vel = J * qvel; efc_aref = -B * vel - K * imp *
/// (pos - margin); adhesive contacts' rows (contact adhesion, MuJoCo's
/// mj_adhesionRef) add R * adhesion: the normal row's (condim 1, the elliptic cone), spread evenly
/// over a pyramid's edges.
FS_HD FS_FORCEINLINE void fs_reference_constraint(const fsModel* m, fsData* d) {
  int nefc = m->nefcmax ? d->nefc[0] : 0;
  const fsSol* qvel = fsi_sol_vec(m, d, d->qvel);
  FS_FOR_LANE(r, nefc) {
    fsReal vel = (fsReal)fsi_efc_dot(m, d, r, qvel);
    const fsReal* kbip = d->efc_KBIP + 4 * r;
    fsReal aref = -kbip[1] * vel - kbip[0] * kbip[2] * (d->efc_pos[r] - d->efc_margin[r]);
    int c = d->efc_id[r];
    fsReal adhesion = d->efc_type[r] >= FS_CNSTR_CONTACT_FRICTIONLESS ? d->contact_adhesion[c] : 0;
    if (adhesion != 0) {
      int dim = d->contact_dim[c];
      fsReal edge = dim == 1 ? adhesion : adhesion / (2 * (dim - 1));
#if FSI_ROWS // the elliptic cone's on its normal row alone
      if (m->elliptic && dim > 1) edge = r == d->contact_efc_address[c] ? adhesion : 0;
#endif
      aref += d->efc_R[r] * edge;
    }
    d->efc_vel[r] = vel;
    d->efc_aref[r] = aref;
  }
  FS_SYNC();
}

#endif
