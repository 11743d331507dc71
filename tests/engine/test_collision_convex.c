// The convex collider (common/engine/collision_convex.h, MuJoCo's mjc_Convex under
// native CCD) against MuJoCo's mj_collision, on two models:
//  - tests/models/cuda_contact_convex.xml: box-mesh, two static boxes, four free meshes (a
//    cube, an octagonal prism, NeuroMechFly's tarsus and tibia hulls), each paired with both
//    boxes, margin 0 and margin > 0;
//  - tests/models/cuda_contact_shapes.xml: the curved shapes' pairs (sphere, capsule,
//    ellipsoid, cylinder against ellipsoids, cylinders, boxes, meshes, capsules; mesh-mesh).
//
// Every world is a different MuJoCo state (seeded, printed): each mesh is put against
// one of its boxes -- on a face, an edge or a corner of the box (in turn, the contact
// point at random on the feature); the mesh flat on it (one of its hull polygons facing
// the feature, within 2 deg, so that MuJoCo's multi-contact clips polygons), tilted by
// 10-40 deg, or turned at random; its lowest point along the feature's normal at a
// random depth, touching (0), at the pair's margin, or deep (a fifth of its size).
// The shapes' worlds: each free shape against one of its static shapes, along a random
// direction from its centre, turned at random, end-on or side-on (its axis along or across
// the direction, within a few degrees), its lowest point along the direction at a random
// depth from the static shape's supporting plane: deep (a fifth of its size), shallow or
// within the margin.
// Then, as tests/engine/test_collision.c does: (1) collision alone from MuJoCo's geom
// frames, outputs poisoned; (2) kinematics + collision from the state. Cases: multiccd
// on (clipping at margin 0, the perturbation with a margin), multiccd off (one contact
// per pair), and the override flag (every pair at o_margin: the perturbation
// everywhere).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/random.h"
#include "common/parity/contacts.h"
#include "common/parity/harness.h"
#include "tests/testutil.h"

static const fshTol kTol = FSH_STAGE_TOL; // (common/parity/harness.h)
static const double kTolBoundary = FSH_CONTACT_BOUNDARY_TOL;
// float32: worlds with a mesh exactly touching or exactly at its margin are matched but
// not compared field by field -- there the inflated shapes touch, the witness points
// coincide to within the inputs' rounding and the normal is not defined (float64 is
// compared everywhere).
#ifdef FS_REAL_FLOAT
static const int kSkipBoundary = 1;
#else
static const int kSkipBoundary = 0;
#endif

static double g_worst_alone, g_worst_chain;

typedef struct Case {
  const char* label;
  const char* model; // tests/models/...
  int shapes;        // 1: the curved shapes' worlds (shape_worlds), 0: box-mesh (convex_worlds)
  int disable, enable;
  int nworld;
} Case;

static double urand(double lo, double hi) {
  return lo + (hi - lo) * fs_random_uniform();
}

// Rotation R taking unit vector a to unit vector b (Rodrigues; a = -b: a half turn).
static void align(double R[9], const double a[3], const double b[3]) {
  double axis[3], c = mju_dot3(a, b), quat[4];
  mju_cross(axis, a, b);
  double s = mju_normalize3(axis);
  if (s < 1e-12) { // parallel or opposite: any perpendicular axis
    double t[3] = {1, 0, 0};
    if (fabs(a[0]) > 0.9) t[0] = 0, t[1] = 1;
    mju_cross(axis, a, t);
    mju_normalize3(axis);
  }
  mju_axisAngle2Quat(quat, axis, atan2(s, c));
  mju_quat2Mat(R, quat);
}

// R = rotation by angle about axis, times R.
static void turn(double R[9], const double axis[3], double angle) {
  double quat[4], T[9], out[9], u[3] = {axis[0], axis[1], axis[2]};
  mju_normalize3(u);
  mju_axisAngle2Quat(quat, u, angle);
  mju_quat2Mat(T, quat);
  mju_mulMatMat(out, T, R, 3, 3, 3);
  mju_copy(R, out, 9);
}

