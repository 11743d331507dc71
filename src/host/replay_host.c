// The host replay backend (src/host/replay_host.h): the stage code on a thread pool.
#include "src/host/replay_host.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/interrupt.h"
#include "src/exec/pool.h"
#include "src/model/worlds.h"
#include "src/host/host.h"
#include "src/model/model.h"
#include "src/model/onchip.h"
#include "src/model/record.h"
#include "src/engine/stage_forward.h"

typedef enum { JOB_WARMUP, JOB_BLOCK } Job;

struct fsHostReplay {
  const fsReplay* r;
  fsModel m;
  fsModel* wm; // (N) each world's model (fsReplay.world_model), or NULL
  fsWorlds b;  // (N worlds)
  fsPool* pool;
  int nthread;
  fsWorldStatus* st; // (N)
  int* nseen;        // (N) sum of the world's warning counters at the last check
  int* ndone;        // (N) steps of the current block completed
  Job job;
  fsBlock* block;
  fsChipPlan chip; // the GPU's on-chip plan (src/model/onchip.h), over ...
  char* chip_mem;  // (nthread x chip.bytes) a region per thread
  int poison;      // FLYSIM_ONCHIP_POISON=1: the regions filled with NaN before every step
};

// World w's view on thread t: the plan's fields in the thread's region, as the GPU's
// step kernel has them in shared memory.
static fsData world_view(const fsHostReplay* h, int w, int t) {
  fsData d;
  char* chip = h->chip.bytes ? h->chip_mem + (size_t)t * h->chip.bytes : NULL;
  fs_data_on_chip(&h->m, &h->b.base, w, &h->chip, chip, &d);
  return d;
}

// A step of world w on thread t's region (every intermediate is written before it is
// read within a step: poisoning the region before each step must change nothing).
static void step_world(const fsHostReplay* h, const fsModel* m, fsData* d, int t) {
  if (h->poison && h->chip.bytes)
    memset(h->chip_mem + (size_t)t * h->chip.bytes, 0xff, (size_t)h->chip.bytes);
  fs_step(m, d);
}

// Record the first warning a world raises (counters only ever grow), as the GPU's
// health kernel does.
static void note_warnings(fsHostReplay* h, int w, const fsData* d, int step) {
  int total = 0;
  for (int k = 0; k < FS_NWARNING; k++) total += d->warning_number[k];
  if (total == h->nseen[w]) return;
  h->nseen[w] = total;
  fsWorldStatus* st = &h->st[w];
  if (st->first_warning >= 0) return;
  for (int k = 0; k < FS_NWARNING; k++)
    if (d->warning_number[k] > 0) {
      st->first_warning = k;
      st->first_warning_step = step;
      return;
    }
}

// Steps whose Newton solve (an island's) ran to the iteration limit; failed solves; the
// most contacts the collision made (those kept and those the buffer dropped).
static void note_solver(fsHostReplay* h, int w, const fsData* d) {
  int made = d->ncon[0] + d->contact_overflow[0];
  if (made > h->st[w].peak_contacts) h->st[w].peak_contacts = made;
  int ni = d->nisland[0] ? d->nisland[0] : 1, hit = 0;
  for (int k = 0; k < ni && k < FS_NISLAND; k++)
    hit |= d->solver_niter[k] - d->solver_nnoslip[k] >= h->m.iterations;
  h->st[w].solver_limit += hit;
  h->st[w].solver_error += d->solver_error[0] != 0;
}

// World w's model: its own, or the plan's.
static const fsModel* world_model(const fsHostReplay* h, int w) {
  return h->wm ? &h->wm[w] : &h->m;
}

static void warmup_world(fsHostReplay* h, int w, int t) {
  const fsReplay* r = h->r;
  fsData d = world_view(h, w, t);
  const fsModel* m = world_model(h, w);
  for (int s = 0; s < r->nwarmup && !fs_interrupted(); s++) {
    step_world(h, m, &d, t);
    note_warnings(h, w, &d, s - r->nwarmup);
    note_solver(h, w, &d);
  }
}

// The plan's record layout writing into the block's buffers (none when not recording).
static fsRecordCols record_cols(const fsReplay* r, const fsBlock* b) {
  fsRecordCols c;
  memset(&c, 0, sizeof c);
  int any = 0;
  for (int k = 0; k < FS_NSERIES; k++) any |= b->series[k] != NULL;
  if (!any) return c;
  c.ncol_total = r->rec.ncol_total;
  for (int k = 0; k < FS_NSERIES; k++) {
    c.col0[k] = r->rec.col0[k];
    c.ncol[k] = r->rec.ncol[k];
    c.out[k] = b->series[k];
  }
  c.src = r->rec.src;
  c.index = r->rec.index;
  c.geom_leg = r->rec.geom_leg;
  return c;
}

