// Parallel cyclic Jacobi (Note [Fused Jacobi] in linalg_orthogonal_ops.py): the two-sided sweep behind eigh
// (symmetric_jacobi) and the one-sided (Hestenes) sweep behind svd (onesided_jacobi). SCALAR_T (float or
// double) and JACOBI_MAX_SWEEPS are #defined. One thread block per matrix runs every sweep; the convergence
// test is a block reduction, so the host never waits. blockDim.x is a multiple of 32, at most 1024.
//
// Round r of a sweep (r < M = N - 1, N = n rounded up to even, H = N / 2 pairs) pairs index (r + l) mod M
// with (r - l) mod M for l >= 1, and r with M for l = 0 (the circle method, Note [Parallel Jacobi ordering]):
// the H pairs are disjoint and the M rounds meet every pair once. For odd n, index M = n is the decoupled
// padding: its pair rotates nothing. Consecutive l give consecutive indices (mod M), so the threads of a warp
// touch neighbouring columns.

typedef SCALAR_T scalar_t;

__device__ __forceinline__ void jacobi_sincos(float x, float* s, float* c) { sincosf(x, s, c); }
__device__ __forceinline__ void jacobi_sincos(double x, double* s, double* c) { sincos(x, s, c); }

// Every lane gets the sum of the warp's 32 values (a butterfly: the same bits on every lane).
__device__ __forceinline__ scalar_t jacobi_warp_sum(scalar_t v) {
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

// Every thread gets the block's sum, added in a fixed order. Called by all threads (it has barriers).
__device__ scalar_t jacobi_block_sum(scalar_t v, scalar_t* scratch) {
  v = jacobi_warp_sum(v);
  __syncthreads();  // the previous call's readers are done with scratch
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  scalar_t s = 0;
  for (int w = 0; w < (int)(blockDim.x >> 5); ++w) s += scratch[w];
  return s;
}

// The pair l of round r (indices p, q; q == M is the padding index when n is odd).
__device__ __forceinline__ void jacobi_pair(int r, int l, int M, int& p, int& q) {
  p = (r + l) % M;
  q = l == 0 ? M : (r - l + M) % M;
}

// Note [Jacobi rotations]: J = [[c, s], [-s, c]] with tan(2 theta) = 2g / (b - a), |theta| <= pi / 4
// diagonalizes [[a, g], [g, b]] by J^T (.) J; the identity where g = 0.
__device__ __forceinline__ void jacobi_rotation(scalar_t a, scalar_t b, scalar_t g, scalar_t& c, scalar_t& s) {
  const scalar_t d = b - a;
  const scalar_t theta = scalar_t(0.5) * atan2(d >= scalar_t(0) ? 2 * g : -2 * g, fabs(d));
  jacobi_sincos(theta, &s, &c);
}

// Bytes of dynamic shared memory before the matrices: a round's (c, s, t) and (p, q), rounded up to 16.
__device__ __forceinline__ i64 jacobi_pair_bytes(int H) {
  return ((i64)H * (3 * sizeof(scalar_t) + 2 * sizeof(int)) + 15) & ~(i64)15;
}

struct SymmetricJacobiArgs {
  const scalar_t* S;  // (batch, n, n) contiguous, symmetric
  scalar_t* w;        // (batch, n) eigenvalues
  scalar_t* V;        // (batch, n, n) eigenvectors (columns)
  scalar_t* work;     // (batch, n, n) the working A when it is not in shared memory, else null
  i64 n;
  i64 group;          // threads per row of a round's update: a power of two <= 32
  i64 a_shared;       // A works in shared memory
  i64 v_shared;       // V works in shared memory (after A), copied to the output at the end
  double eps;
};

// Two-sided: A <- J^T A J, V <- V J, one round of disjoint pairs at a time, until ||offdiag(A)||_F <= eps ||S||_F
// (Note [Jacobi convergence check]) or JACOBI_MAX_SWEEPS sweeps. Then w = diag(A) and S = V diag(w) V^T.
extern "C" __global__ void __launch_bounds__(1024) symmetric_jacobi(const SymmetricJacobiArgs p) {
  extern __shared__ __align__(16) unsigned char linalg_smem[];
  __shared__ scalar_t scratch[32];
  const int n = (int)p.n, H = (n + 1) / 2, M = 2 * H - 1;
  const int tid = threadIdx.x, T = blockDim.x;
  const i64 nn = (i64)n * n, b = blockIdx.x;
  scalar_t* rc = (scalar_t*)linalg_smem;  // the round's rotations: c, s and t = s / c per pair
  scalar_t* rs = rc + H;
  scalar_t* rt = rs + H;
  int* rp = (int*)(rt + H);  // and the pairs' indices
  int* rq = rp + H;
  scalar_t* tail = (scalar_t*)(linalg_smem + jacobi_pair_bytes(H));
  scalar_t* A = p.a_shared ? tail : p.work + b * nn;
  scalar_t* V = p.v_shared ? tail + (p.a_shared ? nn : 0) : p.V + b * nn;
  const scalar_t* S = p.S + b * nn;

  scalar_t part = 0;
  for (i64 i = tid; i < nn; i += T) {
    const scalar_t x = S[i];
    A[i] = x;
    part += x * x;
    V[i] = i / n == i % n ? scalar_t(1) : scalar_t(0);
  }
  const scalar_t tol = (scalar_t)p.eps * sqrt(jacobi_block_sum(part, scratch));  // (its barriers end the load)

  // Note [Two-sided round]: after the round's rotations are known, the 2 x 2 blocks (rows of pair k, columns of
  // pair l) of J^T A J are independent, so one pass updates them all: a group of threads per block row k (and
  // per row of V), its threads along l.
  const int group = (int)p.group, gid = tid / group, gmem = tid % group, ngroups = T / group;
  for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; ++sweep) {
    for (int r = 0; r < M; ++r) {
      for (int l = tid; l < H; l += T) {
        int pl, ql;
        jacobi_pair(r, l, M, pl, ql);
        scalar_t c = 1, s = 0;
        if (ql < n) jacobi_rotation(A[(i64)pl * n + pl], A[(i64)ql * n + ql], A[(i64)pl * n + ql], c, s);
        rc[l] = c;
        rs[l] = s;
        rt[l] = s / c;
        rp[l] = pl;
        rq[l] = ql;
      }
      __syncthreads();
      for (int row = gid; row < H + n; row += ngroups) {
        if (row < H) {  // block row k of A
          const int k = row, pk = rp[k], qk = rq[k];
          const bool qk_ok = qk < n;
          const scalar_t ck = rc[k], sk = rs[k];
          scalar_t* Ap = A + (i64)pk * n;
          scalar_t* Aq = A + (i64)qk * n;  // dereferenced only when qk_ok
          for (int l = gmem; l < H; l += group) {
            const int pl = rp[l], ql = rq[l];
            const bool ql_ok = ql < n;
            if (l == k) {  // the pair's own block: Rutishauser's diagonal, the annihilated entries exactly 0
              if (qk_ok) {
                const scalar_t tg = rt[k] * Ap[qk];
                Ap[pk] -= tg;
                Aq[qk] += tg;
                Ap[qk] = 0;
                Aq[pk] = 0;
              }
              continue;
            }
            const scalar_t cl = rc[l], sl = rs[l];
            const scalar_t x00 = Ap[pl];
            const scalar_t x01 = ql_ok ? Ap[ql] : scalar_t(0);
            const scalar_t x10 = qk_ok ? Aq[pl] : scalar_t(0);
            const scalar_t x11 = qk_ok && ql_ok ? Aq[ql] : scalar_t(0);
            const scalar_t r00 = ck * x00 - sk * x10, r01 = ck * x01 - sk * x11;  // J_k^T (rows)
            const scalar_t r10 = sk * x00 + ck * x10, r11 = sk * x01 + ck * x11;
            Ap[pl] = cl * r00 - sl * r01;  // then J_l (columns)
            if (ql_ok) Ap[ql] = sl * r00 + cl * r01;
            if (qk_ok) Aq[pl] = cl * r10 - sl * r11;
            if (qk_ok && ql_ok) Aq[ql] = sl * r10 + cl * r11;
          }
        } else {  // row i of V: its columns of every pair
          scalar_t* Vi = V + (i64)(row - H) * n;
          for (int l = gmem; l < H; l += group) {
            const int pl = rp[l], ql = rq[l];
            if (ql >= n) continue;
            const scalar_t cl = rc[l], sl = rs[l], x = Vi[pl], y = Vi[ql];
            Vi[pl] = cl * x - sl * y;
            Vi[ql] = sl * x + cl * y;
          }
        }
      }
      __syncthreads();
    }
    part = 0;
    for (i64 i = tid; i < nn; i += T) {
      const scalar_t x = A[i];
      if (i / n != i % n) part += x * x;
    }
    const scalar_t off = sqrt(jacobi_block_sum(part, scratch));
    if (!(off > tol)) break;  // the same value in every thread; NaN stops (Note [Jacobi convergence check])
  }
  for (int i = tid; i < n; i += T) p.w[b * n + i] = A[(i64)i * n + i];
  if (p.v_shared) {
    for (i64 i = tid; i < nn; i += T) p.V[b * nn + i] = V[i];
  }
}

