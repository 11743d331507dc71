// World 0's pose and video during the run (see common/outputs/replay_outputs.h).
#include "common/outputs/replay_outputs.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys/clock.h"
#include "common/recorder/h5util.h"

#include "common/outputs/plots.h"
#include "common/outputs/render.h"
#include "common/outputs/video.h"

#define FS_VIDEO_FILE "replay.mp4" // world 0 rendered in the loop (cpu)
#define FS_GRID_FILE  "grid.mp4"   // the rendered worlds, tiled

struct fsOutputs {
  fsOutputsSpec spec;
  fsPose pose;   // world 0's recorded sites
  double* sq;    // (N x A) every world's summed squared tracking error per DoF
  long long nsq; // steps summed
  fsFrameClock grid_clock;
  float* frames;      // (fmax x K x nq) the grid's worlds' qpos at frame times
  double* frame_time; // (fmax)
  int nframe, fmax;
  // cpu: world 0's video inside the loop
  fsRenderer* renderer;
  fsVideoWriter* writer;
  fsFrameClock clock;
  unsigned char* frame; // (height x width x 3)
  int video_failed;
  int failed_at_start; // the error was there before the run (already reported)
  fsError video_err;
  char video_path[PATH_MAX];
  char desc[PATH_MAX + 1024];
};

// The model's camera that follows the fly: the first tracking camera, else camera
// 0, else -1 (a free camera tracking body 1).
static int pick_camera(const mjModel* m) {
  for (int i = 0; i < m->ncam; i++)
    if (m->cam_mode[i] == mjCAMLIGHT_TRACK || m->cam_mode[i] == mjCAMLIGHT_TRACKCOM) return i;
  return m->ncam > 0 ? 0 : -1;
}

static void video_failed(fsOutputs* o, const fsError* err) {
  if (o->video_failed) return;
  o->video_failed = 1;
  o->video_err = *err;
}

static void start_video(fsOutputs* o) {
  const fsReplay* r = o->spec.r;
  const mjModel* m = r->m;
  fsError err;
  int camera = pick_camera(m);
  snprintf(o->video_path, sizeof o->video_path, "%s/" FS_VIDEO_FILE, o->spec.dir);
  fs_frame_clock_init(&o->clock, FS_VIDEO_PLAYBACK_SPEED, FS_VIDEO_FPS, m->opt.timestep);
  o->frame = malloc((size_t)FS_VIDEO_WIDTH * FS_VIDEO_HEIGHT * 3);
  if (!o->frame) {
    fs_fail_oom(&err, "a video frame", (double)FS_VIDEO_WIDTH * FS_VIDEO_HEIGHT * 3);
    video_failed(o, &err);
    return;
  }
  // ffmpeg first: finding it is cheap, starting EGL and uploading meshes is not.
  o->writer =
      fs_video_writer_open(o->video_path, FS_VIDEO_WIDTH, FS_VIDEO_HEIGHT, FS_VIDEO_FPS, &err);
  if (!o->writer) {
    video_failed(o, &err);
    return;
  }
  o->renderer = fs_renderer_create(m, r->model_path, FS_VIDEO_WIDTH, FS_VIDEO_HEIGHT, camera, &err);
  if (!o->renderer) {
    video_failed(o, &err);
    fs_video_writer_close(o->writer, NULL); // no frames: removes the file
    o->writer = NULL;
    return;
  }
  const char* cam = camera >= 0 ? mj_id2name(m, mjOBJ_CAMERA, camera) : NULL;
  char camdesc[300];
  if (camera >= 0)
    snprintf(camdesc, sizeof camdesc, "camera '%s'", cam ? cam : "(unnamed)");
  else
    snprintf(camdesc, sizeof camdesc, "a free camera tracking body 1 (the model has no camera)");
  snprintf(o->desc, sizeof o->desc,
           "%s: %s, %dx%d, %d fps at %gx speed (a frame every %g s), %ld frames; %s", o->video_path,
           camdesc, FS_VIDEO_WIDTH, FS_VIDEO_HEIGHT, FS_VIDEO_FPS, FS_VIDEO_PLAYBACK_SPEED,
           FS_VIDEO_PLAYBACK_SPEED / FS_VIDEO_FPS,
           fs_frame_clock_count(FS_VIDEO_PLAYBACK_SPEED, FS_VIDEO_FPS, m->opt.timestep, r->nstep),
           fs_renderer_describe(o->renderer));
}

