// --profile PATH with --backend cpu: perf samples the timed loop alone, with native
// stacks through MuJoCo, into speedscope JSON (PATH *.json) or perf script text.
//
// Without perf, or where it may not sample (perf_event_paranoid, seccomp), the
// sampling checks are skipped (77) -- but the errors for a missing perf are checked
// first, everywhere: they must come before the run starts.
#include <stdlib.h>

#include "tests/outputs/outputs_util.h"
#include "tests/testutil.h"

static char g_targets[600];

static void walker_args(char* args, size_t n, int nstep, double warmup, const char* profile,
                        const char* extra) {
  snprintf(args, n,
           "--model '%s' --targets '%s' --sim-steps %d --warmup-sec %g --profile '%s' --quiet %s",
           fs_test_model("walker.xml"), g_targets, nstep, warmup, profile, extra);
}

// No perf: a clear error naming the fix, before anything runs (no "Replayed" line).
static void test_missing_perf(const char* dir) {
  char args[2048], path[700], *out = NULL;
  snprintf(path, sizeof path, "%s/missing.speedscope.json", dir);
  walker_args(args, sizeof args, 100, 0.05, path, "");
  CHECK(out_flysim("PATH=/nonexistent", args, &out) != 0);
  CHECK_CONTAINS(out, "perf: not found");
  CHECK_CONTAINS(out, "fix: install it");
  CHECK(!strstr(out, "Replayed"));
  CHECK(!strstr(out, "model   ")); // before the model is even loaded
  free(out);
  CHECK(out_flysim("FLYSIM_PERF=/nonexistent/perf", args, &out) != 0);
  CHECK_CONTAINS(out, "FLYSIM_PERF=/nonexistent/perf");
  CHECK(!strstr(out, "Replayed"));
  free(out);
  snprintf(path, sizeof path, "%s/", dir);
  walker_args(args, sizeof args, 100, 0.05, path, "");
  CHECK(out_flysim("", args, &out) != 0);
  CHECK_CONTAINS(out, "names a folder");
  free(out);
}

// Frames (function names) of a speedscope file, crudely: count "name":"fn" entries.
static int json_has_frame(const char* json, const char* fn) {
  char key[128];
  snprintf(key, sizeof key, "{\"name\":\"%s\",", fn);
  return strstr(json, key) != NULL;
}

static char* slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* s = calloc((size_t)n + 1, 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
  fclose(f);
  return s;
}

