// Model paths and files (common/inputs/model.c, fs_world_model_path) under mutated
// inputs. An input's first line is the path given to --model, "$D" standing for a folder
// that holds the input's other lines as m.xml, m.mjb and m, beside what a path must not
// hang or crash on: a folder, a FIFO, a symbolic link to itself, one to nowhere, one to
// /dev/null, an empty file. A first line "world:NAME" is --world NAME, the input's other
// lines then the flat world's mesh.mjb in an assets folder of its own (FLYSIM_ASSETS).
// The corpus holds small MJCF files, the path kinds and a file that is not an MJB; a
// pendulum's MJB (made at set-up, MJB being tied to MuJoCo's version) only with
// FLYSIM_FUZZ_MJB=1 (see setup). A model loaded is freed; a refusal must start with the
// path (or --world) and say a fix.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/mujoco_hooks.h"
#include "common/inputs/inputs.h"
#include "common/inputs/model.h"
#include "tests/fuzz/fuzz.h"

static char g_dir[600];

static int make_entry(const char* name, int ok) {
  if (!ok) fprintf(stderr, "fuzz_model: cannot make %s/%s\n", g_dir, name);
  return ok ? 0 : -1;
}

// The pendulum (tests/models) as MJB bytes of this MuJoCo, saved under path too.
static unsigned char* pendulum_mjb(const char* path, int* size) {
  char msg[512] = "";
  mjModel* m = mj_loadXML(FLYSIM_SOURCE_DIR "/tests/models/pendulum.xml", NULL, msg, sizeof msg);
  if (!m) {
    fprintf(stderr, "fuzz_model: pendulum.xml: %s\n", msg);
    return NULL;
  }
  *size = mj_sizeModel(m);
  unsigned char* buf = malloc((size_t)*size);
  if (buf) mj_saveModel(m, NULL, buf, *size);
  mj_saveModel(m, path, NULL, 0);
  mj_deleteModel(m);
  return buf;
}

static void add_with_header(void (*add)(const unsigned char*, size_t), const char* header,
                            const unsigned char* body, size_t n) {
  size_t h = strlen(header);
  unsigned char* buf = malloc(h + n);
  if (!buf) return;
  memcpy(buf, header, h);
  memcpy(buf + h, body, n);
  add(buf, h + n);
  free(buf);
}

static int setup(void (*add)(const unsigned char*, size_t)) {
  snprintf(g_dir, sizeof g_dir, "%s", fs_fuzz_tmpdir());
  char p[800], q[800];
#define AT(name) (snprintf(p, sizeof p, "%s/%s", g_dir, name), p)
  if (make_entry("dir", mkdir(AT("dir"), 0755) == 0) ||
      make_entry("worlds", mkdir(AT("worlds"), 0755) == 0) ||
      make_entry("fifo", mkfifo(AT("fifo"), 0644) == 0) ||
      make_entry("loop", symlink(AT("loop"), AT("loop")) == 0) ||
      make_entry("dangling", symlink(AT("nowhere"), AT("dangling")) == 0) ||
      make_entry("null", symlink("/dev/null", AT("null")) == 0) ||
      make_entry("empty.xml", fs_fuzz_write_file(AT("empty.xml"), NULL, 0) == 0) ||
      make_entry("fifo.xml",
                 (snprintf(q, sizeof q, "%s/fifo", g_dir), symlink(q, AT("fifo.xml")) == 0)))
    return -1;
  int size = 0;
  unsigned char* mjb = pendulum_mjb(AT("worlds/tethered.mjb"), &size);
#undef AT
  if (!mjb) return -1;
  // Not a seed: an MJB whose header is mutated to claim huge sizes makes mj_loadModel
  // allocate gigabytes before it finds the file too short (18 s; an OOM kill under ASan).
  // FLYSIM_FUZZ_MJB=1 adds it (a developer's run) until fs_model_load bounds those sizes.
  const char* with_mjb = getenv("FLYSIM_FUZZ_MJB");
  if (with_mjb && !strcmp(with_mjb, "1")) {
    add_with_header(add, "$D/m.mjb\n", mjb, (size_t)size);
    add_with_header(add, "world:flat\n", mjb, (size_t)size);
  }
  free(mjb);
  if (setenv("FLYSIM_ASSETS", g_dir, 1)) return -1;
  fs_mujoco_install_hooks();   // a MuJoCo error outside a guarded region: exit 1, a failure
  fs_mujoco_quiet_warnings(1); // mutated models warn at will
  return 0;
}

static int one(const unsigned char* data, size_t n) {
  static char text[1 << 20];
  if (n >= sizeof text) n = sizeof text - 1;
  memcpy(text, data, n);
  text[n] = 0;
  size_t first = strcspn(text, "\n");
  const char* body = first < n ? text + first + 1 : text + n;
  size_t nbody = n - (size_t)(body - text);
  text[first] = 0;

  char path[4200], file[800];
  fsError err = {{0}, FS_OK};
  const char* subject = path;
  if (!strncmp(text, "world:", 6)) {
    snprintf(file, sizeof file, "%s/mesh.mjb", g_dir);
    if (fs_fuzz_write_file(file, (const unsigned char*)body, nbody)) return FS_FUZZ_BAD;
    if (fs_world_model_path(text + 6, path, sizeof path, &err))
      return fs_fuzz_clear_message(err.msg, "--world") ? FS_FUZZ_REFUSED : FS_FUZZ_BAD;
  } else {
    static const char* const kNames[] = {"m.xml", "m.mjb", "m"};
    for (int k = 0; k < 3; k++) {
      snprintf(file, sizeof file, "%s/%s", g_dir, kNames[k]);
      if (fs_fuzz_write_file(file, (const unsigned char*)body, nbody)) return FS_FUZZ_BAD;
    }
    // the path: "$D" is the folder
    size_t k = 0;
    for (const char* s = text; *s && k + 1 < sizeof path; s++) {
      if (s[0] == '$' && s[1] == 'D' && k + strlen(g_dir) + 1 < sizeof path) {
        memcpy(path + k, g_dir, strlen(g_dir));
        k += strlen(g_dir);
        s++;
      } else {
        path[k++] = *s;
      }
    }
    path[k] = 0;
  }
  mjModel* m = fs_model_load(path, &err);
  if (m) {
    int ok = m->nq >= 0 && m->nbody >= 1;
    mj_deleteModel(m);
    return ok ? FS_FUZZ_ACCEPTED : FS_FUZZ_BAD;
  }
  return fs_fuzz_clear_message(err.msg, subject) ? FS_FUZZ_REFUSED : FS_FUZZ_BAD;
}

const fsFuzzTarget fs_fuzz_target = {
    "fuzz_model", 20261204u, 3000, "<>/=\"' .-_0123456789$Dmxjbl\nabcdefghiknoprstuvwyz",
    setup,        one};
