"""``strided.stft`` / ``strided.istft`` (and the Tensor methods): torch's short-time Fourier transforms, composed
from strided's ops (SpectralOps.cpp's algorithm), so they run on every backend the FFT ops run on (CPU, CUDA,
Meta) and differentiate through the FFT ops' formulas.

Note [STFT composition]
stft: the signal (1-D, or 2-D with a batch dim first) is padded by n_fft // 2 on both sides when ``center``
(``pad_mode``, reflect by default), cut into frames of n_fft at every hop_length (a strided view, no copy), each
multiplied by the window (win_length entries centred in n_fft, ones when there is none), transformed (``_fft_r2c``
onesided for real input and window, ``_fft_c2c`` otherwise; ``normalized`` scales by n_fft^-1/2) and laid out
(batch, freq, frames). ``align_to_window`` (only without ``center``) aligns the frames with the window rather
than with n_fft: frames start win_length apart from the signal's ends, as torch 2.6's.
istft undoes it: the inverse transform of every frame (``_fft_c2r`` to n_fft real values, or ``_fft_c2c`` with
``return_complex``), the window applied again, the frames overlap-added (``fold``, torch's unfold_backward) and
divided by the overlap-added squared window, which must stay above 1e-11 over the kept span (torch's "window
overlap add min" check, which reads one value from the device). ``length`` trims or zero-pads the result.
Errors and warnings are torch's, with its ``stft(...) :`` call description shortened to the op, sizes and
arguments.
"""

from __future__ import annotations

import warnings

from .ops import bound as ops
from .tensor import Tensor

__all__ = ["stft", "istft"]


def _type_name(t: Tensor) -> str:
    from .backends.meta.pointwise import scalar_type_name

    return f"{scalar_type_name(t.dtype)}Tensor{list(t.shape)}"


def _describe(op: str, t: Tensor, **kw) -> str:
    def show(v):
        if isinstance(v, Tensor):
            return f"{_type_name(v)}"
        if isinstance(v, bool):
            return str(int(v))
        return str(v)

    return f"{op}({_type_name(t)}, " + ", ".join(f"{k}={show(v)}" for k, v in kw.items()) + ")"


def _padded_window(window, win_length: int, n_fft: int, like: Tensor):
    """The window as n_fft values: win_length entries (ones when None) centred between zeros (None when it is
    all ones over all n_fft: no multiplication needed)."""
    if window is None and win_length == n_fft:
        return None
    left = (n_fft - win_length) // 2
    dtype = window.dtype if window is not None else like.dtype.to_real() if like.dtype.is_complex else like.dtype
    out = ops.zeros((n_fft,), dtype=dtype, device=like.device)
    part = out.narrow(0, left, win_length)
    if window is None:
        part.fill_(1)
    else:
        part.copy_(window)
    return out


