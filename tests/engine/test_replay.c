// 1,000 steps of the contact-free NeuroMechFly replay (walking clip targets,
// FlyGym's warm-up) on the stepper's host build against MuJoCo's mj_step, joint
// angle by joint angle, in several worlds with different slices of the clip; built
// with FSH_CONTACTS (engine_replay_contacts_*), 2,000 steps of the replay as exported,
// contacts, adhesion and noslip on (below).
//
// The bound comes from MuJoCo itself: how far MuJoCo's
// own joint angles move when what a float32 stepper cannot represent exactly is
// perturbed at float32 size, measured here over the same worlds and steps --
//   state floor: the initial state (qpos, qvel) off by one float32 ulp;
//   model floor: every real of the model rounded to float32;
//   step floor:  state and controls rounded to float32 before every step (a
//                float32 stepper stores them so; MuJoCo's arithmetic otherwise).
// float64 build: the difference must stay at double round-off (<= 1e-9 rad).
// float32 build: max |dq| <= 2 x the largest floor. Measured (this clip, 3
// worlds at rows 0, 1000, 2000): state 1.9e-9, model 1.05e-7, step 1.17e-6 rad;
// the float32 build 1.21e-6 rad = 1.03 x the step floor: its error is that of
// storing the state in float32 (qpos rounding accumulates over the steps), not
// of its arithmetic.
// With contacts the steps are chaotic (a contact that touches one step later, a
// solve that stops within its tolerance), so both builds are bounded by MuJoCo's own
// sensitivity, and the curves are printed (the largest |dq| up to a step):
//   float64: the initial state off by one float64 ulp (3 draws); the stepper's max
//     |dq| at most 10 x that floor (flysim's sums differ from MuJoCo's in the smooth
//     stages' last bits and in noslip's order); the step where it first exceeds 1e-9
//     rad is reported;
//   float32: the floors above; max |dq| at most 2 x the largest.
// Built with FSH_GPU (engine_replay_gpu): the same through the cuda backend (a batch of the
// library, as flysim replay runs it), graph on, then off (bit-identical); 77 without a GPU.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/inputs/model.h"
#include "common/replay/replay.h"
#include "common/inputs/targets.h"
#include "cpu/serial.h"
#ifdef FSH_GPU
#include "common/sys/clock.h"
#include "cuda/device.h"
#endif
#include "common/parity/harness.h"
#include "tests/testutil.h"

#ifdef FSH_CONTACTS
enum { FULL_NSTEP = 2000 };
#else
enum { FULL_NSTEP = 1000 };
#endif
// Worlds and steps (the small mode, fs_test_small: 2 worlds, 16 steps after a warm-up of
// 8, for the GPU simulator); MAX_WORLD sizes the arrays.
enum { MAX_WORLD = 3 };
static int g_nworld = MAX_WORLD, g_nstep = FULL_NSTEP;

typedef struct Replay {
  mjModel* mj;
  fsTargets t;
  fsReplayBinding bind;
  int nwarmup;
  fsReplay plan;         // FlyGym's slices: world w starts at row w * g_nstep
  long start[MAX_WORLD]; // clip row of each world's first step
} Replay;

// Perturb x (n) by one ulp (0x1p-24: float32's; 0x1p-52: float64's), sign at random.
static void perturb(mjtNum* x, int n, double ulp) {
  for (int i = 0; i < n; i++) x[i] *= 1 + (fs_test_uniform() < 0.5 ? -1 : 1) * ulp;
}

static void round_to_float(mjtNum* x, int n) {
  for (int i = 0; i < n; i++) x[i] = (float)x[i];
}

// How MuJoCo's run is perturbed.
enum { EXACT, PERTURB_STATE, PERTURB_STATE64, ROUND_EVERY_STEP };

