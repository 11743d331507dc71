#include "compare/stage_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

// common/parity's types (precision-free), and its functions in both precisions by their
// names (common/exec/real.h FS_PREC appends _f32 / _f64).
#include "common/parity/stages.h"

#define FS_DECLARE_PRECISION(p)                                                                    \
  fshRunner fsh_runner_host_##p(void);                                                             \
  fshRunner fsh_runner_cuda_##p(void);                                                             \
  void fsh_set_report_##p(fshReportFn fn, void* arg);                                              \
  fshTol fsh_stage_tolerance_##p(double* tol_b);                                                   \
  int fsh_check_stages_##p(const fshRunner* r, const mjModel* mj, const char* path,                \
                           const fshStageCheck* c, fsError* err);
FS_DECLARE_PRECISION(f32)
FS_DECLARE_PRECISION(f64)

typedef struct Collect {
  fsStageReport* out;
  double rel; // the build's tolerance, for reports without their own bound
  int nbad;   // reports beyond their bounds
} Collect;

// The stage of a report's label: "kinematics", ..., "step 1".
static void collect(void* arg, const fshFieldReport* r) {
  Collect* c = arg;
  fsStageReport* out = c->out;
  double bound = r->bound > 0 ? r->bound : c->rel;
  c->nbad += r->bad;
  fsStageRow* row = NULL;
  for (int i = 0; i < out->nrow && !row; i++)
    if (!strcmp(out->rows[i].stage, r->label)) row = &out->rows[i];
  if (!row) {
    if (out->nrow == FS_STAGE_ROWS) return;
    row = &out->rows[out->nrow++];
    memset(row, 0, sizeof *row);
    snprintf(row->stage, sizeof row->stage, "%s", r->label);
    row->err = -1;
    row->pass = 1;
  }
  double q = r->err / bound, q_row = row->err / row->bound;
  if (row->err < 0 || q > q_row || (isnan(q) && !isnan(q_row))) {
    snprintf(row->field, sizeof row->field, "%s", r->field);
    row->err = r->err;
    row->bound = bound;
    row->world = r->world;
    row->index = r->index;
    row->ours = r->ours;
    row->ref = r->ref;
  }
  row->pass &= !r->bad;
}

int fs_stage_check(const fsStageCheckSpec* spec, fsStageReport* out, fsError* err) {
  memset(out, 0, sizeof *out);
  int f32 = spec->bits == 32;
  fshRunner r;
  if (spec->gpu) {
#ifdef FLYSIM_WITH_CUDA
    r = f32 ? fsh_runner_cuda_f32() : fsh_runner_cuda_f64();
#else
    return fs_fail(err, "--stages on cuda: this flysim was built without CUDA");
#endif
  } else {
    r = f32 ? fsh_runner_host_f32() : fsh_runner_host_f64();
  }
  fshStageCheck c;
  memset(&c, 0, sizeof c);
  c.nworld = spec->nworld > 0 ? spec->nworld : 8;
  c.seed = spec->seed;
  c.parts = FSH_CHECK_ALONE | FSH_CHECK_STEPS; // one step
  c.noise = (fshNoise){0.2, 5, 0.3, 3};        // contact-free models (test_stages' fly's)
  c.tol = f32 ? fsh_stage_tolerance_f32(&c.tol_b) : fsh_stage_tolerance_f64(&c.tol_b);
  snprintf(out->runner, sizeof out->runner, "%s", r.name);
  out->nworld = c.nworld;
  Collect col = {out, c.tol.rel, 0};
  (f32 ? fsh_set_report_f32 : fsh_set_report_f64)(collect, &col);
  int nbad = f32 ? fsh_check_stages_f32(&r, spec->m, spec->path, &c, err)
                 : fsh_check_stages_f64(&r, spec->m, spec->path, &c, err);
  (f32 ? fsh_set_report_f32 : fsh_set_report_f64)(NULL, NULL);
  if (nbad == FSH_SKIP) return fs_fail(err, "--stages: no CUDA device here");
  if (nbad < 0) return -1;
  if (nbad > col.nbad && out->nrow < FS_STAGE_ROWS) { // failures that are not a field's
    fsStageRow* row = &out->rows[out->nrow++];
    memset(row, 0, sizeof *row);
    snprintf(row->stage, sizeof row->stage, "contact sets");
    snprintf(row->field, sizeof row->field, "ncon/geoms");
    row->err = INFINITY;
    row->world = row->index = -1;
  }
  out->pass = nbad == 0;
  return 0;
}
