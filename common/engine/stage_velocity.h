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

/// mj_passive: joint springs and dof dampers (with what actuators add), summed into
/// qfrc_passive, then contact adhesion (fsi_adhesion) added. Gravity compensation,
/// fluid forces and passive contacts are refused by the model check (common/model/model_support.c).
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
  int adhesion = m->adhesion && m->npairnv && !(m->disableflags & FS_DSBL_CONTACT);
  FS_FOR_LANE(i, m->nv) {
    d->qfrc_passive[i] = d->qfrc_spring[i] + d->qfrc_damper[i];
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
