// Per-world random values for flysim generate: counter-based, so that world w's
// values depend only on (seed, w, stream, k) -- not on threads, blocks, processes or
// resumes. A value is a hash of its key (splitmix64's mixing), never a position in a
// shared sequence.
#ifndef FLYSIM_GENERATE_SAMPLE_H
#define FLYSIM_GENERATE_SAMPLE_H

#include <stdint.h>

#include "generate/spec.h"

/// Streams beyond the axes (an axis's stream is its fsGenAxis).
enum {
  FS_STREAM_TARGET_NOISE = 1000, // k = step * A + dof
  FS_STREAM_POSE_NOISE,          // k = qpos address
  FS_STREAM_VELOCITY_NOISE,      // k = dof
};

/// Uniform in [0, 1) from the key (53 bits).
double fs_gen_uniform(uint64_t seed, uint64_t world, uint64_t stream, uint64_t k);

/// Standard normal from the key (Box-Muller on two uniforms of it).
double fs_gen_normal(uint64_t seed, uint64_t world, uint64_t stream, uint64_t k);

/// One value of d for world w (stream: the axis).
double fs_dist_sample(const fsDist* d, uint64_t seed, int w, int stream);

/// Every axis's value for world w into p (FS_NAXIS; NaN: the model's value kept).
void fs_gen_sample_world(const fsGenSpec* s, int w, double* p);

#endif
