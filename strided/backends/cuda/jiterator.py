"""The jiterator's engine: a user's C++ elementwise function compiled by NVRTC and launched over tensors.

Note [Jiterator]
torch.cuda.jiterator's rules (aten/src/ATen/cuda/jiterator.cu), here over strided's compiler and launcher:

* the inputs (1 to 8 CUDA tensors on one device; no CPU scalars) broadcast together and promote to their common
  dtype (``torch.result_type``'s rules); every output has that dtype, the broadcast shape and TensorIterator's
  layout (the first input's dense order). Each input element is converted to the common dtype, then to its
  compute type (float for float16 / bfloat16), the user function's ``T``;
* the function is called as ``name<T>(x0, ..., xk, extra_arg_0, ...)``: the extra arguments (the keyword values)
  follow the inputs, typed by their Python type -- bool ``bool``, int ``long long`` (``int64_t``), float
  ``double``, complex ``complex128_t``. A by-value function returns output 0; a by-reference one (the multi-output
  form) gets one ``T&`` per output after the extra arguments. Results are converted to the common dtype;
* ``jiterator.cu`` holds the kernels; this module writes the text before it (types, the user's code, the load and
  call glue) and picks the kernel: ``jit_vec`` when every operand is dense in the outputs' layout and aligned to
  16-byte vectors (of the widest dtype; the narrower ones load 4- or 8-byte vectors), ``jit_flat`` when dense but
  not aligned, else ``jit_strided32`` / ``jit_strided64`` over the coalesced dims. One instantiation per (code,
  inputs' dtypes, outputs, extra arguments' types), compiled once (memory and disk cache, as every kernel).
"""

from __future__ import annotations

import math
import numbers
import struct

import numpy as np

from ... import dtypes as dt
from ...tensor import Tensor, make_tensor
from .. import allocate
from ..meta.common import broadcast_shapes, elementwise_strides, new_output
from .compiler import CompileError
from .elementwise import opmath
from .kernels import ALL_CTYPES, MAX_DIMS, _text, coalesce, complex_header
from .launch import get_kernel
from .streams import current_stream_handle

__all__ = ["MAX_INPUTS", "MAX_OUTPUTS", "MAX_EXTRAS", "extra_kind", "source_for", "Launcher", "make_launcher",
           "launcher", "vector_width", "launch", "run", "plan_launch", "FLAT_FMT", "STRIDED_FMT", "OPTIONS"]

MAX_INPUTS = MAX_OUTPUTS = 8
MAX_EXTRAS = 16  # JIT_MAX_EXTRAS in jiterator.cu
FLAT_FMT = f"<8Q8Q{MAX_EXTRAS}d{MAX_EXTRAS}qq"
STRIDED_FMT = FLAT_FMT + "q" + f"{MAX_DIMS}q" + f"{16 * MAX_DIMS}q"
_BLOCK, _UNROLL = 128, 4  # JIT_BLOCK, JIT_UNROLL
_INT31 = 1 << 31
_GRID_CAP = 1 << 20
_F64, _I64 = struct.Struct("<d"), struct.Struct("<q")
# user functions carry no __device__ (torch's jiterator compiles them the same way)
OPTIONS = ("-default-device",)

# the fixed-width integer names user code may use (NVRTC has no <cstdint>; torch's jiterator declares them too)
_STDINT = ("typedef signed char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\ntypedef long long int64_t;\n"
           "typedef unsigned char uint8_t;\ntypedef unsigned short uint16_t;\ntypedef unsigned int uint32_t;\n"
           "typedef unsigned long long uint64_t;\n")
_EXTRA_CTYPES = {"bool": "bool", "int": "long long", "float": "double", "complex": "complex128_t"}


