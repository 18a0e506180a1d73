// tril/triu, eye, linspace, one_hot (and the min/max one_hot validates with).
// DST_T and IS_FLOAT (of DST_T) are #defined before this source.
struct TriParams {
  DST_T* out;                          // contiguous
  const DST_T* src;
  i64 n;
  i64 ndim;
  i64 sizes[STRIDED_MAX_DIMS];
  i64 strides[STRIDED_MAX_DIMS];       // src's
  i64 diagonal;
  i64 upper;
};

// tril keeps col - row <= diagonal, triu keeps col - row >= diagonal (np.tri's masks).
extern "C" __global__ void triangle(const TriParams p) {
  const int nd = (int)p.ndim;
  const i64 rows = p.sizes[nd - 2], cols = p.sizes[nd - 1];
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    const i64 c = i % cols, r = (i / cols) % rows;
    const bool keep = p.upper ? (c - r >= p.diagonal) : (c - r <= p.diagonal);
    p.out[i] = keep ? p.src[offset_of(i, nd, p.sizes, p.strides)] : convert<DST_T>(0);
  }
}

struct EyeParams {
  DST_T* out;
  i64 n;
  i64 cols;
};

extern "C" __global__ void eye(const EyeParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    p.out[i] = convert<DST_T>(i / p.cols == i % p.cols ? 1 : 0);
  }
}

struct LinspaceParams {
  DST_T* out;
  i64 n;
  double start;
  double end;
  double step;
};

// NumPy's linspace in float64: i * step + start with two roundings (no fused multiply-add),
// the last element exactly `end`; then one cast, as the CPU kernel stores it.
extern "C" __global__ void linspace(const LinspaceParams p) {
  const i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    double v = (p.n > 1 && i == p.n - 1) ? p.end : __dadd_rn(__dmul_rn((double)i, p.step), p.start);
    p.out[i] = convert<DST_T>(v);
  }
}

struct OneHotParams {
  long long* out;      // (n, classes), contiguous
  const long long* x;  // n values, contiguous
  i64 total;           // n * classes
  i64 classes;
};

extern "C" __global__ void one_hot(const OneHotParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 q = (i64)blockIdx.x * blockDim.x + threadIdx.x; q < p.total; q += step) {
    p.out[q] = p.x[q / p.classes] == q % p.classes ? 1 : 0;
  }
}

struct MinMaxParams {
  const long long* x;
  long long* result;   // [min, max]
  i64 n;
};

// One block of 1024 threads: small validation reads (one_hot's class range).
extern "C" __global__ void __launch_bounds__(1024) minmax(const MinMaxParams p) {
  __shared__ long long smin[1024], smax[1024];
  long long lo = 0x7fffffffffffffffll, hi = -0x7fffffffffffffffll - 1;
  for (i64 i = threadIdx.x; i < p.n; i += blockDim.x) {
    const long long v = p.x[i];
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  smin[threadIdx.x] = lo;
  smax[threadIdx.x] = hi;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) {
      smin[threadIdx.x] = min(smin[threadIdx.x], smin[threadIdx.x + s]);
      smax[threadIdx.x] = max(smax[threadIdx.x], smax[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    p.result[0] = smin[0];
    p.result[1] = smax[0];
  }
}
