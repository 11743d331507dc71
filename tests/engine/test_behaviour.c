// NeuroMechFly's walk over the whole 2 s clip, contacts, adhesion and noslip on: the
// stepper's host build against MuJoCo (what flysim's CPU stepper runs) on the same 4
// worlds, each a quarter of the clip (rows 0, 5000, 10000, 15000; keyframe,
// adhesion on, 500 warm-up steps, then 5000 steps). Past a few hundred steps the two
// runs part (contact chaos; see test_replay.c), so what is compared is behaviour:
//   tracking: RMS over the steps and the 42 driven DoFs of joint angle - target;
//   walking: the thorax's displacement over the world's quarter;
//   ground: contacts per step, on average;
//   health: worlds with MuJoCo warnings (bad state, full buffers) or solver errors.
// Margins (stated once; the walk tracks its targets to ~3 deg RMS, a fly holding its
// first pose misses them by ~17 deg, and walks 5-9 mm per quarter): tracking within
// 0.05 deg of MuJoCo's per world (MuJoCo's own run with its state rounded to float32
// every step is printed beside); thorax displacement within 0.02 mm + 3 % of MuJoCo's
// distance; contacts per step within 3 %; no problem world on either. Measured
// (float32): tracking equal to 1e-3 deg, displacement within 0.07 mm, contacts 0.6 %.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/inputs/model.h"
#include "common/replay/replay.h"
#include "common/inputs/targets.h"
#include "cpu/serial.h"
#include "common/parity/harness.h"
#include "tests/testutil.h"

enum { NWORLD = 4, NSTEP = 5000 };

/// What a run of one world did.
typedef struct Walk {
  double rms_deg;       // tracking error
  double disp[3], dist; // thorax displacement (mm) and its length
  double contacts;      // per step
  int problems;         // warnings counted (or solver errors)
} Walk;

typedef struct Clip {
  mjModel* mj;
  fsTargets t;
  fsReplayBinding bind;
  int nwarmup;
} Clip;

static void finish(Walk* k, double sq, double ncon, const mjtNum* p0, const mjtNum* p1, int nact) {
  k->rms_deg = sqrt(sq / ((double)NSTEP * nact)) * 180 / M_PI;
  k->dist = 0;
  for (int i = 0; i < 3; i++) {
    k->disp[i] = p1[i] - p0[i];
    k->dist += k->disp[i] * k->disp[i];
  }
  k->dist = sqrt(k->dist);
  k->contacts = ncon / NSTEP;
}

// MuJoCo's walk of world w (round: the state rounded to float32 before every step).
static Walk walk_mujoco(const Clip* c, int w, int round) {
  const mjModel* mj = c->mj;
  mjData* d = mj_makeData(mj);
  fs_replay_reset_world(mj, &c->bind, d);
  for (int s = 0; s < c->nwarmup; s++) mj_step(mj, d);
  int A = c->bind.nact;
  double sq = 0, ncon = 0;
  mjtNum p0[3] = {d->qpos[0], d->qpos[1], d->qpos[2]};
  for (int s = 0; s < NSTEP; s++) {
    const double* tg = c->t.value + ((long)w * NSTEP + s) * A;
    for (int a = 0; a < A; a++) d->ctrl[c->bind.actuator[a]] = tg[a];
    if (round) {
      for (int i = 0; i < mj->nq; i++) d->qpos[i] = (float)d->qpos[i];
      for (int i = 0; i < mj->nv; i++) d->qvel[i] = (float)d->qvel[i];
    }
    mj_step(mj, d);
    ncon += d->ncon;
    for (int a = 0; a < A; a++) {
      double e = d->qpos[mj->jnt_qposadr[c->bind.joint_id[c->bind.actuator_joint[a]]]] - tg[a];
      sq += e * e;
    }
  }
  Walk k;
  finish(&k, sq, ncon, p0, d->qpos, A);
  k.problems = 0;
  for (int i = 0; i < mjNWARNING; i++) k.problems += d->warning[i].number;
  mj_deleteData(d);
  return k;
}

