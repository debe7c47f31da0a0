"""torch_transformer's attention scores, q @ k^T / sqrt(128), as a Triton kernel (bench/corpus.py).

Replaces main$async_dispatch_8 (batch_matmul_4x2048x2048x128_f32) of the corpus
written with ``--scale 8 --tokens 2048`` (d = 512, 4 heads of 128, 2048 tokens):
the model's hottest matmul on llvm-cpu (scons hotspots). IREE's ABI for it
(scons dump): binding 0 holds q (4x2048x128 f32 at byte offset 8388608) and k
transposed (4x128x2048 f32 at byte offset 4194304), binding 1 the scores
(4x2048x2048 f32 at byte offset 12582912); no push constants.

IREE 3.13 compiles it for sm_80 without tensor cores (f32 SIMT). Compiled for
sm_90a, this kernel's tl.dot is Hopper's wgmma in 3xTF32 (``tf32x3``: three
TF32 products, about f32's accuracy); one program computes a BLOCK_M x BLOCK_N
tile of one head, tiles grouped by GROUP_M rows for L2 reuse:
workgroup_count = [(M / BLOCK_M) * (N / BLOCK_N), HEADS].
"""
import triton
import triton.language as tl


@triton.jit
def scores(qk, out, HEADS: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
           Q_AT: tl.constexpr, KT_AT: tl.constexpr, OUT_AT: tl.constexpr, SCALE: tl.constexpr,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
           GROUP_M: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    q = qk + Q_AT // 4 + head * M * K              # byte offsets of f32 tensors: 4 bytes each
    kt = qk + KT_AT // 4 + head * K * N
    scores_out = out + OUT_AT // 4 + head * M * N
    # Grouped ordering: GROUP_M row tiles share their column tiles of k^T in L2.
    pid = tl.program_id(0)
    tiles_m, tiles_n = M // BLOCK_M, N // BLOCK_N
    group = pid // (GROUP_M * tiles_n)
    first_m = group * GROUP_M
    group_m = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % (GROUP_M * tiles_n)) % group_m
    tile_n = (pid % (GROUP_M * tiles_n)) // group_m
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    columns = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a = q + rows[:, None] * K + ks[None, :]
    b = kt + ks[:, None] * N + columns[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in tl.range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a), tl.load(b), acc, input_precision="tf32x3")
        a += BLOCK_K
        b += BLOCK_K * N
    acc = tl.math.div_rn(acc, SCALE)
    tl.store(scores_out + rows[:, None] * N + columns[None, :], acc)
