// A world's variation applied (generate/vary.h).
#include "generate/vary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "generate/sample.h"

int fs_gen_clips_load(const fsGenSpec* s, double timestep, fsGenClips* c, fsError* err) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < s->ntargets; i++) {
    fsTargets* t = &c->clip[i];
    c->n = i + 1;
    if (fs_targets_load(s->targets[i], t, err) || fs_targets_resample(t, timestep, err)) return -1;
    const fsTargets* t0 = &c->clip[0];
    if (i > 0 && t->ndof != t0->ndof)
      return fs_fail(err, "%s: %d DoFs, but %s has %d; fix: clips of the same DoFs", t->path,
                     t->ndof, t0->path, t0->ndof);
    for (int a = 0; i > 0 && a < t->ndof; a++)
      if (strcmp(t->names[a], t0->names[a]))
        return fs_fail(err,
                       "%s: DoF %d is '%s', but '%s' in %s; fix: clips with the same DoFs in "
                       "the same order",
                       t->path, a, t->names[a], t0->names[a], t0->path);
    c->mean[i] = fs_calloc(err, "clip means", (size_t)t->ndof, sizeof(double));
    if (!c->mean[i]) return -1;
    for (int r = 0; r < t->nstep; r++)
      for (int a = 0; a < t->ndof; a++) c->mean[i][a] += t->value[(size_t)r * t->ndof + a];
    for (int a = 0; a < t->ndof; a++) c->mean[i][a] /= t->nstep;
  }
  return 0;
}

void fs_gen_clips_free(fsGenClips* c) {
  for (int i = 0; i < c->n; i++) {
    fs_targets_free(&c->clip[i]);
    free(c->mean[i]);
  }
  memset(c, 0, sizeof *c);
}

int fs_gen_check_window(const fsGenSpec* s, const fsGenClips* c, int w, const double* p, int S,
                        fsError* err) {
  const fsTargets* t = &c->clip[(int)p[FS_AXIS_CLIP_FILE]];
  double r0 = p[FS_AXIS_CLIP_START], tau = p[FS_AXIS_CLIP_TIME_SCALE];
  double last = r0 + (S - 1) * tau;
  if (last <= t->nstep - 1) return 0;
  return fs_fail(err,
                 "%s: world %d: clip %s from row %.0f at %.4g rows a step needs row %.1f, past its "
                 "last row %d; fix: lower vary.clip.start_row's or time_scale's upper bound "
                 "(start_row + (steps - 1) x time_scale <= %d)",
                 s->path, w, t->path, r0, tau, last, t->nstep - 1, t->nstep - 1);
}

int fs_gen_world_targets(const fsGenSpec* s, const fsGenClips* c, int w, const double* p, int S,
                         double* out, fsError* err) {
  if (fs_gen_check_window(s, c, w, p, S, err)) return -1;
  int f = (int)p[FS_AXIS_CLIP_FILE];
  const fsTargets* t = &c->clip[f];
  const int A = t->ndof;
  double r0 = p[FS_AXIS_CLIP_START], tau = p[FS_AXIS_CLIP_TIME_SCALE];
  const double amp = p[FS_AXIS_CLIP_AMPLITUDE], noise = p[FS_AXIS_CLIP_NOISE];
  const double* mean = c->mean[f];
  for (int k = 0; k < S; k++) {
    double x = r0 + k * tau;
    int i = (int)x;
    double u = x - i;
    const double* lo = t->value + (size_t)i * A;
    const double* hi = i + 1 < t->nstep ? lo + A : lo;
    for (int a = 0; a < A; a++) {
      double v = lo[a] + u * (hi[a] - lo[a]);
      v = mean[a] + amp * (v - mean[a]);
      if (noise > 0)
        v += noise * fs_gen_normal(s->seed, (uint64_t)w, FS_STREAM_TARGET_NOISE,
                                   (uint64_t)k * (uint64_t)A + (uint64_t)a);
      out[(size_t)k * A + a] = v;
    }
  }
  return 0;
}

