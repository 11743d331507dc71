// The collision stage's sphere-cylinder collider (common/engine/collision_primitive.h:
// fsi_sphere_cylinder, MuJoCo's mjc_SphereCylinder) against MuJoCo's mj_collision, on
// tests/models/cuda_contact_cylinder.xml: three spheres (one thinner than the thinnest
// cylinder, one wider than the widest), each paired explicitly with three static
// cylinders and a free one.
//
// Every world its own MuJoCo state (seeded, printed): the free cylinder turned at random,
// then each sphere put at a random feature of a random cylinder -- beside its side, over a
// cap, at a rim, or its centre inside the cylinder (where the nearer of the side and the
// cap decides) -- at a distance in [-2.5 r, 0.02] from the feature (from deep inside to
// beyond the pairs' margins); and pairs of worlds one float64 ulp apart across a height
// where MuJoCo's contact count (or the count of contacts within the include margin)
// changes. Then, as tests/engine/test_collision.c:
//  1. the stage alone from MuJoCo's geom frames, outputs poisoned: ncon, order, pair,
//     geoms, dim and exclude equal, every real field compared;
//  2. kinematics then collision from the state alone.
// float64: bit-identical (bound 1e-9 of the field's scale, reported: 0 expected);
// float32: within the collision tests' bounds (1e-4 of scale; contacts only one side has
// within 1e-6 x the world's size of the threshold that decides them).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/random.h"
#include "common/parity/contacts.h"
#include "common/parity/harness.h"
#include "tests/engine/collision_passes.h"
#include "tests/engine/f32_sensitive.h"
#include "tests/testutil.h"

static const fshTol kTol = FSH_STAGE_TOL; // (common/parity/harness.h)
static const double kTolBoundary = FSH_CONTACT_BOUNDARY_TOL;

#define NWORLD    480 // placed worlds (96 in small mode)
#define NBOUNDARY 24  // pairs of worlds across a count boundary, at the end (8 in small mode)

enum { SIDE, CAP, RIM, INSIDE, NFEATURE }; // where a sphere's centre is put

// A uniformly random unit quaternion: a point of the 4-ball (drawn in the cube, rejected
// outside), normalised.
static void random_quat(mjtNum q[4]) {
  do {
    for (int k = 0; k < 4; k++) q[k] = fs_test_sym();
  } while (mju_dot(q, q, 4) > 1 || mju_dot(q, q, 4) < 1e-4);
  mju_normalize4(q);
}

// Put sphere body j's centre near cylinder c (frame from d's kinematics) at a random
// feature; counts the feature in count[].
static void place(const mjModel* mj, mjData* d, int j, int g, int c, int count[NFEATURE]) {
  const mjtNum *cpos = d->geom_xpos + 3 * c, *cmat = d->geom_xmat + 9 * c;
  double R = mj->geom_size[3 * c], H = mj->geom_size[3 * c + 1], r = mj->geom_size[3 * g];
  double th = 2 * mjPI * fs_random_uniform(), ct = cos(th), st = sin(th);
  int sgn = fs_random_uniform() < 0.5 ? -1 : 1, feature = fs_test_pick(NFEATURE);
  mjtNum p[3], n[3] = {0, 0, 0}; // cylinder frame: point on the feature, outward normal
  if (feature == SIDE) {
    p[0] = R * ct, p[1] = R * st, p[2] = H * fs_test_sym();
    n[0] = ct, n[1] = st;
  } else if (feature == CAP) {
    double rho = R * sqrt(fs_random_uniform());
    p[0] = rho * ct, p[1] = rho * st, p[2] = sgn * H;
    n[2] = sgn;
  } else if (feature == RIM) {
    double a = 0.2 + fs_random_uniform(), b = 0.2 + fs_random_uniform();
    p[0] = R * ct, p[1] = R * st, p[2] = sgn * H;
    n[0] = a * ct, n[1] = a * st, n[2] = sgn * b;
    mju_normalize3(n);
  } else { // the centre inside: no offset along a normal
    double rho = R * sqrt(fs_random_uniform());
    p[0] = rho * ct, p[1] = rho * st, p[2] = H * fs_test_sym();
  }
  count[feature]++;
  double dist = fs_random_uniform() < 0.15 ? -2.5 * r * fs_random_uniform()
                                           : -0.6 * r + (0.6 * r + 0.02) * fs_random_uniform();
  mjtNum pw[3], nw[3];
  mju_mulMatVec3(pw, cmat, p);
  mju_mulMatVec3(nw, cmat, n);
  mjtNum* q = d->qpos + mj->jnt_qposadr[j];
  for (int k = 0; k < 3; k++) q[k] = cpos[k] + pw[k] + (feature == INSIDE ? 0 : nw[k] * (r + dist));
  random_quat(q + 3);
}

