// The fuzz targets' shared driver: one target a program (fuzz_clip, fuzz_cli, fuzz_model,
// fuzz_spec), each a function that takes one input's bytes and says whether flysim
// behaved: accepted it into a consistent result, or refused it with a message that names
// the input and a fix. The driver (fuzz.c) feeds it the committed seed corpus
// (tests/fuzz/corpus/<target>/) and then seeded mutations of it; nothing may crash, hang,
// leak or read out of bounds (the AddressSanitizer build runs the same programs).
//
//   fuzz_clip CORPUS_DIR           the ctest run: the corpus, then the target's iterations
//   FLYSIM_FUZZ_SEED=S             another seed (default: the target's, printed)
//   FLYSIM_FUZZ_ITERATIONS=N       N mutated inputs instead
//   FLYSIM_FUZZ_SECONDS=T          mutate for T seconds (a longer developer run)
//   fuzz_clip FILE                 one input alone (a failing input the driver saved)
//
// Under -DFLYSIM_LIBFUZZER=ON (clang) the same targets build as libFuzzer programs
// (LLVMFuzzerTestOneInput): `build/tests/fuzz/fuzz_clip tests/fuzz/corpus/clip`.
#ifndef FLYSIM_TESTS_FUZZ_FUZZ_H
#define FLYSIM_TESTS_FUZZ_FUZZ_H

#include <stddef.h>

/// What a target made of one input.
enum { FS_FUZZ_ACCEPTED = 0, FS_FUZZ_REFUSED = 1, FS_FUZZ_BAD = -1 };

typedef struct fsFuzzTarget {
  const char* name;     // "fuzz_clip": its messages and the folder of failing inputs
  unsigned seed;        // the default seed
  int iterations;       // mutated inputs in a ctest run (a few seconds, a minute under ASan)
  const char* alphabet; // bytes an insertion draws from (text formats' structure); NULL: any
  /// Once before the first input: temporary files, extra seeds through add (an input
  /// made at run time, e.g. an MJB of this MuJoCo). 0, or -1 (the run fails).
  int (*setup)(void (*add)(const unsigned char* data, size_t n));
  /// One input: FS_FUZZ_ACCEPTED, FS_FUZZ_REFUSED (with a clear message) or FS_FUZZ_BAD
  /// (what was wrong printed to stderr).
  int (*one)(const unsigned char* data, size_t n);
} fsFuzzTarget;

/// Each target program defines its target.
extern const fsFuzzTarget fs_fuzz_target;

/// Whether an error message is clear: it starts with `subject` (the file or option the
/// input gave) and says a fix ("fix:" or "fix " or "see flysim ... --help"). Prints the
/// message and why to stderr when it is not.
int fs_fuzz_clear_message(const char* msg, const char* subject);

/// A fresh temporary folder for the target's files (removed at exit).
const char* fs_fuzz_tmpdir(void);

/// Write n bytes to path; 0 or -1.
int fs_fuzz_write_file(const char* path, const unsigned char* data, size_t n);

#endif