// MuJoCo's replay of world w: joint angles after each step into q (g_nstep x J).
// PERTURB_STATE: the initial state off by one float32 ulp; ROUND_EVERY_STEP:
// state and controls rounded to float32 at every step.
static void run_mujoco(const Replay* r, const mjModel* mj, int w, int how, double* q) {
  mjData* d = mj_makeData(mj);
  fs_replay_reset_world(mj, &r->bind, d); // the replay's warm-up start (common/replay)
  if (how == PERTURB_STATE || how == PERTURB_STATE64) {
    double ulp = how == PERTURB_STATE ? 0x1p-24 : 0x1p-52;
    perturb(d->qpos, (int)mj->nq, ulp);
    perturb(d->qvel, (int)mj->nv, ulp);
  }
  int A = r->bind.nact, J = r->bind.njoint;
  for (int s = -r->nwarmup; s < g_nstep; s++) {
    if (s >= 0) {
      const double* tg = r->t.value + (r->start[w] + s) * (long)A;
      for (int a = 0; a < A; a++) d->ctrl[r->bind.actuator[a]] = tg[a];
    }
    if (how == ROUND_EVERY_STEP) {
      round_to_float(d->qpos, (int)mj->nq);
      round_to_float(d->qvel, (int)mj->nv);
      round_to_float(d->ctrl, (int)mj->nu);
    }
    mj_step(mj, d);
    if (s < 0) continue;
    for (int j = 0; j < J; j++) q[(long)s * J + j] = d->qpos[r->bind.joint_qposadr[j]];
  }
  mj_deleteData(d);
}

// The model with every real rounded to float32.
static mjModel* model_in_float(const mjModel* mj) {
  mjModel* f = mj_copyModel(NULL, mj);
  fs_model_round_to_float(f);
  return f;
}

