// The 4x8 by 8x16 matmul of mlp's main_dispatch_0, on CUDA: one thread per
// output element, each a dot product over k.
#include "iree_kernels/grid.cuh"

constexpr unsigned int M = 4, N = 16, K = 8;

extern "C" __global__ void main_dispatch_0_matmul_4x16x8_f32(
    const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ out) {
  FOR_EACH_THREAD(index, M * N) {
    unsigned int row = index / N, column = index % N;
    float sum = 0.0f;
    for (unsigned int k = 0; k < K; ++k) sum += x[row * K + k] * w[k * N + column];
    out[index] = sum;
  }
}
