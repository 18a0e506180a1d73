// Triangular solves of diagonal blocks and the Cholesky factorization of diagonal blocks (glue and design:
// linalg_triangular_ops.py, Note [Fused triangular kernels]). SCALAR_T (float or double) is #defined;
// everything is computed in it.
//
// A tile lives in shared memory as T[NB][NB + 1] (one pad column against bank conflicts). A tile of h < NB
// rows is padded with the identity; loops over the tile's steps stop at h.

#define FULL_MASK 0xffffffffu

// One warp replaces v by T^-1 v for one vector v of the h <= NB rows of a lower-triangular tile T (forward
// substitution). Lane l holds the elements l, l + 32, ... (register v[s] is element l + 32 s). Step j
// broadcasts the (unscaled) element j from its lane; every lane divides it by T[j][j] (the same value in
// each) and updates its rows below j. The steps are split by register (j = 32 sj + jj) so that every
// register index is a compile-time constant (a runtime index would put v in local memory). Every lane of
// the warp must take part (the shuffle's full mask); h is uniform, so is the early exit.
template <int NB>
__device__ __forceinline__ void warp_forward_substitute(const SCALAR_T (*T)[NB + 1], SCALAR_T (&v)[NB / 32],
                                                        int lane, int h) {
#pragma unroll
  for (int sj = 0; sj < NB / 32; ++sj) {
    for (int jj = 0; jj < 32; ++jj) {
      const int j = 32 * sj + jj;
      if (j >= h) break;
      const SCALAR_T xj = __shfl_sync(FULL_MASK, v[sj], jj) / T[j][j];
#pragma unroll
      for (int s = sj; s < NB / 32; ++s) {  // registers below sj hold rows above j: done
        const int i = lane + 32 * s;
        if (i == j) {
          v[s] = xj;
        } else if (i > j) {
          v[s] -= T[i][j] * xj;
        }
      }
    }
  }
}

// out = T^-1 (rhs - sub) for the h x h diagonal block T (h <= NB) of a triangular matrix and k right-hand
// sides (h x k). A work unit is (matrix b, a block of one column per warp); one warp per column. Only
// T's own triangle is read, and not its diagonal when unit (taken as 1). An upper block is solved as the
// lower one with rows and columns reversed (r -> h - 1 - r), so one substitution serves both. sub (the
// left-looking update, contiguous (batch, h, k)) may be null. Every operand is strided (batch, row,
// column), so a transposed view serves as well: the Cholesky panel passes its rows as the columns.
struct TrsmArgs {
  const SCALAR_T* tri; i64 tri_sb, tri_sr, tri_sc;
  const SCALAR_T* rhs; i64 rhs_sb, rhs_sr, rhs_sc;
  const SCALAR_T* sub;
  SCALAR_T* out; i64 out_sb, out_sr, out_sc;
  i64 batch, h, k, col_blocks, upper, unit;
};

template <int NB>
__device__ __forceinline__ void trsm_block(const TrsmArgs& p) {
  __shared__ SCALAR_T T[NB][NB + 1];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int lane = tid & 31, warp = tid >> 5, warps = nt >> 5;
  const int h = (int)(p.h < NB ? p.h : NB);
  const i64 units = p.batch * p.col_blocks;
  for (i64 u = blockIdx.x; u < units; u += gridDim.x) {  // u is uniform across the block
    const i64 b = u / p.col_blocks, cb = u - b * p.col_blocks;
    const SCALAR_T* A = p.tri + b * p.tri_sb;
    for (int idx = tid; idx < NB * NB; idx += nt) {
      const int i = idx / NB, j = idx - i * NB;
      SCALAR_T v = i == j ? SCALAR_T(1) : SCALAR_T(0);  // the identity pad, and the unit diagonal
      if (i < h && j < h && (j < i || (i == j && !p.unit))) {
        const int ai = p.upper ? h - 1 - i : i, aj = p.upper ? h - 1 - j : j;
        v = A[ai * p.tri_sr + aj * p.tri_sc];
      }
      T[i][j] = v;
    }
    __syncthreads();
    const i64 c = cb * warps + warp;  // this warp's column (uniform across the warp)
    if (c < p.k) {
      SCALAR_T v[NB / 32];
#pragma unroll
      for (int s = 0; s < NB / 32; ++s) {
        const int i = lane + 32 * s;
        v[s] = SCALAR_T(0);
        if (i < h) {
          const i64 r = p.upper ? h - 1 - i : i;
          v[s] = p.rhs[b * p.rhs_sb + r * p.rhs_sr + c * p.rhs_sc];
          if (p.sub) v[s] -= p.sub[(b * p.h + r) * p.k + c];
        }
      }
      warp_forward_substitute<NB>(T, v, lane, h);
#pragma unroll
      for (int s = 0; s < NB / 32; ++s) {
        const int i = lane + 32 * s;
        if (i < h) {
          const i64 r = p.upper ? h - 1 - i : i;
          p.out[b * p.out_sb + r * p.out_sr + c * p.out_sc] = v[s];
        }
      }
    }
    __syncthreads();  // T is reloaded by the next unit
  }
}

