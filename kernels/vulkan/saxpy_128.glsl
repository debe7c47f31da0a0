#version 450
// out = 2 * x + y, replacing saxpy's main_dispatch_0 on Vulkan with its own
// launch shape (wrapped mode): 128 invocations a workgroup, ceildiv(n, 128)
// workgroups, one element an invocation.
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(set = 0, binding = 2) writeonly buffer Out { float result[]; };
layout(push_constant) uniform PushConstants { uint values[4]; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.values[0]) result[i] = 2.0 * x[i] + y[i];
}
