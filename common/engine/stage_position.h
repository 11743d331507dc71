// Position stages of the smooth step, one world each (see common/exec/real.h for the
// lanes): kinematics, centres of mass and motion axes, composite inertia and the
// mass matrix, its sparse L'DL factorisation (transmission: stage_transmission.h).
// Each stage reads the model and the world's data and writes its fields (the
// fields of common/engine/fields.h that name the stage); each ends with FS_SYNC().
#ifndef FLYSIM_COMMON_ENGINE_STAGE_POSITION_H
#define FLYSIM_COMMON_ENGINE_STAGE_POSITION_H

#include "common/engine/fields.h"
#include "common/engine/linalg.h"
#include "common/engine/spatial.h"

/// Add each body's children's rows (cols wide) into it, deepest parents first, so
/// that each row ends as the sum over its subtree. Parents at depth < min_level
/// receive nothing (min_level 1 leaves the world's row alone). Children are added
/// in decreasing id, MuJoCo's order.
FS_HD void fsi_tree_accumulate(const fsModel* m, fsReal* x, int cols, int min_level) {
  for (int lev = m->nlevel - 2; lev >= min_level; lev--) {
    int a0 = m->level_bodyadr[lev], a1 = m->level_bodyadr[lev + 1];
    FS_FOR_LANE(k, a1 - a0) {
      int p = m->level_body[a0 + k];
      fsReal* xp = x + (size_t)p * cols;
      int c0 = m->body_childadr[p];
      for (int c = c0 + m->body_childnum[p] - 1; c >= c0; c--) {
        const fsReal* xc = x + (size_t)m->body_child[c] * cols;
        for (int j = 0; j < cols; j++) xp[j] += xc[j];
      }
    }
    FS_SYNC();
  }
}

/// Frame of body i from its parent's and its joints: xpos, xquat, xmat, xanchor,
/// xaxis; then its inertial frame xipos, ximat (mj_kinematics1 and 2). A mocap body's
/// offset from its parent (the world) is mocap_pos and the normalized mocap_quat.
FS_HD void fsi_body_frame(const fsModel* m, fsData* d, int i) {
  fsReal pos[3], quat[4];
  int jnt0 = m->body_jntadr[i], njnt = m->body_jntnum[i];
  if (njnt == 1 && m->jnt_type[jnt0] == FS_JNT_FREE) {
    const fsReal* q = d->qpos + m->jnt_qposadr[jnt0];
    fsi_copy(pos, q, 3);
    fsi_copy(quat, q + 3, 4);
    fsi_normalize4(quat);
    fsi_copy(d->xanchor + 3 * jnt0, pos, 3);
    fsi_copy(d->xaxis + 3 * jnt0, m->jnt_axis + 3 * jnt0, 3); // MuJoCo keeps the local axis
  } else {
    int p = m->body_parentid[i], mocap = m->body_mocapid[i];
    if (mocap >= 0) { // a jointless child of the world (MuJoCo compiles no other): its pose
      fsi_copy(pos, d->mocap_pos + 3 * mocap, 3);
      fsi_copy(quat, d->mocap_quat + 4 * mocap, 4);
      fsi_normalize4(quat);
    } else if (p) {
      fsi_mul_mat_vec3(pos, d->xmat + 9 * p, m->body_pos + 3 * i);
      for (int k = 0; k < 3; k++) pos[k] += d->xpos[3 * p + k];
      fsi_mul_quat(quat, d->xquat + 4 * p, m->body_quat + 4 * i);
    } else {
      fsi_copy(pos, m->body_pos + 3 * i, 3);
      fsi_copy(quat, m->body_quat + 4 * i, 4);
    }
    for (int j = jnt0; j < jnt0 + njnt; j++) {
      int qa = m->jnt_qposadr[j];
      fsReal axis[3], anchor[3];
      fsi_rot_vec_quat(axis, m->jnt_axis + 3 * j, quat);
      fsi_rot_vec_quat(anchor, m->jnt_pos + 3 * j, quat);
      for (int k = 0; k < 3; k++) anchor[k] += pos[k];
      if (m->jnt_type[j] == FS_JNT_SLIDE) {
        fsReal s = d->qpos[qa] - m->qpos0[qa];
        for (int k = 0; k < 3; k++) pos[k] += axis[k] * s;
      } else { // ball or hinge: rotate about the anchor
        fsReal qloc[4], v[3];
        if (m->jnt_type[j] == FS_JNT_BALL) {
          fsi_copy(qloc, d->qpos + qa, 4);
          fsi_normalize4(qloc);
        } else {
          fsi_axis_angle_quat(qloc, m->jnt_axis + 3 * j, d->qpos[qa] - m->qpos0[qa]);
        }
        fsi_mul_quat(quat, quat, qloc);
        fsi_rot_vec_quat(v, m->jnt_pos + 3 * j, quat);
        for (int k = 0; k < 3; k++) pos[k] = anchor[k] - v[k];
      }
      fsi_copy(d->xanchor + 3 * j, anchor, 3);
      fsi_copy(d->xaxis + 3 * j, axis, 3);
    }
  }
  fsi_normalize4(quat);
  fsi_copy(d->xquat + 4 * i, quat, 4);
  fsi_copy(d->xpos + 3 * i, pos, 3);
  fsi_quat_to_mat(d->xmat + 9 * i, quat);

  // inertial frame (body_sameframe: none, body, or body rotation)
  fsReal* xipos = d->xipos + 3 * i;
  fsReal* ximat = d->ximat + 9 * i;
  if (m->body_sameframe[i] == FS_SAMEFRAME_BODY) {
    fsi_copy(xipos, pos, 3);
  } else {
    fsi_mul_mat_vec3(xipos, d->xmat + 9 * i, m->body_ipos + 3 * i);
    for (int k = 0; k < 3; k++) xipos[k] += pos[k];
  }
  if (m->body_sameframe[i] == FS_SAMEFRAME_NONE) {
    fsReal iq[4];
    fsi_mul_quat(iq, quat, m->body_iquat + 4 * i);
    fsi_quat_to_mat(ximat, iq);
  } else {
    fsi_copy(ximat, d->xmat + 9 * i, 9);
  }
}

