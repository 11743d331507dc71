// flysim compare's lockstep run (compare/compare.h).
#include "compare/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys/clock.h"
#include "common/sys/interrupt.h"

const char* fs_floor_name(fsFloorMode mode) {
  return mode == FS_FLOOR_F32 ? "f32" : mode == FS_FLOOR_F32_STEP ? "f32-step" : "ulp";
}

// One run in the lockstep: its side, its worlds' state after the last step.
typedef struct Run {
  const fsCompareSide* side;
  double* q; // (N x nq)
  int* ncon; // (N)
} Run;

enum { RUN_A, RUN_B, RUN_F, NRUN };

//---------------------------------- plans ---------------------------------------------------------

static int same_names(const char** a, const char** b, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(a[i] ? a[i] : "", b[i] ? b[i] : "")) return i;
  return -1;
}

int fs_compare_check_plans(const fsReplay* a, const fsReplay* b, fsError* err) {
  static const char fix[] = "fix: compare models with the same joints and actuators (e.g. the "
                            "MJB and the MJCF of one export)";
  const mjModel *ma = a->m, *mb = b->m;
  const char *pa = a->model_path, *pb = b->model_path;
  if (ma->nq != mb->nq || ma->nv != mb->nv || ma->nu != mb->nu || ma->njnt != mb->njnt)
    return fs_fail(err,
                   "the models differ in size: %s has nq %ld, nv %ld, nu %ld, njnt %ld; %s "
                   "has nq %ld, nv %ld, nu %ld, njnt %ld; %s",
                   pa, (long)ma->nq, (long)ma->nv, (long)ma->nu, (long)ma->njnt, pb, (long)mb->nq,
                   (long)mb->nv, (long)mb->nu, (long)mb->njnt, fix);
  const fsReplayBinding *ba = a->bind, *bb = b->bind;
  int k = ba->njoint != bb->njoint ? 0 : same_names(ba->joint_names, bb->joint_names, ba->njoint);
  if (ba->njoint != bb->njoint || k >= 0)
    return fs_fail(err,
                   "the models' joints differ (%s: %d recorded joints, %s: %d; first "
                   "difference at joint %d); %s",
                   pa, ba->njoint, pb, bb->njoint, k, fix);
  k = ba->nact != bb->nact ? 0 : same_names(ba->actuator_names, bb->actuator_names, ba->nact);
  if (ba->nact != bb->nact || k >= 0)
    return fs_fail(err,
                   "the targets drive different actuators (%s: %d, %s: %d; first "
                   "difference at target column %d); %s",
                   pa, ba->nact, pb, bb->nact, k, fix);
  const fsTargets *ta = a->targets, *tb = b->targets;
  if (ta->nstep != tb->nstep || ta->timestep != tb->timestep)
    return fs_fail(err,
                   "the clips differ in length: %d steps at %g s in %s, %d steps at %g s "
                   "in %s; fix: give both backends the same clip (--targets), or clips "
                   "of the same length and rate",
                   ta->nstep, ta->timestep, ta->path, tb->nstep, tb->timestep, tb->path);
  if (ma->opt.timestep != mb->opt.timestep)
    return fs_fail(err,
                   "the models' timesteps differ: %g s (%s) and %g s (%s); fix: compare "
                   "models with the same option timestep",
                   ma->opt.timestep, pa, mb->opt.timestep, pb);
  if (a->nworld != b->nworld || a->nstep != b->nstep || a->nwarmup != b->nwarmup)
    return fs_fail(err, "internal: the plans differ in worlds, steps or warm-up");
  for (int w = 0; w < a->nworld; w++)
    if (a->world_start[w] != b->world_start[w])
      return fs_fail(err, "internal: world %d starts at clip row %ld and %ld", w, a->world_start[w],
                     b->world_start[w]);
  return 0;
}

//---------------------------------- one step ------------------------------------------------------

int fs_compare_root_qposadr(const mjModel* m) {
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == mjJNT_FREE) return m->jnt_qposadr[j];
  return -1;
}

static double diff(double x, double y) {
  double d = fabs(x - y);
  return isnan(d) ? INFINITY : d;
}

