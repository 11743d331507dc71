// The recorder: values and attributes survive a round trip through the HDF5
// library (as written, trimmed when stopped early, and compressed), a writer
// killed mid-run leaves a file that opens and holds every block it had completed,
// and an h5repack that hangs or fails leaves the file as written, with a message naming it.
#include <hdf5.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/recorder/recorder.h"
#include "tests/testutil.h"

enum { N = 5, C0 = 3, C1 = 2, BLOCK = 8 };

// The value every test writes: a function of (series, step, world, column).
static float value(int k, long step, int w, int c) {
  return (float)(k * 1000.0 + step * 0.5 + w * 10.0 + c * 0.125);
}

static const fsSeriesSpec kSeries[2] = {
    {"alpha", C0, "rad", "first series", "alpha_names"},
    {"beta", C1, "mm", "second series", NULL},
};

static fsRecorder* open_recorder(const char* path, long long nstep, fsError* err) {
  fsRecorderSpec spec = {path, nstep, N, 0, N, BLOCK, 0.25, 2, kSeries};
  return fs_recorder_create(&spec, err);
}

static long long read_steps_dataset(hid_t f) {
  long long v = -1;
  hid_t d = H5Dopen2(f, "steps_recorded", H5P_DEFAULT);
  if (d < 0) return -1;
  H5Dread(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v);
  H5Dclose(d);
  return v;
}

static int append_block(fsRecorder* r, long step0, int nstep, fsError* err) {
  static float a[BLOCK * N * C0], b[BLOCK * N * C1];
  for (int s = 0; s < nstep; s++)
    for (int w = 0; w < N; w++) {
      for (int c = 0; c < C0; c++) a[(s * N + w) * C0 + c] = value(0, step0 + s, w, c);
      for (int c = 0; c < C1; c++) b[(s * N + w) * C1 + c] = value(1, step0 + s, w, c);
    }
  const float* data[2] = {a, b};
  return fs_recorder_append(r, nstep, data, err);
}

static long long read_int_attr(hid_t f, const char* name) {
  long long v = -1;
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  if (a < 0) return -1;
  H5Aread(a, H5T_NATIVE_LLONG, &v);
  H5Aclose(a);
  return v;
}

// Check dataset `name`: chunks of whole blocks, `nfilter` filters, and the expected
// values in its first `complete` steps (rows past them are not data). Returns its
// first dimension.
static long check_series(hid_t f, int k, const char* name, int ncol, long long complete,
                         int nfilter) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  CHECK_MSG(d >= 0, "dataset %s", name);
  if (d < 0) return -1;
  hid_t sp = H5Dget_space(d);
  hsize_t dims[3] = {0};
  CHECK(H5Sget_simple_extent_ndims(sp) == 3);
  H5Sget_simple_extent_dims(sp, dims, NULL);
  CHECK(dims[1] == N && dims[2] == (hsize_t)ncol && (long long)dims[0] >= complete);
  float* buf = calloc(dims[0] * N * (hsize_t)ncol + 1, sizeof(float));
  if (dims[0] > 0) CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
  int bad = 0;
  for (long long s = 0; s < complete; s++)
    for (int w = 0; w < N; w++)
      for (int c = 0; c < ncol; c++)
        if (buf[(s * N + w) * ncol + c] != value(k, (long)s, w, c) && bad++ == 0)
          fprintf(stderr, "%s[%lld, %d, %d] = %g, expected %g\n", name, s, w, c,
                  buf[(s * N + w) * ncol + c], value(k, (long)s, w, c));
  CHECK_MSG(bad == 0, "%s: %d values differ", name, bad);
  hid_t p = H5Dget_create_plist(d);
  hsize_t chunk[3] = {0};
  CHECK(H5Pget_chunk(p, 3, chunk) == 3 && chunk[0] == BLOCK);
  CHECK_MSG(H5Pget_nfilters(p) == nfilter, "%s: %d filters, expected %d", name, H5Pget_nfilters(p),
            nfilter);
  H5Pclose(p);
  free(buf);
  H5Sclose(sp);
  H5Dclose(d);
  return (long)dims[0];
}

static char* read_string_attr(hid_t f, const char* name, char* out, size_t n) {
  out[0] = 0;
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, H5T_VARIABLE);
  H5Tset_cset(st, H5T_CSET_UTF8);
  char* s = NULL;
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  if (a >= 0 && H5Aread(a, st, &s) >= 0 && s) {
    snprintf(out, n, "%s", s);
    H5free_memory(s);
  }
  if (a >= 0) H5Aclose(a);
  H5Tclose(st);
  return out;
}

