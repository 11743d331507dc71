// --mujoco-timing: MuJoCo's per-phase timer table, printed and in the HDF5 file.
//
// 3 worlds on 2 threads of the walker, 300 steps after a 500-step warm-up: every
// phase MuJoCo runs once per step is counted 900 times (the warm-up's 1500 calls
// were zeroed), sub-phases never add up to more than their phase, and the printed
// table says what the file says. Names are MuJoCo's mjTIMERSTRING.
#include <stdlib.h>

#include <mujoco/mujoco.h>

#include "common/profiling/mujoco_timing.h"
#include "tests/outputs/outputs_util.h"
#include "tests/testutil.h"

enum { NWORLD = 3, NSTEP = 300 };

typedef struct Row {
  int found, depth;
  long long calls;
  double ms, pct;
} Row;

// Parse the printed table: one Row per timer (by name), depth from the indentation.
static void parse_table(const char* out, Row rows[mjNTIMER]) {
  memset(rows, 0, sizeof(Row) * mjNTIMER);
  const char* p = strstr(out, "phase (mjTIMERSTRING)");
  if (!p) return;
  for (p = strchr(p, '\n'); p && *p; p = strchr(p + 1, '\n')) {
    const char* line = p + 1;
    if (!strncmp(line, "  (other):", 10) || line[0] != ' ') break;
    int indent = (int)strspn(line, " ");
    char name[64];
    long long calls = 0;
    double ms = 0, us = 0, pct = 0;
    if (sscanf(line, "%63s %lld %lf %lf %lf", name, &calls, &ms, &us, &pct) != 5) continue;
    for (int i = 0; i < mjNTIMER; i++)
      if (!strcmp(name, mjTIMERSTRING[i])) rows[i] = (Row){1, (indent - 2) / 2, calls, ms, pct};
  }
}

static void check_file(const char* h5, const Row rows[mjNTIMER]) {
  int n = 0;
  char** names = out_read_strings(h5, "mujoco_timing/phase_names", &n);
  long long nc = 0, np = 0, ns = 0;
  long long* calls = out_read_ints(h5, "mujoco_timing/calls", &nc);
  long long* parent = out_read_ints(h5, "mujoco_timing/parent", &np);
  double* sec = out_read_doubles(h5, "mujoco_timing/seconds", &ns);
  CHECK(names && n == mjNTIMER && calls && nc == mjNTIMER && parent && np == mjNTIMER && sec &&
        ns == mjNTIMER);
  if (!names || !calls || !parent || !sec || n != mjNTIMER) goto done;
  long long world_steps = 0;
  CHECK(out_attr_int(h5, "/mujoco_timing", "world_steps", &world_steps) == 0);
  CHECK(world_steps == (long long)NWORLD * NSTEP);
  for (int i = 0; i < mjNTIMER; i++) {
    CHECK_MSG(!strcmp(names[i], mjTIMERSTRING[i]), "phase %d: %s", i, names[i]);
    CHECK(parent[i] == fs_mjtiming_parent(i));
    // Every phase of mj_step runs once per step and world (inverse never runs).
    long long want = i == mjTIMER_INVERSE ? 0 : (long long)NWORLD * NSTEP;
    CHECK_MSG(calls[i] == want, "%s: %lld calls, expected %lld", names[i], calls[i], want);
    CHECK_MSG(sec[i] >= 0 && (calls[i] == 0 || sec[i] > 0), "%s: %g s", names[i], sec[i]);
    double children = 0;
    for (int c = 0; c < mjNTIMER; c++)
      if (parent[c] == i) children += sec[c];
    CHECK_MSG(children <= sec[i] * (1 + 1e-12) + 1e-12, "%s: sub-phases %.9g s > %.9g s", names[i],
              children, sec[i]);
    if (want == 0) continue;
    // The printed table shows the same numbers.
    CHECK_MSG(rows[i].found, "%s missing from the printed table", names[i]);
    CHECK(rows[i].calls == calls[i]);
    CHECK_NEAR(rows[i].ms, 1e3 * sec[i], 1e-3 + 1e-6 * rows[i].ms);
    CHECK_NEAR(rows[i].pct, 100.0 * sec[i] / sec[mjTIMER_STEP], 0.051);
    CHECK_MSG(rows[i].depth == fs_mjtiming_depth(i), "%s printed at depth %d", names[i],
              rows[i].depth);
  }
done:
  out_free_strings(names, n);
  free(calls);
  free(parent);
  free(sec);
}

static void test_table(const char* dir, const char* targets) {
  char args[2048], h5[700];
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --worlds %d --threads 2 --sim-steps %d --mujoco-timing "
           "--save-data '%s/run' --no-video --no-plots --quiet",
           fs_test_model("walker.xml"), targets, NWORLD, NSTEP, dir);
  char* out = NULL;
  CHECK(out_flysim("", args, &out) == 0);
  CHECK_CONTAINS(out, "MuJoCo per-phase timing");
  CHECK_CONTAINS(out, "900 world-steps summed over 3 worlds and all threads");
  CHECK_CONTAINS(out, "the timer callback adds overhead");
  CHECK_CONTAINS(out, "relative breakdown");
  Row rows[mjNTIMER];
  parse_table(out, rows);
  snprintf(h5, sizeof h5, "%s/run/replay.h5", dir);
  check_file(h5, rows);
  // The table comes before the summary line, which stays the last line.
  const char* table = strstr(out, "MuJoCo per-phase timing");
  const char* summary = strstr(out, "summary backend=cpu");
  const char* end = summary ? strchr(summary, '\n') : NULL;
  CHECK(table && summary && table < summary && end && !end[1]);
  free(out);
}

// Without --mujoco-timing there is no table and no /mujoco_timing group; with the
// CUDA backend the option is a usage error naming the fix.
static void test_off_and_cuda(const char* dir, const char* targets) {
  char args[2048], h5[700];
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --sim-steps 50 --save-data '%s/off' --no-video "
           "--no-plots --quiet",
           fs_test_model("walker.xml"), targets, dir);
  char* out = NULL;
  CHECK(out_flysim("", args, &out) == 0);
  CHECK(!strstr(out, "MuJoCo per-phase timing"));
  snprintf(h5, sizeof h5, "%s/off/replay.h5", dir);
  long long n = 0;
  long long* calls = out_read_ints(h5, "mujoco_timing/calls", &n);
  CHECK(calls == NULL);
  free(calls);
  free(out);
  snprintf(args, sizeof args, "--backend cuda --mujoco-timing --model '%s' --targets '%s'",
           fs_test_model("walker.xml"), targets);
  CHECK(out_flysim("", args, &out) == 2);
  CHECK_CONTAINS(out, "--mujoco-timing");
  CHECK_CONTAINS(out, "--backend cpu");
  free(out);
}

int main(void) {
  const char* dir = fs_test_tmpdir("timing");
  char targets[600];
  snprintf(targets, sizeof targets, "%s/walker_targets.h5", dir);
  if (out_write_walker_targets(targets, 2000)) return 1;
  test_table(dir, targets);
  test_off_and_cuda(dir, targets);
  return fs_test_finish("test_mujoco_timing");
}
