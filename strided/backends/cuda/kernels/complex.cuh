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

