// The model loader and the replay binding: errors name the file, MuJoCo's own
// message and the fix; NeuroMechFly binds as FlyGym builds it; the sine control (--targets
// sine) drives any model's actuators within their ranges.
#include <math.h>
#include <mujoco/mujoco.h>

#include "common/inputs/controls.h"
#include "common/inputs/model.h"
#include "tests/testutil.h"

static void write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

static void test_missing_file(void) {
  fsError err = {{0}, FS_OK};
  mjModel* m = fs_model_load("/nonexistent/fly.xml", &err);
  CHECK(m == NULL);
  CHECK_CONTAINS(err.msg, "/nonexistent/fly.xml");
  CHECK_CONTAINS(err.msg, "No such file");
  CHECK_CONTAINS(err.msg, "fix:");
}

// --model DIR: said as a folder (was MuJoCo's "ParseXML: empty file", or HDF5-sized
// nonsense for a large one).
static void test_folder(const char* dir) {
  fsError err = {{0}, FS_OK};
  CHECK(fs_model_load(dir, &err) == NULL);
  CHECK_CONTAINS(err.msg, "a folder, not a model file; fix:");
}

static void test_malformed_xml(const char* dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/broken.xml", dir);
  write_file(path, "<mujoco><worldbody><body name='a'><geom size='1'/></worldbody></mujoco>");
  fsError err = {{0}, FS_OK};
  mjModel* m = fs_model_load(path, &err);
  CHECK(m == NULL);
  CHECK_CONTAINS(err.msg, path);
  CHECK_CONTAINS(err.msg, "XML"); // MuJoCo's own parser message is passed on
}

static void test_bad_mjb(const char* dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/garbage.mjb", dir);
  write_file(path, "this is not a MuJoCo binary model");
  fsError err = {{0}, FS_OK};
  mjModel* m = fs_model_load(path, &err);
  CHECK(m == NULL);
  CHECK_CONTAINS(err.msg, path);
  CHECK_CONTAINS(err.msg, "MJB");
}

static void fake_targets(fsTargets* t, const char** names, int n) {
  memset(t, 0, sizeof *t);
  t->ndof = n;
  t->nstep = 4;
  t->timestep = 1e-3;
  t->names = (char**)names;
  t->path = (char*)"targets.h5";
}

static void test_bind_pendulum(void) {
  fsError err = {{0}, FS_OK};
  mjModel* m = fs_model_load(fs_test_model("pendulum.xml"), &err);
  CHECK_MSG(m != NULL, "%s", err.msg);
  if (!m) return;
  // Order of the targets' columns need not be the model's.
  const char* names[] = {"knee", "hip"};
  fsTargets t;
  fake_targets(&t, names, 2);
  fsReplayBinding b;
  CHECK_MSG(fs_replay_bind(m, "pendulum.xml", &t, &b, &err) == 0, "%s", err.msg);
  CHECK(b.nact == 2 && b.actuator[0] == 1 && b.actuator[1] == 0);
  CHECK(b.njoint == 2 && b.actuator_joint[0] == 1 && b.actuator_joint[1] == 0);
  CHECK(b.nadhesion == 0);
  CHECK(b.key == 0);
  CHECK(!strcmp(b.actuator_names[0], "knee"));
  fs_replay_binding_free(&b);

  // Missing DoFs are all listed, with what the model has and the fix.
  const char* wrong[] = {"hip", "ankle", "toe"};
  fake_targets(&t, wrong, 3);
  CHECK(fs_replay_bind(m, "pendulum.xml", &t, &b, &err) != 0);
  CHECK_CONTAINS(err.msg, "pendulum.xml");
  CHECK_CONTAINS(err.msg, "no position actuator drives 2 of the 3 DoFs");
  CHECK_CONTAINS(err.msg, "ankle");
  CHECK_CONTAINS(err.msg, "toe");
  CHECK_CONTAINS(err.msg, "arm/hip");
  CHECK_CONTAINS(err.msg, "Fix:");
  mj_deleteModel(m);
}

// A model whose joints have only motors (no position servos) cannot be replayed.
static void test_bind_no_position_actuators(const char* dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/motors.xml", dir);
  write_file(path, "<mujoco><worldbody><body><joint name='hip'/><geom size='0.1'/></body>"
                   "</worldbody><actuator><motor joint='hip'/></actuator></mujoco>");
  fsError err = {{0}, FS_OK};
  mjModel* m = fs_model_load(path, &err);
  CHECK_MSG(m != NULL, "%s", err.msg);
  if (!m) return;
  const char* names[] = {"hip"};
  fsTargets t;
  fake_targets(&t, names, 1);
  fsReplayBinding b;
  CHECK(fs_replay_bind(m, path, &t, &b, &err) != 0);
  CHECK_CONTAINS(err.msg, "hip");
  CHECK_CONTAINS(err.msg, "0 position actuators");
  mj_deleteModel(m);
}

