// `flysim replay --backend cuda --profile PATH`: re-execute flysim under Nsight
// Systems.
//
// fs_nsys_reexec replaces the process (execv) with
//
//   nsys profile --trace=cuda,nvtx,osrt --cuda-graph-trace=node --force-overwrite=true
//        --output PATH <absolute path of this executable> <argv[1..] without --profile>
//
// after setting FLYSIM_UNDER_NSYS=1. The child flysim, started by nsys, runs the
// replay; nsys writes PATH.nsys-rep when it exits. Two things stop a loop, each
// enough on its own: the child's arguments have no --profile, and in the child
// FLYSIM_UNDER_NSYS is set, so fs_nsys_reexec returns 0 and the run goes on.
//
// Why strip --profile: the child's command line (recorded in replay.h5 and in the
// report) is then the run that was profiled, and the child never depends on the
// guard. Stripped: `--profile V`, `--profile=V`, and getopt_long's abbreviations of
// them down to `--prof`; nothing after a `--` argument. A shorter abbreviation would
// stay in the child, where the guard makes it harmless.
//
// The CUDA backend's NVTX ranges (common/base/nvtx.h) appear in the report; that header
// also says how to read it.
#ifndef FLYSIM_COMMON_PROFILING_PROFILE_NSYS_H
#define FLYSIM_COMMON_PROFILING_PROFILE_NSYS_H

#include <stddef.h>

#include "common/base/error.h"
#include "common/sys/files.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Set (to "1") in the environment of the flysim that nsys runs.
#define FS_NSYS_GUARD_ENV "FLYSIM_UNDER_NSYS"

/// Entries fs_nsys_argv adds beyond argc (its `out` needs argc + this, NULL included).
#define FS_NSYS_ARGV_EXTRA 8

/// 1 if FLYSIM_UNDER_NSYS is set to a non-empty value other than "0", else 0.
int fs_nsys_guard_set(void);

/// Build the nsys command line (pure: no allocation, no system calls):
///   out = {nsys, "profile", "--trace=cuda,nvtx,osrt", "--cuda-graph-trace=node",
///          "--force-overwrite=true", "--output", output, self, argv[1..] minus
///          --profile, NULL}
/// argv[0] is not forwarded (self replaces it). Pointers in out point into argv or are
/// the arguments or string constants. out holds cap entries (argc + FS_NSYS_ARGV_EXTRA
/// is always enough). Returns the number of entries before the NULL, or -1 (err says
/// why: --profile without a value, cap too small, empty output).
int fs_nsys_argv(int argc, char* const* argv, const char* nsys, const char* self,
                 const char* output, const char** out, int cap, fsError* err);

/// Absolute path of the running executable (/proc/self/exe) into out (n bytes).
/// Returns 0, or -1 with err.
int fs_self_exe_path(char* out, size_t n, fsError* err);

/// The report nsys writes for --output `output`: output + ".nsys-rep" (unless output
/// already ends with it), into out.
void fs_nsys_report_path(const char* output, char* out, size_t n);

/// `--profile output`: if FLYSIM_UNDER_NSYS is set, return 0 (already under nsys:
/// run). Otherwise find nsys on PATH, create output's parent folder, print to stderr
/// the command and how to read the report (`nsys stats --report cuda_gpu_kern_sum
/// output.nsys-rep`), set FLYSIM_UNDER_NSYS=1 and execv nsys; returns only on error
/// (-1, err names the fix: nsys not on PATH, folder not writable, exec failed).
/// argc/argv: as main received them (argv[0] is replaced by this executable's
/// absolute path; argv[1..] are forwarded minus --profile).
int fs_nsys_reexec(int argc, char** argv, const char* output, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
