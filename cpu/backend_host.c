// The host backend (common/api/backend.h): the engine (common/engine/stage_*.h, fs_step: what
// the CUDA kernels run) on a pool of CPU threads (cpu/pool.h), each thread a
// contiguous range of worlds, in the build's real (compiled twice, float32 and float64:
// every exported name goes through FS_PREC).
//
// It runs what the GPU runs without a GPU: the comparisons with MuJoCo in CI and on a
// laptop, and the GPU code's behaviour apart from the device. Each thread steps its worlds
// with an on-chip plan (common/model/onchip.h) over a region of its own, which
// FLYSIM_ONCHIP_POISON=1 (a test switch) fills with NaN before every step: the results
// must not change by a bit. The host's plan keeps every intermediate but MuJoCo's arrays
// (the fields views show) in the thread's region: a world's memory holds what carries
// over and what a caller may read, and what every step rewrites stays in the core's cache
// from one world to the next (one-step calls over many worlds). FLYSIM_ONCHIP_BYTES=N|all
// runs the GPU's plan instead, a field leaving it once a view asks for it, as on cuda.
// FLYSIM_PERTURB_PASSIVE=<x> (a test switch, cpu/serial.h; named in the description when set)
// scales every model's spring stiffness and damping by (1 + x): a deliberately broken stepper,
// which `flysim compare` must catch.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mjxmacro.h>

#include "common/api/backend.h"
#include "common/base/error.h"
#include "common/base/memory.h"
#include "common/base/mujoco_hooks.h"
#include "common/engine/stage_forward.h"
#include "cpu/pool.h"
#include "cpu/serial.h"
#include "common/model/health.h"
#include "common/model/model.h"
#include "common/model/onchip.h"
#include "common/model/record.h"
#include "common/model/worlds.h"

// This build's names (common/exec/real.h FS_PREC), as common/api/backend.h declares them.
#define fs_host_open FS_PREC(fs_host_open)
#define fs_host_ops  FS_PREC(fs_host_ops)

typedef struct Host {
  char name[512];    // the model's, for messages
  const mjModel* mj; // the batch's model (the library's copy, alive until close)
  int N, nthread, max_contacts, max_candidates;
  fsModel m;             // the batch's model, built
  fsModel** wm;          // (N) each world's own model (set_world_model), NULL: m; or NULL
  const mjModel** wmj;   // (N) ... and the mjModel it was built from (reset reads it)
  fsWorlds b;            // (N worlds)
  mjData* scratch;       // reset's MuJoCo data (the batch model's sizes)
  fsHealthArrays health; // (N) each, iterations (N x 2)
  fsPool* pool;
  fsChipPlan ran;    // the plan the last step ran (what its fields' global copies miss)
  fsChipPlan chip;   // the on-chip plan, over ...
  char* chip_mem;    // (nthread x chip.bytes) a region per thread
  size_t chip_alloc; // bytes of chip_mem
  long chip_budget;  // a world's bytes on-chip (FLYSIM_ONCHIP_BYTES, else every intermediate's)
  int gpu_plan;      // FLYSIM_ONCHIP_BYTES set: the GPU's plan within it
  int poison;        // FLYSIM_ONCHIP_POISON=1: the regions filled with NaN before every step
  double perturb;    // FLYSIM_PERTURB_PASSIVE (cpu/serial.h): every model's springs and dampers
  unsigned char global[FS_NDATA_FIELD]; // fields kept in the worlds' memory: the views handed
                                        // out; with the host's plan, every view's field
  fsCtrlSeq seq;                        // the control sequence (nrow 0: none)
  fsReal* table;                        // ... its values in the build's real
  int nrec;
  fsRecordSpec rec[FS_MAX_RECORDINGS];
  // the step job the workers run (job_forward: mj_forward's part of the step alone)
  int64_t job_step;
  int job_nstep;
  float* const* job_out;
  int job_forward;
} Host;

//---------------------------------- a world's step ------------------------------------------------

