// Child processes (see common/sys/spawn.h).
#include "common/sys/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/sys/interrupt.h"

extern char** environ;

// The child's side of fs_spawn_tied, between fork and exec: async-signal-safe calls only.
static void exec_tied(const fsSpawnSpec* s, pid_t parent, int report) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
  int in = s->stdin_fd >= 0 ? s->stdin_fd : open("/dev/null", O_RDONLY);
  if (in < 0 || dup2(in, STDIN_FILENO) < 0) _exit(127);
  if (s->stdout_fd >= 0 && dup2(s->stdout_fd, STDOUT_FILENO) < 0) _exit(127);
  if (s->stderr_fd >= 0 && dup2(s->stderr_fd, STDERR_FILENO) < 0) _exit(127);
  static const int dflt[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  for (size_t k = 0; k < sizeof dflt / sizeof *dflt; k++) signal(dflt[k], SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (s->own_group) setpgid(0, 0);
  execvp(s->argv[0], (char* const*)s->argv);
  int e = errno;
  if (write(report, &e, sizeof e) < 0) _exit(127);
  _exit(127);
}

// fork, the parent-death signal, exec: posix_spawn cannot set the signal.
pid_t fs_spawn_tied(const fsSpawnSpec* s, fsError* err) {
  int report[2]; // the exec's errno, if it fails; closed by a successful exec
  if (pipe2(report, O_CLOEXEC) != 0) {
    fs_fail(err, "%s: cannot start it: %s", s->argv[0], strerror(errno));
    return -1;
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) exec_tied(s, parent, report[1]);
  close(report[1]);
  int e = 0;
  ssize_t got = 0;
  if (pid > 0)
    while ((got = read(report[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
  else
    e = errno;
  close(report[0]);
  if (pid > 0 && got > 0) { // exec failed: the child has exited
    fs_spawn_wait(pid);
    pid = -1;
  }
  if (pid < 0)
    fs_fail(err, "%s: cannot start it: %s; fix: install it or put it on PATH", s->argv[0],
            strerror(e));
  return pid;
}

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

int fs_spawn_wait_for(pid_t pid, double limit_s, int before, int* status) {
  struct timespec t0, nap = {0, 1000000}; // polled every 1 ms, doubling up to 100 ms
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return !before && fs_interrupted() ? 2 : 0;
    if (r < 0 && errno != EINTR) return -1;
    int stop = !before && fs_interrupted();
    if (stop || seconds_since(&t0) >= limit_s) {
      kill(pid, SIGKILL);
      while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
      }
      return stop ? 2 : 1;
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
