// The static pair culling (common/engine/collision_cull.h) and the collision stage over it, against
// MuJoCo's mj_collision, on FlyGym's rough terrains with the capsule fly
// (assets/worlds/{gapped,blocks,mixed}_capsule.mjb) and on the box colliders' test model
// (tests/models/cuda_contact_box.xml, its boxes static).
//
// Every world its own MuJoCo state (seeded): the fly (or each free body) put over a random
// place of a random static geom, turned about z at random and tilted by up to 0.15 rad,
// hinges +-0.3 rad, then lowered until MuJoCo first reports a contact and further by 0 to
// 0.3 (or raised by up to 0.01: contacts only in the margin, or none). Each case
// with the model's margins and with the override flag's margin 0.05 (contacts detected
// far out; the culling's reach must grow with it). Checked in every world:
//  1. every pair MuJoCo reports a contact for is one of the world's candidates
//     (cand_pair[0..ncand)), the candidates are distinct and in increasing pair order,
//     and none was dropped (cand_overflow 0);
//  2. the contacts equal MuJoCo's (tests/engine/test_collision.c's comparison: float64
//     bit-identical, float32 within its bounds on the worlds float32 can resolve:
//     tests/engine/f32_sensitive.h);
//  3. a candidate buffer one short of the busiest world's: the worlds that need more keep
//     ncandmax candidates, the rest counted (cand_overflow) and warned (CONTACTFULL): a
//     problem world, never silent;
// and printed: the candidates per world against the model's pairs.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/random.h"
#include "common/parity/contacts.h"
#include "common/parity/harness.h"
#include "tests/engine/f32_sensitive.h"
#include "tests/testutil.h"

static const fshTol kTol = FSH_STAGE_TOL; // (common/parity/harness.h)
static const double kTolBoundary = FSH_CONTACT_BOUNDARY_TOL;

// MuJoCo's contact count at the state in d.
static int ncontacts(const mjModel* mj, mjData* d) {
  mj_kinematics(mj, d);
  mj_collision(mj, d);
  return d->ncon;
}

// Is geom g static (welded to the world, no mocap body)?
static int is_static(const mjModel* mj, int g) {
  int b = mj->geom_bodyid[g];
  if (mj->body_weldid[b]) return 0;
  for (; b > 0; b = mj->body_parentid[b])
    if (mj->body_mocapid[b] >= 0) return 0;
  return 1;
}

// A world: each free body over a random place of a random static geom (not a plane),
// turned, then lowered alone (the others far above) until MuJoCo first reports a contact,
// and further by 0 to 0.3 (or raised by up to 0.01: contacts only in the margin, or none).
static mjData* make_world(const mjModel* mj, const int* statics, int nstatic, const mjData* d0) {
  mjData* d = fsh_keyframe_world(mj);
  int nfree = 0, adr[16];
  double base_z[16];
  for (int j = 0; j < mj->njnt; j++) {
    mjtNum* q = d->qpos + mj->jnt_qposadr[j];
    if (mj->jnt_type[j] == mjJNT_HINGE) q[0] += 0.3 * fs_test_sym();
    if (mj->jnt_type[j] != mjJNT_FREE || nfree == 16) continue;
    adr[nfree++] = mj->jnt_qposadr[j] + 2;
    int g = statics[(int)(fs_random_uniform() * nstatic) % nstatic];
    base_z[nfree - 1] = d0->geom_xpos[3 * g + 2]; // the body at the geom's centre: touching
    double half = 0.7 * mj->geom_rbound[g];
    q[0] = d0->geom_xpos[3 * g] + half * fs_test_sym();
    q[1] = d0->geom_xpos[3 * g + 1] + half * fs_test_sym();
    mjtNum yaw[4], tilt[4], axis[3] = {fs_test_sym(), fs_test_sym(), 0}, z[3] = {0, 0, 1}, q0[4];
    mju_normalize3(axis);
    mju_axisAngle2Quat(yaw, z, M_PI * fs_test_sym());
    mju_axisAngle2Quat(tilt, axis, 0.15 * fs_test_sym());
    mju_copy4(q0, q + 3);
    mju_mulQuat(q + 3, yaw, q0);
    mju_mulQuat(q0, tilt, q + 3);
    mju_copy4(q + 3, q0);
  }
  double base[16];
  for (int k = 0; k < nfree; k++) base[k] = base_z[k];
  for (int k = 0; k < nfree; k++) {
    for (int o = 0; o < nfree; o++) d->qpos[adr[o]] = o < k ? d->qpos[adr[o]] : base[o] + 100;
    double top = 3, bottom = 0;
    for (int it = 0; it < 50; it++) {
      double mid = 0.5 * (top + bottom);
      d->qpos[adr[k]] = base[k] + mid;
      if (ncontacts(mj, d))
        bottom = mid;
      else
        top = mid;
    }
    double u = fs_random_uniform();
    double dz = fs_random_uniform() < 0.15 ? 0.01 * u : -0.3 * u * u;
    d->qpos[adr[k]] = base[k] + bottom + dz;
  }
  mj_forward(mj, d);
  return d;
}

