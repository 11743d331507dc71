// flysim bench's table, CSV, JSON and plot (bench/bench_io.h).
#include "bench/bench_io.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/sys/json.h"
#include "common/outputs/plots.h"
#include "common/replay/replay_io.h"

static const char* graph_name(const fsBenchRow* r) {
  return r->p.kind != FS_BACKEND_CUDA ? "-" : r->p.graph ? "on" : "off";
}

static const char* record_name(const fsBenchRow* r) {
  return r->peer ? "-" : r->p.record ? "on" : "off";
}

void fs_bench_print_header(FILE* f) {
  fprintf(f, "%-10s %5s %6s %8s %7s %13s %13s %13s %10s %9s %7s %5s %6s %5s  %s\n", "stepper",
          "graph", "record", "worlds", "threads", "world-steps/s", "min", "max", "x realtime",
          "KiB/world", "on-chip", "regs", "spill", "occ", "problems");
}

void fs_bench_print_row(FILE* f, const fsBenchRow* r) {
  if (!r->ok) {
    fprintf(f, "%-10s %5s %6s %8d  failed: %s\n", r->stepper, graph_name(r), record_name(r),
            r->p.nworld, r->error);
    return;
  }
  char regs[16] = "-", spill[16] = "-", occ[16] = "-";
  if ((r->cost.backend == FS_BACKEND_CUDA)) {
    snprintf(regs, sizeof regs, "%d", r->cost.kernel_registers);
    snprintf(spill, sizeof spill, "%d", r->cost.kernel_local_bytes);
    snprintf(occ, sizeof occ, "%.2f", r->cost.kernel_occupancy);
  }
  char kib[32] = "-", chip[32] = "-";
  if (r->cost.world_bytes > 0) snprintf(kib, sizeof kib, "%.1f", r->cost.world_bytes / 1024.0);
  if (r->cost.chip_bytes > 0) snprintf(chip, sizeof chip, "%.1f", r->cost.chip_bytes / 1024.0);
  fprintf(f, "%-10s %5s %6s %8d %7d %13.4g %13.4g %13.4g %10.3g %9s %7s %5s %6s %5s  %d\n",
          r->stepper, graph_name(r), record_name(r), r->p.nworld, r->nthread, r->wsps_median,
          r->wsps_min, r->wsps_max, r->realtime_median, kib, chip, regs, spill, occ,
          r->problem_worlds);
}

void fs_bench_print_ratios(FILE* f, const fsBenchRow* rows, int n) {
  int header = 0;
  for (int i = 0; i < n; i++) { // the host stepper over MuJoCo's mj_step (cpu)
    const fsBenchRow* cpu = &rows[i];
    if (cpu->peer || !cpu->ok || cpu->p.kind != FS_BACKEND_CPU || cpu->p.record) continue;
    for (int j = 0; j < n; j++) {
      const fsBenchRow* r = &rows[j];
      if (r->peer || !r->ok || r->p.kind != FS_BACKEND_HOST || r->p.record ||
          r->p.nworld != cpu->p.nworld || r->nthread != cpu->nthread)
        continue;
      if (!header)
        fprintf(f, "\nagainst MuJoCo's mj_step (cpu), in this run (same worlds, threads and "
                   "steps; the median of each turn's ratio, the repeats taking turns):\n");
      header = 1;
      fprintf(f,
              "  %-10s %8d world%s, %d thread%s: %.3gx cpu (medians %.4g vs %.4g "
              "world-steps/s: %.3gx)\n",
              r->stepper, r->p.nworld, r->p.nworld == 1 ? "" : "s", r->nthread,
              r->nthread == 1 ? "" : "s",
              r->cpu_ratio > 0 ? r->cpu_ratio : r->wsps_median / cpu->wsps_median, r->wsps_median,
              cpu->wsps_median, r->wsps_median / cpu->wsps_median);
    }
  }
  header = 0;
  for (int i = 0; i < n; i++) {
    const fsBenchRow* peer = &rows[i];
    if (!peer->peer || !peer->ok) continue;
    for (int j = 0; j < n; j++) {
      const fsBenchRow* r = &rows[j];
      if (r->peer || !r->ok || r->p.nworld != peer->p.nworld || r->p.record) continue;
      if (!header)
        fprintf(f, "\nagainst the peers, in this run (same worlds and steps; a peer that takes "
                   "turns with the repeats: the median of each turn's ratio):\n");
      header = 1;
      double ratio = r->peer_ratio > 0 ? r->peer_ratio : r->wsps_median / peer->wsps_median;
      fprintf(f, "  %-10s %5s %8d world%s, %d thread%s: %.3gx %s (%.4g vs %.4g world-steps/s%s)\n",
              r->stepper, graph_name(r), r->p.nworld, r->p.nworld == 1 ? "" : "s", r->nthread,
              r->nthread == 1 ? "" : "s", ratio, peer->stepper, r->wsps_median, peer->wsps_median,
              r->peer_ratio > 0 ? "; turn by turn" : "");
    }
  }
}

