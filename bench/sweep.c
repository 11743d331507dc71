// flysim bench's points (bench/sweep.h).
#include "bench/sweep.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "common/base/interrupt.h"
#include "common/recorder/replay_io.h"

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

// R timed repeats of the open stepper; the figures into out. Returns the signal
// that stopped it, or 0.
static int time_repeats(const fsBenchInputs* in, const fsReplay* plan, fsReplayBatch* rb,
                        fsBenchRow* out) {
  double* wsps = calloc((size_t)in->repeats, sizeof(double));
  if (!wsps) {
    fs_bench_row_error(out, "out of memory");
    return 0;
  }
  int block = fs_replay_block_steps(plan->nworld, plan->nstep);
  fsRunOptions ropt = {NULL, block, 0, "bench", NULL, NULL, NULL, NULL, NULL, NULL};
  char path[4200];
  snprintf(path, sizeof path, "%s/bench-record-%d.h5", in->record_dir ? in->record_dir : ".",
           (int)getpid());
  int done = 0, sig = 0;
  double lo = 0, hi = 0;
  for (int r = 0; r < in->repeats; r++) {
    fsRunResult res;
    fsError err = {{0}, FS_OK};
    fsReplayMeta meta = {fs_backend_name(rb->info.backend), out->p.bits == 32 ? "f32" : "f64",
                         "flysim bench", rb->info.nthread};
    if (out->p.record &&
        !(ropt.recorder = fs_replay_recorder_open(plan, path, block, &meta, &err))) {
      fs_bench_row_error(out, "%s", err.msg);
      break;
    }
    int failed = fs_replay_run(plan, rb, &ropt, &res, &err);
    // The file is closed as is (not compressed: that is after the run, not in it).
    if (ropt.recorder) fs_recorder_finish(ropt.recorder, failed ? NULL : "completed", NULL);
    ropt.recorder = NULL;
    if (out->p.record) unlink(path);
    if (failed) {
      fs_bench_row_error(out, "%s", err.msg);
      break;
    }
    if (res.interrupted) {
      sig = res.interrupted;
      break;
    }
    wsps[done++] = res.world_steps_per_s;
    lo = done == 1 || res.world_steps_per_s < lo ? res.world_steps_per_s : lo;
    hi = res.world_steps_per_s > hi ? res.world_steps_per_s : hi;
  }
  if (done == in->repeats) {
    out->wsps_median = fs_median(wsps, done);
    out->wsps_min = lo;
    out->wsps_max = hi;
    out->realtime_median = out->wsps_median * plan->m->opt.timestep;
    fsError err;
    out->problem_worlds = count_problems(plan, rb, &err);
    if (out->problem_worlds < 0)
      fs_bench_row_error(out, "%s", err.msg);
    else
      out->ok = 1;
  }
  free(wsps);
  return sig;
}

int fs_bench_point(const fsBenchInputs* in, const fsBenchPoint* p, fsBenchRow* out) {
  memset(out, 0, sizeof *out);
  out->p = *p;
  out->nstep = in->nstep;
  out->repeats = in->repeats;
  fs_bench_stepper_name(p, out->stepper, sizeof out->stepper);
  fsReplay plan;
  fsError err = {{0}, FS_OK};
  if (fs_replay_plan(&plan, in->m, in->model_path, in->targets, in->bind, p->nworld, in->nstep,
                     in->nwarmup, &err) ||
      fs_replay_set_record(&plan, p->record ? FS_RECORD_ALL : 0, 0, &err)) {
    fs_bench_row_error(out, "%s", err.msg);
    return 0;
  }
  plan.max_contacts = p->kind == FS_BACKEND_CPU ? 0 : in->max_contacts;
  plan.max_candidates = p->kind == FS_BACKEND_CPU ? 0 : in->max_candidates;
  if (p->kind == FS_BACKEND_CUDA && !p->graph)
    setenv("FLYSIM_NO_GRAPH", "1", 1);
  else
    unsetenv("FLYSIM_NO_GRAPH");
  fsReplayBatch rb;
  int sig = 0;
  if (fs_replay_open(&plan, p->kind, p->bits, in->threads, &rb, &err)) {
    fs_bench_row_error(out, "%s", err.msg);
  } else {
    out->nthread = rb.info.nthread;
    snprintf(out->desc, sizeof out->desc, "%s", rb.info.description);
    out->cost = rb.info;
    sig = time_repeats(in, &plan, &rb, out);
    fs_replay_close(&rb);
  }
  unsetenv("FLYSIM_NO_GRAPH");
  fs_replay_plan_free(&plan);
  return sig ? sig : fs_interrupted();
}
