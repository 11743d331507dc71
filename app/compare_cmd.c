// flysim compare: options, inputs, the three steppers, the report and the exit status
// (the comparison itself: compare/compare.h; the file and plot: compare/compare_io.h;
// --stages: compare/stage_check.h).
#include "app/compare_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/inputs/inputs.h"
#include "common/sys/files.h"
#include "common/recorder/h5util.h"
#include "common/sys/interrupt.h"
#include "common/inputs/model.h"
#include "common/base/mujoco_hooks.h"
#include "common/cli/verb_options.h"
#include "common/replay/replay_io.h"
#include "common/inputs/targets.h"
#include "compare/compare.h"
#include "compare/compare_io.h"
#include "compare/report.h"
#include "compare/stage_check.h"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_FAILED = 3, EXIT_INTERRUPTED = 130 };

#define COMPARE_MAX_STEPS (1L << 26) // --sim-steps, --sim-duration-sec, --warmup-sec

//---------------------------------- options -------------------------------------------------------

typedef struct Side {
  fsBackendKind kind;
  int bits; // 32 or 64; 0: --precision's
} Side;

typedef struct Options {
  fsVerbOptions v; // model, targets, worlds, threads, steps, warm-up, disable, bounds, quiet;
                   // --precision: the real of flysim's steppers without a :f32 / :f64
  Side side[2];
  int backends_given;
  char model_b[4096], targets_b[4096];
  int stages, plot;
  int floor_mode; // -1: from B's precision
  int floor_runs; // 0: from the floor
  double max_ratio, threshold[FS_CMP_NTHRESH];
  char save[4096];
  char command_line[8192];
} Options;

