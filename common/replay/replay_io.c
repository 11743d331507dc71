#include "common/replay/replay_io.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/recorder/h5util.h"

// Write a 1-D or 2-D integer dataset (row-major) of the given file type.
static int write_ints(hid_t file, const char* path, const char* name, int rank, const hsize_t* dims,
                      hid_t ftype, hid_t mtype, const void* data, const char* doc, fsError* err) {
  return fs_h5_write_array(file, path, name, rank, dims, ftype, mtype, data, 0, NULL, doc, err);
}

static void utc_now(char* buf, size_t n) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int write_provenance(hid_t f, const char* path, const fsReplay* r, const fsReplayMeta* meta,
                            fsError* err) {
  char when[64], model_abs[PATH_MAX], targets_abs[PATH_MAX];
  utc_now(when, sizeof when);
  if (!realpath(r->model_path, model_abs))
    snprintf(model_abs, sizeof model_abs, "%s", r->model_path);
  if (!realpath(r->targets->path, targets_abs))
    snprintf(targets_abs, sizeof targets_abs, "%s", r->targets->path);
  if (fs_h5_attr_string(f, path, "units",
                        "the model's units (NeuroMechFly: length mm, mass g, time s); "
                        "angles rad",
                        err) ||
      fs_h5_attr_string(f, path, "model_file", model_abs, err) ||
      fs_h5_attr_string(f, path, "targets_file", targets_abs, err) ||
      fs_h5_attr_double(f, path, "targets_file_timestep", r->targets->source_timestep, err) ||
      fs_h5_attr_string(f, path, "mujoco_version", mj_versionString(), err) ||
      fs_h5_attr_string(f, path, "flysim_version", fs_version_string(), err) ||
      fs_h5_attr_string(f, path, "command_line", meta->command_line ? meta->command_line : "",
                        err) ||
      fs_h5_attr_string(f, path, "backend", meta->backend, err) ||
      fs_h5_attr_string(f, path, "precision", meta->precision, err) ||
      fs_h5_attr_int(f, path, "threads", meta->nthread, err) ||
      fs_h5_attr_int(f, path, "steps_planned", r->nstep, err) ||
      fs_h5_attr_int(f, path, "warmup_steps", r->nwarmup, err) ||
      fs_h5_attr_string(f, path, "created", when, err))
    return -1;
  return 0;
}

// The recorder's specs of the plan's selected series, in fsSeriesId order.
static int selected_series(const fsReplay* r, fsSeriesSpec out[FS_NSERIES]) {
  int n = 0;
  for (int k = 0; k < FS_NSERIES; k++)
    if (r->rec.ncol[k]) out[n++] = fs_record_series_spec(&r->rec, k);
  return n;
}

// /sensor_names: each sensordata column's sensor, "name" (one value) or "name[k]".
static int write_sensor_names(hid_t f, const char* path, const mjModel* m, fsError* err) {
  int n = (int)m->nsensordata;
  char* buf = fs_calloc(err, "sensor names", (size_t)n + 1, 80);
  const char** names = fs_calloc(err, "sensor names", (size_t)n + 1, sizeof(char*));
  int rc = -1;
  if (buf && names) {
    for (int i = 0; i < m->nsensor; i++) {
      const char* name = mj_id2name(m, mjOBJ_SENSOR, i);
      for (int k = 0; k < m->sensor_dim[i]; k++) {
        int c = m->sensor_adr[i] + k;
        char* out = buf + (size_t)c * 80;
        if (!name)
          snprintf(out, 80, "sensor%d[%d]", i, k);
        else if (m->sensor_dim[i] == 1)
          snprintf(out, 80, "%s", name);
        else
          snprintf(out, 80, "%s[%d]", name, k);
        names[c] = out;
      }
    }
    rc = fs_h5_write_strings(f, path, "sensor_names", names, n, err);
  }
  free(names);
  free(buf);
  return rc;
}