// The free joint of geom g's body set so that the geom's frame is (pos, R).
static void place_geom(const mjModel* mj, mjData* d, int g, const double pos[3],
                       const double R[9]) {
  int b = mj->geom_bodyid[g], q = mj->jnt_qposadr[mj->body_jntadr[b]];
  double qg[4], qgi[4], qb[4], off[3];
  mju_mat2Quat(qg, R);
  mju_negQuat(qgi, mj->geom_quat + 4 * g);
  mju_mulQuat(qb, qg, qgi);
  mju_normalize4(qb);
  mju_rotVecQuat(off, mj->geom_pos + 3 * g, qb);
  for (int i = 0; i < 3; i++) d->qpos[q + i] = pos[i] - off[i];
  mju_copy4(d->qpos + q + 3, qb);
}

// Mesh geom g put against box geom gb (feature 0 face, 1 edge, 2 corner; pose 0 flat,
// 1 tilted, 2 random) with its lowest point along the feature's normal at depth.
static void put_mesh(const mjModel* mj, mjData* d, int g, int gb, int feature, int pose,
                     double depth) {
  const double *bs = mj->geom_size + 3 * gb, *bp = d->geom_xpos + 3 * gb;
  const double* bR = d->geom_xmat + 9 * gb;
  int ax[3] = {0, 1, 2};
  for (int i = 2; i > 0; i--) { // a random order of the axes
    int j = (int)(fs_random_uniform() * (i + 1)), t = ax[i];
    ax[i] = ax[j], ax[j] = t;
  }
  double nl[3] = {0, 0, 0}, al[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) {
    int i = ax[k];
    double sgn = fs_random_uniform() < 0.5 ? -1 : 1;
    if (k <= feature) { // on this axis' face
      nl[i] = sgn;
      al[i] = sgn * bs[i];
    } else {
      al[i] = urand(-0.6, 0.6) * bs[i];
    }
  }
  mju_normalize3(nl);
  double n[3], anchor[3];
  mju_mulMatVec3(n, bR, nl);
  mju_mulMatVec3(anchor, bR, al);
  mju_addTo3(anchor, bp);
  int mesh = mj->geom_dataid[g], np = mj->mesh_polynum[mesh];
  double R[9], neg[3] = {-n[0], -n[1], -n[2]};
  if (pose == 2) {
    double quat[4] = {urand(-1, 1), urand(-1, 1), urand(-1, 1), urand(-1, 1)};
    mju_normalize4(quat);
    mju_quat2Mat(R, quat);
  } else {
    int p = mj->mesh_polyadr[mesh] + (int)(fs_random_uniform() * np);
    if (fs_random_uniform() < 0.5) // half the time its largest polygon
      for (int q = mj->mesh_polyadr[mesh]; q < mj->mesh_polyadr[mesh] + np; q++)
        if (mj->mesh_polyvertnum[q] > mj->mesh_polyvertnum[p]) p = q;
    align(R, mj->mesh_polynormal + 3 * p, neg); // polygon p facing the box
    turn(R, n, urand(0, 2 * M_PI));
    double t[3] = {urand(-1, 1), urand(-1, 1), urand(-1, 1)}, perp[3];
    mju_cross(perp, n, t);
    turn(R, perp, pose == 0 ? urand(0, 0.035) : urand(0.17, 0.7));
  }
  const float* v = mj->mesh_vert + 3 * mj->mesh_vertadr[mesh];
  double low = 1e300;
  for (int i = 0; i < mj->mesh_vertnum[mesh]; i++) {
    double p[3] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]}, w[3];
    mju_mulMatVec3(w, R, p);
    double h = mju_dot3(w, n);
    low = h < low ? h : low;
  }
  double pos[3];
  for (int i = 0; i < 3; i++) pos[i] = anchor[i] + n[i] * (depth - low);
  place_geom(mj, d, g, pos, R);
}