// World w's view on thread t: the plan's fields in the thread's region, as the GPU's step
// kernel has them in shared memory.
static fsData world_view(const Host* h, int w, int t) {
  fsData d;
  char* chip = h->chip.bytes ? h->chip_mem + (size_t)t * h->chip.bytes : NULL;
  fs_data_on_chip(&h->m, &h->b.base, h->b.world_bytes, w, &h->chip, chip, &d);
  return d;
}

// FLYSIM_ONCHIP_POISON: thread t's region filled with NaN before a world's step or forward
// (every intermediate is written before it is read: the results must not change).
static void poison_region(const Host* h, int t) {
  if (h->poison && h->chip.bytes)
    memset(h->chip_mem + (size_t)t * h->chip.bytes, 0xff, (size_t)h->chip.bytes);
}

// A step of world w on thread t's region.
static void step_world(const Host* h, const fsModel* m, fsData* d, int t) {
  poison_region(h, t);
  fs_step(m, d);
}

// World w's model: its own, or the batch's.
static const fsModel* world_model(const Host* h, int w) {
  return h->wm && h->wm[w] ? h->wm[w] : &h->m;
}

// Every recording of world w into its output of the job's step k.
static void record_world(const Host* h, int w, const fsData* d, int k) {
  for (int r = 0; r < h->nrec && h->job_out; r++) {
    const fsRecordCols* cols = &h->rec[r].cols;
    float* out = h->job_out[r];
    if (!out || w < cols->world0 || w >= cols->world0 + cols->nworld) continue;
    float* row = out + ((size_t)k * cols->nworld + (size_t)(w - cols->world0)) * cols->ncol;
    for (int c = 0; c < cols->ncol; c++) fs_record_column(cols, d, c, row);
  }
}

// The job's steps of world w on thread t: ctrl from the sequence (when one is set), the
// step, the health, the recordings.
static void run_world(const Host* h, int w, int t) {
  fsData d = world_view(h, w, t);
  const fsModel* m = world_model(h, w);
  fsCtrlRows seq = fs_ctrl_rows(&h->seq, h->table);
  for (int k = 0; k < h->job_nstep; k++) {
    int64_t step = h->job_step + k;
    if (seq.table) FS_CTRL_SEQ_APPLY(seq, w, step, d.ctrl);
    step_world(h, m, &d, t);
    fs_health_note_step(&h->health, w, m, &d, step);
    record_world(h, w, &d, k);
  }
}

// mj_forward of world w on thread t: the step's forward and sensors, no check, no
// integration (the state is unchanged).
static void forward_world(const Host* h, int w, int t) {
  fsData d = world_view(h, w, t);
  const fsModel* m = world_model(h, w);
  poison_region(h, t);
  fs_forward(m, &d);
  fs_sensor(m, &d);
}

static void worker(void* arg, int t) {
  const Host* h = arg;
  int w0 = (int)((long)t * h->N / h->nthread), w1 = (int)((long)(t + 1) * h->N / h->nthread);
  for (int w = w0; w < w1; w++) {
    if (h->job_forward)
      forward_world(h, w, t);
    else
      run_world(h, w, t);
  }
}

static int host_step(void* self, int64_t step, int nstep, float* const* out, fsError* err) {
  (void)err;
  Host* h = self;
  h->job_step = step;
  h->job_nstep = nstep;
  h->job_out = out;
  h->ran = h->chip;
  fs_pool_run(h->pool, worker, h);
  h->job_out = NULL;
  return 0;
}

static int host_forward(void* self, fsError* err) {
  (void)err;
  Host* h = self;
  h->job_forward = 1;
  h->ran = h->chip;
  fs_pool_run(h->pool, worker, h);
  h->job_forward = 0;
  return 0;
}

static int host_sync(void* self, fsError* err) {
  (void)self, (void)err;
  return 0;
}

//---------------------------------- reset ---------------------------------------------------------

