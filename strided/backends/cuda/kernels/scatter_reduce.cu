// scatter_reduce.two (strided/backends/cuda/kernels/scatter_reduce_ops.py, Note [CUDA scatter_reduce]).
// DST_T is the accumulator's type (float for 16-bit floats, else the dtype), SRC_T the dtype of src and of
// the result; IS_FLOAT refers to DST_T.  Both are #defined before this source (after common.cuh).
#define SR_SUM 0
#define SR_PROD 1
#define SR_MEAN 2
#define SR_AMAX 3
#define SR_AMIN 4

struct ScatterReduceParams {
  DST_T* b;                          // the accumulator: contiguous, shaped like the result
  const SRC_T* a;                    // src, iterated over the index's shape with a_strides
  const i64* idx;                    // int64, contiguous over the index's shape
  i64* count;                        // mean: src elements received per element of b (b's layout), else null
  i64 n;                             // index elements
  i64 ndim;
  i64 sizes[STRIDED_MAX_DIMS];       // the index's shape
  i64 a_strides[STRIDED_MAX_DIMS];
  i64 b_strides[STRIDED_MAX_DIMS];   // 0 along the scattered dim
  i64 dim_stride;                    // b's stride of the scattered dim
  i64 dim_size;                      // its size: valid indices are in [0, dim_size)
  i64 reduce;                        // SR_SUM .. SR_AMIN
  i64* err;                          // host-mapped {tag, value} record, or null (no report)
  i64 err_tag;
};

// Note [Deferred index errors] (strided/backends/cuda/index_errors.py), as index.cu's index_report.
__device__ __forceinline__ void sr_report(i64* err, i64 tag, i64 v) {
  volatile i64* rec = err;
  if (rec == nullptr || rec[0] != 0) return;
  rec[1] = v;
  __threadfence_system();
  rec[0] = tag;
}

// Offsets in a and b of index element i; false (and reported) for an out-of-range index: skipped.
__device__ __forceinline__ bool sr_offsets(const ScatterReduceParams& p, i64 i, i64& ao, i64& bo) {
  const i64 v = p.idx[i];
  if (v < 0 || v >= p.dim_size) {
    sr_report(p.err, p.err_tag, v);
    return false;
  }
  ao = 0;
  bo = v * p.dim_stride;
  for (int d = (int)p.ndim - 1; d >= 0; --d) {
    const i64 s = p.sizes[d];
    const i64 c = i % s;
    i /= s;
    ao += c * p.a_strides[d];
    bo += c * p.b_strides[d];
  }
  return true;
}

// Bit patterns of the accumulator types, for the compare-and-swap loops.
template <int N> struct SrWord;
template <> struct SrWord<1> { typedef unsigned char t; };
template <> struct SrWord<2> { typedef unsigned short t; };
template <> struct SrWord<4> { typedef unsigned t; };
template <> struct SrWord<8> { typedef unsigned long long t; };
template <class T> union SrPun {
  T v;
  typename SrWord<sizeof(T)>::t u;
};

// *addr = f(*addr) atomically. 4- and 8-byte types CAS their own word, 1- and 2-byte ones their aligned 32-bit
// word (the allocator's blocks are 512-byte aligned: the word is inside the tensor's block). Bit patterns are
// compared, so a NaN that stays NaN ends the loop; an unchanged value is not written.
template <class T, class F> __device__ __forceinline__ void sr_atomic(T* addr, F f) {
  SrPun<T> cur, nxt;
  if constexpr (sizeof(T) >= 4) {
    typedef typename SrWord<sizeof(T)>::t W;
    W* word = reinterpret_cast<W*>(addr);
    W old = *reinterpret_cast<volatile W*>(word), assumed;
    do {
      assumed = old;
      cur.u = assumed;
      nxt.v = f(cur.v);
      if (nxt.u == assumed) return;
      old = atomicCAS(word, assumed, nxt.u);
    } while (assumed != old);
  } else {
    unsigned* word = (unsigned*)((size_t)addr & ~(size_t)3);
    const unsigned shift = ((size_t)addr & 3) * 8;
    const unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned old = *(volatile unsigned*)word, assumed;
    do {
      assumed = old;
      cur.u = (typename SrWord<sizeof(T)>::t)((assumed & mask) >> shift);
      nxt.v = f(cur.v);
      const unsigned next = (assumed & ~mask) | ((unsigned)nxt.u << shift);
      if (next == assumed) return;
      old = atomicCAS(word, assumed, next);
    } while (assumed != old);
  }
}

// Products wrap for integers (unsigned arithmetic: no signed overflow), as the CPU's NumPy.
template <class T> __device__ __forceinline__ T sr_mul(T a, T b) {
#if IS_FLOAT
  return a * b;
#else
  typedef typename SrWord<(sizeof(T) < 4 ? 4 : sizeof(T))>::t U;
  return (T)((U)a * (U)b);
#endif
}

