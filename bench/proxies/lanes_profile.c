// Lane utilisation of the step, measured by the lane emulation (the GPU-free proxy of
// how busy a warp's lanes are): NeuroMechFly's replay with contacts, every world on n
// emulated lanes (common/exec/lanes.h, profiling build), each span between two syncs charged
// to the part of the step it belongs to (FSI_MARK). Per part: its share of the world's
// time (spans), the lanes' utilisation (work / n spans) and the serial share (spans
// where one lane works and the rest idle). --lanes sweeps the lanes per world (the
// device's FS_WORLD_LANES by default): a warp of 32 lanes runs 32 / n worlds, so its
// throughput for a compute-bound step is proportional to the utilisation, whatever n.
// The warm-up runs in MuJoCo. `flysim bench --lanes` runs it; the cuda_lanes test holds
// it to bench/results/lanes.csv.
//
//   lanes_profile [--model PATH] [--targets PATH] [--worlds N] [--steps S]
//                 [--warmup-steps W] [--lanes N[,N...]] [--csv PATH]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/inputs/model.h"
#include "common/inputs/targets.h"
#include "common/inputs/inputs.h"
#include "common/model/worlds.h"
#include "cpu/serial.h"
#include "common/exec/lanes.h"
#include "common/model/model.h"

static const char* mark_name(int k) {
  static const char* extra[] = {"checks",          "solver: setup",       "solver: newton",
                                "solver: hessian", "solver: line search", "solver: noslip",
                                "solver: results"};
  if (k < FS_NSTAGE) return fs_stage_name(k);
  return k - FS_MARK_CHECKS < (int)(sizeof extra / sizeof *extra) ? extra[k - FS_MARK_CHECKS] : "?";
}

enum { MAX_WIDTHS = 6 };

typedef struct Args {
  const char *model, *targets, *csv;
  int worlds, steps, warmup;
  int lanes[MAX_WIDTHS], nlanes; // lanes per world to profile, in order
} Args;

// "32,8" into a->lanes; -1 unless each is a power of two from 1 to 32.
static int parse_lanes(const char* v, Args* a) {
  a->nlanes = 0;
  for (const char* p = v; *p;) {
    char* end;
    long n = strtol(p, &end, 10);
    if (end == p || !fs_lanes_valid(n) || a->nlanes == MAX_WIDTHS) return -1;
    a->lanes[a->nlanes++] = (int)n;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return a->nlanes ? 0 : -1;
}

static int parse(int argc, char** argv, Args* a) {
  static char model[4096], targets[4096];
  snprintf(model, sizeof model, "%s/mesh.mjb", fs_assets_dir());
  snprintf(targets, sizeof targets, "%s/walking_clip.h5", fs_assets_dir());
  *a = (Args){model, targets, NULL, 2, 100, 500, {FS_WORLD_LANES}, 1};
  for (int i = 1; i < argc; i++) {
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--model") && v)
      a->model = argv[++i];
    else if (!strcmp(argv[i], "--targets") && v)
      a->targets = argv[++i];
    else if (!strcmp(argv[i], "--csv") && v)
      a->csv = argv[++i];
    else if (!strcmp(argv[i], "--worlds") && v)
      a->worlds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--steps") && v)
      a->steps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup-steps") && v)
      a->warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--lanes") && v) {
      if (parse_lanes(argv[++i], a)) {
        fprintf(stderr,
                "lanes_profile: --lanes %s: give lanes per world as powers of two from 1 "
                "to 32, comma-separated (e.g. 32,16,8,4)\n",
                argv[i]);
        return -1;
      }
    } else {
      fprintf(stderr,
              "lanes_profile: bad argument '%s'; see the header of "
              "bench/proxies/lanes_profile.c\n",
              argv[i]);
      return -1;
    }
  }
  if (a->worlds < 1 || a->steps < 1 || a->warmup < 0) {
    fprintf(stderr, "lanes_profile: --worlds and --steps must be at least 1\n");
    return -1;
  }
  return 0;
}

// The replay's worlds after the warm-up (keyframe, adhesion on, keyframe controls),
// warmed up by MuJoCo (fast) and handed over with their warm start.
static int warm_worlds(const Args* a, const mjModel* mj, const fsReplayBinding* bind,
                       const fsModel* m, fsWorlds* b, fsError* err) {
  mjData* md = mj_makeData(mj);
  if (!md) return fs_fail(err, "cannot allocate MuJoCo data");
  fs_replay_reset_world(mj, bind, md);
  for (int s = 0; s < a->warmup; s++) mj_step(mj, md);
  int rc = 0;
  for (int w = 0; w < a->worlds && !rc; w++)
    rc = fs_worlds_from_mj(m, b, w, mj, md, FS_STAGE_STATE, err);
  mj_deleteData(md);
  return rc;
}

