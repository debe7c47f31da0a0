#version 450
// out = a * b + a, replacing elementwise's main_dispatch_0 on Vulkan.
// Layout (IREE's): bindings 0, 1 read-only, 2 written; push constants: the
// two dynamic lengths as (lo, hi) word pairs.
#extension GL_GOOGLE_include_directive : require
#include "iree_kernels/grid.glsl"

layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer Out { float result[]; };
layout(push_constant) uniform PushConstants { uint values[4]; } pc;

void main() {
  uint n = pc.values[0];
  FOR_EACH_INVOCATION(i, n) { result[i] = a[i] * b[i] + a[i]; }
}
