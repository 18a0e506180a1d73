// 2-d max pooling with indices and its backward (torch's max_pool2d_with_indices_out_cuda_frame and
// max_pool_backward_nchw, aten/src/ATen/native/cuda/DilatedMaxPool2d.cu). POOL_T (storage) and ACC_T (compare)
// are #defined. Inputs are contiguous (N*C, H, W) planes; the output and indices (N*C, OH, OW).
//
// Forward: one thread per output element scans its window in row-major order and keeps a value when
// `val > max || isnan(val)`: the first maximum, or the last NaN (Note [The element a max pool chooses]). The index
// is the flat position h * W + w in the input plane.
// Backward: one thread per input element sums the gradients of the output windows that chose it (a gather over
// the few windows that can cover it: deterministic, no atomics).

struct MaxPoolGeometry {
  i64 planes, H, W, OH, OW;
  i64 kh, kw, sh, sw, ph, pw, dh, dw;
};

struct MaxPoolFwd {
  const POOL_T* in; POOL_T* out; i64* indices;
  MaxPoolGeometry g;
};

extern "C" __global__ void max_pool2d_fwd(const MaxPoolFwd p) {
  const MaxPoolGeometry g = p.g;
  const i64 total = g.planes * g.OH * g.OW;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
    const i64 ow = i % g.OW, t = i / g.OW, oh = t % g.OH, plane = t / g.OH;
    i64 hs = oh * g.sh - g.ph, ws = ow * g.sw - g.pw;
    const i64 he = min(hs + (g.kh - 1) * g.dh + 1, g.H), we = min(ws + (g.kw - 1) * g.dw + 1, g.W);
    while (hs < 0) hs += g.dh;
    while (ws < 0) ws += g.dw;
    const POOL_T* x = p.in + plane * g.H * g.W;
    ACC_T best = Lim<ACC_T>::lo();
    i64 at = hs * g.W + ws;
    for (i64 h = hs; h < he; h += g.dh) {
      for (i64 w = ws; w < we; w += g.dw) {
        const ACC_T v = convert<ACC_T>(x[h * g.W + w]);
        if (v > best || isnan(v)) {
          best = v;
          at = h * g.W + w;
        }
      }
    }
    p.out[i] = convert<POOL_T>(best);
    p.indices[i] = at;
  }
}

struct MaxPoolBwd {
  const POOL_T* grad_out; const i64* indices; POOL_T* grad_in;
  MaxPoolGeometry g;
};

extern "C" __global__ void max_pool2d_bwd(const MaxPoolBwd p) {
  const MaxPoolGeometry g = p.g;
  const i64 total = g.planes * g.H * g.W;
  const i64 span_h = (g.kh - 1) * g.dh + 1, span_w = (g.kw - 1) * g.dw + 1;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
    const i64 w = i % g.W, t = i / g.W, h = t % g.H, plane = t / g.H;
    // the windows whose span can hold (h, w): start <= h + ph < start + span
    const i64 oh0 = (h + g.ph < span_h) ? 0 : (h + g.ph - span_h) / g.sh + 1;
    const i64 oh1 = min((h + g.ph) / g.sh + 1, g.OH);
    const i64 ow0 = (w + g.pw < span_w) ? 0 : (w + g.pw - span_w) / g.sw + 1;
    const i64 ow1 = min((w + g.pw) / g.sw + 1, g.OW);
    const i64 base = plane * g.OH * g.OW;
    const i64 me = h * g.W + w;
    ACC_T acc = ACC_T(0);
    for (i64 oh = oh0; oh < oh1; ++oh) {
      for (i64 ow = ow0; ow < ow1; ++ow) {
        const i64 j = base + oh * g.OW + ow;
        if (p.indices[j] == me) acc += convert<ACC_T>(p.grad_out[j]);
      }
    }
    p.grad_in[i] = convert<POOL_T>(acc);
  }
}
