// The on-chip proxy: what a world of the model takes, and what the step's on-chip plan
// (common/model/onchip.h) keeps of it, in this build's precision (built as onchip_sizes_f32 and
// onchip_sizes_f64), for several contact bounds (--max-contacts): the world's bytes, its
// intermediates side by side and sharing bytes where their lifetimes allow, and the
// default plans at 4 and 8 lanes a world (848 B and 2,640 B a world on an H200). One CSV
// row per bound on stdout; bench/proxies/onchip_check.py holds them to
// bench/results/onchip-sizes.csv.
//
//   onchip_sizes_f32 [--model PATH] [--header]
#include <stdio.h>
#include <string.h>

#include "common/inputs/inputs.h"
#include "common/inputs/model.h"
#include "common/model/model.h"
#include "common/model/onchip.h"

static const int kBounds[] = {0, 24, 18};                     // 0: every pair's slots
static const long kBudgets[] = {FS_CHIP_DEFAULT_BYTES, 2640}; // 4 and 8 lanes a world

int main(int argc, char** argv) {
  const char* path = NULL;
  int header = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--model") && i + 1 < argc)
      path = argv[++i];
    else if (!strcmp(argv[i], "--header"))
      header = 1;
    else {
      fprintf(stderr, "usage: %s [--model PATH] [--header]\n", argv[0]);
      return 2;
    }
  }
  char deflt[4200];
  if (!path) {
    snprintf(deflt, sizeof deflt, "%s/mesh.mjb", fs_assets_dir());
    path = deflt;
  }
  fsError err;
  mjModel* mj = fs_model_load(path, &err);
  fsModel m;
  if (!mj || fs_model_build(mj, path, &m, &err)) {
    fprintf(stderr, "onchip_sizes: %s\n", err.msg);
    return 1;
  }
  fs_model_without_sensors(&m); // the kernels' model, as the cuda backend builds it
  if (header)
    printf("precision,max_contacts,contacts,rows,world_bytes,intermediates,side_by_side_bytes,"
           "shared_bytes,plan848_fields,plan848_bytes,plan2640_fields,plan2640_bytes\n");
  for (size_t k = 0; k < sizeof kBounds / sizeof *kBounds; k++) {
    fsModel b = m; // sizes only
    fs_model_bound_contacts(&b, kBounds[k]);
    fsChipPlan all, plan[2];
    fs_chip_plan(&b, 0, &all);
    for (int p = 0; p < 2; p++) fs_chip_plan(&b, kBudgets[p], &plan[p]);
    printf("%s,%d,%d,%d,%zu,%d,%ld,%ld,%d,%d,%d,%d\n", FS_REAL_NAME, kBounds[k], b.nconmax,
           b.nefcmax, fs_world_bytes(&b), all.nallow, all.sum_bytes, all.allow_bytes,
           plan[0].nfield, plan[0].bytes, plan[1].nfield, plan[1].bytes);
  }
  fs_model_free(&m);
  mj_deleteModel(mj);
  return 0;
}
