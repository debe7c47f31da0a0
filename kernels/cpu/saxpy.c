// out = 2 * x + y, replacing saxpy's main_dispatch_0 on llvm-cpu through a
// generated wrapper (wrapped mode). The manifest launches ceildiv(n, 1024)
// workgroups; each calls this function once for its slice of 1024 items.
// ABI: bindings, then push constants (the lengths as lo/hi words), then the
// workgroup id and count.
#include <stddef.h>
#include <stdint.h>

enum { ITEMS_PER_WORKGROUP = 1024 };

void saxpy(const float *x, const float *y, float *out,
           uint32_t n_lo, uint32_t n_hi, uint32_t out_n_lo, uint32_t out_n_hi,
           size_t id_x, size_t id_y, size_t id_z,
           size_t count_x, size_t count_y, size_t count_z) {
  size_t n = (size_t)n_lo | (size_t)n_hi << 32;
  size_t begin = id_x * ITEMS_PER_WORKGROUP;
  size_t end = begin + ITEMS_PER_WORKGROUP < n ? begin + ITEMS_PER_WORKGROUP : n;
  for (size_t i = begin; i < end; ++i) out[i] = 2.0f * x[i] + y[i];
}
