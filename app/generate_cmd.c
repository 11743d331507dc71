// `flysim generate SPEC --out DIR`: options, then generate/generate.c.
#include "app/generate_cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sys/interrupt.h"
#include "common/base/mujoco_hooks.h"
#include "common/cli/verb_options.h"
#include "generate/generate.h"
#include "generate/ranks.h"
#include "generate/spec.h"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };
enum { OPT_OUT = 256, OPT_GPUS };

typedef struct Options {
  fsVerbOptions v; // --threads, --quiet (the spec names the rest)
  char spec[4096], out[4096];
  int resume, example, gpus_per_node;
} Options;

static void print_help(void) {
  printf("usage: flysim generate SPEC --out DIR [options]\n"
         "       flysim generate --example-spec > spec.yaml\n"
         "\n"
         "Generate an HDF5 dataset of NeuroMechFly replays with per-world variation: the\n"
         "spec (YAML) fixes the model, clips, worlds, steps, what is recorded, the seed and\n"
         "the variation axes (clip window, time and amplitude scaling, target noise; actuator\n"
         "gain, damping, stiffness, friction, mass, adhesion, gravity; initial pose, velocity\n"
         "and height), each a distribution sampled per world. The dataset DIR/dataset.h5 is\n"
         "world-major (/worlds/<series>: worlds x rows x columns), written block of worlds\n"
         "by block; a killed run is finished by --resume with the same bytes as an\n"
         "uninterrupted one, and the bytes do not depend on --threads.\n"
         "\n"
         "options:\n"
         "  --out DIR               where the dataset goes (required)\n"
         "  --resume                finish the dataset in DIR (the same spec)\n"
         "  --threads N             CPU threads (default: one per core)\n"
         "  --gpus-per-node G       under mpirun: rank r uses GPU (local rank mod G)\n"
         "  --example-spec          print a commented example spec and exit\n"
         "  --quiet                 no progress line\n"
         "  -h, --help              this text\n"
         "\n"
         "Scale out: mpirun -n K flysim generate SPEC --out DIR (flysim built with MPI: %s)\n"
         "splits the blocks over the ranks (block k on rank k mod K), each writing its own\n"
         "partial file; rank 0 merges them into DIR/dataset.h5, the same bytes as one\n"
         "process. --resume with the same K.\n"
         "\n"
         "The last line is a key=value summary. Exit status: 0 done, 1 error (what was\n"
         "written stays: --resume), 2 usage, 130 interrupted (--resume goes on).\n",
         fs_ranks_have_mpi() ? "yes" : "no");
}

// One of generate's own options (fsVerb.one).
static int parse_one(int c, const char* val, void* arg, fsError* err) {
  Options* o = arg;
  switch (c) {
  case OPT_OUT:
    return fs_copy_path_option("--out", val, o->out, sizeof o->out, err);
  case OPT_GPUS:
    return fs_parse_count("--gpus-per-node", val, 1024, &o->gpus_per_node, err);
  default:
    return fs_fail(err, "internal: flysim generate: option %d", c);
  }
}

