// flysim generate's dataset file (generate/dataset.h): this rank's partial file, created
// (preallocated, the names and attributes written), resumed (--resume: the spec compared,
// the done blocks read back) and written block of worlds by block, crash-safe; the merge of
// the ranks' files into DIR/dataset.h5 is generate/dataset_merge.c.
#include "generate/dataset.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/recorder/h5util.h"
#include "common/replay/replay_io.h"

#define FS_DATASET_CHUNK_BYTES (1 << 16)

struct fsDataset {
  fsDatasetSpec s;
  char partial[PATH_MAX], final[PATH_MAX];
  hid_t file;
  hid_t series[FS_NSERIES]; // /worlds/<name> (N x R x C)
  hid_t done;               // /blocks_done (B) uint8
  hid_t warn, limit, serr, peak, problem;
  unsigned char* done_flags; // (B)
  int nworld, nblock;
  double bytes;
};

void fs_dataset_partial_path(const char* dir, int rank, int nrank, char* out, size_t n) {
  if (nrank <= 1)
    snprintf(out, n, "%s/dataset.partial.h5", dir);
  else
    snprintf(out, n, "%s/dataset.partial.%d-of-%d.h5", dir, rank, nrank);
}

int fs_dataset_owns(const fsDataset* d, int k) {
  return d->s.nrank <= 1 || k % d->s.nrank == d->s.rank;
}

int fs_dataset_nblock(const fsDataset* d) {
  return d->nblock;
}

int fs_dataset_block_done(const fsDataset* d, int k) {
  return d->done_flags[k] != 0;
}

double fs_dataset_bytes(const fsDataset* d) {
  return d->bytes;
}

static void close_all(fsDataset* d) {
  for (int k = 0; k < FS_NSERIES; k++) fs_h5_close(d->series[k]);
  fs_h5_close(d->done);
  fs_h5_close(d->warn);
  fs_h5_close(d->limit);
  fs_h5_close(d->peak);
  fs_h5_close(d->serr);
  fs_h5_close(d->problem);
  fs_h5_close(d->file);
  for (int k = 0; k < FS_NSERIES; k++) d->series[k] = -1;
  d->done = d->warn = d->limit = d->serr = d->peak = d->problem = d->file = -1;
}

static void dataset_free(fsDataset* d) {
  if (!d) return;
  close_all(d);
  free(d->done_flags);
  free(d);
}

// This rank's partial file and the final dataset (PATH_MAX each).
static void dataset_paths(const fsDatasetSpec* s, char* partial, char* final) {
  fs_dataset_partial_path(s->dir, s->rank, s->nrank, partial, PATH_MAX);
  snprintf(final, PATH_MAX, "%s/dataset.h5", s->dir);
}

static fsDataset* dataset_alloc(const fsDatasetSpec* s, fsError* err) {
  fsDataset* d = fs_calloc(err, "the dataset", 1, sizeof *d);
  if (!d) return NULL;
  d->s = *s;
  d->file = d->done = d->warn = d->limit = d->serr = d->peak = d->problem = -1;
  for (int k = 0; k < FS_NSERIES; k++) d->series[k] = -1;
  d->nworld = s->spec->worlds;
  d->nblock = (d->nworld + s->spec->block_worlds - 1) / s->spec->block_worlds;
  dataset_paths(s, d->partial, d->final);
  d->done_flags = fs_calloc(err, "the block marks", (size_t)d->nblock, 1);
  if (!d->done_flags) {
    dataset_free(d);
    return NULL;
  }
  return d;
}

// A preallocated dataset (fs_h5_prealloc_dcpl): writing into it later never changes
// the file's metadata. chunk NULL: contiguous.
static hid_t create_prealloc(hid_t loc, const char* path, const char* name, hid_t type, int rank,
                             const hsize_t* dims, const hsize_t* chunk, fsError* err) {
  hid_t space = -1, plist = -1, ds = -1;
  FS_H5_TRY(err, path, space = H5Screate_simple(rank, dims, NULL));
  if ((plist = fs_h5_prealloc_dcpl(path, rank, chunk, err)) < 0) goto fail;
  FS_H5_TRY(err, path, ds = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, plist, H5P_DEFAULT));
  fs_h5_close(plist);
  fs_h5_close(space);
  return ds;
fail:
  fs_h5_close(plist);
  fs_h5_close(space);
  return -1;
}

