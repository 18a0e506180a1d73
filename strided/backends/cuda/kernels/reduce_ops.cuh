// Reducers for reduce.cu and helpers shared with softmax.cu / norm.cu / loss.cu.
// A reducer is a State with ident(mode), upd(state, x, index, mode), comb(a, b, mode) and fin(...),
// selected by OP (#defined per instantiation).  comb is associative and its result does not depend
// on which partial comes first where the CPU kernel's answer does not (argmax ties go to the lower
// index; NaN wins).

typedef unsigned char u8_t;
typedef signed char i8_t;

template <class T> struct Lim;
template <> struct Lim<float> {
  __device__ static float lo() { return -__int_as_float(0x7f800000); }
  __device__ static float hi() { return __int_as_float(0x7f800000); }
};
template <> struct Lim<double> {
  __device__ static double lo() { return -__longlong_as_double(0x7ff0000000000000LL); }
  __device__ static double hi() { return __longlong_as_double(0x7ff0000000000000LL); }
};
template <> struct Lim<long long> {
  __device__ static long long lo() { return -9223372036854775807LL - 1; }
  __device__ static long long hi() { return 9223372036854775807LL; }
};
template <> struct Lim<int> {
  __device__ static int lo() { return -2147483647 - 1; }
  __device__ static int hi() { return 2147483647; }
};
template <> struct Lim<short> {
  __device__ static short lo() { return -32768; }
  __device__ static short hi() { return 32767; }
};
template <> struct Lim<signed char> {
  __device__ static signed char lo() { return -128; }
  __device__ static signed char hi() { return 127; }
};
template <> struct Lim<unsigned char> {
  __device__ static unsigned char lo() { return 0; }
  __device__ static unsigned char hi() { return 255; }
};
template <> struct Lim<bool> {
  __device__ static bool lo() { return false; }
  __device__ static bool hi() { return true; }
};

template <class T> __device__ __forceinline__ bool isnan_(T v) { return v != v; }

// Shuffle a POD state as 32-bit words.
template <class S> __device__ __forceinline__ S shfl_xor_state(S s, int m) {
  constexpr int W = (sizeof(S) + 3) / 4;
  union U { S s; unsigned u[W]; } a;
  a.s = s;
#pragma unroll
  for (int k = 0; k < W; ++k) a.u[k] = __shfl_xor_sync(0xffffffffu, a.u[k], m);
  return a.s;
}

template <class S> __device__ __forceinline__ S shfl_up_state(S s, int d) {
  constexpr int W = (sizeof(S) + 3) / 4;
  union U { S s; unsigned u[W]; } a;
  a.s = s;
#pragma unroll
  for (int k = 0; k < W; ++k) a.u[k] = __shfl_up_sync(0xffffffffu, a.u[k], d);
  return a.s;
}

// Combine over groups of G threads (G = 32, or the whole block): every thread gets the result.
// The order is fixed (butterfly in a warp, then warp 0 over the warps' results).
// G threads (a power of two: lanes of one warp when G <= 32, else the whole block) combine s;
// every thread of the group gets the result. All 32 lanes of each warp must call it.
template <class S, class F> __device__ S group_reduce(S s, int G, F f) {
  if (G < 32) {
    for (int m = G >> 1; m > 0; m >>= 1) s = f(s, shfl_xor_state(s, m));
    return s;
  }
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) s = f(s, shfl_xor_state(s, m));
  if (G == 32) return s;
  __shared__ S sh[32];
  __shared__ S res;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  if (lane == 0) sh[warp] = s;
  __syncthreads();
  if (warp == 0) {
    S t = sh[lane < nw ? lane : 0];
    for (int m = 16; m > 0; m >>= 1) {
      S u = shfl_xor_state(t, m);
      if ((lane ^ m) < nw && lane < nw) t = f(t, u);
    }
    if (lane == 0) res = t;
  }
  __syncthreads();
  S r = res;
  __syncthreads();
  return r;
}