/// Frame (xpos, xmat) of an object fixed to body b at the local pos and quat
/// (mj_local2Global): sameframe says which of the body's frames it shares.
FS_HD void fsi_local_to_global(const fsData* d, fsReal xpos[3], fsReal xmat[9], const fsReal pos[3],
                               const fsReal quat[4], int b, int sameframe) {
  switch (sameframe) {
  case FS_SAMEFRAME_BODY:
    fsi_copy(xpos, d->xpos + 3 * b, 3);
    break;
  case FS_SAMEFRAME_INERTIA:
    fsi_copy(xpos, d->xipos + 3 * b, 3);
    break;
  default: // none, body rotation, inertia rotation: the body frame's position
    fsi_mul_mat_vec3(xpos, d->xmat + 9 * b, pos);
    for (int k = 0; k < 3; k++) xpos[k] += d->xpos[3 * b + k];
  }
  switch (sameframe) {
  case FS_SAMEFRAME_NONE: {
    fsReal q[4];
    fsi_mul_quat(q, d->xquat + 4 * b, quat);
    fsi_quat_to_mat(xmat, q);
    break;
  }
  case FS_SAMEFRAME_BODY:
  case FS_SAMEFRAME_BODYROT:
    fsi_copy(xmat, d->xmat + 9 * b, 9);
    break;
  default: // inertia, inertia rotation
    fsi_copy(xmat, d->ximat + 9 * b, 9);
  }
}

