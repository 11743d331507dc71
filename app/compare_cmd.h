// `flysim compare`: two steppers on the same worlds, against MuJoCo's own floor.
#ifndef FLYSIM_APP_COMPARE_CMD_H
#define FLYSIM_APP_COMPARE_CMD_H

/// Run `flysim compare` (argv[0] is "compare"); returns the process exit status
/// (0 within the bounds, 3 outside, 1 error, 2 usage, 130 interrupted).
int fs_cmd_compare(int argc, char** argv, const char* command_line);

#endif
