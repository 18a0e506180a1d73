// cat of up to CAT_MAX same-dtype inputs in one launch.  DST_T is #defined before this source.
// Each input owns a contiguous range of blocks (block_start); a block copies up to
// CAT_PER_BLOCK elements of its input into the output's slab (start along `dim`).
#define CAT_MAX 32
#define CAT_PER_BLOCK 1024

struct CatParams {
  DST_T* out;
  i64 ndim;
  i64 dim;
  i64 out_strides[STRIDED_MAX_DIMS];
  i64 ninputs;
  i64 sizes[STRIDED_MAX_DIMS];                 // the inputs' common sizes (dim's entry unused)
  const DST_T* src[CAT_MAX];
  i64 start[CAT_MAX];                          // offset along dim in the output
  i64 len[CAT_MAX];                            // size along dim
  i64 block_start[CAT_MAX + 1];
  i64 strides[CAT_MAX][STRIDED_MAX_DIMS];
};

extern "C" __global__ void __launch_bounds__(256) cat_copy(const CatParams p) {
  const i64 b = blockIdx.x;
  int k = 0;
  while (k + 1 < (int)p.ninputs && p.block_start[k + 1] <= b) ++k;
  const int nd = (int)p.ndim, dim = (int)p.dim;
  i64 n = 1;
  for (int d = 0; d < nd; ++d) n *= d == dim ? p.len[k] : p.sizes[d];
  const i64 first = (b - p.block_start[k]) * CAT_PER_BLOCK;
  const i64 last = min(first + CAT_PER_BLOCK, n);
  const DST_T* src = p.src[k];
  DST_T* out = p.out + p.start[k] * p.out_strides[dim];
  for (i64 i = first + threadIdx.x; i < last; i += blockDim.x) {
    i64 r = i, so = 0, dof = 0;
    for (int d = nd - 1; d >= 0; --d) {
      const i64 s = d == dim ? p.len[k] : p.sizes[d];
      const i64 c = r % s;
      r /= s;
      so += c * p.strides[k][d];
      dof += c * p.out_strides[d];
    }
    out[dof] = src[so];
  }
}
