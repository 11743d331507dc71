// Plot series in the HDF5 file and the plot script (see common/outputs/plots.h).
#include "common/outputs/plots.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/recorder/h5util.h"
#include "common/profiling/profile_nsys.h"
#include "common/sys/spawn.h"

#ifndef FLYSIM_PYTHON
#define FLYSIM_PYTHON "python3"
#endif
#ifndef FLYSIM_SOURCE_DIR
#define FLYSIM_SOURCE_DIR "."
#endif
#ifndef FLYSIM_SCRIPTS_DIR
#define FLYSIM_SCRIPTS_DIR FLYSIM_SOURCE_DIR "/scripts"
#endif
#ifndef FLYSIM_PLOT_SCRIPT
#define FLYSIM_PLOT_SCRIPT FLYSIM_SCRIPTS_DIR "/plot_replay.py"
#endif

#define FS_MAX_LEG_DOFS 64

int fs_plot_leg_resolve(const fsReplayBinding* b, const char* model_path, const char* asked,
                        char* leg, size_t n, fsError* err) {
  char legs[1024];
  fs_leg_list(b, legs, sizeof legs);
  int cols[FS_MAX_LEG_DOFS];
  if (asked && asked[0]) {
    snprintf(leg, n, "%s", asked);
  } else {
    snprintf(leg, n, "lf");
    if (!fs_leg_columns(b, leg, cols, FS_MAX_LEG_DOFS)) sscanf(legs, "%31s", leg);
  }
  if (fs_leg_columns(b, leg, cols, FS_MAX_LEG_DOFS) > 0) return 0;
  if (!legs[0] && !(asked && asked[0])) { // a model without legs: no leg plot
    leg[0] = 0;
    return 0;
  }
  if (!legs[0])
    return fs_fail(err,
                   "--plot-leg %s: no actuated joint of %s names a leg (like 'lf_coxa' or "
                   "'l_knee'); fix: drop --plot-leg",
                   asked, model_path);
  return fs_fail(err, "--plot-leg %s: %s has no actuated joints of leg '%s'; fix: one of: %s", leg,
                 model_path, leg, legs);
}

int fs_pose_init(fsPose* p, const fsRecordLayout* rec, long long nstep, fsError* err) {
  memset(p, 0, sizeof *p);
  p->rec = rec;
  p->nstep = nstep;
  p->points = fs_calloc(err, "the pose record", (unsigned long long)nstep * 3,
                        (unsigned long long)(rec->npoint > 0 ? rec->npoint : 1) * sizeof(float));
  return p->points ? 0 : -1;
}

void fs_pose_free(fsPose* p) {
  free(p->points);
  memset(p, 0, sizeof *p);
}

// A float dataset (float32, or float64 from doubles), compressed: written once.
static int write_floats(hid_t loc, const char* path, const char* name, int rank,
                        const hsize_t* dims, hid_t mtype, const void* data, const char* units,
                        const char* doc, fsError* err) {
  hid_t ftype = mtype == H5T_NATIVE_DOUBLE ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
  return fs_h5_write_array(loc, path, name, rank, dims, ftype, mtype, data, 1, units, doc, err);
}

static int write_int_list(hid_t loc, const char* path, const char* name, const int* v, int n,
                          const char* doc, fsError* err) {
  hsize_t dims = (hsize_t)n;
  return fs_h5_write_array(loc, path, name, 1, &dims, H5T_STD_I32LE, H5T_NATIVE_INT, v, 0, NULL,
                           doc, err);
}

static double* time_axis(long long nstep, double dt, fsError* err) {
  double* t = fs_calloc(err, "the time axis", (unsigned long long)nstep, sizeof(double));
  if (t)
    for (long long k = 0; k < nstep; k++) t[k] = (double)k * dt;
  return t;
}

