// Replay input: malformed files are clear errors (file, dataset, problem, fix), and
// resampling reproduces what FlyGym's MotionSnippet does (SciPy's cubic interp1d).
#include <hdf5.h>
#include <unistd.h>

#include "common/inputs/resample.h"
#include "common/inputs/targets.h"
#include "tests/testutil.h"

static const char* path_in(const char* dir, const char* name) {
  static char buf[4][512];
  static int next = 0;
  char* out = buf[next++ % 4];
  snprintf(out, 512, "%s/%s", dir, name);
  return out;
}

static void expect_error(const char* path, const char* a, const char* b) {
  fsTargets t;
  fsError err = {{0}, FS_OK};
  CHECK_MSG(fs_targets_load(path, &t, &err) != 0, "%s loaded but should not", path);
  CHECK_CONTAINS(err.msg, path);
  if (a) CHECK_CONTAINS(err.msg, a);
  if (b) CHECK_CONTAINS(err.msg, b);
}

static const char* kNames[3] = {"a", "b", "c"};

static void test_errors(const char* dir) {
  double v[6 * 3];
  for (int i = 0; i < 18; i++) v[i] = 0.01 * i;

  expect_error(path_in(dir, "missing.h5"), "cannot read", "fix:");

  const char* text = path_in(dir, "text.h5");
  FILE* f = fopen(text, "w");
  fputs("not hdf5", f);
  fclose(f);
  expect_error(text, "not an HDF5 file", "/targets");

  // /targets a group, not a dataset; a file cut short: said so, with the fix (issue 46: raw
  // HDF5 text)
  const char* group = path_in(dir, "group.h5");
  hid_t g = H5Fcreate(group, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(H5Gcreate2(g, "targets", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Fclose(g);
  expect_error(group, "'/targets' is not a dataset (a group?)", "fix:");
  const char* cut = path_in(dir, "cut.h5");
  CHECK(fs_test_write_targets(cut, 6, 3, kNames, v, 0.01) == 0);
  FILE* c = fopen(cut, "r+");
  fseek(c, 0, SEEK_END);
  long size = ftell(c);
  fclose(c);
  CHECK(truncate(cut, size / 2) == 0);
  expect_error(cut, "truncated", "fix: the file is damaged or incomplete");

  // NaN and infinity: the row, the column and its name.
  const char* nan = path_in(dir, "nan.h5");
  v[4 * 3 + 1] = NAN;
  CHECK(fs_test_write_targets(nan, 6, 3, kNames, v, 0.01) == 0);
  expect_error(nan, "NaN at row 4, column 1 (b)", "finite");
  v[4 * 3 + 1] = INFINITY;
  CHECK(fs_test_write_targets(nan, 6, 3, kNames, v, 0.01) == 0);
  expect_error(nan, "infinite value at row 4, column 1 (b)", NULL);
  v[4 * 3 + 1] = 0.0;

  // Names that do not match the columns.
  const char* names2 = path_in(dir, "names2.h5");
  CHECK(fs_test_write_targets(names2, 9, 2, kNames, v, 0.01) == 0);
  // (a (9 x 2) table with 2 names is fine; rewrite its names with 3 entries)
  hid_t h = H5Fopen(names2, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(h, "dof_names", H5P_DEFAULT);
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, H5T_VARIABLE);
  hsize_t n3 = 3;
  hid_t sp = H5Screate_simple(1, &n3, NULL);
  hid_t d = H5Dcreate2(h, "dof_names", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, kNames);
  H5Dclose(d);
  H5Sclose(sp);
  H5Tclose(st);
  H5Fclose(h);
  expect_error(names2, "shape (9, 2)", "'/dof_names' names 3 DoFs");

  // Duplicate names.
  const char* dup = path_in(dir, "dup.h5");
  const char* dup_names[3] = {"a", "b", "a"};
  CHECK(fs_test_write_targets(dup, 6, 3, dup_names, v, 0.01) == 0);
  expect_error(dup, "names 'a' twice", NULL);

  // Too few rows, a 3-D table, no timestep, no /targets.
  const char* short_ = path_in(dir, "short.h5");
  CHECK(fs_test_write_targets(short_, 3, 3, kNames, v, 0.01) == 0);
  expect_error(short_, "3 rows", "at least 4");

  const char* cube = path_in(dir, "cube.h5");
  h = H5Fcreate(cube, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[3] = {2, 3, 3};
  sp = H5Screate_simple(3, dims, NULL);
  d = H5Dcreate2(h, "targets", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dclose(d);
  H5Sclose(sp);
  H5Fclose(h);
  expect_error(cube, "rank 3", "2-D");

  const char* nodt = path_in(dir, "nodt.h5");
  CHECK(fs_test_write_targets(nodt, 6, 3, kNames, v, 0.01) == 0);
  h = H5Fopen(nodt, H5F_ACC_RDWR, H5P_DEFAULT);
  H5Adelete(h, "timestep");
  H5Fclose(h);
  expect_error(nodt, "no attribute 'timestep'", "fix:");

  const char* negdt = path_in(dir, "negdt.h5");
  CHECK(fs_test_write_targets(negdt, 6, 3, kNames, v, -1.0) == 0);
  expect_error(negdt, "'timestep' is -1", NULL);

  const char* empty = path_in(dir, "empty.h5");
  h = H5Fcreate(empty, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(h);
  expect_error(empty, "no dataset '/targets'", "fix:");
}

// A not-a-knot cubic spline reproduces any cubic exactly; past the last sample the
// last value is held (FlyGym's fill_value), and the count is numpy.arange's.
// A clip whose timestep attribute is absurd (1e6 s between rows): resampled to 0.1 ms it
// would be 1e11 rows; the error names the file, the attribute and the fix (was "out of
// memory ... fix: use fewer worlds or steps").
static void test_resample_absurd_timestep(const char* dir) {
  double v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const char* path = path_in(dir, "slow.h5");
  const char* names[2] = {"a", "b"};
  CHECK(fs_test_write_targets(path, 4, 2, names, v, 1e6) == 0);
  fsTargets t;
  fsError err = {{0}, FS_OK};
  CHECK_MSG(fs_targets_load(path, &t, &err) == 0, "%s", err.msg);
  CHECK(fs_targets_resample(&t, 1e-4, &err) != 0);
  CHECK_CONTAINS(err.msg, path);
  CHECK_CONTAINS(err.msg, "attribute 'timestep' 1e+06 s");
  CHECK_CONTAINS(err.msg, "fix: the attribute is the seconds between rows");
  fs_targets_free(&t);
}

static void test_resample_cubic(const char* dir) {
  enum { N = 66 };
  const double fps = 330.0;
  double v[N * 2];
  for (int i = 0; i < N; i++) {
    double t = i / fps;
    v[2 * i] = 0.3 - 2.0 * t + 5.0 * t * t - 40.0 * t * t * t;
    v[2 * i + 1] = sin(9.0 * t);
  }
  const char* path = path_in(dir, "poly.h5");
  const char* names[2] = {"cubic", "sine"};
  CHECK(fs_test_write_targets(path, N, 2, names, v, 1.0 / fps) == 0);
  fsTargets t;
  fsError err = {{0}, FS_OK};
  CHECK_MSG(fs_targets_load(path, &t, &err) == 0, "%s", err.msg);
  CHECK(fs_targets_resample(&t, 1e-4, &err) == 0);
  CHECK_MSG(t.nstep == 2000, "%d rows", t.nstep); // numpy.arange(0, 66/330, 1e-4)
  CHECK(t.timestep == 1e-4 && fabs(t.source_timestep - 1.0 / fps) < 1e-18);
  double worst = 0, worst_sine = 0;
  for (int k = 0; k < t.nstep; k++) {
    double s = k * 1e-4;
    double expect =
        s <= (N - 1) / fps ? 0.3 - 2.0 * s + 5.0 * s * s - 40.0 * s * s * s : v[2 * (N - 1)];
    worst = fmax(worst, fabs(t.value[2 * k] - expect));
    if (s <= (N - 1) / fps)
      worst_sine = fmax(worst_sine, fabs(t.value[2 * k + 1] - sin(9.0 * s)));
    else
      CHECK(t.value[2 * k + 1] == v[2 * (N - 1) + 1]);
  }
  CHECK_MSG(worst < 1e-13, "cubic reproduced to %.3g", worst);
  CHECK_MSG(worst_sine < 1e-6 && worst_sine > 0, "sine interpolated to %.3g", worst_sine);
  // Samples fall on the input grid exactly where the grids meet.
  CHECK(t.value[0] == v[0]);
  fs_targets_free(&t);

  CHECK(fs_resample_count(660, 1.0 / 330.0, 1e-4) == 20000);
  CHECK(fs_resample_count(10, 0.1, 0.3) == 4);
  CHECK(fs_resample_count(1, 1.0, 1e-4) == 10000);
}

// The recorded clip at 330 Hz, resampled by flysim, equals FlyGym's own resampling
// (MotionSnippet.get_joint_angles at 1e-4 s), both exported by scripts/export_assets.py.
static void test_resample_matches_flygym(void) {
  fsTargets coarse, fine;
  fsError err = {{0}, FS_OK};
  CHECK_MSG(fs_targets_load(fs_test_asset("walking_clip_330hz.h5"), &coarse, &err) == 0,
            "%s (run scripts/setup.sh)", err.msg);
  CHECK_MSG(fs_targets_load(fs_test_asset("walking_clip.h5"), &fine, &err) == 0, "%s", err.msg);
  if (!coarse.value || !fine.value) return;
  CHECK(coarse.nstep == 660 && coarse.ndof == 42);
  CHECK(fs_targets_resample(&coarse, fine.timestep, &err) == 0);
  CHECK_MSG(coarse.nstep == fine.nstep, "%d vs %d", coarse.nstep, fine.nstep);
  double worst = 0, span = 0;
  int at = 0;
  for (long i = 0; i < (long)fine.nstep * fine.ndof; i++) {
    double e = fabs(coarse.value[i] - fine.value[i]);
    if (e > worst) worst = e, at = (int)i;
    span = fmax(span, fabs(fine.value[i]));
  }
  printf("330 Hz clip resampled vs FlyGym's: max |error| %.3g rad at row %d (angles up to %.2f "
         "rad)\n",
         worst, at / fine.ndof, span);
  CHECK_MSG(worst < 1e-12, "max error %.3g rad", worst);
  for (int a = 0; a < fine.ndof; a++) CHECK(!strcmp(coarse.names[a], fine.names[a]));
  fs_targets_free(&coarse);
  fs_targets_free(&fine);
}

int main(void) {
  const char* dir = fs_test_tmpdir("targets");
  test_errors(dir);
  test_resample_cubic(dir);
  test_resample_absurd_timestep(dir);
  test_resample_matches_flygym();
  return fs_test_finish("test_targets");
}
