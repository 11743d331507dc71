// flysim generate's spec reader (generate/spec.c) under mutated specs: the corpus's
// specs and, made at set-up, the example spec (`flysim generate --example-spec`). Every
// input must either parse into a spec that passes its own checks or fail with a message
// that names the file and a fix.
#include <stdio.h>
#include <string.h>

#include "generate/spec.h"
#include "tests/fuzz/fuzz.h"

static int setup(void (*add)(const unsigned char*, size_t)) {
  const char* example = fs_gen_example_spec();
  add((const unsigned char*)example, strlen(example));
  return 0;
}

static int one(const unsigned char* data, size_t n) {
  fsGenSpec s;
  fsError err = {{0}, FS_OK};
  int verdict = FS_FUZZ_REFUSED;
  if (fs_gen_spec_parse("fuzz.yaml", (const char*)data, n, &s, &err) == 0) {
    int ok = s.worlds >= 1 && s.steps >= 1 && s.record_every >= 1 && s.record_every <= s.steps &&
             s.record != 0 && s.ntargets >= 1 && s.block_worlds >= 1;
    for (int a = 0; a < FS_NAXIS; a++)
      ok = ok && (s.axis[a].kind != FS_DIST_LIST || (s.axis[a].nlist > 0 && s.axis[a].list));
    if (!ok) fprintf(stderr, "fuzz_spec: accepted a spec that fails its own checks\n");
    verdict = ok ? FS_FUZZ_ACCEPTED : FS_FUZZ_BAD;
  } else if (!fs_fuzz_clear_message(err.msg, "fuzz.yaml")) {
    verdict = FS_FUZZ_BAD;
  }
  fs_gen_spec_free(&s);
  return verdict;
}

const fsFuzzTarget fs_fuzz_target = {
    "fuzz_spec", 20261201u, 50000, "{}[]:,-#\n '\"0123456789.eE+xyz&*!|>%@`\t", setup, one};