// Compare run X's worlds with A's after step t: pair p's series and world stats. X holds
// K copies of A's worlds (world k N + w is a copy of A's world w; K = 1 but for the floor).
static void compare_pair(const fsCompareSpec* s, const Run* a, const Run* x, int p, int t,
                         fsCompareResult* res) {
  const fsReplay* plan = s->a.plan;
  const fsReplayBinding* b = plan->bind;
  int nq = (int)plan->m->nq, J = b->njoint, N = plan->nworld,
      root = fs_compare_root_qposadr(plan->m), K = x->side->plan->nworld / N;
  double dmax = 0, sum2 = 0, thorax = 0, logsum = 0;
  int ncon = 0;
  for (int w = 0; w < N; w++) {
    const double* qa = a->q + (size_t)w * nq;
    double wmax = 0;
    int differ = 0;
    for (int k = 0; k < K; k++) {
      int wx = k * N + w;
      const double* qx = x->q + (size_t)wx * nq;
      double cmax = 0;
      for (int j = 0; j < J; j++) {
        double d = diff(qx[b->joint_qposadr[j]], qa[b->joint_qposadr[j]]);
        cmax = fmax(cmax, d);
        sum2 += d * d;
      }
      if (root >= 0) {
        double d2 = 0;
        for (int i = 0; i < 3; i++) d2 += pow(diff(qx[root + i], qa[root + i]), 2);
        thorax = fmax(thorax, sqrt(d2));
      }
      differ |= x->ncon[wx] != a->ncon[w];
      wmax = fmax(wmax, cmax);
    }
    double lg = log(fmax(wmax, FS_CMP_DQ_RESOLUTION));
    ncon += differ;
    dmax = fmax(dmax, wmax);
    fsCompareWorld* cw = &res->worlds[w];
    cw->final_dq[p] = wmax;
    cw->max_dq[p] = fmax(cw->max_dq[p], wmax);
    cw->log_dq[p] += lg;
    logsum += lg;
  }
  res->dq_max[p][t] = dmax;
  res->dq_rms[p][t] = sqrt(sum2 / ((double)N * K * (J ? J : 1)));
  res->dq_geo[p][t] = exp(logsum / N);
  res->thorax[p][t] = thorax;
  res->ncon[p][t] = ncon;
  double value[FS_CMP_NTHRESH] = {dmax, thorax, ncon};
  for (int k = 0; k < FS_CMP_NTHRESH; k++)
    if (res->first_over[p][k] < 0 && value[k] > s->threshold[k]) res->first_over[p][k] = t;
  res->max_dq[p] = fmax(res->max_dq[p], dmax);
  res->max_thorax[p] = fmax(res->max_thorax[p], thorax);
}

// Tracking of run r (A or B) after step t: RMS |q - target| over worlds and the
// driven joints (the columns of position servos: a sine control's other columns are not
// angles); each world's sum of squares accumulates in sum2 (N).
static void tracking(const Run* run, int r, int t, double* sum2, fsCompareResult* res) {
  const fsReplay* plan = run->side->plan;
  const fsReplayBinding* b = plan->bind;
  int nq = (int)plan->m->nq, A = b->nact, N = plan->nworld, tracked = fs_replay_tracked_columns(b);
  double total = 0;
  for (int w = 0; w < N; w++) {
    const double* q = run->q + (size_t)w * nq;
    const double* target = plan->targets->value + (plan->world_start[w] + t) * (long)A;
    double s2 = 0;
    for (int a = 0; a < A; a++) {
      if (b->actuator_joint[a] < 0) continue;
      double d = diff(q[b->joint_qposadr[b->actuator_joint[a]]], target[a]);
      s2 += d * d;
    }
    sum2[w] += s2;
    total += s2;
  }
  res->track[r][t] = sqrt(total / ((double)N * (tracked ? tracked : 1)));
}

double fs_compare_ratio(const fsCompareResult* r) {
  if (r->ndone == 0 || r->nworld == 0) return 0;
  double sum = 0;
  for (int w = 0; w < r->nworld; w++)
    sum += r->worlds[w].log_dq[FS_CMP_B] - r->worlds[w].log_dq[FS_CMP_FLOOR];
  return exp(sum / ((double)r->nworld * r->ndone));
}

//---------------------------------- the run -------------------------------------------------------

static int alloc_result(fsCompareResult* r, int N, int S, fsError* err) {
  memset(r, 0, sizeof *r);
  r->nworld = N;
  r->nstep = S;
  for (int p = 0; p < FS_CMP_NPAIR; p++) {
    r->dq_max[p] = fs_calloc(err, "the comparison", (size_t)S, sizeof(double));
    r->dq_rms[p] = fs_calloc(err, "the comparison", (size_t)S, sizeof(double));
    r->dq_geo[p] = fs_calloc(err, "the comparison", (size_t)S, sizeof(double));
    r->thorax[p] = fs_calloc(err, "the comparison", (size_t)S, sizeof(double));
    r->ncon[p] = fs_calloc(err, "the comparison", (size_t)S, sizeof(int));
    if (!r->dq_max[p] || !r->dq_rms[p] || !r->dq_geo[p] || !r->thorax[p] || !r->ncon[p]) return -1;
    for (int k = 0; k < FS_CMP_NTHRESH; k++) r->first_over[p][k] = -1;
  }
  for (int k = 0; k < FS_CMP_NRUN; k++)
    if (!(r->track[k] = fs_calloc(err, "the comparison", (size_t)S, sizeof(double)))) return -1;
  r->worlds = fs_calloc(err, "the comparison", (size_t)N, sizeof(fsCompareWorld));
  return r->worlds ? 0 : -1;
}

