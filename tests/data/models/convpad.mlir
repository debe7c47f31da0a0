// conv (constant weights) + bias + relu, written into a zero-padded buffer that a second conv reads.
func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = arith.constant dense<[[[[-0.731, 0.695, 0.528], [-0.490, -0.009, -0.101], [0.303, 0.577, -0.812]], [[-0.943, 0.672, -0.134], [0.525, -0.996, -0.109], [0.443, -0.542, 0.891]], [[0.803, -0.939, -0.949], [0.083, 0.878, -0.238], [-0.567, -0.156, -0.942]], [[-0.557, -0.124, -0.008], [-0.534, -0.538, -0.562], [-0.081, -0.420, -0.957]]], [[[0.675, 0.113, 0.285], [-0.628, 0.985, 0.720], [-0.758, -0.335, 0.443]], [[0.422, 0.873, -0.156], [0.660, 0.341, -0.393], [0.175, 0.765, 0.692]], [[0.011, 0.178, -0.931], [-0.515, 0.595, -0.171], [-0.654, 0.098, 0.406]], [[0.349, -0.251, -0.122], [0.017, 0.557, 0.042], [-0.213, -0.021, -0.941]]], [[[-0.913, 0.407, 0.966], [0.186, -0.213, -0.659], [0.004, 0.964, 0.541]], [[0.079, 0.721, -0.536], [0.028, 0.905, 0.156], [-0.082, -0.461, 0.096]], [[0.914, -0.989, 0.567], [0.641, 0.772, 0.481], [0.618, 0.037, 0.123]], [[-0.148, -0.888, 0.740], [0.140, -0.600, 0.009], [-0.030, -0.286, -0.308]]], [[[0.077, 0.247, 0.225], [-0.084, -0.944, -0.541], [-0.646, 0.169, 0.722]], [[0.597, 0.594, 0.633], [-0.489, 0.683, 0.346], [-0.834, -0.967, -0.971]], [[0.511, -0.501, -0.781], [0.250, -0.311, -0.861], [-0.681, 0.055, -0.664]], [[-0.454, 0.423, -0.091], [-0.356, -0.052, -0.953], [-0.227, -0.158, -0.624]]]]> : tensor<4x4x3x3xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x4x3x3xf32>
  %b = arith.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %init = tensor.empty() : tensor<1x4x8x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%xp, %w : tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%fill : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x4x8x8xf32>, tensor<4xf32>) outs(%init : tensor<1x4x8x8xf32>) {
  ^bb0(%v: f32, %bb: f32, %o: f32):
    %s = arith.addf %v, %bb : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x8xf32>
  %rp = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %c2 = linalg.conv_2d_nchw_fchw ins(%rp, %w2 : tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%fill : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %c2 : tensor<1x4x8x8xf32>
}
