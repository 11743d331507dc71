// CPU throughput: flysim's stepper against a bare loop of mj_step on the same
// model and controls (the harness's overhead), and scaling with threads.
//
//   bench_cpu [--model PATH] [--targets PATH] [--steps N] [--repeats R]
//             [--max-threads T] [--worlds-per-thread K] [--csv PATH] [--label NAME]
//             [--only bare|flysim]
//
// --only runs one loop once (1 world, 1 thread, after the warm-up) and nothing
// else: bench/cpu/overhead_callgrind.sh counts its instructions under callgrind, a
// measure of the harness's overhead that the machine's load cannot blur.
//
// Prints a table; with --csv appends rows a script can read (header written if the
// file is new). Both loops start from the same warmed-up state and apply the same
// controls, so they do the same work: the bench checks that their final states are
// bit-identical before reporting.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sys/clock.h"
#include "common/inputs/model.h"
#include "common/base/mujoco_hooks.h"
#include "common/replay/replay.h"
#include "common/inputs/targets.h"
#include "bench/sweep.h" // fs_median

typedef struct Args {
  char model[4096], targets[4096], csv[4096], label[128], only[16];
  int steps, repeats, max_threads, worlds_per_thread;
} Args;

typedef struct Setup {
  mjModel* m;
  fsTargets t;
  fsReplayBinding b;
} Setup;

static int parse(int argc, char** argv, Args* a) {
  snprintf(a->model, sizeof a->model, "%s/mesh.mjb", fs_assets_dir());
  snprintf(a->targets, sizeof a->targets, "%s/walking_clip.h5", fs_assets_dir());
  a->csv[0] = 0;
  a->only[0] = 0;
  snprintf(a->label, sizeof a->label, "local");
  a->steps = 2000;
  a->repeats = 7;
  a->max_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  a->worlds_per_thread = 2;
  for (int i = 1; i < argc; i++) {
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--model") && v)
      snprintf(a->model, sizeof a->model, "%s", v), i++;
    else if (!strcmp(argv[i], "--targets") && v)
      snprintf(a->targets, sizeof a->targets, "%s", v), i++;
    else if (!strcmp(argv[i], "--csv") && v)
      snprintf(a->csv, sizeof a->csv, "%s", v), i++;
    else if (!strcmp(argv[i], "--label") && v)
      snprintf(a->label, sizeof a->label, "%s", v), i++;
    else if (!strcmp(argv[i], "--only") && v && (!strcmp(v, "bare") || !strcmp(v, "flysim")))
      snprintf(a->only, sizeof a->only, "%s", v), i++;
    else if (!strcmp(argv[i], "--steps") && v)
      a->steps = atoi(v), i++;
    else if (!strcmp(argv[i], "--repeats") && v)
      a->repeats = atoi(v), i++;
    else if (!strcmp(argv[i], "--max-threads") && v)
      a->max_threads = atoi(v), i++;
    else if (!strcmp(argv[i], "--worlds-per-thread") && v)
      a->worlds_per_thread = atoi(v), i++;
    else {
      fprintf(stderr, "usage: bench_cpu [--model PATH] [--targets PATH] [--steps N] "
                      "[--repeats R] [--max-threads T] [--worlds-per-thread K] [--csv PATH] "
                      "[--label NAME] [--only bare|flysim]\n");
      return -1;
    }
  }
  if (a->steps < 1 || a->repeats < 1 || a->max_threads < 1 || a->worlds_per_thread < 1) {
    fprintf(stderr, "bench_cpu: --steps, --repeats, --max-threads, --worlds-per-thread must be "
                    ">= 1\n");
    return -1;
  }
  return 0;
}

static int setup(const Args* a, Setup* s) {
  fsError err = {{0}, FS_OK};
  memset(s, 0, sizeof *s);
  s->m = fs_model_load(a->model, &err);
  if (!s->m || fs_targets_load(a->targets, &s->t, &err) ||
      fs_targets_resample(&s->t, s->m->opt.timestep, &err) ||
      fs_replay_bind(s->m, a->model, &s->t, &s->b, &err)) {
    fprintf(stderr, "bench_cpu: %s\n", err.msg);
    return -1;
  }
  return 0;
}

