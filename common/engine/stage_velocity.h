// Velocity stages of the smooth step, one world each: actuator velocities, com
// velocities and cdof derivatives, passive forces, bias forces (RNE with gravity).
#ifndef FLYSIM_COMMON_ENGINE_STAGE_VELOCITY_H
#define FLYSIM_COMMON_ENGINE_STAGE_VELOCITY_H

#include "common/engine/stage_position.h"
#include "common/engine/stage_transmission.h"

/// mj_fwdVelocity's actuator_velocity = moment * qvel in MuJoCo's order (zero if
/// actuation is off).
FS_HD FS_FORCEINLINE void fs_actuator_velocity(const fsModel* m, fsData* d) {
  int off = m->disableflags & FS_DSBL_ACTUATION;
  FS_FOR_LANE(i, m->nu) d->actuator_velocity[i] = off ? 0 : fsi_moment_dot(m, d, i, d->qvel);
  FS_SYNC();
}

/// cvel and cdof_dot of body i from its parent's cvel (mj_comVel's body step).
FS_HD void fsi_body_vel(const fsModel* m, fsData* d, int i) {
  fsReal cvel[6], tmp[6];
  fsi_copy(cvel, d->cvel + 6 * m->body_parentid[i], 6);
  for (int j = m->body_jntadr[i]; j < m->body_jntadr[i] + m->body_jntnum[i]; j++) {
    int da = m->jnt_dofadr[j];
    const fsReal* cdof = d->cdof + 6 * da;
    fsReal* cdot = d->cdof_dot + 6 * da;
    switch (m->jnt_type[j]) {
    case FS_JNT_FREE:
      fsi_zero(cdot, 18); // translations: constant axes
      fsi_mul_dof_vec(tmp, cdof, d->qvel + da, 3);
      for (int k = 0; k < 6; k++) cvel[k] += tmp[k];
      da += 3;
      cdof += 18;
      cdot += 18;
      // fall through - rotations as a ball joint
    case FS_JNT_BALL:
      for (int k = 0; k < 3; k++) fsi_cross_motion(cdot + 6 * k, cvel, cdof + 6 * k);
      fsi_mul_dof_vec(tmp, cdof, d->qvel + da, 3);
      for (int k = 0; k < 6; k++) cvel[k] += tmp[k];
      break;
    default: // hinge, slide: the parent's velocity moves the axis
      fsi_cross_motion(cdot, cvel, cdof);
      for (int k = 0; k < 6; k++) cvel[k] += cdof[k] * d->qvel[da];
    }
  }
  fsi_copy(d->cvel + 6 * i, cvel, 6);
}

/// mj_comVel: com-based body velocities (cvel) and cdof time derivatives.
FS_HD FS_FORCEINLINE void fs_com_vel(const fsModel* m, fsData* d) {
  FS_LANE0 fsi_zero(d->cvel, 6);
  FS_SYNC();
  for (int lev = 1; lev < m->nlevel; lev++) {
    int a0 = m->level_bodyadr[lev], a1 = m->level_bodyadr[lev + 1];
    FS_FOR_LANE(k, a1 - a0) fsi_body_vel(m, d, m->level_body[a0 + k]);
    FS_SYNC();
  }
}

/// Spring force of joint j about qpos_spring (mj_springdamper's joint part).
FS_HD void fsi_joint_spring(const fsModel* m, fsData* d, int j) {
  fsReal k_lin = m->jnt_stiffness[j];
  const fsReal* poly = m->jnt_stiffnesspoly + FS_NPOLY * j;
  if (k_lin == 0 && poly[0] == 0 && poly[1] == 0) return;
  int pa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
  fsReal dif[3];
  switch (m->jnt_type[j]) {
  case FS_JNT_FREE: {
    for (int k = 0; k < 3; k++) dif[k] = d->qpos[pa + k] - m->qpos_spring[pa + k];
    fsReal s = -fsi_poly_force(k_lin, poly, fsi_norm3(dif), 0);
    for (int k = 0; k < 3; k++) d->qfrc_spring[da + k] += dif[k] * s;
    pa += 3;
    da += 3;
  }
    // fall through - rotation as a ball joint
  case FS_JNT_BALL: {
    fsReal quat[4];
    fsi_copy(quat, d->qpos + pa, 4);
    fsi_normalize4(quat);
    fsi_sub_quat(dif, quat, m->qpos_spring + pa);
    fsReal s = -fsi_poly_force(k_lin, poly, fsi_norm3(dif), 0);
    for (int k = 0; k < 3; k++) d->qfrc_spring[da + k] += dif[k] * s;
    break;
  }
  default: { // hinge, slide
    fsReal x = d->qpos[pa] - m->qpos_spring[pa];
    d->qfrc_spring[da] = -x * fsi_poly_force(k_lin, poly, x, 0);
  }
  }
}

