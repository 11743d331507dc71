// Unit tests of the outputs' pieces, without running flysim: the perf script parser
// and speedscope writer, the phase attribution, the timer tree, leg names and the
// video's frame clock.
#include <stdlib.h>

#include <mujoco/mujoco.h>

#include "common/profiling/mujoco_timing.h"
#include "common/profiling/perf_phases.h"
#include "common/profiling/perf_script.h"
#include "common/outputs/plots.h"
#include "common/outputs/video.h"
#include "tests/outputs/outputs_util.h"
#include "tests/testutil.h"

// Three samples on two threads (one comm with a space, one pid/tid), leaf first.
static const char* kScript =
    "flysim 101  10.000001:    1001001 cpu-clock:u: \n"
    "\t          23d69a mj_solPrimal.llvm.1490 (/x/libmujoco.so.3.16.0)\n"
    "\t          226c18 fwdConstraint.llvm.18425 (/x/libmujoco.so.3.16.0)\n"
    "\t          22b4ad fwdConstraintStage.llvm.18425 (/x/libmujoco.so.3.16.0)\n"
    "\t          2294b8 mj_forwardSkip (/x/libmujoco.so.3.16.0)\n"
    "\t          22b64a mj_step (/x/libmujoco.so.3.16.0)\n"
    "\t            82d5 run_world (/y/flysim)\n"
    "\n"
    "flysim 101  10.001002:    1001001 cpu-clock:u: \n"
    "\t          2212f9 mj_fwdPosition (/x/libmujoco.so.3.16.0)\n"
    "\t          2293b7 mj_forwardSkip (/x/libmujoco.so.3.16.0)\n"
    "\t          22b64a mj_step (/x/libmujoco.so.3.16.0)\n"
    "\t            82d5 run_world (/y/flysim)\n"
    "\n"
    "llvm pipe 1 7/202  10.002003:    2002002 cpu-clock:u: \n"
    "\t          abcdef [unknown] (/usr/lib/swrast_dri.so)\n"
    "\t          abcdf0 [unknown] ([unknown])\n"
    "\n";

static void test_parse(const char* dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/script.txt", dir);
  FILE* f = fopen(path, "w");
  fputs(kScript, f);
  fclose(f);
  f = fopen(path, "r");
  fsPerfProfile p;
  memset(&p, 0, sizeof p);
  fsError err;
  CHECK(fs_perf_script_parse(f, path, &p, &err) == 0);
  fclose(f);
  CHECK(p.nsample == 3 && p.nthread == 2);
  CHECK(p.threads[0].tid == 101 && !strcmp(p.threads[0].comm, "flysim"));
  CHECK(p.threads[1].tid == 202 && !strcmp(p.threads[1].comm, "llvm pipe 1"));
  CHECK_NEAR(p.sample_ms[0], 1.001001, 1e-9);
  CHECK_NEAR(p.sample_ms[2], 2.002002, 1e-9);
  // Root first: run_world, mj_step, ...; the leaf is last; suffixes are gone.
  CHECK(p.sample_off[1] - p.sample_off[0] == 6);
  CHECK(!strcmp(p.frames[p.stack_frames[0]].name, "run_world"));
  CHECK(!strcmp(p.frames[p.stack_frames[0]].file, "flysim"));
  CHECK(!strcmp(p.frames[p.stack_frames[5]].name, "mj_solPrimal"));
  CHECK(!strcmp(p.frames[p.stack_frames[5]].file, "libmujoco.so.3.16.0"));
  long long total, self;
  fs_perf_profile_count(&p, "mj_step", &total, &self);
  CHECK(total == 2 && self == 0);
  fs_perf_profile_count(&p, "mj_fwdPosition", &total, &self);
  CHECK(total == 1 && self == 1);
  fs_perf_profile_count(&p, "[unknown]", &total, &self);
  CHECK(total == 1 && self == 1);
  // Frames are (name, file): the two [unknown]s differ by binary, run_world is shared.
  CHECK(p.nframe == 9);

  double share[mjNTIMER];
  long long nstep = 0;
  fs_perf_phase_shares(&p, share, &nstep);
  CHECK(nstep == 2);
  CHECK_NEAR(share[mjTIMER_STEP], 1.0, 1e-12);
  CHECK_NEAR(share[mjTIMER_FORWARD], 1.0, 1e-12);
  CHECK_NEAR(share[mjTIMER_CONSTRAINT], 0.5, 1e-12);
  CHECK_NEAR(share[mjTIMER_POSITION], 0.5, 1e-12);
  CHECK_NEAR(share[mjTIMER_ADVANCE], 0.0, 1e-12);
  CHECK(share[mjTIMER_COL_BROAD] < 0 && share[mjTIMER_INVERSE] < 0); // not mapped

  snprintf(path, sizeof path, "%s/p.speedscope.json", dir);
  CHECK(fs_perf_speedscope_write(&p, path, "t \"q\"", "test", &err) == 0);
  FILE* j = fopen(path, "r");
  char buf[8192] = "";
  size_t k = j ? fread(buf, 1, sizeof buf - 1, j) : 0;
  buf[k] = 0;
  if (j) fclose(j);
  CHECK_CONTAINS(buf, "\"name\":\"t \\\"q\\\"\"");
  CHECK_CONTAINS(buf, "{\"name\":\"mj_solPrimal\",\"file\":\"libmujoco.so.3.16.0\"}");
  // The busiest thread first; its samples root first; weights in ms.
  CHECK_CONTAINS(buf, "\"name\":\"flysim (thread 101, 2 samples)\",\"unit\":\"milliseconds\"");
  CHECK_CONTAINS(buf, "\"samples\":[[5,4,3,2,1,0],[5,4,3,6]],\"weights\":[1.001,1.001]");
  fs_perf_profile_free(&p);
}

