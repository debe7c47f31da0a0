// Shared by the demo shaders: a grid-stride loop over n items, so a shader
// covers the whole problem whatever workgroup count IREE launches it with.
#define FOR_EACH_INVOCATION(i, n)                                              \
  for (uint i = gl_GlobalInvocationID.x; i < (n);                              \
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x)