// Rows [0, nstep) of world 0 of a (T x N x C) float32 dataset, as (nstep x C).
static float* read_world0(hid_t file, const char* path, const char* name, long long nstep,
                          int* ncol, fsError* err) {
  hid_t d = -1, fspace = -1, mspace = -1;
  float* buf = NULL;
  hsize_t dims[3];
  FS_H5_TRY(err, path, d = H5Dopen2(file, name, H5P_DEFAULT));
  FS_H5_TRY(err, path, fspace = H5Dget_space(d));
  if (H5Sget_simple_extent_ndims(fspace) != 3 ||
      H5Sget_simple_extent_dims(fspace, dims, NULL) < 0 || (long long)dims[0] < nstep) {
    fs_fail(err, "%s: /%s is not (T >= %lld, N, C); fix: report this as a bug", path, name, nstep);
    goto fail;
  }
  *ncol = (int)dims[2];
  hsize_t start[3] = {0, 0, 0}, count[3] = {(hsize_t)nstep, 1, dims[2]};
  buf = fs_calloc(err, "a plotted series", (unsigned long long)nstep * dims[2], sizeof(float));
  if (!buf) goto fail;
  FS_H5_TRY(err, path, H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
  FS_H5_TRY(err, path, mspace = H5Screate_simple(3, count, NULL));
  if (nstep > 0)
    FS_H5_TRY(err, path, H5Dread(d, H5T_NATIVE_FLOAT, mspace, fspace, H5P_DEFAULT, buf));
  fs_h5_close(mspace);
  fs_h5_close(fspace);
  fs_h5_close(d);
  return buf;
fail:
  free(buf);
  fs_h5_close(mspace);
  fs_h5_close(fspace);
  fs_h5_close(d);
  return NULL;
}

// Columns cols of a (nstep x ncol) matrix, as (nstep x k).
static float* select_columns(const float* a, long long nstep, int ncol, const int* cols, int k,
                             fsError* err) {
  float* out =
      fs_calloc(err, "a plotted series", (unsigned long long)nstep * (unsigned)k, sizeof(float));
  if (out)
    for (long long t = 0; t < nstep; t++)
      for (int j = 0; j < k; j++) out[t * k + j] = a[t * ncol + cols[j]];
  return out;
}

static int write_joint_tracking(hid_t file, const char* path, const fsReplayBinding* b,
                                const char* leg, long long nstep, double dt, fsError* err) {
  int tcol[FS_MAX_LEG_DOFS], jcol[FS_MAX_LEG_DOFS];
  int k = fs_leg_columns(b, leg, tcol, FS_MAX_LEG_DOFS), rc = -1, nq = 0, na = 0;
  const char* names[FS_MAX_LEG_DOFS];
  for (int j = 0; j < k; j++) {
    jcol[j] = b->actuator_joint[tcol[j]];
    names[j] = b->joint_names[jcol[j]];
  }
  hid_t top = -1, g = -1;
  float *q = read_world0(file, path, "qpos_joint", nstep, &nq, err), *tg = NULL, *qs = NULL,
        *ts = NULL;
  if (q) tg = read_world0(file, path, "target", nstep, &na, err);
  if (tg) qs = select_columns(q, nstep, nq, jcol, k, err);
  if (qs) ts = select_columns(tg, nstep, na, tcol, k, err);
  double* time = ts ? time_axis(nstep, dt, err) : NULL;
  if (!time) goto done;
  hsize_t dims[2] = {(hsize_t)nstep, (hsize_t)k};
  FS_H5_TRY(err, path, top = H5Gcreate2(file, "plots", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  FS_H5_TRY(err, path,
            g = H5Gcreate2(top, "joint_tracking", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (write_floats(g, path, "time", 1, dims, H5T_NATIVE_DOUBLE, time, "s",
                   "time of each step (as /time)", err) ||
      write_floats(g, path, "target", 2, dims, H5T_NATIVE_FLOAT, ts, "rad",
                   "world 0's target angles of the leg's DoFs (columns target_column of "
                   "/target); plotted in degrees",
                   err) ||
      write_floats(g, path, "simulated", 2, dims, H5T_NATIVE_FLOAT, qs, "rad",
                   "world 0's simulated angles of the same DoFs (columns joint_column of "
                   "/qpos_joint); plotted in degrees",
                   err) ||
      fs_h5_write_strings(g, path, "dof_names", names, k, err) ||
      write_int_list(g, path, "target_column", tcol, k, "column of /target of each DoF", err) ||
      write_int_list(g, path, "joint_column", jcol, k, "column of /qpos_joint of each DoF", err) ||
      fs_h5_attr_string(g, path, "leg", leg, err) || fs_h5_attr_int(g, path, "world", 0, err))
    goto done;
  rc = 0;
fail:
done:
  fs_h5_close(g);
  fs_h5_close(top);
  free(q);
  free(tg);
  free(qs);
  free(ts);
  free(time);
  return rc;
}

static int write_pose(hid_t file, const char* path, const mjModel* m, const fsPose* pose,
                      long long nstep, double dt, fsError* err) {
  int P = pose->rec->npoint, rc = -1, nleg = 0;
  const char** names = fs_calloc(err, "point names", (unsigned)(P + 1), sizeof(char*));
  int* point_leg = fs_calloc(err, "point legs", (unsigned)(P + 1), sizeof(int));
  char(*legs)[32] = fs_calloc(err, "leg names", (unsigned)(P + 1), 32);
  const char** leg_names = fs_calloc(err, "leg names", (unsigned)(P + 1), sizeof(char*));
  double* time = time_axis(nstep, dt, err);
  hid_t g = -1;
  if (!names || !point_leg || !legs || !leg_names || !time) goto done;
  for (int i = 0; i < P; i++) {
    names[i] = fs_record_point_name(m, pose->rec, i);
    char leg[32];
    fs_leg_of(names[i], leg, sizeof leg);
    point_leg[i] = -1;
    if (!leg[0]) continue;
    for (int l = 0; l < nleg; l++)
      if (!strcmp(legs[l], leg)) point_leg[i] = l;
    if (point_leg[i] < 0) {
      snprintf(legs[nleg], 32, "%s", leg);
      leg_names[nleg] = legs[nleg];
      point_leg[i] = nleg++;
    }
  }
  hsize_t dims[3] = {(hsize_t)nstep, (hsize_t)P, 3};
  FS_H5_TRY(err, path, g = H5Gcreate2(file, "pose", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (write_floats(g, path, "points", 3, dims, H5T_NATIVE_FLOAT, pose->points,
                   "the model's length unit (NeuroMechFly: mm)",
                   "world 0's point positions at every step: MuJoCo's kinematics inside "
                   "mj_step, i.e. at the start of the step (as FlyGym's get_site_positions)",
                   err) ||
      write_floats(g, path, "time", 1, dims, H5T_NATIVE_DOUBLE, time, "s",
                   "time of each step (as /time)", err) ||
      fs_h5_write_strings(g, path, "point_names", names, P, err) ||
      write_int_list(g, path, "point_leg", point_leg, P,
                     "index into leg_names of each point's leg, -1 if none", err) ||
      fs_h5_write_strings(g, path, "leg_names", leg_names, nleg, err) ||
      fs_h5_attr_string(g, path, "source", pose->rec->points_are_sites ? "site_xpos" : "xpos",
                        err) ||
      fs_h5_attr_int(g, path, "world", 0, err))
    goto done;
  rc = 0;
fail:
done:
  fs_h5_close(g);
  free(names);
  free(point_leg);
  free(legs);
  free(leg_names);
  free(time);
  return rc;
}

int fs_plots_write_h5(hid_t file, const char* path, const mjModel* m, const fsReplayBinding* b,
                      const char* leg, const fsPose* pose, long long nstep, double timestep,
                      fsError* err) {
  if (nstep <= 0) return 0; // stopped before the first block: nothing to plot
  if (pose && pose->points && write_pose(file, path, m, pose, nstep, timestep, err)) return -1;
  if (leg && leg[0] && write_joint_tracking(file, path, b, leg, nstep, timestep, err)) return -1;
  return 0;
}

const char* fs_python(void) {
  const char* python = getenv("FLYSIM_PYTHON");
  return python && python[0] ? python : FLYSIM_PYTHON;
}

int fs_plot_script_run(const char* script, const char* h5path, const char* dir, const char* instead,
                       fsError* err) {
  const char* python = fs_python();
  char fix[512];
  snprintf(fix, sizeof fix,
           "fix: point FLYSIM_PYTHON at a Python with matplotlib and h5py (scripts/setup.sh "
           "makes one: .venv/bin/python) and rerun the command, or %s",
           instead);
  char found[PATH_MAX];
  fsError ignore;
  if (strchr(python, '/') ? access(python, X_OK) != 0
                          : fs_find_on_path(python, found, sizeof found, &ignore) != 0)
    return fs_fail(err, "%s: no such Python (%s), so no plots; the data are saved in %s; %s",
                   python, strchr(python, '/') ? strerror(errno) : "not on PATH", h5path, fix);
  const char* base = strrchr(script, '/');
  base = base ? base + 1 : script;
  char log[PATH_MAX];
  snprintf(log, sizeof log, "%s/%.*s.log", dir, (int)strcspn(base, "."), base);
  const char* argv[] = {python, script, h5path, dir, NULL};
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return fs_fail(err, "%s: cannot create the plot log: %s; the data are saved in %s", log,
                   strerror(errno), h5path);
  fsSpawnSpec s = {argv, -1, fd, fd, {-1, -1}, 0};
  pid_t pid = fs_spawn_tied(&s, err); // not left drawing if flysim is killed
  close(fd);
  if (pid < 0) return fs_fail_append(err, "; the data are saved in %s", h5path);
  int status = fs_spawn_wait(pid);
  if (status == 0) {
    unlink(log);
    return 0;
  }
  char how[64], tail[1600];
  fs_spawn_describe(status, how, sizeof how);
  fs_file_tail(log, tail, sizeof tail);
  return fs_fail(err, "`%s %s %s %s` %s: %s; the data are saved in %s; %s", python, script, h5path,
                 dir, how, tail[0] ? tail : "(no output)", h5path, fix);
}

int fs_plots_run(const char* h5path, const char* dir, fsError* err) {
  const char* script = getenv("FLYSIM_PLOT_SCRIPT");
  if (!script || !script[0]) script = FLYSIM_PLOT_SCRIPT;
  return fs_plot_script_run(script, h5path, dir, "pass --no-plots", err);
}

const char* fs_script_path(const char* name, char* out, size_t n) {
  snprintf(out, n, "%s/%s", FLYSIM_SCRIPTS_DIR, name);
  return out;
}

const char* fs_source_path(const char* rel, char* out, size_t n) {
  snprintf(out, n, "%s/%s", FLYSIM_SOURCE_DIR, rel);
  return out;
}
