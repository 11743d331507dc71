// Headless EGL + MuJoCo renderer (see common/outputs/render.h).
#include "common/outputs/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/mujoco_hooks.h"

#if FLYSIM_HAVE_EGL
#include <dlfcn.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>

#define FS_RENDER_MAXGEOM 10000 // as mujoco.Renderer

// libEGL is opened at run time (RTLD_GLOBAL, so that MuJoCo's GL loader finds
// eglGetProcAddress), not linked: flysim starts on machines without EGL, where only
// the video reports that it cannot be made.
#define FS_EGL_FUNCTIONS(X)                                                                        \
  X(GETPROCADDRESS, eglGetProcAddress)                                                             \
  X(GETERROR, eglGetError)                                                                         \
  X(GETDISPLAY, eglGetDisplay)                                                                     \
  X(INITIALIZE, eglInitialize)                                                                     \
  X(RELEASETHREAD, eglReleaseThread)                                                               \
  X(CHOOSECONFIG, eglChooseConfig)                                                                 \
  X(BINDAPI, eglBindAPI)                                                                           \
  X(CREATECONTEXT, eglCreateContext)                                                               \
  X(DESTROYCONTEXT, eglDestroyContext)                                                             \
  X(MAKECURRENT, eglMakeCurrent)                                                                   \
  X(QUERYSTRING, eglQueryString)

static struct {
#define FS_EGL_FIELD(NAME, fn) PFNEGL##NAME##PROC fn;
  FS_EGL_FUNCTIONS(FS_EGL_FIELD)
#undef FS_EGL_FIELD
} egl;

