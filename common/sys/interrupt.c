#include "common/sys/interrupt.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t g_stop_signal = 0;

static void on_signal(int sig) {
  if (g_stop_signal) {
    // Second signal: the user insists; die with the default action.
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  g_stop_signal = sig;
}

void fs_interrupt_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

int fs_interrupted(void) {
  return g_stop_signal;
}

void fs_interrupt_request(int sig) {
  g_stop_signal = sig;
}