// The explicit pairs of geom g (at most 8) into pairs; returns how many.
static int geom_pairs(const mjModel* mj, int g, int pairs[8]) {
  int n = 0;
  for (int p = 0; p < mj->npair && n < 8; p++)
    if (mj->pair_geom1[p] == g || mj->pair_geom2[p] == g) pairs[n++] = p;
  return n;
}

// The reference worlds: every mesh against one of its boxes (see the top).
static mjData** convex_worlds(const mjModel* mj, int nworld, uint64_t seed, char* boundary) {
  fs_random_seed(seed);
  printf(" worlds seeded with %llu\n", (unsigned long long)seed);
  mjData** d = calloc((size_t)nworld, sizeof *d);
  for (int w = 0; w < nworld; w++) {
    d[w] = fsh_keyframe_world(mj);
    mj_kinematics(mj, d[w]);
    int slot = 0;
    for (int g = 0; g < mj->ngeom; g++) {
      if (mj->geom_type[g] != mjGEOM_MESH) continue;
      int pairs[8], n = geom_pairs(mj, g, pairs);
      int p = pairs[(int)(fs_random_uniform() * n)];
      int gb = mj->pair_geom1[p] == g ? mj->pair_geom2[p] : mj->pair_geom1[p];
      double margin =
          (mj->opt.enableflags & mjENBL_OVERRIDE) ? mj->opt.o_margin : mj->pair_margin[p];
      double size = mj->geom_rbound[g], depth = -0.2 * size; // kind 3: deep
      int kind = w % 4, feature = (w / 4 + slot) % 3, pose = (w / 12 + slot) % 3;
      if (kind == 0)
        depth = urand(-0.05 * size, margin + 0.01 * size);
      else if (kind == 1)
        depth = 0;
      else if (kind == 2)
        depth = margin;
      if (kind == 1 || kind == 2) boundary[w] = 1;
      put_mesh(mj, d[w], g, gb, feature, pose, depth);
      slot++;
    }
    mj_forward(mj, d[w]);
  }
  return d;
}

// Extent of geom g (turned by R) along the world direction n: max over the shape of
// x . n, x from its centre (the support function's value).
static double extent(const mjModel* mj, int g, const double R[9], const double n[3]) {
  double u[3];
  mju_mulMatTVec3(u, R, n);
  const double* s = mj->geom_size + 3 * g;
  switch (mj->geom_type[g]) {
  case mjGEOM_SPHERE:
    return s[0];
  case mjGEOM_CAPSULE:
    return s[0] + s[1] * fabs(u[2]);
  case mjGEOM_ELLIPSOID:
    return sqrt(s[0] * s[0] * u[0] * u[0] + s[1] * s[1] * u[1] * u[1] + s[2] * s[2] * u[2] * u[2]);
  case mjGEOM_CYLINDER:
    return s[0] * sqrt(u[0] * u[0] + u[1] * u[1]) + s[1] * fabs(u[2]);
  case mjGEOM_BOX:
    return s[0] * fabs(u[0]) + s[1] * fabs(u[1]) + s[2] * fabs(u[2]);
  default: { // mesh
    const float* v = mj->mesh_vert + 3 * mj->mesh_vertadr[mj->geom_dataid[g]];
    double best = -1e300;
    for (int i = 0; i < mj->mesh_vertnum[mj->geom_dataid[g]]; i++) {
      double h = v[3 * i] * u[0] + v[3 * i + 1] * u[1] + v[3 * i + 2] * u[2];
      best = h > best ? h : best;
    }
    return best;
  }
  }
}

