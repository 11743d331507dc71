#include "common/parity/harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/random.h"

static fshReportFn g_report;
static void* g_report_arg;

void fsh_set_report(fshReportFn fn, void* arg) {
  g_report = fn;
  g_report_arg = arg;
}

void fsh_report(const fshFieldReport* r) {
  if (g_report) {
    g_report(g_report_arg, r);
    return;
  }
  char bound[48] = "";
  if (r->bound > 0) snprintf(bound, sizeof bound, " (bound %.2e)", r->bound);
  printf("  %-22s %-18s %-8.2e %s %.10g vs %.10g%s%s\n", r->label, r->field, r->err, r->where,
         r->ours, r->ref, bound, r->bad ? "  <-- FAIL" : "");
}

void fsh_note(const char* fmt, ...) {
  if (g_report) return;
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
}

double fsh_sym_uniform(void) {
  return 2 * fs_random_uniform() - 1;
}

void fsh_rotate_randomly(mjtNum q[4], double amp) {
  mjtNum axis[3] = {fsh_sym_uniform(), fsh_sym_uniform(), fsh_sym_uniform()}, rot[4];
  mju_normalize3(axis);
  mju_axisAngle2Quat(rot, axis, amp * fsh_sym_uniform());
  mju_mulQuat(q, q, rot);
  mju_normalize4(q);
}

static void add_noise(const mjModel* mj, mjData* d, const fshNoise* nz) {
  for (int j = 0; j < mj->njnt; j++) {
    mjtNum* q = d->qpos + mj->jnt_qposadr[j];
    switch (mj->jnt_type[j]) {
    case mjJNT_FREE:
      for (int k = 0; k < 3; k++) q[k] += 0.1 * nz->qnoise * fsh_sym_uniform();
      fsh_rotate_randomly(q + 3, nz->qnoise);
      break;
    case mjJNT_BALL:
      fsh_rotate_randomly(q, nz->qnoise);
      break;
    case mjJNT_SLIDE:
      q[0] += 0.1 * nz->qnoise * fsh_sym_uniform();
      break;
    default:
      q[0] += nz->qnoise * fsh_sym_uniform();
    }
  }
  for (int i = 0; i < mj->nv; i++) d->qvel[i] = nz->vnoise * fsh_sym_uniform();
  for (int i = 0; i < mj->nu; i++) {
    const mjtNum* r = mj->actuator_ctrlrange + 2 * i;
    d->ctrl[i] = mj->actuator_ctrllimited[i]
                     ? r[0] + (r[1] - r[0]) * (1.6 * fs_random_uniform() - 0.3)
                     : nz->cnoise * fsh_sym_uniform();
  }
  // mocap bodies moved by +-0.02*qnoise and turned by up to qnoise rad; each quaternion
  // then scaled off the unit sphere (MuJoCo's kinematics normalize a copy of it)
  for (int k = 0; k < mj->nmocap; k++) {
    for (int c = 0; c < 3; c++) d->mocap_pos[3 * k + c] += 0.02 * nz->qnoise * fsh_sym_uniform();
    fsh_rotate_randomly(d->mocap_quat + 4 * k, nz->qnoise);
    double scale = 1 + 0.5 * fsh_sym_uniform();
    for (int c = 0; c < 4; c++) d->mocap_quat[4 * k + c] *= scale;
  }
}

// mj_makeData sizes the arena from the model's narena: raised on mj for the call and
// restored (the checks are single-threaded). A copy of the model instead, meshes and all,
// for every data, was most of the solver checks' time under the sanitizers.
mjData* fsh_make_data(const mjModel* mj) {
  mjModel* m = (mjModel*)mj;
  mjtSize narena = m->narena;
  m->narena = narena * FSH_ARENA_SCALE;
  mjData* d = mj_makeData(m);
  m->narena = narena;
  return d;
}

mjData* fsh_copy_data(const mjModel* mj, const mjData* src) {
  mjData* d = fsh_make_data(mj);
  return d ? mj_copyData(d, mj, src) : NULL;
}

mjData* fsh_keyframe_world(const mjModel* mj) {
  mjData* d = fsh_make_data(mj);
  if (mj->nkey)
    mj_resetDataKeyframe(mj, d, 0);
  else
    mj_resetData(mj, d);
  return d;
}

mjData** fsh_make_worlds(const mjModel* mj, int nworld, uint64_t seed, const fshNoise* noise) {
  fs_random_seed(seed);
  mjData** d = calloc((size_t)nworld, sizeof *d);
  for (int w = 0; w < nworld; w++) {
    d[w] = fsh_keyframe_world(mj);
    add_noise(mj, d[w], noise);
    for (int s = 0; s < noise->nsettle; s++) mj_step(mj, d[w]);
    mj_forward(mj, d[w]);
  }
  return d;
}

