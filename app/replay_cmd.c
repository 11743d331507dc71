#include "app/replay_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys/files.h"
#include "common/sys/interrupt.h"
#include "common/inputs/model.h"
#include "common/base/mujoco_hooks.h"
#include "common/profiling/mujoco_timing.h"
#include "common/replay/options.h"
#include "common/profiling/perf_phases.h"
#include "common/profiling/perf_profile.h"
#include "common/outputs/plots.h"
#include "common/replay/replay.h"
#include "common/replay/replay_io.h"
#include "common/outputs/replay_outputs.h"
#include "common/inputs/resample.h"
#include "common/inputs/targets.h"
#include "common/profiling/profile_nsys.h"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

// Steps to replay: --sim-steps, else --sim-duration-sec (numpy.arange's count, as FlyGym),
// else half the clip. An error (-1) when the duration takes more steps than a run may.
static long replay_steps(const fsReplayOptions* o, const fsTargets* t, fsError* err) {
  if (o->v.sim_steps > 0) return o->v.sim_steps;
  double duration =
      o->v.sim_duration_sec > 0 ? o->v.sim_duration_sec : 0.5 * t->nstep * t->timestep;
  int bound;
  if (fs_steps_of_seconds("--sim-duration-sec", duration, t->timestep, FS_REPLAY_MAX_STEPS, &bound,
                          err))
    return -1;
  return fs_resample_count(1, duration, t->timestep);
}

// The stepper's real: MuJoCo's double on the CPU, --precision for flysim's stepper.
static const char* precision_name(const fsReplayOptions* o) {
  return o->backend != FS_BACKEND_CPU && o->precision == 32 ? "f32" : "f64";
}

typedef struct Session {
  fsReplayOptions opt;
  fsReplayInputs inputs; // model, clip, binding
  fsReplay plan;
  fsReplayBatch rb;
  fsWorldStatus* status; // (N) every world's health after the run
  fsRecorder* rec;
  fsOutputs* outputs; // --save-data: world 0's pose and video
  fsPerf* perf;       // --profile (cpu)
  fsMjTiming timing;  // --mujoco-timing, summed after the run
  char plot_leg[32];  // the leg plotted (--plot-leg, resolved)
  int output_failed;  // a video, plot or profile error (data saved): exit 1
  int dir_lock;       // --save-data: the folder held for this run (fs_lock_dir), else -1
} Session;

static void session_free(Session* s) {
  fs_perf_abort(s->perf);
  if (s->rec) fs_replay_recorder_close(s->rec, &s->plan, NULL, "not run", NULL);
  fs_outputs_free(s->outputs);
  free(s->status);
  fs_replay_close(&s->rb);
  fs_replay_plan_free(&s->plan);
  fs_replay_inputs_free(&s->inputs);
  if (s->dir_lock >= 0) close(s->dir_lock); // last: after the file, the plots and the videos
  s->dir_lock = -1;
}

// Load the model and targets, bind them and plan the run. Returns an exit status.
static int prepare(Session* s, fsError* err) {
  fsReplayOptions* o = &s->opt;
  if (fs_replay_inputs_load(o->v.model, o->v.targets, o->v.disable, &s->inputs, err))
    return fs_interrupted() ? EXIT_INTERRUPTED : EXIT_RUNTIME;
  long nstep = replay_steps(o, &s->inputs.targets, err);
  int nwarmup;
  if (nstep < 0 || fs_steps_of_seconds("--warmup-sec", o->v.warmup_sec, s->inputs.m->opt.timestep,
                                       FS_REPLAY_MAX_STEPS, &nwarmup, err))
    return EXIT_USAGE;
  if (fs_replay_plan(&s->plan, s->inputs.m, o->v.model, &s->inputs.targets, &s->inputs.bind,
                     o->v.worlds, (int)nstep, nwarmup, err))
    return EXIT_USAGE;
  s->plan.max_contacts = o->v.max_contacts;
  s->plan.max_candidates = o->v.max_candidates;
  // Recorded with --save-data; the grid video's worlds (cpu with one world: its
  // replay.mp4 already shows it).
  int grid = o->save_data[0] && o->video && (o->backend != FS_BACKEND_CPU || o->v.worlds > 1);
  if (o->save_data[0] &&
      fs_replay_set_record(&s->plan, o->record, grid ? o->render_worlds : 0, err))
    return EXIT_RUNTIME;
  return EXIT_OK;
}

