// `flysim generate SPEC --out DIR`: options, then generate/generate.c.
#include "app/generate_cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sys/interrupt.h"
#include "common/base/mujoco_hooks.h"
#include "common/replay/options.h"
#include "generate/generate.h"
#include "generate/ranks.h"
#include "generate/spec.h"

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };
enum { OPT_OUT = 256, OPT_RESUME, OPT_THREADS, OPT_QUIET, OPT_EXAMPLE, OPT_GPUS };

typedef struct Options {
  char spec[4096], out[4096];
  int resume, threads, quiet, example, gpus_per_node;
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

static int one(int c, void* arg, fsError* err) {
  Options* o = arg;
  long v = 0;
  switch (c) {
  case OPT_OUT:
    return fs_copy_path_option("--out", optarg, o->out, sizeof o->out, err);
  case OPT_RESUME:
    o->resume = 1;
    return 0;
  case OPT_THREADS:
    if (fs_parse_positive_int("--threads", optarg, 4096, &v, err)) return -1;
    o->threads = (int)v;
    return 0;
  case OPT_QUIET:
    o->quiet = 1;
    return 0;
  case OPT_EXAMPLE:
    o->example = 1;
    return 0;
  case OPT_GPUS:
    if (fs_parse_positive_int("--gpus-per-node", optarg, 1024, &v, err)) return -1;
    o->gpus_per_node = (int)v;
    return 0;
  default:
    return fs_fail(err, "unexpected option");
  }
}

static int parse(int argc, char** argv, Options* o, fsError* err) {
  static const struct option longopts[] = {{"out", required_argument, NULL, OPT_OUT},
                                           {"resume", no_argument, NULL, OPT_RESUME},
                                           {"threads", required_argument, NULL, OPT_THREADS},
                                           {"quiet", no_argument, NULL, OPT_QUIET},
                                           {"example-spec", no_argument, NULL, OPT_EXAMPLE},
                                           {"gpus-per-node", required_argument, NULL, OPT_GPUS},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  // The spec is the one positional argument: take it out before getopt sees it.
  char* args[256];
  int n = 0;
  for (int i = 0; i < argc && n < 255; i++) {
    if (i > 0 && argv[i][0] != '-' && !o->spec[0] && strcmp(argv[i - 1], "--out") &&
        strcmp(argv[i - 1], "--threads") && strcmp(argv[i - 1], "--gpus-per-node")) {
      snprintf(o->spec, sizeof o->spec, "%s", argv[i]);
      continue;
    }
    args[n++] = argv[i];
  }
  args[n] = NULL;
  int rc = fs_parse_verb_options(n, args, "generate", longopts, print_help, one, o, err);
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
  if (fs_gen_spec_load(o.spec, &spec, &err)) {
    fprintf(stderr, "flysim generate: error: %s\n", err.msg);
    fs_gen_spec_free(&spec);
    return EXIT_USAGE;
  }
  fs_interrupt_install();
  fs_mujoco_install_hooks();
  int lead = ranks->rank == 0; // the one that prints
  fsGenOptions go = {o.out, o.resume, o.threads, lead && !o.quiet && isatty(STDERR_FILENO), ranks};
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