// Online (max, sum of exp(x - max)) over the finite elements; m is NaN once a NaN is seen.
// Note [online softmax]: a row whose max is NaN or +-inf gives NaN everywhere (softmax) as the
// CPU kernel's exp(x - max) does; logsumexp maps +-inf maxima to +-inf.
template <class A> struct MaxSum { A m; A s; };
template <class A> __device__ __forceinline__ MaxSum<A> ms_ident() { return {Lim<A>::lo(), A(0)}; }
template <class A> __device__ __forceinline__ MaxSum<A> ms_upd(MaxSum<A> a, A x) {
  if (isnan_(x)) { a.m = x; return a; }
  if (x > a.m) { a.s = a.s * exp(a.m - x) + A(1); a.m = x; }
  else if (x > Lim<A>::lo()) a.s += exp(x - a.m);
  return a;
}
template <class A> __device__ __forceinline__ MaxSum<A> ms_comb(MaxSum<A> a, MaxSum<A> b) {
  if (isnan_(a.m)) return a;
  if (isnan_(b.m)) return b;
  A m = a.m > b.m ? a.m : b.m;
  A sa = a.m == m ? a.s : a.s * exp(a.m - m);
  A sb = b.m == m ? b.s : b.s * exp(b.m - m);
  return {m, sa + sb};
}

// Welford (count, mean, m2), combined with Chan's formula.
template <class A> struct Welford { A mean; A m2; i64 n; };
template <class A> __device__ __forceinline__ Welford<A> wf_upd(Welford<A> a, A x) {
  a.n += 1;
  A d = x - a.mean;
  a.mean += d / A(a.n);
  a.m2 += d * (x - a.mean);
  return a;
}
template <class A> __device__ __forceinline__ Welford<A> wf_comb(Welford<A> a, Welford<A> b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  i64 n = a.n + b.n;
  A d = b.mean - a.mean;
  A fb = A(b.n) / A(n);
  return {a.mean + d * fb, a.m2 + b.m2 + d * d * A(a.n) * fb, n};
}

#ifdef OP
#define OP_SUM 0
#define OP_MEAN 1
#define OP_PROD 2
#define OP_AMAX 3
#define OP_AMIN 4
#define OP_ARGMAX 5
#define OP_ARGMIN 6
#define OP_MAXDIM 7
#define OP_MINDIM 8
#define OP_VAR 9
#define OP_STD 10
#define OP_NORM 11
#define OP_ALL 12
#define OP_ANY 13
#define OP_LSE 14

#if OP == OP_SUM || OP == OP_MEAN || OP == OP_PROD || OP == OP_AMAX || OP == OP_AMIN || OP == OP_NORM || \
    OP == OP_ALL || OP == OP_ANY
struct State { ACC_T v; };
#elif OP == OP_ARGMAX || OP == OP_ARGMIN || OP == OP_MAXDIM || OP == OP_MINDIM
struct State { ACC_T v; i64 i; };
#elif OP == OP_VAR || OP == OP_STD
typedef Welford<ACC_T> State;
#elif OP == OP_LSE
typedef MaxSum<ACC_T> State;
#endif

__device__ __forceinline__ ACC_T absv(ACC_T x) { return x < ACC_T(0) ? -x : x; }
__device__ __forceinline__ ACC_T maxnan(ACC_T a, ACC_T b) {
  return isnan_(a) ? a : (isnan_(b) ? b : (a > b ? a : b));
}
__device__ __forceinline__ ACC_T minnan(ACC_T a, ACC_T b) {
  return isnan_(a) ? a : (isnan_(b) ? b : (a < b ? a : b));
}

// Note [norm modes]: 0 -> p = 0 (count of non-zeros), 1 -> p = 1, 2 -> p = 2, 3 -> inf, 4 -> -inf,
// 5 -> any other p.
__device__ __forceinline__ State ident(int mode) {
#if OP == OP_SUM || OP == OP_MEAN
  return {ACC_T(0)};
#elif OP == OP_PROD
  return {ACC_T(1)};
#elif OP == OP_AMAX
  return {Lim<ACC_T>::lo()};
#elif OP == OP_AMIN
  return {Lim<ACC_T>::hi()};
#elif OP == OP_ARGMAX || OP == OP_ARGMIN || OP == OP_MAXDIM || OP == OP_MINDIM
  return {ACC_T(0), -1};
#elif OP == OP_VAR || OP == OP_STD
  return {ACC_T(0), ACC_T(0), 0};
#elif OP == OP_NORM
  return {mode == 4 ? Lim<ACC_T>::hi() : ACC_T(0)};
#elif OP == OP_ALL
  return {true};
#elif OP == OP_ANY
  return {false};
#elif OP == OP_LSE
  return ms_ident<ACC_T>();
#endif
}

