#include "common/base/random.h"

static uint64_t g_state = 1;

void fs_random_seed(uint64_t seed) {
  g_state = seed;
}

double fs_random_uniform(void) {
  uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