void fs_compare_result_free(fsCompareResult* r) {
  for (int p = 0; p < FS_CMP_NPAIR; p++) {
    free(r->dq_max[p]);
    free(r->dq_rms[p]);
    free(r->dq_geo[p]);
    free(r->thorax[p]);
    free(r->ncon[p]);
  }
  for (int k = 0; k < FS_CMP_NRUN; k++) free(r->track[k]);
  free(r->worlds);
  memset(r, 0, sizeof *r);
}

int fs_floor_moves_ulps(const fsCompareSpec* s) {
  return s->floor_mode == FS_FLOOR_ULP || s->floor.bits == 32;
}

// The floor run: its spec and how each of its worlds is perturbed (fsPerturb; K N).
typedef struct Floor {
  const fsCompareSpec* s;
  int* how;
} Floor;

// How the floor perturbs A's stepper: rounding to float32 is no change in a float32
// stepper, which moves one float32 ulp instead; copies after the first round
// stochastically (or move in their own ulp directions: the hash takes the world).
static int* floor_how(const fsCompareSpec* s, fsError* err) {
  int N = s->a.plan->nworld, NK = s->floor.plan->nworld;
  int* how = fs_calloc(err, "the floor", (size_t)NK, sizeof(int));
  int ulp = fs_floor_moves_ulps(s);
  for (int w = 0; how && w < NK; w++)
    how[w] = ulp ? FS_PERTURB_ULP : w < N ? FS_PERTURB_ROUND_F32 : FS_PERTURB_STOCHASTIC_F32;
  return how;
}

static int perturb_floor(const Floor* f, unsigned seed, fsError* err) {
  return fs_replay_perturb(f->s->floor.plan, f->s->floor.rb, f->how, seed, err);
}

// The floor run's perturbation inside its warm-up, where B's own arithmetic starts: ulp
// and f32 once before the first warm-up step (seed 0), f32-step before every warm-up
// step s (seed s + 1; compared step t then has seed nwarmup + t + 1).
static int perturb_warmup(void* arg, const fsReplayBatch* rb, int step, fsError* err) {
  const Floor* f = arg;
  (void)rb;
  return perturb_floor(f, f->s->floor_mode == FS_FLOOR_F32_STEP ? (unsigned)step + 1 : 0, err);
}

static void progress(const fsCompareSpec* s, const fsCompareResult* r, int t, double t0,
                     double* last) {
  double now = fs_clock_s();
  if (!s->progress || (now - *last < 0.5 && t + 1 < r->nstep)) return;
  *last = now;
  double left = (now - t0) / (t + 1) * (r->nstep - t - 1);
  fprintf(stderr,
          "\rflysim compare: step %d/%d, max |dq| %s %.3g rad, floor %.3g rad, %.0f s left  ",
          t + 1, r->nstep, s->b.label, r->max_dq[FS_CMP_B], r->max_dq[FS_CMP_FLOOR], left);
  if (t + 1 == r->nstep) fprintf(stderr, "\n");
  fflush(stderr);
}

// One step of every run (queued on all before any is read), then their worlds.
static int step_all(Run* run, fsError* err) {
  for (int k = 0; k < NRUN; k++)
    if (fs_batch_step(run[k].side->rb->b, 1, err)) return -1;
  for (int k = 0; k < NRUN; k++)
    if (fs_replay_read_worlds(run[k].side->plan, run[k].side->rb, run[k].q, run[k].ncon, err))
      return -1;
  return 1;
}

