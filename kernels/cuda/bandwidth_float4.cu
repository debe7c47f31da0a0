// out = a * b + a for bandwidth's 64 Mi floats, as a memory-bound kernel should
// be written: 16-byte (float4) loads and stores, 256 threads a block, one
// float4 a thread, so 65536 blocks (the manifest's workgroup_count).
constexpr unsigned int N = 67108864;

extern "C" __global__ void main_dispatch_0_elementwise_67108864_f32(
    const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ out) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N / 4) return;
  float4 x = a[i], y = b[i];
  out[i] = make_float4(x.x * y.x + x.x, x.y * y.y + x.y, x.z * y.z + x.z, x.w * y.w + x.w);
}
