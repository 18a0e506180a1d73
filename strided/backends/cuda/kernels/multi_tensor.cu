// Multi-tensor kernels (torch's multi_tensor_apply design): fused Adam/AdamW/SGD and foreach ops.
// DST_T (the element type of every list), ACC_T (opmath: float for half types) and MT_MAX (tensors
// per launch) are #defined before this source.
//
// One launch covers up to MT_MAX tensors of one dtype. Every tensor is split into chunks of
// MT_CHUNK elements; block b handles chunk b, finding its tensor by a binary search over
// chunk_start (uniform across the block, so the loads are broadcasts from the parameter bank).
// All metadata travels in the kernel parameter struct (Note [Multi-tensor metadata] in
// optim_ops.py): no device buffer, no host sync.

#define MT_LISTS 5
// MT_BLOCK (threads per block), MT_MIN_BLOCKS (resident blocks per SM its register use must allow),
// MT_CHUNK (elements per block), MT_ILP (vectors in flight per list and thread) and MT_STREAM
// (evict-first loads and stores: the data is touched once) come from optim_ops.mt_source.

struct MTArgs {
  u64 ptr[MT_LISTS][MT_MAX];   // per list, per tensor: data pointers
  u64 step[MT_MAX];            // fused Adam: float* to each tensor's step count
  double scalar[MT_MAX];       // foreach ScalarList values (or the one Scalar, repeated)
  i64 numel[MT_MAX];
  u64 grad_scale;              // float* or 0
  u64 found_inf;               // float* or 0
  double lr, beta1, beta2, weight_decay, eps, momentum, dampening, alpha;
  int chunk_start[MT_MAX + 1];
  int ntensors;
  int op;
  int flags;
};
static_assert(sizeof(MTArgs) == MT_BYTES, "MTArgs layout differs from optim_ops.mt_format");

#define MT_ALIGNED 1
#define MT_AMSGRAD 2
#define MT_MAXIMIZE 4
#define MT_NESTEROV 8
#define MT_FIRST_STEP 16
#define MT_ADAMW 32

#define VEC (16 / (int)sizeof(DST_T))

struct __align__(16) VecT { DST_T v[VEC]; };

__device__ __forceinline__ int mt_find_tensor(const MTArgs& a, int c) {
  int lo = 0, hi = a.ntensors - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) >> 1;
    if (a.chunk_start[mid] <= c) lo = mid; else hi = mid - 1;
  }
  return lo;
}

__device__ __forceinline__ void mt_load(ACC_T* r, const DST_T* p, i64 i, i64 n, bool aligned) {
  if (aligned && i + VEC <= n) {
#if MT_STREAM
    const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p + i));
    VecT x;
    memcpy(&x, &raw, sizeof(x));
#else
    VecT x = *reinterpret_cast<const VecT*>(p + i);
#endif
#pragma unroll
    for (int j = 0; j < VEC; ++j) r[j] = convert<ACC_T>(x.v[j]);
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) r[j] = (i + j < n) ? convert<ACC_T>(p[i + j]) : ACC_T(0);
  }
}

__device__ __forceinline__ void mt_store(DST_T* p, const ACC_T* r, i64 i, i64 n, bool aligned) {
  if (aligned && i + VEC <= n) {
    VecT x;
#pragma unroll
    for (int j = 0; j < VEC; ++j) x.v[j] = convert<DST_T>(r[j]);
#if MT_STREAM
    uint4 raw;
    memcpy(&raw, &x, sizeof(x));
    __stcs(reinterpret_cast<uint4*>(p + i), raw);
#else
    *reinterpret_cast<VecT*>(p + i) = x;
#endif
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) if (i + j < n) p[i + j] = convert<DST_T>(r[j]);
  }
}

