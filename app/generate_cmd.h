// `flysim generate`: an HDF5 dataset of replays with per-world variation.
#ifndef FLYSIM_APP_GENERATE_CMD_H
#define FLYSIM_APP_GENERATE_CMD_H

/// Run `flysim generate` (argv[0] is "generate"); returns the exit status (0 done,
/// 1 error, 2 usage, 130 interrupted: --resume finishes it).
int fs_cmd_generate(int argc, char** argv, const char* command_line);

#endif
