// Skeleton for bvlc_alexnet$async_dispatch_1 of model bvlc_alexnet on llvm-cpu, from "scons scaffold".
// Export: bvlc_alexnet$async_dispatch_1_conv_96x54x54x5_f32
// Layout (the kernel's parameters, in order):
//   binding 0: read-only  readonly:tensor<96x54x54xf32> at byte offset 1119744, 0
//   binding 1: read-write writeonly:tensor<96x54x54xf32> at byte offset 2286144
//   push constants: 0 x 32-bit
// IREE's launch shape:
//   workgroup size:  1x1x1
//   workgroup count: %c12 = arith.constant 12 : index; %c1 = arith.constant 1 : index; hal.return %c12, %c1, %c1 : index, index, index
// A C kernel is linked through a generated wrapper (wrapped mode) and called
// once per workgroup of the manifest's workgroup_count, with its id and count.
// Freestanding: no libc.
#include <stddef.h>
#include <stdint.h>

void alexnet_lrn(
    const float *binding0,
    float *binding1,
    size_t id_x, size_t id_y, size_t id_z,
    size_t count_x, size_t count_y, size_t count_z) {
  // binding0 holds two tensors: the squares of the input, zero-padded by 2
  // channels on each side (100x54x54), 1119744 bytes in, and the input itself at 0.
  const float *squares = (const float *)((const char *)binding0 + 1119744);
  const float *input = binding0;
  // binding1's tensor starts 2286144 bytes into its buffer.
  binding1 = (float *)((char *)binding1 + 2286144);
  for (size_t c = id_x; c < 96; c += count_x)
    for (size_t pixel = 0; pixel < 54 * 54; ++pixel) {
      float sum = 0.0f;
      for (size_t k = 0; k < 5; ++k)
        sum += squares[(c + k) * 54 * 54 + pixel];
      float base = sum / 5.0f * 9.99999974e-5f + 1.0f;
      /* base^0.75 as sqrt(base) * sqrt(sqrt(base)), with SSE's IEEE sqrtss:
         __builtin_sqrtf calls libm's sqrtf, which a kernel cannot link. */
      float root, fourth_root;
      __asm__("sqrtss %1, %0" : "=x"(root) : "x"(base));
      __asm__("sqrtss %1, %0" : "=x"(fourth_root) : "x"(root));
      float scale = root * fourth_root;
      binding1[c * 54 * 54 + pixel] = input[c * 54 * 54 + pixel] / scale;
    }
}
