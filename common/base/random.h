// A seeded pseudo-random sequence (splitmix64) for reproducible test and check
// worlds: one global state, not thread-safe.
#ifndef FLYSIM_COMMON_BASE_RANDOM_H
#define FLYSIM_COMMON_BASE_RANDOM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Restart the sequence from seed.
void fs_random_seed(uint64_t seed);

/// The next number, uniform in [0, 1).
double fs_random_uniform(void);

#ifdef __cplusplus
}
#endif
#endif