// Step world w through the block: ctrl from its targets, the step, record.
static void block_world(fsHostReplay* h, int w, int t) {
  const fsReplay* r = h->r;
  const fsReplayBinding* bind = r->bind;
  fsBlock* blk = h->block;
  const int A = bind->nact, N = r->nworld, nq = h->m.nq;
  fsData d = world_view(h, w, t);
  const fsModel* m = world_model(h, w);
  fsRecordCols cols = record_cols(r, blk);
  float* render = w < r->nrender ? blk->render_qpos : NULL;
  for (int k = 0; k < blk->nstep; k++) {
    if (fs_interrupted()) return;
    int step = blk->step0 + k;
    const double* target = r->targets->value + (r->world_start[w] + step) * (long)A;
    for (int a = 0; a < A; a++) d.ctrl[bind->actuator[a]] = (fsReal)target[a];
    step_world(h, m, &d, t);
    note_warnings(h, w, &d, step);
    note_solver(h, w, &d);
    for (int c = 0; c < cols.ncol_total; c++) fs_record_column(&cols, &d, c, k, w, N);
    if (render) {
      float* q = render + ((size_t)k * r->nrender + w) * nq;
      for (int i = 0; i < nq; i++) q[i] = (float)d.qpos[i];
    }
    h->ndone[w] = k + 1;
  }
}

static void worker(void* arg, int t) {
  fsHostReplay* h = arg;
  int N = h->r->nworld;
  int w0 = (int)((long)t * N / h->nthread), w1 = (int)((long)(t + 1) * N / h->nthread);
  for (int w = w0; w < w1; w++) {
    h->ndone[w] = 0;
    if (h->job == JOB_WARMUP)
      warmup_world(h, w, t);
    else
      block_world(h, w, t);
  }
}

// Every world <- the keyframe (or qpos0) with adhesion on (src/cpu/replay_cpu.c's
// reset), through MuJoCo's data; the health counters from zero.
static int reset_worlds(fsHostReplay* h, fsError* err) {
  const fsReplay* r = h->r;
  mjData* md = mj_makeData(r->m);
  if (!md) return fs_fail(err, "%s: cannot allocate MuJoCo data", r->model_path);
  int per_world = r->world_model || r->init_world;
  fs_replay_start_world(r, 0, md);
  int rc = 0;
  for (int w = 0; w < r->nworld && !rc; w++) {
    if (per_world && w > 0) fs_replay_start_world(r, w, md);
    rc = fs_worlds_from_mj(&h->m, &h->b, w, fs_replay_model(r, w), md, FS_STAGE_STATE, err);
    memset(&h->st[w], 0, sizeof h->st[w]);
    h->st[w].first_warning = -1;
    h->st[w].first_warning_step = INT_MIN;
    h->nseen[w] = 0;
  }
  mj_deleteData(md);
  return rc;
}

static int host_warmup(void* self, fsError* err) {
  fsHostReplay* h = self;
  if (reset_worlds(h, err)) return -1;
  h->job = JOB_WARMUP;
  fs_pool_start(h->pool, worker, h);
  fs_pool_wait(h->pool);
  return 0;
}

static int host_begin_block(void* self, fsBlock* b, fsError* err) {
  (void)err;
  fsHostReplay* h = self;
  h->job = JOB_BLOCK;
  h->block = b;
  fs_pool_start(h->pool, worker, h);
  return 0;
}

static int host_end_block(void* self, fsBlock* b, fsError* err) {
  (void)err;
  fsHostReplay* h = self;
  fs_pool_wait(h->pool);
  int ndone = b->nstep;
  for (int w = 0; w < h->r->nworld; w++)
    if (h->ndone[w] < ndone) ndone = h->ndone[w];
  b->ndone = ndone;
  return 0;
}

static void host_world_status(void* self, int w, fsWorldStatus* st) {
  fsHostReplay* h = self;
  *st = h->st[w];
  fsData d = fs_worlds_view(&h->m, &h->b, w);
  for (int k = 0; k < FS_NWARNING && k < mjNWARNING; k++) st->warnings[k] = d.warning_number[k];
}

static int host_read_worlds(void* self, double* qpos, int* ncon, fsError* err) {
  (void)err;
  fsHostReplay* h = self;
  int nq = h->m.nq;
  for (int w = 0; w < h->r->nworld; w++) {
    fsData d = fs_worlds_view(&h->m, &h->b, w);
    for (int i = 0; i < nq; i++) qpos[(size_t)w * nq + i] = d.qpos[i];
    ncon[w] = d.ncon[0];
  }
  return 0;
}

static void perturb(fsReal* x, int n, int how, unsigned seed, unsigned w, unsigned k0) {
  for (int i = 0; i < n; i++)
    x[i] = how == FS_PERTURB_ROUND_F32 ? (fsReal)(float)x[i]
                                       : fs_nextafter(x[i], fs_perturb_up(seed, w, k0 + i));
}

static int host_perturb_state(void* self, int how, unsigned seed, fsError* err) {
  (void)err;
  fsHostReplay* h = self;
  for (int w = 0; w < h->r->nworld; w++) {
    fsData d = fs_worlds_view(&h->m, &h->b, w);
    perturb(d.qpos, h->m.nq, how, seed, w, 0);
    perturb(d.qvel, h->m.nv, how, seed, w, (unsigned)h->m.nq);
  }
  return 0;
}

