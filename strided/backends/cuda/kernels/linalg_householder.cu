// Householder QR (Note [Fused Householder QR] in linalg_orthogonal_ops.py, Note [Blocked Householder QR] in
// linalg_blocked_qr.py). SCALAR_T (float or double) is #defined.
//
// householder_qr     LAPACK's geqr2 then org2r, one thread block per matrix (small matrices and batches of them).
//                    blockDim.x is a multiple of 32, at most 1024. The matrix works column-major (W[c * m + i] =
//                    A[i][c]: a column is contiguous), scaled by a power of two so that its largest |entry| is in
//                    [0.5, 1) (exact, so no square over- or underflows and R is scaled back exactly). Column j: its
//                    norm below the diagonal is a block sum, the reflector is dlarfg's, and a warp per trailing
//                    column applies it (w = v^T y, y -= tau w v). v stays below the diagonal, tau in shared memory.
//                    Q = H_0 (H_1 (... (H_{k-1} I))) is built backwards, as org2r, in a column-major workspace.
// householder_scale  the blocked path's first step: S = A 2^-e with householder_qr's exponent e (any strides).
// householder_panel  the blocked path's panel: geqr2 of w <= HQR_NB columns of the working matrix, one block per
//                    matrix, writing R's rows of the panel, V (column-major), tau and T (larft: H_0 ... H_{w-1} =
//                    I - V T V^T). See the comment above the kernel.

typedef SCALAR_T scalar_t;

// The e of max |A| = f 2^e with f in [0.5, 1): the matrix works as A 2^-e. 0 for a zero, NaN or infinite maximum
// (no scaling: NaN / inf then propagate).
__device__ __forceinline__ int qr_scale_exponent(scalar_t top) {
  int e = 0;
  if (top > scalar_t(0) && isfinite(top)) frexp(top, &e);
  return e;
}

__device__ __forceinline__ scalar_t qr_warp_sum(scalar_t v) {
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

// Every thread gets the block's sum (or max, ignoring NaN), combined in a fixed order. Called by all threads.
__device__ scalar_t qr_block_reduce(scalar_t v, scalar_t* scratch, bool take_max) {
  for (int m = 16; m > 0; m >>= 1) {
    const scalar_t u = __shfl_xor_sync(0xffffffffu, v, m);
    v = take_max ? fmax(v, u) : v + u;
  }
  __syncthreads();  // the previous call's readers are done with scratch
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  scalar_t r = scratch[0];
  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) r = take_max ? fmax(r, scratch[w]) : r + scratch[w];
  return r;
}

// y <- (I - tau v v^T) y for the column y (rows j.. of a column of length m), v = [1; W below row j]: the warp's
// lanes share the rows (LAPACK's dlarf: w = v^T y, then y += v (-tau w)). Called by all 32 lanes.
__device__ __forceinline__ void qr_reflect(const scalar_t* v, scalar_t* y, scalar_t tau, i64 j, i64 m, int lane) {
  scalar_t d = lane == 0 ? y[j] : scalar_t(0);
  for (i64 i = j + 1 + lane; i < m; i += 32) d += v[i] * y[i];
  const scalar_t f = -tau * qr_warp_sum(d);
  if (lane == 0) y[j] += f;
  for (i64 i = j + 1 + lane; i < m; i += 32) y[i] += v[i] * f;
}

struct HouseholderQrArgs {
  const scalar_t* A;  // (batch, m, n) contiguous
  scalar_t* Q;        // (batch, m, qcols), null without Q
  scalar_t* R;        // (batch, rrows, n)
  scalar_t* work;     // (batch, ws_stride): W then Qt, those not in shared memory; null when none
  i64 m;
  i64 n;
  i64 qcols;          // k (reduced) or m (complete); 0 without Q
  i64 rrows;          // k (reduced) or m (complete)
  i64 w_shared;       // W works in shared memory
  i64 q_shared;       // Qt works in shared memory (after W)
  i64 ws_stride;      // elements of work per matrix
};