// The chunk of this block: tensor t, element range [begin, end) of that tensor.
// Note [Shared chunk prologue]: thread 0 alone finds the tensor (a binary search of dependent loads
// from the parameter bank) and the others read it from shared memory. With one 16-byte vector per
// thread and list (MT_CHUNK = MT_BLOCK * VEC * MT_ILP) a block's prologue is a large part of its
// life, and every thread repeating it cost more than the barrier does (optim_ops.py, Note
// [Multi-tensor tuning]).
__device__ __forceinline__ void mt_chunk_of_block(const MTArgs& a, int& t, i64& begin, i64& end) {
  t = mt_find_tensor(a, blockIdx.x);
  begin = (i64)(blockIdx.x - a.chunk_start[t]) * MT_CHUNK;
  const i64 numel = a.numel[t];
  end = begin + MT_CHUNK < numel ? begin + MT_CHUNK : numel;
}

// Declares the shared chunk (thread 0 fills it, then the block's barrier).
#define MT_SHARED_CHUNK __shared__ int mt_t; __shared__ i64 mt_begin, mt_end;
// Reads it into t, begin, end (after the barrier).
#define MT_CHUNK_LOCALS                                                      \
  const int t = mt_t;                                                        \
  const i64 begin = mt_begin, end = mt_end;                                  \
  const bool aligned = (a.flags & MT_ALIGNED) != 0;
#define MT_CHUNK_PROLOGUE                                                    \
  MT_SHARED_CHUNK                                                            \
  if (threadIdx.x == 0) mt_chunk_of_block(a, mt_t, mt_begin, mt_end);        \
  __syncthreads();                                                           \
  MT_CHUNK_LOCALS

// ---------------------------------------------------------------------------------- fused Adam(W)
// Note [Plain Adam kernel]: GENERIC = false compiles out amsgrad and the grad scale (their loads,
// stores and registers): the common step then fits more threads per SM. fused_adam takes every flag.
template <bool GENERIC>
__device__ __forceinline__ void adam_chunk(const MTArgs& a) {
  if (a.found_inf && *reinterpret_cast<const float*>(a.found_inf) == 1.f) return;
  MT_SHARED_CHUNK
  __shared__ ACC_T mt_step_size, mt_bc2_sqrt;
  if (threadIdx.x == 0) {  // Note [Shared chunk prologue], with the bias corrections of the tensor's step
    mt_chunk_of_block(a, mt_t, mt_begin, mt_end);
    const double step = (double)*reinterpret_cast<const float*>(a.step[mt_t]);
    mt_step_size = (ACC_T)(a.lr / (1.0 - pow(a.beta1, step)));
    mt_bc2_sqrt = (ACC_T)sqrt(1.0 - pow(a.beta2, step));
  }
  __syncthreads();
  MT_CHUNK_LOCALS
  DST_T* P = reinterpret_cast<DST_T*>(a.ptr[0][t]);
  DST_T* G = reinterpret_cast<DST_T*>(a.ptr[1][t]);
  DST_T* M = reinterpret_cast<DST_T*>(a.ptr[2][t]);
  DST_T* V = reinterpret_cast<DST_T*>(a.ptr[3][t]);
  DST_T* VM = reinterpret_cast<DST_T*>(a.ptr[4][t]);
  const ACC_T step_size = mt_step_size;
  const ACC_T bc2_sqrt = mt_bc2_sqrt;
  const bool scaled = GENERIC && a.grad_scale != 0;
  const ACC_T scale = scaled ? (ACC_T)*reinterpret_cast<const float*>(a.grad_scale) : (ACC_T)1;
  const bool amsgrad = GENERIC && (a.flags & MT_AMSGRAD) != 0, maximize = (a.flags & MT_MAXIMIZE) != 0;
  const bool adamw = (a.flags & MT_ADAMW) != 0;
  const ACC_T beta1 = (ACC_T)a.beta1, beta2 = (ACC_T)a.beta2, eps = (ACC_T)a.eps;
  const ACC_T wd = (ACC_T)a.weight_decay, lr_wd = (ACC_T)(a.lr * a.weight_decay);
  const ACC_T one_m_b1 = (ACC_T)(1.0 - a.beta1), one_m_b2 = (ACC_T)(1.0 - a.beta2);
  for (i64 i0 = begin + (i64)threadIdx.x * VEC; i0 < end; i0 += (i64)blockDim.x * VEC * MT_ILP) {
    ACC_T p[MT_ILP][VEC], g[MT_ILP][VEC], m[MT_ILP][VEC], v[MT_ILP][VEC], vm[MT_ILP][VEC];
#pragma unroll
    for (int u = 0; u < MT_ILP; ++u) {
      const i64 i = i0 + (i64)u * blockDim.x * VEC;
      if (i < end) {
        mt_load(p[u], P, i, end, aligned);
        mt_load(g[u], G, i, end, aligned);
        mt_load(m[u], M, i, end, aligned);
        mt_load(v[u], V, i, end, aligned);
        if (amsgrad) mt_load(vm[u], VM, i, end, aligned);
      }
    }
#pragma unroll
    for (int u = 0; u < MT_ILP; ++u) {
      const i64 i = i0 + (i64)u * blockDim.x * VEC;
      if (i >= end) continue;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        ACC_T gr = scaled ? g[u][j] / scale : g[u][j];
        g[u][j] = gr;
        if (maximize) gr = -gr;
        ACC_T pr = p[u][j];
        if (adamw) pr -= lr_wd * pr;
        else if (wd != (ACC_T)0) gr += pr * wd;
        const ACC_T mr = beta1 * m[u][j] + one_m_b1 * gr;
        const ACC_T vr = beta2 * v[u][j] + one_m_b2 * gr * gr;
        ACC_T denom;
        if (amsgrad) {
          const ACC_T mx = vm[u][j] > vr || vm[u][j] != vm[u][j] ? vm[u][j] : vr;
          vm[u][j] = mx;
          denom = sqrt(mx) / bc2_sqrt + eps;
        } else {
          denom = sqrt(vr) / bc2_sqrt + eps;
        }
        p[u][j] = pr - step_size * mr / denom;
        m[u][j] = mr;
        v[u][j] = vr;
      }
      mt_store(P, p[u], i, end, aligned);
      mt_store(M, m[u], i, end, aligned);
      mt_store(V, v[u], i, end, aligned);
      if (amsgrad) mt_store(VM, vm[u], i, end, aligned);
      if (scaled) mt_store(G, g[u], i, end, aligned);
    }
  }
}