/// mj_adhesion at dof i: every contact with adhesion (not excluded beyond the gap)
/// pulls along its normal, qfrc_adhesion = sum over contacts in order of the normal
/// Jacobian times -adhesion. Returns 1 if any contact is adhesive.
FS_HD int fsi_adhesion(const fsModel* m, fsData* d, int i) {
  fsReal s = 0;
  int any = 0;
  for (int c = 0; c < d->ncon[0]; c++) {
    fsReal adhesion = d->contact_adhesion[c];
    if (adhesion == 0 || d->contact_exclude[c] > 1) continue;
    any = 1;
    int p = d->contact_pair[c], place = m->pair_chainpos[p * m->nv + i];
    if (place < 0) continue;
    int side = fsi_pair_dof_side(m, p, place);
    fsReal off[3], jp[3], jr[3];
    fsi_contact_offset(m, d, c, side, off);
    fsi_contact_jac_col(d, side, i, off, jp, jr);
    s += fsi_frame_dot(d->contact_frame + 9 * c, jp) * -adhesion;
  }
  d->qfrc_adhesion[i] = s;
  return any;
}

/// The passive forces beyond the fly's (fluid forces, tendon springs and dampers) in this
/// build's step (FSI_PASSIVE): the host's; not yet the kernels (the cuda backend refuses them:
/// fs_model_kernels_lack).
#ifndef __CUDA_ARCH__
#define FSI_PASSIVE 1
#else
#define FSI_PASSIVE 0
#endif

#if FSI_PASSIVE
/// mj_springdamper's tendon part on tendon t (fixed, or spatial through sites and pulleys:
/// fsi_tendon_length_any, fsi_tendon_slot_J), after the joints' and dofs': the spring
/// beyond the rest lengths' dead band (x = length - upper above it, length - lower below)
/// pulls with -x fsi_poly_force(stiffness, x), the damper with -v fsi_poly_force(damping, v)
/// at the tendon's velocity v (its Jacobian row times qvel as mju_dotSparse sums it), each
/// times the row into qfrc_spring and qfrc_damper, slot by slot. On one lane.
FS_HD_OUTLINE void fsi_tendon_spring_damper(const fsModel* m, fsData* d, int t, int spring,
                                            int damper) {
  const fsReal *spoly = m->tendon_stiffnesspoly + FS_NPOLY * t,
               *dpoly = m->tendon_dampingpoly + FS_NPOLY * t;
  fsReal k = m->tendon_stiffness[t], b = m->tendon_damping[t];
  int has_s = spring && (k != 0 || spoly[0] != 0 || spoly[1] != 0);
  int has_d = damper && (b != 0 || dpoly[0] != 0 || dpoly[1] != 0);
  if (!has_s && !has_d) return;
  int adr = m->ten_J_rowadr[t], n = m->ten_J_rownnz[t];
  fsReal frc_s = 0, frc_d = 0;
  if (has_s) {
    fsReal len = fsi_tendon_length_any(m, d, t);
    fsReal lo = m->tendon_lengthspring[2 * t], hi = m->tendon_lengthspring[2 * t + 1];
    fsReal x = len > hi ? len - hi : len < lo ? len - lo : 0;
    frc_s = -x * fsi_poly_force(k, spoly, x, 0);
  }
  if (has_d) {
    fsReal v = fsi_tendon_velocity(m, d, t);
    frc_d = -v * fsi_poly_force(b, dpoly, v, 1);
  }
  for (int j = adr; j < adr + n; j++) {
    fsReal J = fsi_tendon_slot_J(m, d, t, j);
    int i = m->ten_J_colind[j];
    if (has_s) d->qfrc_spring[i] += J * frc_s;
    if (has_d) d->qfrc_damper[i] += J * frc_d;
  }
}

