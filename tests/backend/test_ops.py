"""Every OpInfo on every available backend: values against NumPy, Meta against CPU, CUDA vs CPU."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.testing import available_devices, to_device
from strided.testing.opdb import op_db
from strided.tensor import Tensor

OPS = op_db()
DEVICES = available_devices()


def _cases():
    for info in OPS:
        for d in info.dtypes:
            yield pytest.param(info, d, id=f"{info.name}-{d.name}")


def _to_numpy(x):
    if isinstance(x, Tensor):
        a = x.numpy(force=True)
        if x.dtype.is_complex:
            return a.astype(np.complex128)
        return a.astype(np.float64) if x.dtype.is_floating_point else a
    if isinstance(x, (list, tuple)):
        return type(x)(_to_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_numpy(v) for k, v in x.items()}
    return x


def _flatten(result):
    if isinstance(result, (list, tuple)):
        return [r for item in result for r in _flatten(item)]
    return [result]


def _compare(info, dtype, actual, expected, where, device="cpu"):
    rtol, atol = info.tolerance(dtype, device)
    for a, e in zip(_flatten(actual), _flatten(expected), strict=True):
        if not isinstance(a, Tensor):
            assert a == pytest.approx(e, rel=rtol, abs=atol, nan_ok=True), where
            continue
        got = a.numpy(force=True)
        e = np.asarray(e)
        assert got.shape == e.shape, f"{where}: shape {got.shape} != reference {e.shape}"
        if got.dtype.kind == "f" or got.dtype.name == "bfloat16":
            got = got.astype(np.float64)
            np.testing.assert_allclose(got, e.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=where)
        elif got.dtype.kind == "c":  # at the tolerance of the real dtype (TOLERANCES), nan in either part
            np.testing.assert_allclose(got.astype(np.complex128), e.astype(np.complex128), rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(got, e.astype(got.dtype), err_msg=where)


def _skip_without_cuda_kernel(fn):
    """An honest skip: the op (or, for composites, an op it calls) has no CUDA kernel yet."""
    from strided.dispatch.keys import DispatchKey

    ops = fn.overloads.values() if hasattr(fn, "overloads") else [fn]
    keys = (DispatchKey.CUDA, DispatchKey.CompositeExplicitAutograd, DispatchKey.CompositeImplicitAutograd)
    ops = [op for op in ops if hasattr(op, "has_kernel")]  # autogen wrappers are checked when run
    if ops and not any(op.has_kernel(k) for op in ops for k in keys):
        pytest.skip("no CUDA kernel yet (issue 5)")


def _run_cuda(call):
    try:
        return call()
    except NotImplementedError as e:
        if "with arguments from the 'CUDA' backend" in str(e):
            pytest.skip(f"no CUDA kernel yet (issue 5): {str(e).splitlines()[0]}")
        raise


# torch has no integer/bool GEMM on CUDA ("addmm_cuda" not implemented for 'Long'); strided raises
# the same error there, and the test checks that it does instead of comparing values.
_NO_CUDA_INTEGER_GEMM = {"mm", "bmm", "addmm", "addmm_", "baddbmm", "baddbmm_", "matmul", "linear",
                         "_addmm_activation"}
# compositions that reach a GEMM for some samples only (a matrix operand) and elementwise ops for others
# (vectors): each sample either computes the CPU's values or raises that same error
_CUDA_INTEGER_GEMM_SOMETIMES = {"inner", "mv", "addmv", "addmv_"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("info,dtype", list(_cases()))
def test_op(info, dtype, device):
    rng = np.random.default_rng(1234)
    fn = info.get_op()
    if device == "cuda":
        _skip_without_cuda_kernel(fn)
        if info.name.split(".")[0] in _NO_CUDA_INTEGER_GEMM and not (dtype.is_floating_point or dtype.is_complex):
            sample = next(iter(info.samples(dtype, rng)))
            with pytest.raises(NotImplementedError, match='_cuda" not implemented for'):
                fn(*to_device(sample.args, device), **to_device(sample.kwargs, device))
            return
    for sample in info.samples(dtype, rng):
        where = f"{info.name} {dtype.name} on {device}: {sample}"
        cpu_args = sample.args
        cpu_result = fn(*cpu_args, **sample.kwargs)
        if device == "cpu":
            if info.ref is not None:
                expected = info.ref(*_to_numpy(cpu_args), **_to_numpy(sample.kwargs))
                _compare(info, dtype, cpu_result, expected, where)
            if info.check is not None:
                info.check(cpu_result, sample)
            continue
        args = to_device(sample.args, device)
        kwargs = to_device(sample.kwargs, device)
        if device == "meta" and info.data_dependent:
            with pytest.raises(NotImplementedError, match="meta tensors"):
                fn(*args, **kwargs)
            continue
        if device == "cuda" and info.name in _CUDA_INTEGER_GEMM_SOMETIMES and not (dtype.is_floating_point
                                                                                    or dtype.is_complex):
            try:
                result = fn(*args, **kwargs)
            except NotImplementedError as e:
                assert '_cuda" not implemented for' in str(e), f"{where}: {e}"
                continue
        else:
            result = _run_cuda(lambda: fn(*args, **kwargs)) if device == "cuda" else fn(*args, **kwargs)
        for r, c in zip(_flatten(result), _flatten(cpu_result), strict=True):
            if isinstance(c, Tensor):
                assert isinstance(r, Tensor) and r.device.type == device, where
                assert r.shape == c.shape, f"{where}: shape {r.shape} != cpu {c.shape}"
                assert r.dtype is c.dtype, f"{where}: dtype {r.dtype} != cpu {c.dtype}"
        if device != "meta" and info.ref is not None:
            _compare(info, dtype, result, _to_numpy(cpu_result), where, device)
        if device != "meta" and info.check is not None:
            info.check(result, sample)


ERROR_CASES = [pytest.param(info, id=info.name) for info in OPS if info.errors is not None]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("info", ERROR_CASES)
def test_op_errors(info, device):
    rng = np.random.default_rng(99)
    fn = info.get_op()
    if device == "cuda":
        _skip_without_cuda_kernel(fn)
    for err in info.errors(rng):
        if err.devices is not None and device not in err.devices:
            continue
        args = to_device(err.sample.args, device)
        kwargs = to_device(err.sample.kwargs, device)
        with pytest.raises(err.error, match=err.match):
            fn(*args, **kwargs)
