// The NVTX log checker (see nvtx_log.h).
#include "tests/profiling/nvtx_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 16

// The expected pushes in order: (depth, name).
typedef struct Expect {
  int depth;
  const char* name;
} Expect;

static int expected_push(int k, int warmup_steps, int steps, Expect* e) {
  if (k == 0) return *e = (Expect){0, "warmup"}, 1;
  k--;
  if (k < warmup_steps) return *e = (Expect){1, "step"}, 1;
  k -= warmup_steps;
  if (k == 0) return *e = (Expect){0, "timed_run"}, 1;
  k--;
  if (k < steps) return *e = (Expect){1, "step"}, 1;
  return 0;
}

// "a/b/c" for the open ranges.
static void path_of(char stack[][512], int depth, char* out, size_t n) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < depth && used + 1 < n; i++) {
    int k = snprintf(out + used, n - used, "%s%s", i ? "/" : "", stack[i]);
    if (k < 0) break;
    used += (size_t)k;
  }
  if (!depth) snprintf(out, n, "(top level)");
}

int nvtx_log_check_text(const char* text, int warmup_steps, int steps, fsError* err) {
  char stack[MAX_DEPTH][512];
  int depth = 0, pushes = 0, saw_init = 0, saw_domain = 0, lineno = 0;
  // warmup_steps < 0: any number of `step` ranges inside warmup (the library marks every
  // launch; the warm-up's count is the driver's from a time, not checked)
  int any_warm = warmup_steps < 0, warm_seen = 0;
  if (any_warm) warmup_steps = 0;
  int total = 2 + warmup_steps + steps;
  char where[MAX_DEPTH * 514];
  for (const char* p = text; *p;) {
    size_t len = strcspn(p, "\n");
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), p);
    p += len + (p[len] ? 1 : 0);
    lineno++;
    if (!strcmp(line, "init")) {
      saw_init = 1;
      continue;
    }
    if (!strcmp(line, "domain flysim")) {
      saw_domain++;
      continue;
    }
    int is_push = !strncmp(line, "push flysim ", 12), is_pop = !strcmp(line, "pop flysim");
    if (!is_push && !is_pop) continue; // other domains and libraries
    path_of(stack, depth, where, sizeof where);
    if (is_pop) {
      if (!depth) return fs_fail(err, "line %d: pop with no open flysim range", lineno);
      depth--;
      continue;
    }
    const char* name = line + 12;
    if (any_warm && depth == 1 && !strcmp(stack[0], "warmup") && !strcmp(name, "step")) {
      snprintf(stack[depth++], sizeof stack[0], "%s", name);
      warm_seen++;
      continue;
    }
    Expect e;
    if (!expected_push(pushes, warmup_steps, steps, &e))
      return fs_fail(err,
                     "line %d: push '%s' inside %s after all %d expected ranges; fix: "
                     "expected warmup(step x%d), timed_run(step x%d)",
                     lineno, name, where, total, warmup_steps, steps);
    if (strcmp(name, e.name) || depth != e.depth)
      return fs_fail(err,
                     "line %d: range #%d is '%s' inside %s; expected '%s' at depth %d "
                     "(warmup(step x%d), timed_run(step x%d))",
                     lineno, pushes + 1, name, where, e.name, e.depth, warmup_steps, steps);
    if (depth >= MAX_DEPTH) return fs_fail(err, "line %d: ranges nested too deep", lineno);
    snprintf(stack[depth++], sizeof stack[0], "%s", name);
    pushes++;
  }
  if (!saw_init)
    return fs_fail(err, "no 'init' line: the injection library was not loaded; fix: set "
                        "NVTX_INJECTION64_PATH before the first NVTX call");
  if (saw_domain != 1)
    return fs_fail(err, "'domain flysim' created %d times; expected once", saw_domain);
  if (depth) {
    path_of(stack, depth, where, sizeof where);
    return fs_fail(err, "end of log: %d range(s) never popped: %s", depth, where);
  }
  if (pushes != total)
    return fs_fail(err,
                   "end of log: %d flysim ranges, expected %d (warmup(step x%d), "
                   "timed_run(step x%d))",
                   pushes, total, warmup_steps, steps);
  return 0;
}

char* nvtx_read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, used = 0, k;
  char* buf = malloc(cap);
  while (buf && (k = fread(buf + used, 1, cap - used - 1, f)) > 0) {
    used += k;
    if (cap - used < 2) {
      char* bigger = realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[used] = 0;
  return buf;
}

int nvtx_log_check_file(const char* path, int warmup_steps, int steps, fsError* err) {
  char* text = nvtx_read_file(path);
  if (!text)
    return fs_fail(err,
                   "%s: cannot read the NVTX log; fix: check that the injection "
                   "library ran (NVTX_INJECTION64_PATH, FLYSIM_NVTX_LOG)",
                   path);
  int rc = nvtx_log_check_text(text, warmup_steps, steps, err);
  if (rc) fs_fail_append(err, " (log %s)", path);
  free(text);
  return rc;
}

int nvtx_file_contains(const char* path, const char* needle) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  size_t m = strlen(needle), cap = 1 << 20, keep = 0;
  char* buf = malloc(cap + m);
  int found = buf ? 0 : -1;
  while (buf && found == 0) {
    size_t k = fread(buf + keep, 1, cap, f);
    if (!k) break;
    size_t n = keep + k;
    for (size_t i = 0; i + m <= n && found == 0; i++) found = !memcmp(buf + i, needle, m);
    keep = n < m - 1 ? n : m - 1; // the tail that could start a match
    memmove(buf, buf + n - keep, keep);
  }
  free(buf);
  fclose(f);
  return found;
}

int nvtx_binary_has_loader(const char* path) {
  // Stored reversed, so that the test binaries do not contain the marker themselves.
  static const char reversed[] = "2xtvNnoitcejnIezilaitinI";
  const char* volatile src = reversed; // read at run time: no folded copy of the marker
  char marker[sizeof reversed];
  size_t n = sizeof reversed - 1;
  for (size_t i = 0; i < n; i++) marker[i] = src[n - 1 - i];
  marker[n] = 0;
  return nvtx_file_contains(path, marker);
}