// Load the functions (POSIX: dlsym's object pointer holds a function's address; memcpy
// moves it into the function pointer, as ISO C allows).
static int load_egl(fsError* err) {
  static int loaded = 0;
  if (loaded) return 0;
  void *lib = dlopen("libEGL.so.1", RTLD_NOW | RTLD_GLOBAL), *sym = NULL;
  if (!lib)
    return fs_fail(err,
                   "libEGL.so.1: cannot load it (%s), so no offscreen rendering; fix: "
                   "install EGL (Debian: apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri; "
                   "NVIDIA: the driver's EGL), or pass --no-video",
                   dlerror());
#define FS_EGL_LOAD(NAME, fn)                                                                      \
  sym = dlsym(lib, #fn);                                                                           \
  if (!sym)                                                                                        \
    return fs_fail(err,                                                                            \
                   "libEGL.so.1: no %s in it; fix: a complete EGL 1.4+ library, or pass "          \
                   "--no-video",                                                                   \
                   #fn);                                                                           \
  memcpy(&egl.fn, &sym, sizeof sym);
  FS_EGL_FUNCTIONS(FS_EGL_LOAD)
#undef FS_EGL_LOAD
  loaded = 1;
  return 0;
}

struct fsRenderer {
  const mjModel* m;
  mjData* d; // private: geometry recomputed from the frame's qpos
  int width, height;
  EGLDisplay dpy;
  EGLContext ctx;
  mjvScene scn;
  mjvCamera cam;
  mjvOption opt;
  mjrContext con;
  int con_made, scn_made;
  unsigned char* flip; // (height x width x 3) as read back (bottom row first)
  char desc[512];
};

int fs_render_available(void) {
  return 1;
}

static const char* egl_error_name(EGLint e) {
  switch (e) {
  case EGL_SUCCESS:
    return "EGL_SUCCESS";
  case EGL_NOT_INITIALIZED:
    return "EGL_NOT_INITIALIZED";
  case EGL_BAD_ACCESS:
    return "EGL_BAD_ACCESS";
  case EGL_BAD_ALLOC:
    return "EGL_BAD_ALLOC";
  case EGL_BAD_ATTRIBUTE:
    return "EGL_BAD_ATTRIBUTE";
  case EGL_BAD_CONFIG:
    return "EGL_BAD_CONFIG";
  case EGL_BAD_CONTEXT:
    return "EGL_BAD_CONTEXT";
  case EGL_BAD_DISPLAY:
    return "EGL_BAD_DISPLAY";
  case EGL_BAD_MATCH:
    return "EGL_BAD_MATCH";
  case EGL_BAD_PARAMETER:
    return "EGL_BAD_PARAMETER";
  default:
    return "EGL error";
  }
}

// Initialise display dpy; on failure append why to notes and return EGL_NO_DISPLAY.
static EGLDisplay init_display(EGLDisplay dpy, const char* what, char* notes, size_t n) {
  size_t used = strlen(notes);
  if (dpy == EGL_NO_DISPLAY) {
    snprintf(notes + used, n - used, "%s%s: no display (%s)", used ? "; " : "", what,
             egl_error_name(egl.eglGetError()));
    return EGL_NO_DISPLAY;
  }
  EGLint major = 0, minor = 0;
  if (egl.eglInitialize(dpy, &major, &minor) != EGL_TRUE) {
    snprintf(notes + used, n - used, "%s%s: eglInitialize failed (%s)", used ? "; " : "", what,
             egl_error_name(egl.eglGetError()));
    return EGL_NO_DISPLAY;
  }
  return dpy;
}

static EGLDisplay open_device(int wanted, char* what, size_t nwhat, char* notes, size_t n) {
  PFNEGLQUERYDEVICESEXTPROC query =
      (PFNEGLQUERYDEVICESEXTPROC)egl.eglGetProcAddress("eglQueryDevicesEXT");
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)egl.eglGetProcAddress("eglGetPlatformDisplayEXT");
  size_t used = strlen(notes);
  EGLDeviceEXT devices[16];
  EGLint ndevice = 0;
  if (!query || !get_display || query(16, devices, &ndevice) != EGL_TRUE || ndevice < 1) {
    snprintf(notes + used, n - used,
             "%sdevice platform: no EGL devices (EGL_EXT_device_"
             "enumeration missing or no driver)",
             used ? "; " : "");
    return EGL_NO_DISPLAY;
  }
  if (wanted >= ndevice) {
    snprintf(notes + used, n - used, "%sdevice platform: device %d asked for, %d found",
             used ? "; " : "", wanted, (int)ndevice);
    return EGL_NO_DISPLAY;
  }
  for (int i = wanted >= 0 ? wanted : 0; i < (wanted >= 0 ? wanted + 1 : ndevice); i++) {
    snprintf(what, nwhat, "device %d of %d", i, (int)ndevice);
    EGLDisplay dpy =
        init_display(get_display(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL), what, notes, n);
    if (dpy != EGL_NO_DISPLAY) return dpy;
  }
  return EGL_NO_DISPLAY;
}

static EGLDisplay open_surfaceless(char* what, size_t nwhat, char* notes, size_t n) {
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)egl.eglGetProcAddress("eglGetPlatformDisplayEXT");
  snprintf(what, nwhat, "surfaceless platform");
  if (!get_display) {
    size_t used = strlen(notes);
    snprintf(notes + used, n - used, "%ssurfaceless platform: eglGetPlatformDisplayEXT missing",
             used ? "; " : "");
    return EGL_NO_DISPLAY;
  }
  return init_display(get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL), what,
                      notes, n);
}

