// The gamma-family samplers and their reparameterization gradients (Note [Sampler streams] in
// random_samplers_ops.py).  Appended to common.cuh, elementwise.cuh (ew_digamma, ew_lgamma) and random.cu (philox,
// u01), with IN_T (the parameters' type) and OUT_T (the result's) #defined.  Every sampler computes in double and
// bounds its rejection loop: a parameter that is NaN (or out of the domain) gives NaN, never an endless loop.
#define SAMPLER_MAX_TRIES 1000  // P(more rejections) < 0.76^1000 for the slowest acceptance (BTRS at ~24%)
#define SAMPLER_NAN __longlong_as_double(0x7ff8000000000000LL)
#define SAMPLER_INF __longlong_as_double(0x7ff0000000000000LL)

struct SamplerParams {
  OUT_T* out;
  const IN_T* a;  // alpha, rate or count: dense, out's shape
  const IN_T* b;  // prob (binomial), else null
  i64 n;
  u64 seed;
  u64 offset;
  const u64* state;  // under CUDA graph capture: {seed, base offset} read at run time
  double tiny;       // _standard_gamma: the result dtype's smallest normal (torch's clamp); 0 otherwise
};

// Element i's own Philox stream: counter (i, draw << 16 | i >> 32, offset), key seed.  Every draw of 4 words
// bumps `draw`, so rejection loops read fresh numbers and a (seed, offset) pair gives the same values whatever
// the launch shape; elements up to 2^48, 65536 draws (131072 uniforms) per element.
struct SamplerStream {
  uint2 key;
  unsigned c0, c1, c2, c3, draw;
  uint4 buf;
  int left;
  __device__ SamplerStream(u64 seed, u64 offset, u64 i)
      : key(make_uint2((unsigned)seed, (unsigned)(seed >> 32))), c0((unsigned)i),
        c1((unsigned)(i >> 32) & 0xFFFFu), c2((unsigned)offset), c3((unsigned)(offset >> 32)), draw(0),
        left(0) {}
  __device__ double uniform() {  // [0, 1), 53 bits
    if (left == 0) {
      buf = philox(make_uint4(c0, c1 | (draw << 16), c2, c3), key);
      ++draw;
      left = 2;
    }
    return left-- == 2 ? u01(buf.x, buf.y) : u01(buf.z, buf.w);
  }
  __device__ double normal() {  // Box-Muller
    double u1 = 1.0 - uniform();  // (0, 1]
    double u2 = uniform();
    return sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
  }
};

// Marsaglia and Tsang (2000), alpha < 1 boosted by U^(1 / alpha): torch's sample_gamma.
__device__ double sample_gamma(double alpha, SamplerStream& rng) {
  if (!(alpha >= 0.0)) return SAMPLER_NAN;
  if (alpha == 0.0) return 0.0;
  if (isinf(alpha)) return SAMPLER_INF;
  double scale = 1.0;
  if (alpha < 1.0) {
    scale = pow(1.0 - rng.uniform(), 1.0 / alpha);
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / sqrt(9.0 * d);
  for (int t = 0; t < SAMPLER_MAX_TRIES; ++t) {
    const double x = rng.normal();
    const double y = 1.0 + c * x;
    if (y <= 0.0) continue;
    const double v = y * y * y;
    const double u = 1.0 - rng.uniform();
    const double xx = x * x;
    if (u < 1.0 - 0.0331 * xx * xx) return scale * d * v;
    if (log(u) < 0.5 * xx + d * (1.0 - v + log(v))) return scale * d * v;
  }
  return SAMPLER_NAN;
}

// torch's sample_poisson: Hoermann's transformed rejection (PTRS) for rate >= 10, else the product of uniforms.
__device__ double sample_poisson(double lambda, SamplerStream& rng) {
  if (!(lambda >= 0.0)) return SAMPLER_NAN;
  if (lambda == 0.0) return 0.0;
  if (isinf(lambda)) return SAMPLER_INF;
  if (lambda >= 10.0) {
    const double slam = sqrt(lambda), loglam = log(lambda);
    const double b = 0.931 + 2.53 * slam;
    const double a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4);
    const double vr = 0.9277 - 3.6224 / (b - 2.0);
    for (int t = 0; t < SAMPLER_MAX_TRIES; ++t) {
      const double U = rng.uniform() - 0.5;
      const double V = rng.uniform();
      const double us = 0.5 - fabs(U);
      const double k = floor((2.0 * a / us + b) * U + lambda + 0.43);
      if (us >= 0.07 && V <= vr) return k;
      if (k < 0.0 || (us < 0.013 && V > us)) continue;
      if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -lambda + k * loglam - lgamma(k + 1.0)) return k;
    }
    return SAMPLER_NAN;
  }
  const double enlam = exp(-lambda);
  double prod = 1.0, x = 0.0;
  for (int t = 0; t < SAMPLER_MAX_TRIES; ++t) {
    prod *= rng.uniform();
    if (prod <= enlam) return x;
    x += 1.0;
  }
  return SAMPLER_NAN;
}

