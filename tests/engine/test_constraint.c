// The constraint rows -- dof friction loss, joint limits, contacts --
// (common/engine/stage_constraint.h: fs_make_constraint, fs_reference_constraint) and adhesion
// through contacts (common/engine/stage_transmission.h: body transmission; its velocity and force)
// against MuJoCo's mj_forward on NeuroMechFly (meshes, capsules; capsules on FlyGym's gapped
// terrain: box contacts whose moving geom is geom 1) and our own models
// (tests/models/cuda_efc_walker.xml; cuda_efc_limits.xml, the walker with limits and friction
// loss; cuda_contact_primitives.xml).
//
// For every case, in every world a different MuJoCo reference state (seeded noise,
// printed: common/parity/contacts.h's contact worlds -- bodies lowered so that geoms
// touch, penetrate and leave their planes -- then random velocities and controls):
//  1. the rows alone: MuJoCo's kinematics and contacts in, outputs poisoned, nefc and
//     every efc field of every row compared (efc_J through each row's columns),
//     contact_efc_address and contact_mu;
//  2. the transmission, actuator velocity and actuation alone (MuJoCo's rows in):
//     actuator_length, actuator_moment (the adhesion rows), actuator_velocity,
//     actuator_force, qfrc_actuator;
//  3. the reference alone: efc_vel, efc_aref;
//  4. everything from the state (kinematics, com, collision, rows, transmission,
//     velocities, reference, actuation), all of the above compared;
//  5. (walker) a row buffer one row short of the busiest world's need: the first
//     contacts' rows kept bit for bit, the rest counted and warned.
// Built four times: host float64, host float32, host float64 on emulated lanes (the
// device's default width; ThreadSanitizer), and cuda (77 without a GPU).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parity/contacts.h"
#include "common/parity/efc.h"
#include "common/parity/harness.h"
#include "tests/testutil.h"

typedef struct Case {
  const char* label;
  const char* path;
  int disable, enable; // mjtDisableBit / mjtEnableBit flags added to the model's
  int jacobian;        // mjtJacobian to force, -1: the model's
  double impratio;     // 0: the model's
  int nworld;
  double vnoise; // velocities: +-vnoise
  fshContactNoise noise;
} Case;

static const fshTol kTol = FSH_STAGE_TOL; // (common/parity/harness.h)
static const double kTolBoundary = FSH_CONTACT_BOUNDARY_TOL;

static double g_worst_alone[2], g_worst_chain[2]; // [1]: R, D, diagA; [0]: the rest
static int g_skipped;
static fsWorlds g_batch;

// MuJoCo's rows: counts, and what the impedance and adhesion paths saw. Islands
// (mj_island runs after mj_makeConstraint): MuJoCo's efc_* stay in contact order (as
// compared); its solver works on the island-sorted copies (iefc_*, map_efc2iefc).
// With one kinematic tree (the fly) there is at most one island and that copy is in
// efc order, which the solver to come relies on: checked here.
static void print_stats(const mjModel* mj, mjData* const* ref, int nworld) {
  int emin = 1 << 30, emax = 0, trans = 0, gap = 0, moments = 0, pyr = 0, normal = 0;
  int floss = 0, limit = 0, violated = 0, cone = 0;
  int islands = 0, permuted = 0;
  for (int w = 0; w < nworld; w++) {
    const mjData* d = ref[w];
    islands = d->nisland > islands ? d->nisland : islands;
    int perm = 0;
    for (int r = 0; r < d->nefc; r++) perm |= d->map_efc2iefc[r] != r;
    permuted += perm;
    CHECK_MSG(mj->ntree > 1 || (d->nisland <= 1 && !perm),
              "world %d: one tree, but %d islands or rows permuted", w, d->nisland);
    emin = d->nefc < emin ? d->nefc : emin;
    emax = d->nefc > emax ? d->nefc : emax;
    for (int r = 0; r < d->nefc; r++) {
      trans += d->efc_KBIP[4 * r + 3] != 0;
      pyr += d->efc_type[r] == mjCNSTR_CONTACT_PYRAMIDAL;
      normal += d->efc_type[r] == mjCNSTR_CONTACT_FRICTIONLESS;
      floss += d->efc_type[r] == mjCNSTR_FRICTION_DOF;
      limit += d->efc_type[r] == mjCNSTR_LIMIT_JOINT;
      violated += d->efc_type[r] == mjCNSTR_LIMIT_JOINT && d->efc_pos[r] < 0;
      cone += d->efc_type[r] == mjCNSTR_CONTACT_ELLIPTIC;
    }
    for (int c = 0; c < d->ncon; c++) gap += d->contact[c].exclude == 1;
    for (int a = 0; a < mj->nu; a++)
      moments += mj->actuator_trntype[a] == mjTRN_BODY && d->moment_rownnz[a] > 0;
  }
  printf(" MuJoCo's rows: nefc %d..%d (%d friction-loss rows, %d joint-limit rows of which %d "
         "violated, %d pyramid edges, %d elliptic-cone rows, %d condim-1 rows), %d rows in the "
         "impedance's transition "
         "(imp' != 0), %d contacts in the gap, %d adhesion moments not empty; %d tree(s), up to "
         "%d island(s), island order != row order in %d world(s)\n",
         emin, emax, floss, limit, violated, pyr, cone, normal, trans, gap, moments, (int)mj->ntree,
         islands, permuted);
}

