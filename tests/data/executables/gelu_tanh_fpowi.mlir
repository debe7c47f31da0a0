// HuggingFace GPT-2 (transformers 5.25, from a config: 256 wide, 4x512 tokens) on llvm-cpu: the MLP's
// up-projection with a bias and GELU's tanh form, whose cube is math.fpowi by a constant i64.
hal.executable private @main$async_dispatch_12 {
  hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", debug_symbols = false, iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
    hal.executable.export public @main$async_dispatch_12_matmul_2048x1024x256_f32 ordinal(0) layout(#hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      hal.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @main$async_dispatch_12_matmul_2048x1024x256_f32() {
        %c3_i64 = arith.constant 3 : i64
        %cst = arith.constant 5.000000e-01 : f32
        %cst_0 = arith.constant 1.000000e+00 : f32
        %cst_1 = arith.constant 0.797884523 : f32
        %cst_2 = arith.constant 4.471500e-02 : f32
        %cst_3 = arith.constant 0.000000e+00 : f32
        %c4194304 = arith.constant 4194304 : index
        %c6291456 = arith.constant 6291456 : index
        %0 = hal.interface.constant.load layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) ordinal(0) : i32
        %1 = hal.interface.constant.load layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) ordinal(1) : i32
        %2 = arith.index_castui %0 : i32 to index
        %3 = arith.index_castui %1 : i32 to index
        %4:2 = util.assume.int 
            %2[<umin = 4718592, umax = 4718592, udiv = 4718592>, <umin = 1572864, umax = 1572864, udiv = 1572864>], 
            %3[<umin = 7856128, umax = 7856128, udiv = 7856128>, <umin = 7842816, umax = 7842816, udiv = 7842816>]
          : index, index
        %5 = hal.interface.binding.subspan layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c4194304) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x256xf32>>
        %6 = hal.interface.binding.subspan layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%4#0) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x1024xf32>>
        %7 = hal.interface.binding.subspan layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%4#1) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xf32>>
        %8 = hal.interface.binding.subspan layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(2) alignment(64) offset(%c6291456) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2048x1024xf32>>
        %9 = iree_tensor_ext.dispatch.tensor.load %5, offsets = [0, 0], sizes = [2048, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2048x256xf32>> -> tensor<2048x256xf32>
        %10 = iree_tensor_ext.dispatch.tensor.load %6, offsets = [0, 0], sizes = [256, 1024], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x1024xf32>> -> tensor<256x1024xf32>
        %11 = iree_tensor_ext.dispatch.tensor.load %7, offsets = [0], sizes = [1024], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xf32>> -> tensor<1024xf32>
        %12 = tensor.empty() : tensor<2048x1024xf32>
        %13 = linalg.fill ins(%cst_3 : f32) outs(%12 : tensor<2048x1024xf32>) -> tensor<2048x1024xf32>
        %14 = linalg.matmul ins(%9, %10 : tensor<2048x256xf32>, tensor<256x1024xf32>) outs(%13 : tensor<2048x1024xf32>) -> tensor<2048x1024xf32>
        %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%14, %11 : tensor<2048x1024xf32>, tensor<1024xf32>) outs(%12 : tensor<2048x1024xf32>) {
        ^bb0(%in: f32, %in_4: f32, %out: f32):
          %16 = arith.addf %in, %in_4 : f32
          %17 = math.fpowi %16, %c3_i64 : f32, i64
          %18 = arith.mulf %17, %cst_2 : f32
          %19 = arith.addf %16, %18 : f32
          %20 = arith.mulf %19, %cst_1 : f32
          %21 = math.tanh %20 : f32
          %22 = arith.addf %21, %cst_0 : f32
          %23 = arith.mulf %16, %cst : f32
          %24 = arith.mulf %23, %22 : f32
          linalg.yield %24 : f32
        } -> tensor<2048x1024xf32>
        iree_tensor_ext.dispatch.tensor.store %15, %8, offsets = [0, 0], sizes = [2048, 1024], strides = [1, 1] : tensor<2048x1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2048x1024xf32>>
        return
      }
    }
  }
}
