// The CPU reference stepper: the same results whatever the thread count, each
// world on its own slice of the clip, and instability reported per world.
#include <signal.h>

#include "common/sys/interrupt.h"
#include "tests/replay_fixture.h"
#include "tests/testutil.h"

static const char* kWalkerDofs[6] = {"l_yaw", "l_pitch", "l_knee", "r_yaw", "r_pitch", "r_knee"};

// Sinusoidal gait targets for the walker at its timestep: (T x 6).
static void write_walker_targets(const char* path, int T) {
  double* v = malloc(sizeof(double) * (size_t)T * 6);
  for (int k = 0; k < T; k++)
    for (int a = 0; a < 6; a++) v[k * 6 + a] = 0.4 * sin(2 * M_PI * 8.0 * k * 1e-4 + a) + 0.05 * a;
  CHECK(fs_test_write_targets(path, T, 6, kWalkerDofs, v, 1e-4) == 0);
  free(v);
}

// Bitwise equality of two worlds' states (qpos, qvel, warnings, time).
static int same_state(const mjModel* m, const mjData* a, const mjData* b) {
  return !memcmp(a->qpos, b->qpos, sizeof(mjtNum) * m->nq) &&
         !memcmp(a->qvel, b->qvel, sizeof(mjtNum) * m->nv) &&
         !memcmp(a->qacc_warmstart, b->qacc_warmstart, sizeof(mjtNum) * m->nv) &&
         a->time == b->time && !memcmp(a->warning, b->warning, sizeof a->warning);
}

// 7 worlds on 1, 2, 3 and 7 threads: every world ends in the same state, bit for
// bit, and the recorded files are identical.
static void test_thread_count_invariance(const char* dir, const char* targets) {
  enum { NW = 7, NS = 300 };
  const int threads[4] = {1, 2, 3, 7};
  Fixture fx[2]; // [0]: one thread (the reference), [1]: the others in turn
  char h5[4][512];
  for (int i = 0; i < 4; i++) {
    Fixture* f = &fx[i ? 1 : 0];
    snprintf(h5[i], sizeof h5[i], "%s/threads%d.h5", dir, threads[i]);
    if (fixture_open(f, fs_test_model("walker.xml"), targets, NW, NS, 50, threads[i])) {
      CHECK(0);
      return;
    }
    CHECK(fixture_run(f, h5[i]) == 0);
    CHECK(f->rb.info.nthread == threads[i]);
    CHECK(f->res.steps == NS);
    if (i == 0) continue;
    for (int w = 0; w < NW; w++)
      CHECK_MSG(same_state(f->m, fixture_world(&fx[0], w), fixture_world(f, w)),
                "world %d differs between 1 and %d threads", w, threads[i]);
    fixture_close(f);
  }
  // Worlds really differ from one another (different slices of the clip).
  CHECK(!same_state(fx[0].m, fixture_world(&fx[0], 0), fixture_world(&fx[0], 1)));
  fixture_close(&fx[0]);
  int t0, n0, c0, t1, n1, c1;
  float* a = fixture_read_series(h5[0], "qpos_joint", &t0, &n0, &c0);
  float* b = fixture_read_series(h5[2], "qpos_joint", &t1, &n1, &c1);
  CHECK(a && b && t0 == NS && n0 == NW && c0 == 6 && t1 == t0 && n1 == n0 && c1 == c0);
  if (a && b) CHECK(!memcmp(a, b, sizeof(float) * (size_t)t0 * n0 * c0));
  free(a);
  free(b);
}

// World w starts at row (w mod floor(T/S)) * S; a replay longer than the clip is
// refused with the fix.
static void test_world_offsets(const char* targets) {
  Fixture f;
  if (fixture_open(&f, fs_test_model("walker.xml"), targets, 5, 60, 0, 1)) {
    CHECK(0);
    return;
  }
  const long expect[5] = {0, 60, 120, 0, 60}; // T = 200: three slices of 60
  for (int w = 0; w < 5; w++) CHECK(f.plan.world_start[w] == expect[w]);
  fsReplay plan;
  fsError err = {{0}, FS_OK};
  CHECK(fs_replay_plan(&plan, f.m, "walker.xml", &f.t, &f.b, 4, 100, 0, &err) == 0);
  CHECK(plan.world_start[1] == 100 && plan.world_start[2] == 0); // (w x S) mod T
  fs_replay_plan_free(&plan);
  CHECK(fs_replay_plan(&plan, f.m, "walker.xml", &f.t, &f.b, 4, 201, 0, &err) != 0);
  CHECK_CONTAINS(err.msg, "201 steps");
  CHECK_CONTAINS(err.msg, "--sim-steps <= 200");
  // Each world's recorded targets are its own slice.
  fixture_close(&f);
}