static void print_help(void) {
  printf("usage: flysim compare [options]\n"
         "\n"
         "Run the same worlds (model, flags, initial states, targets, clip rows) on two\n"
         "steppers in lockstep and report how far B's joint angles drift from A's, against\n"
         "the floor: A run again with its state perturbed at float size, i.e. how far\n"
         "MuJoCo's own sensitivity explains a difference. Defaults compare NeuroMechFly's\n"
         "walking replay (contacts, adhesion, noslip) on the CPU (MuJoCo) and the GPU.\n"
         "\n"
         "options:\n"
         "  --backends A,B          steppers: cpu (MuJoCo's mj_step), cuda (flysim on the\n"
         "                          GPU), host (flysim's stage code on CPU threads), each\n"
         "                          optionally :f32 or :f64 (default cpu,cuda; cpu,host\n"
         "                          where there is no GPU, and it says so)\n"
         "  --precision f32|f64     real of cuda and host without a suffix (default f32)\n"
         "  --model PATH            model of both (default %s/mesh.mjb)\n"
         "  --world NAME            one of FlyGym's worlds as exported, for both (instead of\n"
         "                          --model): flat, tethered, gapped, blocks, mixed, and\n"
         "                          their capsule variants (flat_capsule, ...)\n"
         "  --model-b PATH          B's model instead (same joints and actuators), e.g. the\n"
         "                          MJCF against the MJB\n"
         "  --targets PATH          clip of both (default %s/walking_clip.h5); 'sine':\n"
         "                          every actuator its own smooth sine (any model)\n"
         "  --targets-b PATH        B's clip instead (same length and rate)\n"
         "  --worlds N              worlds (default 4); world w starts at clip row\n"
         "                          (w mod floor(T/S)) x S, as flysim replay\n"
         "  --threads N             CPU threads per CPU stepper (default: one per core)\n"
         "  --sim-steps N           steps compared (default 2000: 0.2 s)\n"
         "  --sim-duration-sec S    simulated seconds instead\n"
         "  --warmup-sec S          warm-up before step 0, as flysim replay (default 0.05)\n"
         "  --disable NAME          a MuJoCo disable flag for both (repeatable)\n",
         fs_assets_dir(), fs_assets_dir());
  fputs(FS_MAX_CONTACTS_HELP, stdout);
  printf("  --floor ulp|f32|f32-step\n"
         "                          the floor run: A's state moved one ulp of A's real at\n"
         "                          the start of the warm-up (ulp), rounded to float32 there\n"
         "                          (f32), or A with its model and clip rounded to float32\n"
         "                          and its state before every step, the warm-up's included\n"
         "                          (f32-step: what holding them in float32 does, the least\n"
         "                          error of a float32 stepper); a float32 A moves one\n"
         "                          float32 ulp instead of rounding (default: ulp when B is\n"
         "                          float64, f32-step when float32). The floor starts where\n"
         "                          B does: B's arithmetic differs from the first warm-up\n"
         "                          step, and what the warm-up amplifies (a landing) counts\n"
         "                          in both\n"
         "  --floor-runs K          the floor runs K copies of every world (1-64; default 4\n"
         "                          when B is float32, 1 when float64): the first perturbed\n"
         "                          as --floor says, the others at random (a float32\n"
         "                          rounding stochastic, up or down with the odds of the\n"
         "                          distance, as Monte Carlo arithmetic models float32\n"
         "                          arithmetic; an ulp in directions of their own); the\n"
         "                          floor's |dq| in a world is the largest over its copies.\n"
         "                          Rounding to nearest loses what moves less than half an\n"
         "                          ulp a step, as a float32 stepper does; the random copies\n"
         "                          carry float32 arithmetic's independent errors and the\n"
         "                          contact events they set off\n"
         "  --max-ratio R           bound on the ratio to the floor: the geometric mean over\n"
         "                          worlds and steps of B's |dq| over the floor's (default 3)\n"
         "  --angle-threshold RAD   report the first step where max |dq| exceeds it\n"
         "                          (default 1e-3)\n"
         "  --thorax-threshold L    ... where the thorax positions differ by more (model\n"
         "                          length; default 1e-3 mm)\n"
         "  --stages                also check every stage of flysim's stepper (B, or A\n"
         "                          when B is cpu) for one step from MuJoCo's states, every\n"
         "                          field of every world, against the tests' bounds (every\n"
         "                          contact slot, whatever --max-contacts says)\n"
         "  --save DIR              write DIR/compare.h5 (every series, the per-world table,\n"
         "                          the stage check, command line, versions) and\n"
         "                          DIR/divergence.png\n"
         "  --no-plot               with --save: no divergence.png\n"
         "  --quiet                 no progress line\n"
         "  -h, --help              this text\n"
         "\n"
         "Exit status: 0 within the bounds, 3 outside them (B's max |dq| over the floor's\n"
         "above --max-ratio, problem worlds on B that A has not, or a stage beyond its\n"
         "bound), 1 error, 2 usage error, 130 interrupted (what was compared is reported\n"
         "and saved). The last line is a key=value summary.\n"
         "Environment: FLYSIM_PERTURB_PASSIVE=x scales the host stepper's joint and tendon\n"
         "stiffness and damping and fluid density and viscosity by (1 + x),\n"
         "FLYSIM_PERTURB_ROWS=limits reverses its joint ranges, =frictionloss drops its\n"
         "friction loss, =friction scales its contact friction by 1.001, =margin drops its\n"
         "contact margins, =moving makes its contacts between moving bodies frictionless,\n"
         "=islands leaves the islands of the trees its contacts join apart, =tendon\n"
         "scales its fixed tendons' coefficients by 1.001 and =tendonrows reverses its\n"
         "tendons' ranges and drops their friction loss, FLYSIM_PERTURB_STEP=euler\n"
         "steps RK4 models with Euler, =act scales activations' time constants by 1.001:\n"
         "deliberately broken steppers, which the comparison must catch.\n");
}

