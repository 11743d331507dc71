#include "common/recorder/h5util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fs_h5_quiet(void) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void fs_h5_process_init(void) {
  H5dont_atexit();
  fs_h5_quiet();
}

typedef struct {
  char desc[512];
} InnerMessage;

// Keep the innermost (first) entry of HDF5's error stack: it says what went wrong.
static herr_t keep_innermost(unsigned n, const H5E_error2_t* e, void* data) {
  InnerMessage* m = data;
  if (n == 0 && e->desc) snprintf(m->desc, sizeof m->desc, "%s", e->desc);
  return 0;
}

// The system's error in an HDF5 message ("... errno = 28, error message = 'No space left
// on device', ..."): its text and number, else the message's first line.
static void system_error(const char* desc, char* out, size_t n, int* errnum) {
  const char *msg = strstr(desc, "error message = '"), *num = strstr(desc, "errno = ");
  *errnum = num ? atoi(num + 8) : 0;
  if (msg) {
    msg += strlen("error message = '");
    const char* end = strchr(msg, '\'');
    snprintf(out, n, "%.*s (errno %d)", (int)(end ? end - msg : (long)strlen(msg)), msg, *errnum);
    return;
  }
  snprintf(out, n, "%.*s", (int)strcspn(desc, "\n"), desc);
}

int fs_h5_fail(fsError* err, const char* path, const char* expr, const char* func, const char* file,
               int line) {
  InnerMessage m = {{0}};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &m);
  H5Eclear2(H5E_DEFAULT);
  char why[512];
  int errnum;
  system_error(m.desc, why, sizeof why, &errnum);
  fs_fail(err, "%s: HDF5 call `%s` failed in %s (%s:%d)%s%s", path, expr, func, file, line,
          why[0] ? ": " : "", why);
  if (errnum == ENOSPC || errnum == EDQUOT)
    fs_fail_append(err, "; fix: free space on that disk, or write to another one (what was "
                        "written before is kept)");
  else if ((errnum == EAGAIN || errnum == EWOULDBLOCK) && strstr(m.desc, "lock"))
    fs_fail_append(err, "; fix: another process is writing the file (another flysim run?): "
                        "wait for it to finish, or stop it first");
  return -1;
}

void fs_h5_close(hid_t id) {
  if (id < 0) return;
  H5E_BEGIN_TRY {
    switch (H5Iget_type(id)) {
    case H5I_FILE:
      H5Fclose(id);
      break;
    case H5I_GROUP:
      H5Gclose(id);
      break;
    case H5I_DATASET:
      H5Dclose(id);
      break;
    case H5I_DATASPACE:
      H5Sclose(id);
      break;
    case H5I_DATATYPE:
      H5Tclose(id);
      break;
    case H5I_ATTR:
      H5Aclose(id);
      break;
    case H5I_GENPROP_LST:
      H5Pclose(id);
      break;
    default:
      break;
    }
  }
  H5E_END_TRY;
}

void fs_h5_free_strings(char** s, int n) {
  if (!s) return;
  for (int i = 0; i < n; i++) free(s[i]);
  free(s);
}

int fs_h5_read_strings(hid_t file, const char* path, const char* dataset, char*** out, int* n,
                       fsError* err) {
  hid_t d = -1, space = -1, ftype = -1, mtype = -1;
  char** result = NULL;
  char* fixed = NULL;
  char** vlen = NULL;
  int count = 0;
  *out = NULL;
  *n = 0;

  htri_t exists = H5Lexists(file, dataset, H5P_DEFAULT);
  if (exists <= 0)
    return fs_fail(err, "%s: no dataset '%s'; fix: write the names as a 1-D string dataset '%s'",
                   path, dataset, dataset);
  FS_H5_TRY(err, path, d = H5Dopen2(file, dataset, H5P_DEFAULT));
  FS_H5_TRY(err, path, ftype = H5Dget_type(d));
  if (H5Tget_class(ftype) != H5T_STRING) {
    fs_fail(err, "%s: dataset '%s' does not hold strings; fix: store the names as strings", path,
            dataset);
    goto fail;
  }
  FS_H5_TRY(err, path, space = H5Dget_space(d));
  int rank = H5Sget_simple_extent_ndims(space);
  if (rank != 1) {
    fs_fail(err, "%s: dataset '%s' has rank %d; fix: write the names as a 1-D list of strings",
            path, dataset, rank);
    goto fail;
  }
  hsize_t dim = 0;
  FS_H5_TRY(err, path, H5Sget_simple_extent_dims(space, &dim, NULL));
  if (dim > (1u << 24)) {
    fs_fail(err, "%s: dataset '%s' holds %llu names; fix: at most 16777216, one a column", path,
            dataset, (unsigned long long)dim);
    goto fail;
  }
  count = (int)dim;
  result = fs_calloc(err, "names", (unsigned long long)count + 1, sizeof(char*));
  if (!result) goto fail;

  htri_t is_vlen = H5Tis_variable_str(ftype);
  FS_H5_TRY(err, path, is_vlen);
  FS_H5_TRY(err, path, mtype = H5Tcopy(H5T_C_S1));
  FS_H5_TRY(err, path, H5Tset_cset(mtype, H5Tget_cset(ftype)));
  if (is_vlen) {
    FS_H5_TRY(err, path, H5Tset_size(mtype, H5T_VARIABLE));
    vlen = fs_calloc(err, "names", (unsigned long long)count, sizeof(char*));
    if (!vlen) goto fail;
    FS_H5_TRY(err, path, H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, vlen));
    for (int i = 0; i < count; i++) {
      result[i] = fs_strdup(err, vlen[i] ? vlen[i] : "");
      if (!result[i]) goto fail;
    }
    H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, vlen);
    free(vlen);
    vlen = NULL;
  } else {
    size_t len = H5Tget_size(ftype);
    FS_H5_TRY(err, path, H5Tset_size(mtype, len + 1));
    FS_H5_TRY(err, path, H5Tset_strpad(mtype, H5T_STR_NULLTERM));
    fixed = fs_calloc(err, "names", (unsigned long long)count, len + 1);
    if (!fixed) goto fail;
    FS_H5_TRY(err, path, H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, fixed));
    for (int i = 0; i < count; i++) {
      result[i] = fs_strdup(err, fixed + (size_t)i * (len + 1));
      if (!result[i]) goto fail;
    }
    free(fixed);
    fixed = NULL;
  }
  fs_h5_close(mtype);
  fs_h5_close(ftype);
  fs_h5_close(space);
  fs_h5_close(d);
  *out = result;
  *n = count;
  return 0;