// /point_names for /site_pos, the root body's name on /thorax_pos, and what was
// recorded (attribute `recorded`).
static int write_record_names(hid_t f, const char* path, const fsReplay* r, fsError* err) {
  const fsRecordLayout* l = &r->rec;
  char names[256];
  fs_record_names(l->mask, names, sizeof names);
  if (fs_h5_attr_string(f, path, "recorded", names, err)) return -1;
  if (l->ncol[FS_SERIES_SITE_POS]) {
    const char** pn = fs_calloc(err, "point names", (size_t)l->npoint + 1, sizeof(char*));
    if (!pn) return -1;
    for (int p = 0; p < l->npoint; p++) pn[p] = fs_record_point_name(r->m, l, p);
    int rc = fs_h5_write_strings(f, path, "point_names", pn, l->npoint, err);
    free(pn);
    if (rc) return -1;
  }
  if (l->ncol[FS_SERIES_LEG_FORCE]) {
    const char* legs[FS_RECORD_MAX_LEGS];
    for (int k = 0; k < l->nleg; k++) legs[k] = l->leg_names[k];
    if (fs_h5_write_strings(f, path, "leg_names", legs, l->nleg, err)) return -1;
  }
  if (l->ncol[FS_SERIES_ADHESION]) {
    const char** an =
        fs_calloc(err, "adhesion names", (size_t)r->bind->nadhesion + 1, sizeof(char*));
    if (!an) return -1;
    for (int a = 0; a < r->bind->nadhesion; a++) {
      const char* name = mj_id2name(r->m, mjOBJ_ACTUATOR, r->bind->adhesion[a]);
      an[a] = name ? name : "";
    }
    int rc = fs_h5_write_strings(f, path, "adhesion_names", an, r->bind->nadhesion, err);
    free(an);
    if (rc) return -1;
  }
  if (l->ncol[FS_SERIES_SENSORS] && write_sensor_names(f, path, r->m, err)) return -1;
  if (l->ncol[FS_SERIES_THORAX_POS]) {
    const char* body = mj_id2name(r->m, mjOBJ_BODY, l->root_body);
    hid_t d = H5Dopen2(f, "thorax_pos", H5P_DEFAULT);
    if (d < 0) return fs_fail(err, "%s: cannot open /thorax_pos", path);
    int rc = fs_h5_attr_string(d, path, "body", body ? body : "", err);
    H5Dclose(d);
    if (rc) return -1;
  }
  return 0;
}

fsRecorder* fs_replay_recorder_open(const fsReplay* r, const char* path, int block,
                                    const fsReplayMeta* meta, fsError* err) {
  fsSeriesSpec series[FS_NSERIES];
  int nseries = selected_series(r, series);
  fsRecorderSpec spec = {path,  r->nstep,           r->nworld, 0,     r->nworld,
                         block, r->m->opt.timestep, nseries,   series};
  fsRecorder* rec = fs_recorder_create(&spec, err);
  if (!rec) return NULL;
  hid_t f = fs_recorder_file(rec);
  const fsReplayBinding* b = r->bind;
  hsize_t na = (hsize_t)b->nact, nw = (hsize_t)r->nworld;
  if (fs_h5_write_strings(f, path, "joint_names", b->joint_names, b->njoint, err) ||
      fs_h5_write_strings(f, path, "actuator_names", b->actuator_names, b->nact, err) ||
      write_ints(
          f, path, "target_joint_index", 1, &na, H5T_STD_I32LE, H5T_NATIVE_INT, b->actuator_joint,
          "for each column of /target, the column of /qpos_joint it drives (-1: none)", err) ||
      write_ints(f, path, "world_start", 1, &nw, H5T_STD_I64LE, H5T_NATIVE_LONG, r->world_start,
                 "row of the targets clip at which each world starts", err) ||
      write_provenance(f, path, r, meta, err) || write_record_names(f, path, r, err)) {
    fs_recorder_finish(rec, "failed to write metadata", NULL);
    return NULL;
  }
  return rec;
}

int fs_replay_recorder_close(fsRecorder* rec, const fsReplay* r, const fsWorldStatus* status,
                             const char* stop_reason, fsError* err) {
  return fs_replay_recorder_close_with(rec, r, status, stop_reason, NULL, NULL, err);
}

