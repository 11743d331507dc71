// flysim compare's report on the terminal: the header (what is compared against what),
// the table (B and the floor against A, per step and per world), the stage check, the
// verdict in words and the key=value summary line.
#ifndef FLYSIM_COMPARE_REPORT_H
#define FLYSIM_COMPARE_REPORT_H

#include <stdio.h>

#include "compare/compare.h"
#include "compare/stage_check.h"

/// What the header names besides the spec.
typedef struct fsCompareInputs {
  const char* what[2]; // "MuJoCo's mj_step", "flysim's kernels on the GPU", ...
  const char* desc[2]; // the backends' descriptions
  const char *model, *model_b, *targets, *targets_b; // "" : B's are A's
  int no_gpu_note;                                   // say that cpu,host stands in for cpu,cuda
} fsCompareInputs;

void fs_compare_print_header(FILE* f, const fsCompareSpec* s, const fsCompareInputs* in);
void fs_compare_print_table(FILE* f, const fsCompareSpec* s, const fsCompareResult* r);
void fs_compare_print_stages(FILE* f, const fsStageReport* st);

/// "pass", "fail" or "incomplete" (stages: NULL when not run).
const char* fs_compare_verdict(const fsCompareResult* r, const fsStageReport* stages);
void fs_compare_print_verdict(FILE* f, const fsCompareSpec* s, const fsCompareResult* r,
                              const fsStageReport* stages);
void fs_compare_print_summary(FILE* f, const fsCompareSpec* s, const fsCompareResult* r,
                              const fsStageReport* stages);

#endif