extern "C" __global__ void __launch_bounds__(1024) householder_qr(const HouseholderQrArgs p) {
  extern __shared__ __align__(16) unsigned char linalg_smem[];
  __shared__ scalar_t scratch[32];
  const i64 m = p.m, n = p.n, qcols = p.qcols, b = blockIdx.x;
  const i64 mn = m * n, qm = qcols * m;
  const int tid = threadIdx.x, T = blockDim.x, lane = tid & 31, warp = tid >> 5, nwarps = T >> 5;
  scalar_t* smem = (scalar_t*)linalg_smem;
  scalar_t* ws = p.work ? p.work + b * p.ws_stride : nullptr;
  scalar_t* W = p.w_shared ? smem : ws;
  scalar_t* Qt = p.q_shared ? smem + (p.w_shared ? mn : 0) : ws + (p.w_shared ? 0 : mn);  // Qt[c * m + i] = Q[i][c]
  scalar_t* tau = smem + (p.w_shared ? mn : 0) + (p.q_shared ? qm : 0);                   // k entries
  const scalar_t* A = p.A + b * mn;

  scalar_t top = 0;
  for (i64 idx = tid; idx < mn; idx += T) {
    const i64 i = idx / n, c = idx - i * n;
    const scalar_t x = A[idx];
    W[c * m + i] = x;
    top = fmax(top, fabs(x));
  }
  top = qr_block_reduce(top, scratch, true);
  const int e = qr_scale_exponent(top);  // A = 2^e (A 2^-e)
  if (e != 0) {
    for (i64 idx = tid; idx < mn; idx += T) W[idx] = ldexp(W[idx], -e);
  }
  __syncthreads();

  // geqr2: reflectors for the columns that have rows below the diagonal (tau = 0 for the others)
  const i64 nref = m - 1 < n ? m - 1 : n;
  for (i64 j = 0; j < nref; ++j) {
    scalar_t* x = W + j * m;
    const scalar_t alpha = x[j];
    scalar_t part = 0;
    for (i64 i = j + 1 + tid; i < m; i += T) part += x[i] * x[i];
    const scalar_t xnorm2 = qr_block_reduce(part, scratch, false);  // its barriers: alpha is read everywhere
    scalar_t t = 0, beta = alpha;  // dlarfg: H = I when nothing below the diagonal is nonzero
    if (xnorm2 != scalar_t(0)) {   // (NaN goes on, and propagates)
      beta = -copysign(hypot(alpha, sqrt(xnorm2)), alpha);
      t = (beta - alpha) / beta;
      const scalar_t scal = scalar_t(1) / (alpha - beta);
      for (i64 i = j + 1 + tid; i < m; i += T) x[i] *= scal;
    }
    if (tid == 0) {
      x[j] = beta;
      tau[j] = t;
    }
    __syncthreads();
    if (t != scalar_t(0)) {  // the same t in every thread
      for (i64 c = j + 1 + warp; c < n; c += nwarps) qr_reflect(x, W + c * m, t, j, m, lane);
    }
    __syncthreads();
  }

  for (i64 idx = tid; idx < p.rrows * n; idx += T) {  // R: the upper triangle, scaled back; 0 below
    const i64 i = idx / n, c = idx - i * n;
    p.R[b * p.rrows * n + idx] = i <= c ? ldexp(W[c * m + i], e) : scalar_t(0);
  }
  if (qcols == 0) return;  // (uniform, and no barrier follows in this case)

  // org2r: Q = H_0 (H_1 (... (H_{nref-1} I))); H_j changes only the columns j.. (the others are still e_c)
  for (i64 idx = tid; idx < qm; idx += T) {
    const i64 c = idx / m, i = idx - c * m;
    Qt[idx] = i == c ? scalar_t(1) : scalar_t(0);
  }
  __syncthreads();
  for (i64 j = nref - 1; j >= 0; --j) {
    const scalar_t t = tau[j];
    if (t == scalar_t(0)) continue;  // uniform (tau is in shared memory)
    for (i64 c = j + warp; c < qcols; c += nwarps) qr_reflect(W + j * m, Qt + c * m, t, j, m, lane);
    __syncthreads();
  }
  for (i64 idx = tid; idx < qm; idx += T) {
    const i64 i = idx / qcols, c = idx - i * qcols;
    p.Q[b * qm + idx] = Qt[c * m + i];
  }
}

// ---- the blocked path (Note [Blocked Householder QR] in linalg_blocked_qr.py) ------------------------------------

