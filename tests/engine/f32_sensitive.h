// The float32 collision tests' worlds: which of MuJoCo's reference worlds float32 can
// resolve (tests/engine/test_box_collision.c, test_cull.c).
#ifndef FLYSIM_TESTS_ENGINE_F32_SENSITIVE_H
#define FLYSIM_TESTS_ENGINE_F32_SENSITIVE_H

#include <math.h>
#include <stdio.h>

#include <mujoco/mujoco.h>

#include "common/base/random.h"
#include "common/parity/harness.h"

// Does MuJoCo's own contact set move when its geom frames are perturbed as float32
// perturbs them (each entry moved by up to 2e-6, of
// max(1, |position|) for positions; 4 draws)? The capsule-box collider makes
// discrete choices (the closest feature, by comparisons with a 1e-15 slack; a second point
// or none; an axis exactly along a box axis) that a float32 rounding flips: then the
// contact count, or a contact's place or normal, jumps (by more than 1e-4 of the world's
// size). Such worlds are left out of the float32 comparison (counted and printed).
static inline int fs_test_f32_sensitive(const mjModel* mj, const mjData* ref, mjData* tmp) {
  for (int t = 0; t < 4; t++) {
    mj_copyData(tmp, mj, ref);
    for (int i = 0; i < 3 * mj->ngeom; i++)
      tmp->geom_xpos[i] += 2e-6 * fmax(1, fabs(tmp->geom_xpos[i])) * (2 * fs_random_uniform() - 1);
    for (int i = 0; i < 9 * mj->ngeom; i++)
      tmp->geom_xmat[i] += 2e-6 * (2 * fs_random_uniform() - 1);
    mj_collision(mj, tmp);
    if (tmp->ncon != ref->ncon) return 1;
    double scale = 1e-9;
    for (int c = 0; c < ref->ncon; c++)
      for (int k = 0; k < 3; k++) scale = fmax(scale, fabs(ref->contact[c].pos[k]));
    for (int c = 0; c < ref->ncon; c++) {
      const mjContact *a = &ref->contact[c], *b = &tmp->contact[c];
      if (a->geom[0] != b->geom[0] || a->geom[1] != b->geom[1]) return 1;
      for (int k = 0; k < 3; k++)
        if (fabs(a->pos[k] - b->pos[k]) > 1e-4 * scale || fabs(a->frame[k] - b->frame[k]) > 1e-4)
          return 1;
    }
  }
  return 0;
}

// Keep the worlds whose contacts float32 can resolve (f32_sensitive); returns how many.
static inline int fs_test_keep_resolvable(const mjModel* mj, mjData** ref, int n) {
  mjData* tmp = fsh_make_data(mj); // the arena of ref's (fsh_keyframe_world)
  int kept = 0;
  for (int w = 0; w < n; w++) {
    if (fs_test_f32_sensitive(mj, ref[w], tmp)) {
      mj_deleteData(ref[w]);
      continue;
    }
    ref[kept++] = ref[w];
  }
  mj_deleteData(tmp);
  printf(" float32: %d of %d worlds left out: MuJoCo's own contacts jump when its geom frames "
         "move by 2e-6\n",
         n - kept, n);
  return kept;
}

#endif
