// A closed-loop tracker over many worlds: every step, each world's controller reads its
// joint angles and writes its position actuators' targets, a slice of a recorded clip
// corrected by the tracking error (gain: 0 leaves the actuators' own PD to track the clip,
// as FlyGym's replay does; more pushes harder against the error).
//
//   pd_tracker MODEL CLIP.h5 [--backend cpu|host|cuda] [--precision f32|f64] [--worlds N]
//              [--steps S] [--warmup W] [--gain K] [--out FILE]
//
// CLIP.h5 holds /targets (T x A, radians, at the model's timestep) and /dof_names (A): each
// name is a joint's, and the position actuator on that joint follows its column (flysim's
// exported walking_clip.h5 and NeuroMechFly's mesh.mjb are such a pair). World w replays
// rows (w mod floor(T / S)) x S onwards, after resetting to the keyframe "neutral" with
// adhesion on and W warm-up steps: what `flysim replay` does, so with gain 0 the final qpos
// (written to FILE, N x nq float64) is flysim replay's.
#include <flysim/flysim.h>

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI // (not in strict ISO C)
#define M_PI 3.14159265358979323846
#endif

typedef struct Clip {
  int nrow, ncol;
  double* value; // (T x A)
  int* actuator; // (A) the position actuator of each column
  int* qposadr;  // (A) its joint's qpos
} Clip;

static int fail(const char* what) {
  fprintf(stderr, "pd_tracker: %s\n", what);
  return 1;
}

// The actuator driving joint `name` (exactly, or after a "prefix/"), or -1.
static int actuator_of(const mjModel* m, const char* name) {
  for (int a = 0; a < m->nu; a++) {
    if (m->actuator_trntype[a] != mjTRN_JOINT) continue;
    const char* j = mj_id2name(m, mjOBJ_JOINT, m->actuator_trnid[2 * a]);
    const char* tail = j ? strrchr(j, '/') : NULL;
    if (j && (!strcmp(j, name) || (tail && !strcmp(tail + 1, name)))) return a;
  }
  return -1;
}

static int load_clip(const char* path, const mjModel* m, Clip* c) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return fail("cannot open the clip");
  hid_t d = H5Dopen2(f, "targets", H5P_DEFAULT), s = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(s, dims, NULL);
  c->nrow = (int)dims[0];
  c->ncol = (int)dims[1];
  c->value = malloc(sizeof(double) * dims[0] * dims[1]);
  int rc = H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, c->value) < 0;
  H5Sclose(s);
  H5Dclose(d);
  char** names = calloc((size_t)c->ncol, sizeof(char*));
  d = H5Dopen2(f, "dof_names", H5P_DEFAULT);
  hid_t ftype = H5Dget_type(d), str = H5Tcopy(H5T_C_S1); // variable-length, its charset
  H5Tset_size(str, H5T_VARIABLE);
  H5Tset_cset(str, H5Tget_cset(ftype));
  H5Tclose(ftype);
  rc |= H5Dread(d, str, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) < 0;
  H5Dclose(d);
  H5Tclose(str);
  H5Fclose(f);
  if (rc) return fail("cannot read /targets and /dof_names");
  c->actuator = malloc(sizeof(int) * (size_t)c->ncol);
  c->qposadr = malloc(sizeof(int) * (size_t)c->ncol);
  for (int k = 0; k < c->ncol && !rc; k++) {
    c->actuator[k] = actuator_of(m, names[k]);
    if (c->actuator[k] < 0) {
      fprintf(stderr, "pd_tracker: no position actuator drives joint '%s'\n", names[k]);
      rc = 1;
    } else {
      c->qposadr[k] = m->jnt_qposadr[m->actuator_trnid[2 * c->actuator[k]]];
    }
    free(names[k]);
  }
  free(names);
  return rc;
}

// A view's element i as double, and writing one (the batch's real).
static double get(const fsView* v, const void* data, long i) {
  return v->dtype == FS_DTYPE_F64 ? ((const double*)data)[i] : ((const float*)data)[i];
}
static void set(const fsView* v, void* data, long i, double x) {
  if (v->dtype == FS_DTYPE_F64)
    ((double*)data)[i] = x;
  else
    ((float*)data)[i] = (float)x;
}