// Write `done` steps of `planned`, finish with `reason`, and check the file.
static void round_trip(const char* dir, const char* file, long long planned, int done,
                       const char* reason) {
  char path[512], text[64];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  fsError err = {{0}, FS_OK};
  fsRecorder* r = open_recorder(path, planned, &err);
  CHECK_MSG(r != NULL, "%s", err.msg);
  if (!r) return;
  for (int s = 0; s < done; s += BLOCK)
    CHECK(append_block(r, s, done - s < BLOCK ? done - s : BLOCK, &err) == 0);
  CHECK(fs_recorder_steps(r) == done);
  CHECK_MSG(fs_recorder_finish(r, reason, &err) == 0, "%s", err.msg);

  for (int pass = 0; pass < 2; pass++) { // as written, then compressed
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    if (f < 0) return;
    // Trimmed to the recorded steps; values, attributes and /time intact.
    CHECK(check_series(f, 0, "alpha", C0, done, pass ? 2 : 0) == done);
    CHECK(check_series(f, 1, "beta", C1, done, pass ? 2 : 0) == done);
    CHECK(read_int_attr(f, "steps_recorded") == done);
    CHECK(read_steps_dataset(f) == done);
    CHECK(read_int_attr(f, "complete") == !strcmp(reason, "completed"));
    CHECK(read_int_attr(f, "nworld") == N);
    CHECK(!strcmp(read_string_attr(f, "stop_reason", text, sizeof text), reason));
    double dt = 0, t[64];
    hid_t a = H5Aopen(f, "timestep", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_DOUBLE, &dt);
    H5Aclose(a);
    CHECK(dt == 0.25);
    hid_t d = H5Dopen2(f, "time", H5P_DEFAULT);
    CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) >= 0);
    for (int i = 0; i < done; i++) CHECK(t[i] == 0.25 * i);
    H5Dclose(d);
    hid_t alpha = H5Dopen2(f, "alpha", H5P_DEFAULT);
    CHECK(!strcmp(read_string_attr(alpha, "units", text, sizeof text), "rad"));
    CHECK(!strcmp(read_string_attr(alpha, "columns", text, sizeof text), "alpha_names"));
    H5Dclose(alpha);
    H5Fclose(f);
    if (pass == 0) {
      const char* names[2] = {"alpha", "beta"};
      int z = fs_h5_compress(path, 2, names, &err);
      CHECK_MSG(z == 0, "%s", err.msg);
      if (z) return;
    }
  }
}

// The creating directory does not exist: a clear error with the path and the fix.
static void test_unwritable(void) {
  fsError err = {{0}, FS_OK};
  fsRecorder* r = open_recorder("/nonexistent/dir/x.h5", 10, &err);
  CHECK(r == NULL);
  CHECK_CONTAINS(err.msg, "/nonexistent/dir/x.h5");
  CHECK_CONTAINS(err.msg, "fix:");
}

// A child writes blocks as fast as it can and reports each completed append on a
// pipe; the parent SIGKILLs it at a random moment. The file must open with plain
// HDF5 and hold /steps_recorded steps of correct values, at least every block the
// child reported before it died.
static void test_killed_writer(const char* dir, int trial) {
  char path[512];
  snprintf(path, sizeof path, "%s/killed%d.h5", dir, trial);
  const long long planned = 4096;
  int fds[2];
  CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    fsError err;
    fsRecorder* r = open_recorder(path, planned, &err);
    if (!r) _exit(3);
    for (long step = 0; step + BLOCK <= planned; step += BLOCK) {
      if (append_block(r, step, BLOCK, &err)) _exit(4);
      long done = step + BLOCK;
      if (write(fds[1], &done, sizeof done) != sizeof done) _exit(5);
    }
    _exit(6);
  }
  close(fds[1]);
  long reported = 0, done;
  int want = 3 + (int)(fs_test_uniform() * 40); // blocks before the kill
  for (int i = 0; i < want && read(fds[0], &done, sizeof done) == sizeof done; i++) reported = done;
  usleep((useconds_t)(fs_test_uniform() * 3000)); // land anywhere inside an append
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  while (read(fds[0], &done, sizeof done) == sizeof done) reported = done;
  close(fds[0]);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK_MSG(f >= 0, "trial %d: killed writer's file does not open", trial);
  if (f < 0) return;
  long long recorded = read_steps_dataset(f);
  CHECK_MSG(recorded >= reported && recorded % BLOCK == 0,
            "trial %d: %lld steps recorded, %ld reported done", trial, recorded, reported);
  CHECK(check_series(f, 0, "alpha", C0, recorded, 0) == planned);
  CHECK(check_series(f, 1, "beta", C1, recorded, 0) == planned);
  CHECK(read_int_attr(f, "complete") == 0);
  H5Fclose(f);
}