static void print_header(const Session* s) {
  const mjModel* m = s->inputs.m;
  const fsTargets* t = &s->inputs.targets;
  printf("flysim %s, MuJoCo %s\n", fs_version_string(), mj_versionString());
  printf("model   %s (nbody %ld, njnt %ld, nq %ld, nv %ld, nu %ld, ngeom %ld, npair %ld)\n",
         s->opt.v.model, (long)m->nbody, (long)m->njnt, (long)m->nq, (long)m->nv, (long)m->nu,
         (long)m->ngeom, (long)m->npair);
  if (s->opt.v.disable) {
    char names[1024];
    fs_disable_names(s->opt.v.disable, names, sizeof names);
    printf("        disabled by --disable: %s\n", names);
  }
  printf("targets %s (%d DoFs, %d steps at %g s", s->opt.v.targets, t->ndof, t->nstep, t->timestep);
  if (fabs(t->source_timestep - t->timestep) > 1e-15)
    printf(", resampled from %g s", t->source_timestep);
  printf(")\n");
  int npos = fs_position_actuators(s->inputs.m); // the sine drives every actuator: no note
  if (s->inputs.bind.nact < npos)
    printf("note    the clip drives %d of the model's %d position actuators; the others keep "
           "the keyframe's controls\n",
           s->inputs.bind.nact, npos);
  printf("replay  %d world%s x %d steps (%.4g s simulated, %d warm-up steps) on %s: %s\n",
         s->plan.nworld, s->plan.nworld == 1 ? "" : "s", s->plan.nstep,
         s->plan.nstep * m->opt.timestep, s->plan.nwarmup, fs_backend_name(s->rb.info.backend),
         s->rb.info.description);
  fflush(stdout);
}

// The timed loop's edges: zero MuJoCo's timers, switch perf's sampling on / off.
static int on_timed_start(void* arg, fsError* err) {
  Session* s = arg;
  if (s->opt.mujoco_timing)
    for (int w = 0; w < s->plan.nworld; w++) fs_mjtiming_zero(fs_batch_mjdata(s->rb.b, w));
  return s->perf ? fs_perf_enable(s->perf, err) : 0;
}

static int on_timed_end(void* arg, fsError* err) {
  Session* s = arg;
  return s->perf ? fs_perf_disable(s->perf, err) : 0;
}

// /mujoco_timing, /pose and /plots into the replay file before it closes.
static int write_extras(void* arg, hid_t file, const char* path, long long nstep, fsError* err) {
  Session* s = arg;
  if (s->opt.mujoco_timing && fs_mjtiming_write_h5(&s->timing, file, path, err)) return -1;
  return s->outputs ? fs_outputs_write_h5(s->outputs, file, path, nstep, err) : 0;
}

// A problem with an output (video, plots, profile) that leaves the data saved:
// reported now, and the run exits 1 at the end.
static void output_error(Session* s, const char* what, const fsError* e) {
  fprintf(stderr, "flysim replay: error: %s: %s\n", what, e->msg);
  fflush(stderr);
  s->output_failed = 1;
}

// Whether the replay's figures track angles: angles and targets recorded, and a column of
// the clip that drives a recorded joint (a position servo's).
static int tracks(const Session* s) {
  const int* ncol = s->plan.rec.ncol;
  return ncol[FS_SERIES_QPOS_JOINT] && ncol[FS_SERIES_TARGET] &&
         fs_replay_tracked_columns(s->plan.bind) > 0;
}

