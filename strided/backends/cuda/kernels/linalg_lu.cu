// LU factorization with partial pivoting, LAPACK getrf's conventions, of a batch of row-major m x n matrices,
// in place (Note [Fused LU] in linalg_lu_ops.py). SCALAR_T (float / double) is #defined; ACC_T too (the same
// type; reduce_ops.cuh, included before this file, names it).
//
// lu_panel   one block per matrix factors columns j0 .. j0+steps-1 (a column loop: pivot search, row swap,
//            scaling, rank-1 update of the panel), swaps the rows outside the panel too, and solves
//            U12 = L11^-1 A12 for the columns right of the panel. Dynamic shared memory: the panel, column-major with
//            the odd column stride (m - j0) | 1 (when in_shared), then L11 padded to LU_NB x LU_NB (when there are
//            columns right of the panel).
// lu_update  the trailing update A22 -= L21 U12 (k = the panel width <= LU_NB), 64 x 64 output tiles.

#define LU_NB 32         // the widest blocked panel: the unrolled triangular solve and lu_update's k
#define LU_TILE 64       // lu_update's output tile (LU_TILE x LU_TILE, 256 threads, 4 x 4 outputs each)
#define LU_PANEL_THREADS 512

typedef SCALAR_T lu_t;

struct LuPanel {
  lu_t* a;         // batch x m x n, row-major, factored in place
  int* pivots;     // batch x k: LAPACK's 1-based sequential row swaps
  i64* perm;       // batch x m: the row order, A[perm] = L U
  int* info;       // batch: 0, or the 1-based index of the first zero on U's diagonal
  i64 batch, m, n, k;
  i64 j0;          // the panel's first row and column
  i64 steps;       // the pivot columns j0 .. j0+steps-1
  i64 width;       // the panel's columns j0 .. j0+width-1: width == steps <= LU_NB (a blocked panel), or
                   // width == n with j0 == 0 (the whole matrix: no columns right of it, no solve)
  i64 pivot;       // 1: partial pivoting; 0: none (pivots 1..k, perm the identity)
  i64 in_shared;   // 1: the panel is copied to (dynamic) shared memory; 0: factored in global memory
};

// a beats b as a pivot candidate: NaN first (as argmax), then the larger |value|, then the smaller row.
// A strict total order on (value, row) pairs, so any reduction tree gives the same winner.
__device__ __forceinline__ bool lu_beats(lu_t a, i64 ia, lu_t b, i64 ib) {
  const bool na = a != a, nb = b != b;
  if (na || nb) return na && (!nb || ia < ib);
  return a > b || (a == b && ia < ib);
}

__device__ __forceinline__ void lu_warp_best(lu_t& best, i64& at) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const lu_t v = __shfl_down_sync(0xffffffffu, best, off);
    const i64 i = __shfl_down_sync(0xffffffffu, at, off);
    if (lu_beats(v, i, best, at)) {
      best = v;
      at = i;
    }
  }
}

// The pivot row of column j: the row in [j, rows) with the largest |P(r, j)| (idamax; NaN wins as in
// argmax, the first row on ties). Called by every thread of the block (two barriers); all get the row.
__device__ i64 lu_pivot_row(const lu_t* P, i64 rs, i64 cs, i64 j, i64 rows, lu_t* red_v, i64* red_i) {
  const i64 none = 0x7fffffffffffffffLL;
  lu_t best = lu_t(-1);  // below every |value|: thread 0 always sees row j, so a real row wins
  i64 at = none;
  for (i64 r = j + threadIdx.x; r < rows; r += blockDim.x) {
    const lu_t x = P[r * rs + j * cs];
    const lu_t v = x < lu_t(0) ? -x : x;
    if (lu_beats(v, r, best, at)) {
      best = v;
      at = r;
    }
  }
  lu_warp_best(best, at);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  if (lane == 0) {
    red_v[warp] = best;
    red_i[warp] = at;
  }
  __syncthreads();
  if (warp == 0) {
    best = lane < warps ? red_v[lane] : lu_t(-1);
    at = lane < warps ? red_i[lane] : none;
    lu_warp_best(best, at);
    if (lane == 0) red_i[32] = at;
  }
  __syncthreads();
  const i64 r = red_i[32];
  return (r >= j && r < rows) ? r : j;  // always in range (the order above guarantees it; belt and braces)
}

__device__ __forceinline__ void lu_swap(lu_t* x, lu_t* y) {
  const lu_t t = *x;
  *x = *y;
  *y = t;
}

