#include "common/replay/replay.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/recorder/h5util.h"
#include "common/sys/clock.h"
#include "common/sys/interrupt.h"
#include "common/base/nvtx.h"

int fs_replay_plan(fsReplay* r, const mjModel* m, const char* model_path, const fsTargets* t,
                   const fsReplayBinding* b, int nworld, int nstep, int nwarmup, fsError* err) {
  memset(r, 0, sizeof *r);
  if (nworld < 1) return fs_fail(err, "--worlds %d: need at least one world", nworld);
  if (nstep < 1) return fs_fail(err, "the replay has %d steps: need at least one", nstep);
  if (nstep > t->nstep)
    return fs_fail(err,
                   "the replay asks for %d steps but %s holds %d steps (%.4g s) at the "
                   "timestep %g s; fix: use --sim-steps <= %d or --sim-duration-sec <= %.4g",
                   nstep, t->path, t->nstep, t->nstep * t->timestep, t->timestep, t->nstep,
                   t->nstep * t->timestep);
  r->m = m;
  r->model_path = model_path;
  r->targets = t;
  r->bind = b;
  r->nworld = nworld;
  r->nstep = nstep;
  r->nwarmup = nwarmup;
  r->world_start = fs_calloc(err, "world offsets", (unsigned)nworld, sizeof(long));
  if (!r->world_start) return -1;
  long slices = t->nstep / nstep;
  for (int w = 0; w < nworld; w++) r->world_start[w] = (long)(w % slices) * nstep;
  return fs_replay_set_record(r, 0, 0, err);
}

int fs_steps_of_seconds(const char* what, double seconds, double timestep, long max, int* steps,
                        fsError* err) {
  if (max > INT_MAX) max = INT_MAX;
  double n = seconds / timestep;
  if (!(n >= 0) || !(n <= (double)max + 0.5)) // also NaN and infinities
    return fs_fail(err,
                   "%s %.10g: %.4g steps at the model's timestep %g s, more than the %ld a run "
                   "may take; fix: at most %.6g s",
                   what, seconds, n, timestep, max, (double)max * timestep);
  *steps = (int)lround(n);
  return 0;
}

void fs_replay_plan_free(fsReplay* r) {
  free(r->world_start);
  r->world_start = NULL;
  fs_record_layout_free(&r->rec);
}

int fs_replay_set_record(fsReplay* r, unsigned mask, int nrender, fsError* err) {
  fs_record_layout_free(&r->rec);
  r->nrender = nrender < 0 ? 0 : nrender > r->nworld ? r->nworld : nrender;
  return fs_record_layout_build(r->m, r->bind, mask, &r->rec, err);
}

int fs_replay_block_steps(int nworld, int nstep) {
  int block = 10000 / (nworld > 0 ? nworld : 1) / FLYSIM_STEPS_PER_LAUNCH * FLYSIM_STEPS_PER_LAUNCH;
  if (block < FLYSIM_STEPS_PER_LAUNCH) block = FLYSIM_STEPS_PER_LAUNCH;
  if (block > 1000) block = 1000 / FLYSIM_STEPS_PER_LAUNCH * FLYSIM_STEPS_PER_LAUNCH;
  if (block > nstep) block = nstep;
  return block < 1 ? 1 : block;
}

int fs_replay_launches(int nstep) {
  return nstep / FLYSIM_STEPS_PER_LAUNCH + nstep % FLYSIM_STEPS_PER_LAUNCH;
}

long fs_replay_run_launches(int nworld, int nstep) {
  int block = fs_replay_block_steps(nworld, nstep);
  long n = 0;
  for (int s = 0; s < nstep; s += block)
    n += fs_replay_launches(nstep - s < block ? nstep - s : block);
  return n;
}

//---------------------------------- the batch -----------------------------------------------------

