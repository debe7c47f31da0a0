"""The 4x8 by 8x16 matmul of mlp's main_dispatch_0 as a Triton kernel (tl.dot: tensor cores).

IREE's ABI for it (scons dump): bindings 0 (x, 4x8 f32), 1 (w, 8x16 f32), 2 (out, 4x16
f32), no push constants. One program computes one BLOCK_M x BLOCK_N tile, padded
with masks (tl.dot wants 16 or more per dimension): workgroup_count = [1].
"""
import triton
import triton.language as tl


@triton.jit
def matmul(x, w, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    columns = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a = tl.load(x + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K),
                other=0.0)
    b = tl.load(w + ks[:, None] * N + columns[None, :],
                mask=(ks[:, None] < K) & (columns[None, :] < N), other=0.0)
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(out + rows[:, None] * N + columns[None, :], c,
             mask=(rows[:, None] < M) & (columns[None, :] < N))
