// A probe of the GPU simulator, not of flysim: masked shuffles in a block's second warp.
// 12 "worlds" of 4 lanes (a block of 4 x 32 threads: warps 0 and 1 hold worlds 0-7 and
// 8-11) each sum a double over their lanes with __shfl_xor_sync under their own mask, as
// common/exec/real.h's fs_lane_sum does. On a GPU every world gets its sum. GPGPU-Sim (667834cf
// with the CUDA 13 patch) executes every warp's shuffle on the first warp's threads: the
// second warp's worlds read other lanes or abort. bench/gpusim/gpusim_check.sh runs it to say
// whether its one-warp-a-block workaround is still needed. Exit 0: correct; 1: wrong sums.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void lane_sums(double* out, int nworld) {
  int w = blockIdx.x * blockDim.y + threadIdx.y;
  if (w >= nworld) return;
  unsigned n = blockDim.x, mask = ((1u << n) - 1u) << ((threadIdx.y * n) & 31u);
  double x = (threadIdx.x + 1) * 0.5 + w;
  __syncwarp(mask);
  for (int o = n / 2; o > 0; o >>= 1) x += __shfl_xor_sync(mask, x, o);
  out[w * n + threadIdx.x] = x;
}

int main() {
  const int nworld = 12, lanes = 4;
  double* d = nullptr;
  double h[nworld * lanes];
  if (cudaMalloc(&d, sizeof h) != cudaSuccess) return printf("no device\n"), 2;
  lane_sums<<<1, dim3(lanes, 32)>>>(d, nworld);
  cudaError_t e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return printf("CUDA error %s\n", cudaGetErrorName(e)), 2;
  int bad = 0;
  for (int w = 0; w < nworld; w++)
    for (int l = 0; l < lanes; l++) {
      double want = 0;
      for (int k = 0; k < lanes; k++) want += (k + 1) * 0.5 + w;
      bad += h[w * lanes + l] != want;
    }
  printf("shuffles in the second warp of a block: %s (%d of %d lanes wrong)\n",
         bad ? "wrong" : "right", bad, nworld * lanes);
  return bad ? 1 : 0;
}
