// torch's implicit reparameterization gradients of the gamma and Dirichlet samplers (standard_gamma_grad_one and
// dirichlet_grad_one, ATen/native/Distributions.h; Note [Implicit reparameterization] in
// strided/backends/cpu/sampler_grads.py), computed in double.  Appended to common.cuh and elementwise.cuh
// (ew_digamma), with OUT_T #defined; the operands are dense and of out's shape.

struct GradParams {
  OUT_T* out;
  const OUT_T* a;
  const OUT_T* b;
  const OUT_T* c;
  i64 n;
};

__device__ double standard_gamma_grad_one(double alpha, double x) {
  if (x < 0.8) {  // Taylor series of the lower incomplete gamma
    double numer = 1.0, denom = alpha;
    double series1 = numer / denom, series2 = numer / (denom * denom);
    for (int i = 1; i <= 5; ++i) {
      numer *= -x / i;
      denom += 1.0;
      series1 += numer / denom;
      series2 += numer / (denom * denom);
    }
    const double pow_x_alpha = pow(x, alpha);
    const double gamma_pdf = pow(x, alpha - 1.0) * exp(-x);
    const double gamma_cdf = pow_x_alpha * series1;
    const double gamma_cdf_alpha = (log(x) - ew_digamma(alpha)) * gamma_cdf - pow_x_alpha * series2;
    const double result = -gamma_cdf_alpha / gamma_pdf;
    return isnan(result) ? 0.0 : result;
  }
  if (alpha > 8.0) {  // Rice's saddle-point expansion
    if (0.9 * alpha <= x && x <= 1.1 * alpha) {
      const double numer_1 = 1.0 + 24.0 * alpha * (1.0 + 12.0 * alpha);
      const double numer_2 = 1440.0 * (alpha * alpha) + 6.0 * x * (53.0 - 120.0 * x) - 65.0 * x * x / alpha +
                             alpha * (107.0 + 3600.0 * x);
      const double denom = 1244160.0 * (alpha * alpha) * (alpha * alpha);
      return numer_1 * numer_2 / denom;
    }
    const double denom = sqrt(8.0 * alpha);
    const double term2 = denom / (alpha - x);
    const double term3 = pow(x - alpha - alpha * log(x / alpha), -1.5);
    const double term23 = (x < alpha) ? term2 - term3 : term2 + term3;
    const double term1 = log(x / alpha) * term23 - sqrt(2.0 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
    const double stirling = 1.0 + 1.0 / (12.0 * alpha) * (1.0 + 1.0 / (24.0 * alpha));
    return -stirling * x * term1 / denom;
  }
  // the bivariate rational approximation
  const double u = log(x / alpha), v = log(alpha);
  const double coef_uv[3][8] = {
      {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084},
      {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
       -0.00058392623},
      {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
       -1.5247877e-07},
  };
  double coef_v[8];
  for (int i = 0; i < 8; ++i) coef_v[i] = coef_uv[0][i] + u * (coef_uv[1][i] + u * coef_uv[2][i]);
  const double p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]));
  const double q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]));
  return exp(p / q);
}

__device__ double beta_grad_alpha_small(double x, double alpha, double beta) {
  const double factor = ew_digamma(alpha) - ew_digamma(alpha + beta) - log(x);
  double numer = 1.0;
  double series = numer / alpha * (factor + 1.0 / alpha);
  for (int i = 1; i <= 10; ++i) {
    numer *= (i - beta) * x / i;
    const double denom = alpha + i;
    series += numer / denom * (factor + 1.0 / denom);
  }
  const double result = x * pow(1.0 - x, -beta) * series;
  return isnan(result) ? 0.0 : result;
}

__device__ double beta_grad_beta_small(double x, double alpha, double beta) {
  const double factor = ew_digamma(alpha + beta) - ew_digamma(beta);
  double numer = 1.0, betas = 1.0, dbetas = 0.0, series = factor / alpha;
  for (int i = 1; i <= 8; ++i) {
    numer *= -x / i;
    dbetas = dbetas * (beta - i) + betas;
    betas = betas * (beta - i);
    series += numer / (alpha + i) * (dbetas + factor * betas);
  }
  const double result = -pow(1.0 - x, 1.0 - beta) * series;
  return isnan(result) ? 0.0 : result;
}