// torch's binomial samplers (from TensorFlow's random_binomial_op): inversion and Hoermann's BTRS.
__device__ double stirling_approx_tail(double k) {
  const double tail[] = {0.0810614667953272,  0.0413406959554092,  0.0276779256849983, 0.02079067210376509,
                         0.0166446911898211,  0.0138761288230707,  0.0118967099458917, 0.0104112652619720,
                         0.00925546218271273, 0.00833056343336287};
  if (k < 10.0) return tail[(int)k];
  const double kp1sq = (k + 1.0) * (k + 1.0);
  return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1.0);
}

__device__ double binomial_inversion(double count, double prob, SamplerStream& rng) {
  const double logprob = log1p(-prob);
  double geom_sum = 0.0, num_geom = 0.0;
  for (int t = 0; t < SAMPLER_MAX_TRIES; ++t) {
    geom_sum += ceil(log(rng.uniform()) / logprob);
    if (geom_sum > count) return num_geom;
    num_geom += 1.0;
  }
  return SAMPLER_NAN;
}

__device__ double binomial_btrs(double count, double prob, SamplerStream& rng) {
  const double stddev = sqrt(count * prob * (1.0 - prob));
  const double b = 1.15 + 2.53 * stddev;
  const double a = -0.0873 + 0.0248 * b + 0.01 * prob;
  const double c = count * prob + 0.5;
  const double v_r = 0.92 - 4.2 / b;
  const double r = prob / (1.0 - prob);
  const double alpha = (2.83 + 5.1 / b) * stddev;
  const double m = floor((count + 1.0) * prob);
  for (int t = 0; t < SAMPLER_MAX_TRIES; ++t) {
    const double U = rng.uniform() - 0.5;
    double V = rng.uniform();
    const double us = 0.5 - fabs(U);
    const double k = floor((2.0 * a / us + b) * U + c);
    if (k < 0.0 || k > count) continue;
    if (us >= 0.07 && V <= v_r) return k;
    V = log(V * alpha / (a / (us * us) + b));
    const double upperbound = (m + 0.5) * log((m + 1.0) / (r * (count - m + 1.0))) +
                              (count + 1.0) * log((count - m + 1.0) / (count - k + 1.0)) +
                              (k + 0.5) * log(r * (count - k + 1.0) / (k + 1.0)) + stirling_approx_tail(m) +
                              stirling_approx_tail(count - m) - stirling_approx_tail(k) -
                              stirling_approx_tail(count - k);
    if (V <= upperbound) return k;
  }
  return SAMPLER_NAN;
}

__device__ double sample_binomial(double count, double prob, SamplerStream& rng) {
  count = floor(count);  // whole trials (Note [CPU samplers])
  if (count <= 0.0 || prob <= 0.0) return 0.0;
  if (isnan(count) || isnan(prob)) return SAMPLER_NAN;
  if (prob >= 1.0) return count;
  if (isinf(count)) return SAMPLER_INF;
  if (prob <= 0.5) {
    return count * prob >= 10.0 ? binomial_btrs(count, prob, rng) : binomial_inversion(count, prob, rng);
  }
  const double q = 1.0 - prob;
  return count - (count * q >= 10.0 ? binomial_btrs(count, q, rng) : binomial_inversion(count, q, rng));
}

#define SAMPLER_LOOP(DRAW)                                                             \
  const u64 seed = p.state ? p.state[0] : p.seed;                                      \
  const u64 offset = p.state ? p.state[1] + p.offset : p.offset;                       \
  const i64 stride = (i64)blockDim.x * gridDim.x;                                      \
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {     \
    SamplerStream rng(seed, offset, (u64)i);                                           \
    const double a = (double)ToWide<IN_T>::get(p.a[i]);                                \
    DRAW;                                                                              \
  }

extern "C" __global__ void standard_gamma_kernel(const SamplerParams p) {
  SAMPLER_LOOP({
    OUT_T o = convert<OUT_T>(sample_gamma(a, rng));
    if ((double)ToWide<OUT_T>::get(o) < p.tiny) o = convert<OUT_T>(p.tiny);  // (NaN stays NaN)
    p.out[i] = o;
  })
}

extern "C" __global__ void poisson_kernel(const SamplerParams p) {
  SAMPLER_LOOP(p.out[i] = convert<OUT_T>(sample_poisson(a, rng)))
}

extern "C" __global__ void binomial_kernel(const SamplerParams p) {
  SAMPLER_LOOP(p.out[i] = convert<OUT_T>(sample_binomial(a, (double)ToWide<IN_T>::get(p.b[i]), rng)))
}