// md <- model mj's keyframe key (-1: qpos0), as MuJoCo's mj_resetDataKeyframe and
// mj_resetData, a MuJoCo error caught.
static int reset_mj(const Host* h, const mjModel* mj, mjData* md, int key, fsError* err) {
  fsMjTrap trap;
  fs_mj_trap_set(&trap);
  if (setjmp(trap.env)) {
    fs_mj_trap_set(NULL);
    return fs_fail(err,
                   "flysim: %s: resetting to %s %d failed in MuJoCo: %s; fix: a keyframe "
                   "MuJoCo accepts",
                   h->name, key >= 0 ? "keyframe" : "qpos0, key", key, trap.msg);
  }
  if (key >= 0)
    mj_resetDataKeyframe(mj, md, key);
  else
    mj_resetData(mj, md);
  fs_mj_trap_set(NULL);
  return 0;
}

static int host_reset(void* self, const uint8_t* mask, int key, fsError* err) {
  Host* h = self;
  const mjModel* held = NULL; // the model whose reset the scratch data holds
  for (int w = 0; w < h->N; w++) {
    if (mask && !mask[w]) continue;
    const mjModel* mj = h->wmj && h->wmj[w] ? h->wmj[w] : h->mj;
    if (mj != held) {
      if (reset_mj(h, mj, h->scratch, key, err)) return -1;
      held = mj;
    }
    if (fs_worlds_from_mj(&h->m, &h->b, w, mj, h->scratch, FS_STAGE_STATE, err)) return -1;
    fs_health_clear(&h->health, w);
  }
  return 0;
}

//---------------------------------- views ---------------------------------------------------------

// 1 if name is one of MuJoCo's mjData members (arrays, scalars and statistics).
static int is_mjdata_name(const char* name) {
  static const char* const kNames[] = {
#define X(type, field, rows, cols) #field,
#define XNV                        X
      MJDATA_POINTERS MJDATA_ARENA_POINTERS MJDATA_VECTOR
#undef X
#define X(type, field) #field,
          MJDATA_SCALAR
#undef X
#undef XNV
  };
  for (size_t k = 0; k < sizeof kNames / sizeof *kNames; k++)
    if (!strcmp(name, kNames[k])) return 1;
  return 0;
}

// The data field of that name, or NULL.
static const fsFieldInfo* data_field(const char* name) {
  for (int f = 0; f < fs_data_nfield; f++)
    if (!strcmp(fs_data_fields[f].name, name)) return &fs_data_fields[f];
  return NULL;
}

#define FS_HOST_VIEWS                                                                              \
  "ctrl, qpos, qvel, qfrc_applied, mocap_pos, mocap_quat, time, xpos, xquat, xmat, site_xpos, "    \
  "geom_xpos, qacc, "                                                                              \
  "actuator_force, qfrc_constraint, ncon, cvel, cinert, problems, solver_iterations"

// Why `name` is no view of this backend (FS_ERR_ARGUMENT): f, its data field of that name
// if it has one.
static int no_view(const Host* h, const char* name, const fsFieldInfo* f, fsError* err) {
  if (f && is_mjdata_name(name))
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "flysim: %s: view '%s': the host backend keeps it in its own layout (a "
                          "world's contacts and constraint rows change from step to step), not as "
                          "a view; fix: the cpu backend (FS_BACKEND_CPU), which has every mjData "
                          "array, or a view it has: " FS_HOST_VIEWS ", ...",
                          h->name, name);
  if (is_mjdata_name(name))
    return fs_fail_status(
        err, FS_ERR_ARGUMENT,
        "flysim: %s: view '%s': MuJoCo's data has it, but the host backend does "
        "not compute it (it computes mj_step's state, frames and forces: " FS_HOST_VIEWS
        ", ...); fix: the cpu backend (FS_BACKEND_CPU), which "
        "computes every mjData array",
        h->name, name);
  if (f)
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "flysim: %s: view '%s' is the host engine's own working array, not a "
                          "view; fix: a view of MuJoCo's name: " FS_HOST_VIEWS ", ...",
                          h->name, name);
  return fs_fail_status(err, FS_ERR_ARGUMENT,
                        "flysim: %s: no view '%s'; fix: one of MuJoCo's mjData names the host "
                        "backend computes: " FS_HOST_VIEWS ", ...",
                        h->name, name);
}

