// The cpu backend (common/api/backend.h): MuJoCo's own mj_step, one mjData a world, the
// worlds on the worker pool, each thread a contiguous range of them.
//
// Views are the batch's own copies of mjData arrays, every world's (N x size), made the
// first time a view is asked (then "active"): before a world's steps its writable active
// views are copied into its mjData, after each step every active view is copied out of
// it, and a reset refreshes the reset worlds'. Nothing here changes MuJoCo's arithmetic:
// a world steps as mj_step on its mjData alone would (ctrl from the control sequence
// written as a caller would write it).
//
// A MuJoCo error in a world's step (mju_error) jumps back to the world's guard
// (common/base/mujoco_hooks.h): the world is stopped (health: fatal, FS_PROBLEM_FAILED) and
// stays so until its reset, the other workers stop at their next step, and the call
// fails naming the world.
#include "cpu/backend_cpu.h"

#include <math.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mjxmacro.h>

#include "common/base/memory.h"
#include "common/api/backend.h"
#include "common/base/error.h"
#include "common/base/mujoco_hooks.h"
#include "common/engine/fields.h"
#include "cpu/pool.h"
#include "common/model/health.h"

_Static_assert(mjNWARNING == FS_NWARNING, "MuJoCo's warning kinds are the health's");
_Static_assert(_Generic((fsReal)0, mjtNum : 1, default : 0),
               "the cpu backend's real is MuJoCo's: FS_CTRL_SEQ_APPLY writes mjData's ctrl");

//---------------------------------- what MuJoCo's data says ---------------------------------------

int fs_cpu_newton_iterations(const mjData* d, int island) {
  int n = d->solver_niter[island] < mjNSOLVER ? d->solver_niter[island] : mjNSOLVER, newton = 0;
  for (int i = 0; i < n; i++) newton += d->solver[island * mjNSOLVER + i].neval > 0;
  return newton;
}

int fs_cpu_solver_iterations(const mjModel* m, const mjData* d, int it[2]) {
  int nisland = d->nisland ? d->nisland : (d->nefc ? 1 : 0), limit = 0;
  it[0] = it[1] = 0;
  for (int i = 0; i < nisland && i < mjNISLAND; i++) {
    int newton = fs_cpu_newton_iterations(d, i);
    it[0] += newton;
    it[1] += d->solver_niter[i] - newton;
    if (newton >= m->opt.iterations) limit = 1;
  }
  return limit;
}

void fs_cpu_group_forces(const mjModel* m, const mjData* d, const int* geom_group, double* out) {
  for (int i = 0; i < d->ncon; i++) {
    const mjContact* con = &d->contact[i];
    if (con->efc_address < 0 || con->exclude) continue;
    int l1 = con->geom[1] >= 0 ? geom_group[con->geom[1]] : -1;
    int l0 = con->geom[0] >= 0 ? geom_group[con->geom[0]] : -1;
    if (l1 < 0 && l0 < 0) continue;
    mjtNum f[6], fw[3];
    mj_contactForce(m, d, i, f);             // contact frame, on geom 1 from geom 0
    mju_mulMatTVec(fw, con->frame, f, 3, 3); // world frame
    int group = l1 >= 0 ? l1 : l0, sign = l1 >= 0 ? 1 : -1;
    for (int k = 0; k < 3; k++) out[3 * group + k] += sign * fw[k];
  }
}

//---------------------------------- the backend's state -------------------------------------------

// mjData's arrays, one each of MuJoCo's X-macro, then the scalars time and ncon.
enum {
#define X(type, field, rows, cols) FIELD_##field,
  MJDATA_POINTERS
#undef X
      FIELD_TIME,
  FIELD_NCON,
  NFIELD
};

// A view of mjData field i: its copy of every world's (the view's memory) once active.
typedef struct Field {
  const char* name;
  int dtype;    // fsDtype; -1: neither mjtNum nor int (not a view)
  int scalar;   // time, ncon: one value a world
  int writable; // an input (fs_view_writable), copied into mjData before a world's steps
  int64_t rows, cols;
  size_t bytes; // a world's
  char* copy;   // (N x rows x cols) the view, or NULL: not asked yet
} Field;

typedef struct World {
  mjData* d;
  const mjModel* m; // its own model (set_world_model), or NULL: the batch's
  int fatal;        // MuJoCo stopped it: not stepped until its reset
  int failed_now;   // ... during the current step call
  int k;            // the step of the call it is taking
  char error[1024]; // MuJoCo's message
} World;