/// mj_kinematics: frames of bodies (level by level from the root), joints and
/// inertial frames; then geoms and sites (mj_kinematics2).
FS_HD FS_FORCEINLINE void fs_kinematics(const fsModel* m, fsData* d) {
  FS_LANE0 {
    for (int k = 0; k < 3; k++) d->xpos[k] = d->xipos[k] = 0;
    d->xquat[0] = 1;
    d->xquat[1] = d->xquat[2] = d->xquat[3] = 0;
    for (int k = 0; k < 9; k++) d->xmat[k] = d->ximat[k] = (k % 4 == 0) ? 1 : 0;
  }
  FS_SYNC();
  for (int lev = 1; lev < m->nlevel; lev++) {
    int a0 = m->level_bodyadr[lev], a1 = m->level_bodyadr[lev + 1];
    FS_FOR_LANE(k, a1 - a0) fsi_body_frame(m, d, m->level_body[a0 + k]);
    FS_SYNC();
  }
  FS_FOR_LANE(g, m->nstaticgeom) { // the world body's: the model's frames, made once
    fsi_copy(d->geom_xpos + 3 * g, m->geom_static_xpos + 3 * g, 3);
    fsi_copy(d->geom_xmat + 9 * g, m->geom_static_xmat + 9 * g, 9);
  }
  FS_FOR_LANE(t, m->ngeom - m->nstaticgeom) {
    int g = m->nstaticgeom + t;
    fsi_local_to_global(d, d->geom_xpos + 3 * g, d->geom_xmat + 9 * g, m->geom_pos + 3 * g,
                        m->geom_quat + 4 * g, m->geom_bodyid[g], m->geom_sameframe[g]);
  }
  FS_FOR_LANE(i, m->nsite) {
    fsi_local_to_global(d, d->site_xpos + 3 * i, d->site_xmat + 9 * i, m->site_pos + 3 * i,
                        m->site_quat + 4 * i, m->site_bodyid[i], m->site_sameframe[i]);
  }
  FS_SYNC();
}

/// Motion axes (cdof) of joint j of body i about the subtree com of its tree.
FS_HD void fsi_joint_cdof(const fsModel* m, fsData* d, int i, int j) {
  fsReal offset[3];
  const fsReal* com = d->subtree_com + 3 * m->body_rootid[i];
  for (int k = 0; k < 3; k++) offset[k] = com[k] - d->xanchor[3 * j + k];
  fsReal* cdof = d->cdof + 6 * m->jnt_dofadr[j];
  switch (m->jnt_type[j]) {
  case FS_JNT_FREE:
    fsi_zero(cdof, 18); // translations along the world axes
    cdof[3] = cdof[10] = cdof[17] = 1;
    cdof += 18;
    // fall through - rotations as a ball joint
  case FS_JNT_BALL:
    for (int k = 0; k < 3; k++) { // rotations about the body frame's axes
      const fsReal* xm = d->xmat + 9 * i;
      fsReal axis[3] = {xm[k], xm[k + 3], xm[k + 6]};
      fsi_dof_com(cdof + 6 * k, axis, offset);
    }
    break;
  case FS_JNT_SLIDE:
    fsi_dof_com(cdof, d->xaxis + 3 * j, 0);
    break;
  default: // hinge
    fsi_dof_com(cdof, d->xaxis + 3 * j, offset);
  }
}

/// mj_comPos: subtree centres of mass, com-based inertias (cinert) and motion
/// axes (cdof), all about the com of each body's kinematic tree.
FS_HD FS_FORCEINLINE void fs_com_pos(const fsModel* m, fsData* d) {
  FS_FOR_LANE(i, m->nbody) {
    for (int k = 0; k < 3; k++) d->subtree_com[3 * i + k] = d->xipos[3 * i + k] * m->body_mass[i];
  }
  FS_SYNC();
  fsi_tree_accumulate(m, d->subtree_com, 3, 0);
  FS_FOR_LANE(i, m->nbody) {
    fsReal* c = d->subtree_com + 3 * i;
    if (m->body_subtreemass[i] < FS_MINVAL) {
      fsi_copy(c, d->xipos + 3 * i, 3);
    } else {
      fsReal inv = 1 / m->body_subtreemass[i];
      for (int k = 0; k < 3; k++) c[k] *= inv;
    }
  }
  FS_SYNC();
  FS_FOR_LANE(i, m->nbody) {
    if (i == 0) {
      fsi_zero(d->cinert, 10);
      continue;
    }
    fsReal offset[3];
    const fsReal* com = d->subtree_com + 3 * m->body_rootid[i];
    for (int k = 0; k < 3; k++) offset[k] = d->xipos[3 * i + k] - com[k];
    fsi_inert_com(d->cinert + 10 * i, m->body_inertia + 3 * i, d->ximat + 9 * i, offset,
                  m->body_mass[i]);
  }
  FS_FOR_LANE(i, m->nbody) {
    for (int j = m->body_jntadr[i]; j < m->body_jntadr[i] + m->body_jntnum[i]; j++)
      fsi_joint_cdof(m, d, i, j);
  }
  FS_SYNC();
}