static int host_cost(void* self, fsBackendCost* out, fsError* err) {
  (void)err;
  fsHostReplay* h = self;
  memset(out, 0, sizeof *out);
  out->world_bytes = (double)fs_world_bytes(&h->m);
  out->contacts = h->m.nconmax;
  out->model_bytes = (double)fs_model_bytes(&h->m);
  out->chip_bytes = h->chip.bytes;
  return 0;
}

const fsBackendOps fs_host_ops = {"host",
                                  host_warmup,
                                  host_begin_block,
                                  host_end_block,
                                  host_world_status,
                                  host_read_worlds,
                                  host_perturb_state,
                                  host_cost,
                                  NULL};

// The GPU's on-chip plan (FLYSIM_ONCHIP_BYTES or its default budget) and a region per
// thread; FLYSIM_ONCHIP_POISON (a test switch) 1 fills it with NaN before every step.
static int set_chip(fsHostReplay* h, fsError* err) {
  long budget = fs_chip_budget(FS_CHIP_DEFAULT_BYTES, fs_chip_all_bytes(&h->m), err);
  if (budget < 0) return -1;
  fs_chip_plan(&h->m, budget, &h->chip);
  const char* p = getenv("FLYSIM_ONCHIP_POISON");
  if (p && *p && strcmp(p, "0") && strcmp(p, "1"))
    return fs_fail(err, "FLYSIM_ONCHIP_POISON='%s' is not 0 or 1; fix: unset it (a test switch)",
                   p);
  h->poison = p && !strcmp(p, "1");
  if (!h->chip.bytes) return 0;
  h->chip_mem = fs_calloc(err, "the on-chip regions", (size_t)h->nthread, (size_t)h->chip.bytes);
  return h->chip_mem ? 0 : -1;
}

fsHostReplay* fs_host_create(const fsReplay* r, int nthread, fsError* err) {
  fsHostReplay* h = fs_calloc(err, "the host stepper", 1, sizeof *h);
  if (!h) return NULL;
  h->r = r;
  if (nthread <= 0) nthread = fs_cpu_count();
  if (nthread > r->nworld) nthread = r->nworld;
  h->nthread = nthread;
  if (fs_host_test_switches(err)) goto fail;
  if (fs_model_build_bounded(r->m, r->model_path, r->max_contacts, &h->m, err)) goto fail;
  if (fs_worlds_alloc(&h->m, r->nworld, &h->b, err)) goto fail;
  if (r->world_model) {
    h->wm = fs_calloc(err, "the worlds' models", (size_t)r->nworld, sizeof *h->wm);
    if (!h->wm) goto fail;
    for (int w = 0; w < r->nworld; w++)
      if (fs_model_build_bounded(r->world_model[w], r->model_path, r->max_contacts, &h->wm[w], err))
        goto fail;
  }
  h->st = fs_calloc(err, "world health", (size_t)r->nworld, sizeof *h->st);
  h->nseen = fs_calloc(err, "world health", (size_t)r->nworld, sizeof(int));
  h->ndone = fs_calloc(err, "world health", (size_t)r->nworld, sizeof(int));
  if (!h->st || !h->nseen || !h->ndone) goto fail;
  for (int w = 0; w < r->nworld; w++) {
    h->st[w].first_warning = -1;
    h->st[w].first_warning_step = INT_MIN;
  }
  if (set_chip(h, err)) goto fail;
  h->pool = fs_pool_create(nthread, err);
  if (!h->pool) goto fail;
  return h;
fail:
  fs_host_destroy(h);
  return NULL;
}

void fs_host_destroy(fsHostReplay* h) {
  if (!h) return;
  fs_pool_destroy(h->pool);
  free(h->chip_mem);
  free(h->st);
  free(h->nseen);
  free(h->ndone);
  fs_worlds_free(&h->b);
  if (h->wm)
    for (int w = 0; w < h->r->nworld; w++) fs_model_free(&h->wm[w]);
  free(h->wm);
  fs_model_free(&h->m);
  free(h);
}

int fs_host_threads(const fsHostReplay* h) {
  return h->nthread;
}

void fs_host_describe(const fsHostReplay* h, char* out, size_t n) {
  char world[128];
  fs_world_describe(&h->m, world, sizeof world);
  int k = snprintf(out, n,
                   "%d thread%s, %s, %s, %d of %d intermediates (%d B of %.1f KiB) a world "
                   "on-chip as on the GPU%s",
                   h->nthread, h->nthread == 1 ? "" : "s", FS_REAL_NAME, world, h->chip.nfield,
                   h->chip.nallow, h->chip.bytes, (double)h->chip.allow_bytes / 1024.0,
                   h->poison ? ", poisoned every step by FLYSIM_ONCHIP_POISON" : "");
  if (fs_test_perturb_passive != 0 && k > 0 && (size_t)k < n)
    snprintf(out + k, n - k, ", passive force x (1 + %g) by FLYSIM_PERTURB_PASSIVE (a test switch)",
             fs_test_perturb_passive);
}
