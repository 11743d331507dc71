// A central pattern generator walking NeuroMechFly in many worlds: six oscillators, one a
// leg, coupled in a tripod (left front, right middle and left hind against the other
// three); each leg's swing and stance move its coxa, femur and tibia about the keyframe
// pose, and its adhesion actuator grips in stance and lets go in swing. Every world walks
// at its own frequency; after the run each world's thorax has moved by what its gait gave.
//
//   cpg MODEL [--backend cpu|host|cuda] [--precision f32|f64] [--worlds N] [--seconds T]
//
// MODEL: NeuroMechFly as flysim exports it (assets/mesh.mjb): joints named
// "<leg>_coxa-...", adhesion actuators "<leg>_tarsus5-adhesion", a keyframe "neutral".
#include <flysim/flysim.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI // (not in strict ISO C)
#define M_PI 3.14159265358979323846
#endif

static const char* const kLeg[6] = {"lf", "lm", "lh", "rf", "rm", "rh"};
static const double kPhase[6] = {0, M_PI, 0, M_PI, 0, M_PI}; // tripods: lf rm lh | rf lm rh

// The leg of actuator a (0-5), and which of its joints it drives (0: coxa pitch, 1: femur
// pitch, 2: tibia pitch, 3: adhesion), or -1.
static int classify(const mjModel* m, int a, int* leg) {
  const char* name = mj_id2name(m, mjOBJ_ACTUATOR, a);
  if (!name) return -1;
  for (*leg = 0; *leg < 6; (*leg)++) {
    char key[64];
    snprintf(key, sizeof key, "%s_tarsus5-adhesion", kLeg[*leg]);
    if (strstr(name, key)) return 3;
    snprintf(key, sizeof key, "-%s_coxa-pitch", kLeg[*leg]);
    if (strstr(name, key)) return 0;
    snprintf(key, sizeof key, "-%s_trochanterfemur-pitch", kLeg[*leg]);
    if (strstr(name, key)) return 1;
    snprintf(key, sizeof key, "-%s_tibia-pitch", kLeg[*leg]);
    if (strstr(name, key)) return 2;
  }
  return -1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: cpg MODEL [--backend cpu|host|cuda] [--precision f32|f64] "
                    "[--worlds N] [--seconds T]\n");
    return 2;
  }
  fsBatchOptions opt = fs_batch_default_options();
  opt.nworld = 256;
  opt.model_name = argv[1];
  double seconds = 0.2;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--backend"))
      opt.backend = !strcmp(argv[i + 1], "host")   ? FS_BACKEND_HOST
                    : !strcmp(argv[i + 1], "cuda") ? FS_BACKEND_CUDA
                                                   : FS_BACKEND_CPU;
    else if (!strcmp(argv[i], "--precision"))
      opt.precision = !strcmp(argv[i + 1], "f64") ? FS_PRECISION_F64 : FS_PRECISION_F32;
    else if (!strcmp(argv[i], "--worlds"))
      opt.nworld = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seconds"))
      seconds = atof(argv[i + 1]);
  }
  if (opt.backend == FS_BACKEND_CPU) opt.precision = FS_PRECISION_F64;
  char msg[1024] = "";
  size_t len = strlen(argv[1]);
  mjModel* m = len > 4 && !strcmp(argv[1] + len - 4, ".mjb")
                   ? mj_loadModel(argv[1], NULL)
                   : mj_loadXML(argv[1], NULL, msg, sizeof msg);
  int key = m ? mj_name2id(m, mjOBJ_KEY, "neutral") : -1;
  if (!m || key < 0) {
    fprintf(stderr, "cpg: %s: %s\n", argv[1], m ? "no keyframe 'neutral'" : msg);
    return 1;
  }
  const int N = opt.nworld, nu = (int)m->nu;
  int* leg = calloc((size_t)nu, sizeof(int));
  int* role = calloc((size_t)nu, sizeof(int));
  for (int a = 0; a < nu; a++) role[a] = classify(m, a, &leg[a]);

  fsBatch b;
  fsError err;
  if (fs_batch_open(m, &opt, &b, &err) || fs_batch_reset(b, NULL, key, &err)) {
    fprintf(stderr, "cpg: %s\n", err.msg);
    return 1;
  }
  // Controls are written through fs_batch_write (any backend, the batch's real).
  fsView vc;
  fs_batch_view(b, "ctrl", &vc, &err);
  size_t es = vc.dtype == FS_DTYPE_F64 ? sizeof(double) : sizeof(float);
  void* ctrl = malloc(es * N * nu);
  const double* pose = m->key_ctrl + (size_t)key * nu; // the keyframe's targets
  const double dt = m->opt.timestep, amp[3] = {0.35, 0.5, 0.6};
  const int every = 10; // the CPG updates at 1 kHz, the physics at 10 kHz
  int steps = (int)(seconds / dt) / every * every, rc = 0;
  for (int s = 0; s < steps && !rc; s += every) {
    for (int w = 0; w < N; w++) {
      double freq = 8.0 + 4.0 * w / (N > 1 ? N - 1 : 1); // Hz, each world its own
      for (int a = 0; a < nu; a++) {
        double u = pose[a];
        if (role[a] >= 0) {
          double phi = 2 * M_PI * freq * s * dt + kPhase[leg[a]];
          u = role[a] == 3 ? (sin(phi) < 0) // adhesion in stance
                           : pose[a] + amp[role[a]] * (role[a] == 0 ? sin(phi) : cos(phi));
        }
        if (es == sizeof(double))
          ((double*)ctrl)[w * nu + a] = u;
        else
          ((float*)ctrl)[w * nu + a] = (float)u;
      }
    }
    rc = fs_batch_write(b, "ctrl", ctrl, es * N * nu, &err) || fs_batch_step(b, every, &err);
  }
  if (!rc) rc = fs_batch_sync(b, &err);
  fsWorldHealth* h = calloc((size_t)N, sizeof *h);
  void* xpos = malloc(es * 3 * N * m->nbody);
  if (!rc)
    rc = fs_batch_health(b, h, &err) || fs_batch_read(b, "xpos", xpos, es * 3 * N * m->nbody, &err);
  if (rc) {
    fprintf(stderr, "cpg: %s\n", err.msg);
    return 1;
  }
  // the thorax (body 1) of the slowest and the fastest world, and how many stayed healthy
  int ok = 0;
  for (int w = 0; w < N; w++) ok += h[w].problems == 0;
  for (int k = 0; k < 2; k++) {
    int w = k ? N - 1 : 0;
    double p[3];
    for (int i = 0; i < 3; i++) {
      long j = ((long)w * m->nbody + 1) * 3 + i;
      p[i] = es == sizeof(double) ? ((double*)xpos)[j] : ((float*)xpos)[j];
    }
    printf("cpg: world %d (%.1f Hz): thorax at (%.3f, %.3f, %.3f) after %.3g s\n", w,
           8.0 + 4.0 * w / (N > 1 ? N - 1 : 1), p[0], p[1], p[2], steps * dt);
  }
  printf("cpg: %d of %d worlds healthy on %s\n", ok, N, fs_backend_name(opt.backend));
  free(xpos);
  free(ctrl);
  free(h);
  free(leg);
  free(role);
  fs_batch_close(b);
  mj_deleteModel(m);
  return ok == N ? 0 : 1;
}
