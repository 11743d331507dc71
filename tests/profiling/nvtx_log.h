// Check a log written by the test injection library (nvtx_inject.c) against the
// ranges the CUDA backend opens, counting only the "flysim" domain's events:
//
//   warmup                 (warmup_steps ranges named step inside it)
//   timed_run
//     step  x steps
//
// Names, order, counts and nesting must match exactly; every push is popped.
#ifndef FLYSIM_TESTS_PROFILING_NVTX_LOG_H
#define FLYSIM_TESTS_PROFILING_NVTX_LOG_H

#include "common/base/error.h"

/// Check log text (lines as nvtx_inject.c writes them). Returns 0, or -1 with err
/// naming the first line that differs and what was expected there.
int nvtx_log_check_text(const char* text, int warmup_steps, int steps, fsError* err);

/// The same for a log file.
int nvtx_log_check_file(const char* path, int warmup_steps, int steps, fsError* err);

/// Read a whole file (NUL-terminated; free() it), or NULL.
char* nvtx_read_file(const char* path);

/// 1 if the file at path contains the bytes of needle, 0 if not, -1 if unreadable.
int nvtx_file_contains(const char* path, const char* needle);

/// 1 if the executable at path holds nvtx3's loader (its string
/// "InitializeInjectionNvtx2", which this function never stores whole), 0 if not,
/// -1 if unreadable.
int nvtx_binary_has_loader(const char* path);

#endif
