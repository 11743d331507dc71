// What a replay records (common/replay/record.h).
#include "common/replay/record.h"

#include "common/inputs/legs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* const kNames[FS_NSERIES] = {"angles",   "targets",     "forces", "sites",
                                               "thorax",   "orientation", "qpos",   "qvel",
                                               "adhesion", "iterations",  "legs",   "sensors"};
#define FS_RECORD_CHOICES                                                                          \
  "angles, targets, forces, sites, thorax, orientation, qpos, qvel, adhesion, iterations, legs, "  \
  "sensors (or all, none)"

int fs_record_parse(const char* list, unsigned* mask, fsError* err) {
  *mask = 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  char* save = NULL;
  int any = 0;
  for (char* tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    any = 1;
    if (!strcmp(tok, "all")) {
      *mask |= FS_RECORD_ALL;
      continue;
    }
    if (!strcmp(tok, "none")) continue;
    int k = 0;
    while (k < FS_NSERIES && strcmp(tok, kNames[k])) k++;
    if (k == FS_NSERIES)
      return fs_fail(err, "--record %s: unknown series '%s'; fix: a comma-separated list of %s",
                     list, tok, FS_RECORD_CHOICES);
    *mask |= 1u << k;
  }
  if (!any)
    return fs_fail(err, "--record is empty; fix: a comma-separated list of %s", FS_RECORD_CHOICES);
  return 0;
}

void fs_record_names(unsigned mask, char* out, size_t n) {
  size_t used = 0;
  out[0] = 0;
  for (int k = 0; k < FS_NSERIES; k++)
    if (mask & (1u << k) && used < n)
      used += (size_t)snprintf(out + used, n - used, "%s%s", used ? "," : "", kNames[k]);
  if (!used) snprintf(out, n, "none");
}

// The body of the model's first free joint, else body 1 (0 in a model of one body).
static int root_body(const mjModel* m) {
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == mjJNT_FREE) return m->jnt_bodyid[j];
  return m->nbody > 1 ? 1 : 0;
}

// The legs (those of the actuated joints) and each geom's leg (by its body's name).
static int legs_of(const mjModel* m, const fsReplayBinding* b, fsRecordLayout* l, fsError* err) {
  char list[256];
  fs_leg_list(b, list, sizeof list);
  char* save = NULL;
  for (char* t = strtok_r(list, " ", &save); t && l->nleg < FS_RECORD_MAX_LEGS;
       t = strtok_r(NULL, " ", &save))
    snprintf(l->leg_names[l->nleg++], sizeof l->leg_names[0], "%s", t);
  l->geom_leg = fs_calloc(err, "the record layout", (size_t)m->ngeom + 1, sizeof(int));
  if (!l->geom_leg) return -1;
  for (int g = 0; g < m->ngeom; g++) {
    const char* body = mj_id2name(m, mjOBJ_BODY, m->geom_bodyid[g]);
    char leg[32];
    fs_leg_of(body ? body : "", leg, sizeof leg);
    l->geom_leg[g] = -1;
    for (int k = 0; k < l->nleg; k++)
      if (leg[0] && !strcmp(leg, l->leg_names[k])) l->geom_leg[g] = k;
  }
  return 0;
}

int fs_record_layout_build(const mjModel* m, const fsReplayBinding* b, unsigned mask,
                           fsRecordLayout* l, fsError* err) {
  memset(l, 0, sizeof *l);
  l->mask = mask & FS_RECORD_ALL;
  l->points_are_sites = m->nsite > 0;
  l->npoint = l->points_are_sites ? (int)m->nsite : (int)m->nbody - 1;
  l->root_body = root_body(m);
  if (legs_of(m, b, l, err)) return -1;
  const int size[FS_NSERIES] = {
      b->njoint,    b->nact, b->nact,     3 * l->npoint,      3, 4, (int)m->nq, (int)m->nv,
      b->nadhesion, 2,       3 * l->nleg, (int)m->nsensordata};
  for (int k = 0; k < FS_NSERIES; k++) {
    l->col0[k] = l->ncol_total;
    l->ncol[k] = l->mask & (1u << k) ? size[k] : 0;
    l->ncol_total += l->ncol[k];
  }
  size_t n = l->ncol_total > 0 ? (size_t)l->ncol_total : 1;
  l->src = fs_calloc(err, "the record layout", n, sizeof(const char*));
  l->index = fs_calloc(err, "the record layout", n, sizeof(int));
  if (!l->src || !l->index) {
    fs_record_layout_free(l);
    return -1;
  }
  for (int k = 0; k < FS_NSERIES; k++) {
    const char** src = l->src + l->col0[k];
    int* idx = l->index + l->col0[k];
    for (int c = 0; c < l->ncol[k]; c++) {
      switch ((fsSeriesId)k) {
      case FS_SERIES_QPOS_JOINT:
        src[c] = "qpos", idx[c] = b->joint_qposadr[c];
        break;
      case FS_SERIES_TARGET:
        src[c] = "ctrl", idx[c] = b->actuator[c];
        break;
      case FS_SERIES_ACTUATOR_FORCE:
        src[c] = "actuator_force", idx[c] = b->actuator[c];
        break;
      case FS_SERIES_SITE_POS:
        src[c] = l->points_are_sites ? "site_xpos" : "xpos";
        idx[c] = l->points_are_sites ? c : c + 3; // bodies from 1
        break;
      case FS_SERIES_THORAX_POS:
        src[c] = "xpos", idx[c] = 3 * l->root_body + c;
        break;
      case FS_SERIES_THORAX_QUAT:
        src[c] = "xquat", idx[c] = 4 * l->root_body + c;
        break;
      case FS_SERIES_QPOS:
        src[c] = "qpos", idx[c] = c;
        break;
      case FS_SERIES_QVEL:
        src[c] = "qvel", idx[c] = c;
        break;
      case FS_SERIES_ADHESION:
        src[c] = "actuator_force", idx[c] = b->adhesion[c];
        break;
      case FS_SERIES_ITERATIONS:
        src[c] = "solver_iterations", idx[c] = c;
        break;
      case FS_SERIES_LEG_FORCE:
        src[c] = "group_contact_force", idx[c] = c;
        break;
      default: // FS_SERIES_SENSORS
        src[c] = "sensordata", idx[c] = c;
        break;
      }
    }
  }
  return 0;
}

