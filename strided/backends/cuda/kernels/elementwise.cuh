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
EW_F1(ew_lgamma, lgammaf, lgamma)
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

// ---------------------------------------------------------------------------- gamma family
// digamma, trigamma and polygamma: the CPU backend's algorithms (Note [digamma and polygamma] in
// strided/backends/cpu/gamma_functions.py). digamma is torch's calc_digamma; trigamma shifts to
// x >= 10 and keeps eight series terms; polygamma(n >= 2) is (-1)^(n+1) n! zeta(n + 1, x) with
// Cephes' Hurwitz zeta, computed in double for every dtype (in float, zeta(n + 1, x) underflows
// for large n long before the result does).
__device__ __forceinline__ float ew_inf(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double ew_inf(double) { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ float ew_qnan(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double ew_qnan(double) { return __longlong_as_double(0x7ff8000000000000LL); }

template <class T> __device__ T ew_digamma_t(T x) {
  if (x == T(0)) return copysign(ew_inf(x), -x);  // +-0 -> -+inf
  T result = T(0);
  if (x < T(0)) {
    if (x == ew_trunc(x)) return ew_qnan(x);  // negative integers and -inf
    const double r = static_cast<double>(x) - rint(static_cast<double>(x));  // exact; tan(pi r) is accurate
    result = static_cast<T>(-3.14159265358979323846 / tan(3.14159265358979323846 * r));
    x = T(1) - x;
  }
  while (x < T(10)) {
    result -= T(1) / x;
    x += T(1);
  }
  if (x == T(10)) return result + T(2.25175258906672110764);  // psi(10)
  T tail = T(0);
  if (x < T(1.0e17)) {
    const T z = T(1) / (x * x);  // sum_k B_2k / (2k) z^k, k = 7 .. 1
    T p = T(1.0 / 12);
    p = p * z + T(-691.0 / 32760);
    p = p * z + T(1.0 / 132);
    p = p * z + T(-1.0 / 240);
    p = p * z + T(1.0 / 252);
    p = p * z + T(-1.0 / 120);
    p = p * z + T(1.0 / 12);
    tail = z * p;
  }
  return result + ew_log(x) - T(0.5) / x - tail;
}

template <class T> __device__ T ew_trigamma_t(T x) {
  T head = T(0);
  const bool reflect = x < T(0);
  if (reflect) {  // psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x); sin of the exact remainder: poles are inf
    const T s = ew_sin(T(3.14159265358979323846) * (x - ew_rint(x)));
    head = T(9.86960440108935861883) / (s * s);
    x = T(1) - x;
  }
  T acc = T(0);
  while (x < T(10)) {
    acc += T(1) / (x * x);
    x += T(1);
  }
  const T w = T(1) / x, w2 = w * w;  // 1/x + 1/(2x^2) + sum_k B_2k / x^(2k+1), k = 1 .. 8
  T p = T(-3617.0 / 510);
  p = p * w2 + T(7.0 / 6);
  p = p * w2 + T(-691.0 / 2730);
  p = p * w2 + T(5.0 / 66);
  p = p * w2 + T(-1.0 / 30);
  p = p * w2 + T(1.0 / 42);
  p = p * w2 + T(-1.0 / 30);
  p = p * w2 + T(1.0 / 6);
  const T psi1 = acc + (w + T(0.5) * w2 + w * w2 * p);
  return reflect ? head - psi1 : psi1;
}

__device__ __forceinline__ float ew_digamma(float x) { return ew_digamma_t(x); }
__device__ __forceinline__ double ew_digamma(double x) { return ew_digamma_t(x); }
__device__ __forceinline__ float ew_trigamma(float x) { return ew_trigamma_t(x); }
__device__ __forceinline__ double ew_trigamma(double x) { return ew_trigamma_t(x); }

// Cephes' Hurwitz zeta sum_k (q + k)^-x (torch's zeta in ATen/native/Math.h) at arguments past the domain
// checks of ew_zeta: the direct sum to a > 9, then Euler-Maclaurin. Not inlined: ew_zeta calls it at three
// arguments, and three inlined copies of the unrolled series took NVRTC 45 s per polygamma instantiation.
__device__ __noinline__ double ew_zeta_sum(double x, double q) {
  const double machep = 1.11022302462515654042e-16;
  const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                        7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                        -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18};
  double s = pow(q, -x), a = q, b = 0.0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    i += 1;
    a += 1.0;
    b = pow(a, -x);
    s += b;
    if (-machep * s < b && b < machep * s) return s;
  }
  const double w = a;
  s += b * w / (x - 1.0);
  s -= 0.5 * b;
  double f = 1.0, k = 0.0;
#pragma unroll
  for (int j = 0; j < 12; ++j) {
    f *= x + k;
    b /= w;
    const double t = f * b / A[j];
    s = s + t;
    if (fabs(t / s) < machep) return s;
    k += 1.0;
    f *= x + k;
    b /= w;
    k += 1.0;
  }
  return s;
}

// The Hurwitz zeta with torch's domain (poles +inf, NaN for x < 1 and for a negative q with a non-integer x);
// below q = -64 the sum is split at zero instead of taking |q| direct steps (Note [Hurwitz zeta far below zero]
// in backends/cpu/hurwitz_zeta.py).
__device__ double ew_zeta(double x, double q) {
  if (x == 1.0) return ew_inf(x);
  if (x < 1.0) return ew_qnan(x);
  if (q <= 0.0) {
    if (q == floor(q)) return ew_inf(x);
    if (x != floor(x)) return ew_qnan(x);
    if (q < -64.0) {
      const double m = ceil(-q), r = 1.0 - m - q, sign = fmod(x, 2.0) == 0.0 ? 1.0 : -1.0;
      const double near0 = ew_zeta_sum(x, r), near1 = ew_zeta_sum(x, q + m);
      if (sign > 0.0 && (isinf(near0) || isinf(near1))) return ew_inf(x);  // an even power's overflow: +inf
      return (sign * near0 + near1) - sign * ew_zeta_sum(x, 1.0 - q);
    }
  }
  return ew_zeta_sum(x, q);
}

__device__ __forceinline__ double ew_polygamma(double x, long long n) {
  if (n == 0) return ew_digamma(x);
  if (n == 1) return ew_trigamma(x);
  double fact = 1.0;  // n!, exact up to 22!, inf past 170!
  for (long long k = 2; k <= n && k <= 171; ++k) fact *= static_cast<double>(k);
  return ((n & 1) ? 1.0 : -1.0) * fact * ew_zeta(static_cast<double>(n + 1), x);
}
__device__ __forceinline__ float ew_polygamma(float x, long long n) {
  if (n == 0) return ew_digamma(x);
  if (n == 1) return ew_trigamma(x);
  return static_cast<float>(ew_polygamma(static_cast<double>(x), n));
}

// mvlgamma: sum_j lgamma(x - j / 2), j < p, + p (p - 1) / 4 log(pi) (torch's mvlgamma, in opmath).
template <class T> __device__ T ew_mvlgamma(T x, long long p) {
  T s = T(0);
  for (long long j = 0; j < p; ++j) s += ew_lgamma(x - T(0.5) * static_cast<T>(j));
  return s + static_cast<T>(0.28618247146235004 * static_cast<double>(p) * static_cast<double>(p - 1));
}

// ---------------------------------------------------------------------------- further math (math_more_ops.py)
// igamma / igammac, gcd / lcm, nextafter and frexp: the CPU kernels' algorithms and special cases
// (strided/backends/cpu/math_more.py), so the two backends agree bit for bit where the math library allows.

// igamma / igammac: igamma.cuh, appended after this header.

// gcd / lcm of integers as NumPy's (the CPU kernel): gcd of the magnitudes in unsigned arithmetic, cast back
// (so gcd(MIN, 0) is MIN); lcm = |a / gcd * b| with the product and the magnitude wrapping in the dtype.
template <int N> struct EwUnsigned { typedef unsigned t; };
template <> struct EwUnsigned<8> { typedef u64 t; };
template <class T> __device__ T ew_gcd(T a, T b) {
  typedef typename EwUnsigned<sizeof(T)>::t U;
  U x = a < T(0) ? U(0) - (U)a : (U)a;
  U y = b < T(0) ? U(0) - (U)b : (U)b;
  while (y != U(0)) {
    const U r = x % y;
    x = y;
    y = r;
  }
  return (T)x;
}
template <class T> __device__ T ew_lcm(T a, T b) {
  typedef typename EwUnsigned<sizeof(T)>::t U;
  const T g = ew_gcd(a, b);
  if (g == T(0)) return T(0);
  const T q = (T)(a / g);  // exact: g divides a (g is MIN only when a is 0 or MIN)
  const T r = (T)((U)q * (U)b);
  return r < T(0) ? (T)(U(0) - (U)r) : r;
}

// nextafter: the math library's for float and double; 16-bit floats step their bit pattern (IEEE order of
// sign-magnitude), as the CPU's bfloat16 path; NaN in, NaN out; a == b gives b.
__device__ __forceinline__ float ew_nextafter(float a, float b) { return nextafterf(a, b); }
__device__ __forceinline__ double ew_nextafter(double a, double b) { return nextafter(a, b); }
__device__ __forceinline__ unsigned short ew_bits16(__half h) { return __half_as_ushort(h); }
__device__ __forceinline__ unsigned short ew_bits16(__nv_bfloat16 h) { return __bfloat16_as_ushort(h); }
__device__ __forceinline__ __half ew_from_bits16(unsigned short u, __half) { return __ushort_as_half(u); }
__device__ __forceinline__ __nv_bfloat16 ew_from_bits16(unsigned short u, __nv_bfloat16) {
  return __ushort_as_bfloat16(u);
}
template <class H> __device__ H ew_nextafter16(H a, H b) {
  const float af = ToWide<H>::get(a), bf = ToWide<H>::get(b);
  if (af != af || bf != bf) return convert<H>(ew_qnan(af));
  if (af == bf) return b;
  unsigned short bits = ew_bits16(a);
  if (af == 0.f) bits = bf > 0.f ? 1 : 0x8001;
  else bits = (bf > af) == (af > 0.f) ? (unsigned short)(bits + 1) : (unsigned short)(bits - 1);
  return ew_from_bits16(bits, a);
}
__device__ __forceinline__ __half ew_nextafter(__half a, __half b) { return ew_nextafter16(a, b); }
__device__ __forceinline__ __nv_bfloat16 ew_nextafter(__nv_bfloat16 a, __nv_bfloat16 b) {
  return ew_nextafter16(a, b);
}

// frexp: mantissa in [0.5, 1) with the sign of x (x itself for 0, inf and NaN) and the exponent, 0 for 0, inf
// and NaN (the CPU's convention); 16-bit floats go through float (their opmath), where both are exact.
__device__ __forceinline__ float ew_frexp_mantissa(float x) { int e; return frexpf(x, &e); }
__device__ __forceinline__ double ew_frexp_mantissa(double x) { int e; return frexp(x, &e); }
__device__ __forceinline__ int ew_frexp_exponent(float x) { int e; frexpf(x, &e); return isfinite(x) ? e : 0; }
__device__ __forceinline__ int ew_frexp_exponent(double x) { int e; frexp(x, &e); return isfinite(x) ? e : 0; }
