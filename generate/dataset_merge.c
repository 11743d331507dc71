// flysim generate's merge (generate/dataset.h): once every MPI rank's partial file is done,
// fs_dataset_merge compacts them into DIR/dataset.h5 through fs_h5_compact, which copies one
// layout of HDF5 files into one (each world's rows from the file that holds them, the float
// series shuffled and deflated, no timestamps) and replaces the destination atomically.
#include "generate/dataset.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/recorder/h5util.h"

int fs_dataset_merge(const fsDatasetSpec* s, char* final, size_t n, fsError* err) {
  const int R = s->nrank > 1 ? s->nrank : 1, N = s->spec->worlds, bw = s->spec->block_worlds;
  char(*paths)[PATH_MAX] = fs_calloc(err, "the partial files", (size_t)R, PATH_MAX);
  const char** srcs = fs_calloc(err, "the partial files", (size_t)R, sizeof(char*));
  int* world_src = fs_calloc(err, "the worlds' files", (size_t)N, sizeof(int));
  int rc = -1;
  if (!paths || !srcs || !world_src) goto done;
  for (int r = 0; r < R; r++) {
    fs_dataset_partial_path(s->dir, r, R, paths[r], PATH_MAX);
    srcs[r] = paths[r];
  }
  for (int w = 0; w < N; w++) world_src[w] = (w / bw) % R;
  snprintf(final, n, "%s/dataset.h5", s->dir);
  if (fs_h5_compact(srcs, R, world_src, N, final, err)) goto done;
  for (int r = 0; r < R; r++) unlink(paths[r]);
  rc = 0;
done:
  free(paths);
  free(srcs);
  free(world_src);
  return rc;
}

//---------------------------------- compaction --------------------------------------------------

typedef struct Compact {
  const char* src; // srcs[0] (for messages)
  hid_t in[64];    // every source, open
  int nsrc;
  const int* world_src; // (N) or NULL
  int nworld;
  fsError* err;
} Compact;

static int src_of(const Compact* c, hsize_t w) {
  return c->world_src ? c->world_src[w] : 0;
}

static herr_t copy_attr(hid_t loc, const char* name, const H5A_info_t* info, void* arg) {
  (void)info;
  hid_t dst = *(hid_t*)arg;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT), t = -1, sp = -1, b = -1;
  herr_t rc = -1;
  void* buf = NULL;
  if (a < 0) return -1;
  t = H5Aget_type(a);
  sp = H5Aget_space(a);
  hssize_t n = H5Sget_simple_extent_npoints(sp);
  size_t size = H5Tget_size(t);
  buf = calloc((size_t)(n > 0 ? n : 1), size > 0 ? size : 1);
  if (t >= 0 && sp >= 0 && buf && H5Aread(a, t, buf) >= 0 &&
      (b = H5Acreate2(dst, name, t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 && H5Awrite(b, t, buf) >= 0)
    rc = 0;
  if (buf && t >= 0 && H5Tis_variable_str(t) > 0) H5Dvlen_reclaim(t, sp, H5P_DEFAULT, buf);
  free(buf);
  if (b >= 0) H5Aclose(b);
  H5Sclose(sp);
  H5Tclose(t);
  H5Aclose(a);
  return rc;
}

static int copy_attrs(hid_t src, hid_t dst) {
  hsize_t idx = 0;
  return H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_attr, &dst) < 0 ? -1 : 0;
}

