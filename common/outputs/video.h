// The replay's video: frames due on FlyGym's frame clock, piped to ffmpeg as
// H.264 MP4 (libx264, yuv420p).
//
// FlyGym's renderer (flygym/rendering.py, FrameClock) shows the simulation at
// playback speed 0.2 and 25 frames per second: a frame every 0.2 / 25 = 0.008 s
// of simulated time, the first at the first step, then whenever the time has
// advanced by the interval (less half a timestep, against floating-point drift).
//
// ffmpeg runs in its own process group (a Ctrl-C stops the run, and ffmpeg still
// finishes the file) and reads raw RGB frames from a socket written with
// MSG_NOSIGNAL (a dead ffmpeg is an error, not a SIGPIPE). Its messages go to
// <video>.log, removed when it succeeds. FLYSIM_FFMPEG overrides the ffmpeg binary.
#ifndef FLYSIM_COMMON_OUTPUTS_VIDEO_H
#define FLYSIM_COMMON_OUTPUTS_VIDEO_H

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FS_VIDEO_PLAYBACK_SPEED 0.2 // FlyGym's Renderer defaults
#define FS_VIDEO_FPS            25
#define FS_VIDEO_WIDTH          320
#define FS_VIDEO_HEIGHT         240

typedef struct fsFrameClock {
  double interval;  // simulated seconds between frames: playback_speed / fps
  double tolerance; // half a timestep
  double last;      // time of the last frame (-inf before the first)
} fsFrameClock;

void fs_frame_clock_init(fsFrameClock* c, double playback_speed, double fps, double timestep);

/// 1 (and the frame is registered) if a frame is due at simulated time t.
int fs_frame_clock_tick(fsFrameClock* c, double t);

/// Frames the clock gives over steps 1..nstep of a timestep dt (times k * dt).
long fs_frame_clock_count(double playback_speed, double fps, double dt, long nstep);

typedef struct fsVideoWriter fsVideoWriter;

/// Start ffmpeg writing path (width x height RGB frames at fps). Errors name ffmpeg
/// and the fix (install it, FLYSIM_FFMPEG, --no-video).
fsVideoWriter* fs_video_writer_open(const char* path, int width, int height, double fps,
                                    fsError* err);

/// Send one frame (height x width x 3 bytes, top row first).
int fs_video_writer_frame(fsVideoWriter* v, const unsigned char* rgb, fsError* err);

/// Frames sent so far.
long fs_video_writer_frames(const fsVideoWriter* v);

/// Close the stream, wait for ffmpeg, check it succeeded; frees v (NULL is fine).
int fs_video_writer_close(fsVideoWriter* v, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