// One recording: columns [c0, c0 + n) of the layout (source names), or (render) qpos.
static int add_recording(fsBatch b, const fsReplay* r, int c0, int n, int render, int cap, int* id,
                         fsError* err) {
  const char** src = fs_calloc(err, "a recording", (size_t)n, sizeof *src);
  int* index = fs_calloc(err, "a recording", (size_t)n, sizeof *index);
  int rc = -1;
  if (src && index) {
    for (int c = 0; c < n; c++) {
      src[c] = render ? "qpos" : r->rec.src[c0 + c];
      index[c] = render ? c : r->rec.index[c0 + c];
    }
    fsRecordOptions o = {
        n,   src,           index, render ? NULL : r->rec.geom_leg, 0, render ? r->nrender : 0,
        cap, FS_MEMORY_HOST};
    rc = fs_batch_add_recording(b, &o, id, err) ? -1 : 0;
  }
  free(src);
  free(index);
  return rc;
}

int fs_replay_open(const fsReplay* r, fsBackendKind kind, int bits, int nthread, fsReplayBatch* out,
                   fsError* err) {
  memset(out, 0, sizeof *out);
  out->rec_render = -1;
  for (int k = 0; k < FS_NSERIES; k++) out->rec_series[k] = -1;
  fsBatchOptions o = fs_batch_default_options();
  o.backend = kind;
  o.precision = kind == FS_BACKEND_CPU ? FS_PRECISION_F64
                : bits == 64           ? FS_PRECISION_F64
                                       : FS_PRECISION_F32;
  o.nworld = r->nworld;
  o.nthread = nthread;
  o.max_contacts = kind == FS_BACKEND_CPU ? 0 : r->max_contacts;
  o.max_candidates = kind == FS_BACKEND_CPU ? 0 : r->max_candidates;
  o.model_name = r->model_path;
  if (fs_batch_open(r->m, &o, &out->b, err)) return -1;
  out->bits = o.precision == FS_PRECISION_F32 ? 32 : 64;
  int cap = fs_replay_block_steps(r->nworld, r->nstep);
  for (int k = 0; k < FS_NSERIES; k++)
    if (r->rec.ncol[k] &&
        add_recording(out->b, r, r->rec.col0[k], r->rec.ncol[k], 0, cap, &out->rec_series[k], err))
      goto fail;
  if (r->nrender > 0 && add_recording(out->b, r, 0, (int)r->m->nq, 1, cap, &out->rec_render, err))
    goto fail;
  if (r->setup && r->setup(r->arg, out->b, err)) goto fail;
  if (fs_batch_info(out->b, &out->info, err)) goto fail;
  return 0;
fail:
  fs_replay_close(out);
  return -1;
}

void fs_replay_close(fsReplayBatch* rb) {
  fs_batch_close(rb->b);
  memset(rb, 0, sizeof *rb);
}

int fs_replay_health(const fsReplay* r, const fsReplayBatch* rb, fsWorldStatus* out, fsError* err) {
  fsWorldHealth* h = fs_calloc(err, "world health", (size_t)r->nworld, sizeof *h);
  if (!h) return -1;
  int rc = fs_batch_health(rb->b, h, err) ? -1 : 0;
  for (int w = 0; w < r->nworld && !rc; w++) {
    fsWorldStatus* st = &out[w];
    memset(st, 0, sizeof *st);
    memcpy(st->warnings, h[w].warnings, sizeof st->warnings);
    st->first_warning = h[w].first_warning;
    st->first_warning_step =
        h[w].first_warning >= 0 ? (int)(h[w].first_warning_step - rb->step0 - r->nwarmup) : INT_MIN;
    st->fatal = h[w].fatal;
    st->solver_limit = h[w].solver_limit;
    st->solver_error = h[w].solver_error;
    st->peak_contacts = h[w].peak_contacts;
  }
  free(h);
  return rc;
}

