// ---------------------------------------------------------------- complex inverse trigonometry (after complex.cuh)
// Note [Complex inverse trigonometry]
// asin, acos, asinh, acosh, atan and atanh of Complex<T>, with NumPy's values (the CPU backend's), branch cuts
// and signed zeros included. Finite arguments use Kahan's formulas ("Branch cuts for complex elementary
// functions", 1987), which need only sqrt, atan2, asinh and log1p and keep the sign of zero on the cuts:
//   asin z  = atan2(x, Re(sqrt(1-z) sqrt(1+z)))   + i asinh(Im(conj(sqrt(1-z)) sqrt(1+z)))
//   acos z  = 2 atan2(Re sqrt(1-z), Re sqrt(1+z)) + i asinh(Im(conj(sqrt(1+z)) sqrt(1-z)))
//   acosh z = asinh(Re(conj(sqrt(z-1)) sqrt(z+1))) + 2i atan2(Im sqrt(z-1), Re sqrt(z+1))
//   atanh z = log1p(4x / ((1-x)^2 + y^2)) / 4     + i atan2(2y, (1-x)(1+x) - y^2) / 2   (x >= 0; atanh is odd)
// and asinh z = -i asin(iz), atan z = -i atanh(iz), as C99 defines them. Past |z| = 4 / sqrt(eps) the
// products above could overflow while log(2z) is already exact to rounding, so asin / acos / acosh use it
// there (log |z| computed without squaring); atanh takes Re(1/z) + i pi/2 past sqrt(max) / 4. Infinite and
// nan arguments take C99 Annex G's values (NumPy's npymath follows them). These formulas, run in NumPy's
// float32 / float64 arithmetic on 2 x 10^5 random, near-branch-point, on-cut and extreme arguments per dtype, were
// at most 4 ulp per part from NumPy's own results; tests/cuda/test_complex_math_cuda.py checks this device code.

