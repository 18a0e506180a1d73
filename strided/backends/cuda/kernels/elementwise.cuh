// Scalar functions used by the pointwise expressions of elementwise.cu (after common.cuh).
// Floating functions come in float and double overloads (half types compute in float: opmath);
// integer helpers are templates.  Semantics follow torch's CUDA kernels (c10/util/generic_math.h,
// ATen/native/cuda/*): see strided/backends/cuda/kernels/pointwise_ops.py for the op table.
#pragma once

#define EW_F1(name, ffn, dfn)                                                        \
  __device__ __forceinline__ float name(float x) { return ffn(x); }                  \
  __device__ __forceinline__ double name(double x) { return dfn(x); }
EW_F1(ew_exp, expf, exp)
EW_F1(ew_log, logf, log)
EW_F1(ew_log1p, log1pf, log1p)
EW_F1(ew_expm1, expm1f, expm1)
EW_F1(ew_sqrt, sqrtf, sqrt)
EW_F1(ew_sin, sinf, sin)
EW_F1(ew_cos, cosf, cos)
EW_F1(ew_tanh, tanhf, tanh)
EW_F1(ew_floor, floorf, floor)
EW_F1(ew_ceil, ceilf, ceil)
EW_F1(ew_rint, rintf, rint)
EW_F1(ew_trunc, truncf, trunc)
EW_F1(ew_fabs, fabsf, fabs)
EW_F1(ew_erfc, erfcf, erfc)
EW_F1(ew_tan, tanf, tan)
EW_F1(ew_asin, asinf, asin)
EW_F1(ew_acos, acosf, acos)
EW_F1(ew_atan, atanf, atan)
EW_F1(ew_sinh, sinhf, sinh)
EW_F1(ew_cosh, coshf, cosh)
EW_F1(ew_asinh, asinhf, asinh)
EW_F1(ew_acosh, acoshf, acosh)
EW_F1(ew_atanh, atanhf, atanh)
EW_F1(ew_erf, erff, erf)
EW_F1(ew_erfinv, erfinvf, erfinv)
EW_F1(ew_log2, log2f, log2)
EW_F1(ew_log10, log10f, log10)
EW_F1(ew_exp2, exp2f, exp2)
#undef EW_F1

__device__ __forceinline__ float ew_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double ew_pow(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float ew_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double ew_fmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ bool ew_isinf(float x) { return isinf(x); }
__device__ __forceinline__ bool ew_isinf(double x) { return isinf(x); }
__device__ __forceinline__ bool ew_isfinite(float x) { return isfinite(x); }
__device__ __forceinline__ bool ew_isfinite(double x) { return isfinite(x); }

template <class T> __device__ __forceinline__ bool ew_isnan(T x) { return x != x; }

// Binary math functions (strided/backends/cuda/kernels/binary_math_ops.py).
#define EW_F2(name, ffn, dfn)                                                                  \
  __device__ __forceinline__ float name(float a, float b) { return ffn(a, b); }                \
  __device__ __forceinline__ double name(double a, double b) { return dfn(a, b); }
EW_F2(ew_atan2, atan2f, atan2)
EW_F2(ew_hypot, hypotf, hypot)
EW_F2(ew_copysign, copysignf, copysign)
#undef EW_F2
template <class T> __device__ __forceinline__ T ew_logaddexp(T a, T b) {
  T m = a > b ? a : b;
  if (isinf(m) && a == b) return a;  // both +inf or both -inf: no inf - inf
  return m + log1p(exp(-fabs(a - b)));
}
template <class T> __device__ __forceinline__ T ew_logaddexp2(T a, T b) {
  T m = a > b ? a : b;
  if (isinf(m) && a == b) return a;
  return m + log1p(exp2(-fabs(a - b))) / T(0.6931471805599453);
}
template <class T> __device__ __forceinline__ T ew_xlogy(T x, T y) {
  if (y != y) return y;  // NaN
  return x == T(0) ? T(0) : x * log(y);
}
// fmax / fmin: a NaN loses to a number (NumPy's fmax; torch's), integers compare plainly.
template <class T> __device__ __forceinline__ T ew_fmax(T a, T b) {
  return a != a ? b : (b != b ? a : (a > b ? a : b));
}
template <class T> __device__ __forceinline__ T ew_fmin(T a, T b) {
  return a != a ? b : (b != b ? a : (a < b ? a : b));
}

// Shifts with torch's rule for counts outside [0, width): << gives 0, >> the sign fill
// (Note [Shift counts] in strided/backends/cpu/bitwise.py). Narrow types compute in their opmath
// type; the store truncates, which gives the same bits.
template <class T> __device__ __forceinline__ T ew_lshift(T a, T b) {
  if (b < 0 || b >= (T)(sizeof(T) * 8)) return T(0);
  return (T)((unsigned long long)a << b);
}
template <class T> __device__ __forceinline__ T ew_rshift(T a, T b) {
  if (b < 0 || b >= (T)(sizeof(T) * 8)) return a < 0 ? T(-1) : T(0);
  return a >> b;
}

// maximum / minimum: NaN propagates (torch and NumPy); integers compare plainly.
template <class T> __device__ __forceinline__ T ew_max(T a, T b) {
  return ew_isnan(a) ? a : (ew_isnan(b) ? b : (a > b ? a : b));
}
template <class T> __device__ __forceinline__ T ew_min(T a, T b) {
  return ew_isnan(a) ? a : (ew_isnan(b) ? b : (a < b ? a : b));
}

// c10::div_floor_floating: IEEE result for b == 0, otherwise Python's floor division.
template <class T> __device__ __forceinline__ T ew_div_floor_f(T a, T b) {
  if (b == T(0)) return a / b;
  T mod = ew_fmod(a, b);
  T div = (a - mod) / b;
  if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);
  T fl;
  if (div != T(0)) {
    fl = ew_floor(div);
    if (div - fl > T(0.5)) fl += T(1);
  } else {
    fl = copysign(T(0), a / b);
  }
  return fl;
}