typedef struct Recording {
  fsRecordCols cols; // the library's arrays
  int has_group;     // some column is group_contact_force
} Recording;

typedef struct Cpu {
  const mjModel* m; // the batch's (the library's copy)
  const char* name; // the model's, for messages
  int N, nthread;
  fsPool* pool;
  World* worlds; // (N)
  Field fields[NFIELD];
  int active[NFIELD]; // the active views' fields, nactive of them
  int nactive;
  fsHealthArrays h;
  fsCtrlSeq seq; // the control sequence (nrow 0: none)
  int nrec;
  Recording rec[FS_MAX_RECORDINGS];
  // the step call being run (forward: mj_forward alone, no step)
  int64_t step;
  int nstep;
  float* const* out;
  int forward;
  atomic_int stop; // a world failed: every worker stops
} Cpu;

static const mjModel* model_of(const Cpu* c, int w) {
  return c->worlds[w].m ? c->worlds[w].m : c->m;
}

//---------------------------------- views ---------------------------------------------------------

// Field i's address in world data d (a scalar's own).
static void* field_addr(int i, mjData* d) {
  switch (i) {
#define X(type, field, rows, cols)                                                                 \
  case FIELD_##field:                                                                              \
    return (void*)d->field;
    MJDATA_POINTERS
#undef X
  case FIELD_TIME:
    return &d->time;
  default:
    return &d->ncon;
  }
}

static void set_field(Field* f, const char* name, const char* type, int64_t rows, int64_t cols) {
  f->name = name;
  f->dtype = !strcmp(type, "mjtNum") ? FS_DTYPE_F64 : !strcmp(type, "int") ? FS_DTYPE_I32 : -1;
  f->rows = rows;
  f->cols = cols;
  f->bytes = (size_t)(rows * cols) * (f->dtype == FS_DTYPE_F64 ? sizeof(double) : sizeof(int));
  f->writable = fs_view_writable(name);
}

// Every field's name, type and shape (m's sizes).
static void init_fields(Cpu* c) {
  const mjModel* m = c->m;
#define X(type, field, rows, cols)                                                                 \
  set_field(&c->fields[FIELD_##field], #field, #type, (int64_t)m->rows, cols);
  MJDATA_POINTERS
#undef X
  set_field(&c->fields[FIELD_TIME], "time", "mjtNum", 1, 1);
  set_field(&c->fields[FIELD_NCON], "ncon", "int", 1, 1);
  c->fields[FIELD_TIME].scalar = c->fields[FIELD_NCON].scalar = 1;
}

// World w's active views out of its mjData.
static void views_out(Cpu* c, int w) {
  mjData* d = c->worlds[w].d;
  for (int a = 0; a < c->nactive; a++) {
    const Field* f = &c->fields[c->active[a]];
    if (f->bytes) memcpy(f->copy + (size_t)w * f->bytes, field_addr(c->active[a], d), f->bytes);
  }
}

// World w's writable active views into its mjData.
static void views_in(Cpu* c, int w) {
  mjData* d = c->worlds[w].d;
  for (int a = 0; a < c->nactive; a++) {
    const Field* f = &c->fields[c->active[a]];
    if (f->writable && f->bytes)
      memcpy(field_addr(c->active[a], d), f->copy + (size_t)w * f->bytes, f->bytes);
  }
}

static int find_field(const Cpu* c, const char* name) {
  for (int i = 0; i < NFIELD; i++)
    if (!strcmp(c->fields[i].name, name)) return i;
  return -1;
}

// Field i's view, made from every world's data the first time.
static int activate(Cpu* c, int i, fsError* err) {
  Field* f = &c->fields[i];
  if (f->copy) return 0;
  f->copy = fs_calloc(err, "a view of every world", (unsigned long long)c->N * f->bytes, 1);
  if (!f->copy) return -1;
  for (int w = 0; w < c->N && f->bytes; w++)
    memcpy(f->copy + (size_t)w * f->bytes, field_addr(i, c->worlds[w].d), f->bytes);
  c->active[c->nactive++] = i;
  return 0;
}

static int cpu_view(void* self, const char* name, int extra, fsView* out, fsError* err) {
  Cpu* c = self;
  if (!name) {
    fs_extra_view(&c->h, c->N, extra, FS_MEMORY_HOST, 0, out);
    return 0;
  }
  int i = find_field(c, name);
  if (i < 0)
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "%s: the cpu backend has no view '%s'; fix: an mjData array's name "
                          "(qpos, ctrl, xpos, sensordata, ...), time, ncon, problems or "
                          "solver_iterations (contacts and constraint rows: fs_batch_mjdata)",
                          c->name, name);
  const Field* f = &c->fields[i];
  if (f->dtype < 0)
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "%s: mjData's '%s' is neither mjtNum nor int, which views are; fix: "
                          "read it from each world's fs_batch_mjdata between steps",
                          c->name, name);
  if (activate(c, i, err)) return -1;
  fs_field_view(name, (fsDtype)f->dtype, f->rows, f->cols, f->scalar, c->N, out);
  out->data = f->copy;
  out->memory = FS_MEMORY_HOST;
  out->device = 0;
  return 0;
}

