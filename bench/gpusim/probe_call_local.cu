// A probe of the GPU simulator, not of flysim: a call (not inlined) that reads through
// pointers its caller passes, to the caller's local array, to a __grid_constant__ kernel
// parameter and to global memory, as the convex collider's calls would with its shapes and
// contacts on the stack (fsi_convex passes them to fsi_ccd_penetration; they live in the
// world's ccd_work instead). On a GPU each returns its sum.
// GPGPU-Sim (667834cf with the CUDA 13 patch) reads other memory through the local pointer
// (the parameter and global pointers read right). bench/gpusim/gpusim_check.sh runs it to say
// whether the convex collider's results under the simulator can be trusted.
// Exit 0: every sum right; 1: a wrong sum.
#include <cstdio>
#include <cuda_runtime.h>

struct Big {
  double v[64];
  int n;
};

__device__ __noinline__ double sum_param(const Big* m) {
  double s = 0;
  for (int i = 0; i < m->n; i++) s += m->v[i];
  return s;
}

__device__ __noinline__ double sum_local(const double* p, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += p[i];
  return s;
}

__device__ __noinline__ double sum_global(const double* p, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += p[i];
  return s;
}

// A shape as the collider holds one: a local struct with a pointer to the model.
struct Shape {
  double pos[3];
  const Big* m;
};

__device__ __noinline__ double weigh(const Shape* o) {
  double s = 0;
  for (int i = 0; i < o->m->n; i++) s += o->m->v[i] * o->pos[i % 3];
  return s;
}

__global__ void sums(const __grid_constant__ Big m, const double* g, double* out) {
  double local[8];
  for (int i = 0; i < 8; i++) local[i] = i + 0.0 * threadIdx.x;
  Shape o = {{1, 2, 3}, &m};
  out[0] = sum_param(&m);
  out[1] = sum_local(local, 8);
  out[2] = sum_global(g, 8);
  out[3] = weigh(&o);
}

int main() {
  Big b;
  for (int i = 0; i < 64; i++) b.v[i] = i;
  b.n = 10;
  double hg[8], h[4], *g = NULL, *out = NULL;
  for (int i = 0; i < 8; i++) hg[i] = i;
  if (cudaMalloc(&g, sizeof hg) != cudaSuccess || cudaMalloc(&out, sizeof h) != cudaSuccess ||
      cudaMemcpy(g, hg, sizeof hg, cudaMemcpyHostToDevice) != cudaSuccess) {
    fprintf(stderr, "probe_call_local: CUDA set-up failed\n");
    return 2;
  }
  sums<<<1, 1>>>(b, g, out);
  if (cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) {
    fprintf(stderr, "probe_call_local: CUDA error %s\n", cudaGetErrorString(cudaGetLastError()));
    return 2;
  }
  double want = 0;
  for (int i = 0; i < 10; i++) want += i * (1 + i % 3);
  int ok = h[0] == 45 && h[1] == 28 && h[2] == 28 && h[3] == want;
  printf("probe_call_local: through a kernel parameter %g (45), a caller's local array %g (28), "
         "global memory %g (28), a local struct pointing to the parameter %g (%g): %s\n",
         h[0], h[1], h[2], h[3], want, ok ? "right" : "WRONG");
  return ok ? 0 : 1;
}
