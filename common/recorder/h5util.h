// Checked HDF5 helpers shared by the replay input and the recorder.
//
// Every HDF5 call goes through FS_H5_TRY, which on failure writes an error
// naming the file, the failing call (expression, function, source line) and
// HDF5's own innermost message, then jumps to the caller's `fail:` label.
#ifndef FLYSIM_COMMON_RECORDER_H5UTIL_H
#define FLYSIM_COMMON_RECORDER_H5UTIL_H

#include <hdf5.h>

#include "common/base/error.h"

/// Turn off HDF5's automatic error printing (errors are reported through fsError).
void fs_h5_quiet(void);

/// Before any other HDF5 call of the process (main): HDF5 must not close files at exit.
/// A file whose close failed (a full disk: its cache cannot be flushed) stays in HDF5's
/// tables, and HDF5 1.10's own clean-up at exit crashes on it (a segfault in
/// H5F__close_cb after the data already written were kept); flysim closes its files
/// itself, so nothing is lost by skipping it.
void fs_h5_process_init(void);

/// Write "path: HDF5 call `expr` failed in func (file:line): <HDF5 message>".
int fs_h5_fail(fsError* err, const char* path, const char* expr, const char* func, const char* file,
               int line);

#define FS_H5_TRY(err, path, expr)                                                                 \
  do {                                                                                             \
    if ((expr) < 0) {                                                                              \
      fs_h5_fail((err), (path), #expr, __func__, __FILE__, __LINE__);                              \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

/// Close an HDF5 identifier of any kind if it is valid; ignores errors (cleanup).
void fs_h5_close(hid_t id);

/// Read a 1-D dataset of strings (fixed or variable length) into a NULL-terminated
/// array of n malloc'd strings. Errors name the file and the dataset.
int fs_h5_read_strings(hid_t file, const char* path, const char* dataset, char*** out, int* n,
                       fsError* err);

/// Free an array from fs_h5_read_strings.
void fs_h5_free_strings(char** s, int n);

/// Write a 1-D dataset of n variable-length UTF-8 strings.
int fs_h5_write_strings(hid_t loc, const char* path, const char* dataset, const char* const* s,
                        int n, fsError* err);

/// Write a whole array as a new dataset: rank dims, file type ftype, memory type
/// mtype. compress: chunked along the first axis and deflated (for arrays written
/// once, after a run). units and doc (NULL: none) become attributes.
/// Creation property lists of a dataset / a group with no object timestamps (the
/// same data then make the same bytes: flysim generate's datasets are compared
/// byte for byte). -1 on failure.
hid_t fs_h5_dcpl(void);
hid_t fs_h5_gcpl(void);

/// A dataset creation plist (no timestamps) whose space is allocated at creation and
/// never prefilled: writing into the dataset later never changes the file's metadata
/// (what makes the recorder's and flysim generate's files crash-safe). chunk NULL: not
/// chunked. -1 with err on failure.
hid_t fs_h5_prealloc_dcpl(const char* path, int rank, const hsize_t* chunk, fsError* err);

/// Write buf (memory type mtype) into the hyperslab [start, start + count) of dataset ds.
int fs_h5_write_slab(hid_t ds, const char* path, int rank, const hsize_t* start,
                     const hsize_t* count, hid_t mtype, const void* buf, fsError* err);

int fs_h5_write_array(hid_t loc, const char* path, const char* name, int rank, const hsize_t* dims,
                      hid_t ftype, hid_t mtype, const void* data, int compress, const char* units,
                      const char* doc, fsError* err);

/// Read a numeric scalar attribute of an object as double.
/// Returns 0 if read, 1 if the attribute is absent, -1 on error.
int fs_h5_read_attr_double(hid_t obj, const char* path, const char* name, double* value,
                           fsError* err);

/// Write (create or replace) scalar attributes on an object.
int fs_h5_attr_string(hid_t obj, const char* path, const char* name, const char* value,
                      fsError* err);
int fs_h5_attr_double(hid_t obj, const char* path, const char* name, double value, fsError* err);
int fs_h5_attr_int(hid_t obj, const char* path, const char* name, long long value, fsError* err);

#endif