// --save-data: the folder and the outputs (pose, tracking error, the grid's states,
// cpu: world 0's video), then (after ffmpeg started, so that perf does not follow it)
// perf, then the HDF5 file.
static int open_outputs(Session* s, int block, char* h5path, size_t n, fsError* err) {
  fsReplayOptions* o = &s->opt;
  int cpu = o->backend == FS_BACKEND_CPU;
  if (o->save_data[0]) {
    if (fs_make_dirs(o->save_data, "--save-data", err) ||
        (s->dir_lock = fs_lock_dir(o->save_data, "--save-data", err)) < 0)
      return EXIT_RUNTIME;
    char stale[4200];
    struct stat st;
    snprintf(stale, sizeof stale, "%s/replay.h5.repack", o->save_data);
    if (lstat(stale, &st) == 0) // h5repack's copy: its run was killed while compressing
      printf("note    %s: a compressed copy an earlier run left unfinished (it was killed "
             "while compressing); removed\n",
             stale);
    int replaced = fs_outputs_clear(o->save_data, err);
    if (replaced < 0) return EXIT_RUNTIME;
    if (replaced)
      printf("note    %s: the %d files of an earlier run replaced\n", o->save_data, replaced);
    const int* ncol = s->plan.rec.ncol;
    int tracking = tracks(s);
    fsOutputsSpec spec = {&s->plan,
                          o->save_data,
                          o->plots && ncol[FS_SERIES_SITE_POS] > 0,
                          o->plots && tracking,
                          s->plan.nrender > 0,
                          cpu && o->video,
                          tracking ? s->plot_leg : ""};
    s->outputs = fs_outputs_create(&spec, err);
    if (!s->outputs) return EXIT_RUNTIME;
    const char* verr = fs_outputs_video_error(s->outputs);
    if (verr) {
      fsError e;
      snprintf(e.msg, sizeof e.msg, "%s (the run goes on and saves its data; exit status 1)", verr);
      output_error(s, "video", &e);
    } else if (o->video && cpu) {
      printf("video   %s\n", fs_outputs_describe(s->outputs));
    }
    if (s->plan.nrender > 0) {
      int cols, rows;
      fs_grid_shape(s->plan.nrender, &cols, &rows);
      printf("video   %s/grid.mp4: worlds 0-%d in a %dx%d grid of their tracking cameras, "
             "rendered after the run from their recorded states\n",
             o->save_data, s->plan.nrender - 1, cols, rows);
    }
    char rec[128];
    fs_record_names(s->plan.rec.mask, rec, sizeof rec);
    printf("record  %s for every world\n", rec);
  }
  if (o->profile[0] && o->backend != FS_BACKEND_CUDA) {
    s->perf = fs_perf_start(o->profile, err);
    if (!s->perf) return EXIT_RUNTIME;
    printf("profile perf record on this process (pid %d), sampling only the timed loop -> %s\n",
           (int)getpid(), o->profile);
  }
  if (o->mujoco_timing) fs_mjtiming_install();
  if (o->save_data[0]) {
    snprintf(h5path, n, "%s/replay.h5", o->save_data);
    fsReplayMeta meta = {fs_backend_name(s->rb.info.backend), precision_name(o), o->command_line,
                         s->rb.info.nthread};
    s->rec = fs_replay_recorder_open(&s->plan, h5path, block, &meta, err);
    if (!s->rec) return EXIT_RUNTIME;
  }
  fflush(stdout);
  return EXIT_OK;
}

// After the loop: the profile, the timing table, the HDF5 file, the video, the plots.
static int finish_outputs(Session* s, const fsRunResult* res, const char* reason,
                          const char* h5path, fsError* close_err) {
  fsPerfResult prof;
  int profiled = 0;
  if (s->perf) {
    fsError e;
    fsPerf* p = s->perf;
    s->perf = NULL;
    profiled = fs_perf_finish(p, stdout, &prof, &e) == 0;
    if (!profiled) output_error(s, "profile", &e);
  }
  if (s->opt.mujoco_timing) {
    fs_mjtiming_uninstall();
    for (int w = 0; w < s->plan.nworld; w++)
      fs_mjtiming_add(&s->timing, fs_batch_mjdata(s->rb.b, w));
    fs_mjtiming_print(&s->timing, stdout);
    if (profiled) fs_perf_phase_print(&s->timing, prof.phase_share, prof.step_samples, stdout);
  }
  long long saved = s->rec ? fs_recorder_steps(s->rec) : 0;
  int close_failed = fs_replay_recorder_close_with(s->rec, &s->plan, s->status, reason,
                                                   write_extras, s, close_err);
  s->rec = NULL;
  if (h5path[0] && !close_failed && saved == res->steps)
    printf("Saved %s (%lld steps)\n", h5path, saved);
  else if (h5path[0] && !close_failed)
    printf("Saved %s (%lld of the %lld steps run)\n", h5path, saved, res->steps);
  // A Ctrl-C after the run (in the compression, which it stops, or the video's end): the
  // file is kept as it is, and the grid video and the plots are not made.
  int cut = !res->interrupted && fs_interrupted();
  if (s->outputs) {
    fsError e;
    if (fs_outputs_close_video(s->outputs, res->steps, stdout, &e) < 0)
      output_error(s, "video", &e);
    fflush(stdout);
    cut = cut || (!res->interrupted && fs_interrupted());
    if (!cut && fs_outputs_render_grid(s->outputs, stdout, &e)) output_error(s, "grid video", &e);
  }
  const int* ncol = s->plan.rec.ncol;
  int tracking = tracks(s);
  if (cut) {
    // no plots
  } else if (h5path[0] && !close_failed && s->opt.plots && saved > 0 && !tracking &&
             !ncol[FS_SERIES_SITE_POS]) {
    printf("No plots: they need angles and targets (tracking) or sites (pose) in --record\n");
  } else if (h5path[0] && !close_failed && s->opt.plots && saved > 0) { // (a full disk: none)
    fsError e;
    if (fs_plots_run(h5path, s->opt.save_data, &e)) {
      output_error(s, "plots", &e);
    } else {
      if (tracking && s->plot_leg[0])
        printf("Saved %s/joint_angle_tracking.png|pdf (leg %s, world 0)\n", s->opt.save_data,
               s->plot_leg);
      if (tracking)
        printf("Saved %s/tracking_error.png|pdf (%d world%s)\n", s->opt.save_data, s->plan.nworld,
               s->plan.nworld == 1 ? "" : "s");
      if (ncol[FS_SERIES_SITE_POS]) printf("Saved %s/pose_over_time.png|pdf\n", s->opt.save_data);
    }
  }
  return close_failed;
}

