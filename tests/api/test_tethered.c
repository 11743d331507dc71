// FlyGym's tethered world (assets/worlds/tethered.mjb: TetheredWorld, NeuroMechFly's
// thorax a mocap body, no free joint, each leg a kinematic tree) through the public API
// on one backend:
//
//   test_tethered cpu | host f32 | host f64 | cuda f32 | cuda f64
//
// 1. A replay of the walking clip as flysim replay runs it (the keyframe, adhesion on,
//    the control sequence from each world's clip row): after every step, in every world,
//    the thorax's frame is the mocap pose to the bit (xpos = mocap_pos, xquat =
//    mocap_quat, a unit quaternion) while the legs move.
// 2. The mocap pose set per world (fs_batch_write of the whole view; the view written in
//    place on cpu and host): the worlds given a pose have their thorax there to the bit
//    (an unnormalized quaternion normalized as MuJoCo's kinematics do, the data left as
//    written) and their legs carried along; every other world is bit-identical to a
//    batch where nothing was set; host and cuda move those worlds as MuJoCo (cpu) does;
//    a masked reset puts the keyframe's pose back in that world alone.
#include <flysim/flysim.h>

#include "common/inputs/inputs.h"
#include "tests/api/view_io.h"
#include "tests/testutil.h"

static fsBackendKind g_backend;
static fsPrecision g_precision;
static int g_small; // FLYSIM_TEST_SMALL=1 (the GPU simulator): a few steps each
static char g_path[1024];
static fsReplayInputs g_in; // the model, the clip (at the model's timestep), their binding
static int g_thorax;        // the mocap body

static fsBatch open_on(fsBackendKind kind, fsPrecision prec, int n) {
  fsBatchOptions o = fs_batch_default_options();
  o.backend = kind;
  o.precision = prec;
  o.nworld = n;
  o.nthread = 2;
  o.model_name = g_path;
  fsBatch b;
  fsError err;
  int rc = fs_batch_open(g_in.m, &o, &b, &err);
  CHECK_MSG(rc == FS_OK, "fs_batch_open: %s", err.msg);
  return b;
}

// Every element of view `name` as double (fs_test_read_view), its values per world.
static double* read_view(fsBatch b, const char* name, int64_t* per_world) {
  fsView v;
  double* out = fs_test_read_view(b, name, &v);
  if (!out) exit(fs_test_finish("test_tethered"));
  if (per_world) *per_world = v.shape[1] * v.shape[2];
  return out;
}

// Every world at the keyframe, adhesion on (FlyGym's reset and set_leg_adhesion_states).
static void start(fsBatch b, int n) {
  fsError err;
  CHECK_MSG(fs_batch_reset(b, NULL, g_in.bind.key, &err) == FS_OK, "%s", err.msg);
  int64_t nu;
  double* ctrl = read_view(b, "ctrl", &nu);
  for (int w = 0; w < n; w++)
    for (int k = 0; k < g_in.bind.nadhesion; k++) ctrl[w * nu + g_in.bind.adhesion[k]] = 1;
  fs_test_write_view(b, "ctrl", ctrl, (size_t)(n * nu));
  free(ctrl);
}

// x in the batch's real.
static double as_real(double x) {
  return g_precision == FS_PRECISION_F32 && g_backend != FS_BACKEND_CPU ? (double)(float)x : x;
}

static void step(fsBatch b, int n) {
  fsError err;
  int rc = fs_batch_step(b, n, &err);
  CHECK_MSG(rc == FS_OK, "fs_batch_step: %s", err.msg);
}