static mjData** make_worlds(const mjModel* mj, int nworld, int nboundary, uint64_t seed) {
  fs_random_seed(seed);
  int ncyl = 0, cyl[8], count[NFEATURE] = {0};
  for (int g = 0; g < mj->ngeom && ncyl < 8; g++)
    if (mj->geom_type[g] == mjGEOM_CYLINDER) cyl[ncyl++] = g;
  mjData** d = calloc((size_t)nworld, sizeof *d);
  for (int w = 0; w < nworld; w++) {
    d[w] = fsh_keyframe_world(mj);
    for (int j = 0; j < mj->njnt; j++) { // the free cylinder turned at random, where it is
      int g = mj->body_geomadr[mj->jnt_bodyid[j]];
      if (mj->geom_type[g] == mjGEOM_CYLINDER) random_quat(d[w]->qpos + mj->jnt_qposadr[j] + 3);
    }
    mj_kinematics(mj, d[w]);
    for (int j = 0; j < mj->njnt; j++) {
      int g = mj->body_geomadr[mj->jnt_bodyid[j]];
      if (mj->geom_type[g] == mjGEOM_SPHERE) place(mj, d[w], j, g, cyl[fs_test_pick(ncyl)], count);
    }
  }
  int ball = mj_name2id(mj, mjOBJ_JOINT, "ball") >= 0 ? mj_name2id(mj, mjOBJ_JOINT, "ball") : 1;
  int z = mj->jnt_qposadr[ball] + 2, nbound = 0;
  for (int i = 0; i < nboundary; i++) {
    int w = nworld - 2 * (i + 1);
    nbound +=
        fsh_count_boundary(mj, d[w], d[w + 1], z, d[w]->qpos[z] - 0.05, d[w]->qpos[z] + 0.5, i % 2);
  }
  printf(" spheres placed: side %d, cap %d, rim %d, inside %d; %d pairs of worlds across a "
         "contact-count boundary\n",
         count[SIDE], count[CAP], count[RIM], count[INSIDE], nbound);
  for (int w = 0; w < nworld; w++) mj_forward(mj, d[w]);
  return d;
}

// What MuJoCo's contacts cover, by where the sphere's centre is against the cylinder.
static void print_coverage(const mjModel* mj, mjData* const* ref, int nworld) {
  int where[NFEATURE] = {0}, total = 0, pen = 0, gap = 0;
  for (int w = 0; w < nworld; w++) {
    const mjData* d = ref[w];
    for (int c = 0; c < d->ncon; c++) {
      const mjContact* k = &d->contact[c];
      int s = k->geom[0], cy = k->geom[1];
      const mjtNum *cpos = d->geom_xpos + 3 * cy, *cmat = d->geom_xmat + 9 * cy;
      mjtNum v[3], l[3];
      mju_sub3(v, d->geom_xpos + 3 * s, cpos);
      mju_mulMatTVec3(l, cmat, v);
      double R = mj->geom_size[3 * cy], H = mj->geom_size[3 * cy + 1];
      int side = fabs(l[2]) < H, cap = l[0] * l[0] + l[1] * l[1] < R * R;
      where[side && cap ? INSIDE : side ? SIDE : cap ? CAP : RIM]++;
      total++;
      pen += k->dist < 0;
      gap += k->dist >= k->includemargin;
    }
  }
  printf(" MuJoCo's contacts: %d in %d worlds, the sphere's centre beside the side %d, over a "
         "cap %d, off a rim %d, inside %d; %d penetrating, %d in a gap\n",
         total, nworld, where[SIDE], where[CAP], where[RIM], where[INSIDE], pen, gap);
  CHECK_MSG(where[SIDE] && where[CAP] && where[RIM] && where[INSIDE],
            "every branch of mjc_SphereCylinder has contacts");
}

int main(void) {
  fshRunner r = fsh_runner();
  char path[1024];
  snprintf(path, sizeof path, "%s", fs_test_model("cuda_contact_cylinder.xml"));
  mjModel* mj = fs_test_load_model(path);
  fsModel m;
  fsError err;
  if (fs_model_build_for(mj, path, &m, FS_BUILD_COLLISION, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  int nboundary = fs_test_small() ? 8 : NBOUNDARY;
  int N = (fs_test_small() ? 96 : NWORLD) + 2 * nboundary;
  uint64_t seed = 5151;
  printf("sphere-cylinder collider (%s), %d pairs, %d worlds, seed %llu, %s\n", path, m.npair, N,
         (unsigned long long)seed, r.name);
  mjData** ref = make_worlds(mj, N, nboundary, seed);
#ifdef FS_REAL_FLOAT
  N = fs_test_keep_resolvable(mj, ref, N);
#endif
  print_coverage(mj, ref, N);
  double worst[2];
  int nbad = fs_test_collision_passes(&r, &m, mj, ref, N, &kTol, kTolBoundary, worst);
  if (nbad < 0) { // no GPU, or an error: free what was made (LeakSanitizer)
    fsh_free_worlds(ref, N);
    fs_model_free(&m);
    mj_deleteModel(mj);
    if (nbad == FS_TEST_NO_DEVICE) printf("skipped: no CUDA device\n");
    return nbad == FS_TEST_NO_DEVICE ? FS_TEST_SKIP : 1;
  }
  CHECK_MSG(nbad == 0, "sphere-cylinder collider: %d comparisons failed", nbad);
  fsh_free_worlds(ref, N);
  fs_model_free(&m);
  mj_deleteModel(mj);
  return fs_test_finish("sphere-cylinder collider");
}