//---------------------------------- stepping ------------------------------------------------------

// World w's health after the step at step count `step`: MuJoCo's warning counters, its
// contacts, its islands' Newton solves (at the limit or not) and iterations.
static void note_step(Cpu* c, const mjModel* m, int w, long long step) {
  const mjData* d = c->worlds[w].d;
  int warnings[FS_NWARNING], it[2];
  for (int k = 0; k < FS_NWARNING; k++) warnings[k] = d->warning[k].number;
  fsStepReport s = {warnings, d->ncon, 0, 0, 0, 0, 0};
  s.limit = fs_cpu_solver_iterations(m, d, it);
  s.newton = it[0];
  s.noslip = it[1];
  fs_health_note(&c->h, w, &s, step);
}

// Recording r's row of world w at step k of the call, or NULL: not recorded.
static float* record_row(const Cpu* c, int r, int w, int k) {
  const fsRecordCols* l = &c->rec[r].cols;
  if (!c->out || !c->out[r] || w < l->world0 || w >= l->world0 + l->nworld) return NULL;
  return c->out[r] + ((size_t)k * l->nworld + (size_t)(w - l->world0)) * l->ncol;
}

// Every recording's columns of world w after step k of the call.
static void record_world(const Cpu* c, const mjModel* m, int w, int k) {
  const mjData* d = c->worlds[w].d;
  for (int r = 0; r < c->nrec; r++) {
    float* row = record_row(c, r, w, k);
    if (!row) continue;
    const fsRecordCols* l = &c->rec[r].cols;
    double group[3 * FS_RECORD_MAX_GROUPS] = {0};
    if (c->rec[r].has_group) fs_cpu_group_forces(m, d, l->geom_group, group);
    const double* src[FS_NSRC] = {[FS_SRC_QPOS] = d->qpos,
                                  [FS_SRC_CTRL] = d->ctrl,
                                  [FS_SRC_ACTUATOR_FORCE] = d->actuator_force,
                                  [FS_SRC_SITE_XPOS] = d->site_xpos,
                                  [FS_SRC_XPOS] = d->xpos,
                                  [FS_SRC_XQUAT] = d->xquat,
                                  [FS_SRC_QVEL] = d->qvel,
                                  [FS_SRC_SOLVER] = NULL,
                                  [FS_SRC_GROUP_FORCE] = group,
                                  [FS_SRC_SENSORDATA] = d->sensordata};
    for (int col = 0; col < l->ncol; col++) {
      int s = l->src[col], i = l->index[col];
      row[col] = s == FS_SRC_SOLVER ? (float)c->h.iterations[2 * w + i] : (float)src[s][i];
    }
  }
}

// A stopped world's rows of the call: NaN (it does not step).
static void record_stopped(const Cpu* c, int w) {
  for (int r = 0; r < c->nrec; r++)
    for (int k = 0; k < c->nstep; k++) {
      float* row = record_row(c, r, w, k);
      for (int col = 0; row && col < c->rec[r].cols.ncol; col++) row[col] = NAN;
    }
}