struct HouseholderScaleArgs {
  const scalar_t* A;    // (count, m, n), element strides sb, sr, sc
  scalar_t* S;          // (count, m, n) contiguous: A 2^-e
  const scalar_t* top;  // (count,): max |A| of each matrix
  i64 count;
  i64 m;
  i64 n;
  i64 sb;
  i64 sr;
  i64 sc;
};

extern "C" __global__ void __launch_bounds__(256) householder_scale(const HouseholderScaleArgs p) {
  const i64 mn = p.m * p.n, total = p.count * mn;
  for (i64 idx = blockIdx.x * (i64)blockDim.x + threadIdx.x; idx < total; idx += (i64)gridDim.x * blockDim.x) {
    const i64 b = idx / mn, r = idx - b * mn, i = r / p.n, c = r - i * p.n;
    p.S[idx] = ldexp(p.A[b * p.sb + i * p.sr + c * p.sc], -qr_scale_exponent(p.top[b]));
  }
}

// householder_panel: the panel P (rows = m - r0 rows, w <= HQR_NB columns) works column-major, in dynamic shared
// memory (ld = rows) or in place in its V block (ld = m). A thread owns the rows tid, tid + T, ... Step j needs,
// over the rows i > j, the Gram row g_c = sum x_i P[i][c] of x = column j (c = j: its squared norm); one pass over
// the rows does step j's work and adds the thread's part of step j + 1's Gram row, so each step reads the panel
// once:
//   alpha = P[j][j], dlarfg's beta, tau and scal = 1 / (alpha - beta) from ||x||^2 = g_j (tau = 0, scal = 1 when
//   it is 0); v = [1; scal x]; w_c = v^T y_c = P[j][c] + scal g_c (c > j); z_l = V_l^T v = P[j][l] + scal g_l (l < j,
//   the T column of larft: T[0:j][j] = -tau T[0:j][0:j] z, T[j][j] = tau; all 0 when tau = 0);
//   the pass: x_i <- scal x_i (V's column j), y_ic -= (tau v_i) w_c for c > j (skipped when tau = 0, as the fused
//   kernel), then the Gram row of the updated column j + 1 over the rows below j + 1.
// A warp sums its 32 columns in one transposing butterfly (lane c gets column c); the warps' sums go through shared
// memory and every warp adds them up in the same order, so all compute the same scalars and one barrier per column
// suffices (the Gram rows and row j + 1, which the pass changes, are double-buffered by the column's parity).
#define HQR_NB 32  // the widest panel: one column per lane
#define HQR_PANEL_THREADS 512
#define HQR_WARPS (HQR_PANEL_THREADS / 32)

struct HouseholderPanelArgs {
  const scalar_t* src;   // the panel: rows x w, row-major (row stride src_ld, batch stride src_bs)
  const scalar_t* prev;  // the previous panel's R rows right of it: prev_rows x (n - r0), row stride prev_ld
  scalar_t* R;           // (count, rrows, n)
  scalar_t* Vt;          // (count, k, m): Vt[c][i] = V[i][c]; this panel's V is Vt[r0 .. r0+w-1][r0 ..]
  scalar_t* T;           // (count, k, HQR_NB): this panel's T is T[r0 .. r0+w-1][0 .. w-1]
  scalar_t* tau;         // (count, k)
  const scalar_t* top;   // (count,): max |A| (the exponent of the scaling)
  i64 count;
  i64 m;
  i64 n;
  i64 k;
  i64 rrows;
  i64 src_bs;
  i64 src_ld;
  i64 prev_bs;
  i64 prev_ld;
  i64 prev_rows;         // 0: nothing to copy
  i64 r0;                // the panel's first row and column
  i64 w;                 // its width; 0: only the copy of prev (after the last panel)
  i64 in_shared;         // 1: P in dynamic shared memory; 0: in place in V
};

static_assert(HQR_NB == 32, "a panel column per lane");

// One round of hqr_transpose_sum: a[0 .. S-1] <- this lane's half of a[0 .. 2S-1] plus the partner's same half.
template <int S>
__device__ __forceinline__ void hqr_halve(scalar_t (&a)[HQR_NB], bool upper) {
#pragma unroll
  for (int i = 0; i < S; ++i) {
    const scalar_t lo = a[i], hi = a[i + S];  // (values, not a selected address: a stays in registers)
    a[i] = (upper ? hi : lo) + __shfl_xor_sync(0xffffffffu, upper ? lo : hi, S);
  }
}