static const char* const kActuation[] = {"actuator_length", "actuator_moment", "actuator_velocity",
                                         "actuator_force",  "qfrc_actuator",   NULL};

// 1-3. Each stage alone, from MuJoCo's inputs.
static int alone(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref) {
  int nbad = 0;
  printf(" stages alone (inputs from MuJoCo, outputs poisoned):\n");
  if (fsh_load_worlds(m, &g_batch, mj, ref, -1)) return 1;
  fs_worlds_poison(m, &g_batch, FS_STAGE_MAKE_CONSTRAINT);
  if (fsh_run(r, &g_batch, FS_STAGE_MAKE_CONSTRAINT, 0)) return 1;
  nbad += fsh_compare_efc("make_constraint", m, &g_batch, mj, ref, &kTol, FS_STAGE_MAKE_CONSTRAINT,
                          g_worst_alone);
  nbad += fsh_compare_contacts("make_constraint", m, &g_batch, ref, &kTol, 0,
                               FS_STAGE_MAKE_CONSTRAINT, g_worst_alone);
  static const int stages[] = {FS_STAGE_TRANSMISSION, FS_STAGE_ACTUATOR_VELOCITY,
                               FS_STAGE_ACTUATION, FS_STAGE_REFERENCE_CONSTRAINT};
  for (int i = 0; i < 4; i++) {
    if (fsh_load_worlds(m, &g_batch, mj, ref, -1)) return 1;
    fs_worlds_poison(m, &g_batch, stages[i]);
    if (fsh_run(r, &g_batch, stages[i], 0)) return 1;
    if (stages[i] == FS_STAGE_REFERENCE_CONSTRAINT)
      nbad += fsh_compare_efc(fs_stage_name(stages[i]), m, &g_batch, mj, ref, &kTol, stages[i],
                              g_worst_alone);
    else
      nbad += fsh_compare_stage(fs_stage_name(stages[i]), m, &g_batch, stages[i], ref, &kTol,
                                g_worst_alone);
  }
  return nbad;
}

// The stages mj_forward runs up to actuation that the rows and adhesion depend on.
static const int kChain[] = {
    FS_STAGE_KINEMATICS,           FS_STAGE_COM_POS,      FS_STAGE_COLLISION,
    FS_STAGE_MAKE_CONSTRAINT,      FS_STAGE_TRANSMISSION, FS_STAGE_ACTUATOR_VELOCITY,
    FS_STAGE_REFERENCE_CONSTRAINT, FS_STAGE_ACTUATION};
enum { NCHAIN = sizeof kChain / sizeof kChain[0] };

