// The two passes of a collision test that makes its own MuJoCo worlds (test_box_collision.c,
// test_cylinder_collision.c), as tests/engine/test_collision.c runs them:
//  1. the stage alone from MuJoCo's geom frames, outputs poisoned;
//  2. kinematics then collision from the state alone;
// each compared contact by contact with MuJoCo's (fsh_compare_contacts).
#ifndef FLYSIM_TESTS_ENGINE_COLLISION_PASSES_H
#define FLYSIM_TESTS_ENGINE_COLLISION_PASSES_H

#include <stdio.h>

#include "common/parity/contacts.h"
#include "common/parity/harness.h"
#include "tests/testutil.h"

#define FS_TEST_NO_DEVICE (-2) // fs_test_collision_passes: the runner has no GPU here

/// Both passes on the N worlds ref of model m (mj), runner r opened and closed here: the
/// comparisons that failed (0: all passed), FS_TEST_NO_DEVICE without a GPU, -1 on an error
/// (printed); worst[0], worst[1] the passes' largest errors.
static int fs_test_collision_passes(fshRunner* r, fsModel* m, const mjModel* mj, mjData* const* ref,
                                    int N, const fshTol* tol, double tol_boundary,
                                    double worst[2]) {
  fsWorlds b;
  fsError err;
  worst[0] = worst[1] = 0;
  int nbad = 0, rc = fs_worlds_alloc(m, N, &b, &err);
  if (!rc) rc = r->open(r->self, m, N, &err);
  if (rc) { // no GPU (FS_TEST_SKIP), or an error
    fs_worlds_free(&b);
    if (rc != FS_TEST_SKIP) fprintf(stderr, "%s\n", err.msg);
    return rc == FS_TEST_SKIP ? FS_TEST_NO_DEVICE : -1;
  }
  printf(" collision alone (inputs from MuJoCo, outputs poisoned):\n");
  if (fsh_load_worlds(m, &b, mj, ref, FS_STAGE_STATE) ||
      fsh_load_worlds(m, &b, mj, ref, FS_STAGE_KINEMATICS))
    nbad++;
  fs_worlds_poison(m, &b, FS_STAGE_COLLISION);
  if (!nbad && fsh_run(r, &b, FS_STAGE_COLLISION, 0)) nbad++;
  if (!nbad)
    nbad += fsh_compare_contacts("collision", m, &b, ref, tol, tol_boundary, FS_STAGE_COLLISION,
                                 &worst[0]);
  printf(" kinematics + collision from the state (outputs poisoned):\n");
  if (fsh_load_worlds(m, &b, mj, ref, FS_STAGE_STATE)) nbad++;
  fs_worlds_poison(m, &b, FS_STAGE_KINEMATICS);
  fs_worlds_poison(m, &b, FS_STAGE_COLLISION);
  if (fsh_run(r, &b, FS_STAGE_KINEMATICS, 0) || fsh_run(r, &b, FS_STAGE_COLLISION, 0)) nbad++;
  nbad += fsh_compare_contacts("collision", m, &b, ref, tol, tol_boundary, FS_STAGE_COLLISION,
                               &worst[1]);
  r->close(r->self);
  fs_worlds_free(&b);
  printf("\nworst error (%s): collision alone %.2e | after kinematics %.2e\n", r->name, worst[0],
         worst[1]);
  return nbad;
}

#endif