def stft(input: Tensor, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,  # noqa: A002
         pad_mode: str = "reflect", normalized: bool = False, onesided=None, return_complex=None,
         align_to_window=None) -> Tensor:
    """torch.stft: the short-time Fourier transform of a 1-D or (batch, time) signal (Note [STFT composition])."""
    from .nn import functional as F

    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        dim = input.dim()
        pad = int(n_fft // 2)
        input = F.pad(input.view([1] * (3 - dim) + list(input.shape)), [pad, pad], pad_mode)
        input = input.view(input.shape[-dim:])
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    complex_in = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None and not complex_in:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    where = _describe("stft", input, n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
                      normalized=normalized, onesided=onesided, return_complex=return_complex,
                      align_to_window=align_to_window)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"{where} : expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"{where} : expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"{where} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{where} : expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"{where} : expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{where} : expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as strided.hann_window or strided.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                      "explicitly set `window=strided.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call strided.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
    full_window = _padded_window(window, win_length, n_fft, x)
    if align_to_window and win_length < n_fft:  # frames aligned with the window (Note [STFT composition])
        left = (n_fft - win_length) // 2
        x = F.pad(x, [left, n_fft - win_length - left])
        length = x.shape[1]
    frames = x.unfold(1, n_fft, hop_length)  # (batch, n_frames, n_fft): a strided view
    if full_window is not None:
        frames = frames * full_window
    complex_fft = frames.dtype.is_complex
    onesided = (not complex_fft) if onesided is None else onesided
    norm = 1 if normalized else 0
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = ops._fft_c2c(frames, [2], norm, True)
    else:
        out = ops._fft_r2c(frames, [2], norm, onesided)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if return_complex or return_complex is None else ops.view_as_real(out)


def istft(input: Tensor, n_fft: int, hop_length=None, win_length=None, window=None, center: bool = True,  # noqa: A002
          normalized: bool = False, onesided=None, length=None, return_complex: bool = False) -> Tensor:
    """torch.istft: the inverse of :func:`stft` by weighted overlap-add (Note [STFT composition])."""
    from .nn import functional as F

    if not input.dtype.is_complex:
        raise TypeError("istft requires a complex-valued input tensor matching the output from stft with "
                        "return_complex=True.")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    where = _describe("istft", input, n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
                      center=center, normalized=normalized, onesided=onesided, length=length,
                      return_complex=return_complex)
    if input.numel() == 0:
        raise RuntimeError(f"{where} : input tensor cannot be empty.")
    if input.dim() not in (2, 3):  # torch counts the (re, im) dim
        raise RuntimeError(f"{where} : expected a tensor with 3 or 4 dimensions, but got {input.dim() + 1}")
    x = input.unsqueeze(0) if input.dim() == 2 else input
    n_frames, fft_size = x.shape[-1], x.shape[-2]
    expected_len = n_fft + hop_length * (n_frames - 1)
    onesided = onesided if onesided is not None else fft_size != n_fft
    if onesided:
        if n_fft // 2 + 1 != fft_size:
            raise RuntimeError(f"{where} : expected the frequency dimension (3rd to the last) of the input tensor to "
                               f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    elif n_fft != fft_size:
        raise RuntimeError(f"{where} : expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError(f"{where} : expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{where} : expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{where} : Invalid window shape. window has to be 1D and length of `win_length`")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide the same "
                      "window used by stft to make the inversion lossless.To suppress this warning and use a "
                      "rectangular window, explicitly set `window=strided.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=2)
    if return_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    real_dtype = x.dtype.to_real()
    full_window = _padded_window(window, win_length, n_fft, x)
    if full_window is None:
        full_window = ops.ones((n_fft,), dtype=real_dtype, device=x.device)
    frames = x.transpose(1, 2)  # (batch, n_frames, fft_size)
    norm = 1 if normalized else 2
    if return_complex:
        frames = ops._fft_c2c(frames, [2], norm, False)
    else:
        if not onesided:
            frames = frames.narrow(-1, 0, n_fft // 2 + 1)
        frames = ops._fft_c2r(frames, [2], norm, n_fft)
    frames = frames * full_window  # (batch, n_frames, n_fft)
    y = _overlap_add(frames, n_fft, hop_length, expected_len, F)
    envelope = _overlap_add((full_window * full_window).expand(1, n_frames, n_fft), n_fft, hop_length, expected_len, F)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (expected_len - n_fft // 2 if center else expected_len)
    y = y.narrow(1, start, max(0, min(end, expected_len) - start))
    envelope = envelope.narrow(1, start, max(0, min(end, expected_len) - start))
    if envelope.numel() and bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(f"{where} window overlap add min: 1")
    y = y / envelope
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > expected_len:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        y = F.pad(y, [0, end - expected_len])
    return y


def _overlap_add(frames: Tensor, n_fft: int, hop: int, total: int, F) -> Tensor:
    """(batch, n_frames, n_fft) frames summed into (batch, total) at every ``hop`` (torch's unfold_backward)."""
    batch, n_frames = frames.shape[0], frames.shape[1]
    if frames.dtype.is_complex:
        parts = ops.view_as_real(frames).permute(0, 3, 2, 1).reshape(batch, 2 * n_fft, n_frames)
        summed = F.fold(parts, output_size=(1, total), kernel_size=(1, n_fft), stride=(1, hop))
        return ops.view_as_complex(summed.reshape(batch, 2, total).transpose(1, 2).contiguous())
    cols = frames.transpose(1, 2)  # (batch, n_fft, n_frames): fold's (C * kh * kw, L)
    return F.fold(cols, output_size=(1, total), kernel_size=(1, n_fft), stride=(1, hop)).reshape(batch, total)



from .amp.composed_functions import CPU_FP32 as _CPU_FP32  # noqa: E402
from .amp.composed_functions import wrap_policies as _wrap_policies  # noqa: E402

# on torch's CPU float32 autocast list; istft composes (its irfft autocasts) (Note [Autocast around composed
# functions])
_wrap_policies(globals(), {"stft": _CPU_FP32})
