#include "common/parity/efc.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/model/model.h"

// Worst element of one field's comparison.
typedef struct EfcWorst {
  double err, bound; // the element whose error uses most of its bound (err / bound)
  int world, row, col;
  double ours, ref;
  double maxerr; // the largest error of any element
} EfcWorst;

// Our value k of field f in world d, as a double.
static double our_value(const fsFieldInfo* f, const fsData* d, size_t k) {
  void* p = *fs_field_ptr((void*)d, f);
  if (f->type == FS_TYPE_double) return ((double*)p)[k];
  return f->type == FS_TYPE_int ? (double)((int*)p)[k] : (double)((fsReal*)p)[k];
}

// Columns of a row of field f in our layout, and how many of them hold values.
static int row_width(const fsModel* m, const fsFieldInfo* f) {
  return !strcmp(f->name, "efc_J") ? m->njmax : f->cols;
}

static int row_used(const fsModel* m, const fsFieldInfo* f, const fsData* d, int r) {
  return !strcmp(f->name, "efc_J") ? d->efc_J_rownnz[r] : row_width(m, f);
}

// The largest |coordinate| of the world's contact points (>= 1e-9): the scale of
// distances (efc_pos), as for contact_dist.
static double world_size(const mjData* md) {
  double s = 1e-9;
  for (int c = 0; c < md->ncon; c++)
    for (int k = 0; k < 3; k++) s = fmax(s, fabs(md->contact[c].pos[k]));
  return s;
}

// Relative error that float32 inputs alone explain in row r of field f (0 in
// float64): R = (1 - imp) / imp * diagA and D = 1 / R are sensitive to imp by
// 1 / (1 - imp) + 1 / imp, and imp to the position by imp' (MuJoCo's KBIP[3]); the
// row's position error is measured (ours - MuJoCo's efc_pos; the first-order effect
// doubled for the curvature of imp), imp's own error is a few float32 roundings (its
// solimp parameters cannot be held exactly, e.g. 0.9999). diagA = R * imp / (1 - imp)
// keeps the cancellation but not the position.
static double allowance(const fsFieldInfo* f, const fsData* d, const mjData* md, int r) {
#ifdef FS_REAL_FLOAT
  int R = !strcmp(f->name, "efc_R") || !strcmp(f->name, "efc_D");
  if (!R && strcmp(f->name, "efc_diagA")) return 0;
  double eps = FLT_EPSILON, imp = md->efc_KBIP[4 * r + 2], impP = md->efc_KBIP[4 * r + 3];
  double cond = 1 / (1 - imp) + 1 / imp;
  double dpos = fabs((double)d->efc_pos[r] - md->efc_pos[r]) + eps * fabs(md->efc_pos[r]);
  return 4 * eps * cond + (R ? 2 * fabs(impP) * dpos * cond : 0); // 2: the curvature
#else
  (void)f, (void)d, (void)md, (void)r;
  return 0;
#endif
}

// float32: row r's efc_state may differ where MuJoCo's force is within the tolerance (x
// the world's largest |force|) of 0: the row sits at its boundary, and float32 decides
// its side (the solver's test's rule). 0 in float64.
static int state_at_boundary(const fsFieldInfo* f, const mjData* md, int r, const fshTol* tol) {
#ifdef FS_REAL_FLOAT
  if (strcmp(f->name, "efc_state")) return 0;
  double big = 0;
  for (int i = 0; i < md->nefc; i++) big = fmax(big, fabs(md->efc_force[i]));
  return fabs(md->efc_force[r]) <= tol->rel * big;
#else
  (void)f, (void)md, (void)r, (void)tol;
  return 0;
#endif
}

