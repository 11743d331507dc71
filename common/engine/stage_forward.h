// Actuation, acceleration, the constraint stage (warm start, Newton, noslip),
// MuJoCo's state checks and Euler integration; and the step itself: one readable
// list of stage calls in mj_step's order, each after its FSI_MARK, in the order of
// common/engine/fields.h's FS_STAGES (tests/engine/test_stage_list.py holds them together),
// and fs_stage_run, the table's dispatch. One world per call (see common/exec/real.h for
// the lanes).
#ifndef FLYSIM_COMMON_ENGINE_STAGE_FORWARD_H
#define FLYSIM_COMMON_ENGINE_STAGE_FORWARD_H

#include "common/engine/stage_collision.h"
#include "common/engine/stage_constraint.h"
#include "common/engine/stage_noslip.h"
#include "common/engine/stage_position.h"
#include "common/engine/stage_sensor.h"
#include "common/engine/stage_solver.h"
#include "common/engine/stage_transmission.h"
#include "common/engine/stage_velocity.h"

/// Activation dynamics in this build's step (FSI_ACT): the host's; not yet the kernels (the
/// cuda backend refuses them: fs_model_kernels_lack).
#ifndef __CUDA_ARCH__
#define FSI_ACT 1
#else
#define FSI_ACT 0
#endif

#if FSI_ACT
/// mj_nextActivation: actuator i's activation j one step on at act_dot (filterexact: the
/// filter integrated exactly, else Euler), clamped to actrange where actlimited.
FS_HD fsReal fsi_next_act(const fsModel* m, const fsData* d, int i, int j, fsReal act_dot) {
  fsReal act = d->act[j];
  if (m->actuator_dyntype[i] == FS_DYN_FILTEREXACT) {
    fsReal tau = m->actuator_dynprm[FS_NDYN * i];
    tau = FS_MINVAL >= tau ? FS_MINVAL : tau; // mju_max(mjMINVAL, tau)
    act = act + act_dot * tau * (1 - fs_exp(-(fsReal)m->timestep / tau));
  } else {
    act = act + act_dot * (fsReal)m->timestep;
  }
  if (m->actuator_actlimited[i])
    act = fs_clip(act, m->actuator_actrange[2 * i], m->actuator_actrange[2 * i + 1]);
  return act;
}

/// Actuator i's act_dot (mj_fwdActuation, whatever its group): of its activation from the
/// control u, clamped (integrator: u; filter, filterexact: (u - act) / max(mjMINVAL, tau)).
FS_HD_OUTLINE void fsi_act_dot(const fsModel* m, fsData* d, int i, fsReal u) {
  int j = m->actuator_actadr[i] + m->actuator_actnum[i] - 1;
  if (m->actuator_dyntype[i] == FS_DYN_INTEGRATOR) {
    d->act_dot[j] = u;
  } else {
    fsReal tau = m->actuator_dynprm[FS_NDYN * i];
    tau = FS_MINVAL >= tau ? FS_MINVAL : tau;
    d->act_dot[j] = (u - d->act[j]) / tau;
  }
}

/// Actuator i's force input: its activation, the next step's under actearly.
FS_HD_OUTLINE fsReal fsi_act_input(const fsModel* m, const fsData* d, int i) {
  int j = m->actuator_actadr[i] + m->actuator_actnum[i] - 1;
  return m->actuator_actearly[i] ? fsi_next_act(m, d, i, j, d->act_dot[j]) : d->act[j];
}

/// mj_advance's activations of actuator i: each one step on at its act_dot (0 where the
/// actuator's group is disabled).
FS_HD_OUTLINE void fsi_advance_act(const fsModel* m, fsData* d, int i) {
  int a0 = m->actuator_actadr[i];
  for (int j = a0; a0 >= 0 && j < a0 + m->actuator_actnum[i]; j++)
    d->act[j] = fsi_next_act(m, d, i, j, m->actuator_disabled[i] ? 0 : d->act_dot[j]);
}
#endif

