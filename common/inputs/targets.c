#include "common/inputs/targets.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/memory.h"
#include "common/recorder/h5util.h"
#include "common/inputs/resample.h"

// The timestep attribute, looked for on the dataset first, then on the file.
static int read_timestep(hid_t file, hid_t dset, const char* path, double* dt, fsError* err) {
  int rc = fs_h5_read_attr_double(dset, path, "timestep", dt, err);
  if (rc == 1) rc = fs_h5_read_attr_double(file, path, "timestep", dt, err);
  if (rc < 0) return -1;
  if (rc == 1)
    return fs_fail(err,
                   "%s: no attribute 'timestep' on the file or on '/targets'; fix: add the "
                   "seconds between rows as attribute 'timestep' (e.g. 1/330 for a 330 Hz "
                   "recording)",
                   path);
  if (!(*dt > 0.0) || !isfinite(*dt))
    return fs_fail(err,
                   "%s: attribute 'timestep' is %g; fix: it must be the positive number "
                   "of seconds between rows",
                   path, *dt);
  return 0;
}

// Every value finite; otherwise name the first bad row and column.
static int check_finite(const fsTargets* t, fsError* err) {
  for (int r = 0; r < t->nstep; r++)
    for (int c = 0; c < t->ndof; c++) {
      double v = t->value[(long)r * t->ndof + c];
      if (!isfinite(v))
        return fs_fail(err,
                       "%s: dataset '/targets' holds %s at row %d, column %d (%s); fix: "
                       "every target angle must be a finite number of radians",
                       t->path, isnan(v) ? "NaN" : "an infinite value", r, c, t->names[c]);
    }
  return 0;
}

static int check_names(const fsTargets* t, fsError* err) {
  for (int a = 0; a < t->ndof; a++) {
    if (!t->names[a][0])
      return fs_fail(err, "%s: dataset '/dof_names' entry %d is empty; fix: name every column",
                     t->path, a);
    for (int b = 0; b < a; b++)
      if (!strcmp(t->names[a], t->names[b]))
        return fs_fail(err,
                       "%s: dataset '/dof_names' names '%s' twice (columns %d and %d); fix: "
                       "one column per DoF",
                       t->path, t->names[a], b, a);
  }
  return 0;
}

int fs_targets_load(const char* path, fsTargets* t, fsError* err) {
  hid_t file = -1, dset = -1, space = -1, type = -1;
  memset(t, 0, sizeof *t);
  fs_h5_quiet();
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) // HDF5 would wait on a FIFO for ever
    return fs_fail(err,
                   "%s: a %s, not a targets file; fix: the path of an HDF5 file (HDF5 reads "
                   "files, not pipes: write the clip to a file first)",
                   path,
                   S_ISDIR(st.st_mode)    ? "folder"
                   : S_ISFIFO(st.st_mode) ? "FIFO"
                                          : "special file");
  if (access(path, R_OK) != 0)
    return fs_fail(err,
                   "%s: cannot read the targets file (does it exist?); fix: pass an "
                   "existing file with --targets, or run scripts/setup.sh to export the "
                   "default clip",
                   path);
  t->path = fs_strdup(err, path);
  if (!t->path) return -1;
#if H5_VERSION_GE(1, 12, 0)
  htri_t is_hdf5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
  htri_t is_hdf5 = H5Fis_hdf5(path);
