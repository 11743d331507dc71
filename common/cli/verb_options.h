// The verbs' command lines: the options every verb takes (model or world, targets, worlds,
// threads, steps, warm-up, disable flags, flysim's stepper's bounds, precision, quiet),
// parsed by one function with the same flags, defaults and messages in replay, compare,
// bench and generate; the option values' parsers; the getopt loop that hands a verb its
// own options.
#ifndef FLYSIM_COMMON_CLI_VERB_OPTIONS_H
#define FLYSIM_COMMON_CLI_VERB_OPTIONS_H

#include <stddef.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The shared options a verb takes (fsVerb.takes), each documented in that verb's --help.
enum {
  FS_VERB_MODEL = 1 << 0,     // --model PATH or --world NAME, not both
  FS_VERB_TARGETS = 1 << 1,   // --targets PATH
  FS_VERB_WORLDS = 1 << 2,    // --worlds N, one number (bench parses its list itself)
  FS_VERB_THREADS = 1 << 3,   // --threads N
  FS_VERB_STEPS = 1 << 4,     // --sim-steps N
  FS_VERB_DURATION = 1 << 5,  // --sim-duration-sec S, not with --sim-steps
  FS_VERB_WARMUP = 1 << 6,    // --warmup-sec S
  FS_VERB_DISABLE = 1 << 7,   // --disable NAME, repeatable
  FS_VERB_BOUNDS = 1 << 8,    // --max-contacts N, --max-candidates N (flysim's stepper)
  FS_VERB_PRECISION = 1 << 9, // --precision f32|f64 (flysim's stepper)
  FS_VERB_QUIET = 1 << 10,    // --quiet
  FS_VERB_ALL = (1 << 11) - 1 // every one of them (replay, compare)
};

/// The shared options' values. fs_verb_options_init sets the defaults every verb has; a
/// verb changes those it defaults otherwise before fs_parse_verb.
typedef struct fsVerbOptions {
  char model[4096];        // --model, or --world's file (default: the exported NeuroMechFly MJB)
  char world[64];          // --world NAME ("" without --world)
  char targets[4096];      // --targets (default: the exported walking clip)
  int worlds;              // --worlds N (default 1)
  int threads;             // --threads N (0: one per core)
  long sim_steps;          // --sim-steps N (-1: not given)
  double sim_duration_sec; // --sim-duration-sec S (-1: not given)
  double warmup_sec;       // --warmup-sec S (default 0.05 s, FlyGym's Simulation.warmup)
  int disable;             // --disable NAME: mjtDisableBit flags added to the model's
  int max_contacts;        // --max-contacts N: contacts a world holds (0: every pair's bound)
  int max_candidates;      // --max-candidates N: candidate pairs a world tests (0: default)
  int precision[2];        // --precision: 32 or 64, in the order given
  int nprecision;          // values in precision (0: not given, the verb's default)
  int quiet;               // --quiet: no progress line
  int model_given;         // --model given (1) or --world (2)
} fsVerbOptions;

struct option;

/// One verb's command line for fs_parse_verb.
typedef struct fsVerb {
  const char* name;         // "replay": its messages say `see flysim replay --help`
  unsigned takes;           // FS_VERB_* bits: the shared options it takes
  long max_worlds;          // the largest --worlds (FS_VERB_WORLDS)
  long max_steps;           // the largest --sim-steps (FS_VERB_STEPS)
  int precision_list;       // --precision takes a list (f32,f64) rather than one value
  const struct option* own; // its own long options: codes 256 to FS_VERB_OPT_FIRST - 1, or
                            // a flag (getopt sets *flag to val; one is not called)
  /// One of its own options (val: its value, NULL for a flag); 0 or -1 (message in err).
  int (*one)(int code, const char* val, void* arg, fsError* err);
  void* arg;          // passed to one
  void (*help)(void); // prints --help
  char* positional;   // where its one positional argument goes (NULL: it takes none)
  size_t positional_size;
} fsVerb;

/// The first option code of the shared options: a verb's own are below it.
enum { FS_VERB_OPT_FIRST = 0x1000 };

/// The defaults every verb starts from (the exported model and clip, 1 world, 0.05 s of
/// warm-up, nothing else given).
void fs_verb_options_init(fsVerbOptions* o);

/// Parse a verb's arguments (argv[0] is the verb): the shared options it takes into o,
/// its own through verb->one. -h/--help prints verb->help and returns 1; a missing value,
/// an unknown option or a stray argument is a usage error pointing at `flysim <verb>
/// --help`. Returns 0 to run, 1 after --help, -1 on a usage error (message in err).
int fs_parse_verb(int argc, char** argv, const fsVerb* verb, fsVerbOptions* o, fsError* err);

/// Refuse what only flysim's steppers (host, cuda) read -- --precision, --max-contacts,
/// --max-candidates -- when a run has none of them (flysim_stepper 0): the cpu backend is
/// MuJoCo's own mj_step. fix: how the verb adds one (e.g. "add --backend cuda or
/// --backend host"). 0, or -1 with the message in err.
int fs_verb_check_flysim_options(const fsVerbOptions* o, int flysim_stepper, const char* fix,
                                 fsError* err);

/// A backend's name (cpu, cuda, host) as its kind; -1 if it names none.
int fs_parse_backend_name(const char* s, fsBackendKind* kind);

/// The mjtDisableBit named (case-insensitively) as in MuJoCo's mjDISABLESTRING
/// (e.g. "contact", "gravity"), or 0 if none is.
int fs_disable_flag(const char* name);

/// Names of the set bits of a disable mask, comma-separated, into out.
void fs_disable_names(int mask, char* out, size_t n);

/// Option values: each fails with a message naming the option, the value and an example.
int fs_parse_positive_int(const char* opt, const char* s, long max, long* out, fsError* err);
/// fs_parse_positive_int into an int (max at most INT_MAX).
int fs_parse_count(const char* opt, const char* s, long max, int* out, fsError* err);
int fs_parse_seconds(const char* opt, const char* s, int allow_zero, double* out, fsError* err);
int fs_parse_positive_double(const char* opt, const char* s, double* out, fsError* err);
int fs_copy_path_option(const char* opt, const char* s, char* out, size_t n, fsError* err);
/// --disable NAME (and generate's spec key): the flag added to *mask.
int fs_parse_disable(const char* s, int* mask, fsError* err);

/// --max-contacts and --max-candidates in every verb's --help (two columns, as the verbs
/// print theirs).
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

/// Join argv into one shell-readable line.
void fs_join_command_line(int argc, char** argv, char* out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
