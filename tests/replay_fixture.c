#include "tests/replay_fixture.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/replay/replay_io.h"

int fixture_open(Fixture* f, const char* model, const char* targets, int nworld, int nstep,
                 int nwarmup, int nthread) {
  memset(f, 0, sizeof *f);
  fsError err = {{0}, FS_OK};
  f->m = fs_model_load(model, &err);
  if (!f->m || fs_targets_load(targets, &f->t, &err) ||
      fs_targets_resample(&f->t, f->m->opt.timestep, &err) ||
      fs_replay_bind(f->m, model, &f->t, &f->b, &err) ||
      fs_replay_plan(&f->plan, f->m, model, &f->t, &f->b, nworld, nstep, nwarmup, &err) ||
      fs_replay_set_record(&f->plan, FS_RECORD_ALL, 0, &err)) {
    fprintf(stderr, "fixture: %s\n", err.msg);
    return -1;
  }
  f->nthread = nthread;
  return 0;
}

int fixture_run(Fixture* f, const char* h5) {
  fsError err = {{0}, FS_OK};
  fsRecorder* rec = NULL;
  int block = fs_replay_block_steps(f->plan.nworld, f->plan.nstep);
  if (!f->rb.b.index && fs_replay_open(&f->plan, FS_BACKEND_CPU, 64, f->nthread, &f->rb, &err)) {
    fprintf(stderr, "fixture: %s\n", err.msg);
    return -1;
  }
  if (h5) {
    snprintf(f->h5, sizeof f->h5, "%s", h5);
    fsReplayMeta meta = {"cpu", "f64", "test", f->rb.info.nthread};
    rec = fs_replay_recorder_open(&f->plan, h5, block, &meta, &err);
    if (!rec) {
      fprintf(stderr, "fixture: %s\n", err.msg);
      return -1;
    }
  }
  fsRunOptions opt = {rec, block, 0, "test", NULL, NULL, NULL, NULL, NULL, NULL};
  int rc = fs_replay_run(&f->plan, &f->rb, &opt, &f->res, &err);
  if (rc) fprintf(stderr, "fixture: %s\n", err.msg);
  fsWorldStatus* st = calloc((size_t)f->plan.nworld, sizeof *st);
  if (st && fs_replay_health(&f->plan, &f->rb, st, &err)) {
    fprintf(stderr, "fixture: %s\n", err.msg);
    rc = -1;
  }
  if (rec && fs_replay_recorder_close(rec, &f->plan, st, rc ? "error" : "completed", &err)) {
    fprintf(stderr, "fixture: %s\n", err.msg);
    rc = -1;
  }
  free(st);
  return rc;
}

fsWorldStatus* fixture_status(const Fixture* f) {
  fsWorldStatus* st = calloc((size_t)f->plan.nworld, sizeof *st);
  fsError err;
  if (st && fs_replay_health(&f->plan, &f->rb, st, &err)) fprintf(stderr, "fixture: %s\n", err.msg);
  return st;
}

int fixture_report(const Fixture* f, int verbose_limit) {
  fsWorldStatus* st = fixture_status(f);
  int n = st ? fs_replay_report_worlds(&f->plan, st, verbose_limit) : -1;
  free(st);
  return n;
}

mjData* fixture_world(const Fixture* f, int w) {
  return fs_batch_mjdata(f->rb.b, w);
}

void fixture_close(Fixture* f) {
  fs_replay_close(&f->rb);
  fs_replay_plan_free(&f->plan);
  fs_replay_binding_free(&f->b);
  fs_targets_free(&f->t);
  if (f->m) mj_deleteModel(f->m);
  memset(f, 0, sizeof *f);
}

float* fixture_read_series(const char* h5, const char* name, int* t, int* n, int* c) {
  hid_t file = H5Fopen(h5, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return NULL;
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t s = d >= 0 ? H5Dget_space(d) : -1;
  hsize_t dims[3] = {0, 0, 0};
  float* buf = NULL;
  if (s >= 0 && H5Sget_simple_extent_ndims(s) == 3 &&
      H5Sget_simple_extent_dims(s, dims, NULL) >= 0) {
    buf = malloc(dims[0] * dims[1] * dims[2] * sizeof(float) + 1);
    if (buf && H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
      free(buf);
      buf = NULL;
    }
  }
  *t = (int)dims[0];
  *n = (int)dims[1];
  *c = (int)dims[2];
  if (s >= 0) H5Sclose(s);
  if (d >= 0) H5Dclose(d);
  H5Fclose(file);
  return buf;
}
