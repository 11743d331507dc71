// step_calls: a controller's one-step calls against the block rate, through the public API.
// The same batch (NeuroMechFly standing at its keyframe, adhesion on, settled 500 steps as
// replay settles) steps S steps as one call, fs_batch_step(b, S), and as S calls of
// fs_batch_step(b, 1), the two taking turns round by round (the order swapped every
// round); each round's ratio, one-step world-steps/s over the block's, pairs two runs a
// moment apart, so that a shared machine's drift falls on both. Prints per backend and
// number of worlds the medians over the rounds: wall-clock world-steps/s of each, their
// paired ratio, and CPU-seconds (the process's, all threads) per world-step of each (a
// spinning thread costs CPU time that wall time does not show).
//
//   step_calls [--model PATH] [--backends cpu,host] [--precision f32|f64] [--worlds 1,8,64,256]
//              [--threads T] [--world-steps W] [--rounds R] [--csv PATH] [--label NAME]
//
// S = max(4, W / N) (W 4000 by default: a round of a few tenths of a second); --threads 0
// (default): the batch's default, one per core, at most N.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mujoco/mujoco.h>

#include <flysim/flysim.h>

#include "common/inputs/inputs.h"
#include "common/inputs/model.h"
#include "bench/sweep.h" // fs_median

enum { MAX_LIST = 16, MAX_ROUNDS = 101, SETTLE = 500 };

typedef struct Args {
  char model[4096], csv[4096], label[128];
  int backend[2], nbackend, f64;
  int worlds[MAX_LIST], nworlds;
  int threads, world_steps, rounds;
} Args;

static int usage(void) {
  fprintf(stderr, "usage: step_calls [--model PATH] [--backends cpu,host] [--precision f32|f64] "
                  "[--worlds 1,8,64,256] [--threads T] [--world-steps W] [--rounds R] "
                  "[--csv PATH] [--label NAME]\n");
  return -1;
}

static int parse(int argc, char** argv, Args* a) {
  memset(a, 0, sizeof *a);
  snprintf(a->model, sizeof a->model, "%s/mesh.mjb", fs_assets_dir());
  snprintf(a->label, sizeof a->label, "local");
  a->backend[0] = FS_BACKEND_CPU, a->backend[1] = FS_BACKEND_HOST, a->nbackend = 2;
  const int worlds[4] = {1, 8, 64, 256};
  memcpy(a->worlds, worlds, sizeof worlds);
  a->nworlds = 4;
  a->world_steps = 4000;
  a->rounds = 7;
  for (int i = 1; i < argc; i++) {
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return usage();
    if (!strcmp(argv[i], "--model"))
      snprintf(a->model, sizeof a->model, "%s", v);
    else if (!strcmp(argv[i], "--csv"))
      snprintf(a->csv, sizeof a->csv, "%s", v);
    else if (!strcmp(argv[i], "--label"))
      snprintf(a->label, sizeof a->label, "%s", v);
    else if (!strcmp(argv[i], "--precision") && (!strcmp(v, "f32") || !strcmp(v, "f64")))
      a->f64 = !strcmp(v, "f64");
    else if (!strcmp(argv[i], "--threads"))
      a->threads = atoi(v);
    else if (!strcmp(argv[i], "--world-steps"))
      a->world_steps = atoi(v);
    else if (!strcmp(argv[i], "--rounds"))
      a->rounds = atoi(v);
    else if (!strcmp(argv[i], "--backends") || !strcmp(argv[i], "--worlds")) {
      int bk = !strcmp(argv[i], "--backends"), *out = bk ? a->backend : a->worlds, n = 0;
      char buf[256], *save = NULL;
      snprintf(buf, sizeof buf, "%s", v);
      for (char* t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == (bk ? 2 : MAX_LIST)) return usage();
        if (bk && strcmp(t, "cpu") && strcmp(t, "host")) return usage();
        out[n++] = bk ? (!strcmp(t, "cpu") ? FS_BACKEND_CPU : FS_BACKEND_HOST) : atoi(t);
        if (!bk && out[n - 1] < 1) return usage();
      }
      *(bk ? &a->nbackend : &a->nworlds) = n;
    } else
      return usage();
    i++;
  }
  if (a->world_steps < 1 || a->rounds < 1 || a->rounds > MAX_ROUNDS || a->threads < 0)
    return usage();
  return 0;
}

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// The batch at the model's "neutral" keyframe (else its first, else qpos0), body-transmission
// actuators (adhesion) at 1, settled.
static int open_settled(const mjModel* m, const Args* a, fsBackendKind kind, int N, fsBatch* b,
                        fsError* err) {
  fsBatchOptions o = fs_batch_default_options();
  o.backend = kind;
  o.precision = kind == FS_BACKEND_CPU ? FS_PRECISION_DEFAULT
                : a->f64               ? FS_PRECISION_F64
                                       : FS_PRECISION_F32;
  o.nworld = N;
  o.nthread = a->threads;
  if (fs_batch_open(m, &o, b, err)) return -1;
  int key = mj_name2id(m, mjOBJ_KEY, "neutral");
  if (key < 0) key = m->nkey ? 0 : -1;
  fsView ctrl;
  if (fs_batch_reset(*b, NULL, key, err) || fs_batch_view(*b, "ctrl", &ctrl, err)) return -1;
  for (int w = 0; w < N; w++)
    for (int u = 0; u < m->nu; u++)
      if (m->actuator_trntype[u] == mjTRN_BODY) {
        size_t i = (size_t)w * (size_t)ctrl.strides[0] + (size_t)u;
        if (ctrl.dtype == FS_DTYPE_F32)
          ((float*)ctrl.data)[i] = 1.0f;
        else
          ((double*)ctrl.data)[i] = 1.0;
      }
  return fs_batch_step(*b, SETTLE, err) ? -1 : 0;
}

