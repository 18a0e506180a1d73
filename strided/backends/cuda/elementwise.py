"""The CUDA elementwise engine (TensorIterator's job): operands, paths, kernels, launch.

Note [Elementwise kernels]
A pointwise op is an expression over up to four *operands* ``x0..x3`` (``"x0 + x2 * x1"``) plus
the output. An operand is a CUDA tensor (any strides; broadcast = stride 0) or a *scalar kernel
argument*: a Python number or a 0-dim CPU tensor, converted on the host to the operand's compute
type. The output comes from the op's Meta function (shape, dtype, strides), as on the CPU; type
promotion is therefore the Meta function's. Each operand is converted to its *compute type*
(opmath: float16 and bfloat16 compute in float32, as torch's CUDA kernels do) before the
expression, and the result is converted to the output dtype when stored.

``elementwise.cu`` is instantiated per (expression, output dtype, operand kinds, dtypes and compute
types) by prefixing ``#define`` lines, compiled once by NVRTC (memory + disk cache) and holds three
kernels; the launch picks one:

* ``ew_vec``: every tensor operand has the output's sizes and strides and the output is dense
  (contiguous or any dense permutation), so element i of every operand sits at offset i. Each
  thread loads two 16-byte vectors per operand, when every pointer is aligned to the vector size;
* ``ew_strided32``/``ew_strided64``: anything else (broadcast, views, unaligned pointers), over the
  coalesced dims (``kernels.coalesce``, output strides first), with 32-bit index arithmetic when
  the element count and every operand's largest offset fit in 31 bits.

Note [Elementwise hot path]
The eager cost of a small op is Python. Per call this module builds one key tuple, finds a cached
``_Launcher`` (kernels for the three paths, loaded once per device) and packs the parameters with
``Kernel``'s reusable buffer; the same-layout case never coalesces. Everything that depends only on
the key (source text, vector width, struct formats) is computed once.
"""

from __future__ import annotations

import math
import struct
from threading import get_ident as _get_ident

from ... import dtypes as dt
from ...tensor import Tensor, make_tensor
from .. import allocate
from ..meta import common as _common
from .kernels import ALL_CTYPES, MAX_DIMS, _text, coalesce, complex_header
from .launch import get_kernel
from .streams import current_stream_handle

__all__ = ["run", "binary", "opmath", "source_for", "plan", "is_tensor_operand", "precompile", "FLAT_FMT",
           "STRIDED_FMT"]

_prod = math.prod
FLAT_FMT = "<Q4Q4d4qq"
STRIDED_FMT = FLAT_FMT + "q" + f"{MAX_DIMS}q" + f"{5 * MAX_DIMS}q"
_BLOCK = 256
_INT31 = 1 << 31
_STRIDED_GRID_CAP = 1 << 20
_OPMATH = {dt.float16: dt.float32, dt.bfloat16: dt.float32}
_F64, _I64 = struct.Struct("<d"), struct.Struct("<q")
_ZERO4 = (0, 0, 0, 0)
_ZEROF4 = (0.0, 0.0, 0.0, 0.0)
_ZERO_DIMS = (0,) * MAX_DIMS
force_64bit_index = False  # tests: take ew_strided64 even where 32-bit indices would do


def opmath(d: dt.dtype) -> dt.dtype:
    """The compute dtype of results of dtype ``d`` (float32 for float16 and bfloat16)."""
    return _OPMATH.get(d, d)


