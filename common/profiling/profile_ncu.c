// Nsight Compute on the step kernel, the GPU step (common/profiling/profile_ncu.h).
#include "common/profiling/profile_ncu.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sys/files.h"
#include "common/sys/spawn.h"
#include "common/profiling/profile_nsys.h"

int fs_ncu_guard_set(void) {
  const char* v = getenv(FS_NCU_GUARD_ENV);
  return v && v[0] && strcmp(v, "0") != 0;
}

void fs_ncu_report_path(const char* output, char* out, size_t n) {
  size_t len = strlen(output), ext = strlen(".ncu-rep");
  int has = len >= ext && !strcmp(output + len - ext, ".ncu-rep");
  snprintf(out, n, "%s%s", output, has ? "" : ".ncu-rep");
}

int fs_ncu_argv(int argc, char* const* argv, const char* ncu, const char* self, const char* output,
                int skip, char* skip_buf, const char** out, int cap, fsError* err) {
  if (!output || !output[0]) return fs_fail(err, "--ncu: empty output path; fix: --ncu out/step");
  if (cap < argc + FS_NCU_ARGV_EXTRA) return fs_fail(err, "internal: ncu argv too small");
  snprintf(skip_buf, 16, "%d", skip);
  const char* head[] = {ncu,
                        "--target-processes",
                        "all",
                        "--kernel-name",
                        "regex:step_kernel",
                        "--launch-skip",
                        skip_buf,
                        "--launch-count",
                        "1",
                        "--section",
                        "SpeedOfLight",
                        "--section",
                        "Occupancy",
                        "--section",
                        "LaunchStats",
                        "--section",
                        "WarpStateStats",
                        "--section",
                        "MemoryWorkloadAnalysis",
                        "--section",
                        "SourceCounters",
                        "--import-source",
                        "yes",
                        "--force-overwrite",
                        "--export",
                        output,
                        self};
  int n = 0;
  for (size_t i = 0; i < sizeof head / sizeof *head; i++) out[n++] = head[i];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--")) { // the rest is not options
      for (; i < argc; i++) out[n++] = argv[i];
      break;
    }
    if (!strcmp(argv[i], "--ncu")) {
      if (i + 1 >= argc) return fs_fail(err, "--ncu needs a value; fix: --ncu out/step");
      i++;
      continue;
    }
    if (!strncmp(argv[i], "--ncu=", 6)) continue;
    out[n++] = argv[i];
  }
  out[n] = NULL;
  return n;
}

// The CSV fields of one line (double quotes around each, as ncu writes them) into
// f (at most nf); returns how many.
static int csv_fields(char* line, char** f, int nf) {
  int n = 0;
  char* p = line;
  while (*p && n < nf) {
    if (*p == '"') {
      f[n++] = ++p;
      while (*p && *p != '"') p++;
      if (*p) *p++ = 0;
    } else {
      f[n++] = p;
      while (*p && *p != ',' && *p != '\n' && *p != '\r') p++;
      if (*p == '\n' || *p == '\r') *p = 0;
    }
    if (*p == ',') p++;
    while (*p == '\n' || *p == '\r') *p++ = 0;
  }
  return n;
}

static int column(char** f, int n, const char* name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(f[i], name)) return i;
  return -1;
}

// The details page: one metric a row (Section Name, Metric Name, Metric Unit, Metric Value).
static int print_details(const char* path, FILE* out) {
  static const char* wanted[] = {"Duration",
                                 "Registers Per Thread",
                                 "Theoretical Occupancy",
                                 "Achieved Occupancy",
                                 "Compute (SM) Throughput",
                                 "Memory Throughput",
                                 "DRAM Throughput",
                                 "Warp Cycles Per Issued Instruction",
                                 "Local Memory Spilling Requests",
                                 NULL};
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char line[8192];
  char* fld[64];
  int name = -1, unit = -1, value = -1, found = 0;
  while (fgets(line, sizeof line, f)) {
    int n = csv_fields(line, fld, 64);
    if (name < 0) {
      name = column(fld, n, "Metric Name");
      unit = column(fld, n, "Metric Unit");
      value = column(fld, n, "Metric Value");
      continue;
    }
    if (name >= n || value >= n) continue;
    for (int k = 0; wanted[k]; k++)
      if (!strcmp(fld[name], wanted[k])) {
        fprintf(out, "  %-36s %14s %s\n", fld[name], fld[value],
                unit >= 0 && unit < n ? fld[unit] : "");
        found++;
      }
  }
  fclose(f);
  return found;
}

