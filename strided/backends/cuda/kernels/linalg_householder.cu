// Householder QR (Note [Fused Householder QR] in linalg_orthogonal_ops.py): LAPACK's geqr2 then org2r, one
// thread block per matrix. SCALAR_T (float or double) is #defined. blockDim.x is a multiple of 32, at most 1024.
//
// The matrix works column-major (W[c * m + i] = A[i][c]: a column is contiguous), scaled by a power of two so
// that its largest |entry| is in [0.5, 1) (exact, so no square over- or underflows and R is scaled back
// exactly). Column j: its norm below the diagonal is a block sum, the reflector is dlarfg's, and a warp per
// trailing column applies it (w = v^T y, y -= tau w v). v stays below the diagonal, tau in shared memory.
// Q = H_0 (H_1 (... (H_{k-1} I))) is built backwards, as org2r, in a column-major workspace.

typedef SCALAR_T scalar_t;

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
  const i64 mn = m * n, qm = qcols * m, k = m < n ? m : n;
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
  int e = 0;  // A = 2^e (A 2^-e); 0 for a zero, NaN-only or non-finite maximum (NaN / inf then propagate)
  if (top > scalar_t(0) && isfinite(top)) frexp(top, &e);
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