static int write_names(hid_t f, const char* path, const fsDatasetSpec* s, fsError* err) {
  const fsReplayBinding* b = s->b;
  const fsRecordLayout* l = s->rec;
  const char* pnames[FS_NAXIS];
  char dists[FS_NAXIS][96];
  const char* pd[FS_NAXIS];
  for (int a = 0; a < FS_NAXIS; a++) {
    pnames[a] = fs_gen_axis_key(a);
    fs_dist_describe(&s->spec->axis[a], dists[a], sizeof dists[a]);
    pd[a] = dists[a];
  }
  const char* legs[FS_RECORD_MAX_LEGS];
  for (int k = 0; k < l->nleg; k++) legs[k] = l->leg_names[k];
  const char* wnames[mjNWARNING];
  for (int i = 0; i < mjNWARNING; i++) wnames[i] = fs_warning_name(i);
  int np = l->npoint, nd = b->nadhesion;
  const char** points = fs_calloc(err, "names", (size_t)(np + nd + 1), sizeof(char*));
  if (!points) return -1;
  const char** adh = points + np;
  for (int p = 0; p < np; p++) points[p] = fs_record_point_name(s->m, l, p);
  for (int a = 0; a < nd; a++) {
    const char* n = mj_id2name(s->m, mjOBJ_ACTUATOR, b->adhesion[a]);
    adh[a] = n ? n : "";
  }
  hsize_t pdims[2] = {(hsize_t)s->spec->worlds, FS_NAXIS}, na = (hsize_t)b->nact;
  int rc = fs_h5_write_strings(f, path, "joint_names", b->joint_names, b->njoint, err) ||
           fs_h5_write_strings(f, path, "actuator_names", b->actuator_names, b->nact, err) ||
           fs_h5_write_strings(f, path, "point_names", points, np, err) ||
           fs_h5_write_strings(f, path, "adhesion_names", adh, nd, err) ||
           fs_h5_write_strings(f, path, "leg_names", legs, l->nleg, err) ||
           fs_h5_write_strings(f, path, "warning_names", wnames, mjNWARNING, err) ||
           fs_h5_write_array(f, path, "target_joint_index", 1, &na, H5T_STD_I32LE, H5T_NATIVE_INT,
                             b->actuator_joint, 0, NULL,
                             "for each column of target and actuator_force, the column of "
                             "qpos_joint it drives",
                             err) ||
           fs_h5_write_strings(f, path, "param_names", pnames, FS_NAXIS, err) ||
           fs_h5_write_strings(f, path, "param_distributions", pd, FS_NAXIS, err) ||
           fs_h5_write_array(f, path, "params", 2, pdims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                             s->params, 0, NULL,
                             "each world's sampled value of each axis (columns: param_names; "
                             "NaN: the model's own value)",
                             err);
  free(points);
  return rc ? -1 : 0;
}

static int write_attrs(hid_t f, const char* path, const fsDatasetSpec* s, fsError* err) {
  const fsGenSpec* g = s->spec;
  char targets[FS_GEN_MAX_TARGETS * 4100] = "";
  for (int i = 0; i < g->ntargets; i++)
    snprintf(targets + strlen(targets), sizeof targets - strlen(targets), "%s%s", i ? "\n" : "",
             g->targets[i]);
  return fs_h5_attr_string(f, path, "spec", g->text, err) ||
                 fs_h5_attr_string(f, path, "flysim_version", fs_version_string(), err) ||
                 fs_h5_attr_string(f, path, "mujoco_version", mj_versionString(), err) ||
                 fs_h5_attr_string(f, path, "model_file", g->model, err) ||
                 fs_h5_attr_string(f, path, "targets_files", targets, err) ||
                 fs_h5_attr_string(f, path, "backend", s->backend, err) ||
                 fs_h5_attr_int(f, path, "worlds", g->worlds, err) ||
                 fs_h5_attr_int(f, path, "steps", g->steps, err) ||
                 fs_h5_attr_int(f, path, "record_every", g->record_every, err) ||
                 fs_h5_attr_int(f, path, "block_worlds", g->block_worlds, err) ||
                 fs_h5_attr_int(f, path, "seed", (long long)g->seed, err) ||
                 fs_h5_attr_double(f, path, "timestep", s->m->opt.timestep, err) ||
                 fs_h5_attr_string(f, path, "layout",
                                   "world-major: /worlds/<series> (worlds, rows, columns); row j "
                                   "is the state after step (j + 1) x record_every",
                                   err) ||
                 fs_h5_attr_int(f, path, "complete", 0, err)
             ? -1
             : 0;
}