// World w's steps of the call: ctrl from the control sequence (when one is set), the
// step, the health, the views, the recordings. The views go in once: after each step they
// are the world's data again.
static void step_world(Cpu* c, int w) {
  World* wd = &c->worlds[w];
  mjData* d = wd->d;
  const mjModel* m = model_of(c, w);
  fsCtrlRows seq = fs_ctrl_rows(&c->seq, c->seq.value);
  views_in(c, w);
  if (c->forward) {
    wd->k = 0;
    mj_forward(m, d);
    views_out(c, w);
    return;
  }
  for (int k = 0; k < c->nstep; k++) {
    if (atomic_load_explicit(&c->stop, memory_order_relaxed)) return;
    wd->k = k;
    if (seq.table) FS_CTRL_SEQ_APPLY(seq, w, c->step + k, d->ctrl);
    mj_step(m, d);
    note_step(c, m, w, c->step + k);
    views_out(c, w);
    if (c->out) record_world(c, m, w, k);
  }
}

// MuJoCo stopped world w with `msg` during step wd->k of the call.
static void stop_world(Cpu* c, int w, const char* msg) {
  World* wd = &c->worlds[w];
  wd->fatal = wd->failed_now = 1;
  snprintf(wd->error, sizeof wd->error, "%s", msg);
  int warnings[FS_NWARNING];
  for (int k = 0; k < FS_NWARNING; k++) warnings[k] = wd->d->warning[k].number;
  fsStepReport s = {warnings, wd->d->ncon, 0, 0, 1, 0, 0};
  fs_health_note(&c->h, w, &s, c->step + wd->k);
  atomic_store(&c->stop, 1);
}

// World w's steps, guarded: a MuJoCo error stops the world, not the process.
static void run_world(Cpu* c, int w) {
  if (c->worlds[w].fatal) {
    record_stopped(c, w);
    return;
  }
  fsMjTrap trap;
  fs_mj_trap_set(&trap);
  if (setjmp(trap.env))
    stop_world(c, w, trap.msg);
  else
    step_world(c, w);
  fs_mj_trap_set(NULL);
}

static void step_worker(void* arg, int t) {
  Cpu* c = arg;
  int w0 = (int)((long)t * c->N / c->nthread), w1 = (int)((long)(t + 1) * c->N / c->nthread);
  for (int w = w0; w < w1; w++) run_world(c, w);
}

// The call set up in c (a step or mj_forward) over every world on the pool; a world MuJoCo
// stopped fails it, named with what it was in (`during`) and what a reset lets it do again.
static int run_worlds(Cpu* c, const char* during, const char* again, fsError* err) {
  atomic_store(&c->stop, 0);
  for (int w = 0; w < c->N; w++) c->worlds[w].failed_now = 0;
  fs_pool_run(c->pool, step_worker, c);
  for (int w = 0; w < c->N; w++)
    if (c->worlds[w].failed_now)
      return fs_fail(err,
                     "%s: world %d: MuJoCo error %s: %s; the world is stopped (fatal in its "
                     "health); fix: reset it (fs_batch_reset)%s",
                     c->name, w, during, c->worlds[w].error, again);
  return 0;
}

static int cpu_step(void* self, int64_t step, int nstep, float* const* out, fsError* err) {
  Cpu* c = self;
  c->step = step;
  c->nstep = nstep;
  c->out = out;
  int rc = run_worlds(c, "during the step", " to step it again", err);
  c->out = NULL;
  return rc;
}

// mj_forward of every world but those MuJoCo stopped (their state is what it stopped at).
static int cpu_forward(void* self, fsError* err) {
  Cpu* c = self;
  c->forward = 1;
  c->nstep = 0;
  c->out = NULL;
  int rc = run_worlds(c, "in mj_forward", "", err);
  c->forward = 0;
  return rc;
}

static int cpu_sync(void* self, fsError* err) {
  (void)self, (void)err;
  return 0;
}

//---------------------------------- reset, models, sequences, recordings --------------------------

static int reset_world(Cpu* c, int w, int key, fsError* err) {
  World* wd = &c->worlds[w];
  fsMjTrap trap;
  fs_mj_trap_set(&trap);
  if (setjmp(trap.env)) {
    fs_mj_trap_set(NULL);
    return fs_fail(err, "%s: world %d: MuJoCo error resetting it to %s%d: %s", c->name, w,
                   key >= 0 ? "keyframe " : "qpos0, key ", key, trap.msg);
  }
  if (key >= 0)
    mj_resetDataKeyframe(model_of(c, w), wd->d, key);
  else
    mj_resetData(model_of(c, w), wd->d);
  fs_mj_trap_set(NULL);
  fs_health_clear(&c->h, w);
  wd->fatal = 0;
  views_out(c, w);
  return 0;
}

