// Child processes (see common/sys/spawn.h).
#include "common/sys/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

pid_t fs_spawn(const fsSpawnSpec* s, fsError* err) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  // Extra descriptors first go to high numbers, so that placing one at 3 or 4
  // cannot overwrite another before it is placed.
  int high[2] = {-1, -1};
  for (int k = 0; k < 2; k++)
    if (s->extra_fd[k] >= 0) high[k] = fcntl(s->extra_fd[k], F_DUPFD_CLOEXEC, 64);
  if (s->stdin_fd >= 0)
    posix_spawn_file_actions_adddup2(&fa, s->stdin_fd, STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (s->stdout_fd >= 0) posix_spawn_file_actions_adddup2(&fa, s->stdout_fd, STDOUT_FILENO);
  if (s->stderr_fd >= 0) posix_spawn_file_actions_adddup2(&fa, s->stderr_fd, STDERR_FILENO);
  for (int k = 0; k < 2; k++)
    if (high[k] >= 0) posix_spawn_file_actions_adddup2(&fa, high[k], 3 + k);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  sigset_t none, dflt;
  sigemptyset(&none);
  sigemptyset(&dflt);
  sigaddset(&dflt, SIGINT);
  sigaddset(&dflt, SIGTERM);
  sigaddset(&dflt, SIGHUP);
  sigaddset(&dflt, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dflt);
  if (s->own_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, s->argv[0], &fa, &attr, (char* const*)s->argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  for (int k = 0; k < 2; k++)
    if (high[k] >= 0) close(high[k]);
  if (rc != 0) {
    fs_fail(err, "%s: cannot start it: %s; fix: install it or put it on PATH", s->argv[0],
            strerror(rc));
    return -1;
  }
  return pid;
}

int fs_spawn_wait(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

static double seconds_since(const struct timespec* t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

int fs_spawn_wait_for(pid_t pid, double limit_s, int* status) {
  struct timespec t0, nap = {0, 1000000}; // polled every 1 ms, doubling up to 100 ms
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return 0;
    if (r < 0 && errno != EINTR) return -1;
    if (seconds_since(&t0) >= limit_s) {
      kill(pid, SIGKILL);
      while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
      }
      return 1;
    }
    nanosleep(&nap, NULL);
    if (nap.tv_nsec < 100000000) nap.tv_nsec *= 2;
  }
}

void fs_spawn_describe(int status, char* out, unsigned long n) {
  if (status < 0)
    snprintf(out, n, "could not be waited for");
  else if (WIFEXITED(status))
    snprintf(out, n, "exited with status %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(out, n, "was killed by signal %d", WTERMSIG(status));
  else
    snprintf(out, n, "ended with wait status %d", status);
}

void fs_file_tail(const char* path, char* out, unsigned long n) {
  out[0] = 0;
  FILE* f = fopen(path, "rb");
  if (!f) return;
  unsigned long want = n - 1 < 1500 ? n - 1 : 1500;
  if (fseek(f, 0, SEEK_END) == 0) {
    long size = ftell(f);
    if (size > (long)want)
      fseek(f, size - (long)want, SEEK_SET);
    else
      fseek(f, 0, SEEK_SET);
  }
  size_t k = fread(out, 1, want, f);
  out[k] = 0;
  fclose(f);
  while (k > 0 && (out[k - 1] == '\n' || out[k - 1] == ' ')) out[--k] = 0;
}