// Keep field f (a view's) in global memory from the next step: a re-plan without it when
// the plan has it on-chip (its copy in the worlds' data is otherwise never written). What
// the last step computed of it is gone: until the next step every world's copy reads NaN
// (ints -1), not a stale or zero value that looks like one.
static int keep_global(Host* h, int f, fsError* err) {
  if (h->global[f]) return 0;
  h->global[f] = 1;
  const fsFieldInfo* fi = &fs_data_fields[f];
  for (int w = 0; w < h->N && h->ran.off[f] >= 0; w++) {
    fsData d = fs_worlds_view(&h->m, &h->b, w);
    memset(*fs_field_ptr(&d, fi), 0xff, fs_field_bytes(&h->m, fi));
  }
  if (h->chip.off[f] < 0) return 0;
  fs_chip_plan_except(&h->m, h->chip_budget, h->global, &h->chip);
  size_t need = (size_t)h->nthread * (size_t)h->chip.bytes;
  if (need <= h->chip_alloc) return 0;
  char* mem = fs_calloc(err, "the on-chip regions", (size_t)h->nthread, (size_t)h->chip.bytes);
  if (!mem) return -1;
  free(h->chip_mem);
  h->chip_mem = mem;
  h->chip_alloc = need;
  return 0;
}

static int host_view(void* self, const char* name, int extra, fsView* out, fsError* err) {
  Host* h = self;
  if (!name) {
    fs_extra_view(&h->health, h->N, extra, FS_MEMORY_HOST, 0, out);
    return 0;
  }
  const fsFieldInfo* f = data_field(name);
  if (!f || !fs_field_is_view(f)) return no_view(h, name, f, err);
  if (!strcmp(name, "sensordata") && h->m.nsensor > 0 && !h->m.sensors) {
    char why[FS_ERROR_LEN / 2];
    fs_model_sensors_lack(h->mj, why, sizeof why);
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "flysim: %s: view 'sensordata': the host engine does not compute this "
                          "model's sensors: %s; fix: the cpu backend (FS_BACKEND_CPU), which runs "
                          "MuJoCo's own, or sensors of the kinds docs/models.md lists",
                          h->name, why);
  }
  if (keep_global(h, (int)(f - fs_data_fields), err)) return -1;
  fs_data_field_view(&h->m, f, h->N, out);
  out->data = *fs_field_ptr(&h->b.base, f);
  out->strides[0] = (int64_t)fs_worlds_stride(&h->b, f);
  out->memory = FS_MEMORY_HOST;
  out->device = 0;
  return 0;
}

//---------------------------------- the worlds' models, the sequence, recordings ------------------

// fs_model_build_bounded, its model check's failure FS_ERR_MODEL (every other failure of
// the build is an allocation's, FS_ERR_MEMORY, or the candidate bound's, FS_ERR_ARGUMENT).
// The test switch FLYSIM_PERTURB_PASSIVE applied to the model built (its change into
// *perturb unless NULL; its bad value: FS_ERR_ARGUMENT).
static int build_model(const Host* h, const mjModel* mj, fsModel* out, double* perturb,
                       fsError* err) {
  if (fs_model_build_bounded(mj, h->name, h->max_contacts, h->max_candidates, out, err)) {
    if (err && err->status != FS_ERR_MEMORY && err->status != FS_ERR_ARGUMENT)
      err->status = FS_ERR_MODEL;
    return -1;
  }
  double x;
  if (fs_serial_perturb_passive(out, perturb ? perturb : &x, err)) {
    fs_model_free(out);
    if (err) err->status = FS_ERR_ARGUMENT;
    return -1;
  }
  return 0;
}

// The first size of a that differs from b's, or NULL.
static const char* size_differs(const fsModel* a, const fsModel* b, int* va, int* vb) {
#define FS_X(name)                                                                                 \
  if (a->name != b->name) {                                                                        \
    *va = a->name, *vb = b->name;                                                                  \
    return #name;                                                                                  \
  }
  FS_MODEL_SIZES(FS_X)
#undef FS_X
  return NULL;
}