/// mj_fwdActuation for the supported types: ctrl clamped to ctrlrange (unless
/// clampctrl is disabled), all ctrl zeroed if any is bad (warning BADCTRL);
/// force = gain * ctrl + bias with fixed or affine gain, none or affine bias;
/// clamped to forcerange; qfrc_actuator = moment' * force, then clamped per joint.
/// Activation dynamics (the host's): act_dot of every actuator with an activation, then
/// the activation as the force's input (fsi_act_dot, fsi_act_input).
FS_HD FS_FORCEINLINE void fs_fwd_actuation(const fsModel* m, fsData* d) {
  FS_FOR_LANE(i, m->nu) d->actuator_force[i] = 0;
  if (m->nu == 0 || (m->disableflags & FS_DSBL_ACTUATION)) {
    FS_FOR_LANE(i, m->nv) d->qfrc_actuator[i] = 0;
    FS_SYNC();
    return;
  }
  int clamp = !(m->disableflags & FS_DSBL_CLAMPCTRL);
  int bad = 0;
  FS_FOR_LANE(i, m->nu) {
    fsReal u = d->ctrl[i];
    if (clamp && m->actuator_ctrllimited[i])
      u = fs_clip(u, m->actuator_ctrlrange[2 * i], m->actuator_ctrlrange[2 * i + 1]);
    bad |= fs_is_bad(u);
  }
  bad = FS_ANY(bad);
  FS_LANE0 {
    if (bad) d->warning_number[FS_WARN_BADCTRL]++;
  }
  FS_SYNC();
#if FSI_ACT
  if (m->na) {
    FS_FOR_LANE(i, m->nu) {
      if (m->actuator_actadr[i] < 0) continue;
      fsReal u = 0;
      if (!bad) {
        u = d->ctrl[i];
        if (clamp && m->actuator_ctrllimited[i])
          u = fs_clip(u, m->actuator_ctrlrange[2 * i], m->actuator_ctrlrange[2 * i + 1]);
      }
      fsi_act_dot(m, d, i, u);
    }
    FS_SYNC();
  }
#endif
  FS_FOR_LANE(i, m->nu) {
    if (m->actuator_disabled[i]) continue;
    fsReal u = 0; // every control counts as zero if any was bad
    if (!bad) {
      u = d->ctrl[i];
      if (clamp && m->actuator_ctrllimited[i])
        u = fs_clip(u, m->actuator_ctrlrange[2 * i], m->actuator_ctrlrange[2 * i + 1]);
    }
#if FSI_ACT
    if (m->na && m->actuator_actadr[i] >= 0) u = fsi_act_input(m, d, i); // the activation
#endif
    const fsReal* g = m->actuator_gainprm + FS_NGAIN * i;
    const fsReal* b = m->actuator_biasprm + FS_NBIAS * i;
    fsReal len = d->actuator_length[i], vel = d->actuator_velocity[i];
    fsReal gain = g[0];
    if (m->actuator_gaintype[i] == FS_GAIN_AFFINE) gain = g[0] + g[1] * len + g[2] * vel;
    fsReal f = gain * u;
    if (m->actuator_biastype[i] == FS_BIAS_AFFINE) f += b[0] + b[1] * len + b[2] * vel;
    if (m->actuator_forcelimited[i])
      f = fs_clip(f, m->actuator_forcerange[2 * i], m->actuator_forcerange[2 * i + 1]);
    d->actuator_force[i] = f;
  }
  FS_SYNC();
  FS_FOR_LANE(i, m->nv) { // moment' * force, by actuator as MuJoCo sums it
    fsReal s = 0;
    int a0 = m->dof_momentadr[i];
    for (int a = a0; a < a0 + m->dof_momentnum[i]; a++)
      s += d->actuator_moment[m->dof_momentind[a]] * d->actuator_force[m->dof_momentact[a]];
    d->qfrc_actuator[i] = s;
  }
  FS_SYNC();
  FS_FOR_LANE(j, m->njnt) {
    if (!m->jnt_actfrclimited[j]) continue;
    fsReal* q = d->qfrc_actuator + m->jnt_dofadr[j]; // MuJoCo clamps the joint's first dof
    *q = fs_clip(*q, m->jnt_actfrcrange[2 * j], m->jnt_actfrcrange[2 * j + 1]);
  }
  FS_SYNC();
}

/// mj_fwdAcceleration: qfrc_smooth = passive - bias + applied + actuator;
/// qacc_smooth = inv(M) qfrc_smooth.
FS_HD FS_FORCEINLINE void fs_fwd_acceleration(const fsModel* m, fsData* d) {
  FS_FOR_LANE(i, m->nv) {
    fsReal f = d->qfrc_passive[i] - d->qfrc_bias[i];
    f += d->qfrc_applied[i];
    f += d->qfrc_actuator[i];
    d->qfrc_smooth[i] = d->qacc_smooth[i] = f;
  }
  FS_SYNC();
  fsLayout LM = fsi_layout_M(m);
  fsi_solve_ld_real(&LM, d->qLD, d->qLDiagInv, d->qacc_smooth, 0, m->nv);
}

