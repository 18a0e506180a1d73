// Backward of softmax (LOG = 0) and log_softmax (LOG = 1) over contiguous rows of D elements.
// IN_T (grad_output and output), OUT_T (the result: the forward's input dtype) and ACC_T are
// #defined. softmax: gI = y * (gO - sum(gO * y)); log_softmax: gI = gO - exp(y) * sum(gO).
struct SmBwdParams {
  const IN_T* grad;
  const IN_T* out;
  OUT_T* res;
  i64 rows;
  i64 D;
  i64 group;  // threads per row: up to 32, or blockDim
};

extern "C" __global__ void __launch_bounds__(512) softmax_bwd_rows(const SmBwdParams p) {
  const int G = (int)p.group, lane = threadIdx.x % G;
  const i64 per_block = blockDim.x / G;
  for (i64 row = blockIdx.x * per_block + threadIdx.x / G; row - threadIdx.x / G < p.rows;
       row += (i64)gridDim.x * per_block) {
    const bool ok = row < p.rows;
    const IN_T* gp = p.grad + (ok ? row * p.D : 0);
    const IN_T* yp = p.out + (ok ? row * p.D : 0);
    ACC_T s = ACC_T(0);
    if (ok)
      for (i64 e = lane; e < p.D; e += G) {
        const ACC_T g = convert<ACC_T>(gp[e]);
        s += LOG ? g : g * convert<ACC_T>(yp[e]);
      }
    s = group_reduce(s, G, SumComb<ACC_T>());
    if (ok) {
      OUT_T* rp = p.res + row * p.D;
      for (i64 e = lane; e < p.D; e += G) {
        const ACC_T g = convert<ACC_T>(gp[e]), y = convert<ACC_T>(yp[e]);
        rp[e] = convert<OUT_T>(LOG ? g - exp(y) * s : y * (g - s));
      }
    }
  }
}