static int cpu_reset(void* self, const uint8_t* mask, int key, fsError* err) {
  Cpu* c = self;
  for (int w = 0; w < c->N; w++)
    if ((!mask || mask[w]) && reset_world(c, w, key, err)) return -1;
  return 0;
}

static int cpu_set_world_model(void* self, int w, const mjModel* m, fsError* err) {
  (void)err;
  Cpu* c = self;
  c->worlds[w].m = m;
  return 0;
}

static int cpu_set_ctrl_sequence(void* self, const fsCtrlSeqSpec* seq, fsError* err) {
  Cpu* c = self;
  return fs_ctrl_seq_set(&c->seq, seq, c->N, err);
}

static int cpu_add_recording(void* self, int id, const fsRecordSpec* spec, fsError* err) {
  Cpu* c = self;
  if (id < 0 || id >= FS_MAX_RECORDINGS)
    return fs_fail_status(err, FS_ERR_ARGUMENT, "%s: recording %d; fix: 0 to %d", c->name, id,
                          FS_MAX_RECORDINGS - 1);
  Recording* r = &c->rec[id];
  r->cols = spec->cols;
  r->has_group = 0;
  for (int col = 0; col < spec->cols.ncol; col++)
    if (spec->cols.src[col] == FS_SRC_GROUP_FORCE) r->has_group = 1;
  if (id >= c->nrec) c->nrec = id + 1;
  return 0;
}

//---------------------------------- health, cost, data --------------------------------------------

static int cpu_health(void* self, fsWorldHealth* out, fsError* err) {
  (void)err;
  Cpu* c = self;
  for (int w = 0; w < c->N; w++) {
    int warnings[FS_NWARNING];
    for (int k = 0; k < FS_NWARNING; k++) warnings[k] = c->worlds[w].d->warning[k].number;
    fs_health_read(&c->h, w, warnings, &out[w]);
    out[w].fatal = c->worlds[w].fatal;
  }
  return 0;
}

static int cpu_info(void* self, fsBatchInfo* out, fsError* err) {
  (void)err;
  Cpu* c = self;
  const mjData* d = c->worlds[0].d;
  out->nthread = c->nthread;
  out->contacts = 0;
  out->world_bytes = (double)d->nbuffer + (double)d->narena; // mj_makeData's two blocks
  out->model_bytes = (double)c->m->nbuffer;
  snprintf(out->description, sizeof out->description, "%d thread%s", c->nthread,
           c->nthread == 1 ? "" : "s");
  return 0;
}

static mjData* cpu_mjdata(void* self, int w) {
  Cpu* c = self;
  return c->worlds[w].d;
}

//---------------------------------- open and destroy ----------------------------------------------

static void free_health(fsHealthArrays* h) {
  free(h->nseen), free(h->first), free(h->first_step), free(h->limit);
  free(h->errors), free(h->peak), free(h->problems), free(h->iterations);
}

static int alloc_health(Cpu* c, fsError* err) {
  const char* what = "the worlds' health";
  fsHealthArrays* h = &c->h;
  size_t n = (size_t)c->N;
  if (!(h->nseen = fs_calloc(err, what, n, sizeof(int))) ||
      !(h->first = fs_calloc(err, what, n, sizeof(int))) ||
      !(h->first_step = fs_calloc(err, what, n, sizeof(long long))) ||
      !(h->limit = fs_calloc(err, what, n, sizeof(int))) ||
      !(h->errors = fs_calloc(err, what, n, sizeof(int))) ||
      !(h->peak = fs_calloc(err, what, n, sizeof(int))) ||
      !(h->problems = fs_calloc(err, what, n, sizeof(int))) ||
      !(h->iterations = fs_calloc(err, what, 2 * n, sizeof(int))))
    return -1;
  for (int w = 0; w < c->N; w++) fs_health_clear(h, w);
  return 0;
}

// World w's data at qpos0; a MuJoCo error (no memory) fails the open.
// MuJoCo's data for world w (NULL and err on failure, MuJoCo's error caught).
static mjData* make_data(const Cpu* c, int w, fsError* err) {
  const double mib = (double)c->m->narena / (1024.0 * 1024.0);
  fsMjTrap trap;
  fs_mj_trap_set(&trap);
  if (setjmp(trap.env)) {
    fs_mj_trap_set(NULL);
    fs_fail_status(err, FS_ERR_MEMORY,
                   "%s: cannot make MuJoCo data for world %d of %d (%.1f MiB each): %s; "
                   "fix: fewer worlds",
                   c->name, w, c->N, mib, trap.msg);
    return NULL;
  }
  mjData* d = mj_makeData(c->m);
  fs_mj_trap_set(NULL);
  if (!d)
    fs_fail_status(err, FS_ERR_MEMORY,
                   "%s: cannot allocate MuJoCo data for world %d of %d (%.1f MiB each); "
                   "fix: fewer worlds",
                   c->name, w, c->N, mib);
  return d;
}

