#include "common/inputs/inputs.h"
#include "common/replay/options.h"

#include "common/replay/record.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mujoco/mujoco.h>

void fs_print_replay_help(void) {
  printf("usage: flysim replay [options]\n"
         "\n"
         "Replay recorded fly walking through the model's position actuators in many\n"
         "worlds at once, and report throughput (world-steps/s and x realtime).\n"
         "Defaults replay NeuroMechFly (exported from FlyGym by scripts/setup.sh) on its\n"
         "recorded walking clip, like FlyGym's scripts/replay_behavior_cpu.py.\n"
         "\n"
         "options:\n"
         "  --backend cpu|cuda|host stepper: MuJoCo's mj_step on CPU threads (default cpu),\n"
         "                          flysim's kernels on a GPU, or their stage code on CPU\n"
         "                          threads (host: what the GPU computes, without a GPU)\n"
         "  --precision f32|f64     cuda, host: the stepper's real (default f32; f64 is\n"
         "                          MuJoCo's precision at about half the GPU's float32 rate)\n"
         "  --model PATH            MJCF (.xml) or MJB (.mjb) model\n"
         "                          (default %s/mesh.mjb)\n"
         "  --world NAME            one of FlyGym's worlds as exported (instead of --model):\n"
         "                          flat (the default), tethered (TetheredWorld: the thorax\n"
         "                          held by a mocap body, the legs free), gapped, blocks,\n"
         "                          mixed (FlyGym's rough terrains: box ground), and their\n"
         "                          capsule variants flat_capsule, tethered_capsule, ...\n"
         "  --targets PATH          HDF5 targets: /targets (T x A, rad), /dof_names (A),\n"
         "                          attribute timestep; resampled (cubic) to the model's\n"
         "                          timestep if it differs (default %s/walking_clip.h5)\n"
         "  --worlds N              worlds stepped together (default 1); world w replays\n"
         "                          the clip from row (w mod floor(T/S)) x S\n"
         "  --threads N             CPU threads (default: one per core, at most N worlds)\n"
         "  --sim-duration-sec S    simulated seconds (default: half the clip, as FlyGym)\n"
         "  --sim-steps N           simulated steps (instead of --sim-duration-sec)\n"
         "  --warmup-sec S          settling steps at the neutral pose before the clock\n"
         "                          starts, not recorded (default 0.05, as FlyGym)\n"
         "  --save-data DIR         write DIR/replay.h5: every world's series (--record),\n"
         "                          streamed as the run goes; then plots (world 0's\n"
         "                          joint_angle_tracking.png|pdf: target vs simulated angles\n"
         "                          of one leg; pose_over_time.png|pdf; every world's\n"
         "                          tracking_error.png|pdf: median and spread per DoF), the\n"
         "                          grid video DIR/grid.mp4 of --render-worlds worlds, each\n"
         "                          from its tracking camera, rendered after the run from the\n"
         "                          recorded states (cpu with one world: replay.mp4 alone)\n"
         "                          and, cpu, world 0's video rendered inside the loop as\n"
         "                          FlyGym does (DIR/replay.mp4); videos 320x240 a world,\n"
         "                          25 fps at 0.2x speed (FlyGym's); MuJoCo's renderer,\n"
         "                          headless EGL, ffmpeg\n",
         fs_assets_dir(), fs_assets_dir());
  printf(
      "  --record LIST           with --save-data: series recorded for every world, comma-\n"
      "                          separated: angles (T x N x J joint angles), targets\n"
      "                          (T x N x A), forces (T x N x A actuator forces), sites\n"
      "                          (T x N x 3P site positions), thorax (T x N x 3) -- the\n"
      "                          default --; orientation (the thorax's quaternion), qpos,\n"
      "                          qvel, adhesion (adhesion forces), iterations (the\n"
      "                          solver's), legs (each leg's contact force); or all, none\n"
      "  --render-worlds K       with --save-data: worlds 0..K-1 in the grid video\n"
      "                          (at most --worlds; default 9, as FlyGym's GPU script,\n"
      "                          or every world if fewer)\n"
      "  --no-video              with --save-data: skip the videos (replay.mp4 costs loop\n"
      "                          time; grid.mp4 costs time after the loop)\n"
      "  --no-plots              with --save-data: skip the plots (data only)\n"
      "  --plot-leg LEG          leg of the joint-angle plot: lf lm lh rf rm rh (default lf;\n"
      "                          a model's legs are named by its joints, e.g. l_knee -> l)\n"
      "  --mujoco-timing         cpu: after the run, print MuJoCo's per-phase timers\n"
      "                          (mjData.timer through mjcb_time, zeroed after the warm-up;\n"
      "                          summed over worlds and threads; with --save-data also in\n"
      "                          /mujoco_timing). The callback adds overhead: read the\n"
      "                          table as a relative breakdown\n"
      "  --profile PATH          cpu, host: sample the timed loop with Linux perf (native stacks\n"
      "                          through DWARF unwinding, MuJoCo's frames included) and\n"
      "                          write PATH: speedscope JSON if PATH ends in .json, else\n"
      "                          perf script text; open either at https://www.speedscope.app\n"
      "                          cuda: re-run under Nsight Systems (nsys profile\n"
      "                          --cuda-graph-trace=node), writing PATH.nsys-rep\n"
      "  --disable NAME          switch off a MuJoCo feature for both backends, as the\n"
      "                          model's <flag NAME=\"disable\"/> would (repeatable;\n"
      "                          e.g. contact, gravity, spring, damper, "
      "actuation)\n" FS_MAX_CONTACTS_HELP "  --quiet                 no progress line\n"
      "  -h, --help              this text\n");
  printf("\n"
         "The last line printed is a summary a script can parse (key=value pairs).\n"
         "Exit status: 0 success, 1 run-time error, 2 usage error, 130 interrupted\n"
         "(Ctrl-C: the run stops after the current step and the file keeps every\n"
         "completed step; a second Ctrl-C kills at once).\n"
         "Environment: FLYSIM_ASSETS overrides the assets folder; FLYSIM_PERF,\n"
         "FLYSIM_PERF_FREQ (999), FLYSIM_PERF_CALL_GRAPH (dwarf,16384) and\n"
         "FLYSIM_PERF_KEEP_DATA=1 tune --profile (cpu); FLYSIM_FFMPEG, FLYSIM_EGL_PLATFORM\n"
         "(device|surfaceless|default) and FLYSIM_EGL_DEVICE (or MUJOCO_EGL_DEVICE_ID) the\n"
         "video; FLYSIM_PYTHON and FLYSIM_PLOT_SCRIPT the plots (default: the venv's python\n"
         "and scripts/plot_replay.py, found at build time).\n");
}

