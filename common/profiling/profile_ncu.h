// `flysim bench --ncu PATH`: run the same command again under Nsight Compute, on one
// launch of the step kernel, and print the few numbers that matter.
//
// fs_ncu_run spawns (and waits for)
//
//   ncu --target-processes all --kernel-name regex:step_kernel --launch-skip SKIP
//       --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats
//       --section WarpStateStats --section MemoryWorkloadAnalysis --section SourceCounters
//       --import-source yes --force-overwrite --export PATH
//       <absolute path of this executable> <argv[1..] without --ncu>
//
// with FLYSIM_UNDER_NCU=1 in the child's environment (the child then runs the command
// itself: the guard, and the missing --ncu, each stop a loop). Then it reads the
// report back (`ncu --import PATH.ncu-rep --csv --page details` and `--page raw`) and
// prints the step kernel's duration, registers, theoretical and achieved occupancy,
// SM and memory throughput, warp cycles per issued instruction and the five largest
// warp stall reasons. The report itself opens in Nsight Compute (source-level hot
// spots: the kernels are built with -lineinfo).
#ifndef FLYSIM_COMMON_PROFILING_PROFILE_NCU_H
#define FLYSIM_COMMON_PROFILING_PROFILE_NCU_H

#include <stddef.h>
#include <stdio.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Set (to "1") in the environment of the flysim that ncu runs.
#define FS_NCU_GUARD_ENV "FLYSIM_UNDER_NCU"

/// Entries fs_ncu_argv adds beyond argc (its `out` needs argc + this, NULL included).
#define FS_NCU_ARGV_EXTRA 40

/// 1 if FLYSIM_UNDER_NCU is set to a non-empty value other than "0".
int fs_ncu_guard_set(void);

/// The ncu command line (pure): out = {ncu, the options above with skip and output,
/// self, argv[1..] minus `--ncu V` / `--ncu=V`, NULL}; skip is written into skip_buf
/// (16 bytes). Returns the number of entries before the NULL, or -1 (err says why).
int fs_ncu_argv(int argc, char* const* argv, const char* ncu, const char* self, const char* output,
                int skip, char* skip_buf, const char** out, int cap, fsError* err);

/// The report ncu writes for --export `output`: output + ".ncu-rep" unless it ends so.
void fs_ncu_report_path(const char* output, char* out, size_t n);

/// Run the command under ncu (argc/argv as main received them), skipping `skip`
/// launches of the step kernel, then print the numbers to stdout. Returns 0, or -1
/// with err naming the fix (ncu not on PATH, ncu failed, the report unreadable).
int fs_ncu_run(int argc, char** argv, const char* output, int skip, fsError* err);

/// Print the numbers that matter from ncu's CSV exports (details page, raw page), as
/// fs_ncu_run does. Returns how many it found.
int fs_ncu_print_summary(const char* details_csv, const char* raw_csv, FILE* out);

#ifdef __cplusplus
}
#endif
#endif