// A view of the batch's real read into host memory (raw: the view's elements).
static void* read_real(const fsReplayBatch* rb, const char* name, size_t n, fsError* err) {
  size_t es = rb->bits == 32 ? sizeof(float) : sizeof(double);
  void* raw = fs_calloc(err, name, n, es);
  if (raw && fs_batch_read(rb->b, name, raw, n * es, err)) {
    free(raw);
    return NULL;
  }
  return raw;
}

int fs_replay_read_worlds(const fsReplay* r, const fsReplayBatch* rb, double* qpos, int* ncon,
                          fsError* err) {
  size_t n = (size_t)r->nworld * (size_t)r->m->nq;
  void* q = read_real(rb, "qpos", n, err);
  if (!q) return -1;
  for (size_t i = 0; i < n; i++) qpos[i] = rb->bits == 32 ? ((float*)q)[i] : ((double*)q)[i];
  free(q);
  return fs_batch_read(rb->b, "ncon", ncon, sizeof(int) * (size_t)r->nworld, err) ? -1 : 0;
}

// v stochastically rounded to float32 with u in [0, 1): to the float32 above with the odds
// of v's distance from the one below (v itself where it is a float32, or beyond them).
static double round_f32_stochastic(double v, double u) {
  float f = (float)v;
  if ((double)f == v || !isfinite(f)) return f;
  float g = nextafterf(f, (double)f < v ? INFINITY : -INFINITY);
  double lo = fmin(f, g), hi = fmax(f, g);
  return u < (v - lo) / (hi - lo) ? hi : lo;
}

// x (n elements of world w's slice, from k0) perturbed in the batch's real.
static void perturb(void* x, int bits, int n, int how, unsigned seed, unsigned w, unsigned k0) {
  for (int i = 0; i < n; i++) {
    unsigned k = k0 + (unsigned)i;
    if (bits == 32) {
      float* v = (float*)x + i;
      if (how == FS_PERTURB_ULP)
        *v = nextafterf(*v, fs_perturb_up(seed, w, k) ? INFINITY : -INFINITY);
    } else {
      double* v = (double*)x + i;
      *v = how == FS_PERTURB_ROUND_F32 ? (double)(float)*v
           : how == FS_PERTURB_STOCHASTIC_F32
               ? round_f32_stochastic(*v, fs_perturb_uniform(seed, w, k))
               : nextafter(*v, fs_perturb_up(seed, w, k) ? INFINITY : -INFINITY);
    }
  }
}

int fs_replay_perturb(const fsReplay* r, const fsReplayBatch* rb, const int* how, unsigned seed,
                      fsError* err) {
  const int N = r->nworld, nq = (int)r->m->nq, nv = (int)r->m->nv;
  size_t es = rb->bits == 32 ? sizeof(float) : sizeof(double);
  char* q = read_real(rb, "qpos", (size_t)N * nq, err);
  char* v = q ? read_real(rb, "qvel", (size_t)N * nv, err) : NULL;
  int rc = -1;
  if (q && v) {
    for (int w = 0; w < N; w++) {
      perturb(q + (size_t)w * nq * es, rb->bits, nq, how[w], seed, (unsigned)w, 0);
      perturb(v + (size_t)w * nv * es, rb->bits, nv, how[w], seed, (unsigned)w, (unsigned)nq);
    }
    rc = fs_batch_write(rb->b, "qpos", q, (size_t)N * nq * es, err) ||
                 fs_batch_write(rb->b, "qvel", v, (size_t)N * nv * es, err)
             ? -1
             : 0;
  }
  free(q);
  free(v);
  return rc;
}

//---------------------------------- the run -------------------------------------------------------

static void free_block(fsBlock* b) {
  for (int k = 0; k < FS_NSERIES; k++) free(b->series[k]);
  free(b->render_qpos);
  memset(b, 0, sizeof *b);
}