static int host_set_world_model(void* self, int w, const mjModel* m, fsError* err) {
  Host* h = self;
  if (!m) {
    if (h->wm && h->wm[w]) {
      fs_model_free(h->wm[w]);
      free(h->wm[w]);
      h->wm[w] = NULL;
      h->wmj[w] = NULL;
    }
    return 0;
  }
  if (!h->wm) {
    h->wm = fs_calloc(err, "the worlds' models", (size_t)h->N, sizeof *h->wm);
    if (!h->wm) return -1;
  }
  if (!h->wmj) {
    h->wmj = fs_calloc(err, "the worlds' models", (size_t)h->N, sizeof *h->wmj);
    if (!h->wmj) return -1;
  }
  fsModel* fm = fs_calloc(err, "a world's model", 1, sizeof *fm);
  if (!fm) return -1;
  if (build_model(h, m, fm, NULL, err)) {
    free(fm);
    return fs_fail_append(err, " (world %d's model)", w);
  }
  int va = 0, vb = 0;
  const char* size = size_differs(fm, &h->m, &va, &vb);
  if (size) {
    fs_model_free(fm);
    free(fm);
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "flysim: %s: world %d's model has %s %d where the batch's has %d; fix: "
                          "a model of the batch's sizes (change parameters, not structure)",
                          h->name, w, size, va, vb);
  }
  if (h->wm[w]) {
    fs_model_free(h->wm[w]);
    free(h->wm[w]);
  }
  h->wm[w] = fm;
  h->wmj[w] = m;
  return 0;
}

// The sequence and its values in the build's real; on failure (no memory) the old ones.
static int host_set_ctrl_sequence(void* self, const fsCtrlSeqSpec* spec, fsError* err) {
  Host* h = self;
  fsCtrlSeq q = {0};
  fsReal* table = NULL;
  if (spec && (fs_ctrl_seq_set(&q, spec, h->N, err) || !(table = fs_ctrl_seq_reals(&q, err)))) {
    fs_ctrl_seq_free(&q);
    return -1;
  }
  fs_ctrl_seq_free(&h->seq);
  free(h->table);
  h->seq = q;
  h->table = table;
  return 0;
}

static int host_add_recording(void* self, int id, const fsRecordSpec* spec, fsError* err) {
  Host* h = self;
  if (id < 0 || id >= FS_MAX_RECORDINGS)
    return fs_fail_status(err, FS_ERR_ARGUMENT, "flysim: %s: recording %d: fix: 0 to %d", h->name,
                          id, FS_MAX_RECORDINGS - 1);
  h->rec[id] = *spec;
  if (id + 1 > h->nrec) h->nrec = id + 1;
  return 0;
}

//---------------------------------- health and cost -----------------------------------------------

static int host_health(void* self, fsWorldHealth* out, fsError* err) {
  (void)err;
  Host* h = self;
  for (int w = 0; w < h->N; w++) {
    fsData d = fs_worlds_view(&h->m, &h->b, w);
    fs_health_read(&h->health, w, d.warning_number, &out[w]);
  }
  return 0;
}

// "2 threads, float32, 220 contacts, ... 57 of 89 intermediates (... B) a world in the
// thread's cache region" (or "... on-chip as on the GPU" under FLYSIM_ONCHIP_BYTES; and the
// test switches when set).
static void describe(const Host* h, char* out, size_t n) {
  char world[128];
  fs_world_describe(&h->m, world, sizeof world);
  fsChipPlan every; // every intermediate of the model (the plan's counts leave out the global)
  fs_chip_plan(&h->m, 0, &every);
  int k = snprintf(
      out, n, "%d thread%s, %s, %s, %d of %d intermediates (%d B of %.1f KiB) a world %s%s",
      h->nthread, h->nthread == 1 ? "" : "s", FS_REAL_NAME, world, h->chip.nfield, every.nallow,
      h->chip.bytes, (double)every.allow_bytes / 1024.0,
      h->gpu_plan ? "on-chip as on the GPU (FLYSIM_ONCHIP_BYTES)" : "in the thread's cache region",
      h->poison ? ", poisoned every step by FLYSIM_ONCHIP_POISON" : "");
  if (h->perturb != 0 && k > 0 && (size_t)k < n)
    snprintf(out + k, n - k,
             ", joint and tendon stiffness and damping, fluid density and viscosity x (1 + %g) by "
             "FLYSIM_PERTURB_PASSIVE (a test switch)",
             h->perturb);
  const char* rows = getenv("FLYSIM_PERTURB_ROWS");
  k = (int)strlen(out);
  if (rows && *rows && (size_t)k < n)
    snprintf(out + k, n - k, ", constraint rows broken by FLYSIM_PERTURB_ROWS=%s (a test switch)",
             rows);
  const char* step = getenv("FLYSIM_PERTURB_STEP");
  k = (int)strlen(out);
  if (step && *step && (size_t)k < n)
    snprintf(out + k, n - k, ", integrator broken by FLYSIM_PERTURB_STEP=%s (a test switch)", step);
}