// np.maximum / np.minimum: a NaN (either side) wins and stays.
template <class T> __device__ __forceinline__ T sr_max(T cur, T v) {
  return cur != cur ? cur : (v != v ? v : (v > cur ? v : cur));
}
template <class T> __device__ __forceinline__ T sr_min(T cur, T v) {
  return cur != cur ? cur : (v != v ? v : (v < cur ? v : cur));
}

__device__ __forceinline__ void sr_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void sr_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void sr_add(int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void sr_add(long long* p, long long v) {
  atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
template <class T> __device__ __forceinline__ void sr_add(T* p, T v) {  // 1- and 2-byte integers: wrap
  sr_atomic(p, [v](T c) { return (T)(c + v); });
}

__device__ __forceinline__ void sr_max_int(int* p, int v) { atomicMax(p, v); }
__device__ __forceinline__ void sr_max_int(long long* p, long long v) { atomicMax(p, v); }
template <class T> __device__ __forceinline__ void sr_max_int(T* p, T v) { sr_atomic(p, [v](T c) { return c > v ? c : v; }); }
__device__ __forceinline__ void sr_min_int(int* p, int v) { atomicMin(p, v); }
__device__ __forceinline__ void sr_min_int(long long* p, long long v) { atomicMin(p, v); }
template <class T> __device__ __forceinline__ void sr_min_int(T* p, T v) { sr_atomic(p, [v](T c) { return c < v ? c : v; }); }

// Combine v into *p. bool: sum, mean and amax are OR, prod and amin AND (NumPy's bool ufuncs).
__device__ __forceinline__ void sr_combine(bool* p, bool v, int reduce) {
  const bool is_or = reduce == SR_SUM || reduce == SR_MEAN || reduce == SR_AMAX;
  if (is_or ? v : !v) *p = v;
}
template <class T> __device__ __forceinline__ void sr_combine(T* p, T v, int reduce) {
  switch (reduce) {
    case SR_SUM:
    case SR_MEAN: sr_add(p, v); break;
    case SR_PROD: sr_atomic(p, [v](T c) { return sr_mul(c, v); }); break;
#if IS_FLOAT
    case SR_AMAX: sr_atomic(p, [v](T c) { return sr_max(c, v); }); break;
    default: sr_atomic(p, [v](T c) { return sr_min(c, v); }); break;
#else
    case SR_AMAX: sr_max_int(p, v); break;
    default: sr_min_int(p, v); break;
#endif
  }
}

// The reduction's identity: 0 for sum and mean, 1 for prod, the lowest / highest value for amax / amin.
template <class T> __device__ __forceinline__ T sr_identity(int reduce) {
  if (reduce == SR_PROD) return T(1);
  if (reduce != SR_AMAX && reduce != SR_AMIN) return T(0);
#if IS_FLOAT
  const T inf = (T)__longlong_as_double(0x7ff0000000000000LL);
  return reduce == SR_AMAX ? -inf : inf;
#else
  if (T(-1) > T(0)) return reduce == SR_AMAX ? T(0) : T(~0ULL);  // unsigned (uint8); bool: false / true
  const T top = (T)((1ULL << (8 * sizeof(T) - 1)) - 1);
  return reduce == SR_AMAX ? T(-top - 1) : top;
#endif
}

// include_self=False: the elements of b that receive src start from the identity (racing writers agree).
extern "C" __global__ void scatter_reduce_init(const ScatterReduceParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  const DST_T id = sr_identity<DST_T>((int)p.reduce);
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    i64 ao, bo;
    if (sr_offsets(p, i, ao, bo)) p.b[bo] = id;
  }
}

extern "C" __global__ void scatter_reduce(const ScatterReduceParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  const int reduce = (int)p.reduce;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    i64 ao, bo;
    if (!sr_offsets(p, i, ao, bo)) continue;
    sr_combine(p.b + bo, convert<DST_T>(p.a[ao]), reduce);
    if (p.count != nullptr) atomicAdd((unsigned long long*)(p.count + bo), 1ULL);
  }
}

struct MeanParams {
  SRC_T* out;        // the result (contiguous; the accumulator itself unless it is a float copy)
  const DST_T* acc;
  const i64* count;
  i64 n;
  i64 self_count;    // 1 with include_self, else 0
};

// mean = acc / max(count + include_self, 1): true division (in double, rounded once) for floating dtypes,
// floor division for integers, (acc // count) != 0 for bool -- the CPU's NumPy expressions.
extern "C" __global__ void scatter_reduce_mean(const MeanParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    i64 c = p.count[i] + p.self_count;
    c = c < 1 ? 1 : c;
#if IS_FLOAT
    p.out[i] = convert<SRC_T>(static_cast<double>(p.acc[i]) / static_cast<double>(c));
#else
    const i64 s = static_cast<i64>(p.acc[i]);
    i64 q = s / c;
    if (s % c != 0 && s < 0) q -= 1;
    p.out[i] = convert<SRC_T>(q);
#endif
  }
}
