// batch_norm over the channels (dim 1) of a contiguous (N, C, S) input, S the product of the spatial sizes
// (kernels/batch_norm_ops.py; torch's aten/src/ATen/native/cuda/Normalization.cuh in a simpler form).
// IN_T (input, output, gradients), P_T (weight, bias, statistics: float for a half or float input, double for
// double; also the accumulation type) and BN_BLOCK (threads per block, a power of two) are #defined.
//
// Note [Batch-norm kernels]
// Two launches each way. bn_stats / bn_grad_stats give each channel a block (grid-striding over channels) that
// sums its N * S elements into shared memory: the mean, then the squared deviations from it (two passes over a
// channel, the second from L2, for a variance without cancellation), or the gradient's two sums; one thread then
// writes the channel's results (statistics and running statistics, or the weight's and bias's gradients).
// bn_apply / bn_grad_apply then map every element, thread per element, with 32-bit index math (the launcher
// checks N * C * S < 2^31). The sums are deterministic: a fixed order per channel, no atomics.

struct BnParams {
  const IN_T* x;
  const IN_T* g;     // backward: the output's gradient
  IN_T* out;         // forward: the output; backward: the input's gradient (null: not wanted)
  const P_T* w;      // null: no weight
  const P_T* b;      // null: no bias
  P_T* mean;         // the batch mean (bn_stats writes it), or the running mean in evaluation
  P_T* invstd;       // 1 / sqrt(var + eps), likewise
  P_T* running_mean; // null: none
  P_T* running_var;  // null: none
  P_T* grad_w;       // null: not wanted
  P_T* grad_b;       // null: not wanted
  P_T* sums;         // backward: per channel the sum of g, then (at C + channel) the sum of g * xhat
  i64 n, c, s;
  double momentum, eps;
  i64 training;
};

__device__ __forceinline__ P_T bn_block_sum(P_T* red, P_T v) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = BN_BLOCK / 2; half > 0; half >>= 1) {
    if (threadIdx.x < half) red[threadIdx.x] += red[threadIdx.x + half];
    __syncthreads();
  }
  const P_T total = red[0];
  __syncthreads();  // red is written again by the next sum
  return total;
}

extern "C" __global__ void bn_stats(const BnParams p) {
  __shared__ P_T red[BN_BLOCK];
  const unsigned S = (unsigned)p.s, count = (unsigned)(p.n * p.s);
  const i64 plane = p.c * p.s;
  for (i64 ch = blockIdx.x; ch < p.c; ch += gridDim.x) {
    const IN_T* x = p.x + ch * p.s;
    P_T acc = P_T(0);
    for (unsigned j = threadIdx.x; j < count; j += BN_BLOCK) {
      const unsigned n = j / S;
      acc += convert<P_T>(x[n * plane + (j - n * S)]);
    }
    const P_T mean = bn_block_sum(red, acc) / P_T(count);
    acc = P_T(0);
    for (unsigned j = threadIdx.x; j < count; j += BN_BLOCK) {
      const unsigned n = j / S;
      const P_T d = convert<P_T>(x[n * plane + (j - n * S)]) - mean;
      acc += d * d;
    }
    const P_T var = bn_block_sum(red, acc) / P_T(count);
    if (threadIdx.x == 0) {
      p.mean[ch] = mean;
      p.invstd[ch] = P_T(1) / sqrt(var + P_T(p.eps));
      const P_T m = P_T(p.momentum);
      if (p.running_mean) p.running_mean[ch] = (P_T(1) - m) * p.running_mean[ch] + m * mean;
      if (p.running_var)
        p.running_var[ch] = (P_T(1) - m) * p.running_var[ch] + m * var * P_T(count) / P_T(count - 1);
    }
  }
}

extern "C" __global__ void bn_apply(const BnParams p) {
  const unsigned total = (unsigned)(p.n * p.c * p.s), S = (unsigned)p.s, C = (unsigned)p.c;
  for (unsigned i = blockIdx.x * BN_BLOCK + threadIdx.x; i < total; i += gridDim.x * BN_BLOCK) {
    const unsigned ch = (i / S) % C;
    P_T y = (convert<P_T>(p.x[i]) - p.mean[ch]) * p.invstd[ch];
    if (p.w) y = y * p.w[ch];
    if (p.b) y = y + p.b[ch];
    p.out[i] = convert<IN_T>(y);
  }
}

