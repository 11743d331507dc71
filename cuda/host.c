#include "cuda/host.h"

#include <stdlib.h>

#include "cuda/stage_forward.h"

double fs_test_perturb_passive = 0;

int fs_host_test_switches(fsError* err) {
  const char* s = getenv("FLYSIM_PERTURB_PASSIVE");
  fs_test_perturb_passive = 0;
  if (!s || !*s) return 0;
  char* end;
  double x = strtod(s, &end);
  if (*end || !(x > -1 && x < 1))
    return fs_fail(err,
                   "FLYSIM_PERTURB_PASSIVE='%s' is not a number in (-1, 1); fix: unset it "
                   "(it is a test switch), or give a relative change such as 1e-3",
                   s);
  fs_test_perturb_passive = x;
  return 0;
}

enum { RUN_FORWARD = -1, RUN_STEP = -2 };

typedef struct Call {
  const fsModel* m;
  fsData d;
  int what; // fsStage, RUN_FORWARD or RUN_STEP
  int nstep;
} Call;

static void call_world(void* arg) {
  Call* c = arg;
  if (c->what == RUN_FORWARD)
    fs_forward(c->m, &c->d);
  else if (c->what == RUN_STEP)
    for (int s = 0; s < c->nstep; s++) fs_step(c->m, &c->d);
  else
    fs_stage_run(c->m, &c->d, c->what);
}

// Every world, one after another (on emulated lanes in FS_EMULATE_LANES builds).
static void run_worlds(const fsModel* m, fsBatch* b, int what, int nstep) {
  for (int w = 0; w < b->nworld; w++) {
    Call c = {m, fs_batch_world(m, b, w), what, nstep};
#ifdef FS_EMULATE_LANES
    fs_lanes_run(call_world, &c);
#else
    call_world(&c);
#endif
  }
}

void fs_host_stage(const fsModel* m, fsBatch* b, int stage) {
  run_worlds(m, b, stage, 0);
}

void fs_host_forward(const fsModel* m, fsBatch* b) {
  run_worlds(m, b, RUN_FORWARD, 0);
}

void fs_host_step(const fsModel* m, fsBatch* b, int nstep) {
  run_worlds(m, b, RUN_STEP, nstep);
}

const char* fs_host_real_name(void) {
#ifdef FS_EMULATE_LANES
  return FS_REAL_NAME ", 32 emulated lanes";
#else
  return FS_REAL_NAME;
#endif
}
