hal.executable public @squeezenet$async_dispatch_1 {
  hal.executable.variant public @vulkan_spirv_fb target(<"vulkan-spirv", "vulkan-spirv-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "vp_android_baseline_2022", features = "spirv:v1.3,cap:Shader", wgp = <compute = fp32|int32, storage = b32, subgroup = none, subgroup_size_choices = [64], max_workgroup_sizes = [128, 128, 64], max_thread_count_per_workgroup = 128, max_workgroup_memory_bytes = 16384, max_workgroup_counts = [65535, 65535, 65535]>>}>) {
    hal.executable.export public @squeezenet$async_dispatch_1_conv_64x55x55x3x3_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      hal.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @squeezenet$async_dispatch_1_conv_64x55x55x3x3_f32() {
        %cst = arith.constant 0xFF800000 : f32
        %c0 = arith.constant 0 : index
        %c3154176 = arith.constant 3154176 : index
        %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x111x111xf32>>
        %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c3154176) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x55x55xf32>>
        %2 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [64, 111, 111], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x111x111xf32>> -> tensor<64x111x111xf32>
        %3 = tensor.empty() : tensor<64x55x55xf32>
        %4 = tensor.empty() : tensor<3x3xf32>
        %5 = linalg.fill ins(%cst : f32) outs(%3 : tensor<64x55x55xf32>) -> tensor<64x55x55xf32>
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 2 + d3, d2 * 2 + d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%2, %4 : tensor<64x111x111xf32>, tensor<3x3xf32>) outs(%5 : tensor<64x55x55xf32>) {
        ^bb0(%in: f32, %in_0: f32, %out: f32):
          %7 = arith.maximumf %out, %in : f32
          linalg.yield %7 : f32
        } -> tensor<64x55x55xf32>
        iree_tensor_ext.dispatch.tensor.store %6, %1, offsets = [0, 0, 0], sizes = [64, 55, 55], strides = [1, 1, 1] : tensor<64x55x55xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x55x55xf32>>
        return
      }
    }
  }
}