fsOutputs* fs_outputs_create(const fsOutputsSpec* s, fsError* err) {
  fsOutputs* o = fs_calloc(err, "the outputs", 1, sizeof *o);
  if (!o) return NULL;
  o->spec = *s;
  const fsReplay* r = s->r;
  if (s->pose && fs_pose_init(&o->pose, &r->rec, r->nstep, err)) goto fail;
  if (s->tracking) {
    o->sq = fs_calloc(err, "the tracking error", (size_t)r->nworld * r->bind->nact, sizeof(double));
    if (!o->sq) goto fail;
  }
  if (s->grid && r->nrender > 0) {
    fs_frame_clock_init(&o->grid_clock, FS_VIDEO_PLAYBACK_SPEED, FS_VIDEO_FPS, r->m->opt.timestep);
    o->fmax = (int)fs_frame_clock_count(FS_VIDEO_PLAYBACK_SPEED, FS_VIDEO_FPS, r->m->opt.timestep,
                                        r->nstep);
    size_t n = (size_t)(o->fmax > 0 ? o->fmax : 1) * r->nrender * r->m->nq;
    o->frames = fs_calloc(err, "the grid video's states", n, sizeof(float));
    o->frame_time = fs_calloc(err, "the grid video's states", (size_t)o->fmax + 1, sizeof(double));
    if (!o->frames || !o->frame_time) goto fail;
  }
  if (s->video) start_video(o);
  o->failed_at_start = o->video_failed;
  return o;
fail:
  fs_outputs_free(o);
  return NULL;
}

int fs_outputs_block(void* arg, const fsBlock* b, fsError* err) {
  (void)err;
  fsOutputs* o = arg;
  const fsReplay* r = o->spec.r;
  const int N = r->nworld, n = b->ndone;
  const float* sites = b->series[FS_SERIES_SITE_POS];
  if (o->pose.points && sites) {
    int C = r->rec.ncol[FS_SERIES_SITE_POS];
    for (int k = 0; k < n && b->step0 + k < o->pose.nstep; k++)
      memcpy(o->pose.points + (size_t)(b->step0 + k) * C, sites + (size_t)k * N * C,
             (size_t)C * sizeof(float));
  }
  const float* q = b->series[FS_SERIES_QPOS_JOINT];
  const float* t = b->series[FS_SERIES_TARGET];
  if (o->sq && q && t) {
    const int J = r->rec.ncol[FS_SERIES_QPOS_JOINT], A = r->bind->nact;
    const int* joint = r->bind->actuator_joint;
    for (int k = 0; k < n; k++)
      for (int w = 0; w < N; w++) {
        const float* qw = q + ((size_t)k * N + w) * J;
        const float* tw = t + ((size_t)k * N + w) * A;
        double* sq = o->sq + (size_t)w * A;
        for (int a = 0; a < A; a++) {
          if (joint[a] < 0) continue; // not a position servo's column: no angle to track
          double e = (double)tw[a] - (double)qw[joint[a]];
          sq[a] += e * e;
        }
      }
    o->nsq += n;
  }
  if (o->frames && b->render_qpos) {
    size_t row = (size_t)r->nrender * r->m->nq;
    for (int k = 0; k < n && o->nframe < o->fmax; k++) {
      double time = (double)(b->step0 + k + 1) * r->m->opt.timestep;
      if (!fs_frame_clock_tick(&o->grid_clock, time)) continue;
      memcpy(o->frames + (size_t)o->nframe * row, b->render_qpos + (size_t)k * row,
             row * sizeof(float));
      o->frame_time[o->nframe++] = time;
    }
  }
  return 0;
}

