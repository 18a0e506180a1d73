// softmax / log_softmax along one dim (LOG selects).  IN_T, CAST_T, CAST_SAME, ACC_T, OUT_T, LOG
// are #defined per instantiation; Note [online softmax] in reduce_ops.cuh gives the NaN rules.
struct SmParams {
  const IN_T* in;
  OUT_T* out;
  i64 lines;                 // rows (every index but dim)
  i64 D;                     // size of dim
  i64 group;                 // inner: threads per row (32 or blockDim)
  i64 in_dstride;
  i64 out_dstride;
  i64 kept_ndim;
  i64 kept_sizes[STRIDED_MAX_DIMS];
  i64 in_strides[STRIDED_MAX_DIMS];
  i64 out_strides[STRIDED_MAX_DIMS];
};

__device__ __forceinline__ ACC_T sm_load(IN_T v) {
#if CAST_SAME
  return convert<ACC_T>(v);
#else
  return convert<ACC_T>(convert<CAST_T>(v));
#endif
}

__device__ __forceinline__ OUT_T sm_value(ACC_T x, ACC_T m, ACC_T k, bool bad) {
  if (bad) return convert<OUT_T>(ACC_T(0) / ACC_T(0));
#if LOG
  return convert<OUT_T>((x - m) - k);   // k = log(sum)
#else
  return convert<OUT_T>(exp(x - m) * k);  // k = 1 / sum
#endif
}

#define SM_VEC (16 / (int)sizeof(IN_T))
struct __align__(16) SmVec { IN_T x[SM_VEC]; };

// The softmax dim is contiguous in the input and the output: p.group threads per row, a pass of
// 16-byte loads for (max, sum), then a pass that writes (the second read mostly hits L2).
extern "C" __global__ void __launch_bounds__(512) softmax_inner(const SmParams p) {
  const int G = (int)p.group, lane = threadIdx.x % G;
  const i64 per_block = blockDim.x / G;
  for (i64 line = blockIdx.x * per_block + threadIdx.x / G; line - threadIdx.x / G < p.lines;
       line += (i64)gridDim.x * per_block) {
    const bool ok = line < p.lines;
    MaxSum<ACC_T> st = ms_ident<ACC_T>();
    const IN_T* ip = p.in;
    OUT_T* op = p.out;
    i64 head = 0, nv = 0;
    if (ok) {
      ip += offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.in_strides);
      op += offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.out_strides);
      head = min((i64)((16 - ((unsigned long long)ip & 15)) & 15) / (i64)sizeof(IN_T), p.D);
      nv = (p.D - head) / SM_VEC;
      for (i64 e = lane; e < head; e += G) st = ms_upd(st, sm_load(ip[e]));
      const SmVec* vp = reinterpret_cast<const SmVec*>(ip + head);
      i64 v = lane;
      for (; v + G < nv; v += 2 * G) {
        SmVec a = vp[v], b = vp[v + G];
#pragma unroll
        for (int k = 0; k < SM_VEC; ++k) st = ms_upd(st, sm_load(a.x[k]));
#pragma unroll
        for (int k = 0; k < SM_VEC; ++k) st = ms_upd(st, sm_load(b.x[k]));
      }
      for (; v < nv; v += G) {
        SmVec a = vp[v];
#pragma unroll
        for (int k = 0; k < SM_VEC; ++k) st = ms_upd(st, sm_load(a.x[k]));
      }
      for (i64 e = head + nv * SM_VEC + lane; e < p.D; e += G) st = ms_upd(st, sm_load(ip[e]));
    }
    st = group_reduce(st, G, MsComb<ACC_T>());
    if (ok) {
      const bool bad = isnan_(st.m) || st.m == Lim<ACC_T>::lo() || st.m == Lim<ACC_T>::hi();
#if LOG
      const ACC_T k = log(st.s);
#else
      const ACC_T k = ACC_T(1) / st.s;
#endif
      for (i64 e = lane; e < head; e += G) op[e] = sm_value(sm_load(ip[e]), st.m, k, bad);
      const SmVec* vp = reinterpret_cast<const SmVec*>(ip + head);
      for (i64 v = lane; v < nv; v += G) {
        SmVec a = vp[v];
        OUT_T* o = op + head + v * SM_VEC;
#pragma unroll
        for (int q = 0; q < SM_VEC; ++q) o[q] = sm_value(sm_load(a.x[q]), st.m, k, bad);
      }
      for (i64 e = head + nv * SM_VEC + lane; e < p.D; e += G) op[e] = sm_value(sm_load(ip[e]), st.m, k, bad);
    }
  }
}

