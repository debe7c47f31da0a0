#version 450
// Workgroup size as a specialization constant: a WorkgroupSize built-in
// constant for SPIR-V 1.0, LocalSizeId for SPIR-V 1.6.
layout(local_size_x = 32, local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer Data { uint data[]; };

void main() { data[gl_GlobalInvocationID.x] = 1u; }
