// flysim compare --save DIR: DIR/compare.h5 (every series, the per-world table, the
// stage check, the command line and versions) and DIR/divergence.png
// (scripts/plot_compare.py).
//
// Layout (S steps compared, N worlds):
//   /step (S), /time (S) s
//   /b_vs_a/{dq_max, dq_rms, dq_geomean} (S) rad, /b_vs_a/thorax (S) model length,
//   /b_vs_a/ncon_mismatch (S) worlds; /floor_vs_a/... the same for the floor run
//   /tracking/{a, b} (S) rad: RMS |q - target| over worlds and driven joints
//   /worlds/{final_dq_b, final_dq_floor, max_dq_b, max_dq_floor, geomean_dq_b,
//            geomean_dq_floor, tracking_rms_a, tracking_rms_b} (N),
//   /worlds/{problem_a, problem_b, world_start} (N)
//   /stages/{stage, field} (K) strings, {error, bound, ours, ref} (K), {world,
//            element, pass} (K): with --stages
//   attributes: backend_a, backend_b, floor, ratio (the verdict's), max_ratio (its
//   bound), max_dq_ratio (largest over largest), thresholds, verdict
//   ("pass", "fail" or "incomplete"), steps_planned, steps_compared, interrupted,
//   command_line, flysim_version, mujoco_version, model_file(s), targets_file(s).
#ifndef FLYSIM_COMPARE_COMPARE_IO_H
#define FLYSIM_COMPARE_COMPARE_IO_H

#include <hdf5.h>

#include "compare/compare.h"
#include "compare/stage_check.h"

typedef struct fsCompareMeta {
  const char* command_line;
  const fsStageReport* stages; // NULL: not run
  const char* verdict;         // "pass", "fail", "incomplete"
} fsCompareMeta;

/// Create (truncate) the file now, so that an unwritable --save fails before the run.
hid_t fs_compare_h5_create(const char* path, fsError* err);

/// Write everything and close the file (also on failure).
int fs_compare_h5_write(hid_t file, const char* path, const fsCompareSpec* spec,
                        const fsCompareResult* res, const fsCompareMeta* meta, fsError* err);

/// Draw DIR/divergence.png from DIR/compare.h5 (scripts/plot_compare.py).
int fs_compare_plot(const char* h5path, const char* dir, fsError* err);

#endif