// World w keeps d, reset.
static void keep_world(Cpu* c, int w, mjData* d) {
  mj_resetData(c->m, d);
  c->worlds[w].d = d;
}

static int make_world(Cpu* c, int w, fsError* err) {
  mjData* d = make_data(c, w, err);
  if (!d) return -1;
  keep_world(c, w, d);
  return 0;
}

// The worlds' memory (world 0's mjData d, measured, and a world's bookkeeping) against
// what the machine has available: refused up front, before the kernel's out-of-memory
// killer would stop the process while the worlds are made.
static int check_memory(const Cpu* c, const mjData* d, fsError* err) {
  double world = (double)d->nbuffer + (double)d->narena + sizeof(mjData) + sizeof(World);
  double have = fs_memory_available(), gib = 1024.0 * 1024.0 * 1024.0;
  if (have <= 0 || world * c->N <= have) return 0;
  return fs_fail_status(err, FS_ERR_MEMORY,
                        "%s: the cpu backend's %d worlds need %.3g GiB (%.3g MiB a world: "
                        "MuJoCo's mjData), more than the %.3g GiB this machine has available; "
                        "fix: at most %.0f worlds",
                        c->name, c->N, world * c->N / gib, world / (1024.0 * 1024.0), have / gib,
                        have / world);
}

static void cpu_destroy(void* self) {
  Cpu* c = self;
  if (!c) return;
  fs_pool_destroy(c->pool);
  if (c->worlds)
    for (int w = 0; w < c->N; w++)
      if (c->worlds[w].d) mj_deleteData(c->worlds[w].d);
  free(c->worlds);
  for (int i = 0; i < NFIELD; i++) free(c->fields[i].copy);
  free_health(&c->h);
  fs_ctrl_seq_free(&c->seq);
  free(c);
}

void* fs_cpu_open(const mjModel* m, const fsBatchOptions* opt, fsError* err) {
  Cpu* c = fs_calloc(err, "the cpu backend", 1, sizeof *c);
  if (!c) return NULL;
  c->m = m;
  c->name = opt->model_name ? opt->model_name : "the model";
  c->N = opt->nworld;
  c->nthread = opt->nthread > 0 ? opt->nthread : fs_cpu_count();
  if (c->nthread > c->N) c->nthread = c->N;
  if (c->nthread < 1) c->nthread = 1;
  atomic_init(&c->stop, 0);
  init_fields(c);
  mjData* first = make_data(c, 0, err); // measured before the others are made, then kept
  if (!first || check_memory(c, first, err) ||
      !(c->worlds = fs_calloc(err, "the worlds", (size_t)c->N, sizeof(World)))) {
    if (first) mj_deleteData(first);
    goto fail;
  }
  keep_world(c, 0, first);
  if (alloc_health(c, err)) goto fail;
  for (int w = 1; w < c->N; w++)
    if (make_world(c, w, err)) goto fail;
  c->pool = fs_pool_create(c->nthread, err);
  if (!c->pool) {
    if (err) {
      char why[FS_ERROR_LEN];
      snprintf(why, sizeof why, "%s", err->msg);
      fs_fail_status(err, err->status, "%s: the cpu backend's %d worker threads: %s", c->name,
                     c->nthread, why);
    }
    goto fail;
  }
  return c;
fail:
  cpu_destroy(c);
  return NULL;
}

const fsBackendOps fs_cpu_ops = {
    .name = "cpu",
    .destroy = cpu_destroy,
    .step = cpu_step,
    .sync = cpu_sync,
    .reset = cpu_reset,
    .reset_device = NULL,
    .view = cpu_view,
    .copy = NULL,
    .set_world_model = cpu_set_world_model,
    .set_ctrl_sequence = cpu_set_ctrl_sequence,
    .add_recording = cpu_add_recording,
    .health = cpu_health,
    .info = cpu_info,
    .mjdata = cpu_mjdata,
    .forward = cpu_forward,
};
