// What `--save-data DIR` makes beside the recorded series, on every backend:
//
// - from each recorded block (fs_outputs_block, the driver's block hook, on its
//   thread while the next block steps): world 0's pose (/pose, from the recorded
//   sites), every world's tracking error (sum of squared target - angle per DoF,
//   for /plots/tracking_error) and, at FlyGym's frame times, the whole qpos of the
//   grid video's worlds (/render);
// - after the run: the grid video DIR/grid.mp4 of those worlds, each from its
//   tracking camera, tiled in one frame, rendered from the kept states with MuJoCo's
//   renderer (fs_outputs_render_grid), so that the timed loop pays nothing for it;
// - cpu only: world 0's video DIR/replay.mp4 rendered inside the loop from MuJoCo's own
//   data of world 0 at each frame's step (the driver stops there: fs_outputs_next_frame,
//   fs_outputs_frame), as FlyGym's CPU script does.
//
// A video that cannot be made (no ffmpeg, no EGL) does not stop the run: the
// error is kept, the data are saved, and the caller reports it and exits non-zero.
#ifndef FLYSIM_COMMON_OUTPUTS_REPLAY_OUTPUTS_H
#define FLYSIM_COMMON_OUTPUTS_REPLAY_OUTPUTS_H

#include <stdio.h>

#include <hdf5.h>
#include <mujoco/mujoco.h>

#include "common/base/error.h"
#include "common/replay/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsOutputsSpec {
  const fsReplay* r;
  const char* dir; // --save-data
  int pose;        // /pose: world 0's recorded sites (the plan records sites)
  int tracking;    // /plots/tracking_error (the plan records angles and targets)
  int grid;        // DIR/grid.mp4 of worlds 0..r->nrender-1 (r->nrender > 0)
  int video;       // cpu: world 0's tracking camera into DIR/replay.mp4 during the run
  const char* leg; // leg of /plots/joint_tracking ("" = none)
} fsOutputsSpec;

typedef struct fsOutputs fsOutputs;

/// Allocate the records and start the in-loop video's renderer and ffmpeg. Fails
/// only if memory runs out; a video that cannot start is kept as
/// fs_outputs_video_error.
fsOutputs* fs_outputs_create(const fsOutputsSpec* s, fsError* err);

/// The first in-loop video error (at start or during the run), or NULL.
const char* fs_outputs_video_error(const fsOutputs* o);

/// One line describing the in-loop video ("DIR/replay.mp4: camera ..., 320x240, ..."), or "".
const char* fs_outputs_describe(const fsOutputs* o);

/// The block hook (an fsBlockHook): pose, tracking error, the grid's frames.
int fs_outputs_block(void* o, const fsBlock* b, fsError* err);

/// The cpu's world-0 video (fsRunOptions.next_stop): the first replay step >= step after
/// which a frame is due, or -1 (no video, or it failed).
long fs_outputs_next_frame(void* o, long step);

/// fsRunOptions.at_stop: world 0's frame from the cpu batch's MuJoCo data. A video that
/// fails is kept as fs_outputs_video_error; the run goes on (returns 0).
int fs_outputs_frame(void* o, fsBatch b, long step, fsError* err);

/// Write /pose, /plots and /render into the open replay file (nstep recorded steps).
int fs_outputs_write_h5(const fsOutputs* o, hid_t file, const char* path, long long nstep,
                        fsError* err);

/// Finish the in-loop video (ffmpeg writes the MP4); prints "Saved ... (N frames)" to
/// out. Returns 0, or -1 with err for an error during the run or the encoding, or 1
/// if the video could not start (fs_outputs_video_error, reported before the run).
/// nstep: steps run (0: stopped before the first step; no video then, no error).
int fs_outputs_close_video(fsOutputs* o, long long nstep, FILE* out, fsError* err);

/// Render DIR/grid.mp4 from the kept frames (after the run); prints "Saved ..." to
/// out. 0 (also when there is nothing to render), or -1 with err.
int fs_outputs_render_grid(fsOutputs* o, FILE* out, fsError* err);

/// Tiles of a grid of k worlds: columns ceil(sqrt(k)), rows to fit.
void fs_grid_shape(int k, int* cols, int* rows);

void fs_outputs_free(fsOutputs* o);

/// Remove from dir the files a replay writes there (replay.h5 and its repack, the plots of
/// scripts/plot_replay.py, replay.mp4, grid.mp4) that an earlier run left: a link is removed,
/// never written through, and a plot that fails this time leaves no stale one beside the
/// new file. Returns how many were removed, or -1 with err.
int fs_outputs_clear(const char* dir, fsError* err);

#ifdef __cplusplus
}
#endif
#endif