int main(int argc, char** argv) {
  if (argc < 3)
    return fail("usage: pd_tracker MODEL CLIP.h5 [--backend cpu|host|cuda] "
                "[--precision f32|f64] [--worlds N] [--steps S] [--warmup W] "
                "[--gain K] [--out FILE]");
  fsBatchOptions opt = fs_batch_default_options();
  opt.nworld = 256;
  int S = 1000, W = 500;
  double gain = 0;
  const char* out = NULL;
  for (int i = 3; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--backend"))
      opt.backend = !strcmp(v, "host")   ? FS_BACKEND_HOST
                    : !strcmp(v, "cuda") ? FS_BACKEND_CUDA
                                         : FS_BACKEND_CPU;
    else if (!strcmp(k, "--precision"))
      opt.precision = !strcmp(v, "f64") ? FS_PRECISION_F64 : FS_PRECISION_F32;
    else if (!strcmp(k, "--worlds"))
      opt.nworld = atoi(v);
    else if (!strcmp(k, "--steps"))
      S = atoi(v);
    else if (!strcmp(k, "--warmup"))
      W = atoi(v);
    else if (!strcmp(k, "--gain"))
      gain = atof(v);
    else if (!strcmp(k, "--out"))
      out = v;
    else
      return fail("unknown option");
  }
  if (opt.backend == FS_BACKEND_CPU) opt.precision = FS_PRECISION_F64;
  char msg[1024] = "";
  const char* model = argv[1];
  size_t len = strlen(model);
  mjModel* m = len > 4 && !strcmp(model + len - 4, ".mjb")
                   ? mj_loadModel(model, NULL)
                   : mj_loadXML(model, NULL, msg, sizeof msg);
  if (!m) return fail(msg[0] ? msg : "cannot load the model");
  Clip clip;
  if (load_clip(argv[2], m, &clip)) return 1;
  if (S > clip.nrow) return fail("--steps is longer than the clip");

  fsBatch b;
  fsError err;
  opt.model_name = model;
  if (fs_batch_open(m, &opt, &b, &err)) return fail(err.msg);
  const int N = opt.nworld, nq = (int)m->nq, nu = (int)m->nu;
  if (fs_batch_reset(b, NULL, mj_name2id(m, mjOBJ_KEY, "neutral"), &err)) return fail(err.msg);
  // The views, and host copies of them when they live on a GPU.
  fsView vq, vc;
  if (fs_batch_view(b, "qpos", &vq, &err) || fs_batch_view(b, "ctrl", &vc, &err))
    return fail(err.msg);
  size_t es = vq.dtype == FS_DTYPE_F64 ? sizeof(double) : sizeof(float);
  int device = vq.memory == FS_MEMORY_DEVICE;
  void* q = device ? malloc(es * N * nq) : vq.data;
  void* u = device ? malloc(es * N * nu) : vc.data;
  // a world's first element: the host copies' are C-contiguous, a view's strides[0] apart
  const long q_stride = device ? nq : (long)vq.strides[0],
             u_stride = device ? nu : (long)vc.strides[0];
  if (device && fs_batch_read(b, "ctrl", u, es * N * nu, &err)) return fail(err.msg);
  for (int w = 0; w < N; w++) // adhesion on: the actuators with a body transmission
    for (int a = 0; a < nu; a++)
      if (m->actuator_trntype[a] == mjTRN_BODY) set(&vc, u, w * u_stride + a, 1.0);
  if (device && fs_batch_write(b, "ctrl", u, es * N * nu, &err)) return fail(err.msg);
  if (fs_batch_step(b, W, &err)) return fail(err.msg);

  double sq = 0;
  const int slices = clip.nrow / S;
  for (int s = 0; s < S; s++) {
    if (device && fs_batch_read(b, "qpos", q, es * N * nq, &err)) return fail(err.msg);
    for (int w = 0; w < N; w++) {
      const double* row = clip.value + ((long)(w % slices) * S + s) * clip.ncol;
      for (int k = 0; k < clip.ncol; k++) {
        double target = row[k], e = target - get(&vq, q, w * q_stride + clip.qposadr[k]);
        sq += e * e;
        set(&vc, u, w * u_stride + clip.actuator[k], gain != 0 ? target + gain * e : target);
      }
    }
    if (device && fs_batch_write(b, "ctrl", u, es * N * nu, &err)) return fail(err.msg);
    if (fs_batch_step(b, 1, &err)) return fail(err.msg);
  }
  if (fs_batch_sync(b, &err)) return fail(err.msg);
  if (device && fs_batch_read(b, "qpos", q, es * N * nq, &err)) return fail(err.msg);
  fsWorldHealth* h = calloc((size_t)N, sizeof *h);
  int bad = 0;
  if (fs_batch_health(b, h, &err)) return fail(err.msg);
  for (int w = 0; w < N; w++) bad += h[w].problems != 0;
  printf("pd_tracker: %d worlds x %d steps on %s (%s), gain %g: RMS tracking error %.3f deg, "
         "%d problem worlds\n",
         N, S, fs_backend_name(opt.backend), es == 8 ? "f64" : "f32", gain,
         sqrt(sq / ((double)N * S * clip.ncol)) * 180 / M_PI, bad);
  if (out) {
    FILE* f = fopen(out, "wb");
    for (long i = 0; f && i < (long)N * nq; i++) {
      double x = get(&vq, q, i / nq * q_stride + i % nq);
      fwrite(&x, sizeof x, 1, f);
    }
    if (!f || fclose(f)) return fail("cannot write --out");
  }
  if (device) free(q), free(u);
  free(h);
  free(clip.value);
  free(clip.actuator);
  free(clip.qposadr);
  fs_batch_close(b);
  mj_deleteModel(m);
  return 0;
}
