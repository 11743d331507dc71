// --save-data's plots: the figures exist, and the series they draw, stored in the
// HDF5 file, are the recorded ones (numbers, not pixels):
//   /plots/joint_tracking: world 0's target and simulated angles of the chosen leg's
//     DoFs, equal to the columns of /target and /qpos_joint they name;
//   /pose: world 0's positions of the model's sites (or bodies) at every step, equal
//     to an independent replay of world 0 with MuJoCo in this test (same steps, same
//     controls), bit for bit.
// --plot-leg picks the leg; a leg the model lacks is a usage error before the run.
// NeuroMechFly (lf by default, 49 sites in 6 legs) when the assets are exported.
#include <stdlib.h>

#include <mujoco/mujoco.h>

#include "tests/outputs/outputs_util.h"
#include "tests/testutil.h"

enum { NSTEP = 400 };

static char g_dir[600], g_targets[700];

static void check_figures(const char* run) {
  const char* stems[2] = {"joint_angle_tracking", "pose_over_time"};
  for (int i = 0; i < 2; i++) {
    char png[900], pdf[900];
    snprintf(png, sizeof png, "%s/%s.png", run, stems[i]);
    snprintf(pdf, sizeof pdf, "%s/%s.pdf", run, stems[i]);
    CHECK_MSG(out_file_starts_with(png, "\x89PNG", 4), "%s is not a PNG", png);
    CHECK_MSG(out_file_starts_with(pdf, "%PDF", 4), "%s is not a PDF", pdf);
  }
}

// /plots/joint_tracking against /qpos_joint and /target; returns the DoF names.
static char** check_tracking(const char* h5, const char* leg, int* ndof) {
  char attr[64] = "";
  CHECK(out_attr_string(h5, "/plots/joint_tracking", "leg", attr, sizeof attr) == 0);
  CHECK_MSG(!strcmp(attr, leg), "leg '%s', expected '%s'", attr, leg);
  int rq, rt, rs, rg, nj = 0;
  long long dq[3], dt[3], ds[3], dg[3], nt = 0, njc = 0, ntc = 0;
  float* q = out_read_floats(h5, "qpos_joint", &rq, dq);
  float* t = out_read_floats(h5, "target", &rt, dt);
  float* sim = out_read_floats(h5, "plots/joint_tracking/simulated", &rs, ds);
  float* tgt = out_read_floats(h5, "plots/joint_tracking/target", &rg, dg);
  double* time = out_read_doubles(h5, "plots/joint_tracking/time", &nt);
  long long* jc = out_read_ints(h5, "plots/joint_tracking/joint_column", &njc);
  long long* tc = out_read_ints(h5, "plots/joint_tracking/target_column", &ntc);
  char** names = out_read_strings(h5, "plots/joint_tracking/dof_names", ndof);
  char** joints = out_read_strings(h5, "joint_names", &nj);
  int ok = q && t && sim && tgt && time && jc && tc && names && joints && rs == 2 && rg == 2;
  CHECK(ok);
  if (ok) {
    long long T = dq[0], K = ds[1];
    CHECK(T == NSTEP || T > 0);
    CHECK(ds[0] == T && dg[0] == T && dg[1] == K && nt == T && njc == K && ntc == K && *ndof == K);
    for (long long k = 0; k < K; k++) {
      CHECK_MSG(!strcmp(joints[jc[k]], names[k]), "column %lld: %s vs %s", k, joints[jc[k]],
                names[k]);
      for (long long s = 0; s < T; s++) {
        // world 0 of (T x N x C): row s, column c at [s * N * C + c]
        if (sim[s * K + k] != q[s * dq[1] * dq[2] + jc[k]] ||
            tgt[s * K + k] != t[s * dt[1] * dt[2] + tc[k]]) {
          CHECK_MSG(0, "step %lld DoF %s differs from the recording", s, names[k]);
          break;
        }
      }
    }
    for (long long s = 0; s < T; s++) CHECK_NEAR(time[s], s * 1e-4, 1e-12);
  }
  free(q), free(t), free(sim), free(tgt), free(time), free(jc), free(tc);
  out_free_strings(joints, nj);
  return names;
}

