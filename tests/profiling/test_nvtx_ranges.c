// The CUDA backend's NVTX ranges, recorded by an NVTX injection library: names,
// counts and nesting of warmup / timed_run { step x N } in the "flysim" domain.
// Needs neither nsys nor a GPU.
//
//   test_nvtx_ranges                         the test
//   test_nvtx_ranges --check LOG --worlds N --sim-steps S
//                                            check a log from another process: flysim
//                                            replay --backend cuda --worlds N --sim-steps S
//                                            run with NVTX_INJECTION64_PATH=
//                                            <libflysim_nvtx_inject.so> FLYSIM_NVTX_LOG=LOG
//                                            marks one `step` range per launch of its
//                                            timed run, as many as the driver's blocks make
//                                            (fs_replay_run_launches), and its warm-up's
//                                            launches inside warmup (any number);
//                                            exit 0 or 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/nvtx.h"
#include "common/replay/replay.h"
#include "tests/profiling/nvtx_log.h"
#include "tests/testutil.h"

#ifndef FLYSIM_NVTX_INJECT
#error FLYSIM_NVTX_INJECT (path of the injection library) must be defined by CMake
#endif

_Static_assert(FLYSIM_NVTX, "test_nvtx_ranges is built only with FLYSIM_NVTX=ON");

// A log must pass or fail the checker as expected.
static void expect_log(const char* text, int warmup, int steps, int ok, const char* what,
                       const char* msg_part) {
  fsError err = {{0}, FS_OK};
  int rc = nvtx_log_check_text(text, warmup, steps, &err);
  CHECK_MSG((rc == 0) == ok, "%s: checker returned %d (%s)", what, rc, err.msg);
  if (!ok && msg_part) CHECK_CONTAINS(err.msg, msg_part);
}

// The checker itself rejects wrong logs (so the live check below can fail).
static void test_checker(void) {
  const char* good = "init\ndomain flysim\n"
                     "push flysim warmup\npop flysim\n"
                     "push flysim timed_run\n"
                     "push flysim step\npop flysim\npush flysim step\npop flysim\n"
                     "pop flysim\n";
  expect_log(good, 0, 2, 1, "good log", NULL);
  expect_log(good, 0, 3, 0, "one step too few", "4 flysim ranges, expected 5");
  expect_log(good, 0, 1, 0, "one step too many", "after all 3 expected ranges");
  expect_log(good, 1, 1, 0, "no step inside warmup", "expected 'step' at depth 1");
  expect_log("init\ndomain flysim\npush flysim warmup\npush flysim step\npop flysim\n"
             "pop flysim\npush flysim timed_run\npush flysim step\npop flysim\npop flysim\n",
             1, 1, 1, "warm-up steps marked", NULL);
  // any number of warm-up launches (-1, the --check mode): none, two; still exact after it
  expect_log(good, -1, 2, 1, "any warm-up launches: none", NULL);
  expect_log("init\ndomain flysim\npush flysim warmup\npush flysim step\npop flysim\n"
             "push flysim step\npop flysim\npop flysim\npush flysim timed_run\npush flysim step\n"
             "pop flysim\npop flysim\n",
             -1, 1, 1, "any warm-up launches: two", NULL);
  expect_log(good, -1, 3, 0, "any warm-up launches, a timed step short",
             "4 flysim ranges, expected 5");
  expect_log("init\ndomain flysim\npush flysim warmup\npush flysim timed_run\npop flysim\n"
             "pop flysim\n",
             -1, 0, 0, "any warm-up launches: timed_run still not inside warmup", "inside warmup");
  // A step after timed_run closed: right names and counts, wrong nesting.
  expect_log("init\ndomain flysim\npush flysim warmup\npop flysim\npush flysim timed_run\n"
             "push flysim step\npop flysim\npop flysim\npush flysim step\npop flysim\n",
             0, 2, 0, "step outside timed_run", "inside (top level)");
  // timed_run nested in warmup.
  expect_log("init\ndomain flysim\npush flysim warmup\npush flysim timed_run\n"
             "push flysim step\npop flysim\npop flysim\npop flysim\n",
             0, 1, 0, "timed_run inside warmup", "inside warmup");
  expect_log("init\ndomain flysim\npush flysim warmup\npop flysim\npush flysim timed_run\n"
             "push flysim step\npop flysim\n",
             0, 1, 0, "timed_run never popped", "never popped: timed_run");
  expect_log("init\ndomain flysim\npush flysim warmup\npop flysim\npop flysim\n", 0, 0, 0,
             "extra pop", "pop with no open flysim range");
  expect_log("init\ndomain flysim\npush flysim warm_up\npop flysim\n", 0, 0, 0, "wrong name",
             "'warm_up'");
  // The same ranges in NVTX's default domain do not count.
  expect_log("init\ndomain flysim\npush - warmup\npop -\npush - timed_run\npush - step\npop -\n"
             "pop -\n",
             0, 1, 0, "default domain", "0 flysim ranges, expected 3");
  expect_log("init\ndomain flysim\ndomain flysim\npush flysim warmup\npop flysim\n"
             "push flysim timed_run\npop flysim\n",
             0, 0, 0, "domain created twice", "created 2 times");
  expect_log("domain flysim\npush flysim warmup\npop flysim\npush flysim timed_run\n"
             "pop flysim\n",
             0, 0, 0, "no injection", "not loaded");
}

