// The two views of a NeuroMechFly replay agree: the phases MuJoCo's timer ranks as
// expensive (--mujoco-timing, read from the HDF5 file) are the hot native frames of
// the sampling profile (--profile, read from perf script's text by this test's own
// parser, not flysim's).
//
// A sample is in a timer phase when one of the phase's MuJoCo functions
// (fs_perf_phase_functions: MuJoCo 3.16's names, tail-call targets included) is on
// its stack, and its parent phase too. Checked: (1) >= 85% of the stepping thread's
// samples reach mj_step (the thread with most mj_step samples; the recorder's writer
// thread and the loop's own recording, heavier under the sanitizers, make the rest); (2) the
// timer's costliest part of forward (constraint for NeuroMechFly) is the profile's, and likewise
// inside position (project); (3) for the big phases, the timer's share of the step and the
// profile's differ by < 10 points (about 4 standard errors of a 3000-step profile's ~450 samples).
//
// 77 without the exported assets or where perf cannot sample.
#include <stdlib.h>

#include <mujoco/mujoco.h>

#include "common/profiling/mujoco_timing.h"
#include "common/profiling/perf_phases.h"
#include "tests/outputs/outputs_util.h"
#include "tests/testutil.h"

enum { MAX_THREADS = 64 };

typedef struct Shares {
  long long samples, with_step; // of the stepping thread
  long long all;                // every thread's
  int nthread;
  long long tid[MAX_THREADS], thread_samples[MAX_THREADS], thread_step[MAX_THREADS];
  double phase[mjNTIMER]; // share of the samples with mj_step
} Shares;

// "\t  23d69a mj_island.llvm.123 (/path/lib.so)" -> "mj_island" into name.
static void frame_name(const char* line, char* name, size_t n) {
  name[0] = 0;
  const char* s = line + strspn(line, " \t");
  s += strcspn(s, " \t"); // address
  s += strspn(s, " \t");
  size_t len = strcspn(s, " ");
  const char* dot = strstr(s, ".llvm.");
  if (dot && (size_t)(dot - s) < len) len = (size_t)(dot - s);
  if (len >= n) len = n - 1;
  memcpy(name, s, len);
  name[len] = 0;
}

static int in_phase_list(const char* name, int i) {
  for (const char* const* f = fs_perf_phase_functions(i); *f; f++)
    if (!strcmp(name, *f)) return 1;
  return 0;
}

// The paragraph's thread: "flysim 13642 36641.687643: 1001001 cpu-clock:u:" -> slot of 13642.
static int thread_slot(const char* para, Shares* s) {
  long long tid = -1;
  const char* p = para + strcspn(para, " \t\n");
  if (sscanf(p, "%lld", &tid) != 1) tid = -1;
  for (int k = 0; k < s->nthread; k++)
    if (s->tid[k] == tid) return k;
  if (s->nthread == MAX_THREADS) return MAX_THREADS - 1;
  s->tid[s->nthread] = tid;
  return s->nthread++;
}

static void count_paragraph(char* para, Shares* s, long long count[mjNTIMER]) {
  unsigned on = 0;
  int k = thread_slot(para, s);
  s->all++;
  s->thread_samples[k]++;
  for (char* line = strchr(para, '\n'); line; line = strchr(line + 1, '\n')) {
    char name[256];
    frame_name(line + 1, name, sizeof name);
    for (int i = 0; i < mjNTIMER; i++)
      if (in_phase_list(name, i)) on |= 1u << i;
  }
  if (!(on & (1u << mjTIMER_STEP))) return;
  s->thread_step[k]++;
  for (int i = 0; i < mjNTIMER; i++) {
    int in = (on >> i) & 1;
    for (int a = fs_mjtiming_parent(i); a >= 0; a = fs_mjtiming_parent(a)) in &= (on >> a) & 1;
    count[i] += in;
  }
}

static int profile_shares(const char* path, Shares* s) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = calloc((size_t)n + 1, 1);
  size_t got = text ? fread(text, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!text || got != (size_t)n) {
    free(text);
    return -1;
  }
  long long count[mjNTIMER] = {0};
  memset(s, 0, sizeof *s);
  for (char* p = text; p && *p;) {
    char* end = strstr(p, "\n\n");
    if (end) *end = 0;
    if (strstr(p, "cpu-clock")) count_paragraph(p, s, count);
    p = end ? end + 2 : NULL;
  }
  int step = 0;
  for (int k = 1; k < s->nthread; k++)
    if (s->thread_step[k] > s->thread_step[step]) step = k;
  s->samples = s->thread_samples[step];
  s->with_step = s->thread_step[step];
  for (int i = 0; i < mjNTIMER; i++)
    s->phase[i] = s->with_step ? (double)count[i] / (double)s->with_step : 0;
  free(text);
  return 0;
}

