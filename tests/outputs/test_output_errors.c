// When an output cannot be made, flysim says why and how to fix it, the run goes
// on, the data (replay.h5, the plots) are saved, and the exit status is 1:
//   - ffmpeg missing (PATH without it): reported before the run starts;
//   - EGL failing (no EGL vendor library; a bad FLYSIM_EGL_PLATFORM; a device that
//     does not exist): reported before the run starts;
//   - ffmpeg dying during the run (FLYSIM_FFMPEG=/bin/false): reported after it;
//   - the plot script's Python missing (FLYSIM_PYTHON): reported after the file is saved.
// --no-video needs neither ffmpeg nor EGL.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/outputs/outputs_util.h"
#include "tests/testutil.h"

enum { NSTEP = 300 };

static char g_targets[700], g_dir[600];

// Run the walker into DIR/name with env and extra options; returns the exit status.
static int run(const char* name, const char* env, const char* extra, char** out) {
  char args[2048];
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --sim-steps %d --save-data '%s/%s' "
           "--quiet %s",
           fs_test_model("walker.xml"), g_targets, NSTEP, g_dir, name, extra);
  return out_flysim(env, args, out);
}

// The data of run `name` are complete: every step recorded, the file closed as
// "completed"; plots there too unless plots == 0.
static void check_saved(const char* name, int plots) {
  char h5[800], png[800];
  snprintf(h5, sizeof h5, "%s/%s/replay.h5", g_dir, name);
  long long steps = -1, complete = -1;
  CHECK_MSG(out_attr_int(h5, "/", "steps_recorded", &steps) == 0 && steps == NSTEP,
            "%s: %lld steps recorded", h5, steps);
  CHECK(out_attr_int(h5, "/", "complete", &complete) == 0 && complete == 1);
  int rank = 0;
  long long dims[3];
  float* q = out_read_floats(h5, "qpos_joint", &rank, dims);
  CHECK(q && rank == 3 && dims[0] == NSTEP);
  free(q);
  snprintf(png, sizeof png, "%s/%s/joint_angle_tracking.png", g_dir, name);
  if (plots) CHECK_MSG(out_file_starts_with(png, "\x89PNG", 4), "%s missing", png);
}

static void check_order(const char* out, const char* error) {
  const char* e = strstr(out, error);
  const char* replayed = strstr(out, "Replayed");
  CHECK_MSG(e && replayed && e < replayed, "'%s' should come before the run", error);
}

static void test_no_ffmpeg(void) {
  // A PATH with h5repack (compression) but no ffmpeg; the plots' Python is absolute.
  char bin[800], h5repack[1024], env[1000], mp4[800], *out = NULL;
  snprintf(bin, sizeof bin, "%s/bin", g_dir);
  mkdir(bin, 0755);
  if (out_find_tool("h5repack", h5repack, sizeof h5repack) == 0) {
    char link[900];
    snprintf(link, sizeof link, "%s/h5repack", bin);
    CHECK(symlink(h5repack, link) == 0);
  }
  snprintf(env, sizeof env, "PATH='%s'", bin);
  CHECK(run("noffmpeg", env, "", &out) == 1);
  CHECK_CONTAINS(out, "error: video: ");
  CHECK_CONTAINS(out, "ffmpeg: not found");
  CHECK_CONTAINS(out, "fix: install it (Debian: apt-get install ffmpeg)");
  CHECK_CONTAINS(out, "--no-video");
  CHECK_CONTAINS(out, "the run goes on and saves its data");
  CHECK_CONTAINS(out, "the data are saved");
  check_order(out, "error: video: ");
  free(out);
  check_saved("noffmpeg", 1);
  snprintf(mp4, sizeof mp4, "%s/noffmpeg/replay.mp4", g_dir);
  CHECK(access(mp4, F_OK) != 0);
  // --no-video: no ffmpeg needed, exit 0.
  CHECK(run("noffmpeg_novideo", env, "--no-video --no-plots", &out) == 0);
  free(out);
}

static void test_egl(void) {
  char* out = NULL;
  // No EGL vendor at all (glvnd finds no driver): what a machine without EGL sees.
  CHECK(run("noegl", "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl_vendor.json", "--no-plots",
            &out) == 1);
  CHECK_CONTAINS(out, "error: video: no EGL display for offscreen rendering");
  CHECK_CONTAINS(out, "fix: install an EGL driver");
  check_order(out, "error: video: ");
  free(out);
  check_saved("noegl", 0);
  CHECK(run("badplatform", "FLYSIM_EGL_PLATFORM=bogus", "--no-plots", &out) == 1);
  CHECK_CONTAINS(out, "FLYSIM_EGL_PLATFORM=bogus: not a platform; fix: device, surfaceless");
  free(out);
  check_saved("badplatform", 0);
  CHECK(run("baddevice", "FLYSIM_EGL_PLATFORM=device FLYSIM_EGL_DEVICE=99", "--no-plots", &out) ==
        1);
  CHECK_CONTAINS(out, "device 99 asked for");
  free(out);
  check_saved("baddevice", 0);
  CHECK(run("noegl_novideo", "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl_vendor.json",
            "--no-video --no-plots", &out) == 0);
  free(out);
}

static void test_ffmpeg_dies(void) {
  char* out = NULL;
  CHECK(run("ffmpegdies", "FLYSIM_FFMPEG=/bin/false", "--no-plots", &out) == 1);
  CHECK_CONTAINS(out, "error: video: ");
  CHECK_CONTAINS(out, "ffmpeg");
  CHECK_CONTAINS(out, "--no-video");
  const char* e = strstr(out, "error: video: ");
  const char* replayed = strstr(out, "Replayed");
  CHECK_MSG(e && replayed && e > replayed, "a dying ffmpeg shows after the run");
  free(out);
  check_saved("ffmpegdies", 0);
}

static void test_no_python(void) {
  char* out = NULL;
  CHECK(run("nopython", "FLYSIM_PYTHON=/nonexistent/python", "--no-video", &out) == 1);
  CHECK_CONTAINS(out, "error: plots: /nonexistent/python: no such Python");
  CHECK_CONTAINS(out, "the data are saved in");
  CHECK_CONTAINS(out, "FLYSIM_PYTHON");
  free(out);
  check_saved("nopython", 0);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "%s", fs_test_tmpdir("outerr"));
  snprintf(g_targets, sizeof g_targets, "%s/walker_targets.h5", g_dir);
  if (out_write_walker_targets(g_targets, 2000)) return 1;
  test_no_ffmpeg();
  test_egl();
  test_no_python();
  const char* why = out_egl_unavailable();
  if (why[0])
    printf("ffmpeg-dies part skipped: EGL cannot render here: %s\n", why);
  else
    test_ffmpeg_dies();
  return fs_test_finish("test_output_errors");
}
