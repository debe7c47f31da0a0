// A grid-stride loop over n items, so a kernel covers the whole problem
// whatever grid and block IREE launches it with (all three dimensions of each).
// #include "iree_kernels/grid.cuh"; shipped with iree-kernels, whose build puts
// its folder on the include path.
#pragma once

__device__ __forceinline__ unsigned int global_thread_index() {
  unsigned int block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned int thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  return block * (blockDim.x * blockDim.y * blockDim.z) + thread;
}

__device__ __forceinline__ unsigned int global_thread_count() {
  return gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
}

#define FOR_EACH_THREAD(i, n) \
  for (unsigned int i = global_thread_index(); i < (n); i += global_thread_count())
