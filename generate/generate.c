// flysim generate's run (generate/generate.h).
#include "generate/generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/sys/clock.h"
#include "common/sys/files.h"
#include "common/sys/interrupt.h"
#include "common/inputs/model.h"
#include "common/replay/replay.h"
#include "generate/dataset.h"
#include "generate/ranks.h"
#include "generate/sample.h"
#include "generate/vary.h"

typedef struct Run {
  const fsGenSpec* s;
  const fsGenOptions* o;
  mjModel* m;
  fsGenClips clips;
  fsReplayBinding bind;
  fsRecordLayout rec;
  double* params; // (N x FS_NAXIS)
  int S, R, every, nwarmup, varies_model;
  fsDataset* ds;
  float* buf[FS_NSERIES]; // (block_worlds x R x C_s) the block's rows, world-major
  int nb;                 // worlds in the block being run
  char backend[32];
} Run;

static void run_free(Run* r) {
  fs_record_layout_free(&r->rec);
  fs_replay_binding_free(&r->bind);
  fs_gen_clips_free(&r->clips);
  if (r->m) mj_deleteModel(r->m);
  free(r->params);
  for (int k = 0; k < FS_NSERIES; k++) free(r->buf[k]);
}

static int prepare(Run* r, fsError* err) {
  const fsGenSpec* s = r->s;
  r->m = fs_model_load(s->model, err);
  if (!r->m) return -1;
  r->m->opt.disableflags |= s->disable;
  if (fs_gen_clips_load(s, r->m->opt.timestep, &r->clips, err) ||
      fs_replay_bind(r->m, s->model, &r->clips.clip[0], &r->bind, err) ||
      fs_record_layout_build(r->m, &r->bind, s->record, &r->rec, err))
    return -1;
  r->S = s->steps;
  r->every = s->record_every;
  r->R = s->steps / s->record_every;
  char what[4200];
  snprintf(what, sizeof what, "%s: warmup_sec", s->path);
  if (fs_steps_of_seconds(what, s->warmup_sec, r->m->opt.timestep, FS_GEN_MAX_STEPS, &r->nwarmup,
                          err))
    return -1;
  r->varies_model = fs_gen_varies_model(s);
  r->params =
      fs_calloc(err, "the worlds' parameters", (size_t)s->worlds * FS_NAXIS, sizeof(double));
  if (!r->params) return -1;
  for (int w = 0; w < s->worlds; w++) fs_gen_sample_world(s, w, r->params + (size_t)w * FS_NAXIS);
  for (int w = 0; w < s->worlds; w++) // before anything is written
    if (fs_gen_check_window(s, &r->clips, w, r->params + (size_t)w * FS_NAXIS, r->S, err))
      return -1;
  int bw = s->block_worlds < s->worlds ? s->block_worlds : s->worlds;
  for (int k = 0; k < FS_NSERIES; k++) {
    if (!r->rec.ncol[k]) continue;
    r->buf[k] = fs_calloc(err, "a block's rows", (size_t)bw * r->R * r->rec.ncol[k], sizeof(float));
    if (!r->buf[k]) return -1;
  }
  if (s->backend == FS_BACKEND_CPU)
    snprintf(r->backend, sizeof r->backend, "cpu");
  else
    snprintf(r->backend, sizeof r->backend, "%s:f%d", fs_backend_name(s->backend), s->precision);
  return 0;
}

// A world that went unstable: said on stderr, flagged in the file, kept.
static void report_world(int w, const fsWorldStatus* st, int iterations) {
  fprintf(stderr, "flysim generate: world %d (kept, flagged in /world_problem):", w);
  if (st->solver_limit)
    fprintf(stderr, " the solver ran to its %d iterations in %d steps;", iterations,
            st->solver_limit);
  if (st->solver_error) fprintf(stderr, " the solver lost rank in %d steps;", st->solver_error);
  for (int i = 0; i < mjNWARNING; i++)
    if (st->warnings[i]) fprintf(stderr, " %s x%d", fs_warning_name(i), st->warnings[i]);
  fprintf(stderr, "\n");
}

// The block hook: every record_every-th step of the block's worlds into their rows.
static int collect(void* arg, const fsBlock* b, fsError* err) {
  (void)err;
  Run* r = arg;
  for (int i = 0; i < b->ndone; i++) {
    int step = b->step0 + i;
    if ((step + 1) % r->every) continue;
    int row = (step + 1) / r->every - 1;
    if (row >= r->R) continue;
    for (int s = 0; s < FS_NSERIES; s++) {
      int C = r->rec.ncol[s];
      if (!C || !b->series[s]) continue;
      for (int w = 0; w < r->nb; w++)
        memcpy(r->buf[s] + ((size_t)w * r->R + row) * C, b->series[s] + ((size_t)i * r->nb + w) * C,
               (size_t)C * sizeof(float));
    }
  }
  return 0;
}

