"""Result dtypes under autocast as torch's, call by call, for the entries of torch's autocast lists
(aten/src/ATen/autocast_mode.cpp / .h) and the functions models call around them: strided and torch run each call
under ``autocast(device)`` (CPU: bfloat16; CUDA: float16 and bfloat16) on float32 inputs, on inputs already in the
low dtype, and, for the promote policy, on mixed inputs. Where torch refuses a call (a oneDNN primitive missing on
this host, bfloat16 kernels it lacks), the dtype is not compared; the deviations kept on purpose are listed in
``DEVIATIONS`` and checked as such."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices

rng = np.random.default_rng(0)
A = (rng.random((4, 4)) + 4 * np.eye(4)).astype(np.float32)
IMG = rng.random((2, 3, 6, 6)).astype(np.float32)
VOL = rng.random((1, 2, 4, 4, 4)).astype(np.float32)
SEQ = rng.random((3, 2, 4)).astype(np.float32)
SIG = rng.random((64,)).astype(np.float32)
V = rng.random((4,)).astype(np.float32)
W3 = np.ones((2, 3, 3, 3), np.float32) / 9
TARGET = np.array([0, 1, 2, 3])


def F(T):
    return T.nn.functional


def module(T, dev, name, *args, **kwargs):
    T.manual_seed(0)
    return getattr(T.nn, name)(*args, **kwargs).to(dev)


def idx(T, dev, values):
    return T.tensor(values, device=dev)


# name -> f(T, t, low, dev): t(array) makes an input (float32, or in the low dtype), low is the autocast dtype
CASES = {
    # torch's lower-precision lists
    "conv2d": lambda T, t, lo, d: F(T).conv2d(t(IMG), t(W3)),
    "conv1d": lambda T, t, lo, d: F(T).conv1d(t(IMG[0]), t(W3[:, :, 0])),
    "conv3d": lambda T, t, lo, d: F(T).conv3d(t(VOL), t(np.ones((2, 2, 3, 3, 3), np.float32))),
    "conv_transpose2d": lambda T, t, lo, d: F(T).conv_transpose2d(t(IMG), t(np.ones((3, 2, 3, 3), np.float32))),
    "prelu": lambda T, t, lo, d: F(T).prelu(t(A), t(np.ones(1, np.float32))),
    "conv_tbc": lambda T, t, lo, d: T.conv_tbc(t(SEQ), t(np.ones((2, 4, 3), np.float32)), t(np.ones(3, np.float32))),
    "linear": lambda T, t, lo, d: F(T).linear(t(A), t(A), t(V)),
    "addmm": lambda T, t, lo, d: T.addmm(t(A), t(A), t(A)),
    "addmv": lambda T, t, lo, d: T.addmv(t(V), t(A), t(V)),
    "addr": lambda T, t, lo, d: T.addr(t(A), t(V), t(V)),
    "mv": lambda T, t, lo, d: T.mv(t(A), t(V)),
    "bmm": lambda T, t, lo, d: T.bmm(t(A[None]), t(A[None])),
    "baddbmm": lambda T, t, lo, d: T.baddbmm(t(A[None]), t(A[None]), t(A[None])),
    "addbmm": lambda T, t, lo, d: T.addbmm(t(A), t(A[None]), t(A[None])),
    "matmul": lambda T, t, lo, d: t(A) @ t(A),
    "einsum": lambda T, t, lo, d: T.einsum("ij,jk->ik", t(A), t(A)),
    "chain_matmul": lambda T, t, lo, d: T.chain_matmul(t(A), t(A), t(A)),
    "linalg.multi_dot": lambda T, t, lo, d: T.linalg.multi_dot([t(A), t(A), t(A)]),
    "linalg.vecdot": lambda T, t, lo, d: T.linalg.vecdot(t(A), t(A)),
    "sdpa": lambda T, t, lo, d: F(T).scaled_dot_product_attention(t(A[None]), t(A[None]), t(A[None])),
    "MultiheadAttention": lambda T, t, lo, d: module(T, d, "MultiheadAttention", 4, 2)(t(SEQ[:, :, :4].repeat(1, 1)),
                                                                                   t(SEQ), t(SEQ))[0],
    # recurrent layers and cells (Note [Cells under autocast])
    "LSTM": lambda T, t, lo, d: module(T, d, "LSTM", 4, 5)(t(SEQ))[0],
    "LSTM proj": lambda T, t, lo, d: module(T, d, "LSTM", 4, 5, proj_size=3)(t(SEQ))[0],
    "GRU": lambda T, t, lo, d: module(T, d, "GRU", 4, 5)(t(SEQ))[0],
    "RNN": lambda T, t, lo, d: module(T, d, "RNN", 4, 5)(t(SEQ))[0],
    "LSTMCell": lambda T, t, lo, d: module(T, d, "LSTMCell", 4, 5)(t(A))[0],
    "GRUCell": lambda T, t, lo, d: module(T, d, "GRUCell", 4, 5)(t(A)),
    "RNNCell": lambda T, t, lo, d: module(T, d, "RNNCell", 4, 5)(t(A)),
    # float32 lists
    "exp": lambda T, t, lo, d: t(A).exp(),
    "log_softmax": lambda T, t, lo, d: F(T).log_softmax(t(A), 1),
    "softmax": lambda T, t, lo, d: t(A).softmax(1),
    "pow": lambda T, t, lo, d: t(A) ** 2,
    "pow scalar base": lambda T, t, lo, d: T.pow(2.0, t(A)),
    "rsqrt": lambda T, t, lo, d: t(A).rsqrt(),
    "softplus": lambda T, t, lo, d: F(T).softplus(t(A)),
    "sum": lambda T, t, lo, d: t(A).sum(),
    "prod": lambda T, t, lo, d: t(A).prod(1),
    "cumsum": lambda T, t, lo, d: t(A).cumsum(0),
    "cumprod": lambda T, t, lo, d: t(A).cumprod(0),
    "logsumexp": lambda T, t, lo, d: T.logsumexp(t(A), 1),
    "layer_norm": lambda T, t, lo, d: F(T).layer_norm(t(A), (4,)),
    "group_norm": lambda T, t, lo, d: F(T).group_norm(t(IMG), 3),
    "batch_norm": lambda T, t, lo, d: F(T).batch_norm(t(IMG), None, None, training=True),
    "instance_norm": lambda T, t, lo, d: F(T).instance_norm(t(IMG)),
    "normalize": lambda T, t, lo, d: F(T).normalize(t(A)),
    "norm": lambda T, t, lo, d: T.norm(t(A)),
    "norm p dim": lambda T, t, lo, d: T.norm(t(A), p=2, dim=1),
    "norm nuc": lambda T, t, lo, d: T.norm(t(A), p="nuc"),
    "Tensor.norm": lambda T, t, lo, d: t(A).norm(),
    "frobenius_norm": lambda T, t, lo, d: T.frobenius_norm(t(A), dim=(0, 1)),
    "nuclear_norm": lambda T, t, lo, d: T.nuclear_norm(t(A)),
    "linalg.vector_norm": lambda T, t, lo, d: T.linalg.vector_norm(t(A)),
    "linalg.matrix_norm": lambda T, t, lo, d: T.linalg.matrix_norm(t(A)),
    "linalg.norm": lambda T, t, lo, d: T.linalg.norm(t(A)),
    "cosine_similarity": lambda T, t, lo, d: F(T).cosine_similarity(t(A), t(A)),
    "pdist": lambda T, t, lo, d: F(T).pdist(t(A)),
    "dist": lambda T, t, lo, d: T.dist(t(A), t(A)),
    "cdist": lambda T, t, lo, d: T.cdist(t(A), t(A)),
    "renorm": lambda T, t, lo, d: T.renorm(t(A), 2, 0, 1.0),
    "interpolate nearest": lambda T, t, lo, d: F(T).interpolate(t(IMG), scale_factor=2, mode="nearest"),
    "interpolate nearest-exact": lambda T, t, lo, d: F(T).interpolate(t(IMG), scale_factor=2, mode="nearest-exact"),
    "interpolate linear": lambda T, t, lo, d: F(T).interpolate(t(IMG[0]), scale_factor=2, mode="linear"),
    "interpolate bilinear": lambda T, t, lo, d: F(T).interpolate(t(IMG), scale_factor=2, mode="bilinear"),
    "interpolate bilinear aa": lambda T, t, lo, d: F(T).interpolate(t(IMG), scale_factor=0.5, mode="bilinear",
                                                                    antialias=True),
    "interpolate bicubic": lambda T, t, lo, d: F(T).interpolate(t(IMG), scale_factor=2, mode="bicubic"),
    "interpolate trilinear": lambda T, t, lo, d: F(T).interpolate(t(VOL), scale_factor=2, mode="trilinear"),
    "interpolate area 3d": lambda T, t, lo, d: F(T).interpolate(t(VOL), size=(2, 2, 2), mode="area"),
    "Upsample": lambda T, t, lo, d: module(T, d, "Upsample", scale_factor=2, mode="bilinear")(t(IMG)),
    "avg_pool2d": lambda T, t, lo, d: F(T).avg_pool2d(t(IMG), 2),
    "max_pool2d": lambda T, t, lo, d: F(T).max_pool2d(t(IMG), 2),
    "adaptive_avg_pool2d": lambda T, t, lo, d: F(T).adaptive_avg_pool2d(t(IMG), 1),
    "avg_pool3d": lambda T, t, lo, d: F(T).avg_pool3d(t(VOL), 2),
    "max_pool3d": lambda T, t, lo, d: F(T).max_pool3d(t(VOL), 2),
    "adaptive_avg_pool3d": lambda T, t, lo, d: F(T).adaptive_avg_pool3d(t(VOL), 2),
    "adaptive_max_pool3d": lambda T, t, lo, d: F(T).adaptive_max_pool3d(t(VOL), 2),
    "max_unpool2d": lambda T, t, lo, d: F(T).max_unpool2d(*F(T).max_pool2d(t(IMG), 2, return_indices=True), 2),
    "fractional_max_pool2d": lambda T, t, lo, d: F(T).fractional_max_pool2d(
        t(IMG), 2, output_size=2, _random_samples=t(np.full((2, 3, 2), 0.5, np.float32))),
    "pad reflect 1d": lambda T, t, lo, d: F(T).pad(t(IMG[0]), (1, 1), mode="reflect"),
    "pad reflect 2d": lambda T, t, lo, d: F(T).pad(t(IMG), (1, 1, 1, 1), mode="reflect"),
    "pad reflect 3d": lambda T, t, lo, d: F(T).pad(t(VOL), (1, 1, 1, 1, 1, 1), mode="reflect"),
    "pad replicate 1d": lambda T, t, lo, d: F(T).pad(t(IMG[0]), (1, 1), mode="replicate"),
    "pad replicate 3d": lambda T, t, lo, d: F(T).pad(t(VOL), (1, 1, 1, 1, 1, 1), mode="replicate"),
    "pad circular": lambda T, t, lo, d: F(T).pad(t(IMG), (1, 1, 1, 1), mode="circular"),
    "pad constant": lambda T, t, lo, d: F(T).pad(t(IMG), (1, 1)),
    "grid_sample": lambda T, t, lo, d: F(T).grid_sample(t(IMG), t(np.zeros((2, 3, 3, 2), np.float32)),
                                                        align_corners=False),
    "stft": lambda T, t, lo, d: T.stft(t(SIG), 16, return_complex=True),
    "geqrf": lambda T, t, lo, d: T.geqrf(t(A))[0],
    "orgqr": lambda T, t, lo, d: T.orgqr(t(A), t(V[:3])),
    "ormqr": lambda T, t, lo, d: T.ormqr(t(A), t(V), t(A)),
    "grid_sampler": lambda T, t, lo, d: T.grid_sampler(t(IMG), t(np.zeros((2, 3, 3, 2), np.float32)), 0, 0, False),
    "fft.fft": lambda T, t, lo, d: T.fft.fft(t(SIG)),
    "fft.rfft": lambda T, t, lo, d: T.fft.rfft(t(SIG)),
    "fft.irfft": lambda T, t, lo, d: T.fft.irfft(t(SIG)),
    "fft.fft2": lambda T, t, lo, d: T.fft.fft2(t(A)),
    "fft.hfft": lambda T, t, lo, d: T.fft.hfft(t(SIG)),
    "fft.ihfft2": lambda T, t, lo, d: T.fft.ihfft2(t(A)),
    "ctc_loss": lambda T, t, lo, d: F(T).ctc_loss(t(np.log(np.full((5, 1, 3), 1 / 3, np.float32))),
                                                  idx(T, d, [[1, 2]]), [5], [2]),
    "nll_loss": lambda T, t, lo, d: F(T).nll_loss(t(A), idx(T, d, TARGET)),
    "cross_entropy": lambda T, t, lo, d: F(T).cross_entropy(t(A), idx(T, d, TARGET), label_smoothing=0.1),
    "mse_loss": lambda T, t, lo, d: F(T).mse_loss(t(A), t(A)),
    "kl_div": lambda T, t, lo, d: F(T).kl_div(t(A), t(A), reduction="batchmean"),
    "binary_cross_entropy_with_logits": lambda T, t, lo, d: F(T).binary_cross_entropy_with_logits(t(A), t(A) / 5),
    "cosine_embedding_loss": lambda T, t, lo, d: F(T).cosine_embedding_loss(t(A), t(A), t(np.ones(4, np.float32))),
    # on no list: the result follows the inputs
    "gelu": lambda T, t, lo, d: F(T).gelu(t(A)),
    "silu": lambda T, t, lo, d: F(T).silu(t(A)),
    "glu": lambda T, t, lo, d: F(T).glu(t(A)),
    "mean": lambda T, t, lo, d: t(A).mean(1),
    "var": lambda T, t, lo, d: t(A).var(1),
    "embedding": lambda T, t, lo, d: F(T).embedding(idx(T, d, [0, 2]), t(A)),
    "pixel_shuffle": lambda T, t, lo, d: F(T).pixel_shuffle(t(IMG[:, :1].repeat(1, 4, 1, 1)), 2),
    "unfold": lambda T, t, lo, d: F(T).unfold(t(IMG), 2),
    "local_response_norm": lambda T, t, lo, d: F(T).local_response_norm(t(IMG), 2),
    "sigmoid": lambda T, t, lo, d: t(A).sigmoid(),
    "istft": lambda T, t, lo, d: T.istft(T.stft(t(SIG), 16, window=T.hann_window(16, device=d),
                                                return_complex=True), 16, window=T.hann_window(16, device=d)),
    # promote: a float32 and a low operand
    "addcmul": lambda T, t, lo, d: T.addcmul(t(A), t(A).to(lo), t(A)),
    "bilinear": lambda T, t, lo, d: F(T).bilinear(t(A), t(A).to(lo), t(np.ones((2, 4, 4), np.float32))),
    "vdot": lambda T, t, lo, d: T.vdot(t(V), t(V).to(lo)),
    "dot": lambda T, t, lo, d: T.dot(t(V), t(V).to(lo)),
    "atan2": lambda T, t, lo, d: T.atan2(t(V), t(V).to(lo)),
    "cross": lambda T, t, lo, d: T.cross(t(A[:, :3]), t(A[:, :3]).to(lo), dim=1),
    "linalg.cross": lambda T, t, lo, d: T.linalg.cross(t(A[:, :3]), t(A[:, :3]).to(lo)),
    "tensordot": lambda T, t, lo, d: T.tensordot(t(A), t(A).to(lo)),
    "index_put": lambda T, t, lo, d: t(A).index_put((idx(T, d, [0]),), t(V).to(lo)),
    "scatter_add": lambda T, t, lo, d: t(A).scatter_add(0, idx(T, d, np.zeros((4, 4), np.int64)), t(A).to(lo)),
    "index_copy": lambda T, t, lo, d: t(A).index_copy(0, idx(T, d, [0]), t(A[:1]).to(lo)),
    "cat": lambda T, t, lo, d: T.cat([t(A), t(A).to(lo)]),
    "stack": lambda T, t, lo, d: T.stack([t(A), t(A).to(lo)]),
    "grid_sample mixed": lambda T, t, lo, d: F(T).grid_sample(t(IMG), t(np.zeros((2, 3, 3, 2), np.float32)).to(lo),
                                                              align_corners=False),
}

# Deviations kept on purpose -- (device, low dtype, case, low inputs) -> what torch gives, what strided gives:
# * torch's cuDNN RNN layers cast to float16 under CUDA autocast whatever its dtype (_cudnn_rnn_cast_reflatten in
#   aten/src/ATen/cudnn/AutocastRNN.cpp hard-codes kHalf), so a bfloat16 region returns float16; strided's layers run
#   in the region's dtype, as torch's cells do.
# * torch's CUDA FFTs take float16 (complex32 results); strided has no complex32 and refuses half FFTs on any device,
#   as torch does on the CPU.
DEVIATIONS = {("cuda", "bfloat16", name, low_input): ("float16", "bfloat16")
              for name in ("LSTM", "LSTM proj", "GRU", "RNN") for low_input in (False, True)}
DEVIATIONS.update({("cuda", "float16", name, True): ("complex32", "error (NotImplementedError: Unsupported dtype Half")
                   for name in ("fft.fft", "fft.fft2", "fft.ihfft2", "fft.rfft", "stft")})

DEVICE_DTYPES = [(d, low) for d in available_devices() if d in ("cpu", "cuda")
                 for low in (("bfloat16",) if d == "cpu" else ("float16", "bfloat16"))]


def _dtype_under_autocast(T, name: str, device: str, low: str, low_input: bool) -> str:
    lo = getattr(T, low)

    def t(x):
        x = T.tensor(x, device=device)
        return x.to(lo) if low_input else x

    try:
        with T.autocast(device, dtype=lo):
            return str(CASES[name](T, t, lo, device).dtype).split(".")[-1]
    except (RuntimeError, NotImplementedError, ValueError, TypeError) as e:
        return f"error ({type(e).__name__}: {str(e).splitlines()[0][:100]})"


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("low_input", [False, True], ids=["float32 inputs", "low inputs"])
@pytest.mark.parametrize("device,low", DEVICE_DTYPES, ids=[f"{d}-{lo}" for d, lo in DEVICE_DTYPES])
def test_result_dtype_as_torchs(name, low_input, device, low):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here: no oracle for CUDA autocast")
    want = _dtype_under_autocast(torch, name, device, low, low_input)
    got = _dtype_under_autocast(st, name, device, low, low_input)
    deviation = DEVIATIONS.get((device, low, name, low_input))
    if deviation is not None:
        assert want.startswith(deviation[0]) and got.startswith(deviation[1]), (name, want, got)
    elif not want.startswith("error"):
        assert got == want, f"{name} under {device} autocast ({low}): torch {want}, strided {got}"
