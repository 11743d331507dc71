#include "common/parity/contacts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/model/model.h"
#include "common/base/random.h"

//---------------------------------- reference worlds ----------------------------------------------

// Whether pair p is between contact c's geoms (in either order).
static int pair_is(const mjModel* mj, int p, const mjContact* c) {
  int a = mj->pair_geom1[p], b = mj->pair_geom2[p];
  return (a == c->geom[0] && b == c->geom[1]) || (a == c->geom[1] && b == c->geom[0]);
}

// The pair that made contact c; -1 if none. The search starts at pair `from` and wraps:
// mj_collision makes the pairs' contacts in pair order, so a caller walking the contacts
// passes the last one's pair and finds each in a step or two (the terrains have 46,035).
static int pair_of_from(const mjModel* mj, const mjContact* c, int from) {
  for (int i = 0; i < mj->npair; i++) {
    int p = (from + i) % mj->npair;
    if (pair_is(mj, p, c)) return p;
  }
  return -1;
}

// The non-plane geom of pair p.
static int pair_body_geom(const mjModel* mj, int p) {
  int a = mj->pair_geom1[p];
  return mj->geom_type[a] == mjGEOM_PLANE ? mj->pair_geom2[p] : a;
}

// The plane of pair p.
static int pair_plane(const mjModel* mj, int p) {
  int a = mj->pair_geom1[p];
  return mj->geom_type[a] == mjGEOM_PLANE ? a : mj->pair_geom2[p];
}

// Every pair's distance (npair; INFINITY if none): MuJoCo's own collision of the
// state in d with the override flag and a huge margin, smallest dist per pair.
static void pair_dists(mjModel* mj, mjData* d, double* dist) {
  mjOption opt = mj->opt;
  mj->opt.enableflags |= mjENBL_OVERRIDE;
  mj->opt.o_margin = 1e4;
  mj_kinematics(mj, d);
  mj_collision(mj, d);
  for (int p = 0; p < mj->npair; p++) dist[p] = INFINITY;
  for (int c = 0, last = 0; c < d->ncon; c++) {
    int p = pair_of_from(mj, &d->contact[c], last);
    if (p < 0) continue;
    last = p;
    if (d->contact[c].dist < dist[p]) dist[p] = d->contact[c].dist;
  }
  mj->opt = opt;
}

// Quaternion of the rotation that turns unit vector a onto unit vector b.
static void quat_between(mjtNum q[4], const mjtNum a[3], const mjtNum b[3]) {
  mjtNum axis[3];
  mju_cross(axis, a, b);
  mjtNum s = mju_normalize3(axis), c = mju_dot3(a, b);
  if (s < 1e-12) { // parallel or opposite: any axis normal to a
    mjtNum t[3] = {1, 0, 0};
    if (fabs(a[0]) > 0.9) t[0] = 0, t[1] = 1;
    mju_cross(axis, a, t);
    mju_normalize3(axis);
  }
  mju_axisAngle2Quat(q, axis, atan2(s, c));
}

// Geom orientation for preset k: 0 on a face (identity), 1 on an edge (45 degrees
// about x), 2 on a vertex (the diagonal (1, 1, 1) turned to +z), 3 on the mesh's
// largest hull polygon, tilted by 0.02 rad about a random horizontal axis.
static void preset_quat(const mjModel* mj, int g, int k, mjtNum q[4]) {
  mjtNum axis[3] = {1, 0, 0}, angle = 0;
  if (k == 1) angle = M_PI / 4;
  if (k == 2) {
    axis[0] = 1 / sqrt(2.0);
    axis[1] = -1 / sqrt(2.0);
    angle = acos(1 / sqrt(3.0));
  }
  mju_axisAngle2Quat(q, axis, angle);
  int mesh = mj->geom_dataid[g];
  if (k != 3 || mesh < 0 || mj->geom_type[g] != mjGEOM_MESH) return;
  int best = mj->mesh_polyadr[mesh];
  for (int p = best; p < mj->mesh_polyadr[mesh] + mj->mesh_polynum[mesh]; p++)
    if (mj->mesh_polyvertnum[p] > mj->mesh_polyvertnum[best]) best = p;
  mjtNum down[3] = {0, 0, -1}, tilt[4], h = 2 * M_PI * fs_random_uniform();
  mjtNum tilt_axis[3] = {cos(h), sin(h), 0};
  quat_between(q, mj->mesh_polynormal + 3 * best, down);
  mju_axisAngle2Quat(tilt, tilt_axis, 0.02);
  mju_mulQuat(q, tilt, q);
}

