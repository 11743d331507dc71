// Ctrl-C and friends: the first SIGINT, SIGTERM or SIGHUP asks the run to stop at
// the next step (the recorder then closes its file with every completed step);
// a second one kills the process at once.
#ifndef FLYSIM_COMMON_SYS_INTERRUPT_H
#define FLYSIM_COMMON_SYS_INTERRUPT_H

#ifdef __cplusplus
extern "C" {
#endif

/// Install the handlers (idempotent).
void fs_interrupt_install(void);

/// The signal that asked the run to stop, or 0.
int fs_interrupted(void);

/// Ask the run to stop as if signal sig had arrived (used by tests and errors).
void fs_interrupt_request(int sig);

#ifdef __cplusplus
}
#endif
#endif
