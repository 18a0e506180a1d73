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

// igamma(a, x) = P(a, x), igammac(a, x) = Q(a, x): Note [Regularized incomplete gamma] in
// strided/backends/cpu/math_more.py. Cephes' power series of P (x <= 1 or x <= a) or Legendre's continued
// fraction of Q, in double for every dtype (the operands are converted to double straight from their
// dtype, as the CPU does), the other one as 1 - it, clipped to [0, 1]; at most 5000 terms each.
#define EW_IGAM_EPS 2.220446049250313e-16
#define EW_IGAM_MAX_ITER 5000
// Note [Incomplete gamma for large a] (backends/cpu/igamma_asymptotic.py): Temme's expansion for a > 200 and
// |x - a| < 0.3 a, and the prefactor without cancellation for a >= 10. EW_IGAM_TEMME is that module's d[k][n]
// (C_k(eta) = sum_n d[k][n] eta^n), derived there in exact arithmetic; tests/backend compares the two.
__device__ const double EW_IGAM_TEMME[10][25] = {
    {-0.3333333333333333, 0.08333333333333333, -0.014814814814814815, 0.0011574074074074073, 0.0003527336860670194, -0.0001787551440329218, 3.919263178522438e-05, -2.185448510679992e-06, -1.85406221071516e-06, 8.296711340953087e-07, -1.7665952736826078e-07, 6.707853543401498e-09, 1.0261809784240309e-08, -4.382036018453353e-09, 9.14769958223679e-10, -2.5514193994946248e-11, -5.830772132550426e-11, 2.4361948020667415e-11, -5.0276692801141755e-12, 1.1004392031956135e-13, 3.371763262400985e-13, -1.392388722418162e-13, 2.8534893807047445e-14, -5.139111834242572e-16, -1.9752288294349442e-15},
    {-0.001851851851851852, -0.003472222222222222, 0.0026455026455026454, -0.0009902263374485596, 0.00020576131687242798, -4.018775720164609e-07, -1.8098550334489977e-05, 7.64916091608111e-06, -1.6120900894563446e-06, 4.647127802807434e-09, 1.378633446915721e-07, -5.752545603517705e-08, 1.1951628599778148e-08, -1.7543241719747647e-11, -1.0091543710600413e-09, 4.162792991842583e-10, -8.56390702649298e-11, 6.067215101604758e-14, 7.1624989648114856e-12, -2.933186643771437e-12, 5.996696365683689e-13, -2.1671786527323313e-16, -4.978339972369262e-14, 2.0291628823713425e-14, -4.13125571381061e-15},
    {0.004133597883597883, -0.0026813271604938273, 0.0007716049382716049, 2.0093878600823047e-06, -0.0001073665322636516, 5.2923448829120125e-05, -1.2760635188618728e-05, 3.423578734096138e-08, 1.3721957309062934e-06, -6.298992138380055e-07, 1.4280614206064242e-07, -2.0477098421990866e-10, -1.409252991086752e-08, 6.228974084922022e-09, -1.3670488396617114e-09, 9.428356159014678e-13, 1.2872252400089318e-10, -5.5645956134363323e-11, 1.197593554636698e-11, -4.1689782251838634e-15, -1.0940640427884595e-12, 4.662239946390136e-13, -9.905105763906907e-14, 1.8931876768373515e-17, 8.859221872591127e-15},
    {0.0006494341563786008, 0.00022947209362139917, -0.0004691894943952557, 0.00026772063206283885, -7.561801671883977e-05, -2.396505113867297e-07, 1.1082654115347302e-05, -5.6749528269915965e-06, 1.4230900732435883e-06, -2.7861080291528143e-11, -1.6958404091930278e-07, 8.099464905388083e-08, -1.9111168485973655e-08, 2.3928620439808118e-12, 2.0620131815488797e-09, -9.460496661855133e-10, 2.1541049775774907e-10, -1.388823336813903e-14, -2.1894761681963938e-11, 9.790998951171684e-12, -2.178219188018096e-12, 6.208819573407901e-17, 2.126978363279737e-13, -9.344688791517433e-14, 2.045367122678285e-14},
    {-0.0008618882909167117, 0.0007840392217200666, -0.0002990724803031902, -1.4638452578843418e-06, 6.641498215465122e-05, -3.968365047179435e-05, 1.1375726970678419e-05, 2.507497226237533e-10, -1.6954149536558305e-06, 8.907507532205309e-07, -2.292934834000805e-07, 2.956794137544049e-11, 2.8865829742708783e-08, -1.4189739437803219e-08, 3.4463580499464896e-09, -2.3024517174528067e-13, -3.9409233028046403e-10, 1.86023389685045e-10, -4.356323005056618e-11, 1.278600101629623e-15, 4.67927502665792e-12, -2.149246470613483e-12, 4.908815614809652e-13, -6.33859148489156e-18, -5.045332069080094e-14},
    {-0.00033679855336635813, -6.972813758365857e-05, 0.0002772753244959392, -0.00019932570516188847, 6.797780477937208e-05, 1.419062920643967e-07, -1.3594048189768693e-05, 8.018470256334202e-06, -2.291481176508095e-06, -3.252473551298454e-10, 3.4652846491085265e-07, -1.8447187191171344e-07, 4.8240967037894184e-08, -1.7989466721743514e-14, -6.306194500013523e-09, 3.162417628774568e-09, -7.840924253697429e-10, 5.192679165254041e-15, 9.358944242306784e-11, -4.513426216163278e-11, 1.0799129993116828e-11, -3.661886712685252e-17, -1.210902069055155e-12, 5.680743584990564e-13, -1.3249659916340829e-13},
    {0.0005313079364639922, -0.0005921664373536939, 0.0002708782096718045, 7.902353232660328e-07, -8.153969367561969e-05, 5.61168275310625e-05, -1.8329116582843375e-05, -3.0796134506033047e-09, 3.465155368803609e-06, -2.0291327396058603e-06, 5.788792863149004e-07, 2.338630673826657e-13, -8.828600746330484e-08, 4.7435958880408125e-08, -1.2545415020710383e-08, 8.649648858010293e-14, 1.6846058979264062e-09, -8.575492823577594e-10, 2.1598224929232125e-10, -7.613230520476153e-16, -2.6639822008536144e-11, 1.3065700536611057e-11, -3.1799163902367977e-12, 4.710976121367431e-18, 3.6902800842763465e-13},
    {0.00034436760689237765, 5.171790908260592e-05, -0.00033493161081142234, 0.0002812695154763237, -0.00010976582244684731, -1.2741009095484485e-07, 2.7744451511563645e-05, -1.8263488805711332e-05, 5.7876949497350525e-06, 4.93875893393627e-10, -1.0595367014026043e-06, 6.166714376110408e-07, -1.7562973359060463e-07, -1.297447328701544e-12, 2.695423606288966e-08, -1.4578352908731272e-08, 3.887645959386175e-09, -3.881002251019412e-17, -5.327994173877286e-10, 2.7437977643314844e-10, -6.995796092070568e-11, 2.589986387486848e-17, 8.856689099669639e-12, -4.403168815871311e-12, 1.0865561947091654e-12},
    {-0.0006526239185953094, 0.0008394987206720873, -0.000438297098541721, -6.969091458420552e-07, 0.00016644846642067547, -0.00012783517679769218, 4.629953263691304e-05, 4.557909867922708e-09, -1.0595271125805195e-05, 6.783342904865167e-06, -2.1075476666258803e-06, -1.7213731432817144e-11, 3.773587741611098e-07, -2.1867506700122867e-07, 6.220228804018927e-08, 6.597703826733e-16, -9.590386497425686e-09, 5.213214492280807e-09, -1.3991589583935709e-09, 5.382058999060575e-16, 1.9484714275467745e-10, -1.0127287556389682e-10, 2.6077347197254926e-11, -5.090418699993299e-18, -3.3721464474854593e-12},
    {-0.0005967612901927463, -7.204895416020011e-05, 0.0006782308837667328, -0.0006401475260262758, 0.00027750107634328704, 1.819700838046515e-07, -8.479507117068503e-05, 6.105192082501531e-05, -2.1073920183404862e-05, -8.858589014125599e-10, 4.5284535953805374e-06, -2.8427815022504407e-06, 8.708234177864641e-07, 3.6886101871706966e-12, -1.534469519070206e-07, 8.862466778790695e-08, -2.5184812301826817e-08, -1.0225912098215092e-14, 3.896947075815478e-09, -2.1267304792235634e-09, 5.737013552805138e-10, -1.8877498501697116e-19, -8.093153869465787e-11, 4.23827232834492e-11, -1.1002224534207725e-11}};
