// flysim bench's points (bench/sweep.h).
#include "bench/sweep.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "common/sys/interrupt.h"
#include "common/replay/replay_io.h"

void fs_bench_stepper_name(const fsBenchPoint* p, char* out, size_t n) {
  if (p->kind == FS_BACKEND_CPU)
    snprintf(out, n, "cpu");
  else
    snprintf(out, n, "%s:f%d", fs_backend_name(p->kind), p->bits);
}

void fs_bench_row_error(fsBenchRow* r, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->error, sizeof r->error, fmt, ap);
  va_end(ap);
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

double fs_median(double* x, int n) {
  if (n <= 0) return 0;
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static int count_problems(const fsReplay* r, const fsReplayBatch* rb, fsError* err) {
  fsWorldStatus* st = fs_calloc(err, "world health", (size_t)r->nworld, sizeof *st);
  int n = st && !fs_replay_health(r, rb, st, err) ? 0 : -1;
  for (int w = 0; w < r->nworld && n >= 0; w++) n += fs_world_has_problem(&st[w]);
  free(st);
  return n;
}

int fs_bench_open(const fsBenchInputs* in, const fsBenchPoint* p, fsBenchRow* out,
                  fsBenchRun* run) {
  memset(out, 0, sizeof *out);
  memset(run, 0, sizeof *run);
  out->p = *p;
  out->nstep = in->nstep;
  out->repeats = in->repeats;
  fs_bench_stepper_name(p, out->stepper, sizeof out->stepper);
  run->in = in;
  run->out = out;
  fsError err = {{0}, FS_OK};
  if (fs_replay_plan(&run->plan, in->m, in->model_path, in->targets, in->bind, p->nworld, in->nstep,
                     in->nwarmup, &err) ||
      fs_replay_set_record(&run->plan, p->record ? FS_RECORD_ALL : 0, 0, &err)) {
    fs_bench_row_error(out, "%s", err.msg);
    run->failed = 1;
    return -1;
  }
  run->planned = 1;
  run->plan.max_contacts = p->kind == FS_BACKEND_CPU ? 0 : in->max_contacts;
  run->plan.max_candidates = p->kind == FS_BACKEND_CPU ? 0 : in->max_candidates;
  if (!(run->wsps = calloc((size_t)in->repeats, sizeof(double)))) {
    fs_bench_row_error(out, "out of memory");
    run->failed = 1;
    return -1;
  }
  if (fs_replay_open(&run->plan, p->kind, p->bits, in->threads, &run->rb, &err)) {
    fs_bench_row_error(out, "%s", err.msg);
    run->failed = 1;
    return -1;
  }
  run->opened = 1;
  out->nthread = run->rb.info.nthread;
  snprintf(out->desc, sizeof out->desc, "%s", run->rb.info.description);
  out->cost = run->rb.info;
  return 0;
}

int fs_bench_repeat(fsBenchRun* run) {
  if (run->failed || !run->opened || run->done == run->in->repeats) return 0;
  const fsBenchInputs* in = run->in;
  fsBenchRow* out = run->out;
  int block = fs_replay_block_steps(run->plan.nworld, run->plan.nstep);
  fsRunOptions ropt = {NULL, block, 0, "bench", NULL, NULL, NULL, NULL, NULL, NULL};
  char path[4200];
  snprintf(path, sizeof path, "%s/bench-record-%d.h5", in->record_dir ? in->record_dir : ".",
           (int)getpid());
  fsRunResult res;
  fsError err = {{0}, FS_OK};
  fsReplayMeta meta = {fs_backend_name(run->rb.info.backend), out->p.bits == 32 ? "f32" : "f64",
                       "flysim bench", run->rb.info.nthread};
  if (out->p.record &&
      !(ropt.recorder = fs_replay_recorder_open(&run->plan, path, block, &meta, &err))) {
    fs_bench_row_error(out, "%s", err.msg);
    run->failed = 1;
    return 0;
  }
  int failed = fs_replay_run(&run->plan, &run->rb, &ropt, &res, &err);
  // The file is closed as is (not compressed: that is after the run, not in it).
  if (ropt.recorder) fs_recorder_finish(ropt.recorder, failed ? NULL : "completed", NULL);
  if (out->p.record) unlink(path);
  if (failed) {
    fs_bench_row_error(out, "%s", err.msg);
    run->failed = 1;
    return 0;
  }
  if (res.interrupted) return res.interrupted;
  double v = res.world_steps_per_s;
  run->lo = run->done == 0 || v < run->lo ? v : run->lo;
  run->hi = v > run->hi ? v : run->hi;
  run->wsps[run->done++] = v;
  return 0;
}

void fs_bench_close(fsBenchRun* run) {
  fsBenchRow* out = run->out;
  if (!run->failed && run->opened && run->done == run->in->repeats) {
    out->wsps_median = fs_median(run->wsps, run->done);
    out->wsps_min = run->lo;
    out->wsps_max = run->hi;
    out->realtime_median = out->wsps_median * run->plan.m->opt.timestep;
    fsError err;
    out->problem_worlds = count_problems(&run->plan, &run->rb, &err);
    if (out->problem_worlds < 0)
      fs_bench_row_error(out, "%s", err.msg);
    else
      out->ok = 1;
  }
  if (run->opened) fs_replay_close(&run->rb);
  if (run->planned) fs_replay_plan_free(&run->plan);
  free(run->wsps);
  memset(run, 0, sizeof *run);
}

int fs_bench_point(const fsBenchInputs* in, const fsBenchPoint* p, fsBenchRow* out) {
  if (p->kind == FS_BACKEND_CUDA && !p->graph)
    setenv("FLYSIM_NO_GRAPH", "1", 1);
  else
    unsetenv("FLYSIM_NO_GRAPH");
  fsBenchRun run;
  int sig = 0;
  if (!fs_bench_open(in, p, out, &run))
    for (int r = 0; r < in->repeats && !sig && !run.failed; r++) sig = fs_bench_repeat(&run);
  fs_bench_close(&run);
  unsetenv("FLYSIM_NO_GRAPH");
  return sig ? sig : fs_interrupted();
}