static void test_timer_tree(void) {
  CHECK(fs_mjtiming_parent(mjTIMER_STEP) == -1 && fs_mjtiming_parent(mjTIMER_INVERSE) == -1);
  CHECK(fs_mjtiming_parent(mjTIMER_CONSTRAINT) == mjTIMER_FORWARD);
  CHECK(fs_mjtiming_parent(mjTIMER_ADVANCE) == mjTIMER_STEP);
  CHECK(fs_mjtiming_parent(mjTIMER_POS_PROJECT) == mjTIMER_POSITION);
  CHECK(fs_mjtiming_parent(mjTIMER_COL_NARROW) == mjTIMER_POS_COLLISION);
  CHECK(fs_mjtiming_depth(mjTIMER_COL_BROAD) == 4);
  // Every timer is reachable from step or inverse (no cycles, no orphans).
  for (int i = 0; i < mjNTIMER; i++) CHECK(fs_mjtiming_depth(i) <= 4);
}

static void test_legs(void) {
  char leg[32];
  fs_leg_of("nmf/c_thorax-lf_coxa-yaw", leg, sizeof leg);
  CHECK(!strcmp(leg, "lf"));
  fs_leg_of("nmf/rh_tibia-rh_tarsus1-pitch", leg, sizeof leg);
  CHECK(!strcmp(leg, "rh"));
  fs_leg_of("nmf/c_thorax-lm_coxa", leg, sizeof leg); // a joint site
  CHECK(!strcmp(leg, "lm"));
  fs_leg_of("l_knee", leg, sizeof leg);
  CHECK(!strcmp(leg, "l"));
  fs_leg_of("nmf", leg, sizeof leg);
  CHECK(!leg[0]);
  fs_leg_of("thorax", leg, sizeof leg);
  CHECK(!leg[0]);
}

static void test_frame_clock(void) {
  // FlyGym: 0.2x at 25 fps with dt 1e-4 is a frame every 80 steps, the first at step 1.
  CHECK(fs_frame_clock_count(0.2, 25, 1e-4, 10000) == 125);
  CHECK(fs_frame_clock_count(0.2, 25, 1e-4, 400) == 5);
  CHECK(fs_frame_clock_count(0.2, 25, 1e-4, 401) == 6);
  CHECK(fs_frame_clock_count(0.2, 25, 1e-4, 1) == 1);
  fsFrameClock c;
  fs_frame_clock_init(&c, 0.2, 25, 1e-4);
  int due = 0, first_after = -1;
  for (int k = 1; k <= 200; k++) {
    int t = fs_frame_clock_tick(&c, k * 1e-4);
    due += t;
    if (t && k > 1 && first_after < 0) first_after = k;
  }
  CHECK(due == 3 && first_after == 81);
}

int main(void) {
  const char* dir = fs_test_tmpdir("units");
  test_parse(dir);
  test_timer_tree();
  test_legs();
  test_frame_clock();
  return fs_test_finish("test_output_units");
}