// The raw page: a header row of metric names, a units row, a row a kernel; the five
// largest "issue stalled" ratios of the first kernel.
static int print_stalls(const char* path, FILE* out) {
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  static char head[1 << 16], row[1 << 16];
  char* hf[2048];
  char* rf[2048];
  int nh = 0, nr = 0, found = 0;
  if (fgets(head, sizeof head, f)) nh = csv_fields(head, hf, 2048);
  char units[1 << 12];
  if (nh && fgets(units, sizeof units, f) && fgets(row, sizeof row, f))
    nr = csv_fields(row, rf, 2048);
  fclose(f);
  typedef struct Stall {
    const char* name;
    double v;
  } Stall;
  Stall top[5] = {{0}};
  for (int i = 0; i < nh && i < nr; i++) {
    const char* key = "smsp__average_warps_issue_stalled_";
    if (strncmp(hf[i], key, strlen(key)) || !strstr(hf[i], "per_issue_active")) continue;
    double v = atof(rf[i]);
    for (int k = 0; k < 5; k++)
      if (!top[k].name || v > top[k].v) {
        memmove(top + k + 1, top + k, sizeof(Stall) * (size_t)(4 - k));
        top[k] = (Stall){hf[i] + strlen(key), v};
        break;
      }
  }
  for (int k = 0; k < 5 && top[k].name; k++) {
    char reason[128];
    snprintf(reason, sizeof reason, "%s", top[k].name);
    char* cut = strstr(reason, "_per_issue_active");
    if (cut) *cut = 0;
    fprintf(out, "  stall: %-29s %14.3g warp cycles per issued instruction\n", reason, top[k].v);
    found++;
  }
  return found;
}

int fs_ncu_print_summary(const char* details_csv, const char* raw_csv, FILE* out) {
  fprintf(out, "Nsight Compute, one launch of the step kernel:\n");
  return print_details(details_csv, out) + print_stalls(raw_csv, out);
}

// Run argv (NULL-terminated) with stdout to `to` (NULL: inherited); 0 if it exited 0.
static int run_to(const char* const* argv, const char* to, fsError* err) {
  int fd = -1;
  if (to && (fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
    return fs_fail(err, "%s: cannot create: %s", to, strerror(errno));
  fsSpawnSpec s = {argv, -1, fd, -1, {-1, -1}, 0};
  pid_t pid = fs_spawn(&s, err);
  if (fd >= 0) close(fd);
  if (pid < 0) return -1;
  int status = fs_spawn_wait(pid);
  if (status == 0) return 0;
  char how[64];
  fs_spawn_describe(status, how, sizeof how);
  return fs_fail(err, "`%s` %s", argv[0], how);
}

int fs_ncu_run(int argc, char** argv, const char* output, int skip, fsError* err) {
  char ncu[4096], self[4096], skip_buf[16], report[4200];
  if (fs_find_on_path("ncu", ncu, sizeof ncu, err)) {
    fs_fail_append(err, "; --ncu needs Nsight Compute's ncu; fix: install Nsight Compute (the "
                        "CUDA toolkit's nsight-compute) and put the folder holding ncu on PATH");
    return -1;
  }
  if (fs_self_exe_path(self, sizeof self, err)) return -1;
  if (fs_make_parent_dirs(output, "--ncu", err)) return -1;
  int cap = argc + FS_NCU_ARGV_EXTRA;
  const char** args = fs_calloc(err, "ncu command line", (unsigned long long)cap, sizeof *args);
  if (!args) return -1;
  int n = fs_ncu_argv(argc, argv, ncu, self, output, skip, skip_buf, args, cap, err);
  if (n >= 0) {
    fprintf(stderr, "flysim: profiling the step kernel under Nsight Compute:");
    for (int i = 0; i < n; i++) fprintf(stderr, " %s", args[i]);
    fprintf(stderr, "\n");
    fflush(NULL);
    setenv(FS_NCU_GUARD_ENV, "1", 1);
    n = run_to(args, NULL, err);
    unsetenv(FS_NCU_GUARD_ENV);
  }
  free(args);
  if (n < 0) return fs_fail_append(err, "; the command runs without --ncu to check it");
  fs_ncu_report_path(output, report, sizeof report);
  char details[4300], raw[4300];
  snprintf(details, sizeof details, "%s.details.csv", output);
  snprintf(raw, sizeof raw, "%s.raw.csv", output);
  const char* d[] = {ncu, "--import", report, "--csv", "--page", "details", NULL};
  const char* r[] = {ncu, "--import", report, "--csv", "--page", "raw", NULL};
  if (run_to(d, details, err) || run_to(r, raw, err))
    return fs_fail_append(err, "; the report %s is kept: open it in Nsight Compute", report);
  if (!fs_ncu_print_summary(details, raw, stdout))
    printf("  (no step-kernel metrics in %s: was the kernel launched more than %d times?)\n",
           report, skip);
  printf("Saved %s (and its CSV pages %s, %s)\n", report, details, raw);
  return 0;
}
