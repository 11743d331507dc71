#define _POSIX_C_SOURCE 200809L // pthread barriers under -std=c11
#include "cuda/lanes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local int t_lane;
static pthread_barrier_t g_sync;          // the lanes' FS_SYNC (FS_EMU_NLANE parties)
static pthread_barrier_t g_start, g_done; // the caller and the lanes (FS_EMU_NLANE + 1)
static int g_flag[FS_EMU_NLANE];
static double g_part[FS_EMU_NLANE];
static void (*g_fn)(void*);
static void* g_arg;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

int fs_lane_id(void) {
  return t_lane;
}

void fs_lane_sync(void) {
  pthread_barrier_wait(&g_sync);
}

int fs_lane_any(int p) {
  g_flag[t_lane] = p != 0;
  pthread_barrier_wait(&g_sync);
  int any = 0;
  for (int i = 0; i < FS_EMU_NLANE; i++) any |= g_flag[i];
  pthread_barrier_wait(&g_sync); // nobody writes a flag before everyone has read
  return any;
}

double fs_lane_sum_emu(double x) {
  g_part[t_lane] = x;
  pthread_barrier_wait(&g_sync);
  double v[FS_EMU_NLANE]; // the device's butterfly: v[l] += v[l ^ o], o = 16, 8, ..., 1
  for (int i = 0; i < FS_EMU_NLANE; i++) v[i] = g_part[i];
  for (int o = FS_EMU_NLANE / 2; o > 0; o >>= 1) {
    double w[FS_EMU_NLANE];
    for (int i = 0; i < FS_EMU_NLANE; i++) w[i] = v[i] + v[i ^ o];
    for (int i = 0; i < FS_EMU_NLANE; i++) v[i] = w[i];
  }
  pthread_barrier_wait(&g_sync); // nobody writes a part before everyone has read
  return v[t_lane];
}

// A lane: wait for a job, run it, report, forever (the threads live with the process).
static void* lane_main(void* p) {
  t_lane = (int)(size_t)p;
  for (;;) {
    pthread_barrier_wait(&g_start);
    g_fn(g_arg);
    pthread_barrier_wait(&g_done);
  }
  return NULL;
}

static void start_lanes(void) {
  if (pthread_barrier_init(&g_sync, NULL, FS_EMU_NLANE) ||
      pthread_barrier_init(&g_start, NULL, FS_EMU_NLANE + 1) ||
      pthread_barrier_init(&g_done, NULL, FS_EMU_NLANE + 1)) {
    fprintf(stderr, "flysim: cannot create the lanes' barriers\n");
    exit(1);
  }
  for (int i = 0; i < FS_EMU_NLANE; i++) {
    pthread_t th;
    if (pthread_create(&th, NULL, lane_main, (void*)(size_t)i) || pthread_detach(th)) {
      fprintf(stderr, "flysim: cannot start lane %d\n", i);
      exit(1);
    }
  }
}

void fs_lanes_run(void (*fn)(void*), void* arg) {
  pthread_once(&g_once, start_lanes);
  g_fn = fn;
  g_arg = arg;
  pthread_barrier_wait(&g_start);
  pthread_barrier_wait(&g_done);
}
