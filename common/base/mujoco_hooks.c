#include "common/base/mujoco_hooks.h"

#include <mujoco/mujoco.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FS_WARNINGS_SHOWN 5

static _Thread_local fsMjTrap* t_trap = NULL;
static pthread_mutex_t g_print = PTHREAD_MUTEX_INITIALIZER;
static long g_nwarning = 0;
static int g_quiet = 0;

static void on_mujoco_warning(const char* msg) {
  pthread_mutex_lock(&g_print);
  long n = g_quiet ? g_nwarning : ++g_nwarning;
  if (g_quiet)
    ;
  else if (n <= FS_WARNINGS_SHOWN) // (on a terminal, first clear the progress line)
    fprintf(stderr, "%sflysim: MuJoCo warning: %s\n", isatty(STDERR_FILENO) ? "\r\033[K" : "", msg);
  else if (n == FS_WARNINGS_SHOWN + 1)
    fprintf(stderr, "flysim: further MuJoCo warnings are counted per world in the report\n");
  pthread_mutex_unlock(&g_print);
}

static void on_mujoco_error(const char* msg) {
  fsMjTrap* trap = t_trap;
  if (trap) {
    snprintf(trap->msg, sizeof trap->msg, "%s", msg);
    t_trap = NULL;
    longjmp(trap->env, 1);
  }
  fprintf(stderr, "flysim: MuJoCo error: %s\n", msg);
  exit(1);
}

static pthread_mutex_t g_install = PTHREAD_MUTEX_INITIALIZER;
static void (*g_prev_error)(const char*) = NULL;

// The library's handler: the trap, else the handler that was there before.
static void on_error_trapped(const char* msg) {
  fsMjTrap* trap = t_trap;
  if (trap) {
    snprintf(trap->msg, sizeof trap->msg, "%s", msg);
    t_trap = NULL;
    longjmp(trap->env, 1);
  }
  if (g_prev_error) {
    g_prev_error(msg);
    return;
  }
  fprintf(stderr, "ERROR: %s\n", msg); // MuJoCo's own behaviour without a handler
  exit(EXIT_FAILURE);
}

void fs_mujoco_trap_errors(void) {
  pthread_mutex_lock(&g_install);
  if (mju_user_error != on_error_trapped && mju_user_error != on_mujoco_error) {
    g_prev_error = mju_user_error;
    mju_user_error = on_error_trapped;
  }
  pthread_mutex_unlock(&g_install);
}

void fs_mujoco_install_hooks(void) {
  mju_user_warning = on_mujoco_warning;
  mju_user_error = on_mujoco_error;
}

void fs_mj_trap_set(fsMjTrap* trap) {
  t_trap = trap;
}

void fs_mujoco_quiet_warnings(int quiet) {
  pthread_mutex_lock(&g_print);
  g_quiet = quiet;
  pthread_mutex_unlock(&g_print);
}
