// The stage-by-stage check (common/parity/stages.h).
#include "common/parity/stages.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parity/contacts.h"
#include "common/parity/efc.h"
#include "common/parity/spread.h"

fshTol fsh_stage_tolerance(double* tol_b) {
#ifdef FS_REAL_FLOAT
  if (tol_b) *tol_b = 1e-6;
  return (fshTol){1e-4, 1.0, NULL, NULL};
#else
  if (tol_b) *tol_b = 0;
  return (fshTol){1e-9, 1e-6, NULL, NULL};
#endif
}

// The worlds, the model and the batch of one check.
typedef struct Check {
  const fshRunner* r;
  const fsModel* m;
  const mjModel* mj;
  const fshStageCheck* c;
  mjData** ref;
  fsWorlds b;
  int contacts;     // the model's contacts are on
  fshFloors solver; // MuJoCo's own spread of the solver's outputs (common/parity/spread.h)
} Check;

// The model has contact pairs (explicit or by contype/conaffinity: m's) and they are on.
static int contacts_on(const mjModel* mj, const fsModel* m) {
  return m->npair > 0 && fs_model_contacts_enabled(mj);
}

// A stage's contact and row fields (collision, make_constraint, reference_constraint,
// constraint): through the contact and row comparisons. Worlds whose contact sets
// differ at a float32 threshold are left out of the rows (float64: a failure).
// The worlds whose contact sets differ at a threshold (*skip, new; freed by the caller) left
// out of t's row comparisons; returns the failures that makes (float64: one, never allowed).
static int skip_threshold_worlds(Check* k, const char* label, fshTol* t, char** skip) {
  *skip = calloc((size_t)k->b.nworld, 1);
  int nskip = fsh_contact_sets_differ(k->m, &k->b, k->ref, *skip);
  if (!nskip) return 0;
  fsh_note("  %-22s %d world(s) with contacts that differ at a threshold: rows not compared\n",
           label, nskip);
  t->skip = *skip;
  return k->c->tol_b == 0;
}

static int compare_rows(Check* k, const char* label, int stage) {
  const fshTol* tol = &k->c->tol;
  int nbad = 0;
  if (stage == FS_STAGE_COLLISION || stage == FS_STAGE_MAKE_CONSTRAINT)
    nbad += fsh_compare_contacts(label, k->m, &k->b, k->ref, tol, k->c->tol_b, stage, NULL);
  if (stage == FS_STAGE_COLLISION) return nbad;
  char* skip;
  fshTol t = *tol;
  nbad += skip_threshold_worlds(k, label, &t, &skip);
  nbad += fsh_compare_efc(label, k->m, &k->b, k->mj, k->ref, &t, stage, NULL);
  free(skip);
  return nbad;
}

static int has_rows(int stage) {
  return stage == FS_STAGE_COLLISION || stage == FS_STAGE_MAKE_CONSTRAINT ||
         stage == FS_STAGE_REFERENCE_CONSTRAINT || stage == FS_STAGE_CONSTRAINT;
}

// MuJoCo-layout fields `names` (MJ kind: nq or nv wide, time, or the sensor stage's: see
// fsh_mj_spread) against MuJoCo's ref, each
// within the build's tolerance or FSH_FLOOR_RATIO x MuJoCo's own spread in the runs f
// (common/parity/spread.h; "time" within the tolerance).
static int compare_bounded(Check* k, const char* label, const char* const* names,
                           mjData* const* ref, const fshFloors* f) {
  const fshTol* tol = &k->c->tol;
  int nbad = 0;
  for (int i = 0; names[i]; i++) {
    fshTol t = *tol;
    if (strcmp(names[i], "time"))
      t.rel = fsh_floor_bound(k->mj, names[i], f, ref, k->b.nworld, NULL, tol, NULL);
    const fsFieldInfo* fi = fsh_field(names[i]);
    fshWorst w = fsh_compare_field(k->m, &k->b, fi, ref, &t);
    int bad = !(w.err <= t.rel);
    fshFieldReport r = {label,  names[i], w.err, t.rel > tol->rel ? t.rel : 0, w.world, w.index, "",
                        w.ours, w.ref,    bad};
    snprintf(r.where, sizeof r.where, "world %d [%d]", w.world, w.index);
    fsh_report(&r);
    nbad += bad;
  }
  return nbad;
}

