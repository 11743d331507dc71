#define _GNU_SOURCE // pthread barriers under -std=c11; the profile's CPU affinity
#include "common/exec/lanes.h"

#include "common/exec/real.h" // fs_lanes_valid

#include <sched.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(FS_LANES_PROFILE) && (defined(__x86_64__) || defined(__i386__))
#include <x86intrin.h>
#endif

static _Thread_local int t_lane;
static pthread_barrier_t g_sync;          // the lanes' FS_SYNC (g_count parties)
static pthread_barrier_t g_start, g_done; // the caller and the lanes (FS_EMU_NLANE + 1)
static int g_flag[FS_EMU_NLANE];
static double g_part[FS_EMU_NLANE];
static void (*g_fn)(void*);
static void* g_arg;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_count = -1, g_sync_count = -1; // lanes per world; g_sync's parties

int fs_lane_id(void) {
  return t_lane;
}

int fs_lane_count(void) {
  if (g_count < 0) {
    const char* env = getenv("FLYSIM_EMU_LANES");
    int n = env && *env ? atoi(env) : FS_WORLD_LANES;
    if (!fs_lanes_valid(n)) {
      fprintf(stderr, "flysim: FLYSIM_EMU_LANES=%s: lanes per world must be 1, 2, 4, 8, 16 or 32\n",
              env);
      exit(2);
    }
    g_count = n;
  }
  return g_count;
}

int fs_lanes_set_count(int n) {
  if (!fs_lanes_valid(n)) return -1;
  g_count = n;
  return 0;
}

//---------------------------------- the profile (FS_LANES_PROFILE) --------------------------------

enum { NLABEL = 64 };
static _Thread_local int t_label;
static fsLaneStat g_stat[NLABEL];

void fs_lane_mark(int label) {
  t_label = label >= 0 && label < NLABEL ? label : 0;
}

#ifdef FS_LANES_PROFILE
static _Thread_local uint64_t t_since;
static uint64_t g_work[FS_EMU_NLANE];
static int g_label[FS_EMU_NLANE];
static double g_empty; // an empty phase's cycles, taken off every lane's work

