// fill_ and arange.  DST_T and IS_FLOAT are #defined before this source.
struct FillParams {
  DST_T* dst;
  i64 n;
  i64 ndim;
  i64 sizes[STRIDED_MAX_DIMS];
  i64 strides[STRIDED_MAX_DIMS];
  double fvalue;
  i64 ivalue;
};

extern "C" __global__ void fill(const FillParams p) {
  DST_T v = IS_FLOAT ? convert<DST_T>(p.fvalue) : convert<DST_T>(p.ivalue);
  i64 stride = (i64)blockDim.x * gridDim.x;
  int nd = (int)p.ndim;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    p.dst[offset_of(i, nd, p.sizes, p.strides)] = v;
  }
}

struct ArangeParams {
  DST_T* dst;
  i64 n;
  double fstart;
  double fstep;
  i64 istart;
  i64 istep;
};

// torch computes start + i * step in the accumulate type and casts once.
extern "C" __global__ void arange(const ArangeParams p) {
  i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    if (IS_FLOAT) p.dst[i] = convert<DST_T>(p.fstart + (double)i * p.fstep);
    else p.dst[i] = convert<DST_T>(p.istart + i * p.istep);
  }
}