extern "C" __global__ void __launch_bounds__(MT_BLOCK, MT_MIN_BLOCKS) fused_adam(const MTArgs a) {
  adam_chunk<true>(a);
}

extern "C" __global__ void __launch_bounds__(MT_BLOCK, MT_MIN_BLOCKS) fused_adam_plain(const MTArgs a) {
  adam_chunk<false>(a);
}

// ---------------------------------------------------------------------------------- fused SGD
extern "C" __global__ void __launch_bounds__(MT_BLOCK, MT_MIN_BLOCKS) fused_sgd(const MTArgs a) {
  if (a.found_inf && *reinterpret_cast<const float*>(a.found_inf) == 1.f) return;
  MT_CHUNK_PROLOGUE
  DST_T* P = reinterpret_cast<DST_T*>(a.ptr[0][t]);
  DST_T* G = reinterpret_cast<DST_T*>(a.ptr[1][t]);
  DST_T* B = reinterpret_cast<DST_T*>(a.ptr[2][t]);
  const bool scaled = a.grad_scale != 0;
  const ACC_T scale = scaled ? (ACC_T)*reinterpret_cast<const float*>(a.grad_scale) : (ACC_T)1;
  const bool maximize = (a.flags & MT_MAXIMIZE) != 0, nesterov = (a.flags & MT_NESTEROV) != 0;
  const bool first = (a.flags & MT_FIRST_STEP) != 0;
  const bool use_buf = a.momentum != 0.0;
  const ACC_T wd = (ACC_T)a.weight_decay, mom = (ACC_T)a.momentum, lr = (ACC_T)a.lr;
  const ACC_T one_m_damp = (ACC_T)(1.0 - a.dampening);
  for (i64 i = begin + (i64)threadIdx.x * VEC; i < end; i += (i64)blockDim.x * VEC) {
    ACC_T p[VEC], g[VEC], b[VEC];
    mt_load(p, P, i, end, aligned);
    mt_load(g, G, i, end, aligned);
    if (use_buf && !first) mt_load(b, B, i, end, aligned);
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      ACC_T gr = scaled ? g[j] / scale : g[j];
      g[j] = gr;
      if (maximize) gr = -gr;
      if (wd != (ACC_T)0) gr += wd * p[j];
      if (use_buf) {
        b[j] = first ? gr : mom * b[j] + one_m_damp * gr;
        gr = nesterov ? gr + mom * b[j] : b[j];
      }
      p[j] -= lr * gr;
    }
    mt_store(P, p, i, end, aligned);
    if (use_buf) mt_store(B, b, i, end, aligned);
    if (scaled) mt_store(G, g, i, end, aligned);
  }
}

