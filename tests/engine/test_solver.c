// The constraint solver (common/engine/stage_solver.h: warm start, islands, Newton;
// common/engine/stage_noslip.h: noslip and the dual finish) against MuJoCo's mj_fwdConstraint,
// on NeuroMechFly (meshes, capsules) and our own models (tests/models/cuda_efc_walker.xml:
// two trees, so two islands; cuda_efc_limits.xml: the walker with joint limits and dof
// friction loss; cuda_contact_primitives.xml: six; cuda_tethered.xml: two
// legs, each a tree under a mocap thorax, no free joint; cuda_contact_bodies.xml and
// islands.xml with islands of several trees, joined by contacts and equalities;
// tendon_rows.xml: fixed and spatial tendons' limit and friction-loss rows, one joining two
// trees).
//
// Worlds, every one its own MuJoCo state (seeded, printed): common/parity/contacts.h's
// contact worlds (bodies touching, penetrating, leaving, adhering; random velocities
// and controls) with warm starts of three kinds -- MuJoCo's own solution (the
// certificate's case), that solution off by 10 % (Newton from close), zero (cold) --
// and NeuroMechFly's walking replay (MuJoCo's states every 40 steps: contacts that
// touch, slide, stick and leave the ground, adhesion on, MuJoCo's real warm start).
//  1. the solver alone: MuJoCo's rows, M factor and warm start in, outputs poisoned,
//     fs_fwd_constraint; compared: qacc, qfrc_constraint, efc_b, efc_force, efc_state,
//     islands, and each island's iteration count (Newton + noslip);
//  2. noslip alone (models with noslip): MuJoCo's forces from a solve without noslip in,
//     noslip and the dual finish, against MuJoCo with noslip;
//  3. mj_forward from the state, everything compared;
//  4. whole steps (1, then 20) from the state: qpos, qvel, qacc_warmstart.
//
// Bounds. Every field's bound is the larger of the build's tolerance (float64 1e-9,
// float32 1e-4 of the field's scale in the world) and FSH_FLOOR_RATIO times MuJoCo's own
// spread for that computation, measured here on the same worlds (the harness's error
// measure between two MuJoCo runs):
//   float64, one solve: MuJoCo with its other Jacobian layout (dense vs sparse): the
//     same solve in another order of summation -- what flysim's other orders (noslip's
//     residuals, the dense-Jacobian models' Hessian) may differ by; and MuJoCo's noslip
//     replayed from its Newton forces with the residuals summed in two other orders
//     (common/parity/spread.h: noslip keeps a pair's new forces only if the cost falls by
//     more than 1e-10, which the last bits decide near it); the replay in MuJoCo's
//     order is checked to give MuJoCo's bits;
//   float64, whole steps: also MuJoCo from the state off by one float64 ulp (3 draws):
//     contacts make the steps chaotic, and a solve stops within its tolerance; one step
//     also with noslip replayed (two orders);
//   float32: MuJoCo with the solver's inputs (rows, M and its factor, qacc_smooth,
//     warm start) rounded to float32 (one solve), the state rounded (forward), the state
//     rounded before every step (steps); forward and steps also from the rounded state
//     moved by float32's epsilon (3 draws, as float64's): one rounding alone is a single
//     sample of MuJoCo's sensitivity, and fell 1 % short of the float32 build's error in
//     one world on another CPU (MuJoCo's SIMD paths give other last bits).
// States must be equal in float64; in float32 a row may change state only where
// MuJoCo's force is within the force bound of 0 (the row sits at its boundary).
// Iteration counts: float64 equal in 9 worlds of 10 at least (those that differ are
// listed); float32 reported.
// Built four ways: host float64 (MuJoCo's bits where its Jacobian is sparse), host
// float32, host float64 on emulated lanes (ThreadSanitizer; the device's default width,
// and 32 lanes: engine_solver_host_lanes32); and cuda, float32 and float64 (77 without
// a GPU).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/replay/replay.h"
#include "common/inputs/targets.h"
#include "common/parity/contacts.h"
#include "common/parity/efc.h"
#include "common/parity/harness.h"
#include "common/parity/spread.h"
#include "tests/testutil.h"

typedef struct Case {
  const char* label;
  const char* path;
  int disable;  // mjtDisableBit flags toggled (the model's own on or off)
  int jacobian; // mjtJacobian to force, -1: the model's
  int noslip;   // noslip_iterations to set, -1: the model's
  int nworld;
  double vnoise;
  fshContactNoise noise;
  int replay; // 1: NeuroMechFly replay states instead of contact worlds
  int nstep;  // steps of the multi-step comparison
  int subset; // also run where time is short: SUBSET_LANES, SUBSET_SMALL (0: only in full)
  int opts;   // OPT_CG: MuJoCo's CG solver instead of the model's; OPT_ELLIPTIC: the elliptic cone
} Case;

enum { OPT_CG = 1, OPT_ELLIPTIC = 2 };

// The cases the lane emulation (ThreadSanitizer: the lane code, not the statistics) and the
// GPU simulator's small mode run.
enum { SUBSET_LANES = 1, SUBSET_SMALL = 2 };

#ifdef FS_REAL_FLOAT
static const fshTol kTol = {1e-4, 1.0, NULL, NULL};
#else
static const fshTol kTol = {1e-9, 1e-6, NULL, NULL};
#endif