// Worlds whose slice of the clip drives an unlimited servo to 5e9 rad blow up
// (acceleration beyond MuJoCo's 1e10 limit); MuJoCo warns (bad qacc) and resets them. The run goes
// on, and exactly those worlds are reported, with the kind and the step of their first warning.
static void test_instability_reported(const char* dir) {
  char model[512], targets[512];
  snprintf(model, sizeof model, "%s/unstable.xml", dir);
  snprintf(targets, sizeof targets, "%s/unstable.h5", dir);
  FILE* fm = fopen(model, "w");
  fputs("<mujoco><option timestep='1e-3'/><worldbody><body><joint name='hip' axis='0 1 0'/>"
        "<geom size='0.1'/></body></worldbody><actuator><position joint='hip' kp='1'/>"
        "</actuator></mujoco>",
        fm);
  fclose(fm);
  enum { T = 100 };
  double v[T];
  for (int k = 0; k < T; k++) v[k] = k == 70 ? 5e9 : 0.1;
  const char* names[1] = {"hip"};
  CHECK(fs_test_write_targets(targets, T, 1, names, v, 1e-3) == 0);
  Fixture f;
  if (fixture_open(&f, model, targets, 4, 50, 0, 2)) {
    CHECK(0);
    return;
  }
  CHECK(fixture_run(&f, NULL) == 0);
  CHECK(f.res.steps == 50); // the run did not stop
  fsWorldStatus* all = fixture_status(&f);
  for (int w = 0; w < 4 && all; w++) {
    fsWorldStatus st = all[w];
    int odd = w % 2; // worlds 1 and 3 start at row 50 and meet 5e9 at step 20
    CHECK_MSG((st.warnings[mjWARN_BADQACC] > 0) == odd, "world %d: %d bad-qacc warnings", w,
              st.warnings[mjWARN_BADQACC]);
    if (odd)
      CHECK(st.first_warning == mjWARN_BADQACC && st.first_warning_step == 20);
    else
      CHECK(st.first_warning == -1);
  }
  free(all);
  CHECK(fixture_report(&f, 10) == 2);
  fixture_close(&f);
}

// A world whose constraint solve runs to opt.iterations is reported (MuJoCo says
// nothing): the walker with its contacts and one Newton iteration allowed.
static void test_solver_limit_reported(const char* targets) {
  Fixture f;
  if (fixture_open(&f, fs_test_model("walker.xml"), targets, 2, 100, 100, 1)) {
    CHECK(0);
    return;
  }
  f.m->opt.iterations = 1;
  f.m->opt.tolerance = 0; // no early exit: every solve with rows runs to the limit
  CHECK(fixture_run(&f, NULL) == 0);
  fsWorldStatus* all = fixture_status(&f);
  for (int w = 0; w < 2 && all; w++) {
    fsWorldStatus st = all[w];
    CHECK_MSG(st.solver_limit > 0 && st.solver_limit <= 200, "world %d: %d steps at the limit", w,
              st.solver_limit);
    CHECK(fs_world_has_problem(&st));
  }
  free(all);
  CHECK(fixture_report(&f, 10) == 2);
  fixture_close(&f);
  // with MuJoCo's 50 iterations the walker's solves converge: nothing reported
  if (fixture_open(&f, fs_test_model("walker.xml"), targets, 2, 100, 100, 1)) {
    CHECK(0);
    return;
  }
  CHECK(fixture_run(&f, NULL) == 0);
  CHECK(fixture_report(&f, 10) == 0);
  fixture_close(&f);
}

// A stop request (as from Ctrl-C) ends the run at a step boundary with the steps
// completed so far.
static void test_stop_request(const char* targets) {
  Fixture f;
  if (fixture_open(&f, fs_test_model("walker.xml"), targets, 2, 200, 0, 2)) {
    CHECK(0);
    return;
  }
  fs_interrupt_request(SIGINT);
  CHECK(fixture_run(&f, NULL) == 0);
  CHECK(f.res.interrupted == SIGINT && f.res.steps < 200);
  fs_interrupt_request(0);
  fixture_close(&f);
}

int main(void) {
  const char* dir = fs_test_tmpdir("cpu");
  char targets[512];
  snprintf(targets, sizeof targets, "%s/walker_targets.h5", dir);
  write_walker_targets(targets, 200);
  test_world_offsets(targets);
  write_walker_targets(targets, 2400);
  test_thread_count_invariance(dir, targets);
  test_instability_reported(dir);
  test_solver_limit_reported(targets);
  test_stop_request(targets);
  return fs_test_finish("test_cpu_replay");
}
