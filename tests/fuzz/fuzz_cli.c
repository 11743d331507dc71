// The verbs' command lines (common/cli/verb_options.c, common/replay/options.c) under
// mutated argument lists: each input is one argument a line. Every input is parsed twice:
// as `flysim replay`'s arguments (every shared option and replay's own) and as those of
// a verb shaped as generate and bench are (a positional argument, a precision list, a
// flag and an option of its own). Accepted options must hold values in their ranges; a
// refusal must name an argument the input gave and say a fix (or point at --help).
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/cli/verb_options.h"
#include "common/replay/options.h"
#include "common/replay/record.h"
#include "common/replay/replay.h"
#include "tests/fuzz/fuzz.h"

enum { MAX_ARGS = 64 };

static int g_devnull = -1;

static int setup(void (*add)(const unsigned char*, size_t)) {
  (void)add;
  g_devnull = open("/dev/null", O_WRONLY);
  return g_devnull >= 0 ? 0 : -1;
}

// The message names something the input gave (an argument; an option as given before its
// '='; an unknown short option, '-c', of a cluster), and says a fix or where the help is.
static int clear(const char* msg, char** argv, int argc) {
  int named = 0;
  for (int i = 1; i < argc && !named; i++) {
    const char* a = argv[i];
    size_t len = strcspn(a, "=");
    char head[256];
    snprintf(head, sizeof head, "%.*s", (int)(len < 255 ? len : 255), a);
    named = strstr(msg, a) != NULL || (len > 0 && strstr(msg, head) != NULL);
    if (a[0] == '-' && a[1] != '-')
      for (const char* c = a + 1; *c && !named; c++) {
        char opt[5] = {'\'', '-', *c, '\'', 0};
        named = strstr(msg, opt) != NULL;
      }
  }
  if (!named) {
    fprintf(stderr, "fuzz_cli: the message names no argument given: %s\n", msg);
    return 0;
  }
  return fs_fuzz_clear_message(msg, "");
}

static int check_shared(const fsVerbOptions* v, long max_worlds, long max_steps) {
  int ok =
      v->worlds >= 1 && v->worlds <= max_worlds && v->threads >= 0 && v->threads <= 4096 &&
      (v->sim_steps == -1 || (v->sim_steps >= 1 && v->sim_steps <= max_steps)) &&
      (v->sim_duration_sec == -1 || (v->sim_duration_sec > 0 && isfinite(v->sim_duration_sec))) &&
      v->warmup_sec >= 0 && isfinite(v->warmup_sec) && v->max_contacts >= 0 &&
      v->max_candidates >= 0 && v->nprecision >= 0 && v->nprecision <= 2 &&
      memchr(v->model, 0, sizeof v->model) && v->model[0] &&
      memchr(v->targets, 0, sizeof v->targets) && v->targets[0];
  for (int k = 0; ok && k < v->nprecision; k++) ok = v->precision[k] == 32 || v->precision[k] == 64;
  if (!ok) fprintf(stderr, "fuzz_cli: accepted options out of their ranges\n");
  return ok;
}

// A verb shaped as generate (SPEC) and bench (--precision f32,f64) are.
typedef struct Own {
  int flag, level;
} Own;

static int own_one(int code, const char* val, void* arg, fsError* err) {
  Own* o = arg;
  if (code != 300) return fs_fail(err, "internal: option %d", code);
  return fs_parse_count("--level", val, 9, &o->level, err);
}

static void no_help(void) {}

static int parse_other(int argc, char** argv, fsError* err, int* rc) {
  Own own = {0, 0};
  char spec[64] = "";
  const struct option opts[] = {
      {"flag", no_argument, &own.flag, 1}, {"level", required_argument, NULL, 300}, {0, 0, 0, 0}};
  const fsVerb verb = {.name = "other",
                       .takes = FS_VERB_ALL & ~FS_VERB_MODEL,
                       .max_worlds = 1000,
                       .max_steps = 1000000,
                       .precision_list = 1,
                       .own = opts,
                       .one = own_one,
                       .arg = &own,
                       .help = no_help,
                       .positional = spec,
                       .positional_size = sizeof spec};
  fsVerbOptions v;
  fs_verb_options_init(&v);
  *rc = fs_parse_verb(argc, argv, &verb, &v, err);
  if (*rc != 0) return 1;
  return check_shared(&v, 1000, 1000000) && own.level >= 0 && own.level <= 9 &&
         memchr(spec, 0, sizeof spec);
}

static int one(const unsigned char* data, size_t n) {
  static char text[1 << 16];
  if (n >= sizeof text) n = sizeof text - 1;
  memcpy(text, data, n);
  text[n] = 0;
  char* args[2][MAX_ARGS + 1];
  int argc = 1;
  args[0][0] = args[1][0] = "replay";
  for (char *p = text, *save = NULL, *tok; argc < MAX_ARGS && (tok = strtok_r(p, "\n", &save));
       p = NULL) {
    args[0][argc] = args[1][argc] = tok;
    argc++;
  }
  args[0][argc] = args[1][argc] = NULL;
  char* given[MAX_ARGS + 1]; // getopt permutes argv: the messages are checked against a copy
  memcpy(given, args[0], sizeof given);

  fflush(stdout); // --help prints to stdout: not into the test's log
  int saved = dup(STDOUT_FILENO);
  dup2(g_devnull, STDOUT_FILENO);
  fsReplayOptions o;
  fsError err = {{0}, FS_OK}, err2 = {{0}, FS_OK};
  int rc = fs_parse_replay_options(argc, args[0], &o, &err), rc2;
  int other_ok = parse_other(argc, args[1], &err2, &rc2);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);

  int verdict = rc == 0 || rc == 1 ? FS_FUZZ_ACCEPTED : FS_FUZZ_REFUSED;
  if (rc == 0 &&
      !(check_shared(&o.v, 1L << 24, FS_REPLAY_MAX_STEPS) && o.render_worlds >= 1 &&
        (!o.render_worlds_set || o.render_worlds <= o.v.worlds) &&
        (o.precision == 32 || o.precision == 64) && memchr(o.save_data, 0, sizeof o.save_data) &&
        memchr(o.profile, 0, sizeof o.profile)))
    verdict = FS_FUZZ_BAD;
  if (rc < 0 && !clear(err.msg, given, argc)) verdict = FS_FUZZ_BAD;
  if (rc2 < 0 && !clear(err2.msg, given, argc)) verdict = FS_FUZZ_BAD;
  if (rc2 == 0 && !other_ok) verdict = FS_FUZZ_BAD;
  if (rc != 0 && rc != 1 && rc != -1) verdict = FS_FUZZ_BAD;
  return verdict;
}

const fsFuzzTarget fs_fuzz_target = {
    "fuzz_cli", 20261203u, 100000, "-=,.:0123456789eE+x \n\nabcdefghilmnoprstuvwxyz", setup, one};
