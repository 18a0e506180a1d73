"""CUDA kernels of the FFT ops ``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r`` (``fft.cu``; Note [FFT ops] in
backends/meta/fft.py for what they compute).

Note [CUDA FFT]
strided has no cuFFT binding (its CUDA dependencies are the driver, NVRTC and cuBLASLt), so the transforms are
its own kernels, one dim at a time over contiguous rows (the dim moved last and copied when it is not):

- A length whose prime factors are 2, 3, 5, 7 (and other primes up to ``BLUESTEIN_ABOVE``) is a Stockham
  auto-sort FFT: one out-of-place pass per factor (radix 8 first, then 4, 2, 3, 5, 7; Note [Stockham pass] in
  fft.cu), the normalization folded into the last pass. Short rows of the special radices run all their
  passes in one launch in shared memory (Note [Shared-memory FFT]); longer ones run a few passes of a large
  radix whose butterflies are transforms in shared memory (Note [Big Stockham passes]). Lengths with other
  primes launch a pass per factor, ping-ponging between two global buffers, those primes as a pass of any
  radix, a thread per output summing over the radix.
- A length with a larger prime factor goes through Bluestein's algorithm: the transform as a circular
  convolution with a chirp, done with power-of-two transforms of length m >= 2n - 1 (three of them, the
  filter's included), so every length costs O(n log n).
- r2c transforms the real input as complex (the imaginary parts zero) and keeps the onesided half of the last
  dim before transforming the others; c2r runs the inverse over the other dims first, then extends the last
  dim's onesided spectrum to all n entries by Hermitian symmetry and keeps the real part of its inverse, which
  ignores the imaginary parts of the zero- (and Nyquist-) frequency entries, as pocketfft's c2r. In the
  shared-memory kernel both are fused into its load and store (no complex copy of a real input, no complex
  result of c2r), and an even length is packed into a complex transform of half the length (Note [Packed real
  transforms] in fft.cu); on the pass-at-a-time path they are separate steps.

Twiddles are computed in the kernels (Note [Twiddles in double]), so there is no plan to build or cache: every
launch and temporary is stream-ordered on the current stream, and the ops record into CUDA graphs. Results
agree with the CPU backend's pocketfft to the tolerances of the op tests (a few ulps times log n).
"""

from __future__ import annotations

import math
from functools import cache

from ....dispatch.library import kernel
from ....ops import bound as ops
from ...meta import fft as meta
from ...meta.common import new_output
from ..launch import get_kernel
from ..streams import current_stream_handle
from . import launch_config, source

__all__ = ["fft_sources", "BLUESTEIN_ABOVE"]

STAGE_FMT = "<QQqqqqqqd"
SMEM_FMT = "<QQqqqqqqqqqqd"
BIG_FMT = "<QQqqqqqqqd"
BLUESTEIN_FMT = "<QQQqqqqqd"
HERMITIAN_FMT = "<QQqqq"
RADICES = (8, 4, 2, 3, 5, 7)  # the passes with a kernel of their own, in the order they are taken
BLUESTEIN_ABOVE = 64  # a length with a prime factor above this goes through Bluestein's algorithm
_I32_LIMIT = 1 << 31
SMEM_MAX_BYTES = 160 << 10  # a block's two shared buffers (Note [Shared-memory FFT]): complex64 rows up to 8192
SMEM_BLOCK_ELEMS = 2048  # short rows: as many whole rows per block as fit this many entries
WHOLE_ROWS = True  # rows that fit use the shared-memory kernel (tests switch it off to reach the big passes)
BIG_RADIX_MAX = 128  # the largest radix of a big pass (Note [Big Stockham passes]); larger measured slower
BIG_LOAD_BYTES = 128  # a big pass's block takes this many bytes of consecutive butterflies: 128-byte loads


@cache
def _source(name: str) -> str:
    return source("fft.cu", name, headers=("fft_butterflies.cuh",))


def fft_sources():
    """(file, kernel names, source) of every fft.cu instantiation (NVRTC null test)."""
    names = tuple(f"fft_radix{r}_{i}" for r in (*RADICES, "_any") for i in ("i32", "i64"))
    for name in ("complex64", "complex128"):
        yield "fft.cu", (*names, "fft_bluestein", "fft_hermitian", "fft_smem", "fft_big"), _source(name)


