// Per-world random values (generate/sample.h).
#include "generate/sample.h"

#include <math.h>

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t hash4(uint64_t seed, uint64_t world, uint64_t stream, uint64_t k) {
  uint64_t h = mix(seed + 0x9e3779b97f4a7c15ULL);
  h = mix(h ^ (world + 0x632be59bd9b4e019ULL));
  h = mix(h ^ (stream + 0x85ebca77c2b2ae63ULL));
  return mix(h ^ (k + 0xc2b2ae3d27d4eb4fULL));
}

double fs_gen_uniform(uint64_t seed, uint64_t world, uint64_t stream, uint64_t k) {
  return (double)(hash4(seed, world, stream, k) >> 11) * 0x1.0p-53;
}

double fs_gen_normal(uint64_t seed, uint64_t world, uint64_t stream, uint64_t k) {
  double u1 = fs_gen_uniform(seed, world, stream, 2 * k);
  double u2 = fs_gen_uniform(seed, world, stream, 2 * k + 1);
  return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2); // 1 - u1 in (0, 1]
}

double fs_dist_sample(const fsDist* d, uint64_t seed, int w, int stream) {
  switch (d->kind) {
  case FS_DIST_UNIFORM:
    return d->a + (d->b - d->a) * fs_gen_uniform(seed, (uint64_t)w, (uint64_t)stream, 0);
  case FS_DIST_NORMAL:
    return d->a + d->b * fs_gen_normal(seed, (uint64_t)w, (uint64_t)stream, 0);
  case FS_DIST_LIST: {
    int i = (int)(fs_gen_uniform(seed, (uint64_t)w, (uint64_t)stream, 0) * d->nlist);
    return d->list[i < d->nlist ? i : d->nlist - 1];
  }
  default:
    return d->a;
  }
}

void fs_gen_sample_world(const fsGenSpec* s, int w, double* p) {
  for (int a = 0; a < FS_NAXIS; a++) p[a] = fs_dist_sample(&s->axis[a], s->seed, w, a);
  p[FS_AXIS_CLIP_FILE] = floor(p[FS_AXIS_CLIP_FILE] + 0.5);
  p[FS_AXIS_CLIP_START] = floor(p[FS_AXIS_CLIP_START]);
}
