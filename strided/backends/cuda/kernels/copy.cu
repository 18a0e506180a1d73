// Strided copy with a dtype cast: dst[i] = convert<DST_T>(src[i]) over a coalesced shape.
// Instantiated by text: DST_T and SRC_T are #defined before this source.
struct CopyParams {
  DST_T* dst;
  const SRC_T* src;
  i64 n;
  i64 ndim;
  i64 sizes[STRIDED_MAX_DIMS];
  i64 dst_strides[STRIDED_MAX_DIMS];
  i64 src_strides[STRIDED_MAX_DIMS];
};

extern "C" __global__ void strided_copy(const CopyParams p) {
  i64 stride = (i64)blockDim.x * gridDim.x;
  int nd = (int)p.ndim;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    i64 so = offset_of(i, nd, p.sizes, p.src_strides);
    i64 dof = offset_of(i, nd, p.sizes, p.dst_strides);
    p.dst[dof] = convert<DST_T>(p.src[so]);
  }
}

// Both sides contiguous: plain indexing, no division.
extern "C" __global__ void contiguous_copy(const CopyParams p) {
  i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    p.dst[i] = convert<DST_T>(p.src[i]);
  }
}