// Buffers for one block of the selected series and the video's worlds.
static int alloc_block(const fsReplay* r, int block, fsBlock* b, fsError* err) {
  memset(b, 0, sizeof *b);
  for (int k = 0; k < FS_NSERIES; k++) {
    if (!r->rec.ncol[k]) continue;
    unsigned long long n =
        (unsigned long long)block * (unsigned)r->nworld * (unsigned)r->rec.ncol[k];
    b->series[k] = fs_calloc(err, "a block of recorded steps", n, sizeof(float));
    if (!b->series[k]) goto fail;
  }
  if (r->nrender > 0) {
    unsigned long long n = (unsigned long long)block * (unsigned)r->nrender * (unsigned)r->m->nq;
    b->render_qpos = fs_calloc(err, "a block of the video's states", n, sizeof(float));
    if (!b->render_qpos) goto fail;
  }
  return 0;
fail:
  free_block(b);
  return -1;
}

// The block's data to the observer and the file.
static int save_block(const fsReplay* r, const fsRunOptions* opt, const fsBlock* b, fsError* err) {
  if (b->ndone <= 0) return 0;
  if (opt->on_block && opt->on_block(opt->block_arg, b, err)) return -1;
  if (!opt->recorder) return 0;
  const float* data[FS_NSERIES];
  int n = 0;
  for (int k = 0; k < FS_NSERIES; k++)
    if (r->rec.ncol[k]) data[n++] = b->series[k];
  fs_nvtx_push(FS_NVTX_RECORD);
  int rc = fs_recorder_append(opt->recorder, b->ndone, data, err);
  fs_nvtx_pop();
  return rc;
}

// A block saved on a thread of its own while the next one steps (cpu and host, whose step
// calls return when done; a cuda batch's calls return at once, and the driver saves then).
typedef struct Saver {
  const fsReplay* r;
  const fsRunOptions* opt;
  const fsBlock* b;
  pthread_t thread;
  int started, rc;
  fsError err;
} Saver;

static void* saver_main(void* arg) {
  Saver* s = arg;
  fs_h5_quiet(); // HDF5's error printing is per thread: errors come back as messages

  s->rc = save_block(s->r, s->opt, s->b, &s->err);
  return NULL;
}

static void saver_start(Saver* s, const fsBlock* b) {
  s->b = b;
  s->rc = 0;
  s->started = pthread_create(&s->thread, NULL, saver_main, s) == 0;
  if (!s->started) s->rc = save_block(s->r, s->opt, b, &s->err); // no thread: save here
}

static int saver_join(Saver* s, fsError* err) {
  if (s->started) pthread_join(s->thread, NULL);
  s->started = 0;
  if (s->rc && err) *err = s->err;
  return s->rc;
}

static void print_progress(const char* label, const fsReplay* r, long long done, double elapsed,
                           int final) {
  double rate = elapsed > 0 ? (double)done * r->nworld / elapsed : 0.0;
  double left = rate > 0 ? (double)(r->nstep - done) * r->nworld / rate : 0.0;
  int ls = (int)(left + 0.5);
  fprintf(stderr, "\r\033[K%s  step %lld/%d  %d world%s  %.3g world-steps/s  %d:%02d:%02d left",
          label, done, r->nstep, r->nworld, r->nworld == 1 ? "" : "s", rate, ls / 3600,
          (ls / 60) % 60, ls % 60);
  if (final) fprintf(stderr, "\r\033[K");
  fflush(stderr);
}

