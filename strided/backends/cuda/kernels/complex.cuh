// complex64 / complex128 for device code (c10::complex's shape), after common.cuh.  Included only by
// sources that instantiate a complex dtype, so real-dtype kernel texts (and their cache keys) never change.
//
// Note [Device complex type]
// Complex<T> is two T's, aligned to their sum (c10::complex: 16-byte complex128 vectors load whole). The
// default constructor is trivial, so it can live in __shared__ arrays (transpose.cu tiles, reduction states)
// and unions (shfl_xor_state); Complex<T>() value-initializes to 0. Operators are hidden friends, so a real
// operand converts implicitly (c * 2.f). Casts follow torch's: real -> complex gives imag 0, complex -> real
// keeps the real part (explicit operator U), complex -> bool is re != 0 || im != 0 (Conv<bool>'s v != S(0)).
// Division is Smith's algorithm as NumPy's (scale by the larger part of the divisor, no overflow for large
// divisors; an exactly real divisor divides each part exactly), so CUDA agrees with the CPU backend.
#pragma once

template <class U> struct CxArith { static const bool ok = false; };
#define CX_ARITH(U) template <> struct CxArith<U> { static const bool ok = true; typedef U type; };
CX_ARITH(float) CX_ARITH(double) CX_ARITH(signed char) CX_ARITH(unsigned char) CX_ARITH(char) CX_ARITH(short)
CX_ARITH(unsigned short) CX_ARITH(int) CX_ARITH(unsigned) CX_ARITH(long) CX_ARITH(unsigned long)
CX_ARITH(long long) CX_ARITH(unsigned long long)
#undef CX_ARITH

__device__ __forceinline__ float cx_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double cx_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float cx_hypot(float a, float b) { return hypotf(a, b); }
__device__ __forceinline__ double cx_hypot(double a, double b) { return hypot(a, b); }
__device__ __forceinline__ float cx_atan2(float y, float x) { return atan2f(y, x); }
__device__ __forceinline__ double cx_atan2(double y, double x) { return atan2(y, x); }
__device__ __forceinline__ float cx_exp(float x) { return expf(x); }
__device__ __forceinline__ double cx_exp(double x) { return exp(x); }
__device__ __forceinline__ void cx_sincos(float x, float* s, float* c) { sincosf(x, s, c); }
__device__ __forceinline__ void cx_sincos(double x, double* s, double* c) { sincos(x, s, c); }
__device__ __forceinline__ float cx_fabs(float x) { return fabsf(x); }
__device__ __forceinline__ double cx_fabs(double x) { return fabs(x); }

template <class T> struct alignas(2 * sizeof(T)) Complex {
  typedef T value_type;
  T re, im;

  Complex() = default;
  __host__ __device__ constexpr Complex(T r, T i = T(0)) : re(r), im(i) {}
  template <class U> __host__ __device__ explicit constexpr Complex(const Complex<U>& o) : re(T(o.re)), im(T(o.im)) {}

  template <class U, class V = typename CxArith<U>::type>
  __host__ __device__ explicit constexpr operator U() const { return static_cast<U>(re); }
  __host__ __device__ explicit constexpr operator bool() const { return re != T(0) || im != T(0); }

  __device__ friend Complex operator+(Complex a, Complex b) { return Complex(a.re + b.re, a.im + b.im); }
  __device__ friend Complex operator-(Complex a, Complex b) { return Complex(a.re - b.re, a.im - b.im); }
  __device__ friend Complex operator-(Complex a) { return Complex(-a.re, -a.im); }
  __device__ friend Complex operator*(Complex a, Complex b) {
    return Complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
  }
  __device__ friend Complex operator/(Complex a, Complex b) {
    const T ar = cx_fabs(b.re), ai = cx_fabs(b.im);
    if (ar >= ai) {
      if (ar == T(0) && ai == T(0)) return Complex(a.re / ar, a.im / ar);  // IEEE: inf or nan parts
      const T rat = b.im / b.re, den = b.re + b.im * rat;
      return Complex((a.re + a.im * rat) / den, (a.im - a.re * rat) / den);
    }
    const T rat = b.re / b.im, den = b.im + b.re * rat;
    return Complex((a.re * rat + a.im) / den, (a.im * rat - a.re) / den);
  }
  __device__ friend bool operator==(Complex a, Complex b) { return a.re == b.re && a.im == b.im; }
  __device__ friend bool operator!=(Complex a, Complex b) { return a.re != b.re || a.im != b.im; }
  __device__ Complex& operator+=(Complex b) { re += b.re; im += b.im; return *this; }
  __device__ Complex& operator-=(Complex b) { re -= b.re; im -= b.im; return *this; }
  __device__ Complex& operator*=(Complex b) { return *this = *this * b; }
  __device__ Complex& operator/=(Complex b) { return *this = *this / b; }
};

