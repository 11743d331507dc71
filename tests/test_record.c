// What every backend records (common/replay/record.h) against the stepper's own
// state and MuJoCo, on NeuroMechFly with contacts, 3 worlds, 2 of them in the video:
//
// After block 1: its last row of /qpos_joint and of the video's qpos equal the
// backend's state (read_worlds), rounded to float32, bit for bit. Block 2's first
// row was computed from that state: its targets equal the clip's row, and its
// site positions, thorax position and actuator forces equal MuJoCo's (mj_forward on
// that state with those targets; the fly's actuators have no velocity gain, so
// qvel = 0 gives the same forces) -- exactly on the cpu (MuJoCo's own numbers), to
// a bound scaled for the stepper's real on the host (and GPU when there is one).
// A recording one step late or early, or of the wrong column, fails here.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/replay/replay.h"
#include "tests/testutil.h"

#define NWORLD  3
#define NRENDER 2
#define BLOCK   40

// Worlds, steps a block and warm-up steps. The small mode (fs_test_small, for the GPU
// simulator): 2 worlds, blocks of 8, no warm-up; each world starts where MuJoCo's own 200
// (+ 10 w) steps from the reset took it (settle: on the floor, as after the warm-up), so
// that the backends step 16 steps each.
static int g_nworld = NWORLD, g_block = BLOCK, g_nwarmup = 200;

static int settle(void* arg, fsBatch b, fsError* err) {
  const fsReplay* r = arg;
  const mjModel* m = r->m;
  const int nq = (int)m->nq, nv = (int)m->nv;
  fsView v;
  if (fs_batch_view(b, "qpos", &v, err)) return -1;
  size_t es = v.dtype == FS_DTYPE_F32 ? sizeof(float) : sizeof(double);
  char* q = calloc((size_t)r->nworld * nq, es);
  char* u = calloc((size_t)r->nworld * nv, es);
  mjData* d = mj_makeData(m);
  for (int w = 0; w < r->nworld; w++) {
    fs_replay_reset_world(m, r->bind, d);
    for (int s = 0; s < 200 + 10 * w; s++) mj_step(m, d);
    for (int i = 0; i < nq + nv; i++) {
      double x = i < nq ? d->qpos[i] : d->qvel[i - nq];
      char* dst = i < nq ? q + ((size_t)w * nq + i) * es : u + ((size_t)w * nv + i - nq) * es;
      if (es == sizeof(float))
        *(float*)dst = (float)x;
      else
        *(double*)dst = x;
    }
  }
  int rc = fs_batch_write(b, "qpos", q, (size_t)r->nworld * nq * es, err) ||
                   fs_batch_write(b, "qvel", u, (size_t)r->nworld * nv * es, err)
               ? -1
               : 0;
  mj_deleteData(d);
  free(q);
  free(u);
  return rc;
}

typedef struct Inputs {
  fsReplayInputs in;
  fsReplay plan;
} Inputs;

static int failures;
static float cpu_iterations[BLOCK * NWORLD * 2]; // the cpu's block 2 (the host's reference)
static float cpu_legs[BLOCK * NWORLD * 3 * FS_RECORD_MAX_LEGS];

static void expect(int ok, const char* what, const char* backend, int w, int col, double got,
                   double want) {
  if (ok) return;
  if (failures++ < 20)
    fprintf(stderr, "FAIL %s: %s, world %d, column %d: %.9g, expected %.9g\n", backend, what, w,
            col, got, want);
}

// Block buffers for the plan's series and the video's worlds.
static void alloc_block(const fsReplay* r, fsBlock* b) {
  memset(b, 0, sizeof *b);
  for (int k = 0; k < FS_NSERIES; k++)
    b->series[k] = calloc((size_t)g_block * r->nworld * r->rec.ncol[k] + 1, sizeof(float));
  b->render_qpos = calloc((size_t)g_block * r->nrender * r->m->nq, sizeof(float));
}