// The display named by FLYSIM_EGL_PLATFORM (see render.h); what says which one.
static EGLDisplay open_display(char* what, size_t nwhat, fsError* err) {
  const char* platform = getenv("FLYSIM_EGL_PLATFORM");
  const char* dev = getenv("FLYSIM_EGL_DEVICE");
  if (!dev || !dev[0]) dev = getenv("MUJOCO_EGL_DEVICE_ID");
  int wanted = dev && dev[0] ? atoi(dev) : -1;
  if (platform && platform[0] && strcmp(platform, "device") && strcmp(platform, "surfaceless") &&
      strcmp(platform, "default")) {
    fs_fail(err,
            "FLYSIM_EGL_PLATFORM=%s: not a platform; fix: device, surfaceless or default "
            "(or unset it to try them in turn)",
            platform);
    return EGL_NO_DISPLAY;
  }
  int any = !platform || !platform[0];
  char notes[1024] = "";
  EGLDisplay dpy = EGL_NO_DISPLAY;
  if (any || !strcmp(platform, "device"))
    dpy = open_device(wanted, what, nwhat, notes, sizeof notes);
  if (dpy == EGL_NO_DISPLAY && (any || !strcmp(platform, "surfaceless")))
    dpy = open_surfaceless(what, nwhat, notes, sizeof notes);
  if (dpy == EGL_NO_DISPLAY && (any || !strcmp(platform, "default"))) {
    snprintf(what, nwhat, "default display");
    dpy = init_display(egl.eglGetDisplay(EGL_DEFAULT_DISPLAY), what, notes, sizeof notes);
  }
  if (dpy == EGL_NO_DISPLAY)
    fs_fail(err,
            "no EGL display for offscreen rendering (FLYSIM_EGL_PLATFORM=%s): %s; fix: "
            "install an EGL driver (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri; NVIDIA: the "
            "driver's libEGL_nvidia), check FLYSIM_EGL_PLATFORM/FLYSIM_EGL_DEVICE, or pass "
            "--no-video",
            any ? "unset" : platform, notes);
  return dpy;
}

static int make_context(fsRenderer* r, fsError* err) {
  static const EGLint with_pbuffer[] = {EGL_RED_SIZE,
                                        8,
                                        EGL_GREEN_SIZE,
                                        8,
                                        EGL_BLUE_SIZE,
                                        8,
                                        EGL_ALPHA_SIZE,
                                        8,
                                        EGL_DEPTH_SIZE,
                                        24,
                                        EGL_STENCIL_SIZE,
                                        8,
                                        EGL_COLOR_BUFFER_TYPE,
                                        EGL_RGB_BUFFER,
                                        EGL_SURFACE_TYPE,
                                        EGL_PBUFFER_BIT,
                                        EGL_RENDERABLE_TYPE,
                                        EGL_OPENGL_BIT,
                                        EGL_NONE};
  static const EGLint any_surface[] = {EGL_RED_SIZE,
                                       8,
                                       EGL_GREEN_SIZE,
                                       8,
                                       EGL_BLUE_SIZE,
                                       8,
                                       EGL_DEPTH_SIZE,
                                       24,
                                       EGL_RENDERABLE_TYPE,
                                       EGL_OPENGL_BIT,
                                       EGL_NONE};
  EGLConfig cfg;
  EGLint ncfg = 0;
  if ((egl.eglChooseConfig(r->dpy, with_pbuffer, &cfg, 1, &ncfg) != EGL_TRUE || ncfg < 1) &&
      (egl.eglChooseConfig(r->dpy, any_surface, &cfg, 1, &ncfg) != EGL_TRUE || ncfg < 1))
    return fs_fail(err,
                   "EGL (%s): no framebuffer configuration with 8-bit RGB, 24-bit depth and "
                   "desktop OpenGL (%s); fix: another FLYSIM_EGL_PLATFORM or driver, or "
                   "--no-video",
                   r->desc, egl_error_name(egl.eglGetError()));
  if (egl.eglBindAPI(EGL_OPENGL_API) != EGL_TRUE)
    return fs_fail(err,
                   "EGL (%s): desktop OpenGL is not available (%s); fix: an EGL driver with "
                   "OpenGL (Mesa, NVIDIA), or --no-video",
                   r->desc, egl_error_name(egl.eglGetError()));
  r->ctx = egl.eglCreateContext(r->dpy, cfg, EGL_NO_CONTEXT, NULL);
  if (r->ctx == EGL_NO_CONTEXT)
    return fs_fail(err,
                   "EGL (%s): cannot create an OpenGL context (%s); fix: another "
                   "FLYSIM_EGL_PLATFORM or driver, or --no-video",
                   r->desc, egl_error_name(egl.eglGetError()));
  if (egl.eglMakeCurrent(r->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, r->ctx) != EGL_TRUE)
    return fs_fail(err,
                   "EGL (%s): cannot make the context current without a surface (%s; "
                   "needs EGL_KHR_surfaceless_context); fix: another FLYSIM_EGL_PLATFORM or "
                   "driver, or --no-video",
                   r->desc, egl_error_name(egl.eglGetError()));
  return 0;
}

