// MuJoCo's global error and warning hooks.
//
// The library (fs_mujoco_trap_errors, at every fs_batch_open): a MuJoCo error inside a
// guarded region (a world's step) jumps back to it with the message, so that one
// failing world stops the call cleanly instead of the process; outside a guarded region
// the error goes to the handler that was there before (MuJoCo's own: print and exit).
// The program (fs_mujoco_install_hooks, flysim's verbs): warnings (printed by MuJoCo
// once per world and kind) go to stderr, the first few in full, and an error outside a
// guarded region is printed and exits 1.
#ifndef FLYSIM_COMMON_BASE_MUJOCO_HOOKS_H
#define FLYSIM_COMMON_BASE_MUJOCO_HOOKS_H

#include <setjmp.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A place to return to from a MuJoCo error on this thread.
typedef struct fsMjTrap {
  jmp_buf env;
  char msg[1024];
} fsMjTrap;

/// The library's error trap (idempotent; keeps the handler that was there for errors
/// outside a guarded region).
void fs_mujoco_trap_errors(void);

/// The program's hooks (idempotent), the trap included. Also keeps MuJoCo from writing
/// MUJOCO_LOG.TXT.
void fs_mujoco_install_hooks(void);

/// Make trap this thread's target for MuJoCo errors (NULL: none).
void fs_mj_trap_set(fsMjTrap* trap);

/// Stop (quiet 1) or resume (0) printing MuJoCo's warnings, e.g. around checks that
/// make bad worlds on purpose; quiet warnings are not counted either.
void fs_mujoco_quiet_warnings(int quiet);

// A guarded region reads:
//   fsMjTrap trap;
//   fs_mj_trap_set(&trap);
//   if (setjmp(trap.env)) { /* MuJoCo error: trap.msg */ } else { ... }
//   fs_mj_trap_set(NULL);
// (locals changed inside the region and read after an error must be volatile).

#ifdef __cplusplus
}
#endif
#endif