#ifndef FSH_GPU
// The stepper's replay of every world: joint angles into q[w] (g_nstep x J).
static int run_stepper(const Replay* r, double** q) {
  fsModel m;
  fsWorlds b;
  fsError err;
  if (fs_model_build(r->mj, "mesh.mjb", &m, &err) || fs_worlds_alloc(&m, g_nworld, &b, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  mjData* d = mj_makeData(r->mj);
  for (int w = 0; w < g_nworld; w++) {
    fs_replay_reset_world(r->mj, &r->bind, d);
    fs_worlds_from_mj(&m, &b, w, r->mj, d, FS_STAGE_STATE, &err);
  }
  mj_deleteData(d);
  fs_serial_step(&m, &b, r->nwarmup);
  int A = r->bind.nact, J = r->bind.njoint;
  for (int s = 0; s < g_nstep; s++) {
    for (int w = 0; w < g_nworld; w++) {
      fsData wd = fs_worlds_view(&m, &b, w);
      const double* tg = r->t.value + (r->start[w] + s) * (long)A;
      for (int a = 0; a < A; a++) wd.ctrl[r->bind.actuator[a]] = (fsReal)tg[a];
    }
    fs_serial_step(&m, &b, 1);
    for (int w = 0; w < g_nworld; w++) {
      fsData wd = fs_worlds_view(&m, &b, w);
      for (int j = 0; j < J; j++) q[w][(long)s * J + j] = wd.qpos[r->bind.joint_qposadr[j]];
    }
  }
  fs_worlds_free(&b);
  fs_model_free(&m);
  return 0;
}

#else
// The cuda backend's joint angles after its last step, read in double (not its float32
// records); (g_nworld x J).
static double g_final[MAX_WORLD][128];

// The cuda backend's replay of every world (a batch, as flysim replay runs it), graph on
// or off: joint angles into q[w] (g_nstep x J).
static int run_backend(const Replay* r, double** q, int graph) {
  fsError err;
  if (graph)
    unsetenv("FLYSIM_NO_GRAPH");
  else
    setenv("FLYSIM_NO_GRAPH", "1", 1);
  fsReplayBatch rb;
#ifdef FS_REAL_FLOAT
  const int bits = 32;
#else
  const int bits = 64;
#endif
  if (fs_replay_open(&r->plan, FS_BACKEND_CUDA, bits, 0, &rb, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  CHECK(rb.info.uses_graph == graph);
  int J = r->bind.njoint, A = r->bind.nact, blk = fs_replay_block_steps(g_nworld, g_nstep);
  fsBlock b;
  memset(&b, 0, sizeof b);
  b.series[FS_SERIES_QPOS_JOINT] = calloc((size_t)blk * g_nworld * J, sizeof(float));
  b.series[FS_SERIES_TARGET] = calloc((size_t)blk * g_nworld * A, sizeof(float));
  int rc = fs_replay_start(&r->plan, &rb, &err);
  double t0 = fs_clock_s();
  for (int s0 = 0; !rc && s0 < g_nstep; s0 += blk) {
    b.step0 = s0;
    b.nstep = g_nstep - s0 < blk ? g_nstep - s0 : blk;
    rc = fs_replay_step_block(&r->plan, &rb, &b, b.nstep, &err) || fs_batch_sync(rb.b, &err);
    for (int k = 0; !rc && k < b.nstep; k++)
      for (int w = 0; w < g_nworld; w++) {
        const float* qs = b.series[FS_SERIES_QPOS_JOINT] + ((size_t)k * g_nworld + w) * J;
        const float* ts = b.series[FS_SERIES_TARGET] + ((size_t)k * g_nworld + w) * A;
        for (int j = 0; j < J; j++) q[w][(long)(s0 + k) * J + j] = qs[j];
        for (int a = 0; a < A; a++)
          CHECK(ts[a] == (float)r->t.value[(r->start[w] + s0 + k) * (long)A + a]);
      }
  }
  double dt = fs_clock_s() - t0;
  // the last step's joint angles in the backend's own real (read_worlds: double)
  double* qpos = calloc((size_t)g_nworld * r->mj->nq, sizeof(double));
  int ncon[MAX_WORLD];
  if (!rc) rc = fs_replay_read_worlds(&r->plan, &rb, qpos, ncon, &err);
  for (int w = 0; !rc && w < g_nworld; w++)
    for (int j = 0; j < J; j++)
      g_final[w][j] = qpos[(size_t)w * r->mj->nq + r->bind.joint_qposadr[j]];
  free(qpos);
  if (!rc) {
    printf("%s, graph %s: %.3g world-steps/s (%d worlds: not a benchmark)\n", rb.info.description,
           graph ? "on" : "off", g_nstep * (double)g_nworld / dt, g_nworld);
  } else {
    fprintf(stderr, "%s\n", err.msg);
  }
  free(b.series[FS_SERIES_QPOS_JOINT]);
  free(b.series[FS_SERIES_TARGET]);
  fs_replay_close(&rb);
  return rc ? -1 : 0;
}

// Graph on; then graph off must give the same angles bit for bit.
static int run_stepper(const Replay* r, double** q) {
  if (run_backend(r, q, 1)) return -1;
  long n = (long)g_nstep * r->bind.njoint;
  double* q2[MAX_WORLD];
  for (int w = 0; w < g_nworld; w++) q2[w] = calloc((size_t)n, sizeof(double));
  int rc = run_backend(r, q2, 0);
  for (int w = 0; w < g_nworld; w++) {
    if (!rc)
      CHECK_MSG(memcmp(q[w], q2[w], n * sizeof(double)) == 0,
                "world %d: graph and no "
                "graph differ",
                w);
    free(q2[w]);
  }
  return rc;
}

#endif

// The GPU backend's angles come through its float32 records (the replay's series): in the
// float64 build their difference from MuJoCo's is the stepper's plus half a float32 ulp of
// the angle, which angle_dev() takes off (the stepper's part is what the float64 floor bounds).
#if defined(FSH_GPU) && !defined(FS_REAL_FLOAT)
static const int g_recorded_f32 = 1;
#else
static const int g_recorded_f32 = 0;
#endif

// |ours - ref| of one angle (NaN: infinite), less the float32 record's rounding there.
static double angle_dev(double ours, double ref, int recorded) {
  if (isnan(ours)) return INFINITY;
  double d = fabs(ours - ref), x = fmax(fabs(ours), fabs(ref));
  if (recorded && x > 0) d = fmax(0, d - 0.5 * ldexp(1.0, ilogb(x) - 23) * (1 + 0x1p-20));
  return d;
}

// curve[t] = max(curve[t], max_j |a - b| at step t) over g_nstep steps of J angles (a the
// stepper's when `recorded`).
static void add_curve(double* curve, const double* a, const double* b, int J, int recorded) {
  for (int t = 0; t < g_nstep; t++)
    for (int j = 0; j < J; j++) {
      long k = (long)t * J + j;
      curve[t] = fmax(curve[t], angle_dev(a[k], b[k], recorded));
    }
}

static double max_dev(const double* a, const double* b, long n, int recorded) {
  double e = 0;
  for (long k = 0; k < n; k++) e = fmax(e, angle_dev(a[k], b[k], recorded));
  return e;
}

static int load(Replay* r) {
  fsError err;
  char model[1024], clip[1024];
  snprintf(model, sizeof model, "%s", fs_test_asset("mesh.mjb"));
  snprintf(clip, sizeof clip, "%s", fs_test_asset("walking_clip.h5"));
  r->mj = fs_test_load_model(model);
#ifndef FSH_CONTACTS
  r->mj->opt.disableflags |= mjDSBL_CONTACT;
#endif
  if (fs_targets_load(clip, &r->t, &err) || fs_targets_resample(&r->t, r->mj->opt.timestep, &err) ||
      fs_replay_bind(r->mj, model, &r->t, &r->bind, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  r->nwarmup = (int)lround(0.05 / r->mj->opt.timestep); // FlyGym's Simulation.warmup
  if (fs_test_small()) r->nwarmup = 8;
  if (fs_replay_plan(&r->plan, r->mj, "mesh.mjb", &r->t, &r->bind, g_nworld, g_nstep, r->nwarmup,
                     &err) ||
      fs_replay_set_record(&r->plan, 1u << FS_SERIES_QPOS_JOINT | 1u << FS_SERIES_TARGET, 0,
                           &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  for (int w = 0; w < g_nworld; w++) r->start[w] = r->plan.world_start[w];
  return 0;
}

int main(void) {
#ifdef FSH_GPU
  if (fs_cuda_device_count() == 0) {
    printf("skipped: no CUDA device\n");
    return FS_TEST_SKIP;
  }
#endif
  if (fs_test_small()) {
    g_nworld = 2;
    g_nstep = 16;
  }
  Replay r;
  memset(&r, 0, sizeof r);
  if (load(&r)) return 1;
  int J = r.bind.njoint;
  if (J > 128) return fprintf(stderr, "%d joints: g_final holds 128\n", J), 1;
  long n = (long)g_nstep * J;
  double *ref[MAX_WORLD], *ours[MAX_WORLD], *tmp = calloc((size_t)n, sizeof(double));
  mjModel* mf = model_in_float(r.mj);
  fs_test_seed(4242);
  // the largest |dq| at each step over the worlds: the stepper and each floor
  enum { OURS, STATE, MODEL, STEP, BOTH, STATE64, NCURVE };
  static const char* names[NCURVE] = {"stepper", "state",      "model",
                                      "step",    "step+model", "state(f64 ulp)"};
  double* curve[NCURVE];
  for (int k = 0; k < NCURVE; k++) curve[k] = calloc(g_nstep, sizeof(double));
#if defined(FSH_CONTACTS) && !defined(FS_REAL_FLOAT)
  const int floors64 = 1, floors32 = 0; // float64 with contacts: the float64 ulp floor
#else
  const int floors64 = 0, floors32 = 1;
#endif
  for (int w = 0; w < g_nworld; w++) {
    ref[w] = calloc((size_t)n, sizeof(double));
    ours[w] = calloc((size_t)n, sizeof(double));
    run_mujoco(&r, r.mj, w, EXACT, ref[w]);
    for (int k = 0; k < 3 && floors32; k++) {
      run_mujoco(&r, r.mj, w, PERTURB_STATE, tmp);
      add_curve(curve[STATE], tmp, ref[w], J, 0);
    }
    for (int k = 0; k < 3 && floors64; k++) {
      run_mujoco(&r, r.mj, w, PERTURB_STATE64, tmp);
      add_curve(curve[STATE64], tmp, ref[w], J, 0);
    }
    if (floors32) {
      run_mujoco(&r, mf, w, EXACT, tmp);
      add_curve(curve[MODEL], tmp, ref[w], J, 0);
      run_mujoco(&r, r.mj, w, ROUND_EVERY_STEP, tmp);
      add_curve(curve[STEP], tmp, ref[w], J, 0);
      run_mujoco(&r, mf, w, ROUND_EVERY_STEP, tmp);
      add_curve(curve[BOTH], tmp, ref[w], J, 0);
    }
  }
  if (run_stepper(&r, ours)) return 1;
  double dev = 0;
  for (int w = 0; w < g_nworld; w++) {
    double e = max_dev(ours[w], ref[w], n, g_recorded_f32);
    printf("world %d (clip rows %ld..%ld): max |dq| %.3e rad\n", w, r.start[w],
           r.start[w] + g_nstep - 1, e);
    dev = fmax(dev, e);
    add_curve(curve[OURS], ours[w], ref[w], J, g_recorded_f32);
  }
#ifdef FSH_GPU
  const char* build = "cuda " FS_REAL_NAME;
#else
  const char* build = fs_serial_real_name();
#endif
  printf("%d warm-up + %d steps, %d worlds, %d joints, %s build, contacts %s\n", r.nwarmup, g_nstep,
         g_nworld, J, build, r.mj->opt.disableflags & mjDSBL_CONTACT ? "off" : "on");
  double top[NCURVE];
  for (int k = 0; k < NCURVE; k++) { // the largest |dq| up to each step
    for (int t = 1; t < g_nstep; t++) curve[k][t] = fmax(curve[k][t], curve[k][t - 1]);
    top[k] = curve[k][g_nstep - 1];
  }
  printf("largest |dq| (rad) up to step:");
  static const int marks[] = {1, 10, 100, 250, 500, 1000, 1500, 2000};
  for (int i = 0; i < 8 && marks[i] <= g_nstep; i++) printf(" %9d", marks[i]);
  printf("\n");
  for (int k = 0; k < NCURVE; k++) {
    if (top[k] == 0 && k != OURS) continue;
    printf("  %-28s", names[k]);
    for (int i = 0; i < 8 && marks[i] <= g_nstep; i++) printf(" %9.2e", curve[k][marks[i] - 1]);
    printf("\n");
  }
  int first = -1;
  for (int t = 0; t < g_nstep && first < 0; t++)
    if (curve[OURS][t] > 1e-9) first = t + 1;
  if (first < 0)
    printf("the stepper's |dq| never exceeds 1e-9 rad\n");
  else
    printf("the stepper's |dq| first exceeds 1e-9 rad at step %d\n", first);
  double floor = fmax(fmax(top[STATE], top[MODEL]), fmax(top[STEP], top[BOTH]));
#ifdef FS_REAL_FLOAT
  printf("stepper max |dq| %.3e rad = %.3g x the largest float32 floor\n", dev, dev / floor);
  CHECK_MSG(dev <= 2 * floor, "max |dq| %.3e > 2 x floor %.3e", dev, floor);
#elif defined(FSH_CONTACTS)
  (void)floor;
  if (g_recorded_f32) printf("(the GPU's float32 records' rounding taken off each |dq|)\n");
  printf("stepper max |dq| %.3e rad = %.3g x the float64 ulp floor %.3e\n", dev, dev / top[STATE64],
         top[STATE64]);
  CHECK_MSG(dev <= 10 * top[STATE64], "max |dq| %.3e > 10 x floor %.3e", dev, top[STATE64]);
#if defined(FSH_GPU)
  { // the last step in double, below the records' resolution
    double last = 0;
    for (int w = 0; w < g_nworld; w++)
      for (int j = 0; j < J; j++)
        last = fmax(last, angle_dev(g_final[w][j], ref[w][(long)(g_nstep - 1) * J + j], 0));
    printf("last step read in float64: max |dq| %.3e rad = %.3g x the floor\n", last,
           last / top[STATE64]);
    CHECK_MSG(last <= 10 * top[STATE64], "last step: max |dq| %.3e > 10 x floor %.3e", last,
              top[STATE64]);
  }
#endif

#else
  (void)floor;
  CHECK_MSG(dev <= 1e-9, "max |dq| %.3e > 1e-9 (double round-off)", dev);
#endif
  for (int k = 0; k < NCURVE; k++) free(curve[k]);
  for (int w = 0; w < g_nworld; w++) {
    free(ref[w]);
    free(ours[w]);
  }
  free(tmp);
  mj_deleteModel(mf);
  fs_replay_plan_free(&r.plan);
  fs_replay_binding_free(&r.bind);
  fs_targets_free(&r.t);
  mj_deleteModel(r.mj);
  return fs_test_finish("engine replay");
}
