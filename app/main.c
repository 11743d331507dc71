// flysim: NeuroMechFly replays on the CPU (MuJoCo) and the GPU (our kernels).
#include <stdio.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "app/bench_cmd.h"
#include "app/compare_cmd.h"
#include "app/generate_cmd.h"
#include "app/replay_cmd.h"
#include "common/cli/verb_options.h"
#include "common/recorder/h5util.h"
#include "common/replay/replay_io.h"

static void print_help(void) {
  printf("usage: flysim <command> [options]\n"
         "\n"
         "commands:\n"
         "  replay     replay the recorded walking clip in N worlds (flysim replay --help)\n"
         "  compare    the same worlds on two steppers, against MuJoCo's own sensitivity\n"
         "             (flysim compare --help)\n"
         "  bench      throughput over steppers, precisions and worlds, with peers\n"
         "             (flysim bench --help)\n"
         "  generate   an HDF5 dataset of replays with per-world variation, resumable\n"
         "             (flysim generate --help)\n"
         "\n"
         "  -h, --help      this text\n"
         "  --version       flysim and MuJoCo versions\n");
}

int main(int argc, char** argv) {
  fs_h5_process_init();
  char command_line[8192];
  fs_join_command_line(argc, argv, command_line, sizeof command_line);
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    print_help();
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("flysim %s (MuJoCo %s)\n", fs_version_string(), mj_versionString());
    return 0;
  }
  if (!strcmp(argv[1], "replay")) return fs_cmd_replay(argc - 1, argv + 1, command_line);
  if (!strcmp(argv[1], "compare")) return fs_cmd_compare(argc - 1, argv + 1, command_line);
  if (!strcmp(argv[1], "bench")) return fs_cmd_bench(argc - 1, argv + 1, command_line);
  if (!strcmp(argv[1], "generate")) return fs_cmd_generate(argc - 1, argv + 1, command_line);
  fprintf(stderr, "flysim: unknown command '%s'; see flysim --help\n", argv[1]);
  return 2;
}
