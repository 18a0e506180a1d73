"""Every autogen in-place overload against its functional op, on the op database's samples, on every available
backend: ``x.op_(*args)`` leaves in ``x`` exactly what ``op(x, *args)`` returns (cast to ``x``'s dtype), counts
one write, or raises where the result cannot be written into ``x`` (Notes [Direct in-place kernels],
[CPU direct in-place kernels])."""

from __future__ import annotations

import numpy as np
import pytest

from strided import autograd
from strided.dispatch.keys import DispatchKey
from strided.dtypes import can_cast
from strided.tensor import Tensor
from strided.testing import available_devices, to_device
from strided.testing.opdb import op_db

torch = pytest.importorskip("torch")

DEVICES = [d for d in available_devices() if d != "meta"]
# writes torch refuses although the result would fit: (op, complex self) -> its words
_TORCH_REFUSES = {("aten::abs_", True): "In-place abs is not supported for complex tensors"}


def _inplace_of(info):
    """The autogen in-place OpOverload whose functional op is ``info``'s, or None."""
    if info.op is not None:
        return None
    functional = info.get_op()
    packet_name = functional.name.split("::")[-1] + "_"
    from strided.ops import registry

    packet = registry.load()._get(packet_name)
    if packet is None:
        return None
    for op in packet.overloads.values():
        autogen = op._kernels.get(DispatchKey.CompositeExplicitAutograd)
        if getattr(autogen, "functional", None) is functional:
            return op
    return None


CASES = [pytest.param(info, d, id=f"{info.name}-{d.name}") for info in op_db() if _inplace_of(info) is not None
         for d in info.dtypes]


def _same(got: Tensor, want: Tensor, where: str) -> None:
    g, w = got.numpy(force=True), want.numpy(force=True)
    assert g.dtype == w.dtype and g.shape == w.shape, where
    if g.dtype.kind in "fc" or g.dtype.name == "bfloat16":
        np.testing.assert_array_equal(g.astype(np.complex128 if g.dtype.kind == "c" else np.float64),
                                      w.astype(np.complex128 if w.dtype.kind == "c" else np.float64), err_msg=where)
    else:
        np.testing.assert_array_equal(g, w, err_msg=where)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("info, dtype", CASES)
def test_inplace_leaves_the_functional_result(info, dtype, device):
    inplace = _inplace_of(info)
    functional = info.get_op()
    rng = np.random.default_rng(4321)
    checked = 0
    with autograd.no_grad():
        for sample in info.samples(dtype, rng):
            if not sample.args or not isinstance(sample.args[0], Tensor):
                continue
            args = to_device(sample.args, device)
            kwargs = to_device(sample.kwargs, device)
            self, rest = args[0].detach(), args[1:]
            where = f"{inplace.name} {dtype.name} on {device}: {sample}"
            try:
                want = functional(self, *rest, **kwargs)
            except (RuntimeError, NotImplementedError, ValueError, TypeError):
                continue  # the functional op refuses this sample itself
            x = self.clone()
            internal = 0 not in x._sizes and any(s == 0 and n > 1 for n, s in zip(x._sizes, x._strides))
            refused = _TORCH_REFUSES.get((inplace.name, x.dtype.is_complex))
            if refused:
                with pytest.raises(RuntimeError, match=refused):
                    inplace(x, *rest, **kwargs)
                checked += 1
                continue
            if want._sizes != x._sizes or not can_cast(want.dtype, x.dtype) or internal:
                with pytest.raises(RuntimeError):
                    inplace(x, *rest, **kwargs)
                checked += 1
                continue
            before = x._version
            out = inplace(x, *rest, **kwargs)
            assert out is x, where
            assert x._version == before + 1, where
            _same(x, want.to(x.dtype), where)
            checked += 1
    assert checked or not any(isinstance(s.args[0], Tensor) for s in info.samples(dtype, np.random.default_rng(4321))
                              if s.args)