const char* fs_outputs_video_error(const fsOutputs* o) {
  return o && o->video_failed ? o->video_err.msg : NULL;
}

const char* fs_outputs_describe(const fsOutputs* o) {
  return o ? o->desc : "";
}

long fs_outputs_next_frame(void* arg, long step) {
  fsOutputs* o = arg;
  if (!o->writer || o->video_failed) return -1;
  const double dt = o->spec.r->m->opt.timestep, due = o->clock.last + o->clock.interval;
  long k = step; // the clock's first tick at or after step's time (fs_frame_clock_tick)
  while ((double)(k + 1) * dt < due - o->clock.tolerance) k++;
  return k;
}

int fs_outputs_frame(void* arg, fsBatch b, long step, fsError* err) {
  (void)err; // a video that fails stops the video, not the run
  fsOutputs* o = arg;
  const mjData* d = fs_batch_mjdata(b, 0);
  if (!o->writer || o->video_failed || !d) return 0;
  double t = (double)(step + 1) * o->spec.r->m->opt.timestep;
  if (!fs_frame_clock_tick(&o->clock, t)) return 0;
  fsError e;
  if (fs_renderer_draw(o->renderer, d, NULL, o->frame, &e) ||
      fs_video_writer_frame(o->writer, o->frame, &e))
    video_failed(o, &e);
  return 0;
}

// Open /name in file, or create it.
static hid_t open_group(hid_t file, const char* path, const char* name, fsError* err) {
  hid_t g = H5Lexists(file, name, H5P_DEFAULT) > 0
                ? H5Gopen2(file, name, H5P_DEFAULT)
                : H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) fs_fail(err, "%s: cannot create the group /%s", path, name);
  return g;
}

// /plots/tracking_error: every world's RMS tracking error per DoF over the run.
static int write_tracking_error(const fsOutputs* o, hid_t file, const char* path, fsError* err) {
  const fsReplay* r = o->spec.r;
  const int N = r->nworld, A = r->bind->nact;
  double* rms = fs_calloc(err, "the tracking error", (size_t)N * A, sizeof(double));
  const char** names = fs_calloc(err, "DoF names", (size_t)A + 1, sizeof(char*));
  int rc = -1;
  hid_t top = -1, g = -1;
  if (!rms || !names) goto done;
  const int* joint = r->bind->actuator_joint;
  for (size_t i = 0; i < (size_t)N * A; i++)
    rms[i] = joint[i % (size_t)A] >= 0 ? sqrt(o->sq[i] / (double)o->nsq) : NAN;
  for (int a = 0; a < A; a++)
    names[a] = joint[a] >= 0 ? r->bind->joint_names[joint[a]] : r->bind->actuator_names[a];
  if ((top = open_group(file, path, "plots", err)) < 0) goto done;
  if ((g = open_group(top, path, "tracking_error", err)) < 0) goto done;
  hsize_t dims[2] = {(hsize_t)N, (hsize_t)A};
  if (fs_h5_write_array(g, path, "rms", 2, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rms, 0, "rad",
                        "each world's root-mean-square of target - simulated angle over the "
                        "run, per DoF (columns: dof_names; /target and /qpos_joint as recorded)",
                        err) ||
      fs_h5_write_strings(g, path, "dof_names", names, A, err) ||
      fs_h5_attr_int(g, path, "steps", o->nsq, err))
    goto done;
  rc = 0;
done:
  fs_h5_close(g);
  fs_h5_close(top);
  free(rms);
  free(names);
  return rc;
}

