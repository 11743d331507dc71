#include "src/cuda/cuda_backend.h"

#include <stdio.h>
#include <string.h>

// Both precisions' names of src/cuda/replay_cuda.h (FS_PREC appends _f32 / _f64).
typedef struct fsCudaReplay fsCudaReplay;
#define FS_DECLARE_PRECISION(p)                                                                    \
  fsCudaReplay* fs_cuda_create_##p(const fsReplay* r, fsError* err);                               \
  void fs_cuda_destroy_##p(fsCudaReplay* c);                                                       \
  extern const fsBackendOps fs_cuda_ops_##p;                                                       \
  int fs_cuda_uses_graph_##p(const fsCudaReplay* c);                                               \
  void fs_cuda_describe_##p(const fsCudaReplay* c, char* out, size_t n);
FS_DECLARE_PRECISION(f32)
FS_DECLARE_PRECISION(f64)

static void destroy_f32(void* self) {
  fs_cuda_destroy_f32(self);
}

static void destroy_f64(void* self) {
  fs_cuda_destroy_f64(self);
}

int fs_cuda_backend_open(const fsReplay* r, int bits, fsCudaBackend* out, fsError* err) {
  memset(out, 0, sizeof *out);
  fsCudaReplay* c = bits == 64 ? fs_cuda_create_f64(r, err) : fs_cuda_create_f32(r, err);
  if (!c) return -1;
  out->self = c;
  if (bits == 64) {
    out->ops = &fs_cuda_ops_f64;
    out->destroy = destroy_f64;
    out->uses_graph = fs_cuda_uses_graph_f64(c);
    fs_cuda_describe_f64(c, out->desc, sizeof out->desc);
  } else {
    out->ops = &fs_cuda_ops_f32;
    out->destroy = destroy_f32;
    out->uses_graph = fs_cuda_uses_graph_f32(c);
    fs_cuda_describe_f32(c, out->desc, sizeof out->desc);
  }
  return 0;
}