// The solver's outputs (fwd_constraint: qacc, qfrc_constraint, the rows' b, force and
// state) against MuJoCo's; qacc, qfrc_constraint and efc_force within MuJoCo's own spread
// (k->solver: the other Jacobian layout, noslip's decisions), the rest within the
// tolerance. Worlds whose contacts differ at a threshold: as compare_rows.
static int compare_solver(Check* k, const char* label) {
  static const char* const spread[] = {"qacc", "qfrc_constraint", NULL};
  int nbad = compare_bounded(k, label, spread, k->ref, &k->solver);
  if (!k->contacts) return nbad;
  char* skip;
  fshTol t = k->c->tol;
  nbad += skip_threshold_worlds(k, label, &t, &skip);
  static const char* const plain[] = {"efc_b", "efc_state", NULL};
  t.only = plain;
  nbad += fsh_compare_efc(label, k->m, &k->b, k->mj, k->ref, &t, FS_STAGE_CONSTRAINT, NULL);
  const char* force[] = {"efc_force", NULL};
  t.only = force;
  t.rel = fsh_floor_bound(k->mj, "efc_force", &k->solver, k->ref, k->b.nworld, t.skip, &k->c->tol,
                          NULL);
  nbad += fsh_compare_efc(label, k->m, &k->b, k->mj, k->ref, &t, FS_STAGE_CONSTRAINT, NULL);
  free(skip);
  return nbad;
}

// 1. Each stage alone, from MuJoCo's inputs.
static int stages_alone(Check* k) {
  const fsModel* m = k->m;
  int nbad = 0, N = k->b.nworld;
  fsh_note(" stages alone (inputs from MuJoCo, outputs poisoned):\n");
  mjData** eul = calloc((size_t)N, sizeof *eul);
  for (int w = 0; w < N; w++) {
    eul[w] = fsh_copy_data(k->mj, k->ref[w]);
    mj_Euler(k->mj, eul[w]);
  }
  for (int s = FS_STAGE_KINEMATICS; s < FS_NSTAGE && nbad >= 0; s++) {
    if (s == FS_STAGE_NOSLIP) continue; // within the constraint stage (noslip alone: test_solver)
    if (!k->contacts && (s == FS_STAGE_COLLISION || s == FS_STAGE_MAKE_CONSTRAINT)) continue;
    if (fsh_load_worlds(m, &k->b, k->mj, k->ref, -1)) {
      nbad = -1;
      break;
    }
    fs_worlds_poison(m, &k->b, s);
    if (fsh_run(k->r, &k->b, s, 0)) {
      nbad = -1;
      break;
    }
    const char* label = fs_stage_name(s);
    if (s == FS_STAGE_EULER) { // qH is an output only when damping is implicit
      static const char* out[] = {"qH",   "qHDiagInv", "qpos", "qvel", "qacc_warmstart",
                                  "time", NULL};
      nbad += fsh_compare_fields(label, m, &k->b, out + (m->flg_eulerdamp ? 0 : 2), eul, &k->c->tol,
                                 NULL);
      continue;
    }
    if (s == FS_STAGE_CONSTRAINT) {
      nbad += compare_solver(k, label);
      continue;
    }
    nbad += fsh_compare_stage(label, m, &k->b, s, k->ref, &k->c->tol, NULL);
    if (k->contacts && has_rows(s)) nbad += compare_rows(k, label, s);
  }
  fsh_free_worlds(eul, N);
  return nbad;
}

// 2. mj_forward from the state alone; every stage's fields compared in order.
static int forward_chained(Check* k) {
  fsh_note(" mj_forward from the state (all outputs poisoned):\n");
  if (fsh_load_worlds(k->m, &k->b, k->mj, k->ref, FS_STAGE_STATE)) return -1;
  for (int s = FS_STAGE_KINEMATICS; s < FS_NSTAGE; s++) fs_worlds_poison(k->m, &k->b, s);
  if (fsh_run(k->r, &k->b, FSH_FORWARD, 0)) return -1;
  int first = -1, nbad = 0;
  for (int s = FS_STAGE_KINEMATICS; s < FS_STAGE_EULER; s++) {
    if (s == FS_STAGE_NOSLIP) continue;
    char label[48];
    snprintf(label, sizeof label, "forward: %s", fs_stage_name(s));
    int n;
    if (s == FS_STAGE_CONSTRAINT) {
      n = compare_solver(k, label);
    } else if (s == FS_STAGE_SENSOR) { // after the solve: within MuJoCo's own spread of it
      static const char* const all[] = {"sensordata", "subtree_linvel", "subtree_angmom",
                                        "cacc",       "cfrc_int",       "cfrc_ext"};
      const char* held[7] = {NULL}; // those the model holds
      for (int i = 0, j = 0; i < 6; i++)
        if (fs_field_rows(k->m, fsh_field(all[i])) > 0) held[j++] = all[i];
      n = compare_bounded(k, label, held, k->ref, &k->solver);
    } else {
      n = fsh_compare_stage(label, k->m, &k->b, s, k->ref, &k->c->tol, NULL);
      if (k->contacts && has_rows(s)) n += compare_rows(k, label, s);
    }
    if (n && first < 0) first = s;
    nbad += n;
  }
  if (first >= 0) fsh_note(" first stage that diverges: %s\n", fs_stage_name(first));
  return nbad;
}

