// The sine control (common/inputs/controls.h).
#include "common/inputs/controls.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/inputs/model.h"

// Actuator a's control range: its ctrlrange, else the range of the limited joint a position
// servo drives, else -1 to 1.
static void control_range(const mjModel* m, int a, double range[2]) {
  range[0] = -1;
  range[1] = 1;
  if (m->actuator_ctrllimited[a]) {
    range[0] = m->actuator_ctrlrange[2 * a];
    range[1] = m->actuator_ctrlrange[2 * a + 1];
    return;
  }
  int j = m->actuator_trnid[2 * a];
  if (fs_actuator_is_position(m, a) && m->jnt_limited[j]) {
    range[0] = m->jnt_range[2 * j];
    range[1] = m->jnt_range[2 * j + 1];
  }
}

int fs_targets_sine(const mjModel* m, fsTargets* t, fsError* err) {
  memset(t, 0, sizeof *t);
  double dt = m->opt.timestep;
  long rows = (long)ceil(FS_SINE_SECONDS / dt);
  if (rows < FS_SINE_MIN_ROWS) rows = FS_SINE_MIN_ROWS;
  if (rows > FS_SINE_MAX_ROWS) rows = FS_SINE_MAX_ROWS;
  t->nstep = (int)rows;
  t->ndof = (int)m->nu;
  t->timestep = t->source_timestep = dt;
  t->path = fs_strdup(err, FS_TARGETS_SINE);
  t->names = fs_calloc(err, "control names", (unsigned)m->nu, sizeof(char*));
  t->value = fs_calloc(err, "the sine control", (unsigned long long)rows * (unsigned)m->nu,
                       sizeof(double));
  if (!t->path || !t->names || !t->value) goto fail;
  for (int a = 0; a < m->nu; a++) {
    const char* name = mj_id2name(m, mjOBJ_ACTUATOR, a);
    char fallback[32];
    snprintf(fallback, sizeof fallback, "actuator %d", a);
    if (!(t->names[a] = fs_strdup(err, name && name[0] ? name : fallback))) goto fail;
    double range[2];
    control_range(m, a, range);
    double mid = 0.5 * (range[0] + range[1]), half = 0.4 * (range[1] - range[0]);
    double period = 0.5 + 0.25 * (a % 5), phase = 2.399963229728653 * a; // the golden angle
    for (long r = 0; r < rows; r++)
      t->value[r * m->nu + a] = mid + half * sin(2 * M_PI * (double)r * dt / period + phase);
  }
  return 0;

fail:
  fs_targets_free(t);
  return -1;
}