void fs_bench_print_record_cost(FILE* f, const fsBenchRow* rows, int n) {
  int header = 0;
  for (int i = 0; i < n; i++) {
    const fsBenchRow* on = &rows[i];
    if (on->peer || !on->ok || !on->p.record) continue;
    for (int j = 0; j < n; j++) {
      const fsBenchRow* off = &rows[j];
      if (off->peer || !off->ok || off->p.record || strcmp(off->stepper, on->stepper) ||
          off->p.graph != on->p.graph || off->p.nworld != on->p.nworld)
        continue;
      if (!header)
        fprintf(f, "\nrecording every series (angles, targets, forces, sites, thorax) to HDF5, "
                   "in this run:\n");
      header = 1;
      fprintf(f, "  %-10s %5s %8d worlds: %.3gx the loop without it (%.4g vs %.4g world-steps/s)\n",
              on->stepper, graph_name(on), on->p.nworld, on->wsps_median / off->wsps_median,
              on->wsps_median, off->wsps_median);
    }
  }
}

int fs_bench_write_csv(const char* path, const fsBenchRow* rows, int n, fsError* err) {
  FILE* f = fopen(path, "w");
  if (!f) return fs_fail(err, "%s: cannot write: %s; fix: a writable --out", path, strerror(errno));
  fprintf(f,
          "stepper,backend,precision,graph,record,worlds,threads,steps,repeats,world_steps_per_s,"
          "world_steps_per_s_min,world_steps_per_s_max,realtime_x,world_bytes,model_bytes,"
          "onchip_bytes,contacts_per_world,registers,local_bytes,shared_bytes,block_threads,"
          "occupancy,problem_worlds,"
          "peer,ok,"
          "error\n");
  for (int i = 0; i < n; i++) {
    const fsBenchRow* r = &rows[i];
    char error[600];
    snprintf(error, sizeof error, "%s", r->error);
    for (char* c = error; *c; c++)
      if (*c == ',' || *c == '\n' || *c == '"') *c = ';';
    fprintf(
        f,
        "%s,%s,f%d,%s,%s,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.0f,%.0f,%d,%d,%d,%d,%d,%d,%.4f,%d,%d,"
        "%d,%s\n",
        r->stepper, r->peer ? r->stepper : fs_backend_name(r->p.kind), r->p.bits, graph_name(r),
        record_name(r), r->p.nworld, r->nthread, r->nstep, r->repeats, r->wsps_median, r->wsps_min,
        r->wsps_max, r->realtime_median, r->cost.world_bytes, r->cost.model_bytes,
        r->cost.chip_bytes, r->cost.contacts, r->cost.kernel_registers, r->cost.kernel_local_bytes,
        r->cost.kernel_shared_bytes, r->cost.kernel_block, r->cost.kernel_occupancy,
        r->problem_worlds, r->peer, r->ok, error);
  }
  if (fclose(f)) return fs_fail(err, "%s: write failed: %s", path, strerror(errno));
  return 0;
}

// "model name" of /proc/cpuinfo, else "unknown".
static void cpu_model(char* out, size_t n) {
  snprintf(out, n, "unknown");
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char* colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) || !colon) continue;
    colon += 2;
    colon[strcspn(colon, "\n")] = 0;
    snprintf(out, n, "%s", colon);
    break;
  }
  fclose(f);
}

static void json_key_string(FILE* f, const char* key, const char* value, int comma) {
  fprintf(f, "  ");
  fs_json_string(f, key);
  fprintf(f, ": ");
  fs_json_string(f, value ? value : "");
  fprintf(f, "%s\n", comma ? "," : "");
}

