// The clip reader (common/inputs/targets.c, the HDF5 helpers it calls) under mutated
// clips. An input is a clip's description, one directive a line, which the target writes
// as an HDF5 file through HDF5's API before flysim reads it (unknown lines are skipped, a
// bad number reads as 0):
//
//   targets f64|f32|i32|str|group|none ROWS COLS   /targets (default f64 8 3)
//   rank 1|2|3                                     its rank (the extra dimension 1)
//   sparse                                         chunked, nothing written: any shape
//   value ROW COL X                                one value (nan, inf, 1e308, ...)
//   names vlen|fixed|int|group|none|2d NAME...     /dof_names ("-" an empty name)
//   timestep file|dset f64|i32|str|array X         the attribute, on the file or /targets
//
// The corpus describes good clips and the faults the reader names (no timestep, NaN,
// duplicate names, a group, a string dataset, ...). A clip it accepts must hold what a
// replay relies on and resample to 0.1 ms; one it refuses must name the file and a fix;
// no HDF5 object may stay open. Byte-level damage to an HDF5 file's metadata is not
// fuzzed: libhdf5 1.10's reader can crash on it (a damaged global heap, in H5HG_read),
// beyond what flysim's reader can check.
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/inputs/targets.h"
#include "tests/fuzz/fuzz.h"

static char g_path[600];

enum { MAX_NAMES = 64, MAX_VALUES = 1 << 16 };

typedef struct Clip {
  char targets[8]; // f64 f32 i32 str group none
  double rows, cols;
  int rank, sparse;
  char names_kind[8]; // vlen fixed int group none 2d
  char names[MAX_NAMES][40];
  int nnames, names_given;
  char ts_where[8], ts_type[8]; // file|dset, f64|i32|str|array
  double ts;
  int ts_given;
  struct {
    long row, col;
    double x;
  } value[8];
  int nvalue;
} Clip;

static double num(const char* s) {
  return s ? strtod(s, NULL) : 0;
}

static void word(char* out, size_t n, const char* s) {
  snprintf(out, n, "%s", s ? s : "");
}

static void describe(const char* text, Clip* c) {
  memset(c, 0, sizeof *c);
  strcpy(c->targets, "f64");
  c->rows = 8, c->cols = 3, c->rank = 2;
  strcpy(c->names_kind, "vlen");
  char line[1024];
  for (const char* p = text; *p;) {
    size_t len = strcspn(p, "\n");
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
    p += len + (p[len] == '\n');
    char* save = NULL;
    char* key = strtok_r(line, " \t", &save);
    if (!key) continue;
    char* a = strtok_r(NULL, " \t", &save);
    if (!strcmp(key, "targets")) {
      word(c->targets, sizeof c->targets, a);
      c->rows = num(strtok_r(NULL, " \t", &save));
      c->cols = num(strtok_r(NULL, " \t", &save));
    } else if (!strcmp(key, "rank")) {
      c->rank = (int)num(a);
    } else if (!strcmp(key, "sparse")) {
      c->sparse = 1;
    } else if (!strcmp(key, "value") && c->nvalue < 8) {
      c->value[c->nvalue].row = (long)num(a);
      c->value[c->nvalue].col = (long)num(strtok_r(NULL, " \t", &save));
      c->value[c->nvalue].x = num(strtok_r(NULL, " \t", &save));
      c->nvalue++;
    } else if (!strcmp(key, "names")) {
      c->names_given = 1;
      word(c->names_kind, sizeof c->names_kind, a);
      for (char* w; c->nnames < MAX_NAMES && (w = strtok_r(NULL, " \t", &save));)
        word(c->names[c->nnames++], sizeof c->names[0], strcmp(w, "-") ? w : "");
    } else if (!strcmp(key, "timestep")) {
      c->ts_given = 1;
      word(c->ts_where, sizeof c->ts_where, a);
      word(c->ts_type, sizeof c->ts_type, strtok_r(NULL, " \t", &save));
      c->ts = num(strtok_r(NULL, " \t", &save));
    }
  }
  if (!c->names_given) { // one name a column, as an exported clip has
    for (int k = 0; k < c->cols && k < MAX_NAMES; k++)
      snprintf(c->names[c->nnames++], sizeof c->names[0], "joint_%d", k);
  }
}