struct OnesidedJacobiArgs {
  const scalar_t* G;  // (batch, m, n) contiguous
  scalar_t* GJ;       // (batch, m, n) G J: mutually orthogonal columns
  scalar_t* J;        // (batch, n, n) the accumulated rotations
  scalar_t* work;     // (batch, n * (m + n)) when G or J does not work in shared memory, else null
  i64 m;
  i64 n;
  i64 g_shared;       // G works in shared memory
  i64 j_shared;       // J works in shared memory (after G)
  double tol;         // max(m, 1) * eps
};

// One-sided: the columns of G (kept transposed, each column contiguous) and of J rotate in pairs, a warp per
// pair: the Gram entries a = |x|^2, b = |y|^2, g = x.y are warp sums, and the pair rotates only while
// |g| > tol |x| |y| (LAPACK's gesvj skips the others too). A sweep without a rotation ends the loop.
extern "C" __global__ void __launch_bounds__(1024) onesided_jacobi(const OnesidedJacobiArgs p) {
  extern __shared__ __align__(16) unsigned char linalg_smem[];
  __shared__ int rotated;
  const i64 m = p.m, n = p.n, mn = m * n, nn = n * n, b = blockIdx.x;
  const int H = (int)(n + 1) / 2, M = 2 * H - 1;
  const int tid = threadIdx.x, T = blockDim.x, lane = tid & 31, warp = tid >> 5, nwarps = T >> 5;
  scalar_t* smem = (scalar_t*)linalg_smem;
  scalar_t* work = p.work ? p.work + b * (mn + nn) : nullptr;
  scalar_t* W = p.g_shared ? smem : work;                               // W[c * m + i] = G[i][c]
  scalar_t* Jt = p.j_shared ? smem + (p.g_shared ? mn : 0) : work + mn;  // Jt[c * n + i] = J[i][c]
  const scalar_t* G = p.G + b * mn;

  for (i64 idx = tid; idx < mn; idx += T) {
    const i64 i = idx / n, c = idx - i * n;
    W[c * m + i] = G[idx];
  }
  for (i64 idx = tid; idx < nn; idx += T) Jt[idx] = idx / n == idx % n ? scalar_t(1) : scalar_t(0);
  if (tid == 0) rotated = 0;
  __syncthreads();
  const scalar_t tol = (scalar_t)p.tol;
  for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; ++sweep) {
    for (int r = 0; r < M; ++r) {
      for (int l = warp; l < H; l += nwarps) {  // warp-uniform: every lane sees the same pair and sums
        int pl, ql;
        jacobi_pair(r, l, M, pl, ql);
        if (ql >= n) continue;
        scalar_t* x = W + pl * m;
        scalar_t* y = W + ql * m;
        scalar_t a = 0, bb = 0, g = 0;
        for (i64 i = lane; i < m; i += 32) {
          const scalar_t xi = x[i], yi = y[i];
          a += xi * xi;
          bb += yi * yi;
          g += xi * yi;
        }
        a = jacobi_warp_sum(a);
        bb = jacobi_warp_sum(bb);
        g = jacobi_warp_sum(g);
        if (!(fabs(g) > tol * sqrt(a) * sqrt(bb))) continue;  // orthogonal enough (or NaN)
        if (lane == 0) rotated = 1;
        scalar_t c, s;
        jacobi_rotation(a, bb, g, c, s);
        for (i64 i = lane; i < m; i += 32) {
          const scalar_t xi = x[i], yi = y[i];
          x[i] = c * xi - s * yi;
          y[i] = s * xi + c * yi;
        }
        scalar_t* u = Jt + pl * n;
        scalar_t* v = Jt + ql * n;
        for (i64 i = lane; i < n; i += 32) {
          const scalar_t ui = u[i], vi = v[i];
          u[i] = c * ui - s * vi;
          v[i] = s * ui + c * vi;
        }
      }
      __syncthreads();
    }
    const bool again = rotated != 0;
    __syncthreads();  // every thread has read the flag
    if (!again) break;
    if (tid == 0) rotated = 0;
    __syncthreads();
  }
  for (i64 idx = tid; idx < mn; idx += T) {
    const i64 i = idx / n, c = idx - i * n;
    p.GJ[b * mn + idx] = W[c * m + i];
  }
  for (i64 idx = tid; idx < nn; idx += T) {
    const i64 i = idx / n, c = idx - i * n;
    p.J[b * nn + idx] = Jt[c * n + i];
  }
}