// a[0] of lane l <- the warp's sum of a[l]: each round halves the array, swapping halves with the lane S apart.
__device__ __forceinline__ void hqr_transpose_sum(scalar_t (&a)[HQR_NB], int lane) {
  hqr_halve<16>(a, lane & 16);
  hqr_halve<8>(a, lane & 8);
  hqr_halve<4>(a, lane & 4);
  hqr_halve<2>(a, lane & 2);
  hqr_halve<1>(a, lane & 1);
}

// One pass of step j over the thread's rows (FIRST: j = -1, copying the panel in from S); acc gets the thread's part
// of step j + 1's Gram row and keep row j + 1 (the step's input). Rows above j are finished and skipped.
template <bool FIRST>
__device__ __forceinline__ void hqr_pass(scalar_t* P, i64 ld, const scalar_t* S, i64 sld, i64 rows, int w, int j,
                                         scalar_t tau, scalar_t scal, const scalar_t* wv, scalar_t* keep,
                                         scalar_t (&acc)[HQR_NB]) {
  const bool next = j + 1 < w, update = !FIRST && tau != scalar_t(0);
#pragma unroll
  for (int c = 0; c < HQR_NB; ++c) acc[c] = scalar_t(0);
  for (i64 i = threadIdx.x; i < rows; i += blockDim.x) {
    if (i < j) continue;
    scalar_t v = scalar_t(1);  // v_j at row i
    if (!FIRST && i > j) {
      v = P[j * ld + i] * scal;
      P[j * ld + i] = v;
    }
    const scalar_t tv = tau * v;
    scalar_t x = scalar_t(0);  // column j + 1 at row i, updated
    if (next) {
      x = FIRST ? S[i * sld] : P[(j + 1) * ld + i];
      if (update) x -= tv * wv[j + 1];
    }
    const bool gram = next && i > j + 1, kept = next && i == j + 1;
#pragma unroll
    for (int c = 0; c < HQR_NB; ++c) {
      if (c < w) {
        scalar_t y;
        if (c == j + 1) {
          y = x;
        } else if (c == j) {
          y = v;
        } else {
          y = FIRST ? S[i * sld + c] : P[c * ld + i];
          if (update && c > j) y -= tv * wv[c];
        }
        if (FIRST || c > j) P[c * ld + i] = y;
        if (kept) keep[c] = y;
        if (gram) acc[c] += y * x;
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(HQR_PANEL_THREADS) householder_panel(const HouseholderPanelArgs p) {
  extern __shared__ __align__(16) unsigned char hqr_smem[];
  __shared__ scalar_t red[2][HQR_WARPS][HQR_NB];  // the warps' Gram rows, by the parity of the step they feed
  __shared__ scalar_t rowbuf[2][HQR_NB];          // the panel's row j before step j, by the parity of j
  __shared__ scalar_t wvs[HQR_WARPS][HQR_NB];     // each warp's w_c (c > j) and z_l (l < j) of the step
  __shared__ scalar_t sT[HQR_NB][HQR_NB + 1];
  __shared__ scalar_t sbeta[HQR_NB];
  __shared__ scalar_t stau[HQR_NB];
  const int tid = threadIdx.x, nthreads = blockDim.x, lane = tid & 31, warp = tid >> 5, nwarps = nthreads >> 5;
  const i64 m = p.m, n = p.n, k = p.k, r0 = p.r0, rows = m - r0, cols = n - r0;
  const int w = (int)p.w;
  const i64 ld = p.in_shared ? rows : m;
  scalar_t acc[HQR_NB];
  for (i64 b = blockIdx.x; b < p.count; b += gridDim.x) {  // (uniform: every barrier is reached by all threads)
    const int e = qr_scale_exponent(p.top[b]);
    scalar_t* R = p.R + b * p.rrows * n;
    const scalar_t* G = p.prev + b * p.prev_bs;  // R's rows r0 - prev_rows .. r0 - 1 right of the previous panel
    for (i64 idx = tid; idx < p.prev_rows * cols; idx += nthreads) {
      const i64 i = idx / cols, c = idx - i * cols;
      R[(r0 - p.prev_rows + i) * n + r0 + c] = ldexp(G[i * p.prev_ld + c], e);
    }
    if (w == 0) continue;
    scalar_t* V = p.Vt + b * k * m + r0 * m + r0;  // V[c * m + i] = V_p[i][c]
    scalar_t* P = p.in_shared ? (scalar_t*)hqr_smem : V;
    hqr_pass<true>(P, ld, p.src + b * p.src_bs, p.src_ld, rows, w, -1, scalar_t(0), scalar_t(1), nullptr, rowbuf[0],
                   acc);
    hqr_transpose_sum(acc, lane);
    red[0][warp][lane] = acc[0];
    __syncthreads();
    for (int j = 0; j < w; ++j) {
      const int B = j & 1;
      scalar_t g = 0, xnorm2 = 0;  // Gram entry `lane` and the squared norm, summed in the same order everywhere
      for (int q = 0; q < nwarps; ++q) {
        g += red[B][q][lane];
        xnorm2 += red[B][q][j];
      }
      const scalar_t alpha = rowbuf[B][j];
      scalar_t beta = alpha, tau = 0, scal = 1;  // dlarfg: H = I when nothing below the diagonal is nonzero
      if (xnorm2 != scalar_t(0)) {               // (NaN goes on, and propagates)
        beta = -copysign(hypot(alpha, sqrt(xnorm2)), alpha);
        tau = (beta - alpha) / beta;
        scal = scalar_t(1) / (alpha - beta);
      }
      wvs[warp][lane] = rowbuf[B][lane] + scal * g;  // lane c > j: w_c; lane l < j: z_l
      __syncwarp();
      if (warp == 0) {  // T's column j: lane r holds row r
        scalar_t t = 0;
        for (int l = 0; l < j; ++l) {
          if (lane <= l) t += sT[lane][l] * wvs[0][l];
        }
        if (lane < j) sT[lane][j] = tau != scalar_t(0) ? -tau * t : scalar_t(0);
        if (lane == j) {
          sT[j][j] = tau;
          sbeta[j] = beta;
          stau[j] = tau;
        }
      }
      hqr_pass<false>(P, ld, nullptr, 0, rows, w, j, tau, scal, wvs[warp], rowbuf[B ^ 1], acc);
      if (j + 1 < w) {
        hqr_transpose_sum(acc, lane);
        red[B ^ 1][warp][lane] = acc[0];
      }
      __syncthreads();
    }
    // R's rows r0 .. r0 + w - 1 up to the panel's last column: 0 left of the diagonal, scaled back
    const i64 span = r0 + w;
    for (i64 idx = tid; idx < w * span; idx += nthreads) {
      const i64 i = idx / span, c = idx - i * span;
      scalar_t x = 0;
      if (c == r0 + i) x = ldexp(sbeta[i], e);
      if (c > r0 + i) x = ldexp(P[(c - r0) * ld + i], e);
      R[(r0 + i) * n + c] = x;
    }
    if (r0 + w == k) {  // the last panel: a complete R's rows below k are 0
      for (i64 idx = tid; idx < (p.rrows - k) * n; idx += nthreads) R[k * n + idx] = 0;
    }
    for (int idx = tid; idx < w * w; idx += nthreads) {
      const int r = idx / w, c = idx - r * w;
      p.T[(b * k + r0 + r) * HQR_NB + c] = r <= c ? sT[r][c] : scalar_t(0);
    }
    for (int j = tid; j < w; j += nthreads) p.tau[b * k + r0 + j] = stau[j];
    __syncthreads();  // (P's upper triangle was read: now it becomes V's zeros and unit diagonal)
    if (p.in_shared) {
      for (i64 idx = tid; idx < w * rows; idx += nthreads) {
        const i64 c = idx / rows, i = idx - c * rows;
        V[c * m + i] = i < c ? scalar_t(0) : i == c ? scalar_t(1) : P[c * ld + i];
      }
    } else {
      for (int idx = tid; idx < w * w; idx += nthreads) {
        const int c = idx / w, i = idx - c * w;
        if (i <= c) V[c * m + i] = i == c ? scalar_t(1) : scalar_t(0);
      }
    }
    __syncthreads();  // (before the next matrix reuses the shared arrays)
  }
}
