// flysim bench: options, the sweep's order, the table and the files (the points:
// bench/sweep.h; the peers: bench/peers.h; the files: bench/bench_io.h).
#include "app/bench_cmd.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_io.h"
#include "bench/peers.h"
#include "bench/sweep.h"
#include "common/cli/verb_options.h"
#include "common/inputs/controls.h"
#include "common/inputs/inputs.h"
#include "common/sys/files.h"
#include "common/sys/interrupt.h"
#include "common/base/mujoco_hooks.h"
#include "common/sys/spawn.h"
#include "common/inputs/model.h"
#include "common/profiling/profile_ncu.h"
#include "common/profiling/profile_nsys.h"
#include "common/inputs/targets.h"
#include "common/replay/replay_io.h"

#define BENCH_MAX_STEPS (1L << 20) // --sim-steps, --warmup-sec

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };
enum { MAX_LIST = 32, MAX_ROWS = 512, MAX_REPEATS = 100 };

typedef struct Options {
  fsVerbOptions v;               // model or world, targets, threads, --sim-steps (timed steps a
                                 // repeat), warm-up, disable, bounds, --precision (a list), quiet
  int backend[3], nbackend;      // fsBackendKind
  int graph[2], ngraph;          // cuda
  int record[2], nrecord;        // 0 off, 1 every series into an HDF5 file
  int worlds[MAX_LIST], nworlds; // 0: auto
  char peer[32];
  char out[4096], profile[4096], ncu[4096];
  int repeats, plot, lanes;
  char command_line[8192];
} Options;

static void print_help(void) {
  printf("usage: flysim bench [options]\n"
         "\n"
         "Throughput of the replay (NeuroMechFly walking, contacts on) over a sweep of\n"
         "steppers, precisions, CUDA graph on/off and numbers of worlds: R timed repeats a\n"
         "point (median, min, max world-steps/s; x realtime), memory per world, and for\n"
         "the GPU the step kernel's registers, spills and occupancy. Optionally a peer\n"
         "(what a user would run instead) in the same run. The CPU steppers' points (cpu,\n"
         "host) of one number of worlds are measured together, their repeats taking turns,\n"
         "so that a busy machine slows each alike; the table gives the host's ratio to cpu.\n"
         "\n"
         "options:\n"
         "  --backends LIST         cpu, host, cuda, comma-separated (default: cuda where\n"
         "                          there is a GPU, else cpu,host); --backend is the same\n"
         "  --precision LIST        f32, f64 for host and cuda (default f32; cpu is f64)\n"
         "  --graph LIST            on, off: cuda's step as one CUDA graph or as launches\n"
         "                          (default on)\n"
         "  --record LIST           off, on: the loop alone, or recording every series of\n"
         "                          every world into HDF5 as replay --save-data does (the\n"
         "                          file in --out, else $TMPDIR, removed after; the table\n"
         "                          adds the cost; default off)\n"
         "  --worlds LIST|auto      worlds per point, e.g. 1024,4096 (default auto: cuda\n"
         "                          1024, 4096, ... until device memory runs out; cpu and\n"
         "                          host 1, 2, 4, ... up to twice the threads)\n"
         "  --sim-steps N           timed steps per repeat (default 500)\n"
         "  --warmup-sec S          warm-up before each repeat at the neutral pose, not\n"
         "                          timed (default 0.05, as replay: FlyGym's settling)\n"
         "  --repeat R              timed repeats per point (default 3)\n"
         "  --threads N             CPU threads of cpu and host (default: one per core)\n"
         "  --model PATH            model (default %s/mesh.mjb)\n"
         "  --world NAME            one of FlyGym's worlds as exported (instead of --model):\n"
         "                          flat, tethered, gapped, blocks, mixed, and their capsule\n"
         "                          variants (flat_capsule, ...)\n"
         "  --targets PATH          clip (default %s/walking_clip.h5); 'sine': every\n"
         "                          actuator its own smooth sine (any model)\n"
         "  --disable NAME          a MuJoCo disable flag (repeatable)\n",
         fs_assets_dir(), fs_assets_dir());
  fputs(FS_MAX_CONTACTS_HELP, stdout);
  printf("  --peer NAME             also run a peer (%s) beside the points: flygym\n"
         "                          (FlyGym's own CPU loop) at the CPU points' worlds, up to\n"
         "                          16; rollout (MuJoCo's mujoco.rollout on the points'\n"
         "                          threads, from the same settled state, the clip's\n"
         "                          controls) at the CPU points' worlds; these two run once\n"
         "                          each turn of the CPU points' repeats; mjx (MuJoCo MJX on\n"
         "                          JAX's device: FLYSIM_MJX_PYTHON, a Python with jax and\n"
         "                          mujoco-mjx) at the GPU points', up to 65536; the table\n"
         "                          adds the ratios\n"
         "  --lanes                 instead of a sweep: the lane utilisation of the GPU's step\n"
         "                          on the emulated lanes at 32, 16, 8 and 4 lanes a world\n"
         "                          (bench/proxies/lanes_profile.c: per stage and solver\n"
         "                          phase, the share of the world's time, the lanes'\n"
         "                          utilisation, the serial share; the build's width is\n"
         "                          FLYSIM_WORLD_LANES, %d); with --out, DIR/lanes.csv\n"
         "                          (bench/results/lanes.csv is the record)\n"
         "  --profile PATH          one cuda point (one precision, graph setting and worlds):\n"
         "                          re-run under Nsight Systems as flysim replay --profile\n"
         "                          does (PATH.nsys-rep)\n"
         "  --ncu PATH              one cuda point: re-run under Nsight Compute on one timed\n"
         "                          launch of the step kernel (PATH.ncu-rep: occupancy, warp\n"
         "                          stalls, memory throughput, source hot spots) and print\n"
         "                          the numbers that matter\n"
         "  --out DIR               write DIR/bench.csv, DIR/bench.json (machine, GPU,\n"
         "                          versions, command line) and DIR/throughput.png\n"
         "  --no-plot               with --out: no throughput.png\n"
         "  --quiet                 no progress lines\n"
         "  -h, --help              this text\n"
         "\n"
         "Exit status: 0, 1 when a point or a peer failed (the others are still reported\n"
         "and saved; running out of device memory ends an auto sweep without failing), 2\n"
         "usage, 130 interrupted. The last line is a key=value summary.\n",
         fs_bench_peer_names(), FS_WORLD_LANES);
}

