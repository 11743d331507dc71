#include "src/cpu/replay_cpu.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/interrupt.h"
#include "src/base/mujoco_hooks.h"
#include "src/exec/pool.h"

typedef struct World {
  mjData* d;
  fsWorldStatus st;
  int nwarn_seen; // sum of d->warning[].number at the last check
  int ndone;      // steps of the current block completed
  char error[1024];
} World;

typedef enum { JOB_WARMUP, JOB_BLOCK } Job;

struct fsCpuReplay {
  const fsReplay* r;
  fsPool* pool;
  int nthread;
  World* worlds; // (N)
  Job job;
  fsBlock* block;      // the block being stepped
  atomic_int stop;     // a world failed: every worker stops
  fsCpuWorldHook hook; // world 0's observer (or NULL)
  void* hook_arg;
};

int fs_cpu_threads(const fsCpuReplay* c) {
  return c->nthread;
}

mjData* fs_cpu_world(fsCpuReplay* c, int w) {
  return c->worlds[w].d;
}

void fs_cpu_set_world0_hook(fsCpuReplay* c, fsCpuWorldHook fn, void* arg) {
  c->hook = fn;
  c->hook_arg = arg;
}

// Record the first MuJoCo warning a world raises (counters only ever grow).
static void note_warnings(World* wd, int step) {
  const mjData* d = wd->d;
  int total = 0;
  for (int i = 0; i < mjNWARNING; i++) total += d->warning[i].number;
  if (total == wd->nwarn_seen) return;
  wd->nwarn_seen = total;
  if (wd->st.first_warning >= 0) return;
  for (int i = 0; i < mjNWARNING; i++)
    if (d->warning[i].number > 0) {
      wd->st.first_warning = i;
      wd->st.first_warning_step = step;
      return;
    }
}

// Count a step whose Newton solve ran to opt.iterations in some island: MuJoCo keeps
// one statistics entry per iteration, its Newton's with line-search evaluations,
// noslip's without. And the step's contacts (the world's peak).
static void note_solver(World* wd, const mjModel* m) {
  const mjData* d = wd->d;
  if (d->ncon > wd->st.peak_contacts) wd->st.peak_contacts = d->ncon;
  int nisland = d->nisland ? d->nisland : (d->nefc ? 1 : 0);
  for (int k = 0; k < nisland && k < mjNISLAND; k++) {
    if (fs_mj_newton_iterations(d, k) >= m->opt.iterations) {
      wd->st.solver_limit++;
      return;
    }
  }
}

static int should_stop(fsCpuReplay* c) {
  return fs_interrupted() || atomic_load_explicit(&c->stop, memory_order_relaxed);
}

// Reset world w to the keyframe, switch adhesion on, and step the warm-up at the
// keyframe's controls (FlyGym's Simulation.reset + set_leg_adhesion_states + warmup).
static void warmup_world(fsCpuReplay* c, World* wd) {
  const fsReplay* r = c->r;
  const int w = (int)(wd - c->worlds);
  const mjModel* m = fs_replay_model(r, w);
  mjData* d = wd->d;
  fs_replay_start_world(r, w, d);
  memset(&wd->st, 0, sizeof wd->st);
  wd->st.first_warning = -1;
  wd->st.first_warning_step = INT_MIN;
  wd->nwarn_seen = 0;
  for (int s = 0; s < r->nwarmup && !should_stop(c); s++) {
    mj_step(m, d);
    note_warnings(wd, s - r->nwarmup);
    note_solver(wd, m);
  }
}

// Step world w through the block: ctrl from its targets, mj_step, record.
static void block_world(fsCpuReplay* c, int w) {
  const fsReplay* r = c->r;
  const mjModel* m = fs_replay_model(r, w);
  const fsReplayBinding* b = r->bind;
  World* wd = &c->worlds[w];
  mjData* d = wd->d;
  fsBlock* blk = c->block;
  const int A = b->nact, N = r->nworld, nq = (int)m->nq;
  int record = blk->series[FS_SERIES_QPOS_JOINT] || blk->series[FS_SERIES_TARGET] ||
               blk->series[FS_SERIES_ACTUATOR_FORCE] || blk->series[FS_SERIES_SITE_POS] ||
               blk->series[FS_SERIES_THORAX_POS];
  float* render = w < r->nrender ? blk->render_qpos : NULL;
  for (int k = 0; k < blk->nstep; k++) {
    if (should_stop(c)) return;
    int step = blk->step0 + k;
    const double* target = r->targets->value + (r->world_start[w] + step) * (long)A;
    for (int a = 0; a < A; a++) d->ctrl[b->actuator[a]] = target[a];
    mj_step(m, d);
    note_warnings(wd, step);
    note_solver(wd, m);
    if (w == 0 && c->hook) c->hook(c->hook_arg, d, step);
    if (record) fs_record_world_mj(&r->rec, m, d, k, w, N, blk->series);
    if (render) {
      float* q = render + ((size_t)k * r->nrender + w) * nq;
      for (int i = 0; i < nq; i++) q[i] = (float)d->qpos[i];
    }
    wd->ndone = k + 1;
  }
}

// Run one world's share of the job; a MuJoCo error stops the world and the run.
static void run_world(fsCpuReplay* c, int w) {
  World* wd = &c->worlds[w];
  fsMjTrap trap;
  fs_mj_trap_set(&trap);
  if (setjmp(trap.env)) {
    wd->st.fatal = 1;
    snprintf(wd->error, sizeof wd->error, "%s", trap.msg);
    atomic_store(&c->stop, 1);
  } else if (c->job == JOB_WARMUP) {
    warmup_world(c, wd);
  } else {
    block_world(c, w);
  }
  fs_mj_trap_set(NULL);
}

