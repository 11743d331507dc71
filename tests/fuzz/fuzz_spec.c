// flysim generate's spec reader under a seeded mutation loop: from the example spec
// and a few edge cases, random byte edits, insertions of YAML's structural characters,
// deletions, line duplications and truncations. Every input must either parse into a
// spec that passes its own checks or fail with a message that names the file and a
// fix; nothing may crash, leak or read out of bounds (the ASan build runs this too).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/random.h"
#include "generate/spec.h"
#include "tests/testutil.h"

#define ITERATIONS 4000

static const char* kSeeds[] = {
    NULL, // the example spec
    "worlds: 2\nsteps: 10\nvary:\n  clip:\n    file: {list: [0]}\n",
    "vary:\n  model:\n    kp: {uniform: [1, 2]}\n    gravity_z: {normal: [-9810, 5]}\n",
    "record: [qpos, qvel]\ntargets: [a.h5, b.h5]\nvary: {clip: {file: {list: [0, 1]}}}\n",
    "disable: [contact, gravity]\nseed: 3\nbackend: host\nprecision: f64\n",
};

static const char kAlphabet[] = "{}[]:,-#\n '\"0123456789.eE+xyz&*!|>%@`\t";

static size_t mutate(char* buf, size_t n, size_t cap) {
  int edits = 1 + (int)(fs_random_uniform() * 4);
  for (int e = 0; e < edits; e++) {
    size_t at = n ? (size_t)(fs_random_uniform() * n) : 0;
    char c = kAlphabet[(int)(fs_random_uniform() * (sizeof kAlphabet - 1))];
    switch ((int)(fs_random_uniform() * 5)) {
    case 0: // replace
      if (n) buf[at] = c;
      break;
    case 1: // insert
      if (n + 1 < cap) {
        memmove(buf + at + 1, buf + at, n - at);
        buf[at] = c;
        n++;
      }
      break;
    case 2: // delete a run
      if (n) {
        size_t len = 1 + (size_t)(fs_random_uniform() * 8);
        if (at + len > n) len = n - at;
        memmove(buf + at, buf + at + len, n - at - len);
        n -= len;
      }
      break;
    case 3: { // duplicate the line at `at`
      size_t s = at, t = at;
      while (s > 0 && buf[s - 1] != '\n') s--;
      while (t < n && buf[t] != '\n') t++;
      size_t len = t - s + (t < n);
      if (n + len < cap) {
        memmove(buf + t + (t < n) + len, buf + t + (t < n), n - t - (t < n));
        memcpy(buf + t + (t < n), buf + s, len);
        n += len;
      }
      break;
    }
    default: // truncate
      n = at;
    }
  }
  return n;
}

int main(void) {
  unsigned seed = 20261201u;
  printf("test_spec_fuzz: seed %u, %d inputs\n", seed, ITERATIONS);
  fs_random_seed(seed);
  static char buf[65536];
  int parsed = 0, rejected = 0;
  for (int i = 0; i < ITERATIONS; i++) {
    const char* src = kSeeds[i % (int)(sizeof kSeeds / sizeof *kSeeds)];
    if (!src) src = fs_gen_example_spec();
    size_t n = strlen(src);
    memcpy(buf, src, n);
    n = mutate(buf, n, sizeof buf);
    fsGenSpec s;
    fsError err = {{0}, FS_OK};
    int rc = fs_gen_spec_parse("fuzz.yaml", buf, n, &s, &err);
    if (rc == 0) {
      parsed++;
      CHECK(s.worlds >= 1 && s.steps >= 1 && s.record_every >= 1 && s.record_every <= s.steps &&
            s.record != 0 && s.ntargets >= 1 && s.block_worlds >= 1);
      for (int a = 0; a < FS_NAXIS; a++)
        CHECK(s.axis[a].kind != FS_DIST_LIST || (s.axis[a].nlist > 0 && s.axis[a].list));
    } else {
      rejected++;
      CHECK_MSG(!strncmp(err.msg, "fuzz.yaml", 9) && strstr(err.msg, "fix"),
                "input %d: the message names the file and a fix: %s", i, err.msg);
    }
    fs_gen_spec_free(&s);
  }
  printf("test_spec_fuzz: %d parsed, %d rejected with a message\n", parsed, rejected);
  CHECK(parsed > 0 && rejected > 0);
  return fs_test_finish("test_spec_fuzz");
}
