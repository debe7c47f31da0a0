#version 450
// 8x8 workgroup; a push-constant struct whose last member is padded to offset 16.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) buffer Data { float data[]; };
layout(push_constant) uniform PushConstants { uint n; float scale; vec3 bias; } pc;

void main() {
  uint i = gl_GlobalInvocationID.y * pc.n + gl_GlobalInvocationID.x;
  data[i] = data[i] * pc.scale + pc.bias.x;
}
