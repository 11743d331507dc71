// MuJoCo's per-phase timers (see common/profiling/mujoco_timing.h).
#include "common/profiling/mujoco_timing.h"

#include <string.h>
#include <time.h>

#include "common/recorder/h5util.h"

// Seconds on CLOCK_MONOTONIC since the first call (small numbers keep full
// double resolution in MuJoCo's running sums).
static mjtNum monotonic_seconds(void) {
  static struct timespec t0;
  static int started = 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (!started) { // set once, from the thread that installs the callback (see install)
    t0 = ts;
    started = 1;
  }
  return (mjtNum)(ts.tv_sec - t0.tv_sec) + 1e-9 * (mjtNum)(ts.tv_nsec - t0.tv_nsec);
}

void fs_mjtiming_install(void) {
  monotonic_seconds(); // fix the origin before worker threads read the clock
  mjcb_time = monotonic_seconds;
}

void fs_mjtiming_uninstall(void) {
  mjcb_time = NULL;
}

void fs_mjtiming_zero(mjData* d) {
  memset(d->timer, 0, sizeof d->timer);
}

void fs_mjtiming_add(fsMjTiming* t, const mjData* d) {
  for (int i = 0; i < mjNTIMER; i++) {
    t->seconds[i] += d->timer[i].duration;
    t->calls[i] += d->timer[i].number;
  }
  t->nworld++;
}

int fs_mjtiming_parent(int i) {
  switch (i) {
  case mjTIMER_FORWARD:
  case mjTIMER_ADVANCE:
    return mjTIMER_STEP;
  case mjTIMER_POSITION:
  case mjTIMER_VELOCITY:
  case mjTIMER_ACTUATION:
  case mjTIMER_CONSTRAINT:
    return mjTIMER_FORWARD;
  case mjTIMER_POS_KINEMATICS:
  case mjTIMER_POS_INERTIA:
  case mjTIMER_POS_COLLISION:
  case mjTIMER_POS_MAKE:
  case mjTIMER_POS_PROJECT:
    return mjTIMER_POSITION;
  case mjTIMER_COL_BROAD:
  case mjTIMER_COL_NARROW:
    return mjTIMER_POS_COLLISION;
  default:
    return -1; // step, inverse
  }
}

int fs_mjtiming_depth(int i) {
  int depth = 0;
  for (int p = fs_mjtiming_parent(i); p >= 0; p = fs_mjtiming_parent(p)) depth++;
  return depth;
}

static int has_children(int i) {
  for (int c = 0; c < mjNTIMER; c++)
    if (fs_mjtiming_parent(c) == i) return 1;
  return 0;
}

static void print_row(FILE* out, int depth, const char* name, const char* calls, double s,
                      double steps, double step_s) {
  char label[64];
  snprintf(label, sizeof label, "%*s%s", 2 * depth, "", name);
  fprintf(out, "  %-26s %12s %12.3f %10.3f %9.1f\n", label, calls, 1e3 * s, 1e6 * s / steps,
          step_s > 0 ? 100.0 * s / step_s : 0.0);
}

// Time of parent i not covered by its timed children (the untimed rest of the phase).
static double other_seconds(const fsMjTiming* t, int i) {
  double rest = t->seconds[i];
  for (int c = 0; c < mjNTIMER; c++)
    if (fs_mjtiming_parent(c) == i) rest -= t->seconds[c];
  return rest;
}

// Row of phase i, then its sub-phases, then the rest of i as "(other)".
static void print_phase(const fsMjTiming* t, FILE* out, int i) {
  double steps = (double)t->calls[mjTIMER_STEP], step_s = t->seconds[mjTIMER_STEP];
  if (t->calls[i] == 0) return;
  char calls[32];
  snprintf(calls, sizeof calls, "%lld", t->calls[i]);
  int depth = fs_mjtiming_depth(i);
  print_row(out, depth, mjTIMERSTRING[i], calls, t->seconds[i], steps, step_s);
  for (int c = 0; c < mjNTIMER; c++)
    if (fs_mjtiming_parent(c) == i) print_phase(t, out, c);
  if (has_children(i)) print_row(out, depth + 1, "(other)", "", other_seconds(t, i), steps, step_s);
}

void fs_mjtiming_print(const fsMjTiming* t, FILE* out) {
  if (t->calls[mjTIMER_STEP] <= 0) {
    fprintf(out, "MuJoCo timing: no steps were timed\n");
    return;
  }
  fprintf(out,
          "\nMuJoCo per-phase timing (mjData.timer, clock from mjcb_time), %lld world-steps "
          "summed over %d world%s and all threads:\n",
          t->calls[mjTIMER_STEP], t->nworld, t->nworld == 1 ? "" : "s");
  fprintf(out, "  %-26s %12s %12s %10s %9s\n", "phase (mjTIMERSTRING)", "calls", "total ms",
          "us/step", "% of step");
  for (int i = 0; i < mjNTIMER; i++)
    if (fs_mjtiming_parent(i) < 0) print_phase(t, out, i);
  fprintf(out, "  (other): time in a phase outside its timed sub-phases; us/step: per world-step.\n"
               "  Note: the timer callback adds overhead (two clock reads per phase per step), so "
               "read this\n  as a relative breakdown, not as absolute throughput.\n");
}

int fs_mjtiming_write_h5(const fsMjTiming* t, hid_t file, const char* path, fsError* err) {
  hid_t g = -1;
  hsize_t n = mjNTIMER;
  int parent[mjNTIMER];
  for (int i = 0; i < mjNTIMER; i++) parent[i] = fs_mjtiming_parent(i);
  FS_H5_TRY(err, path,
            g = H5Gcreate2(file, "mujoco_timing", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (fs_h5_write_strings(g, path, "phase_names", mjTIMERSTRING, mjNTIMER, err)) goto fail;
  struct {
    const char* name;
    hid_t ftype, mtype;
    const void* data;
    const char* doc;
  } cols[] = {
      {"parent", H5T_STD_I32LE, H5T_NATIVE_INT, parent,
       "index (into phase_names) of the phase each phase is part of; -1: top level"},
      {"calls", H5T_STD_I64LE, H5T_NATIVE_LLONG, t->calls,
       "times each phase ran, summed over worlds (mjData.timer[i].number)"},
      {"seconds", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, t->seconds,
       "cumulative duration of each phase, summed over worlds and threads "
       "(mjData.timer[i].duration, clock: CLOCK_MONOTONIC through mjcb_time)"},
  };
  for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
    if (fs_h5_write_array(g, path, cols[k].name, 1, &n, cols[k].ftype, cols[k].mtype, cols[k].data,
                          0, NULL, cols[k].doc, err))
      goto fail;
  if (fs_h5_attr_int(g, path, "world_steps", t->calls[mjTIMER_STEP], err) ||
      fs_h5_attr_int(g, path, "nworld", t->nworld, err) ||
      fs_h5_attr_string(g, path, "note",
                        "MuJoCo's per-phase timers over the timed loop (zeroed after the "
                        "warm-up). The timer callback adds overhead to every phase: a "
                        "relative breakdown, not absolute throughput.",
                        err))
    goto fail;
  fs_h5_close(g);
  return 0;
fail:
  fs_h5_close(g);
  return -1;
}