def extra_kind(name: str, value) -> str:
    """The C type family of extra argument ``name``: "bool", "int", "float" or "complex" (a Python or NumPy number;
    TypeError otherwise)."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if not isinstance(value, Tensor):
        for kind, abc in (("int", numbers.Integral), ("float", numbers.Real), ("complex", numbers.Complex)):
            if isinstance(value, abc):
                return kind
    raise TypeError(f"jiterator: extra argument '{name}' must be a number (bool, int, float or complex), got "
                    f"{type(value).__name__}")


def _extra_fields(kinds, values) -> tuple[list, list]:
    """The ``ed`` / ``ei`` rows of the parameter struct for the extra arguments (Note [Complex scalar arguments])."""
    ed, ei = [0.0] * MAX_EXTRAS, [0] * MAX_EXTRAS
    for k, (kind, v) in enumerate(zip(kinds, values)):
        if kind == "float":
            ed[k] = float(v)
        elif kind == "int":
            ei[k] = int(v)
        elif kind == "bool":
            ei[k] = 1 if v else 0
        else:
            z = complex(v)
            ed[k], ei[k] = z.real, _I64.unpack(_F64.pack(z.imag))[0]
    return ed, ei


def vector_width(in_dtypes, common: dt.dtype) -> int:
    """Elements per 16-byte vector of the widest operand, at most 8 (``JIT_VEC``; 1: no vector kernel)."""
    return min(8, 16 // max(d.itemsize for d in (*in_dtypes, common)))


def source_for(code: str, name: str, nout: int, by_ref: bool, in_dtypes, common: dt.dtype, kinds) -> str:
    """The instantiated source: types, the user's ``code``, the glue calling ``name``, then jiterator.cu."""
    compute = opmath(common)
    nin = len(in_dtypes)
    c_in, c_compute = ALL_CTYPES[common.name], ALL_CTYPES[compute.name]
    vec = vector_width(in_dtypes, common)
    head = [f"#define NIN {nin}", f"#define NOUT {nout}", f"typedef {c_in} IN_T;", f"typedef {c_in} OUT_T;",
            f"typedef {c_compute} COMPUTE_T;", f"#define JIT_VEC {vec}",
            "template <class T> struct alignas(sizeof(T) * JIT_VEC) JitVec { T v[JIT_VEC]; };", _STDINT]
    load = ["template <class P, class I> __device__ __forceinline__ void jit_load(const P& p, const I* off, "
            "IN_T* a) {"]
    for k, d in enumerate(in_dtypes):
        raw = f"static_cast<const {ALL_CTYPES[d.name]}*>(p.in[{k}])[off[{nout + k}]]"
        load.append(f"  a[{k}] = {raw if d is common else f'convert<IN_T>({raw})'};")
    load.append("}")
    load.append("template <class P> __device__ __forceinline__ void jit_load_vec(const P& p, i64 base, "
                "IN_T (*a)[NIN]) {")
    for k, d in enumerate(in_dtypes):
        c = ALL_CTYPES[d.name]
        load.append(f"  {{ const JitVec<{c}> v = *reinterpret_cast<const JitVec<{c}>*>(static_cast<const {c}*>"
                    f"(p.in[{k}]) + base);")
        value = "v.v[j]" if d is common else "convert<IN_T>(v.v[j])"
        load.append(f"#pragma unroll\n    for (int j = 0; j < JIT_VEC; ++j) a[j][{k}] = {value}; }}")
    load.append("}")
    call = ["template <class P> __device__ __forceinline__ void jit_compute(const P& p, const IN_T* a, OUT_T* r) {"]
    for k, kind in enumerate(kinds):
        value = {"float": f"p.ed[{k}]", "int": f"p.ei[{k}]", "bool": f"p.ei[{k}] != 0",
                 "complex": f"complex128_t(p.ed[{k}], __longlong_as_double(p.ei[{k}]))"}[kind]
        call.append(f"  const {_EXTRA_CTYPES[kind]} extra_arg_{k} = {value};")
    args = [f"convert<COMPUTE_T>(a[{k}])" for k in range(nin)] + [f"extra_arg_{k}" for k in range(len(kinds))]
    if by_ref:
        temps = [f"t{k}" for k in range(nout)]
        call.append(f"  COMPUTE_T {', '.join(temps)};")
        call.append(f"  {name}<COMPUTE_T>({', '.join(args + temps)});")
        call += [f"  r[{k}] = convert<OUT_T>(t{k});" for k in range(nout)]
    else:
        call.append(f"  r[0] = convert<OUT_T>({name}<COMPUTE_T>({', '.join(args)}));")
    call.append("}")
    names = [common.name] + [d.name for d in in_dtypes] + (["complex128"] if "complex" in kinds else [])
    return (_text("common.cuh") + "\n" + complex_header(*names) + "\n".join(head) + "\n" + code + "\n"
            + "\n".join(load) + "\n" + "\n".join(call) + "\n" + _text("jiterator.cu"))


