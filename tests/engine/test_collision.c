// The collision stage (common/engine/stage_collision.h) against MuJoCo's
// mj_collision, on NeuroMechFly (meshes and capsules) and on our own models of
// primitives and inline meshes, and of moving bodies that collide by contype/conaffinity
// (the broadphase's pairs, filterparent, <exclude>, the midphase's order:
// tests/models/cuda_contact_*.xml).
//
// For every case, in every world a different MuJoCo reference state with contacts
// (common/parity/contacts.h: seeded noise, printed; bodies lowered onto their planes;
// meshes on a face, an edge, a vertex, their largest polygon; pairs of worlds one
// float64 ulp either side of a contact-count boundary):
//  1. the stage alone: geom frames from MuJoCo, its outputs poisoned with NaN,
//     ncon and every field of every contact compared with d->contact (the worst
//     world, contact and column printed per field);
//  2. kinematics then collision from the state alone (geom placement included);
//  3. the contact buffer lowered below what the busiest world needs: the first
//     contacts kept (as the full buffer had them), the rest counted
//     (contact_overflow) and warned, never silent.
// Built four times: host float64, host float32, host float64 on emulated lanes (the
// device's default width; ThreadSanitizer), and cuda (77 without a GPU).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parity/contacts.h"
#include "common/parity/harness.h"
#include "tests/testutil.h"

typedef struct Case {
  const char* label;
  const char* path;
  int disable, enable; // mjtDisableBit / mjtEnableBit flags added to the model's
  int nograph;         // drop the meshes' hull graphs (MuJoCo's exhaustive searches)
  int nworld;
  fshContactNoise noise;
} Case;

static const fshTol kTol = FSH_STAGE_TOL; // (common/parity/harness.h)
static const double kTolBoundary = FSH_CONTACT_BOUNDARY_TOL;

static double g_worst_alone, g_worst_chain;
static fsWorlds g_batch;

static void print_stats(const mjModel* mj, mjData* const* ref, int nworld) {
  fshContactStats s = fsh_contact_stats(mj, ref, nworld);
  printf(" MuJoCo's contacts: %d worlds, ncon %d..%d (mean %.1f), %d penetrating, %d within "
         "the margin, %d in the gap, at most %d per pair\n",
         s.nworld, s.ncon_min, s.ncon_max, (double)s.ncon_sum / s.nworld, s.penetrating,
         s.within_margin, s.in_gap, s.max_per_pair);
}

// 1. The stage alone, from MuJoCo's geom frames.
static int alone(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref) {
  printf(" collision alone (inputs from MuJoCo, outputs poisoned):\n");
  if (fsh_load_worlds(m, &g_batch, mj, ref, FS_STAGE_STATE) ||
      fsh_load_worlds(m, &g_batch, mj, ref, FS_STAGE_KINEMATICS))
    return 1;
  fs_worlds_poison(m, &g_batch, FS_STAGE_COLLISION);
  if (fsh_run(r, &g_batch, FS_STAGE_COLLISION, 0)) return 1;
  return fsh_compare_contacts("collision", m, &g_batch, ref, &kTol, kTolBoundary,
                              FS_STAGE_COLLISION, &g_worst_alone);
}

// 2. Kinematics, then collision, from the state.
static int chained(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref) {
  printf(" kinematics + collision from the state (outputs poisoned):\n");
  if (fsh_load_worlds(m, &g_batch, mj, ref, FS_STAGE_STATE)) return 1;
  fs_worlds_poison(m, &g_batch, FS_STAGE_KINEMATICS);
  fs_worlds_poison(m, &g_batch, FS_STAGE_COLLISION);
  if (fsh_run(r, &g_batch, FS_STAGE_KINEMATICS, 0) || fsh_run(r, &g_batch, FS_STAGE_COLLISION, 0))
    return 1;
  static const char* geoms[] = {"geom_xpos", "geom_xmat", NULL};
  int nbad = fsh_compare_fields("kinematics", m, &g_batch, geoms, ref, &kTol, NULL);
  return nbad + fsh_compare_contacts("collision", m, &g_batch, ref, &kTol, kTolBoundary,
                                     FS_STAGE_COLLISION, &g_worst_chain);
}

