// The FFT's arithmetic (fft.cu's kernels include it before their own source, fft_ops.py): its complex types,
// the roots of unity and twiddles computed in double, and the R-point butterflies.

// Note [Twiddles in double]
// There are no twiddle tables (so no plans to build, cache, keep per stream or capture): every twiddle
// exp(-+2 pi i a / n) is computed where it is used, with sincospi in double precision on the integer ratio a / n,
// and rounded once to the data's precision. A butterfly computes w = w_n^a once and its powers w^r as products in
// double (a few ulps of double at most); fft_radix_any steps along its sum the same way. Measured on an H200
// (2026-11-27), this costs a quarter of a 4096-point shared-memory transform's time, and a table of the n values
// read instead was slower still (70 against 62 us for 1024 rows; 1.07 against 0.65 ms for one 2^24 row, whose
// table does not stay in cache).

typedef DST_T fc_t;
typedef fc_t::value_type fr_t;
typedef Complex<double> fd_t;

// exp(-2 pi i a / b) (forward) or exp(+2 pi i a / b) (inverse), 0 <= a < b, in double (exact at the quarter turns)
__device__ __forceinline__ fd_t fft_root(i64 a, i64 b, i64 inverse) {
  double s, c;
  sincospi(2.0 * (double(a) / double(b)), &s, &c);
  return fd_t(c, inverse ? s : -s);
}

// exp(-+2 pi i a / n) with two_over_n = 2.0 / n (a pass's twiddles: a product instead of a division per call)
__device__ __forceinline__ fd_t fft_twiddle(i64 a, double two_over_n, i64 inverse) {
  double s, c;
  sincospi(double(a) * two_over_n, &s, &c);
  return fd_t(c, inverse ? s : -s);
}

__device__ __forceinline__ fc_t fft_round(fd_t w) { return fc_t(fr_t(w.re), fr_t(w.im)); }

__device__ __forceinline__ fc_t fft_scaled(fc_t v, fr_t s) { return fc_t(v.re * s, v.im * s); }

// Note [Butterflies]
// The R-point DFT of a butterfly, in place: radix 2, 4 and 8 as additions and multiplications by -+i (swaps) and
// sqrt(1/2) only (8 = two 4-point DFTs and a radix-2 step), as pocketfft's and cuFFT's; 3, 5 and 7 as the sum
// over the roots w_R^x (computed once per thread and pass). `inverse` flips the roots' sign.
__device__ __forceinline__ fc_t fft_rot(fc_t z, bool inverse) {  // z * w_4 = z * (-i), or z * i inverse
  return inverse ? fc_t(-z.im, z.re) : fc_t(z.im, -z.re);
}

__device__ __forceinline__ void fft_dft4(fc_t& a, fc_t& b, fc_t& c, fc_t& d, bool inverse) {
  const fc_t t0 = a + c, t1 = a - c, t2 = b + d, t3 = fft_rot(b - d, inverse);
  a = t0 + t2;
  c = t0 - t2;
  b = t1 + t3;
  d = t1 - t3;
}

template <int R> struct FftDft {
  fc_t root[R];  // w_R^x
  __device__ __forceinline__ explicit FftDft(bool inverse) {
#pragma unroll
    for (int x = 0; x < R; ++x) root[x] = fft_round(fft_root(x, R, inverse));
  }
  __device__ __forceinline__ void operator()(fc_t (&v)[R], bool) const {
    fc_t y[R];
#pragma unroll
    for (int q = 0; q < R; ++q) {
      y[q] = v[0];
#pragma unroll
      for (int r = 1; r < R; ++r) y[q] += v[r] * root[(r * q) % R];
    }
#pragma unroll
    for (int q = 0; q < R; ++q) v[q] = y[q];
  }
};

template <> struct FftDft<2> {
  __device__ __forceinline__ explicit FftDft(bool) {}
  __device__ __forceinline__ void operator()(fc_t (&v)[2], bool) const {
    const fc_t a = v[0];
    v[0] = a + v[1];
    v[1] = a - v[1];
  }
};

template <> struct FftDft<4> {
  __device__ __forceinline__ explicit FftDft(bool) {}
  __device__ __forceinline__ void operator()(fc_t (&v)[4], bool inverse) const {
    fft_dft4(v[0], v[1], v[2], v[3], inverse);
  }
};

template <> struct FftDft<8> {
  __device__ __forceinline__ explicit FftDft(bool) {}
  __device__ __forceinline__ void operator()(fc_t (&v)[8], bool inverse) const {
    const fr_t h = fr_t(0.70710678118654752440);  // sqrt(1/2)
    fc_t e0 = v[0], e1 = v[2], e2 = v[4], e3 = v[6], o0 = v[1], o1 = v[3], o2 = v[5], o3 = v[7];
    fft_dft4(e0, e1, e2, e3, inverse);
    fft_dft4(o0, o1, o2, o3, inverse);
    // o_q *= w_8^q: w_8 = sqrt(1/2) (1 -+ i), w_8^2 = -+i, w_8^3 = sqrt(1/2) (-1 -+ i)
    const fc_t r1 = fft_rot(o1, inverse), r3 = fft_rot(o3, inverse);
    o1 = fc_t((o1.re + r1.re) * h, (o1.im + r1.im) * h);
    o2 = fft_rot(o2, inverse);
    o3 = fc_t((r3.re - o3.re) * h, (r3.im - o3.im) * h);
    v[0] = e0 + o0;
    v[4] = e0 - o0;
    v[1] = e1 + o1;
    v[5] = e1 - o1;
    v[2] = e2 + o2;
    v[6] = e2 - o2;
    v[3] = e3 + o3;
    v[7] = e3 - o3;
  }
};

// v[r] *= w^r for r = 1 .. R-1, w = w_n^a (Note [Twiddles in double])
template <int R>
__device__ __forceinline__ void fft_twiddle_entries(fc_t (&v)[R], i64 a, double two_over_n, i64 inverse) {
  const fd_t w1 = fft_twiddle(a, two_over_n, inverse);
  fd_t w = w1;
#pragma unroll
  for (int r = 1; r < R; ++r) {
    v[r] = v[r] * fft_round(w);
    if (r + 1 < R) w = w * w1;
  }
}
