// The batched stepper against MuJoCo, stage by stage and step by step, on our
// small models, on NeuroMechFly with contacts disabled and on NeuroMechFly tethered (a
// mocap thorax, six trees; and the small tethered limb, its mocap pose moved in every
// world, contacts on two trees), and on moving bodies that collide by contype/conaffinity
// (tests/models/cuda_contact_bodies.xml: rows across branches and trees, which the lanes
// and the GPU refuse: checked there; with islands on, contacts join the trees' islands, as
// equalities and contacts do in tests/models/islands.xml) (docs/engine/accuracy.md, "Smooth
// stages"):
// the check of common/parity/stages.h (each stage alone from MuJoCo's inputs, mj_forward
// from the state, whole steps with a NaN control and a NaN velocity), every field of
// every world, the worst error per stage collected over the models; the limb and the free
// bodies under RK4 too (the step's four forwards; the device refuses RK4: checked there);
// the sensors of tests/models/sensors.xml and NeuroMechFly's contact sensors (the host's).
// Built four times: host float64, host float32, host float64 on emulated lanes (the
// device's default width and 32: engine_stages_host_lanes32), and cuda (77 without a GPU).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parity/stages.h"
#include "tests/testutil.h"

typedef struct Case {
  const char* label;
  const char* path;
  int disable; // mjtDisableBit flags toggled (the model's own on or off)
  int nworld;
  fshNoise noise;
  int nstep;           // steps of the multi-step comparison
  const char* lanes;   // what the lanes' tree layout refuses (the host's dense rows alone), or
                       // NULL: contact rows across two branches or trees, equality rows
  int rk4;             // the model stepped with RK4 (the host's; the device refuses it)
  const char* refused; // what the device's refusal names (the host's alone), or NULL
} Case;

// Worst error per stage over all cases: isolated, in the chained forward, whole steps.
static double g_worst_alone[FS_NSTAGE], g_worst_chain[FS_NSTAGE], g_worst_step;

// Every field's line as the library prints it, and the worst per stage.
static void collect(void* arg, const fshFieldReport* r) {
  (void)arg;
  char bound[48] = "";
  if (r->bound > 0) snprintf(bound, sizeof bound, " (bound %.2e)", r->bound);
  printf("  %-22s %-18s %-8.2e %s %.10g vs %.10g%s%s\n", r->label, r->field, r->err, r->where,
         r->ours, r->ref, bound, r->bad ? "  <-- FAIL" : "");
  double* slot = NULL;
  if (!strncmp(r->label, "step", 4)) slot = &g_worst_step;
  for (int s = FS_STAGE_KINEMATICS; s < FS_NSTAGE && !slot; s++) {
    char chained[48];
    snprintf(chained, sizeof chained, "forward: %s", fs_stage_name(s));
    if (!strcmp(r->label, fs_stage_name(s))) slot = &g_worst_alone[s];
    if (!strcmp(r->label, chained)) slot = &g_worst_chain[s];
  }
  if (slot && isfinite(r->err) && r->err > *slot) *slot = r->err;
}