/// mj_inertiaBoxFluidModel's force on body b (fluid_bfrc: torque, force in the world frame):
/// the body's velocity at its com in its inertial frame less the wind, against the box of
/// the body's inertia (viscous terms with viscosity, quadratic drag with density), in
/// MuJoCo's order of operations. A body lighter than mjMINVAL feels none (mj_fluid).
FS_HD_OUTLINE void fsi_fluid_body(const fsModel* m, fsData* d, int b) {
  fsReal* bfrc = d->fluid_bfrc + 6 * b;
  if (m->body_mass[b] < FS_MINVAL) return;
  const fsReal *inertia = m->body_inertia + 3 * b, *ximat = d->ximat + 9 * b;
  fsReal box[3], mass = m->body_mass[b];
  for (int k = 0; k < 3; k++) {
    fsReal ext = inertia[(k + 1) % 3] + inertia[(k + 2) % 3] - inertia[k];
    box[k] = fs_sqrt((ext > FS_MINVAL ? ext : FS_MINVAL) / mass * (fsReal)6.0);
  }
  // velocity at the com in the inertial frame (mj_objectVelocity, local), and the wind's
  // there (mju_transformSpatial of (0, wind))
  const fsReal *com = d->subtree_com + 3 * m->body_rootid[b], *xipos = d->xipos + 3 * b;
  fsReal lvel[6], lwind[6], wind[6] = {0, 0, 0, m->wind[0], m->wind[1], m->wind[2]};
  fsi_transform_spatial(lvel, d->cvel + 6 * b, 0, xipos, com, ximat);
  fsi_transform_spatial(lwind, wind, 0, xipos, com, ximat);
  for (int k = 0; k < 3; k++) lvel[3 + k] -= lwind[3 + k];
  fsReal lfrc[6] = {0, 0, 0, 0, 0, 0};
  if (m->viscosity > 0) {
    fsReal diam = (box[0] + box[1] + box[2]) / (fsReal)3.0;
    fsReal ang = -FS_PI * diam * diam * diam * m->viscosity;
    fsReal lin = (fsReal)(-3.0) * FS_PI * diam * m->viscosity;
    for (int k = 0; k < 3; k++) {
      lfrc[k] = lvel[k] * ang;
      lfrc[3 + k] = lvel[3 + k] * lin;
    }
  }
  if (m->density > 0) {
    fsReal rho = m->density, b4[3];
    for (int k = 0; k < 3; k++) b4[k] = box[k] * box[k] * box[k] * box[k];
    for (int k = 0; k < 3; k++) {
      int k1 = k == 0 ? 1 : 0, k2 = k == 2 ? 1 : 2; // the other two axes, in order
      fsReal v = lvel[3 + k], w = lvel[k];
      lfrc[3 + k] -= (fsReal)0.5 * rho * box[k1] * box[k2] * fs_abs(v) * v;
      lfrc[k] -= rho * box[k] * (b4[k1] + b4[k2]) * fs_abs(w) * w / (fsReal)64.0;
    }
  }
  fsi_mul_mat_vec3(bfrc, ximat, lfrc);
  fsi_mul_mat_vec3(bfrc + 3, ximat, lfrc + 3);
}

/// mj_applyFT of every body's fluid force at its com, at dof i: the bodies that dof moves
/// (its body's subtree) in body order, each adding J_p' force, then J_r' torque.
FS_HD_OUTLINE fsReal fsi_fluid_dof(const fsModel* m, const fsData* d, int i) {
  int k = m->dof_bodyid[i];
  fsReal s = 0;
  for (int b = k; b < m->nbody; b++) {
    int a = b;
    while (a > k) a = m->body_parentid[a];
    if (a != k || m->body_mass[b] < FS_MINVAL) continue;
    const fsReal *bfrc = d->fluid_bfrc + 6 * b, *com = d->subtree_com + 3 * m->body_rootid[b];
    fsReal off[3], jp[3], jr[3];
    for (int c = 0; c < 3; c++) off[c] = d->xipos[3 * b + c] - com[c];
    fsi_jac_col(d, i, off, jp, jr);
    s += jp[0] * bfrc[3] + jp[1] * bfrc[4] + jp[2] * bfrc[5];
    s += jr[0] * bfrc[0] + jr[1] * bfrc[1] + jr[2] * bfrc[2];
  }
  return s;
}
#endif

