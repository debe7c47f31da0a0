// One C kernel for every GEMM executable of a model on llvm-cpu (a family: the
// manifest's match). The build compiles it once per executable it takes, with
// that executable's iree_gemm.h: sizes, where the operands are, the epilogue.
// Each workgroup computes a TILE_M x TILE_N tile of one batch; the manifest
// launches ceildiv(n, TILE_N) x ceildiv(m, TILE_M) x batch workgroups.
#include "iree_gemm.h"

enum { TILE_M = 8, TILE_N = 64 };

void gemm(GEMM_PARAMS) {
  size_t b = workgroup_id_z;
  size_t m0 = workgroup_id_y * TILE_M, n0 = workgroup_id_x * TILE_N;
  size_t m_end = m0 + TILE_M < GEMM_M ? m0 + TILE_M : GEMM_M;
  size_t n_end = n0 + TILE_N < GEMM_N ? n0 + TILE_N : GEMM_N;
  for (size_t m = m0; m < m_end; ++m) {
    gemm_acc_t acc[TILE_N] = {0};
    for (size_t k = 0; k < GEMM_K; ++k) {
      gemm_acc_t a = (gemm_acc_t)GEMM_LHS(b, m, k);
      for (size_t n = n0; n < n_end; ++n) acc[n - n0] += a * (gemm_acc_t)GEMM_RHS(b, k, n);
    }
    for (size_t n = n0; n < n_end; ++n) GEMM_STORE(b, m, n, acc[n - n0]);
  }
}