// The bare loop: FlyGym's replay in C with nothing around mj_step. Returns seconds.
static double bare_loop(const Setup* s, int steps, int nwarmup, mjData* d) {
  const fsReplayBinding* b = &s->b;
  fs_replay_reset_world(s->m, b, d);
  for (int k = 0; k < nwarmup; k++) mj_step(s->m, d);
  double t0 = fs_clock_s();
  for (int k = 0; k < steps; k++) {
    const double* target = s->t.value + (long)k * b->nact;
    for (int a = 0; a < b->nact; a++) d->ctrl[b->actuator[a]] = target[a];
    mj_step(s->m, d);
  }
  return fs_clock_s() - t0;
}

// flysim's CPU stepper on nworld worlds and nthread threads. Returns the run's result.
static int flysim_loop(const Setup* s, int nworld, int nthread, int steps, int nwarmup,
                       fsRunResult* res, mjData* final_state) {
  fsError err = {{0}, FS_OK};
  fsReplay plan;
  if (fs_replay_plan(&plan, s->m, "bench", &s->t, &s->b, nworld, steps, nwarmup, &err)) {
    fprintf(stderr, "bench_cpu: %s\n", err.msg);
    return -1;
  }
  fsReplayBatch rb;
  int rc = fs_replay_open(&plan, FS_BACKEND_CPU, 64, nthread, &rb, &err);
  if (!rc) {
    fsRunOptions opt = {
        NULL, fs_replay_block_steps(nworld, steps), 0, "bench", NULL, NULL, NULL, NULL, NULL, NULL};
    rc = fs_replay_run(&plan, &rb, &opt, res, &err);
    if (!rc && final_state) mj_copyData(final_state, s->m, fs_batch_mjdata(rb.b, 0));
    fs_replay_close(&rb);
  }
  if (rc) fprintf(stderr, "bench_cpu: %s\n", err.msg);
  fs_replay_plan_free(&plan);
  return rc;
}

static FILE* open_csv(const char* path) {
  if (!path[0]) return NULL;
  int fresh = access(path, F_OK) != 0;
  FILE* f = fopen(path, "a");
  if (!f) {
    fprintf(stderr, "bench_cpu: cannot write %s\n", path);
    return NULL;
  }
  if (fresh)
    fprintf(f, "label,model,measure,threads,worlds,steps,repeats,wall_s,world_steps_per_s,"
               "realtime_x,value\n");
  return f;
}

static double minimum(const double* v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
  return m;
}

// One world, one thread: alternate the bare loop and flysim's stepper. The best of
// the repeats is the figure (other load on the machine only ever adds time); the
// medians are printed beside it.
static int overhead(const Args* a, const Setup* s, FILE* csv) {
  int nwarmup = (int)lround(0.05 / s->m->opt.timestep);
  double* bare = calloc((size_t)a->repeats, sizeof(double));
  double* ours = calloc((size_t)a->repeats, sizeof(double));
  mjData* d0 = mj_makeData(s->m);
  mjData* d1 = mj_makeData(s->m);
  int rc = 0;
  for (int r = 0; r < a->repeats && !rc; r++) { // alternating which goes first
    fsRunResult res;
    if (r % 2) rc = flysim_loop(s, 1, 1, a->steps, nwarmup, &res, d1);
    bare[r] = bare_loop(s, a->steps, nwarmup, d0);
    if (!(r % 2)) rc = flysim_loop(s, 1, 1, a->steps, nwarmup, &res, d1);
    ours[r] = res.wall_s;
  }
  if (!rc && memcmp(d0->qpos, d1->qpos, sizeof(mjtNum) * s->m->nq)) {
    fprintf(stderr, "bench_cpu: the bare loop and flysim's stepper ended in different states\n");
    rc = -1;
  }
  if (!rc) {
    double tb = minimum(bare, a->repeats), to = minimum(ours, a->repeats);
    double pct = 100.0 * (to - tb) / tb, dt = s->m->opt.timestep;
    double mb = fs_median(bare, a->repeats), mo = fs_median(ours, a->repeats);
    printf("harness overhead (1 world, 1 thread, %d steps, best of %d; medians %+.2f %%)\n",
           a->steps, a->repeats, 100.0 * (mo - mb) / mb);
    printf("  %-28s %10.0f steps/s  %6.3fx realtime\n", "bare mj_step loop", a->steps / tb,
           a->steps / tb * dt);
    printf("  %-28s %10.0f steps/s  %6.3fx realtime\n", "flysim CPU stepper", a->steps / to,
           a->steps / to * dt);
    printf("  %-28s %+9.2f %%  (target: under 2 %%; wall time on a shared machine varies by\n"
           "  %-28s several %% between runs: bench/cpu/overhead_callgrind.sh counts\n"
           "  %-28s instructions)\n\n",
           "overhead", pct, "", "");
    if (csv) {
      fprintf(csv, "%s,%s,bare_loop,1,1,%d,%d,%.6f,%.6g,%.6g,\n", a->label, a->model, a->steps,
              a->repeats, tb, a->steps / tb, a->steps / tb * dt);
      fprintf(csv, "%s,%s,flysim_stepper,1,1,%d,%d,%.6f,%.6g,%.6g,\n", a->label, a->model, a->steps,
              a->repeats, to, a->steps / to, a->steps / to * dt);
      fprintf(csv, "%s,%s,overhead_pct,1,1,%d,%d,,,,%.3f\n", a->label, a->model, a->steps,
              a->repeats, pct);
    }
  }
  mj_deleteData(d0);
  mj_deleteData(d1);
  free(bare);
  free(ours);
  return rc;
}

