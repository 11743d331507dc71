#include "cpu/serial.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/engine/stage_forward.h"

int fs_serial_perturb_passive(fsModel* m, double* x, fsError* err) {
  *x = 0;
  const char* rows = getenv("FLYSIM_PERTURB_ROWS");
  if (rows && *rows) {
    if (!strcmp(rows, "limits")) {
      for (int j = 0; j < m->njnt; j++) {
        fsReal lo = m->jnt_range[2 * j];
        m->jnt_range[2 * j] = m->jnt_range[2 * j + 1];
        m->jnt_range[2 * j + 1] = lo;
      }
    } else if (!strcmp(rows, "frictionloss")) {
      for (int i = 0; i < m->nv; i++) m->dof_frictionloss[i] = 0;
    } else if (!strcmp(rows, "friction")) {
      for (int k = 0; k < 5 * m->npair; k++) m->pair_friction[k] *= (fsReal)1.001;
    } else if (!strcmp(rows, "margin")) {
      for (int p = 0; p < m->npair; p++) m->pair_margin[p] = 0;
    } else if (!strcmp(rows, "moving")) { // frictionless contacts between moving bodies
      for (int p = 0; p < m->npair; p++)
        if (m->pair_moveside[p] == 2) m->pair_dim[p] = 1;
    } else if (!strcmp(rows, "tendon")) { // fixed tendons' coefficients off
      for (int w = 0; w < m->nwrap; w++) m->wrap_prm[w] *= (fsReal)1.001;
    } else if (!strcmp(rows, "tendonrows")) { // tendons' ranges reversed, friction loss dropped
      for (int k = 0; k < m->ntendon; k++) {
        fsReal lo = m->tendon_range[2 * k];
        m->tendon_range[2 * k] = m->tendon_range[2 * k + 1];
        m->tendon_range[2 * k + 1] = lo;
        m->tendon_frictionloss[k] = 0;
      }
    } else if (!strcmp(rows, "islands")) { // contacts do not join their trees' islands
      for (int p = 0; p < m->npair; p++) m->pair_tree2[p] = -1;
    } else if (!strcmp(rows, "equality")) { // equalities' offsets and slopes off
      for (int i = 0; i < m->neq; i++) {
        m->eq_data[FS_NEQDATA * i] += (fsReal)1e-3;
        m->eq_data[FS_NEQDATA * i + 1] *= (fsReal)1.001;
      }
    } else {
      return fs_fail(err,
                     "FLYSIM_PERTURB_ROWS='%s' is not limits, frictionloss, friction, margin, "
                     "moving, islands, tendon, tendonrows or equality; fix: unset it (it is a "
                     "test switch)",
                     rows);
    }
  }
  const char* step = getenv("FLYSIM_PERTURB_STEP");
  if (step && *step) {
    if (!strcmp(step, "euler")) {
      m->rk4 = 0;                      // RK4 models stepped with Euler
    } else if (!strcmp(step, "act")) { // activations' time constants off
      for (int i = 0; i < m->nu; i++) m->actuator_dynprm[FS_NDYN * i] *= (fsReal)1.001;
    } else {
      return fs_fail(err,
                     "FLYSIM_PERTURB_STEP='%s' is not euler or act; fix: unset it (it is a test "
                     "switch)",
                     step);
    }
  }
  const char* s = getenv("FLYSIM_PERTURB_PASSIVE");
  if (!s || !*s) return 0;
  char* end;
  double v = strtod(s, &end);
  if (*end || !(v > -1 && v < 1))
    return fs_fail(err,
                   "FLYSIM_PERTURB_PASSIVE='%s' is not a number in (-1, 1); fix: unset it "
                   "(it is a test switch), or give a relative change such as 1e-3",
                   s);
  for (int j = 0; j < m->njnt; j++) m->jnt_stiffness[j] *= (fsReal)(1 + v);
  for (int i = 0; i < m->nv; i++) m->dof_damping[i] *= (fsReal)(1 + v);
  for (int t = 0; t < m->ntendon; t++) {
    m->tendon_stiffness[t] *= (fsReal)(1 + v);
    m->tendon_damping[t] *= (fsReal)(1 + v);
  }
  m->density *= (fsReal)(1 + v); // the medium of fluid forces
  m->viscosity *= (fsReal)(1 + v);
  *x = v;
  return 0;
}

enum { RUN_FORWARD = -1, RUN_STEP = -2 };

typedef struct Call {
  const fsModel* m;
  fsData d;
  int what; // fsStage, RUN_FORWARD or RUN_STEP
  int nstep;
  char* poison; // RUN_STEP: filled with NaN before every step (bytes poison_bytes), or NULL
  int poison_bytes;
} Call;

static void call_world(void* arg) {
  Call* c = arg;
  if (c->what == RUN_FORWARD) {
    fs_forward(c->m, &c->d); // mj_forward: with the sensors (the step runs them once a step)
    fs_sensor(c->m, &c->d);
  } else if (c->what == RUN_STEP) {
    for (int s = 0; s < c->nstep; s++) {
      if (c->poison) { // on lane 0, then every lane waits before the step reads it
        FS_LANE0 memset(c->poison, 0xff, (size_t)c->poison_bytes);
        FS_SYNC();
      }
      fs_step(c->m, &c->d);
    }
  } else {
    fs_stage_run(c->m, &c->d, c->what);
  }
}

// Every world, one after another (on emulated lanes in FS_EMULATE_LANES builds), with
// plan's fields in chip when plan is given.
static void run_worlds(const fsModel* m, fsWorlds* b, int what, int nstep, const fsChipPlan* plan,
                       char* chip, int poison) {
  for (int w = 0; w < b->nworld; w++) {
    Call c = {m, fs_worlds_view(m, b, w), what, nstep, NULL, 0};
    if (plan && plan->bytes) {
      fs_data_on_chip(m, &b->base, b->world_bytes, w, plan, chip, &c.d);
      c.poison = poison ? chip : NULL;
      c.poison_bytes = plan->bytes;
    }
#ifdef FS_EMULATE_LANES
    fs_lanes_run(call_world, &c);
#else
    call_world(&c);
#endif
  }
}

void fs_serial_stage(const fsModel* m, fsWorlds* b, int stage) {
  run_worlds(m, b, stage, 0, NULL, NULL, 0);
}

void fs_serial_forward(const fsModel* m, fsWorlds* b) {
  run_worlds(m, b, RUN_FORWARD, 0, NULL, NULL, 0);
}

void fs_serial_step(const fsModel* m, fsWorlds* b, int nstep) {
  run_worlds(m, b, RUN_STEP, nstep, NULL, NULL, 0);
}

void fs_serial_step_on_chip(const fsModel* m, fsWorlds* b, int nstep, const fsChipPlan* plan,
                            char* chip, int poison) {
  run_worlds(m, b, RUN_STEP, nstep, plan, chip, poison);
}

const char* fs_serial_real_name(void) {
#ifdef FS_EMULATE_LANES
  static char name[64];
  snprintf(name, sizeof name, "%s, %d emulated lanes", FS_REAL_NAME, fs_lane_count());
  return name;
#else
  return FS_REAL_NAME;
#endif
}