extern "C" __global__ void trsm_block_32(const TrsmArgs p) { trsm_block<32>(p); }
extern "C" __global__ void trsm_block_64(const TrsmArgs p) { trsm_block<64>(p); }

// The Cholesky factor of the h x h diagonal block (h <= NB) at the top left of the trailing matrix src
// (strided; only its lower triangle is read), one block per matrix. It writes the factor into L (the
// contiguous (batch, n, n) output) at (r0, r0) with its strict upper part as 0, the zeros of L's rows
// r0..r0+h-1 right of the block, and info: the first pivot that is not > 0 (NaN included), 1-based and
// offset by r0; a step after the first (r0 > 0) writes it only where no earlier step found one.
// The thread layout needs blockDim to be a multiple of NB: thread t updates column t % NB.
struct CholArgs {
  const SCALAR_T* src; i64 src_sb, src_sr, src_sc;
  SCALAR_T* L; i64 n;
  int* info;
  i64 batch, h, r0;
};

template <int NB>
__device__ __forceinline__ void chol_block(const CholArgs& p) {
  __shared__ SCALAR_T S[NB][NB + 1];
  __shared__ SCALAR_T diag[NB];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int q = tid % NB, group = tid / NB, groups = nt / NB;
  const int h = (int)(p.h < NB ? p.h : NB);
  for (i64 b = blockIdx.x; b < p.batch; b += gridDim.x) {  // b is uniform across the block
    const SCALAR_T* A = p.src + b * p.src_sb;
    for (int idx = tid; idx < NB * NB; idx += nt) {
      const int i = idx / NB, j = idx - i * NB;
      SCALAR_T v = i == j ? SCALAR_T(1) : SCALAR_T(0);
      if (i < h && j <= i) v = A[i * p.src_sr + j * p.src_sc];
      S[i][j] = v;
    }
    __syncthreads();
    // Right-looking with the column scaling deferred: step j subtracts s_ij (s_qj / s_jj) from the trailing
    // lower triangle (i >= q > j) and writes nothing in column j, so one barrier per column suffices.
    int fail = -1;  // the first pivot that is not > 0; every thread reads the same pivots
    for (int j = 0; j < h; ++j) {
      const SCALAR_T d = S[j][j];
      if (fail < 0 && !(d > SCALAR_T(0))) fail = j;
      if (q > j && q < h) {
        const SCALAR_T t = S[q][j] / d;
        for (int i = q + group; i < h; i += groups) S[i][q] -= S[i][j] * t;
      }
      __syncthreads();
    }
    for (int j = tid; j < NB; j += nt) diag[j] = sqrt(S[j][j]);  // l_jj = sqrt(pivot); the pad's is 1
    __syncthreads();
    for (int idx = tid; idx < NB * NB; idx += nt) {
      const int i = idx / NB, j = idx - i * NB;
      if (j < i) {
        S[i][j] /= diag[j];
      } else if (j == i) {
        S[i][i] = diag[i];
      }
    }
    __syncthreads();
    SCALAR_T* Lb = p.L + b * p.n * p.n;
    for (int idx = tid; idx < h * h; idx += nt) {
      const int i = idx / h, j = idx - i * h;
      Lb[(p.r0 + i) * p.n + p.r0 + j] = j <= i ? S[i][j] : SCALAR_T(0);
    }
    const i64 right = p.n - p.r0 - h;  // L's strict upper part right of this block
    for (i64 idx = tid; idx < h * right; idx += nt) {
      const i64 i = idx / right, j = idx - i * right;
      Lb[(p.r0 + i) * p.n + p.r0 + h + j] = SCALAR_T(0);
    }
    if (tid == 0) {
      if (p.r0 == 0) {
        p.info[b] = fail < 0 ? 0 : fail + 1;
      } else if (fail >= 0 && p.info[b] == 0) {
        p.info[b] = (int)(p.r0 + fail + 1);
      }
    }
    __syncthreads();  // S is reloaded by the next matrix
  }
}

extern "C" __global__ void chol_block_64(const CholArgs p) { chol_block<64>(p); }