void fs_record_layout_free(fsRecordLayout* l) {
  free(l->src);
  free(l->index);
  free(l->geom_leg);
  l->src = NULL;
  l->index = l->geom_leg = NULL;
}

fsSeriesSpec fs_record_series_spec(const fsRecordLayout* l, int k) {
  switch ((fsSeriesId)k) {
  case FS_SERIES_QPOS_JOINT:
    return (fsSeriesSpec){"qpos_joint", l->ncol[k], "rad",
                          "hinge (rad) and slide (length units) joint positions at the end of "
                          "each step",
                          "joint_names"};
  case FS_SERIES_TARGET:
    return (fsSeriesSpec){"target", l->ncol[k], "rad",
                          "target position applied by each position actuator during each step",
                          "actuator_names"};
  case FS_SERIES_ACTUATOR_FORCE:
    return (fsSeriesSpec){"actuator_force", l->ncol[k], "model force units (hinges: torque)",
                          "force of each position actuator (columns as /target) during each "
                          "step: MuJoCo's actuator_force, FlyGym's get_actuator_forces",
                          "actuator_names"};
  case FS_SERIES_SITE_POS:
    return (fsSeriesSpec){"site_pos", l->ncol[k], "model length units (NeuroMechFly: mm)",
                          l->points_are_sites
                              ? "world position (x y z per point) of each site of the model, "
                                "as mj_step computed it at the start of each step (site_xpos; "
                                "FlyGym's get_site_positions)"
                              : "world position (x y z per point) of each body origin but the "
                                "world's (the model has no site), at the start of each step",
                          "point_names"};
  case FS_SERIES_THORAX_POS:
    return (fsSeriesSpec){"thorax_pos", l->ncol[k], "model length units (NeuroMechFly: mm)",
                          "world position (x y z) of the root body's origin (the free joint's "
                          "body, else body 1: a tethered fly's mocap thorax) at the start of "
                          "each step",
                          NULL};
  case FS_SERIES_THORAX_QUAT:
    return (fsSeriesSpec){"thorax_quat", l->ncol[k], "unit quaternion (w x y z)",
                          "world orientation of the root body at the start of each step (xquat)",
                          NULL};
  case FS_SERIES_QPOS:
    return (fsSeriesSpec){"qpos", l->ncol[k], "model units (free joint: position, quaternion)",
                          "the whole position state at the end of each step", NULL};
  case FS_SERIES_QVEL:
    return (fsSeriesSpec){"qvel", l->ncol[k], "model units per second",
                          "the whole velocity state at the end of each step", NULL};
  case FS_SERIES_LEG_FORCE:
    return (fsSeriesSpec){"leg_contact_force", l->ncol[k], "model force units",
                          "each leg's contact force in the world frame (x y z per leg, legs: "
                          "leg_names), on the leg: its contacts' constraint forces in the step "
                          "(MuJoCo's mj_contactForce), summed",
                          "leg_names"};
  case FS_SERIES_SENSORS:
    return (fsSeriesSpec){"sensordata", l->ncol[k], "each sensor's (model units)",
                          "the model's sensors as mj_step computed them in each step (MuJoCo's "
                          "sensordata, from the state at the step's start; columns: "
                          "sensor_names)",
                          "sensor_names"};
  case FS_SERIES_ITERATIONS:
    return (fsSeriesSpec){"solver_iterations", l->ncol[k], "iterations",
                          "the step's constraint solver iterations summed over its islands: "
                          "column 0 Newton, column 1 noslip",
                          NULL};
  default:
    return (fsSeriesSpec){"adhesion_force", l->ncol[k], "model force units",
                          "force of each adhesion actuator during each step (columns: "
                          "adhesion_names)",
                          "adhesion_names"};
  }
}

const char* fs_record_point_name(const mjModel* m, const fsRecordLayout* l, int p) {
  const char* name =
      l->points_are_sites ? mj_id2name(m, mjOBJ_SITE, p) : mj_id2name(m, mjOBJ_BODY, p + 1);
  return name ? name : "";
}
