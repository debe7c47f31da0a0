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
  // TODO: binding0's tensors start at byte offsets 1119744, 0 into its buffer.
  // binding1's tensor starts 2286144 bytes into its buffer.
  binding1 = (float *)((char *)binding1 + 2286144);
  // TODO: compute this workgroup's share of the outputs from the inputs.
}
