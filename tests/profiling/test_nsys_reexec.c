// `--profile PATH`: the exact nsys command line, checked with a stand-in nsys first on
// PATH that records its arguments and the guard variable; the error when nsys is not
// on PATH; no re-exec when the guard is set. Needs neither nsys nor a GPU.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/profiling/profile_nsys.h"
#include "tests/profiling/nvtx_log.h"
#include "tests/testutil.h"

#ifndef NSYS_PROBE
#error NSYS_PROBE (path of nsys_reexec_probe) must be defined by CMake
#endif

// The options --profile must pass to nsys (common/base/nvtx.h), spelled out here rather than
// taken from the code.
#define NSYS_OPTS                                                                                  \
  "profile", "--trace=cuda,nvtx,osrt", "--cuda-graph-trace=node", "--force-overwrite=true",        \
      "--output"

static void check_argv(const char* what, const char* const* got, int n, const char* const* want) {
  int m = 0;
  while (want[m]) m++;
  int same = n == m;
  for (int i = 0; same && i < n; i++) same = got[i] && !strcmp(got[i], want[i]);
  same = same && got[n] == NULL;
  CHECK_MSG(same, "%s: argv differs", what);
  if (!same) {
    for (int i = 0; i < (n > m ? n : m); i++)
      fprintf(stderr, "  [%d] got '%s' want '%s'\n", i, i < n ? got[i] : "(end)",
              i < m ? want[i] : "(end)");
  }
}

// fs_nsys_argv: pure, so every case is checked without exec.
static void test_build_argv(void) {
  const char* out[64];
  fsError err = {{0}, FS_OK};
  {
    char* argv[] = {"flysim",   "replay", "--backend", "cuda",    "--profile", "out/x",
                    "--worlds", "8",      "--disable", "contact", NULL};
    int n = fs_nsys_argv(10, argv, "/opt/nsys", "/abs/flysim", "out/x", out, 64, &err);
    const char* want[] = {"/opt/nsys", NSYS_OPTS,  "out/x", "/abs/flysim", "replay",  "--backend",
                          "cuda",      "--worlds", "8",     "--disable",   "contact", NULL};
    check_argv("--profile PATH", out, n, want);
  }
  {
    char* argv[] = {"flysim", "replay", "--profile=out/y", "--backend", "cuda", NULL};
    int n = fs_nsys_argv(5, argv, "nsys", "/abs/flysim", "out/y", out, 64, &err);
    const char* want[] = {"nsys",   NSYS_OPTS,   "out/y", "/abs/flysim",
                          "replay", "--backend", "cuda",  NULL};
    check_argv("--profile=PATH", out, n, want);
  }
  {
    // getopt_long abbreviations, twice; a --profile after "--" is an argument.
    char* argv[] = {"flysim",  "replay", "--prof",    "a", "--profil=b",
                    "--quiet", "--",     "--profile", "c", NULL};
    int n = fs_nsys_argv(9, argv, "nsys", "/s", "b", out, 64, &err);
    const char* want[] = {"nsys",    NSYS_OPTS, "b",         "/s", "replay",
                          "--quiet", "--",      "--profile", "c",  NULL};
    check_argv("abbreviations and --", out, n, want);
  }
  {
    // Not --profile: --pro (too short to strip) and --profiles (another option).
    char* argv[] = {"flysim", "--pro", "x", "--profiles", "y", NULL};
    int n = fs_nsys_argv(5, argv, "nsys", "/s", "o", out, 64, &err);
    const char* want[] = {"nsys", NSYS_OPTS, "o", "/s", "--pro", "x", "--profiles", "y", NULL};
    check_argv("look-alikes kept", out, n, want);
  }
  {
    // argc + FS_NSYS_ARGV_EXTRA entries are enough with nothing stripped; one fewer is not.
    char* argv[] = {"flysim", "replay", "--quiet", NULL};
    int n = fs_nsys_argv(3, argv, "nsys", "/s", "o", out, 3 + FS_NSYS_ARGV_EXTRA, &err);
    CHECK_MSG(n == 3 + FS_NSYS_ARGV_EXTRA - 1, "n = %d (%s)", n, err.msg);
    n = fs_nsys_argv(3, argv, "nsys", "/s", "o", out, 3 + FS_NSYS_ARGV_EXTRA - 1, &err);
    CHECK(n == -1);
    CHECK_CONTAINS(err.msg, "FS_NSYS_ARGV_EXTRA");
  }
  {
    char* argv[] = {"flysim", "replay", "--profile", NULL};
    CHECK(fs_nsys_argv(3, argv, "nsys", "/s", "o", out, 64, &err) == -1);
    CHECK_CONTAINS(err.msg, "--profile");
    CHECK_CONTAINS(err.msg, "fix:");
    CHECK(fs_nsys_argv(1, argv, "nsys", "/s", "", out, 64, &err) == -1);
    CHECK_CONTAINS(err.msg, "empty output path");
  }
  char rep[256];
  fs_nsys_report_path("out/cuda", rep, sizeof rep);
  CHECK(!strcmp(rep, "out/cuda.nsys-rep"));
  fs_nsys_report_path("out/cuda.nsys-rep", rep, sizeof rep);
  CHECK(!strcmp(rep, "out/cuda.nsys-rep"));
}

