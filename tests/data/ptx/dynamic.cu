// IREE export main_dispatch_0_elementwise_D_f32: 3 bindings, then the dynamic
// length as an i64 split into two 32-bit push constants (lo, hi).
extern "C" __global__ void main_dispatch_0_elementwise_D_f32(
    const float* a, const float* b, float* out, int n_lo, int n_hi) {
  long long n = ((long long)n_hi << 32) | (unsigned)n_lo;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