__device__ __forceinline__ State comb(State a, State b, int mode) {
#if OP == OP_SUM || OP == OP_MEAN
  return {ACC_T(a.v + b.v)};
#elif OP == OP_PROD
  return {ACC_T(a.v * b.v)};
#elif OP == OP_AMAX
  return {maxnan(a.v, b.v)};
#elif OP == OP_AMIN
  return {minnan(a.v, b.v)};
#elif OP == OP_ARGMAX || OP == OP_ARGMIN || OP == OP_MAXDIM || OP == OP_MINDIM
  if (a.i < 0) return b;
  if (b.i < 0) return a;
  bool an = isnan_(a.v), bn = isnan_(b.v);
  if (an || bn) return (an && bn) ? (a.i < b.i ? a : b) : (an ? a : b);
#if OP == OP_ARGMAX || OP == OP_MAXDIM
  if (b.v > a.v) return b;
  if (a.v > b.v) return a;
#else
  if (b.v < a.v) return b;
  if (a.v < b.v) return a;
#endif
  return a.i < b.i ? a : b;
#elif OP == OP_VAR || OP == OP_STD
  return wf_comb(a, b);
#elif OP == OP_NORM
  if (mode == 3) return {maxnan(a.v, b.v)};
  if (mode == 4) return {minnan(a.v, b.v)};
  return {a.v + b.v};
#elif OP == OP_ALL
  return {a.v && b.v};
#elif OP == OP_ANY
  return {a.v || b.v};
#elif OP == OP_LSE
  return ms_comb(a, b);
#endif
}

__device__ __forceinline__ State upd(State a, ACC_T x, i64 i, int mode, ACC_T parg) {
#if OP == OP_ARGMAX || OP == OP_ARGMIN || OP == OP_MAXDIM || OP == OP_MINDIM
  State b = {x, i};
  return comb(a, b, mode);
#elif OP == OP_VAR || OP == OP_STD
  return wf_upd(a, x);
#elif OP == OP_NORM
  ACC_T ax = absv(x);
  switch (mode) {
    case 0: return {a.v + (ax != ACC_T(0) ? ACC_T(1) : ACC_T(0))};
    case 1: return {a.v + ax};
    case 2: return {a.v + ax * ax};
    case 3: return {maxnan(a.v, ax)};
    case 4: return {minnan(a.v, ax)};
    default: return {a.v + (ACC_T)pow(ax, parg)};
  }
#elif OP == OP_LSE
  return ms_upd(a, x);
#else
  State b = {x};
  return comb(a, b, mode);
#endif
}

__device__ __forceinline__ void fin(OUT_T* out, i64* out_idx, i64 o, State s, i64 R, double arg, int mode) {
#if OP == OP_SUM || OP == OP_PROD || OP == OP_AMAX || OP == OP_AMIN || OP == OP_ALL || OP == OP_ANY
  out[o] = convert<OUT_T>(s.v);
#elif OP == OP_MEAN
  out[o] = convert<OUT_T>(s.v / ACC_T(R));
#elif OP == OP_ARGMAX || OP == OP_ARGMIN
  out[o] = s.i < 0 ? 0 : s.i;
#elif OP == OP_MAXDIM || OP == OP_MINDIM
  out[o] = convert<OUT_T>(s.v);
  out_idx[o] = s.i < 0 ? 0 : s.i;
#elif OP == OP_VAR || OP == OP_STD
  double dof = (double)R - arg;
  ACC_T v = s.m2 / ACC_T(dof > 0.0 ? dof : 0.0);
#if OP == OP_STD
  v = sqrt(v);
#endif
  out[o] = convert<OUT_T>(v);
#elif OP == OP_NORM
  ACC_T v = s.v;
  if (mode == 2) v = sqrt(v);
  else if (mode == 5) v = (ACC_T)pow(v, ACC_T(1.0 / arg));
  out[o] = convert<OUT_T>(v);
#elif OP == OP_LSE
  ACC_T v;
  if (isnan_(s.m) || s.m == Lim<ACC_T>::lo() || s.m == Lim<ACC_T>::hi()) v = s.m;
  else v = log(s.s) + s.m;
  out[o] = convert<OUT_T>(v);
#endif
}
#endif  // OP

template <class A> struct MsComb {
  __device__ MaxSum<A> operator()(MaxSum<A> a, MaxSum<A> b) const { return ms_comb(a, b); }
};
template <class A> struct WfComb {
  __device__ Welford<A> operator()(Welford<A> a, Welford<A> b) const { return wf_comb(a, b); }
};
template <class A> struct SumComb {
  __device__ A operator()(A a, A b) const { return a + b; }
};
