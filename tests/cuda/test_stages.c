// The batched stepper against MuJoCo, stage by stage and step by step, on our
// small models and on NeuroMechFly with contacts disabled (ARCHITECTURE section 4).
//
// For every model, in every world a different MuJoCo reference state:
//  1. each stage alone: all inputs from MuJoCo, the stage's outputs poisoned
//     with NaN, the stage run, every output field of every world compared;
//  2. the whole mj_forward from the state alone, every field compared stage by
//     stage in order (the first stage that diverges is named);
//  3. whole steps: one step, then more, state compared with mj_step's, including
//     worlds with a bad control (MuJoCo zeroes them) and a bad velocity (reset).
// Built three times: host float64, host float32, and cuda (77 without a GPU).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuda/harness.h"
#include "tests/testutil.h"

typedef struct Case {
  const char* label;
  const char* path;
  int disable; // mjtDisableBit flags added to the model's
  int nworld;
  fshNoise noise;
  int nstep; // steps of the multi-step comparison
} Case;

// Worst error per stage over all cases: isolated, in the chained forward.
static double g_worst_alone[FS_NSTAGE], g_worst_chain[FS_NSTAGE], g_worst_step;

#ifdef FS_REAL_FLOAT
static const fshTol kTol = {1e-4, 1.0, NULL, NULL}; // relative to the field's scale (see README)
static const fshTol kTolStep = {1e-4, 1.0, NULL, NULL};
#else
static const fshTol kTol = {1e-9, 1e-6, NULL, NULL};
static const fshTol kTolStep = {1e-9, 1e-6, NULL, NULL};
#endif

static fsBatch g_batch;

// 1. Each stage alone, from MuJoCo's inputs.
static int stages_alone(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref) {
  int nbad = 0;
  printf(" stages alone (inputs from MuJoCo, outputs poisoned):\n");
  mjData** eul = calloc((size_t)g_batch.nworld, sizeof *eul);
  for (int w = 0; w < g_batch.nworld; w++) {
    eul[w] = mj_copyData(NULL, mj, ref[w]);
    mj_Euler(mj, eul[w]);
  }
  for (int s = FS_STAGE_KINEMATICS; s < FS_NSTAGE; s++) {
    if (fsh_load_worlds(m, &g_batch, mj, ref, -1)) return 1;
    fs_batch_poison(m, &g_batch, s);
    if (fsh_run(r, &g_batch, s, 0)) return 1;
    if (s == FS_STAGE_EULER) { // qH is an output only when damping is implicit
      static const char* out[] = {"qH",   "qHDiagInv", "qpos", "qvel", "qacc_warmstart",
                                  "time", NULL};
      nbad += fsh_compare_fields(fs_stage_name(s), m, &g_batch, out + (m->flg_eulerdamp ? 0 : 2),
                                 eul, &kTol, &g_worst_alone[s]);
    } else {
      nbad += fsh_compare_stage(fs_stage_name(s), m, &g_batch, s, ref, &kTol, &g_worst_alone[s]);
    }
  }
  fsh_free_worlds(eul, g_batch.nworld);
  return nbad;
}

// 2. mj_forward from the state alone; every stage's fields compared in order.
static int forward_chained(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref) {
  printf(" mj_forward from the state (all outputs poisoned):\n");
  if (fsh_load_worlds(m, &g_batch, mj, ref, FS_STAGE_STATE)) return 1;
  for (int s = FS_STAGE_KINEMATICS; s < FS_NSTAGE; s++) fs_batch_poison(m, &g_batch, s);
  if (fsh_run(r, &g_batch, FSH_FORWARD, 0)) return 1;
  int first = -1, nbad = 0;
  for (int s = FS_STAGE_KINEMATICS; s < FS_STAGE_EULER; s++) {
    int k = fsh_compare_stage(fs_stage_name(s), m, &g_batch, s, ref, &kTol, &g_worst_chain[s]);
    if (k && first < 0) first = s;
    nbad += k;
  }
  if (first >= 0) printf(" first stage that diverges: %s\n", fs_stage_name(first));
  return nbad;
}

static int compare_warnings(const fsModel* m, mjData* const* ref) {
  int nbad = 0;
  for (int w = 0; w < g_batch.nworld; w++) {
    fsData d = fs_batch_world(m, &g_batch, w);
    for (int k = 0; k < FS_NWARNING; k++)
      if (d.warning_number[k] != ref[w]->warning[k].number) {
        printf("  world %d: warning %d counted %d times, MuJoCo %d  <-- FAIL\n", w, k,
               d.warning_number[k], ref[w]->warning[k].number);
        nbad++;
      }
  }
  return nbad;
}

