#include "src/host/host_backend.h"

#include <string.h>

// Both precisions' names of src/host/replay_host.h (FS_PREC appends _f32 / _f64).
typedef struct fsHostReplay fsHostReplay;
#define FS_DECLARE_PRECISION(p)                                                                    \
  fsHostReplay* fs_host_create_##p(const fsReplay* r, int nthread, fsError* err);                  \
  void fs_host_destroy_##p(fsHostReplay* h);                                                       \
  extern const fsBackendOps fs_host_ops_##p;                                                       \
  int fs_host_threads_##p(const fsHostReplay* h);                                                  \
  void fs_host_describe_##p(const fsHostReplay* h, char* out, size_t n);                           \
  static void destroy_##p(void* self) {                                                            \
    fs_host_destroy_##p(self);                                                                     \
  }                                                                                                \
  static int open_##p(const fsReplay* r, int nthread, fsHostBackend* out, fsError* err) {          \
    fsHostReplay* h = fs_host_create_##p(r, nthread, err);                                         \
    if (!h) return -1;                                                                             \
    *out = (fsHostBackend){&fs_host_ops_##p, h, destroy_##p, fs_host_threads_##p(h), ""};          \
    fs_host_describe_##p(h, out->desc, sizeof out->desc);                                          \
    return 0;                                                                                      \
  }
FS_DECLARE_PRECISION(f32)
FS_DECLARE_PRECISION(f64)

int fs_host_backend_open(const fsReplay* r, int nthread, int bits, fsHostBackend* out,
                         fsError* err) {
  memset(out, 0, sizeof *out);
  return bits == 64 ? open_f64(r, nthread, out, err) : open_f32(r, nthread, out, err);
}
