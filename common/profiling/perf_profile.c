// perf record on our own process around the timed loop (see common/profiling/perf_profile.h).
#include "common/profiling/perf_profile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sys/clock.h"
#include "common/sys/files.h"
#include "common/profiling/perf_phases.h"
#include "common/profiling/perf_script.h"
#include "common/profiling/profile_nsys.h"
#include "common/replay/replay_io.h"
#include "common/sys/spawn.h"

#define FS_PERF_ACK_TIMEOUT_S 30.0

struct fsPerf {
  pid_t pid;
  int ctl_w; // we write commands
  int ack_r; // perf writes "ack\n"
  char perf[PATH_MAX];
  char output[PATH_MAX];
  char data[PATH_MAX + 64]; // perf.data
  char log[PATH_MAX + 80];  // perf's stdout and stderr
  char freq[32], call_graph[64];
  double enabled_at, enabled_s;
};

static const char* env_or(const char* name, const char* dflt) {
  const char* v = getenv(name);
  return v && v[0] ? v : dflt;
}

static int find_perf(char* out, size_t n, fsError* err) {
  return fs_find_program("perf", "FLYSIM_PERF",
                         "--profile with --backend cpu samples the loop with Linux perf",
                         "install it (Debian: apt-get install linux-perf; Ubuntu: "
                         "linux-tools-generic)",
                         out, n, err);
}

static int read_paranoid(void) {
  FILE* f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
  int v = 2;
  if (f) {
    if (fscanf(f, "%d", &v) != 1) v = 2;
    fclose(f);
  }
  return v;
}

// Can this process open a user-space cpu-clock sampling event on itself?
static int probe_perf_event_open(fsError* err) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.sample_freq = 999;
  a.freq = 1;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  if (fd >= 0) {
    close((int)fd);
    return 0;
  }
  int e = errno, paranoid = read_paranoid();
  if (e == EACCES || e == EPERM) {
    if (paranoid > 2)
      return fs_fail(err,
                     "--profile: perf may not sample this process: "
                     "/proc/sys/kernel/perf_event_paranoid is %d; fix: sudo sysctl "
                     "kernel.perf_event_paranoid=2 (user-space sampling of your own "
                     "processes), or run as root",
                     paranoid);
    return fs_fail(err,
                   "--profile: perf_event_open is not permitted here (%s) although "
                   "perf_event_paranoid is %d: a seccomp profile or container policy blocks it; "
                   "fix: allow perf_event_open (e.g. docker run --cap-add PERFMON or "
                   "--security-opt seccomp=unconfined), or run without --profile",
                   strerror(e), paranoid);
  }
  return fs_fail(err,
                 "--profile: perf_event_open failed: %s; fix: a kernel with "
                 "CONFIG_PERF_EVENTS (Linux only), or run without --profile",
                 strerror(e));
}

int fs_perf_probe(const char* output, fsError* err) {
  char perf[PATH_MAX];
  size_t len = strlen(output);
  if (!len || output[len - 1] == '/')
    return fs_fail(err,
                   "--profile '%s': names a folder; fix: name the file, e.g. --profile "
                   "out/cpu.speedscope.json",
                   output);
  if (find_perf(perf, sizeof perf, err)) return -1;
  if (probe_perf_event_open(err)) return -1;
  return fs_make_parent_dirs(output, "--profile", err);
}

// Read perf's "ack\n" within the timeout; fails if perf exits first.
static int wait_ack(fsPerf* p, const char* cmd, fsError* err) {
  char buf[64];
  size_t n = 0;
  double deadline = fs_clock_s() + FS_PERF_ACK_TIMEOUT_S;
  while (fs_clock_s() < deadline) {
    struct pollfd pfd = {p->ack_r, POLLIN, 0};
    int r = poll(&pfd, 1, 200);
    if (r < 0 && errno != EINTR) break;
    if (r > 0) {
      ssize_t k = read(p->ack_r, buf + n, sizeof buf - 1 - n);
      if (k <= 0) break; // perf closed its end: it exited
      n += (size_t)k;
      buf[n] = 0;
      if (memmem(buf, n, "ack", 3)) return 0; // perf writes "ack\n\0"
      if (n >= sizeof buf - 1) n = 0;
    }
    int status;
    if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
      p->pid = -1;
      char how[64], tail[1600];
      fs_spawn_describe(status, how, sizeof how);
      fs_file_tail(p->log, tail, sizeof tail);
      return fs_fail(err,
                     "--profile: perf %s (while waiting for '%s'); perf said: %s; fix: "
                     "check that `%s record -p %d` works here",
                     how, cmd, tail[0] ? tail : "(nothing)", p->perf, (int)getpid());
    }
  }
  char tail[1600];
  fs_file_tail(p->log, tail, sizeof tail);
  return fs_fail(err,
                 "--profile: perf did not answer '%s' within %.0f s; perf said: %s; fix: "
                 "check that `%s record -p %d` works here",
                 cmd, FS_PERF_ACK_TIMEOUT_S, tail[0] ? tail : "(nothing)", p->perf, (int)getpid());
}