// The stepper's walk of every world (one batch).
static int walk_stepper(const Clip* c, Walk* out) {
  const mjModel* mj = c->mj;
  fsModel m;
  fsWorlds b;
  fsError err;
  if (fs_model_build(mj, "mesh.mjb", &m, &err) || fs_worlds_alloc(&m, NWORLD, &b, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  mjData* d = mj_makeData(mj);
  fs_replay_reset_world(mj, &c->bind, d);
  for (int w = 0; w < NWORLD; w++) fs_worlds_from_mj(&m, &b, w, mj, d, FS_STAGE_STATE, &err);
  mj_deleteData(d);
  fs_serial_step(&m, &b, c->nwarmup);
  int A = c->bind.nact;
  double sq[NWORLD] = {0}, ncon[NWORLD] = {0}, p0[NWORLD][3];
  for (int w = 0; w < NWORLD; w++)
    for (int i = 0; i < 3; i++) p0[w][i] = fs_worlds_view(&m, &b, w).qpos[i];
  for (int s = 0; s < NSTEP; s++) {
    for (int w = 0; w < NWORLD; w++) {
      fsData wd = fs_worlds_view(&m, &b, w);
      const double* tg = c->t.value + ((long)w * NSTEP + s) * A;
      for (int a = 0; a < A; a++) wd.ctrl[c->bind.actuator[a]] = (fsReal)tg[a];
    }
    fs_serial_step(&m, &b, 1);
    for (int w = 0; w < NWORLD; w++) {
      fsData wd = fs_worlds_view(&m, &b, w);
      const double* tg = c->t.value + ((long)w * NSTEP + s) * A;
      ncon[w] += wd.ncon[0];
      for (int a = 0; a < A; a++) {
        double e = wd.qpos[mj->jnt_qposadr[c->bind.joint_id[c->bind.actuator_joint[a]]]] - tg[a];
        sq[w] += e * e;
      }
    }
  }
  for (int w = 0; w < NWORLD; w++) {
    fsData wd = fs_worlds_view(&m, &b, w);
    mjtNum p1[3] = {wd.qpos[0], wd.qpos[1], wd.qpos[2]}, q0[3] = {p0[w][0], p0[w][1], p0[w][2]};
    finish(&out[w], sq[w], ncon[w], q0, p1, A);
    out[w].problems = wd.solver_error[0] != 0;
    for (int i = 0; i < FS_NWARNING; i++) out[w].problems += wd.warning_number[i];
  }
  fs_worlds_free(&b);
  fs_model_free(&m);
  return 0;
}

int main(void) {
  Clip c;
  memset(&c, 0, sizeof c);
  fsError err;
  char model[1024], clip[1024];
  snprintf(model, sizeof model, "%s", fs_test_asset("mesh.mjb"));
  snprintf(clip, sizeof clip, "%s", fs_test_asset("walking_clip.h5"));
  c.mj = fs_test_load_model(model);
  if (fs_targets_load(clip, &c.t, &err) || fs_targets_resample(&c.t, c.mj->opt.timestep, &err) ||
      fs_replay_bind(c.mj, model, &c.t, &c.bind, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  CHECK(c.t.nstep >= NWORLD * NSTEP);
  c.nwarmup = (int)lround(0.05 / c.mj->opt.timestep);
  Walk ours[NWORLD];
  if (walk_stepper(&c, ours)) return 1;
  printf("NeuroMechFly, the whole clip in %d quarters of %d steps, %s build against MuJoCo\n",
         NWORLD, NSTEP, fs_serial_real_name());
  printf("  world  rows         tracking RMS (deg)           thorax displacement (mm)      "
         "contacts/step   problems\n");
  printf("                      ours   MuJoCo  (f32 state)   ours           MuJoCo       "
         "ours  MuJoCo  ours MuJoCo\n");
  for (int w = 0; w < NWORLD; w++) {
    Walk mj = walk_mujoco(&c, w, 0), mf = walk_mujoco(&c, w, 1), *o = &ours[w];
    double dd = 0;
    for (int i = 0; i < 3; i++) dd += (o->disp[i] - mj.disp[i]) * (o->disp[i] - mj.disp[i]);
    dd = sqrt(dd);
    int ok_track = fabs(o->rms_deg - mj.rms_deg) <= 0.05;
    int ok_walk = dd <= 0.02 + 0.03 * mj.dist;
    int ok_con = fabs(o->contacts - mj.contacts) <= 0.03 * mj.contacts;
    int ok_health = o->problems == 0 && mj.problems == 0;
    printf("  %d  %5d..%5d   %6.3f %6.3f  (%6.3f)   %5.2f %5.2f %5.2f  %5.2f %5.2f %5.2f  %5.2f "
           "%5.2f  %4d %4d%s\n",
           w, w * NSTEP, (w + 1) * NSTEP - 1, o->rms_deg, mj.rms_deg, mf.rms_deg, o->disp[0],
           o->disp[1], o->disp[2], mj.disp[0], mj.disp[1], mj.disp[2], o->contacts, mj.contacts,
           o->problems, mj.problems,
           ok_track && ok_walk && ok_con && ok_health ? "" : "  <-- FAIL");
    CHECK_MSG(ok_track, "world %d: tracking %.3f deg, MuJoCo %.3f", w, o->rms_deg, mj.rms_deg);
    CHECK_MSG(ok_walk, "world %d: thorax displacement off by %.3f mm (MuJoCo walked %.3f)", w, dd,
              mj.dist);
    CHECK_MSG(ok_con, "world %d: %.2f contacts per step, MuJoCo %.2f", w, o->contacts, mj.contacts);
    CHECK_MSG(ok_health, "world %d: %d problems, MuJoCo %d", w, o->problems, mj.problems);
  }
  fs_replay_binding_free(&c.bind);
  fs_targets_free(&c.t);
  mj_deleteModel(c.mj);
  return fs_test_finish("engine behaviour");
}