__device__ double ew_log1pmx(double t) {  // log(1 + t) - t without cancellation near 0
  if (fabs(t) < 0.25) {
    double term = t, total = 0.0;
    for (int j = 2; j < 40; ++j) {
      term = -__dmul_rn(term, t);
      total = __dadd_rn(total, term / j);
    }
    return total;
  }
  return log1p(t) - t;
}
__device__ double ew_igam_log_prefactor_large(double a, double x) {  // log(x^a e^-x / Gamma(a)), a >= 10
  const double inv = 1.0 / a, inv2 = inv * inv;
  const double rem = inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (1.0 / 1680 - inv2 / 1188))));
  return __dmul_rn(a, ew_log1pmx((x - a) / a)) + 0.5 * log(a / (2.0 * 3.141592653589793)) - rem;
}
__device__ double ew_igam_temme(double a, double x, bool upper) {  // Q (upper) or P by Temme's expansion
  const double sigma = (x - a) / a;
  const double mag = sqrt(-2.0 * ew_log1pmx(sigma));
  const double eta = sigma > 0.0 ? mag : (sigma < 0.0 ? -mag : 0.0);
  double total = 0.0, scale = 1.0;
  for (int k = 0; k < 10; ++k) {
    double poly = EW_IGAM_TEMME[k][24];
    for (int n = 23; n >= 0; --n) poly = __dadd_rn(__dmul_rn(poly, eta), EW_IGAM_TEMME[k][n]);
    total = __dadd_rn(total, __dmul_rn(poly, scale));
    scale = scale / a;
  }
  const double tail = exp(-0.5 * a * eta * eta) * total / sqrt(2.0 * 3.141592653589793 * a);
  const double sign = upper ? 1.0 : -1.0;
  return 0.5 * erfc(sign * eta * sqrt(a / 2.0)) + sign * tail;
}
__device__ __forceinline__ double ew_igam_prefactor(double a, double x) {  // x^a e^-x / Gamma(a)
  if (a >= 10.0) return exp(ew_igam_log_prefactor_large(a, x));
  return exp(__dmul_rn(a, log(x)) - x - lgamma(a));
}
__device__ double ew_igam_series(double a, double x) {  // P(a, x)
  double r = a, c = 1.0, total = 1.0;
  for (int i = 0; i < EW_IGAM_MAX_ITER; ++i) {
    r += 1.0;
    c = c * x / r;
    total += c;
    if (!(fabs(c) > EW_IGAM_EPS * fabs(total))) break;
  }
  return total * ew_igam_prefactor(a, x) / a;
}
__device__ double ew_igamc_fraction(double a, double x) {  // Q(a, x), for x > 1 and x > a
  const double big = 4.503599627370496e15, biginv = 2.22044604925031308085e-16;
  double y = 1.0 - a, z = x + 2.0 - a, c = 0.0;
  double pkm2 = 1.0, qkm2 = x, pkm1 = x + 1.0, qkm1 = z * x;
  double ans = pkm1 / qkm1;
  for (int i = 0; i < EW_IGAM_MAX_ITER; ++i) {
    c += 1.0;
    y += 1.0;
    z += 2.0;
    const double yc = y * c;
    const double pk = __dmul_rn(pkm1, z) - __dmul_rn(pkm2, yc);  // no contraction: the CPU's rounding
    const double qk = __dmul_rn(qkm1, z) - __dmul_rn(qkm2, yc);
    double t = 1.0;
    if (qk != 0.0) {
      const double r = pk / qk;
      t = fabs((ans - r) / (r == 0.0 ? 1.0 : r));
      ans = r;
    }
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    if (fabs(pkm1) > big) {
      pkm2 *= biginv;
      pkm1 *= biginv;
      qkm2 *= biginv;
      qkm1 *= biginv;
    }
    if (!(t > EW_IGAM_EPS)) break;
  }
  return ans * ew_igam_prefactor(a, x);
}
__device__ double ew_igamma_reg(double a, double x, bool upper) {
  if (a != a || x != x || a < 0.0 || x < 0.0 || (a == 0.0 && x == 0.0) || (isinf(a) && isinf(x))) {
    return ew_qnan(a);
  }
  if ((a == 0.0 && x > 0.0) || isinf(x)) return upper ? 0.0 : 1.0;  // (a is finite here when x is inf)
  if (x == 0.0 || isinf(a)) return upper ? 1.0 : 0.0;
  double v;
  if (a > 200.0 && fabs(x - a) < 0.3 * a) {
    v = ew_igam_temme(a, x, upper);
  } else if (x > 1.0 && x > a) {
    const double q = ew_igamc_fraction(a, x);
    v = upper ? q : 1.0 - q;
  } else {
    const double p = ew_igam_series(a, x);
    v = upper ? 1.0 - p : p;
  }
  return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);  // np.clip: a NaN stays NaN
}
__device__ __forceinline__ double ew_igamma(double a, double x) { return ew_igamma_reg(a, x, false); }
__device__ __forceinline__ double ew_igammac(double a, double x) { return ew_igamma_reg(a, x, true); }

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
