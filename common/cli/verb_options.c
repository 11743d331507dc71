// The verbs' command lines (common/cli/verb_options.h).
#include "common/cli/verb_options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mujoco/mujoco.h>

#include "common/inputs/inputs.h"

enum {
  OPT_MODEL = FS_VERB_OPT_FIRST,
  OPT_WORLD,
  OPT_TARGETS,
  OPT_WORLDS,
  OPT_THREADS,
  OPT_STEPS,
  OPT_DURATION,
  OPT_WARMUP,
  OPT_DISABLE,
  OPT_MAX_CONTACTS,
  OPT_MAX_CANDIDATES,
  OPT_PRECISION,
  OPT_QUIET
};

// The shared options, each with the FS_VERB_* bit that brings it into a verb.
static const struct {
  struct option opt;
  unsigned bit;
} SHARED[] = {
    {{"model", required_argument, NULL, OPT_MODEL}, FS_VERB_MODEL},
    {{"world", required_argument, NULL, OPT_WORLD}, FS_VERB_MODEL},
    {{"targets", required_argument, NULL, OPT_TARGETS}, FS_VERB_TARGETS},
    {{"worlds", required_argument, NULL, OPT_WORLDS}, FS_VERB_WORLDS},
    {{"threads", required_argument, NULL, OPT_THREADS}, FS_VERB_THREADS},
    {{"sim-steps", required_argument, NULL, OPT_STEPS}, FS_VERB_STEPS},
    {{"sim-duration-sec", required_argument, NULL, OPT_DURATION}, FS_VERB_DURATION},
    {{"warmup-sec", required_argument, NULL, OPT_WARMUP}, FS_VERB_WARMUP},
    {{"disable", required_argument, NULL, OPT_DISABLE}, FS_VERB_DISABLE},
    {{"max-contacts", required_argument, NULL, OPT_MAX_CONTACTS}, FS_VERB_BOUNDS},
    {{"max-candidates", required_argument, NULL, OPT_MAX_CANDIDATES}, FS_VERB_BOUNDS},
    {{"precision", required_argument, NULL, OPT_PRECISION}, FS_VERB_PRECISION},
    {{"quiet", no_argument, NULL, OPT_QUIET}, FS_VERB_QUIET},
};

void fs_verb_options_init(fsVerbOptions* o) {
  memset(o, 0, sizeof *o);
  snprintf(o->model, sizeof o->model, "%s/mesh.mjb", fs_assets_dir());
  snprintf(o->targets, sizeof o->targets, "%s/walking_clip.h5", fs_assets_dir());
  o->worlds = 1;
  o->sim_steps = -1;
  o->sim_duration_sec = -1;
  o->warmup_sec = 0.05;
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

int fs_parse_count(const char* opt, const char* s, long max, int* out, fsError* err) {
  long v = 0;
  if (fs_parse_positive_int(opt, s, max, &v, err)) return -1;
  *out = (int)v;
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

int fs_parse_positive_double(const char* opt, const char* s, double* out, fsError* err) {
  char* end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v) || v <= 0)
    return fs_fail(err, "%s: '%s' is not a positive number; fix: e.g. %s 3", opt, s, opt);
  *out = v;
  return 0;
}

