// Offscreen rendering of a model's camera with MuJoCo's renderer (mjv_/mjr_) in a
// headless EGL context: Mesa's llvmpipe on machines without a GPU, the NVIDIA
// driver's EGL device on GPU machines.
//
// The EGL display is chosen by FLYSIM_EGL_PLATFORM:
//   device       EGL_EXT_platform_device: device FLYSIM_EGL_DEVICE (or
//                MUJOCO_EGL_DEVICE_ID, as MuJoCo's Python package), else the first
//                device that initialises;
//   surfaceless  EGL_MESA_platform_surfaceless (Mesa);
//   default      eglGetDisplay(EGL_DEFAULT_DISPLAY) (Mesa reads EGL_PLATFORM);
//   unset        device, then surfaceless, then default.
// The context is created on the thread that calls fs_renderer_create (MuJoCo's GL
// context, scene and font textures are made there) and released; fs_renderer_draw
// makes it current on the calling thread for the frame and releases it again, so
// any one thread at a time may draw (the CPU stepper's worker that owns world 0).
//
// A frame shows d's positions as MuJoCo's kinematics compute them from d->qpos (and
// mocap poses) in a private mjData, as FlyGym's renderer does: mj_step leaves
// xpos/xmat at the start of the step, qpos at its end.
#ifndef FLYSIM_COMMON_OUTPUTS_RENDER_H
#define FLYSIM_COMMON_OUTPUTS_RENDER_H

#include <mujoco/mujoco.h>

#include "common/base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fsRenderer fsRenderer;

/// 1 if this flysim was built with EGL (else fs_renderer_create always fails).
int fs_render_available(void);

/// Renderer of model m (which must outlive it) at width x height from camera
/// `camera` (a model camera id; -1: a free camera tracking body 1). model_path
/// names the model in errors.
fsRenderer* fs_renderer_create(const mjModel* m, const char* model_path, int width, int height,
                               int camera, fsError* err);

/// Render d's state into rgb (height x width x 3 bytes, top row first), with label
/// (or NULL) written in the top-left corner.
int fs_renderer_draw(fsRenderer* r, const mjData* d, const char* label, unsigned char* rgb,
                     fsError* err);

/// What renders: "EGL 1.5 (device 0), OpenGL 4.5 (Compatibility Profile) Mesa ...: llvmpipe".
const char* fs_renderer_describe(const fsRenderer* r);

void fs_renderer_destroy(fsRenderer* r);

#ifdef __cplusplus
}
#endif
#endif