static int run_chain(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref,
                     int last) {
  if (fsh_load_worlds(m, &g_batch, mj, ref, FS_STAGE_STATE)) return -1;
  for (int s = FS_STAGE_KINEMATICS; s < FS_NSTAGE; s++) fs_worlds_poison(m, &g_batch, s);
  for (int i = 0; i < NCHAIN && kChain[i] <= last; i++)
    if (fsh_run(r, &g_batch, kChain[i], 0)) return -1;
  return 0;
}

// 4. From the state. float32: worlds whose contacts differ from MuJoCo's at a
// threshold (let through by the contact comparison) cannot pair their rows: they are
// left out of the row and actuation comparisons, and counted.
static int chained(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref) {
  printf(" kinematics .. actuation from the state (outputs poisoned):\n");
  if (run_chain(r, m, mj, ref, FS_STAGE_ACTUATION)) return 1;
  int nbad = fsh_compare_contacts("collision", m, &g_batch, ref, &kTol, kTolBoundary,
                                  FS_STAGE_COLLISION, g_worst_chain);
  char* skip = calloc((size_t)g_batch.nworld, 1);
  int nskip = fsh_contact_sets_differ(m, &g_batch, ref, skip);
  fshTol tol = kTol;
  if (nskip) {
    printf("  %d world(s) with contacts that differ at a threshold: rows not compared\n", nskip);
    g_skipped += nskip;
    tol.skip = skip;
    if (kTolBoundary == 0) nbad++; // float64: never
  }
  nbad += fsh_compare_contacts("make_constraint", m, &g_batch, ref, &tol, kTolBoundary,
                               FS_STAGE_MAKE_CONSTRAINT, g_worst_chain);
  nbad += fsh_compare_efc("make_constraint", m, &g_batch, mj, ref, &tol, FS_STAGE_MAKE_CONSTRAINT,
                          g_worst_chain);
  nbad += fsh_compare_efc("reference_constraint", m, &g_batch, mj, ref, &tol,
                          FS_STAGE_REFERENCE_CONSTRAINT, g_worst_chain);
  nbad += fsh_compare_fields("actuation", m, &g_batch, kActuation, ref, &tol, g_worst_chain);
  free(skip);
  return nbad;
}

// 5. A row buffer one row short of the busiest world's need (the runner reopened):
// every world keeps the rows of its first contacts that fit, bit for bit as the full
// buffer had them, counts the rest in efc_overflow and warns once.
static int overflow(const fshRunner* r, const fsModel* m0, const mjModel* mj, mjData** ref) {
  int N = g_batch.nworld, nbad = 0, most = 0;
  fsWorlds full = g_batch; // the full buffer's rows, from the chained run
  for (int w = 0; w < N; w++) {
    int n = fs_worlds_view(m0, &full, w).nefc[0];
    most = n > most ? n : most;
  }
  if (most < 2) return 0;
  fsModel m = *m0;
  m.nefcmax = most - 1;
  fs_model_row_sizes(&m);
  fsError err;
  int rc = fs_worlds_alloc(&m, N, &g_batch, &err);
  if (!rc) rc = r->open(r->self, &m, N, &err);
  if (rc) {
    fprintf(stderr, "%s\n", err.msg);
    g_batch = full;
    return 1;
  }
  if (run_chain(r, &m, mj, ref, FS_STAGE_MAKE_CONSTRAINT)) nbad++;
  for (int w = 0; w < N && !nbad; w++) {
    fsData d = fs_worlds_view(&m, &g_batch, w), f = fs_worlds_view(m0, &full, w);
    int need = f.nefc[0], kept = 0;
    for (int c = 0; c < f.ncon[0]; c++) { // the first contacts whose rows fit
      if (f.contact_efc_address[c] < 0) continue;
      int n = f.contact_dim[c] == 1 ? 1 : 2 * (f.contact_dim[c] - 1);
      if (kept + n > m.nefcmax) break;
      kept += n;
    }
    int warned = d.warning_number[FS_WARN_CNSTRFULL] - ref[w]->warning[mjWARN_CNSTRFULL].number;
    if (d.nefc[0] != kept || d.efc_overflow[0] != need - kept || warned != (need > kept)) {
      printf("  overflow: world %d needs %d rows, holds %d: nefc %d, overflow %d, warned %d  <-- "
             "FAIL\n",
             w, need, m.nefcmax, d.nefc[0], d.efc_overflow[0], warned);
      nbad++;
    }
    for (int k = 0; k < kept && !nbad; k++)
      if (d.efc_R[k] != f.efc_R[k] || d.efc_id[k] != f.efc_id[k] ||
          memcmp(d.efc_J + (size_t)k * m.njmax, f.efc_J + (size_t)k * m.njmax,
                 sizeof(fsReal) * (size_t)d.efc_J_rownnz[k])) {
        printf("  overflow: world %d row %d differs from the full buffer's  <-- FAIL\n", w, k);
        nbad++;
      }
  }
  printf("  %-22s the busiest world needs %d rows, the buffer holds %d: %s\n", "overflow", most,
         m.nefcmax, nbad ? "FAIL" : "the first contacts' rows kept, the rest counted and warned");
  r->close(r->self);
  fs_worlds_free(&g_batch);
  g_batch = full;
  return nbad;
}