int fs_gen_varies_model(const fsGenSpec* s) {
  for (int a = 0; a < FS_NAXIS; a++) {
    if (!fs_gen_axis_is_model(a) || !s->axis[a].given) continue;
    const fsDist* d = &s->axis[a];
    int identity =
        d->kind == FS_DIST_FIXED && a != FS_AXIS_KP && a != FS_AXIS_GRAVITY_Z && d->a == 1.0;
    if (!identity) return 1;
  }
  return 0;
}

mjModel* fs_gen_world_model(const mjModel* src, const fsReplayBinding* b, const double* p,
                            fsError* err) {
  mjModel* m = mj_copyModel(NULL, src);
  if (!m) {
    fs_fail_oom(err, "a world's model", (double)src->nbuffer);
    return NULL;
  }
  if (!isnan(p[FS_AXIS_KP]))
    for (int a = 0; a < b->nact; a++) {
      int u = b->actuator[a];
      m->actuator_gainprm[u * mjNGAIN] = p[FS_AXIS_KP];
      m->actuator_biasprm[u * mjNBIAS + 1] = -p[FS_AXIS_KP];
    }
  for (int i = 0; i < m->nv; i++) m->dof_damping[i] *= p[FS_AXIS_DAMPING_SCALE];
  for (int j = 0; j < m->njnt; j++) m->jnt_stiffness[j] *= p[FS_AXIS_STIFFNESS_SCALE];
  for (int g = 0; g < m->ngeom; g++) m->geom_friction[3 * g] *= p[FS_AXIS_FRICTION_SCALE];
  for (int k = 0; k < m->npair; k++) { // the two sliding directions
    m->pair_friction[5 * k] *= p[FS_AXIS_FRICTION_SCALE];
    m->pair_friction[5 * k + 1] *= p[FS_AXIS_FRICTION_SCALE];
  }
  for (int i = 1; i < m->nbody; i++) {
    m->body_mass[i] *= p[FS_AXIS_MASS_SCALE];
    for (int k = 0; k < 3; k++) m->body_inertia[3 * i + k] *= p[FS_AXIS_MASS_SCALE];
  }
  for (int a = 0; a < b->nadhesion; a++)
    m->actuator_gainprm[b->adhesion[a] * mjNGAIN] *= p[FS_AXIS_ADHESION_SCALE];
  if (!isnan(p[FS_AXIS_GRAVITY_Z])) m->opt.gravity[2] = p[FS_AXIS_GRAVITY_Z];
  mjData* d = mj_makeData(m);
  if (!d) {
    mj_deleteModel(m);
    fs_fail_oom(err, "a world's data", (double)src->narena);
    return NULL;
  }
  mj_setConst(m, d); // masses changed: subtree masses, armature-dependent constants
  mj_deleteData(d);
  return m;
}

void fs_gen_init_world(void* arg, int w, const mjModel* m, mjData* d) {
  const fsGenInit* in = arg;
  const double* p = in->params + (size_t)w * FS_NAXIS;
  const uint64_t seed = in->spec->seed, gw = (uint64_t)(in->world0 + w);
  double pose = p[FS_AXIS_POSE_NOISE], vel = p[FS_AXIS_VELOCITY_NOISE];
  for (int j = 0; j < m->njnt && pose > 0; j++)
    if (m->jnt_type[j] == mjJNT_HINGE) {
      int q = m->jnt_qposadr[j];
      d->qpos[q] += pose * fs_gen_normal(seed, gw, FS_STREAM_POSE_NOISE, (uint64_t)q);
    }
  for (int i = 0; i < m->nv && vel > 0; i++)
    d->qvel[i] += vel * fs_gen_normal(seed, gw, FS_STREAM_VELOCITY_NOISE, (uint64_t)i);
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == mjJNT_FREE) {
      d->qpos[m->jnt_qposadr[j] + 2] += p[FS_AXIS_SPAWN_HEIGHT];
      break;
    }
}