int fs_replay_recorder_close_with(fsRecorder* rec, const fsReplay* r, const fsWorldStatus* status,
                                  const char* stop_reason, fsReplayExtraWriter extra, void* arg,
                                  fsError* err) {
  if (!rec) return 0;
  if (!fs_recorder_ending_fits(rec, err)) { // a full disk: the file as its last block left it
    fs_recorder_finish(rec, NULL, NULL);
    return -1;
  }
  int rc = 0;
  hid_t f = fs_recorder_file(rec);
  char path[4096];
  snprintf(path, sizeof path, "%s", fs_recorder_path(rec));
  int* warn = calloc((size_t)r->nworld * mjNWARNING, sizeof(int));
  int* first = calloc((size_t)r->nworld * 4, sizeof(int)); // first, limit, error, contacts
  if (rc == 0 && warn && first) {
    int *limit = first + r->nworld, *serr = first + 2 * r->nworld, *peak = first + 3 * r->nworld;
    for (int w = 0; w < r->nworld; w++) first[w] = INT_MIN; // none, unless the worlds ran
    for (int w = 0; w < r->nworld && status; w++) {
      fsWorldStatus st = status[w];
      memcpy(warn + (size_t)w * mjNWARNING, st.warnings, sizeof st.warnings);
      first[w] = st.first_warning >= 0 ? st.first_warning_step : INT_MIN;
      limit[w] = st.solver_limit;
      serr[w] = st.solver_error;
      peak[w] = st.peak_contacts;
    }
    const char* names[mjNWARNING];
    for (int i = 0; i < mjNWARNING; i++) names[i] = fs_warning_name(i);
    hsize_t dims[2] = {(hsize_t)r->nworld, mjNWARNING};
    if (write_ints(f, path, "world_warnings", 2, dims, H5T_STD_I32LE, H5T_NATIVE_INT, warn,
                   "MuJoCo warning counts of each world (columns: /warning_names)", err) ||
        fs_h5_write_strings(f, path, "warning_names", names, mjNWARNING, err) ||
        write_ints(f, path, "world_first_warning_step", 1, dims, H5T_STD_I32LE, H5T_NATIVE_INT,
                   first,
                   "replay step of each world's first warning (negative: warm-up; "
                   "-2147483648: none)",
                   err) ||
        write_ints(f, path, "world_solver_limit_steps", 1, dims, H5T_STD_I32LE, H5T_NATIVE_INT,
                   limit, "steps of each world whose Newton solve ran to opt.iterations", err) ||
        write_ints(f, path, "world_solver_error_steps", 1, dims, H5T_STD_I32LE, H5T_NATIVE_INT,
                   serr, "steps of each world whose solve failed (a rank-deficient Hessian)",
                   err) ||
        write_ints(f, path, "world_peak_contacts", 1, dims, H5T_STD_I32LE, H5T_NATIVE_INT, peak,
                   "the most contacts each world made in one step, warm-up included", err))
      rc = -1;
  } else if (rc == 0) {
    rc = fs_fail_oom(err, "world status", (double)r->nworld * (mjNWARNING + 4) * sizeof(int));
  }
  free(warn);
  free(first);
  if (extra) {
    fsError extra_err;
    if (extra(arg, f, path, fs_recorder_steps(rec), &extra_err) && rc == 0) {
      rc = -1;
      if (err) *err = extra_err;
    }
  }
  fsError close_err;
  if (fs_recorder_finish(rec, stop_reason, &close_err)) {
    if (rc == 0 && err) *err = close_err;
    return -1;
  }
  // Streamed uncompressed (crash-safe); compressed once the file is closed.
  fsSeriesSpec series[FS_NSERIES];
  int nseries = selected_series(r, series);
  const char* names[FS_NSERIES];
  for (int k = 0; k < nseries; k++) names[k] = series[k].name;
  fsError zerr;
  if (nseries > 0 && fs_h5_compress(path, nseries, names, &zerr))
    fprintf(stderr, "flysim: warning: %s\n", zerr.msg);
  return rc;
}