// The block's worlds' targets, one after the other (world w from row w x S).
static int block_targets(Run* r, int w0, fsTargets* bt, fsError* err) {
  const fsTargets* c0 = &r->clips.clip[0];
  memset(bt, 0, sizeof *bt);
  bt->nstep = r->nb * r->S;
  bt->ndof = c0->ndof;
  bt->timestep = c0->timestep;
  bt->source_timestep = c0->source_timestep;
  bt->names = c0->names;
  bt->path = c0->path;
  bt->value = fs_calloc(err, "a block's targets", (size_t)bt->nstep * bt->ndof, sizeof(double));
  if (!bt->value) return -1;
  for (int w = 0; w < r->nb; w++)
    if (fs_gen_world_targets(r->s, &r->clips, w0 + w, r->params + (size_t)(w0 + w) * FS_NAXIS, r->S,
                             bt->value + (size_t)w * r->S * bt->ndof, err))
      return -1;
  return 0;
}

// Run block k and write it. Returns 0, 1 if interrupted (nothing written), -1.
static int run_block(Run* r, int k, fsGenResult* res, fsError* err) {
  const fsGenSpec* s = r->s;
  int w0 = k * s->block_worlds;
  r->nb = w0 + s->block_worlds <= s->worlds ? s->block_worlds : s->worlds - w0;
  fsTargets bt;
  fsReplay plan;
  memset(&plan, 0, sizeof plan);
  fsWorldStatus* st = NULL;
  fsReplayBatch rb;
  memset(&rb, 0, sizeof rb);
  int rc = -1;
  if (block_targets(r, w0, &bt, err) ||
      fs_replay_plan(&plan, r->m, s->model, &bt, &r->bind, r->nb, r->S, r->nwarmup, err) ||
      fs_replay_set_record(&plan, s->record, 0, err))
    goto done;
  plan.max_contacts = s->max_contacts;
  plan.max_candidates = s->max_candidates;
  fsGenInit gi = {s, r->m, &r->bind, r->params + (size_t)w0 * FS_NAXIS, w0, r->nb};
  plan.setup = r->varies_model ? fs_gen_setup : NULL;
  plan.init_worlds = fs_gen_init_worlds;
  plan.arg = &gi;
  if (fs_replay_open(&plan, s->backend, s->precision, r->o->threads, &rb, err)) goto done;
  fsRunOptions ro = {
      NULL, fs_replay_block_steps(r->nb, r->S), 0, "generate", NULL, collect, r, NULL, NULL, NULL};
  fsRunResult rr;
  if (fs_replay_run(&plan, &rb, &ro, &rr, err)) goto done;
  res->wall_s += rr.wall_s;
  if (rr.interrupted || rr.steps < r->S) {
    res->interrupted = rr.interrupted ? rr.interrupted : 2;
    rc = 1;
    goto done;
  }
  res->world_steps += (long long)r->nb * r->S;
  st = fs_calloc(err, "world health", (size_t)r->nb, sizeof *st);
  if (!st || fs_replay_health(&plan, &rb, st, err)) goto done;
  for (int w = 0; w < r->nb; w++) {
    if (!fs_world_has_problem(&st[w])) continue;
    if (res->problem_worlds++ < 20) report_world(w0 + w, &st[w], r->m->opt.iterations);
  }
  rc = fs_dataset_write_block(r->ds, k, r->buf, st, err);
done:
  free(st);
  fs_replay_close(&rb);
  fs_replay_plan_free(&plan);
  free(bt.value);
  return rc;
}

static void progress(const Run* r, const fsGenResult* res, int done, int owned, double t0) {
  double el = fs_clock_s() - t0, rate = el > 0 ? res->world_steps / el : 0;
  int left_blocks = owned - done;
  double left = rate > 0 ? (double)left_blocks * r->s->block_worlds * r->S / rate : 0;
  fprintf(stderr,
          "\r\033[Kflysim generate: block %d/%d, %.3g world-steps/s, %.1f MB written, %d:%02d "
          "left",
          done, owned, rate, fs_dataset_bytes(r->ds) / 1e6, (int)left / 60, (int)left % 60);
  fflush(stderr);
}