// x = L11^-1 x for one column x (stride n, steps <= LU_NB entries), L11 unit lower, its strict lower part in
// shared memory zero-padded to LU_NB x LU_NB. Note [Register-resident solve]: x lives in registers (fully
// unrolled loops); the empty asm statements keep the compiler from hoisting all 496 loads of L11 ahead of the
// arithmetic (and x's load addresses alive until the stores), which spilled registers under the 512-thread bound.
__device__ __forceinline__ void lu_solve_column(lu_t* col, i64 n, i64 steps, const lu_t* L11) {
  lu_t x[LU_NB];
#pragma unroll
  for (int i = 0; i < LU_NB; ++i) x[i] = i < steps ? col[i * n] : lu_t(0);
#pragma unroll
  for (int i = 1; i < LU_NB; ++i) {
    asm volatile("" ::: "memory");
    lu_t s = x[i];
#pragma unroll
    for (int t = 0; t < i; ++t) {
      if (t % 8 == 7) asm volatile("" ::: "memory");
      s -= L11[i * LU_NB + t] * x[t];
    }
    x[i] = s;
  }
  i64 zero;
  asm volatile("mov.b64 %0, 0;" : "=l"(zero));  // an opaque 0: the stores recompute their addresses
  lu_t* out = col + zero;
#pragma unroll
  for (int i = 0; i < LU_NB; ++i) {
    if (i < steps) out[i * n] = x[i];
  }
}

extern "C" __global__ void __launch_bounds__(LU_PANEL_THREADS) lu_panel(const LuPanel p) {
  extern __shared__ __align__(16) unsigned char lu_smem[];
  __shared__ lu_t red_v[32];
  __shared__ i64 red_i[33];
  const i64 rows = p.m - p.j0;  // the panel's rows: j0 .. m-1 (>= steps)
  const i64 ld = rows | 1;      // odd column stride of the shared copy: a warp's row-wise accesses hit distinct banks
  const i64 T = blockDim.x, tid = threadIdx.x;
  for (i64 b = blockIdx.x; b < p.batch; b += gridDim.x) {  // uniform per block: barriers inside are safe
    lu_t* A = p.a + b * p.m * p.n;
    i64* perm = p.perm + b * p.m;
    int* piv = p.pivots + b * p.k;
    lu_t* P;  // panel element (r, c) = A[j0 + r][j0 + c] is P[r * rs + c * cs]
    i64 rs, cs;
    if (p.in_shared) {  // column-major copy: the column scans and updates read consecutive rows
      P = reinterpret_cast<lu_t*>(lu_smem);
      rs = 1;
      cs = ld;
      const unsigned W = (unsigned)p.width, N = (unsigned)(rows * p.width);
      for (unsigned e = tid; e < N; e += T) {
        const unsigned r = e / W, c = e - r * W;
        P[r + c * ld] = A[(p.j0 + r) * p.n + p.j0 + c];
      }
    } else {
      P = A + p.j0 * p.n + p.j0;
      rs = p.n;
      cs = 1;
    }
    if (p.j0 == 0) {
      for (i64 r = tid; r < p.m; r += T) perm[r] = r;
    }
    __syncthreads();
    i64 first_zero = 0;  // the same in every thread (all read the same diagonal entries)
    for (i64 j = 0; j < p.steps; ++j) {
      const i64 r = p.pivot ? lu_pivot_row(P, rs, cs, j, rows, red_v, red_i) : j;
      if (r != j) {  // swap rows j0+j and j0+r: the panel part in P, every other column of A in place
        for (i64 c = tid; c < p.width; c += T) lu_swap(P + j * rs + c * cs, P + r * rs + c * cs);
        lu_t* row_j = A + (p.j0 + j) * p.n;
        lu_t* row_r = A + (p.j0 + r) * p.n;
        for (i64 q = tid; q < p.n - p.width; q += T) {
          const i64 c = q < p.j0 ? q : q + p.width;  // the columns left and right of the panel
          lu_swap(row_j + c, row_r + c);
        }
        if (tid == 0) {
          const i64 t = perm[p.j0 + j];
          perm[p.j0 + j] = perm[p.j0 + r];
          perm[p.j0 + r] = t;
        }
      }
      if (tid == 0) piv[p.j0 + j] = (int)(p.j0 + r + 1);
      __syncthreads();
      const lu_t d = P[j * rs + j * cs];
      if (d == lu_t(0)) {
        if (first_zero == 0) first_zero = p.j0 + j + 1;
      } else {  // a zero pivot leaves its column unscaled (getf2), so no 0 / 0
        for (i64 i = j + 1 + tid; i < rows; i += T) P[i * rs + j * cs] /= d;
      }
      __syncthreads();
      const i64 R = rows - j - 1, C = p.width - j - 1;  // the rank-1 update of rows j+1.., columns j+1..
      if (R > 0 && C > 0) {
        if (p.in_shared) {  // consecutive threads on consecutive rows of a column: no bank conflicts
          const unsigned RU = (unsigned)R, N = (unsigned)(R * C);
          for (unsigned e = tid; e < N; e += T) {
            const unsigned c = e / RU, i = e - c * RU;
            const i64 row = j + 1 + i, col = j + 1 + c;
            P[row + col * ld] -= P[row + j * ld] * P[j + col * ld];
          }
        } else {  // consecutive threads on consecutive columns of a row (row-major, C <= LU_NB)
          for (i64 e = tid; e < R * C; e += T) {
            const i64 i = e / C, c = e - i * C;
            const i64 row = j + 1 + i, col = j + 1 + c;
            P[row * rs + col] -= P[row * rs + j] * P[j * rs + col];
          }
        }
      }
      __syncthreads();
    }
    // U12 = L11^-1 A12 for the columns right of the panel (blocked panels only, so steps <= LU_NB): L11's strict
    // lower part is copied after the panel in shared memory, zero-padded to LU_NB x LU_NB, then one thread per
    // column runs the forward substitution in registers.
    if (p.j0 + p.width < p.n) {  // uniform
      lu_t* L11 = reinterpret_cast<lu_t*>(lu_smem) + (p.in_shared ? ld * p.width : 0);
      for (i64 e = tid; e < LU_NB * LU_NB; e += T) {
        const int i = (int)e / LU_NB, t = (int)e - i * LU_NB;
        L11[e] = (t < i && i < p.steps) ? P[i * rs + t * cs] : lu_t(0);
      }
      __syncthreads();
      for (i64 c = p.j0 + p.width + tid; c < p.n; c += T) lu_solve_column(A + p.j0 * p.n + c, p.n, p.steps, L11);
    }
    if (p.in_shared) {
      const unsigned W = (unsigned)p.width, N = (unsigned)(rows * p.width);
      for (unsigned e = tid; e < N; e += T) {
        const unsigned r = e / W, c = e - r * W;
        A[(p.j0 + r) * p.n + p.j0 + c] = P[r + c * ld];
      }
    }
    if (tid == 0) {
      int* info = p.info + b;
      if (p.j0 == 0) {
        *info = (int)first_zero;
      } else if (first_zero != 0 && *info == 0) {
        *info = (int)first_zero;
      }
    }
    __syncthreads();  // the shared copy is reused by the block's next matrix
  }
}