// MuJoCo's scene and GL context; the EGL context is current. MuJoCo errors are trapped.
static int make_mujoco_context(fsRenderer* r, const char* model_path, fsError* err) {
  fsMjTrap trap;
  fs_mj_trap_set(&trap);
  if (setjmp(trap.env)) {
    fs_mj_trap_set(NULL);
    return fs_fail(err,
                   "%s: MuJoCo's renderer failed to start (%s): %s; fix: another "
                   "FLYSIM_EGL_PLATFORM or driver, or --no-video",
                   model_path, r->desc, trap.msg);
  }
  mjv_defaultScene(&r->scn);
  mjv_defaultOption(&r->opt);
  mjr_defaultContext(&r->con);
  mjv_makeScene(r->m, &r->scn, FS_RENDER_MAXGEOM);
  r->scn_made = 1;
  mjr_makeContext(r->m, &r->con, mjFONTSCALE_100);
  r->con_made = 1;
  mjr_setBuffer(mjFB_OFFSCREEN, &r->con);
  if (r->con.currentBuffer != mjFB_OFFSCREEN) {
    fs_mj_trap_set(NULL);
    return fs_fail(err,
                   "%s: MuJoCo's renderer has no offscreen framebuffer (%s); fix: another "
                   "FLYSIM_EGL_PLATFORM or driver, or --no-video",
                   model_path, r->desc);
  }
  if (r->con.offWidth != r->width || r->con.offHeight != r->height)
    mjr_resizeOffscreen(r->width, r->height, &r->con);
  fs_mj_trap_set(NULL);
  return 0;
}

static void describe(fsRenderer* r, const char* what) {
  typedef const unsigned char* (*GetString)(unsigned int);
  GetString get = (GetString)egl.eglGetProcAddress("glGetString");
  const char* version = get ? (const char*)get(0x1F02 /* GL_VERSION */) : NULL;
  const char* renderer = get ? (const char*)get(0x1F01 /* GL_RENDERER */) : NULL;
  const char* egl_version = egl.eglQueryString(r->dpy, EGL_VERSION);
  snprintf(r->desc, sizeof r->desc, "EGL %s (%s), OpenGL %s: %s", egl_version ? egl_version : "?",
           what, version ? version : "?", renderer ? renderer : "?");
}