__device__ __forceinline__ float cx_inf(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double cx_inf(double) { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ float cx_asinh(float x) { return asinhf(x); }
__device__ __forceinline__ double cx_asinh(double x) { return asinh(x); }
__device__ __forceinline__ float cx_log_big(float) { return 11585.f; }  // 4 / sqrt(eps)
__device__ __forceinline__ double cx_log_big(double) { return 268435456.; }
__device__ __forceinline__ float cx_atanh_big(float) { return 4.611686e18f; }  // sqrt(max) / 4
__device__ __forceinline__ double cx_atanh_big(double) { return 3.351951982485649e153; }

#define CX_PI T(3.14159265358979323846)
#define CX_LN2 T(0.69314718055994530942)

// log |x + iy| without overflow or underflow of the squares
template <class T> __device__ T cx_log_abs(T x, T y) {
  const T ax = cx_fabs(x), ay = cx_fabs(y), m = ax > ay ? ax : ay, n = ax > ay ? ay : ax;
  if (m == T(0)) return cx_log(m);
  const T r = n / m;
  return cx_log(m) + T(0.5) * cx_log1p(r * r);
}

template <class T> __device__ __forceinline__ bool cx_is_large(T x, T y) {
  return cx_fabs(x) > cx_log_big(x) || cx_fabs(y) > cx_log_big(x);
}

// asin of a finite z
template <class T> __device__ Complex<T> cx_asin_finite(T x, T y) {
  if (cx_is_large(x, y)) return Complex<T>(cx_atan2(x, cx_fabs(y)), cx_copysign(CX_LN2 + cx_log_abs(x, y), y));
  const Complex<T> p = ew_sqrt(Complex<T>(T(1) - x, -y)), q = ew_sqrt(Complex<T>(T(1) + x, y));
  return Complex<T>(cx_atan2(x, p.re * q.re - p.im * q.im), cx_asinh(p.re * q.im - p.im * q.re));
}

template <class T> __device__ Complex<T> ew_asinh(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (x != x) {
    if (y == T(0)) return Complex<T>(x, y);
    return Complex<T>(cx_isinf(y) ? cx_copysign(cx_inf(x), x) : x, x);
  }
  if (y != y) return Complex<T>(cx_isinf(x) ? x : y, y);
  if (cx_isinf(x) || cx_isinf(y)) {
    const T im = cx_isinf(x) ? (cx_isinf(y) ? CX_PI / T(4) : T(0)) : CX_PI / T(2);
    return Complex<T>(cx_copysign(cx_inf(x), x), cx_copysign(im, y));
  }
  const Complex<T> w = cx_asin_finite(-y, x);  // asinh z = -i asin(iz)
  return Complex<T>(w.im, -w.re);
}

// Note [NaN signs]: PTX's neg leaves a nan's sign unspecified, so the -i(iz) forms of asin and atan would lose
// the sign NumPy copies from a nan imaginary part into the result (asin(inf + nan i) = nan + copysign(inf, nan) i);
// those cases are answered before the rotation.
template <class T> __device__ Complex<T> ew_asin(Complex<T> z) {
  if (cx_isinf(z.re) && z.im != z.im) return Complex<T>(z.im, cx_copysign(cx_inf(z.im), z.im));
  const Complex<T> w = ew_asinh(Complex<T>(-z.im, z.re));  // asin z = -i asinh(iz)
  return Complex<T>(w.im, -w.re);
}

template <class T> __device__ Complex<T> ew_acos(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (x != x) return Complex<T>(x, cx_isinf(y) ? -y : x);
  if (y != y) {
    if (cx_isinf(x)) return Complex<T>(y, -cx_copysign(cx_inf(x), y));  // NumPy: the sign of the nan
    return Complex<T>(x == T(0) ? CX_PI / T(2) : y, y);
  }
  if (cx_isinf(x) || cx_isinf(y) || cx_is_large(x, y))
    return Complex<T>(cx_fabs(cx_atan2(y, x)), -cx_copysign(cx_isinf(x) || cx_isinf(y) ? cx_inf(x)
                                                                   : CX_LN2 + cx_log_abs(x, y), y));
  const Complex<T> p = ew_sqrt(Complex<T>(T(1) - x, -y)), q = ew_sqrt(Complex<T>(T(1) + x, y));
  return Complex<T>(T(2) * cx_atan2(p.re, q.re), cx_asinh(q.re * p.im - q.im * p.re));
}

template <class T> __device__ Complex<T> ew_acosh(Complex<T> z) {
  const T x = z.re, y = z.im;
  if (x != x) return Complex<T>(cx_isinf(y) ? cx_inf(x) : x, x);
  if (y != y) {
    if (cx_isinf(x)) return Complex<T>(cx_inf(x), y);
    return Complex<T>(y, x == T(0) ? CX_PI / T(2) : y);
  }
  if (cx_isinf(x) || cx_isinf(y)) return Complex<T>(cx_inf(x), cx_atan2(y, x));
  if (cx_is_large(x, y)) return Complex<T>(CX_LN2 + cx_log_abs(x, y), cx_atan2(y, x));
  const Complex<T> p = ew_sqrt(Complex<T>(x - T(1), y)), q = ew_sqrt(Complex<T>(x + T(1), y));
  return Complex<T>(cx_asinh(p.re * q.re + p.im * q.im), T(2) * cx_atan2(p.im, q.re));
}

template <class T> __device__ Complex<T> ew_atanh(Complex<T> z) {
  T x = z.re, y = z.im;
  if (x != x) return cx_isinf(y) ? Complex<T>(cx_copysign(T(0), x), cx_copysign(CX_PI / T(2), y)) : Complex<T>(x, x);
  if (y != y) return Complex<T>(cx_isinf(x) ? cx_copysign(T(0), x) : (x == T(0) ? x : y), y);
  if (cx_isinf(x) || cx_isinf(y)) return Complex<T>(cx_copysign(T(0), x), cx_copysign(CX_PI / T(2), y));
  const T s = cx_copysign(T(1), x);  // atanh(-z) = -atanh(z): x >= 0 below
  x *= s;
  y *= s;
  const T ay = cx_fabs(y);
  T re, im;
  if (x > cx_atanh_big(x) || ay > cx_atanh_big(x)) {  // Re(1 / z), scaled; Im = +-pi / 2
    const T t = x >= ay ? ay / x : x / ay;
    re = x >= ay ? (T(1) / x) / (T(1) + t * t) : (t / ay) / (T(1) + t * t);
    im = cx_copysign(CX_PI / T(2), y);
  } else {
    const T u = T(1) - x;
    re = x == T(1) ? T(0.5) * (T(0.5) * cx_log(T(4) + y * y) - cx_log(ay))  // (1-x)^2 + y^2 would underflow
                   : T(0.25) * cx_log1p(T(4) * x / (u * u + y * y));
    im = T(0.5) * cx_atan2(T(2) * y, u * (T(1) + x) - y * y);
  }
  return Complex<T>(s * re, s * im);
}

template <class T> __device__ Complex<T> ew_atan(Complex<T> z) {
  if (cx_isinf(z.re) && z.im != z.im) return Complex<T>(cx_copysign(CX_PI / T(2), z.re), cx_copysign(T(0), z.im));
  const Complex<T> w = ew_atanh(Complex<T>(-z.im, z.re));  // atan z = -i atanh(iz)
  return Complex<T>(w.im, -w.re);
}

#undef CX_PI
#undef CX_LN2
