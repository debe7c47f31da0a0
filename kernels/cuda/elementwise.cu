// out = a * b + a, replacing elementwise's main_dispatch_0 on CUDA.
// IREE's ABI: one pointer per binding, then the push constants: the two
// dynamic lengths as (lo, hi) 32-bit pairs.
#include "iree_kernels/grid.cuh"

extern "C" __global__ void main_dispatch_0_elementwise_D_f32(
    const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
    unsigned int n_lo, unsigned int n_hi, unsigned int out_n_lo, unsigned int out_n_hi) {
  FOR_EACH_THREAD(i, n_lo) { out[i] = a[i] * b[i] + a[i]; }
}