static int finish(const fsCompareSpec* s, fsCompareResult* r, double* const track2[2],
                  fsError* err) {
  const fsCompareSide* side[FS_CMP_NRUN] = {&s->a, &s->b};
  fsWorldStatus* st[FS_CMP_NRUN] = {NULL, NULL};
  int rc = 0;
  for (int k = 0; k < FS_CMP_NRUN && !rc; k++) {
    st[k] = fs_calloc(err, "world health", (size_t)r->nworld, sizeof *st[k]);
    rc = !st[k] || fs_replay_health(side[k]->plan, side[k]->rb, st[k], err) ? -1 : 0;
  }
  for (int w = 0; w < r->nworld && !rc; w++) {
    fsCompareWorld* cw = &r->worlds[w];
    for (int k = 0; k < FS_CMP_NRUN; k++) {
      cw->status[k] = st[k][w];
      cw->problem[k] = fs_world_has_problem(&cw->status[k]);
      int J = fs_replay_tracked_columns(s->a.plan->bind);
      cw->track_rms[k] = r->ndone ? sqrt(track2[k][w] / ((double)r->ndone * (J ? J : 1))) : 0;
    }
    r->new_problem_worlds += cw->problem[FS_CMP_RUN_B] && !cw->problem[FS_CMP_RUN_A];
  }
  free(st[0]);
  free(st[1]);
  double b = r->max_dq[FS_CMP_B], f = r->max_dq[FS_CMP_FLOOR];
  r->max_ratio = f > 0 ? b / f : (b > 0 ? INFINITY : 0);
  r->ratio = fs_compare_ratio(r);
  r->pass = r->ratio <= s->max_ratio && r->new_problem_worlds == 0;
  return rc;
}

int fs_compare_run(const fsCompareSpec* s, fsCompareResult* res, fsError* err) {
  const fsReplay* plan = s->a.plan;
  int N = plan->nworld, S = plan->nstep, nq = (int)plan->m->nq;
  if (alloc_result(res, N, S, err)) return -1;
  const fsCompareSide* sides[NRUN] = {&s->a, &s->b, &s->floor};
  Run run[NRUN];
  memset(run, 0, sizeof run);
  double* track2[2] = {fs_calloc(err, "the comparison", (size_t)N, sizeof(double)),
                       fs_calloc(err, "the comparison", (size_t)N, sizeof(double))};
  int rc = track2[0] && track2[1] ? 0 : -1;
  if (s->floor_runs < 1 || s->floor.plan->nworld != N * s->floor_runs)
    rc = fs_fail(err, "internal: the floor has %d worlds for %d worlds and %d runs",
                 s->floor.plan->nworld, N, s->floor_runs);
  for (int k = 0; k < NRUN && !rc; k++) {
    int n = sides[k]->plan->nworld;
    run[k].side = sides[k];
    run[k].q = fs_calloc(err, "the worlds' state", (size_t)n * nq, sizeof(double));
    run[k].ncon = fs_calloc(err, "the worlds' state", (size_t)n, sizeof(int));
    if (!run[k].q || !run[k].ncon) rc = -1;
  }
  // The floor is perturbed from the start of its warm-up: B runs its own arithmetic from
  // the first warm-up step, so a floor perturbed only after it would miss what the warm-up
  // amplifies (a landing on a block edge turns 1e-17 into 1e-13).
  Floor fl = {s, rc ? NULL : floor_how(s, err)};
  if (!fl.how) rc = -1;
  fsWarmupHook hook = {perturb_warmup, s->floor_mode == FS_FLOOR_F32_STEP, &fl};
  for (int k = 0; k < NRUN && !rc; k++)
    rc = fs_replay_start_hooked(sides[k]->plan, sides[k]->rb, k == RUN_F ? &hook : NULL, err);
  double t0 = fs_clock_s(), last = t0;
  unsigned nwarmup = (unsigned)s->floor.plan->nwarmup;
  for (int t = 0; t < S && !rc; t++) {
    if (fs_interrupted()) break;
    if (s->floor_mode == FS_FLOOR_F32_STEP && perturb_floor(&fl, nwarmup + (unsigned)t + 1, err)) {
      rc = -1;
      break;
    }
    int done = step_all(run, err);
    if (done < 0) rc = -1;
    if (done <= 0) break;
    compare_pair(s, &run[RUN_A], &run[RUN_B], FS_CMP_B, t, res);
    compare_pair(s, &run[RUN_A], &run[RUN_F], FS_CMP_FLOOR, t, res);
    tracking(&run[RUN_A], FS_CMP_RUN_A, t, track2[0], res);
    tracking(&run[RUN_B], FS_CMP_RUN_B, t, track2[1], res);
    res->ndone = t + 1;
    progress(s, res, t, t0, &last);
  }
  res->wall_s = fs_clock_s() - t0;
  res->interrupted = fs_interrupted();
  if (res->interrupted && s->progress) fprintf(stderr, "\n");
  if (!rc) rc = finish(s, res, track2, err);
  for (int k = 0; k < NRUN; k++) {
    free(run[k].q);
    free(run[k].ncon);
  }
  free(track2[0]);
  free(track2[1]);
  free(fl.how);
  return rc;
}