/// mj_fwdConstraint: with no rows qacc = qacc_smooth; else efc_b, MuJoCo's warm
/// start, the Newton solve of each island (stage_solver.h), then noslip on each island
/// and the dual finish (stage_noslip.h) when noslip_iterations > 0; the results
/// written back in fsReal. efc_state: the Newton states without islands; with islands
/// MuJoCo keeps the warm start's last evaluation there (its solver works on copies;
/// without a warm start MuJoCo leaves it unset: flysim writes the Newton states);
/// noslip writes its dual states.
FS_HD FS_FORCEINLINE void fs_fwd_constraint(const fsModel* m, fsData* d) {
  int nefc = m->nefcmax ? d->nefc[0] : 0;
  FS_FOR_LANE(k, FS_NISLAND) {
    d->solver_niter[k] = d->solver_nnoslip[k] = 0;
    d->solver_improvement[k] = d->solver_gradient[k] = 0;
  }
  FS_LANE0 d->nisland[0] = d->solver_error[0] = 0;
  if (!nefc) {
    FS_FOR_LANE(i, m->nv) {
      d->qfrc_constraint[i] = 0;
      d->qacc[i] = d->qacc_smooth[i];
    }
    FS_SYNC();
    return;
  }
  FSI_MARK(FS_MARK_SOLVER_SETUP);
  FS_FOR_LANE(i, m->nv) d->sol_qfrc[i] = 0;
  FS_SYNC();
  fsi_solver_rows(m, d);
  fsi_islands(m, d);
  fsi_warmstart(m, d);
  int nisland = d->nisland[0] ? d->nisland[0] : 1;
  for (int k = 0; k < nisland; k++) {
    fsIsland is = fsi_island(m, d, k);
    FSI_MARK(FS_MARK_NEWTON);
    fsi_primal(m, d, &is);
  }
  if (!d->nisland[0] || !m->warmstart) { // islands with a warm start: MuJoCo's is left there
    FS_FOR_LANE(r, nefc) d->efc_state[r] = d->sol_state[r];
  }
  if (m->noslip_iterations > 0) {
    FSI_MARK(FS_MARK_NOSLIP);
    FS_SYNC();
    fsi_noslip_islands(m, d);
  }
  FSI_MARK(FS_MARK_RESULTS);
  fsi_solver_results(m, d);
}

/// mj_fwdConstraint's noslip alone (a test entry): noslip on every island from the
/// given efc_force, then the dual finish; solver_niter counts the noslip sweeps.
FS_HD FS_FORCEINLINE void fs_noslip(const fsModel* m, fsData* d) {
  int nefc = m->nefcmax ? d->nefc[0] : 0;
  FS_FOR_LANE(k, FS_NISLAND) d->solver_niter[k] = d->solver_nnoslip[k] = 0;
  FS_SYNC();
  if (!nefc || m->noslip_iterations <= 0) return;
  FS_FOR_LANE(r, nefc) d->sol_force[r] = d->efc_force[r];
  fsi_solver_rows(m, d);
  fsi_islands(m, d);
  fsi_noslip_islands(m, d);
  fsi_solver_results(m, d);
}

/// mj_resetData for what the smooth step reads: qpos = qpos0, mocap bodies at their
/// model pose (body_pos, body_quat), activations (the host's), every input and warning
/// counter zero, time zero.
FS_HD void fs_reset_world(const fsModel* m, fsData* d) {
  FS_FOR_LANE(i, m->nq) d->qpos[i] = m->qpos0[i];
  if (m->nmocap) {
    FS_FOR_LANE(i, m->nbody) {
      int id = m->body_mocapid[i];
      if (id < 0) continue;
      fsi_copy(d->mocap_pos + 3 * id, m->body_pos + 3 * i, 3);
      fsi_copy(d->mocap_quat + 4 * id, m->body_quat + 4 * i, 4);
    }
  }
  FS_FOR_LANE(i, m->nv) {
    d->qvel[i] = d->qfrc_applied[i] = d->qacc_warmstart[i] = d->qacc[i] = 0;
  }
  FS_FOR_LANE(i, m->nu) d->ctrl[i] = 0;
#if FSI_ACT
  FS_FOR_LANE(i, m->na) d->act[i] = 0;
#endif
  FS_LANE0 {
    d->time[0] = 0;
    for (int k = 0; k < FS_NWARNING; k++) d->warning_number[k] = 0;
  }
  FS_SYNC();
}