// Any other layout: one thread per row, walking dim twice (rows adjacent in memory for the
// common case of a contiguous tensor and an outer dim, so loads coalesce).
extern "C" __global__ void softmax_outer(const SmParams p) {
  for (i64 line = (i64)blockIdx.x * blockDim.x + threadIdx.x; line < p.lines; line += (i64)gridDim.x * blockDim.x) {
    const IN_T* ip = p.in + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.in_strides);
    OUT_T* op = p.out + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.out_strides);
    MaxSum<ACC_T> st = ms_ident<ACC_T>();
    for (i64 e = 0; e < p.D; ++e) st = ms_upd(st, sm_load(ip[e * p.in_dstride]));
    const bool bad = isnan_(st.m) || st.m == Lim<ACC_T>::lo() || st.m == Lim<ACC_T>::hi();
#if LOG
    const ACC_T k = log(st.s);
#else
    const ACC_T k = ACC_T(1) / st.s;
#endif
    for (i64 e = 0; e < p.D; ++e) op[e * p.out_dstride] = sm_value(sm_load(ip[e * p.in_dstride]), st.m, k, bad);
  }
}

// Rows of at most p.group * SM_VEC * SM_REGV elements, 16-byte aligned and a whole number of
// vectors long: each thread keeps its part of the row in registers, so the row is read once
// (max, then exp(x - max) kept in place and summed, then the write), as torch's register-cached
// softmax. The output is written with 16-byte stores when its elements are the input's size
// (the host checked its alignment). SM_REGV is #defined by the host (normalization.py).
template <class A> struct MaxNanComb {
  __device__ A operator()(A a, A b) const { return isnan_(a) ? a : ((isnan_(b) || b > a) ? b : a); }
};
struct __align__(16) SmOutVec { OUT_T x[SM_VEC]; };

extern "C" __global__ void __launch_bounds__(512) softmax_reg(const SmParams p) {
  const int G = (int)p.group, lane = threadIdx.x % G;
  const i64 per_block = blockDim.x / G;
  const i64 nv = p.D / SM_VEC;
  for (i64 line = blockIdx.x * per_block + threadIdx.x / G; line - threadIdx.x / G < p.lines;
       line += (i64)gridDim.x * per_block) {
    const bool ok = line < p.lines;
    ACC_T v[SM_REGV][SM_VEC];
    ACC_T m = Lim<ACC_T>::lo();
    const SmVec* vp = reinterpret_cast<const SmVec*>(p.in);
    OUT_T* op = p.out;
    if (ok) {
      vp = reinterpret_cast<const SmVec*>(p.in + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.in_strides));
      op += offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.out_strides);
#pragma unroll
      for (int j = 0; j < SM_REGV; ++j) {
        const i64 vi = lane + (i64)j * G;
        if (vi < nv) {
          SmVec a = vp[vi];
#pragma unroll
          for (int k = 0; k < SM_VEC; ++k) {
            v[j][k] = sm_load(a.x[k]);
            m = MaxNanComb<ACC_T>()(m, v[j][k]);
          }
        }
      }
    }
    m = group_reduce(m, G, MaxNanComb<ACC_T>());
    const bool bad = isnan_(m) || m == Lim<ACC_T>::lo() || m == Lim<ACC_T>::hi();
    ACC_T s = ACC_T(0);
    if (ok && !bad) {
#pragma unroll
      for (int j = 0; j < SM_REGV; ++j)
        if (lane + (i64)j * G < nv)
#pragma unroll
          for (int k = 0; k < SM_VEC; ++k) {
#if LOG
            v[j][k] -= m;
            s += exp(v[j][k]);
#else
            v[j][k] = exp(v[j][k] - m);
            s += v[j][k];
#endif
          }
    }
    s = group_reduce(s, G, SumComb<ACC_T>());
    if (ok) {
#if LOG
      const ACC_T k = log(s);
#else
      const ACC_T k = ACC_T(1) / s;
#endif
#pragma unroll
      for (int j = 0; j < SM_REGV; ++j) {
        const i64 vi = lane + (i64)j * G;
        if (vi < nv) {
          SmOutVec w;
#pragma unroll
          for (int q = 0; q < SM_VEC; ++q) {
            if (bad) w.x[q] = convert<OUT_T>(ACC_T(0) / ACC_T(0));
#if LOG
            else w.x[q] = convert<OUT_T>(v[j][q] - k);  // v = x - max
#else
            else w.x[q] = convert<OUT_T>(v[j][q] * k);  // v = exp(x - max)
#endif
          }
          OUT_T* o = op + vi * SM_VEC;
          if constexpr (sizeof(OUT_T) == sizeof(IN_T)) {
            *reinterpret_cast<SmOutVec*>(o) = w;
          } else {
#pragma unroll
            for (int q = 0; q < SM_VEC; ++q) o[q] = w.x[q];
          }
        }
      }
    }
  }
}