static void worker(void* arg, int t) {
  fsCpuReplay* c = arg;
  int N = c->r->nworld;
  int w0 = (int)((long)t * N / c->nthread), w1 = (int)((long)(t + 1) * N / c->nthread);
  for (int w = w0; w < w1; w++) {
    c->worlds[w].ndone = 0;
    run_world(c, w);
  }
}

// The first failed world's error, if any.
static int collect_error(fsCpuReplay* c, const char* when, fsError* err) {
  for (int w = 0; w < c->r->nworld; w++)
    if (c->worlds[w].st.fatal)
      return fs_fail(err, "%s: world %d: MuJoCo error during %s: %s", c->r->model_path, w, when,
                     c->worlds[w].error);
  return 0;
}

static int cpu_warmup(void* self, fsError* err) {
  fsCpuReplay* c = self;
  c->job = JOB_WARMUP;
  fs_pool_start(c->pool, worker, c);
  fs_pool_wait(c->pool);
  return collect_error(c, "warm-up", err);
}

static int cpu_begin_block(void* self, fsBlock* b, fsError* err) {
  (void)err;
  fsCpuReplay* c = self;
  c->job = JOB_BLOCK;
  c->block = b;
  fs_pool_start(c->pool, worker, c);
  return 0;
}

static int cpu_end_block(void* self, fsBlock* b, fsError* err) {
  fsCpuReplay* c = self;
  fs_pool_wait(c->pool);
  int ndone = b->nstep;
  for (int w = 0; w < c->r->nworld; w++)
    if (c->worlds[w].ndone < ndone) ndone = c->worlds[w].ndone;
  b->ndone = ndone;
  return collect_error(c, "the replay", err);
}

static void cpu_world_status(void* self, int w, fsWorldStatus* st) {
  fsCpuReplay* c = self;
  const World* wd = &c->worlds[w];
  *st = wd->st;
  for (int i = 0; i < mjNWARNING; i++) st->warnings[i] = wd->d->warning[i].number;
}

static int cpu_read_worlds(void* self, double* qpos, int* ncon, fsError* err) {
  (void)err;
  fsCpuReplay* c = self;
  int nq = (int)c->r->m->nq;
  for (int w = 0; w < c->r->nworld; w++) {
    memcpy(qpos + (size_t)w * nq, c->worlds[w].d->qpos, sizeof(double) * nq);
    ncon[w] = c->worlds[w].d->ncon;
  }
  return 0;
}

static void perturb(double* x, int n, int how, unsigned seed, unsigned w, unsigned k0) {
  for (int i = 0; i < n; i++)
    x[i] = how == FS_PERTURB_ROUND_F32
               ? (float)x[i]
               : nextafter(x[i], fs_perturb_up(seed, w, k0 + i) ? INFINITY : -INFINITY);
}

static int cpu_perturb_state(void* self, int how, unsigned seed, fsError* err) {
  (void)err;
  fsCpuReplay* c = self;
  const mjModel* m = c->r->m;
  for (int w = 0; w < c->r->nworld; w++) {
    mjData* d = c->worlds[w].d;
    perturb(d->qpos, (int)m->nq, how, seed, w, 0);
    perturb(d->qvel, (int)m->nv, how, seed, w, (unsigned)m->nq);
  }
  return 0;
}

static int cpu_cost(void* self, fsBackendCost* out, fsError* err) {
  (void)err;
  fsCpuReplay* c = self;
  const mjData* d = c->worlds[0].d;
  memset(out, 0, sizeof *out);
  out->world_bytes = (double)d->nbuffer + (double)d->narena; // mj_makeData's two blocks
  out->model_bytes = (double)c->r->m->nbuffer;
  return 0;
}

const fsBackendOps fs_cpu_ops = {
    "cpu",           cpu_warmup,        cpu_begin_block, cpu_end_block, cpu_world_status,
    cpu_read_worlds, cpu_perturb_state, cpu_cost,        NULL};

fsCpuReplay* fs_cpu_create(const fsReplay* r, int nthread, fsError* err) {
  fs_mujoco_install_hooks();
  fsCpuReplay* c = fs_calloc(err, "the CPU stepper", 1, sizeof *c);
  if (!c) return NULL;
  c->r = r;
  atomic_init(&c->stop, 0);
  if (nthread <= 0) nthread = fs_cpu_count();
  if (nthread > r->nworld) nthread = r->nworld;
  c->nthread = nthread;
  c->worlds = fs_calloc(err, "the worlds", (unsigned)r->nworld, sizeof(World));
  if (!c->worlds) goto fail;
  for (int w = 0; w < r->nworld; w++) {
    c->worlds[w].d = mj_makeData(r->m);
    if (!c->worlds[w].d) {
      fs_fail(err,
              "%s: cannot allocate MuJoCo data for world %d of %d (%.1f MiB each); fix: "
              "use fewer --worlds",
              r->model_path, w, r->nworld, (double)r->m->narena / (1024.0 * 1024.0));
      goto fail;
    }
  }
  c->pool = fs_pool_create(nthread, err);
  if (!c->pool) goto fail;
  return c;
fail:
  fs_cpu_destroy(c);
  return NULL;
}

void fs_cpu_destroy(fsCpuReplay* c) {
  if (!c) return;
  fs_pool_destroy(c->pool);
  if (c->worlds)
    for (int w = 0; w < c->r->nworld; w++)
      if (c->worlds[w].d) mj_deleteData(c->worlds[w].d);
  free(c->worlds);
  free(c);
}
