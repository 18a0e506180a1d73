// Philox4x32-10 random fills of a contiguous buffer.  DST_T is #defined before this source.
// Element i uses counter (i / 4, offset) and key (seed); lane i % 4 of that block's output,
// so a (seed, offset) pair always gives the same values whatever the launch shape.
struct RandomParams {
  DST_T* dst;
  const DST_T* prob;  // bernoulli with a tensor of probabilities (contiguous), else null
  i64 n;
  u64 seed;
  u64 offset;
  i64 mode;  // 0 uniform [a, b), 1 normal(a, b), 2 integers [lo, lo + range), 3 bernoulli(a)
  double a;
  double b;
  i64 lo;
  u64 range;
  const u64* state;  // under CUDA graph capture: {seed, base offset} read at run time (offset is then
                     // the draw's place in the graph; Note [Random ops under capture])
};

__device__ __forceinline__ uint4 philox(uint4 c, uint2 k) {
  for (int r = 0; r < 10; ++r) {
    unsigned hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    unsigned hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k.x += 0x9E3779B9u;
    k.y += 0xBB67AE85u;
  }
  return c;
}

__device__ __forceinline__ double u01(unsigned x, unsigned y) {  // [0, 1) with 53 bits
  return ((u64)(x >> 5) * 67108864.0 + (double)(y >> 6)) * (1.0 / 9007199254740992.0);
}

extern "C" __global__ void philox_fill(const RandomParams p) {
  i64 stride = (i64)blockDim.x * gridDim.x;
  const u64 seed = p.state ? p.state[0] : p.seed;
  const u64 offset = p.state ? p.state[1] + p.offset : p.offset;
  uint2 key = make_uint2((unsigned)seed, (unsigned)(seed >> 32));
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    u64 g = (u64)i;
    uint4 r = philox(make_uint4((unsigned)g, (unsigned)(g >> 32), (unsigned)offset,
                                (unsigned)(offset >> 32)), key);
    double v;
    if (p.mode == 0) {
      v = p.a + u01(r.x, r.y) * (p.b - p.a);
      DST_T o = convert<DST_T>(v);
      if (p.b > p.a && (double)ToWide<DST_T>::get(o) >= p.b) o = convert<DST_T>(p.a);
      p.dst[i] = o;
    } else if (p.mode == 1) {
      double u1 = 1.0 - u01(r.x, r.y);  // (0, 1]
      double u2 = u01(r.z, r.w);
      v = p.a + p.b * sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
      p.dst[i] = convert<DST_T>(v);
    } else if (p.mode == 2) {
      u64 x = ((u64)r.x << 32) | r.y;
      p.dst[i] = convert<DST_T>(p.lo + (i64)(x % p.range));
    } else {
      double prob = p.prob ? (double)ToWide<DST_T>::get(p.prob[i]) : p.a;
      p.dst[i] = convert<DST_T>(u01(r.x, r.y) < prob ? 1 : 0);
    }
  }
}