// Rows up to the block's shared-memory budget, 16-byte aligned and a whole number of vectors
// long: the row is read once from global memory into dynamic shared memory (each thread reads
// back only the vectors it stored, so no barrier is needed between passes), then max, sum of
// exp and the write run from shared memory. As torch's cunn_SoftMaxForwardSmem: few registers,
// so two 1024-thread blocks (two rows) are resident per SM, where a register-cached row of the
// same length allows only one 512-thread block.
extern "C" __global__ void __launch_bounds__(1024, 2) softmax_smem(const SmParams p) {
  extern __shared__ __align__(16) unsigned char sm_raw[];
  SmVec* cache = reinterpret_cast<SmVec*>(sm_raw);
  const i64 nv = p.D / SM_VEC;
  for (i64 line = blockIdx.x; line < p.lines; line += gridDim.x) {
    const SmVec* vp = reinterpret_cast<const SmVec*>(
        p.in + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.in_strides));
    OUT_T* op = p.out + offset_of(line, (int)p.kept_ndim, p.kept_sizes, p.out_strides);
    ACC_T m = Lim<ACC_T>::lo();
    const i64 B = blockDim.x;
    i64 v = threadIdx.x;
    for (; v + 3 * B < nv; v += 4 * B) {  // four loads in flight per thread
      SmVec a[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) a[u] = vp[v + u * B];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        cache[v + u * B] = a[u];
#pragma unroll
        for (int k = 0; k < SM_VEC; ++k) m = MaxNanComb<ACC_T>()(m, sm_load(a[u].x[k]));
      }
    }
    for (; v < nv; v += B) {
      const SmVec a = vp[v];
      cache[v] = a;
#pragma unroll
      for (int k = 0; k < SM_VEC; ++k) m = MaxNanComb<ACC_T>()(m, sm_load(a.x[k]));
    }
    m = group_reduce(m, (int)blockDim.x, MaxNanComb<ACC_T>());
    const bool bad = isnan_(m) || m == Lim<ACC_T>::lo() || m == Lim<ACC_T>::hi();
    ACC_T s = ACC_T(0);
    // float softmax keeps exp(x - max) in place of x, so the write pass does not compute it again
    constexpr bool keep_exp = !LOG && CAST_SAME && sizeof(IN_T) == sizeof(ACC_T);
    if (!bad) {
      for (i64 v = threadIdx.x; v < nv; v += blockDim.x) {
        SmVec a = cache[v];
#pragma unroll
        for (int k = 0; k < SM_VEC; ++k) {
          const ACC_T e = exp(sm_load(a.x[k]) - m);
          s += e;
          if constexpr (keep_exp) a.x[k] = convert<IN_T>(e);
        }
        if constexpr (keep_exp) cache[v] = a;
      }
    }
    s = group_reduce(s, (int)blockDim.x, SumComb<ACC_T>());
#if LOG
    const ACC_T k = log(s);
#else
    const ACC_T k = ACC_T(1) / s;
#endif
    for (i64 v = threadIdx.x; v < nv; v += blockDim.x) {
      const SmVec a = cache[v];
      OUT_T* o = op + v * SM_VEC;
      if constexpr (keep_exp) {
        SmOutVec w;
#pragma unroll
        for (int q = 0; q < SM_VEC; ++q) w.x[q] = bad ? convert<OUT_T>(ACC_T(0) / ACC_T(0)) : convert<OUT_T>(sm_load(a.x[q]) * k);
        *reinterpret_cast<SmOutVec*>(o) = w;
      } else if constexpr (sizeof(OUT_T) == sizeof(IN_T)) {  // host checked the output row's alignment
        SmOutVec w;
#pragma unroll
        for (int q = 0; q < SM_VEC; ++q) w.x[q] = sm_value(sm_load(a.x[q]), m, k, bad);
        *reinterpret_cast<SmOutVec*>(o) = w;
      } else {
#pragma unroll
        for (int q = 0; q < SM_VEC; ++q) o[q] = sm_value(sm_load(a.x[q]), m, k, bad);
      }
    }
  }
}