/// mj_passive: joint springs and dof dampers (with what actuators add), then tendons' springs
/// and dampers (fsi_tendon_spring_damper; the host's), summed into qfrc_passive, then fluid
/// forces (fsi_fluid_body, fsi_fluid_dof; the host's) and contact adhesion (fsi_adhesion) added.
/// Gravity compensation, the ellipsoid fluid model and passive contacts are refused by the model
/// check (common/model/model_support.c).
FS_HD FS_FORCEINLINE void fs_passive(const fsModel* m, fsData* d) {
  FS_FOR_LANE(i, m->nv) {
    d->qfrc_spring[i] = d->qfrc_damper[i] = d->qfrc_passive[i] = d->qfrc_adhesion[i] = 0;
  }
  FS_SYNC();
  int spring = !(m->disableflags & FS_DSBL_SPRING), damper = !(m->disableflags & FS_DSBL_DAMPER);
  if (!spring && !damper) return;
  if (spring) {
    FS_FOR_LANE(j, m->njnt) fsi_joint_spring(m, d, j);
  }
  if (damper) {
    FS_FOR_LANE(i, m->nv) {
      fsReal b = m->dof_damping[i] + m->dof_actdamping[i];
      fsReal poly[FS_NPOLY];
      for (int k = 0; k < FS_NPOLY; k++)
        poly[k] = m->dof_dampingpoly[FS_NPOLY * i + k] + m->dof_actdampingpoly[FS_NPOLY * i + k];
      if (b != 0 || poly[0] != 0 || poly[1] != 0) {
        fsReal v = d->qvel[i];
        d->qfrc_damper[i] = -v * fsi_poly_force(b, poly, v, 1);
      }
    }
  }
  FS_SYNC();
#if FSI_PASSIVE
  if (m->tendon_passive) {
    FS_LANE0 for (int t = 0; t < m->ntendon; t++) fsi_tendon_spring_damper(m, d, t, spring, damper);
    FS_SYNC();
  }
  if (m->nvfluid) {
    FS_FOR_LANE(b, m->nbody) fsi_fluid_body(m, d, b);
    FS_SYNC();
    FS_FOR_LANE(i, m->nv) d->qfrc_fluid[i] = fsi_fluid_dof(m, d, i);
    FS_SYNC();
  }
#endif
  int adhesion = m->adhesion && m->npairnv && !(m->disableflags & FS_DSBL_CONTACT);
  FS_FOR_LANE(i, m->nv) {
    d->qfrc_passive[i] = d->qfrc_spring[i] + d->qfrc_damper[i];
#if FSI_PASSIVE
    if (m->nvfluid) d->qfrc_passive[i] += d->qfrc_fluid[i];
#endif
    if (adhesion && fsi_adhesion(m, d, i)) d->qfrc_passive[i] += d->qfrc_adhesion[i];
  }
  FS_SYNC();
}

/// Body i's com-based acceleration (without qacc) and the force that it and the
/// body's velocity need (mj_rne's forward pass).
FS_HD void fsi_body_rne(const fsModel* m, fsData* d, int i) {
  int da = m->body_dofadr[i];
  fsReal tmp[6], tmp1[6];
  fsi_mul_dof_vec(tmp, d->cdof_dot + 6 * da, d->qvel + da, m->body_dofnum[i]);
  fsReal* cacc = d->rne_cacc + 6 * i;
  const fsReal* pacc = d->rne_cacc + 6 * m->body_parentid[i];
  for (int k = 0; k < 6; k++) cacc[k] = pacc[k] + tmp[k];
  fsReal* cfrc = d->rne_cfrc + 6 * i;
  fsi_mul_inert_vec(cfrc, d->cinert + 10 * i, cacc);
  fsi_mul_inert_vec(tmp, d->cinert + 10 * i, d->cvel + 6 * i);
  fsi_cross_force(tmp1, d->cvel + 6 * i, tmp);
  for (int k = 0; k < 6; k++) cfrc[k] += tmp1[k];
}

/// mj_rne without acceleration: qfrc_bias = C(qpos, qvel), gravity included (the
/// world accelerates upwards at g).
FS_HD FS_FORCEINLINE void fs_rne(const fsModel* m, fsData* d) {
  FS_LANE0 {
    fsi_zero(d->rne_cacc, 6);
    fsi_zero(d->rne_cfrc, 6);
    if (!(m->disableflags & FS_DSBL_GRAVITY))
      for (int k = 0; k < 3; k++) d->rne_cacc[3 + k] = -m->gravity[k];
  }
  FS_SYNC();
  for (int lev = 1; lev < m->nlevel; lev++) {
    int a0 = m->level_bodyadr[lev], a1 = m->level_bodyadr[lev + 1];
    FS_FOR_LANE(k, a1 - a0) fsi_body_rne(m, d, m->level_body[a0 + k]);
    FS_SYNC();
  }
  fsi_tree_accumulate(m, d->rne_cfrc, 6, 1);
  FS_FOR_LANE(i, m->nv)
  d->qfrc_bias[i] = fsi_dot6(d->cdof + 6 * i, d->rne_cfrc + 6 * m->dof_bodyid[i]);
  FS_SYNC();
}

#endif