static uint64_t cycles(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static void phase_start(void) {
  t_since = cycles();
}

static void phase_end(void) {
  g_work[t_lane] = cycles() - t_since;
  g_label[t_lane] = t_label;
}

enum { NCAL = 400 };                      // the calibration's empty phases
static double g_cal[NCAL * FS_EMU_NLANE]; // their lanes' cycles
static int g_ncal = -1;                   // >= 0 while calibrating

// One phase's lanes into its label's statistics (one thread, while the lanes wait).
static void account(void) {
  if (g_ncal >= 0) {
    for (int i = 0; i < g_count && g_ncal < NCAL * FS_EMU_NLANE; i++)
      g_cal[g_ncal++] = (double)g_work[i];
    return;
  }
  double mx = 0, sum = 0;
  for (int i = 0; i < g_count; i++) {
    double w = (double)g_work[i] - g_empty;
    w = w > 0 ? w : 0;
    sum += w;
    mx = w > mx ? w : mx;
  }
  fsLaneStat* st = &g_stat[g_label[0]];
  if (mx > 1e6) {
    st->dropped++;
    return;
  }
  st->phases++;
  st->work += sum;
  st->span += mx;
  if (mx > 0 && sum - mx < 0.25 * mx) {
    st->serial_phases++;
    st->serial_span += mx;
  }
}

// A barrier that ends a phase: every lane's work is in before lane 0 accounts it.
static void phase_barrier(void) {
  phase_end();
  pthread_barrier_wait(&g_sync);
  if (t_lane == 0) account();
}

static void calibrate_job(void* arg) {
  (void)arg;
  for (int k = 0; k < 400; k++) fs_lane_sync();
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

void fs_lanes_profile_reset(void) {
  g_ncal = 0; // the cost of an empty phase: the median lane of NCAL empty phases
  fs_lanes_run(calibrate_job, NULL);
  qsort(g_cal, (size_t)g_ncal, sizeof(double), cmp_double);
  g_empty = g_ncal ? g_cal[g_ncal / 2] : 0;
  g_ncal = -1;
  memset(g_stat, 0, sizeof g_stat);
}
#else
static void phase_start(void) {}

static void account(void) {}

void fs_lanes_profile_reset(void) {
  memset(g_stat, 0, sizeof g_stat);
}
#endif

double fs_lanes_profile_read(fsLaneStat* out, int nlabel) {
  for (int k = 0; k < nlabel; k++) out[k] = k < NLABEL ? g_stat[k] : (fsLaneStat){0};
#ifdef FS_LANES_PROFILE
  return g_empty;
#else
  return 0;
#endif
}

//---------------------------------- syncs ---------------------------------------------------------

// Every lane: the phase ends (profile), all meet, then the next phase starts.
void fs_lane_sync(void) {
#ifdef FS_LANES_PROFILE
  phase_barrier();
  pthread_barrier_wait(&g_sync); // nobody starts timing before lane 0 has accounted
  phase_start();
#else
  pthread_barrier_wait(&g_sync);
#endif
}

int fs_lane_any(int p) {
  g_flag[t_lane] = p != 0;
#ifdef FS_LANES_PROFILE
  phase_barrier();
#else
  pthread_barrier_wait(&g_sync);
#endif
  int any = 0;
  for (int i = 0; i < g_count; i++) any |= g_flag[i];
  pthread_barrier_wait(&g_sync); // nobody writes a flag before everyone has read
  phase_start();
  return any;
}

double fs_lane_sum_emu(double x) {
  g_part[t_lane] = x;
#ifdef FS_LANES_PROFILE
  phase_barrier();
#else
  pthread_barrier_wait(&g_sync);
#endif
  double v[FS_EMU_NLANE]; // the device's butterfly: v[l] += v[l ^ o], o = n / 2, ..., 1
  int n = g_count;
  for (int i = 0; i < n; i++) v[i] = g_part[i];
  for (int o = n / 2; o > 0; o >>= 1) {
    double w[FS_EMU_NLANE];
    for (int i = 0; i < n; i++) w[i] = v[i] + v[i ^ o];
    for (int i = 0; i < n; i++) v[i] = w[i];
  }
  pthread_barrier_wait(&g_sync); // nobody writes a part before everyone has read
  phase_start();
  return v[t_lane];
}

// A lane: wait for a job, run it, report, forever (the threads live with the process).
static void* lane_main(void* p) {
  t_lane = (int)(size_t)p;
#ifdef FS_LANES_PROFILE
  // Every lane on one CPU: a lane's cycles between two syncs are then its own work on
  // data in the one cache the lanes share, as a warp's lanes share an SM's L1, and not
  // the other CPUs' cache lines it waits for (which made every phase look uneven).
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  if (pthread_setaffinity_np(pthread_self(), sizeof one, &one))
    fprintf(stderr, "flysim: cannot pin lane %d to CPU 0; the profile may be noisier\n", t_lane);
#endif
  for (;;) {
    pthread_barrier_wait(&g_start);
    if (t_lane < g_count) { // lanes beyond the count sit the job out
      phase_start();
      g_fn(g_arg);
#ifdef FS_LANES_PROFILE
      phase_end();
#endif
    }
    pthread_barrier_wait(&g_done);
  }
  return NULL;
}

static void start_lanes(void) {
  if (pthread_barrier_init(&g_start, NULL, FS_EMU_NLANE + 1) ||
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
  int n = fs_lane_count();
  if (n != g_sync_count) { // every lane waits at g_start: nobody is in g_sync
    if ((g_sync_count > 0 && pthread_barrier_destroy(&g_sync)) ||
        pthread_barrier_init(&g_sync, NULL, (unsigned)n)) {
      fprintf(stderr, "flysim: cannot create the lanes' barrier\n");
      exit(1);
    }
    g_sync_count = n;
  }
  g_fn = fn;
  g_arg = arg;
  pthread_barrier_wait(&g_start);
  pthread_barrier_wait(&g_done);
  account(); // the job's last phase (the lanes wait for the next job)
}
