// World 0's pose and video during the run (see common/outputs/replay_outputs.h).
#include "common/outputs/replay_outputs.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/outputs/plots.h"
#include "common/outputs/render.h"
#include "common/outputs/video.h"

struct fsOutputs {
  fsOutputsSpec spec;
  fsPose pose;
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
  snprintf(o->video_path, sizeof o->video_path, "%s/replay.mp4", o->spec.dir);
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
  if (s->pose && fs_pose_init(&o->pose, s->r->m, s->r->nstep, err)) {
    free(o);
    return NULL;
  }
  if (s->video) start_video(o);
  o->failed_at_start = o->video_failed;
  return o;
}

const char* fs_outputs_video_error(const fsOutputs* o) {
  return o && o->video_failed ? o->video_err.msg : NULL;
}

const char* fs_outputs_describe(const fsOutputs* o) {
  return o ? o->desc : "";
}

void fs_outputs_world0_step(void* arg, const mjData* d, int step) {
  fsOutputs* o = arg;
  if (o->pose.points) fs_pose_record(&o->pose, d, step);
  if (!o->writer || o->video_failed) return;
  double t = (double)(step + 1) * o->spec.r->m->opt.timestep;
  if (!fs_frame_clock_tick(&o->clock, t)) return;
  fsError err;
  if (fs_renderer_draw(o->renderer, d, o->frame, &err) ||
      fs_video_writer_frame(o->writer, o->frame, &err))
    video_failed(o, &err);
}

int fs_outputs_write_h5(const fsOutputs* o, hid_t file, const char* path, long long nstep,
                        fsError* err) {
  const fsReplay* r = o->spec.r;
  return fs_plots_write_h5(file, path, r->m, r->bind, o->spec.leg, o->pose.points ? &o->pose : NULL,
                           nstep, r->m->opt.timestep, err);
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

void fs_outputs_free(fsOutputs* o) {
  if (!o) return;
  if (o->writer) fs_video_writer_close(o->writer, NULL);
  fs_renderer_destroy(o->renderer);
  fs_pose_free(&o->pose);
  free(o->frame);
  free(o);
}