static void test_self_path(const char* argv0) {
  char self[PATH_MAX], real[PATH_MAX];
  fsError err = {{0}, FS_OK};
  CHECK_MSG(fs_self_exe_path(self, sizeof self, &err) == 0, "%s", err.msg);
  CHECK(self[0] == '/');
  CHECK(realpath(argv0, real) != NULL);
  CHECK_MSG(!strcmp(self, real), "%s vs %s", self, real);
  char tiny[4];
  CHECK(fs_self_exe_path(tiny, sizeof tiny, &err) == -1);
}

static void write_file(const char* path, const char* text, int mode) {
  FILE* f = fopen(path, "w");
  CHECK_MSG(f != NULL, "cannot write %s", path);
  if (!f) return;
  fputs(text, f);
  fclose(f);
  chmod(path, (mode_t)mode);
}

// Lines of a file as a NULL-terminated array (pointers into *text).
static int split_lines(char* text, const char** lines, int cap) {
  int n = 0;
  for (char* p = text; *p && n < cap - 1;) {
    lines[n++] = p;
    char* nl = strchr(p, '\n');
    if (!nl) break;
    *nl = 0;
    p = nl + 1;
  }
  lines[n] = NULL;
  return n;
}

// The probe re-executes into the stand-in nsys: check what it received.
static void test_exec(const char* dir) {
  char bin[600], cmd[20000], log[600], output[8192], probe[PATH_MAX];
  snprintf(bin, sizeof bin, "%s/bin", dir);
  mkdir(bin, 0777);
  snprintf(log, sizeof log, "%s/nsys-args.txt", dir);
  char script[700];
  snprintf(script, sizeof script, "%s/nsys", bin);
  write_file(script,
             "#!/bin/sh\n"
             "# stand-in nsys: one argument a line, then the guard and the folder\n"
             ": > \"$NSYS_STANDIN_LOG\"\n"
             "for a in \"$@\"; do printf 'arg=%s\\n' \"$a\" >> \"$NSYS_STANDIN_LOG\"; done\n"
             "printf 'guard=%s\\n' \"${FLYSIM_UNDER_NSYS-(unset)}\" >> \"$NSYS_STANDIN_LOG\"\n"
             "printf 'cwd=%s\\n' \"$(pwd -P)\" >> \"$NSYS_STANDIN_LOG\"\n"
             "exit 0\n",
             0755);
  CHECK(realpath(NSYS_PROBE, probe) != NULL);

  snprintf(cmd, sizeof cmd,
           "cd '%s' && env -u FLYSIM_UNDER_NSYS NSYS_STANDIN_LOG='%s' PATH='%s':\"$PATH\" '%s' "
           "replay --backend cuda --profile out/x --worlds 8 --sim-steps 10 2>&1",
           dir, log, bin, probe);
  int rc = fs_test_run(cmd, output, sizeof output);
  CHECK_MSG(rc == 0, "probe exit %d:\n%s", rc, output);
  CHECK_MSG(strstr(output, "PROCEED") == NULL, "the probe ran on instead of exec'ing:\n%s", output);
  CHECK_CONTAINS(output, "nsys stats --report cuda_gpu_kern_sum out/x.nsys-rep");

  char* text = nvtx_read_file(log);
  CHECK_MSG(text != NULL, "the stand-in nsys did not run (no %s); probe said:\n%s", log, output);
  if (text) {
    const char* lines[64];
    int n = split_lines(text, lines, 64);
    char real_dir[PATH_MAX], guard_line[64], cwd_line[PATH_MAX + 8];
    CHECK(realpath(dir, real_dir) != NULL);
    snprintf(guard_line, sizeof guard_line, "guard=1");
    snprintf(cwd_line, sizeof cwd_line, "cwd=%s", real_dir);
    char self_arg[PATH_MAX + 8];
    snprintf(self_arg, sizeof self_arg, "arg=%s", probe);
    const char* want[] = {"arg=profile",
                          "arg=--trace=cuda,nvtx,osrt",
                          "arg=--cuda-graph-trace=node",
                          "arg=--force-overwrite=true",
                          "arg=--output",
                          "arg=out/x",
                          self_arg,
                          "arg=replay",
                          "arg=--backend",
                          "arg=cuda",
                          "arg=--worlds",
                          "arg=8",
                          "arg=--sim-steps",
                          "arg=10",
                          guard_line,
                          cwd_line,
                          NULL};
    check_argv("recorded nsys command line", lines, n, want);
    free(text);
  }
  struct stat st;
  char out_dir[700];
  snprintf(out_dir, sizeof out_dir, "%s/out", dir);
  CHECK_MSG(stat(out_dir, &st) == 0 && S_ISDIR(st.st_mode), "%s not created", out_dir);

  // With the guard set the probe runs on and nsys is not started.
  remove(log);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && FLYSIM_UNDER_NSYS=1 NSYS_STANDIN_LOG='%s' PATH='%s':\"$PATH\" '%s' "
           "replay --profile out/x 2>&1",
           dir, log, bin, probe);
  rc = fs_test_run(cmd, output, sizeof output);
  CHECK_MSG(rc == 0, "guard set: probe exit %d:\n%s", rc, output);
  CHECK_CONTAINS(output, "PROCEED");
  CHECK_MSG(access(log, F_OK) != 0, "guard set, yet nsys was started");

  // No nsys on PATH: a clear error naming the fix, exit 3 (the probe's error status).
  char empty[600];
  snprintf(empty, sizeof empty, "%s/empty", dir);
  mkdir(empty, 0777);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && env -u FLYSIM_UNDER_NSYS PATH='%s' '%s' replay --profile out/x 2>&1", dir,
           empty, probe);
  rc = fs_test_run(cmd, output, sizeof output);
  CHECK_MSG(rc == 3, "no nsys: probe exit %d:\n%s", rc, output);
  CHECK_CONTAINS(output, "nsys: not found in any folder of PATH");
  CHECK_CONTAINS(output, "install Nsight Systems");
  CHECK_CONTAINS(output, "on PATH");
  CHECK_CONTAINS(output, "fix:");
  CHECK_MSG(strstr(output, "PROCEED") == NULL, "no nsys, yet the probe ran on:\n%s", output);
}