static mjModel* load_case(const Case* c) {
  mjModel* mj = fs_test_load_model(c->path);
  mj->opt.disableflags |= c->disable;
  mj->opt.enableflags |= c->enable;
  if (c->jacobian >= 0) mj->opt.jacobian = c->jacobian;
  if (c->impratio > 0) mj->opt.impratio = c->impratio;
  if (c->enable & mjENBL_OVERRIDE) { // contact parameters from opt
    mjtNum ref[2] = {0.004, 0.7}, imp[5] = {0.85, 0.97, 0.015, 0.3, 4};
    mju_copy(mj->opt.o_solref, ref, 2);
    mju_copy(mj->opt.o_solimp, imp, 5);
    mj->opt.o_margin = 0.006;
  }
  return mj;
}

static int run_case(const fshRunner* r, const Case* c, uint64_t seed) {
  printf("\n== %s (%s), %d worlds, %s\n", c->label, c->path, c->nworld, r->name);
  mjModel* mj = load_case(c);
  fsModel m;
  fsError err;
  if (fs_model_build_for(mj, c->path, &m, FS_BUILD_STEP, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    mj_deleteModel(mj);
    return 1;
  }
  if (fs_model_general_rows(&m) && !strstr(r->name, "host")) { // the kernels lack them
    printf(" skipped on the device: friction loss, limits, elliptic cones and CG are the host "
           "backend's (FSI_ROWS)\n");
    fs_model_free(&m);
    mj_deleteModel(mj);
    return 0;
  }
  printf(" %d pairs, %d contact slots, %d rows of at most %d dofs per world (MuJoCo's Jacobian "
         "%s)\n",
         m.npair, m.nconmax, m.nefcmax, m.njmax, m.jac_sparse ? "sparse" : "dense");
  mjData** ref = fsh_moving_contact_worlds(mj, c->nworld, seed, &c->noise, c->vnoise);
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
    if (strstr(c->path, "walker") && !c->disable) nbad += overflow(r, &m, mj, ref);
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
         "%g; counts, types, ids, addresses exactly\n",
         kTol.floor, kTol.rel);
  // fs_test_model/fs_test_asset return rotating buffers: keep copies.
  char walker[1024], limits[1024], cones[1024], prim[1024], fly[1024], flycap[1024], gapped[1024];
  snprintf(walker, sizeof walker, "%s", fs_test_model("cuda_efc_walker.xml"));
  snprintf(limits, sizeof limits, "%s", fs_test_model("cuda_efc_limits.xml"));
  snprintf(cones, sizeof cones, "%s", fs_test_model("cuda_efc_elliptic.xml"));
  snprintf(prim, sizeof prim, "%s", fs_test_model("cuda_contact_primitives.xml"));
  snprintf(fly, sizeof fly, "%s", fs_test_asset("mesh.mjb"));
  snprintf(flycap, sizeof flycap, "%s", fs_test_asset("capsule.mjb"));
  snprintf(gapped, sizeof gapped, "%s", fs_test_asset("worlds/gapped_capsule.mjb"));
  // noise: hinge rad, free rotation rad, anchor distance [lo, hi], kmax, presets, boundary
  const fshContactNoise walk = {0.6, 0.4, -0.03, 0.012, 4, 0, 0};
  const fshContactNoise prim_noise = {0, 3.2, -0.03, 0.02, 2, 0, 0};
  const fshContactNoise fly_noise = {0.3, 0.3, -0.02, 0.002, 10, 0, 0};
  // the fly's solimp width is 1e-5 below the margin 1e-3: anchor contacts in there
  const fshContactNoise fly_imp = {0.3, 0.3, 0.00099, 0.001, 3, 0, 0};
  const Case cases[] = {
      {"walker", walker, 0, 0, -1, 0, 24, 1.0, walk},
      {"walker, sparse Jacobian", walker, 0, 0, mjJAC_SPARSE, 0, 12, 1.0, walk},
      {"walker, impratio 3, refsafe off", walker, mjDSBL_REFSAFE, 0, -1, 3, 8, 1.0, walk},
      {"walker, override", walker, 0, mjENBL_OVERRIDE, mjJAC_SPARSE, 0, 6, 1.0, walk},
      {"walker, constraints off", walker, mjDSBL_CONSTRAINT, 0, -1, 0, 2, 1.0, walk},
      {"primitives", prim, 0, 0, -1, 0, 12, 1.0, prim_noise},
      {"NeuroMechFly, meshes", fly, 0, 0, -1, 0, 12, 5.0, fly_noise},
      {"NeuroMechFly, meshes, impedance transition", fly, 0, 0, -1, 0, 8, 5.0, fly_imp},
      {"NeuroMechFly, capsules", flycap, 0, 0, -1, 0, 8, 5.0, fly_noise},
      // FlyGym's gapped terrain: capsule-box contacts, the fly geom first (its rows negated)
      {"gapped terrain, capsules", gapped, 0, 0, -1, 0, 8, 5.0, fly_noise},
      // friction-loss rows and joint limits (appended: the cases above keep their seeds)
      {"walker, limits and friction loss", limits, 0, 0, -1, 0, 24, 1.0, walk},
      {"walker, limits and friction loss, sparse", limits, 0, 0, mjJAC_SPARSE, 0, 12, 1.0, walk},
      {"walker, friction loss, limits off", limits, mjDSBL_LIMIT, 0, -1, 0, 6, 1.0, walk},
      {"walker, limits, friction loss off", limits, mjDSBL_FRICTIONLOSS, 0, mjJAC_SPARSE, 0, 6, 1.0,
       walk},
      // the elliptic cone: a contact's rows are its frame's (condim 3, 4, 6)
      {"walker, elliptic cones", cones, 0, 0, -1, 0, 24, 1.0, walk},
      {"walker, elliptic cones, sparse, impratio 1", cones, 0, 0, mjJAC_SPARSE, 1, 12, 1.0, walk},
      {"walker, elliptic cones, refsafe off", cones, mjDSBL_REFSAFE, 0, -1, 0, 6, 1.0, walk},
  };
  int ncase = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < ncase; i++)
    if (run_case(&r, &cases[i], 3000 + (uint64_t)i) == FS_TEST_SKIP) {
      printf("skipped: no CUDA device\n");
      return FS_TEST_SKIP;
    }
  printf("\nworst error over all models (%s): stages alone %.2e | from the state %.2e; R, D, "
         "diagA: alone %.2e | from the state %.2e; worlds left out (contacts differ at a "
         "threshold): %d\n",
         r.name, g_worst_alone[0], g_worst_chain[0], g_worst_alone[1], g_worst_chain[1], g_skipped);
  return fs_test_finish("engine constraint rows");
}