_OVERLAP_CASES = {
    "x.add_(x[0])": lambda x, y, a: x.add_(x[0]),
    "x[1:].add_(x[:-1])": lambda x, y, a: x[1:].add_(x[:-1]),
    "x.add_(x)": lambda x, y, a: x.add_(x),
    "y.add_(y.t().t())": lambda x, y, a: y.add_(y.t().t()),
    "y[:, 0].add_(y[:, 1])": lambda x, y, a: y[:, 0].add_(y[:, 1]),  # not dense: torch's "too hard", allowed
    "y[0].add_(y[1])": lambda x, y, a: y[0].add_(y[1]),
    "x[1:].addcmul_(x[:-1], x[:-1])": lambda x, y, a: x[1:].addcmul_(x[:-1], x[:-1]),
    "x[1:].cumsum_(0)": lambda x, y, a: x[1:].cumsum_(0),  # not a pointwise op: no check, as torch
    "a[1:, 1:].addmm_(a[:3, :3], a[:3, :3])": lambda x, y, a: a[1:, 1:].addmm_(a[:3, :3], a[:3, :3]),
    "x[1:].clamp_(min=x[:-1])": lambda x, y, a: x[1:].clamp_(min=x[:-1]),
    "x[1:].lerp_(x[:-1], 0.5)": lambda x, y, a: x[1:].lerp_(x[:-1], 0.5),
    "y.t().add_(y)": lambda x, y, a: y.t().add_(y),  # the same memory in another order
    "x[2:].mul_(x[:2].sum())": lambda x, y, a: x[2:].mul_(x[:2].sum()),  # a new tensor
    "x[::2].sub_(x[1::2])": lambda x, y, a: x[::2].sub_(x[1::2]),  # interleaved, neither dense
}


@pytest.mark.parametrize("device", available_devices())
@pytest.mark.parametrize("case", list(_OVERLAP_CASES))
def test_a_partially_overlapping_operand_is_refused_as_torch_refuses_it(case, device):
    import strided as st

    call = _OVERLAP_CASES[case]
    try:
        call(torch.arange(6.0), torch.arange(6.0).view(2, 3), torch.ones(4, 4))
        refused = None
    except RuntimeError as e:
        refused = str(e)
    args = (st.arange(6.0, device=device), st.arange(6.0, device=device).view(2, 3), st.ones(4, 4, device=device))
    if refused is None:
        call(*args)
    else:
        with pytest.raises(RuntimeError) as ours:
            call(*args)
        assert str(ours.value) == refused


_OUT_OVERLAP_CASES = {
    "add(x[:4], 1, out=x[2:])": lambda lib, x: lib.add(x[:4], 1, out=x[2:]),  # an autogen .out overload
    "exp(x[:4], out=x[1:5])": lambda lib, x: lib.exp(x[:4], out=x[1:5]),  # out= without a declared overload
    "exp(x, out=x)": lambda lib, x: lib.exp(x, out=x),  # the same memory: allowed
    "mul(x[3:], x[:3], out=x[2:5])": lambda lib, x: lib.mul(x[3:], x[:3], out=x[2:5]),
    "where(x[:3] > 2, x[:3], x[3:], out=x[2:5])": lambda lib, x: lib.where(x[:3] > 2, x[:3], x[3:], out=x[2:5]),
    "clamp(x[:4], 0, 1, out=x[1:5])": lambda lib, x: lib.clamp(x[:4], 0, 1, out=x[1:5]),
    "atan2(x[:3], x[3:], out=x[1:4])": lambda lib, x: lib.atan2(x[:3], x[3:], out=x[1:4]),
    "sigmoid(x[:3], out=x[3:])": lambda lib, x: lib.sigmoid(x[:3], out=x[3:]),  # disjoint parts: allowed
    "exp(x[::2], out=x[1::2])": lambda lib, x: lib.exp(x[::2], out=x[1::2]),  # not dense: "too hard", allowed
}


@pytest.mark.parametrize("device", available_devices())
@pytest.mark.parametrize("case", list(_OUT_OVERLAP_CASES))
def test_an_out_partially_overlapping_an_input_is_refused_as_torch_refuses_it(case, device):
    import strided as st

    call = _OUT_OVERLAP_CASES[case]
    try:
        call(torch, torch.arange(6.0))
        refused = None
    except RuntimeError as e:
        refused = str(e)
    x = st.arange(6.0, device=device)
    if refused is None:
        call(st, x)
    else:
        with pytest.raises(RuntimeError) as ours:
            call(st, x)
        assert str(ours.value) == refused
        assert device == "meta" or x.tolist() == list(range(6))  # refused before anything was written
