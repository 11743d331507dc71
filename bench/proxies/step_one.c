// step_one: one world of a model on one thread through the public API, for instruction
// counts (bench/proxies/instructions_by_stage.sh --model): the world starts at the model's first
// keyframe, controls included (its qpos0 and zero controls without keyframes), as
// bench/cpu/per_core.py starts it, and runs WARMUP + STEPS steps in one fs_batch_step call.
// Two runs of STEPS and 2 x STEPS differ by STEPS steps, set-up and warm-up cancelled.
//
//   step_one MODEL cpu|host f32|f64 WARMUP STEPS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include <flysim/flysim.h>

#include "common/inputs/model.h"

static int usage(void) {
  fprintf(stderr, "usage: step_one MODEL cpu|host f32|f64 WARMUP STEPS\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc != 6) return usage();
  const char* path = argv[1];
  int cpu = strcmp(argv[2], "cpu") == 0, f32 = strcmp(argv[3], "f32") == 0;
  int warmup = atoi(argv[4]), steps = atoi(argv[5]);
  if ((!cpu && strcmp(argv[2], "host")) || (!f32 && strcmp(argv[3], "f64")) || warmup < 0 ||
      steps < 1)
    return usage();
  fsError err;
  mjModel* m = fs_model_load(path, &err);
  if (!m) {
    fprintf(stderr, "step_one: %s\n", err.msg);
    return 1;
  }
  fsBatchOptions opt = fs_batch_default_options();
  opt.backend = cpu ? FS_BACKEND_CPU : FS_BACKEND_HOST;
  opt.precision = cpu ? FS_PRECISION_DEFAULT : (f32 ? FS_PRECISION_F32 : FS_PRECISION_F64);
  opt.nworld = 1;
  opt.nthread = 1;
  fsBatch b;
  int rc = 1;
  if (fs_batch_open(m, &opt, &b, &err)) {
    fprintf(stderr, "step_one: %s: %s\n", path, err.msg);
    mj_deleteModel(m);
    return 1;
  }
  if ((m->nkey > 0 && fs_batch_reset(b, NULL, 0, &err)) || fs_batch_step(b, warmup + steps, &err))
    fprintf(stderr, "step_one: %s: %s\n", path, err.msg);
  else
    rc = 0;
  fs_batch_close(b);
  mj_deleteModel(m);
  return rc;
}
