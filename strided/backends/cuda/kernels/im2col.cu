// im2col and col2im (F.unfold / F.fold, the convolution's columns; torch's aten/src/ATen/native/cuda/im2col.cuh).
// COL_T (storage) and ACC_T (col2im's sums) are #defined. The image is a contiguous (N, C, H, W) tensor, the
// columns a contiguous (N, C * KH * KW, LH * LW) one: row (c, kh, kw), column (lh, lw) holds the image element at
// (lh * SH - PH + kh * DH, lw * SW - PW + kw * DW), 0 outside the image.
//
// Note [Column kernels' index math]
// A block takes whole rows (im2col: one (n, c, kh, kw) row of LH * LW columns; col2im: one (n, c) image plane),
// grid-striding over them, and its threads stride along the row. The row's decomposition (64-bit divisions) is
// then made once per row and thread, and each element costs one 32-bit division (its block or image coordinates):
// a thread per element with 64-bit index math spent more time dividing than moving bytes. Spatial sizes fit in
// 32 bits; row and plane offsets stay 64-bit. im2col's stores are coalesced (its loads strided by SW); col2im
// sums, per image element, the at most KH * KW column entries that name it (a gather: deterministic, no atomics).

struct ColumnsGeometry {
  i64 n, c, h, w, lh, lw;
  i64 kh, kw, dh, dw, ph, pw, sh, sw;
  i64 per_image;  // C * KH * KW * LH * LW
};

struct Im2colArgs {
  const COL_T* image; COL_T* cols;
  ColumnsGeometry g;
};

extern "C" __global__ void im2col_kernel(const Im2colArgs a) {
  const ColumnsGeometry g = a.g;
  const int H = (int)g.h, W = (int)g.w, LW = (int)g.lw, L = (int)(g.lh * g.lw);
  const int KW = (int)g.kw, KH = (int)g.kh;
  const i64 rows = g.n * g.c * g.kh * g.kw;
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const int kw = (int)(row % KW);
    const i64 t = row / KW;
    const int kh = (int)(t % KH);
    const i64 plane = t / KH;  // n * C + c
    const COL_T* image = a.image + plane * H * W;
    COL_T* out = a.cols + row * L;
    const int y0 = kh * (int)g.dh - (int)g.ph, x0 = kw * (int)g.dw - (int)g.pw;
    for (int l = threadIdx.x; l < L; l += blockDim.x) {
      const int lh = l / LW, lw = l - lh * LW;
      const int y = y0 + lh * (int)g.sh, x = x0 + lw * (int)g.sw;
      out[l] = (y >= 0 && y < H && x >= 0 && x < W) ? image[y * W + x] : COL_T(0);
    }
  }
}

struct Col2imArgs {
  const COL_T* cols; COL_T* image;
  ColumnsGeometry g;
};

extern "C" __global__ void col2im_kernel(const Col2imArgs a) {
  const ColumnsGeometry g = a.g;
  const int H = (int)g.h, W = (int)g.w, LH = (int)g.lh, LW = (int)g.lw, L = LH * LW;
  const int KH = (int)g.kh, KW = (int)g.kw, DH = (int)g.dh, DW = (int)g.dw, SH = (int)g.sh, SW = (int)g.sw;
  const int PH = (int)g.ph, PW = (int)g.pw;
  const i64 planes = g.n * g.c;
  for (i64 plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    const COL_T* cols = a.cols + plane * KH * KW * L;  // this (n, c)'s KH * KW rows
    COL_T* image = a.image + plane * H * W;
    for (int i = threadIdx.x; i < H * W; i += blockDim.x) {
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
      image[i] = convert<COL_T>(acc);
    }
  }
}