static int send_command(fsPerf* p, const char* cmd, fsError* err) {
  char line[32];
  int n = snprintf(line, sizeof line, "%s\n", cmd);
  if (write(p->ctl_w, line, (size_t)n) != n)
    return fs_fail(err, "--profile: cannot send '%s' to perf: %s; fix: check perf's log %s", cmd,
                   strerror(errno), p->log);
  return wait_ack(p, cmd, err);
}

static pid_t spawn_perf(fsPerf* p, int ctl_r, int ack_w, fsError* err) {
  char pid[32];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  const char* argv[] = {
      p->perf,       "record", "-e", "cpu-clock:u", "-F",        p->freq,  "--call-graph",
      p->call_graph, "-p",     pid,  "--delay=-1",  "--control", "fd:3,4", "--no-buildid-cache",
      "-o",          p->data,  NULL};
  int log = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    fs_fail(err, "%s: cannot create perf's log: %s; fix: choose a writable --profile path", p->log,
            strerror(errno));
    return -1;
  }
  fsSpawnSpec s = {argv, -1, log, log, {ctl_r, ack_w}, 1};
  pid_t child = fs_spawn(&s, err);
  close(log);
  return child;
}

fsPerf* fs_perf_start(const char* output, fsError* err) {
  fsPerf* p = fs_calloc(err, "the profiler", 1, sizeof *p);
  if (!p) return NULL;
  p->pid = -1;
  p->ctl_w = p->ack_r = -1;
  snprintf(p->output, sizeof p->output, "%s", output);
  snprintf(p->freq, sizeof p->freq, "%s", env_or("FLYSIM_PERF_FREQ", "999"));
  snprintf(p->call_graph, sizeof p->call_graph, "%s",
           env_or("FLYSIM_PERF_CALL_GRAPH", "dwarf,16384"));
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", output);
  char* slash = strrchr(dir, '/');
  if (slash)
    slash[1] = 0;
  else
    dir[0] = 0;
  snprintf(p->data, sizeof p->data, "%sperf.data.flysim-%d", dir, (int)getpid());
  snprintf(p->log, sizeof p->log, "%s.log", p->data);
  int ctl[2] = {-1, -1}, ack[2] = {-1, -1};
  if (find_perf(p->perf, sizeof p->perf, err)) goto fail;
  if (pipe2(ctl, O_CLOEXEC) || pipe2(ack, O_CLOEXEC)) {
    fs_fail(err,
            "--profile: cannot create perf's control pipes: %s; fix: raise the open-file "
            "limit (ulimit -n)",
            strerror(errno));
    goto fail;
  }
  p->pid = spawn_perf(p, ctl[0], ack[1], err);
  close(ctl[0]);
  close(ack[1]);
  ctl[0] = ack[1] = -1;
  p->ctl_w = ctl[1];
  p->ack_r = ack[0];
  if (p->pid < 0) goto fail;
  prctl(PR_SET_PTRACER, (unsigned long)p->pid, 0, 0, 0); // Yama: let our child read us
  if (send_command(p, "ping", err)) goto fail;
  return p;
fail:
  for (int i = 0; i < 2; i++) {
    if (ctl[i] >= 0 && ctl[i] != p->ctl_w) close(ctl[i]);
    if (ack[i] >= 0 && ack[i] != p->ack_r) close(ack[i]);
  }
  fs_perf_abort(p);
  return NULL;
}

int fs_perf_enable(fsPerf* p, fsError* err) {
  if (send_command(p, "enable", err)) return -1;
  p->enabled_at = fs_clock_s();
  return 0;
}

int fs_perf_disable(fsPerf* p, fsError* err) {
  if (send_command(p, "disable", err)) return -1;
  if (p->enabled_at > 0) p->enabled_s += fs_clock_s() - p->enabled_at;
  p->enabled_at = 0;
  return 0;
}

// Ask perf to stop (SIGINT: it writes its file's header) and wait; returns its status.
// The control pipe stays open until perf is gone: perf 6.1 aborts its file
// ("Thread and evlist pollfd index mismatch") if the pipe hangs up first.
static int stop_perf(fsPerf* p) {
  int status = -1;
  if (p->pid > 0) {
    kill(p->pid, SIGINT);
    status = fs_spawn_wait(p->pid);
    p->pid = -1;
  }
  if (p->ctl_w >= 0) close(p->ctl_w);
  if (p->ack_r >= 0) close(p->ack_r);
  p->ctl_w = p->ack_r = -1;
  return status;
}

void fs_perf_abort(fsPerf* p) {
  if (!p) return;
  stop_perf(p);
  unlink(p->data);
  unlink(p->log);
  free(p);
}

