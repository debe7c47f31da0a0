"""out = 2 * x + y, replacing saxpy's main_dispatch_0 on CUDA and HIP (a Triton kernel).

IREE's ABI for the executable (scons dump): bindings 0 and 1 (x, y, read-only
f32), binding 2 (out, f32), then four 32-bit push constants: the length of x
and of out, each as a low and a high word. Every parameter that is not a
tl.constexpr is one of those, in that order; BLOCK comes from the manifest's
constexprs, and one program (workgroup) covers BLOCK elements: workgroup_count
= ["ceildiv(w0, 1024)"] for BLOCK = 1024.
"""
import triton
import triton.language as tl


@triton.jit
def saxpy(x, y, out, n_lo, n_hi, out_n_lo, out_n_hi, BLOCK: tl.constexpr):
    n = n_lo.to(tl.uint32).to(tl.int64) | (n_hi.to(tl.int64) << 32)
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, 2.0 * tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask),
             mask=mask)
