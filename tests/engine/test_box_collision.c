// The collision stage's box colliders (common/engine/collision_box.h: fsi_capsule_box,
// fsi_sphere_box: MuJoCo's mjc_CapsuleBox and mjc_SphereBox) against MuJoCo's
// mj_collision, on tests/models/cuda_contact_box.xml: a short and a long capsule and a
// sphere, free, each paired explicitly with six static boxes (a slab, a turned cube, two
// blocks with a gap between them, a thin turned plank, a long bar).
//
// Every world its own MuJoCo state (seeded, printed): each free body put at a random
// feature of a random box -- a face, an edge, a corner, or (the blocks) across the gap
// between them -- at a distance from it in [-2.5 r, 0.02] (from deep inside to beyond
// the pairs' margins), its axis turned at random, along a box axis exactly, in the
// face's plane, or at the box, then tilted by 0 to 0.1 rad; and pairs of worlds one
// float64 ulp apart across a height where MuJoCo's contact count (or the count of
// contacts within the include margin) changes. Then, as tests/engine/test_collision.c:
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

static void unit(mjtNum v[3]) {
  mju_normalize3(v);
}

// Quaternion turning the z axis onto unit vector a.
static void quat_z_to(mjtNum q[4], const mjtNum a[3]) {
  mjtNum z[3] = {0, 0, 1}, axis[3];
  mju_cross(axis, z, a);
  mjtNum s = mju_normalize3(axis), c = a[2];
  if (s < 1e-12) {
    axis[0] = 1, axis[1] = axis[2] = 0;
  }
  mju_axisAngle2Quat(q, axis, atan2(s, c));
}

// Put free body j's geom g near box b in world d: a feature of the box (face, edge,
// corner, or the gap when b is one of the two blocks), a distance, an orientation.
static void place(const mjModel* mj, mjData* d, int j, int g, int b, int gap_a, int gap_b) {
  const mjtNum *bpos = mj->geom_pos + 3 * b, *bsize = mj->geom_size + 3 * b;
  mjtNum bmat[9];
  mju_quat2Mat(bmat, mj->geom_quat + 4 * b);
  double r = mj->geom_size[3 * g];
  double half = mj->geom_type[g] == mjGEOM_CAPSULE ? mj->geom_size[3 * g + 1] : 0;
  int feature = fs_test_pick(3);
  mjtNum p[3], n[3] = {0, 0, 0}; // box frame: point on the feature, outward normal
  int sgn[3];
  for (int k = 0; k < 3; k++) {
    sgn[k] = fs_random_uniform() < 0.5 ? -1 : 1;
    p[k] = bsize[k] * fs_test_sym();
  }
  int f = fs_test_pick(3);
  if (feature == 0) { // a face
    p[f] = sgn[f] * bsize[f];
    n[f] = sgn[f];
  } else if (feature == 1) { // an edge along axis f
    for (int k = 0; k < 3; k++)
      if (k != f) {
        p[k] = sgn[k] * bsize[k];
        n[k] = sgn[k] * (0.2 + fs_random_uniform());
      }
  } else { // a corner
    for (int k = 0; k < 3; k++) {
      p[k] = sgn[k] * bsize[k];
      n[k] = sgn[k] * (0.2 + fs_random_uniform());
    }
  }
  unit(n);
  mjtNum pw[3], nw[3];
  mju_mulMatVec3(pw, bmat, p);
  mju_addTo3(pw, bpos);
  mju_mulMatVec3(nw, bmat, n);
  if ((b == gap_a || b == gap_b) && fs_random_uniform() < 0.4) { // across the gap
    const mjtNum *pa = mj->geom_pos + 3 * gap_a, *pb = mj->geom_pos + 3 * gap_b;
    pw[0] = 0.5 * ((pa[0] + mj->geom_size[3 * gap_a]) + (pb[0] - mj->geom_size[3 * gap_b]));
    pw[1] = pa[1] + 0.3 * fs_test_sym();
    pw[2] = pa[2] + mj->geom_size[3 * gap_a + 2];
    nw[0] = nw[1] = 0, nw[2] = 1;
  }
  // the axis: random, along a box axis exactly, in the feature's tangent plane, at the box
  mjtNum a[3];
  int turn = fs_test_pick(4);
  if (turn == 0) {
    for (int k = 0; k < 3; k++) a[k] = fs_test_sym();
  } else if (turn == 1) {
    int k = fs_test_pick(3);
    for (int i = 0; i < 3; i++) a[i] = bmat[3 * i + k];
  } else if (turn == 2) {
    mjtNum t[3] = {fs_test_sym(), fs_test_sym(), fs_test_sym()};
    mju_addToScl3(t, nw, -mju_dot3(t, nw));
    mju_copy3(a, t);
  } else {
    mju_copy3(a, nw);
  }
  unit(a);
  if (fs_random_uniform() < 0.5) { // tilted
    mjtNum t[3] = {fs_test_sym(), fs_test_sym(), fs_test_sym()};
    mju_addToScl3(a, t, 0.1 * fs_random_uniform() * fs_random_uniform());
    unit(a);
  }
  double dist = fs_random_uniform() < 0.15 ? -2.5 * r * fs_random_uniform()
                                           : -0.6 * r + (0.6 * r + 0.02) * fs_random_uniform();
  mjtNum c[3];
  for (int k = 0; k < 3; k++) c[k] = pw[k] + nw[k] * (r + dist) + a[k] * half * fs_test_sym();
  // body pose: the geom's frame is the body's turned by geom_quat (geom_pos is 0)
  mjtNum want[4], inv[4];
  quat_z_to(want, a);
  mju_negQuat(inv, mj->geom_quat + 4 * g);
  mjtNum* q = d->qpos + mj->jnt_qposadr[j];
  mju_copy3(q, c);
  mju_mulQuat(q + 3, want, inv);
  mju_normalize4(q + 3);
}