static hid_t dtype_of(const char* kind) {
  return !strcmp(kind, "f32")   ? H5T_IEEE_F32LE
         : !strcmp(kind, "i32") ? H5T_STD_I32LE
                                : H5T_IEEE_F64LE;
}

// /targets as described; -1 if HDF5 refused the description (the input is then skipped).
static int write_targets(hid_t f, const Clip* c, hid_t* dset) {
  *dset = -1;
  if (!strcmp(c->targets, "none")) return 0;
  if (!strcmp(c->targets, "group")) {
    hid_t g = H5Gcreate2(f, "targets", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    return g < 0 ? -1 : H5Gclose(g);
  }
  if (!(c->rows >= 0 && c->cols >= 0 && c->rows < 1e15 && c->cols < 1e15)) return -1;
  int rank = c->rank >= 1 && c->rank <= 3 ? c->rank : 2;
  hsize_t dims[3] = {(hsize_t)c->rows, (hsize_t)c->cols, 1};
  if (rank == 1) dims[0] = (hsize_t)(c->rows * c->cols);
  double count = rank == 1 ? (double)dims[0] : c->rows * c->cols;
  int sparse = c->sparse || count > MAX_VALUES;
  hid_t type = !strcmp(c->targets, "str") ? H5Tcopy(H5T_C_S1) : H5Tcopy(dtype_of(c->targets));
  if (!strcmp(c->targets, "str")) H5Tset_size(type, 8);
  hid_t space = H5Screate_simple(rank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (sparse) {
    hsize_t chunk[3] = {1, 1, 1};
    H5Pset_chunk(dcpl, rank, chunk);
  }
  *dset = space < 0 ? -1 : H5Dcreate2(f, "targets", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  int rc = *dset < 0 ? -1 : 0;
  if (rc == 0 && !sparse && strcmp(c->targets, "str") && count > 0) {
    double* v = malloc((size_t)count * sizeof *v);
    if (!v) return -1;
    for (long k = 0; k < (long)count; k++) v[k] = sin(0.1 * (double)k);
    for (int k = 0; k < c->nvalue; k++) {
      long at = c->value[k].row * (long)(rank == 1 ? 1 : c->cols) + c->value[k].col;
      if (at >= 0 && at < (long)count) v[at] = c->value[k].x;
    }
    rc = H5Dwrite(*dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 ? -1 : 0;
    free(v);
  }
  H5Tclose(type);
  return rc;
}

static int write_names(hid_t f, const Clip* c) {
  const char* kind = c->names_kind;
  if (!strcmp(kind, "none")) return 0;
  if (!strcmp(kind, "group")) {
    hid_t g = H5Gcreate2(f, "dof_names", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    return g < 0 ? -1 : H5Gclose(g);
  }
  hsize_t dims[2] = {(hsize_t)c->nnames, 1};
  int rank = !strcmp(kind, "2d") ? 2 : 1;
  hid_t type;
  if (!strcmp(kind, "int")) {
    type = H5Tcopy(H5T_STD_I32LE);
  } else {
    type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, !strcmp(kind, "fixed") ? sizeof c->names[0] : H5T_VARIABLE);
  }
  hid_t space = H5Screate_simple(rank, dims, NULL);
  hid_t d = H5Dcreate2(f, "dof_names", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = d < 0 ? -1 : 0;
  if (rc == 0 && c->nnames > 0) {
    const char* vl[MAX_NAMES];
    int iv[MAX_NAMES];
    for (int k = 0; k < c->nnames; k++) vl[k] = c->names[k], iv[k] = k;
    const void* data = !strcmp(kind, "int")     ? (const void*)iv
                       : !strcmp(kind, "fixed") ? (const void*)c->names
                                                : (const void*)vl;
    rc = H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 ? -1 : 0;
  }
  if (d >= 0) H5Dclose(d);
  H5Sclose(space);
  H5Tclose(type);
  return rc;
}

static int write_timestep(hid_t f, hid_t dset, const Clip* c) {
  if (!c->ts_given) c = NULL;
  hid_t on = c && !strcmp(c->ts_where, "dset") ? dset : f;
  if (on < 0) return 0;
  const char* type = c ? c->ts_type : "f64";
  double ts = c ? c->ts : 1.0 / 330;
  hsize_t two = 2;
  hid_t space = !strcmp(type, "array") ? H5Screate_simple(1, &two, NULL) : H5Screate(H5S_SCALAR);
  hid_t t = !strcmp(type, "i32") ? H5Tcopy(H5T_STD_I32LE) : H5Tcopy(H5T_IEEE_F64LE);
  char text[32];
  if (!strcmp(type, "str")) {
    H5Tclose(t);
    t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, sizeof text);
  }
  hid_t a = H5Acreate2(on, "timestep", t, space, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a < 0 ? -1 : 0;
  double two_ts[2] = {ts, ts};
  int its = (int)fmax(fmin(ts, 1e9), -1e9);
  snprintf(text, sizeof text, "%g", ts);
  if (rc == 0) {
    const void* data = !strcmp(type, "str")   ? (const void*)text
                       : !strcmp(type, "i32") ? (const void*)&its
                                              : (const void*)two_ts;
    hid_t mem = !strcmp(type, "i32")   ? H5T_NATIVE_INT
                : !strcmp(type, "str") ? t
                                       : H5T_NATIVE_DOUBLE;
    rc = H5Awrite(a, mem, data) < 0 ? -1 : 0;
    H5Aclose(a);
  }
  H5Tclose(t);
  H5Sclose(space);
  return rc;
}

static int write_clip(const Clip* c) {
  hid_t f = H5Fcreate(g_path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), dset = -1;
  if (f < 0) return -1;
  int rc = write_targets(f, c, &dset) || write_names(f, c) ||
           (c->ts_given && !strcmp(c->ts_where, "none") ? 0 : write_timestep(f, dset, c));
  if (dset >= 0) H5Dclose(dset);
  H5Fclose(f);
  return rc ? -1 : 0;
}

static int setup(void (*add)(const unsigned char*, size_t)) {
  (void)add;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  snprintf(g_path, sizeof g_path, "%s/clip.h5", fs_fuzz_tmpdir());
  return 0;
}

static int check_clip(const fsTargets* t) {
  int ok = t->nstep >= 4 && t->ndof >= 1 && t->timestep > 0 && isfinite(t->timestep) && t->value &&
           t->names;
  for (int a = 0; ok && a < t->ndof; a++) ok = t->names[a] && t->names[a][0];
  for (long k = 0; ok && k < (long)t->nstep * t->ndof; k++) ok = isfinite(t->value[k]);
  if (!ok)
    fprintf(stderr, "fuzz_clip: accepted a clip of %d x %d at %g s that a replay cannot use\n",
            t->nstep, t->ndof, t->timestep);
  return ok;
}

static int one(const unsigned char* data, size_t n) {
  static char text[1 << 16];
  if (n >= sizeof text) n = sizeof text - 1;
  memcpy(text, data, n);
  text[n] = 0;
  Clip c;
  describe(text, &c);
  if (write_clip(&c)) return FS_FUZZ_REFUSED; // HDF5 would not write it: nothing to read
  fsTargets t;
  fsError err = {{0}, FS_OK};
  int rc = fs_targets_load(g_path, &t, &err), verdict = FS_FUZZ_REFUSED;
  if (rc == 0) {
    verdict = check_clip(&t) ? FS_FUZZ_ACCEPTED : FS_FUZZ_BAD;
    // resampled to the fly's timestep where that stays small (a clip at 1e6 s a row is
    // refused by the resampler's own bound, which the clip tests check)
    double rows = (double)t.nstep * t.timestep / 1e-4;
    if (verdict == FS_FUZZ_ACCEPTED && rows * t.ndof < 4e6) {
      if (fs_targets_resample(&t, 1e-4, &err)) {
        verdict = fs_fuzz_clear_message(err.msg, g_path) ? FS_FUZZ_REFUSED : FS_FUZZ_BAD;
      } else if (!check_clip(&t) || t.timestep != 1e-4) {
        verdict = FS_FUZZ_BAD;
      }
    }
    fs_targets_free(&t);
  } else if (!fs_fuzz_clear_message(err.msg, g_path)) {
    verdict = FS_FUZZ_BAD;
  }
  ssize_t open_ids = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  if (open_ids != 0) {
    fprintf(stderr, "fuzz_clip: %zd HDF5 objects left open (%s)\n", open_ids,
            rc == 0 ? "accepted" : err.msg);
    verdict = FS_FUZZ_BAD;
  }
  return verdict;
}

const fsFuzzTarget fs_fuzz_target = {"fuzz_clip", 20261202u, 1500, "0123456789.-e \nfirnatsvxdlg",
                                     setup,       one};
