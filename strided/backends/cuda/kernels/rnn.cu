// Fused LSTM and GRU cell pointwise math (torch's _thnn_fused_lstm_cell / _thnn_fused_gru_cell and
// their backwards, aten/src/ATen/native/cuda/RNN.cu). RNN_T (storage) and ACC_T (compute) are #defined.
//
// One thread per (batch row n, hidden unit j). The gate tensors are contiguous (N, G * H) with gate k
// of unit j at column k * H + j; biases are (G * H) or null. The workspace keeps what the backward
// needs: LSTM the four activated gates (N, 4H); GRU r, z, n, hx and the hidden n-gate (N, 5H).

__device__ __forceinline__ float rnn_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double rnn_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float rnn_sigmoid(float x) { return 1.f / (1.f + expf(-x)); }
__device__ __forceinline__ double rnn_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

__device__ __forceinline__ ACC_T ld(const RNN_T* p, i64 i) { return convert<ACC_T>(p[i]); }
__device__ __forceinline__ ACC_T ld_or0(const RNN_T* p, i64 i) { return p ? convert<ACC_T>(p[i]) : ACC_T(0); }

struct LstmFwd {
  const RNN_T* ig; const RNN_T* hg; const RNN_T* ib; const RNN_T* hb; const RNN_T* cx;
  RNN_T* hy; RNN_T* cy; RNN_T* ws;
  i64 total;  // N * H
  i64 H;
};

extern "C" __global__ void lstm_cell_fwd(const LstmFwd p) {
  for (i64 idx = (i64)blockIdx.x * blockDim.x + threadIdx.x; idx < p.total; idx += (i64)gridDim.x * blockDim.x) {
    const i64 n = idx / p.H, j = idx - n * p.H;
    const i64 row = n * 4 * p.H + j;
    ACC_T g[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      g[k] = ld(p.ig, row + k * p.H) + ld(p.hg, row + k * p.H) + ld_or0(p.ib, j + k * p.H) + ld_or0(p.hb, j + k * p.H);
    }
    const ACC_T i = rnn_sigmoid(g[0]), f = rnn_sigmoid(g[1]), c = rnn_tanh(g[2]), o = rnn_sigmoid(g[3]);
    const ACC_T cy = f * ld(p.cx, idx) + i * c;
    const ACC_T hy = o * rnn_tanh(cy);
    p.ws[row] = convert<RNN_T>(i);
    p.ws[row + p.H] = convert<RNN_T>(f);
    p.ws[row + 2 * p.H] = convert<RNN_T>(c);
    p.ws[row + 3 * p.H] = convert<RNN_T>(o);
    p.cy[idx] = convert<RNN_T>(cy);
    p.hy[idx] = convert<RNN_T>(hy);
  }
}

struct LstmBwd {
  const RNN_T* ghy; const RNN_T* gcy; const RNN_T* cx; const RNN_T* cy; const RNN_T* ws;  // ghy / gcy may be null (no gradient)
  RNN_T* ggates; RNN_T* gcx;
  i64 total;
  i64 H;
};

extern "C" __global__ void lstm_cell_bwd(const LstmBwd p) {
  for (i64 idx = (i64)blockIdx.x * blockDim.x + threadIdx.x; idx < p.total; idx += (i64)gridDim.x * blockDim.x) {
    const i64 n = idx / p.H, j = idx - n * p.H;
    const i64 row = n * 4 * p.H + j;
    const ACC_T i = ld(p.ws, row), f = ld(p.ws, row + p.H), c = ld(p.ws, row + 2 * p.H), o = ld(p.ws, row + 3 * p.H);
    const ACC_T tc = rnn_tanh(ld(p.cy, idx));
    const ACC_T gh = ld_or0(p.ghy, idx);
    const ACC_T gc = gh * o * (ACC_T(1) - tc * tc) + ld_or0(p.gcy, idx);
    p.ggates[row] = convert<RNN_T>(gc * c * i * (ACC_T(1) - i));
    p.ggates[row + p.H] = convert<RNN_T>(gc * ld(p.cx, idx) * f * (ACC_T(1) - f));
    p.ggates[row + 2 * p.H] = convert<RNN_T>(gc * i * (ACC_T(1) - c * c));
    p.ggates[row + 3 * p.H] = convert<RNN_T>(gh * tc * o * (ACC_T(1) - o));
    p.gcx[idx] = convert<RNN_T>(gc * f);
  }
}

