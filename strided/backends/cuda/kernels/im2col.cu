// im2col and col2im (F.unfold / F.fold, the convolution's columns; torch's aten/src/ATen/native/cuda/im2col.cuh).
// COL_T (storage) and ACC_T (col2im's sums) are #defined. The image is a contiguous (N, C, H, W) tensor, the
// columns (N, C * KH * KW, LH * LW): row r = (c, kh, kw), column (lh, lw) holds the image element at
// (lh * SH - PH + kh * DH, lw * SW - PW + kw * DW), 0 outside the image. Sample n's row r starts at
// n * per_image + r * row_stride: (per_image, row_stride) = (C*KH*KW*LH*LW, LH*LW) is the contiguous
// (N, C * KH * KW, L) layout, (LH*LW, N*LH*LW) the (C * KH * KW, N, L) one the convolution's weight gradient reads
// as one (C * KH * KW, N * L) matrix (Note [Direct CUDA convolution]). col2im reads the contiguous layout.
//
// Note [Column kernels' index math]
// im2col: a block takes whole (n, c, kh, kw) rows of LH * LW columns, grid-striding over them, its threads striding
// along the row with COL_ILP independent loads each (issued before the stores, so their latencies overlap), the
// block as wide as a row's COL_ILP-element steps need (32-256 threads). col2im: the work
// is cut into tiles of an (n, c) image plane, one element per thread, and blocks grid-stride over the tiles, so
// that a few planes -- a convolution's batch slice of a 3-channel image -- still fill the GPU (a block per plane
// ran 27 blocks there, 8x slower). A row or tile is decomposed once (64-bit divisions), each element costs one
// 32-bit division (its block or image coordinates); spatial sizes fit in 32 bits, row and plane offsets stay
// 64-bit. im2col's stores are coalesced; col2im sums, per image element, the at most KH * KW column entries that
// name it (a gather: deterministic, no atomics).

#ifndef COL_ILP
#define COL_ILP 4
#endif
#ifndef IMG_T  // col2im's image type: float columns of a half convolution sum into a half image
#define IMG_T COL_T
#endif

struct ColumnsGeometry {
  i64 n, c, h, w, lh, lw;
  i64 kh, kw, dh, dw, ph, pw, sh, sw;
  i64 per_image, row_stride;
};

struct Im2colArgs {
  const COL_T* image; COL_T* cols;
  ColumnsGeometry g;
};

extern "C" __global__ void im2col_kernel(const Im2colArgs a) {
  const ColumnsGeometry g = a.g;
  const int H = (int)g.h, W = (int)g.w, LW = (int)g.lw, L = (int)(g.lh * g.lw);
  const int KW = (int)g.kw, KH = (int)g.kh;
  const i64 per_sample = g.c * g.kh * g.kw;
  const i64 rows = g.n * per_sample;
  const int step = (int)blockDim.x * COL_ILP;
  const COL_T* __restrict__ images = a.image;
  COL_T* __restrict__ cols = a.cols;
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const int kw = (int)(row % KW);
    const i64 t = row / KW;
    const int kh = (int)(t % KH);
    const i64 plane = t / KH;  // n * C + c
    const i64 n = row / per_sample;
    const COL_T* image = images + plane * H * W;
    COL_T* out = cols + n * g.per_image + (row - n * per_sample) * g.row_stride;
    const int y0 = kh * (int)g.dh - (int)g.ph, x0 = kw * (int)g.dw - (int)g.pw;
    for (int l0 = (int)threadIdx.x; l0 < L; l0 += step) {
      COL_T v[COL_ILP];
#pragma unroll
      for (int j = 0; j < COL_ILP; ++j) {
        const int l = l0 + j * (int)blockDim.x;
        const int lh = l / LW, lw = l - lh * LW;
        const int y = y0 + lh * (int)g.sh, x = x0 + lw * (int)g.sw;
        v[j] = (l < L && y >= 0 && y < H && x >= 0 && x < W) ? image[y * W + x] : COL_T(0);
      }
#pragma unroll
      for (int j = 0; j < COL_ILP; ++j) {
        const int l = l0 + j * (int)blockDim.x;
        if (l < L) out[l] = v[j];
      }
    }
  }
}

struct Col2imArgs {
  const COL_T* cols; IMG_T* image;
  ColumnsGeometry g;
};

extern "C" __global__ void col2im_kernel(const Col2imArgs a) {
  const ColumnsGeometry g = a.g;
  const int H = (int)g.h, W = (int)g.w, LH = (int)g.lh, LW = (int)g.lw, L = LH * LW;
  const int KH = (int)g.kh, KW = (int)g.kw, DH = (int)g.dh, DW = (int)g.dw, SH = (int)g.sh, SW = (int)g.sw;
  const int PH = (int)g.ph, PW = (int)g.pw;
  const int HW = H * W;
  const i64 tiles = (HW + (int)blockDim.x - 1) / (int)blockDim.x;
  const i64 work = g.n * g.c * tiles;
  for (i64 b = blockIdx.x; b < work; b += gridDim.x) {
    const i64 plane = b / tiles;
    const int i = (int)(b - plane * tiles) * (int)blockDim.x + (int)threadIdx.x;
    if (i >= HW) continue;
    const COL_T* cols = a.cols + plane * KH * KW * L;  // this (n, c)'s KH * KW rows
    const int y = i / W, x = i - y * W;
    ACC_T acc = ACC_T(0);
    for (int kh = 0; kh < KH; ++kh) {
      const int yy = y + PH - kh * DH;  // = lh * SH for the block that puts row kh here
      if (yy < 0) break;  // yy falls as kh grows
      const int lh = yy / SH;
      if (lh * SH != yy || lh >= LH) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int xx = x + PW - kw * DW;
        if (xx < 0) break;
        const int lw = xx / SW;
        if (lw * SW != xx || lw >= LW) continue;
        acc += convert<ACC_T>(cols[(kh * KW + kw) * L + lh * LW + lw]);
      }
    }
    a.image[plane * HW + i] = convert<IMG_T>(acc);
  }
}