static int host_info(void* self, fsBatchInfo* out, fsError* err) {
  (void)err;
  Host* h = self;
  out->nthread = h->nthread;
  out->contacts = h->m.nconmax;
  out->world_bytes = (double)fs_worlds_block(&h->m, NULL); // its fields and padding
  out->model_bytes = (double)fs_model_bytes(&h->m);
  for (int w = 0; h->wm && w < h->N; w++)
    if (h->wm[w]) out->model_bytes += (double)fs_model_bytes(h->wm[w]);
  out->chip_bytes = h->chip.bytes;
  describe(h, out->description, sizeof out->description);
  return 0;
}

//---------------------------------- open and close ------------------------------------------------

static void host_destroy(void* self) {
  Host* h = self;
  if (!h) return;
  fs_pool_destroy(h->pool);
  free(h->chip_mem);
  free(h->health.nseen);
  free(h->health.first);
  free(h->health.first_step);
  free(h->health.limit);
  free(h->health.errors);
  free(h->health.peak);
  free(h->health.problems);
  free(h->health.iterations);
  fs_ctrl_seq_free(&h->seq);
  free(h->table);
  if (h->scratch) mj_deleteData(h->scratch);
  fs_worlds_free(&h->b);
  for (int w = 0; h->wm && w < h->N; w++)
    if (h->wm[w]) {
      fs_model_free(h->wm[w]);
      free(h->wm[w]);
    }
  free(h->wm);
  free(h->wmj);
  fs_model_free(&h->m);
  free(h);
}

// The plan (the host's: every intermediate but a view's field; FLYSIM_ONCHIP_BYTES: the
// GPU's within it) and a region per thread; FLYSIM_ONCHIP_POISON (a test switch) 1 fills it
// with NaN before every step.
static int set_chip(Host* h, fsError* err) {
  const char* bytes = getenv("FLYSIM_ONCHIP_BYTES");
  long all = fs_chip_all_bytes(&h->m);
  h->gpu_plan = bytes && *bytes;
  h->chip_budget = fs_chip_budget(all, all, err);
  if (h->chip_budget < 0) {
    if (err) err->status = FS_ERR_ARGUMENT; // FLYSIM_ONCHIP_BYTES's value
    return -1;
  }
  for (int f = 0; f < FS_NDATA_FIELD && !h->gpu_plan; f++)
    h->global[f] = (unsigned char)fs_field_is_view(&fs_data_fields[f]);
  fs_chip_plan_except(&h->m, h->chip_budget, h->global, &h->chip);
  fs_chip_plan(&h->m, 0, &h->ran); // no step yet: every field's copy as the reset left it
  const char* p = getenv("FLYSIM_ONCHIP_POISON");
  if (p && *p && strcmp(p, "0") && strcmp(p, "1"))
    return fs_fail_status(err, FS_ERR_ARGUMENT,
                          "FLYSIM_ONCHIP_POISON='%s' is not 0 or 1; fix: unset it (a test switch)",
                          p);
  h->poison = p && !strcmp(p, "1");
  if (!h->chip.bytes) return 0;
  h->chip_mem = fs_calloc(err, "the on-chip regions", (size_t)h->nthread, (size_t)h->chip.bytes);
  h->chip_alloc = (size_t)h->nthread * (size_t)h->chip.bytes;
  return h->chip_mem ? 0 : -1;
}