// /render: the grid video's worlds' states at its frame times.
static int write_render(const fsOutputs* o, hid_t file, const char* path, fsError* err) {
  const fsReplay* r = o->spec.r;
  const int K = r->nrender, F = o->nframe;
  int* worlds = fs_calloc(err, "the grid's worlds", (size_t)K, sizeof(int));
  if (!worlds) return -1;
  for (int w = 0; w < K; w++) worlds[w] = w;
  hid_t g = open_group(file, path, "render", err);
  hsize_t dims[3] = {(hsize_t)F, (hsize_t)K, (hsize_t)r->m->nq}, nk = (hsize_t)K;
  int rc = g < 0 ||
           fs_h5_write_array(g, path, "qpos", 3, dims, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, o->frames,
                             1, "qpos units",
                             "whole qpos of the grid video's worlds at each frame: what the "
                             "video is rendered from (frames x worlds x nq)",
                             err) ||
           fs_h5_write_array(g, path, "time", 1, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                             o->frame_time, 0, "s", "time of each frame", err) ||
           fs_h5_write_array(g, path, "worlds", 1, &nk, H5T_STD_I32LE, H5T_NATIVE_INT, worlds, 0,
                             NULL, "world of each column", err) ||
           fs_h5_attr_double(g, path, "fps", FS_VIDEO_FPS, err) ||
           fs_h5_attr_double(g, path, "playback_speed", FS_VIDEO_PLAYBACK_SPEED, err);
  fs_h5_close(g);
  free(worlds);
  return rc ? -1 : 0;
}

int fs_outputs_write_h5(const fsOutputs* o, hid_t file, const char* path, long long nstep,
                        fsError* err) {
  const fsReplay* r = o->spec.r;
  if (nstep <= 0) return 0; // stopped before the first block
  if (fs_plots_write_h5(file, path, r->m, r->bind, o->spec.leg, o->pose.points ? &o->pose : NULL,
                        nstep, r->m->opt.timestep, err))
    return -1;
  if (o->sq && o->nsq > 0 && write_tracking_error(o, file, path, err)) return -1;
  if (o->frames && o->nframe > 0 && write_render(o, file, path, err)) return -1;
  return 0;
}

int fs_outputs_close_video(fsOutputs* o, long long nstep, FILE* out, fsError* err) {
  if (!o->spec.video) return 0;
  long frames = fs_video_writer_frames(o->writer);
  fsError close_err;
  if (o->writer && fs_video_writer_close(o->writer, &close_err) && nstep > 0)
    video_failed(o, &close_err);
  o->writer = NULL;
  fs_renderer_destroy(o->renderer);
  o->renderer = NULL;
  if (nstep == 0 && !o->video_failed) return 0; // nothing ran: no video, and no error
  if (o->video_failed && o->failed_at_start) return 1;
  if (o->video_failed) {
    if (err) *err = o->video_err;
    return -1;
  }
  fprintf(out, "Saved %s (%ld frames, %dx%d, %d fps)\n", o->video_path, frames, FS_VIDEO_WIDTH,
          FS_VIDEO_HEIGHT, FS_VIDEO_FPS);
  return 0;
}

void fs_grid_shape(int k, int* cols, int* rows) {
  int c = 1;
  while (c * c < k) c++;
  *cols = c;
  *rows = (k + c - 1) / c;
}

// Draw frame f's worlds into their tiles of rgb (rows*H x cols*W x 3).
static int draw_grid_frame(fsOutputs* o, fsRenderer* rd, mjData* d, int f, unsigned char* tile,
                           unsigned char* rgb, int cols, fsError* err) {
  const fsReplay* r = o->spec.r;
  const int K = r->nrender, nq = (int)r->m->nq, W = FS_VIDEO_WIDTH, H = FS_VIDEO_HEIGHT;
  for (int w = 0; w < K; w++) {
    const float* q = o->frames + ((size_t)f * K + w) * nq;
    for (int i = 0; i < nq; i++) d->qpos[i] = q[i];
    char label[32];
    snprintf(label, sizeof label, "world %d", w);
    if (fs_renderer_draw(rd, d, label, tile, err)) return -1;
    int x0 = (w % cols) * W, y0 = (w / cols) * H;
    for (int y = 0; y < H; y++)
      memcpy(rgb + ((size_t)(y0 + y) * cols * W + x0) * 3, tile + (size_t)y * W * 3, (size_t)W * 3);
  }
  return 0;
}

