// The public API (include/flysim/flysim.h) on one backend, against MuJoCo itself:
//
//   test_batch cpu | host f32 | host f64 | cuda f32 | cuda f64
//
// A closed-loop controller through the views reproduces MuJoCo's own mj_step world by
// world (cpu and host float64 to the bit, float32 within its rounding); a masked reset
// leaves the other worlds bit-identical to a run without it; a per-world parameter
// equals a model built with that value; the control sequence equals writing ctrl every
// step; a recording equals the views read after every step; on cuda, a reset by a device
// mask and a recording into device memory equal their host forms to the bit; a bad
// control is one world's problem, not the others'; fs_batch_forward of a state written
// through the views gives mj_forward's derived quantities and leaves the state and the next
// steps as they were; every misuse returns its status and message.
#include <flysim/flysim.h>
#ifdef FS_TEST_CUDART
#include <cuda_runtime_api.h>
#endif

#include "tests/api/view_io.h"
#include "tests/testutil.h"

static fsBackendKind g_backend;
static fsPrecision g_precision;
static int g_small; // FLYSIM_TEST_SMALL=1 (the GPU simulator): a few steps each
static const char* g_model_path;
static mjModel* g_m;

// The walker (tests/models/walker.xml) with a keyframe: the worlds start standing.
static void make_model(const char* dir) {
  static char path[700];
  snprintf(path, sizeof path, "%s/walker_key.xml", dir);
  FILE* in = fopen(fs_test_model("walker.xml"), "r");
  FILE* out = fopen(path, "w");
  char line[1024];
  while (in && out && fgets(line, sizeof line, in)) {
    if (strstr(line, "</mujoco>"))
      fputs("  <keyframe>\n    <key name=\"neutral\" qpos=\"0 0 0.62 1 0 0 0 0.1 0.2 -0.3 -0.1 "
            "0.2 -0.3\" ctrl=\"0.1 0.2 -0.3 -0.1 0.2 -0.3 1 1\"/>\n  </keyframe>\n",
            out);
    fputs(line, out);
  }
  if (in) fclose(in);
  if (out) fclose(out);
  g_model_path = path;
  g_m = fs_test_load_model(path);
}

static fsBatch open_n(const mjModel* m, int n) {
  fsBatchOptions o = fs_batch_default_options();
  o.backend = g_backend;
  o.precision = g_precision;
  o.nworld = n;
  o.nthread = 2;
  o.model_name = g_model_path;
  fsBatch b;
  fsError err;
  int rc = fs_batch_open(m, &o, &b, &err);
  CHECK_MSG(rc == FS_OK, "fs_batch_open: %s", err.msg);
  return b;
}

static int key_neutral(void) {
  return mj_name2id(g_m, mjOBJ_KEY, "neutral");
}

// The PD controller of world w: joint targets that swing with time, adhesion on.
static void controller(const mjModel* m, const double* qpos, double t, int w, double* ctrl) {
  for (int a = 0; a < 6; a++) {
    int j = m->actuator_trnid[2 * a];
    double q = qpos[m->jnt_qposadr[j]];
    double target = 0.3 * sin(40.0 * t + a + 0.5 * w);
    ctrl[a] = target + 0.2 * (target - q); // a position servo driven past its target
  }
  ctrl[6] = ctrl[7] = 1.0;
}

static int is_f32(void) {
  return g_precision == FS_PRECISION_F32;
}

// Worlds in closed loop against MuJoCo stepping each world the same way.
static void test_closed_loop(void) {
  const int N = 4, S = g_small ? 8 : is_f32() ? 20 : 300, nq = (int)g_m->nq, nu = (int)g_m->nu;
  fsBatch b = open_n(g_m, N);
  fsError err;
  CHECK(fs_batch_reset(b, NULL, key_neutral(), &err) == FS_OK);
  mjData* ref[4];
  for (int w = 0; w < N; w++) {
    ref[w] = mj_makeData(g_m);
    mj_resetDataKeyframe(g_m, ref[w], key_neutral());
  }
  double* ctrl = calloc((size_t)N * nu, sizeof(double));
  double worst = 0;
  for (int s = 0; s < S; s++) {
    fsView v;
    double* q = fs_test_read_view(b, "qpos", &v);
    double* t = fs_test_read_view(b, "time", &v);
    for (int w = 0; w < N && q && t; w++) {
      controller(g_m, q + (size_t)w * nq, t[w], w, ctrl + (size_t)w * nu);
      double cref[8];
      controller(g_m, ref[w]->qpos, ref[w]->time, w, cref);
      for (int a = 0; a < nu; a++) ref[w]->ctrl[a] = is_f32() ? (float)cref[a] : cref[a];
      mj_step(g_m, ref[w]);
    }
    free(q);
    free(t);
    fs_test_write_view(b, "ctrl", ctrl, (size_t)N * nu);
    int rc = fs_batch_step(b, 1, &err);
    CHECK_MSG(rc == FS_OK, "step %d: %s", s, err.msg);
    if (rc) break;
  }
  fsView v;
  double* q = fs_test_read_view(b, "qpos", &v);
  for (int w = 0; w < N && q; w++)
    for (int i = 0; i < nq; i++) {
      double d = fabs(q[(size_t)w * nq + i] - ref[w]->qpos[i]);
      if (d > worst) worst = d;
    }
  printf("closed loop: %d worlds x %d steps, largest |qpos - MuJoCo's| %.3g\n", N, S, worst);
  // cpu: MuJoCo itself, to the bit; host and cuda float64: the engine's solver ends its
  // iterations on other last bits than MuJoCo's (1e-14 here after 300 steps); float32:
  // its rounding over 20 steps
  double bound = is_f32() ? 1e-3 : g_backend == FS_BACKEND_CPU ? 0.0 : 1e-10;
  CHECK_MSG(worst <= bound, "largest error %.3g (bound %g)", worst, bound);
  free(q);
  free(ctrl);
  for (int w = 0; w < N; w++) mj_deleteData(ref[w]);
  fs_batch_close(b);
}