// What the CUDA backend does around its graph launches.
static void run_pattern(int steps) {
  fs_nvtx_push(FS_NVTX_WARMUP);
  fs_nvtx_pop();
  fs_nvtx_push(FS_NVTX_TIMED_RUN);
  for (int i = 0; i < steps; i++) {
    fs_nvtx_push(FS_NVTX_STEP);
    fs_nvtx_pop();
  }
  fs_nvtx_pop();
}

static void test_live(void) {
  const char* dir = fs_test_tmpdir("nvtx");
  char log[600];
  snprintf(log, sizeof log, "%s/nvtx.log", dir);
  // Before the first NVTX call: nvtx3 reads these once, at its initialisation.
  setenv("NVTX_INJECTION64_PATH", FLYSIM_NVTX_INJECT, 1);
  setenv("FLYSIM_NVTX_LOG", log, 1);
  const int steps = 25;
  run_pattern(steps);

  fsError err = {{0}, FS_OK};
  int rc = nvtx_log_check_file(log, 0, steps, &err);
  CHECK_MSG(rc == 0, "%s", err.msg);
  char* text = nvtx_read_file(log);
  CHECK(text != NULL);
  if (text) {
    // The literal names the profile's readers rely on (common/base/nvtx.h), whatever the
    // macros say.
    CHECK_CONTAINS(text, "push flysim warmup\npop flysim\npush flysim timed_run\n"
                         "push flysim step\npop flysim\n");
    int n_step = 0;
    for (const char* p = text; (p = strstr(p, "push flysim step\n")); p++) n_step++;
    CHECK_MSG(n_step == steps, "%d step ranges, expected %d", n_step, steps);
    CHECK_MSG(strstr(text, "push - ") == NULL, "a range in NVTX's default domain:\n%s", text);
    if (fs_test_failures) fprintf(stderr, "log %s:\n%s", log, text);
  }
  free(text);
  // Positive control for test_nvtx_off: nvtx3's loader is in this binary.
  CHECK(nvtx_binary_has_loader("/proc/self/exe") == 1);
}

// The launches the driver makes for the device check's replay: the count is the
// driver's, not a number written down (a block length of 10000 / N steps made 15 launches
// of 256 worlds' 50 steps where 8 were expected).
static void test_launch_counts(void) {
  CHECK(fs_replay_launches(8) == 1 && fs_replay_launches(7) == 7 && fs_replay_launches(17) == 3);
  // 256 worlds, 50 steps: blocks of 32 and 18 steps, 4 + (2 + 2) launches
  CHECK(fs_replay_block_steps(256, 50) == 32);
  CHECK_MSG(fs_replay_run_launches(256, 50) == 8, "%ld", fs_replay_run_launches(256, 50));
  // every block a whole number of 8-step launches, however many worlds
  static const int worlds[] = {1, 3, 256, 1250, 1251, 5001, 16384, 65536, 1 << 20};
  for (int i = 0; i < (int)(sizeof worlds / sizeof *worlds); i++) {
    int b = fs_replay_block_steps(worlds[i], 2000);
    CHECK_MSG(b >= FLYSIM_STEPS_PER_LAUNCH && b % FLYSIM_STEPS_PER_LAUNCH == 0 && b <= 1000,
              "%d worlds: blocks of %d steps", worlds[i], b);
    CHECK_MSG(fs_replay_launches(b) == b / FLYSIM_STEPS_PER_LAUNCH, "%d worlds", worlds[i]);
  }
  CHECK(fs_replay_block_steps(65536, 2000) == FLYSIM_STEPS_PER_LAUNCH);
  CHECK(fs_replay_run_launches(65536, 2000) == 2000 / FLYSIM_STEPS_PER_LAUNCH);
  CHECK(fs_replay_block_steps(1, 5) == 5 && fs_replay_run_launches(1, 5) == 5);
}

int main(int argc, char** argv) {
  if (argc == 7 && !strcmp(argv[1], "--check") && !strcmp(argv[3], "--worlds") &&
      !strcmp(argv[5], "--sim-steps")) {
    fsError err = {{0}, FS_OK};
    int nworld = atoi(argv[4]), nstep = atoi(argv[6]);
    long launches = fs_replay_run_launches(nworld, nstep);
    if (nvtx_log_check_file(argv[2], -1, (int)launches, &err)) {
      fprintf(stderr, "%s (%d worlds, %d steps: %ld launches)\n", err.msg, nworld, nstep, launches);
      return 1;
    }
    printf("%s: ranges as expected (%ld launches of %d worlds' %d steps)\n", argv[2], launches,
           nworld, nstep);
    return 0;
  }
  if (argc > 1) {
    fprintf(stderr, "usage: test_nvtx_ranges [--check LOG --worlds N --sim-steps S]\n");
    return 2;
  }
  CHECK(!strcmp(FS_NVTX_DOMAIN, "flysim"));
  CHECK(!strcmp(FS_NVTX_WARMUP, "warmup"));
  CHECK(!strcmp(FS_NVTX_TIMED_RUN, "timed_run"));
  CHECK(!strcmp(FS_NVTX_STEP, "step"));
  test_checker();
  test_launch_counts();
  test_live();
  return fs_test_finish("test_nvtx_ranges");
}