def source_for(expr: str, out: dt.dtype, slots) -> str:
    """The instantiated source for ``expr`` writing ``out``; ``slots`` = ((kind, dtype, compute), ...)
    with kind 1 = tensor, 2 = scalar (Note [Elementwise kernels])."""
    lines = [f"typedef {ALL_CTYPES[out.name]} OUT_T;", f"#define EXPR ({expr})"]
    widest = out.itemsize
    for k in range(4):
        if k < len(slots):
            kind, d, c = slots[k]
        else:
            kind, d, c = 0, None, None
        ct = ALL_CTYPES[c.name] if c is not None else "char"
        lines.append(f"#define K{k} {kind}")
        lines.append(f"typedef {ALL_CTYPES[d.name] if d is not None else 'char'} T{k};")
        lines.append(f"typedef {ct} C{k};")
        if kind == 2 and c.is_complex:  # Note [Complex scalar arguments]
            lines.append(f"#define SCALAR{k} C{k}(f.sd[{k}], __longlong_as_double(f.si[{k}]))")
        elif kind == 2:
            field = "sd" if c.is_floating_point else "si"
            lines.append(f"#define SCALAR{k} convert<C{k}>(f.{field}[{k}])")
        else:
            lines.append(f"#define SCALAR{k} C{k}()")
        if kind == 1:
            widest = max(widest, d.itemsize)
    lines.append(f"#define VEC {16 // widest}")
    names = [out.name] + [x.name for s in slots for x in s[1:] if x is not None]
    return _text("common.cuh") + "\n" + complex_header(*names) + "\n".join(lines) + "\n" + \
        _text("elementwise.cuh") + "\n" + _text("igamma.cuh") + "\n" + _text("elementwise.cu")


class _Launcher:
    """Everything cached for one instantiation: source, vector width, kernels per device."""

    __slots__ = ("source", "vec", "per_block", "out_align", "tensor_aligns", "align_mask", "kernels",
                 "scalar_slots", "vec_kernel", "vec_device")

    def __init__(self, expr: str, out: dt.dtype, slots):
        self.source = source_for(expr, out, slots)
        widest = max([out.itemsize] + [d.itemsize for kind, d, _ in slots if kind == 1])
        self.vec = 16 // widest
        self.per_block = _BLOCK * self.vec * (1 if self.vec >= 16 else 2)  # EW_UNROLL in elementwise.cu
        self.out_align = self.vec * out.itemsize
        self.tensor_aligns = tuple(self.vec * d.itemsize if kind == 1 else 0 for kind, d, _ in slots)
        # per scalar slot: (slot, field 0 = double / 1 = int / 2 = bool / 3 = complex)
        self.scalar_slots = tuple(
            (k, 0 if c.is_floating_point else (2 if c is dt.bool else (3 if c.is_complex else 1)))
            for k, (kind, _, c) in enumerate(slots) if kind == 2
        )
        aligns = {self.out_align} | {a for a in self.tensor_aligns if a}
        self.align_mask = aligns.pop() - 1 if len(aligns) == 1 else 0
        self.kernels: dict[tuple[str, int], object] = {}
        self.vec_kernel, self.vec_device = None, -1

    def kernel(self, name: str, device_index: int):
        k = self.kernels.get((name, device_index))
        if k is None:
            fmt = FLAT_FMT if name == "ew_vec" else STRIDED_FMT
            k = self.kernels[(name, device_index)] = get_kernel(self.source, name, fmt, device_index)
            if name == "ew_vec" and self.vec_kernel is None:
                self.vec_kernel, self.vec_device = k, device_index
        return k


_launchers: dict[tuple, _Launcher] = {}


def _launcher(key, expr, out_dtype, slots) -> _Launcher:
    ln = _launchers.get(key)
    if ln is None:
        ln = _launchers[key] = _Launcher(expr, out_dtype, slots)
    return ln


# Note [Complex scalar arguments]
# A scalar operand computed as complex (``z * 1j``, ``alpha=2 - 1j``) travels in the same parameter struct as
# the others: the real part in its ``sd`` slot, the imaginary part's IEEE bits in its ``si`` slot (read back
# with ``__longlong_as_double``), so real-dtype kernels keep their struct and formats.
def _complex_fields(v) -> tuple[float, int]:
    z = complex(v)
    return z.real, _I64.unpack(_F64.pack(z.imag))[0]


