#version 450
// sum over j of relu(mm[i][j] + bias[j]) for the 4x16 matrix mm, replacing
// mlp's main_dispatch_1 on Vulkan. One invocation per row.
#extension GL_GOOGLE_include_directive : require
#include "iree_kernels/grid.glsl"

layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Matmul { float mm[]; };
layout(set = 0, binding = 1) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 2) writeonly buffer RowSums { float row_sums[]; };

const uint ROWS = 4, COLUMNS = 16;

void main() {
  FOR_EACH_INVOCATION(row, ROWS) {
    float sum = 0.0;
    for (uint column = 0; column < COLUMNS; ++column)
      sum += max(mm[row * COLUMNS + column] + bias[column], 0.0);
    row_sums[row] = sum;
  }
}