// In this process: the guard makes fs_nsys_reexec return 0 at once (PATH has no nsys,
// so any attempt to go on would fail with -1).
static void test_guard_in_process(const char* dir) {
  char empty[600];
  snprintf(empty, sizeof empty, "%s/empty", dir);
  char* saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
  setenv("PATH", empty, 1);
  char* argv[] = {"flysim", "replay", "--profile", "out/z", NULL};
  fsError err = {{0}, FS_OK};

  setenv(FS_NSYS_GUARD_ENV, "1", 1);
  CHECK(fs_nsys_guard_set() == 1);
  CHECK_MSG(fs_nsys_reexec(4, argv, "out/z", &err) == 0, "guard set: %s", err.msg);

  setenv(FS_NSYS_GUARD_ENV, "0", 1); // "0" and "" do not count as set
  CHECK(fs_nsys_guard_set() == 0);
  unsetenv(FS_NSYS_GUARD_ENV);
  CHECK(fs_nsys_guard_set() == 0);
  CHECK(fs_nsys_reexec(4, argv, "out/z", &err) == -1);
  CHECK_CONTAINS(err.msg, "nsys");
  CHECK(fs_nsys_reexec(4, argv, "out/", &err) == -1);
  CHECK_CONTAINS(err.msg, "names a folder");

  if (saved) setenv("PATH", saved, 1);
  free(saved);
}

int main(int argc, char** argv) {
  (void)argc;
  const char* dir = fs_test_tmpdir("nsys");
  test_build_argv();
  test_self_path(argv[0]);
  test_exec(dir);
  test_guard_in_process(dir);
  return fs_test_finish("test_nsys_reexec");
}
