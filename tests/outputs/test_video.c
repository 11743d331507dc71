// --save-data's video: world 0 rendered by MuJoCo's renderer in a headless EGL
// context at FlyGym's frame times (0.2x, 25 fps: a frame every 80 steps of 1e-4 s,
// the first after step 1), piped to ffmpeg as H.264 MP4 (yuv420p) 320x240.
// ffprobe counts the frames; a decoded frame must show something (not one colour).
// The walker has no camera (a free camera tracks its thorax); NeuroMechFly's
// tracking camera is checked when the exported assets are there. Rendering happens
// inside the timed loop, so a profile of the run holds MuJoCo's renderer (mjr_render).
//
// 77 where EGL cannot render or ffmpeg/ffprobe are missing.
#include <stdlib.h>

#include "common/outputs/video.h"
#include "tests/outputs/outputs_util.h"
#include "tests/testutil.h"

static char g_ffprobe[1024], g_ffmpeg[1024];

static void check_mp4(const char* mp4, long frames) {
  char cmd[2400], out[4096], v[64];
  snprintf(cmd, sizeof cmd,
           "'%s' -v error -count_frames -select_streams v:0 -show_entries "
           "stream=codec_name,width,height,pix_fmt,r_frame_rate,nb_read_frames -of "
           "default=nw=1 '%s' 2>&1",
           g_ffprobe, mp4);
  CHECK(fs_test_run(cmd, out, sizeof out) == 0);
  printf("%s", out);
  out_kv(out, "codec_name", v, sizeof v);
  CHECK(!strcmp(v, "h264"));
  out_kv(out, "pix_fmt", v, sizeof v);
  CHECK(!strcmp(v, "yuv420p"));
  out_kv(out, "width", v, sizeof v);
  CHECK(atoi(v) == FS_VIDEO_WIDTH);
  out_kv(out, "height", v, sizeof v);
  CHECK(atoi(v) == FS_VIDEO_HEIGHT);
  out_kv(out, "r_frame_rate", v, sizeof v);
  CHECK(!strcmp(v, "25/1"));
  out_kv(out, "nb_read_frames", v, sizeof v);
  CHECK_MSG(atol(v) == frames, "%s: %s frames, expected %ld", mp4, v, frames);
}

// Standard deviation of the grey levels of frame k (0: a blank frame).
static double frame_contrast(const char* mp4, int k) {
  char cmd[2400];
  snprintf(cmd, sizeof cmd,
           "'%s' -v error -i '%s' -vf 'select=eq(n\\,%d)' -vframes 1 -f rawvideo -pix_fmt gray -",
           g_ffmpeg, mp4, k);
  FILE* p = popen(cmd, "r");
  if (!p) return 0;
  static unsigned char px[FS_VIDEO_WIDTH * FS_VIDEO_HEIGHT];
  size_t n = fread(px, 1, sizeof px, p);
  pclose(p);
  if (n != sizeof px) return 0;
  double s = 0, s2 = 0;
  for (size_t i = 0; i < n; i++) s += px[i], s2 += (double)px[i] * px[i];
  double mean = s / n;
  return sqrt(s2 / n - mean * mean);
}

static void test_walker(const char* dir) {
  char targets[700], args[2048], mp4[700], *out = NULL;
  snprintf(targets, sizeof targets, "%s/walker_targets.h5", dir);
  CHECK(out_write_walker_targets(targets, 2000) == 0);
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --worlds 2 --threads 2 --sim-steps 400 --save-data "
           "'%s/walker' --no-plots --quiet",
           fs_test_model("walker.xml"), targets, dir);
  CHECK(out_flysim("", args, &out) == 0);
  long frames = fs_frame_clock_count(0.2, 25, 1e-4, 400);
  CHECK(frames == 5); // steps 1, 81, 161, 241, 321
  CHECK_CONTAINS(out, "a free camera tracking body 1");
  CHECK_CONTAINS(out, "replay.mp4 (5 frames, 320x240, 25 fps)");
  free(out);
  snprintf(mp4, sizeof mp4, "%s/walker/replay.mp4", dir);
  check_mp4(mp4, frames);
  // The walker is dark grey on a plain floor (no materials): a little contrast only.
  double c = frame_contrast(mp4, 2);
  CHECK_MSG(c > 0.5, "frame 2 of %s is uniform (grey-level std %.2f)", mp4, c);
}

// NeuroMechFly's own tracking camera; with perf, the profile holds the renderer.
static void test_nmf(const char* dir) {
  const char* model = fs_test_asset("mesh.mjb");
  const char* clip = fs_test_asset("walking_clip.h5");
  if (!out_file_nonempty(model) || !out_file_nonempty(clip)) {
    printf("NeuroMechFly part skipped: no exported assets (%s)\n", model);
    return;
  }
  int perf = !out_perf_unavailable()[0];
  char args[2048], mp4[700], prof[700], *out = NULL;
  snprintf(prof, sizeof prof, "--profile '%s/nmf.linux-perf.txt'", dir);
  snprintf(args, sizeof args,
           "--model '%s' --targets '%s' --sim-steps 100 --save-data '%s/nmf' --no-plots --quiet %s",
           model, clip, dir, perf ? prof : "");
  CHECK(out_flysim("", args, &out) == 0);
  CHECK_CONTAINS(out, "camera 'nmf/trackcam'");
  CHECK_CONTAINS(out, "replay.mp4 (2 frames");
  free(out);
  snprintf(mp4, sizeof mp4, "%s/nmf/replay.mp4", dir);
  check_mp4(mp4, 2);
  double c = frame_contrast(mp4, 1);
  CHECK_MSG(c > 5, "frame 1 of %s is nearly uniform (grey-level std %.2f)", mp4, c);
  if (!perf) return;
  char cmd[1000], n[64];
  snprintf(cmd, sizeof cmd, "grep -c ' mjr_render (' '%s/nmf.linux-perf.txt'", dir);
  fs_test_run(cmd, n, sizeof n);
  CHECK_MSG(atoi(n) > 0, "no mjr_render frames in the profile: rendering is not in the loop");
}

int main(void) {
  if (out_find_tool("ffprobe", g_ffprobe, sizeof g_ffprobe) ||
      out_find_tool("ffmpeg", g_ffmpeg, sizeof g_ffmpeg)) {
    printf("skipped: ffmpeg and ffprobe are needed on PATH (Debian: apt-get install ffmpeg)\n");
    return FS_TEST_SKIP;
  }
  const char* why = out_egl_unavailable();
  if (why[0]) {
    printf("skipped: EGL cannot render here: %s\n", why);
    return FS_TEST_SKIP;
  }
  const char* dir = fs_test_tmpdir("video");
  test_walker(dir);
  test_nmf(dir);
  return fs_test_finish("test_video");
}