/// MuJoCo's mj_checkPos / mj_checkVel / mj_checkAcc: if any of x (n) is bad, reset
/// the world unless autoreset is disabled (all counters restart), then count the
/// warning once (as MuJoCo 3.16 counts). Returns 1 if the world was reset.
FS_HD FS_FORCEINLINE int fsi_check(const fsModel* m, fsData* d, const fsReal* x, int n,
                                   int warning) {
  int bad = 0;
  FS_FOR_LANE(i, n) bad |= fs_is_bad(x[i]);
  if (!FS_ANY(bad)) return 0;
  int reset = !(m->disableflags & FS_DSBL_AUTORESET);
  if (reset) fs_reset_world(m, d);
  FS_LANE0 d->warning_number[warning]++;
  FS_SYNC();
  return reset;
}

/// mj_integratePos: qpos (nq) moved by qvel (nv) over h, quaternions on the sphere; each
/// joint on a lane (no sync).
FS_HD FS_FORCEINLINE void fsi_integrate_pos(const fsModel* m, fsReal* qpos, const fsReal* qvel,
                                            fsReal h) {
  FS_FOR_LANE(j, m->njnt) {
    int pa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    switch (m->jnt_type[j]) {
    case FS_JNT_FREE:
      for (int k = 0; k < 3; k++) qpos[pa + k] += h * qvel[da + k];
      fsi_quat_integrate(qpos + pa + 3, qvel + da + 3, h);
      break;
    case FS_JNT_BALL:
      fsi_quat_integrate(qpos + pa, qvel + da, h);
      break;
    default:
      qpos[pa] += h * qvel[da];
    }
  }
}

/// mj_Euler: semi-implicit Euler. With dof damping (and eulerdamp on), the
/// velocity update solves (M + h*diag(d damping/d qvel)) qacc = qfrc_smooth +
/// qfrc_constraint through its own factor qH; otherwise it uses qacc. Then
/// qvel += h*qacc, qpos integrated with the new qvel (quaternions on the sphere),
/// time += h, qacc_warmstart = qacc.
FS_HD FS_FORCEINLINE void fs_euler(const fsModel* m, fsData* d) {
  fsReal h = (fsReal)m->timestep;
  if (m->flg_eulerdamp) {
    FS_FOR_LANE(k, m->nC) d->qH[k] = d->M[k];
    FS_SYNC();
    FS_FOR_LANE(i, m->nv) {
      fsReal b = m->dof_damping[i] + m->dof_actdamping[i];
      fsReal poly[FS_NPOLY];
      for (int k = 0; k < FS_NPOLY; k++)
        poly[k] = m->dof_dampingpoly[FS_NPOLY * i + k] + m->dof_actdampingpoly[FS_NPOLY * i + k];
      d->qH[m->M_rowadr[i] + m->M_rownnz[i] - 1] +=
          h * fsi_poly_force_deriv(b, poly, d->qvel[i], 1);
      d->euler_qacc[i] = d->qfrc_smooth[i] + d->qfrc_constraint[i];
    }
    FS_SYNC();
    fsLayout LM = fsi_layout_M(m); // qH has M's layout
    fsi_factor_ld_levels(&LM, d->qH, d->qHDiagInv);
    fsi_solve_ld_real(&LM, d->qH, d->qHDiagInv, d->euler_qacc, 0, m->nv);
  } else {
    FS_FOR_LANE(i, m->nv) d->euler_qacc[i] = d->qacc[i];
  }
  FS_SYNC();
#if FSI_ACT
  if (m->na && !(m->disableflags & FS_DSBL_ACTUATION)) {
    FS_FOR_LANE(i, m->nu) fsi_advance_act(m, d, i);
  }
#endif
  FS_FOR_LANE(i, m->nv) d->qvel[i] += d->euler_qacc[i] * h;
  FS_SYNC();
  fsi_integrate_pos(m, d->qpos, d->qvel, h);
  FS_FOR_LANE(i, m->nv) d->qacc_warmstart[i] = d->qacc[i];
  FS_LANE0 d->time[0] += m->timestep;
  FS_SYNC();
}