static int run(Session* s, fsError* err) {
  fsReplayOptions* o = &s->opt;
  // --save-data naming a file: said now, not after the model, the backend and a header.
  if (o->save_data[0] && fs_check_dirs(o->save_data, "--save-data", err)) return EXIT_RUNTIME;
  int status = prepare(s, err);
  if (status != EXIT_OK) return status;
  if (o->save_data[0] && o->plots &&
      fs_plot_leg_resolve(&s->inputs.bind, o->v.model, o->plot_leg, s->plot_leg, sizeof s->plot_leg,
                          err))
    return EXIT_USAGE;
  if (fs_replay_open(&s->plan, o->backend, o->precision, o->v.threads, &s->rb, err))
    return EXIT_RUNTIME;
  const char* backend = fs_backend_name(s->rb.info.backend);
  print_header(s);

  int block = fs_replay_block_steps(s->plan.nworld, s->plan.nstep);
  char h5path[4200] = "";
  status = open_outputs(s, block, h5path, sizeof h5path, err);
  if (status != EXIT_OK) return status;

  char label[64];
  snprintf(label, sizeof label, "flysim %s", backend);
  fsRunHooks hooks = {on_timed_start, on_timed_end, s};
  int video0 = s->outputs && o->backend == FS_BACKEND_CPU && o->video; // world 0's replay.mp4
  fsRunOptions ropt = {s->rec,
                       block,
                       !o->v.quiet && isatty(STDERR_FILENO),
                       label,
                       &hooks,
                       s->outputs ? fs_outputs_block : NULL,
                       s->outputs,
                       video0 ? fs_outputs_next_frame : NULL,
                       video0 ? fs_outputs_frame : NULL,
                       s->outputs};
  fsRunResult res;
  fsError run_err = {{0}, FS_OK};
  int failed = fs_replay_run(&s->plan, &s->rb, &ropt, &res, &run_err);
  s->status = fs_calloc(err, "world health", (size_t)s->plan.nworld, sizeof *s->status);
  if (!s->status) return EXIT_RUNTIME;
  fsError health_err;
  if (fs_replay_health(&s->plan, &s->rb, s->status, &health_err) && !failed) {
    failed = 1; // (after a failed run the batch may not answer: its error is the run's)
    run_err = health_err;
  }
  res.problem_worlds = fs_replay_report_worlds(&s->plan, s->status, 20);
  res.peak_contacts = fs_replay_peak_contacts(&s->plan, s->status);

  char reason[1200];
  if (failed)
    snprintf(reason, sizeof reason, "error: %.1100s", run_err.msg);
  else if (res.interrupted)
    snprintf(reason, sizeof reason, "interrupted by signal %d after %lld steps", res.interrupted,
             res.steps);
  else
    snprintf(reason, sizeof reason, "completed");
  printf("Replayed %lld steps x %d world%s in %.3f s: %.4g world-steps/s, %.3gx realtime%s\n",
         res.steps, s->plan.nworld, s->plan.nworld == 1 ? "" : "s", res.wall_s,
         res.world_steps_per_s, res.realtime, res.interrupted ? " (interrupted)" : "");
  printf("Contacts: at most %d in a world's step, warm-up included (what --max-contacts must "
         "hold: host and cuda)\n",
         res.peak_contacts);
  fflush(stdout);
  fsError close_err = {{0}, FS_OK};
  int close_failed = finish_outputs(s, &res, reason, h5path, &close_err);
  int cut = !res.interrupted && fs_interrupted(); // in the outputs, after the run
  if (cut) res.interrupted = fs_interrupted();

  printf("summary backend=%s precision=%s worlds=%d threads=%d steps=%lld wall_s=%.6f "
         "world_steps_per_s=%.6g realtime_x=%.6g peak_contacts=%d problem_worlds=%d "
         "interrupted=%d\n",
         backend, precision_name(&s->opt), s->plan.nworld, s->rb.info.nthread, res.steps,
         res.wall_s, res.world_steps_per_s, res.realtime, res.peak_contacts, res.problem_worlds,
         res.interrupted ? 1 : 0);
  fflush(stdout);
  if (failed && close_failed) { // both said: the run's stop, then why the file ends as it does
    fprintf(stderr, "flysim replay: error: %s\n", run_err.msg);
    *err = close_err;
    return EXIT_RUNTIME;
  }
  if (failed) {
    *err = run_err;
    return EXIT_RUNTIME;
  }
  if (close_failed) {
    *err = close_err;
    return EXIT_RUNTIME;
  }
  if (cut) {
    snprintf(
        err->msg, sizeof err->msg,
        "interrupted by signal %d after the run, while writing its outputs: %.3800s holds every "
        "step; what was left to make (its compression, the grid video, the plots) was not "
        "made",
        res.interrupted, h5path[0] ? h5path : "nothing saved");
    return EXIT_INTERRUPTED;
  }
  if (s->output_failed) {
    snprintf(err->msg, sizeof err->msg,
             "some outputs failed (see the errors above); the data "
             "are saved");
    return EXIT_RUNTIME;
  }
  return res.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
}