struct GruFwd {
  const RNN_T* ig; const RNN_T* hg; const RNN_T* ib; const RNN_T* hb; const RNN_T* hx;
  RNN_T* hy; RNN_T* ws;
  i64 total;
  i64 H;
};

extern "C" __global__ void gru_cell_fwd(const GruFwd p) {
  for (i64 idx = (i64)blockIdx.x * blockDim.x + threadIdx.x; idx < p.total; idx += (i64)gridDim.x * blockDim.x) {
    const i64 n = idx / p.H, j = idx - n * p.H;
    const i64 row = n * 3 * p.H + j, H = p.H;
    const ACC_T r = rnn_sigmoid(ld(p.ig, row) + ld_or0(p.ib, j) + ld(p.hg, row) + ld_or0(p.hb, j));
    const ACC_T z = rnn_sigmoid(ld(p.ig, row + H) + ld_or0(p.ib, j + H) + ld(p.hg, row + H) + ld_or0(p.hb, j + H));
    const ACC_T hn = ld(p.hg, row + 2 * H) + ld_or0(p.hb, j + 2 * H);
    const ACC_T nn = rnn_tanh(ld(p.ig, row + 2 * H) + ld_or0(p.ib, j + 2 * H) + r * hn);
    const ACC_T hx = ld(p.hx, idx);
    p.hy[idx] = convert<RNN_T>(nn + z * (hx - nn));
    const i64 w = n * 5 * H + j;
    p.ws[w] = convert<RNN_T>(r);
    p.ws[w + H] = convert<RNN_T>(z);
    p.ws[w + 2 * H] = convert<RNN_T>(nn);
    p.ws[w + 3 * H] = convert<RNN_T>(hx);
    p.ws[w + 4 * H] = convert<RNN_T>(hn);
  }
}

struct GruBwd {
  const RNN_T* ghy; const RNN_T* ws;
  RNN_T* gig; RNN_T* ghg; RNN_T* ghx;
  i64 total;
  i64 H;
};

extern "C" __global__ void gru_cell_bwd(const GruBwd p) {
  for (i64 idx = (i64)blockIdx.x * blockDim.x + threadIdx.x; idx < p.total; idx += (i64)gridDim.x * blockDim.x) {
    const i64 n = idx / p.H, j = idx - n * p.H, H = p.H;
    const i64 w = n * 5 * H + j, row = n * 3 * H + j;
    const ACC_T r = ld(p.ws, w), z = ld(p.ws, w + H), nn = ld(p.ws, w + 2 * H), hx = ld(p.ws, w + 3 * H);
    const ACC_T hn = ld(p.ws, w + 4 * H);
    const ACC_T gh = ld(p.ghy, idx);
    const ACC_T gn = gh * (ACC_T(1) - z) * (ACC_T(1) - nn * nn);
    const ACC_T gz = gh * (hx - nn) * z * (ACC_T(1) - z);
    const ACC_T gr = gn * hn * r * (ACC_T(1) - r);
    p.gig[row] = convert<RNN_T>(gr);
    p.gig[row + H] = convert<RNN_T>(gz);
    p.gig[row + 2 * H] = convert<RNN_T>(gn);
    p.ghg[row] = convert<RNN_T>(gr);
    p.ghg[row + H] = convert<RNN_T>(gz);
    p.ghg[row + 2 * H] = convert<RNN_T>(gn * r);
    p.ghx[idx] = convert<RNN_T>(gh * z);
  }
}
