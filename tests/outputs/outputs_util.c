#include "tests/outputs/outputs_util.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mujoco/mujoco.h>

#include "common/recorder/h5util.h"
#include "common/profiling/perf_profile.h"
#include "common/profiling/profile_nsys.h"
#include "common/outputs/render.h"
#include "tests/testutil.h"

#ifndef FLYSIM_BINARY
#define FLYSIM_BINARY "flysim"
#endif

const char* const out_walker_dofs[6] = {"l_yaw", "l_pitch", "l_knee", "r_yaw", "r_pitch", "r_knee"};

int out_write_walker_targets(const char* path, int T) {
  double* v = malloc(sizeof(double) * (size_t)T * 6);
  if (!v) return -1;
  for (int k = 0; k < T; k++)
    for (int a = 0; a < 6; a++) v[k * 6 + a] = 0.4 * sin(2 * M_PI * 8.0 * k * 1e-4 + a) + 0.05 * a;
  int rc = fs_test_write_targets(path, T, 6, (const char* const*)out_walker_dofs, v, 1e-4);
  free(v);
  return rc;
}

int out_flysim(const char* env, const char* args, char** out) {
  size_t n = strlen(env) + strlen(args) + 4096;
  char* cmd = malloc(n);
  *out = calloc(FS_OUT_LEN, 1);
  snprintf(cmd, n, "env %s '%s' replay %s 2>&1", env, FLYSIM_BINARY, args);
  printf("$ %s\n", cmd);
  int rc = fs_test_run(cmd, *out, FS_OUT_LEN);
  printf("%s[exit %d]\n", *out, rc);
  fflush(stdout);
  free(cmd);
  return rc;
}