// One world's comparison of field f into worst; -1 if its rows do not pair up.
static int compare_world(const fsModel* m, const fsFieldInfo* f, const fsData* d, const mjModel* mj,
                         const mjData* md, const fshTol* tol, int w, double* buf, size_t cap,
                         EfcWorst* worst) {
  if (d->nefc[0] != md->nefc) return -1;
  long n = fs_efc_values(m, f, mj, md, buf, cap);
  if (n < 0) return -1;
  if (!strcmp(f->name, "nefc")) return 0; // equal: checked above
  int width = row_width(m, f), isint = f->type == FS_TYPE_int;
  double scale = 0;
  for (long k = 0; k < n; k++) scale = fmax(scale, fabs(buf[k]));
  if (!strcmp(f->name, "efc_pos")) scale = world_size(md);
  for (int r = 0; r < md->nefc; r++) {
    double bound = (isint ? 0 : tol->rel) + allowance(f, d, md, r);
    int used = row_used(m, f, d, r);
    if (used < 0 || used > width) return -1; // our efc_J_rownnz is wrong
    for (int c = 0; c < used; c++) {
      size_t k = (size_t)r * (size_t)width + (size_t)c;
      double o = our_value(f, d, k), rv = buf[k], e;
      if (isint) {
        e = o == rv || state_at_boundary(f, md, r, tol) ? 0 : INFINITY;
      } else {
        double den = fmax(fabs(rv), tol->floor * scale), dif = fabs(o - rv);
        e = isnan(o) ? INFINITY : (dif == 0 ? 0 : (den > 0 ? dif / den : INFINITY));
      }
      double q = e == 0 ? 0 : (bound > 0 ? e / bound : INFINITY);
      double qw = worst->err == 0 ? 0 : (worst->bound > 0 ? worst->err / worst->bound : INFINITY);
      double maxerr = fmax(worst->maxerr, e);
      if (q > qw || worst->world < 0) *worst = (EfcWorst){e, bound, w, r, c, o, rv, maxerr};
      worst->maxerr = maxerr;
    }
  }
  return 0;
}

int fsh_compare_efc(const char* label, const fsModel* m, const fsWorlds* b, const mjModel* mj,
                    mjData* const* ref, const fshTol* tol, int stage, double worst[2]) {
  int nbad = 0;
  size_t cap = (size_t)m->nefcJ + 4 * (size_t)m->nefcmax + 1;
  double* buf = calloc(cap, sizeof(double));
  for (int fi = 0; fi < fs_data_nfield; fi++) {
    const fsFieldInfo* f = &fs_data_fields[fi];
    if (f->kind != FS_KIND_EFC || f->stage != stage) continue;
    int listed = !tol->only;
    for (int i = 0; tol->only && tol->only[i]; i++) listed |= !strcmp(tol->only[i], f->name);
    if (!listed) continue;
    EfcWorst w = {0, tol->rel, -1, -1, -1, 0, 0, 0};
    for (int k = 0; k < b->nworld; k++) {
      if (tol->skip && tol->skip[k]) continue;
      fsData d = fs_worlds_view(m, b, k);
      if (compare_world(m, f, &d, mj, ref[k], tol, k, buf, cap, &w)) {
        fsh_note("  %-22s %-18s world %d: nefc %d, MuJoCo %d, or rows that do not pair  <-- FAIL\n",
                 label, f->name, k, d.nefc[0], ref[k]->nefc);
        w.err = INFINITY;
        break;
      }
    }
    int bad = !(w.err <= w.bound);
    fshFieldReport r = {label, f->name, w.err, w.bound, w.world, w.row, "", w.ours, w.ref, bad};
    snprintf(r.where, sizeof r.where, "world %d row %d [%d]", w.world, w.row, w.col);
    fsh_report(&r);
    int imp =
        !strcmp(f->name, "efc_R") || !strcmp(f->name, "efc_D") || !strcmp(f->name, "efc_diagA");
    if (f->type != FS_TYPE_int && worst && isfinite(w.maxerr) && w.maxerr > worst[imp])
      worst[imp] = w.maxerr;
    nbad += bad;
  }
  free(buf);
  return nbad;
}

int fsh_contact_sets_differ(const fsModel* m, const fsWorlds* b, mjData* const* ref, char* skip) {
  int n = 0;
  for (int w = 0; w < b->nworld; w++) {
    fsData d = fs_worlds_view(m, b, w);
    const mjData* md = ref[w];
    int differ = d.ncon[0] != md->ncon;
    for (int c = 0; c < md->ncon && !differ; c++) {
      const mjContact* k = &md->contact[c];
      differ = d.contact_geom[2 * c] != k->geom[0] || d.contact_geom[2 * c + 1] != k->geom[1] ||
               d.contact_dim[c] != k->dim || d.contact_exclude[c] != k->exclude;
    }
    skip[w] = (char)differ;
    n += differ;
  }
  return n;
}
