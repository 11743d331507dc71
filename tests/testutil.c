#include "tests/testutil.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/inputs/model.h"
#include "common/base/random.h"

#ifndef FLYSIM_SOURCE_DIR
#define FLYSIM_SOURCE_DIR "."
#endif
#ifndef FLYSIM_ASSETS_DIR
#define FLYSIM_ASSETS_DIR "assets"
#endif

int fs_test_failures = 0;

int fs_test_small(void) {
  static int small = -1;
  if (small < 0) {
    const char* s = getenv("FLYSIM_TEST_SMALL");
    small = s && !strcmp(s, "1");
    if (small) printf("small mode (FLYSIM_TEST_SMALL=1): fewer worlds, steps and cases\n");
  }
  return small;
}

int fs_test_finish(const char* name) {
  const char* mode = fs_test_small() ? " (small mode)" : "";
  if (fs_test_failures) {
    fprintf(stderr, "%s: FAILED (%d checks)%s\n", name, fs_test_failures, mode);
    return 1;
  }
  printf("%s: passed%s\n", name, mode);
  return 0;
}

const char* fs_test_tmpdir(const char* name) {
  static char buf[8][512];
  static int next = 0;
  char* out = buf[next++ % 8];
  const char* base = getenv("TMPDIR");
  snprintf(out, 512, "%s/flysim-%s-XXXXXX", base && base[0] ? base : "/tmp", name);
  if (!mkdtemp(out)) {
    perror("mkdtemp");
    exit(1);
  }
  return out;
}

const char* fs_test_model(const char* file) {
  static char buf[8][1024];
  static int next = 0;
  char* out = buf[next++ % 8];
  const char* env = getenv("FLYSIM_SOURCE_DIR"); // a copy of the tree elsewhere
  snprintf(out, 1024, "%s/tests/models/%s", env && env[0] ? env : FLYSIM_SOURCE_DIR, file);
  return out;
}

const char* fs_test_asset(const char* file) {
  static char buf[8][1024];
  static int next = 0;
  char* out = buf[next++ % 8];
  const char* env = getenv("FLYSIM_ASSETS");
  snprintf(out, 1024, "%s/%s", env && env[0] ? env : FLYSIM_ASSETS_DIR, file);
  return out;
}

void fs_test_seed(uint64_t seed) {
  fs_random_seed(seed);
  printf("seed %llu\n", (unsigned long long)seed);
}

double fs_test_uniform(void) {
  return fs_random_uniform();
}

double fs_test_sym(void) {
  return 2 * fs_random_uniform() - 1;
}

int fs_test_pick(int n) {
  int k = (int)(fs_random_uniform() * n);
  return k < n ? k : n - 1;
}

mjModel* fs_test_load_model(const char* path) {
  fsError err;
  mjModel* m = fs_model_load(path, &err);
  if (!m) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  return m;
}

int fs_test_write_targets(const char* path, int T, int A, const char* const* names,
                          const double* values, double timestep) {
  int rc = -1;
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return -1;
  hsize_t dims[2] = {(hsize_t)T, (hsize_t)A}, na = (hsize_t)A;
  hid_t s2 = H5Screate_simple(2, dims, NULL);
  hid_t d = H5Dcreate2(f, "targets", H5T_IEEE_F64LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, H5T_VARIABLE);
  hid_t s1 = H5Screate_simple(1, &na, NULL);
  hid_t dn = H5Dcreate2(f, "dof_names", st, s1, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t sa = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, "timestep", H5T_IEEE_F64LE, sa, H5P_DEFAULT, H5P_DEFAULT);
  if (s2 >= 0 && d >= 0 && st >= 0 && s1 >= 0 && dn >= 0 && sa >= 0 && a >= 0 &&
      H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0 &&
      H5Dwrite(dn, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0 &&
      H5Awrite(a, H5T_NATIVE_DOUBLE, &timestep) >= 0)
    rc = 0;
  H5Aclose(a);
  H5Sclose(sa);
  H5Dclose(dn);
  H5Sclose(s1);
  H5Tclose(st);
  H5Dclose(d);
  H5Sclose(s2);
  if (H5Fclose(f) < 0) rc = -1;
  return rc;
}

int fs_test_run(const char* cmd, char* out, size_t n) {
  FILE* p = popen(cmd, "r");
  if (!p) return -1;
  size_t used = 0;
  char tmp[4096];
  size_t k;
  while ((k = fread(tmp, 1, sizeof tmp, p)) > 0) {
    if (out && used + 1 < n) {
      size_t c = k < n - 1 - used ? k : n - 1 - used;
      memcpy(out + used, tmp, c);
      used += c;
    }
  }
  if (out && n) out[used] = 0;
  int st = pclose(p);
  if (st == -1) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
