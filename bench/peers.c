// flysim bench's peers (bench/peers.h).
#include "bench/peers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sys/spawn.h"
#include "common/outputs/plots.h"

typedef struct Peer {
  const char* name;
  const char* script; // below the source tree
  const char* what;
  const char* python_env; // the variable naming its Python (else flysim's)
  const char* fix;
} Peer;

static const Peer kPeers[] = {
    {"flygym", "bench/peers/flygym_cpu.py", "FlyGym's CPU loop (Simulation.step, 1 thread)",
     "FLYSIM_PYTHON", "run scripts/setup.sh (the venv has flygym), or set FLYSIM_PYTHON"},
    {"mjx", "bench/peers/mjx.py",
     "MuJoCo MJX (JAX): no adhesion, margins or noslip (see bench/peers/mjx.py)",
     "FLYSIM_MJX_PYTHON",
     "point FLYSIM_MJX_PYTHON at a Python with jax and mujoco-mjx 3.16 (pip install "
     "mujoco-mjx==3.16.0 jax, with jax[cuda12] on a GPU)"},
    {"rollout", "bench/peers/rollout.py",
     "MuJoCo's rollout (mujoco.rollout: mj_step on its thread pool, the same settled state "
     "and controls)",
     "FLYSIM_PYTHON", "run scripts/setup.sh (the venv has mujoco), or set FLYSIM_PYTHON"},
};
enum { NPEER = sizeof kPeers / sizeof kPeers[0] };

static const Peer* find(const char* name) {
  for (int i = 0; i < NPEER; i++)
    if (!strcmp(kPeers[i].name, name)) return &kPeers[i];
  return NULL;
}

int fs_bench_peer_known(const char* name) {
  return find(name) != NULL;
}

const char* fs_bench_peer_names(void) {
  return "flygym, mjx, rollout";
}

int fs_bench_peer_on_gpu(const char* name) {
  return !strcmp(name, "mjx");
}

int fs_bench_peer_takes_path(const char* name) {
  return !strcmp(name, "mjx") || !strcmp(name, "rollout");
}

// The last "summary " line of the log into the row.
static int parse_summary(const char* log, fsBenchRow* out) {
  FILE* f = fopen(log, "r");
  if (!f) return -1;
  char line[2048], last[2048] = "";
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "summary ", 8)) snprintf(last, sizeof last, "%s", line);
  fclose(f);
  if (!last[0]) return -1;
  double wall = 0;
  int got = 0;
  for (char* tok = strtok(last + 8, " \n"); tok; tok = strtok(NULL, " \n")) {
    char* eq = strchr(tok, '=');
    if (!eq) continue;
    *eq = 0;
    const char* v = eq + 1;
    if (!strcmp(tok, "threads")) out->nthread = atoi(v);
    if (!strcmp(tok, "wall_s")) wall = atof(v);
    if (!strcmp(tok, "world_steps_per_s")) got = (out->wsps_median = atof(v)) > 0;
    if (!strcmp(tok, "world_steps_per_s_min")) out->wsps_min = atof(v);
    if (!strcmp(tok, "world_steps_per_s_max")) out->wsps_max = atof(v);
    if (!strcmp(tok, "realtime_x")) out->realtime_median = atof(v);
    if (!strcmp(tok, "problem_worlds")) out->problem_worlds = atoi(v);
  }
  if (out->wsps_min <= 0 || out->wsps_max <= 0) out->wsps_min = out->wsps_max = out->wsps_median;
  return got && wall > 0 ? 0 : -1;
}

void fs_bench_peer(const char* name, int nworld, int nstep, int repeats, const char* model,
                   const char* const* extra, const char* log_dir, fsBenchRow* out) {
  memset(out, 0, sizeof *out);
  snprintf(out->stepper, sizeof out->stepper, "%s", name);
  out->peer = 1;
  out->p = (fsBenchPoint){FS_BACKEND_CPU, 64, 0, nworld, 0};
  out->nstep = nstep;
  out->repeats = repeats;
  const Peer* peer = find(name);
  if (!peer) {
    fs_bench_row_error(out, "no peer '%s'; fix: one of %s", name, fs_bench_peer_names());
    return;
  }
  snprintf(out->desc, sizeof out->desc, "%s", peer->what);
  char script[4096], log[4200], worlds[32], steps[32], reps[32];
  fs_source_path(peer->script, script, sizeof script);
  snprintf(log, sizeof log, "%s/peer_%s.log", log_dir, name);
  snprintf(worlds, sizeof worlds, "%d", nworld);
  snprintf(steps, sizeof steps, "%d", nstep);
  snprintf(reps, sizeof reps, "%d", repeats);
  const char* env = getenv(peer->python_env);
  const char* python = env && env[0] ? env : fs_python();
  enum { MAX_ARGS = 24 };
  const char* argv[MAX_ARGS] = {python,    script, "--worlds", worlds,
                                "--steps", steps,  "--model",  model};
  int argc = 8;
  if (repeats > 1) argv[argc++] = "--repeat", argv[argc++] = reps;
  for (int i = 0; extra && extra[i] && argc < MAX_ARGS - 1; i++) argv[argc++] = extra[i];
  argv[argc] = NULL;
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    fs_bench_row_error(out, "%s: cannot create the peer's log: %s", log, strerror(errno));
    return;
  }
  fsSpawnSpec spec = {argv, -1, fd, fd, {-1, -1}, 0};
  fsError err = {{0}, FS_OK};
  pid_t pid = fs_spawn(&spec, &err);
  close(fd);
  if (pid < 0) {
    fs_bench_row_error(out, "%s", err.msg);
    return;
  }
  int status = fs_spawn_wait(pid);
  if (status == 0 && !parse_summary(log, out)) {
    out->ok = 1;
    return;
  }
  char how[64], tail[400];
  fs_spawn_describe(status, how, sizeof how);
  fs_file_tail(log, tail, sizeof tail);
  fs_bench_row_error(out, "peer %s (`%s %s`) %s without a summary line: %s (log %s); fix: %s", name,
                     python, script, how, tail, log, peer->fix);
}