fail:
  free(fixed);
  free(vlen); // strings inside are leaked only on a failed read after a vlen read
  fs_h5_free_strings(result, count);
  fs_h5_close(mtype);
  fs_h5_close(ftype);
  fs_h5_close(space);
  fs_h5_close(d);
  return -1;
}

int fs_h5_write_strings(hid_t loc, const char* path, const char* dataset, const char* const* s,
                        int n, fsError* err) {
  hid_t type = -1, space = -1, d = -1, plist = -1;
  hsize_t dim = (hsize_t)n;
  FS_H5_TRY(err, path, type = H5Tcopy(H5T_C_S1));
  FS_H5_TRY(err, path, H5Tset_size(type, H5T_VARIABLE));
  FS_H5_TRY(err, path, H5Tset_cset(type, H5T_CSET_UTF8));
  FS_H5_TRY(err, path, space = H5Screate_simple(1, &dim, NULL));
  FS_H5_TRY(err, path, plist = fs_h5_dcpl());
  FS_H5_TRY(err, path, d = H5Dcreate2(loc, dataset, type, space, H5P_DEFAULT, plist, H5P_DEFAULT));
  if (n > 0) FS_H5_TRY(err, path, H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, s));
  fs_h5_close(d);
  fs_h5_close(plist);
  fs_h5_close(space);
  fs_h5_close(type);
  return 0;
fail:
  fs_h5_close(d);
  fs_h5_close(plist);
  fs_h5_close(space);
  fs_h5_close(type);
  return -1;
}

hid_t fs_h5_dcpl(void) {
  hid_t p = H5Pcreate(H5P_DATASET_CREATE);
  if (p >= 0 && H5Pset_obj_track_times(p, 0) < 0) {
    H5Pclose(p);
    return -1;
  }
  return p;
}

hid_t fs_h5_gcpl(void) {
  hid_t p = H5Pcreate(H5P_GROUP_CREATE);
  if (p >= 0 && H5Pset_obj_track_times(p, 0) < 0) {
    H5Pclose(p);
    return -1;
  }
  return p;
}

hid_t fs_h5_prealloc_dcpl(const char* path, int rank, const hsize_t* chunk, fsError* err) {
  hid_t p = -1;
  FS_H5_TRY(err, path, p = fs_h5_dcpl());
  if (chunk) FS_H5_TRY(err, path, H5Pset_chunk(p, rank, chunk));
  FS_H5_TRY(err, path, H5Pset_alloc_time(p, H5D_ALLOC_TIME_EARLY));
  FS_H5_TRY(err, path, H5Pset_fill_time(p, H5D_FILL_TIME_NEVER));
  return p;
fail:
  fs_h5_close(p);
  return -1;
}