int fsh_load_worlds(const fsModel* m, fsWorlds* b, const mjModel* mj, mjData* const* ref,
                    int stage) {
  fsError err;
  for (int w = 0; w < b->nworld; w++)
    if (fs_worlds_from_mj(m, b, w, mj, ref[w], stage, &err)) {
      fprintf(stderr, "world %d: %s\n", w, err.msg);
      return -1;
    }
  return 0;
}

int fsh_run(const fshRunner* r, fsWorlds* b, int what, int n) {
  fsError err;
  if (r->run(r->self, b, what, n, &err)) {
    fprintf(stderr, "%s: %s\n", r->name, err.msg);
    return -1;
  }
  return 0;
}

void fsh_free_worlds(mjData** d, int nworld) {
  for (int w = 0; w < nworld; w++) mj_deleteData(d[w]);
  free(d);
}

const fsFieldInfo* fsh_field(const char* name) {
  for (int f = 0; f < fs_data_nfield; f++)
    if (!strcmp(fs_data_fields[f].name, name)) return &fs_data_fields[f];
  return NULL;
}

// MuJoCo's values of field f in world data md, in the stepper's layout (n values);
// returns 0, or -1 if MuJoCo's moments have a non-zero outside the model's sparsity.
static int ref_values(const fsModel* m, const fsFieldInfo* f, const mjData* md, double* out,
                      size_t n) {
  if (!strcmp(f->name, "time")) {
    out[0] = md->time;
    return 0;
  }
  if (!strcmp(f->name, "actuator_moment")) return fs_moment_values(m, md, out) ? -1 : 0;
  const mjtNum* src = fs_mj_field(md, f->name);
  if (!src) return -1;
  for (size_t k = 0; k < n; k++) out[k] = src[k];
  return 0;
}

fshWorst fsh_compare_field(const fsModel* m, const fsWorlds* b, const fsFieldInfo* f,
                           mjData* const* ref, const fshTol* tol) {
  fshWorst worst = {0, -1, -1, 0, 0};
  size_t n = (size_t)fs_field_rows(m, f) * (size_t)f->cols;
  double* r = calloc(n ? n : 1, sizeof(double));
  for (int w = 0; w < b->nworld; w++) {
    if (tol->skip && tol->skip[w]) continue;
    fsData d = fs_worlds_view(m, b, w);
    void* ours = *fs_field_ptr(&d, f);
    if (ref_values(m, f, ref[w], r, n)) {
      worst = (fshWorst){INFINITY, w, -1, NAN, NAN};
      break;
    }
    double scale = 0;
    for (size_t k = 0; k < n; k++) scale = fmax(scale, fabs(r[k]));
    for (size_t k = 0; k < n; k++) {
      double o = f->type == FS_TYPE_double ? ((double*)ours)[k] : (double)((fsReal*)ours)[k];
      double den = fmax(fabs(r[k]), tol->floor * scale);
      double e = fabs(o - r[k]);
      if (isnan(o) && isnan(r[k]))
        e = 0; // both NaN: a world MuJoCo lets go bad without autoreset
      else
        e = isnan(o) || isnan(r[k]) ? INFINITY : (e == 0 ? 0 : (den > 0 ? e / den : INFINITY));
      if (e > worst.err || worst.world < 0) worst = (fshWorst){e, w, (int)k, o, r[k]};
    }
  }
  free(r);
  return worst;
}

static int report(const char* label, const fsModel* m, const fsWorlds* b, const fsFieldInfo* f,
                  mjData* const* ref, const fshTol* tol, double* worst_out) {
  if (fs_field_rows(m, f) * f->cols == 0) return 0;
  fshWorst w = fsh_compare_field(m, b, f, ref, tol);
  int bad = !(w.err <= tol->rel);
  fshFieldReport r = {label, f->name, w.err, 0, w.world, w.index, "", w.ours, w.ref, bad};
  snprintf(r.where, sizeof r.where, "world %d [%d]", w.world, w.index);
  fsh_report(&r);
  if (worst_out && w.err > *worst_out) *worst_out = w.err;
  return bad;
}

int fsh_compare_stage(const char* label, const fsModel* m, const fsWorlds* b, int stage,
                      mjData* const* ref, const fshTol* tol, double* worst_out) {
  int nbad = 0;
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (fi->stage == stage && fi->kind == FS_KIND_MJ)
      nbad += report(label, m, b, fi, ref, tol, worst_out);
  }
  return nbad;
}

int fsh_compare_fields(const char* label, const fsModel* m, const fsWorlds* b,
                       const char* const* names, mjData* const* ref, const fshTol* tol,
                       double* worst_out) {
  int nbad = 0;
  for (int i = 0; names[i]; i++) {
    const fsFieldInfo* fi = fsh_field(names[i]);
    if (!fi) {
      fprintf(stderr, "no data field %s\n", names[i]);
      return 1;
    }
    nbad += report(label, m, b, fi, ref, tol, worst_out);
  }
  return nbad;
}