typedef Complex<float> complex64_t;  // CTYPES' one-word names (kernels/__init__.py)
typedef Complex<double> complex128_t;

// Casts into complex (Note [Device complex type]): a real source (16-bit floats widened by ToWide first)
// fills the real part; a complex source converts each part.
template <class T> struct Conv<Complex<T>> {
  template <class S> __device__ static Complex<T> from(S v) { return Complex<T>(static_cast<T>(v), T(0)); }
  template <class U> __device__ static Complex<T> from(Complex<U> v) { return Complex<T>(T(v.re), T(v.im)); }
};

// ---------------------------------------------------------------------------- pointwise (elementwise.cu)
template <class T> __device__ __forceinline__ Complex<T> ew_conj(Complex<T> z) { return Complex<T>(z.re, -z.im); }
template <class T> __device__ __forceinline__ T ew_cabs(Complex<T> z) { return cx_hypot(z.re, z.im); }
template <class T> __device__ __forceinline__ T ew_carg(Complex<T> z) { return cx_atan2(z.im, z.re); }

// exp(x + iy) = e^x (cos y + i sin y); on the real axis e^x exactly, the imaginary zero kept (e^inf is inf,
// not inf * sin 0 = nan), as std::exp / NumPy's cexp.
template <class T> __device__ __forceinline__ Complex<T> ew_exp(Complex<T> z) {
  if (z.im == T(0)) return Complex<T>(cx_exp(z.re), z.im);
  T s, c;
  cx_sincos(z.im, &s, &c);
  const T e = cx_exp(z.re);
  return Complex<T>(e * c, e * s);
}

// polar(abs, angle) and complex(real, imag): real operands, a complex result of their precision.
template <class T> __device__ __forceinline__ Complex<T> ew_polar(T r, T theta) {
  T s, c;
  cx_sincos(theta, &s, &c);
  return Complex<T>(r * c, r * s);
}
template <class T> __device__ __forceinline__ Complex<T> ew_complex(T re, T im) { return Complex<T>(re, im); }