/// mj_fwdPosition (the islands and the projection MuJoCo makes here feed only the
/// solver: fs_fwd_constraint makes what it needs of them).
FS_HD FS_FORCEINLINE void fs_fwd_position(const fsModel* m, fsData* d) {
  FSI_MARK(FS_STAGE_KINEMATICS);
  fs_kinematics(m, d);
  FSI_MARK(FS_STAGE_COM_POS);
  fs_com_pos(m, d);
  FSI_MARK(FS_STAGE_MAKE_M);
  fs_make_m(m, d);
  FSI_MARK(FS_STAGE_FACTOR_M);
  fs_factor_m(m, d);
  FSI_MARK(FS_STAGE_COLLISION);
  fs_collision(m, d);
  FSI_MARK(FS_STAGE_MAKE_CONSTRAINT);
  fs_make_constraint(m, d);
  FSI_MARK(FS_STAGE_TRANSMISSION);
  fs_transmission(m, d);
}

/// mj_fwdVelocity.
FS_HD FS_FORCEINLINE void fs_fwd_velocity(const fsModel* m, fsData* d) {
  FSI_MARK(FS_STAGE_ACTUATOR_VELOCITY);
  fs_actuator_velocity(m, d);
  FSI_MARK(FS_STAGE_COM_VEL);
  fs_com_vel(m, d);
  FSI_MARK(FS_STAGE_PASSIVE);
  fs_passive(m, d);
  FSI_MARK(FS_STAGE_REFERENCE_CONSTRAINT);
  fs_reference_constraint(m, d);
  FSI_MARK(FS_STAGE_RNE);
  fs_rne(m, d);
}

/// mj_forward.
FS_HD FS_FORCEINLINE void fs_forward(const fsModel* m, fsData* d) {
  fs_fwd_position(m, d);
  fs_fwd_velocity(m, d);
  FSI_MARK(FS_STAGE_ACTUATION);
  fs_fwd_actuation(m, d);
  FSI_MARK(FS_STAGE_ACCELERATION);
  fs_fwd_acceleration(m, d);
  fs_fwd_constraint(m, d);
}

/// The integrators beyond Euler (RK4) in this build's step: the host's; not yet the kernels
/// (the cuda backend refuses them), whose code a second inlined forward would grow for
/// every model.
#ifndef __CUDA_ARCH__
#define FSI_RK4 1
#else
#define FSI_RK4 0
#endif

#if FSI_RK4
// mj_RungeKutta(m, d, 4) after mj_forward, in two parts around the forwards of its later
// stages (the step's loop runs them: one forward in the code, as the step inlines it).
// The classic tableau: A's rows 1/2; 0, 1/2; 0, 0, 1; B 1/6, 1/3, 1/3, 1/6. Sums in
// MuJoCo's order, zero coefficients too. Activations: none (the model check refuses them).
#define FSI_RK_A(s, j) ((s) == (j) + 1 ? ((s) == 3 ? 1.0 : 0.5) : 0.0) // A(s - 1, j)
#define FSI_RK_B(j)    ((j) == 0 || (j) == 3 ? 1.0 / 6.0 : 1.0 / 3.0)

/// Stage s (1 to 3) of RK4, after the forward of stage s - 1: that stage's qacc kept (F[s -
/// 1]; at s = 1 the state X[0] and its time too), then the state of stage s set: X[0] moved by dX =
/// sum_j A(s, j) (qvel_j, qacc_j) over h (qpos integrated with dX's velocity, qvel += h dX's
/// acceleration), at time + C(s) h, C(s) A's row sum.
FS_HD void fsi_rk_stage(const fsModel* m, fsData* d, int s) {
  int nq = m->nq, nv = m->nv;
  fsReal h = (fsReal)m->timestep;
  fsReal *X = d->rk_qpos, *V = d->rk_qvel, *F = d->rk_qacc, *dx = d->rk_dx;
  if (s == 1) {
    FS_FOR_LANE(i, nq) X[i] = d->qpos[i];
    FS_FOR_LANE(i, nv) V[i] = d->qvel[i];
  }
  FS_LANE0 if (s == 1) d->rk_time[0] = d->time[0];
  FS_FOR_LANE(i, nv) F[(s - 1) * nv + i] = d->qacc[i];
  FS_SYNC();
  double c = 0;
  for (int j = 0; j < s; j++) c += FSI_RK_A(s, j);
  FS_FOR_LANE(i, nv) {
    fsReal v = 0, a = 0;
    for (int j = 0; j < s; j++) {
      v += V[j * nv + i] * (fsReal)FSI_RK_A(s, j);
      a += F[j * nv + i] * (fsReal)FSI_RK_A(s, j);
    }
    dx[i] = v;
    dx[nv + i] = a;
    d->qvel[i] = V[s * nv + i] = V[i] + a * h;
  }
  FS_FOR_LANE(i, nq) X[s * nq + i] = X[i];
  FS_SYNC();
  fsi_integrate_pos(m, X + s * nq, dx, h);
  FS_SYNC();
  FS_FOR_LANE(i, nq) d->qpos[i] = X[s * nq + i];
  FS_LANE0 d->time[0] = d->rk_time[0] + c * m->timestep;
  FS_SYNC();
}

