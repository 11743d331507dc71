// What `--save-data DIR` adds to the HDF5 file during the run, for world 0:
// its pose at every step (for the pose-over-time plot) and, at FlyGym's frame
// times, a frame of the tracking camera piped to ffmpeg (DIR/replay.mp4).
//
// The CPU stepper calls fs_outputs_world0_step on the thread that steps world 0,
// after each of its replay steps, inside the timed loop (as FlyGym renders inside
// its loop, so the profile includes rendering). A video that cannot be made (no
// ffmpeg, no EGL) does not stop the run: the error is kept, the data are saved,
// and the caller reports it and exits non-zero.
#ifndef FLYSIM_COMMON_REPLAY_OUTPUTS_H
#define FLYSIM_COMMON_REPLAY_OUTPUTS_H

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
  int pose;        // record world 0's pose at every step
  int video;       // render world 0's tracking camera into dir/replay.mp4
  const char* leg; // leg of /plots/joint_tracking ("" = none)
} fsOutputsSpec;

typedef struct fsOutputs fsOutputs;

/// Allocate the pose record and start the renderer and ffmpeg. Fails only if
/// memory runs out; a video that cannot start is kept as fs_outputs_video_error.
fsOutputs* fs_outputs_create(const fsOutputsSpec* s, fsError* err);

/// The first video error (at start or during the run), or NULL.
const char* fs_outputs_video_error(const fsOutputs* o);

/// One line describing the video ("DIR/replay.mp4: camera ..., 320x240, ..."), or "".
const char* fs_outputs_describe(const fsOutputs* o);

/// The world-0 hook (an fsCpuWorldHook): record the pose; render a frame if due.
void fs_outputs_world0_step(void* o, const mjData* d, int step);

/// Write /pose and /plots into the open replay file (nstep recorded steps).
int fs_outputs_write_h5(const fsOutputs* o, hid_t file, const char* path, long long nstep,
                        fsError* err);

/// Finish the video (ffmpeg writes the MP4); prints "Saved ... (N frames)" to out.
/// Returns 0, or -1 with err for an error during the run or the encoding, or 1 if
/// the video could not start (fs_outputs_video_error, reported before the run).
/// nstep: steps run (0: stopped before the first step; no video then, no error).
int fs_outputs_close_video(fsOutputs* o, long long nstep, FILE* out, fsError* err);

void fs_outputs_free(fsOutputs* o);

#ifdef __cplusplus
}
#endif
#endif
