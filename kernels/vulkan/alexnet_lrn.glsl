#version 450
// Skeleton for bvlc_alexnet$async_dispatch_1 of model bvlc_alexnet on vulkan, from "scons scaffold".
// Export: bvlc_alexnet$async_dispatch_1_conv_96x54x54x5_f32
// Layout (the kernel's parameters, in order):
//   binding 0: read-only  readonly:tensor<96x54x54xf32> at byte offset 1119744, 0
//   binding 1: read-write writeonly:tensor<96x54x54xf32> at byte offset 2286144
//   push constants: 0 x 32-bit
// IREE's launch shape (object mode keeps it):
//   workgroup size:  2x2x16
//   workgroup count: %c4374 = arith.constant 4374 : index; %c1 = arith.constant 1 : index; hal.return %c4374, %c1, %c1 : index, index, index
// Write void main(): the build names the entry point after the export.
layout(local_size_x = 2, local_size_y = 2, local_size_z = 16) in;
layout(set = 0, binding = 0) readonly buffer Binding0 { float data[]; } binding0;
layout(set = 0, binding = 1) buffer Binding1 { float data[]; } binding1;

// binding0 holds two tensors: the squares of the input, zero-padded by 2
// channels on each side (100x54x54), 1119744 bytes in, and the input itself at 0.
const uint SQUARES_START = 1119744u / 4u;
const uint INPUT_START = 0u;
// binding1's tensor starts 2286144 bytes into its buffer: index binding1.data[BINDING1_START + k].
const uint BINDING1_START = 2286144u / 4u;

void main() {
  // Every invocation of the launch, all three dimensions.
  uvec3 size = gl_NumWorkGroups * gl_WorkGroupSize;
  uint invocations = size.x * size.y * size.z;
  uint first = (gl_GlobalInvocationID.z * size.y + gl_GlobalInvocationID.y) * size.x
               + gl_GlobalInvocationID.x;
  for (uint i = first; i < 96u * 54u * 54u; i += invocations) {
    uint c = i / (54u * 54u), pixel = i % (54u * 54u);
    float sum = 0.0;
    for (uint k = 0u; k < 5u; ++k)
      sum += binding0.data[SQUARES_START + (c + k) * 54u * 54u + pixel];
    float scale = pow(sum / 5.0 * 9.99999974e-5 + 1.0, 0.75);
    binding1.data[BINDING1_START + i] = binding0.data[INPUT_START + i] / scale;
  }
}
