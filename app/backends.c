#include "app/backends.h"

#include <stdio.h>
#include <string.h>

#include "src/cpu/replay_cpu.h"
#include "src/host/host_backend.h"
#ifdef FLYSIM_WITH_CUDA
#include "src/cuda/cuda_backend.h"
#endif

const char* fs_backend_kind_name(fsBackendKind kind) {
  return kind == FS_BACKEND_CUDA ? "cuda" : kind == FS_BACKEND_HOST ? "host" : "cpu";
}

static void destroy_cpu(void* self) {
  fs_cpu_destroy(self);
}

static int open_cpu(const fsReplay* r, int nthread, fsBackend* b, fsError* err) {
  fsCpuReplay* c = fs_cpu_create(r, nthread, err);
  if (!c) return -1;
  b->ops = &fs_cpu_ops;
  b->self = c;
  b->destroy = destroy_cpu;
  b->bits = 64;
  b->nthread = fs_cpu_threads(c);
  snprintf(b->desc, sizeof b->desc, "%d thread%s", b->nthread, b->nthread == 1 ? "" : "s");
  return 0;
}

static int open_host(const fsReplay* r, int nthread, fsBackend* b, fsError* err) {
  fsHostBackend h;
  if (fs_host_backend_open(r, nthread, b->bits, &h, err)) return -1;
  b->ops = h.ops;
  b->self = h.self;
  b->destroy = h.destroy;
  b->nthread = h.nthread;
  snprintf(b->desc, sizeof b->desc, "%s", h.desc);
  return 0;
}

#ifdef FLYSIM_WITH_CUDA
int fs_cuda_device_count_f32(void);

int fs_backend_have_cuda(void) {
  return fs_cuda_device_count_f32() > 0;
}

static int open_cuda(const fsReplay* r, fsBackend* b, fsError* err) {
  fsCudaBackend c;
  if (fs_cuda_backend_open(r, b->bits, &c, err)) return -1;
  b->ops = c.ops;
  b->self = c.self;
  b->destroy = c.destroy;
  size_t n = strlen(c.desc) < sizeof b->desc - 40 ? strlen(c.desc) : sizeof b->desc - 40;
  memcpy(b->desc, c.desc, n);
  snprintf(b->desc + n, sizeof b->desc - n, "%s",
           c.uses_graph ? "" : ", no CUDA graph (FLYSIM_NO_GRAPH)");
  return 0;
}
#else
int fs_backend_have_cuda(void) {
  return 0;
}

static int open_cuda(const fsReplay* r, fsBackend* b, fsError* err) {
  (void)r;
  (void)b;
  return fs_fail(err, "--backend cuda: this flysim was built without CUDA (nvcc was not found "
                      "at configure time); fix: install the CUDA toolkit and rebuild, or use "
                      "--backend cpu or host");
}
#endif

int fs_backend_open(fsBackendKind kind, int bits, const fsReplay* r, int nthread, fsBackend* out,
                    fsError* err) {
  memset(out, 0, sizeof *out);
  out->kind = kind;
  out->bits = bits == 32 ? 32 : 64;
  int rc = kind == FS_BACKEND_CUDA   ? open_cuda(r, out, err)
           : kind == FS_BACKEND_HOST ? open_host(r, nthread, out, err)
                                     : open_cpu(r, nthread, out, err);
  if (rc) memset(out, 0, sizeof *out);
  return rc;
}

void fs_backend_close(fsBackend* b) {
  if (b->destroy) b->destroy(b->self);
  memset(b, 0, sizeof *b);
}