int fs_parse_positive_int(const char* opt, const char* s, long max, long* out, fsError* err) {
  char* end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < 1 || v > max)
    return fs_fail(err, "%s: '%s' is not an integer in [1, %ld]; fix: e.g. %s 64", opt, s, max,
                   opt);
  *out = v;
  return 0;
}

int fs_parse_seconds(const char* opt, const char* s, int allow_zero, double* out, fsError* err) {
  char* end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v) || v < 0 || (!allow_zero && v == 0))
    return fs_fail(err, "%s: '%s' is not a %s number of seconds; fix: e.g. %s 0.5", opt, s,
                   allow_zero ? "non-negative" : "positive", opt);
  *out = v;
  return 0;
}

int fs_parse_max_contacts(const char* s, int* out, fsError* err) {
  long v = 0;
  if (fs_parse_positive_int("--max-contacts", s, 1L << 20, &v, err)) return -1;
  *out = (int)v;
  return 0;
}

int fs_parse_max_candidates(const char* s, int* out, fsError* err) {
  long v = 0;
  if (fs_parse_positive_int("--max-candidates", s, 1L << 24, &v, err)) return -1;
  *out = (int)v;
  return 0;
}

int fs_copy_path_option(const char* opt, const char* s, char* out, size_t n, fsError* err) {
  if (!s[0]) return fs_fail(err, "%s: empty path", opt);
  if (strlen(s) >= n) return fs_fail(err, "%s: path longer than %zu characters", opt, n - 1);
  memcpy(out, s, strlen(s) + 1);
  return 0;
}

int fs_parse_disable(const char* s, int* mask, fsError* err) {
  int flag = fs_disable_flag(s);
  if (!flag) {
    char all[1024];
    fs_disable_names((1 << mjNDISABLE) - 1, all, sizeof all);
    return fs_fail(err, "--disable: '%s' is not a MuJoCo disable flag; fix: one of %s", s, all);
  }
  *mask |= flag;
  return 0;
}