int fs_copy_path_option(const char* opt, const char* s, char* out, size_t n, fsError* err) {
  if (!s[0]) return fs_fail(err, "%s: empty path; fix: %s PATH, naming a file", opt, opt);
  if (strlen(s) >= n)
    return fs_fail(err,
                   "%s: path longer than %zu characters; fix: a shorter path (a relative "
                   "one, or a link to the file)",
                   opt, n - 1);
  memcpy(out, s, strlen(s) + 1);
  return 0;
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

int fs_parse_backend_name(const char* s, fsBackendKind* kind) {
  if (!strcmp(s, "cpu"))
    *kind = FS_BACKEND_CPU;
  else if (!strcmp(s, "cuda"))
    *kind = FS_BACKEND_CUDA;
  else if (!strcmp(s, "host"))
    *kind = FS_BACKEND_HOST;
  else
    return -1;
  return 0;
}

static int precision_bits(const char* s) {
  return !strcmp(s, "f32") || !strcmp(s, "float32")   ? 32
         : !strcmp(s, "f64") || !strcmp(s, "float64") ? 64
                                                      : 0;
}

// --precision: one value, or (list) up to two comma-separated.
static int parse_precision(const char* s, int list, fsVerbOptions* o, fsError* err) {
  const char* fix = list ? "--precision f32, --precision f64 or --precision f32,f64"
                         : "--precision f32 or --precision f64";
  o->nprecision = 0;
  if (!list) {
    if (!(o->precision[0] = precision_bits(s)))
      return fs_fail(err, "--precision: '%s' is not a precision; fix: %s", s, fix);
    o->nprecision = 1;
    return 0;
  }
  char buf[64], *save = NULL;
  snprintf(buf, sizeof buf, "%s", s);
  for (char* tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int bits = precision_bits(tok);
    if (!bits) return fs_fail(err, "--precision: '%s' is not a precision; fix: %s", tok, fix);
    if (o->nprecision == 2)
      return fs_fail(err, "--precision: '%s' lists more than the two precisions; fix: %s", s, fix);
    o->precision[o->nprecision++] = bits;
  }
  return o->nprecision ? 0 : fs_fail(err, "--precision: '%s' names no precision; fix: %s", s, fix);
}

// --model PATH or --world NAME: whichever comes second is refused.
static int parse_model(int code, const char* val, fsVerbOptions* o, fsError* err) {
  int which = code == OPT_WORLD ? 2 : 1;
  if (o->model_given & ~which)
    return fs_fail(err, "--model and --world both name the model; fix: pass one of them");
  o->model_given = which;
  if (code == OPT_MODEL) {
    o->world[0] = 0;
    return fs_copy_path_option("--model", val, o->model, sizeof o->model, err);
  }
  snprintf(o->world, sizeof o->world, "%s", val);
  return fs_world_model_path(val, o->model, sizeof o->model, err);
}

static int parse_shared(int code, const char* val, const fsVerb* verb, fsVerbOptions* o,
                        fsError* err) {
  switch (code) {
  case OPT_MODEL:
  case OPT_WORLD:
    return parse_model(code, val, o, err);
  case OPT_TARGETS:
    return fs_copy_path_option("--targets", val, o->targets, sizeof o->targets, err);
  case OPT_WORLDS:
    return fs_parse_count("--worlds", val, verb->max_worlds, &o->worlds, err);
  case OPT_THREADS:
    return fs_parse_count("--threads", val, 4096, &o->threads, err);
  case OPT_STEPS:
    return fs_parse_positive_int("--sim-steps", val, verb->max_steps, &o->sim_steps, err);
  case OPT_DURATION:
    return fs_parse_seconds("--sim-duration-sec", val, 0, &o->sim_duration_sec, err);
  case OPT_WARMUP:
    return fs_parse_seconds("--warmup-sec", val, 1, &o->warmup_sec, err);
  case OPT_DISABLE:
    return fs_parse_disable(val, &o->disable, err);
  case OPT_MAX_CONTACTS:
    return fs_parse_count("--max-contacts", val, 1L << 20, &o->max_contacts, err);
  case OPT_MAX_CANDIDATES:
    return fs_parse_count("--max-candidates", val, 1L << 24, &o->max_candidates, err);
  case OPT_PRECISION:
    return parse_precision(val, verb->precision_list, o, err);
  case OPT_QUIET:
    o->quiet = 1;
    return 0;
  default:
    return fs_fail(err, "internal: flysim %s: option %d", verb->name, code);
  }
}

// The one positional argument a verb may take (generate's SPEC).
static int parse_positional(const fsVerb* verb, const char* val, fsError* err) {
  if (!verb->positional || verb->positional[0])
    return fs_fail(err, "unexpected argument '%s'; see flysim %s --help", val, verb->name);
  if (strlen(val) >= verb->positional_size)
    return fs_fail(err, "'%s': longer than %zu characters; fix: a shorter path", val,
                   verb->positional_size - 1);
  memcpy(verb->positional, val, strlen(val) + 1);
  return 0;
}

// getopt's '?': a long option it does not know, or one of its flags given a value
// (--quiet=1), or a short option (not h) -- whose cluster ("-xy") may still be at optind,
// so that it is named by optopt alone.
static int fail_unknown(const char* arg, const struct option* all, const fsVerb* verb,
                        fsError* err) {
  if (strncmp(arg, "--", 2) != 0)
    return fs_fail(err, "unknown option '-%c'; see flysim %s --help", optopt, verb->name);
  size_t len = strcspn(arg + 2, "=");
  const struct option* match = NULL;
  int nmatch = 0;
  for (const struct option* p = all; p->name; p++)
    if (!strncmp(p->name, arg + 2, len)) {
      match = p;
      nmatch++;
      if (strlen(p->name) == len) { // an exact name wins over longer ones it begins
        nmatch = 1;
        break;
      }
    }
  if (nmatch == 1 && arg[2 + len] == '=' && match->has_arg == no_argument)
    return fs_fail(err, "--%s takes no value (given '%s'); fix: --%s alone", match->name, arg,
                   match->name);
  if (nmatch > 1)
    return fs_fail(err, "'%.*s' begins more than one option; see flysim %s --help", (int)(len + 2),
                   arg, verb->name);
  return fs_fail(err, "unknown option '%s'; see flysim %s --help", arg, verb->name);
}

int fs_parse_verb(int argc, char** argv, const fsVerb* verb, fsVerbOptions* o, fsError* err) {
  enum { MAX_OPTIONS = 64 };
  struct option all[MAX_OPTIONS];
  int n = 0;
  for (size_t i = 0; i < sizeof SHARED / sizeof *SHARED; i++)
    if (verb->takes & SHARED[i].bit) all[n++] = SHARED[i].opt;
  for (const struct option* p = verb->own; p && p->name; p++) {
    if (n == MAX_OPTIONS - 2 || (!p->flag && (p->val < 256 || p->val >= FS_VERB_OPT_FIRST)))
      return fs_fail(err, "internal: flysim %s's option --%s", verb->name, p->name);
    all[n++] = *p;
  }
  all[n++] = (struct option){"help", no_argument, NULL, 'h'};
  all[n] = (struct option){NULL, 0, NULL, 0};
  // "-": arguments in order, a positional one as code 1; ":": a missing value as ':'.
  // optind 0 starts getopt afresh.
  optind = 0;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "-:h", all, NULL)) != -1) {
    int rc;
    if (c == 'h') {
      verb->help();
      return 1;
    }
    if (c == ':')
      return fs_fail(err, "%s needs a value; see flysim %s --help", argv[optind - 1], verb->name);
    if (c == '?') return fail_unknown(argv[optind - 1], all, verb, err);
    if (c == 0) // a flag, set by getopt
      rc = 0;
    else if (c == 1)
      rc = parse_positional(verb, optarg, err);
    else if (c >= FS_VERB_OPT_FIRST)
      rc = parse_shared(c, optarg, verb, o, err);
    else
      rc = verb->one(c, optarg, verb->arg, err);
    if (rc) return -1;
  }
  for (; optind < argc; optind++) // after "--"
    if (parse_positional(verb, argv[optind], err)) return -1;
  if (o->sim_steps > 0 && o->sim_duration_sec > 0)
    return fs_fail(err, "--sim-steps and --sim-duration-sec both given; fix: pass one of them");
  return 0;
}

int fs_verb_check_flysim_options(const fsVerbOptions* o, int flysim_stepper, const char* fix,
                                 fsError* err) {
  if (flysim_stepper) return 0;
  if (o->nprecision)
    return fs_fail(err,
                   "--precision chooses flysim's stepper's real; the cpu backend is MuJoCo's own "
                   "mj_step in float64; fix: drop --precision, or %s",
                   fix);
  if (o->max_contacts)
    return fs_fail(err,
                   "--max-contacts bounds the buffers of flysim's stepper; the cpu backend is "
                   "MuJoCo's own mj_step, whose arena grows with the contacts; fix: drop "
                   "--max-contacts, or %s",
                   fix);
  if (o->max_candidates)
    return fs_fail(err,
                   "--max-candidates bounds the pairs flysim's stepper tests; the cpu backend is "
                   "MuJoCo's own mj_step, which tests every pair; fix: drop --max-candidates, or "
                   "%s",
                   fix);
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