/// mj_makeM (mj_crb): composite inertias (crb) and the mass matrix M with armature,
/// in MuJoCo's reduced sparse layout: row i holds dof i's ancestors (root first),
/// then the diagonal. Each row depends only on its dof: rows run in parallel.
FS_HD FS_FORCEINLINE void fs_make_m(const fsModel* m, fsData* d) {
  FS_FOR_LANE(k, 10 * m->nbody) d->crb[k] = d->cinert[k];
  FS_SYNC();
  fsi_tree_accumulate(m, d->crb, 10, 1);
  FS_FOR_LANE(i, m->nv) {
    int adr = m->M_rowadr[i], nnz = m->M_rownnz[i];
    fsReal* row = d->M + adr;
    fsi_zero(row, nnz);
    if (m->dof_simplenum[i]) {
      row[0] = m->dof_M0[i];
      continue;
    }
    row[nnz - 1] = m->dof_armature[i] + m->dof_actarmature[i];
    fsReal buf[6];
    fsi_mul_inert_vec(buf, d->crb + 10 * m->dof_bodyid[i], d->cdof + 6 * i);
    int a = nnz - 1;
    for (int j = i; j >= 0; j = m->dof_parentid[j]) row[a--] += fsi_dot6(d->cdof + 6 * j, buf);
  }
  FS_SYNC();
}

/// mj_tendon for fixed tendon t, where a stage needs it (the model's fixed tendons keep no
/// ten_length or ten_J fields): its length, sum_j coef_j qpos_j from 0 in wrap order.
FS_HD fsReal fsi_tendon_length(const fsModel* m, const fsData* d, int t) {
  fsReal len = 0;
  for (int w = m->tendon_adr[t]; w < m->tendon_adr[t] + m->tendon_num[t]; w++)
    len += m->wrap_prm[w] * d->qpos[m->jnt_qposadr[m->wrap_objid[w]]];
  return len;
}

/// ... and slot k of its Jacobian row (MuJoCo's ten_J: a slot per wrap, sorted by dof):
/// the first slot of a column sums its joint's coefficients from 0 in wrap order, a
/// repeated column's later slots are 0 (fsi_fixed_tendon's moment row, gear 1).
FS_HD fsReal fsi_tendon_J(const fsModel* m, int t, int k) {
  int adr = m->ten_J_rowadr[t], w0 = m->tendon_adr[t], w1 = w0 + m->tendon_num[t];
  if (k > adr && m->ten_J_colind[k - 1] == m->ten_J_colind[k]) return 0;
  fsReal J = 0;
  for (int w = w0; w < w1; w++)
    if (m->jnt_dofadr[m->wrap_objid[w]] == m->ten_J_colind[k]) J += m->wrap_prm[w];
  return J;
}

