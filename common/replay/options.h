// Command-line options of `flysim replay` (all backends), and the option-value
// parsers the other verbs share.
#ifndef FLYSIM_COMMON_REPLAY_OPTIONS_H
#define FLYSIM_COMMON_REPLAY_OPTIONS_H

#include <stddef.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsReplayOptions {
  fsBackendKind backend;
  int precision;           // --precision (cuda, host): 32 (f32, default) or 64 (f64)
  char model[4096];        // --model (default: the exported NeuroMechFly MJB)
  char targets[4096];      // --targets (default: the exported walking clip)
  int worlds;              // --worlds
  int threads;             // --threads (0: one per core)
  double sim_duration_sec; // --sim-duration-sec (< 0: half the clip, as FlyGym)
  long sim_steps;          // --sim-steps (< 0: from the duration)
  double warmup_sec;       // --warmup-sec (FlyGym's Simulation.warmup: 0.05 s)
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
  int disable;             // --disable NAME: mjtDisableBit flags added to the model's
  int max_contacts;        // --max-contacts N (host, cuda): contacts a world holds (0: all)
  int max_candidates;      // --max-candidates N (host, cuda): candidate pairs (0: default)
  int quiet;               // --quiet: no progress line
  char command_line[8192]; // argv joined, for the HDF5 attributes
} fsReplayOptions;

/// Parse `flysim replay` arguments (argv[0] is "replay"). Returns 0 to run, 1 if
/// --help was printed, -1 on a usage error (message in err).
int fs_parse_replay_options(int argc, char** argv, fsReplayOptions* o, fsError* err);

/// Print `flysim replay --help` to stdout.
void fs_print_replay_help(void);

/// The mjtDisableBit named (case-insensitively) as in MuJoCo's mjDISABLESTRING
/// (e.g. "contact", "gravity"), or 0 if none is.
int fs_disable_flag(const char* name);

/// Names of the set bits of a disable mask, comma-separated, into out.
void fs_disable_names(int mask, char* out, size_t n);

/// Option values, shared by the verbs' parsers: each fails with a message naming the
/// option, the value and an example (usage errors).
int fs_parse_positive_int(const char* opt, const char* s, long max, long* out, fsError* err);
int fs_parse_seconds(const char* opt, const char* s, int allow_zero, double* out, fsError* err);
int fs_parse_positive_double(const char* opt, const char* s, double* out, fsError* err);
int fs_copy_path_option(const char* opt, const char* s, char* out, size_t n, fsError* err);
/// --disable NAME: the flag added to *mask.
int fs_parse_disable(const char* s, int* mask, fsError* err);
/// --max-contacts N: contacts a world of flysim's stepper holds (fsReplay.max_contacts).
int fs_parse_max_contacts(const char* s, int* out, fsError* err);
/// --max-candidates N: candidate pairs a world tests (fsReplay.max_candidates).
int fs_parse_max_candidates(const char* s, int* out, fsError* err);

/// --max-contacts in every verb's --help (two columns, as the verbs print theirs).
#define FS_MAX_CONTACTS_HELP                                                                       \
  "  --max-contacts N        host, cuda: a world holds N contacts and the rows they make\n"        \
  "                          (default: every pair's bound, which no world can exceed);\n"          \
  "                          memory per world scales with N. A world that makes more keeps\n"      \
  "                          the first N in MuJoCo's order and is a problem world (MuJoCo's\n"     \
  "                          CONTACTFULL warning). The cpu backend has no such bound\n"            \
  "  --max-candidates N      host, cuda, models whose pairs with static geoms are culled\n"        \
  "                          (FlyGym's terrains): a world tests at most N candidate pairs a\n"     \
  "                          step (default: those tested every step and 8 per moving geom);\n"     \
  "                          one with more keeps the first N and is a problem world\n"

struct option;

/// The getopt_long loop of a verb that parses one option at a time: -h/--help prints
/// help() and returns 1; a missing value, an unknown option or a stray argument is a
/// usage error pointing at `flysim <verb> --help`; every other option goes to one(c,
/// arg, err) (optarg set). Returns 0, 1 (help printed) or -1 (message in err).
int fs_parse_verb_options(int argc, char** argv, const char* verb, const struct option* longopts,
                          void (*help)(void), int (*one)(int c, void* arg, fsError* err), void* arg,
                          fsError* err);

/// Join argv into one shell-readable line.
void fs_join_command_line(int argc, char** argv, char* out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