static int compare_warnings(Check* k, mjData* const* ref, const char* label) {
  int nbad = 0;
  for (int w = 0; w < k->b.nworld; w++) {
    fsData d = fs_worlds_view(k->m, &k->b, w);
    for (int i = 0; i < FS_NWARNING; i++)
      if (d.warning_number[i] != ref[w]->warning[i].number) {
        fshFieldReport r = {label,
                            "warning_number",
                            INFINITY,
                            0,
                            w,
                            i,
                            "",
                            d.warning_number[i],
                            ref[w]->warning[i].number,
                            1};
        snprintf(r.where, sizeof r.where, "world %d [%d]", w, i);
        fsh_report(&r);
        nbad++;
      }
  }
  return nbad;
}

// 3. Whole steps from the state, against mj_step. World 1 gets a NaN control,
// world 2 a NaN velocity (when there are enough worlds).
static int whole_steps(Check* k) {
  const mjModel* mj = k->mj;
  int nbad = 0, N = k->b.nworld, nstep = k->c->nstep;
  mjData** start = calloc((size_t)N, sizeof *start);
  for (int w = 0; w < N; w++) start[w] = fsh_copy_data(mj, k->ref[w]);
  if (N > 1 && mj->nu) start[1]->ctrl[0] = NAN;
  if (N > 2) start[2]->qvel[mj->nv - 1] = NAN;
  if (fsh_load_worlds(k->m, &k->b, mj, start, FS_STAGE_STATE)) nbad = -1;
  const int counts[2] = {1, nstep}; // one step, then nstep from the start (nstep > 1)
  for (int i = 0; i < (nstep > 1 ? 2 : 1) && nbad >= 0; i++) {
    int n = counts[i];
    if (fsh_run(k->r, &k->b, FSH_STEP, i ? n - 1 : 1)) {
      nbad = -1;
      break;
    }
    mjData** st = fsh_mj_steps(mj, start, N, n, FSH_MJ_AS_IS);
    fshFloors f;
    fsh_step_floors(mj, start, N, n, &f);
    char label[32];
    snprintf(label, sizeof label, "step %d", n);
    if (n == 1)
      fsh_note(" one step (world 1: NaN ctrl, world 2: NaN qvel):\n");
    else
      fsh_note(" %d steps:\n", n);
    static const char* const state[] = {"qpos", "qvel", "qacc_warmstart", "time", NULL};
    nbad += compare_bounded(k, label, state, st, &f) + compare_warnings(k, st, label);
    fsh_floors_free(&f, N);
    fsh_free_worlds(st, N);
  }
  fsh_free_worlds(start, N);
  return nbad;
}

// a + b, or -1 when b failed to run.
static int add(int a, int b) {
  return b < 0 ? -1 : a + b;
}

int fsh_check_stages(const fshRunner* r, const mjModel* mj, const char* path,
                     const fshStageCheck* c, fsError* err) {
  fsModel m;
  if (fs_model_build(mj, path, &m, err)) return -1;
  Check k = {r, &m, mj, c, NULL, {0}, contacts_on(mj, &m), {{NULL}}};
  if (k.contacts) {
    // the fly's contact worlds of tests/engine (test_constraint, test_solver)
    const fshContactNoise noise = {0.3, 0.3, -0.02, 0.002, 10, 0, 0};
    k.ref = fsh_moving_contact_worlds(mj, c->nworld, c->seed, &noise, 5.0);
  } else {
    k.ref = fsh_make_worlds(mj, c->nworld, c->seed, &c->noise);
  }
  fsh_solver_floors(mj, k.ref, c->nworld, &k.solver);
  int nbad = 0, rc = fs_worlds_alloc(&m, c->nworld, &k.b, err);
  if (!rc) rc = r->open(r->self, &m, c->nworld, err);
  if (rc == FSH_SKIP) {
    nbad = FSH_SKIP;
  } else if (rc) {
    nbad = -1;
  } else {
    if (nbad >= 0 && (c->parts & FSH_CHECK_ALONE)) nbad = add(nbad, stages_alone(&k));
    if (nbad >= 0 && (c->parts & FSH_CHECK_FORWARD)) nbad = add(nbad, forward_chained(&k));
    if (nbad >= 0 && (c->parts & FSH_CHECK_STEPS)) nbad = add(nbad, whole_steps(&k));
    r->close(r->self);
    if (nbad < 0) fs_fail(err, "%s: the stage check could not run (see the messages above)", path);
  }
  fs_worlds_free(&k.b);
  fsh_floors_free(&k.solver, c->nworld);
  fsh_free_worlds(k.ref, c->nworld);
  fs_model_free(&m);
  return nbad;
}
