// Fast Fourier transforms of contiguous (batch, n) complex rows (Note [CUDA FFT] in fft_ops.py). DST_T is the
// complex type (complex64_t / complex128_t, complex.cuh); every kernel takes one struct.
//
// fft_radix<R>   one Stockham pass of radix R (2, 3, 4, 5, 7, 8): a thread per R-point butterfly
// fft_radix_any  one Stockham pass of any radix (the other primes up to BLUESTEIN_ABOVE): a thread per output
// fft_bluestein  Bluestein's steps around a power-of-two convolution: the conjugate chirp filter, the
//                pre-multiply and zero-pad, the product with the filter's spectrum, the post-multiply
// fft_hermitian  a onesided spectrum (h entries a row) extended to all n by Hermitian symmetry (for c2r)
// fft_smem       whole transforms of short rows in shared memory, r2c / c2r fused (Note [Shared-memory FFT])
// fft_big        one pass of a large radix for long rows, its butterflies in shared memory (Note [Big Stockham passes])
//
// The roots, twiddles and butterflies (Notes [Twiddles in double], [Butterflies]) are in fft_butterflies.cuh.

struct FftStage {
  const fc_t* in;  // batch x n, contiguous
  fc_t* out;       // batch x n, contiguous (another buffer: Stockham passes are out of place)
  i64 batch, n;
  i64 ns;          // the product of the radices of the passes before this one
  i64 radix;       // fft_radix_any only (the others have it as R)
  i64 total;       // threads: batch * n / R (fft_radix<R>), batch * n (fft_radix_any)
  i64 inverse;     // 1: exp(+...) twiddles
  double scale;    // applied to every output (the normalization, on a transform's last pass; else 1)
};

// Note [Stockham pass]
// Pass p of radix R over a length n = R_1 ... R_k, with ns = R_1 ... R_{p-1}: butterfly j (of n / R) reads
// in[j + r (n / R)] for r < R, multiplies entry r by w_n^(r * (j mod ns) * n / (ns R)), takes the R-point DFT
// and writes output q to out[(j - j mod ns) R + j mod ns + q ns]. After the last pass the output is in
// natural order (the auto-sort: no bit reversal). Reads are coalesced across j; writes are coalesced in
// runs of ns (all but the first pass).
template <int R, class I>
__device__ __forceinline__ void fft_pass(const FftStage& p) {
  const I n = I(p.n), m = n / I(R), ns = I(p.ns), ts = n / (ns * I(R)), total = I(p.total);
  const FftDft<R> dft(p.inverse);
  const double two_over_n = 2.0 / double(p.n);
  const fr_t scale = fr_t(p.scale);
  for (I t = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); t < total; t += I(gridDim.x) * I(blockDim.x)) {
    const I b = t / m, j = t - b * m, k = j % ns;
    const fc_t* in = p.in + i64(b) * i64(n);
    fc_t* out = p.out + i64(b) * i64(n);
    fc_t v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) v[r] = in[j + I(r) * m];
    if (k != 0) fft_twiddle_entries<R>(v, i64(k) * i64(ts), two_over_n, p.inverse);
    dft(v, p.inverse);
    const I base = (j - k) * I(R) + k;
#pragma unroll
    for (int q = 0; q < R; ++q) out[base + I(q) * ns] = fft_scaled(v[q], scale);
  }
}

template <class I>
__device__ __forceinline__ void fft_pass_any(const FftStage& p) {
  const I n = I(p.n), R = I(p.radix), m = n / R, ns = I(p.ns), ts = n / (ns * R), total = I(p.total);
  const fr_t scale = fr_t(p.scale);
  for (I t = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); t < total; t += I(gridDim.x) * I(blockDim.x)) {
    const I b = t / n, rest = t - b * n, q = rest / m, j = rest - q * m, k = j % ns;
    const fc_t* in = p.in + i64(b) * i64(n);
    // entry r's factor is w_n^(r (k ts + q m)): the twiddle times the DFT's root (w_R^(rq) = w_n^(rqm))
    const fd_t step = fft_root((i64(k) * i64(ts) + i64(q) * i64(m)) % i64(n), n, p.inverse);
    fd_t w(1.0, 0.0);
    fc_t y(fr_t(0), fr_t(0));
    for (I r = 0; r < R; ++r) {
      y += in[j + r * m] * fft_round(w);
      w = w * step;
    }
    p.out[i64(b) * i64(n) + i64((j - k) * R + k + q * ns)] = fft_scaled(y, scale);
  }
}

