#version 450
// Bindings 0, 1, 3: the count is right but binding 2 is missing.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 3) writeonly buffer C { float c[]; };

void main() {
  uint i = gl_GlobalInvocationID.x;
  c[i] = a[i] + b[i];
}