static long long count_occurrences(const char* s, const char* what) {
  long long n = 0;
  for (const char* p = s; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

// Speedscope JSON: MuJoCo's frames are there; model loading, warm-up and saving are
// not. The warm-up (0.3 s, 3000 steps) is 10x the timed loop (300 steps): were it
// sampled, the sample count would be far above the loop's wall time x rate.
static void test_speedscope(const char* dir) {
  char args[2048], path[700], *out = NULL;
  snprintf(path, sizeof path, "%s/sub/walker.speedscope.json", dir);
  walker_args(args, sizeof args, 1500, 0.75, path, "--mujoco-timing");
  CHECK(out_flysim("", args, &out) == 0);
  CHECK_CONTAINS(out, "Profile of the timed loop");
  CHECK_CONTAINS(out, "https://www.speedscope.app");
  char* json = slurp(path);
  CHECK_MSG(json && json[0] == '{', "%s: no JSON", path);
  if (json) {
    CHECK_CONTAINS(json, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"");
    CHECK_CONTAINS(json, "\"type\":\"sampled\"");
    CHECK(json_has_frame(json, "mj_step"));
    CHECK(json_has_frame(json, "mj_forwardSkip") || json_has_frame(json, "mj_forward"));
    CHECK(json_has_frame(json, "block_world") || json_has_frame(json, "run_world"));
    CHECK(!json_has_frame(json, "mj_loadXML") && !json_has_frame(json, "mj_compile"));
    CHECK(!json_has_frame(json, "H5Fcreate") && !json_has_frame(json, "fs_perf_finish"));
    CHECK(!strstr(json, ".llvm.")); // LTO suffixes stripped
  }
  double wall = 0;
  const char* s = strstr(out, "wall_s=");
  if (s) wall = atof(s + 7);
  long long samples = json ? count_occurrences(json, "],[") + 1 : 0;
  // 999 Hz on 1 thread; the 7500-step warm-up alone would add ~5x the loop's samples.
  CHECK_MSG(samples > 0 && samples <= 1.5 * 999 * wall + 30,
            "%lld samples for a %.3f s loop: more than the loop holds", samples, wall);
  free(json);
  free(out);
  // perf's raw data and log are gone.
  char raw[800];
  snprintf(raw, sizeof raw, "ls '%s/sub' | grep -c perf.data", dir);
  char cnt[64];
  fs_test_run(raw, cnt, sizeof cnt);
  CHECK_MSG(atoi(cnt) == 0, "perf.data files left in %s/sub", dir);
}

// perf script text (any other name): speedscope's "linux-perf" import. Every sample
// starts with a header line; a sample taken inside MuJoCo unwinds through mj_step
// (the call graph crosses libmujoco's frames). Samples in flysim's own loop code
// (setting ctrl, reading warnings) do not reach mj_step, and on the small walker they
// are a sizeable share of a short loop, so the check is on samples whose leaf frame is
// in libmujoco, and the loop is long enough (7,000 steps, ~80 ms) for a few dozen.
static void test_text(const char* dir) {
  char args[2048], path[700], *out = NULL;
  snprintf(path, sizeof path, "%s/walker.linux-perf.txt", dir);
  walker_args(args, sizeof args, 7000, 0.05, path, "");
  CHECK(out_flysim("", args, &out) == 0);
  CHECK_CONTAINS(out, "perf script text");
  char* text = slurp(path);
  CHECK(text && text[0]);
  if (text) {
    CHECK_CONTAINS(text, "cpu-clock");
    CHECK_CONTAINS(text, " mj_step (");
    CHECK_CONTAINS(text, "libmujoco");
    long long headers = count_occurrences(text, "cpu-clock");
    long long in_mujoco = 0, with_step = 0;
    for (char* p = text; p && *p;) { // paragraphs: a header line, then frames leaf first
      char* end = strstr(p, "\n\n");
      if (end) *end = 0;
      char* leaf = strchr(p, '\n');
      char* leaf_end = leaf ? strchr(leaf + 1, '\n') : NULL;
      if (leaf_end) *leaf_end = 0;
      int leaf_in_mujoco = leaf && strstr(leaf, "libmujoco") != NULL;
      if (leaf_end) *leaf_end = '\n';
      if (leaf_in_mujoco) {
        in_mujoco++;
        if (strstr(p, " mj_step (")) with_step++;
      }
      p = end ? end + 2 : NULL;
    }
    CHECK_MSG(headers >= 20 && in_mujoco >= 10,
              "%lld samples, %lld of them in libmujoco: too few to judge the unwinding", headers,
              in_mujoco);
    CHECK_MSG(with_step >= 0.9 * in_mujoco,
              "%lld of %lld samples inside libmujoco unwind to mj_step", with_step, in_mujoco);
  }
  free(text);
  free(out);
}

int main(void) {
  const char* dir = fs_test_tmpdir("perf");
  snprintf(g_targets, sizeof g_targets, "%s/walker_targets.h5", dir);
  if (out_write_walker_targets(g_targets, 8000)) return 1;
  test_missing_perf(dir);
  const char* why = out_perf_unavailable();
  if (why[0]) {
    printf("skipped: perf cannot sample here: %s\n", why);
    return fs_test_failures ? 1 : FS_TEST_SKIP;
  }
  test_speedscope(dir);
  test_text(dir);
  return fs_test_finish("test_perf_profile");
}
