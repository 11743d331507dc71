// `flysim replay`'s options (common/replay/options.h): its --help, its own options, and
// which of them go together.
#include "common/replay/options.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/inputs/inputs.h"
#include "common/replay/record.h"
#include "common/replay/replay.h"

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
         "                          timestep if it differs (default %s/walking_clip.h5);\n"
         "                          'sine': every actuator its own smooth sine within its\n"
         "                          control range (any model: docs/models.md)\n"
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

enum { OPT_BACKEND = 256, OPT_SAVE, OPT_PROFILE, OPT_PLOT_LEG, OPT_RECORD, OPT_RENDER_WORLDS };

// The outputs' options with a value (--plot-leg, --record, --render-worlds): 1 if c is
// one of them, -1 on a bad value, 0 otherwise.
static int parse_output_option(int c, const char* val, fsReplayOptions* o, fsError* err) {
  switch (c) {
  case OPT_PLOT_LEG:
    if (!val[0] || strlen(val) >= sizeof o->plot_leg || strpbrk(val, " /-_"))
      return fs_fail(err,
                     "--plot-leg: '%s' is not a leg name; fix: e.g. --plot-leg lf (lf lm "
                     "lh rf rm rh for NeuroMechFly)",
                     val);
    snprintf(o->plot_leg, sizeof o->plot_leg, "%s", val);
    return 1;
  case OPT_RECORD:
    o->record_set = 1;
    return fs_record_parse(val, &o->record, err) ? -1 : 1;
  case OPT_RENDER_WORLDS:
    o->render_worlds_set = 1;
    return fs_parse_count("--render-worlds", val, 1024, &o->render_worlds, err) ? -1 : 1;
  default:
    return 0;
  }
}

// One of replay's own options (fsVerb.one).
static int parse_one(int c, const char* val, void* arg, fsError* err) {
  fsReplayOptions* o = arg;
  int handled = parse_output_option(c, val, o, err);
  if (handled) return handled < 0 ? -1 : 0;
  switch (c) {
  case OPT_BACKEND:
    if (fs_parse_backend_name(val, &o->backend))
      return fs_fail(err, "--backend: '%s' is not a backend; fix: --backend cpu, cuda or host",
                     val);
    return 0;
  case OPT_SAVE:
    return fs_copy_path_option("--save-data", val, o->save_data, sizeof o->save_data, err);
  case OPT_PROFILE:
    return fs_copy_path_option("--profile", val, o->profile, sizeof o->profile, err);
  default:
    return fs_fail(err, "internal: flysim replay: option %d", c);
  }
}

// Options that only make sense together, or only on one backend.
static int check_combinations(fsReplayOptions* o, fsError* err) {
  if (fs_verb_check_flysim_options(&o->v, o->backend != FS_BACKEND_CPU,
                                   "add --backend cuda or --backend host", err))
    return -1;
  o->precision = o->v.nprecision ? o->v.precision[0] : 32;
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
  int nworld = o->v.worlds;
  if (o->render_worlds_set && o->render_worlds > nworld)
    return fs_fail(err,
                   "--render-worlds %d is more than the %d world%s of the run (--worlds %d); "
                   "fix: --render-worlds at most --worlds (e.g. --render-worlds %d), or "
                   "--worlds %d",
                   o->render_worlds, nworld, nworld == 1 ? "" : "s", nworld, nworld,
                   o->render_worlds);
  return 0;
}

int fs_parse_replay_options(int argc, char** argv, fsReplayOptions* o, fsError* err) {
  const struct option own[] = {{"backend", required_argument, NULL, OPT_BACKEND},
                               {"save-data", required_argument, NULL, OPT_SAVE},
                               {"profile", required_argument, NULL, OPT_PROFILE},
                               {"mujoco-timing", no_argument, &o->mujoco_timing, 1},
                               {"no-video", no_argument, &o->video, 0},
                               {"no-plots", no_argument, &o->plots, 0},
                               {"plot-leg", required_argument, NULL, OPT_PLOT_LEG},
                               {"record", required_argument, NULL, OPT_RECORD},
                               {"render-worlds", required_argument, NULL, OPT_RENDER_WORLDS},
                               {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  fs_verb_options_init(&o->v);
  o->backend = FS_BACKEND_CPU;
  o->video = 1;
  o->plots = 1;
  o->record = FS_RECORD_REPLAY_DEFAULT;
  o->render_worlds = 9;
  const fsVerb verb = {.name = "replay",
                       .takes = FS_VERB_ALL,
                       .max_worlds = 1L << 24,
                       .max_steps = FS_REPLAY_MAX_STEPS,
                       .own = own,
                       .one = parse_one,
                       .arg = o,
                       .help = fs_print_replay_help};
  int rc = fs_parse_verb(argc, argv, &verb, &o->v, err);
  return rc ? rc : check_combinations(o, err);
}
