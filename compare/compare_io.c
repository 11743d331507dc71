// compare.h5 and divergence.png (compare/compare_io.h).
#include "compare/compare_io.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/recorder/h5util.h"
#include "common/outputs/plots.h"
#include "common/replay/replay_io.h"

hid_t fs_compare_h5_create(const char* path, fsError* err) {
  fs_h5_quiet();
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    fs_h5_fail(err, path, "H5Fcreate", __func__, __FILE__, __LINE__);
    fs_fail_append(err, "; fix: check that --save's folder is writable, or choose another");
  }
  return f;
}

static int doubles(hid_t loc, const char* path, const char* name, const double* x, int n,
                   const char* units, const char* doc, fsError* err) {
  hsize_t dim = (hsize_t)n;
  return fs_h5_write_array(loc, path, name, 1, &dim, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, x, 0, units,
                           doc, err);
}

static int ints(hid_t loc, const char* path, const char* name, const int* x, int n, const char* doc,
                fsError* err) {
  hsize_t dim = (hsize_t)n;
  return fs_h5_write_array(loc, path, name, 1, &dim, H5T_STD_I32LE, H5T_NATIVE_INT, x, 0, NULL, doc,
                           err);
}

// /b_vs_a or /floor_vs_a.
static int write_pair(hid_t f, const char* path, const char* group, const fsCompareResult* r, int p,
                      fsError* err) {
  hid_t g = -1;
  FS_H5_TRY(err, path, g = H5Gcreate2(f, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  int n = r->ndone;
  if (doubles(g, path, "dq_max", r->dq_max[p], n, "rad",
              "largest |joint angle - A's| over worlds (and the floor's runs) and joints after "
              "each step",
              err) ||
      doubles(g, path, "dq_rms", r->dq_rms[p], n, "rad",
              "RMS of joint angle - A's over worlds (and the floor's runs) and joints after "
              "each step",
              err) ||
      doubles(g, path, "dq_geomean", r->dq_geo[p], n, "rad",
              "geometric mean over worlds (and the floor's runs) of the largest |dq| over "
              "joints (each at least 1e-15): the ratio to the floor is the geometric mean over "
              "the steps of b_vs_a's over floor_vs_a's",
              err) ||
      doubles(g, path, "thorax", r->thorax[p], n, "model length (NeuroMechFly: mm)",
              "largest distance between the root free joint's positions over worlds", err) ||
      ints(g, path, "ncon_mismatch", r->ncon[p], n,
           "worlds whose contact count differs (the floor's: in any of its runs)", err) ||
      fs_h5_attr_double(g, path, "max_dq", r->max_dq[p], err) ||
      fs_h5_attr_int(g, path, "first_step_over_angle", r->first_over[p][FS_CMP_ANGLE], err) ||
      fs_h5_attr_int(g, path, "first_step_over_thorax", r->first_over[p][FS_CMP_THORAX], err) ||
      fs_h5_attr_int(g, path, "first_step_contacts_differ", r->first_over[p][FS_CMP_CONTACTS], err))
    goto fail;
  fs_h5_close(g);
  return 0;
fail:
  fs_h5_close(g);
  return -1;
}

static int write_worlds(hid_t f, const char* path, const fsCompareSpec* s, const fsCompareResult* r,
                        fsError* err) {
  int N = r->nworld;
  double* x = calloc((size_t)N * 8, sizeof(double));
  int* k = calloc((size_t)N * 2, sizeof(int));
  long long* start = calloc((size_t)N, sizeof(long long));
  hid_t g = -1;
  if (!x || !k || !start) {
    fs_fail_oom(err, "the per-world table", (double)N * 64);
    goto fail;
  }
  for (int w = 0; w < N; w++) {
    const fsCompareWorld* cw = &r->worlds[w];
    x[w] = cw->final_dq[FS_CMP_B];
    x[N + w] = cw->final_dq[FS_CMP_FLOOR];
    x[2 * N + w] = cw->max_dq[FS_CMP_B];
    x[3 * N + w] = cw->max_dq[FS_CMP_FLOOR];
    x[4 * N + w] = cw->track_rms[FS_CMP_RUN_A];
    x[5 * N + w] = cw->track_rms[FS_CMP_RUN_B];
    x[6 * N + w] = r->ndone ? exp(cw->log_dq[FS_CMP_B] / r->ndone) : 0;
    x[7 * N + w] = r->ndone ? exp(cw->log_dq[FS_CMP_FLOOR] / r->ndone) : 0;
    k[w] = cw->problem[FS_CMP_RUN_A];
    k[N + w] = cw->problem[FS_CMP_RUN_B];
    start[w] = s->a.plan->world_start[w];
  }
  FS_H5_TRY(err, path, g = H5Gcreate2(f, "worlds", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  hsize_t dim = (hsize_t)N;
  if (doubles(g, path, "final_dq_b", x, N, "rad", "max |dq| over joints after the last step",
              err) ||
      doubles(g, path, "final_dq_floor", x + N, N, "rad", "the floor run's", err) ||
      doubles(g, path, "max_dq_b", x + 2 * N, N, "rad", "max |dq| over joints and steps", err) ||
      doubles(g, path, "max_dq_floor", x + 3 * N, N, "rad", "the floor run's", err) ||
      doubles(g, path, "tracking_rms_a", x + 4 * N, N, "rad",
              "RMS |q - target| over the run and the driven joints, backend A", err) ||
      doubles(g, path, "tracking_rms_b", x + 5 * N, N, "rad", "the same, backend B", err) ||
      doubles(g, path, "geomean_dq_b", x + 6 * N, N, "rad",
              "geometric mean over the steps of max |dq| over joints (at least 1e-15)", err) ||
      doubles(g, path, "geomean_dq_floor", x + 7 * N, N, "rad", "the floor run's", err) ||
      ints(g, path, "problem_a", k, N,
           "1: warnings, a MuJoCo error, solves at the iteration limit or failed", err) ||
      ints(g, path, "problem_b", k + N, N, "the same, backend B", err) ||
      fs_h5_write_array(g, path, "world_start", 1, &dim, H5T_STD_I64LE, H5T_NATIVE_LLONG, start, 0,
                        NULL, "clip row of each world's first step", err))
    goto fail;
  fs_h5_close(g);
  free(x);
  free(k);
  free(start);
  return 0;
fail:
  fs_h5_close(g);
  free(x);
  free(k);
  free(start);
  return -1;
}

static int write_stages(hid_t f, const char* path, const fsStageReport* st, fsError* err) {
  int n = st->nrow;
  const char* stage[FS_STAGE_ROWS];
  const char* field[FS_STAGE_ROWS];
  double v[4][FS_STAGE_ROWS];
  int iv[3][FS_STAGE_ROWS];
  for (int i = 0; i < n; i++) {
    const fsStageRow* r = &st->rows[i];
    stage[i] = r->stage;
    field[i] = r->field;
    v[0][i] = r->err;
    v[1][i] = r->bound;
    v[2][i] = r->ours;
    v[3][i] = r->ref;
    iv[0][i] = r->world;
    iv[1][i] = r->index;
    iv[2][i] = r->pass;
  }
  hid_t g = -1;
  FS_H5_TRY(err, path, g = H5Gcreate2(f, "stages", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (fs_h5_write_strings(g, path, "stage", stage, n, err) ||
      fs_h5_write_strings(g, path, "field", field, n, err) ||
      doubles(g, path, "error", v[0], n, NULL,
              "|ours - MuJoCo| / max(|MuJoCo|, floor x the field's scale in the world)", err) ||
      doubles(g, path, "bound", v[1], n, NULL, "the error allowed", err) ||
      doubles(g, path, "ours", v[2], n, NULL, "the worst element, ours", err) ||
      doubles(g, path, "ref", v[3], n, NULL, "the worst element, MuJoCo's", err) ||
      ints(g, path, "world", iv[0], n, NULL, err) ||
      ints(g, path, "element", iv[1], n, NULL, err) || ints(g, path, "pass", iv[2], n, NULL, err) ||
      fs_h5_attr_string(g, path, "runner", st->runner, err) ||
      fs_h5_attr_int(g, path, "worlds", st->nworld, err) ||
      fs_h5_attr_int(g, path, "pass", st->pass, err))
    goto fail;
  fs_h5_close(g);
  return 0;
fail:
  fs_h5_close(g);
  return -1;
}

static int write_attrs(hid_t f, const char* path, const fsCompareSpec* s, const fsCompareResult* r,
                       const fsCompareMeta* meta, fsError* err) {
  char model_a[PATH_MAX], model_b[PATH_MAX];
  if (!realpath(s->a.plan->model_path, model_a))
    snprintf(model_a, sizeof model_a, "%s", s->a.plan->model_path);
  if (!realpath(s->b.plan->model_path, model_b))
    snprintf(model_b, sizeof model_b, "%s", s->b.plan->model_path);
  return fs_h5_attr_string(f, path, "backend_a", s->a.label, err) ||
                 fs_h5_attr_string(f, path, "backend_b", s->b.label, err) ||
                 fs_h5_attr_string(f, path, "floor", fs_floor_name(s->floor_mode), err) ||
                 fs_h5_attr_int(f, path, "floor_runs", s->floor_runs, err) ||
                 fs_h5_attr_double(f, path, "ratio", r->ratio, err) ||
                 fs_h5_attr_double(f, path, "max_ratio", s->max_ratio, err) ||
                 fs_h5_attr_double(f, path, "max_dq_ratio", r->max_ratio, err) ||
                 fs_h5_attr_double(f, path, "angle_threshold", s->threshold[FS_CMP_ANGLE], err) ||
                 fs_h5_attr_double(f, path, "thorax_threshold", s->threshold[FS_CMP_THORAX], err) ||
                 fs_h5_attr_int(f, path, "new_problem_worlds", r->new_problem_worlds, err) ||
                 fs_h5_attr_string(f, path, "verdict", meta->verdict, err) ||
                 fs_h5_attr_int(f, path, "steps_planned", r->nstep, err) ||
                 fs_h5_attr_int(f, path, "steps_compared", r->ndone, err) ||
                 fs_h5_attr_int(f, path, "worlds", r->nworld, err) ||
                 fs_h5_attr_int(f, path, "warmup_steps", s->a.plan->nwarmup, err) ||
                 fs_h5_attr_int(f, path, "interrupted", r->interrupted, err) ||
                 fs_h5_attr_double(f, path, "timestep", s->a.plan->m->opt.timestep, err) ||
                 fs_h5_attr_string(f, path, "model_file_a", model_a, err) ||
                 fs_h5_attr_string(f, path, "model_file_b", model_b, err) ||
                 fs_h5_attr_string(f, path, "targets_file_a", s->a.plan->targets->path, err) ||
                 fs_h5_attr_string(f, path, "targets_file_b", s->b.plan->targets->path, err) ||
                 fs_h5_attr_string(f, path, "command_line", meta->command_line, err) ||
                 fs_h5_attr_string(f, path, "flysim_version", fs_version_string(), err) ||
                 fs_h5_attr_string(f, path, "mujoco_version", mj_versionString(), err)
             ? -1
             : 0;
}

int fs_compare_h5_write(hid_t f, const char* path, const fsCompareSpec* s, const fsCompareResult* r,
                        const fsCompareMeta* meta, fsError* err) {
  int n = r->ndone;
  double dt = s->a.plan->m->opt.timestep;
  double* t = calloc((size_t)(n ? n : 1), sizeof(double));
  int* step = calloc((size_t)(n ? n : 1), sizeof(int));
  hid_t g = -1;
  if (!t || !step) {
    fs_fail_oom(err, "the step axis", (double)n * 12);
    goto fail;
  }
  for (int k = 0; k < n; k++) {
    step[k] = k;
    t[k] = (k + 1) * dt;
  }
  if (ints(f, path, "step", step, n, "replay step (0-based; after the warm-up)", err) ||
      doubles(f, path, "time", t, n, "s", "simulated time at the end of each step", err) ||
      write_pair(f, path, "b_vs_a", r, FS_CMP_B, err) ||
      write_pair(f, path, "floor_vs_a", r, FS_CMP_FLOOR, err))
    goto fail;
  FS_H5_TRY(err, path, g = H5Gcreate2(f, "tracking", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (doubles(g, path, "a", r->track[FS_CMP_RUN_A], n, "rad",
              "RMS |q - target| over worlds and driven joints, backend A", err) ||
      doubles(g, path, "b", r->track[FS_CMP_RUN_B], n, "rad", "the same, backend B", err))
    goto fail;
  fs_h5_close(g);
  g = -1;
  if (write_worlds(f, path, s, r, err) ||
      (meta->stages && write_stages(f, path, meta->stages, err)) ||
      write_attrs(f, path, s, r, meta, err))
    goto fail;
  free(t);
  free(step);
  FS_H5_TRY(err, path, H5Fclose(f));
  return 0;
fail:
  fs_h5_close(g);
  free(t);
  free(step);
  fs_h5_close(f);
  return -1;
}

int fs_compare_plot(const char* h5path, const char* dir, fsError* err) {
  char script[PATH_MAX];
  const char* env = getenv("FLYSIM_COMPARE_PLOT_SCRIPT");
  if (env && env[0])
    snprintf(script, sizeof script, "%s", env);
  else
    fs_script_path("plot_compare.py", script, sizeof script);
  return fs_plot_script_run(script, h5path, dir,
                            "draw it later with "
                            "scripts/plot_compare.py",
                            err);
}
