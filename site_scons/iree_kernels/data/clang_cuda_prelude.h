// Included first when clang compiles a kernel without CUDA's headers
// (-nocudainc): the few CUDA keywords and built-in variables a kernel needs.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#include <__clang_cuda_builtin_vars.h>
#define __syncthreads() __nvvm_bar_sync(0)