static void free_block(fsBlock* b) {
  for (int k = 0; k < FS_NSERIES; k++) free(b->series[k]);
  free(b->render_qpos);
}

static int run_block(const fsReplay* r, fsReplayBatch* rb, fsBlock* b, int step0, fsError* err) {
  b->step0 = step0;
  b->nstep = b->ndone = g_block;
  return fs_replay_step_block(r, rb, b, g_block, err) || fs_batch_sync(rb->b, err);
}

// Block 1's last row against the state: float32 of the same numbers.
static void check_state_rows(const char* name, const fsReplay* r, const fsBlock* b,
                             const double* qpos) {
  const int N = r->nworld, J = r->bind->njoint, nq = (int)r->m->nq, k = g_block - 1;
  for (int w = 0; w < N; w++) {
    const float* q = b->series[FS_SERIES_QPOS_JOINT] + ((size_t)k * N + w) * J;
    for (int j = 0; j < J; j++) {
      double want = (float)qpos[(size_t)w * nq + r->bind->joint_qposadr[j]];
      expect(q[j] == want, "angles vs the state", name, w, j, q[j], want);
    }
    const float* qa = b->series[FS_SERIES_QPOS] + ((size_t)k * N + w) * nq;
    for (int i = 0; i < nq; i++) {
      double want = (float)qpos[(size_t)w * nq + i];
      expect(qa[i] == want, "qpos vs the state", name, w, i, qa[i], want);
    }
    if (w >= r->nrender) continue;
    const float* v = b->render_qpos + ((size_t)k * r->nrender + w) * nq;
    for (int i = 0; i < nq; i++) {
      double want = (float)qpos[(size_t)w * nq + i];
      expect(v[i] == want, "video qpos vs the state", name, w, i, v[i], want);
    }
  }
}

// Block 2's first row against MuJoCo from block 1's last state; tol: relative to
// the series' scale (0: exact).
static void check_mujoco_rows(const char* name, const fsReplay* r, const fsBlock* b,
                              const double* qpos, double tol) {
  const mjModel* m = r->m;
  const fsRecordLayout* l = &r->rec;
  const int N = r->nworld, A = r->bind->nact, nq = (int)m->nq;
  mjData* d = mj_makeData(m);
  for (int w = 0; w < N; w++) {
    fs_replay_reset_world(m, r->bind, d); // adhesion on, as the replay
    memcpy(d->qpos, qpos + (size_t)w * nq, sizeof(double) * nq);
    mju_zero(d->qvel, m->nv);
    const double* target = r->targets->value + (r->world_start[w] + g_block) * (long)A;
    for (int a = 0; a < A; a++) d->ctrl[r->bind->actuator[a]] = target[a];
    mj_forward(m, d);
    const float* t = b->series[FS_SERIES_TARGET] + (size_t)w * A;
    const float* f = b->series[FS_SERIES_ACTUATOR_FORCE] + (size_t)w * A;
    for (int a = 0; a < A; a++) {
      expect(t[a] == (float)target[a], "targets vs the clip", name, w, a, t[a], target[a]);
      double want = d->actuator_force[r->bind->actuator[a]];
      expect(fabs(f[a] - want) <= tol * 30 + fabs(want) * 6e-8, "forces vs MuJoCo", name, w, a,
             f[a], want);
    }
    const int C = l->ncol[FS_SERIES_SITE_POS];
    const float* s = b->series[FS_SERIES_SITE_POS] + (size_t)w * C;
    for (int c = 0; c < C; c++) {
      double want = d->site_xpos[c];
      expect(fabs(s[c] - want) <= tol * 3 + fabs(want) * 6e-8, "sites vs MuJoCo", name, w, c, s[c],
             want);
    }
    const float* x = b->series[FS_SERIES_THORAX_POS] + (size_t)w * 3;
    for (int c = 0; c < 3; c++) {
      double want = d->xpos[3 * l->root_body + c];
      expect(fabs(x[c] - want) <= tol * 3 + fabs(want) * 6e-8, "thorax vs MuJoCo", name, w, c, x[c],
             want);
    }
    const float* o = b->series[FS_SERIES_THORAX_QUAT] + (size_t)w * 4;
    for (int c = 0; c < 4; c++) {
      double want = d->xquat[4 * l->root_body + c];
      expect(fabs(o[c] - want) <= tol + 6e-8, "orientation vs MuJoCo", name, w, c, o[c], want);
    }
    const int D = r->bind->nadhesion;
    const float* ad = b->series[FS_SERIES_ADHESION] + (size_t)w * D;
    for (int a = 0; a < D; a++) {
      double want = d->actuator_force[r->bind->adhesion[a]];
      expect(fabs(ad[a] - want) <= tol * fabs(want) + fabs(want) * 6e-8, "adhesion vs MuJoCo", name,
             w, a, ad[a], want);
    }
  }
  mj_deleteData(d);
}