static int parse(int argc, char** argv, Options* o, fsError* err) {
  const struct option own[] = {{"out", required_argument, NULL, OPT_OUT},
                               {"resume", no_argument, &o->resume, 1},
                               {"example-spec", no_argument, &o->example, 1},
                               {"gpus-per-node", required_argument, NULL, OPT_GPUS},
                               {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  fs_verb_options_init(&o->v);
  const fsVerb verb = {.name = "generate",
                       .takes = FS_VERB_THREADS | FS_VERB_QUIET,
                       .own = own,
                       .one = parse_one,
                       .arg = o,
                       .help = print_help,
                       .positional = o->spec,
                       .positional_size = sizeof o->spec};
  int rc = fs_parse_verb(argc, argv, &verb, &o->v, err);
  if (rc) return rc;
  if (o->example) return 0;
  if (!o->spec[0])
    return fs_fail(err, "no spec; fix: flysim generate SPEC --out DIR (flysim generate "
                        "--example-spec > spec.yaml makes one)");
  if (!o->out[0]) return fs_fail(err, "--out DIR is required; fix: e.g. --out data/");
  return 0;
}

static int generate(Options* o, const fsRanks* ranks);

int fs_cmd_generate(int argc, char** argv, const char* command_line) {
  (void)command_line;
  fsRanks ranks;
  fs_ranks_init(&ranks, &argc, &argv);
  Options o;
  fsError err = {{0}, FS_OK};
  int rc = parse(argc, argv, &o, &err);
  if (rc == 0 && !o.example) {
    rc = generate(&o, &ranks);
    fs_ranks_finalize(&ranks);
    return rc;
  }
  fs_ranks_finalize(&ranks);
  if (rc == 1) return EXIT_OK;
  if (rc < 0) {
    fprintf(stderr, "flysim generate: %s\n", err.msg);
    return EXIT_USAGE;
  }
  if (o.example) {
    fputs(fs_gen_example_spec(), stdout);
    return EXIT_OK;
  }
  return EXIT_OK;
}

// The run, on every rank; rank 0 prints.
static int generate(Options* po, const fsRanks* ranks) {
  Options o = *po;
  fsError err = {{0}, FS_OK};
  if (o.gpus_per_node > 0) { // before anything touches CUDA
    char dev[16];
    snprintf(dev, sizeof dev, "%d", ranks->local_rank % o.gpus_per_node);
    setenv("CUDA_VISIBLE_DEVICES", dev, 1);
  }
  fsGenSpec spec;
  fs_interrupt_install(); // before the spec, which may be a FIFO (flysim generate <(...))
  if (fs_gen_spec_load(o.spec, &spec, &err)) {
    fprintf(stderr, "flysim generate: %s%s\n", fs_interrupted() ? "" : "error: ", err.msg);
    fs_gen_spec_free(&spec);
    return fs_interrupted() ? EXIT_INTERRUPTED : EXIT_USAGE;
  }
  fs_mujoco_install_hooks();
  int lead = ranks->rank == 0; // the one that prints
  fsGenOptions go = {o.out, o.resume, o.v.threads, lead && !o.v.quiet && isatty(STDERR_FILENO),
                     ranks};
  fsGenResult res;
  int failed = fs_gen_run(&spec, &go, &res, lead ? stdout : NULL, &err);
  if (failed && ranks->size > 1)
    fprintf(stderr, "flysim generate (rank %d of %d): error: %s\n", ranks->rank, ranks->size,
            err.msg);
  else if (failed)
    fprintf(stderr, "flysim generate: error: %s\n", err.msg);
  if (!lead) {
    fs_gen_spec_free(&spec);
    return failed ? EXIT_RUNTIME : res.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
  }
  if (!failed && res.complete)
    printf("Saved %s (%d worlds; this run wrote %.1f MB of series before compression)\n", res.path,
           spec.worlds, res.bytes / 1e6);
  else if (!failed)
    printf("Stopped: %s holds %d of %d blocks; finish with --resume\n", res.path,
           res.blocks_done_before + res.blocks_run, res.blocks);
  printf("summary worlds=%d blocks=%d blocks_run=%d blocks_before=%d world_steps=%lld wall_s=%.6f "
         "world_steps_per_s=%.6g bytes=%.0f problem_worlds=%d complete=%d interrupted=%d\n",
         spec.worlds, res.blocks, res.blocks_run, res.blocks_done_before, res.world_steps,
         res.wall_s, res.wall_s > 0 ? res.world_steps / res.wall_s : 0.0, res.bytes,
         res.problem_worlds, res.complete, res.interrupted ? 1 : 0);
  fs_gen_spec_free(&spec);
  if (failed) return EXIT_RUNTIME;
  return res.interrupted ? EXIT_INTERRUPTED : EXIT_OK;
}
