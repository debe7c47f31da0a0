#version 450
// Skeleton for squeezenet$async_dispatch_1 of model squeezenet on vulkan, from "scons scaffold".
// Export: squeezenet$async_dispatch_1_conv_64x55x55x3x3_f32
// Layout (the kernel's parameters, in order):
//   binding 0: read-only  readonly:tensor<64x111x111xf32> at byte offset 0
//   binding 1: read-write writeonly:tensor<64x55x55xf32> at byte offset 3154176
//   push constants: 0 x 32-bit
// IREE's launch shape (object mode keeps it):
//   workgroup size:  1x1x64
//   workgroup count: %c3025 = arith.constant 3025 : index; %c1 = arith.constant 1 : index; hal.return %c3025, %c1, %c1 : index, index, index
// Write void main(): the build names the entry point after the export.
layout(local_size_x = 1, local_size_y = 1, local_size_z = 64) in;
layout(set = 0, binding = 0) readonly buffer Binding0 { float data[]; } binding0;
layout(set = 0, binding = 1) buffer Binding1 { float data[]; } binding1;

// binding1's tensor starts 3154176 bytes into its buffer: index binding1.data[BINDING1_START + k].
const uint BINDING1_START = 3154176u / 4u;

void main() {
  // Every invocation of the launch, all three dimensions.
  uvec3 size = gl_NumWorkGroups * gl_WorkGroupSize;
  uint invocations = size.x * size.y * size.z;
  uint first = (gl_GlobalInvocationID.z * size.y + gl_GlobalInvocationID.y) * size.x
               + gl_GlobalInvocationID.x;
  for (uint i = first; i < 64u * 55u * 55u; i += invocations) {
    uint x = i % 55u, y = i / 55u % 55u, c = i / (55u * 55u);
    float m = uintBitsToFloat(0xff800000u);   // -inf, as IREE's max starts
    for (uint dy = 0u; dy < 3u; ++dy)
      for (uint dx = 0u; dx < 3u; ++dx)
        m = max(m, binding0.data[(c * 111u + 2u * y + dy) * 111u + 2u * x + dx]);
    binding1.data[BINDING1_START + i] = m;
  }
}