// An h5repack (a script on PATH ahead of the real one: `body` after its shebang; its
// arguments are ... path tmp) that hangs, fails or dies: fs_h5_compress returns within its
// limit (FLYSIM_H5REPACK_TIMEOUT `limit`), its message names the file and `says`, and the
// file is as written, with no partial copy left beside it.
static void fake_repack(const char* dir, const char* name, const char* body, const char* limit,
                        const char* says) {
  char bin[512], tool[600], path[512], tmp[600], *old_path = getenv("PATH");
  snprintf(bin, sizeof bin, "%s/%s-bin", dir, name);
  snprintf(tool, sizeof tool, "%s/h5repack", bin);
  snprintf(path, sizeof path, "%s/%s.h5", dir, name);
  snprintf(tmp, sizeof tmp, "%s.repack", path);
  mkdir(bin, 0755);
  FILE* f = fopen(tool, "w");
  CHECK(f != NULL);
  if (!f) return;
  fprintf(f, "#!/bin/sh\n%s\n", body);
  fclose(f);
  chmod(tool, 0755);
  fsError err = {{0}, FS_OK};
  fsRecorder* r = open_recorder(path, 2 * BLOCK, &err);
  CHECK_MSG(r != NULL, "%s", err.msg);
  if (!r) return;
  CHECK(append_block(r, 0, BLOCK, &err) == 0 && append_block(r, BLOCK, BLOCK, &err) == 0);
  CHECK_MSG(fs_recorder_finish(r, "completed", &err) == 0, "%s", err.msg);

  char *saved = strdup(old_path ? old_path : "/usr/bin:/bin"), search[2048];
  snprintf(search, sizeof search, "%s:%s", bin, saved);
  setenv("PATH", search, 1);
  setenv("FLYSIM_H5REPACK_TIMEOUT", limit, 1);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  const char* names[2] = {"alpha", "beta"};
  int rc = fs_h5_compress(path, 2, names, &err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  setenv("PATH", saved, 1);
  unsetenv("FLYSIM_H5REPACK_TIMEOUT");
  free(saved);
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("%s: %.2f s: %s\n", name, seconds, err.msg);
  CHECK_MSG(rc != 0, "%s: fs_h5_compress succeeded", name);
  CHECK_MSG(seconds < 20, "%s: fs_h5_compress took %.1f s", name, seconds);
  CHECK_CONTAINS(err.msg, path);
  CHECK_CONTAINS(err.msg, says);
  CHECK_CONTAINS(err.msg, "left uncompressed");
  CHECK_MSG(access(tmp, F_OK) != 0, "%s: %s left behind", name, tmp);
  hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK_MSG(h >= 0, "%s: the file does not open after a failed repack", name);
  if (h < 0) return;
  CHECK(check_series(h, 0, "alpha", C0, 2 * BLOCK, 0) == 2 * BLOCK);
  CHECK(check_series(h, 1, "beta", C1, 2 * BLOCK, 0) == 2 * BLOCK);
  CHECK(read_int_attr(h, "complete") == 1);
  H5Fclose(h);
}

static void test_repack_fails(const char* dir) {
  // hangs after writing part of its copy: stopped at the limit
  fake_repack(dir, "hung", "echo partial > \"$6\"; exec sleep 120", "1",
              "h5repack did not finish within 1 s and was stopped");
  // fails, and dies of a signal, each after writing part of its copy
  fake_repack(dir, "failed", "echo partial > \"$6\"; exit 3", "600",
              "h5repack exited with status 3");
  fake_repack(dir, "killed", "echo partial > \"$6\"; kill -TERM $$", "600",
              "h5repack was killed by signal 15");
  // says it succeeded but wrote no copy
  fake_repack(dir, "nocopy", "exit 0", "600",
              "cannot replace it with its compressed copy: No such file or directory");
  // a limit that is no number: not run at all
  fake_repack(dir, "badlimit", "exit 0", "soon", "FLYSIM_H5REPACK_TIMEOUT='soon'");
}

int main(void) {
  fs_test_seed(20261129);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const char* dir = fs_test_tmpdir("recorder");
  round_trip(dir, "complete.h5", 2 * BLOCK + 3, 2 * BLOCK + 3, "completed");
  round_trip(dir, "interrupted.h5", 5 * BLOCK, 2 * BLOCK + 3, "interrupted by signal 2");
  test_unwritable();
  test_repack_fails(dir);
  for (int trial = 0; trial < 30; trial++) test_killed_writer(dir, trial);
  return fs_test_finish("test_recorder");
}