static void report(const Args* a, int lanes, FILE* csv, int header) {
  fsLaneStat st[FS_NMARK];
  double empty = fs_lanes_profile_read(st, FS_NMARK);
  double span = 0, work = 0, serial = 0;
  long dropped = 0, phases = 0;
  for (int k = 0; k < FS_NMARK; k++) {
    span += st[k].span;
    work += st[k].work;
    serial += st[k].serial_span;
    dropped += st[k].dropped;
    phases += st[k].phases;
  }
  double ws = (double)a->worlds * a->steps;
  printf("%-22s %12s %10s %12s %10s\n", "part of the step", "phases/step", "time %", "utilisation",
         "serial %");
  if (csv && header)
    fprintf(csv, "lanes,part,phases_per_world_step,time_share,utilisation,serial_share,"
                 "span_cycles_per_world_step\n");
  for (int k = 0; k < FS_NMARK; k++) {
    if (!st[k].phases) continue;
    double util = st[k].span > 0 ? st[k].work / (lanes * st[k].span) : 0;
    double ser = st[k].span > 0 ? st[k].serial_span / st[k].span : 0;
    printf("%-22s %12.1f %10.1f %12.3f %10.1f\n", mark_name(k), st[k].phases / ws,
           100 * st[k].span / span, util, 100 * ser);
    if (csv)
      fprintf(csv, "%d,%s,%.2f,%.4f,%.4f,%.4f,%.0f\n", lanes, mark_name(k), st[k].phases / ws,
              st[k].span / span, util, ser, st[k].span / ws);
  }
  double util = span > 0 ? work / (lanes * span) : 0;
  printf("%-22s %12.1f %10.1f %12.3f %10.1f\n", "whole step", phases / ws, 100.0, util,
         100 * serial / span);
  if (csv)
    fprintf(csv, "%d,whole step,%.2f,1,%.4f,%.4f,%.0f\n", lanes, phases / ws, util, serial / span,
            span / ws);
  printf("(%d worlds x %d steps after %d warm-up steps, %d emulated lanes a world (%d worlds a "
         "warp); a world-step spans %.0f cycles; an empty phase costs %.0f cycles, taken off; %ld "
         "of %ld phases dropped as descheduled)\n",
         a->worlds, a->steps, a->warmup, lanes, 32 / lanes, span / ws, empty, dropped,
         phases + dropped);
}

int main(int argc, char** argv) {
  Args a;
  if (parse(argc, argv, &a)) return 2;
  fsError err;
  fsReplayInputs in;
  fsModel m;
  fsWorlds b;
  memset(&m, 0, sizeof m);
  memset(&b, 0, sizeof b);
  int rc = fs_replay_inputs_load(a.model, a.targets, 0, &in, &err) ||
           fs_model_build(in.m, a.model, &m, &err) || fs_worlds_alloc(&m, a.worlds, &b, &err) ||
           warm_worlds(&a, in.m, &in.bind, &m, &b, &err);
  if (!rc && (long)a.steps * a.worlds > in.targets.nstep)
    rc = fs_fail(&err, "--steps x --worlds > clip");
  if (rc) {
    fprintf(stderr, "lanes_profile: %s\n", err.msg);
    return 1;
  }
  const fsTargets* t = &in.targets;
  const fsReplayBinding* bind = &in.bind;
  FILE* csv = a.csv ? fopen(a.csv, "w") : NULL;
  if (a.csv && !csv) {
    fprintf(stderr, "lanes_profile: cannot write %s\n", a.csv);
    return 1;
  }
  for (int k = 0; k < a.nlanes; k++) { // each width from the same warm worlds
    if (k > 0 && warm_worlds(&a, in.m, &in.bind, &m, &b, &err)) {
      fprintf(stderr, "lanes_profile: %s\n", err.msg);
      return 1;
    }
    fs_lanes_set_count(a.lanes[k]);
    fs_lanes_profile_reset();
    for (int s = 0; s < a.steps; s++) {
      for (int w = 0; w < a.worlds; w++) {
        fsData d = fs_worlds_view(&m, &b, w);
        const double* row = t->value + ((long)w * a.steps + s) * bind->nact;
        for (int j = 0; j < bind->nact; j++) d.ctrl[bind->actuator[j]] = (fsReal)row[j];
      }
      fs_serial_step(&m, &b, 1);
    }
    if (k > 0) printf("\n");
    report(&a, a.lanes[k], csv, k == 0);
  }
  if (csv && fclose(csv)) {
    fprintf(stderr, "lanes_profile: write failed: %s\n", a.csv);
    return 1;
  }
  fs_worlds_free(&b);
  fs_model_free(&m);
  fs_replay_inputs_free(&in);
  return 0;
}