def is_tensor_operand(a) -> bool:
    """A kernel tensor operand (CUDA tensor, or any tensor with dims); else a scalar argument."""
    return isinstance(a, Tensor) and (a.device.type == "cuda" or bool(a._sizes))


def plan(out: Tensor, args, computes):
    """How ``run`` would launch ``out``: ``(slots, path, shape, strides)`` (host-only, for tests)."""
    slots = tuple((1, a.dtype, c) if is_tensor_operand(a) else (2, None, c) for a, c in zip(args, computes))
    tensors = [a for a, s in zip(args, slots) if s[0] == 1]
    sizes, ostr = out._sizes, out._strides
    if all(t._sizes == sizes and t._strides == ostr for t in tensors) and _dense(out):
        return slots, "flat", (math.prod(sizes),), None
    nd = len(sizes)
    shape, strides = coalesce(sizes, ostr, *(_bstrides(t, nd) for t in tensors))
    return slots, "strided", shape, strides


def _dense(t: Tensor) -> bool:
    sizes = t._sizes
    if len(sizes) == 1:
        return t._strides[0] == 1 or sizes[0] <= 1
    return t._is_non_overlapping_and_dense()


def _bstrides(t: Tensor, nd: int):
    off = nd - len(t._sizes)
    return (0,) * off + tuple(0 if n == 1 else s for n, s in zip(t._sizes, t._strides))


# Note [In-place redirect]
# A direct in-place kernel (kernels/inplace_ops.py) runs an op's functional CUDA kernel with
# ``meta.common.redirect`` set to (this thread, self). A dense ``self`` is handed out by the Meta function's
# ``new_output`` as the output itself (Note [Output redirect]); a non-dense one is still pending here: the first
# ``run`` on this thread then writes ``self`` instead of the output the Meta function made, when they agree in
# device, dtype and sizes, and clears it. One launch, no copy_ back.
def _redirected(out: Tensor) -> Tensor:
    ident, target = _common.redirect
    if ident != _get_ident():
        return out
    _common.redirect = None
    if target.dtype is out.dtype and target._sizes == out._sizes and target.device == out.device:
        return target
    return out