// A candidate buffer one short of the busiest world's need: that world keeps ncandmax
// candidates, counts the rest in cand_overflow and raises CONTACTFULL (a problem world);
// the worlds that fit are untouched (the same candidates).
static int overflow(const fshRunner* r, const fsModel* m0, const mjModel* mj, mjData** ref,
                    int nworld, int most) {
  fsModel m = *m0;
  m.ncandmax = most - 1;
  m.nprecon = m.ncandmax * m.nslot;
  m.nconmax = m.nconmax < m.nprecon ? m.nconmax : m.nprecon;
  fsWorlds b;
  fsError err;
  int nbad = 0, rc = fs_worlds_alloc(&m, nworld, &b, &err);
  if (!rc) rc = r->open(r->self, &m, nworld, &err);
  if (rc) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  if (fsh_load_worlds(&m, &b, mj, ref, FS_STAGE_STATE) || fsh_run(r, &b, FS_STAGE_KINEMATICS, 0) ||
      fsh_run(r, &b, FS_STAGE_COLLISION, 0))
    nbad++;
  int flagged = 0;
  for (int w = 0; w < nworld && !nbad; w++) {
    fsData d = fs_worlds_view(&m, &b, w);
    int warned = d.warning_number[FS_WARN_CONTACTFULL] - ref[w]->warning[mjWARN_CONTACTFULL].number;
    int over = d.cand_overflow[0];
    flagged += over > 0;
    if (d.ncand[0] > m.ncandmax || (over > 0) != (warned > 0) ||
        (over > 0 && d.ncand[0] != m.ncandmax)) {
      printf("  candidate overflow: world %d: ncand %d, overflow %d, warned %d  <-- FAIL\n", w,
             d.ncand[0], over, warned);
      nbad++;
    }
  }
  if (!flagged) nbad++;
  printf("  candidates held to %d: %d world%s dropped some, each counted and warned: %s\n",
         m.ncandmax, flagged, flagged == 1 ? "" : "s", nbad ? "FAIL" : "flagged, never silent");
  r->close(r->self);
  fs_worlds_free(&b);
  return nbad;
}

