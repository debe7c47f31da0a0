// out = 2 * x + y, replacing saxpy's main_dispatch_0 on AMD GPUs (hip target) with
// its own launch shape (wrapped mode): 256 threads a block, ceildiv(n, 256) blocks.
// IREE's HIP ABI is CUDA's: one pointer per binding, then one 32-bit word per push
// constant. Compiled by clang-19 without ROCm (iree_kernels/data/clang_hip_prelude.h).
extern "C" __global__ void main_dispatch_0_elementwise_D_f32(
    const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
    unsigned int n_lo, unsigned int n_hi, unsigned int out_n_lo, unsigned int out_n_hi) {
  unsigned long long n = (unsigned long long)n_hi << 32 | n_lo;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (blockDim.x != 256) return;  // launched with another shape: leave the output alone
  if (i < n) out[i] = 2.0f * x[i] + y[i];
}
