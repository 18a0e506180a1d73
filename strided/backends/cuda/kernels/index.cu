// Indexing kernels over linearized offsets (Note [Offset indexing] in kernels/indexing_ops.py).
// DST_T is the type of the indexed side `b` (self of gather/index, the written tensor of scatter/put,
// or its float32 accumulator for 16-bit floats); SRC_T the type of the dense side `a`.
// IS_FLOAT refers to DST_T.  Both are #defined before this source.
#define IDX_MAX 8

struct IndexParams {
  SRC_T* a;                            // dense side, iterated with a_strides
  DST_T* b;                            // indexed side: b_strides plus the index contributions
  i64 n;
  i64 ndim;
  i64 sizes[STRIDED_MAX_DIMS];         // the iteration shape
  i64 a_strides[STRIDED_MAX_DIMS];
  i64 b_strides[STRIDED_MAX_DIMS];     // 0 along dims that an index array supplies
  i64 nidx;
  const i64* idx[IDX_MAX];             // int64 index arrays
  i64 idx_strides[IDX_MAX][STRIDED_MAX_DIMS];  // each array's strides over the iteration shape
  i64 idx_bstride[IDX_MAX];            // b's stride of the dim each array indexes
  i64 idx_size[IDX_MAX];               // that dim's size
  i64 wrap;                            // 1: negative indices count from the end (advanced indexing)
  double falpha;                       // index_add's alpha (1 otherwise)
  i64 ialpha;
  i64* err;                            // host-mapped {tag, value} record, or null (no report)
  i64 err_tag;                         // index array k reports err_tag + k
};

// Note [Deferred index errors] (strided/backends/cuda/index_errors.py): the value first, a
// system-wide fence, then the tag the host polls. Racing writers of one launch all write bad values.
__device__ __forceinline__ void index_report(i64* err, i64 tag, i64 v) {
  volatile i64* rec = err;
  if (rec == nullptr || rec[0] != 0) return;
  rec[1] = v;
  __threadfence_system();
  rec[0] = tag;
}

// Offsets of iteration element i in a and b; false when an index is out of range: the element is
// skipped rather than touching memory outside b, and the value is reported (index_report).
__device__ __forceinline__ bool index_offsets(const IndexParams& p, i64 i, i64& ao, i64& bo) {
  i64 coords[STRIDED_MAX_DIMS];
  const int nd = (int)p.ndim;
  ao = 0;
  bo = 0;
  for (int d = nd - 1; d >= 0; --d) {
    const i64 s = p.sizes[d];
    const i64 c = i % s;
    i /= s;
    coords[d] = c;
    ao += c * p.a_strides[d];
    bo += c * p.b_strides[d];
  }
  for (int k = 0; k < (int)p.nidx; ++k) {
    i64 io = 0;
    for (int d = 0; d < nd; ++d) io += coords[d] * p.idx_strides[k][d];
    const i64 given = p.idx[k][io];
    const i64 size = p.idx_size[k];
    const i64 v = (p.wrap && given < 0) ? given + size : given;
    if (v < 0 || v >= size) {
      index_report(p.err, p.err_tag + k, given);
      return false;
    }
    bo += v * p.idx_bstride[k];
  }
  return true;
}

// a[i] = b[offset(i)]  (index_select, gather, embedding, index.Tensor)
extern "C" __global__ void index_gather(const IndexParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    i64 ao, bo;
    if (index_offsets(p, i, ao, bo)) p.a[ao] = convert<SRC_T>(p.b[bo]);
  }
}

// b[offset(i)] = a[i]  (scatter, index_put): duplicates leave one of the written values.
extern "C" __global__ void index_scatter(const IndexParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    i64 ao, bo;
    if (index_offsets(p, i, ao, bo)) p.b[bo] = convert<DST_T>(p.a[ao]);
  }
}

// Atomic adds.  Integer adds wrap like the CPU's and are exact in any order; 1- and 2-byte
// integers go through a compare-and-swap on their aligned 32-bit word; bool adds are ORs.
template <class T> __device__ __forceinline__ void atomic_add_small(T* addr, T v) {
  unsigned* word = (unsigned*)((size_t)addr & ~(size_t)3);
  const unsigned shift = ((size_t)addr & 3) * 8;
  const unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    const unsigned bits = (assumed & mask) >> shift;
    const T cur = sizeof(T) == 1 ? (T)(unsigned char)bits : (T)(unsigned short)bits;
    const T sum = (T)(cur + v);
    const unsigned nb = sizeof(T) == 1 ? (unsigned)(unsigned char)sum : (unsigned)(unsigned short)sum;
    old = atomicCAS(word, assumed, (assumed & ~mask) | (nb << shift));
  } while (assumed != old);
}

__device__ __forceinline__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(__half* p, __half v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(__nv_bfloat16* p, __nv_bfloat16 v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(long long* p, long long v) {
  atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ void atomic_add(int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(short* p, short v) { atomic_add_small(p, v); }
__device__ __forceinline__ void atomic_add(signed char* p, signed char v) { atomic_add_small(p, v); }
__device__ __forceinline__ void atomic_add(unsigned char* p, unsigned char v) { atomic_add_small(p, v); }
__device__ __forceinline__ void atomic_add(bool* p, bool v) { if (v) *p = true; }

template <int N> struct AccOf { typedef float t; };
template <> struct AccOf<8> { typedef double t; };

// b[offset(i)] += alpha * a[i]  (scatter_add, index_add, index_put(accumulate=True))
extern "C" __global__ void index_scatter_add(const IndexParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    i64 ao, bo;
    if (!index_offsets(p, i, ao, bo)) continue;
#if IS_FLOAT
    typedef typename AccOf<sizeof(DST_T)>::t acc_t;
    const acc_t v = static_cast<acc_t>(ToWide<SRC_T>::get(p.a[ao])) * static_cast<acc_t>(p.falpha);
    atomic_add(p.b + bo, convert<DST_T>(v));
#else
    const i64 v = static_cast<i64>(p.a[ao]) * p.ialpha;
    atomic_add(p.b + bo, convert<DST_T>(v));
#endif
  }
}

struct BoundsParams {
  const i64* idx;     // contiguous
  u64* first_bad;     // atomicMin of the first out-of-range position (starts at all ones)
  i64 n;
  i64 lo;
  i64 hi;             // valid: lo <= v < hi
};

extern "C" __global__ void index_bounds(const BoundsParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    const i64 v = p.idx[i];
    if (v < p.lo || v >= p.hi) atomicMin(p.first_bad, (u64)i);
  }
}

// A bounds check on its own, reporting the first value outside [lo, hi) like the indexing kernels do (Note
// [Deferred index errors]): for compositions whose error is their own (take, put_, index_copy_, index_fill_,
// masked_scatter_), launched before the ops they compose, so that its report is the one the host reads.
struct ReportParams {
  const i64* idx;     // contiguous
  i64* err;           // host-mapped {tag, value} record
  i64 tag;
  i64 n;
  i64 lo;
  i64 hi;             // valid: lo <= v < hi
};

extern "C" __global__ void index_bounds_report(const ReportParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    const i64 v = p.idx[i];
    if (v < p.lo || v >= p.hi) index_report(p.err, p.tag, v);
  }
}

// The check for a stream under graph capture, where the read-back cannot be captured: a bad index
// stops the kernel (torch's device-side assert) instead of being reported (Note [CUDA index bounds]).
extern "C" __global__ void index_bounds_trap(const BoundsParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    const i64 v = p.idx[i];
    if (v < p.lo || v >= p.hi) __trap();
  }
}