// /worlds/<series>, /time, the health datasets and /blocks_done.
static int create_data(fsDataset* d, fsError* err) {
  const fsDatasetSpec* s = &d->s;
  const char* path = d->partial;
  hid_t g = -1, gcpl = -1;
  FS_H5_TRY(err, path, gcpl = fs_h5_gcpl());
  FS_H5_TRY(err, path, g = H5Gcreate2(d->file, "worlds", H5P_DEFAULT, gcpl, H5P_DEFAULT));
  hsize_t N = (hsize_t)d->nworld, R = (hsize_t)s->nrow;
  for (int k = 0; k < FS_NSERIES; k++) {
    if (!s->rec->ncol[k]) continue;
    fsSeriesSpec ss = fs_record_series_spec(s->rec, k);
    // One world by a window of rows (about 64 KiB): a training loader's random window
    // of one world decompresses one or two chunks (bench/cpu/read_dataset.py measures it).
    hsize_t C = (hsize_t)ss.ncol, window = FS_DATASET_CHUNK_BYTES / (C * 4);
    if (window < 1) window = 1;
    if (window > R) window = R;
    hsize_t dims[3] = {N, R, C}, chunk[3] = {1, window, C};
    d->series[k] = create_prealloc(g, path, ss.name, H5T_IEEE_F32LE, 3, dims, chunk, err);
    if (d->series[k] < 0 ||
        fs_h5_attr_string(d->series[k], path, "units", ss.units ? ss.units : "", err) ||
        fs_h5_attr_string(d->series[k], path, "description", ss.doc ? ss.doc : "", err) ||
        (ss.names_dataset &&
         fs_h5_attr_string(d->series[k], path, "columns", ss.names_dataset, err)))
      goto fail;
  }
  double* time = fs_calloc(err, "the time axis", (size_t)R + 1, sizeof(double));
  if (!time) goto fail;
  for (hsize_t j = 0; j < R; j++) time[j] = (double)(j + 1) * s->row_dt;
  int trc = fs_h5_write_array(d->file, path, "time", 1, &R, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, time,
                              0, "s", "time of each row from the start of the trajectory", err);
  free(time);
  if (trc) goto fail;
  hsize_t wdims[2] = {N, mjNWARNING}, B = (hsize_t)d->nblock;
  d->warn = create_prealloc(d->file, path, "world_warnings", H5T_STD_I32LE, 2, wdims, NULL, err);
  d->limit =
      create_prealloc(d->file, path, "world_solver_limit_steps", H5T_STD_I32LE, 1, &N, NULL, err);
  d->serr =
      create_prealloc(d->file, path, "world_solver_error_steps", H5T_STD_I32LE, 1, &N, NULL, err);
  d->peak = create_prealloc(d->file, path, "world_peak_contacts", H5T_STD_I32LE, 1, &N, NULL, err);
  d->problem = create_prealloc(d->file, path, "world_problem", H5T_STD_U8LE, 1, &N, NULL, err);
  d->done = create_prealloc(d->file, path, "blocks_done", H5T_STD_U8LE, 1, &B, NULL, err);
  if (d->warn < 0 || d->limit < 0 || d->serr < 0 || d->peak < 0 || d->problem < 0 || d->done < 0)
    goto fail;
  FS_H5_TRY(err, path,
            H5Dwrite(d->done, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, d->done_flags));
  fs_h5_close(g);
  fs_h5_close(gcpl);
  return 0;
fail:
  fs_h5_close(g);
  fs_h5_close(gcpl);
  return -1;
}

fsDataset* fs_dataset_create(const fsDatasetSpec* s, fsError* err) {
  fs_h5_quiet();
  fsDataset* d = dataset_alloc(s, err);
  if (!d) return NULL;
  if (access(d->final, F_OK) == 0 || access(d->partial, F_OK) == 0) {
    fs_fail(err,
            "%s already holds a dataset (%s); fix: --resume to finish it, another --out, or "
            "remove it",
            s->dir, access(d->final, F_OK) == 0 ? d->final : d->partial);
    dataset_free(d);
    return NULL;
  }
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (fcpl >= 0) H5Pset_obj_track_times(fcpl, 0);
  d->file = H5Fcreate(d->partial, H5F_ACC_EXCL, fcpl, H5P_DEFAULT);
  if (fcpl >= 0) H5Pclose(fcpl);
  if (d->file < 0) {
    fs_h5_fail(err, d->partial, "H5Fcreate", __func__, __FILE__, __LINE__);
    fs_fail_append(err, "; fix: a writable --out");
    dataset_free(d);
    return NULL;
  }
  if (write_attrs(d->file, d->partial, s, err) || write_names(d->file, d->partial, s, err) ||
      create_data(d, err) || H5Fflush(d->file, H5F_SCOPE_GLOBAL) < 0) {
    close_all(d);
    unlink(d->partial);
    dataset_free(d);
    return NULL;
  }
  return d;
}