// Split a comma-separated list of at most max items; each item through fn. -1 on a bad
// item, the error saying what an item may be (`values`).
static int parse_list(const char* opt, const char* s, int (*fn)(const char*, int*),
                      const char* values, int* out, int max, int* n, fsError* err) {
  char buf[1024], *save = NULL;
  snprintf(buf, sizeof buf, "%s", s);
  *n = 0;
  for (char* tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (*n == max) return fs_fail(err, "%s: at most %d values; see flysim bench --help", opt, max);
    if (fn(tok, &out[*n]))
      return fs_fail(err, "%s: '%s' is not %s; fix: a comma-separated list of them", opt, tok,
                     values);
    (*n)++;
  }
  return *n ? 0 : fs_fail(err, "%s: empty list; see flysim bench --help", opt);
}

static int backend_of(const char* s, int* v) {
  fsBackendKind kind;
  if (fs_parse_backend_name(s, &kind)) return -1;
  *v = kind;
  return 0;
}

static int on_off(const char* s, int* v) {
  *v = !strcmp(s, "on") ? 1 : !strcmp(s, "off") ? 0 : -1;
  return *v < 0;
}

static int worlds_of(const char* s, int* v) {
  char* end;
  long x = strtol(s, &end, 10);
  *v = (int)x;
  return *end || x < 1 || x > (1L << 24);
}

enum {
  OPT_BACKENDS = 256,
  OPT_GRAPH,
  OPT_RECORD,
  OPT_WORLDS,
  OPT_REPEAT,
  OPT_PEER,
  OPT_OUT,
  OPT_PROFILE,
  OPT_NCU
};

