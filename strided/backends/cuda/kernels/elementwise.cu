// TensorIterator-style pointwise kernels: out[i] = EXPR(x0, x1, x2, x3) over up to four operands.
// Instantiated by text (strided/backends/cuda/elementwise.py, Note [Elementwise kernels]); the
// #defines before this source give
//   OUT_T               the output's element type
//   Kk, Tk, Ck, SCALARk for operand k in 0..3: Kk = 1 tensor, 2 scalar kernel argument, 0 absent;
//                       Tk its element type (tensors), Ck the type it is converted to for EXPR
//                       (opmath: float for half types), SCALARk its value for scalar operands
//   EXPR                an expression in x0..x3 (types C0..C3), converted to OUT_T when stored
//   VEC                 elements per 16-byte vector in ew_vec (EW_UNROLL vectors per thread)
// Three kernels per instantiation: ew_vec (contiguous, every pointer aligned to VEC elements, 16-byte
// loads and stores), ew_strided32 and ew_strided64 (any layout over coalesced dims, 32/64-bit
// index arithmetic).  Each operand's strides are in elements; broadcast dims have stride 0.
#define EW_BLOCK 256
#if VEC >= 16
#define EW_UNROLL 1
#else
#define EW_UNROLL 2
#endif

struct EwFlat {
  OUT_T* out;
  const void* in[4];
  double sd[4];
  i64 si[4];
  i64 n;
};

struct EwStrided {
  EwFlat f;
  i64 ndim;
  i64 sizes[STRIDED_MAX_DIMS];
  i64 strides[5][STRIDED_MAX_DIMS];  // [0] the output, [1 + k] operand k
};

__device__ __forceinline__ OUT_T ew_apply(C0 x0, C1 x1, C2 x2, C3 x3) {
  (void)x0; (void)x1; (void)x2; (void)x3;
  return convert<OUT_T>(EXPR);
}

template <class T> struct alignas(sizeof(T) * VEC) EwVec { T v[VEC]; };

// One operand of ew_vec: its vectors for the EW_UNROLL steps, or its scalar.
template <int K, class T, class C> struct EwVecOperand {
  EwVec<T> r[EW_UNROLL];
  __device__ __forceinline__ void load(const void* ptr, int u, i64 idx) {
    if constexpr (K == 1) r[u] = *reinterpret_cast<const EwVec<T>*>(static_cast<const T*>(ptr) + idx);
  }
  __device__ __forceinline__ C get(int u, int j, C s) const {
    if constexpr (K == 1) return convert<C>(r[u].v[j]);
    else return s;
  }
};

template <int K, class T, class C> __device__ __forceinline__ C ew_at(const void* ptr, i64 off, C s) {
  if constexpr (K == 1) return convert<C>(static_cast<const T*>(ptr)[off]);
  else return s;
}

#define EW_SCALARS(f)        \
  const C0 s0 = SCALAR0;     \
  const C1 s1 = SCALAR1;     \
  const C2 s2 = SCALAR2;     \
  const C3 s3 = SCALAR3;     \
  (void)s0; (void)s1; (void)s2; (void)s3;

extern "C" __global__ void __launch_bounds__(EW_BLOCK) ew_vec(const EwFlat p) {
  const EwFlat& f = p;
  EW_SCALARS(f)
  const i64 n = p.n;
  const i64 base = (i64)blockIdx.x * (EW_BLOCK * VEC * EW_UNROLL) + (i64)threadIdx.x * VEC;
  if (base + (i64)(EW_UNROLL - 1) * EW_BLOCK * VEC + VEC <= n) {
    EwVecOperand<K0, T0, C0> a0;
    EwVecOperand<K1, T1, C1> a1;
    EwVecOperand<K2, T2, C2> a2;
    EwVecOperand<K3, T3, C3> a3;
#pragma unroll
    for (int u = 0; u < EW_UNROLL; ++u) {
      const i64 idx = base + (i64)u * EW_BLOCK * VEC;
      a0.load(p.in[0], u, idx);
      a1.load(p.in[1], u, idx);
      a2.load(p.in[2], u, idx);
      a3.load(p.in[3], u, idx);
    }
#pragma unroll
    for (int u = 0; u < EW_UNROLL; ++u) {
      const i64 idx = base + (i64)u * EW_BLOCK * VEC;
      EwVec<OUT_T> o;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        o.v[j] = ew_apply(a0.get(u, j, s0), a1.get(u, j, s1), a2.get(u, j, s2), a3.get(u, j, s3));
      }
      *reinterpret_cast<EwVec<OUT_T>*>(p.out + idx) = o;
    }
  } else {  // the last block's tail, element by element (one copy of the expression)
#pragma unroll 1
    for (int t = 0; t < EW_UNROLL * VEC; ++t) {
      const i64 i = base + (i64)(t / VEC) * EW_BLOCK * VEC + (t % VEC);
      if (i < n) {
        p.out[i] = ew_apply(ew_at<K0, T0, C0>(p.in[0], i, s0), ew_at<K1, T1, C1>(p.in[1], i, s1),
                            ew_at<K2, T2, C2>(p.in[2], i, s2), ew_at<K3, T3, C3>(p.in[3], i, s3));
      }
    }
  }
}

template <class I> __device__ __forceinline__ void ew_strided_body(const EwStrided& p) {
  const EwFlat& f = p.f;
  EW_SCALARS(f)
  const I n = (I)f.n;
  const int nd = (int)p.ndim;
  const I step = (I)blockDim.x * gridDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    I rem = i, oo = 0, o0 = 0, o1 = 0, o2 = 0, o3 = 0;
#pragma unroll
    for (int d = STRIDED_MAX_DIMS - 1; d >= 0; --d) {
      if (d < nd) {
        const I s = (I)p.sizes[d];
        const I c = rem % s;
        rem /= s;
        oo += c * (I)p.strides[0][d];
        if constexpr (K0 == 1) o0 += c * (I)p.strides[1][d];
        if constexpr (K1 == 1) o1 += c * (I)p.strides[2][d];
        if constexpr (K2 == 1) o2 += c * (I)p.strides[3][d];
        if constexpr (K3 == 1) o3 += c * (I)p.strides[4][d];
      }
    }
    f.out[oo] = ew_apply(ew_at<K0, T0, C0>(f.in[0], (i64)o0, s0), ew_at<K1, T1, C1>(f.in[1], (i64)o1, s1),
                         ew_at<K2, T2, C2>(f.in[2], (i64)o2, s2), ew_at<K3, T3, C3>(f.in[3], (i64)o3, s3));
  }
}

extern "C" __global__ void __launch_bounds__(EW_BLOCK) ew_strided32(const EwStrided p) {
  ew_strided_body<unsigned>(p);
}

extern "C" __global__ void __launch_bounds__(EW_BLOCK) ew_strided64(const EwStrided p) {
  ew_strided_body<u64>(p);
}