// "cpu", "host:f64", ... into s.
static int parse_side(const char* text, size_t len, Side* s, fsError* err) {
  char name[32];
  if (len >= sizeof name) len = sizeof name - 1;
  memcpy(name, text, len);
  name[len] = 0;
  char* colon = strchr(name, ':');
  s->bits = 0;
  if (colon) {
    *colon = 0;
    if (!strcmp(colon + 1, "f32"))
      s->bits = 32;
    else if (!strcmp(colon + 1, "f64"))
      s->bits = 64;
    else
      return fs_fail(err, "--backends: '%s' is not a precision; fix: :f32 or :f64", colon + 1);
  }
  if (fs_parse_backend_name(name, &s->kind))
    return fs_fail(err,
                   "--backends: '%s' is not a backend; fix: two of cpu, cuda, host, e.g. "
                   "--backends cpu,host",
                   name);
  if (s->kind == FS_BACKEND_CPU && s->bits == 32)
    return fs_fail(err, "--backends: cpu is MuJoCo's mj_step in float64; fix: cpu or cpu:f64");
  return 0;
}

static int parse_backends(const char* s, Options* o, fsError* err) {
  const char* comma = strchr(s, ',');
  if (!comma || strchr(comma + 1, ','))
    return fs_fail(err, "--backends: '%s' is not two backends; fix: e.g. --backends cpu,host", s);
  if (parse_side(s, (size_t)(comma - s), &o->side[0], err) ||
      parse_side(comma + 1, strlen(comma + 1), &o->side[1], err))
    return -1;
  o->backends_given = 1;
  return 0;
}

static int parse_floor(const char* s, Options* o, fsError* err) {
  for (int m = 0; m < FS_FLOOR_NMODE; m++)
    if (!strcmp(s, fs_floor_name((fsFloorMode)m))) {
      o->floor_mode = m;
      return 0;
    }
  return fs_fail(err, "--floor: '%s' is not a floor; fix: --floor ulp, f32 or f32-step", s);
}

enum {
  OPT_BACKENDS = 256,
  OPT_MODEL_B,
  OPT_TARGETS_B,
  OPT_FLOOR,
  OPT_FLOOR_RUNS,
  OPT_MAX_RATIO,
  OPT_ANGLE,
  OPT_THORAX,
  OPT_SAVE
};

// One of compare's own options (fsVerb.one).
static int parse_one(int c, const char* val, void* arg, fsError* err) {
  Options* o = arg;
  switch (c) {
  case OPT_BACKENDS:
    return parse_backends(val, o, err);
  case OPT_MODEL_B:
    return fs_copy_path_option("--model-b", val, o->model_b, sizeof o->model_b, err);
  case OPT_TARGETS_B:
    return fs_copy_path_option("--targets-b", val, o->targets_b, sizeof o->targets_b, err);
  case OPT_FLOOR:
    return parse_floor(val, o, err);
  case OPT_FLOOR_RUNS:
    return fs_parse_count("--floor-runs", val, 64, &o->floor_runs, err);
  case OPT_MAX_RATIO:
    return fs_parse_positive_double("--max-ratio", val, &o->max_ratio, err);
  case OPT_ANGLE:
    return fs_parse_positive_double("--angle-threshold", val, &o->threshold[FS_CMP_ANGLE], err);
  case OPT_THORAX:
    return fs_parse_positive_double("--thorax-threshold", val, &o->threshold[FS_CMP_THORAX], err);
  case OPT_SAVE:
    return fs_copy_path_option("--save", val, o->save, sizeof o->save, err);
  default:
    return fs_fail(err, "internal: flysim compare: option %d", c);
  }
}

