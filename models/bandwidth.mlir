// out = a * b + a over 64 Mi floats (256 MiB a buffer, 768 MiB moved): a
// memory-bound executable for comparing a hand-written CUDA kernel with IREE's
// on the GPU's memory bandwidth ("scons bench").
func.func @main(%a: tensor<67108864xf32>, %b: tensor<67108864xf32>) -> tensor<67108864xf32> {
  %init = tensor.empty() : tensor<67108864xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<67108864xf32>, tensor<67108864xf32>) outs(%init : tensor<67108864xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %x : f32
    linalg.yield %s : f32
  } -> tensor<67108864xf32>
  return %r : tensor<67108864xf32>
}
