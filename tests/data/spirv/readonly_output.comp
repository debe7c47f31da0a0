#version 450
// The output binding is declared readonly: the kernel cannot write its result.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer C { float c[]; };
layout(set = 0, binding = 2) buffer D { float d[]; };

void main() { d[gl_GlobalInvocationID.x] = a[gl_GlobalInvocationID.x] + c[0]; }
