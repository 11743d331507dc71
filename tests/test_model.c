// The model loader and the replay binding: errors name the file, MuJoCo's own
// message and the fix; NeuroMechFly binds as FlyGym builds it.
#include <mujoco/mujoco.h>

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

int main(void) {
  const char* dir = fs_test_tmpdir("model");
  test_missing_file();
  test_malformed_xml(dir);
  test_bad_mjb(dir);
  test_bind_pendulum();
  test_bind_no_position_actuators(dir);
  test_bind_neuromechfly();
  return fs_test_finish("test_model");
}