class Launcher:
    """One instantiation: its source and kernels per device."""

    __slots__ = ("source", "name", "kernels", "vec", "aligns")

    def __init__(self, source: str, name: str, vec: int = 1, aligns: tuple = ()):
        self.source, self.name, self.kernels = source, name, {}
        self.vec = vec  # JIT_VEC: jit_vec runs when > 1 and every address is a multiple of its entry in aligns
        self.aligns = aligns  # bytes per vector of each operand, the outputs' first

    def vectorizes(self, addresses) -> bool:
        """Whether ``jit_vec`` can read and write ``addresses`` (outputs, then inputs) as aligned vectors."""
        return self.vec > 1 and all(p % a == 0 for p, a in zip(addresses, self.aligns))

    def kernel(self, entry: str, device_index: int):
        k = self.kernels.get((entry, device_index))
        if k is None:
            fmt = FLAT_FMT if entry in ("jit_flat", "jit_vec") else STRIDED_FMT
            try:
                k = get_kernel(self.source, entry, fmt, device_index, OPTIONS)
            except CompileError as e:
                raise CompileError(f"jiterator function '{self.name}' did not compile:\n{e}") from None
            self.kernels[(entry, device_index)] = k
        return k


_launchers: dict[tuple, Launcher] = {}


def make_launcher(code: str, name: str, nout: int, by_ref: bool, in_dtypes, common, kinds) -> Launcher:
    """A new ``Launcher`` of one instantiation (Note [Jiterator]); ``launcher`` keeps one per key."""
    vec = vector_width(in_dtypes, common)
    aligns = (vec * common.itemsize,) * nout + tuple(vec * d.itemsize for d in in_dtypes)
    return Launcher(source_for(code, name, nout, by_ref, in_dtypes, common, kinds), name, vec, aligns)


def launcher(code: str, name: str, nout: int, by_ref: bool, in_dtypes, common, kinds) -> Launcher:
    """The cached ``Launcher`` of one instantiation."""
    key = (code, name, nout, by_ref, tuple(in_dtypes), common, tuple(kinds))
    ln = _launchers.get(key)
    if ln is None:
        if len(_launchers) > 1024:
            _launchers.clear()
        ln = _launchers[key] = make_launcher(code, name, nout, by_ref, in_dtypes, common, kinds)
    return ln


def _broadcast_strides(sizes, strides, nd: int) -> tuple:
    return (0,) * (nd - len(sizes)) + tuple(0 if n == 1 else s for n, s in zip(sizes, strides))