extern "C" __global__ void bn_grad_stats(const BnParams p) {
  __shared__ P_T red[BN_BLOCK];
  const unsigned S = (unsigned)p.s, count = (unsigned)(p.n * p.s);
  const i64 plane = p.c * p.s;
  for (i64 ch = blockIdx.x; ch < p.c; ch += gridDim.x) {
    const IN_T* x = p.x + ch * p.s;
    const IN_T* g = p.g + ch * p.s;
    const P_T mean = p.mean[ch], invstd = p.invstd[ch];
    P_T sg = P_T(0), sgx = P_T(0);
    for (unsigned j = threadIdx.x; j < count; j += BN_BLOCK) {
      const unsigned n = j / S;
      const i64 e = n * plane + (j - n * S);
      const P_T gv = convert<P_T>(g[e]);
      sg += gv;
      sgx += gv * (convert<P_T>(x[e]) - mean);
    }
    sg = bn_block_sum(red, sg);
    sgx = bn_block_sum(red, sgx) * invstd;
    if (threadIdx.x == 0) {
      p.sums[ch] = sg;
      p.sums[p.c + ch] = sgx;
      if (p.grad_b) p.grad_b[ch] = sg;
      if (p.grad_w) p.grad_w[ch] = sgx;
    }
  }
}

extern "C" __global__ void bn_grad_apply(const BnParams p) {
  const unsigned total = (unsigned)(p.n * p.c * p.s), S = (unsigned)p.s, C = (unsigned)p.c;
  const P_T inv_count = P_T(1) / P_T(p.n * p.s);
  for (unsigned i = blockIdx.x * BN_BLOCK + threadIdx.x; i < total; i += gridDim.x * BN_BLOCK) {
    const unsigned ch = (i / S) % C;
    const P_T invstd = p.invstd[ch];
    const P_T scale = p.w ? invstd * p.w[ch] : invstd;
    P_T gv = convert<P_T>(p.g[i]);
    if (p.training) {
      const P_T xhat = (convert<P_T>(p.x[i]) - p.mean[ch]) * invstd;
      gv = gv - p.sums[ch] * inv_count - xhat * p.sums[C + ch] * inv_count;
    }
    p.out[i] = convert<IN_T>(gv * scale);
  }
}

// Note [Per-channel affine pass]
// Group norm's elementwise passes (kernels/group_norm_ops.py) are affine per (sample, channel) pair of a contiguous
// (N, C, S) tensor: out = (x - d[ch]) * b[ch] + c[ch] forward, plus g * a[ch] for the input's gradient, ch = i / S
// counting the N * C pairs, with the coefficients computed from the (N, group) statistics beforehand (torch's
// group-norm kernels take the same form, with x * b + c: subtracting the mean first keeps the digits a large mean
// would cancel). One read of each input and one write, thread per element.
struct AffineParams {
  const IN_T* x;
  const IN_T* g;  // null: no g term
  IN_T* out;
  const P_T* a;   // the factor of g, per pair
  const P_T* b;   // the factor of x - d, per pair
  const P_T* c;   // the constant, per pair
  const P_T* d;   // subtracted from x, per pair
  i64 total, s;
};

extern "C" __global__ void channel_affine(const AffineParams p) {
  const unsigned total = (unsigned)p.total, S = (unsigned)p.s;
  for (unsigned i = blockIdx.x * BN_BLOCK + threadIdx.x; i < total; i += gridDim.x * BN_BLOCK) {
    const unsigned ch = i / S;
    P_T y = (convert<P_T>(p.x[i]) - p.d[ch]) * p.b[ch] + p.c[ch];
    if (p.g) y += convert<P_T>(p.g[i]) * p.a[ch];
    p.out[i] = convert<IN_T>(y);
  }
}