int fs_parse_positive_double(const char* opt, const char* s, double* out, fsError* err) {
  char* end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v) || v <= 0)
    return fs_fail(err, "%s: '%s' is not a positive number; fix: e.g. %s 3", opt, s, opt);
  *out = v;
  return 0;
}

int fs_parse_verb_options(int argc, char** argv, const char* verb, const struct option* longopts,
                          void (*help)(void), int (*one)(int c, void* arg, fsError* err), void* arg,
                          fsError* err) {
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c == 'h') {
      help();
      return 1;
    }
    if (c == ':')
      return fs_fail(err, "%s needs a value; see flysim %s --help", argv[optind - 1], verb);
    if (c == '?')
      return fs_fail(err, "unknown option '%s'; see flysim %s --help", argv[optind - 1], verb);
    if (one(c, arg, err)) return -1;
  }
  if (optind < argc)
    return fs_fail(err, "unexpected argument '%s'; see flysim %s --help", argv[optind], verb);
  return 0;
}

void fs_join_command_line(int argc, char** argv, char* out, size_t n) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < argc && used + 1 < n; i++) {
    int quote = strpbrk(argv[i], " \t\"'") != NULL || !argv[i][0];
    int k = snprintf(out + used, n - used, "%s%s%s%s", i ? " " : "", quote ? "'" : "", argv[i],
                     quote ? "'" : "");
    if (k < 0) break;
    used += (size_t)k;
  }
}

int fs_disable_flag(const char* name) {
  for (int i = 0; i < mjNDISABLE; i++)
    if (!strcasecmp(name, mjDISABLESTRING[i])) return 1 << i;
  return 0;
}

void fs_disable_names(int mask, char* out, size_t n) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < mjNDISABLE && used + 1 < n; i++)
    if (mask & (1 << i)) {
      int k = snprintf(out + used, n - used, "%s%s", used ? "," : "", mjDISABLESTRING[i]);
      if (k < 0) break;
      used += (size_t)k;
    }
  for (char* p = out; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
}

enum {
  OPT_BACKEND = 256,
  OPT_PRECISION,
  OPT_MODEL,
  OPT_WORLD,
  OPT_TARGETS,
  OPT_WORLDS,
  OPT_THREADS,
  OPT_DURATION,
  OPT_STEPS,
  OPT_WARMUP,
  OPT_SAVE,
  OPT_PROFILE,
  OPT_DISABLE,
  OPT_QUIET,
  OPT_TIMING,
  OPT_NO_VIDEO,
  OPT_NO_PLOTS,
  OPT_PLOT_LEG,
  OPT_RECORD,
  OPT_RENDER_WORLDS,
  OPT_MAX_CONTACTS,
  OPT_MAX_CANDIDATES
};

// The outputs' options (--mujoco-timing, --no-video, --no-plots, --plot-leg): 1 if c
// is one of them, -1 on a bad value, 0 otherwise.
static int parse_output_option(int c, fsReplayOptions* o, fsError* err) {
  switch (c) {
  case OPT_TIMING:
    o->mujoco_timing = 1;
    return 1;
  case OPT_NO_VIDEO:
    o->video = 0;
    return 1;
  case OPT_NO_PLOTS:
    o->plots = 0;
    return 1;
  case OPT_PLOT_LEG:
    if (!optarg[0] || strlen(optarg) >= sizeof o->plot_leg || strpbrk(optarg, " /-_"))
      return fs_fail(err,
                     "--plot-leg: '%s' is not a leg name; fix: e.g. --plot-leg lf (lf lm "
                     "lh rf rm rh for NeuroMechFly)",
                     optarg);
    snprintf(o->plot_leg, sizeof o->plot_leg, "%s", optarg);
    return 1;
  case OPT_RECORD:
    o->record_set = 1;
    return fs_record_parse(optarg, &o->record, err) ? -1 : 1;
  case OPT_RENDER_WORLDS: {
    long k = 0;
    if (fs_parse_positive_int("--render-worlds", optarg, 1024, &k, err)) return -1;
    o->render_worlds = (int)k;
    o->render_worlds_set = 1;
    return 1;
  }
  default:
    return 0;
  }
}