struct LuUpdate {
  lu_t* a;
  i64 batch, m, n;
  i64 j0, w;              // the panel: L21 = A[j0+w:, j0:j0+w], U12 = A[j0:j0+w, j0+w:]
  i64 tiles_m, tiles_n;   // LU_TILE x LU_TILE tiles of A22 = A[j0+w:, j0+w:]
};

// A22 -= L21 U12, one output tile per block (grid-stride over batch x tiles), k = w <= LU_NB padded with zeros.
extern "C" __global__ void __launch_bounds__(256) lu_update(const LuUpdate p) {
  __shared__ lu_t Ls[LU_NB][LU_TILE + 1];  // the L21 tile transposed: Ls[t][row]
  __shared__ lu_t Us[LU_NB][LU_TILE];      // the U12 tile: Us[t][col]
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const i64 per = p.tiles_m * p.tiles_n, total = p.batch * per;
  for (i64 tile = blockIdx.x; tile < total; tile += gridDim.x) {  // uniform per block
    const i64 b = tile / per, rest = tile - b * per;
    const i64 tm = rest / p.tiles_n, tn = rest - tm * p.tiles_n;
    lu_t* A = p.a + b * p.m * p.n;
    const i64 r0 = p.j0 + p.w + tm * LU_TILE, c0 = p.j0 + p.w + tn * LU_TILE;
    for (int e = tid; e < LU_NB * LU_TILE; e += blockDim.x) {
      const int li = e / LU_NB, lt = e - li * LU_NB;  // L21: consecutive threads along a row
      const i64 row = r0 + li;
      Ls[lt][li] = (lt < p.w && row < p.m) ? A[row * p.n + p.j0 + lt] : lu_t(0);
      const int ut = e / LU_TILE, uc = e - ut * LU_TILE;  // U12: consecutive threads along a row
      const i64 col = c0 + uc;
      Us[ut][uc] = (ut < p.w && col < p.n) ? A[(p.j0 + ut) * p.n + col] : lu_t(0);
    }
    __syncthreads();
    lu_t acc[4][4];
#pragma unroll
    for (int a = 0; a < 4; ++a) {
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[a][c] = lu_t(0);
    }
#pragma unroll 8
    for (int t = 0; t < LU_NB; ++t) {
      lu_t l[4], u[4];
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        l[a] = Ls[t][ty + 16 * a];
        u[a] = Us[t][tx + 16 * a];
      }
#pragma unroll
      for (int a = 0; a < 4; ++a) {
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[a][c] += l[a] * u[c];
      }
    }
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const i64 row = r0 + ty + 16 * a;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const i64 col = c0 + tx + 16 * c;
        if (row < p.m && col < p.n) A[row * p.n + col] -= acc[a][c];
      }
    }
    __syncthreads();  // the tiles are reloaded for the block's next output tile
  }
}