// 0 to run, 1 after --help, -1 on a usage error.
static int parse_options(int argc, char** argv, Options* o, fsError* err) {
  const struct option own[] = {{"backends", required_argument, NULL, OPT_BACKENDS},
                               {"model-b", required_argument, NULL, OPT_MODEL_B},
                               {"targets-b", required_argument, NULL, OPT_TARGETS_B},
                               {"floor", required_argument, NULL, OPT_FLOOR},
                               {"floor-runs", required_argument, NULL, OPT_FLOOR_RUNS},
                               {"max-ratio", required_argument, NULL, OPT_MAX_RATIO},
                               {"angle-threshold", required_argument, NULL, OPT_ANGLE},
                               {"thorax-threshold", required_argument, NULL, OPT_THORAX},
                               {"stages", no_argument, &o->stages, 1},
                               {"save", required_argument, NULL, OPT_SAVE},
                               {"no-plot", no_argument, &o->plot, 0},
                               {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  fs_verb_options_init(&o->v);
  o->v.worlds = 4;
  o->side[0] = (Side){FS_BACKEND_CPU, 0};
  o->side[1] = (Side){(fs_backend_available(FS_BACKEND_CUDA, NULL) == FS_OK) ? FS_BACKEND_CUDA
                                                                             : FS_BACKEND_HOST,
                      0};
  o->floor_mode = -1;
  o->max_ratio = 0; // from B's precision
  o->threshold[FS_CMP_ANGLE] = 1e-3;
  o->threshold[FS_CMP_THORAX] = 1e-3;
  o->threshold[FS_CMP_CONTACTS] = 0;
  o->plot = 1;
  const fsVerb verb = {.name = "compare",
                       .takes = FS_VERB_ALL,
                       .max_worlds = 1L << 20,
                       .max_steps = COMPARE_MAX_STEPS,
                       .own = own,
                       .one = parse_one,
                       .arg = o,
                       .help = print_help};
  int rc = fs_parse_verb(argc, argv, &verb, &o->v, err);
  if (rc) return rc;
  if (!o->plot && !o->save[0])
    return fs_fail(err, "--no-plot only applies with --save DIR; fix: add --save DIR or drop it");
  int flysim = o->side[0].kind != FS_BACKEND_CPU || o->side[1].kind != FS_BACKEND_CPU;
  if (fs_verb_check_flysim_options(&o->v, flysim,
                                   "compare with host or cuda (e.g. --backends cpu,host)", err))
    return -1;
  if (o->stages && !flysim)
    return fs_fail(err, "--stages checks flysim's stepper against MuJoCo, and both backends are "
                        "cpu (MuJoCo); fix: --backends cpu,host or cpu,cuda");
  int precision = o->v.nprecision ? o->v.precision[0] : 32;
  for (int k = 0; k < 2; k++)
    if (!o->side[k].bits) o->side[k].bits = o->side[k].kind == FS_BACKEND_CPU ? 64 : precision;
  if (o->floor_mode < 0) o->floor_mode = o->side[1].bits == 32 ? FS_FLOOR_F32_STEP : FS_FLOOR_ULP;
  if (o->floor_runs == 0) o->floor_runs = o->side[1].bits == 32 ? 4 : 1;
  // Measured on NeuroMechFly (mesh, capsule; 4 and 16 worlds; 2,000 and 10,000 steps):
  // float64 host 0.85-1.22 (passive force off by 1e-12: 94). float32 host against the
  // 4-run floor, FlyGym's worlds included (2-16 worlds): 0.04-1.0 (passive force off by
  // 3e-5: 1.4, by 1e-4: 12, by 1e-3: 47). Against the one-run floor (rounding to nearest
  // alone) float32 needed 10, and a contact event on the gapped terrain gave 205.
  if (o->max_ratio == 0) o->max_ratio = 3;
  return 0;
}

//---------------------------------- inputs and steppers -------------------------------------------

// One side's inputs: its model, clip, binding and plan.
typedef struct Input {
  fsReplayInputs inputs; // model, clip, binding
  fsReplay plan;
  int loaded;
} Input;

typedef struct Session {
  Options opt;
  Input in[3];   // loaded inputs: A's, and B's or the floor's where they differ from A's
  Input* use[3]; // what A, B and the floor run: &in[0] unless B has its own model or clip,
                 // or the floor needs A's model and clip in float32 (f32-step: loaded
                 // again) or runs copies of the worlds (--floor-runs: its own plan over
                 // in[0]'s inputs, in[2].inputs left empty)
  fsReplayBatch rb[3];
  char label[3][64];
  fsCompareSpec spec;
  fsCompareResult res;
  fsStageReport stages;
  int have_stages;
  hid_t h5;
  char h5path[4200];
} Session;

// Steps to compare: --sim-steps, else --sim-duration-sec, else 2,000 (-1: an error).
static long steps_of(const Options* o, const fsTargets* t, fsError* err) {
  int n = 2000;
  if (o->v.sim_steps > 0) return o->v.sim_steps;
  if (o->v.sim_duration_sec > 0 && fs_steps_of_seconds("--sim-duration-sec", o->v.sim_duration_sec,
                                                       t->timestep, COMPARE_MAX_STEPS, &n, err))
    return -1;
  return n;
}

// Plan over loaded inputs `src` (in's own or A's): `copies` times --worlds worlds, world
// k N + w starting where world w does (the floor's runs). Returns an exit status.
static int plan_input(const Options* o, const char* model, const fsReplayInputs* src, int copies,
                      Input* in, fsError* err) {
  long nstep = steps_of(o, &src->targets, err);
  int nwarmup;
  if (nstep < 0 || fs_steps_of_seconds("--warmup-sec", o->v.warmup_sec, src->m->opt.timestep,
                                       COMPARE_MAX_STEPS, &nwarmup, err))
    return EXIT_USAGE;
  if (fs_replay_plan(&in->plan, src->m, model, &src->targets, &src->bind, o->v.worlds * copies,
                     (int)nstep, nwarmup, err))
    return EXIT_USAGE;
  for (int w = o->v.worlds; w < o->v.worlds * copies; w++)
    in->plan.world_start[w] = in->plan.world_start[w % o->v.worlds];
  in->plan.max_contacts = o->v.max_contacts; // host and cuda; the cpu's arena has no bound
  in->plan.max_candidates = o->v.max_candidates;
  in->loaded = 1;
  return EXIT_OK;
}

// Load model and clip (in float32 where in_float), bind and plan (plan_input). Returns an
// exit status.
static int load_input(const Options* o, const char* model, const char* targets, int in_float,
                      int copies, Input* in, fsError* err) {
  if (fs_replay_inputs_load(model, targets, o->v.disable, &in->inputs, err)) return EXIT_RUNTIME;
  if (in_float) // what a float32 stepper holds: the clip, and (below) the model
    for (long k = 0; k < (long)in->inputs.targets.nstep * in->inputs.targets.ndof; k++)
      in->inputs.targets.value[k] = (float)in->inputs.targets.value[k];
  int rc = plan_input(o, model, &in->inputs, copies, in, err);
  if (!rc && in_float)
    fs_model_round_to_float(in->inputs.m); // after the plan: the clip keeps its rows
  return rc;
}

static void input_free(Input* in) {
  if (in->loaded) fs_replay_plan_free(&in->plan);
  fs_replay_inputs_free(&in->inputs);
  memset(in, 0, sizeof *in);
}

static void side_label(const fsReplayBatch* b, char* out, size_t n) {
  if (b->info.backend == FS_BACKEND_CPU)
    snprintf(out, n, "cpu");
  else
    snprintf(out, n, "%s:f%d", fs_backend_name(b->info.backend), b->bits);
}

static const char* side_what(fsBackendKind kind) {
  return kind == FS_BACKEND_CPU    ? "MuJoCo's mj_step"
         : kind == FS_BACKEND_CUDA ? "flysim's kernels on the GPU"
                                   : "flysim's stage code on CPU threads";
}

static int open_all(Session* s, fsError* err) {
  const Options* o = &s->opt;
  const char* model_b = o->model_b[0] ? o->model_b : o->v.model;
  const char* targets_b = o->targets_b[0] ? o->targets_b : o->v.targets;
  int floor_in_float = o->floor_mode == FS_FLOOR_F32_STEP && o->side[0].bits == 64;
  int own_b = o->model_b[0] || o->targets_b[0];
  s->use[0] = s->use[1] = s->use[2] = &s->in[0];
  int rc = load_input(o, o->v.model, o->v.targets, 0, 1, &s->in[0], err);
  if (!rc && own_b) rc = load_input(o, model_b, targets_b, 0, 1, s->use[1] = &s->in[1], err);
  if (!rc && floor_in_float) // A's model and clip again, rounded to float32
    rc = load_input(o, o->v.model, o->v.targets, 1, o->floor_runs, s->use[2] = &s->in[2], err);
  else if (!rc && o->floor_runs > 1) // A's loaded model and clip, the worlds copied
    rc = plan_input(o, o->v.model, &s->in[0].inputs, o->floor_runs, s->use[2] = &s->in[2], err);
  if (rc) return rc;
  if (fs_compare_check_plans(&s->use[0]->plan, &s->use[1]->plan, err)) return EXIT_RUNTIME;
  const Side* side[3] = {&o->side[0], &o->side[1], &o->side[0]};
  for (int k = 0; k < 2; k++)
    if (side[k]->kind == FS_BACKEND_CUDA &&
        !(fs_backend_available(FS_BACKEND_CUDA, NULL) == FS_OK)) {
      fs_fail(err,
              "--backends: %s needs a CUDA device, and this machine has none (or this "
              "flysim was built without CUDA); fix: --backends cpu,host compares flysim's "
              "GPU stage code on CPU threads",
              k ? "B (cuda)" : "A (cuda)");
      return EXIT_RUNTIME;
    }
  for (int k = 0; k < 3; k++) {
    if (fs_replay_open(&s->use[k]->plan, side[k]->kind, side[k]->bits, o->v.threads, &s->rb[k],
                       err)) {
      fs_fail_append(err, " (backend %s of --backends)", k == 1 ? "B" : "A");
      return EXIT_RUNTIME;
    }
    side_label(&s->rb[k], s->label[k], sizeof s->label[k]);
  }
  fsCompareSide cs[3];
  for (int k = 0; k < 3; k++)
    cs[k] = (fsCompareSide){s->label[k], &s->rb[k], &s->use[k]->plan, s->rb[k].bits};
  s->spec = (fsCompareSpec){cs[0],
                            cs[1],
                            cs[2],
                            (fsFloorMode)o->floor_mode,
                            o->floor_runs,
                            o->max_ratio,
                            {o->threshold[0], o->threshold[1], o->threshold[2]},
                            !o->v.quiet && isatty(STDERR_FILENO)};
  return EXIT_OK;
}

//---------------------------------- report --------------------------------------------------------

static const fsStageReport* stages_of(const Session* s) {
  return s->have_stages ? &s->stages : NULL;
}

static void print_header(const Session* s) {
  const Options* o = &s->opt;
  fsCompareInputs in = {{side_what(s->rb[0].info.backend), side_what(s->rb[1].info.backend)},
                        {s->rb[0].info.description, s->rb[1].info.description},
                        o->v.model,
                        o->model_b,
                        o->v.targets,
                        o->targets_b,
                        !o->backends_given && s->rb[1].info.backend == FS_BACKEND_HOST};
  fs_compare_print_header(stdout, &s->spec, &in);
}

//---------------------------------- the verb ------------------------------------------------------

// --stages: flysim's stepper (B, else A) stage by stage from MuJoCo's states.
static int run_stages(Session* s, fsError* err) {
  int k = s->rb[1].info.backend != FS_BACKEND_CPU ? 1 : 0; // parse_options refused cpu,cpu
  fsStageCheckSpec spec = {s->use[k]->inputs.m,
                           s->use[k]->plan.model_path,
                           s->rb[k].info.backend == FS_BACKEND_CUDA,
                           s->rb[k].bits,
                           0,
                           2025};
  fs_mujoco_quiet_warnings(1); // the whole step's NaN worlds warn on purpose
  int rc = fs_stage_check(&spec, &s->stages, err);
  fs_mujoco_quiet_warnings(0);
  if (rc) return -1;
  s->have_stages = 1;
  return 0;
}

static int save_outputs(Session* s, fsError* err) {
  fsCompareMeta meta = {s->opt.command_line, s->have_stages ? &s->stages : NULL,
                        fs_compare_verdict(&s->res, stages_of(s))};
  hid_t f = s->h5;
  s->h5 = -1;
  if (fs_compare_h5_write(f, s->h5path, &s->spec, &s->res, &meta, err)) return -1;
  printf("Saved %s (%d steps)\n", s->h5path, s->res.ndone);
  if (s->opt.plot && s->res.ndone > 0) {
    if (fs_compare_plot(s->h5path, s->opt.save, err)) return -1;
    printf("Saved %s/divergence.png\n", s->opt.save);
  }
  return 0;
}

static int run(Session* s, fsError* err) {
  int status = open_all(s, err);
  if (status != EXIT_OK) return status;
  if (s->opt.save[0]) {
    if (fs_make_dirs(s->opt.save, "--save", err)) return EXIT_RUNTIME;
    snprintf(s->h5path, sizeof s->h5path, "%s/compare.h5", s->opt.save);
    s->h5 = fs_compare_h5_create(s->h5path, err);
    if (s->h5 < 0) return EXIT_RUNTIME;
  }
  print_header(s);
  if (fs_compare_run(&s->spec, &s->res, err)) return EXIT_RUNTIME;
  fs_compare_print_table(stdout, &s->spec, &s->res);
  if (s->opt.stages && !s->res.interrupted) {
    printf("\nchecking the stages ...\n");
    fflush(stdout);
    if (run_stages(s, err)) return EXIT_RUNTIME;
    fs_compare_print_stages(stdout, &s->stages);
  }
  fs_compare_print_verdict(stdout, &s->spec, &s->res, stages_of(s));
  int failed = s->opt.save[0] && save_outputs(s, err);
  fs_compare_print_summary(stdout, &s->spec, &s->res, stages_of(s));
  if (failed) return EXIT_RUNTIME;
  if (s->res.interrupted) return EXIT_INTERRUPTED;
  return !strcmp(fs_compare_verdict(&s->res, stages_of(s)), "pass") ? EXIT_OK : EXIT_FAILED;
}

static void session_free(Session* s) {
  if (s->h5 >= 0) fs_h5_close(s->h5);
  fs_compare_result_free(&s->res);
  for (int k = 0; k < 3; k++) fs_replay_close(&s->rb[k]); // before the plans they read:
  for (int k = 0; k < 3; k++) input_free(&s->in[k]);      // B and the floor may share A's
}

int fs_cmd_compare(int argc, char** argv, const char* command_line) {
  Session* s = calloc(1, sizeof *s);
  if (!s) {
    fprintf(stderr, "flysim compare: error: out of memory\n");
    return EXIT_RUNTIME;
  }
  s->h5 = -1;
  fsError err = {{0}, FS_OK};
  int rc = parse_options(argc, argv, &s->opt, &err);
  int status = EXIT_OK;
  if (rc < 0) {
    fprintf(stderr, "flysim compare: %s\n", err.msg);
    status = EXIT_USAGE;
  } else if (rc == 0) {
    snprintf(s->opt.command_line, sizeof s->opt.command_line, "%s", command_line);
    fs_interrupt_install();
    fs_mujoco_install_hooks();
    status = run(s, &err);
    if (status == EXIT_RUNTIME || status == EXIT_USAGE)
      fprintf(stderr, "flysim compare: error: %s\n", err.msg);
  }
  session_free(s);
  free(s);
  return status;
}