// 3. A contact buffer one contact short of what the busiest world needs (the runner
// is reopened for it; kinematics and collision from the state, as 2.): every world keeps the first
// min(need, nconmax) of the contacts the full buffer gave (bit for bit), counts the rest in
// contact_overflow and warns once (MuJoCo's CONTACTFULL) when it dropped any.
static int overflow(const fshRunner* r, const fsModel* m0, const mjModel* mj, mjData** ref) {
  int N = g_batch.nworld, nbad = 0, wmax = 0;
  fsWorlds full = g_batch; // the full buffer's contacts, from the chained run
  for (int w = 1; w < N; w++)
    if (fs_worlds_view(m0, &full, w).ncon[0] > fs_worlds_view(m0, &full, wmax).ncon[0]) wmax = w;
  int most = fs_worlds_view(m0, &full, wmax).ncon[0];
  if (most < 2) return 0;
  fsModel m = *m0;
  m.nconmax = most - 1;
  fsError err;
  int rc = fs_worlds_alloc(&m, N, &g_batch, &err);
  if (!rc) rc = r->open(r->self, &m, N, &err);
  if (rc) {
    fprintf(stderr, "%s\n", err.msg);
    g_batch = full;
    return 1;
  }
  if (fsh_load_worlds(&m, &g_batch, mj, ref, FS_STAGE_STATE)) nbad++; // as the chained run 2.
  fs_worlds_poison(&m, &g_batch, FS_STAGE_KINEMATICS);
  fs_worlds_poison(&m, &g_batch, FS_STAGE_COLLISION);
  if (!nbad &&
      (fsh_run(r, &g_batch, FS_STAGE_KINEMATICS, 0) || fsh_run(r, &g_batch, FS_STAGE_COLLISION, 0)))
    nbad++;
  for (int w = 0; w < N && !nbad; w++) {
    fsData d = fs_worlds_view(&m, &g_batch, w), f = fs_worlds_view(m0, &full, w);
    int need = f.ncon[0], kept = need < m.nconmax ? need : m.nconmax;
    int warned = d.warning_number[FS_WARN_CONTACTFULL] - ref[w]->warning[mjWARN_CONTACTFULL].number;
    if (d.ncon[0] != kept || d.contact_overflow[0] != need - kept || warned != (need > kept)) {
      printf("  overflow: world %d needs %d, holds %d: ncon %d, overflow %d, warned %d  <-- FAIL\n",
             w, need, m.nconmax, d.ncon[0], d.contact_overflow[0], warned);
      nbad++;
    }
    for (int c = 0; c < kept && !nbad; c++)
      if (d.contact_pair[c] != f.contact_pair[c] || d.contact_dist[c] != f.contact_dist[c] ||
          memcmp(d.contact_frame + 9 * c, f.contact_frame + 9 * c, 9 * sizeof(fsReal))) {
        printf("  overflow: world %d contact %d differs from the full buffer's  <-- FAIL\n", w, c);
        nbad++;
      }
  }
  printf("  %-22s world %d needs %d contacts, the buffer holds %d: %s\n", "overflow", wmax, most,
         m.nconmax, nbad ? "FAIL" : "the first kept, the rest counted and warned");
  r->close(r->self);
  fs_worlds_free(&g_batch);
  g_batch = full;
  return nbad;
}