__device__ double beta_grad_alpha_mid(double x, double alpha, double beta) {
  const double total = alpha + beta;
  const double mean = alpha / total;
  const double std = sqrt(alpha * beta / (total + 1.0)) / total;
  if (mean - 0.1 * std <= x && x <= mean + 0.1 * std) {
    const double poly =
        47 * x * (beta * beta) * (beta * beta) +
        alpha * ((43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta +
                 alpha * (3 * (59 + 180 * beta - 90 * x) * (beta * beta) +
                          alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta +
                                   alpha * (8 * (1 - x) * (135 * beta - 11)))));
    const double prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total);
    const double prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total);
    return prefactor_num / (1 - x) * poly / prefactor_den;
  }
  const double prefactor = -x / sqrt(2 * alpha * beta / total);
  const double stirling = (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) *
                          (1 + 1 / (12 * beta) + 1 / (288 * beta * beta)) /
                          (1 + 1 / (12 * total) + 1 / (288 * total * total));
  const double term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta);
  const double axbx = alpha * (x - 1) + beta * x;
  const double term1_den = sqrt(2 * alpha / beta) * pow(total, 1.5) * axbx * axbx;
  const double term1 = term1_num / term1_den;
  const double term2 = 0.5 * log(alpha / (total * x));
  const double term3 = sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1));
  const double term4 = pow(beta * log(beta / (total * (1 - x))) + alpha * log(alpha / (total * x)), -1.5);
  const double term1234 = term1 + term2 * (term3 + (x < mean ? term4 : -term4));
  return stirling * prefactor * term1234;
}

__device__ double dirichlet_grad_one(double x, double alpha, double total) {
  const double beta = total - alpha;
  const double boundary = total * x * (1 - x);
  if (x <= 0.5 && boundary < 2.5) return beta_grad_alpha_small(x, alpha, beta);
  if (x >= 0.5 && boundary < 0.75) return -beta_grad_beta_small(1 - x, beta, alpha);
  if (alpha > 6 && beta > 6) return beta_grad_alpha_mid(x, alpha, beta);
  const double c[2][3][3][4] = {
      {{{1.003668233, -0.01061107488, -0.0657888334, 0.01201642863},
        {0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033},
        {-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013}},
       {{0.221950385, -0.3187676331, 0.01799915743, 0.01074823814},
        {-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057},
        {0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05}},
       {{-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565},
        {0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181},
        {0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05}}},
      {{{1, -0.02924021934, -0.04438342661, 0.007285809825},
        {0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521},
        {-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149}},
       {{0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273},
        {0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956},
        {-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05}},
       {{0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05},
        {0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05},
        {-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06}}},
  };
  const double u = log(x);
  const double a = log(alpha) - u;
  const double b = log(total) - a;
  const double pow_u[3] = {1, u, u * u};
  const double pow_a[3] = {1, a, a * a};
  double p = 0.0, q = 0.0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double ua = pow_u[i] * pow_a[j];
      p += ua * (c[0][i][j][0] + b * (c[0][i][j][1] + b * (c[0][i][j][2] + b * c[0][i][j][3])));
      q += ua * (c[1][i][j][0] + b * (c[1][i][j][1] + b * (c[1][i][j][2] + b * c[1][i][j][3])));
    }
  }
  const double approx = x * (ew_digamma(total) - ew_digamma(alpha)) / beta;
  return p / q * approx;
}

#define GRAD_WIDE(ptr) ((double)ToWide<OUT_T>::get(ptr[i]))

extern "C" __global__ void standard_gamma_grad_kernel(const GradParams p) {
  const i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    p.out[i] = convert<OUT_T>(standard_gamma_grad_one(GRAD_WIDE(p.a), GRAD_WIDE(p.b)));
  }
}

extern "C" __global__ void dirichlet_grad_kernel(const GradParams p) {
  const i64 stride = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    p.out[i] = convert<OUT_T>(dirichlet_grad_one(GRAD_WIDE(p.a), GRAD_WIDE(p.b), GRAD_WIDE(p.c)));
  }
}