static int run_case(const fshRunner* r, const char* label, const char* path, double o_margin,
                    int nworld, uint64_t seed) {
  mjModel* mj = fs_test_load_model(path);
  if (o_margin > 0) {
    mj->opt.enableflags |= mjENBL_OVERRIDE;
    mj->opt.o_margin = o_margin;
  }
  fsModel m;
  fsError err;
  if (fs_model_build_for(mj, path, &m, FS_BUILD_COLLISION, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    mj_deleteModel(mj);
    return 1;
  }
  // the static geoms (not planes), placed
  mjData* d0 = mj_makeData(mj);
  mj_kinematics(mj, d0);
  int nstatic = 0;
  int* statics = calloc((size_t)mj->ngeom, sizeof(int));
  for (int g = 0; g < mj->ngeom; g++)
    if (is_static(mj, g) && mj->geom_type[g] != mjGEOM_PLANE) statics[nstatic++] = g;
  printf("\n== %s (%s), %d worlds, %s: %d pairs (%d culled), %d moving x %d static geoms, grid "
         "%d x %d, %d candidates a world at most, %d contacts\n",
         label, path, nworld, r->name, m.npair, m.npair - m.nalways, m.ncullgeom, m.ncullstatic,
         m.grid_n[0], m.grid_n[1], m.ncandmax, m.nconmax);
  fs_random_seed(seed);
  mjData** ref = calloc((size_t)nworld, sizeof *ref);
  for (int w = 0; w < nworld; w++) ref[w] = make_world(mj, statics, nstatic, d0);
  mj_deleteData(d0);
  free(statics);
#ifdef FS_REAL_FLOAT
  nworld = fs_test_keep_resolvable(mj, ref, nworld);
#endif
  fsWorlds b;
  int nbad = 0, rc = fs_worlds_alloc(&m, nworld, &b, &err);
  if (!rc) rc = r->open(r->self, &m, nworld, &err);
  if (rc == FS_TEST_SKIP) { // no GPU: free what the case made (LeakSanitizer)
    fs_worlds_free(&b);
    fsh_free_worlds(ref, nworld);
    fs_model_free(&m);
    mj_deleteModel(mj);
    return FS_TEST_SKIP;
  }
  if (rc) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  if (fsh_load_worlds(&m, &b, mj, ref, FS_STAGE_STATE)) nbad++;
  fs_worlds_poison(&m, &b, FS_STAGE_KINEMATICS);
  fs_worlds_poison(&m, &b, FS_STAGE_COLLISION);
  if (fsh_run(r, &b, FS_STAGE_KINEMATICS, 0) || fsh_run(r, &b, FS_STAGE_COLLISION, 0)) nbad++;
  long cand_sum = 0, con_sum = 0;
  int cand_max = 0, missing = 0;
  for (int w = 0; w < nworld && !nbad; w++) {
    fsData d = fs_worlds_view(&m, &b, w);
    int nc = d.ncand[0];
    cand_sum += nc;
    cand_max = nc > cand_max ? nc : cand_max;
    con_sum += ref[w]->ncon;
    if (d.cand_overflow[0]) {
      printf("  world %d: %d candidates dropped  <-- FAIL\n", w, d.cand_overflow[0]);
      nbad++;
    }
    for (int i = 1; i < nc; i++)
      if (d.cand_pair[i] <= d.cand_pair[i - 1]) {
        printf("  world %d: candidates %d, %d out of pair order  <-- FAIL\n", w, i - 1, i);
        nbad++;
        break;
      }
    for (int c = 0; c < ref[w]->ncon; c++) {
      int p = fs_contact_pair(&m, &ref[w]->contact[c]), found = 0;
      for (int i = 0; i < nc && !found; i++) found = d.cand_pair[i] == p;
      if (!found) {
        if (missing++ < 5)
          printf("  world %d: MuJoCo's contact %d (pair %d, dist %.6g) not a candidate  <-- FAIL\n",
                 w, c, p, ref[w]->contact[c].dist);
        nbad++;
      }
    }
  }
  printf("  candidates: %.1f a world on average, %d at most (of %d pairs); MuJoCo's contacts %.1f "
         "a world; contact pairs not candidates: %d\n",
         (double)cand_sum / nworld, cand_max, m.npair, (double)con_sum / nworld, missing);
  double worst = 0;
  nbad += fsh_compare_contacts("collision", &m, &b, ref, &kTol, kTolBoundary, FS_STAGE_COLLISION,
                               &worst);
  r->close(r->self);
  fs_worlds_free(&b);
  if (m.ncullgeom && cand_max > 1) nbad += overflow(r, &m, mj, ref, nworld, cand_max);
  fsh_free_worlds(ref, nworld);
  fs_model_free(&m);
  mj_deleteModel(mj);
  CHECK_MSG(nbad == 0, "%s: %d checks failed", label, nbad);
  return 0;
}

int main(void) {
  fshRunner r = fsh_runner();
  char box[1024], gapped[1024], blocks[1024], mixed[1024];
  snprintf(box, sizeof box, "%s", fs_test_model("cuda_contact_box.xml"));
  snprintf(gapped, sizeof gapped, "%s", fs_test_asset("worlds/gapped_capsule.mjb"));
  snprintf(blocks, sizeof blocks, "%s", fs_test_asset("worlds/blocks_capsule.mjb"));
  snprintf(mixed, sizeof mixed, "%s", fs_test_asset("worlds/mixed_capsule.mjb"));
  struct {
    const char *label, *path;
    double o_margin;
    int nworld;
  } cases[] = {
      {"box colliders' model", box, 0, 64}, {"box colliders' model, margin 0.05", box, 0.05, 64},
      {"gapped, capsules", gapped, 0, 24},  {"gapped, capsules, margin 0.05", gapped, 0.05, 12},
      {"blocks, capsules", blocks, 0, 24},  {"blocks, capsules, margin 0.05", blocks, 0.05, 12},
      {"mixed, capsules", mixed, 0, 24},    {"mixed, capsules, margin 0.05", mixed, 0.05, 12},
  };
  // small mode (the GPU simulator): a sixth of the worlds, at least 2
  for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
    int nworld =
        fs_test_small() ? (cases[i].nworld / 6 > 2 ? cases[i].nworld / 6 : 2) : cases[i].nworld;
    if (run_case(&r, cases[i].label, cases[i].path, cases[i].o_margin, nworld,
                 7000 + (uint64_t)i) == FS_TEST_SKIP) {
      printf("skipped: no CUDA device\n");
      return FS_TEST_SKIP;
    }
  }
  return fs_test_finish("static pair culling");
}
