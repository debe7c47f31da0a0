"""One Triton GEMM for every GEMM executable of a model on cuda (a family: the manifest's match).

The build compiles it once per executable it takes, through a generated entry
(iree_kernels.kinds.triton_family) that has IREE's signature, finds the
operands from that executable's facts, calls ``gemm`` for one tile and applies
the executable's epilogue before its store. ``gemm`` returns the tile's f32 sums
and its rows and columns; program 0's axis walks the tiles in groups of
GROUP_M rows (L2 reuse), axis 1 is the batch. PRECISION: 0 IEEE f32, 1 TF32,
3 TF32x3 (f16 and bf16 operands ignore it). Launch:
workgroup_count = ["ceildiv(m, BLOCK_M) * ceildiv(n, BLOCK_N)", "batch"].
"""
import triton
import triton.language as tl


@triton.jit
def gemm(lhs, rhs, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
         stride_lm: tl.constexpr, stride_lk: tl.constexpr,
         stride_rk: tl.constexpr, stride_rn: tl.constexpr,
         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
         GROUP_M: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m: tl.constexpr = (M + BLOCK_M - 1) // BLOCK_M
    tiles_n: tl.constexpr = (N + BLOCK_N - 1) // BLOCK_N
    group: tl.constexpr = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    size_m = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = lhs + offs_m[:, None] * stride_lm + offs_k[None, :] * stride_lk
    b_ptrs = rhs + offs_k[:, None] * stride_rk + offs_n[None, :] * stride_rn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, (K + BLOCK_K - 1) // BLOCK_K):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < N), other=0.0)
        if PRECISION == 1:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        elif PRECISION == 3:
            acc = tl.dot(a, b, acc, input_precision="tf32x3")
        else:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_lk
        b_ptrs += BLOCK_K * stride_rk
    return acc, offs_m, offs_n
