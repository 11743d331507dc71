// Child processes of the outputs: perf, ffmpeg, the plot script.
//
// posix_spawn with the child's standard streams and up to two extra descriptors
// (placed at fds 3 and 4) chosen by the caller, optionally in its own process group
// so that a Ctrl-C at the terminal reaches flysim (which then stops the run cleanly)
// but not the helper that must finish writing its file.
#ifndef FLYSIM_COMMON_SYS_SPAWN_H
#define FLYSIM_COMMON_SYS_SPAWN_H

#include <sys/types.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsSpawnSpec {
  const char* const* argv; // argv[0] is an absolute path or found on PATH
  int stdin_fd;            // -1: /dev/null
  int stdout_fd;           // -1: inherited
  int stderr_fd;           // -1: inherited
  int extra_fd[2];         // become fds 3 and 4 in the child (-1: none)
  int own_group;           // run in a new process group
} fsSpawnSpec;

/// Start the child; returns its pid, or -1 with err naming the program and the fix.
pid_t fs_spawn(const fsSpawnSpec* s, fsError* err);

/// fs_spawn for a helper whose work only flysim finishes (h5repack's copy, the plots of its
/// file): killed (SIGKILL) if flysim dies first, never an orphan. extra_fd is not passed.
pid_t fs_spawn_tied(const fsSpawnSpec* s, fsError* err);

/// Wait for pid (retrying on EINTR); returns its wait status, or -1.
int fs_spawn_wait(pid_t pid);

/// Wait at most limit_s seconds for pid: 0 (its wait status in *status), 1 (it was still
/// running: killed with SIGKILL and reaped, *status the kill's), 2 (a Ctrl-C, SIGTERM or
/// SIGHUP came after the spawn, common/sys/interrupt.h: killed and reaped likewise, whether
/// or not the signal reached it too) or -1 (cannot wait: errno). before is fs_interrupted()
/// read before the spawn: a signal taken earlier (the run's Ctrl-C) is not new, one that
/// came between the spawn and this call is.
int fs_spawn_wait_for(pid_t pid, double limit_s, int before, int* status);

/// "exited with status 3" / "was killed by signal 9" into out.
void fs_spawn_describe(int status, char* out, unsigned long n);

/// Last n bytes (at most 1500) of a text file, for error messages; "" if unreadable.
void fs_file_tail(const char* path, char* out, unsigned long n);

#ifdef __cplusplus
}
#endif
#endif