// ---------------------------------------------------------------------------------- foreach ops
// list 0 = output (self for in-place ops), lists 1..3 = inputs self, b, c.
#define FE_ADD_SCALAR 0
#define FE_ADD_LIST 1
#define FE_MUL_SCALAR 2
#define FE_DIV_SCALAR 3
#define FE_MAXIMUM 4
#define FE_LERP 5
#define FE_ADDCMUL 6
#define FE_ADDCDIV 7
#define FE_SQRT 8
#define FE_NEG 9
#define FE_ZERO 10

__device__ __forceinline__ int fe_inputs(int op) {
  switch (op) {
    case FE_ADD_LIST: case FE_MAXIMUM: case FE_LERP: return 2;
    case FE_ADDCMUL: case FE_ADDCDIV: return 3;
    case FE_ZERO: return 0;
    default: return 1;
  }
}

extern "C" __global__ void __launch_bounds__(MT_BLOCK, MT_MIN_BLOCKS) foreach_apply(const MTArgs a) {
  MT_CHUNK_PROLOGUE
  const int op = a.op;
  const int nin = fe_inputs(op);
  DST_T* OUT = reinterpret_cast<DST_T*>(a.ptr[0][t]);
  const DST_T* X = reinterpret_cast<const DST_T*>(a.ptr[1][t]);
  const DST_T* Y = reinterpret_cast<const DST_T*>(a.ptr[2][t]);
  const DST_T* Z = reinterpret_cast<const DST_T*>(a.ptr[3][t]);
  const ACC_T s = (ACC_T)a.scalar[t];
  const ACC_T alpha = (ACC_T)a.alpha;
  for (i64 i = begin + (i64)threadIdx.x * VEC; i < end; i += (i64)blockDim.x * VEC) {
    ACC_T x[VEC], y[VEC], z[VEC], r[VEC];
    if (nin >= 1) mt_load(x, X, i, end, aligned);
    if (nin >= 2) mt_load(y, Y, i, end, aligned);
    if (nin >= 3) mt_load(z, Z, i, end, aligned);
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      switch (op) {
        case FE_ADD_SCALAR: r[j] = x[j] + s; break;
        case FE_ADD_LIST: r[j] = x[j] + alpha * y[j]; break;
        case FE_MUL_SCALAR: r[j] = x[j] * s; break;
        case FE_DIV_SCALAR: r[j] = x[j] / s; break;
        case FE_MAXIMUM: r[j] = (x[j] != x[j] || x[j] > y[j]) ? x[j] : y[j]; break;
        case FE_LERP: {
          const ACC_T d = y[j] - x[j];
          r[j] = (s < (ACC_T)0.5) ? x[j] + s * d : y[j] - d * ((ACC_T)1 - s);
          break;
        }
        case FE_ADDCMUL: r[j] = x[j] + s * y[j] * z[j]; break;
        case FE_ADDCDIV: r[j] = x[j] + s * (y[j] / z[j]); break;
        case FE_SQRT: r[j] = sqrt(x[j]); break;
        case FE_NEG: r[j] = -x[j]; break;
        default: r[j] = (ACC_T)0; break;
      }
    }
    mt_store(OUT, r, i, end, aligned);
  }
}