static int run_case(const fshRunner* r, const Case* c, uint64_t seed) {
  printf("\n== %s (%s), %d worlds, %s\n", c->label, c->path, c->nworld, r->name);
  mjModel* mj = fs_test_load_model(c->path);
  mj->opt.disableflags |= c->disable;
  mj->opt.enableflags |= c->enable;
  for (int k = 0; c->nograph && k < mj->nmesh; k++) mj->mesh_graphadr[k] = -1;
  fsModel m;
  fsError err;
  if (fs_model_build_for(mj, c->path, &m, FS_BUILD_COLLISION, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    mj_deleteModel(mj);
    return 1;
  }
  printf(" %d pairs, contact buffer %d per world\n", m.npair, m.nconmax);
  mjData** ref = fsh_contact_worlds(mj, c->nworld, seed, &c->noise);
  print_stats(mj, ref, c->nworld);
  int nbad = 0, rc = fs_worlds_alloc(&m, c->nworld, &g_batch, &err);
  if (!rc) rc = r->open(r->self, &m, c->nworld, &err);
  if (rc == FS_TEST_SKIP) {
    nbad = FS_TEST_SKIP;
  } else if (rc) {
    fprintf(stderr, "%s\n", err.msg);
    nbad = 1;
  } else {
    nbad += alone(r, &m, mj, ref);
    nbad += chained(r, &m, mj, ref);
    r->close(r->self);
    nbad += overflow(r, &m, mj, ref);
  }
  fs_worlds_free(&g_batch);
  fsh_free_worlds(ref, c->nworld);
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
  // fs_test_model/fs_test_asset return rotating buffers: keep copies.
  char prim[1024], mesh[1024], fly[1024], flycap[1024], bodies[1024];
  snprintf(prim, sizeof prim, "%s", fs_test_model("cuda_contact_primitives.xml"));
  snprintf(mesh, sizeof mesh, "%s", fs_test_model("cuda_contact_mesh.xml"));
  snprintf(fly, sizeof fly, "%s", fs_test_asset("mesh.mjb"));
  snprintf(flycap, sizeof flycap, "%s", fs_test_asset("capsule.mjb"));
  snprintf(bodies, sizeof bodies, "%s", fs_test_model("cuda_contact_bodies.xml"));
  // noise: hinge rad, free rotation rad, anchor distance [lo, hi], kmax, presets, boundary
  const fshContactNoise prim_noise = {0, 3.2, -0.03, 0.02, 2, 0, 3};
  const fshContactNoise mesh_noise = {0, 3.2, -0.02, 0.01, 1, 8, 3};
  const fshContactNoise fly_noise = {0.3, 0.3, -0.02, 0.002, 10, 0, 2};
  const fshContactNoise fly_touch = {0.3, 0.3, -0.0005, 0.0015, 3, 0, 1}; // about the margin
  const fshContactNoise bodies_noise = {1.5, 3.2, -0.02, 0.01, 1, 0, 2};  // arms anywhere
  const Case cases[] = {
      {"primitives", prim, 0, 0, 0, 24, prim_noise},
      {"primitives, override", prim, 0, mjENBL_OVERRIDE, 0, 8, prim_noise},
      {"meshes", mesh, 0, 0, 0, 24, mesh_noise},
      {"meshes without hull graphs", mesh, 0, 0, 1, 12, mesh_noise},
      {"NeuroMechFly, meshes", fly, 0, 0, 0, 16, fly_noise},
      {"NeuroMechFly, meshes, touching", fly, 0, 0, 0, 8, fly_touch},
      {"NeuroMechFly, meshes, multiccd off", fly, mjDSBL_MULTICCD, 0, 0, 8, fly_noise},
      {"NeuroMechFly, capsules", flycap, 0, 0, 0, 16, fly_noise},
      {"NeuroMechFly, contacts off", fly, mjDSBL_CONTACT, 0, 0, 2, fly_noise},
      {"moving bodies", bodies, 0, 0, 0, 24, bodies_noise},
      {"moving bodies, filterparent off", bodies, mjDSBL_FILTERPARENT, 0, 0, 8, bodies_noise},
      {"moving bodies, midphase off", bodies, mjDSBL_MIDPHASE, 0, 0, 8, bodies_noise},
      {"moving bodies, override", bodies, 0, mjENBL_OVERRIDE, 0, 8, bodies_noise},
  };
  int ncase = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < ncase; i++)
    if (run_case(&r, &cases[i], 2000 + (uint64_t)i) == FS_TEST_SKIP) {
      printf("skipped: no CUDA device\n");
      return FS_TEST_SKIP;
    }
  printf("\nworst error over all models (%s): collision alone %.2e | after kinematics %.2e\n",
         r.name, g_worst_alone, g_worst_chain);
  return fs_test_finish("engine collision");
}