@cache
def radices(n: int) -> tuple | None:
    """The passes of a length-``n`` transform, or None when it goes through Bluestein's algorithm."""
    out = []
    for r in RADICES:
        while n % r == 0:
            out.append(r)
            n //= r
    p = 11
    while n > 1:
        if p * p > n:
            p = n  # what is left is prime
        while n % p == 0:
            if p > BLUESTEIN_ABOVE:
                return None
            out.append(p)
            n //= p
        p += 2
    return tuple(out)


def _smem_bytes(rows: int, n: int, itemsize: int) -> int:
    """fft_smem's dynamic shared memory: two buffers of ``rows * n`` entries padded by one in 8 (fft_pad)."""
    return 2 * (rows * n + (rows * n >> 3)) * itemsize


@cache
def _smem_plan(n: int, itemsize: int) -> tuple | None:
    """(radix code, rows per block, threads) of the shared-memory kernel for rows of ``n``, or None when its
    passes are not all special radices or two rows do not fit ``SMEM_MAX_BYTES``."""
    passes = radices(n)
    if n == 1 or passes is None or any(r not in RADICES for r in passes):
        return None
    if _smem_bytes(1, n, itemsize) > SMEM_MAX_BYTES:
        return None
    rows = max(1, SMEM_BLOCK_ELEMS // n)
    return _radix_code(passes), rows, _block_threads(rows * n, itemsize)


def _radix_code(passes) -> int:
    """The shared-memory kernels' list of radices: 4 bits each, the first pass lowest."""
    return sum(r << (4 * i) for i, r in enumerate(passes))


def _block_threads(entries: int, itemsize: int) -> int:
    """A power of two from 64 to smem_max_threads: about one thread per 8 of a block's entries."""
    threads = 64
    while threads < smem_max_threads(itemsize) and threads * 8 < entries:
        threads *= 2
    return threads


@cache
def _big_plan(n: int, itemsize: int) -> tuple | None:
    """((radix, radix code) of each pass, butterflies per block, threads) of the big passes for rows of ``n``
    (Note [Big Stockham passes]), or None when a factor is not a special radix or the radices do not group."""
    passes = radices(n)
    if passes is None or any(r not in RADICES for r in passes):
        return None
    rows = max(1, BIG_LOAD_BYTES // itemsize)
    primes, rest = [], n
    for p in (2, 3, 5, 7):
        while rest % p == 0:
            primes.append(p)
            rest //= p
    for count in range(2, 8):
        sizes = [1] * count
        for p in sorted(primes, reverse=True):  # balanced: each prime to the group with the smallest product
            sizes[sizes.index(min(sizes))] *= p
        if max(sizes) <= BIG_RADIX_MAX and _smem_bytes(rows, max(sizes), itemsize) <= SMEM_MAX_BYTES:
            sizes.sort(reverse=True)  # the largest first: ns >= rows after the first pass
            if sizes[0] < rows or sizes[-1] == 1 or n // sizes[0] < rows or n >= 1 << 31:
                return None  # fft_big's index arithmetic: ns >= rows after the first pass, n / R >= rows, int rows
            codes = tuple(_radix_code(radices(size)) for size in sizes)
            return tuple(zip(sizes, codes)), rows, _block_threads(rows * sizes[0], itemsize)
    return None


def smem_max_threads(itemsize: int) -> int:
    """fft_smem's largest block: 512 threads for complex64, 256 for complex128 (its registers: 166 a thread)."""
    return 512 if itemsize <= 8 else 256


def _smem(dtype, dev: int, plan, src, dst, batch: int, n: int, in_row: int, out_row: int, load: int, store: int,
          out_cols: int, inverse: bool, scale: float) -> None:
    """Whole transforms of ``batch`` rows in one launch of ``fft_smem`` (``dtype``: the complex dtype)."""
    code, rows, threads = plan
    rows = min(rows, batch)
    grid = min(-(-batch // rows), 1 << 20)
    k = get_kernel(_source(dtype.name), "fft_smem", SMEM_FMT, dev)
    k.launch_smem(grid, threads, _smem_bytes(rows, n, dtype.itemsize), current_stream_handle(dev), src.data_ptr(),
                  dst.data_ptr(), batch, n, rows, in_row, out_row, load, store, out_cols, int(inverse), code,
                  scale)


def _launch(name: str, dtype, fmt: str, dev: int, total: int, *values) -> None:
    grid, block = launch_config(total)
    get_kernel(_source(dtype.name), name, fmt, dev)(grid, block, current_stream_handle(dev), *values)


def _buffer(like, batch: int, n: int):
    return new_output((batch, n), like.dtype, like.device)


def _rows(x, batch: int, n: int, inverse: bool, scale: float, owned: bool = False):
    """The length-``n`` transform of each row of the contiguous (batch, n) complex CUDA tensor ``x``, times
    ``scale``: a new (batch, n) tensor. ``owned``: ``x`` is a temporary the passes may overwrite."""
    if n == 1:
        if scale == 1.0:
            return x if owned else x.clone()
        return x * scale
    passes = radices(n)
    if passes is None:
        return _bluestein(x, batch, n, inverse, scale)
    dev = x.device.index
    plan = _smem_plan(n, x.dtype.itemsize) if WHOLE_ROWS else None
    if plan is not None:
        out = _buffer(x, batch, n)
        _smem(x.dtype, dev, plan, x, out, batch, n, n, n, 0, 0, n, inverse, scale)
        return out
    big = _big_plan(n, x.dtype.itemsize)
    if big is not None:
        return _big_passes(x, batch, n, inverse, scale, owned, big)
    suffix = "i32" if batch * n < _I32_LIMIT else "i64"
    cur, spare = x, None
    ns = 1
    for i, r in enumerate(passes):
        out = spare if spare is not None else _buffer(x, batch, n)
        special = r in RADICES
        total = batch * n // r if special else batch * n
        name = f"fft_radix{r}_{suffix}" if special else f"fft_radix_any_{suffix}"
        s = scale if i == len(passes) - 1 else 1.0
        _launch(name, x.dtype, STAGE_FMT, dev, total, cur.data_ptr(), out.data_ptr(), batch, n, ns, r, total,
                int(inverse), s)
        spare = cur if (cur is not x or owned) else None
        cur = out
        ns *= r
    return cur


def _big_passes(x, batch: int, n: int, inverse: bool, scale: float, owned: bool, plan):
    """The transform of long rows in a few passes of a large radix (Note [Big Stockham passes])."""
    groups, rows, threads = plan
    dev = x.device.index
    k = get_kernel(_source(x.dtype.name), "fft_big", BIG_FMT, dev)
    cur, spare, ns = x, None, 1
    for i, (radix, code) in enumerate(groups):
        out = spare if spare is not None else _buffer(x, batch, n)
        grid = min(-(-(batch * (n // radix)) // rows), 1 << 20)
        k.launch_smem(grid, threads, _smem_bytes(rows, radix, x.dtype.itemsize), current_stream_handle(dev),
                      cur.data_ptr(), out.data_ptr(), batch, n, radix, ns, rows, int(inverse), code,
                      scale if i == len(groups) - 1 else 1.0)
        spare = cur if (cur is not x or owned) else None
        cur = out
        ns *= radix
    return cur


def _bluestein(x, batch: int, n: int, inverse: bool, scale: float):
    """Bluestein's algorithm for a length ``n`` with a large prime factor (Note [CUDA FFT])."""
    dev = x.device.index
    m = 1 << (2 * n - 2).bit_length()  # the power of two >= 2n - 1
    inv = int(inverse)
    filt = _buffer(x, 1, m)
    _launch("fft_bluestein", x.dtype, BLUESTEIN_FMT, dev, m, 0, filt.data_ptr(), 0, 1, n, m, inv, 0, 1.0 / m)
    spectrum = _rows(filt, 1, m, False, 1.0, owned=True)
    padded = _buffer(x, batch, m)
    _launch("fft_bluestein", x.dtype, BLUESTEIN_FMT, dev, batch * m, x.data_ptr(), padded.data_ptr(), 0, batch,
            n, m, inv, 1, 1.0)
    conv = _rows(padded, batch, m, False, 1.0, owned=True)
    _launch("fft_bluestein", x.dtype, BLUESTEIN_FMT, dev, batch * m, 0, conv.data_ptr(), spectrum.data_ptr(),
            batch, n, m, inv, 2, 1.0)
    conv = _rows(conv, batch, m, True, 1.0, owned=True)
    out = _buffer(x, batch, n)
    _launch("fft_bluestein", x.dtype, BLUESTEIN_FMT, dev, batch * n, conv.data_ptr(), out.data_ptr(), 0, batch,
            n, m, inv, 3, scale)
    return out


def _scale(normalization: int, n: int) -> float:
    """torch's fft_norm_mode as the factor of one dim of length ``n`` (their product is the transform's)."""
    return 1.0 if normalization == 0 else (1.0 / math.sqrt(n) if normalization == 1 else 1.0 / n)


def _along(t, d: int, inverse: bool, scale: float, owned: bool = False):
    """The transform of complex ``t`` along dim ``d`` (any strides): a tensor of ``t``'s sizes."""
    n = t._sizes[d]
    moved = t.movedim(d, -1)
    rows = moved.contiguous()
    batch = rows.numel() // n
    y = _rows(rows.view(batch, n), batch, n, inverse, scale, owned or rows is not moved)
    return y.view(moved.shape).movedim(-1, d)


def _result(t):
    return t if t.is_contiguous() else t.contiguous()


@kernel("CUDA")
def _fft_c2c(self, dim, normalization, forward):
    meta.check_complex(self)
    dims = meta.fft_dims(self, dim, "_fft_c2c")
    if not dims or self.numel() == 0:
        out = new_output(self._sizes, self.dtype, self.device)
        return out.copy_(self) if self.numel() else out
    t, owned = self, False
    for d in dims:
        t = _along(t, d, not forward, _scale(normalization, self._sizes[d]), owned)
        owned = True
    return _result(t)


@kernel("CUDA")
def _fft_r2c(self, dim, normalization, onesided):
    dims, sizes = meta.r2c_sizes(self, dim, onesided)
    if math.prod(sizes) == 0:
        return new_output(sizes, self.dtype.to_complex(), self.device)
    last = dims[-1]
    n = self._sizes[last]
    cdtype = self.dtype.to_complex()
    # Note [Packed real transforms]: an even onesided length as a complex transform of half the length; else
    # the real rows loaded as complex and the (onesided) outputs stored (Note [Shared-memory FFT])
    packed = _smem_plan(n // 2, cdtype.itemsize) if onesided and n % 2 == 0 else None
    plan = packed if packed is not None else _smem_plan(n, cdtype.itemsize)
    if plan is not None:
        length, load, store = (n // 2, 3, 2) if packed is not None else (n, 1, 0)
        moved = self.movedim(last, -1)
        rows = moved.contiguous()
        batch, cols = rows.numel() // n, (n // 2 + 1 if onesided else n)
        out = new_output((batch, cols), cdtype, self.device)
        _smem(cdtype, self.device.index, plan, rows, out, batch, length, n, cols, load, store, cols, False,
              _scale(normalization, n))
        t = out.view(*moved.shape[:-1], cols).movedim(-1, last)
    else:
        t = _along(self.to(cdtype), last, False, _scale(normalization, n), True)
        if onesided:
            t = t.narrow(last, 0, n // 2 + 1)
    for d in dims[:-1]:
        t = _along(t, d, False, _scale(normalization, self._sizes[d]), True)
    return _result(t)


@kernel("CUDA")
def _fft_c2r(self, dim, normalization, last_dim_size):
    dims, sizes = meta.c2r_sizes(self, dim, last_dim_size)
    if math.prod(sizes) == 0:
        return new_output(sizes, self.dtype.to_real(), self.device)
    t, owned = self, False
    for d in dims[:-1]:
        t = _along(t, d, True, _scale(normalization, self._sizes[d]), owned)
        owned = True
    last, n = dims[-1], sizes[dims[-1]]
    moved = t.movedim(last, -1)
    half = moved.contiguous()
    h = half._sizes[-1]
    batch = half.numel() // h
    packed = _smem_plan(n // 2, half.dtype.itemsize) if n % 2 == 0 else None
    if packed is not None:  # Note [Packed real transforms]: an inverse of half the length
        real = new_output((batch, n), half.dtype.to_real(), half.device)
        _smem(half.dtype, half.device.index, packed, half, real, batch, n // 2, h, n, 4, 3, n // 2, True,
              _scale(normalization, n))
        return _result(real.view(*moved.shape[:-1], n).movedim(-1, last))
    plan = _smem_plan(n, half.dtype.itemsize)
    if plan is not None:  # the Hermitian extension on load, the real parts stored (Note [Shared-memory FFT])
        real = new_output((batch, n), half.dtype.to_real(), half.device)
        _smem(half.dtype, half.device.index, plan, half, real, batch, n, h, n, 2, 1, n, True, _scale(normalization, n))
        return _result(real.view(*moved.shape[:-1], n).movedim(-1, last))
    full = _buffer(half, batch, n)
    _launch("fft_hermitian", half.dtype, HERMITIAN_FMT, half.device.index, batch * n, half.data_ptr(),
            full.data_ptr(), batch, h, n)
    y = _rows(full, batch, n, True, _scale(normalization, n), owned=True)
    real = ops.select(ops.view_as_real(y), -1, 0)  # the real parts: a stride-2 view
    return _result(real.view(*moved.shape[:-1], n).movedim(-1, last))