// A float series (N x R x C): a compressed copy, one chunk row of worlds at a time, each
// from its world's source.
static int compact_series(Compact* c, hid_t sg, hid_t dg, const char* name) {
  hid_t s = -1, sp = -1, pl = -1, dpl = -1, d = -1, ms = -1, fs = -1, other = -1;
  float* buf = NULL;
  int rc = -1;
  hsize_t dims[3], chunk[3];
  if ((s = H5Dopen2(sg, name, H5P_DEFAULT)) < 0 || (sp = H5Dget_space(s)) < 0 ||
      H5Sget_simple_extent_ndims(sp) != 3 || H5Sget_simple_extent_dims(sp, dims, NULL) < 0 ||
      (pl = H5Dget_create_plist(s)) < 0 || H5Pget_chunk(pl, 3, chunk) != 3 ||
      (dpl = fs_h5_dcpl()) < 0 || H5Pset_chunk(dpl, 3, chunk) < 0 || H5Pset_shuffle(dpl) < 0 ||
      H5Pset_deflate(dpl, 4) < 0 ||
      (d = H5Dcreate2(dg, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, dpl, H5P_DEFAULT)) < 0)
    goto done;
  buf = malloc((size_t)chunk[0] * dims[1] * dims[2] * sizeof(float) + 1);
  if (!buf) goto done;
  for (hsize_t w0 = 0; w0 < dims[0]; w0 += chunk[0]) {
    hsize_t start[3] = {w0, 0, 0}, count[3] = {chunk[0], dims[1], dims[2]};
    if (w0 + count[0] > dims[0]) count[0] = dims[0] - w0;
    int from = src_of(c, w0);
    hid_t in = s;
    if (from != 0) {
      char path[160];
      snprintf(path, sizeof path, "worlds/%s", name);
      if ((other = H5Dopen2(c->in[from], path, H5P_DEFAULT)) < 0) goto done;
      in = other;
    }
    if ((ms = H5Screate_simple(3, count, NULL)) < 0 || (fs = H5Scopy(sp)) < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dread(in, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, buf) < 0 ||
        H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, buf) < 0)
      goto done;
    H5Sclose(ms);
    H5Sclose(fs);
    ms = fs = -1;
    if (other >= 0) H5Dclose(other);
    other = -1;
  }
  rc = copy_attrs(s, d);
done:
  free(buf);
  if (other >= 0) H5Dclose(other);
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  if (d >= 0) H5Dclose(d);
  if (dpl >= 0) H5Pclose(dpl);
  if (pl >= 0) H5Pclose(pl);
  if (sp >= 0) H5Sclose(sp);
  if (s >= 0) H5Dclose(s);
  if (rc) fs_fail(c->err, "%s: cannot compact /worlds/%s", c->src, name);
  return rc;
}

typedef struct Pair {
  Compact* c;
  hid_t dst;
} Pair;

static herr_t compact_world(hid_t g, const char* name, const H5L_info_t* info, void* arg) {
  (void)info;
  Pair* p = arg;
  return compact_series(p->c, g, p->dst, name) ? -1 : 0;
}

// A per-world dataset copied from the first source: the rows of worlds that other
// sources hold, from them.
static int merge_rows(Compact* c, hid_t dst, const char* name) {
  hid_t d = H5Dopen2(dst, name, H5P_DEFAULT), sp = -1, t = -1;
  int rc = -1, rank;
  hsize_t dims[2] = {0, 1};
  unsigned char* row = NULL;
  if (d < 0 || (sp = H5Dget_space(d)) < 0 || (rank = H5Sget_simple_extent_ndims(sp)) < 1 ||
      rank > 2 || H5Sget_simple_extent_dims(sp, dims, NULL) < 0 || (t = H5Dget_type(d)) < 0)
    goto done;
  size_t bytes = H5Tget_size(t) * (rank == 2 ? dims[1] : 1);
  if (!(row = malloc(bytes + 1))) goto done;
  for (hsize_t w = 0; w < dims[0] && w < (hsize_t)c->nworld; w++) {
    int from = src_of(c, w);
    if (from == 0) continue;
    hsize_t start[2] = {w, 0}, count[2] = {1, dims[1]};
    hid_t s = H5Dopen2(c->in[from], name, H5P_DEFAULT), fs = H5Scopy(sp),
          ms = H5Screate_simple(rank, count, NULL);
    int ok = s >= 0 && fs >= 0 && ms >= 0 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dread(s, t, ms, fs, H5P_DEFAULT, row) >= 0 &&
             H5Dwrite(d, t, ms, fs, H5P_DEFAULT, row) >= 0;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (s >= 0) H5Dclose(s);
    if (!ok) goto done;
  }
  rc = 0;
done:
  free(row);
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  if (d >= 0) H5Dclose(d);
  return rc;
}

static int per_world(const char* name) {
  return !strcmp(name, "world_warnings") || !strcmp(name, "world_solver_limit_steps") ||
         !strcmp(name, "world_solver_error_steps") || !strcmp(name, "world_peak_contacts") ||
         !strcmp(name, "world_problem");
}

