// `flysim bench`: throughput sweeps over steppers, precisions and worlds, with peers.
#ifndef FLYSIM_APP_BENCH_CMD_H
#define FLYSIM_APP_BENCH_CMD_H

/// Run `flysim bench` (argv[0] is "bench"); returns the process exit status.
int fs_cmd_bench(int argc, char** argv, const char* command_line);

#endif
