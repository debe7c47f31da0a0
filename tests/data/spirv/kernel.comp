#version 450
// Matches a 2-input, 1-output elementwise export with 4 push constants.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) buffer B { float b[]; };  // read-only in IREE's layout; no qualifier is fine
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform PushConstants { uint values[4]; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < pc.values[0]) c[i] = a[i] + b[i];
}
