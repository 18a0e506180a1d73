// Row sorts for sort / sort.stable / topk (Note [CUDA sort] in kernels/indexing_ops.py).
// DST_T (the values' type) and IS_FLOAT are #defined before this source.  Rows are contiguous.
#define SORT_SMEM 2048

struct SortParams {
  const DST_T* src;   // (rows, n)
  DST_T* values;      // (rows, n)
  i64* indices;       // (rows, n)
  u64* keys;          // (rows, P) scratch of the global path
  i64* idx;           // (rows, P) scratch of the global path
  i64 rows;
  i64 n;
  i64 P;              // n rounded up to a power of two
  i64 descending;
  i64 k_first;        // bitonic stages run by this launch
  i64 k_last;
  i64 j;              // global compare distance (sort_step)
};

// An order-preserving unsigned key: NaN above +inf (all NaNs equal), -0 equal to +0.
template <class T> struct SortKey {
  __device__ static u64 get(T v) { return (u64)(i64)v ^ 0x8000000000000000ull; }
};
template <> struct SortKey<bool> {
  __device__ static u64 get(bool v) { return v ? 1ull : 0ull; }
};
__device__ __forceinline__ u64 float_key(float f) {
  if (f != f) return 0xffffffffull;
  if (f == 0.f) f = 0.f;
  const unsigned b = __float_as_uint(f);
  return (u64)((b & 0x80000000u) ? ~b : (b | 0x80000000u));
}
template <> struct SortKey<float> { __device__ static u64 get(float v) { return float_key(v); } };
template <> struct SortKey<__half> { __device__ static u64 get(__half v) { return float_key(__half2float(v)); } };
template <> struct SortKey<__nv_bfloat16> {
  __device__ static u64 get(__nv_bfloat16 v) { return float_key(__bfloat162float(v)); }
};
template <> struct SortKey<double> {
  __device__ static u64 get(double d) {
    if (d != d) return 0xffffffffffffffffull;
    if (d == 0.0) d = 0.0;
    const u64 b = (u64)__double_as_longlong(d);
    return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
  }
};

// Descending = ascending on the complemented key; ties always go by index, so every order is
// the stable one and padding (key all ones, index >= n) sorts last.
__device__ __forceinline__ u64 row_key(const SortParams& p, DST_T v) {
  const u64 k = SortKey<DST_T>::get(v);
  return p.descending ? ~k : k;
}

__device__ __forceinline__ bool kv_less(u64 ka, i64 ia, u64 kb, i64 ib) {
  return ka < kb || (ka == kb && ia < ib);
}

// Bitonic stages k_first..k_last (distances below SORT_SMEM) on chunks of up to SORT_SMEM
// elements in shared memory.  With `src` set it reads a whole short row (P <= SORT_SMEM) and
// writes the results; otherwise it works on the global scratch, chunk by chunk.
template <class I>
__device__ void shared_stages(const SortParams& p, u64* sk, I* si, i64 base_in_row, int len) {
  for (i64 k = p.k_first; k <= p.k_last; k <<= 1) {
    for (int j = (int)min(k >> 1, (i64)SORT_SMEM / 2); j > 0; j >>= 1) {
      for (int t = threadIdx.x; t < len; t += blockDim.x) {
        const int l = t ^ j;
        if (l > t) {
          const bool up = ((base_in_row + t) & k) == 0;
          const u64 a = sk[t], b = sk[l];
          const I ia = si[t], ib = si[l];
          if (up ? kv_less(b, ib, a, ia) : kv_less(a, ia, b, ib)) {
            sk[t] = b; sk[l] = a; si[t] = ib; si[l] = ia;
          }
        }
      }
      __syncthreads();
    }
  }
}

extern "C" __global__ void __launch_bounds__(1024) sort_rows_shared(const SortParams p) {
  __shared__ u64 sk[SORT_SMEM];
  __shared__ int si[SORT_SMEM];
  const i64 row = blockIdx.x;
  const DST_T* src = p.src + row * p.n;
  const int n = (int)p.n, P = (int)p.P;
  for (int t = threadIdx.x; t < P; t += blockDim.x) {
    sk[t] = t < n ? row_key(p, src[t]) : 0xffffffffffffffffull;
    si[t] = t;
  }
  __syncthreads();
  shared_stages<int>(p, sk, si, 0, P);
  for (int t = threadIdx.x; t < n; t += blockDim.x) {
    const int i = si[t];
    p.values[row * p.n + t] = src[i];
    p.indices[row * p.n + t] = i;
  }
}

extern "C" __global__ void sort_init(const SortParams p) {
  const i64 total = p.rows * p.P, step = (i64)blockDim.x * gridDim.x;
  for (i64 q = (i64)blockIdx.x * blockDim.x + threadIdx.x; q < total; q += step) {
    const i64 row = q / p.P, t = q - row * p.P;
    p.keys[q] = t < p.n ? row_key(p, p.src[row * p.n + t]) : 0xffffffffffffffffull;
    p.idx[q] = t;
  }
}

// Stages k_first..k_last for distances < SORT_SMEM, one SORT_SMEM chunk of the scratch per block.
extern "C" __global__ void __launch_bounds__(1024) sort_chunk_shared(const SortParams p) {
  __shared__ u64 sk[SORT_SMEM];
  __shared__ i64 si[SORT_SMEM];
  const i64 base = (i64)blockIdx.x * SORT_SMEM;
  for (int t = threadIdx.x; t < SORT_SMEM; t += blockDim.x) {
    sk[t] = p.keys[base + t];
    si[t] = p.idx[base + t];
  }
  __syncthreads();
  shared_stages<i64>(p, sk, si, base % p.P, SORT_SMEM);
  for (int t = threadIdx.x; t < SORT_SMEM; t += blockDim.x) {
    p.keys[base + t] = sk[t];
    p.idx[base + t] = si[t];
  }
}

// One compare-exchange step of stage k_first at distance j >= SORT_SMEM, over the global scratch.
extern "C" __global__ void sort_step(const SortParams p) {
  const i64 half = p.P >> 1, total = p.rows * half, step = (i64)blockDim.x * gridDim.x;
  const i64 j = p.j, k = p.k_first;
  for (i64 q = (i64)blockIdx.x * blockDim.x + threadIdx.x; q < total; q += step) {
    const i64 row = q / half, u = q - row * half;
    const i64 t = ((u & ~(j - 1)) << 1) | (u & (j - 1));
    const i64 a = row * p.P + t, b = a + j;
    const bool up = (t & k) == 0;
    const u64 ka = p.keys[a], kb = p.keys[b];
    const i64 ia = p.idx[a], ib = p.idx[b];
    if (up ? kv_less(kb, ib, ka, ia) : kv_less(ka, ia, kb, ib)) {
      p.keys[a] = kb; p.keys[b] = ka; p.idx[a] = ib; p.idx[b] = ia;
    }
  }
}

extern "C" __global__ void sort_finish(const SortParams p) {
  const i64 total = p.rows * p.n, step = (i64)blockDim.x * gridDim.x;
  for (i64 q = (i64)blockIdx.x * blockDim.x + threadIdx.x; q < total; q += step) {
    const i64 row = q / p.n, t = q - row * p.n;
    const i64 i = p.idx[row * p.P + t];
    p.values[q] = p.src[row * p.n + i];
    p.indices[q] = i;
  }
}
