// Command-line options of `flysim replay` (all backends): the options every verb takes
// (common/cli/verb_options.h) and replay's own.
#ifndef FLYSIM_COMMON_REPLAY_OPTIONS_H
#define FLYSIM_COMMON_REPLAY_OPTIONS_H

#include "common/base/error.h"
#include "common/cli/verb_options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsReplayOptions {
  fsVerbOptions v;         // model, targets, worlds, threads, steps, warm-up, disable, bounds,
                           // quiet (--sim-duration-sec < 0: half the clip, as FlyGym)
  fsBackendKind backend;   // --backend
  int precision;           // the stepper's real: 32 (f32, default) or 64 (--precision f64)
  char save_data[4096];    // --save-data DIR ("" = nothing saved)
  char profile[4096];      // --profile PATH ("" = no profile)
  int mujoco_timing;       // --mujoco-timing: MuJoCo's per-phase timer table (cpu)
  int video;               // with --save-data: render the video (--no-video: 0)
  int plots;               // with --save-data: draw the plots (--no-plots: 0)
  char plot_leg[32];       // --plot-leg LEG ("" = lf, else the model's first leg)
  unsigned record;         // --record LIST: fsSeriesId bits (default: all)
  int record_set;          // --record was given
  int render_worlds;       // --render-worlds K: worlds in the grid video (default 9)
  int render_worlds_set;   // --render-worlds was given
  char command_line[8192]; // argv joined, for the HDF5 attributes
} fsReplayOptions;

/// Parse `flysim replay` arguments (argv[0] is "replay"). Returns 0 to run, 1 if
/// --help was printed, -1 on a usage error (message in err).
int fs_parse_replay_options(int argc, char** argv, fsReplayOptions* o, fsError* err);

/// Print `flysim replay --help` to stdout.
void fs_print_replay_help(void);

#ifdef __cplusplus
}
#endif
#endif