static int check_backend(Inputs* I, fsBackendKind kind, int bits, double tol) {
  char name[64];
  snprintf(name, sizeof name, "%s%s", fs_backend_name(kind),
           kind == FS_BACKEND_CPU ? ""
           : bits == 32           ? " f32"
                                  : " f64");
  fsError err = {{0}, FS_OK};
  fsReplayBatch rb;
  if (fs_replay_open(&I->plan, kind, bits, 2, &rb, &err)) {
    // without a GPU the cuda backend is not run; with one, it must open
    if (kind == FS_BACKEND_CUDA && !(fs_backend_available(FS_BACKEND_CUDA, NULL) == FS_OK)) {
      printf("%s: not run here (%s)\n", name, err.msg);
      return 0;
    }
    fprintf(stderr, "FAIL %s: cannot open: %s\n", name, err.msg);
    return -1;
  }
  fsBlock b1, b2;
  alloc_block(&I->plan, &b1);
  alloc_block(&I->plan, &b2);
  double* qpos = calloc((size_t)g_nworld * I->plan.m->nq, sizeof(double));
  int* ncon = calloc(g_nworld, sizeof(int));
  int before = failures, rc = fs_replay_start(&I->plan, &rb, &err) ||
                              run_block(&I->plan, &rb, &b1, 0, &err) ||
                              fs_replay_read_worlds(&I->plan, &rb, qpos, ncon, &err) ||
                              run_block(&I->plan, &rb, &b2, g_block, &err);
  if (rc) {
    fprintf(stderr, "FAIL %s: %s\n", name, err.msg);
    failures++;
  } else {
    check_state_rows(name, &I->plan, &b1, qpos);
    check_mujoco_rows(name, &I->plan, &b2, qpos, tol);
    // Solver iterations: Newton's within the limit and some, noslip's within theirs (it
    // stops early at its tolerance); the float64 host's counts are MuJoCo's (its solver
    // is bit-identical to MuJoCo's).
    const float* it = b2.series[FS_SERIES_ITERATIONS];
    int same = 0, max_newton = I->plan.m->opt.iterations * 8;
    for (int i = 0; i < g_block * g_nworld; i++) {
      expect(it[2 * i] >= 1 && it[2 * i] <= max_newton, "Newton iterations", name, i % g_nworld, 0,
             it[2 * i], 1);
      expect(it[2 * i + 1] >= 0 && it[2 * i + 1] <= I->plan.m->opt.noslip_iterations * 8,
             "noslip iterations", name, i % g_nworld, 1, it[2 * i + 1],
             I->plan.m->opt.noslip_iterations);
      if (kind == FS_BACKEND_CPU) memcpy(cpu_iterations + 2 * i, it + 2 * i, 2 * sizeof(float));
      same += it[2 * i] == cpu_iterations[2 * i] && it[2 * i + 1] == cpu_iterations[2 * i + 1];
    }
    if (kind == FS_BACKEND_HOST && bits == 64)
      CHECK_MSG(same >= g_block * g_nworld * 95 / 100,
                "%s: %d of %d steps with MuJoCo's iterations", name, same, g_block * g_nworld);
    printf("%s: solver iterations as MuJoCo's in %d of %d steps\n", name, same, g_block * g_nworld);
    // Each leg's contact force: the host's (its own contacts and solver) against
    // MuJoCo's mj_contactForce summed per leg, on the same steps.
    const int CL = I->plan.rec.ncol[FS_SERIES_LEG_FORCE], n = g_block * g_nworld * CL;
    const float* lf = b2.series[FS_SERIES_LEG_FORCE];
    double scale = 0, worst = 0, total_z = 0;
    for (int i = 0; i < n; i++) {
      if (kind == FS_BACKEND_CPU) cpu_legs[i] = lf[i];
      scale = fmax(scale, fabs(cpu_legs[i]));
      worst = fmax(worst, fabs(lf[i] - cpu_legs[i]));
      if (i % 3 == 2) total_z += lf[i];
    }
    CHECK(CL == 18 && scale > 0 && total_z > 0); // six legs; the ground pushes up
    double bound = bits == 32 ? 0.01 : 1e-6;     // float32: 2.8e-4 measured
    CHECK_MSG(kind == FS_BACKEND_CPU || worst <= bound * scale,
              "%s: leg contact forces off MuJoCo's by %.3g of %.3g (bound %g of it)", name, worst,
              scale, bound);
    printf("%s: leg contact forces within %.3g of MuJoCo's (largest %.3g)\n", name, worst, scale);
    int contacts = 0;
    for (int w = 0; w < g_nworld; w++) contacts += ncon[w];
    CHECK(contacts > 0); // the checks ran with the feet on the floor
    printf("%s: %s (%d contacts at the block boundary)\n", name,
           failures == before ? "ok" : "FAILED", contacts);
  }
  free(qpos);
  free(ncon);
  free_block(&b1);
  free_block(&b2);
  fs_replay_close(&rb);
  return 0;
}