// 3. Whole steps from the state, against mj_step. World 1 gets a NaN control,
// world 2 a NaN velocity (when there are enough worlds).
static int whole_steps(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref,
                       int nstep) {
  static const char* state[] = {"qpos", "qvel", "qacc_warmstart", "time", NULL};
  int nbad = 0, N = g_batch.nworld;
  mjData** st = calloc((size_t)N, sizeof *st);
  for (int w = 0; w < N; w++) st[w] = mj_copyData(NULL, mj, ref[w]);
  if (N > 1 && mj->nu) st[1]->ctrl[0] = NAN;
  if (N > 2) st[2]->qvel[mj->nv - 1] = NAN;
  if (fsh_load_worlds(m, &g_batch, mj, st, FS_STAGE_STATE)) return 1;
  for (int w = 0; w < N; w++) mj_step(mj, st[w]);
  if (fsh_run(r, &g_batch, FSH_STEP, 1)) return 1;
  printf(" one step (world 1: NaN ctrl, world 2: NaN qvel):\n");
  nbad += fsh_compare_fields("step 1", m, &g_batch, state, st, &kTolStep, &g_worst_step);
  nbad += compare_warnings(m, st);
  for (int w = 0; w < N; w++)
    for (int s = 1; s < nstep; s++) mj_step(mj, st[w]);
  if (fsh_run(r, &g_batch, FSH_STEP, nstep - 1)) return 1;
  char label[32];
  snprintf(label, sizeof label, "step %d", nstep);
  printf(" %d steps:\n", nstep);
  nbad += fsh_compare_fields(label, m, &g_batch, state, st, &kTolStep, &g_worst_step);
  nbad += compare_warnings(m, st);
  fsh_free_worlds(st, N);
  return nbad;
}

static int run_case(const fshRunner* r, const Case* c, uint64_t seed) {
  printf("\n== %s (%s), %d worlds, %s\n", c->label, c->path, c->nworld, r->name);
  mjModel* mj = fsh_load(c->path);
  mj->opt.disableflags |= c->disable;
  fsModel m;
  fsError err;
  if (fs_model_build(mj, c->path, &m, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    mj_deleteModel(mj);
    return 1;
  }
  mjData** ref = fsh_make_worlds(mj, c->nworld, seed, &c->noise);
  int nbad = 0, rc = fs_batch_alloc(&m, c->nworld, &g_batch, &err);
  if (!rc) rc = r->open(r->self, &m, c->nworld, &err);
  if (rc == FS_TEST_SKIP) {
    nbad = FS_TEST_SKIP;
  } else if (rc) {
    fprintf(stderr, "%s\n", err.msg);
    nbad = 1;
  } else {
    nbad += stages_alone(r, &m, mj, ref);
    nbad += forward_chained(r, &m, mj, ref);
    nbad += whole_steps(r, &m, mj, ref, c->nstep);
    r->close(r->self);
  }
  fs_batch_free(&g_batch);
  fsh_free_worlds(ref, c->nworld);
  fs_model_free(&m);
  mj_deleteModel(mj);
  if (nbad == FS_TEST_SKIP) return FS_TEST_SKIP;
  CHECK_MSG(nbad == 0, "%s: %d comparisons beyond tolerance", c->label, nbad);
  return 0;
}

int main(void) {
  fshRunner r = fsh_runner();
  printf("tolerance: error = |ours - MuJoCo| / max(|MuJoCo|, %g * max|field in the world|) <= "
         "%g\n",
         kTol.floor, kTol.rel);
  // fs_test_model/fs_test_asset return rotating buffers: keep copies.
  char chain[1024], free_[1024], limb[1024], fly[1024];
  snprintf(chain, sizeof chain, "%s", fs_test_model("cuda_chain.xml"));
  snprintf(free_, sizeof free_, "%s", fs_test_model("cuda_free.xml"));
  snprintf(limb, sizeof limb, "%s", fs_test_model("cuda_limb.xml"));
  snprintf(fly, sizeof fly, "%s", fs_test_asset("mesh.mjb"));
  const Case cases[] = {
      {"chain", chain, 0, 5, {0.5, 2, 2, 3}, 20},
      {"free", free_, 0, 5, {0.5, 2, 1, 3}, 20},
      {"limb", limb, 0, 5, {0.3, 3, 0.5, 3}, 20},
      {"limb, gravity off", limb, mjDSBL_GRAVITY, 3, {0.3, 3, 0.5, 3}, 5},
      {"limb, springs off", limb, mjDSBL_SPRING, 3, {0.3, 3, 0.5, 3}, 5},
      {"limb, dampers off", limb, mjDSBL_DAMPER, 3, {0.3, 3, 0.5, 3}, 5},
      {"limb, actuation off", limb, mjDSBL_ACTUATION, 3, {0.3, 3, 0.5, 3}, 5},
      {"limb, clampctrl off", limb, mjDSBL_CLAMPCTRL, 3, {0.3, 3, 0.5, 3}, 5},
      {"limb, eulerdamp off", limb, mjDSBL_EULERDAMP, 3, {0.3, 3, 0.5, 3}, 5},
      {"chain, autoreset off", chain, mjDSBL_AUTORESET, 3, {0.5, 2, 2, 3}, 3},
      {"NeuroMechFly, contacts off", fly, mjDSBL_CONTACT, 4, {0.2, 5, 0.3, 3}, 20},
  };
  int ncase = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < ncase; i++)
    if (run_case(&r, &cases[i], 1000 + (uint64_t)i) == FS_TEST_SKIP) {
      printf("skipped: no CUDA device\n");
      return FS_TEST_SKIP;
    }
  printf("\nworst error per stage over all models (%s): alone | in mj_forward\n", r.name);
  for (int s = FS_STAGE_KINEMATICS; s < FS_STAGE_EULER; s++)
    printf("  %-18s %.2e | %.2e\n", fs_stage_name(s), g_worst_alone[s], g_worst_chain[s]);
  printf("  %-18s %.2e | (not in mj_forward)\n", fs_stage_name(FS_STAGE_EULER),
         g_worst_alone[FS_STAGE_EULER]);
  printf("  %-18s %.2e\n", "whole steps", g_worst_step);
  return fs_test_finish("cuda stages");
}
