// Skeleton for squeezenet$async_dispatch_1 of model squeezenet on llvm-cpu, from "scons scaffold".
// Export: squeezenet$async_dispatch_1_conv_64x55x55x3x3_f32
// Layout (the kernel's parameters, in order):
//   binding 0: read-only  readonly:tensor<64x111x111xf32> at byte offset 0
//   binding 1: read-write writeonly:tensor<64x55x55xf32> at byte offset 3154176
//   push constants: 0 x 32-bit
// IREE's launch shape:
//   workgroup size:  1x1x1
//   workgroup count: %c40 = arith.constant 40 : index; %c1 = arith.constant 1 : index; hal.return %c40, %c1, %c1 : index, index, index
// A C kernel is linked through a generated wrapper (wrapped mode) and called
// once per workgroup of the manifest's workgroup_count, with its id and count.
// Freestanding: no libc.
#include <stddef.h>
#include <stdint.h>

void squeezenet_maxpool(
    const float *binding0,
    float *binding1,
    size_t id_x, size_t id_y, size_t id_z,
    size_t count_x, size_t count_y, size_t count_z) {
  // binding1's tensor starts 3154176 bytes into its buffer.
  binding1 = (float *)((char *)binding1 + 3154176);
  // TODO: compute this workgroup's share of the outputs from the inputs.
}