// Options that only make sense together, or only on one backend.
static int check_combinations(fsReplayOptions* o, fsError* err) {
  if (o->precision && o->backend == FS_BACKEND_CPU)
    return fs_fail(err, "--precision chooses flysim's stepper's real; the cpu backend is "
                        "MuJoCo's own mj_step in float64; fix: drop --precision, or add "
                        "--backend cuda or --backend host");
  if (!o->precision) o->precision = 32;
  if (o->max_contacts && o->backend == FS_BACKEND_CPU)
    return fs_fail(err, "--max-contacts bounds the buffers of flysim's stepper; the cpu backend "
                        "is MuJoCo's own mj_step, whose arena grows with the contacts; fix: drop "
                        "--max-contacts, or add --backend cuda or --backend host");
  if (o->max_candidates && o->backend == FS_BACKEND_CPU)
    return fs_fail(err, "--max-candidates bounds the pairs flysim's stepper tests; the cpu "
                        "backend is MuJoCo's own mj_step, which tests every pair; fix: drop "
                        "--max-candidates, or add --backend cuda or --backend host");
  if (o->mujoco_timing && o->backend != FS_BACKEND_CPU)
    return fs_fail(err, "--mujoco-timing: MuJoCo's timers time MuJoCo's own mj_step, which "
                        "only --backend cpu runs; fix: drop --mujoco-timing, or use --backend cpu "
                        "(for the GPU's stage times use --profile, Nsight Systems)");
  const char* needs_save = !o->video              ? "--no-video"
                           : !o->plots            ? "--no-plots"
                           : o->plot_leg[0]       ? "--plot-leg"
                           : o->record_set        ? "--record"
                           : o->render_worlds_set ? "--render-worlds"
                                                  : NULL;
  if (needs_save && !o->save_data[0])
    return fs_fail(err,
                   "%s only applies with --save-data DIR; fix: add --save-data DIR or drop "
                   "%s",
                   needs_save, needs_save);
  // The default (9) is capped at --worlds; a K given is what the user asked to see.
  if (o->render_worlds_set && o->render_worlds > o->worlds)
    return fs_fail(err,
                   "--render-worlds %d is more than the %d world%s of the run (--worlds %d); "
                   "fix: --render-worlds at most --worlds (e.g. --render-worlds %d), or "
                   "--worlds %d",
                   o->render_worlds, o->worlds, o->worlds == 1 ? "" : "s", o->worlds, o->worlds,
                   o->render_worlds);
  return 0;
}

