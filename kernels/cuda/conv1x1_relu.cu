// conv1x1's one executable on CUDA, which IREE 3.13's own CUDA codegen fails to
// compile: y[o][p] = relu(0.02 * sum_c x[c][p] + 0.01) for 16 output channels
// over 55x55 pixels (NCHW, batch 1). The weights and bias are the model's
// splats, folded into the executable by IREE (it has two bindings: x, y).
// Wrapped: one thread an output, 256 a block, ceildiv(16 * 3025, 256) blocks.
// Named after the export with its '$' as '_': the name IREE's CUDA runtime looks up.
#define CHANNELS_IN 64
#define CHANNELS_OUT 16
#define PIXELS 3025

extern "C" __global__ void conv1x1_async_dispatch_0_reduction_16x3025x64_f32(
    const float* __restrict__ x, float* __restrict__ y) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= CHANNELS_OUT * PIXELS) return;
  unsigned int p = i % PIXELS;
  float sum = 0.0f;
  for (int c = 0; c < CHANNELS_IN; ++c) sum += x[c * PIXELS + p] * 0.02f;
  y[i] = fmaxf(sum + 0.01f, 0.0f);
}