fsRenderer* fs_renderer_create(const mjModel* m, const char* model_path, int width, int height,
                               int camera, fsError* err) {
  fsRenderer* r = fs_calloc(err, "the renderer", 1, sizeof *r);
  if (!r) return NULL;
  r->m = m;
  r->width = width;
  r->height = height;
  r->ctx = EGL_NO_CONTEXT;
  char what[64] = "";
  if (load_egl(err)) goto fail;
  r->dpy = open_display(what, sizeof what, err);
  snprintf(r->desc, sizeof r->desc, "EGL, %s", what);
  if (r->dpy == EGL_NO_DISPLAY || make_context(r, err)) goto fail;
  describe(r, what);
  if (make_mujoco_context(r, model_path, err)) goto fail;
  r->d = mj_makeData(m);
  r->flip = fs_calloc(err, "a video frame", (unsigned)(width * height), 3);
  if (!r->d || !r->flip) {
    if (!r->d) fs_fail_oom(err, "the renderer's MuJoCo data", (double)m->narena);
    goto fail;
  }
  mjv_defaultFreeCamera(m, &r->cam);
  if (camera >= 0) {
    r->cam.type = mjCAMERA_FIXED;
    r->cam.fixedcamid = camera;
  } else {
    r->cam.type = mjCAMERA_TRACKING;
    r->cam.trackbodyid = m->nbody > 1 ? 1 : 0;
  }
  egl.eglMakeCurrent(r->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  return r;
fail:
  fs_renderer_destroy(r);
  return NULL;
}

int fs_renderer_draw(fsRenderer* r, const mjData* d, const char* label, unsigned char* rgb,
                     fsError* err) {
  if (egl.eglMakeCurrent(r->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, r->ctx) != EGL_TRUE)
    return fs_fail(err, "EGL (%s): cannot make the context current on the rendering thread (%s)",
                   r->desc, egl_error_name(egl.eglGetError()));
  const mjModel* m = r->m;
  mju_copy(r->d->qpos, d->qpos, m->nq);
  mju_copy(r->d->mocap_pos, d->mocap_pos, 3 * m->nmocap);
  mju_copy(r->d->mocap_quat, d->mocap_quat, 4 * m->nmocap);
  r->d->time = d->time;
  mj_kinematics(m, r->d);
  mj_comPos(m, r->d);
  mj_camlight(m, r->d);
  mj_tendon(m, r->d);
  mjv_updateScene(m, r->d, &r->opt, NULL, &r->cam, mjCAT_ALL, &r->scn);
  mjrRect viewport = {0, 0, r->width, r->height};
  mjr_render(viewport, &r->scn, &r->con);
  if (label) mjr_overlay(mjFONT_NORMAL, mjGRID_TOPLEFT, viewport, label, NULL, &r->con);
  mjr_readPixels(r->flip, NULL, viewport, &r->con);
  egl.eglMakeCurrent(r->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  size_t row = (size_t)r->width * 3;
  for (int y = 0; y < r->height; y++)
    memcpy(rgb + (size_t)y * row, r->flip + (size_t)(r->height - 1 - y) * row, row);
  return 0;
}

const char* fs_renderer_describe(const fsRenderer* r) {
  return r->desc;
}

void fs_renderer_destroy(fsRenderer* r) {
  if (!r) return;
  if (r->ctx != EGL_NO_CONTEXT) {
    egl.eglMakeCurrent(r->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, r->ctx);
    if (r->con_made) mjr_freeContext(&r->con);
    egl.eglMakeCurrent(r->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    egl.eglDestroyContext(r->dpy, r->ctx);
  }
  if (r->scn_made) mjv_freeScene(&r->scn);
  // The display stays initialised: eglTerminate makes Mesa unload its driver, which
  // leaks a few allocations that leak checkers then report against an unknown module.
  // The process (or a later renderer, which gets the same display) keeps it.
  if (r->dpy != EGL_NO_DISPLAY) egl.eglReleaseThread();
  if (r->d) mj_deleteData(r->d);
  free(r->flip);
  free(r);
}

#else // built without EGL

int fs_render_available(void) {
  return 0;
}

fsRenderer* fs_renderer_create(const mjModel* m, const char* model_path, int width, int height,
                               int camera, fsError* err) {
  (void)m, (void)width, (void)height, (void)camera;
  fs_fail(err,
          "%s: this flysim was built without EGL, so it cannot render the video; fix: "
          "install libegl-dev and rebuild, or pass --no-video",
          model_path);
  return NULL;
}

int fs_renderer_draw(fsRenderer* r, const mjData* d, const char* label, unsigned char* rgb,
                     fsError* err) {
  (void)r, (void)d, (void)label, (void)rgb;
  return fs_fail(err, "built without EGL");
}

const char* fs_renderer_describe(const fsRenderer* r) {
  (void)r;
  return "no EGL";
}

void fs_renderer_destroy(fsRenderer* r) {
  (void)r;
}

#endif