static int same(const double* a, const double* b, int n) {
  return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

// Stepped with constant controls from the keyframe: a masked reset leaves the other
// worlds as a run without it, and the reset worlds as fresh ones.
static void test_masked_reset(void) {
  const int N = 4, nq = (int)g_m->nq;
  fsBatch a = open_n(g_m, N), b = open_n(g_m, N), fresh = open_n(g_m, N);
  fsError err;
  fsBatch all[3] = {a, b, fresh};
  for (int k = 0; k < 3; k++) CHECK(fs_batch_reset(all[k], NULL, key_neutral(), &err) == FS_OK);
  const int S1 = g_small ? 8 : 40, S2 = g_small ? 8 : 30;
  CHECK(fs_batch_step(a, S1, &err) == FS_OK);
  CHECK(fs_batch_step(b, S1, &err) == FS_OK);
  uint8_t mask[4] = {1, 0, 1, 0};
  CHECK(fs_batch_reset(a, mask, key_neutral(), &err) == FS_OK);
  CHECK(fs_batch_step(a, S2, &err) == FS_OK);
  CHECK(fs_batch_step(b, S2, &err) == FS_OK);
  CHECK(fs_batch_step(fresh, S2, &err) == FS_OK);
  fsView v;
  double *qa = fs_test_read_view(a, "qpos", &v), *qb = fs_test_read_view(b, "qpos", &v),
         *qf = fs_test_read_view(fresh, "qpos", &v);
  for (int w = 0; w < N && qa && qb && qf; w++) {
    const double* want = mask[w] ? qf : qb;
    CHECK_MSG(same(qa + (size_t)w * nq, want + (size_t)w * nq, nq), "world %d (%s) differs from %s",
              w, mask[w] ? "reset" : "not reset",
              mask[w] ? "a fresh world" : "the run without the reset");
  }
  CHECK(!same(qa, qb, nq)); // the reset did something
  free(qa), free(qb), free(qf);
  for (int k = 0; k < 3; k++) fs_batch_close(all[k]);
}

// A world's kp doubled through fs_batch_set_param equals a batch of the model with it.
static void test_set_param(void) {
  const int N = 2, nq = (int)g_m->nq, nu = (int)g_m->nu;
  fsError err;
  double* gain = malloc(sizeof(double) * nu * mjNGAIN);
  double* bias = malloc(sizeof(double) * nu * mjNBIAS);
  memcpy(gain, g_m->actuator_gainprm, sizeof(double) * nu * mjNGAIN);
  memcpy(bias, g_m->actuator_biasprm, sizeof(double) * nu * mjNBIAS);
  for (int a = 0; a < 6; a++) {
    gain[a * mjNGAIN] *= 2;
    bias[a * mjNBIAS + 1] *= 2;
  }
  fsBatch b = open_n(g_m, N);
  int one = 1;
  CHECK(fs_batch_set_param(b, "actuator_gainprm", &one, 1, gain, &err) == FS_OK);
  CHECK(fs_batch_set_param(b, "actuator_biasprm", &one, 1, bias, &err) == FS_OK);
  mjModel* m2 = mj_copyModel(NULL, g_m);
  memcpy(m2->actuator_gainprm, gain, sizeof(double) * nu * mjNGAIN);
  memcpy(m2->actuator_biasprm, bias, sizeof(double) * nu * mjNBIAS);
  mjData* scratch = mj_makeData(m2);
  mj_setConst(m2, scratch);
  fsBatch base = open_n(g_m, N), varied = open_n(m2, N);
  fsBatch all[3] = {b, base, varied};
  double ctrl[2 * 8];
  for (int w = 0; w < N; w++)
    for (int a = 0; a < nu; a++) ctrl[w * nu + a] = a < 6 ? 0.4 : 1.0;
  for (int k = 0; k < 3; k++) {
    CHECK(fs_batch_reset(all[k], NULL, key_neutral(), &err) == FS_OK);
    fs_test_write_view(all[k], "ctrl", ctrl, (size_t)N * nu);
    CHECK(fs_batch_step(all[k], g_small ? 16 : 60, &err) == FS_OK);
  }
  fsView v;
  double *q = fs_test_read_view(b, "qpos", &v), *q0 = fs_test_read_view(base, "qpos", &v),
         *q2 = fs_test_read_view(varied, "qpos", &v);
  if (q && q0 && q2) {
    CHECK_MSG(same(q, q0, nq), "world 0 (its model untouched) differs from the model's batch");
    CHECK_MSG(same(q + nq, q2 + nq, nq), "world 1 (kp x 2) differs from a batch of that model");
    CHECK(!same(q + nq, q0 + nq, nq));
  }
  // misuse
  CHECK(fs_batch_set_param(b, "no_such_field", &one, 1, gain, &err) == FS_ERR_ARGUMENT);
  CHECK_CONTAINS(err.msg, "no_such_field");
  int bad = 7;
  CHECK(fs_batch_set_param(b, "actuator_gainprm", &bad, 1, gain, &err) == FS_ERR_ARGUMENT);
  free(q), free(q0), free(q2), free(gain), free(bias);
  mj_deleteData(scratch);
  mj_deleteModel(m2);
  for (int k = 0; k < 3; k++) fs_batch_close(all[k]);
}

// S steps of b (N worlds), ctrl written before each as a control sequence would: columns
// act (A of them) of table's row row0[w] + s for world w at step s; then whether every
// world's qpos is a's.
static void step_writing_ctrl(fsBatch a, fsBatch b, int N, int S, const double* table, int A,
                              const int* act, const int64_t* row0, const char* what) {
  const int nq = (int)g_m->nq, nu = (int)g_m->nu;
  fsError err;
  fsView v;
  double* ctrl = fs_test_read_view(b, "ctrl", &v);
  for (int s = 0; s < S && ctrl; s++) {
    for (int w = 0; w < N; w++)
      for (int c = 0; c < A; c++) ctrl[w * nu + act[c]] = table[(row0[w] + s) * A + c];
    fs_test_write_view(b, "ctrl", ctrl, (size_t)N * nu);
    CHECK(fs_batch_step(b, 1, &err) == FS_OK);
  }
  double *qa = fs_test_read_view(a, "qpos", &v), *qb = fs_test_read_view(b, "qpos", &v);
  if (qa && qb) CHECK_MSG(same(qa, qb, N * nq), "%s differs from writing ctrl", what);
  free(ctrl), free(qa), free(qb);
}

// The control sequence equals writing ctrl every step; a step past its end is refused.
static void test_ctrl_sequence(void) {
  // S steps; world 2 starts at row 25, so that 5 more fit in the T rows and 6 do not
  const int N = 3, S = g_small ? 8 : 20, T = 30 + S, A = 6;
  fsError err;
  double* table = malloc(sizeof(double) * T * A);
  for (int r = 0; r < T; r++)
    for (int c = 0; c < A; c++) table[r * A + c] = 0.3 * sin(0.2 * r + c);
  int act[6] = {0, 1, 2, 3, 4, 5};
  int64_t row0[3] = {0, 10, 25};
  fsBatch a = open_n(g_m, N), b = open_n(g_m, N);
  CHECK(fs_batch_reset(a, NULL, key_neutral(), &err) == FS_OK);
  CHECK(fs_batch_reset(b, NULL, key_neutral(), &err) == FS_OK);
  fsCtrlSequence seq = {T, A, table, act, row0};
  CHECK(fs_batch_set_ctrl_sequence(a, &seq, &err) == FS_OK);
  CHECK(fs_batch_step(a, S, &err) == FS_OK);
  step_writing_ctrl(a, b, N, S, table, A, act, row0, "the sequence");
  // world 2 is at row 25 + S: 5 more steps fit, 6 do not
  int64_t before = fs_batch_steps(a);
  CHECK(fs_batch_step(a, 6, &err) == FS_ERR_ARGUMENT);
  CHECK_CONTAINS(err.msg, "world 2");
  CHECK(fs_batch_steps(a) == before);
  CHECK(fs_batch_step(a, 5, &err) == FS_OK);
  CHECK(fs_batch_set_ctrl_sequence(a, NULL, &err) == FS_OK);
  CHECK(fs_batch_step(a, 6, &err) == FS_OK);
  free(table);
  fs_batch_close(a);
  fs_batch_close(b);
}

// A sequence set after some steps, replacing another, from a table the caller then
// overwrites: each world reads its row from the step it was set at, of the batch's copy.
static void test_ctrl_sequence_replaced(void) {
  const int N = 3, S = g_small ? 6 : 15, T = 2 * S, A = 3;
  const int S0 = g_small ? 2 : 5; // steps before the sequence is set
  fsError err;
  double* table = malloc(sizeof(double) * T * A);
  double* kept = malloc(sizeof(double) * T * A);
  for (int r = 0; r < T; r++)
    for (int c = 0; c < A; c++) kept[r * A + c] = 0.25 * cos(0.3 * r + 2 * c);
  int act[3] = {5, 0, 3}, first_act[3] = {1, 2, 4};
  int64_t row0[3] = {S - 1, 0, S / 2}, first_row0[3] = {0, 0, 0}; // rows within T = 2S
  fsBatch a = open_n(g_m, N), b = open_n(g_m, N);
  CHECK(fs_batch_reset(a, NULL, key_neutral(), &err) == FS_OK);
  CHECK(fs_batch_reset(b, NULL, key_neutral(), &err) == FS_OK);
  CHECK(fs_batch_step(a, S0, &err) == FS_OK);
  CHECK(fs_batch_step(b, S0, &err) == FS_OK);
  for (int k = 0; k < T * A; k++) table[k] = 0.5; // the first sequence, replaced at once
  fsCtrlSequence first = {T, A, table, first_act, first_row0};
  CHECK(fs_batch_set_ctrl_sequence(a, &first, &err) == FS_OK);
  memcpy(table, kept, sizeof(double) * T * A);
  fsCtrlSequence seq = {T, A, table, act, row0};
  CHECK(fs_batch_set_ctrl_sequence(a, &seq, &err) == FS_OK);
  for (int k = 0; k < T * A; k++) table[k] = 1e3; // the batch keeps its own copy
  act[0] = act[1] = act[2] = 1;
  row0[0] = row0[1] = row0[2] = 0;
  CHECK_MSG(fs_batch_step(a, S, &err) == FS_OK, "step after a replaced sequence: %s", err.msg);
  const int act_kept[3] = {5, 0, 3};
  const int64_t row_kept[3] = {S - 1, 0, S / 2};
  step_writing_ctrl(a, b, N, S, kept, A, act_kept, row_kept, "a replaced sequence");
  free(table), free(kept);
  fs_batch_close(a);
  fs_batch_close(b);
}

// A recording of worlds 1 and 2 equals the views read after every step.
static void test_recording(void) {
  const int N = 4, S = g_small ? 4 : 12, nq = (int)g_m->nq, nu = (int)g_m->nu;
  fsError err;
  const char* src[5] = {"qpos", "qpos", "ctrl", "xpos", "solver_iterations"};
  int index[5] = {2, 8, 1, 5, 0};
  fsRecordOptions ro = {5, src, index, NULL, 1, 2, S, FS_MEMORY_HOST};
  fsBatch a = open_n(g_m, N), b = open_n(g_m, N);
  int id = -1;
  CHECK(fs_batch_add_recording(a, &ro, &id, &err) == FS_OK);
  CHECK(id == 0);
  float* out = calloc((size_t)S * 2 * 5, sizeof(float));
  float* want = calloc((size_t)S * 2 * 5, sizeof(float));
  fsBatch both[2] = {a, b};
  double ctrl[4 * 8];
  for (int i = 0; i < N * nu; i++) ctrl[i] = 0.1 * (i % nu) - 0.2;
  for (int k = 0; k < 2; k++) {
    CHECK(fs_batch_reset(both[k], NULL, key_neutral(), &err) == FS_OK);
    fs_test_write_view(both[k], "ctrl", ctrl, (size_t)N * nu);
  }
  float* outs[1] = {out};
  CHECK(fs_batch_step_recorded(a, S, outs, &err) == FS_OK);
  CHECK(fs_batch_sync(a, &err) == FS_OK);
  for (int s = 0; s < S; s++) {
    CHECK(fs_batch_step(b, 1, &err) == FS_OK);
    fsView v;
    double *q = fs_test_read_view(b, "qpos", &v), *c = fs_test_read_view(b, "ctrl", &v),
           *x = fs_test_read_view(b, "xpos", &v),
           *it = fs_test_read_view(b, "solver_iterations", &v);
    for (int w = 1; w <= 2 && q && c && x && it; w++) {
      float* row = want + ((size_t)s * 2 + (w - 1)) * 5;
      row[0] = (float)q[w * nq + 2];
      row[1] = (float)q[w * nq + 8];
      row[2] = (float)c[w * nu + 1];
      row[3] = (float)x[w * g_m->nbody * 3 + 5];
      row[4] = (float)it[w * 2];
    }
    free(q), free(c), free(x), free(it);
  }
  CHECK_MSG(!memcmp(out, want, sizeof(float) * S * 2 * 5),
            "the recording differs from the views read after every step");
  // misuse
  const char* bad_src[1] = {"cvel"};
  fsRecordOptions bad = {1, bad_src, index, NULL, 0, 0, 4, FS_MEMORY_HOST};
  CHECK(fs_batch_add_recording(a, &bad, &id, &err) == FS_ERR_ARGUMENT);
  CHECK_CONTAINS(err.msg, "cvel");
  CHECK(fs_batch_step_recorded(a, S + 1, outs, &err) == FS_ERR_ARGUMENT);
  free(out), free(want);
  fs_batch_close(a);
  fs_batch_close(b);
}

#ifdef FS_TEST_CUDART
// Device memory holding n bytes of host (NULL: n zero bytes); aborts the test on a CUDA
// error.
static void* device_copy(const void* host, size_t n) {
  void* p = NULL;
  CHECK(cudaMalloc(&p, n) == cudaSuccess);
  if (!p) return NULL;
  CHECK((host ? cudaMemcpy(p, host, n, cudaMemcpyHostToDevice) : cudaMemset(p, 0, n)) ==
        cudaSuccess);
  return p;
}

// cuda: the device forms of reset and recording against their host forms, on two batches
// stepped alike: fs_batch_reset_device with a mask in device memory (twice with one
// keyframe: the second reuses the uploaded state; then qpos0) leaves every world as
// fs_batch_reset with that mask on the host, health included; a recording with memory
// FS_MEMORY_DEVICE writes what the host recording lands.
static void test_device_forms(void) {
  const int N = 4, S = g_small ? 4 : 12, C = 3, nq = (int)g_m->nq;
  fsError err;
  fsBatch h = open_n(g_m, N), d = open_n(g_m, N);
  const char* src[3] = {"qpos", "qvel", "xpos"};
  int index[3] = {2, 4, 5};
  fsRecordOptions ro = {C, src, index, NULL, 0, 0, S, FS_MEMORY_HOST};
  int id = -1;
  CHECK(fs_batch_add_recording(h, &ro, &id, &err) == FS_OK);
  ro.memory = FS_MEMORY_DEVICE;
  CHECK(fs_batch_add_recording(d, &ro, &id, &err) == FS_OK);
  size_t rec_bytes = sizeof(float) * (size_t)S * N * C;
  float *out_h = calloc(1, rec_bytes), *out_d = calloc(1, rec_bytes);
  float* dev_out = device_copy(NULL, rec_bytes);
  uint8_t masks[3][4] = {{1, 0, 1, 0}, {0, 1, 1, 0}, {0, 0, 0, 1}};
  int keys[3] = {key_neutral(), key_neutral(), -1};
  uint8_t* dev_mask = device_copy(NULL, N);
  CHECK(fs_batch_reset(h, NULL, key_neutral(), &err) == FS_OK);
  CHECK(fs_batch_reset(d, NULL, key_neutral(), &err) == FS_OK);
  for (int round = 0; round <= 3 && out_h && out_d && dev_out && dev_mask; round++) {
    if (round > 0) {
      const uint8_t* mask = masks[round - 1];
      CHECK(cudaMemcpy(dev_mask, mask, N, cudaMemcpyHostToDevice) == cudaSuccess);
      CHECK(fs_batch_reset(h, mask, keys[round - 1], &err) == FS_OK);
      CHECK_MSG(fs_batch_reset_device(d, dev_mask, keys[round - 1], &err) == FS_OK, "%s", err.msg);
    }
    float* outs_h[1] = {out_h};
    float* outs_d[1] = {dev_out};
    CHECK(fs_batch_step_recorded(h, S, outs_h, &err) == FS_OK);
    CHECK(fs_batch_step_recorded(d, S, outs_d, &err) == FS_OK);
    CHECK(fs_batch_sync(h, &err) == FS_OK && fs_batch_sync(d, &err) == FS_OK);
    CHECK(cudaMemcpy(out_d, dev_out, rec_bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK_MSG(!memcmp(out_h, out_d, rec_bytes),
              "round %d: the device recording differs from the host one", round);
    fsView v;
    double *qh = fs_test_read_view(h, "qpos", &v), *qd = fs_test_read_view(d, "qpos", &v);
    for (int w = 0; w < N && qh && qd; w++)
      CHECK_MSG(same(qh + (size_t)w * nq, qd + (size_t)w * nq, nq),
                "round %d: world %d after the device-mask reset differs from the host-mask one",
                round, w);
    free(qh), free(qd);
    fsWorldHealth hh[4], hd[4];
    CHECK(fs_batch_health(h, hh, &err) == FS_OK && fs_batch_health(d, hd, &err) == FS_OK);
    for (int w = 0; w < N; w++)
      CHECK_MSG(hh[w].problems == hd[w].problems && hh[w].peak_contacts == hd[w].peak_contacts,
                "round %d: world %d's health differs", round, w);
  }
  // misuse
  CHECK(fs_batch_reset_device(d, NULL, -1, &err) == FS_ERR_ARGUMENT);
  CHECK_CONTAINS(err.msg, "NULL");
  CHECK(fs_batch_reset_device(d, dev_mask, 5, &err) == FS_ERR_ARGUMENT);
  CHECK_CONTAINS(err.msg, "keyframe");
  ro.memory = (fsMemory)7;
  CHECK(fs_batch_add_recording(d, &ro, &id, &err) == FS_ERR_ARGUMENT);
  CHECK_CONTAINS(err.msg, "memory");
  cudaFree(dev_out);
  cudaFree(dev_mask);
  free(out_h), free(out_d);
  fs_batch_close(h);
  fs_batch_close(d);
}
#endif

// A bad control in world 2 is world 2's problem (MuJoCo's BADCTRL), no one else's.
static void test_health(void) {
  const int N = 3, nu = (int)g_m->nu;
  fsError err;
  fsBatch b = open_n(g_m, N);
  CHECK(fs_batch_reset(b, NULL, key_neutral(), &err) == FS_OK);
  double ctrl[3 * 8] = {0};
  ctrl[2 * nu + 1] = NAN;
  fs_test_write_view(b, "ctrl", ctrl, (size_t)N * nu);
  CHECK(fs_batch_step(b, 3, &err) == FS_OK);
  fsWorldHealth h[3];
  CHECK(fs_batch_health(b, h, &err) == FS_OK);
  for (int w = 0; w < N; w++) {
    int bad = w == 2;
    CHECK_MSG(!!(h[w].problems & FS_PROBLEM_WARNING) == bad, "world %d: problems %u", w,
              h[w].problems);
    CHECK_MSG((h[w].first_warning == mjWARN_BADCTRL) == bad, "world %d: first warning %d", w,
              h[w].first_warning);
  }
  CHECK(h[2].first_warning_step == 0);
  fsView v;
  double* p = fs_test_read_view(b, "problems", &v);
  if (p) CHECK(p[0] == 0 && p[1] == 0 && ((int)p[2] & FS_PROBLEM_WARNING));
  free(p);
  uint8_t mask[3] = {0, 0, 1};
  CHECK(fs_batch_reset(b, mask, key_neutral(), &err) == FS_OK);
  CHECK(fs_batch_health(b, h, &err) == FS_OK);
  CHECK(h[2].problems == 0 && h[2].first_warning == -1);
  fs_batch_close(b);
}

// Views' shapes and types; misuse of every call.
static void test_views_and_misuse(void) {
  const int N = 2;
  fsError err;
  CHECK(!strcmp(fs_backend_name(FS_BACKEND_HOST), "host") &&
        !strcmp(fs_backend_name((fsBackendKind)9), "unknown")); // not "cpu"
  fsBatch b = open_n(g_m, N);
  fsView v;
  fsDtype real = g_precision == FS_PRECISION_F32 ? FS_DTYPE_F32 : FS_DTYPE_F64;
  CHECK(fs_batch_view(b, "ctrl", &v, &err) == FS_OK);
  CHECK(v.ndim == 2 && v.shape[0] == N && v.shape[1] == g_m->nu && v.dtype == real && v.writable);
  CHECK(v.memory == (g_backend == FS_BACKEND_CUDA ? FS_MEMORY_DEVICE : FS_MEMORY_HOST));
  void* addr = v.data;
  CHECK(fs_batch_step(b, 2, &err) == FS_OK);
  CHECK(fs_batch_view(b, "ctrl", &v, &err) == FS_OK && v.data == addr); // fixed address
  CHECK(fs_batch_view(b, "xpos", &v, &err) == FS_OK);
  CHECK(v.ndim == 3 && v.shape[1] == g_m->nbody && v.shape[2] == 3 && !v.writable);
  // MuJoCo's inputs are the writable views (every one on the cpu backend, on host and cuda
  // those the engine holds), its outputs and the state the step keeps are not
  const char* inputs[] = {"qpos",      "qvel",       "ctrl", "qfrc_applied",
                          "mocap_pos", "mocap_quat", "act",  "xfrc_applied"};
  for (int k = 0; k < 8; k++) {
    int has = fs_batch_view(b, inputs[k], &v, &err) == FS_OK;
    CHECK_MSG(has == (k < 7 || g_backend == FS_BACKEND_CPU), "view %s: %s", inputs[k],
              has ? "there" : err.msg);
    CHECK_MSG(!has || v.writable, "view %s is not writable", inputs[k]);
  }
  const char* outputs[] = {"time", "qacc", "qacc_warmstart", "actuator_force", "ncon", "xquat"};
  for (int k = 0; k < 6; k++) {
    CHECK_MSG(fs_batch_view(b, outputs[k], &v, &err) == FS_OK, "view %s: %s", outputs[k], err.msg);
    CHECK_MSG(!v.writable, "view %s is writable", outputs[k]);
  }
  CHECK(fs_batch_view(b, "time", &v, &err) == FS_OK);
  CHECK(v.ndim == 1 && v.dtype == FS_DTYPE_F64);
  CHECK(fs_batch_view(b, "ncon", &v, &err) == FS_OK && v.dtype == FS_DTYPE_I32);
  // the extra views: (N) and (N x 2) ints in the backend's memory, read-only
  fsMemory memory = g_backend == FS_BACKEND_CUDA ? FS_MEMORY_DEVICE : FS_MEMORY_HOST;
  CHECK(fs_batch_view(b, "problems", &v, &err) == FS_OK && !strcmp(v.name, "problems"));
  CHECK(v.dtype == FS_DTYPE_I32 && v.ndim == 1 && v.shape[0] == N && v.shape[1] == 1 &&
        v.shape[2] == 1 && !v.writable && v.memory == memory && v.data);
  CHECK(fs_batch_view(b, "solver_iterations", &v, &err) == FS_OK);
  CHECK(v.dtype == FS_DTYPE_I32 && v.ndim == 2 && v.shape[0] == N && v.shape[1] == 2 &&
        v.shape[2] == 1 && !v.writable && v.memory == memory && v.data);
  CHECK(fs_batch_view(b, "nonsense", &v, &err) == FS_ERR_ARGUMENT);
  CHECK_CONTAINS(err.msg, "nonsense");
  CHECK(fs_batch_view(b, NULL, &v, &err) == FS_ERR_ARGUMENT);
  double small[2];
  CHECK(fs_batch_read(b, "qpos", small, sizeof small, &err) == FS_ERR_ARGUMENT);
  CHECK_CONTAINS(err.msg, "bytes");
  CHECK(fs_batch_write(b, "xpos", small, sizeof small, &err) == FS_ERR_ARGUMENT);
  CHECK(fs_batch_step(b, -1, &err) == FS_ERR_ARGUMENT);
  CHECK(fs_batch_reset(b, NULL, 5, &err) == FS_ERR_ARGUMENT);
  CHECK_CONTAINS(err.msg, "keyframe");
  CHECK((fs_batch_mjdata(b, 0) != NULL) == (g_backend == FS_BACKEND_CPU));
  if (g_backend != FS_BACKEND_CUDA) { // the device forms: cuda only
    uint8_t mask[2] = {1, 0};
    CHECK(fs_batch_reset_device(b, mask, -1, &err) == FS_ERR_ARGUMENT);
    CHECK_CONTAINS(err.msg, "fs_batch_reset with a host mask");
    const char* src[1] = {"qpos"};
    int index[1] = {0};
    fsRecordOptions ro = {1, src, index, NULL, 0, 0, 1, FS_MEMORY_DEVICE};
    int id;
    CHECK(fs_batch_add_recording(b, &ro, &id, &err) == FS_ERR_ARGUMENT);
    CHECK_CONTAINS(err.msg, "FS_MEMORY_HOST");
  }
  fsBatchInfo info;
  CHECK(fs_batch_info(b, &info, &err) == FS_OK);
  CHECK(info.nworld == N && info.backend == g_backend && info.description[0]);
  fs_batch_close(b);
  // a closed batch, its slot reused: still closed
  CHECK(fs_batch_step(b, 1, &err) == FS_ERR_CLOSED);
  CHECK_CONTAINS(err.msg, "closed");
  fsBatch again = open_n(g_m, 1);
  CHECK(fs_batch_step(b, 1, &err) == FS_ERR_CLOSED);
  CHECK(fs_batch_step(again, 1, NULL) == FS_OK); // err may be NULL
  fs_batch_close(again);
  fs_batch_close(again); // closing twice is harmless
  fsBatch none = {0, 0};
  CHECK(fs_batch_sync(none, &err) == FS_ERR_CLOSED);
  // open
  fsBatchOptions o = fs_batch_default_options();
  CHECK(fs_batch_open(NULL, &o, &b, &err) == FS_ERR_ARGUMENT);
  o.nworld = 0;
  CHECK(fs_batch_open(g_m, &o, &b, &err) == FS_ERR_ARGUMENT);
  o = fs_batch_default_options();
  o.precision = FS_PRECISION_F32;
  CHECK(fs_batch_open(g_m, &o, &b, &err) == FS_ERR_ARGUMENT); // cpu is float64
  CHECK_CONTAINS(err.msg, "host backend");
  o = fs_batch_default_options();
  o.max_contacts = 4;
  CHECK(fs_batch_open(g_m, &o, &b, &err) == FS_ERR_ARGUMENT);
  if (fs_backend_available(FS_BACKEND_CUDA, NULL) != FS_OK) {
    o = fs_batch_default_options();
    o.backend = FS_BACKEND_CUDA;
    CHECK(fs_batch_open(g_m, &o, &b, &err) == FS_ERR_UNAVAILABLE);
    CHECK_CONTAINS(err.msg, "cpu or host");
  }
}

// Views' strides: each world's values C-contiguous, worlds strides[0] apart; on the host
// backend no two worlds share a cache line (its threads write neighbouring worlds), on
// cpu and cuda the worlds side by side. fs_batch_read and fs_batch_write see world w at
// strides[0] x w, and a write in place lands in the world it addresses.
static void test_view_strides(void) {
  const int N = 3;
  fsError err;
  fsBatch b = open_n(g_m, N);
  CHECK(fs_batch_step(b, 1, &err) == FS_OK);
  const char* names[] = {"qpos", "ctrl", "xpos", "time", "ncon", "problems", "solver_iterations"};
  for (int k = 0; k < 7; k++) {
    fsView v;
    CHECK(fs_batch_view(b, names[k], &v, &err) == FS_OK);
    int64_t world = v.shape[1] * v.shape[2], es = v.dtype == FS_DTYPE_F64 ? 8 : 4;
    CHECK_MSG(v.strides[2] == 1 && v.strides[1] == v.shape[2] && v.strides[0] >= world,
              "view %s: strides (%lld, %lld, %lld), shape (%lld, %lld, %lld)", names[k],
              (long long)v.strides[0], (long long)v.strides[1], (long long)v.strides[2],
              (long long)v.shape[0], (long long)v.shape[1], (long long)v.shape[2]);
    int health = k >= 5; // the health views are the backends' own arrays, side by side
    if (g_backend == FS_BACKEND_HOST && !health) // world w's last line, w + 1's first
      for (int w = 0; w + 1 < N; w++) {
        uintptr_t last = (uintptr_t)v.data + (uintptr_t)((w * v.strides[0] + world) * es) - 1;
        uintptr_t next = (uintptr_t)v.data + (uintptr_t)((w + 1) * v.strides[0] * es);
        CHECK_MSG(last / 64 < next / 64, "view %s: worlds %d and %d share a cache line", names[k],
                  w, w + 1);
      }
    else
      CHECK_MSG(v.strides[0] == world, "view %s: worlds apart on %s", names[k],
                fs_backend_name(g_backend));
    if (v.memory != FS_MEMORY_HOST) continue;
    char* copy = malloc((size_t)(N * world * es));
    CHECK(fs_batch_read(b, names[k], copy, (size_t)(N * world * es), &err) == FS_OK);
    for (int w = 0; w < N; w++)
      CHECK_MSG(!memcmp(copy + w * world * es, (char*)v.data + w * v.strides[0] * es,
                        (size_t)(world * es)),
                "view %s: fs_batch_read's world %d is not the view's", names[k], w);
    free(copy);
  }
  // a write in place at world 2's stride, read back by fs_batch_read
  fsView v;
  CHECK(fs_batch_view(b, "ctrl", &v, &err) == FS_OK);
  if (v.memory == FS_MEMORY_HOST) {
    int64_t i = 2 * v.strides[0] + 1;
    if (v.dtype == FS_DTYPE_F64)
      ((double*)v.data)[i] = 0.625;
    else
      ((float*)v.data)[i] = 0.625f;
    double* ctrl = fs_test_read_view(b, "ctrl", &v);
    CHECK(ctrl && ctrl[2 * g_m->nu + 1] == 0.625 && ctrl[g_m->nu + 1] != 0.625);
    free(ctrl);
  }
  fs_batch_close(b);
}

// A view first asked after steps (host, cuda): a field the step kept on-chip until then
// reads NaN (ints -1) until the next step, never a stale or zero value; a field it kept in
// memory reads what the last step left, as a batch that asked for it before stepping. One
// step later both batches agree to the bit. The GPU's plan (cuda; the host under
// FLYSIM_ONCHIP_BYTES) keeps some of these fields on-chip; the host's own plan none (every
// view's field stays in memory), so there every late view reads the last step's values.
static void test_view_asked_late(int gpu_plan) {
  if (g_backend == FS_BACKEND_CPU) return; // MuJoCo's mjData: no on-chip plan
  if (g_backend == FS_BACKEND_HOST && gpu_plan) setenv("FLYSIM_ONCHIP_BYTES", "848", 1);
  const char* names[] = {"xmat",          "cvel",         "cinert",          "subtree_com",
                         "qfrc_bias",     "qfrc_passive", "actuator_length", "actuator_velocity",
                         "qfrc_actuator", "qacc",         "geom_xmat",       "site_xmat"};
  enum { NNAME = sizeof names / sizeof *names, N = 2 };
  fsError err;
  fsBatch early = open_n(g_m, N), late = open_n(g_m, N);
  if (g_backend == FS_BACKEND_HOST && gpu_plan) unsetenv("FLYSIM_ONCHIP_BYTES");
  fsView v;
  for (int k = 0; k < NNAME; k++) CHECK(fs_batch_view(early, names[k], &v, &err) == FS_OK);
  CHECK(fs_batch_reset(early, NULL, key_neutral(), &err) == FS_OK);
  CHECK(fs_batch_reset(late, NULL, key_neutral(), &err) == FS_OK);
  CHECK(fs_batch_step(early, 3, &err) == FS_OK && fs_batch_step(late, 3, &err) == FS_OK);
  int nan_fields = 0;
  for (int k = 0; k < NNAME; k++) {
    double* want = fs_test_read_view(early, names[k], &v);
    double* got = fs_test_read_view(late, names[k], &v);
    size_t n = (size_t)(v.shape[0] * v.shape[1] * v.shape[2]), nnan = 0, same = 0;
    for (size_t i = 0; i < n; i++) {
      nnan += isnan(got[i]);
      same += got[i] == want[i];
    }
    CHECK_MSG(nnan == n || same == n,
              "%s asked after steps: %zu of %zu values NaN, %zu as the batch that asked first",
              names[k], nnan, n, same);
    nan_fields += nnan == n && n > 0;
    free(want);
    free(got);
  }
  if (gpu_plan)
    CHECK_MSG(nan_fields > 0, "no field was on-chip: the check above tests nothing here");
  else
    CHECK_MSG(nan_fields == 0, "the host's plan kept %d views' fields on-chip", nan_fields);
  CHECK(fs_batch_step(early, 1, &err) == FS_OK && fs_batch_step(late, 1, &err) == FS_OK);
  for (int k = 0; k < NNAME; k++) {
    double* want = fs_test_read_view(early, names[k], &v);
    double* got = fs_test_read_view(late, names[k], &v);
    size_t n = (size_t)(v.shape[0] * v.shape[1] * v.shape[2]);
    CHECK_MSG(!memcmp(want, got, n * sizeof(double)), "%s a step after its view", names[k]);
    free(want);
    free(got);
  }
  printf("views asked after steps (%s plan): %d of %d fields read NaN until the next step\n",
         gpu_plan ? "the GPU's" : "the host's", nan_fields, NNAME);
  fs_batch_close(early);
  fs_batch_close(late);
}

// fs_batch_forward of states written through the views (each world its own, off the
// keyframe, moving): the derived quantities as MuJoCo's mj_forward of the same state (cpu
// to the bit; host float64 within the solver's last bits, float32 within its rounding),
// the state unchanged, and the steps after it those of a batch that never ran it. cuda:
// refused with the fix.
static void test_forward(void) {
  const char* names[] = {"xpos",          "xmat",           "qfrc_bias", "qfrc_passive",
                         "qfrc_actuator", "actuator_force", "qacc",      "site_xpos"};
  enum { NNAME = sizeof names / sizeof *names, N = 3 };
  fsError err;
  fsBatch b = open_n(g_m, N), twin = open_n(g_m, N);
  fsView v;
  for (int k = 0; k < NNAME; k++) CHECK(fs_batch_view(b, names[k], &v, &err) == FS_OK);
  CHECK(fs_batch_reset(b, NULL, key_neutral(), &err) == FS_OK);
  CHECK(fs_batch_reset(twin, NULL, key_neutral(), &err) == FS_OK);
  if (g_backend == FS_BACKEND_CUDA) {
    CHECK(fs_batch_forward(b, &err) == FS_ERR_ARGUMENT);
    CHECK_CONTAINS(err.msg, "fix: the host or cpu backend");
    fs_batch_close(b);
    fs_batch_close(twin);
    return;
  }
  int nq = (int)g_m->nq, nv = (int)g_m->nv, nu = (int)g_m->nu;
  double* qpos = fs_test_read_view(b, "qpos", &v);
  double* qvel = calloc((size_t)N * nv, sizeof(double));
  double* ctrl = calloc((size_t)N * nu, sizeof(double));
  for (int w = 0; w < N; w++) {
    for (int i = 7; i < nq; i++) qpos[(size_t)w * nq + i] += 0.05 * (w + 1) * sin(i + w);
    qpos[(size_t)w * nq + 2] -= 0.01 * w; // world 2 lower: its feet in the floor's margin
    for (int i = 0; i < nv; i++) qvel[(size_t)w * nv + i] = 0.3 * cos(2.0 * i + w);
    controller(g_m, qpos + (size_t)w * nq, 0.01 * w, w, ctrl + (size_t)w * nu);
  }
  fsBatch both[2] = {b, twin};
  for (int k = 0; k < 2; k++) {
    fs_test_write_view(both[k], "qpos", qpos, (size_t)N * nq);
    fs_test_write_view(both[k], "qvel", qvel, (size_t)N * nv);
    fs_test_write_view(both[k], "ctrl", ctrl, (size_t)N * nu);
  }
  double* q0 = fs_test_read_view(b, "qpos", &v); // the state as the batch holds it
  double* v0 = fs_test_read_view(b, "qvel", &v);
  CHECK(fs_batch_forward(b, &err) == FS_OK);
  double* q1 = fs_test_read_view(b, "qpos", &v);
  double* v1 = fs_test_read_view(b, "qvel", &v);
  CHECK_MSG(!memcmp(q0, q1, sizeof(double) * (size_t)N * nq) &&
                !memcmp(v0, v1, sizeof(double) * (size_t)N * nv),
            "fs_batch_forward changed the state");
  double* c0 = fs_test_read_view(b, "ctrl", &v);
  mjData* d = mj_makeData(g_m);
  double worst = 0, bound = is_f32() ? 1e-3 : g_backend == FS_BACKEND_CPU ? 0.0 : 1e-9;
  for (int k = 0; k < NNAME; k++) {
    double* got = fs_test_read_view(b, names[k], &v);
    size_t per = (size_t)(v.shape[1] * v.shape[2]);
    for (int w = 0; w < N && got; w++) {
      mj_resetDataKeyframe(g_m, d, key_neutral());
      memcpy(d->qpos, q0 + (size_t)w * nq, sizeof(double) * (size_t)nq);
      memcpy(d->qvel, v0 + (size_t)w * nv, sizeof(double) * (size_t)nv);
      memcpy(d->ctrl, c0 + (size_t)w * nu, sizeof(double) * (size_t)nu);
      mj_forward(g_m, d);
      const double* want = !strcmp(names[k], "xpos")             ? d->xpos
                           : !strcmp(names[k], "xmat")           ? d->xmat
                           : !strcmp(names[k], "qfrc_bias")      ? d->qfrc_bias
                           : !strcmp(names[k], "qfrc_passive")   ? d->qfrc_passive
                           : !strcmp(names[k], "qfrc_actuator")  ? d->qfrc_actuator
                           : !strcmp(names[k], "actuator_force") ? d->actuator_force
                           : !strcmp(names[k], "qacc")           ? d->qacc
                                                                 : d->site_xpos;
      for (size_t i = 0; i < per; i++) {
        double e = fabs(got[w * per + i] - want[i]) / (1 + fabs(want[i]));
        CHECK_MSG(e <= bound, "%s world %d [%zu]: %.17g, mj_forward %.17g", names[k], w, i,
                  got[w * per + i], want[i]);
        if (e > worst) worst = e;
      }
    }
    free(got);
  }
  printf("forward: %d worlds, %d fields against mj_forward: largest error %.3g (bound %g), "
         "%d contacts in world 2\n",
         N, NNAME, worst, bound, (int)d->ncon);
  CHECK_MSG(d->ncon > 0, "world 2 makes no contact: the constraint solve goes untested");
  // the steps after it: as the twin's, which never ran it
  CHECK(fs_batch_step(b, 5, &err) == FS_OK && fs_batch_step(twin, 5, &err) == FS_OK);
  double* qa = fs_test_read_view(b, "qpos", &v);
  double* qb = fs_test_read_view(twin, "qpos", &v);
  CHECK_MSG(!memcmp(qa, qb, sizeof(double) * (size_t)N * nq),
            "5 steps after fs_batch_forward differ from a batch that never ran it");
  mj_deleteData(d);
  free(qa), free(qb), free(q0), free(q1), free(v0), free(v1), free(c0);
  free(qpos), free(qvel), free(ctrl);
  fs_batch_close(b);
  fs_batch_close(twin);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_batch cpu | host f32|f64 | cuda f32|f64\n");
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
  make_model(fs_test_tmpdir("batch"));
  test_views_and_misuse();
  test_view_strides();
  test_view_asked_late(1);
  if (g_backend == FS_BACKEND_HOST) test_view_asked_late(0);
  test_closed_loop();
  test_masked_reset();
  test_set_param();
  test_ctrl_sequence();
  test_ctrl_sequence_replaced();
  test_recording();
  test_forward();
#ifdef FS_TEST_CUDART
  if (g_backend == FS_BACKEND_CUDA) test_device_forms();
#endif
  test_health();
  mj_deleteModel(g_m);
  char name[64];
  snprintf(name, sizeof name, "test_batch %s %s", argv[1], argc > 2 ? argv[2] : "");
  return fs_test_finish(name);
}
