// 2-d average pooling and its backward (torch's avg_pool2d_out_cuda_frame and avg_pool2d_backward_out_cuda_frame,
// aten/src/ATen/native/cuda/AveragePool2d.cu). POOL_T (storage) and ACC_T (sum) are #defined. Inputs are
// contiguous (N*C, H, W) planes; the output (N*C, OH, OW).
//
// A window's divisor is torch's: divisor_override when given, else the window clipped to the padded input
// (count_include_pad) or to the input itself. Forward: one thread per output element sums its window. Backward:
// one thread per input element sums, over the few windows that cover it, each window's gradient over its divisor
// (a gather: deterministic, no atomics).

struct AvgPoolGeometry {
  i64 planes, H, W, OH, OW;
  i64 kh, kw, sh, sw, ph, pw;
  i64 count_include_pad, divisor_override;  // divisor_override 0: none
};

// The window of output (oh, ow): its clipped bounds [hs, he) x [ws, we) and its divisor.
__device__ __forceinline__ i64 avg_window(const AvgPoolGeometry& g, i64 oh, i64 ow, i64& hs, i64& he, i64& ws,
                                          i64& we) {
  hs = oh * g.sh - g.ph;
  ws = ow * g.sw - g.pw;
  he = min(hs + g.kh, g.H + g.ph);
  we = min(ws + g.kw, g.W + g.pw);
  const i64 pool = (he - hs) * (we - ws);
  hs = max(hs, (i64)0);
  ws = max(ws, (i64)0);
  he = min(he, g.H);
  we = min(we, g.W);
  if (g.divisor_override) return g.divisor_override;
  return g.count_include_pad ? pool : (he - hs) * (we - ws);
}

struct AvgPoolFwd {
  const POOL_T* in; POOL_T* out;
  AvgPoolGeometry g;
};

extern "C" __global__ void avg_pool2d_fwd(const AvgPoolFwd p) {
  const AvgPoolGeometry g = p.g;
  const i64 total = g.planes * g.OH * g.OW;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
    const i64 ow = i % g.OW, t = i / g.OW, oh = t % g.OH, plane = t / g.OH;
    i64 hs, he, ws, we;
    const i64 divisor = avg_window(g, oh, ow, hs, he, ws, we);
    if (hs >= he || ws >= we) {  // a window wholly in the padding (torch writes 0)
      p.out[i] = convert<POOL_T>(ACC_T(0));
      continue;
    }
    const POOL_T* x = p.in + plane * g.H * g.W;
    ACC_T acc = ACC_T(0);
    for (i64 h = hs; h < he; ++h) {
      for (i64 w = ws; w < we; ++w) acc += convert<ACC_T>(x[h * g.W + w]);
    }
    p.out[i] = convert<POOL_T>(acc / ACC_T(divisor));
  }
}

struct AvgPoolBwd {
  const POOL_T* grad_out; POOL_T* grad_in;
  AvgPoolGeometry g;
};

extern "C" __global__ void avg_pool2d_bwd(const AvgPoolBwd p) {
  const AvgPoolGeometry g = p.g;
  const i64 total = g.planes * g.H * g.W;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
    const i64 w = i % g.W, t = i / g.W, h = t % g.H, plane = t / g.H;
    // the windows that hold (h, w): start <= h + ph < start + kh
    const i64 oh0 = (h + g.ph < g.kh) ? 0 : (h + g.ph - g.kh) / g.sh + 1;
    const i64 oh1 = min((h + g.ph) / g.sh + 1, g.OH);
    const i64 ow0 = (w + g.pw < g.kw) ? 0 : (w + g.pw - g.kw) / g.sw + 1;
    const i64 ow1 = min((w + g.pw) / g.sw + 1, g.OW);
    const POOL_T* go = p.grad_out + plane * g.OH * g.OW;
    ACC_T acc = ACC_T(0);
    for (i64 oh = oh0; oh < oh1; ++oh) {
      for (i64 ow = ow0; ow < ow1; ++ow) {
        i64 hs, he, ws, we;
        const i64 divisor = avg_window(g, oh, ow, hs, he, ws, we);
        acc += convert<ACC_T>(go[oh * g.OW + ow]) / ACC_T(divisor);
      }
    }
    p.grad_in[i] = convert<POOL_T>(acc);
  }
}