def plan_launch(outs, ins) -> tuple:
    """(kernel entry, grid, parameters after ``n``) for operands given as (sizes, strides in elements): ``outs``
    share one dense layout, ``ins`` broadcast to it (host-only)."""
    sizes, ostr = outs[0]
    n = math.prod(sizes)
    if all(s == sizes and st == ostr for s, st in ins):
        return "jit_flat", min(-(-n // (_BLOCK * _UNROLL)), _GRID_CAP), ()
    nd = len(sizes)
    rows = [ostr] * len(outs) + [_broadcast_strides(s, st, nd) for s, st in ins]
    shape, strides = coalesce(sizes, *rows)
    m = len(shape)
    if m > MAX_DIMS:
        raise RuntimeError(f"jiterator: at most {MAX_DIMS} dims that do not merge, got {m}")
    wide = n >= _INT31 or max(sum((s - 1) * abs(x) for s, x in zip(shape, row)) for row in strides) >= _INT31
    pad = [0] * (MAX_DIMS - m)
    params = [m] + list(shape) + pad
    for row in strides:
        params += list(row) + pad
    params += [0] * (MAX_DIMS * (16 - len(strides)))
    return ("jit_strided64" if wide else "jit_strided32"), min(-(-n // _BLOCK), _GRID_CAP), tuple(params)


def plan_kernels(ln: Launcher, entry: str, grid: int, n: int, device_index: int) -> tuple:
    """(kernel, grid, the vector kernel or None, its grid) for ``plan_launch``'s entry: a ``jit_flat`` plan runs
    ``jit_vec`` instead when its addresses allow (``pick``)."""
    kernel = ln.kernel(entry, device_index)
    if entry == "jit_flat" and ln.vec > 1:
        return kernel, grid, ln.kernel("jit_vec", device_index), min(-(-n // (_BLOCK * ln.vec)), _GRID_CAP)
    return kernel, grid, None, None


def pick(ln: Launcher, kernels: tuple, addresses) -> tuple:
    """(kernel, grid) of ``plan_kernels``'s answer for these addresses (outputs, then inputs)."""
    kernel, grid, vec_kernel, vec_grid = kernels
    if vec_kernel is not None and ln.vectorizes(addresses):
        return vec_kernel, vec_grid
    return kernel, grid


def launch(ln: Launcher, outs, ins, ed, ei, device_index: int, stream: int) -> None:
    """Launch ``ln`` over operands given as (address, sizes, strides in elements) (``plan_launch``'s rules)."""
    n = math.prod(outs[0][1])
    if not n:
        return
    entry, grid, params = plan_launch([o[1:] for o in outs], [i[1:] for i in ins])
    optrs, iptrs = [p for p, _, _ in outs], [p for p, _, _ in ins]
    kernel, grid = pick(ln, plan_kernels(ln, entry, grid, n, device_index), optrs + iptrs)
    ptrs = optrs + [0] * (MAX_OUTPUTS - len(outs)) + iptrs + [0] * (MAX_INPUTS - len(ins))
    kernel(grid, _BLOCK, stream, *ptrs, *ed, *ei, n, *params)


def _check(name: str, tensors) -> None:
    """torch's refusals for the inputs, in its words where it has them."""
    if not tensors:
        raise RuntimeError(f"jiterator '{name}': expected at least one input tensor")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"jiterator '{name}': input {i} must be a Tensor, got {type(t).__name__}")
    dev = tensors[0].device
    for t in tensors:
        if t.device != dev:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                               f"{dev} and {t.device}!")
    if dev.type != "cuda":
        raise RuntimeError(f"jiterator '{name}': argument 0: expected a CUDA device but found {dev}")


# Note [Jiterator plan memo]
# Everything but the addresses and the extra arguments' values is a function of the inputs' metadata (dtypes, sizes,
# strides, device) and of the extra arguments' types: checks, promotion, the outputs' geometry, the instantiation,
# the kernel and its launch parameters. They are worked out on the first call with a key and kept, so a repeat call
# allocates its outputs and launches (the eager cost of a call, bench/bench_jiterator.py). Bounded: cleared past
# 4096 keys.
_PLANS: dict = {}
_KINDS = {bool: "bool", int: "int", float: "float", complex: "complex"}
_ZERO_EXTRAS = ((0.0,) * MAX_EXTRAS, (0,) * MAX_EXTRAS)


def _plan(code, name, nout, by_ref, tensors, kinds) -> tuple:
    _check(name, tensors)
    if len(kinds) > MAX_EXTRAS:
        raise RuntimeError(f"jiterator '{name}': at most {MAX_EXTRAS} extra arguments, got {len(kinds)}")
    dev = tensors[0].device
    common = dt.result_type(*tensors)
    sizes = broadcast_shapes(*(t._sizes for t in tensors))
    strides = elementwise_strides(sizes, tensors)
    probe = new_output(sizes, common, dev, strides)  # the outputs' storage size, as the Meta rules make it
    n = math.prod(sizes)
    kernels = params = ln = None
    if n:
        ln = launcher(code, name, nout, by_ref, [t.dtype for t in tensors], common, kinds)
        entry, grid, params = plan_launch([(sizes, strides)] * nout, [(t._sizes, t._strides) for t in tensors])
        kernels = plan_kernels(ln, entry, grid, n, dev.index)
    return sizes, strides, common, dev, probe._storage.nbytes(), n, kernels, params, ln


def run(code: str, name: str, nout: int, by_ref: bool, tensors, extras: dict) -> list:
    """Outputs of ``name`` from ``code`` over ``tensors`` with the extra arguments ``extras`` (Note [Jiterator])."""
    key = [code, nout, by_ref]
    for t in tensors:
        if t.__class__ is not Tensor:
            _check(name, tensors)  # raises
        key += (t.dtype, t._sizes, t._strides, t.device)
    kinds = tuple(_KINDS.get(v.__class__) or extra_kind(k, v) for k, v in extras.items())
    key.append(kinds)
    key = tuple(key)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _plan(code, name, nout, by_ref, tensors, kinds)
        if len(_PLANS) > 4096:
            _PLANS.clear()
        _PLANS[key] = plan
    sizes, strides, common, dev, nbytes, n, kernels, params, ln = plan
    outs = [make_tensor(allocate(nbytes, dev), 0, sizes, strides, common) for _ in range(nout)]
    if not n:
        return outs
    optrs, iptrs = [_address(o) for o in outs], [_address(t) for t in tensors]
    kernel, grid = pick(ln, kernels, optrs + iptrs)
    ptrs = optrs + [0] * (MAX_OUTPUTS - nout) + iptrs + [0] * (MAX_INPUTS - len(tensors))
    ed, ei = _extra_fields(kinds, extras.values()) if kinds else _ZERO_EXTRAS
    kernel(grid, _BLOCK, current_stream_handle(dev.index), *ptrs, *ed, *ei, n, *params)
    return outs


def _address(t: Tensor) -> int:
    p = t._storage._data_ptr
    return (t._storage.data_ptr() if p is None else p) + t._offset * t.dtype.itemsize