// Noise on hinges and balls; free joints rotated by up to rotnoise, or (preset >= 0)
// turned so that the free body's first pair geom has preset orientation `preset`.
static void add_noise(const mjModel* mj, mjData* d, const fshContactNoise* nz, int preset) {
  for (int j = 0; j < mj->njnt; j++) {
    mjtNum* q = d->qpos + mj->jnt_qposadr[j];
    if (mj->jnt_type[j] == mjJNT_HINGE) q[0] += nz->qnoise * fsh_sym_uniform();
    if (mj->jnt_type[j] == mjJNT_BALL) fsh_rotate_randomly(q, nz->qnoise);
    if (mj->jnt_type[j] != mjJNT_FREE) continue;
    if (preset < 0) {
      fsh_rotate_randomly(q + 3, nz->rotnoise);
      continue;
    }
    for (int p = 0; p < mj->npair; p++) {
      int g = pair_body_geom(mj, p);
      if (mj->geom_bodyid[g] != mj->jnt_bodyid[j]) continue;
      mjtNum want[4], inv[4]; // body = want * inverse(geom's local quat)
      preset_quat(mj, g, preset, want);
      mju_negQuat(inv, mj->geom_quat + 4 * g);
      mju_mulQuat(q + 3, want, inv);
      mju_normalize4(q + 3);
      break;
    }
  }
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// Lower (or raise) every free body so that the k-th lowest of its plane pairs (k random
// below kmax) is at a random distance in [lo, hi] from its plane.
static void anchor_bodies(mjModel* mj, mjData* d, const fshContactNoise* nz) {
  double* dist = calloc((size_t)mj->npair + 1, sizeof(double));
  double* mine = calloc((size_t)mj->npair + 1, sizeof(double));
  int* which = calloc((size_t)mj->npair + 1, sizeof(int));
  pair_dists(mj, d, dist);
  for (int j = 0; j < mj->njnt; j++) {
    if (mj->jnt_type[j] != mjJNT_FREE) continue;
    int root = mj->body_rootid[mj->jnt_bodyid[j]], n = 0;
    for (int p = 0; p < mj->npair; p++)
      if (mj->body_rootid[mj->geom_bodyid[pair_body_geom(mj, p)]] == root && isfinite(dist[p]) &&
          mj->geom_type[pair_plane(mj, p)] == mjGEOM_PLANE) {
        mine[n] = dist[p];
        which[n++] = p;
      }
    if (!n) continue;
    qsort(mine, (size_t)n, sizeof(double), cmp_double);
    int k = (int)(fs_random_uniform() * (n < nz->kmax ? n : nz->kmax));
    double target = nz->lo + (nz->hi - nz->lo) * fs_random_uniform();
    double nzc = d->geom_xmat[9 * pair_plane(mj, which[0]) + 8]; // plane normal, z
    d->qpos[mj->jnt_qposadr[j] + 2] += (target - mine[k]) / nzc;
  }
  free(dist);
  free(mine);
  free(which);
}

// MuJoCo's contact count at the state in d (mode 0), or the contacts not excluded
// (mode 1: those below the include margin).
static int count_contacts(const mjModel* mj, mjData* d, int mode) {
  mj_kinematics(mj, d);
  mj_collision(mj, d);
  int n = 0;
  for (int c = 0; c < d->ncon; c++) n += mode == 0 || !d->contact[c].exclude;
  return n;
}

int fsh_count_boundary(const mjModel* mj, mjData* a, mjData* b, int q, double za, double zb,
                       int mode) {
  a->qpos[q] = za;
  int na = count_contacts(mj, a, mode);
  a->qpos[q] = zb;
  int nb = count_contacts(mj, a, mode);
  if (na == nb) return 0;
  while (nextafter(za, zb) < zb) {
    double mid = za + (zb - za) / 2;
    if (mid <= za || mid >= zb) break;
    a->qpos[q] = mid;
    if (count_contacts(mj, a, mode) == nb)
      zb = mid;
    else
      za = mid;
  }
  mju_copy(b->qpos, a->qpos, mj->nq);
  a->qpos[q] = za;
  b->qpos[q] = zb;
  return 1;
}

// Worlds a and b: world a's state with the first free joint's height za and zb,
// adjacent doubles across which MuJoCo's count (mode) changes. 0 if none found.
static int boundary_pair(const mjModel* mj, mjData* a, mjData* b, const fshContactNoise* nz,
                         int mode) {
  int free = -1;
  for (int j = 0; j < mj->njnt && free < 0; j++)
    if (mj->jnt_type[j] == mjJNT_FREE) free = mj->jnt_qposadr[j] + 2;
  if (free < 0) return 0;
  double span = nz->hi - nz->lo, rmax = 0;
  for (int g = 0; g < mj->ngeom; g++) rmax = fmax(rmax, mj->geom_rbound[g]);
  return fsh_count_boundary(mj, a, b, free, a->qpos[free] - span,
                            a->qpos[free] + 2 * rmax + 2 * span, mode);
}

mjData** fsh_contact_worlds(const mjModel* mj_in, int nworld, uint64_t seed,
                            const fshContactNoise* nz) {
  mjModel* mj = (mjModel*)mj_in; // opt is changed for a moment, then restored
  fs_random_seed(seed);
  mjData** d = calloc((size_t)nworld, sizeof *d);
  for (int w = 0; w < nworld; w++) {
    d[w] = fsh_keyframe_world(mj);
    add_noise(mj, d[w], nz, w < nz->presets ? w % 4 : -1);
    anchor_bodies(mj, d[w], nz);
  }
  int nbound = 0;
  for (int i = 0; i < nz->boundary && 2 * (i + 1) <= nworld; i++) {
    int w = nworld - 2 * (i + 1);
    nbound += boundary_pair(mj, d[w], d[w + 1], nz, i % 2);
  }
  if (nz->boundary) fsh_note(" %d pairs of worlds across a contact-count boundary\n", nbound);
  for (int w = 0; w < nworld; w++) mj_forward(mj, d[w]);
  return d;
}

//---------------------------------- comparison ----------------------------------------------------

fshContactStats fsh_contact_stats(const mjModel* mj, mjData* const* ref, int nworld) {
  fshContactStats s = {nworld, 1 << 30, 0, 0, 0, 0, 0, 0};
  for (int w = 0; w < nworld; w++) {
    const mjData* d = ref[w];
    s.ncon_min = d->ncon < s.ncon_min ? d->ncon : s.ncon_min;
    s.ncon_max = d->ncon > s.ncon_max ? d->ncon : s.ncon_max;
    s.ncon_sum += d->ncon;
    int run = 0, prev = -1;
    for (int c = 0; c < d->ncon; c++) {
      const mjContact* k = &d->contact[c];
      s.penetrating += k->dist < 0;
      s.within_margin += k->dist >= 0 && k->dist < k->includemargin;
      s.in_gap += k->dist >= k->includemargin;
      int p = pair_of_from(mj, k, prev < 0 ? 0 : prev);
      run = (c && p == prev) ? run + 1 : 1;
      prev = p;
      if (run > s.max_per_pair) s.max_per_pair = run;
    }
  }
  return s;
}

// MuJoCo's values of field f in world md (ncon rows), into out.
static void ref_rows(const fsFieldInfo* f, const mjData* md, double* out, size_t n) {
  if (fs_contact_values(f, md, out, n)) {
    fprintf(stderr, "internal: contact field %s has no mjContact member\n", f->name);
    abort(); // the field table and MuJoCo's mjContact disagree: a programming error
  }
}

// Our value k of field f in world d, as a double.
static double our_value(const fsFieldInfo* f, const fsData* d, size_t k) {
  void* p = *fs_field_ptr((void*)d, f);
  return f->type == FS_TYPE_int ? (double)((int*)p)[k] : (double)((fsReal*)p)[k];
}

// Largest |coordinate| of the world's contact positions (MuJoCo's, else ours), >= 1e-9.
static double world_scale(const fsData* d, const mjData* ref) {
  double s = 1e-9;
  for (int c = 0; c < ref->ncon; c++)
    for (int k = 0; k < 3; k++) s = fmax(s, fabs(ref->contact[c].pos[k]));
  for (int c = 0; ref->ncon == 0 && c < d->ncon[0]; c++)
    for (int k = 0; k < 3; k++) s = fmax(s, fabs((double)d->contact_pos[3 * c + k]));
  return s;
}

// Is distance `dist` of a contact of pair p within tol of where it appears (the
// detection threshold margin + gap) or where it is excluded (the margin)?
static int at_threshold(const fsModel* m, int p, double margin, double dist, double tol) {
  return fabs(dist - (margin + (double)m->pair_gap[p])) <= tol || fabs(dist - margin) <= tol;
}

// Pair our contacts of world w with MuJoCo's: map[c] = our index of MuJoCo's
// contact c, or -1. tol_b 0: the same count, order and pairs (float64). tol_b > 0
// (float32): contacts of the same pair matched by position; one left on each side
// at the same depth (within tol_b) is a tie MuJoCo broke by rounding (another
// vertex as deep); any other contact only one side has must lie within tol_b of a
// threshold of its pair. Returns failures; allowed: what was let through (at a
// threshold, ties).
static int match_world(const char* label, const fsModel* m, const fsData* d, const mjData* ref,
                       int w, double tol_b, int* map, int allowed[2]) {
  int nours = d->ncon[0], bad = 0;
  for (int c = 0; c < ref->ncon; c++) map[c] = -1;
  if (d->contact_overflow[0] != 0 || nours < 0 || nours > m->nconmax) {
    fsh_note("  %-22s world %d: ncon %d, overflow %d  <-- FAIL\n", label, w, nours,
             d->contact_overflow[0]);
    return 1;
  }
  for (int k = 0; k < nours; k++) { // our contacts: pairs in order, geoms the pair's
    int p = d->contact_pair[k], g0 = d->contact_geom[2 * k], g1 = d->contact_geom[2 * k + 1];
    if (!(p >= 0 && p < m->npair && (k == 0 || p >= d->contact_pair[k - 1]) &&
          ((m->pair_geom1[p] == g0 && m->pair_geom2[p] == g1) ||
           (m->pair_geom1[p] == g1 && m->pair_geom2[p] == g0)))) {
      fsh_note("  %-22s world %d contact %d: pair %d, geoms %d %d  <-- FAIL\n", label, w, k, p, g0,
               g1);
      return 1;
    }
  }
  if (tol_b == 0) {
    if (nours != ref->ncon) {
      fsh_note("  %-22s world %d: ncon %d, MuJoCo %d  <-- FAIL\n", label, w, nours, ref->ncon);
      return 1;
    }
    for (int c = 0; c < nours; c++) map[c] = c;
    return 0;
  }
  double scale = world_scale(d, ref);
  char* used = calloc((size_t)nours + 1, 1);
  for (int c = 0; c < ref->ncon; c++) {
    const mjContact* r = &ref->contact[c];
    double best = 1e-4 * scale, best_e = INFINITY; // the nearest; of equals, the first
    for (int k = 0; k < nours; k++) {
      if (used[k] || d->contact_geom[2 * k] != r->geom[0] ||
          d->contact_geom[2 * k + 1] != r->geom[1])
        continue;
      double e = 0;
      for (int j = 0; j < 3; j++) e = fmax(e, fabs((double)d->contact_pos[3 * k + j] - r->pos[j]));
      if (e <= best && e < best_e) best_e = e, map[c] = k;
    }
    if (map[c] >= 0)
      used[map[c]] = 1;
    else
      map[c] = -2; // not matched yet
  }
  for (int c = 0; c < ref->ncon; c++) { // a tie: another vertex at the same depth
    const mjContact* r = &ref->contact[c];
    for (int k = 0; k < nours && map[c] == -2; k++)
      if (!used[k] && d->contact_geom[2 * k] == r->geom[0] &&
          d->contact_geom[2 * k + 1] == r->geom[1] && fabs(d->contact_dist[k] - r->dist) <= tol_b) {
        used[k] = 1;
        map[c] = -1;
        allowed[1]++;
      }
  }
  for (int c = 0; c < ref->ncon; c++) {
    if (map[c] != -2) continue;
    map[c] = -1;
    const mjContact* r = &ref->contact[c];
    int p = -1; // the pair: the one with MuJoCo's geoms
    for (int k = 0; k < m->npair && p < 0; k++)
      if ((m->pair_geom1[k] == r->geom[0] && m->pair_geom2[k] == r->geom[1]) ||
          (m->pair_geom1[k] == r->geom[1] && m->pair_geom2[k] == r->geom[0]))
        p = k;
    int ok = p >= 0 && at_threshold(m, p, r->includemargin, r->dist, tol_b);
    allowed[0] += ok;
    if (!ok) {
      fsh_note("  %-22s world %d: MuJoCo's contact %d (dist %.9g) missing  <-- FAIL\n", label, w, c,
               r->dist);
      bad++;
    }
  }
  for (int k = 0; k < nours; k++) {
    if (used[k]) continue;
    int p = d->contact_pair[k];
    int ok = at_threshold(m, p, d->contact_includemargin[k], d->contact_dist[k], tol_b);
    allowed[0] += ok;
    if (!ok) {
      fsh_note("  %-22s world %d: our contact %d (dist %.9g) not MuJoCo's  <-- FAIL\n", label, w, k,
               (double)d->contact_dist[k]);
      bad++;
    }
  }
  free(used);
  return bad;
}

// Worst error of field f over the matched contacts (maps: nworld x nconmax). An
// exclude or dim that differs on a contact within tol_b of its margin is let
// through (counted in allowed[0]).
static fshContactWorst compare_field(const fsModel* m, const fsWorlds* b, const fsFieldInfo* f,
                                     mjData* const* ref, const fshTol* tol, const int* maps,
                                     double tol_b, int allowed[2]) {
  fshContactWorst worst = {0, -1, -1, -1, 0, 0};
  size_t cap = (size_t)m->nconmax * 9 + 1;
  double* r = calloc(cap, sizeof(double));
  int at_margin_ok = !strcmp(f->name, "contact_exclude") || !strcmp(f->name, "contact_dim");
  for (int w = 0; w < b->nworld; w++) {
    if (tol->skip && tol->skip[w]) continue;
    fsData d = fs_worlds_view(m, b, w);
    const int* map = maps + (size_t)w * (m->nconmax + 1);
    size_t cols = (size_t)f->cols;
    double tw = tol_b * world_scale(&d, ref[w]);
    ref_rows(f, ref[w], r, cap);
    double scale = 0; // the field's largest |value|; for dist, the geometry's size
    for (size_t k = 0; k < (size_t)ref[w]->ncon * cols; k++) scale = fmax(scale, fabs(r[k]));
    if (!strcmp(f->name, "contact_dist")) scale = world_scale(&d, ref[w]);
    for (int c = 0; c < ref[w]->ncon; c++) {
      if (map[c] < 0) continue;
      const mjContact* rc = &ref[w]->contact[c];
      for (size_t j = 0; j < cols; j++) {
        double o = our_value(f, &d, (size_t)map[c] * cols + j), rv = r[c * cols + j], e;
        if (f->type == FS_TYPE_int) {
          e = o == rv ? 0 : INFINITY;
          if (e > 0 && at_margin_ok && tw > 0 && fabs(rc->dist - rc->includemargin) <= tw) {
            allowed[0]++;
            e = 0;
          }
        } else {
          double den = fmax(fabs(rv), tol->floor * scale), dif = fabs(o - rv);
          e = isnan(o) ? INFINITY : (dif == 0 ? 0 : (den > 0 ? dif / den : INFINITY));
        }
        if (e > worst.err || worst.world < 0) worst = (fshContactWorst){e, w, c, (int)j, o, rv};
      }
    }
  }
  free(r);
  return worst;
}

int fsh_compare_contacts(const char* label, const fsModel* m, const fsWorlds* b, mjData* const* ref,
                         const fshTol* tol, double tol_b, int stage, double* worst) {
  int nbad = 0, allowed[2] = {0, 0};
  int* maps = calloc((size_t)b->nworld * (m->nconmax + 1), sizeof(int));
  for (int w = 0; w < b->nworld; w++) {
    fsData d = fs_worlds_view(m, b, w);
    double tw = tol_b * world_scale(&d, ref[w]);
    nbad += match_world(label, m, &d, ref[w], w, tw, maps + (size_t)w * (m->nconmax + 1), allowed);
  }
  for (int f = 0; f < fs_data_nfield; f++) {
    const fsFieldInfo* fi = &fs_data_fields[f];
    if (fi->kind != FS_KIND_CONTACT || fi->stage != stage || !strcmp(fi->name, "ncon")) continue;
    fshContactWorst w = compare_field(m, b, fi, ref, tol, maps, tol_b, allowed);
    int bad = !(w.err <= (fi->type == FS_TYPE_int ? 0 : tol->rel));
    fshFieldReport r = {label, fi->name, w.err, 0, w.world, w.contact, "", w.ours, w.ref, bad};
    snprintf(r.where, sizeof r.where, "world %d contact %d [%d]", w.world, w.contact, w.col);
    fsh_report(&r);
    if (fi->type != FS_TYPE_int && worst && w.err > *worst) *worst = w.err;
    nbad += bad;
  }
  if (tol_b > 0)
    fsh_note("  %-22s let through (float32): %d contacts/flags within %.0e x size of a threshold, "
             "%d tie(s) (another vertex as deep)\n",
             label, allowed[0], tol_b, allowed[1]);
  free(maps);
  return nbad;
}

// A free body named "ball" with a sphere (the walker): in every third world it
// hovers in the gap of its floor pair (margin < dist < margin + gap), so that its
// contact is excluded but counts for its adhesion actuator (exclude 1).
static void hover_ball(const mjModel* mj, mjData* d) {
  int b = mj_name2id(mj, mjOBJ_BODY, "ball"), g = mj_name2id(mj, mjOBJ_GEOM, "ball");
  int floor = mj_name2id(mj, mjOBJ_GEOM, "floor");
  if (b < 0 || g < 0 || floor < 0) return;
  for (int p = 0; p < mj->npair; p++) {
    int a = mj->pair_geom1[p], e = mj->pair_geom2[p];
    if (!((a == g && e == floor) || (a == floor && e == g)) || mj->pair_gap[p] <= 0) continue;
    mjtNum margin = mj->opt.enableflags & mjENBL_OVERRIDE ? mj->opt.o_margin : mj->pair_margin[p];
    d->qpos[mj->jnt_qposadr[mj->body_jntadr[b]] + 2] =
        mj->geom_size[3 * g] + margin + mj->pair_gap[p] * (0.05 + 0.9 * fs_random_uniform());
  }
}

mjData** fsh_moving_contact_worlds(const mjModel* mj, int nworld, uint64_t seed,
                                   const fshContactNoise* noise, double vnoise) {
  mjData** d = fsh_contact_worlds(mj, nworld, seed, noise);
  for (int w = 0; w < nworld; w++) {
    if (w % 3 == 1) hover_ball(mj, d[w]);
    for (int i = 0; i < mj->nv; i++) d[w]->qvel[i] = vnoise * fsh_sym_uniform();
    for (int i = 0; i < mj->nu; i++) {
      const mjtNum* r = mj->actuator_ctrlrange + 2 * i;
      d[w]->ctrl[i] = mj->actuator_ctrllimited[i] ? r[0] + (r[1] - r[0]) * fs_random_uniform()
                                                  : fsh_sym_uniform();
    }
    mj_forward(mj, d[w]);
  }
  return d;
}
