// A grid-stride loop over n items, so a shader covers the whole problem
// whatever workgroup count and size IREE launches it with: every invocation
// of all three dimensions takes items i, i + invocations, ...
// #include "iree_kernels/grid.glsl" (needs GL_GOOGLE_include_directive); shipped
// with iree-kernels, whose build puts its folder on the include path.
#ifndef IREE_KERNELS_GRID_GLSL
#define IREE_KERNELS_GRID_GLSL

// Macros, not functions: a function reading gl_WorkGroupSize must come after
// the shader's local_size, and this file may be included before it.
#define IREE_KERNELS_LAUNCH_SIZE (gl_NumWorkGroups * gl_WorkGroupSize)
#define IREE_KERNELS_INVOCATION_COUNT                                          \
  (IREE_KERNELS_LAUNCH_SIZE.x * IREE_KERNELS_LAUNCH_SIZE.y * IREE_KERNELS_LAUNCH_SIZE.z)
#define IREE_KERNELS_INVOCATION_INDEX                                          \
  ((gl_GlobalInvocationID.z * IREE_KERNELS_LAUNCH_SIZE.y + gl_GlobalInvocationID.y) \
   * IREE_KERNELS_LAUNCH_SIZE.x + gl_GlobalInvocationID.x)

#define FOR_EACH_INVOCATION(i, n)                                              \
  for (uint i = IREE_KERNELS_INVOCATION_INDEX; i < (n);                      \
       i += IREE_KERNELS_INVOCATION_COUNT)

#endif