static int run_case(const fshRunner* r, const Case* c, uint64_t seed) {
  printf("\n== %s (%s), %d worlds, %s\n", c->label, c->path, c->nworld, r->name);
  mjModel* mj = fs_test_load_model(c->path);
  mj->opt.disableflags ^= c->disable;
  if (c->rk4) mj->opt.integrator = mjINT_RK4;
  fshStageCheck check = {c->nworld, seed,
                         c->nstep,  FSH_CHECK_ALONE | FSH_CHECK_FORWARD | FSH_CHECK_STEPS,
                         c->noise,  fsh_stage_tolerance(NULL),
                         0};
  check.tol = fsh_stage_tolerance(&check.tol_b);
  fsError err;
  int nbad = fsh_check_stages(r, mj, c->path, &check, &err);
  mj_deleteModel(mj);
  if (nbad == FSH_SKIP) return FS_TEST_SKIP;
  if (c->refused && !strncmp(r->name, "cuda", 4)) {
    printf(" refused: %s\n", err.msg);
    CHECK_MSG(nbad < 0 && strstr(err.msg, c->refused), "%s: %s not refused on the device", c->label,
              c->refused);
    return 0;
  }
  int dense = strncmp(r->name, "cuda", 4) != 0; // the host's rows dense (nv < 60) ...
#ifndef FS_ONE_LANE
  dense = 0; // ... not on lanes: the tree layout refuses rows across branches, said so
#endif
  if (c->lanes && !dense) {
    printf(" refused: %s\n", err.msg);
    CHECK_MSG(nbad < 0 && strstr(err.msg, c->lanes), "%s: '%s' not refused on lanes", c->label,
              c->lanes);
    return 0;
  }
  if (nbad < 0) fprintf(stderr, "%s\n", err.msg);
  CHECK_MSG(nbad == 0, "%s: %d comparisons beyond tolerance", c->label, nbad);
  return 0;
}

