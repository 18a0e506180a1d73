// im2col and col2im (F.unfold / F.fold, the convolution's columns; torch's aten/src/ATen/native/cuda/im2col.cuh).
// COL_T (storage) and ACC_T (col2im's sums) are #defined. The image is a contiguous (N, C, H, W) tensor, the columns
// a contiguous (N, C * KH * KW, LH * LW) one: row (c, kh, kw), column (lh, lw) holds the image element at
// (lh * SH - PH + kh * DH, lw * SW - PW + kw * DW), 0 outside the image.
//
// im2col: one thread per column element, consecutive threads along a row (coalesced stores; the loads are
// strided by SW). col2im: one thread per image element sums the column entries that name it (a gather over at
// most KH * KW entries: deterministic, no atomics).

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
  const i64 total = g.n * g.per_image;
  const i64 L = g.lh * g.lw;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
    const i64 l = i % L, row = i / L;
    const i64 kw = row % g.kw, t = row / g.kw, kh = t % g.kh, plane = t / g.kh;  // plane: n * C + c
    const i64 y = (l / g.lw) * g.sh - g.ph + kh * g.dh, x = (l % g.lw) * g.sw - g.pw + kw * g.dw;
    a.cols[i] = (y >= 0 && y < g.h && x >= 0 && x < g.w) ? a.image[(plane * g.h + y) * g.w + x] : COL_T(0);
  }
}

struct Col2imArgs {
  const COL_T* cols; COL_T* image;
  ColumnsGeometry g;
};

extern "C" __global__ void col2im_kernel(const Col2imArgs a) {
  const ColumnsGeometry g = a.g;
  const i64 total = g.n * g.c * g.h * g.w;
  const i64 L = g.lh * g.lw;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
    const i64 x = i % g.w, t = i / g.w, y = t % g.h, plane = t / g.h;
    const COL_T* cols = a.cols + plane * g.kh * g.kw * L;  // this (n, c)'s KH * KW rows
    ACC_T acc = ACC_T(0);
    for (i64 kh = 0; kh < g.kh; ++kh) {
      const i64 yy = y + g.ph - kh * g.dh;  // = lh * SH for the block that puts (kh, .) here
      if (yy < 0 || yy % g.sh) continue;
      const i64 lh = yy / g.sh;
      if (lh >= g.lh) continue;
      for (i64 kw = 0; kw < g.kw; ++kw) {
        const i64 xx = x + g.pw - kw * g.dw;
        if (xx < 0 || xx % g.sw) continue;
        const i64 lw = xx / g.sw;
        if (lw >= g.lw) continue;
        acc += convert<ACC_T>(cols[(kh * g.kw + kw) * L + lh * g.lw + lw]);
      }
    }
    a.image[i] = convert<COL_T>(acc);
  }
}