// World w's thorax frame against its mocap pose, to the bit; counts the differences.
static int thorax_at_mocap(const double* xpos, const double* xquat, const double* mpos,
                           const double* mquat, int nbody, int w, int step_no) {
  int bad = 0;
  const double* p = xpos + ((size_t)w * nbody + g_thorax) * 3;
  const double* q = xquat + ((size_t)w * nbody + g_thorax) * 4;
  for (int k = 0; k < 3; k++) bad += p[k] != mpos[3 * w + k];
  for (int k = 0; k < 4; k++) bad += q[k] != mquat[4 * w + k];
  if (bad)
    printf("  step %d world %d: thorax (%.17g %.17g %.17g | %.17g %.17g %.17g %.17g), mocap "
           "(%.17g %.17g %.17g | %.17g %.17g %.17g %.17g)\n",
           step_no, w, p[0], p[1], p[2], q[0], q[1], q[2], q[3], mpos[3 * w], mpos[3 * w + 1],
           mpos[3 * w + 2], mquat[4 * w], mquat[4 * w + 1], mquat[4 * w + 2], mquat[4 * w + 3]);
  return bad;
}

// 1. The replay: the thorax never leaves the mocap pose, the legs move.
static void test_replay_thorax(void) {
  const int N = 4, S = g_small ? 8 : 2000, T = g_in.targets.nstep;
  const int nbody = (int)g_in.m->nbody, nq = (int)g_in.m->nq;
  fsBatch b = open_on(g_backend, g_precision, N);
  start(b, N);
  int64_t rows[4];
  for (int w = 0; w < N; w++) rows[w] = (int64_t)((w * (long)S) % (T - S));
  fsCtrlSequence seq = {T, g_in.bind.nact, g_in.targets.value, g_in.bind.actuator, rows};
  fsError err;
  CHECK_MSG(fs_batch_set_ctrl_sequence(b, &seq, &err) == FS_OK, "%s", err.msg);
  double* q0 = read_view(b, "qpos", NULL);
  int bad = 0, checked = 0;
  for (int t = 0; t < S && !bad; t++) {
    step(b, 1);
    double* xpos = read_view(b, "xpos", NULL);
    double* xquat = read_view(b, "xquat", NULL);
    double* mpos = read_view(b, "mocap_pos", NULL);
    double* mquat = read_view(b, "mocap_quat", NULL);
    for (int w = 0; w < N; w++) {
      bad += thorax_at_mocap(xpos, xquat, mpos, mquat, nbody, w, t + 1);
      checked++;
    }
    if (t == S - 1) // still the keyframe's pose, as FlyGym spawns the fly
      for (int w = 0; w < N; w++) {
        for (int k = 0; k < 3; k++) bad += mpos[3 * w + k] != as_real(g_in.m->key_mpos[k]);
        for (int k = 0; k < 4; k++) bad += mquat[4 * w + k] != as_real(g_in.m->key_mquat[k]);
      }
    free(xpos), free(xquat), free(mpos), free(mquat);
  }
  CHECK_MSG(bad == 0, "the thorax left its mocap pose (%d values)", bad);
  double* q = read_view(b, "qpos", NULL);
  double moved = 1e300;
  for (int w = 0; w < N; w++) { // the largest joint change of each world, the least over them
    double m = 0;
    for (int i = 0; i < nq; i++) m = fmax(m, fabs(q[w * nq + i] - q0[w * nq + i]));
    moved = fmin(moved, m);
  }
  printf("replay: %d steps x %d worlds, the thorax at its mocap pose to the bit in all %d "
         "world-steps; every world's legs moved by %.3f rad at least\n",
         S, N, checked, moved);
  CHECK_MSG(moved > (g_small ? 1e-4 : 0.1), "the legs did not move: %g rad", moved);
  free(q0), free(q);
  fs_batch_close(b);
}