// World 0 of the walker replayed here with MuJoCo: reset (no keyframe), adhesion on,
// 500 warm-up steps, then the targets' rows; body positions after each mj_step.
static float* walker_pose(int nstep) {
  char msg[1000];
  mjModel* m = mj_loadXML(fs_test_model("walker.xml"), NULL, msg, sizeof msg);
  if (!m) return NULL;
  mjData* d = mj_makeData(m);
  mj_resetData(m, d);
  d->ctrl[6] = d->ctrl[7] = 1.0; // the adhesion actuators
  for (int s = 0; s < 500; s++) mj_step(m, d);
  int P = (int)m->nbody - 1;
  float* pts = malloc(sizeof(float) * (size_t)nstep * P * 3);
  for (int k = 0; k < nstep; k++) {
    for (int a = 0; a < 6; a++) d->ctrl[a] = 0.4 * sin(2 * M_PI * 8.0 * k * 1e-4 + a) + 0.05 * a;
    mj_step(m, d);
    for (int i = 0; i < 3 * P; i++) pts[(size_t)k * P * 3 + i] = (float)d->xpos[3 + i];
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  return pts;
}

static void check_walker_pose(const char* h5) {
  char source[32] = "";
  CHECK(out_attr_string(h5, "/pose", "source", source, sizeof source) == 0);
  CHECK(!strcmp(source, "xpos")); // the walker has no sites
  int rank = 0, np = 0, nl = 0;
  long long dims[3], nleg = 0;
  float* pts = out_read_floats(h5, "pose/points", &rank, dims);
  char** names = out_read_strings(h5, "pose/point_names", &np);
  char** legs = out_read_strings(h5, "pose/leg_names", &nl);
  long long* point_leg = out_read_ints(h5, "pose/point_leg", &nleg);
  float* want = walker_pose(NSTEP);
  CHECK(pts && rank == 3 && dims[0] == NSTEP && dims[1] == 7 && dims[2] == 3 && want);
  CHECK(names && np == 7 && !strcmp(names[0], "thorax") && !strcmp(names[3], "l_foot"));
  CHECK(legs && nl == 2 && !strcmp(legs[0], "l") && !strcmp(legs[1], "r"));
  CHECK(point_leg && nleg == 7 && point_leg[0] == -1 && point_leg[1] == 0 && point_leg[6] == 1);
  if (pts && want && dims[0] == NSTEP && dims[1] == 7)
    CHECK_MSG(!memcmp(pts, want, sizeof(float) * NSTEP * 7 * 3),
              "world 0's pose differs from MuJoCo's replay of it");
  free(pts), free(want), free(point_leg);
  out_free_strings(names, np);
  out_free_strings(legs, nl);
}

static void test_walker(void) {
  char args[2048], run[800], h5[900], *out = NULL;
  snprintf(run, sizeof run, "%s/walker", g_dir);
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --worlds 2 --threads 2 --sim-steps %d --save-data '%s' "
           "--no-video --quiet",
           fs_test_model("walker.xml"), g_targets, NSTEP, run);
  CHECK(out_flysim("", args, &out) == 0);
  CHECK_CONTAINS(out, "joint_angle_tracking.png|pdf (leg l, world 0)");
  free(out);
  check_figures(run);
  snprintf(h5, sizeof h5, "%s/replay.h5", run);
  int n = 0;
  char** names = check_tracking(h5, "l", &n);
  CHECK(n == 3 && names && !strcmp(names[0], "l_yaw") && !strcmp(names[2], "l_knee"));
  out_free_strings(names, n);
  check_walker_pose(h5);

  // --plot-leg r
  snprintf(run, sizeof run, "%s/walker_r", g_dir);
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --sim-steps %d --save-data '%s' --no-video "
           "--plot-leg r --quiet",
           fs_test_model("walker.xml"), g_targets, NSTEP, run);
  CHECK(out_flysim("", args, &out) == 0);
  free(out);
  snprintf(h5, sizeof h5, "%s/replay.h5", run);
  names = check_tracking(h5, "r", &n);
  CHECK(n == 3 && names && !strcmp(names[0], "r_yaw"));
  out_free_strings(names, n);
}

static void test_usage(void) {
  char args[2048], *out = NULL;
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --sim-steps 10 --save-data '%s/bad' --plot-leg lf",
           fs_test_model("walker.xml"), g_targets, g_dir);
  CHECK(out_flysim("", args, &out) == 2);
  CHECK_CONTAINS(out, "--plot-leg lf");
  CHECK_CONTAINS(out, "fix: one of: l r");
  CHECK(!strstr(out, "Replayed"));
  free(out);
  snprintf(args, sizeof args, "--model '%s' --targets '%s' --plot-leg l",
           fs_test_model("walker.xml"), g_targets);
  CHECK(out_flysim("", args, &out) == 2);
  CHECK_CONTAINS(out, "--plot-leg only applies with --save-data DIR");
  free(out);
  CHECK(out_flysim("", "--no-video", &out) == 2);
  CHECK_CONTAINS(out, "--no-video only applies with --save-data DIR");
  free(out);
}

static void test_nmf(void) {
  const char* model = fs_test_asset("mesh.mjb");
  const char* clip = fs_test_asset("walking_clip.h5");
  if (!out_file_nonempty(model) || !out_file_nonempty(clip)) {
    printf("NeuroMechFly part skipped: no exported assets (%s)\n", model);
    return;
  }
  char args[2048], run[800], h5[900], *out = NULL;
  snprintf(run, sizeof run, "%s/nmf", g_dir);
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --sim-steps 300 --save-data '%s' --no-video --quiet", model,
           clip, run);
  CHECK(out_flysim("", args, &out) == 0);
  free(out);
  check_figures(run);
  snprintf(h5, sizeof h5, "%s/replay.h5", run);
  int n = 0;
  char** names = check_tracking(h5, "lf", &n);
  CHECK(n == 7); // thorax-coxa yaw/pitch/roll, coxa-trochanter pitch/roll, femur-tibia,
                 // tibia-tarsus: FlyGym's seven actuated DoFs of a leg
  for (int k = 0; k < n && names; k++) CHECK(strstr(names[k], "lf_") != NULL);
  out_free_strings(names, n);
  char source[32] = "";
  CHECK(out_attr_string(h5, "/pose", "source", source, sizeof source) == 0);
  CHECK(!strcmp(source, "site_xpos"));
  int nl = 0, rank = 0;
  long long dims[3];
  char** legs = out_read_strings(h5, "pose/leg_names", &nl);
  CHECK(legs && nl == 6);
  float* pts = out_read_floats(h5, "pose/points", &rank, dims);
  CHECK(pts && dims[0] == 300 && dims[1] == 49 && dims[2] == 3);
  free(pts);
  out_free_strings(legs, nl);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "%s", fs_test_tmpdir("plots"));
  snprintf(g_targets, sizeof g_targets, "%s/walker_targets.h5", g_dir);
  if (out_write_walker_targets(g_targets, 2000)) return 1;
  test_usage();
  test_walker();
  test_nmf();
  return fs_test_finish("test_plots");
}