static int alloc_health(Host* h, fsError* err) {
  fsHealthArrays* a = &h->health;
  size_t N = (size_t)h->N;
  const char* what = "the worlds' health";
  if (!(a->nseen = fs_calloc(err, what, N, sizeof(int)))) return -1;
  if (!(a->first = fs_calloc(err, what, N, sizeof(int)))) return -1;
  if (!(a->first_step = fs_calloc(err, what, N, sizeof(long long)))) return -1;
  if (!(a->limit = fs_calloc(err, what, N, sizeof(int)))) return -1;
  if (!(a->errors = fs_calloc(err, what, N, sizeof(int)))) return -1;
  if (!(a->peak = fs_calloc(err, what, N, sizeof(int)))) return -1;
  if (!(a->problems = fs_calloc(err, what, N, sizeof(int)))) return -1;
  if (!(a->iterations = fs_calloc(err, what, 2 * N, sizeof(int)))) return -1;
  return 0;
}

// MuJoCo's data for resets (the batch model's sizes), a MuJoCo error caught.
static mjData* make_scratch(const Host* h, fsError* err) {
  fsMjTrap trap;
  fs_mj_trap_set(&trap);
  if (setjmp(trap.env)) {
    fs_mj_trap_set(NULL);
    fs_fail_status(err, FS_ERR_MEMORY,
                   "flysim: %s: MuJoCo's mj_makeData failed: %s; fix: fewer "
                   "worlds or a smaller model",
                   h->name, trap.msg);
    return NULL;
  }
  mjData* md = mj_makeData(h->mj);
  fs_mj_trap_set(NULL);
  if (!md) fs_fail_oom(err, "MuJoCo data", (double)h->mj->narena);
  return md;
}

// The worlds' memory (a world's arrays of flysim's engine) against what the machine has
// available: refused up front, as the cpu backend refuses, not when an allocation fails
// (or the kernel's out-of-memory killer stops the process while the worlds are reset).
static int check_memory(const Host* h, fsError* err) {
  double world = (double)fs_worlds_block(&h->m, NULL);
  double have = fs_memory_available(), gib = 1024.0 * 1024.0 * 1024.0;
  if (have <= 0 || world <= 0 || world * h->N <= have) return 0;
  return fs_fail_status(err, FS_ERR_MEMORY,
                        "%s: the host backend's %d worlds need %.3g GiB (%.3g KiB a world: "
                        "flysim's engine), more than the %.3g GiB this machine has available; "
                        "fix: at most %.0f worlds",
                        h->name, h->N, world * h->N / gib, world / 1024.0, have / gib,
                        have / world);
}

void* fs_host_open(const mjModel* m, const fsBatchOptions* opt, fsError* err) {
  Host* h = fs_calloc(err, "the host backend", 1, sizeof *h);
  if (!h) return NULL;
  snprintf(h->name, sizeof h->name, "%s", opt->model_name ? opt->model_name : "the model");
  h->mj = m;
  h->N = opt->nworld;
  h->max_contacts = opt->max_contacts;
  h->max_candidates = opt->max_candidates;
  int nthread = opt->nthread > 0 ? opt->nthread : fs_cpu_count();
  h->nthread = nthread < 1 ? 1 : nthread > h->N ? h->N : nthread;
  if (build_model(h, m, &h->m, &h->perturb, err)) goto fail;
  if (check_memory(h, err)) goto fail;
  if (fs_worlds_alloc(&h->m, h->N, &h->b, err)) goto fail;
  if (alloc_health(h, err)) goto fail;
  if (!(h->scratch = make_scratch(h, err))) goto fail;
  if (host_reset(h, NULL, -1, err)) goto fail;
  if (set_chip(h, err)) goto fail;
  if (!(h->pool = fs_pool_create(h->nthread, err))) goto fail;
  return h;
fail:
  host_destroy(h);
  return NULL;
}

const fsBackendOps fs_host_ops = {
    "host",
    host_destroy,
    host_step,
    host_sync,
    host_reset,
    NULL, // reset_device: views are host memory
    host_view,
    NULL, // copy: views are host memory
    host_set_world_model,
    host_set_ctrl_sequence,
    host_add_recording,
    host_health,
    host_info,
    NULL, // mjdata: the cpu backend's
    host_forward,
};
