// `flysim replay`: load, bind, plan, step on the chosen backend, record, report.
#ifndef FLYSIM_APP_REPLAY_CMD_H
#define FLYSIM_APP_REPLAY_CMD_H

/// Run `flysim replay` (argv[0] is "replay"); returns the process exit status.
int fs_cmd_replay(int argc, char** argv, const char* command_line);

#endif