// c10::div_floor_integer (b == 0 is not checked on CUDA, as in torch).
template <class T> __device__ __forceinline__ T ew_div_floor_i(T a, T b) {
  if ((a < T(0)) != (b < T(0))) {
    T q = a / b;
    T r = a % b;
    return r ? T(q - T(1)) : q;
  }
  return a / b;
}

// Python-style remainder: the sign of the divisor.
template <class T> __device__ __forceinline__ T ew_rem_f(T a, T b) {
  T m = ew_fmod(a, b);
  if (m != T(0) && ((b < T(0)) != (m < T(0)))) m += b;
  return m;
}
template <class T> __device__ __forceinline__ T ew_rem_i(T a, T b) {
  T r = a % b;
  if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
  return r;
}

// Integer power with torch's rule for negative exponents (1, (-1)**b or 0).
template <class T> __device__ __forceinline__ T ew_powi(T a, T b) {
  if (b < T(0)) {
    if (a == T(1)) return T(1);
    if (a == T(-1)) return (b & T(1)) ? T(-1) : T(1);
    return T(0);
  }
  T r = T(1);
  while (b) {
    if (b & T(1)) r = T(r * a);
    b = T(b / T(2));
    a = T(a * a);
  }
  return r;
}

// torch's lerp: exact at weight 0 and 1, monotone.
template <class T> __device__ __forceinline__ T ew_lerp(T a, T e, T w) {
  T d = e - a;
  return (ew_fabs(w) < T(0.5)) ? a + w * d : e - d * (T(1) - w);
}

template <class T> __device__ __forceinline__ T ew_sign(T x) { return T((x > T(0)) - (x < T(0))); }

template <class T> __device__ __forceinline__ T ew_sigmoid(T x) { return T(1) / (T(1) + ew_exp(-x)); }

template <class T> __device__ __forceinline__ T ew_gelu(T x) {  // x * Phi(x), no cancellation
  return T(0.5) * x * ew_erfc(-x * T(0.70710678118654752440));
}
template <class T> __device__ __forceinline__ T ew_gelu_tanh(T x) {
  T inner = T(0.79788456080286535588) * (x + T(0.044715) * (x * x * x));
  return T(0.5) * x * (T(1) + ew_tanh(inner));
}

// gelu_backward: g * d gelu(x) / dx (torch's formulas).
template <class T> __device__ __forceinline__ T ew_gelu_bwd(T g, T x) {
  const T cdf = T(0.5) * ew_erfc(-x * T(0.70710678118654752440));
  const T pdf = ew_exp(T(-0.5) * x * x) * T(0.39894228040143267794);
  return g * (cdf + x * pdf);
}
template <class T> __device__ __forceinline__ T ew_gelu_tanh_bwd(T g, T x) {
  const T k = T(0.79788456080286535588), c = T(0.044715);
  const T x2 = x * x;
  const T t = ew_tanh(k * (x + c * x2 * x));
  return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3) * c * x2));
}

template <class T> __device__ __forceinline__ T ew_softplus(T x, T beta, T threshold) {
  T z = x * beta;
  return z > threshold ? x : ew_log1p(ew_exp(z)) / beta;
}
