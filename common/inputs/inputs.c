// A replay's inputs loaded at once (common/inputs/inputs.h).
#include "common/inputs/inputs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/inputs/controls.h"
#include "common/sys/interrupt.h"

#ifndef FLYSIM_ASSETS_DIR
#define FLYSIM_ASSETS_DIR "assets"
#endif

const char* fs_assets_dir(void) {
  const char* env = getenv("FLYSIM_ASSETS");
  return env && env[0] ? env : FLYSIM_ASSETS_DIR;
}

static int cmp_name(const void* a, const void* b) {
  return strcmp((const char*)a, (const char*)b);
}

int fs_world_model_path(const char* name, char* out, size_t n, fsError* err) {
  const char* dir = fs_assets_dir();
  int len;
  if (!strcmp(name, "flat"))
    len = snprintf(out, n, "%s/mesh.mjb", dir);
  else if (!strcmp(name, "flat_capsule"))
    len = snprintf(out, n, "%s/capsule.mjb", dir);
  else if (!name[0] || strchr(name, '/') || name[0] == '.')
    len = -1;
  else
    len = snprintf(out, n, "%s/worlds/%s.mjb", dir, name);
  if (len >= 0 && (size_t)len >= n)
    return fs_fail(err, "--world %s: the path is too long (%d characters)", name, len);
  if (len >= 0 && access(out, R_OK) == 0) return 0;
  // the worlds there are: flat, flat_capsule and worlds/*.mjb, sorted
  char list[1024] = "flat, flat_capsule";
  char wdir[4096];
  snprintf(wdir, sizeof wdir, "%s/worlds", dir);
  DIR* d = opendir(wdir);
  char names[64][256];
  int k = 0;
  for (struct dirent* e; d && (e = readdir(d)) != NULL && k < 64;) {
    size_t l = strlen(e->d_name);
    if (l > 4 && l < sizeof names[0] && !strcmp(e->d_name + l - 4, ".mjb")) {
      snprintf(names[k], sizeof names[k], "%.*s", (int)(l - 4), e->d_name);
      k++;
    }
  }
  if (d) closedir(d);
  qsort(names, (size_t)k, sizeof names[0], cmp_name);
  for (int i = 0; i < k; i++) {
    size_t used = strlen(list), l = strlen(names[i]);
    if (used + l + 3 > sizeof list) break;
    memcpy(list + used, ", ", 2);
    memcpy(list + used + 2, names[i], l + 1);
  }
  if (name[0] && strspn(name, "0123456789") == strlen(name))
    return fs_fail(err,
                   "--world: '%s' is not a world's name; fix: --worlds %s for that many "
                   "worlds, or --world one of %s",
                   name, name, list);
  return fs_fail(err,
                 "--world: '%s' is not an exported world (assets: %s); fix: one of %s, or "
                 "scripts/setup.sh to export FlyGym's worlds",
                 name, dir, list);
}

int fs_replay_inputs_load(const char* model_path, const char* targets_path, int disable,
                          fsReplayInputs* in, fsError* err) {
  memset(in, 0, sizeof *in);
  in->m = fs_model_load(model_path, err);
  if (!in->m && fs_interrupted()) // MuJoCo's open or read cut short (a FIFO it includes)
    return fs_fail(err,
                   "%s: interrupted by signal %d while loading the model (does it, or a file it "
                   "includes, name a FIFO or a file on a slow disk?); nothing was run",
                   model_path, fs_interrupted());
  if (!in->m) return -1;
  in->m->opt.disableflags |= disable;
  if (!strcmp(targets_path, FS_TARGETS_SINE))
    return fs_targets_sine(in->m, &in->targets, err) ||
                   fs_replay_bind_controls(in->m, &in->targets, &in->bind, err)
               ? -1
               : 0;
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