// The costliest child of parent among the mapped ones, by share.
static int top_child(int parent, const double* share) {
  int best = -1;
  for (int c = 0; c < mjNTIMER; c++)
    if (fs_mjtiming_parent(c) == parent && fs_perf_phase_functions(c)[0] &&
        (best < 0 || share[c] > share[best]))
      best = c;
  return best;
}

static void compare(const double* sec, const Shares* prof) {
  double timer[mjNTIMER];
  for (int i = 0; i < mjNTIMER; i++) timer[i] = sec[i] / sec[mjTIMER_STEP];
  for (int i = 0; i < mjNTIMER; i++)
    if (fs_perf_phase_functions(i)[0])
      printf("  %-16s timer %5.1f%%  profile %5.1f%%\n", mjTIMERSTRING[i], 100 * timer[i],
             100 * prof->phase[i]);
  printf("  stepping thread: %lld of %lld samples reach mj_step (%lld samples on %d threads)\n",
         prof->with_step, prof->samples, prof->all, prof->nthread);
  CHECK_MSG(prof->with_step >= 0.85 * prof->samples && prof->samples >= 100,
            "%lld of the stepping thread's %lld samples (%lld on all threads) reach mj_step",
            prof->with_step, prof->samples, prof->all);
  int parents[2] = {mjTIMER_FORWARD, mjTIMER_POSITION};
  for (int k = 0; k < 2; k++) {
    int t = top_child(parents[k], timer), p = top_child(parents[k], prof->phase);
    CHECK_MSG(t == p && t >= 0, "inside %s, the timer's top phase is %s, the profile's %s",
              mjTIMERSTRING[parents[k]], t >= 0 ? mjTIMERSTRING[t] : "-",
              p >= 0 ? mjTIMERSTRING[p] : "-");
  }
  // NeuroMechFly: the constraint solver is the top phase of the step (about half).
  CHECK(top_child(mjTIMER_FORWARD, timer) == mjTIMER_CONSTRAINT);
  const int big[5] = {mjTIMER_FORWARD, mjTIMER_POSITION, mjTIMER_CONSTRAINT, mjTIMER_POS_PROJECT,
                      mjTIMER_ADVANCE};
  for (int k = 0; k < 5; k++) {
    int i = big[k];
    CHECK_MSG(fabs(timer[i] - prof->phase[i]) < 0.10, "%s: timer %.1f%% vs profile %.1f%%",
              mjTIMERSTRING[i], 100 * timer[i], 100 * prof->phase[i]);
  }
}

int main(void) {
  const char* model = fs_test_asset("mesh.mjb");
  const char* clip = fs_test_asset("walking_clip.h5");
  if (!out_file_nonempty(model) || !out_file_nonempty(clip)) {
    printf("skipped: no exported NeuroMechFly assets (%s); run scripts/setup.sh\n", model);
    return FS_TEST_SKIP;
  }
  const char* why = out_perf_unavailable();
  if (why[0]) {
    printf("skipped: perf cannot sample here: %s\n", why);
    return FS_TEST_SKIP;
  }
  const char* dir = fs_test_tmpdir("corroborate");
  char args[2048], prof[700], h5[700], *out = NULL;
  snprintf(prof, sizeof prof, "%s/nmf.linux-perf.txt", dir);
  snprintf(h5, sizeof h5, "%s/run/replay.h5", dir);
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --sim-steps 3000 --mujoco-timing --profile '%s' "
           "--save-data '%s/run' --no-video --no-plots --quiet",
           model, clip, prof, dir);
  CHECK(out_flysim("", args, &out) == 0);
  CHECK_CONTAINS(out, "The two views, phase by phase");
  free(out);
  long long n = 0;
  double* sec = out_read_doubles(h5, "mujoco_timing/seconds", &n);
  Shares s;
  CHECK(sec && n == mjNTIMER && sec[mjTIMER_STEP] > 0);
  CHECK(profile_shares(prof, &s) == 0);
  if (sec && n == mjNTIMER && sec[mjTIMER_STEP] > 0) compare(sec, &s);
  free(sec);
  return fs_test_finish("test_corroborate");
}