static herr_t compact_root(hid_t root, const char* name, const H5L_info_t* info, void* arg) {
  (void)info;
  Pair* p = arg;
  if (strcmp(name, "worlds") && strcmp(name, "blocks_done")) {
    hid_t ocp = H5Pcreate(H5P_OBJECT_COPY);
    herr_t rc = H5Ocopy(root, name, p->dst, name, ocp, H5P_DEFAULT);
    H5Pclose(ocp);
    if (rc >= 0 && p->c->nsrc > 1 && per_world(name) && merge_rows(p->c, p->dst, name)) rc = -1;
    if (rc < 0) fs_fail(p->c->err, "%s: cannot copy /%s", p->c->src, name);
    return rc < 0 ? -1 : 0;
  }
  if (!strcmp(name, "blocks_done")) return 0; // a working mark, not data
  hid_t gcpl = fs_h5_gcpl(), sg = H5Gopen2(root, name, H5P_DEFAULT);
  hid_t dg = H5Gcreate2(p->dst, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
  Pair q = {p->c, dg};
  hsize_t idx = 0;
  herr_t rc =
      sg >= 0 && dg >= 0 ? H5Literate(sg, H5_INDEX_NAME, H5_ITER_INC, &idx, compact_world, &q) : -1;
  if (dg >= 0) H5Gclose(dg);
  if (sg >= 0) H5Gclose(sg);
  if (gcpl >= 0) H5Pclose(gcpl);
  return rc < 0 ? -1 : 0;
}

// Every block of every source done (each source's own blocks are marked in it).
static int check_done(Compact* c, int nblock, int bw, fsError* err) {
  for (int k = 0; k < nblock; k++) {
    int from = src_of(c, (hsize_t)k * bw);
    hid_t d = H5Dopen2(c->in[from], "blocks_done", H5P_DEFAULT);
    unsigned char* flags = calloc((size_t)nblock, 1);
    int ok = d >= 0 && flags &&
             H5Dread(d, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, flags) >= 0 && flags[k];
    free(flags);
    if (d >= 0) H5Dclose(d);
    if (!ok)
      return fs_fail(err,
                     "block %d is not done in its file (worlds %d-); fix: flysim generate "
                     "--resume with the same number of ranks",
                     k, k * bw);
  }
  return 0;
}

int fs_h5_compact(const char* const* srcs, int nsrc, const int* world_src, int nworld,
                  const char* dst, fsError* err) {
  char tmp[PATH_MAX + 8];
  snprintf(tmp, sizeof tmp, "%s.tmp", dst);
  if (nsrc < 1 || nsrc > 64) return fs_fail(err, "%s: %d sources: 1 to 64", dst, nsrc);
  Compact c = {srcs[0], {0}, nsrc, world_src, nworld, err};
  hid_t out = -1;
  int rc = -1, opened = 0;
  for (; opened < nsrc; opened++)
    if ((c.in[opened] = H5Fopen(srcs[opened], H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
      fs_h5_fail(err, srcs[opened], "H5Fopen", __func__, __FILE__, __LINE__);
      fs_fail_append(err, "; fix: flysim generate --resume with the same number of ranks");
      goto done;
    }
  long long nblock = 0, bw = 1;
  if (nsrc > 1) {
    double v = 0;
    if (fs_h5_read_attr_double(c.in[0], srcs[0], "block_worlds", &v, err) < 0) goto done;
    bw = (long long)v;
    nblock = (nworld + bw - 1) / bw;
    if (check_done(&c, (int)nblock, (int)bw, err)) goto done;
  }
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (fcpl >= 0) H5Pset_obj_track_times(fcpl, 0);
  out = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  if (fcpl >= 0) H5Pclose(fcpl);
  if (out < 0) {
    fs_h5_fail(err, tmp, "H5Fcreate", __func__, __FILE__, __LINE__);
    goto done;
  }
  Pair p = {&c, out};
  hsize_t idx = 0;
  fs_fail(err, "%s: cannot compact it into %s", srcs[0], dst);
  if (H5Literate(c.in[0], H5_INDEX_NAME, H5_ITER_INC, &idx, compact_root, &p) < 0 ||
      copy_attrs(c.in[0], out) || fs_h5_attr_int(out, dst, "complete", 1, err))
    goto done;
  rc = 0;
done:
  if (out >= 0 && H5Fclose(out) < 0) rc = -1;
  for (int i = 0; i < opened; i++) H5Fclose(c.in[i]);
  if (rc == 0 && rename(tmp, dst) != 0)
    rc = fs_fail(err, "%s: cannot rename %s to it: %s", dst, tmp, strerror(errno));
  if (rc) unlink(tmp);
  return rc;
}