// perf script --no-inline of the data into text (a file).
static int run_perf_script(fsPerf* p, const char* text, fsError* err) {
  const char* argv[] = {
      p->perf, "script", "--no-inline", "-F", "comm,tid,time,period,event,ip,sym,dso",
      "-i",    p->data,  NULL};
  int out = open(text, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int log = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0 || log < 0) {
    if (out >= 0) close(out);
    if (log >= 0) close(log);
    return fs_fail(err, "%s: cannot write the profile: %s; fix: choose a writable --profile path",
                   text, strerror(errno));
  }
  fsSpawnSpec s = {argv, -1, out, log, {-1, -1}, 1};
  pid_t pid = fs_spawn(&s, err);
  close(out);
  close(log);
  if (pid < 0) return -1;
  int status = fs_spawn_wait(pid);
  if (status != 0) {
    char how[64], tail[1600];
    fs_spawn_describe(status, how, sizeof how);
    fs_file_tail(p->log, tail, sizeof tail);
    return fs_fail(err,
                   "--profile: perf script %s: %s; fix: check that `%s script -i %s` "
                   "works (FLYSIM_PERF_KEEP_DATA=1 keeps the data)",
                   how, tail, p->perf, p->data);
  }
  return 0;
}

static int is_json(const char* path) {
  size_t n = strlen(path);
  return n >= 5 && !strcmp(path + n - 5, ".json");
}

static void print_summary(const fsPerf* p, const fsPerfProfile* prof, FILE* out) {
  fprintf(out,
          "\nProfile of the timed loop (%.3f s sampled): %d samples on %d thread%s "
          "(perf record -e cpu-clock:u -F %s --call-graph %s)\n",
          p->enabled_s, prof->nsample, prof->nthread, prof->nthread == 1 ? "" : "s", p->freq,
          p->call_graph);
  fprintf(out, "  samples per thread:");
  for (int i = 0; i < prof->nthread && i < 8; i++)
    fprintf(out, " %s[%d] %lld%s", prof->threads[i].comm, prof->threads[i].tid,
            prof->threads[i].nsample, i + 1 < prof->nthread ? "," : "");
  fprintf(out, "%s\n", prof->nthread > 8 ? " ..." : "");
  long long total = 0, self = 0;
  fs_perf_profile_count(prof, "mj_step", &total, &self);
  fprintf(out, "  mj_step is on the stack of %.1f%% of the samples\n",
          prof->nsample ? 100.0 * total / prof->nsample : 0.0);
  // Everything, then MuJoCo's step alone (rendering, when on, can dominate the former).
  if (total < prof->nsample) fs_perf_profile_print_top(prof, 8, NULL, out);
  fs_perf_profile_print_top(prof, 12, "mj_step", out);
  fprintf(out,
          "Wrote %s (%s): open it at https://www.speedscope.app (drag the file onto the "
          "page) or run `npx speedscope %s`\n",
          p->output, is_json(p->output) ? "speedscope JSON" : "perf script text", p->output);
}

int fs_perf_finish(fsPerf* p, FILE* out, fsPerfResult* res, fsError* err) {
  int rc = -1;
  int status = stop_perf(p);
  char text[PATH_MAX + 80];
  snprintf(text, sizeof text, "%s", p->output);
  if (is_json(p->output)) snprintf(text, sizeof text, "%s.txt", p->data);
  fsPerfProfile prof;
  memset(&prof, 0, sizeof prof);
  struct stat st;
  if (stat(p->data, &st) != 0) {
    char how[64], tail[1600];
    fs_spawn_describe(status, how, sizeof how);
    fs_file_tail(p->log, tail, sizeof tail);
    fs_fail(err, "--profile: perf wrote no data (%s); perf said: %s", how, tail);
    goto done;
  }
  if (run_perf_script(p, text, err)) goto done;
  FILE* f = fopen(text, "r");
  if (!f) {
    fs_fail(err, "%s: cannot read perf script's output: %s", text, strerror(errno));
    goto done;
  }
  int parse_failed = fs_perf_script_parse(f, text, &prof, err);
  fclose(f);
  if (parse_failed) goto done;
  if (is_json(p->output)) {
    char exporter[64];
    snprintf(exporter, sizeof exporter, "flysim %s (perf script)", fs_version_string());
    if (fs_perf_speedscope_write(&prof, p->output, "flysim replay --backend cpu: timed loop",
                                 exporter, err))
      goto done;
  }
  print_summary(p, &prof, out);
  if (res) {
    res->samples = prof.nsample;
    fs_perf_phase_shares(&prof, res->phase_share, &res->step_samples);
  }
  rc = 0;
done:
  fs_perf_profile_free(&prof);
  if (is_json(p->output)) unlink(text);
  const char* keep = getenv("FLYSIM_PERF_KEEP_DATA");
  if (keep && !strcmp(keep, "1"))
    fprintf(out, "Kept perf's data: %s (perf report -i %s)\n", p->data, p->data);
  else
    unlink(p->data);
  if (rc == 0) unlink(p->log);
  free(p);
  return rc;
}