// ---------------------------------------------------------------------------- complex math (Note [Complex math])
// Note [Complex math]
// The unary math of torch's complex CUDA kernels, as c10/util/complex_math.h computes it through thrust
// (FreeBSD's msun formulas): sqrt with scaling near overflow and its C99 special values, log as
// (log|z|, arg z) (log1p of (|x|-1)(|x|+1) + y^2 near |z| = 1, for NumPy's accuracy there), log1p as c10's,
// sinh / cosh / tanh from the real functions (tanh as thrust's ctanh, saturating for large |x|), and sin, cos,
// tan through them (sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz)). sigmoid is torch's
// 1 / (1 + exp(-z)); rsqrt and reciprocal are the real kernels' 1 / sqrt(z) and 1 / z in the division above
// (its zero, infinite and nan cases give torch's reciprocal_wrapper values: inf + nan i, 0, nan). pow is exp(y log x) (thrust::pow) except at x = 0, where it
// follows NumPy's cpow as the CPU backend does (1 for y = 0, 0 for real y > 0, else nan).
__device__ __forceinline__ float cx_log(float x) { return logf(x); }
__device__ __forceinline__ double cx_log(double x) { return log(x); }
__device__ __forceinline__ float cx_log1p(float x) { return log1pf(x); }
__device__ __forceinline__ double cx_log1p(double x) { return log1p(x); }
__device__ __forceinline__ float cx_sinh(float x) { return sinhf(x); }
__device__ __forceinline__ double cx_sinh(double x) { return sinh(x); }
__device__ __forceinline__ float cx_cosh(float x) { return coshf(x); }
__device__ __forceinline__ double cx_cosh(double x) { return cosh(x); }
__device__ __forceinline__ float cx_tanh_real(float x) { return tanhf(x); }
__device__ __forceinline__ double cx_tanh_real(double x) { return tanh(x); }
__device__ __forceinline__ float cx_nan(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double cx_nan(double) { return __longlong_as_double(0x7ff8000000000000LL); }
__device__ __forceinline__ float cx_tan(float x) { return tanf(x); }
__device__ __forceinline__ double cx_tan(double x) { return tan(x); }
__device__ __forceinline__ float cx_copysign(float a, float b) { return copysignf(a, b); }
__device__ __forceinline__ double cx_copysign(double a, double b) { return copysign(a, b); }
__device__ __forceinline__ bool cx_isinf(float x) { return isinf(x); }
__device__ __forceinline__ bool cx_isinf(double x) { return isinf(x); }
__device__ __forceinline__ float cx_sqrt_big(float) { return 1.40949553037932e+38f; }  // max / (1 + sqrt 2)
__device__ __forceinline__ double cx_sqrt_big(double) { return 7.446288774449766337959726e+307; }
__device__ __forceinline__ float cx_tanh_big(float) { return 9.f; }  // tanh(x) rounds to +-1 past here
__device__ __forceinline__ double cx_tanh_big(double) { return 22.; }

template <class T> __device__ __forceinline__ bool ew_isinf(Complex<T> z) { return cx_isinf(z.re) || cx_isinf(z.im); }
template <class T> __device__ __forceinline__ bool ew_isfinite(Complex<T> z) {
  return !cx_isinf(z.re) && !cx_isinf(z.im) && z.re == z.re && z.im == z.im;
}

template <class T> __device__ Complex<T> ew_sqrt(Complex<T> z) {
  T a = z.re, b = z.im;
  if (a == T(0) && b == T(0)) return Complex<T>(T(0), b);
  if (cx_isinf(b)) return Complex<T>(cx_fabs(b), b);
  if (a != a) return Complex<T>(a, (b - b) / (b - b));
  if (cx_isinf(a)) {
    if (a < T(0)) return Complex<T>(cx_fabs(b - b), cx_copysign(a, b));
    return Complex<T>(a, cx_copysign(b - b, b));
  }
  const bool scale = cx_fabs(a) >= cx_sqrt_big(a) || cx_fabs(b) >= cx_sqrt_big(a);
  if (scale) { a *= T(0.25); b *= T(0.25); }
  Complex<T> r;
  if (a >= T(0)) {
    const T t = cx_sqrt((a + cx_hypot(a, b)) * T(0.5));
    r = Complex<T>(t, b / (T(2) * t));
  } else {
    const T t = cx_sqrt((-a + cx_hypot(a, b)) * T(0.5));
    r = Complex<T>(cx_fabs(b) / (T(2) * t), cx_copysign(t, b));
  }
  return scale ? Complex<T>(r.re * T(2), r.im * T(2)) : r;
}

template <class T> __device__ Complex<T> ew_log(Complex<T> z) {
  const T h = cx_hypot(z.re, z.im), theta = cx_atan2(z.im, z.re);
  if (h > T(0.5) && h < T(2)) {
    const T ax = cx_fabs(z.re), ay = cx_fabs(z.im);
    return Complex<T>(T(0.5) * cx_log1p((ax - T(1)) * (ax + T(1)) + ay * ay), theta);
  }
  return Complex<T>(cx_log(h), theta);
}

template <class T> __device__ Complex<T> ew_log1p(Complex<T> z) {
  const T x = z.re, y = z.im, theta = cx_atan2(y, x + T(1));
  if (cx_hypot(x, y) < T(0.5)) {
    const T r = x * (T(2) + x) + y * y;
    return Complex<T>(r == T(0) ? x : T(0.5) * cx_log1p(r), theta);
  }
  return Complex<T>(cx_log(cx_hypot(x + T(1), y)), theta);
}

template <class T> __device__ Complex<T> ew_sinh(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (y == T(0)) return Complex<T>(cx_sinh(x), y);
  T s, c;
  cx_sincos(y, &s, &c);
  if (x == T(0)) return Complex<T>(x, s);
  return Complex<T>(cx_sinh(x) * c, cx_cosh(x) * s);
}

template <class T> __device__ Complex<T> ew_cosh(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (y == T(0)) return Complex<T>(cx_cosh(x), cx_copysign(T(0), x) * y);
  T s, c;
  cx_sincos(y, &s, &c);
  if (x == T(0)) return Complex<T>(c, s == s ? x * s : x);
  return Complex<T>(cx_cosh(x) * c, cx_sinh(x) * s);
}

template <class T> __device__ Complex<T> ew_tanh(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (x != x) return Complex<T>(x, y == T(0) ? y : x * y);
  if (cx_isinf(x)) {
    T s, c;
    cx_sincos(y, &s, &c);
    return Complex<T>(cx_copysign(T(1), x), cx_copysign(T(0), cx_isinf(y) ? y : s * c));
  }
  if (y == T(0)) return Complex<T>(cx_tanh_real(x), y);
  if (cx_isinf(y) || y != y) return Complex<T>(y - y, y - y);
  if (cx_fabs(x) >= cx_tanh_big(x)) {
    T s, c;
    cx_sincos(y, &s, &c);
    const T e = cx_exp(-cx_fabs(x));
    return Complex<T>(cx_copysign(T(1), x), T(4) * s * c * e * e);
  }
  const T t = cx_tan(y), beta = T(1) + t * t, s = cx_sinh(x), rho = cx_sqrt(T(1) + s * s);
  const T denom = T(1) + beta * s * s;
  return Complex<T>(beta * rho * s / denom, t / denom);
}

// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz) (iz = -y + ix).
template <class T> __device__ Complex<T> ew_sin(Complex<T> z) {
  const Complex<T> w = ew_sinh(Complex<T>(-z.im, z.re));
  return Complex<T>(w.im, -w.re);
}
template <class T> __device__ Complex<T> ew_cos(Complex<T> z) { return ew_cosh(Complex<T>(-z.im, z.re)); }
template <class T> __device__ Complex<T> ew_tan(Complex<T> z) {
  const Complex<T> w = ew_tanh(Complex<T>(-z.im, z.re));
  return Complex<T>(w.im, -w.re);
}

template <class T> __device__ Complex<T> ew_sigmoid(Complex<T> z) {
  return Complex<T>(T(1)) / (Complex<T>(T(1)) + ew_exp(-z));
}

// logaddexp: c10's complex _log_add_exp_helper (torch's CUDA kernel for complex inputs), as the CPU backend's
// complex_math.log_add_exp: a NaN in either part of either input gives nan + nan i; the smaller real part is
// shifted by the larger (log1p(exp(lo - hi)) + hi); equal infinite real parts give lo for -inf (exp is 0
// whatever the angle) and log(exp(lo) + exp(hi)) for +inf (no inf - inf).
template <class T> __device__ Complex<T> ew_logaddexp(Complex<T> x, Complex<T> y) {
  if (x.re != x.re || x.im != x.im || y.re != y.re || y.im != y.im) return Complex<T>(cx_nan(T(0)), cx_nan(T(0)));
  const bool x_lo = x.re < y.re;
  const Complex<T> lo = x_lo ? x : y, hi = x_lo ? y : x;
  if (isinf(lo.re) && lo.re == hi.re) return lo.re < T(0) ? lo : ew_log(ew_exp(lo) + ew_exp(hi));
  return ew_log1p(ew_exp(lo - hi)) + hi;
}

template <class T> __device__ Complex<T> ew_pow(Complex<T> x, Complex<T> y) {
  if (x.re == T(0) && x.im == T(0)) {
    if (y.re == T(0) && y.im == T(0)) return Complex<T>(T(1), T(0));
    if (y.im == T(0) && y.re > T(0)) return Complex<T>(T(0), T(0));
    return Complex<T>(cx_nan(T(0)), cx_nan(T(0)));
  }
  return ew_exp(y * ew_log(x));
}

// log2 z = log z / ln 2 and log10 z = log z / ln 10 (thrust's, as torch's CUDA kernels); exp2 z = exp(z ln 2).
template <class T> __device__ Complex<T> ew_log2(Complex<T> z) {
  const Complex<T> l = ew_log(z);
  return Complex<T>(l.re / T(0.69314718055994530942), l.im / T(0.69314718055994530942));
}
template <class T> __device__ Complex<T> ew_log10(Complex<T> z) {
  const Complex<T> l = ew_log(z);
  return Complex<T>(l.re / T(2.30258509299404568402), l.im / T(2.30258509299404568402));
}
template <class T> __device__ Complex<T> ew_exp2(Complex<T> z) {
  return ew_exp(Complex<T>(z.re * T(0.69314718055994530942), z.im * T(0.69314718055994530942)));
}

__device__ __forceinline__ float cx_expm1(float x) { return expm1f(x); }
__device__ __forceinline__ double cx_expm1(double x) { return expm1(x); }
__device__ __forceinline__ float cx_sin(float x) { return sinf(x); }
__device__ __forceinline__ double cx_sin(double x) { return sin(x); }

// c10's expm1: e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y / 2), no cancellation near 0; i e^x sin y.
template <class T> __device__ Complex<T> ew_expm1(Complex<T> z) {
  T s, c;
  cx_sincos(z.im, &s, &c);
  const T h = cx_sin(z.im * T(0.5));
  return Complex<T>(cx_expm1(z.re) * c - T(2) * h * h, cx_exp(z.re) * s);
}

// torch's lerp, the branch chosen by |w| (ATen/native/Lerp.h).
template <class T> __device__ Complex<T> ew_lerp(Complex<T> a, Complex<T> e, Complex<T> w) {
  const Complex<T> d = e - a;
  return cx_hypot(w.re, w.im) < T(0.5) ? a + w * d : e - d * (Complex<T>(T(1)) - w);
}