int fs_outputs_render_grid(fsOutputs* o, FILE* out, fsError* err) {
  if (!o->frames || o->nframe == 0) return 0;
  const fsReplay* r = o->spec.r;
  const int K = r->nrender;
  int cols, rows;
  fs_grid_shape(K, &cols, &rows);
  const int W = cols * FS_VIDEO_WIDTH, H = rows * FS_VIDEO_HEIGHT;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/" FS_GRID_FILE, o->spec.dir);
  double t0 = fs_clock_s();
  unsigned char* tile = calloc((size_t)FS_VIDEO_WIDTH * FS_VIDEO_HEIGHT, 3);
  unsigned char* rgb = calloc((size_t)W * H, 3);
  mjData* d = mj_makeData(r->m);
  fsRenderer* rd = NULL;
  fsVideoWriter* v = NULL;
  int rc = -1;
  if (!tile || !rgb || !d) {
    fs_fail_oom(err, "the grid video's frame", (double)W * H * 3);
    goto done;
  }
  if (!(v = fs_video_writer_open(path, W, H, FS_VIDEO_FPS, err))) goto done;
  if (!(rd = fs_renderer_create(r->m, r->model_path, FS_VIDEO_WIDTH, FS_VIDEO_HEIGHT,
                                pick_camera(r->m), err)))
    goto done;
  for (int f = 0; f < o->nframe; f++)
    if (draw_grid_frame(o, rd, d, f, tile, rgb, cols, err) || fs_video_writer_frame(v, rgb, err))
      goto done;
  rc = 0;
done:
  if (v && fs_video_writer_close(v, rc ? NULL : err)) rc = -1;
  fs_renderer_destroy(rd);
  mj_deleteData(d);
  free(tile);
  free(rgb);
  if (rc == 0)
    fprintf(out,
            "Saved %s (%d frames, worlds 0-%d in a %dx%d grid, %dx%d, %d fps; rendered after "
            "the run in %.1f s)\n",
            path, o->nframe, K - 1, cols, rows, W, H, FS_VIDEO_FPS, fs_clock_s() - t0);
  else
    fs_fail_append(err, "; the data are saved, and /render in the HDF5 file holds the states");
  return rc;
}

int fs_outputs_clear(const char* dir, fsError* err) {
  static const char* const files[] = {"replay.h5",
                                      "replay.h5.repack",
                                      "joint_angle_tracking.png",
                                      "joint_angle_tracking.pdf",
                                      "pose_over_time.png",
                                      "pose_over_time.pdf",
                                      "tracking_error.png",
                                      "tracking_error.pdf",
                                      FS_VIDEO_FILE,
                                      FS_GRID_FILE};
  int removed = 0;
  for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, files[k]);
    struct stat st;
    if (lstat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode) || unlink(path) != 0)
      return fs_fail(err, "--save-data %s: cannot replace %s of an earlier run: %s; fix: remove it",
                     dir, path, S_ISDIR(st.st_mode) ? "a folder" : strerror(errno));
    removed++;
  }
  return removed;
}

void fs_outputs_free(fsOutputs* o) {
  if (!o) return;
  if (o->writer) fs_video_writer_close(o->writer, NULL);
  fs_renderer_destroy(o->renderer);
  fs_pose_free(&o->pose);
  free(o->sq);
  free(o->frames);
  free(o->frame_time);
  free(o->frame);
  free(o);
}
