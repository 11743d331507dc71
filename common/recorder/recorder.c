#include "common/recorder/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sys/interrupt.h"
#include "common/sys/spawn.h"
#include "common/recorder/h5util.h"

#define FS_MAX_SERIES  16
#define FS_CHUNK_BYTES (1 << 20) // chunks of at most about 1 MiB

struct fsRecorder {
  fsRecorderSpec spec; // spec.series points at series_copy
  fsSeriesSpec series_copy[FS_MAX_SERIES];
  char* path;
  hid_t file;
  hid_t series[FS_MAX_SERIES]; // (T x N x C) float32
  hid_t time;                  // (T) float64
  hid_t steps;                 // () int64: /steps_recorded
  long long nstep;             // steps recorded
  double* time_buf;            // (time_cap) scratch for /time
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

// Worlds per chunk: as many as fit in FS_CHUNK_BYTES, spread evenly over the worlds.
static hsize_t worlds_per_chunk(const fsRecorder* r, int ncol) {
  hsize_t nworld = (hsize_t)r->spec.world_count;
  hsize_t row = (hsize_t)r->spec.block * (hsize_t)(ncol > 0 ? ncol : 1) * sizeof(float);
  hsize_t nw = FS_CHUNK_BYTES / row;
  if (nw < 1) nw = 1;
  if (nw > nworld) nw = nworld;
  hsize_t nchunk = (nworld + nw - 1) / nw;
  return (nworld + nchunk - 1) / nchunk;
}

static int create_series(fsRecorder* r, int k, fsError* err) {
  const fsSeriesSpec* s = &r->spec.series[k];
  hid_t space = -1, plist = -1, d = -1;
  hsize_t dims[3] = {(hsize_t)r->spec.nstep, (hsize_t)r->spec.nworld, (hsize_t)s->ncol};
  hsize_t chunk[3] = {(hsize_t)r->spec.block, worlds_per_chunk(r, s->ncol), dims[2] ? dims[2] : 1};
  FS_H5_TRY(err, r->path, space = H5Screate_simple(3, dims, NULL));
  if ((plist = fs_h5_prealloc_dcpl(r->path, 3, chunk, err)) < 0) goto fail;
  FS_H5_TRY(
      err, r->path,
      d = H5Dcreate2(r->file, s->name, H5T_IEEE_F32LE, space, H5P_DEFAULT, plist, H5P_DEFAULT));
  if (fs_h5_attr_string(d, r->path, "units", s->units ? s->units : "", err) ||
      fs_h5_attr_string(d, r->path, "description", s->doc ? s->doc : "", err) ||
      fs_h5_attr_string(d, r->path, "dims", "(T, N, C): step x world x column", err))
    goto fail;
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

static int create_time_and_steps(fsRecorder* r, fsError* err) {
  hid_t space = -1, plist = -1, scalar = -1, splist = -1;
  hsize_t dims = (hsize_t)r->spec.nstep, chunk = (hsize_t)r->spec.block;
  FS_H5_TRY(err, r->path, space = H5Screate_simple(1, &dims, NULL));
  if ((plist = fs_h5_prealloc_dcpl(r->path, 1, &chunk, err)) < 0) goto fail;
  FS_H5_TRY(err, r->path,
            r->time = H5Dcreate2(r->file, "time", H5T_IEEE_F64LE, space, H5P_DEFAULT, plist,
                                 H5P_DEFAULT));
  if (fs_h5_attr_string(r->time, r->path, "units", "s", err) ||
      fs_h5_attr_string(r->time, r->path, "description",
                        "time of each step from the start of the replay; the recorded state "
                        "of step k is the state at the end of that step",
                        err))
    goto fail;
  FS_H5_TRY(err, r->path, scalar = H5Screate(H5S_SCALAR));
  if ((splist = fs_h5_prealloc_dcpl(r->path, 0, NULL, err)) < 0) goto fail;
  FS_H5_TRY(err, r->path, H5Pset_layout(splist, H5D_CONTIGUOUS));
  FS_H5_TRY(err, r->path,
            r->steps = H5Dcreate2(r->file, "steps_recorded", H5T_STD_I64LE, scalar, H5P_DEFAULT,
                                  splist, H5P_DEFAULT));
  if (fs_h5_attr_string(r->steps, r->path, "description",
                        "steps complete in every series; raised after each block is flushed", err))
    goto fail;
  FS_H5_TRY(err, r->path,
            H5Dwrite(r->steps, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, &r->nstep));
  fs_h5_close(splist);
  fs_h5_close(scalar);
  fs_h5_close(plist);
  fs_h5_close(space);
  return 0;
fail:
  fs_h5_close(splist);
  fs_h5_close(scalar);
  fs_h5_close(plist);
  fs_h5_close(space);
  return -1;
}

fsRecorder* fs_recorder_create(const fsRecorderSpec* spec, fsError* err) {
  fs_h5_quiet();
  if (spec->nseries > FS_MAX_SERIES || spec->block < 1 || spec->world_count < 1 ||
      spec->nstep < 1 || spec->world_begin < 0 ||
      spec->world_begin + spec->world_count > spec->nworld) {
    fs_fail(err,
            "%s: invalid recorder layout (%d series, %lld steps, block %d, worlds %d+%d "
            "of %d)",
            spec->path, spec->nseries, spec->nstep, spec->block, spec->world_begin,
            spec->world_count, spec->nworld);
    return NULL;
  }
  fsRecorder* r = fs_calloc(err, "the recorder", 1, sizeof *r);
  if (!r) return NULL;
  r->spec = *spec;
  memcpy(r->series_copy, spec->series, sizeof(fsSeriesSpec) * (size_t)spec->nseries);
  r->spec.series = r->series_copy;
  if (r->spec.block > spec->nstep) r->spec.block = (int)spec->nstep;
  r->file = r->time = r->steps = -1;
  for (int k = 0; k < FS_MAX_SERIES; k++) r->series[k] = -1;
  r->path = fs_strdup(err, spec->path);
  r->time_cap = r->spec.block;
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
  if (create_time_and_steps(r, err)) goto fail;
  if (fs_h5_attr_double(r->file, r->path, "timestep", spec->timestep, err) ||
      fs_h5_attr_int(r->file, r->path, "nworld", spec->nworld, err) ||
      fs_h5_attr_int(r->file, r->path, "complete", 0, err) ||
      fs_h5_attr_string(r->file, r->path, "stop_reason",
                        "still running, or killed: /steps_recorded steps are complete", err))
    goto fail;
  FS_H5_TRY(err, r->path, H5Fflush(r->file, H5F_SCOPE_GLOBAL));
  return r;
fail:
  fs_recorder_finish(r, NULL, NULL);
  return NULL;
}

// Write nstep rows of buf (memory type mtype) into d at step t0; a row is
// row_dims[1..rank-1] starting at column offset col0 of the second dimension.
static int write_rows(fsRecorder* r, hid_t d, int rank, const hsize_t* row_dims, hsize_t col0,
                      hsize_t t0, hsize_t nstep, hid_t mtype, const void* buf, fsError* err) {
  hsize_t start[3] = {t0, col0, 0}, count[3] = {nstep, 0, 0};
  for (int i = 1; i < rank; i++) count[i] = row_dims[i];
  return fs_h5_write_slab(d, r->path, rank, start, count, mtype, buf, err);
}

// Room on the file's disk for nstep more steps: their bytes uncompressed, two chunks a
// series (a compressed chunk rewritten may move) and 1 MiB for the file's ending (trim and
// attributes). Checked before a block, so that a full disk stops the recording with the
// file as the last block left it, readable: HDF5 fails a flush half-way and leaves the
// file's metadata pointing past its end.
#define FS_ENDING_BYTES (1 << 20) // the file's ending: trim, attributes, world status

// Bytes free on the disk holding the file (-1: unknown).
static double disk_free(const fsRecorder* r) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", r->path);
  char* slash = strrchr(dir, '/');
  if (slash)
    slash[slash == dir ? 1 : 0] = 0;
  else
    snprintf(dir, sizeof dir, ".");
  struct statvfs fs;
  if (statvfs(dir, &fs) != 0) return -1;
  return (double)fs.f_bavail * (double)fs.f_frsize;
}

static int check_space(const fsRecorder* r, int nstep, fsError* err) {
  double have = disk_free(r), mib = 1024.0 * 1024.0;
  if (have < 0) return 0; // unknown: HDF5's own error, if any, says it
  double need = (double)nstep * sizeof(double) + FS_ENDING_BYTES;
  for (int k = 0; k < r->spec.nseries; k++)
    need += (double)nstep * r->spec.world_count * r->spec.series[k].ncol * sizeof(float) +
            2.0 * FS_CHUNK_BYTES;
  if (have >= need) return 0;
  return fs_fail(err,
                 "%s: the disk holding it has %.1f MiB free, less than the next %d steps may "
                 "take (%.1f MiB); the recording stops with the %lld steps written before, "
                 "kept; fix: free space on that disk, or write to another one",
                 r->path, have / mib, nstep, need / mib, r->nstep);
}

int fs_recorder_append(fsRecorder* r, int nstep, const float* const* data, fsError* err) {
  if (nstep <= 0) return 0;
  if (r->nstep + nstep > r->spec.nstep)
    return fs_fail(err, "%s: %lld steps recorded, %d more exceed the %lld planned", r->path,
                   r->nstep, nstep, r->spec.nstep);
  if (check_space(r, nstep, err)) return -1;
  hsize_t t0 = (hsize_t)r->nstep;
  for (int k = 0; k < r->spec.nseries; k++) {
    hsize_t row[3] = {0, (hsize_t)r->spec.world_count, (hsize_t)r->spec.series[k].ncol};
    if (write_rows(r, r->series[k], 3, row, (hsize_t)r->spec.world_begin, t0, (hsize_t)nstep,
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
  if (write_rows(r, r->time, 1, none, 0, t0, (hsize_t)nstep, H5T_NATIVE_DOUBLE, r->time_buf, err))
    return -1;
  // The data reach the file before the count that vouches for them.
  FS_H5_TRY(err, r->path, H5Fflush(r->file, H5F_SCOPE_GLOBAL));
  long long count = r->nstep + nstep;
  FS_H5_TRY(err, r->path,
            H5Dwrite(r->steps, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, &count));
  FS_H5_TRY(err, r->path, H5Fflush(r->file, H5F_SCOPE_GLOBAL));
  r->nstep = count;
  return 0;
fail:
  return -1;
}

int fs_recorder_ending_fits(const fsRecorder* r, fsError* err) {
  double have = disk_free(r);
  if (have < 0 || have >= FS_ENDING_BYTES) return 1;
  fs_fail(err,
          "%s: its disk has %.0f KiB free, too little for the file's ending (the world status, "
          "the trim, the attributes): the file is left as its last block left it, readable, its "
          "first /steps_recorded steps (%lld) the data; fix: free space on that disk, or write "
          "to another one",
          r->path, have / 1024.0, r->nstep);
  return 0;
}

// Shrink every dataset to the recorded steps (a normal end: the file's metadata
// may change now).
static int trim(fsRecorder* r, fsError* err) {
  if (r->nstep == r->spec.nstep) return 0;
  for (int k = 0; k < r->spec.nseries; k++) {
    hsize_t dims[3] = {(hsize_t)r->nstep, (hsize_t)r->spec.nworld, (hsize_t)r->spec.series[k].ncol};
    FS_H5_TRY(err, r->path, H5Dset_extent(r->series[k], dims));
  }
  hsize_t t = (hsize_t)r->nstep;
  FS_H5_TRY(err, r->path, H5Dset_extent(r->time, &t));
  return 0;
fail:
  return -1;
}

int fs_recorder_finish(fsRecorder* r, const char* stop_reason, fsError* err) {
  if (!r) return 0;
  int rc = 0;
  if (r->file >= 0 && stop_reason) {
    if (trim(r, err) ||
        fs_h5_attr_int(r->file, r->path, "complete", !strcmp(stop_reason, "completed"), err) ||
        fs_h5_attr_string(r->file, r->path, "stop_reason", stop_reason, err) ||
        fs_h5_attr_int(r->file, r->path, "steps_recorded", r->nstep, err))
      rc = -1;
  }
  for (int k = 0; k < FS_MAX_SERIES; k++) fs_h5_close(r->series[k]);
  fs_h5_close(r->time);
  fs_h5_close(r->steps);
  if (r->file >= 0 && H5Fclose(r->file) < 0 && rc == 0) {
    fs_h5_fail(err, r->path, "H5Fclose", __func__, __FILE__, __LINE__);
    rc = -1;
  }
  free(r->time_buf);
  free(r->path);
  free(r);
  return rc;
}

// The longest h5repack may take (a recording of gigabytes repacks in about a minute): a hung
// h5repack must not hang flysim. FLYSIM_H5REPACK_TIMEOUT=<seconds> sets it (a test switch).
#define FS_H5REPACK_TIMEOUT_S 600.0

static int repack_timeout(const char* path, double* limit, fsError* err) {
  const char* v = getenv("FLYSIM_H5REPACK_TIMEOUT");
  *limit = FS_H5REPACK_TIMEOUT_S;
  if (!v || !*v) return 0;
  char* end = NULL;
  double s = strtod(v, &end);
  if (*end || !(s > 0))
    return fs_fail(err,
                   "%s: left uncompressed: FLYSIM_H5REPACK_TIMEOUT='%s' is not a number of "
                   "seconds above 0; fix: unset it (the limit is then %.0f s)",
                   path, v, FS_H5REPACK_TIMEOUT_S);
  *limit = s;
  return 0;
}

int fs_h5_compress(const char* path, int ndataset, const char* const* datasets, fsError* err) {
  char list[2048] = "", shuf[2100], gzip[2100], tmp[4200];
  for (int i = 0; i < ndataset; i++) {
    size_t n = strlen(list);
    snprintf(list + n, sizeof list - n, "%s%s", i ? "," : "", datasets[i]);
  }
  snprintf(shuf, sizeof shuf, "%s:SHUF", list);
  snprintf(gzip, sizeof gzip, "%s:GZIP=1", list);
  snprintf(tmp, sizeof tmp, "%s.repack", path);
  double limit;
  if (repack_timeout(path, &limit, err)) return -1;
  const char* argv[] = {"h5repack", "-f", shuf, "-f", gzip, path, tmp, NULL};
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  fsSpawnSpec spec = {argv, -1, null, -1, {-1, -1}, 0};
  fsError spawn_err;
  // read before the spawn: a Ctrl-C as h5repack starts stops it (the child may already be
  // running, and visible, before this process returns from the spawn)
  int before = fs_interrupted();
  // tied to flysim: killed with it, never an orphan finishing a copy no one renames
  pid_t pid = fs_spawn_tied(&spec, &spawn_err);
  if (null >= 0) close(null);
  if (pid < 0) {
    fs_fail(err, "%s: left uncompressed: %s (Debian: apt-get install hdf5-tools)", path,
            spawn_err.msg);
    return 1;
  }
  int status = 0, waited = fs_spawn_wait_for(pid, limit, before, &status);
  if (waited || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char why[256];
    if (waited == 2)
      snprintf(why, sizeof why, "was stopped: signal %d came during the compression",
               fs_interrupted());
    else if (waited > 0)
      snprintf(why, sizeof why,
               "did not finish within %g s and was stopped (FLYSIM_H5REPACK_TIMEOUT=<seconds> "
               "sets the limit)",
               limit);
    else if (waited < 0)
      snprintf(why, sizeof why, "could not be waited for (%s)", strerror(errno));
    else
      fs_spawn_describe(status, why, sizeof why);
    unlink(tmp);
    return fs_fail(err, "%s: left uncompressed: h5repack %s; the uncompressed file is intact", path,
                   why);
  }
  if (rename(tmp, path) != 0) {
    int why = errno;
    unlink(tmp);
    return fs_fail(err,
                   "%s: left uncompressed: cannot replace it with its compressed copy: %s; the "
                   "uncompressed file is intact",
                   path, strerror(why));
  }
  return 0;
}
