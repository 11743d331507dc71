// A world's contact buffer bounded (--max-contacts, fs_model_bound_contacts) on the host
// backend (with FSH_GPU the cuda backend) through the replay driver, NeuroMechFly's replay
// as exported (contacts, adhesion, noslip) from the keyframe, 4 worlds, 4 clip slices:
//  1. the world status's peak_contacts is the most contacts a step made: stepped one
//     step a block without warm-up, it equals the largest ncon read after each step;
//  2. bounded at the peak P of the unbounded run, every world's final qpos equals the
//     unbounded run's bit for bit (after 1,500 chaotic steps: any difference on the way
//     would show), no world has a problem, and the world takes less memory;
//  3. bounded at P - 1: a world whose unbounded peak fits ends bit-identical and
//     clean (its steps never filled the buffer), every other world is warned
//     (CONTACTFULL), counted as a problem world and still reports the contacts its
//     collision made (peak > the bound);
//  4. a bound at or above every pair's slots changes nothing (the model's sizes).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/inputs/model.h"
#include "common/inputs/targets.h"
#include "common/replay/replay.h"
#include "common/model/model.h"
#include "tests/testutil.h"
#ifdef FSH_GPU
#include "cuda/device.h"
#endif

enum { NWORLD = 4 };
// Worlds and the steps of parts 1 and 2-3. The small mode (fs_test_small, for the GPU
// simulator) runs 2 worlds for 8 steps, spawned low (spawn_low) so that they touch the
// ground at once, each with its own peak (6 and 12 contacts), where from the keyframe the
// first contact comes at step 113.
static int g_nworld = NWORLD, g_nstep1 = 300, g_nstep = 1500;

static int spawn_low(void* arg, fsBatch b, fsError* err) {
  const fsReplay* r = arg;
  const int nq = (int)r->m->nq;
  fsView v;
  if (fs_batch_view(b, "qpos", &v, err)) return -1;
  size_t es = v.dtype == FS_DTYPE_F32 ? sizeof(float) : sizeof(double);
  char* q = calloc((size_t)r->nworld * nq, es);
  int rc = q ? fs_batch_read(b, "qpos", q, (size_t)r->nworld * nq * es, err) : -1;
  for (int w = 0; !rc && w < r->nworld; w++) { // the thorax's free joint: z
    size_t k = (size_t)w * nq + (size_t)r->m->jnt_qposadr[0] + 2;
    double z = w % 2 ? 1.28 : 1.33;
    if (es == sizeof(float))
      ((float*)q)[k] = (float)z;
    else
      ((double*)q)[k] = z;
  }
  if (!rc) rc = fs_batch_write(b, "qpos", q, (size_t)r->nworld * nq * es, err);
  free(q);
  return rc ? -1 : 0;
}

// The final state, status and cost of one run.
typedef struct Run {
  double qpos[NWORLD * 128];
  int ncon[NWORLD];
  fsWorldStatus st[NWORLD];
  fsBatchInfo cost;
} Run;