/// RK4's end, after the last stage's forward: dX = sum_j B(j) (qvel_j, qacc_j), then
/// mj_advance from X[0]: qvel += h dX's acceleration, qpos integrated with dX's velocity,
/// time += h, qacc_warmstart = the last stage's qacc (as MuJoCo's: its stages share the
/// step's warm start).
FS_HD void fsi_rk_advance(const fsModel* m, fsData* d) {
  int nq = m->nq, nv = m->nv;
  fsReal h = (fsReal)m->timestep;
  fsReal *X = d->rk_qpos, *V = d->rk_qvel, *F = d->rk_qacc, *dx = d->rk_dx;
  FS_FOR_LANE(i, nv) F[3 * nv + i] = d->qacc[i];
  FS_SYNC();
  FS_FOR_LANE(i, nv) {
    fsReal v = 0, a = 0;
    for (int j = 0; j < 4; j++) {
      v += V[j * nv + i] * (fsReal)FSI_RK_B(j);
      a += F[j * nv + i] * (fsReal)FSI_RK_B(j);
    }
    dx[i] = v;
    dx[nv + i] = a;
    d->qvel[i] = V[i] + a * h;
    d->qacc_warmstart[i] = d->qacc[i];
  }
  FS_FOR_LANE(i, nq) d->qpos[i] = X[i];
  FS_LANE0 d->time[0] = d->rk_time[0] + m->timestep;
  FS_SYNC();
  fsi_integrate_pos(m, d->qpos, dx, h);
  FS_SYNC();
}
#endif

/// mj_step: the state checks, mj_forward (once more after a bad qacc's reset), then the
/// integrator: Euler, or on the host RK4, whose three later stages run mj_forward again
/// (fsi_rk_stage sets each one's state, fsi_rk_advance combines them).
FS_HD FS_FORCEINLINE void fs_step(const fsModel* m, fsData* d) {
  FSI_MARK(FS_MARK_CHECKS);
  fsi_check(m, d, d->qpos, m->nq, FS_WARN_BADQPOS);
  fsi_check(m, d, d->qvel, m->nv, FS_WARN_BADQVEL);
  for (int pass = 0, stage = 0;;) { // stage: RK4's (0 alone under Euler)
    fs_forward(m, d);
    if (stage == 0) { // a bad qacc resets the world and forward runs once more (mj_checkAcc)
      FSI_MARK(FS_MARK_CHECKS);
      if (pass++ == 0 && fsi_check(m, d, d->qacc, m->nv, FS_WARN_BADQACC)) continue;
      FSI_MARK(FS_STAGE_SENSOR); // the first forward's sensors (RK4's later ones skip them)
      fs_sensor(m, d);
    }
#if FSI_RK4
    if (m->rk4 && ++stage < 4) {
      fsi_rk_stage(m, d, stage);
      continue;
    }
#endif
    break;
  }
#if FSI_RK4
  if (m->rk4) {
    fsi_rk_advance(m, d);
    return;
  }
#endif
  FSI_MARK(FS_STAGE_EULER);
  fs_euler(m, d);
}

/// Run one stage (fsStage) on one world: the stage tests and per-stage kernels. The cases
/// are common/engine/fields.h's FS_STAGES (FS_STAGE_STATE and others: nothing).
FS_HD FS_FORCEINLINE void fs_stage_run(const fsModel* m, fsData* d, int stage) {
  switch (stage) {
#define FS_X(id, name, function)                                                                   \
  case FS_STAGE_##id:                                                                              \
    function(m, d);                                                                                \
    break;
    FS_STAGES(FS_X)
#undef FS_X
  default:
    break;
  }
}

#endif
