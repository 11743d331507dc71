// Small test helpers: checks that print where and why they failed, seeded random
// numbers that print their seed, temporary folders, and targets files.
//
// A test program returns 0 (pass), 1 (fail) or 77 (skipped: ctest reports it so).
#ifndef FLYSIM_TESTS_TESTUTIL_H
#define FLYSIM_TESTS_TESTUTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#define FS_TEST_SKIP 77

extern int fs_test_failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
      fs_test_failures++;                                                                          \
    }                                                                                              \
  } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);                     \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      fs_test_failures++;                                                                          \
    }                                                                                              \
  } while (0)

/// Fails (and prints both) unless haystack contains needle.
#define CHECK_CONTAINS(haystack, needle)                                                           \
  CHECK_MSG(strstr((haystack), (needle)) != NULL, "expected \"%s\" in \"%s\"", (needle), (haystack))

#define CHECK_NEAR(a, b, tol)                                                                      \
  CHECK_MSG(fabs((double)(a) - (double)(b)) <= (tol), "%.17g vs %.17g (tol %g)", (double)(a),      \
            (double)(b), (double)(tol))

/// End of main: print a verdict (naming the small mode when it is on) and return the
/// exit status.
int fs_test_finish(const char* name);

/// The GPU tests' small mode, FLYSIM_TEST_SMALL=1 in the environment: fewer worlds, steps
/// and cases, for the GPU simulator (bench/gpusim/gpusim_check.sh runs the device code on the
/// CPU at about 0.6 M instructions a second). 1 when on (said once on stdout), else 0.
int fs_test_small(void);

/// 1 in the sanitizers' build (scripts/test.sh --sanitize: AddressSanitizer), else 0. A test
/// that runs many worlds and steps for its statistics runs every case at a few worlds and
/// steps there: the sanitizers check the code paths, the Release build the numbers.
#if defined(__SANITIZE_ADDRESS__)
#define FS_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FS_TEST_SANITIZED 1
#endif
#endif
#ifndef FS_TEST_SANITIZED
#define FS_TEST_SANITIZED 0
#endif

/// Fresh temporary folder (removed by the OS's tmp cleaning; tests leave it for
/// inspection on failure).
const char* fs_test_tmpdir(const char* name);

/// Path of a file in the source tree's tests/models folder ($FLYSIM_SOURCE_DIR, else
/// the tree the test was built from).
const char* fs_test_model(const char* file);

/// Path of an exported asset (FLYSIM_ASSETS or the build's assets folder).
const char* fs_test_asset(const char* file);

/// Deterministic random numbers (splitmix64); fs_test_seed prints the seed.
void fs_test_seed(uint64_t seed);
double fs_test_uniform(void); // [0, 1) (common/base/random.h's sequence)
double fs_test_sym(void);     // [-1, 1), from the same sequence
int fs_test_pick(int n);      // 0 to n - 1, each as likely, from the same sequence

/// Load a model (MJCF or MJB), failing the test program on error.
mjModel* fs_test_load_model(const char* path);

/// Write a targets file: /targets (T x A) float64, /dof_names (A), attribute
/// `timestep`. Returns 0 on success.
int fs_test_write_targets(const char* path, int T, int A, const char* const* names,
                          const double* values, double timestep);

/// Run a shell command; returns its exit status (or -1). Output is captured into
/// out (if not NULL, up to n bytes, NUL-terminated).
int fs_test_run(const char* cmd, char* out, size_t n);

#endif
