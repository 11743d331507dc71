// flysim bench's repeats (bench/sweep.h): every repeat of a point starts from the state the
// first started from (the worlds reset, the clip cleared from the batch, the same warm-up at
// the keyframe's controls), so that repeats measure the same run; and a point runs any
// number of repeats at any number of worlds, the last world's slice ending at the clip's
// last row. On cpu, and on host with one and two threads.
#include <stdlib.h>
#include <string.h>

#include "bench/sweep.h"
#include "tests/replay_fixture.h"
#include "tests/testutil.h"

static const char* kWalkerDofs[6] = {"l_yaw", "l_pitch", "l_knee", "r_yaw", "r_pitch", "r_knee"};

// T rows of a gait for the walker (6 actuators), changing fast enough that a warm-up on
// the clip's rows instead of the keyframe's controls ends somewhere else.
static void write_targets(const char* path, int T) {
  double* v = malloc(sizeof(double) * (size_t)T * 6);
  for (int k = 0; k < T; k++)
    for (int a = 0; a < 6; a++) v[k * 6 + a] = 0.5 * sin(2 * M_PI * 20.0 * k * 1e-4 + a);
  CHECK(fs_test_write_targets(path, T, 6, kWalkerDofs, v, 1e-4) == 0);
  free(v);
}

// Every world's qpos and qvel in the batch's real, bytes as they are (malloc'd).
static char* read_state(const fsReplayBatch* rb, const mjModel* m, int N, size_t* bytes) {
  size_t es = rb->bits == 32 ? sizeof(float) : sizeof(double);
  size_t nq = (size_t)N * (size_t)m->nq * es, nv = (size_t)N * (size_t)m->nv * es;
  char* s = malloc(nq + nv);
  fsError err = {{0}, FS_OK};
  if (!s || fs_batch_read(rb->b, "qpos", s, nq, &err) ||
      fs_batch_read(rb->b, "qvel", s + nq, nv, &err)) {
    CHECK_MSG(0, "reading the state: %s", err.msg);
    free(s);
    return NULL;
  }
  *bytes = nq + nv;
  return s;
}

static int same(const char* a, const char* b, size_t n) {
  return a && b && !memcmp(a, b, n);
}

// R repeats of one point: the state at each repeat's start (fs_replay_start, as
// fs_bench_repeat's run starts) and at its end the same bit for bit as the first's.
static void test_repeats(const Fixture* f, fsBackendKind kind, int bits, int nthread, int N, int S,
                         int W) {
  enum { R = 3 };
  const char* name = kind == FS_BACKEND_CPU ? "cpu" : bits == 32 ? "host:f32" : "host:f64";
  fsBenchInputs in = {f->m, "walker.xml", &f->t, &f->b, S, W, nthread, R, NULL, 0, 0};
  fsBenchPoint p = {kind, bits, 0, N, 0};
  fsBenchRow row;
  fsBenchRun run;
  fsError err = {{0}, FS_OK};
  char *start0 = NULL, *end0 = NULL;
  size_t n = 0;
  CHECK_MSG(fs_bench_open(&in, &p, &row, &run) == 0, "%s, %d worlds: %s", name, N, row.error);
  for (int r = 0; r < R && !run.failed; r++) {
    CHECK(fs_replay_start(&run.plan, &run.rb, &err) == 0);
    char* start = read_state(&run.rb, f->m, N, &n);
    CHECK_MSG(fs_bench_repeat(&run) == 0 && !run.failed, "%s, %d worlds, repeat %d: %s", name, N,
              r + 1, row.error);
    char* end = read_state(&run.rb, f->m, N, &n);
    if (r == 0) {
      start0 = start, end0 = end;
      CHECK_MSG(!same(start, end, n), "%s: the timed steps move the worlds", name);
      continue;
    }
    CHECK_MSG(same(start0, start, n), "%s, %d worlds, %d threads: repeat %d starts elsewhere", name,
              N, nthread, r + 1);
    CHECK_MSG(same(end0, end, n), "%s, %d worlds, %d threads: repeat %d ends elsewhere", name, N,
              nthread, r + 1);
    free(start);
    free(end);
  }
  CHECK(run.done == R);
  fs_bench_close(&run);
  CHECK_MSG(row.ok && row.problem_worlds == 0, "%s, %d worlds: ok %d, %d problem worlds: %s", name,
            N, row.ok, row.problem_worlds, row.error);
  free(start0);
  free(end0);
}

int main(void) {
  enum { T = 300, S = 100, W = 40 };
  const char* dir = fs_test_tmpdir("bench_repeat");
  char targets[512];
  snprintf(targets, sizeof targets, "%s/walker_targets.h5", dir);
  write_targets(targets, T);
  Fixture f;
  if (fixture_open(&f, fs_test_model("walker.xml"), targets, 1, S, W, 1)) {
    CHECK(0);
    return fs_test_finish("test_bench_repeat");
  }
  // T / S = 3 worlds: the last starts at row 200 and its slice ends at the clip's last row;
  // 7 worlds: the slices again from world 3; 1 world.
  const int worlds[3] = {T / S, 7, 1};
  for (int i = 0; i < 3; i++) {
    test_repeats(&f, FS_BACKEND_CPU, 64, 2, worlds[i], S, W);
    test_repeats(&f, FS_BACKEND_HOST, 32, 1, worlds[i], S, W);
    test_repeats(&f, FS_BACKEND_HOST, 64, 2, worlds[i], S, W);
  }
  fixture_close(&f);
  return fs_test_finish("test_bench_repeat");
}