// The shapes' reference worlds: every free geom against one of its static geoms (see the top).
static mjData** shape_worlds(const mjModel* mj, int nworld, uint64_t seed, char* boundary) {
  (void)boundary; // no world is placed exactly at a boundary
  fs_random_seed(seed);
  printf(" worlds seeded with %llu\n", (unsigned long long)seed);
  mjData** d = calloc((size_t)nworld, sizeof *d);
  for (int w = 0; w < nworld; w++) {
    d[w] = fsh_keyframe_world(mj);
    mj_kinematics(mj, d[w]);
    int slot = 0;
    for (int g = 0; g < mj->ngeom; g++) {
      if (mj->geom_bodyid[g] == 0) continue;
      int pairs[8], n = geom_pairs(mj, g, pairs);
      int p = pairs[(w / 4 + slot) % n];
      int gs = mj->pair_geom1[p] == g ? mj->pair_geom2[p] : mj->pair_geom1[p];
      double margin =
          (mj->opt.enableflags & mjENBL_OVERRIDE) ? mj->opt.o_margin : mj->pair_margin[p];
      double size = mj->geom_rbound[g], depth;
      int kind = w % 4, pose = (w / 4 + 2 * slot) % 3;
      if (kind == 0)
        depth = -0.2 * size;
      else if (kind == 1)
        depth = urand(-0.05 * size, 0);
      else if (kind == 2)
        depth = urand(0, margin);
      else
        depth = urand(-0.05 * size, margin + 0.01 * size);
      double dir[3] = {urand(-1, 1), urand(-1, 1), urand(-1, 1)}, R[9];
      mju_normalize3(dir);
      if (pose == 0) {
        double quat[4] = {urand(-1, 1), urand(-1, 1), urand(-1, 1), urand(-1, 1)};
        mju_normalize4(quat);
        mju_quat2Mat(R, quat);
      } else {
        double z[3] = {0, 0, 1}, neg[3] = {-dir[0], -dir[1], -dir[2]}, t[3], perp[3];
        double r[3] = {urand(-1, 1), urand(-1, 1), urand(-1, 1)};
        mju_cross(perp, dir, r);
        mju_normalize3(perp);
        if (pose == 1) { // end-on: its axis against the direction
          align(R, z, neg);
        } else { // side-on: its axis across it
          align(R, z, perp);
        }
        turn(R, dir, urand(0, 2 * M_PI));
        mju_cross(t, dir, perp);
        turn(R, t, urand(-0.035, 0.035));
      }
      double anchor[3], neg[3] = {-dir[0], -dir[1], -dir[2]}, pos[3];
      double reach = extent(mj, gs, d[w]->geom_xmat + 9 * gs, dir);
      double low = -extent(mj, g, R, neg);
      for (int i = 0; i < 3; i++) anchor[i] = d[w]->geom_xpos[3 * gs + i] + reach * dir[i];
      for (int i = 0; i < 3; i++) pos[i] = anchor[i] + dir[i] * (depth - low);
      place_geom(mj, d[w], g, pos, R);
      slot++;
    }
    mj_forward(mj, d[w]);
  }
  return d;
}

