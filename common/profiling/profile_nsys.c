// Re-execute flysim under Nsight Systems (see common/profiling/profile_nsys.h).
#include "common/profiling/profile_nsys.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys/files.h"

static const char* const k_nsys_options[] = {"profile", "--trace=cuda,nvtx,osrt",
                                             "--cuda-graph-trace=node", "--force-overwrite=true",
                                             "--output"};
#define N_NSYS_OPTIONS ((int)(sizeof k_nsys_options / sizeof k_nsys_options[0]))

int fs_nsys_guard_set(void) {
  const char* v = getenv(FS_NSYS_GUARD_ENV);
  return v && v[0] && strcmp(v, "0") != 0;
}

// Does arg spell --profile (or an abbreviation down to --prof)? Sets *inline_value
// when the value is in the same argument (--profile=V).
static int is_profile_option(const char* arg, int* inline_value) {
  if (strncmp(arg, "--", 2) != 0) return 0;
  const char* name = arg + 2;
  size_t len = strcspn(name, "=");
  if (len < 4 || len > 7 || strncmp(name, "profile", len) != 0) return 0;
  *inline_value = name[len] == '=';
  return 1;
}

// Append s to out (cap entries, the last kept for NULL); counts what did not fit.
static void put(const char** out, int cap, int* n, int* missing, const char* s) {
  if (*n < cap - 1)
    out[(*n)++] = s;
  else
    (*missing)++;
}

int fs_nsys_argv(int argc, char* const* argv, const char* nsys, const char* self,
                 const char* output, const char** out, int cap, fsError* err) {
  if (!output || !output[0])
    return fs_fail(err, "--profile: empty output path; fix: --profile out/cuda (nsys adds "
                        ".nsys-rep)");
  int n = 0, missing = 0;
  put(out, cap, &n, &missing, nsys);
  for (int i = 0; i < N_NSYS_OPTIONS; i++) put(out, cap, &n, &missing, k_nsys_options[i]);
  put(out, cap, &n, &missing, output);
  put(out, cap, &n, &missing, self);
  int options_done = 0;
  for (int i = 1; i < argc; i++) {
    int inline_value = 0;
    if (!options_done && !strcmp(argv[i], "--")) options_done = 1;
    if (!options_done && is_profile_option(argv[i], &inline_value)) {
      if (inline_value) continue;
      if (i + 1 >= argc)
        return fs_fail(err, "%s: no output path after it; fix: --profile out/cuda", argv[i]);
      i++; // skip the value
      continue;
    }
    put(out, cap, &n, &missing, argv[i]);
  }
  if (cap < 1 || missing)
    return fs_fail(err,
                   "fs_nsys_argv: %d entries are too few for %d arguments; fix: pass argc + "
                   "FS_NSYS_ARGV_EXTRA",
                   cap, argc);
  out[n] = NULL;
  return n;
}

int fs_self_exe_path(char* out, size_t n, fsError* err) {
  ssize_t k = readlink("/proc/self/exe", out, n);
  if (k < 0)
    return fs_fail(err,
                   "/proc/self/exe: cannot read this executable's path: %s; fix: mount "
                   "/proc (Linux only)",
                   strerror(errno));
  if ((size_t)k >= n)
    return fs_fail(err,
                   "/proc/self/exe: path longer than %zu characters; fix: install "
                   "flysim in a shorter path",
                   n - 1);
  out[k] = 0;
  return 0;
}

void fs_nsys_report_path(const char* output, char* out, size_t n) {
  static const char ext[] = ".nsys-rep";
  size_t len = strlen(output), elen = sizeof ext - 1;
  int has_ext = len >= elen && !strcmp(output + len - elen, ext);
  snprintf(out, n, "%s%s", output, has_ext ? "" : ext);
}

// Where Nsight Systems usually is when it is installed but not on PATH.
static void append_install_hint(fsError* err) {
  static const char* const patterns[] = {
      "/usr/local/cuda/bin/nsys", "/usr/local/cuda/nsight-systems-*/bin/nsys",
      "/opt/nvidia/nsight-systems/*/bin/nsys", "/opt/nvidia/nsight-systems-cli/*/bin/nsys"};
  for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
    glob_t g;
    if (glob(patterns[i], 0, NULL, &g) == 0 && g.gl_pathc > 0) {
      const char* found = g.gl_pathv[g.gl_pathc - 1]; // sorted: the newest version last
      fs_fail_append(err, " (found %s: add its folder to PATH)", found);
      globfree(&g);
      return;
    }
    globfree(&g);
  }
}

int fs_nsys_reexec(int argc, char** argv, const char* output, fsError* err) {
  if (fs_nsys_guard_set()) return 0; // started by nsys: profile this run
  if (!output || !output[0])
    return fs_fail(err, "--profile: empty output path; fix: --profile out/cuda (nsys adds "
                        ".nsys-rep)");
  size_t olen = strlen(output);
  if (output[olen - 1] == '/')
    return fs_fail(err,
                   "--profile %s: names a folder; fix: name the report, e.g. --profile "
                   "%scuda (nsys adds .nsys-rep)",
                   output, output);

  char nsys[4096], self[4096];
  if (fs_find_on_path("nsys", nsys, sizeof nsys, err)) {
    fs_fail_append(err, "; --profile needs Nsight Systems' nsys; fix: install Nsight Systems "
                        "(https://developer.nvidia.com/nsight-systems, or the CUDA toolkit's "
                        "nsight-systems package) and put the folder holding nsys on PATH");
    append_install_hint(err);
    return -1;
  }
  if (fs_self_exe_path(self, sizeof self, err)) return -1;
  if (fs_make_parent_dirs(output, "--profile", err)) return -1;

  int cap = argc + FS_NSYS_ARGV_EXTRA;
  const char** args = fs_calloc(err, "nsys command line", (unsigned long long)cap, sizeof *args);
  if (!args) return -1;
  int n = fs_nsys_argv(argc, argv, nsys, self, output, args, cap, err);
  if (n < 0) {
    free(args);
    return -1;
  }

  char report[4200];
  fs_nsys_report_path(output, report, sizeof report);
  fprintf(stderr, "flysim: profiling under Nsight Systems:");
  for (int i = 0; i < n; i++) fprintf(stderr, " %s", args[i]);
  fprintf(stderr,
          "\nflysim: afterwards, the kernel time table: nsys stats --report cuda_gpu_kern_sum "
          "%s\nflysim: the NVTX ranges (warmup, timed_run, step): nsys stats --report nvtx_sum "
          "%s\n",
          report, report);
  fflush(NULL);

  if (setenv(FS_NSYS_GUARD_ENV, "1", 1)) {
    free(args);
    return fs_fail(err, "%s: cannot set the environment variable: %s; fix: free memory",
                   FS_NSYS_GUARD_ENV, strerror(errno));
  }
  execv(nsys, (char* const*)args);
  int e = errno;
  free(args);
  unsetenv(FS_NSYS_GUARD_ENV);
  return fs_fail(err,
                 "%s: cannot execute nsys: %s; fix: check that this nsys runs (%s "
                 "--version) or put a working one first on PATH",
                 nsys, strerror(e), nsys);
}