// One of bench's own options (fsVerb.one).
static int parse_one(int c, const char* val, void* arg, fsError* err) {
  Options* o = arg;
  switch (c) {
  case OPT_BACKENDS:
    return parse_list("--backends", val, backend_of, "cpu, host or cuda", o->backend, 3,
                      &o->nbackend, err);
  case OPT_GRAPH:
    return parse_list("--graph", val, on_off, "on or off", o->graph, 2, &o->ngraph, err);
  case OPT_RECORD:
    return parse_list("--record", val, on_off, "on or off", o->record, 2, &o->nrecord, err);
  case OPT_WORLDS:
    if (!strcmp(val, "auto")) {
      o->nworlds = 0;
      return 0;
    }
    return parse_list("--worlds", val, worlds_of, "a number of worlds from 1 to 16777216 (or auto)",
                      o->worlds, MAX_LIST, &o->nworlds, err);
  case OPT_REPEAT:
    return fs_parse_count("--repeat", val, MAX_REPEATS, &o->repeats, err);
  case OPT_PEER:
    if (!fs_bench_peer_known(val))
      return fs_fail(err, "--peer: '%s' is not a peer; fix: --peer %s", val, fs_bench_peer_names());
    snprintf(o->peer, sizeof o->peer, "%s", val);
    return 0;
  case OPT_OUT:
    return fs_copy_path_option("--out", val, o->out, sizeof o->out, err);
  case OPT_PROFILE:
    return fs_copy_path_option("--profile", val, o->profile, sizeof o->profile, err);
  case OPT_NCU:
    return fs_copy_path_option("--ncu", val, o->ncu, sizeof o->ncu, err);
  default:
    return fs_fail(err, "internal: flysim bench: option %d", c);
  }
}

