// Monotonic wall clock for throughput measurements.
#ifndef FLYSIM_COMMON_SYS_CLOCK_H
#define FLYSIM_COMMON_SYS_CLOCK_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <time.h>

/// Seconds on CLOCK_MONOTONIC.
static inline double fs_clock_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