// Every world from the binding's keyframe with adhesion on (fs_replay_reset_world's state:
// FlyGym's Simulation.reset + set_leg_adhesion_states(ones)), the plan's own start, then
// the warm-up at those controls, a block at a time (a step at a time when hook runs
// before every step). A batch that ran before (the bench's repeats) still holds the clip
// as its control sequence: cleared first, so that every start settles at the keyframe's
// controls, as the first did, and never reads the clip past its end.
static int warm_up(const fsReplay* r, fsReplayBatch* rb, int block, const fsWarmupHook* hook,
                   fsError* err) {
  const int N = r->nworld, nu = (int)r->m->nu;
  rb->step0 = fs_batch_steps(rb->b);
  if (fs_batch_set_ctrl_sequence(rb->b, NULL, err)) return -1;
  if (fs_batch_reset(rb->b, NULL, r->bind->key, err)) return -1;
  if (r->bind->nadhesion > 0) {
    size_t es = rb->bits == 32 ? sizeof(float) : sizeof(double);
    char* ctrl = read_real(rb, "ctrl", (size_t)N * nu, err);
    if (!ctrl) return -1;
    for (int w = 0; w < N; w++)
      for (int i = 0; i < r->bind->nadhesion; i++) {
        size_t k = (size_t)w * nu + (size_t)r->bind->adhesion[i];
        if (rb->bits == 32)
          ((float*)ctrl)[k] = 1.0f;
        else
          ((double*)ctrl)[k] = 1.0;
      }
    int rc = fs_batch_write(rb->b, "ctrl", ctrl, (size_t)N * nu * es, err);
    free(ctrl);
    if (rc) return -1;
  }
  if (r->init_worlds && r->init_worlds(r->arg, rb->b, err)) return -1;
  if (hook && !hook->every_step && hook->before(hook->arg, rb, 0, err)) return -1;
  if (hook && hook->every_step) block = 1;
  for (int s = 0; s < r->nwarmup && !fs_interrupted(); s += block) {
    if (hook && hook->every_step && hook->before(hook->arg, rb, s, err)) return -1;
    if (fs_batch_step(rb->b, r->nwarmup - s < block ? r->nwarmup - s : block, err)) return -1;
  }
  return fs_batch_sync(rb->b, err) ? -1 : 0;
}

// The clip as the batch's control sequence: world w from row world_start[w]. A clip of no
// columns (a model without actuators under --targets sine) drives nothing: no sequence.
static int set_clip(const fsReplay* r, fsReplayBatch* rb, fsError* err) {
  if (r->bind->nact == 0) return 0;
  int64_t* row = fs_calloc(err, "world offsets", (size_t)r->nworld, sizeof *row);
  if (!row) return -1;
  for (int w = 0; w < r->nworld; w++) row[w] = r->world_start[w];
  fsCtrlSequence seq = {r->targets->nstep, r->bind->nact, r->targets->value, r->bind->actuator,
                        row};
  int rc = fs_batch_set_ctrl_sequence(rb->b, &seq, err) ? -1 : 0;
  free(row);
  return rc;
}

int fs_replay_step_block(const fsReplay* r, const fsReplayBatch* rb, fsBlock* b, int n,
                         fsError* err) {
  float* out[FS_NSERIES + 1];
  memset(out, 0, sizeof out);
  int record = 0;
  for (int k = 0; k < FS_NSERIES; k++)
    if (rb->rec_series[k] >= 0 && b->series[k]) {
      out[rb->rec_series[k]] = b->series[k];
      record = 1;
    }
  if (rb->rec_render >= 0 && b->render_qpos) {
    out[rb->rec_render] = b->render_qpos;
    record = 1;
  }
  (void)r;
  return (record ? fs_batch_step_recorded(rb->b, n, out, err) : fs_batch_step(rb->b, n, err)) ? -1
                                                                                              : 0;
}

int fs_replay_start_hooked(const fsReplay* r, fsReplayBatch* rb, const fsWarmupHook* hook,
                           fsError* err) {
  fs_nvtx_push(FS_NVTX_WARMUP);
  int rc =
      warm_up(r, rb, fs_replay_block_steps(r->nworld, r->nstep), hook, err) || set_clip(r, rb, err);
  fs_nvtx_pop();
  return rc ? -1 : 0;
}

int fs_replay_start(const fsReplay* r, fsReplayBatch* rb, fsError* err) {
  return fs_replay_start_hooked(r, rb, NULL, err);
}

