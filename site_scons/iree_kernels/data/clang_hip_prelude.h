// Included first when clang compiles a HIP kernel without ROCm's headers
// (-nogpuinc): the few HIP keywords and built-in variables a kernel needs.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __syncthreads() __builtin_amdgcn_s_barrier()
#define __IREE_KERNELS_HIP_DIM3(name, x_, y_, z_)                                  \
  struct __##name##_t {                                                          \
    __declspec(property(get = __x)) unsigned int x;                              \
    __declspec(property(get = __y)) unsigned int y;                              \
    __declspec(property(get = __z)) unsigned int z;                              \
    static __device__ __forceinline__ unsigned int __x() { return x_; }           \
    static __device__ __forceinline__ unsigned int __y() { return y_; }           \
    static __device__ __forceinline__ unsigned int __z() { return z_; }           \
  };                                                                             \
  extern const __device__ __attribute__((weak)) __##name##_t name;
__IREE_KERNELS_HIP_DIM3(threadIdx, __builtin_amdgcn_workitem_id_x(),
                        __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z())
__IREE_KERNELS_HIP_DIM3(blockIdx, __builtin_amdgcn_workgroup_id_x(),
                        __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z())
__IREE_KERNELS_HIP_DIM3(blockDim, __builtin_amdgcn_workgroup_size_x(),
                        __builtin_amdgcn_workgroup_size_y(), __builtin_amdgcn_workgroup_size_z())
__IREE_KERNELS_HIP_DIM3(gridDim, __builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x(),
                        __builtin_amdgcn_grid_size_y() / __builtin_amdgcn_workgroup_size_y(),
                        __builtin_amdgcn_grid_size_z() / __builtin_amdgcn_workgroup_size_z())
#undef __IREE_KERNELS_HIP_DIM3