static void json_row(FILE* f, const fsBenchRow* r) {
  fprintf(f, "    {\"stepper\": ");
  fs_json_string(f, r->stepper);
  fprintf(f, ", \"peer\": %s, \"backend\": ", r->peer ? "true" : "false");
  fs_json_string(f, r->peer ? r->stepper : fs_backend_name(r->p.kind));
  fprintf(f,
          ", \"precision\": \"f%d\", \"graph\": \"%s\", \"record\": \"%s\", \"worlds\": %d, "
          "\"threads\": %d, \"steps\": %d, \"repeats\": %d, \"world_steps_per_s\": ",
          r->p.bits, graph_name(r), record_name(r), r->p.nworld, r->nthread, r->nstep, r->repeats);
  fs_json_number(f, r->wsps_median);
  fprintf(f, ", \"world_steps_per_s_min\": ");
  fs_json_number(f, r->wsps_min);
  fprintf(f, ", \"world_steps_per_s_max\": ");
  fs_json_number(f, r->wsps_max);
  fprintf(f, ", \"realtime_x\": ");
  fs_json_number(f, r->realtime_median);
  fprintf(f,
          ", \"world_bytes\": %.0f, \"model_bytes\": %.0f, \"onchip_bytes\": %d, "
          "\"contacts_per_world\": %d",
          r->cost.world_bytes, r->cost.model_bytes, r->cost.chip_bytes, r->cost.contacts);
  if ((r->cost.backend == FS_BACKEND_CUDA)) {
    fprintf(f,
            ", \"kernel\": {\"registers\": %d, \"local_bytes\": %d, \"shared_bytes\": %d, "
            "\"block_threads\": %d, \"occupancy\": ",
            r->cost.kernel_registers, r->cost.kernel_local_bytes, r->cost.kernel_shared_bytes,
            r->cost.kernel_block);
    fs_json_number(f, r->cost.kernel_occupancy);
    fprintf(f, "}");
  }
  fprintf(f, ", \"problem_worlds\": %d, \"ok\": %s, \"description\": ", r->problem_worlds,
          r->ok ? "true" : "false");
  fs_json_string(f, r->desc);
  fprintf(f, ", \"error\": ");
  fs_json_string(f, r->error);
  fprintf(f, "}");
}

int fs_bench_write_json(const char* path, const fsBenchRow* rows, int n, const fsBenchMeta* meta,
                        fsError* err) {
  FILE* f = fopen(path, "w");
  if (!f) return fs_fail(err, "%s: cannot write: %s; fix: a writable --out", path, strerror(errno));
  char cpu[256], when[64], model[PATH_MAX], clip[PATH_MAX];
  cpu_model(cpu, sizeof cpu);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!realpath(meta->model_path, model)) snprintf(model, sizeof model, "%s", meta->model_path);
  if (!realpath(meta->targets_path, clip)) snprintf(clip, sizeof clip, "%s", meta->targets_path);
  const char* gpu = NULL;
  for (int i = 0; i < n && !gpu; i++)
    if (rows[i].p.kind == FS_BACKEND_CUDA && rows[i].desc[0] && !rows[i].peer) gpu = rows[i].desc;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  fprintf(f, "{\n");
  json_key_string(f, "flysim_version", fs_version_string(), 1);
  json_key_string(f, "mujoco_version", mj_versionString(), 1);
  json_key_string(f, "command_line", meta->command_line, 1);
  json_key_string(f, "date", when, 1);
  json_key_string(f, "model", model, 1);
  json_key_string(f, "targets", clip, 1);
  fprintf(f, "  \"steps\": %d, \"warmup_steps\": %d, \"repeats\": %d,\n", meta->nstep,
          meta->nwarmup, meta->repeats);
  fprintf(f, "  \"machine\": {\"cpu\": ");
  fs_json_string(f, cpu);
  fprintf(f, ", \"cores\": %d, \"memory_gib\": %.1f},\n", (int)sysconf(_SC_NPROCESSORS_ONLN),
          pages > 0 && page > 0 ? (double)pages * page / 1073741824.0 : 0.0);
  fprintf(f, "  \"gpu\": ");
  if (gpu)
    fs_json_string(f, gpu);
  else
    fprintf(f, "null");
  fprintf(f, ",\n  \"rows\": [\n");
  for (int i = 0; i < n; i++) {
    json_row(f, &rows[i]);
    fprintf(f, "%s\n", i + 1 < n ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  if (fclose(f)) return fs_fail(err, "%s: write failed: %s", path, strerror(errno));
  return 0;
}

int fs_bench_plot(const char* json_path, const char* dir, fsError* err) {
  char script[PATH_MAX];
  return fs_plot_script_run(fs_script_path("plot_bench.py", script, sizeof script), json_path, dir,
                            "draw it later with scripts/plot_bench.py", err);
}
