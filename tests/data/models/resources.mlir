func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w = arith.constant dense_resource<inside> : tensor<4xf32>
  %v = arith.constant dense_resource<outside> : tensor<4xf32>
  %0 = arith.addf %x, %w : tensor<4xf32>
  return %0, %v : tensor<4xf32>, tensor<4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      inside: "0x040000000000803F000000400000404000008040",
      outside: "0x0400000000002041000030410000404100005041"
    }
  }
#-}
