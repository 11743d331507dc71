#include "common/replay/replay.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/clock.h"
#include "common/base/interrupt.h"
#include "src/base/nvtx.h"

int fs_replay_inputs_load(const char* model_path, const char* targets_path, int disable,
                          fsReplayInputs* in, fsError* err) {
  memset(in, 0, sizeof *in);
  in->m = fs_model_load(model_path, err);
  if (!in->m) return -1;
  in->m->opt.disableflags |= disable;
  if (fs_targets_load(targets_path, &in->targets, err) ||
      fs_targets_resample(&in->targets, in->m->opt.timestep, err) ||
      fs_replay_bind(in->m, model_path, &in->targets, &in->bind, err))
    return -1;
  return 0;
}

void fs_replay_inputs_free(fsReplayInputs* in) {
  fs_replay_binding_free(&in->bind);
  fs_targets_free(&in->targets);
  if (in->m) mj_deleteModel(in->m);
  memset(in, 0, sizeof *in);
}

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

void fs_replay_plan_free(fsReplay* r) {
  free(r->world_start);
  r->world_start = NULL;
  fs_record_layout_free(&r->rec);
}

void fs_replay_start_world(const fsReplay* r, int w, mjData* d) {
  const mjModel* m = fs_replay_model(r, w);
  fs_replay_reset_world(m, r->bind, d);
  if (r->init_world) r->init_world(r->init_arg, w, m, d);
}

int fs_replay_set_record(fsReplay* r, unsigned mask, int nrender, fsError* err) {
  fs_record_layout_free(&r->rec);
  r->nrender = nrender < 0 ? 0 : nrender > r->nworld ? r->nworld : nrender;
  return fs_record_layout_build(r->m, r->bind, mask, &r->rec, err);
}

int fs_replay_block_steps(int nworld, int nstep) {
  int block = 10000 / (nworld > 0 ? nworld : 1) / FS_STEPS_PER_LAUNCH * FS_STEPS_PER_LAUNCH;
  if (block < FS_STEPS_PER_LAUNCH) block = FS_STEPS_PER_LAUNCH;
  if (block > 1000) block = 1000 / FS_STEPS_PER_LAUNCH * FS_STEPS_PER_LAUNCH;
  if (block > nstep) block = nstep;
  return block < 1 ? 1 : block;
}

int fs_replay_launches(int nstep) {
  return nstep / FS_STEPS_PER_LAUNCH + nstep % FS_STEPS_PER_LAUNCH;
}

long fs_replay_run_launches(int nworld, int nstep) {
  int block = fs_replay_block_steps(nworld, nstep);
  long n = 0;
  for (int s = 0; s < nstep; s += block)
    n += fs_replay_launches(nstep - s < block ? nstep - s : block);
  return n;
}

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

// The block's data (fetched from the backend), to the observer and the file.
static int save_block(const fsReplay* r, const fsBackendOps* ops, void* self,
                      const fsRunOptions* opt, fsBlock* b, fsError* err) {
  if (b->ndone <= 0) return 0;
  if (ops->fetch_block && ops->fetch_block(self, b, err)) return -1;
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

int fs_replay_run(const fsReplay* r, const fsBackendOps* ops, void* self, const fsRunOptions* opt,
                  fsRunResult* res, fsError* err) {
  static const fsRunHooks no_hooks = {NULL, NULL, NULL};
  const fsRunHooks* hooks = opt->hooks ? opt->hooks : &no_hooks;
  fsBlock blk[2];
  memset(blk, 0, sizeof blk);
  memset(res, 0, sizeof *res);
  int block = opt->block > 0 ? opt->block : fs_replay_block_steps(r->nworld, r->nstep);
  int rc = -1, timed = 0;
  long long step = 0;
  if (opt->recorder || opt->on_block)
    for (int i = 0; i < 2; i++)
      if (alloc_block(r, block, &blk[i], err)) goto done;

  fs_nvtx_push(FS_NVTX_WARMUP);
  int warm_failed = ops->warmup(self, err);
  fs_nvtx_pop();
  if (warm_failed) goto done;

  const char* label = opt->label ? opt->label : ops->name;
  fsBlock* prev = NULL;
  int cur = 0;
  if (hooks->on_timed_start && hooks->on_timed_start(hooks->arg, err)) goto done;
  timed = 1;
  double t0 = fs_clock_s(), last_print = t0;
  fs_nvtx_push(FS_NVTX_TIMED_RUN);
  while (step < r->nstep && !fs_interrupted()) {
    fsBlock* b = &blk[cur];
    b->step0 = (int)step;
    b->nstep = (int)(r->nstep - step < block ? r->nstep - step : block);
    b->ndone = 0;
    if (ops->begin_block(self, b, err)) {
      fs_nvtx_pop();
      goto done;
    }
    // Write the previous block while this one is being stepped.
    int write_failed = prev && save_block(r, ops, self, opt, prev, err);
    prev = NULL;
    fsError end_err;
    int end_failed = ops->end_block(self, b, &end_err);
    step += b->ndone;
    if (write_failed || end_failed) fs_nvtx_pop();
    if (write_failed) goto done;
    if (end_failed) {
      *err = end_err;
      if (opt->recorder || opt->on_block) save_block(r, ops, self, opt, b, NULL);
      goto done;
    }
    double now = fs_clock_s();
    if (opt->progress && now - last_print > 0.25) {
      print_progress(label, r, step, now - t0, 0);
      last_print = now;
    }
    if (opt->recorder || opt->on_block) prev = b;
    cur ^= 1;
    if (b->ndone < b->nstep) break; // stopped by a signal
  }
  res->wall_s = fs_clock_s() - t0;
  fs_nvtx_pop();
  timed = 0;
  int hook_failed = hooks->on_timed_end && hooks->on_timed_end(hooks->arg, err);
  if (opt->progress) print_progress(label, r, step, res->wall_s, 1);
  // The last block is saved even if the hook failed (its message is kept).
  if (prev && save_block(r, ops, self, opt, prev, hook_failed ? NULL : err)) goto done;
  if (hook_failed) goto done;
  rc = 0;

done:
  if (timed && hooks->on_timed_end) hooks->on_timed_end(hooks->arg, NULL); // loop failed
  res->steps = step;
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

int fs_replay_peak_contacts(const fsReplay* r, const fsBackendOps* ops, void* self) {
  int peak = 0;
  for (int w = 0; w < r->nworld; w++) {
    fsWorldStatus st;
    ops->world_status(self, w, &st);
    peak = st.peak_contacts > peak ? st.peak_contacts : peak;
  }
  return peak;
}

int fs_replay_report_worlds(const fsReplay* r, const fsBackendOps* ops, void* self,
                            int verbose_limit) {
  int nbad = 0;
  for (int w = 0; w < r->nworld; w++) {
    fsWorldStatus st;
    ops->world_status(self, w, &st);
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
      if (st.warnings[mjWARN_CONTACTFULL] && r->max_contacts)
        fprintf(stderr,
                " (it made up to %d contacts in a step, --max-contacts keeps %d; fix: "
                "--max-contacts %d or more)",
                st.peak_contacts, r->max_contacts, st.peak_contacts);
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