// Worlds a and b across a height of body 0 where MuJoCo's count (mode) changes: a's
// state, heights adjacent doubles. 0 if the count does not change in the range.
static int boundary_pair(const mjModel* mj, mjData* a, mjData* b, int mode) {
  int z = mj->jnt_qposadr[0] + 2;
  return fsh_count_boundary(mj, a, b, z, a->qpos[z] - 0.05, a->qpos[z] + 0.5, mode);
}

static mjData** make_worlds(const mjModel* mj, int nworld, int nboundary, uint64_t seed) {
  fs_random_seed(seed);
  int gap_a = mj_name2id(mj, mjOBJ_GEOM, "block_a"), gap_b = mj_name2id(mj, mjOBJ_GEOM, "block_b");
  int nbox = 0, boxes[16];
  for (int g = 0; g < mj->ngeom && nbox < 16; g++)
    if (mj->geom_type[g] == mjGEOM_BOX) boxes[nbox++] = g;
  mjData** d = calloc((size_t)nworld, sizeof *d);
  for (int w = 0; w < nworld; w++) {
    d[w] = fsh_keyframe_world(mj);
    for (int j = 0; j < mj->njnt; j++) {
      int body = mj->jnt_bodyid[j], g = mj->body_geomadr[body];
      place(mj, d[w], j, g, boxes[fs_test_pick(nbox)], gap_a, gap_b);
    }
  }
  int nbound = 0;
  for (int i = 0; i < nboundary; i++) {
    int w = nworld - 2 * (i + 1);
    nbound += boundary_pair(mj, d[w], d[w + 1], i % 2);
  }
  printf(" %d pairs of worlds across a contact-count boundary\n", nbound);
  for (int w = 0; w < nworld; w++) mj_forward(mj, d[w]);
  return d;
}

// What MuJoCo's contacts cover: pairs with 1 and 2 contacts, penetrating, in the gap.
static void print_coverage(const mjModel* mj, mjData* const* ref, int nworld) {
  int one = 0, two = 0, pen = 0, gap = 0, total = 0, deep = 0;
  for (int w = 0; w < nworld; w++) {
    const mjData* d = ref[w];
    for (int c = 0; c < d->ncon; c++) {
      const mjContact* k = &d->contact[c];
      total++;
      pen += k->dist < 0;
      gap += k->dist >= k->includemargin;
      int g = mj->geom_type[k->geom[0]] == mjGEOM_BOX ? k->geom[1] : k->geom[0];
      deep += k->dist < -mj->geom_size[3 * g];
      int same = c + 1 < d->ncon && d->contact[c + 1].geom[0] == k->geom[0] &&
                 d->contact[c + 1].geom[1] == k->geom[1];
      if (same) {
        two++;
        c++;
        total++;
      } else {
        one++;
      }
    }
  }
  printf(" MuJoCo's contacts: %d in %d worlds; pairs with 1 contact %d, with 2 %d; %d "
         "penetrating (%d deeper than the radius), %d in a gap\n",
         total, nworld, one, two, pen, deep, gap);
}

int main(void) {
  fshRunner r = fsh_runner();
  char path[1024];
  snprintf(path, sizeof path, "%s", fs_test_model("cuda_contact_box.xml"));
  mjModel* mj = fs_test_load_model(path);
  fsModel m;
  fsError err;
  if (fs_model_build_for(mj, path, &m, FS_BUILD_COLLISION, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  int nboundary = fs_test_small() ? 8 : NBOUNDARY;
  int N = (fs_test_small() ? 96 : NWORLD) + 2 * nboundary;
  uint64_t seed = 4242;
  printf("box colliders (%s), %d pairs, %d worlds, seed %llu, %s\n", path, m.npair, N,
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
  CHECK_MSG(nbad == 0, "box colliders: %d comparisons failed", nbad);
  fsh_free_worlds(ref, N);
  fs_model_free(&m);
  mj_deleteModel(mj);
  return fs_test_finish("box colliders");
}
