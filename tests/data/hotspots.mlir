// For the hotspot report's tests: main_dispatch_0 (x*x) is dispatched twice,
// main_dispatch_2 (a 192x192 matmul) is much heavier, main_dispatch_3 runs in a
// loop (one site), and 'dynamic' has no static shape (IREE dumps no benchmark).
func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>, %x: tensor<192x192xf32>,
                %y: tensor<192x192xf32>, %n: index)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<192x192xf32>, tensor<64xf32>) {
  %sa = arith.mulf %a, %a : tensor<64xf32>
  %sb = arith.mulf %b, %b : tensor<64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<192x192xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<192x192xf32>) -> tensor<192x192xf32>
  %m = linalg.matmul ins(%x, %y : tensor<192x192xf32>, tensor<192x192xf32>)
                     outs(%f : tensor<192x192xf32>) -> tensor<192x192xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> tensor<64xf32> {
    %s = arith.addf %acc, %b : tensor<64xf32>
    scf.yield %s : tensor<64xf32>
  }
  return %sa, %sb, %m, %l : tensor<64xf32>, tensor<64xf32>, tensor<192x192xf32>, tensor<64xf32>
}

func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  %s = math.exp %a : tensor<?xf32>
  return %s : tensor<?xf32>
}