int fs_parse_replay_options(int argc, char** argv, fsReplayOptions* o, fsError* err) {
  static const struct option longopts[] = {
      {"backend", required_argument, NULL, OPT_BACKEND},
      {"precision", required_argument, NULL, OPT_PRECISION},
      {"model", required_argument, NULL, OPT_MODEL},
      {"world", required_argument, NULL, OPT_WORLD},
      {"targets", required_argument, NULL, OPT_TARGETS},
      {"worlds", required_argument, NULL, OPT_WORLDS},
      {"threads", required_argument, NULL, OPT_THREADS},
      {"sim-duration-sec", required_argument, NULL, OPT_DURATION},
      {"sim-steps", required_argument, NULL, OPT_STEPS},
      {"warmup-sec", required_argument, NULL, OPT_WARMUP},
      {"save-data", required_argument, NULL, OPT_SAVE},
      {"profile", required_argument, NULL, OPT_PROFILE},
      {"disable", required_argument, NULL, OPT_DISABLE},
      {"quiet", no_argument, NULL, OPT_QUIET},
      {"mujoco-timing", no_argument, NULL, OPT_TIMING},
      {"no-video", no_argument, NULL, OPT_NO_VIDEO},
      {"no-plots", no_argument, NULL, OPT_NO_PLOTS},
      {"plot-leg", required_argument, NULL, OPT_PLOT_LEG},
      {"record", required_argument, NULL, OPT_RECORD},
      {"render-worlds", required_argument, NULL, OPT_RENDER_WORLDS},
      {"max-contacts", required_argument, NULL, OPT_MAX_CONTACTS},
      {"max-candidates", required_argument, NULL, OPT_MAX_CANDIDATES},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  o->backend = FS_BACKEND_CPU;
  o->precision = 0; // unset: 32 on cuda and host
  o->worlds = 1;
  o->threads = 0;
  o->sim_duration_sec = -1;
  o->sim_steps = -1;
  o->warmup_sec = 0.05;
  o->video = 1;
  o->plots = 1;
  o->record = FS_RECORD_REPLAY_DEFAULT;
  o->render_worlds = 9;
  snprintf(o->model, sizeof o->model, "%s/mesh.mjb", fs_assets_dir());
  snprintf(o->targets, sizeof o->targets, "%s/walking_clip.h5", fs_assets_dir());

  long v = 0;
  int c, model_given = 0, world_given = 0;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    int handled = parse_output_option(c, o, err);
    if (handled < 0) return -1;
    if (handled) continue;
    switch (c) {
    case OPT_BACKEND:
      if (!strcmp(optarg, "cpu"))
        o->backend = FS_BACKEND_CPU;
      else if (!strcmp(optarg, "cuda"))
        o->backend = FS_BACKEND_CUDA;
      else if (!strcmp(optarg, "host"))
        o->backend = FS_BACKEND_HOST;
      else
        return fs_fail(err,
                       "--backend: '%s' is not a backend; fix: --backend cpu, cuda or "
                       "host",
                       optarg);
      break;
    case OPT_PRECISION:
      if (!strcmp(optarg, "f32") || !strcmp(optarg, "float32"))
        o->precision = 32;
      else if (!strcmp(optarg, "f64") || !strcmp(optarg, "float64"))
        o->precision = 64;
      else
        return fs_fail(err,
                       "--precision: '%s' is not a precision; fix: --precision f32 or "
                       "--precision f64",
                       optarg);
      break;
    case OPT_MODEL:
      if (world_given)
        return fs_fail(err, "--model and --world both name the model; fix: pass one of them");
      if (fs_copy_path_option("--model", optarg, o->model, sizeof o->model, err)) return -1;
      model_given = 1;
      break;
    case OPT_WORLD:
      if (model_given)
        return fs_fail(err, "--model and --world both name the model; fix: pass one of them");
      if (fs_world_model_path(optarg, o->model, sizeof o->model, err)) return -1;
      world_given = 1;
      break;
    case OPT_TARGETS:
      if (fs_copy_path_option("--targets", optarg, o->targets, sizeof o->targets, err)) return -1;
      break;
    case OPT_WORLDS:
      if (fs_parse_positive_int("--worlds", optarg, 1L << 24, &v, err)) return -1;
      o->worlds = (int)v;
      break;
    case OPT_THREADS:
      if (fs_parse_positive_int("--threads", optarg, 4096, &v, err)) return -1;
      o->threads = (int)v;
      break;
    case OPT_DURATION:
      if (fs_parse_seconds("--sim-duration-sec", optarg, 0, &o->sim_duration_sec, err)) return -1;
      break;
    case OPT_STEPS:
      if (fs_parse_positive_int("--sim-steps", optarg, 1L << 30, &o->sim_steps, err)) return -1;
      break;
    case OPT_WARMUP:
      if (fs_parse_seconds("--warmup-sec", optarg, 1, &o->warmup_sec, err)) return -1;
      break;
    case OPT_SAVE:
      if (fs_copy_path_option("--save-data", optarg, o->save_data, sizeof o->save_data, err))
        return -1;
      break;
    case OPT_PROFILE:
      if (fs_copy_path_option("--profile", optarg, o->profile, sizeof o->profile, err)) return -1;
      break;
    case OPT_DISABLE:
      if (fs_parse_disable(optarg, &o->disable, err)) return -1;
      break;
    case OPT_QUIET:
      o->quiet = 1;
      break;
    case OPT_MAX_CONTACTS:
      if (fs_parse_max_contacts(optarg, &o->max_contacts, err)) return -1;
      break;
    case OPT_MAX_CANDIDATES:
      if (fs_parse_max_candidates(optarg, &o->max_candidates, err)) return -1;
      break;
    case 'h':
      fs_print_replay_help();
      return 1;
    case ':':
      return fs_fail(err, "%s needs a value; see flysim replay --help", argv[optind - 1]);
    default:
      return fs_fail(err, "unknown option '%s'; see flysim replay --help", argv[optind - 1]);
    }
  }
  if (optind < argc)
    return fs_fail(err, "unexpected argument '%s'; see flysim replay --help", argv[optind]);
  if (o->sim_steps > 0 && o->sim_duration_sec > 0)
    return fs_fail(err, "--sim-steps and --sim-duration-sec both given; fix: pass one of them");
  return check_combinations(o, err);
}
