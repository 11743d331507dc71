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

// The model arrays the axes vary, each computed for a world from the base model's.
enum {
  V_GAIN,
  V_BIAS,
  V_DAMPING,
  V_STIFFNESS,
  V_GEOM_FRICTION,
  V_PAIR_FRICTION,
  V_MASS,
  V_INERTIA,
  V_GRAVITY,
  NV_FIELD
};
static const char* const kField[NV_FIELD] = {
    "actuator_gainprm", "actuator_biasprm", "dof_damping",  "jnt_stiffness", "geom_friction",
    "pair_friction",    "body_mass",        "body_inertia", "opt.gravity"};

static int field_size(const mjModel* m, int f) {
  const int size[NV_FIELD] = {(int)m->nu * mjNGAIN, (int)m->nu * mjNBIAS, (int)m->nv,
                              (int)m->njnt,         (int)m->ngeom * 3,    (int)m->npair * 5,
                              (int)m->nbody,        (int)m->nbody * 3,    3};
  return size[f];
}

static const mjtNum* field_base(const mjModel* m, int f) {
  const mjtNum* base[NV_FIELD] = {m->actuator_gainprm, m->actuator_biasprm, m->dof_damping,
                                  m->jnt_stiffness,    m->geom_friction,    m->pair_friction,
                                  m->body_mass,        m->body_inertia,     m->opt.gravity};
  return base[f];
}

// Field f of a world with axes p: kp of the bound position actuators, joint damping and
// stiffness, sliding friction (geoms and contact pairs), body masses and inertias,
// adhesion gain, gravity.
static void world_field(const mjModel* m, const fsReplayBinding* b, const double* p, int f,
                        double* v) {
  memcpy(v, field_base(m, f), sizeof(double) * (size_t)field_size(m, f));
  switch (f) {
  case V_GAIN:
    for (int a = 0; a < b->nact && !isnan(p[FS_AXIS_KP]); a++)
      v[b->actuator[a] * mjNGAIN] = p[FS_AXIS_KP];
    for (int a = 0; a < b->nadhesion; a++) v[b->adhesion[a] * mjNGAIN] *= p[FS_AXIS_ADHESION_SCALE];
    break;
  case V_BIAS:
    for (int a = 0; a < b->nact && !isnan(p[FS_AXIS_KP]); a++)
      v[b->actuator[a] * mjNBIAS + 1] = -p[FS_AXIS_KP];
    break;
  case V_DAMPING:
    for (int i = 0; i < m->nv; i++) v[i] *= p[FS_AXIS_DAMPING_SCALE];
    break;
  case V_STIFFNESS:
    for (int j = 0; j < m->njnt; j++) v[j] *= p[FS_AXIS_STIFFNESS_SCALE];
    break;
  case V_GEOM_FRICTION:
    for (int g = 0; g < m->ngeom; g++) v[3 * g] *= p[FS_AXIS_FRICTION_SCALE];
    break;
  case V_PAIR_FRICTION: // the two sliding directions
    for (int k = 0; k < m->npair; k++) {
      v[5 * k] *= p[FS_AXIS_FRICTION_SCALE];
      v[5 * k + 1] *= p[FS_AXIS_FRICTION_SCALE];
    }
    break;
  case V_MASS:
    for (int i = 1; i < m->nbody; i++) v[i] *= p[FS_AXIS_MASS_SCALE];
    break;
  case V_INERTIA:
    for (int i = 3; i < 3 * m->nbody; i++) v[i] *= p[FS_AXIS_MASS_SCALE];
    break;
  default: // V_GRAVITY
    if (!isnan(p[FS_AXIS_GRAVITY_Z])) v[2] = p[FS_AXIS_GRAVITY_Z];
    break;
  }
}

int fs_gen_setup(void* arg, fsBatch batch, fsError* err) {
  const fsGenInit* in = arg;
  const mjModel* m = in->m;
  int nw = in->nworld, rc = 0;
  for (int f = 0; f < NV_FIELD && !rc && fs_gen_varies_model(in->spec); f++) {
    int size = field_size(m, f);
    if (!size) continue;
    double* v = fs_calloc(err, "the worlds' parameters", (size_t)nw * size, sizeof(double));
    if (!v) return -1;
    for (int w = 0; w < nw; w++)
      world_field(m, in->bind, in->params + (size_t)w * FS_NAXIS, f, v + (size_t)w * size);
    rc = fs_batch_set_param(batch, kField[f], NULL, nw, v, err) ? -1 : 0;
    free(v);
  }
  return rc;
}

int fs_gen_init_worlds(void* arg, fsBatch batch, fsError* err) {
  const fsGenInit* in = arg;
  const mjModel* m = in->m;
  const int nq = (int)m->nq, nv = (int)m->nv, nw = in->nworld, key = in->bind->key;
  fsView vq;
  if (fs_batch_view(batch, "qpos", &vq, err)) return -1;
  int f32 = vq.dtype == FS_DTYPE_F32;
  size_t es = f32 ? sizeof(float) : sizeof(double);
  double* q = fs_calloc(err, "the worlds' start", (size_t)nq + nv, sizeof(double));
  char* out_q = fs_calloc(err, "the worlds' start", (size_t)nw * nq, es);
  char* out_v = fs_calloc(err, "the worlds' start", (size_t)nw * nv, es);
  int rc = q && out_q && out_v ? 0 : -1;
  for (int w = 0; w < nw && !rc; w++) {
    // the reset state (mj_resetDataKeyframe's, in double), then the world's own start
    memcpy(q, key >= 0 ? m->key_qpos + (size_t)key * nq : m->qpos0, sizeof(double) * nq);
    if (key >= 0)
      memcpy(q + nq, m->key_qvel + (size_t)key * nv, sizeof(double) * nv);
    else
      memset(q + nq, 0, sizeof(double) * nv);
    fs_gen_start_world(in, w, m, q, q + nq);
    for (int i = 0; i < nq + nv; i++) {
      char* dst =
          i < nq ? out_q + ((size_t)w * nq + i) * es : out_v + ((size_t)w * nv + i - nq) * es;
      if (f32)
        *(float*)dst = (float)q[i];
      else
        *(double*)dst = q[i];
    }
  }
  if (!rc)
    rc = fs_batch_write(batch, "qpos", out_q, (size_t)nw * nq * es, err) ||
                 fs_batch_write(batch, "qvel", out_v, (size_t)nw * nv * es, err)
             ? -1
             : 0;
  free(q);
  free(out_q);
  free(out_v);
  return rc;
}

void fs_gen_start_world(const fsGenInit* in, int w, const mjModel* m, double* qpos, double* qvel) {
  const double* p = in->params + (size_t)w * FS_NAXIS;
  const uint64_t seed = in->spec->seed, gw = (uint64_t)(in->world0 + w);
  double pose = p[FS_AXIS_POSE_NOISE], vel = p[FS_AXIS_VELOCITY_NOISE];
  for (int j = 0; j < m->njnt && pose > 0; j++)
    if (m->jnt_type[j] == mjJNT_HINGE) {
      int q = m->jnt_qposadr[j];
      qpos[q] += pose * fs_gen_normal(seed, gw, FS_STREAM_POSE_NOISE, (uint64_t)q);
    }
  for (int i = 0; i < m->nv && vel > 0; i++)
    qvel[i] += vel * fs_gen_normal(seed, gw, FS_STREAM_VELOCITY_NOISE, (uint64_t)i);
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == mjJNT_FREE) {
      qpos[m->jnt_qposadr[j] + 2] += p[FS_AXIS_SPAWN_HEIGHT];
      break;
    }
}
