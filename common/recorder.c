#include "common/recorder.h"

#include <stdlib.h>
#include <string.h>

#include "common/h5util.h"

#define FS_MAX_SERIES 16
#define FS_CHUNK_BYTES (1 << 20)  // chunks of at most about 1 MiB

struct fsRecorder {
  fsRecorderSpec spec;
  char* path;
  hid_t file;
  hid_t series[FS_MAX_SERIES];  // (T x N x C) float32
  hid_t time;                   // (T) float64
  long long nstep;              // steps recorded
  double* time_buf;             // (block) scratch for /time
  int time_cap;
};

hid_t fs_recorder_file(const fsRecorder* r) {
  return r->file;
}

const char* fs_recorder_path(const fsRecorder* r) {
  return r->path;
}

long long fs_recorder_steps(const fsRecorder* r) {
  return r->nstep;
}

// Dataset creation properties: chunk (block x worlds-slice x C), shuffle + deflate.
static hid_t chunked_plist(const fsRecorder* r, int rank, const hsize_t* chunk, fsError* err) {
  hid_t p = -1;
  FS_H5_TRY(err, r->path, p = H5Pcreate(H5P_DATASET_CREATE));
  FS_H5_TRY(err, r->path, H5Pset_chunk(p, rank, chunk));
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
    FS_H5_TRY(err, r->path, H5Pset_shuffle(p));
    FS_H5_TRY(err, r->path, H5Pset_deflate(p, 1));
  }
  return p;
fail:
  fs_h5_close(p);
  return -1;
}

static int create_series(fsRecorder* r, int k, fsError* err) {
  const fsSeriesSpec* s = &r->spec.series[k];
  hid_t space = -1, plist = -1, d = -1;
  hsize_t dims[3] = {0, (hsize_t)r->spec.nworld, (hsize_t)s->ncol};
  hsize_t maxdims[3] = {H5S_UNLIMITED, dims[1], dims[2]};
  hsize_t row = (hsize_t)r->spec.block * (hsize_t)(s->ncol > 0 ? s->ncol : 1) * sizeof(float);
  // Worlds per chunk: as many as fit in FS_CHUNK_BYTES, split evenly over the worlds.
  hsize_t nw = FS_CHUNK_BYTES / (row ? row : 1);
  if (nw < 1) nw = 1;
  if (nw > dims[1]) nw = dims[1];
  hsize_t nchunk = (dims[1] + nw - 1) / nw;
  nw = (dims[1] + nchunk - 1) / nchunk;
  hsize_t chunk[3] = {(hsize_t)r->spec.block, nw ? nw : 1, dims[2] ? dims[2] : 1};
  FS_H5_TRY(err, r->path, space = H5Screate_simple(3, dims, maxdims));
  if ((plist = chunked_plist(r, 3, chunk, err)) < 0) goto fail;
  FS_H5_TRY(err, r->path, d = H5Dcreate2(r->file, s->name, H5T_IEEE_F32LE, space, H5P_DEFAULT,
                                         plist, H5P_DEFAULT));
  if (fs_h5_attr_string(d, r->path, "units", s->units ? s->units : "", err)) goto fail;
  if (fs_h5_attr_string(d, r->path, "description", s->doc ? s->doc : "", err)) goto fail;
  if (fs_h5_attr_string(d, r->path, "dims", "(T, N, C): step x world x column", err)) goto fail;
  if (s->names_dataset && fs_h5_attr_string(d, r->path, "columns", s->names_dataset, err))
    goto fail;
  r->series[k] = d;
  fs_h5_close(plist);
  fs_h5_close(space);
  return 0;
fail:
  fs_h5_close(d);
  fs_h5_close(plist);
  fs_h5_close(space);
  return -1;
}

static int create_time(fsRecorder* r, fsError* err) {
  hid_t space = -1, plist = -1;
  hsize_t dims = 0, maxdims = H5S_UNLIMITED, chunk = (hsize_t)r->spec.block;
  FS_H5_TRY(err, r->path, space = H5Screate_simple(1, &dims, &maxdims));
  if ((plist = chunked_plist(r, 1, &chunk, err)) < 0) goto fail;
  FS_H5_TRY(err, r->path, r->time = H5Dcreate2(r->file, "time", H5T_IEEE_F64LE, space,
                                               H5P_DEFAULT, plist, H5P_DEFAULT));
  if (fs_h5_attr_string(r->time, r->path, "units", "s", err)) goto fail;
  if (fs_h5_attr_string(r->time, r->path, "description",
                        "time of each step from the start of the replay; the recorded state "
                        "of step k is the state at the end of that step",
                        err))
    goto fail;
  fs_h5_close(plist);
  fs_h5_close(space);
  return 0;
fail:
  fs_h5_close(plist);
  fs_h5_close(space);
  return -1;
}

