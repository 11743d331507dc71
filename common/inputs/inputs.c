// A replay's inputs loaded at once (common/inputs/inputs.h).
#include "common/inputs/inputs.h"

#include <stdlib.h>
#include <string.h>

#ifndef FLYSIM_ASSETS_DIR
#define FLYSIM_ASSETS_DIR "assets"
#endif

const char* fs_assets_dir(void) {
  const char* env = getenv("FLYSIM_ASSETS");
  return env && env[0] ? env : FLYSIM_ASSETS_DIR;
}

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