static int run_case(const fshRunner* r, const Case* c, uint64_t seed) {
  char path[1024];
  snprintf(path, sizeof path, "%s", fs_test_model(c->model));
  printf("\n== %s (%s), %d worlds, %s\n", c->label, path, c->nworld, r->name);
  mjModel* mj = fs_test_load_model(path);
  mj->opt.disableflags |= c->disable;
  mj->opt.enableflags |= c->enable;
  if (c->enable & mjENBL_OVERRIDE) mj->opt.o_margin = 0.0015;
  fsModel m;
  fsError err;
  if (fs_model_build_for(mj, path, &m, FS_BUILD_COLLISION, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    mj_deleteModel(mj);
    return 1;
  }
  printf(" %d pairs, contact buffer %d per world\n", m.npair, m.nconmax);
  char* boundary = calloc((size_t)c->nworld, 1);
  mjData** ref = (c->shapes ? shape_worlds : convex_worlds)(mj, c->nworld, seed, boundary);
  fshTol tol = {kTol.rel, kTol.floor, kSkipBoundary ? boundary : NULL, NULL};
  fshContactStats s = fsh_contact_stats(mj, ref, c->nworld);
  printf(" MuJoCo's contacts: ncon %d..%d (mean %.1f), %d penetrating, %d within the margin, %d "
         "in the gap, at most %d per pair\n",
         s.ncon_min, s.ncon_max, (double)s.ncon_sum / s.nworld, s.penetrating, s.within_margin,
         s.in_gap, s.max_per_pair);
  fsWorlds b;
  int nbad = 0, rc = fs_worlds_alloc(&m, c->nworld, &b, &err);
  if (!rc) rc = r->open(r->self, &m, c->nworld, &err);
  if (rc == FS_TEST_SKIP) {
    nbad = FS_TEST_SKIP;
  } else if (rc) {
    fprintf(stderr, "%s\n", err.msg);
    nbad = 1;
  } else {
    printf(" collision alone (inputs from MuJoCo, outputs poisoned):\n");
    if (fsh_load_worlds(&m, &b, mj, ref, FS_STAGE_STATE) ||
        fsh_load_worlds(&m, &b, mj, ref, FS_STAGE_KINEMATICS))
      nbad++;
    fs_worlds_poison(&m, &b, FS_STAGE_COLLISION);
    if (!nbad && fsh_run(r, &b, FS_STAGE_COLLISION, 0)) nbad++;
    if (!nbad)
      nbad += fsh_compare_contacts("collision", &m, &b, ref, &tol, kTolBoundary, FS_STAGE_COLLISION,
                                   &g_worst_alone);
    printf(" kinematics + collision from the state (outputs poisoned):\n");
    if (fsh_load_worlds(&m, &b, mj, ref, FS_STAGE_STATE)) nbad++;
    fs_worlds_poison(&m, &b, FS_STAGE_KINEMATICS);
    fs_worlds_poison(&m, &b, FS_STAGE_COLLISION);
    if (!nbad && (fsh_run(r, &b, FS_STAGE_KINEMATICS, 0) || fsh_run(r, &b, FS_STAGE_COLLISION, 0)))
      nbad++;
    if (!nbad)
      nbad += fsh_compare_contacts("collision", &m, &b, ref, &tol, kTolBoundary, FS_STAGE_COLLISION,
                                   &g_worst_chain);
    r->close(r->self);
  }
  fs_worlds_free(&b);
  fsh_free_worlds(ref, c->nworld);
  free(boundary);
  fs_model_free(&m);
  mj_deleteModel(mj);
  if (nbad == FS_TEST_SKIP) return FS_TEST_SKIP;
  CHECK_MSG(nbad == 0, "%s: %d comparisons failed", c->label, nbad);
  return 0;
}

int main(void) {
  fshRunner r = fsh_runner();
  printf("tolerance: error = |ours - MuJoCo| / max(|MuJoCo|, %g * max|field in the world|) <= "
         "%g; counts, ids, dim and exclude exactly\n",
         kTol.floor, kTol.rel);
  const char *boxmesh = "cuda_contact_convex.xml", *shapes = "cuda_contact_shapes.xml";
  const Case cases[] = {
      {"box-mesh, multiccd", boxmesh, 0, 0, 0, 360},
      {"box-mesh, multiccd off", boxmesh, 0, mjDSBL_MULTICCD, 0, 36},
      {"box-mesh, override (margin everywhere)", boxmesh, 0, 0, mjENBL_OVERRIDE, 36},
      {"curved shapes, multiccd", shapes, 1, 0, 0, 360},
      {"curved shapes, multiccd off", shapes, 1, mjDSBL_MULTICCD, 0, 36},
      {"curved shapes, override (margin everywhere)", shapes, 1, 0, mjENBL_OVERRIDE, 36},
  };
  int ncase = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < ncase; i++) {
    Case c = cases[i];
    if (fs_test_small()) c.nworld /= 6; // the GPU simulator: 60, 6, 6 worlds each model
    if (run_case(&r, &c, 3000 + (uint64_t)i) == FS_TEST_SKIP) {
      printf("skipped: no CUDA device\n");
      return FS_TEST_SKIP;
    }
  }
  printf("\nworst error (%s): collision alone %.2e | after kinematics %.2e\n", r.name,
         g_worst_alone, g_worst_chain);
  return fs_test_finish("engine collision convex");
}