int fs_gen_run(const fsGenSpec* s, const fsGenOptions* o, fsGenResult* res, FILE* out,
               fsError* err) {
  memset(res, 0, sizeof *res);
  Run r;
  memset(&r, 0, sizeof r);
  r.s = s;
  r.o = o;
  int rc = -1;
  if (prepare(&r, err) || fs_make_dirs(o->out, "--out", err)) goto done;
  const int rank = o->ranks ? o->ranks->rank : 0, nrank = o->ranks ? o->ranks->size : 1;
  fsDatasetSpec ds = {o->out,   s,         &r.rec, r.m,  &r.bind, r.R, r.every * r.m->opt.timestep,
                      r.params, r.backend, rank,   nrank};
  int complete = o->resume ? fs_dataset_complete(&ds, err) : 0;
  if (complete < 0) goto done;
  if (complete) { // --resume again after the end: nothing to do, and nothing wrong
    snprintf(res->path, sizeof res->path, "%s/dataset.h5", o->out);
    if (out) fprintf(out, "%s is complete already: nothing to resume\n", res->path);
    res->complete = 1;
    rc = 0;
    goto done;
  }
  r.ds = o->resume ? fs_dataset_resume(&ds, err) : fs_dataset_create(&ds, err);
  if (!r.ds) goto done;
  res->blocks = fs_dataset_nblock(r.ds);
  int owned = 0;
  for (int k = 0; k < res->blocks; k++) {
    owned += fs_dataset_owns(r.ds, k);
    res->blocks_done_before += fs_dataset_owns(r.ds, k) && fs_dataset_block_done(r.ds, k);
  }
  if (out) {
    fprintf(out,
            "generate %d worlds x %d steps (every %d-th recorded: %d rows), %d blocks of %d "
            "worlds on %s",
            s->worlds, s->steps, s->record_every, r.R, res->blocks, s->block_worlds, r.backend);
    if (nrank > 1) fprintf(out, ", %d MPI ranks (block k on rank k mod %d)", nrank, nrank);
    fprintf(out, "\n");
    fflush(out);
  }
  double t0 = fs_clock_s();
  int done = res->blocks_done_before, failed = 0;
  for (int k = 0; k < res->blocks && !failed && !res->interrupted; k++) {
    if (!fs_dataset_owns(r.ds, k) || fs_dataset_block_done(r.ds, k)) continue;
    int b = run_block(&r, k, res, err);
    if (b < 0) failed = 1;
    if (b == 0) {
      res->blocks_run++;
      done++;
      if (o->progress) progress(&r, res, done, owned, t0);
    }
  }
  if (o->progress) fprintf(stderr, "\r\033[K");
  res->bytes = fs_dataset_bytes(r.ds);
  fsError close_err;
  int mine = fs_dataset_close(r.ds, &close_err);
  r.ds = NULL;
  if (mine < 0 && !failed) {
    *err = close_err;
    failed = 1;
  }
  // Every rank's figures; the merge once every rank has its blocks.
  fsRanks one = {0, 1, 0, 0};
  const fsRanks* rk = o->ranks ? o->ranks : &one;
  int all_done = fs_ranks_reduce(rk, mine == 1 && !failed && !res->interrupted, 1) > 0.5;
  int any_failed = fs_ranks_reduce(rk, failed, 2) > 0.5;
  res->blocks_run = (int)fs_ranks_reduce(rk, res->blocks_run, 0);
  res->blocks_done_before = (int)fs_ranks_reduce(rk, res->blocks_done_before, 0);
  res->world_steps = (long long)fs_ranks_reduce(rk, (double)res->world_steps, 0);
  res->bytes = fs_ranks_reduce(rk, res->bytes, 0);
  res->problem_worlds = (int)fs_ranks_reduce(rk, res->problem_worlds, 0);
  res->wall_s = fs_ranks_reduce(rk, res->wall_s, 2);
  res->interrupted = (int)fs_ranks_reduce(rk, res->interrupted, 2);
  fs_dataset_partial_path(o->out, rank, nrank, res->path, sizeof res->path);
  int merge_failed =
      all_done && rank == 0 && fs_dataset_merge(&ds, res->path, sizeof res->path, err);
  merge_failed = fs_ranks_reduce(rk, merge_failed, 2) > 0.5;
  res->complete = all_done && !merge_failed;
  if (!failed && any_failed && rank == 0)
    fs_fail(err, "another rank failed (see its message); what is done stays: --resume");
  rc = failed || any_failed || merge_failed ? -1 : 0;
done:
  fs_dataset_close(r.ds, NULL);
  run_free(&r);
  return rc;
}
