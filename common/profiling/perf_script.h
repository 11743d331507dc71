// `perf script` text: read it into samples with stacks, summarise the hottest
// functions, and write it as a speedscope JSON profile.
//
// Input: what `perf script -F comm,tid,time,period,event,ip,sym,dso` prints, one
// sample per paragraph:
//   flysim 11190  3643.491452:    1001001 cpu-clock:u:
//   \t          23d69a mj_island (/path/libmujoco.so.3.16.0)
//   \t          2212f9 mj_fwdPosition (/path/libmujoco.so.3.16.0)
//   ...                                    (leaf first, root last)
// Function names lose the ".llvm.<hash>" suffixes that link-time optimisation adds
// to MuJoCo's internal functions (fwdConstraint.llvm.1842... -> fwdConstraint).
//
// Output: speedscope's file format (https://www.speedscope.app/file-format-schema.json),
// one "sampled" profile per thread, busiest first, weights in milliseconds.
#ifndef FLYSIM_COMMON_PROFILING_PERF_SCRIPT_H
#define FLYSIM_COMMON_PROFILING_PERF_SCRIPT_H

#include <stdio.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsPerfFrame {
  char* name; // function ("[unknown]" if perf could not name it)
  char* file; // basename of its binary ("flysim", "libmujoco.so.3.16.0", ...)
} fsPerfFrame;

typedef struct fsPerfThread {
  int tid;
  char comm[64];
  long long nsample;
} fsPerfThread;

typedef struct fsPerfProfile {
  int nframe, frame_cap;
  fsPerfFrame* frames;
  int nsample, sample_cap;
  int* sample_thread;    // (nsample) index into threads
  double* sample_ms;     // (nsample) weight: perf's period in ms (cpu-clock: ns)
  long long* sample_off; // (nsample + 1) start of each stack in stack_frames
  long long nstack, stack_cap;
  int* stack_frames; // frames of all stacks, root first
  int nthread, thread_cap;
  fsPerfThread* threads;
  int* hash; // open-addressing table of frames (hash_cap entries, -1 empty)
  int hash_cap;
} fsPerfProfile;

/// Parse perf script text from f into p (zeroed by the caller). path names f in errors.
int fs_perf_script_parse(FILE* f, const char* path, fsPerfProfile* p, fsError* err);
void fs_perf_profile_free(fsPerfProfile* p);

/// Samples whose stack has a frame named name (inclusive), and whose leaf is name (self).
void fs_perf_profile_count(const fsPerfProfile* p, const char* name, long long* total,
                           long long* self);

/// Write p as speedscope JSON; name is the profile's title.
int fs_perf_speedscope_write(const fsPerfProfile* p, const char* path, const char* name,
                             const char* exporter, fsError* err);

/// Print the nmax functions with most self samples, with self and total percentages,
/// over the samples that have a frame named `under` on their stack (NULL: all).
void fs_perf_profile_print_top(const fsPerfProfile* p, int nmax, const char* under, FILE* out);

#ifdef __cplusplus
}
#endif
#endif
