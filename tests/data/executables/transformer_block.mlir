module @module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  hal.executable private @main$async_dispatch_0 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_0_reduction_16x64_f32 ordinal(0) layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_0_reduction_16x64_f32() {
          %cst = arith.constant 6.400000e+01 : f32
          %cst_0 = arith.constant 0.000000e+00 : f32
          %c0 = arith.constant 0 : index
          %0 = hal.interface.constant.load layout(<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) ordinal(0) : i32
          %1 = arith.index_castui %0 : i32 to index
          %2 = util.assume.int %1[<umin = 0, umax = 0>, <umin = 4096, umax = 4096, udiv = 4096>] : index
          %3 = hal.interface.binding.subspan layout(<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>>
          %4 = hal.interface.binding.subspan layout(<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%2) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x64xf32>>
          %5 = iree_tensor_ext.dispatch.tensor.load %3, offsets = [0, 0], sizes = [16, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>> -> tensor<16x64xf32>
          %6 = tensor.empty() : tensor<16x64xf32>
          %7 = tensor.empty() : tensor<16xf32>
          %8 = linalg.fill ins(%cst_0 : f32) outs(%7 : tensor<16xf32>) -> tensor<16xf32>
          %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%5 : tensor<16x64xf32>) outs(%8 : tensor<16xf32>) {
          ^bb0(%in: f32, %out: f32):
            %11 = arith.addf %in, %out : f32
            linalg.yield %11 : f32
          } -> tensor<16xf32>
          %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %9 : tensor<16x64xf32>, tensor<16xf32>) outs(%6 : tensor<16x64xf32>) {
          ^bb0(%in: f32, %in_1: f32, %out: f32):
            %11 = arith.divf %in_1, %cst : f32
            %12 = arith.subf %in, %11 : f32
            linalg.yield %12 : f32
          } -> tensor<16x64xf32>
          iree_tensor_ext.dispatch.tensor.store %10, %4, offsets = [0, 0], sizes = [16, 64], strides = [1, 1] : tensor<16x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x64xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_1 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_1_reduction_16x64_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_1_reduction_16x64_f32() {
          %cst = arith.constant 0.000000e+00 : f32
          %cst_0 = arith.constant 6.400000e+01 : f32
          %cst_1 = arith.constant 9.99999974E-6 : f32
          %cst_2 = arith.constant dense_resource<torch_tensor_64_torch.float32> : tensor<64xf32>
          %cst_3 = arith.constant dense_resource<torch_tensor_64_torch.float32_1> : tensor<64xf32>
          %c0 = arith.constant 0 : index
          %c4096 = arith.constant 4096 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c4096) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x64xf32>>
          %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [16, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>> -> tensor<16x64xf32>
          %3 = tensor.empty() : tensor<16x64xf32>
          %4 = tensor.empty() : tensor<16xf32>
          %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<16xf32>) -> tensor<16xf32>
          %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%2 : tensor<16x64xf32>) outs(%5 : tensor<16xf32>) {
          ^bb0(%in: f32, %out: f32):
            %8 = arith.mulf %in, %in : f32
            %9 = arith.addf %8, %out : f32
            linalg.yield %9 : f32
          } -> tensor<16xf32>
          %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2, %6, %cst_2, %cst_3 : tensor<16x64xf32>, tensor<16xf32>, tensor<64xf32>, tensor<64xf32>) outs(%3 : tensor<16x64xf32>) {
          ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
            %8 = arith.divf %in_4, %cst_0 : f32
            %9 = arith.addf %8, %cst_1 : f32
            %10 = math.rsqrt %9 : f32
            %11 = arith.mulf %in, %10 : f32
            %12 = arith.mulf %11, %in_5 : f32
            %13 = arith.addf %12, %in_6 : f32
            linalg.yield %13 : f32
          } -> tensor<16x64xf32>
          iree_tensor_ext.dispatch.tensor.store %7, %1, offsets = [0, 0], sizes = [16, 64], strides = [1, 1] : tensor<16x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x64xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_2 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_2_batch_matmul_1x16x64x64_f32 ordinal(0) layout(#hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_2_batch_matmul_1x16x64x64_f32() {
          %cst = arith.constant 0.000000e+00 : f32
          %c4096 = arith.constant 4096 : index
          %0 = hal.interface.constant.load layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) ordinal(0) : i32
          %1 = hal.interface.constant.load layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) ordinal(1) : i32
          %2 = arith.index_castui %0 : i32 to index
          %3 = arith.index_castui %1 : i32 to index
          %4:2 = util.assume.int 
              %2[<umin = 0, umax = 0>, <umin = 16384, umax = 16384, udiv = 16384>, <umin = 32768, umax = 32768, udiv = 32768>], 
              %3[<umin = 0, umax = 0>, <umin = 12288, umax = 12288, udiv = 12288>, <umin = 16384, umax = 16384, udiv = 16384>]
            : index, index
          %5 = hal.interface.binding.subspan layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c4096) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>>
          %6 = hal.interface.binding.subspan layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%4#0) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x64x64xf32>>
          %7 = hal.interface.binding.subspan layout(<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(2) alignment(64) offset(%4#1) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x16x64xf32>>
          %8 = iree_tensor_ext.dispatch.tensor.load %5, offsets = [0, 0, 0], sizes = [1, 16, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>> -> tensor<1x16x64xf32>
          %9 = iree_tensor_ext.dispatch.tensor.load %6, offsets = [0, 0, 0], sizes = [1, 64, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x64x64xf32>> -> tensor<1x64x64xf32>
          %10 = tensor.empty() : tensor<1x16x64xf32>
          %11 = linalg.fill ins(%cst : f32) outs(%10 : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
          %12 = linalg.batch_matmul ins(%8, %9 : tensor<1x16x64xf32>, tensor<1x64x64xf32>) outs(%11 : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
          iree_tensor_ext.dispatch.tensor.store %12, %7, offsets = [0, 0, 0], sizes = [1, 16, 64], strides = [1, 1, 1] : tensor<1x16x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x16x64xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_3 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_3_elementwise_transpose_16x4x16_f32 ordinal(0) layout(#hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_3_elementwise_transpose_16x4x16_f32() {
          %0 = hal.interface.constant.load layout(<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) ordinal(0) : i32
          %1 = hal.interface.constant.load layout(<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) ordinal(1) : i32
          %2 = hal.interface.constant.load layout(<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) ordinal(2) : i32
          %3 = arith.index_castui %0 : i32 to index
          %4 = arith.index_castui %1 : i32 to index
          %5 = arith.index_castui %2 : i32 to index
          %6:3 = util.assume.int 
              %3[<umin = 0, umax = 0>, <umin = 16384, umax = 16384, udiv = 16384>], 
              %4[<umin = 198144, umax = 198144, udiv = 198144>, <umin = 197632, umax = 197632, udiv = 197632>], 
              %5[<umin = 8192, umax = 8192, udiv = 8192>, <umin = 0, umax = 0>]
            : index, index, index
          %7 = hal.interface.binding.subspan layout(<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%6#0) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x4x16xf32>>
          %8 = hal.interface.binding.subspan layout(<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%6#1) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xf32>>
          %9 = hal.interface.binding.subspan layout(<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(2) alignment(64) offset(%6#2) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16x16xf32>>
          %10 = iree_tensor_ext.dispatch.tensor.load %7, offsets = [0, 0, 0], sizes = [16, 4, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x4x16xf32>> -> tensor<16x4x16xf32>
          %11 = iree_tensor_ext.dispatch.tensor.load %8, offsets = [0, 0], sizes = [4, 16], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xf32>> -> tensor<4x16xf32>
          %12 = tensor.empty() : tensor<4x16x16xf32>
          %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%10, %11 : tensor<16x4x16xf32>, tensor<4x16xf32>) outs(%12 : tensor<4x16x16xf32>) {
          ^bb0(%in: f32, %in_0: f32, %out: f32):
            %14 = arith.addf %in, %in_0 : f32
            linalg.yield %14 : f32
          } -> tensor<4x16x16xf32>
          iree_tensor_ext.dispatch.tensor.store %13, %9, offsets = [0, 0, 0], sizes = [4, 16, 16], strides = [1, 1, 1] : tensor<4x16x16xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16x16xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_7 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_7_elementwise_transpose_16x64_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_7_elementwise_transpose_16x64_f32() {
          %c12288 = arith.constant 12288 : index
          %c197888 = arith.constant 197888 : index
          %c4096 = arith.constant 4096 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c12288) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c197888) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64xf32>>
          %2 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(2) alignment(64) offset(%c4096) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x16xf32>>
          %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [16, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>> -> tensor<16x64xf32>
          %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0], sizes = [64], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64xf32>> -> tensor<64xf32>
          %5 = tensor.empty() : tensor<64x16xf32>
          %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<16x64xf32>, tensor<64xf32>) outs(%5 : tensor<64x16xf32>) {
          ^bb0(%in: f32, %in_0: f32, %out: f32):
            %7 = arith.addf %in, %in_0 : f32
            linalg.yield %7 : f32
          } -> tensor<64x16xf32>
          iree_tensor_ext.dispatch.tensor.store %6, %2, offsets = [0, 0], sizes = [64, 16], strides = [1, 1] : tensor<64x16xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x16xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_8 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_8_batch_matmul_4x16x16x16_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_8_batch_matmul_4x16x16x16_f32() {
          %cst = arith.constant 0.000000e+00 : f32
          %cst_0 = arith.constant 4.000000e+00 : f32
          %c8192 = arith.constant 8192 : index
          %c4096 = arith.constant 4096 : index
          %c12288 = arith.constant 12288 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c8192) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c4096) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>>
          %2 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c12288) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16x16xf32>>
          %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [4, 16, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>> -> tensor<4x16x16xf32>
          %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [4, 16, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>> -> tensor<4x16x16xf32>
          %5 = tensor.empty() : tensor<4x16x16xf32>
          %6 = linalg.fill ins(%cst : f32) outs(%5 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
          %7 = linalg.batch_matmul ins(%3, %4 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%6 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
          %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7 : tensor<4x16x16xf32>) outs(%5 : tensor<4x16x16xf32>) {
          ^bb0(%in: f32, %out: f32):
            %9 = arith.divf %in, %cst_0 : f32
            linalg.yield %9 : f32
          } -> tensor<4x16x16xf32>
          iree_tensor_ext.dispatch.tensor.store %8, %2, offsets = [0, 0, 0], sizes = [4, 16, 16], strides = [1, 1, 1] : tensor<4x16x16xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16x16xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_9 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_9_softmax_4x16x16xf32_dispatch_tensor_store ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_9_softmax_4x16x16xf32_dispatch_tensor_store() {
          %c12288 = arith.constant 12288 : index
          %c4096 = arith.constant 4096 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c12288) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c4096) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16x16xf32>>
          %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [4, 16, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>> -> tensor<4x16x16xf32>
          %3 = tensor.empty() : tensor<4x16x16xf32>
          %4 = linalg.softmax dimension(2) ins(%2 : tensor<4x16x16xf32>) outs(%3 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
          iree_tensor_ext.dispatch.tensor.store %4, %1, offsets = [0, 0, 0], sizes = [4, 16, 16], strides = [1, 1, 1] : tensor<4x16x16xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16x16xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_10 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_10_batch_matmul_4x16x16x16_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_10_batch_matmul_4x16x16x16_f32() {
          %cst = arith.constant 0.000000e+00 : f32
          %c4096 = arith.constant 4096 : index
          %c0 = arith.constant 0 : index
          %c8192 = arith.constant 8192 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c4096) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>>
          %2 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c8192) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x4x16xf32>>
          %3 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [4, 16, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>> -> tensor<4x16x16xf32>
          %4 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [4, 16, 16], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16x16xf32>> -> tensor<4x16x16xf32>
          %5 = tensor.empty() : tensor<16x4x16xf32>
          %6 = tensor.empty() : tensor<4x16x16xf32>
          %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
          %8 = linalg.batch_matmul ins(%3, %4 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%7 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
          %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<4x16x16xf32>) outs(%5 : tensor<16x4x16xf32>) {
          ^bb0(%in: f32, %out: f32):
            linalg.yield %in : f32
          } -> tensor<16x4x16xf32>
          iree_tensor_ext.dispatch.tensor.store %9, %2, offsets = [0, 0, 0], sizes = [16, 4, 16], strides = [1, 1, 1] : tensor<16x4x16xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x4x16xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_11 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_11_batch_matmul_1x16x64x64_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_11_batch_matmul_1x16x64x64_f32() {
          %cst = arith.constant 0.000000e+00 : f32
          %cst_0 = arith.constant dense_resource<torch_tensor_64_torch.float32_5> : tensor<64xf32>
          %c8192 = arith.constant 8192 : index
          %c49152 = arith.constant 49152 : index
          %c0 = arith.constant 0 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c8192) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c49152) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x64x64xf32>>
          %2 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(2) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>>
          %3 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(3) alignment(64) offset(%c0) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x16x64xf32>>
          %4 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [1, 16, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>> -> tensor<1x16x64xf32>
          %5 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [1, 64, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x64x64xf32>> -> tensor<1x64x64xf32>
          %6 = iree_tensor_ext.dispatch.tensor.load %2, offsets = [0, 0, 0], sizes = [1, 16, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>> -> tensor<1x16x64xf32>
          %7 = tensor.empty() : tensor<1x16x64xf32>
          %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
          %9 = linalg.batch_matmul ins(%4, %5 : tensor<1x16x64xf32>, tensor<1x64x64xf32>) outs(%8 : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
          %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %9, %cst_0 : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32>) outs(%7 : tensor<1x16x64xf32>) {
          ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
            %11 = arith.addf %in_1, %in_2 : f32
            %12 = arith.addf %in, %11 : f32
            linalg.yield %12 : f32
          } -> tensor<1x16x64xf32>
          iree_tensor_ext.dispatch.tensor.store %10, %3, offsets = [0, 0, 0], sizes = [1, 16, 64], strides = [1, 1, 1] : tensor<1x16x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x16x64xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_13 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_13_reduction_16x64_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_13_reduction_16x64_f32() {
          %cst = arith.constant 0.000000e+00 : f32
          %cst_0 = arith.constant 6.400000e+01 : f32
          %cst_1 = arith.constant 9.99999974E-6 : f32
          %cst_2 = arith.constant dense_resource<torch_tensor_64_torch.float32_6> : tensor<64xf32>
          %cst_3 = arith.constant dense_resource<torch_tensor_64_torch.float32_7> : tensor<64xf32>
          %c4096 = arith.constant 4096 : index
          %c8192 = arith.constant 8192 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c4096) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c8192) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x64xf32>>
          %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0], sizes = [16, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>> -> tensor<16x64xf32>
          %3 = tensor.empty() : tensor<16x64xf32>
          %4 = tensor.empty() : tensor<16xf32>
          %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<16xf32>) -> tensor<16xf32>
          %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%2 : tensor<16x64xf32>) outs(%5 : tensor<16xf32>) {
          ^bb0(%in: f32, %out: f32):
            %8 = arith.mulf %in, %in : f32
            %9 = arith.addf %8, %out : f32
            linalg.yield %9 : f32
          } -> tensor<16xf32>
          %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2, %6, %cst_2, %cst_3 : tensor<16x64xf32>, tensor<16xf32>, tensor<64xf32>, tensor<64xf32>) outs(%3 : tensor<16x64xf32>) {
          ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
            %8 = arith.divf %in_4, %cst_0 : f32
            %9 = arith.addf %8, %cst_1 : f32
            %10 = math.rsqrt %9 : f32
            %11 = arith.mulf %in, %10 : f32
            %12 = arith.mulf %11, %in_5 : f32
            %13 = arith.addf %12, %in_6 : f32
            linalg.yield %13 : f32
          } -> tensor<16x64xf32>
          iree_tensor_ext.dispatch.tensor.store %7, %1, offsets = [0, 0], sizes = [16, 64], strides = [1, 1] : tensor<16x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x64xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_14 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_14_batch_matmul_1x16x256x64_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_14_batch_matmul_1x16x256x64_f32() {
          %cst = arith.constant 0.000000e+00 : f32
          %cst_0 = arith.constant 1.41421354 : f32
          %cst_1 = arith.constant 1.000000e+00 : f32
          %cst_2 = arith.constant 5.000000e-01 : f32
          %c8192 = arith.constant 8192 : index
          %c65536 = arith.constant 65536 : index
          %c196608 = arith.constant 196608 : index
          %c12288 = arith.constant 12288 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c8192) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c65536) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x64x256xf32>>
          %2 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c196608) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256xf32>>
          %3 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(2) alignment(64) offset(%c12288) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x16x256xf32>>
          %4 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [1, 16, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>> -> tensor<1x16x64xf32>
          %5 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [1, 64, 256], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x64x256xf32>> -> tensor<1x64x256xf32>
          %6 = iree_tensor_ext.dispatch.tensor.load %2, offsets = [0], sizes = [256], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256xf32>> -> tensor<256xf32>
          %7 = tensor.empty() : tensor<1x16x256xf32>
          %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<1x16x256xf32>) -> tensor<1x16x256xf32>
          %9 = linalg.batch_matmul ins(%4, %5 : tensor<1x16x64xf32>, tensor<1x64x256xf32>) outs(%8 : tensor<1x16x256xf32>) -> tensor<1x16x256xf32>
          %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9, %6 : tensor<1x16x256xf32>, tensor<256xf32>) outs(%7 : tensor<1x16x256xf32>) {
          ^bb0(%in: f32, %in_3: f32, %out: f32):
            %11 = arith.addf %in, %in_3 : f32
            %12 = arith.divf %11, %cst_0 : f32
            %13 = math.erf %12 : f32
            %14 = arith.addf %13, %cst_1 : f32
            %15 = arith.mulf %14, %cst_2 : f32
            %16 = arith.mulf %11, %15 : f32
            linalg.yield %16 : f32
          } -> tensor<1x16x256xf32>
          iree_tensor_ext.dispatch.tensor.store %10, %3, offsets = [0, 0, 0], sizes = [1, 16, 256], strides = [1, 1, 1] : tensor<1x16x256xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x16x256xf32>>
          return
        }
      }
    }
  }
  hal.executable private @main$async_dispatch_15 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>) {
      hal.executable.export public @main$async_dispatch_15_batch_matmul_1x16x64x256_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @main$async_dispatch_15_batch_matmul_1x16x64x256_f32() {
          %cst = arith.constant 0.000000e+00 : f32
          %cst_0 = arith.constant dense_resource<torch_tensor_64_torch.float32_8> : tensor<64xf32>
          %c12288 = arith.constant 12288 : index
          %c0 = arith.constant 0 : index
          %c131072 = arith.constant 131072 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c12288) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x256xf32>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c131072) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x256x64xf32>>
          %2 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>>
          %3 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(2) alignment(64) offset(%c0) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x16x64xf32>>
          %4 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [1, 16, 256], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x256xf32>> -> tensor<1x16x256xf32>
          %5 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0], sizes = [1, 256, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x256x64xf32>> -> tensor<1x256x64xf32>
          %6 = iree_tensor_ext.dispatch.tensor.load %2, offsets = [0, 0, 0], sizes = [1, 16, 64], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1x16x64xf32>> -> tensor<1x16x64xf32>
          %7 = tensor.empty() : tensor<1x16x64xf32>
          %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
          %9 = linalg.batch_matmul ins(%4, %5 : tensor<1x16x256xf32>, tensor<1x256x64xf32>) outs(%8 : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
          %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %9, %cst_0 : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<64xf32>) outs(%7 : tensor<1x16x64xf32>) {
          ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
            %11 = arith.addf %in_1, %in_2 : f32
            %12 = arith.addf %in, %11 : f32
            linalg.yield %12 : f32
          } -> tensor<1x16x64xf32>
          iree_tensor_ext.dispatch.tensor.store %10, %3, offsets = [0, 0, 0], sizes = [1, 16, 64], strides = [1, 1, 1] : tensor<1x16x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1x16x64xf32>>
          return
        }
      }
    }
  }
}
{-#
  dialect_resources: {
    builtin: {
      torch_tensor_64_torch.float32: "0x04000000976E143FF974153F350CAE3F18737D3F6EC0723FBF1E873F8587253F55D4643FC034B13F31A9333F550F3F3FA2474F3F6429B13FEFAA5F3F3353B13F003D1F3F48E2463F6CDD203F6045933F24B5923F3CB25D3FCAC3BA3F52CFAE3F7A3EAE3F281B483F325E763FA375603FBFBDA13F6A5C7A3F578F853F35F8B73FC994283FCB83923FB8735A3FF62C993F61645A3F6EF8663FD72EB53F3AE9863FE44FA13F20EA5E3FB992B53FA9948F3F920F9C3FDA678B3FD44A3D3FB9CC8E3FE1AE9E3F9AB38C3FA78B6E3F3186B13FDE79B83FEB8F553F58432B3F21E0573FAD64283F2FA58A3F7F44AB3F4506003FF091A13F0A20523F1DF10F3F0A78933F1D63BA3F",
      torch_tensor_64_torch.float32_1: "0x04000000F899F2BB68068C3BB0D046BAC8ACA2BBF9C32C3C736A4DBA9F903BBC852107BB9CBB033B34819F3AF4F3D93A40AC713BF9B3F53A329671BB5D15A9BA501900BC559A703C80895C3AB22C03BBE7B83B3CDF85D0BCDEB3523CF3F237BBF83F02BC349778BCEC8BE3BCD99C9CBC1321AA3C2CF4D7BBBDD947BC34A34FBCD9F035BC2F6A97BCD514A9BB6EAFE83BDE783C3C9B5E0E3CA1BD2DBCEEAF583C2A8E31BC169EE3BB4E9A103CF8F05B3B74EB7E3C7F729E3B232C843CA3AB9A3B4679AA3BFC57BFB8AAE4383CC373673BA91181BC4718113CCBFB713CA5A132BCC0108D388F6CF13BE4BB2D3C065642BC395C9ABB8D1347BB4FC6BD3B8A69543C552C993A",
      torch_tensor_64_torch.float32_5: "0x04000000CBB73C3CFD290BBCE0968CBC2A09533C8975773CFF72823B17CA33BCDC9766BA964405BA16DA9E3BCB4297BA937F863C1A2801BCD188F33B2B6B3BBCE518B1BB6E17AB3C2ED80CBB820D993B093AF03B3E2B7E3CDFAD14BC7DC94ABCCE9DA73B272136BB51CA763B29586F3C67A17D3BAAB50CBCCDB8C93BE2D4F13BAB10D63AE5C5033C6C4253BA65AED03BABF2F43A75EF42BC4234FCBB098E433CE30B1B3B88316FBC8BC4483AB8CAC43C89061BBC89AB393CF5F8813C9851E2BB6A7F953B0FA65C3CD7C8BE3BF196293CAE332EBB1DC9E5BBA454033A0B57B53B8E831F38CEC40CBB672962BC8B53913B5478F13B427088BCC5618E3CAF7AB8BB296483BB",
      torch_tensor_64_torch.float32_6: "0x040000002EC90A3F1084A63F89AF903F2DE0A33F7AD9743FAC34963F7F80313FBB3C2C3F99DE523F3F2AB73F432AA63F8381473FEEB69F3F36B29A3F7EDD473F9E19083F6A3F773F2AB8843FDDA9B43F2C6F633F05B77D3FB915863F17C8033F49D2913F40F9AA3FA1748F3F7F14813F7558A53F0CD69E3FD703BD3F0ABE0F3F97FC6C3F7D1BB33F5BA8A93F9E35883F137B753F2A1A203F9F300D3FAC3C3D3FC4AB7E3F1C634A3FBE9AA83FFC1D6B3F5F219E3F5E06833FFBE2BB3FBBF4983F671D693F98735A3FB0938B3F4D0C973F35DE593F67AA553F95BEB53FCB01BF3FA6822F3F6223783F0B47B93FE5DE273FBA5A6B3F9E04473FE7F52F3F2A935C3F67B2573F",
      torch_tensor_64_torch.float32_7: "0x04000000632334BCC12794B80EC24C3C4BF932BBADD5C23CB5180FBC8D0204BC945794BB64C84C3C39AC8DBB550CCA3B0376A738748C703C721BD9BCB8D96E3C7AAA1F3CFCCBE3BA51EF46BCED6E8CBA214EC3BC74E9B2BBD270033CB66BEB3B7C8C2ABC60ABC6BBA8FBE2BBADDA9C3C45E13EBC976AA83CAAB0803B013C373C45B3DEBB8A4F693B1CA649BA24382EBB8C5B55BB069C713B7BDE80BBC7273D3B18E942BC2456013DE9C902BC98A32EBCD9630EBB725BF5BAEEE36D3C381DE9BBB8ACAD3B557EF43BA2D302BC96BF89BCDFDCC33B6F8A88BB0C61A3BAEC709F3A6012053CEBB89ABBC75F2EBC90078FBBBFB0E83A6FF2E6BC752B183A9E42B3BA0B52633C",
      torch_tensor_64_torch.float32_8: "0x04000000681D8FBB1197E339B9034E3B2368DAB9F53074BC9145FC3B7B35BABB2BEEA0B9EF8C123BFE67663CB0E432BC4D8A2FBC4FDD0CBCFE2E45BCDD3E98BCA14D663CAA40CA3BE7A408BB0E662A3B6D32293CB328C83C2AD8B9BBC605B8BB84591F3B78CD43BBCCB710BCB22BE039ACDD17BC66C4BC3A0872D8BAEB6BFB3BBA6C9E3BF9F69F3C389B143CE01817BC0D96A93A6B760C3B4256363B0C7BA1BB4DA41BBCF1BC1D3C974874BC5AB926BCF398AD3A229497BCE92E4BBB1ED309BB87B96F3BA5A20F3BBA940D3C57D186B93DC600BA5486823B7DCC16BCB6865FB99D958CBC2CE52E3CB325913B85D883BBA426483CB9E925BB44D0C93BBD4EDE3CFC99583B"
    }
  }
#-}
