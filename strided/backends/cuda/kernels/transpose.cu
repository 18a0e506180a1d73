// Tiled transposed copy: dst = convert<DST_T>(src) where the two disagree on the contiguous dim.
// X is the dim dst is contiguous in, Y the one src is contiguous in; every other dim is a batch.
// DST_T, SRC_T, TR_VEC (elements per access; 1 when the dtypes differ) and TR_WORD (the 4- or
// 8-byte access type) are #defined
// before this source (Note [Transposed copy] in kernels/__init__.py).
#ifndef TR_VEC
#define TR_VEC 1
#endif
#ifndef TR_WORD
#define TR_WORD unsigned  // the access word: TR_VEC elements (4 or 8 bytes)
#endif
#define TR_TILE (32 * TR_VEC)
#define TR_WARPS 8
#define TR_BATCH_DIMS 6

struct TransposeParams {
  DST_T* dst;
  const SRC_T* src;
  i64 nx;       // size of X (dst stride 1)
  i64 ny;       // size of Y (src stride 1)
  i64 src_sx;   // src stride of X
  i64 dst_sy;   // dst stride of Y
  i64 tiles_x;
  i64 tiles_y;
  i64 nbatch;
  i64 bsizes[TR_BATCH_DIMS];
  i64 bdst[TR_BATCH_DIMS];
  i64 bsrc[TR_BATCH_DIMS];
};

// One TR_TILE x TR_TILE tile per block of 256 threads.  Loads run along Y (coalesced in src),
// stores along X (coalesced in dst); the shared tile is padded by one element per row, so the
// column reads of the store phase hit 32 distinct banks (row pitch = 32 * TR_VEC + 1 words / TR_VEC).
extern "C" __global__ void __launch_bounds__(256) transpose_copy(const TransposeParams p) {
  __shared__ DST_T tile[TR_TILE][TR_TILE + 1];
  i64 b = blockIdx.x;
  const i64 tx = b % p.tiles_x;
  b /= p.tiles_x;
  const i64 ty = b % p.tiles_y;
  b /= p.tiles_y;
  i64 so = 0, dof = 0;
  for (int d = (int)p.nbatch - 1; d >= 0; --d) {
    const i64 s = p.bsizes[d];
    const i64 c = b % s;
    b /= s;
    so += c * p.bsrc[d];
    dof += c * p.bdst[d];
  }
  const SRC_T* src = p.src + so;
  DST_T* dst = p.dst + dof;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const i64 x0 = tx * TR_TILE, y0 = ty * TR_TILE;

  const int yl = lane * TR_VEC;
  const i64 y = y0 + yl;
#pragma unroll 4
  for (int r = warp; r < TR_TILE; r += TR_WARPS) {
    const i64 x = x0 + r;
    if (x < p.nx) {
      const SRC_T* s = src + x * p.src_sx + y;
#if TR_VEC > 1
      if (y + TR_VEC <= p.ny) {
        alignas(sizeof(TR_WORD)) SRC_T v[TR_VEC];
        *reinterpret_cast<TR_WORD*>(v) = __ldg(reinterpret_cast<const TR_WORD*>(s));
#pragma unroll
        for (int k = 0; k < TR_VEC; ++k) tile[r][yl + k] = convert<DST_T>(v[k]);
        continue;
      }
#endif
      {
#pragma unroll
        for (int k = 0; k < TR_VEC; ++k)
          if (y + k < p.ny) tile[r][yl + k] = convert<DST_T>(s[k]);
      }
    }
  }
  __syncthreads();
  const int xl = lane * TR_VEC;
  const i64 x = x0 + xl;
#pragma unroll 4
  for (int r = warp; r < TR_TILE; r += TR_WARPS) {
    const i64 yy = y0 + r;
    if (yy < p.ny) {
      DST_T* d = dst + yy * p.dst_sy + x;
#if TR_VEC > 1
      if (x + TR_VEC <= p.nx) {
        alignas(sizeof(TR_WORD)) DST_T v[TR_VEC];
#pragma unroll
        for (int k = 0; k < TR_VEC; ++k) v[k] = tile[xl + k][r];
        *reinterpret_cast<TR_WORD*>(d) = *reinterpret_cast<const TR_WORD*>(v);
        continue;
      }
#endif
      {
#pragma unroll
        for (int k = 0; k < TR_VEC; ++k)
          if (x + k < p.nx) d[k] = tile[xl + k][r];
      }
    }
  }
}