static hid_t open_dataset(const char* h5, const char* name, hid_t* file) {
  fs_h5_quiet();
  *file = H5Fopen(h5, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (*file < 0) return -1;
  if (H5Lexists(*file, name, H5P_DEFAULT) <= 0) {
    H5Fclose(*file);
    return -1;
  }
  return H5Dopen2(*file, name, H5P_DEFAULT);
}

// Read a whole dataset as mtype (elem bytes each); dims into dims, rank into *rank.
static void* read_all(const char* h5, const char* name, hid_t mtype, size_t elem, int* rank,
                      long long dims[3]) {
  hid_t f, d = open_dataset(h5, name, &f);
  if (d < 0) return NULL;
  hid_t s = H5Dget_space(d);
  hsize_t hd[3] = {1, 1, 1};
  int r = H5Sget_simple_extent_ndims(s);
  H5Sget_simple_extent_dims(s, hd, NULL);
  size_t total = 1;
  for (int i = 0; i < 3; i++) {
    if (dims) dims[i] = i < r ? (long long)hd[i] : 1;
    if (i < r) total *= hd[i];
  }
  if (rank) *rank = r;
  void* buf = malloc((total ? total : 1) * elem);
  if (buf && total && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    free(buf);
    buf = NULL;
  }
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return buf;
}

float* out_read_floats(const char* h5, const char* name, int* rank, long long dims[3]) {
  return read_all(h5, name, H5T_NATIVE_FLOAT, sizeof(float), rank, dims);
}

double* out_read_doubles(const char* h5, const char* name, long long* n) {
  long long dims[3];
  int rank = 0;
  double* v = read_all(h5, name, H5T_NATIVE_DOUBLE, sizeof(double), &rank, dims);
  *n = v ? dims[0] * dims[1] * dims[2] : 0;
  return v;
}

long long* out_read_ints(const char* h5, const char* name, long long* n) {
  long long dims[3];
  int rank = 0;
  long long* v = read_all(h5, name, H5T_NATIVE_LLONG, sizeof(long long), &rank, dims);
  *n = v ? dims[0] * dims[1] * dims[2] : 0;
  return v;
}

char** out_read_strings(const char* h5, const char* name, int* n) {
  fs_h5_quiet();
  *n = 0;
  hid_t f = H5Fopen(h5, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return NULL;
  char** s = NULL;
  fsError err;
  if (fs_h5_read_strings(f, h5, name, &s, n, &err)) {
    printf("%s\n", err.msg);
    s = NULL;
  }
  H5Fclose(f);
  return s;
}

void out_free_strings(char** s, int n) {
  fs_h5_free_strings(s, n);
}

static hid_t open_attr(const char* h5, const char* obj, const char* name, hid_t* f, hid_t* o) {
  fs_h5_quiet();
  *f = H5Fopen(h5, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (*f < 0) return -1;
  *o = H5Oopen(*f, obj, H5P_DEFAULT);
  if (*o < 0 || H5Aexists(*o, name) <= 0) {
    if (*o >= 0) H5Oclose(*o);
    H5Fclose(*f);
    return -1;
  }
  return H5Aopen(*o, name, H5P_DEFAULT);
}

int out_attr_int(const char* h5, const char* obj, const char* name, long long* v) {
  hid_t f, o, a = open_attr(h5, obj, name, &f, &o);
  if (a < 0) return -1;
  int rc = H5Aread(a, H5T_NATIVE_LLONG, v) < 0 ? -1 : 0;
  H5Aclose(a);
  H5Oclose(o);
  H5Fclose(f);
  return rc;
}

int out_attr_string(const char* h5, const char* obj, const char* name, char* v, size_t n) {
  hid_t f, o, a = open_attr(h5, obj, name, &f, &o);
  if (a < 0) return -1;
  hid_t t = H5Aget_type(a);
  int rc = -1;
  v[0] = 0;
  if (H5Tis_variable_str(t) > 0) {
    char* s = NULL;
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5Tget_cset(t));
    if (H5Aread(a, mt, &s) >= 0 && s) {
      snprintf(v, n, "%s", s);
      H5free_memory(s);
      rc = 0;
    }
    H5Tclose(mt);
  } else {
    size_t len = H5Tget_size(t);
    char* s = calloc(len + 1, 1);
    if (s && H5Aread(a, t, s) >= 0) {
      snprintf(v, n, "%s", s);
      rc = 0;
    }
    free(s);
  }
  H5Tclose(t);
  H5Aclose(a);
  H5Oclose(o);
  H5Fclose(f);
  return rc;
}

int out_file_nonempty(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && st.st_size > 0;
}

int out_file_starts_with(const char* path, const char* magic, size_t n) {
  FILE* f = fopen(path, "rb");
  if (!f) return 0;
  char buf[16] = {0};
  size_t k = fread(buf, 1, n < sizeof buf ? n : sizeof buf, f);
  fclose(f);
  return k == n && !memcmp(buf, magic, n);
}

const char* out_perf_unavailable(void) {
  static fsError err;
  char dir[600];
  snprintf(dir, sizeof dir, "%s/probe.json", fs_test_tmpdir("perfprobe"));
  if (fs_perf_probe(dir, &err)) return err.msg;
  return "";
}

const char* out_egl_unavailable(void) {
  static fsError err;
  char xml[] = "<mujoco><worldbody><geom type='sphere' size='1'/></worldbody></mujoco>";
  char msg[1000];
  mjSpec* spec = mj_parseXMLString(xml, NULL, msg, sizeof msg);
  mjModel* m = spec ? mj_compile(spec, NULL) : NULL;
  if (!m) return "cannot compile the probe model";
  fsRenderer* r = fs_renderer_create(m, "probe", 32, 24, -1, &err);
  fs_renderer_destroy(r);
  mj_deleteModel(m);
  mj_deleteSpec(spec);
  return r ? "" : err.msg;
}

int out_find_tool(const char* name, char* out, size_t n) {
  fsError err;
  return fs_find_on_path(name, out, n, &err);
}

void out_kv(const char* text, const char* key, char* value, size_t n) {
  value[0] = 0;
  size_t klen = strlen(key);
  for (const char* p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    if (!strncmp(p, key, klen) && p[klen] == '=') {
      size_t len = strcspn(p + klen + 1, "\r\n");
      if (len >= n) len = n - 1;
      memcpy(value, p + klen + 1, len);
      value[len] = 0;
      return;
    }
  }
}