int fs_replay_run(const fsReplay* r, fsReplayBatch* rb, const fsRunOptions* opt, fsRunResult* res,
                  fsError* err) {
  static const fsRunHooks no_hooks = {NULL, NULL, NULL};
  const fsRunHooks* hooks = opt->hooks ? opt->hooks : &no_hooks;
  const int keep = opt->recorder || opt->on_block, async = rb->info.backend == FS_BACKEND_CUDA;
  fsBlock blk[2];
  memset(blk, 0, sizeof blk);
  memset(res, 0, sizeof *res);
  Saver saver = {r, opt, NULL, 0, 0, 0, {{0}, FS_OK}};
  int block = opt->block > 0 ? opt->block : fs_replay_block_steps(r->nworld, r->nstep);
  int rc = -1, timed = 0;
  long long step = 0;
  double t0 = 0; // the timed loop's start (0: not started)
  if (keep)
    for (int i = 0; i < 2; i++)
      if (alloc_block(r, block, &blk[i], err)) goto done;

  if (fs_replay_start(r, rb, err)) goto done;

  const char* label = opt->label ? opt->label : fs_backend_name(rb->info.backend);
  fsBlock* prev = NULL;
  int cur = 0;
  if (hooks->on_timed_start && hooks->on_timed_start(hooks->arg, err)) goto done;
  timed = 1;
  t0 = fs_clock_s();
  double last_print = t0;
  fs_nvtx_push(FS_NVTX_TIMED_RUN);
  while (step < r->nstep && !fs_interrupted()) {
    fsBlock* b = &blk[cur];
    int n = (int)(r->nstep - step < block ? r->nstep - step : block);
    long stop = opt->next_stop ? opt->next_stop(opt->stop_arg, (long)step) : -1;
    if (stop >= step && stop < step + n) n = (int)(stop - step + 1); // end at the stop
    b->step0 = (int)step;
    b->nstep = n;
    b->ndone = 0;
    // The previous block is written while this one steps.
    if (prev && !async) saver_start(&saver, prev);
    fsError step_err;
    int step_failed = fs_replay_step_block(r, rb, b, n, &step_err);
    int write_failed = prev && (async ? save_block(r, opt, prev, err) : saver_join(&saver, err));
    prev = NULL;
    if (!step_failed) {
      b->ndone = n;
      step += n;
    }
    if (!step_failed && stop == step - 1 && opt->at_stop &&
        opt->at_stop(opt->stop_arg, rb->b, stop, &step_err))
      step_failed = 1;
    if (write_failed || step_failed) fs_nvtx_pop();
    if (write_failed) goto done;
    if (step_failed) {
      *err = step_err;
      goto done;
    }
    double now = fs_clock_s();
    if (opt->progress && now - last_print > 0.25) {
      print_progress(label, r, step, now - t0, 0);
      last_print = now;
    }
    if (keep) prev = b;
    cur ^= 1;
  }
  int sync_failed = fs_batch_sync(rb->b, err) != FS_OK; // the device done: the clock stops
  res->wall_s = fs_clock_s() - t0;
  fs_nvtx_pop();
  timed = 0;
  int hook_failed = hooks->on_timed_end && hooks->on_timed_end(hooks->arg, err);
  if (opt->progress) print_progress(label, r, step, res->wall_s, 1);
  // The last block is saved even if the hook failed (its message is kept).
  if (!sync_failed && prev && save_block(r, opt, prev, hook_failed ? NULL : err)) goto done;
  if (hook_failed || sync_failed) goto done;
  rc = 0;

done:
  if (saver.started) saver_join(&saver, NULL);
  if (timed && hooks->on_timed_end) hooks->on_timed_end(hooks->arg, NULL); // loop failed
  res->steps = step;
  if (res->wall_s <= 0 && t0 > 0) res->wall_s = fs_clock_s() - t0; // the loop stopped early
  if (res->wall_s <= 0) res->wall_s = 0;
  res->world_steps_per_s = res->wall_s > 0 ? (double)step * r->nworld / res->wall_s : 0.0;
  res->realtime = res->world_steps_per_s * r->m->opt.timestep;
  res->interrupted = fs_interrupted();
  for (int i = 0; i < 2; i++) free_block(&blk[i]);
  return rc;
}

