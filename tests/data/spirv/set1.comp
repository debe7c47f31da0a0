#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 1, binding = 0) writeonly buffer C { float c[]; };

void main() { c[gl_GlobalInvocationID.x] = a[gl_GlobalInvocationID.x]; }