#define FFT_PASS(R)                                                                        \
  extern "C" __global__ void fft_radix##R##_i32(FftStage p) { fft_pass<R, unsigned>(p); } \
  extern "C" __global__ void fft_radix##R##_i64(FftStage p) { fft_pass<R, i64>(p); }
FFT_PASS(2)
FFT_PASS(3)
FFT_PASS(4)
FFT_PASS(5)
FFT_PASS(7)
FFT_PASS(8)
#undef FFT_PASS
extern "C" __global__ void fft_radix_any_i32(FftStage p) { fft_pass_any<unsigned>(p); }
extern "C" __global__ void fft_radix_any_i64(FftStage p) { fft_pass_any<i64>(p); }

// Bluestein's chirp c[k] = exp(-+pi i k^2 / n): k^2 is reduced mod 2n in integers first, so the angle is
// exact for any k < n (2^31 > n)
__device__ __forceinline__ fd_t fft_chirp(i64 k, i64 n, i64 inverse) {
  double s, c;
  sincospi(double((k * k) % (2 * n)) / double(n), &s, &c);
  return fd_t(c, inverse ? s : -s);
}

struct FftBluestein {
  const fc_t* x;  // step 1: the input rows (batch x n); step 3: the convolution (batch x m)
  fc_t* y;        // step 0: the filter (m); 1: the padded rows (batch x m); 2: the spectra, in place; 3: the output
  const fc_t* f;  // step 2: the filter's spectrum (m entries)
  i64 batch, n, m;
  i64 inverse;
  i64 step;       // 0 the filter, 1 pre-multiply and pad, 2 multiply by the filter's spectrum, 3 post-multiply
  double scale;   // step 0: 1 / m (the inner inverse transform's); step 3: the normalization
};