// S steps as one call (ones 0) or as S calls of one step: wall and CPU seconds.
static int run(fsBatch b, int S, int ones, double* wall, double* cpu, fsError* err) {
  double w0 = wall_s(), c0 = cpu_s();
  if (ones) {
    for (int s = 0; s < S; s++)
      if (fs_batch_step(b, 1, err)) return -1;
  } else if (fs_batch_step(b, S, err))
    return -1;
  *wall = wall_s() - w0;
  *cpu = cpu_s() - c0;
  return 0;
}

static int point(const mjModel* m, const Args* a, fsBackendKind kind, int N, FILE* csv) {
  fsBatch b;
  fsError err;
  if (open_settled(m, a, kind, N, &b, &err)) {
    fprintf(stderr, "step_calls: %s\n", err.msg);
    return -1;
  }
  fsBatchInfo info;
  fs_batch_info(b, &info, &err);
  int S = a->world_steps / N > 4 ? a->world_steps / N : 4, R = a->rounds;
  double block[MAX_ROUNDS], one[MAX_ROUNDS], ratio[MAX_ROUNDS], cblock[MAX_ROUNDS],
      cone[MAX_ROUNDS];
  for (int r = 0; r < R; r++) {
    double wb, cb, wo, co;
    int first = r % 2; // 0: the block first
    if (run(b, S, first, first ? &wo : &wb, first ? &co : &cb, &err) ||
        run(b, S, !first, first ? &wb : &wo, first ? &cb : &co, &err)) {
      fprintf(stderr, "step_calls: %s\n", err.msg);
      fs_batch_close(b);
      return -1;
    }
    block[r] = (double)N * S / wb, one[r] = (double)N * S / wo, ratio[r] = one[r] / block[r];
    cblock[r] = cb / ((double)N * S), cone[r] = co / ((double)N * S);
  }
  const char* name = kind == FS_BACKEND_CPU ? "cpu" : a->f64 ? "host:f64" : "host:f32";
  double mb = fs_median(block, R), mo = fs_median(one, R), mr = fs_median(ratio, R);
  double mcb = fs_median(cblock, R), mco = fs_median(cone, R);
  printf("%-9s %6d %7d %5d %12.5g %12.5g %7.3f %10.2f %10.2f\n", name, N, info.nthread, S, mb, mo,
         mr, mcb * 1e6, mco * 1e6);
  fflush(stdout);
  if (csv)
    fprintf(csv, "%s,%s,%d,%d,%d,%d,%.6g,%.6g,%.5f,%.5g,%.5g\n", a->label, name, N, info.nthread, S,
            R, mb, mo, mr, mcb * 1e6, mco * 1e6);
  fs_batch_close(b);
  return 0;
}

int main(int argc, char** argv) {
  Args a;
  if (parse(argc, argv, &a)) return 2;
  fsError err;
  mjModel* m = fs_model_load(a.model, &err);
  if (!m) {
    fprintf(stderr, "step_calls: %s\n", err.msg);
    return 1;
  }
  FILE* csv = NULL;
  if (a.csv[0]) {
    FILE* probe = fopen(a.csv, "r");
    int fresh = !probe;
    if (probe) fclose(probe);
    if (!(csv = fopen(a.csv, "a"))) {
      perror(a.csv);
      return 1;
    }
    if (fresh)
      fprintf(csv, "label,stepper,worlds,threads,steps,rounds,block_wsps,one_step_wsps,"
                   "one_over_block,block_cpu_us_per_world_step,one_step_cpu_us_per_world_step\n");
  }
  printf("%s: %d rounds a point, each S steps as one call and as S calls of one step\n", a.model,
         a.rounds);
  printf("%-9s %6s %7s %5s %12s %12s %7s %10s %10s\n", "stepper", "worlds", "threads", "S",
         "block ws/s", "1-step ws/s", "1/block", "block cpu", "1-step cpu");
  printf("%-9s %6s %7s %5s %12s %12s %7s %10s %10s\n", "", "", "", "", "(median)", "(median)",
         "(paired)", "us/ws", "us/ws");
  int rc = 0;
  for (int i = 0; i < a.nworlds && !rc; i++)
    for (int k = 0; k < a.nbackend && !rc; k++)
      rc = point(m, &a, (fsBackendKind)a.backend[k], a.worlds[i], csv);
  if (csv) fclose(csv);
  mj_deleteModel(m);
  return rc ? 1 : 0;
}
