// Frame clock and ffmpeg pipe (see common/outputs/video.h).
#include "common/outputs/video.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/sys/files.h"
#include "common/profiling/profile_nsys.h"
#include "common/sys/spawn.h"

void fs_frame_clock_init(fsFrameClock* c, double playback_speed, double fps, double timestep) {
  c->interval = playback_speed / fps;
  c->tolerance = 0.5 * timestep;
  c->last = -INFINITY;
}

int fs_frame_clock_tick(fsFrameClock* c, double t) {
  if (t < c->last + c->interval - c->tolerance) return 0;
  c->last = t;
  return 1;
}

long fs_frame_clock_count(double playback_speed, double fps, double dt, long nstep) {
  fsFrameClock c;
  fs_frame_clock_init(&c, playback_speed, fps, dt);
  long n = 0;
  for (long k = 1; k <= nstep; k++) n += fs_frame_clock_tick(&c, (double)k * dt);
  return n;
}

struct fsVideoWriter {
  pid_t pid;
  int fd; // our end of ffmpeg's stdin
  int width, height;
  long frames;
  char path[PATH_MAX];
  char log[PATH_MAX + 8];
  char ffmpeg[PATH_MAX];
  int failed; // a write failed: ffmpeg is gone
};

static int find_ffmpeg(char* out, size_t n, fsError* err) {
  return fs_find_program("ffmpeg", "FLYSIM_FFMPEG", "the video is encoded by ffmpeg",
                         "install it (Debian: apt-get install ffmpeg) or pass --no-video", out, n,
                         err);
}

fsVideoWriter* fs_video_writer_open(const char* path, int width, int height, double fps,
                                    fsError* err) {
  fsVideoWriter* v = fs_calloc(err, "the video writer", 1, sizeof *v);
  if (!v) return NULL;
  v->pid = -1;
  v->fd = -1;
  v->width = width;
  v->height = height;
  snprintf(v->path, sizeof v->path, "%s", path);
  snprintf(v->log, sizeof v->log, "%s.log", path);
  if (find_ffmpeg(v->ffmpeg, sizeof v->ffmpeg, err)) goto fail;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
    fs_fail(err, "%s: cannot create the pipe to ffmpeg: %s; fix: raise the open-file limit", path,
            strerror(errno));
    goto fail;
  }
  shutdown(sv[0], SHUT_RD);
  int log = open(v->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    close(sv[0]);
    close(sv[1]);
    fs_fail(err, "%s: cannot create ffmpeg's log: %s; fix: choose a writable --save-data", v->log,
            strerror(errno));
    goto fail;
  }
  char size[32], rate[32];
  snprintf(size, sizeof size, "%dx%d", width, height);
  snprintf(rate, sizeof rate, "%g", fps);
  const char* argv[] = {
      v->ffmpeg,       "-hide_banner", "-loglevel",   "error",    "-y",         "-f",   "rawvideo",
      "-pixel_format", "rgb24",        "-video_size", size,       "-framerate", rate,   "-i",
      "pipe:0",        "-c:v",         "libx264",     "-pix_fmt", "yuv420p",    "-crf", "18",
      "-movflags",     "+faststart",   v->path,       NULL};
  fsSpawnSpec s = {argv, sv[1], log, log, {-1, -1}, 1};
  v->pid = fs_spawn(&s, err);
  close(sv[1]);
  close(log);
  v->fd = sv[0];
  if (v->pid < 0) goto fail;
  return v;
fail:
  if (v->fd >= 0) close(v->fd);
  unlink(v->log);
  free(v);
  return NULL;
}

int fs_video_writer_frame(fsVideoWriter* v, const unsigned char* rgb, fsError* err) {
  if (v->failed) return -1;
  size_t n = (size_t)v->width * (size_t)v->height * 3, done = 0;
  while (done < n) {
    ssize_t k = send(v->fd, rgb + done, n - done, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      v->failed = 1;
      char tail[1600];
      fs_file_tail(v->log, tail, sizeof tail);
      return fs_fail(err,
                     "%s: ffmpeg stopped reading frames after %ld (%s); ffmpeg said: %s; "
                     "fix: check that `%s -h encoder=libx264` works, or pass --no-video",
                     v->path, v->frames, strerror(errno), tail[0] ? tail : "(nothing)", v->ffmpeg);
    }
    done += (size_t)k;
  }
  v->frames++;
  return 0;
}

long fs_video_writer_frames(const fsVideoWriter* v) {
  return v ? v->frames : 0;
}

int fs_video_writer_close(fsVideoWriter* v, fsError* err) {
  if (!v) return 0;
  close(v->fd);
  int status = fs_spawn_wait(v->pid);
  int rc = 0;
  if (status != 0) {
    char how[64], tail[1600];
    fs_spawn_describe(status, how, sizeof how);
    fs_file_tail(v->log, tail, sizeof tail);
    rc = fs_fail(err,
                 "%s: ffmpeg %s after %ld frames; ffmpeg said: %s; fix: check that `%s -h "
                 "encoder=libx264` works, or pass --no-video",
                 v->path, how, v->frames, tail[0] ? tail : "(nothing)", v->ffmpeg);
  } else if (v->frames == 0) {
    rc = fs_fail(err, "%s: no frames were rendered (the run stopped before its first step)",
                 v->path);
  }
  if (v->frames == 0) unlink(v->path); // an empty or missing video, not a broken one
  if (rc == 0 || v->frames == 0) unlink(v->log);
  free(v);
  return rc;
}