fsRecorder* fs_recorder_create(const fsRecorderSpec* spec, fsError* err) {
  fs_h5_quiet();
  if (spec->nseries > FS_MAX_SERIES || spec->block < 1 || spec->world_count < 1 ||
      spec->world_begin < 0 || spec->world_begin + spec->world_count > spec->nworld) {
    fs_fail(err, "%s: invalid recorder layout (%d series, block %d, worlds %d+%d of %d)",
            spec->path, spec->nseries, spec->block, spec->world_begin, spec->world_count,
            spec->nworld);
    return NULL;
  }
  fsRecorder* r = fs_calloc(err, "the recorder", 1, sizeof *r);
  if (!r) return NULL;
  r->spec = *spec;
  r->file = r->time = -1;
  for (int k = 0; k < FS_MAX_SERIES; k++) r->series[k] = -1;
  r->path = fs_strdup(err, spec->path);
  r->time_cap = spec->block;
  r->time_buf = fs_calloc(err, "the time buffer", (unsigned)r->time_cap, sizeof(double));
  if (!r->path || !r->time_buf) goto fail;
  r->file = H5Fcreate(spec->path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (r->file < 0) {
    fs_h5_fail(err, spec->path, "H5Fcreate", __func__, __FILE__, __LINE__);
    fs_fail_append(err, "; fix: check that the directory exists and is writable");
    goto fail;
  }
  for (int k = 0; k < spec->nseries; k++)
    if (create_series(r, k, err)) goto fail;
  if (create_time(r, err)) goto fail;
  if (fs_h5_attr_double(r->file, r->path, "timestep", spec->timestep, err) ||
      fs_h5_attr_int(r->file, r->path, "nworld", spec->nworld, err) ||
      fs_h5_attr_int(r->file, r->path, "steps_recorded", 0, err) ||
      fs_h5_attr_int(r->file, r->path, "complete", 0, err) ||
      fs_h5_attr_string(r->file, r->path, "stop_reason", "running", err))
    goto fail;
  return r;
fail:
  fs_recorder_finish(r, NULL, NULL);
  return NULL;
}

// Grow dataset d to `t_new` steps along its first dimension and write `nstep` rows
// of buf (memory type mtype, row shape dims[1..rank-1]) at step t0.
static int append_rows(fsRecorder* r, hid_t d, int rank, const hsize_t* row_dims,
                       hsize_t col_offset, hsize_t t0, hsize_t nstep, hid_t mtype,
                       const void* buf, fsError* err) {
  hid_t fspace = -1, mspace = -1;
  hsize_t dims[3], start[3] = {t0, col_offset, 0}, count[3] = {nstep, 0, 0};
  FS_H5_TRY(err, r->path, fspace = H5Dget_space(d));
  FS_H5_TRY(err, r->path, H5Sget_simple_extent_dims(fspace, dims, NULL));
  fs_h5_close(fspace);
  fspace = -1;
  dims[0] = t0 + nstep;
  FS_H5_TRY(err, r->path, H5Dset_extent(d, dims));
  for (int i = 1; i < rank; i++) count[i] = row_dims[i];
  FS_H5_TRY(err, r->path, fspace = H5Dget_space(d));
  FS_H5_TRY(err, r->path, H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
  FS_H5_TRY(err, r->path, mspace = H5Screate_simple(rank, count, NULL));
  FS_H5_TRY(err, r->path, H5Dwrite(d, mtype, mspace, fspace, H5P_DEFAULT, buf));
  fs_h5_close(mspace);
  fs_h5_close(fspace);
  return 0;
fail:
  fs_h5_close(mspace);
  fs_h5_close(fspace);
  return -1;
}

int fs_recorder_append(fsRecorder* r, int nstep, const float* const* data, fsError* err) {
  if (nstep <= 0) return 0;
  hsize_t t0 = (hsize_t)r->nstep;
  for (int k = 0; k < r->spec.nseries; k++) {
    hsize_t row[3] = {0, (hsize_t)r->spec.world_count, (hsize_t)r->spec.series[k].ncol};
    if (append_rows(r, r->series[k], 3, row, (hsize_t)r->spec.world_begin, t0, (hsize_t)nstep,
                    H5T_NATIVE_FLOAT, data[k], err))
      return -1;
  }
  if (nstep > r->time_cap) {
    double* grown = realloc(r->time_buf, (size_t)nstep * sizeof(double));
    if (!grown) return fs_fail_oom(err, "the time buffer", (double)nstep * sizeof(double));
    r->time_buf = grown;
    r->time_cap = nstep;
  }
  for (int i = 0; i < nstep; i++) r->time_buf[i] = (double)(r->nstep + i) * r->spec.timestep;
  hsize_t none[1] = {0};
  if (append_rows(r, r->time, 1, none, 0, t0, (hsize_t)nstep, H5T_NATIVE_DOUBLE, r->time_buf,
                  err))
    return -1;
  r->nstep += nstep;
  if (fs_h5_attr_int(r->file, r->path, "steps_recorded", r->nstep, err)) return -1;
  FS_H5_TRY(err, r->path, H5Fflush(r->file, H5F_SCOPE_GLOBAL));
  return 0;
fail:
  return -1;
}

int fs_recorder_finish(fsRecorder* r, const char* stop_reason, fsError* err) {
  if (!r) return 0;
  int rc = 0;
  if (r->file >= 0 && stop_reason) {
    if (fs_h5_attr_int(r->file, r->path, "complete", !strcmp(stop_reason, "completed"), err) ||
        fs_h5_attr_string(r->file, r->path, "stop_reason", stop_reason, err))
      rc = -1;
  }
  for (int k = 0; k < FS_MAX_SERIES; k++) fs_h5_close(r->series[k]);
  fs_h5_close(r->time);
  if (r->file >= 0 && H5Fclose(r->file) < 0 && rc == 0) {
    fs_h5_fail(err, r->path, "H5Fclose", __func__, __FILE__, __LINE__);
    rc = -1;
  }
  free(r->time_buf);
  free(r->path);
  free(r);
  return rc;
}