// 2. The mocap pose per world: worlds 1 (written with fs_batch_write) and 2 (its
// quaternion off the unit sphere, in place where the view is host memory) take theirs,
// worlds 0 and 3 stay bit-identical to a batch where nothing was set.
static void test_mocap_per_world(void) {
  const int N = 4, S = g_small ? 4 : 300, nbody = (int)g_in.m->nbody, nq = (int)g_in.m->nq;
  fsBatch a = open_on(g_backend, g_precision, N), b = open_on(g_backend, g_precision, N);
  fsBatch ref = open_on(FS_BACKEND_CPU, FS_PRECISION_F64, N); // MuJoCo, given b's poses
  fsBatch all[3] = {a, b, ref};
  for (int k = 0; k < 3; k++) {
    start(all[k], N);
    step(all[k], 20);
  }
  double moved_pos[3] = {0.1, -0.2, 0.05}, turned[4] = {0.5, 0.5, 0.5, 0.5}; // 120 deg
  double skewed[4] = {1, 1, 1, 1}; // normalized by the kinematics: (0.5, 0.5, 0.5, 0.5)
  for (int k = 1; k < 3; k++) {
    double* mpos = read_view(all[k], "mocap_pos", NULL);
    double* mquat = read_view(all[k], "mocap_quat", NULL);
    for (int c = 0; c < 3; c++) mpos[3 + c] += moved_pos[c];
    for (int c = 0; c < 4; c++) mquat[4 + c] = turned[c];
    fs_test_write_view(all[k], "mocap_pos", mpos, (size_t)(3 * N));
    fs_test_write_view(all[k], "mocap_quat", mquat, (size_t)(4 * N));
    fsView v;
    fsError err;
    CHECK(fs_batch_view(all[k], "mocap_quat", &v, &err) == FS_OK && v.writable);
    if (v.memory == FS_MEMORY_HOST) { // in place (world 2's): the next step reads it
      for (int c = 0; c < 4; c++) {
        if (v.dtype == FS_DTYPE_F64)
          ((double*)v.data)[2 * v.strides[0] + c] = skewed[c];
        else
          ((float*)v.data)[2 * v.strides[0] + c] = (float)skewed[c];
      }
    } else {
      for (int c = 0; c < 4; c++) mquat[8 + c] = skewed[c];
      fs_test_write_view(all[k], "mocap_quat", mquat, (size_t)(4 * N));
    }
    free(mpos), free(mquat);
  }
  for (int k = 0; k < 3; k++) step(all[k], S);

  double *xa = read_view(a, "xpos", NULL), *xb = read_view(b, "xpos", NULL);
  double *qa = read_view(a, "qpos", NULL), *qb = read_view(b, "qpos", NULL);
  double *va = read_view(a, "qvel", NULL), *vb = read_view(b, "qvel", NULL);
  double *xr = read_view(ref, "xpos", NULL), *qr = read_view(ref, "qpos", NULL);
  double* xq = read_view(b, "xquat", NULL);
  double *mp = read_view(b, "mocap_pos", NULL), *mq = read_view(b, "mocap_quat", NULL);
  int same = 0, total = 0;
  for (int w = 0; w < N; w += 3) { // worlds 0 and 3: untouched, to the bit
    for (int i = 0; i < nq; i++) same += qa[w * nq + i] == qb[w * nq + i];
    for (int i = 0; i < nq; i++) same += va[w * nq + i] == vb[w * nq + i];
    for (int i = 0; i < 3 * nbody; i++) same += xa[w * 3 * nbody + i] == xb[w * 3 * nbody + i];
    total += 2 * nq + 3 * nbody;
  }
  CHECK_MSG(same == total, "worlds 0 and 3 changed with the others' mocap pose: %d of %d values",
            total - same, total);
  // worlds 1 and 2: the thorax at the pose written, the quaternion as normalized
  int bad = 0;
  for (int c = 0; c < 3; c++) bad += xb[(nbody + g_thorax) * 3 + c] != mp[3 + c];
  for (int w = 1; w < 3; w++)
    for (int c = 0; c < 4; c++) bad += xq[(w * nbody + g_thorax) * 4 + c] != 0.5;
  for (int c = 0; c < 4; c++) bad += mq[8 + c] != 1; // the data keeps what was written
  CHECK_MSG(bad == 0, "worlds 1, 2: the thorax is not at the pose written (%d values)", bad);
  // their legs carried along: every body of world 1 moved, by about the pose's change
  double least = 1e300, dq_ref = 0;
  for (int i = 1; i < nbody; i++) {
    double d = 0;
    for (int c = 0; c < 3; c++) d += pow(xb[(nbody + i) * 3 + c] - xa[(nbody + i) * 3 + c], 2);
    least = fmin(least, sqrt(d));
  }
  for (int w = 1; w < 3; w++)
    for (int i = 0; i < nq; i++) dq_ref = fmax(dq_ref, fabs(qb[w * nq + i] - qr[w * nq + i]));
  double bound = g_backend == FS_BACKEND_CPU ? 0 : g_precision == FS_PRECISION_F32 ? 1e-4 : 1e-9;
  printf("mocap per world: worlds 0, 3 bit-identical to the batch left alone (%d values); "
         "worlds 1, 2 at their poses to the bit, world 1's bodies moved by %.3f at least; "
         "joint angles vs MuJoCo's given the same poses: %.3e rad (bound %g)\n",
         total, least, dq_ref, bound);
  CHECK_MSG(least > 0.05, "world 1's legs did not follow the thorax: %g", least);
  CHECK_MSG(dq_ref <= bound, "worlds 1, 2 differ from MuJoCo's by %g rad", dq_ref);
  (void)xr;

  // a masked reset: world 1 back at the keyframe's pose, the others as they were
  uint8_t mask[4] = {0, 1, 0, 0};
  fsError err;
  CHECK(fs_batch_reset(b, mask, g_in.bind.key, &err) == FS_OK);
  double *mp2 = read_view(b, "mocap_pos", NULL), *mq2 = read_view(b, "mocap_quat", NULL);
  bad = 0;
  for (int c = 0; c < 3; c++) bad += mp2[3 + c] != as_real(g_in.m->key_mpos[c]);
  for (int c = 0; c < 4; c++) bad += mq2[4 + c] != as_real(g_in.m->key_mquat[c]);
  for (int c = 0; c < 4; c++) bad += mq2[8 + c] != 1; // world 2 untouched
  CHECK_MSG(bad == 0, "the masked reset: world 1 not at the keyframe's pose or world 2 reset");
  free(xa), free(xb), free(qa), free(qb), free(va), free(vb), free(xr), free(qr), free(xq);
  free(mp), free(mq), free(mp2), free(mq2);
  for (int k = 0; k < 3; k++) fs_batch_close(all[k]);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_tethered cpu | host f32|f64 | cuda f32|f64\n");
    return 2;
  }
  g_backend = !strcmp(argv[1], "cuda")   ? FS_BACKEND_CUDA
              : !strcmp(argv[1], "host") ? FS_BACKEND_HOST
                                         : FS_BACKEND_CPU;
  g_precision = argc > 2 && !strcmp(argv[2], "f32") ? FS_PRECISION_F32 : FS_PRECISION_F64;
  if (g_backend == FS_BACKEND_CUDA && fs_backend_available(FS_BACKEND_CUDA, NULL) != FS_OK) {
    printf("skipped: %s\n", "no CUDA device here");
    return FS_TEST_SKIP;
  }
  g_small = fs_test_small();
  snprintf(g_path, sizeof g_path, "%s", fs_test_asset("worlds/tethered.mjb"));
  char clip[1024];
  snprintf(clip, sizeof clip, "%s", fs_test_asset("walking_clip.h5"));
  fsError err;
  if (fs_replay_inputs_load(g_path, clip, 0, &g_in, &err)) {
    fprintf(stderr, "%s (run scripts/setup.sh)\n", err.msg);
    return 1;
  }
  g_thorax = -1;
  for (int i = 0; i < g_in.m->nbody; i++)
    if (g_in.m->body_mocapid[i] == 0) g_thorax = i;
  CHECK_MSG(g_in.m->nmocap == 1 && g_thorax == 1 && g_in.m->body_jntnum[1] == 0,
            "%s: the thorax (body 1) is not the one mocap body", g_path);
  test_replay_thorax();
  test_mocap_per_world();
  fs_replay_inputs_free(&g_in);
  char name[64];
  snprintf(name, sizeof name, "test_tethered %s %s", argv[1], argc > 2 ? argv[2] : "");
  return fs_test_finish(name);
}