#endif
  if (is_hdf5 <= 0) {
    fs_fail(err,
            "%s: not an HDF5 file; fix: targets must be HDF5 with datasets '/targets' "
            "(T x A) and '/dof_names' (A)",
            path);
    goto fail;
  }
  file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    fs_h5_fail(err, path, "H5Fopen", __func__, __FILE__, __LINE__);
    fs_fail_append(err, "; fix: the file is damaged or incomplete (copied or written only in "
                        "part?): write it again");
    goto fail;
  }
  if (H5Lexists(file, "targets", H5P_DEFAULT) <= 0) {
    fs_fail(err,
            "%s: no dataset '/targets'; fix: store the target angles as a 2-D dataset "
            "'/targets' (T x A, radians)",
            path);
    goto fail;
  }
  H5O_info_t info;
  if (H5Oget_info_by_name(file, "targets", &info, H5P_DEFAULT) < 0 ||
      info.type != H5O_TYPE_DATASET) {
    fs_fail(err,
            "%s: '/targets' is not a dataset (a group?); fix: store the target angles as a 2-D "
            "dataset '/targets' (T x A, radians)",
            path);
    goto fail;
  }
  FS_H5_TRY(err, path, dset = H5Dopen2(file, "targets", H5P_DEFAULT));
  FS_H5_TRY(err, path, type = H5Dget_type(dset));
  if (H5Tget_class(type) != H5T_FLOAT) {
    fs_fail(err,
            "%s: dataset '/targets' is not floating point; fix: store angles as float32 "
            "or float64 radians",
            path);
    goto fail;
  }
  FS_H5_TRY(err, path, space = H5Dget_space(dset));
  hsize_t dims[2] = {0, 0};
  int rank = H5Sget_simple_extent_ndims(space);
  if (rank != 2) {
    fs_fail(err, "%s: dataset '/targets' has rank %d; fix: it must be 2-D (T steps x A DoFs)", path,
            rank);
    goto fail;
  }
  FS_H5_TRY(err, path, H5Sget_simple_extent_dims(space, dims, NULL));
  if (dims[1] == 0) {
    fs_fail(err,
            "%s: dataset '/targets' has shape (%llu, 0): no DoF to drive; fix: one column "
            "a DoF, named in '/dof_names'",
            path, (unsigned long long)dims[0]);
    goto fail;
  }
  if (fs_h5_read_strings(file, path, "dof_names", &t->names, &t->ndof, err)) goto fail;
  if ((hsize_t)t->ndof != dims[1]) {
    fs_fail(err,
            "%s: dataset '/targets' has shape (%llu, %llu) but '/dof_names' names %d DoFs; "
            "fix: the second dimension of '/targets' must equal the number of names",
            path, (unsigned long long)dims[0], (unsigned long long)dims[1], t->ndof);
    goto fail;
  }
  if (dims[0] < 4) {
    fs_fail(err, "%s: dataset '/targets' has %llu rows; fix: a replay needs at least 4 samples",
            path, (unsigned long long)dims[0]);
    goto fail;
  }
  if (dims[0] > (1ull << 31) / (dims[1] ? dims[1] : 1)) {
    fs_fail(err,
            "%s: dataset '/targets' is too large (%llu x %llu); fix: at most 2^31 values (a "
            "clip of 2^31 / %llu rows; a longer replay plays the clip again)",
            path, (unsigned long long)dims[0], (unsigned long long)dims[1],
            (unsigned long long)(dims[1] ? dims[1] : 1));
    goto fail;
  }
  t->nstep = (int)dims[0];
  if (read_timestep(file, dset, path, &t->timestep, err)) goto fail;
  t->source_timestep = t->timestep;
  t->value = fs_calloc(err, "targets", (unsigned long long)t->nstep * t->ndof, sizeof(double));
  if (!t->value) goto fail;
  FS_H5_TRY(err, path, H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->value));
  fs_h5_close(type);
  fs_h5_close(space);
  fs_h5_close(dset);
  fs_h5_close(file);
  file = dset = space = type = -1;
  if (check_names(t, err) || check_finite(t, err)) goto fail;
  return 0;

fail:
  fs_h5_close(type);
  fs_h5_close(space);
  fs_h5_close(dset);
  fs_h5_close(file);
  fs_targets_free(t);
  return -1;
}

int fs_targets_resample(fsTargets* t, double timestep, fsError* err) {
  if (!(timestep > 0.0))
    return fs_fail(err, "resampling %s: timestep %g must be positive", t->path, timestep);
  if (fabs(t->timestep - timestep) <= 1e-12 * timestep) return 0;
  double rows = (double)t->nstep * t->timestep / timestep;
  double bytes = rows * t->ndof * sizeof(double), have = fs_memory_available();
  if (!(rows < INT_MAX) || (have > 0 && bytes > have))
    return fs_fail(err,
                   "%s: attribute 'timestep' %g s: resampled to the model's timestep %g s, its %d "
                   "rows become %.3g (%.3g GiB), more than this machine holds; fix: the "
                   "attribute is the seconds between rows (e.g. 1/330 for 330 Hz)",
                   t->path, t->timestep, timestep, t->nstep, rows, bytes / (1 << 30));
  int n_out = fs_resample_count(t->nstep, t->timestep, timestep);
  double* out =
      fs_calloc(err, "resampled targets", (unsigned long long)n_out * t->ndof, sizeof(double));
  double* scratch = fs_calloc(err, "resampling scratch", 2ull * t->nstep, sizeof(double));
  if (!out || !scratch) {
    free(out);
    free(scratch);
    return -1;
  }
  fs_resample_cubic(t->value, t->nstep, t->ndof, t->timestep, out, n_out, timestep, scratch);
  free(scratch);
  free(t->value);
  t->value = out;
  t->nstep = n_out;
  t->timestep = timestep;
  return 0;
}

void fs_targets_free(fsTargets* t) {
  if (!t) return;
  free(t->value);
  fs_h5_free_strings(t->names, t->ndof);
  free(t->path);
  memset(t, 0, sizeof *t);
}