static fsWorlds g_batch;
static double g_worst[4]; // solver alone, noslip alone, forward, steps: largest errors
static double g_ratio;    // the largest error over its bound
static int g_one_lane;    // the runner sums in MuJoCo's order (host, one lane)
static int g_iter_worlds, g_iter_differ;

//---------------------------------- worlds
//------------------------------------------------------------

// Warm starts of three kinds: MuJoCo's solution (w % 3 == 0), it off by up to 10 %
// (1), zero (2); then mj_forward again.
static void set_warmstarts(const mjModel* mj, mjData** d, int nworld) {
  for (int w = 0; w < nworld; w++) {
    for (int i = 0; i < mj->nv; i++) {
      mjtNum a = d[w]->qacc[i];
      d[w]->qacc_warmstart[i] =
          w % 3 == 0 ? a : (w % 3 == 1 ? a * (1 + 0.1 * (2 * fs_test_uniform() - 1)) : 0);
    }
    mj_forward(mj, d[w]);
  }
}

// NeuroMechFly's walking replay in MuJoCo (keyframe, adhesion on, 500 warm-up steps,
// then the clip from row 0): world w is the state after 40 (w + 1) clip steps.
static mjData** replay_worlds(const mjModel* mj, const char* path, int nworld) {
  fsTargets t;
  fsReplayBinding bind;
  fsError err;
  char clip[1024];
  snprintf(clip, sizeof clip, "%s", fs_test_asset("walking_clip.h5"));
  if (fs_targets_load(clip, &t, &err) || fs_targets_resample(&t, mj->opt.timestep, &err) ||
      fs_replay_bind(mj, path, &t, &bind, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  mjData** out = calloc((size_t)nworld, sizeof *out);
  mjData* d = fsh_make_data(mj);
  fs_replay_reset_world(mj, &bind, d);
  int nwarmup = (int)lround(0.05 / mj->opt.timestep);
  for (int s = 0; s < nwarmup; s++) mj_step(mj, d);
  for (int s = 0, w = 0; w < nworld; s++) {
    for (int a = 0; a < bind.nact; a++)
      d->ctrl[bind.actuator[a]] = t.value[(long)s * bind.nact + a];
    mj_step(mj, d);
    if ((s + 1) % 40) continue;
    out[w] = fsh_copy_data(mj, d);
    mj_forward(mj, out[w]);
    w++;
  }
  mj_deleteData(d);
  fs_replay_binding_free(&bind);
  fs_targets_free(&t);
  return out;
}

//---------------------------------- MuJoCo's own spread
//---------------------------------------------
// Whole steps' and mj_forward's runs: common/parity/spread.h; one solve's: here.

#ifndef FS_REAL_FLOAT
// The noslip floor's replay (common/parity/spread.h) summed in MuJoCo's order: MuJoCo's
// efc_force to the bit where AR is sparse (mju_dot of a dense AR may take MuJoCo's
// SIMD path: printed).
static int check_noslip_replay(const mjModel* mj, mjData* const* ref, int nworld) {
  double self_err = 0;
  mjData** d = fsh_noslip_floor(mj, ref, nworld, FSH_SUM_MJ, &self_err);
  if (!d) return 0;
  fsh_free_worlds(d, nworld);
  int bad = mj_isSparse(mj) && self_err != 0;
  printf("  noslip replayed in MuJoCo's order (the floor's replay): efc_force %.2e from "
         "MuJoCo's%s\n",
         self_err, bad ? "  <-- FAIL" : "");
  return bad;
}
#else
static void round_float(mjtNum* x, long n) {
  for (long k = 0; k < n; k++) x[k] = (float)x[k];
}

// MuJoCo's solve with its inputs rounded to float32: the rows (J, D, R, aref), M and
// its factor, qacc_smooth, qfrc_smooth, the warm start; islands and the projection
// made again from them, then mj_fwdConstraint.
static mjData** run_rounded_inputs(const mjModel* mj, mjData* const* ref, int nworld) {
  mjData** d = calloc((size_t)nworld, sizeof *d);
  for (int w = 0; w < nworld; w++) {
    mjData* x = d[w] = fsh_copy_data(mj, ref[w]);
    round_float(x->efc_J, mj_isSparse(mj) ? x->nJ : (long)x->nefc * mj->nv);
    round_float(x->efc_D, x->nefc);
    round_float(x->efc_R, x->nefc);
    round_float(x->efc_aref, x->nefc);
    round_float(x->M, mj->nC);
    round_float(x->qLD, mj->nC);
    round_float(x->qLDiagInv, mj->nv);
    round_float(x->qacc_smooth, mj->nv);
    round_float(x->qfrc_smooth, mj->nv);
    round_float(x->qacc_warmstart, mj->nv);
    mj_island(mj, x);
    mj_projectConstraint(mj, x);
    mj_fwdConstraint(mj, x);
  }
  return d;
}
#endif

//---------------------------------- comparisons
//-------------------------------------------------------

// Islands and iteration counts against MuJoCo's (nisland, solver_niter per island);
// the worlds whose counts differ are listed. float64: 1 if an island count differs or
// more than a tenth of the worlds count differently; exact inputs (exact, the solver
// alone) with MuJoCo's sparse Jacobian on one lane (the same arithmetic; many lanes
// add their parts in another order), also if the Newton's last
// statistics (scaled improvement and gradient, MuJoCo's d->solver of its last Newton
// iteration) differ beyond 1e-9. (From the state, the inputs differ in their last
// bits, and the last gradient, at convergence, is rounding noise.)
static int compare_iterations(const char* label, const fsModel* m, const mjModel* mj,
                              mjData* const* ref, const char* skip, int exact) {
  int differ = 0, islands = 0, n = 0, total = 0, mj_total = 0, nstat = 0;
  double stat_err = 0;
  char list[512] = "";
  for (int w = 0; w < g_batch.nworld; w++) {
    if (skip && skip[w]) continue;
    fsData d = fs_worlds_view(m, &g_batch, w);
    const mjData* md = ref[w];
    n++;
    if (d.nisland[0] != md->nisland) {
      printf("  %-22s world %d: %d islands, MuJoCo %d  <-- FAIL\n", label, w, d.nisland[0],
             md->nisland);
      islands++;
      continue;
    }
    int ni = md->nisland ? md->nisland : 1, dif = 0;
    for (int k = 0; k < ni && k < FS_NISLAND; k++) {
      dif |= d.solver_niter[k] != md->solver_niter[k];
      total += d.solver_niter[k];
      mj_total += md->solver_niter[k];
      int newton = md->solver_niter[k] - d.solver_nnoslip[k];
      if (d.solver_niter[k] != md->solver_niter[k] || newton <= 0 || newton > mjNSOLVER) continue;
      const mjSolverStat* st = md->solver + k * mjNSOLVER + newton - 1;
      double a[2] = {d.solver_improvement[k], d.solver_gradient[k]};
      double b[2] = {st->improvement, st->gradient};
      for (int j = 0; j < 2; j++) {
        stat_err = fmax(stat_err, fabs(a[j] - b[j]) / fmax(fabs(b[j]), 1e-300));
      }
      nstat++;
    }
    if (dif) {
      size_t len = strlen(list);
      if (len < sizeof list - 40) {
        snprintf(list + len, sizeof list - len, " w%d(", w);
        for (int k = 0; k < ni && k < FS_NISLAND; k++) {
          len = strlen(list);
          snprintf(list + len, sizeof list - len, "%s%d vs %d", k ? ", " : "", d.solver_niter[k],
                   md->solver_niter[k]);
        }
        strcat(list, ")");
      }
      differ++;
    }
  }
  g_iter_worlds += n;
  g_iter_differ += differ;
#ifdef FS_REAL_FLOAT
  int bad = islands > 0;
  (void)mj, (void)exact;
#else
  int strict = exact && g_one_lane && mj_isSparse(mj), bad_stat = strict && stat_err > 1e-9;
  int bad = islands || differ * 10 > n || bad_stat;
#endif
  printf("  %-22s islands equal in %d/%d worlds; iterations %d (MuJoCo %d), differ in %d "
         "world(s)%s%s\n",
         label, n - islands, n, total, mj_total, differ, list, bad ? "  <-- FAIL" : "");
  printf("  %-22s the Newton's last improvement and gradient: %.2e relative to MuJoCo's "
         "(%d islands)\n",
         label, stat_err, nstat);
  return bad;
}

// Row states against MuJoCo's: equal, but in float32 where MuJoCo's force is within
// force_bound x the world's largest force of 0 (a row at its boundary).
static int compare_states(const char* label, const fsModel* m, mjData* const* ref,
                          double force_bound, const char* skip) {
  int rows = 0, differ = 0, boundary = 0;
  for (int w = 0; w < g_batch.nworld; w++) {
    fsData d = fs_worlds_view(m, &g_batch, w);
    const mjData* md = ref[w];
    if ((skip && skip[w]) || d.nefc[0] != md->nefc) continue;
    double scale = 0;
    for (int r = 0; r < md->nefc; r++) scale = fmax(scale, fabs(md->efc_force[r]));
    for (int r = 0; r < md->nefc; r++, rows++) {
      if (d.efc_state[r] == md->efc_state[r]) continue;
#ifdef FS_REAL_FLOAT
      if (fabs(md->efc_force[r]) <= force_bound * scale) {
        boundary++;
        continue;
      }
#else
      (void)force_bound;
#endif
      if (!differ)
        printf("  %-22s efc_state world %d row %d: %d, MuJoCo %d (force %.6g)\n", label, w, r,
               d.efc_state[r], md->efc_state[r], md->efc_force[r]);
      differ++;
    }
  }
  printf("  %-22s %-18s %d of %d rows differ%s%s\n", label, "efc_state", differ + boundary, rows,
         boundary ? " (at their boundary)" : "", differ ? "  <-- FAIL" : "");
  return differ > 0;
}

// One field against MuJoCo's within its bound (field_bound); its largest error into
// *worst, over the bound into g_ratio.
static int compare_field(const char* label, const fsModel* m, const mjModel* mj, mjData* const* ref,
                         const char* name, const fshFloors* f, const char* skip, double* worst,
                         double* bound_out) {
  double floor, bound = fsh_floor_bound(mj, name, f, ref, g_batch.nworld, skip, &kTol, &floor),
                w[2] = {0, 0};
  fshTol tol = {bound, kTol.floor, skip, NULL};
  const char* one[] = {name, NULL};
  const fsFieldInfo* fi = fsh_field(name);
  if (bound > kTol.rel)
    printf("  %-22s %-18s bound %.2e = %g x MuJoCo's spread %.2e\n", label, name, bound,
           FSH_FLOOR_RATIO, floor);
  int bad;
  if (fi->kind == FS_KIND_EFC) {
    tol.only = one;
    bad = fsh_compare_efc(label, m, &g_batch, mj, ref, &tol, fi->stage, w);
  } else {
    bad = fsh_compare_fields(label, m, &g_batch, one, ref, &tol, w);
  }
  *worst = fmax(*worst, fmax(w[0], w[1]));
  g_ratio = fmax(g_ratio, fmax(w[0], w[1]) / bound);
  if (bound_out) *bound_out = bound;
  return bad;
}

// MuJoCo leaves efc_state unset with islands, no warm start and no noslip.
static int states_defined(const mjModel* mj) {
  int islands = !(mj->opt.disableflags & mjDSBL_ISLAND);
  return !(islands && (mj->opt.disableflags & mjDSBL_WARMSTART) && mj->opt.noslip_iterations == 0);
}

// The solver's outputs against MuJoCo's: qacc, qfrc_constraint, efc_b, efc_force,
// efc_state; islands and iterations. *worst: the largest error.
static int compare_solver(const char* label, const fsModel* m, const mjModel* mj,
                          mjData* const* ref, const fshFloors* f, const char* skip, int exact,
                          double* worst) {
  static const char* const fields[] = {"qacc", "qfrc_constraint", "efc_b", "efc_force", NULL};
  int nbad = 0;
  double force_bound = kTol.rel;
  for (int i = 0; fields[i]; i++)
    nbad += compare_field(label, m, mj, ref, fields[i], f, skip, worst,
                          !strcmp(fields[i], "efc_force") ? &force_bound : NULL);
  if (states_defined(mj)) nbad += compare_states(label, m, ref, force_bound, skip);
  nbad += compare_iterations(label, m, mj, ref, skip, exact);
  return nbad;
}

// 1. The solver alone from MuJoCo's inputs.
static int solver_alone(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref,
                        const fshFloors* f) {
  printf(" the solver alone (inputs from MuJoCo, outputs poisoned):\n");
  if (fsh_load_worlds(m, &g_batch, mj, ref, -1)) return 1;
  fs_worlds_poison(m, &g_batch, FS_STAGE_CONSTRAINT);
  if (fsh_run(r, &g_batch, FS_STAGE_CONSTRAINT, 0)) return 1;
  return compare_solver("fwd_constraint", m, mj, ref, f, NULL, 1, &g_worst[0]);
}

// 2. Noslip alone: MuJoCo's forces of a solve without noslip in, against MuJoCo's
// with noslip (the same states): efc_force, efc_state, qfrc_constraint, qacc, and
// the sweeps (MuJoCo's iterations with noslip less those without).
static int noslip_alone(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref,
                        const fshFloors* f) {
  if (mj->opt.noslip_iterations <= 0) return 0;
  printf(" noslip alone (MuJoCo's Newton forces in):\n");
  mjModel* m0 = mj_copyModel(NULL, mj);
  m0->opt.noslip_iterations = 0;
  int N = g_batch.nworld, nbad = 0;
  mjData** newton = calloc((size_t)N, sizeof *newton);
  for (int w = 0; w < N; w++) {
    newton[w] = fsh_copy_data(mj, ref[w]);
    mj_forward(m0, newton[w]);
  }
  if (fsh_load_worlds(m, &g_batch, mj, ref, -1)) return 1;
  for (int w = 0; w < N; w++) {
    fsData d = fs_worlds_view(m, &g_batch, w);
    for (int i = 0; i < newton[w]->nefc; i++) d.efc_force[i] = (fsReal)newton[w]->efc_force[i];
  }
  if (fsh_run(r, &g_batch, FS_STAGE_NOSLIP, 0)) return 1;
  static const char* const fields[] = {"qacc", "qfrc_constraint", "efc_force", NULL};
  double force_bound = kTol.rel;
  for (int i = 0; fields[i]; i++)
    nbad += compare_field("noslip", m, mj, ref, fields[i], f, NULL, &g_worst[1],
                          !strcmp(fields[i], "efc_force") ? &force_bound : NULL);
  nbad += compare_states("noslip", m, ref, force_bound, NULL);
  int differ = 0;
  for (int w = 0; w < N; w++) {
    fsData d = fs_worlds_view(m, &g_batch, w);
    int ni = ref[w]->nisland ? ref[w]->nisland : 1;
    for (int k = 0; k < ni && k < FS_NISLAND; k++)
      differ += d.solver_niter[k] != ref[w]->solver_niter[k] - newton[w]->solver_niter[k];
  }
#ifdef FS_REAL_FLOAT
  int bad = 0;
#else
  int bad = differ > 0;
#endif
  printf("  %-22s sweeps differ in %d island(s)%s\n", "noslip", differ, bad ? "  <-- FAIL" : "");
  nbad += bad;
  fsh_free_worlds(newton, N);
  mj_deleteModel(m0);
  return nbad;
}

// 3. mj_forward from the state.
static int forward_chained(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref,
                           const fshFloors* f) {
  printf(" mj_forward from the state (all outputs poisoned):\n");
  if (fsh_load_worlds(m, &g_batch, mj, ref, FS_STAGE_STATE)) return 1;
  for (int s = FS_STAGE_KINEMATICS; s < FS_NSTAGE; s++) fs_worlds_poison(m, &g_batch, s);
  if (fsh_run(r, &g_batch, FSH_FORWARD, 0)) return 1;
  char* skip = calloc((size_t)g_batch.nworld, 1);
  int nskip = fsh_contact_sets_differ(m, &g_batch, ref, skip), nbad = 0;
  if (nskip) {
    printf("  %d world(s) with contacts that differ at a threshold: not compared\n", nskip);
#ifndef FS_REAL_FLOAT
    nbad++; // float64: never
#endif
  }
  static const char* const smooth[] = {"qacc_smooth", "qfrc_smooth", "qfrc_passive", NULL};
  for (int i = 0; smooth[i]; i++)
    nbad += compare_field("smooth", m, mj, ref, smooth[i], f, skip, &g_worst[2], NULL);
  nbad += compare_solver("fwd_constraint", m, mj, ref, f, skip, 0, &g_worst[2]);
  free(skip);
  return nbad;
}

// 4. Whole steps from the state against mj_step: one, then nstep - 1 more; bounded by
// MuJoCo's spread over the same steps (see the top).
static int whole_steps(const fshRunner* r, const fsModel* m, const mjModel* mj, mjData** ref,
                       int nstep) {
  static const char* const state[] = {"qpos", "qvel", "qacc_warmstart", NULL};
  int nbad = 0, N = g_batch.nworld;
  printf(" whole steps from the state:\n");
  for (int k = 0; k < 2; k++) {
    int n = k ? nstep : 1;
    mjData** st = fsh_mj_steps(mj, ref, N, n, FSH_MJ_AS_IS);
    fshFloors f;
    fsh_step_floors(mj, ref, N, n, &f);
    if (fsh_load_worlds(m, &g_batch, mj, ref, FS_STAGE_STATE) || fsh_run(r, &g_batch, FSH_STEP, n))
      return 1;
    char label[32];
    snprintf(label, sizeof label, "step %d", n);
    char* skip = calloc((size_t)N, 1); // the last step's contacts (float32: at a threshold)
    int nskip = fsh_contact_sets_differ(m, &g_batch, st, skip);
    if (nskip) {
      printf("  %-22s %d world(s) whose last step's contacts differ at a threshold: not "
             "compared\n",
             label, nskip);
#ifndef FS_REAL_FLOAT
      nbad++; // float64: never
#endif
    }
    for (int i = 0; state[i]; i++)
      nbad += compare_field(label, m, mj, st, state[i], &f, skip, &g_worst[3], NULL);
    free(skip);
    fsh_floors_free(&f, N);
    fsh_free_worlds(st, N);
  }
  return nbad;
}

static mjModel* load_case(const Case* c) {
  mjModel* mj = fs_test_load_model(c->path);
  mj->opt.disableflags ^= c->disable;
  if (c->jacobian >= 0) mj->opt.jacobian = c->jacobian;
  if (c->noslip >= 0) mj->opt.noslip_iterations = c->noslip;
  if (c->opts & OPT_CG) mj->opt.solver = mjSOL_CG;
  if (c->opts & OPT_ELLIPTIC) mj->opt.cone = mjCONE_ELLIPTIC;
  return mj;
}

// MuJoCo's solver statistics over the worlds; the rows' states at MuJoCo's solution
// (mj_constraintUpdate at its qacc, the outputs it overwrites restored after: with islands
// efc_state holds the warm start's): quadratic, satisfied, friction loss beyond its bound,
// in a cone's middle zone. Returns the worlds with an island of several trees.
static int print_stats(const mjModel* mj, mjData* const* ref, int nworld) {
  int emin = 1 << 30, emax = 0, imax = 0, it_min = 1 << 30, it_max = 0, cold = 0, joined = 0;
  int nstate[5] = {0, 0, 0, 0, 0};
  for (int w = 0; w < nworld; w++) {
    mjData* d = ref[w];
    size_t ne = (size_t)d->nefc + 1, nv = (size_t)mj->nv + 1;
    mjtNum *jar = malloc(sizeof(mjtNum) * ne), *force = malloc(sizeof(mjtNum) * ne);
    mjtNum* qfrc = malloc(sizeof(mjtNum) * nv);
    int* state = malloc(sizeof(int) * ne);
    memcpy(force, d->efc_force, sizeof(mjtNum) * (size_t)d->nefc);
    memcpy(state, d->efc_state, sizeof(int) * (size_t)d->nefc);
    memcpy(qfrc, d->qfrc_constraint, sizeof(mjtNum) * (size_t)mj->nv);
    mj_mulJacVec(mj, d, jar, d->qacc);
    for (int r = 0; r < d->nefc; r++) jar[r] -= d->efc_aref[r];
    mj_constraintUpdate(mj, d, jar, NULL, 0);
    for (int r = 0; r < d->nefc; r++)
      if (d->efc_state[r] >= 0 && d->efc_state[r] < 5) nstate[d->efc_state[r]]++;
    memcpy(d->efc_force, force, sizeof(mjtNum) * (size_t)d->nefc);
    memcpy(d->efc_state, state, sizeof(int) * (size_t)d->nefc);
    memcpy(d->qfrc_constraint, qfrc, sizeof(mjtNum) * (size_t)mj->nv);
    free(jar);
    free(force);
    free(qfrc);
    free(state);
    emin = d->nefc < emin ? d->nefc : emin;
    emax = d->nefc > emax ? d->nefc : emax;
    imax = d->nisland > imax ? d->nisland : imax;
    for (int k = 0; k < (d->nisland ? d->nisland : 1) && k < mjNISLAND; k++) {
      it_min = d->solver_niter[k] < it_min ? d->solver_niter[k] : it_min;
      it_max = d->solver_niter[k] > it_max ? d->solver_niter[k] : it_max;
    }
    cold += d->nefc && d->solver_niter[0] == mj->opt.noslip_iterations;
    int several = 0; // an island holding two trees
    for (int t = 0; t < mj->ntree && d->nisland; t++)
      for (int u = t + 1; u < mj->ntree; u++)
        several |= d->tree_island[t] >= 0 && d->tree_island[t] == d->tree_island[u];
    joined += several;
  }
  printf(" MuJoCo: nefc %d..%d, up to %d island(s), %d..%d iterations per island (Newton + "
         "noslip %d), %d world(s) with rows certified at the warm start\n",
         emin, emax, imax, it_min, it_max, mj->opt.noslip_iterations, cold);
  printf(" MuJoCo's rows at its solution: %d quadratic, %d satisfied, %d friction loss linear, %d "
         "in a cone's middle zone\n",
         nstate[mjCNSTRSTATE_QUADRATIC], nstate[mjCNSTRSTATE_SATISFIED],
         nstate[mjCNSTRSTATE_LINEARNEG] + nstate[mjCNSTRSTATE_LINEARPOS],
         nstate[mjCNSTRSTATE_CONE]);
  if (mj->ntree > 1) printf(" MuJoCo: %d world(s) with an island of several trees\n", joined);
  return joined;
}

static int run_case(const fshRunner* r, const Case* c, uint64_t seed) {
  printf("\n== %s (%s), %d worlds, %s\n", c->label, c->path, c->nworld, r->name);
  mjModel* mj = load_case(c);
  fsModel m;
  fsError err;
  if (fs_model_build(mj, c->path, &m, &err)) {
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
  printf(" %d rows of at most %d dofs per world, Jacobian %s, islands %s, noslip %d\n", m.nefcmax,
         m.njmax, m.jac_sparse ? "sparse" : "dense", m.islands ? "on" : "off", m.noslip_iterations);
  mjData** ref;
  fs_test_seed(seed);
  if (c->replay) {
    ref = replay_worlds(mj, c->path, c->nworld);
  } else {
    ref = fsh_moving_contact_worlds(mj, c->nworld, seed, &c->noise, c->vnoise);
    set_warmstarts(mj, ref, c->nworld);
  }
  int joined = print_stats(mj, ref, c->nworld);
  if (strstr(c->label, "islands joining trees"))
    CHECK_MSG(joined > 0, "%s: no world has an island of several trees", c->label);
  if (strstr(c->label, "tendon limits")) { // the rows the case is about, made by MuJoCo
    int nlim = 0, nfri = 0, both = 0, elbow = mj_name2id(mj, mjOBJ_TENDON, "elbow");
    for (int w = 0; w < c->nworld; w++) {
      int sides = 0;
      for (int k = 0; k < ref[w]->nefc; k++) {
        nlim += ref[w]->efc_type[k] == mjCNSTR_LIMIT_TENDON;
        nfri += ref[w]->efc_type[k] == mjCNSTR_FRICTION_TENDON;
        sides += ref[w]->efc_type[k] == mjCNSTR_LIMIT_TENDON && ref[w]->efc_id[k] == elbow;
      }
      both += sides == 2;
    }
    printf(" MuJoCo: %d tendon limit rows, %d tendon friction-loss rows, %d world(s) with both "
           "sides of a tendon's limit\n",
           nlim, nfri, both);
    CHECK_MSG(nlim > 0 && nfri > 0 && both > 0, "%s: MuJoCo made no such rows", c->label);
  }
  int nbad = 0, rc = fs_worlds_alloc(&m, c->nworld, &g_batch, &err);
  if (!rc) rc = r->open(r->self, &m, c->nworld, &err);
  if (rc == FS_TEST_SKIP) {
    nbad = FS_TEST_SKIP;
  } else if (rc) {
    fprintf(stderr, "%s\n", err.msg);
    nbad = 1;
  } else {
    fshFloors f = {{NULL}}; // one solve, and mj_forward
#ifdef FS_REAL_FLOAT
    f.run[0] = run_rounded_inputs(mj, ref, c->nworld);
#else
    fsh_solver_floors(mj, ref, c->nworld, &f);
    nbad += check_noslip_replay(mj, ref, c->nworld);
#endif
    nbad += solver_alone(r, &m, mj, ref, &f);
    nbad += noslip_alone(r, &m, mj, ref, &f);
#ifdef FS_REAL_FLOAT
    f.run[1] = fsh_mj_steps(mj, ref, c->nworld, 0, FSH_MJ_F32);
    for (int j = 2; j < 4; j++) f.run[j] = fsh_mj_steps(mj, ref, c->nworld, 0, FSH_MJ_F32_EPS);
#endif
    nbad += forward_chained(r, &m, mj, ref, &f);
    fsh_floors_free(&f, c->nworld);
    nbad += whole_steps(r, &m, mj, ref, c->nstep);
    r->close(r->self);
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
  g_one_lane = strstr(r.name, "host") && !strstr(r.name, "lanes");
  printf("tolerance: error = |ours - MuJoCo| / max(|MuJoCo|, %g * max|field in the world|) <= "
         "max(%g, %g x MuJoCo's own spread)\n",
         kTol.floor, kTol.rel, FSH_FLOOR_RATIO);
  char walker[1024], limits[1024], cones[1024], prim[1024], tethered[1024], fly[1024], flycap[1024];
  char bodies[1024], islands[1024], tendon_rows[1024];
  snprintf(walker, sizeof walker, "%s", fs_test_model("cuda_efc_walker.xml"));
  snprintf(limits, sizeof limits, "%s", fs_test_model("cuda_efc_limits.xml"));
  snprintf(cones, sizeof cones, "%s", fs_test_model("cuda_efc_elliptic.xml"));
  snprintf(prim, sizeof prim, "%s", fs_test_model("cuda_contact_primitives.xml"));
  snprintf(tethered, sizeof tethered, "%s", fs_test_model("cuda_tethered.xml"));
  snprintf(fly, sizeof fly, "%s", fs_test_asset("mesh.mjb"));
  snprintf(flycap, sizeof flycap, "%s", fs_test_asset("capsule.mjb"));
  snprintf(bodies, sizeof bodies, "%s", fs_test_model("cuda_contact_bodies.xml"));
  snprintf(islands, sizeof islands, "%s", fs_test_model("islands.xml"));
  snprintf(tendon_rows, sizeof tendon_rows, "%s", fs_test_model("tendon_rows.xml"));
  const fshContactNoise walk = {0.6, 0.4, -0.03, 0.012, 4, 0, 0};
  const fshContactNoise prim_noise = {0, 3.2, -0.03, 0.02, 2, 0, 0};
  const fshContactNoise fly_noise = {0.3, 0.3, -0.02, 0.002, 10, 0, 0};
  const fshContactNoise tether_noise = {0.3, 0, 0, 0, 0, 0, 0}; // hinges only: no free body
  const fshContactNoise bodies_noise = {1.5, 3.2, -0.02, 0.01, 1, 0, 2};   // arms anywhere
  const fshContactNoise islands_noise = {0.15, 0.4, -0.01, 0.01, 1, 0, 2}; // the ball on the rods
  const fshContactNoise tendon_noise = {0.3, 0.4, -0.01, 0.01, 1, 0, 2}; // tendons at their limits
  const Case cases[] = {
      {"NeuroMechFly replay, meshes", fly, 0, -1, -1, 12, 0, fly_noise, 1, 20,
       SUBSET_LANES | SUBSET_SMALL, 0},
      {"NeuroMechFly replay, meshes, no noslip", fly, 0, -1, 0, 6, 0, fly_noise, 1, 20, 0, 0},
      {"NeuroMechFly replay, capsules", flycap, 0, -1, -1, 6, 0, fly_noise, 1, 20, 0, 0},
      {"NeuroMechFly, meshes", fly, 0, -1, -1, 9, 5.0, fly_noise, 0, 20,
       SUBSET_LANES | SUBSET_SMALL, 0},
      {"NeuroMechFly, meshes, no noslip", fly, 0, -1, 0, 9, 5.0, fly_noise, 0, 20, 0, 0},
      {"NeuroMechFly, capsules, islands off", flycap, mjDSBL_ISLAND, -1, -1, 6, 5.0, fly_noise, 0,
       20, 0, 0},
      {"walker, sparse Jacobian", walker, 0, mjJAC_SPARSE, -1, 12, 1.0, walk, 0, 20, 0, 0},
      {"walker, sparse, noslip 3", walker, 0, mjJAC_SPARSE, 3, 12, 1.0, walk, 0, 20,
       SUBSET_LANES | SUBSET_SMALL, 0},
      {"walker, sparse, islands off", walker, mjDSBL_ISLAND, mjJAC_SPARSE, 3, 9, 1.0, walk, 0, 20,
       0, 0},
      {"walker, sparse, no warm start", walker, mjDSBL_WARMSTART, mjJAC_SPARSE, -1, 6, 1.0, walk, 0,
       20, 0, 0},
      {"walker (dense Jacobian)", walker, 0, -1, 3, 12, 1.0, walk, 0, 20, 0, 0},
      {"primitives, sparse", prim, 0, mjJAC_SPARSE, 3, 12, 1.0, prim_noise, 0, 20, SUBSET_SMALL, 0},
      {"tethered limb (mocap), sparse", tethered, 0, mjJAC_SPARSE, 3, 12, 1.0, tether_noise, 0, 20,
       0, 0},
      // noslip's decisions at their threshold (common/parity/spread.h)
      {"NeuroMechFly, capsules", flycap, 0, -1, -1, 8, 5.0, fly_noise, 0, 20, 0, 0},
      // friction-loss rows (linear beyond their bound) and joint limits (appended: the cases above
      // keep their seeds)
      {"walker, limits and friction loss, sparse", limits, 0, mjJAC_SPARSE, -1, 12, 1.0, walk, 0,
       20, SUBSET_LANES | SUBSET_SMALL, 0},
      {"walker, limits and friction loss (dense)", limits, 0, -1, -1, 12, 1.0, walk, 0, 20, 0, 0},
      {"walker, limits and friction loss, islands off", limits, mjDSBL_ISLAND, mjJAC_SPARSE, -1, 9,
       1.0, walk, 0, 20, 0, 0},
      {"walker, limits and friction loss, no warm start", limits, mjDSBL_WARMSTART, mjJAC_SPARSE,
       -1, 6, 1.0, walk, 0, 20, 0, 0},
      // the elliptic cone: zones, cone Hessians, their line search
      {"walker, elliptic cones, sparse", cones, 0, mjJAC_SPARSE, -1, 12, 1.0, walk, 0, 20,
       SUBSET_LANES | SUBSET_SMALL, 0},
      {"walker, elliptic cones (dense)", cones, 0, -1, -1, 12, 1.0, walk, 0, 20, 0, 0},
      {"walker, elliptic cones, islands off", cones, mjDSBL_ISLAND, mjJAC_SPARSE, -1, 9, 1.0, walk,
       0, 20, 0, 0},
      {"walker, elliptic cones, no warm start", cones, mjDSBL_WARMSTART, -1, -1, 6, 1.0, walk, 0,
       20, 0, 0},
      // the CG solver (Hager-Zhang directions from M \ grad, the same line search)
      {"walker, CG, sparse", walker, 0, mjJAC_SPARSE, -1, 12, 1.0, walk, 0, 20,
       SUBSET_LANES | SUBSET_SMALL, 1},
      {"walker, limits and friction loss, CG (dense)", limits, 0, -1, -1, 12, 1.0, walk, 0, 20, 0,
       1},
      {"walker, elliptic cones, CG, sparse", cones, 0, mjJAC_SPARSE, -1, 12, 1.0, walk, 0, 20, 0,
       1},
      {"walker, elliptic cones, CG, islands off", cones, mjDSBL_ISLAND, -1, -1, 6, 1.0, walk, 0, 20,
       0, 1},
      {"NeuroMechFly, meshes, CG", fly, 0, -1, -1, 6, 5.0, fly_noise, 0, 20, 0, 1},
      // islands of several trees: moving bodies whose contacts join them (the model's islands
      // switched on; the host's dense rows, MuJoCo's gathered island order)
      {"moving bodies, islands joining trees", bodies, mjDSBL_ISLAND, -1, -1, 12, 1.0, bodies_noise,
       0, 20, 0, 0},
      {"moving bodies, islands joining trees, CG", bodies, mjDSBL_ISLAND, -1, -1, 12, 1.0,
       bodies_noise, 0, 20, 0, OPT_CG},
      {"moving bodies, islands joining trees, elliptic cones", bodies, mjDSBL_ISLAND, -1, -1, 12,
       1.0, bodies_noise, 0, 20, 0, OPT_ELLIPTIC},
      // equalities joining trees, one whose other column is an exact zero (no join), a tree
      // without rows, a free body of its own (tests/models/islands.xml)
      {"islands joining trees: equalities and contacts", islands, 0, -1, -1, 12, 1.0, islands_noise,
       0, 20, 0, 0},
      {"islands joining trees: equalities and contacts, elliptic cones, CG", islands, 0, -1, -1, 12,
       1.0, islands_noise, 0, 20, 0, OPT_CG | OPT_ELLIPTIC},
      // fixed tendons' limits (both sides at once, a joint listed twice) and friction loss, a
      // tendon joining two trees, one whose dense row is empty (tests/models/tendon_rows.xml)
      {"tendon limits and friction loss, islands joining trees", tendon_rows, 0, -1, -1, 12, 1.0,
       tendon_noise, 0, 20, 0, 0},
      {"tendon limits and friction loss, islands joining trees, elliptic cones, CG", tendon_rows, 0,
       -1, -1, 12, 1.0, tendon_noise, 0, 20, 0, OPT_CG | OPT_ELLIPTIC},
      {"tendon limits and friction loss, islands off", tendon_rows, mjDSBL_ISLAND, -1, -1, 9, 1.0,
       tendon_noise, 0, 20, 0, 0},
  };
  int ncase = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < ncase; i++) {
    Case c = cases[i];
#ifdef FS_EMULATE_LANES
    // 32 threads per world under ThreadSanitizer: the lane code, not the statistics --
    // the fly (replay, contact worlds), one walker with islands and noslip, 3 worlds each
    if (!(c.subset & SUBSET_LANES)) continue;
    c.nworld = 3;
    c.nstep = 5;
#endif
    if (FS_TEST_SANITIZED) { // the sanitizers: every case, the code paths, not the statistics
      c.nworld = 3;
      c.nstep = 5;
    }
    if (fs_test_small()) { // the GPU simulator: the same cases and the primitives, 3 steps
      if (!(c.subset & SUBSET_SMALL)) continue;
      c.nworld = 3;
      c.nstep = 3;
    }
    if (run_case(&r, &c, 5000 + (uint64_t)i) == FS_TEST_SKIP) {
      printf("skipped: no CUDA device\n");
      return FS_TEST_SKIP;
    }
  }
  printf("\nworst error over all models (%s): solver alone %.2e, noslip alone %.2e, in "
         "mj_forward %.2e, whole steps %.2e; the largest error over its bound %.2g; iteration "
         "counts differ in %d of %d worlds\n",
         r.name, g_worst[0], g_worst[1], g_worst[2], g_worst[3], g_ratio, g_iter_differ,
         g_iter_worlds);
  return fs_test_finish("engine solver");
}