// NeuroMechFly as exported: FlyGym's sizes, 42 position actuators bound to the
// clip's DoFs, 6 adhesion actuators, 66 recorded hinges, the "neutral" keyframe.
static void test_bind_neuromechfly(void) {
  fsError err = {{0}, FS_OK};
  const char* variants[] = {"mesh.mjb", "capsule.mjb", "mesh/neuromechfly.xml",
                            "capsule/neuromechfly.xml"};
  fsTargets t;
  CHECK_MSG(fs_targets_load(fs_test_asset("walking_clip.h5"), &t, &err) == 0, "%s", err.msg);
  for (int v = 0; v < 4; v++) {
    mjModel* m = fs_model_load(fs_test_asset(variants[v]), &err);
    CHECK_MSG(m != NULL, "%s: %s (run scripts/setup.sh)", variants[v], err.msg);
    if (!m) continue;
    CHECK(m->nbody == 50 && m->njnt == 67 && m->nq == 73 && m->nv == 72);
    CHECK(m->nu == 48 && m->ngeom == 70 && m->npair == 55);
    CHECK(m->opt.timestep == 1e-4 && m->opt.integrator == mjINT_EULER);
    CHECK(m->opt.solver == mjSOL_NEWTON && m->opt.noslip_iterations == 5);
    fsReplayBinding b;
    CHECK_MSG(fs_replay_bind(m, variants[v], &t, &b, &err) == 0, "%s", err.msg);
    CHECK(b.nact == 42 && b.nadhesion == 6 && b.njoint == 66);
    CHECK(b.key == mj_name2id(m, mjOBJ_KEY, "neutral") && b.key >= 0);
    for (int a = 0; a < b.nact; a++)
      CHECK_MSG(strstr(b.joint_names[b.actuator_joint[a]], t.names[a]) != NULL, "%s vs %s",
                b.joint_names[b.actuator_joint[a]], t.names[a]);
    fs_replay_binding_free(&b);
    mj_deleteModel(m);
  }
  fs_targets_free(&t);
}

// --targets sine on a model of three kinds of actuator: a motor with a control range, a
// position servo on a limited joint without one, a motor without either (unnamed): each
// column within its range's inner 80 % and reaching it, periodic, named; bound column a to
// actuator a, the servo's column tracking its joint, the motors' tracking none.
static void test_sine_control(const char* dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/sine.xml", dir);
  write_file(path, "<mujoco><compiler angle='radian'/><option timestep='0.01'/><worldbody><body>"
                   "<joint name='a' axis='0 1 0'/><geom size='0.1'/>"
                   "<body pos='0 0 -0.3'><joint name='b' axis='0 1 0' range='0.5 1.5'/>"
                   "<geom size='0.1'/></body></body></worldbody><actuator>"
                   "<motor name='m' joint='a' ctrlrange='-2 1'/>"
                   "<position name='p' joint='b' kp='5'/><motor joint='a'/></actuator></mujoco>");
  fsError err = {{0}, FS_OK};
  mjModel* m = fs_model_load(path, &err);
  CHECK_MSG(m != NULL, "%s", err.msg);
  if (!m) return;
  fsTargets t;
  CHECK_MSG(fs_targets_sine(m, &t, &err) == 0, "%s", err.msg);
  CHECK(t.ndof == 3 && t.nstep >= FS_SINE_MIN_ROWS && t.timestep == 0.01);
  CHECK(!strcmp(t.names[0], "m") && !strcmp(t.names[1], "p") && !strcmp(t.names[2], "actuator 2"));
  const double lo[3] = {-2, 0.5, -1}, hi[3] = {1, 1.5, 1};
  for (int a = 0; a < 3; a++) {
    double mid = 0.5 * (lo[a] + hi[a]), half = 0.4 * (hi[a] - lo[a]), vmin = INFINITY,
           vmax = -INFINITY;
    int period = (int)lround((0.5 + 0.25 * a) / 0.01); // rows
    for (int r = 0; r < t.nstep; r++) {
      double v = t.value[(long)r * 3 + a];
      vmin = fmin(vmin, v);
      vmax = fmax(vmax, v);
      if (r + period < t.nstep)
        CHECK_MSG(fabs(t.value[(long)(r + period) * 3 + a] - v) < 1e-9, "column %d row %d", a, r);
    }
    CHECK_MSG(vmin >= mid - half - 1e-12 && vmax <= mid + half + 1e-12 &&
                  vmin < mid - 0.99 * half && vmax > mid + 0.99 * half,
              "column %d spans [%g, %g], want [%g, %g]", a, vmin, vmax, mid - half, mid + half);
  }
  fsReplayBinding b;
  CHECK_MSG(fs_replay_bind_controls(m, &t, &b, &err) == 0, "%s", err.msg);
  CHECK(b.nact == 3 && b.njoint == 2 && b.key == -1);
  CHECK(b.actuator[0] == 0 && b.actuator[1] == 1 && b.actuator[2] == 2);
  CHECK(b.actuator_joint[0] == -1 && b.actuator_joint[1] == 1 && b.actuator_joint[2] == -1);
  fs_replay_binding_free(&b);
  fs_targets_free(&t);
  mj_deleteModel(m);
}

int main(void) {
  const char* dir = fs_test_tmpdir("model");
  test_sine_control(dir);
  test_missing_file();
  test_folder(dir);
  test_malformed_xml(dir);
  test_bad_mjb(dir);
  test_bind_pendulum();
  test_bind_no_position_actuators(dir);
  test_bind_neuromechfly();
  return fs_test_finish("test_model");
}