// Worlds = threads x worlds-per-thread, for threads 1, 2, 4, ... and max.
static int scaling(const Args* a, const Setup* s, FILE* csv) {
  int nwarmup = (int)lround(0.05 / s->m->opt.timestep);
  int steps = a->steps / 2 > 100 ? a->steps / 2 : a->steps;
  double base = 0;
  printf("scaling with threads (%d worlds per thread, %d steps, best of %d)\n",
         a->worlds_per_thread, steps, a->repeats < 3 ? a->repeats : 3);
  printf("  %7s %7s %16s %12s %11s\n", "threads", "worlds", "world-steps/s", "x realtime",
         "efficiency");
  for (int t = 1; t <= a->max_threads;
       t = t * 2 > a->max_threads && t < a->max_threads ? a->max_threads : t * 2) {
    int nworld = t * a->worlds_per_thread;
    double best = 0;
    for (int r = 0; r < (a->repeats < 3 ? a->repeats : 3); r++) {
      fsRunResult res;
      if (flysim_loop(s, nworld, t, steps, nwarmup, &res, NULL)) return -1;
      if (res.world_steps_per_s > best) best = res.world_steps_per_s;
    }
    if (t == 1) base = best;
    double eff = best / (t * base);
    printf("  %7d %7d %16.0f %12.3f %10.0f%%\n", t, nworld, best, best * s->m->opt.timestep,
           100 * eff);
    if (csv)
      fprintf(csv, "%s,%s,threads,%d,%d,%d,%d,,%.6g,%.6g,%.3f\n", a->label, a->model, t, nworld,
              steps, a->repeats, best, best * s->m->opt.timestep, eff);
  }
  return 0;
}

int main(int argc, char** argv) {
  Args a;
  if (parse(argc, argv, &a)) return 2;
  fs_mujoco_install_hooks();
  Setup s;
  if (setup(&a, &s)) return 1;
  printf("model %s (nv %ld, nu %ld), MuJoCo %s, %d cores\n\n", a.model, (long)s.m->nv,
         (long)s.m->nu, mj_versionString(), (int)sysconf(_SC_NPROCESSORS_ONLN));
  int rc;
  if (a.only[0]) {
    int nwarmup = (int)lround(0.05 / s.m->opt.timestep);
    mjData* d = mj_makeData(s.m);
    fsRunResult res;
    rc = !strcmp(a.only, "bare") ? (bare_loop(&s, a.steps, nwarmup, d), 0)
                                 : flysim_loop(&s, 1, 1, a.steps, nwarmup, &res, NULL);
    mj_deleteData(d);
  } else {
    FILE* csv = open_csv(a.csv);
    rc = overhead(&a, &s, csv) || scaling(&a, &s, csv);
    if (csv) fclose(csv);
  }
  fs_replay_binding_free(&s.b);
  fs_targets_free(&s.t);
  mj_deleteModel(s.m);
  return rc ? 1 : 0;
}