int main(void) {
  char model[4096], clip[4096];
  snprintf(model, sizeof model, "%s", fs_test_asset("mesh.mjb"));
  snprintf(clip, sizeof clip, "%s", fs_test_asset("walking_clip.h5"));
  Inputs I;
  fsError err = {{0}, FS_OK};
  if (fs_test_small()) {
    g_nworld = 2;
    g_block = 8;
    g_nwarmup = 0;
  }
  if (fs_replay_inputs_load(model, clip, 0, &I.in, &err) ||
      fs_replay_plan(&I.plan, I.in.m, model, &I.in.targets, &I.in.bind, g_nworld, 4 * g_block,
                     g_nwarmup, &err) ||
      fs_replay_set_record(&I.plan, FS_RECORD_ALL, NRENDER, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  if (fs_test_small()) {
    I.plan.init_worlds = settle;
    I.plan.arg = &I.plan;
  }
  CHECK(I.plan.rec.ncol[FS_SERIES_SITE_POS] == 3 * (int)I.in.m->nsite);
  CHECK(I.plan.rec.root_body == 1); // NeuroMechFly's thorax
  // Bounds: cpu exact (MuJoCo's own numbers); the host's float64 stage code within
  // 1e-9 of the scale; float32 within 2e-5 (its kinematics and forces rounded).
  int rc =
      check_backend(&I, FS_BACKEND_CPU, 64, 0) || check_backend(&I, FS_BACKEND_HOST, 64, 1e-9) ||
      check_backend(&I, FS_BACKEND_HOST, 32, 2e-5) ||
      check_backend(&I, FS_BACKEND_CUDA, 64, 1e-9) || check_backend(&I, FS_BACKEND_CUDA, 32, 2e-5);
  fs_replay_plan_free(&I.plan);
  fs_replay_inputs_free(&I.in);
  if (rc || failures || fs_test_failures) {
    fprintf(stderr, "test_record: %d failures\n", failures + fs_test_failures);
    return 1;
  }
  printf("test_record: passed%s\n", fs_test_small() ? " (small mode)" : "");
  return 0;
}