// X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]): the sum is a circular convolution of length m >= 2n - 1 with the
// filter b[l] = conj(c[l]) for |l| < n (index l mod m), zero between.
extern "C" __global__ void fft_bluestein(FftBluestein p) {
  const i64 row = p.step == 3 ? p.n : p.m, total = (p.step == 0 ? 1 : p.batch) * row;
  for (i64 t = i64(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += i64(gridDim.x) * blockDim.x) {
    const i64 b = t / row, k = t - b * row;
    if (p.step == 0) {
      const i64 at = k < p.n ? k : (k > p.m - p.n ? p.m - k : -1);
      const fd_t c = at >= 0 ? fft_chirp(at, p.n, p.inverse) : fd_t(0.0, 0.0);
      p.y[t] = fc_t(fr_t(c.re * p.scale), fr_t(-c.im * p.scale));
    } else if (p.step == 1) {
      p.y[t] = k < p.n ? p.x[b * p.n + k] * fft_round(fft_chirp(k, p.n, p.inverse)) : fc_t(fr_t(0), fr_t(0));
    } else if (p.step == 2) {
      p.y[t] = p.y[t] * p.f[k];
    } else {
      p.y[t] = fft_scaled(p.x[b * p.m + k] * fft_round(fft_chirp(k, p.n, p.inverse)), fr_t(p.scale));
    }
  }
}

struct FftHermitian {
  const fc_t* x;  // batch x h (h >= n / 2 + 1), contiguous
  fc_t* y;        // batch x n, contiguous
  i64 batch, h, n;
};

extern "C" __global__ void fft_hermitian(FftHermitian p) {
  const i64 total = p.batch * p.n;
  for (i64 t = i64(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += i64(gridDim.x) * blockDim.x) {
    const i64 b = t / p.n, k = t - b * p.n;
    if (2 * k <= p.n) {
      p.y[t] = p.x[b * p.h + k];
    } else {
      const fc_t v = p.x[b * p.h + (p.n - k)];
      p.y[t] = fc_t(v.re, -v.im);
    }
  }
}

// Note [Shared-memory FFT]
// A row whose two buffers fit SMEM_MAX_BYTES (fft_ops.py) is transformed in one launch: a block loads `rows`
// whole rows into shared memory (coalesced, FFT_STAGE loads in flight a thread), runs every Stockham pass there
// (two buffers, a barrier between passes) and writes the rows back, so the data crosses global memory once each
// way instead of once per pass. The load and store have forms that fuse r2c and c2r: a real input row (the
// imaginary parts zero), a onesided input extended by Hermitian symmetry, only the first out_cols outputs kept
// (the onesided half), or only the real parts kept. Launch bounds hold a thread to the registers that let two
// of the largest blocks share an SM (64 for complex64, 128 for complex128; no spills, the NVRTC tier checks):
// without them a 512-thread block took 78 and had an SM to itself, and the load phase ran at 0.6x a copy.
// Measured on an H200 (2026-11-27), 1024 rows of 4096 complex64: 55 us, of which the load and store are 24
// (torch's copy of the same tensor: 18.5), the twiddles 13; cuFFT takes 24.
struct FftSmem {
  const void* in;  // rows of in_row elements (complex; real when load == 1)
  void* out;       // rows of out_row elements (complex; real when store == 1)
  i64 batch, n;
  i64 rows;        // rows per block (the dynamic shared memory: two buffers of fft_pad(rows * n) values)
  i64 in_row, out_row;
  i64 load;        // 0 complex, 1 real, 2 a onesided spectrum (n / 2 + 1 entries read) extended to n,
                   // 3 / 4 the packed real transforms' (Note [Packed real transforms]: n is half the signal)
  i64 store;       // 0 complex (the first out_cols entries), 1 the real parts (n entries), 2 / 3 packed
  i64 out_cols;
  i64 inverse;
  i64 code;        // the radices, 4 bits each, first pass lowest; 0 ends the list
  double scale;
};

// Shared-memory index i padded by one entry every 8: butterfly outputs written at a stride of R entries (the
// first passes) then fall in different banks instead of a handful.
__device__ __forceinline__ int fft_pad(int i) { return i + (i >> 3); }

template <int R>
__device__ __forceinline__ void fft_smem_pass(const fc_t* a, fc_t* b, int n, int ns, int nr, i64 inverse) {
  const int m = n / R, ts = n / (ns * R);
  const FftDft<R> dft(inverse);
  const double two_over_n = 2.0 / double(n);
  for (int e = threadIdx.x; e < nr * m; e += blockDim.x) {
    const int row = e / m, j = e - row * m, k = j % ns;
    fc_t v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) v[r] = a[fft_pad(row * n + j + r * m)];
    if (k != 0) fft_twiddle_entries<R>(v, i64(k) * ts, two_over_n, inverse);
    dft(v, inverse);
    const int base = row * n + (j - k) * R + k;
#pragma unroll
    for (int q = 0; q < R; ++q) b[fft_pad(base + q * ns)] = v[q];
  }
}

#define FFT_STAGE 8  // global loads a thread keeps in flight in fft_smem's load phase

// Note [Packed real transforms]
// A real signal x of even length 2h is transformed as the complex signal z[m] = x[2m] + i x[2m+1] of length h,
// so the passes do half the work: with Z = FFT_h(z), the spectrum is X[k] = E[k] + w^k O[k] (w = w_2h) where
// E[k] = (Z[k] + conj Z[h-k]) / 2 and O[k] = -i (Z[k] - conj Z[h-k]) / 2 (indices mod h), for k = 0 .. h
// (store form 2). The inverse runs backwards: Z[k] = S + i w^-k D with S, D = X[k] +- conj X[h-k] (load form 4;
// the factor 2 makes the unnormalized transform's scale), and x[2m], x[2m+1] are the real and imaginary parts of
// IFFT_h(Z) (store form 3). The imaginary parts of X[0] and X[h] are dropped on load, so the result is the real
// part of the Hermitian-extended inverse, as the unpacked c2r's (and pocketfft's).

// entry k of row r of fft_smem's input as complex (e = r n + k): real, Hermitian-extended or as stored, or the
// packed forms (Note [Packed real transforms]; n is h there)
__device__ __forceinline__ fc_t fft_load(const FftSmem& p, i64 row0, int e, int n) {
  const int row = e / n, k = e - row * n;
  const i64 at = (row0 + row) * p.in_row;
  if (p.load == 1) return fc_t(static_cast<const fr_t*>(p.in)[at + k], fr_t(0));
  if (p.load == 2 && 2 * k > n) {
    const fc_t v = static_cast<const fc_t*>(p.in)[at + (n - k)];
    return fc_t(v.re, -v.im);
  }
  if (p.load == 3) {
    const fr_t* x = static_cast<const fr_t*>(p.in) + at + 2 * k;
    return fc_t(x[0], x[1]);
  }
  if (p.load == 4) {
    const fc_t* X = static_cast<const fc_t*>(p.in) + at;
    fc_t xk = X[k], xm = X[n - k];
    if (k == 0) {
      xk.im = fr_t(0);
      xm.im = fr_t(0);
    }
    const fc_t xm_conj(xm.re, -xm.im);
    const fc_t d = (xk - xm_conj) * fft_round(fft_twiddle(k, 1.0 / double(n), 1));
    return xk + xm_conj + fc_t(-d.im, d.re);
  }
  return static_cast<const fc_t*>(p.in)[at + k];
}

// Every pass of an n-point transform of nr rows in shared memory (`code`: the radices, 4 bits each), from buffer a
// (loaded, the block synchronized) through b and back; returns the buffer holding the result.
__device__ __forceinline__ fc_t* fft_smem_passes(fc_t* a, fc_t* b, int n, int nr, i64 code, i64 inverse) {
  int ns = 1;
  for (; code != 0; code >>= 4) {
    const int R = int(code & 15);
    switch (R) {
      case 2: fft_smem_pass<2>(a, b, n, ns, nr, inverse); break;
      case 3: fft_smem_pass<3>(a, b, n, ns, nr, inverse); break;
      case 4: fft_smem_pass<4>(a, b, n, ns, nr, inverse); break;
      case 5: fft_smem_pass<5>(a, b, n, ns, nr, inverse); break;
      case 7: fft_smem_pass<7>(a, b, n, ns, nr, inverse); break;
      default: fft_smem_pass<8>(a, b, n, ns, nr, inverse); break;
    }
    __syncthreads();
    fc_t* t = a;
    a = b;
    b = t;
    ns *= R;
  }
  return a;
}

// Two blocks of the largest size (fft_ops.smem_max_threads) fit an SM's registers, without spills
#define FFT_SMEM_THREADS (sizeof(fr_t) == 4 ? 512 : 256)

extern "C" __global__ void __launch_bounds__(FFT_SMEM_THREADS, 2) fft_smem(FftSmem p) {
  extern __shared__ __align__(16) unsigned char fft_shared[];
  const int n = int(p.n), rows = int(p.rows);
  const fr_t scale = fr_t(p.scale);
  for (i64 row0 = i64(blockIdx.x) * rows; row0 < p.batch; row0 += i64(gridDim.x) * rows) {
    const int nr = int(p.batch - row0 < rows ? p.batch - row0 : rows);
    fc_t* a = reinterpret_cast<fc_t*>(fft_shared);
    fc_t* b = a + fft_pad(rows * n);
    // FFT_STAGE loads in registers before any shared store: the loads are in flight together (a shared store
    // through a generic pointer would otherwise keep the compiler from moving the next load above it)
    for (int e0 = threadIdx.x; e0 < nr * n; e0 += FFT_STAGE * blockDim.x) {
      fc_t staged[FFT_STAGE];
#pragma unroll
      for (int u = 0; u < FFT_STAGE; ++u) {
        const int e = e0 + u * blockDim.x;
        if (e < nr * n) staged[u] = fft_load(p, row0, e, n);
      }
#pragma unroll
      for (int u = 0; u < FFT_STAGE; ++u) {
        const int e = e0 + u * blockDim.x;
        if (e < nr * n) a[fft_pad(e)] = staged[u];
      }
    }
    __syncthreads();
    a = fft_smem_passes(a, b, n, nr, p.code, p.inverse);
    const int cols = p.store == 1 || p.store == 3 ? n : int(p.out_cols);
    for (int e = threadIdx.x; e < nr * cols; e += blockDim.x) {
      const int row = e / cols, k = e - row * cols;
      const i64 at = (row0 + row) * p.out_row;
      if (p.store == 2) {  // the packed r2c's spectrum, k = 0 .. n (Note [Packed real transforms])
        const fc_t z = a[fft_pad(row * n + (k == n ? 0 : k))], zm = a[fft_pad(row * n + (k == 0 ? 0 : n - k))];
        const fc_t zm_conj(zm.re, -zm.im), sum = z + zm_conj, dif = z - zm_conj;
        const fc_t odd = fc_t(dif.im, -dif.re) * fft_round(fft_twiddle(k, 1.0 / double(n), 0));
        static_cast<fc_t*>(p.out)[at + k] = fft_scaled(sum + odd, scale * fr_t(0.5));
        continue;
      }
      const fc_t v = a[fft_pad(row * n + k)];
      if (p.store == 1) {
        static_cast<fr_t*>(p.out)[at + k] = v.re * scale;
      } else if (p.store == 3) {
        static_cast<fr_t*>(p.out)[at + 2 * k] = v.re * scale;
        static_cast<fr_t*>(p.out)[at + 2 * k + 1] = v.im * scale;
      } else {
        static_cast<fc_t*>(p.out)[at + k] = fft_scaled(v, scale);
      }
    }
    __syncthreads();  // the next rows' load overwrites a
  }
}

// Note [Big Stockham passes]
// A row too long for one block is transformed in a few passes of a large radix R (up to BIG_RADIX_MAX, a product of
// the special radices), each one launch: a Stockham pass (Note [Stockham pass]) whose R-point butterflies are
// whole transforms in shared memory. A block takes `rows` consecutive butterflies j: it loads in[j + r (n / R)]
// for r < R -- for each r the block's butterflies are consecutive entries, so the loads coalesce across them --
// multiplies entry r by the pass's twiddle w_n^(r (j mod ns) n / (ns R)) (computed in double, Note [Twiddles in
// double]), runs the R-point transform of every butterfly in shared memory (fft_smem_passes, the radix code of R)
// and writes output q to out[(j - j mod ns) R + j mod ns + q ns]: in the first pass (ns = 1) each butterfly's R
// outputs are consecutive; later (ns >= rows) the block's butterflies are consecutive for each q. A 2^24-point
// row takes four passes of radix 64 instead of eight of radix 8. Measured on an H200 (2026-11-27, complex64):
// 0.53 against 0.65 ms for one 2^24 row, 112 against 140 us for 16 rows of 2^18, no gain for 8 rows of 2^20;
// a pass costs more than its memory traffic (the in-block passes' index arithmetic and twiddles), so radices
// above 128 were slower (a 2^24 row in three passes of 256: 0.67 ms), and cuFFT stays 2-3x faster.
struct FftBig {
  const fc_t* in;  // batch x n
  fc_t* out;       // batch x n (another buffer)
  i64 batch, n;    // the rows' count and length
  i64 radix;       // R: this pass's butterflies are R-point transforms (in shared memory)
  i64 ns;          // the product of the radices of the passes before this one
  i64 rows;        // butterflies per block (the shared memory holds two buffers of fft_pad(rows * R))
  i64 inverse;
  i64 code;        // R's radices (as FftSmem's)
  double scale;
};

#define FFT_BIG_STAGE 4  // fft_big's loads in flight a thread (8 spill under the launch bounds)

extern "C" __global__ void __launch_bounds__(FFT_SMEM_THREADS, 2) fft_big(FftBig p) {
  extern __shared__ __align__(16) unsigned char fft_shared[];
  // A row is shorter than 2^31 and m = n / R >= rows (fft_ops._big_plan), so a block's butterflies span at most
  // two rows and their indices within a row are ints: one 64-bit division a block. rows divides blockDim, so a
  // thread keeps its butterfly (row) in the load and in the later passes' store, and steps r (q) by
  // blockDim / rows: no division per entry, and its twiddles are powers of one (Note [Twiddles in double]).
  const int R = int(p.radix), rows = int(p.rows), m = int(p.n / p.radix), ns = int(p.ns), ts = int(p.n / (p.ns * R));
  const i64 n = p.n, butterflies = p.batch * m;
  const double two_over_n = 2.0 / double(n);
  const fr_t scale = fr_t(p.scale);
  const int row = int(threadIdx.x) % rows, step = int(blockDim.x) / rows, r0 = int(threadIdx.x) / rows;
  for (i64 g0 = i64(blockIdx.x) * rows; g0 < butterflies; g0 += i64(gridDim.x) * rows) {
    const int nr = int(butterflies - g0 < rows ? butterflies - g0 : rows);
    const i64 b0 = g0 / m;
    const int j0 = int(g0 - b0 * m), jr = j0 + row, j = jr < m ? jr : jr - m, k = j % ns;
    const i64 base = (jr < m ? b0 : b0 + 1) * n;
    fc_t* a = reinterpret_cast<fc_t*>(fft_shared);
    fc_t* b = a + fft_pad(rows * R);
    if (row < nr) {
      const fc_t* in = p.in + base + j;
      fd_t w = fft_twiddle(i64(r0) * k * ts, two_over_n, p.inverse);  // w_n^(r k ts), r = r0, r0 + step, ...
      const fd_t w_step = fft_twiddle(i64(step) * k * ts % n, two_over_n, p.inverse);
      for (int r1 = r0; r1 < R; r1 += FFT_BIG_STAGE * step) {
        fc_t staged[FFT_BIG_STAGE];
#pragma unroll
        for (int u = 0; u < FFT_BIG_STAGE; ++u) {
          const int r = r1 + u * step;
          if (r < R) staged[u] = in[i64(r) * m];
        }
#pragma unroll
        for (int u = 0; u < FFT_BIG_STAGE; ++u) {
          const int r = r1 + u * step;
          if (r < R) {
            a[fft_pad(row * R + r)] = k == 0 ? staged[u] : staged[u] * fft_round(w);
            w = w * w_step;
          }
        }
      }
    }
    __syncthreads();
    a = fft_smem_passes(a, b, R, nr, p.code, p.inverse);
    if (ns == 1) {  // the block's outputs are one contiguous span: out[(j0 + row) R + q] = e
      fc_t* out = p.out + b0 * n + i64(j0) * R;
      for (int e = threadIdx.x; e < nr * R; e += blockDim.x) out[e] = fft_scaled(a[fft_pad(e)], scale);
    } else if (row < nr) {
      fc_t* out = p.out + base + i64(j - k) * R + k;
      for (int q = r0; q < R; q += step) out[i64(q) * ns] = fft_scaled(a[fft_pad(row * R + q)], scale);
    }
    __syncthreads();  // the next butterflies' load overwrites a
  }
}