/// mj_tendon for spatial tendon t whose path holds sites and pulleys (the model check refuses
/// geom wrapping), where the rows need it (the host's: the model keeps no ten_length or
/// ten_J fields): its length, the distances between consecutive sites divided by the pulley
/// before them; with J, its Jacobian over its columns chain (nnz dofs, increasing) into J
/// (nnz): for each segment between two bodies, the direction p1 - p0 normalized times the
/// difference of the two sites' point Jacobians over the bodies' merged dof chains
/// (mj_jacDifPair, mju_mulMatTVec's sums skipping a zero component), added to the columns in
/// segment order times 1 / divisor (mju_combineSparseInc).
FS_HD fsReal fsi_spatial_tendon(const fsModel* m, const fsData* d, int t, const int* chain, int nnz,
                                fsReal* J) {
  int adr = m->tendon_adr[t], num = m->tendon_num[t];
  fsReal len = 0, divisor = 1;
  for (int q = 0; q < nnz && J; q++) J[q] = 0;
  for (int j = 0; j < num - 1; j++) {
    if (m->wrap_type[adr + j] == FS_WRAP_PULLEY || m->wrap_type[adr + j + 1] == FS_WRAP_PULLEY) {
      if (m->wrap_type[adr + j] == FS_WRAP_PULLEY) divisor = m->wrap_prm[adr + j];
      continue;
    }
    int s[2] = {m->wrap_objid[adr + j], m->wrap_objid[adr + j + 1]};
    const fsReal *p0 = d->site_xpos + 3 * s[0], *p1 = d->site_xpos + 3 * s[1];
    fsReal dif[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    len += fsi_norm3(dif) / divisor; // mju_dist3
    int b[2] = {m->site_bodyid[s[0]], m->site_bodyid[s[1]]};
    if (!J || b[0] == b[1]) continue;
    fsi_normalize3(dif);
    fsReal off[2][3], scale = 1 / divisor;
    int da[2];
    for (int k = 0; k < 2; k++) {
      const fsReal* com = d->subtree_com + 3 * m->body_rootid[b[k]];
      for (int c = 0; c < 3; c++) off[k][c] = (k ? p1 : p0)[c] - com[c];
      int w = m->body_weldid[b[k]];
      da[k] = m->body_dofnum[w] ? m->body_dofadr[w] + m->body_dofnum[w] - 1 : -1;
    }
    int q = nnz - 1;
    while (da[0] >= 0 || da[1] >= 0) { // the merged chain, from its last dof
      int dof = da[0] > da[1] ? da[0] : da[1];
      fsReal jac[2][3] = {{0, 0, 0}, {0, 0, 0}};
      for (int k = 0; k < 2; k++) {
        if (da[k] != dof) continue;
        const fsReal* cdof = d->cdof + 6 * dof;
        fsReal tmp[3];
        fsi_cross(tmp, cdof, off[k]);
        for (int c = 0; c < 3; c++) jac[k][c] = cdof[3 + c] + tmp[c];
        da[k] = m->dof_parentid[da[k]];
      }
      fsReal v = 0;
      for (int c = 0; c < 3; c++)
        if (dif[c] != 0) v += (jac[1][c] - jac[0][c]) * dif[c];
      while (q >= 0 && chain[q] > dof) q--;
      if (q >= 0 && chain[q] == dof) J[q] += scale * v;
    }
  }
  return len;
}

/// Tendon t's length (mj_tendon's ten_length): a fixed tendon's sum, a spatial tendon's path.
FS_HD fsReal fsi_tendon_length_any(const fsModel* m, const fsData* d, int t) {
  return m->wrap_type[m->tendon_adr[t]] == FS_WRAP_JOINT
             ? fsi_tendon_length(m, d, t)
             : fsi_spatial_tendon(m, d, t, NULL, 0, NULL);
}

/// Slot k of tendon t's Jacobian row (mj_tendon's ten_J[k]): a fixed tendon's coefficient
/// (fsi_tendon_J), a spatial tendon's column ten_J_colind[k] (fsi_spatial_tendon on it alone).
FS_HD fsReal fsi_tendon_slot_J(const fsModel* m, const fsData* d, int t, int k) {
  if (m->wrap_type[m->tendon_adr[t]] == FS_WRAP_JOINT) return fsi_tendon_J(m, t, k);
  fsReal J;
  fsi_spatial_tendon(m, d, t, m->ten_J_colind + k, 1, &J);
  return J;
}

/// Tendon t's velocity (mj_fwdVelocity's ten_velocity): its Jacobian row (fsi_tendon_slot_J)
/// times qvel as mju_dotSparse sums it, 4 running sums to the last multiple of 4, then the
/// rest.
FS_HD fsReal fsi_tendon_velocity(const fsModel* m, const fsData* d, int t) {
  int adr = m->ten_J_rowadr[t], n = m->ten_J_rownnz[t], nb = n / 4 * 4;
  fsReal s4[4] = {0, 0, 0, 0}, v;
  for (int j = 0; j < nb; j++)
    s4[j & 3] += fsi_tendon_slot_J(m, d, t, adr + j) * d->qvel[m->ten_J_colind[adr + j]];
  v = (s4[0] + s4[2]) + (s4[1] + s4[3]);
  for (int j = nb; j < n; j++)
    v += fsi_tendon_slot_J(m, d, t, adr + j) * d->qvel[m->ten_J_colind[adr + j]];
  return v;
}

/// mj_factorM: qLD, qLDiagInv from M.
FS_HD FS_FORCEINLINE void fs_factor_m(const fsModel* m, fsData* d) {
  FS_FOR_LANE(k, m->nC) d->qLD[k] = d->M[k];
  FS_SYNC();
  fsLayout LM = fsi_layout_M(m);
  fsi_factor_ld_levels(&LM, d->qLD, d->qLDiagInv);
}

#endif