int main(void) {
  fshRunner r = fsh_runner();
  fshTol tol = fsh_stage_tolerance(NULL);
  fsh_set_report(collect, NULL);
  printf("tolerance: error = |ours - MuJoCo| / max(|MuJoCo|, %g * max|field in the world|) <= "
         "%g\n",
         tol.floor, tol.rel);
  // fs_test_model/fs_test_asset return rotating buffers: keep copies.
  char chain[1024], free_[1024], limb[1024], tethered[1024], fly[1024], fly_tethered[1024];
  char bodies[1024], tendon[1024], tendon_passive[1024], fluid[1024], equality[1024];
  char activation[1024], sensors[1024], islands[1024], tendon_rows[1024];
  snprintf(chain, sizeof chain, "%s", fs_test_model("cuda_chain.xml"));
  snprintf(free_, sizeof free_, "%s", fs_test_model("cuda_free.xml"));
  snprintf(limb, sizeof limb, "%s", fs_test_model("cuda_limb.xml"));
  snprintf(tethered, sizeof tethered, "%s", fs_test_model("cuda_tethered.xml"));
  snprintf(fly, sizeof fly, "%s", fs_test_asset("mesh.mjb"));
  snprintf(fly_tethered, sizeof fly_tethered, "%s", fs_test_asset("worlds/tethered.mjb"));
  snprintf(bodies, sizeof bodies, "%s", fs_test_model("cuda_contact_bodies.xml"));
  snprintf(tendon, sizeof tendon, "%s", fs_test_model("tendon_fixed.xml"));
  snprintf(tendon_passive, sizeof tendon_passive, "%s", fs_test_model("tendon_passive.xml"));
  snprintf(fluid, sizeof fluid, "%s", fs_test_model("fluid.xml"));
  snprintf(equality, sizeof equality, "%s", fs_test_model("equality.xml"));
  snprintf(activation, sizeof activation, "%s", fs_test_model("activation.xml"));
  snprintf(sensors, sizeof sensors, "%s", fs_test_model("sensors.xml"));
  snprintf(islands, sizeof islands, "%s", fs_test_model("islands.xml"));
  snprintf(tendon_rows, sizeof tendon_rows, "%s", fs_test_model("tendon_rows.xml"));
  const char* across = "rows move two branches of a tree or two trees";
  const Case cases[] = {
      {"chain", chain, 0, 5, {0.5, 2, 2, 3}, 20, NULL, 0, NULL},
      {"free", free_, 0, 5, {0.5, 2, 1, 3}, 20, NULL, 0, NULL},
      {"limb", limb, 0, 5, {0.3, 3, 0.5, 3}, 20, NULL, 0, NULL},
      {"limb, gravity off", limb, mjDSBL_GRAVITY, 3, {0.3, 3, 0.5, 3}, 5, NULL, 0, NULL},
      {"limb, springs off", limb, mjDSBL_SPRING, 3, {0.3, 3, 0.5, 3}, 5, NULL, 0, NULL},
      {"limb, dampers off", limb, mjDSBL_DAMPER, 3, {0.3, 3, 0.5, 3}, 5, NULL, 0, NULL},
      {"limb, actuation off", limb, mjDSBL_ACTUATION, 3, {0.3, 3, 0.5, 3}, 5, NULL, 0, NULL},
      {"limb, clampctrl off", limb, mjDSBL_CLAMPCTRL, 3, {0.3, 3, 0.5, 3}, 5, NULL, 0, NULL},
      {"limb, eulerdamp off", limb, mjDSBL_EULERDAMP, 3, {0.3, 3, 0.5, 3}, 5, NULL, 0, NULL},
      {"chain, autoreset off", chain, mjDSBL_AUTORESET, 3, {0.5, 2, 2, 3}, 3, NULL, 0, NULL},
      {"tethered limb (mocap)", tethered, 0, 5, {0.3, 3, 0.5, 3}, 20, NULL, 0, NULL},
      {"NeuroMechFly, contacts off", fly, mjDSBL_CONTACT, 4, {0.2, 5, 0.3, 3}, 20, NULL, 0, NULL},
      {"NeuroMechFly tethered (mocap)", fly_tethered, 0, 4, {0.2, 5, 0.3, 3}, 20, NULL, 0, NULL},
      {"moving bodies (contype/conaffinity)", bodies, 0, 5, {0.5, 2, 0.5, 3}, 30, across, 0, NULL},
      {"bodies, filterparent off",
       bodies,
       mjDSBL_FILTERPARENT,
       3,
       {0.5, 2, 0.5, 3},
       10,
       across,
       0,
       NULL},
      {"bodies, islands on (contacts join the trees' islands)",
       bodies,
       mjDSBL_ISLAND,
       5,
       {0.5, 2, 0.5, 3},
       30,
       across,
       0,
       NULL},
      {"islands of several trees: equalities and contacts",
       islands,
       0,
       5,
       {0.3, 2, 0.5, 3},
       20,
       "equality constraint",
       0,
       "equality constraints"},
      {"tendon limits and friction loss (their rows join trees' islands)",
       tendon_rows,
       0,
       5,
       {0.3, 2, 0.5, 3},
       20,
       "tendon limits or friction loss",
       0,
       "tendon limits"},
      {"limb, RK4", limb, 0, 5, {0.3, 3, 0.5, 3}, 20, NULL, 1, "RK4"},
      {"free, RK4", free_, 0, 5, {0.5, 2, 1, 3}, 20, NULL, 1, "RK4"},
      {"actuators on fixed tendons", tendon, 0, 5, {0.3, 2, 0.5, 3}, 20, NULL, 0, NULL},
      {"springs and dampers on fixed and spatial tendons",
       tendon_passive,
       0,
       5,
       {0.3, 2, 0.5, 3},
       20,
       NULL,
       0,
       "tendon springs and dampers"},
      {"fluid forces (inertia box)", fluid, 0, 5, {0.3, 2, 0.5, 3}, 20, NULL, 0, "fluid forces"},
      {"joint and tendon equalities",
       equality,
       0,
       5,
       {0.3, 2, 0.5, 3},
       20,
       "equality constraint",
       0,
       "equality constraints"},
      {"activation dynamics (filters, integrator; a reset world's act zeroed)",
       activation,
       0,
       5,
       {0.3, 2, 0.5, 3},
       20,
       NULL,
       0,
       "activation dynamics"},
      {"sensors of every kind the stage computes (contact sensors matched every way)",
       sensors,
       0,
       5,
       {0.3, 2, 0.5, 3},
       20,
       NULL,
       0,
       "joint limits"},
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
  return fs_test_finish("engine stages");
}