int fs_h5_write_slab(hid_t ds, const char* path, int rank, const hsize_t* start,
                     const hsize_t* count, hid_t mtype, const void* buf, fsError* err) {
  hid_t fspace = -1, mspace = -1;
  FS_H5_TRY(err, path, fspace = H5Dget_space(ds));
  FS_H5_TRY(err, path, H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
  FS_H5_TRY(err, path, mspace = H5Screate_simple(rank, count, NULL));
  FS_H5_TRY(err, path, H5Dwrite(ds, mtype, mspace, fspace, H5P_DEFAULT, buf));
  fs_h5_close(mspace);
  fs_h5_close(fspace);
  return 0;
fail:
  fs_h5_close(mspace);
  fs_h5_close(fspace);
  return -1;
}

int fs_h5_write_array(hid_t loc, const char* path, const char* name, int rank, const hsize_t* dims,
                      hid_t ftype, hid_t mtype, const void* data, int compress, const char* units,
                      const char* doc, fsError* err) {
  hid_t space = -1, plist = -1, d = -1;
  hsize_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  FS_H5_TRY(err, path, space = H5Screate_simple(rank, dims, NULL));
  FS_H5_TRY(err, path, plist = fs_h5_dcpl());
  if (compress && n > 0) {
    hsize_t chunk[H5S_MAX_RANK];
    for (int i = 0; i < rank; i++) chunk[i] = dims[i] ? dims[i] : 1;
    if (chunk[0] > 1000) chunk[0] = 1000;
    FS_H5_TRY(err, path, H5Pset_chunk(plist, rank, chunk));
    FS_H5_TRY(err, path, H5Pset_shuffle(plist));
    FS_H5_TRY(err, path, H5Pset_deflate(plist, 1));
  }
  FS_H5_TRY(err, path, d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, plist, H5P_DEFAULT));
  if (n > 0) FS_H5_TRY(err, path, H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  if ((units && fs_h5_attr_string(d, path, "units", units, err)) ||
      (doc && fs_h5_attr_string(d, path, "description", doc, err)))
    goto fail;
  fs_h5_close(d);
  fs_h5_close(plist);
  fs_h5_close(space);
  return 0;
fail:
  fs_h5_close(d);
  fs_h5_close(plist);
  fs_h5_close(space);
  return -1;
}

int fs_h5_read_attr_double(hid_t obj, const char* path, const char* name, double* value,
                           fsError* err) {
  hid_t a = -1, space = -1, type = -1;
  htri_t exists = H5Aexists(obj, name);
  FS_H5_TRY(err, path, exists);
  if (!exists) return 1;
  FS_H5_TRY(err, path, a = H5Aopen(obj, name, H5P_DEFAULT));
  FS_H5_TRY(err, path, space = H5Aget_space(a));
  if (H5Sget_simple_extent_npoints(space) != 1) {
    fs_fail(err, "%s: attribute '%s' holds %lld values; fix: make it a single number", path, name,
            (long long)H5Sget_simple_extent_npoints(space));
    goto fail;
  }
  FS_H5_TRY(err, path, type = H5Aget_type(a));
  H5T_class_t cls = H5Tget_class(type);
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
    fs_fail(err, "%s: attribute '%s' is not a number (a string?); fix: store it as a number", path,
            name);
    goto fail;
  }
  FS_H5_TRY(err, path, H5Aread(a, H5T_NATIVE_DOUBLE, value));
  fs_h5_close(type);
  fs_h5_close(space);
  fs_h5_close(a);
  return 0;
fail:
  fs_h5_close(type);
  fs_h5_close(space);
  fs_h5_close(a);
  return -1;
}

// Create (or replace) a scalar attribute of the given memory type and write value.
static int write_scalar_attr(hid_t obj, const char* path, const char* name, hid_t ftype,
                             hid_t mtype, const void* value, fsError* err) {
  hid_t space = -1, a = -1;
  htri_t exists = H5Aexists(obj, name);
  FS_H5_TRY(err, path, exists);
  if (exists) FS_H5_TRY(err, path, H5Adelete(obj, name));
  FS_H5_TRY(err, path, space = H5Screate(H5S_SCALAR));
  FS_H5_TRY(err, path, a = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT));
  FS_H5_TRY(err, path, H5Awrite(a, mtype, value));
  fs_h5_close(a);
  fs_h5_close(space);
  return 0;
fail:
  fs_h5_close(a);
  fs_h5_close(space);
  return -1;
}

int fs_h5_attr_string(hid_t obj, const char* path, const char* name, const char* value,
                      fsError* err) {
  hid_t type = -1;
  int rc = -1;
  FS_H5_TRY(err, path, type = H5Tcopy(H5T_C_S1));
  FS_H5_TRY(err, path, H5Tset_size(type, H5T_VARIABLE));
  FS_H5_TRY(err, path, H5Tset_cset(type, H5T_CSET_UTF8));
  rc = write_scalar_attr(obj, path, name, type, type, &value, err);
fail:
  fs_h5_close(type);
  return rc;
}

int fs_h5_attr_double(hid_t obj, const char* path, const char* name, double value, fsError* err) {
  return write_scalar_attr(obj, path, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, err);
}

int fs_h5_attr_int(hid_t obj, const char* path, const char* name, long long value, fsError* err) {
  return write_scalar_attr(obj, path, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &value, err);
}