// Warm up, then r->nstep steps in blocks of `block` on the host backend (with FSH_GPU the
// cuda one), 2 threads, the test's real; peak_seen (or NULL) keeps each world's largest
// contact count read after a block.
static int run(const fsReplay* r, int block, Run* out, int* peak_seen) {
  fsError err;
  fsReplayBatch rb;
#ifdef FSH_GPU
  const fsBackendKind kind = FS_BACKEND_CUDA;
#else
  const fsBackendKind kind = FS_BACKEND_HOST;
#endif
#ifdef FS_REAL_FLOAT
  const int bits = 32;
#else
  const int bits = 64;
#endif
  if (fs_replay_open(r, kind, bits, 2, &rb, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  out->cost = rb.info;
  int rc = fs_replay_start(r, &rb, &err);
  for (int s0 = 0; !rc && s0 < r->nstep; s0 += block) {
    int n = r->nstep - s0 < block ? r->nstep - s0 : block;
    rc = fs_batch_step(rb.b, n, &err) || fs_replay_read_worlds(r, &rb, out->qpos, out->ncon, &err);
    for (int w = 0; !rc && peak_seen && w < r->nworld; w++)
      peak_seen[w] = out->ncon[w] > peak_seen[w] ? out->ncon[w] : peak_seen[w];
  }
  if (rc) fprintf(stderr, "%s\n", err.msg);
  if (!rc && fs_replay_health(r, &rb, out->st, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    rc = -1;
  }
  fs_replay_close(&rb);
  return rc ? -1 : 0;
}

int main(void) {
#ifdef FSH_GPU
  if (fs_cuda_device_count() == 0) {
    printf("skipped: no CUDA device\n");
    return 77;
  }
#endif
  fsError err;
  char model[1024], clip[1024];
  snprintf(model, sizeof model, "%s", fs_test_asset("mesh.mjb"));
  snprintf(clip, sizeof clip, "%s", fs_test_asset("walking_clip.h5"));
  mjModel* mj = fs_test_load_model(model);
  fsTargets t;
  fsReplayBinding bind;
  fsReplay r;
  if (fs_targets_load(clip, &t, &err) || fs_targets_resample(&t, mj->opt.timestep, &err) ||
      fs_replay_bind(mj, model, &t, &bind, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  CHECK(mj->nv <= 128);
  int small = fs_test_small();
  if (small) {
    CHECK(mj->jnt_type[0] == mjJNT_FREE);
    g_nworld = 2;
    g_nstep1 = g_nstep = 8;
  }
  Run* a = calloc(1, sizeof *a);
  Run* b = calloc(1, sizeof *b);

  // 1. peak_contacts against the contacts read after every step (no warm-up: the
  //    steps the status covers are the ones read).
  if (fs_replay_plan(&r, mj, model, &t, &bind, g_nworld, g_nstep1, 0, &err)) return 1;
  if (small) r.init_worlds = spawn_low, r.arg = &r;
  int seen[NWORLD] = {0};
  CHECK(run(&r, 1, a, seen) == 0);
  for (int w = 0; w < g_nworld; w++)
    CHECK_MSG(a->st[w].peak_contacts == seen[w] && seen[w] > 0,
              "world %d: peak_contacts %d, the largest ncon read %d", w, a->st[w].peak_contacts,
              seen[w]);
  printf("1. peak_contacts = the most contacts read after a step (%d steps):", g_nstep1);
  for (int w = 0; w < g_nworld; w++) printf(" %d", seen[w]);
  printf("\n");
  fs_replay_plan_free(&r);

  // 2. bounded at the peak: the same bits. (No warm-up: FlyGym's settles every world
  //    the same way, to one peak; without it the worlds' peaks differ, for part 3.)
  if (fs_replay_plan(&r, mj, model, &t, &bind, g_nworld, g_nstep, 0, &err)) return 1;
  if (small) r.init_worlds = spawn_low, r.arg = &r;
  CHECK(run(&r, g_nstep, a, NULL) == 0);
  int peak = 0;
  for (int w = 0; w < g_nworld; w++) {
    CHECK_MSG(!fs_world_has_problem(&a->st[w]), "world %d has a problem unbounded", w);
    peak = a->st[w].peak_contacts > peak ? a->st[w].peak_contacts : peak;
  }
  r.max_contacts = peak;
  CHECK(run(&r, g_nstep, b, NULL) == 0);
  size_t nq = (size_t)mj->nq * g_nworld;
  CHECK_MSG(!memcmp(a->qpos, b->qpos, nq * sizeof(double)),
            "bounded at the peak (%d contacts), the state differs from the unbounded run's", peak);
  for (int w = 0; w < g_nworld; w++)
    CHECK_MSG(!fs_world_has_problem(&b->st[w]) && b->st[w].peak_contacts == a->st[w].peak_contacts,
              "world %d: bounded at %d, a problem or another peak (%d vs %d)", w, peak,
              b->st[w].peak_contacts, a->st[w].peak_contacts);
  CHECK(a->cost.contacts > peak && b->cost.contacts == peak);
  CHECK(b->cost.world_bytes < a->cost.world_bytes);
  printf("2. bounded at the peak, %d contacts a world (of %d slots): bit-identical, %.0f KiB a "
         "world instead of %.0f\n",
         peak, a->cost.contacts, b->cost.world_bytes / 1024, a->cost.world_bytes / 1024);

  // 3. one short of the peak.
  r.max_contacts = peak - 1;
  CHECK(run(&r, g_nstep, b, NULL) == 0);
  int nfit = 0, nover = 0;
  for (int w = 0; w < g_nworld; w++) {
    const fsWorldStatus* s = &b->st[w];
    if (a->st[w].peak_contacts <= peak - 1) {
      nfit++;
      CHECK_MSG(!fs_world_has_problem(s) &&
                    !memcmp(a->qpos + w * mj->nq, b->qpos + w * mj->nq, mj->nq * sizeof(double)),
                "world %d fits %d contacts (peak %d) and yet differs or has a problem", w, peak - 1,
                a->st[w].peak_contacts);
    } else {
      nover++;
      CHECK_MSG(s->warnings[mjWARN_CONTACTFULL] > 0 && fs_world_has_problem(s) &&
                    s->peak_contacts > peak - 1,
                "world %d needs %d contacts, holds %d: CONTACTFULL %d, peak %d", w,
                a->st[w].peak_contacts, peak - 1, s->warnings[mjWARN_CONTACTFULL],
                s->peak_contacts);
    }
  }
  CHECK(nover > 0 && nfit > 0);
  printf("3. bounded at %d: %d world(s) fit and stay bit-identical, %d warned (CONTACTFULL)\n",
         peak - 1, nfit, nover);
  fs_replay_plan_free(&r);

  // 4. bounds that hold every slot leave the sizes alone.
  fsModel m;
  if (fs_model_build(mj, model, &m, &err)) return 1;
  int nconmax = m.nconmax, nefcmax = m.nefcmax;
  fs_model_bound_contacts(&m, 0);
  CHECK(m.nconmax == nconmax && m.nefcmax == nefcmax);
  fs_model_bound_contacts(&m, nconmax + 5);
  CHECK(m.nconmax == nconmax && m.nefcmax == nefcmax);
  fs_model_bound_contacts(&m, 10);
  CHECK(m.nconmax == 10 && m.nefcmax == 40 && m.nefcJ == 40 * m.njmax); // condim 3: 4 rows
  fs_model_free(&m);
  printf("4. a bound of 0 or of every slot (%d) keeps the sizes; 10 contacts: 40 rows\n", nconmax);

  free(a);
  free(b);
  fs_replay_binding_free(&bind);
  fs_targets_free(&t);
  mj_deleteModel(mj);
  return fs_test_finish("engine contact bound");
}