const char* fs_warning_name(int i) {
  switch (i) {
  case mjWARN_INERTIA:
    return "singular-inertia";
  case mjWARN_CONTACTFULL:
    return "contact-buffer-full";
  case mjWARN_CNSTRFULL:
    return "constraint-buffer-full";
  case mjWARN_BADQPOS:
    return "bad-qpos";
  case mjWARN_BADQVEL:
    return "bad-qvel";
  case mjWARN_BADQACC:
    return "bad-qacc";
  case mjWARN_BADCTRL:
    return "bad-ctrl";
  default:
    return "unknown-warning";
  }
}

int fs_world_has_problem(const fsWorldStatus* st) {
  int any = st->fatal || st->solver_limit > 0 || st->solver_error > 0;
  for (int i = 0; i < mjNWARNING; i++) any |= st->warnings[i] > 0;
  return any;
}

int fs_replay_peak_contacts(const fsReplay* r, const fsWorldStatus* st) {
  int peak = 0;
  for (int w = 0; w < r->nworld; w++)
    peak = st[w].peak_contacts > peak ? st[w].peak_contacts : peak;
  return peak;
}

int fs_replay_report_worlds(const fsReplay* r, const fsWorldStatus* all, int verbose_limit) {
  int nbad = 0;
  for (int w = 0; w < r->nworld; w++) {
    const fsWorldStatus st = all[w];
    if (!fs_world_has_problem(&st)) continue;
    if (nbad < verbose_limit) {
      fprintf(stderr, "flysim: world %d:", w);
      if (st.fatal) fprintf(stderr, " stopped by a MuJoCo error;");
      if (st.solver_limit)
        fprintf(stderr, " the constraint solver ran to its %d iterations in %d step%s;",
                r->m->opt.iterations, st.solver_limit, st.solver_limit == 1 ? "" : "s");
      if (st.solver_error)
        fprintf(stderr, " the constraint solver's Hessian lost rank in %d step%s;", st.solver_error,
                st.solver_error == 1 ? "" : "s");
      for (int i = 0; i < mjNWARNING; i++)
        if (st.warnings[i]) fprintf(stderr, " %s x%d", fs_warning_name(i), st.warnings[i]);
      if (st.warnings[mjWARN_CONTACTFULL] && r->max_contacts && st.peak_contacts > r->max_contacts)
        fprintf(stderr,
                " (it made up to %d contacts in a step, --max-contacts keeps %d; fix: "
                "--max-contacts %d or more)",
                st.peak_contacts, r->max_contacts, st.peak_contacts);
      else if (st.warnings[mjWARN_CONTACTFULL]) // not the contacts: the candidate pairs
        fprintf(stderr,
                " (its moving geoms were near more static geoms than a world's candidate "
                "pairs hold%s; fix: a larger --max-candidates)",
                r->max_candidates ? "" : ", the pairs tested every step and 8 per moving geom");
      if (st.first_warning >= 0 && st.first_warning_step != INT_MIN)
        fprintf(stderr, " (first: %s at %s step %d)", fs_warning_name(st.first_warning),
                st.first_warning_step < 0 ? "warm-up" : "replay",
                st.first_warning_step < 0 ? st.first_warning_step + r->nwarmup
                                          : st.first_warning_step);
      fprintf(stderr, "\n");
    }
    nbad++;
  }
  if (nbad > verbose_limit)
    fprintf(stderr, "flysim: ... and %d more worlds with problems\n", nbad - verbose_limit);
  return nbad;
}