static int parse_options(int argc, char** argv, Options* o, fsError* err) {
  const struct option own[] = {{"backends", required_argument, NULL, OPT_BACKENDS},
                               {"backend", required_argument, NULL, OPT_BACKENDS},
                               {"graph", required_argument, NULL, OPT_GRAPH},
                               {"record", required_argument, NULL, OPT_RECORD},
                               {"worlds", required_argument, NULL, OPT_WORLDS},
                               {"repeat", required_argument, NULL, OPT_REPEAT},
                               {"peer", required_argument, NULL, OPT_PEER},
                               {"out", required_argument, NULL, OPT_OUT},
                               {"no-plot", no_argument, &o->plot, 0},
                               {"lanes", no_argument, &o->lanes, 1},
                               {"profile", required_argument, NULL, OPT_PROFILE},
                               {"ncu", required_argument, NULL, OPT_NCU},
                               {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  fs_verb_options_init(&o->v);
  o->v.sim_steps = 500; // the warm-up: replay's (fs_verb_options_init)
  int cuda = (fs_backend_available(FS_BACKEND_CUDA, NULL) == FS_OK);
  o->backend[0] = cuda ? FS_BACKEND_CUDA : FS_BACKEND_CPU;
  o->backend[1] = FS_BACKEND_HOST;
  o->nbackend = cuda ? 1 : 2;
  o->graph[0] = 1;
  o->ngraph = 1;
  o->nrecord = 1; // off
  o->repeats = 3;
  o->plot = 1;
  const fsVerb verb = {.name = "bench",
                       .takes = FS_VERB_ALL & ~(FS_VERB_WORLDS | FS_VERB_DURATION),
                       .max_steps = BENCH_MAX_STEPS,
                       .precision_list = 1,
                       .own = own,
                       .one = parse_one,
                       .arg = o,
                       .help = print_help};
  int rc = fs_parse_verb(argc, argv, &verb, &o->v, err);
  if (rc) return rc;
  int flysim = 0;
  for (int b = 0; b < o->nbackend; b++) flysim |= o->backend[b] != FS_BACKEND_CPU;
  if (!o->lanes && fs_verb_check_flysim_options(&o->v, flysim,
                                                "add host or cuda to --backends (e.g. --backends "
                                                "cpu,host)",
                                                err))
    return -1;
  if (!o->v.nprecision) o->v.precision[o->v.nprecision++] = 32;
  if (!o->plot && !o->out[0])
    return fs_fail(err, "--no-plot only applies with --out DIR; fix: add --out DIR or drop it");
  if (o->v.world[0] && !strcmp(o->peer, "flygym") && strcmp(o->v.world, "flat") &&
      strcmp(o->v.world, "flat_capsule"))
    return fs_fail(err,
                   "--peer flygym runs FlyGym's flat world, not '%s'; fix: drop --peer, or "
                   "--world flat or flat_capsule",
                   o->v.world);
  if (!strcmp(o->peer, "rollout") && !strcmp(o->v.targets, FS_TARGETS_SINE))
    return fs_fail(err, "--peer rollout replays a clip file, not flysim's sine; fix: --targets "
                        "PATH or drop --peer");
  if (o->lanes && o->peer[0])
    return fs_fail(err, "--lanes profiles the step instead of a sweep; fix: drop --peer");
  if (o->lanes && o->v.max_contacts)
    return fs_fail(err, "--lanes profiles the step's lanes, which the contact buffer's size does "
                        "not change; fix: drop --max-contacts");
  const char* prof = o->profile[0] ? "--profile" : o->ncu[0] ? "--ncu" : NULL;
  if (prof && !(o->nbackend == 1 && o->backend[0] == FS_BACKEND_CUDA && o->v.nprecision == 1 &&
                o->ngraph == 1 && o->nrecord == 1 && o->nworlds == 1 && !o->peer[0]))
    return fs_fail(err,
                   "%s profiles one point of the GPU stepper; fix: --backends cuda with one "
                   "--precision, one --graph and one --worlds value (e.g. --worlds 16384), "
                   "and no --peer",
                   prof);
  if (o->profile[0] && o->ncu[0])
    return fs_fail(err, "--profile and --ncu both given; fix: one profiler a run");
  return 0;
}

// --ncu: the same command under Nsight Compute, on a timed launch of the step kernel
// (the warm-up's launches, fs_replay_launches, and two more skipped).
static int run_ncu(const Options* o, int argc, char** argv, fsError* err) {
  mjModel* m = fs_model_load(o->v.model, err);
  if (!m) return EXIT_RUNTIME;
  int warm;
  int bad = fs_steps_of_seconds("--warmup-sec", o->v.warmup_sec, m->opt.timestep, BENCH_MAX_STEPS,
                                &warm, err);
  mj_deleteModel(m);
  if (bad) return EXIT_USAGE;
  int skip = fs_replay_launches(warm) + 2;
  return fs_ncu_run(argc, argv, o->ncu, skip, err) ? EXIT_RUNTIME : EXIT_OK;
}

// --lanes: the lanes_profile proxy (bench/proxies/lanes_profile.c), built beside flysim, its
// table on stdout.
static int run_lanes(const Options* o, fsError* err) {
  char csv[4200] = "";
  if (o->out[0]) {
    if (fs_make_dirs(o->out, "--out", err)) return EXIT_RUNTIME;
    snprintf(csv, sizeof csv, "%s/lanes.csv", o->out);
  }
  const char* argv[] = {FLYSIM_LANES_PROFILE,
                        "--model",
                        o->v.model,
                        "--targets",
                        o->v.targets,
                        "--lanes",
                        "32,16,8,4",
                        csv[0] ? "--csv" : NULL,
                        csv,
                        NULL};
  fsSpawnSpec spec = {argv, -1, -1, -1, {-1, -1}, 0};
  fflush(stdout);
  pid_t pid = fs_spawn(&spec, err);
  if (pid < 0) return EXIT_RUNTIME;
  int status = fs_spawn_wait(pid);
  if (status != 0) {
    char how[64];
    fs_spawn_describe(status, how, sizeof how);
    fs_fail(err, "%s %s (see above); fix: rebuild (it is built with flysim)", FLYSIM_LANES_PROFILE,
            how);
    return EXIT_RUNTIME;
  }
  if (csv[0]) printf("Saved %s\n", csv);
  return EXIT_OK;
}

//---------------------------------- the sweep -----------------------------------------------------

typedef struct Session {
  Options opt;
  fsReplayInputs inputs; // model, clip, binding
  fsBenchInputs in;
  fsBenchRow* rows;
  int nrow, failed, interrupted;
  int cpu_points; // sweep_cpu had points (a CPU peer then took turns with their repeats)
} Session;

// The worlds of an auto sweep: cuda from 1024 by 4x until memory runs out (the sweep
// stops there); cpu and host 1, 2, 4, ... up to twice the threads.
static int auto_worlds(const Session* s, fsBackendKind kind, int* out) {
  int n = 0;
  if (kind == FS_BACKEND_CUDA) {
    for (long w = 1024; w <= (1L << 22) && n < MAX_LIST; w *= 4) out[n++] = (int)w;
    return n;
  }
  int threads = s->opt.v.threads > 0 ? s->opt.v.threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
  for (int w = 1; w <= 2 * threads && n < MAX_LIST; w *= 2) out[n++] = w;
  return n;
}

static int out_of_memory(const fsBenchRow* r) {
  return !r->ok && strstr(r->error, "of device memory");
}

// A progress line on a terminal (not with --quiet): "flysim bench: " and fmt's text.
__attribute__((format(printf, 2, 3))) static void progress(const Session* s, const char* fmt, ...) {
  if (s->opt.v.quiet || !isatty(STDERR_FILENO)) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("\rflysim bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs(" ...   ", stderr);
  fflush(stderr);
}

static void progress_point(const Session* s, const fsBenchPoint* p) {
  char name[32];
  fs_bench_stepper_name(p, name, sizeof name);
  progress(s, "%s%s, %d worlds, %d x %d steps", name,
           p->kind == FS_BACKEND_CUDA ? (p->graph ? " graph" : " no graph") : "", p->nworld,
           s->in.repeats, s->in.nstep);
}

static void clear_progress(const Session* s) {
  if (s->opt.v.quiet || !isatty(STDERR_FILENO)) return;
  fprintf(stderr, "\r\033[K");
  fflush(stderr);
}

static fsBenchRow* next_row(Session* s) {
  return s->nrow < MAX_ROWS ? &s->rows[s->nrow++] : NULL;
}

// Every point of one stepper, real and graph setting, worlds ascending.
static void sweep_worlds(Session* s, const fsBenchPoint* base) {
  int list[MAX_LIST], n = s->opt.nworlds ? s->opt.nworlds : auto_worlds(s, base->kind, list);
  if (s->opt.nworlds) memcpy(list, s->opt.worlds, sizeof(int) * (size_t)n);
  for (int i = 0; i < n && !s->interrupted; i++) {
    fsBenchPoint p = *base;
    p.nworld = list[i];
    fsBenchRow* r = next_row(s);
    if (!r) return;
    progress_point(s, &p);
    s->interrupted = fs_bench_point(&s->in, &p, r);
    clear_progress(s);
    if (s->interrupted) {
      s->nrow--; // not measured
      return;
    }
    if (out_of_memory(r) && !s->opt.nworlds) { // the end of an auto sweep
      printf("%-10s %5s %8d  does not fit: the auto sweep stops here\n", r->stepper,
             p.graph ? "on" : "off", p.nworld);
      s->nrow--;
      return;
    }
    fs_bench_print_row(stdout, r);
    fflush(stdout);
    s->failed += !r->ok;
  }
}

// One run of the peer at nworld worlds into r: `repeats` timed runs (rollout; the others
// time one), rollout on the threads a CPU point of nworld worlds has.
static void peer_call(Session* s, int nworld, int repeats, fsBenchRow* r) {
  const char* base = strrchr(s->opt.v.model, '/');
  base = base ? base + 1 : s->opt.v.model;
  const char* model = fs_bench_peer_takes_path(s->opt.peer) ? s->opt.v.model
                      : !strncmp(base, "capsule", 7)        ? "capsule"
                                                            : "mesh";
  int rollout = !strcmp(s->opt.peer, "rollout");
  int nthread = s->opt.v.threads > 0 ? s->opt.v.threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
  char threads[32], warm[32];
  snprintf(threads, sizeof threads, "%d", nthread < nworld ? nthread : nworld);
  snprintf(warm, sizeof warm, "%d", s->in.nwarmup);
  const char* extra[] = {"--targets", s->opt.v.targets, "--threads", threads, "--warmup", warm,
                         NULL};
  fs_bench_peer(s->opt.peer, nworld, s->in.nstep, rollout ? repeats : 1, model,
                rollout ? extra : NULL, s->opt.out[0] ? s->opt.out : "/tmp", r);
}

// The most worlds peer `name` runs: flygym 16 (it builds a Simulation a world), mjx 65536.
static int peer_most_worlds(const char* name) {
  return !strcmp(name, "flygym") ? 16 : !strcmp(name, "mjx") ? 65536 : 1 << 24;
}

// A CPU peer (flygym, rollout) beside the CPU points of one number of worlds: a run of its
// script each turn (one timed run), after the points' repeats of that turn, so that the
// ratios to it pair runs a moment apart as the host's to cpu do.
typedef struct TurnPeer {
  fsBenchRow* row; // the peer's row (NULL: no peer takes turns)
  double wsps[MAX_REPEATS];
  int done, failed;
} TurnPeer;

static void turn_peer_repeat(Session* s, int nworld, TurnPeer* tp) {
  if (!tp->row || tp->failed) return;
  fsBenchRow one;
  peer_call(s, nworld, 1, &one);
  if (!one.ok) {
    *tp->row = one;
    tp->failed = 1;
    return;
  }
  if (tp->done == 0) *tp->row = one; // the row's name, description, threads
  tp->row->problem_worlds = one.problem_worlds;
  tp->wsps[tp->done++] = one.wsps_median;
}

// The peer's row from its turns: the median, min and max of its runs, and each CPU
// point's ratio to it turn by turn (peer_ratio).
static void turn_peer_close(Session* s, TurnPeer* tp, fsBenchRun* runs, int nrun) {
  if (!tp->row) return;
  fsBenchRow* r = tp->row;
  r->repeats = s->in.repeats;
  if (tp->failed || tp->done != s->in.repeats) {
    if (!tp->failed) fs_bench_row_error(r, "peer %s: interrupted", s->opt.peer);
    r->ok = 0;
    return;
  }
  double x[MAX_REPEATS];
  r->wsps_min = r->wsps_max = tp->wsps[0];
  for (int k = 0; k < tp->done; k++) {
    x[k] = tp->wsps[k];
    r->wsps_min = x[k] < r->wsps_min ? x[k] : r->wsps_min;
    r->wsps_max = x[k] > r->wsps_max ? x[k] : r->wsps_max;
  }
  r->wsps_median = fs_median(x, tp->done);
  r->realtime_median = r->wsps_median * s->inputs.m->opt.timestep;
  for (int j = 0; j < nrun; j++) {
    fsBenchRun* p = &runs[j];
    if (p->out->p.record || p->failed || p->done != tp->done) continue;
    for (int k = 0; k < tp->done; k++) x[k] = p->wsps[k] / tp->wsps[k];
    p->out->peer_ratio = fs_median(x, tp->done);
  }
}

// Each host point's ratio to the cpu point of its turns (record off both): the median of
// the repeats' ratios, each repeat against the cpu repeat of the same turn, so that what
// slowed the machine for a moment slowed both sides of a ratio.
static void paired_ratios(fsBenchRun* runs, int nrun) {
  const fsBenchRun* cpu = NULL;
  for (int j = 0; j < nrun; j++)
    if (runs[j].out->p.kind == FS_BACKEND_CPU && !runs[j].out->p.record) cpu = &runs[j];
  if (!cpu || cpu->failed || cpu->done == 0) return;
  for (int j = 0; j < nrun; j++) {
    fsBenchRun* r = &runs[j];
    if (r->out->p.kind != FS_BACKEND_HOST || r->out->p.record || r->failed || r->done != cpu->done)
      continue;
    double x[MAX_REPEATS];
    int n = 0;
    for (int k = 0; k < r->done && n < MAX_REPEATS; k++) x[n++] = r->wsps[k] / cpu->wsps[k];
    r->out->cpu_ratio = fs_median(x, n);
  }
}

// The CPU steppers' points (cpu, host), a number of worlds at a time: that number's
// points open together and their repeats take turns (repeat r of each before repeat r + 1
// of any), so that a shared machine's slower and faster spells fall on each alike and the
// ratios between them hold. Rows in the order of --backends, --precision and --record.
static void sweep_cpu(Session* s) {
  enum { MAX_CPU_POINTS = 16 };
  const Options* o = &s->opt;
  fsBenchPoint pts[MAX_CPU_POINTS];
  int np = 0;
  for (int b = 0; b < o->nbackend; b++) {
    fsBackendKind kind = (fsBackendKind)o->backend[b];
    if (kind == FS_BACKEND_CUDA) continue;
    int nbits = kind == FS_BACKEND_CPU ? 1 : o->v.nprecision;
    for (int k = 0; k < nbits; k++)
      for (int rec = 0; rec < o->nrecord && np < MAX_CPU_POINTS; rec++)
        pts[np++] = (fsBenchPoint){kind, kind == FS_BACKEND_CPU ? 64 : o->v.precision[k], 0, 0,
                                   o->record[rec]};
  }
  if (!np) return;
  int list[MAX_LIST], n = o->nworlds ? o->nworlds : auto_worlds(s, FS_BACKEND_CPU, list);
  if (o->nworlds) memcpy(list, o->worlds, sizeof(int) * (size_t)n);
  fsBenchRun runs[MAX_CPU_POINTS];
  s->cpu_points = 1;
  for (int i = 0; i < n && !s->interrupted; i++) {
    int first = s->nrow, nrun = 0;
    for (int j = 0; j < np; j++) {
      fsBenchRow* r = next_row(s);
      if (!r) break;
      fsBenchPoint p = pts[j];
      p.nworld = list[i];
      fs_bench_open(&s->in, &p, r, &runs[nrun++]);
    }
    int turns =
        o->peer[0] && !fs_bench_peer_on_gpu(o->peer) && list[i] <= peer_most_worlds(o->peer);
    TurnPeer tp = {turns ? next_row(s) : NULL, {0}, 0, 0};
    for (int rep = 0; rep < s->in.repeats && !s->interrupted; rep++) {
      progress(s, "%d CPU point%s%s%s, %d worlds, repeat %d of %d (%d steps)", nrun,
               nrun == 1 ? "" : "s", tp.row ? " and " : "", tp.row ? o->peer : "", list[i], rep + 1,
               s->in.repeats, s->in.nstep);
      for (int j = 0; j < nrun && !s->interrupted; j++) {
        int sig = fs_bench_repeat(&runs[j]);
        s->interrupted = sig ? sig : fs_interrupted();
      }
      if (!s->interrupted) turn_peer_repeat(s, list[i], &tp);
      s->interrupted = s->interrupted ? s->interrupted : fs_interrupted();
    }
    clear_progress(s);
    paired_ratios(runs, nrun);
    turn_peer_close(s, &tp, runs, nrun);
    for (int j = 0; j < nrun; j++) fs_bench_close(&runs[j]);
    if (s->interrupted) {
      s->nrow = first; // not measured
      return;
    }
    for (int j = first; j < s->nrow; j++) {
      fs_bench_print_row(stdout, &s->rows[j]);
      s->failed += !s->rows[j].ok;
    }
    fflush(stdout);
  }
}

// The peer at the worlds of the points it stands beside, where it did not take turns
// with the CPU points' repeats (sweep_cpu): mjx at the GPU ones, flygym and rollout at
// the CPU ones when there are no CPU points; at most peer_most_worlds.
static void run_peer(Session* s) {
  int gpu = fs_bench_peer_on_gpu(s->opt.peer), cuda = 0;
  for (int b = 0; b < s->opt.nbackend; b++) cuda |= s->opt.backend[b] == FS_BACKEND_CUDA;
  if (!gpu && s->cpu_points) return;
  fsBackendKind kind = gpu && cuda ? FS_BACKEND_CUDA : FS_BACKEND_CPU;
  int list[MAX_LIST], n = s->opt.nworlds ? s->opt.nworlds : auto_worlds(s, kind, list);
  if (s->opt.nworlds) memcpy(list, s->opt.worlds, sizeof(int) * (size_t)n);
  int most = peer_most_worlds(s->opt.peer);
  for (int i = 0; i < n && !s->interrupted && list[i] <= most; i++) {
    fsBenchRow* r = next_row(s);
    if (!r) return;
    progress(s, "peer %s, %d worlds", s->opt.peer, list[i]);
    peer_call(s, list[i], s->in.repeats, r);
    clear_progress(s);
    s->interrupted = fs_interrupted();
    fs_bench_print_row(stdout, r);
    s->failed += !r->ok;
  }
}

// Where a recording point writes: --out, else $TMPDIR, else /tmp.
static const char* record_dir(const Options* o) {
  const char* tmp = getenv("TMPDIR");
  return o->out[0] ? o->out : tmp && tmp[0] ? tmp : "/tmp";
}

// The inputs and the table. Returns an exit status (--warmup-sec beyond the steps a point
// may take: usage, as replay and compare say it).
static int load(Session* s, fsError* err) {
  Options* o = &s->opt;
  int warm;
  if (fs_replay_inputs_load(o->v.model, o->v.targets, o->v.disable, &s->inputs, err))
    return EXIT_RUNTIME;
  if (fs_steps_of_seconds("--warmup-sec", o->v.warmup_sec, s->inputs.m->opt.timestep,
                          BENCH_MAX_STEPS, &warm, err))
    return EXIT_USAGE;
  s->in = (fsBenchInputs){
      s->inputs.m,  o->v.model, &s->inputs.targets, &s->inputs.bind,   (int)o->v.sim_steps, warm,
      o->v.threads, o->repeats, record_dir(o),      o->v.max_contacts, o->v.max_candidates};
  s->rows = fs_calloc(err, "the table", MAX_ROWS, sizeof(fsBenchRow));
  return s->rows ? EXIT_OK : EXIT_RUNTIME;
}

static int save(Session* s, fsError* err) {
  char path[4200];
  fsBenchMeta meta = {s->opt.command_line, s->opt.v.model, s->opt.v.targets,
                      s->in.nstep,         s->in.nwarmup,  s->in.repeats};
  snprintf(path, sizeof path, "%s/bench.csv", s->opt.out);
  if (fs_bench_write_csv(path, s->rows, s->nrow, err)) return -1;
  snprintf(path, sizeof path, "%s/bench.json", s->opt.out);
  if (fs_bench_write_json(path, s->rows, s->nrow, &meta, err)) return -1;
  printf("Saved %s/bench.csv and %s\n", s->opt.out, path);
  if (s->opt.plot) {
    if (fs_bench_plot(path, s->opt.out, err)) return -1;
    printf("Saved %s/throughput.png\n", s->opt.out);
  }
  return 0;
}

static void print_summary(const Session* s) {
  const fsBenchRow* best = NULL;
  for (int i = 0; i < s->nrow; i++)
    if (s->rows[i].ok && !s->rows[i].peer && (!best || s->rows[i].wsps_median > best->wsps_median))
      best = &s->rows[i];
  printf("summary points=%d failed=%d best_world_steps_per_s=%.6g best_stepper=%s "
         "best_worlds=%d interrupted=%d\n",
         s->nrow, s->failed, best ? best->wsps_median : 0, best ? best->stepper : "none",
         best ? best->p.nworld : 0, s->interrupted ? 1 : 0);
  fflush(stdout);
}

static int run(Session* s, fsError* err) {
  Options* o = &s->opt;
  int loaded = load(s, err);
  if (loaded != EXIT_OK) return loaded;
  if (o->out[0] && fs_make_dirs(o->out, "--out", err)) return EXIT_RUNTIME;
  printf("flysim %s, MuJoCo %s\n", fs_version_string(), mj_versionString());
  printf("model   %s, clip %s\n", o->v.model, o->v.targets);
  char bound[64] = "";
  if (o->v.max_contacts)
    snprintf(bound, sizeof bound, ", at most %d a world (host, cuda)", o->v.max_contacts);
  printf("bench   %d timed steps a repeat, %d repeats, %d warm-up steps before each; contacts "
         "%s%s\n\n",
         s->in.nstep, s->in.repeats, s->in.nwarmup,
         s->inputs.m->opt.disableflags & mjDSBL_CONTACT ? "off" : "on", bound);
  fs_bench_print_header(stdout);
  sweep_cpu(s);
  for (int b = 0; b < o->nbackend && !s->interrupted; b++) {
    if (o->backend[b] != FS_BACKEND_CUDA) continue;
    for (int k = 0; k < o->v.nprecision && !s->interrupted; k++)
      for (int g = 0; g < o->ngraph && !s->interrupted; g++)
        for (int rec = 0; rec < o->nrecord && !s->interrupted; rec++) {
          fsBenchPoint p = {FS_BACKEND_CUDA, o->v.precision[k], o->graph[g], 0, o->record[rec]};
          sweep_worlds(s, &p);
        }
  }
  if (o->peer[0] && !s->interrupted) run_peer(s);
  fs_bench_print_ratios(stdout, s->rows, s->nrow);
  fs_bench_print_record_cost(stdout, s->rows, s->nrow);
  int save_failed = o->out[0] && s->nrow && save(s, err);
  print_summary(s);
  if (save_failed) return EXIT_RUNTIME;
  if (s->interrupted) return EXIT_INTERRUPTED;
  if (s->failed) {
    fs_fail(err, "%d point%s failed (see the table)", s->failed, s->failed == 1 ? "" : "s");
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

int fs_cmd_bench(int argc, char** argv, const char* command_line) {
  Session* s = calloc(1, sizeof *s);
  if (!s) {
    fprintf(stderr, "flysim bench: error: out of memory\n");
    return EXIT_RUNTIME;
  }
  fsError err = {{0}, FS_OK};
  int rc = parse_options(argc, argv, &s->opt, &err), status = EXIT_OK;
  if (rc < 0) {
    fprintf(stderr, "flysim bench: %s\n", err.msg);
    status = EXIT_USAGE;
  } else if (rc == 0) {
    snprintf(s->opt.command_line, sizeof s->opt.command_line, "%s", command_line);
    fs_interrupt_install();
    fs_mujoco_install_hooks();
    // argv is main's argv + 1: the re-runs under nsys or ncu need the whole command
    if (s->opt.profile[0] && fs_nsys_reexec(argc + 1, argv - 1, s->opt.profile, &err))
      status = EXIT_RUNTIME;
    else if (s->opt.ncu[0] && !fs_ncu_guard_set())
      status = run_ncu(&s->opt, argc + 1, argv - 1, &err);
    else
      status = s->opt.lanes ? run_lanes(&s->opt, &err) : run(s, &err);
    if (status == EXIT_RUNTIME || status == EXIT_USAGE)
      fprintf(stderr, "flysim bench: error: %s\n", err.msg);
  }
  free(s->rows);
  fs_replay_inputs_free(&s->inputs);
  free(s);
  return status;
}