// The attribute `spec` of the open file into a malloc'd string.
static char* read_spec(hid_t f) {
  hid_t a = H5Aopen(f, "spec", H5P_DEFAULT), t = -1;
  char* text = NULL;
  char* copy = NULL;
  if (a < 0) return NULL;
  t = H5Aget_type(a);
  if (t >= 0 && H5Tis_variable_str(t) > 0 && H5Aread(a, t, &text) >= 0 && text) {
    copy = strdup(text);
    H5free_memory(text);
  }
  H5Tclose(t);
  H5Aclose(a);
  return copy;
}

static hid_t open_ds(fsDataset* d, const char* name, fsError* err) {
  hid_t ds = H5Dopen2(d->file, name, H5P_DEFAULT);
  if (ds < 0)
    fs_fail(err, "%s: no %s: not a flysim generate file; fix: another --out", d->partial, name);
  return ds;
}

int fs_dataset_complete(const fsDatasetSpec* s, fsError* err) {
  char partial[PATH_MAX], final[PATH_MAX];
  dataset_paths(s, partial, final);
  if (access(partial, F_OK) == 0 || access(final, F_OK) != 0) return 0;
  fs_h5_quiet();
  hid_t f = H5Fopen(final, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return fs_h5_fail(err, final, "H5Fopen", __func__, __FILE__, __LINE__);
  char* text = read_spec(f);
  H5Fclose(f);
  int same = text && !strcmp(text, s->spec->text);
  free(text);
  if (!same)
    return fs_fail(err,
                   "%s is complete, made from another spec than %s; fix: resume with the spec "
                   "it was made with (its attribute `spec` holds it), or another --out",
                   final, s->spec->path);
  return 1;
}

fsDataset* fs_dataset_resume(const fsDatasetSpec* s, fsError* err) {
  fs_h5_quiet();
  fsDataset* d = dataset_alloc(s, err);
  if (!d) return NULL;
  if (access(d->partial, F_OK) != 0 && s->nrank > 1 && access(d->final, F_OK) != 0) {
    dataset_free(d); // a rank that had not started: it starts now
    fsDatasetSpec fresh = *s;
    return fs_dataset_create(&fresh, err);
  }
  if (access(d->partial, F_OK) != 0) {
    if (access(d->final, F_OK) == 0)
      fs_fail(err, "%s is complete already: nothing to resume", d->final);
    else
      fs_fail(err, "%s: no dataset to resume (no %s); fix: drop --resume to start one", s->dir,
              d->partial);
    dataset_free(d);
    return NULL;
  }
  d->file = H5Fopen(d->partial, H5F_ACC_RDWR, H5P_DEFAULT);
  if (d->file < 0) {
    fs_h5_fail(err, d->partial, "H5Fopen", __func__, __FILE__, __LINE__);
    dataset_free(d);
    return NULL;
  }
  char* text = read_spec(d->file);
  if (!text || strcmp(text, s->spec->text)) {
    fs_fail(err,
            "%s was started from another spec than %s (%s); fix: resume with the spec it "
            "was started with (its attribute `spec` holds it), or start a new --out",
            d->partial, s->spec->path, text ? "the text differs" : "none stored");
    free(text);
    dataset_free(d);
    return NULL;
  }
  free(text);
  for (int k = 0; k < FS_NSERIES; k++) {
    if (!s->rec->ncol[k]) continue;
    char name[128];
    snprintf(name, sizeof name, "worlds/%s", fs_record_series_spec(s->rec, k).name);
    if ((d->series[k] = open_ds(d, name, err)) < 0) goto fail;
  }
  if ((d->done = open_ds(d, "blocks_done", err)) < 0 ||
      (d->warn = open_ds(d, "world_warnings", err)) < 0 ||
      (d->limit = open_ds(d, "world_solver_limit_steps", err)) < 0 ||
      (d->serr = open_ds(d, "world_solver_error_steps", err)) < 0 ||
      (d->peak = open_ds(d, "world_peak_contacts", err)) < 0 ||
      (d->problem = open_ds(d, "world_problem", err)) < 0)
    goto fail;
  FS_H5_TRY(err, d->partial,
            H5Dread(d->done, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, d->done_flags));
  return d;
fail:
  dataset_free(d);
  return NULL;
}

// Rows [w0, w0 + nb) of a dataset whose first dimension is worlds.
static int write_worlds(fsDataset* d, hid_t ds, int rank, const hsize_t* row, hsize_t w0,
                        hsize_t nb, hid_t mtype, const void* buf, fsError* err) {
  hsize_t start[3] = {w0, 0, 0}, count[3] = {nb, 0, 0};
  for (int i = 1; i < rank; i++) count[i] = row[i];
  return fs_h5_write_slab(ds, d->partial, rank, start, count, mtype, buf, err);
}

static int write_block(fsDataset* d, int k, float* const* data, const fsWorldStatus* st,
                       fsError* err) {
  const int bw = d->s.spec->block_worlds, w0 = k * bw;
  const int nb = w0 + bw <= d->nworld ? bw : d->nworld - w0;
  for (int s = 0; s < FS_NSERIES; s++) {
    if (d->series[s] < 0) continue;
    hsize_t row[3] = {0, (hsize_t)d->s.nrow, (hsize_t)d->s.rec->ncol[s]};
    if (write_worlds(d, d->series[s], 3, row, (hsize_t)w0, (hsize_t)nb, H5T_NATIVE_FLOAT, data[s],
                     err))
      return -1;
    d->bytes += 4.0 * nb * d->s.nrow * d->s.rec->ncol[s];
  }
  int* warn = fs_calloc(err, "world health", (size_t)nb * (mjNWARNING + 3), sizeof(int));
  unsigned char* bad = fs_calloc(err, "world health", (size_t)nb, 1);
  int rc = -1;
  if (!warn || !bad) goto done;
  int *limit = warn + (size_t)nb * mjNWARNING, *serr = limit + nb, *peak = serr + nb;
  for (int w = 0; w < nb; w++) {
    memcpy(warn + (size_t)w * mjNWARNING, st[w].warnings, sizeof st[w].warnings);
    limit[w] = st[w].solver_limit;
    serr[w] = st[w].solver_error;
    peak[w] = st[w].peak_contacts;
    bad[w] = (unsigned char)fs_world_has_problem(&st[w]);
  }
  hsize_t wrow[2] = {0, mjNWARNING}, one[1] = {0};
  if (write_worlds(d, d->warn, 2, wrow, (hsize_t)w0, (hsize_t)nb, H5T_NATIVE_INT, warn, err) ||
      write_worlds(d, d->limit, 1, one, (hsize_t)w0, (hsize_t)nb, H5T_NATIVE_INT, limit, err) ||
      write_worlds(d, d->serr, 1, one, (hsize_t)w0, (hsize_t)nb, H5T_NATIVE_INT, serr, err) ||
      write_worlds(d, d->peak, 1, one, (hsize_t)w0, (hsize_t)nb, H5T_NATIVE_INT, peak, err) ||
      write_worlds(d, d->problem, 1, one, (hsize_t)w0, (hsize_t)nb, H5T_NATIVE_UCHAR, bad, err))
    goto done;
  // The data reach the file before the mark that vouches for them.
  FS_H5_TRY(err, d->partial, H5Fflush(d->file, H5F_SCOPE_GLOBAL));
  d->done_flags[k] = 1;
  FS_H5_TRY(err, d->partial,
            H5Dwrite(d->done, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, d->done_flags));
  FS_H5_TRY(err, d->partial, H5Fflush(d->file, H5F_SCOPE_GLOBAL));
  rc = 0;
fail:
done:
  free(warn);
  free(bad);
  return rc;
}

int fs_dataset_write_block(fsDataset* d, int k, float* const* data, const fsWorldStatus* st,
                           fsError* err) {
  if (!write_block(d, k, data, st, err)) return 0;
  int done = 0;
  for (int b = 0; b < d->nblock; b++) done += d->done_flags[b] != 0;
  fs_fail_append(err,
                 "; fix: free space on that disk (or check it), then flysim generate --resume: "
                 "the %d block%s marked done in %s are kept",
                 done, done == 1 ? "" : "s", d->partial);
  return -1;
}

int fs_dataset_close(fsDataset* d, fsError* err) {
  (void)err;
  if (!d) return 0;
  int complete = 1;
  for (int k = 0; k < d->nblock; k++) complete &= !fs_dataset_owns(d, k) || d->done_flags[k];
  close_all(d);
  dataset_free(d);
  return complete;
}