def run(expr: str, out: Tensor, args, computes, dense: bool = True) -> Tensor:
    """Compute ``out[i] = expr(args[0][i], ...)`` on ``out``'s device and current stream.

    ``args`` are CUDA tensors (broadcastable to ``out``), 0-dim CPU tensors or Python numbers;
    ``computes`` gives each operand's compute dtype. ``dense=False`` when ``out`` may be a
    non-dense view (direct in-place kernels). Returns ``out``.
    """
    if _common.redirect is not None:  # Note [In-place redirect]
        fresh = out
        out = _redirected(out)
        dense = dense and out is fresh
    sizes = out._sizes
    n = _prod(sizes)
    if not n:
        return out
    # one pass over the operands: key, pointers, same-layout test (Note [Elementwise hot path])
    ostr = out._strides
    key = [expr, out.dtype]
    ptrs = [0, 0, 0, 0]
    same = True
    k = 0
    for a in args:
        if isinstance(a, Tensor) and (a._sizes or a.device.type == "cuda"):
            key.append(a.dtype)
            p = a._storage._data_ptr
            ptrs[k] = (a._storage.data_ptr() if p is None else p) + a._offset * a.dtype.itemsize
            if same and (a._sizes != sizes or a._strides != ostr):
                same = False
        else:
            key.append(None)
        key.append(computes[k])
        k += 1
    key = tuple(key)
    ln = _launchers.get(key)
    if ln is None:
        slots = tuple((1, key[2 + 2 * j], computes[j]) if key[2 + 2 * j] is not None else (2, None, computes[j])
                      for j in range(k))
        ln = _launcher(key, expr, out.dtype, slots)
    if ln.scalar_slots:
        sd, si = [0.0] * 4, [0] * 4
        for j, field in ln.scalar_slots:
            v = args[j]
            if isinstance(v, Tensor):
                v = v.item()
            if field == 0:
                sd[j] = float(v)
            elif field == 1:
                si[j] = int(v)
            elif field == 2:
                si[j] = 1 if v else 0
            else:
                sd[j], si[j] = _complex_fields(v)
    else:
        sd, si = _ZEROF4, _ZERO4
    dev = out.device.index
    stream = current_stream_handle(dev)
    optr = out._storage._data_ptr
    optr = (out._storage.data_ptr() if optr is None else optr) + out._offset * out.dtype.itemsize
    if same and (dense or _dense(out)):
        mask = ln.align_mask  # Note [Elementwise hot path]: one test when every operand has one width
        if mask:
            aligned = not (optr | ptrs[0] | ptrs[1] | ptrs[2] | ptrs[3]) & mask
        else:
            aligned = optr % ln.out_align == 0 and all(
                not al or p % al == 0 for p, al in zip(ptrs, ln.tensor_aligns))
        if aligned:
            kern = ln.vec_kernel if ln.vec_device == dev else ln.kernel("ew_vec", dev)
            kern((n + ln.per_block - 1) // ln.per_block, _BLOCK, stream, optr, *ptrs, *sd, *si, n)
            return out
    _launch_strided(ln, out, args, n, dev, stream, optr, ptrs, sd, si)
    return out


# Note [Binary plan memo]
# ``a + b`` on two tensors repeats the same Meta work every call: promotion, checks, broadcast,
# output strides. A Meta function reads only metadata (dtypes, sizes, strides, devices), never
# values, so for two tensor operands its result is a function of that metadata (and of the default
# dtype, which integer true division returns). ``binary`` runs the
# Meta function (every check, torch's errors) the first time a key is seen and keeps the output's
# geometry; later calls allocate it directly. When both operands and the output share one dense
# layout it also keeps the launcher, so a repeat call is: allocate, three addresses, one launch.
# Bounded: cleared past 4096 keys.
_BINARY: dict = {}


def binary(expr: str, meta_fn, a: Tensor, b: Tensor, computes: dict) -> Tensor:
    """``expr(a, b)`` for two tensors (``run``'s rules), the output from ``meta_fn(a, b)``, memoized
    per operand metadata (Note [Binary plan memo]); ``computes`` maps the output dtype to the
    operands' compute dtypes."""
    key = (expr, meta_fn, a.dtype, b.dtype, a._sizes, a._strides, b._sizes, b._strides, a.device, b.device,
           dt._default_dtype)  # int / int gives the default float dtype
    plan = _BINARY.get(key)
    if plan is None:
        out = meta_fn(a, b)
        cs = computes[out.dtype]
        run(expr, out, (a, b), cs)
        n = _prod(out._sizes)
        if n:
            ln = None
            if (a._sizes == b._sizes == out._sizes and a._strides == b._strides == out._strides
                    and _dense(out) and a.device is b.device and a.device.type == "cuda"):
                ln = _launchers.get((expr, out.dtype, a.dtype, cs[0], b.dtype, cs[1]))
            if len(_BINARY) > 4096:
                _BINARY.clear()
            _BINARY[key] = (out._sizes, out._strides, out.dtype, out.device, out._storage.nbytes(), cs, n, ln,
                            None if ln is None else (n + ln.per_block - 1) // ln.per_block)
        return out
    sizes, strides, dtype, dev, nbytes, cs, n, ln, grid = plan
    out = make_tensor(allocate(nbytes, dev), 0, sizes, strides, dtype)
    if ln is not None:
        i = dev.index
        optr = out._storage._data_ptr
        pa = a._storage._data_ptr + a._offset * a.dtype.itemsize
        pb = b._storage._data_ptr + b._offset * b.dtype.itemsize
        mask = ln.align_mask
        if mask and not (optr | pa | pb) & mask and ln.vec_device == i:
            ln.vec_kernel(grid, _BLOCK, current_stream_handle(i), optr, pa, pb, 0, 0, *_ZEROF4, *_ZERO4, n)
            return out
    return run(expr, out, (a, b), cs)


# Note [Strided plan memo]
# A broadcast or strided operand (``att.masked_fill(mask[:T, :T], -inf)``, a bias row) takes the
# strided kernel, whose arguments are the coalesced shape and one stride row per operand: a few
# Python loops over the dims every call, the same every step of a model. They depend only on the
# geometry, so they are computed once per (out sizes and strides, operand sizes and strides,
# operand slots) and kept with the kernel's name and grid. Bounded: cleared past 4096 keys.
_STRIDED_PLANS: dict = {}


def _launch_strided(ln, out, args, n, dev, stream, optr, ptrs, sd, si) -> None:
    aligns = ln.tensor_aligns
    key = [out._sizes, out._strides, aligns, force_64bit_index]
    for k, al in enumerate(aligns):
        if al:
            a = args[k]
            key.append(a._sizes)
            key.append(a._strides)
    key = tuple(key)
    plan = _STRIDED_PLANS.get(key)
    if plan is None:
        plan = _strided_plan(ln, out, args, n)
        if len(_STRIDED_PLANS) > 4096:
            _STRIDED_PLANS.clear()
        _STRIDED_PLANS[key] = plan
    name, grid, m, params = plan
    ln.kernel(name, dev)(grid, _BLOCK, stream, optr, *ptrs, *sd, *si, n, m, *params)


def _strided_plan(ln, out, args, n) -> tuple:
    """(kernel name, grid, dims, padded sizes and stride rows) of one strided launch."""
    sizes = out._sizes
    nd = len(sizes)
    sets = [out._strides]
    aligns = ln.tensor_aligns
    for k, al in enumerate(aligns):
        if al:
            sets.append(_bstrides(args[k], nd))
    shape, strides = coalesce(sizes, *sets)
    m = len(shape)
    if m > MAX_DIMS:
        raise RuntimeError(f"strided CUDA pointwise kernels support at most {MAX_DIMS} non-mergeable dims "
                           f"after coalescing, got {m}")
    wide = force_64bit_index or n >= _INT31
    if not wide and max(map(max, strides)) * n >= _INT31:  # cheap bound first, exact spans if needed
        wide = max(sum((s - 1) * x for s, x in zip(shape, st)) for st in strides) >= _INT31
    pad = list(_ZERO_DIMS[:MAX_DIMS - m])
    # sizes, then one row of strides for the output and for each operand (zeros for scalars / absent)
    params = shape + pad + strides[0] + pad
    j = 1
    for al in aligns:
        if al:
            params += strides[j] + pad
            j += 1
        else:
            params += _ZERO_DIMS
    for _ in range(4 - len(aligns)):
        params += _ZERO_DIMS
    grid = min((n + _BLOCK - 1) // _BLOCK, _STRIDED_GRID_CAP)
    return ("ew_strided64" if wide else "ew_strided32"), grid, m, tuple(params)


def precompile(instantiations, arch: str | None = None, workers: int = 8) -> int:
    """Compile ``(expr, out dtype, slots)`` instantiations into the kernel cache, in parallel
    (NVRTC releases the GIL). ``arch`` defaults to device 0's. Returns how many were compiled."""
    from concurrent.futures import ThreadPoolExecutor

    from .compiler import arch_for, compile_cubin

    if arch is None:
        from .device import get_device_capability

        arch = arch_for(*get_device_capability(0))
    sources = {source_for(*inst) for inst in instantiations}
    with ThreadPoolExecutor(workers) as ex:
        list(ex.map(lambda s: compile_cubin(s, "ew_vec", arch), sources))
    return len(sources)