// --profile: the CUDA backend re-runs itself under nsys (which returns here only
// when already under it); for the CPU backend, check now, before anything is
// loaded, that perf can sample this process (the sampling itself starts in run()).
static int start_profile(Session* s, int argc, char** argv, fsError* err) {
  if (!s->opt.profile[0]) return EXIT_OK;
  if (s->opt.backend == FS_BACKEND_CUDA)
    return fs_nsys_reexec(argc, argv, s->opt.profile, err) ? EXIT_RUNTIME : EXIT_OK;
  return fs_perf_probe(s->opt.profile, err) ? EXIT_RUNTIME : EXIT_OK;
}

int fs_cmd_replay(int argc, char** argv, const char* command_line) {
  Session s;
  memset(&s, 0, sizeof s);
  s.dir_lock = -1;
  fsError err = {{0}, FS_OK};
  int rc = fs_parse_replay_options(argc, argv, &s.opt, &err);
  if (rc == 1) return EXIT_OK;
  if (rc < 0) {
    fprintf(stderr, "flysim replay: %s\n", err.msg);
    return EXIT_USAGE;
  }
  snprintf(s.opt.command_line, sizeof s.opt.command_line, "%s", command_line);
  // argv is main's argv + 1: the re-exec under nsys needs the whole command.
  int status = start_profile(&s, argc + 1, argv - 1, &err);
  if (status != EXIT_OK) {
    fprintf(stderr, "flysim replay: %s\n", err.msg);
    return status;
  }
  fs_interrupt_install();
  fs_mujoco_install_hooks();
  status = run(&s, &err);
  if (status != EXIT_OK && status != EXIT_INTERRUPTED)
    fprintf(stderr, "flysim replay: error: %s\n", err.msg);
  else if (status == EXIT_INTERRUPTED && err.msg[0]) // before the run, or in its outputs
    fprintf(stderr, "flysim replay: %s\n", err.msg);
  session_free(&s);
  return status;
}
