// One CUDA kernel for every GEMM executable of a model (a family: the manifest's
// match), compiled once per executable it takes with that executable's
// iree_gemm.h. A 16 x 16 block computes a 16 x 16 tile of one batch through
// shared memory; the manifest launches workgroup_size = [16, 16] and
// workgroup_count = ["ceildiv(n, 16)", "ceildiv(m, 16)", "batch"].
#include "iree_gemm.h"

enum { TILE = 16 };

extern "C" __global__ void GEMM_EXPORT(GEMM_PARAMS) {
  __shared__ gemm_acc_t lhs[TILE][TILE + 1];
  __shared__ gemm_acc_t rhs[TILE][TILE + 1];
  unsigned long long b = blockIdx.z;
  unsigned long long m = blockIdx.y * TILE + threadIdx.y, n = blockIdx.x * TILE + threadIdx.x;
  gemm_acc_t acc = 0;
  for (unsigned long long k0 = 0; k0 < GEMM_K; k0 += TILE) {
    unsigned long long lk = k0 + threadIdx.x, rk = k0 + threadIdx.y;
    lhs[threadIdx.y][threadIdx.x] =
        m < GEMM_M && lk < GEMM_K ? (gemm_acc_t)GEMM_LHS(b, m, lk) : (gemm_acc_t)0;
    rhs[threadIdx.y][threadIdx.x] =
        rk < GEMM_K && n < GEMM_N ? (gemm_acc_t)GEMM_RHS(b, rk, n) : (gemm_acc_t)0;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += lhs[threadIdx.y][k] * rhs[k][threadIdx.x];
    __syncthreads();
  }
  if (m < GEMM_M && n < GEMM_N) GEMM_STORE(b, m, n, acc);
}
